// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_layouts.c - the narrow datapath layout counts exactly what the wide
 * one does, and what an independent reference says it must.
 *
 * The datapath (bpf/flowsketch.bpf.c) counts Count-Min in 4-byte narrow
 * cells (fs_cms_narrow: 9 bits of packets, 19 of bytes) that spill into
 * the 16-byte wide cells of fs_cms when a field would overflow, and
 * HyperLogLog in 6-bit registers packed five to a word (fs_hll_packed)
 * (cms.h, "Narrow cells"; hll.h, "Packed registers").  Count-Min is linear
 * and a register-wise max is exact, so once a slot is folded (every
 * datapath map, every CPU: fs_sketch_add_chunk()) its cells and registers
 * must be bit for bit those of the wide layout (bench/bpf/
 * flowsketch_wide.bpf.c, the same source with FS_CMS_WIDE, which counts
 * straight into fs_cms and fs_hll as every earlier release did), and the
 * heavy-hitter reports must be the same ones in the same order: the
 * narrow layout's report check is documented as exact.
 *
 * The traffic: a Zipf-like mix (s = 1.05) of 3000 IPv4 and IPv6, TCP and
 * UDP flows, bulk (1514 to 3500-byte frames: bytes fill first), small (60
 * to 128 bytes: packets fill first) or mixed, plus one late flow a window
 * that is silent until 40 % of it and then takes 10 % of its packets;
 * three windows, the closed slot folded and then zeroed between them as
 * the daemon's rotation does, so a spill must land in, and only in, its
 * window's slot.  Two kinds of test:
 *
 *   test_layouts_*  one million packets through both programs, whose
 *                   folded slots, fs_hot lines, fs_stats and report
 *                   sequences (flow, hash, bits, window, CPU) must be
 *                   equal, and equal to the reference below.  The head
 *                   flows' cells spill thousands of times in all, and the
 *                   test requires that they did (wide cells non-zero in
 *                   the narrow program, never with a report flag) and
 *                   that the narrow program never wrote a byte register
 *                   nor the wide one a narrow cell or packed word.
 *   test_oracle_*   100,000 packets through the narrow program alone,
 *                   against the reference.
 *
 * The reference is computed here from the traffic sent, from the
 * definitions alone: the flow, source and destination hashes of
 * ref_hash.h (a rewrite of hash.h's published formulas, not its code), the
 * columns from the formula in cms.h's header comment, written bit by bit
 * below, the registers of ref_hll.h; plain 64-bit cells updated by the
 * Count-Min rule (standard or conservative), and the report rule of cms.h
 * ("Heavy-hitter reporting": T = max(1, floor(phi N)) of the window's
 * running total, this packet included, against the estimate after the
 * packet, one report per set of d cells flagged for the metric) in
 * 128-bit arithmetic.  None of it calls update.h, cms.h's arithmetic or
 * the model, so the datapath and the wide layout cannot share a mistake
 * with it; only the fold (user/lib/sketch.c) stands between the maps and
 * the comparison.  With phi = 1 % or 5 % the late flow meets its threshold
 * only after its row-0 cell has spilled, so its report comes through the
 * narrow cell's maybe bit (cms.h, "Reports"), and the tests that say so
 * require that some report did.
 *
 * `make mutants` builds this file against a datapath whose spill loses its
 * count (spill_lost), keeps the narrow count after moving it (spill_twice)
 * or lets a field reach one past its capacity (spill_edge): every test
 * here must fail with each.
 */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cpu_pin.h"
#include "flowsketch/maps.h"
#include "flowsketch/packet_update.h"
#include "flowsketch/sketch_kind.h"
#include "sketch.h"
#include "flowsketch.skel.h"
#include "flowsketch_wide.skel.h"
#include "datapath_setup.h"
#include "pkt_build.h"
#include "ref_hash.h"
#include "ref_hll.h"
#include "rng.h"

#define XDP_PASS_RET 2
#define NWINDOWS 3
/* Reports are read this often: at most this many records wait in the
 * 256 KiB ring (3640 of 72 bytes), so none is ever dropped. */
#define CONSUME_EVERY 512
/* The largest frame XDP's test run takes whole (a page less headroom
 * and the shared info), rounded down. */
#define FRAME_MAX 3500
#define FRAME_MIN 60

/* --- traffic ----------------------------------------------------------- */

#define NFLOWS 3000
#define ZIPF_S 1.05
/* A late flow a window: silent until RAMP_AT % of the window, then
 * RAMP_SHARE % of its packets.  It meets a threshold of phi of the
 * running total when 0.1 (N - 0.4 W) = phi N: with phi = 5 % at 80 % of a
 * window, some 1300 packets of its own in a window of 33,333, with 1 % at
 * 44 % of one of 333,333, some 1500: either way after its row-0 cell has
 * spilled, so the report check must find it through that cell's maybe
 * bit (cms.h, "Reports"). */
#define RAMP_AT 40
#define RAMP_SHARE 10

enum profile { PROFILE_BULK, PROFILE_SMALL, PROFILE_MIXED };

struct flow {
	struct fs_flow_key key;	/* what the parser must make of its frames */
	__u16 sport, dport;	/* host order, for pkt_build.h */
	__u8 v6, tcp;
	enum profile profile;
};

struct traffic {
	struct flow flows[NFLOWS + NWINDOWS];	/* Zipf's, then late ones */
	double cdf[NFLOWS];	/* Zipf: P(flow <= i) */
	__u64 rng;
};

static __u64 mix(__u64 x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/*
 * Flow f: every third one bulk (frames of 1514 bytes and more, so its
 * cells' bytes fill first: about 340 frames a spill), small (60 to 128
 * bytes: packets fill first, 512 frames a spill) or mixed; two in five
 * IPv6, half TCP.  The head (flows 0 .. 3) has each kind.  Sources and
 * destinations come from smaller pools, so that the address sketches see
 * repeats; the source port alone makes every key distinct.
 */
static void traffic_init(struct traffic *t, __u64 seed)
{
	double sum = 0, acc = 0;
	unsigned int f;

	memset(t, 0, sizeof(*t));
	for (f = 0; f < NFLOWS + NWINDOWS; f++) {
		struct flow *fl = &t->flows[f];
		__u64 h = mix(seed ^ f);
		unsigned int si = (unsigned int)(h % 700),
			     di = (unsigned int)((h >> 20) % 150);
		static const __u16 dports[] = { 443, 80, 53, 8080, 123, 5201 };

		fl->profile = f < NFLOWS ? (enum profile)(f % 3) : PROFILE_MIXED;
		fl->v6 = f % 5 == 1 || f % 5 == 3;
		fl->tcp = f % 2 == 0;
		fl->sport = (__u16)(1024 + f);
		fl->dport = dports[(h >> 40) % FS_ARRAY_SIZE(dports)];
		fl->key.family = fl->v6 ? FS_FAMILY_IPV6 : FS_FAMILY_IPV4;
		fl->key.proto = fl->tcp ? 6 : 17;
		fl->key.sport = htons(fl->sport);
		fl->key.dport = htons(fl->dport);
		if (fl->v6) {
			static const __u8 s6[16] = { 0x20, 0x01, 0x0d, 0xb8 };
			static const __u8 d6[16] = { 0x20, 0x01, 0x0d, 0xb8,
						     0xff, 0xff };

			memcpy(fl->key.src, s6, 16);
			memcpy(fl->key.dst, d6, 16);
			fl->key.src[14] = (__u8)(si >> 8);
			fl->key.src[15] = (__u8)si;
			fl->key.dst[14] = (__u8)(di >> 8);
			fl->key.dst[15] = (__u8)di;
		} else {
			fl->key.src[0] = 10;
			fl->key.src[1] = (__u8)(si >> 8);
			fl->key.src[2] = (__u8)si;
			fl->key.src[3] = 1;
			fl->key.dst[0] = 198;
			fl->key.dst[1] = 18;
			fl->key.dst[2] = (__u8)(di >> 8);
			fl->key.dst[3] = (__u8)di;
		}
	}
	for (f = 0; f < NFLOWS; f++)
		sum += pow(f + 1, -ZIPF_S);
	for (f = 0; f < NFLOWS; f++) {
		acc += pow(f + 1, -ZIPF_S) / sum;
		t->cdf[f] = acc;
	}
	t->cdf[NFLOWS - 1] = 1.0;
	t->rng = seed | 1;
}

static unsigned int below(struct traffic *t, unsigned int n)
{
	return (unsigned int)((rng_next(&t->rng) >> 32) % n);
}

/* Packet i of the n of window w. */
static const struct flow *next_flow(struct traffic *t, unsigned int w,
				    unsigned int i, unsigned int n)
{
	double u = (double)(rng_next(&t->rng) >> 11) / 9007199254740992.0;
	unsigned int lo = 0, hi = NFLOWS - 1;

	if ((__u64)i * 100 >= (__u64)n * RAMP_AT && below(t, 100) < RAMP_SHARE)
		return &t->flows[NFLOWS + w];

	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (t->cdf[mid] > u)
			hi = mid;
		else
			lo = mid + 1;
	}
	return &t->flows[lo];
}

static size_t next_len(struct traffic *t, const struct flow *f)
{
	unsigned int r = below(t, 100);

	switch (f->profile) {
	case PROFILE_BULK:
		if (r < 60)
			return 1514;
		if (r < 85)
			return 1515 + below(t, FRAME_MAX - 1515 + 1);
		return FRAME_MIN + below(t, 41);
	case PROFILE_SMALL:
		if (r < 80)
			return FRAME_MIN + below(t, 69);
		return FRAME_MIN + below(t, 1514 - FRAME_MIN + 1);
	default:
		if (r < 10)
			return 1514;
		if (r < 12)
			return FRAME_MAX;
		return FRAME_MIN + below(t, 1514 - FRAME_MIN + 1);
	}
}

/*
 * Flow f's frame of len bytes (its headers alone when they are longer),
 * built in p.  pkt_init() without clearing the data: pkt_put() zeroes
 * every byte it appends, and a million 4 KiB memsets are not free.
 */
static void build_frame(struct pkt *p, const struct flow *f, size_t len)
{
	size_t hdr;

	memset(&p->len, 0, sizeof(*p) - offsetof(struct pkt, len));
	if (f->v6) {
		pkt_eth(p, PKT_ETH_P_IPV6);
		pkt_ipv6(p, f->key.proto, f->key.src, f->key.dst);
	} else {
		pkt_eth(p, PKT_ETH_P_IP);
		pkt_ipv4(p, f->key.proto, f->key.src, f->key.dst, 5, 0);
	}
	if (f->tcp)
		pkt_tcp(p, f->sport, f->dport, 5);
	else
		pkt_udp(p, f->sport, f->dport);
	hdr = p->len;
	if (len > hdr)
		pkt_payload(p, len - hdr);
	pkt_finish(p);
}

/* --- one loaded program and what it reported --------------------------- */

struct prog {
	const char *name;
	struct flowsketch *narrow;
	struct flowsketch_wide *wide;
	int prog_fd, ctl_fd, hot_fd, stats_fd;
	int map_fd[FS_NDPMAPS];
	struct ring_buffer *rb;
	struct fs_hh_report *reps;
	size_t nreps, cap;
};

static int on_report(void *ctx, void *data, size_t size)
{
	struct prog *g = ctx;

	if (size != sizeof(struct fs_hh_report))
		return -EINVAL;
	if (g->nreps == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 4096;
		struct fs_hh_report *r = realloc(g->reps, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		g->reps = r;
		g->cap = cap;
	}
	memcpy(&g->reps[g->nreps++], data, sizeof(struct fs_hh_report));
	return 0;
}

/* The maps both skeletons have, found by name (sketch_kind.h's table). */
static void prog_find(struct prog *g, struct bpf_object *obj,
		      struct bpf_program *xdp)
{
	int m;

	g->prog_fd = bpf_program__fd(xdp);
	for (m = 0; m < FS_NDPMAPS; m++) {
		struct bpf_map *map = bpf_object__find_map_by_name(obj, fs_dp_maps[m].map);

		assert_non_null(map);
		g->map_fd[m] = bpf_map__fd(map);
	}
	g->ctl_fd = bpf_object__find_map_fd_by_name(obj, "fs_ctl");
	g->hot_fd = bpf_object__find_map_fd_by_name(obj, "fs_hot");
	g->stats_fd = bpf_object__find_map_fd_by_name(obj, "fs_stats");
	assert_true(g->ctl_fd >= 0 && g->hot_fd >= 0 && g->stats_fd >= 0);
	g->rb = ring_buffer__new(bpf_object__find_map_fd_by_name(obj, "fs_reports"),
				 on_report, g, NULL);
	assert_non_null(g->rb);
}

static void prog_open(struct prog *g, const struct fs_sketch_params *p, int wide)
{
	int err;

	memset(g, 0, sizeof(*g));
	if (wide) {
		g->name = "wide";
		g->wide = flowsketch_wide__open();
		assert_non_null(g->wide);
		assert_int_equal(FS_DATAPATH_SETUP(g->wide, p, false), 0);
		err = flowsketch_wide__load(g->wide);
	} else {
		g->name = "narrow";
		g->narrow = flowsketch__open();
		assert_non_null(g->narrow);
		assert_int_equal(FS_DATAPATH_SETUP(g->narrow, p, false), 0);
		err = flowsketch__load(g->narrow);
	}
	if (err)
		fail_msg("the %s datapath does not load with depth %u log2w %u p %u%s: %d",
			 g->name, p->cms_depth, p->cms_log2_width, p->hll_p,
			 p->flags & FS_PARAM_F_CONSERVATIVE ? " conservative" : "",
			 err);
	if (wide)
		prog_find(g, g->wide->obj, g->wide->progs.fs_xdp);
	else
		prog_find(g, g->narrow->obj, g->narrow->progs.fs_xdp);
}

static void prog_close(struct prog *g)
{
	ring_buffer__free(g->rb);
	if (g->wide)
		flowsketch_wide__destroy(g->wide);
	if (g->narrow)
		flowsketch__destroy(g->narrow);
	free(g->reps);
}

static void prog_set_ctl(struct prog *g, __u64 seq, __u64 phi_q32)
{
	struct fs_ctl ctl = { .window_seq = seq, .hh_phi_q32 = phi_q32 };
	__u32 zero = 0;

	assert_int_equal(bpf_map_update_elem(g->ctl_fd, &zero, &ctl, BPF_ANY), 0);
}

static void prog_run(struct prog *g, const struct pkt *p)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = p->data,
		.data_size_in = (__u32)p->len,
		.repeat = 1,
	);

	if (bpf_prog_test_run_opts(g->prog_fd, &opts))
		fail_msg("%s: BPF_PROG_TEST_RUN failed on a %zu-byte frame: %d",
			 g->name, p->len, -errno);
	if (opts.retval != XDP_PASS_RET)
		fail_msg("%s: a %zu-byte frame got verdict %u", g->name, p->len,
			 opts.retval);
}

