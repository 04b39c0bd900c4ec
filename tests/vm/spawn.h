/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * spawn.h - child processes of the in-VM test program: the daemon in the
 * background, the CLI run to completion with its output captured.
 *
 * The VM has no shell tooling worth the name (busybox, no jq), so the
 * test program starts the real flowsketchd and flowsketch binaries itself
 * and reads their answers in C.  Every wait is bounded, so a hung child
 * fails its test instead of stalling the VM until the harness timeout.
 */
#ifndef FLOWSKETCH_VM_SPAWN_H
#define FLOWSKETCH_VM_SPAWN_H

#include <stddef.h>
#include <sys/types.h>

/* Start argv[0] with argv, stdout and stderr appended to log_path.
 * Returns the child's pid or -errno. */
pid_t fs_vm_spawn(char *const argv[], const char *log_path);

/*
 * Run argv[0] with argv, its stdout into buf (NUL-terminated; at most
 * len - 1 bytes kept), stderr into err_log.  Killed after timeout_ms.
 * Returns its exit status (0..255), or -errno (-ETIMEDOUT when killed).
 */
int fs_vm_run_capture(char *const argv[], char *buf, size_t len,
		      const char *err_log, int timeout_ms);

/* Wait up to timeout_ms for pid to exit: its wait status, or -ETIMEDOUT
 * (the child is left running) or -errno. */
int fs_vm_wait_exit(pid_t pid, int timeout_ms);

/* Has pid exited?  Reaps it if so and stores its wait status. */
int fs_vm_exited(pid_t pid, int *status);

/* Print a file as "# " diagnostic lines (a child's log after a failure). */
void fs_vm_diag_file(const char *path);

#endif /* FLOWSKETCH_VM_SPAWN_H */
