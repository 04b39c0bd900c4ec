// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* loader.c - skeleton load, pins, XDP attach and their undoing (loader.h). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/log.h"
#include "loader.h"
#include "blocklist/blocklist.h"
#include "datapath_setup.h"
#include "datapath/tp_frontend.h"
#include "flowsketch.skel.h"	/* after loader.h: needs params.h's types */

/* Pin names under the pin directory (maps.h). */
enum xdp_pin {
	PIN_PARAMS,
	PIN_CTL,
	PIN_KINDS,	/* FS_NDPMAPS of them */
	PIN_HOT = PIN_KINDS + FS_NDPMAPS,
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
	PIN_IFACES,
	PIN_IFSLOT,
	PIN_IFCOUNT,
	PIN_PROG,
	PIN_MAX,
};

/* The datapath's pins (object.h): params (the .rodata: sketch parameters
 * and secret) first, so pinned last; the program and .rodata are made
 * afresh from the pinned secret when a daemon adopts, never reused.
 * ifaces came with --ingress tracepoint, ifslot and ifcount with the
 * per-interface counts: an earlier release's datapath has none; bfilter
 * and bsummary with the blocklist's expanded keys (bloom.h), which
 * replaced the earlier release's bloom and bexact (retired_pins). */
static const struct fsd_pin xdp_pins[PIN_MAX] = {
	[PIN_PARAMS] = { "params", ".rodata", FSD_PIN_FRESH },
	[PIN_CTL] = { "ctl", "fs_ctl", 0 },
	[PIN_KINDS] = FSD_PIN_KINDS
	[PIN_HOT] = { "hot", "fs_hot", 0 },
	[PIN_STATS] = { "stats", "fs_stats", 0 },
	[PIN_REPORTS] = { "reports", "fs_reports", 0 },
	[PIN_BARRIER] = { "barrier", "fs_barrier", 0 },
	[PIN_KFUNC_ARGS] = { "kfunc_args", "fs_kfunc_args", 0 },
	[PIN_BLOOM] = { "bfilter", "fs_bfilter", FSD_PIN_NEW },
	[PIN_BLOCK4] = { "block4", "fs_block4", 0 },
	[PIN_BLOCK6] = { "block6", "fs_block6", 0 },
	[PIN_BLOCK_HITS] = { "hits", "fs_block_hits", 0 },
	[PIN_BLOCK_EXACT] = { "bsummary", "fs_bsummary", FSD_PIN_NEW },
	[PIN_BLOCK_STATS] = { "bstats", "fs_block_stats", 0 },
	[PIN_IFACES] = { "ifaces", "fs_ifaces", FSD_PIN_NEW },
	[PIN_IFSLOT] = { "ifslot", "fs_ifslot", FSD_PIN_NEW },
	[PIN_IFCOUNT] = { "ifcount", "fs_ifcount", FSD_PIN_NEW },
	[PIN_PROG] = { "prog_xdp", NULL, FSD_PIN_FRESH },
};

static int pin_path(char *buf, size_t len, const char *dir, enum xdp_pin p)
{
	return fsd_object_path(buf, len, dir, xdp_pins[p].name);
}

/*
 * Pins an earlier release made that this one does not: the blocklist's
 * filter and exact bitmaps of the layout that keyed groups on their
 * shortest length.  An adopting daemon leaves them to the old program
 * until its link has moved to the new one (a failed adoption leaves the
 * old datapath whole), then removes them; --detach removes them too.
 */
static const char *const retired_pins[] = { "bloom", "bexact" };

static void remove_retired_pins(const char *dir)
{
	char path[PATH_MAX];
	size_t i;

	for (i = 0; i < FS_ARRAY_SIZE(retired_pins); i++)
		if (!fsd_object_path(path, sizeof(path), dir, retired_pins[i]) &&
		    !unlink(path))
			fsd_info("removed the earlier release's pin %s", path);
}

