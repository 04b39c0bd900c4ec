/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * top_prefixes.h - `flowsketch top --by KEY`: the "prefixes" request and
 * its table (top_prefixes.c); fs_prefixes_show() is in show.h.
 */
#ifndef FLOWSKETCH_CLI_TOP_PREFIXES_H
#define FLOWSKETCH_CLI_TOP_PREFIXES_H

#include <json-c/json.h>
#include "top_table.h"

/* The request for o, o->by set (released by the call it is given to). */
struct json_object *fs_prefixes_request(const struct top_opts *o);

#endif /* FLOWSKETCH_CLI_TOP_PREFIXES_H */
