/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * merge_accuracy.h - `flowsketch merge FILE... accuracy`: the fleet's
 * keyed sample against the fleet's merged sketches.
 */
#ifndef FLOWSKETCH_CLI_MERGE_ACCURACY_H
#define FLOWSKETCH_CLI_MERGE_ACCURACY_H

#include <stddef.h>
#include <json-c/json.h>
#include "native.h"

/*
 * Into a (merge's common answer): the accuracy answer's body
 * (sample_json.h) of sum, the files' merged sketch, whose sampled flows
 * are estimated at the columns the files give them as candidates.  0,
 * -ENOMEM, or -ENOENT (said) for a sampled flow no file lists.
 */
int fs_merge_accuracy(struct json_object *a, const struct fs_native *f,
		      size_t nfiles, const struct fs_sketch *sum);

#endif /* FLOWSKETCH_CLI_MERGE_ACCURACY_H */
