// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * merge.c - `flowsketch merge FILE... top|flows`: many hosts' exports
 * answered as one daemon would answer for all their traffic.
 *
 * The native files (native.h) must have been made with the same sketch
 * parameters and the same secret (compared by fingerprint); the first
 * difference is named with the two files, since merging such sketches
 * gives counts that are silently wrong.  The sketches merge exactly
 * (sketch.h: cells add, registers take the max), and then:
 *
 *   top    every candidate of any file, estimated in the merged sketch
 *          at its columns (export_perm.h: the same on every host of one
 *          secret, so the file's cells and columns need no secret to
 *          merge and query): never below the flow's count over all hosts,
 *          and with probability 1 - delta at most eps times the merged
 *          total above it (the bound of one sketch of the union stream);
 *   flows  the merged HyperLogLogs' distinct counts, those of the union.
 *
 *   accuracy
 *          the files' keyed samples merged, against the merged sketches
 *          (merge_accuracy.h): `flowsketch accuracy` for the fleet; the
 *          files must hold samples of one rate and size (the other
 *          answers leave the samples out, and merge files of any).
 *
 *   top --by KEY, spread --by src|dst
 *          the fleet's top prefixes and spreaders, from the detection
 *          sketches (merge_prefixes() below: estimated from each candidate's own
 *          buckets, the files holding no secret); the files must have
 *          been made with the same --detect sizes, and with the sketch
 *          asked for.
 *
 * The answers are built in the daemon's JSON shape (protocol.h) and
 * shown by the same renderers as top and flows (show.h), with --json
 * printing the object.  They add "files" and "time_difference": how far
 * apart the files' spans start and end.  Spans of different times merge
 * all the same (a sum of traffic is a sum), but a fleet view usually
 * wants the same span everywhere, so a difference of a millisecond or
 * more is also said on stderr.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "keys.h"
#include "flow_json.h"
#include "args.h"
#include "cli.h"
#include "client.h"
#include "flow_fmt.h"
#include "hll_estimate.h"
#include "detect_json.h"
#include "merge_accuracy.h"
#include "native.h"
#include "show.h"

#define MERGE_DEFAULT_N 10
#define MERGE_MAX_N 10000
/* Spans that start and end within this of each other cover the same
 * time: host clocks and rotations are not closer than that. */
#define MERGE_SAME_TIME_NS 1000000ULL

enum merge_cmd { MERGE_TOP, MERGE_FLOWS, MERGE_SPREAD, MERGE_ACCURACY };

struct merge_opts {
	char **files;
	size_t nfiles;
	enum merge_cmd cmd;
	__u32 n;
	bool by_bytes;
	bool json;
	bool by_key;			/* top --by: prefixes, not flows */
	struct fs_keyspec key;		/* top --by's */
	__u32 side;			/* spread --by's, FS_SPREAD_* */
	bool side_given;
};

/* A candidate of the union and its estimates in the merged sketch. */
struct merged_flow {
	struct fs_flow_key key;
	__u32 cols[FS_CMS_MAX_DEPTH];	/* exported columns (native.h) */
	__u64 packets, bytes;
};

#define OFF(field) offsetof(struct merge_opts, field)

static int opt_sort(const struct fs_optset *set, const struct fs_opt *opt,
		    const char *arg, void *o)
{
	static const char *const words[] = { "packets", "bytes", NULL };
	int i = fs_opt_word(set, opt, arg, words, "packets or bytes");

	if (i >= 0)
		((struct merge_opts *)o)->by_bytes = i == 1;
	return i < 0 ? i : 0;
}

/* --number and --sort after flows: refused by name (-n and -o are not
 * options of flows at all). */
static int top_only(const struct fs_optset *set, const struct fs_opt *opt,
		    const char *arg, void *o)
{
	return fs_bad_value(set, "%s applies to top only",
			    opt->off == OFF(n) ? "-n" : "--sort");
}

