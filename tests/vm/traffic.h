/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * traffic.h - reproducible pseudo-random inputs for the VM tests.
 *
 * splitmix64 (Steele, Lea, Flood 2014): a full-period 64-bit generator,
 * plenty for choosing keys; the tests need reproducibility, not secrecy.
 */
#ifndef FLOWSKETCH_VM_TRAFFIC_H
#define FLOWSKETCH_VM_TRAFFIC_H

#include <linux/types.h>

static inline __u64 fs_vm_rand(__u64 *state)
{
	__u64 z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n) up to a bias of n / 2^64, irrelevant here. */
static inline __u32 fs_vm_rand_below(__u64 *state, __u32 n)
{
	return (__u32)(((unsigned __int128)fs_vm_rand(state) * n) >> 64);
}

#endif /* FLOWSKETCH_VM_TRAFFIC_H */
