// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * fs-tpbench - what the tracepoint frontends cost per packet on live
 * traffic, each against its own parse-only baseline in the same run.
 *
 * The egress frontend (tp_btf/net_dev_start_xmit, bpf/egress.bpf.c) and
 * the ingress one for interfaces XDP should not hold (tp_btf/
 * netif_receive_skb, fs_ingress_tp) both run fs_skb_frontend(): the
 * fs_ifaces lookup, a bpf_probe_read_kernel() copy of the headers, then
 * the datapath XDP runs.  bpf/bench_tp.bpf.c has each hook's frontend
 * (full) and its stages (empty, filter, copy, parse only); this tool
 * attaches them one at a time while its generator (tools/bench_live.h,
 * the traffic of fs-livebench) sends through a veth pair in namespaces of
 * their own:
 *
 *   egress   on the sending veth (--tx-iface in --tx-netns): the frames
 *            the generator's AF_PACKET socket sends through its qdisc
 *   ingress  on the receiving veth (--rx-iface in --rx-netns), which has
 *            no XDP program: the frames its stack receives
 *
 * and reads each one's cost from the kernel's run-time statistics
 * (BPF_ENABLE_STATS, held open for the run; no sysctl is left changed):
 *
 *     cost = delta run_time_ns / delta run_cnt    over --steady seconds
 *
 * Rounds interleave the ten programs (the order turns every round), and
 * the figure per program is the median over rounds, with the smallest and
 * largest round beside it.  A phase ends when the program has run for
 * every frame the generator sent (the drain); a tracepoint fires for every
 * device of every namespace, so the run count may also hold a few frames
 * of the host's own devices, which cost the program one filter miss:
 * their number is printed.
 *
 * One object is loaded once for the run (its maps warm, as under a
 * daemon that has run a while); fs_ifaces names both veths (the key is
 * the index and the namespace's inode, maps.h) and fs_ctl is set up as the
 * daemon does it (window start, report fraction; no blocklist), and the
 * windows are closed every --window ms with the daemon's protocol
 * (user/flowsketchd/rotation.c): window start, window_seq + 1, an
 * fs_barrier update for the RCU grace period, the ring buffer drained,
 * done_seq, and the old slot's chunks read and zeroed on every CPU.
 *
 * The generator and the measured program share a CPU (the sender's; veth
 * receives in its softirq); this thread, which rotates and reads the
 * statistics, is pinned to another one when there is one.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "flowsketch/params.h"
#include "flowsketch/maps.h"
#include "flowsketch/hash.h"
#include "sketch.h"
#include "datapath_setup.h"
#include "bench_tp.skel.h"
#include "bench_live.h"

#define TPB_DRAIN_NS 10000000000ULL	/* every frame must have run within 10 s */
#define TPB_POLL_NS 1000000ULL		/* main loop step, 1 ms */
#define TPB_MAX_ROUNDS 64

enum tpb_hook { TH_EGRESS, TH_INGRESS, TH_MAX };
enum tpb_prog { TP_EMPTY, TP_FILTER, TP_COPY, TP_PARSE, TP_FULL, TP_MAX };

static const char *const hook_names[TH_MAX] = { "egress", "ingress" };
static const char *const prog_names[TP_MAX] = {
	"empty", "filter", "copy", "parse only", "full",
};

struct tpb_opts {
	const char *rx_netns, *rx_iface, *tx_netns, *tx_iface;
	__u32 rounds;
	double steady_s;
	__u32 flows;
	double zipf;
	double ipv6_share;
	__u64 seed;
	__u32 window_ms;
	double hh_fraction;
	__u32 depth;
};

struct sample {
	double ns;		/* per run */
	__u64 runs;		/* the program's runs in the phase */
	__u64 sent;		/* frames the generator sent in it */
	double seconds;		/* wall time of the phase's sending */
};

struct tpb {
	const struct tpb_opts *o;
	struct gen *g;
	int ncpus;
	struct bench_tp *skel;
	struct fs_sketch_params p;
	struct fs_ctl *ctl;		/* mmap of fs_ctl[0] */
	struct ring_buffer *rb;
	void *value;			/* one chunk, all CPUs */
	__u64 seq, next_close_ns;
	__u64 windows, records;
	int prog_fd;			/* the program attached, for the drain */
	struct stat_snap at_start;
	__u64 sent_at_start;
};

static struct bpf_program *prog_of(struct bench_tp *s, enum tpb_hook h,
				   enum tpb_prog i)
{
	struct bpf_program *const progs[TH_MAX][TP_MAX] = {
		{ s->progs.tpb_eg_empty, s->progs.tpb_eg_filter, s->progs.tpb_eg_copy,
		  s->progs.tpb_eg_parse, s->progs.tpb_eg_full },
		{ s->progs.tpb_in_empty, s->progs.tpb_in_filter, s->progs.tpb_in_copy,
		  s->progs.tpb_in_parse, s->progs.tpb_in_full },
	};

	return progs[h][i];
}

static int count_record(void *ctx, void *data, size_t size)
{
	struct tpb *T = ctx;

	T->records++;
	return 0;
}

static int netns_inode(const char *name, __u32 *ino)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	if (stat(path, &st))
		return -errno;
	*ino = (__u32)st.st_ino;
	return 0;
}

