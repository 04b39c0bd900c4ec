// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * size_detect.c - the detection sketches' sizing table (size_detect.h).
 *
 * Prefixes: collisions add at most 4 e / w of the window's packets, but
 * with probability e^-d; the level drawing adds z sqrt((V - 1) N_x) to a
 * prefix of N_x packets, shown at z = 3 for a few N_x.  Spread: sharing
 * adds e / w of the distinct flows, but with probability e^-d; counting is
 * within sigma(n) = sqrt(1.04^2 / m + (R - 1) / n), shown for a few n.
 */
#include <math.h>
#include <stdio.h>
#include <json-c/json.h>
#include "flowsketch/maps.h"
#include "flowsketch/prefix.h"
#include "flowsketch/spread.h"
#include "size_detect.h"

static const double prefix_sizes[] = { 2000, 20000, 200000 };
static const double spread_sizes[] = { 1000, 5000, 100000 };

#define NSIZES 3
#define Z 3

static void defaults(struct fs_prefix_params *pp, struct fs_spread_params *sp)
{
	fs_prefix_params_init(pp, FS_DEFAULT_PREFIX_DEPTH, FS_DEFAULT_PREFIX_LOG2W,
			      FS_DEFAULT_PREFIX_SKIP);
	fs_spread_params_init(sp, FS_DEFAULT_SPREAD_DEPTH, FS_DEFAULT_SPREAD_LOG2W,
			      FS_DEFAULT_SPREAD_SHIFT);
}

static double prefix_kib(const struct fs_prefix_params *p)
{
	return FS_NSLOTS * fs_prefix_buckets(p) * sizeof(struct fs_prefix_bucket) / 1024.0;
}

static double spread_kib(const struct fs_spread_params *p)
{
	return FS_NSLOTS * fs_spread_buckets(p) * sizeof(struct fs_spread_bucket) / 1024.0;
}

void fs_size_detect_print(void)
{
	struct fs_prefix_params pp;
	struct fs_spread_params sp;
	double miss, coll, share, sig = 0;
	int i;

	defaults(&pp, &sp);
	coll = fs_prefix_collisions(&pp, &miss);
	printf("Detection sketches (flowsketchd --detect prefixes,spread), at the daemon's sizes\n");
	printf("  prefixes: d = %u, w = %u, one of V = %llu (side, level) pairs a packet: %.0f KiB per CPU, %u lines a packet\n",
	       pp.depth, 1U << pp.log2_width, (unsigned long long)fs_prefix_scale(&pp),
	       prefix_kib(&pp), pp.depth >> pp.skip_shift);
	printf("    above the truth by collisions: at most 4e/w = %.2f%% of the packets, probability %.1f%%\n",
	       100 * coll, 100 * (1 - miss));
	printf("    level drawing, +-3 sqrt((V-1) N) a prefix of N packets:");
	for (i = 0; i < NSIZES; i++)
		printf("%s N = %.0f: +-%.1f%%", i ? "," : "", prefix_sizes[i],
		       100 * Z * fs_prefix_sampling(&pp) / sqrt(prefix_sizes[i]));
	share = fs_spread_sharing(&sp, 1, &miss);
	printf("\n  spread: d = %u, w = %u a side, m = %u registers, 1 element in R = %u: %.0f KiB per CPU, %.2g lines a packet\n",
	       sp.depth, 1U << sp.log2_width, FS_SPREAD_REGS, 1U << sp.sample_shift,
	       spread_kib(&sp), ldexp(FS_SPREAD_NSIDES * sp.depth, -(int)sp.sample_shift));
	printf("    above the truth by sharing: at most e/w = %.2f%% of the distinct flows, probability %.1f%%\n",
	       100 * share, 100 * (1 - miss));
	printf("    counting, relative standard error a key of n peers:");
	for (i = 0; i < NSIZES; i++) {
		sig = fs_spread_sigma(&sp, spread_sizes[i]);
		printf("%s n = %.0f: %.1f%%", i ? "," : "", spread_sizes[i], 100 * sig);
	}
	printf("\n");
}

struct json_object *fs_size_detect_json(void)
{
	struct json_object *o = json_object_new_object(), *p, *s, *a;
	struct fs_prefix_params pp;
	struct fs_spread_params sp;
	double miss;
	int i;

	defaults(&pp, &sp);
	p = json_object_new_object();
	json_object_object_add(p, "depth", json_object_new_int64(pp.depth));
	json_object_object_add(p, "width", json_object_new_int64(1LL << pp.log2_width));
	json_object_object_add(p, "levels_drawn_from",
			       json_object_new_int64((__s64)fs_prefix_scale(&pp)));
	json_object_object_add(p, "bytes_per_cpu",
			       json_object_new_int64((__s64)(prefix_kib(&pp) * 1024)));
	json_object_object_add(p, "collisions_fraction",
			       json_object_new_double(fs_prefix_collisions(&pp, &miss)));
	json_object_object_add(p, "collisions_probability", json_object_new_double(miss));
	a = json_object_new_array();
	for (i = 0; i < NSIZES; i++) {
		struct json_object *r = json_object_new_object();

		json_object_object_add(r, "packets", json_object_new_double(prefix_sizes[i]));
		json_object_object_add(r, "relative_error_z3", json_object_new_double(
			Z * fs_prefix_sampling(&pp) / sqrt(prefix_sizes[i])));
		json_object_array_add(a, r);
	}
	json_object_object_add(p, "sampling", a);
	json_object_object_add(o, "prefixes", p);
	s = json_object_new_object();
	json_object_object_add(s, "depth", json_object_new_int64(sp.depth));
	json_object_object_add(s, "width", json_object_new_int64(1LL << sp.log2_width));
	json_object_object_add(s, "sample_rate", json_object_new_int64(1LL << sp.sample_shift));
	json_object_object_add(s, "bytes_per_cpu",
			       json_object_new_int64((__s64)(spread_kib(&sp) * 1024)));
	json_object_object_add(s, "sharing_fraction",
			       json_object_new_double(fs_spread_sharing(&sp, 1, &miss)));
	json_object_object_add(s, "sharing_probability", json_object_new_double(miss));
	a = json_object_new_array();
	for (i = 0; i < NSIZES; i++) {
		struct json_object *r = json_object_new_object();

		json_object_object_add(r, "distinct", json_object_new_double(spread_sizes[i]));
		json_object_object_add(r, "relative_standard_error",
				       json_object_new_double(fs_spread_sigma(&sp, spread_sizes[i])));
		json_object_array_add(a, r);
	}
	json_object_object_add(s, "counting", a);
	json_object_object_add(o, "spread", s);
	return o;
}
