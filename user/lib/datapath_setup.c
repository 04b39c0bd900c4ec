// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* datapath_setup.c - settings every datapath loader applies (datapath_setup.h). */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "datapath_setup.h"
#include "flowsketch/maps.h"
#include "flowsketch/sketch_kind.h"

int fs_datapath_setup(struct fs_sketch_params *rodata_params,
		      struct fs_hash_key *rodata_key,
		      struct fs_bloom_key *rodata_bloom_key,
		      __u32 *rodata_use_kfunc, struct bpf_object *obj,
		      const struct fs_sketch_params *p, bool use_kfunc)
{
	struct fs_hash_key key;
	int err = 0, k;

	fs_hash_key_derive(&p->secret, &key);
	fs_bloom_key_derive(&p->secret, rodata_bloom_key);
	*rodata_params = *p;
	*rodata_key = key;
	*rodata_use_kfunc = use_kfunc;
	for (k = 0; k < FS_NDPMAPS && !err; k++) {
		struct bpf_map *m = bpf_object__find_map_by_name(obj, fs_dp_maps[k].map);

		err = m ? bpf_map__set_max_entries(m, fs_dp_chunks(k, p, FS_NSLOTS)) :
			  -ENOENT;
	}
	return err;
}

int fs_datapath_fresh_legacy(struct bpf_object *obj)
{
	int err = 0, k;

	for (k = 0; k < FS_NDPMAPS && !err; k++) {
		struct bpf_map *m = bpf_object__find_map_by_name(obj, fs_dp_maps[k].map);

		if (!fs_dp_maps[k].legacy)
			continue;
		err = m ? bpf_map__set_max_entries(m, FS_DP_LEGACY_CHUNKS) : -ENOENT;
	}
	return err;
}

int fs_ifslot_set_one(int map_fd, __u32 ifindex, const char *name)
{
	struct fs_ifslots t;
	__u32 zero = 0;

	memset(&t, 0, sizeof(t));
	t.n = 1;
	t.ifindex[0] = ifindex;
	strncpy(t.name[0], name, FS_IFNAME_LEN - 1);
	return bpf_map_update_elem(map_fd, &zero, &t, BPF_ANY) ? -errno : 0;
}
