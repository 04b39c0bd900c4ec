// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * dispatch.c - the command table (dispatch.h): the rows of commands.h
 * with what each needs of the daemon: who may ask it (access.h), and the
 * handler that answers, in the loop or on a query thread.
 */
#include <time.h>
#include <json-c/json.h>
#include "keys.h"
#include "base/answer.h"
#include "service/blockreq.h"
#include "daemon.h"
#include "dispatch.h"
#include "service/accuracy.h"
#include "service/prefixes.h"
#include "service/query.h"
#include "service/request.h"
#include "service/spread.h"
#include "service/status.h"

/* An FSD_IN_LOOP handler: *now the answer, or *job work of its own for
 * the query threads (the blocklist's, blockreq.h). */
typedef void fsd_loop_fn(struct fsd_daemon *d, const struct fsd_request *r,
			 __u64 client, struct json_object **now,
			 struct fsd_job **job);

/* Status reads the loop's own state (BPF maps, interfaces, counters) and
 * is cheap: the loop answers it. */
static void status_now(struct fsd_daemon *d, const struct fsd_request *r,
		       __u64 client, struct json_object **now,
		       struct fsd_job **job)
{
	*now = fsd_answer_status(&d->view);
}

/* The blocklist's requests need the list alone. */
static void block_request(struct fsd_daemon *d, const struct fsd_request *r,
			  __u64 client, struct json_object **now,
			  struct fsd_job **job)
{
	fsd_block_request(&d->blocklist, r, client, now, job);
}

/* The policy's state is the loop's (policy.h): answered here. */
static void policy_now(struct fsd_daemon *d, const struct fsd_request *r,
		       __u64 client, struct json_object **now,
		       struct fsd_job **job)
{
	*now = d->policy.path ? fsd_policy_answer(&d->policy, (__s64)time(NULL)) :
	       fsd_answer_error("this daemon runs no policy (flowsketchd --policy FILE)");
}

static void policy_reload(struct fsd_daemon *d, const struct fsd_request *r,
			  __u64 client, struct json_object **now,
			  struct fsd_job **job)
{
	char msg[512];

	if (fsd_policy_reload(&d->policy, &d->opts.params, msg, sizeof(msg))) {
		*now = fsd_answer_error("policy not reloaded, the running one stays: %s", msg);
		return;
	}
	*now = json_object_new_object();
	json_object_object_add(*now, FS_KEY_RELOADED, json_object_new_boolean(true));
	json_object_object_add(*now, FS_KEY_RULES, json_object_new_uint64(d->policy.pol.nrules));
}

static const struct fsd_command {
	const char *who;		/* as the CLI says it */
	enum fsd_cmd_need need;
	fsd_loop_fn *loop;		/* FSD_IN_LOOP */
	fsd_job_fn span;		/* FSD_ON_SPAN */
} commands[FSD_CMD_COUNT] = {
#define FSD_IN_LOOP(h) .loop = (h)
#define FSD_ON_SPAN(h) .span = (h)
#define ROW(id, name, keys, parse, where, need_, handler, who_, help)	\
	[FSD_CMD_##id] = { .who = who_, .need = FSD_NEED_##need_,	\
			   where(handler) },
	FSD_COMMANDS(ROW)
#undef ROW
};

/* The refusal for a peer that may not ask this (NULL: it may). */
static struct json_object *refusal(const struct fsd_daemon *d,
				   const struct fsd_peer *peer,
				   enum fsd_cmd_need need, const char *who)
{
	const char *group = d->opts.read_group;

	if (peer->access == FSD_ACCESS_ALL ||
	    (peer->access == FSD_ACCESS_READ && need == FSD_NEED_READ))
		return NULL;
	if (peer->access == FSD_ACCESS_READ)
		return fsd_answer_error("permission denied: %s needs root (this socket gives group %s read-only access)",
					who, group);
	if (group)
		return fsd_answer_error("permission denied: uid %u is neither root nor in group %s",
					(unsigned int)peer->uid, group);
	return fsd_answer_error("permission denied: this socket is for root only (flowsketchd --read-group GROUP lets a group read)");
}

void fsd_request_start(void *daemon, const char *text, size_t len,
		       __u64 client, const struct fsd_peer *peer,
		       struct json_object **now, struct fsd_job **job)
{
	struct fsd_daemon *d = daemon;
	char err[FSD_REQUEST_ERROR_MAX];
	const struct fsd_command *c;
	struct fsd_request r;

	*now = NULL;
	*job = NULL;
	/* Nothing of a stranger's request is parsed. */
	if (peer->access == FSD_ACCESS_NONE) {
		*now = refusal(d, peer, FSD_NEED_READ, NULL);
		return;
	}
	if (fsd_request_parse(text, len, &r, err)) {
		*now = fsd_answer_error("%s", err);
		return;
	}
	c = &commands[r.cmd];
	*now = refusal(d, peer, c->need, c->who);
	if (*now)
		return;
	if (c->loop)
		c->loop(d, &r, client, now, job);
	else
		fsd_span_job(&d->query, &r, client, c->span, now, job);
}