/* The object, loaded once: the daemon's sizes and hash key, fs_ifaces
 * naming both veths, fs_ctl as the daemon starts it. */
static int tpb_load(struct tpb *T, const struct fs_tp_iface *ifaces, int n)
{
	struct fs_ctl ctl = {
		.hh_phi_q32 = fs_hh_phi_q32(T->o->hh_fraction),
		.window_start_ns = now_ns(),
	};
	struct fs_hash_secret secret;
	long page = sysconf(_SC_PAGESIZE);
	__u32 zero = 0, one = 1;
	int i, err;

	if (getrandom(&secret, sizeof(secret), 0) < 0)
		return -errno;
	fs_params_init(&T->p, T->o->depth, FS_DEFAULT_CMS_LOG2W,
		       FS_DEFAULT_HLL_P, 0, &secret);
	T->skel = bench_tp__open();
	if (!T->skel)
		return -errno ? -errno : -ENOENT;
	err = FS_DATAPATH_SETUP(T->skel, &T->p, false);
	if (err)
		return err;
	err = bench_tp__load(T->skel);
	if (err)
		return err;
	for (i = 0; i < n; i++)
		if (bpf_map_update_elem(bpf_map__fd(T->skel->maps.fs_ifaces),
					&ifaces[i], &one, BPF_ANY))
			return -errno;
	if (bpf_map_update_elem(bpf_map__fd(T->skel->maps.fs_ctl), &zero, &ctl, 0))
		return -errno;
	T->ctl = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED,
		      bpf_map__fd(T->skel->maps.fs_ctl), 0);
	if (T->ctl == MAP_FAILED) {
		T->ctl = NULL;
		return -errno;
	}
	T->rb = ring_buffer__new(bpf_map__fd(T->skel->maps.fs_reports),
				 count_record, T, NULL);
	if (!T->rb)
		return -errno;
	T->seq = 0;
	T->next_close_ns = ctl.window_start_ns + (__u64)T->o->window_ms * 1000000ULL;
	return 0;
}

static void tpb_unload(struct tpb *T)
{
	ring_buffer__free(T->rb);
	T->rb = NULL;
	if (T->ctl)
		munmap(T->ctl, (size_t)sysconf(_SC_PAGESIZE));
	T->ctl = NULL;
	bench_tp__destroy(T->skel);
	T->skel = NULL;
}

/* Read then zero chunks [first, last] of fd on every CPU, as the daemon
 * folds and zeroes a closed slot. */
