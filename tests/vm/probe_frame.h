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

enum fs_probe_maps {
	FS_PROBE_MAPS_RIGHT = 0,	/* fs_cms, fs_hll */
	FS_PROBE_MAPS_SWAPPED = 1,	/* fs_hll, fs_cms */
	FS_PROBE_MAPS_WRONG_TYPE = 2,	/* fs_ctl (plain array), fs_hll */
	FS_PROBE_SIZE_WRONG = 3,	/* right maps, args__sz 8 short */
};

/* fs_probe_abi: in args and maps; out err. */
struct fs_probe_abi_frame {
	struct fs_kfunc_args args;
	__u32 maps;
	__s32 err;
};

#endif /* FLOWSKETCH_VM_PROBE_FRAME_H */
