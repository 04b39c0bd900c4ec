/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * bench_live_run.h - how the live benchmarks (fs-livebench.c, XDP;
 * fs-tpbench.c, the tracepoint frontends) run: the setup (the
 * receiving namespace entered, the generator's socket in the sending one,
 * the frames, BPF_ENABLE_STATS, the generator started), windows closed the
 * daemon's way on a loaded object's maps, and phases of traffic on the
 * program measured, timed by its run-time statistics.  Define LB_TOOL
 * (bench_live_opts.h) before including it.
 *
 * A run: lb_start(), then per program a load (the tool's: lb_params()
 * for the sketch's parameters and hash key, lb_windows_open() on the
 * object's maps, LB_MAPS()), lb_mark() at attach, phases (lb_steady(), or
 * lb_phase_begin(), a budget for the generator, lb_phase_end()),
 * lb_windows_close(); lb_stop() before the report, lb_end() after.
 *
 * Windows (user/flowsketchd/windows/rotation.c): window start and window_seq + 1,
 * an fs_barrier update for the RCU grace period, the ring buffer drained,
 * done_seq, then the old slot's chunks read and zeroed on every CPU, as
 * the daemon folds and zeroes a closed slot; closed(ctx, slot, old) then
 * reads what the tool wants of the closed window.
 *
 * Several loads at once (fs-livebench's bursty phase, one per veth pair):
 * each has a struct lb_run of its own for its windows only (o, value and
 * ncpus copied from the run's, lb_params(), lb_windows_open()), listed in
 * the run's also[]; lb_wait() closes their windows on the same clock.
 */
#ifndef FLOWSKETCH_BENCH_LIVE_RUN_H
#define FLOWSKETCH_BENCH_LIVE_RUN_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "flowsketch/params.h"
#include "flowsketch/maps.h"
#include "flowsketch/hash.h"
#include "sketch.h"
#include "bench_live.h"
#include "bench_live_opts.h"

#define LB_DRAIN_NS 10000000000ULL	/* every frame must have run within 10 s */
#define LB_POLL_NS 1000000ULL		/* wait loop step, 1 ms */
#define LB_MAX_ALSO 3			/* other loads whose windows close */

/* The maps windows are closed on; sketch: by datapath map (FS_DP_MAPS). */
struct lb_maps {
	int ctl, reports, barrier, barrier_inner, sketch[FS_NDPMAPS];
};

/* Those of a skeleton (any that has the datapath's maps). */
#define LB_MAP_FD(NAME, name, KIND) [FS_DP_##NAME] = bpf_map__fd(lb_skel_->maps.fs_##name),
#define LB_MAPS(skel) ({						\
	__typeof__(skel) lb_skel_ = (skel);				\
	(struct lb_maps){						\
		.ctl = bpf_map__fd(lb_skel_->maps.fs_ctl),		\
		.reports = bpf_map__fd(lb_skel_->maps.fs_reports),	\
		.barrier = bpf_map__fd(lb_skel_->maps.fs_barrier),	\
		.barrier_inner = bpf_map__fd(lb_skel_->maps.fs_barrier_inner), \
		.sketch = { FS_DP_MAPS(LB_MAP_FD) },			\
	};								\
})

struct lb_run {
	const struct lb_opts *o;
	struct gen g;
	int rx_ifindex, tx_ifindex;	/* --rx-iface, --tx-iface */
	int ncpus;
	void *value;			/* one chunk, all CPUs */
	int stats_fd;			/* BPF_ENABLE_STATS; -1 before */
	bool gen_started;
	/* The loaded object's (lb_params(), lb_windows_open()). */
	struct fs_sketch_params p;
	struct lb_maps maps;
	struct fs_ctl *ctl;		/* mmap of fs_ctl[0] */
	struct ring_buffer *rb;
	bool rotating;			/* windows are closed on time */
	__u64 seq, next_close_ns;	/* the tool sets the first close */
	__u64 windows, records;		/* closed, reports read: all loads */
	int (*closed)(void *ctx, __u32 slot, __u64 old);	/* or NULL */
	void *ctx;
	struct lb_run *also[LB_MAX_ALSO];	/* their windows close too */
	int nalso;
	/* The program measured (lb_mark()). */
	int prog_fd;
	bool other_frames;		/* it also runs for frames not sent */
	struct stat_snap at_attach;
	__u64 sent_at_attach;
};

static __u64 lb_window_ns(const struct lb_run *R)
{
	return (__u64)R->o->window_ms * 1000000ULL;
}

/* Sketch parameters for --depth with a fresh hash key, as after a
 * daemon start. */
