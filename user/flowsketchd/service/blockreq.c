// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* blockreq.c - the blocklist's requests on the loop (blockreq.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>
#include "keys.h"
#include "base/answer.h"
#include "base/log.h"
#include "blocklist/blocklist.h"
#include "blockreq.h"
#include "server.h"
#include "workers.h"

_Static_assert(FSD_BLOCKLIST_MAX_LIMIT <= FS_BLOCK_LOAD_MAX,
	       "a full list must fit one block load");

/* On a query thread: the change or the page. */
static struct json_object *run_block(const struct fsd_query_ctx *qc, const void *request,
				     struct fsd_query_scratch *q)
{
	const struct fsd_block_change *ch = request;
	struct fsd_blocklist *bl = qc->blocklist;

	pid_t tid = (pid_t)syscall(SYS_gettid);
	struct json_object *a;
	int nice0;

	(void)q;
	if (ch->op == FSD_BLOCK_LIST)
		return fsd_blocklist_list(bl, ch->offset);
	/* A change of a million entries keeps a CPU busy for seconds, in
	 * the kernel mostly (trie updates): at nice 10 (weight 110 against
	 * the loop's 1024) it takes about a tenth of a CPU it shares with
	 * the loop, which so wakes for its timer within the scheduler's
	 * latency, not after a slice of this thread's.  Back to the
	 * thread's own nice after (if CAP_SYS_NICE is gone, the query
	 * threads stay at 10: slower queries, never a late window). */
	errno = 0;
	nice0 = getpriority(PRIO_PROCESS, (id_t)tid);
	if (errno)
		nice0 = 0;
	setpriority(PRIO_PROCESS, (id_t)tid, 10);
	switch (ch->op) {
	case FSD_BLOCK_ADD: {
		struct fsd_block_meta m = { .now = (__s64)time(NULL), .renew = ch->renew,
					    .origin = ch->origin[0] ? ch->origin : NULL };

		m.expires_at = ch->for_sec ? m.now + ch->for_sec : 0;
		a = fsd_blocklist_add(bl, ch->c, ch->n, &m);
		break;
	}
	case FSD_BLOCK_DEL:
		a = fsd_blocklist_del(bl, ch->c, ch->n);
		break;
	default:
		a = fsd_blocklist_clear(bl);
		break;
	}
	setpriority(PRIO_PROCESS, (id_t)tid, nice0);
	return a;
}

static struct fsd_block_change *change_new(enum fsd_block_op op, size_t cap)
{
	struct fsd_block_change *ch = malloc(sizeof(*ch) + cap * sizeof(ch->c[0]));

	if (ch) {
		ch->op = op;
		ch->offset = 0;
		ch->for_sec = 0;
		ch->renew = false;
		ch->origin[0] = 0;
		ch->n = 0;
		ch->cap = cap;
	}
	return ch;
}

/* The job that carries ch (freed with it); a change marks the list busy
 * until the job is freed.  cidrs: the CIDRs it changes (status). */
static struct fsd_job *job_of(struct fsd_blocklist *bl, struct fsd_block_change *ch,
			      __u64 client, size_t cidrs)
{
	struct fsd_job *j = calloc(1, sizeof(*j));

	if (!j) {
		free(ch);
		return NULL;
	}
	j->client = client;
	j->run = run_block;
	j->request = ch;
	if (ch->op != FSD_BLOCK_LIST) {
		j->must_run = true;
		/* The file is written whole and the filter rebuilt from every
		 * entry: the list's length counts as much as the change's. */
		j->answer_ms = FS_BLOCK_ANSWER_MS(cidrs + fsd_blocklist_entries(bl));
		__atomic_store_n(&bl->changing, cidrs, __ATOMIC_RELAXED);
		__atomic_store_n(&bl->busy, 1, __ATOMIC_RELEASE);
		j->busy = &bl->busy;
	}
	return j;
}

