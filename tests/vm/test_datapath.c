// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_datapath.c - the real XDP program (bpf/flowsketch.bpf.c) on both
 * paths: the same crafted frames through a copy loaded with fs_use_kfunc
 * = 1 and one with 0 must leave every datapath map (fs_cms, fs_cms_narrow,
 * fs_hll, fs_hll_packed, and the detection sketches' fs_prefix and
 * fs_spread: sketch_kind.h) byte-identical, equal to the user-space model
 * fed the keys the frames were built from.  Both detection sketches are
 * on, at the daemon's defaults (flowsketchd --detect prefixes,spread):
 * the kfunc path runs their update in BPF after the module's (kfunc.h),
 * with the draw's n from the window totals BPF keeps on both paths: a
 * path that numbered a window's packets differently shows here.
 *
 * Ground truth comes from the generator, not from the code under test:
 * the key of every frame is known when it is built, the bytes counted are
 * the frame length (datapath.bpf.h), frames that cannot be keyed (ARP,
 * truncated) must not be counted, the totals must equal what was sent, and
 * every Count-Min row of a slot, folded (wide + narrow cells, dpmaps.h),
 * must sum to the slot's packets and bytes (standard update: every packet
 * adds to one cell of each row).  That sum is the check the three builds
 * cannot pass by sharing a mistake of update.h, and two heavy flows give
 * it spills to check: one of full-sized frames, whose cells' bytes
 * overflow a narrow cell (524,287) every ~360 frames, one of small frames,
 * whose packets overflow it (511); each has a quarter of the frames,
 * about 1,000 a slot, so every row's cell of each spills about twice a
 * slot, natively in the module and in BPF alike.
 * The detection sketches have sums of their own to check: at skip 0 every
 * packet draws one (side, level) pair and adds itself and its bytes to one
 * prefix bucket of each row (prefix.h), so each row's buckets, folded,
 * hold the slot's packets and bytes too; and a spread bucket's candidate
 * is an address of its side that a frame carried (spread.h).
 * Half-way the window is rotated (fs_ctl.window_seq = 1) so both slots
 * are exercised, and a report fraction is set so heavy-hitter reports
 * happen (thresholds from the running totals, as in the datapath).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "flowsketch/maps.h"
#include "vmtest.h"
#include "dpmaps.h"
#include "traffic.h"
#include "pkt_build.h"
#include "flowsketch.skel.h"

#define FS_VM_DP_FLOWS 1000
#define FS_VM_DP_FRAMES 8192
/* The heavy flows, numbered past the others: IPv4 TCP of full-sized
 * frames, IPv6 UDP of small ones (fs_vm_dp_frame()). */
#define FS_VM_DP_HEAVY_BYTES (FS_VM_DP_FLOWS + 2)
#define FS_VM_DP_HEAVY_PACKETS (FS_VM_DP_FLOWS + 5)
/* Report fraction phi = 2 %: fs_ctl.hh_phi_q32 = floor(phi * 2^32). */
#define FS_VM_DP_PHI_Q32 85899345ULL

struct fs_vm_dp_truth {
	__u64 frames;
	__u64 packets[FS_NSLOTS];
	__u64 bytes[FS_NSLOTS];
	__u64 reports;		/* packets on which the model reported */
	bool sent[FS_VM_DP_HEAVY_PACKETS + 1];	/* flows with a frame */
};

FS_VM_SKEL_OPENER(fs_vm_dp_open, flowsketch)

/*
 * Frame of flow `flow` with `payload` bytes, and its key.  Flows cycle
 * through TCP, UDP and ICMP over IPv4 and IPv6, every fifth one behind a
 * VLAN tag; addresses and ports are functions of the flow number.
 */
static void fs_vm_dp_frame(__u32 flow, size_t payload, struct pkt *pk,
			   struct fs_flow_key *key)
{
	static const __u8 protos[3] = { 6, 17, 0 /* ICMP of the family */ };
	bool v6 = flow & 1;
	__u8 proto = protos[(flow >> 1) % 3];
	__u16 sport = (__u16)(1024 + flow * 7), dport = (__u16)(flow % 3 ? 443 : 53);
	__u8 src[16] = { 0 }, dst[16] = { 0 };

