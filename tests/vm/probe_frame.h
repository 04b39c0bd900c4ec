/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * probe_frame.h - the "frames" kfunc_probe.bpf.c takes, shared by the BPF
 * probe and the VM test program.  Include after flowsketch/kfunc.h.
 */
#ifndef FLOWSKETCH_VM_PROBE_FRAME_H
#define FLOWSKETCH_VM_PROBE_FRAME_H

/* fs_probe_xdp / fs_probe_tc: in u; out u.hash, u.report and err. */
struct fs_probe_frame {
	struct fs_packet_update u;
	__s32 err;
	__u32 pad;
};

/* Which maps fs_probe_abi passes the kfunc (kfunc.h: cms, cms_narrow,
 * hll_packed, in that order), one kind of ABI violation each. */
enum fs_probe_maps {
	FS_PROBE_MAPS_RIGHT = 0,	/* fs_cms, fs_cms_narrow, fs_hll_packed */
	FS_PROBE_MAPS_SWAPPED = 1,	/* fs_cms_narrow, fs_cms, fs_hll_packed */
	FS_PROBE_MAPS_WRONG_TYPE = 2,	/* fs_cms, fs_cms_narrow, fs_ctl (a
					   plain array of another value size) */
	FS_PROBE_SIZE_WRONG = 3,	/* right maps, args__sz 8 short */
	/* Not a probe the kfunc can refuse: fs_hll (the byte registers of
	 * the wide layout) where fs_hll_packed belongs, a per-CPU array of
	 * the same value size with as many elements at these parameters.
	 * tests/vm/test_probe.c reports what the kfunc does with it. */
	FS_PROBE_MAPS_LOOKALIKE = 4,	/* fs_cms, fs_cms_narrow, fs_hll */
};

/* fs_probe_abi: in args and maps; out err. */
struct fs_probe_abi_frame {
	struct fs_kfunc_args args;
	__u32 maps;
	__s32 err;
};

#endif /* FLOWSKETCH_VM_PROBE_FRAME_H */
