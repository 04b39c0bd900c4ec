/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * sample.h - a keyed sample of flows counted exactly, against which the
 * daemon measures the sketches' error live (issue 22): which flows are in
 * it, the bounded per-CPU buckets that count them, their merge, and the
 * comparison's arithmetic.
 *
 * Which flows.  A flow is in the sample when its sample value
 *     s = fs_mix64(h_flow ^ FS_SAMPLE_C)
 * is below its bucket's limit L_b, which starts at 2^(64 - k) for the rate
 * 1 / R, R = 2^k, k = 0 .. 20 (2^64 - 1 for k = 0), default k = 10 (1 in
 * 1,024).  h_flow is the keyed flow hash every sketch is fed from
 * (fs_packet_hashes.flow, hash.h; the datapath has it already, update.h
 * puts it in fs_packet_update.hash), so the decision costs one fs_mix64
 * and a compare a packet.
 *   - A function of the flow, not of the packet: every packet of a flow
 *     gets the same s, so a flow is in whole (all its packets and bytes
 *     counted) or out whole, and its exact count is comparable with its
 *     Count-Min estimate, which is of all its packets.  Sampling packets
 *     would give a scaled count with an error of its own instead of a
 *     ground truth, and could not check "never below".
 *   - Keyed: h_flow depends on the 128-bit secret through a strongly
 *     universal hash; without the secret a flow's s is uniform, so nobody
 *     can pick flows that are in (to keep an attack's flows out of the
 *     check) or out (to make the check look at a chosen few).  hash.h's
 *     "What leaves the host" applies: s is h_flow through a public
 *     bijection (fs_mix64 and FS_SAMPLE_C are public and invertible), so
 *     s is a raw hash, kept in window files, never exported whole
 *     ("Exports" below): an exported sampled flow says only floor(log2
 *     s), about k + 2 bits of fs_mix64's output, the kind of leak hash.h
 *     discusses for HyperLogLog ranks.
 *   - Remixed, not a field of h_flow: no bit of h_flow is free.  Count-Min
 *     takes bits 0 .. d log2 w - 1 of it (60 of 64 at the defaults, all 64
 *     at d log2 w = 64; cms.h), the HyperLogLog of flows its low p bits
 *     for the index and the bits above for the rank (hll.h), and prefix.h
 *     draws from fs_mix64(h_flow + n C) with n the packet's number (n = 0
 *     gives fs_mix64(h_flow) itself, which is why s is not that).  A
 *     sample on, say, h_flow's top 10 bits would keep only flows whose
 *     Count-Min row 4 column has its top 6 bits zero (64 of 4,096
 *     columns): the sampled flows would collide with each other 64 times
 *     as often as flows do, and their overcount would not be the sketch's.
 *     fs_mix64 is a bijection, so for two distinct flows the pair (s1, s2)
 *     is uniform like (h1, h2) is (hash.h): membership is 1 / R a flow and
 *     pairwise independent, and its bits are unrelated to the columns and
 *     registers the flow takes as far as a mixing function's output can be
 *     (tested: test_sample's columns and registers of sampled flows are
 *     uniform).  FS_SAMPLE_C (sqrt(2)'s fraction, as SHA-512's first
 *     initial word) differs from the golden ratio that cms.h, prefix.h and
 *     spread.h add.
 *
 * The table.  Per CPU and window slot, B = 2^b buckets (b = 1 .. 13,
 * default 7) of 8 cache lines, 512 bytes: line 0 the bucket's head (its
 * limit and its count of full events), lines 1 .. 7 its FS_SAMPLE_WAYS = 7
 * entries (struct fs_sample_entry: flow key, s, exact packets and bytes).
 * A flow's bucket is s mod B (s's low b bits; the limit decides on the
 * whole of s, in practice its top bits), and its entry any of the 7: the
 * probe is those 7, a constant bound for the verifier, in one bucket of
 * one 32 KiB chunk (64 buckets a chunk), so an update looks up one map
 * element.  The bucket is the element (sketch_kind.h): it carries its own
 * limit, so a fold, a merge, a window file or an export handles buckets
 * one by one, like Count-Min cells, and a zeroed bucket is a fresh one
 * (cut 0: the rate's own limit 2^(64 - k)).  An entry is live when its
 * family is not 0 and its s is below its bucket's limit L_b; any other is
 * free.  A packet of a sampled flow adds to its live entry, or claims a
 * free one.
 *
 * Full bucket: the sample shrinks by the hash, not by arrival.  When the
 * 7 entries are live and none is the flow's, the bucket's limit drops to
 * the highest s of those 8 flows (the 7 and the new one), and that flow
 * goes: if it was an entry, the new flow takes its place; if it was the
 * new flow, it is dropped.  The head's `full` counts these.  Hence, at any
 * time, for every bucket b,
 *     bucket b = { flows of bucket b seen in the window with s < L_b },
 * each with its exact packets and bytes: a flow with s < L_b was below
 * every earlier limit of its bucket (L_b only falls), so none of its
 * packets was skipped, and its entry was never free (live entries are
 * never overwritten).  Whether a flow is in depends on its s and its
 * bucket's limit alone: never on its size nor on when it came (a bucket
 * that dropped the newcomer and kept its limit would keep the early
 * flows, the long-lived and heavy ones).
 *
 * Unbiased when full: Horvitz-Thompson with adaptive thresholds.  A
 * bucket's limit is set by other flows' values ("substitutable", Ting,
 * "Adaptive threshold sampling", SIGMOD 2022): take a flow i in the final
 * bucket b, and let its s vary over [0, L_b) with its low b bits (its
 * bucket) fixed; those values are a share L_b / 2^64 of all of that
 * bucket, to within 2^b / L_b (2^-30 at b = 9 until R_b reaches 2^25).
 * Each decision involving s_i (in? its entry free? the highest of a full
 * bucket?) comes out the same, since s_i stays below every limit on the
 * way, so the whole run, L_b included, is the same: given everything but
 * s_i, flow i is in exactly when s_i < L_b, probability q_b = L_b / 2^64
 * (s uniform).  So each flow of the window is in with a probability its
 * bucket's head tells, and any sum over the sample weighted by
 * R_b = 1 / q_b = 2^64 / L_b is unbiased for the sum over all the window's
 * flows.  Its distinct flows:
 *     n_hat = sum_b X_b R_b,     Var(n_hat) = sum_b n_b (R_b - 1),
 * X_b the live entries and n_b the window's flows of bucket b (a thinning
 * of n_b flows at rate 1 / R_b: R_b^2 n_b (1 / R_b)(1 - 1 / R_b); exact at
 * fixed limits, membership being pairwise independent; with a fallen limit
 * up to the dependence a full bucket introduces).  Buckets are drawn by
 * the hash, so E n_b = n / B and
 *     Var(n_hat) ~= n (R_mean - 1),   R_mean = (1 / B) sum_b R_b,
 * slightly more when crowded buckets (larger n_b) are the cut ones (larger
 * R_b); unbiased from the sample alone: sum_b X_b R_b (R_b - 1).  With no
 * full bucket every R_b = R and n_hat = X R, Var = n (R - 1).  A share
 * over the sample (how many flows are above eps N) is a ratio of two such
 * sums; unweighted it is nearly the same, since which bucket a flow takes
 * has nothing to do with its size.
 *
 * Sizing.  X sampled flows of a window on one CPU fill B buckets about as
 * Poisson(X / B) each, and a window expects
 *     B P(Poisson(X / B) > 7)
 * full events; each cuts one bucket's limit to the largest of 8 values
 * below it, 8/9 of it on average.  At the default B = 128: X = 128
 * expects 0.001 of them, X = 256 0.14, X = 384 1.5, X = 512 6.5, X =
 * 1,024 70 (in as many buckets, which then hold 7 flows each at a lower
 * rate); at B = 512, X = 1,024 expects 0.56 and X = 2,048 26.  So at the
 * default R = 1,024 a CPU's window of up to about 250,000 flows keeps the
 * nominal rate everywhere, and busier ones keep at most 7 B = 896 flows
 * (3,584 at B = 512): enough for the comparisons (the z-score's sample
 * term has relative error about sqrt(R / n) = 1 / sqrt(X), 3.5 % at X =
 * 800), and a window's sample, the CPUs' merged, is cut the same way.
 * Memory: B x 512 bytes a CPU and window slot, 64 KiB at the default,
 * touched only by the sampled flows' packets (1 / R of all on average,
 * the whole of a sampled elephant's).  An update reads the bucket's head
 * and its entries up to the flow's (a flow already in), or the bucket's 8
 * lines for a flow's first packet in the window.
 *
 * Merge (per-CPU copies at rotation, windows of a span, hosts of one
 * secret), bucket by bucket, of equal geometry: L_b = the lower of the
 * two, then every live entry of the source added as an update of its
 * counts would be (a full bucket in the merge is cut as above).  A flow
 * below the merged limit was below both limits of its bucket, so every one
 * of its packets was counted on each, and its counts add to its exact
 * total.  Without full buckets this is the bucket of both streams fed into
 * one, entry for entry (positions aside); with them, it is still { flows
 * of both with s < L_b } with exact counts, which is all the estimates
 * above need.  A merge of many copies keeps at most 7 flows a bucket, so
 * its buckets are cut where the copies together had more.
 *
 * Exports (fs_sample_bucket_export() below, for the export answer).  A
 * bucket holds s, h_flow through a public bijection: with some ten
 * (key, s) pairs of its own flows an attacker solves the IPv4 flow hash
 * (hash.h, "What leaves the host"), so an exported bucket must not carry
 * s.  A merge of copies needs only, for each entry, whether s is below
 * the other copy's limit.  So an export (fs_sample_bucket_export()) first
 * cuts each bucket's limit to a power of two, L'_b = 2^floor(log2 L_b),
 * dropping the entries from L'_b up (a cut by a function of the limit,
 * still substitutable: a flow below L'_b does not move it), and then
 * keeps of each entry's s its leading bit only, s' = 2^floor(log2 s)
 * (0 for s = 0): for a power of two L, s < L exactly when s' < L, so
 * every comparison a merge makes with a limit comes out as with s.  A
 * full bucket in a merge of exported copies cuts at the highest s' of
 * its 8 flows, a power of two: every flow of that level goes, not only
 * one, and the limit stays a power of two (at least halved).  Given the
 * other flows a flow is in exactly when s' < L_b, i.e. s < L_b, so the
 * estimates above hold for merges of exports as for the host's own.
 * What s' tells is floor(log2 s), i.e. lz(s): at least k for a sampled
 * flow, the excess geometric, about 2 bits a flow, what a HyperLogLog
 * rank shows.  The buckets leave in an order of their own (export_perm.h:
 * a secret permutation of the slot's buckets), as s's low bits would
 * otherwise say which bucket each flow took.  At k = 0, L = 2^64 - 1
 * becomes 2^63: an export of a sample of every flow halves it.
 *
 * The comparison (user space, at the end): Count-Min's estimate of each
 * sampled flow against its exact count (undercounts, which Count-Min can
 * never have; the largest overcount over eps N; the share of flows over
 * eps N, which should stay near or below delta), and the HyperLogLog of
 * flows against n_hat, with both standard errors (below).
 */
#ifndef FLOWSKETCH_SAMPLE_H
#define FLOWSKETCH_SAMPLE_H

#include "compat.h"
#include "flow_key.h"
#include "hash.h"
#include "chunk.h"

#define FS_SAMPLE_C 0x6a09e667f3bcc908ULL
#define FS_SAMPLE_WAYS 7		/* entries a bucket, after its head */
#define FS_SAMPLE_MAX_SHIFT 20		/* R up to 2^20 */
#define FS_SAMPLE_MIN_LOG2_BUCKETS 1	/* params.h's 0 is "no sample" */
#define FS_SAMPLE_MAX_LOG2_BUCKETS 13	/* 4 MiB a CPU and window slot */
#define FS_DEFAULT_SAMPLE_SHIFT 10
#define FS_DEFAULT_SAMPLE_LOG2_BUCKETS 7	/* 64 KiB a CPU and window slot */
#define FS_SAMPLE_CHUNK_SHIFT 6		/* buckets a chunk: 64 */
#define FS_SAMPLE_CHUNK_BUCKETS (1U << FS_SAMPLE_CHUNK_SHIFT)
#define FS_SAMPLE_CHUNK_MASK (FS_SAMPLE_CHUNK_BUCKETS - 1)

/* What fs_sample_add() did. */
enum fs_sample_result {
	FS_SAMPLE_OUT = 0,	/* not in the sample: nothing written */
	FS_SAMPLE_COUNTED,	/* added to the flow's entry */
	FS_SAMPLE_INSERTED,	/* the flow's first packet in: a free entry */
	FS_SAMPLE_EVICTED,	/* full bucket: limit cut, the highest left */
	FS_SAMPLE_DROPPED,	/* full bucket: limit cut to this flow's s */
};

/*
 * One entry, one line.  family 0: never used (flow keys have 4 or 6).
 * s: the flow's sample value; packets, bytes: what its packets added.
 */
struct fs_sample_entry {
	struct fs_flow_key key;
	__u64 s;
	__u64 packets;
	__u64 bytes;
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct fs_sample_entry) == 64, "an entry is a line");

