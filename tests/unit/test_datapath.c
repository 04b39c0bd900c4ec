// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_datapath.c - the XDP datapath (bpf/flowsketch.bpf.c) on crafted
 * frames, through BPF_PROG_TEST_RUN.
 *
 * Ground truth is the frame itself: every test builds a frame with
 * pkt_build.h, writes down by hand the flow key it must produce, feeds that
 * key to the user-space model (user/lib/model.h, the same fs_sketch_update()
 * over plain memory) and then requires the per-CPU map memory of the CPU
 * the test ran on to be byte for byte the model's.  A wrong port offset, a
 * stray byte in the key, a packet counted twice or in the wrong slot all
 * show up as a difference.  Malformed frames must move exactly their own
 * counter and leave the sketches as they were.  Where the model cannot
 * help (a mistake of update.h is the model's too), the traffic is the
 * oracle: test_detect_planted counts its own planted spreaders and
 * prefixes (planted.h) and checks the detection sketches' estimates
 * against bounds it computes from the parameters.
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
#include <unistd.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <net/if.h>

#include "cpu_pin.h"
#include "flowsketch/maps.h"
#include "model.h"
#include "prefix_estimate.h"
#include "sketch.h"
#include "spread_estimate.h"

#include "flowsketch/packet_update.h"
#include "flowsketch.skel.h"
#include "datapath_setup.h"
#include "pkt_build.h"
#include "bursty.h"
#include "planted.h"
#include "rng.h"
#include "variant.h"

#define XDP_PASS_RET 2
/* fs_ctl.hh_phi_q32 for phi = 1 and 1/2. */
#define PHI_ONE (1ULL << 32)
#define PHI_HALF (1ULL << 31)
/* The smallest fraction: a threshold of one packet (byte) below 2^32 of
 * them, so every flow's first packet reports. */
#define PHI_MIN 1ULL

static const uint8_t a4_src[4] = { 10, 1, 2, 3 };
static const uint8_t a4_dst[4] = { 192, 0, 2, 9 };
static const uint8_t a6_src[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x01 };
static const uint8_t a6_dst[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0,
				    0, 0, 0, 0, 0xca, 0xfe, 0, 0x02 };

/* --- the datapath under test and its model ------------------------------ */

struct dp {
	struct flowsketch *skel;
	struct fs_model model;
	struct fs_sketch_params params;
	int ncpus;
	int cpu;			/* the CPU test runs execute on */
	void *percpu;			/* one lookup of a chunk: all CPUs */
	__u64 seq, phi_q32;
	struct ring_buffer *rb;
	int hold_reports;		/* leave records in the ring buffer */
	struct fs_hh_report reports[64];
	int nreports;
};

static struct fs_sketch_params make_params(int depth, int log2w, int p,
					   int conservative)
{
	struct fs_sketch_params params = {
		.magic = FS_PARAMS_MAGIC,
		.version = FS_PARAMS_VERSION,
		.cms_depth = (__u8)depth,
		.cms_log2_width = (__u8)log2w,
		.hll_p = (__u8)p,
		.flags = conservative ? FS_PARAM_F_CONSERVATIVE : 0,
		.nslots = FS_NSLOTS,
		/* A fixed secret: failures reproduce. */
		.secret = { 0x243f6a8885a308d3ULL, 0x13198a2e03707344ULL },
	};

	return params;
}

static int on_report(void *ctx, void *data, size_t size)
{
	struct dp *dp = ctx;

	if (size != sizeof(struct fs_hh_report) ||
	    dp->nreports >= (int)FS_ARRAY_SIZE(dp->reports))
		return -EINVAL;
	memcpy(&dp->reports[dp->nreports++], data, sizeof(struct fs_hh_report));
	return 0;
}

/*
 * Load the datapath with params; cms_entries/hll_entries 0 size the maps
 * from the params as the daemon does, anything else overrides them.
 */
static struct dp *dp_open_full(const struct fs_sketch_params *params,
			       __u32 cms_entries, __u32 hll_entries,
			       __u32 ring_bytes)
{
	struct dp *dp = calloc(1, sizeof(*dp));
	int err;

	assert_non_null(dp);
	dp->params = *params;
	dp->cpu = pin_to_current_cpu();
	assert_true(dp->cpu >= 0);
	dp->ncpus = libbpf_num_possible_cpus();
	assert_true(dp->ncpus > dp->cpu);
	dp->percpu = malloc((size_t)dp->ncpus * sizeof(struct fs_cms_chunk));
	assert_non_null(dp->percpu);

	dp->skel = flowsketch__open();
	assert_non_null(dp->skel);
	assert_int_equal(FS_DATAPATH_SETUP(dp->skel, params, false), 0);
	/* Smaller maps than the parameters need, to test the update's
	 * error path. */
	if (cms_entries)
		assert_int_equal(bpf_map__set_max_entries(dp->skel->maps.fs_cms,
							  cms_entries), 0);
	if (hll_entries)
		assert_int_equal(bpf_map__set_max_entries(dp->skel->maps.fs_hll,
							  hll_entries), 0);
	if (ring_bytes)
		assert_int_equal(bpf_map__set_max_entries(dp->skel->maps.fs_reports,
							  ring_bytes), 0);
	err = flowsketch__load(dp->skel);
	if (err)
		fail_msg("datapath does not load with depth %u log2w %u p %u%s: %d",
			 params->cms_depth, params->cms_log2_width,
			 params->hll_p,
			 params->flags & FS_PARAM_F_CONSERVATIVE ?
				 " conservative" : "", err);
	assert_int_equal(fs_model_init(&dp->model, params), 0);
	dp->rb = ring_buffer__new(bpf_map__fd(dp->skel->maps.fs_reports),
				  on_report, dp, NULL);
	assert_non_null(dp->rb);
	return dp;
}

static struct dp *dp_open(const struct fs_sketch_params *params)
{
	return dp_open_full(params, 0, 0, 0);
}

/* The daemon's default sketch (with the fixed secret). */
static struct fs_sketch_params default_params(void)
{
	return make_params(FS_DEFAULT_CMS_DEPTH, FS_DEFAULT_CMS_LOG2W,
			   FS_DEFAULT_HLL_P, 0);
}

static struct dp *dp_open_default(void)
{
	struct fs_sketch_params params = default_params();

	return dp_open(&params);
}

static struct dp *dp_open_sized(const struct fs_sketch_params *params,
				__u32 cms_entries, __u32 hll_entries)
{
	return dp_open_full(params, cms_entries, hll_entries, 0);
}

static struct dp *dp_open_ring(const struct fs_sketch_params *params,
			       __u32 ring_bytes)
{
	return dp_open_full(params, 0, 0, ring_bytes);
}

static void dp_close(struct dp *dp)
{
	ring_buffer__free(dp->rb);
	flowsketch__destroy(dp->skel);
	fs_model_free(&dp->model);
	free(dp->percpu);
	free(dp);
}

/* Window seq and report fraction phi_q32 / 2^32 (0: no reports). */
static void dp_set_ctl(struct dp *dp, __u64 seq, __u64 phi_q32)
{
	struct fs_ctl ctl = {
		.window_seq = seq,
		.hh_phi_q32 = phi_q32,
	};
	__u32 zero = 0;

	assert_int_equal(bpf_map_update_elem(bpf_map__fd(dp->skel->maps.fs_ctl),
					     &zero, &ctl, BPF_ANY), 0);
	dp->seq = seq;
	dp->phi_q32 = phi_q32;
}

/*
 * Run the program once on a frame; it must pass it.  ifindex 0: no ctx_in,
 * the frame arrives on the loopback device of this namespace (as the
 * kernel has it, test_ifcount_ingress_premise); else an xdp_md ctx_in
 * whose ingress_ifindex names a device of this namespace.
 */
static void dp_run_on(struct dp *dp, const struct pkt *p, __u32 ifindex)
{
	struct xdp_md md = {
		.data_end = (__u32)p->len,
		.ingress_ifindex = ifindex,
	};
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = p->data,
		.data_size_in = (__u32)p->len,
		.ctx_in = ifindex ? &md : NULL,
		.ctx_size_in = ifindex ? sizeof(md) : 0,
		.repeat = 1,
	);
	int err;

	err = bpf_prog_test_run_opts(bpf_program__fd(dp->skel->progs.fs_xdp),
				     &opts);
	if (err)
		fail_msg("BPF_PROG_TEST_RUN failed on a %zu-byte frame (ifindex %u): %d",
			 p->len, ifindex, err);
	assert_int_equal(opts.retval, XDP_PASS_RET);
	if (!dp->hold_reports)
		assert_true(ring_buffer__consume(dp->rb) >= 0);
}

static void dp_run(struct dp *dp, const struct pkt *p)
{
	dp_run_on(dp, p, 0);
}

/* The model's view of the same packet: key, frame length, current slot. */
static int model_count(struct dp *dp, const struct fs_flow_key *key,
		       size_t len, __u64 *hash)
{
	int report = fs_model_packet(&dp->model, key, len, dp->seq,
				     dp->phi_q32, hash);

	assert_true(report >= 0);
	return report;
}

/* Every counter since load, over CPUs: fs_stats, and rx and sketched
 * from fs_hot (maps.h), whose fs_stats elements must stay 0. */
static void dp_stats(struct dp *dp, __u64 stats[FS_STAT_MAX])
{
	int fd = bpf_map__fd(dp->skel->maps.fs_stats);
	__u64 *v = dp->percpu;
	struct fs_hot_line *hot = dp->percpu;
	__u32 i, zero = 0;
	int c;

	for (i = 0; i < FS_STAT_MAX; i++) {
		assert_int_equal(bpf_map_lookup_elem(fd, &i, v), 0);
		stats[i] = 0;
		for (c = 0; c < dp->ncpus; c++)
			stats[i] += v[c];
	}
	assert_int_equal(stats[FS_STAT_RX], 0);
	assert_int_equal(stats[FS_STAT_SKETCHED], 0);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(dp->skel->maps.fs_hot),
					     &zero, hot), 0);
	for (c = 0; c < dp->ncpus; c++) {
		stats[FS_STAT_RX] += hot[c].rx;
		stats[FS_STAT_SKETCHED] += hot[c].sketched;
	}
}

/* Window seq's totals as the rotation takes them: fs_hot's slot totals
 * tagged seq, over CPUs. */
static struct fs_window_totals dp_totals(struct dp *dp, __u64 seq)
{
	int fd = bpf_map__fd(dp->skel->maps.fs_hot);
	struct fs_hot_line *v = dp->percpu;
	struct fs_window_totals sum = { 0 };
	__u32 slot = (__u32)(seq % FS_NSLOTS), zero = 0;
	int c;

	assert_int_equal(bpf_map_lookup_elem(fd, &zero, v), 0);
	for (c = 0; c < dp->ncpus; c++) {
		if (v[c].slot[slot].seq != seq)
			continue;
		sum.packets += v[c].slot[slot].packets;
		sum.bytes += v[c].slot[slot].bytes;
	}
	return sum;
}

/*
 * fs_hot, CPU by CPU: the test CPU's line must equal the model's (its
 * tagged slot totals and sketched; rx is not the model's, it counts every
 * frame), every other CPU's must be zero.  A message or NULL.
 */
static const char *compare_hot(struct dp *dp, char *msg, size_t msglen)
{
	const struct fs_hot_line *v = dp->percpu;
	__u32 zero = 0;
	int c;

	if (bpf_map_lookup_elem(bpf_map__fd(dp->skel->maps.fs_hot), &zero,
				dp->percpu)) {
		snprintf(msg, msglen, "fs_hot: lookup failed");
		return msg;
	}
	for (c = 0; c < dp->ncpus; c++) {
		struct fs_hot_line want = { 0 };
		__u32 s;

		if (c == dp->cpu)
			want = dp->model.hot;
		want.rx = v[c].rx;
		if (c != dp->cpu && v[c].rx) {
			snprintf(msg, msglen, "cpu %d counted %llu frames", c,
				 (unsigned long long)v[c].rx);
			return msg;
		}
		if (v[c].sketched != want.sketched) {
			snprintf(msg, msglen, "cpu %d: sketched %llu, model %llu",
				 c, (unsigned long long)v[c].sketched,
				 (unsigned long long)want.sketched);
			return msg;
		}
		for (s = 0; s < FS_NSLOTS; s++)
			if (memcmp(&v[c].slot[s], &want.slot[s], sizeof(want.slot[s]))) {
				snprintf(msg, msglen,
					 "cpu %d slot %u: seq %llu packets %llu bytes %llu, model %llu %llu %llu",
					 c, s, (unsigned long long)v[c].slot[s].seq,
					 (unsigned long long)v[c].slot[s].packets,
					 (unsigned long long)v[c].slot[s].bytes,
					 (unsigned long long)want.slot[s].seq,
					 (unsigned long long)want.slot[s].packets,
					 (unsigned long long)want.slot[s].bytes);
				return msg;
			}
	}
	return NULL;
}

/*
 * Every chunk of map, CPU by CPU: the test CPU's copy must equal the
 * model's chunk, every other CPU's copy must be zero.  Returns a message
 * naming the first difference, or NULL.
 */