	if (!proto)
		proto = v6 ? 58 : 1;
	memset(key, 0, sizeof(*key));
	key->family = v6 ? FS_FAMILY_IPV6 : FS_FAMILY_IPV4;
	key->proto = proto;
	if (v6) {
		src[0] = 0xfd; src[1] = 0x00; src[14] = (__u8)(flow >> 8); src[15] = (__u8)flow;
		dst[0] = 0xfd; dst[1] = 0x01; dst[15] = (__u8)(flow % 37);
	} else {
		src[0] = 10; src[1] = 1; src[2] = (__u8)(flow >> 8); src[3] = (__u8)flow;
		dst[0] = 10; dst[1] = 2; dst[3] = (__u8)(flow % 37);
	}
	memcpy(key->src, src, 16);
	memcpy(key->dst, dst, 16);

	pkt_init(pk);
	if (flow % 5 == 4) {
		pkt_eth(pk, PKT_ETH_P_8021Q);
		pkt_vlan(pk, (__u16)flow, v6 ? PKT_ETH_P_IPV6 : PKT_ETH_P_IP);
	} else {
		pkt_eth(pk, v6 ? PKT_ETH_P_IPV6 : PKT_ETH_P_IP);
	}
	if (v6)
		pkt_ipv6(pk, proto, src, dst);
	else
		pkt_ipv4(pk, proto, src, dst, 5, 0);
	if (proto == 6 || proto == 17) {
		if (proto == 6)
			pkt_tcp(pk, sport, dport, 5);
		else
			pkt_udp(pk, sport, dport);
		key->sport = htons(sport);
		key->dport = htons(dport);
	} else {
		__u8 type = v6 ? 128 : 8, code = (__u8)(flow % 4);

		pkt_icmp(pk, type, code);
		key->dport = htons((__u16)(type << 8 | code));
	}
	pkt_payload(pk, payload);
	pkt_finish(pk);
}

/* A frame the parser must refuse: ARP, or an IPv4 header cut short. */
static void fs_vm_dp_junk(__u32 i, struct pkt *pk)
{
	static const __u8 a[4] = { 10, 9, 9, 9 };

	pkt_init(pk);
	if (i & 1) {
		pkt_eth(pk, PKT_ETH_P_ARP);
		pkt_payload(pk, 28);
	} else {
		pkt_eth(pk, PKT_ETH_P_IP);
		pkt_ipv4(pk, 17, a, a, 5, 0);
		pkt_udp(pk, 1, 2);
		pkt_finish(pk);
		pk->len = 14 + 12;
	}
}

static bool fs_vm_dp_send(struct flowsketch *kf, struct flowsketch *bp,
			  const struct pkt *pk)
{
	__u32 rv_kf = 0, rv_bp = 0;

	return !fs_vm_run(kf->progs.fs_xdp, pk->data, (__u32)pk->len, NULL, &rv_kf) &&
	       !fs_vm_run(bp->progs.fs_xdp, pk->data, (__u32)pk->len, NULL, &rv_bp) &&
	       rv_kf == 2 && rv_bp == 2;	/* XDP_PASS: observe only */
}

/* Sum over CPUs of a per-CPU array of __u64 values, elements [0, n). */
static int fs_vm_dp_sum_u64(struct bpf_map *map, __u32 n, __u32 words,
			    __u64 *sum)
{
	int ncpus = libbpf_num_possible_cpus(), c;
	__u64 *v = calloc((size_t)ncpus * words, sizeof(*v));
	__u32 i, w;

	if (!v)
		return -ENOMEM;
	memset(sum, 0, (size_t)n * words * sizeof(*sum));
	for (i = 0; i < n; i++) {
		if (bpf_map_lookup_elem(bpf_map__fd(map), &i, v)) {
			free(v);
			return -errno;
		}
		for (c = 0; c < ncpus; c++)
			for (w = 0; w < words; w++)
				sum[i * words + w] += v[c * words + w];
	}
	free(v);
	return 0;
}

