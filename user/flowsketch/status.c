// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * status.c - `flowsketch status`: what the daemon runs and what it costs.
 *
 * Besides the raw parameters it states the guarantees they imply, so an
 * operator need not recall the formulas: Count-Min counts are never low
 * and at most eps * N high with probability 1 - delta (eps = e/w,
 * delta = e^-d); HyperLogLog estimates are within 1.04/sqrt(m) at one
 * sigma.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "keys.h"
#include "args.h"
#include "cli.h"
#include "client.h"
#include "format.h"
#include "reply.h"
#include "show.h"
#include "flowsketch/params.h"

struct status_view {
	__u64 pid, window_seconds, history_seconds, windows_kept;
	const char *pin_dir, *datapath, *state_dir;
	bool adopted, keep, state_usable;
	__u64 journal_errors;
	__u64 windows_restored, windows_stored, windows_store_errors;
	struct json_object *interfaces, *malformed, *unattributed;
	__u64 cms_width, cms_depth, hll_precision;
	double epsilon, delta, hll_rse;
	bool conservative;
	__u64 mem_per_cpu, mem_datapath, mem_history, mem_history_max;
	__u64 sketch_lines, fixed_lines, packet_bytes;
	__u64 total_packets, total_bytes;
	__u64 rx, sketched, non_ip, fragments, malformed_total;
	__u64 reports, reports_dropped, update_errors;
	__u64 windows_finished, windows_lost, rotations_postponed;
	__u64 rotations_late, rotation_late_max_us;
	__u64 clients_refused, client_timeouts;
};

static const struct fs_opt status_opts[] = {
	{ "json", 'j', NULL, NULL, 0, 0, 0, NULL, "print the daemon's answer as JSON" },
	{ "help", 'h', NULL, fs_opt_show_help, 0, 0, 0, NULL, "this text" },
	{ 0 }
};

const struct fs_optset fs_status_optset = {
	.name = "status",
	.usage =
	"Usage: flowsketch [--socket PATH] [--timeout SECONDS] status [--json]\n"
	"\n"
	"The daemon's interfaces, windows, sketch parameters and the error bounds\n"
	"they give, memory, traffic totals and datapath counters.\n"
	"\n",
	.opts = status_opts,
	.help_col = 15,
	.getopt_error = fs_cli_getopt_error,
};

/* What obj received ("in") and sent ("out"), where it has them. */
static int check_counts(struct json_object *obj)
{
	__u64 u;
	int err;

	if (json_object_object_get_ex(obj, "in", NULL) &&
	    ((err = fs_reply_u64(obj, "in.packets", &u)) ||
	     (err = fs_reply_u64(obj, "in.bytes", &u))))
		return err;
	if (json_object_object_get_ex(obj, "out", NULL) &&
	    ((err = fs_reply_u64(obj, "out.packets", &u)) ||
	     (err = fs_reply_u64(obj, "out.bytes", &u))))
		return err;
	return 0;
}

static int parse_interfaces(struct json_object *ifs)
{
	size_t i, n = json_object_array_length(ifs);
	const char *s;
	__u64 u;
	int err;

	for (i = 0; i < n; i++) {
		struct json_object *itf = json_object_array_get_idx(ifs, i);

		struct json_object *hook = NULL;

		/* An XDP interface has its mode; the receive tracepoint
		 * (--ingress tracepoint) has none. */
		if ((err = fs_reply_string(itf, "name", &s)) ||
		    (err = fs_reply_string(itf, "state", &s)) ||
		    (err = fs_reply_u64(itf, "ifindex", &u)) ||
		    (err = fs_reply_u64(itf, "reattached", &u)))
			return err;
		if (json_object_object_get_ex(itf, "hook", &hook) &&
		    (err = fs_reply_string(itf, "hook", &s)))
			return err;
		if ((!hook || !strcmp(s, "xdp")) &&
		    (err = fs_reply_string(itf, "xdp_mode", &s)))
			return err;
		/* What it received and sent, where the daemon counts it. */
		if ((err = check_counts(itf)))
			return err;
	}
	return 0;
}

/* Optional (daemons before the per-interface counts have none). */
static int parse_unattributed(struct json_object *a, struct json_object **out)
{
	*out = NULL;
	if (!json_object_object_get_ex(a, "unattributed", out))
		return 0;
	return check_counts(*out);
}

