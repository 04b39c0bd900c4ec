// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* detect_json.c - the prefixes and spread answers' bodies (detect_json.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "cidr.h"
#include "detect_json.h"
#include "flow_fmt.h"
#include "keys.h"

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

/* The answer's "error_bound" of a prefix sketch; *c its collision term C. */
static struct json_object *prefix_bound(const struct fs_prefix_params *p,
					__u64 packets, __u64 bytes, __u64 *c)
{
	double w = ldexp(1, (int)p->log2_width), miss;
	struct json_object *eb = json_object_new_object();

	*c = (__u64)ceil(fs_prefix_collisions(p, &miss) * (double)packets);
	add_u64(eb, FS_KEY_Z, FS_DETECT_Z);
	add_u64(eb, FS_KEY_SCALE, fs_prefix_scale(p));
	add_u64(eb, FS_KEY_DEPTH, p->depth);
	add_u64(eb, FS_KEY_WIDTH, 1ULL << p->log2_width);
	add_u64(eb, FS_KEY_COLLISIONS, *c);
	add_u64(eb, FS_KEY_BYTES_COLLISIONS, (__u64)ceil(8 * M_E * (double)bytes / w));
	add_double(eb, FS_KEY_COLLISIONS_PROBABILITY, miss);
	return eb;
}

/* One prefix: its estimates and the ends the truth lies between. */
static struct json_object *prefix_entry(const struct fs_heavy_prefix *h,
					const struct fs_prefix_params *p,
					__u64 c, __u64 total, bool by_bytes, bool rows)
{
	struct fs_cidr cidr = { .family = (__u8)fs_prefix_tag_family(h->tag) };
	__u64 under = (__u64)ceil(FS_DETECT_Z * fs_prefix_sampling(p) *
				  sqrt((double)h->packets));
	__u64 over = c + under, v = by_bytes ? h->bytes : h->packets;
	struct json_object *e = json_object_new_object(), *eb;
	char text[FS_CIDR_TEXT_MAX];

	cidr.len = (__u8)fs_prefix_level_len(cidr.family, fs_prefix_tag_level(h->tag));
	memcpy(cidr.addr, h->addr, sizeof(cidr.addr));
	fs_cidr_format(&cidr, text, sizeof(text));
	add_string(e, FS_KEY_PREFIX, text);
	add_u64(e, FS_KEY_PACKETS, h->packets);
	add_u64(e, FS_KEY_BYTES, h->bytes);
	add_double(e, FS_KEY_SHARE, total ? (double)v / (double)total : 0);
	add_u64(e, FS_KEY_PACKETS_LOW, h->packets > over ? h->packets - over : 0);
	eb = json_object_new_object();
	add_u64(eb, FS_KEY_PACKETS_OVER, over);
	add_u64(eb, FS_KEY_PACKETS_UNDER, under);
	json_object_object_add(e, FS_KEY_ERROR_BOUND, eb);
	if (rows)
		add_u64(e, FS_KEY_ROWS, h->rows);
	return e;
}

int fs_prefixes_json(struct json_object *a, const struct fs_prefix_bucket *slot,
		     const struct fs_prefix_params *p, const struct fs_hash_key *hk,
		     const struct fs_keyspec *k, bool by_bytes, size_t n,
		     __u64 packets, __u64 bytes)
{
	enum fs_prefix_order order = by_bytes ? FS_PREFIX_BY_BYTES : FS_PREFIX_BY_PACKETS;
	struct fs_heavy_prefix *top = calloc(2 * n, sizeof(*top));
	char by[FS_KEYSPEC_TEXT_MAX];
	struct json_object *list;
	int ntags, t, m, got = 0;
	__u8 tags[2];
	__u64 c;

	if (!top)
		return -ENOMEM;
	/* Hosts of either family: each family's n heaviest, then the n
	 * heaviest of both. */
	ntags = fs_keyspec_tags(k, tags);
	for (t = 0; t < ntags; t++) {
		m = hk ? fs_prefix_top(slot, p, hk, tags[t], order, top + got, n) :
			 fs_prefix_top_own(slot, p, tags[t], order, top + got, n);
		if (m < 0) {
			free(top);
			return m;
		}
		got += m;
	}
	fs_prefix_sort(top, (size_t)got, order);
	if ((size_t)got > n)
		got = (int)n;
	fs_keyspec_format(k, by, sizeof(by));
	add_string(a, FS_KEY_BY, by);
	add_string(a, FS_KEY_SORT, by_bytes ? "bytes" : "packets");
	add_u64(a, FS_KEY_TOTAL_PACKETS, packets);
	add_u64(a, FS_KEY_TOTAL_BYTES, bytes);
	json_object_object_add(a, FS_KEY_ERROR_BOUND, prefix_bound(p, packets, bytes, &c));
	list = json_object_new_array();
	for (t = 0; t < got; t++)
		json_object_array_add(list, prefix_entry(&top[t], p, c,
			by_bytes ? bytes : packets, by_bytes, !hk));
	json_object_object_add(a, FS_KEY_PREFIXES, list);
	free(top);
	return 0;
}

int fs_spreaders_json(struct json_object *a, const struct fs_spread_bucket *slot,
		      const struct fs_spread_params *p, const struct fs_hash_key *hk,
		      __u32 side, size_t n, double flows)
{
	const char *key = side == FS_SPREAD_SRC ? FS_KEY_SRC : FS_KEY_DST;
	struct fs_spreader *top = calloc(n, sizeof(*top));
	double miss, sharing;
	struct json_object *eb, *list, *e;
	char addr[FS_ADDR_STR_MAX];
	int got, i;

	if (!top)
		return -ENOMEM;
	got = hk ? fs_spread_top(slot, p, side, hk, top, n) :
		   fs_spread_top_own(slot, p, side, top, n);
	if (got < 0) {
		free(top);
		return got;
	}
	sharing = ceil(fs_spread_sharing(p, flows, &miss));
	add_string(a, FS_KEY_BY, key);
	add_u64(a, FS_KEY_DISTINCT_FLOWS, (__u64)llround(flows));
	eb = json_object_new_object();
	add_u64(eb, FS_KEY_Z, FS_DETECT_Z);
	add_u64(eb, FS_KEY_SAMPLE_RATE, 1ULL << p->sample_shift);
	add_u64(eb, FS_KEY_REGISTERS, FS_SPREAD_REGS);
	add_u64(eb, FS_KEY_DEPTH, p->depth);
	add_u64(eb, FS_KEY_WIDTH, 1ULL << p->log2_width);
	add_u64(eb, FS_KEY_SHARING, (__u64)sharing);
	add_double(eb, FS_KEY_SHARING_PROBABILITY, miss);
	json_object_object_add(a, FS_KEY_ERROR_BOUND, eb);
	list = json_object_new_array();
	for (i = 0; i < got; i++) {
		double x = top[i].distinct, sigma = fs_spread_sigma(p, x);
		double low = floor(x / (1 + FS_DETECT_Z * sigma) - sharing);

		e = json_object_new_object();
		fs_addr_str(top[i].family, top[i].addr, addr, sizeof(addr));
		add_string(e, key, addr);
		add_u64(e, FS_KEY_DISTINCT, (__u64)llround(x));
		add_double(e, FS_KEY_ERROR, sigma);
		add_u64(e, FS_KEY_DISTINCT_LOW, low > 0 ? (__u64)low : 0);
		if (!hk)
			add_u64(e, FS_KEY_ROWS, top[i].rows);
		json_object_array_add(list, e);
	}
	json_object_object_add(a, FS_KEY_SPREADERS, list);
	free(top);
	return 0;
}
