// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_policy.c - the mitigation policy's decisions (policy.h, the spec):
 * when a key above a rule is decided, with what action, and how many
 * blocks the limit lets through.
 *
 * Each window is a sketch the test fills itself through the core's update
 * functions (prefix.h, spread.h, the flows HyperLogLog) with traffic it
 * chose, so the truth is known: a source's packets, or its distinct
 * (destination, port) peers.  The policy acts on the lower end of an
 * estimate's bound; the test never reads that end from the code, it
 * checks from the parameters that its traffic is surely above (or surely
 * below) a rule, with prefix.h's "Error" written out again:
 *     estimate >= X - z sqrt((V - 1) X)               (z = 6 here)
 *     low = estimate - C - U,  C = ceil(4 e N / w),  U = ceil(3 sqrt((V - 1) E))
 * and E <= N (a key's estimate never passes the window's packets), so
 *     low >= X - 6 sqrt((V - 1) X) - C - ceil(3 sqrt((V - 1) N)).
 * Below: low <= X + 6 sqrt((V - 1) X) whenever the collision term stays
 * within C, which the lower end subtracts (1 - e^-d a key; the secret is
 * fixed, so a run is deterministic, and the margins are wide).
 * Spread (spread.h): estimate >= n (1 - 4 sigma(n)), and
 *     low = floor(x / (1 + 3 sigma(x)) - S),  S = ceil(e F / w),
 * with F the flows the HyperLogLog reads, at most F_true (1 + 6 * 1.04 /
 * sqrt(2^p)).
 *
 * Timing, from policy.h: a key above in consecutive windows s0 .. k is
 * decided at the first k with (k - s0 + 1) * window >= for, and not again
 * while now < now_k + ban.  The blocklist is an empty one (never started:
 * no entry covers anything), its max set.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <math.h>
#include <unistd.h>
#include <cmocka.h>

#include "flowsketch/params.h"
#include "flowsketch/prefix.h"
#include "flowsketch/spread.h"
#include "flowsketch/hll.h"
#include "flowsketch/hash.h"
#include "sketch.h"
#include "blocklist/blocklist.h"
#include "policy/policy.h"

#define T0 1900000000LL		/* the epoch second of window 0 */
#define IP(a, b, c, d) ((__u32)(a) << 24 | (__u32)(b) << 16 | (__u32)(c) << 8 | (__u32)(d))
#define ATTACKER IP(203, 0, 113, 7)
#define QUIET IP(203, 0, 113, 9)
#define ORDINARY_HOSTS 200
#define ORDINARY_PACKETS 10
#define NET24 IP(198, 51, 100, 0)

struct ctx {
	char path[64];
	struct fs_sketch_params params;
	struct fs_hash_key hk;
	struct fs_sketch s;
	bool sketch_on;
	struct fsd_policy_state ps;
	struct fsd_blocklist bl;
	struct fsd_policy_block out;
	unsigned int window_sec;
};

/* One window's decisions, as the policy logged them. */
struct seen {
	size_t n;
	enum fsd_policy_action act[FSD_POLICY_LOG];
	struct fs_cidr key[FSD_POLICY_LOG];
};

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/* A policy of text; the sketch allocated with what it turned on. */
static void start(struct ctx *c, const char *text, bool dry_run, unsigned int window_sec)
{
	struct fs_hash_secret secret = { .k0 = 0x243f6a8885a308d3ULL, .k1 = 0x13198a2e03707344ULL };
	char msg[256] = "";
	int fd;

	memset(c, 0, sizeof(*c));
	snprintf(c->path, sizeof(c->path), "/tmp/test_policy.XXXXXX");
	fd = mkstemp(c->path);
	assert_true(fd >= 0);
	close(fd);
	write_file(c->path, text);
	fs_params_init(&c->params, 4, 11, 12, 0, &secret);
	fs_hash_key_derive(&secret, &c->hk);
	if (fsd_policy_start(&c->ps, c->path, dry_run, &c->params, msg, sizeof(msg)))
		fail_msg("start: %s", msg);
	assert_int_equal(fs_sketch_init(&c->s, &c->params), 0);
	c->sketch_on = true;
	c->bl.max = 100000;
	c->window_sec = window_sec;
}

