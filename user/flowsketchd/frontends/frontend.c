// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* frontend.c - a tracepoint frontend's counts (frontend.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "frontend.h"
#include "loader.h"
#include "base/log.h"
#include "base/options.h"
#include "windows/statebudget.h"
#include "datapath/tp_frontend.h"

const struct fsd_frontend_ops fsd_fe_xdp = {
	.name = "xdp", .direction = "in", .metrics_direction = "in",
	.hook = "xdp", .packets = "packets", .bytes = "bytes",
};
const struct fsd_frontend_ops fsd_fe_ingress_tp = {
	.name = "ingress", .direction = "in", .metrics_direction = "in",
	.hook = "tp_btf/netif_receive_skb", .packets = "packets", .bytes = "bytes",
	.tracing = true,
};
const struct fsd_frontend_ops fsd_fe_egress = {
	.name = "egress", .direction = "out", .metrics_direction = "out",
	.hook = "tp_btf/net_dev_start_xmit", .packets = "packets", .bytes = "bytes",
	.setup_what = "egress", .tracing = true, .tp = &fsd_tp_egress,
};
/* It counts attempts as packets and establishments as bytes
 * (bpf/conn.bpf.c); not a direction of /metrics. */
const struct fsd_frontend_ops fsd_fe_conn = {
	.name = "conn", .direction = "connections",
	.hook = "tp_btf/inet_sock_set_state", .packets = "connections",
	.bytes = "established", .setup_what = "connection", .tracing = true,
	.tp = &fsd_tp_conn,
};

const struct fsd_frontend_ops *fsd_frontend_kind(unsigned int id, bool ingress_tp)
{
	static const struct fsd_frontend_ops *const kinds[FSD_FE_MAX] = {
		[FSD_FE_IN] = &fsd_fe_xdp,
		[FSD_FE_OUT] = &fsd_fe_egress,
		[FSD_FE_CONN] = &fsd_fe_conn,
	};

	return id == FSD_FE_IN && ingress_tp ? &fsd_fe_ingress_tp : kinds[id];
}

void fsd_frontend_init(struct fsd_frontend *fe, const struct fsd_frontend_ops *ops)
{
	fe->ops = ops;
	fe->store.lock_fd = -1;
	fe->obj.link_fd = -1;
	if (!ops->tp)
		return;
	fe->bpf = &fe->obj.bpf;
	fe->counts = ops->tp->ifaces ? &fe->ifslots : NULL;
	fe->link_fd = &fe->obj.link_fd;
}

void fsd_frontend_use_loader(struct fsd_frontend *fe, const struct fsd_loader *l)
{
	fe->bpf = &l->obj;
	fe->counts = &l->ifslots;
	fe->link_fd = fe->ops->tracing ? &l->tp_link_fd : NULL;
}

