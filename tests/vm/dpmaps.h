/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * dpmaps.h - every datapath map of sketch state of a loaded object
 * (sketch_kind.h, FS_DP_MAPS: fs_cms, fs_cms_narrow, fs_hll,
 * fs_hll_packed, fs_prefix, fs_spread), found by name: compared byte for byte with another
 * object's and a model's, dumped, and folded into merged sketches
 * (sketch.h) the way the daemon's rotation folds them.
 *
 * Why every map and why the fold: the datapath counts in narrow cells and
 * packed registers and spills into the wide cells (cms.h, "Narrow
 * cells"), so two paths are the same only if every map is, and a count
 * is only whole as wide + narrow.  Reading one map alone undercounts a
 * cell that has spilled, or counts nothing at all.
 */
#ifndef FLOWSKETCH_VM_DPMAPS_H
#define FLOWSKETCH_VM_DPMAPS_H

#include "model.h"
#include "sketch.h"

struct bpf_object;

/*
 * Map m of a and b (found by fs_dp_maps[m].map), every element, CPU by
 * CPU: the elements where a and b differ, or where CPU cpu's copy differs
 * from model's (model->env.chunks[m]) or another CPU's from zero.
 * -EPROTO when a map's element count or size is not the model's, -errno
 * when one cannot be found or read.
 */
int fs_vm_dp_differ(struct bpf_object *a, struct bpf_object *b,
		    enum fs_dp_map m, const struct fs_model *model, int cpu);

/* Every CPU's copy of every element of each datapath map of one object. */
struct fs_vm_dp_dump {
	int ncpus;
	__u32 n[FS_NDPMAPS];	/* elements (chunks) of map m */
	/* Element i of CPU c at (i * ncpus + c) * FS_CHUNK_BYTES. */
	char *map[FS_NDPMAPS];
};

/* 0 or -errno; *d is freed with fs_vm_dp_dump_free() either way. */
int fs_vm_dp_dump(struct bpf_object *obj, struct fs_vm_dp_dump *d);
void fs_vm_dp_dump_free(struct fs_vm_dp_dump *d);
/* CPU cpu's copy of element i of map m. */
const void *fs_vm_dp_chunk(const struct fs_vm_dp_dump *d, enum fs_dp_map m,
			   __u32 i, int cpu);

/*
 * Add CPU cpu's copy (every CPU's when cpu < 0) of slot into s, which
 * fs_sketch_init() made with the object's parameters: every map, chunk by
 * chunk, through fs_sketch_add_chunk().  Folding several slots or CPUs
 * into one s merges them (cells add, registers take the max).  0 or
 * -EINVAL.
 */
int fs_vm_dp_fold(const struct fs_vm_dp_dump *d, int cpu, __u32 slot,
		  struct fs_sketch *s);

/*
 * The spills CPU cpu's copy (every CPU's when cpu < 0) shows: *wide the
 * wide cells (fs_cms) with a non-zero count, *narrow the narrow cells
 * with the spilled bit.  Only a spill writes a wide cell in the narrow
 * layout, and it always moves a non-zero count, so the two are equal.
 */
void fs_vm_dp_spills(const struct fs_vm_dp_dump *d, int cpu, __u64 *wide,
		     __u64 *narrow);

/* Packets and bytes in row `row` of s, summed over its columns: with the
 * standard update every packet adds to one cell of each row, so every row
 * sums to what the sketch counted. */
void fs_vm_row_sum(const struct fs_sketch *s, __u32 row, __u64 *packets,
		   __u64 *bytes);

#endif /* FLOWSKETCH_VM_DPMAPS_H */
