/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * update_env.h - how the module reaches the sketch memory for
 * include/flowsketch/update.h: this CPU's copy of an element of the
 * program's per-CPU arrays of sketch state (fs_cms, fs_cms_narrow,
 * fs_hll_packed: sketch_kind.h, FS_KFUNC_MAPS).
 *
 * The lookup is the one percpu_array_map_lookup_elem() does (bounds check,
 * index masked against speculation, this_cpu_ptr), written out here rather
 * than called through map->ops: a packet needs 2d + 3 lookups (13 with the
 * defaults) and each indirect call costs a retpoline on this kernel's
 * mitigations, which would eat what the native path saves.  It is valid
 * only for maps that kfunc.c has checked to be BPF_MAP_TYPE_PERCPU_ARRAY,
 * whose struct bpf_map is embedded in a struct bpf_array.
 *
 * this_cpu_ptr() is safe because BPF programs run with migration disabled
 * (XDP in softirq, test runs and tracing programs under migrate_disable()),
 * so the CPU cannot change between finding a chunk and updating it.
 */
#ifndef FLOWSKETCH_KMOD_UPDATE_ENV_H
#define FLOWSKETCH_KMOD_UPDATE_ENV_H

#include <linux/bpf.h>
#include <linux/percpu.h>
#include <linux/prefetch.h>
#include "flowsketch/sketch_kind.h"

struct fs_update_env {
	struct bpf_array *map[FS_NDPMAPS];	/* by datapath map; those of
						   FS_KFUNC_MAPS are set */
};

/* Native code can ask for a line before it needs it (update.h): for
 * writing, since every line a packet touches is written. */
#define fs_env_prefetch(ptr) prefetchw(ptr)

static __always_inline void *fs_env_percpu_elem(struct bpf_array *array,
						u32 index)
{
	if (unlikely(index >= array->map.max_entries))
		return NULL;
	return this_cpu_ptr(array->pptrs[index & array->index_mask]);
}

static __always_inline void *fs_env_chunk(struct fs_update_env *env,
					  enum fs_dp_map m, __u32 chunk)
{
	return fs_env_percpu_elem(env->map[m], chunk);
}

#endif /* FLOWSKETCH_KMOD_UPDATE_ENV_H */
