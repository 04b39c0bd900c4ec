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
 * The full program is measured with the detection sketches too (detect.h;
 * bench_detect.h): with both, with the prefix sketch alone and with the
 * spread sketch alone, at flowsketchd --detect's sizes unless
 * --detect-prefix and --detect-spread give others, in every phase and in
 * the bursty one; their ratios to full, and issue 20's verdict (both
 * within 1.25x of full, steady and bursty), close the report.
 *
 * And for the two blocklist programs, between steady and quiet, the list
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
 * And for the keyed sample (issue 22: at most SAMPLE_TARGET of full),
 * after full+sample's round: full and three more loads on its maps and
 * hash key (bench_share.h), attached in turn every --sample-ab-seconds on
 * one stream of traffic, each half against the full halves around it
 * (live_sample_ab()); a second load of full itself is the control, whose
 * ratio is the method's floor.  Separate loads differ by more than 3 %.
 *
 * Bursty phase (with two --pair: bench/live.sh makes three veth pairs
 * between the two namespaces; live_bursty()).  The quiet phase above
 * leaves the machine idle; on a host with other load, the sketch's lines
 * are evicted between bursts by whatever else runs on the CPU.  So each of
 * the programs empty to full+spread (all but the lists) is loaded three
 * times (maps, hash key and windows of its own, as three datapaths), one
 * load attached to each pair's receiving end, and the pairs are fed in
 * turn from the one generator (one CPU): on pair k, --bursty-burst
 * packets measured, then --bursty-load seconds more traffic on the same
 * pair, then pair k + 1.
 * Each burst thus comes after a quiet spell of about two loads during
 * which the two other pairs' programs and traffic used the same CPU.  The
 * traffic is held out: --bursty-flows flows (default 20,000) drawn with
 * --seed + 1, not the steady phases' flows.  The first cycle (one turn a
 * pair) is not measured (its bursts follow the load, not a quiet spell);
 * then --bursty-cycles cycles a round are.  The figure per program is the
 * median over its bursts, with the smallest and largest beside it.  The
 * full program's three loads have their windows closed as below, each on
 * its own clock from its attach.
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
#include "bench_nitro.skel.h"
#include "bench_nitro1.skel.h"
#include "flowsketch/cms_sampled.h"
#include "bench_blocklist_fill.h"
#include "bench_detect.h"
#include "bench_live.h"
#include "bench_live_opts.h"
#include "bench_live_run.h"
#include "bench_share.h"

#define LIVE_MAX_AB 64			/* --ab-pairs at most */
#define SAMPLE_TARGET 1.03		/* issue 22: full+sample / full, at most */
#define LIVE_MAX_BURSTS (LB_MAX_ROUNDS * LB_MAX_CYCLES * LB_PAIRS)
#define SAB_MAX_PAIRS 256		/* --sample-ab-pairs at most */
#define SAB_MAX (LB_MAX_ROUNDS * SAB_MAX_PAIRS)

/* The loads live_sample_ab() alternates with the full program A: A
 * again (the control), and A with the keyed sample at 512 and at 128
 * buckets, 1 flow in 1,024 (FS_DEFAULT_SAMPLE_SHIFT). */
enum sab_variant { SAB_CONTROL, SAB_B512, SAB_B128, SAB_NV };
static const char *const sab_names[SAB_NV] = {
	"full again / full", "full+sample 512 / full", "full+sample 128 / full",
};
static const __u32 sab_log2b[SAB_NV] = { 0, 9, 7 };

/* LP_FULL_BOTH .. LP_FULL_SPREAD: the full program with detection
 * sketches, in bench_detect.h's order (enum bd_variant). */
enum live_prog { LP_EMPTY, LP_PARSE, LP_FLOOR, LP_NAIVE, LP_FULL, LP_NITRO,
		 LP_NITRO1, LP_FULL_BOTH, LP_FULL_PREFIX, LP_FULL_SPREAD,
		 LP_FULL_SMALL, LP_FULL_LIST, LP_FULL_SAMPLE, LP_MAX };
enum live_phase { PH_FIRST, PH_STEADY, PH_QUIET, PH_MAX };
/* The bursty phase measures the programs LP_EMPTY .. LP_FULL_SPREAD. */
#define LP_BURSTY (LP_FULL_SPREAD + 1)
#define LP_NAME_W 13		/* the longest name, "full+prefixes" */

static const char *const live_prog_names[LP_MAX] = {
	"empty", "parse only", "floor", "naive", "full", "nitro", "nitro1", "full+both",
	"full+prefixes", "full+spread", "full+small", "full+list", "full+sample",
};
_Static_assert(LP_FULL_PREFIX - LP_FULL_BOTH == BD_PREFIXES &&
	       LP_FULL_SPREAD - LP_FULL_BOTH == BD_SPREAD, "bench_detect.h's order");

/* The programs that are the full datapath (fs_live_full), with its maps
 * filled and its windows closed. */
static bool live_is_full(enum live_prog i)
{
	return i >= LP_FULL;
}

/*
 * "nitro": the full program of bench_nitro.bpf.c, Count-Min rows sampled
 * (include/flowsketch/cms_sampled.h), an option measured beside the
 * default, never the default; "nitro1" that of bench_nitro1.bpf.c, one
 * row a packet.  Their skeletons, struct bench_nitro and bench_nitro1, are
 * built from the same source as struct bench (the state map is in all
 * three), so they are handled as a struct bench: the layouts are checked
 * here.
 */
#define LB_SAME_LAYOUT(T)									\
	_Static_assert(sizeof(struct bench) == sizeof(struct T) &&				\
		       offsetof(struct bench, maps) == offsetof(struct T, maps) &&		\
		       sizeof(((struct bench *)0)->maps) == sizeof(((struct T *)0)->maps) &&	\
		       offsetof(struct bench, progs) == offsetof(struct T, progs) &&		\
		       sizeof(((struct bench *)0)->progs) == sizeof(((struct T *)0)->progs) &&	\
		       offsetof(struct bench, rodata) == offsetof(struct T, rodata) &&		\
		       sizeof(*((struct bench *)0)->rodata) == sizeof(*((struct T *)0)->rodata) && \
		       offsetof(struct bench, progs.fs_live_full) ==				\
		       offsetof(struct T, progs.fs_live_full) &&				\
		       offsetof(struct bench, maps.fs_nitro) == offsetof(struct T, maps.fs_nitro), \
		       "struct " #T " is laid out as struct bench")
LB_SAME_LAYOUT(bench_nitro);
LB_SAME_LAYOUT(bench_nitro1);

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
	struct lb_bursty_opts b;
	bool no_cache;		/* the lists without the verdict cache */
	bool only_list;		/* full+list alone (--only-list) */
	bool only_sample;	/* empty, full, full+sample (--only-sample) */
	__u32 stop;		/* --verdict-stop: fs_bench_block_stop */
	bool fine4;		/* --fine4: fs_bench_fine4 */
	struct bd_shape detect;	/* --detect-prefix, --detect-spread */
	__u32 sab_pairs;	/* --sample-ab-pairs: A/X alternations a round */
	double sab_s;		/* --sample-ab-seconds: one half */
	bool sab_own_maps;	/* --sample-ab-own-maps: a lever off */
	bool sab_own_key;	/* --sample-ab-own-key: another */
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
	enum live_prog cur;		/* the program live_measure() runs */
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
	/* The bursty phase (live_bursty()): per pair its receiving end, its
	 * sending socket, and the load measured now with its windows; the
	 * bursty traffic (frames, lengths, sequence), swapped with the
	 * generator's while it runs; per program its bursts of all rounds,
	 * and the quiet spells before them. */
	int brx[LB_PAIRS], bfd[LB_PAIRS];
	const char *brx_name[LB_PAIRS];
	struct bench *bskel[LB_PAIRS];
	struct lb_run bw[LB_PAIRS];
	int bprog[LB_PAIRS];
	struct gen btraffic;
	bool bswapped;
	struct lb_sample bursts[LP_BURSTY][LIVE_MAX_BURSTS];
	__u32 nbursts[LP_BURSTY];
	double quiet_s[LP_BURSTY * LIVE_MAX_BURSTS];
	__u32 nquiet;
	__u64 bursty_packets;		/* every packet of the bursty phase */
	__u8 *near[2];			/* near frames of each list */
	double bmed[LP_BURSTY];		/* the bursty rows' medians, as printed */
	/* live_sample_ab(): per variant its halves' ratios to the mean of
	 * the two A halves around each, all rounds; A's halves (ns); the
	 * variants' own windows (--sample-ab-own-maps) or, on shared maps,
	 * the sample maps zeroed at A's window closes (live_closed()). */
	double sab_ratio[SAB_NV][SAB_MAX];
	__u32 nsab[SAB_NV];
	double sab_a[SAB_MAX * (SAB_NV + 1)];
	__u32 nsab_a;
	__u64 sab_packets;		/* every packet of the alternations */
	__u32 nsab_close;		/* triples left out: a window closed
					 * or a half saw no frame */
	struct lb_run sw[SAB_NV];
	int sab_zero_fd[SAB_NV];
	struct fs_sketch_params sab_zero_p[SAB_NV];
	int nsab_zero;
};