static const char *compare_map(struct dp *dp, struct bpf_map *map,
			       const void *model, __u32 nchunks,
			       size_t chunk_size, char *msg, size_t msglen)
{
	static const __u8 zeros[sizeof(struct fs_cms_chunk)];
	int fd = bpf_map__fd(map);
	__u32 i;
	int c;

	for (i = 0; i < nchunks; i++) {
		const __u8 *want = (const __u8 *)model + (size_t)i * chunk_size;

		if (bpf_map_lookup_elem(fd, &i, dp->percpu)) {
			snprintf(msg, msglen, "%s chunk %u: lookup failed",
				 bpf_map__name(map), i);
			return msg;
		}
		for (c = 0; c < dp->ncpus; c++) {
			const __u8 *got = (const __u8 *)dp->percpu +
					  (size_t)c * chunk_size;
			const __u8 *ref = c == dp->cpu ? want : zeros;
			size_t off;

			if (!memcmp(got, ref, chunk_size))
				continue;
			for (off = 0; got[off] == ref[off]; off++)
				;
			snprintf(msg, msglen,
				 "%s chunk %u cpu %d byte %zu: map 0x%02x, model 0x%02x",
				 bpf_map__name(map), i, c, off, got[off],
				 ref[off]);
			return msg;
		}
	}
	return NULL;
}

static void assert_state_matches_model(struct dp *dp, const char *what)
{
	char msg[256];

#define MAP_OF(NAME, name, KIND) [FS_DP_##NAME] = dp->skel->maps.fs_##name,
	struct bpf_map *maps[FS_NDPMAPS] = { FS_DP_MAPS(MAP_OF) };
#undef MAP_OF
	const char *diff = NULL;
	int m;

	/* Every datapath map byte for byte: the narrow cells, their flags
	 * and spills included, and the maps the layout leaves zero. */
	for (m = 0; m < FS_NDPMAPS && !diff; m++)
		diff = compare_map(dp, maps[m], dp->model.env.chunks[m],
				   dp->model.env.nchunks[m], FS_CHUNK_BYTES,
				   msg, sizeof(msg));
	if (diff)
		fail_msg("%s: sketch differs from the model: %s", what, diff);
	diff = compare_hot(dp, msg, sizeof(msg));
	if (diff)
		fail_msg("%s: fs_hot differs from the model: %s", what, diff);
}

/* From before to after, rx and counters a and b (maybe the same) moved by
 * one, every other counter not at all. */
static void assert_moved(const char *what, const __u64 *before,
			 const __u64 *after, unsigned int a, unsigned int b)
{
	unsigned int s;

	for (s = 0; s < FS_STAT_MAX; s++) {
		__u64 want = s == FS_STAT_RX || s == a || s == b;

		if (after[s] - before[s] != want)
			fail_msg("%s: counter %u moved by %llu, expected %llu",
				 what, s,
				 (unsigned long long)(after[s] - before[s]),
				 (unsigned long long)want);
	}
}

/* --- expected keys, written by hand ------------------------------------ */

static struct fs_flow_key key4(__u8 proto, __u16 sport, __u16 dport)
{
	struct fs_flow_key k = {
		.family = FS_FAMILY_IPV4,
		.proto = proto,
		.sport = htons(sport),
		.dport = htons(dport),
	};

	memcpy(k.src, a4_src, 4);
	memcpy(k.dst, a4_dst, 4);
	return k;
}

static struct fs_flow_key key6(__u8 proto, __u16 sport, __u16 dport)
{
	struct fs_flow_key k = {
		.family = FS_FAMILY_IPV6,
		.proto = proto,
		.sport = htons(sport),
		.dport = htons(dport),
	};

	memcpy(k.src, a6_src, 16);
	memcpy(k.dst, a6_dst, 16);
	return k;
}

/* --- frames, from the test's fixed addresses ------------------------------ */

static void eth_ipv4(struct pkt *p, __u8 proto, unsigned int ihl, __u16 frag_off)
{
	pkt_eth(p, PKT_ETH_P_IP);
	pkt_ipv4(p, proto, a4_src, a4_dst, ihl, frag_off);
}

static void eth_ipv6(struct pkt *p, __u8 nexthdr)
{
	pkt_eth(p, PKT_ETH_P_IPV6);
	pkt_ipv6(p, nexthdr, a6_src, a6_dst);
}

/* Finished, then cut to its first len bytes, as a truncated frame. */
static void finish_cut(struct pkt *p, size_t len)
{
	pkt_finish(p);
	p->len = len;
}

/* --- frames that must be keyed ------------------------------------------ */

struct keyed_case {
	const char *name;
	void (*build)(struct pkt *p, struct fs_flow_key *k);
	int fragment;		/* a non-first fragment: FS_STAT_FRAGMENTS */
};

/* The finished frame of build, and the key it must produce. */
static void keyed_frame(struct pkt *p, struct fs_flow_key *k,
			void (*build)(struct pkt *p, struct fs_flow_key *k))
{
	pkt_init(p);
	build(p, k);
	pkt_finish(p);
}

/* A UDP frame from src to a4_dst with payload bytes after the header. */
static void udp4_frame(struct pkt *p, const __u8 *src, __u16 sport,
		       __u16 dport, size_t payload)
{
	pkt_init(p);
	pkt_eth(p, PKT_ETH_P_IP);
	pkt_ipv4(p, 17, src, a4_dst, 5, 0);
	pkt_udp(p, sport, dport);
	pkt_payload(p, payload);
	pkt_finish(p);
}

static void k_ipv4_tcp(struct pkt *p, struct fs_flow_key *k)
{
	eth_ipv4(p, 6, 5, 0);
	pkt_tcp(p, 40000, 443, 5);
	pkt_payload(p, 100);
	*k = key4(6, 40000, 443);
}

static void k_ipv4_tcp_options(struct pkt *p, struct fs_flow_key *k)
{
	eth_ipv4(p, 6, 5, 0x4000 /* DF */);
	pkt_tcp(p, 40001, 22, 15);	/* 40 bytes of TCP options */
	*k = key4(6, 40001, 22);
}

static void k_ipv4_udp(struct pkt *p, struct fs_flow_key *k)
{
	eth_ipv4(p, 17, 5, 0);
	pkt_udp(p, 5353, 53);
	pkt_payload(p, 20);
	*k = key4(17, 5353, 53);
}

/* An IPv4 header with 40 bytes of options (IHL 15). */
static void k_ipv4_options_udp(struct pkt *p, struct fs_flow_key *k)
{
	eth_ipv4(p, 17, 15, 0);
	pkt_udp(p, 1000, 2000);
	*k = key4(17, 1000, 2000);
}

static void k_ipv4_options_tcp(struct pkt *p, struct fs_flow_key *k)
{
	eth_ipv4(p, 6, 6, 0);
	pkt_tcp(p, 1001, 2001, 5);
	*k = key4(6, 1001, 2001);
}

static void k_ipv4_icmp_echo(struct pkt *p, struct fs_flow_key *k)
{
	eth_ipv4(p, 1, 5, 0);
	pkt_icmp(p, 8, 0);
	pkt_payload(p, 56);
	*k = key4(1, 0, 8 << 8 | 0);
}

static void k_ipv4_icmp_unreach(struct pkt *p, struct fs_flow_key *k)
{
	eth_ipv4(p, 1, 5, 0);
	pkt_icmp(p, 3, 3);
	*k = key4(1, 0, 3 << 8 | 3);
}

/* GRE: a protocol without ports is keyed by addresses and protocol. */
static void k_ipv4_gre(struct pkt *p, struct fs_flow_key *k)
{
	eth_ipv4(p, 47, 5, 0);
	pkt_payload(p, 64);
	*k = key4(47, 0, 0);
}

/* ICMPv6's number inside IPv4 is just another protocol. */
static void k_ipv4_proto58(struct pkt *p, struct fs_flow_key *k)
{
	eth_ipv4(p, 58, 5, 0);
	pkt_icmp(p, 128, 0);
	*k = key4(58, 0, 0);
}

/* A minimum frame: Ethernet padding after the IP packet is counted in
 * the bytes (the frame length) and ignored by the parser. */
static void k_ipv4_padded(struct pkt *p, struct fs_flow_key *k)
{
	eth_ipv4(p, 17, 5, 0);
	pkt_udp(p, 7, 7);
	pkt_finish(p);
	pkt_payload(p, 60 - p->len);
	*k = key4(17, 7, 7);
}

static void k_vlan_ipv4_udp(struct pkt *p, struct fs_flow_key *k)
{
	pkt_eth(p, PKT_ETH_P_8021Q);
	pkt_vlan(p, 100, PKT_ETH_P_IP);
	pkt_ipv4(p, 17, a4_src, a4_dst, 5, 0);
	pkt_udp(p, 4789, 4789);
	*k = key4(17, 4789, 4789);
}

static void k_qinq_ipv4_tcp(struct pkt *p, struct fs_flow_key *k)
{
	pkt_eth(p, PKT_ETH_P_8021AD);
	pkt_vlan(p, 10, PKT_ETH_P_8021Q);
	pkt_vlan(p, 20, PKT_ETH_P_IP);
	pkt_ipv4(p, 6, a4_src, a4_dst, 5, 0);
	pkt_tcp(p, 12345, 80, 5);
	*k = key4(6, 12345, 80);
}

static void k_qinq_reversed_ipv6_udp(struct pkt *p, struct fs_flow_key *k)
{
	pkt_eth(p, PKT_ETH_P_8021Q);
	pkt_vlan(p, 30, PKT_ETH_P_8021AD);
	pkt_vlan(p, 40, PKT_ETH_P_IPV6);
	pkt_ipv6(p, 17, a6_src, a6_dst);
	pkt_udp(p, 546, 547);
	*k = key6(17, 546, 547);
}

static void k_ipv4_first_fragment(struct pkt *p, struct fs_flow_key *k)
{
	eth_ipv4(p, 17, 5, 0x2000 /* MF, offset 0 */);
	pkt_udp(p, 3000, 4000);
	pkt_payload(p, 200);
	*k = key4(17, 3000, 4000);
}

static void k_ipv4_middle_fragment(struct pkt *p, struct fs_flow_key *k)
{
	eth_ipv4(p, 17, 5, 0x2000 | 185);
	pkt_payload(p, 200);	/* would read as ports 0xa5a5 */
	*k = key4(17, 0, 0);
}

static void k_ipv4_last_fragment(struct pkt *p, struct fs_flow_key *k)
{
	eth_ipv4(p, 6, 5, 370);
	pkt_payload(p, 3);	/* shorter than any TCP header: not read */
	*k = key4(6, 0, 0);
}

static void k_ipv6_tcp(struct pkt *p, struct fs_flow_key *k)
{
	eth_ipv6(p, 6);
	pkt_tcp(p, 50000, 443, 8);
	pkt_payload(p, 1000);
	*k = key6(6, 50000, 443);
}

static void k_ipv6_udp(struct pkt *p, struct fs_flow_key *k)
{
	eth_ipv6(p, 17);
	pkt_udp(p, 443, 50001);
	pkt_payload(p, 1200);
	*k = key6(17, 443, 50001);
}

static void k_ipv6_icmp_echo(struct pkt *p, struct fs_flow_key *k)
{
	eth_ipv6(p, 58);
	pkt_icmp(p, 128, 0);
	*k = key6(58, 0, 128 << 8 | 0);
}

static void k_ipv6_icmp_too_big(struct pkt *p, struct fs_flow_key *k)
{
	eth_ipv6(p, 60);
	pkt_ipv6_opts(p, 58, 0);
	pkt_icmp(p, 2, 0);
	*k = key6(58, 0, 2 << 8 | 0);
}

/* ICMP's (v4) number inside IPv6 has no type/code in the key. */
static void k_ipv6_proto1(struct pkt *p, struct fs_flow_key *k)
{
	eth_ipv6(p, 1);
	pkt_icmp(p, 8, 0);
	*k = key6(1, 0, 0);
}

static void k_ipv6_hop_tcp(struct pkt *p, struct fs_flow_key *k)
{
	eth_ipv6(p, 0);
	pkt_ipv6_opts(p, 6, 0);
	pkt_tcp(p, 1111, 2222, 5);
	*k = key6(6, 1111, 2222);
}

static void k_ipv6_hop_rt_dst_udp(struct pkt *p, struct fs_flow_key *k)
{
	eth_ipv6(p, 0);
	pkt_ipv6_opts(p, 43, 1);	/* 16 bytes */
	pkt_ipv6_opts(p, 60, 2);	/* routing, 24 bytes */
	pkt_ipv6_opts(p, 17, 0);	/* destination options */
	pkt_udp(p, 3333, 4444);
	*k = key6(17, 3333, 4444);
}

static void k_ipv6_ah_tcp(struct pkt *p, struct fs_flow_key *k)
{
	eth_ipv6(p, 51);
	pkt_ipv6_ah(p, 6, 4);		/* 24 bytes: 12 of header + 96-bit ICV */
	pkt_tcp(p, 5555, 6666, 5);
	*k = key6(6, 5555, 6666);
}

static void k_ipv6_first_fragment(struct pkt *p, struct fs_flow_key *k)
{
	eth_ipv6(p, 44);
	pkt_ipv6_frag(p, 17, 0, 1);
	pkt_udp(p, 7777, 8888);
	pkt_payload(p, 1000);
	*k = key6(17, 7777, 8888);
}

static void k_ipv6_middle_fragment(struct pkt *p, struct fs_flow_key *k)
{
	eth_ipv6(p, 0);
	pkt_ipv6_opts(p, 44, 0);
	pkt_ipv6_frag(p, 17, 1448 / 8, 1);
	pkt_payload(p, 1000);
	*k = key6(17, 0, 0);
}

static void k_ipv6_last_fragment(struct pkt *p, struct fs_flow_key *k)
{
	eth_ipv6(p, 44);
	pkt_ipv6_frag(p, 6, 2896 / 8, 0);
	pkt_payload(p, 2);
	*k = key6(6, 0, 0);
}

