// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * fs-livebench - what the datapath costs per packet on live traffic.
 *
 * BPF_PROG_TEST_RUN (tools/fs-bench.c) runs a program in a tight loop over
 * one buffer: the program's own code and lines stay in the caches between
 * runs.  A live packet instead meets caches that the sender, the stack and
 * everything else have used since the previous one.  This tool measures
 * that: the live programs of bpf/bench.bpf.c (empty, parse-only, floor,
 * naive, full) are attached in turn, natively, as the XDP program of a veth
 * that receives traffic from its peer, and each one's cost is read from the
 * kernel's run-time statistics (BPF_ENABLE_STATS, held open for the run:
 * no sysctl is left changed behind us):
 *
 *     cost = delta run_time_ns / delta run_cnt    over one phase of traffic
 *
 * Phases, for every program and every round (rounds interleave the
 * programs; each program is loaded afresh every round, so its maps are new
 * and cold, as after a daemon start):
 *
 *   first    the first --burst packets after load and attach
 *   steady   --steady seconds of traffic as fast as the generator goes
 *   quiet    --quiet seconds without traffic, then --burst packets
 *
 * and for the two blocklist programs, between steady and quiet, the list
 * switched on and off in one program (live_ab()): the blocklist's cost
 * with the least noise.
 *
 * The figure per program and phase is the median over rounds, with the
 * smallest and largest round beside it: live rounds differ in what else
 * ran on the machine, and the spread says how much.  Every packet the
 * generator sent is seen by the program (checked: XDP's run count must
 * reach the sent count, or the run fails), so the packet counts printed
 * are exact.
 *
 * Windows.  The full program runs with fs_ctl.hh_phi_q32 set (reports
 * follow each window's running total, cms.h) and its windows are closed
 * here every --window ms with the daemon's protocol (maps.h, and
 * user/flowsketchd/rotation.c): window_seq + 1, an fs_barrier update for
 * the RCU grace period, the ring buffer drained, then the old slot's
 * chunks read and zeroed on every CPU and its totals taken from fs_hot
 * (those tagged with the closed window; fs_hot is never written here,
 * maps.h).  Doing it here
 * rather than running flowsketchd keeps one loader and one program whose
 * id we hold, closes windows on the same clock as the phases (the first
 * window starts at attach, a quiet spell spans window closes as it would
 * under the daemon), and costs the datapath exactly what the daemon's
 * rotation costs it: the same syscalls on the same maps from another CPU.
 * The daemon's user-space fold and queries are left out; they are timed
 * by fs-bench.  Reports per window are the FS_STAT_REPORTS delta between
 * closes, for windows that saw traffic.
 *
 * Traffic (tools/bench_live.h, shared with fs-tpbench).  A generator
 * thread, in the sending namespace (setns), sends prebuilt frames with
 * sendmmsg on an AF_PACKET socket: --flows flows, IPv4 and IPv6
 * (--ipv6-share), UDP and TCP, sizes 64..191 bytes, drawn from a Zipf law
 * (--zipf) into a sequence of 2^20 packets that repeats.
 * A full queue (the sender's pfifo, see scripts/netns.sh) refuses a frame
 * with ENOBUFS; it is sent again, never counted twice or lost.
 *
 * The generator and the XDP program share a CPU (veth runs its NAPI in
 * the softirq of the sending CPU); this thread, which rotates and reads
 * the statistics, is pinned to another one when there is one.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "flowsketch/params.h"
#include "flowsketch/maps.h"
#include "flowsketch/hash.h"
#include "sketch.h"
#include "datapath_setup.h"
#include "bench.skel.h"
#include "bench_blocklist_fill.h"
#include "bench_live.h"

#define LIVE_DRAIN_NS 10000000000ULL	/* XDP must see every frame within 10 s */
#define LIVE_POLL_NS 1000000ULL		/* main loop step, 1 ms */
#define LIVE_MAX_ROUNDS 64
#define LIVE_MAX_AB 64			/* --ab-pairs at most */

enum live_prog { LP_EMPTY, LP_PARSE, LP_FLOOR, LP_NAIVE, LP_FULL, LP_FULL_SMALL,
		 LP_FULL_LIST, LP_MAX };
enum live_phase { PH_FIRST, PH_STEADY, PH_QUIET, PH_MAX };

static const char *const live_prog_names[LP_MAX] = {
	"empty", "parse only", "floor", "naive", "full", "full+small", "full+list",
};
static const char *const live_phase_names[PH_MAX] = {
	"first", "steady", "quiet",
};

struct live_opts {
	const char *rx_netns, *rx_iface, *tx_netns, *tx_iface;
	__u32 rounds;
	double steady_s, quiet_s;
	__u32 burst;
	__u32 flows;
	double zipf;
	double ipv6_share;
	__u64 seed;
	__u32 window_ms;
	double hh_fraction;
	__u32 depth;
	__u32 blocklist;	/* entries of full+list */
	__u32 blocklist_small;	/* entries of full+small */
	__u32 ab_pairs;		/* list on/off alternations per round */
	double ab_s;		/* seconds of each half of a pair */
};

/* ------------------------------------------------------------ programs */

struct live {
	const struct live_opts *o;
	struct bb_list list;		/* full+list's entries (--blocklist) */
	struct bb_list small;		/* full+small's (--blocklist-small) */
	struct gen *g;
	int ifindex;
	int ncpus;
	struct bench *skel;
	struct fs_sketch_params p;
	struct bpf_program *prog;
	int prog_fd;
	bool full;
	struct fs_ctl *ctl;		/* mmap of fs_ctl[0] */
	struct ring_buffer *rb;
	void *value;			/* one chunk, all CPUs */
	__u64 seq, next_close_ns;
	__u64 reports_at_open;
	__u64 ringbuf_records;
	/* reports per window of traffic, all rounds */
	__u64 *win_reports, *win_packets;
	__u32 nwin, capwin;
	__u64 dropped;
	__u64 sent_at_attach;
	struct stat_snap at_attach;
	__u64 bloom_word;		/* fs_ctl.bloom of the loaded list */
	/* The on/off alternation (live_ab()): ns per packet with the list
	 * on and off, per pair, all rounds; [0] full+small, [1] full+list. */
	double ab_on[2][LIVE_MAX_ROUNDS * LIVE_MAX_AB];
	double ab_off[2][LIVE_MAX_ROUNDS * LIVE_MAX_AB];
	__u32 nab[2];
	__u64 ab_packets;		/* every packet of the alternations */
};

static struct bpf_program *live_prog_of(struct bench *skel, enum live_prog i)
{
	switch (i) {
	case LP_EMPTY: return skel->progs.fs_live_empty;
	case LP_PARSE: return skel->progs.fs_live_parse;
	case LP_FLOOR: return skel->progs.fs_live_floor;
	case LP_NAIVE: return skel->progs.fs_live_naive;
	default: return skel->progs.fs_live_full;	/* LP_FULL, LP_FULL_SMALL, LP_FULL_LIST */
	}
}

static int count_report(void *ctx, void *data, size_t size)
{
	struct live *L = ctx;

	L->ringbuf_records++;
	return 0;
}

static int stat_sum(struct live *L, __u32 stat, __u64 *out)
{
	__u64 v[L->ncpus];
	int c;

	if (bpf_map_lookup_elem(bpf_map__fd(L->skel->maps.fs_stats), &stat, v))
		return -errno;
	*out = 0;
	for (c = 0; c < L->ncpus; c++)
		*out += v[c];
	return 0;
}

/* Load a fresh object with only program `which`: new maps, as after a
 * daemon start.  The full program gets the daemon's report fraction. */
static int live_load(struct live *L, enum live_prog which)
{
	struct fs_ctl ctl = { .hh_phi_q32 = fs_hh_phi_q32(L->o->hh_fraction) };
	struct fs_hash_secret secret;
	long page = sysconf(_SC_PAGESIZE);
	__u32 zero = 0;
	int i, err;

	if (getrandom(&secret, sizeof(secret), 0) < 0)
		return -errno;
	fs_params_init(&L->p, L->o->depth, FS_DEFAULT_CMS_LOG2W,
		       FS_DEFAULT_HLL_P, 0, &secret);
	L->skel = bench__open();
	if (!L->skel)
		return -ENOENT;
	/* Two entries share fs_live_full: all off, then the one measured on. */
	for (i = 0; i < LP_MAX; i++)
		bpf_program__set_autoload(live_prog_of(L->skel, i), false);
	bpf_program__set_autoload(live_prog_of(L->skel, which), true);
	bpf_program__set_autoload(L->skel->progs.fs_bench_verdict, false);
	bpf_program__set_autoload(L->skel->progs.fs_bench_kverdict, false);
	bpf_program__set_autoload(L->skel->progs.fs_bench_base, false);
	bpf_program__set_autoload(L->skel->progs.fs_bench_parse, false);
	bpf_program__set_autoload(L->skel->progs.fs_bench_full, false);
	bpf_program__set_autoload(L->skel->progs.fs_bench_naive, false);
	bpf_program__set_autoload(L->skel->progs.fs_bench_floor, false);
	err = FS_DATAPATH_SETUP(L->skel, &L->p, false);
	if (err)
		return err;
	bpf_map__set_max_entries(L->skel->maps.naive_cms,
				 (__u32)fs_cms_cells_per_slot(&L->p));
	bpf_map__set_max_entries(L->skel->maps.naive_hll,
				 FS_HLL_NSKETCH << L->p.hll_p);
	if (which == LP_FULL_LIST || which == LP_FULL_SMALL)
		bb_size(L->skel->maps.fs_block4, L->skel->maps.fs_block6,
			L->skel->maps.fs_block_hits, L->skel->maps.fs_bloom,
			which == LP_FULL_LIST ? &L->list : &L->small);
	err = bench__load(L->skel);
	if (err)
		return err;
	L->prog = live_prog_of(L->skel, which);
	L->prog_fd = bpf_program__fd(L->prog);
	L->full = which == LP_FULL || which == LP_FULL_SMALL || which == LP_FULL_LIST;
	if (!L->full)
		return 0;
	if (which == LP_FULL_LIST || which == LP_FULL_SMALL) {
		err = bb_fill(bpf_map__fd(L->skel->maps.fs_block4),
			      bpf_map__fd(L->skel->maps.fs_block6),
			      bpf_map__fd(L->skel->maps.fs_bloom),
			      bpf_map__fd(L->skel->maps.fs_block_exact), &L->p.secret,
			      which == LP_FULL_LIST ? &L->list : &L->small,
			      &ctl.bloom, NULL, NULL);
		if (err)
			return err;
	}
	L->bloom_word = ctl.bloom;
	if (bpf_map_update_elem(bpf_map__fd(L->skel->maps.fs_ctl), &zero, &ctl, 0))
		return -errno;
	L->ctl = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED,
		      bpf_map__fd(L->skel->maps.fs_ctl), 0);
	if (L->ctl == MAP_FAILED) {
		L->ctl = NULL;
		return -errno;
	}
	L->seq = 0;
	L->rb = ring_buffer__new(bpf_map__fd(L->skel->maps.fs_reports),
				 count_report, L, NULL);
	if (!L->rb)
		return -errno;
	return 0;
}

