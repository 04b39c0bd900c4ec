// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* status.c - the "status" answer of protocol.h. */
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>
#include "stat_names.h"
#include "hll_estimate.h"
#include "keys.h"
#include "sketch.h"
#include "sizing.h"
#include "base/answer.h"
#include "blocklist/blocklist.h"
#include "policy/policy.h"
#include "windows/accuracy_watch.h"
#include "frontends/frontend.h"
#include "frontends/loader.h"
#include "server.h"
#include "windows/statebudget.h"
#include "status.h"
#include "datapath/tp_frontend.h"
#include "view.h"

/*
 * One frontend's datapath counters (fs_stats), with "malformed" per reason
 * and "malformed_total"; update_errors comes before those (errors_first,
 * a tracepoint frontend's entry) or after reports_dropped (the top
 * level's "counters"), as each has always had it.
 */
static void add_stats(struct json_object *o, const __u64 stats[FS_STAT_MAX],
		      bool errors_first)
{
	struct json_object *m = json_object_new_object();
	__u64 total = 0;
	size_t i;

	fsd_add_u64(o, "rx", stats[FS_STAT_RX]);
	fsd_add_u64(o, "sketched", stats[FS_STAT_SKETCHED]);
	fsd_add_u64(o, "non_ip", stats[FS_STAT_NON_IP]);
	fsd_add_u64(o, "fragments", stats[FS_STAT_FRAGMENTS]);
	if (errors_first)
		fsd_add_u64(o, "update_errors", stats[FS_STAT_UPDATE_ERRORS]);
	for (i = 0; i < fs_malformed_reasons_n; i++) {
		fsd_add_u64(m, fs_malformed_reasons[i].name, stats[fs_malformed_reasons[i].stat]);
		total += stats[fs_malformed_reasons[i].stat];
	}
	json_object_object_add(o, "malformed", m);
	fsd_add_u64(o, "malformed_total", total);
	fsd_add_u64(o, "reports", stats[FS_STAT_REPORTS]);
	fsd_add_u64(o, "reports_dropped", stats[FS_STAT_REPORTS_DROPPED]);
	if (!errors_first)
		fsd_add_u64(o, "update_errors", stats[FS_STAT_UPDATE_ERRORS]);
}

/* Runs the kernel skipped: the program was already running on that CPU
 * (a tracing program never nests on one, tp_frontend.h). */
static void add_misses(struct json_object *f, const struct fsd_frontend *fe)
{
	__u64 misses = 0;

	fsd_tp_recursion_misses(*fe->link_fd, &misses);
	fsd_add_u64(f, "recursion_misses", misses);
}

/* The figures of a tracepoint frontend (ops->tp) beside its name. */
static void tp_frontend_json(struct json_object *f, const struct fsd_frontend *fe)
{
	struct json_object *t;
	__u64 stats[FS_STAT_MAX];

	json_object_object_add(f, "adopted", json_object_new_boolean(fe->adopted));
	fsd_add_string(f, "datapath", fe->bpf->kfunc ? "kfunc" : "bpf");
	if (!fsd_object_read_stats(fe->bpf, stats))
		add_stats(f, stats, true);
	add_misses(f, fe);
	fsd_add_u64(f, "windows_finished", fe->history.windows_before +
		fe->history.windows_finished);
	fsd_add_u64(f, "windows_lost", fe->rotation.errors);
	fsd_add_u64(f, "windows_restored", fe->windows_restored);
	/* Its share of the memory and of the state directory. */
	fsd_add_u64(f, "windows_kept", fe->history.count);
	fsd_add_u64(f, "windows_stored", fe->store.stored);
	fsd_add_u64(f, "windows_store_errors", fe->store.errors);
	fsd_add_u64(f, "windows_evicted", fe->store.evicted);
	fsd_add_u64(f, "history_bytes", fe->history_ready ? fsd_history_bytes(&fe->history) : 0);
	t = json_object_new_object();
	fsd_add_u64(t, fe->ops->packets, fe->history.totals.packets);
	fsd_add_u64(t, fe->ops->bytes, fe->history.totals.bytes);
	json_object_object_add(f, "totals", t);
}

/*
 * The frontends: where each is attached and what it counted (none that
 * is not loaded).  The "in" direction's other figures are the answer's
 * top level (counters, totals); a tracepoint frontend's are its entry's.
 */
static struct json_object *frontends_json(const struct fsd_view *v)
{
	struct json_object *a = json_object_new_array(), *f;
	__u64 stats[FS_STAT_MAX];
	unsigned int i;