static struct json_object *busy(const struct fsd_blocklist *bl)
{
	return fsd_answer_error("daemon busy: a blocklist change of %zu CIDRs is being applied; try again when it is answered",
				__atomic_load_n(&bl->changing, __ATOMIC_RELAXED));
}

static bool is_busy(const struct fsd_blocklist *bl)
{
	return __atomic_load_n(&bl->busy, __ATOMIC_ACQUIRE);
}

static void stage_drop(struct fsd_block_stage *st)
{
	free(st->ch);
	memset(st, 0, sizeof(*st));
}

static struct json_object *load_begin(struct fsd_blocklist *bl, size_t total)
{
	struct fsd_block_stage *st = &bl->stage;
	__u64 now = fsd_monotonic_ms(), token = 0;
	struct json_object *a;
	char text[17];

	if (st->token && now - st->touched_ms < FSD_BLOCK_STAGE_IDLE_MS)
		return fsd_answer_error("daemon busy: another block load is being sent; try again");
	if (total > bl->max)
		return fsd_answer_error("the list has %zu CIDRs, more than --blocklist-max %u",
					total, bl->max);
	stage_drop(st);
	/* A random token: another client's parts never land in this load
	 * by mistake. */
	if (getrandom(&token, sizeof(token), 0) != sizeof(token) || !token)
		return fsd_answer_error("cannot make a load token: %s", strerror(errno ? errno : EAGAIN));
	/* At most --blocklist-max CIDRs of 18 bytes: malloc'd, its pages
	 * touched only as parts come. */
	st->ch = change_new(FSD_BLOCK_ADD, total);
	if (!st->ch)
		return fsd_answer_error("out of memory");
	st->token = token;
	st->total = total;
	st->touched_ms = now;
	snprintf(text, sizeof(text), "%016llx", (unsigned long long)token);
	a = json_object_new_object();
	json_object_object_add(a, FS_KEY_LOAD, json_object_new_string(text));
	return a;
}

static struct json_object *no_load(void)
{
	return fsd_answer_error("no block load with this token is being sent (committed, idle for %d s, or replaced)",
				FSD_BLOCK_STAGE_IDLE_MS / 1000);
}

static struct json_object *load_part(struct fsd_blocklist *bl, const struct fsd_request *r)
{
	struct fsd_block_stage *st = &bl->stage;
	struct json_object *a;

	if (!st->token || st->token != r->load)
		return no_load();
	if (r->ncidrs > st->total - st->ch->n) {
		stage_drop(st);
		return fsd_answer_error("more CIDRs than the %zu block_load_begin gave; the load is dropped",
					st->total);
	}
	memcpy(st->ch->c + st->ch->n, r->cidrs, r->ncidrs * sizeof(r->cidrs[0]));
	st->ch->n += r->ncidrs;
	st->touched_ms = fsd_monotonic_ms();
	a = json_object_new_object();
	json_object_object_add(a, FS_KEY_STAGED, json_object_new_uint64(st->ch->n));
	return a;
}

/* The list sent becomes one change: *job, or *now an error. */
static void load_commit(struct fsd_blocklist *bl, const struct fsd_request *r, __u64 client,
			struct json_object **now, struct fsd_job **job)
{
	struct fsd_block_stage *st = &bl->stage;
	struct fsd_block_change *ch;
	size_t got;

	if (!st->token || st->token != r->load) {
		*now = no_load();
		return;
	}
	if (st->ch->n != st->total) {
		got = st->ch->n;
		stage_drop(st);
		*now = fsd_answer_error("%zu of the %zu CIDRs announced were sent; the load is dropped, nothing added",
					got, st->total);
		return;
	}
	if (is_busy(bl)) {
		*now = busy(bl);	/* the load stays: commit again */
		return;
	}
	ch = st->ch;
	st->ch = NULL;
	stage_drop(st);
	*job = job_of(bl, ch, client, ch->n);
}

void fsd_block_request(struct fsd_blocklist *bl, const struct fsd_request *r,
		       __u64 client, struct json_object **now,
		       struct fsd_job **job)
{
	struct fsd_block_change *ch;
	enum fsd_block_op op;
	size_t cidrs = 0;

