// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * fs-bench - what flowsketch costs per packet and per window.
 *
 * Datapath.  The five programs of bench/bpf/bench.bpf.c (driver alone, + parse,
 * + full datapath, + naive textbook sketch, + the sketch's memory work
 * alone) run under BPF_PROG_TEST_RUN with a large repeat count; the kernel
 * reports the mean time per run.  Rounds interleave the programs, and the
 * fastest round of each program is kept: a neighbour can only add time,
 * and on the shared test machines whole rounds run at half speed now and
 * then, so a median swings by 2x between runs where the minimum moves by
 * a few percent.  Each run is a new flow (the driver rewrites the source),
 * so the sketches see >= 64K distinct flows, with the cache misses that
 * implies.
 *
 * Detection.  The full program again, loaded with the detection sketches
 * (detect.h; bench_detect.h): with both, the prefix sketch alone and the
 * spread sketch alone, each against the full program without them, rounds
 * interleaved as above.  Issue 20's 1.25x target is judged live
 * (fs-livebench); these are the same ratios without the live caches.
 *
 * Daemon.  Closing a window reads every CPU's copy of the closed slot,
 * folds it into one sketch (fs_sketch_add_slot: cells add, registers take
 * the max) and zeroes the slot, of every map the daemon's rotation folds
 * (not the legacy fs_hll a fresh datapath makes at one element); a live `top` then queries the candidates
 * in that sketch.  Both are timed on the maps the full program filled and
 * set against a memcpy of the same bytes (the floor any rotation has to
 * pay), and against the 1 s window as a share of one core.
 *
 * Absolute nanoseconds depend on the machine and on its neighbours; only
 * the ratios between figures measured in the same run mean something on
 * shared machines.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "flowsketch/params.h"
#include "flowsketch/maps.h"
#include "flowsketch/hash.h"
#include "sketch.h"
#include "sizing.h"
#include "datapath_setup.h"
#include "bench.skel.h"
#include "bench_detect.h"
#include "bench_share.h"

#define BENCH_PKT_LEN 64
#define BENCH_WINDOW_NS 1e9	/* the daemon's default window */
#define BENCH_TOP_N 10
#define BENCH_REFILL_RUNS 100000	/* flows per window in the daemon bench */

enum bench_prog { PROG_BASE, PROG_PARSE, PROG_FULL, PROG_NAIVE, PROG_FLOOR, PROG_MAX };

static const char *const bench_prog_names[PROG_MAX] = {
	"driver baseline", "parse only", "full datapath", "naive (FNV-1a/row)",
	"floor (cells only)",
};

struct bench_opts {
	__u32 repeat;
	__u32 rounds;
	__u32 candidates;
	__u32 depth;
	double hh_fraction;
	struct bd_shape detect;		/* --detect-prefix, --detect-spread */
};

static double bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The fastest of n rounds (see the header comment for why not the median). */
static double bench_best(double *v, __u32 n)
{
	qsort(v, n, sizeof(*v), bench_cmp_double);
	return v[0];
}

/* Ethernet + IPv4 + UDP + payload, 64 bytes; the driver rewrites the
 * source address and port before every run. */
static void bench_packet(__u8 *pkt)
{
	__u8 *ip = pkt + 14, *udp = pkt + 34;

	memset(pkt, 0, BENCH_PKT_LEN);
	memcpy(pkt, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01", 12);
	pkt[12] = 0x08;				/* ETH_P_IP */
	ip[0] = 0x45;				/* version 4, IHL 5 */
	ip[2] = 0;
	ip[3] = BENCH_PKT_LEN - 14;		/* total length */
	ip[8] = 64;				/* TTL */
	ip[9] = 17;				/* UDP */
	memcpy(ip + 12, "\x0a\x00\x00\x01\x0a\x80\x00\x01", 8);
	udp[0] = 0x04;				/* sport 1024 */
	udp[2] = 0x00;
	udp[3] = 53;				/* dport 53 */
	udp[5] = BENCH_PKT_LEN - 34;		/* UDP length */
}

/* Mean ns per run of one program over `repeat` runs. */
static int bench_prog_run(struct bpf_program *prog, __u32 repeat, double *ns)
{
	__u8 pkt[BENCH_PKT_LEN];
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		    .data_in = pkt,
		    .data_size_in = sizeof(pkt),
		    .repeat = repeat);
	int err;

	bench_packet(pkt);
	err = bpf_prog_test_run_opts(bpf_program__fd(prog), &opts);
	if (err)
		return err;
	if (opts.retval != XDP_PASS)
		return -EPROTO;
	*ns = opts.duration;
	return 0;
}

/* Per-CPU bytes of a per-CPU map: elements round up to 8 bytes each. */
static size_t bench_percpu_bytes(const struct bpf_map *m)
{
	return (size_t)bpf_map__max_entries(m) *
	       ((bpf_map__value_size(m) + 7) & ~7U);
}

/* The benchmark object with parameters p; with full_only, fs_bench_full
 * alone (the detection rows' loads); with share, on that object's maps
 * but fs_sample (bench_share.h). */
static int bench_load_shared(struct bench **out, const struct fs_sketch_params *p,
			     const struct bench_opts *o, bool full_only,
			     const struct bench *share);

static int bench_load_with(struct bench **out, const struct fs_sketch_params *p,
			   const struct bench_opts *o, bool full_only)
{
	return bench_load_shared(out, p, o, full_only, NULL);
}

