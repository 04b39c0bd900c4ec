// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* object.c - a frontend's BPF object, its load and its pins (object.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/crashpoint.h"
#include "base/log.h"
#include "datapath_setup.h"
#include "object.h"
#include "windows/rotation.h"

int fsd_object_path(char *buf, size_t len, const char *dir, const char *name)
{
	return snprintf(buf, len, "%s/%s", dir, name) >= (int)len ? -ENAMETOOLONG : 0;
}

bool fsd_object_is_pinned(const struct fsd_object_ops *ops, const char *dir)
{
	char path[PATH_MAX];

	return !fsd_object_path(path, sizeof(path), dir, ops->pins[0].name) &&
	       !access(path, F_OK);
}

int fsd_object_map_fd(const struct fsd_object *t, const char *name)
{
	struct bpf_map *m = t->obj ? bpf_object__find_map_by_name(t->obj, name) : NULL;

	return m ? bpf_map__fd(m) : -1;
}

/*
 * Read from the last counter to the first, fs_hot last and, within its
 * line, sketched before rx: the datapath counts a frame in rx before any
 * other counter, so on a live link this order keeps rx >= the rest in one
 * answer instead of showing more frames sketched than seen.
 */
int fsd_object_read_stats(const struct fsd_object *t, __u64 stats[FS_STAT_MAX])
{
	int fd = fsd_object_map_fd(t, "fs_stats");
	int hot_fd = fsd_object_map_fd(t, "fs_hot");
	unsigned int cpu, ncpus = t->ncpus;
	struct fs_hot_line *hot = calloc(ncpus, sizeof(*hot));
	__u64 *v = calloc(ncpus, sizeof(*v));
	__u32 k, zero = 0;
	int err = 0;

	if (!v || !hot) {
		err = -ENOMEM;
		goto out;
	}
	for (k = FS_STAT_MAX; k-- > 0;) {
		stats[k] = 0;
		if (k == FS_STAT_RX || k == FS_STAT_SKETCHED)
			continue;	/* fs_hot's */
		if (bpf_map_lookup_elem(fd, &k, v)) {
			err = -errno;
			goto out;
		}
		for (cpu = 0; cpu < ncpus; cpu++)
			stats[k] += v[cpu];
	}
	if (bpf_map_lookup_elem(hot_fd, &zero, hot)) {
		err = -errno;
		goto out;
	}
	for (cpu = 0; cpu < ncpus; cpu++) {
		stats[FS_STAT_SKETCHED] += hot[cpu].sketched;
		stats[FS_STAT_RX] += hot[cpu].rx;
	}
out:
	free(v);
	free(hot);
	return err;
}

/* A pin an earlier release did not make, missing: made fresh. */
static bool pin_missing_new(const struct fsd_pin *p, const char *path)
{
	return (p->flags & FSD_PIN_NEW) && access(path, F_OK);
}

/* Before load: every pinned map of the object is the object's. */
static int reuse_pins(struct fsd_object *t)
{
	const struct fsd_object_ops *ops = t->ops;
	char path[PATH_MAX];
	unsigned int i;
	int fd, err;

	for (i = 0; i < ops->n_pins; i++) {
		const struct fsd_pin *p = &ops->pins[i];

		if (p->flags & FSD_PIN_FRESH)
			continue;
		err = fsd_object_path(path, sizeof(path), t->dir, p->name);
		if (!err && pin_missing_new(p, path))
			continue;
		fd = err ? -1 : bpf_obj_get(path);
		if (fd < 0) {
			err = err ? err : -errno;
			return fsd_fail(err, "cannot open the pinned %smap %s", ops->label, path);
		}
		err = bpf_map__reuse_fd(bpf_object__find_map_by_name(t->obj, p->map), fd);
		close(fd);	/* reuse_fd holds its own */
		if (err)
			return fsd_fail(err, "cannot reuse the pinned %smap %s", ops->label, path);
	}
	return 0;
}

