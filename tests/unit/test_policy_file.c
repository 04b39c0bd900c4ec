// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_policy_file.c - flowsketchd's policy file (policy_file.h): good
 * files parse to the structs written out by hand here (the issue's
 * example among them), each rule's canonical text is the one written
 * here and parses back to the same rule, thresholds are the double
 * nearest the number written (strtod of the same number in exponent
 * form, glibc's correctly rounded conversion, is the oracle), bad lines
 * are refused with the line and the reason, the caps hold at their
 * edges, and a file that fails leaves nothing behind.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "policy/policy_file.h"
#include "rng.h"

#define SRC FS_PREFIX_SRC
#define DST FS_PREFIX_DST
#define V4 FS_FAMILY_IPV4
#define V6 FS_FAMILY_IPV6
#define PKT FSD_POLICY_PACKETS
#define BYT FSD_POLICY_BYTES
#define SPR FSD_POLICY_SPREAD

#define DAY 86400u

struct good_file {
	const char *text;
	size_t nrules;
	struct fsd_policy_rule rule[4];
	size_t nallow;
	struct fs_cidr allow[4];
	__u32 limit_n, limit_sec;
	bool needs_prefixes, needs_spread;
};

#define RULE(s, f, l, m, t, hold, ban, ln) \
	{ .key = { (s), (f), (l) }, .metric = (m), .threshold = (t), .hold_sec = (hold), \
	  .ban_sec = (ban), .line = (ln) }

/* The issue's example, as the issue writes it. */
static const char issue_example[] =
	"# block KEY if METRIC > VALUE for DURATION ban DURATION\n"
	"block src      if packets > 50k/s for 3s  ban 10m\n"
	"block src4/24  if bytes   > 1G/s  for 10s ban 1h\n"
	"block src      if spread  > 1000  for 5s  ban 30m\n"
	"allow 192.0.2.0/24        # never blocked automatically\n"
	"limit 100/min             # at most 100 new automatic blocks a minute\n";

static const struct good_file goods[] = {
	{ issue_example, 3,
	  { RULE(SRC, 0, 0, PKT, 50000, 3, 600, 2), RULE(SRC, V4, 24, BYT, 1e9, 10, 3600, 3),
	    RULE(SRC, 0, 0, SPR, 1000, 5, 1800, 4) },
	  1, { { V4, 24, { 192, 0, 2, 0 } } }, 100, 60, true, true },
	{ "", 0, { }, 0, { }, 100, 60, false, false },
	{ "# only a comment\n\n   \t\n#\n", 0, { }, 0, { }, 100, 60, false, false },
	{ "limit 5/s", 0, { }, 0, { }, 5, 1, false, false },
	{ "limit 1000000/h\n", 0, { }, 0, { }, 1000000, 3600, false, false },
	{ "limit 1/min\r\n", 0, { }, 0, { }, 1, 60, false, false },
	{ "\n\nblock src6/64 if packets > 1.5k/s for 90s ban 7d#tight\n", 1,
	  { RULE(SRC, V6, 64, PKT, 1500, 90, 7 * DAY, 3) }, 0, { }, 100, 60, true, false },
	{ "\tblock  src\tif spread > 2.5M for 1d ban 365d", 1,
	  { RULE(SRC, 0, 0, SPR, 2.5e6, DAY, 365 * DAY, 1) }, 0, { }, 100, 60, false, true },
	{ "block src if packets > 0.5/s for 3 ban 600\r\n"
	  "block src if bytes > 0.1/s for 1s ban 1s\n"
	  "block src6/48 if packets > 3.14159/s for 59s ban 1d\n"
	  "block src4/32 if packets > 999999999999999/s for 86400s ban 31536000s\n", 4,
	  { RULE(SRC, 0, 0, PKT, 0.5, 3, 600, 1), RULE(SRC, 0, 0, BYT, 0.1, 1, 1, 2),
	    RULE(SRC, V6, 48, PKT, 3.14159, 59, DAY, 3),
	    RULE(SRC, V4, 32, PKT, 999999999999999.0, DAY, 365 * DAY, 4) },
	  0, { }, 100, 60, true, false },
	/* Sorted by family, length, address (cidr.h), the repeat dropped. */
	{ "allow 2001:db8::/32\nallow 10.0.0.0/8\nlimit 7/h\nallow 192.0.2.1 # a host\n"
	  "allow 10.0.0.0/8\n", 0, { }, 3,
	  { { V4, 8, { 10 } }, { V4, 32, { 192, 0, 2, 1 } }, { V6, 32, { 0x20, 0x01, 0x0d, 0xb8 } } },
	  7, 3600, false, false },
};

/* Each rule's text and the canonical text it formats to. */
static const struct {
	const char *text, *canonical;
} formats[] = {
	{ "block src4/24 if bytes > 1G/s for 10s ban 1h", "block src4/24 if bytes > 1G/s for 10s ban 1h" },
	{ "block src if packets > 50000/s for 180s ban 600", "block src if packets > 50k/s for 3m ban 10m" },
	{ "block src6/64 if packets > 1500/s for 90s ban 7d", "block src6/64 if packets > 1.5k/s for 90s ban 7d" },
	{ "block src if spread > 2.5M for 24h ban 365d", "block src if spread > 2.5M for 1d ban 365d" },
	{ "block src if spread > 0.5k for 1s ban 1s", "block src if spread > 500 for 1s ban 1s" },
	{ "block src if packets > 00.50/s for 1s ban 1s", "block src if packets > 0.5/s for 1s ban 1s" },
	{ "block src if bytes > 0.001k/s for 1s ban 1s", "block src if bytes > 1/s for 1s ban 1s" },
	{ "block src if bytes > 0.000001k/s for 1s ban 1s", "block src if bytes > 0.001/s for 1s ban 1s" },
	{ "block src if bytes > 0.00000000000001/s for 1s ban 1s",
	  "block src if bytes > 0.00000000000001/s for 1s ban 1s" },
	{ "block src if bytes > 3.14159/s for 1s ban 1s", "block src if bytes > 3.14159/s for 1s ban 1s" },
	{ "block src4/8 if bytes > 12000G/s for 1s ban 1s", "block src4/8 if bytes > 12T/s for 1s ban 1s" },
	{ "block src6/128 if packets > 999999999999999T/s for 1s ban 1s",
	  "block src6/128 if packets > 999999999999999T/s for 1s ban 1s" },
	{ "block src if packets > 999999999999999/s for 1s ban 1s",
	  "block src if packets > 999.999999999999T/s for 1s ban 1s" },
	{ "block src if packets > 1234567/s for 1s ban 1s", "block src if packets > 1.234567M/s for 1s ban 1s" },
	{ "block src if packets > 999.5/s for 1s ban 1s", "block src if packets > 999.5/s for 1s ban 1s" },
};

/* Bad files: the line named and a word of the reason. */
static const struct {
	const char *text;
	unsigned int line;
	const char *why;
} bads[] = {
	{ "blok src if packets > 1/s for 1s ban 1s", 1, "\"blok\" is not a statement" },
	{ "Block src if packets > 1/s for 1s ban 1s", 1, "not a statement" },
	{ "block", 1, "missing KEY" },
	{ "block srcx if packets > 1/s for 1s ban 1s", 1, "\"srcx\" is not a key" },
	{ "block src4/7 if packets > 1/s for 1s ban 1s", 1, "IPv4 lengths" },
	{ "block src when packets > 1/s for 1s ban 1s", 1, "expected \"if\" after \"src\", not \"when\"" },
	{ "block src", 1, "missing \"if\"" },
	{ "block src if", 1, "missing METRIC" },
	{ "block src if pkts > 1/s for 1s ban 1s", 1, "\"pkts\" is not a metric" },
	{ "block src if packets >= 1/s for 1s ban 1s", 1, "expected \">\"" },
	{ "block src if packets", 1, "missing \">\"" },
	{ "block src if packets >", 1, "missing VALUE" },
	{ "block src if packets > 50k for 1s ban 1s", 1, "\"50k\" is not a rate" },
	{ "block src if packets > 0/s for 1s ban 1s", 1, "above 0" },
	{ "block src if packets > 0.000k/s for 1s ban 1s", 1, "above 0" },
	{ "block src if packets > -5/s for 1s ban 1s", 1, "not a rate" },
	{ "block src if packets > +5/s for 1s ban 1s", 1, "not a rate" },
	{ "block src if packets > inf/s for 1s ban 1s", 1, "not a rate" },
	{ "block src if packets > nan/s for 1s ban 1s", 1, "not a rate" },
	{ "block src if packets > 0x10/s for 1s ban 1s", 1, "not a rate" },
	{ "block src if packets > 1e3/s for 1s ban 1s", 1, "not a rate" },
	{ "block src if packets > 5./s for 1s ban 1s", 1, "not a rate" },
	{ "block src if packets > .5/s for 1s ban 1s", 1, "not a rate" },
	{ "block src if packets > 1.2.3/s for 1s ban 1s", 1, "not a rate" },
	{ "block src if packets > 1,5/s for 1s ban 1s", 1, "not a rate" },
	{ "block src if packets > 50K/s for 1s ban 1s", 1, "not a rate" },
	{ "block src if packets > 50kk/s for 1s ban 1s", 1, "not a rate" },
	{ "block src if packets > 50k/s/s for 1s ban 1s", 1, "not a rate" },
	{ "block src if packets > 50k/min for 1s ban 1s", 1, "not a rate" },
	{ "block src if bytes > 50k/ for 1s ban 1s", 1, "not a rate" },
	{ "block src if packets > 1234567890123456/s for 1s ban 1s", 1, "at most 15 digits" },
	{ "block src if packets > 1234567.890123456/s for 1s ban 1s", 1, "at most 15 digits" },
	{ "block src if spread > 1000/s for 1s ban 1s", 1, "\"1000/s\" is not a count of peers" },
	{ "block src if spread > 0 for 1s ban 1s", 1, "above 0" },
	{ "block src4/24 if spread > 1000 for 1s ban 1s", 1, "prefix key" },
	{ "block src6/128 if spread > 1000 for 1s ban 1s", 1, "spread takes src or dst" },
	{ "block dst if packets > 1/s for 1s ban 1s", 1, "the blocklist drops sources" },
	{ "block dst4/24 if bytes > 1/s for 1s ban 1s", 1, "\"dst4/24\": the blocklist drops sources" },
	{ "block dst if spread > 1000 for 1s ban 1s", 1, "a rule's key is src, src4/N or src6/N" },
	{ "block src if packets > 1/s ban 1s for 1s", 1, "expected \"for\" after \"1/s\", not \"ban\"" },
	{ "block src if packets > 1/s", 1, "missing \"for\"" },
	{ "block src if packets > 1/s for", 1, "missing DURATION" },
	{ "block src if packets > 1/s for 0s ban 1s", 1, "\"0s\" is not a duration" },
	{ "block src if packets > 1/s for 1.5s ban 1s", 1, "not a duration" },
	{ "block src if packets > 1/s for 2d ban 1s", 1, "above 1d" },
	{ "block src if packets > 1/s for 86401 ban 1s", 1, "above 1d" },
	{ "block src if packets > 1/s for 1s ban 366d", 1, "above 365d" },
	{ "block src if packets > 1/s for 1s ban 31536001s", 1, "above 365d" },
	{ "block src if packets > 1/s for 1s ban 10x", 1, "\"10x\" is not a duration" },
	{ "block src if packets > 1/s for 1s", 1, "missing \"ban\"" },
	{ "block src if packets > 1/s for 1s ban", 1, "missing DURATION" },
	{ "block src if packets > 1/s for 1s ban 1s extra", 1, "unexpected \"extra\"" },
	{ "block src if packets > 1/s for 1s ban 1s block", 1, "unexpected \"block\"" },
	/* A comment hides the rest of a line, keywords included. */
	{ "block src if packets > 1/s # for 1s ban 1s", 1, "missing \"for\"" },
	{ "block src if packets > 1/s for 1s ban 1s\nallow 10.0.0.0/8\n"
	  "block src if packets > 2/s for 2s ban 2s\n", 3, "the same key and metric as line 1" },
	{ "block src4/24 if bytes > 1/s for 1s ban 1s\n\n\n\nblock src4/24 if bytes > 1/s for 1s ban 1s",
	  5, "as line 1" },
	{ "allow", 1, "missing CIDR" },
	{ "allow 10.0.0.1/8", 1, "host bits" },
	{ "allow 10.0.0.0/33", 1, "not a CIDR" },
	{ "allow example.com", 1, "\"example.com\" is not a CIDR" },
	{ "allow 10.0.0.0/8 10.1.0.0/16", 1, "unexpected \"10.1.0.0/16\"" },
	{ "allow 10.0.0.0/8,10.1.0.0/16", 1, "not a CIDR" },
	{ "limit", 1, "missing N/UNIT" },
	{ "limit 0/min", 1, "\"0/min\" is not a limit" },
	{ "limit 1000001/min", 1, "not a limit" },
	{ "limit 123456789/s", 1, "not a limit" },
	{ "limit 100/m", 1, "not a limit" },
	{ "limit 100/d", 1, "not a limit" },
	{ "limit 100", 1, "not a limit" },
	{ "limit /min", 1, "not a limit" },
	{ "limit -1/s", 1, "not a limit" },
	{ "limit 1.5/s", 1, "not a limit" },
	{ "limit 100/min/min", 1, "not a limit" },
	{ "limit 100/min extra", 1, "unexpected \"extra\"" },
	{ "limit 100/min\n# two\nlimit 5/s\n", 3, "a second limit (the first is on line 1)" },
	{ "allow 10.0.0.0/8\nallow 10.0.0.0/8\r\nallow 10.0.0.1/24\n", 3, "host bits" },
	/* Bytes outside printable ASCII are shown as '?'. */
	{ "\x01\x7f\xc3\xa9 src", 1, "\"????\" is not a statement" },
	{ "block src if packets > 1\x1b[2J/s for 1s ban 1s", 1, "\"1?[2J/s\" is not a rate" },
};

static int parse(const char *text, size_t len, struct fsd_policy *p, char *msg, size_t n)
{
	return fsd_policy_parse(text, len, "policy", p, msg, n);
}

static void assert_zeroed(const struct fsd_policy *p)
{
	static const struct fsd_policy zero;

	assert_memory_equal(p, &zero, sizeof(zero));
}

static void assert_rule(const struct fsd_policy_rule *got, const struct fsd_policy_rule *want,
			bool line)
{
	assert_int_equal(got->key.side, want->key.side);
	assert_int_equal(got->key.family, want->key.family);
	assert_int_equal(got->key.len, want->key.len);
	assert_int_equal(got->metric, want->metric);
	if (got->threshold != want->threshold) {
		print_error("threshold %.17g, not %.17g\n", got->threshold, want->threshold);
		fail();
	}
	assert_int_equal(got->hold_sec, want->hold_sec);
	assert_int_equal(got->ban_sec, want->ban_sec);
	if (line)
		assert_int_equal(got->line, want->line);
}

static void test_good(void **state)
{
	size_t i, j;

	(void)state;
	for (i = 0; i < sizeof(goods) / sizeof(goods[0]); i++) {
		const struct good_file *g = &goods[i];
		struct fsd_policy p;
		char msg[256];

		if (parse(g->text, strlen(g->text), &p, msg, sizeof(msg))) {
			print_error("file %zu refused: %s\n", i, msg);
			fail();
		}
		assert_string_equal(msg, "");
		assert_int_equal(p.nrules, g->nrules);
		for (j = 0; j < g->nrules; j++)
			assert_rule(&p.rule[j], &g->rule[j], true);
		assert_int_equal(p.nallow, g->nallow);
		for (j = 0; j < g->nallow; j++)
			assert_memory_equal(&p.allow[j], &g->allow[j], sizeof(g->allow[j]));
		assert_int_equal(p.limit_n, g->limit_n);
		assert_int_equal(p.limit_sec, g->limit_sec);
		assert_int_equal(p.needs_prefixes, g->needs_prefixes);
		assert_int_equal(p.needs_spread, g->needs_spread);
		fsd_policy_free(&p);
		assert_zeroed(&p);
		/* Freeing again is harmless. */
		fsd_policy_free(&p);
	}
}

/* text need not end in a NUL: the parser reads len bytes, no further. */
static void test_not_terminated(void **state)
{
	static const char line[] = "block src if packets > 50k/s for 3s ban 10m";
	size_t n = sizeof(line) - 1;
	struct fsd_policy p;
	char *text, msg[256];

	(void)state;
	/* "1" after the end would make the ban 10m1 (not a duration). */
	text = malloc(n + 1);
	assert_non_null(text);
	memcpy(text, line, n);
	text[n] = '1';
	assert_int_equal(parse(text, n, &p, msg, sizeof(msg)), 0);
	assert_int_equal(p.nrules, 1);
	assert_int_equal(p.rule[0].ban_sec, 600);
	fsd_policy_free(&p);
	/* A length short of the line cuts it: "ban 10" is 10 s. */
	assert_int_equal(parse(text, n - 1, &p, msg, sizeof(msg)), 0);
	assert_int_equal(p.rule[0].ban_sec, 10);
	fsd_policy_free(&p);
	free(text);
}

static void test_format(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		struct fsd_policy p, back;
		char msg[256], text[FSD_POLICY_RULE_TEXT_MAX];

		assert_int_equal(parse(formats[i].text, strlen(formats[i].text), &p, msg, sizeof(msg)), 0);
		assert_int_equal(p.nrules, 1);
		fsd_policy_rule_format(&p.rule[0], text, sizeof(text));
		assert_string_equal(text, formats[i].canonical);
		assert_int_equal(parse(text, strlen(text), &back, msg, sizeof(msg)), 0);
		assert_int_equal(back.nrules, 1);
		assert_rule(&back.rule[0], &p.rule[0], true);
		fsd_policy_free(&back);
		fsd_policy_free(&p);
	}
}

