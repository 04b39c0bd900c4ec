/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * protocol.h - the daemon's local socket protocol, used by the CLI.
 *
 * Transport: a SOCK_STREAM unix socket (default FS_SOCKET_DEFAULT, mode
 * 0600, directory 0700: root only).  One request per connection: the
 * client writes one JSON object followed by "\n", the daemon answers with
 * one JSON object followed by "\n" and closes.  Requests larger than
 * FS_REQUEST_MAX bytes are refused.
 *
 * A request is strict RFC 8259 JSON, valid UTF-8, with no NUL byte and no
 * key twice in an object (json-c would keep the last one silently); each
 * of these gets one error answer naming it and its byte offset, e.g.
 *   {"error":"request has the key \"cmd\" twice in one object (byte 27)"}
 * Answers are valid UTF-8 too, and the CLI refuses one that is not.
 *
 * Requests (unknown keys are an error, so a typo is never ignored; one
 * row each in the daemon's command table, user/flowsketchd/service/commands.h,
 * which tests/unit/test_commands.c holds against this list; key names in
 * keys.h):
 *   {"cmd":"top",    "n":10, "sort":"packets"|"bytes"|"connections",
 *                    "span":SECONDS, "direction":"in"|"out"|"both"}
 *   {"cmd":"flows",  "span":SECONDS, "direction":"in"|"out"|"both"}
 *   {"cmd":"export", "span":SECONDS, "direction":"in"|"out"|"both"}
 *   {"cmd":"windows", "span":SECONDS, "direction":"in"|"out"|"both"}
 *   {"cmd":"status"}
 *   {"cmd":"block_add", "cidrs":["10.0.0.0/8", ...]}   (1 to FS_BLOCK_REQUEST_MAX)
 *   {"cmd":"block_add", "cidrs":[...], "for":SECONDS}  (1 to FS_BLOCK_FOR_MAX)
 *   {"cmd":"block_del", "cidrs":[...]}
 *   {"cmd":"block_list", "offset":N}   (offset optional, default 0)
 *   {"cmd":"block_clear"}
 *   {"cmd":"block_load_begin", "total":N}       (1 to FS_BLOCK_LOAD_MAX)
 *   {"cmd":"block_load_part", "load":"TOKEN", "cidrs":[...]}
 *                                               (1 to FS_BLOCK_REQUEST_MAX)
 *   {"cmd":"block_load_commit", "load":"TOKEN"}
 *   {"cmd":"policy"}
 *   {"cmd":"policy_reload"}
 *   {"cmd":"prefixes", "by":KEY, "n":10, "sort":"packets"|"bytes",
 *                      "span":SECONDS, "direction":"in"|"out"|"both"}
 *   {"cmd":"spread",   "by":"src"|"dst", "n":10, "span":SECONDS,
 *                      "direction":"in"|"out"|"both"}
 *   {"cmd":"accuracy", "span":SECONDS, "direction":"in"|"out"|"both"}
 * KEY (keyspec.h): "src" or "dst" (a side's hosts, either family),
 * "src4/N" or "dst4/N" (N 8, 16, 24, 32), "src6/N" or "dst6/N" (N 32,
 * 48, 64, 128).
 * "direction" (default "both"): "in" what the interfaces received (XDP),
 * "out" what they sent (the egress frontend), each counted in sketches of
 * its own; "both" lists the flows of both, each with its "direction", and
 * counts the distinct ones of their union.
 * "span" is time: the windows, finished when the request arrives, that
 * ended in the last SECONDS, each whole (so they cover at most SECONDS
 * plus one window); never more than the history the daemon keeps; without
 * it, the last finished window.  Windows are timed on CLOCK_MONOTONIC, so
 * a step of the wall clock changes no span.  An answer says what its
 * windows really cover (span_seconds; window_start and window_end as the
 * wall clock reads now; window_start_ns and window_end_ns the same to the
 * nanosecond): after a late rotation, a longer window and so fewer of
 * them.  Windows end on wall-clock multiples of window_seconds (Unix
 * time), plus however late the rotation ran, so the same span of two
 * hosts covers the same time.
 *
 * Timing (server.h): a client has 200 ms from connecting to send its
 * request, its query 5 s to be answered (a blocklist change longer:
 * FS_BLOCK_ANSWER_MS below), and 1 s to take the answer once
 * sending starts; each miss gets an error answer or the connection
 * closed, and a query whose client has gone is cancelled.  More than 1024
 * clients at once, 256 queries waiting, or 64 MiB of answers waiting for
 * slow readers: {"error":"daemon busy: ..."}.
 *
 * Every answer is an object.  A failed request gets
 *   {"error":"one precise sentence"}
 * and the CLI prints that sentence and exits non-zero.
 *
 * top:
 *   {"span_seconds":S, "windows":W, "window_seconds":S,
 *    "window_start":UNIX, "window_end":UNIX, "direction":"both",
 *    "sort":"packets", "total_packets":N, "total_bytes":N,
 *    "error_bound":{"epsilon":E, "delta":D, "packets":N, "bytes":N},
 *    "flows":[{"src":"10.0.0.1", "dst":"10.0.0.2", "sport":1234,
 *              "dport":80, "proto":"tcp", "proto_num":6, "family":4,
 *              "packets":N, "bytes":N, "share":F, "direction":"in"}, ...],
 *    "distinct_flows":N, "distinct_sources":N, "distinct_destinations":N,
 *    "relative_standard_error":E, "hll_precision":P}
 *   With both directions, total_* are their sum, and a flow's bound is
 *   eps times its own direction's total (at most error_bound, which takes
 *   the sum).
 *   error_bound.packets/bytes are the absolute bound eps * total: every
 *   count is >= the truth and, with probability >= 1 - delta each, at most
 *   that much above it.  "share" is the flow's fraction of the span's
 *   packets (or bytes, with sort bytes).  ICMP type/code appear as
 *   "dport" (type << 8 | code), see flow_key.h.  The distinct counts are
 *   those of `flows` over the same span, so that a live view needs one
 *   request per window.
 *
 * top with "sort":"connections" (no "direction": a connection's source is
 * the side that opened it): the connection frontend's sketches
 * (bpf/conn.bpf.c), keyed by opener, other side, port connected to
 * ("sport" 0), ranked by connections opened:
 *   {"span_seconds":S, ..., "sort":"connections", "total_connections":N,
 *    "total_established":N, "error_bound":{"epsilon":E, "delta":D,
 *    "connections":N, "established":N},
 *    "flows":[{"src":..., "dst":..., "sport":0, "dport":22, "proto":"tcp",
 *              ..., "connections":N, "established":N, "share":F}, ...],
 *    "distinct_flows":N (opener-service pairs), "distinct_sources":N
 *    (hosts that opened connections), "distinct_destinations":N, ...}
 *   Both counts are Count-Min estimates with the bound given; opened
 *   counts attempts (refused and unanswered ones too), established those
 *   that completed the handshake.
 *
 * prefixes (`flowsketch top --by KEY`; flowsketchd --detect prefixes,
 * else an error answer saying so; include/flowsketch/prefix.h):
 *   {"span_seconds":S, ... as top ..., "direction":"both", "by":"src4/24",
 *    "sort":"packets", "total_packets":N, "total_bytes":N,
 *    "error_bound":{"z":3, "scale":V, "depth":d, "width":w,
 *                   "collisions":C, "bytes_collisions":CB,
 *                   "collisions_probability":P},
 *    "prefixes":[{"prefix":"198.51.100.0/24", "packets":E, "bytes":B,
 *                 "share":F, "packets_low":L,
 *                 "error_bound":{"packets_over":O, "packets_under":U}},
 *                ...]}
 *   Heaviest first.  E is V times the least bucket bound over the rows
 *   (prefix.h), B the same of bytes.  With the span's N packets:
 *   C = ceil(4 e N / w), what collisions may add, exceeded with
 *   probability at most P = e^-d; U = ceil(z sqrt((V - 1) E)), z standard
 *   deviations of the level drawing; O = C + U.  So, but with
 *   probability about P + Phi(-z), the prefix's packets are within
 *   E - O .. E + U, and L = max(0, E - O) is the lower end that a rule
 *   acting on the answer should use.  Bytes are a Count-Min cell of the
 *   sampled bytes, scaled by V: collisions add at most CB = ceil(8 e B / w)
 *   to them, B the span's bytes, but with probability P.  A prefix is listed when it is its
 *   bucket's majority in some row (prefix.h, "A prefix is listed").
 *   "src"/"dst" list hosts of both families together.
 *
 * spread (`flowsketch spread --by src|dst`; flowsketchd --detect spread;
 * include/flowsketch/spread.h):
 *   {"span_seconds":S, ... as top ..., "direction":"both", "by":"src",
 *    "distinct_flows":F,
 *    "error_bound":{"z":3, "sample_rate":R, "registers":m, "depth":d,
 *                   "width":w, "sharing":S, "sharing_probability":P},
 *    "spreaders":[{"src":"192.0.2.7", "distinct":X, "error":SIGMA,
 *                  "distinct_low":L}, ...]}
 *   Widest first; "dst" instead of "src" by dst.  X estimates the key's
 *   distinct peers: (destination address, destination port) pairs of a
 *   source, source addresses of a destination.  SIGMA = sqrt(1.04^2 / m +
 *   (R - 1) / X) is its relative standard error; S = ceil(e F / w), F the
 *   span's distinct flows, what other keys sharing its buckets may add,
 *   exceeded with probability at most P = e^-d.  L = max(0, floor(X /
 *   (1 + z SIGMA) - S)), the lower end a rule should act on.
 *
 * accuracy (`flowsketch accuracy`; flowsketchd --sample-rate 1/N;
 * include/flowsketch/sample.h, service/accuracy.h):
 *   {"span_seconds":S, ... as top ..., "direction":"in",
 *    "total_packets":N, "total_bytes":B,
 *    "sample":{"rate":N, "buckets":B, "flows":X, "full":F,
 *              "rate_effective":R},
 *    "packets":{"undercounts":U, "overcount_max_eps":M, "over_bound":K,
 *               "over_bound_share":K/X},
 *    "bytes":{... the same for bytes ...},
 *    "undercounts":U, "overcount_max_eps":M, "over_bound_share":SH,
 *    "delta":D, "hll":H, "sample_distinct":NH, "hll_z":Z,
 *    "hll_windows":k, "hll_within_2se_share":W,
 *    "alarm":false, "alarms":["undercount"|"overcount"|"distinct", ...],
 *    "flows":[{... the key fields top gives ..., "exact_packets":P,
 *              "exact_bytes":B, "packets":EP, "bytes":EB,
 *              "direction":"in"}, ...]}
 *   X the sampled flows of the span (each counted exactly: P, B), EP and
 *   EB their Count-Min estimates; the flat "undercounts" is both metrics',
 *   "overcount_max_eps" and "over_bound_share" the larger of the two.  H
 *   the HyperLogLog's distinct flows, NH the sample's estimate of them, Z
 *   their difference in standard errors; W the share of the span's k
 *   windows (those with enough sampled flows) whose own Z is within 2.
 *   The alarms are sample.h's fs_sample_alarms().  A daemon without a
 *   sample answers an error naming --sample-rate.
 *
 * flows:
 *   {"span_seconds":S, "windows":W, "window_seconds":S,
 *    "window_start":UNIX, "window_end":UNIX, "distinct_flows":N,
 *    "distinct_sources":N, "distinct_destinations":N,
 *    "relative_standard_error":E, "hll_precision":P, "direction":"both",
 *    "connections":{"opened":N, "established":N, "distinct_sources":N,
 *                   "distinct_destinations":N}}
 *   "connections" (the same span of the connection frontend, whatever
 *   the direction): TCP connections opened and established, the distinct
 *   hosts that opened them and those they were opened to.
 *
 * export (`flowsketch export`: the span's sketches themselves, to be
 * merged with other hosts' elsewhere; user/lib/native.h):
 *   {"span_seconds":S, "windows":W, "window_seconds":S,
 *    "window_start":UNIX, "window_end":UNIX,
 *    "window_start_ns":NS, "window_end_ns":NS, "direction":"both",
 *    "params":{"cms_depth":D, "cms_log2_width":L, "cms_width":W,
 *              "hll_precision":P, "flags":F, "conservative":B,
 *              "prefix_depth":D, "prefix_log2_width":L,
 *              "prefix_skip_shift":T, "spread_depth":D,
 *              "spread_log2_width":L, "spread_sample_shift":S,
 *              "sample_log2_buckets":B, "sample_shift":K},
 *    "secret_fingerprint":"16 hex digits",
 *    "total_packets":N, "total_bytes":N,
 *    "candidates":[{"src":..., "dst":..., "sport":N, "dport":N,
 *                   "proto":"tcp", "proto_num":6, "family":4,
 *                   "columns":[C0, ...], "packets":N, "bytes":N,
 *                   "direction":"in"|"out"|"both"}, ...],
 *    "sketch":{"encoding":"base64", "cells":C, "registers":R, ...,
 *              "data":"..."}}
 *   The span is chosen as for top; its exact time range is
 *   window_start_ns .. window_end_ns (wall clock, as it reads now).
 *   params are the sketches' (params.h) without the secret, a
 *   detection sketch that is off of depth 0 (a daemon of a release
 *   before them gives none of the six: read as off), the keyed sample
 *   (sample.h) of 2^B buckets at rate 2^-K, B 0 when off (absent from a
 *   release before exports carried it: off);
 *   secret_fingerprint is fs_params_fingerprint() of it, which is what
 *   says whether two hosts' sketches merge.  candidates: every
 *   heavy-hitter candidate of the span, in ascending order of the flow
 *   key's bytes, with its exported column in each Count-Min row (what a
 *   reader queries the sketch with: the minimum over rows r of cell
 *   (r, columns[r])) and its estimates in the summed sketch; "direction"
 *   the directions it was reported in; every flow of the span's keyed
 *   sample is among them, so that a reader can estimate it.  sketch: each kind's element
 *   count under its count_key (sketch_kind.h: "cells" C, "registers" R)
 *   and, in data, base64 (RFC 4648) of the span's summed sketch: the
 *   parts of the native file (native.h) without their counts, kind after
 *   kind.  Columns and registers are in the secret's export coordinates
 *   (export_perm.h): no keyed hash output is in the answer (hash.h); the
 *   sample's buckets are cut as sample.h's "Exports" says.
 *   Direction "both" is the union: cells and totals added, registers the
 *   max.  An export that would take more than FS_EXPORT_ANSWER_MAX is
 *   refused (shorter span, or smaller sketches), and so is one of a span
 *   no window has finished in yet.
 *
 * windows (`flowsketch plot`: the span window by window, oldest first):
 *   {"window_seconds":S, "direction":"both",
 *    "series":[{"direction":"in",
 *               "windows":[{"start_ns":NS, "end_ns":NS, "packets":N,
 *                           "bytes":N, "distinct_flows":N,
 *                           "distinct_sources":N,
 *                           "distinct_destinations":N}, ...]},
 *              {"direction":"out", ...}]}
 *   start_ns/end_ns on the wall clock; the distinct counts are each
 *   window's own (a span's are those of `flows`, not their sum).
 *
 * status:
 *   {"pid":N, "pin_dir":"...", "datapath":"bpf"|"kfunc",
 *    "frontends":[{"name":"xdp", "direction":"in", "hook":"xdp",
 *                  "rx":N, "sketched":N},
 *                 {"name":"egress", "direction":"out",
 *                  "hook":"tp_btf/net_dev_start_xmit", "attached":B,
 *                  "adopted":B, "datapath":"bpf"|"kfunc", "rx":N,
 *                  "sketched":N, "non_ip":N, "fragments":N,
 *                  "update_errors":N,
 *                  "malformed":{...}, "malformed_total":N, "reports":N,
 *                  "reports_dropped":N, "recursion_misses":N,
 *                  "windows_finished":N, "windows_lost":N,
 *                  "windows_restored":N, "totals":{"packets":N, "bytes":N}},
 *                 {"name":"conn", "direction":"connections",
 *                  "hook":"tp_btf/inet_sock_set_state", ... as egress,
 *                  "totals":{"connections":N, "established":N}}],
 *      each frontend's counters (for conn, rx counts the state changes
 *      it keyed); with --ingress tracepoint the first is {"name":"ingress",
 *      "direction":"in", "hook":"tp_btf/netif_receive_skb", "attached":B,
 *      "recursion_misses":N, "rx":N, "sketched":N}; the top level's
 *      counters and totals are the first's (what was received);
 *      recursion_misses: runs the
 *      kernel skipped because the tracing program was already running on
 *      that CPU (it never nests, so its per-CPU state has one writer);
 *    "adopted":B, "keep":B, "state_dir":"...", "windows_restored":N,
 *    "windows_stored":N, "windows_store_errors":N, "state_dir_usable":B,
 *    "journal_errors":N,
 *      adopted: this daemon took over a datapath pinned by an earlier one
 *      (flowsketchd's loader.h); windows_restored: finished windows it read
 *      back from state_dir at start; windows_stored, _store_errors: the
 *      windows it wrote there, and those it could not (kept in memory
 *      only); state_dir_usable: false when the directory could not be
 *      made (no window survives a restart); journal_errors: candidate
 *      records that could not be journaled; keep: a stop leaves
 *      everything for the next start (--keep);
 *    "interfaces":[{"name":"veth0", "state":"attached"|"gone"|"failed",
 *                   "ifindex":N, "xdp_mode":"native"|"generic",
 *                   "reattached":N, "error":"...",
 *                   "in":{"packets":N, "bytes":N},
 *                   "out":{"packets":N, "bytes":N}}],
 *      one entry per -i, in order, for the daemon's whole life (it follows
 *      each name over rtnetlink, in its own network namespace):
 *      "attached": counted, on ifindex N (the name's interface now);
 *      "gone": no interface has that name (deleted, renamed, moved to
 *      another netns); ifindex 0, nothing counted;
 *      "failed": ifindex N has the name but XDP could not be attached to
 *      it; "error" (only then) says why; nothing counted.
 *      "reattached": times the program was attached again to an interface
 *      that took the name back.  xdp_mode is the mode the daemon uses.
 *      "in", "out": what the sketches counted of what the name's
 *      interfaces received and sent, since the name got its counter in
 *      this datapath (its count goes on across restarts that adopt it
 *      and across recreations of its device: maps.h, "Per-interface
 *      counts"); "out" only with the egress frontend.  A name a daemon
 *      dropped (no -i gave it) starts from 0 when one gives it again;
 *      the metrics page, whose counters never go backwards, goes on from
 *      what it showed.  Neither is there while the link of a frontend is
 *      one an earlier release pinned and this daemon kept (a tracepoint
 *      link cannot move to a new program; --replace starts afresh).
 *    "unattributed":{"in":{"packets":N, "bytes":N}, "out":{...}},
 *      frames counted on no -i interface (an adopted link the daemon
 *      detached as it started): with the interfaces', what the sketches
 *      counted since load, unless a name was dropped since.
 *    "window_seconds":S, "history_seconds":S, "windows_kept":N,
 *    "params":{"cms_width":W, "cms_depth":D, "epsilon":E, "delta":D,
 *              "conservative":false, "hll_precision":P,
 *              "hll_relative_standard_error":E},
 *    "memory":{"datapath_bytes_per_cpu":N, "datapath_bytes":N,
 *              "history_bytes":N, "history_bytes_max":N,
 *              "sketch_lines_per_packet":N, "fixed_lines_per_packet":N,
 *              "packet_bytes_per_cpu":N},
 *              (64-byte lines a packet touches, counted from the layout:
 *               sizing.h; the per-CPU bytes of the open slot they are
 *               drawn from, its working set: fs_dp_packet_bytes(),
 *               sketch_kind.h)
 *              (history_bytes_max: every window and candidate set full,
 *               the query threads' scratch and the rotation's buffers)
 *    "totals":{"packets":N, "bytes":N},          (all finished windows)
 *    "counters":{"rx":N, "sketched":N, "non_ip":N, "fragments":N,
 *                "malformed":{"trunc_eth":N, ...}, "malformed_total":N,
 *                "reports":N, "reports_dropped":N, "update_errors":N,
 *                "reports_received":N, "reports_filed":N,
 *                "reports_duplicate":N, "reports_stray":N,
 *                "reports_refused":N, "reports_malformed":N,
 *                "candidates_dropped":N, "stray_reports":N,
 *                "windows_finished":N, "windows_lost":N,
 *                "rotations_postponed":N, "rotations_late":N,
 *                "rotation_late_max_us":N,
 *                "clients_refused":N, "client_timeouts":N}}
 *      rx .. update_errors are the datapath's (fs_hot and fs_stats, maps.h):
 *      "reports" records it put in the ring buffer, "reports_dropped"
 *      those it could not (ring full).  The rest are the daemon's own.
 *      Every record the daemon takes from the ring buffer counts in
 *      reports_received and in one outcome: filed (a new candidate),
 *      duplicate (already one of its window), stray (of no pending
 *      window, e.g. a lost one; = stray_reports), refused (the window's
 *      set full; = candidates_dropped), malformed (short, or could not
 *      be filed).  So reports_received = filed + duplicate + stray +
 *      refused + malformed, and reports = reports_received whenever the
 *      ring buffer has been drained (a status answered while records wait
 *      in it may show reports ahead).  windows_lost: windows a failed
 *      rotation gave up (none of it in the history or in later windows);
 *      rotations_postponed: rotations put off because the slot to move to
 *      could not be cleaned (the current window goes on, longer);
 *      rotations_late: rotations 10 ms or more after their timer was due,
 *      the worst in rotation_late_max_us.
 *
 * block_add / block_del / block_clear / block_load_commit (the whole
 * request or nothing of it; a bad CIDR or a CIDR not listed is an error):
 *   {"added":N, "entries":N}   or   {"deleted":N, "entries":N}
 *   A change runs on a query thread, off the loop that rotates windows:
 *   one at a time; another change sent meanwhile is answered at once
 *   {"error":"daemon busy: a blocklist change of N CIDRs is being
 *   applied; try again when it is answered"} and changes nothing (status'
 *   blocklist.changing is N until then).  Busy rather than queued: a
 *   change of a million entries takes seconds, and a client whose change
 *   waited behind another's would only see a later deadline, not learn
 *   the order the two were applied in.  Its answer comes when it is
 *   applied (tries, filter and file), within FS_BLOCK_ANSWER_MS(N) of the
 *   request, N the CIDRs it changes plus those listed: past that the
 *   client gets an error saying it goes on, and it does.
 * block load: the daemon opens no file a request names.  The client reads
 * and checks the list (a bad line is its error, naming FILE:LINE; nothing
 * is sent), then sends it in parts, each a request of its own below
 * FS_REQUEST_MAX, and commits them as one change:
 *   block_load_begin {"total":N}  ->  {"load":"TOKEN"} (16 hex digits);
 *     one load at a time: while another is being sent (a part in the last
 *     10 s) the answer is "daemon busy"; an idle one is dropped;
 *   block_load_part  ->  {"staged":K} (CIDRs received so far); more than
 *     total, or a bad CIDR, is an error and drops the load;
 *   block_load_commit  ->  as block_add of all of them (every CIDR sent,
 *     K = total, or an error and nothing added).
 * Parts rather than one large request: every request stays small enough
 * to be read and parsed within a loop turn (a million CIDRs are 20 MB of
 * JSON), and the daemon holds at most one list being sent (18 bytes a
 * CIDR, at most --blocklist-max of them).
 * block_list:
 *   {"entries":[{"cidr":"10.0.0.0/8", "packets":N, "bytes":N,
 *                "origin":"manual", "added_at":T, "expires_at":T}, ...],
 *    "offset":K, "total":N, "blocklist":{ as in status }}
 *   entries K .. K + FS_BLOCK_LIST_PAGE - 1 of the sorted list (fewer at
 *   its end): a list of a million entries is read a page at a time, and
 *   no answer is larger than a few MB.
 *   packets and bytes: what the datapath dropped for the entry (the
 *   longest one covering the source), since it was added.
 *   origin: "manual" (block add, block load, a list file of old), or the
 *   policy rule that added it, as written (policy_file.h).  added_at,
 *   expires_at: seconds since the epoch; added_at 0 when not known (an
 *   entry of a list file of old), expires_at absent when it never does.
 *   A block_add "for" sets expires_at to now + for, of the CIDRs added and
 *   of those listed already (which become manual); without it they are
 *   kept for good.  An entry is deleted, as block_del deletes it, at the
 *   first window boundary after its expires_at: within a window of it.
 * top's flows carry "blocked":true|false: whether the source is covered
 * by an entry now.
 * policy (flowsketchd --policy FILE; policy.h says how it decides):
 *   {"file":PATH, "dry_run":BOOL,
 *    "rules":[{"rule":TEXT, "line":N, "by":KEY, "metric":"packets"|"bytes"|
 *              "spread", "threshold":X, "for":SECONDS, "ban":SECONDS}, ...],
 *    "allow":[CIDR, ...], "limit":{"n":N, "per_seconds":S},
 *    "above":[{"rule":TEXT, "key":CIDR, "value":X, "since":T,
 *              "seconds":S}, ...],
 *    "decisions":[{"at":T, "rule":TEXT, "key":CIDR, "value":X,
 *                  "action":"blocked"|"dry-run"|"limited"|"allowed"|
 *                  "own address"|"list full"}, ...],
 *    "counters":{"blocked":N, "dry_run":N, "limited":N, "allowed":N,
 *                "own":N, "full":N, "reloads":N, "reload_failures":N}}
 *   value: the lower end of the key's estimate in its last window (a rate
 *   a second for packets and bytes, distinct peers for spread); above: the
 *   keys above a rule now, since T (seconds since the epoch); decisions:
 *   the last FSD_POLICY_LOG, oldest first.
 * status carries, with --policy, "policy":{"file":PATH, "dry_run":BOOL,
 *   "rules":N, "above":N, "blocked":N, "dry_run_blocked":N, "limited":N}.
 * policy_reload:  {"reloaded":true, "rules":N}, or an error naming the
 *   file and line, the running policy kept.
 */
