// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_egress.c - the transmit frontend (bpf/egress.bpf.c) on both paths,
 * on live traffic from two CPUs.
 *
 * test_datapath.c shows the XDP object's kfunc and BPF paths equal on
 * frames run by BPF_PROG_TEST_RUN on one CPU.  The egress object is
 * another program type (tracing: the module registers its kfunc for it
 * apart from XDP, and the verifier checks the call apart), it reads real
 * skbs, and its per-CPU sketches are only worth anything if every CPU's
 * copy is right.  So two copies of it, one loaded with fs_use_kfunc = 1
 * and one with 0, with the same parameters and secret and the same
 * interface in fs_ifaces, are attached to tp_btf/net_dev_start_xmit
 * together, and two threads pinned to CPU 0 and CPU 1 send UDP over IPv4
 * and IPv6 loopback in a network namespace this test makes.
 *
 * Why the copies must agree byte for byte, CPU by CPU: the tracepoint
 * runs every attached program on each frame, one after the other, in the
 * sender's context (lo has no queue: sendto() transmits before it
 * returns), so each CPU's copy of the sketches sees the same frames in
 * the same order in both objects, whatever the two CPUs interleave.
 *
 * Ground truth is what the threads sent, never what the datapath says:
 * on lo each datagram is transmitted once, by lo, on the CPU of the
 * thread that sent it; each thread counts its datagrams and frame bytes
 * (14 Ethernet + 20 IPv4 or 40 IPv6 + 8 UDP + payload, the whole frame,
 * datapath.bpf.h) per window and feeds them, in order, to a user-space
 * model of its CPU.  A socket is bound on every destination port, so no
 * datagram draws an ICMP error (without them every datagram does, and
 * the totals double), and lo in a fresh namespace sends nothing of its
 * own (no neighbour discovery, no multicast reports on a loopback
 * device): every frame counted must be one the test sent, on the CPU
 * that sent it, and the checks below hold every CPU and slot to that.
 * The window is rotated half-way, after both threads have sent their
 * share of window 0 and before either sends window 1's, so both slots
 * are used and no frame finds one copy's fs_ctl rotated and the other's
 * not.  The Count-Min bound is the test's own: eps = e / w from the
 * parameters it loaded, N what it sent.
 *
 * Every datapath map (fs_cms, fs_cms_narrow, fs_hll, fs_hll_packed:
 * sketch_kind.h) is compared, and counts are read from the maps folded
 * as the daemon folds them (dpmaps.h): a cell is its wide part plus its
 * narrow part.  Two flows are sized to make their cells spill from the
 * narrow into the wide part in each window, on each CPU's copy: one of
 * 550 small datagrams a window from CPU 0 (past a narrow cell's 511
 * packets), one of 380 datagrams of 1,462-byte frames a window from CPU 1
 * (555,560 bytes, past its 524,287).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "flowsketch/maps.h"
#include "vmtest.h"
#include "dpmaps.h"
#include "egress.skel.h"	/* after vmtest.h: needs params.h's types */

#define FS_VM_EG_CPUS 2
/* Report fraction phi = 2 %: fs_ctl.hh_phi_q32 = floor(phi * 2^32). */
#define FS_VM_EG_PHI_Q32 85899345ULL
#define FS_VM_EG_ETH_HLEN 14
#define FS_VM_EG_UDP_HLEN 8

/*
 * Distinct counts and sizes, so a count or a byte total credited to the
 * wrong flow shows; IPv4 and IPv6 on each CPU, and two flows sent from
 * both CPUs (one socket, two threads), whose estimates must add the two
 * CPUs' sketches.
 */
static const struct fs_vm_eg_flow {
	int family;
	__u16 sport, dport;
	unsigned int payload;
	unsigned int packets[FS_VM_EG_CPUS];	/* sent from CPU 0, CPU 1 */
} fs_vm_eg_flows[] = {
	{ AF_INET, 41001, 7101, 64, { 1100, 0 } },
	{ AF_INET, 41002, 7102, 900, { 150, 0 } },
	{ AF_INET6, 41003, 7103, 256, { 300, 0 } },
	{ AF_INET, 41004, 7104, 128, { 0, 500 } },
	{ AF_INET6, 41005, 7105, 1400, { 0, 760 } },
	{ AF_INET6, 41006, 7106, 32, { 0, 350 } },
	{ AF_INET, 41007, 7107, 512, { 120, 200 } },
	{ AF_INET6, 41008, 7108, 700, { 70, 40 } },
};