/*
 * Random values spelled as digits, a point somewhere and a suffix: the
 * threshold is strtod() of the same number in exponent form (MeE, no
 * decimal point, so no locale), and its canonical text reads back as the
 * same double and the same rule.
 */
static void test_value_roundtrip(void **state)
{
	static const char sfx[] = { 0, 'k', 'M', 'G', 'T' };
	__u64 r = 0x21d5eed0f00dULL;
	unsigned int iter;

	(void)state;
	for (iter = 0; iter < 20000; iter++) {
		unsigned int digits = 1 + (unsigned int)(rng_next(&r) % 15);
		unsigned int point = (unsigned int)(rng_next(&r) % digits);
		unsigned int k = (unsigned int)(rng_next(&r) % 5), d;
		char num[24], line[160], text[FSD_POLICY_RULE_TEXT_MAX], exp[48];
		bool spread = rng_next(&r) & 1;
		unsigned long long m = 0;
		struct fsd_policy p, back;
		char msg[256];

		/* digits digits, the last point of them after the point. */
		for (d = 0; d < digits; d++)
			num[d] = (char)('0' + rng_next(&r) % 10);
		if (rng_next(&r) % 4 == 0)
			num[0] = '0';
		num[digits] = 0;
		for (d = 0; d < digits; d++)
			m = m * 10 + (unsigned long long)(num[d] - '0');
		if (!m)
			continue;
		snprintf(line, sizeof(line), "block %s if %s > %.*s%s%s%s%s for 1s ban 1s",
			 spread ? "src" : "src4/16", spread ? "spread" : "bytes",
			 (int)(digits - point), num, point ? "." : "", num + digits - point,
			 (char[2]){ sfx[k], 0 }, spread ? "" : "/s");
		snprintf(exp, sizeof(exp), "%llue%d", m, 3 * (int)k - (int)point);
		if (parse(line, strlen(line), &p, msg, sizeof(msg))) {
			print_error("%s: %s\n", line, msg);
			fail();
		}
		if (p.rule[0].threshold != strtod(exp, NULL)) {
			print_error("%s: %.17g, not %s\n", line, p.rule[0].threshold, exp);
			fail();
		}
		fsd_policy_rule_format(&p.rule[0], text, sizeof(text));
		if (parse(text, strlen(text), &back, msg, sizeof(msg))) {
			print_error("%s -> %s: %s\n", line, text, msg);
			fail();
		}
		assert_rule(&back.rule[0], &p.rule[0], true);
		fsd_policy_free(&back);
		fsd_policy_free(&p);
	}
}

