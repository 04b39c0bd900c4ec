// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * size.c - `flowsketch size`: how much memory an error target costs.
 *
 * Without options it prints the four reference tables (Bloom filter,
 * Count-Min, HyperLogLog, Bloom filter past its capacity); each option
 * group computes one row instead.  Every figure comes from the formulas in
 * user/lib/sizing.c; this file only picks the inputs and lays them out.
 * Rows are computed into structs first, then printed as text or JSON, so
 * both outputs show the same numbers.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "args.h"
#include "cli.h"
#include "format.h"
#include "reply.h"
#include "cidr.h"
#include "hll_estimate.h"
#include "sizing.h"
#include "flowsketch/hll.h"
#include "flowsketch/bloom.h"
#include "flowsketch/cms.h"
#include "flowsketch/params.h"
#include "size_detect.h"

#define SIZE_DEFAULT_DELTA 0.01
#define SIZE_DEFAULT_ITEMS 1e9
/* The over-capacity table's filter: sized for 1 % at its best k. */
#define SIZE_OVERFILL_P 0.01
/* --blocklist-max when not given: the daemon's default. */
#define SIZE_BLOCKLIST_MAX 100000

struct bloom_row {
	double blocked_bits_per_item;	/* one line a probe (bloom.h) */
	unsigned int blocked_k;
	double p, items, bits, bits_per_item, bytes, fp;
	unsigned int k;
};

struct cms_row {
	double epsilon, delta, items, width, bytes, overcount;
	__u32 depth;
	/* The same target as flowsketch sizes it: power-of-two width. */
	__u32 fs_log2w, fs_depth;
	double fs_epsilon, fs_delta, fs_bytes, fs_overcount;
};

struct hll_row {
	__u32 p;
	__u64 registers;
	double rse, bytes, fs_bytes;
};

struct overfill_row {
	double load, fill, fp;
};

/* The blocklist's filter for a list (--blocklist FILE) and the maps for
 * --blocklist-max entries (sizing.h). */
struct block_row {
	unsigned int max, max_log2;
	double map_bytes, worst_keys;
	bool list;			/* a list was read: the rest is set */
	const char *path;
	size_t entries, v4, summary_only;
	__u64 keys;			/* expanded, repeats counted */
	unsigned int log2, k;
	double capacity, fpr;
};

struct size_opts {
	bool json, cms, hll, bloom_n, bloom_p, block, block_max_set;
	double cms_epsilon, cms_delta, items, bloom_items, bloom_fp;
	bool cms_delta_set, items_set;
	__u32 hll_p, block_max;
	const char *block_file;
};

#define OFF(field) offsetof(struct size_opts, field)

/* --cms-epsilon and --cms-delta: a probability no smaller than the widest
 * (deepest) Count-Min flowsketch builds can give. */
static int opt_cms(const struct fs_optset *set, const struct fs_opt *opt,
		   const char *arg, void *o)
{
	bool eps = opt->off == OFF(cms_epsilon);
	double min = eps ? fs_cms_min_epsilon() : fs_cms_min_delta();
	double *v = (double *)((char *)o + opt->off);

	if (fs_parse_probability(arg, v) || *v < min)
		return fs_bad_value(set, eps ? "--cms-epsilon must be from %.2g to below 1 (flowsketch's widest Count-Min has 2^%d columns), not '%s'" :
				    "--cms-delta must be from %.2g to below 1 (flowsketch's deepest Count-Min has %d rows), not '%s'",
				    min, eps ? FS_CMS_MAX_LOG2W : FS_CMS_MAX_DEPTH, arg);
	return 0;
}

static int opt_count(const struct fs_optset *set, const struct fs_opt *opt,
		     const char *arg, void *o)
{
	if (fs_parse_count(arg, (double *)((char *)o + opt->off)))
		return fs_bad_value(set, "--%s must be a positive whole number, not '%s'",
				    opt->name, arg);
	return 0;
}