/*
 * A bucket's head, one line.  cut: the bucket's limit once a full event
 * lowered it, 0 before (zeroed = fresh); full: the full events it met,
 * each one cut.
 */
struct fs_sample_head {
	__u64 cut;
	__u64 full;
	__u8 pad[48];
};

_Static_assert(sizeof(struct fs_sample_head) == 64, "a head is a line");

/* The element: a head and its entries, 512 bytes. */
struct fs_sample_bucket {
	struct fs_sample_head head;
	struct fs_sample_entry e[FS_SAMPLE_WAYS];
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct fs_sample_bucket) == 512, "a bucket is 8 lines");

/* One per-CPU map element: 64 buckets, 32 KiB. */
struct fs_sample_chunk {
	struct fs_sample_bucket b[FS_SAMPLE_CHUNK_BUCKETS];
};

_Static_assert(sizeof(struct fs_sample_chunk) == FS_CHUNK_BYTES, "chunk.h");

/* The rate and the geometry, recorded with every copy of the sample. */
struct fs_sample_params {
	__u32 shift;		/* k: R = 2^k */
	__u32 log2_buckets;	/* b: 2^b buckets */
};

FS_INLINE void fs_sample_params_init(struct fs_sample_params *p, __u32 shift,
				     __u32 log2_buckets)
{
	p->shift = shift;
	p->log2_buckets = log2_buckets;
}