static void test_bad(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		char msg[256], head[32];
		struct fsd_policy p;
		size_t j;
		int err;

		memset(&p, 0xa5, sizeof(p));
		err = parse(bads[i].text, strlen(bads[i].text), &p, msg, sizeof(msg));
		snprintf(head, sizeof(head), "policy:%u: ", bads[i].line);
		if (err != -EINVAL || strncmp(msg, head, strlen(head)) || !strstr(msg, bads[i].why)) {
			print_error("%s\n  gave %d \"%s\", not %s...%s\n", bads[i].text, err, msg,
				    head, bads[i].why);
			fail();
		}
		/* One line of printable text. */
		for (j = 0; msg[j]; j++)
			assert_true(msg[j] >= 0x20 && msg[j] < 0x7f);
		assert_zeroed(&p);
	}
}

/* The issue's wording of an error, whole. */
static void test_message(void **state)
{
	static const char text[] = "limit 100/min\n\nblock src if packets > 50q/s for 3s ban 10m\n";
	struct fsd_policy p;
	char msg[256], small[12];

	(void)state;
	assert_int_equal(parse(text, strlen(text), &p, msg, sizeof(msg)), -EINVAL);
	assert_string_equal(msg,
		"policy:3: \"50q/s\" is not a rate: a number, an optional k, M, G or T, then /s");
	/* A short buffer gets what fits, terminated. */
	memset(small, 'x', sizeof(small));
	assert_int_equal(parse(text, strlen(text), &p, small, sizeof(small)), -EINVAL);
	assert_string_equal(small, "policy:3: \"");
	assert_int_equal(parse(text, strlen(text), &p, NULL, 0), -EINVAL);
	assert_zeroed(&p);
}