static void stop(struct ctx *c)
{
	fsd_policy_stop(&c->ps);
	if (c->sketch_on)
		fs_sketch_free(&c->s);
	unlink(c->path);
}

/* times packets of (src, dst, dport) into the window's sketch, as one
 * CPU's datapath would count them. */
static void send(struct ctx *c, __u32 src, __u32 dst, __u16 dport, unsigned int times)
{
	struct fs_flow_key k = { .family = FS_FAMILY_IPV4, .proto = 17 };
	struct fs_prefix_params pp;
	struct fs_spread_params sp;
	struct fs_packet_hashes h;
	__u32 s = htobe32(src), d = htobe32(dst);
	unsigned int i;

	fs_params_prefix(&c->params, &pp);
	fs_params_spread(&c->params, &sp);
	memcpy(k.src, &s, 4);
	memcpy(k.dst, &d, 4);
	k.sport = htobe16(40000);
	k.dport = htobe16(dport);
	fs_packet_hash(&k, &c->hk, &h);
	for (i = 0; i < times; i++) {
		if (pp.depth)
			fs_prefix_update(c->s.prefix, &pp, &c->hk, &k, &h, c->s.totals.packets, 100);
		if (sp.depth)
			fs_spread_update(c->s.spread, &sp, &k, &h);
		fs_hll_register_max(&c->s.hll[(FS_HLL_FLOWS << c->params.hll_p) |
					      fs_hll_index(h.flow, c->params.hll_p)],
				    fs_hll_rank(h.flow, c->params.hll_p));
		c->s.totals.packets++;
		c->s.totals.bytes += 100;
	}
}

/* The background every window has: ORDINARY_HOSTS sources of 10.0.0.0/16
 * (from .1, none in 198.51.100.0/24), ORDINARY_PACKETS each, one peer each. */
static void ordinary(struct ctx *c)
{
	unsigned int i;

	for (i = 0; i < ORDINARY_HOSTS; i++)
		send(c, IP(10, 0, i / 250, 1 + i % 250), IP(172, 16, 0, 1), 443, ORDINARY_PACKETS);
}

/* Window seq: its sketch handed to the policy; what it decided into *w. */
static void tick(struct ctx *c, __u64 seq, bool can_block, struct seen *w)
{
	struct fsd_policy_input in = {
		.sketch = &c->s, .seq = seq, .params = &c->params, .hash_key = &c->hk,
		.window_sec = c->window_sec, .now = T0 + (__s64)(seq * c->window_sec),
		.now_ms = (__s64)(seq * c->window_sec * 1000), .can_block = can_block,
	};
	__u64 before = 0, after = 0;
	size_t i;

	for (i = 0; i < FSD_ACT_COUNT; i++)
		before += c->ps.count[i];
	fsd_policy_tick(&c->ps, &in, &c->bl, &c->out);
	for (i = 0; i < FSD_ACT_COUNT; i++)
		after += c->ps.count[i];
	assert_true(after - before <= FSD_POLICY_LOG);
	w->n = after - before;
	for (i = 0; i < w->n; i++) {
		const struct fsd_policy_decision *d =
			&c->ps.log[(c->ps.log_next + FSD_POLICY_LOG - w->n + i) % FSD_POLICY_LOG];

		w->act[i] = d->action;
		w->key[i] = d->key;
	}
	fs_sketch_reset(&c->s);
}

static struct fs_cidr host(__u32 a)
{
	struct fs_cidr k = { .family = FS_FAMILY_IPV4, .len = 32 };
	__u32 be = htobe32(a);

	memcpy(k.addr, &be, 4);
	return k;
}

static struct fs_cidr net24(__u32 a)
{
	struct fs_cidr k = host(a & 0xffffff00);

	k.len = 24;
	return k;
}

/* The least lower end prefix.h's bounds allow a source of x packets in a
 * window of n packets (see the top): a rate a second over window_sec. */
