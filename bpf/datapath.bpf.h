/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * datapath.bpf.h - what the XDP program does with each frame.
 *
 * Header only, so that bpf/flowsketch.bpf.c (the program the daemon
 * attaches) and bench/bpf/bench.bpf.c (the benchmark, which compares it with
 * fs_datapath_parse_only()) compile the very same code.
 *
 * Per packet, in the common case: one fs_ctl lookup (read only), one
 * fs_hot lookup (this CPU's line: frames seen, packets sketched, and the
 * running totals of both slots, whose values give the report thresholds),
 * and the sketch update (fs_update_sketches(): one flow hash, two address
 * hashes, d Count-Min cells, three HyperLogLog registers).  So two fixed
 * lines, fs_ctl's and fs_hot's; fs_stats is touched only by the rare
 * frames it counts (not IP, malformed, non-first fragments, reports).  On
 * this kernel array and per-CPU array lookups are inlined by the verifier
 * into a few instructions each, so none of these is a real helper call;
 * the only helper calls are the ring buffer output, its two queries and
 * bpf_get_smp_processor_id(), all only when a flow crosses a threshold,
 * which happens at most once per flow, metric, CPU and window (cms.h,
 * "Heavy-hitter reporting").
 *
 * The slot's totals reset themselves by epoch (maps.h, "Totals reset by
 * epoch"): a packet of window seq whose slot totals carry another tag
 * starts them from zero.  The daemon never writes fs_hot.
 *
 * Every frame is passed except the sources the blocklist covers
 * (blocklist.bpf.h): after the sketches have counted them, the verdict
 * step drops a packet whose source an entry of the exact set covers, and
 * only such a packet, malformed past its IP header or not, behind up to
 * eight VLAN tags.  Frames that are not IP, or end inside their IP header,
 * are never dropped, but for one shape: more VLAN tags than the parser
 * walks, which the stack may still deliver as IP from a source the
 * datapath cannot read; while a list is in force those are dropped
 * (parse.bpf.h, "Deep VLAN stacks").
 */
#ifndef FLOWSKETCH_DATAPATH_BPF_H
#define FLOWSKETCH_DATAPATH_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "maps.bpf.h"
#include "parse.bpf.h"
#include "sketch_update.bpf.h"
#include "blocklist.bpf.h"

/*
 * Whether a report wakes the daemon.  By default the ring buffer wakes its
 * reader whenever a record lands in an empty ring, and a daemon that keeps
 * up finds it empty every time: one wakeup (an irq_work on this CPU, a
 * wakeup of the daemon's thread on another) per report, about 1 / phi of
 * them per window and CPU.  The daemon needs reports only by the end of
 * their window, when the rotation drains the ring anyway (rotation.c), and
 * in between only so that the ring never fills: so a report wakes it only
 * once the ring holds a quarter of its size, which leaves three quarters
 * for the records that arrive before the daemon has read.
 */
static __always_inline __u64 fs_report_wakeup(void)
{
	__u64 avail = bpf_ringbuf_query(&fs_reports, BPF_RB_AVAIL_DATA);
	__u64 size = bpf_ringbuf_query(&fs_reports, BPF_RB_RING_SIZE);

	return avail >= size / 4 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

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

	if (bpf_ringbuf_output(&fs_reports, &r, sizeof(r), fs_report_wakeup()))
		fs_stat_inc(FS_STAT_REPORTS_DROPPED);
	else
		fs_stat_inc(FS_STAT_REPORTS);
}

/*
 * A frame as a frontend hands it over: in place (XDP) or its first bytes
 * copied into a per-CPU buffer (the tracepoint frontends, skb_headers.h),
 * and what it is on the wire, which is what is counted: segs packets
 * (more than 1 only for a GSO skb) of len bytes in all.
 */
struct fs_frame {
	void *data, *data_end;
	__u64 len;
	__u32 segs;
	int copied;		/* data is a copy (parse.bpf.h, "Two kinds") */
	int judged;		/* the blocklist's verdict is the action (XDP); a
				   tracepoint frontend cannot drop and skips it */
	int short_copy;		/* the copy stops before the frame's headers
				   may (an skb whose headers are not all in
				   its linear part) */
	struct fs_if_counts *ifc;	/* its interface's counts (maps.h),
					   this CPU's; NULL: none */
};

/*
 * Parse and count why a frame was not keyed: the baseline the benchmark
 * measures the sketch update against.  Returns the parser's verdict.  A
 * copy cut short by a non-linear skb that the parser finds truncated is
 * counted as such (FS_STAT_SKB_NONLINEAR), not as a malformed frame.
 */
static __always_inline int fs_datapath_parse_frame(const struct fs_frame *f,
						   struct fs_hot_line *hot,
						   struct fs_flow_key *key)
{
	int nonfirst_frag = 0;
	int reason;

	hot->rx += 1;
	if (f->copied)
		reason = fs_parse_copy(f->data, (__u32)(f->data_end - f->data),
				       key, &nonfirst_frag);
	else
		reason = fs_parse(f->data, f->data_end, key, &nonfirst_frag);
	if (reason) {
		if (f->short_copy && fs_stat_is_truncation(reason))
			reason = FS_STAT_SKB_NONLINEAR;
		fs_stat_inc(reason);
		return reason;
	}
	if (nonfirst_frag)
		fs_stat_inc(FS_STAT_FRAGMENTS);
	return 0;
}

static __always_inline int fs_datapath_parse_key(struct xdp_md *ctx,
						 struct fs_hot_line *hot,
						 struct fs_flow_key *key)
{
	struct fs_frame f = {
		.data = (void *)(long)ctx->data,
		.data_end = (void *)(long)ctx->data_end,
	};

