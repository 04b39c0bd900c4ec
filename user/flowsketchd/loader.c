// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* loader.c - skeleton load, pins, XDP attach and their undoing (loader.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "log.h"
#include "loader.h"
#include "blocklist.h"
#include "datapath_setup.h"
#include "flowsketch.skel.h"	/* after loader.h: needs params.h's types */

/* Set when the flowsketch kernel module (kmod/) is loaded. */
#define FSD_KFUNC_BTF "/sys/kernel/btf/flowsketch"

/* Pin names under the pin directory (maps.h). */
enum fsd_pin {
	PIN_PARAMS,
	PIN_CTL,
	PIN_CMS,
	PIN_HLL,
	PIN_HOT,
	PIN_STATS,
	PIN_REPORTS,
	PIN_BARRIER,
	PIN_KFUNC_ARGS,
	PIN_BLOOM,
	PIN_BLOCK4,
	PIN_BLOCK6,
	PIN_BLOCK_HITS,
	PIN_BLOCK_EXACT,
	PIN_BLOCK_STATS,
	PIN_PROG,
	PIN_MAX,
};

static const char *const pin_names[PIN_MAX] = {
	[PIN_PARAMS] = "params",
	[PIN_CTL] = "ctl",
	[PIN_CMS] = "cms",
	[PIN_HLL] = "hll",
	[PIN_HOT] = "hot",
	[PIN_STATS] = "stats",
	[PIN_REPORTS] = "reports",
	[PIN_BARRIER] = "barrier",
	[PIN_KFUNC_ARGS] = "kfunc_args",
	[PIN_BLOOM] = "bloom",
	[PIN_BLOCK4] = "block4",
	[PIN_BLOCK6] = "block6",
	[PIN_BLOCK_HITS] = "hits",
	[PIN_BLOCK_EXACT] = "bexact",
	[PIN_BLOCK_STATS] = "bstats",
	[PIN_PROG] = "prog_xdp",
};

static struct bpf_map *pin_map(const struct flowsketch *skel, enum fsd_pin p)
{
	switch (p) {
	case PIN_PARAMS: return skel->maps.rodata;
	case PIN_CTL: return skel->maps.fs_ctl;
	case PIN_CMS: return skel->maps.fs_cms;
	case PIN_HLL: return skel->maps.fs_hll;
	case PIN_HOT: return skel->maps.fs_hot;
	case PIN_STATS: return skel->maps.fs_stats;
	case PIN_REPORTS: return skel->maps.fs_reports;
	case PIN_BARRIER: return skel->maps.fs_barrier;
	case PIN_KFUNC_ARGS: return skel->maps.fs_kfunc_args;
	case PIN_BLOOM: return skel->maps.fs_bloom;
	case PIN_BLOCK4: return skel->maps.fs_block4;
	case PIN_BLOCK6: return skel->maps.fs_block6;
	case PIN_BLOCK_HITS: return skel->maps.fs_block_hits;
	case PIN_BLOCK_EXACT: return skel->maps.fs_block_exact;
	case PIN_BLOCK_STATS: return skel->maps.fs_block_stats;
	default: return NULL;
	}
}

static int open_and_load(struct fsd_loader *l, const struct fsd_options *o,
			 const struct fs_hash_secret *secret, bool kfunc)
{
	const struct fs_sketch_params *p = &o->params;
	struct fs_sketch_params params;
	struct flowsketch *skel;
	int err;

	skel = flowsketch__open();
	if (!skel) {
		err = -errno;
		fsd_err("cannot open the BPF object: %s", strerror(-err));
		return err;
	}
	params = *p;
	params.secret = *secret;
	err = FS_DATAPATH_SETUP(skel, &params, kfunc);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.fs_reports,
					       o->ringbuf_kib * 1024U);
	/* The blocklist's maps, for --blocklist-max entries (blocklist.h);
	 * the tries allocate per entry, the rest is allocated here. */
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.fs_block4, o->blocklist_max);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.fs_block6, o->blocklist_max);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.fs_block_hits,
					       o->blocklist_max + 1);
	if (!err)	/* two filters of the largest size */
		err = bpf_map__set_max_entries(skel->maps.fs_bloom,
					       2U << fsd_blocklist_max_log2(o->blocklist_max));
	if (err) {
		fsd_err("cannot size the BPF maps: %s", strerror(-err));
		goto err_destroy;
	}
	err = flowsketch__load(skel);
	if (err) {
		fsd_err("cannot load the %s datapath: %s (run with -v for the verifier log)",
			kfunc ? "kfunc" : "BPF", strerror(-err));
		goto err_destroy;
	}
	l->skel = skel;
	l->kfunc = kfunc;
	return 0;

