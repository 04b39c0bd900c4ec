// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * main.c - the flowsketch kernel module: kfuncs that run the per-packet
 * sketch update natively over the datapath's own BPF maps (kfunc.c).
 *
 * The module keeps no state of its own: every byte it writes lives in the
 * calling program's maps, so bpftool and the daemon see the same sketches
 * whichever path filled them.  Hence no module parameters either: the
 * sketch parameters travel with each call (include/flowsketch/kfunc.h).
 *
 * Unloading is safe by construction: the verifier takes a reference on the
 * module (through its BTF) for every program that calls one of its kfuncs
 * and drops it only when the program is freed, so delete_module() fails
 * while such a program is loaded (tests/vm/ checks this).
 */
#include <linux/module.h>

#include "kfunc.h"

static int __init fs_init(void)
{
	return fs_kfunc_register();
}

static void __exit fs_exit(void)
{
}

module_init(fs_init);
module_exit(fs_exit);

MODULE_LICENSE("Dual BSD/GPL");
MODULE_AUTHOR("flowsketch");
MODULE_DESCRIPTION("flowsketch: kfuncs for per-packet Count-Min and HyperLogLog updates over BPF maps");
