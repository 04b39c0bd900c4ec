// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * kfunc.c - the module's kfunc (FS_KFUNC_UPDATE_FN): the per-packet sketch
 * update, native.
 *
 * The ABI (arguments, return values, struct fs_kfunc_args) is documented
 * in include/flowsketch/kfunc.h.  The arithmetic is fs_sketch_update()
 * from include/flowsketch/update.h, the same code the BPF programs and the
 * user-space model compile; only the memory lookup (update_env.h) is ours.
 *
 * Per packet this adds, over the update itself, a handful of compares: the
 * verifier has already proved that args points to args__sz readable bytes
 * and that the maps are live maps (KF_TRUSTED_ARGS: no pointer walked out
 * of some other structure, which could be NULL or stale), but not which
 * maps or which parameters, and a program can pass any.  The checks below
 * refuse a caller that breaks the ABI; what keeps even a racing caller's
 * writes inside the map values is update_env.h's bounds check of every
 * chunk index and the masking of every offset within a chunk.  No
 * allocation, no locking, no FPU/SIMD: integer code on per-CPU memory only.
 */
#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/btf_ids.h>
#include <linux/errno.h>
#include <linux/module.h>

#include "update_env.h"
#include "flowsketch/update.h"
#include "flowsketch/kfunc.h"
#include "kfunc.h"

_Static_assert(FS_UPDATE_ENOENT == -ENOENT, "update.h mirrors errno");

