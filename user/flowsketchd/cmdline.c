// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* cmdline.c - flowsketchd's command line (cmdline.h). */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "flowsketch/maps.h"
#include "protocol.h"
#include "blocklist/blocklist.h"
#include "frontends/frontend.h"
#include "sizing.h"
#include "sketch.h"
#include "base/log.h"
#include "windows/history.h"
#include "service/metrics.h"
#include "cmdline.h"
#include "service/access.h"
#include "service/server.h"
#include "windows/statebudget.h"
#include "service/workers.h"
#include "opttable.h"

#define STR_(x) #x
#define STR(x) STR_(x)
/* The field of struct fsd_options a row stores into. */
#define FIELD(o, type) ((type *)((char *)(o) + opt->off))

/*
 * A whole decimal number in the row's [min, max], stored at its field (a
 * __u8 with u8, else an unsigned int) and in *out when out is given: 0,
 * or -EINVAL with a message.
 */
static int parse_uint(const struct fs_opt *opt, const char *s, void *o, bool u8,
		      unsigned long long *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (!*s || *end || errno || *s == '-' || v < (unsigned long long)opt->min ||
	    v > (unsigned long long)opt->max)
		return fsd_reject(-EINVAL, "--%s must be a whole number from %llu to %llu, not \"%s\"",
				  opt->name, (unsigned long long)opt->min,
				  (unsigned long long)opt->max, s);
	if (u8)
		*FIELD(o, __u8) = (__u8)v;
	else
		*FIELD(o, unsigned int) = (unsigned int)v;
	if (out)
		*out = v;
	return 0;
}

static int opt_uint(const struct fs_optset *set, const struct fs_opt *opt,
		    const char *arg, void *o)
{
	return parse_uint(opt, arg, o, false, NULL);
}

/* A __u8 of the sketch parameters. */
static int opt_u8(const struct fs_optset *set, const struct fs_opt *opt,
		  const char *arg, void *o)
{
	return parse_uint(opt, arg, o, true, NULL);
}

static __u32 log2_ceil(unsigned long long v)
{
	__u32 l = 0;

	while ((1ULL << l) < v)
		l++;
	return l;
}

/* Count-Min columns, rounded up to a power of two: stored as its log2. */
static int opt_width(const struct fs_optset *set, const struct fs_opt *opt,
		     const char *arg, void *o)
{
	unsigned long long v;
	int err = parse_uint(opt, arg, o, true, &v);

	if (!err)
		*FIELD(o, __u8) = (__u8)log2_ceil(v);
	return err;
}

static int opt_ringbuf(const struct fs_optset *set, const struct fs_opt *opt,
		       const char *arg, void *o)
{
	unsigned long long v;
	int err = parse_uint(opt, arg, o, false, &v);

	if (!err && (v & (v - 1))) {
		fsd_err("--ringbuf-kib must be a power of two, not %llu", v);
		err = -EINVAL;
	}
	return err;
}

/* A number in the open interval (0, 1), or (0, 1] when the row's max is 1. */
static int opt_fraction(const struct fs_optset *set, const struct fs_opt *opt,
			const char *arg, void *o)
{
	int one_ok = opt->max == 1;
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (!*arg || *end || errno || !(v > 0) || v > 1 || (v == 1 && !one_ok))
		return fsd_reject(-EINVAL, "--%s must be a number in (0, 1%c, not \"%s\"",
				  opt->name, one_ok ? ']' : ')', arg);
	*FIELD(o, double) = v;
	return 0;
}