/* 0, or -EINVAL for parameters outside the ranges above. */
FS_INLINE int fs_sample_params_check(const struct fs_sample_params *p)
{
	if (p->shift > FS_SAMPLE_MAX_SHIFT)
		return -22;
	if (p->log2_buckets < FS_SAMPLE_MIN_LOG2_BUCKETS ||
	    p->log2_buckets > FS_SAMPLE_MAX_LOG2_BUCKETS)
		return -22;
	return 0;
}

FS_INLINE __u64 fs_sample_buckets_per_slot(const struct fs_sample_params *p)
{
	return 1ULL << p->log2_buckets;
}

FS_INLINE __u64 fs_sample_value(__u64 h_flow)
{
#ifdef FS_MUTANT_SAMPLE_RAW	/* `make mutants` only: h_flow's own top bits */
	return h_flow;
#endif
	return fs_mix64(h_flow ^ FS_SAMPLE_C);
}

/* The rate's own limit: 2^(64 - k), and 2^64 - 1 for k = 0 (one flow
 * in 2^64 out, which R_b = 2^64 / L_b accounts for). */
FS_INLINE __u64 fs_sample_rate_limit(__u32 shift)
{
	return shift ? 1ULL << (64 - shift) : ~0ULL;
}

/* Whether s can be in at all, before its bucket is looked up: no
 * bucket's limit is above the rate's. */