/* NUL bytes: refused on their line, in a comment too. */
static void test_nul(void **state)
{
	static const char in_comment[] = "allow 10.0.0.0/8\n# a\0b\n";
	static const char in_token[] = "limit 5/s\0 junk";
	struct fsd_policy p;
	char msg[256];

	(void)state;
	assert_int_equal(parse(in_comment, sizeof(in_comment) - 1, &p, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "policy:2: "));
	assert_non_null(strstr(msg, "NUL"));
	assert_int_equal(parse(in_token, sizeof(in_token) - 1, &p, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "policy:1: "));
	assert_zeroed(&p);
}

/* A line of exactly n bytes: an allow padded with a comment. */
static void pad_line(char *buf, size_t n)
{
	static const char head[] = "allow 10.0.0.0/8 #";

	memcpy(buf, head, sizeof(head) - 1);
	memset(buf + sizeof(head) - 1, 'x', n - (sizeof(head) - 1));
}

/* 1024 bytes a line without its newline; 1025 is refused naming the line. */
static void test_line_cap(void **state)
{
	char text[2 + 1025 + 1];
	struct fsd_policy p;
	char msg[256];

	(void)state;
	text[0] = '#';
	text[1] = '\n';
	pad_line(text + 2, 1024);
	text[2 + 1024] = '\n';
	assert_int_equal(parse(text, 2 + 1024 + 1, &p, msg, sizeof(msg)), 0);
	assert_int_equal(p.nallow, 1);
	fsd_policy_free(&p);
	/* Without the final newline, too. */
	assert_int_equal(parse(text, 2 + 1024, &p, msg, sizeof(msg)), 0);
	fsd_policy_free(&p);
	pad_line(text + 2, 1025);
	text[2 + 1025] = '\n';
	assert_int_equal(parse(text, sizeof(text), &p, msg, sizeof(msg)), -EINVAL);
	assert_string_equal(msg, "policy:2: longer than 1024 bytes");
	assert_zeroed(&p);
}