	return fs_datapath_parse_frame(&f, hot, key);
}

static __always_inline int fs_datapath_parse_only(struct xdp_md *ctx)
{
	struct fs_hot_line *hot = fs_hot_line();
	struct fs_flow_key key;

	if (hot)	/* one array element always exists */
		fs_datapath_parse_key(ctx, hot, &key);
	return XDP_PASS;
}

/*
 * Count u->key, whose u->bytes and u->extra_packets the caller set, in
 * this window of this CPU: the totals, the thresholds, the sketch update
 * and the report.  The frontends that do not parse frames (conn.bpf.c)
 * start here.  0, or -1 when the update failed (counted).
 */
static __always_inline int fs_datapath_count(struct fs_hot_line *hot,
					     struct fs_ctl *ctl,
					     struct fs_packet_update *u)
{
	struct fs_slot_totals *totals;
	__u64 seq, packets, bytes, phi, before;

	/* Read the sequence once, as a volatile load the compiler may not
	 * repeat (the daemon writes it while packets run): the slot written,
	 * the totals' tag and the window named in a report must be the same
	 * one (rotation protocol, maps.h). */
	seq = *(volatile __u64 *)&ctl->window_seq;
	u->slot = seq % FS_NSLOTS;
	/* The window's running totals on this CPU, this update included,
	 * set its report thresholds (cms.h): no threshold from the daemon
	 * can be stale or late.  Totals tagged with another window are an
	 * earlier window's of this slot: this update is the window's first
	 * on this CPU and starts them from zero (maps.h). */
	totals = u->slot ? &hot->slot[1] : &hot->slot[0];
	packets = (__u64)(1 + (__s64)u->extra_packets);
	bytes = u->bytes;
	before = 0;
	if (totals->seq == seq) {
		before = totals->packets;
		packets += totals->packets;
		bytes += totals->bytes;
	}
	phi = ctl->hh_phi_q32;
	u->thresh_packets = fs_hh_threshold(packets, phi);
	u->thresh_bytes = fs_hh_threshold(bytes, phi);
	/* Outputs, but initialised: the kfunc variant hands the whole struct
	 * to the module and the verifier rejects uninitialised stack. */
	u->report = 0;
	u->hash = 0;

	if (fs_update_sketches(u)) {
		fs_stat_inc(FS_STAT_UPDATE_ERRORS);
		return -1;
	}
	/* The detection sketches (detect.h): the draw's n is the window's
	 * packets on this CPU before this update. */
	if (fs_detect_on() && fs_detect_update_bpf(u, before))
		fs_stat_inc(FS_STAT_UPDATE_ERRORS);
	if (fs_sample_wanted(u) && fs_sample_update_bpf(u))
		fs_stat_inc(FS_STAT_UPDATE_ERRORS);
	totals->seq = seq;
	totals->packets = packets;
	totals->bytes = bytes;
	hot->sketched += 1;

	if (u->report)
		fs_datapath_report(u, seq);
	return 0;
}

/*
 * Count frame f: parse, sketch, report, and the blocklist's verdict (the
 * XDP action; the tracepoint frontends, which cannot drop, load no list
 * and get XDP_PASS).
 */
static __always_inline int fs_datapath_frame(const struct fs_frame *f)
{
	struct fs_packet_update u;
	struct fs_hot_line *hot;
	struct fs_ctl *ctl;
	__u64 len = f->len;
	__u32 zero = 0;

	hot = fs_hot_line();
	if (!hot)	/* an array element always exists */
		return XDP_PASS;
	ctl = bpf_map_lookup_elem(&fs_ctl, &zero);
	if (!ctl)	/* an array element always exists */
		return XDP_PASS;
	if (__builtin_expect(fs_datapath_parse_frame(f, hot, &u.key), 0)) {
		/* Malformed past the IP header (an IPv6 extension chain too
		 * long to walk, a truncated TCP header, ...) or behind more
		 * VLAN tags than the key walks: counted, not sketched, but
		 * its source is known (the parser sets the family only with
		 * a whole IP header), and a blocked source does not get
		 * through by sending such frames.  (It costs the common path
		 * about 5 ns in make bench's test-run loop, the price of
		 * having the verdict in two places of one frame; as a
		 * subprogram the combined stack passes 512 bytes.) */
		if (u.key.family && f->judged)
			return fs_block_verdict(&u.key, len,
						*(volatile __u64 *)&ctl->bloom);
		return XDP_PASS;
	}
	u.bytes = len;
	u.extra_packets = (__s16)(f->segs - 1);
	fs_ifcount_add(f->ifc, f->segs, len);
	fs_datapath_count(hot, ctl, &u);
	if (!f->judged)
		return XDP_PASS;
	/* Read once, like the sequence: the filter, its size and k belong
	 * together (blocklist.bpf.h). */
	return fs_block_verdict(&u.key, u.bytes, *(volatile __u64 *)&ctl->bloom);
}

static __always_inline int fs_datapath_process(struct xdp_md *ctx)
{
	struct fs_frame f;

	/* Read before any branch: clang may otherwise merge two ctx loads
	 * behind different checks into one on a computed ctx offset, which
	 * the verifier refuses. */
	f.data = (void *)(long)ctx->data;
	f.data_end = (void *)(long)ctx->data_end;
	f.len = ctx->data_end - ctx->data;
	f.segs = 1;
	f.copied = 0;
	f.judged = 1;
	f.short_copy = 0;
	f.ifc = fs_xdp_ifcount(ctx->ingress_ifindex);
	return fs_datapath_frame(&f);
}

#endif /* FLOWSKETCH_DATAPATH_BPF_H */