FS_INLINE int fs_sample_maybe(__u64 s, __u32 shift)
{
	return s < fs_sample_rate_limit(shift);
}

/* Which bucket of the slot s takes: its low log2_buckets bits. */
FS_INLINE __u32 fs_sample_bucket_index(__u64 s, __u32 log2_buckets)
{
	return (__u32)s & ((1U << log2_buckets) - 1);
}

FS_INLINE __u64 fs_sample_limit(const struct fs_sample_bucket *b, __u32 shift)
{
	return b->head.cut ? b->head.cut : fs_sample_rate_limit(shift);
}

/* Live: in use and still in the sample (see "Full bucket" above). */
FS_INLINE int fs_sample_live(const struct fs_sample_entry *e, __u64 limit)
{
	return e->key.family && e->s < limit;
}

FS_INLINE int fs_sample_key_equal(const struct fs_flow_key *a,
				  const struct fs_flow_key *b)
{
	const fs_alias_u64 *x = (const fs_alias_u64 *)a;
	const fs_alias_u64 *y = (const fs_alias_u64 *)b;

	return !((x[0] ^ y[0]) | (x[1] ^ y[1]) | (x[2] ^ y[2]) |
		 (x[3] ^ y[3]) | (x[4] ^ y[4]));
}

FS_INLINE void fs_sample_entry_set(struct fs_sample_entry *e,
				   const struct fs_flow_key *key, __u64 s,
				   __u64 packets, __u64 bytes)
{
	e->key = *key;
	e->s = s;
	e->packets = packets;
	e->bytes = bytes;
}

