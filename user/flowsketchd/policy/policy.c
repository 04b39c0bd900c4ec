// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* policy.c - the mitigation policy's decisions (policy.h). */
#include <errno.h>
#include <ifaddrs.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "detect_json.h"
#include "keys.h"
#include "sketch.h"
#include "base/log.h"
#include "blocklist/blocklist.h"
#include "policy.h"

static const char *const action_names[FSD_ACT_COUNT] = {
	[FSD_ACT_BLOCKED] = "blocked", [FSD_ACT_DRY_RUN] = "dry-run",
	[FSD_ACT_LIMITED] = "limited", [FSD_ACT_ALLOWED] = "allowed",
	[FSD_ACT_OWN] = "own address", [FSD_ACT_FULL] = "list full",
};

const char *fsd_policy_action_name(enum fsd_policy_action a)
{
	return a < FSD_ACT_COUNT ? action_names[a] : "?";
}

/* ---- the file ------------------------------------------------------------ */

/* The sketches pol needs are kept (at their --detect defaults). */
static void turn_on(const struct fsd_policy *pol, struct fs_sketch_params *params)
{
	const struct fs_prefix_params pp = { FS_DEFAULT_PREFIX_DEPTH,
		FS_DEFAULT_PREFIX_LOG2W, FS_DEFAULT_PREFIX_SKIP };
	const struct fs_spread_params sp = { FS_DEFAULT_SPREAD_DEPTH,
		FS_DEFAULT_SPREAD_LOG2W, FS_DEFAULT_SPREAD_SHIFT };

	if (pol->needs_prefixes && !params->prefix_log2w) {
		fs_params_set_prefix(params, &pp);
		fsd_info("policy: its rules need the prefix sketch: --detect prefixes is on");
	}
	if (pol->needs_spread && !params->spread_log2w) {
		fs_params_set_spread(params, &sp);
		fsd_info("policy: its rules need the spread sketch: --detect spread is on");
	}
}

/* Make pol (parsed) the running policy; holds of rules kept carry over. */
static int adopt(struct fsd_policy_state *ps, struct fsd_policy *pol)
{
	char (*text)[FSD_POLICY_RULE_TEXT_MAX] = calloc(pol->nrules ? pol->nrules : 1,
							sizeof(*text));
	size_t i, j, k = 0;

	if (!text)
		return -ENOMEM;
	for (i = 0; i < pol->nrules; i++)
		fsd_policy_rule_format(&pol->rule[i], text[i], sizeof(text[i]));
	/* A hold names its rule by index: renumbered by text, or dropped. */
	for (i = 0; i < ps->nhold; i++) {
		for (j = 0; j < pol->nrules; j++)
			if (!strcmp(ps->text[ps->hold[i].rule], text[j]))
				break;
		if (j < pol->nrules) {
			ps->hold[k] = ps->hold[i];
			ps->hold[k++].rule = (__u32)j;
		}
	}
	ps->nhold = k;
	/* A reload keeps the tokens spent (it is no way round the limit),
	 * at most the new limit's. */
	if (!ps->text || ps->tokens > pol->limit_n)
		ps->tokens = pol->limit_n;
	fsd_policy_free(&ps->pol);
	free(ps->text);
	ps->pol = *pol;
	ps->text = text;
	return 0;
}

int fsd_policy_start(struct fsd_policy_state *ps, const char *path, bool dry_run,
		     struct fs_sketch_params *params, char *msg, size_t msg_len)
{
	struct fsd_policy pol;
	int err;

	memset(ps, 0, sizeof(*ps));
	if (!path)
		return 0;
	err = fsd_policy_load(path, &pol, msg, msg_len);
	if (err)
		return err;
	ps->hold = calloc(FSD_POLICY_HOLDS, sizeof(*ps->hold));
	ps->recent = calloc(FSD_POLICY_RECENT, sizeof(*ps->recent));
	err = ps->hold && ps->recent ? adopt(ps, &pol) : -ENOMEM;
	if (err) {
		fsd_policy_free(&pol);
		free(ps->hold);
		free(ps->recent);
		memset(ps, 0, sizeof(*ps));
		snprintf(msg, msg_len, "%s: out of memory", path);
		return err;
	}
	ps->path = path;
	ps->dry_run = dry_run;
	turn_on(&ps->pol, params);
	fsd_info("policy: %zu rules, %zu allowed CIDRs, at most %u new blocks every %u s, from %s%s",
		 ps->pol.nrules, ps->pol.nallow, ps->pol.limit_n, ps->pol.limit_sec, path,
		 dry_run ? " (dry run: nothing is blocked)" : "");
	return 0;
}

