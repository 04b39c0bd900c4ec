/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * object.h - one frontend's BPF object: open and load it (adopting the
 * maps a previous run pinned), map its fs_ctl, pin it, and undo that.
 *
 * Every frontend (the XDP or tracepoint ingress of loader.h, the egress
 * and connection frontends of tp_object.h) is a skeleton built on
 * bpf/maps.bpf.h whose maps are pinned under one directory, one file per
 * map.  What differs between them is a const struct fsd_object_ops (the
 * kernel's bpf_map_ops is the model): the skeleton's open, load and
 * destroy, and its pin table.  The skeleton and its maps are the same
 * kind of thing for all; this is the code they share:
 *
 *   load    open (the ops size it for the options), adopt: reuse every
 *           pinned map (bpf_map__reuse_fd: same memory, same counts),
 *           load with the module's kfunc update, else or if that fails
 *           with the pure BPF one; mmap fs_ctl.
 *   pin     every pin of the table in order 1 .. n-1, then pins[0]: its
 *           file says the datapath is whole, so a daemon killed while
 *           pinning leaves a directory the next one starts afresh in.
 *   unpin   the pins this object made (bit i of pinned: pins[i]).
 *   remove  flowsketchd --detach: every pin name of a table.
 *
 * A pin table row: its file name under the directory, the object's map
 * (by name; NULL: the program) and flags.  FSD_PIN_NEW marks a map
 * earlier releases did not pin: their datapath is adopted with a fresh
 * one, pinned beside theirs.  FSD_PIN_FRESH marks what is never reused
 * (.rodata and the program: made afresh from the pinned secret), which an
 * adopting daemon replaces by rename when ops->rename_pins.
 */
#ifndef FLOWSKETCHD_OBJECT_H
#define FLOWSKETCHD_OBJECT_H

#include <limits.h>
#include <stdbool.h>
#include "flowsketch/hash.h"
#include "flowsketch/maps.h"
#include "flowsketch/sketch_kind.h"
#include "base/options.h"

struct bpf_object;
struct bpf_program;
struct fsd_rotation_maps;

/* Set when the flowsketch kernel module (kmod/) is loaded. */
#define FSD_KFUNC_BTF "/sys/kernel/btf/flowsketch"

#define FSD_PIN_NEW	1U	/* absent from earlier releases' pins */
#define FSD_PIN_FRESH	2U	/* never reused: .rodata, the program */

struct fsd_pin {
	const char *name;	/* under the pin directory */
	const char *map;	/* the object's map; NULL: its program */
	unsigned int flags;
};

/* Every datapath map of sketch state (sketch_kind.h, FS_DP_MAPS), in
 * its order: FSD_PIN_KINDS rows of a pin table (FS_NDPMAPS of them).  The
 * narrow cells and packed registers came after the wide ones: a datapath
 * of an earlier release has no pin of them, and one adopting it makes
 * them afresh (its programs, still attached, count on in cms and hll,
 * which the fold reads as well).  hll is pinned by every release, but a
 * fresh datapath of this one makes it one element, which nothing writes
 * and no rotation reads; an adopted one keeps its pinned size, and with
 * it its fold (sketch_kind.h, "Legacy maps"). */
#define FSD_PIN_SINCE_CMS 0
#define FSD_PIN_SINCE_CMS_NARROW FSD_PIN_NEW
#define FSD_PIN_SINCE_HLL 0
#define FSD_PIN_SINCE_HLL_PACKED FSD_PIN_NEW
#define FSD_PIN_SINCE_PREFIX FSD_PIN_NEW
#define FSD_PIN_SINCE_SPREAD FSD_PIN_NEW
#define FSD_PIN_SINCE_SAMPLE FSD_PIN_NEW
#define FSD_PIN_KIND(NAME, name, KIND)					\
	{ FS_KIND_PIN(name), FS_KIND_MAP(name), FSD_PIN_SINCE_##NAME },
#define FSD_PIN_KINDS FS_DP_MAPS(FSD_PIN_KIND)

struct fsd_object_ops {
	/* In messages: "" (the XDP or ingress datapath), "egress ". */
	const char *label;
	const struct fsd_pin *pins;	/* pins[0] is pinned last */
	unsigned int n_pins;
	/* A stale pin of a fresh start is warned about (not when the
	 * datapath --replace discards is expected); adopting, pins not
	 * reused are replaced by rename, never missing. */
	bool rename_pins;
	/* Open the skeleton and set it up for params p (FS_DATAPATH_SETUP,
	 * the kfunc update or the pure BPF one) and options o; *obj and
	 * *prog its object and program.  The skeleton, or NULL with errno
	 * set and the failure logged. */
	void *(*open)(const struct fs_sketch_params *p, const struct fsd_options *o,
		      bool kfunc, struct bpf_object **obj, struct bpf_program **prog);
	int (*load)(void *skel);
	void (*destroy)(void *skel);
};

struct fsd_object {
	const struct fsd_object_ops *ops;
	void *skel;
	struct bpf_object *obj;
	struct bpf_program *prog;
	char dir[PATH_MAX - 16];	/* where its pins are */
	bool adopted;			/* on the pinned maps */
	bool replacing;			/* --replace: stale pins are expected */
	bool kfunc;			/* the module's kfunc does the update */
	unsigned int pinned;		/* bit i: pins[i] is ours */
	struct fs_ctl *ctl;		/* fs_ctl[0], mmapped */
	unsigned int ncpus;		/* possible CPUs: per-CPU value count */
};

/* Is pins[0] of ops pinned under dir? */
bool fsd_object_is_pinned(const struct fsd_object_ops *ops, const char *dir);
/* Load t (adopt: on the maps pinned under dir) and map fs_ctl.  0 or
 * -errno, logged; t is then closed. */
int fsd_object_load(struct fsd_object *t, const struct fsd_object_ops *ops,
		    const char *dir, const struct fsd_options *o,
		    const struct fs_hash_secret *secret, bool adopt);
/* Pin what is not pinned yet under t->dir.  0 or -errno, logged. */
int fsd_object_pin(struct fsd_object *t);
/* Remove the pins t made. */
void fsd_object_unpin(struct fsd_object *t);
/* Unmap fs_ctl, destroy the skeleton.  Safe on a zeroed object. */
void fsd_object_close(struct fsd_object *t);
/* flowsketchd --detach: remove every pin of ops under dir (and a
 * half-made rename's).  The number removed, or -errno. */
int fsd_object_remove_pins(const struct fsd_object_ops *ops, const char *dir);
/* The path of pin name under dir; 0 or -ENAMETOOLONG. */
int fsd_object_path(char *buf, size_t len, const char *dir, const char *name);

/* The object's map called name (fs_cms, ...); -1 if it has none. */
int fsd_object_map_fd(const struct fsd_object *t, const char *name);
/* Every counter since load, summed over the CPUs: the cold ones from
 * fs_stats, rx and sketched from fs_hot (maps.h).  0 or -errno. */
int fsd_object_read_stats(const struct fsd_object *t, __u64 stats[FS_STAT_MAX]);
/* Per-CPU bytes of the object's sketch maps as loaded (FS_DP_MAPS): an
 * adopted map at its pinned size, a fresh legacy one at one element
 * (sketch_kind.h, "Legacy maps").  0 when not loaded. */
__u64 fsd_object_sketch_bytes_per_cpu(const struct fsd_object *t);
/* What the rotation needs. */
void fsd_object_rotation_maps(const struct fsd_object *t,
			      struct fsd_rotation_maps *m);

#endif /* FLOWSKETCHD_OBJECT_H */
