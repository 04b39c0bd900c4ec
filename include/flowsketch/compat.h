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
 * and secret, which is why the secret is recorded with it (see params.h).
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
 * code and the JIT emits no loop; gcc (kernel, user) spells it differently.
 * FS_NO_UNROLL keeps a short loop with an early exit a loop (the verifier
 * handles bounded loops), where unrolling would only grow the program. */
#if defined(__clang__)
#define FS_UNROLL _Pragma("unroll")
#define FS_NO_UNROLL _Pragma("clang loop unroll(disable)")
#else
#define FS_UNROLL _Pragma("GCC unroll 16")
#define FS_NO_UNROLL _Pragma("GCC unroll 1")
#endif

#define FS_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Count trailing zeros of a non-zero 64-bit word, without branches:
 * isolate the lowest set bit (x & -x, a power of two 2^n), multiply it by
 * a de Bruijn sequence (a 64-bit word in which every 6-bit window is
 * different), so that the top six bits of the product are the window at
 * position n, and map that window back to n with a 64-entry table.  BPF
 * has neither a ctz instruction (clang 14 cannot lower __builtin_ctzll for
 * it) nor conditional moves, and a binary search costs a misprediction or
 * two per call on random hash bits.  User and kernel builds use the same
 * code so that there is one definition to test.
 */
#define FS_DEBRUIJN64 0x022fdd63cc95386dULL

static const __u8 fs_debruijn64_ctz[64] = {
	 0,  1,  2, 53,  3,  7, 54, 27,  4, 38, 41,  8, 34, 55, 48, 28,
	62,  5, 39, 46, 44, 42, 22,  9, 24, 35, 59, 56, 49, 18, 29, 11,
	63, 52,  6, 26, 37, 40, 33, 47, 61, 45, 43, 21, 23, 58, 17, 10,
	51, 25, 36, 32, 60, 20, 57, 16, 50, 31, 19, 15, 30, 14, 13, 12,
};

FS_INLINE __u32 fs_ctz64(__u64 x)
{
	return fs_debruijn64_ctz[((x & (~x + 1)) * FS_DEBRUIJN64) >> 58];
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

	/* Hide the mask's origin from the optimizer: it would otherwise
	 * recognise a select and, for BPF, which has no conditional move,
	 * emit the very branch this function exists to avoid. */
	asm volatile("" : "+r"(a_smaller));

	return b ^ ((a ^ b) & a_smaller);
}

#endif /* FLOWSKETCH_COMPAT_H */