static struct bpf_program *live_prog_of(struct bench *skel, enum live_prog i)
{
	switch (i) {
	case LP_EMPTY: return skel->progs.fs_live_empty;
	case LP_PARSE: return skel->progs.fs_live_parse;
	case LP_FLOOR: return skel->progs.fs_live_floor;
	case LP_NAIVE: return skel->progs.fs_live_naive;
	default: return skel->progs.fs_live_full;	/* live_is_full() */
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
	int err, i;

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
	/* The full program's reports: the sampled option's are not its. */
	if (packets && L->cur != LP_NITRO && L->cur != LP_NITRO1) {
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
	/* Sample maps of loads on these maps: zeroed as the daemon zeroes
	 * a closed slot, or old windows' flows would fill their buckets. */
	for (i = 0; i < L->nsab_zero; i++) {
		const struct fs_sketch_params *p = &L->sab_zero_p[i];
		__u64 first = fs_dp_first(FS_DP_SAMPLE, p, slot);
		__u64 n = fs_dp_maps[FS_DP_SAMPLE].per_slot(p);
		__u32 sh = fs_dp_maps[FS_DP_SAMPLE].chunk_shift;

		err = lb_zero_range(&L->r, L->sab_zero_fd[i], (__u32)(first >> sh),
				    (__u32)((first + n - 1) >> sh));
		if (err)
			return err;
	}
	return 0;
}

/* The --fine4 prototype's IPv4 summary (blocklist.bpf.h, fs_bench_sum4)
 * for list l: the byte of fs_block_summary, and the /19 bits of bloom.h's
 * finer IPv4 level above it. */
static int fine4_fill(int fd, const struct bb_list *l)
{
	__u16 *w = calloc(65536, sizeof(*w));
	__u32 i, zero = 0, j;
	int err = 0;

	if (!w)
		return -ENOMEM;
	for (i = 0; i < l->n; i++) {
		const struct fs_cidr *c = &l->c[i];
		__u64 keys;
		int g = fs_bloom_group_of(FS_FAMILY_IPV4, c->len, &keys);
		__u32 idx = (__u32)c->addr[0] << 8 | c->addr[1];

		if (c->family != FS_FAMILY_IPV4 || g < 0)
			continue;
		if (!g) {
			for (j = 0; j < keys; j++)
				w[idx + j] |= 1;
			continue;
		}
		w[idx] |= (__u16)(1U << g | fs_bloom_fine4_bits(c->len, c->addr) << 8);
	}
	if (bpf_map_update_elem(fd, &zero, w, 0))
		err = -errno;
	free(w);
	return err;
}

/* Load a fresh object with only program `which` into *skelp, for the
 * receiving interface ifindex (named ifname), its windows in W (the run's
 * own, or a bursty pair's): new maps, as after a daemon start.  The full
 * program gets the daemon's report fraction. */
static int live_load_params(struct live *L, enum live_prog which, struct lb_run *W,
			    int ifindex, const char *ifname, struct bench **skelp,
			    const struct bench *share);

static int live_load_on(struct live *L, enum live_prog which, struct lb_run *W,
			int ifindex, const char *ifname, struct bench **skelp)
{
	int err = lb_params(W);

	return err ? err : live_load_params(L, which, W, ifindex, ifname, skelp, NULL);
}

/* The same with W->p as the caller set it (hash key included), and with
 * share (not NULL) the maps of that loaded object but fs_sample
 * (bench_share.h): then its windows are share's, already open. */
static int live_load_params(struct live *L, enum live_prog which, struct lb_run *W,
			    int ifindex, const char *ifname, struct bench **skelp,
			    const struct bench *share)
{
	struct fs_ctl ctl = { .hh_phi_q32 = fs_hh_phi_q32(L->o->c.hh_fraction) };
	struct bench *skel;
	int i, err;

	if (which >= LP_FULL_BOTH && which <= LP_FULL_SPREAD)
		bd_apply(&W->p, &L->o->detect, (enum bd_variant)(which - LP_FULL_BOTH));
	/* The keyed sample at flowsketchd --sample-rate's defaults. */
	if (which == LP_FULL_SAMPLE)
		fs_params_set_sample(&W->p, &(struct fs_sample_params){
			FS_DEFAULT_SAMPLE_SHIFT, FS_DEFAULT_SAMPLE_LOG2_BUCKETS });
	skel = *skelp = which == LP_NITRO ? (struct bench *)bench_nitro__open() :
			which == LP_NITRO1 ? (struct bench *)bench_nitro1__open() :
			bench__open();
	if (!skel)
		return -ENOENT;
	/* Two entries share fs_live_full: all off, then the one measured on. */
	for (i = 0; i < LP_MAX; i++)
		bpf_program__set_autoload(live_prog_of(skel, i), false);
	bpf_program__set_autoload(live_prog_of(skel, which), true);
	bpf_program__set_autoload(skel->progs.fs_bench_verdict, false);
	bpf_program__set_autoload(skel->progs.fs_bench_kverdict, false);
	bpf_program__set_autoload(skel->progs.fs_bench_sverdict, false);
	bpf_program__set_autoload(skel->progs.fs_bench_base, false);
	bpf_program__set_autoload(skel->progs.fs_bench_parse, false);
	bpf_program__set_autoload(skel->progs.fs_bench_full, false);
	bpf_program__set_autoload(skel->progs.fs_bench_naive, false);
	bpf_program__set_autoload(skel->progs.fs_bench_floor, false);
	err = FS_DATAPATH_SETUP(skel, &W->p, false);
	if (err)
		return err;
	bpf_map__set_max_entries(skel->maps.naive_cms,
				 (__u32)fs_cms_cells_per_slot(&W->p));
	bpf_map__set_max_entries(skel->maps.naive_hll,
				 FS_HLL_NSKETCH << W->p.hll_p);
	skel->rodata->fs_bench_block_stop = L->o->stop;
	skel->rodata->fs_bench_fine4 = L->o->fine4;
	if (which == LP_FULL_LIST || which == LP_FULL_SMALL)
		bb_size(skel->maps.fs_block4, skel->maps.fs_block6,
			skel->maps.fs_block_hits, skel->maps.fs_bfilter,
			&skel->rodata->fs_bfilter_mask,
			which == LP_FULL_LIST ? &L->list : &L->small);
	if (share) {
		err = BENCH_SHARE_MAPS(skel, share);
		if (err)
			return err;
	}
	err = bench__load(skel);
	if (err)
		return err;
	if (!live_is_full(which) || share)
		return 0;
	/* The receiving veth in the slot table, as the daemon has it. */
	err = fs_ifslot_set_one(bpf_map__fd(skel->maps.fs_ifslot),
				(__u32)ifindex, ifname);
	if (err)
		return err;
	if (which == LP_FULL_LIST || which == LP_FULL_SMALL) {
		err = bb_fill(bpf_map__fd(skel->maps.fs_block4),
			      bpf_map__fd(skel->maps.fs_block6),
			      bpf_map__fd(skel->maps.fs_bfilter),
			      bpf_map__fd(skel->maps.fs_bsummary), &W->p.secret,
			      which == LP_FULL_LIST ? &L->list : &L->small,
			      &ctl.bloom, NULL, NULL);
		if (!err && L->o->fine4)
			err = fine4_fill(bpf_map__fd(skel->maps.fs_bench_sum4),
					 which == LP_FULL_LIST ? &L->list : &L->small);
		if (err)
			return err;
	}
	if (L->o->no_cache)	/* generation 0: no cache (bloom.h) */
		ctl.bloom &= ~((__u64)0xff << 32);
	L->bloom_word = ctl.bloom;
	/* Windows close from attach on (the caller sets the first close). */
	return lb_windows_open(W, LB_MAPS(skel), &ctl);
}

static int live_load(struct live *L, enum live_prog which)
{
	int err = live_load_on(L, which, &L->r, L->r.rx_ifindex, L->o->c.rx_iface,
			       &L->skel);

	if (!err)
		L->prog = live_prog_of(L->skel, which);
	return err;
}

static void live_unload(struct live *L)
{
	if (L->r.rx_ifindex > 0)
		bpf_xdp_detach(L->r.rx_ifindex, XDP_FLAGS_DRV_MODE, NULL);
	lb_windows_close(&L->r);
	bench__destroy(L->skel);
	L->skel = NULL;
}

/* n packets (--burst, or --bursty-burst), measured. */
static int live_burst(struct live *L, __u32 n, struct lb_sample *out, const char *what)
{
	struct lb_phase ph;
	int err = lb_phase_begin(&L->r, &ph);

	if (err)
		return err;
	/* The generator is idle here (every phase ends drained), and may
	 * have sent past the last budget in its final batch: count the
	 * burst from what it did send, so a burst is exactly n packets. */
	atomic_store(&L->r.g.budget, atomic_load(&L->r.g.sent) + n);
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

/*
 * The keyed sample's cost (issue 22: at most SAMPLE_TARGET of full), with
 * the noise of separate loads taken out.  Rounds of separate loads
 * (live_measure()) compare programs with maps of their own: each load's
 * Count-Min and HyperLogLog arrays (several MiB a CPU) land at other
 * physical pages, so they meet other cache sets and other TLB reaches,
 * and hash with another key; on this kind of machine two loads of the
 * same program differ by more than 3 % (hence the control below).  The
 * sample cannot be switched inside one load like the blocklist
 * (live_ab()): fs_params is in .rodata and the verifier prunes the sample
 * away when it is off.  So:
 *
 *   - one key: every load of a round gets A's fs_params but the sample's
 *     bytes (so the same flows take the same cells and registers);
 *   - one set of maps: the other loads take every map of A but fs_sample
 *     (bench_share.h), so their sketch state is the same memory, warm
 *     from the previous half, and their windows are A's (closed on A's
 *     fs_ctl, with their fs_sample zeroed too: live_closed());
 *   - short interleaved halves on one stream of traffic: the attached
 *     program is swapped (bpf_xdp_attach, an RCU pointer swap in veth)
 *     every --sample-ab-seconds in the order A X A Y A Z A X ..., each
 *     variant X after a different one every pair, so a drift over the
 *     round falls on all alike;
 *   - paired ratios: a variant's half against the mean of the A halves
 *     just before and after it, which cancels a linear drift exactly,
 *
 *         r_k = x_k / ((a_k + a_k+1) / 2),
 *
 *     and the figure is the median of r_k over all pairs and rounds, with
 *     the smallest and largest beside it;
 *   - the control: A against a second load of the same program and key
 *     (SAB_CONTROL), measured the same way in the same rounds: what its
 *     ratio misses 1.000 by is the method's floor, printed above the
 *     sample's.
 *
 * The generator and veth's receive (NAPI in the sender's softirq) stay on
 * one CPU and this thread on another (lb_start()).  The levers can be
 * turned off to see what each one buys: --sample-ab-own-maps (each load
 * its own maps and windows) and --sample-ab-own-key.
 */
static int sab_half(struct live *L, int fd, int *attached, double *ns)
{
	struct lb_run *R = &L->r;
	struct stat_snap a, b;
	int err = 0;

	if (*attached != fd) {
		err = bpf_xdp_attach(R->rx_ifindex, fd, XDP_FLAGS_DRV_MODE, NULL);
		if (err)
			return err;
		*attached = fd;
	}
	err = prog_stats(fd, &a);
	if (!err)
		err = lb_wait(R, now_ns() + (__u64)(L->o->sab_s * 1e9), "sample A/B");
	if (!err)
		err = prog_stats(fd, &b);
	/* No frame in a half (the generator was off its CPU): 0, and the
	 * triples around it are left out. */
	if (!err && ns)
		*ns = b.run_cnt > a.run_cnt ? (double)(b.run_ns - a.run_ns) /
					     (double)(b.run_cnt - a.run_cnt) : 0;
	return err;
}

/* Runs of fds[0..n) since s0[] in *runs. */
static int sab_runs(const int *fds, const struct stat_snap *s0, int n, __u64 *runs)
{
	struct stat_snap s;
	int i, err;

	*runs = 0;
	for (i = 0; i < n; i++) {
		err = prog_stats(fds[i], &s);
		if (err)
			return err;
		*runs += s.run_cnt - s0[i].run_cnt;
	}
	return 0;
}

/* The generator stopped, and every frame it sent since sent0 run by one
 * of the loads (each frame runs exactly one program: the one attached). */
static int sab_drain(struct live *L, const int *fds, const struct stat_snap *s0,
		     int n, __u64 sent0, __u64 *runs)
{
	struct lb_run *R = &L->r;
	__u64 start = now_ns();
	int err;

	atomic_store(&R->g.budget, atomic_load(&R->g.sent));
	for (;;) {
		err = lb_wait(R, now_ns() + LB_POLL_NS, "sample A/B");
		if (!err)
			err = sab_runs(fds, s0, n, runs);
		if (err)
			return err;
		if (atomic_load(&R->g.idle) &&
		    atomic_load(&R->g.sent) >= atomic_load(&R->g.budget) &&
		    *runs == atomic_load(&R->g.sent) - sent0)
			return 0;
		if (now_ns() - start > LB_DRAIN_NS) {
			fprintf(stderr, LB_TOOL ": sample A/B: the loads ran %llu times for %llu frames sent in 10 s.\n",
				(unsigned long long)*runs,
				(unsigned long long)(atomic_load(&R->g.sent) - sent0));
			return -ETIMEDOUT;
		}
	}
}

/* One round of the alternation (header above). */
static int live_sample_ab(struct live *L)
{
	const struct live_opts *o = L->o;
	struct lb_run *R = &L->r;
	struct bench *vs[SAB_NV] = { 0 };
	int fds[SAB_NV + 1], attached = -1, err, v, i;
	struct stat_snap s0[SAB_NV + 1];
	__u64 sent0, runs, w0;
	double a0;
	__u32 pr;

	L->cur = LP_FULL;
	err = live_load(L, LP_FULL);		/* A: a fresh key, maps and windows */
	if (err)
		goto out;
	fds[SAB_NV] = bpf_program__fd(L->prog);
	for (v = 0; v < SAB_NV; v++) {
		struct lb_run *W = &L->sw[v];

		W->o = R->o;
		W->value = R->value;
		W->ncpus = R->ncpus;
		W->p = R->p;
		if (o->sab_own_key) {
			err = lb_params(W);
			if (err)
				goto out;
		}
		if (sab_log2b[v])
			fs_params_set_sample(&W->p, &(struct fs_sample_params){
				FS_DEFAULT_SAMPLE_SHIFT, sab_log2b[v] });
		err = live_load_params(L, LP_FULL, W, R->rx_ifindex, o->c.rx_iface,
				       &vs[v], o->sab_own_maps ? NULL : L->skel);
		if (err)
			goto out;
		fds[v] = bpf_program__fd(vs[v]->progs.fs_live_full);
		if (o->sab_own_maps) {
			R->also[R->nalso++] = W;
		} else if (sab_log2b[v]) {
			L->sab_zero_fd[L->nsab_zero] = bpf_map__fd(vs[v]->maps.fs_sample);
			L->sab_zero_p[L->nsab_zero++] = W->p;
		}
	}
	err = lb_mark(R, fds[SAB_NV]);
	if (err)
		goto out;
	err = bpf_xdp_attach(R->rx_ifindex, fds[SAB_NV], XDP_FLAGS_DRV_MODE, NULL);
	if (err)
		goto out;
	attached = fds[SAB_NV];
	R->next_close_ns = now_ns() + lb_window_ns(R);
	for (i = 0; i < R->nalso; i++)
		R->also[i]->next_close_ns = R->next_close_ns;
	err = stat_sum(L, FS_STAT_REPORTS, &L->reports_at_open);
	for (i = 0; !err && i <= SAB_NV; i++)
		err = prog_stats(fds[i], &s0[i]);
	if (err)
		goto out;
	sent0 = atomic_load(&R->g.sent);
	atomic_store(&R->g.budget, ~0ULL);
	atomic_store(&R->g.idle, 0);
	/* A's first half warms the shared maps up; not measured.  Then
	 * A X A Y A Z A X ...: each A half is a1 of one variant and a0 of
	 * the next. */
	err = sab_half(L, fds[SAB_NV], &attached, NULL);
	w0 = R->windows;
	if (!err)
		err = sab_half(L, fds[SAB_NV], &attached, &a0);
	for (pr = 0; !err && pr < o->sab_pairs; pr++) {
		for (i = 0; !err && i < SAB_NV; i++) {
			double x, a1;
			__u64 w1;

			v = (int)((pr + (__u32)i) % SAB_NV);
			err = sab_half(L, fds[v], &attached, &x);
			w1 = R->windows;
			if (!err)
				err = sab_half(L, fds[SAB_NV], &attached, &a1);
			if (err)
				break;
			/* A window close zeroes the new slot's cells from
			 * another CPU: the next packets miss on all of them,
			 * on whichever half is running.  A triple it falls in
			 * says when it came, not what X costs: left out. */
			if (R->windows != w0 || !a0 || !x || !a1)
				L->nsab_close++;
			else if (L->nsab[v] < SAB_MAX)
				L->sab_ratio[v][L->nsab[v]++] = x / ((a0 + a1) / 2);
			if (L->nsab_a < sizeof(L->sab_a) / sizeof(L->sab_a[0]))
				L->sab_a[L->nsab_a++] = a1;
			a0 = a1;
			w0 = w1;
		}
	}
	if (!err)
		err = sab_drain(L, fds, s0, SAB_NV + 1, sent0, &runs);
	if (!err)
		L->sab_packets += runs;
	if (!err && R->rotating)
		err = lb_rotate(R);
out:
	if (err)
		fprintf(stderr, "fs-livebench: the sample's A/B alternation failed: %s.\n",
			strerror(-err));
	if (R->rx_ifindex > 0)
		bpf_xdp_detach(R->rx_ifindex, XDP_FLAGS_DRV_MODE, NULL);
	R->nalso = 0;
	L->nsab_zero = 0;
	for (v = 0; v < SAB_NV; v++) {
		lb_windows_close(&L->sw[v]);
		bench__destroy(vs[v]);
	}
	live_unload(L);
	return err;
}

/* One program, one round: load, attach, the three phases, detach. */
static int live_measure(struct live *L, enum live_prog which,
			struct lb_sample out[PH_MAX])
{
	const struct live_opts *o = L->o;
	struct lb_run *R = &L->r;
	int err;

	L->cur = which;
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

	err = live_burst(L, o->burst, &out[PH_FIRST], "first window");
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
		err = live_burst(L, o->burst, &out[PH_QUIET], "after quiet");
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

/* ------------------------------------------------------------ bursty */

/*
 * The other two pairs' sockets (in --tx-netns) and receiving ends (in
 * --rx-netns, this thread's), checked to have --rx-iface's MAC, to which
 * every frame is addressed; the bursty traffic's frames.  Pair 0 is
 * --tx-iface/--rx-iface.  Says what failed on stderr; bursty_end()
 * frees what it got.
 */
static int bursty_start(struct live *L)
{
	const struct live_opts *o = L->o;
	struct lb_run *R = &L->r;
	struct gen *b = &L->btraffic;
	int k, s, err = 0;

	L->bfd[0] = R->g.fd;
	L->brx[0] = R->rx_ifindex;
	L->brx_name[0] = o->c.rx_iface;
	for (k = 1; k < LB_PAIRS; k++) {
		struct sock_req q = { .netns = o->c.tx_netns, .ifname = o->b.tx[k - 1],
				      .fd = -1 };
		__u8 mac[ETH_ALEN];
		pthread_t t;

		if (pthread_create(&t, NULL, open_sock_main, &q) || pthread_join(t, NULL) ||
		    q.err) {
			fprintf(stderr, LB_TOOL ": cannot open a packet socket on %s in %s: %s.\n",
				q.ifname, q.netns, strerror(q.err ? -q.err : EAGAIN));
			return q.err ? q.err : -EAGAIN;
		}
		L->bfd[k] = q.fd;
		L->brx_name[k] = o->b.rx[k - 1];
		L->brx[k] = (int)if_nametoindex(L->brx_name[k]);
		if (!L->brx[k]) {
			fprintf(stderr, LB_TOOL ": no interface %s in netns %s.\n",
				L->brx_name[k], o->c.rx_netns);
			return -ENODEV;
		}
		s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		err = s < 0 ? -errno : iface_mac(s, L->brx_name[k], mac);
		if (s >= 0)
			close(s);
		if (!err && memcmp(mac, R->g.dst_mac, ETH_ALEN))
			err = -EADDRNOTAVAIL;
		if (err) {
			fprintf(stderr, LB_TOOL ": --pair %s:%s: %s must have %s's MAC, to which the frames go: %s.\n",
				o->b.tx[k - 1], L->brx_name[k], L->brx_name[k], o->c.rx_iface,
				strerror(-err));
			return err;
		}
	}
	b->flows = o->b.flows;
	b->zipf = o->c.zipf;
	b->ipv6_share = o->c.ipv6_share;
	b->seed = o->c.seed + 1;
	memcpy(b->src_mac, R->g.src_mac, ETH_ALEN);
	memcpy(b->dst_mac, R->g.dst_mac, ETH_ALEN);
	if (gen_prepare(b)) {
		fprintf(stderr, LB_TOOL ": out of memory for the bursty frames.\n");
		return -ENOMEM;
	}
	return 0;
}

static void bursty_end(struct live *L)
{
	int k;

	for (k = 1; k < LB_PAIRS; k++)
		if (L->bfd[k] >= 0)
			close(L->bfd[k]);
	free(L->btraffic.frames);
	free(L->btraffic.lens);
	free(L->btraffic.seq);
}

/* The generator's traffic: the bursty one (on) or its own, and pair 0's
 * socket.  Only while it is idle (every phase ends drained): it reads
 * them again once the next budget is stored after this. */
static void bursty_traffic(struct live *L, bool on)
{
	struct gen *g = &L->r.g, *b = &L->btraffic;
	__u8 *frames = g->frames;
	__u16 *lens = g->lens;
	__u32 *seq = g->seq;

	if (on != L->bswapped) {
		g->frames = b->frames;
		g->lens = b->lens;
		g->seq = b->seq;
		b->frames = frames;
		b->lens = lens;
		b->seq = seq;
		L->bswapped = on;
	}
	g->fd = L->bfd[0];
}

static void bursty_unload(struct live *L)
{
	int k;

	L->r.nalso = 0;
	for (k = 0; k < LB_PAIRS; k++) {
		if (L->bskel[k])
			bpf_xdp_detach(L->brx[k], XDP_FLAGS_DRV_MODE, NULL);
		lb_windows_close(&L->bw[k]);
		bench__destroy(L->bskel[k]);
		L->bskel[k] = NULL;
	}
}

/* One turn on pair k: --bursty-burst packets (*out), then, unless it is the
 * last, --bursty-load seconds more on the same pair, then the drain. */
static int bursty_turn(struct live *L, int k, bool load, struct lb_sample *out)
{
	struct lb_run *R = &L->r;
	struct stat_snap end;
	int err;

	R->g.fd = L->bfd[k];	/* the generator is idle: see bursty_traffic() */
	err = lb_mark(R, L->bprog[k]);
	if (!err)
		err = live_burst(L, L->o->b.burst, out, "bursty burst");
	if (!err && load) {
		atomic_store(&R->g.budget, ~0ULL);
		atomic_store(&R->g.idle, 0);
		err = lb_wait(R, now_ns() + (__u64)(L->o->b.load_s * 1e9), "bursty load");
		atomic_store(&R->g.budget, atomic_load(&R->g.sent));
		if (!err)
			err = lb_wait(R, 0, "bursty load");
	}
	if (!err)
		err = prog_stats(R->prog_fd, &end);
	if (!err)
		L->bursty_packets += end.run_cnt - R->at_attach.run_cnt;
	return err;
}

/* Program `which` in the bursty pattern (header): three loads, one per
 * pair, fed in turn; the bursts from the second cycle on are kept. */
static int live_bursty(struct live *L, enum live_prog which)
{
	const struct lb_bursty_opts *b = &L->o->b;
	struct lb_run *R = &L->r;
	__u32 t, turns = LB_PAIRS * (b->cycles + 1);
	__u64 drained[LB_PAIRS] = { 0 };
	int k, err = 0;

	for (k = 0; k < LB_PAIRS; k++) {
		struct lb_run *W = &L->bw[k];

		memset(W, 0, sizeof(*W));
		W->o = R->o;
		W->value = R->value;
		W->ncpus = R->ncpus;
		err = live_load_on(L, which, W, L->brx[k], L->brx_name[k], &L->bskel[k]);
		if (err) {
			fprintf(stderr, LB_TOOL ": cannot load %s for pair %d: %s.\n",
				live_prog_names[which], k, strerror(-err));
			goto out;
		}
		L->bprog[k] = bpf_program__fd(live_prog_of(L->bskel[k], which));
		err = bpf_xdp_attach(L->brx[k], L->bprog[k], XDP_FLAGS_DRV_MODE, NULL);
		if (err) {
			fprintf(stderr, LB_TOOL ": cannot attach %s to %s (native XDP): %s.\n",
				live_prog_names[which], L->brx_name[k], strerror(-err));
			goto out;
		}
		W->next_close_ns = now_ns() + lb_window_ns(W);
		if (W->rotating)
			R->also[R->nalso++] = W;
	}
	bursty_traffic(L, true);
	for (t = 0; t < turns && !err; t++) {
		struct lb_sample one;
		__u64 start = now_ns();

		k = (int)(t % LB_PAIRS);
		err = bursty_turn(L, k, t + 1 < turns, &one);
		if (!err && t >= LB_PAIRS) {
			L->bursts[which][L->nbursts[which]++] = one;
			L->quiet_s[L->nquiet++] = (double)(start - drained[k]) * 1e-9;
		}
		drained[k] = now_ns();
	}
out:
	bursty_traffic(L, false);
	bursty_unload(L);
	return err;
}

/* Items of a round: the programs' phases (k < LP_MAX), then the programs
 * LP_EMPTY .. LP_FULL_SPREAD in the bursty pattern. */
static int live_round(void *ctx, int k, __u32 r)
{
	struct live *L = ctx;
	struct lb_sample one[PH_MAX];
	int ph, err;

	if (L->o->only_list && k != LP_FULL_LIST)
		return 0;
	if (L->o->only_sample && k != LP_EMPTY && k != LP_FULL && k != LP_FULL_SAMPLE)
		return 0;
	if (k >= LP_MAX)
		return live_bursty(L, (enum live_prog)(k - LP_MAX));
	err = live_measure(L, (enum live_prog)k, one);
	for (ph = 0; !err && ph < PH_MAX; ph++)
		L->samples[k][ph][r] = one[ph];
	/* The sample's cost once more, on shared maps (live_sample_ab()). */
	if (!err && k == LP_FULL_SAMPLE && L->o->sab_pairs)
		err = live_sample_ab(L);
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
	return ok ? "met" : "not met";
}

/* Issue 19's live targets (its "Targets"): how many were met, raw and
 * net counted apart. */
struct live_tally {
	int met, all;
};

static const char *tally(struct live_tally *t, bool ok)
{
	t->met += ok;
	t->all++;
	return verdict(ok);
}

/*
 * num / den as the kernel reports them (raw), and the same net of the
 * empty program's cost: bpf_stats adds two clock reads to every run (and
 * the XDP call is paid by any program), so with e the empty program's
 * cost in the same phase,
 *
 *     net = (num - e) / (den - e)
 *
 * is the ratio of what the programs themselves add.  A target (> 0) gets
 * a verdict on both.
 */
static void print_ratio(struct live_tally *t, const char *label, double num,
			double den, double base, double target, bool le)
{
	double r = den > 0 ? num / den : 0;
	double n = den - base > 0 ? (num - base) / (den - base) : 0;

	if (target > 0) {
		const char *vr = tally(t, le ? r <= target : r >= target);
		const char *vn = tally(t, n > 0 && (le ? n <= target : n >= target));

		printf("  %-32s %6.2fx (net of empty %6.2fx)   target %s %.2fx: %s (net: %s)\n",
		       label, r, n, le ? "<=" : ">=", target, vr, vn);
	} else {
		printf("  %-32s %6.2fx (net of empty %6.2fx)\n", label, r, n);
	}
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

/*
 * The sampled option's derived bound (cms_sampled.h) at the run's sizes:
 * the min of rows' failure probability for |estimate - f| <= eps N with
 * eps = 2e / w, for a light flow (share 1/w), one at the report fraction
 * and any flow, at window lengths N of 1e5, 1e6 and 1e7 packets and at
 * this run's median window (npk, 0 if none), and the N from which it is
 * at most 1 %.
 */
static void nitro_bound(const struct live *L, __u64 npk, const char *name, double q)
{
	const struct fs_sketch_params *p = &L->r.p;
	double w = (double)(1U << p->cms_log2_width);
	double eps = 2 * 2.718281828459045 / w, phi[3] = { 1 / w, L->o->c.hh_fraction, 1 };
	double n[4] = { 1e5, 1e6, 1e7, (double)npk };
	unsigned d = p->cms_depth;
	int i, j;

	printf("  %s's derived bound (cms_sampled.h; option, not the default: two-sided bound):\n"
	       "  P(|estimate - f| > eps N) for the min of rows, eps = 2e/w = %.3f %%, flows of share\n"
	       "  1/w, %g and 1 (light, at the report fraction, any), q = 1/p = %g:\n", name,
	       100 * eps, L->o->c.hh_fraction, q);
	for (j = 0; j < 4; j++) {
		if (j == 3 && !npk)
			continue;
		printf("    %s N = %-9.3g%s", name, n[j], j == 3 ? " (this run's median window)" : "");
		for (i = 0; i < 3; i++)
			printf("%s%.4f", i ? " / " : ": ", fs_nitro_fail_min(d, w, q, eps, phi[i], n[j]));
		printf("\n");
	}
	printf("    %s at most 1 %% from N >=", name);
	for (i = 0; i < 3; i++) {
		double n0 = fs_nitro_converge(d, w, q, eps, phi[i], 0.01);

		if (n0 > 0)
			printf("%s%.2g", i ? " / " : " ", n0);
		else
			printf("%snever", i ? " / " : " ");
	}
	printf(" packets a window (unsampled: %.4f from the first packet, one-sided)\n",
	       fs_nitro_fail_min(d, w, 1, eps, 0, 1));
	if (q == (double)(1U << FS_CMS_NITRO_K))	/* rows independent: nitro's */
		printf("    %s median of rows at this eps: -> %.4f as N grows (%.4f at eps = 8e/w)\n",
		       name, fs_nitro_fail_median(d, w, q, eps, phi[0], 1e300),
		       fs_nitro_fail_median(d, w, q, 4 * eps, phi[0], 1e300));
	printf("\n");
}

/*
 * The detection sketches' rows (bench_detect.h) against full in one
 * phase: the ratios of the medians m[] (by program), net of empty's.
 * No target on these lines: issue 20's is on full+both net of empty,
 * steady and bursty together (detect_verdict()).
 */
static void detect_ratios(struct live_tally *t, const double *m, const char *phase)
{
	char label[64];
	int v;

	for (v = 0; v < BD_MAX; v++) {
		snprintf(label, sizeof(label), "%s / full, %s", bd_names[v], phase);
		print_ratio(t, label, m[LP_FULL_BOTH + v], m[LP_FULL], m[LP_EMPTY], 0, false);
	}
}

/* The net ratio print_ratio() prints, as printed (two decimals). */
static double net_ratio(double num, double den, double base)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.2f", den - base > 0 ? (num - base) / (den - base) : 0);
	return strtod(buf, NULL);
}

/*
 * Issue 20's cost target: flowsketchd turns both detection sketches on
 * by default only if the full program with both costs at most BD_TARGET
 * times the full program without them, live, steady and bursty.  Judged
 * net of empty, the stricter reading: the raw ratios hold the run-time
 * statistics' clock reads and the XDP call on both sides, which pull
 * every ratio towards 1.
 */
static void detect_verdict(const struct live *L, const double steady[LP_MAX], bool bursty)
{
	double s = net_ratio(steady[LP_FULL_BOTH], steady[LP_FULL], steady[LP_EMPTY]);
	double b = bursty ? net_ratio(L->bmed[LP_FULL_BOTH], L->bmed[LP_FULL],
				      L->bmed[LP_EMPTY]) : 0;
	bool ok = bursty && s > 0 && s <= BD_TARGET && b > 0 && b <= BD_TARGET;

	printf("  issue 20's target, full+both / full <= %.2fx net of empty, steady and bursty:\n",
	       BD_TARGET);
	if (bursty)
		printf("  %.2fx steady, %.2fx bursty: %s\n\n", s, b,
		       ok ? "met" : "not met: detection stays off by default");
	else
		printf("  %.2fx steady, bursty not measured: not met: detection stays off by default\n\n",
		       s);
}

/*
 * The bursty phase's figures: per program the median of its bursts (the
 * table's rows), the quiet spells, and the ratios, against the targets of
 * the steady phase's (full <= 2.0x parse-only; naive/full >= 2.5x after a
 * quiet spell).
 */
static void bursty_report(struct live *L, struct live_tally *t)
{
	const struct live_opts *o = L->o;
	const struct lb_bursty_opts *b = &o->b;
	double med[LP_BURSTY], q;
	struct lb_sample sum = { 0 };
	int i;

	printf("Bursty: %u veth pairs fed in turn from one CPU, each with a load of the program of its own\n"
	       "(maps, hash key, windows); per pair and turn %u packets measured, then %.1f s more on it;\n",
	       LB_PAIRS, b->burst, b->load_s);
	printf("%u rounds x %u cycles x %u pairs = %u bursts per program after one unmeasured cycle;\n"
	       "traffic: %u flows (seed %llu), Zipf %.2f, %.0f %% IPv6; median of bursts, min..max\n",
	       o->c.rounds, b->cycles, LB_PAIRS, o->c.rounds * b->cycles * LB_PAIRS, b->flows,
	       (unsigned long long)(o->c.seed + 1), o->c.zipf, 100 * o->c.ipv6_share);
	q = median(L->quiet_s, L->nquiet);	/* sorts: [0] min, [n-1] max */
	printf("each burst after its pair's quiet spell of %.2f s (%.2f..%.2f), the two others' traffic\n\n",
	       q, L->quiet_s[0], L->quiet_s[L->nquiet - 1]);
	lb_table_head(LP_NAME_W, "program", 7, "phase");
	for (i = 0; i < LP_BURSTY; i++)
		med[i] = lb_table_row(LP_NAME_W, live_prog_names[i], 7, "bursty", L->bursts[i],
				      L->nbursts[i], &sum);
	printf("  (%llu packets in the bursty phase in all: bursts, loads and the unmeasured cycle)\n\n",
	       (unsigned long long)L->bursty_packets);
	printf("  ratios of the medians above:\n");
	print_ratio(t, "full / parse-only, bursty", med[LP_FULL], med[LP_PARSE],
		    med[LP_EMPTY], 2.0, true);
	print_ratio(t, "naive / full, bursty", med[LP_NAIVE], med[LP_FULL],
		    med[LP_EMPTY], 2.5, false);
	print_ratio(t, "floor / parse-only, bursty", med[LP_FLOOR], med[LP_PARSE],
		    med[LP_EMPTY], 0, false);
	print_ratio(t, "full / floor, bursty", med[LP_FULL], med[LP_FLOOR],
		    med[LP_EMPTY], 0, false);
	printf("  nitro (option, not the default: two-sided bound):\n");
	print_ratio(t, "nitro / parse-only, bursty", med[LP_NITRO], med[LP_PARSE],
		    med[LP_EMPTY], 0, false);
	print_ratio(t, "nitro / full, bursty", med[LP_NITRO], med[LP_FULL],
		    med[LP_EMPTY], 0, false);
	print_ratio(t, "nitro1 / parse-only, bursty", med[LP_NITRO1], med[LP_PARSE],
		    med[LP_EMPTY], 0, false);
	print_ratio(t, "nitro1 / full, bursty", med[LP_NITRO1], med[LP_FULL],
		    med[LP_EMPTY], 0, false);
	printf("  detection sketches (issue 20):\n");
	detect_ratios(t, med, "bursty");
	memcpy(L->bmed, med, sizeof(L->bmed));
	printf("\n");
}

/*
 * live_sample_ab()'s figures: per variant the median of its paired
 * ratios with the smallest and largest, and A's halves' median.  The
 * control's line is the method's floor: the same program and key loaded
 * twice, which differ in nothing a packet could see.  Issue 22's verdict
 * is on the sample at its defaults (128 buckets), raw and net of the
 * empty program's steady cost e from the rounds above: with a = A's
 * median half and x = r a,
 *
 *     net = (x - e) / (a - e) = 1 + (r - 1) a / (a - e),
 *
 * what the sample adds over what the full program itself costs.  Three
 * decimals: the target is 3 %, the floor a few tenths of one.
 */
static void sab_report(const struct live *L, struct live_tally *t, double e)
{
	const struct live_opts *o = L->o;
	double r[SAB_NV], a, v[SAB_MAX * (SAB_NV + 1)], n;
	int i;

	memcpy(v, L->sab_a, L->nsab_a * sizeof(*v));
	a = L->nsab_a ? printed1(median(v, L->nsab_a)) : 0;
	printf("  the sample on shared maps: full (A) and three loads with A's maps but fs_sample and\n"
	       "  A's key, attached in turn every %.2f s (A X A Y A Z A ...), %u cycles a round%s%s;\n"
	       "  median of each load's ratios to the mean of the A halves around it (min..max, pairs);\n"
	       "  A's halves %.1f ns/pkt (%llu packets; %u triples with a window close or an empty half left out)\n",
	       o->sab_s, o->sab_pairs, o->sab_own_maps ? ", OWN MAPS" : "",
	       o->sab_own_key ? ", OWN KEYS" : "", a, (unsigned long long)L->sab_packets,
	       L->nsab_close);
	for (i = 0; i < SAB_NV; i++) {
		__u32 k = L->nsab[i];

		memcpy(v, L->sab_ratio[i], k * sizeof(*v));
		r[i] = k ? median(v, k) : 0;	/* sorts v */
		printf("  %-32s %7.3fx (min %.3f, max %.3f; %u pairs)\n", sab_names[i],
		       r[i], k ? v[0] : 0, k ? v[k - 1] : 0, k);
	}
	/* The sample against the control: what a second load of the same
	 * code adds by itself (its code elsewhere, the swap) taken out. */
	printf("  %-32s %7.3fx (the two medians' ratio: the floor taken out)\n",
	       "full+sample 128 / full again", r[SAB_CONTROL] > 0 ? r[SAB_B128] / r[SAB_CONTROL] : 0);
	/* No pair measured (0): it meets no target. */
	n = r[SAB_B128] > 0 && a - e > 0 ? 1 + (r[SAB_B128] - 1) * a / (a - e) : 0;
	printf("  %-32s %7.3fx (net of empty %7.3fx)   target <= %.3fx: %s (net: %s)\n",
	       "full+sample / full, paired", r[SAB_B128], n, SAMPLE_TARGET,
	       tally(t, r[SAB_B128] > 0 && r[SAB_B128] <= SAMPLE_TARGET),
	       tally(t, n > 0 && n <= SAMPLE_TARGET));
}

static void live_report(struct live *L, __u64 sent)
{
	const struct live_opts *o = L->o;
	const struct lb_opts *c = &o->c;
	double med[LP_MAX][PH_MAX], steady_seconds = 0;
	struct lb_sample sum = { 0 };
	struct live_tally t = { 0 };
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
	lb_table_head(LP_NAME_W, "program", 7, "phase");
	for (i = 0; i < LP_MAX; i++)
		for (j = 0; j < PH_MAX; j++)
			med[i][j] = lb_table_row(LP_NAME_W, live_prog_names[i], 7,
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
	       (unsigned long long)(sum.runs + L->ab_packets + L->bursty_packets +
				    L->sab_packets),
	       (unsigned long long)sent);
	printf("  (kpps: the phase's packets over its wall time, sender and XDP on one CPU)\n\n");

	/* Issue 19's targets: full <= 2.0x parse-only; naive/full >= 3.0x
	 * steady and >= 2.5x in the first window and after a quiet spell. */
	printf("  ratios of the medians above:\n");
	print_ratio(&t, "full / parse-only, steady", med[LP_FULL][PH_STEADY],
		    med[LP_PARSE][PH_STEADY], med[LP_EMPTY][PH_STEADY], 2.0, true);
	print_ratio(&t, "naive / full, steady", med[LP_NAIVE][PH_STEADY],
		    med[LP_FULL][PH_STEADY], med[LP_EMPTY][PH_STEADY], 3.0, false);
	print_ratio(&t, "naive / full, first window", med[LP_NAIVE][PH_FIRST],
		    med[LP_FULL][PH_FIRST], med[LP_EMPTY][PH_FIRST], 2.5, false);
	print_ratio(&t, "naive / full, after quiet", med[LP_NAIVE][PH_QUIET],
		    med[LP_FULL][PH_QUIET], med[LP_EMPTY][PH_QUIET], 2.5, false);
	print_ratio(&t, "full+small / full, steady", med[LP_FULL_SMALL][PH_STEADY],
		    med[LP_FULL][PH_STEADY], med[LP_EMPTY][PH_STEADY], 0, false);
	print_ratio(&t, "full+list / full, steady", med[LP_FULL_LIST][PH_STEADY],
		    med[LP_FULL][PH_STEADY], med[LP_EMPTY][PH_STEADY], 0, false);
	print_ratio(&t, "full+list / full, first window", med[LP_FULL_LIST][PH_FIRST],
		    med[LP_FULL][PH_FIRST], med[LP_EMPTY][PH_FIRST], 0, false);
	/* Issue 22: the keyed sample at its defaults (1 flow in 1,024, 128
	 * buckets) costs at most SAMPLE_TARGET of the full program.  Judged
	 * on live_sample_ab()'s paired ratio (sab_report()): separate loads
	 * differ by more than that target. */
	print_ratio(&t, "full+sample / full, steady", med[LP_FULL_SAMPLE][PH_STEADY],
		    med[LP_FULL][PH_STEADY], med[LP_EMPTY][PH_STEADY], 0, false);
	print_ratio(&t, "full+sample / full, first window", med[LP_FULL_SAMPLE][PH_FIRST],
		    med[LP_FULL][PH_FIRST], med[LP_EMPTY][PH_FIRST], 0, false);
	if (o->sab_pairs)
		sab_report(L, &t, med[LP_EMPTY][PH_STEADY]);
	print_ratio(&t, "full / parse-only, first window", med[LP_FULL][PH_FIRST],
		    med[LP_PARSE][PH_FIRST], med[LP_EMPTY][PH_FIRST], 0, false);
	print_ratio(&t, "full / parse-only, after quiet", med[LP_FULL][PH_QUIET],
		    med[LP_PARSE][PH_QUIET], med[LP_EMPTY][PH_QUIET], 0, false);
	print_ratio(&t, "floor / parse-only, steady", med[LP_FLOOR][PH_STEADY],
		    med[LP_PARSE][PH_STEADY], med[LP_EMPTY][PH_STEADY], 0, false);
	print_ratio(&t, "full / floor, steady", med[LP_FULL][PH_STEADY],
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

	printf("  nitro (option, not the default: two-sided bound): the full program with Count-Min\n"
	       "  rows sampled, p = 1/%u (%.2f of %u rows a packet on average), each by %ux; HyperLogLogs,\n"
	       "  windows and reports as full's (bench_nitro.bpf.c, cms_sampled.h):\n",
	       1U << FS_CMS_NITRO_K, (double)L->r.p.cms_depth / (1U << FS_CMS_NITRO_K),
	       L->r.p.cms_depth, 1U << FS_CMS_NITRO_K);
	print_ratio(&t, "nitro / parse-only, steady", med[LP_NITRO][PH_STEADY],
		    med[LP_PARSE][PH_STEADY], med[LP_EMPTY][PH_STEADY], 0, false);
	print_ratio(&t, "nitro / full, steady", med[LP_NITRO][PH_STEADY],
		    med[LP_FULL][PH_STEADY], med[LP_EMPTY][PH_STEADY], 0, false);
	print_ratio(&t, "nitro / floor, steady", med[LP_NITRO][PH_STEADY],
		    med[LP_FLOOR][PH_STEADY], med[LP_EMPTY][PH_STEADY], 0, false);
	print_ratio(&t, "nitro / parse-only, first window", med[LP_NITRO][PH_FIRST],
		    med[LP_PARSE][PH_FIRST], med[LP_EMPTY][PH_FIRST], 0, false);
	print_ratio(&t, "nitro / parse-only, after quiet", med[LP_NITRO][PH_QUIET],
		    med[LP_PARSE][PH_QUIET], med[LP_EMPTY][PH_QUIET], 0, false);
	printf("  nitro1 (option, not the default: two-sided bound): one row a packet, uniform, by %ux\n"
	       "  (bench_nitro1.bpf.c; the same bound with q = d, cms_sampled.h, \"One row a packet\"):\n",
	       L->r.p.cms_depth);
	print_ratio(&t, "nitro1 / parse-only, steady", med[LP_NITRO1][PH_STEADY],
		    med[LP_PARSE][PH_STEADY], med[LP_EMPTY][PH_STEADY], 0, false);
	print_ratio(&t, "nitro1 / full, steady", med[LP_NITRO1][PH_STEADY],
		    med[LP_FULL][PH_STEADY], med[LP_EMPTY][PH_STEADY], 0, false);
	print_ratio(&t, "nitro1 / floor, steady", med[LP_NITRO1][PH_STEADY],
		    med[LP_FLOOR][PH_STEADY], med[LP_EMPTY][PH_STEADY], 0, false);
	print_ratio(&t, "nitro1 / parse-only, first window", med[LP_NITRO1][PH_FIRST],
		    med[LP_PARSE][PH_FIRST], med[LP_EMPTY][PH_FIRST], 0, false);
	print_ratio(&t, "nitro1 / parse-only, after quiet", med[LP_NITRO1][PH_QUIET],
		    med[LP_PARSE][PH_QUIET], med[LP_EMPTY][PH_QUIET], 0, false);
	{
		__u64 pk[L->nwin ? L->nwin : 1];

		memcpy(pk, L->win_packets, L->nwin * sizeof(*pk));
		qsort(pk, L->nwin, sizeof(*pk), cmp_u64);
		nitro_bound(L, L->nwin ? pk[L->nwin / 2] : 0, "nitro",
			    (double)(1U << FS_CMS_NITRO_K));
		nitro_bound(L, L->nwin ? pk[L->nwin / 2] : 0, "nitro1",
			    (double)L->r.p.cms_depth);
	}

	printf("  detection sketches (issue 20, flowsketchd --detect): the full program with both,\n"
	       "  with the prefix sketch alone (d %u, w 2^%u, t %u) and with the spread sketch alone\n"
	       "  (d %u, w 2^%u, s %u), windows and reports as full's:\n",
	       o->detect.prefix.depth, o->detect.prefix.log2_width, o->detect.prefix.skip_shift,
	       o->detect.spread.depth, o->detect.spread.log2_width, o->detect.spread.sample_shift);
	for (j = 0; j < PH_MAX; j++) {
		double m[LP_MAX];

		for (i = 0; i < LP_MAX; i++)
			m[i] = med[i][j];
		detect_ratios(&t, m, j == PH_STEADY ? "steady" :
				     j == PH_FIRST ? "first window" : "after quiet");
	}
	printf("\n");

	/* --only-list and --only-sample leave the bursty rounds out
	 * (live_round()): nothing to report, nor to index. */
	if (lb_bursty_on(&o->b) && !o->only_list && !o->only_sample)
		bursty_report(L, &t);
	else
		printf("Bursty: not measured (%s)\n\n",
		       o->only_list || o->only_sample ? "--only-list or --only-sample" :
		       o->b.cycles ? "it takes two --pair, as bench/live.sh gives" :
				     "--bursty-cycles 0");
	{
		double m[LP_MAX];

		for (i = 0; i < LP_MAX; i++)
			m[i] = med[i][PH_STEADY];
		detect_verdict(L, m, lb_bursty_on(&o->b) && !o->only_list && !o->only_sample);
	}

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
	/* The run's exit status says whether it measured, not whether the
	 * datapath met its targets (bench/run.sh). */
	printf("  issue 19's targets for full and naive above: %d of %d met, raw and net apart\n"
	       "  (a target not met does not fail the run)\n\n", t.met, t.all);
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
		"  --burst N           packets of the first and the after-quiet phase\n"
		"                      (default 50000)\n",
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
		"  --no-verdict-cache  the lists without the blocklist's verdict cache\n"
		"  --only-list         full+list alone (its on/off pairs; other rows empty)\n"
		"  --only-sample       empty, full and full+sample alone, with the sample's\n"
		"                      A/B alternation (other rows empty)\n"
		"  --verdict-stop N    the lists' verdict stops early, to break its cost\n"
		"                      down: 1 after the per-CPU work copy, 2 after the\n"
		"                      summary, 3 after the verdict cache, 4 after the\n"
		"                      probes' hashes (no filter line), 5 no counters for\n"
		"                      a pass (default 0: the whole verdict)\n"
		"  --near-keep 16|24   IPv4 near sources only beside entries longer than\n"
		"                      /24 (24: they share its /24) or not (16: its /16)\n"
		"  --fine4             the IPv4 summary prototype with /19 bits\n"
		"                      (blocklist.bpf.h, fs_bench_sum4)\n"
		"  --sample-ab-pairs N the keyed sample's A/B alternation on shared\n"
		"                      maps: cycles a round, 0 for none (default 100,\n"
		"                      max %u)\n"
		"  --sample-ab-seconds S  seconds of each half (default 0.02)\n"
		"  --sample-ab-own-maps   its loads with maps and windows of their own\n"
		"  --sample-ab-own-key    its loads with hash keys of their own\n",
		FS_DEFAULT_CMS_DEPTH, LIVE_MAX_AB, SAB_MAX_PAIRS);
	bd_usage(out);
	lb_usage_bursty(out);
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
	case 'o' + 256: o->only_list = true; return 0;
	case 'O' + 512: o->only_sample = true; return 0;
	case 's' + 256: return lb_parse_int(arg, "--verdict-stop", 0, 5, &o->stop);
	case 'f' + 256: o->fine4 = true; return 0;
	case 'P' + 256: return bd_parse(LB_TOOL, true, arg, &o->detect);
	case 'S' + 256: return bd_parse(LB_TOOL, false, arg, &o->detect);
	case 'p' + 512:
		return lb_parse_int(arg, "--sample-ab-pairs", 0, SAB_MAX_PAIRS, &o->sab_pairs);
	case 's' + 512: return lb_parse_num(arg, "--sample-ab-seconds", 0.01, 10, &o->sab_s);
	case 'm' + 512: o->sab_own_maps = true; return 0;
	case 'k' + 512: o->sab_own_key = true; return 0;
	case 'k' + 256:
		if (lb_parse_int(arg, "--near-keep", 0, 24, &bb_near_keep))
			return -1;
		if (bb_near_keep && bb_near_keep != 16 && bb_near_keep != 24) {
			fprintf(stderr, "fs-livebench: --near-keep takes 16 or 24.\n");
			return -1;
		}
		return 0;
	}
	return lb_parse_bursty(c, arg, &o->b);
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
		LB_BURSTY_LONGOPTS,
		{ "no-verdict-cache", no_argument, NULL, 'c' + 256 },
		{ "only-list", no_argument, NULL, 'o' + 256 },
		{ "only-sample", no_argument, NULL, 'O' + 512 },
		{ "verdict-stop", required_argument, NULL, 's' + 256 },
		{ "near-keep", required_argument, NULL, 'k' + 256 },
		{ "fine4", no_argument, NULL, 'f' + 256 },
		{ "detect-prefix", required_argument, NULL, 'P' + 256 },
		{ "detect-spread", required_argument, NULL, 'S' + 256 },
		{ "sample-ab-pairs", required_argument, NULL, 'p' + 512 },
		{ "sample-ab-seconds", required_argument, NULL, 's' + 512 },
		{ "sample-ab-own-maps", no_argument, NULL, 'm' + 512 },
		{ "sample-ab-own-key", no_argument, NULL, 'k' + 512 },
		{}
	};
	struct live_opts o = {
		.c = { .rounds = 3, .steady_s = 2, .flows = 100000, .zipf = 1.1,
		       .ipv6_share = 0.3, .seed = 1, .window_ms = 1000,
		       .hh_fraction = 0.001, .depth = FS_DEFAULT_CMS_DEPTH },
		.quiet_s = 2, .burst = 50000, .blocklist = 100000,
		.blocklist_small = 10000, .ab_pairs = 10, .ab_s = 0.25,
		.b = LB_BURSTY_DEFAULTS, .detect = BD_DEFAULTS,
		.sab_pairs = 100, .sab_s = 0.02,
	};
	static struct live L = { .bfd = { -1, -1, -1 } };
	bool bursty;
	int rc = 1;

	if (lb_parse_args(argc, argv, longopts, &o.c, live_opt, &o, usage) ||
	    lb_bursty_check(&o.b))
		return 2;
	bursty = lb_bursty_on(&o.b);
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
		else if ((!bursty || !bursty_start(&L)) &&
			 !lb_rounds(&L.r, LP_MAX + (bursty ? LP_BURSTY : 0), live_round, &L))
			rc = 0;
	}
	lb_stop(&L.r);
	if (!rc)
		live_report(&L, atomic_load(&L.r.g.sent));
	bursty_end(&L);
	lb_end(&L.r);
	free(L.near[0]);
	free(L.near[1]);
	bb_free(&L.list);
	bb_free(&L.small);
	free(L.win_reports);
	free(L.win_packets);
	return rc;
}