static int lb_params(struct lb_run *R)
{
	struct fs_hash_secret secret;

	if (getrandom(&secret, sizeof(secret), 0) < 0)
		return -errno;
	fs_params_init(&R->p, R->o->depth, FS_DEFAULT_CMS_LOG2W,
		       FS_DEFAULT_HLL_P, 0, &secret);
	return 0;
}

static int lb_count_record(void *ctx, void *data, size_t size)
{
	struct lb_run *R = ctx;

	R->records++;
	return 0;
}

/* After a load: fs_ctl[0] written as *ctl (as the daemon starts it) and
 * mapped, the reports' ring buffer opened, windows closed from now on
 * (the first at R->next_close_ns, which the caller sets). */
static int lb_windows_open(struct lb_run *R, struct lb_maps m,
			   const struct fs_ctl *ctl)
{
	__u32 zero = 0;

	R->maps = m;
	if (bpf_map_update_elem(m.ctl, &zero, ctl, 0))
		return -errno;
	R->ctl = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
		      MAP_SHARED, m.ctl, 0);
	if (R->ctl == MAP_FAILED) {
		R->ctl = NULL;
		return -errno;
	}
	R->rb = ring_buffer__new(m.reports, lb_count_record, R, NULL);
	if (!R->rb)
		return -errno;
	R->seq = 0;
	R->rotating = true;
	return 0;
}

static void lb_windows_close(struct lb_run *R)
{
	ring_buffer__free(R->rb);
	R->rb = NULL;
	if (R->ctl)
		munmap(R->ctl, (size_t)sysconf(_SC_PAGESIZE));
	R->ctl = NULL;
	R->rotating = false;
}

/* Read then zero chunks [first, last] of fd on every CPU, as the daemon
 * folds and zeroes a closed slot. */
static int lb_zero_range(struct lb_run *R, int fd, __u32 first, __u32 last)
{
	__u32 k;

	for (k = first; k <= last; k++) {
		if (bpf_map_lookup_elem(fd, &k, R->value))	/* the daemon reads first */
			return -errno;
		memset(R->value, 0, (size_t)R->ncpus * FS_CHUNK_BYTES);
		if (bpf_map_update_elem(fd, &k, R->value, BPF_EXIST))
			return -errno;
	}
	return 0;
}

/* Close the current window the daemon's way (header). */
static int lb_rotate(struct lb_run *R)
{
	const struct fs_sketch_params *p = &R->p;
	__u32 slot = (__u32)(R->seq % FS_NSLOTS), zero = 0;
	__u64 old = R->seq;
	int err = 0, m;

	__atomic_store_n(&R->ctl->window_start_ns, now_ns(), __ATOMIC_RELEASE);
	__atomic_store_n(&R->ctl->window_seq, old + 1, __ATOMIC_RELEASE);
	R->seq = old + 1;
	if (bpf_map_update_elem(R->maps.barrier, &zero, &R->maps.barrier_inner,
				BPF_ANY))
		return -errno;
	ring_buffer__consume(R->rb);
	__atomic_store_n(&R->ctl->done_seq, old + 1, __ATOMIC_RELEASE);
	for (m = 0; m < FS_NDPMAPS && !err; m++) {
		__u64 first = fs_dp_first(m, p, slot);

		if (!fs_dp_maps[m].per_slot(p))	/* a map of no slot */
			continue;
		err = lb_zero_range(R, R->maps.sketch[m],
				    (__u32)(first >> fs_dp_maps[m].chunk_shift),
				    (__u32)((first + fs_dp_maps[m].per_slot(p) - 1) >>
					    fs_dp_maps[m].chunk_shift));
	}
	if (!err && R->closed)
		err = R->closed(R->ctx, slot, old);
	if (!err)
		R->windows++;
	return err;
}

/* The program measured from now on: its runs and the frames sent are
 * counted from here for the drain. */
static int lb_mark(struct lb_run *R, int prog_fd)
{
	R->prog_fd = prog_fd;
	R->sent_at_attach = atomic_load(&R->g.sent);
	return prog_stats(prog_fd, &R->at_attach);
}

/* Every frame sent since lb_mark() has run through the program (exactly
 * so, unless it also runs for other frames). */
static bool lb_drained(struct lb_run *R)
{
	struct stat_snap s;
	__u64 runs, sent;

	/* Idle alone is not enough: the generator may have decided it was
	 * idle on the budget before the one just set, and stored that after
	 * the new budget's idle = 0; it has caught up only once its sent
	 * count reaches the budget. */
	if (!atomic_load(&R->g.idle) ||
	    atomic_load(&R->g.sent) < atomic_load(&R->g.budget) ||
	    prog_stats(R->prog_fd, &s))
		return false;
	runs = s.run_cnt - R->at_attach.run_cnt;
	sent = atomic_load(&R->g.sent) - R->sent_at_attach;
	return R->other_frames ? runs >= sent : runs == sent;
}