static int opt_iface(const struct fs_optset *set, const struct fs_opt *opt,
		     const char *name, void *opts)
{
	struct fsd_options *o = opts;
	struct fsd_iface *it;
	unsigned int i;
	int ifindex;

	if (o->n_ifaces == FSD_MAX_IFACES)
		return fsd_reject(-EINVAL, "at most %d interfaces", FSD_MAX_IFACES);
	ifindex = strlen(name) < IF_NAMESIZE ? (int)if_nametoindex(name) : 0;
	if (!ifindex)
		return fsd_reject(-EINVAL, "no interface named \"%s\"", name);
	for (i = 0; i < o->n_ifaces; i++) {
		if (o->ifaces[i].ifindex == ifindex)
			return fsd_reject(-EINVAL, "interface %s given twice", name);
	}
	it = &o->ifaces[o->n_ifaces++];
	snprintf(it->name, sizeof(it->name), "%s", name);
	it->ifindex = ifindex;
	return 0;
}

static int opt_conservative(const struct fs_optset *set, const struct fs_opt *opt,
			    const char *arg, void *o)
{
	((struct fsd_options *)o)->params.flags |= FS_PARAM_F_CONSERVATIVE;
	return 0;
}

/* One of two words; the second sets the bool at off. */
static int opt_either(const struct fs_optset *set, const struct fs_opt *opt,
		      const char *arg, void *o, const char *no, const char *yes)
{
	if (!strcmp(arg, yes)) {
		*FIELD(o, bool) = true;
	} else if (strcmp(arg, no)) {
		return fsd_reject(-EINVAL, "--%s must be %s or %s, not \"%s\"",
				  opt->name, no, yes, arg);
	}
	return 0;
}

static int opt_xdp_mode(const struct fs_optset *set, const struct fs_opt *opt,
			const char *arg, void *o)
{
	return opt_either(set, opt, arg, o, "native", "generic");
}

static int opt_ingress(const struct fs_optset *set, const struct fs_opt *opt,
		       const char *arg, void *o)
{
	return opt_either(set, opt, arg, o, "xdp", "tracepoint");
}

/*
 * An item's sizes after its name, ":DEPTHxWIDTH[:1/N]" (n characters at
 * s; none: keep the defaults in *depth, *log2w, *shift): WIDTH rounded up
 * to a power of two as --width is, N a power of two, the share 1/N of the
 * updates the sketch takes (prefix.h's 2^-t, spread.h's 1/R).  The ranges
 * are the sketch's own (max_*).
 */
static int detect_sizes(const char *item, const char *s, size_t n, __u32 *depth,
			__u32 *log2w, __u32 *shift, __u32 max_depth, __u32 max_log2w,
			__u32 max_shift)
{
	unsigned long long d, w, r = 1;
	char buf[64], *end;
	const char *at = buf;

	if (!n)
		return 0;
	if (n >= sizeof(buf))
		goto bad;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (!isdigit((unsigned char)*at))
		goto bad;
	d = strtoull(at, &end, 10);
	if (*end != 'x' || !isdigit((unsigned char)end[1]))
		goto bad;
	at = end + 1;
	w = strtoull(at, &end, 10);
	if (*end == ':') {
		at = end + 1;
		if (strncmp(at, "1/", 2) || !isdigit((unsigned char)at[2]))
			goto bad;
		r = strtoull(at + 2, &end, 10);
	}
	if (*end || d < 1 || d > max_depth || w < 16 || w > 1ULL << max_log2w ||
	    !r || r > 1ULL << max_shift || (r & (r - 1)))
		goto bad;
	*depth = (__u32)d;
	*log2w = log2_ceil(w);
	*shift = log2_ceil(r);
	return 0;
bad:
	return fsd_reject(-EINVAL, "--detect \"%.*s\": sizes are DEPTHxWIDTH[:1/N], depth 1 .. %u, width 16 .. %llu, N a power of two 1 .. %llu",
			  (int)strcspn(item, ","), item, max_depth, 1ULL << max_log2w,
			  1ULL << max_shift);
}

/*
 * --detect LIST: which detection sketches the datapath keeps (detect.h),
 * "prefixes", "spread", both comma-separated, or "none"; each at its
 * default sizes or at NAME:DEPTHxWIDTH[:1/N] (detect_sizes()).  They go
 * into the parameters, so a restart with another list is another sizing
 * (refused while a datapath is pinned, as --width is).
 */