/*
 * The reasons are keys, which fs_reply_string() cannot clean in place, and
 * they are the datapath's own identifiers (trunc_eth, ...): anything else
 * is not an answer of ours, so it is refused rather than cleaned.
 */
static bool is_reason(const char *s)
{
	size_t len = strlen(s);

	return len && len <= 32 &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_") == len;
}

static int parse_status(struct json_object *a, struct status_view *v)
{
	int err;

	if ((err = fs_reply_u64(a, "pid", &v->pid)) ||
	    (err = fs_reply_string(a, "pin_dir", &v->pin_dir)) ||
	    (err = fs_reply_string(a, "datapath", &v->datapath)) ||
	    (err = fs_reply_bool(a, "adopted", &v->adopted)) ||
	    (err = fs_reply_bool(a, "keep", &v->keep)) ||
	    (err = fs_reply_string(a, "state_dir", &v->state_dir)) ||
	    (err = fs_reply_u64(a, "windows_restored", &v->windows_restored)) ||
	    (err = fs_reply_u64(a, "windows_stored", &v->windows_stored)) ||
	    (err = fs_reply_u64(a, "windows_store_errors", &v->windows_store_errors)) ||
	    (err = fs_reply_bool(a, "state_dir_usable", &v->state_usable)) ||
	    (err = fs_reply_u64(a, "journal_errors", &v->journal_errors)) ||
	    (err = fs_reply_array(a, "interfaces", &v->interfaces)) ||
	    (err = parse_unattributed(a, &v->unattributed)) ||
	    (err = parse_interfaces(v->interfaces)) ||
	    (err = fs_reply_u64(a, FS_KEY_WINDOW_SECONDS, &v->window_seconds)) ||
	    (err = fs_reply_u64(a, "history_seconds", &v->history_seconds)) ||
	    (err = fs_reply_u64(a, "windows_kept", &v->windows_kept)) ||
	    (err = fs_reply_u64(a, "params.cms_width", &v->cms_width)) ||
	    (err = fs_reply_u64(a, "params.cms_depth", &v->cms_depth)) ||
	    (err = fs_reply_double(a, "params.epsilon", &v->epsilon)) ||
	    (err = fs_reply_double(a, "params.delta", &v->delta)) ||
	    (err = fs_reply_bool(a, "params.conservative", &v->conservative)) ||
	    (err = fs_reply_u64_in(a, "params.hll_precision", FS_HLL_MIN_P,
				   FS_HLL_MAX_P, &v->hll_precision)) ||
	    (err = fs_reply_double(a, "params.hll_relative_standard_error", &v->hll_rse)) ||
	    (err = fs_reply_u64(a, "memory.datapath_bytes_per_cpu", &v->mem_per_cpu)) ||
	    (err = fs_reply_u64(a, "memory.sketch_lines_per_packet", &v->sketch_lines)) ||
	    (err = fs_reply_u64(a, "memory.fixed_lines_per_packet", &v->fixed_lines)) ||
	    (err = fs_reply_u64(a, "memory.packet_bytes_per_cpu", &v->packet_bytes)) ||
	    (err = fs_reply_u64(a, "memory.datapath_bytes", &v->mem_datapath)) ||
	    (err = fs_reply_u64(a, "memory.history_bytes", &v->mem_history)) ||
	    (err = fs_reply_u64(a, "memory.history_bytes_max", &v->mem_history_max)) ||
	    (err = fs_reply_u64(a, "totals.packets", &v->total_packets)) ||
	    (err = fs_reply_u64(a, "totals.bytes", &v->total_bytes)) ||
	    (err = fs_reply_u64(a, "counters.rx", &v->rx)) ||
	    (err = fs_reply_u64(a, "counters.sketched", &v->sketched)) ||
	    (err = fs_reply_u64(a, "counters.non_ip", &v->non_ip)) ||
	    (err = fs_reply_u64(a, "counters.fragments", &v->fragments)) ||
	    (err = fs_reply_object(a, "counters.malformed", &v->malformed)) ||
	    (err = fs_reply_u64(a, "counters.malformed_total", &v->malformed_total)) ||
	    (err = fs_reply_u64(a, "counters.reports", &v->reports)) ||
	    (err = fs_reply_u64(a, "counters.reports_dropped", &v->reports_dropped)) ||
	    (err = fs_reply_u64(a, "counters.update_errors", &v->update_errors)) ||
	    (err = fs_reply_u64(a, "counters.windows_finished", &v->windows_finished)) ||
	    (err = fs_reply_u64(a, "counters.windows_lost", &v->windows_lost)) ||
	    (err = fs_reply_u64(a, "counters.rotations_postponed", &v->rotations_postponed)) ||
	    (err = fs_reply_u64(a, "counters.rotations_late", &v->rotations_late)) ||
	    (err = fs_reply_u64(a, "counters.rotation_late_max_us", &v->rotation_late_max_us)) ||
	    (err = fs_reply_u64(a, "counters.clients_refused", &v->clients_refused)) ||
	    (err = fs_reply_u64(a, "counters.client_timeouts", &v->client_timeouts)))
		return err;
	/* Every malformed reason is a count; checked here, printed below. */
	json_object_object_foreach(v->malformed, reason, count) {
		if (!is_reason(reason))
			return fs_bad_answer("flowsketchd's answer to status has a malformed reason that is not a name (a to z, 0 to 9, _)");
		if (!json_object_is_type(count, json_type_int) ||
		    json_object_get_int64(count) < 0)
			return fs_bad_answer("flowsketchd's answer to status has no non-negative integer \"counters.malformed.%s\"",
					     reason);
	}
	return 0;
}