static void prog_consume(struct prog *g)
{
	int n = ring_buffer__consume(g->rb);

	if (n < 0)
		fail_msg("%s: reading the reports failed: %d", g->name, n);
}

/* Zero one slot of every datapath map on every CPU, as the daemon's
 * rotation does before the slot is current again. */
static void prog_zero_slot(struct prog *g, const struct fs_sketch_params *p,
			   __u32 slot, void *zeros)
{
	int m;

	for (m = 0; m < FS_NDPMAPS; m++) {
		__u32 k = (__u32)(fs_dp_first(m, p, slot) >> fs_dp_maps[m].chunk_shift);
		__u32 n = fs_dp_slot_chunks(m, p);

		for (; n--; k++)
			assert_int_equal(bpf_map_update_elem(g->map_fd[m], &k, zeros,
							     BPF_EXIST), 0);
	}
}

/* --- the fold, and what the raw maps say of the layout ------------------ */

/* One slot's raw elements, over CPUs, by map. */
struct raw {
	__u64 nonzero[FS_NDPMAPS];	/* elements not zero */
	__u64 wide_flagged;		/* fs_cms cells with a report flag */
	__u64 wide_packets, wide_bytes;	/* fs_cms counts, flags masked */
	__u64 spills;			/* at least this many spills made them */
	__u64 narrow_spilled;		/* fs_cms_narrow cells, spilled bit */
};