/* n allow lines: distinct /32s, or the same one n times. */
static char *allow_lines(unsigned int n, bool same, size_t *len)
{
	char *text = malloc((size_t)n * 32 + 1), *w = text;
	unsigned int i;

	assert_non_null(text);
	for (i = 0; i < n; i++) {
		unsigned int a = same ? 0 : i;

		w += sprintf(w, "allow 10.%u.%u.%u\n", a >> 16, (a >> 8) & 255, a & 255);
	}
	*len = (size_t)(w - text);
	return text;
}

/* 65536 allow lines, and not one more (repeats count). */
static void test_allow_cap(void **state)
{
	struct fsd_policy p;
	char msg[256], *text;
	size_t len, i;

	(void)state;
	text = allow_lines(65536, false, &len);
	assert_int_equal(parse(text, len, &p, msg, sizeof(msg)), 0);
	assert_int_equal(p.nallow, 65536);
	/* 10.0.0.0 .. 10.0.255.255 in address order: sorted. */
	for (i = 0; i < p.nallow; i++) {
		assert_int_equal(p.allow[i].addr[2], (i >> 8) & 255);
		assert_int_equal(p.allow[i].addr[3], i & 255);
	}
	fsd_policy_free(&p);
	free(text);
	text = allow_lines(65537, false, &len);
	memset(&p, 0xa5, sizeof(p));
	assert_int_equal(parse(text, len, &p, msg, sizeof(msg)), -EINVAL);
	assert_string_equal(msg, "policy:65537: more than 65536 allow lines");
	assert_zeroed(&p);
	free(text);
	text = allow_lines(65537, true, &len);
	assert_int_equal(parse(text, len, &p, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "policy:65537: "));
	free(text);
	text = allow_lines(65536, true, &len);
	assert_int_equal(parse(text, len, &p, msg, sizeof(msg)), 0);
	assert_int_equal(p.nallow, 1);
	fsd_policy_free(&p);
	free(text);
}

