// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* egress.c - the transmit frontend's load, pins and link (egress.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "log.h"
#include "egress.h"
#include "tp_frontend.h"
#include "datapath_setup.h"
#include "egress.skel.h"	/* after egress.h: needs params.h's types */

enum egress_pin { EP_CTL, EP_CMS, EP_HLL, EP_HOT, EP_STATS, EP_REPORTS,
		  EP_BARRIER, EP_IFACES, EP_MAX };

static const char *const pin_names[EP_MAX] = {
	"ctl", "cms", "hll", "hot", "stats", "reports", "barrier", "ifaces",
};

static struct bpf_map *pin_map(const struct egress *skel, enum egress_pin p)
{
	switch (p) {
	case EP_CTL: return skel->maps.fs_ctl;
	case EP_CMS: return skel->maps.fs_cms;
	case EP_HLL: return skel->maps.fs_hll;
	case EP_HOT: return skel->maps.fs_hot;
	case EP_STATS: return skel->maps.fs_stats;
	case EP_REPORTS: return skel->maps.fs_reports;
	case EP_BARRIER: return skel->maps.fs_barrier;
	default: return skel->maps.fs_ifaces;
	}
}

static int path_of(char *buf, size_t len, const char *dir, const char *name)
{
	return snprintf(buf, len, "%s/%s", dir, name) >= (int)len ? -ENAMETOOLONG : 0;
}

bool fsd_egress_is_pinned(const char *pin_dir)
{
	char path[PATH_MAX];

	/* ctl is pinned last (fsd_egress_pin()). */
	return snprintf(path, sizeof(path), "%s/egress/ctl", pin_dir) < (int)sizeof(path) &&
	       !access(path, F_OK);
}

int fsd_egress_load(struct fsd_egress *e, const struct fsd_options *o,
		    const struct fs_hash_secret *secret, bool adopt)
{
	struct fs_sketch_params params = o->params;
	long page = sysconf(_SC_PAGESIZE);
	char path[PATH_MAX];
	unsigned int i;
	int err, ncpus;

	memset(e, 0, sizeof(*e));
	e->link_fd = -1;
	if (snprintf(e->dir, sizeof(e->dir), "%s/egress", o->pin_dir) >= (int)sizeof(e->dir))
		return -ENAMETOOLONG;
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0)
		return ncpus ? ncpus : -EINVAL;
	e->ncpus = (unsigned int)ncpus;
	e->skel = egress__open();
	if (!e->skel)
		return -errno;
	params.secret = *secret;
	/* The pure BPF update: the module's kfuncs serve XDP only so far. */
	err = FS_DATAPATH_SETUP(e->skel, &params, false);
	if (!err)
		err = bpf_map__set_max_entries(e->skel->maps.fs_reports,
					       o->ringbuf_kib * 1024U);
	if (err) {
		fsd_err("cannot size the egress maps: %s", strerror(-err));
		return err;
	}
	for (i = 0; adopt && i < EP_MAX; i++) {
		int fd;

		err = path_of(path, sizeof(path), e->dir, pin_names[i]);
		fd = err ? -1 : bpf_obj_get(path);
		if (fd < 0) {
			err = err ? err : -errno;
			fsd_err("cannot open the pinned egress map %s: %s", path, strerror(-err));
			return err;
		}
		err = bpf_map__reuse_fd(pin_map(e->skel, i), fd);
		close(fd);
		if (err) {
			fsd_err("cannot reuse the pinned egress map %s: %s", path, strerror(-err));
			return err;
		}
	}
	err = egress__load(e->skel);
	if (err) {
		fsd_err("cannot load the egress datapath: %s (run with -v for the verifier log)",
			strerror(-err));
		return err;
	}
	e->adopted = adopt;
	e->ctl = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED,
		      bpf_map__fd(e->skel->maps.fs_ctl), 0);
	if (e->ctl == MAP_FAILED) {
		err = -errno;
		e->ctl = NULL;
		fsd_err("cannot mmap the egress fs_ctl: %s", strerror(-err));
		return err;
	}
	return 0;
}