int fsd_policy_reload(struct fsd_policy_state *ps, const struct fs_sketch_params *params,
		      char *msg, size_t msg_len)
{
	struct fsd_policy pol;
	int err;

	if (!ps->path) {
		snprintf(msg, msg_len, "this daemon runs no policy (flowsketchd --policy FILE)");
		return -ENOENT;
	}
	err = fsd_policy_load(ps->path, &pol, msg, msg_len);
	if (!err && ((pol.needs_prefixes && !params->prefix_log2w) ||
		     (pol.needs_spread && !params->spread_log2w))) {
		snprintf(msg, msg_len, "%s: its rules need the %s sketch, which the datapath does not keep: restart flowsketchd with it (--detect)",
			 ps->path, pol.needs_prefixes && !params->prefix_log2w ? "prefix" : "spread");
		fsd_policy_free(&pol);
		err = -EINVAL;
	}
	if (!err) {
		err = adopt(ps, &pol);
		if (err) {
			fsd_policy_free(&pol);
			snprintf(msg, msg_len, "%s: out of memory", ps->path);
		}
	}
	if (err) {
		ps->reload_failures++;
		fsd_warn("policy: reload refused, the running policy stays: %s", msg);
		return err;
	}
	ps->reloads++;
	fsd_info("policy: reloaded %s: %zu rules, %zu allowed CIDRs", ps->path,
		 ps->pol.nrules, ps->pol.nallow);
	return 0;
}

void fsd_policy_stop(struct fsd_policy_state *ps)
{
	fsd_policy_free(&ps->pol);
	free(ps->text);
	free(ps->hold);
	free(ps->recent);
	memset(ps, 0, sizeof(*ps));
}

/* ---- a window's look ----------------------------------------------------- */

/* A key above a rule in this window, with the lower end of its estimate. */
struct above {
	struct fs_cidr key;
	double value;
};

static double entry_double(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_double(v) : 0;
}

/* The key (a "prefix" CIDR, or a host address) of an answer's entry. */
static int entry_key(struct json_object *e, const char *k, struct fs_cidr *c)
{
	struct json_object *v;
	const char *why;

	if (!json_object_object_get_ex(e, k, &v))
		return -EINVAL;
	return fs_cidr_parse(json_object_get_string(v), c, &why);
}

/*
 * The keys of rule r above its threshold in the window, into a (room for
 * FSD_POLICY_CANDIDATES): how many.  The estimates and their bounds are
 * the ones `top --by` and `spread` answer (detect_json.h), so what the
 * policy acts on is what an operator reads.
 */