/* top --by KEY: the top prefixes of KEY (keyspec.h). */
static int opt_by_key(const struct fs_optset *set, const struct fs_opt *opt,
		      const char *arg, void *o)
{
	struct merge_opts *m = o;
	const char *why;

	if (fs_keyspec_parse(arg, &m->key, &why))
		return fs_bad_value(set, "--by '%s': %s", arg, why);
	m->by_key = true;
	return 0;
}

/* spread --by src|dst. */
static int opt_by_side(const struct fs_optset *set, const struct fs_opt *opt,
		       const char *arg, void *o)
{
	static const char *const words[] = { "src", "dst", NULL };
	int i = fs_opt_word(set, opt, arg, words, "src or dst");
	struct merge_opts *m = o;

	if (i < 0)
		return i;
	m->side = i ? FS_SPREAD_DST : FS_SPREAD_SRC;
	m->side_given = true;
	return 0;
}

static int not_spread(const struct fs_optset *set, const struct fs_opt *opt,
		      const char *arg, void *o)
{
	return fs_bad_value(set, "--sort applies to top only (spreaders are ranked by their distinct peers)");
}

static const struct fs_opt top_opts[] = {
	{ "number", 'n', "N", fs_opt_number, OFF(n), 1, MERGE_MAX_N, NULL,
	  "flows, prefixes or spreaders to list\n(default "
	  FS_STR(MERGE_DEFAULT_N) ", at most " FS_STR(MERGE_MAX_N) ")" },
	{ "sort", 'o', "KEY", opt_sort, 0, 0, 0, NULL, "packets (default) or bytes" },
	{ "by", 'b', "KEY", opt_by_key, 0, 0, 0, NULL,
	  "top prefixes instead of flows: src, dst, src4/N, dst4/N\n"
	  "(N 8, 16, 24, 32), src6/N, dst6/N (N 32, 48, 64, 128);\n"
	  "the files' prefix sketch (flowsketchd --detect prefixes)" },
	{ "json", 'j', NULL, NULL, OFF(json), 0, 0, NULL, "print the answer as JSON" },
	{ "help", 'h', NULL, fs_opt_show_help, 0, 0, 0, NULL, "this text" },
	{ 0 }
};

static int merge_help(const struct fs_optset *set, const struct fs_opt *opt,
		      const char *arg, void *o);

static const struct fs_opt spread_opts[] = {
	{ "number", 'n', "N", fs_opt_number, OFF(n), 1, MERGE_MAX_N, NULL, NULL },
	{ "by", 'b', "SIDE", opt_by_side, 0, 0, 0, NULL, NULL },
	{ "sort", 0, "KEY", not_spread, 0, 0, 0, NULL, NULL },
	{ "json", 'j', NULL, NULL, OFF(json), 0, 0, NULL, NULL },
	{ "help", 'h', NULL, merge_help, 0, 0, 0, NULL, NULL },
	{ 0 }
};

static const struct fs_opt flows_opts[] = {
	{ "number", 0, "N", top_only, OFF(n), 0, 0, NULL, NULL },
	{ "sort", 0, "KEY", top_only, 0, 0, 0, NULL, NULL },
	{ "json", 'j', NULL, NULL, OFF(json), 0, 0, NULL, NULL },
	{ "help", 'h', NULL, merge_help, 0, 0, 0, NULL, NULL },
	{ 0 }
};

