// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_rotation.c - a failed rotation loses that window only.
 *
 * The real datapath (bpf/flowsketch.bpf.c) is loaded and run on frames
 * through BPF_PROG_TEST_RUN; the daemon's own rotation, history and report
 * code (user/flowsketchd/windows/rotation.c, history.c, reports.c) closes its
 * windows, as daemon.c sets them up.  Faults are injected through the
 * rotation's map-access pointers (rotation.h): the barrier, a read or a
 * zeroing of one map fails, on the rotation that closes window 1 or on the
 * one after it (the dirty-slot cleaning, which postpones the rotation).
 * The totals (fs_hot) are read, never zeroed: a failed read loses the
 * window, and an armed update of fs_hot must never be reached.
 *
 * Ground truth is what the test sent: each window gets its own flows, so
 * anything of one window found in another is a leak.  Every window the
 * history holds must have exactly the packets, bytes, flows and
 * candidates sent in it; the lost window must be counted (windows_lost)
 * and absent; and the windows that reuse the lost window's slot (seq 3)
 * and the other slot (seq 2, 4) must be exact.  Every report the datapath
 * put in the ring buffer must be received and accounted for.
 *
 * The legacy byte registers (fs_hll, sketch_kind.h "Legacy maps"): on a
 * datapath made as the daemon makes it afresh (rig_setup_fresh) not one
 * access of fs_hll is tried, and a marker in it is neither folded nor
 * zeroed; whole, as an adopted earlier release's, what is written in it
 * is folded exactly (register-wise max over CPUs) and zeroed.  Each fails
 * under the mutant that decides the other way.
 */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "flowsketch/hash.h"
#include "flowsketch/maps.h"
#include "datapath_setup.h"
#include "windows/history.h"
#include "frontends/loader.h"
#include "windows/reports.h"
#include "windows/rotation.h"
#include "flowsketch.skel.h"	/* after rotation.h: needs params.h's types */
#include "pkt_build.h"

#define XDP_PASS_RET 2
#define NFLOWS 12		/* flows per batch */
#define NBATCH 8		/* batches of traffic a test may send */
#define NSEQ 8			/* windows a test may reach */
#define KEEP 8			/* windows the history keeps */
/* A report fraction so small that every flow's first packet reports
 * (threshold max(1, phi * N) = 1): each flow becomes a candidate. */
#define HH_FRACTION 1e-9

static const struct fs_sketch_params params = {
	.magic = FS_PARAMS_MAGIC,
	.version = FS_PARAMS_VERSION,
	.cms_depth = 4,
	/* Two CMS chunks per slot, so a zeroing can fail half-way. */
	.cms_log2_width = 10,
	.hll_p = 12,
	.nslots = FS_NSLOTS,
	.secret = { 0x452821e638d01377ULL, 0xbe5466cf34e90c6cULL },
};

/* --- fault injection ------------------------------------------------- */

enum fault_op { FAULT_NONE, FAULT_LOOKUP, FAULT_UPDATE };

/* The next `count` calls of op on fd, after `skip` of them, fail. */
static struct {
	enum fault_op op;
	int fd;
	int skip;
	int count;
	int hits;			/* calls failed */
} fault;

static void fault_arm(enum fault_op op, int fd, int skip, int count)
{
	fault.op = op;
	fault.fd = fd;
	fault.skip = skip;
	fault.count = count;
	fault.hits = 0;
}

static int fault_hit(enum fault_op op, int fd)
{
	if (fault.op != op || fault.fd != fd || fault.count <= 0)
		return 0;
	if (fault.skip > 0) {
		fault.skip--;
		return 0;
	}
	fault.count--;
	fault.hits++;
	return 1;
}

/* As libbpf's: -errno returned and errno set. */
static int fault_lookup(int fd, const void *key, void *value)
{
	if (fault_hit(FAULT_LOOKUP, fd)) {
		errno = EIO;
		return -EIO;
	}
	return bpf_map_lookup_elem(fd, key, value);
}

static int fault_update(int fd, const void *key, const void *value,
			__u64 flags)
{
	if (fault_hit(FAULT_UPDATE, fd)) {
		errno = ENOMEM;
		return -ENOMEM;
	}
	return bpf_map_update_elem(fd, key, value, flags);
}

/*
 * A fault case (main's FAULT_TEST rows): a scenario below run with the
 * fault it arms, op on a datapath map (FS_DP_*, ON_BARRIER or
 * ON_HOT) after skip calls, count times; drain as the scenario says.
 */
#define ON_BARRIER (-1)
#define ON_HOT (-2)

struct rig;

struct fault_case {
	void (*scenario)(struct rig *g, const struct fault_case *c, int fd);
	enum fault_op op;
	int map, skip, count, drain;
};

/* --- the rig: datapath, rotation, history, ground truth --------------- */

struct flow {
	struct fs_flow_key key;
	__u64 hash;
	__u64 packets, bytes;
};

/* What was sent in one window. */
struct truth {
	struct flow flows[2 * NFLOWS];	/* a postponed window gets 2 batches */
	unsigned int nflows;
	__u64 packets, bytes;
};

/* The CPUs the test may run on, taken once in main(): each test moves
 * itself between them and puts this back when done. */
static cpu_set_t allowed;