/*
 * One interface per line, as the daemon sees it now: an attached one by
 * ifindex and XDP mode as before, and how often it came back; one that is
 * gone or could not be attached says so, since its traffic is not counted.
 */
static void print_interface(struct json_object *itf)
{
	const char *name, *state, *mode = NULL, *error = NULL;
	char how[32] = "receive tracepoint";
	__u64 ifindex, reattached;
	struct json_object *e;

	fs_reply_string(itf, "name", &name);
	fs_reply_string(itf, "state", &state);
	fs_reply_u64(itf, "ifindex", &ifindex);
	if (json_object_object_get_ex(itf, "xdp_mode", &e)) {
		fs_reply_string(itf, "xdp_mode", &mode);
		snprintf(how, sizeof(how), "XDP %s", mode);
	}
	fs_reply_u64(itf, "reattached", &reattached);
	if (json_object_object_get_ex(itf, FS_KEY_ERROR, &e))
		error = json_object_get_string(e);
	if (!strcmp(state, "attached"))
		printf("%s (ifindex %llu, %s", name,
		       (unsigned long long)ifindex, how);
	else if (!strcmp(state, "gone"))
		printf("%s (gone, not counted", name);
	else
		printf("%s (ifindex %llu, %s%s%s, not counted", name,
		       (unsigned long long)ifindex, state,
		       error ? ": " : "", error ? error : "");
	if (reattached)
		printf(", re-attached %llu time%s", (unsigned long long)reattached,
		       reattached == 1 ? "" : "s");
	printf(")");
}

/* "  veth0          in  1,234 packets (56.7 kB)  out ..., since load":
 * each direction obj has. */
static void print_counts(const char *label, struct json_object *obj)
{
	static const char *const dirs[] = { "in", "out" };
	char path[16], p[FS_FMT_MAX], b[FS_FMT_MAX];
	__u64 packets, bytes;
	int i;

	printf("  %-12s", label);
	for (i = 0; i < 2; i++) {
		if (!json_object_object_get_ex(obj, dirs[i], NULL))
			continue;
		snprintf(path, sizeof(path), "%s.packets", dirs[i]);
		fs_reply_u64(obj, path, &packets);
		snprintf(path, sizeof(path), "%s.bytes", dirs[i]);
		fs_reply_u64(obj, path, &bytes);
		printf("  %-3s %s packets (%s)", dirs[i], fs_fmt_grouped(p, packets),
		       fs_fmt_bytes(b, (double)bytes));
	}
	printf(", since load\n");
}