/*
 * fs_hot summed over CPUs the daemon's way: slot s's totals (packets,
 * bytes into tot[2 s], tot[2 s + 1]) count only where tagged with window
 * s, the one seq this test uses for that slot; rx and sketched go to
 * st[FS_STAT_RX], st[FS_STAT_SKETCHED] (fs_stats never holds them).
 */
static int fs_vm_dp_sum_hot(struct bpf_map *map, __u64 *tot, __u64 *st)
{
	int ncpus = libbpf_num_possible_cpus(), c, s;
	struct fs_hot_line *v = calloc((size_t)ncpus, sizeof(*v));
	__u32 zero = 0;

	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(map), &zero, v)) {
		free(v);
		return -errno;
	}
	memset(tot, 0, FS_NSLOTS * 2 * sizeof(*tot));
	if (st[FS_STAT_RX] || st[FS_STAT_SKETCHED]) {
		free(v);
		return -EPROTO;	/* fs_stats must not count these */
	}
	for (c = 0; c < ncpus; c++) {
		st[FS_STAT_RX] += v[c].rx;
		st[FS_STAT_SKETCHED] += v[c].sketched;
		for (s = 0; s < FS_NSLOTS; s++) {
			if (v[c].slot[s].seq != (__u64)s)
				continue;
			tot[2 * s] += v[c].slot[s].packets;
			tot[2 * s + 1] += v[c].slot[s].bytes;
		}
	}
	free(v);
	return 0;
}

static void fs_vm_dp_check_counters(struct flowsketch *kf, struct flowsketch *bp,
				    const struct fs_vm_dp_truth *t)
{
	__u64 tot_kf[FS_NSLOTS * 2], tot_bp[FS_NSLOTS * 2];
	__u64 st_kf[FS_STAT_MAX], st_bp[FS_STAT_MAX];
	bool ok = true;
	int s;

	if (fs_vm_dp_sum_u64(kf->maps.fs_stats, FS_STAT_MAX, 1, st_kf) ||
	    fs_vm_dp_sum_u64(bp->maps.fs_stats, FS_STAT_MAX, 1, st_bp) ||
	    fs_vm_dp_sum_hot(kf->maps.fs_hot, tot_kf, st_kf) ||
	    fs_vm_dp_sum_hot(bp->maps.fs_hot, tot_bp, st_bp)) {
		fs_vm_tap(false, "datapath: fs_hot and fs_stats readable, rx and sketched only in fs_hot");
		return;
	}
	for (s = 0; s < FS_NSLOTS; s++)
		if (tot_kf[2 * s] != t->packets[s] || tot_kf[2 * s + 1] != t->bytes[s])
			ok = false;
	fs_vm_tap(ok && !memcmp(tot_kf, tot_bp, sizeof(tot_kf)),
		  "datapath: per-slot totals equal the packets and bytes sent, on both paths");
	fs_vm_tap(!memcmp(st_kf, st_bp, sizeof(st_kf)) &&
		  st_kf[FS_STAT_RX] == t->frames &&
		  st_kf[FS_STAT_SKETCHED] == t->packets[0] + t->packets[1] &&
		  st_kf[FS_STAT_UPDATE_ERRORS] == 0,
		  "datapath: stats equal on both paths (rx %llu, sketched %llu, update errors %llu)",
		  (unsigned long long)st_kf[FS_STAT_RX],
		  (unsigned long long)st_kf[FS_STAT_SKETCHED],
		  (unsigned long long)st_kf[FS_STAT_UPDATE_ERRORS]);
	fs_vm_tap(t->reports > 0 &&
		  st_kf[FS_STAT_REPORTS] + st_kf[FS_STAT_REPORTS_DROPPED] == t->reports &&
		  st_bp[FS_STAT_REPORTS] + st_bp[FS_STAT_REPORTS_DROPPED] == t->reports,
		  "datapath: heavy-hitter reports on both paths equal the model's (%llu)",
		  (unsigned long long)t->reports);
}

