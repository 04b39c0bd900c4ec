/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * datapath.bpf.h - what the XDP program does with each frame.
 *
 * Header only, so that bpf/flowsketch.bpf.c (the program the daemon
 * attaches) and bpf/bench.bpf.c (the benchmark, which compares it with
 * fs_datapath_parse_only()) compile the very same code.
 *
 * Per packet, in the common case: one fs_ctl lookup, one fs_totals lookup
 * (its running totals give the report thresholds), the sketch update
 * (fs_update_sketches(): one flow hash, two address hashes, d Count-Min
 * cells, three HyperLogLog registers) and two
 * fs_stats increments (frames seen, packets sketched; a third for a
 * non-first fragment).  On this kernel array and per-CPU array lookups are
 * inlined by the verifier into a few instructions each, so none of these
 * is a real helper call; the only helper calls are the ring buffer output
 * and bpf_get_smp_processor_id(), both only when a flow crosses a
 * threshold, which happens at most once per flow, metric, CPU and window
 * (cms.h, "Heavy-hitter reporting").
 *
 * Every frame is passed: flowsketch observes, it does not filter (yet).
 */
#ifndef FLOWSKETCH_DATAPATH_BPF_H
#define FLOWSKETCH_DATAPATH_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "maps.bpf.h"
#include "parse.bpf.h"
#include "sketch_update.bpf.h"

/* Tell the daemon that u->key crossed a threshold in window seq. */
static __always_inline void fs_datapath_report(const struct fs_packet_update *u,
					       __u64 seq)
{
	struct fs_hh_report r = {
		.key = u->key,
		.hash = u->hash,
		.window_seq = seq,
		.report = u->report,
		.cpu = bpf_get_smp_processor_id(),
	};

	if (bpf_ringbuf_output(&fs_reports, &r, sizeof(r), 0))
		fs_stat_inc(FS_STAT_REPORTS_DROPPED);
	else
		fs_stat_inc(FS_STAT_REPORTS);
}

/*
 * Parse and count why a frame was not keyed: the baseline the benchmark
 * measures the sketch update against.  Returns the parser's verdict.
 */
static __always_inline int fs_datapath_parse_key(struct xdp_md *ctx,
						 struct fs_flow_key *key)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	int nonfirst_frag = 0;
	int reason;

	fs_stat_inc(FS_STAT_RX);
	reason = fs_parse(data, data_end, key, &nonfirst_frag);
	if (reason) {
		fs_stat_inc(reason);
		return reason;
	}
	if (nonfirst_frag)
		fs_stat_inc(FS_STAT_FRAGMENTS);
	return 0;
}

static __always_inline int fs_datapath_parse_only(struct xdp_md *ctx)
{
	struct fs_flow_key key;

	fs_datapath_parse_key(ctx, &key);
	return XDP_PASS;
}

static __always_inline int fs_datapath_process(struct xdp_md *ctx)
{
	struct fs_packet_update u;
	struct fs_window_totals *totals;
	struct fs_ctl *ctl;
	__u64 seq, packets, bytes, phi;
	__u32 zero = 0;

	if (fs_datapath_parse_key(ctx, &u.key))
		return XDP_PASS;

	ctl = bpf_map_lookup_elem(&fs_ctl, &zero);
	if (!ctl)	/* an array element always exists */
		return XDP_PASS;
	/* Read the sequence once, as a volatile load the compiler may not
	 * repeat (the daemon writes it while packets run): the slot written
	 * and the window named in a report must be the same one (rotation
	 * protocol, maps.h). */
	seq = *(volatile __u64 *)&ctl->window_seq;
	u.slot = seq % FS_NSLOTS;
	u.bytes = ctx->data_end - ctx->data;
	/* The window's running totals on this CPU, this packet included,
	 * set its report thresholds (cms.h): no threshold from the daemon
	 * can be stale or late. */
	totals = bpf_map_lookup_elem(&fs_totals, &u.slot);
	if (!totals) {	/* cannot happen: slot < FS_NSLOTS entries */
		fs_stat_inc(FS_STAT_UPDATE_ERRORS);
		return XDP_PASS;
	}
	packets = totals->packets + 1;
	bytes = totals->bytes + u.bytes;
	phi = ctl->hh_phi_q32;
	u.thresh_packets = fs_hh_threshold(packets, phi);
	u.thresh_bytes = fs_hh_threshold(bytes, phi);
	/* Outputs, but initialised: the kfunc variant hands the whole struct
	 * to the module and the verifier rejects uninitialised stack. */
	u.report = 0;
	u.hash = 0;

	if (fs_update_sketches(&u)) {
		fs_stat_inc(FS_STAT_UPDATE_ERRORS);
		return XDP_PASS;
	}
	totals->packets = packets;
	totals->bytes = bytes;
	fs_stat_inc(FS_STAT_SKETCHED);

	if (u.report)
		fs_datapath_report(&u, seq);
	return XDP_PASS;
}

#endif /* FLOWSKETCH_DATAPATH_BPF_H */
