/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * keys.h - the JSON key names of protocol.h, said once for the daemon that
 * writes them and the CLI that reads them: a misspelt key is then a
 * compile error, not an answer the CLI silently reads as absent.
 *
 * The names of requests come first, then those of answers; a key only
 * one file ever writes and nobody reads back (most of status) stays a
 * literal there.
 */
#ifndef FLOWSKETCH_KEYS_H
#define FLOWSKETCH_KEYS_H

/* Requests (protocol.h, "Requests"). */
#define FS_KEY_CMD		"cmd"
#define FS_KEY_N		"n"
#define FS_KEY_SORT		"sort"
#define FS_KEY_SPAN		"span"
#define FS_KEY_DIRECTION	"direction"
#define FS_KEY_CIDRS		"cidrs"
#define FS_KEY_OFFSET		"offset"
#define FS_KEY_TOTAL		"total"
#define FS_KEY_LOAD		"load"
#define FS_KEY_BY		"by"
#define FS_KEY_FOR		"for"

/* Every failed request's answer. */
#define FS_KEY_ERROR		"error"

/* A span's description (top, flows, export). */
#define FS_KEY_SPAN_SECONDS	"span_seconds"
#define FS_KEY_WINDOWS		"windows"
#define FS_KEY_WINDOW_SECONDS	"window_seconds"
#define FS_KEY_WINDOW_START	"window_start"
#define FS_KEY_WINDOW_END	"window_end"
#define FS_KEY_WINDOW_START_NS	"window_start_ns"
#define FS_KEY_WINDOW_END_NS	"window_end_ns"

/* A flow's key (flow_json.h). */
#define FS_KEY_SRC		"src"
#define FS_KEY_DST		"dst"
#define FS_KEY_SPORT		"sport"
#define FS_KEY_DPORT		"dport"
#define FS_KEY_PROTO		"proto"
#define FS_KEY_PROTO_NUM	"proto_num"
#define FS_KEY_FAMILY		"family"

/* Counts, flows and their bounds (top, flows, export, windows). */
#define FS_KEY_PACKETS		"packets"
#define FS_KEY_BYTES		"bytes"
#define FS_KEY_SHARE		"share"
#define FS_KEY_BLOCKED		"blocked"
#define FS_KEY_RENEWED		"renewed"
#define FS_KEY_ADDED_AT		"added_at"
#define FS_KEY_EXPIRES_AT	"expires_at"
#define FS_KEY_ORIGIN		"origin"
#define FS_KEY_FLOWS		"flows"
#define FS_KEY_CANDIDATES	"candidates"
#define FS_KEY_CONNECTIONS	"connections"
#define FS_KEY_ESTABLISHED	"established"
#define FS_KEY_OPENED		"opened"
#define FS_KEY_TOTAL_PACKETS	"total_packets"
#define FS_KEY_TOTAL_BYTES	"total_bytes"
#define FS_KEY_TOTAL_CONNECTIONS "total_connections"
#define FS_KEY_TOTAL_ESTABLISHED "total_established"
#define FS_KEY_ERROR_BOUND	"error_bound"
#define FS_KEY_EPSILON		"epsilon"
#define FS_KEY_DELTA		"delta"
#define FS_KEY_DISTINCT_FLOWS	"distinct_flows"
#define FS_KEY_DISTINCT_SOURCES	"distinct_sources"
#define FS_KEY_DISTINCT_DESTINATIONS "distinct_destinations"
#define FS_KEY_RSE		"relative_standard_error"
#define FS_KEY_HLL_PRECISION	"hll_precision"
#define FS_KEY_SERIES		"series"
#define FS_KEY_START_NS		"start_ns"
#define FS_KEY_END_NS		"end_ns"