static int opt_hll_p(const struct fs_optset *set, const struct fs_opt *opt,
		     const char *arg, void *o)
{
	if (fs_parse_u32(arg, FS_HLL_MIN_P, FS_HLL_MAX_P, &((struct size_opts *)o)->hll_p))
		return fs_bad_value(set, "--hll-p must be a whole number from %d to %d, not '%s'",
				    FS_HLL_MIN_P, FS_HLL_MAX_P, arg);
	return 0;
}

static int opt_bloom_p(const struct fs_optset *set, const struct fs_opt *opt,
		       const char *arg, void *o)
{
	if (fs_parse_probability(arg, &((struct size_opts *)o)->bloom_fp))
		return fs_bad_value(set, "--bloom-p must be a probability between 0 and 1 (0.01 or 1%%), not '%s'", arg);
	return 0;
}

static int opt_block_max(const struct fs_optset *set, const struct fs_opt *opt,
			 const char *arg, void *o)
{
	if (fs_parse_u32(arg, 1, 1000000, &((struct size_opts *)o)->block_max))
		return fs_bad_value(set, "--blocklist-max must be a whole number from 1 to 1000000, not '%s'", arg);
	return 0;
}

static const struct fs_opt size_opts[] = {
	{ "cms-epsilon", 0, "E", opt_cms, OFF(cms_epsilon), 0, 0, NULL,
	  "Count-Min overcount as a share of the total (0.001 or 0.1%)" },
	{ "cms-delta", 0, "D", opt_cms, OFF(cms_delta), 0, 0, NULL,
	  "probability the overcount bound fails (default 1%)" },
	{ "items", 0, "N", opt_count, OFF(items), 0, 0, NULL,
	  "total count N the overcount is given for (default 1e9)" },
	{ "hll-p", 0, "P", opt_hll_p, 0, 0, 0, NULL,
	  "HyperLogLog precision, " FS_STR(FS_HLL_MIN_P) " to " FS_STR(FS_HLL_MAX_P) },
	{ "bloom-n", 0, "N", opt_count, OFF(bloom_items), 0, 0, NULL,
	  "items a Bloom filter must hold" },
	{ "bloom-p", 0, "P", opt_bloom_p, 0, 0, 0, NULL,
	  "its false-positive rate at N items (0.01 or 1%)" },
	{ "blocklist", 0, "FILE", NULL, OFF(block_file), 0, 0, NULL,
	  "the blocklist's filter for this list (its expanded keys)" },
	{ "blocklist-max", 0, "N", opt_block_max, 0, 0, 0, NULL,
	  "and the maps flowsketchd --blocklist-max N allocates (default 100000)" },
	{ "json", 'j', NULL, NULL, OFF(json), 0, 0, NULL, "machine-readable output" },
	{ "help", 'h', NULL, fs_opt_show_help, 0, 0, 0, NULL, "this text" },
	{ 0 }
};

const struct fs_optset fs_size_optset = {
	.name = "size",
	.usage =
	"Usage: flowsketch size [--json]\n"
	"       flowsketch size --cms-epsilon E [--cms-delta D] [--items N] [--json]\n"
	"       flowsketch size --hll-p P [--json]\n"
	"       flowsketch size --bloom-n N --bloom-p P [--json]\n"
	"       flowsketch size [--blocklist FILE] [--blocklist-max N] [--json]\n"
	"\n"
	"Memory for an error target.  Without options: reference tables for Bloom\n"
	"filters, Count-Min and HyperLogLog.  Option groups combine.\n"
	"\n",
	.footer = "\nUnits: KB, MB, GB are powers of 1000; KiB, MiB are powers of 1024.\n",
	.opts = size_opts,
	.help_col = 19,
	.compact = true,
	.getopt_error = fs_cli_getopt_error,
};