static size_t keys_above(const struct fsd_policy_rule *r, const struct fsd_policy_input *in,
			 const struct fsd_blocklist *bl, struct above *a)
{
	bool spread = r->metric == FSD_POLICY_SPREAD, bytes = r->metric == FSD_POLICY_BYTES;
	struct json_object *ans = json_object_new_object(), *list, *eb;
	double scale = spread ? 1 : 1.0 / in->window_sec, over = 0;
	size_t i, n = 0;
	int err;

	if (spread) {
		struct fs_spread_params p;

		fs_params_spread(in->params, &p);
		err = p.depth ? fs_spreaders_json(ans, in->sketch->spread, &p, in->hash_key,
						  FS_SPREAD_SRC, FSD_POLICY_CANDIDATES,
						  fs_sketch_distinct(in->sketch, FS_HLL_FLOWS)) : -ENOENT;
	} else {
		struct fs_prefix_params p;

		fs_params_prefix(in->params, &p);
		err = p.depth ? fs_prefixes_json(ans, in->sketch->prefix, &p, in->hash_key,
						 &r->key, bytes, FSD_POLICY_CANDIDATES,
						 in->sketch->totals.packets,
						 in->sketch->totals.bytes) : -ENOENT;
	}
	if (err || !json_object_object_get_ex(ans, spread ? FS_KEY_SPREADERS : FS_KEY_PREFIXES, &list))
		goto out;
	/* Bytes: the Count-Min term (prefix.h, "Error"). */
	if (bytes && json_object_object_get_ex(ans, FS_KEY_ERROR_BOUND, &eb))
		over = entry_double(eb, FS_KEY_BYTES_COLLISIONS);
	for (i = 0; i < json_object_array_length(list) && n < FSD_POLICY_CANDIDATES; i++) {
		struct json_object *e = json_object_array_get_idx(list, i);
		double low = spread ? entry_double(e, FS_KEY_DISTINCT_LOW) :
			     entry_double(e, FS_KEY_PACKETS_LOW), packets;

		/* Bytes: the sampling's error scales as the packets' does
		 * (each sampled packet carries its bytes), so the bytes'
		 * lower end is the packets' share of them, less the
		 * Count-Min term. */
		if (bytes) {
			packets = entry_double(e, FS_KEY_PACKETS);
			low = (packets > 0 ? entry_double(e, FS_KEY_BYTES) * low / packets : 0) - over;
		}
		if (low * scale <= r->threshold)
			continue;	/* sorted by estimate, not by lower end */
		if (entry_key(e, spread ? FS_KEY_SRC : FS_KEY_PREFIX, &a[n].key))
			continue;
		/* Blocked already: its packets are still counted (before the
		 * verdict), and must not crowd out the keys still passing. */
		if (fsd_blocklist_holds(bl, &a[n].key))
			continue;
		a[n++].value = low * scale;
	}
out:
	json_object_put(ans);
	return n;
}

/* Whether a and b share an address: one contains the other. */
static bool overlap(const struct fs_cidr *a, const struct fs_cidr *b)
{
	return a->family == b->family &&
	       (fs_cidr_covers(a, b->family, b->addr) || fs_cidr_covers(b, a->family, a->addr));
}

static bool allowed(const struct fsd_policy *pol, const struct fs_cidr *k)
{
	size_t i;

	for (i = 0; i < pol->nallow; i++)
		if (overlap(&pol->allow[i], k))
			return true;
	return false;
}

/* This host's addresses, read once a window when a decision needs them
 * (addresses come and go). */
struct own {
	struct ifaddrs *ifa;
	bool read, failed;
};

/* Whether k covers an address of an interface of this network namespace:
 * 1, 0, or -1 when they cannot be read (then nothing is blocked). */
static int own_address(struct own *o, const struct fs_cidr *k)
{
	struct ifaddrs *i;
	bool own = false;

	if (!o->read) {
		o->read = true;
		o->failed = getifaddrs(&o->ifa) != 0;
	}
	if (o->failed)
		return -1;
	for (i = o->ifa; i && !own; i = i->ifa_next) {
		const struct sockaddr *sa = i->ifa_addr;

		if (!sa)
			continue;
		if (sa->sa_family == AF_INET && k->family == FS_FAMILY_IPV4) {
			__u8 a[16] = { 0 };

			memcpy(a, &((const struct sockaddr_in *)sa)->sin_addr, 4);
			own = fs_cidr_covers(k, FS_FAMILY_IPV4, a);
		} else if (sa->sa_family == AF_INET6 && k->family == FS_FAMILY_IPV6) {
			own = fs_cidr_covers(k, FS_FAMILY_IPV6,
					     ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr);
		}
	}
	return own;
}

static struct fsd_policy_recent *recent_of(struct fsd_policy_state *ps, const struct fs_cidr *k,
					   __s64 now)
{
	size_t i;

	for (i = 0; i < ps->nrecent; i++)
		if (ps->recent[i].until > now && fs_cidr_equal(&ps->recent[i].key, k))
			return &ps->recent[i];
	return NULL;
}

static void remember(struct fsd_policy_state *ps, const struct fs_cidr *k, __s64 until)
{
	if (ps->nrecent < FSD_POLICY_RECENT)
		ps->recent[ps->nrecent++] = (struct fsd_policy_recent){ *k, until };
}

static void note(struct fsd_policy_state *ps, const struct fsd_policy_hold *h,
		 enum fsd_policy_action act, __s64 now)
{
	struct fsd_policy_decision *d = &ps->log[ps->log_next];
	char key[FS_CIDR_TEXT_MAX];

