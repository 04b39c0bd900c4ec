/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * hll_export.h - HyperLogLog registers in formats other engines read.
 *
 * flowsketch derives registers the way Redis and postgresql-hll do (low p
 * bits index, trailing-zero rank of the rest; hll.h), so a register array
 * can be handed to them as-is, packed in their storage layouts:
 *
 *   Redis dense ("HYLL"), p = 14 only: SET key <blob>, then PFCOUNT and
 *   PFMERGE treat it like a key built by PFADD.
 *
 *   postgresql-hll FULL, regwidth 5, log2m 4..17: cast the bytes to hll
 *   and use hll_cardinality() / hll_union_agg().
 *
 * Both engines hash their own inputs with other functions, so exported
 * sketches merge only with sketches exported by flowsketch with the same
 * secret (params.h); the import functions exist to check round trips.
 */
#ifndef FLOWSKETCH_HLL_EXPORT_H
#define FLOWSKETCH_HLL_EXPORT_H

#include <stddef.h>
#include <linux/types.h>

#define FS_REDIS_HLL_P 14
#define FS_REDIS_HLL_HDR 16
/* 16384 registers of 6 bits. */
#define FS_REDIS_HLL_BYTES (FS_REDIS_HLL_HDR + ((1U << FS_REDIS_HLL_P) * 6 / 8))
#define FS_REDIS_HLL_MAX 63

#define FS_PG_HLL_REGWIDTH 5
#define FS_PG_HLL_MAX ((1U << FS_PG_HLL_REGWIDTH) - 1)
#define FS_PG_HLL_MIN_LOG2M 4
#define FS_PG_HLL_MAX_LOG2M 17
#define FS_PG_HLL_HDR 3

/* Write the Redis dense blob of 2^14 registers: FS_REDIS_HLL_BYTES bytes.
 * -EINVAL if p != 14 or a register exceeds 63, -ENOSPC if out is short. */
int fs_hll_export_redis(const __u8 *regs, __u32 p, __u8 *out, size_t out_len);
/* Read a Redis dense blob back into 2^14 registers; -EINVAL if it is not one. */
int fs_hll_import_redis(const __u8 *in, size_t len, __u8 *regs);

/* Size of the postgresql-hll FULL form of 2^p registers. */
size_t fs_hll_pg_bytes(__u32 p);
/* Write it; registers above 31 are capped at 31 (regwidth 5).
 * -EINVAL if p is outside 4..17, -ENOSPC if out is short. */
int fs_hll_export_pg(const __u8 *regs, __u32 p, __u8 *out, size_t out_len);
/* Read a FULL, regwidth-5 blob; sets *p and fills 2^*p registers (regs
 * must hold 2^FS_PG_HLL_MAX_LOG2M).  -EINVAL if it is not one. */
int fs_hll_import_pg(const __u8 *in, size_t len, __u8 *regs, __u32 *p);

#endif /* FLOWSKETCH_HLL_EXPORT_H */
