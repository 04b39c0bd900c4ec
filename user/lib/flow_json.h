/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * flow_json.h - a flow key as the answers spell it (protocol.h): "src",
 * "dst", "sport", "dport", "proto", "proto_num", "family", for the daemon's
 * answers and the CLI's merge alike.
 */
#ifndef FLOWSKETCH_FLOW_JSON_H
#define FLOWSKETCH_FLOW_JSON_H

#include <json-c/json.h>
#include "flowsketch/flow_key.h"

/* A new object holding key's fields (the caller adds the counts). */
struct json_object *fs_flow_key_json(const struct fs_flow_key *key);

#endif /* FLOWSKETCH_FLOW_JSON_H */
