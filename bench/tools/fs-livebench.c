// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * fs-livebench - what the datapath costs per packet on live traffic.
 *
 * BPF_PROG_TEST_RUN (fs-bench.c) runs a program in a tight loop over
 * one buffer: the program's own code and lines stay in the caches between
 * runs.  A live packet instead meets caches that the sender, the stack and
 * everything else have used since the previous one.  This tool measures
 * that: the live programs of bench/bpf/bench.bpf.c (empty, parse-only, floor,
 * naive, full) are attached in turn, natively, as the XDP program of a veth
 * that receives traffic from its peer, and each one's cost is read from the
 * kernel's run-time statistics (BPF_ENABLE_STATS, held open for the run:
 * no sysctl is left changed behind us):
 *
 *     cost = delta run_time_ns / delta run_cnt    over one phase of traffic
 *
 * Phases, for every program and every round (rounds interleave the
 * programs; each program is loaded afresh every round, so its maps are new
 * and cold, as after a daemon start):
 *
 *   first    the first --burst packets after load and attach
 *   steady   --steady seconds of traffic as fast as the generator goes
 *   quiet    --quiet seconds without traffic, then --burst packets
 *
 * and for the two blocklist programs, between steady and quiet, the list
 * switched on and off in one program (live_ab()): the blocklist's cost
 * with the least noise, on the generator's own sources (far from every
 * entry) and then on the same flows from sources next to entries
 * (near_frames(): sharing a /16 or /24, inside none), the traffic a
 * filter keyed on short prefixes sent to the trie.
 *
 * The figure per program and phase is the median over rounds, with the
 * smallest and largest round beside it: live rounds differ in what else
 * ran on the machine, and the spread says how much.  Every packet the
 * generator sent is seen by the program (checked: XDP's run count must
 * reach the sent count, or the run fails), so the packet counts printed
 * are exact.
 *
 * Windows.  The full program runs with fs_ctl.hh_phi_q32 set (reports
 * follow each window's running total, cms.h) and its windows are closed
 * here every --window ms with the daemon's protocol (maps.h, and
 * user/flowsketchd/windows/rotation.c; lb_rotate() in bench_live_run.h): window
 * start and window_seq + 1, an fs_barrier update for the RCU grace
 * period, the ring buffer drained, done_seq, then the old slot's chunks
 * read and zeroed on every CPU and its totals taken from fs_hot (those
 * tagged with the closed window; fs_hot is never written here, maps.h;
 * live_closed()).  Doing it here
 * rather than running flowsketchd keeps one loader and one program whose
 * id we hold, closes windows on the same clock as the phases (the first
 * window starts at attach, a quiet spell spans window closes as it would
 * under the daemon), and costs the datapath exactly what the daemon's
 * rotation costs it: the same syscalls on the same maps from another CPU.
 * The daemon's user-space fold and queries are left out; they are timed
 * by fs-bench.  Reports per window are the FS_STAT_REPORTS delta between
 * closes, for windows that saw traffic.
 *
 * Traffic (bench_live.h, shared with fs-tpbench).  A generator
 * thread, in the sending namespace (setns), sends prebuilt frames with
 * sendmmsg on an AF_PACKET socket: --flows flows, IPv4 and IPv6
 * (--ipv6-share), UDP and TCP, sizes 64..191 bytes, drawn from a Zipf law
 * (--zipf) into a sequence of 2^20 packets that repeats.
 * A full queue (the sender's pfifo, see scripts/netns.sh) refuses a frame
 * with ENOBUFS; it is sent again, never counted twice or lost.
 *
 * The generator and the XDP program share a CPU (veth runs its NAPI in
 * the softirq of the sending CPU); this thread, which rotates and reads
 * the statistics, is pinned to another one when there is one.  What this
 * tool shares with fs-tpbench (options, setup, windows, phases, the
 * table's rows) is in bench_live*.h.
 */
#include <errno.h>
#include <getopt.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define LB_TOOL "fs-livebench"

#include "flowsketch/params.h"
#include "flowsketch/maps.h"
#include "sketch.h"
#include "datapath_setup.h"
#include "bench.skel.h"
#include "bench_blocklist_fill.h"
#include "bench_live.h"
#include "bench_live_opts.h"
#include "bench_live_run.h"

#define LIVE_MAX_AB 64			/* --ab-pairs at most */

enum live_prog { LP_EMPTY, LP_PARSE, LP_FLOOR, LP_NAIVE, LP_FULL, LP_FULL_SMALL,
		 LP_FULL_LIST, LP_MAX };
enum live_phase { PH_FIRST, PH_STEADY, PH_QUIET, PH_MAX };

static const char *const live_prog_names[LP_MAX] = {
	"empty", "parse only", "floor", "naive", "full", "full+small", "full+list",
};
static const char *const live_phase_names[PH_MAX] = {
	"first", "steady", "quiet",
};

struct live_opts {
	struct lb_opts c;	/* the options fs-tpbench takes too */
	double quiet_s;
	__u32 burst;
	__u32 blocklist;	/* entries of full+list */
	__u32 blocklist_small;	/* entries of full+small */
	__u32 ab_pairs;		/* list on/off alternations per round */
	double ab_s;		/* seconds of each half of a pair */
	bool no_cache;		/* the lists without the verdict cache */
};

/* ------------------------------------------------------------ programs */

struct live {
	struct lb_run r;
	const struct live_opts *o;
	struct bb_list list;		/* full+list's entries (--blocklist) */
	struct bb_list small;		/* full+small's (--blocklist-small) */
	struct bench *skel;
	struct bpf_program *prog;
	struct lb_sample samples[LP_MAX][PH_MAX][LB_MAX_ROUNDS];
	__u64 reports_at_open;
	/* reports per window of traffic, all rounds */
	__u64 *win_reports, *win_packets;
	__u32 nwin, capwin;
	__u64 dropped;
	__u64 bloom_word;		/* fs_ctl.bloom of the loaded list */
	/* The on/off alternation (live_ab()): ns per packet with the list
	 * on and off, per pair, all rounds; [0] full+small, [1] full+list,
	 * then [0] far traffic (the generator's own sources, which no entry
	 * is near), [1] near traffic (near[list], bb_near_source()). */
	double ab_on[2][2][LB_MAX_ROUNDS * LIVE_MAX_AB];
	double ab_off[2][2][LB_MAX_ROUNDS * LIVE_MAX_AB];
	__u32 nab[2][2];
	/* The verdict's counters over the "on" halves, same indexes. */
	struct fs_block_stats ab_stats[2][2];
	__u64 ab_packets;		/* every packet of the alternations */
	__u8 *near[2];			/* near frames of each list */
};

static struct bpf_program *live_prog_of(struct bench *skel, enum live_prog i)
{
	switch (i) {
	case LP_EMPTY: return skel->progs.fs_live_empty;
	case LP_PARSE: return skel->progs.fs_live_parse;
	case LP_FLOOR: return skel->progs.fs_live_floor;
	case LP_NAIVE: return skel->progs.fs_live_naive;
	default: return skel->progs.fs_live_full;	/* LP_FULL, LP_FULL_SMALL, LP_FULL_LIST */
	}
}

static int stat_sum(struct live *L, __u32 stat, __u64 *out)
{
	__u64 v[L->r.ncpus];
	int c;

	if (bpf_map_lookup_elem(bpf_map__fd(L->skel->maps.fs_stats), &stat, v))
		return -errno;
	*out = 0;
	for (c = 0; c < L->r.ncpus; c++)
		*out += v[c];
	return 0;
}

/* After the full program's window close (lb_rotate()): the closed
 * window's packets, from fs_hot, and its reports, if it saw traffic. */
static int live_closed(void *ctx, __u32 slot, __u64 old)
{
	struct live *L = ctx;
	const struct fs_hot_line *hot = L->r.value;
	__u64 packets = 0, reports;
	__u32 zero = 0, cpu;
	int err;

	if (bpf_map_lookup_elem(bpf_map__fd(L->skel->maps.fs_hot), &zero, L->r.value))
		return -errno;
	for (cpu = 0; cpu < (__u32)L->r.ncpus; cpu++)
		if (hot[cpu].slot[slot].seq == old)
			packets += hot[cpu].slot[slot].packets;
	/* Reports counted since the previous close: every report of that
	 * window was sent before the barrier returned. */
	err = stat_sum(L, FS_STAT_REPORTS, &reports);
	if (err)
		return err;
	if (packets) {
		if (L->nwin == L->capwin) {
			__u32 cap = L->capwin ? 2 * L->capwin : 64;
			__u64 *a = realloc(L->win_reports, cap * sizeof(*a));
			__u64 *b = a ? realloc(L->win_packets, cap * sizeof(*b)) : NULL;

			if (a)
				L->win_reports = a;
			if (!b)
				return -ENOMEM;
			L->win_packets = b;
			L->capwin = cap;
		}
		L->win_reports[L->nwin] = reports - L->reports_at_open;
		L->win_packets[L->nwin] = packets;
		L->nwin++;
	}
	L->reports_at_open = reports;
	return 0;
}

/* Load a fresh object with only program `which`: new maps, as after a
 * daemon start.  The full program gets the daemon's report fraction. */
static int live_load(struct live *L, enum live_prog which)
{
	struct fs_ctl ctl = { .hh_phi_q32 = fs_hh_phi_q32(L->o->c.hh_fraction) };
	int i, err;

	err = lb_params(&L->r);
	if (err)
		return err;
	L->skel = bench__open();
	if (!L->skel)
		return -ENOENT;
	/* Two entries share fs_live_full: all off, then the one measured on. */
	for (i = 0; i < LP_MAX; i++)
		bpf_program__set_autoload(live_prog_of(L->skel, i), false);
	bpf_program__set_autoload(live_prog_of(L->skel, which), true);
	bpf_program__set_autoload(L->skel->progs.fs_bench_verdict, false);
	bpf_program__set_autoload(L->skel->progs.fs_bench_kverdict, false);
	bpf_program__set_autoload(L->skel->progs.fs_bench_sverdict, false);
	bpf_program__set_autoload(L->skel->progs.fs_bench_base, false);
	bpf_program__set_autoload(L->skel->progs.fs_bench_parse, false);
	bpf_program__set_autoload(L->skel->progs.fs_bench_full, false);
	bpf_program__set_autoload(L->skel->progs.fs_bench_naive, false);
	bpf_program__set_autoload(L->skel->progs.fs_bench_floor, false);
	err = FS_DATAPATH_SETUP(L->skel, &L->r.p, false);
	if (err)
		return err;
	bpf_map__set_max_entries(L->skel->maps.naive_cms,
				 (__u32)fs_cms_cells_per_slot(&L->r.p));
	bpf_map__set_max_entries(L->skel->maps.naive_hll,
				 FS_HLL_NSKETCH << L->r.p.hll_p);
	if (which == LP_FULL_LIST || which == LP_FULL_SMALL)
		bb_size(L->skel->maps.fs_block4, L->skel->maps.fs_block6,
			L->skel->maps.fs_block_hits, L->skel->maps.fs_bfilter,
			&L->skel->rodata->fs_bfilter_mask,
			which == LP_FULL_LIST ? &L->list : &L->small);
	err = bench__load(L->skel);
	if (err)
		return err;
	L->prog = live_prog_of(L->skel, which);
	if (which != LP_FULL && which != LP_FULL_SMALL && which != LP_FULL_LIST)
		return 0;
	/* The receiving veth in the slot table, as the daemon has it. */
	err = fs_ifslot_set_one(bpf_map__fd(L->skel->maps.fs_ifslot),
				(__u32)L->r.rx_ifindex, L->o->c.rx_iface);
	if (err)
		return err;
	if (which == LP_FULL_LIST || which == LP_FULL_SMALL) {
		err = bb_fill(bpf_map__fd(L->skel->maps.fs_block4),
			      bpf_map__fd(L->skel->maps.fs_block6),
			      bpf_map__fd(L->skel->maps.fs_bfilter),
			      bpf_map__fd(L->skel->maps.fs_bsummary), &L->r.p.secret,
			      which == LP_FULL_LIST ? &L->list : &L->small,
			      &ctl.bloom, NULL, NULL);
		if (err)
			return err;
	}
	if (L->o->no_cache)	/* generation 0: no cache (bloom.h) */
		ctl.bloom &= ~((__u64)0xff << 32);
	L->bloom_word = ctl.bloom;
	/* Windows close from attach on (live_measure()). */
	return lb_windows_open(&L->r, LB_MAPS(L->skel), &ctl);
}

static void live_unload(struct live *L)
{
	if (L->r.rx_ifindex > 0)
		bpf_xdp_detach(L->r.rx_ifindex, XDP_FLAGS_DRV_MODE, NULL);
	lb_windows_close(&L->r);
	bench__destroy(L->skel);
	L->skel = NULL;
}

static int live_burst(struct live *L, struct lb_sample *out, const char *what)
{
	struct lb_phase ph;
	int err = lb_phase_begin(&L->r, &ph);

	if (err)
		return err;
	/* The generator is idle here (every phase ends drained), and may
	 * have sent past the last budget in its final batch: count the
	 * burst from what it did send, so a burst is exactly --burst. */
	atomic_store(&L->r.g.budget, atomic_load(&L->r.g.sent) + L->o->burst);
	atomic_store(&L->r.g.idle, 0);
	return lb_phase_end(&L->r, &ph, out, what);
}

/* The verdict's counters, summed over CPUs. */
static int block_stats(struct live *L, struct fs_block_stats *out)
{
	struct fs_block_stats v[L->r.ncpus];
	__u32 zero = 0;
	int c;

	if (bpf_map_lookup_elem(bpf_map__fd(L->skel->maps.fs_block_stats), &zero, v))
		return -errno;
	memset(out, 0, sizeof(*out));
	for (c = 0; c < L->r.ncpus; c++) {
		out->checked += v[c].checked;
		out->probes += v[c].probes;
		out->maybe += v[c].maybe;
		out->dropped += v[c].dropped;
		out->cached += v[c].cached;
	}
	return 0;
}

/*
 * The generator's flows again with near sources (bb_near_source()) of
 * list l: same sizes, ports and families, the source address replaced
 * (and the IPv4 header checksum with it).  None of them is blocked.
 */
static __u8 *near_frames(const struct gen *g, const struct bb_list *l)
{
	__u8 *f = malloc((size_t)g->flows * LIVE_FRAME_SLOT), a[16];
	__u32 i;

	if (!f)
		return NULL;
	memcpy(f, g->frames, (size_t)g->flows * LIVE_FRAME_SLOT);
	for (i = 0; i < g->flows; i++) {
		__u8 *fr = f + (size_t)i * LIVE_FRAME_SLOT, *ip = fr + 14;
		int v6 = fr[12] == 0x86;

		if (bb_near_source(l, v6 ? FS_FAMILY_IPV6 : FS_FAMILY_IPV4, a))
			continue;	/* no entry of the family: far */
		if (v6) {
			memcpy(ip + 8, a, 16);
		} else {
			memcpy(ip + 12, a, 4);
			memset(ip + 10, 0, 2);
			memcpy(ip + 10, &(__u16){ csum16(ip, 20) }, 2);
		}
	}
	return f;
}

static void stats_add(struct fs_block_stats *sum, const struct fs_block_stats *a,
		      const struct fs_block_stats *b)
{
	sum->checked += b->checked - a->checked;
	sum->probes += b->probes - a->probes;
	sum->maybe += b->maybe - a->maybe;
	sum->dropped += b->dropped - a->dropped;
	sum->cached += b->cached - a->cached;
}

/*
 * The blocklist's cost with the least noise the machine allows: one
 * program, one set of maps and one stream of traffic, with fs_ctl.bloom
 * switched between the list's word and 0 (an empty list, what the daemon
 * writes when the list is empty) every --ab-seconds, --ab-pairs times.
 * Rounds of separate loads (the steady phase) differ by whatever else ran
 * on the machine in between, often by more than the list costs; the
 * halves of one pair are a fraction of a second apart.  The order within
 * a pair alternates (on-off, off-on, ...) so that a drift over the pairs
 * falls on both sides alike.
 */
static int live_ab(struct live *L, int which)
{
	const struct live_opts *o = L->o;
	struct lb_run *R = &L->r;
	__u64 half = (__u64)(o->ab_s * 1e9);
	struct stat_snap a, b, start;
	struct fs_block_stats sa, sb;
	__u32 pr, *n;
	int err, side, near;

	err = prog_stats(R->prog_fd, &start);
	if (err)
		return err;
	atomic_store(&R->g.budget, ~0ULL);
	atomic_store(&R->g.idle, 0);
	/* Far traffic, then near: the same flows from other sources. */
	for (near = 0; near < 2 && !err; near++) {
		R->g.alt_frames = L->near[which];
		atomic_store(&R->g.use_alt, near);
		n = &L->nab[which][near];
		for (pr = 0; pr < o->ab_pairs && !err; pr++) {
			double ns[2] = { 0, 0 };

			for (side = 0; side < 2 && !err; side++) {
				int on = (int)((pr + side) & 1);

				__atomic_store_n(&R->ctl->bloom, on ? L->bloom_word : 0,
						 __ATOMIC_RELEASE);
				err = prog_stats(R->prog_fd, &a);
				if (!err)
					err = block_stats(L, &sa);
				if (!err)
					err = lb_wait(R, now_ns() + half, "on/off");
				if (!err)
					err = prog_stats(R->prog_fd, &b);
				if (!err)
					err = block_stats(L, &sb);
				if (!err && b.run_cnt <= a.run_cnt)
					err = -EIO;
				if (!err)
					ns[on] = (double)(b.run_ns - a.run_ns) /
						 (double)(b.run_cnt - a.run_cnt);
				if (!err && on)
					stats_add(&L->ab_stats[which][near], &sa, &sb);
			}
			if (!err && *n < LB_MAX_ROUNDS * LIVE_MAX_AB) {
				L->ab_on[which][near][*n] = ns[1];
				L->ab_off[which][near][*n] = ns[0];
				(*n)++;
			}
		}
	}
	atomic_store(&R->g.use_alt, 0);
	__atomic_store_n(&R->ctl->bloom, L->bloom_word, __ATOMIC_RELEASE);
	atomic_store(&R->g.budget, atomic_load(&R->g.sent));
	if (!err)
		err = lb_wait(R, 0, "on/off");
	if (!err)
		err = prog_stats(R->prog_fd, &b);
	if (!err)
		L->ab_packets += b.run_cnt - start.run_cnt;
	if (err)
		fprintf(stderr, "fs-livebench: the list's on/off alternation failed: %s.\n",
			strerror(-err));
	return err;
}

/* One program, one round: load, attach, the three phases, detach. */
static int live_measure(struct live *L, enum live_prog which,
			struct lb_sample out[PH_MAX])
{
	const struct live_opts *o = L->o;
	struct lb_run *R = &L->r;
	int err;

	err = live_load(L, which);
	if (err) {
		fprintf(stderr, "fs-livebench: cannot load %s: %s.\n",
			live_prog_names[which], strerror(-err));
		goto out;
	}
	err = lb_mark(R, bpf_program__fd(L->prog));
	if (err)
		goto out;
	err = bpf_xdp_attach(R->rx_ifindex, R->prog_fd, XDP_FLAGS_DRV_MODE, NULL);
	if (err) {
		fprintf(stderr, "fs-livebench: cannot attach %s (native XDP): %s.\n",
			live_prog_names[which], strerror(-err));
		goto out;
	}
	R->next_close_ns = now_ns() + lb_window_ns(R);
	err = stat_sum(L, FS_STAT_REPORTS, &L->reports_at_open);
	if (err)
		goto out;

	err = live_burst(L, &out[PH_FIRST], "first window");
	if (!err)
		err = lb_steady(R, &out[PH_STEADY], "steady");
	if (err)
		goto out;
	if ((which == LP_FULL_SMALL || which == LP_FULL_LIST) && o->ab_pairs) {
		err = live_ab(L, which == LP_FULL_LIST);
		if (err)
			goto out;
	}

	err = lb_wait(R, now_ns() + (__u64)(o->quiet_s * 1e9), "quiet");
	if (!err)
		err = live_burst(L, &out[PH_QUIET], "after quiet");
	if (err)
		goto out;
	if (R->rotating) {
		__u64 d;

		/* Close the last window, so that its reports count too. */
		err = lb_rotate(R);
		if (!err)
			err = stat_sum(L, FS_STAT_REPORTS_DROPPED, &d);
		if (!err)
			L->dropped += d;
	}
out:
	live_unload(L);
	return err;
}

static int live_round(void *ctx, int k, __u32 r)
{
	struct live *L = ctx;
	struct lb_sample one[PH_MAX];
	int ph, err = live_measure(L, (enum live_prog)k, one);

	for (ph = 0; !err && ph < PH_MAX; ph++)
		L->samples[k][ph][r] = one[ph];
	return err;
}

/* ------------------------------------------------------------ report */

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return (x > y) - (x < y);
}

static const char *verdict(bool ok)
{
	return ok ? "met" : "MISSED";
}

/* num / den, and the same net of the empty program's cost (the
 * statistics' own overhead); the verdict is on the gross ratio, the
 * figures as the kernel reports them. */
static void print_ratio(const char *label, double num, double den,
			double base, double target, bool le)
{
	double r = den > 0 ? num / den : 0;
	double n = den - base > 0 ? (num - base) / (den - base) : 0;

	if (target > 0)
		printf("  %-32s %6.2fx (net of empty %6.2fx)   target %s %.1fx: %s\n",
		       label, r, n, le ? "<=" : ">=", target,
		       verdict(le ? r <= target : r >= target));
	else
		printf("  %-32s %6.2fx (net of empty %6.2fx)\n", label, r, n);
}

/*
 * live_ab()'s figures: per list, the median of the pairs' on/off ratios
 * (each pair its own baseline), with the smallest and largest, and the
 * medians of the on and off halves.  The blocklist target is on this
 * ratio: the same program with the list and with an empty one.
 */
static void ab_report(const struct live *L)
{
	static const char *const names[2] = { "full+small", "full+list" };
	static const char *const traffic[2] = { "far", "near" };
	const struct live_opts *o = L->o;
	int w, t;

	printf("  the list on and off in one program: fs_ctl.bloom switched every %.2f s, %u pairs a round\n"
	       "  for far and then near traffic (%llu packets); median of the pairs' ratios (min..max), of\n"
	       "  each half's ns/pkt, and per packet of the \"on\" halves: filter probes and exact lookups\n",
	       o->ab_s, o->ab_pairs, (unsigned long long)L->ab_packets);
	for (w = 0; w < 2; w++)
		for (t = 0; t < 2; t++) {
			const struct fs_block_stats *st = &L->ab_stats[w][t];
			double cached;
			double ratio[LB_MAX_ROUNDS * LIVE_MAX_AB], on[LB_MAX_ROUNDS * LIVE_MAX_AB];
			double off[LB_MAX_ROUNDS * LIVE_MAX_AB], m, chk;
			__u32 n = L->nab[w][t], i;

			if (!n)
				continue;
			for (i = 0; i < n; i++) {
				ratio[i] = L->ab_off[w][t][i] > 0 ?
					   L->ab_on[w][t][i] / L->ab_off[w][t][i] : 0;
				on[i] = L->ab_on[w][t][i];
				off[i] = L->ab_off[w][t][i];
			}
			m = median(ratio, n);	/* sorts ratio: [0] min, [n-1] max */
			chk = st->checked ? (double)st->checked : 1;
			cached = (double)st->cached / chk;
			printf("  %-10s %-4s on / off %6.3fx (%.3f..%.3f, %u pairs; on %.1f, off %.1f ns; %.2f probes, %.4f exact, %.2f cached)",
			       names[w], traffic[t], m, ratio[0], ratio[n - 1], n, median(on, n),
			       median(off, n), (double)st->probes / chk,
			       (double)(st->maybe - st->dropped) / chk, cached);
			if (w == 1)
				printf("   target <= 1.15x: %s", verdict(m <= 1.15));
			printf("\n");
		}
	printf("  (far: the generator's own sources, in 10.64/16 and fd00::/16, which no entry shares;\n"
	       "   near: the same flows from sources sharing a /16 or /24 (IPv6: /16, /32, /48, /56 or /64)\n"
	       "   with a random entry longer than it, inside none; exact = unconfirmed trie lookups;\n"
	       "   the verdict cache %s)\n\n", L->o->no_cache ? "off" : "on");
}

static void live_report(struct live *L, __u64 sent)
{
	const struct live_opts *o = L->o;
	const struct lb_opts *c = &o->c;
	double med[LP_MAX][PH_MAX], steady_seconds = 0;
	struct lb_sample sum = { 0 };
	__u64 steady_packets = 0;
	int i, j;
	__u32 r;

	printf("Live datapath: native XDP on a veth pair (%s -> %s), kernel run-time statistics\n",
	       c->tx_netns, c->rx_netns);
	printf("(%u rounds, programs interleaved, each loaded afresh per round; median of rounds, min..max)\n",
	       c->rounds);
	printf("traffic: %u flows, Zipf %.2f, %.0f %% IPv6, 64..191-byte frames; phases: first %u packets after load,\n",
	       c->flows, c->zipf, 100 * c->ipv6_share, o->burst);
	printf("steady %.1f s, then %.1f s quiet and %u packets; full: %u ms windows closed the daemon's way, phi %g\n\n",
	       c->steady_s, o->quiet_s, o->burst, c->window_ms, c->hh_fraction);
	lb_table_head(10, "program", 7, "phase");
	for (i = 0; i < LP_MAX; i++)
		for (j = 0; j < PH_MAX; j++)
			med[i][j] = lb_table_row(10, live_prog_names[i], 7,
						 live_phase_names[j],
						 L->samples[i][j], c->rounds, &sum);
	for (i = 0; i < LP_MAX; i++)
		for (r = 0; r < c->rounds; r++) {
			steady_seconds += L->samples[i][PH_STEADY][r].seconds;
			steady_packets += L->samples[i][PH_STEADY][r].runs;
		}
	printf("\n  generator: %.0f packets/s in steady phases (%llu packets in %.1f s); "
	       "XDP ran on %llu of %llu packets sent\n",
	       steady_seconds > 0 ? (double)steady_packets / steady_seconds : 0.0,
	       (unsigned long long)steady_packets, steady_seconds,
	       (unsigned long long)(sum.runs + L->ab_packets), (unsigned long long)sent);
	printf("  (kpps: the phase's packets over its wall time, sender and XDP on one CPU)\n\n");

	printf("  ratios of the medians above:\n");
	print_ratio("full / parse-only, steady", med[LP_FULL][PH_STEADY],
		    med[LP_PARSE][PH_STEADY], med[LP_EMPTY][PH_STEADY], 2.0, true);
	print_ratio("naive / full, steady", med[LP_NAIVE][PH_STEADY],
		    med[LP_FULL][PH_STEADY], med[LP_EMPTY][PH_STEADY], 2.0, false);
	print_ratio("naive / full, first window", med[LP_NAIVE][PH_FIRST],
		    med[LP_FULL][PH_FIRST], med[LP_EMPTY][PH_FIRST], 1.6, false);
	print_ratio("naive / full, after quiet", med[LP_NAIVE][PH_QUIET],
		    med[LP_FULL][PH_QUIET], med[LP_EMPTY][PH_QUIET], 1.6, false);
	print_ratio("full+small / full, steady", med[LP_FULL_SMALL][PH_STEADY],
		    med[LP_FULL][PH_STEADY], med[LP_EMPTY][PH_STEADY], 0, false);
	print_ratio("full+list / full, steady", med[LP_FULL_LIST][PH_STEADY],
		    med[LP_FULL][PH_STEADY], med[LP_EMPTY][PH_STEADY], 0, false);
	print_ratio("full+list / full, first window", med[LP_FULL_LIST][PH_FIRST],
		    med[LP_FULL][PH_FIRST], med[LP_EMPTY][PH_FIRST], 0, false);
	print_ratio("full / parse-only, first window", med[LP_FULL][PH_FIRST],
		    med[LP_PARSE][PH_FIRST], med[LP_EMPTY][PH_FIRST], 0, false);
	print_ratio("full / parse-only, after quiet", med[LP_FULL][PH_QUIET],
		    med[LP_PARSE][PH_QUIET], med[LP_EMPTY][PH_QUIET], 0, false);
	print_ratio("floor / parse-only, steady", med[LP_FLOOR][PH_STEADY],
		    med[LP_PARSE][PH_STEADY], med[LP_EMPTY][PH_STEADY], 0, false);
	print_ratio("full / floor, steady", med[LP_FULL][PH_STEADY],
		    med[LP_FLOOR][PH_STEADY], med[LP_EMPTY][PH_STEADY], 0, false);
	printf("  %-34s %6.1f ns\n", "parse only - empty, steady",
	       med[LP_PARSE][PH_STEADY] - med[LP_EMPTY][PH_STEADY]);
	printf("  %-34s %6.1f ns for %u lines (%.1f ns a line)\n",
	       "floor - parse only, steady",
	       med[LP_FLOOR][PH_STEADY] - med[LP_PARSE][PH_STEADY],
	       L->r.p.cms_depth + 3,
	       (med[LP_FLOOR][PH_STEADY] - med[LP_PARSE][PH_STEADY]) / (L->r.p.cms_depth + 3));
	printf("  (empty: what the run-time statistics and the XDP call cost by themselves;\n"
	       "   full+small, full+list: the full program with a blocklist of %u and %u entries (%llu and\n"
	       "   %llu filter keys in 2^%u and 2^%u blocks, k %u and %u), none matching the traffic, which\n"
	       "   is far from them in these rows: see the on/off pairs for near traffic)\n\n",
	       L->small.n, L->list.n, (unsigned long long)L->small.keys,
	       (unsigned long long)L->list.keys, L->small.log2, L->list.log2,
	       L->small.k, L->list.k);

	if (o->ab_pairs)
		ab_report(L);

	if (L->nwin) {
		__u64 rep[L->nwin], pk[L->nwin];

		memcpy(rep, L->win_reports, sizeof(rep));
		memcpy(pk, L->win_packets, sizeof(pk));
		qsort(rep, L->nwin, sizeof(*rep), cmp_u64);
		qsort(pk, L->nwin, sizeof(*pk), cmp_u64);
		printf("  full, heavy-hitter reports per window of traffic: median %llu, min %llu, max %llu over %u windows\n",
		       (unsigned long long)rep[L->nwin / 2], (unsigned long long)rep[0],
		       (unsigned long long)rep[L->nwin - 1], L->nwin);
		printf("  (median %llu packets per window; 1/phi = %.0f; %llu reports dropped, ring buffer full)\n\n",
		       (unsigned long long)pk[L->nwin / 2], 1 / c->hh_fraction,
		       (unsigned long long)L->dropped);
	} else {
		printf("  full, heavy-hitter reports per window of traffic: no window saw traffic\n\n");
	}
}

/* ------------------------------------------------------------ options */

static void usage(FILE *out)
{
	fprintf(out,
		"usage: fs-livebench --rx-netns NS --rx-iface IF --tx-netns NS --tx-iface IF [options]\n"
		"  (scripts: bench/live.sh creates the namespaces and the veth pair)\n"
		"  --rounds R          rounds, programs interleaved (default 3, max %u)\n"
		"  --steady SECONDS    steady traffic per program and round (default 2)\n"
		"  --quiet SECONDS     quiet spell before the last burst (default 2)\n"
		"  --burst N           packets of the first and the after-quiet phase (default 50000)\n",
		LB_MAX_ROUNDS);
	lb_usage_traffic(out);
	fprintf(out,
		"  --window MS         the full program's window (default 1000, the daemon's)\n"
		"  --hh-fraction PHI   report fraction of the full program (default 0.001)\n"
		"  --depth D           Count-Min rows (default %u)\n"
		"  --blocklist N       entries of the full+list program's blocklist, none\n"
		"                      matching the traffic (default 100000)\n"
		"  --blocklist-small N the same for full+small (default 10000)\n"
		"  --ab-pairs N        on/off alternations of each list per round, 0 for\n"
		"                      none (default 10, max %u)\n"
		"  --ab-seconds S      seconds of each half of an alternation (default 0.25)\n"
		"  --no-verdict-cache  the lists without the blocklist's verdict cache\n",
		FS_DEFAULT_CMS_DEPTH, LIVE_MAX_AB);
}

/* The options fs-tpbench does not take. */
static int live_opt(int c, const char *arg, void *ctx)
{
	struct live_opts *o = ctx;

	switch (c) {
	case 'q': return lb_parse_num(arg, "--quiet", 0, 600, &o->quiet_s);
	case 'b': return lb_parse_int(arg, "--burst", 1, 1e9, &o->burst);
	case 'B': return lb_parse_int(arg, "--blocklist", 0, 1e6, &o->blocklist);
	case 'b' + 256:
		return lb_parse_int(arg, "--blocklist-small", 0, 1e6, &o->blocklist_small);
	case 'a' + 256: return lb_parse_int(arg, "--ab-pairs", 0, LIVE_MAX_AB, &o->ab_pairs);
	case 'A' + 256: return lb_parse_num(arg, "--ab-seconds", 0.01, 10, &o->ab_s);
	case 'c' + 256: o->no_cache = true; return 0;
	}
	return LB_NOT_MINE;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		LB_LONGOPTS,
		{ "quiet", required_argument, NULL, 'q' },
		{ "burst", required_argument, NULL, 'b' },
		{ "blocklist", required_argument, NULL, 'B' },
		{ "blocklist-small", required_argument, NULL, 'b' + 256 },
		{ "ab-pairs", required_argument, NULL, 'a' + 256 },
		{ "ab-seconds", required_argument, NULL, 'A' + 256 },
		{ "no-verdict-cache", no_argument, NULL, 'c' + 256 },
		{}
	};
	struct live_opts o = {
		.c = { .rounds = 3, .steady_s = 2, .flows = 100000, .zipf = 1.1,
		       .ipv6_share = 0.3, .seed = 1, .window_ms = 1000,
		       .hh_fraction = 0.001, .depth = FS_DEFAULT_CMS_DEPTH },
		.quiet_s = 2, .burst = 50000, .blocklist = 100000,
		.blocklist_small = 10000, .ab_pairs = 10, .ab_s = 0.25,
	};
	static struct live L;
	int rc = 1;

	if (lb_parse_args(argc, argv, longopts, &o.c, live_opt, &o, usage))
		return 2;
	if (bb_make(o.blocklist, &L.list) || bb_make(o.blocklist_small, &L.small)) {
		fprintf(stderr, "fs-livebench: cannot make blocklists of %u and %u entries.\n",
			o.blocklist, o.blocklist_small);
		return 1;
	}
	L.o = &o;
	L.r.o = &o.c;
	L.r.closed = live_closed;
	L.r.ctx = &L;
	if (!lb_start(&L.r)) {
		L.near[0] = near_frames(&L.r.g, &L.small);
		L.near[1] = near_frames(&L.r.g, &L.list);
		if (!L.near[0] || !L.near[1])
			fprintf(stderr, "fs-livebench: out of memory for the near frames.\n");
		else if (!lb_rounds(&L.r, LP_MAX, live_round, &L))
			rc = 0;
	}
	lb_stop(&L.r);
	if (!rc)
		live_report(&L, atomic_load(&L.r.g.sent));
	lb_end(&L.r);
	free(L.near[0]);
	free(L.near[1]);
	bb_free(&L.list);
	bb_free(&L.small);
	free(L.win_reports);
	free(L.win_packets);
	return rc;
}