static int opt_detect(const struct fs_optset *set, const struct fs_opt *opt,
		      const char *arg, void *o)
{
	struct fs_sketch_params *p = &((struct fsd_options *)o)->params;
	const char *at = arg;
	bool none = false;
	int err;

	p->prefix_log2w = p->prefix_shape = 0;
	p->spread_log2w = p->spread_shape = 0;
	while (*at) {
		size_t n = strcspn(at, ","), name = strcspn(at, ":,");
		const char *sizes = at + name + (name < n);
		size_t ns = n - (size_t)(sizes - at);

		if (name == 8 && !strncmp(at, "prefixes", name)) {
			struct fs_prefix_params pp = { FS_DEFAULT_PREFIX_DEPTH,
				FS_DEFAULT_PREFIX_LOG2W, FS_DEFAULT_PREFIX_SKIP };

			err = detect_sizes(at, sizes, ns, &pp.depth, &pp.log2_width,
					   &pp.skip_shift, FS_PREFIX_MAX_DEPTH,
					   FS_PREFIX_MAX_LOG2W, FS_PREFIX_MAX_SKIP);
			if (err)
				return err;
			fs_params_set_prefix(p, &pp);
		} else if (name == 6 && !strncmp(at, "spread", name)) {
			struct fs_spread_params sp = { FS_DEFAULT_SPREAD_DEPTH,
				FS_DEFAULT_SPREAD_LOG2W, FS_DEFAULT_SPREAD_SHIFT };

			err = detect_sizes(at, sizes, ns, &sp.depth, &sp.log2_width,
					   &sp.sample_shift, FS_SPREAD_MAX_DEPTH,
					   FS_SPREAD_MAX_LOG2W, FS_SPREAD_MAX_SHIFT);
			if (err)
				return err;
			fs_params_set_spread(p, &sp);
		} else if (n == 4 && !strncmp(at, "none", n)) {
			none = true;
		} else {
			return fsd_reject(-EINVAL, "--detect takes prefixes, spread or none, comma-separated, not \"%.*s\"",
					  (int)n, at);
		}
		if (name < n && !ns)
			return fsd_reject(-EINVAL, "--detect \"%.*s\" ends in a colon", (int)n, at);
		at += n;
		if (*at == ',' && !*++at)
			return fsd_reject(-EINVAL, "--detect \"%s\" ends in a comma", arg);
	}
	if (at == arg)
		return fsd_reject(-EINVAL, "--detect needs prefixes, spread or none");
	if (none && (p->prefix_log2w || p->spread_log2w))
		return fsd_reject(-EINVAL, "--detect none goes alone");
	return 0;
}

/*
 * --sample-rate 1/N: the keyed sample (sample.h) of one flow in N, N a
 * power of two 1 .. 2^20, or "off"; at --sample-buckets buckets, checked
 * in check_combinations().  On by default (1/1024, 128 buckets).
 */
static int opt_sample_rate(const struct fs_optset *set, const struct fs_opt *opt,
			   const char *arg, void *o)
{
	struct fs_sketch_params *p = &((struct fsd_options *)o)->params;
	unsigned long long n;
	char *end;

	if (!strcmp(arg, "off")) {
		p->sample_shift = 0;
		p->sample_log2b = 0;
		return 0;
	}
	errno = 0;
	n = strncmp(arg, "1/", 2) || !isdigit((unsigned char)arg[2]) ? 0 :
	    strtoull(arg + 2, &end, 10);
	if (!n || errno || *end || (n & (n - 1)) || n > 1ULL << FS_SAMPLE_MAX_SHIFT)
		return fsd_reject(-EINVAL, "--sample-rate must be 1/N, N a power of two from 1 to %llu (1/1024: one flow in 1,024), or off; not \"%s\"",
				  1ULL << FS_SAMPLE_MAX_SHIFT, arg);
	p->sample_shift = (__u8)log2_ceil(n);
	if (!p->sample_log2b)
		p->sample_log2b = FS_DEFAULT_SAMPLE_LOG2_BUCKETS;
	return 0;
}