/* The detection sketches' answers (prefixes, spread). */
#define FS_KEY_PREFIXES		"prefixes"
#define FS_KEY_PREFIX		"prefix"
#define FS_KEY_PACKETS_LOW	"packets_low"
#define FS_KEY_PACKETS_OVER	"packets_over"
#define FS_KEY_PACKETS_UNDER	"packets_under"
#define FS_KEY_SPREADERS	"spreaders"
#define FS_KEY_DISTINCT		"distinct"
#define FS_KEY_DISTINCT_LOW	"distinct_low"
#define FS_KEY_Z		"z"
#define FS_KEY_SCALE		"scale"
#define FS_KEY_COLLISIONS	"collisions"
#define FS_KEY_COLLISIONS_PROBABILITY "collisions_probability"
#define FS_KEY_BYTES_COLLISIONS	"bytes_collisions"
#define FS_KEY_SHARING		"sharing"
#define FS_KEY_SHARING_PROBABILITY "sharing_probability"
#define FS_KEY_SAMPLE_RATE	"sample_rate"
#define FS_KEY_REGISTERS	"registers"
#define FS_KEY_DEPTH		"depth"
#define FS_KEY_WIDTH		"width"
/* merge's: of the d rows, in how many the entry was some bucket's
 * candidate (merge.c). */
#define FS_KEY_ROWS		"rows"

/* The blocklist's answers. */
#define FS_KEY_ENTRIES		"entries"
#define FS_KEY_ADDED		"added"
#define FS_KEY_DELETED		"deleted"
#define FS_KEY_STAGED		"staged"
#define FS_KEY_CIDR		"cidr"
#define FS_KEY_BLOCKLIST	"blocklist"

/* The policy's answer (policy.h). */
#define FS_KEY_KEY		"key"
#define FS_KEY_RULE		"rule"
#define FS_KEY_RULES		"rules"
#define FS_KEY_LINE		"line"
#define FS_KEY_METRIC		"metric"
#define FS_KEY_THRESHOLD	"threshold"
#define FS_KEY_BAN		"ban"
#define FS_KEY_FILE		"file"
#define FS_KEY_DRY_RUN		"dry_run"
#define FS_KEY_ALLOW		"allow"
#define FS_KEY_LIMIT		"limit"
#define FS_KEY_PER_SECONDS	"per_seconds"
#define FS_KEY_VALUE		"value"
#define FS_KEY_SINCE		"since"
#define FS_KEY_SECONDS		"seconds"
#define FS_KEY_ABOVE		"above"
#define FS_KEY_AT		"at"
#define FS_KEY_ACTION		"action"
#define FS_KEY_DECISIONS	"decisions"
#define FS_KEY_COUNTERS		"counters"
#define FS_KEY_RELOADED		"reloaded"
#define FS_KEY_POLICY		"policy"

/* The accuracy answer (protocol.h): the keyed sample against the sketches. */
#define FS_KEY_SAMPLE		"sample"
#define FS_KEY_RATE		"rate"
#define FS_KEY_BUCKETS		"buckets"
#define FS_KEY_FULL		"full"
#define FS_KEY_RATE_EFFECTIVE	"rate_effective"
#define FS_KEY_EXACT_PACKETS	"exact_packets"
#define FS_KEY_EXACT_BYTES	"exact_bytes"
#define FS_KEY_UNDERCOUNTS	"undercounts"
#define FS_KEY_OVERCOUNT_MAX_EPS "overcount_max_eps"
#define FS_KEY_OVER_BOUND_SHARE	"over_bound_share"
#define FS_KEY_OVER_BOUND	"over_bound"
#define FS_KEY_HLL_Z		"hll_z"
#define FS_KEY_HLL		"hll"
#define FS_KEY_SAMPLE_DISTINCT	"sample_distinct"
#define FS_KEY_HLL_WITHIN_2SE	"hll_within_2se_share"
#define FS_KEY_HLL_WINDOWS	"hll_windows"
#define FS_KEY_ALARM		"alarm"
#define FS_KEY_ALARMS		"alarms"
#define FS_KEY_ACCURACY		"accuracy"

#endif /* FLOWSKETCH_KEYS_H */