static void live_unload(struct live *L)
{
	if (L->ifindex > 0)
		bpf_xdp_detach(L->ifindex, XDP_FLAGS_DRV_MODE, NULL);
	ring_buffer__free(L->rb);
	L->rb = NULL;
	if (L->ctl)
		munmap(L->ctl, (size_t)sysconf(_SC_PAGESIZE));
	L->ctl = NULL;
	bench__destroy(L->skel);
	L->skel = NULL;
}

static int zero_range(struct live *L, int fd, __u32 first, __u32 last,
		      size_t size)
{
	__u32 k;

	for (k = first; k <= last; k++) {
		if (bpf_map_lookup_elem(fd, &k, L->value))	/* the daemon reads first */
			return -errno;
		memset(L->value, 0, (size_t)L->ncpus * size);
		if (bpf_map_update_elem(fd, &k, L->value, BPF_EXIST))
			return -errno;
	}
	return 0;
}

/* Close the full program's current window the daemon's way (header). */
static int live_rotate(struct live *L)
{
	const struct fs_sketch_params *p = &L->p;
	__u32 slot = (__u32)(L->seq % FS_NSLOTS), zero = 0, cpu;
	int bfd = bpf_map__fd(L->skel->maps.fs_barrier);
	int bifd = bpf_map__fd(L->skel->maps.fs_barrier_inner);
	__u64 cell0 = fs_cms_cell_number(p, slot, 0, 0);
	__u64 reg0 = fs_hll_register_number(p, slot, 0, 0);
	const struct fs_hot_line *hot = L->value;
	__u64 old = L->seq, packets = 0, reports;
	int err;

	__atomic_store_n(&L->ctl->window_seq, L->seq + 1, __ATOMIC_RELEASE);
	L->seq++;
	if (bpf_map_update_elem(bfd, &zero, &bifd, BPF_ANY))
		return -errno;
	ring_buffer__consume(L->rb);
	err = zero_range(L, bpf_map__fd(L->skel->maps.fs_cms),
			 (__u32)(cell0 >> FS_CMS_CHUNK_SHIFT),
			 (__u32)((cell0 + fs_cms_cells_per_slot(p) - 1) >> FS_CMS_CHUNK_SHIFT),
			 sizeof(struct fs_cms_chunk));
	if (!err)
		err = zero_range(L, bpf_map__fd(L->skel->maps.fs_hll),
				 (__u32)(reg0 >> FS_HLL_CHUNK_SHIFT),
				 (__u32)((reg0 + fs_hll_regs_per_slot(p) - 1) >> FS_HLL_CHUNK_SHIFT),
				 sizeof(struct fs_hll_chunk));
	if (err)
		return err;
	if (bpf_map_lookup_elem(bpf_map__fd(L->skel->maps.fs_hot), &zero, L->value))
		return -errno;
	for (cpu = 0; cpu < (__u32)L->ncpus; cpu++)
		if (hot[cpu].slot[slot].seq == old)
			packets += hot[cpu].slot[slot].packets;
	/* Reports counted since the previous close: every report of that
	 * window was sent before the barrier returned. */
	err = stat_sum(L, FS_STAT_REPORTS, &reports);
	if (err)
		return err;
	if (packets) {
		if (L->nwin == L->capwin) {
			__u32 cap = L->capwin ? 2 * L->capwin : 64;
			__u64 *a = realloc(L->win_reports, cap * sizeof(*a));
			__u64 *b = a ? realloc(L->win_packets, cap * sizeof(*b)) : NULL;

			if (a)
				L->win_reports = a;
			if (!b)
				return -ENOMEM;
			L->win_packets = b;
			L->capwin = cap;
		}
		L->win_reports[L->nwin] = reports - L->reports_at_open;
		L->win_packets[L->nwin] = packets;
		L->nwin++;
	}
	L->reports_at_open = reports;
	return 0;
}