static void print_interfaces(const struct status_view *v)
{
	size_t i, n = json_object_array_length(v->interfaces);
	__u64 in = 0, out = 0;

	printf("interfaces:   ");
	if (!n)
		printf("none");
	for (i = 0; i < n; i++) {
		if (i)
			printf(", ");
		print_interface(json_object_array_get_idx(v->interfaces, i));
	}
	printf("\n");
	/* Per interface, since the datapath was loaded. */
	for (i = 0; i < n; i++) {
		struct json_object *itf = json_object_array_get_idx(v->interfaces, i);
		const char *name;

		if (!json_object_object_get_ex(itf, "in", NULL) &&
		    !json_object_object_get_ex(itf, "out", NULL))
			continue;
		fs_reply_string(itf, "name", &name);
		print_counts(name, itf);
	}
	/* Frames of no -i interface: shown only when there are some. */
	if (!v->unattributed)
		return;
	if (json_object_object_get_ex(v->unattributed, "in", NULL))
		fs_reply_u64(v->unattributed, "in.packets", &in);
	if (json_object_object_get_ex(v->unattributed, "out", NULL))
		fs_reply_u64(v->unattributed, "out.packets", &out);
	if (in || out)
		print_counts("(no -i)", v->unattributed);
}

static void print_sketches(const struct status_view *v)
{
	char w[FS_FMT_MAX], eps[FS_FMT_MAX], prob[FS_FMT_MAX];
	char regs[FS_FMT_MAX], rse[FS_FMT_MAX], rse2[FS_FMT_MAX];

	printf("count-min:    width %s x depth %llu, epsilon %s, delta %s, conservative update %s\n",
	       fs_fmt_grouped(w, v->cms_width), (unsigned long long)v->cms_depth,
	       fs_fmt_percent(eps, v->epsilon, 3),
	       fs_fmt_percent(prob, v->delta, 2), v->conservative ? "on" : "off");
	printf("              counts are never below the truth, and above it by at most %s of\n"
	       "              the span's total with probability %s\n",
	       eps, fs_fmt_percent(prob, 1 - v->delta, 1));
	printf("hyperloglog:  precision p = %llu (%s registers per sketch)\n",
	       (unsigned long long)v->hll_precision,
	       fs_fmt_grouped(regs, 1ULL << v->hll_precision));
	printf("              distinct counts within \u00b1%s at 1 sigma (68%%), \u00b1%s at 2 sigma (95%%)\n",
	       fs_fmt_percent(rse, v->hll_rse, 2),
	       fs_fmt_percent(rse2, 2 * v->hll_rse, 2));
}

/*
 * The detection sketches (--detect): on with their memory and the error
 * terms of prefix.h's and spread.h's "Error", or off.  A daemon of an
 * earlier release says nothing of them, and neither does this.
 */