static int bench_load_shared(struct bench **out, const struct fs_sketch_params *p,
			     const struct bench_opts *o, bool full_only,
			     const struct bench *share)
{
	/* The daemon's report fraction: flows above hh_fraction of the
	 * running totals are reported through the ring buffer (cms.h). */
	struct fs_ctl ctl = {
		.hh_phi_q32 = fs_hh_phi_q32(o->hh_fraction),
	};
	struct bpf_program *prog;
	struct bench *skel;
	__u32 zero = 0;
	int err;

	skel = bench__open();
	if (!skel) {
		fprintf(stderr, "fs-bench: cannot open the benchmark BPF object.\n");
		return -ENOENT;
	}
	if (full_only)
		bpf_object__for_each_program(prog, skel->obj)
			bpf_program__set_autoload(prog, prog == skel->progs.fs_bench_full);
	FS_DATAPATH_SETUP(skel, p, false);
	/* As the daemon loads it: fs_hll, which no program here writes, at
	 * one element (sketch_kind.h, "Legacy maps"). */
	fs_datapath_fresh_legacy(skel->obj);
	bpf_map__set_max_entries(skel->maps.naive_cms,
				 (__u32)fs_cms_cells_per_slot(p));
	bpf_map__set_max_entries(skel->maps.naive_hll,
				 FS_HLL_NSKETCH << p->hll_p);
	err = share ? BENCH_SHARE_MAPS(skel, share) : 0;
	if (!err)
		err = bench__load(skel);
	if (err) {
		fprintf(stderr, "fs-bench: the kernel refused the benchmark programs: %s.\n",
			strerror(-err));
		goto err_destroy;
	}
	/* A test run's frame arrives on lo (ifindex 1 in any namespace):
	 * the one interface of the slot table, as a daemon on it sets it. */
	err = fs_ifslot_set_one(bpf_map__fd(skel->maps.fs_ifslot), 1, "lo");
	if (!err)
		err = bpf_map_update_elem(bpf_map__fd(skel->maps.fs_ctl), &zero, &ctl, 0);
	if (err) {
		err = -errno;
		fprintf(stderr, "fs-bench: cannot set fs_ctl: %s.\n", strerror(errno));
		goto err_destroy;
	}
	*out = skel;
	return 0;

err_destroy:
	bench__destroy(skel);
	return err;
}

/* The main object: parameters of a new secret at --depth, no detection
 * sketch (flowsketchd's default). */
static int bench_load(struct bench **out, struct fs_sketch_params *p,
		      const struct bench_opts *o)
{
	struct fs_hash_secret secret;
	int err;

	/* Below 256 bytes getrandom() is never short once it returns. */
	if (getrandom(&secret, sizeof(secret), 0) < 0) {
		err = -errno;
		fprintf(stderr, "fs-bench: cannot draw a hash secret: %s.\n",
			strerror(-err));
		return err;
	}
	fs_params_init(p, o->depth, FS_DEFAULT_CMS_LOG2W,
		       FS_DEFAULT_HLL_P, 0, &secret);
	return bench_load_with(out, p, o, false);
}

static int bench_datapath(struct bench *skel, const struct bench_opts *o,
			  double best[PROG_MAX])
{
	struct bpf_program *progs[PROG_MAX] = {
		skel->progs.fs_bench_base, skel->progs.fs_bench_parse,
		skel->progs.fs_bench_full, skel->progs.fs_bench_naive,
		skel->progs.fs_bench_floor,
	};
	double *samples = calloc((size_t)PROG_MAX * o->rounds, sizeof(*samples));
	double warm;
	__u32 r, i;
	int err = 0;

	if (!samples)
		return -ENOMEM;
	/* Warm-up: fault in the map pages and fill the sketches, so rounds
	 * measure steady state, not first touch. */
	for (i = 0; i < PROG_MAX && !err; i++)
		err = bench_prog_run(progs[i], o->repeat / 4 + 1, &warm);
	for (r = 0; r < o->rounds && !err; r++)
		for (i = 0; i < PROG_MAX && !err; i++)
			err = bench_prog_run(progs[i], o->repeat,
					     &samples[i * o->rounds + r]);
	if (err) {
		fprintf(stderr, "fs-bench: BPF_PROG_TEST_RUN failed: %s.\n",
			strerror(-err));
		goto out;
	}
	for (i = 0; i < PROG_MAX; i++)
		best[i] = bench_best(&samples[i * o->rounds], o->rounds);
out:
	free(samples);
	return err;
}

/*
 * The detection rows: full (of skel, no detection sketch) and the full
 * program of one load per variant of bench_detect.h, the same parameters
 * otherwise, then one with the keyed sample at flowsketchd --sample-rate's
 * defaults (issue 22), rounds interleaved, fastest round kept, as
 * bench_datapath().  best[0] is full, best[1 + v] variant v's, best[1 +
 * BD_MAX] the sample's.
 */
#define BENCH_NDETECT (BD_MAX + 1)

static int bench_detect(struct bench *skel, const struct fs_sketch_params *p,
			const struct bench_opts *o, double best[1 + BENCH_NDETECT])
{
	const struct fs_sample_params sp = { FS_DEFAULT_SAMPLE_SHIFT,
		FS_DEFAULT_SAMPLE_LOG2_BUCKETS };
	struct bench *dskel[BENCH_NDETECT] = { 0 };
	struct bpf_program *progs[1 + BENCH_NDETECT] = { skel->progs.fs_bench_full };
	double *samples = calloc((size_t)(1 + BENCH_NDETECT) * o->rounds, sizeof(*samples));
	double warm;
	__u32 r, i;
	int err = samples ? 0 : -ENOMEM, v;

	for (v = 0; v < BENCH_NDETECT && !err; v++) {
		struct fs_sketch_params dp = *p;

		if (v < BD_MAX)
			bd_apply(&dp, &o->detect, (enum bd_variant)v);
		else
			fs_params_set_sample(&dp, &sp);
		err = bench_load_with(&dskel[v], &dp, o, true);
		if (!err)
			progs[1 + v] = dskel[v]->progs.fs_bench_full;
	}
	for (i = 0; i < 1 + BENCH_NDETECT && !err; i++)
		err = bench_prog_run(progs[i], o->repeat / 4 + 1, &warm);
	for (r = 0; r < o->rounds && !err; r++)
		for (i = 0; i < 1 + BENCH_NDETECT && !err; i++)
			err = bench_prog_run(progs[i], o->repeat,
					     &samples[i * o->rounds + r]);
	if (err) {
		fprintf(stderr, "fs-bench: the detection rows failed: %s.\n",
			strerror(-err));
		goto out;
	}
	for (i = 0; i < 1 + BENCH_NDETECT; i++)
		best[i] = bench_best(&samples[i * o->rounds], o->rounds);
out:
	for (v = 0; v < BENCH_NDETECT; v++)
		bench__destroy(dskel[v]);
	free(samples);
	return err;
}