static void *xdp_open(const struct fs_sketch_params *p, const struct fsd_options *o,
		      bool kfunc, struct bpf_object **obj, struct bpf_program **prog);

static int xdp_load(void *skel)
{
	return flowsketch__load(skel);
}

static void xdp_destroy(void *skel)
{
	flowsketch__destroy(skel);
}

static const struct fsd_object_ops xdp_ops = {
	.label = "",
	.pins = xdp_pins,
	.n_pins = PIN_MAX,
	.rename_pins = true,
	.open = xdp_open,
	.load = xdp_load,
	.destroy = xdp_destroy,
};

bool fsd_loader_is_pinned(const char *pin_dir)
{
	return fsd_object_is_pinned(&xdp_ops, pin_dir);
}

static int pinned_info(const char *dir, enum xdp_pin p, struct bpf_map_info *info)
{
	__u32 len = sizeof(*info);
	char path[PATH_MAX];
	int fd, err = 0;

	if (pin_path(path, sizeof(path), dir, p))
		return -ENAMETOOLONG;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	memset(info, 0, sizeof(*info));
	if (bpf_obj_get_info_by_fd(fd, info, &len))
		err = -errno;
	close(fd);
	return err;
}

/* Which ingress frontend the links pinned under pin_dir hold: the
 * tracepoint's link (FSD_TP_LINK), XDP links (link_*), or none yet. */
static enum fsd_pinned_ingress pinned_ingress(const char *pin_dir)
{
	enum fsd_pinned_ingress in = FSD_PINNED_NONE;
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d;

	if (snprintf(path, sizeof(path), "%s/%s", pin_dir, FSD_TP_LINK) < (int)sizeof(path) &&
	    !access(path, F_OK))
		return FSD_PINNED_TP;
	d = opendir(pin_dir);
	if (!d)
		return in;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "link_", 5))
			in = FSD_PINNED_XDP;
	closedir(d);
	return in;
}

int fsd_loader_read_pinned(const char *pin_dir, struct fsd_pinned *out)
{
	struct bpf_map_info info;
	__u32 zero = 0, v;
	char path[PATH_MAX];
	void *value = NULL;
	int fd = -1, err;

	memset(out, 0, sizeof(*out));
	err = pin_path(path, sizeof(path), pin_dir, PIN_PARAMS);
	if (err)
		return err;
	/* fs_params opens the .rodata (maps.bpf.h), whose other contents
	 * (hash keys, flags) a new program makes afresh: its magic and
	 * version below say whether this build can read it.  (Its size
	 * changes with them: the blocklist's hash keys shrank with the
	 * expanded groups, and an earlier release's datapath is still
	 * adopted; each map reused must match in type and sizes, or the
	 * load refuses it.) */
	err = pinned_info(pin_dir, PIN_PARAMS, &info);
	if (!err && info.value_size < sizeof(struct fs_sketch_params))
		err = -EPROTO;
	if (err)
		goto out;
	fd = bpf_obj_get(path);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	value = calloc(1, info.value_size);
	if (!value) {
		err = -ENOMEM;
		goto out;
	}
	if (bpf_map_lookup_elem(fd, &zero, value)) {
		err = -errno;
		goto out;
	}
	memcpy(&out->params, value, sizeof(out->params));
	if (out->params.magic != FS_PARAMS_MAGIC ||
	    out->params.version != FS_PARAMS_VERSION) {
		err = -EPROTO;
		goto out;
	}
	/* fs_ctl grew with the adoption words (maps.h): an older datapath's
	 * is shorter, and the program would not load on it. */
	err = pinned_info(pin_dir, PIN_CTL, &info);
	if (!err && info.value_size != sizeof(struct fs_ctl))
		err = -EPROTO;
	/* Counters a later version added. */
	if (!err)
		err = pinned_info(pin_dir, PIN_STATS, &info);
	if (!err && info.max_entries != FS_STAT_MAX)
		err = -EPROTO;
	if (!err)
		err = pinned_info(pin_dir, PIN_REPORTS, &info);
	out->ringbuf_kib = info.max_entries / 1024;
	if (!err)
		err = pinned_info(pin_dir, PIN_BLOCK4, &info);
	out->blocklist_max = info.max_entries;
	out->ingress = pinned_ingress(pin_dir);
	/* Every map this build reuses must be there, but ifaces: the
	 * previous release had none (no --ingress tracepoint), and its XDP
	 * datapath is adopted with a fresh one (reuse_pinned_maps()). */
	for (v = 0; !err && v < PIN_MAX; v++) {
		if (xdp_pins[v].flags & FSD_PIN_FRESH)
			continue;
		err = pin_path(path, sizeof(path), pin_dir, v);
		if (!err && access(path, F_OK)) {
			if (v == PIN_IFACES)
				out->no_ifaces = true;
			else if (!(xdp_pins[v].flags & FSD_PIN_NEW))
				err = -EPROTO;
		}
	}
out:
	if (err == -EPROTO)
		fsd_err("the datapath pinned under %s is another version's; stop it with flowsketchd --detach --pin-dir %s, or start with --replace",
			pin_dir, pin_dir);
	else if (err)
		fsd_fail(err, "cannot read the datapath pinned under %s", pin_dir);
	free(value);
	if (fd >= 0)
		close(fd);
	return err;
}