err_destroy:
	flowsketch__destroy(skel);
	return err;
}

int fsd_loader_load(struct fsd_loader *l, const struct fsd_options *o,
		    const struct fs_hash_secret *secret)
{
	long page = sysconf(_SC_PAGESIZE);
	bool kfunc = !access(FSD_KFUNC_BTF, F_OK);
	int err, ncpus;

	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0) {
		fsd_err("cannot count the possible CPUs: %s", strerror(-ncpus));
		return ncpus ? ncpus : -EINVAL;
	}
	l->ncpus = (unsigned int)ncpus;
	err = open_and_load(l, o, secret, kfunc);
	if (err && kfunc) {
		fsd_warn("the kfunc datapath did not load; falling back to pure BPF");
		err = open_and_load(l, o, secret, false);
	}
	if (err)
		return err;
	fsd_info("loaded the %s datapath", l->kfunc ? "kfunc" : "BPF");

	/* The datapath reads fs_ctl every packet; the daemon writes it
	 * through this shared mapping, no syscall per rotation. */
	l->ctl = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED,
		      bpf_map__fd(l->skel->maps.fs_ctl), 0);
	if (l->ctl == MAP_FAILED) {
		err = -errno;
		l->ctl = NULL;
		fsd_err("cannot mmap fs_ctl: %s", strerror(-err));
		return err;
	}
	return 0;
}

static int pin_path(char *buf, size_t len, const char *dir, enum fsd_pin p)
{
	if (snprintf(buf, len, "%s/%s", dir, pin_names[p]) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

int fsd_loader_pin(struct fsd_loader *l, const char *pin_dir)
{
	char path[PATH_MAX];
	unsigned int i;
	int err;

	l->pin_dir = pin_dir;
	for (i = 0; i < PIN_MAX; i++) {
		err = pin_path(path, sizeof(path), pin_dir, i);
		if (err) {
			fsd_err("pin path %s/%s is too long", pin_dir, pin_names[i]);
			return err;
		}
		/* The directory lock says no daemon owns what is there:
		 * a pin left by one that was killed is stale. */
		if (!access(path, F_OK)) {
			fsd_warn("removing stale pin %s", path);
			unlink(path);
		}
		if (i == PIN_PROG)
			err = bpf_obj_pin(bpf_program__fd(l->skel->progs.fs_xdp),
					  path);
		else
			err = bpf_obj_pin(bpf_map__fd(pin_map(l->skel, i)), path);
		if (err) {
			err = -errno;
			fsd_err("cannot pin %s: %s", path, strerror(-err));
			return err;
		}
		l->pinned |= 1U << i;
	}
	fsd_debug("pinned maps and program under %s", pin_dir);
	return 0;
}

static const char *xdp_mode(const struct fsd_loader *l)
{
	return l->xdp_generic ? "generic" : "native";
}

/* Attach to a->ifindex and record the outcome in a; 0 or -errno. */
static int attach_one(struct fsd_loader *l, struct fsd_attachment *a)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts,
		    .flags = l->xdp_generic ? XDP_FLAGS_SKB_MODE :
					      XDP_FLAGS_DRV_MODE);
	const char *name = a->iface->name;
	int fd, err;

	fd = bpf_link_create(bpf_program__fd(l->skel->progs.fs_xdp),
			     a->ifindex, BPF_XDP, &opts);
	if (fd < 0) {
		err = -errno;
		if (err == -EBUSY || err == -EEXIST)
			fsd_err("%s already has an XDP program; detach it first (ip link set dev %s xdp off)",
				name, name);
		else if (!l->xdp_generic)
			fsd_err("cannot attach native XDP to %s (%s); if its driver lacks XDP support, use --xdp-mode generic",
				name, strerror(-err));
		else
			fsd_err("cannot attach generic XDP to %s: %s",
				name, strerror(-err));
		a->state = FSD_IFACE_FAILED;
		a->err = err;
		return err;
	}
	a->link_fd = fd;
	a->state = FSD_IFACE_ATTACHED;
	a->err = 0;
	return 0;
}

