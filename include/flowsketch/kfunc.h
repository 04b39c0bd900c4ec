/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * kfunc.h - ABI of the flowsketch kernel module's kfunc (kmod/).
 *
 *   int bpf_flowsketch_update4(struct fs_kfunc_args *args, u32 args__sz,
 *                              struct bpf_map *cms, struct bpf_map *cms_narrow,
 *                              struct bpf_map *hll_packed);
 *
 * (FS_KFUNC_UPDATE_FN below, its map arguments the datapath maps it
 * writes, FS_KFUNC_MAPS in sketch_kind.h, FS_KFUNC_MAP_PARAM: the module
 * and the programs take both from here).
 *
 * Runs fs_sketch_update() (update.h) natively over the same per-CPU map
 * memory the pure-BPF path updates, so both paths leave identical state
 * and user space reads it the same way.
 *
 * The "4" is the ABI's version: version 1 (bpf_flowsketch_update) read
 * struct fs_packet_update's report as 32 bits, before extra_packets took
 * half of it; version 2 counted in the wide layout (fs_cms and fs_hll),
 * before the narrow cells and packed registers (cms.h, hll.h); version 3
 * refused the parameters' bytes 14 and 15, which now size the keyed
 * sample (params.h), so with --sample-rate it would fail every packet.
 * An older module has no symbol of this name, so programs
 * built against this ABI fail to load with it, and the daemon falls back
 * to the pure-BPF update instead of counting with the old semantics.  A
 * new sketch kind is a new map argument, so a new version: a module that
 * took fewer maps would leave the new kind's uncounted; so is a new
 * meaning of the parameters the module checks.
 *
 *   args      BPF stack or map value memory (the datapath uses a per-CPU
 *             map value, fs_kfunc_args), args__sz == sizeof(struct
 *             fs_kfunc_args) (the verifier checks that args__sz bytes are
 *             readable and initialised; the module checks the exact size);
 *   cms       the program's fs_cms map (&fs_cms): BPF_MAP_TYPE_PERCPU_ARRAY
 *             of struct fs_cms_chunk, at least fs_cms_chunks(params, nslots);
 *   cms_narrow  its fs_cms_narrow, the same for struct fs_cms_narrow_chunk;
 *   hll_packed  its fs_hll_packed, the same for struct fs_hll_packed_chunk.
 *             Each map is one argument: only as an argument is a map
 *             pointer one the verifier trusts (KF_TRUSTED_ARGS: &map in
 *             the program, not a pointer read from a kernel struct or a
 *             map value), and a kfunc takes at most five: these three
 *             leave no room for another map (a new one needs the maps
 *             gathered, e.g. a map of maps the module walks).
 *
 * The "__sz" suffix is how the verifier recognises a (pointer, size) pair.
 * The maps are typed struct bpf_map * arguments, which the verifier
 * matches against a map pointer (CONST_PTR_TO_MAP, Linux 6.9+), rather than
 * "void *x__map" ones: with two "__map" arguments the 6.12 verifier reads
 * the second map's btf_record, which is NULL for a plain array, and oopses
 * (seen in tests/vm).
 *
 * Returns 0, -EINVAL when the arguments do not match the ABI (size, params
 * out of range, map of the wrong type, value size or length, slot >=
 * nslots), or FS_UPDATE_ENOENT (-ENOENT) as fs_sketch_update() does.  On
 * success args->u.hash and args->u.report are set, as by the BPF path.
 *
 * Layout of struct fs_kfunc_args (416 bytes, no padding):
 *   off size field
 *     0   32 params   the program's fs_params (params.h), copied from
 *                     .rodata: a kfunc has at most five arguments, and
 *                     carrying the parameters with the packet is what lets
 *                     one module serve programs loaded with different ones
 *    32  304 key      the program's fs_hash_key (hash.h), derived from
 *                     params.secret at load; copied for the same reason
 *   336   80 u        struct fs_packet_update (packet_update.h), in and out
 *
 * The module is named FS_KFUNC_MODULE; user space decides whether to set
 * fs_use_kfunc before load by testing for FS_KFUNC_BTF_PATH (Debian's
 * libbpf 1.1 has no bpf_ksym_exists()).
 */
#ifndef FLOWSKETCH_KFUNC_H
#define FLOWSKETCH_KFUNC_H

#include "hash.h"
#include "params.h"
#include "packet_update.h"
#include "sketch_kind.h"

#define FS_KFUNC_MODULE "flowsketch"
#define FS_KFUNC_BTF_PATH "/sys/kernel/btf/" FS_KFUNC_MODULE
#define FS_KFUNC_UPDATE_FN bpf_flowsketch_update4
#define FS_KFUNC_STR_(fn) #fn
#define FS_KFUNC_STR(fn) FS_KFUNC_STR_(fn)
#define FS_KFUNC_UPDATE FS_KFUNC_STR(FS_KFUNC_UPDATE_FN)

/* Map NAME's argument (FS_KFUNC_MAPS), after args and args__sz. */
#define FS_KFUNC_MAP_PARAM(NAME, name, KIND) , struct bpf_map *name
#define FS_KFUNC_MAP_ONE(NAME, name, KIND) + 1
_Static_assert(2 FS_KFUNC_MAPS(FS_KFUNC_MAP_ONE) <= 5,
	       "a kfunc takes at most five arguments");

struct fs_kfunc_args {
	struct fs_sketch_params params;
	struct fs_hash_key key;
	struct fs_packet_update u;
};

_Static_assert(sizeof(struct fs_kfunc_args) == 416, "kfunc ABI");

#endif /* FLOWSKETCH_KFUNC_H */