int fsd_loader_check_pinned(const struct fsd_pinned *pin,
			    const struct fsd_options *o)
{
	const struct fs_sketch_params *a = &pin->params, *b = &o->params;
	const char *opt = NULL;
	unsigned long long was = 0, now = 0;

	if (a->cms_depth != b->cms_depth)
		opt = "--depth", was = a->cms_depth, now = b->cms_depth;
	else if (a->cms_log2_width != b->cms_log2_width)
		opt = "--width", was = 1ULL << a->cms_log2_width,
		now = 1ULL << b->cms_log2_width;
	else if (a->hll_p != b->hll_p)
		opt = "--precision", was = a->hll_p, now = b->hll_p;
	else if ((a->flags ^ b->flags) & FS_PARAM_F_CONSERVATIVE)
		opt = "--conservative", was = !!(a->flags & FS_PARAM_F_CONSERVATIVE),
		now = !!(b->flags & FS_PARAM_F_CONSERVATIVE);
	else if (pin->ringbuf_kib != o->ringbuf_kib)
		opt = "--ringbuf-kib", was = pin->ringbuf_kib, now = o->ringbuf_kib;
	else if (pin->blocklist_max != o->blocklist_max)
		opt = "--blocklist-max", was = pin->blocklist_max, now = o->blocklist_max;
	if (!opt && pin->no_ifaces && o->ingress_tp)
		return fsd_reject(-ESTALE, "the datapath pinned under %s predates --ingress tracepoint: start it with --replace",
				  o->pin_dir);
	if (!opt && pin->ingress != FSD_PINNED_NONE &&
	    (pin->ingress == FSD_PINNED_TP) != o->ingress_tp)
		return fsd_reject(-ESTALE, "the datapath pinned under %s counts ingress with --ingress %s: start with the same, or with --replace to switch",
				  o->pin_dir, o->ingress_tp ? "xdp" : "tracepoint");
	if (!opt)
		return 0;
	if (!strcmp(opt, "--conservative"))
		fsd_err("the datapath pinned under %s was loaded %s --conservative: start with the same sizing options, or with --replace to discard it",
			o->pin_dir, was ? "with" : "without");
	else
		fsd_err("the datapath pinned under %s has %s %llu, not %llu: start with the same sizing options, or with --replace to discard it",
			o->pin_dir, opt, was, now);
	return -ESTALE;
}