/* Open, set up and load with the kfunc update or without it. */
static int open_and_load(struct fsd_object *t, const struct fsd_options *o,
			 const struct fs_hash_secret *secret, bool kfunc, bool adopt)
{
	const struct fsd_object_ops *ops = t->ops;
	struct fs_sketch_params params = o->params;
	int err;

	params.secret = *secret;
	t->skel = ops->open(&params, o, kfunc, &t->obj, &t->prog);
	memset(&params, 0, sizeof(params));
	if (!t->skel)
		return errno ? -errno : -EINVAL;
	/* fs_hll at one element: this datapath never writes it.  Adopting,
	 * the pinned map replaces it at its own size (sketch_kind.h,
	 * "Legacy maps"). */
	err = fs_datapath_fresh_legacy(t->obj);
	if (err)
		fsd_err("cannot size the %slegacy maps: %s", ops->label, strerror(-err));
	if (!err && adopt)
		err = reuse_pins(t);
	if (!err) {
		err = ops->load(t->skel);
		if (err)
			fsd_err("cannot load the %s%s datapath: %s (run with -v for the verifier log)",
				ops->label, kfunc ? "kfunc" : "BPF", strerror(-err));
	}
	if (err) {
		ops->destroy(t->skel);
		t->skel = NULL;
		t->obj = NULL;
		return err;
	}
	t->kfunc = kfunc;
	return 0;
}

int fsd_object_load(struct fsd_object *t, const struct fsd_object_ops *ops,
		    const char *dir, const struct fsd_options *o,
		    const struct fs_hash_secret *secret, bool adopt)
{
	bool kfunc = !access(FSD_KFUNC_BTF, F_OK);
	int err, ncpus;

	memset(t, 0, sizeof(*t));
	t->ops = ops;
	if (snprintf(t->dir, sizeof(t->dir), "%s", dir) >= (int)sizeof(t->dir))
		return -ENAMETOOLONG;
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0) {
		fsd_err("cannot count the possible CPUs: %s", strerror(-ncpus));
		return ncpus ? ncpus : -EINVAL;
	}
	t->ncpus = (unsigned int)ncpus;
	err = open_and_load(t, o, secret, kfunc, adopt);
	if (err && kfunc) {
		fsd_warn("the %skfunc datapath did not load; falling back to pure BPF",
			 ops->label);
		err = open_and_load(t, o, secret, false, adopt);
	}
	if (err)
		return err;
	t->adopted = adopt;
	/* The datapath reads fs_ctl every packet; the daemon writes it
	 * through this shared mapping, no syscall per rotation. */
	t->ctl = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
		      MAP_SHARED, fsd_object_map_fd(t, "fs_ctl"), 0);
	if (t->ctl == MAP_FAILED) {
		err = -errno;
		t->ctl = NULL;
		fsd_err(*ops->label ? "cannot mmap the %sfs_ctl: %s" :
				      "cannot mmap %sfs_ctl: %s",
			ops->label, strerror(-err));
		return err;
	}
	return 0;
}

/* Pin fd at path: through a temporary name and a rename over path, so
 * that path always names the old object or the new one, never none. */
