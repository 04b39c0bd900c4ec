// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * fs-tpbench - what the tracepoint frontends cost per packet on live
 * traffic, each against its own parse-only baseline in the same run.
 *
 * The egress frontend (tp_btf/net_dev_start_xmit, bpf/egress.bpf.c) and
 * the ingress one for interfaces XDP should not hold (tp_btf/
 * netif_receive_skb, fs_ingress_tp) both run fs_skb_frontend(): the
 * fs_ifaces lookup, a bpf_probe_read_kernel() copy of the headers, then
 * the datapath XDP runs.  bench/bpf/bench_tp.bpf.c has each hook's frontend
 * (full) and its stages (empty, filter, copy, parse only); this tool
 * attaches them one at a time while its generator (bench_live.h,
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
 * (user/flowsketchd/windows/rotation.c): window start, window_seq + 1, an
 * fs_barrier update for the RCU grace period, the ring buffer drained,
 * done_seq, and the old slot's chunks read and zeroed on every CPU.
 *
 * The generator and the measured program share a CPU (the sender's; veth
 * receives in its softirq); this thread, which rotates and reads the
 * statistics, is pinned to another one when there is one.  What this tool
 * shares with fs-livebench (options, setup, windows, phases, the table's
 * rows) is in bench_live*.h.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define LB_TOOL "fs-tpbench"

#include "flowsketch/params.h"
#include "flowsketch/maps.h"
#include "sketch.h"
#include "datapath_setup.h"
#include "bench_tp.skel.h"
#include "bench_live.h"
#include "bench_live_opts.h"
#include "bench_live_run.h"

enum tpb_hook { TH_EGRESS, TH_INGRESS, TH_MAX };
enum tpb_prog { TP_EMPTY, TP_FILTER, TP_COPY, TP_PARSE, TP_FULL, TP_MAX };

static const char *const hook_names[TH_MAX] = { "egress", "ingress" };
static const char *const prog_names[TP_MAX] = {
	"empty", "filter", "copy", "parse only", "full",
};

struct tpb {
	struct lb_run r;
	struct bench_tp *skel;
	struct lb_sample samples[TH_MAX][TP_MAX][LB_MAX_ROUNDS];
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
		.hh_phi_q32 = fs_hh_phi_q32(T->r.o->hh_fraction),
		.window_start_ns = now_ns(),
	};
	__u32 one = 1;
	int i, err;

	err = lb_params(&T->r);
	if (err)
		return err;
	T->skel = bench_tp__open();
	if (!T->skel)
		return -errno ? -errno : -ENOENT;
	err = FS_DATAPATH_SETUP(T->skel, &T->r.p, false);
	if (err)
		return err;
	err = bench_tp__load(T->skel);
	if (err)
		return err;
	for (i = 0; i < n; i++)
		if (bpf_map_update_elem(bpf_map__fd(T->skel->maps.fs_ifaces),
					&ifaces[i], &one, BPF_ANY))
			return -errno;
	err = lb_windows_open(&T->r, LB_MAPS(T->skel), &ctl);
	T->r.next_close_ns = ctl.window_start_ns + lb_window_ns(&T->r);
	return err;
}

static void tpb_unload(struct tpb *T)
{
	lb_windows_close(&T->r);
	bench_tp__destroy(T->skel);
	T->skel = NULL;
}

/* One program, one round: attach, --steady seconds of traffic, drain,
 * detach. */
static int tpb_measure(void *ctx, int k, __u32 r)
{
	struct tpb *T = ctx;
	enum tpb_hook h = (enum tpb_hook)(k / TP_MAX);
	enum tpb_prog i = (enum tpb_prog)(k % TP_MAX);
	struct bpf_program *prog = prog_of(T->skel, h, i);
	char what[64];
	struct bpf_link *link;
	int err;

	snprintf(what, sizeof(what), "%s %s", hook_names[h], prog_names[i]);
	link = bpf_program__attach(prog);
	if (!link) {
		err = -errno;
		fprintf(stderr, "fs-tpbench: cannot attach %s (%s): %s.\n", what,
			bpf_program__section_name(prog), strerror(-err));
		return err;
	}
	/* The generator is idle and every earlier frame has run. */
	err = lb_mark(&T->r, bpf_program__fd(prog));
	if (!err)
		err = lb_steady(&T->r, &T->samples[h][i][r], what);
	bpf_link__destroy(link);
	return err;
}