#define FS_VM_EG_NFLOWS (sizeof(fs_vm_eg_flows) / sizeof(fs_vm_eg_flows[0]))

/*
 * The key of fs_ifaces (maps.h), spelled out: it is the ABI the daemon
 * writes into the pinned map, and its size is checked against the map's.
 */
struct fs_vm_eg_iface {
	__u32 ifindex;
	__u32 netns_ino;
};

/* One sending thread, pinned to its CPU, with that CPU's model. */
struct fs_vm_eg_sender {
	pthread_t thread;
	int cpu;
	int on_cpu;			/* sched_getcpu() once pinned */
	const int *tx;			/* per flow; shared by the threads */
	__u64 seq;			/* the window being sent */
	struct fs_model model;		/* what this CPU's sketches must hold */
	__u64 packets[FS_NSLOTS], bytes[FS_NSLOTS];
	__u64 reports;			/* packets the model reported on */
	int err;
};

/* One copy's maps after the traffic, every CPU's value of each element at
 * (element * ncpus + cpu) * stride. */
struct fs_vm_eg_dump {
	struct fs_vm_dp_dump dp;	/* every datapath map of sketch state */
	struct fs_hot_line *hot;
	__u64 *stats;
	struct fs_kfunc_args *args;
	__u64 recursion_misses;
};

static __u64 fs_vm_eg_frame_len(const struct fs_vm_eg_flow *f)
{
	return FS_VM_EG_ETH_HLEN + (f->family == AF_INET ? 20 : 40) +
	       FS_VM_EG_UDP_HLEN + f->payload;
}

/* The key the parser makes of f's datagrams (flow_key.h). */
static void fs_vm_eg_key(const struct fs_vm_eg_flow *f, struct fs_flow_key *k)
{
	memset(k, 0, sizeof(*k));
	k->proto = 17;
	k->sport = htons(f->sport);
	k->dport = htons(f->dport);
	if (f->family == AF_INET) {
		k->family = FS_FAMILY_IPV4;
		k->src[0] = k->dst[0] = 127;
		k->src[3] = k->dst[3] = 1;
	} else {
		k->family = FS_FAMILY_IPV6;
		k->src[15] = k->dst[15] = 1;
	}
}

FS_VM_SKEL_OPENER(fs_vm_eg_open, egress)

static int fs_vm_eg_set_iface(struct egress *skel, const struct fs_vm_eg_iface *k)
{
	__u32 one = 1;

	if (bpf_map__key_size(skel->maps.fs_ifaces) != sizeof(*k))
		return -EPROTO;
	return bpf_map_update_elem(bpf_map__fd(skel->maps.fs_ifaces), k, &one,
				   BPF_ANY) ? -errno : 0;
}

/*
 * Send this thread's share of window seq, the first half of every flow's
 * datagrams from its CPU in window 0, the rest in window 1, round robin
 * so that a window holds a mix.  Each datagram is counted and fed to the
 * model once sendto() has returned, i.e. once lo has transmitted it.
 */
static int fs_vm_eg_send(struct fs_vm_eg_sender *s, __u64 seq)
{
	static const char payload[1500];
	__u32 slot = (__u32)(seq % FS_NSLOTS);
	unsigned int i, round, busy;

	for (round = 0, busy = 1; busy; round++) {
		busy = 0;
		for (i = 0; i < FS_VM_EG_NFLOWS; i++) {
			const struct fs_vm_eg_flow *f = &fs_vm_eg_flows[i];
			unsigned int n = f->packets[s->cpu];
			unsigned int from = seq ? n / 2 : 0, to = seq ? n : n / 2;
			struct sockaddr_storage dst;
			struct fs_flow_key key;
			socklen_t len;
			ssize_t sent;
			int report;

			if (from + round >= to)
				continue;
			busy = 1;
			len = fs_vm_loopback(f->family, f->dport, &dst);
			sent = sendto(s->tx[i], payload, f->payload, 0,
				      (struct sockaddr *)&dst, len);
			if (sent != (ssize_t)f->payload)
				return sent < 0 ? -errno : -EIO;
			s->packets[slot]++;
			s->bytes[slot] += fs_vm_eg_frame_len(f);
			s->model.hot.rx++;
			fs_vm_eg_key(f, &key);
			report = fs_model_packet(&s->model, &key, fs_vm_eg_frame_len(f),
						 seq, FS_VM_EG_PHI_Q32, NULL);
			if (report < 0)
				return report;
			s->reports += report > 0;
		}
	}
	return 0;
}