int fsd_loader_attach(struct fsd_loader *l, const struct fsd_options *o)
{
	unsigned int i;
	int err;

	l->xdp_generic = o->xdp_generic;
	for (i = 0; i < o->n_ifaces; i++) {
		struct fsd_attachment *a = &l->ifaces[i];

		a->iface = &o->ifaces[i];
		a->ifindex = o->ifaces[i].ifindex;
		a->link_fd = -1;
		a->reattached = 0;
		l->n_ifaces = i + 1;
		err = attach_one(l, a);
		if (err)
			return err;
		fsd_info("attached to %s (%s XDP)", a->iface->name, xdp_mode(l));
	}
	return 0;
}

void fsd_loader_gone(struct fsd_loader *l, struct fsd_attachment *a,
		     const char *why)
{
	fsd_info("%s (ifindex %d) %s", a->iface->name, a->ifindex, why);
	/* The kernel has already detached a deleted device's link; closing
	 * frees it.  A renamed or moved device still runs the program, and
	 * closing detaches it: it is not the interface the operator named. */
	if (a->link_fd >= 0)
		close(a->link_fd);
	a->link_fd = -1;
	a->ifindex = 0;
	a->state = FSD_IFACE_GONE;
	a->err = 0;
}

int fsd_loader_reattach(struct fsd_loader *l, struct fsd_attachment *a,
			int ifindex)
{
	int err;

	if (a->link_fd >= 0)
		fsd_loader_gone(l, a, "was replaced");
	a->ifindex = ifindex;
	err = attach_one(l, a);
	if (err) {
		fsd_warn("%s is back (ifindex %d) but not counted until it is recreated",
			 a->iface->name, ifindex);
		return err;
	}
	a->reattached++;
	fsd_info("%s is back (ifindex %d): re-attached (%s XDP)",
		 a->iface->name, ifindex, xdp_mode(l));
	return 0;
}

bool fsd_loader_link_alive(const struct fsd_attachment *a)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);

	if (a->link_fd < 0)
		return false;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(a->link_fd, &info, &len))
		return false;
	/* A defunct XDP link (its device unregistered) reports ifindex 0. */
	return info.xdp.ifindex == (__u32)a->ifindex;
}

void fsd_loader_close(struct fsd_loader *l)
{
	char path[PATH_MAX];
	unsigned int i;

	/* Closing a link fd detaches its program. */
	for (i = 0; i < l->n_ifaces; i++) {
		if (l->ifaces[i].link_fd < 0)
			continue;
		close(l->ifaces[i].link_fd);
		l->ifaces[i].link_fd = -1;
		fsd_info("detached from %s", l->ifaces[i].iface->name);
	}
	l->n_ifaces = 0;
	for (i = 0; i < PIN_MAX; i++) {
		if (!(l->pinned & (1U << i)))
			continue;
		if (!pin_path(path, sizeof(path), l->pin_dir, i) && unlink(path))
			fsd_warn("cannot unpin %s: %s", path, strerror(errno));
	}
	l->pinned = 0;
	if (l->ctl)
		munmap(l->ctl, (size_t)sysconf(_SC_PAGESIZE));
	l->ctl = NULL;
	flowsketch__destroy(l->skel);
	l->skel = NULL;
}
