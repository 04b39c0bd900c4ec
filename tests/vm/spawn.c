// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* spawn.c - child processes of the in-VM test program (spawn.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "vmtest.h"
#include "spawn.h"

static long long fs_vm_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* In the child: stdout to out_fd (or the log), stderr to the log, exec. */
static void fs_vm_exec(char *const argv[], int out_fd, const char *log_path)
{
	int log_fd;

	log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0600);
	if (log_fd < 0)
		_exit(127);
	if (dup2(out_fd >= 0 ? out_fd : log_fd, STDOUT_FILENO) < 0 ||
	    dup2(log_fd, STDERR_FILENO) < 0)
		_exit(127);
	execv(argv[0], argv);
	dprintf(STDERR_FILENO, "exec %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

pid_t fs_vm_spawn(char *const argv[], const char *log_path)
{
	pid_t pid;

	/* Our stdout is the console: flush it, or the child repeats it. */
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid)
		fs_vm_exec(argv, -1, log_path);
	return pid;
}

int fs_vm_exited(pid_t pid, int *status)
{
	pid_t r = waitpid(pid, status, WNOHANG);

	if (r < 0)
		return -errno;
	return r == pid;
}

int fs_vm_wait_exit(pid_t pid, int timeout_ms)
{
	const struct timespec tick = { .tv_nsec = 20 * 1000 * 1000 };
	long long deadline = fs_vm_now_ms() + timeout_ms;
	int status, r;

	for (;;) {
		r = fs_vm_exited(pid, &status);
		if (r < 0)
			return r;
		if (r)
			return status;
		if (fs_vm_now_ms() >= deadline)
			return -ETIMEDOUT;
		nanosleep(&tick, NULL);
	}
}

int fs_vm_run_capture(char *const argv[], char *buf, size_t len,
		      const char *err_log, int timeout_ms)
{
	long long deadline = fs_vm_now_ms() + timeout_ms;
	size_t used = 0;
	int pipe_fd[2], status, err = 0;
	pid_t pid;

	if (pipe2(pipe_fd, O_CLOEXEC))
		return -errno;
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(pipe_fd[0]);
		close(pipe_fd[1]);
		return err;
	}
	if (!pid)
		fs_vm_exec(argv, pipe_fd[1], err_log);
	close(pipe_fd[1]);

	/* Read to EOF; a child still writing at the deadline is killed. */
	for (;;) {
		struct pollfd pfd = { .fd = pipe_fd[0], .events = POLLIN };
		long long left = deadline - fs_vm_now_ms();
		char sink[512];
		ssize_t n;

		if (left <= 0) {
			err = -ETIMEDOUT;
			break;
		}
		if (poll(&pfd, 1, (int)left) < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (!pfd.revents)
			continue;
		/* Past the buffer the output is drained and dropped. */
		if (used + 1 < len)
			n = read(pipe_fd[0], buf + used, len - 1 - used);
		else
			n = read(pipe_fd[0], sink, sizeof(sink));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (used + 1 < len)
			used += (size_t)n;
	}
	close(pipe_fd[0]);
	if (len)
		buf[used] = '\0';
	if (err)
		kill(pid, SIGKILL);
	status = fs_vm_wait_exit(pid, err ? 5000 : timeout_ms);
	if (err)
		return err;
	if (status < 0) {
		kill(pid, SIGKILL);
		fs_vm_wait_exit(pid, 5000);
		return status;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : -ECHILD;
}

void fs_vm_diag_file(const char *path)
{
	char line[512];
	FILE *f;

	f = fopen(path, "re");
	if (!f) {
		fs_vm_diag("%s: %s", path, strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		fs_vm_diag("%s", line);
	}
	fclose(f);
}