const struct fs_optset fs_merge_optset = {
	.name = "merge top",
	.usage =
	"Usage: flowsketch merge FILE... top [-n N] [--sort packets|bytes] [--by KEY] [--json]\n"
	"       flowsketch merge FILE... flows [--json]\n"
	"       flowsketch merge FILE... spread --by src|dst [-n N] [--json]\n"
	"       flowsketch merge FILE... accuracy [--json]\n"
	"\n"
	"Merge the native exports of many hosts (flowsketch export --format native)\n"
	"and answer top or flows for their union, as flowsketchd answers for one\n"
	"host; top --by and spread give the fleet's top prefixes and spreaders\n"
	"(the hosts' flowsketchd --detect prefixes, spread), each estimated from\n"
	"the buckets it holds (\"rows\": in how many of the rows it was found);\n"
	"accuracy measures the merged sketches' error against the hosts' keyed\n"
	"samples merged (flowsketchd --sample-rate), as flowsketch accuracy does.\n"
	"The files must share their sketch parameters and hash secret\n"
	"(flowsketchd --secret-file); the first difference is named.\n"
	"\n",
	.opts = top_opts,
	.help_col = FS_CLI_HELP_COL,
	.getopt_error = fs_cli_getopt_error,
};

/* merge's flows: its help is the whole of merge's. */
static int merge_help(const struct fs_optset *set, const struct fs_opt *opt,
		      const char *arg, void *o)
{
	fs_opt_help(stdout, &fs_merge_optset);
	return FS_OPT_STOP;
}

static const struct fs_optset flows_optset = {
	.name = "merge flows",
	.opts = flows_opts,
	.getopt_error = fs_cli_getopt_error,
};

static const struct fs_optset spread_optset = {
	.name = "merge spread",
	.opts = spread_opts,
	.getopt_error = fs_cli_getopt_error,
};

/* accuracy takes flows's options: --json, --help, and top's refused. */
static const struct fs_optset accuracy_optset = {
	.name = "merge accuracy",
	.opts = flows_opts,
	.getopt_error = fs_cli_getopt_error,
};

/* The subcommands, in enum merge_cmd's order, and their options. */
static const struct {
	const char *name;
	const struct fs_optset *opts;
} merge_cmds[] = {
	[MERGE_TOP] = { "top", &fs_merge_optset },
	[MERGE_FLOWS] = { "flows", &flows_optset },
	[MERGE_SPREAD] = { "spread", &spread_optset },
	[MERGE_ACCURACY] = { "accuracy", &accuracy_optset },
};

/* The subcommand w names, or -1. */
static int subcommand(const char *w)
{
	size_t i;

	for (i = 0; i < sizeof(merge_cmds) / sizeof(merge_cmds[0]); i++)
		if (!strcmp(w, merge_cmds[i].name))
			return (int)i;
	return -1;
}

static int parse_opts(int argc, char **argv, struct merge_opts *o)
{
	int k, ret;

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fs_opt_help(stdout, &fs_merge_optset);
		return FS_HELP_SHOWN;
	}
	for (k = 1; k < argc && subcommand(argv[k]) < 0; k++)
		if (argv[k][0] == '-')
			return fs_usage_error("merge", "options go after top, flows, spread or accuracy, not before ('%s')",
					      argv[k]);
	if (k == argc)
		return fs_usage_error("merge", "give the files, then top, flows, spread or accuracy (see 'flowsketch merge --help')");
	if (k == 1)
		return fs_usage_error("merge", "no file given before %s", argv[k]);
	o->files = argv + 1;
	o->nfiles = (size_t)k - 1;
	o->cmd = (enum merge_cmd)subcommand(argv[k]);
	/* The subcommand's words, argv[0] its name. */
	ret = fs_cli_parse_all(merge_cmds[o->cmd].opts, argc - k, argv + k, o);
	if (!ret && o->cmd == MERGE_SPREAD && !o->side_given)
		return fs_usage_error("merge", "spread needs --by src or --by dst");
	return ret;
}

/* ------------------------------------------------------------ checks */

/* "2 x 1024, 8 levels" or "none": a prefix sketch's sizes in words. */
static void say_prefix(char *buf, size_t len, const struct fs_sketch_params *p)
{
	struct fs_prefix_params d;

	fs_params_prefix(p, &d);
	if (!d.log2_width)
		snprintf(buf, len, "none");
	else
		snprintf(buf, len, "%u x %u buckets drawn 1 in %llu", d.depth,
			 1U << d.log2_width, (unsigned long long)fs_prefix_scale(&d));
}

