/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * sketch_update.bpf.h - the one place the datapath updates its sketches.
 *
 * Pure BPF: fs_sketch_update() from include/flowsketch/update.h over the
 * per-CPU maps.  With the flowsketch kernel module loaded, the daemon sets
 * fs_use_kfunc before load and the same update runs natively in the
 * module's kfunc over the same map memory (kmod/, ABI in
 * include/flowsketch/kfunc.h).
 *
 * Choosing at load time with one set of sources: fs_use_kfunc is frozen
 * .rodata, so the verifier knows it and never walks the branch it rules
 * out, and then removes it.  The kfunc is a weak ksym: without the module
 * libbpf leaves the call unresolved (imm 0), which the kernel accepts in
 * code the verifier proves dead.  Debian's libbpf 1.1 has no
 * bpf_ksym_exists(), so the daemon decides from user space (does
 * FS_KFUNC_BTF_PATH exist?) instead of the program testing the symbol.
 */
#ifndef FLOWSKETCH_SKETCH_UPDATE_BPF_H
#define FLOWSKETCH_SKETCH_UPDATE_BPF_H

#include "maps.bpf.h"

/*
 * The sampled Count-Min option's per-CPU state (cms_sampled.h): a bench
 * build only.  bench/bpf/bench.bpf.c asks for the map in both of its
 * builds (FS_BENCH_NITRO_MAP), so that bench and bench_nitro have the same
 * skeleton layout; only bench_nitro.bpf.c (FS_CMS_NITRO) uses it.
 */
#if defined(FS_CMS_NITRO) || defined(FS_BENCH_NITRO_MAP)
#include "flowsketch/cms_sampled.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fs_cms_nitro);
} fs_nitro SEC(".maps");
#endif

#ifdef FS_CMS_NITRO
/* This CPU's state, its generator seeded on the CPU's first packet so
 * that CPUs sample independently. */
static __always_inline struct fs_cms_nitro *fs_env_nitro(struct fs_update_env *env)
{
	struct fs_cms_nitro *s;
	__u32 zero = 0;

	(void)env;
	s = bpf_map_lookup_elem(&fs_nitro, &zero);
	if (s && !s->rng)
		s->rng = ((__u64)bpf_get_prandom_u32() << 32) | bpf_get_prandom_u32() | 1;
	return s;
}
#endif

#include "flowsketch/update.h"
#include "flowsketch/kfunc.h"

/* The kfunc path's argument block (fs_update_sketches_kfunc() below);
 * unused, and never looked up, by the pure-BPF path. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fs_kfunc_args);
} fs_kfunc_args SEC(".maps");

extern int FS_KFUNC_UPDATE_FN(struct fs_kfunc_args *args, __u32 args__sz
			      FS_KFUNC_MAPS(FS_KFUNC_MAP_PARAM)) __ksym __weak;

/* Map NAME, as the kfunc takes it. */
#define FS_KFUNC_MAP_ARG(NAME, name, KIND) , (struct bpf_map *)&fs_##name

/*
 * The kfunc's argument block lives in a per-CPU map value, not on the
 * stack: with the 304-byte hash key it would not fit the 512-byte BPF stack
 * beside the rest of the datapath, and the parameters and key, copied once
 * per CPU (when the block is still zero), need no copy per packet.
 */
static __always_inline int fs_update_sketches_kfunc(struct fs_packet_update *u)
{
	struct fs_kfunc_args *args;
	__u32 zero = 0;
	int err;

	args = bpf_map_lookup_elem(&fs_kfunc_args, &zero);
	if (!args)
		return FS_UPDATE_ENOENT;
	if (args->params.magic != FS_PARAMS_MAGIC) {
		/* Struct copies from the volatile rodata: real loads, never
		 * the compile-time defaults. */
		args->params = fs_params;
		args->key = fs_hash_key;
	}
	args->u = *u;
	err = FS_KFUNC_UPDATE_FN(args, sizeof(*args)
				 FS_KFUNC_MAPS(FS_KFUNC_MAP_ARG));
	u->hash = args->u.hash;
	u->report = args->u.report;
	return err;
}