/* As many extension headers as the parser walks (FS_IPV6_MAX_EXT = 6). */
static void k_ipv6_six_ext(struct pkt *p, struct fs_flow_key *k)
{
	eth_ipv6(p, 0);
	pkt_ipv6_opts(p, 60, 0);
	pkt_ipv6_opts(p, 43, 0);
	pkt_ipv6_opts(p, 51, 0);
	pkt_ipv6_ah(p, 44, 1);
	pkt_ipv6_frag(p, 60, 0, 0);
	pkt_ipv6_opts(p, 17, 3);
	pkt_udp(p, 9999, 53);
	*k = key6(17, 9999, 53);
}

/* A maximum-length hop-by-hop header: 2048 bytes. */
static void k_ipv6_long_hop(struct pkt *p, struct fs_flow_key *k)
{
	eth_ipv6(p, 0);
	pkt_ipv6_opts(p, 6, 255);
	pkt_tcp(p, 80, 8080, 5);
	*k = key6(6, 80, 8080);
}

/* No next header (59): keyed, no ports. */
static void k_ipv6_no_next(struct pkt *p, struct fs_flow_key *k)
{
	eth_ipv6(p, 60);
	pkt_ipv6_opts(p, 59, 0);
	*k = key6(59, 0, 0);
}

static const struct keyed_case keyed_cases[] = {
	{ "ipv4 tcp", k_ipv4_tcp, 0 },
	{ "ipv4 tcp with tcp options", k_ipv4_tcp_options, 0 },
	{ "ipv4 udp", k_ipv4_udp, 0 },
	{ "ipv4 ihl 15 udp", k_ipv4_options_udp, 0 },
	{ "ipv4 ihl 6 tcp", k_ipv4_options_tcp, 0 },
	{ "ipv4 icmp echo", k_ipv4_icmp_echo, 0 },
	{ "ipv4 icmp port unreachable", k_ipv4_icmp_unreach, 0 },
	{ "ipv4 gre", k_ipv4_gre, 0 },
	{ "ipv4 protocol 58", k_ipv4_proto58, 0 },
	{ "ipv4 udp padded to 60 bytes", k_ipv4_padded, 0 },
	{ "802.1Q ipv4 udp", k_vlan_ipv4_udp, 0 },
	{ "802.1ad+802.1Q ipv4 tcp", k_qinq_ipv4_tcp, 0 },
	{ "802.1Q+802.1ad ipv6 udp", k_qinq_reversed_ipv6_udp, 0 },
	{ "ipv4 first fragment", k_ipv4_first_fragment, 0 },
	{ "ipv4 middle fragment", k_ipv4_middle_fragment, 1 },
	{ "ipv4 last fragment", k_ipv4_last_fragment, 1 },
	{ "ipv6 tcp", k_ipv6_tcp, 0 },
	{ "ipv6 udp", k_ipv6_udp, 0 },
	{ "ipv6 icmpv6 echo", k_ipv6_icmp_echo, 0 },
	{ "ipv6 dstopts icmpv6 packet too big", k_ipv6_icmp_too_big, 0 },
	{ "ipv6 protocol 1", k_ipv6_proto1, 0 },
	{ "ipv6 hop-by-hop tcp", k_ipv6_hop_tcp, 0 },
	{ "ipv6 hop+routing+dstopts udp", k_ipv6_hop_rt_dst_udp, 0 },
	{ "ipv6 ah tcp", k_ipv6_ah_tcp, 0 },
	{ "ipv6 first fragment", k_ipv6_first_fragment, 0 },
	{ "ipv6 hop + middle fragment", k_ipv6_middle_fragment, 1 },
	{ "ipv6 last fragment", k_ipv6_last_fragment, 1 },
	{ "ipv6 six extension headers", k_ipv6_six_ext, 0 },
	{ "ipv6 2048-byte hop-by-hop", k_ipv6_long_hop, 0 },
	{ "ipv6 no next header", k_ipv6_no_next, 0 },
};

static void test_keyed_frames(void **state)
{
	struct dp *dp = dp_open_default();
	__u64 before[FS_STAT_MAX], after[FS_STAT_MAX];
	struct fs_window_totals t0, t1;
	unsigned int i;

	dp_set_ctl(dp, 0, 0);
	for (i = 0; i < FS_ARRAY_SIZE(keyed_cases); i++) {
		const struct keyed_case *c = &keyed_cases[i];
		struct fs_flow_key k;
		struct pkt p;

		keyed_frame(&p, &k, c->build);

		dp_stats(dp, before);
		t0 = dp_totals(dp, 0);
		dp_run(dp, &p);
		model_count(dp, &k, p.len, NULL);
		dp_stats(dp, after);
		t1 = dp_totals(dp, 0);

		assert_state_matches_model(dp, c->name);
		assert_moved(c->name, before, after, FS_STAT_SKETCHED,
			     c->fragment ? FS_STAT_FRAGMENTS : FS_STAT_SKETCHED);
		assert_int_equal(t1.packets - t0.packets, 1);
		assert_int_equal(t1.bytes - t0.bytes, p.len);
	}
	dp_close(dp);
}

/* --- frames that must not be keyed -------------------------------------- */

struct bad_case {
	const char *name;
	void (*build)(struct pkt *p);
	enum fs_stat reason;
};

/* The frame of c, finished (builders that truncate finish first). */
static void bad_frame(struct pkt *p, const struct bad_case *c)
{
	pkt_init(p);
	c->build(p);
	if (!p->finished)
		pkt_finish(p);
}

/*
 * No frame shorter than an Ethernet header reaches XDP: BPF_PROG_TEST_RUN,
 * bpf_xdp_adjust_head/tail and the drivers all keep data_end - data >=
 * ETH_HLEN, so FS_STAT_TRUNC_ETH is the parser's defence, not a case a
 * test can produce (test_short_frames_refused checks that assumption).
 * The shortest frames are a bare Ethernet header announcing more.
 */
static void b_eth_only_ipv4(struct pkt *p)
{
	pkt_eth(p, PKT_ETH_P_IP);
}

static void b_eth_only_ipv6(struct pkt *p)
{
	pkt_eth(p, PKT_ETH_P_IPV6);
}

static void b_eth_only_vlan(struct pkt *p)
{
	pkt_eth(p, PKT_ETH_P_8021AD);
}

static void b_arp(struct pkt *p)
{
	pkt_eth(p, PKT_ETH_P_ARP);
	pkt_payload(p, 28);
}

/* EtherType IPv4, version 6 in the header. */
static void b_ipv4_wrong_version(struct pkt *p)
{
	pkt_eth(p, PKT_ETH_P_IP);
	pkt_ipv6(p, 17, a6_src, a6_dst);
	pkt_udp(p, 1, 2);
}

static void b_ipv6_wrong_version(struct pkt *p)
{
	pkt_eth(p, PKT_ETH_P_IPV6);
	pkt_ipv4(p, 17, a4_src, a4_dst, 5, 0);
	pkt_payload(p, 40);
}

static void b_vlan_trunc(struct pkt *p)
{
	pkt_eth(p, PKT_ETH_P_8021Q);
	pkt_vlan(p, 1, PKT_ETH_P_IP);
	p->len = 14 + 3;
}

static void b_vlan2_trunc(struct pkt *p)
{
	pkt_eth(p, PKT_ETH_P_8021AD);
	pkt_vlan(p, 1, PKT_ETH_P_8021Q);
	pkt_vlan(p, 2, PKT_ETH_P_IP);
	p->len = 14 + 4 + 2;
}

static void b_vlan3(struct pkt *p)
{
	pkt_eth(p, PKT_ETH_P_8021AD);
	pkt_vlan(p, 1, PKT_ETH_P_8021Q);
	pkt_vlan(p, 2, PKT_ETH_P_8021Q);
	pkt_vlan(p, 3, PKT_ETH_P_IP);
	pkt_ipv4(p, 17, a4_src, a4_dst, 5, 0);
	pkt_udp(p, 1, 2);
}

static void b_ipv4_trunc(struct pkt *p)
{
	eth_ipv4(p, 17, 5, 0);
	finish_cut(p, 14 + 19);
}

static void b_vlan_ipv4_trunc(struct pkt *p)
{
	pkt_eth(p, PKT_ETH_P_8021Q);
	pkt_vlan(p, 5, PKT_ETH_P_IP);
	pkt_ipv4(p, 17, a4_src, a4_dst, 5, 0);
	finish_cut(p, 18 + 10);
}

static void b_ipv4_ihl4(struct pkt *p)
{
	eth_ipv4(p, 17, 4, 0);
	pkt_udp(p, 1, 2);
}

static void b_ipv4_ihl0(struct pkt *p)
{
	eth_ipv4(p, 6, 0, 0);
	pkt_tcp(p, 1, 2, 5);
}

/* IHL 15 announces 40 bytes of options; the frame holds 39. */
static void b_ipv4_options_trunc(struct pkt *p)
{
	eth_ipv4(p, 17, 15, 0);
	finish_cut(p, 14 + 59);
}

static void b_ipv4_tot_len_19(struct pkt *p)
{
	eth_ipv4(p, 17, 5, 0);
	pkt_udp(p, 1, 2);
	pkt_ipv4_set_tot_len(p, 19);
}

/* tot_len covers the 20 fixed bytes but not the options. */
static void b_ipv4_tot_len_options(struct pkt *p)
{
	eth_ipv4(p, 17, 8, 0);
	pkt_udp(p, 1, 2);
	pkt_ipv4_set_tot_len(p, 31);
}

static void b_ipv6_trunc(struct pkt *p)
{
	eth_ipv6(p, 17);
	finish_cut(p, 14 + 39);
}

static void b_ipv6_hop_trunc_fixed(struct pkt *p)
{
	eth_ipv6(p, 0);
	pkt_ipv6_opts(p, 17, 0);
	finish_cut(p, 14 + 40 + 7);
}

/* hdrlen 1: 16 bytes announced, 12 present. */
static void b_ipv6_hop_trunc_len(struct pkt *p)
{
	eth_ipv6(p, 0);
	pkt_ipv6_opts(p, 17, 1);
	finish_cut(p, 14 + 40 + 12);
}

static void b_ipv6_routing_trunc(struct pkt *p)
{
	eth_ipv6(p, 0);
	pkt_ipv6_opts(p, 43, 0);
	pkt_ipv6_opts(p, 17, 2);
	finish_cut(p, 14 + 40 + 8 + 23);
}

static void b_ipv6_dstopts_trunc(struct pkt *p)
{
	eth_ipv6(p, 60);
	pkt_finish(p);
	pkt_put(p, 3);		/* 3 of at least 8 bytes */
}

static void b_ipv6_frag_trunc(struct pkt *p)
{
	eth_ipv6(p, 44);
	pkt_ipv6_frag(p, 17, 10, 1);
	finish_cut(p, 14 + 40 + 5);
}

static void b_ipv6_ah_trunc(struct pkt *p)
{
	eth_ipv6(p, 51);
	pkt_ipv6_ah(p, 6, 4);
	finish_cut(p, 14 + 40 + 23);
}

/* Seven extension headers: one more than the parser walks. */
static void b_ipv6_ext_chain(struct pkt *p)
{
	int i;

	eth_ipv6(p, 60);
	for (i = 0; i < 6; i++)
		pkt_ipv6_opts(p, 60, 0);
	pkt_ipv6_opts(p, 17, 0);
	pkt_udp(p, 1, 2);
}

static void b_ipv4_tcp_trunc(struct pkt *p)
{
	eth_ipv4(p, 6, 5, 0);
	pkt_tcp(p, 1, 2, 5);
	finish_cut(p, p->len - 1);
}

static void b_ipv6_tcp_trunc(struct pkt *p)
{
	eth_ipv6(p, 6);
	pkt_tcp(p, 1, 2, 5);
	finish_cut(p, 14 + 40 + 2);
}

/* Data offset 10 announces 20 bytes of options; the frame holds 19. */
static void b_tcp_options_trunc(struct pkt *p)
{
	eth_ipv4(p, 6, 5, 0);
	pkt_tcp(p, 1, 2, 10);
	finish_cut(p, p->len - 1);
}

static void b_tcp_doff4(struct pkt *p)
{
	eth_ipv4(p, 6, 5, 0);
	pkt_tcp(p, 1, 2, 4);
	pkt_payload(p, 20);
}

static void b_ipv6_tcp_doff0(struct pkt *p)
{
	eth_ipv6(p, 6);
	pkt_tcp(p, 1, 2, 0);
}

static void b_ipv4_udp_trunc(struct pkt *p)
{
	eth_ipv4(p, 17, 5, 0);
	pkt_udp(p, 1, 2);
	finish_cut(p, p->len - 1);
}

static void b_ipv6_udp_after_ext_trunc(struct pkt *p)
{
	eth_ipv6(p, 0);
	pkt_ipv6_opts(p, 17, 0);
	pkt_udp(p, 1, 2);
	finish_cut(p, p->len - 4);
}

static void b_ipv4_icmp_trunc(struct pkt *p)
{
	eth_ipv4(p, 1, 5, 0);
	pkt_icmp(p, 8, 0);
	finish_cut(p, p->len - 1);
}

static void b_ipv6_icmp_trunc(struct pkt *p)
{
	eth_ipv6(p, 58);
	pkt_icmp(p, 128, 0);
	finish_cut(p, 14 + 40 + 1);
}

/*
 * Minimum frames whose IP packet ends before its transport (or extension)
 * header does: the Ethernet padding after it must not be read as ports.
 * The padding is the 0xa5 pattern, so a misparse would key ports 0xa5a5.
 */
static void b_ipv4_udp_past_tot_len(struct pkt *p)
{
	eth_ipv4(p, 17, 5, 0);
	pkt_ipv4_set_tot_len(p, 20 + 4);
	pkt_payload(p, 60 - p->len);
}

