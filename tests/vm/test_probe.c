// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_probe.c - the kfunc against the pure-BPF update, input by input.
 *
 * Two copies of kfunc_probe.bpf.c are loaded with the same parameters and
 * secret, one with fs_use_kfunc = 1 (the module's kfunc does the update)
 * and one with 0 (BPF does it).  Every update goes through both and
 * through the user-space model, and must give the same hash, report bits
 * and error; afterwards every datapath map (fs_cms, fs_cms_narrow, fs_hll,
 * fs_hll_packed: sketch_kind.h, FS_DP_MAPS) must be byte-identical in all
 * three.  Ground truth independent of the code under test: in a
 * standard-update Count-Min every row counts every packet once, so each
 * row of a slot, folded (wide + narrow, dpmaps.h), sums to exactly the
 * packets and bytes sent to that slot.  The three builds share update.h,
 * so only that sum catches a spill that loses or doubles a count; hence
 * a heavy flow, GSO-sized updates and updates larger than a narrow cell
 * holds, which make every row's cells of that flow spill into the wide
 * ones many times a slot (cms.h, "Narrow cells").
 *
 * Then the other program types (tc, fentry) and the kfunc's argument
 * checks, which a BPF program can get wrong and the module must refuse.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "vmtest.h"
#include "dpmaps.h"
#include "traffic.h"
#include "kfunc_probe.skel.h"

#define FS_VM_PROBE_FLOWS 512	/* flows that repeat, so thresholds cross */
/* One update in FS_VM_PROBE_HEAVY is of one heavy flow, as a GSO skb of
 * 1 to FS_VM_PROBE_SEGS segments of FS_VM_PROBE_MSS + 52 bytes, and one
 * of those in FS_VM_PROBE_HUGE has 600 segments (900,000 bytes, more than
 * a narrow cell holds, BIG TCP's order of size), which goes to the wide
 * cell whole: about 256 updates, 10,000 packets and 15 MB of the flow a
 * slot, so its cells' packets (511 a narrow cell) and bytes (524,287)
 * overflow again and again. */
#define FS_VM_PROBE_HEAVY 8
#define FS_VM_PROBE_SEGS 45
#define FS_VM_PROBE_HUGE 32
#define FS_VM_PROBE_MSS 1448

struct fs_vm_sent {
	__u64 packets[FS_NSLOTS];
	__u64 bytes[FS_NSLOTS];
};

FS_VM_SKEL_OPENER(fs_vm_probe_open, kfunc_probe)

/* A random key: one of FS_VM_PROBE_FLOWS recurring flows or a fresh one,
 * or with heavy the heavy flow. */
static void fs_vm_probe_key(__u64 *rng, struct fs_flow_key *k, bool heavy)
{
	__u64 flow_rng;
	__u64 w[5];
	int i;

	if (heavy) {
		flow_rng = FS_VM_PROBE_FLOWS + 1;
		rng = &flow_rng;
	} else if (fs_vm_rand_below(rng, 4)) {
		flow_rng = fs_vm_rand_below(rng, FS_VM_PROBE_FLOWS) + 1;
		rng = &flow_rng;
	}
	for (i = 0; i < 5; i++)
		w[i] = fs_vm_rand(rng);
	memset(k, 0, sizeof(*k));
	k->family = (w[0] & 1) ? FS_FAMILY_IPV6 : FS_FAMILY_IPV4;
	k->proto = (w[0] >> 8) & 1 ? 6 : 17;
	k->sport = (__be16)(w[0] >> 16);
	k->dport = (__be16)(w[0] >> 32);
	memcpy(k->src, &w[1], 8);
	memcpy(k->dst, &w[3], 8);
	if (k->family == FS_FAMILY_IPV6) {
		memcpy(k->src + 8, &w[2], 8);
		memcpy(k->dst + 8, &w[4], 8);
	}
}

/* Run one update through both programs and the model; false on mismatch. */
static bool fs_vm_probe_one(struct kfunc_probe *kf, struct kfunc_probe *bp,
			    struct fs_model *m, const struct fs_probe_frame *in,
			    int *reported)
{
	struct fs_probe_frame out_kf, out_bp;
	__u64 hash = 0;
	__u32 rv_kf = ~0U, rv_bp = ~0U;
	int report;

	if (fs_vm_run(kf->progs.fs_probe_xdp, in, sizeof(*in), &out_kf, &rv_kf) ||
	    fs_vm_run(bp->progs.fs_probe_xdp, in, sizeof(*in), &out_bp, &rv_bp))
		return false;
	report = fs_model_update_segs(m, &in->u.key, 1 + in->u.extra_packets,
				      in->u.bytes, in->u.slot,
				      in->u.thresh_packets, in->u.thresh_bytes,
				      &hash);
	*reported += report > 0;
	return rv_kf == 2 /* XDP_PASS */ && rv_bp == 2 &&
	       out_kf.err == 0 && out_bp.err == 0 && report >= 0 &&
	       out_kf.u.hash == hash && out_bp.u.hash == hash &&
	       out_kf.u.report == (__u32)report &&
	       out_bp.u.report == (__u32)report;
}

/*
 * Every Count-Min row of every slot of the kfunc's sketch, folded on
 * fs_vm_cpu (wide + narrow), sums to what was sent to the slot (with say,
 * each row that does not is said); *wide and *narrow get the spills the
 * kfunc copy shows there (dpmaps.h).
 */
static bool fs_vm_rows_sum_to(struct kfunc_probe *kf,
			      const struct fs_sketch_params *p,
			      const struct fs_vm_sent *sent, bool say,
			      __u64 *wide, __u64 *narrow)
{
	struct fs_vm_dp_dump d;
	struct fs_sketch s = { 0 };
	__u32 slot, row;
	bool ok = true;

	*wide = *narrow = 0;
	if (fs_vm_dp_dump(kf->obj, &d) || fs_sketch_init(&s, p)) {
		ok = false;
		goto out;
	}
	fs_vm_dp_spills(&d, fs_vm_cpu, wide, narrow);
	for (slot = 0; slot < FS_NSLOTS; slot++) {
		fs_sketch_reset(&s);
		if (fs_vm_dp_fold(&d, fs_vm_cpu, slot, &s)) {
			ok = false;
			break;
		}
		for (row = 0; row < p->cms_depth; row++) {
			__u64 packets, bytes;

			fs_vm_row_sum(&s, row, &packets, &bytes);
			if (packets == sent->packets[slot] &&
			    bytes == sent->bytes[slot])
				continue;
			ok = false;
			if (say)
				fs_vm_diag("slot %u row %u sums to %llu packets, %llu bytes; sent %llu, %llu",
					   slot, row, (unsigned long long)packets,
					   (unsigned long long)bytes,
					   (unsigned long long)sent->packets[slot],
					   (unsigned long long)sent->bytes[slot]);
		}
	}
out:
	fs_sketch_free(&s);
	fs_vm_dp_dump_free(&d);
	return ok;
}

/* Every datapath map, by name: kfunc copy, BPF copy and model. */
static void fs_vm_compare_sketches(struct kfunc_probe *kf,
				   struct kfunc_probe *bp,
				   const struct fs_model *m, const char *what)
{
	int d, i;

	for (i = 0; i < FS_NDPMAPS; i++) {
		d = fs_vm_dp_differ(kf->obj, bp->obj, i, m, fs_vm_cpu);
		fs_vm_tap(d == 0, "%s: %s byte-identical on kfunc, BPF and model (%d chunks differ)",
			  what, fs_dp_maps[i].map, d);
	}
}

/* The tc program on the same kind of input, both paths and the model. */
static void fs_vm_probe_tc(struct kfunc_probe *kf, struct kfunc_probe *bp,
			   struct fs_model *m, __u64 *rng)
{
	struct fs_probe_frame in, out_kf, out_bp;
	int i, bad = 0, report;
	__u32 rv_kf, rv_bp;
	__u64 hash;

	for (i = 0; i < 256; i++) {
		memset(&in, 0, sizeof(in));
		fs_vm_probe_key(rng, &in.u.key, false);
		in.u.bytes = 64 + fs_vm_rand_below(rng, 1400);
		in.u.slot = i & 1;
		if (fs_vm_run(kf->progs.fs_probe_tc, &in, sizeof(in), &out_kf, &rv_kf) ||
		    fs_vm_run(bp->progs.fs_probe_tc, &in, sizeof(in), &out_bp, &rv_bp)) {
			bad++;
			continue;
		}
		report = fs_model_update(m, &in.u.key, in.u.bytes, in.u.slot,
					 0, 0, &hash);
		if (rv_kf || rv_bp || out_kf.err || out_bp.err || report ||
		    out_kf.u.hash != hash || out_bp.u.hash != hash)
			bad++;
	}
	fs_vm_tap(bad == 0, "tc (SCHED_CLS) program: 256 updates through the kfunc match BPF and model (%d bad)",
		  bad);
	fs_vm_compare_sketches(kf, bp, m, "after tc");
}

/* The kfunc from a tracing program: fentry on bpf_fentry_test1. */
static void fs_vm_probe_fentry(struct kfunc_probe *kf)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	struct bpf_link *link;
	int err;

	link = bpf_program__attach(kf->progs.fs_probe_fentry);
	if (!link) {
		fs_vm_tap(false, "fentry (TRACING) program calls the kfunc (attach: %s)",
			  strerror(errno));
		return;
	}
	err = bpf_prog_test_run_opts(bpf_program__fd(kf->progs.fs_probe_fentry),
				     &opts);
	fs_vm_tap(!err && kf->bss->fs_probe_fentry_calls > 0 &&
		  kf->bss->fs_probe_fentry_err == 0,
		  "fentry (TRACING) program calls the kfunc (%llu calls, last %d)",
		  (unsigned long long)kf->bss->fs_probe_fentry_calls,
		  kf->bss->fs_probe_fentry_err);
	bpf_link__destroy(link);
}

