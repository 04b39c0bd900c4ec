// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * export.c - `flowsketch export`: a span's sketches for other engines.
 *
 * One export request (protocol.h) brings the span's summed sketch, its
 * candidates, totals, time range and parameters; they are checked into a
 * struct fs_native (native.h) and written in the format asked for:
 *
 *   redis    the dense HyperLogLog string of one sketch (hll_export.h):
 *            SET it, then PFCOUNT / PFMERGE; p = 14 only, Redis's one
 *   pg-hll   the same as postgresql-hll prints a FULL hll: "\x14..."
 *            with a newline, so that '...'::hll casts it
 *   native   the self-describing file `flowsketch merge` reads
 *   pg-sql   a psql script loading the span into pgsql.h's schema
 *
 * --input FILE takes the span from a native file instead of the daemon,
 * so a file collected from a host can be loaded into Redis or PostgreSQL
 * later.  The output goes to -o FILE (written whole under a temporary
 * name, then renamed, so that a failed export leaves no partial file) or
 * to stdout, which for the binary formats must not be a terminal.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "keys.h"
#include "args.h"
#include "base64.h"
#include "cli.h"
#include "client.h"
#include "hll_export.h"
#include "native.h"
#include "pgsql.h"
#include "protocol.h"
#include "reply.h"

enum export_format { FMT_REDIS, FMT_PG_HLL, FMT_NATIVE, FMT_PG_SQL };

struct export_opts {
	enum export_format format;
	enum fs_hll_sketch sketch;
	__u32 span;			/* 0: the daemon's default */
	const char *direction;		/* NULL: the daemon's default, both */
	const char *host;		/* pg-sql; NULL: gethostname() */
	const char *input;		/* a native file instead of the daemon */
	const char *output;		/* NULL or "-": stdout */
};

#define OFF(field) offsetof(struct export_opts, field)

static int opt_format(const struct fs_optset *set, const struct fs_opt *opt,
		      const char *arg, void *o)
{
	static const char *const words[] = { "redis", "pg-hll", "native", "pg-sql", NULL };
	int i = fs_opt_word(set, opt, arg, words, "redis, pg-hll, native or pg-sql");

	if (i >= 0)
		((struct export_opts *)o)->format = (enum export_format)i;
	return i < 0 ? i : 0;
}

static int opt_sketch(const struct fs_optset *set, const struct fs_opt *opt,
		      const char *arg, void *o)
{
	static const char *const words[] = { "flows", "sources", "destinations", NULL };
	int i = fs_opt_word(set, opt, arg, words, "flows, sources or destinations");

	if (i >= 0)
		((struct export_opts *)o)->sketch = (enum fs_hll_sketch)i;
	return i < 0 ? i : 0;
}

static int opt_host(const struct fs_optset *set, const struct fs_opt *opt,
		    const char *arg, void *o)
{
	if (fs_pgsql_host_ok(arg))
		return fs_bad_value(set, "--host must be 1 to %d letters, digits or '.-_:', not '%s'",
				    FS_PGSQL_HOST_MAX, arg);
	((struct export_opts *)o)->host = arg;
	return 0;
}

static const struct fs_opt export_opts[] = {
	{ "format", 'f', "F", opt_format, 0, 0, 0, NULL,
	  "redis: the dense HyperLogLog string of --sketch (SET it,\n"
	  "then PFCOUNT, PFMERGE); needs --precision 14\n"
	  "pg-hll: the postgresql-hll value of --sketch, as text\n"
	  "('\\x14...'::hll)\n"
	  "native: the whole span in one file, for flowsketch merge\n"
	  "pg-sql: a psql script loading the span into the fleet\n"
	  "tables (user/flowsketch/pgsql.h; dist/fleet_top.sql)" },
	{ "sketch", 'k', "S", opt_sketch, 0, 0, 0, NULL,
	  "flows (default), sources or destinations (redis, pg-hll)" },
	{ "span", 't', "SECONDS", fs_opt_span, OFF(span), 0, 0, NULL,
	  "span to export, rounded up to whole windows (default one\n"
	  "window); units s, m, h accepted (90, 5m, 1h)" },
	{ "direction", 'd', "D", fs_opt_direction, OFF(direction), 0, 0, NULL,
	  "in, out or both (default: their union)" },
	{ "host", 'H', "NAME", opt_host, 0, 0, 0, NULL,
	  "the host's name in pg-sql (default: this host's name)" },
	{ "input", 'i', "FILE", NULL, OFF(input), 0, 0, NULL,
	  "convert a native export instead of asking the daemon" },
	{ "output", 'o', "FILE", NULL, OFF(output), 0, 0, NULL,
	  "write FILE (whole, or not at all); default stdout,\n"
	  "never a terminal for redis and native" },
	{ "help", 'h', NULL, fs_opt_show_help, 0, 0, 0, NULL, "this text" },
	{ 0 }
};