static void bench_print_detect(const double best[1 + BENCH_NDETECT], double base,
			       const struct bench_opts *o)
{
	static const char *const sample = "full+sample";
	const struct bd_shape *d = &o->detect;
	double net0 = best[0] - base;
	int v;

	printf("Detection sketches (issue 20), BPF_PROG_TEST_RUN, %u runs x %u rounds per program, fastest round\n",
	       o->repeat, o->rounds);
	printf("(the full datapath with both, the prefix sketch alone (d %u, w 2^%u, t %u), the spread sketch\n"
	       "alone (d %u, w 2^%u, s %u); net of the driver baseline above)\n",
	       d->prefix.depth, d->prefix.log2_width, d->prefix.skip_shift,
	       d->spread.depth, d->spread.log2_width, d->spread.sample_shift);
	printf("(full+sample: the keyed sample at --sample-rate's defaults, 1 flow in %u, %u buckets; issue 22)\n\n",
	       1U << FS_DEFAULT_SAMPLE_SHIFT, 1U << FS_DEFAULT_SAMPLE_LOG2_BUCKETS);
	printf("  %-20s %10s %16s\n", "program", "ns/packet", "net of driver");
	printf("  %-20s %10.1f %16.1f\n", "full datapath", best[0], net0);
	for (v = 0; v < BENCH_NDETECT; v++)
		printf("  %-20s %10.1f %16.1f\n", v < BD_MAX ? bd_names[v] : sample,
		       best[1 + v], best[1 + v] - base);
	printf("\n");
	for (v = 0; v < BENCH_NDETECT; v++) {
		char label[32];

		snprintf(label, sizeof(label), "%s / full", v < BD_MAX ? bd_names[v] : sample);
		printf("  %-20s %5.2fx (net of driver %5.2fx)\n", label,
		       best[1 + v] / best[0],
		       net0 > 0 ? (best[1 + v] - base) / net0 : 0.0);
	}
	printf("  (issue 20's target, full+both / full <= %.2fx, is judged live: fs-livebench's verdict)\n\n",
	       BD_TARGET);
}

/*
 * Issue 22's sample once more, with the noise of separate loads taken
 * out (bench_share.h): the full program A (skel's) against three loads
 * on skel's maps and key, A again (the control: the floor of the method)
 * and A with the keyed sample at 1 in 1,024 and 512 or 128 buckets.  The
 * loads' own maps put their cells at other pages, and the same program
 * loaded twice then differs by far more than the 3 % in this loop.  Short
 * runs of each, A X A Y A Z A X ..., BENCH_SAB_PAIRS cycles, the variant
 * after a different one every cycle; each variant's run against the mean
 * of the A runs around it, on BENCH_SAB_LOADS sets of fresh loads,
 *
 *     r_k = x_k / ((a_k + a_k+1) / 2),
 *
 * which cancels a drift linear over the three runs; the figure is the
 * median of r_k, with the smallest and largest.  The runs share
 * bench_ctr, so every program continues the one stream of new flows.
 * There is no window close here: the sample's table fills (7 flows a
 * bucket, sample.h) and its limits fall, as in a busy window.
 */
#define BENCH_SAB_PAIRS 50
#define BENCH_SAB_LOADS 4
enum { BENCH_SAB_CONTROL, BENCH_SAB_512, BENCH_SAB_128, BENCH_SAB_NV };

static const char *const bench_sab_names[BENCH_SAB_NV] = {
	"full again / full", "full+sample 512 / full", "full+sample 128 / full",
};

