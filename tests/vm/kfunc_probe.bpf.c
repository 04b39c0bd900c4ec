// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * kfunc_probe.bpf.c - small programs that drive fs_update_sketches() and
 * the module's kfunc directly, for the VM tests (tests/vm/).
 *
 * The datapath program (bpf/flowsketch.bpf.c) can only feed the update
 * keys its parser produces; these take the struct fs_packet_update itself
 * as the "frame", so a test can choose every input (any slot, any
 * threshold, keys no parser would build) and read every output back from
 * BPF_PROG_TEST_RUN's data_out.  They include the very same
 * sketch_update.bpf.h as the datapath, so fs_use_kfunc picks the path here
 * exactly as it does there.
 *
 * Frame layout of fs_probe_xdp / fs_probe_tc: struct fs_probe_frame.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "sketch_update.bpf.h"
#include "probe_frame.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define FS_MAP(m) ((struct bpf_map *)&(m))

/* Calls made and last result of the fentry program (tracing type). */
__u64 fs_probe_fentry_calls;
int fs_probe_fentry_err;

SEC("xdp")
int fs_probe_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct fs_probe_frame *f = data;
	struct fs_packet_update u;

	if ((void *)(f + 1) > data_end)
		return XDP_ABORTED;
	__builtin_memcpy(&u, &f->u, sizeof(u));
	f->err = fs_update_sketches(&u);
	f->u.hash = u.hash;
	f->u.report = u.report;
	return XDP_PASS;
}

SEC("tc")
int fs_probe_tc(struct __sk_buff *skb)
{
	struct fs_probe_frame f;

	if (bpf_skb_load_bytes(skb, 0, &f, sizeof(f)))
		return 2;	/* TC_ACT_SHOT */
	f.err = fs_update_sketches(&f.u);
	if (bpf_skb_store_bytes(skb, 0, &f, sizeof(f), 0))
		return 2;
	return 0;		/* TC_ACT_OK */
}

/*
 * The kfunc's argument checks: the frame is a whole struct fs_kfunc_args
 * (so the test can break the parameters) and `maps` says which maps to
 * pass.  Meaningful only with fs_use_kfunc set.
 */
SEC("xdp")
int fs_probe_abi(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct fs_probe_abi_frame *f = data;
	struct fs_kfunc_args args;
	int err;

	if (!fs_use_kfunc || (void *)(f + 1) > data_end)
		return XDP_ABORTED;
	__builtin_memcpy(&args, &f->args, sizeof(args));
	switch (f->maps) {
	case FS_PROBE_MAPS_RIGHT:
		err = FS_KFUNC_UPDATE_FN(&args, sizeof(args), FS_MAP(fs_cms),
					 FS_MAP(fs_cms_narrow), FS_MAP(fs_hll_packed));
		break;
	case FS_PROBE_MAPS_SWAPPED:
		err = FS_KFUNC_UPDATE_FN(&args, sizeof(args), FS_MAP(fs_cms_narrow),
					 FS_MAP(fs_cms), FS_MAP(fs_hll_packed));
		break;
	case FS_PROBE_MAPS_WRONG_TYPE:
		err = FS_KFUNC_UPDATE_FN(&args, sizeof(args), FS_MAP(fs_cms),
					 FS_MAP(fs_cms_narrow), FS_MAP(fs_ctl));
		break;
	case FS_PROBE_MAPS_LOOKALIKE:
		err = FS_KFUNC_UPDATE_FN(&args, sizeof(args), FS_MAP(fs_cms),
					 FS_MAP(fs_cms_narrow), FS_MAP(fs_hll));
		break;
	default:
		/* A size that is readable but is not the ABI's. */
		err = FS_KFUNC_UPDATE_FN(&args, sizeof(args) - 8, FS_MAP(fs_cms),
					 FS_MAP(fs_cms_narrow), FS_MAP(fs_hll_packed));
		break;
	}
	f->err = err;
	return XDP_PASS;
}

/* A tracing program calling the kfunc: fentry on the function that
 * BPF_PROG_TEST_RUN of a tracing program calls. */
SEC("fentry/bpf_fentry_test1")
int fs_probe_fentry(void *ctx)
{
	struct fs_packet_update u = {
		.key = { .family = FS_FAMILY_IPV4, .proto = 17 },
		.bytes = 100,
	};

	fs_probe_fentry_err = fs_update_sketches(&u);
	fs_probe_fentry_calls++;
	return 0;
}

/*
 * Must not load: a map pointer read out of a kernel structure (a map's
 * inner_map_meta, NULL for every map but a map-in-map's template) is one
 * the verifier cannot vouch for, so the kfunc (KF_TRUSTED_ARGS) must be
 * refused it.  "?": not loaded with the others; the test loads it alone.
 */
SEC("?fentry/bpf_map_inc")
int fs_probe_untrusted_map(__u64 *ctx)
{
	struct bpf_map *map = (struct bpf_map *)ctx[0];
	struct fs_kfunc_args *args;
	__u32 zero = 0;

	args = bpf_map_lookup_elem(&fs_kfunc_args, &zero);
	if (!args)
		return 0;
	fs_probe_fentry_err = FS_KFUNC_UPDATE_FN(args, sizeof(*args),
						 map->inner_map_meta,
						 FS_MAP(fs_cms_narrow),
						 FS_MAP(fs_hll_packed));
	return 0;
}

/* Baseline for the benchmark: the cost of BPF_PROG_TEST_RUN itself. */
SEC("xdp")
int fs_probe_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}