static int parse_opts(int argc, char **argv, struct size_opts *o)
{
	const struct fs_optset *set = &fs_size_optset;
	uint64_t given;
	int ret;

	o->cms_delta = SIZE_DEFAULT_DELTA;
	o->items = SIZE_DEFAULT_ITEMS;
	ret = fs_cli_parse(set, argc, argv, o, &given);
	if (ret)
		return ret;
	o->cms = fs_opt_given(set, given, "cms-epsilon");
	o->cms_delta_set = fs_opt_given(set, given, "cms-delta");
	o->items_set = fs_opt_given(set, given, "items");
	o->hll = fs_opt_given(set, given, "hll-p");
	o->bloom_n = fs_opt_given(set, given, "bloom-n");
	o->bloom_p = fs_opt_given(set, given, "bloom-p");
	o->block_max_set = fs_opt_given(set, given, "blocklist-max");
	o->block = o->block_max_set || fs_opt_given(set, given, "blocklist");
	if (!o->block_max_set)
		o->block_max = SIZE_BLOCKLIST_MAX;
	if ((o->cms_delta_set || o->items_set) && !o->cms)
		return fs_usage_error("size", "--cms-delta and --items need --cms-epsilon");
	if (o->bloom_n != o->bloom_p)
		return fs_usage_error("size", "--bloom-n and --bloom-p go together");
	return fs_no_operands("size", argc, argv);
}

/* --- the rows ---------------------------------------------------------- */

static void bloom_row(double p, double items, struct bloom_row *r)
{
	r->p = p;
	r->items = items;
	r->bits = fs_bloom_bits(items, p);
	r->bits_per_item = fs_bloom_bits_per_item(p);
	r->k = fs_bloom_best_k(r->bits_per_item);
	r->bytes = r->bits / 8;
	/* With k rounded to an integer the rate moves off p a little. */
	r->fp = fs_bloom_false_positive(items, r->bits, r->k);
	r->blocked_bits_per_item = fs_bloom_bits_per_key(p, &r->blocked_k);
}

/* The options were range-checked, so fs_cms_size_for() cannot fail. */
static void cms_row(double epsilon, double delta, double items,
		    struct cms_row *r)
{
	double fs_width;

	r->epsilon = epsilon;
	r->delta = delta;
	r->items = items;
	r->width = fs_cms_width_exact(epsilon);
	r->depth = fs_cms_depth_for(delta);
	r->bytes = fs_cms_bytes(r->width, r->depth, 4);
	r->overcount = fs_cms_overcount(epsilon, items);
	fs_cms_size_for(epsilon, delta, &r->fs_log2w, &r->fs_depth);
	fs_width = (double)(1U << r->fs_log2w);
	r->fs_epsilon = fs_cms_epsilon_of(fs_width);
	r->fs_delta = fs_cms_delta_of(r->fs_depth);
	/* What a packet can touch: the datapath's narrow cells (cms.h). */
	r->fs_bytes = fs_cms_bytes(fs_width, r->fs_depth, sizeof(__u32));
	r->fs_overcount = fs_cms_overcount(r->fs_epsilon, items);
}

static void hll_row(__u32 p, struct hll_row *r)
{
	r->p = p;
	r->registers = fs_hll_registers(p);
	r->rse = fs_hll_rse(p);
	r->bytes = fs_hll_bytes(p, 6);
	/* The datapath packs five 6-bit registers in 32 bits (hll.h). */
	r->fs_bytes = (double)fs_hll_registers(p) * sizeof(__u32) /
		      FS_HLL_PACKED_PER_WORD;
}

static void overfill_row(double load, unsigned int *k, struct overfill_row *r)
{
	double n = 1, m = fs_bloom_bits(n, SIZE_OVERFILL_P);

	*k = fs_bloom_best_k(m / n);
	r->load = load;
	r->fill = fs_bloom_fill(load * n, m, *k);
	r->fp = fs_bloom_false_positive(load * n, m, *k);
}

/* The maps for o->block_max entries, and the filter for the list in
 * o->block_file if any: 0, or a usage error naming the file's fault. */
