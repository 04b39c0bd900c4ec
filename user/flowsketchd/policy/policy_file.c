// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* policy_file.c - the mitigation policy's text (policy_file.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/smallfile.h"
#include "policy_file.h"

/* block's tokens, and one more to name what follows a complete rule. */
#define TOKENS_MAX 11
/* The most digits a VALUE has: any such integer (< 10^15 < 2^53) is a
 * double exactly, which makes the threshold one rounding of the number
 * written (value_of()). */
#define VALUE_DIGITS_MAX 15
/* Longest quoted token in a message: a line is 1 KiB. */
#define QUOTE_MAX 48

static const char block_form[] = "block KEY if METRIC > VALUE for DURATION ban DURATION";
static const char rate_form[] = "a number, an optional k, M, G or T, then /s";
static const char count_form[] = "a number and an optional k, M, G or T, without /s";
static const char duration_form[] = "a whole number above 0 and s, m, h or d (90s, 10m, 24h, 7d)";
static const char limit_form[] = "N/s, N/min or N/h, N a whole number of 1 to 1000000";

static const char *const metric_names[] = {
	[FSD_POLICY_PACKETS] = "packets",
	[FSD_POLICY_BYTES] = "bytes",
	[FSD_POLICY_SPREAD] = "spread",
};

/* 10^0 .. 10^14, each a double exactly. */
static const double ten_to[] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14,
};
/* The suffixes, by their power of 1000. */
static const char suffixes[] = { 0, 'k', 'M', 'G', 'T' };
#define SUFFIXES 5

struct parser {
	const char *name;
	unsigned int line;
	char *msg;
	size_t msg_len;
	struct fsd_policy p;
	size_t allow_cap;
	unsigned int limit_line;	/* the limit statement's, 0: none yet */
};

struct tokens {
	char *t[TOKENS_MAX];
	unsigned int n;
};