const struct fs_optset fs_export_optset = {
	.name = "export",
	.usage =
	"Usage: flowsketch [--socket PATH] [--timeout SECONDS] export\n"
	"                  --format redis|pg-hll|native|pg-sql [--sketch flows|sources|destinations]\n"
	"                  [--span SECONDS] [--direction in|out|both] [--host NAME]\n"
	"                  [--input FILE] [-o FILE]\n"
	"\n"
	"A span's sketches, for merging with other hosts' elsewhere (hosts whose\n"
	"sketches merge share one flowsketchd --secret-file).\n"
	"\n",
	.opts = export_opts,
	.help_col = FS_CLI_HELP_COL,
	.getopt_error = fs_cli_getopt_error,
};

static int parse_opts(int argc, char **argv, struct export_opts *o)
{
	const struct fs_optset *set = &fs_export_optset;
	uint64_t given;
	int ret = fs_cli_parse(set, argc, argv, o, &given);

	if (ret)
		return ret;
	if (!fs_opt_given(set, given, "format"))
		return fs_usage_error("export", "--format is required: redis, pg-hll, native or pg-sql");
	if (fs_opt_given(set, given, "sketch") && o->format != FMT_REDIS &&
	    o->format != FMT_PG_HLL)
		return fs_usage_error("export", "--sketch applies to --format redis and pg-hll only (the others carry all three)");
	if (o->host && o->format != FMT_PG_SQL)
		return fs_usage_error("export", "--host applies to --format pg-sql only");
	if (o->input && (fs_opt_given(set, given, "span") ||
			 fs_opt_given(set, given, "direction")))
		return fs_usage_error("export", "--span and --direction ask the daemon; with --input the file's span is exported");
	return fs_no_operands("export", argc, argv);
}

/* --------------------------------------------------------- the answer */

/* 16 hex digits, as the daemon writes fingerprints. */
static int reply_hex64(struct json_object *obj, const char *path, __u64 *out)
{
	const char *s;
	char *end;
	int err;

	err = fs_reply_string(obj, path, &s);
	if (err)
		return err;
	errno = 0;
	*out = strtoull(s, &end, 16);
	if (strlen(s) != 16 || errno || *end || strspn(s, "0123456789abcdef") != 16)
		return fs_bad_answer("flowsketchd's answer has a \"%s\" that is not 16 hex digits", path);
	return 0;
}

/* A candidate's "columns": one exported column per row, each < w. */
static int parse_columns(struct json_object *f, const struct fs_sketch_params *p,
			 struct fs_native_candidate *c)
{
	struct json_object *cols;
	__u32 row;
	int err;

	err = fs_reply_array(f, "columns", &cols);
	if (err)
		return err;
	if (json_object_array_length(cols) != p->cms_depth)
		return fs_bad_answer("flowsketchd's answer has a candidate of %zu columns, not one per row (%u)",
				     json_object_array_length(cols), p->cms_depth);
	for (row = 0; row < p->cms_depth; row++) {
		struct json_object *v = json_object_array_get_idx(cols, row);
		__s64 col = json_object_get_int64(v);

		if (!json_object_is_type(v, json_type_int) || col < 0 ||
		    col >> p->cms_log2_width)
			return fs_bad_answer("flowsketchd's answer has a candidate whose column in row %u is not a whole number below the width %u",
					     row, 1U << p->cms_log2_width);
		c->cols[row] = (__u32)col;
	}
	return 0;
}

static int parse_candidate(struct json_object *f, const struct fs_sketch_params *p,
			   struct fs_native_candidate *c)
{
	__u64 family, proto, sport, dport;
	const char *src, *dst;
	int err, af;

