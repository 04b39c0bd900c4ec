/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * datapath_setup.h - what every loader of the datapath does before load.
 *
 * Any BPF object built on bpf/maps.bpf.h (the datapath, the benchmark, the
 * VM probes) takes the same settings between open and load: the sketch
 * parameters and the hash key expanded from their secret into .rodata,
 * the blocklist filter's key from the same secret, the kfunc switch, and
 * the sizes of every sketch kind's map (sketch_kind.h) that the parameters
 * imply.  Doing it in one place keeps the key always derived from the
 * secret the parameters record, and the maps always as large as the
 * layout addresses.
 */
#ifndef FLOWSKETCH_DATAPATH_SETUP_H
#define FLOWSKETCH_DATAPATH_SETUP_H

#include <stdbool.h>
#include "flowsketch/hash.h"
#include "flowsketch/bloom.h"
#include "flowsketch/params.h"

struct bpf_object;

/* 0 or a negative errno from libbpf (a map missing or not resized). */
int fs_datapath_setup(struct fs_sketch_params *rodata_params,
		      struct fs_hash_key *rodata_key,
		      struct fs_bloom_key *rodata_bloom_key,
		      __u32 *rodata_use_kfunc, struct bpf_object *obj,
		      const struct fs_sketch_params *p, bool use_kfunc);

/* The same, for a skeleton `skel` of any such object. */
#define FS_DATAPATH_SETUP(skel, p, use_kfunc)                                  \
	fs_datapath_setup(&(skel)->rodata->fs_params,                          \
			  &(skel)->rodata->fs_hash_key,                        \
			  &(skel)->rodata->fs_bloom_key,                       \
			  &(skel)->rodata->fs_use_kfunc, (skel)->obj,          \
			  (p), (use_kfunc))

/*
 * After FS_DATAPATH_SETUP, for a loader of this release's datapath (the
 * daemon, fs-bench): give each legacy map (sketch_kind.h, fs_hll) the
 * FS_DP_LEGACY_CHUNKS element a datapath that never writes it needs, not
 * the slots an earlier release's datapath counted in.  Not for the
 * wide-layout build, which writes fs_hll.  An adopted pinned map replaces
 * the object's at its own size all the same (bpf_map__reuse_fd).  0 or a
 * negative errno from libbpf.
 */
int fs_datapath_fresh_legacy(struct bpf_object *obj);

/* After load, for the benchmarks: one interface, ifindex, in slot 0 of
 * fs_ifslot (map_fd), as the daemon sets it (maps.h, "Per-interface
 * counts"), so that XDP's slot scan finds it.  0 or -errno. */
int fs_ifslot_set_one(int map_fd, __u32 ifindex, const char *name);

#endif /* FLOWSKETCH_DATAPATH_SETUP_H */