/*
 * The bucket is full of other live flows: cut its limit to the highest s
 * of the 8 (see "Full bucket"), and put the flow in the place of the one
 * that goes, unless that is the flow itself.
 */
FS_INLINE int fs_sample_full(struct fs_sample_bucket *b,
			     const struct fs_flow_key *key, __u64 s,
			     __u64 packets, __u64 bytes)
{
	__u32 i, top = FS_SAMPLE_WAYS;
	__u64 top_s = s;

	for (i = 0; i < FS_SAMPLE_WAYS; i++)
		if (b->e[i].s > top_s) {
			top_s = b->e[i].s;
			top = i;
		}
	b->head.full++;
#ifdef FS_MUTANT_SAMPLE_FULL_DROP	/* `make mutants` only: drop the newcomer */
	return FS_SAMPLE_DROPPED;
#endif
	b->head.cut = top_s;
	if (top == FS_SAMPLE_WAYS)
		return FS_SAMPLE_DROPPED;
	fs_sample_entry_set(&b->e[top], key, s, packets, bytes);
	return FS_SAMPLE_EVICTED;
}

/*
 * Count packets and bytes of a flow (key, s = fs_sample_value(h_flow))
 * in its bucket b (fs_sample_bucket_index()) of a sample of rate
 * 2^-shift; an enum fs_sample_result.  A short loop with an early exit,
 * left a loop: a flow already in stops at its entry.  (A cut s of 0 would
 * read as no cut: it takes 8 flows of s = 0, i.e. never.)
 */
FS_INLINE int fs_sample_add(struct fs_sample_bucket *b, __u32 shift,
			    const struct fs_flow_key *key, __u64 s,
			    __u64 packets, __u64 bytes)
{
	__u64 limit = fs_sample_limit(b, shift);
	__u32 i, free = FS_SAMPLE_WAYS;

	if (s >= limit)
		return FS_SAMPLE_OUT;
FS_NO_UNROLL
	for (i = 0; i < FS_SAMPLE_WAYS; i++) {
		struct fs_sample_entry *e = &b->e[i];

		if (!fs_sample_live(e, limit)) {
			if (free == FS_SAMPLE_WAYS)
				free = i;
			continue;
		}
		if (e->s == s && fs_sample_key_equal(&e->key, key)) {
			e->packets += packets;
			e->bytes += bytes;
			return FS_SAMPLE_COUNTED;
		}
	}
	if (free < FS_SAMPLE_WAYS) {
		fs_sample_entry_set(&b->e[free], key, s, packets, bytes);
		return FS_SAMPLE_INSERTED;
	}
	return fs_sample_full(b, key, s, packets, bytes);
}

/* Live entries of a bucket (X_b of "Unbiased when full"). */
FS_INLINE __u32 fs_sample_bucket_live(const struct fs_sample_bucket *b,
				      __u32 shift)
{
	__u64 limit = fs_sample_limit(b, shift);
	__u32 i, n = 0;

	for (i = 0; i < FS_SAMPLE_WAYS; i++)
		n += fs_sample_live(&b->e[i], limit);
	return n;
}

#if !defined(__bpf__)
/*
 * dst = merge(dst, src), two copies of one bucket of samples of rate
 * 2^-shift (see "Merge"): the lower limit, then src's live entries added.
 * For the daemon's fold and merges (and the module); the datapath never
 * merges.
 */
FS_INLINE void fs_sample_bucket_merge(struct fs_sample_bucket *dst,
				      const struct fs_sample_bucket *src,
				      __u32 shift)
{
	__u64 dl = fs_sample_limit(dst, shift), sl = fs_sample_limit(src, shift);
	__u32 i;

#ifdef FS_MUTANT_SAMPLE_MERGE_LIMIT	/* `make mutants` only: src's limit ignored */
	dl = 0;
#endif
	if (sl < dl)
		dst->head.cut = sl;
	dst->head.full += src->head.full;
	for (i = 0; i < FS_SAMPLE_WAYS; i++) {
		const struct fs_sample_entry *e = &src->e[i];

		if (fs_sample_live(e, sl))
			fs_sample_add(dst, shift, &e->key, e->s, e->packets, e->bytes);
	}
}
#endif

#if !defined(__bpf__) && !defined(__KERNEL__)
#include <math.h>
#include <stddef.h>

