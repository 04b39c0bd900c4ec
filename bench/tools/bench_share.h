/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * bench_share.h - a second load of the benchmark object on the first
 * one's maps, for the keyed sample's cost (issue 22; fs-livebench's
 * live_sample_ab(), fs-bench's bench_sample_ab()).
 *
 * Two loads with maps of their own differ by more than the 3 % the
 * sample may cost: their Count-Min and HyperLogLog arrays (several MiB a
 * CPU) land on other physical pages, hence other cache sets and TLB
 * reach, and are cold or warm in different ways.  bench_share_maps()
 * makes the second load use every map of the first (bpf_map__reuse_fd)
 * but fs_sample and the object's own sections: .rodata holds fs_params
 * and the hash key, which the verifier reads as constants (that is why
 * the sample cannot be switched on inside one load: it is pruned when
 * off), and .bss/.data are each load's own globals.  Both programs then
 * count into the same cells, registers and counters at the same
 * addresses, and differ in their code and the sample's table alone.
 */
#ifndef FLOWSKETCH_BENCH_SHARE_H
#define FLOWSKETCH_BENCH_SHARE_H

#include <bpf/libbpf.h>

/* Before skel's load: share's maps (by name) for all of skel's but
 * fs_sample and the internal ones.  0 or a negative errno. */
#define BENCH_SHARE_MAPS(skel, share)						\
	bench_share_maps((skel)->obj, (skel)->maps.fs_sample, (share)->obj)

static inline int bench_share_maps(struct bpf_object *obj,
				   const struct bpf_map *own,
				   const struct bpf_object *share)
{
	struct bpf_map *m;
	const struct bpf_map *s;
	int err;

	bpf_object__for_each_map(m, obj) {
		if (bpf_map__is_internal(m) || m == own)
			continue;
		s = bpf_object__find_map_by_name(share, bpf_map__name(m));
		if (!s || bpf_map__fd(s) < 0)
			continue;	/* not created there either */
		err = bpf_map__reuse_fd(m, bpf_map__fd(s));
		if (err)
			return err;
	}
	return 0;
}

#endif /* FLOWSKETCH_BENCH_SHARE_H */