/* One window's share, pinned to the sender's CPU (and checked to be on it:
 * the per-CPU checks assume each thread's frames land on its CPU). */
static void *fs_vm_eg_sender_main(void *arg)
{
	struct fs_vm_eg_sender *s = arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(s->cpu, &set);
	s->on_cpu = -1;
	if (sched_setaffinity(0, sizeof(set), &set)) {
		s->err = -errno;
		return NULL;
	}
	s->on_cpu = sched_getcpu();
	if (s->on_cpu != s->cpu) {
		s->err = -EXDEV;
		return NULL;
	}
	s->err = fs_vm_eg_send(s, s->seq);
	return NULL;
}

/* All CPUs' values of elements [0, n) of a per-CPU array into *out. */
static int fs_vm_eg_read(struct bpf_map *map, __u32 n, int ncpus, void **out)
{
	size_t stride = (bpf_map__value_size(map) + 7) & ~(size_t)7;
	char *v;
	__u32 i;

	v = calloc((size_t)n * ncpus, stride);
	if (!v)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (bpf_map_lookup_elem(bpf_map__fd(map), &i,
					v + (size_t)i * ncpus * stride)) {
			int err = -errno;

			free(v);
			return err;
		}
	}
	*out = v;
	return 0;
}

static int fs_vm_eg_recursion_misses(const struct bpf_program *prog, __u64 *misses)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
		return -errno;
	*misses = info.recursion_misses;
	return 0;
}

static int fs_vm_eg_dump(struct egress *skel, const struct fs_sketch_params *p,
			 int ncpus, struct fs_vm_eg_dump *d)
{
	int err, m;

	memset(d, 0, sizeof(*d));
	err = fs_vm_dp_dump(skel->obj, &d->dp);
	if (!err && d->dp.ncpus != ncpus)
		err = -EPROTO;
	for (m = 0; m < FS_NDPMAPS && !err; m++)
		if (d->dp.n[m] != fs_dp_chunks(m, p, FS_NSLOTS))
			err = -EPROTO;
	if (!err)
		err = fs_vm_eg_read(skel->maps.fs_hot, 1, ncpus, (void **)&d->hot);
	if (!err)
		err = fs_vm_eg_read(skel->maps.fs_stats, FS_STAT_MAX, ncpus,
				    (void **)&d->stats);
	if (!err)
		err = fs_vm_eg_read(skel->maps.fs_kfunc_args, 1, ncpus,
				    (void **)&d->args);
	if (!err)
		err = fs_vm_eg_recursion_misses(skel->progs.fs_egress,
						&d->recursion_misses);
	return err;
}

static void fs_vm_eg_dump_free(struct fs_vm_eg_dump *d)
{
	fs_vm_dp_dump_free(&d->dp);
	free(d->hot);
	free(d->stats);
	free(d->args);
}

/*
 * Elements [0, n) of size vsz, CPU by CPU: differ[c] gets how many of
 * CPU c's differ between a and b (differ[FS_VM_EG_CPUS] those of any CPU
 * past the senders'), model_differ[c] how many of a's on a sender's CPU
 * differ from model[c] (n elements of vsz bytes each).
 */