int fsd_egress_pin(struct fsd_egress *e)
{
	char path[PATH_MAX];
	unsigned int n;
	int err;

	if (mkdir(e->dir, 0700) && errno != EEXIST) {
		err = -errno;
		fsd_err("cannot create %s: %s", e->dir, strerror(-err));
		return err;
	}
	e->dir_made = true;
	/* ctl last: its pin says the egress datapath is whole. */
	for (n = 0; n < EP_MAX; n++) {
		unsigned int i = (n + 1) % EP_MAX;

		if (e->adopted) {
			e->pinned |= 1U << i;
			continue;
		}
		err = path_of(path, sizeof(path), e->dir, pin_names[i]);
		if (!err) {
			unlink(path);	/* a killed fresh start's, stale */
			err = bpf_obj_pin(bpf_map__fd(pin_map(e->skel, i)), path) ? -errno : 0;
		}
		if (err) {
			fsd_err("cannot pin %s: %s", path, strerror(-err));
			return err;
		}
		e->pinned |= 1U << i;
	}
	return 0;
}

int fsd_egress_attach(struct fsd_egress *e)
{
	struct bpf_link *link;
	char path[PATH_MAX];
	int err = path_of(path, sizeof(path), e->dir, "link");

	if (err)
		return err;
	if (e->adopted) {
		int fd = bpf_obj_get(path);

		if (fd >= 0) {
			e->link_fd = fd;
			e->link_pinned = true;
			fsd_info("kept the pinned egress link: counting never stopped");
			return 0;
		}
	}
	unlink(path);	/* a discarded datapath's */
	link = bpf_program__attach(e->skel->progs.fs_egress);
	if (!link) {
		err = -errno;
		fsd_err("cannot attach the egress program (tp_btf/net_dev_start_xmit): %s",
			strerror(-err));
		return err;
	}
	e->link_fd = dup(bpf_link__fd(link));
	err = e->link_fd < 0 ? -errno : 0;
	if (!err && bpf_obj_pin(e->link_fd, path))
		err = -errno;
	bpf_link__destroy(link);	/* the dup and the pin hold it */
	if (err) {
		fsd_err("cannot pin the egress link at %s: %s", path, strerror(-err));
		if (e->link_fd >= 0) {
			bpf_link_detach(e->link_fd);
			close(e->link_fd);
		}
		e->link_fd = -1;
		return err;
	}
	e->link_pinned = true;
	fsd_info("counting what the interfaces send (tp_btf/net_dev_start_xmit)");
	return 0;
}

int fsd_egress_iface(struct fsd_egress *e, int ifindex, bool on)
{
	return fsd_tp_iface_set(bpf_map__fd(e->skel->maps.fs_ifaces), ifindex, on);
}

void fsd_egress_rotation_maps(const struct fsd_egress *e,
			      struct fsd_rotation_maps *m)
{
	m->ctl = e->ctl;
	m->cms_fd = bpf_map__fd(e->skel->maps.fs_cms);
	m->hll_fd = bpf_map__fd(e->skel->maps.fs_hll);
	m->hot_fd = bpf_map__fd(e->skel->maps.fs_hot);
	m->barrier_fd = bpf_map__fd(e->skel->maps.fs_barrier);
	m->barrier_inner_fd = bpf_map__fd(e->skel->maps.fs_barrier_inner);
	m->ncpus = e->ncpus;
	m->adopted = e->adopted;
}

int fsd_egress_prog_stats(struct fsd_egress *e, __u64 *recursion_misses)
{
	return fsd_tp_recursion_misses(e->link_fd, recursion_misses);
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
	for (i = 0; i < EP_MAX; i++)
		if (!path_of(path, sizeof(path), dir, pin_names[i]))
			unlink(path);
	rmdir(dir);
}

void fsd_egress_close(struct fsd_egress *e, bool keep)
{
	if (e->link_fd >= 0) {
		if (!keep)
			bpf_link_detach(e->link_fd);
		close(e->link_fd);
	}
	e->link_fd = -1;
	if (!keep && e->dir_made)
		remove_all(e->dir);
	e->pinned = 0;
	if (e->ctl)
		munmap(e->ctl, (size_t)sysconf(_SC_PAGESIZE));
	e->ctl = NULL;
	egress__destroy(e->skel);
	e->skel = NULL;
}

int fsd_egress_remove_pins(const char *pin_dir)
{
	char dir[PATH_MAX];

	if (snprintf(dir, sizeof(dir), "%s/egress", pin_dir) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	if (access(dir, F_OK))
		return 0;
	remove_all(dir);
	fsd_info("removed the egress datapath under %s", dir);
	return 1;
}
