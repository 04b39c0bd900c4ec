// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_parse.bpf.c - the parser in place and on a copy, side by side, for
 * tests/unit/test_parse_copy.c.
 *
 * XDP parses a frame where it lies (fs_parse()); the tracepoint frontends
 * copy an skb's first bytes into a per-CPU buffer and parse the copy
 * (fs_parse_copy(), parse.bpf.h "Two kinds of frame").  This program does
 * both to the frame BPF_PROG_TEST_RUN hands it, the copy taken with
 * bpf_xdp_load_bytes() as the frontends take theirs with
 * bpf_probe_read_kernel(), and stores both outcomes in parse_out[0]:
 *
 *   parse_out[0] = { in place: key, reason, nonfirst fragment;
 *                    on the copy: key, reason, nonfirst fragment }
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "skb_headers.bpf.h"	/* parse.bpf.h, and the frontends' buffer */

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct fs_parse_outcome {
	struct fs_flow_key key;
	__s32 reason;
	__s32 nonfirst_frag;
};

struct fs_parse_pair {
	struct fs_parse_outcome place;
	struct fs_parse_outcome copy;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fs_parse_pair);
} parse_out SEC(".maps");

SEC("xdp")
int fs_test_parse(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u64 len = (__u64)(data_end - data);
	__u32 zero = 0;
	struct fs_parse_pair *out;
	struct fs_hdr_buf *buf;
	int frag = 0;

	out = bpf_map_lookup_elem(&parse_out, &zero);
	buf = bpf_map_lookup_elem(&fs_hdr_buf, &zero);
	if (!out || !buf)
		return XDP_ABORTED;
	out->place.reason = fs_parse(data, data_end, &out->place.key, &frag);
	out->place.nonfirst_frag = frag;
	if (len > FS_HDR_COPY)
		len = FS_HDR_COPY;
	if (len < 1 || bpf_xdp_load_bytes(ctx, 0, buf->b, len))
		return XDP_ABORTED;
	frag = 0;
	out->copy.reason = fs_parse_copy(buf->b, (__u32)len, &out->copy.key, &frag);
	out->copy.nonfirst_frag = frag;
	return XDP_PASS;
}