static void say_spread(char *buf, size_t len, const struct fs_sketch_params *p)
{
	struct fs_spread_params d;

	fs_params_spread(p, &d);
	if (!d.log2_width)
		snprintf(buf, len, "none");
	else
		snprintf(buf, len, "%u x %u buckets sampled 1 in %u", d.depth,
			 1U << d.log2_width, 1U << d.sample_shift);
}

/* Whether q's detection sketches differ from p's (flowsketchd --detect
 * and their sizes): buckets of other sizes cannot be added. */
static bool detect_differs(const struct fs_sketch_params *p,
			   const struct fs_sketch_params *q, const char *name_a,
			   char *why, size_t len)
{
	char a[64], b[64];

	if (p->prefix_log2w != q->prefix_log2w || p->prefix_shape != q->prefix_shape) {
		say_prefix(a, sizeof(a), p);
		say_prefix(b, sizeof(b), q);
		snprintf(why, len, "its prefix sketch (flowsketchd --detect) is %s, %s's %s",
			 b, name_a, a);
		return true;
	}
	if (p->spread_log2w != q->spread_log2w || p->spread_shape != q->spread_shape) {
		say_spread(a, sizeof(a), p);
		say_spread(b, sizeof(b), q);
		snprintf(why, len, "its spread sketch (flowsketchd --detect) is %s, %s's %s",
			 b, name_a, a);
		return true;
	}
	return false;
}

/* A file without the detection sketch o asks for: -EINVAL, said. */
static int lacks_sketch(const struct merge_opts *o, const struct fs_native *f,
			const char *name)
{
	if (o->cmd == MERGE_TOP && o->by_key && !f->sketch.params.prefix_log2w) {
		fs_error("merge: %s holds no prefix sketch, which top --by needs: its host's flowsketchd ran without --detect prefixes",
			 name);
		return -EINVAL;
	}
	if (o->cmd == MERGE_SPREAD && !f->sketch.params.spread_log2w) {
		fs_error("merge: %s holds no spread sketch, which spread needs: its host's flowsketchd ran without --detect spread",
			 name);
		return -EINVAL;
	}
	if (o->cmd == MERGE_ACCURACY && !f->sketch.params.sample_log2b) {
		fs_error("merge: %s holds no keyed sample, which accuracy needs: its host's flowsketchd ran with --sample-rate off (or a flowsketch before native format 4 exported it)",
			 name);
		return -EINVAL;
	}
	return 0;
}

/* "1 in 1024 in 512 buckets" or "none": a sample's rate and size. */
static void say_sample(char *buf, size_t len, const struct fs_sketch_params *p)
{
	if (!p->sample_log2b)
		snprintf(buf, len, "none");
	else
		snprintf(buf, len, "1 in %u in %u buckets", 1U << p->sample_shift,
			 1U << p->sample_log2b);
}

/*
 * Forget f's keyed sample: only accuracy reads it, and the other answers
 * merge files of any sample (or none, from a release before exports
 * carried it, or a host with --sample-rate off).
 */
static void forget_sample(struct fs_native *f)
{
	free(f->sketch.part[FS_KIND_SAMPLE]);
	f->sketch.part[FS_KIND_SAMPLE] = NULL;
	f->sketch.params.sample_log2b = 0;
	f->sketch.params.sample_shift = 0;
}