static int bench_sample_ab(struct bench *skel, const struct fs_sketch_params *p,
			   const struct bench_opts *o, double med[BENCH_SAB_NV],
			   double lo[BENCH_SAB_NV], double hi[BENCH_SAB_NV])
{
	static const __u32 log2b[BENCH_SAB_NV] = { 0, 9, 7 };
	struct bench *vs[BENCH_SAB_NV] = { 0 };
	struct bpf_program *a = skel->progs.fs_bench_full, *x[BENCH_SAB_NV];
	__u32 repeat = o->repeat / 50 + 1, n = BENCH_SAB_LOADS * BENCH_SAB_PAIRS, k, pr, i;
	double *r = calloc((size_t)BENCH_SAB_NV * n, sizeof(*r));
	double a0, a1, xs;
	int err = r ? 0 : -ENOMEM, v;

	/* Fresh loads BENCH_SAB_LOADS times: each load's code lands at its
	 * own addresses, which moves a load's cost by about 1 % (the
	 * control's spread between loads); the median over loads evens
	 * that out. */
	for (k = 0; k < BENCH_SAB_LOADS && !err; k++) {
		for (v = 0; v < BENCH_SAB_NV && !err; v++) {
			struct fs_sketch_params dp = *p;

			if (log2b[v])
				fs_params_set_sample(&dp, &(struct fs_sample_params){
					FS_DEFAULT_SAMPLE_SHIFT, log2b[v] });
			err = bench_load_shared(&vs[v], &dp, o, true, skel);
			if (!err)
				x[v] = vs[v]->progs.fs_bench_full;
		}
		for (v = 0; v < BENCH_SAB_NV && !err; v++)
			err = bench_prog_run(x[v], repeat, &xs);
		if (!err)
			err = bench_prog_run(a, repeat, &a0);
		for (pr = 0; pr < BENCH_SAB_PAIRS && !err; pr++)
			for (i = 0; i < BENCH_SAB_NV && !err; i++) {
				v = (int)((pr + i) % BENCH_SAB_NV);
				err = bench_prog_run(x[v], repeat, &xs);
				if (!err)
					err = bench_prog_run(a, repeat, &a1);
				if (!err)
					r[v * n + k * BENCH_SAB_PAIRS + pr] = xs / ((a0 + a1) / 2);
				a0 = a1;
			}
		for (v = 0; v < BENCH_SAB_NV; v++) {
			bench__destroy(vs[v]);
			vs[v] = NULL;
		}
	}
	if (err) {
		fprintf(stderr, "fs-bench: the sample's A/B runs failed: %s.\n", strerror(-err));
		goto out;
	}
	for (v = 0; v < BENCH_SAB_NV; v++) {
		double *rv = r + v * n;

		qsort(rv, n, sizeof(*rv), bench_cmp_double);
		med[v] = n % 2 ? rv[n / 2] : (rv[n / 2 - 1] + rv[n / 2]) / 2;
		lo[v] = rv[0];
		hi[v] = rv[n - 1];
	}
	printf("  the sample on shared maps (bench_share.h): full (A) and three loads on its maps and key,\n"
	       "  A X A Y A Z A ..., %u runs each, %u cycles on each of %u fresh loads; median of each\n"
	       "  load's ratios to the mean of the A runs around it (min..max):\n",
	       repeat, BENCH_SAB_PAIRS, BENCH_SAB_LOADS);
	for (v = 0; v < BENCH_SAB_NV; v++)
		printf("  %-24s %7.3fx (min %.3f, max %.3f)\n", bench_sab_names[v],
		       med[v], lo[v], hi[v]);
	printf("  (issue 22's target, full+sample / full <= 1.030x, is judged live: fs-livebench's verdict)\n\n");
out:
	for (v = 0; v < BENCH_SAB_NV; v++)
		bench__destroy(vs[v]);
	free(r);
	return err;
}

static const char *bench_verdict(bool ok)
{
	return ok ? "met" : "MISSED";
}

static void bench_print_datapath(const double best[PROG_MAX],
				 const struct bench_opts *o,
				 const struct fs_sketch_params *p)
{
	double net[PROG_MAX];
	double full_parse, naive_full, floor_parse;
	int i;

	printf("Datapath, BPF_PROG_TEST_RUN, %u runs x %u rounds per program, fastest round\n",
	       o->repeat, o->rounds);
	printf("(each run is a new flow: %u distinct flows per round)\n\n", o->repeat);
	printf("  %-20s %10s %16s\n", "program", "ns/packet", "net of driver");
	for (i = 0; i < PROG_MAX; i++) {
		net[i] = best[i] - best[PROG_BASE];
		if (i == PROG_BASE)
			printf("  %-20s %10.1f %16s\n", bench_prog_names[i], best[i], "-");
		else
			printf("  %-20s %10.1f %16.1f\n", bench_prog_names[i], best[i], net[i]);
	}
	full_parse = best[PROG_FULL] / best[PROG_PARSE];
	naive_full = best[PROG_NAIVE] / best[PROG_FULL];
	printf("\n  full / parse-only    %5.2fx (net of driver %5.2fx)   target <= 3x: %s\n",
	       full_parse, net[PROG_PARSE] > 0 ? net[PROG_FULL] / net[PROG_PARSE] : 0.0,
	       bench_verdict(full_parse <= 3.0));
	printf("  naive / full         %5.2fx (net of driver %5.2fx)   target >= 2x: %s\n",
	       naive_full, net[PROG_FULL] > 0 ? net[PROG_NAIVE] / net[PROG_FULL] : 0.0,
	       bench_verdict(naive_full >= 2.0));
	printf("  full datapath: %.1f Mpps per core at this cost\n",
	       1e3 / best[PROG_FULL]);
	/* The floor is what the sketch's shape costs with no hashing worth
	 * the name and no bookkeeping: when it alone exceeds 3x, no tuning of
	 * the full program reaches the target; only a smaller shape does
	 * (fewer rows or registers per packet, or sampled updates). */
	floor_parse = best[PROG_FLOOR] / best[PROG_PARSE];
	printf("  floor / parse-only   %5.2fx: the memory work alone (d = %u rows, 3 registers), unkeyed\n",
	       floor_parse, p->cms_depth);
	printf("  full / floor         %5.2fx: what keyed hashing, windows, totals and reports add   target <= 1.2x: %s\n",
	       best[PROG_FULL] / best[PROG_FLOOR],
	       bench_verdict(best[PROG_FULL] <= 1.2 * best[PROG_FLOOR]));
	if (full_parse > 3.0 && floor_parse > 3.0)
		printf("  (the 3x target is below the floor: it needs fewer cells per packet, not faster code)\n");
	printf("\n");
}

/* The last chunk of slot 0 when a slot holds `per_slot` elements and a
 * chunk 1 << shift of them.  Slots start on chunk boundaries (cms.h,
 * hll.h), so slot 0 is chunks [0, last] and none of them holds slot 1. */
