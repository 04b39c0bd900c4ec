/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * compat.h - what the shared core needs from its three build environments.
 *
 * Every header under include/flowsketch/ is compiled three ways:
 *   - clang -target bpf, after vmlinux.h (which already defines __u64 & co);
 *   - the kernel module (__KERNEL__ set by Kbuild);
 *   - user space (daemon, CLI, tests, benchmarks).
 * The core therefore uses only the kernel's __uN types, no libc, no floating
 * point and no division by values unknown at compile time on the hot path.
 *
 * Byte order: hashes read the flow key as little-endian 32-bit chunks.  All
 * three builds run on the same host, so they agree; a sketch exported to
 * another host is only mergeable with sketches built on the same byte order
 * and secret, which is why both are recorded with it (see sketch_params.h).
 */
#ifndef FLOWSKETCH_COMPAT_H
#define FLOWSKETCH_COMPAT_H

#if defined(__bpf__)
/* vmlinux.h (CO-RE) provides the __uN types; bpf_helpers.h __always_inline. */
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#define FS_INLINE static __always_inline
#elif defined(__KERNEL__)
#include <linux/types.h>
#define FS_INLINE static __always_inline
#else
#include <linux/types.h>
#define FS_INLINE static inline __attribute__((always_inline))
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "flowsketch's hash reads keys as little-endian words; port fs_le64 first"
#endif

/* Loops over compile-time bounds are unrolled so the verifier sees straight
 * code and the JIT emits no loop; gcc (kernel, user) spells it differently. */
#if defined(__clang__)
#define FS_UNROLL _Pragma("unroll")
#else
#define FS_UNROLL _Pragma("GCC unroll 16")
#endif

#define FS_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Count trailing zeros of a non-zero 64-bit word, without branches: the
 * bits below the lowest set bit, (x & -x) - 1, counted by a SWAR popcount.
 * BPF has neither a ctz instruction (clang 14 cannot lower
 * __builtin_ctzll for it) nor conditional moves, and a binary search costs
 * a branch misprediction or two per call on random hash bits, several
 * times the arithmetic.  User and kernel builds use the same code so that
 * there is one definition to test.
 */
FS_INLINE __u32 fs_ctz64(__u64 x)
{
	__u64 y = (x & (~x + 1)) - 1;

	y = y - ((y >> 1) & 0x5555555555555555ULL);
	y = (y & 0x3333333333333333ULL) + ((y >> 2) & 0x3333333333333333ULL);
	y = (y + (y >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (__u32)((y * 0x0101010101010101ULL) >> 56);
}

/*
 * min(a, b) without a branch, for a, b < 2^63 (packet and byte counters
 * are): a - b wraps to a number with the top bit set exactly when a < b.
 * The row minimum of a Count-Min update compares random cells, so a
 * branch there mispredicts about half the time.
 */
FS_INLINE __u64 fs_min_u63(__u64 a, __u64 b)
{
	__u64 a_smaller = 0 - ((a - b) >> 63);

	return b ^ ((a ^ b) & a_smaller);
}

#endif /* FLOWSKETCH_COMPAT_H */