/* 0 when b merges with a, else -EINVAL with what differs in why. */
static int mismatch(const struct fs_native *a, const struct fs_native *b,
		    const char *name_a, char *why, size_t len)
{
	const struct fs_sketch_params *p = &a->sketch.params, *q = &b->sketch.params;

	if (p->cms_depth != q->cms_depth)
		snprintf(why, len, "its Count-Min depth is %u, %s's %u",
			 q->cms_depth, name_a, p->cms_depth);
	else if (p->cms_log2_width != q->cms_log2_width)
		snprintf(why, len, "its Count-Min width is %u, %s's %u",
			 1U << q->cms_log2_width, name_a, 1U << p->cms_log2_width);
	else if (p->hll_p != q->hll_p)
		snprintf(why, len, "its HyperLogLog precision is %u, %s's %u",
			 q->hll_p, name_a, p->hll_p);
	else if (detect_differs(p, q, name_a, why, len))
		;
	else if (p->sample_log2b != q->sample_log2b ||
		 (p->sample_log2b && p->sample_shift != q->sample_shift)) {
		char x[48], y[48];

		say_sample(x, sizeof(x), p);
		say_sample(y, sizeof(y), q);
		snprintf(why, len, "its keyed sample (flowsketchd --sample-rate, --sample-buckets) is %s, %s's %s",
			 y, name_a, x);
	}
	else if (a->fingerprint != b->fingerprint)
		snprintf(why, len, "it was made with another hash secret (fingerprint %016llx, %s's %016llx): hosts whose sketches merge share one flowsketchd --secret-file",
			 (unsigned long long)b->fingerprint, name_a,
			 (unsigned long long)a->fingerprint);
	else
		return 0;
	return -EINVAL;
}

static __u64 absdiff(__u64 a, __u64 b)
{
	return a > b ? a - b : b - a;
}

/*
 * How far the files' spans are from the first's: the largest start and
 * end differences into *ds, *de, and the file with the largest of either
 * into *worst (0: all cover the same time).
 */
static void time_difference(const struct fs_native *f, size_t nfiles,
			    __u64 *ds, __u64 *de, size_t *worst)
{
	__u64 most = 0;
	size_t i;

	*ds = *de = 0;
	*worst = 0;
	for (i = 1; i < nfiles; i++) {
		__u64 s = absdiff(f[i].start_ns, f[0].start_ns);
		__u64 e = absdiff(f[i].end_ns, f[0].end_ns);

		if (s > *ds)
			*ds = s;
		if (e > *de)
			*de = e;
		if ((s > e ? s : e) > most) {
			most = s > e ? s : e;
			*worst = i;
		}
	}
	if (most < MERGE_SAME_TIME_NS)
		*worst = 0;
}

/* "0.312 s later" / "1.5 s earlier" / "at the same time". */
static const char *when(char *buf, size_t len, __u64 t, __u64 ref)
{
	if (absdiff(t, ref) < MERGE_SAME_TIME_NS)
		snprintf(buf, len, "at the same time");
	else
		snprintf(buf, len, "%.3f s %s", (double)absdiff(t, ref) / 1e9,
			 t > ref ? "later" : "earlier");
	return buf;
}

static void warn_time(const struct merge_opts *o, const struct fs_native *f,
		      size_t worst)
{
	char s[48], e[48];

	fs_error("merge: the files cover different times: %s starts %s and ends %s than %s%s",
		 o->files[worst], when(s, sizeof(s), f[worst].start_ns, f[0].start_ns),
		 when(e, sizeof(e), f[worst].end_ns, f[0].end_ns), o->files[0],
		 o->nfiles > 2 ? " (the largest difference)" : "");
}

/* ----------------------------------------------------------- answers */

static void add_u64(struct json_object *o, const char *key, __u64 v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

static void add_double(struct json_object *o, const char *key, double v)
{
	json_object_object_add(o, key, json_object_new_double(v));
}

static void add_string(struct json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, json_object_new_string(v));
}

/* What top and flows answers share: the span, the distinct counts, the
 * merge's own fields. */