/* Wait until `done(L)` or until deadline_ns (0: no deadline), closing
 * the full program's windows on time meanwhile. */
static int live_wait(struct live *L, __u64 deadline_ns,
		     bool (*done)(struct live *), const char *what)
{
	__u64 start = now_ns();

	for (;;) {
		__u64 t = now_ns();
		int err;

		if (atomic_load(&L->g->err)) {
			fprintf(stderr, "fs-livebench: sending failed: %s.\n",
				strerror(atomic_load(&L->g->err)));
			return -EIO;
		}
		if (L->full && t >= L->next_close_ns) {
			err = live_rotate(L);
			if (err) {
				fprintf(stderr, "fs-livebench: window close failed: %s.\n",
					strerror(-err));
				return err;
			}
			L->next_close_ns += (__u64)L->o->window_ms * 1000000ULL;
		}
		if (L->rb)
			ring_buffer__consume(L->rb);
		if (deadline_ns && t >= deadline_ns)
			return 0;
		if (done && done(L))
			return 0;
		if (!deadline_ns && t - start > LIVE_DRAIN_NS) {
			fprintf(stderr, "fs-livebench: %s: timed out.\n", what);
			return -ETIMEDOUT;
		}
		sleep_ns(LIVE_POLL_NS);
	}
}