/* What the kfunc returns for one fs_probe_abi frame, or 1 if it did not run. */
static int fs_vm_abi(struct kfunc_probe *kf, const struct fs_kfunc_args *args,
		     __u32 maps)
{
	struct fs_probe_abi_frame in = { .args = *args, .maps = maps }, out;
	__u32 rv;

	if (fs_vm_run(kf->progs.fs_probe_abi, &in, sizeof(in), &out, &rv) ||
	    rv != 2)
		return 1;
	return out.err;
}

static void fs_vm_probe_abi(struct kfunc_probe *kf,
			    const struct fs_sketch_params *p)
{
	struct fs_kfunc_args good = { .params = *p }, bad;
	int err;

	good.u.key.family = FS_FAMILY_IPV4;
	good.u.bytes = 60;

	err = fs_vm_abi(kf, &good, FS_PROBE_MAPS_RIGHT);
	fs_vm_tap(err == 0, "kfunc accepts well-formed arguments (%d)", err);
	bad = good;
	bad.u.slot = FS_NSLOTS;
	err = fs_vm_abi(kf, &bad, FS_PROBE_MAPS_RIGHT);
	fs_vm_tap(err == -EINVAL, "kfunc refuses slot >= nslots with -EINVAL (%d)", err);
	bad = good;
	bad.params.cms_depth = 0;
	err = fs_vm_abi(kf, &bad, FS_PROBE_MAPS_RIGHT);
	fs_vm_tap(err == -EINVAL, "kfunc refuses out-of-range params with -EINVAL (%d)", err);
	bad = good;
	bad.params.hll_p = FS_HLL_MAX_P;	/* valid, but fs_hll_packed is too short */
	err = fs_vm_abi(kf, &bad, FS_PROBE_MAPS_RIGHT);
	fs_vm_tap(err == -EINVAL, "kfunc refuses maps shorter than the params need with -EINVAL (%d)", err);
	err = fs_vm_abi(kf, &good, FS_PROBE_MAPS_SWAPPED);
	fs_vm_tap(err == -EINVAL, "kfunc refuses swapped maps with -EINVAL (%d)", err);
	err = fs_vm_abi(kf, &good, FS_PROBE_MAPS_WRONG_TYPE);
	fs_vm_tap(err == -EINVAL, "kfunc refuses a map of the wrong type with -EINVAL (%d)", err);
	err = fs_vm_abi(kf, &good, FS_PROBE_SIZE_WRONG);
	fs_vm_tap(err == -EINVAL, "kfunc refuses a wrong args__sz with -EINVAL (%d)", err);
	/* A map of the right type, value size and length in the wrong
	 * place: only its name tells it apart. */
	err = fs_vm_abi(kf, &good, FS_PROBE_MAPS_LOOKALIKE);
	fs_vm_tap(err == -EINVAL, "kfunc refuses fs_hll where fs_hll_packed belongs (same type, value size, %u >= %u elements) with -EINVAL (%d)",
		  fs_hll_chunks(p, FS_NSLOTS), fs_hll_packed_chunks(p, FS_NSLOTS), err);
}