/* Every (KEY, METRIC) pair once: the source side's 9 keys with packets
 * and bytes, the host key with spread, 19 rules; any 20th repeats one. */
static void test_rule_cap(void **state)
{
	static const char *const keys[] = {
		"src", "src4/8", "src4/16", "src4/24", "src4/32", "src6/32", "src6/48",
		"src6/64", "src6/128",
	};
	char text[8192], msg[256], *w = text;
	struct fsd_policy p;
	size_t i;

	(void)state;
	for (i = 0; i < 9; i++) {
		w += sprintf(w, "block %s if packets > 1/s for 1s ban 1s\n", keys[i]);
		w += sprintf(w, "block %s if bytes > 1k/s for 1s ban 1s\n", keys[i]);
	}
	w += sprintf(w, "block src if spread > 10 for 1s ban 1s\n");
	assert_int_equal(parse(text, (size_t)(w - text), &p, msg, sizeof(msg)), 0);
	assert_int_equal(p.nrules, 19);
	assert_int_equal(FSD_POLICY_RULES_MAX, 19);
	assert_true(p.needs_prefixes);
	assert_true(p.needs_spread);
	for (i = 0; i < 19; i++)
		assert_int_equal(p.rule[i].line, i + 1);
	fsd_policy_free(&p);
	w += sprintf(w, "block src6/48 if bytes > 2k/s for 1s ban 1s\n");
	assert_int_equal(parse(text, (size_t)(w - text), &p, msg, sizeof(msg)), -EINVAL);
	assert_string_equal(msg, "policy:20: the same key and metric as line 14 (src6/48, bytes): one rule a pair");
}