static double least_low_rate(const struct ctx *c, double x, double n)
{
	struct fs_prefix_params pp;
	double v, w, cterm, u;

	fs_params_prefix(&c->params, &pp);
	v = ldexp(8, (int)pp.skip_shift);
	w = ldexp(1, (int)pp.log2_width);
	cterm = ceil(4 * M_E * n / w);
	u = ceil(3 * sqrt((v - 1) * n));
	return (x - 6 * sqrt((v - 1) * x) - cterm - u) / c->window_sec;
}

/* The greatest lower end of a source of x packets (collisions within C). */
static double most_low_rate(const struct ctx *c, double x)
{
	struct fs_prefix_params pp;

	fs_params_prefix(&c->params, &pp);
	return (x + 6 * sqrt((ldexp(8, (int)pp.skip_shift) - 1) * x)) / c->window_sec;
}

/* The window of a key above from s0 on is decided: policy.h's "for". */
static __u64 decided_at(__u64 s0, unsigned int hold_sec, unsigned int window_sec)
{
	return s0 + (hold_sec + window_sec - 1) / window_sec - 1;
}

static size_t count_of(const struct seen *w, enum fsd_policy_action a, const struct fs_cidr *k)
{
	size_t i, n = 0;

	for (i = 0; i < w->n; i++)
		n += w->act[i] == a && (!k || fs_cidr_equal(&w->key[i], k));
	return n;
}

/* ---- 1, 4: a source above, blocked once at its window, or dry run ------- */

#define RATE_RULE "block src if packets > 10k/s for %us ban %us\n"
#define RATE_THRESHOLD 10000.0
#define ATTACK_PPS 20000

static void above_in_every_window(bool dry_run, unsigned int window_sec, unsigned int hold,
				  unsigned int ban)
{
	struct fs_cidr a = host(ATTACKER);
	char text[128], canon[FSD_POLICY_RULE_TEXT_MAX];
	struct ctx c;
	__u64 k, seq, last;
	double n = (double)(ATTACK_PPS + ORDINARY_HOSTS * ORDINARY_PACKETS) * window_sec;

	snprintf(text, sizeof(text), RATE_RULE, hold, ban);
	start(&c, text, dry_run, window_sec);
	assert_int_not_equal(c.params.prefix_log2w, 0);	/* the rule turned it on */
	/* The rule's canonical text, written by hand from the grammar. */
	snprintf(canon, sizeof(canon), "block src if packets > 10k/s for %us ban %us", hold, ban);
	assert_true(least_low_rate(&c, (double)ATTACK_PPS * window_sec, n) > RATE_THRESHOLD);
	k = decided_at(1, hold, window_sec);
	/* Again once the ban has run out: the first window with now >= now_k + ban. */
	last = k + (ban + window_sec - 1) / window_sec;
	for (seq = 1; seq <= last; seq++) {
		struct seen w;

		send(&c, ATTACKER, IP(192, 0, 2, 1), 53, ATTACK_PPS * window_sec);
		ordinary(&c);
		tick(&c, seq, true, &w);
		if (seq == k || seq == last) {
			assert_int_equal(w.n, 1);
			assert_int_equal(count_of(&w, dry_run ? FSD_ACT_DRY_RUN : FSD_ACT_BLOCKED, &a), 1);
			if (dry_run) {
				assert_int_equal(c.out.n, 0);
			} else {
				assert_int_equal(c.out.n, 1);
				assert_true(fs_cidr_equal(&c.out.c[0], &a));
				assert_string_equal(c.out.origin, canon);
				assert_int_equal(c.out.ban_sec, ban);
			}
		} else {
			if (w.n)
				fail_msg("window %llu: %zu decisions, expected none (decided at %llu)",
					 (unsigned long long)seq, w.n, (unsigned long long)k);
			assert_int_equal(c.out.n, 0);
		}
	}
	assert_int_equal(c.ps.count[dry_run ? FSD_ACT_DRY_RUN : FSD_ACT_BLOCKED], 2);
	assert_int_equal(c.ps.count[dry_run ? FSD_ACT_BLOCKED : FSD_ACT_DRY_RUN], 0);
	stop(&c);
}