	for (i = 0; i < FSD_FE_MAX; i++) {
		const struct fsd_frontend *fe = &v->fe[i];

		if (!fe->loaded)
			continue;
		f = json_object_new_object();
		fsd_add_string(f, "name", fe->ops->name);
		fsd_add_string(f, FS_KEY_DIRECTION, fe->ops->direction);
		fsd_add_string(f, "hook", fe->ops->hook);
		if (fe->ops->tracing)
			json_object_object_add(f, "attached", json_object_new_boolean(
					*fe->link_fd >= 0));
		if (fe->ops->tp) {
			tp_frontend_json(f, fe);
		} else {
			if (fe->ops->tracing)
				add_misses(f, fe);
			if (!fsd_object_read_stats(fe->bpf, stats)) {
				fsd_add_u64(f, "rx", stats[FS_STAT_RX]);
				fsd_add_u64(f, "sketched", stats[FS_STAT_SKETCHED]);
			}
		}
		json_object_array_add(a, f);
	}
	return a;
}

/* The "counters" object, or NULL when the datapath's counters cannot be
 * read (*err says why): an answer without them would read as zeros. */
static struct json_object *counters_json(const struct fsd_view *v, int *err)
{
	const struct fsd_frontend *in = &v->fe[FSD_FE_IN];
	const struct fsd_report_counts *rc = &in->report_state.counts;
	struct json_object *c;
	__u64 stats[FS_STAT_MAX];

	*err = fsd_object_read_stats(in->bpf, stats);
	if (*err)
		return NULL;
	c = json_object_new_object();
	add_stats(c, stats, false);
	/* Every record taken from the ring buffer, and what became of it
	 * (reports.h): "reports" == reports_received once drained, and
	 * received is the sum of the five outcomes after it. */
	fsd_add_u64(c, "reports_received", rc->received);
	fsd_add_u64(c, "reports_filed", rc->filed);
	fsd_add_u64(c, "reports_duplicate", rc->duplicates);
	fsd_add_u64(c, "reports_stray", rc->stray);
	fsd_add_u64(c, "reports_refused", rc->refused);
	fsd_add_u64(c, "reports_malformed", rc->malformed + rc->failed);
	/* The daemon's own losses, beyond protocol.h's list. */
	fsd_add_u64(c, "candidates_dropped", in->history.candidate_overflow);
	fsd_add_u64(c, "stray_reports", in->history.stray_reports);
	/* Since the datapath was loaded, adopted or not. */
	fsd_add_u64(c, "windows_finished", in->history.windows_before +
		in->history.windows_finished);
	fsd_add_u64(c, "windows_lost", in->rotation.errors);
	fsd_add_u64(c, "rotations_postponed", in->rotation.postponed);
	fsd_add_u64(c, "rotations_late", in->rotation.late);
	fsd_add_u64(c, "rotation_late_max_us", in->rotation.late_max_ns / 1000);
	fsd_add_u64(c, "clients_refused", v->server->refused);
	fsd_add_u64(c, "client_timeouts", v->server->timeouts);
	return c;
}

/* Datapath memory on one CPU: both slots of every per-CPU map, at the
 * sizes loaded (an adopted earlier release's fs_hll whole, a fresh one's
 * one element: sketch_kind.h, "Legacy maps"). */
/* The keyed sample's check of the last inbound window (accuracy_watch.h):
 * the alarm state and the figures behind it. */
static struct json_object *accuracy_json(const struct fsd_accuracy_watch *w)
{
	struct json_object *o = json_object_new_object(), *why = json_object_new_array();
	unsigned int i;

	for (i = 0; i < FS_SAMPLE_NALARMS; i++)
		if (w->alarms & (1U << i))
			json_object_array_add(why,
				json_object_new_string(fs_sample_alarm_names[i]));
	json_object_object_add(o, FS_KEY_ALARM, json_object_new_boolean(w->alarms != 0));
	json_object_object_add(o, FS_KEY_ALARMS, why);
	fsd_add_u64(o, FS_KEY_WINDOWS, w->windows);
	fsd_add_u64(o, FS_KEY_FLOWS, w->last.sum.flows);
	fsd_add_u64(o, FS_KEY_UNDERCOUNTS, w->undercounts);
	fsd_add_double(o, FS_KEY_OVERCOUNT_MAX_EPS, fs_sample_check_overcount_max_eps(&w->last));
	fsd_add_double(o, FS_KEY_OVER_BOUND_SHARE, fs_sample_check_over_bound_share(&w->last));
	fsd_add_double(o, FS_KEY_DELTA, w->delta);
	fsd_add_double(o, FS_KEY_HLL_Z, w->last.z);
	fsd_add_u64(o, FS_KEY_HLL_WINDOWS, w->nz);
	fsd_add_double(o, FS_KEY_HLL_WITHIN_2SE, w->within);
	return o;
}

