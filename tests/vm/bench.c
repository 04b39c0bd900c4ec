// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * bench.c - per-packet cost of the kfunc path against the pure-BPF path,
 * both measured in the same VM boot (bench/vm_kfunc.sh prints the ratio).
 *
 * BPF_PROG_TEST_RUN with repeat = R reports the mean time of one run.  For
 * each variant we take 64 frames of distinct flows (so the sketch cells
 * touched differ between frames as they would in traffic) and average
 * their per-run times; the variants are measured in turns, round after
 * round, and each reports its median round, so that a slow moment of the
 * emulator hits both paths alike.  The VM is software-emulated (TCG): the
 * absolute times mean nothing, only the ratios do.  The cost of the test
 * run machinery itself is measured with a program that only returns
 * XDP_PASS, so the ratio of the sketch work alone can be given too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "vmtest.h"
#include "traffic.h"
#include "pkt_build.h"
#include "flowsketch.skel.h"
#include "kfunc_probe.skel.h"

#define FS_VM_BENCH_FRAMES 64
#define FS_VM_BENCH_REPEAT 1000
#define FS_VM_BENCH_ROUNDS 7

enum fs_vm_variant {
	FS_VM_DATAPATH_BPF,
	FS_VM_DATAPATH_KFUNC,
	FS_VM_UPDATE_BPF,
	FS_VM_UPDATE_KFUNC,
	FS_VM_PASS,
	FS_VM_VARIANTS,
};

static const char *const fs_vm_variant_name[FS_VM_VARIANTS] = {
	"datapath_bpf_ns", "datapath_kfunc_ns",
	"update_bpf_ns", "update_kfunc_ns", "testrun_pass_ns",
};

struct fs_vm_frame {
	__u8 data[128];
	__u32 len;
};

/* Mean ns per run of prog over the frames; negative errno on failure. */
static double fs_vm_bench_once(int prog_fd, const struct fs_vm_frame *f)
{
	double total = 0;
	int i;

	for (i = 0; i < FS_VM_BENCH_FRAMES; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts,
			    .data_in = f[i].data,
			    .data_size_in = f[i].len,
			    .repeat = FS_VM_BENCH_REPEAT);

		if (bpf_prog_test_run_opts(prog_fd, &opts))
			return -errno;
		total += opts.duration;
	}
	return total / FS_VM_BENCH_FRAMES;
}

static int fs_vm_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void fs_vm_bench_frames(struct fs_vm_frame *eth, struct fs_vm_frame *raw)
{
	static const __u8 dst[4] = { 10, 2, 0, 1 };
	__u64 rng = 7;
	struct pkt pk;
	int i;

	for (i = 0; i < FS_VM_BENCH_FRAMES; i++) {
		struct fs_probe_frame pf = { 0 };
		__u8 src[4] = { 10, 1, (__u8)(i >> 8), (__u8)i };

		pkt_init(&pk);
		pkt_eth(&pk, PKT_ETH_P_IP);
		pkt_ipv4(&pk, 17, src, dst, 5, 0);
		pkt_udp(&pk, (__u16)(1024 + fs_vm_rand_below(&rng, 60000)), 53);
		pkt_payload(&pk, 32);
		pkt_finish(&pk);
		memcpy(eth[i].data, pk.data, pk.len);
		eth[i].len = (__u32)pk.len;

		pf.u.key.family = FS_FAMILY_IPV4;
		pf.u.key.proto = 17;
		memcpy(pf.u.key.src, src, 4);
		memcpy(pf.u.key.dst, dst, 4);
		pf.u.bytes = pk.len;
		memcpy(raw[i].data, &pf, sizeof(pf));
		raw[i].len = sizeof(pf);
	}
}

static void *fs_vm_bench_load(bool datapath, bool use_kfunc,
			      const struct fs_sketch_params *p)
{
	if (datapath) {
		struct flowsketch *s = flowsketch__open();

		if (!s)
			return NULL;
		if (FS_DATAPATH_SETUP(s, p, use_kfunc) ||
		    flowsketch__load(s)) {
			flowsketch__destroy(s);
			return NULL;
		}
		return s;
	} else {
		struct kfunc_probe *s = kfunc_probe__open();

		if (!s)
			return NULL;
		bpf_program__set_autoload(s->progs.fs_probe_fentry, false);
		if (FS_DATAPATH_SETUP(s, p, use_kfunc) ||
		    kfunc_probe__load(s)) {
			kfunc_probe__destroy(s);
			return NULL;
		}
		return s;
	}
}

void fs_vm_bench(void)
{
	static double samples[FS_VM_VARIANTS][FS_VM_BENCH_ROUNDS];
	static struct fs_vm_frame eth[FS_VM_BENCH_FRAMES], raw[FS_VM_BENCH_FRAMES];
	struct flowsketch *dp_bpf, *dp_kf;
	struct kfunc_probe *up_bpf, *up_kf;
	struct fs_sketch_params p;
	int fd[FS_VM_VARIANTS], v, r;
	bool ok = true;

	fs_vm_params(&p);
	fs_vm_bench_frames(eth, raw);
	dp_bpf = fs_vm_bench_load(true, false, &p);
	dp_kf = fs_vm_bench_load(true, true, &p);
	up_bpf = fs_vm_bench_load(false, false, &p);
	up_kf = fs_vm_bench_load(false, true, &p);
	if (!dp_bpf || !dp_kf || !up_bpf || !up_kf) {
		fs_vm_tap(false, "bench: all variants load");
		goto out;
	}
	fd[FS_VM_DATAPATH_BPF] = bpf_program__fd(dp_bpf->progs.fs_xdp);
	fd[FS_VM_DATAPATH_KFUNC] = bpf_program__fd(dp_kf->progs.fs_xdp);
	fd[FS_VM_UPDATE_BPF] = bpf_program__fd(up_bpf->progs.fs_probe_xdp);
	fd[FS_VM_UPDATE_KFUNC] = bpf_program__fd(up_kf->progs.fs_probe_xdp);
	fd[FS_VM_PASS] = bpf_program__fd(up_bpf->progs.fs_probe_pass);

	for (r = 0; r < FS_VM_BENCH_ROUNDS && ok; r++) {
		for (v = 0; v < FS_VM_VARIANTS; v++) {
			bool datapath = v <= FS_VM_DATAPATH_KFUNC || v == FS_VM_PASS;

			samples[v][r] = fs_vm_bench_once(fd[v], datapath ? eth : raw);
			if (samples[v][r] < 0)
				ok = false;
		}
	}
	fs_vm_tap(ok, "bench: %d rounds of %d frames x %d runs per variant",
		  FS_VM_BENCH_ROUNDS, FS_VM_BENCH_FRAMES, FS_VM_BENCH_REPEAT);
	if (!ok)
		goto out;
	for (v = 0; v < FS_VM_VARIANTS; v++) {
		qsort(samples[v], FS_VM_BENCH_ROUNDS, sizeof(double), fs_vm_cmp_double);
		printf("bench: %s %.1f\n", fs_vm_variant_name[v],
		       samples[v][FS_VM_BENCH_ROUNDS / 2]);
	}
out:
	flowsketch__destroy(dp_bpf);
	flowsketch__destroy(dp_kf);
	kfunc_probe__destroy(up_bpf);
	kfunc_probe__destroy(up_kf);
}