static void fs_vm_eg_compare(const char *a, const char *b, __u32 n, size_t vsz,
			     int ncpus, const void *const model[FS_VM_EG_CPUS],
			     int differ[FS_VM_EG_CPUS + 1],
			     int model_differ[FS_VM_EG_CPUS])
{
	size_t stride = (vsz + 7) & ~(size_t)7;
	__u32 i;
	int c;

	memset(differ, 0, (FS_VM_EG_CPUS + 1) * sizeof(*differ));
	memset(model_differ, 0, FS_VM_EG_CPUS * sizeof(*model_differ));
	for (i = 0; i < n; i++) {
		for (c = 0; c < ncpus; c++) {
			size_t off = ((size_t)i * ncpus + c) * stride;

			if (memcmp(a + off, b + off, vsz))
				differ[c < FS_VM_EG_CPUS ? c : FS_VM_EG_CPUS]++;
			if (c < FS_VM_EG_CPUS &&
			    memcmp(a + off, (const char *)model[c] + i * vsz, vsz))
				model_differ[c]++;
		}
	}
}

/* Packets in the row-0 cells of slot on cpu, folded (wide + narrow):
 * each packet adds one to exactly one cell of every row (standard
 * update), so this is the packets that slot's sketch holds there, read
 * from the sketch itself.  ~0 if the fold fails. */
static __u64 fs_vm_eg_row0(const struct fs_sketch_params *p,
			   const struct fs_vm_dp_dump *d, int cpu, __u32 slot)
{
	struct fs_sketch s;
	__u64 packets = ~0ULL, bytes;

	if (fs_sketch_init(&s, p))
		return packets;
	if (!fs_vm_dp_fold(d, cpu, slot, &s))
		fs_vm_row_sum(&s, 0, &packets, &bytes);
	fs_sketch_free(&s);
	return packets;
}

/* The Count-Min estimate of key in s (every CPU and both slots folded
 * into it: merging is adding): per row its cell, then the minimum. */
static void fs_vm_eg_estimate(const struct fs_sketch *s,
			      const struct fs_hash_key *hk,
			      const struct fs_flow_key *key,
			      __u64 *packets, __u64 *bytes)
{
	const struct fs_sketch_params *p = &s->params;
	struct fs_cms_columns it;
	__u32 row;

	*packets = *bytes = ~0ULL;
	fs_cms_columns_init(&it, fs_flow_hash(key, hk), p->cms_log2_width);
	for (row = 0; row < p->cms_depth; row++) {
		const struct fs_cms_cell *cl =
			&s->cms[(row << p->cms_log2_width) | fs_cms_next_column(&it)];

		if (cl->packets < *packets)
			*packets = cl->packets;
		if (cl->bytes < *bytes)
			*bytes = cl->bytes;
	}
}

/* Every sent flow's estimate in [truth, truth + e/w * N], packets and
 * bytes; returns how many are, each one that is not explained. */
static unsigned int fs_vm_eg_flows_ok(const struct fs_sketch_params *p,
				      const struct fs_vm_dp_dump *d,
				      __u64 total_packets, __u64 total_bytes)
{
	double eps = M_E / (double)(1U << p->cms_log2_width);
	double bound_p = eps * (double)total_packets;
	double bound_b = eps * (double)total_bytes;
	struct fs_hash_key hk;
	struct fs_sketch s;
	unsigned int i, good = 0;
	__u32 slot;

	if (fs_sketch_init(&s, p))
		return 0;
	for (slot = 0; slot < FS_NSLOTS; slot++)
		if (fs_vm_dp_fold(d, -1, slot, &s)) {
			fs_sketch_free(&s);
			return 0;
		}
	fs_hash_key_derive(&p->secret, &hk);
	for (i = 0; i < FS_VM_EG_NFLOWS; i++) {
		const struct fs_vm_eg_flow *f = &fs_vm_eg_flows[i];
		__u64 want_p = f->packets[0] + f->packets[1];
		__u64 want_b = want_p * fs_vm_eg_frame_len(f);
		struct fs_flow_key key;
		__u64 est_p, est_b;

		fs_vm_eg_key(f, &key);
		fs_vm_eg_estimate(&s, &hk, &key, &est_p, &est_b);
		if (est_p < want_p || (double)(est_p - want_p) > bound_p ||
		    est_b < want_b || (double)(est_b - want_b) > bound_b) {
			fs_vm_diag("egress: flow to port %u: estimate %llu packets, %llu bytes; sent %llu, %llu (bounds %.1f, %.1f)",
				   f->dport, (unsigned long long)est_p,
				   (unsigned long long)est_b,
				   (unsigned long long)want_p,
				   (unsigned long long)want_b, bound_p, bound_b);
			continue;
		}
		good++;
	}
	fs_sketch_free(&s);
	return good;
}

