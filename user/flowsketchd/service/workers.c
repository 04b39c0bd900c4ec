// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* workers.c - query threads (workers.h). */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <json-c/json.h>
#include "base/log.h"
#include "workers.h"

struct worker_arg {
	struct fsd_workers *w;
	unsigned int index;
};

void fsd_job_free(struct fsd_job *job)
{
	if (!job)
		return;
	if (job->busy)
		__atomic_store_n(job->busy, 0, __ATOMIC_RELEASE);
	free(job->request);
	free(job->answer);
	free(job);
}

/* The answer's text with its newline, or a fixed error when even that
 * cannot be had (out of memory). */
static void job_answer(struct fsd_job *job, struct json_object *a)
{
	static const char nomem[] = "{\"error\":\"out of memory\"}\n";
	const char *text = a ? json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN) : NULL;
	size_t len = text ? strlen(text) : 0;

	job->answer = text ? malloc(len + 2) : NULL;
	if (job->answer) {
		memcpy(job->answer, text, len);
		job->answer[len] = '\n';
		job->answer[len + 1] = 0;
		job->answer_len = len + 1;
	} else {
		job->answer = strdup(nomem);
		job->answer_len = job->answer ? sizeof(nomem) - 1 : 0;
	}
	json_object_put(a);
}

static void *worker_main(void *arg)
{
	struct worker_arg *wa = arg;
	struct fsd_workers *w = wa->w;
	struct fsd_query_scratch *q = &w->scratch[wa->index];
	const uint64_t one = 1;

	free(wa);
	/* Rotations have deadlines, queries only their clients' patience:
	 * on a busy host the loop, which closes windows, should win the CPU
	 * from the threads that answer.  Linux's setpriority() takes a
	 * thread's id and lowers that thread alone; failing to is harmless. */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid),
		    getpriority(PRIO_PROCESS, 0) + FSD_QUERY_NICE);
	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct fsd_job *job;

		while (!w->queue && !w->stopping)
			pthread_cond_wait(&w->wake, &w->lock);
		if (w->stopping)
			break;
		job = w->queue;
		w->queue = job->next;
		if (!w->queue)
			w->queue_tail = &w->queue;
		pthread_mutex_unlock(&w->lock);

		if (job->must_run || !__atomic_load_n(&job->cancelled, __ATOMIC_RELAXED))
			job_answer(job, job->run(w->ctx, job->request, q));
		/* A large answer is many small json-c allocations, freed by
		 * now; give them back, or each thread's malloc arena keeps
		 * the peak of the largest answer so far and the daemon's
		 * memory creeps up query by query. */
		malloc_trim(0);

		pthread_mutex_lock(&w->lock);
		job->next = w->done;
		w->done = job;
		w->queued--;
		/* An eventfd counter cannot fill up in practice (2^64 - 2). */
		if (write(w->event_fd, &one, sizeof(one)) != sizeof(one))
			fsd_warn("query thread cannot wake the loop: %s",
				 strerror(errno));
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int fsd_workers_start(struct fsd_workers *w, const struct fsd_query_ctx *ctx,
		      const struct fs_sketch_params *p)
{
	unsigned int i;
	int err;

	memset(w, 0, sizeof(*w));
	w->ctx = ctx;
	w->queue_tail = &w->queue;
	w->event_fd = -1;
	err = -pthread_mutex_init(&w->lock, NULL);
	if (err)
		return err;
	err = -pthread_cond_init(&w->wake, NULL);
	if (err) {
		pthread_mutex_destroy(&w->lock);
		return err;
	}
	w->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->event_fd < 0) {
		err = -errno;
		goto err_stop;
	}
	for (i = 0; i < FSD_QUERY_THREADS; i++) {
		err = fsd_query_scratch_init(&w->scratch[i], p);
		if (err)
			goto err_stop;
		w->scratch_ready++;
	}
	for (i = 0; i < FSD_QUERY_THREADS; i++) {
		struct worker_arg *wa = malloc(sizeof(*wa));

		if (!wa) {
			err = -ENOMEM;
			goto err_stop;
		}
		wa->w = w;
		wa->index = i;
		err = -pthread_create(&w->threads[i], NULL, worker_main, wa);
		if (err) {
			free(wa);
			goto err_stop;
		}
		w->started++;
	}
	return 0;

err_stop:
	fsd_fail(err, "cannot start the query threads");
	fsd_workers_stop(w);
	return err;
}

static void free_jobs(struct fsd_job *job)
{
	while (job) {
		struct fsd_job *next = job->next;

		fsd_job_free(job);
		job = next;
	}
}

void fsd_workers_stop(struct fsd_workers *w)
{
	unsigned int i;

	if (!w->ctx)
		return;		/* never started */
	pthread_mutex_lock(&w->lock);
	w->stopping = true;
	pthread_cond_broadcast(&w->wake);
	pthread_mutex_unlock(&w->lock);
	for (i = 0; i < w->started; i++)
		pthread_join(w->threads[i], NULL);
	w->started = 0;
	free_jobs(w->queue);
	free_jobs(w->done);
	w->queue = w->done = NULL;
	for (i = 0; i < w->scratch_ready; i++)
		fsd_query_scratch_free(&w->scratch[i]);
	w->scratch_ready = 0;
	if (w->event_fd >= 0)
		close(w->event_fd);
	w->event_fd = -1;
	pthread_cond_destroy(&w->wake);
	pthread_mutex_destroy(&w->lock);
	w->ctx = NULL;
}

int fsd_workers_submit(struct fsd_workers *w, struct fsd_job *job)
{
	int err = 0;

	pthread_mutex_lock(&w->lock);
	if (w->queued >= FSD_QUERY_QUEUE) {
		err = -EBUSY;
	} else {
		job->next = NULL;
		*w->queue_tail = job;
		w->queue_tail = &job->next;
		w->queued++;
		pthread_cond_signal(&w->wake);
	}
	pthread_mutex_unlock(&w->lock);
	return err;
}

struct fsd_job *fsd_workers_take_done(struct fsd_workers *w)
{
	struct fsd_job *done;
	uint64_t n;

	/* Reset the counter first: a job finishing after this read writes
	 * it again, so no wakeup is lost. */
	if (read(w->event_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		fsd_warn("cannot read the query threads' eventfd: %s",
			 strerror(errno));
	pthread_mutex_lock(&w->lock);
	done = w->done;
	w->done = NULL;
	pthread_mutex_unlock(&w->lock);
	return done;
}

size_t fsd_workers_max_bytes(const struct fs_sketch_params *p)
{
	return FSD_QUERY_THREADS * fsd_query_scratch_max_bytes(p);
}