/* Every frame sent since attach has run through the program. */
static bool live_drained(struct live *L)
{
	struct stat_snap s;

	if (!atomic_load(&L->g->idle))
		return false;
	if (prog_stats(L->prog_fd, &s))
		return false;
	return s.run_cnt - L->at_attach.run_cnt ==
	       atomic_load(&L->g->sent) - L->sent_at_attach;
}

struct sample {
	double ns;		/* per packet */
	__u64 packets;
	double seconds;		/* wall time of the phase's sending */
};

static int live_phase_end(struct live *L, const struct stat_snap *a,
			  __u64 t0, struct sample *out, const char *what)
{
	struct stat_snap b;
	__u64 t1;
	int err;

	err = live_wait(L, 0, live_drained, what);
	if (err)
		return err;
	t1 = now_ns();
	err = prog_stats(L->prog_fd, &b);
	if (err)
		return err;
	if (b.run_cnt <= a->run_cnt) {
		fprintf(stderr, "fs-livebench: %s: no packet ran (are bpf_stats on?).\n", what);
		return -EIO;
	}
	out->packets = b.run_cnt - a->run_cnt;
	out->ns = (double)(b.run_ns - a->run_ns) / (double)out->packets;
	out->seconds = (double)(t1 - t0) * 1e-9;
	return 0;
}

static int live_burst(struct live *L, struct sample *out, const char *what)
{
	struct stat_snap a;
	__u64 t0 = now_ns();
	int err = prog_stats(L->prog_fd, &a);

	if (err)
		return err;
	/* The generator is idle here (every phase ends drained), and may
	 * have sent past the last budget in its final batch: count the
	 * burst from what it did send, so a burst is exactly --burst. */
	atomic_store(&L->g->budget, atomic_load(&L->g->sent) + L->o->burst);
	atomic_store(&L->g->idle, 0);
	return live_phase_end(L, &a, t0, out, what);
}

/*
 * The blocklist's cost with the least noise the machine allows: one
 * program, one set of maps and one stream of traffic, with fs_ctl.bloom
 * switched between the list's word and 0 (an empty list, what the daemon
 * writes when the list is empty) every --ab-seconds, --ab-pairs times.
 * Rounds of separate loads (the steady phase) differ by whatever else ran
 * on the machine in between, often by more than the list costs; the
 * halves of one pair are a fraction of a second apart.  The order within
 * a pair alternates (on-off, off-on, ...) so that a drift over the pairs
 * falls on both sides alike.
 */
static int live_ab(struct live *L, int which)
{
	const struct live_opts *o = L->o;
	__u64 half = (__u64)(o->ab_s * 1e9);
	struct stat_snap a, b, start;
	__u32 pr;
	int err, side;

	err = prog_stats(L->prog_fd, &start);
	if (err)
		return err;
	atomic_store(&L->g->budget, ~0ULL);
	atomic_store(&L->g->idle, 0);
	for (pr = 0; pr < o->ab_pairs && !err; pr++) {
		double ns[2] = { 0, 0 };

		for (side = 0; side < 2 && !err; side++) {
			int on = (int)((pr + side) & 1);

			__atomic_store_n(&L->ctl->bloom, on ? L->bloom_word : 0,
					 __ATOMIC_RELEASE);
			err = prog_stats(L->prog_fd, &a);
			if (!err)
				err = live_wait(L, now_ns() + half, NULL, "on/off");
			if (!err)
				err = prog_stats(L->prog_fd, &b);
			if (!err && b.run_cnt <= a.run_cnt)
				err = -EIO;
			if (!err)
				ns[on] = (double)(b.run_ns - a.run_ns) /
					 (double)(b.run_cnt - a.run_cnt);
		}
		if (!err && L->nab[which] < LIVE_MAX_ROUNDS * LIVE_MAX_AB) {
			L->ab_on[which][L->nab[which]] = ns[1];
			L->ab_off[which][L->nab[which]] = ns[0];
			L->nab[which]++;
		}
	}
	__atomic_store_n(&L->ctl->bloom, L->bloom_word, __ATOMIC_RELEASE);
	atomic_store(&L->g->budget, atomic_load(&L->g->sent));
	if (!err)
		err = live_wait(L, 0, live_drained, "on/off");
	if (!err)
		err = prog_stats(L->prog_fd, &b);
	if (!err)
		L->ab_packets += b.run_cnt - start.run_cnt;
	if (err)
		fprintf(stderr, "fs-livebench: the list's on/off alternation failed: %s.\n",
			strerror(-err));
	return err;
}

/* One program, one round: load, attach, the three phases, detach. */
static int live_measure(struct live *L, enum live_prog which,
			struct sample out[PH_MAX])
{
	const struct live_opts *o = L->o;
	struct stat_snap a;
	__u64 t0;
	int err;

	err = live_load(L, which);
	if (err) {
		fprintf(stderr, "fs-livebench: cannot load %s: %s.\n",
			live_prog_names[which], strerror(-err));
		goto out;
	}
	err = prog_stats(L->prog_fd, &L->at_attach);
	if (err)
		goto out;
	L->sent_at_attach = atomic_load(&L->g->sent);
	err = bpf_xdp_attach(L->ifindex, L->prog_fd, XDP_FLAGS_DRV_MODE, NULL);
	if (err) {
		fprintf(stderr, "fs-livebench: cannot attach %s (native XDP): %s.\n",
			live_prog_names[which], strerror(-err));
		goto out;
	}
	L->next_close_ns = now_ns() + (__u64)o->window_ms * 1000000ULL;
	err = stat_sum(L, FS_STAT_REPORTS, &L->reports_at_open);
	if (err)
		goto out;