	ps->count[act]++;
	d->at = now;
	d->key = h->key;
	d->value = h->value;
	d->action = act;
	snprintf(d->rule, sizeof(d->rule), "%s", ps->text[h->rule]);
	ps->log_next = (ps->log_next + 1) % FSD_POLICY_LOG;
	if (ps->log_n < FSD_POLICY_LOG)
		ps->log_n++;
	if (act == FSD_ACT_LIMITED || act == FSD_ACT_FULL)
		return;		/* one line a window (decide()) */
	fs_cidr_format(&h->key, key, sizeof(key));
	fsd_info("policy: %s %s: %s (%.6g, above %lld s)",
		 act == FSD_ACT_BLOCKED ? "block" : act == FSD_ACT_DRY_RUN ? "dry run, would block" :
		 act == FSD_ACT_ALLOWED ? "not blocked, allowed:" :
		 "not blocked, an address of this host:", key, d->rule, h->value,
		 (long long)(now - h->since));
}

/* The limit's bucket, refilled for the time since it was last looked at. */
static bool take_token(struct fsd_policy_state *ps, __s64 now_ms)
{
	double per_ms = (double)ps->pol.limit_n / (ps->pol.limit_sec * 1000.0);

	if (ps->tokens_at_ms)
		ps->tokens += (double)(now_ms - ps->tokens_at_ms) * per_ms;
	if (ps->tokens > ps->pol.limit_n)
		ps->tokens = ps->pol.limit_n;
	ps->tokens_at_ms = now_ms;
	if (ps->tokens < 1)
		return false;
	ps->tokens -= 1;
	return true;
}

/* Update the holds of rule r with this window's keys above it. */
static void hold(struct fsd_policy_state *ps, __u32 r, const struct above *a, size_t n,
		 const struct fsd_policy_input *in)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		struct fsd_policy_hold *h = NULL;

		for (j = 0; j < ps->nhold; j++)
			if (ps->hold[j].rule == r && fs_cidr_equal(&ps->hold[j].key, &a[i].key)) {
				h = &ps->hold[j];
				break;
			}
		if (!h) {
			if (ps->nhold == FSD_POLICY_HOLDS)
				continue;
			h = &ps->hold[ps->nhold++];
			*h = (struct fsd_policy_hold){ .key = a[i].key, .rule = r,
						       .since_seq = in->seq, .since = in->now };
		} else if (h->last_seq + 1 != in->seq) {
			h->since_seq = in->seq;	/* a gap: held anew */
			h->since = in->now;
		}
		h->last_seq = in->seq;
		h->value = a[i].value;
	}
}

/*
 * Decide on every hold that has lasted its rule's "for".  A key decided
 * (blocked, dry run, allowed, own address) is remembered for its ban, so
 * that it is neither blocked nor logged every window; one held back by
 * the limit or a full list is asked again at the next window, and so is
 * a block that could not be handed over (fsd_policy_block_failed()).
 */