static int block_row(const struct size_opts *o, struct block_row *r)
{
	struct fs_cidr *c = NULL;
	char msg[512];
	size_t i;
	FILE *f;
	int err;

	memset(r, 0, sizeof(*r));
	r->max = o->block_max;
	r->max_log2 = fs_blocklist_max_log2(r->max);
	r->map_bytes = fs_blocklist_map_bytes(r->max);
	r->worst_keys = (double)FS_BLOOM_MAX_EXPAND * r->max;
	if (!o->block_file)
		return 0;
	f = fopen(o->block_file, "r");
	if (!f)
		return fs_usage_error("size", "--blocklist %s: %s", o->block_file, strerror(errno));
	err = fs_cidr_list_parse(f, o->block_file, r->max, &c, &r->entries, msg, sizeof(msg));
	fclose(f);
	if (err) {
		free(c);
		return fs_usage_error("size", "--blocklist %s", msg);
	}
	r->list = true;
	r->path = o->block_file;
	for (i = 0; i < r->entries; i++) {
		r->v4 += c[i].family == FS_FAMILY_IPV4;
		r->summary_only += c[i].len <= FS_BLOOM_SUMMARY_LEN;
		r->keys += fs_cidr_filter_keys(&c[i]);
	}
	free(c);
	r->fpr = fs_blocklist_filter((double)r->keys, r->max_log2, &r->log2, &r->k,
				     &r->capacity);
	return 0;
}

#define MAX_ROWS 8

enum { SEC_BLOOM, SEC_CMS, SEC_HLL, SEC_OVERFILL, SEC_BLOCK, SEC_DETECT, NSECTIONS };

/* The rows to show, a table of each section (SEC_*). */
struct size_tables {
	struct bloom_row bloom[MAX_ROWS];
	struct cms_row cms[MAX_ROWS];
	struct hll_row hll[MAX_ROWS];
	struct overfill_row overfill[MAX_ROWS];
	struct block_row block[1];
	size_t n[NSECTIONS];
	unsigned int overfill_k;
	bool per_billion;
};

/* --- text -------------------------------------------------------------- */

static void print_bloom(const struct size_tables *t)
{
	char p[FS_FMT_MAX], mem[FS_FMT_MAX], items[FS_FMT_MAX], fp[FS_FMT_MAX];
	size_t i;

	printf("Bloom filter: m = -n ln p / (ln 2)^2 bits = -1.44 log2(p) bits per item, best k = (m/n) ln 2\n");
	printf("  %15s  %13s  %6s  %15s  %15s  %15s  |  %18s\n", "false positives",
	       "bits per item", "best k", "items", "memory", "rate at best k",
	       "blocked: bits, k");
	for (i = 0; i < t->n[SEC_BLOOM]; i++) {
		const struct bloom_row *r = &t->bloom[i];

		if (t->per_billion)
			snprintf(mem, sizeof(mem), "%.1f GB", r->bytes / 1e9);
		else
			fs_fmt_bytes(mem, r->bytes);
		snprintf(fp, sizeof(fp), "%.3g%%", r->fp * 100);
		printf("  %15s  %13.1f  %6u  %15s  %15s  %15s  |  %12.1f  %3u\n",
		       fs_fmt_percent_short(p, r->p), r->bits_per_item, r->k,
		       fs_fmt_words(items, r->items), mem, fp,
		       r->blocked_bits_per_item, r->blocked_k);
	}
	printf("  (blocked: all of an item's bits in one 64-byte line, one cache miss a probe, as\n"
	       "   flowsketch's blocklist does; sized by Putze, Sanders and Singler's formula, since\n"
	       "   blocks fill unevenly.  The blocklist keys each prefix on the longest length of\n"
	       "   its group of four (/20 /24 /28 /32, IPv6 /20 .. /128), so a prefix is up to 8\n"
	       "   keys (a /17 is eight /20s) and a source outside every entry matches none: an\n"
	       "   exact lookup only at the false-positive rate, next to an entry or not.  A\n"
	       "   summary of /16s says which groups to probe; see --blocklist FILE)\n");
}