/* A file that fails after rules and allow entries were taken: nothing in
 * *out (ASan or valgrind see that nothing leaked). */
static void test_fail_late(void **state)
{
	struct fsd_policy p;
	char msg[256], *text;
	size_t len;

	(void)state;
	text = allow_lines(1000, false, &len);
	text = realloc(text, len + 200);
	assert_non_null(text);
	len += (size_t)sprintf(text + len, "block src if packets > 1/s for 1s ban 1s\nlimit 5\n");
	memset(&p, 0xa5, sizeof(p));
	assert_int_equal(parse(text, len, &p, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "policy:1002: "));
	assert_zeroed(&p);
	free(text);
}

static void write_file(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
}

static void test_load(void **state)
{
	char dir[] = "/tmp/test_policy_file.XXXXXX", path[64], msg[512], *big;
	struct fsd_policy p;
	const size_t cap = 1 << 20;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/policy", dir);
	write_file(path, issue_example, strlen(issue_example));
	assert_int_equal(fsd_policy_load(path, &p, msg, sizeof(msg)), 0);
	assert_int_equal(p.nrules, 3);
	assert_int_equal(p.nallow, 1);
	fsd_policy_free(&p);

	write_file(path, "allow 10.0.0.0/8\nallow 10.0.0.1/8\n", 34);
	assert_int_equal(fsd_policy_load(path, &p, msg, sizeof(msg)), -EINVAL);
	assert_true(!strncmp(msg, path, strlen(path)) && !strncmp(msg + strlen(path), ":2: ", 4));
	assert_zeroed(&p);

	/* 1 MiB exactly (comment lines of 1024 bytes and their newline) is
	 * taken; a byte more is refused before it is read. */
	big = malloc(cap + 1);
	assert_non_null(big);
	memset(big, '#', cap + 1);
	for (size_t i = 1024; i < cap + 1; i += 1025)
		big[i] = '\n';
	write_file(path, big, cap);
	assert_int_equal(fsd_policy_load(path, &p, msg, sizeof(msg)), 0);
	fsd_policy_free(&p);
	write_file(path, big, cap + 1);
	assert_int_equal(fsd_policy_load(path, &p, msg, sizeof(msg)), -EFBIG);
	assert_true(!strncmp(msg, path, strlen(path)));
	free(big);

	/* Not regular files: a directory, and a FIFO (no writer: opening it
	 * to read would block without O_NONBLOCK). */
	assert_int_equal(fsd_policy_load(dir, &p, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "not a regular file"));
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(fsd_policy_load(path, &p, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "not a regular file"));
	unlink(path);

	snprintf(path, sizeof(path), "%s/none", dir);
	assert_int_equal(fsd_policy_load(path, &p, msg, sizeof(msg)), -ENOENT);
	assert_true(!strncmp(msg, path, strlen(path)));
	assert_zeroed(&p);

	snprintf(path, sizeof(path), "%s/policy", dir);
	unlink(path);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_not_terminated),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_value_roundtrip),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_message),
		cmocka_unit_test(test_nul),
		cmocka_unit_test(test_line_cap),
		cmocka_unit_test(test_allow_cap),
		cmocka_unit_test(test_rule_cap),
		cmocka_unit_test(test_fail_late),
		cmocka_unit_test(test_load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