/*
 * Every Count-Min row of each slot of the kfunc copy, folded over CPUs
 * (wide + narrow), sums to the packets and bytes sent to that slot; the
 * spills that copy shows into *wide and *narrow (dpmaps.h).
 */
static void fs_vm_dp_check_rows(struct flowsketch *kf,
				const struct fs_sketch_params *p,
				const struct fs_vm_dp_truth *t, __u64 *wide,
				__u64 *narrow)
{
	struct fs_vm_dp_dump d;
	struct fs_sketch s = { 0 };
	bool ok = true;
	__u32 slot, row;
	int err;

	err = fs_vm_dp_dump(kf->obj, &d);
	if (!err)
		err = fs_sketch_init(&s, p);
	if (err) {
		fs_vm_tap(false, "datapath: maps dumped and folded: %s", strerror(-err));
		goto out;
	}
	fs_vm_dp_spills(&d, -1, wide, narrow);
	for (slot = 0; slot < FS_NSLOTS; slot++) {
		fs_sketch_reset(&s);
		if (fs_vm_dp_fold(&d, -1, slot, &s)) {
			ok = false;
			break;
		}
		for (row = 0; row < p->cms_depth; row++) {
			__u64 packets, bytes;

			fs_vm_row_sum(&s, row, &packets, &bytes);
			if (packets != t->packets[slot] || bytes != t->bytes[slot]) {
				fs_vm_diag("datapath: slot %u row %u sums to %llu packets, %llu bytes; sent %llu, %llu",
					   slot, row, (unsigned long long)packets,
					   (unsigned long long)bytes,
					   (unsigned long long)t->packets[slot],
					   (unsigned long long)t->bytes[slot]);
				ok = false;
			}
		}
	}
	fs_vm_tap(ok, "datapath: every Count-Min row of both slots, folded (wide + narrow), sums to the packets and bytes sent (slot 0 %llu, %llu; slot 1 %llu, %llu)",
		  (unsigned long long)t->packets[0], (unsigned long long)t->bytes[0],
		  (unsigned long long)t->packets[1], (unsigned long long)t->bytes[1]);
out:
	fs_sketch_free(&s);
	fs_vm_dp_dump_free(&d);
}

/* Whether addr (16 bytes, family) is the source (side 0) or destination
 * (side 1) of a flow that was sent. */
static bool fs_vm_dp_was_sent(const struct fs_vm_dp_truth *t, __u32 side,
			      __u32 family, const __u8 *addr, struct pkt *pk)
{
	struct fs_flow_key key;
	__u32 flow;

	for (flow = 0; flow <= FS_VM_DP_HEAVY_PACKETS; flow++) {
		if (!t->sent[flow])
			continue;
		fs_vm_dp_frame(flow, 0, pk, &key);
		if (key.family == family &&
		    !memcmp(side ? key.dst : key.src, addr, 16))
			return true;
	}
	return false;
}

/*
 * The detection sketches of the kfunc copy, each slot folded over CPUs:
 * every prefix row sums to the slot's packets and bytes, and every spread
 * bucket's candidate is an address sent on its side (see the top).  Both
 * must hold something, or the comparison above compared empty maps.
 */