static __u32 bench_slot0_last_chunk(__u64 per_slot, __u32 shift)
{
	return (__u32)((per_slot - 1) >> shift);
}

struct bench_rotation {
	int fd[FS_NDPMAPS], hot_fd, ctl_fd;	/* fd: by datapath map */
	__u32 ncpus;
	__u32 last[FS_NDPMAPS];			/* slot 0: chunks [0, last] */
	bool folded[FS_NDPMAPS];		/* as the daemon's rotation */
	__u8 *value;				/* one key, all CPUs */
	__u8 *zeros;				/* the same size, zero */
	struct fs_hot_line *hot;		/* [cpu] */
};

static void bench_rotation_free(struct bench_rotation *rot)
{
	free(rot->value);
	free(rot->zeros);
	free(rot->hot);
}

static int bench_rotation_init(struct bench_rotation *rot, struct bench *skel,
			       const struct fs_sketch_params *p)
{
	int ncpus = libbpf_num_possible_cpus();

#define MAP_OF(NAME, name, KIND) [FS_DP_##NAME] = skel->maps.fs_##name,
	struct bpf_map *maps[FS_NDPMAPS] = { FS_DP_MAPS(MAP_OF) };
#undef MAP_OF
	int m;

	memset(rot, 0, sizeof(*rot));
	if (ncpus <= 0)
		return ncpus ? ncpus : -EINVAL;
	rot->ncpus = (__u32)ncpus;
	/* Slot 0: what the full program wrote with window_seq 0; every
	 * map's chunks are FS_CHUNK_BYTES, so one buffer reads them all. */
	for (m = 0; m < FS_NDPMAPS; m++) {
		rot->fd[m] = bpf_map__fd(maps[m]);
		rot->folded[m] = fs_dp_map_folded(m, p, FS_NSLOTS,
						  bpf_map__max_entries(maps[m]));
		rot->last[m] = bench_slot0_last_chunk(fs_dp_maps[m].per_slot(p),
						      fs_dp_maps[m].chunk_shift);
	}
	rot->hot_fd = bpf_map__fd(skel->maps.fs_hot);
	rot->ctl_fd = bpf_map__fd(skel->maps.fs_ctl);
	rot->value = malloc((size_t)rot->ncpus * FS_CHUNK_BYTES);
	rot->zeros = calloc(rot->ncpus, FS_CHUNK_BYTES);
	rot->hot = calloc(rot->ncpus, sizeof(*rot->hot));
	if (!rot->value || !rot->zeros || !rot->hot) {
		bench_rotation_free(rot);
		return -ENOMEM;
	}
	return 0;
}

/*
 * Read chunk `k` of a per-CPU map for all CPUs, fold each CPU's copy into
 * s and zero the chunk on every CPU, as the daemon does (rotation.c): the
 * chunk belongs to the closed slot alone.
 */
static int bench_fold_chunk(struct bench_rotation *rot, enum fs_dp_map m,
			    __u32 k, struct fs_sketch *s)
{
	__u32 cpu;

	if (bpf_map_lookup_elem(rot->fd[m], &k, rot->value))
		return -errno;
	for (cpu = 0; cpu < rot->ncpus; cpu++) {
		const void *c = rot->value + (size_t)cpu * FS_CHUNK_BYTES;

		fs_sketch_add_chunk(s, m, 0, k, c);
	}
	if (bpf_map_update_elem(rot->fd[m], &k, rot->zeros, BPF_ANY))
		return -errno;
	return 0;
}

/* Make seq the window the full program writes (fs_ctl, keeping its report
 * fraction), as a rotation's first step does. */
static int bench_set_seq(struct bench_rotation *rot, __u64 seq)
{
	struct fs_ctl ctl;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(rot->ctl_fd, &zero, &ctl))
		return -errno;
	ctl.window_seq = seq;
	if (bpf_map_update_elem(rot->ctl_fd, &zero, &ctl, BPF_EXIST))
		return -errno;
	return 0;
}

/* One close of window seq (slot 0): read, fold and zero its chunks, and
 * take its totals from fs_hot (those tagged seq; never written, maps.h)
 * into s.  0 or -errno. */
static int bench_rotate(struct bench_rotation *rot, struct fs_sketch *s,
			__u64 seq)
{
	const __u32 slot = 0, zero = 0;
	__u32 k, cpu;
	int err, m;

	fs_sketch_reset(s);
	for (m = 0; m < FS_NDPMAPS; m++)
		for (k = 0; rot->folded[m] && k <= rot->last[m]; k++) {
			err = bench_fold_chunk(rot, m, k, s);
			if (err)
				return err;
		}
	if (bpf_map_lookup_elem(rot->hot_fd, &zero, rot->hot))
		return -errno;
	for (cpu = 0; cpu < rot->ncpus; cpu++) {
		if (rot->hot[cpu].slot[slot].seq == seq) {
			struct fs_window_totals t = {
				.packets = rot->hot[cpu].slot[slot].packets,
				.bytes = rot->hot[cpu].slot[slot].bytes,
			};

			fs_sketch_add_totals(s, &t);
		}
	}
	return 0;
}

/* Make the driver's next run flow 0 again on every CPU, so that a refill
 * of n runs sends exactly flows 0 .. n - 1. */
static int bench_restart_flows(struct bench *skel, __u32 ncpus)
{
	__u64 *zeros = calloc(ncpus, sizeof(*zeros));
	__u32 zero = 0;
	int err = 0;

	if (!zeros)
		return -ENOMEM;
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.bench_ctr), &zero,
				zeros, BPF_ANY))
		err = -errno;
	free(zeros);
	return err;
}

