/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * workers.h - query threads: span queries off the event loop.
 *
 * A top or flows answer over a long span sums up to every window kept
 * (hundreds of sketches of a few hundred KiB), tens of milliseconds of
 * memory traffic.  Run on the event loop that closes windows, it would
 * make rotations late and every other client wait, so the loop hands such
 * requests to FSD_QUERY_THREADS threads and goes on; a thread computes the
 * answer's text with its own scratch (history.h: allocated once, counted
 * in the daemon's memory cap) and hands it back through a queue whose
 * eventfd the loop watches.  What a query thread shares with the loop is
 * struct fsd_query_ctx, and nothing else of the daemon.
 *
 * Jobs are bounded: at most FSD_QUERY_QUEUE wait, and a request that
 * would be one more is answered "busy" at once.
 */
#ifndef FLOWSKETCHD_WORKERS_H
#define FLOWSKETCHD_WORKERS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include "windows/history.h"

#define FSD_QUERY_THREADS 2
#define FSD_QUERY_QUEUE 256
/* How much nicer than the loop the query threads run (workers.c). */
#define FSD_QUERY_NICE 5

struct fs_hash_key;
struct fs_hash_secret;
struct fsd_blocklist;
struct json_object;

/*
 * What the query threads answer from: filled once by the daemon's top
 * after setup (daemon.c), before the loop hands over a job, and the same
 * after, so read without a lock (by the loop too, selecting a request's
 * windows, query.h).  What it points to is shared only as its owner
 * allows: a history under its lock (history.h, "Threads"), the blocklist
 * by its rules (blocklist.h, "Threads").
 */
struct fsd_query_ctx {
	const struct fs_sketch_params *params;
	unsigned int window_sec;
	__u64 started_ns;		/* CLOCK_MONOTONIC: the daemon's start */
	struct fsd_history *in, *out, *conn;	/* conn: the connections' */
	/* The frontends' own marks that out and conn are kept: set in
	 * setup, before the loop hands over a job, and cleared only once
	 * the threads have stopped. */
	const bool *out_ready, *conn_ready;
	struct fsd_blocklist *blocklist;	/* lookups, and its changes */
	/* What exports relabel with (export_perm.h), and the fingerprint
	 * of the hash secret (0: none, no export). */
	const struct fs_hash_secret *export_key;
	__u64 fingerprint;
	/* The packet hash's keys (hash.h): where the detection sketches
	 * keep a candidate (prefixes.h, spread.h). */
	const struct fs_hash_key *hash_key;
};

/* What a query thread runs: the answer to one request. */
typedef struct json_object *(*fsd_job_fn)(const struct fsd_query_ctx *qc,
					  const void *request,
					  struct fsd_query_scratch *q);

struct fsd_job {
	struct fsd_job *next;
	__u64 client;			/* whom the loop gives the answer */
	fsd_job_fn run;
	void *request;			/* the job's own copy, freed with it */
	char *answer;			/* out: the answer's text and "\n" */
	size_t answer_len;
	/* Set by the loop (atomically) when nobody waits for the answer any
	 * more: the client went away or its deadline passed.  A thread that
	 * takes a cancelled job skips it, so dead requests cannot keep the
	 * threads busy or the queue full.  Still only the loop frees it. */
	int cancelled;
	/* A change (a blocklist job) runs even when cancelled: its client
	 * going away must not decide whether half-sent work is done. */
	bool must_run;
	/* Its answer's deadline from the request (0: FSD_QUERY_MS). */
	unsigned int answer_ms;
	/* Cleared (atomically) when the job is freed, whatever became of
	 * it: the blocklist's "a change is being applied" mark. */
	int *busy;
};

struct fsd_workers {
	const struct fsd_query_ctx *ctx;
	pthread_t threads[FSD_QUERY_THREADS];
	unsigned int started;
	struct fsd_query_scratch scratch[FSD_QUERY_THREADS];
	unsigned int scratch_ready;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct fsd_job *queue, **queue_tail;
	struct fsd_job *done;
	unsigned int queued;		/* jobs in queue or running */
	bool stopping;
	int event_fd;			/* readable when done is not empty */
};

/* Allocate the scratch for sketches of p and start the threads, whose
 * jobs answer from ctx (read as each runs: it may be filled until the
 * first is submitted): 0 or -errno, nothing left running on failure. */
int fsd_workers_start(struct fsd_workers *w, const struct fsd_query_ctx *ctx,
		      const struct fs_sketch_params *p);
/* Stop and join the threads, free every job and the scratch. */
void fsd_workers_stop(struct fsd_workers *w);
/* Queue a job (the workers own it from here): 0, or -EBUSY when
 * FSD_QUERY_QUEUE jobs wait already (the caller still owns it). */
int fsd_workers_submit(struct fsd_workers *w, struct fsd_job *job);
/* Every finished job, in no particular order (NULL-terminated list);
 * the caller frees each with fsd_job_free(). */
struct fsd_job *fsd_workers_take_done(struct fsd_workers *w);
void fsd_job_free(struct fsd_job *job);

/* The most the query threads' scratch can take. */
size_t fsd_workers_max_bytes(const struct fs_sketch_params *p);

#endif /* FLOWSKETCHD_WORKERS_H */
