// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * flowsketch.bpf.c - the XDP program the daemon attaches to interfaces.
 *
 * Skeleton: build/skel/flowsketch.skel.h, struct flowsketch.  Before load
 * the loader sets rodata->fs_params (and fs_use_kfunc) and sizes fs_cms and
 * fs_hll with fs_cms_chunks() / fs_hll_chunks() for FS_NSLOTS slots.
 */
#include "datapath.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("xdp")
int fs_xdp(struct xdp_md *ctx)
{
	return fs_datapath_process(ctx);
}