static void print_cms(const struct size_tables *t)
{
	char eps[FS_FMT_MAX], delta[FS_FMT_MAX], w[FS_FMT_MAX], wd[FS_FMT_MAX];
	char mem[FS_FMT_MAX], over[FS_FMT_MAX], items[FS_FMT_MAX];
	char fw[FS_FMT_MAX], fwd[FS_FMT_MAX], feps[FS_FMT_MAX], fmem[FS_FMT_MAX];
	size_t i;

	printf("Count-Min: width = ceil(e / eps), depth = ceil(ln(1 / delta)); overcount at most eps x N with probability 1 - delta\n");
	printf("  %8s  %5s  %13s  %13s  %13s  %17s  |  %17s  %10s  %14s\n",
	       "epsilon", "delta", "width x depth", "memory at 4 B", "N",
	       "overcount at most", "flowsketch w x d", "epsilon", "hot at 4 B");
	for (i = 0; i < t->n[SEC_CMS]; i++) {
		const struct cms_row *r = &t->cms[i];

		snprintf(wd, sizeof(wd), "%s x %u",
			 fs_fmt_grouped(w, (__u64)r->width), r->depth);
		snprintf(fwd, sizeof(fwd), "%s x %u",
			 fs_fmt_grouped(fw, 1ULL << r->fs_log2w), r->fs_depth);
		snprintf(feps, sizeof(feps), "%.3g%%", r->fs_epsilon * 100);
		printf("  %8s  %5s  %13s  %13s  %13s  %17s  |  %17s  %10s  %14s\n",
		       fs_fmt_percent_short(eps, r->epsilon),
		       fs_fmt_percent_short(delta, r->delta), wd,
		       fs_fmt_bytes(mem, r->bytes), fs_fmt_words(items, r->items),
		       fs_fmt_words(over, r->overcount), fwd, feps,
		       fs_fmt_bytes_iec(fmem, r->fs_bytes));
	}
	printf("  (flowsketch rounds the width up to a power of two, which only lowers epsilon;\n"
	   "   a packet touches 4-byte cells that spill into 16-byte ones, exactly: the hot memory\n"
	   "   is what the caches must hold, one window on one CPU; the 16-byte cells take 4 times more)\n");
}

static void print_hll(const struct size_tables *t)
{
	char regs[FS_FMT_MAX], rse[FS_FMT_MAX], mem[FS_FMT_MAX], fmem[FS_FMT_MAX];
	size_t i;

	printf("HyperLogLog: m = 2^p registers, standard error 1.04 / sqrt(m), 6 bits per register\n");
	printf("  %3s  %10s  %14s  %16s  %22s\n", "p", "registers",
	       "standard error", "memory at 6 bits", "flowsketch, 5 in 32 bits");
	for (i = 0; i < t->n[SEC_HLL]; i++) {
		const struct hll_row *r = &t->hll[i];

		printf("  %3u  %10s  %14s  %16s  %22s\n", r->p,
		       fs_fmt_grouped(regs, r->registers),
		       fs_fmt_percent(rse, r->rse, 2),
		       fs_fmt_bytes_iec(mem, r->bytes),
		       fs_fmt_bytes_iec(fmem, r->fs_bytes));
	}
}

static void print_overfill(const struct size_tables *t)
{
	char p[FS_FMT_MAX], load[FS_FMT_MAX], fill[FS_FMT_MAX], fp[FS_FMT_MAX];
	size_t i;

	printf("Bloom filter past its capacity (sized for %s, k = %u): bits set 1 - e^(-kn/m), false positives (bits set)^k\n",
	       fs_fmt_percent_short(p, SIZE_OVERFILL_P), t->overfill_k);
	printf("  %17s  %8s  %15s\n", "items vs capacity", "bits set",
	       "false positives");
	for (i = 0; i < t->n[SEC_OVERFILL]; i++) {
		snprintf(load, sizeof(load), "%gx", t->overfill[i].load);
		printf("  %17s  %8s  %15s\n", load,
		       fs_fmt_percent(fill, t->overfill[i].fill, 0),
		       fs_fmt_percent(fp, t->overfill[i].fp, 2));
	}
}