static void b_ipv4_tcp_options_past_tot_len(struct pkt *p)
{
	eth_ipv4(p, 6, 5, 0);
	pkt_tcp(p, 1, 2, 8);
	pkt_ipv4_set_tot_len(p, 20 + 28);
	pkt_payload(p, 8);
}

static void b_ipv6_udp_past_payload_len(struct pkt *p)
{
	eth_ipv6(p, 17);
	pkt_ipv6_set_payload_len(p, 6);
	pkt_payload(p, 8);
}

static void b_ipv6_hop_past_payload_len(struct pkt *p)
{
	eth_ipv6(p, 0);
	pkt_ipv6_opts(p, 17, 1);
	pkt_udp(p, 1, 2);
	pkt_ipv6_set_payload_len(p, 8);
}

static const struct bad_case bad_cases[] = {
	{ "ethernet only, ipv4 type", b_eth_only_ipv4, FS_STAT_TRUNC_IPV4 },
	{ "ethernet only, ipv6 type", b_eth_only_ipv6, FS_STAT_TRUNC_IPV6 },
	{ "ethernet only, 802.1ad type", b_eth_only_vlan, FS_STAT_TRUNC_VLAN },
	{ "arp", b_arp, FS_STAT_NON_IP },
	{ "ipv4 ethertype, version 6", b_ipv4_wrong_version, FS_STAT_NON_IP },
	{ "ipv6 ethertype, version 4", b_ipv6_wrong_version, FS_STAT_NON_IP },
	{ "802.1Q tag cut", b_vlan_trunc, FS_STAT_TRUNC_VLAN },
	{ "second tag cut", b_vlan2_trunc, FS_STAT_TRUNC_VLAN },
	{ "three tags", b_vlan3, FS_STAT_VLAN_DEPTH },
	{ "ipv4 header cut", b_ipv4_trunc, FS_STAT_TRUNC_IPV4 },
	{ "ipv4 header cut after a tag", b_vlan_ipv4_trunc, FS_STAT_TRUNC_IPV4 },
	{ "ipv4 ihl 4", b_ipv4_ihl4, FS_STAT_BAD_IHL },
	{ "ipv4 ihl 0", b_ipv4_ihl0, FS_STAT_BAD_IHL },
	{ "ipv4 options cut", b_ipv4_options_trunc, FS_STAT_BAD_IHL },
	{ "ipv4 tot_len 19", b_ipv4_tot_len_19, FS_STAT_BAD_IPV4_LEN },
	{ "ipv4 tot_len < ihl*4", b_ipv4_tot_len_options, FS_STAT_BAD_IPV4_LEN },
	{ "ipv6 header cut", b_ipv6_trunc, FS_STAT_TRUNC_IPV6 },
	{ "hop-by-hop cut in fixed part", b_ipv6_hop_trunc_fixed, FS_STAT_TRUNC_IPV6_EXT },
	{ "hop-by-hop cut in options", b_ipv6_hop_trunc_len, FS_STAT_TRUNC_IPV6_EXT },
	{ "routing header cut", b_ipv6_routing_trunc, FS_STAT_TRUNC_IPV6_EXT },
	{ "destination options cut", b_ipv6_dstopts_trunc, FS_STAT_TRUNC_IPV6_EXT },
	{ "fragment header cut", b_ipv6_frag_trunc, FS_STAT_TRUNC_IPV6_EXT },
	{ "ah cut", b_ipv6_ah_trunc, FS_STAT_TRUNC_IPV6_EXT },
	{ "seven extension headers", b_ipv6_ext_chain, FS_STAT_IPV6_EXT_CHAIN },
	{ "ipv4 tcp cut", b_ipv4_tcp_trunc, FS_STAT_TRUNC_L4 },
	{ "ipv6 tcp cut", b_ipv6_tcp_trunc, FS_STAT_TRUNC_L4 },
	{ "tcp options cut", b_tcp_options_trunc, FS_STAT_TRUNC_L4 },
	{ "tcp doff 4", b_tcp_doff4, FS_STAT_BAD_TCP_DOFF },
	{ "ipv6 tcp doff 0", b_ipv6_tcp_doff0, FS_STAT_BAD_TCP_DOFF },
	{ "ipv4 udp cut", b_ipv4_udp_trunc, FS_STAT_TRUNC_L4 },
	{ "ipv6 udp cut after hop-by-hop", b_ipv6_udp_after_ext_trunc, FS_STAT_TRUNC_L4 },
	{ "icmp cut", b_ipv4_icmp_trunc, FS_STAT_TRUNC_L4 },
	{ "icmpv6 cut", b_ipv6_icmp_trunc, FS_STAT_TRUNC_L4 },
	{ "ipv4 udp past tot_len, padded", b_ipv4_udp_past_tot_len, FS_STAT_TRUNC_L4 },
	{ "tcp options past tot_len", b_ipv4_tcp_options_past_tot_len, FS_STAT_TRUNC_L4 },
	{ "ipv6 udp past payload_len", b_ipv6_udp_past_payload_len, FS_STAT_TRUNC_L4 },
	{ "hop-by-hop past payload_len", b_ipv6_hop_past_payload_len, FS_STAT_TRUNC_IPV6_EXT },
};

static void test_malformed_frames(void **state)
{
	struct dp *dp = dp_open_default();
	__u64 before[FS_STAT_MAX], after[FS_STAT_MAX];
	struct fs_flow_key k;
	struct pkt p;
	unsigned int i;

	dp_set_ctl(dp, 0, PHI_MIN);	/* any new flow would report */

	/* One good packet first, so "unchanged" is not just "still zero". */
	keyed_frame(&p, &k, k_ipv4_udp);
	dp_run(dp, &p);
	model_count(dp, &k, p.len, NULL);
	dp->nreports = 0;

	for (i = 0; i < FS_ARRAY_SIZE(bad_cases); i++) {
		const struct bad_case *c = &bad_cases[i];
		struct fs_window_totals t0, t1;

		bad_frame(&p, c);

		dp_stats(dp, before);
		t0 = dp_totals(dp, 0);
		dp_run(dp, &p);
		dp_stats(dp, after);
		t1 = dp_totals(dp, 0);

		assert_moved(c->name, before, after, c->reason, c->reason);
		assert_int_equal(t1.packets, t0.packets);
		assert_int_equal(t1.bytes, t0.bytes);
		assert_int_equal(dp->nreports, 0);
		assert_state_matches_model(dp, c->name);
	}
	dp_close(dp);
}

/* The premise of not testing FS_STAT_TRUNC_ETH: a 13-byte frame never
 * runs.  If a kernel starts accepting one, this fails and the malformed
 * cases above should gain short frames. */
static void test_short_frames_refused(void **state)
{
	struct dp *dp = dp_open_default();
	__u8 frame[13] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = frame,
		.data_size_in = sizeof(frame),
		.repeat = 1,
	);
	__u64 stats[FS_STAT_MAX];

	assert_int_equal(bpf_prog_test_run_opts(
				 bpf_program__fd(dp->skel->progs.fs_xdp), &opts),
			 -EINVAL);
	dp_stats(dp, stats);
	assert_int_equal(stats[FS_STAT_RX], 0);
	dp_close(dp);
}

/* --- windows: the slot follows window_seq ------------------------------- */

/*
 * The slot follows window_seq, and a slot's totals are its latest
 * window's: a window of that slot restarts them with its first packet
 * (maps.h, "Totals reset by epoch"), with nobody zeroing them in between.
 * Totals tagged with an earlier window of the slot count nothing for a
 * later one, and every window's totals are exact while it is the slot's
 * latest.
 */
static void test_slots_and_totals(void **state)
{
	struct fs_sketch_params params = make_params(4, 8, 6, 0);
	struct dp *dp = dp_open(&params);
	/* (window_seq, packets, frame payload) phases; 7 is odd: slot 1,
	 * 2 reuses slot 0 after 0, 7 slot 1 after 1 (skipping 3 and 5). */
	static const struct { __u64 seq; int n; size_t payload; } phase[] = {
		{ 0, 5, 100 }, { 1, 3, 400 }, { 2, 4, 10 }, { 7, 6, 1000 },
	};
	__u64 want_packets[FS_ARRAY_SIZE(phase)] = { 0 };
	__u64 want_bytes[FS_ARRAY_SIZE(phase)] = { 0 };
	unsigned int i, j2;
	int j;

	for (i = 0; i < FS_ARRAY_SIZE(phase); i++) {
		dp_set_ctl(dp, phase[i].seq, 0);
		for (j = 0; j < phase[i].n; j++) {
			struct fs_flow_key k = key4(17, (__u16)(1000 + i),
						    (__u16)(2000 + j));
			struct pkt p;

			udp4_frame(&p, a4_src, (__u16)(1000 + i), (__u16)(2000 + j),
				   phase[i].payload + (size_t)j);
			dp_run(dp, &p);
			model_count(dp, &k, p.len, NULL);
			want_packets[i] += 1;
			want_bytes[i] += p.len;
		}
		assert_state_matches_model(dp, "window totals");
		/* This window's totals are exactly its own... */
		assert_int_equal(dp_totals(dp, phase[i].seq).packets, want_packets[i]);
		assert_int_equal(dp_totals(dp, phase[i].seq).bytes, want_bytes[i]);
		/* ... and every earlier window of the same slot now reads
		 * as empty, its totals replaced, not added to. */
		for (j2 = 0; j2 < i; j2++) {
			if (phase[j2].seq % FS_NSLOTS != phase[i].seq % FS_NSLOTS)
				continue;
			assert_int_equal(dp_totals(dp, phase[j2].seq).packets, 0);
		}
	}
	/* Windows of the slots that saw no packet read as empty. */
	assert_int_equal(dp_totals(dp, 3).packets, 0);
	assert_int_equal(dp_totals(dp, 4).packets, 0);
	assert_int_equal(dp->nreports, 0);
	dp_close(dp);
}

/* --- the keyed sample (sample.h) ------------------------------------------ */

#define SAMPLE_FLOWS 240

/*
 * With the sample on at rate 1/2 in 4 buckets (28 entries for some 120
 * sampled flows a slot, so buckets fill and cut their limits), 1,500
 * frames a window of 240 IPv4 flows over three windows (two of slot 0,
 * one of slot 1): every byte of fs_sample (and of every other map)
 * equals the model's.  Then the test's own oracle: every live entry's
 * packets and bytes are what the test sent of that flow in the slot's
 * windows, every flow sent whose value is below its bucket's final limit
 * is there, and some bucket did cut (the full path ran).
 */
static void test_sample_state(void **state)
{
	struct fs_sketch_params params = make_params(3, 6, 6, 0);
	const struct fs_sample_params sp = { 1, 2 };
	static const __u64 seqs[] = { 0, 1, 2 };
	struct fs_flow_key keys[SAMPLE_FLOWS];
	__u64 sent_p[FS_NSLOTS][SAMPLE_FLOWS] = { { 0 } };
	__u64 sent_b[FS_NSLOTS][SAMPLE_FLOWS] = { { 0 } };
	__u64 hashes[SAMPLE_FLOWS], rng = 0x5a3e, cuts = 0, live = 0;
	struct dp *dp;
	unsigned int w, i, f, slot, j;

	(void)state;
	fs_params_set_sample(&params, &sp);
	assert_int_equal(fs_params_check(&params), 0);
	for (f = 0; f < SAMPLE_FLOWS; f++) {
		__u64 r = rng_next(&rng);

		memset(&keys[f], 0, sizeof(keys[f]));
		keys[f].family = FS_FAMILY_IPV4;
		keys[f].proto = 17;
		keys[f].sport = htons((__u16)(1024 + f));
		keys[f].dport = htons(53);
		keys[f].src[0] = 10;
		keys[f].src[1] = (__u8)(r >> 8);
		keys[f].src[2] = (__u8)(r >> 16);
		keys[f].src[3] = (__u8)f;
		keys[f].dst[0] = 192;
		keys[f].dst[3] = 1;
	}
	dp = dp_open(&params);
	for (w = 0; w < FS_ARRAY_SIZE(seqs); w++) {
		slot = (unsigned int)(seqs[w] % FS_NSLOTS);
		dp_set_ctl(dp, seqs[w], 0);
		for (i = 0; i < 1500; i++) {
			__u64 r = rng_next(&rng);
			/* skewed: the low flows far more often */
			unsigned int x = (unsigned int)(r % SAMPLE_FLOWS);
			struct pkt p;

			f = (r >> 32) & 1 ? x : x % 16;
			pkt_init(&p);
			pkt_eth(&p, PKT_ETH_P_IP);
			pkt_ipv4(&p, 17, keys[f].src, keys[f].dst, 5, 0);
			pkt_udp(&p, ntohs(keys[f].sport), ntohs(keys[f].dport));
			pkt_payload(&p, (size_t)(r >> 20) % 600);
			pkt_finish(&p);
			dp_run(dp, &p);
			model_count(dp, &keys[f], p.len, &hashes[f]);
			sent_p[slot][f]++;
			sent_b[slot][f] += p.len;
		}
		assert_state_matches_model(dp, "keyed sample");
	}
	for (slot = 0; slot < FS_NSLOTS; slot++) {
		const struct fs_sample_bucket *b = (const struct fs_sample_bucket *)
			dp->model.env.chunks[FS_DP_SAMPLE] + fs_sample_element(&params, slot, 0);

		for (j = 0; j < 1U << sp.log2_buckets; j++) {
			__u64 limit = fs_sample_limit(&b[j], sp.shift);

			cuts += b[j].head.cut != 0;
			for (i = 0; i < FS_SAMPLE_WAYS; i++) {
				const struct fs_sample_entry *e = &b[j].e[i];

				if (!fs_sample_live(e, limit))
					continue;
				live++;
				for (f = 0; f < SAMPLE_FLOWS; f++)
					if (!memcmp(&keys[f], &e->key, sizeof(e->key)))
						break;
				assert_true(f < SAMPLE_FLOWS);
				assert_int_equal(e->packets, sent_p[slot][f]);
				assert_int_equal(e->bytes, sent_b[slot][f]);
			}
			/* Every flow of this bucket below its limit is in. */
			for (f = 0; f < SAMPLE_FLOWS; f++) {
				__u64 v = fs_sample_value(hashes[f]);
				int found = 0;

				if (!sent_p[slot][f] || fs_sample_bucket_index(v, sp.log2_buckets) != j ||
				    v >= limit)
					continue;
				for (i = 0; i < FS_SAMPLE_WAYS; i++)
					found |= fs_sample_live(&b[j].e[i], limit) &&
						 !memcmp(&keys[f], &b[j].e[i].key, sizeof(keys[f]));
				assert_true(found);
			}
		}
	}
	assert_true(cuts > 0);
	assert_true(live > 20);
	dp_close(dp);
}