struct rig {
	struct flowsketch *skel;
	struct fsd_loader loader;
	struct fsd_history h;
	struct fsd_rotation r;
	struct ring_buffer *rb;
	struct fsd_reports reports;
	struct fs_hash_key hkey;
	size_t ctl_len;
	void *percpu;
	struct truth truth[NSEQ];	/* by window seq */
	struct flow batch[NBATCH][NFLOWS];
	int cpus[2], ncpus_run;		/* CPUs packets alternate on */
	__u64 stray_expected;		/* reports of no pending window */
	__u64 flows_filed;		/* flows whose reports were filed */
	const struct fault_case *fault_case;	/* the test's, or NULL */
};

/* The rotation's maps, as frontend.c hands them over for the XDP object
 * (fsd_object_rotation_maps()), from the rig's skeleton. */
static int rotation_init(struct rig *g, const struct fs_sketch_params *p)
{
	struct fsd_rotation_maps m = {
		.ctl = g->loader.obj.ctl,
		.hot_fd = bpf_map__fd(g->skel->maps.fs_hot),
		.barrier_fd = bpf_map__fd(g->skel->maps.fs_barrier),
		.barrier_inner_fd = bpf_map__fd(g->skel->maps.fs_barrier_inner),
		.ncpus = g->loader.obj.ncpus,
		.adopted = g->loader.obj.adopted,
	};
	int k;

	for (k = 0; k < FS_NDPMAPS; k++)
		m.sketch_fd[k] = bpf_object__find_map_fd_by_name(g->skel->obj,
								 fs_dp_maps[k].map);
	return fsd_rotation_init_maps(&g->r, &m, p, HH_FRACTION);
}

/* rig_setup_fresh(): the daemon's fresh datapath (object.c). */
static bool rig_fresh;

static int rig_setup(void **state)
{
	struct rig *g = calloc(1, sizeof(*g));
	int ncpus = libbpf_num_possible_cpus();
	struct fs_sketch_params p = params;
	unsigned int b, f;

	assert_non_null(g);
	assert_true(ncpus > 0);
	g->fault_case = *state;
	g->percpu = calloc((size_t)ncpus, sizeof(__u64));
	assert_non_null(g->percpu);
	g->skel = flowsketch__open();
	assert_non_null(g->skel);
	assert_int_equal(FS_DATAPATH_SETUP(g->skel, &p, false), 0);
	/* As the daemon loads a datapath afresh: fs_hll at one element.
	 * Without, the maps are whole, as on an adopted earlier release's
	 * datapath. */
	if (rig_fresh)
		assert_int_equal(fs_datapath_fresh_legacy(g->skel->obj), 0);
	assert_int_equal(flowsketch__load(g->skel), 0);
	/* What fsd_loader_load() leaves for the rotation: the skeleton, the
	 * CPU count, fs_ctl mapped. */
	g->ctl_len = (size_t)sysconf(_SC_PAGESIZE);
	g->loader.skel = g->skel;
	g->loader.obj.ncpus = (unsigned int)ncpus;
	g->loader.obj.ctl = mmap(NULL, g->ctl_len, PROT_READ | PROT_WRITE,
			     MAP_SHARED, bpf_map__fd(g->skel->maps.fs_ctl), 0);
	assert_true(g->loader.obj.ctl != MAP_FAILED);
	/* The order of daemon.c's setup(). */
	assert_int_equal(fsd_history_init(&g->h, &p, KEEP, 1024,
					  g->loader.obj.ctl->window_seq), 0);
	assert_int_equal(rotation_init(g, &p), 0);
	g->rb = fsd_reports_open(&g->reports, bpf_map__fd(g->skel->maps.fs_reports), &g->h);
	assert_non_null(g->rb);
	g->r.map_lookup = fault_lookup;
	g->r.map_update = fault_update;
	fault_arm(FAULT_NONE, -1, 0, 0);

	/* Each flow's packets alternate between two CPUs, when there are
	 * two: a flow then reports on both, and the second report is a
	 * duplicate to account for, as on a live multi-queue link. */
	{
		int c;

		for (c = 0; c < CPU_SETSIZE && g->ncpus_run < 2; c++)
			if (CPU_ISSET(c, &allowed))
				g->cpus[g->ncpus_run++] = c;
	}
	fs_hash_key_derive(&p.secret, &g->hkey);
	/* Batch b: flows 10.b.0.f:(2000 + 32 b + f) -> 192.0.2.1:53, flow f
	 * sending 1 + f % 4 packets of 64 + 8 f + b bytes. */
	for (b = 0; b < NBATCH; b++)
		for (f = 0; f < NFLOWS; f++) {
			struct flow *fl = &g->batch[b][f];

			fl->key.family = FS_FAMILY_IPV4;
			fl->key.proto = 17;
			fl->key.sport = htons((__u16)(2000 + 32 * b + f));
			fl->key.dport = htons(53);
			fl->key.src[0] = 10;
			fl->key.src[1] = (__u8)b;
			fl->key.src[3] = (__u8)f;
			fl->key.dst[0] = 192;
			fl->key.dst[2] = 2;
			fl->key.dst[3] = 1;
			fl->hash = fs_flow_hash(&fl->key, &g->hkey);
			fl->packets = 1 + f % 4;
			fl->bytes = fl->packets * (64 + 8 * f + b);
		}
	*state = g;
	return 0;
}

static int rig_setup_fresh(void **state)
{
	int err;

	rig_fresh = true;
	err = rig_setup(state);
	rig_fresh = false;
	return err;
}

static int rig_teardown(void **state)
{
	struct rig *g = *state;

	sched_setaffinity(0, sizeof(allowed), &allowed);
	ring_buffer__free(g->rb);
	fsd_rotation_free(&g->r);
	fsd_history_free(&g->h);
	munmap(g->loader.obj.ctl, g->ctl_len);
	flowsketch__destroy(g->skel);
	free(g->percpu);
	free(g);
	return 0;
}