/* ---- Exports (see "Exports" above), user space only ----------------- */

/* 2^floor(log2 x), 0 for 0: a limit's or a value's leading bit. */
FS_INLINE __u64 fs_sample_leading_bit(__u64 x)
{
	return x ? 1ULL << (63 - __builtin_clzll(x)) : 0;
}

/*
 * The exported picture of a bucket of a sample of rate 2^-shift, in
 * place: the limit cut to its leading bit, the entries at or above it
 * and the free ones zeroed (nothing of a dropped flow leaves), each live
 * entry's s cut to its leading bit.  A cut equal to the rate's own limit
 * is written as none (0), as the datapath writes it.
 */
FS_INLINE void fs_sample_bucket_export(struct fs_sample_bucket *b, __u32 shift)
{
	__u64 limit = fs_sample_leading_bit(fs_sample_limit(b, shift));
	__u32 i;

#ifdef FS_MUTANT_SAMPLE_EXPORT_LIMIT	/* `make mutants` only: the limit uncut */
	limit = fs_sample_limit(b, shift);
#endif
	b->head.cut = limit == fs_sample_rate_limit(shift) ? 0 : limit;
	__builtin_memset(b->head.pad, 0, sizeof(b->head.pad));
	for (i = 0; i < FS_SAMPLE_WAYS; i++) {
		struct fs_sample_entry *e = &b->e[i];

		if (fs_sample_live(e, limit))
			e->s = fs_sample_leading_bit(e->s);
		else
			__builtin_memset(e, 0, sizeof(*e));
	}
}

/*
 * Whether a bucket read from an export (native.h, an export answer) is
 * one fs_sample_bucket_export() leaves: a cut of 0 or a power of two
 * below the rate's limit, its pad zero, and each entry either zero or a
 * live flow (of an address family, s' a power of two below the limit, a
 * packet at least), no flow twice.  s' = 0 (s = 0, one flow in 2^64) is
 * refused too: eight of them would cut a merged bucket to 0, which reads
 * as no cut (fs_sample_full()).  NULL, or a short reason for a message.
 */
FS_INLINE const char *fs_sample_bucket_exported_bad(const struct fs_sample_bucket *b,
						    __u32 shift)
{
	__u64 limit = fs_sample_limit(b, shift);
	__u32 i, j;

	if (b->head.cut && (b->head.cut & (b->head.cut - 1)))
		return "limit is not a power of two";
	if (b->head.cut >= fs_sample_rate_limit(shift))
		return "limit is not below the sample rate's";
	for (i = 0; i < sizeof(b->head.pad); i++)
		if (b->head.pad[i])
			return "head has bytes past its fields";
	for (i = 0; i < FS_SAMPLE_WAYS; i++) {
		const struct fs_sample_entry *e = &b->e[i];

		if (!e->key.family) {
			if (e->s || e->packets || e->bytes)
				return "free entry is not zero";
			continue;
		}
		if (e->key.family != FS_FAMILY_IPV4 && e->key.family != FS_FAMILY_IPV6)
			return "entry has no address family";
		if (e->s & (e->s - 1))
			return "entry has a sample value of more than one bit";
		if (!e->s)
			return "entry has a sample value of 0";
		if (!fs_sample_live(e, limit))
			return "entry at or above its limit is not zero";
		if (!e->packets)
			return "entry counted no packet";
		for (j = 0; j < i; j++)
			if (fs_sample_live(&b->e[j], limit) &&
			    fs_sample_key_equal(&b->e[j].key, &e->key))
				return "flow is in it twice";
	}
	return NULL;
}

/* ---- The comparison's arithmetic, user space only (floating point) --- */

/*
 * Count-Min against the exact counts.  For every sampled flow f with
 * exact count c_f and estimate e_f (one metric, packets or bytes, of the
 * same window or span), and eps N the sketch's bound for it (eps = e / w,
 * N the metric's total; params.h):
 *   undercounts        #{f : e_f < c_f}; Count-Min never undercounts, so
 *                      any is a bug (a lost spill, a wrong merge, a
 *                      datapath that skips packets): an alarm;
 *   overcount_max_eps  max_f (e_f - c_f) / (eps N), over flows not under;
 *                      0 for none; above 1 is allowed (each flow may pass
 *                      eps N with probability delta), far above is not;
 *   over_bound_share   #{f : e_f - c_f > eps N} / #flows, an estimate of
 *                      each flow's probability of passing the bound, which
 *                      Count-Min keeps at most delta = e^-d.  Its standard
 *                      error, for X flows, is about sqrt(delta / X).
 * eps N = 0 (an empty window) makes any overcount infinitely many times
 * the bound: FS_SAMPLE_FIGURE_MAX, a finite figure far past every alarm,
 * so that answers stay JSON (which has no infinity).
 */