/* --- the detection sketches (detect.h) ------------------------------------ */

/*
 * With the prefix and spread sketches on, thousands of frames from many
 * IPv4 and IPv6 sources to several destinations and ports, over two
 * windows of one slot and one of the other: every byte of fs_prefix and
 * fs_spread (and of every other map) equals the model's, which runs
 * fs_detect_update() over plain memory with the draw's n from its own
 * totals.  A packet counted in the wrong slot, a draw of another n, a
 * bucket of another row or a lost candidate shows up here.  Then the
 * sketches are not empty: the test must not pass on maps nobody writes.
 */
static void test_detect_state(void **state)
{
	struct fs_sketch_params params = make_params(3, 6, 6, 0);
	const struct fs_prefix_params pp = { 2, 6, 0 };
	const struct fs_spread_params sp = { 2, 5, 1 };
	static const __u64 seqs[] = { 0, 1, 2 };
	__u64 rng = 0xdec7, nonzero = 0;
	__u8 *buf;
	struct dp *dp;
	unsigned int w, i, c;

	(void)state;
	fs_params_set_prefix(&params, &pp);
	fs_params_set_spread(&params, &sp);
	assert_int_equal(fs_params_check(&params), 0);
	dp = dp_open(&params);
	for (w = 0; w < FS_ARRAY_SIZE(seqs); w++) {
		dp_set_ctl(dp, seqs[w], 0);
		for (i = 0; i < 1500; i++) {
			__u64 r = rng_next(&rng);
			__u8 src[16] = { 0 }, dst[16] = { 0 };
			int v6 = !(r & 7);
			struct fs_flow_key k = {
				.family = v6 ? FS_FAMILY_IPV6 : FS_FAMILY_IPV4,
				.proto = 17,
				.sport = htons((__u16)(1024 + (r >> 8) % 5000)),
				/* a scanner's sweep of ports now and then */
				.dport = htons((__u16)((r >> 24) % 4 ? 53 : (r >> 32) % 60000)),
			};
			struct pkt p;

			if (v6) {
				src[0] = 0x20;
				src[1] = 0x01;
				src[7] = (__u8)(r >> 40);
				src[15] = (__u8)(r >> 48);
				dst[0] = 0x20;
				dst[15] = (__u8)(1 + (r >> 56) % 3);
			} else {
				src[0] = 10;
				src[1] = (__u8)((r >> 40) % 4);
				src[2] = (__u8)(r >> 48);
				src[3] = (__u8)(r >> 56);
				dst[0] = 192;
				dst[3] = (__u8)(1 + (r >> 44) % 3);
			}
			memcpy(k.src, src, 16);
			memcpy(k.dst, dst, 16);
			pkt_init(&p);
			if (v6) {
				pkt_eth(&p, PKT_ETH_P_IPV6);
				pkt_ipv6(&p, 17, src, dst);
			} else {
				pkt_eth(&p, PKT_ETH_P_IP);
				pkt_ipv4(&p, 17, src, dst, 5, 0);
			}
			pkt_udp(&p, ntohs(k.sport), ntohs(k.dport));
			pkt_payload(&p, (size_t)(r >> 20) % 600);
			pkt_finish(&p);
			dp_run(dp, &p);
			model_count(dp, &k, p.len, NULL);
		}
		assert_state_matches_model(dp, "detection sketches");
	}
	/* Written: some bucket of each map has packets, or a candidate. */
	buf = dp->model.env.chunks[FS_DP_PREFIX];
	for (c = 0; c < dp->model.env.nchunks[FS_DP_PREFIX] * FS_CHUNK_BYTES; c++)
		nonzero += buf[c] != 0;
	assert_true(nonzero > 1000);
	nonzero = 0;
	buf = dp->model.env.chunks[FS_DP_SPREAD];
	for (c = 0; c < dp->model.env.nchunks[FS_DP_SPREAD] * FS_CHUNK_BYTES; c++)
		nonzero += buf[c] != 0;
	assert_true(nonzero > 1000);
	dp_close(dp);
}

/*
 * Slot `slot` of every datapath map, read back and folded over all CPUs
 * into s (fs_sketch_init()ed with the datapath's parameters), as the
 * daemon's rotation folds a window, with the slot's totals of window seq.
 */
static void dp_fold(struct dp *dp, __u32 slot, __u64 seq, struct fs_sketch *s)
{
#define MAP_OF(NAME, name, KIND) [FS_DP_##NAME] = dp->skel->maps.fs_##name,
	struct bpf_map *maps[FS_NDPMAPS] = { FS_DP_MAPS(MAP_OF) };
#undef MAP_OF
	struct fs_window_totals totals = dp_totals(dp, seq);
	__u32 m, i;
	int c;

	for (m = 0; m < FS_NDPMAPS; m++) {
		assert_int_equal(bpf_map__value_size(maps[m]), FS_CHUNK_BYTES);
		for (i = 0; i < bpf_map__max_entries(maps[m]); i++) {
			assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(maps[m]), &i,
							     dp->percpu), 0);
			for (c = 0; c < dp->ncpus; c++)
				assert_int_equal(fs_sketch_add_chunk(s, m, slot, i,
					(const __u8 *)dp->percpu + (size_t)c * FS_CHUNK_BYTES), 0);
		}
	}
	fs_sketch_add_totals(s, &totals);
}

/* z of the bounds below: Phi(-4) = 3.2e-5 a check. */
#define PLANTED_Z 4.0
/* phi: every prefix above this share of the packets must be listed,
 * among the first 2 / phi of its level. */
#define PLANTED_PHI 0.05
#define PLANTED_LIST 40

/*
 * A planted spreader is the first of its side's spreaders, its estimate
 * within spread.h's "Error" bounds, written out again here from the
 * parameters (not fs_spread_sigma()): for true spread n and F distinct
 * (key, element) pairs on the side,
 *     sigma(n) = sqrt(1.04^2 / m + (R - 1) / n),  m = 90 registers, R = 2^s
 *     n (1 - z sigma) <= S <= (n + e F / w) (1 + z sigma).
 * First: an ordinary key's spread is a few elements plus its buckets'
 * sharing, about F / w = 210, far below the planted key's 5,000 (2,700 at
 * its lower bound here).
 */
static void check_spreader(const struct fs_sketch *s, const struct fs_hash_key *hk,
			   const struct planted *t, __u32 side, __u32 key,
			   size_t planted_n)
{
	struct fs_spread_params p;
	struct fs_spreader top[8];
	__u8 addr[16] = { 0 };
	size_t pairs, n;
	double R, w, sigma, lo, hi;
	int got;

	fs_params_spread(&s->params, &p);
	n = planted_spread(t, side == FS_SPREAD_DST, key, &pairs);
	assert_int_equal(n, planted_n);	/* the traffic is what the test meant */
	R = ldexp(1, (int)p.sample_shift);
	w = ldexp(1, (int)p.log2_width);
	sigma = sqrt(1.04 * 1.04 / 90 + (R - 1) / (double)n);
	lo = (double)n * (1 - PLANTED_Z * sigma);
	hi = ((double)n + M_E * (double)pairs / w) * (1 + PLANTED_Z * sigma);
	addr[0] = (__u8)(key >> 24);
	addr[1] = (__u8)(key >> 16);
	addr[2] = (__u8)(key >> 8);
	addr[3] = (__u8)key;
	got = fs_spread_top(s->spread, &p, side, hk, top, FS_ARRAY_SIZE(top));
	assert_true(got >= 2);
	print_message("spread side %u: first %u.%u.%u.%u %.0f, second %.0f; planted truth %zu, bounds %.0f..%.0f, F %zu\n",
		      side, top[0].addr[0], top[0].addr[1], top[0].addr[2],
		      top[0].addr[3], top[0].distinct, top[1].distinct, n, lo,
		      hi, pairs);
	if (top[0].family != FS_FAMILY_IPV4 || memcmp(top[0].addr, addr, 16))
		fail_msg("spread side %u: the planted key is not first", side);
	if (top[0].distinct < lo || top[0].distinct > hi)
		fail_msg("spread side %u: estimate %.0f outside %.0f..%.0f (truth %zu)",
			 side, top[0].distinct, lo, hi, n);
}

/*
 * Every prefix of a (side, IPv4 level) above phi of the N packets is
 * listed among the side's 2 / phi heaviest, within prefix.h's "Error"
 * bounds written out again from the parameters: V = 8 x 2^t choices,
 *     N_x - z sqrt((V - 1) N_x) <= E <= N_x + 4 e N / w + z sqrt((V - 1) N_x).
 * At most 1 / phi prefixes are above phi; the list holds twice as many,
 * room for the lighter ones the collision term can lift next to them.
 * Returns how many prefixes were checked; *first gets the list's first.
 */
static unsigned int check_prefix_level(const struct fs_sketch *s,
				       const struct fs_hash_key *hk,
				       const struct planted *t, __u32 side,
				       __u32 level, __u32 *first)
{
	struct fs_prefix_params p;
	struct fs_heavy_prefix top[PLANTED_LIST];
	struct planted_count *c;
	unsigned int len = 8 * (level + 1), checked = 0;
	double N = (double)t->n, V, w;
	size_t nc, i;
	int got, j;

	fs_params_prefix(&s->params, &p);
	V = 8 * ldexp(1, (int)p.skip_shift);
	w = ldexp(1, (int)p.log2_width);
	got = fs_prefix_top(s->prefix, &p, hk, fs_prefix_tag(side, FS_FAMILY_IPV4, level),
			    FS_PREFIX_BY_PACKETS, top, FS_ARRAY_SIZE(top));
	assert_true(got > 0);
	*first = (__u32)top[0].addr[0] << 24 | (__u32)top[0].addr[1] << 16 |
		 (__u32)top[0].addr[2] << 8 | top[0].addr[3];
	nc = planted_prefixes(t, side == FS_PREFIX_DST, len, &c);
	for (i = 0; i < nc; i++) {
		double nx = (double)c[i].packets, sd, lo, hi, e;
		__u32 x = c[i].prefix;

		if (nx <= PLANTED_PHI * N)
			continue;
		sd = PLANTED_Z * sqrt((V - 1) * nx);
		lo = nx - sd;
		hi = nx + 4 * M_E * N / w + sd;
		for (j = 0; j < got; j++)
			if (top[j].addr[0] == (__u8)(x >> 24) &&
			    top[j].addr[1] == (__u8)(x >> 16) &&
			    top[j].addr[2] == (__u8)(x >> 8) &&
			    top[j].addr[3] == (__u8)x)
				break;
		if (j == got)
			fail_msg("prefix side %u /%u: %u.%u.%u.%u (%.0f packets, %.1f %%) not among the %d listed",
				 side, len, x >> 24, (x >> 16) & 255, (x >> 8) & 255,
				 x & 255, nx, 100 * nx / N, got);
		e = (double)top[j].packets;
		print_message("prefix side %u /%u: %u.%u.%u.%u rank %d estimate %.0f truth %.0f bounds %.0f..%.0f\n",
			      side, len, x >> 24, (x >> 16) & 255, (x >> 8) & 255,
			      x & 255, j, e, nx, lo, hi);
		if (e < lo || e > hi)
			fail_msg("prefix side %u /%u: %u.%u.%u.%u estimate %.0f outside %.0f..%.0f (truth %.0f)",
				 side, len, x >> 24, (x >> 16) & 255, (x >> 8) & 255,
				 x & 255, e, lo, hi, nx);
		checked++;
	}
	free(c);
	return checked;
}

/*
 * Issue 20's accuracy, through the datapath: about 330,000 frames of
 * planted.h's traffic (100,000 ordinary flows, a scanner, a victim and a
 * heavy /24 of 200 light hosts) through the BPF program with both
 * detection sketches at the daemon's defaults; the per-CPU maps read
 * back and folded as the daemon folds a window.  The oracle is the
 * traffic (planted.h counts it), the bounds come from the parameters.
 * One secret and one seed: the run is the same every time, and each
 * check's failure probability (e^-d for a collision term, Phi(-4) for
 * sampling) is that of a fresh secret.  The model must agree byte for
 * byte as well, so the estimates are those of a kernel that ran the
 * same update.
 */