/* Open and size the skeleton (object.h). */
static void *xdp_open(const struct fs_sketch_params *p, const struct fsd_options *o,
		      bool kfunc, struct bpf_object **obj, struct bpf_program **prog)
{
	struct flowsketch *skel = flowsketch__open();
	int err;

	if (!skel) {
		err = fsd_fail(-errno, "cannot open the BPF object");
		errno = -err;
		return NULL;
	}
	err = FS_DATAPATH_SETUP(skel, p, kfunc);
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
		err = fs_bfilter_size(skel->maps.fs_bfilter, &skel->rodata->fs_bfilter_mask,
				      fsd_blocklist_max_log2(o->blocklist_max));
	if (err) {
		fsd_fail(err, "cannot size the BPF maps");
		flowsketch__destroy(skel);
		errno = -err;
		return NULL;
	}
	*obj = skel->obj;
	*prog = skel->progs.fs_xdp;
	return skel;
}

int fsd_loader_load(struct fsd_loader *l, const struct fsd_options *o,
		    const struct fs_hash_secret *secret, bool adopt)
{
	int err = fsd_object_load(&l->obj, &xdp_ops, o->pin_dir, o, secret, adopt);

	l->skel = l->obj.skel;
	/* Loaded, even if fs_ctl's mapping then failed: teardown must
	 * still find the pin directory to drop this object's links. */
	if (l->skel) {
		l->pin_dir = o->pin_dir;
		fsd_info("loaded the %s datapath%s", l->obj.kfunc ? "kfunc" : "BPF",
			 adopt ? " on the maps pinned under the pin directory" : "");
	}
	if (err)
		return err;
	err = fsd_ifslots_open(&l->ifslots, bpf_map__fd(l->skel->maps.fs_ifslot),
			       bpf_map__fd(l->skel->maps.fs_ifcount),
			       bpf_map__fd(l->skel->maps.fs_barrier),
			       bpf_map__fd(l->skel->maps.fs_barrier_inner),
			       l->obj.ncpus);
	if (err)
		fsd_fail(err, "cannot mmap fs_ifslot");
	return err;
}

/*
 * params is pinned last: its pin is what says "a datapath is pinned
 * here" (fsd_loader_is_pinned()), so a daemon killed while pinning a fresh
 * datapath leaves a directory the next one starts afresh in, never one
 * it takes for a whole datapath.  Adopting, the program and .rodata are
 * replaced by rename, so params never goes missing either.
 */
int fsd_loader_pin(struct fsd_loader *l, const char *pin_dir)
{
	int err;

	l->pin_dir = pin_dir;
	l->obj.replacing = l->replacing;
	err = fsd_object_pin(&l->obj);
	if (!err)
		fsd_debug("pinned maps and program under %s", pin_dir);
	return err;
}

static const char *xdp_mode(const struct fsd_loader *l)
{
	return l->xdp_generic ? "generic" : "native";
}

/*
 * bpffs refuses names with a '.', which interface names may have (eth0.100):
 * the pin name has ':' for '.', a character no interface name can hold,
 * so that names stay apart.
 */
static void link_pin_name(char *buf, size_t len, const char *ifname)
{
	size_t i;

	snprintf(buf, len, "link_%s", ifname);
	for (i = 0; buf[i]; i++)
		if (buf[i] == '.')
			buf[i] = ':';
}

static int link_pin_path(char *buf, size_t len, const char *dir,
			 const char *ifname)
{
	char name[IF_NAMESIZE + 8];

	link_pin_name(name, sizeof(name), ifname);
	if (snprintf(buf, len, "%s/%s", dir, name) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

/* The XDP link pinned at path and the ifindex it holds (0: defunct), or
 * -errno when there is none. */
static int pinned_link(const char *path, __u32 *ifindex)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	int fd = bpf_obj_get(path);

	if (fd < 0)
		return -errno;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || info.type != BPF_LINK_TYPE_XDP) {
		close(fd);
		return -EINVAL;
	}
	*ifindex = info.xdp.ifindex;
	return fd;
}

/* Detach the link now (closing the last reference would do it too, but
 * a pin's reference goes only after an RCU grace period), unpin, close. */
static void link_drop(int fd, const char *path)
{
	if (fd >= 0) {
		bpf_link_detach(fd);
		close(fd);
	}
	if (path)
		unlink(path);
}