static void raw_count(struct raw *r, enum fs_dp_map m, const void *c,
		      __u64 b, __u64 e)
{
	__u64 i;

	for (i = b; i < e; i++) {
		switch (m) {
		case FS_DP_CMS: {
			const struct fs_cms_cell *x = (const struct fs_cms_cell *)c + i;
			__u64 sp, sb;

			r->nonzero[m] += x->packets || x->bytes;
			r->wide_flagged += !!((x->packets | x->bytes) & FS_CMS_REPORTED);
			r->wide_packets += x->packets & ~FS_CMS_REPORTED;
			r->wide_bytes += x->bytes & ~FS_CMS_REPORTED;
			/* A spill moves a full field and one packet's
			 * increment (conservative update raises a row by at
			 * most that too): 512 packets, 524287 + FRAME_MAX
			 * bytes at most. */
			sp = ((x->packets & ~FS_CMS_REPORTED) + 511) / 512;
			sb = ((x->bytes & ~FS_CMS_REPORTED) + 524286 + FRAME_MAX) /
			     (524287 + FRAME_MAX);
			r->spills += sp > sb ? sp : sb;
			break;
		}
		case FS_DP_CMS_NARROW: {
			__u32 v = ((const __u32 *)c)[i];

			r->nonzero[m] += v != 0;
			r->narrow_spilled += !!(v & FS_CMSN_SPILLED);
			break;
		}
		case FS_DP_HLL:
			r->nonzero[m] += ((const __u8 *)c)[i] != 0;
			break;
		default:
			r->nonzero[m] += ((const __u32 *)c)[i] != 0;
			break;
		}
	}
}