static void test_detect_planted(void **state)
{
	struct fs_sketch_params params = default_params();
	const struct fs_prefix_params pp = { FS_DEFAULT_PREFIX_DEPTH,
		FS_DEFAULT_PREFIX_LOG2W, FS_DEFAULT_PREFIX_SKIP };
	const struct fs_spread_params sp = { FS_DEFAULT_SPREAD_DEPTH,
		FS_DEFAULT_SPREAD_LOG2W, FS_DEFAULT_SPREAD_SHIFT };
	unsigned int checked = 0, levels_with = 0;
	struct fs_sketch s = { 0 };
	struct fs_hash_key hk;
	struct planted t;
	struct dp *dp;
	__u32 side, level, first;
	size_t i;

	(void)state;
	fs_params_set_prefix(&params, &pp);
	fs_params_set_spread(&params, &sp);
	assert_int_equal(fs_params_check(&params), 0);
	dp = dp_open(&params);
	dp_set_ctl(dp, 0, 0);
	planted_make(&t, 0x91a47ed);
	for (i = 0; i < t.n; i++) {
		const struct planted_pkt *x = &t.pkt[i];
		struct fs_flow_key k = {
			.family = FS_FAMILY_IPV4,
			.proto = 17,
			.sport = htons(x->sport),
			.dport = htons(x->dport),
		};
		__u32 src = htonl(x->src), dst = htonl(x->dst);
		struct pkt p;

		memcpy(k.src, &src, 4);
		memcpy(k.dst, &dst, 4);
		pkt_init(&p);
		pkt_eth(&p, PKT_ETH_P_IP);
		pkt_ipv4(&p, 17, k.src, k.dst, 5, 0);
		pkt_udp(&p, x->sport, x->dport);
		pkt_payload(&p, x->sport % 64);
		pkt_finish(&p);
		dp_run(dp, &p);
		model_count(dp, &k, p.len, NULL);
	}
	assert_state_matches_model(dp, "planted traffic");

	assert_int_equal(fs_sketch_init(&s, &dp->params), 0);
	dp_fold(dp, 0, 0, &s);
	assert_int_equal(s.totals.packets, t.n);
	fs_hash_key_derive(&dp->params.secret, &hk);

	check_spreader(&s, &hk, &t, FS_SPREAD_SRC, PLANTED_SCANNER,
		       PLANTED_SCAN_HOSTS * PLANTED_SCAN_PORTS);
	check_spreader(&s, &hk, &t, FS_SPREAD_DST, PLANTED_VICTIM,
		       PLANTED_VICTIM_SOURCES);

	for (side = FS_PREFIX_SRC; side <= FS_PREFIX_DST; side++)
		for (level = 0; level < FS_PREFIX_LEVELS; level++) {
			unsigned int n = check_prefix_level(&s, &hk, &t, side,
							    level, &first);

			checked += n;
			levels_with += n > 0;
			if (side == FS_PREFIX_SRC && level == 2 &&
			    first != PLANTED_HEAVY24)
				fail_msg("the planted /24 is not the heaviest source /24 (first %u.%u.%u.%u)",
					 first >> 24, (first >> 16) & 255,
					 (first >> 8) & 255, first & 255);
		}
	/* The traffic's heavy prefixes: sources 10/8, 100/8, 198/8,
	 * 198.51/16 and the /24; destinations 172/8, 192/8, 192.0/16,
	 * 192.0.2/24 and its four servers (some 172.x/16 too, when chance
	 * lifts one of them from 4.5 % over phi).  Seven levels of eight
	 * hold one: the test must not pass on checks it never made. */
	print_message("%u prefixes above phi checked on %u levels\n", checked, levels_with);
	assert_true(checked >= 13);
	assert_true(levels_with >= 7);
	fs_sketch_free(&s);
	planted_free(&t);
	dp_close(dp);
}

/* --- per-interface counts (maps.h, "Per-interface counts") -------------- */

/*
 * The ingress_ifindex the kernel gives a test run, learnt apart from the
 * datapath: a two-instruction XDP program that returns it.  ifindex 0: no
 * ctx_in; else a ctx_in naming that device.
 */
static __u32 probe_ingress_ifindex(__u32 ifindex)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_LDX | BPF_MEM | BPF_W, .dst_reg = BPF_REG_0,
		  .src_reg = BPF_REG_1,
		  .off = offsetof(struct xdp_md, ingress_ifindex) },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct pkt p;
	struct xdp_md md = { .ingress_ifindex = ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .repeat = 1);
	int fd;

	keyed_frame(&p, &(struct fs_flow_key){ 0 }, k_ipv4_udp);
	md.data_end = (__u32)p.len;
	opts.data_in = p.data;
	opts.data_size_in = (__u32)p.len;
	if (ifindex) {
		opts.ctx_in = &md;
		opts.ctx_size_in = sizeof(md);
	}
	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "fs_ifx_probe", "GPL", insns,
			   FS_ARRAY_SIZE(insns), NULL);
	assert_true(fd >= 0);
	assert_int_equal(bpf_prog_test_run_opts(fd, &opts), 0);
	close(fd);
	return opts.retval;
}

/* The loopback device's ifindex, on which a test run without ctx_in
 * arrives: named, and checked against the probe. */
static __u32 lo_ifindex(void)
{
	__u32 lo = if_nametoindex("lo");

	assert_true(lo != 0);
	assert_int_equal(probe_ingress_ifindex(0), lo);
	return lo;
}

/*
 * Up to max devices other than lo, by ifindex: a veth pair of the test's
 * own, in a network namespace of its own, never one of the host's.  The
 * first call moves the test process into that namespace, for good (a
 * test run's ctx_in names a device of the current namespace; the
 * datapath's maps and the other tests do not care where it is), and the
 * pair goes with the namespace when the process exits.
 */
static unsigned int other_devices(__u32 lo, __u32 *out, unsigned int max)
{
	static bool own_netns;
	struct if_nameindex *ifs, *i;
	unsigned int n = 0;

	if (!own_netns) {
		assert_int_equal(unshare(CLONE_NEWNET), 0);
		assert_int_equal(system("ip link add fsdt0 type veth peer name fsdt1"), 0);
		own_netns = true;
		lo = if_nametoindex("lo");
	}
	ifs = if_nameindex();
	assert_non_null(ifs);
	for (i = ifs; i->if_index && n < max; i++)
		if (i->if_index != lo)
			out[n++] = i->if_index;
	if_freenameindex(ifs);
	return n;
}

/* fs_ifslot[0] = { n, ifindex[0, count) = table, the rest 0 }, names
 * empty (XDP does not read them), read back. */
static void dp_set_ifslots(struct dp *dp, __u32 n, const __u32 *table,
			   unsigned int count)
{
	int fd = bpf_map__fd(dp->skel->maps.fs_ifslot);
	struct fs_ifslots t, back;
	__u32 zero = 0;

	assert_true(count <= FS_IFSLOTS);
	memset(&t, 0, sizeof(t));
	t.n = n;
	if (count)
		memcpy(t.ifindex, table, count * sizeof(table[0]));
	assert_int_equal(bpf_map_update_elem(fd, &zero, &t, BPF_ANY), 0);
	assert_int_equal(bpf_map_lookup_elem(fd, &zero, &back), 0);
	assert_memory_equal(&back, &t, sizeof(t));
}

/* fs_ifcount[0, FS_IFSLOT_OTHER], every CPU: zero. */
static void dp_zero_ifcount(struct dp *dp)
{
	int fd = bpf_map__fd(dp->skel->maps.fs_ifcount);
	__u32 slot;

	memset(dp->percpu, 0, (size_t)dp->ncpus * sizeof(struct fs_if_counts));
	for (slot = 0; slot <= FS_IFSLOT_OTHER; slot++)
		assert_int_equal(bpf_map_update_elem(fd, &slot, dp->percpu,
						     BPF_EXIST), 0);
}

/* fs_ifcount[slot] summed over CPUs, for every slot; a CPU other than the
 * test's must hold zeros (all runs are on the test's). */
static void dp_ifcounts(struct dp *dp, struct fs_if_counts sum[FS_IFSLOT_OTHER + 1])
{
	int fd = bpf_map__fd(dp->skel->maps.fs_ifcount);
	const struct fs_if_counts *v = dp->percpu;
	__u32 slot;
	int c;

	for (slot = 0; slot <= FS_IFSLOT_OTHER; slot++) {
		assert_int_equal(bpf_map_lookup_elem(fd, &slot, dp->percpu), 0);
		sum[slot].packets = sum[slot].bytes = 0;
		for (c = 0; c < dp->ncpus; c++) {
			if (c != dp->cpu && (v[c].packets || v[c].bytes))
				fail_msg("fs_ifcount[%u] cpu %d: %llu packets, the test ran on cpu %d",
					 slot, c, (unsigned long long)v[c].packets,
					 dp->cpu);
			sum[slot].packets += v[c].packets;
			sum[slot].bytes += v[c].bytes;
		}
	}
}

/* Frames of a scenario arrive on ingress (0: no ctx_in, the loopback)
 * and must count in slot, as the test's author reads the table. */
struct if_run {
	__u32 ingress;
	__u32 slot;
};

/*
 * One scenario on a loaded datapath: zero the counts, set the table, send
 * every keyed frame (keyed_cases: IPv4 and IPv6, tags, options, extension
 * headers, fragments) and every malformed or non-IP one (bad_cases)
 * interleaved, twice, the second time in the next window, frame i on
 * runs[i % nruns].  The oracle is the frames: each keyed one adds one
 * packet and its length to its run's slot, nothing else moves any slot.
 * Cross-check: the slots sum to the totals of the scenario's two windows,
 * fresh ones (their tags are new), which count the same frames.
 */
static void check_if_scenario(struct dp *dp, const char *what, __u32 n,
			      const __u32 *table, unsigned int count,
			      const struct if_run *runs, unsigned int nruns)
{
	struct fs_if_counts want[FS_IFSLOT_OTHER + 1], got[FS_IFSLOT_OTHER + 1];
	struct fs_if_counts sum = { 0 };
	struct fs_window_totals t0, t1;
	__u64 w = dp->seq + 1, keyed = 0, keyed_bytes = 0;
	unsigned int pass, i, frame = 0, r;
	__u32 slot;

	memset(want, 0, sizeof(want));
	dp_zero_ifcount(dp);
	dp_ifcounts(dp, got);
	for (slot = 0; slot <= FS_IFSLOT_OTHER; slot++)
		assert_true(!got[slot].packets && !got[slot].bytes);
	dp_set_ifslots(dp, n, table, count);

	for (pass = 0; pass < 2; pass++) {
		dp_set_ctl(dp, w + pass, 0);
		for (i = 0; i < FS_ARRAY_SIZE(keyed_cases) ||
			    i < FS_ARRAY_SIZE(bad_cases); i++) {
			struct fs_flow_key k;
			struct pkt p;

			if (i < FS_ARRAY_SIZE(keyed_cases)) {
				const struct if_run *run = &runs[frame++ % nruns];

				keyed_frame(&p, &k, keyed_cases[i].build);
				dp_run_on(dp, &p, run->ingress);
				want[run->slot].packets += 1;
				want[run->slot].bytes += p.len;
				keyed += 1;
				keyed_bytes += p.len;
			}
			if (i < FS_ARRAY_SIZE(bad_cases)) {
				bad_frame(&p, &bad_cases[i]);
				dp_run_on(dp, &p, runs[frame++ % nruns].ingress);
			}
		}
	}
	/* K frames of known lengths: what the slots must add up to. */
	assert_int_equal(keyed, 2 * FS_ARRAY_SIZE(keyed_cases));
	for (r = 0; r < nruns; r++)
		assert_true(want[runs[r].slot].packets > 0);

	dp_ifcounts(dp, got);
	for (slot = 0; slot <= FS_IFSLOT_OTHER; slot++) {
		if (got[slot].packets != want[slot].packets ||
		    got[slot].bytes != want[slot].bytes)
			fail_msg("%s: fs_ifcount[%u%s] holds %llu packets, %llu bytes; the frames sent make it %llu, %llu",
				 what, slot, slot == FS_IFSLOT_OTHER ? ", other" : "",
				 (unsigned long long)got[slot].packets,
				 (unsigned long long)got[slot].bytes,
				 (unsigned long long)want[slot].packets,
				 (unsigned long long)want[slot].bytes);
		sum.packets += got[slot].packets;
		sum.bytes += got[slot].bytes;
	}
	assert_int_equal(sum.packets, keyed);
	assert_int_equal(sum.bytes, keyed_bytes);

	/* The independent cross-check: the window totals of the same frames. */
	t0 = dp_totals(dp, w);
	t1 = dp_totals(dp, w + 1);
	if (sum.packets != t0.packets + t1.packets ||
	    sum.bytes != t0.bytes + t1.bytes)
		fail_msg("%s: the slots sum to %llu packets, %llu bytes; windows %llu and %llu total %llu, %llu",
			 what, (unsigned long long)sum.packets,
			 (unsigned long long)sum.bytes, (unsigned long long)w,
			 (unsigned long long)(w + 1),
			 (unsigned long long)(t0.packets + t1.packets),
			 (unsigned long long)(t0.bytes + t1.bytes));
}

static struct dp *dp_open_ifcount(void)
{
	struct dp *dp = dp_open_default();

	dp_set_ctl(dp, 0, 0);
	return dp;
}

/*
 * What the scenarios below assume of BPF_PROG_TEST_RUN, seen by a program
 * of the test's own: without ctx_in a frame arrives on the loopback device
 * of the current namespace (ifindex 1 in any namespace); with one, on the
 * device its ingress_ifindex names.
 */
static void test_ifcount_ingress_premise(void **state)
{
	__u32 lo = lo_ifindex(), other[2];
	unsigned int i, n;

	assert_int_equal(lo, 1);
	assert_int_equal(probe_ingress_ifindex(lo), lo);
	n = other_devices(lo, other, FS_ARRAY_SIZE(other));
	for (i = 0; i < n; i++)
		assert_int_equal(probe_ingress_ifindex(other[i]), other[i]);
}