#define FS_SAMPLE_FIGURE_MAX 1e9
struct fs_sample_cmp {
	__u64 flows;
	__u64 undercounts;
	__u64 over_bound;
	double overcount_max_eps;
	double over_bound_share;
};

static inline void fs_sample_compare(const __u64 *exact, const __u64 *estimate,
				     size_t n, double eps_n,
				     struct fs_sample_cmp *out)
{
	__u64 max_over = 0;
	size_t i;

	out->flows = n;
	out->undercounts = 0;
	out->over_bound = 0;
	for (i = 0; i < n; i++) {
		__u64 over;

		if (estimate[i] < exact[i]) {
			out->undercounts++;
			continue;
		}
		over = estimate[i] - exact[i];
		if (over > max_over)
			max_over = over;
		if ((double)over > eps_n)
			out->over_bound++;
	}
	if (!max_over)
		out->overcount_max_eps = 0;
	else
		out->overcount_max_eps = eps_n > 0 ? (double)max_over / eps_n :
						     FS_SAMPLE_FIGURE_MAX;
	out->over_bound_share = n ? (double)out->over_bound / (double)n : 0;
}

/* R_b = 2^64 / L_b (see "Unbiased when full"); infinite for L_b = 0. */
static inline double fs_sample_rate(__u64 limit)
{
	return limit ? ldexp(1.0, 64) / (double)limit : INFINITY;
}

/*
 * A sample's figures over its buckets (see "Unbiased when full"):
 *   flows      X = sum_b X_b, the live entries;
 *   n_hat      sum_b X_b R_b, the window's distinct flows;
 *   var_hat    sum_b X_b R_b (R_b - 1), unbiased for Var(n_hat);
 *   rate_mean  R_mean = (1 / B) sum_b R_b, for Var ~= n (R_mean - 1);
 *   full       the full events of all buckets;
 *   cut        the buckets whose limit is below the rate's.
 */
struct fs_sample_sum {
	__u64 flows;
	double n_hat;
	double var_hat;
	double rate_mean;
	__u64 full;
	__u64 cut;
};

static inline void fs_sample_summarize(const struct fs_sample_bucket *b,
				       __u64 nbuckets, __u32 shift,
				       struct fs_sample_sum *out)
{
	__u64 i;

	__builtin_memset(out, 0, sizeof(*out));
	for (i = 0; i < nbuckets; i++) {
		double r = fs_sample_rate(fs_sample_limit(&b[i], shift));
		__u32 x = fs_sample_bucket_live(&b[i], shift);

		out->flows += x;
		out->n_hat += x * r;
		out->var_hat += x * r * (r - 1);
		out->rate_mean += r;
		out->full += b[i].head.full;
		out->cut += fs_sample_limit(&b[i], shift) < fs_sample_rate_limit(shift);
	}
	if (nbuckets)
		out->rate_mean /= (double)nbuckets;
}

/* Var(n_hat) ~= n (R_mean - 1) for n distinct flows: binomial thinning,
 * R^2 n (1 / R) (1 - 1 / R) at one rate R. */
static inline double fs_sample_distinct_var(double n, double rate_mean)
{
	return n * (rate_mean - 1);
}

/* HyperLogLog's standard error at n: 1.04 / sqrt(2^p) of n (hll.h). */
static inline double fs_sample_hll_sd(double n, __u32 p)
{
	return 1.04 / sqrt(ldexp(1.0, (int)p)) * n;
}

/*
 * The HyperLogLog of flows' estimate hll against the sample's n_hat,
 * both of the same window (or span), in standard errors of their
 * difference:
 *     z = (hll - n_hat) / sqrt((1.04^2 / m) n^2 + n (R_mean - 1)),
 * the variances added: the two errors come from unrelated bits of each
 * flow's hash (the registers from h_flow's low bits and ranks, the sample
 * from fs_mix64 of it), so they are about independent.  n, unknown, is
 * taken as hll, the far more precise of the two (0.81 % at p = 14 against
 * 1 / sqrt(X) for the sample), and never 0 at a non-empty window, which
 * n_hat is whenever X = 0.  Both 0: z = 0.  The normal approximation
 * wants X large: about n / R_mean >= FS_SAMPLE_MIN_EXPECTED sampled flows
 * (fs_sample_z_meaningful()); a window with fewer tells little and should
 * stay out of the share below.
 */