/* --sample-buckets B: B a power of two; stored in the options until the
 * rate says whether there is a sample. */
static int opt_sample_buckets(const struct fs_optset *set, const struct fs_opt *opt,
			      const char *arg, void *o)
{
	unsigned long long v;
	int err = parse_uint(opt, arg, o, false, &v);

	if (!err && (v & (v - 1)))
		err = fsd_reject(-EINVAL, "--sample-buckets must be a power of two, not %llu", v);
	return err;
}

static int opt_blocklist(const struct fs_optset *set, const struct fs_opt *opt,
			 const char *arg, void *o)
{
	if (!*arg)
		return fsd_reject(-EINVAL, "--blocklist needs a file path");
	((struct fsd_options *)o)->blocklist = arg;
	return 0;
}

static int opt_state_max(const struct fs_optset *set, const struct fs_opt *opt,
			 const char *arg, void *o)
{
	unsigned long long v;

	if (fsd_parse_size(arg, &v) || !v)
		return fsd_reject(-EINVAL, "--state-max must be a size such as 64M or 2G (K, M, G, T: powers of 1024), not \"%s\"",
				  arg);
	((struct fsd_options *)o)->state_max = v;
	return 0;
}

static int opt_metrics(const struct fs_optset *set, const struct fs_opt *opt,
		       const char *arg, void *opts)
{
	struct fsd_options *o = opts;

	o->metrics = arg;
	return fsd_metrics_parse_addr(arg, &o->metrics_addr, &o->metrics_addr_len);
}

static int opt_read_group(const struct fs_optset *set, const struct fs_opt *opt,
			  const char *arg, void *opts)
{
	struct fsd_options *o = opts;

	o->read_group = arg;
	return fsd_access_group(arg, &o->read_gid);
}

static int getopt_error(const struct fs_optset *set, int ret, char **argv)
{
	if (ret == ':')
		fsd_err("%s needs a value (see --help)", argv[optind - 1]);
	else
		fsd_err("unknown option %s (see --help)", argv[optind - 1]);
	return -EINVAL;
}

#define OFF(field) offsetof(struct fsd_options, field)