static void fs_vm_dp_check_detect(struct flowsketch *kf,
				  const struct fs_sketch_params *p,
				  const struct fs_vm_dp_truth *t, struct pkt *pk)
{
	struct fs_prefix_params pp;
	struct fs_spread_params sp;
	struct fs_vm_dp_dump d;
	struct fs_sketch s = { 0 };
	__u64 candidates[FS_SPREAD_NSIDES] = { 0 };
	bool rows_ok = true, keys_ok = true;
	__u32 slot, r, c, side, w;
	int err;

	fs_params_prefix(p, &pp);
	fs_params_spread(p, &sp);
	err = fs_vm_dp_dump(kf->obj, &d);
	if (!err)
		err = fs_sketch_init(&s, p);
	if (err) {
		fs_vm_tap(false, "datapath: detection maps dumped and folded: %s", strerror(-err));
		goto out;
	}
	for (slot = 0; slot < FS_NSLOTS; slot++) {
		fs_sketch_reset(&s);
		if (fs_vm_dp_fold(&d, -1, slot, &s)) {
			rows_ok = keys_ok = false;
			break;
		}
		w = 1U << pp.log2_width;
		for (r = 0; r < pp.depth; r++) {
			__u64 packets = 0, bytes = 0;

			for (c = 0; c < w; c++) {
				packets += s.prefix[r * w + c].packets;
				bytes += s.prefix[r * w + c].bytes;
			}
			if (packets != t->packets[slot] || bytes != t->bytes[slot]) {
				fs_vm_diag("datapath: slot %u prefix row %u holds %llu packets, %llu bytes; sent %llu, %llu",
					   slot, r, (unsigned long long)packets,
					   (unsigned long long)bytes,
					   (unsigned long long)t->packets[slot],
					   (unsigned long long)t->bytes[slot]);
				rows_ok = false;
			}
		}
		w = 1U << sp.log2_width;
		for (side = 0; side < FS_SPREAD_NSIDES; side++)
			for (c = 0; c < sp.depth * w; c++) {
				const struct fs_spread_bucket *b =
					&s.spread[side * sp.depth * w + c];

				if (!b->family)
					continue;
				candidates[side]++;
				if (!fs_vm_dp_was_sent(t, side, b->family, b->key, pk)) {
					fs_vm_diag("datapath: slot %u spread side %u bucket %u: a candidate no frame carried",
						   slot, side, c);
					keys_ok = false;
				}
			}
	}
	fs_vm_tap(rows_ok && t->packets[0] && t->packets[1],
		  "datapath: every prefix row of both slots, folded, holds the packets and bytes sent (skip 0: each packet in one bucket a row)");
	fs_vm_tap(keys_ok && candidates[0] && candidates[1],
		  "datapath: every spread candidate is an address sent on its side (%llu source, %llu destination candidates)",
		  (unsigned long long)candidates[0], (unsigned long long)candidates[1]);
out:
	fs_sketch_free(&s);
	fs_vm_dp_dump_free(&d);
}