/*
 * The pure-BPF update, a global function: the verifier checks it once, on
 * its own, with u any 80 bytes of memory, instead of once for every path
 * through the parser that reaches it (and every path through it again for
 * what follows it, the report and the blocklist's verdict).  Its branches
 * (a row that spills, a report check that reads a wide cell) would
 * otherwise multiply the paths of everything after them.  Not static,
 * not inlined: that is what makes it global; its own stack frame adds to
 * the caller's (512 bytes together).
 */
__attribute__((noinline)) int fs_update_sketches_bpf(struct fs_packet_update *u)
{
	struct fs_update_env env = {};

	if (!u)		/* a global function's pointer may be NULL */
		return FS_UPDATE_ENOENT;
	return fs_sketch_update(&env,
				(const struct fs_sketch_params *)&fs_params,
				(const struct fs_hash_key *)&fs_hash_key, u);
}

/*
 * The detection sketches' update (update.h, fs_detect_update()), after
 * the Count-Min and HyperLogLog update of the same u, as a global
 * function of its own for the same reason as the update's.  n: the
 * update's first packet's number on this CPU in the window.  In the
 * kfunc path too it runs here, in BPF (the kfunc takes no more maps,
 * kfunc.h), so both paths write the same bytes.  The packet hashes are
 * computed again: the update's output holds the flow hash only, and the
 * kfunc's argument block (its ABI) has no room for the other two.
 */
__attribute__((noinline)) int fs_detect_update_bpf(struct fs_packet_update *u, __u64 n)
{
	struct fs_update_env env = {};
	struct fs_packet_hashes h;

	if (!u)		/* a global function's pointer may be NULL */
		return FS_UPDATE_ENOENT;
	fs_packet_hash(&u->key, (const struct fs_hash_key *)&fs_hash_key, &h);
	return fs_detect_update(&env, (const struct fs_sketch_params *)&fs_params,
				(const struct fs_hash_key *)&fs_hash_key, &u->key, &h, n,
				(__u64)(1 + (__s64)u->extra_packets), u->bytes, u->slot);
}

/* Whether the parameters keep a detection sketch: a constant to the
 * verifier (frozen .rodata), which removes the call when they keep none. */
static __always_inline int fs_detect_on(void)
{
	return fs_params.prefix_log2w || fs_params.spread_log2w;
}

/*
 * The keyed sample's update (update.h, fs_sample_update()), after the
 * sketches' update of the same u, whose hash it takes (both paths set
 * u->hash), for the 1 in R flows fs_sample_wanted() lets through: a
 * global function of its own, so that the other packets pay one mix and
 * a compare, and the verifier sees the probe once.  In BPF in the kfunc
 * path too, as the detection sketches' update is.
 */
__attribute__((noinline)) int fs_sample_update_bpf(struct fs_packet_update *u)
{
	struct fs_update_env env = {};

	if (!u)		/* a global function's pointer may be NULL */
		return FS_UPDATE_ENOENT;
	return fs_sample_update(&env, (const struct fs_sketch_params *)&fs_params,
				&u->key, u->hash, (__u64)(1 + (__s64)u->extra_packets),
				u->bytes, u->slot);
}

/* Whether u's flow is in the sample at the rate's limit (a bucket's own
 * may be lower: fs_sample_add() decides).  The parameters are a constant
 * to the verifier, which removes the test when there is no sample. */
static __always_inline int fs_sample_wanted(const struct fs_packet_update *u)
{
	return fs_params.sample_log2b &&
	       fs_sample_maybe(fs_sample_value(u->hash), fs_params.sample_shift);
}

static __always_inline int fs_update_sketches(struct fs_packet_update *u)
{
#if !defined(FS_CMS_WIDE) && !defined(FS_CMS_NITRO)
	/* the module counts in the narrow layout, unsampled, only */
	if (fs_use_kfunc)
		return fs_update_sketches_kfunc(u);
#endif
	return fs_update_sketches_bpf(u);
}

#endif /* FLOWSKETCH_SKETCH_UPDATE_BPF_H */