/* What the threads sent, per CPU and slot, against both copies' fs_hot,
 * fs_stats and sketches. */
static void fs_vm_eg_check(const struct fs_sketch_params *p,
			   const struct fs_vm_eg_dump *kf,
			   const struct fs_vm_eg_dump *bp,
			   const struct fs_vm_eg_sender *snd, int ncpus)
{
	const void *model[FS_VM_EG_CPUS];
	int dp_d[FS_VM_EG_CPUS + 1], dp_md[FS_NDPMAPS][FS_VM_EG_CPUS];
	__u64 sent_p = 0, sent_b = 0, hot_p = 0, reports = 0, other = 0;
	__u64 wide[FS_VM_EG_CPUS], narrow[FS_VM_EG_CPUS];
	__u64 st_kf[FS_STAT_MAX] = { 0 }, st_bp[FS_STAT_MAX] = { 0 };
	bool cpus_ok = true, hot_same = true, model_ok = true, args_ok = true;
	unsigned int good;
	char md[256] = "";
	size_t len = 0;
	int c, s, i, m;

	/* fs_vm_eg_dump() checked that each map holds the model's chunks. */
	for (m = 0; m < FS_NDPMAPS; m++) {
		for (c = 0; c < FS_VM_EG_CPUS; c++)
			model[c] = snd[c].model.env.chunks[m];
		fs_vm_eg_compare(kf->dp.map[m], bp->dp.map[m], kf->dp.n[m],
				 FS_CHUNK_BYTES, ncpus, model, dp_d, dp_md[m]);
		fs_vm_tap(!dp_d[0] && !dp_d[1] && !dp_d[2],
			  "egress: %s byte-identical on the kfunc and BPF paths, CPU by CPU (chunks that differ: CPU 0 %d, CPU 1 %d, others %d of %u)",
			  fs_dp_maps[m].map, dp_d[0], dp_d[1], dp_d[2], kf->dp.n[m]);
	}

	/* Each CPU holds what its thread sent, in fs_hot (per slot) and in
	 * the sketch itself (row 0), any other CPU nothing: read from the
	 * kfunc copy, whose fs_hot and fs_cms the BPF copy's must equal. */
	for (c = 0; c < ncpus; c++) {
		for (s = 0; s < FS_NSLOTS; s++) {
			__u64 want_p = c < FS_VM_EG_CPUS ? snd[c].packets[s] : 0;
			__u64 want_b = c < FS_VM_EG_CPUS ? snd[c].bytes[s] : 0;
			const struct fs_slot_totals *t = &kf->hot[c].slot[s];
			__u64 got_p = t->seq == (__u64)s ? t->packets : 0;
			__u64 got_b = t->seq == (__u64)s ? t->bytes : 0;
			__u64 row0 = fs_vm_eg_row0(p, &kf->dp, c, (__u32)s);

			if (got_p != want_p || got_b != want_b || row0 != want_p) {
				fs_vm_diag("egress: CPU %d slot %d: fs_hot %llu packets, %llu bytes, row 0 %llu packets; sent %llu, %llu",
					   c, s, (unsigned long long)got_p,
					   (unsigned long long)got_b,
					   (unsigned long long)row0,
					   (unsigned long long)want_p,
					   (unsigned long long)want_b);
				cpus_ok = false;
			}
			hot_p += got_p;
		}
		if (memcmp(&kf->hot[c], &bp->hot[c], sizeof(kf->hot[c])))
			hot_same = false;
		if (c < FS_VM_EG_CPUS &&
		    (kf->hot[c].rx != snd[c].model.hot.rx ||
		     kf->hot[c].sketched != snd[c].model.hot.rx))
			cpus_ok = false;
	}
	for (c = 0; c < FS_VM_EG_CPUS; c++) {
		sent_p += snd[c].packets[0] + snd[c].packets[1];
		sent_b += snd[c].bytes[0] + snd[c].bytes[1];
		reports += snd[c].reports;
		if (!snd[c].packets[0] || !snd[c].packets[1])
			cpus_ok = false;	/* both CPUs, both windows */
	}
	fs_vm_tap(cpus_ok,
		  "egress: each CPU counted exactly what it sent, in both windows (CPU 0 %llu, CPU 1 %llu sketched; fs_hot slots and row 0 of the sketch agree)",
		  (unsigned long long)kf->hot[0].sketched,
		  (unsigned long long)kf->hot[1].sketched);
	fs_vm_tap(hot_same && hot_p == sent_p,
		  "egress: fs_hot (rx, sketched, slot totals) equal on both paths, CPU by CPU; slot totals sum to the %llu datagrams sent (got %llu)",
		  (unsigned long long)sent_p, (unsigned long long)hot_p);

	for (i = 0; i < FS_STAT_MAX; i++) {
		for (c = 0; c < ncpus; c++) {
			st_kf[i] += kf->stats[(size_t)i * ncpus + c];
			st_bp[i] += bp->stats[(size_t)i * ncpus + c];
		}
	}
	/* Every cold counter but the reports counts frames the test did not
	 * send (not IP, malformed, fragments, non-linear) or a failed update. */
	for (i = FS_STAT_NON_IP; i < FS_STAT_MAX; i++)
		if (i != FS_STAT_REPORTS && i != FS_STAT_REPORTS_DROPPED)
			other += st_kf[i];
	fs_vm_tap(!memcmp(st_kf, st_bp, sizeof(st_kf)) && !other &&
		  st_kf[FS_STAT_REPORTS] + st_kf[FS_STAT_REPORTS_DROPPED] == reports &&
		  reports > 0,
		  "egress: fs_stats equal on both paths, no frame but the test's (non-IP, malformed, update errors: %llu), reports %llu + %llu dropped = the model's %llu",
		  (unsigned long long)other,
		  (unsigned long long)st_kf[FS_STAT_REPORTS],
		  (unsigned long long)st_kf[FS_STAT_REPORTS_DROPPED],
		  (unsigned long long)reports);

	for (m = 0; m < FS_NDPMAPS; m++) {
		len += snprintf(md + len, sizeof(md) - len, "%s%s %d/%d",
				m ? ", " : "", fs_dp_maps[m].map,
				dp_md[m][0], dp_md[m][1]);
		if (len >= sizeof(md))
			len = sizeof(md) - 1;
		for (c = 0; c < FS_VM_EG_CPUS; c++)
			if (dp_md[m][c])
				model_ok = false;
	}
	for (c = 0; c < FS_VM_EG_CPUS; c++)
		if (memcmp(&kf->hot[c], &snd[c].model.hot, sizeof(kf->hot[c])))
			model_ok = false;
	fs_vm_tap(model_ok,
		  "egress: each CPU's datapath maps and fs_hot equal the model fed its datagrams (chunks that differ, CPU 0/CPU 1: %s)",
		  md);

	/* Each CPU's copy spilled (the flows above are sized for it), and
	 * every narrow cell marked spilled has its wide cell holding a count. */
	for (c = 0; c < FS_VM_EG_CPUS; c++)
		fs_vm_dp_spills(&kf->dp, c, &wide[c], &narrow[c]);
	fs_vm_tap(wide[0] && wide[1] && wide[0] == narrow[0] && wide[1] == narrow[1],
		  "egress: the kfunc path spilled narrow cells into wide ones on both CPUs (wide cells holding a count: CPU 0 %llu, CPU 1 %llu; narrow cells with the spilled bit: %llu, %llu)",
		  (unsigned long long)wide[0], (unsigned long long)wide[1],
		  (unsigned long long)narrow[0], (unsigned long long)narrow[1]);

	/* The kfunc path fills its argument block on a CPU's first packet
	 * (sketch_update.bpf.h); the BPF path never looks it up.  So the
	 * block shows which path ran where: equal sketches alone would not
	 * tell a kfunc copy that fell back to the BPF update. */
	for (c = 0; c < ncpus; c++) {
		bool want = c < FS_VM_EG_CPUS;

		if ((kf->args[c].params.magic == FS_PARAMS_MAGIC) != want ||
		    bp->args[c].params.magic)
			args_ok = false;
	}
	fs_vm_tap(args_ok && !kf->recursion_misses && !bp->recursion_misses,
		  "egress: the kfunc ran on CPU 0 and CPU 1 of the kfunc copy, never in the BPF copy; no run skipped (recursion misses %llu, %llu)",
		  (unsigned long long)kf->recursion_misses,
		  (unsigned long long)bp->recursion_misses);

	good = fs_vm_eg_flows_ok(p, &kf->dp, sent_p, sent_b);
	fs_vm_tap(good == FS_VM_EG_NFLOWS,
		  "egress: %u of %zu flows' Count-Min estimates (folded: both CPUs, both windows, wide + narrow) in [truth, truth + e/w*N] for packets and bytes",
		  good, FS_VM_EG_NFLOWS);
}

