/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * detect_json.h - the bodies of the prefixes and spread answers
 * (protocol.h), made once for the daemon, which answers from its own
 * sketches, and for `flowsketch merge`, which answers from export files.
 *
 * With the packet hash's keys (the daemon), a candidate is estimated over
 * all d rows (fs_prefix_top(), fs_spread_top()); without them (a merge:
 * export files hold no secret), from the buckets it is the candidate of
 * (fs_prefix_top_own(), fs_spread_top_own()), and each entry says in
 * "rows" over how many of the d rows.  The bounds are prefix.h's and
 * spread.h's "Error", at z = FS_DETECT_Z:
 *
 *   prefixes, N and B the span's packets and bytes, V the scale:
 *       C = ceil(4 e N / w), CB = ceil(8 e B / w), U = ceil(z sqrt((V - 1) E)),
 *       O = C + U, packets_low = max(0, E - O): E - O <= truth <= E + U
 *       but with probability about e^-rows + Phi(-z);
 *   spreaders, F the span's distinct flows:
 *       S = ceil(e F / w), sigma(X) = sqrt(1.04^2 / m + (R - 1) / X),
 *       distinct_low = max(0, floor(X / (1 + z sigma) - S)).
 */
#ifndef FLOWSKETCH_DETECT_JSON_H
#define FLOWSKETCH_DETECT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include "keyspec.h"
#include "prefix_estimate.h"
#include "spread_estimate.h"

struct json_object;

/* Standard deviations of the sampling the lower ends allow: Phi(-3) =
 * 0.13 % an entry. */
#define FS_DETECT_Z 3

/*
 * Into a: "by", "sort", "total_packets", "total_bytes", "error_bound" and
 * the n heaviest "prefixes" of key k (hosts of both families as one list)
 * in slot, a span of packets and bytes.  hk NULL: own-bucket estimates,
 * with "rows".  0 or -ENOMEM.
 */
int fs_prefixes_json(struct json_object *a, const struct fs_prefix_bucket *slot,
		     const struct fs_prefix_params *p, const struct fs_hash_key *hk,
		     const struct fs_keyspec *k, bool by_bytes, size_t n,
		     __u64 packets, __u64 bytes);

/* Into a: "by", "distinct_flows", "error_bound" and the n widest
 * "spreaders" of side (FS_SPREAD_SRC or _DST) in slot, a span of flows
 * distinct flows.  hk NULL: own-bucket estimates, with "rows".  0 or
 * -ENOMEM. */
int fs_spreaders_json(struct json_object *a, const struct fs_spread_bucket *slot,
		      const struct fs_spread_params *p, const struct fs_hash_key *hk,
		      __u32 side, size_t n, double flows);

#endif /* FLOWSKETCH_DETECT_JSON_H */