static int pin_replacing(int fd, const char *path)
{
	char tmp[PATH_MAX];

	/* bpffs names have no '.'. */
	if (snprintf(tmp, sizeof(tmp), "%s_new", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	unlink(tmp);
	if (bpf_obj_pin(fd, tmp))
		return -errno;
	fsd_crash_point("replacing");
	if (rename(tmp, path)) {
		int err = -errno;

		unlink(tmp);
		return err;
	}
	return 0;
}

/* Pin pins[i] at path (a fresh start's stale pin goes first). */
static int pin_one(struct fsd_object *t, const struct fsd_pin *p, const char *path)
{
	int fd = p->map ? fsd_object_map_fd(t, p->map) : bpf_program__fd(t->prog);

	if (t->adopted && t->ops->rename_pins)
		return pin_replacing(fd, path);
	/* The directory lock says no daemon owns what is there: a pin left
	 * by one that was killed, or by the datapath --replace discards, is
	 * stale. */
	if (!access(path, F_OK)) {
		if (t->ops->rename_pins && !t->replacing)
			fsd_warn("removing stale pin %s", path);
		unlink(path);
	}
	return bpf_obj_pin(fd, path) ? -errno : 0;
}

int fsd_object_pin(struct fsd_object *t)
{
	const struct fsd_object_ops *ops = t->ops;
	char path[PATH_MAX];
	unsigned int n;
	int err;

	for (n = 0; n < ops->n_pins; n++) {
		/* 1 .. n_pins - 1, then 0: its pin says the datapath is whole. */
		unsigned int i = (n + 1) % ops->n_pins;
		const struct fsd_pin *p = &ops->pins[i];

		err = fsd_object_path(path, sizeof(path), t->dir, p->name);
		if (err) {
			fsd_err("pin path %s/%s is too long", t->dir, p->name);
			return err;
		}
		/* Adopted maps are the pinned ones already (but for fresh
		 * ones of pins an earlier release did not make). */
		if (t->adopted && !(p->flags & FSD_PIN_FRESH) &&
		    !pin_missing_new(p, path)) {
			t->pinned |= 1U << i;
			continue;
		}
		err = pin_one(t, p, path);
		if (err)
			return fsd_fail(err, "cannot pin %s", path);
		t->pinned |= 1U << i;
	}
	return 0;
}

void fsd_object_unpin(struct fsd_object *t)
{
	char path[PATH_MAX];
	unsigned int i;

	for (i = 0; t->ops && i < t->ops->n_pins; i++) {
		if (!(t->pinned & (1U << i)))
			continue;
		if (!fsd_object_path(path, sizeof(path), t->dir, t->ops->pins[i].name) &&
		    unlink(path))
			fsd_warn("cannot unpin %s: %s", path, strerror(errno));
	}
	t->pinned = 0;
}

void fsd_object_close(struct fsd_object *t)
{
	if (t->ctl)
		munmap(t->ctl, (size_t)sysconf(_SC_PAGESIZE));
	t->ctl = NULL;
	if (t->skel)
		t->ops->destroy(t->skel);
	t->skel = NULL;
	t->obj = NULL;
	t->prog = NULL;
}

int fsd_object_remove_pins(const struct fsd_object_ops *ops, const char *dir)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	unsigned int i;
	int n = 0, err = 0;

	for (i = 0; i < ops->n_pins; i++) {
		if (fsd_object_path(path, sizeof(path), dir, ops->pins[i].name))
			continue;
		/* pin_replacing()'s name, left by a daemon killed midway. */
		if (snprintf(tmp, sizeof(tmp), "%s_new", path) < (int)sizeof(tmp))
			unlink(tmp);
		if (access(path, F_OK))
			continue;
		if (unlink(path)) {
			err = fsd_fail(-errno, "cannot remove %s", path);
			continue;
		}
		n++;
	}
	return err ? err : n;
}

__u64 fsd_object_sketch_bytes_per_cpu(const struct fsd_object *t)
{
	__u64 bytes = 0;
	int k;

	for (k = 0; k < FS_NDPMAPS; k++) {
		const struct bpf_map *m = t->obj ?
			bpf_object__find_map_by_name(t->obj, fs_dp_maps[k].map) : NULL;

		if (m)
			bytes += (__u64)bpf_map__max_entries(m) * bpf_map__value_size(m);
	}
	return bytes;
}

void fsd_object_rotation_maps(const struct fsd_object *t,
			      struct fsd_rotation_maps *m)
{
	int k;

	m->ctl = t->ctl;
	for (k = 0; k < FS_NDPMAPS; k++)
		m->sketch_fd[k] = fsd_object_map_fd(t, fs_dp_maps[k].map);
	m->hot_fd = fsd_object_map_fd(t, "fs_hot");
	m->barrier_fd = fsd_object_map_fd(t, "fs_barrier");
	m->barrier_inner_fd = fsd_object_map_fd(t, "fs_barrier_inner");
	m->ncpus = t->ncpus;
	m->adopted = t->adopted;
}