/* Run the datapath once on a frame of flow fl, len bytes long. */
static void run_frame(struct rig *g, const struct flow *fl, size_t len)
{
	struct pkt p;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .repeat = 1);
	size_t hdr = 14 + 20 + 8;

	pkt_init(&p);
	pkt_eth(&p, PKT_ETH_P_IP);
	pkt_ipv4(&p, 17, fl->key.src, fl->key.dst, 5, 0);
	pkt_udp(&p, ntohs(fl->key.sport), ntohs(fl->key.dport));
	assert_true(len >= hdr);
	pkt_payload(&p, len - hdr);
	pkt_finish(&p);
	opts.data_in = p.data;
	opts.data_size_in = (__u32)p.len;
	assert_int_equal(bpf_prog_test_run_opts(
			bpf_program__fd(g->skel->progs.fs_xdp), &opts), 0);
	assert_int_equal(opts.retval, XDP_PASS_RET);
}

static __u64 stat(struct rig *g, enum fs_stat which)
{
	__u64 *v = g->percpu, sum = 0;
	__u32 k = which;
	unsigned int c;

	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(g->skel->maps.fs_stats),
					     &k, v), 0);
	for (c = 0; c < g->loader.obj.ncpus; c++)
		sum += v[c];
	return sum;
}

/*
 * Send batch b into the window the datapath writes now, and write it down
 * as that window's truth.  drain: take the reports as the event loop would
 * while the window is open; without, they wait in the ring buffer for the
 * rotation's drain.  Returns the reports the batch raised.
 */
static __u64 send_batch(struct rig *g, unsigned int b, int drain)
{
	__u64 seq = __atomic_load_n(&g->loader.obj.ctl->window_seq,
				    __ATOMIC_ACQUIRE);
	__u64 before = stat(g, FS_STAT_REPORTS);
	struct truth *t;
	unsigned int f, i;

	assert_true(seq < NSEQ && b < NBATCH);
	t = &g->truth[seq];
	for (f = 0; f < NFLOWS; f++) {
		const struct flow *fl = &g->batch[b][f];

		for (i = 0; i < fl->packets; i++) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET(g->cpus[i % g->ncpus_run], &set);
			assert_int_equal(sched_setaffinity(0, sizeof(set), &set), 0);
			run_frame(g, fl, fl->bytes / fl->packets);
		}
		assert_true(t->nflows < FS_ARRAY_SIZE(t->flows));
		t->flows[t->nflows++] = *fl;
		t->packets += fl->packets;
		t->bytes += fl->bytes;
	}
	g->flows_filed += NFLOWS;
	if (drain)
		assert_true(ring_buffer__consume(g->rb) >= 0);
	return stat(g, FS_STAT_REPORTS) - before;
}

static void rotate_ok(struct rig *g)
{
	assert_int_equal(fsd_rotate(&g->r, &g->h, g->rb), 0);
}

/* Batch b as a whole window: sent (send_batch()), then rotated. */
static void send_rotate(struct rig *g, unsigned int b, int drain)
{
	send_batch(g, b, drain);
	rotate_ok(g);
}

/* Rotate with the armed fault: it must fail, and the fault must have been
 * reached (else the test tests nothing). */
static int rotate_failing(struct rig *g)
{
	int err = fsd_rotate(&g->r, &g->h, g->rb);

	assert_true(fault.hits > 0);
	fault_arm(FAULT_NONE, -1, 0, 0);
	assert_true(err < 0);
	return err;
}

static const struct fsd_window *window_of_seq(struct rig *g, __u64 seq)
{
	const struct fsd_window *w;
	__u32 i;

	for (i = 0; (w = fsd_history_window(&g->h, i)); i++)
		if (w->seq == seq)
			return w;
	return NULL;
}

static int has_candidate(const struct fsd_window *w,
			 const struct fs_flow_key *key)
{
	__u32 j;

	for (j = 0; j < w->candidates.capacity; j++)
		if (fsd_candidate_used(&w->candidates.slots[j]) &&
		    !memcmp(&w->candidates.slots[j].key, key, sizeof(*key)))
			return 1;
	return 0;
}

/*
 * Window seq is in the history with exactly what was sent in it: totals,
 * each flow's packets and bytes (the sketch is wide enough for a dozen
 * flows to have a cell of their own in some row, so estimates are exact),
 * every flow sent in another window absent from its sketch, its distinct
 * flows, and its candidates exactly its flows.
 */