static const struct fs_opt options[] = {
	{ "interface", 'i', "IFACE", opt_iface, 0, 0, 0, NULL,
	  "attach the XDP datapath to IFACE (repeatable)" },
	{ "window", 0, "SECONDS", opt_uint, OFF(window_sec), 1, 86400, "1",
	  "window length (default 1)" },
	{ "history", 0, "SECONDS", opt_uint, OFF(history_sec), 1, 30 * 86400, "300",
	  "finished windows kept for queries (default 300)" },
	{ "socket", 0, "PATH", NULL, OFF(socket_path), 0, 0, FS_SOCKET_DEFAULT,
	  "query socket (default " FS_SOCKET_DEFAULT ")" },
	{ "pin-dir", 0, "DIR", NULL, OFF(pin_dir), 0, 0, FS_PIN_DIR_DEFAULT,
	  "bpffs directory for the maps (default " FS_PIN_DIR_DEFAULT ")" },
	{ "epsilon", 0, "E", opt_fraction, OFF(epsilon), 0, 0, NULL,
	  "Count-Min overcount bound E * total ..." },
	{ "delta", 0, "D", opt_fraction, OFF(delta), 0, 0, NULL,
	  "... with probability 1 - D (give both)" },
	{ "width", 0, "W", opt_width, OFF(params.cms_log2_width),
	  1U << FS_CMS_MIN_LOG2W, 1U << FS_CMS_MAX_LOG2W, NULL,
	  "Count-Min columns, rounded up to a power of two\n"
	  "(16 .. 4194304; default 4096)" },
	{ "depth", 0, "D", opt_u8, OFF(params.cms_depth), 1, FS_CMS_MAX_DEPTH, NULL,
	  "Count-Min rows, 1 .. 8 (default 5)" },
	{ "precision", 0, "P", opt_u8, OFF(params.hll_p), FS_HLL_MIN_P, FS_HLL_MAX_P,
	  NULL, "HyperLogLog 2^P registers, 4 .. 18 (default 14)" },
	{ "conservative", 0, NULL, opt_conservative, 0, 0, 0, NULL,
	  "Count-Min conservative update" },
	{ "detect", 0, "LIST", opt_detect, 0, 0, 0, NULL,
	  "detection sketches the datapath keeps: prefixes\n"
	  "(heavy source and destination prefixes), spread\n"
	  "(scanners and their victims), both as\n"
	  "prefixes,spread, or none (default none); each at\n"
	  "NAME:DEPTHxWIDTH[:1/N] for other sizes (N: one\n"
	  "update in N taken; defaults prefixes:2x1024:1/1,\n"
	  "spread:2x512:1/8)" },
	{ "sample-rate", 0, "1/N", opt_sample_rate, 0, 0, 0, NULL,
	  "count one flow in N exactly too, chosen by the\n"
	  "keyed hash, to measure the sketches' error live\n"
	  "(sample.h; flowsketch accuracy); N a power of two\n"
	  "up to 1048576, or off (default 1/1024)" },
	{ "sample-buckets", 0, "B", opt_sample_buckets, OFF(sample_buckets),
	  1U << FS_SAMPLE_MIN_LOG2_BUCKETS, 1U << FS_SAMPLE_MAX_LOG2_BUCKETS, "128",
	  "the sample's table: B buckets of 7 flows, 512\n"
	  "bytes each a CPU and window slot, a power of two\n"
	  "(default 128)" },
	{ "xdp-mode", 0, "MODE", opt_xdp_mode, OFF(xdp_generic), 0, 0, NULL,
	  "native (default) or generic" },
	{ "ingress", 0, "HOOK", opt_ingress, OFF(ingress_tp), 0, 0, NULL,
	  "what counts received frames: xdp (default; counts\n"
	  "and drops what the blocklist covers) or tracepoint\n"
	  "(tp_btf/netif_receive_skb: counts only, for\n"
	  "interfaces XDP should not hold)" },
	{ "hh-fraction", 0, "PHI", opt_fraction, OFF(hh_fraction), 0, 1, "0.001",
	  "report flows above PHI of the window's traffic\n"
	  "(so far, per CPU) as top-talker candidates\n"
	  "(default 0.001)" },
	{ "max-candidates", 0, "N", opt_uint, OFF(max_candidates), 1,
	  FSD_CANDIDATE_LIMIT_MAX, STR(FSD_CANDIDATE_LIMIT),
	  "distinct candidates kept per window (default 65536;\n"
	  "48 bytes each, in a table up to twice that)" },
	{ "ringbuf-kib", 0, "N", opt_ringbuf, OFF(ringbuf_kib), 4, 1U << 20, "256",
	  "report ring buffer size, a power of two (default 256)" },
	{ "secret-file", 0, "FILE", NULL, OFF(secret_file), 0, 0, NULL,
	  "16-byte hash secret (for sketches merged across\n"
	  "hosts); default: random at every start" },
	{ "blocklist", 0, "FILE", opt_blocklist, 0, 0, 0, FSD_BLOCKLIST_DEFAULT,
	  "sources to drop, one CIDR a line, kept by the daemon\n"
	  "(default " FSD_BLOCKLIST_DEFAULT "; missing: empty)" },
	{ "policy", 0, "FILE", NULL, OFF(policy), 0, 0, NULL,
	  "block sources above its rules, for a time\n"
	  "(policy_file.h; reloaded on SIGHUP)" },
	{ "policy-dry-run", 0, NULL, NULL, OFF(policy_dry_run), 0, 0, NULL,
	  "log and count the policy's decisions, block nothing" },
	{ "blocklist-max", 0, "N", opt_uint, OFF(blocklist_max), 1,
	  FSD_BLOCKLIST_MAX_LIMIT, "100000",
	  "entries the blocklist can hold (default 100000,\n"
	  "at most 1000000; maps sized for it at load)" },
	{ "state-dir", 0, "DIR", NULL, OFF(state_dir), 0, 0, NULL,
	  "finished windows, for the next start (default\n"
	  FSD_STATE_DIR_DEFAULT "/ and the pin directory's name)" },
	{ "state-max", 0, "SIZE", opt_state_max, 0, 0, 0, NULL,
	  "the most --state-dir may hold, e.g. 64M or 2G (default\n"
	  "25% of its file system); past it the oldest windows\n"
	  "of every history are given up first" },
	{ "keep", 0, NULL, NULL, OFF(keep), 0, 0, NULL,
	  "on SIGTERM leave the datapath counting, pinned with\n"
	  "its links and history, for the next start to adopt" },
	{ "replace", 0, NULL, NULL, OFF(replace), 0, 0, NULL,
	  "start afresh even if a datapath is pinned in --pin-dir\n"
	  "(by default a new daemon adopts it)" },
	{ "detach", 0, NULL, NULL, OFF(detach), 0, 0, NULL,
	  "remove everything flowsketch left under --pin-dir and\n"
	  "--state-dir (links, pins, history), then exit" },
	{ "metrics", 0, "ADDR:PORT", opt_metrics, 0, 0, 0, NULL,
	  "serve Prometheus metrics at http://ADDR:PORT/metrics\n"
	  "(e.g. 127.0.0.1:9108 or [::1]:9108; default: none)" },
	{ "metrics-top", 0, "N", opt_uint, OFF(metrics_top), 0, FSD_METRICS_TOP_MAX,
	  STR(FSD_METRICS_TOP_DEFAULT),
	  "the last window's top N talkers in the metrics\n"
	  "(default " STR(FSD_METRICS_TOP_DEFAULT) ", at most "
	  STR(FSD_METRICS_TOP_MAX) "; 0: none)" },
	{ "metrics-web-config", 0, "FILE", NULL, OFF(metrics_web_config), 0, 0, NULL,
	  "HTTPS and/or basic auth for --metrics, in\n"
	  "Prometheus exporter-toolkit's web config format\n"
	  "(tls_server_config, basic_auth_users)" },
	{ "read-group", 0, "GROUP", opt_read_group, 0, 0, 0, NULL,
	  "the socket is 0660 root:GROUP; GROUP's members may\n"
	  "read (top, flows, status, export, block list),\n"
	  "only root may change (default: root only)" },
	{ "verbose", 'v', NULL, fs_opt_count, OFF(verbose), 0, 0, NULL,
	  "debug messages and libbpf's log" },
	{ "help", 'h', NULL, fs_opt_show_help, 0, 0, 0, NULL, "this text" },
	{ "roff", 0, NULL, fs_opt_show_man, 0, 0, 0, NULL, NULL },
	{ 0 },
};

