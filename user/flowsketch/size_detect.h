/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * size_detect.h - `flowsketch size`'s table of the detection sketches
 * (flowsketchd --detect) at the sizes the daemon loads them with: memory,
 * error and cost, from prefix.h's and spread.h's "Error" arithmetic.
 */
#ifndef FLOWSKETCH_CLI_SIZE_DETECT_H
#define FLOWSKETCH_CLI_SIZE_DETECT_H

struct json_object;

void fs_size_detect_print(void);
struct json_object *fs_size_detect_json(void);

#endif /* FLOWSKETCH_CLI_SIZE_DETECT_H */