	err = live_burst(L, &out[PH_FIRST], "first window");
	if (err)
		goto out;

	err = prog_stats(L->prog_fd, &a);
	if (err)
		goto out;
	t0 = now_ns();
	atomic_store(&L->g->budget, ~0ULL);
	atomic_store(&L->g->idle, 0);
	err = live_wait(L, t0 + (__u64)(o->steady_s * 1e9), NULL, "steady");
	atomic_store(&L->g->budget, atomic_load(&L->g->sent));
	if (!err)
		err = live_phase_end(L, &a, t0, &out[PH_STEADY], "steady");
	if (err)
		goto out;
	if ((which == LP_FULL_SMALL || which == LP_FULL_LIST) && o->ab_pairs) {
		err = live_ab(L, which == LP_FULL_LIST);
		if (err)
			goto out;
	}

	err = live_wait(L, now_ns() + (__u64)(o->quiet_s * 1e9), NULL, "quiet");
	if (!err)
		err = live_burst(L, &out[PH_QUIET], "after quiet");
	if (err)
		goto out;
	if (L->full) {
		__u64 d;

		/* Close the last window, so that its reports count too. */
		err = live_rotate(L);
		if (!err)
			err = stat_sum(L, FS_STAT_REPORTS_DROPPED, &d);
		if (!err)
			L->dropped += d;
	}
out:
	live_unload(L);
	return err;
}

/* ------------------------------------------------------------ report */

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return (x > y) - (x < y);
}

static const char *verdict(bool ok)
{
	return ok ? "met" : "MISSED";
}

/* num / den, and the same net of the empty program's cost (the
 * statistics' own overhead); the verdict is on the gross ratio, the
 * figures as the kernel reports them. */
static void print_ratio(const char *label, double num, double den,
			double base, double target, bool le)
{
	double r = den > 0 ? num / den : 0;
	double n = den - base > 0 ? (num - base) / (den - base) : 0;

	if (target > 0)
		printf("  %-32s %6.2fx (net of empty %6.2fx)   target %s %.1fx: %s\n",
		       label, r, n, le ? "<=" : ">=", target,
		       verdict(le ? r <= target : r >= target));
	else
		printf("  %-32s %6.2fx (net of empty %6.2fx)\n", label, r, n);
}

/*
 * live_ab()'s figures: per list, the median of the pairs' on/off ratios
 * (each pair its own baseline), with the smallest and largest, and the
 * medians of the on and off halves.  The blocklist target is on this
 * ratio: the same program with the list and with an empty one.
 */
static void ab_report(const struct live *L)
{
	static const char *const names[2] = { "full+small", "full+list" };
	const struct live_opts *o = L->o;
	int w;

	printf("  the list on and off in one program: fs_ctl.bloom switched every %.2f s, %u pairs a round\n"
	       "  (%llu packets); median of the pairs' ratios (min..max), and of each half's ns/pkt:\n",
	       o->ab_s, o->ab_pairs, (unsigned long long)L->ab_packets);
	for (w = 0; w < 2; w++) {
		__u32 n = L->nab[w], i;
		double ratio[LIVE_MAX_ROUNDS * LIVE_MAX_AB], on[LIVE_MAX_ROUNDS * LIVE_MAX_AB];
		double off[LIVE_MAX_ROUNDS * LIVE_MAX_AB], m;

		if (!n)
			continue;
		for (i = 0; i < n; i++) {
			ratio[i] = L->ab_off[w][i] > 0 ? L->ab_on[w][i] / L->ab_off[w][i] : 0;
			on[i] = L->ab_on[w][i];
			off[i] = L->ab_off[w][i];
		}
		m = median(ratio, n);	/* sorts ratio: [0] min, [n-1] max */
		printf("  %-10s on / off, steady %6.3fx (%.3f..%.3f over %u pairs; on %.1f, off %.1f ns)",
		       names[w], m, ratio[0], ratio[n - 1], n, median(on, n), median(off, n));
		if (w == 1)
			printf("   target <= 1.1x: %s", verdict(m <= 1.1));
		printf("\n");
	}
	printf("\n");
}