static const struct fs_optset fsd_optset = {
	.name = "flowsketchd",
	.usage =
"Usage: flowsketchd -i IFACE [-i IFACE ...] [options]\n"
"Count every packet on IFACE in fixed memory: top talkers (Count-Min),\n"
"distinct flows, sources and destinations (HyperLogLog), per window.\n"
"\n",
	.opts = options,
	.help_col = 26,
	.getopt_error = getopt_error,
};

/*
 * The history at its fullest, the query threads' scratch, the rotation's
 * two buffers of one map element on every possible CPU (rotation.c: the
 * lookup buffer it folds from, and zeros) and the answers held for slow
 * clients (server.h): all the memory the daemon's windows and queries can
 * take.
 */
unsigned long long fsd_options_history_max_bytes(const struct fsd_options *o)
{
	const struct fs_sketch_params *p = &o->params;
	int ncpus = libbpf_num_possible_cpus();
	unsigned long long rotation;

	/* One history and one rotation per frontend; the query threads and
	 * the answers are shared. */
	rotation = (unsigned long long)(ncpus > 0 ? ncpus : 1) * 2 *
		   FS_CHUNK_BYTES;
	return FSD_FE_MAX * (fsd_history_max_bytes(p, fsd_options_windows_kept(o),
						      o->max_candidates) + rotation) +
	       fsd_workers_max_bytes(p) + FSD_ANSWER_BYTES_MAX;
}

