// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* dpmaps.c - the datapath's maps of sketch state, compared and folded (dpmaps.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "dpmaps.h"

/* Map m of obj, checked to hold n chunks; NULL with *err set if not. */
static struct bpf_map *fs_vm_dp_map(struct bpf_object *obj, enum fs_dp_map m,
				    __u32 n, int *err)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, fs_dp_maps[m].map);

	if (!map) {
		*err = -ENOENT;
		return NULL;
	}
	if (bpf_map__value_size(map) != FS_CHUNK_BYTES ||
	    bpf_map__max_entries(map) != n) {
		*err = -EPROTO;
		return NULL;
	}
	return map;
}

int fs_vm_dp_differ(struct bpf_object *a, struct bpf_object *b,
		    enum fs_dp_map m, const struct fs_model *model, int cpu)
{
	int ncpus = libbpf_num_possible_cpus(), differ = 0, err = 0, c;
	__u32 n = model->env.nchunks[m], i;
	struct bpf_map *ma, *mb;
	char *va = NULL, *vb = NULL, *zero = NULL;

	ma = fs_vm_dp_map(a, m, n, &err);
	mb = ma ? fs_vm_dp_map(b, m, n, &err) : NULL;
	if (!mb)
		return err;
	if (ncpus <= 0)
		return -EINVAL;
	/* FS_CHUNK_BYTES is a multiple of 8: the per-CPU values are packed. */
	va = malloc((size_t)ncpus * FS_CHUNK_BYTES);
	vb = malloc((size_t)ncpus * FS_CHUNK_BYTES);
	zero = calloc(1, FS_CHUNK_BYTES);
	if (!va || !vb || !zero) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		bool same = true;

		if (bpf_map_lookup_elem(bpf_map__fd(ma), &i, va) ||
		    bpf_map_lookup_elem(bpf_map__fd(mb), &i, vb)) {
			err = -errno;
			goto out;
		}
		for (c = 0; c < ncpus; c++) {
			const char *ca = va + (size_t)c * FS_CHUNK_BYTES;
			const void *want = c == cpu ?
				(const char *)model->env.chunks[m] + (size_t)i * FS_CHUNK_BYTES :
				zero;

			if (memcmp(ca, vb + (size_t)c * FS_CHUNK_BYTES, FS_CHUNK_BYTES) ||
			    memcmp(ca, want, FS_CHUNK_BYTES))
				same = false;
		}
		differ += !same;
	}
out:
	free(va);
	free(vb);
	free(zero);
	return err ? err : differ;
}

int fs_vm_dp_dump(struct bpf_object *obj, struct fs_vm_dp_dump *d)
{
	int m, err = 0;
	__u32 i;

	memset(d, 0, sizeof(*d));
	d->ncpus = libbpf_num_possible_cpus();
	if (d->ncpus <= 0)
		return -EINVAL;
	for (m = 0; m < FS_NDPMAPS; m++) {
		struct bpf_map *map = bpf_object__find_map_by_name(obj, fs_dp_maps[m].map);

		if (!map)
			return -ENOENT;
		if (bpf_map__value_size(map) != FS_CHUNK_BYTES)
			return -EPROTO;
		d->n[m] = bpf_map__max_entries(map);
		d->map[m] = calloc((size_t)d->n[m] * d->ncpus, FS_CHUNK_BYTES);
		if (!d->map[m])
			return -ENOMEM;
		for (i = 0; i < d->n[m] && !err; i++)
			if (bpf_map_lookup_elem(bpf_map__fd(map), &i, d->map[m] +
						(size_t)i * d->ncpus * FS_CHUNK_BYTES))
				err = -errno;
		if (err)
			return err;
	}
	return 0;
}

void fs_vm_dp_dump_free(struct fs_vm_dp_dump *d)
{
	int m;

	for (m = 0; m < FS_NDPMAPS; m++) {
		free(d->map[m]);
		d->map[m] = NULL;
	}
}

const void *fs_vm_dp_chunk(const struct fs_vm_dp_dump *d, enum fs_dp_map m,
			   __u32 i, int cpu)
{
	return d->map[m] + ((size_t)i * d->ncpus + cpu) * FS_CHUNK_BYTES;
}

int fs_vm_dp_fold(const struct fs_vm_dp_dump *d, int cpu, __u32 slot,
		  struct fs_sketch *s)
{
	int m, c, err;
	__u32 i;

	for (m = 0; m < FS_NDPMAPS; m++)
		for (i = 0; i < d->n[m]; i++)
			for (c = cpu < 0 ? 0 : cpu; c < (cpu < 0 ? d->ncpus : cpu + 1); c++) {
				err = fs_sketch_add_chunk(s, m, slot, i,
							  fs_vm_dp_chunk(d, m, i, c));
				if (err)
					return err;
			}
	return 0;
}

void fs_vm_dp_spills(const struct fs_vm_dp_dump *d, int cpu, __u64 *wide,
		     __u64 *narrow)
{
	int c;
	__u32 i, j;

	*wide = *narrow = 0;
	for (c = cpu < 0 ? 0 : cpu; c < (cpu < 0 ? d->ncpus : cpu + 1); c++) {
		for (i = 0; i < d->n[FS_DP_CMS]; i++) {
			const struct fs_cms_chunk *ch = fs_vm_dp_chunk(d, FS_DP_CMS, i, c);

			for (j = 0; j < FS_CMS_CHUNK_CELLS; j++)
				*wide += fs_cms_count(ch->cells[j].packets) ||
					 fs_cms_count(ch->cells[j].bytes);
		}
		for (i = 0; i < d->n[FS_DP_CMS_NARROW]; i++) {
			const struct fs_cms_narrow_chunk *ch =
				fs_vm_dp_chunk(d, FS_DP_CMS_NARROW, i, c);

			for (j = 0; j < FS_CMSN_CHUNK_CELLS; j++)
				*narrow += !!(ch->cells[j] & FS_CMSN_SPILLED);
		}
	}
}

void fs_vm_row_sum(const struct fs_sketch *s, __u32 row, __u64 *packets,
		   __u64 *bytes)
{
	__u32 w = 1U << s->params.cms_log2_width, col;

	*packets = *bytes = 0;
	for (col = 0; col < w; col++) {
		*packets += s->cms[(row << s->params.cms_log2_width) | col].packets;
		*bytes += s->cms[(row << s->params.cms_log2_width) | col].bytes;
	}
}
