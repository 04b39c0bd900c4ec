// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * jsoncheck.c - a strict RFC 8259 recogniser for requests (jsoncheck.h).
 *
 * Recursive descent over the grammar of RFC 8259 section 2 to 7, depth
 * bounded.  The keys of every object still open are kept decoded (escapes
 * resolved, so "cmd" and "\u0063md" are the same key, as json-c sees them)
 * in one buffer as large as the text: decoding never makes a string
 * longer, so it cannot overflow.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "jsoncheck.h"
#include "utf8.h"

/* Shortest key with its quotes, colon, value and comma: `"":0,`. */
#define KEYS_MAX (FSD_JSON_TEXT_MAX / 5 + 1)

struct scan {
	const char *s;
	size_t len, pos;
	unsigned int depth;
	char keys[FSD_JSON_TEXT_MAX];	/* decoded keys of open objects */
	size_t keys_used;
	struct { size_t off, len; } key[KEYS_MAX];
	size_t nkeys;
	struct fsd_json_fault *f;
};

/* Record the fault and return -EINVAL: every caller returns at once, so
 * the first fault is the one reported. */
static int fault(struct scan *sc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int fault(struct scan *sc, const char *fmt, ...)
{
	char *m = sc->f->msg;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(m, sizeof(sc->f->msg), fmt, ap);
	va_end(ap);
	/* A key quoted in the message may have been cut mid-character. */
	if (n > 0)
		m[fs_utf8_prefix(m, strlen(m), strlen(m))] = 0;
	return -EINVAL;
}

static int bad(struct scan *sc, const char *what)
{
	return fault(sc, "request is not valid JSON: %s at byte %zu", what,
		     sc->pos);
}

static void skip_ws(struct scan *sc)
{
	while (sc->pos < sc->len && strchr(" \t\r\n", sc->s[sc->pos]) &&
	       sc->s[sc->pos])
		sc->pos++;
}

static int peek(const struct scan *sc)
{
	return sc->pos < sc->len ? (unsigned char)sc->s[sc->pos] : -1;
}

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int hex4(struct scan *sc, unsigned int *out)
{
	unsigned int v = 0, i;
	int c;

	for (i = 0; i < 4; i++) {
		c = peek(sc);
		if (is_digit(c))
			v = v << 4 | (unsigned int)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v << 4 | (unsigned int)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v = v << 4 | (unsigned int)(c - 'A' + 10);
		else
			return bad(sc, "\\u needs four hex digits");
		sc->pos++;
	}
	*out = v;
	return 0;
}

static size_t put_utf8(char *out, unsigned int cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* \uXXXX, or a surrogate pair \uD8xx\uDCxx, after the backslash and 'u'. */
static int escape_u(struct scan *sc, unsigned int *cp)
{
	unsigned int lo;
	int err;

	if ((err = hex4(sc, cp)))
		return err;
	if (*cp >= 0xdc00 && *cp <= 0xdfff)
		return bad(sc, "a low UTF-16 surrogate without a high one");
	if (*cp < 0xd800 || *cp > 0xdbff)
		return 0;
	if (peek(sc) != '\\' || sc->pos + 1 >= sc->len ||
	    sc->s[sc->pos + 1] != 'u')
		return bad(sc, "a high UTF-16 surrogate without a low one");
	sc->pos += 2;
	if ((err = hex4(sc, &lo)))
		return err;
	if (lo < 0xdc00 || lo > 0xdfff)
		return bad(sc, "a high UTF-16 surrogate without a low one");
	*cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
	return 0;
}

/* A string at sc->pos (its opening quote); decoded into out when not
 * NULL, its decoded length in *out_len.  The text is valid UTF-8 already. */
static int string(struct scan *sc, char *out, size_t *out_len)
{
	static const char esc_in[] = "\"\\/bfnrt", esc_out[] = "\"\\/\b\f\n\r\t";
	char scratch[4];
	size_t o = 0;
	unsigned int cp;
	const char *e;
	int c, err;

	sc->pos++;
	for (;;) {
		c = peek(sc);
		if (c < 0)
			return bad(sc, "a string without its closing quote");
		if (c == '"')
			break;
		if (c < 0x20)
			return fault(sc, "request has a raw control character 0x%02x in a string at byte %zu (escape it)",
				     c, sc->pos);
		sc->pos++;
		if (c != '\\') {
			if (out)
				out[o] = (char)c;
			o++;
			continue;
		}
		c = peek(sc);
		sc->pos++;
		if (c == 'u') {
			if ((err = escape_u(sc, &cp)))
				return err;
			o += put_utf8(out ? out + o : scratch, cp);
			continue;
		}
		e = c > 0 ? strchr(esc_in, c) : NULL;
		if (!e) {
			sc->pos--;
			return bad(sc, "an unknown escape");
		}
		if (out)
			out[o] = esc_out[e - esc_in];
		o++;
	}
	sc->pos++;
	*out_len = o;
	return 0;
}

static int number(struct scan *sc)
{
	if (peek(sc) == '-')
		sc->pos++;
	if (peek(sc) == '0') {
		sc->pos++;
	} else if (is_digit(peek(sc))) {
		while (is_digit(peek(sc)))
			sc->pos++;
	} else {
		return bad(sc, "a number without digits");
	}
	if (is_digit(peek(sc)))
		return bad(sc, "a number with a leading zero");
	if (peek(sc) == '.') {
		sc->pos++;
		if (!is_digit(peek(sc)))
			return bad(sc, "no digit after a decimal point");
		while (is_digit(peek(sc)))
			sc->pos++;
	}
	if (peek(sc) == 'e' || peek(sc) == 'E') {
		sc->pos++;
		if (peek(sc) == '+' || peek(sc) == '-')
			sc->pos++;
		if (!is_digit(peek(sc)))
			return bad(sc, "no digit in an exponent");
		while (is_digit(peek(sc)))
			sc->pos++;
	}
	return 0;
}

static int literal(struct scan *sc, const char *word)
{
	size_t n = strlen(word);

	if (sc->len - sc->pos < n || memcmp(sc->s + sc->pos, word, n))
		return bad(sc, "an unknown word (true, false or null expected)");
	sc->pos += n;
	return 0;
}

static int value(struct scan *sc);

/* The key just decoded at keys + keys_used, against the keys of the same
 * object (those from `first` on). */
static int add_key(struct scan *sc, size_t first, size_t len)
{
	const char *k = sc->keys + sc->keys_used;
	size_t i, shown;

	for (i = first; i < sc->nkeys; i++) {
		if (sc->key[i].len != len ||
		    memcmp(sc->keys + sc->key[i].off, k, len))
			continue;
		/* A long key is quoted in part, cut between characters. */
		shown = fs_utf8_prefix(k, len, 64);
		return fault(sc, "request has the key \"%.*s\"%s twice in one object (byte %zu)",
			     (int)shown, k, shown < len ? "..." : "", sc->pos);
	}
	if (sc->nkeys == KEYS_MAX)
		return bad(sc, "too many keys");
	sc->key[sc->nkeys].off = sc->keys_used;
	sc->key[sc->nkeys].len = len;
	sc->nkeys++;
	sc->keys_used += len;
	return 0;
}

static int object(struct scan *sc)
{
	size_t first = sc->nkeys, used = sc->keys_used, len;
	int err;

	sc->pos++;
	skip_ws(sc);
	if (peek(sc) == '}')
		goto done;
	for (;;) {
		skip_ws(sc);
		if (peek(sc) != '"')
			return bad(sc, "a key must be a string in double quotes");
		if ((err = string(sc, sc->keys + sc->keys_used, &len)) ||
		    (err = add_key(sc, first, len)))
			return err;
		skip_ws(sc);
		if (peek(sc) != ':')
			return bad(sc, "':' expected after a key");
		sc->pos++;
		if ((err = value(sc)))
			return err;
		skip_ws(sc);
		if (peek(sc) == '}')
			break;
		if (peek(sc) != ',')
			return bad(sc, "',' or '}' expected in an object");
		sc->pos++;
	}
done:
	sc->pos++;
	/* Its keys are done with: the next object starts afresh. */
	sc->nkeys = first;
	sc->keys_used = used;
	return 0;
}

static int array(struct scan *sc)
{
	int err;

	sc->pos++;
	skip_ws(sc);
	if (peek(sc) == ']')
		goto done;
	for (;;) {
		if ((err = value(sc)))
			return err;
		skip_ws(sc);
		if (peek(sc) == ']')
			break;
		if (peek(sc) != ',')
			return bad(sc, "',' or ']' expected in an array");
		sc->pos++;
	}
done:
	sc->pos++;
	return 0;
}

static int value(struct scan *sc)
{
	size_t len;
	int c, err;

	skip_ws(sc);
	c = peek(sc);
	if (c == '{' || c == '[') {
		if (sc->depth == FSD_JSON_DEPTH_MAX)
			return fault(sc, "request nests deeper than %d levels (byte %zu)",
				     FSD_JSON_DEPTH_MAX, sc->pos);
		sc->depth++;
		err = c == '{' ? object(sc) : array(sc);
		sc->depth--;
		return err;
	}
	if (c == '"')
		return string(sc, NULL, &len);
	if (c == '-' || is_digit(c))
		return number(sc);
	if (c == 't')
		return literal(sc, "true");
	if (c == 'f')
		return literal(sc, "false");
	if (c == 'n')
		return literal(sc, "null");
	if (c < 0)
		return bad(sc, "a value expected, the request ends");
	return bad(sc, "a value expected");
}

int fsd_json_check(const char *text, size_t len, struct fsd_json_fault *f)
{
	struct scan sc;	/* about 20 KB: fine for the daemon's main stack */
	const char *nul;
	size_t bad_utf8;
	int err;

	f->msg[0] = 0;
	sc.f = f;
	if (len > FSD_JSON_TEXT_MAX) {
		fault(&sc, "request longer than %d bytes", FSD_JSON_TEXT_MAX);
		return -E2BIG;
	}
	/* Before the grammar: json-c would report either as a bare "end of
	 * data" or a bad character somewhere after the real problem. */
	nul = memchr(text, 0, len);
	if (nul)
		return fault(&sc, "request contains a NUL byte at byte %zu",
			     (size_t)(nul - text));
	bad_utf8 = fs_utf8_check(text, len);
	if (bad_utf8 != len)
		return fault(&sc, "request is not valid UTF-8 at byte %zu",
			     bad_utf8);
	sc.s = text;
	sc.len = len;
	sc.pos = 0;
	sc.depth = 0;
	sc.nkeys = 0;
	sc.keys_used = 0;
	err = value(&sc);
	if (err)
		return err;
	skip_ws(&sc);
	if (sc.pos != len)
		return fault(&sc, "request has data after its JSON value (byte %zu)",
			     sc.pos);
	return 0;
}