/* "NAME:LINE: " and what is wrong: -EINVAL. */
static int __attribute__((format(printf, 2, 3)))
fail(struct parser *ps, const char *fmt, ...)
{
	size_t used;
	va_list ap;
	int w;

	if (!ps->msg_len)
		return -EINVAL;
	w = snprintf(ps->msg, ps->msg_len, "%s:%u: ", ps->name, ps->line);
	used = w < 0 ? 0 : (size_t)w;
	if (used < ps->msg_len) {
		va_start(ap, fmt);
		vsnprintf(ps->msg + used, ps->msg_len - used, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/*
 * s in double quotes for a message, every byte outside printable ASCII
 * as '?' (a message is one line of text whatever the file holds), cut
 * after QUOTE_MAX bytes with "...".  buf has QUOTE_MAX + 6 bytes.
 */
static const char *quote(const char *s, char *buf)
{
	size_t i, o = 0;

	buf[o++] = '"';
	for (i = 0; s[i] && i < QUOTE_MAX; i++)
		buf[o++] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	if (s[i]) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o++] = '"';
	buf[o] = 0;
	return buf;
}

#define QUOTE_BUF (QUOTE_MAX + 6)

/*
 * The number M 10^e, rounded once to the nearest double: M < 10^15 and
 * 10^|e| (|e| <= 14) are doubles exactly, so one product or quotient
 * rounds once, and every spelling of the same number ("1.5k", "1500",
 * "01500.0") gives the same double, with no locale in the way (strtod's
 * decimal point is the locale's).
 */
static double value_of(__u64 m, int e)
{
	return e >= 0 ? (double)m * ten_to[e] : (double)m / ten_to[-e];
}

/*
 * A VALUE: digits, an optional '.' and digits, at most VALUE_DIGITS_MAX
 * of them, an optional suffix, then "/s" if rate.  0 with *v above 0,
 * or -EINVAL with *why a phrase for what is wrong beyond the form (NULL:
 * not of the form).
 */
static int value_parse(const char *s, bool rate, double *v, const char **why)
{
	unsigned int digits = 0, decimals = 0, k = 0;
	bool point = false;
	__u64 m = 0;

	*why = NULL;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; (*s >= '0' && *s <= '9') || (*s == '.' && !point); s++) {
		if (*s == '.') {
			point = true;
			/* A digit on each side of the point: "5." and ".5"
			 * are typos more often than numbers. */
			if (s[1] < '0' || s[1] > '9')
				return -EINVAL;
			continue;
		}
		if (++digits > VALUE_DIGITS_MAX) {
			*why = "at most 15 digits";
			return -EINVAL;
		}
		m = m * 10 + (__u64)(*s - '0');
		decimals += point;
	}
	if (*s) {
		for (k = 1; k < SUFFIXES; k++)
			if (*s == suffixes[k])
				break;
		if (k < SUFFIXES)
			s++;
		else
			k = 0;
	}
	if (rate ? strcmp(s, "/s") : *s != 0)
		return -EINVAL;
	if (!m) {
		*why = "the threshold must be above 0";
		return -EINVAL;
	}
	*v = value_of(m, 3 * (int)k - (int)decimals);
	return 0;
}

/* M with p decimals and suffix k, as value_parse() reads it. */
static void value_text(__u64 m, unsigned int p, unsigned int k, char *buf, size_t n)
{
	char digits[24];
	int len = snprintf(digits, sizeof(digits), "%0*llu", (int)p + 1,
			   (unsigned long long)m);
	char suffix[2] = { suffixes[k], 0 };

	if (p)
		snprintf(buf, n, "%.*s.%s%s", len - (int)p, digits, digits + len - p, suffix);
	else
		snprintf(buf, n, "%s%s", digits, suffix);
}

/*
 * The text of threshold v: under suffix k with p decimals the candidate
 * is M = round(v 10^(p - 3k)); it is taken when it reads back as v
 * exactly.  First pass: suffixes from T down, only with a whole part
 * (M >= 10^p), fewest decimals first: "1G", "1.5k", "999.5".  Second,
 * for values below 1: any, suffixes from none up (fewest zeros first:
 * "0.5", not "0.0000000000005T").  A parsed v always has one: the text
 * it was parsed from, M0 10^(3k0 - d0), is found again at (k0, d0),
 * because v 10^(d0 - 3k0) is M0 within two roundings, 2^-52 M0 < 0.25.
 */
static bool value_format(double v, bool rate, char *buf, size_t n)
{
	unsigned int pass, i, k, p;
	const char *why;
	double back;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < SUFFIXES; i++) {
			k = pass ? i : SUFFIXES - 1 - i;
			for (p = 0; p < VALUE_DIGITS_MAX; p++) {
				int e = (int)p - 3 * (int)k;
				double x = e >= 0 ? v * ten_to[e] : v / ten_to[-e];
				__u64 m;

				if (!(x >= 0.5 && x < 1e15))
					continue;
				m = (__u64)(x + 0.5);
				if (!pass && m < (__u64)ten_to[p])
					continue;
				value_text(m, p, k, buf, n);
				if (rate && strlen(buf) + 2 < n)
					strcat(buf, "/s");
				if (!value_parse(buf, rate, &back, &why) && back == v)
					return true;
			}
		}
	}
	return false;
}

/* A DURATION of 1s .. max into *sec. */
static int duration_parse(struct parser *ps, const char *word, const char *s, __u64 max,
			  __u32 *sec)
{
	char q[QUOTE_BUF], top[16];
	__u64 v;

	if (!fs_duration_parse(s, max, &v)) {
		*sec = (__u32)v;
		return 0;
	}
	fs_duration_format(max, top, sizeof(top));
	if (!fs_duration_parse(s, ~0ULL, &v))
		return fail(ps, "%s %s is above %s, the longest %s", word, quote(s, q), top,
			    !strcmp(word, "for") ? "a rule may have to hold" : "ban");
	return fail(ps, "%s %s is not a duration: %s", word, quote(s, q), duration_form);
}

/* Token i is the keyword word, after what token i - 1 is. */
static int expect_word(struct parser *ps, const struct tokens *t, unsigned int i, const char *word)
{
	char q[QUOTE_BUF], after[QUOTE_BUF];

	if (i < t->n && !strcmp(t->t[i], word))
		return 0;
	quote(t->t[i - 1], after);
	if (i >= t->n)
		return fail(ps, "missing \"%s\" after %s (%s)", word, after, block_form);
	return fail(ps, "expected \"%s\" after %s, not %s (%s)", word, after, quote(t->t[i], q),
		    block_form);
}