/* a attached (err 0) or failed to (err, a negative errno): err. */
static int attach_outcome(struct fsd_attachment *a, int err)
{
	a->state = err ? FSD_IFACE_FAILED : FSD_IFACE_ATTACHED;
	a->err = err;
	return err;
}

/*
 * Take over the link pinned for a's name: if it holds XDP on a's
 * interface, move it to our program (1); a link of another interface
 * (the name's device was recreated while no daemon ran) or a defunct one
 * is dropped (0: attach afresh).
 */
static int adopt_link(struct fsd_loader *l, struct fsd_attachment *a,
		      const char *path)
{
	__u32 ifindex = 0;
	int fd = pinned_link(path, &ifindex), err;

	if (fd < 0)
		return 0;
	if (ifindex != (__u32)a->ifindex) {
		fsd_warn("the pinned link of %s holds ifindex %u, not %d (recreated while no daemon ran): attaching afresh",
			 a->iface->name, ifindex, a->ifindex);
		link_drop(fd, path);
		return 0;
	}
	if (bpf_link_update(fd, bpf_program__fd(l->skel->progs.fs_xdp), NULL)) {
		/* Left as it is, counting with the old program: a failed
		 * adoption changes nothing (daemon.c). */
		err = -errno;
		close(fd);
		fsd_err("cannot move the pinned link of %s to the new program: %s; start with --replace to discard the pinned datapath",
			a->iface->name, strerror(-err));
		return err;
	}
	a->link_fd = fd;
	a->link_pinned = true;
	attach_outcome(a, 0);
	return 1;
}

/* --ingress tracepoint: count a->ifindex (fs_ifaces); 0 or -errno. */
static int tp_attach_one(struct fsd_loader *l, struct fsd_attachment *a)
{
	int err = fsd_tp_iface_set(bpf_map__fd(l->skel->maps.fs_ifaces),
				   a->ifindex, a->ifslot, true);

	a->link_fd = -1;
	a->link_pinned = false;
	if (err)
		fsd_fail(err, "cannot count %s on the receive tracepoint", a->iface->name);
	return attach_outcome(a, err);
}

/* Attach to a->ifindex and record the outcome in a; 0 or -errno. */
static int attach_one(struct fsd_loader *l, struct fsd_attachment *a)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts,
		    .flags = l->xdp_generic ? XDP_FLAGS_SKB_MODE :
					      XDP_FLAGS_DRV_MODE);
	const char *name = a->iface->name;
	char path[PATH_MAX];
	int fd, err;

	if (l->ingress_tp)
		return tp_attach_one(l, a);
	/* Before the program can run there: none of its frames is counted
	 * as no interface's. */
	fsd_ifslots_set_ifindex(&l->ifslots, a->ifslot, a->ifindex);
	a->link_pinned = false;
	err = link_pin_path(path, sizeof(path), l->pin_dir, name);
	if (err) {
		fsd_err("pin path %s/link_%s is too long", l->pin_dir, name);
		goto fail;
	}
	/* A pinned link (the adopted datapath's, or the one --replace
	 * discards) is moved to our program in one step: no packet goes
	 * uncounted or unchecked in between. */
	if (!access(path, F_OK)) {
		err = adopt_link(l, a, path);
		if (err > 0) {
			fsd_info("took over the pinned link on %s: counting never stopped", name);
			return 0;
		}
		if (err < 0 && l->obj.adopted)
			goto fail;
		if (err < 0) {
			__u32 ifindex;

			link_drop(pinned_link(path, &ifindex), path);
		}
	}
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
			fsd_fail(err, "cannot attach generic XDP to %s", name);
		goto fail;
	}
	a->link_fd = fd;
	if (bpf_obj_pin(fd, path)) {
		err = fsd_fail(-errno, "cannot pin the link of %s at %s", name, path);
		link_drop(fd, NULL);
		a->link_fd = -1;
		goto fail;
	}
	a->link_pinned = true;
	err = 0;
