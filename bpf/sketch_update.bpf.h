/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * sketch_update.bpf.h - the one place the datapath updates its sketches.
 *
 * Pure BPF: fs_sketch_update() from include/flowsketch/update.h over the
 * per-CPU maps.  With the flowsketch kernel module loaded, the daemon sets
 * fs_use_kfunc before load and the same update runs natively in the
 * module's kfunc over the same map memory (kmod/, ABI in
 * include/flowsketch/kfunc.h).
 *
 * Choosing at load time with one set of sources: fs_use_kfunc is frozen
 * .rodata, so the verifier knows it and never walks the branch it rules
 * out, and then removes it.  The kfunc is a weak ksym: without the module
 * libbpf leaves the call unresolved (imm 0), which the kernel accepts in
 * code the verifier proves dead.  Debian's libbpf 1.1 has no
 * bpf_ksym_exists(), so the daemon decides from user space (does
 * FS_KFUNC_BTF_PATH exist?) instead of the program testing the symbol.
 */
#ifndef FLOWSKETCH_SKETCH_UPDATE_BPF_H
#define FLOWSKETCH_SKETCH_UPDATE_BPF_H

#include "maps.bpf.h"
#include "flowsketch/update.h"
#include "flowsketch/kfunc.h"

extern int bpf_flowsketch_update(struct fs_kfunc_args *args, __u32 args__sz,
				 struct bpf_map *cms,
				 struct bpf_map *hll) __ksym __weak;

static __always_inline int fs_update_sketches_kfunc(struct fs_packet_update *u)
{
	struct fs_kfunc_args args;
	int err;

	/* A struct copy from the volatile rodata: real loads, which the
	 * verifier turns into constants, never the compile-time defaults. */
	args.params = fs_params;
	args.u = *u;
	err = bpf_flowsketch_update(&args, sizeof(args),
				    (struct bpf_map *)&fs_cms,
				    (struct bpf_map *)&fs_hll);
	u->hash = args.u.hash;
	u->report = args.u.report;
	return err;
}

static __always_inline int fs_update_sketches(struct fs_packet_update *u)
{
	struct fs_update_env env = {};

	if (fs_use_kfunc)
		return fs_update_sketches_kfunc(u);
	return fs_sketch_update(&env,
				(const struct fs_sketch_params *)&fs_params, u);
}

#endif /* FLOWSKETCH_SKETCH_UPDATE_BPF_H */