static struct json_object *answer_common(const struct merge_opts *o,
					 const struct fs_native *f,
					 const struct fs_sketch *sum)
{
	struct json_object *a = json_object_new_object(), *td;
	__u64 start = f[0].start_ns, end = f[0].end_ns, windows = 0, ds, de;
	const char *dir = NULL;
	size_t i, worst;

	for (i = 0; i < o->nfiles; i++) {
		const char *d = f[i].direction == FS_NATIVE_DIR_IN ? "in" :
				f[i].direction == FS_NATIVE_DIR_OUT ? "out" : "both";

		if (f[i].start_ns < start)
			start = f[i].start_ns;
		if (f[i].end_ns > end)
			end = f[i].end_ns;
		if (f[i].windows > windows)
			windows = f[i].windows;
		dir = !dir || !strcmp(dir, d) ? d : "mixed";
	}
	add_u64(a, FS_KEY_SPAN_SECONDS, (end - start + 500000000ULL) / 1000000000ULL);
	add_u64(a, FS_KEY_WINDOWS, windows);
	add_u64(a, FS_KEY_WINDOW_SECONDS, f[0].window_ns / 1000000000ULL);
	add_u64(a, FS_KEY_WINDOW_START, start / 1000000000ULL);
	add_u64(a, FS_KEY_WINDOW_END, end / 1000000000ULL);
	add_u64(a, FS_KEY_WINDOW_START_NS, start);
	add_u64(a, FS_KEY_WINDOW_END_NS, end);
	add_string(a, FS_KEY_DIRECTION, dir);
	add_u64(a, FS_KEY_DISTINCT_FLOWS, (__u64)llround(fs_sketch_distinct(sum, FS_HLL_FLOWS)));
	add_u64(a, FS_KEY_DISTINCT_SOURCES, (__u64)llround(fs_sketch_distinct(sum, FS_HLL_SOURCES)));
	add_u64(a, FS_KEY_DISTINCT_DESTINATIONS, (__u64)llround(fs_sketch_distinct(sum, FS_HLL_DESTS)));
	add_double(a, FS_KEY_RSE, fs_hll_rse(sum->params.hll_p));
	add_u64(a, FS_KEY_HLL_PRECISION, sum->params.hll_p);
	add_u64(a, "files", o->nfiles);
	time_difference(f, o->nfiles, &ds, &de, &worst);
	td = json_object_new_object();
	add_double(td, "start_seconds", (double)ds / 1e9);
	add_double(td, "end_seconds", (double)de / 1e9);
	json_object_object_add(a, "time_difference", td);
	if (worst)
		warn_time(o, f, worst);
	return a;
}

/*
 * The fleet's top prefixes and spreaders, in the daemon's answers' shapes
 * (detect_json.h).  The files hold no hash secret, so a candidate's
 * buckets cannot be found from its hash: each is estimated from the
 * buckets it is the candidate of, and says in "rows" over how many of the
 * d rows.  The merged buckets are those of one sketch of the union stream
 * (prefix.h and spread.h, "Merge"), so the bounds are one daemon's, with
 * rows in place of d in the probability of the one-sided term.
 */
static int merge_prefixes(struct json_object *a, const struct fs_sketch *sum,
			  const struct merge_opts *o)
{
	struct fs_prefix_params p;

	fs_params_prefix(&sum->params, &p);
	return fs_prefixes_json(a, sum->prefix, &p, NULL, &o->key, o->by_bytes,
				o->n, sum->totals.packets, sum->totals.bytes);
}

static int merge_spreaders(struct json_object *a, const struct fs_sketch *sum,
			   const struct merge_opts *o)
{
	struct fs_spread_params p;

	fs_params_spread(&sum->params, &p);
	return fs_spreaders_json(a, sum->spread, &p, NULL, o->side, o->n,
				 fs_sketch_distinct(sum, FS_HLL_FLOWS));
}

static int key_cmp(const void *a, const void *b)
{
	const struct merged_flow *x = a, *y = b;
	int c = memcmp(&x->key, &y->key, sizeof(x->key));

	if (c)
		return c;
	return memcmp(x->cols, y->cols, sizeof(x->cols));
}