fail:
	return attach_outcome(a, err);
}

/* Links pinned for names this daemon does not count: detached, or they
 * would count an interface nobody asked for, for ever. */
static void drop_foreign_links(struct fsd_loader *l, const struct fsd_options *o)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(l->pin_dir);
	unsigned int i;

	if (!d)
		return;
	while ((e = readdir(d))) {
		bool ours = false;
		__u32 ifindex;

		if (strncmp(e->d_name, "link_", 5))
			continue;
		for (i = 0; i < o->n_ifaces; i++)
		{
			char name[IF_NAMESIZE + 8];

			link_pin_name(name, sizeof(name), o->ifaces[i].name);
			ours |= !strcmp(e->d_name, name);
		}
		if (ours || snprintf(path, sizeof(path), "%s/%s", l->pin_dir,
				     e->d_name) >= (int)sizeof(path))
			continue;
		fsd_info("detaching the pinned link %s: no -i %s", path, e->d_name + 5);
		link_drop(pinned_link(path, &ifindex), path);
	}
	closedir(d);
}

static int drop_link_pins(const char *dir);

/* The tracepoint link's pin path. */
static int tp_link_path(char *buf, size_t len, const char *dir)
{
	return snprintf(buf, len, "%s/%s", dir, FSD_TP_LINK) >= (int)len ?
	       -ENAMETOOLONG : 0;
}

/* Detach and unpin the tracepoint link pinned under dir, if any: 1 if
 * there was one. */
static int drop_tp_link(const char *dir)
{
	char path[PATH_MAX];
	int fd;

	if (tp_link_path(path, sizeof(path), dir) || access(path, F_OK))
		return 0;
	fd = bpf_obj_get(path);
	link_drop(fd, path);
	return 1;
}

/*
 * --ingress tracepoint: keep the adopted link (its program, the
 * predecessor's, reads the same maps), or attach fs_ingress_tp and pin
 * the link.  A link pinned by a datapath --replace discards goes once the
 * new one is attached: no frame is missed in between, and none counted
 * twice in one set of maps.
 */
static int tp_attach_link(struct fsd_loader *l)
{
	struct bpf_link *link;
	char path[PATH_MAX], old[PATH_MAX];
	int err = tp_link_path(path, sizeof(path), l->pin_dir);

	if (err)
		return err;
	if (l->obj.adopted) {
		int fd = bpf_obj_get(path);

		if (fd >= 0) {
			l->tp_link_fd = fd;
			fsd_info("kept the pinned receive tracepoint link: counting never stopped");
			return 0;
		}
	}
	link = bpf_program__attach(l->skel->progs.fs_ingress_tp);
	if (!link)
		return fsd_fail(-errno,
				"cannot attach the ingress program (tp_btf/netif_receive_skb)");
	l->tp_link_fd = dup(bpf_link__fd(link));
	err = l->tp_link_fd < 0 ? -errno : 0;
	bpf_link__destroy(link);	/* the dup (and the pin) hold it */
	if (!err && snprintf(old, sizeof(old), "%s_old", path) >= (int)sizeof(old))
		err = -ENAMETOOLONG;
	/* A discarded datapath's link is renamed away first and detached
	 * after ours is pinned. */
	if (!err && !access(path, F_OK) && rename(path, old))
		err = -errno;
	if (!err && bpf_obj_pin(l->tp_link_fd, path))
		err = -errno;
	if (err) {
		fsd_fail(err, "cannot pin the receive tracepoint link at %s", path);
		link_drop(l->tp_link_fd, NULL);
		l->tp_link_fd = -1;
		return err;
	}
	if (!access(old, F_OK))
		link_drop(bpf_obj_get(old), old);
	return 0;
}