static void print_detect(struct json_object *a)
{
	char m[FS_FMT_MAX], f[FS_FMT_MAX], p[FS_FMT_MAX], e[FS_FMT_MAX];
	struct json_object *det, *o;
	double frac, prob, sig, lines;
	__u64 bytes, d, w, x;

	if (!json_object_object_get_ex(a, "params", &det) ||
	    !json_object_object_get_ex(det, "detect", &det))
		return;
	if (!json_object_object_get_ex(det, "prefixes", &o) ||
	    !json_object_is_type(o, json_type_object))
		printf("prefixes:     off (flowsketchd --detect prefixes)\n");
	else if (!fs_reply_u64(o, "depth", &d) && !fs_reply_u64(o, "width", &w) &&
		 !fs_reply_u64(o, "levels_drawn_from", &x) &&
		 !fs_reply_u64(o, "bytes_per_cpu", &bytes) &&
		 !fs_reply_double(o, "collisions_fraction", &frac) &&
		 !fs_reply_double(o, "collisions_probability", &prob) &&
		 !fs_reply_double(o, "sampling_sigma_per_root_packet", &sig) &&
		 !fs_reply_double(o, "lines_per_packet", &lines))
		printf("prefixes:     width %llu x depth %llu, one of %llu levels a packet, %s per CPU, %.2g lines a packet\n"
		       "              above the truth by at most %s of the packets (probability %s) plus %.3g sqrt(N) a prefix of N at 1 sigma\n",
		       (unsigned long long)w, (unsigned long long)d,
		       (unsigned long long)x, fs_fmt_bytes_iec(m, (double)bytes), lines,
		       fs_fmt_percent(f, frac, 2), fs_fmt_percent(p, 1 - prob, 1), sig);
	if (!json_object_object_get_ex(det, "spread", &o) ||
	    !json_object_is_type(o, json_type_object))
		printf("spread:       off (flowsketchd --detect spread)\n");
	else if (!fs_reply_u64(o, "depth", &d) && !fs_reply_u64(o, "width", &w) &&
		 !fs_reply_u64(o, "sampling", &x) &&
		 !fs_reply_u64(o, "bytes_per_cpu", &bytes) &&
		 !fs_reply_double(o, "sharing_fraction", &frac) &&
		 !fs_reply_double(o, "sharing_probability", &prob) &&
		 !fs_reply_double(o, "relative_standard_error_large", &sig) &&
		 !fs_reply_double(o, "lines_per_packet", &lines))
		printf("spread:       width %llu x depth %llu a side, 1 element in %llu, %s per CPU, %.2g lines a packet\n"
		       "              within \u00b1%s (1 sigma, many peers) plus at most %s of the distinct flows (probability %s)\n",
		       (unsigned long long)w, (unsigned long long)d,
		       (unsigned long long)x, fs_fmt_bytes_iec(m, (double)bytes), lines,
		       fs_fmt_percent(e, sig, 1), fs_fmt_percent(f, frac, 2),
		       fs_fmt_percent(p, 1 - prob, 1));
	if (!json_object_object_get_ex(a, "params", &det) ||
	    !json_object_object_get_ex(det, FS_KEY_SAMPLE, &o))
		return;
	if (!json_object_is_type(o, json_type_object))
		printf("sample:       off (flowsketchd --sample-rate 1/N; flowsketch accuracy)\n");
	else if (!fs_reply_u64(o, FS_KEY_RATE, &x) && !fs_reply_u64(o, FS_KEY_BUCKETS, &w) &&
		 !fs_reply_u64(o, "bytes_per_cpu", &bytes))
		printf("sample:       1 flow in %llu counted exactly too, %llu buckets of 7, %s per CPU\n",
		       (unsigned long long)x, (unsigned long long)w,
		       fs_fmt_bytes_iec(m, (double)bytes));
}

static void print_counters(const struct status_view *v)
{
	char a[FS_FMT_MAX], b[FS_FMT_MAX], c[FS_FMT_MAX], d[FS_FMT_MAX];
	bool first = true;

	printf("totals:       %s packets, %s in finished windows\n",
	       fs_fmt_grouped(a, v->total_packets),
	       fs_fmt_bytes(b, (double)v->total_bytes));
	printf("datapath:     %s frames seen, %s sketched, %s not IP, %s fragments\n",
	       fs_fmt_grouped(a, v->rx), fs_fmt_grouped(b, v->sketched),
	       fs_fmt_grouped(c, v->non_ip), fs_fmt_grouped(d, v->fragments));
	printf("malformed:    %s", fs_fmt_grouped(a, v->malformed_total));
	json_object_object_foreach(v->malformed, reason, count) {
		__u64 n = json_object_get_uint64(count);

		if (!n)
			continue;
		printf("%s%s %s", first ? " (" : ", ", reason,
		       fs_fmt_grouped(a, n));
		first = false;
	}
	printf("%s\n", first ? "" : ")");
	printf("reports:      %s heavy-hitter reports, %s dropped (ring buffer full), %s update errors\n",
	       fs_fmt_grouped(a, v->reports), fs_fmt_grouped(b, v->reports_dropped),
	       fs_fmt_grouped(c, v->update_errors));
	/* A late rotation makes a longer window, a lost one a gap: both
	 * change what a span covers, so both are shown. */
	printf("rotations:    %s windows closed, %s lost, %s put off, %s late (10 ms or more; latest by at most %.1f ms)\n",
	       fs_fmt_grouped(a, v->windows_finished),
	       fs_fmt_grouped(b, v->windows_lost),
	       fs_fmt_grouped(c, v->rotations_postponed),
	       fs_fmt_grouped(d, v->rotations_late),
	       (double)v->rotation_late_max_us / 1000);
	printf("clients:      %s refused (too many at once), %s dropped at their deadline\n",
	       fs_fmt_grouped(a, v->clients_refused),
	       fs_fmt_grouped(b, v->client_timeouts));
}