int fsd_options_check_sizes(struct fsd_options *o)
{
	const struct fs_sketch_params *p = &o->params;
	unsigned long long per_cpu, history;

	per_cpu = fs_dp_percpu_bytes(p, FS_NSLOTS);
	if (per_cpu > FSD_MAX_BYTES_PER_CPU)
		return fsd_reject(-EINVAL, "width %u x depth %u and precision %u need %llu MiB per CPU, more than the %llu MiB cap",
				  1U << p->cms_log2_width, p->cms_depth, p->hll_p, per_cpu >> 20,
				  FSD_MAX_BYTES_PER_CPU >> 20);
	if (o->history_sec < o->window_sec)
		return fsd_reject(-EINVAL, "--history (%u s) must be at least one window (%u s)",
				  o->history_sec, o->window_sec);
	history = fsd_options_history_max_bytes(o);
	if (history > FSD_MAX_HISTORY_BYTES)
		return fsd_reject(-EINVAL, "%u windows of history in each of %d frontends need up to %llu MiB with %u candidates each, more than the %llu MiB cap; keep less history, use longer windows or fewer candidates",
				  fsd_options_windows_kept(o), FSD_FE_MAX, history >> 20,
				  o->max_candidates, FSD_MAX_HISTORY_BYTES >> 20);
	if (o->state_max && o->state_max < fsd_state_min_bytes(p))
		return fsd_reject(-EINVAL, "--state-max %llu KiB is less than one window of each frontend takes at these sizes (%llu KiB)",
				  o->state_max >> 10, fsd_state_min_bytes(p) >> 10);
	return 0;
}

/* The state directory by default: one per pin directory, named after it. */
static int default_state_dir(struct fsd_options *o)
{
	const char *base = strrchr(o->pin_dir, '/');

	base = base && base[1] ? base + 1 : "flowsketch";
	if (snprintf(o->state_dir_buf, sizeof(o->state_dir_buf), "%s/%s",
		     FSD_STATE_DIR_DEFAULT, base) >= (int)sizeof(o->state_dir_buf))
		return fsd_reject(-EINVAL, "--pin-dir %s makes too long a state directory name",
				  o->pin_dir);
	o->state_dir = o->state_dir_buf;
	return 0;
}

/* --epsilon and --delta, when given, size the Count-Min sketch. */
static int size_for_error(struct fsd_options *o, uint64_t given)
{
	__u32 log2w, depth;

	if (!o->epsilon && !o->delta)
		return 0;
	if (!o->epsilon || !o->delta)
		return fsd_reject(-EINVAL, "--epsilon and --delta go together");
	if (fs_opt_given(&fsd_optset, given, "width") ||
	    fs_opt_given(&fsd_optset, given, "depth"))
		return fsd_reject(-EINVAL,
				  "give either --epsilon/--delta or --width/--depth, not both");
	if (fs_cms_size_for(o->epsilon, o->delta, &log2w, &depth))
		return fsd_reject(-EINVAL, "--epsilon %g --delta %g needs a Count-Min sketch beyond width %u and depth %u",
				  o->epsilon, o->delta, 1U << FS_CMS_MAX_LOG2W, FS_CMS_MAX_DEPTH);
	o->params.cms_log2_width = (__u8)log2w;
	o->params.cms_depth = (__u8)depth;
	return 0;
}