static void print_block(const struct size_tables *t)
{
	const struct block_row *r = &t->block[0];
	char a[FS_FMT_MAX], b[FS_FMT_MAX], c[FS_FMT_MAX], d[FS_FMT_MAX];

	printf("Blocklist filter: lengths /17 and up in groups of %u keyed on their longest (an entry\n"
	       "expands into at most %u keys), /0 to /16 in the summary of /16s; sized at %s a probe\n",
	       FS_BLOOM_WIDTH, FS_BLOOM_MAX_EXPAND,
	       fs_fmt_percent_short(a, FS_BLOCKLIST_FPR));
	if (r->list) {
		printf("  list %s: %s entries (%s IPv4, %s IPv6), %s of them /16 or shorter (summary only)\n",
		       r->path, fs_fmt_grouped(a, r->entries), fs_fmt_grouped(b, r->v4),
		       fs_fmt_grouped(c, r->entries - r->v4), fs_fmt_grouped(d, r->summary_only));
		printf("  filter keys %s, %.2f an entry; the filter for them: 2^%u blocks (%s), k %u,\n"
		       "  false positives %.3g %% a probe (sized for %s keys: twice its keys, at least 1,024)\n",
		       fs_fmt_grouped(a, r->keys),
		       r->entries ? (double)r->keys / (double)r->entries : 0.0, r->log2,
		       fs_fmt_bytes_iec(b, ldexp(sizeof(struct fs_bloom_block), (int)r->log2)),
		       r->k, 100 * r->fpr, fs_fmt_grouped(c, (__u64)r->capacity));
	}
	printf("  maps for --blocklist-max %s: two filters of 2^%u blocks (%s keys, %u an entry, at\n"
	       "  their worst) and the summary (%s): %s\n",
	       fs_fmt_grouped(a, r->max), r->max_log2, fs_fmt_grouped(b, (__u64)r->worst_keys),
	       FS_BLOOM_MAX_EXPAND, fs_fmt_bytes_iec(c, sizeof(struct fs_block_summary)),
	       fs_fmt_bytes_iec(d, r->map_bytes));
}

/* --- JSON -------------------------------------------------------------- */

static void add_double(struct json_object *o, const char *key, double v)
{
	json_object_object_add(o, key, json_object_new_double(v));
}