struct folder {
	int ncpus;
	void *buf;		/* one per-CPU lookup: ncpus chunks */
};

/*
 * Slot `slot` of g, every datapath map and every CPU, folded into s (which
 * is initialised here), and its raw elements counted into r.
 */
static void prog_fold(struct folder *fo, struct prog *g,
		      const struct fs_sketch_params *p, __u32 slot,
		      struct fs_sketch *s, struct raw *r)
{
	int m, cpu;

	memset(r, 0, sizeof(*r));
	assert_int_equal(fs_sketch_init(s, p), 0);
	for (m = 0; m < FS_NDPMAPS; m++) {
		__u32 shift = fs_dp_maps[m].chunk_shift, nchunks = fs_dp_chunks(m, p, FS_NSLOTS), c;
		__u64 first = fs_dp_first(m, p, slot), n = fs_dp_maps[m].per_slot(p);

		for (c = 0; c < nchunks; c++) {
			__u64 lo = (__u64)c << shift, hi = (__u64)(c + 1) << shift;
			__u64 b = lo > first ? lo : first, e = hi < first + n ? hi : first + n;

			if (bpf_map_lookup_elem(g->map_fd[m], &c, fo->buf))
				fail_msg("%s: %s chunk %u: lookup failed", g->name,
					 fs_dp_maps[m].map, c);
			for (cpu = 0; cpu < fo->ncpus; cpu++) {
				const char *chunk = (const char *)fo->buf +
						    (size_t)cpu * FS_CHUNK_BYTES;

				assert_int_equal(fs_sketch_add_chunk(s, m, slot, c, chunk), 0);
				if (b < e)
					raw_count(r, m, chunk, b - lo, e - lo);
			}
		}
	}
}

/* Window seq's totals from g's fs_hot, over CPUs; the lines themselves
 * in lines (ncpus of them). */
static struct fs_window_totals prog_totals(struct prog *g, int ncpus, __u64 seq,
					   struct fs_hot_line *lines)
{
	struct fs_window_totals t = { 0 };
	__u32 zero = 0, slot = (__u32)(seq % FS_NSLOTS);
	int c;

	assert_int_equal(bpf_map_lookup_elem(g->hot_fd, &zero, lines), 0);
	for (c = 0; c < ncpus; c++)
		if (lines[c].slot[slot].seq == seq) {
			t.packets += lines[c].slot[slot].packets;
			t.bytes += lines[c].slot[slot].bytes;
		}
	return t;
}

static void prog_stats(struct prog *g, int ncpus, __u64 stats[FS_STAT_MAX])
{
	__u64 *v = calloc((size_t)ncpus, sizeof(*v));
	__u32 i;
	int c;

	assert_non_null(v);
	for (i = 0; i < FS_STAT_MAX; i++) {
		assert_int_equal(bpf_map_lookup_elem(g->stats_fd, &i, v), 0);
		stats[i] = 0;
		for (c = 0; c < ncpus; c++)
			stats[i] += v[c];
	}
	free(v);
}

/* --- the independent reference ----------------------------------------- */

/*
 * One CPU's window, from the definitions alone: cells of 64 bits, one
 * report flag per metric and cell, byte registers, the running totals.
 */