/* Options that only make sense together, in the order they are checked. */
static int check_combinations(struct fsd_options *o, uint64_t given)
{
	bool metrics_top_given = fs_opt_given(&fsd_optset, given, "metrics-top");
	int err;

	if (!o->n_ifaces)
		return fsd_reject(-EINVAL, "no interface given: use -i IFACE");
	err = size_for_error(o, given);
	if (err)
		return err;
	if (o->ingress_tp && (o->blocklist_given || o->xdp_generic))
		return fsd_reject(-EINVAL, "%s works on XDP only: --ingress tracepoint counts, it cannot drop or choose an XDP mode",
				  o->blocklist_given ? "--blocklist" : "--xdp-mode");
	o->sample_rate_given = fs_opt_given(&fsd_optset, given, "sample-rate");
	o->sample_buckets_given = fs_opt_given(&fsd_optset, given, "sample-buckets");
	if (fs_opt_given(&fsd_optset, given, "sample-buckets")) {
		if (!o->params.sample_log2b)
			return fsd_reject(-EINVAL, "--sample-buckets sizes the keyed sample, which --sample-rate off turns off");
		o->params.sample_log2b = (__u8)log2_ceil(o->sample_buckets);
	}
	if (o->policy_dry_run && !o->policy)
		return fsd_reject(-EINVAL, "--policy-dry-run needs --policy FILE");
	if (o->policy && o->ingress_tp)
		return fsd_reject(-EINVAL, "--policy blocks with the blocklist, which works on XDP only, not with --ingress tracepoint");
	if ((metrics_top_given || o->metrics_web_config) && !o->metrics)
		return fsd_reject(-EINVAL, "%s needs --metrics ADDR:PORT",
				  metrics_top_given ? "--metrics-top" : "--metrics-web-config");
	if (*o->socket_path != '/')
		return fsd_reject(-EINVAL, "--socket must be an absolute path");
	return fsd_options_check_sizes(o);
}

int fsd_options_parse(struct fsd_options *o, int argc, char **argv)
{
	uint64_t given;
	int err;

	memset(o, 0, sizeof(*o));
	/* The secret is drawn (or read) later, by daemon.c. */
	fs_params_init(&o->params, FS_DEFAULT_CMS_DEPTH, FS_DEFAULT_CMS_LOG2W,
		       FS_DEFAULT_HLL_P, 0, &(struct fs_hash_secret){ 0 });
	fs_params_set_sample(&o->params, &(struct fs_sample_params){
		.shift = FS_DEFAULT_SAMPLE_SHIFT,
		.log2_buckets = FS_DEFAULT_SAMPLE_LOG2_BUCKETS });
	err = fs_opt_parse(&fsd_optset, argc, argv, o, &given);
	if (err)
		return err;
	o->blocklist_given = fs_opt_given(&fsd_optset, given, "blocklist");
	if (optind < argc)
		return fsd_reject(-EINVAL, "unexpected argument \"%s\" (see --help)", argv[optind]);
	if (!o->state_dir && (err = default_state_dir(o)))
		return err;
	if (*o->pin_dir != '/' || *o->state_dir != '/')
		return fsd_reject(-EINVAL, "--pin-dir and --state-dir must be absolute paths");
	if (o->detach) {
		if (o->n_ifaces || o->keep || o->replace || o->metrics ||
		    o->metrics_web_config || o->read_group)
			return fsd_reject(-EINVAL,
					  "--detach takes only --pin-dir, --state-dir and -v");
		return 0;
	}
	return check_combinations(o, given);
}