int fsd_loader_attach(struct fsd_loader *l, const struct fsd_options *o)
{
	unsigned int i;
	int err, keep[FSD_MAX_IFACES];

	l->xdp_generic = o->xdp_generic;
	l->ingress_tp = o->ingress_tp;
	l->tp_link_fd = -1;
	for (i = 0; i < o->n_ifaces; i++)
		keep[i] = o->ifaces[i].ifindex;
	l->ifslots.counted = true;
	err = fsd_ifslots_assign(&l->ifslots, o->ifaces, o->n_ifaces);
	if (err)
		return fsd_fail(err, "cannot set up the per-interface counters");
	for (i = 0; i < o->n_ifaces; i++) {
		struct fsd_attachment *a = &l->ifaces[i];

		a->iface = &o->ifaces[i];
		a->ifindex = o->ifaces[i].ifindex;
		a->ifslot = l->ifslots.slot[i];
		a->link_fd = -1;
		a->reattached = 0;
		l->n_ifaces = i + 1;
		err = attach_one(l, a);
		if (err)
			return err;
		if (!l->ingress_tp)
			fsd_info("attached to %s (%s XDP)", a->iface->name, xdp_mode(l));
	}
	if (!l->ingress_tp) {
		drop_foreign_links(l, o);
		/* A tracepoint datapath --replace discards. */
		if (drop_tp_link(l->pin_dir))
			fsd_info("detached the discarded datapath's receive tracepoint link");
		fsd_ifslots_release(&l->ifslots, o->ifaces, o->n_ifaces);
		/* Every link runs this program now. */
		if (l->obj.adopted)
			remove_retired_pins(l->pin_dir);
		return 0;
	}
	/* An adopted filter may name interfaces no -i gives now. */
	err = fsd_tp_iface_keep_only(bpf_map__fd(l->skel->maps.fs_ifaces), keep,
				     o->n_ifaces);
	if (err < 0)
		return fsd_fail(err, "cannot clear the receive tracepoint's interface filter");
	fsd_ifslots_release(&l->ifslots, o->ifaces, o->n_ifaces);
	err = tp_attach_link(l);
	if (err)
		return err;
	l->ifslots.counted = fsd_tp_link_uses_map(l->tp_link_fd,
			bpf_map__fd(l->skel->maps.fs_ifcount)) != 0;
	if (!l->ifslots.counted)
		fsd_warn("the receive tracepoint link kept from an earlier release has no per-interface counts (status and /metrics show none for it) until a start with --replace");
	/* XDP links of a datapath --replace discards: after ours counts. */
	if (drop_link_pins(l->pin_dir))
		fsd_info("detached the discarded datapath's XDP links");
	for (i = 0; i < o->n_ifaces; i++)
		fsd_info("counting what %s receives (tp_btf/netif_receive_skb)",
			 o->ifaces[i].name);
	/* A kept link's program holds its own maps; the names go. */
	if (l->obj.adopted)
		remove_retired_pins(l->pin_dir);
	return 0;
}

void fsd_loader_gone(struct fsd_loader *l, struct fsd_attachment *a,
		     const char *why)
{
	fsd_info("%s (ifindex %d) %s", a->iface->name, a->ifindex, why);
	if (l->ingress_tp && a->state == FSD_IFACE_ATTACHED)
		fsd_tp_iface_set(bpf_map__fd(l->skel->maps.fs_ifaces),
				 a->ifindex, a->ifslot, false);
	/* The kernel has already detached a deleted device's link; closing
	 * frees it.  A renamed or moved device still runs the program, and
	 * detaching stops that: it is not the interface the operator named. */
	if (a->link_fd >= 0) {
		char path[PATH_MAX];

		link_drop(a->link_fd, a->link_pinned &&
			  !link_pin_path(path, sizeof(path), l->pin_dir,
					 a->iface->name) ? path : NULL);
	}
	a->link_fd = -1;
	a->link_pinned = false;
	if (!l->ingress_tp)
		fsd_ifslots_set_ifindex(&l->ifslots, a->ifslot, 0);
	a->ifindex = 0;
	a->state = FSD_IFACE_GONE;
	a->err = 0;
}

