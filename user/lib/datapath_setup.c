// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* datapath_setup.c - settings every datapath loader applies (datapath_setup.h). */
#include <bpf/libbpf.h>
#include "datapath_setup.h"
#include "flowsketch/cms.h"
#include "flowsketch/hll.h"

int fs_datapath_setup(struct fs_sketch_params *rodata_params,
		      struct fs_hash_key *rodata_key,
		      struct fs_bloom_key *rodata_bloom_key,
		      __u32 *rodata_use_kfunc,
		      struct bpf_map *cms, struct bpf_map *hll,
		      const struct fs_sketch_params *p, bool use_kfunc)
{
	struct fs_hash_key key;
	int err;

	fs_hash_key_derive(&p->secret, &key);
	fs_bloom_key_derive(&p->secret, rodata_bloom_key);
	*rodata_params = *p;
	*rodata_key = key;
	*rodata_use_kfunc = use_kfunc;
	err = bpf_map__set_max_entries(cms, fs_cms_chunks(p, FS_NSLOTS));
	if (!err)
		err = bpf_map__set_max_entries(hll, fs_hll_chunks(p, FS_NSLOTS));
	return err;
}