static void assert_window_exact(struct rig *g, __u64 seq)
{
	const struct fsd_window *w = window_of_seq(g, seq);
	const struct truth *t = &g->truth[seq];
	double distinct;
	unsigned int i, b, f;

	if (!w)
		fail_msg("window %llu is not in the history",
			 (unsigned long long)seq);
	if (w->sketch.totals.packets != t->packets ||
	    w->sketch.totals.bytes != t->bytes)
		fail_msg("window %llu: %llu packets %llu bytes, sent %llu %llu",
			 (unsigned long long)seq,
			 (unsigned long long)w->sketch.totals.packets,
			 (unsigned long long)w->sketch.totals.bytes,
			 (unsigned long long)t->packets,
			 (unsigned long long)t->bytes);
	for (i = 0; i < t->nflows; i++) {
		struct fs_cms_cell est;

		fs_sketch_query(&w->sketch, t->flows[i].hash, &est);
		if (est.packets != t->flows[i].packets ||
		    est.bytes != t->flows[i].bytes)
			fail_msg("window %llu flow %u: estimate %llu/%llu, sent %llu/%llu",
				 (unsigned long long)seq, i,
				 (unsigned long long)est.packets,
				 (unsigned long long)est.bytes,
				 (unsigned long long)t->flows[i].packets,
				 (unsigned long long)t->flows[i].bytes);
		if (!has_candidate(w, &t->flows[i].key))
			fail_msg("window %llu: flow %u is no candidate",
				 (unsigned long long)seq, i);
	}
	if (w->candidates.count != t->nflows)
		fail_msg("window %llu: %u candidates, %u flows sent",
			 (unsigned long long)seq, w->candidates.count, t->nflows);
	/* Flows of other windows: nothing of them here. */
	for (b = 0; b < NBATCH; b++)
		for (f = 0; f < NFLOWS; f++) {
			const struct flow *fl = &g->batch[b][f];
			struct fs_cms_cell est;
			int mine = 0;

			for (i = 0; i < t->nflows; i++)
				mine |= t->flows[i].hash == fl->hash;
			if (mine)
				continue;
			fs_sketch_query(&w->sketch, fl->hash, &est);
			if (est.packets || est.bytes)
				fail_msg("window %llu holds %llu packets of batch %u flow %u, sent in another window",
					 (unsigned long long)seq,
					 (unsigned long long)est.packets, b, f);
		}
	/* A dozen flows in 4096 registers: linear counting is within a
	 * fraction of a flow unless two share a register; a leaked batch
	 * would add a dozen. */
	distinct = fs_sketch_distinct(&w->sketch, FS_HLL_FLOWS);
	if (fabs(distinct - t->nflows) > 1.5)
		fail_msg("window %llu: %.2f distinct flows, sent %u",
			 (unsigned long long)seq, distinct, t->nflows);
}

/*
 * The history holds exactly the windows `kept` (and no other), each exact;
 * its running totals are their sum; `lost` windows were counted lost.
 */
static void assert_history(struct rig *g, const __u64 *kept, unsigned int n,
			   __u64 lost, __u64 postponed)
{
	struct fs_window_totals sum = { 0 };
	const struct fsd_window *w;
	unsigned int i, j;

	assert_int_equal(g->h.count, n);
	for (i = 0; (w = fsd_history_window(&g->h, i)); i++) {
		int expected = 0;

		for (j = 0; j < n; j++)
			expected |= kept[j] == w->seq;
		if (!expected)
			fail_msg("window %llu is in the history but was lost",
				 (unsigned long long)w->seq);
	}
	for (j = 0; j < n; j++) {
		assert_window_exact(g, kept[j]);
		sum.packets += g->truth[kept[j]].packets;
		sum.bytes += g->truth[kept[j]].bytes;
	}
	assert_int_equal(g->h.totals.packets, sum.packets);
	assert_int_equal(g->h.totals.bytes, sum.bytes);
	assert_int_equal(g->r.errors, lost);
	assert_int_equal(g->h.windows_dropped, lost);
	assert_int_equal(g->r.postponed, postponed);
}

/* Every report the datapath put in the ring buffer was received and went
 * to exactly one outcome; none was dropped (the ring is large enough). */
static void assert_reports_accounted(struct rig *g)
{
	const struct fsd_report_counts *c = &g->reports.counts;

	assert_true(ring_buffer__consume(g->rb) >= 0);
	assert_int_equal(stat(g, FS_STAT_REPORTS_DROPPED), 0);
	assert_true(stat(g, FS_STAT_REPORTS) > 0);
	assert_int_equal(c->received, stat(g, FS_STAT_REPORTS));
	assert_int_equal(c->received, c->filed + c->duplicates + c->stray +
				      c->refused + c->malformed + c->failed);
	assert_int_equal(c->refused + c->malformed + c->failed, 0);
	assert_int_equal(c->stray, g->stray_expected);
	assert_int_equal(c->stray, g->h.stray_reports);
	/* One new candidate per flow and window: the flows whose reports
	 * reached a pending window. */
	assert_int_equal(c->filed, g->flows_filed);
	if (g->ncpus_run > 1)
		assert_true(c->duplicates > 0);
}

/* --- the tests -------------------------------------------------------- */

/* No fault: the harness itself, five exact windows. */
static void test_no_fault(void **state)
{
	static const __u64 kept[] = { 0, 1, 2, 3, 4 };
	struct rig *g = *state;
	unsigned int b;

	for (b = 0; b < 5; b++)
		send_rotate(g, b, b % 2);
	assert_history(g, kept, 5, 0, 0);
	assert_reports_accounted(g);
}

/*
 * Window 1 is lost on its rotation, by the fault armed; windows 0, 2, 3
 * (the lost one's slot again) and 4 must be exact.
 */
static void lose_window_1(struct rig *g, const struct fault_case *c, int fd)
{
	static const __u64 kept[] = { 0, 2, 3, 4 };
	__u64 raised;

	send_rotate(g, 0, 1);
	raised = send_batch(g, 1, c->drain);
	fault_arm(c->op, fd, c->skip, c->count);
	rotate_failing(g);
	/* The datapath moved on all the same: window 2, the other slot. */
	assert_int_equal(g->loader.obj.ctl->window_seq, 2);
	assert_int_equal(g->r.errors, 1);
	assert_null(window_of_seq(g, 1));
	/* Reports still in the ring buffer when window 1 was given up are
	 * of no pending window when they are drained. */
	if (!c->drain && fd == g->r.barrier_fd) {
		g->stray_expected = raised;
		g->flows_filed -= NFLOWS;
	}
	send_rotate(g, 2, 1);
	send_rotate(g, 3, 1);
	send_rotate(g, 4, 0);
	assert_history(g, kept, 4, 1, 0);
	assert_reports_accounted(g);
}