static void live_report(struct live *L, struct sample s[LP_MAX][PH_MAX][LIVE_MAX_ROUNDS],
			__u64 sent, double steady_seconds, __u64 steady_packets)
{
	const struct live_opts *o = L->o;
	double med[LP_MAX][PH_MAX];
	__u64 total = 0;
	int i, j;
	__u32 r;

	printf("Live datapath: native XDP on a veth pair (%s -> %s), kernel run-time statistics\n",
	       o->tx_netns, o->rx_netns);
	printf("(%u rounds, programs interleaved, each loaded afresh per round; median of rounds, min..max)\n",
	       o->rounds);
	printf("traffic: %u flows, Zipf %.2f, %.0f %% IPv6, 64..191-byte frames; phases: first %u packets after load,\n",
	       o->flows, o->zipf, 100 * o->ipv6_share, o->burst);
	printf("steady %.1f s, then %.1f s quiet and %u packets; full: %u ms windows closed the daemon's way, phi %g\n\n",
	       o->steady_s, o->quiet_s, o->burst, o->window_ms, o->hh_fraction);
	printf("  %-10s %-7s %9s %9s %9s %11s %9s\n", "program", "phase", "ns/pkt",
	       "min", "max", "packets", "kpps");
	for (i = 0; i < LP_MAX; i++) {
		for (j = 0; j < PH_MAX; j++) {
			double v[LIVE_MAX_ROUNDS], lo = 1e300, hi = 0, secs = 0;
			__u64 pk = 0;

			for (r = 0; r < o->rounds; r++) {
				v[r] = s[i][j][r].ns;
				lo = v[r] < lo ? v[r] : lo;
				hi = v[r] > hi ? v[r] : hi;
				pk += s[i][j][r].packets;
				secs += s[i][j][r].seconds;
			}
			med[i][j] = printed1(median(v, o->rounds));
			total += pk;
			printf("  %-10s %-7s %9.1f %9.1f %9.1f %11llu %9.1f\n",
			       live_prog_names[i], live_phase_names[j], med[i][j],
			       lo, hi, (unsigned long long)pk,
			       secs > 0 ? (double)pk / secs / 1e3 : 0.0);
		}
	}
	printf("\n  generator: %.0f packets/s in steady phases (%llu packets in %.1f s); "
	       "XDP ran on %llu of %llu packets sent\n",
	       steady_seconds > 0 ? (double)steady_packets / steady_seconds : 0.0,
	       (unsigned long long)steady_packets, steady_seconds,
	       (unsigned long long)(total + L->ab_packets), (unsigned long long)sent);
	printf("  (kpps: the phase's packets over its wall time, sender and XDP on one CPU)\n\n");

	printf("  ratios of the medians above:\n");
	print_ratio("full / parse-only, steady", med[LP_FULL][PH_STEADY],
		    med[LP_PARSE][PH_STEADY], med[LP_EMPTY][PH_STEADY], 2.0, true);
	print_ratio("naive / full, steady", med[LP_NAIVE][PH_STEADY],
		    med[LP_FULL][PH_STEADY], med[LP_EMPTY][PH_STEADY], 2.0, false);
	print_ratio("naive / full, first window", med[LP_NAIVE][PH_FIRST],
		    med[LP_FULL][PH_FIRST], med[LP_EMPTY][PH_FIRST], 1.6, false);
	print_ratio("naive / full, after quiet", med[LP_NAIVE][PH_QUIET],
		    med[LP_FULL][PH_QUIET], med[LP_EMPTY][PH_QUIET], 1.6, false);
	print_ratio("full+small / full, steady", med[LP_FULL_SMALL][PH_STEADY],
		    med[LP_FULL][PH_STEADY], med[LP_EMPTY][PH_STEADY], 0, false);
	print_ratio("full+list / full, steady", med[LP_FULL_LIST][PH_STEADY],
		    med[LP_FULL][PH_STEADY], med[LP_EMPTY][PH_STEADY], 0, false);
	print_ratio("full+list / full, first window", med[LP_FULL_LIST][PH_FIRST],
		    med[LP_FULL][PH_FIRST], med[LP_EMPTY][PH_FIRST], 0, false);
	print_ratio("full / parse-only, first window", med[LP_FULL][PH_FIRST],
		    med[LP_PARSE][PH_FIRST], med[LP_EMPTY][PH_FIRST], 0, false);
	print_ratio("full / parse-only, after quiet", med[LP_FULL][PH_QUIET],
		    med[LP_PARSE][PH_QUIET], med[LP_EMPTY][PH_QUIET], 0, false);
	print_ratio("floor / parse-only, steady", med[LP_FLOOR][PH_STEADY],
		    med[LP_PARSE][PH_STEADY], med[LP_EMPTY][PH_STEADY], 0, false);
	print_ratio("full / floor, steady", med[LP_FULL][PH_STEADY],
		    med[LP_FLOOR][PH_STEADY], med[LP_EMPTY][PH_STEADY], 0, false);
	printf("  %-34s %6.1f ns\n", "parse only - empty, steady",
	       med[LP_PARSE][PH_STEADY] - med[LP_EMPTY][PH_STEADY]);
	printf("  %-34s %6.1f ns for %u lines (%.1f ns a line)\n",
	       "floor - parse only, steady",
	       med[LP_FLOOR][PH_STEADY] - med[LP_PARSE][PH_STEADY],
	       L->p.cms_depth + 3,
	       (med[LP_FLOOR][PH_STEADY] - med[LP_PARSE][PH_STEADY]) / (L->p.cms_depth + 3));
	printf("  (empty: what the run-time statistics and the XDP call cost by themselves;\n"
	       "   full+small, full+list: the full program with a blocklist of %u and %u entries (%llu and\n"
	       "   %llu filter keys in 2^%u and 2^%u blocks, k %u and %u), none matching the traffic, so\n"
	       "   every packet probes every group its family has)\n\n",
	       L->small.n, L->list.n, (unsigned long long)L->small.keys,
	       (unsigned long long)L->list.keys, L->small.log2, L->list.log2,
	       L->small.k, L->list.k);

	if (o->ab_pairs)
		ab_report(L);

	if (L->nwin) {
		__u64 rep[L->nwin], pk[L->nwin];

		memcpy(rep, L->win_reports, sizeof(rep));
		memcpy(pk, L->win_packets, sizeof(pk));
		qsort(rep, L->nwin, sizeof(*rep), cmp_u64);
		qsort(pk, L->nwin, sizeof(*pk), cmp_u64);
		printf("  full, heavy-hitter reports per window of traffic: median %llu, min %llu, max %llu over %u windows\n",
		       (unsigned long long)rep[L->nwin / 2], (unsigned long long)rep[0],
		       (unsigned long long)rep[L->nwin - 1], L->nwin);
		printf("  (median %llu packets per window; 1/phi = %.0f; %llu reports dropped, ring buffer full)\n\n",
		       (unsigned long long)pk[L->nwin / 2], 1 / o->hh_fraction,
		       (unsigned long long)L->dropped);
	} else {
		printf("  full, heavy-hitter reports per window of traffic: no window saw traffic\n\n");
	}
}

