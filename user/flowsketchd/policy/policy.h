/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * policy.h - flowsketchd --policy FILE: from detection to a drop.
 *
 * At every window boundary the daemon's top hands the policy the last
 * finished window of inbound traffic (fsd_policy_tick()).  For each rule
 * (policy_file.h) the policy takes the rule key's heaviest keys of that
 * window, from the prefix sketch for packets and bytes, from the spread
 * sketch for spread, at most FSD_POLICY_CANDIDATES a rule, and the LOWER
 * end of each estimate's bound (detect_json.h: packets_low, bytes less
 * the Count-Min term, distinct_low, all at z = FS_DETECT_Z): a key is
 * above a rule only if the truth is above it with that confidence, since
 * a false block is worse than a late one.  Rates are that end over the
 * window's length.
 *
 * "for": a key is held above while it is above in consecutive windows;
 * when those windows cover the rule's hold (n * window >= for), the
 * policy decides.  So a source that starts above a rule is decided at the
 * end of its ceil(for / window)-th full window: within for + 2 windows of
 * its first packet (one partial window, one for the boundary's work).
 *
 * A decision, in this order:
 *   allowed      the key overlaps an `allow` CIDR (either contains the
 *                other): never blocked automatically;
 *   own address  the key covers an address of this host (any interface of
 *                the daemon's network namespace, read at each decision);
 *   list full    the blocklist has --blocklist-max entries;
 *   limited      `limit N/UNIT` (a bucket of N tokens, refilled N every
 *                UNIT) has no token left: logged once a window, counted;
 *   blocked      a blocklist entry for the key (its CIDR), with the rule's
 *                text as origin and its ban as expiry (blocklist.h);
 *   dry-run      with --policy-dry-run, in place of blocked: logged and
 *                counted the same, nothing added.
 * A key an entry holds already (it, or a shorter prefix over it) is left
 * alone, and is no candidate: blocked sources, whose packets the datapath
 * still counts, do not crowd out the ones still passing.  A key decided
 * (blocked, dry run, allowed, own address) is not decided again before
 * the ban would end; one held back (limited, list full) is at the next
 * window.  A block that fails on the query thread (the list file cannot
 * be written) is logged, and its key waits for the ban's end.  Changes of
 * the list go one at a time (blockreq.h): while one runs, the policy
 * keeps counting its holds and decides at the next boundary.
 *
 * Reload (SIGHUP, `flowsketch policy reload`): the file is parsed whole;
 * a bad one, or one that needs a sketch the datapath does not keep, is
 * refused and the running policy stays.  Holds of the rules kept (same
 * text) carry over; the counters and decisions do too.
 *
 * All of it runs on the event loop, bounded: FSD_POLICY_RULES_MAX rules,
 * FSD_POLICY_CANDIDATES keys each, FSD_POLICY_HOLDS holds,
 * FSD_POLICY_RECENT keys remembered, FSD_POLICY_LOG decisions kept.
 */
#ifndef FLOWSKETCHD_POLICY_H
#define FLOWSKETCHD_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include "cidr.h"
#include "policy_file.h"

struct fs_sketch;
struct fs_sketch_params;
struct fs_hash_key;
struct fsd_blocklist;
struct json_object;

/* Keys looked at a rule and window: the prefix sketch has at most one
 * candidate a bucket (2 x 1024 at its defaults), the spread sketch as many. */
#define FSD_POLICY_CANDIDATES 1024
#define FSD_POLICY_HOLDS 8192
#define FSD_POLICY_RECENT 65536
#define FSD_POLICY_LOG 64
#define FSD_POLICY_BATCH 512	/* CIDRs blocked in one change (FS_BLOCK_REQUEST_MAX) */

enum fsd_policy_action {
	FSD_ACT_BLOCKED, FSD_ACT_DRY_RUN, FSD_ACT_LIMITED, FSD_ACT_ALLOWED,
	FSD_ACT_OWN, FSD_ACT_FULL, FSD_ACT_COUNT
};

/* A key above a rule, and since which window. */
struct fsd_policy_hold {
	struct fs_cidr key;
	__u32 rule;
	__u64 since_seq, last_seq;	/* windows: first and last above */
	__s64 since;			/* seconds since the epoch */
	double value;			/* the last window's lower end */
};

struct fsd_policy_decision {
	__s64 at;
	struct fs_cidr key;
	char rule[FSD_POLICY_RULE_TEXT_MAX];
	double value;
	enum fsd_policy_action action;
};

/* A key decided: not again until `until`. */
struct fsd_policy_recent {
	struct fs_cidr key;
	__s64 until;
};

struct fsd_policy_state {
	const char *path;		/* NULL: no policy */
	bool dry_run;
	struct fsd_policy pol;
	char (*text)[FSD_POLICY_RULE_TEXT_MAX];	/* each rule's */
	struct fsd_policy_hold *hold;
	size_t nhold;
	struct fsd_policy_recent *recent;
	size_t nrecent;
	struct fsd_policy_decision log[FSD_POLICY_LOG];
	unsigned int log_next, log_n;
	double tokens;
	__s64 tokens_at_ms;
	__u64 last_seq;			/* the window evaluated last */
	bool evaluated;			/* last_seq is one */
	__u64 count[FSD_ACT_COUNT];
	__u64 reloads, reload_failures;
};

/* One change the daemon's top hands to the blocklist (blockreq.h). */
struct fsd_policy_block {
	char origin[FSD_POLICY_RULE_TEXT_MAX];
	__u32 ban_sec;
	size_t n;
	struct fs_cidr c[FSD_POLICY_BATCH];
};

/* What a tick reads: the last finished inbound window and how to read it. */
struct fsd_policy_input {
	const struct fs_sketch *sketch;
	__u64 seq;			/* the window's, to take each once */
	const struct fs_sketch_params *params;
	const struct fs_hash_key *hash_key;
	unsigned int window_sec;
	__s64 now;			/* seconds since the epoch */
	__s64 now_ms;			/* CLOCK_MONOTONIC, for the limit */
	bool can_block;			/* no blocklist change runs */
};

/*
 * Read path (NULL: no policy, ps stays empty) and make it the policy: 0,
 * or -errno with msg naming the file and line.  params: what the datapath
 * will keep; the sketches the rules need are turned on in it.
 */
int fsd_policy_start(struct fsd_policy_state *ps, const char *path, bool dry_run,
		     struct fs_sketch_params *params, char *msg, size_t msg_len);
/* Read the file again: 0, or -errno with msg, the running policy kept. */
int fsd_policy_reload(struct fsd_policy_state *ps, const struct fs_sketch_params *params,
		      char *msg, size_t msg_len);
void fsd_policy_stop(struct fsd_policy_state *ps);

/*
 * One window's look (see above): holds updated, decisions taken and
 * logged; *out the first rule's keys to block now (out->n 0: none).
 */
void fsd_policy_tick(struct fsd_policy_state *ps, const struct fsd_policy_input *in,
		     const struct fsd_blocklist *bl, struct fsd_policy_block *out);

/* The change of out could not be handed over (the daemon logs why): its
 * keys were not blocked, and are decided again at the next window. */
void fsd_policy_block_failed(struct fsd_policy_state *ps, const struct fsd_policy_block *b);

/* The `policy` answer (protocol.h). */
struct json_object *fsd_policy_answer(const struct fsd_policy_state *ps, __s64 now);

/* Decisions by action (metrics), and each action's name. */
const char *fsd_policy_action_name(enum fsd_policy_action a);

#endif /* FLOWSKETCHD_POLICY_H */