/* Token i is there: what it stands for is named by what. */
static int expect_value(struct parser *ps, const struct tokens *t, unsigned int i, const char *what)
{
	char after[QUOTE_BUF];

	if (i < t->n)
		return 0;
	return fail(ps, "missing %s after %s (%s)", what, quote(t->t[i - 1], after), block_form);
}

static int metric_parse(struct parser *ps, const char *s, enum fsd_policy_metric *m)
{
	char q[QUOTE_BUF];
	unsigned int i;

	for (i = 0; i < sizeof(metric_names) / sizeof(metric_names[0]); i++) {
		if (!strcmp(s, metric_names[i])) {
			*m = (enum fsd_policy_metric)i;
			return 0;
		}
	}
	return fail(ps, "%s is not a metric: packets, bytes or spread", quote(s, q));
}

/* KEY, METRIC and VALUE: tokens 1 .. 5, the keywords between them. */
static int rule_measure(struct parser *ps, const struct tokens *t, struct fsd_policy_rule *r)
{
	char q[QUOTE_BUF];
	const char *why;
	int err;

	if ((err = expect_value(ps, t, 1, "KEY")))
		return err;
	if (fs_keyspec_parse(t->t[1], &r->key, &why))
		return fail(ps, "%s is not a key: %s (src, dst, src4/N, dst4/N, src6/N, dst6/N)",
			    quote(t->t[1], q), why);
	/* The blocklist drops by source: a destination is not a thing to
	 * block (a victim's spread is for `flowsketch spread`). */
	if (r->key.side != FS_PREFIX_SRC)
		return fail(ps, "%s: the blocklist drops sources, so a rule's key is src, src4/N or src6/N",
			    quote(t->t[1], q));
	if ((err = expect_word(ps, t, 2, "if")) || (err = expect_value(ps, t, 3, "METRIC")) ||
	    (err = metric_parse(ps, t->t[3], &r->metric)))
		return err;
	if (r->metric == FSD_POLICY_SPREAD && r->key.family)
		return fail(ps, "spread counts the peers of hosts, and %s is a prefix key: spread takes src or dst",
			    quote(t->t[1], q));
	if ((err = expect_word(ps, t, 4, ">")) || (err = expect_value(ps, t, 5, "VALUE")))
		return err;
	if (!value_parse(t->t[5], r->metric != FSD_POLICY_SPREAD, &r->threshold, &why))
		return 0;
	if (why)
		return fail(ps, "%s: %s", quote(t->t[5], q), why);
	if (r->metric == FSD_POLICY_SPREAD)
		return fail(ps, "%s is not a count of peers: %s", quote(t->t[5], q), count_form);
	return fail(ps, "%s is not a rate: %s", quote(t->t[5], q), rate_form);
}

/* block KEY if METRIC > VALUE for DURATION ban DURATION */
static int block_parse(struct parser *ps, const struct tokens *t)
{
	struct fsd_policy_rule r = { .line = ps->line };
	char key[FS_KEYSPEC_TEXT_MAX], q[QUOTE_BUF];
	size_t i;
	int err;

	if ((err = rule_measure(ps, t, &r)) || (err = expect_word(ps, t, 6, "for")) ||
	    (err = expect_value(ps, t, 7, "DURATION")) ||
	    (err = duration_parse(ps, "for", t->t[7], FSD_POLICY_HOLD_MAX, &r.hold_sec)) ||
	    (err = expect_word(ps, t, 8, "ban")) || (err = expect_value(ps, t, 9, "DURATION")) ||
	    (err = duration_parse(ps, "ban", t->t[9], FSD_POLICY_BAN_MAX, &r.ban_sec)))
		return err;
	if (t->n > 10)
		return fail(ps, "unexpected %s after the rule's end, \"ban %s\" (one rule a line)",
			    quote(t->t[10], q), t->t[9]);
	for (i = 0; i < ps->p.nrules; i++) {
		const struct fsd_policy_rule *o = &ps->p.rule[i];

		if (o->metric == r.metric && !memcmp(&o->key, &r.key, sizeof(r.key))) {
			fs_keyspec_format(&r.key, key, sizeof(key));
			return fail(ps, "the same key and metric as line %u (%s, %s): one rule a pair",
				    o->line, key, metric_names[r.metric]);
		}
	}
	/* Cannot happen: with repeats refused there are at most as many
	 * rules as pairs.  Kept so that the array can never overflow. */
	if (ps->p.nrules == FSD_POLICY_RULES_MAX)
		return fail(ps, "more than %d rules", FSD_POLICY_RULES_MAX);
	if (!ps->p.rule) {
		ps->p.rule = calloc(FSD_POLICY_RULES_MAX, sizeof(*ps->p.rule));
		if (!ps->p.rule)
			return -ENOMEM;
	}
	ps->p.rule[ps->p.nrules++] = r;
	if (r.metric == FSD_POLICY_SPREAD)
		ps->p.needs_spread = true;
	else
		ps->p.needs_prefixes = true;
	return 0;
}