/* The keyed sample (--sample-rate; sample.h): its rate, buckets and
 * memory, or false when there is none. */
static struct json_object *sample_json(const struct fs_sketch_params *p)
{
	struct json_object *o;

	if (!p->sample_log2b)
		return json_object_new_boolean(false);
	o = json_object_new_object();
	fsd_add_u64(o, FS_KEY_RATE, 1ULL << p->sample_shift);
	fsd_add_u64(o, FS_KEY_BUCKETS, fs_params_sample_buckets(p));
	fsd_add_u64(o, "bytes_per_cpu",
		    FS_NSLOTS * fs_params_sample_buckets(p) * sizeof(struct fs_sample_bucket));
	return o;
}

/*
 * The detection sketches the datapath keeps (--detect; detect.h), each
 * with its sizes, or false when off.
 */
static struct json_object *detect_json(const struct fs_sketch_params *p)
{
	struct json_object *d = json_object_new_object(), *o;
	struct fs_prefix_params pp;
	struct fs_spread_params sp;

	fs_params_prefix(p, &pp);
	fs_params_spread(p, &sp);
	double miss;

	if (pp.log2_width) {
		o = json_object_new_object();
		fsd_add_u64(o, "depth", pp.depth);
		fsd_add_u64(o, "width", 1ULL << pp.log2_width);
		fsd_add_u64(o, "levels_drawn_from", fs_prefix_scale(&pp));
		fsd_add_u64(o, "bytes_per_cpu", (__u64)FS_NSLOTS *
			    fs_prefix_buckets(&pp) * sizeof(struct fs_prefix_bucket));
		fsd_add_double(o, "collisions_fraction", fs_prefix_collisions(&pp, &miss));
		fsd_add_double(o, "collisions_probability", miss);
		fsd_add_double(o, "sampling_sigma_per_root_packet", fs_prefix_sampling(&pp));
		fsd_add_double(o, "lines_per_packet", ldexp(pp.depth, -(int)pp.skip_shift));
		json_object_object_add(d, "prefixes", o);
	} else {
		json_object_object_add(d, "prefixes", json_object_new_boolean(0));
	}
	if (sp.log2_width) {
		o = json_object_new_object();
		fsd_add_u64(o, "depth", sp.depth);
		fsd_add_u64(o, "width", 1ULL << sp.log2_width);
		fsd_add_u64(o, "sampling", 1ULL << sp.sample_shift);
		fsd_add_u64(o, "bytes_per_cpu", (__u64)FS_NSLOTS *
			    fs_spread_buckets(&sp) * sizeof(struct fs_spread_bucket));
		fsd_add_double(o, "sharing_fraction", fs_spread_sharing(&sp, 1, &miss));
		fsd_add_double(o, "sharing_probability", miss);
		fsd_add_double(o, "relative_standard_error_large", fs_spread_sigma(&sp, 0));
		fsd_add_double(o, "lines_per_packet",
			       ldexp(FS_SPREAD_NSIDES * sp.depth, -(int)sp.sample_shift));
		json_object_object_add(d, "spread", o);
	} else {
		json_object_object_add(d, "spread", json_object_new_boolean(0));
	}
	return d;
}

static __u64 datapath_bytes_per_cpu(const struct fsd_view *v)
{
	__u64 sketch = fsd_object_sketch_bytes_per_cpu(&v->loader->obj);

	if (!sketch)
		sketch = fs_dp_percpu_bytes(&v->opts->params, FS_NSLOTS);
	return sketch + sizeof(struct fs_hot_line) + FS_STAT_MAX * sizeof(__u64);
}

static const char *const state_names[] = {
	[FSD_IFACE_ATTACHED] = "attached",
	[FSD_IFACE_GONE] = "gone",
	[FSD_IFACE_FAILED] = "failed",
};

/* What slot of s counted: {"packets", "bytes"}, since the datapath was
 * loaded; NULL if s is not set up or cannot be read. */
static struct json_object *ifcount_json(const struct fsd_ifslots *s, __u32 slot)
{
	struct fs_if_counts c;
	struct json_object *o;