/*
 * The verifier, through the kfunc's KF_TRUSTED_ARGS, refuses a map pointer
 * walked out of a kernel structure: the module would dereference whatever
 * it points to at run time, NULL included.
 */
static void fs_vm_probe_untrusted(const struct fs_sketch_params *p)
{
	static char log[64 * 1024];
	struct kfunc_probe *skel;
	int err;

	skel = kfunc_probe__open();
	if (!skel) {
		fs_vm_tap(false, "kfunc refuses an untrusted map pointer (open: %s)",
			  strerror(errno));
		return;
	}
	err = FS_DATAPATH_SETUP(skel, p, true);
	if (!err)
		err = bpf_program__set_autoload(skel->progs.fs_probe_untrusted_map,
						true);
	if (!err)
		err = bpf_program__set_log_buf(skel->progs.fs_probe_untrusted_map,
					       log, sizeof(log));
	if (!err)
		err = bpf_program__set_log_level(skel->progs.fs_probe_untrusted_map,
						 1);
	if (err) {
		fs_vm_tap(false, "kfunc refuses an untrusted map pointer (setup: %s)",
			  strerror(-err));
		goto out;
	}
	err = kfunc_probe__load(skel);
	fs_vm_tap(err && strstr(log, "must be referenced or trusted"),
		  "verifier refuses a map pointer read from a kernel structure as the kfunc's map (load %d)",
		  err);
out:
	kfunc_probe__destroy(skel);
}