/* A barrier that fails fewer times than it is tried loses nothing. */
static void test_barrier_retried(void **state)
{
	static const __u64 kept[] = { 0, 1, 2 };
	struct rig *g = *state;

	send_rotate(g, 0, 1);
	send_batch(g, 1, 1);
	fault_arm(FAULT_UPDATE, g->r.barrier_fd, 0, FSD_BARRIER_TRIES - 1);
	rotate_ok(g);
	assert_int_equal(fault.hits, FSD_BARRIER_TRIES - 1);
	send_rotate(g, 2, 1);
	assert_history(g, kept, 3, 0, 0);
	assert_reports_accounted(g);
}

/*
 * Zeroing window 1's slot fails after the window was read and stored:
 * the window is kept, whole, and its slot is cleaned before the datapath
 * comes back to it (window 3), so 0 .. 4 are all exact and none is lost.
 */
static void zero_fails_window_1(struct rig *g, const struct fault_case *c,
				int fd)
{
	static const __u64 kept[] = { 0, 1, 2, 3, 4 };
	__u64 b;

	send_rotate(g, 0, 1);
	send_batch(g, 1, 1);
	fault_arm(c->op, fd, c->skip, c->count);
	rotate_ok(g);
	assert_true(g->r.dirty);
	assert_non_null(window_of_seq(g, 1));
	for (b = 2; b < 5; b++)
		send_rotate(g, b, b < 4);
	assert_false(g->r.dirty);
	assert_history(g, kept, 5, 0, 0);
	assert_reports_accounted(g);
}

/*
 * The rotation never writes fs_hot (maps.h, "Totals reset by epoch"): a
 * write would lose the datapath's concurrent increments of the counters
 * in the same per-CPU line.  Every update of it is armed to fail, and five
 * windows must still be exact, with not one update tried.
 */
static void test_hot_never_written(void **state)
{
	static const __u64 kept[] = { 0, 1, 2, 3, 4 };
	struct rig *g = *state;
	unsigned int b;

	fault_arm(FAULT_UPDATE, g->r.hot_fd, 0, 1 << 30);
	for (b = 0; b < 5; b++)
		send_rotate(g, b, b % 2);
	assert_int_equal(fault.hits, 0);
	fault_arm(FAULT_NONE, -1, 0, 0);
	assert_history(g, kept, 5, 0, 0);
	assert_reports_accounted(g);
}

/*
 * A CPU that has no packet in a window keeps the totals of an earlier
 * window of that slot, tagged with that window: they must count nothing
 * for this one.  Windows 0 and 1 on both CPUs, 2 on the first only (the
 * second still holds window 0's totals in slot 0), 3 on the second only
 * (the first holds window 1's in slot 1), 4 on both again.
 */
static void test_idle_cpu_window(void **state)
{
	static const __u64 kept[] = { 0, 1, 2, 3, 4 };
	struct rig *g = *state;
	int c0 = g->cpus[0], c1 = g->cpus[1];

	if (g->ncpus_run < 2)
		skip();
	send_rotate(g, 0, 1);
	send_rotate(g, 1, 1);
	g->ncpus_run = 1;
	send_rotate(g, 2, 1);
	g->cpus[0] = c1;
	send_rotate(g, 3, 1);
	g->cpus[0] = c0;
	g->ncpus_run = 2;
	send_rotate(g, 4, 1);
	assert_history(g, kept, 5, 0, 0);
	assert_reports_accounted(g);
}

/* --- the legacy byte registers (sketch_kind.h, "Legacy maps") ------- */

/* fs_hll's element `chunk` on every CPU: byte b of CPU c's copy is
 * bytes[c * FS_CHUNK_BYTES + b]. */
static void hll_chunk_write(struct rig *g, __u32 chunk, const __u8 *bytes)
{
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(g->skel->maps.fs_hll),
					     &chunk, bytes, BPF_EXIST), 0);
}

static void hll_chunk_read(struct rig *g, __u32 chunk, __u8 *bytes)
{
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(g->skel->maps.fs_hll),
					     &chunk, bytes), 0);
}

/*
 * A fresh datapath's fs_hll (one element, nothing writes it) is never
 * read, folded nor zeroed: every lookup and update of it is armed to
 * fail and not one is tried; five windows exact (their distinct flows
 * from the packed registers alone, so a fold of the marker below, ranks
 * of 42 in every register of CPU 0, would show); the marker is still
 * there after them.
 */
static void test_fresh_legacy_untouched(void **state)
{
	static const __u64 kept[] = { 0, 1, 2, 3, 4 };
	struct rig *g = *state;
	int fd = bpf_map__fd(g->skel->maps.fs_hll);
	size_t n = (size_t)g->loader.obj.ncpus * FS_CHUNK_BYTES;
	__u8 *mark = calloc(1, n), *now = calloc(1, n);
	unsigned int b, op;

	assert_non_null(mark);
	assert_non_null(now);
	assert_int_equal(bpf_map__max_entries(g->skel->maps.fs_hll), FS_DP_LEGACY_CHUNKS);
	assert_false(g->r.folded[FS_DP_HLL]);
	assert_true(g->r.folded[FS_DP_HLL_PACKED]);
	memset(mark, 42, FS_CHUNK_BYTES);
	hll_chunk_write(g, 0, mark);
	for (b = 0; b < 5; b++) {
		/* Lookups on even windows, updates on odd ones. */
		op = b % 2 ? FAULT_UPDATE : FAULT_LOOKUP;
		fault_arm(op, fd, 0, 1 << 30);
		send_rotate(g, b, b % 2);
		assert_int_equal(fault.hits, 0);
	}
	fault_arm(FAULT_NONE, -1, 0, 0);
	assert_history(g, kept, 5, 0, 0);
	assert_reports_accounted(g);
	hll_chunk_read(g, 0, now);
	assert_memory_equal(now, mark, n);
	free(mark);
	free(now);
}