/*
 * One line a tracepoint frontend (egress, conn; the first, XDP or the
 * receive tracepoint, is the top level's counters above), when the daemon
 * lists them (older ones do not): checked like the rest, then printed.
 * The connection frontend's totals are connections, not packets.
 */
static int print_frontends(struct json_object *a, bool print)
{
	struct json_object *fronts, *f, *t;
	const char *name, *hook, *datapath;
	__u64 rx, malformed, misses, lost, x, y;
	char b1[FS_FMT_MAX], b2[FS_FMT_MAX], b3[FS_FMT_MAX];
	size_t i, n;
	int err;

	if (!json_object_object_get_ex(a, "frontends", &fronts))
		return 0;
	if ((err = fs_reply_array(a, "frontends", &fronts)))
		return err;
	n = json_object_array_length(fronts);
	for (i = 1; i < n; i++) {
		bool conn;

		f = json_object_array_get_idx(fronts, i);
		if ((err = fs_reply_string(f, "name", &name)) ||
		    (err = fs_reply_string(f, "hook", &hook)) ||
		    (err = fs_reply_string(f, "datapath", &datapath)) ||
		    (err = fs_reply_u64(f, "rx", &rx)) ||
		    (err = fs_reply_u64(f, "malformed_total", &malformed)) ||
		    (err = fs_reply_u64(f, "recursion_misses", &misses)) ||
		    (err = fs_reply_u64(f, "windows_lost", &lost)) ||
		    (err = fs_reply_object(f, "totals", &t)))
			return err;
		conn = json_object_object_get_ex(t, FS_KEY_CONNECTIONS, NULL);
		if ((err = fs_reply_u64(t, conn ? "connections" : "packets", &x)) ||
		    (err = fs_reply_u64(t, conn ? "established" : "bytes", &y)))
			return err;
		if (!print)
			continue;
		printf("%-14s%s (%s, %s): %s %s, ", i == 1 ? "frontends:" : "", name,
		       hook, datapath, fs_fmt_grouped(b1, rx),
		       conn ? "state changes" : "frames");
		if (conn)
			printf("%s connections opened, %s established",
			       fs_fmt_grouped(b2, x), fs_fmt_grouped(b3, y));
		else
			printf("%s malformed, %s packets, %s", fs_fmt_grouped(b2, malformed),
			       fs_fmt_grouped(b3, x), fs_fmt_bytes(b1, (double)y));
		printf(" in finished windows; %llu recursion misses, %llu windows lost\n",
		       (unsigned long long)misses, (unsigned long long)lost);
	}
	return 0;
}

/*
 * The blocklist section, when the daemon has one (older ones do not):
 * its shape is checked like the rest, then printed.
 */
static int print_blocklist(struct json_object *a, bool print)
{
	struct json_object *bl;
	const char *file;
	__u64 entries, max, fbytes, k, checked, probes, maybe, dropped, dbytes, rebuilds;
	__u64 unjudged = 0;
	double fill, design, measured, target;
	char x[FS_FMT_MAX], y[FS_FMT_MAX], z[FS_FMT_MAX], w[FS_FMT_MAX];
	char u[FS_FMT_MAX], t[FS_FMT_MAX];
	int err;

	if (!json_object_object_get_ex(a, FS_KEY_BLOCKLIST, &bl))
		return 0;
	if ((err = fs_reply_string(bl, "file", &file)) ||
	    (err = fs_reply_u64(bl, FS_KEY_ENTRIES, &entries)) ||
	    (err = fs_reply_u64(bl, "max_entries", &max)) ||
	    (err = fs_reply_u64(bl, "filter_bytes", &fbytes)) ||
	    (err = fs_reply_u64(bl, "filter_k", &k)) ||
	    (err = fs_reply_double(bl, "fill_ratio", &fill)) ||
	    (err = fs_reply_double(bl, "design_fpr", &design)) ||
	    (err = fs_reply_double(bl, "measured_fpr", &measured)) ||
	    (err = fs_reply_double(bl, "target_fpr", &target)) ||
	    (err = fs_reply_u64(bl, "checked_packets", &checked)) ||
	    (err = fs_reply_u64(bl, "probes", &probes)) ||
	    (err = fs_reply_u64(bl, "maybe", &maybe)) ||
	    (err = fs_reply_u64(bl, "dropped_packets", &dropped)) ||
	    (err = fs_reply_u64(bl, "dropped_bytes", &dbytes)) ||
	    (err = fs_reply_u64(bl, "rebuilds", &rebuilds)))
		return err;
	/* Absent from a daemon older than the deep-VLAN rule. */
	if (json_object_object_get_ex(bl, "unjudged_dropped_packets", NULL) &&
	    (err = fs_reply_u64(bl, "unjudged_dropped_packets", &unjudged)))
		return err;
	if (!print)
		return 0;
	printf("blocklist:    %s entries (at most %s) kept in %s\n",
	       fs_fmt_grouped(x, entries), fs_fmt_grouped(y, max), file);
	printf("              filter %s, k %llu, %s of its bits set; false positives %s per probe by design (target %s), %s measured\n",
	       fs_fmt_bytes_iec(x, (double)fbytes), (unsigned long long)k,
	       fs_fmt_percent(y, fill, 1), fs_fmt_percent(z, design, 3),
	       fs_fmt_percent(w, target, 1), fs_fmt_percent(u, measured, 3));
	printf("              %s packets checked, %s probes, %s maybe, %s dropped (%s), %s rebuilds\n",
	       fs_fmt_grouped(x, checked), fs_fmt_grouped(y, probes),
	       fs_fmt_grouped(z, maybe), fs_fmt_grouped(w, dropped),
	       fs_fmt_bytes(u, (double)dbytes), fs_fmt_grouped(t, rebuilds));
	if (unjudged)
		printf("              %s frames dropped unjudged (more VLAN tags than the datapath walks)\n",
		       fs_fmt_grouped(x, unjudged));
	return 0;
}