/* W's window closed if it is due at t, and its reports read. */
static int lb_tick(struct lb_run *W, __u64 t)
{
	int err;

	if (W->rotating && t >= W->next_close_ns) {
		err = lb_rotate(W);
		if (err) {
			fprintf(stderr, LB_TOOL ": window close failed: %s.\n",
				strerror(-err));
			return err;
		}
		W->next_close_ns += lb_window_ns(W);
	}
	if (W->rb)
		ring_buffer__consume(W->rb);
	return 0;
}

/* Wait until deadline_ns, or (0) until drained, closing windows on time
 * meanwhile (R's and those of R->also[]). */
static int lb_wait(struct lb_run *R, __u64 deadline_ns, const char *what)
{
	__u64 start = now_ns();

	for (;;) {
		__u64 t = now_ns();
		int i, err;

		if (atomic_load(&R->g.err)) {
			fprintf(stderr, LB_TOOL ": sending failed: %s.\n",
				strerror(atomic_load(&R->g.err)));
			return -EIO;
		}
		err = lb_tick(R, t);
		for (i = 0; !err && i < R->nalso; i++)
			err = lb_tick(R->also[i], t);
		if (err)
			return err;
		if (deadline_ns && t >= deadline_ns)
			return 0;
		if (!deadline_ns && lb_drained(R))
			return 0;
		if (!deadline_ns && t - start > LB_DRAIN_NS) {
			struct stat_snap s = { 0 };

			prog_stats(R->prog_fd, &s);
			fprintf(stderr, LB_TOOL ": %s: the program ran %llu times for %llu frames sent in 10 s.\n",
				what, (unsigned long long)(s.run_cnt - R->at_attach.run_cnt),
				(unsigned long long)(atomic_load(&R->g.sent) - R->sent_at_attach));
			return -ETIMEDOUT;
		}
		sleep_ns(LB_POLL_NS);
	}
}

/* A phase of traffic: where it began. */
struct lb_phase {
	struct stat_snap a;
	__u64 sent, t0;
};

static int lb_phase_begin(struct lb_run *R, struct lb_phase *ph)
{
	int err = prog_stats(R->prog_fd, &ph->a);

	ph->sent = atomic_load(&R->g.sent);
	ph->t0 = now_ns();
	return err;
}

/* The generator's budget is set: wait for the drain, then the phase's
 * figures. */
static int lb_phase_end(struct lb_run *R, const struct lb_phase *ph,
			struct lb_sample *out, const char *what)
{
	struct stat_snap b;
	__u64 t1;
	int err;

	err = lb_wait(R, 0, what);
	if (err)
		return err;
	t1 = now_ns();
	err = prog_stats(R->prog_fd, &b);
	if (err)
		return err;
	out->runs = b.run_cnt - ph->a.run_cnt;
	out->sent = atomic_load(&R->g.sent) - ph->sent;
	if (!out->runs || !out->sent) {
		fprintf(stderr, LB_TOOL ": %s: no frame ran (are bpf_stats on?).\n", what);
		return -EIO;
	}
	out->ns = (double)(b.run_ns - ph->a.run_ns) / (double)out->runs;
	out->seconds = (double)(t1 - ph->t0) * 1e-9;
	return 0;
}

/* --steady seconds of traffic as fast as the generator goes, then the
 * drain. */
static int lb_steady(struct lb_run *R, struct lb_sample *out, const char *what)
{
	struct lb_phase ph;
	int err = lb_phase_begin(R, &ph);

	if (err)
		return err;
	atomic_store(&R->g.budget, ~0ULL);
	atomic_store(&R->g.idle, 0);
	err = lb_wait(R, ph.t0 + (__u64)(R->o->steady_s * 1e9), what);
	atomic_store(&R->g.budget, atomic_load(&R->g.sent));
	if (!err)
		err = lb_phase_end(R, &ph, out, what);
	return err;
}

/* --rounds rounds of programs 0..n-1, measure(ctx, program, round) each:
 * interleaved, and the order turns every round so no program always
 * follows the same one. */
static int lb_rounds(const struct lb_run *R, int n,
		     int (*measure)(void *ctx, int k, __u32 r), void *ctx)
{
	__u32 r;
	int i, err;

	for (r = 0; r < R->o->rounds; r++)
		for (i = 0; i < n; i++) {
			err = measure(ctx, (int)((i + r) % (__u32)n), r);
			if (err)
				return err;
		}
	return 0;
}

