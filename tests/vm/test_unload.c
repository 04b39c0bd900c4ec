// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_unload.c - the module cannot go away under a program that calls it.
 *
 * The verifier holds a reference on the module for every loaded program
 * that calls one of its kfuncs (through the module's BTF), so
 * delete_module() must fail while such a program exists, even while it is
 * running, and succeed once it is freed.  Done 50 times, while a pure-BPF
 * datapath loaded without the module keeps running traffic through
 * BPF_PROG_TEST_RUN the whole time; the harness then checks dmesg for any
 * oops, warning or BUG.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "vmtest.h"
#include "kfunc_probe.skel.h"

#define FS_VM_CYCLES 50

/* A thread running one XDP probe program on one frame until stopped. */
struct fs_vm_traffic {
	pthread_t thread;
	int prog_fd;
	struct fs_probe_frame frame;
	atomic_bool stop;
	atomic_ulong runs;
	atomic_ulong errors;
};

static void *fs_vm_traffic_main(void *arg)
{
	struct fs_vm_traffic *t = arg;
	struct fs_probe_frame out;

	while (!atomic_load(&t->stop)) {
		LIBBPF_OPTS(bpf_test_run_opts, opts,
			    .data_in = &t->frame,
			    .data_size_in = sizeof(t->frame),
			    .data_out = &out,
			    .data_size_out = sizeof(out),
			    .repeat = 16);

		if (bpf_prog_test_run_opts(t->prog_fd, &opts) ||
		    opts.retval != 2 || out.err)
			atomic_fetch_add(&t->errors, 1);
		atomic_fetch_add(&t->runs, 16);
	}
	return NULL;
}

static int fs_vm_traffic_start(struct fs_vm_traffic *t,
			       const struct bpf_program *prog, __u8 tag)
{
	memset(t, 0, sizeof(*t));
	t->prog_fd = bpf_program__fd(prog);
	t->frame.u.key.family = FS_FAMILY_IPV6;
	t->frame.u.key.proto = 6;
	t->frame.u.key.src[0] = tag;
	t->frame.u.bytes = 1500;
	return -pthread_create(&t->thread, NULL, fs_vm_traffic_main, t);
}

static void fs_vm_traffic_stop(struct fs_vm_traffic *t)
{
	atomic_store(&t->stop, true);
	pthread_join(t->thread, NULL);
}

static struct kfunc_probe *fs_vm_unload_probe(bool use_kfunc)
{
	struct fs_sketch_params p;
	struct kfunc_probe *skel;

	fs_vm_params(&p);
	skel = kfunc_probe__open();
	if (!skel)
		return NULL;
	/* Only the XDP update program is needed here. */
	bpf_program__set_autoload(skel->progs.fs_probe_tc, false);
	bpf_program__set_autoload(skel->progs.fs_probe_fentry, false);
	if (FS_DATAPATH_SETUP(skel, &p, use_kfunc) ||
	    kfunc_probe__load(skel)) {
		kfunc_probe__destroy(skel);
		return NULL;
	}
	return skel;
}

struct fs_vm_cycle_counts {
	int loaded, ran, refused, unloaded;
	int refuse_errno;
};

/* One cycle: insmod, kfunc program running, rmmod refused, free, rmmod. */
static void fs_vm_cycle(const char *ko, struct fs_vm_cycle_counts *c)
{
	struct fs_vm_traffic kt;
	struct kfunc_probe *kf;
	unsigned long runs;
	int err;

	err = fs_vm_module_load(ko);
	if (err) {
		fs_vm_diag("insmod: %s", strerror(-err));
		return;
	}
	c->loaded++;
	kf = fs_vm_unload_probe(true);
	if (!kf) {
		fs_vm_diag("kfunc program does not load: %s", strerror(errno));
		goto unload;
	}
	if (fs_vm_traffic_start(&kt, kf->progs.fs_probe_xdp, 0xc0)) {
		kfunc_probe__destroy(kf);
		goto unload;
	}
	while (atomic_load(&kt.runs) < 64)
		sched_yield();
	err = fs_vm_module_unload();
	if (err && fs_vm_module_present()) {
		c->refused++;
		c->refuse_errno = -err;
	}
	fs_vm_traffic_stop(&kt);
	runs = atomic_load(&kt.runs);
	if (runs >= 64 && !atomic_load(&kt.errors))
		c->ran++;
	kfunc_probe__destroy(kf);
unload:
	err = fs_vm_module_unload_wait(5000);
	if (!err && !fs_vm_module_present())
		c->unloaded++;
	else
		fs_vm_diag("rmmod after the programs are gone: %s", strerror(-err));
}

void fs_vm_test_unload(const char *ko)
{
	struct fs_vm_cycle_counts c = { 0 };
	struct kfunc_probe *kf, *bp;
	struct fs_vm_traffic bt;
	int err, i;

	/* Once by hand, with the module loaded by main(). */
	kf = fs_vm_unload_probe(true);
	err = fs_vm_module_unload();
	fs_vm_tap(kf && err && fs_vm_module_present(),
		  "rmmod refused while a kfunc program is loaded (%s)",
		  strerror(-err));
	kfunc_probe__destroy(kf);
	err = fs_vm_module_unload_wait(5000);
	fs_vm_tap(!err && !fs_vm_module_present(),
		  "rmmod succeeds once the program is freed%s%s",
		  err ? ": " : "", err ? strerror(-err) : "");

	bp = fs_vm_unload_probe(false);
	fs_vm_tap(bp, "pure-BPF path loads without the module (weak kfunc left unresolved)");
	if (!bp || fs_vm_traffic_start(&bt, bp->progs.fs_probe_xdp, 0xb0)) {
		kfunc_probe__destroy(bp);
		return;
	}
	for (i = 0; i < FS_VM_CYCLES; i++)
		fs_vm_cycle(ko, &c);
	fs_vm_traffic_stop(&bt);

	fs_vm_tap(c.loaded == FS_VM_CYCLES, "%d cycles: insmod succeeded %d times",
		  FS_VM_CYCLES, c.loaded);
	fs_vm_tap(c.ran == FS_VM_CYCLES, "%d cycles: a kfunc program loaded and ran traffic without error %d times",
		  FS_VM_CYCLES, c.ran);
	fs_vm_tap(c.refused == FS_VM_CYCLES, "%d cycles: rmmod refused while it ran %d times (%s)",
		  FS_VM_CYCLES, c.refused, strerror(c.refuse_errno));
	fs_vm_tap(c.unloaded == FS_VM_CYCLES, "%d cycles: rmmod succeeded after it was freed %d times",
		  FS_VM_CYCLES, c.unloaded);
	fs_vm_tap(atomic_load(&bt.runs) > 0 && !atomic_load(&bt.errors),
		  "pure-BPF traffic ran through all cycles: %lu runs, %lu errors",
		  atomic_load(&bt.runs), atomic_load(&bt.errors));
	kfunc_probe__destroy(bp);
}