	if (!s->t || !s->counted || fsd_ifslots_read(s, slot, &c))
		return NULL;
	o = json_object_new_object();
	fsd_add_u64(o, FS_KEY_PACKETS, c.packets);
	fsd_add_u64(o, FS_KEY_BYTES, c.bytes);
	return o;
}

/* What interface i (unattributed: no configured one) received ("in")
 * and sent ("out"): each frontend counting the -i interfaces, under its
 * direction. */
static void add_ifcounts(struct json_object *o, const struct fsd_view *v,
			 unsigned int i, bool unattributed)
{
	struct json_object *c;
	unsigned int k;

	for (k = 0; k < FSD_FE_MAX; k++) {
		const struct fsd_frontend *fe = &v->fe[k];

		if (!fe->loaded || !fe->counts)
			continue;
		c = ifcount_json(fe->counts, unattributed ? FS_IFSLOT_OTHER :
							    fe->counts->slot[i]);
		if (c)
			json_object_object_add(o, fe->ops->metrics_direction, c);
	}
}

/* One configured interface as it is now (ifwatch.h keeps it true), and
 * what it received ("in") and sent ("out", with the egress frontend). */
static struct json_object *iface_json(const struct fsd_view *v, unsigned int i)
{
	const struct fsd_loader *l = v->loader;
	const struct fsd_attachment *at = &l->ifaces[i];
	struct json_object *o = json_object_new_object();

	fsd_add_string(o, "name", at->iface->name);
	fsd_add_string(o, "state", state_names[at->state]);
	fsd_add_u64(o, "ifindex", (__u64)at->ifindex);
	fsd_add_string(o, "hook", v->fe[FSD_FE_IN].ops->hook);
	if (!l->ingress_tp)
		fsd_add_string(o, "xdp_mode", l->xdp_generic ? "generic" : "native");
	fsd_add_u64(o, "reattached", at->reattached);
	if (at->state == FSD_IFACE_FAILED)
		fsd_add_string(o, FS_KEY_ERROR, strerror(-at->err));
	add_ifcounts(o, v, i, false);
	return o;
}

/* Frames counted on no configured interface (maps.h, FS_IFSLOT_OTHER):
 * 0 but for an adopted link detached as the daemon starts. */
static struct json_object *unattributed_json(const struct fsd_view *v)
{
	struct json_object *o = json_object_new_object();

	add_ifcounts(o, v, 0, true);
	return o;
}

/* The policy in a line (flowsketch policy has the rest). */
static struct json_object *policy_json(const struct fsd_policy_state *ps)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, FS_KEY_FILE, json_object_new_string(ps->path));
	json_object_object_add(o, FS_KEY_DRY_RUN, json_object_new_boolean(ps->dry_run));
	json_object_object_add(o, FS_KEY_RULES, json_object_new_uint64(ps->pol.nrules));
	json_object_object_add(o, FS_KEY_ABOVE, json_object_new_uint64(ps->nhold));
	json_object_object_add(o, "blocked", json_object_new_uint64(ps->count[FSD_ACT_BLOCKED]));
	json_object_object_add(o, "dry_run_blocked", json_object_new_uint64(ps->count[FSD_ACT_DRY_RUN]));
	json_object_object_add(o, "limited", json_object_new_uint64(ps->count[FSD_ACT_LIMITED]));
	return o;
}

struct json_object *fsd_answer_status(const struct fsd_view *v)
{
	const struct fs_sketch_params *p = &v->opts->params;
	const struct fsd_frontend *in = &v->fe[FSD_FE_IN];
	struct json_object *a = json_object_new_object(), *o, *ifs;
	__u64 per_cpu = datapath_bytes_per_cpu(v), bytes;
	unsigned int i;
	int err;