	memset(c, 0, sizeof(*c));
	if ((err = fs_reply_string(f, FS_KEY_SRC, &src)) ||
	    (err = fs_reply_string(f, FS_KEY_DST, &dst)) ||
	    (err = fs_reply_u64_in(f, FS_KEY_FAMILY, FS_FAMILY_IPV4, FS_FAMILY_IPV6, &family)) ||
	    (err = fs_reply_u64_in(f, FS_KEY_PROTO_NUM, 0, 255, &proto)) ||
	    (err = fs_reply_u64_in(f, FS_KEY_SPORT, 0, 65535, &sport)) ||
	    (err = fs_reply_u64_in(f, FS_KEY_DPORT, 0, 65535, &dport)) ||
	    (err = parse_columns(f, p, c)))
		return err;
	if (family != FS_FAMILY_IPV4 && family != FS_FAMILY_IPV6)
		return fs_bad_answer("flowsketchd's answer has a candidate of family %llu",
				     (unsigned long long)family);
	af = family == FS_FAMILY_IPV4 ? AF_INET : AF_INET6;
	if (inet_pton(af, src, c->key.src) != 1 || inet_pton(af, dst, c->key.dst) != 1)
		return fs_bad_answer("flowsketchd's answer has a candidate whose addresses are not IPv%llu ones",
				     (unsigned long long)family);
	c->key.family = (__u8)family;
	c->key.proto = (__u8)proto;
	c->key.sport = htons((__u16)sport);
	c->key.dport = htons((__u16)dport);
	return 0;
}

/* Whether the answer's sketch object has key. */
static bool sketch_has(struct json_object *a, const char *key)
{
	struct json_object *sk;

	return json_object_object_get_ex(a, "sketch", &sk) &&
	       json_object_object_get_ex(sk, key, NULL);
}

/* The answer's sketch.KEY counts, each kind's (sketch_kind.h), and
 * what p makes, in words for a message: 0 when they agree, 1 when not,
 * or -errno. */
static int sketch_counts(struct json_object *a, const struct fs_sketch_params *p,
			 char *said, char *want, size_t len)
{
	size_t s = 0, w = 0;
	bool wrong = false;
	int k, err;

	for (k = 0; k < FS_NKINDS; k++) {
		const struct fs_sketch_kind *d = &fs_sketch_kinds[k];
		const char *and = k ? " and " : "";
		char path[32];
		__u64 n;

		snprintf(path, sizeof(path), "sketch.%s", d->count_key);
		/* A kind the parameters leave empty (a detection sketch
		 * that is off) may be absent: a daemon of a release before
		 * it says nothing of it. */
		if (!d->per_slot(p) && !sketch_has(a, d->count_key))
			n = 0;
		else if ((err = fs_reply_u64(a, path, &n)))
			return err;
		wrong |= n != d->per_slot(p);
		s += snprintf(said + s, len - s, "%s%llu %s", and,
			      (unsigned long long)n, d->count_key);
		w += snprintf(want + w, len - w, "%s%llu", and,
			      (unsigned long long)d->per_slot(p));
	}
	return wrong ? 1 : 0;
}

/* sketch.data into n's parts (protocol.h's layout). */
static int parse_sketch(struct json_object *a, struct fs_native *n)
{
	const struct fs_sketch_params *p = &n->sketch.params;
	char said[128], want[128], bound[64], why[128];
	size_t raw_len, got, off = 0;
	const char *enc, *data;
	__u8 *raw = NULL;
	enum fs_kind k;
	__u64 i;
	int err, wrong;

	if ((err = fs_reply_string(a, "sketch.encoding", &enc)) ||
	    (err = wrong = sketch_counts(a, p, said, want, sizeof(said))) < 0 ||
	    (err = fs_reply_string(a, "sketch.data", &data)))
		return err;
	if (wrong || strcmp(enc, "base64"))
		return fs_bad_answer("flowsketchd's answer has a sketch of %s in '%s', not the %s in base64 its parameters make",
				     said, enc, want);
	raw_len = fs_sketch_bytes(p);
	raw = malloc(fs_base64_decoded_max(strlen(data)) + 1);
	if (!raw)
		return fs_no_memory();
	if (fs_base64_decode(data, strlen(data), raw, &got) || got != raw_len) {
		err = fs_bad_answer("flowsketchd's answer has a sketch that is not %zu bytes of base64",
				    raw_len);
		goto out;
	}
	for (k = 0; k < FS_NKINDS; k++)
		off += fs_native_get_words(raw + off, &n->sketch, k);
	if (!err && fs_native_bad_bucket(&n->sketch, why, sizeof(why)))
		err = fs_bad_answer("flowsketchd's answer has a sketch whose %s", why);
	else if (fs_native_bad_word(&n->sketch, &k, &i)) {
		fs_sketch_kinds[k].say_bound(bound, sizeof(bound), p);
		err = fs_bad_answer("flowsketchd's answer has a %s of %llu, above the %llu of %s",
				    fs_sketch_kinds[k].noun,
				    (unsigned long long)fs_kind_word(k, n->sketch.part[k], i),
				    (unsigned long long)fs_sketch_kinds[k].word_max(p), bound);
	}
out:
	free(raw);
	return err;
}