/* fsd_frontend_setup() but for the message. */
static int setup(const struct fsd_frontend_env *env, struct fsd_frontend *fe,
		 const struct fs_hash_secret *secret, bool adopt)
{
	const struct fsd_tp_kind *k = fe->ops->tp;
	const struct fsd_options *o = env->opts;
	char dir[PATH_MAX];
	int err;

	fe->adopted = adopt && fsd_tp_is_pinned(k, o->pin_dir);
	if (snprintf(dir, sizeof(dir), "%s/%s", o->state_dir, k->name) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	{
		struct fs_sketch_params p = o->params;

		p.secret = *secret;
		err = fsd_winstore_open(&fe->store, dir, &p, fe->adopted);
		memset(&p, 0, sizeof(p));
	}
	if (err)
		return err;
	err = fsd_tp_load(&fe->obj, k, o, secret, fe->adopted);
	if (err)
		return err;
	fe->loaded = true;
	return fsd_frontend_open_windows(env, fe);
}

int fsd_frontend_open_windows(const struct fsd_frontend_env *env,
			      struct fsd_frontend *fe)
{
	const struct fsd_options *o = env->opts;
	/* The in direction names the step that failed; the others' setup
	 * says "cannot set up the NAME frontend". */
	bool in = !fe->ops->tp;
	struct fsd_rotation_maps m;
	int err;

	/* The window the datapath starts in is fs_ctl's (0 after a fresh
	 * load), or its predecessor when that one is still to finish. */
	fe->first = fe->adopted ? fsd_rotation_first_pending(fe->bpf->ctl, &fe->store) :
				  fe->bpf->ctl->window_seq;
	err = fsd_history_init(&fe->history, &o->params, fsd_options_windows_kept(o),
			       o->max_candidates, fe->first);
	if (err) {
		if (in)
			fsd_fail(err, "cannot allocate the window history");
		return err;
	}
	fe->history_ready = true;
	fsd_state_budget_add(env->budget, &fe->history, &fe->store);
	if (fe->adopted) {
		err = fsd_winstore_load(&fe->store, &fe->history,
					fe->bpf->ctl->window_seq, &fe->last_end_ns);
		if (err < 0) {
			if (in)
				fsd_fail(err, "cannot read the windows kept in %s", o->state_dir);
			return err;
		}
		fe->windows_restored = (__u32)err;
	}
	fsd_object_rotation_maps(fe->bpf, &m);
	err = fsd_rotation_init_maps(&fe->rotation, &m, &o->params, o->hh_fraction);
	if (err) {
		if (in)
			fsd_fail(err, "cannot allocate the rotation buffers");
		return err;
	}
	fe->rotation.store = &fe->store;
	fe->rotation_ready = true;
	fe->reports = fsd_reports_open(&fe->report_state,
				       fsd_object_map_fd(fe->bpf, "fs_reports"),
				       &fe->history);
	if (!fe->reports)
		return -errno;
	fe->report_state.store = &fe->store;
	if (fe->adopted) {
		__u64 n = fsd_winstore_replay(&fe->store, &fe->history, fe->first);

		if (n && in)
			fsd_info("filed %llu candidates of the open windows again from their journal",
				 (unsigned long long)n);
	}
	return 0;
}

int fsd_frontend_setup(const struct fsd_frontend_env *env, struct fsd_frontend *fe,
		       const struct fs_hash_secret *secret, bool adopt)
{
	int err = setup(env, fe, secret, adopt);

	if (err)
		fsd_fail(err, "cannot set up the %s frontend", fe->ops->setup_what);
	return err;
}

int fsd_frontend_pin(const struct fsd_frontend_env *env, struct fsd_frontend *fe)
{
	int err = fsd_tp_pin(&fe->obj);

	if (err)
		return err;
	if (fe->adopted) {
		fsd_rotation_adopt(&fe->rotation, &fe->history, fe->reports,
				   fe->last_end_ns,
				   (__u64)env->opts->window_sec * 1000000000ULL);
	} else {
		fe->rotation.start_ns = env->started_ns;
		__atomic_store_n(&fe->obj.bpf.ctl->window_start_ns, env->started_ns,
				 __ATOMIC_RELEASE);
	}
	return 0;
}

void fsd_frontend_sync_ifaces(const struct fsd_frontend_env *env,
			      struct fsd_frontend *fe)
{
	const struct fsd_loader *l = env->loader;
	int fd = fsd_object_map_fd(&fe->obj.bpf, "fs_ifaces"), err;
	unsigned int i;

	if (!fe->loaded || !fe->obj.kind->ifaces)
		return;
	for (i = 0; i < l->n_ifaces; i++) {
		const struct fsd_attachment *a = &l->ifaces[i];
		int want = a->state == FSD_IFACE_ATTACHED ? a->ifindex : 0;

		if (want == fe->ifindex[i])
			continue;
		if (fe->ifindex[i])
			fsd_tp_iface_set(fd, fe->ifindex[i], 0, false);
		if (want && (err = fsd_tp_iface_set(fd, want, fe->ifslots.slot[i],
						    true))) {
			fsd_warn("cannot count what %s sends: %s", a->iface->name,
				 strerror(-err));
			want = 0;
		}
		fe->ifindex[i] = want;
	}
}

/* The per-interface counters' slots, before the first interface is
 * counted (ifslots.h). */
static int open_ifslots(const struct fsd_options *o, struct fsd_frontend *fe)
{
	int err;

	err = fsd_ifslots_open(&fe->ifslots, fsd_object_map_fd(&fe->obj.bpf, "fs_ifslot"),
			       fsd_object_map_fd(&fe->obj.bpf, "fs_ifcount"),
			       fsd_object_map_fd(&fe->obj.bpf, "fs_barrier"),
			       fsd_object_map_fd(&fe->obj.bpf, "fs_barrier_inner"),
			       fe->obj.bpf.ncpus);
	if (!err)
		err = fsd_ifslots_assign(&fe->ifslots, o->ifaces, o->n_ifaces);
	if (err)
		fsd_fail(err, "cannot set up the %s per-interface counters", fe->obj.kind->name);
	return err;
}

/* Once the -i interfaces are counted in their slots: an adopted filter's
 * entries for interfaces no -i gives now go, then the slots of names no
 * -i gives. */
static int drop_foreign_ifaces(const struct fsd_frontend_env *env,
			       struct fsd_frontend *fe)
{
	unsigned int i, n = env->loader->n_ifaces;
	int keep[FSD_MAX_IFACES], err;

	for (i = 0; i < n; i++)
		keep[i] = fe->ifindex[i];
	err = fsd_tp_iface_keep_only(fsd_object_map_fd(&fe->obj.bpf, "fs_ifaces"), keep, n);
	if (err < 0)
		return fsd_fail(err, "cannot clear the %s interface filter", fe->obj.kind->name);
	fsd_ifslots_release(&fe->ifslots, env->opts->ifaces, env->opts->n_ifaces);
	return 0;
}

int fsd_frontend_attach(const struct fsd_frontend_env *env, struct fsd_frontend *fe)
{
	int err;

	if (!fe->obj.kind->ifaces)
		return fsd_tp_attach(&fe->obj);
	err = open_ifslots(env->opts, fe);
	if (err)
		return err;
	fsd_frontend_sync_ifaces(env, fe);
	err = drop_foreign_ifaces(env, fe);
	if (!err)
		err = fsd_tp_attach(&fe->obj);
	if (err)
		return err;
	fe->ifslots.counted = fsd_tp_link_uses_map(fe->obj.link_fd,
			fsd_object_map_fd(&fe->obj.bpf, "fs_ifcount")) != 0;
	if (!fe->ifslots.counted)
		fsd_warn("the %s link kept from an earlier release has no per-interface counts (status and /metrics show none for it) until a start with --replace",
			 fe->obj.kind->name);
	return 0;
}

void fsd_frontend_close_object(struct fsd_frontend *fe, bool keep)
{
	fsd_ifslots_close(&fe->ifslots);
	if (fe->loaded)
		fsd_tp_close(&fe->obj, keep);
	fe->loaded = false;
}

void fsd_frontend_close_windows(struct fsd_frontend *fe, bool keep)
{
	ring_buffer__free(fe->reports);
	fe->reports = NULL;
	if (fe->rotation_ready)
		fsd_rotation_free(&fe->rotation);
	fe->rotation_ready = false;
	if (fe->history_ready)
		fsd_history_free(&fe->history);
	fe->history_ready = false;
	if (!keep && fe->store.usable) {
		fsd_winstore_discard(&fe->store);
		fsd_winstore_clear(fe->store.dir);
	}
	fsd_winstore_close(&fe->store);
}

int fsd_frontend_remove(const struct fsd_tp_kind *k, const char *pin_dir,
			const char *state_dir)
{
	char dir[PATH_MAX];
	int n = fsd_tp_remove_pins(k, pin_dir);

	if (snprintf(dir, sizeof(dir), "%s/%s", state_dir, k->name) < (int)sizeof(dir))
		fsd_winstore_clear_locked(dir);
	return n;
}