/* Bytes a rotation has to move at least: the slot's chunks, all CPUs. */
static size_t bench_rotation_bytes(const struct bench_rotation *rot)
{
	size_t chunks = 0;
	int m;

	for (m = 0; m < FS_NDPMAPS; m++)
		if (rot->folded[m])
			chunks += rot->last[m] + 1;
	return (size_t)rot->ncpus * chunks * FS_CHUNK_BYTES;
}

struct bench_estimate {
	__u64 packets;
	__u32 index;
};

static int bench_cmp_estimate(const void *a, const void *b)
{
	const struct bench_estimate *x = a, *y = b;

	if (x->packets != y->packets)
		return x->packets < y->packets ? 1 : -1;
	return (x->index > y->index) - (x->index < y->index);
}

/* A top-n query over one window: estimate every candidate, keep the n
 * largest.  Returns the largest estimate so the work cannot be elided. */
static __u64 bench_top_query(const struct fs_sketch *s, const __u64 *hashes,
			     struct bench_estimate *est, __u32 n)
{
	struct fs_cms_cell cell;
	__u32 i;

	for (i = 0; i < n; i++) {
		fs_sketch_query(s, hashes[i], &cell);
		est[i].packets = cell.packets;
		est[i].index = i;
	}
	qsort(est, n, sizeof(*est), bench_cmp_estimate);
	return est[0].packets;
}

static int bench_daemon(struct bench *skel, const struct fs_sketch_params *p,
			const struct bench_opts *o)
{
	struct fs_hash_key hash_key;
	struct bench_rotation rot;
	struct fs_sketch s = {};
	__u8 *copy_src = NULL, *copy_dst = NULL;
	__u64 *hashes = NULL;
	struct bench_estimate *est = NULL;
	double *t_rot = NULL, *t_copy = NULL, *t_top = NULL;
	double rot_ns, copy_ns, top_ns, core;
	volatile __u64 sink = 0;
	size_t bytes;
	__u32 r, i;
	int err;

	err = bench_rotation_init(&rot, skel, p);
	if (err) {
		fprintf(stderr, "fs-bench: cannot set up the rotation benchmark: %s.\n",
			strerror(-err));
		return err;
	}
	err = fs_sketch_init(&s, p);
	if (err) {
		fprintf(stderr, "fs-bench: cannot allocate a window sketch: %s.\n",
			strerror(-err));
		goto out;
	}
	bytes = bench_rotation_bytes(&rot);
	copy_src = malloc(bytes);
	copy_dst = malloc(bytes);
	hashes = calloc(o->candidates, sizeof(*hashes));
	est = calloc(o->candidates, sizeof(*est));
	t_rot = calloc(o->rounds, sizeof(double));
	t_copy = calloc(o->rounds, sizeof(double));
	t_top = calloc(o->rounds, sizeof(double));
	if (!copy_src || !copy_dst || !hashes || !est || !t_rot || !t_copy || !t_top) {
		fprintf(stderr, "fs-bench: out of memory.\n");
		err = -ENOMEM;
		goto out;
	}
	memset(copy_src, 0x5a, bytes);
	memset(copy_dst, 0, bytes);
	/* Candidates: the first flows of each refill below (source
	 * 10.0.0.0 + n, UDP 1024 -> 53, to 10.128.0.1), as the daemon's
	 * candidates are flows the window saw. */
	fs_hash_key_derive(&p->secret, &hash_key);
	for (i = 0; i < o->candidates; i++) {
		struct fs_flow_key key = {
			.family = FS_FAMILY_IPV4,
			.proto = 17,
			.sport = htons(1024),
			.dport = htons(53),
		};
		__u32 saddr = htonl(0x0a000000U | i), daddr = htonl(0x0a800001U);

		memcpy(key.src, &saddr, 4);
		memcpy(key.dst, &daddr, 4);
		hashes[i] = fs_flow_hash(&key, &hash_key);
	}

	for (r = 0; r < o->rounds; r++) {
		double t0;
		double run_ns;

		/* Refill slot 0 with a window's worth of traffic first, so
		 * that every rotation folds a full sketch: window 2 (r + 1),
		 * a new one each round, so that its totals restart by their
		 * tag as a window's do under the daemon. */
		err = bench_set_seq(&rot, 2 * ((__u64)r + 1));
		if (!err)
			err = bench_restart_flows(skel, rot.ncpus);
		if (!err)
			err = bench_prog_run(skel->progs.fs_bench_full,
					     BENCH_REFILL_RUNS, &run_ns);
		if (err) {
			fprintf(stderr, "fs-bench: cannot refill the window: %s.\n",
				strerror(-err));
			goto out;
		}
		t0 = bench_now_ns();
		err = bench_rotate(&rot, &s, 2 * ((__u64)r + 1));
		t_rot[r] = bench_now_ns() - t0;
		if (err) {
			fprintf(stderr, "fs-bench: rotation failed: %s.\n", strerror(-err));
			goto out;
		}
		t0 = bench_now_ns();
		memcpy(copy_dst, copy_src, bytes);
		t_copy[r] = bench_now_ns() - t0;
		sink += copy_dst[r % bytes];
		t0 = bench_now_ns();
		sink += bench_top_query(&s, hashes, est, o->candidates);
		t_top[r] = bench_now_ns() - t0;
	}
	rot_ns = bench_best(t_rot, o->rounds);
	copy_ns = bench_best(t_copy, o->rounds);
	top_ns = bench_best(t_top, o->rounds);
	core = 100.0 * (rot_ns + top_ns) / BENCH_WINDOW_NS;

	printf("Daemon, per 1 s window, %u CPUs, fastest of %u rounds\n\n",
	       rot.ncpus, o->rounds);
	printf("  rotation (read %zu KiB of per-CPU chunks, fold, zero)  %9.1f us\n",
	       bytes / 1024, rot_ns / 1e3);
	printf("  memcpy of the same bytes                            %9.1f us\n",
	       copy_ns / 1e3);
	printf("  rotation / memcpy                                   %9.1fx   target <= 3x: %s\n",
	       copy_ns > 0 ? rot_ns / copy_ns : 0.0,
	       bench_verdict(copy_ns > 0 && rot_ns <= 3.0 * copy_ns));
	printf("  top-%d query over %u candidates                     %9.1f us\n",
	       BENCH_TOP_N, o->candidates, top_ns / 1e3);
	printf("  top-%d query / memcpy                               %9.1fx\n",
	       BENCH_TOP_N, copy_ns > 0 ? top_ns / copy_ns : 0.0);
	printf("  rotation + query, share of one core at 1 s windows  %9.3f %%   target < 5%%: %s\n",
	       core, bench_verdict(core < 5.0));
	printf("  (window total in the folded sketch: %llu packets)\n\n",
	       (unsigned long long)s.totals.packets);
out:
	free(t_rot);
	free(t_copy);
	free(t_top);
	free(est);
	free(hashes);
	free(copy_src);
	free(copy_dst);
	fs_sketch_free(&s);
	bench_rotation_free(&rot);
	return err;
}