/* Both senders through window seq: one thread per CPU, joined, so that
 * between windows nothing is sent and both copies rotate together. */
static int fs_vm_eg_window(struct fs_vm_eg_sender *snd, __u64 seq)
{
	int started, err = 0, c;

	for (started = 0; started < FS_VM_EG_CPUS; started++) {
		snd[started].seq = seq;
		err = -pthread_create(&snd[started].thread, NULL,
				      fs_vm_eg_sender_main, &snd[started]);
		if (err)
			break;
	}
	for (c = 0; c < started; c++) {
		pthread_join(snd[c].thread, NULL);
		if (!err)
			err = snd[c].err;
	}
	return err;
}

/*
 * Sockets of every flow (tx bound to its source port, rx to its
 * destination port so nothing draws an ICMP error), both copies attached,
 * window 0, both copies rotated, window 1, the links gone.  0 or -errno.
 */
static int fs_vm_eg_traffic(struct egress *kf, struct egress *bp,
			    struct fs_vm_eg_sender *snd)
{
	int tx[FS_VM_EG_NFLOWS], rx[FS_VM_EG_NFLOWS];
	struct bpf_link *link_kf = NULL, *link_bp = NULL;
	unsigned int i;
	int err = 0, c;

	for (i = 0; i < FS_VM_EG_NFLOWS; i++)
		tx[i] = rx[i] = -1;
	for (i = 0; i < FS_VM_EG_NFLOWS; i++) {
		const struct fs_vm_eg_flow *f = &fs_vm_eg_flows[i];

		rx[i] = fs_vm_udp_bound(f->family, f->dport);
		tx[i] = fs_vm_udp_bound(f->family, f->sport);
		if (rx[i] < 0 || tx[i] < 0) {
			err = rx[i] < 0 ? rx[i] : tx[i];
			goto out;
		}
	}
	for (c = 0; c < FS_VM_EG_CPUS; c++)
		snd[c].tx = tx;
	link_kf = bpf_program__attach(kf->progs.fs_egress);
	if (!link_kf) {
		err = -errno;
		goto out;
	}
	link_bp = bpf_program__attach(bp->progs.fs_egress);
	if (!link_bp) {
		err = -errno;
		goto out;
	}
	err = fs_vm_eg_window(snd, 0);
	if (!err)
		err = fs_vm_set_ctl(kf->maps.fs_ctl, 1, FS_VM_EG_PHI_Q32);
	if (!err)
		err = fs_vm_set_ctl(bp->maps.fs_ctl, 1, FS_VM_EG_PHI_Q32);
	if (!err)
		err = fs_vm_eg_window(snd, 1);
out:
	/* Detached before the maps are read: nothing counts any more. */
	bpf_link__destroy(link_kf);
	bpf_link__destroy(link_bp);
	for (i = 0; i < FS_VM_EG_NFLOWS; i++) {
		if (tx[i] >= 0)
			close(tx[i]);
		if (rx[i] >= 0)
			close(rx[i]);
	}
	return err;
}

