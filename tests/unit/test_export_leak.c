// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_export_leak.c - what an export tells an attacker who knows flow
 * keys (hash.h, "What leaves the host"; export_perm.h).
 *
 * The attacker model: it sends flows of its own (it knows their keys) and
 * reads exports.  The oracle is tests/unit/ref_hash.h (written from the
 * formula, not from hash.h's code) and the documented column and register
 * rules (cms.h, hll.h).
 *
 *   - The raw flow hash, as exports carried it before native format 2:
 *     from 17 exported (key, hash) pairs of flows that differ in their
 *     source port, the attacker recovers 47 bits of a key word per half
 *     and predicts the hash of every other source port to within a few
 *     candidates, and with it aims Count-Min collisions at a victim whose
 *     hash it saw: the reason no hash may leave the host.
 *   - The Count-Min cells as the datapath lays them out: the heavy cells
 *     of the attacker's flows give their columns, d log2(w) bits of each
 *     flow's hash (60 of 64 at the defaults).  In export coordinates they
 *     give nothing of the hash: the positions found agree with the raw
 *     columns no more often than chance (1 / w).
 *   - Exports still merge exactly: relabelled sums are the relabelled
 *     sum, a candidate's exported columns find its estimate, and distinct
 *     counts are unchanged.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ref_hash.h"
#include "export_perm.h"
#include "sketch.h"
#include "rng.h"

static const struct fs_hash_secret secret = { 0x5d1f0e6a2b47c398ULL,
					      0xa3b2c1d0e9f80716ULL };

/* ---------------------------------------------------- the attack */

/* Inverse of a * x mod 2^64 for odd a (Newton: each step doubles the
 * correct low bits). */
static __u64 inv64(__u64 a)
{
	__u64 x = a;
	int i;

	for (i = 0; i < 6; i++)
		x *= 2 - a * x;
	return x;
}

/* fmix64 undone: x ^= x >> 33 is its own inverse (33 >= 32). */
static __u64 unmix(__u64 x)
{
	x ^= x >> 33;
	x *= inv64(0xc4ceb9fe1a85ec53ULL);
	x ^= x >> 33;
	x *= inv64(0xff51afd7ed558ccdULL);
	x ^= x >> 33;
	return x;
}

/* The attacker's flow whose chunk x_1 (bytes 4..7) is dport's bytes << 16
 * plus u: UDP from 192.0.2.7 to 198.51.100.1 port 53, source port
 * byte-swapped u (the key holds ports in network order). */
static void attacker_flow(__u32 u, struct fs_flow_key *k)
{
	memset(k, 0, sizeof(*k));
	k->family = FS_FAMILY_IPV4;
	k->proto = 17;
	k->sport = (__be16)u;		/* bytes 4, 5 = u's low, high byte */
	k->dport = (__be16)(53 << 8);
	memcpy(k->src, "\xc0\x00\x02\x07", 4);
	memcpy(k->dst, "\xc6\x33\x64\x01", 4);
}

/* What an export of today's format gave for a flow: its hash. */
static __u64 exported_hash(__u32 u, const struct fs_hash_key *key)
{
	struct fs_flow_key k;

	attacker_flow(u, &k);
	return ref_packet_hash(&k, key).flow;
}

#define MAX_CAND 8

/*
 * Per half h, from T_h(0) and T_h(2^k), k = 0..15: T_h(u) = acc_h(u) >> 32
 * with acc_h(u) = acc_h(0) + alpha_h u (mod 2^64), alpha_h = a_2 + x_0
 * (hash.h: the (family|proto, ports) pair is linear in x_1).  So
 * T(2^k) - T(0) = B_k + c_k, B_k = (alpha >> (32 - k)) mod 2^32 and c_k
 * in {0, 1} a carry.  B_{k+1} >> 1 = B_k mod 2^31 chains the bits down to
 * bit 17: alpha >> 17 into cand[], how many returned.
 */
static int recover_slope(const __u32 t[17], __u64 cand[MAX_CAND])
{
	__u64 v[2 * MAX_CAND], next[2 * MAX_CAND];
	int n = 0, m, i, c, k;

	for (c = 0; c < 2; c++)
		v[n++] = (__u32)(t[1] - t[0] - c);
	for (k = 1; k < 16; k++) {
		m = 0;
		for (i = 0; i < n; i++)
			for (c = 0; c < 2; c++) {
				__u32 b = t[k + 1] - t[0] - c;

				if ((b >> 1) == (__u32)(v[i] & 0x7fffffff) && m < 2 * MAX_CAND)
					next[m++] = v[i] << 1 | (b & 1);
			}
		memcpy(v, next, sizeof(next));
		n = m;
	}
	assert_true(n >= 1 && n <= MAX_CAND);
	memcpy(cand, v, (size_t)n * sizeof(*v));
	return n;
}

/*
 * T_h(u) for u < 2^16 from alpha's bits 17..63: alpha u differs from
 * (alpha >> 17 << 17) u by less than 2^33, which moves the top 32 bits by
 * 0 to 2, and the unknown low half of acc_h(0) adds a carry: 4 values per
 * candidate slope.
 */
static int predict_half(__u32 t0, const __u64 *slopes, int ns, __u32 u, __u32 *out)
{
	int n = 0, i, e;

	for (i = 0; i < ns; i++)
		for (e = 0; e < 4; e++)
			out[n++] = t0 + (__u32)(((slopes[i] << 17) * u) >> 32) + (__u32)e;
	return n;
}

/* Every 64-bit hash the attacker deems possible for flow u. */
static int predict(const __u32 t0[2], __u64 slopes[2][MAX_CAND], const int ns[2],
		   __u32 u, __u64 *out)
{
	__u32 h0[4 * MAX_CAND], h1[4 * MAX_CAND];
	int n0 = predict_half(t0[0], slopes[0], ns[0], u, h0);
	int n1 = predict_half(t0[1], slopes[1], ns[1], u, h1);
	int n = 0, i, j;

	for (i = 0; i < n0; i++)
		for (j = 0; j < n1; j++)
			out[n++] = ref_fmix64((__u64)h0[i] << 32 | h1[j]);
	return n;
}

static void test_raw_hash_gives_the_key_away(void **state)
{
	const __u32 log2w = 12, w = 1U << log2w;
	__u64 slopes[2][MAX_CAND], guess[16 * MAX_CAND * MAX_CAND], rng = 7;
	__u32 t[2][17], t0[2], u, k, victim_col, hits = 0, aimed = 0, aimed_hits = 0;
	struct fs_hash_key key;
	struct fs_flow_key victim;
	int ns[2], n, i, worst = 0;

	ref_hash_key_derive(&secret, &key);
	/* 17 exported pairs: source ports u = 0 and 2^k. */
	for (k = 0; k <= 16; k++) {
		__u64 x = unmix(exported_hash(k ? 1U << (k - 1) : 0, &key));

		t[0][k] = (__u32)(x >> 32);
		t[1][k] = (__u32)x;
	}
	for (i = 0; i < 2; i++) {
		ns[i] = recover_slope(t[i], slopes[i]);
		t0[i] = t[i][0];
		/* Key material: the slope is a_2 + x_0, a_2 a word of the
		 * per-packet key (x_0 = family | proto << 8). */
		{
			__u64 alpha = key.a[i][2] + (FS_FAMILY_IPV4 | 17 << 8);
			int found = 0;

			for (n = 0; n < ns[i]; n++)
				found |= slopes[i][n] == alpha >> 17;
			assert_true(found);
		}
	}
	/* Every other source port's hash, predicted to a few candidates. */
	for (k = 0; k < 1000; k++) {
		__u64 truth;

		u = (__u32)(rng_next(&rng) & 0xffff);
		truth = exported_hash(u, &key);
		n = predict(t0, slopes, ns, u, guess);
		if (n > worst)
			worst = n;
		for (i = 0; i < n && guess[i] != truth; i++)
			;
		if (i == n)
			fail_msg("source port %u: hash %016llx not among the %d predicted",
				 u, (unsigned long long)truth, n);
	}
	assert_true(worst <= 64);
	/* Aimed collisions: a victim's hash seen in the same export; pick
	 * the source ports predicted to share its row-0 column. */
	memset(&victim, 0, sizeof(victim));
	victim.family = FS_FAMILY_IPV4;
	victim.proto = 6;
	victim.sport = (__be16)(0x1f90);
	victim.dport = (__be16)(0xbb01);
	memcpy(victim.src, "\xcb\x00\x71\x09", 4);
	memcpy(victim.dst, "\x0a\x00\x00\x01", 4);
	victim_col = (__u32)(ref_packet_hash(&victim, &key).flow & (w - 1));
	for (u = 0; u < 0x10000; u++) {
		bool hit = (exported_hash(u, &key) & (w - 1)) == victim_col, pick = false;

		n = predict(t0, slopes, ns, u, guess);
		for (i = 0; i < n; i++)
			pick |= (guess[i] & (w - 1)) == victim_col;
		hits += hit;
		aimed += pick;
		aimed_hits += hit && pick;
	}
	print_message("    prediction: at most %d candidates; aimed %u ports, %u collide (%.1f%%; blind: %u of 65536, %.3f%%)\n",
		      worst, aimed, aimed_hits, 100.0 * aimed_hits / aimed, hits,
		      100.0 * hits / 65536);
	/* No collider missed, and an aimed pick collides at least 32
	 * times as often as a blind one (1 / w). */
	assert_int_equal(aimed_hits, hits);
	assert_true((__u64)aimed_hits * w >= 32ULL * aimed);
}

/* ------------------------------------------- the exported cells */

#define D 5
#define LOG2W 12
#define P 14
#define NBG 20000
#define NHEAVY 12
/* Heavy flow j sends 2^(HEAVY_BIT + j) packets: a cell's count says which
 * heavy flows are in it, whatever collides, since the background adds
 * less than 2^HEAVY_BIT to any cell (20000 flows of at most 10). */
#define HEAVY_BIT 18

/* A flow's column in row r: bits [r log2w, (r + 1) log2w) of its hash
 * (cms.h, d log2w <= 64). */
static __u32 raw_col(__u64 h, __u32 r)
{
	return (__u32)(h >> (r * LOG2W)) & ((1U << LOG2W) - 1);
}

static void heavy_key(__u32 j, struct fs_flow_key *k)
{
	attacker_flow(0x1000 + j, k);
}

struct world {
	struct fs_sketch raw;		/* the datapath's layout */
	__u64 heavy_hash[NHEAVY];
	__u64 heavy_count[NHEAVY];
};

/* Background flows of 1..10 packets and the attacker's heavy flows of
 * distinct counts, all added at their raw columns. */
static void build(struct world *wd, __u64 seed)
{
	struct fs_sketch_params p;
	struct fs_hash_key key;
	struct fs_flow_key k;
	__u64 rng = seed, h, c;
	__u32 i, r;

	ref_hash_key_derive(&secret, &key);
	fs_params_init(&p, D, LOG2W, P, 0, &secret);
	assert_int_equal(fs_sketch_init(&wd->raw, &p), 0);
	for (i = 0; i < NBG + NHEAVY; i++) {
		if (i < NBG) {
			memset(&k, 0, sizeof(k));
			k.family = FS_FAMILY_IPV4;
			k.proto = 6;
			k.sport = (__be16)rng_next(&rng);
			k.dport = (__be16)rng_next(&rng);
			for (r = 0; r < 4; r++) {
				k.src[r] = (__u8)rng_next(&rng);
				k.dst[r] = (__u8)rng_next(&rng);
			}
			c = 1 + rng_next(&rng) % 10;
		} else {
			heavy_key(i - NBG, &k);
			c = 1ULL << (HEAVY_BIT + i - NBG);
		}
		h = ref_packet_hash(&k, &key).flow;
		if (i >= NBG) {
			wd->heavy_hash[i - NBG] = h;
			wd->heavy_count[i - NBG] = c;
		}
		for (r = 0; r < D; r++) {
			struct fs_cms_cell *cell = &wd->raw.cms[(r << LOG2W) | raw_col(h, r)];

			cell->packets += c;
			cell->bytes += 100 * c;
		}
		/* The flows HyperLogLog, hll.h's rule. */
		{
			__u32 idx = (__u32)(h & ((1U << P) - 1));
			__u8 rank = (__u8)(__builtin_ctzll((h >> P) | 1ULL << (64 - P)) + 1);

			if (wd->raw.hll[idx] < rank)
				wd->raw.hll[idx] = rank;
		}
		wd->raw.totals.packets += c;
		wd->raw.totals.bytes += 100 * c;
	}
}

/* The attacker's reading of a sketch: in each row, the cell whose count
 * holds its heavy flow j's bit. */
static __u32 find_heavy(const struct fs_sketch *s, __u32 j, __u32 r)
{
	__u32 c;

	for (c = 0; c < 1U << LOG2W; c++)
		if (s->cms[(r << LOG2W) | c].packets >> (HEAVY_BIT + j) & 1)
			return c;
	return ~0U;
}

static void test_cells_hide_the_hash(void **state)
{
	struct fs_hash_secret ek;
	struct fs_sketch out;
	struct world wd;
	__u32 cols[NHEAVY * D], j, r, same_raw = 0, same_export = 0;

	build(&wd, 11);
	fs_export_key_derive(&secret, &ek);
	assert_int_equal(fs_export_permute(&wd.raw, &ek, wd.heavy_hash, NHEAVY, cols, &out), 0);
	for (j = 0; j < NHEAVY; j++)
		for (r = 0; r < D; r++) {
			__u32 col = find_heavy(&wd.raw, j, r), ecol = find_heavy(&out, j, r);

			/* In the datapath's layout the heavy cells are the
			 * hash's bits: the leak an export must not have. */
			assert_int_equal(col, raw_col(wd.heavy_hash[j], r));
			same_raw++;
			/* In export coordinates the attacker finds the cell
			 * its exported column names (merges need that)... */
			assert_int_equal(ecol, cols[j * D + r]);
			/* ... which is the raw column by chance only. */
			same_export += ecol == raw_col(wd.heavy_hash[j], r);
		}
	print_message("    heavy cells at the hash's bits: %u of %u in the datapath's layout, %u in the export (chance: %.2f)\n",
		      same_raw, NHEAVY * D, same_export, (double)NHEAVY * D / (1 << LOG2W));
	assert_true(same_export <= 3);
	fs_sketch_free(&out);
	fs_sketch_free(&wd.raw);
}

/* Registers: the same histogram (so the same estimate), other places. */
static void test_registers_relabelled(void **state)
{
	struct fs_hash_secret ek;
	struct fs_sketch out;
	struct world wd;
	__u32 hist_raw[66] = { 0 }, hist_out[66] = { 0 }, i, moved = 0, m = 1U << P;

	build(&wd, 13);
	fs_export_key_derive(&secret, &ek);
	assert_int_equal(fs_export_permute(&wd.raw, &ek, NULL, 0, NULL, &out), 0);
	for (i = 0; i < FS_HLL_NSKETCH * m; i++) {
		hist_raw[wd.raw.hll[i]]++;
		hist_out[out.hll[i]]++;
		moved += wd.raw.hll[i] != out.hll[i];
	}
	assert_memory_equal(hist_raw, hist_out, sizeof(hist_raw));
	assert_true(fs_sketch_distinct(&wd.raw, FS_HLL_FLOWS) ==
		    fs_sketch_distinct(&out, FS_HLL_FLOWS));
	/* NBG + NHEAVY flows fill most of the flows registers, which all
	 * move but about 1 / m of them. */
	assert_true(moved > m / 2);
	fs_sketch_free(&out);
	fs_sketch_free(&wd.raw);
}

/* Two hosts' exports merge into the export of their union, and the
 * candidates' columns find the union's estimates. */
static void test_exports_merge_exactly(void **state)
{
	struct fs_sketch ea, eb, eu, u;
	struct fs_hash_secret ek;
	struct world a, b;
	__u32 ca[NHEAVY * D], cb[NHEAVY * D], cu[NHEAVY * D], j;

	build(&a, 21);
	build(&b, 22);
	fs_export_key_derive(&secret, &ek);
	assert_int_equal(fs_sketch_init(&u, &a.raw.params), 0);
	assert_int_equal(fs_sketch_merge(&u, &a.raw), 0);
	assert_int_equal(fs_sketch_merge(&u, &b.raw), 0);
	assert_int_equal(fs_export_permute(&a.raw, &ek, a.heavy_hash, NHEAVY, ca, &ea), 0);
	assert_int_equal(fs_export_permute(&b.raw, &ek, b.heavy_hash, NHEAVY, cb, &eb), 0);
	assert_int_equal(fs_export_permute(&u, &ek, a.heavy_hash, NHEAVY, cu, &eu), 0);
	/* The same flows have the same columns on both hosts. */
	assert_memory_equal(ca, cb, sizeof(ca));
	assert_memory_equal(ca, cu, sizeof(ca));
	assert_int_equal(fs_sketch_merge(&ea, &eb), 0);
	assert_memory_equal(ea.cms, eu.cms, (size_t)(D << LOG2W) * sizeof(*ea.cms));
	assert_memory_equal(ea.hll, eu.hll, FS_HLL_NSKETCH << P);
	assert_int_equal(ea.totals.packets, u.totals.packets);
	for (j = 0; j < NHEAVY; j++) {
		struct fs_cms_cell by_hash, by_cols;

		fs_sketch_query(&u, a.heavy_hash[j], &by_hash);
		fs_sketch_query_columns(&ea, ca + j * D, &by_cols);
		assert_int_equal(by_hash.packets, by_cols.packets);
		assert_int_equal(by_hash.bytes, by_cols.bytes);
		assert_true(by_cols.packets >= 2 * a.heavy_count[j]);
	}
	fs_sketch_free(&ea);
	fs_sketch_free(&eb);
	fs_sketch_free(&eu);
	fs_sketch_free(&u);
	fs_sketch_free(&a.raw);
	fs_sketch_free(&b.raw);
}

/* Each relabelling is a permutation, fixed by the secret, one per row. */
static void test_permutations(void **state)
{
	const struct fs_hash_secret other = { secret.k0 ^ 1, secret.k1 };
	struct fs_hash_secret ek, ek2;
	__u32 *p0 = malloc(4096 * sizeof(*p0)), *p1 = malloc(4096 * sizeof(*p1));
	__u32 *p2 = malloc(4096 * sizeof(*p2));
	__u8 *seen = calloc(4096, 1);
	__u32 i, fixed = 0;

	assert_true(p0 && p1 && p2 && seen);
	fs_export_key_derive(&secret, &ek);
	fs_export_key_derive(&other, &ek2);
	/* Not the secret itself, nor a key of the per-packet hash. */
	assert_true(ek.k0 != secret.k0 && ek.k1 != secret.k1);
	fs_export_perm(&ek, FS_KIND_CMS, 0, 12, p0);
	for (i = 0; i < 4096; i++) {
		assert_true(p0[i] < 4096 && !seen[p0[i]]);
		seen[p0[i]] = 1;
		fixed += p0[i] == i;
	}
	assert_true(fixed < 10);	/* a uniform one fixes 1 on average */
	fs_export_perm(&ek, FS_KIND_CMS, 0, 12, p1);
	assert_memory_equal(p0, p1, 4096 * sizeof(*p0));
	fs_export_perm(&ek, FS_KIND_CMS, 1, 12, p1);
	fs_export_perm(&ek2, FS_KIND_CMS, 0, 12, p2);
	assert_memory_not_equal(p0, p1, 4096 * sizeof(*p0));
	assert_memory_not_equal(p0, p2, 4096 * sizeof(*p0));
	free(p0);
	free(p1);
	free(p2);
	free(seen);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_raw_hash_gives_the_key_away),
		cmocka_unit_test(test_cells_hide_the_hash),
		cmocka_unit_test(test_registers_relabelled),
		cmocka_unit_test(test_exports_merge_exactly),
		cmocka_unit_test(test_permutations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