static int zero_range(struct tpb *T, int fd, __u32 first, __u32 last, size_t size)
{
	__u32 k;

	for (k = first; k <= last; k++) {
		if (bpf_map_lookup_elem(fd, &k, T->value))
			return -errno;
		memset(T->value, 0, (size_t)T->ncpus * size);
		if (bpf_map_update_elem(fd, &k, T->value, BPF_EXIST))
			return -errno;
	}
	return 0;
}

/* Close the current window the daemon's way (header). */
static int tpb_rotate(struct tpb *T)
{
	const struct fs_sketch_params *p = &T->p;
	__u32 slot = (__u32)(T->seq % FS_NSLOTS), zero = 0;
	int bifd = bpf_map__fd(T->skel->maps.fs_barrier_inner);
	__u64 cell0 = fs_cms_cell_number(p, slot, 0, 0);
	__u64 reg0 = fs_hll_register_number(p, slot, 0, 0);
	__u64 old = T->seq;
	int err;

	__atomic_store_n(&T->ctl->window_start_ns, now_ns(), __ATOMIC_RELEASE);
	__atomic_store_n(&T->ctl->window_seq, old + 1, __ATOMIC_RELEASE);
	T->seq = old + 1;
	if (bpf_map_update_elem(bpf_map__fd(T->skel->maps.fs_barrier), &zero,
				&bifd, BPF_ANY))
		return -errno;
	ring_buffer__consume(T->rb);
	__atomic_store_n(&T->ctl->done_seq, old + 1, __ATOMIC_RELEASE);
	err = zero_range(T, bpf_map__fd(T->skel->maps.fs_cms),
			 (__u32)(cell0 >> FS_CMS_CHUNK_SHIFT),
			 (__u32)((cell0 + fs_cms_cells_per_slot(p) - 1) >> FS_CMS_CHUNK_SHIFT),
			 sizeof(struct fs_cms_chunk));
	if (!err)
		err = zero_range(T, bpf_map__fd(T->skel->maps.fs_hll),
				 (__u32)(reg0 >> FS_HLL_CHUNK_SHIFT),
				 (__u32)((reg0 + fs_hll_regs_per_slot(p) - 1) >> FS_HLL_CHUNK_SHIFT),
				 sizeof(struct fs_hll_chunk));
	if (!err)
		T->windows++;
	return err;
}

/* Every frame sent since the phase began has run through the program. */
static bool tpb_drained(struct tpb *T)
{
	struct stat_snap s;

	if (!atomic_load(&T->g->idle) || prog_stats(T->prog_fd, &s))
		return false;
	return s.run_cnt - T->at_start.run_cnt >=
	       atomic_load(&T->g->sent) - T->sent_at_start;
}

/* Wait until deadline_ns, or (0) until drained, closing windows on time
 * meanwhile. */
static int tpb_wait(struct tpb *T, __u64 deadline_ns, const char *what)
{
	__u64 start = now_ns();

	for (;;) {
		__u64 t = now_ns();
		int err;

		if (atomic_load(&T->g->err)) {
			fprintf(stderr, "fs-tpbench: sending failed: %s.\n",
				strerror(atomic_load(&T->g->err)));
			return -EIO;
		}
		if (t >= T->next_close_ns) {
			err = tpb_rotate(T);
			if (err) {
				fprintf(stderr, "fs-tpbench: window close failed: %s.\n",
					strerror(-err));
				return err;
			}
			T->next_close_ns += (__u64)T->o->window_ms * 1000000ULL;
		}
		ring_buffer__consume(T->rb);
		if (deadline_ns && t >= deadline_ns)
			return 0;
		if (!deadline_ns && tpb_drained(T))
			return 0;
		if (!deadline_ns && t - start > TPB_DRAIN_NS) {
			struct stat_snap s = {};

			prog_stats(T->prog_fd, &s);
			fprintf(stderr, "fs-tpbench: %s: the program ran %llu times for %llu frames sent in 10 s.\n",
				what, (unsigned long long)(s.run_cnt - T->at_start.run_cnt),
				(unsigned long long)(atomic_load(&T->g->sent) - T->sent_at_start));
			return -ETIMEDOUT;
		}
		sleep_ns(TPB_POLL_NS);
	}
}

