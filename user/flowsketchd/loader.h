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
 */
#ifndef FLOWSKETCHD_LOADER_H
#define FLOWSKETCHD_LOADER_H

#include <stdbool.h>
#include "flowsketch/hash.h"
#include "flowsketch/maps.h"
#include "options.h"

struct flowsketch;

struct fsd_attachment {
	const struct fsd_iface *iface;
	int link_fd;
};

struct fsd_loader {
	struct flowsketch *skel;
	bool kfunc;			/* datapath calls the module's kfuncs */
	bool xdp_generic;
	const char *pin_dir;
	unsigned int pinned;		/* bit i: pins[i] is ours */
	struct fsd_attachment attached[FSD_MAX_IFACES];
	unsigned int n_attached;
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
/* Detach, unpin, unload: whatever was done.  Safe on a zeroed loader. */
void fsd_loader_close(struct fsd_loader *l);

#endif /* FLOWSKETCHD_LOADER_H */