struct ref {
	unsigned int depth, log2w, p;
	int conservative;
	__u64 phi_q32;
	struct fs_hash_key key;		/* ref_hash_key_derive() */
	__u64 *packets, *bytes;		/* [(row << log2w) | column] */
	__u8 *flags;			/* bit 0 packets, bit 1 bytes */
	__u8 *regs;			/* [(sketch << p) | index] */
	__u64 total_packets, total_bytes;
	struct fs_hh_report *reps;	/* key, hash, window_seq, report */
	size_t nreps, cap;
	/* Reports whose row-0 cell held more than a narrow cell can (511
	 * packets or 524287 bytes, cms.h's table): it had spilled, so the
	 * datapath's check had to read its wide part (through the maybe
	 * bit, with standard update). */
	size_t spilled_reports;
};

static void ref_init(struct ref *r, const struct fs_sketch_params *p, __u64 phi_q32)
{
	size_t cells = (size_t)p->cms_depth << p->cms_log2_width;

	memset(r, 0, sizeof(*r));
	r->depth = p->cms_depth;
	r->log2w = p->cms_log2_width;
	r->p = p->hll_p;
	r->conservative = !!(p->flags & FS_PARAM_F_CONSERVATIVE);
	r->phi_q32 = phi_q32;
	ref_hash_key_derive(&p->secret, &r->key);
	r->packets = calloc(cells, sizeof(__u64));
	r->bytes = calloc(cells, sizeof(__u64));
	r->flags = calloc(cells, 1);
	r->regs = calloc((size_t)3 << r->p, 1);
	assert_true(r->packets && r->bytes && r->flags && r->regs);
}

static void ref_free(struct ref *r)
{
	free(r->packets);
	free(r->bytes);
	free(r->flags);
	free(r->regs);
	free(r->reps);
}

static void ref_new_window(struct ref *r)
{
	size_t cells = (size_t)r->depth << r->log2w;

	memset(r->packets, 0, cells * sizeof(__u64));
	memset(r->bytes, 0, cells * sizeof(__u64));
	memset(r->flags, 0, cells);
	memset(r->regs, 0, (size_t)3 << r->p);
	r->total_packets = r->total_bytes = 0;
}

/*
 * Row row's column of flow hash h (cms.h's header comment): bits
 * [k log2w, (k + 1) log2w) of word row / k of a stream whose word 0 is
 * h and word j > 0 is fmix64(h + j * golden), k = floor(64 / log2w),
 * with golden = floor(2^64 / the golden ratio), odd.  Bit by bit.
 */
static __u32 ref_column(__u64 h, unsigned int log2w, unsigned int row)
{
	unsigned int k = 64 / log2w, word = row / k, field = row % k, b;
	__u64 bits = word ? ref_fmix64(h + (__u64)word * 0x9e3779b97f4a7c15ULL) : h;
	__u32 column = 0;

	for (b = 0; b < log2w; b++)
		if ((bits >> (field * log2w + b)) & 1)
			column |= 1U << b;
	return column;
}

/* T = max(1, floor(N * phi_q32 / 2^32)); 0 when reports are off. */
static __u64 ref_threshold(__u64 n, __u64 phi_q32)
{
	unsigned __int128 t = ((unsigned __int128)n * phi_q32) >> 32;

	if (!phi_q32)
		return 0;
	return t ? (__u64)t : 1;
}

/* One packet of len bytes of flow key k in window seq. */
static void ref_packet(struct ref *r, const struct fs_flow_key *k, __u64 len,
		       __u64 seq)
{
	struct ref_hashes h = ref_packet_hash(k, &r->key);
	__u64 min_p = ~0ULL, min_b = ~0ULL, est_p = ~0ULL, est_b = ~0ULL;
	__u64 tp, tb;
	size_t cell[FS_CMS_MAX_DEPTH];
	unsigned int row, report = 0;
	__u8 all = 3;

	for (row = 0; row < r->depth; row++) {
		cell[row] = ((size_t)row << r->log2w) | ref_column(h.flow, r->log2w, row);
		if (r->packets[cell[row]] < min_p)
			min_p = r->packets[cell[row]];
		if (r->bytes[cell[row]] < min_b)
			min_b = r->bytes[cell[row]];
	}
	for (row = 0; row < r->depth; row++) {
		__u64 *cp = &r->packets[cell[row]], *cb = &r->bytes[cell[row]];

		if (r->conservative) {
			/* Estan and Varghese: raise each row only to the
			 * minimum plus the increment. */
			if (*cp < min_p + 1)
				*cp = min_p + 1;
			if (*cb < min_b + len)
				*cb = min_b + len;
		} else {
			*cp += 1;
			*cb += len;
		}
		if (*cp < est_p)
			est_p = *cp;
		if (*cb < est_b)
			est_b = *cb;
		all &= r->flags[cell[row]];
	}

	r->total_packets += 1;
	r->total_bytes += len;
	tp = ref_threshold(r->total_packets, r->phi_q32);
	tb = ref_threshold(r->total_bytes, r->phi_q32);
	if (tp && est_p >= tp && !(all & 1))
		report |= FS_REPORT_PACKETS;
	if (tb && est_b >= tb && !(all & 2))
		report |= FS_REPORT_BYTES;
	if (report) {
		struct fs_hh_report *rep;

		for (row = 0; row < r->depth; row++)
			r->flags[cell[row]] |= (__u8)report;
		r->spilled_reports += r->packets[cell[0]] > 511 ||
				      r->bytes[cell[0]] > 524287;
		if (r->nreps == r->cap) {
			r->cap = r->cap ? 2 * r->cap : 4096;
			r->reps = realloc(r->reps, r->cap * sizeof(*r->reps));
			assert_non_null(r->reps);
		}
		rep = &r->reps[r->nreps++];
		memset(rep, 0, sizeof(*rep));
		rep->key = *k;
		rep->hash = h.flow;
		rep->window_seq = seq;
		rep->report = report;
	}

	ref_hll_insert(r->regs + ((size_t)0 << r->p), r->p, h.flow);
	ref_hll_insert(r->regs + ((size_t)1 << r->p), r->p, h.src);
	ref_hll_insert(r->regs + ((size_t)2 << r->p), r->p, h.dst);
}