static int cmp_u64(__u64 a, __u64 b)
{
	return (a > b) - (a < b);
}

/* The daemon's order (topk.h): the sort metric, the other one, then the
 * lower key first; highest first. */
static int rank_cmp(const void *a, const void *b, void *by_bytes)
{
	const struct merged_flow *x = a, *y = b;
	bool bytes = *(const bool *)by_bytes;
	int r;

	r = bytes ? cmp_u64(y->bytes, x->bytes) : cmp_u64(y->packets, x->packets);
	if (!r)
		r = bytes ? cmp_u64(y->packets, x->packets) : cmp_u64(y->bytes, x->bytes);
	if (!r)
		r = memcmp(&x->key, &y->key, sizeof(x->key));
	return r;
}

static struct json_object *flow_json(const struct merged_flow *m, double share)
{
	struct json_object *f = fs_flow_key_json(&m->key);

	add_u64(f, FS_KEY_PACKETS, m->packets);
	add_u64(f, FS_KEY_BYTES, m->bytes);
	add_double(f, FS_KEY_SHARE, share);
	return f;
}

/* top over the union: NULL when out of memory (said). */
static struct json_object *answer_top(const struct merge_opts *o,
				      const struct fs_native *f,
				      const struct fs_sketch *sum)
{
	const struct fs_sketch_params *p = &sum->params;
	double eps = fs_cms_epsilon(p);
	struct json_object *a, *eb, *flows;
	struct merged_flow *m;
	size_t i, j, n = 0, total_cands = 0;
	__u64 total;

	for (i = 0; i < o->nfiles; i++)
		total_cands += f[i].ncandidates;
	m = calloc(total_cands ? total_cands : 1, sizeof(*m));
	if (!m) {
		fs_error("out of memory");
		return NULL;
	}
	for (i = 0; i < o->nfiles; i++)
#ifdef FS_MUTANT_MERGE_NO_UNION	/* fleet.sh's mutant: no union of candidates */
		if (!i)
#endif
		for (j = 0; j < f[i].ncandidates; j++) {
			m[n].key = f[i].candidates[j].key;
			memcpy(m[n].cols, f[i].candidates[j].cols, sizeof(m[n].cols));
			n++;
		}
	/* The union: each key once, whichever hosts reported it. */
	qsort(m, n, sizeof(*m), key_cmp);
	for (i = 0, j = 0; i < n; i++)
		if (!j || key_cmp(&m[j - 1], &m[i]))
			m[j++] = m[i];
	n = j;
	for (i = 0; i < n; i++) {
		struct fs_cms_cell est;

		fs_sketch_query_columns(sum, m[i].cols, &est);
		m[i].packets = est.packets;
		m[i].bytes = est.bytes;
	}
	qsort_r(m, n, sizeof(*m), rank_cmp, (void *)&o->by_bytes);

	a = answer_common(o, f, sum);
	add_string(a, FS_KEY_SORT, o->by_bytes ? "bytes" : "packets");
	add_u64(a, FS_KEY_TOTAL_PACKETS, sum->totals.packets);
	add_u64(a, FS_KEY_TOTAL_BYTES, sum->totals.bytes);
	eb = json_object_new_object();
	add_double(eb, FS_KEY_EPSILON, eps);
	add_double(eb, FS_KEY_DELTA, fs_cms_delta(p));
	add_u64(eb, FS_KEY_PACKETS, (__u64)ceil(eps * (double)sum->totals.packets));
	add_u64(eb, FS_KEY_BYTES, (__u64)ceil(eps * (double)sum->totals.bytes));
	json_object_object_add(a, FS_KEY_ERROR_BOUND, eb);
	total = o->by_bytes ? sum->totals.bytes : sum->totals.packets;
	flows = json_object_new_array();
	for (i = 0; i < n && i < o->n; i++) {
		__u64 v = o->by_bytes ? m[i].bytes : m[i].packets;

		json_object_array_add(flows, flow_json(&m[i], total ?
					(double)v / (double)total : 0));
	}
	json_object_object_add(a, FS_KEY_FLOWS, flows);
	add_u64(a, FS_KEY_CANDIDATES, n);
	free(m);
	return a;
}