/* Each map's name as the kernel keeps it (zero padded). */
#define FS_KFUNC_MAP_NAME(NAME, name, KIND)				\
	[FS_DP_##NAME] = FS_KIND_MAP(name),
static const char fs_kfunc_map_name[FS_NDPMAPS][BPF_OBJ_NAME_LEN] = {
	FS_KFUNC_MAPS(FS_KFUNC_MAP_NAME)
};
#undef FS_KFUNC_MAP_NAME

/*
 * Take map as kind k's: true if the update may use it, a per-CPU array of
 * `value_size` values with at least `min_entries` elements, i.e. every
 * chunk the parameters address.
 */
static __always_inline bool fs_env_take(struct fs_update_env *env,
					enum fs_dp_map m, struct bpf_map *map,
					const char name[BPF_OBJ_NAME_LEN],
					u32 value_size, u32 min_entries)
{
	env->map[m] = container_of(map, struct bpf_array, map);
	return map->map_type == BPF_MAP_TYPE_PERCPU_ARRAY &&
	       map->value_size == value_size &&
	       map->max_entries >= min_entries &&
	       !memcmp(map->name, name, BPF_OBJ_NAME_LEN);
}

/*
 * One map argument (kfunc.h), taken if it fits: a term of an &&.  Every
 * datapath map is a per-CPU array of 32 KiB values, so type and size
 * cannot tell fs_cms from fs_cms_narrow or fs_hll_packed; the name can
 * (libbpf gives a map its name in the object; the kernel keeps it zero
 * padded to BPF_OBJ_NAME_LEN, so the compare is two words).
 */
#define FS_KFUNC_TAKE_MAP(NAME, name, KIND)				\
	fs_env_take(&env, FS_DP_##NAME, name, fs_kfunc_map_name[FS_DP_##NAME], \
		    sizeof(struct fs_##name##_chunk),			\
		    fs_##name##_chunks(&params, params.nslots)) &&

/*
 * The update at the default sizes, with the sizes as constants: the
 * compiler then unrolls the rows exactly, shifts by immediates and drops
 * the depth tests, which is what native code can do and the JIT cannot
 * (the BPF program learns its sizes at load, as values).  Same function,
 * same state: only the sizes are known earlier.
 */
static __always_inline int
fs_update_default_sizes(struct fs_update_env *env,
			const struct fs_sketch_params *p,
			const struct fs_hash_key *key, struct fs_packet_update *u)
{
	struct fs_sketch_params known = *p;

	known.cms_depth = FS_DEFAULT_CMS_DEPTH;
	known.cms_log2_width = FS_DEFAULT_CMS_LOG2W;
	known.hll_p = FS_DEFAULT_HLL_P;
	known.nslots = FS_NSLOTS;
	return fs_sketch_update(env, &known, key, u);
}

__bpf_kfunc_start_defs();

/*
 * FS_KFUNC_UPDATE_FN (bpf_flowsketch_update4) - count one packet in the
 * flowsketch sketches
 * @args: parameters and packet update (struct fs_kfunc_args), in and out
 * @args__sz: sizeof(struct fs_kfunc_args)
 * then each map it writes, named as the map (@cms: the program's fs_cms
 * map, @cms_narrow, @hll_packed; kfunc.h)
 *
 * Return: 0, -EINVAL for arguments that break the ABI, or -ENOENT.
 */
__bpf_kfunc int FS_KFUNC_UPDATE_FN(struct fs_kfunc_args *args, u32 args__sz
				   FS_KFUNC_MAPS(FS_KFUNC_MAP_PARAM))
{
	struct fs_sketch_params params;
	struct fs_update_env env = {};

	if (unlikely(args__sz != sizeof(*args)))
		return -EINVAL;
	/* Check and use one private copy: args may be memory that another CPU
	 * rewrites between the check and the update (any map value will do),
	 * and the update must run with the parameters that were checked.  The
	 * barrier keeps the compiler from reading args->params again in place
	 * of the copy. */
	params = args->params;
	barrier();
	if (unlikely(fs_params_check(&params) ||
		     args->u.slot >= params.nslots))
		return -EINVAL;
	if (unlikely(!(FS_KFUNC_MAPS(FS_KFUNC_TAKE_MAP) true)))
		return -EINVAL;
	if (params.cms_depth == FS_DEFAULT_CMS_DEPTH &&
	    params.cms_log2_width == FS_DEFAULT_CMS_LOG2W &&
	    params.hll_p == FS_DEFAULT_HLL_P && params.nslots == FS_NSLOTS)
		return fs_update_default_sizes(&env, &params, &args->key,
					       &args->u);
	return fs_sketch_update(&env, &params, &args->key, &args->u);
}

__bpf_kfunc_end_defs();

BTF_KFUNCS_START(fs_kfunc_ids)
/* KF_TRUSTED_ARGS: the verifier then accepts for the maps only map
 * pointers it can vouch for (&map in the program, a referenced or RCU
 * protected pointer), not one a tracing program read out of a kernel
 * structure, which may be NULL or a map being freed when the call runs. */
BTF_ID_FLAGS(func, FS_KFUNC_UPDATE_FN, KF_TRUSTED_ARGS)
BTF_KFUNCS_END(fs_kfunc_ids)

static const struct btf_kfunc_id_set fs_kfunc_set = {
	.owner = THIS_MODULE,
	.set = &fs_kfunc_ids,
};

/*
 * The program types that call the kfunc: XDP (the datapath), SCHED_CLS (a
 * tc attachment of the same code) and TRACING (fentry/tp_btf frontends).
 * There is no unregister call: the registrations live in the module's BTF
 * and go away with it, which is also why a failure half-way needs no undo.
 */
int fs_kfunc_register(void)
{
	static const enum bpf_prog_type types[] = {
		BPF_PROG_TYPE_XDP,
		BPF_PROG_TYPE_SCHED_CLS,
		BPF_PROG_TYPE_TRACING,
	};
	unsigned int i;
	int err;

	for (i = 0; i < ARRAY_SIZE(types); i++) {
		err = register_btf_kfunc_id_set(types[i], &fs_kfunc_set);
		if (err) {
			pr_err("flowsketch: cannot register kfuncs for program type %d: %d\n",
			       types[i], err);
			return err;
		}
	}
	return 0;
}