/* allow CIDR */
static int allow_parse(struct parser *ps, const struct tokens *t)
{
	char q[QUOTE_BUF];
	struct fs_cidr c;
	const char *why;

	if (t->n < 2)
		return fail(ps, "missing CIDR after \"allow\" (allow CIDR, e.g. allow 192.0.2.0/24)");
	if (t->n > 2)
		return fail(ps, "unexpected %s after the CIDR (one CIDR an allow line)",
			    quote(t->t[2], q));
	if (fs_cidr_parse(t->t[1], &c, &why))
		return fail(ps, "%s is not a CIDR: %s", quote(t->t[1], q), why);
	if (ps->p.nallow == FSD_POLICY_ALLOW_MAX)
		return fail(ps, "more than %d allow lines", FSD_POLICY_ALLOW_MAX);
	if (ps->p.nallow == ps->allow_cap) {
		size_t cap = ps->allow_cap ? 2 * ps->allow_cap : 64;
		struct fs_cidr *grown = realloc(ps->p.allow, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		ps->p.allow = grown;
		ps->allow_cap = cap;
	}
	ps->p.allow[ps->p.nallow++] = c;
	return 0;
}

/* limit N/UNIT */
static int limit_parse(struct parser *ps, const struct tokens *t)
{
	static const struct {
		const char *unit;
		__u32 sec;
	} units[] = { { "s", 1 }, { "min", 60 }, { "h", 3600 } };
	char q[QUOTE_BUF];
	unsigned long n = 0;
	const char *s;
	unsigned int i;

	if (ps->limit_line)
		return fail(ps, "a second limit (the first is on line %u): one limit a file",
			    ps->limit_line);
	if (t->n < 2)
		return fail(ps, "missing N/UNIT after \"limit\" (%s)", limit_form);
	if (t->n > 2)
		return fail(ps, "unexpected %s after the limit (limit N/UNIT)", quote(t->t[2], q));
	/* At most 8 digits read: n cannot overflow before the range check,
	 * and a ninth digit stops short of the '/'. */
	for (s = t->t[1]; *s >= '0' && *s <= '9' && s - t->t[1] < 8; s++)
		n = n * 10 + (unsigned long)(*s - '0');
	for (i = 0; *s == '/' && s > t->t[1] && i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(s + 1, units[i].unit))
			break;
	if (*s != '/' || s == t->t[1] || i == sizeof(units) / sizeof(units[0]) ||
	    n < 1 || n > FSD_POLICY_LIMIT_N_MAX)
		return fail(ps, "%s is not a limit: %s", quote(t->t[1], q), limit_form);
	ps->p.limit_n = (__u32)n;
	ps->p.limit_sec = units[i].sec;
	ps->limit_line = ps->line;
	return 0;
}

/* Split line (NUL-terminated, comment already cut) at blanks, in place. */
static void tokenize(char *line, struct tokens *t)
{
	char *s = line;

	t->n = 0;
	while (t->n < TOKENS_MAX) {
		s += strspn(s, " \t\r");
		if (!*s)
			break;
		t->t[t->n++] = s;
		s += strcspn(s, " \t\r");
		if (*s)
			*s++ = 0;
	}
}

static int statement_parse(struct parser *ps, char *line)
{
	char q[QUOTE_BUF];
	struct tokens t;

	line[strcspn(line, "#")] = 0;
	tokenize(line, &t);
	if (!t.n)
		return 0;
	if (!strcmp(t.t[0], "block"))
		return block_parse(ps, &t);
	if (!strcmp(t.t[0], "allow"))
		return allow_parse(ps, &t);
	if (!strcmp(t.t[0], "limit"))
		return limit_parse(ps, &t);
	return fail(ps, "%s is not a statement: block, allow or limit", quote(t.t[0], q));
}

/* Every line of text, in order, until the first error. */
static int lines_parse(struct parser *ps, const char *text, size_t len)
{
	char line[FSD_POLICY_LINE_MAX + 1];
	size_t at = 0;
	int err;

	while (at < len) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t n = (nl ? (size_t)(nl - text) : len) - at;

		ps->line++;
		if (n > FSD_POLICY_LINE_MAX)
			return fail(ps, "longer than %d bytes", FSD_POLICY_LINE_MAX);
		if (memchr(text + at, 0, n))
			return fail(ps, "a NUL byte: a policy file is text");
		memcpy(line, text + at, n);
		line[n] = 0;
		err = statement_parse(ps, line);
		if (err)
			return err;
		at += n + 1;
	}
	return 0;
}

