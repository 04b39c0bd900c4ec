/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * cms_sampled.h - NitroSketch-style sampled Count-Min row updates.
 *
 * A BENCHMARK OPTION, NEVER THE DEFAULT.  Only the bench builds
 * bench/bpf/bench_nitro.bpf.c and bench_nitro1.bpf.c define FS_CMS_NITRO
 * (update.h); the daemon never loads them.  It trades the README's one-sided guarantee ("never
 * below the truth") for fewer cache lines a packet: the bound below is
 * two-sided and holds only once a window is long enough.
 *
 * What it does.  The d rows of every packet form a stream of (packet, row)
 * slots, d a packet.  Each slot is sampled independently with probability
 * p = 2^-k (FS_CMS_NITRO_K, default k = 2: p = 1/4, 1.25 of 5 rows a
 * packet on average, 0.24 of packets touch no row); a sampled row's cell
 * gets q = 1/p = 2^k times the increment (q packets, q * bytes), so the
 * cells hold estimates directly and every reader stays as it is.  Instead
 * of d coin flips a packet, the gap to the next sampled slot is drawn
 * (NitroSketch, Liu et al., SIGCOMM 2019): from a 64-bit random word r,
 * cut into m = floor(64 / k) groups of k bits, each group is one slot and
 * is "sampled" iff all its k bits are 0 (probability exactly 2^-k, groups
 * independent).  The first all-zero group (a ctz, fs_ctz64) gives the gap;
 * a word with no zero group is m failures in a row, and since the slots
 * are independent the next word simply continues (no truncation, no
 * rounding: the sampling is exactly Bernoulli(2^-k) per slot, up to the
 * generator's quality).  A packet draws a word only when a sampled slot or
 * a word's end falls inside it: 1 + d p words a packet at most on average,
 * about one at p = 1/d.  Powers of two keep q an exact shift and the draw
 * free of floating point and tables.
 *
 * State: struct fs_cms_nitro, one per CPU (a per-CPU map element in the
 * datapath): the generator (splitmix64, seeded from bpf_get_prandom_u32()
 * on a CPU's first packet, so CPUs draw independent sequences) and the
 * position of the next event.  One program runs at a time on a CPU, so
 * plain loads and stores suffice; no atomics.  The generator is not
 * cryptographic: whoever can predict it can steer which packets count.
 * Conservative update is left unsampled (update.h): sampling it would not
 * give the estimates below.
 *
 * ------------------------------------------------------------------ bound
 *
 * Notation: a window (per CPU; the merged sketch is the sum of per-CPU
 * sketches whose samplings are independent, which is the same analysis
 * on the whole stream) of N packets, flow x with f packets, share
 * phi = f / N; w columns, d rows, q = 2^k.  Row r's cell of x is
 *
 *     C_r = q * sum over packets i whose key hits x's column in row r
 *               of B_ir,            B_ir ~ Bernoulli(1/q), independent,
 *
 * so with M_r = f + X_r the packets of that cell (X_r: the other flows'
 * packets there, Count-Min's overcount, E[X_r] <= (N - f) / w):
 *
 *  1. Unbiased per row: E[C_r | hashes] = M_r, i.e. C_r = f + X_r + S_r
 *     with sampling noise E[S_r] = 0.
 *  2. Variance added by sampling: Var[S_r | hashes] = q^2 * M_r * p(1 - p)
 *     = (q - 1) M_r, and E[(q - 1) M_r] <= (q - 1)(phi + 1/w) N.
 *     (Bytes: Var = (q - 1) * sum of b_i^2 <= (q - 1) b_max * bytes, i.e.
 *     the same formulas with N replaced by total bytes / b_max.)
 *  3. Per row, with eps = eps_c + eps_s (here eps_c = eps_s = eps / 2):
 *       up: P(C_r >= f + eps N) <= P(X_r >= eps_c N) + P(S_r >= eps_s N)
 *           <= 1 / (eps_c w)  +  (q - 1)(phi + 1/w) / (eps_s^2 N)   (Markov,
 *              Chebyshev on the variance given the hashes, then averaged)
 *       lo: P(C_r <= f - eps N) <= P(S_r <= -eps N)   (X_r >= 0)
 *           <= (q - 1)(phi + 1/w) / (eps^2 N)
 *     Rows are independent (independent columns per row, cms.h, and
 *     independent samples).  Unsampled (q = 1) both sampling terms vanish
 *     and "lo" is 0: that is the "never below" that sampling gives up.
 *  4. Median of rows (NitroSketch's estimate; d odd, else the lower
 *     middle, the ceil(d/2)-th smallest): it is above f + eps N only if
 *     d - ceil(d/2) + 1 rows are, below f - eps N only if ceil(d/2) rows
 *     are:  P(|median - f| > eps N) <= P(Bin(d, up) >= d - ceil(d/2) + 1)
 *                                      + P(Bin(d, lo) >= ceil(d/2)).
 *     Min of rows (what flowsketch's readers compute): above only if all
 *     d rows are, below if any is:
 *           P(|min - f| > eps N) <= up^d + d * lo.
 *     Count-Min's noise is one-sided, so the min is the tighter of the two
 *     here; the median makes the error symmetric (fs_nitro_fail_*()).
 *  5. Convergence (NitroSketch's "once the stream is long enough"): with
 *     a = 2 / (eps w) (collisions, independent of N) and
 *     s = (q - 1)(phi + 1/w) / (eps^2 N) (sampling, falling as 1/N),
 *     the min fails with probability <= (a + 4s)^d + d s.  So P <= delta
 *     needs a^d < delta (else no N suffices; at q = 1 this is Count-Min's
 *     own delta) and then holds for all N >= N0(eps, delta, q, phi), the
 *     root of (a + 4s)^d + d s = delta, i.e. N0 = (q - 1)(phi + 1/w) /
 *     (eps^2 s*) with s* that root in s (fs_nitro_converge()).  N0 grows
 *     as q / eps^2 and with the flow's share: heavy flows converge last
 *     (their own packets' noise, relative error sqrt((q - 1) / f)).
 *  6. Two-sided: the estimate can be below the truth; reports and
 *     "never below" (README) do not hold for this option.
 *
 * One row a packet (FS_CMS_NITRO_ONE, bench_nitro1.bpf.c).  Per-slot
 * sampling touches d p lines a packet on average, but through branches on
 * random bits (which rows, how many): a mispredicted branch or two a
 * packet, which costs about what a line does.  The variant updates
 * exactly one row a packet, drawn uniformly (fs_cms_nitro_one_row()), by
 * q = d times the increment: one line, no branch on which.  Per row the
 * law is the same as above with p = 1/d (each packet is in row r's sample
 * with probability 1/d, independently of other packets), so points 1 to 3
 * hold with q = d.  Rows are no longer independent: a packet is in
 * exactly one row's sample.  The d families of indicators (packet i in
 * row r's sample) are multinomial, hence negatively associated (Joag-Dev
 * and Proschan 1983), and "row r is above f + eps N" is an increasing
 * function of family r alone, given the hashes: so P(all d rows above) <=
 * product of the rows' probabilities, and point 4's bound for the min,
 * up^d + d lo (the union needs no independence), holds as it is.  For the
 * median use C(d, j) up^j in place of the binomial tail (the product bound
 * on each j-subset), not computed here.  Packets of a flow no longer
 * reach every row, so the datapath finds the other rows' cells only when
 * the sampled one says a report may be due (update.h).
 *
 * Numbers at the defaults (params.h: w = 4096, d = 5, delta = 1 %; hh
 * fraction 0.1 %; k = 2, q = 4), eps = 2e / w = 0.133 % (twice the
 * unsampled eps, whose e / w = 0.066 % is all collision and leaves the
 * sampling nothing), min of rows; from fs_nitro_fail_min():
 *   - light flow, phi <= 1/w: N = 1e5 (1 s at 100 kpps): 0.052;
 *     N = 1e6: 0.011; N = 1e7: 0.0072; delta = 1 % from N0 = 1.4e6.
 *   - a flow at the hh fraction, phi = 0.1 %: N = 1e5: 0.12; N = 1e6:
 *     0.018; N = 1e7: 0.0079; delta = 1 % from N0 = 3.5e6.
 *   - any flow (phi up to 1): vacuous below N ~ 1e7, 0.10 at N = 1e8;
 *     delta = 1 % from N0 = 2.8e9 - a 1 s window never gets there below
 *     line rate for a flow that is most of the traffic.
 *   As N grows every case tends to (1/e)^5 = 0.0067, the unsampled
 *   sketch's delta at eps = e / w.
 * The median of rows at the same eps tends to 0.26 (each row is above
 * with probability up to 2 / (eps w) = 1/e); it needs eps = 8e / w
 * (0.53 %) for 0.0067 and 4e / w for 0.046.
 * Weakest, then: short windows at modest rates, and heavy flows; a 1 s
 * window at 100 kpps gives light flows 5 %, not 1 %.
 * (fs-livebench prints these at the run's sizes.)
 */
#ifndef FLOWSKETCH_CMS_SAMPLED_H
#define FLOWSKETCH_CMS_SAMPLED_H

#include "compat.h"
#include "params.h"
#include "cms.h"

/* log2(1/p) of the datapath's build; k <= 8 keeps a word's m = 64 / k
 * groups >= FS_CMS_MAX_DEPTH (fs_cms_nitro_rows()'s loop bound). */
#ifndef FS_CMS_NITRO_K
#define FS_CMS_NITRO_K 2
#endif
#define FS_CMS_NITRO_MAX_K 8

_Static_assert(FS_CMS_NITRO_K >= 1 && FS_CMS_NITRO_K <= FS_CMS_NITRO_MAX_K,
	       "p = 2^-k, 1 <= k <= 8");
_Static_assert(64 / FS_CMS_NITRO_MAX_K >= FS_CMS_MAX_DEPTH, "a word spans a packet");

/*
 * Per CPU.  next: the position, counted from the current packet's row 0
 * (rows of later packets continue the count), of the next event; hit:
 * whether that event is a sampled slot (1) or the end of a word with no
 * zero group, where the next word's groups begin (0).  All zero is the
 * state before the first packet: a word is drawn at slot 0.
 */
struct fs_cms_nitro {
	__u64 rng;
	__u32 next;
	__u32 hit;
};

/* splitmix64: one add and two multiplies a word; state 0 means unseeded
 * (the datapath seeds it on first use). */
FS_INLINE __u64 fs_nitro_random(__u64 *state)
{
	__u64 z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Bit j * k set for each group j < 64 / k of r whose k bits are all 0. */
FS_INLINE __u64 fs_nitro_zero_groups(__u64 r, __u32 k)
{
	__u64 any = r, lanes = 0;
	__u32 i;

FS_UNROLL
	for (i = 1; i < FS_CMS_NITRO_MAX_K; i++)
		if (i < k)
			any |= r >> i;
FS_UNROLL
	for (i = 0; i < 64; i++)
		if (i % k == 0 && i + k <= 64)
			lanes |= 1ULL << i;
	return ~any & lanes;
}

/*
 * The rows of this packet to update, as a mask (bit r: row r), for depth
 * rows and p = 2^-k; advances *s past the packet.  Iterations: at most one
 * event that is a word's end (a failed word moves next by 64 / k >= depth,
 * past the packet) and one per sampled row, so depth + 1 suffice.
 */
FS_INLINE __u32 fs_cms_nitro_rows(struct fs_cms_nitro *s, __u32 depth, __u32 k)
{
	__u32 pos = s->next, hit = s->hit, mask = 0, i;

FS_UNROLL
	for (i = 0; i <= FS_CMS_MAX_DEPTH; i++) {
		__u32 start;
		__u64 z;

		if (pos >= depth)
			continue;
		if (hit) {
			mask |= 1U << pos;
			start = pos + 1;
		} else {
			start = pos;
		}
		z = fs_nitro_zero_groups(fs_nitro_random(&s->rng), k);
		hit = z != 0;
		pos = start + (z ? fs_ctz64(z) / k : 64 / k);
	}
	s->next = pos - depth;
	s->hit = hit;
	return mask;
}

/*
 * The one-row variant (FS_CMS_NITRO_ONE, "One row a packet" in the header
 * comment): row floor(u * depth / 2^32) of a 32-bit draw u, uniform up to
 * depth / 2^32 (each row gets floor or ceil of 2^32 / depth of the u).
 */
FS_INLINE __u32 fs_cms_nitro_one_row(struct fs_cms_nitro *s, __u32 depth)
{
	return (__u32)(((fs_nitro_random(&s->rng) >> 32) * depth) >> 32);
}

/*
 * Row row's column of flow hash h, as fs_cms_column() (cms.h) gives it,
 * without its two divisions (a few ns each, once a packet in the one-row
 * variant): k = floor(64 / log2w) from a table, the word row / k from
 * comparisons (row < 8 and k >= 2, so the word is at most 3), which at the
 * defaults (k = 5 >= d) always say 0.  log2w <= FS_CMS_MAX_LOG2W.
 */
static const __u8 fs_cms_nitro_k[FS_CMS_MAX_LOG2W + 1] = {
	0, 64, 32, 21, 16, 12, 10, 9, 8, 7, 6, 5, 5, 4, 4, 4, 4, 3, 3, 3, 3, 3, 2,
};

FS_INLINE __u32 fs_cms_nitro_column(__u64 h, __u32 log2w, __u32 row)
{
	__u32 k = fs_cms_nitro_k[log2w];
	__u32 word = (row >= k) + (row >= 2 * k) + (row >= 3 * k);
	__u64 bits = word ? fs_mix64(h + word * FS_GOLDEN64) : h;

#ifdef FS_MUTANT_CMS_ROW0	/* `make mutants` only: rows not independent */
	return (__u32)h & ((1U << log2w) - 1);
#endif
	return (__u32)(bits >> ((row - word * k) * log2w)) & ((1U << log2w) - 1);
}

/* A sampled row's increment: q = 2^k times the packet's. */
FS_INLINE __u64 fs_cms_nitro_scale(__u64 v, __u32 k)
{
#ifdef FS_MUTANT_NITRO_NOSCALE	/* `make mutants` only: 1/p forgotten */
	(void)k;
	return v;
#endif
	return v << k;
}

/* The one-row variant's increment: d times the packet's. */
FS_INLINE __u64 fs_cms_nitro_scale_d(__u64 v, __u32 depth)
{
#ifdef FS_MUTANT_NITRO_NOSCALE	/* `make mutants` only: 1/p forgotten */
	(void)depth;
	return v;
#endif
	return v * depth;
}

#if !defined(__bpf__) && !defined(__KERNEL__)
/*
 * The bound above, for user space (tests, benchmarks): the probabilities
 * of point 3 (capped at 1) and 4, and the N of point 5.  phi is the flow's
 * share of the window, eps the error as a fraction of N, n = N.
 */
static inline double fs_nitro_cap1(double x)
{
	return x < 1 ? x : 1;
}

static inline double fs_nitro_row_up(double w, double q, double eps, double phi,
				     double n)
{
	double half = eps / 2;

	return fs_nitro_cap1(1 / (half * w) + (q - 1) * (phi + 1 / w) / (half * half * n));
}

static inline double fs_nitro_row_lo(double w, double q, double eps, double phi,
				     double n)
{
	return fs_nitro_cap1((q - 1) * (phi + 1 / w) / (eps * eps * n));
}

/* P(Bin(d, b) >= j). */
static inline double fs_nitro_binom_tail(unsigned d, double b, unsigned j)
{
	double sum = 0;
	unsigned i, t;

	for (i = j; i <= d; i++) {
		double term = 1;

		for (t = 0; t < i; t++)		/* C(d, i) b^i */
			term = term * (d - t) / (t + 1) * b;
		for (t = i; t < d; t++)
			term *= 1 - b;
		sum += term;
	}
	return sum;
}

static inline double fs_nitro_fail_min(unsigned d, double w, double q,
				       double eps, double phi, double n)
{
	double up = fs_nitro_row_up(w, q, eps, phi, n), p = 1;
	unsigned i;

	for (i = 0; i < d; i++)
		p *= up;
	return fs_nitro_cap1(p + d * fs_nitro_row_lo(w, q, eps, phi, n));
}

static inline double fs_nitro_fail_median(unsigned d, double w, double q,
					  double eps, double phi, double n)
{
	unsigned mid = (d + 1) / 2;	/* ceil(d / 2) */

	return fs_nitro_cap1(fs_nitro_binom_tail(d, fs_nitro_row_up(w, q, eps, phi, n),
						 d - mid + 1) +
			     fs_nitro_binom_tail(d, fs_nitro_row_lo(w, q, eps, phi, n), mid));
}

/* The least N (to 1 %) at which the min of rows' bound is <= delta; 0
 * when no N gets there (the collision term alone exceeds delta). */
static inline double fs_nitro_converge(unsigned d, double w, double q,
				       double eps, double phi, double delta)
{
	double lo = 1, hi = 1;

	if (fs_nitro_fail_min(d, w, q, eps, phi, 1e300) > delta)
		return 0;
	while (fs_nitro_fail_min(d, w, q, eps, phi, hi) > delta)
		hi *= 2;
	while (hi > lo * 1.01) {
		double mid = (lo + hi) / 2;

		if (fs_nitro_fail_min(d, w, q, eps, phi, mid) > delta)
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}
#endif

#endif /* FLOWSKETCH_CMS_SAMPLED_H */