/*
 * params' detection sketch sizes (protocol.h: depth 0, or none of the
 * three, when off) into p, checked as the native file checks them.
 */
static int parse_detect(struct json_object *a, struct fs_sketch_params *p)
{
	static const char *const keys[2][3] = {
		{ "params.prefix_depth", "params.prefix_log2_width", "params.prefix_skip_shift" },
		{ "params.spread_depth", "params.spread_log2_width", "params.spread_sample_shift" },
	};
	struct json_object *params;
	__u64 v[2][3] = { { 0 } };
	struct fs_prefix_params pp;
	struct fs_spread_params sp;
	int i, j, err;

	if ((err = fs_reply_object(a, "params", &params)))
		return err;
	for (i = 0; i < 2; i++) {
		/* A daemon of a release before the detection sketches. */
		if (!json_object_object_get_ex(params, keys[i][0] + 7, NULL))
			continue;
		for (j = 0; j < 3; j++)
			if ((err = fs_reply_u64_in(a, keys[i][j], 0, 64, &v[i][j])))
				return err;
	}
	fs_prefix_params_init(&pp, (__u32)v[0][0], (__u32)v[0][1], (__u32)v[0][2]);
	fs_spread_params_init(&sp, (__u32)v[1][0], (__u32)v[1][1], (__u32)v[1][2]);
	/* Checked before they are packed into the record's nibbles. */
	if (pp.depth && fs_prefix_params_check(&pp))
		return fs_bad_answer("flowsketchd's answer has a prefix sketch of depth %u, width 2^%u and skip shift %u, out of range",
				     pp.depth, pp.log2_width, pp.skip_shift);
	if (sp.depth && fs_spread_params_check(&sp))
		return fs_bad_answer("flowsketchd's answer has a spread sketch of depth %u, width 2^%u and sample shift %u, out of range",
				     sp.depth, sp.log2_width, sp.sample_shift);
	if (pp.depth)
		fs_params_set_prefix(p, &pp);
	if (sp.depth)
		fs_params_set_spread(p, &sp);
	if (fs_params_check(p))
		return fs_bad_answer("flowsketchd's answer has detection sketches of sizes out of range");
	return 0;
}

/*
 * params' keyed sample (sample.h; absent from a daemon of a release
 * before it exported one, and log2 buckets 0 when off) into p.
 */
static int parse_sample(struct json_object *a, struct fs_sketch_params *p)
{
	struct fs_sample_params d;
	__u64 log2b, shift;
	int err;

	if (!json_object_object_get_ex(json_object_object_get(a, "params"),
				       "sample_log2_buckets", NULL))
		return 0;
	if ((err = fs_reply_u64_in(a, "params.sample_log2_buckets", 0,
				   FS_SAMPLE_MAX_LOG2_BUCKETS, &log2b)) ||
	    (err = fs_reply_u64_in(a, "params.sample_shift", 0, FS_SAMPLE_MAX_SHIFT, &shift)))
		return err;
	if (!log2b && shift)
		return fs_bad_answer("flowsketchd's answer has a sample rate of 1 in 2^%llu and no sample buckets",
				     (unsigned long long)shift);
	if (!log2b)
		return 0;
	fs_sample_params_init(&d, (__u32)shift, (__u32)log2b);
	if (fs_sample_params_check(&d))
		return fs_bad_answer("flowsketchd's answer has a sample of 2^%llu buckets, out of range",
				     (unsigned long long)log2b);
	fs_params_set_sample(p, &d);
	return 0;
}