static void bench_print_memory(struct bench *skel,
			       const struct fs_sketch_params *p)
{
	const struct bpf_map *datapath[] = {
		skel->maps.fs_cms, skel->maps.fs_cms_narrow, skel->maps.fs_hll,
		skel->maps.fs_hll_packed, skel->maps.fs_prefix, skel->maps.fs_spread,
		skel->maps.fs_hot, skel->maps.fs_stats,
	};
	/* The old slot's narrow cells and packed registers, and the wide
	 * layout's cells and byte registers (sketch_kind.h). */
	__u64 touch = fs_dp_packet_bytes(p), wide = fs_dp_packet_bytes_wide(p);
	size_t total = 0, naive;
	size_t i;

	bool defaults = p->cms_depth == FS_DEFAULT_CMS_DEPTH &&
			p->cms_log2_width == FS_DEFAULT_CMS_LOG2W &&
			p->hll_p == FS_DEFAULT_HLL_P;

	printf("Map memory per CPU at %s sizes (eps %.3g %%, delta %.3g %%, p %u)\n\n",
	       defaults ? "the default" : "these",
	       100 * fs_cms_epsilon_of(1U << p->cms_log2_width),
	       100 * fs_cms_delta_of(p->cms_depth), p->hll_p);
	for (i = 0; i < FS_ARRAY_SIZE(datapath); i++) {
		size_t b = bench_percpu_bytes(datapath[i]);

		printf("  %-14s %6u x %5u B  %8zu KiB\n", bpf_map__name(datapath[i]),
		       bpf_map__max_entries(datapath[i]),
		       bpf_map__value_size(datapath[i]), b / 1024);
		total += b;
	}
	naive = bench_percpu_bytes(skel->maps.naive_cms) +
		bench_percpu_bytes(skel->maps.naive_hll);
	printf("  %-33s %8zu KiB   target <= 2048 KiB: %s\n", "total per CPU",
	       total / 1024, bench_verdict(total <= 2 << 20));
	printf("  (the naive reference's maps: %zu KiB per CPU)\n", naive / 1024);
	printf("  %-33s %8.1f KiB   target <= %.1f KiB (a third of the wide layout's %.0f KiB): %s\n\n",
	       "a packet can touch per CPU", touch / 1024.0, wide / 3 / 1024.0,
	       wide / 1024.0, bench_verdict(3 * touch <= wide));
}

/*
 * Cache lines one packet touches, counted from the layout (64-byte
 * lines), not measured.  "Sketch" lines are random per flow: d Count-Min
 * cells (16 bytes each; rows are 2^log2w cells apart, so every row's cell
 * is on its own line) and 3 HyperLogLog registers (one byte each, in three
 * sketches 2^p bytes apart).  In fs_cms/fs_hll a cell's chunk pointer
 * comes from a per-CPU array of a few tens of chunk pointers that stays
 * hot; the naive maps have one element per cell and per register, so each
 * of those costs a random line for its per-CPU pointer as well as one for
 * its value.  "Fixed" lines are the same for every packet: fs_ctl (one
 * line, read only) and fs_hot (this CPU's one 64-byte line: rx, sketched
 * and both slots' tagged totals, maps.h).  fs_stats (cold counters) is
 * touched only by the frames it counts (not IP, malformed, non-first
 * fragments) and by reports, none of them in the benchmark's traffic.  The packet's own header lines and
 * the read-only hash key (fs_hash_key, 304 bytes) are the same for all
 * and left out.
 */
static void bench_print_lines(const struct fs_sketch_params *p)
{
	__u32 random = p->cms_depth + FS_HLL_NSKETCH;
	struct {
		const char *name;
		__u32 random, fixed;
		const char *fixed_what;
	} rows[] = {
		{ "parse only", 0, 1, "hot: rx" },
		{ "floor (cells only)", random, 1, "hot: rx" },
		{ "full datapath", random, FS_FIXED_LINES_PER_PACKET,
		  "ctl; hot: rx, sketched, totals; ifslot; ifcount" },
		{ "naive (FNV-1a/row)", 2 * random, 1, "hot: rx, sketched, totals" },
	};
	size_t i;

	printf("Cache lines a packet touches, from the layout (d = %u cells, %u registers)\n\n",
	       p->cms_depth, FS_HLL_NSKETCH);
	printf("  %-20s %7s %6s %6s\n", "layout", "sketch", "fixed", "total");
	for (i = 0; i < FS_ARRAY_SIZE(rows); i++)
		printf("  %-20s %7u %6u %6u   (%s)\n", rows[i].name, rows[i].random,
		       rows[i].fixed, rows[i].random + rows[i].fixed, rows[i].fixed_what);
	printf("  (sketch lines are random per flow; the naive maps pay a pointer line\n"
	       "   and a value line per cell and register)\n\n");
}

