// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* tp_object.c - a tracepoint frontend's object, pins and link (tp_object.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "log.h"
#include "tp_object.h"
#include "loader.h"

/* The maps pinned, by their names in the object and under the pin
 * directory; ctl is pinned last (it says the datapath is whole), and
 * ifaces, ifslot and ifcount only by the kinds that count interfaces. */
enum tp_pin { TP_CTL, TP_CMS, TP_HLL, TP_HOT, TP_STATS, TP_REPORTS,
	      TP_BARRIER, TP_IFACES, TP_IFSLOT, TP_IFCOUNT, TP_MAX };

static const struct {
	const char *pin, *map;
} pins[TP_MAX] = {
	[TP_CTL] = { "ctl", "fs_ctl" },
	[TP_CMS] = { "cms", "fs_cms" },
	[TP_HLL] = { "hll", "fs_hll" },
	[TP_HOT] = { "hot", "fs_hot" },
	[TP_STATS] = { "stats", "fs_stats" },
	[TP_REPORTS] = { "reports", "fs_reports" },
	[TP_BARRIER] = { "barrier", "fs_barrier" },
	[TP_IFACES] = { "ifaces", "fs_ifaces" },
	[TP_IFSLOT] = { "ifslot", "fs_ifslot" },
	[TP_IFCOUNT] = { "ifcount", "fs_ifcount" },
};

static bool pin_used(const struct fsd_tp_kind *k, enum tp_pin p)
{
	return (p != TP_IFACES && p != TP_IFSLOT && p != TP_IFCOUNT) || k->ifaces;
}

/* The per-interface counts came after the egress frontend: an earlier
 * release's is adopted with fresh ones, pinned beside its maps. */
static bool pin_is_new(enum tp_pin p)
{
	return p == TP_IFSLOT || p == TP_IFCOUNT;
}

static struct bpf_map *pin_map(const struct fsd_tp_object *t, enum tp_pin p)
{
	return bpf_object__find_map_by_name(t->obj, pins[p].map);
}

static int path_of(char *buf, size_t len, const char *dir, const char *name)
{
	return snprintf(buf, len, "%s/%s", dir, name) >= (int)len ? -ENAMETOOLONG : 0;
}

bool fsd_tp_is_pinned(const struct fsd_tp_kind *k, const char *pin_dir)
{
	char path[PATH_MAX];

	return snprintf(path, sizeof(path), "%s/%s/ctl", pin_dir, k->name) < (int)sizeof(path) &&
	       !access(path, F_OK);
}

int fsd_tp_map_fd(const struct fsd_tp_object *t, const char *name)
{
	struct bpf_map *m = t->obj ? bpf_object__find_map_by_name(t->obj, name) : NULL;

	return m ? bpf_map__fd(m) : -1;
}

/* Before load: every pinned map of the kind is the object's. */
static int reuse_pins(struct fsd_tp_object *t)
{
	char path[PATH_MAX];
	unsigned int i;
	int fd, err;

	for (i = 0; i < TP_MAX; i++) {
		if (!pin_used(t->kind, i))
			continue;
		err = path_of(path, sizeof(path), t->dir, pins[i].pin);
		if (!err && pin_is_new(i) && access(path, F_OK))
			continue;
		fd = err ? -1 : bpf_obj_get(path);
		if (fd < 0) {
			err = err ? err : -errno;
			fsd_err("cannot open the pinned %s map %s: %s", t->kind->name,
				path, strerror(-err));
			return err;
		}
		err = bpf_map__reuse_fd(pin_map(t, i), fd);
		close(fd);
		if (err) {
			fsd_err("cannot reuse the pinned %s map %s: %s", t->kind->name,
				path, strerror(-err));
			return err;
		}
	}
	return 0;
}

/* Open, set up and load with the kfunc update or without it. */
static int open_and_load(struct fsd_tp_object *t, const struct fsd_options *o,
			 const struct fs_hash_secret *secret, bool kfunc, bool adopt)
{
	const struct fsd_tp_kind *k = t->kind;
	struct fs_sketch_params params = o->params;
	int err;

	params.secret = *secret;
	t->skel = k->open(&params, o, kfunc, &t->obj, &t->prog);
	memset(&params, 0, sizeof(params));
	if (!t->skel) {
		err = -errno;
		fsd_err("cannot open or size the %s datapath: %s", k->name, strerror(-err));
		return err;
	}
	err = adopt ? reuse_pins(t) : 0;
	if (!err) {
		err = k->load(t->skel);
		if (err)
			fsd_err("cannot load the %s %s datapath: %s (run with -v for the verifier log)",
				k->name, kfunc ? "kfunc" : "BPF", strerror(-err));
	}
	if (err) {
		k->destroy(t->skel);
		t->skel = NULL;
		t->obj = NULL;
		return err;
	}
	t->kfunc = kfunc;
	return 0;
}