/*
 * An earlier release's datapath, adopted, writes fs_hll, whole: it is
 * read, folded and zeroed as before.  Window 1 gets no packet here, only
 * byte registers written as that datapath would, in slot 1 on two CPUs;
 * its sketch must hold exactly their register-wise max (and nothing where
 * none was written), and window 3, slot 1 again, must be exact: the
 * registers were zeroed.
 */
static void test_whole_legacy_folded(void **state)
{
	struct rig *g = *state;
	struct fs_sketch_params p = params;
	size_t n = (size_t)g->loader.obj.ncpus * FS_CHUNK_BYTES;
	__u64 regs = 3ULL << p.hll_p, first = fs_hll_register_number(&p, 1, 0, 0), r;
	__u32 chunk = (__u32)(first >> FS_HLL_CHUNK_SHIFT);
	__u32 off = (__u32)(first & FS_HLL_CHUNK_MASK);
	__u8 *v = calloc(1, n), *want = calloc(1, regs);
	const struct fsd_window *w;
	unsigned int cpu;

	assert_non_null(v);
	assert_non_null(want);
	assert_true(g->r.folded[FS_DP_HLL]);
	/* The rig's precision keeps a slot of byte registers in a chunk. */
	assert_true(off + regs <= FS_CHUNK_BYTES);
	send_rotate(g, 0, 1);
	/* CPU 0: registers 0..99 at 1 + r % 7; CPU 1 (when there is one):
	 * 50..149 at 2 + r % 5, overlapping; all of the flows sketch. */
	for (r = 0; r < 100; r++)
		v[off + r] = (__u8)(1 + r % 7);
	if (g->loader.obj.ncpus > 1)
		for (r = 50; r < 150; r++)
			v[FS_CHUNK_BYTES + off + r] = (__u8)(2 + r % 5);
	for (r = 0; r < regs; r++)
		for (cpu = 0; cpu < g->loader.obj.ncpus && cpu < 2; cpu++)
			if (v[cpu * FS_CHUNK_BYTES + off + r] > want[r])
				want[r] = v[cpu * FS_CHUNK_BYTES + off + r];
	hll_chunk_write(g, chunk, v);
	rotate_ok(g);
	w = window_of_seq(g, 1);
	assert_non_null(w);
	assert_int_equal(w->sketch.totals.packets, 0);
	for (r = 0; r < regs; r++)
		if (w->sketch.hll[r] != want[r])
			fail_msg("window 1 register %llu: %u, written %u",
				 (unsigned long long)r, w->sketch.hll[r], want[r]);
	/* Zeroed on every CPU. */
	hll_chunk_read(g, chunk, v);
	for (r = 0; r < n; r++)
		if (v[r])
			fail_msg("fs_hll byte %llu not zeroed after its window",
				 (unsigned long long)r);
	send_rotate(g, 2, 1);
	send_rotate(g, 3, 1);
	assert_window_exact(g, 0);
	assert_window_exact(g, 2);
	assert_window_exact(g, 3);
	free(v);
	free(want);
}

/*
 * Window 1 lost to its barrier, so its slot is dirty; the first rotation
 * of window 2 cannot clean it (the fault armed) and is postponed: window
 * 2 goes on and takes a second batch, one longer window, exact; windows
 * 3 (the dirty slot, cleaned at last) and 4 exact.
 */
static void postpone_window_2(struct rig *g, const struct fault_case *c,
			      int fd)
{
	static const __u64 kept[] = { 0, 2, 3, 4 };
	const struct fsd_window *w;
	__u64 before, after, raised;

	send_rotate(g, 0, 1);
	raised = send_batch(g, 1, 0);
	g->stray_expected = raised;
	g->flows_filed -= NFLOWS;
	fault_arm(FAULT_UPDATE, g->r.barrier_fd, 0, FSD_BARRIER_TRIES);
	rotate_failing(g);
	send_batch(g, 2, 1);
	before = fsd_now_ns();
	fault_arm(c->op, fd, c->skip, c->count);
	rotate_failing(g);
	after = fsd_now_ns();
	/* Put off: the datapath still writes window 2, nothing committed. */
	assert_int_equal(g->loader.obj.ctl->window_seq, 2);
	assert_int_equal(g->r.seq, 2);
	assert_int_equal(g->r.postponed, 1);
	assert_int_equal(g->r.errors, 1);
	assert_int_equal(g->h.count, 1);
	send_rotate(g, 5, 1);
	/* One window from before the postponed rotation to after it. */
	w = window_of_seq(g, 2);
	assert_non_null(w);
	assert_true(w->start_ns <= before);
	assert_true(w->end_ns >= after);
	send_rotate(g, 3, 1);
	send_rotate(g, 4, 1);
	assert_history(g, kept, 4, 1, 1);
	assert_int_equal(g->truth[2].nflows, 2 * NFLOWS);
	assert_reports_accounted(g);
}

/* main's FAULT_TEST rows: the rig's fault case, its map's fd looked up. */
static void test_fault_case(void **state)
{
	struct rig *g = *state;
	const struct fault_case *c = g->fault_case;
	int fd = c->map == ON_BARRIER ? g->r.barrier_fd :
		 c->map == ON_HOT ? g->r.hot_fd : g->r.sketch_fd[c->map];

	c->scenario(g, c, fd);
}