static void test_blocked_at_hold(void **state)
{
	(void)state;
	above_in_every_window(false, 1, 3, 10);
	above_in_every_window(false, 1, 1, 5);
	/* Two-second windows: for 3s needs two of them (4 s >= 3 s). */
	above_in_every_window(false, 2, 3, 10);
	above_in_every_window(false, 2, 4, 7);
}

static void test_dry_run(void **state)
{
	(void)state;
	above_in_every_window(true, 1, 3, 10);
	above_in_every_window(true, 2, 3, 10);
}

/* ---- 2: below, and above only every other window ------------------------ */

static void test_below_and_gaps(void **state)
{
	struct ctx c;
	__u64 seq;

	(void)state;
	start(&c, "block src if packets > 10k/s for 2s ban 10s\n", false, 1);
	assert_true(most_low_rate(&c, 2000) < RATE_THRESHOLD);
	for (seq = 1; seq <= 12; seq++) {
		struct seen w;

		send(&c, QUIET, IP(192, 0, 2, 1), 53, 2000);
		if (seq % 2)	/* above in 1, 3, 5, ...: never 2 s in a row */
			send(&c, ATTACKER, IP(192, 0, 2, 1), 53, ATTACK_PPS);
		ordinary(&c);
		if (seq % 2)
			assert_true(least_low_rate(&c, ATTACK_PPS, (double)c.s.totals.packets) >
				    RATE_THRESHOLD);
		tick(&c, seq, true, &w);
		if (w.n)
			fail_msg("window %llu: %zu decisions, expected none", (unsigned long long)seq, w.n);
		assert_int_equal(c.out.n, 0);
	}
	stop(&c);
}

/*
 * Windows the policy never saw (a seq skipped) break a hold as a window
 * below does: "consecutive windows".
 */
static void test_skipped_windows(void **state)
{
	struct ctx c;
	__u64 seq;

	(void)state;
	start(&c, "block src if packets > 10k/s for 2s ban 10s\n", false, 1);
	for (seq = 1; seq <= 11; seq += 2) {
		struct seen w;

		send(&c, ATTACKER, IP(192, 0, 2, 1), 53, ATTACK_PPS);
		ordinary(&c);
		tick(&c, seq, true, &w);
		assert_int_equal(w.n, 0);
	}
	stop(&c);
}

/*
 * A source whose estimate is surely above the rule but whose lower end is
 * surely below it: never decided, since the policy acts on the lower end.
 * The window is heavy (NEAR_BACKGROUND sources of 9,000 packets), so the
 * collision term C is large: for X packets of the near source,
 *     estimate >= X - 6 sqrt((V - 1) X) > R, and
 *     low <= X + 6 sqrt((V - 1) X) - C - 3 sqrt((V - 1) (X - 6 sqrt((V - 1) X))) < R
 * (the collisions within C, which holds with probability 1 - e^-d; the
 * secret is fixed, so the run is the same every time).
 */
#define NEAR_PACKETS 13000
#define NEAR_BACKGROUND 66
static void test_near_threshold(void **state)
{
	struct fs_cidr near = host(QUIET);
	struct fs_prefix_params pp;
	struct ctx c;
	__u64 seq;
	unsigned int i;

	(void)state;
	start(&c, "block src if packets > 10k/s for 1s ban 10s\n", false, 1);
	fs_params_prefix(&c.params, &pp);
	for (seq = 1; seq <= 3; seq++) {
		double v = ldexp(8, (int)pp.skip_shift), x = NEAR_PACKETS, n, est_low, low_high;
		struct seen w;

		send(&c, QUIET, IP(192, 0, 2, 1), 53, NEAR_PACKETS);
		for (i = 0; i < NEAR_BACKGROUND; i++)
			send(&c, IP(10, 1, 0, 1 + i), IP(172, 16, 0, 1), 443, 9000);
		n = (double)c.s.totals.packets;
		est_low = x - 6 * sqrt((v - 1) * x);
		low_high = x + 6 * sqrt((v - 1) * x) - ceil(4 * M_E * n / ldexp(1, (int)pp.log2_width)) -
			   3 * sqrt((v - 1) * est_low);
		assert_true(est_low > RATE_THRESHOLD);
		assert_true(low_high < RATE_THRESHOLD);
		tick(&c, seq, true, &w);
		assert_int_equal(count_of(&w, FSD_ACT_BLOCKED, &near), 0);
	}
	stop(&c);
}

