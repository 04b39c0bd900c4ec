/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * model_fold.h - a model's slots as the daemon sees them: folded into
 * merged sketches (sketch.h), whatever layout the datapath maps hold.
 * Two models that counted the same packets in different ways (one update
 * of n packets, n updates of one) can split a cell differently between
 * its narrow and wide parts, spill at other times and carry other report
 * and maybe bits; their folds must be equal all the same.
 */
#ifndef FLOWSKETCH_TESTS_MODEL_FOLD_H
#define FLOWSKETCH_TESTS_MODEL_FOLD_H

#include "model.h"
#include "sketch.h"

/* s = slot of m, folded (s is initialised here; free it after). */
static inline void model_fold(const struct fs_model *m, __u32 slot,
			      struct fs_sketch *s)
{
	assert_int_equal(fs_sketch_init(s, &m->params), 0);
	assert_int_equal(fs_sketch_add_slot(s, m->env.chunks, m->env.nchunks,
					    slot), 0);
}

/* Every slot of a and b folds to the same cells and registers. */
static inline void assert_same_folds(const struct fs_model *a,
				     const struct fs_model *b)
{
	struct fs_sketch sa, sb;
	__u32 slot;
	int k;

	for (slot = 0; slot < FS_NSLOTS; slot++) {
		model_fold(a, slot, &sa);
		model_fold(b, slot, &sb);
		for (k = 0; k < FS_NKINDS; k++)
			assert_memory_equal(sa.part[k], sb.part[k],
					    fs_kind_slot_bytes(k, &a->params));
		fs_sketch_free(&sa);
		fs_sketch_free(&sb);
	}
}

#endif /* FLOWSKETCH_TESTS_MODEL_FOLD_H */