/* The ingress device in slot 0 of two: all of its keyed frames there,
 * slot 1 and other untouched. */
static void test_ifcount_slot0(void **state)
{
	struct dp *dp = dp_open_ifcount();
	__u32 lo = lo_ifindex();
	const __u32 table[] = { lo, lo + 100 };
	const struct if_run runs[] = { { 0, 0 } };

	check_if_scenario(dp, "lo in slot 0 of 2", 2, table, 2, runs, 1);
	dp_close(dp);
}

/*
 * The ingress device in slot 1, then where the scan must not look: at
 * position n and past it (its frames go to other), and the last slot of a
 * full table.
 */
static void test_ifcount_slot1_and_past_n(void **state)
{
	struct dp *dp = dp_open_ifcount();
	__u32 lo = lo_ifindex(), full[FS_IFSLOTS];
	const __u32 second[] = { lo + 100, lo };
	const __u32 third[] = { lo + 100, lo + 101, lo + 102, lo };
	const struct if_run in1[] = { { 0, 1 } }, other[] = { { 0, FS_IFSLOT_OTHER } };
	const struct if_run last[] = { { 0, FS_IFSLOTS - 1 } };
	unsigned int i;

	check_if_scenario(dp, "lo in slot 1 of 2", 2, second, 2, in1, 1);
	check_if_scenario(dp, "lo at position 1, n 1", 1, second, 2, other, 1);
	check_if_scenario(dp, "lo at position 3, n 2", 2, third, 4, other, 1);
	check_if_scenario(dp, "lo at position 3, n 3", 3, third, 4, other, 1);
	for (i = 0; i < FS_IFSLOTS; i++)
		full[i] = lo + 100 + i;
	full[FS_IFSLOTS - 1] = lo;
	check_if_scenario(dp, "lo in the last slot of a full table",
			  FS_IFSLOTS, full, FS_IFSLOTS, last, 1);
	check_if_scenario(dp, "lo in the last slot, n one short",
			  FS_IFSLOTS - 1, full, FS_IFSLOTS, other, 1);
	dp_close(dp);
}

/* n = 0: every keyed frame in other, whatever the words past n say. */
static void test_ifcount_empty_table(void **state)
{
	struct dp *dp = dp_open_ifcount();
	__u32 lo = lo_ifindex();
	const __u32 stale[] = { lo, lo };
	const struct if_run other[] = { { 0, FS_IFSLOT_OTHER } };

	check_if_scenario(dp, "empty table", 0, NULL, 0, other, 1);
	check_if_scenario(dp, "n 0, lo left in slots 0 and 1", 0, stale, 2,
			  other, 1);
	dp_close(dp);
}

/*
 * Frames of several devices interleaved (ctx_in): each device's in its
 * own slot, a device with none in other, and lo without ctx_in in the
 * same slot as lo with it.  Needs a device besides lo.
 */
static void test_ifcount_devices(void **state)
{
	struct dp *dp;
	__u32 lo = lo_ifindex(), dev[2];
	unsigned int ndev = other_devices(lo, dev, FS_ARRAY_SIZE(dev));

	if (ndev == 0) {
		print_message("no device besides lo: nothing to interleave\n");
		skip();
	}
	dp = dp_open_ifcount();
	{
		const __u32 table[] = { dev[0], lo };
		const struct if_run runs[] = {
			{ lo, 1 }, { dev[0], 0 }, { 0, 1 },
		};

		check_if_scenario(dp, "lo and a device", 2, table, 2, runs, 3);
	}
	if (ndev > 1) {
		const __u32 table[] = { lo, dev[1], dev[0] };
		const struct if_run runs[] = {
			{ dev[0], FS_IFSLOT_OTHER }, { lo, 0 }, { dev[1], 1 },
		};

		/* dev[0] at position 2 of n 2: other. */
		check_if_scenario(dp, "two devices, one past n", 2, table, 3,
				  runs, 3);
	}
	dp_close(dp);
}

/* --- heavy-hitter reports ----------------------------------------------- */

/*
 * Send n copies of one frame; every report must come with the packet the
 * model says crosses, and carry that packet's key, hash, window and CPU.
 * Returns the number of reports.
 */
static int send_flow(struct dp *dp, const struct pkt *p,
		     const struct fs_flow_key *k, int n)
{
	struct fs_hash_key hash_key;
	__u64 hash;
	int i, first = dp->nreports;

	/* The report's hash is hash.h's under the loaded secret: derived
	 * here, apart from the key the loader put in .rodata. */
	fs_hash_key_derive(&dp->params.secret, &hash_key);
	for (i = 0; i < n; i++) {
		int before = dp->nreports, report;

		dp_run(dp, p);
		report = model_count(dp, k, p->len, &hash);
		/* A packet that crosses produces one record, at once. */
		assert_int_equal(dp->nreports - before, report ? 1 : 0);
		if (report) {
			struct fs_hh_report *r = &dp->reports[before];

			assert_memory_equal(&r->key, k, sizeof(*k));
			assert_int_equal(r->hash, hash);
			assert_int_equal(r->hash, fs_flow_hash(k, &hash_key));
			assert_int_equal(r->window_seq, dp->seq);
			assert_int_equal(r->report, report);
			assert_int_equal(r->cpu, dp->cpu);
		}
	}
	return dp->nreports - first;
}

/* The a-th packet of a flow of la-byte packets that reaches phi = 1/2 of
 * a running total that already holds n packets of lb bytes: the smallest
 * a with a * l >= floor((n * lb' + a * l) / 2), per metric (cms.h). */
static int half_share_at(int n, size_t la, size_t lb)
{
	int a;

	for (a = 1; (__u64)a * la < ((__u64)n * lb + (__u64)a * la) / 2; a++)
		;
	return a;
}

static void check_reports(int conservative)
{
	struct fs_sketch_params params = make_params(5, 12, 10, conservative);
	struct dp *dp = dp_open(&params);
	__u64 stats[FS_STAT_MAX];
	struct fs_flow_key ka, kb;
	struct pkt pa, pb;
	int from, at_packets, at_bytes, i, expected;

	keyed_frame(&pa, &ka, k_ipv4_tcp);
	keyed_frame(&pb, &kb, k_ipv4_udp);
	assert_true(pb.len < pa.len);

	/* Window 0, phi = 1/2: a lone flow holds all of its window from its
	 * first packet, reports both metrics at once, and never again. */
	dp_set_ctl(dp, 0, PHI_HALF);
	from = dp->nreports;
	assert_int_equal(send_flow(dp, &pa, &ka, 10), 1);
	assert_int_equal(dp->reports[from].report,
			 FS_REPORT_PACKETS | FS_REPORT_BYTES);

	/* Window 1 (slot 1, empty): the same for flow b... */
	dp_set_ctl(dp, 1, PHI_HALF);
	from = dp->nreports;
	assert_int_equal(send_flow(dp, &pb, &kb, 8), 1);
	assert_int_equal(dp->reports[from].report,
			 FS_REPORT_PACKETS | FS_REPORT_BYTES);
	/* ...then flow a, whose window-0 packets do not count here, reaches
	 * half of the running packets about when it has as many as b, and
	 * half of the bytes sooner, its packets being larger.  One packet at
	 * a time, to see which packet reports. */
	at_packets = half_share_at(8, 1, 1);
	at_bytes = half_share_at(8, pa.len, pb.len);
	assert_true(at_bytes < at_packets && at_packets < 30);
	for (i = 1; i <= 30; i++) {
		from = dp->nreports;
		expected = (i == at_packets ? FS_REPORT_PACKETS : 0) |
			   (i == at_bytes ? FS_REPORT_BYTES : 0);
		assert_int_equal(send_flow(dp, &pa, &ka, 1), !!expected);
		if (expected)
			assert_int_equal(dp->reports[from].report, expected);
	}

	/* Flow b falls below half and climbs back above it: flagged, it is
	 * not reported twice in one window. */
	assert_int_equal(send_flow(dp, &pb, &kb, 60), 0);

	/* phi = 0: no reports, however large the flow, in a fresh window. */
	dp_set_ctl(dp, 2, 0);
	assert_int_equal(send_flow(dp, &pa, &ka, 20), 0);

	dp_stats(dp, stats);
	assert_int_equal(stats[FS_STAT_REPORTS], 4);
	assert_int_equal(stats[FS_STAT_REPORTS_DROPPED], 0);
	assert_state_matches_model(dp, "reports");
	dp_close(dp);
}

/*
 * A full ring buffer loses reports but counts each one: with a one-page
 * ring (56 records of 8 + 64 bytes) and a threshold of one packet, every
 * new flow reports; nothing is consumed until the end.
 */
static void test_reports_dropped(void **state)
{
	struct fs_sketch_params params = default_params();
	struct dp *dp;
	__u64 stats[FS_STAT_MAX];
	const int nflows = 200;
	int i;

	dp = dp_open_ring(&params, 4096);
	dp_set_ctl(dp, 0, PHI_MIN);
	dp->hold_reports = 1;
	for (i = 0; i < nflows; i++) {
		struct fs_flow_key k;
		struct pkt p;

		udp4_frame(&p, a4_src, (__u16)(10000 + i), 53, 0);
		k = key4(17, (__u16)(10000 + i), 53);
		dp_run(dp, &p);
		/* Distinct flows in a 4096-wide sketch: the model says
		 * which first packets cross (nearly all of them). */
		model_count(dp, &k, p.len, NULL);
	}
	dp_stats(dp, stats);
	assert_true(stats[FS_STAT_REPORTS] > 0);
	assert_true(stats[FS_STAT_REPORTS] < (__u64)nflows);
	assert_true(stats[FS_STAT_REPORTS_DROPPED] > 0);
	assert_true(ring_buffer__consume(dp->rb) >= 0);
	/* Every record counted as sent is in the ring, no more. */
	assert_int_equal(dp->nreports, stats[FS_STAT_REPORTS]);
	assert_state_matches_model(dp, "reports dropped");
	dp_close(dp);
}

/* --- bursty traffic: report recall and bound (bursty.h) ----------------- */

/* Zero a slot's cells and registers on every CPU, in the maps and
 * the model: what the daemon's rotation does before the slot is reused. */
static void dp_zero_slot(struct dp *dp, __u32 slot)
{
	const struct fs_sketch_params *p = &dp->params;
#define MAP_OF(NAME, name, KIND) [FS_DP_##NAME] = dp->skel->maps.fs_##name,
	struct bpf_map *maps[FS_NDPMAPS] = { FS_DP_MAPS(MAP_OF) };
#undef MAP_OF
	__u32 k, n;
	int m;

	memset(dp->percpu, 0, (size_t)dp->ncpus * FS_CHUNK_BYTES);
	for (m = 0; m < FS_NDPMAPS; m++) {
		n = fs_dp_slot_chunks(m, p);
		for (k = (__u32)(fs_dp_first(m, p, slot) >> fs_dp_maps[m].chunk_shift);
		     n--; k++)
			assert_int_equal(bpf_map_update_elem(bpf_map__fd(maps[m]), &k,
							     dp->percpu, BPF_EXIST), 0);
	}
	/* Not fs_hot: the datapath restarts the slot's totals by their tag. */
	fs_model_zero_slot(&dp->model, slot);
}

/*
 * The datapath's reports on bursty traffic, window by window: the first
 * window after load, a quiet one, the one after it (whose slot the test
 * zeroes, as rotation would) starting with mice before the heavy flows
 * ramp up.  The reports come from the ring buffer, the verdict from what
 * was sent (bursty.h); the state must still equal the model's.
 */
static void test_bursty_reports(void **state)
{
	static const struct {
		unsigned int packets, mice;
	} windows[] = { { 20000, 0 }, { 0, 0 }, { 20000, 2000 } };
	const double phi = 0.01, eps = exp(1) / 4096;
	static struct bursty b;
	struct dp *dp = dp_open_default();
	unsigned int w, i;

	bursty_init(&b, 0xb0757a11, 1500, 1500, 1.1, 4);
	for (w = 0; w < FS_ARRAY_SIZE(windows); w++) {
		struct bursty_verdict vp, vb;

		if (w >= FS_NSLOTS)
			dp_zero_slot(dp, w % FS_NSLOTS);
		dp_set_ctl(dp, w, (__u64)(phi * 4294967296.0));
		bursty_next_window(&b);
		for (i = 0; i < windows[w].packets; i++) {
			unsigned int f = bursty_next(&b, i < windows[w].mice);
			uint8_t src[4] = { 10, (uint8_t)(f >> 16),
					   (uint8_t)(f >> 8), (uint8_t)f };
			struct fs_flow_key k;
			struct pkt p;
			int report = 0;

			udp4_frame(&p, src, 7000, 53, bursty_len(f) - 42);
			assert_int_equal(p.len, bursty_len(f));
			k = key4(17, 7000, 53);
			memcpy(k.src, src, 4);
			dp->nreports = 0;
			dp_run(dp, &p);
			if (dp->nreports) {
				assert_int_equal(dp->nreports, 1);
				assert_memory_equal(&dp->reports[0].key, &k,
						    sizeof(k));
				assert_int_equal(dp->reports[0].window_seq, w);
				report = (int)dp->reports[0].report;
			}
			assert_int_equal(model_count(dp, &k, p.len, NULL),
					 report);
			bursty_sent(&b, f, report);
		}
		bursty_check_metric(&b, phi, eps, b.packets, b.rep_packets,
				    b.total_packets, &vp);
		bursty_check_metric(&b, phi, eps, b.bytes, b.rep_bytes,
				    b.total_bytes, &vb);
		print_message("window %u: %u/%u packet reports (bound), "
			      "%u/%u byte reports\n", w, vp.reports, vp.bound,
			      vb.reports, vb.bound);
		if (!bursty_verdict_ok(&vp) || !bursty_verdict_ok(&vb))
			fail_msg("window %u: missed %u/%u, repeated %u/%u, "
				 "reports %u/%u over bounds %u/%u", w,
				 vp.missed, vb.missed, vp.repeated,
				 vb.repeated, vp.reports, vb.reports,
				 vp.bound, vb.bound);
	}
	assert_state_matches_model(dp, "bursty traffic");
	dp_close(dp);
}