#ifndef FLOWSKETCH_PROTOCOL_H
#define FLOWSKETCH_PROTOCOL_H

#define FS_SOCKET_DEFAULT "/run/flowsketch/flowsketchd.sock"
#define FS_REQUEST_MAX 4096
/* CIDRs in one block_add / block_del request (the shortest, "::", take 5
 * bytes each, so about 800 would fit FS_REQUEST_MAX; the CLI checks both). */
#define FS_BLOCK_REQUEST_MAX 512
/* The longest "for" of a block_add: a year, in seconds. */
#define FS_BLOCK_FOR_MAX (365 * 24 * 3600)
/* CIDRs in one block load (the daemon's --blocklist-max is at most this). */
#define FS_BLOCK_LOAD_MAX 1000000
/* How long a blocklist change may take to be answered, n being the CIDRs
 * it changes plus the entries listed (the file is written whole, the
 * filter rebuilt from all): 5 s, plus 40 us for each (a trie update or
 * delete, a system call, a line of the file, the filter's keys; measured
 * 12 to 21 us a CIDR for a 1M load on two cores shared with a load
 * average of 10, the change running at nice 10, so about twice that):
 * 45 s for a load of a million into an empty list. */
#define FS_BLOCK_ANSWER_MS(n) (5000U + (unsigned int)((n) / 25))
/* Entries in one block_list answer (about 4 MB of JSON at most); the CLI
 * asks for the next page at "offset" until it has "total". */
#define FS_BLOCK_LIST_PAGE 50000
/* The largest export answer the daemon sends, and the CLI takes: the
 * sketch's base64 and the candidates' JSON (at the defaults, 0.5 MB and
 * about 250 bytes a candidate).  Below the daemon's room for answers
 * waiting for their clients (server.h). */
#define FS_EXPORT_ANSWER_MAX (48U << 20)

#endif /* FLOWSKETCH_PROTOCOL_H */
