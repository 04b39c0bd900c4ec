// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * hll_export.c - pack registers for Redis and postgresql-hll (hll_export.h).
 *
 * Redis (src/hyperloglog.c): a 16-byte header "HYLL", encoding 0 (dense),
 * three zero bytes and an 8-byte little-endian cached cardinality whose
 * most significant bit (bit 7 of byte 15) marks it stale, so PFCOUNT
 * recomputes it instead of trusting our zero.  Then 16384 registers of 6
 * bits, least significant bit first: register i starts at bit 6i of the
 * byte stream, bit k of a byte being its 2^k bit.
 *
 * postgresql-hll (STORAGE.markdown, schema version 1): byte 0 = version 1
 * in the high nibble, type 4 = FULL in the low one (0x14); byte 1 =
 * (regwidth - 1) << 5 | log2m; byte 2 = sparse-enabled bit 6 and explicit
 * cutoff 63 ("auto") in bits 0..5: 0x7f.  Then 2^log2m registers of
 * regwidth bits, most significant bit first: register i is bits
 * [w i, w (i + 1)) of the stream where stream bit 0 is the top bit of the
 * first byte; the last byte is zero-padded.  Regwidth 5 holds 0..31; a
 * rank of 32 or more needs 31 trailing zero hash bits past the index
 * (probability 2^-31 per key), so capping loses nothing measurable.
 */
#include <errno.h>
#include <string.h>
#include "hll_export.h"

static const __u8 redis_magic[4] = { 'H', 'Y', 'L', 'L' };

#define PG_VERSION_FULL 0x14
#define PG_CUTOFF_AUTO 0x7f

/* A w-bit value at stream bit `bit`, LSB-first order (Redis). */
static void put_bits_lsb(__u8 *buf, __u64 bit, __u32 w, __u32 v)
{
	__u32 i;

	for (i = 0; i < w; i++, bit++)
		if (v & (1U << i))
			buf[bit >> 3] |= (__u8)(1U << (bit & 7));
}

static __u32 get_bits_lsb(const __u8 *buf, __u64 bit, __u32 w)
{
	__u32 i, v = 0;

	for (i = 0; i < w; i++, bit++)
		if (buf[bit >> 3] & (1U << (bit & 7)))
			v |= 1U << i;
	return v;
}

/* Same, MSB-first order (postgresql-hll): the value's top bit first. */
static void put_bits_msb(__u8 *buf, __u64 bit, __u32 w, __u32 v)
{
	__u32 i;

	for (i = 0; i < w; i++, bit++)
		if (v & (1U << (w - 1 - i)))
			buf[bit >> 3] |= (__u8)(0x80U >> (bit & 7));
}

static __u32 get_bits_msb(const __u8 *buf, __u64 bit, __u32 w)
{
	__u32 i, v = 0;

	for (i = 0; i < w; i++, bit++)
		v = (v << 1) | !!(buf[bit >> 3] & (0x80U >> (bit & 7)));
	return v;
}

int fs_hll_export_redis(const __u8 *regs, __u32 p, __u8 *out, size_t out_len)
{
	__u32 i;

	if (p != FS_REDIS_HLL_P)
		return -EINVAL;
	if (out_len < FS_REDIS_HLL_BYTES)
		return -ENOSPC;
	for (i = 0; i < (1U << p); i++)
		if (regs[i] > FS_REDIS_HLL_MAX)
			return -EINVAL;
	memset(out, 0, FS_REDIS_HLL_BYTES);
	memcpy(out, redis_magic, sizeof(redis_magic));
	out[15] = 0x80;
	for (i = 0; i < (1U << p); i++)
		put_bits_lsb(out + FS_REDIS_HLL_HDR, (__u64)i * 6, 6, regs[i]);
	return 0;
}

int fs_hll_import_redis(const __u8 *in, size_t len, __u8 *regs)
{
	__u32 i;

	if (len != FS_REDIS_HLL_BYTES ||
	    memcmp(in, redis_magic, sizeof(redis_magic)) || in[4] != 0)
		return -EINVAL;
	for (i = 0; i < (1U << FS_REDIS_HLL_P); i++)
		regs[i] = (__u8)get_bits_lsb(in + FS_REDIS_HLL_HDR, (__u64)i * 6, 6);
	return 0;
}

size_t fs_hll_pg_bytes(__u32 p)
{
	return FS_PG_HLL_HDR +
	       (((size_t)FS_PG_HLL_REGWIDTH << p) + 7) / 8;
}

int fs_hll_export_pg(const __u8 *regs, __u32 p, __u8 *out, size_t out_len)
{
	size_t len;
	__u32 i;

	if (p < FS_PG_HLL_MIN_LOG2M || p > FS_PG_HLL_MAX_LOG2M)
		return -EINVAL;
	len = fs_hll_pg_bytes(p);
	if (out_len < len)
		return -ENOSPC;
	memset(out, 0, len);
	out[0] = PG_VERSION_FULL;
	out[1] = (__u8)((FS_PG_HLL_REGWIDTH - 1) << 5 | p);
	out[2] = PG_CUTOFF_AUTO;
	for (i = 0; i < (1U << p); i++)
		put_bits_msb(out + FS_PG_HLL_HDR, (__u64)i * FS_PG_HLL_REGWIDTH,
			     FS_PG_HLL_REGWIDTH,
			     regs[i] < FS_PG_HLL_MAX ? regs[i] : FS_PG_HLL_MAX);
	return 0;
}

int fs_hll_import_pg(const __u8 *in, size_t len, __u8 *regs, __u32 *p)
{
	__u32 log2m, i;

	if (len < FS_PG_HLL_HDR || in[0] != PG_VERSION_FULL ||
	    (in[1] >> 5) != FS_PG_HLL_REGWIDTH - 1)
		return -EINVAL;
	log2m = in[1] & 0x1f;
	if (log2m < FS_PG_HLL_MIN_LOG2M || log2m > FS_PG_HLL_MAX_LOG2M ||
	    len != fs_hll_pg_bytes(log2m))
		return -EINVAL;
	for (i = 0; i < (1U << log2m); i++)
		regs[i] = (__u8)get_bits_msb(in + FS_PG_HLL_HDR,
					     (__u64)i * FS_PG_HLL_REGWIDTH,
					     FS_PG_HLL_REGWIDTH);
	*p = log2m;
	return 0;
}