static void decide(struct fsd_policy_state *ps, const struct fsd_policy_input *in,
		   const struct fsd_blocklist *bl, struct fsd_policy_block *out)
{
	size_t i, limited = 0, full = 0, entries = fsd_blocklist_entries(bl);
	struct own own = { 0 };

	for (i = 0; i < ps->nhold; i++) {
		const struct fsd_policy_hold *h = &ps->hold[i];
		const struct fsd_policy_rule *r = &ps->pol.rule[h->rule];
		enum fsd_policy_action act;
		int mine;

		if ((in->seq - h->since_seq + 1) * in->window_sec < r->hold_sec ||
		    recent_of(ps, &h->key, in->now))
			continue;
		/* One change at a time, of one rule's origin and ban. */
		if (!ps->dry_run && (!in->can_block || (out->n && (out->n == FSD_POLICY_BATCH ||
				     strcmp(out->origin, ps->text[h->rule])))))
			continue;
		mine = allowed(&ps->pol, &h->key) ? 0 : own_address(&own, &h->key);
		if (mine < 0)
			continue;	/* not known: asked again next window */
		if (allowed(&ps->pol, &h->key))
			act = FSD_ACT_ALLOWED;
		else if (mine)
			act = FSD_ACT_OWN;
		else if (!ps->dry_run && entries + out->n >= bl->max)
			act = FSD_ACT_FULL;
		else if (!take_token(ps, in->now_ms))
			act = FSD_ACT_LIMITED;
		else
			act = ps->dry_run ? FSD_ACT_DRY_RUN : FSD_ACT_BLOCKED;
		note(ps, h, act, in->now);
		limited += act == FSD_ACT_LIMITED;
		full += act == FSD_ACT_FULL;
		if (act != FSD_ACT_LIMITED && act != FSD_ACT_FULL)
			remember(ps, &h->key, in->now + r->ban_sec);
		if (act != FSD_ACT_BLOCKED)
			continue;
		if (!out->n) {
			snprintf(out->origin, sizeof(out->origin), "%s", ps->text[h->rule]);
			out->ban_sec = r->ban_sec;
		}
		out->c[out->n++] = h->key;
	}
	if (own.ifa)
		freeifaddrs(own.ifa);
	if (limited)
		fsd_warn("policy: the limit of %u new blocks every %u s is reached: %zu keys above their rule not blocked this window",
			 ps->pol.limit_n, ps->pol.limit_sec, limited);
	if (full)
		fsd_warn("policy: the blocklist is full (--blocklist-max %u): %zu keys above their rule not blocked this window",
			 bl->max, full);
}

void fsd_policy_block_failed(struct fsd_policy_state *ps, const struct fsd_policy_block *b)
{
	size_t i, j, k;

	/* Not blocked after all: decided again next window, the count and
	 * the tokens back. */
	for (i = 0, k = 0; i < ps->nrecent; i++) {
		for (j = 0; j < b->n; j++)
			if (fs_cidr_equal(&ps->recent[i].key, &b->c[j]))
				break;
		if (j == b->n)
			ps->recent[k++] = ps->recent[i];
	}
	ps->nrecent = k;
	ps->count[FSD_ACT_BLOCKED] -= b->n < ps->count[FSD_ACT_BLOCKED] ? b->n :
				      ps->count[FSD_ACT_BLOCKED];
	ps->tokens += (double)b->n;
	if (ps->tokens > ps->pol.limit_n)
		ps->tokens = ps->pol.limit_n;
}

void fsd_policy_tick(struct fsd_policy_state *ps, const struct fsd_policy_input *in,
		     const struct fsd_blocklist *bl, struct fsd_policy_block *out)
{
	struct above *a;
	size_t i, k;
	__u32 r;

	out->n = 0;
	if (!ps->path || !in->sketch || (ps->evaluated && in->seq == ps->last_seq))
		return;
	ps->last_seq = in->seq;
	ps->evaluated = true;
	a = calloc(FSD_POLICY_CANDIDATES, sizeof(*a));
	if (!a)
		return;
	for (r = 0; r < ps->pol.nrules; r++)
		hold(ps, r, a, keys_above(&ps->pol.rule[r], in, bl, a), in);
	free(a);
	/* A hold not above in this window ends. */
	for (i = 0, k = 0; i < ps->nhold; i++)
		if (ps->hold[i].last_seq == in->seq)
			ps->hold[k++] = ps->hold[i];
	ps->nhold = k;
	for (i = 0, k = 0; i < ps->nrecent; i++)
		if (ps->recent[i].until > in->now)
			ps->recent[k++] = ps->recent[i];
	ps->nrecent = k;
	decide(ps, in, bl, out);
}

/* ---- the answer ---------------------------------------------------------- */

static void add_key(struct json_object *o, const struct fs_cidr *c)
{
	char text[FS_CIDR_TEXT_MAX];

	fs_cidr_format(c, text, sizeof(text));
	json_object_object_add(o, FS_KEY_KEY, json_object_new_string(text));
}

static struct json_object *rules_json(const struct fsd_policy_state *ps)
{
	struct json_object *arr = json_object_new_array();
	size_t i;