static void add_u64(struct json_object *o, const char *key, __u64 v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

static struct json_object *json_bloom(const struct size_tables *t)
{
	struct json_object *arr = json_object_new_array();
	size_t i;

	for (i = 0; i < t->n[SEC_BLOOM]; i++) {
		struct json_object *o = json_object_new_object();

		add_double(o, "false_positive_target", t->bloom[i].p);
		add_u64(o, "items", (__u64)t->bloom[i].items);
		add_double(o, "bits", t->bloom[i].bits);
		add_double(o, "bits_per_item", t->bloom[i].bits_per_item);
		add_u64(o, "hashes", t->bloom[i].k);
		add_double(o, "bytes", t->bloom[i].bytes);
		add_double(o, "false_positive_rate", t->bloom[i].fp);
		add_double(o, "blocked_bits_per_item", t->bloom[i].blocked_bits_per_item);
		add_u64(o, "blocked_hashes", t->bloom[i].blocked_k);
		json_object_array_add(arr, o);
	}
	return arr;
}

static struct json_object *json_cms(const struct size_tables *t)
{
	struct json_object *arr = json_object_new_array();
	size_t i;

	for (i = 0; i < t->n[SEC_CMS]; i++) {
		const struct cms_row *r = &t->cms[i];
		struct json_object *o = json_object_new_object();
		struct json_object *f = json_object_new_object();

		add_double(o, "epsilon", r->epsilon);
		add_double(o, "delta", r->delta);
		add_u64(o, "width", (__u64)r->width);
		add_u64(o, "depth", r->depth);
		add_double(o, "bytes_at_4_byte_counters", r->bytes);
		add_u64(o, "items", (__u64)r->items);
		add_double(o, "overcount", r->overcount);
		add_u64(f, "log2_width", r->fs_log2w);
		add_u64(f, "width", 1ULL << r->fs_log2w);
		add_u64(f, "depth", r->fs_depth);
		add_double(f, "epsilon", r->fs_epsilon);
		add_double(f, "delta", r->fs_delta);
		add_double(f, "bytes", r->fs_bytes);
		add_double(f, "overcount", r->fs_overcount);
		json_object_object_add(o, "flowsketch", f);
		json_object_array_add(arr, o);
	}
	return arr;
}

static struct json_object *json_hll(const struct size_tables *t)
{
	struct json_object *arr = json_object_new_array();
	size_t i;

	for (i = 0; i < t->n[SEC_HLL]; i++) {
		struct json_object *o = json_object_new_object();

		add_u64(o, "p", t->hll[i].p);
		add_u64(o, "registers", t->hll[i].registers);
		add_double(o, "relative_standard_error", t->hll[i].rse);
		add_double(o, "bytes_at_6_bits", t->hll[i].bytes);
		add_double(o, "flowsketch_bytes", t->hll[i].fs_bytes);
		json_object_array_add(arr, o);
	}
	return arr;
}

static struct json_object *json_overfill(const struct size_tables *t)
{
	struct json_object *o = json_object_new_object();
	struct json_object *arr = json_object_new_array();
	size_t i;

	add_double(o, "false_positive_target", SIZE_OVERFILL_P);
	add_u64(o, "hashes", t->overfill_k);
	for (i = 0; i < t->n[SEC_OVERFILL]; i++) {
		struct json_object *r = json_object_new_object();

		add_double(r, "load", t->overfill[i].load);
		add_double(r, "bits_set", t->overfill[i].fill);
		add_double(r, "false_positive_rate", t->overfill[i].fp);
		json_object_array_add(arr, r);
	}
	json_object_object_add(o, "rows", arr);
	return o;
}

static struct json_object *json_block(const struct size_tables *t)
{
	const struct block_row *r = &t->block[0];
	struct json_object *o = json_object_new_object();
	struct json_object *m = json_object_new_object();

	add_double(o, "false_positive_target", FS_BLOCKLIST_FPR);
	add_u64(o, "group_width", FS_BLOOM_WIDTH);
	add_u64(o, "max_keys_per_entry", FS_BLOOM_MAX_EXPAND);
	if (r->list) {
		struct json_object *l = json_object_new_object();

		json_object_object_add(l, "file", json_object_new_string(r->path));
		add_u64(l, "entries", r->entries);
		add_u64(l, "ipv4", r->v4);
		add_u64(l, "ipv6", r->entries - r->v4);
		add_u64(l, "summary_only", r->summary_only);
		add_u64(l, "filter_keys", r->keys);
		add_u64(l, "filter_capacity", (__u64)r->capacity);
		add_u64(l, "filter_blocks", 1ULL << r->log2);
		add_u64(l, "filter_bytes", (__u64)ldexp(sizeof(struct fs_bloom_block), (int)r->log2));
		add_u64(l, "filter_k", r->k);
		add_double(l, "design_fpr", r->fpr);
		json_object_object_add(o, "list", l);
	}
	add_u64(m, "max_entries", r->max);
	add_u64(m, "worst_keys", (__u64)r->worst_keys);
	add_u64(m, "filter_blocks", 1ULL << r->max_log2);
	add_u64(m, "summary_bytes", sizeof(struct fs_block_summary));
	add_u64(m, "bytes", (__u64)r->map_bytes);
	json_object_object_add(o, "maps", m);
	return o;
}

/* The detection sketches' one table, at the daemon's sizes. */
static void print_detect(const struct size_tables *t)
{
	fs_size_detect_print();
}

static struct json_object *json_detect(const struct size_tables *t)
{
	return fs_size_detect_json();
}

/* Each table's text and its JSON, under its key. */
static const struct {
	const char *key;
	void (*print)(const struct size_tables *t);
	struct json_object *(*json)(const struct size_tables *t);
} sections[NSECTIONS] = {
	[SEC_BLOOM] = { "bloom", print_bloom, json_bloom },
	[SEC_CMS] = { "count_min", print_cms, json_cms },
	[SEC_HLL] = { "hyperloglog", print_hll, json_hll },
	[SEC_OVERFILL] = { "bloom_over_capacity", print_overfill, json_overfill },
	[SEC_BLOCK] = { "blocklist", print_block, json_block },
	[SEC_DETECT] = { "detection", print_detect, json_detect },
};

/* --- the command ------------------------------------------------------- */

/* The reference tables: the targets every sizing discussion starts from. */
static void reference_tables(struct size_tables *t)
{
	static const double bloom_p[] = { 0.1, 0.01, 0.001, 0.0001 };
	static const double cms_eps[] = { 0.01, 0.001, 0.00001 };
	static const __u32 hll_p[] = { 10, 12, 14, 16 };
	static const double loads[] = { 1, 1.25, 1.5, 2, 3 };
	size_t i;

	for (i = 0; i < FS_ARRAY_SIZE(bloom_p); i++)
		bloom_row(bloom_p[i], 1e9, &t->bloom[t->n[SEC_BLOOM]++]);
	for (i = 0; i < FS_ARRAY_SIZE(cms_eps); i++)
		cms_row(cms_eps[i], SIZE_DEFAULT_DELTA, SIZE_DEFAULT_ITEMS,
			&t->cms[t->n[SEC_CMS]++]);
	for (i = 0; i < FS_ARRAY_SIZE(hll_p); i++)
		hll_row(hll_p[i], &t->hll[t->n[SEC_HLL]++]);
	for (i = 0; i < FS_ARRAY_SIZE(loads); i++)
		overfill_row(loads[i], &t->overfill_k,
			     &t->overfill[t->n[SEC_OVERFILL]++]);
	t->n[SEC_DETECT] = 1;
	t->per_billion = true;
}

static void requested_rows(const struct size_opts *o, struct size_tables *t)
{
	if (o->bloom_n)
		bloom_row(o->bloom_fp, o->bloom_items, &t->bloom[t->n[SEC_BLOOM]++]);
	if (o->cms)
		cms_row(o->cms_epsilon, o->cms_delta, o->items, &t->cms[t->n[SEC_CMS]++]);
	if (o->hll)
		hll_row(o->hll_p, &t->hll[t->n[SEC_HLL]++]);
}

static void print_text(const struct size_tables *t)
{
	bool sep = false;
	int i;

	for (i = 0; i < NSECTIONS; i++) {
		if (!t->n[i])
			continue;
		if (sep)
			putchar('\n');
		sections[i].print(t);
		sep = true;
	}
}

static void print_json(const struct size_tables *t)
{
	struct json_object *o = json_object_new_object();
	int i;

	for (i = 0; i < NSECTIONS; i++)
		if (t->n[i])
			json_object_object_add(o, sections[i].key, sections[i].json(t));
	fs_reply_print_json(o);
	json_object_put(o);
}

int fs_cmd_size(const struct fs_cli *cli, int argc, char **argv)
{
	struct size_opts o = { 0 };
	struct size_tables t = { 0 };
	int ret;

	ret = parse_opts(argc, argv, &o);
	if (ret)
		return ret == FS_HELP_SHOWN ? FS_EXIT_OK : ret;
	if (o.block) {
		ret = block_row(&o, &t.block[0]);
		if (ret)
			return ret;
		t.n[SEC_BLOCK] = 1;
	}
	if (o.cms || o.hll || o.bloom_n)
		requested_rows(&o, &t);
	else if (!o.block)
		reference_tables(&t);
	if (o.json)
		print_json(&t);
	else
		print_text(&t);
	return FS_EXIT_OK;
}
