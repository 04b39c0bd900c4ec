/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * merge_detect.h - `flowsketch merge FILE... top --by KEY` and `merge
 * FILE... spread --by src|dst`: the fleet's top prefixes and spreaders
 * from the detection sketches of many hosts' exports (merge.c reads,
 * checks and sums the files).
 */
#ifndef FLOWSKETCH_CLI_MERGE_DETECT_H
#define FLOWSKETCH_CLI_MERGE_DETECT_H

#include <stdbool.h>
#include <json-c/json.h>
#include "keyspec.h"
#include "sketch.h"
#include "show.h"

/*
 * The top n prefixes of key k in the merged sketch sum into answer a
 * (which holds the span's members already): "by", "sort", totals,
 * "error_bound" and "prefixes", each with "rows".  -ENOMEM said.
 */
int fs_merge_prefixes(struct json_object *a, const struct fs_sketch *sum,
		      const struct fs_keyspec *k, bool by_bytes, __u32 n);

/* The n widest spreaders of side (FS_SPREAD_SRC or _DST) into a: "by",
 * "error_bound" and "spreaders", each with "rows".  -ENOMEM said. */
int fs_merge_spreaders(struct json_object *a, const struct fs_sketch *sum,
		       __u32 side, __u32 n);

/* Their tables (show.h). */
fs_show_fn fs_merge_prefixes_show;
fs_show_fn fs_merge_spread_show;

#endif /* FLOWSKETCH_CLI_MERGE_DETECT_H */
