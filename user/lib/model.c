// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* model.c - user-space instance of the shared per-packet update (model.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "model.h"

static inline void *fs_env_chunk(struct fs_update_env *env, enum fs_dp_map m,
				__u32 chunk)
{
	return chunk < env->nchunks[m] ?
	       (char *)env->chunks[m] + (size_t)chunk * FS_CHUNK_BYTES : NULL;
}

/*
 * gcc cannot see that the update's second row loop stops at the same depth
 * as the first, which filled cell[row]; the BPF verifier and clang agree.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "flowsketch/update.h"

int fs_model_init(struct fs_model *m, const struct fs_sketch_params *p)
{
	int err, k;

	memset(m, 0, sizeof(*m));
	err = fs_params_check(p);
	if (err)
		return err;
	m->params = *p;
	fs_hash_key_derive(&p->secret, &m->key);
	for (k = 0; k < FS_NDPMAPS; k++) {
		m->env.nchunks[k] = fs_dp_chunks(k, p, FS_NSLOTS);
		m->env.chunks[k] = calloc(m->env.nchunks[k], FS_CHUNK_BYTES);
		if (!m->env.chunks[k]) {
			err = -ENOMEM;
			goto err_free;
		}
	}
	return 0;

err_free:
	fs_model_free(m);
	return err;
}

void fs_model_free(struct fs_model *m)
{
	int k;

	for (k = 0; k < FS_NDPMAPS; k++)
		free(m->env.chunks[k]);
	memset(&m->env, 0, sizeof(m->env));
}

int fs_model_update(struct fs_model *m, const struct fs_flow_key *key,
		    __u64 bytes, __u32 slot, __u64 thresh_packets,
		    __u64 thresh_bytes, __u64 *hash)
{
	return fs_model_update_segs(m, key, 1, bytes, slot, thresh_packets,
				    thresh_bytes, hash);
}

int fs_model_update_segs(struct fs_model *m, const struct fs_flow_key *key,
			 __u32 packets, __u64 bytes, __u32 slot,
			 __u64 thresh_packets, __u64 thresh_bytes, __u64 *hash)
{
	struct fs_packet_update u = {
		.key = *key,
		.bytes = bytes,
		.extra_packets = (__s16)((int)packets - 1),
		.thresh_packets = thresh_packets,
		.thresh_bytes = thresh_bytes,
		.slot = slot,
	};
	int err;

	if (slot >= FS_NSLOTS || packets > FS_EXTRA_PACKETS_MAX + 1)
		return -EINVAL;
	err = fs_sketch_update(&m->env, &m->params, &m->key, &u);
	if (err)
		return -ENOENT;
	if (hash)
		*hash = u.hash;
	return (int)u.report;
}

int fs_model_packet(struct fs_model *m, const struct fs_flow_key *key,
		    __u64 bytes, __u64 seq, __u64 phi_q32, __u64 *hash)
{
	__u32 slot = (__u32)(seq % FS_NSLOTS);
	struct fs_slot_totals *t = &m->hot.slot[slot];
	__u64 packets, total_bytes, h_flow;
	int report;

	if (t->seq == seq) {
		packets = t->packets + 1;
		total_bytes = t->bytes + bytes;
	} else {
		packets = 1;
		total_bytes = bytes;
	}
	report = fs_model_update(m, key, bytes, slot,
				 fs_hh_threshold(packets, phi_q32),
				 fs_hh_threshold(total_bytes, phi_q32), &h_flow);
	if (report < 0)
		return report;
	if (hash)
		*hash = h_flow;
	/* The detection sketches, as bpf/datapath.bpf.h runs them: n is the
	 * window's packets on this CPU before this one. */
	if (m->params.prefix_log2w || m->params.spread_log2w) {
		struct fs_packet_hashes h;

		fs_packet_hash(key, &m->key, &h);
		if (fs_detect_update(&m->env, &m->params, &m->key, key, &h,
				     packets - 1, 1, bytes, slot))
			return -ENOENT;
	}
	/* The keyed sample, as bpf/datapath.bpf.h runs it after both. */
	if (m->params.sample_log2b &&
	    fs_sample_update(&m->env, &m->params, key, h_flow, 1, bytes, slot))
		return -ENOENT;
	t->seq = seq;
	t->packets = packets;
	t->bytes = total_bytes;
	m->hot.sketched++;
	return report;
}

#pragma GCC diagnostic pop

void fs_model_zero_slot(struct fs_model *m, __u32 slot)
{
	const struct fs_sketch_params *p = &m->params;
	int k;

	if (slot >= FS_NSLOTS)
		return;
	/* A slot's chunks are its own and consecutive (chunk.h). */
	for (k = 0; k < FS_NDPMAPS; k++)
		memset((char *)m->env.chunks[k] + FS_CHUNK_BYTES *
		       (fs_dp_first(k, p, slot) >> fs_dp_maps[k].chunk_shift),
		       0, (size_t)fs_dp_slot_chunks(k, p) * FS_CHUNK_BYTES);
}