/* The policy's line, when the daemon runs one (absent otherwise). */
static int print_policy(struct json_object *a, bool print)
{
	__u64 rules, above, blocked, dry, limited;
	struct json_object *p;
	const char *file;
	bool dry_run;
	int err;

	if (!json_object_object_get_ex(a, FS_KEY_POLICY, &p))
		return 0;
	if ((err = fs_reply_string(p, FS_KEY_FILE, &file)) ||
	    (err = fs_reply_bool(p, FS_KEY_DRY_RUN, &dry_run)) ||
	    (err = fs_reply_u64(p, FS_KEY_RULES, &rules)) ||
	    (err = fs_reply_u64(p, FS_KEY_ABOVE, &above)) ||
	    (err = fs_reply_u64(p, "blocked", &blocked)) ||
	    (err = fs_reply_u64(p, "dry_run_blocked", &dry)) ||
	    (err = fs_reply_u64(p, "limited", &limited)))
		return err;
	if (print)
		printf("policy:       %llu rules from %s%s; %llu keys above one now; %llu blocked, %llu in dry run, %llu held back by its limit\n",
		       (unsigned long long)rules, file, dry_run ? " (dry run)" : "",
		       (unsigned long long)above, (unsigned long long)blocked,
		       (unsigned long long)dry, (unsigned long long)limited);
	return 0;
}

/* The keyed sample's line (flowsketchd --sample-rate; absent otherwise):
 * the alarm state of the last window's check and its figures. */
static int print_accuracy(struct json_object *a, bool print)
{
	__u64 windows, flows, under, nz;
	double over_max, over_share, delta, z, within;
	struct json_object *o, *why;
	bool alarm;
	size_t i;
	int err;

	if (!json_object_object_get_ex(a, FS_KEY_ACCURACY, &o))
		return 0;
	if ((err = fs_reply_bool(o, FS_KEY_ALARM, &alarm)) ||
	    (err = fs_reply_u64(o, FS_KEY_WINDOWS, &windows)) ||
	    (err = fs_reply_u64(o, FS_KEY_FLOWS, &flows)) ||
	    (err = fs_reply_u64(o, FS_KEY_UNDERCOUNTS, &under)) ||
	    (err = fs_reply_double(o, FS_KEY_OVERCOUNT_MAX_EPS, &over_max)) ||
	    (err = fs_reply_double(o, FS_KEY_OVER_BOUND_SHARE, &over_share)) ||
	    (err = fs_reply_double(o, FS_KEY_DELTA, &delta)) ||
	    (err = fs_reply_double(o, FS_KEY_HLL_Z, &z)) ||
	    (err = fs_reply_u64(o, FS_KEY_HLL_WINDOWS, &nz)) ||
	    (err = fs_reply_double(o, FS_KEY_HLL_WITHIN_2SE, &within)))
		return err;
	if (!json_object_object_get_ex(o, FS_KEY_ALARMS, &why) ||
	    !json_object_is_type(why, json_type_array))
		return fs_bad_answer("flowsketchd's answer has no list of accuracy alarms");
	if (!print)
		return 0;
	printf("accuracy:     ");
	if (alarm) {
		printf("ALARM");
		for (i = 0; i < json_object_array_length(why); i++)
			printf(" %s", json_object_get_string(json_object_array_get_idx(why, i)));
	} else {
		printf("ok");
	}
	printf(" (%llu windows checked); last window %llu sampled flows, %.2f eps N at most, %.2f%% over eps N (design %.2f%%), HyperLogLog z %.2f; %.0f%% of %llu windows within 2 SE; %llu undercounts ever\n",
	       (unsigned long long)windows, (unsigned long long)flows, over_max,
	       100 * over_share, 100 * delta, z, 100 * within, (unsigned long long)nz,
	       (unsigned long long)under);
	return 0;
}