/* ---- 3: allowed --------------------------------------------------------- */

static void test_allowed(void **state)
{
	struct fs_cidr a = host(ATTACKER), p = net24(NET24), a24 = net24(ATTACKER);
	struct ctx c;
	__u64 seq;
	unsigned int i;

	(void)state;
	/* The /24's hosts are light (100 packets each, far below 10k/s as
	 * sources), together 20,000 a window. */
	start(&c, "block src if packets > 10k/s for 2s ban 10s\n"
		  "block src4/24 if packets > 10k/s for 2s ban 10s\n"
		  "allow 203.0.113.0/28\n"
		  "allow 198.51.100.77/32\n", false, 1);
	for (seq = 1; seq <= 6; seq++) {
		struct seen w;

		send(&c, ATTACKER, IP(192, 0, 2, 1), 53, ATTACK_PPS);
		for (i = 0; i < 200; i++)
			send(&c, NET24 | i, IP(192, 0, 2, 2), 80, 100);
		ordinary(&c);
		assert_true(least_low_rate(&c, ATTACK_PPS, (double)c.s.totals.packets) > RATE_THRESHOLD);
		assert_true(least_low_rate(&c, 200 * 100, (double)c.s.totals.packets) > RATE_THRESHOLD);
		tick(&c, seq, true, &w);
		assert_int_equal(c.out.n, 0);
		assert_int_equal(count_of(&w, FSD_ACT_BLOCKED, NULL), 0);
		if (seq == decided_at(1, 2, 1)) {
			/* Both ways of overlapping: 203.0.113.0/28 contains
			 * the attacker, the attacker's /24 (above the prefix
			 * rule too) contains it. */
			assert_int_equal(w.n, 3);
			assert_int_equal(count_of(&w, FSD_ACT_ALLOWED, &a), 1);
			assert_int_equal(count_of(&w, FSD_ACT_ALLOWED, &p), 1);
			assert_int_equal(count_of(&w, FSD_ACT_ALLOWED, &a24), 1);
		} else {
			assert_int_equal(w.n, 0);	/* once, not every window */
		}
	}
	assert_int_equal(c.ps.count[FSD_ACT_ALLOWED], 3);
	stop(&c);
}

/* ---- 5: limit ----------------------------------------------------------- */

#define LIMIT_N 5
#define LIMIT_SOURCES 12
#define LIMIT_PPS 15000
#define LIMIT_WINDOWS 40

static void test_limit(void **state)
{
	struct ctx c;
	__u64 seq, blocked = 0, k = decided_at(1, 1, 1);
	bool done[LIMIT_SOURCES] = { false };
	unsigned int i;

	(void)state;
	start(&c, "block src if packets > 5k/s for 1s ban 1h\nlimit 5/min\n", false, 1);
	for (seq = 1; seq <= LIMIT_WINDOWS; seq++) {
		struct seen w;
		size_t j;

		for (i = 0; i < LIMIT_SOURCES; i++)
			send(&c, IP(203, 0, 113, 100 + i), IP(192, 0, 2, 1), 53, LIMIT_PPS);
		ordinary(&c);
		assert_true(least_low_rate(&c, LIMIT_PPS, (double)c.s.totals.packets) > 5000);
		tick(&c, seq, true, &w);
		assert_int_equal(c.out.n, count_of(&w, FSD_ACT_BLOCKED, NULL));
		for (j = 0; j < c.out.n; j++) {
			__u32 a = be32toh(*(__u32 *)c.out.c[j].addr);

			assert_true(a >= IP(203, 0, 113, 100) && a < IP(203, 0, 113, 100 + LIMIT_SOURCES));
			assert_false(done[a - IP(203, 0, 113, 100)]);	/* once each */
			done[a - IP(203, 0, 113, 100)] = true;
		}
		blocked += c.out.n;
		/* A bucket of N tokens, refilled N every 60 s: by the end of
		 * window seq (seq - k seconds after the first decision) at most
		 * N + N (seq - k) / 60 blocks, and as many when keys wait. */
		assert_true(blocked <= LIMIT_N + LIMIT_N * (seq - k) / 60);
		assert_true(blocked + 1 >= LIMIT_N + LIMIT_N * (seq - k) / 60);
		/* Every key above and not blocked is limited, each window. */
		assert_int_equal(count_of(&w, FSD_ACT_LIMITED, NULL), LIMIT_SOURCES - blocked);
	}
	assert_int_equal(c.ps.count[FSD_ACT_BLOCKED], blocked);
	assert_true(c.ps.count[FSD_ACT_LIMITED] > 0);
	/* A quiet 200 s (windows the policy does not see), then new sources:
	 * the bucket holds N tokens at most, however long it refilled. */
	for (seq = LIMIT_WINDOWS + 200; seq <= LIMIT_WINDOWS + 202; seq++) {
		struct seen w;

		for (i = 0; i < LIMIT_SOURCES; i++)
			send(&c, IP(203, 0, 113, 150 + i), IP(192, 0, 2, 1), 53, LIMIT_PPS);
		ordinary(&c);
		tick(&c, seq, true, &w);
		assert_int_equal(c.out.n, seq == LIMIT_WINDOWS + 200 ? LIMIT_N : 0);
	}
	stop(&c);
}

