// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vmtest.c - entry point and shared helpers of the in-VM test program.
 *
 *   vmtest test MODULE.ko     every test group, TAP lines
 *   vmtest bench MODULE.ko    per-packet cost of both paths ("bench:" lines)
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "flowsketch/maps.h"
#include "vmtest.h"

int fs_vm_cpu;

void fs_vm_tap(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

void fs_vm_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

void fs_vm_params(struct fs_sketch_params *p)
{
	const struct fs_hash_secret s = { 0x0706050403020100ULL,
					  0x0f0e0d0c0b0a0908ULL };

	fs_params_init(p, FS_DEFAULT_CMS_DEPTH, FS_DEFAULT_CMS_LOG2W,
		       FS_DEFAULT_HLL_P, 0, &s);
}

int fs_vm_set_ctl(const struct bpf_map *ctl, __u64 seq, __u64 phi_q32)
{
	struct fs_ctl c = { .window_seq = seq, .hh_phi_q32 = phi_q32 };
	__u32 zero = 0;

	return bpf_map_update_elem(bpf_map__fd(ctl), &zero, &c, 0) ? -errno : 0;
}

int fs_vm_module_load(const char *ko_path)
{
	int fd, err = 0;

	fd = open(ko_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (syscall(SYS_finit_module, fd, "", 0))
		err = -errno;
	close(fd);
	return err;
}

int fs_vm_module_unload(void)
{
	if (syscall(SYS_delete_module, FS_KFUNC_MODULE, O_NONBLOCK))
		return -errno;
	return 0;
}

int fs_vm_module_unload_wait(int timeout_ms)
{
	const struct timespec tick = { .tv_nsec = 10 * 1000 * 1000 };
	int err, waited;

	for (waited = 0;; waited += 10) {
		err = fs_vm_module_unload();
		if ((err != -EAGAIN && err != -EBUSY) || waited >= timeout_ms)
			return err;
		nanosleep(&tick, NULL);
	}
}

bool fs_vm_module_present(void)
{
	struct stat st;

	return stat("/sys/module/" FS_KFUNC_MODULE, &st) == 0;
}

int fs_vm_run(const struct bpf_program *prog, const void *in, __u32 len,
	      void *out, __u32 *retval)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		    .data_in = in,
		    .data_size_in = len,
		    .data_out = out,
		    .data_size_out = out ? len : 0,
		    .repeat = 1);
	int err;

	err = bpf_prog_test_run_opts(bpf_program__fd(prog), &opts);
	if (err)
		return -errno;
	if (retval)
		*retval = opts.retval;
	return 0;
}

int fs_vm_netns_enter(void)
{
	struct ifreq ifr = { 0 };
	int fd, err = 0;

	if (unshare(CLONE_NEWNET))
		return -errno;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr)) {
		err = -errno;
		goto out;
	}
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr))
		err = -errno;
out:
	close(fd);
	return err;
}

socklen_t fs_vm_loopback(int family, __u16 port, struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		return sizeof(*sin);
	}
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(port);
	sin6->sin6_addr = in6addr_loopback;
	return sizeof(*sin6);
}

int fs_vm_udp_bound(int family, __u16 port)
{
	struct sockaddr_storage ss;
	socklen_t len = fs_vm_loopback(family, port, &ss);
	int fd;

	fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&ss, len)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/* Per-CPU sketches are compared on one CPU: stay there. */
static int fs_vm_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

static int fs_vm_libbpf_print(enum libbpf_print_level level,
			      const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	printf("# libbpf: ");
	return vprintf(fmt, ap);
}

int main(int argc, char **argv)
{
	const char *mode, *ko;
	int err;

	if (argc != 3 || (strcmp(argv[1], "test") && strcmp(argv[1], "bench"))) {
		fprintf(stderr, "usage: %s test|bench MODULE.ko\n", argv[0]);
		return 2;
	}
	mode = argv[1];
	ko = argv[2];
	setvbuf(stdout, NULL, _IOLBF, 0);
	libbpf_set_print(fs_vm_libbpf_print);
	fs_vm_cpu = 0;
	err = fs_vm_pin(fs_vm_cpu);
	if (err)
		fs_vm_diag("cannot pin to CPU %d: %s", fs_vm_cpu, strerror(-err));

	err = fs_vm_module_load(ko);
	fs_vm_tap(!err, "insmod %s", ko);
	if (err) {
		fs_vm_diag("finit_module: %s", strerror(-err));
		return 1;
	}
	if (!strcmp(mode, "bench")) {
		fs_vm_bench();
		return 0;
	}
	fs_vm_test_btf();
	fs_vm_test_probe();
	fs_vm_test_datapath();
	fs_vm_test_egress();
	fs_vm_test_unload(ko);
	fs_vm_test_daemon(ko);
	return 0;
}