#define FS_SAMPLE_MIN_EXPECTED 30.0

static inline double fs_sample_hll_z(double hll, double n_hat, double rate_mean,
				     __u32 p)
{
	double sd_hll = fs_sample_hll_sd(hll, p);
	double var = sd_hll * sd_hll + fs_sample_distinct_var(hll, rate_mean);

#ifdef FS_MUTANT_SAMPLE_Z_NO_HLL	/* `make mutants` only: the sample's variance alone */
	var = fs_sample_distinct_var(hll, rate_mean);
#endif
	if (hll == n_hat)
		return 0;
	return var > 0 ? (hll - n_hat) / sqrt(var) :
			 (hll > n_hat ? FS_SAMPLE_FIGURE_MAX : -FS_SAMPLE_FIGURE_MAX);
}

static inline int fs_sample_z_meaningful(double hll, double rate_mean)
{
	return hll / rate_mean >= FS_SAMPLE_MIN_EXPECTED;
}

/*
 * The share of the last k windows' z-scores within zmax standard errors
 * (the seeds' check: zmax = 2, about 95 % for independent windows; 0 for
 * k = 0).  Reported, not alarmed on: see fs_sample_alarms().
 */
static inline double fs_sample_share_within(const double *z, size_t k,
					    double zmax)
{
	size_t i, in = 0;

	for (i = 0; i < k; i++)
		in += fabs(z[i]) <= zmax;
	return k ? (double)in / (double)k : 0;
}

/*
 * The alarms (a bit each): any undercount (Count-Min never undercounts);
 * a share of flows over eps N above delta by more than FS_SAMPLE_ALARM_Z
 * of its standard error sqrt(delta (1 - delta) / X), over X >=
 * FS_SAMPLE_ALARM_MIN_FLOWS sampled flows (fewer tell too little); and a
 * HyperLogLog z-score beyond FS_SAMPLE_ALARM_Z where the sample is large
 * enough to tell (fs_sample_z_meaningful()).
 *
 * Not the share of windows within 2, though it is reported: under one
 * secret, windows of the same flows have nearly the same registers and
 * the same sampled flows, so their z-scores are nearly equal, not
 * independent draws.  On steady traffic a healthy sketch sits at |z| > 2
 * in every window for about 4.5 % of secrets and flow sets, and a floor
 * on the share would alarm on it for good.  |z| > 4 happens to a healthy
 * sketch with probability 6e-5 however the windows are correlated (each
 * window's z is itself about normal): about once in 16,000 flow sets, and
 * on all their windows at once.  A biased register (a rank off by one
 * doubles the count) reads z far beyond it.
 */
#define FS_SAMPLE_ALARM_Z 4.0
#define FS_SAMPLE_ALARM_MIN_FLOWS 30

enum fs_sample_alarm {
	FS_SAMPLE_ALARM_UNDERCOUNT = 1,
	FS_SAMPLE_ALARM_OVERCOUNT = 2,
	FS_SAMPLE_ALARM_DISTINCT = 4,
};

/* c: the packets' and the bytes' comparisons; z: the HyperLogLog's
 * z-score, and whether the sample can tell (fs_sample_z_meaningful()).
 * The alarms raised, or 0. */
static inline unsigned int fs_sample_alarms(const struct fs_sample_cmp c[2], double delta,
					    double z, int z_tells)
{
	double x = (double)c[0].flows;
	double top = delta + FS_SAMPLE_ALARM_Z * sqrt(delta * (1 - delta) / (x > 0 ? x : 1));
	unsigned int alarms = 0;

	if (c[0].undercounts || c[1].undercounts)
		alarms |= FS_SAMPLE_ALARM_UNDERCOUNT;
	if (x >= FS_SAMPLE_ALARM_MIN_FLOWS &&
	    (c[0].over_bound_share > top || c[1].over_bound_share > top))
		alarms |= FS_SAMPLE_ALARM_OVERCOUNT;
	if (z_tells && fabs(z) > FS_SAMPLE_ALARM_Z)
		alarms |= FS_SAMPLE_ALARM_DISTINCT;
	return alarms;
}
#endif

#endif /* FLOWSKETCH_SAMPLE_H */