/* ------------------------------------------------------------ command */

int fs_cmd_merge(const struct fs_cli *cli, int argc, char **argv)
{
	struct merge_opts o = { .n = MERGE_DEFAULT_N };
	char err[FS_NATIVE_ERR_MAX], why[320];
	struct json_object *answer = NULL;
	struct fs_native *f = NULL;
	fs_show_fn *show;
	int ret = FS_EXIT_RUNTIME;
	size_t i, loaded = 0;
	int r;

	r = parse_opts(argc, argv, &o);
	if (r)
		return r == FS_HELP_SHOWN ? FS_EXIT_OK : r;
	f = calloc(o.nfiles, sizeof(*f));
	if (!f) {
		fs_error("out of memory");
		return FS_EXIT_RUNTIME;
	}
	/* The union's sketch is summed in the first file's as the files are
	 * read, and each other file's sketch freed once added: a merge of
	 * many hosts holds one sketch, and their candidates. */
	for (loaded = 0; loaded < o.nfiles; loaded++) {
		if (fs_native_read_file(o.files[loaded], &f[loaded], err)) {
			fs_error("merge: %s: %s", o.files[loaded], err);
			goto out;
		}
		if (lacks_sketch(&o, &f[loaded], o.files[loaded])) {
			loaded++;
			goto out;
		}
		if (o.cmd != MERGE_ACCURACY)
			forget_sample(&f[loaded]);
		if (!loaded)
			continue;
		if (mismatch(&f[0], &f[loaded], o.files[0], why, sizeof(why))) {
			fs_error("merge: %s does not merge with %s: %s",
				 o.files[loaded], o.files[0], why);
			loaded++;
			goto out;
		}
		/* Cannot fail now: what fs_params_mergeable() compares is
		 * what mismatch() did (the secrets, zero in files, by their
		 * fingerprints). */
#ifndef FS_MUTANT_MERGE_FIRST_SKETCH	/* fleet.sh's mutant: no cell sum */
		(void)fs_sketch_merge(&f[0].sketch, &f[loaded].sketch);
#endif
		fs_sketch_free(&f[loaded].sketch);
	}
	if (o.cmd == MERGE_TOP && !o.by_key) {
		answer = answer_top(&o, f, &f[0].sketch);
		show = fs_top_show;
	} else if (o.cmd == MERGE_ACCURACY) {
		answer = answer_common(&o, f, &f[0].sketch);
		show = fs_accuracy_show;
		r = fs_merge_accuracy(answer, f, o.nfiles, &f[0].sketch);
		if (r == -ENOMEM)
			fs_error("out of memory");
		if (r)
			goto out;
	} else {
		answer = answer_common(&o, f, &f[0].sketch);
		show = o.cmd == MERGE_FLOWS ? fs_flows_show :
		       o.cmd == MERGE_TOP ? fs_prefixes_show : fs_spread_show;
		if (o.cmd == MERGE_TOP)
			r = merge_prefixes(answer, &f[0].sketch, &o);
		else if (o.cmd == MERGE_SPREAD)
			r = merge_spreaders(answer, &f[0].sketch, &o);
		if (r) {
			fs_error("out of memory");
			goto out;
		}
	}
	if (!answer)
		goto out;
	if (!o.json)
		printf("flowsketch merge: %zu export%s\n", o.nfiles, o.nfiles == 1 ? "" : "s");
	if (fs_client_present(answer, o.json, show))
		goto out;
	ret = FS_EXIT_OK;
out:
	json_object_put(answer);
	for (i = 0; i < loaded; i++)
		fs_native_free(&f[i]);
	free(f);
	return ret;
}
