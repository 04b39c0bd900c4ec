/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vmtest.h - the test program that runs inside the VM (tests/vm/run.sh).
 *
 * It is linked statically and runs as the only program of a busybox
 * initramfs, so it loads and unloads the module itself (finit_module,
 * delete_module) and prints TAP lines without numbers ("ok - text");
 * run.sh numbers them when it relays them.
 */
#ifndef FLOWSKETCH_VMTEST_H
#define FLOWSKETCH_VMTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <linux/types.h>

/* The user-space model (user/lib/model.c, linked in) is the reference
 * both datapath variants are compared with. */
#include "model.h"
#include "datapath_setup.h"

#include "flowsketch/kfunc.h"
#include "probe_frame.h"

struct bpf_map;
struct bpf_program;

#define FS_VM_PACKETS 4096	/* packets per equivalence test */

void fs_vm_tap(bool ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void fs_vm_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The parameters every test loads: defaults with a fixed secret. */
void fs_vm_params(struct fs_sketch_params *p);
/* fs_ctl (map ctl) = window seq, report fraction phi_q32; 0 or -errno. */
int fs_vm_set_ctl(const struct bpf_map *ctl, __u64 seq, __u64 phi_q32);

/*
 * Defines static struct skel *fn(const struct fs_sketch_params *p, bool
 * use_kfunc): skeleton `skel` opened, set up as the datapath for p with or
 * without the kfuncs, and loaded; NULL with errno set if a step fails.
 */
#define FS_VM_SKEL_OPENER(fn, skel)					\
static struct skel *fn(const struct fs_sketch_params *p, bool use_kfunc)	\
{									\
	struct skel *s = skel##__open();				\
	int err;							\
									\
	if (!s)								\
		return NULL;						\
	err = FS_DATAPATH_SETUP(s, p, use_kfunc);			\
	if (!err)							\
		err = skel##__load(s);					\
	if (err) {							\
		skel##__destroy(s);					\
		errno = -err;						\
		return NULL;						\
	}								\
	return s;							\
}

/* finit_module(); 0 or -errno. */
int fs_vm_module_load(const char *ko_path);
/* delete_module(O_NONBLOCK), as rmmod does; 0 or -errno. */
int fs_vm_module_unload(void);
/* Unload, retrying while a freed program's module reference is still
 * being dropped (programs are freed from a workqueue); 0 or -errno. */
int fs_vm_module_unload_wait(int timeout_ms);
bool fs_vm_module_present(void);

/* Per-CPU maps of sketch state are compared with dpmaps.h. */

/* BPF_PROG_TEST_RUN of one frame; data_out (if out) gets the frame back. */
int fs_vm_run(const struct bpf_program *prog, const void *in, __u32 len,
	      void *out, __u32 *retval);

/*
 * unshare(CLONE_NEWNET) and bring lo up: from here on the calling thread
 * (and threads and children it makes) has a network namespace of its own,
 * where lo is the only interface and nothing it attaches to is shared.
 * 0 or -errno.
 */
int fs_vm_netns_enter(void);
/* 127.0.0.1 or ::1 (family AF_INET or AF_INET6) at port; its length. */
socklen_t fs_vm_loopback(int family, __u16 port, struct sockaddr_storage *ss);
/* A UDP socket bound to the loopback address of family at port, or -errno. */
int fs_vm_udp_bound(int family, __u16 port);

/* Test groups (test_*.c, bench.c); each prints its TAP lines. */
void fs_vm_test_btf(void);
void fs_vm_test_probe(void);
void fs_vm_test_datapath(void);
/* In a network namespace of its own, left again before it returns. */
void fs_vm_test_egress(void);
void fs_vm_test_unload(const char *ko_path);
/* Last: it moves the program into a network namespace of its own. */
void fs_vm_test_daemon(const char *ko_path);
void fs_vm_bench(void);

/* The CPU this program is pinned to (per-CPU maps are read there). */
extern int fs_vm_cpu;

#endif /* FLOWSKETCH_VMTEST_H */