/* ---- 6: a change running ------------------------------------------------ */

static void test_can_block(void **state)
{
	struct fs_cidr a = host(ATTACKER);
	struct ctx c;
	__u64 seq, k = decided_at(1, 2, 1);

	(void)state;
	start(&c, "block src if packets > 10k/s for 2s ban 10s\n", false, 1);
	for (seq = 1; seq <= k + 3; seq++) {
		struct seen w;

		send(&c, ATTACKER, IP(192, 0, 2, 1), 53, ATTACK_PPS);
		ordinary(&c);
		tick(&c, seq, seq != k, &w);
		if (seq == k + 1) {
			assert_int_equal(count_of(&w, FSD_ACT_BLOCKED, &a), 1);
			assert_int_equal(c.out.n, 1);
		} else {
			assert_int_equal(w.n, 0);
			assert_int_equal(c.out.n, 0);
		}
	}
	stop(&c);
}

/* ---- 7: reload ---------------------------------------------------------- */

static void test_reload(void **state)
{
	struct fs_cidr a = host(ATTACKER);
	char msg[256];
	struct ctx c;
	__u64 seq, k = decided_at(1, 3, 1);

	(void)state;
	start(&c, "block src if packets > 10k/s for 3s ban 10s\n", false, 1);
	for (seq = 1; seq <= k + 2; seq++) {
		struct seen w;

		if (seq == 2) {
			write_file(c.path, "block src if packets > 10q/s for 3s ban 10s\n");
			assert_true(fsd_policy_reload(&c.ps, &c.params, msg, sizeof(msg)) < 0);
			assert_non_null(strstr(msg, c.path));
			assert_int_equal(c.ps.reload_failures, 1);
			assert_int_equal(c.ps.reloads, 0);
			assert_int_equal(c.ps.pol.nrules, 1);
		}
		if (seq == 3) {
			/* A rule that needs a sketch the datapath does not keep
			 * (the spread sketch was never turned on): refused. */
			write_file(c.path, "block src if packets > 10k/s for 3s ban 10s\n"
					   "block src if spread > 1000 for 1s ban 10s\n");
			assert_true(fsd_policy_reload(&c.ps, &c.params, msg, sizeof(msg)) < 0);
			assert_int_equal(c.ps.reload_failures, 2);
			assert_int_equal(c.ps.pol.nrules, 1);
			/* The same rule written otherwise, and one more. */
			write_file(c.path, "# again\nblock src if packets > 10000/s for 3 ban 10\n"
					   "block src4/24 if packets > 1M/s for 1s ban 10s\n");
			if (fsd_policy_reload(&c.ps, &c.params, msg, sizeof(msg)))
				fail_msg("reload: %s", msg);
			assert_int_equal(c.ps.reloads, 1);
			assert_int_equal(c.ps.reload_failures, 2);
			assert_int_equal(c.ps.pol.nrules, 2);
		}
		send(&c, ATTACKER, IP(192, 0, 2, 1), 53, ATTACK_PPS);
		ordinary(&c);
		tick(&c, seq, true, &w);
		if (seq == k) {
			assert_int_equal(w.n, 1);
			assert_int_equal(count_of(&w, FSD_ACT_BLOCKED, &a), 1);
			assert_string_equal(c.out.origin, "block src if packets > 10k/s for 3s ban 10s");
		} else {
			assert_int_equal(w.n, 0);
		}
	}
	stop(&c);
}