static void bench_usage(FILE *out)
{
	fprintf(out,
		"usage: fs-bench [--repeat N] [--rounds R] [--candidates C] [--hh-fraction PHI]\n"
		"                [--depth D] [--detect-prefix D,L,T] [--detect-spread D,L,S]\n"
		"  --repeat N          runs per BPF_PROG_TEST_RUN call (default 1000000)\n"
		"  --rounds R          measurements per figure, fastest kept (default 7)\n"
		"  --candidates C      heavy-hitter candidates a top query ranks (default 1000)\n"
		"  --hh-fraction PHI   report flows above PHI of a round, as the daemon\n"
		"                      does of a window (default 0.001)\n"
		"  --depth D           Count-Min rows, 1..%u (default %u): what a smaller\n"
		"                      delta buys per packet\n",
		FS_CMS_MAX_DEPTH, FS_DEFAULT_CMS_DEPTH);
	bd_usage(out);
}

static int bench_parse_u32(const char *s, const char *what, __u32 min,
			   __u32 *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || !*s || s[0] == '-' || v < min || v > 0xffffffffUL) {
		fprintf(stderr, "fs-bench: %s must be an integer of at least %u, not \"%s\".\n",
			what, min, s);
		return -EINVAL;
	}
	*out = (__u32)v;
	return 0;
}

static int bench_parse_args(int argc, char **argv, struct bench_opts *o)
{
	static const struct option longopts[] = {
		{ "repeat", required_argument, NULL, 'r' },
		{ "rounds", required_argument, NULL, 'n' },
		{ "candidates", required_argument, NULL, 'c' },
		{ "hh-fraction", required_argument, NULL, 'f' },
		{ "depth", required_argument, NULL, 'd' },
		{ "detect-prefix", required_argument, NULL, 'P' },
		{ "detect-spread", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	char *end;
	int c, err = 0;

	opterr = 0;
	while (!err && (c = getopt_long(argc, argv, "r:n:c:f:d:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			err = bench_parse_u32(optarg, "--repeat", 1, &o->repeat);
			break;
		case 'n':
			err = bench_parse_u32(optarg, "--rounds", 1, &o->rounds);
			break;
		case 'c':
			err = bench_parse_u32(optarg, "--candidates", 1, &o->candidates);
			break;
		case 'd':
			err = bench_parse_u32(optarg, "--depth", 1, &o->depth);
			if (!err && o->depth > FS_CMS_MAX_DEPTH) {
				fprintf(stderr, "fs-bench: --depth must be at most %u, not %u.\n",
					FS_CMS_MAX_DEPTH, o->depth);
				err = -EINVAL;
			}
			break;
		case 'f':
			o->hh_fraction = strtod(optarg, &end);
			if (*end || !*optarg || !(o->hh_fraction > 0 && o->hh_fraction <= 1)) {
				fprintf(stderr, "fs-bench: --hh-fraction must be a number in (0, 1], not \"%s\".\n",
					optarg);
				err = -EINVAL;
			}
			break;
		case 'P':
		case 'S':
			err = bd_parse("fs-bench", c == 'P', optarg, &o->detect);
			break;
		case 'h':
			bench_usage(stdout);
			exit(0);
		default:
			/* One line, instead of getopt's and a usage block. */
			fprintf(stderr, "fs-bench: '%s' is not an option or lacks its value (see --help)\n",
				argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (!err && optind < argc) {
		fprintf(stderr, "fs-bench: unexpected argument \"%s\".\n", argv[optind]);
		return -EINVAL;
	}
	if (!err && o->candidates > BENCH_REFILL_RUNS) {
		fprintf(stderr, "fs-bench: --candidates must be at most %u, the flows a benchmark window sends.\n",
			BENCH_REFILL_RUNS);
		return -EINVAL;
	}
	return err;
}

#include "bench_blocklist.h"

int main(int argc, char **argv)
{
	struct bench_opts o = {
		.repeat = 1000000,
		.rounds = 7,
		.candidates = 1000,
		.depth = FS_DEFAULT_CMS_DEPTH,
		.hh_fraction = 0.001,
		.detect = BD_DEFAULTS,
	};
	struct fs_sketch_params p;
	double best[PROG_MAX], dbest[1 + BENCH_NDETECT];
	double sab_med[BENCH_SAB_NV], sab_lo[BENCH_SAB_NV], sab_hi[BENCH_SAB_NV];
	struct bench *skel = NULL;
	int err;

	if (bench_parse_args(argc, argv, &o))
		return 2;
	err = bench_load(&skel, &p, &o);
	if (err)
		return 1;

	printf("flowsketch benchmark: ratios, not absolute times, are meaningful on shared machines.\n\n");
	err = bench_datapath(skel, &o, best);
	if (err)
		goto out;
	bench_print_datapath(best, &o, &p);
	err = bench_detect(skel, &p, &o, dbest);
	if (err)
		goto out;
	bench_print_detect(dbest, best[PROG_BASE], &o);
	err = bench_sample_ab(skel, &p, &o, sab_med, sab_lo, sab_hi);
	if (err)
		goto out;
	err = bench_daemon(skel, &p, &o);
	if (err)
		goto out;
	bench_print_memory(skel, &p);
	bench_print_lines(&p);
	err = bench_blocklist(&p, &o);
out:
	bench__destroy(skel);
	return err ? 1 : 0;
}