/* The export answer into *n (fs_native_free() it). */
static int parse_answer(struct json_object *a, struct fs_native *n)
{
	const struct fs_hash_secret none = { 0, 0 };
	__u64 depth, log2w, prec, flags, window_s, start, end, windows;
	struct fs_sketch_params p;
	struct json_object *cands;
	const char *dir;
	size_t i, ncand;
	char why[160];
	int err;

	memset(n, 0, sizeof(*n));
	if ((err = fs_reply_u64_in(a, "params.cms_depth", 1, FS_CMS_MAX_DEPTH, &depth)) ||
	    (err = fs_reply_u64_in(a, "params.cms_log2_width", FS_CMS_MIN_LOG2W,
				   FS_CMS_MAX_LOG2W, &log2w)) ||
	    (err = fs_reply_u64_in(a, "params.hll_precision", FS_HLL_MIN_P,
				   FS_HLL_MAX_P, &prec)) ||
	    (err = fs_reply_u64_in(a, "params.flags", 0, FS_PARAM_F_CONSERVATIVE, &flags)) ||
	    (err = fs_reply_u64_in(a, FS_KEY_WINDOW_SECONDS, 1, 24 * 3600, &window_s)) ||
	    (err = fs_reply_u64(a, FS_KEY_WINDOW_START_NS, &start)) ||
	    (err = fs_reply_u64(a, FS_KEY_WINDOW_END_NS, &end)) ||
	    (err = fs_reply_u64(a, FS_KEY_WINDOWS, &windows)) ||
	    (err = fs_reply_string(a, FS_KEY_DIRECTION, &dir)) ||
	    (err = fs_reply_array(a, FS_KEY_CANDIDATES, &cands)))
		return err;
	if (end < start)
		return fs_bad_answer("flowsketchd's answer has a span that ends before it starts");
	if (strcmp(dir, "in") && strcmp(dir, "out") && strcmp(dir, "both"))
		return fs_bad_answer("flowsketchd's answer has the direction '%s', not in, out or both", dir);
	fs_params_init(&p, (__u32)depth, (__u32)log2w, (__u32)prec, (__u32)flags, &none);
	if ((err = parse_detect(a, &p)) || (err = parse_sample(a, &p)))
		return err;
	ncand = json_object_array_length(cands);
	if (fs_native_init(n, &p, ncand))
		return fs_no_memory();
	n->start_ns = start;
	n->end_ns = end;
	n->window_ns = window_s * 1000000000ULL;
	n->windows = windows;
	n->direction = !strcmp(dir, "in") ? FS_NATIVE_DIR_IN :
		       !strcmp(dir, "out") ? FS_NATIVE_DIR_OUT : FS_NATIVE_DIR_BOTH;
	if ((err = reply_hex64(a, "secret_fingerprint", &n->fingerprint)) ||
	    (err = fs_reply_u64(a, FS_KEY_TOTAL_PACKETS, &n->sketch.totals.packets)) ||
	    (err = fs_reply_u64(a, FS_KEY_TOTAL_BYTES, &n->sketch.totals.bytes)))
		goto err_free;
	for (i = 0; i < ncand; i++) {
		err = parse_candidate(json_object_array_get_idx(cands, i),
				      &p, &n->candidates[i]);
		if (err)
			goto err_free;
	}
	fs_native_sort(n);
	err = parse_sketch(a, n);
	if (!err && fs_native_sample_unlisted(n, why, sizeof(why)))
		err = fs_bad_answer("flowsketchd's answer's %s", why);
	if (err)
		goto err_free;
	return 0;

err_free:
	fs_native_free(n);
	return err;
}

static int from_daemon(const struct fs_cli *cli, const struct export_opts *o,
		       struct fs_native *n)
{
	struct json_object *req = fs_request_span(fs_request("export"), o->span,
						  o->direction), *answer = NULL;
	int err;

	/* The answer's JSON escapes each "/" of the base64 as "\/". */
	err = fs_client_call_max(cli, req, FS_EXPORT_ANSWER_MAX + (FS_EXPORT_ANSWER_MAX >> 2),
				 &answer);
	if (!err)
		err = parse_answer(answer, n);
	json_object_put(answer);
	return err;
}

/* --------------------------------------------------------- the output */

static int write_all(FILE *out, const void *buf, size_t len)
{
	return fwrite(buf, 1, len, out) == len ? 0 : -EIO;
}

/* The chosen format of n to out: 0, -EIO for a failed write (the caller
 * says so), or another -errno with its message printed. */