void fs_vm_test_datapath(void)
{
	struct flowsketch *kf = NULL, *bp = NULL;
	struct fs_vm_dp_truth t = {};
	struct fs_sketch_params p;
	struct fs_flow_key key;
	struct fs_model model = {};
	const struct fs_prefix_params pp = { FS_DEFAULT_PREFIX_DEPTH,
		FS_DEFAULT_PREFIX_LOG2W, FS_DEFAULT_PREFIX_SKIP };
	const struct fs_spread_params sp = { FS_DEFAULT_SPREAD_DEPTH,
		FS_DEFAULT_SPREAD_LOG2W, FS_DEFAULT_SPREAD_SHIFT };
	/* The keyed sample at 1 in 4, in 16 buckets: some fill and cut. */
	const struct fs_sample_params smp = { 2, 4 };
	__u64 rng = 3, seq = 0, spill_wide = 0, spill_narrow = 0, live = 0;
	int i, m, bad = 0, d, report;
	struct pkt *pk;

	pk = malloc(sizeof(*pk));
	fs_vm_params(&p);
	fs_params_set_prefix(&p, &pp);
	fs_params_set_spread(&p, &sp);
	fs_params_set_sample(&p, &smp);
	kf = fs_vm_dp_open(&p, true);
	fs_vm_tap(kf, "datapath: flowsketch.bpf.c loads with fs_use_kfunc = 1%s%s",
		  kf ? "" : ": ", kf ? "" : strerror(errno));
	bp = fs_vm_dp_open(&p, false);
	fs_vm_tap(bp, "datapath: flowsketch.bpf.c loads with fs_use_kfunc = 0%s%s",
		  bp ? "" : ": ", bp ? "" : strerror(errno));
	if (!pk || !kf || !bp || fs_model_init(&model, &p) ||
	    fs_vm_set_ctl(kf->maps.fs_ctl, seq, FS_VM_DP_PHI_Q32) ||
	    fs_vm_set_ctl(bp->maps.fs_ctl, seq, FS_VM_DP_PHI_Q32))
		goto out;

	for (i = 0; i < FS_VM_DP_FRAMES; i++) {
		/* Skewed flow choice (square of a uniform): low flows are heavy. */
		__u32 u = fs_vm_rand_below(&rng, FS_VM_DP_FLOWS);
		__u32 flow = (__u32)((__u64)u * u / FS_VM_DP_FLOWS);
		__u32 slot = (__u32)(seq % FS_NSLOTS);
		__u32 payload = fs_vm_rand_below(&rng, 1200);

		switch (fs_vm_rand_below(&rng, 4)) {
		case 0:
			flow = FS_VM_DP_HEAVY_BYTES;
			payload = 1300 + fs_vm_rand_below(&rng, 101);
			break;
		case 1:
			flow = FS_VM_DP_HEAVY_PACKETS;
			payload = fs_vm_rand_below(&rng, 65);
			break;
		}
		if (i == FS_VM_DP_FRAMES / 2) {
			seq = 1;
			slot = 1;
			if (fs_vm_set_ctl(kf->maps.fs_ctl, seq, FS_VM_DP_PHI_Q32) ||
			    fs_vm_set_ctl(bp->maps.fs_ctl, seq, FS_VM_DP_PHI_Q32))
				bad++;
		}
		t.frames++;
		if (i % 64 == 63) {
			fs_vm_dp_junk(i, pk);
			bad += !fs_vm_dp_send(kf, bp, pk);
			continue;
		}
		fs_vm_dp_frame(flow, payload, pk, &key);
		bad += !fs_vm_dp_send(kf, bp, pk);
		report = fs_model_packet(&model, &key, pk->len, seq,
					 FS_VM_DP_PHI_Q32, NULL);
		t.packets[slot]++;
		t.bytes[slot] += pk->len;
		t.sent[flow] = true;
		t.reports += report > 0;
	}
	fs_vm_tap(bad == 0, "datapath: %d frames (IPv4/IPv6, TCP/UDP/ICMP, VLAN, %d flows and 2 heavy ones, junk) pass on both paths (%d failed)",
		  FS_VM_DP_FRAMES, FS_VM_DP_FLOWS, bad);
	for (m = 0; m < FS_NDPMAPS; m++) {
		d = fs_vm_dp_differ(kf->obj, bp->obj, m, &model, fs_vm_cpu);
		fs_vm_tap(d == 0, "datapath: %s byte-identical on kfunc path, BPF path and model (%d chunks differ)",
			  fs_dp_maps[m].map, d);
	}
	/* The sample written, not two maps nobody touches: its live
	 * entries in the model, which the lines above found identical. */
	for (m = 0; m < (int)(model.env.nchunks[FS_DP_SAMPLE] << FS_SAMPLE_CHUNK_SHIFT); m++) {
		const struct fs_sample_bucket *b = (const struct fs_sample_bucket *)
			model.env.chunks[FS_DP_SAMPLE] + m;

		for (d = 0; d < FS_SAMPLE_WAYS; d++)
			live += fs_sample_live(&b->e[d], fs_sample_limit(b, smp.shift));
	}
	fs_vm_tap(live > 0, "datapath: the keyed sample holds %llu flows, the same on both paths",
		  (unsigned long long)live);
	fs_vm_dp_check_rows(kf, &p, &t, &spill_wide, &spill_narrow);
	fs_vm_tap(spill_wide > 0 && spill_wide == spill_narrow,
		  "datapath: the kfunc path spilled narrow cells into wide ones (%llu wide cells hold a count, %llu narrow cells carry the spilled bit)",
		  (unsigned long long)spill_wide, (unsigned long long)spill_narrow);
	fs_vm_dp_check_detect(kf, &p, &t, pk);
	fs_vm_dp_check_counters(kf, bp, &t);
out:
	fs_model_free(&model);
	flowsketch__destroy(kf);
	flowsketch__destroy(bp);
	free(pk);
}