/* ------------------------------------------------------------ options */

static void usage(FILE *out)
{
	fprintf(out,
		"usage: fs-livebench --rx-netns NS --rx-iface IF --tx-netns NS --tx-iface IF [options]\n"
		"  (scripts: bench/live.sh creates the namespaces and the veth pair)\n"
		"  --rounds R          rounds, programs interleaved (default 3, max %u)\n"
		"  --steady SECONDS    steady traffic per program and round (default 2)\n"
		"  --quiet SECONDS     quiet spell before the last burst (default 2)\n"
		"  --burst N           packets of the first and the after-quiet phase (default 50000)\n"
		"  --flows F           flows (default 100000)\n"
		"  --zipf S            Zipf exponent (default 1.1)\n"
		"  --ipv6-share F      fraction of IPv6 flows (default 0.3)\n"
		"  --seed X            traffic seed (default 1)\n"
		"  --window MS         the full program's window (default 1000, the daemon's)\n"
		"  --hh-fraction PHI   report fraction of the full program (default 0.001)\n"
		"  --depth D           Count-Min rows (default %u)\n"
		"  --blocklist N       entries of the full+list program's blocklist, none\n"
		"                      matching the traffic (default 100000)\n"
		"  --blocklist-small N the same for full+small (default 10000)\n"
		"  --ab-pairs N        on/off alternations of each list per round, 0 for\n"
		"                      none (default 10, max %u)\n"
		"  --ab-seconds S      seconds of each half of an alternation (default 0.25)\n",
		LIVE_MAX_ROUNDS, FS_DEFAULT_CMS_DEPTH, LIVE_MAX_AB);
}