static int write_format(FILE *out, const struct export_opts *o,
			const struct fs_native *n, const char *host)
{
	__u32 p = n->sketch.params.hll_p;
	__u8 *buf = NULL;
	size_t len;
	int err = 0;

	switch (o->format) {
	case FMT_REDIS:
		if (p != FS_REDIS_HLL_P) {
			fs_error("export: Redis keeps HyperLogLogs of precision %u only, and this sketch has p = %u (flowsketchd --precision %u)",
				 FS_REDIS_HLL_P, p, FS_REDIS_HLL_P);
			return -EINVAL;
		}
		len = FS_REDIS_HLL_BYTES;
		buf = malloc(len);
		if (!buf)
			goto nomem;
		err = fs_hll_export_redis(n->sketch.hll + ((size_t)o->sketch << p), p,
					  buf, len);
		if (!err)
			err = write_all(out, buf, len);
		break;
	case FMT_PG_HLL:
		if (fs_pgsql_hll_check(n))
			return -EINVAL;
		buf = malloc(fs_hll_pg_bytes(p));
		if (!buf)
			goto nomem;
		fs_pgsql_hll_text(out, n, o->sketch, buf);
		fputc('\n', out);
		break;
	case FMT_NATIVE:
		len = fs_native_size(n);
		buf = len ? malloc(len) : NULL;
		if (!buf)
			goto nomem;
		err = fs_native_encode(n, buf, len);
		if (!err)
			err = write_all(out, buf, len);
		break;
	case FMT_PG_SQL:
		/* Says why itself when it refuses. */
		return fs_pgsql_write(out, n, host);
	}
	free(buf);
	if (err == -EINVAL)
		fs_error("export: the span cannot be written in this format (its contents are out of range)");
	return err;
nomem:
	return fs_no_memory();
}

/* n to out in o's format, flushed: 0 or -errno, a failed write said as
 * "cannot write <where>". */
static int write_flushed(FILE *out, const char *where, const struct export_opts *o,
			 const struct fs_native *n, const char *host)
{
	int err = write_format(out, o, n, host);

	if ((fflush(out) || ferror(out) || err == -EIO) && (!err || err == -EIO)) {
		fs_error("export: cannot write %s: %s", where, strerror(errno));
		err = -EIO;
	}
	return err;
}

/* Write to o->output through a temporary file renamed when whole, or to
 * stdout. */
static int write_output(const struct export_opts *o, const struct fs_native *n,
			const char *host)
{
	bool binary = o->format == FMT_REDIS || o->format == FMT_NATIVE;
	char tmp[PATH_MAX];
	FILE *out = stdout;
	int fd = -1, err;

	if (!o->output || !strcmp(o->output, "-")) {
		if (binary && isatty(STDOUT_FILENO)) {
			fs_error("export: not writing a binary sketch to a terminal: give -o FILE or redirect stdout");
			return -EINVAL;
		}
		return write_flushed(stdout, "to stdout", o, n, host);
	}
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", o->output) >= (int)sizeof(tmp)) {
		fs_error("export: the path %s is too long", o->output);
		return -ENAMETOOLONG;
	}
	fd = mkstemp(tmp);
	if (fd < 0 || !(out = fdopen(fd, "w"))) {
		err = -errno;
		fs_error("export: cannot create a file beside %s: %s", o->output,
			 strerror(-err));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		return err;
	}
	/* mkstemp() makes it 0600; an export is as private as the
	 * daemon's answers were (root's). */
	err = write_flushed(out, o->output, o, n, host);
	if (fclose(out) && !err) {
		err = -errno;
		fs_error("export: cannot write %s: %s", o->output, strerror(-err));
	}
	if (!err && rename(tmp, o->output)) {
		err = -errno;
		fs_error("export: cannot rename %s to %s: %s", tmp, o->output,
			 strerror(-err));
	}
	if (err)
		unlink(tmp);
	return err;
}

int fs_cmd_export(const struct fs_cli *cli, int argc, char **argv)
{
	struct export_opts o = { .sketch = FS_HLL_FLOWS };
	char err_msg[FS_NATIVE_ERR_MAX], host[FS_PGSQL_HOST_MAX + 1];
	struct fs_native n;
	int ret;

	ret = parse_opts(argc, argv, &o);
	if (ret)
		return ret == FS_HELP_SHOWN ? FS_EXIT_OK : ret;
	if (o.format == FMT_PG_SQL && !o.host) {
		if (gethostname(host, sizeof(host)) || (host[sizeof(host) - 1] = 0,
							fs_pgsql_host_ok(host)))
			return fs_usage_error("export", "this host's name is not one pg-sql takes: give --host NAME");
		o.host = host;
	}
	if (o.input) {
		if (fs_native_read_file(o.input, &n, err_msg)) {
			fs_error("export: %s: %s", o.input, err_msg);
			return FS_EXIT_RUNTIME;
		}
	} else if (from_daemon(cli, &o, &n)) {
		return FS_EXIT_RUNTIME;
	}
	ret = write_output(&o, &n, o.host) ? FS_EXIT_RUNTIME : FS_EXIT_OK;
	fs_native_free(&n);
	return ret;
}