/* One program, one round: attach, --steady seconds of traffic, drain,
 * detach. */
static int tpb_measure(struct tpb *T, enum tpb_hook h, enum tpb_prog i,
		       struct sample *out)
{
	struct bpf_program *prog = prog_of(T->skel, h, i);
	char what[64];
	struct bpf_link *link;
	struct stat_snap b;
	__u64 t0, t1;
	int err;

	snprintf(what, sizeof(what), "%s %s", hook_names[h], prog_names[i]);
	T->prog_fd = bpf_program__fd(prog);
	link = bpf_program__attach(prog);
	if (!link) {
		err = -errno;
		fprintf(stderr, "fs-tpbench: cannot attach %s (%s): %s.\n", what,
			bpf_program__section_name(prog), strerror(-err));
		return err;
	}
	/* The generator is idle and every earlier frame has run. */
	err = prog_stats(T->prog_fd, &T->at_start);
	if (err)
		goto out;
	T->sent_at_start = atomic_load(&T->g->sent);
	t0 = now_ns();
	atomic_store(&T->g->budget, ~0ULL);
	atomic_store(&T->g->idle, 0);
	err = tpb_wait(T, t0 + (__u64)(T->o->steady_s * 1e9), what);
	atomic_store(&T->g->budget, atomic_load(&T->g->sent));
	if (!err)
		err = tpb_wait(T, 0, what);
	if (err)
		goto out;
	t1 = now_ns();
	err = prog_stats(T->prog_fd, &b);
	if (err)
		goto out;
	out->runs = b.run_cnt - T->at_start.run_cnt;
	out->sent = atomic_load(&T->g->sent) - T->sent_at_start;
	if (!out->runs || !out->sent) {
		fprintf(stderr, "fs-tpbench: %s: no frame ran (are bpf_stats on?).\n", what);
		err = -EIO;
		goto out;
	}
	out->ns = (double)(b.run_ns - T->at_start.run_ns) / (double)out->runs;
	out->seconds = (double)(t1 - t0) * 1e-9;
out:
	bpf_link__destroy(link);
	return err;
}

/* ------------------------------------------------------------ report */

