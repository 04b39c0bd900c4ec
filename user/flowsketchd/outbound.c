// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* outbound.c - the "out" direction's state (outbound.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "log.h"
#include "daemon.h"
#include "egress.skel.h"	/* after daemon.h: needs params.h's types */

int fsd_outbound_setup(struct fsd_daemon *d, const struct fs_hash_secret *secret,
		       bool adopt)
{
	struct fsd_outbound *out = &d->out;
	const struct fsd_options *o = &d->opts;
	struct fsd_rotation_maps m;
	char dir[PATH_MAX];
	int err;

	out->adopted = adopt && fsd_egress_is_pinned(o->pin_dir);
	if (snprintf(dir, sizeof(dir), "%s/egress", o->state_dir) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	{
		struct fs_sketch_params p = o->params;

		p.secret = *secret;
		err = fsd_winstore_open(&out->store, dir, &p, out->adopted);
		memset(&p, 0, sizeof(p));
	}
	if (err)
		return err;
	err = fsd_egress_load(&out->egress, o, secret, out->adopted);
	if (err)
		return err;
	out->loaded = true;
	out->first = out->adopted ?
		     fsd_rotation_first_pending(out->egress.ctl, &out->store) :
		     out->egress.ctl->window_seq;
	err = fsd_history_init(&out->history, &o->params,
			       fsd_options_windows_kept(o), o->max_candidates,
			       out->first);
	if (err)
		return err;
	out->history_ready = true;
	if (out->adopted) {
		err = fsd_winstore_load(&out->store, &out->history,
					out->egress.ctl->window_seq, &out->last_end_ns);
		if (err < 0)
			return err;
		out->windows_restored = (__u32)err;
	}
	fsd_egress_rotation_maps(&out->egress, &m);
	err = fsd_rotation_init_maps(&out->rotation, &m, &o->params, o->hh_fraction);
	if (err)
		return err;
	out->rotation.store = &out->store;
	out->rotation_ready = true;
	out->reports = fsd_reports_open(&out->report_state,
					bpf_map__fd(out->egress.skel->maps.fs_reports),
					&out->history);
	if (!out->reports)
		return -errno;
	out->report_state.store = &out->store;
	if (out->adopted)
		fsd_winstore_replay(&out->store, &out->history, out->first);
	return 0;
}

int fsd_outbound_pin(struct fsd_daemon *d)
{
	struct fsd_outbound *out = &d->out;
	int err = fsd_egress_pin(&out->egress);

	if (err)
		return err;
	if (out->adopted) {
		fsd_rotation_adopt(&out->rotation, &out->history, out->reports,
				   out->last_end_ns,
				   (__u64)d->opts.window_sec * 1000000000ULL);
	} else {
		out->rotation.start_ns = d->started_ns;
		__atomic_store_n(&out->egress.ctl->window_start_ns, d->started_ns,
				 __ATOMIC_RELEASE);
	}
	return 0;
}

void fsd_outbound_sync_ifaces(struct fsd_daemon *d)
{
	struct fsd_outbound *out = &d->out;
	unsigned int i;

	if (!out->loaded)
		return;
	for (i = 0; i < d->loader.n_ifaces; i++) {
		const struct fsd_attachment *a = &d->loader.ifaces[i];
		int want = a->state == FSD_IFACE_ATTACHED ? a->ifindex : 0;

		if (want == out->ifindex[i])
			continue;
		if (out->ifindex[i])
			fsd_egress_iface(&out->egress, out->ifindex[i], false);
		if (want && fsd_egress_iface(&out->egress, want, true)) {
			fsd_warn("cannot count what %s sends: %s", a->iface->name,
				 strerror(errno));
			want = 0;
		}
		out->ifindex[i] = want;
	}
}

int fsd_outbound_attach(struct fsd_daemon *d)
{
	fsd_outbound_sync_ifaces(d);
	return fsd_egress_attach(&d->out.egress);
}

void fsd_outbound_teardown(struct fsd_daemon *d, bool keep)
{
	struct fsd_outbound *out = &d->out;

	if (out->loaded)
		fsd_egress_close(&out->egress, keep);
	out->loaded = false;
	ring_buffer__free(out->reports);
	out->reports = NULL;
	if (out->rotation_ready)
		fsd_rotation_free(&out->rotation);
	out->rotation_ready = false;
	if (out->history_ready)
		fsd_history_free(&out->history);
	out->history_ready = false;
	if (!keep && out->store.usable) {
		fsd_winstore_discard(&out->store);
		fsd_winstore_clear(out->store.dir);
	}
	fsd_winstore_close(&out->store);
}