/* --- random traffic against the model ----------------------------------- */

static __u64 rng_state;

static uint64_t rng(void)
{
	return rng_next(&rng_state);
}

static unsigned int rng_below(unsigned int n)
{
	return (unsigned int)((rng() >> 32) % n);
}

/* --- mangled frames are accounted for, never crash or abort ------------- */

/*
 * Valid frames of every keyed case, then bytes flipped in their headers and
 * cut at random lengths: whatever comes out, the program passes the frame
 * and counts it in exactly one place, sketched, not IP, or one malformed
 * reason, so that rx equals their sum and nothing is lost or counted
 * twice.  The window totals count exactly the sketched frames.
 */
static void test_mangled_frames_accounted(void **state)
{
	struct dp *dp = dp_open_default();
	__u64 before[FS_STAT_MAX], after[FS_STAT_MAX], d[FS_STAT_MAX];
	__u64 accounted = 0, frames = 0, sketched_by_totals;
	struct fs_window_totals t0, t1;
	unsigned int i, s, m, round;

	rng_state = 0x9e3779b97f4a7c15ULL;
	dp_set_ctl(dp, 0, 0);
	dp_stats(dp, before);
	t0 = dp_totals(dp, 0);
	for (round = 0; round < 60; round++) {
		for (i = 0; i < FS_ARRAY_SIZE(keyed_cases); i++) {
			struct fs_flow_key k;
			struct pkt p;
			size_t hdr;

			keyed_frame(&p, &k, keyed_cases[i].build);
			/* Mangle the headers (Ethernet to a little past L4),
			 * where the parser looks. */
			hdr = p.len < 96 ? p.len : 96;
			for (m = 1 + rng_below(4); m > 0; m--)
				p.data[rng_below((unsigned int)hdr)] ^=
					(uint8_t)(1 + rng_below(255));
			if (rng_below(3) == 0)
				/* 14 bytes: the kernel refuses shorter frames. */
				p.len = 14 + rng_below((unsigned int)(p.len - 14 + 1));
			dp_run(dp, &p);
			frames++;
		}
	}
	dp_stats(dp, after);
	t1 = dp_totals(dp, 0);
	for (s = 0; s < FS_STAT_MAX; s++)
		d[s] = after[s] - before[s];
	for (s = 0; s < FS_STAT_MAX; s++) {
		/* Side counters, not verdicts: a fragment is also sketched,
		 * reports ride on sketched packets. */
		if (s == FS_STAT_RX || s == FS_STAT_FRAGMENTS ||
		    s == FS_STAT_REPORTS || s == FS_STAT_REPORTS_DROPPED)
			continue;
		accounted += d[s];
	}
	sketched_by_totals = t1.packets - t0.packets;
	assert_int_equal(d[FS_STAT_RX], frames);
	if (accounted != d[FS_STAT_RX])
		fail_msg("%llu frames seen, %llu accounted for",
			 (unsigned long long)d[FS_STAT_RX],
			 (unsigned long long)accounted);
	assert_int_equal(d[FS_STAT_UPDATE_ERRORS], 0);
	assert_int_equal(sketched_by_totals, d[FS_STAT_SKETCHED]);
	/* The mangling must have produced both outcomes to test anything. */
	assert_true(d[FS_STAT_SKETCHED] > 0);
	assert_true(d[FS_STAT_SKETCHED] < frames);
	dp_close(dp);
}

/*
 * One random frame from a pool of flows (Zipf-like: low flow numbers are
 * drawn more often, so some flows cross thresholds), with the key it must
 * produce.  Covers both families, VLAN tags, IPv6 extension headers,
 * fragments, TCP/UDP/ICMP/other protocols.
 */
static int random_frame(struct pkt *p, struct fs_flow_key *k, int nflows)
{
	unsigned int flow = rng_below(rng_below((unsigned int)nflows) + 1);
	uint64_t f = (flow + 1) * 0x9e3779b97f4a7c15ULL;
	static const __u8 protos[] = { 6, 17, 1, 47 };
	int v6 = f & 1, tags = (int)((f >> 1) % 3);
	__u8 proto = protos[(f >> 3) & 3];
	__u16 sport = (__u16)(f >> 16), dport = (__u16)(f >> 32);
	uint8_t src[16] = { 0 }, dst[16] = { 0 };
	int frag = rng_below(16) == 0, ext = v6 ? (int)rng_below(3) : 0;
	int i;

	if (v6) {
		src[0] = 0x20; src[1] = 0x01; src[2] = 0x0d; src[3] = 0xb8;
		dst[0] = 0xfd;
		memcpy(src + 8, &f, 8);
		dst[15] = (uint8_t)(f >> 40);
		if (proto == 1)
			proto = 58;
	} else {
		src[0] = 10;
		memcpy(src + 1, &f, 3);
		dst[0] = 172; dst[1] = 16;
		dst[3] = (uint8_t)(f >> 40);
	}

	memset(k, 0, sizeof(*k));
	k->family = v6 ? FS_FAMILY_IPV6 : FS_FAMILY_IPV4;
	k->proto = proto;
	memcpy(k->src, src, v6 ? 16 : 4);
	memcpy(k->dst, dst, v6 ? 16 : 4);

	pkt_init(p);
	pkt_eth(p, tags ? ((f >> 8) & 1 ? PKT_ETH_P_8021AD : PKT_ETH_P_8021Q) :
			  (v6 ? PKT_ETH_P_IPV6 : PKT_ETH_P_IP));
	for (i = 0; i < tags; i++)
		pkt_vlan(p, (__u16)(i + 1),
			 i + 1 < tags ? PKT_ETH_P_8021Q :
			 (v6 ? PKT_ETH_P_IPV6 : PKT_ETH_P_IP));
	if (v6) {
		pkt_ipv6(p, ext ? 0 : (frag ? 44 : proto), src, dst);
		for (i = 0; i < ext; i++)
			pkt_ipv6_opts(p, i + 1 < ext ? 60 :
					 (frag ? 44 : proto),
				      (uint8_t)rng_below(3));
		if (frag)
			pkt_ipv6_frag(p, proto, (uint16_t)(1 + rng_below(100)), 1);
	} else {
		pkt_ipv4(p, proto, src, dst, 5 + rng_below(3),
			 frag ? (uint16_t)(1 + rng_below(100)) : 0);
	}
	if (!frag) {
		if (proto == 6) {
			pkt_tcp(p, sport, dport, 5 + rng_below(4));
		} else if (proto == 17) {
			pkt_udp(p, sport, dport);
		} else if (proto == 1 || proto == 58) {
			__u8 type = (__u8)(f >> 48), code = (__u8)(f >> 56);

			pkt_icmp(p, type, code);
			k->dport = htons((__u16)(type << 8 | code));
		}
		if (proto == 6 || proto == 17) {
			k->sport = htons(sport);
			k->dport = htons(dport);
		}
	}
	pkt_payload(p, rng_below(1400));
	pkt_finish(p);
	return frag;
}

static void check_random(const struct fs_sketch_params *params, int npackets,
			 int nflows, __u64 phi_q32)
{
	struct dp *dp = dp_open(params);
	__u64 want_packets[FS_NSLOTS] = { 0 }, want_bytes[FS_NSLOTS] = { 0 };
	__u64 stats[FS_STAT_MAX], frags = 0, nreports = 0;
	unsigned int slot;
	int i;

	rng_state = 0x853c49e6748fea9bULL ^ params->cms_log2_width ^
		    ((__u64)params->cms_depth << 8) ^ ((__u64)params->hll_p << 16);
	dp_set_ctl(dp, 0, phi_q32);
	for (i = 0; i < npackets; i++) {
		struct fs_flow_key k;
		struct pkt p;
		int report;
		__u64 hash;

		/* Rotate once in the middle: the second half goes to slot 1. */
		if (i == npackets / 2)
			dp_set_ctl(dp, 1, phi_q32);
		frags += random_frame(&p, &k, nflows);
		dp->nreports = 0;
		dp_run(dp, &p);
		report = model_count(dp, &k, p.len, &hash);
		if (report) {
			assert_int_equal(dp->nreports, 1);
			assert_memory_equal(&dp->reports[0].key, &k, sizeof(k));
			assert_int_equal(dp->reports[0].report, report);
			assert_int_equal(dp->reports[0].hash, hash);
			assert_int_equal(dp->reports[0].window_seq, dp->seq);
			nreports++;
		} else {
			assert_int_equal(dp->nreports, 0);
		}
		want_packets[dp->seq % FS_NSLOTS] += 1;
		want_bytes[dp->seq % FS_NSLOTS] += p.len;
	}
	assert_state_matches_model(dp, "random traffic");
	for (slot = 0; slot < FS_NSLOTS; slot++) {
		struct fs_window_totals t = dp_totals(dp, slot);

		assert_int_equal(t.packets, want_packets[slot]);
		assert_int_equal(t.bytes, want_bytes[slot]);
	}
	dp_stats(dp, stats);
	assert_int_equal(stats[FS_STAT_RX], npackets);
	assert_int_equal(stats[FS_STAT_SKETCHED], npackets);
	assert_int_equal(stats[FS_STAT_REPORTS], nreports);
	assert_int_equal(stats[FS_STAT_UPDATE_ERRORS], 0);
	assert_int_equal(stats[FS_STAT_FRAGMENTS], frags);
	if (phi_q32)
		assert_true(nreports > 0);
	dp_close(dp);
}

static void test_random_default(void **state)
{
	struct fs_sketch_params params = default_params();

	check_random(&params, 5000, 500, PHI_HALF / 50);	/* phi = 1 % */
}

/* A narrow sketch, so flows share cells and conservative update differs
 * from the standard one. */
static void test_random_conservative(void **state)
{
	struct fs_sketch_params params = make_params(4, 6, 8, 1);

	check_random(&params, 5000, 500, PHI_HALF / 50);
}

/* --- the program verifies across the parameter range -------------------- */

/* Beyond this per-CPU size the maps are not allocated for real. */
#define REAL_SIZE_LIMIT (160ULL << 20)

static void test_params_range(void **state)
{
	static const struct { int d, w, p, cons; } sets[] = {
		{ 1, 4, 4, 0 }, { 1, 4, 4, 1 }, { 2, 5, 5, 0 }, { 3, 7, 8, 1 },
		{ 4, 10, 10, 0 }, { 5, 12, 14, 0 }, { 5, 12, 14, 1 },
		{ 6, 16, 12, 1 }, { 7, 17, 16, 0 }, { 8, 4, 18, 1 },
		{ 8, 13, 18, 0 }, { 1, 22, 4, 1 }, { 8, 22, 18, 0 },
		{ 8, 22, 18, 1 },
	};
	unsigned int i;

	for (i = 0; i < FS_ARRAY_SIZE(sets); i++) {
		struct fs_sketch_params params = make_params(sets[i].d, sets[i].w,
							     sets[i].p,
							     sets[i].cons);
		__u64 bytes = ((__u64)fs_cms_chunks(&params, FS_NSLOTS) +
			       fs_hll_chunks(&params, FS_NSLOTS)) * 32768;

		if (bytes <= REAL_SIZE_LIMIT) {
			check_random(&params, 300, 50, 5);
		} else {
			/* Verify only, with one chunk per map: every update
			 * beyond it must be refused and counted. */
			struct dp *dp = dp_open_sized(&params, 1, 1);
			__u64 stats[FS_STAT_MAX];
			struct fs_flow_key k;
			struct pkt p;

			keyed_frame(&p, &k, k_ipv4_tcp);
			dp_run(dp, &p);
			dp_stats(dp, stats);
			/* Row 1 starts at cell 2^22, chunk 2048: missing. */
			assert_int_equal(stats[FS_STAT_UPDATE_ERRORS], 1);
			assert_int_equal(stats[FS_STAT_SKETCHED], 0);
			assert_int_equal(dp_totals(dp, 0).packets, 0);
			dp_close(dp);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keyed_frames),
		cmocka_unit_test(test_malformed_frames),
		cmocka_unit_test(test_short_frames_refused),
		cmocka_unit_test(test_slots_and_totals),
		cmocka_unit_test(test_sample_state),
		cmocka_unit_test(test_detect_state),
		cmocka_unit_test(test_detect_planted),
		cmocka_unit_test(test_ifcount_ingress_premise),
		cmocka_unit_test(test_ifcount_slot0),
		cmocka_unit_test(test_ifcount_slot1_and_past_n),
		cmocka_unit_test(test_ifcount_empty_table),
		cmocka_unit_test(test_ifcount_devices),
		VARIANT(test_reports, check_reports, 0),
		VARIANT(test_reports_conservative, check_reports, 1),
		cmocka_unit_test(test_reports_dropped),
		cmocka_unit_test(test_bursty_reports),
		cmocka_unit_test(test_mangled_frames_accounted),
		cmocka_unit_test(test_random_default),
		cmocka_unit_test(test_random_conservative),
		cmocka_unit_test(test_params_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