int fsd_policy_parse(const char *text, size_t len, const char *name, struct fsd_policy *out,
		     char *msg, size_t msg_len)
{
	struct parser ps = {
		.name = name,
		.msg = msg,
		.msg_len = msg_len,
		.p = {
			.limit_n = FSD_POLICY_DEFAULT_LIMIT_N,
			.limit_sec = FSD_POLICY_DEFAULT_LIMIT_SEC,
		},
	};
	int err;

	memset(out, 0, sizeof(*out));
	if (msg_len)
		msg[0] = 0;
	err = lines_parse(&ps, text, len);
	if (err == -ENOMEM && msg_len)
		snprintf(msg, msg_len, "%s: out of memory", name);
	if (err) {
		fsd_policy_free(&ps.p);
		return err;
	}
	ps.p.nallow = fs_cidr_sort_unique(ps.p.allow, ps.p.nallow);
	*out = ps.p;
	return 0;
}

int fsd_policy_load(const char *path, struct fsd_policy *out, char *msg, size_t msg_len)
{
	char *buf = NULL;
	size_t got = 0;
	int err;

	memset(out, 0, sizeof(*out));
	err = fsd_read_small_file(path, FSD_POLICY_FILE_MAX, &buf, &got);
	if (err == -EISDIR) {
		snprintf(msg, msg_len, "%s: not a regular file", path);
		return -EINVAL;
	}
	if (err == -EFBIG)
		snprintf(msg, msg_len, "%s: larger than %d bytes, the most a policy file may be",
			 path, FSD_POLICY_FILE_MAX);
	else if (err)
		snprintf(msg, msg_len, "%s: %s", path, strerror(-err));
	if (!err)
		err = fsd_policy_parse(buf, got, path, out, msg, msg_len);
	free(buf);
	return err;
}

void fsd_policy_free(struct fsd_policy *p)
{
	free(p->rule);
	free(p->allow);
	memset(p, 0, sizeof(*p));
}

void fsd_policy_rule_format(const struct fsd_policy_rule *r, char *buf, size_t n)
{
	char key[FS_KEYSPEC_TEXT_MAX], value[40], hold[24], ban[24];
	bool rate = r->metric != FSD_POLICY_SPREAD;

	fs_keyspec_format(&r->key, key, sizeof(key));
	/* Only a threshold no file can spell (set by hand) has no text that
	 * parses back: it is shown, not hidden. */
	if (!value_format(r->threshold, rate, value, sizeof(value)))
		snprintf(value, sizeof(value), "%.17g%s", r->threshold, rate ? "/s" : "");
	fs_duration_format(r->hold_sec, hold, sizeof(hold));
	fs_duration_format(r->ban_sec, ban, sizeof(ban));
	snprintf(buf, n, "block %s if %s > %s for %s ban %s", key,
		 (unsigned int)r->metric < FSD_POLICY_SPREAD + 1 ? metric_names[r->metric] : "?",
		 value, hold, ban);
}