/* ------------------------------------------------------------ report */

static void tpb_report(const struct tpb *T)
{
	const struct lb_opts *o = T->r.o;
	double med[TH_MAX][TP_MAX];
	struct lb_sample sum = { 0 };
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
	lb_table_head(7, "hook", 10, "program");
	for (h = 0; h < TH_MAX; h++)
		for (i = 0; i < TP_MAX; i++)
			med[h][i] = lb_table_row(7, hook_names[h], 10, prog_names[i],
						 T->samples[h][i], o->rounds, &sum);
	printf("\n  generator: %.0f packets/s (%llu packets in %.1f s); the programs ran %llu times for them, %lld on other devices' frames\n",
	       sum.seconds > 0 ? (double)sum.sent / sum.seconds : 0.0,
	       (unsigned long long)sum.sent, sum.seconds,
	       (unsigned long long)sum.runs, (long long)(sum.runs - sum.sent));
	printf("  (packets: the program's runs; kpps: runs over the phase's wall time, sender and program on one CPU)\n\n");

	for (h = 0; h < TH_MAX; h++) {
		double full = med[h][TP_FULL], parse = med[h][TP_PARSE], e = med[h][TP_EMPTY];
		__u64 lo = ~0ULL, hi = 0;

		for (r = 0; r < o->rounds; r++)
			for (i = TP_PARSE; i <= TP_FULL; i++) {
				__u64 n = T->samples[h][i][r].runs;

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
	       (unsigned long long)T->r.windows, (unsigned long long)T->r.records);
}

/* ------------------------------------------------------------ options */

static void usage(FILE *out)
{
	fprintf(out,
		"usage: fs-tpbench --rx-netns NS --rx-iface IF --tx-netns NS --tx-iface IF [options]\n"
		"  (scripts: bench/live.sh --tracepoints creates the namespaces and the veth pair)\n"
		"  --rounds R          rounds, programs interleaved (default 5, max %u)\n"
		"  --steady SECONDS    traffic per program and round (default 0.5)\n",
		LB_MAX_ROUNDS);
	lb_usage_traffic(out);
	fprintf(out,
		"  --window MS         window (default 1000, the daemon's)\n"
		"  --hh-fraction PHI   report fraction (default 0.001)\n"
		"  --depth D           Count-Min rows (default %u)\n",
		FS_DEFAULT_CMS_DEPTH);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = { LB_LONGOPTS, {} };
	struct lb_opts o = {
		.rounds = 5, .steady_s = 0.5, .flows = 100000, .zipf = 1.1,
		.ipv6_share = 0.3, .seed = 1, .window_ms = 1000,
		.hh_fraction = 0.001, .depth = FS_DEFAULT_CMS_DEPTH,
	};
	static struct tpb T;
	struct fs_tp_iface ifaces[2] = {};
	int err, rc = 1;

	if (lb_parse_args(argc, argv, longopts, &o, NULL, NULL, usage))
		return 2;
	T.r.o = &o;
	T.r.other_frames = true;	/* a tracepoint fires for every device */
	err = netns_inode(o.tx_netns, &ifaces[0].netns_ino);
	if (!err)
		err = netns_inode(o.rx_netns, &ifaces[1].netns_ino);
	if (err) {
		fprintf(stderr, "fs-tpbench: cannot enter netns %s or %s: %s.\n",
			o.tx_netns, o.rx_netns, strerror(-err));
		return 1;
	}
	if (lb_start(&T.r))
		goto out;
	ifaces[0].ifindex = (__u32)T.r.tx_ifindex;
	ifaces[1].ifindex = (__u32)T.r.rx_ifindex;
	err = tpb_load(&T, ifaces, 2);
	if (err) {
		fprintf(stderr, "fs-tpbench: cannot load bench_tp.bpf.o: %s.\n", strerror(-err));
		goto out;
	}
	if (!lb_rounds(&T.r, TH_MAX * TP_MAX, tpb_measure, &T))
		rc = 0;
out:
	lb_stop(&T.r);
	if (!rc)
		tpb_report(&T);
	tpb_unload(&T);
	lb_end(&T.r);
	return rc;
}