/* --- comparisons -------------------------------------------------------- */

/* Count-Min cells and registers of a and b (a narrow fold, a wide fold or
 * the reference's; cell i's packets at ap[i * as], its bytes at
 * ab[i * as], the same for b with bs), with the first difference and how
 * many. */
static void assert_same_cells(const char *what, unsigned int window,
			      const struct fs_sketch_params *p,
			      const __u64 *ap, const __u64 *ab, const __u8 *ar,
			      size_t as, const __u64 *bp, const __u64 *bb,
			      const __u8 *br, size_t bs)
{
	size_t cells = (size_t)p->cms_depth << p->cms_log2_width, i, first = 0;
	size_t regs = (size_t)3 << p->hll_p, ndiff = 0;

	for (i = 0; i < cells; i++)
		if (ap[i * as] != bp[i * bs] || ab[i * as] != bb[i * bs])
			if (!ndiff++)
				first = i;
	if (ndiff)
		fail_msg("window %u: %s: %zu Count-Min cells differ, first row %zu "
			 "column %zu: %llu packets %llu bytes against %llu %llu",
			 window, what, ndiff, first >> p->cms_log2_width,
			 first & (((size_t)1 << p->cms_log2_width) - 1),
			 (unsigned long long)ap[first * as],
			 (unsigned long long)ab[first * as],
			 (unsigned long long)bp[first * bs],
			 (unsigned long long)bb[first * bs]);
	for (i = 0; i < regs; i++)
		if (ar[i] != br[i])
			if (!ndiff++)
				first = i;
	if (ndiff)
		fail_msg("window %u: %s: %zu HyperLogLog registers differ, first "
			 "sketch %zu index %zu: %u against %u", window, what, ndiff,
			 first >> p->hll_p, first & (((size_t)1 << p->hll_p) - 1),
			 ar[first], br[first]);
}

/* The report sequences of a and b: same flows, bits, windows and order. */
static void assert_same_reports(const char *what, const struct fs_hh_report *a,
				size_t na, const struct fs_hh_report *b, size_t nb,
				int compare_cpu)
{
	size_t i, n = na < nb ? na : nb;

	for (i = 0; i < n; i++) {
		if (!memcmp(&a[i].key, &b[i].key, sizeof(a[i].key)) &&
		    a[i].hash == b[i].hash && a[i].window_seq == b[i].window_seq &&
		    a[i].report == b[i].report &&
		    (!compare_cpu || a[i].cpu == b[i].cpu))
			continue;
		fail_msg("%s: report %zu of %zu/%zu differs: window %llu bits %u "
			 "hash %016llx against window %llu bits %u hash %016llx",
			 what, i, na, nb, (unsigned long long)a[i].window_seq,
			 a[i].report, (unsigned long long)a[i].hash,
			 (unsigned long long)b[i].window_seq, b[i].report,
			 (unsigned long long)b[i].hash);
	}
	if (na != nb)
		fail_msg("%s: %zu reports against %zu (the first %zu agree)", what,
			 na, nb, n);
}

/* --- the run ------------------------------------------------------------ */