int fsd_loader_reattach(struct fsd_loader *l, struct fsd_attachment *a,
			int ifindex)
{
	int err;

	if (a->link_fd >= 0 || (l->ingress_tp && a->state == FSD_IFACE_ATTACHED))
		fsd_loader_gone(l, a, "was replaced");
	a->ifindex = ifindex;
	err = attach_one(l, a);
	if (err) {
		fsd_warn("%s is back (ifindex %d) but not counted until it is recreated",
			 a->iface->name, ifindex);
		return err;
	}
	a->reattached++;
	fsd_info("%s is back (ifindex %d): re-attached (%s)",
		 a->iface->name, ifindex,
		 l->ingress_tp ? "receive tracepoint" : l->xdp_generic ?
		 "generic XDP" : "native XDP");
	return 0;
}

bool fsd_loader_link_alive(const struct fsd_loader *l,
			   const struct fsd_attachment *a)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);

	/* The filter entry lasts; ifwatch.c tells an ifindex the name no
	 * longer has. */
	if (l->ingress_tp)
		return a->state == FSD_IFACE_ATTACHED;
	if (a->link_fd < 0)
		return false;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(a->link_fd, &info, &len))
		return false;
	/* A defunct XDP link (its device unregistered) reports ifindex 0. */
	return info.xdp.ifindex == (__u32)a->ifindex;
}

/* Detach and unpin every link_* under dir; how many. */
static int drop_link_pins(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		__u32 ifindex;

		if (strncmp(e->d_name, "link_", 5) ||
		    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path))
			continue;
		link_drop(pinned_link(path, &ifindex), path);
		fsd_info("detached the link of %s", e->d_name + 5);
		n++;
	}
	closedir(d);
	return n;
}

void fsd_loader_close(struct fsd_loader *l, bool keep)
{
	char path[PATH_MAX];
	unsigned int i;

	for (i = 0; i < l->n_ifaces; i++) {
		struct fsd_attachment *a = &l->ifaces[i];

		if (a->link_fd < 0)
			continue;
		if (keep && a->link_pinned) {
			close(a->link_fd);	/* the pin holds it */
		} else {
			link_drop(a->link_fd, a->link_pinned &&
				  !link_pin_path(path, sizeof(path), l->pin_dir,
						 a->iface->name) ? path : NULL);
			fsd_info("detached from %s", a->iface->name);
		}
		a->link_fd = -1;
	}
	l->n_ifaces = 0;
	if (l->ingress_tp && l->tp_link_fd >= 0) {
		if (!keep && !tp_link_path(path, sizeof(path), l->pin_dir)) {
			link_drop(l->tp_link_fd, path);
			fsd_info("detached from the receive tracepoint");
		} else {
			close(l->tp_link_fd);	/* the pin holds it */
		}
	}
	l->tp_link_fd = -1;
	l->ingress_tp = false;
	if (!keep && l->pin_dir)
		drop_tp_link(l->pin_dir);
	/* Links pinned for interfaces not (yet) set up, by a datapath that
	 * --replace discards: theirs too, or they would go on counting into
	 * maps nobody reads. */
	if (!keep && l->pin_dir)
		drop_link_pins(l->pin_dir);
	if (!keep)
		fsd_object_unpin(&l->obj);
	if (keep && l->obj.pinned)
		fsd_info("left the datapath counting, pinned under %s, for the next start (--keep)",
			 l->pin_dir);
	l->obj.pinned = 0;
	fsd_ifslots_close(&l->ifslots);
	fsd_object_close(&l->obj);
	l->skel = NULL;
}

int fsd_loader_remove_pins(const char *pin_dir)
{
	/* Links first: their programs stop before the maps go; then
	 * flowsketch's own names, nothing else that may be there. */
	int n = drop_link_pins(pin_dir) + drop_tp_link(pin_dir),
	    m = fsd_object_remove_pins(&xdp_ops, pin_dir);

	remove_retired_pins(pin_dir);

	return m < 0 ? m : n + m;
}