static int parse_num(const char *s, const char *what, double lo, double hi,
		     double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !*s || !(v >= lo && v <= hi)) {
		fprintf(stderr, "fs-livebench: %s must be a number from %g to %g, not \"%s\".\n",
			what, lo, hi, s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int parse_args(int argc, char **argv, struct live_opts *o)
{
	static const struct option longopts[] = {
		{ "rx-netns", required_argument, NULL, 'R' },
		{ "rx-iface", required_argument, NULL, 'r' },
		{ "tx-netns", required_argument, NULL, 'T' },
		{ "tx-iface", required_argument, NULL, 't' },
		{ "rounds", required_argument, NULL, 'n' },
		{ "steady", required_argument, NULL, 's' },
		{ "quiet", required_argument, NULL, 'q' },
		{ "burst", required_argument, NULL, 'b' },
		{ "flows", required_argument, NULL, 'f' },
		{ "zipf", required_argument, NULL, 'z' },
		{ "ipv6-share", required_argument, NULL, '6' },
		{ "seed", required_argument, NULL, 'S' },
		{ "window", required_argument, NULL, 'w' },
		{ "hh-fraction", required_argument, NULL, 'p' },
		{ "depth", required_argument, NULL, 'd' },
		{ "blocklist", required_argument, NULL, 'B' },
		{ "blocklist-small", required_argument, NULL, 'b' + 256 },
		{ "ab-pairs", required_argument, NULL, 'a' + 256 },
		{ "ab-seconds", required_argument, NULL, 'A' + 256 },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	double v;
	int c, err = 0;

	opterr = 0;
	while (!err && (c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'R': o->rx_netns = optarg; break;
		case 'r': o->rx_iface = optarg; break;
		case 'T': o->tx_netns = optarg; break;
		case 't': o->tx_iface = optarg; break;
		case 'n':
			err = parse_num(optarg, "--rounds", 1, LIVE_MAX_ROUNDS, &v);
			o->rounds = (__u32)v;
			if (!err && v != o->rounds)
				err = parse_num("x", "--rounds", 1, LIVE_MAX_ROUNDS, &v);
			break;
		case 's': err = parse_num(optarg, "--steady", 0.01, 600, &o->steady_s); break;
		case 'q': err = parse_num(optarg, "--quiet", 0, 600, &o->quiet_s); break;
		case 'b':
			err = parse_num(optarg, "--burst", 1, 1e9, &v);
			o->burst = (__u32)v;
			break;
		case 'f':
			err = parse_num(optarg, "--flows", 1, 1e6, &v);
			o->flows = (__u32)v;
			break;
		case 'z': err = parse_num(optarg, "--zipf", 0, 10, &o->zipf); break;
		case '6': err = parse_num(optarg, "--ipv6-share", 0, 1, &o->ipv6_share); break;
		case 'S':
			err = parse_num(optarg, "--seed", 0, 1e18, &v);
			o->seed = (__u64)v;
			break;
		case 'w':
			err = parse_num(optarg, "--window", 10, 3600000, &v);
			o->window_ms = (__u32)v;
			break;
		case 'p':
			err = parse_num(optarg, "--hh-fraction", 1e-9, 1, &o->hh_fraction);
			break;
		case 'B':
			err = parse_num(optarg, "--blocklist", 0, 1e6, &v);
			o->blocklist = (__u32)v;
			break;
		case 'b' + 256:
			err = parse_num(optarg, "--blocklist-small", 0, 1e6, &v);
			o->blocklist_small = (__u32)v;
			break;
		case 'a' + 256:
			err = parse_num(optarg, "--ab-pairs", 0, LIVE_MAX_AB, &v);
			o->ab_pairs = (__u32)v;
			break;
		case 'A' + 256:
			err = parse_num(optarg, "--ab-seconds", 0.01, 10, &v);
			o->ab_s = v;
			break;
		case 'd':
			err = parse_num(optarg, "--depth", 1, FS_CMS_MAX_DEPTH, &v);
			o->depth = (__u32)v;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			fprintf(stderr, "fs-livebench: '%s' is not an option or lacks its value (see --help)\n",
				argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (err)
		return err;
	if (optind < argc) {
		fprintf(stderr, "fs-livebench: unexpected argument \"%s\".\n", argv[optind]);
		return -EINVAL;
	}
	if (!o->rx_netns || !o->rx_iface || !o->tx_netns || !o->tx_iface) {
		fprintf(stderr, "fs-livebench: --rx-netns, --rx-iface, --tx-netns and --tx-iface are required.\n");
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct sample samples[LP_MAX][PH_MAX][LIVE_MAX_ROUNDS];
	struct live_opts o = {
		.rounds = 3, .steady_s = 2, .quiet_s = 2, .burst = 50000,
		.flows = 100000, .zipf = 1.1, .ipv6_share = 0.3, .seed = 1,
		.window_ms = 1000, .hh_fraction = 0.001,
		.depth = FS_DEFAULT_CMS_DEPTH, .blocklist = 100000,
		.blocklist_small = 10000, .ab_pairs = 10, .ab_s = 0.25,
	};
	struct sock_req q = { .fd = -1 };
	static struct gen g;
	struct live L = { .o = &o, .g = &g };
	double steady_s = 0;
	__u64 steady_pk = 0;
	pthread_t t;
	int stats_fd = -1, err, ncpu_online, rc = 1;
	__u32 r;
	int i;

	if (parse_args(argc, argv, &o))
		return 2;
	if (bb_make(o.blocklist, &L.list) || bb_make(o.blocklist_small, &L.small)) {
		fprintf(stderr, "fs-livebench: cannot make blocklists of %u and %u entries.\n",
			o.blocklist, o.blocklist_small);
		return 1;
	}
	err = enter_netns(o.rx_netns);
	if (err) {
		fprintf(stderr, "fs-livebench: cannot enter netns %s: %s.\n",
			o.rx_netns, strerror(-err));
		return 1;
	}
	L.ifindex = (int)if_nametoindex(o.rx_iface);
	if (!L.ifindex) {
		fprintf(stderr, "fs-livebench: no interface %s in netns %s.\n",
			o.rx_iface, o.rx_netns);
		return 1;
	}
	L.ncpus = libbpf_num_possible_cpus();
	if (L.ncpus <= 0)
		return 1;
	L.value = calloc((size_t)L.ncpus, sizeof(struct fs_cms_chunk));
	q.netns = o.tx_netns;
	q.ifname = o.tx_iface;
	if (!L.value || pthread_create(&t, NULL, open_sock_main, &q) ||
	    pthread_join(t, NULL) || q.err) {
		fprintf(stderr, "fs-livebench: cannot open a packet socket on %s in %s: %s.\n",
			o.tx_iface, o.tx_netns, strerror(q.err ? -q.err : ENOMEM));
		return 1;
	}
	g.fd = q.fd;
	memcpy(g.src_mac, q.mac, ETH_ALEN);
	{
		int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		err = s < 0 ? -errno : iface_mac(s, o.rx_iface, g.dst_mac);
		if (s >= 0)
			close(s);
		if (err) {
			fprintf(stderr, "fs-livebench: cannot read %s's MAC: %s.\n",
				o.rx_iface, strerror(-err));
			return 1;
		}
	}
	g.flows = o.flows;
	g.zipf = o.zipf;
	g.ipv6_share = o.ipv6_share;
	g.seed = o.seed;
	if (gen_prepare(&g)) {
		fprintf(stderr, "fs-livebench: out of memory for the frames.\n");
		return 1;
	}
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0) {
		fprintf(stderr, "fs-livebench: cannot enable BPF run-time statistics: %s.\n",
			strerror(errno));
		return 1;
	}
	ncpu_online = (int)sysconf(_SC_NPROCESSORS_ONLN);
	g.cpu = ncpu_online > 1 ? ncpu_online - 1 : -1;
	if (ncpu_online > 1)
		pin_to(0);
	if (pthread_create(&g.thread, NULL, gen_main, &g)) {
		fprintf(stderr, "fs-livebench: cannot start the generator.\n");
		return 1;
	}

	for (r = 0; r < o.rounds; r++) {
		for (i = 0; i < LP_MAX; i++) {
			/* Interleaved, and the order turns every round so no
			 * program always follows the same one. */
			int k = (int)((i + r) % LP_MAX), ph;
			struct sample one[PH_MAX];

			err = live_measure(&L, (enum live_prog)k, one);
			if (err)
				goto out;
			for (ph = 0; ph < PH_MAX; ph++)
				samples[k][ph][r] = one[ph];
		}
	}
	rc = 0;
out:
	atomic_store(&g.stop, 1);
	pthread_join(g.thread, NULL);
	if (!rc) {
		for (i = 0; i < LP_MAX; i++)
			for (r = 0; r < o.rounds; r++) {
				steady_s += samples[i][PH_STEADY][r].seconds;
				steady_pk += samples[i][PH_STEADY][r].packets;
			}
		live_report(&L, samples, atomic_load(&g.sent), steady_s, steady_pk);
	}
	close(stats_fd);
	close(g.fd);
	free(L.win_reports);
	free(L.win_packets);
	return rc;
}