static void tpb_report(const struct tpb *T, struct sample s[TH_MAX][TP_MAX][TPB_MAX_ROUNDS])
{
	const struct tpb_opts *o = T->o;
	double med[TH_MAX][TP_MAX];
	__u64 runs = 0, sent = 0, packets = 0;
	double secs = 0;
	int h, i;
	__u32 r;

	printf("Live tracepoint frontends: tp_btf programs on a veth pair (%s -> %s), kernel run-time statistics\n",
	       o->tx_netns, o->rx_netns);
	printf("(%u rounds, programs interleaved, one attached at a time; median of rounds, min..max)\n",
	       o->rounds);
	printf("traffic: %u flows, Zipf %.2f, %.0f %% IPv6, 64..191-byte frames; %.1f s per program and round;\n",
	       o->flows, o->zipf, 100 * o->ipv6_share, o->steady_s);
	printf("egress on the sending veth, ingress on the receiving one (no XDP); %u ms windows closed the daemon's way, phi %g\n\n",
	       o->window_ms, o->hh_fraction);
	printf("  %-7s %-10s %9s %9s %9s %11s %9s\n", "hook", "program", "ns/pkt",
	       "min", "max", "packets", "kpps");
	for (h = 0; h < TH_MAX; h++) {
		for (i = 0; i < TP_MAX; i++) {
			double v[TPB_MAX_ROUNDS], lo = 1e300, hi = 0, sec = 0;
			__u64 pk = 0;

			for (r = 0; r < o->rounds; r++) {
				const struct sample *x = &s[h][i][r];

				v[r] = x->ns;
				lo = v[r] < lo ? v[r] : lo;
				hi = v[r] > hi ? v[r] : hi;
				pk += x->runs;
				sec += x->seconds;
				runs += x->runs;
				sent += x->sent;
			}
			packets += pk;
			secs += sec;
			med[h][i] = printed1(median(v, o->rounds));
			printf("  %-7s %-10s %9.1f %9.1f %9.1f %11llu %9.1f\n",
			       hook_names[h], prog_names[i], med[h][i], lo, hi,
			       (unsigned long long)pk, sec > 0 ? (double)pk / sec / 1e3 : 0.0);
		}
	}
	printf("\n  generator: %.0f packets/s (%llu packets in %.1f s); the programs ran %llu times for them, %lld on other devices' frames\n",
	       secs > 0 ? (double)sent / secs : 0.0, (unsigned long long)sent, secs,
	       (unsigned long long)runs, (long long)(runs - sent));
	printf("  (packets: the program's runs; kpps: runs over the phase's wall time, sender and program on one CPU)\n\n");

	for (h = 0; h < TH_MAX; h++) {
		double full = med[h][TP_FULL], parse = med[h][TP_PARSE], e = med[h][TP_EMPTY];
		__u64 lo = ~0ULL, hi = 0;

		for (r = 0; r < o->rounds; r++)
			for (i = TP_PARSE; i <= TP_FULL; i++) {
				__u64 n = s[h][i][r].runs;

				lo = n < lo ? n : lo;
				hi = n > hi ? n : hi;
			}
		printf("  %s tracepoint: full %.1f ns, parse-only %.1f ns, full/parse %.2fx (net of empty %.2fx; %u rounds of %llu..%llu packets)\n",
		       hook_names[h], full, parse, parse > 0 ? full / parse : 0.0,
		       parse - e > 0 ? (full - e) / (parse - e) : 0.0, o->rounds,
		       (unsigned long long)lo, (unsigned long long)hi);
	}
	for (h = 0; h < TH_MAX; h++)
		printf("  %s, what each step adds: filter %.1f ns, copy %.1f ns, parse %.1f ns, sketch update %.1f ns\n",
		       hook_names[h], med[h][TP_FILTER] - med[h][TP_EMPTY],
		       med[h][TP_COPY] - med[h][TP_FILTER],
		       med[h][TP_PARSE] - med[h][TP_COPY],
		       med[h][TP_FULL] - med[h][TP_PARSE]);
	printf("  (empty: the tracepoint's BPF call and the run-time statistics by themselves; filter: the fs_ifaces\n"
	       "   lookup; copy: + bpf_probe_read_kernel() of the headers; parse only: + fs_datapath_parse_frame();\n"
	       "   full: fs_skb_frontend(), the frontend itself; \"sketch update\": full - parse only)\n");
	printf("  full: %llu windows closed, %llu heavy-hitter reports read\n\n",
	       (unsigned long long)T->windows, (unsigned long long)T->records);
}

/* ------------------------------------------------------------ options */

static void usage(FILE *out)
{
	fprintf(out,
		"usage: fs-tpbench --rx-netns NS --rx-iface IF --tx-netns NS --tx-iface IF [options]\n"
		"  (scripts: bench/live.sh --tracepoints creates the namespaces and the veth pair)\n"
		"  --rounds R          rounds, programs interleaved (default 5, max %u)\n"
		"  --steady SECONDS    traffic per program and round (default 0.5)\n"
		"  --flows F           flows (default 100000)\n"
		"  --zipf S            Zipf exponent (default 1.1)\n"
		"  --ipv6-share F      fraction of IPv6 flows (default 0.3)\n"
		"  --seed X            traffic seed (default 1)\n"
		"  --window MS         window (default 1000, the daemon's)\n"
		"  --hh-fraction PHI   report fraction (default 0.001)\n"
		"  --depth D           Count-Min rows (default %u)\n",
		TPB_MAX_ROUNDS, FS_DEFAULT_CMS_DEPTH);
}