/*
 * The daemon is killed and another adopts the datapath (rotation.h,
 * "Adoption"): the old one's memory goes, the maps stay, and the new one
 * starts as daemon.c does: its history's first pending window is the one
 * before the current when done_seq says that one is unfinished.  store:
 * the state directory both use (opened afresh for the new one), or NULL.
 */
static void successor(struct rig *g, struct fsd_winstore *store,
		      const char *dir, __u32 *restored)
{
	struct fs_sketch_params p = params;
	__u64 seq = g->loader.obj.ctl->window_seq, first, last_end = 0;
	int n;

	ring_buffer__free(g->rb);
	fsd_rotation_free(&g->r);
	fsd_history_free(&g->h);
	if (store) {
		fsd_winstore_close(store);
		assert_int_equal(fsd_winstore_open(store, dir, &p, true), 0);
	}
	first = fsd_rotation_first_pending(g->loader.obj.ctl, store);
	g->loader.obj.adopted = true;
	assert_int_equal(fsd_history_init(&g->h, &p, KEEP, 1024, first), 0);
	if (store) {
		n = fsd_winstore_load(store, &g->h, seq, &last_end);
		assert_true(n >= 0);
		*restored = (__u32)n;
	}
	assert_int_equal(rotation_init(g, &p), 0);
	g->r.store = store;
	g->rb = fsd_reports_open(&g->reports, bpf_map__fd(g->skel->maps.fs_reports), &g->h);
	assert_non_null(g->rb);
	g->reports.store = store;
	if (store)
		fsd_winstore_replay(store, &g->h, first);
	g->r.map_lookup = fault_lookup;
	g->r.map_update = fault_update;
	assert_int_equal(fsd_rotation_adopt(&g->r, &g->h, g->rb, last_end,
					    1000000000ULL), 0);
}

/* A state directory made from the template dir, its store used by the
 * rig's rotation and reports. */
static void store_attach(struct rig *g, struct fsd_winstore *store, char *dir)
{
	assert_non_null(mkdtemp(dir));
	assert_int_equal(fsd_winstore_open(store, dir, &params, false), 0);
	g->r.store = store;
	g->reports.store = store;
}

/* The store closed and its directory cleared, the windows it mapped
 * unmapped first (a fresh history for the teardown). */
static void store_detach(struct rig *g, struct fsd_winstore *store,
			 const char *dir)
{
	fsd_history_free(&g->h);
	assert_int_equal(fsd_history_init(&g->h, &params, KEEP, 1024,
					  g->loader.obj.ctl->window_seq), 0);
	fsd_winstore_close(store);
	fsd_winstore_clear(dir);
}

/*
 * Killed right after the flip (steps 1-3 of rotation.h): window 1 is
 * whole in its slot, with its reports still in the ring buffer; the
 * successor folds it, exact, and goes on.
 */
static void test_adopt_after_flip(void **state)
{
	static const __u64 kept[] = { 1, 2 };
	struct rig *g = *state;

	send_rotate(g, 0, 1);
	send_batch(g, 1, 0);
	__atomic_store_n(&g->loader.obj.ctl->window_seq, 2, __ATOMIC_RELEASE);
	successor(g, NULL, NULL, NULL);
	assert_int_equal(g->r.seq, 2);
	assert_int_equal(g->loader.obj.ctl->done_seq, 2);
	assert_window_exact(g, 1);
	send_rotate(g, 2, 1);
	/* Window 0 was the killed daemon's, in no store: gone with it. */
	assert_history(g, kept, 2, 0, 0);
}

/*
 * Killed while zeroing window 1's slot (after it was stored): the
 * successor zeroes it again, so window 3, the slot's next, holds nothing
 * of window 1.
 */
static void test_adopt_while_zeroing(void **state)
{
	static const __u64 kept[] = { 2, 3 };
	struct rig *g = *state;

	send_rotate(g, 0, 1);
	send_batch(g, 1, 1);
	fault_arm(FAULT_UPDATE, g->r.sketch_fd[FS_DP_CMS], 1, 1);	/* half of it zeroed */
	rotate_ok(g);
	fault_arm(FAULT_NONE, -1, 0, 0);
	assert_true(g->r.dirty);
	successor(g, NULL, NULL, NULL);
	assert_false(g->r.dirty);
	send_rotate(g, 2, 1);
	send_rotate(g, 3, 1);
	assert_history(g, kept, 2, 0, 0);
}

/*
 * With a state directory: the killed daemon had stored window 0 and
 * drained (and journaled) window 1's reports before it died, so the ring
 * buffer holds none of them; the successor reads window 0 back and files
 * window 1's candidates from the journal: both exact, every flow a
 * candidate.
 */
static void test_adopt_with_store(void **state)
{
	static const __u64 kept[] = { 0, 1 };
	struct rig *g = *state;
	struct fsd_winstore store;
	char dir[] = "/tmp/fs-test-rotation.XXXXXX";
	__u32 restored = 0;

	store_attach(g, &store, dir);
	send_batch(g, 0, 0);
	fsd_reports_drain(g->rb, &g->reports);
	rotate_ok(g);
	send_batch(g, 1, 0);
	fsd_reports_drain(g->rb, &g->reports);
	assert_int_equal(ring_buffer__consume(g->rb), 0);
	successor(g, &store, dir, &restored);
	assert_int_equal(restored, 1);
	assert_window_exact(g, 0);
	rotate_ok(g);
	assert_history(g, kept, 2, 0, 0);
	store_detach(g, &store, dir);
	assert_int_equal(rmdir(dir), -1);	/* clear removed it */
}