/*
 * The run's setup: this thread in --rx-netns, the generator's socket on
 * --tx-iface in --tx-netns (from a helper thread), both interfaces'
 * indexes, the frames addressed to --rx-iface's MAC, the run-time
 * statistics on, and the generator started (idle), on the last CPU with
 * this thread on the first when there are two.  Says what failed on
 * stderr; lb_end() frees what it got.
 */
static int lb_start(struct lb_run *R)
{
	const struct lb_opts *o = R->o;
	struct gen *g = &R->g;
	struct sock_req q = { .fd = -1 };
	struct sockaddr_ll sll;
	socklen_t sll_len = sizeof(sll);
	pthread_t t;
	int err, ncpu_online;

	R->stats_fd = -1;
	g->fd = -1;
	err = enter_netns(o->rx_netns);
	if (err) {
		fprintf(stderr, LB_TOOL ": cannot enter netns %s: %s.\n",
			o->rx_netns, strerror(-err));
		return err;
	}
	R->rx_ifindex = (int)if_nametoindex(o->rx_iface);
	if (!R->rx_ifindex) {
		fprintf(stderr, LB_TOOL ": no interface %s in netns %s.\n",
			o->rx_iface, o->rx_netns);
		return -ENODEV;
	}
	R->ncpus = libbpf_num_possible_cpus();
	if (R->ncpus <= 0)
		return -EINVAL;
	R->value = calloc((size_t)R->ncpus, FS_CHUNK_BYTES);
	q.netns = o->tx_netns;
	q.ifname = o->tx_iface;
	if (!R->value || pthread_create(&t, NULL, open_sock_main, &q) ||
	    pthread_join(t, NULL) || q.err) {
		fprintf(stderr, LB_TOOL ": cannot open a packet socket on %s in %s: %s.\n",
			o->tx_iface, o->tx_netns, strerror(q.err ? -q.err : ENOMEM));
		return q.err ? q.err : -ENOMEM;
	}
	g->fd = q.fd;
	memcpy(g->src_mac, q.mac, ETH_ALEN);
	if (getsockname(g->fd, (struct sockaddr *)&sll, &sll_len) || sll.sll_ifindex <= 0) {
		fprintf(stderr, LB_TOOL ": cannot tell %s's index.\n", o->tx_iface);
		return -ENODEV;
	}
	R->tx_ifindex = sll.sll_ifindex;
	{
		int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		err = s < 0 ? -errno : iface_mac(s, o->rx_iface, g->dst_mac);
		if (s >= 0)
			close(s);
		if (err) {
			fprintf(stderr, LB_TOOL ": cannot read %s's MAC: %s.\n",
				o->rx_iface, strerror(-err));
			return err;
		}
	}
	g->flows = o->flows;
	g->zipf = o->zipf;
	g->ipv6_share = o->ipv6_share;
	g->seed = o->seed;
	if (gen_prepare(g)) {
		fprintf(stderr, LB_TOOL ": out of memory for the frames.\n");
		return -ENOMEM;
	}
	R->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (R->stats_fd < 0) {
		err = -errno;
		fprintf(stderr, LB_TOOL ": cannot enable BPF run-time statistics: %s.\n",
			strerror(-err));
		return err;
	}
	ncpu_online = (int)sysconf(_SC_NPROCESSORS_ONLN);
	g->cpu = ncpu_online > 1 ? ncpu_online - 1 : -1;
	if (ncpu_online > 1)
		pin_to(0);
	atomic_store(&g->idle, 1);
	if (pthread_create(&g->thread, NULL, gen_main, g)) {
		fprintf(stderr, LB_TOOL ": cannot start the generator.\n");
		return -EAGAIN;
	}
	R->gen_started = true;
	return 0;
}

/* The generator stopped (before the report: its count is final). */
static void lb_stop(struct lb_run *R)
{
	if (R->gen_started) {
		atomic_store(&R->g.stop, 1);
		pthread_join(R->g.thread, NULL);
		R->gen_started = false;
	}
}

/* The rest of lb_start()'s undone. */
static void lb_end(struct lb_run *R)
{
	lb_stop(R);
	if (R->stats_fd >= 0)
		close(R->stats_fd);
	R->stats_fd = -1;
	if (R->g.fd >= 0)
		close(R->g.fd);
	R->g.fd = -1;
	free(R->value);
	R->value = NULL;
}

#endif /* FLOWSKETCH_BENCH_LIVE_RUN_H */