	*now = NULL;
	*job = NULL;
	if (!bl->started) {
		*now = fsd_answer_error("this daemon has no blocklist: it counts what arrives with --ingress tracepoint, which cannot drop (restart it with --ingress xdp to block)");
		return;
	}
	switch (r->cmd) {
	case FSD_CMD_BLOCK_LOAD_BEGIN:
		*now = load_begin(bl, r->total);
		return;
	case FSD_CMD_BLOCK_LOAD_PART:
		*now = load_part(bl, r);
		return;
	case FSD_CMD_BLOCK_LOAD_COMMIT:
		load_commit(bl, r, client, now, job);
		break;
	case FSD_CMD_BLOCK_LIST:
		ch = change_new(FSD_BLOCK_LIST, 0);
		if (ch) {
			ch->offset = r->offset;
			*job = job_of(bl, ch, client, 0);
		}
		break;
	default:
		if (is_busy(bl)) {
			*now = busy(bl);
			return;
		}
		op = r->cmd == FSD_CMD_BLOCK_ADD ? FSD_BLOCK_ADD :
		     r->cmd == FSD_CMD_BLOCK_DEL ? FSD_BLOCK_DEL : FSD_BLOCK_CLEAR;
		if (op == FSD_BLOCK_CLEAR)
			cidrs = fsd_blocklist_entries(bl);	/* every one goes */
		ch = change_new(op, op == FSD_BLOCK_CLEAR ? 0 : r->ncidrs);
		if (ch && op != FSD_BLOCK_CLEAR) {
			memcpy(ch->c, r->cidrs, r->ncidrs * sizeof(r->cidrs[0]));
			ch->n = cidrs = r->ncidrs;
			ch->for_sec = r->for_sec;
			ch->renew = true;
		}
		if (ch)
			*job = job_of(bl, ch, client, cidrs);
		break;
	}
	if (!*now && !*job)
		*now = fsd_answer_error("out of memory");
}

int fsd_block_expire(struct fsd_blocklist *bl, struct fsd_workers *w)
{
	struct fsd_block_change *ch;
	struct fs_cidr *c;
	struct fsd_job *j;
	size_t n;
	int err;

	/* While a change runs, the next boundary looks again. */
	if (!bl->started || is_busy(bl))
		return 0;
	err = fsd_blocklist_expired(bl, (__s64)time(NULL), &c, &n);
	if (err || !n)
		return err;
	ch = change_new(FSD_BLOCK_DEL, n);
	if (!ch) {
		free(c);
		return -ENOMEM;
	}
	memcpy(ch->c, c, n * sizeof(*c));
	ch->n = n;
	free(c);
	j = job_of(bl, ch, FSD_CLIENT_DAEMON, n);
	if (!j)
		return -ENOMEM;
	err = fsd_workers_submit(w, j);
	if (err)
		fsd_job_free(j);	/* the queue is full: the next boundary */
	else
		fsd_info("blocklist: %zu entries expired, being deleted", n);
	return err;
}

bool fsd_block_busy(const struct fsd_blocklist *bl)
{
	return is_busy(bl);
}

int fsd_block_auto(struct fsd_blocklist *bl, struct fsd_workers *w,
		   const struct fs_cidr *c, size_t n, const char *origin, __u32 for_sec)
{
	struct fsd_block_change *ch;
	struct fsd_job *j;
	int err;

	if (!bl->started || is_busy(bl))
		return -EBUSY;
	ch = change_new(FSD_BLOCK_ADD, n);
	if (!ch)
		return -ENOMEM;
	memcpy(ch->c, c, n * sizeof(*c));
	ch->n = n;
	ch->for_sec = for_sec;
	snprintf(ch->origin, sizeof(ch->origin), "%s", origin);
	j = job_of(bl, ch, FSD_CLIENT_DAEMON, n);
	if (!j)
		return -ENOMEM;
	err = fsd_workers_submit(w, j);
	if (err)
		fsd_job_free(j);
	return err;
}