/*
 * Killed after window 1's file was renamed into place but before
 * done_seq said so, and before its slot was zeroed (all zeroing fails
 * here, so the slot stays whole, as it is at that instant): the
 * successor must take window 1 from its file and zero the slot, not fold
 * the slot again: window 1 once, exact, and window 3 (the slot's next)
 * holding nothing of it.
 */
static void test_adopt_after_store_before_done(void **state)
{
	static const __u64 kept[] = { 0, 1, 2, 3 };
	struct rig *g = *state;
	struct fsd_winstore store;
	char dir[] = "/tmp/fs-test-rotation.XXXXXX";
	__u32 restored = 0;

	store_attach(g, &store, dir);
	send_rotate(g, 0, 1);
	send_batch(g, 1, 1);
	fault_arm(FAULT_UPDATE, g->r.sketch_fd[FS_DP_CMS_NARROW], 0, 1000000);
	rotate_ok(g);
	fault_arm(FAULT_NONE, -1, 0, 0);
	assert_int_equal(g->loader.obj.ctl->done_seq, 2);
	__atomic_store_n(&g->loader.obj.ctl->done_seq, 1, __ATOMIC_RELEASE);
	successor(g, &store, dir, &restored);
	assert_int_equal(restored, 2);
	assert_int_equal(g->loader.obj.ctl->done_seq, 2);
	send_rotate(g, 2, 1);
	send_rotate(g, 3, 1);
	assert_history(g, kept, 4, 0, 0);
	store_detach(g, &store, dir);
}

#define T(f) cmocka_unit_test_setup_teardown(f, rig_setup, rig_teardown)
#define T_FRESH(f) cmocka_unit_test_setup_teardown(f, rig_setup_fresh, rig_teardown)
#define FAULT_TEST(f, scenario, op, map, skip, count, drain)		\
	{ #f, test_fault_case, rig_setup, rig_teardown,			\
	  &(struct fault_case){ scenario, op, map, skip, count, drain } }

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_no_fault),
		FAULT_TEST(test_barrier_fails, lose_window_1,
			   FAULT_UPDATE, ON_BARRIER, 0, FSD_BARRIER_TRIES, 0),
		/* Its reports filed before the loss: dropped with the window. */
		FAULT_TEST(test_barrier_fails_reports_drained, lose_window_1,
			   FAULT_UPDATE, ON_BARRIER, 0, FSD_BARRIER_TRIES, 1),
		T(test_barrier_retried),
		FAULT_TEST(test_zero_cms_fails, zero_fails_window_1,
			   FAULT_UPDATE, FS_DP_CMS_NARROW, 0, 1, 0),
		/* Half the slot's wide cells zeroed, the rest not (the
		 * narrow cells of the rig's sizes are one chunk). */
		FAULT_TEST(test_zero_cms_fails_halfway, zero_fails_window_1,
			   FAULT_UPDATE, FS_DP_CMS, 1, 1, 0),
		FAULT_TEST(test_zero_hll_fails, zero_fails_window_1,
			   FAULT_UPDATE, FS_DP_HLL_PACKED, 0, 1, 0),
		T(test_hot_never_written),
		T(test_idle_cpu_window),
		FAULT_TEST(test_read_cms_fails, lose_window_1,
			   FAULT_LOOKUP, FS_DP_CMS_NARROW, 0, 1, 1),
		FAULT_TEST(test_read_hll_fails, lose_window_1,
			   FAULT_LOOKUP, FS_DP_HLL_PACKED, 0, 1, 1),
		/* Window 1's totals cannot be read: it is lost, and window 3 (its
		 * slot again) starts its totals afresh by their tag, with nothing
		 * zeroed. */
		FAULT_TEST(test_read_totals_fails, lose_window_1,
			   FAULT_LOOKUP, ON_HOT, 0, 1, 1),
		FAULT_TEST(test_clean_barrier_fails, postpone_window_2,
			   FAULT_UPDATE, ON_BARRIER, 0, FSD_BARRIER_TRIES, 0),
		FAULT_TEST(test_clean_zeroing_fails, postpone_window_2,
			   FAULT_UPDATE, FS_DP_CMS_NARROW, 0, 1, 0),
		/* The cleaning's last step (there are no totals to zero any more). */
		FAULT_TEST(test_clean_hll_fails, postpone_window_2,
			   FAULT_UPDATE, FS_DP_HLL_PACKED, 0, 1, 0),
		T(test_adopt_after_flip),
		T(test_adopt_while_zeroing),
		T(test_adopt_with_store),
		T(test_adopt_after_store_before_done),
		T_FRESH(test_fresh_legacy_untouched),
		T(test_whole_legacy_folded),
		/* The faults of a rotation, on a fresh datapath's maps. */
		{ "test_fresh_read_hll_fails", test_fault_case, rig_setup_fresh, rig_teardown,
		  &(struct fault_case){ lose_window_1, FAULT_LOOKUP, FS_DP_HLL_PACKED, 0, 1, 1 } },
		{ "test_fresh_zero_hll_fails", test_fault_case, rig_setup_fresh, rig_teardown,
		  &(struct fault_case){ zero_fails_window_1, FAULT_UPDATE, FS_DP_HLL_PACKED, 0, 1, 0 } },
	};

	if (sched_getaffinity(0, sizeof(allowed), &allowed)) {
		perror("sched_getaffinity");
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