/* A reload that changes the rule's text starts its hold anew. */
static void test_reload_other_rule(void **state)
{
	char msg[256];
	struct ctx c;
	__u64 seq, k;

	(void)state;
	start(&c, "block src if packets > 10k/s for 3s ban 10s\n", false, 1);
	k = decided_at(3, 3, 1);	/* held from window 3, the new rule's first */
	for (seq = 1; seq <= k; seq++) {
		struct seen w;

		if (seq == 3) {
			write_file(c.path, "block src if packets > 9k/s for 3s ban 10s\n");
			if (fsd_policy_reload(&c.ps, &c.params, msg, sizeof(msg)))
				fail_msg("reload: %s", msg);
		}
		send(&c, ATTACKER, IP(192, 0, 2, 1), 53, ATTACK_PPS);
		ordinary(&c);
		tick(&c, seq, true, &w);
		assert_int_equal(w.n, seq == k);
	}
	stop(&c);
}

/* ---- 8: spread ---------------------------------------------------------- */

#define SCAN_HOSTS 1250
#define SCAN_PORTS 4
#define SPREAD_K 1000.0

static void test_spread(void **state)
{
	struct fs_cidr scanner = host(IP(203, 0, 113, 66));
	struct fs_spread_params sp;
	struct ctx c;
	__u64 seq;
	unsigned int i;

	(void)state;
	start(&c, "block src if spread > 1000 for 1s ban 10s\n", false, 1);
	assert_int_not_equal(c.params.spread_log2w, 0);
	fs_params_spread(&c.params, &sp);
	for (seq = 1; seq <= 3; seq++) {
		double n = SCAN_HOSTS * SCAN_PORTS, f, est, low;
		struct seen w;

		for (i = 0; i < SCAN_HOSTS * SCAN_PORTS; i++)
			send(&c, IP(203, 0, 113, 66), IP(172, 20, i / SCAN_PORTS / 250,
				1 + i / SCAN_PORTS % 250), (__u16)(22 + i % SCAN_PORTS), 1);
		ordinary(&c);
		/* The least lower end spread.h's bounds allow (see the top). */
		f = (n + ORDINARY_HOSTS) * (1 + 6 * 1.04 / sqrt(ldexp(1, c.params.hll_p)));
		est = n * (1 - 4 * fs_spread_sigma(&sp, n));
		low = floor(est / (1 + 3 * fs_spread_sigma(&sp, est)) -
			    ceil(M_E * f / ldexp(1, (int)sp.log2_width)));
		assert_true(low > SPREAD_K);
		tick(&c, seq, true, &w);
		if (seq == 1) {
			/* The scanner only: an ordinary source has one peer. */
			assert_int_equal(w.n, 1);
			assert_int_equal(count_of(&w, FSD_ACT_BLOCKED, &scanner), 1);
			assert_int_equal(c.out.n, 1);
			assert_string_equal(c.out.origin, "block src if spread > 1k for 1s ban 10s");
		} else {
			assert_int_equal(w.n, 0);
		}
	}
	stop(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_blocked_at_hold),
		cmocka_unit_test(test_dry_run),
		cmocka_unit_test(test_below_and_gaps),
		cmocka_unit_test(test_skipped_windows),
		cmocka_unit_test(test_near_threshold),
		cmocka_unit_test(test_allowed),
		cmocka_unit_test(test_limit),
		cmocka_unit_test(test_can_block),
		cmocka_unit_test(test_reload),
		cmocka_unit_test(test_reload_other_rule),
		cmocka_unit_test(test_spread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