static void print_status(const struct status_view *v)
{
	char a[FS_FMT_MAX], b[FS_FMT_MAX], c[FS_FMT_MAX], m[FS_FMT_MAX];

	printf("flowsketchd:  pid %llu, datapath %s, maps pinned in %s\n",
	       (unsigned long long)v->pid, v->datapath, v->pin_dir);
	printf("restarts:     %s; %llu windows read back, %llu stored in %s (%llu could not be%s)%s\n",
	       v->adopted ? "adopted the pinned datapath" : "loaded afresh",
	       (unsigned long long)v->windows_restored,
	       (unsigned long long)v->windows_stored, v->state_dir,
	       (unsigned long long)v->windows_store_errors,
	       v->state_usable ? "" : "; the directory is unusable",
	       v->keep ? "; a stop keeps it all (--keep)" : "");
	if (v->journal_errors)
		printf("              %llu candidate records could not be journaled\n",
		       (unsigned long long)v->journal_errors);
	print_interfaces(v);
	printf("windows:      %llu s each, history %llu s (%llu windows kept)\n",
	       (unsigned long long)v->window_seconds,
	       (unsigned long long)v->history_seconds,
	       (unsigned long long)v->windows_kept);
	print_sketches(v);
	printf("memory:       %s per CPU in the datapath, %s on all CPUs, %s of history (at most %s)\n",
	       fs_fmt_bytes_iec(a, (double)v->mem_per_cpu),
	       fs_fmt_bytes_iec(b, (double)v->mem_datapath),
	       fs_fmt_bytes_iec(c, (double)v->mem_history),
	       fs_fmt_bytes_iec(m, (double)v->mem_history_max));
	printf("per packet:   %llu cache lines random per flow (d Count-Min cells, 3 HyperLogLog registers), %llu the same for all\n",
	       (unsigned long long)v->sketch_lines,
	       (unsigned long long)v->fixed_lines);
	printf("working set:  %s per CPU a packet can touch (the open window's narrow cells and packed registers)\n",
	       fs_fmt_bytes_iec(a, (double)v->packet_bytes));
	print_counters(v);
}

int fs_status_show(struct json_object *answer, bool print)
{
	struct status_view v = { 0 };
	int err;

	err = parse_status(answer, &v);
	if (!err)
		err = print_frontends(answer, false);
	if (!err)
		err = print_blocklist(answer, false);
	if (!err)
		err = print_policy(answer, false);
	if (!err)
		err = print_accuracy(answer, false);
	if (!err && print) {
		print_status(&v);
		print_detect(answer);
		print_frontends(answer, true);
		print_blocklist(answer, true);
		print_policy(answer, true);
		print_accuracy(answer, true);
	}
	return err;
}

int fs_cmd_status(const struct fs_cli *cli, int argc, char **argv)
{
	bool json = false;	/* --json, the options' only field (offset 0) */
	int ret;

	ret = fs_cli_parse_all(&fs_status_optset, argc, argv, &json);
	if (ret)
		return ret == FS_HELP_SHOWN ? FS_EXIT_OK : ret;
	return fs_client_show(cli, fs_request("status"), json, fs_status_show);
}