	for (i = 0; i < ps->pol.nrules; i++) {
		const struct fsd_policy_rule *r = &ps->pol.rule[i];
		struct json_object *o = json_object_new_object();
		char key[FS_KEYSPEC_TEXT_MAX];

		fs_keyspec_format(&r->key, key, sizeof(key));
		json_object_object_add(o, FS_KEY_RULE, json_object_new_string(ps->text[i]));
		json_object_object_add(o, FS_KEY_LINE, json_object_new_uint64(r->line));
		json_object_object_add(o, FS_KEY_BY, json_object_new_string(key));
		json_object_object_add(o, FS_KEY_METRIC, json_object_new_string(
			r->metric == FSD_POLICY_SPREAD ? "spread" :
			r->metric == FSD_POLICY_BYTES ? "bytes" : "packets"));
		json_object_object_add(o, FS_KEY_THRESHOLD, json_object_new_double(r->threshold));
		json_object_object_add(o, FS_KEY_FOR, json_object_new_uint64(r->hold_sec));
		json_object_object_add(o, FS_KEY_BAN, json_object_new_uint64(r->ban_sec));
		json_object_array_add(arr, o);
	}
	return arr;
}

struct json_object *fsd_policy_answer(const struct fsd_policy_state *ps, __s64 now)
{
	struct json_object *a = json_object_new_object(), *arr, *o;
	char text[FS_CIDR_TEXT_MAX];
	unsigned int i;
	size_t j;

	json_object_object_add(a, FS_KEY_FILE, ps->path ? json_object_new_string(ps->path) : NULL);
	json_object_object_add(a, FS_KEY_DRY_RUN, json_object_new_boolean(ps->dry_run));
	json_object_object_add(a, FS_KEY_RULES, rules_json(ps));
	arr = json_object_new_array();
	for (j = 0; j < ps->pol.nallow; j++) {
		fs_cidr_format(&ps->pol.allow[j], text, sizeof(text));
		json_object_array_add(arr, json_object_new_string(text));
	}
	json_object_object_add(a, FS_KEY_ALLOW, arr);
	o = json_object_new_object();
	json_object_object_add(o, FS_KEY_N, json_object_new_uint64(ps->pol.limit_n));
	json_object_object_add(o, FS_KEY_PER_SECONDS, json_object_new_uint64(ps->pol.limit_sec));
	json_object_object_add(a, FS_KEY_LIMIT, o);
	arr = json_object_new_array();
	for (j = 0; j < ps->nhold; j++) {
		const struct fsd_policy_hold *h = &ps->hold[j];

		o = json_object_new_object();
		json_object_object_add(o, FS_KEY_RULE, json_object_new_string(ps->text[h->rule]));
		add_key(o, &h->key);
		json_object_object_add(o, FS_KEY_VALUE, json_object_new_double(h->value));
		json_object_object_add(o, FS_KEY_SINCE, json_object_new_int64(h->since));
		json_object_object_add(o, FS_KEY_SECONDS, json_object_new_int64(now - h->since));
		json_object_array_add(arr, o);
	}
	json_object_object_add(a, FS_KEY_ABOVE, arr);
	arr = json_object_new_array();
	for (i = 0; i < ps->log_n; i++) {	/* oldest first */
		const struct fsd_policy_decision *d =
			&ps->log[(ps->log_next + FSD_POLICY_LOG - ps->log_n + i) % FSD_POLICY_LOG];

		o = json_object_new_object();
		json_object_object_add(o, FS_KEY_AT, json_object_new_int64(d->at));
		json_object_object_add(o, FS_KEY_RULE, json_object_new_string(d->rule));
		add_key(o, &d->key);
		json_object_object_add(o, FS_KEY_VALUE, json_object_new_double(d->value));
		json_object_object_add(o, FS_KEY_ACTION,
				       json_object_new_string(fsd_policy_action_name(d->action)));
		json_object_array_add(arr, o);
	}
	json_object_object_add(a, FS_KEY_DECISIONS, arr);
	o = json_object_new_object();
	for (i = 0; i < FSD_ACT_COUNT; i++)
		json_object_object_add(o, i == FSD_ACT_DRY_RUN ? "dry_run" :
				       i == FSD_ACT_OWN ? "own" : i == FSD_ACT_FULL ? "full" :
				       action_names[i], json_object_new_uint64(ps->count[i]));
	json_object_object_add(o, "reloads", json_object_new_uint64(ps->reloads));
	json_object_object_add(o, "reload_failures", json_object_new_uint64(ps->reload_failures));
	json_object_object_add(a, FS_KEY_COUNTERS, o);
	return a;
}