	fsd_add_u64(a, "pid", (__u64)getpid());
	fsd_add_string(a, "pin_dir", v->opts->pin_dir);
	fsd_add_string(a, "datapath", v->loader->obj.kfunc ? "kfunc" : "bpf");
	/* Restarts (loader.h, winstore.h): whether this daemon took over a
	 * pinned datapath, and what its history has on disk. */
	json_object_object_add(a, "adopted", json_object_new_boolean(v->loader->obj.adopted));
	json_object_object_add(a, "keep", json_object_new_boolean(v->opts->keep));
	fsd_add_string(a, "state_dir", v->opts->state_dir);
	fsd_add_u64(a, "windows_restored", in->windows_restored);
	fsd_add_u64(a, "windows_stored", in->store.stored);
	fsd_add_u64(a, "windows_store_errors", in->store.errors);
	json_object_object_add(a, "state_dir_usable", json_object_new_boolean(in->store.usable));
	fsd_add_u64(a, "journal_errors", in->store.journal_errors);
	fsd_add_u64(a, "windows_evicted", in->store.evicted);
	/* The state directory's budget, shared by every frontend's store
	 * (statebudget.h): what is charged now, and windows given up for it
	 * (for_room: for want of free space rather than of budget). */
	o = json_object_new_object();
	fsd_add_u64(o, "max_bytes", v->budget->max);
	fsd_add_u64(o, "used_bytes", v->budget->used);
	fsd_add_u64(o, "windows_evicted", v->budget->evicted);
	fsd_add_u64(o, "windows_evicted_for_room", v->budget->no_room);
	json_object_object_add(a, "state_budget", o);
	ifs = json_object_new_array();
	for (i = 0; i < v->loader->n_ifaces; i++)
		json_object_array_add(ifs, iface_json(v, i));
	json_object_object_add(a, "interfaces", ifs);
	json_object_object_add(a, "unattributed", unattributed_json(v));
	fsd_add_u64(a, FS_KEY_WINDOW_SECONDS, v->opts->window_sec);
	fsd_add_u64(a, "history_seconds", v->opts->history_sec);
	fsd_add_u64(a, "windows_kept", in->history.count);

	o = json_object_new_object();
	fsd_add_u64(o, "cms_width", 1ULL << p->cms_log2_width);
	fsd_add_u64(o, "cms_depth", p->cms_depth);
	fsd_add_double(o, FS_KEY_EPSILON, fs_cms_epsilon(p));
	fsd_add_double(o, FS_KEY_DELTA, fs_cms_delta(p));
	json_object_object_add(o, "conservative", json_object_new_boolean(
			!!(p->flags & FS_PARAM_F_CONSERVATIVE)));
	fsd_add_u64(o, FS_KEY_HLL_PRECISION, p->hll_p);
	fsd_add_double(o, "hll_relative_standard_error", fs_hll_rse(p->hll_p));
	json_object_object_add(o, "detect", detect_json(p));
	json_object_object_add(o, FS_KEY_SAMPLE, sample_json(p));
	json_object_object_add(a, "params", o);

	o = json_object_new_object();
	fsd_add_u64(o, "datapath_bytes_per_cpu", per_cpu);
	fsd_add_u64(o, "datapath_bytes", per_cpu * v->loader->obj.ncpus +
		(__u64)v->opts->ringbuf_kib * 1024 + sizeof(struct fs_ctl));
	/* Every frontend's history (the worst case too, from cmdline.h
	 * through the view). */
	for (i = 0, bytes = 0; i < FSD_FE_MAX; i++)
		if (v->fe[i].history_ready)
			bytes += fsd_history_bytes(&v->fe[i].history);
	fsd_add_u64(o, "history_bytes", bytes);
	fsd_add_u64(o, "history_bytes_max", v->history_max_bytes);
	/* What a packet costs in memory traffic, from the running layout. */
	fsd_add_u64(o, "sketch_lines_per_packet",
		fs_sketch_lines_per_packet(p->cms_depth));
	fsd_add_u64(o, "fixed_lines_per_packet", FS_FIXED_LINES_PER_PACKET);
	/* The per-CPU bytes those lines come from: the open slot's narrow
	 * cells and packed registers (sketch_kind.h). */
	fsd_add_u64(o, "packet_bytes_per_cpu", fs_dp_packet_bytes(p));
	json_object_object_add(a, "memory", o);

	o = json_object_new_object();
	fsd_add_u64(o, FS_KEY_PACKETS, in->history.totals.packets);
	fsd_add_u64(o, FS_KEY_BYTES, in->history.totals.bytes);
	json_object_object_add(a, "totals", o);

	o = counters_json(v, &err);
	if (!o) {
		json_object_put(a);
		return fsd_answer_error("cannot read the datapath counters: %s",
					strerror(-err));
	}
	json_object_object_add(a, "counters", o);
	/* None with --ingress tracepoint, which cannot drop. */
	if (v->blocklist->started)
		json_object_object_add(a, FS_KEY_BLOCKLIST, fsd_blocklist_status(v->blocklist));
	json_object_object_add(a, "frontends", frontends_json(v));
	if (v->policy && v->policy->path)
		json_object_object_add(a, FS_KEY_POLICY, policy_json(v->policy));
	if (v->accuracy && v->accuracy->on)
		json_object_object_add(a, FS_KEY_ACCURACY, accuracy_json(v->accuracy));
	return a;
}