struct run_cfg {
	unsigned int depth, log2w, p;
	int conservative;
	double phi;		/* the report fraction */
	unsigned int npackets;
	int wide;		/* the wide program beside, compared */
	int ref;		/* the independent reference, compared */
	/* Some report must come through a spilled row-0 cell (phi large
	 * enough for late flows to meet it only after spilling). */
	int spilled_reports;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void run_case(const struct run_cfg *cfg)
{
	struct fs_hash_secret secret = { 0x243f6a8885a308d3ULL, 0x13198a2e03707344ULL };
	struct fs_sketch_params p;
	struct prog narrow, wide;
	struct ref ref;
	struct folder fo;
	static struct traffic t;
	static struct pkt frame;
	struct fs_hot_line *hot_n, *hot_w;
	__u64 spilled_cells = 0, spills = 0, wide_packets = 0, wide_bytes = 0;
	__u64 packets_sent = 0;
	__u64 stats_n[FS_STAT_MAX], stats_w[FS_STAT_MAX];
	unsigned int w, i, rep_p = 0, rep_b = 0;
	double t0 = now_s();
	/* fs_ctl.hh_phi_q32 = floor(phi * 2^32) */
	__u64 phi_q32 = (__u64)(cfg->phi * 4294967296.0);
	size_t r;

	fs_params_init(&p, cfg->depth, cfg->log2w, cfg->p,
		       cfg->conservative ? FS_PARAM_F_CONSERVATIVE : 0, &secret);
	assert_int_equal(fs_params_check(&p), 0);
	assert_true(pin_to_current_cpu() >= 0);
	fo.ncpus = libbpf_num_possible_cpus();
	assert_true(fo.ncpus > 0);
	fo.buf = calloc((size_t)fo.ncpus, FS_CHUNK_BYTES);
	hot_n = calloc((size_t)fo.ncpus, sizeof(*hot_n));
	hot_w = calloc((size_t)fo.ncpus, sizeof(*hot_w));
	assert_true(fo.buf && hot_n && hot_w);

	prog_open(&narrow, &p, 0);
	if (cfg->wide)
		prog_open(&wide, &p, 1);
	if (cfg->ref)
		ref_init(&ref, &p, phi_q32);
	traffic_init(&t, 0x6c61796f75747321ULL ^ cfg->log2w ^ ((__u64)cfg->depth << 8) ^
			 ((__u64)cfg->conservative << 16));

	for (w = 0; w < NWINDOWS; w++) {
		unsigned int n = cfg->npackets / NWINDOWS +
				 (w < cfg->npackets % NWINDOWS);
		__u64 win_packets = 0, win_bytes = 0;
		__u32 slot = w % FS_NSLOTS;
		struct fs_window_totals tn;
		struct fs_sketch sn, sw;
		struct raw rn, rw;

		prog_set_ctl(&narrow, w, phi_q32);
		if (cfg->wide)
			prog_set_ctl(&wide, w, phi_q32);
		if (cfg->ref)
			ref_new_window(&ref);
		for (i = 0; i < n; i++) {
			const struct flow *f = next_flow(&t, w, i, n);

			build_frame(&frame, f, next_len(&t, f));
			prog_run(&narrow, &frame);
			if (cfg->wide)
				prog_run(&wide, &frame);
			if (cfg->ref)
				ref_packet(&ref, &f->key, frame.len, w);
			win_packets++;
			win_bytes += frame.len;
			if (i % CONSUME_EVERY == CONSUME_EVERY - 1) {
				prog_consume(&narrow);
				if (cfg->wide)
					prog_consume(&wide);
			}
		}
		prog_consume(&narrow);
		if (cfg->wide)
			prog_consume(&wide);
		packets_sent += win_packets;

		/* Close the window as the daemon does: the next one opens,
		 * the closed slot is read, then zeroed for the one after. */
		prog_set_ctl(&narrow, w + 1, phi_q32);
		if (cfg->wide)
			prog_set_ctl(&wide, w + 1, phi_q32);

		prog_fold(&fo, &narrow, &p, slot, &sn, &rn);
		if (cfg->wide) {
			prog_fold(&fo, &wide, &p, slot, &sw, &rw);
			assert_same_cells("narrow fold against wide fold", w, &p,
					  &sn.cms->packets, &sn.cms->bytes, sn.hll, 2,
					  &sw.cms->packets, &sw.cms->bytes, sw.hll, 2);
			/* Byte for byte, whatever the comparison above reads. */
			for (int k = 0; k < FS_NKINDS; k++)
				assert_memory_equal(sn.part[k], sw.part[k],
						    fs_kind_slot_bytes(k, &p));
			/* The wide program never touches the narrow maps. */
			assert_int_equal(rw.nonzero[FS_DP_CMS_NARROW], 0);
			assert_int_equal(rw.nonzero[FS_DP_HLL_PACKED], 0);
			assert_true(rw.nonzero[FS_DP_HLL] > 0);
			fs_sketch_free(&sw);
		}
		if (cfg->ref)
			assert_same_cells("narrow fold against the reference", w, &p,
					  &sn.cms->packets, &sn.cms->bytes, sn.hll, 2,
					  ref.packets, ref.bytes, ref.regs, 1);
		fs_sketch_free(&sn);

		/* The narrow program counted in its own maps, spilled into
		 * wide cells without report flags, and never wrote a byte
		 * register. */
		if (rn.nonzero[FS_DP_CMS] == 0 || rn.narrow_spilled == 0)
			fail_msg("window %u: no spill seen (%llu wide cells, %llu "
				 "spilled narrow cells)", w,
				 (unsigned long long)rn.nonzero[FS_DP_CMS],
				 (unsigned long long)rn.narrow_spilled);
		assert_int_equal(rn.wide_flagged, 0);
		assert_int_equal(rn.nonzero[FS_DP_HLL], 0);
		assert_true(rn.nonzero[FS_DP_HLL_PACKED] > 0);
		assert_true(rn.nonzero[FS_DP_CMS_NARROW] > 0);
		spilled_cells += rn.narrow_spilled;
		spills += rn.spills;
		wide_packets += rn.wide_packets;
		wide_bytes += rn.wide_bytes;

		/* The window's totals: what was sent, in both programs, and
		 * fs_hot's lines alike. */
		tn = prog_totals(&narrow, fo.ncpus, w, hot_n);
		assert_int_equal(tn.packets, win_packets);
		assert_int_equal(tn.bytes, win_bytes);
		if (cfg->wide) {
			struct fs_window_totals tw = prog_totals(&wide, fo.ncpus, w, hot_w);

			assert_int_equal(tw.packets, win_packets);
			assert_int_equal(tw.bytes, win_bytes);
			assert_memory_equal(hot_n, hot_w, (size_t)fo.ncpus * sizeof(*hot_n));
		}

		memset(fo.buf, 0, (size_t)fo.ncpus * FS_CHUNK_BYTES);
		prog_zero_slot(&narrow, &p, slot, fo.buf);
		if (cfg->wide)
			prog_zero_slot(&wide, &p, slot, fo.buf);
	}

	/* Reports: the narrow layout decides exactly as the wide one and as
	 * the rule says; every record was read, none dropped. */
	if (cfg->wide)
		assert_same_reports("narrow reports against wide", narrow.reps,
				    narrow.nreps, wide.reps, wide.nreps, 1);
	if (cfg->ref)
		assert_same_reports("narrow reports against the reference",
				    narrow.reps, narrow.nreps, ref.reps, ref.nreps, 0);
	prog_stats(&narrow, fo.ncpus, stats_n);
	assert_int_equal(stats_n[FS_STAT_REPORTS_DROPPED], 0);
	assert_int_equal(stats_n[FS_STAT_UPDATE_ERRORS], 0);
	assert_int_equal(stats_n[FS_STAT_REPORTS], narrow.nreps);
	if (cfg->wide) {
		prog_stats(&wide, fo.ncpus, stats_w);
		for (i = 0; i < FS_STAT_MAX; i++)
			if (stats_n[i] != stats_w[i])
				fail_msg("fs_stats counter %u: narrow %llu, wide %llu",
					 i, (unsigned long long)stats_n[i],
					 (unsigned long long)stats_w[i]);
	}
	if (cfg->ref && cfg->spilled_reports && !ref.spilled_reports)
		fail_msg("no report came through a spilled row-0 cell: the "
			 "traffic no longer tests the report check's maybe bit");
	for (r = 0; r < narrow.nreps; r++) {
		rep_p += !!(narrow.reps[r].report & FS_REPORT_PACKETS);
		rep_b += !!(narrow.reps[r].report & FS_REPORT_BYTES);
	}
	/* Both metrics reported, or the comparison tested little. */
	assert_true(rep_p > 0 && rep_b > 0);

	print_message("d %u log2w %u p %u%s phi %g: %llu packets, %u windows, "
		      "%.1f s\n  spills: %llu cells spilled, at least %llu spills, "
		      "%llu packets %llu bytes through wide cells\n"
		      "  reports: %zu, equal to %s (%u of packets, %u of bytes, "
		      "%zu through a spilled row 0)\n",
		      cfg->depth, cfg->log2w, cfg->p,
		      cfg->conservative ? " conservative" : "", cfg->phi,
		      (unsigned long long)packets_sent, NWINDOWS, now_s() - t0,
		      (unsigned long long)spilled_cells, (unsigned long long)spills,
		      (unsigned long long)wide_packets,
		      (unsigned long long)wide_bytes, narrow.nreps,
		      !cfg->ref ? "the wide layout's" : !cfg->wide ? "the reference's" :
		      "the wide layout's and the reference's", rep_p, rep_b,
		      cfg->ref ? ref.spilled_reports : 0);

	if (cfg->ref)
		ref_free(&ref);
	if (cfg->wide)
		prog_close(&wide);
	prog_close(&narrow);
	free(hot_n);
	free(hot_w);
	free(fo.buf);
}

/* --- the tests ---------------------------------------------------------- */

#define LAYOUT_PACKETS 1000000
#define ORACLE_PACKETS 100000

static void test_layouts_default(void **state)
{
	const struct run_cfg cfg = { .depth = 5, .log2w = 12, .p = 14,
				     .phi = 0.001, .npackets = LAYOUT_PACKETS,
				     .wide = 1, .ref = 1 };

	run_case(&cfg);
}

static void test_layouts_conservative(void **state)
{
	const struct run_cfg cfg = { .depth = 5, .log2w = 12, .p = 14,
				     .conservative = 1, .phi = 0.01,
				     .npackets = LAYOUT_PACKETS, .wide = 1, .ref = 1,
				     .spilled_reports = 1 };

	run_case(&cfg);
}

/* 64 columns for 3000 flows: every cell is shared and spills. */
static void test_layouts_narrow_width(void **state)
{
	const struct run_cfg cfg = { .depth = 3, .log2w = 6, .p = 10,
				     .phi = 0.01, .npackets = LAYOUT_PACKETS,
				     .wide = 1, .ref = 1, .spilled_reports = 1 };

	run_case(&cfg);
}

static void test_oracle_default(void **state)
{
	const struct run_cfg cfg = { .depth = 5, .log2w = 12, .p = 14,
				     .phi = 0.05, .npackets = ORACLE_PACKETS,
				     .ref = 1, .spilled_reports = 1 };

	run_case(&cfg);
}

/* log2w 13: four rows to a 64-bit word, so row 4 comes from the mixed
 * second word of the column stream. */
static void test_oracle_conservative(void **state)
{
	const struct run_cfg cfg = { .depth = 5, .log2w = 13, .p = 12,
				     .conservative = 1, .phi = 0.05,
				     .npackets = ORACLE_PACKETS, .ref = 1,
				     .spilled_reports = 1 };

	run_case(&cfg);
}

static void test_oracle_narrow_width(void **state)
{
	const struct run_cfg cfg = { .depth = 3, .log2w = 6, .p = 10,
				     .phi = 0.001, .npackets = ORACLE_PACKETS,
				     .ref = 1 };

	run_case(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_oracle_default),
		cmocka_unit_test(test_oracle_conservative),
		cmocka_unit_test(test_oracle_narrow_width),
		cmocka_unit_test(test_layouts_default),
		cmocka_unit_test(test_layouts_conservative),
		cmocka_unit_test(test_layouts_narrow_width),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