/*
 * other_sizes: d = 3, w = 2^10, p = 12 instead of the defaults, for which
 * the module runs a copy of the update compiled with the sizes as
 * constants (kmod/kfunc.c): both copies must give the BPF path's state.
 */
static void fs_vm_probe_run(bool conservative, bool other_sizes)
{
	const char *what = other_sizes ? "probe, d 3, w 1024, p 12" :
			   conservative ? "probe, conservative update" :
					  "probe, standard update";
	struct kfunc_probe *kf = NULL, *bp = NULL;
	struct fs_vm_sent sent = {};
	struct fs_sketch_params p;
	struct fs_probe_frame in;
	struct fs_model m = {};
	__u64 rng = conservative ? 2 : 1, spill_wide, spill_narrow;
	int i, bad = 0, reports = 0, huge = 0;
	bool rows_ok;

	fs_vm_params(&p);
	if (conservative)
		p.flags |= FS_PARAM_F_CONSERVATIVE;
	if (other_sizes) {
		p.cms_depth = 3;
		p.cms_log2_width = 10;
		p.hll_p = 12;
		rng = 3;
	}
	kf = fs_vm_probe_open(&p, true);
	fs_vm_tap(kf, "%s: kfunc variant loads (XDP, tc, fentry)%s%s", what,
		  kf ? "" : ": ", kf ? "" : strerror(errno));
	bp = fs_vm_probe_open(&p, false);
	fs_vm_tap(bp, "%s: pure-BPF variant loads%s%s", what,
		  bp ? "" : ": ", bp ? "" : strerror(errno));
	if (!kf || !bp || fs_model_init(&m, &p))
		goto out;

	for (i = 0; i < FS_VM_PACKETS; i++) {
		bool heavy = !fs_vm_rand_below(&rng, FS_VM_PROBE_HEAVY);
		__u32 segs = 1;

		memset(&in, 0, sizeof(in));
		fs_vm_probe_key(&rng, &in.u.key, heavy);
		in.u.bytes = 40 + fs_vm_rand_below(&rng, 1461);
		if (heavy) {
			segs = 1 + fs_vm_rand_below(&rng, FS_VM_PROBE_SEGS);
			if (!fs_vm_rand_below(&rng, FS_VM_PROBE_HUGE))
				segs = FS_CMSN_PACKETS_MAX + 89;
			in.u.bytes = (__u64)segs * (FS_VM_PROBE_MSS + 52);
			huge += in.u.bytes > FS_CMSN_BYTES_MAX;
		}
		in.u.extra_packets = (__s16)(segs - 1);
		in.u.slot = fs_vm_rand_below(&rng, FS_NSLOTS);
		in.u.thresh_packets = 4;
		in.u.thresh_bytes = 4000;
		sent.packets[in.u.slot] += segs;
		sent.bytes[in.u.slot] += in.u.bytes;
		if (!fs_vm_probe_one(kf, bp, &m, &in, &reports))
			bad++;
	}
	/* reports > 0: the report bits compared include crossings. */
	fs_vm_tap(bad == 0 && reports > 0 && huge > 0, "%s: %d updates (IPv4/IPv6, %d recurring flows, a heavy one in GSO-sized updates, %d larger than a narrow cell, both slots, %d threshold crossings) give the same hash, report and error on kfunc, BPF and model (%d differ)",
		  what, FS_VM_PACKETS, FS_VM_PROBE_FLOWS, huge, reports, bad);
	fs_vm_compare_sketches(kf, bp, &m, what);
	/* The folded rows sum to what was sent with the standard update only
	 * (conservative update adds less); the spill counts hold for both. */
	rows_ok = fs_vm_rows_sum_to(kf, &p, &sent, !conservative, &spill_wide,
				    &spill_narrow);
	if (!conservative)
		fs_vm_tap(rows_ok,
			  "%s: every Count-Min row of the kfunc's sketch, folded (wide + narrow), sums to the packets and bytes sent",
			  what);
	fs_vm_tap(spill_wide > 0 && spill_wide == spill_narrow,
		  "%s: the kfunc spilled narrow cells into wide ones (%llu wide cells hold a count, %llu narrow cells carry the spilled bit)",
		  what, (unsigned long long)spill_wide,
		  (unsigned long long)spill_narrow);
	if (conservative || other_sizes)
		goto out;
	fs_vm_probe_tc(kf, bp, &m, &rng);
	fs_vm_probe_fentry(kf);
	fs_vm_probe_abi(kf, &p);
	fs_vm_probe_untrusted(&p);
out:
	fs_model_free(&m);
	kfunc_probe__destroy(kf);
	kfunc_probe__destroy(bp);
}

void fs_vm_test_probe(void)
{
	fs_vm_probe_run(false, false);
	fs_vm_probe_run(true, false);
	fs_vm_probe_run(false, true);
}
