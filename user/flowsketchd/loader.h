/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * loader.h - load the datapath, pin it, attach it; and undo all of it.
 *
 * Everything the daemon changes on the host is recorded here as it is
 * done (maps and program pinned, interfaces attached), and
 * fsd_loader_close() undoes exactly that, whether setup failed half-way
 * or the daemon is stopping: one cleanup path.
 *
 * XDP is attached through BPF links owned by the daemon's file
 * descriptors, not through netlink: if the daemon dies without cleaning
 * up (SIGKILL, a crash), the kernel closes its descriptors and detaches
 * the program itself, so no interface is left running an orphan.
 *
 * Interfaces come and go while the daemon runs (ifwatch.h decides when):
 * each configured name has one fsd_attachment for the daemon's life, which
 * says whether the program is on it now, on which ifindex, and how often it
 * was put back.  A link whose interface was deleted is defunct but still
 * holds its fd; fsd_loader_gone() closes it, so that nothing of the old
 * interface is kept and a recreated one can be attached afresh.
 */
#ifndef FLOWSKETCHD_LOADER_H
#define FLOWSKETCHD_LOADER_H

#include <stdbool.h>
#include "flowsketch/hash.h"
#include "flowsketch/maps.h"
#include "options.h"

struct flowsketch;

enum fsd_iface_state {
	FSD_IFACE_ATTACHED,	/* link_fd holds XDP on ifindex */
	FSD_IFACE_GONE,		/* no interface has the name: nothing held */
	FSD_IFACE_FAILED,	/* ifindex has the name, attaching failed (err) */
};

struct fsd_attachment {
	const struct fsd_iface *iface;	/* the name the operator gave */
	int ifindex;			/* the name's interface now; 0 if gone */
	int link_fd;			/* -1 unless attached */
	enum fsd_iface_state state;
	unsigned int reattached;	/* attaches after the first one */
	int err;			/* -errno of a failed attach */
};

struct fsd_loader {
	struct flowsketch *skel;
	bool kfunc;			/* datapath calls the module's kfuncs */
	bool xdp_generic;
	const char *pin_dir;
	unsigned int pinned;		/* bit i: pins[i] is ours */
	/* ifaces[i] follows o->ifaces[i]; n_ifaces are set up. */
	struct fsd_attachment ifaces[FSD_MAX_IFACES];
	unsigned int n_ifaces;
	struct fs_ctl *ctl;		/* fs_ctl[0], mmapped */
	unsigned int ncpus;		/* possible CPUs: per-CPU value count */
};

/* Open, size and load the skeleton (kfunc datapath when the module is
 * there, else, or if that fails, pure BPF); map fs_ctl.  0 or -errno. */
int fsd_loader_load(struct fsd_loader *l, const struct fsd_options *o,
		    const struct fs_hash_secret *secret);
/* Pin every map and the program under o->pin_dir.  0 or -errno. */
int fsd_loader_pin(struct fsd_loader *l, const char *pin_dir);
/* Attach to every interface of o.  0 or -errno. */
int fsd_loader_attach(struct fsd_loader *l, const struct fsd_options *o);
/* The interface a was attached to is no longer its name's (deleted,
 * renamed, moved to another netns): log "NAME (ifindex N) WHY", drop the
 * link, mark a gone. */
void fsd_loader_gone(struct fsd_loader *l, struct fsd_attachment *a,
		     const char *why);
/* An interface with a's name appeared at ifindex: attach XDP to it in the
 * configured mode.  0, or -errno with a marked failed (and logged). */
int fsd_loader_reattach(struct fsd_loader *l, struct fsd_attachment *a,
			int ifindex);
/* Does a's link still hold XDP on a->ifindex?  False once the kernel
 * detached it (the interface was deleted), or if it cannot tell. */
bool fsd_loader_link_alive(const struct fsd_attachment *a);
/* Detach, unpin, unload: whatever was done.  Safe on a zeroed loader. */
void fsd_loader_close(struct fsd_loader *l);

#endif /* FLOWSKETCHD_LOADER_H */