int fsd_tp_load(struct fsd_tp_object *t, const struct fsd_tp_kind *k,
		const struct fsd_options *o, const struct fs_hash_secret *secret,
		bool adopt)
{
	long page = sysconf(_SC_PAGESIZE);
	bool kfunc = !access(FSD_KFUNC_BTF, F_OK);
	int err, ncpus;

	memset(t, 0, sizeof(*t));
	t->kind = k;
	t->link_fd = -1;
	if (snprintf(t->dir, sizeof(t->dir), "%s/%s", o->pin_dir, k->name) >= (int)sizeof(t->dir))
		return -ENAMETOOLONG;
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0)
		return ncpus ? ncpus : -EINVAL;
	t->ncpus = (unsigned int)ncpus;
	err = open_and_load(t, o, secret, kfunc, adopt);
	if (err && kfunc) {
		fsd_warn("the %s kfunc datapath did not load; falling back to pure BPF",
			 k->name);
		err = open_and_load(t, o, secret, false, adopt);
	}
	if (err)
		return err;
	t->adopted = adopt;
	t->ctl = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED,
		      fsd_tp_map_fd(t, "fs_ctl"), 0);
	if (t->ctl == MAP_FAILED) {
		err = -errno;
		t->ctl = NULL;
		fsd_err("cannot mmap the %s fs_ctl: %s", k->name, strerror(-err));
		return err;
	}
	return 0;
}

int fsd_tp_pin(struct fsd_tp_object *t)
{
	char path[PATH_MAX];
	unsigned int n;
	int err;

	if (mkdir(t->dir, 0700) && errno != EEXIST) {
		err = -errno;
		fsd_err("cannot create %s: %s", t->dir, strerror(-err));
		return err;
	}
	t->dir_made = true;
	/* ctl last: its pin says the datapath is whole. */
	for (n = 0; n < TP_MAX; n++) {
		unsigned int i = (n + 1) % TP_MAX;

		if (!pin_used(t->kind, i))
			continue;
		err = path_of(path, sizeof(path), t->dir, pins[i].pin);
		if (t->adopted && !(pin_is_new(i) && !err && access(path, F_OK))) {
			t->pinned |= 1U << i;
			continue;
		}
		if (!err) {
			unlink(path);	/* a killed fresh start's, stale */
			err = bpf_obj_pin(bpf_map__fd(pin_map(t, i)), path) ? -errno : 0;
		}
		if (err) {
			fsd_err("cannot pin %s: %s", path, strerror(-err));
			return err;
		}
		t->pinned |= 1U << i;
	}
	return 0;
}

int fsd_tp_attach(struct fsd_tp_object *t)
{
	struct bpf_link *link;
	char path[PATH_MAX];
	int err = path_of(path, sizeof(path), t->dir, "link");

	if (err)
		return err;
	if (t->adopted) {
		int fd = bpf_obj_get(path);

		if (fd >= 0) {
			t->link_fd = fd;
			fsd_info("kept the pinned %s link: counting never stopped",
				 t->kind->name);
			return 0;
		}
	}
	unlink(path);	/* a discarded datapath's */
	link = bpf_program__attach(t->prog);
	if (!link) {
		err = -errno;
		fsd_err("cannot attach the %s program (%s): %s", t->kind->name,
			t->kind->hook, strerror(-err));
		return err;
	}
	t->link_fd = dup(bpf_link__fd(link));
	err = t->link_fd < 0 ? -errno : 0;
	if (!err && bpf_obj_pin(t->link_fd, path))
		err = -errno;
	bpf_link__destroy(link);	/* the dup and the pin hold it */
	if (err) {
		fsd_err("cannot pin the %s link at %s: %s", t->kind->name, path,
			strerror(-err));
		if (t->link_fd >= 0) {
			bpf_link_detach(t->link_fd);
			close(t->link_fd);
		}
		t->link_fd = -1;
		return err;
	}
	fsd_info("counting %s (%s)", t->kind->direction, t->kind->hook);
	return 0;
}

void fsd_tp_rotation_maps(const struct fsd_tp_object *t, struct fsd_rotation_maps *m)
{
	m->ctl = t->ctl;
	m->cms_fd = fsd_tp_map_fd(t, "fs_cms");
	m->hll_fd = fsd_tp_map_fd(t, "fs_hll");
	m->hot_fd = fsd_tp_map_fd(t, "fs_hot");
	m->barrier_fd = fsd_tp_map_fd(t, "fs_barrier");
	m->barrier_inner_fd = fsd_tp_map_fd(t, "fs_barrier_inner");
	m->ncpus = t->ncpus;
	m->adopted = t->adopted;
}

static void remove_all(const char *dir)
{
	char path[PATH_MAX];
	unsigned int i;
	int fd;

	if (!path_of(path, sizeof(path), dir, "link")) {
		fd = bpf_obj_get(path);
		if (fd >= 0) {
			bpf_link_detach(fd);
			close(fd);
		}
		unlink(path);
	}
	for (i = 0; i < TP_MAX; i++)
		if (!path_of(path, sizeof(path), dir, pins[i].pin))
			unlink(path);
	rmdir(dir);
}

void fsd_tp_close(struct fsd_tp_object *t, bool keep)
{
	if (t->link_fd >= 0) {
		if (!keep)
			bpf_link_detach(t->link_fd);
		close(t->link_fd);
	}
	t->link_fd = -1;
	if (!keep && t->dir_made)
		remove_all(t->dir);
	t->pinned = 0;
	if (t->ctl)
		munmap(t->ctl, (size_t)sysconf(_SC_PAGESIZE));
	t->ctl = NULL;
	if (t->skel)
		t->kind->destroy(t->skel);
	t->skel = NULL;
	t->obj = NULL;
}

int fsd_tp_remove_pins(const struct fsd_tp_kind *k, const char *pin_dir)
{
	char dir[PATH_MAX];

	if (snprintf(dir, sizeof(dir), "%s/%s", pin_dir, k->name) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	if (access(dir, F_OK))
		return 0;
	remove_all(dir);
	fsd_info("removed the %s datapath under %s", k->name, dir);
	return 1;
}
