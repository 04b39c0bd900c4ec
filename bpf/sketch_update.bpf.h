/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * sketch_update.bpf.h - the one place the datapath updates its sketches.
 *
 * Pure BPF: fs_sketch_update() from include/flowsketch/update.h over the
 * per-CPU maps.  With the flowsketch kernel module loaded, the daemon sets
 * fs_use_kfunc before load and the same update runs natively in the
 * module's kfunc over the same map memory (kmod/); the verifier drops the
 * branch that the constant rules out.
 */
#ifndef FLOWSKETCH_SKETCH_UPDATE_BPF_H
#define FLOWSKETCH_SKETCH_UPDATE_BPF_H

#include "maps.bpf.h"
#include "flowsketch/update.h"

static __always_inline int fs_update_sketches(struct fs_packet_update *u)
{
	struct fs_update_env env = {};

	return fs_sketch_update(&env,
				(const struct fs_sketch_params *)&fs_params, u);
}

#endif /* FLOWSKETCH_SKETCH_UPDATE_BPF_H */