void fs_vm_test_egress(void)
{
	struct fs_vm_eg_sender snd[FS_VM_EG_CPUS] = { 0 };
	struct fs_vm_eg_dump d_kf = { 0 }, d_bp = { 0 };
	struct egress *kf = NULL, *bp = NULL;
	int ncpus = libbpf_num_possible_cpus();
	struct fs_vm_eg_iface iface = { 0 };
	struct fs_sketch_params p;
	__u64 sent_p = 0, sent_b = 0;
	int home = -1, err, c;
	struct stat st;

	fs_vm_params(&p);
	kf = fs_vm_eg_open(&p, true);
	fs_vm_tap(kf, "egress: egress.bpf.c (tp_btf/net_dev_start_xmit) loads with fs_use_kfunc = 1%s%s",
		  kf ? "" : ": ", kf ? "" : strerror(errno));
	bp = fs_vm_eg_open(&p, false);
	fs_vm_tap(bp, "egress: egress.bpf.c loads with fs_use_kfunc = 0%s%s",
		  bp ? "" : ": ", bp ? "" : strerror(errno));
	if (!kf || !bp)
		goto out;
	if (ncpus < FS_VM_EG_CPUS || sysconf(_SC_NPROCESSORS_ONLN) < FS_VM_EG_CPUS) {
		fs_vm_tap(false, "egress: the VM has %d CPUs (%ld online); this test needs %d",
			  ncpus, sysconf(_SC_NPROCESSORS_ONLN), FS_VM_EG_CPUS);
		goto out;
	}
	for (c = 0; c < FS_VM_EG_CPUS; c++) {
		snd[c].cpu = c;
		err = fs_model_init(&snd[c].model, &p);
		if (err) {
			fs_vm_tap(false, "egress: model: %s", strerror(-err));
			goto out;
		}
	}

	/* Back to this namespace when done: the groups after this one, and
	 * the daemon's, expect the VM's. */
	home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	err = home < 0 ? -errno : fs_vm_netns_enter();
	if (!err) {
		iface.ifindex = if_nametoindex("lo");
		err = iface.ifindex ? 0 : -errno;
	}
	if (!err)
		err = stat("/proc/self/ns/net", &st) ? -errno : 0;
	if (!err) {
		iface.netns_ino = (__u32)st.st_ino;
		err = fs_vm_eg_set_iface(kf, &iface);
	}
	if (!err)
		err = fs_vm_eg_set_iface(bp, &iface);
	if (!err)
		err = fs_vm_set_ctl(kf->maps.fs_ctl, 0, FS_VM_EG_PHI_Q32);
	if (!err)
		err = fs_vm_set_ctl(bp->maps.fs_ctl, 0, FS_VM_EG_PHI_Q32);
	fs_vm_tap(!err, "egress: own network namespace with lo up (ifindex %u, netns inode %u) in both copies' fs_ifaces, window 0%s%s",
		  iface.ifindex, iface.netns_ino, err ? ": " : "",
		  err ? strerror(-err) : "");
	if (err)
		goto out;

	err = fs_vm_eg_traffic(kf, bp, snd);
	for (c = 0; c < FS_VM_EG_CPUS; c++) {
		sent_p += snd[c].packets[0] + snd[c].packets[1];
		sent_b += snd[c].bytes[0] + snd[c].bytes[1];
	}
	fs_vm_tap(!err, "egress: both copies attached; sent %llu UDP datagrams (%llu frame bytes) in %zu IPv4/IPv6 flows over lo from CPU %d (%llu) and CPU %d (%llu), window rotated half-way%s%s",
		  (unsigned long long)sent_p, (unsigned long long)sent_b,
		  FS_VM_EG_NFLOWS, snd[0].on_cpu,
		  (unsigned long long)(snd[0].packets[0] + snd[0].packets[1]),
		  snd[1].on_cpu,
		  (unsigned long long)(snd[1].packets[0] + snd[1].packets[1]),
		  err ? ": " : "", err ? strerror(-err) : "");
	if (err)
		goto out;

	err = fs_vm_eg_dump(kf, &p, ncpus, &d_kf);
	if (!err)
		err = fs_vm_eg_dump(bp, &p, ncpus, &d_bp);
	if (err) {
		fs_vm_tap(false, "egress: both copies' maps readable: %s", strerror(-err));
		goto out;
	}
	fs_vm_eg_check(&p, &d_kf, &d_bp, snd, ncpus);
out:
	if (home >= 0) {
		if (setns(home, CLONE_NEWNET))
			fs_vm_tap(false, "egress: back in the VM's network namespace: %s",
				  strerror(errno));
		close(home);
	}
	fs_vm_eg_dump_free(&d_kf);
	fs_vm_eg_dump_free(&d_bp);
	for (c = 0; c < FS_VM_EG_CPUS; c++)
		fs_model_free(&snd[c].model);
	egress__destroy(kf);
	egress__destroy(bp);
}