static int parse_num(const char *s, const char *what, double lo, double hi,
		     double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !*s || !(v >= lo && v <= hi)) {
		fprintf(stderr, "fs-tpbench: %s must be a number from %g to %g, not \"%s\".\n",
			what, lo, hi, s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int parse_int(const char *s, const char *what, double lo, double hi,
		     __u32 *out)
{
	double v;
	int err = parse_num(s, what, lo, hi, &v);

	if (!err && v != (double)(__u32)v) {
		fprintf(stderr, "fs-tpbench: %s must be a whole number, not \"%s\".\n",
			what, s);
		return -EINVAL;
	}
	if (!err)
		*out = (__u32)v;
	return err;
}

static int parse_args(int argc, char **argv, struct tpb_opts *o)
{
	static const struct option longopts[] = {
		{ "rx-netns", required_argument, NULL, 'R' },
		{ "rx-iface", required_argument, NULL, 'r' },
		{ "tx-netns", required_argument, NULL, 'T' },
		{ "tx-iface", required_argument, NULL, 't' },
		{ "rounds", required_argument, NULL, 'n' },
		{ "steady", required_argument, NULL, 's' },
		{ "flows", required_argument, NULL, 'f' },
		{ "zipf", required_argument, NULL, 'z' },
		{ "ipv6-share", required_argument, NULL, '6' },
		{ "seed", required_argument, NULL, 'S' },
		{ "window", required_argument, NULL, 'w' },
		{ "hh-fraction", required_argument, NULL, 'p' },
		{ "depth", required_argument, NULL, 'd' },
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
		case 'n': err = parse_int(optarg, "--rounds", 1, TPB_MAX_ROUNDS, &o->rounds); break;
		case 's': err = parse_num(optarg, "--steady", 0.01, 600, &o->steady_s); break;
		case 'f': err = parse_int(optarg, "--flows", 1, 1e6, &o->flows); break;
		case 'z': err = parse_num(optarg, "--zipf", 0, 10, &o->zipf); break;
		case '6': err = parse_num(optarg, "--ipv6-share", 0, 1, &o->ipv6_share); break;
		case 'S':
			err = parse_num(optarg, "--seed", 0, 1e18, &v);
			o->seed = (__u64)v;
			break;
		case 'w': err = parse_int(optarg, "--window", 10, 3600000, &o->window_ms); break;
		case 'p':
			err = parse_num(optarg, "--hh-fraction", 1e-9, 1, &o->hh_fraction);
			break;
		case 'd': err = parse_int(optarg, "--depth", 1, FS_CMS_MAX_DEPTH, &o->depth); break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			fprintf(stderr, "fs-tpbench: '%s' is not an option or lacks its value (see --help)\n",
				argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (err)
		return err;
	if (optind < argc) {
		fprintf(stderr, "fs-tpbench: unexpected argument \"%s\".\n", argv[optind]);
		return -EINVAL;
	}
	if (!o->rx_netns || !o->rx_iface || !o->tx_netns || !o->tx_iface) {
		fprintf(stderr, "fs-tpbench: --rx-netns, --rx-iface, --tx-netns and --tx-iface are required.\n");
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct sample samples[TH_MAX][TP_MAX][TPB_MAX_ROUNDS];
	struct tpb_opts o = {
		.rounds = 5, .steady_s = 0.5, .flows = 100000, .zipf = 1.1,
		.ipv6_share = 0.3, .seed = 1, .window_ms = 1000,
		.hh_fraction = 0.001, .depth = FS_DEFAULT_CMS_DEPTH,
	};
	struct sock_req q = { .fd = -1 };
	static struct gen g;
	struct tpb T = { .o = &o, .g = &g };
	struct fs_tp_iface ifaces[2] = {};
	struct sockaddr_ll sll;
	socklen_t sll_len = sizeof(sll);
	pthread_t t;
	int stats_fd = -1, err, ncpu_online, rc = 1, k;
	bool gen_started = false;
	__u32 r;

	if (parse_args(argc, argv, &o))
		return 2;
	err = netns_inode(o.tx_netns, &ifaces[0].netns_ino);
	if (!err)
		err = netns_inode(o.rx_netns, &ifaces[1].netns_ino);
	if (!err)
		err = enter_netns(o.rx_netns);
	if (err) {
		fprintf(stderr, "fs-tpbench: cannot enter netns %s or %s: %s.\n",
			o.tx_netns, o.rx_netns, strerror(-err));
		return 1;
	}
	ifaces[1].ifindex = if_nametoindex(o.rx_iface);
	if (!ifaces[1].ifindex) {
		fprintf(stderr, "fs-tpbench: no interface %s in netns %s.\n",
			o.rx_iface, o.rx_netns);
		return 1;
	}
	T.ncpus = libbpf_num_possible_cpus();
	if (T.ncpus <= 0)
		return 1;
	T.value = calloc((size_t)T.ncpus, sizeof(struct fs_cms_chunk));
	q.netns = o.tx_netns;
	q.ifname = o.tx_iface;
	if (!T.value || pthread_create(&t, NULL, open_sock_main, &q) ||
	    pthread_join(t, NULL) || q.err) {
		fprintf(stderr, "fs-tpbench: cannot open a packet socket on %s in %s: %s.\n",
			o.tx_iface, o.tx_netns, strerror(q.err ? -q.err : ENOMEM));
		return 1;
	}
	g.fd = q.fd;
	memcpy(g.src_mac, q.mac, ETH_ALEN);
	if (getsockname(g.fd, (struct sockaddr *)&sll, &sll_len) || sll.sll_ifindex <= 0) {
		fprintf(stderr, "fs-tpbench: cannot tell %s's index.\n", o.tx_iface);
		goto out;
	}
	ifaces[0].ifindex = (__u32)sll.sll_ifindex;
	{
		int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		err = s < 0 ? -errno : iface_mac(s, o.rx_iface, g.dst_mac);
		if (s >= 0)
			close(s);
		if (err) {
			fprintf(stderr, "fs-tpbench: cannot read %s's MAC: %s.\n",
				o.rx_iface, strerror(-err));
			goto out;
		}
	}
	g.flows = o.flows;
	g.zipf = o.zipf;
	g.ipv6_share = o.ipv6_share;
	g.seed = o.seed;
	if (gen_prepare(&g)) {
		fprintf(stderr, "fs-tpbench: out of memory for the frames.\n");
		goto out;
	}
	err = tpb_load(&T, ifaces, 2);
	if (err) {
		fprintf(stderr, "fs-tpbench: cannot load bench_tp.bpf.o: %s.\n", strerror(-err));
		goto out;
	}
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0) {
		fprintf(stderr, "fs-tpbench: cannot enable BPF run-time statistics: %s.\n",
			strerror(errno));
		goto out;
	}
	ncpu_online = (int)sysconf(_SC_NPROCESSORS_ONLN);
	g.cpu = ncpu_online > 1 ? ncpu_online - 1 : -1;
	if (ncpu_online > 1)
		pin_to(0);
	atomic_store(&g.idle, 1);
	if (pthread_create(&g.thread, NULL, gen_main, &g)) {
		fprintf(stderr, "fs-tpbench: cannot start the generator.\n");
		goto out;
	}
	gen_started = true;

	for (r = 0; r < o.rounds; r++) {
		for (k = 0; k < TH_MAX * TP_MAX; k++) {
			/* Interleaved, and the order turns every round so no
			 * program always follows the same one. */
			int j = (int)((k + r) % (TH_MAX * TP_MAX));

			err = tpb_measure(&T, (enum tpb_hook)(j / TP_MAX),
					  (enum tpb_prog)(j % TP_MAX),
					  &samples[j / TP_MAX][j % TP_MAX][r]);
			if (err)
				goto out;
		}
	}
	rc = 0;
out:
	if (gen_started) {
		atomic_store(&g.stop, 1);
		pthread_join(g.thread, NULL);
	}
	if (!rc)
		tpb_report(&T, samples);
	tpb_unload(&T);
	if (stats_fd >= 0)
		close(stats_fd);
	close(g.fd);
	free(T.value);
	return rc;
}
