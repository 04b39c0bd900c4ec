// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* options.c - flowsketchd's command line (options.h). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "flowsketch/maps.h"
#include "protocol.h"
#include "blocklist.h"
#include "sizing.h"
#include "sketch.h"
#include "log.h"
#include "history.h"
#include "metrics.h"
#include "options.h"
#include "access.h"
#include "server.h"
#include "statebudget.h"
#include "workers.h"

enum {
	OPT_WINDOW = 256,
	OPT_HISTORY,
	OPT_SOCKET,
	OPT_PIN_DIR,
	OPT_EPSILON,
	OPT_DELTA,
	OPT_WIDTH,
	OPT_DEPTH,
	OPT_PRECISION,
	OPT_CONSERVATIVE,
	OPT_XDP_MODE,
	OPT_INGRESS,
	OPT_HH_FRACTION,
	OPT_RINGBUF_KIB,
	OPT_SECRET_FILE,
	OPT_MAX_CANDIDATES,
	OPT_BLOCKLIST,
	OPT_BLOCKLIST_MAX,
	OPT_STATE_DIR,
	OPT_STATE_MAX,
	OPT_KEEP,
	OPT_REPLACE,
	OPT_DETACH,
	OPT_METRICS,
	OPT_METRICS_TOP,
	OPT_METRICS_WEB_CONFIG,
	OPT_READ_GROUP,
};

static const struct option long_options[] = {
	{ "interface", required_argument, NULL, 'i' },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "history", required_argument, NULL, OPT_HISTORY },
	{ "socket", required_argument, NULL, OPT_SOCKET },
	{ "pin-dir", required_argument, NULL, OPT_PIN_DIR },
	{ "epsilon", required_argument, NULL, OPT_EPSILON },
	{ "delta", required_argument, NULL, OPT_DELTA },
	{ "width", required_argument, NULL, OPT_WIDTH },
	{ "depth", required_argument, NULL, OPT_DEPTH },
	{ "precision", required_argument, NULL, OPT_PRECISION },
	{ "conservative", no_argument, NULL, OPT_CONSERVATIVE },
	{ "xdp-mode", required_argument, NULL, OPT_XDP_MODE },
	{ "ingress", required_argument, NULL, OPT_INGRESS },
	{ "hh-fraction", required_argument, NULL, OPT_HH_FRACTION },
	{ "ringbuf-kib", required_argument, NULL, OPT_RINGBUF_KIB },
	{ "max-candidates", required_argument, NULL, OPT_MAX_CANDIDATES },
	{ "secret-file", required_argument, NULL, OPT_SECRET_FILE },
	{ "blocklist", required_argument, NULL, OPT_BLOCKLIST },
	{ "blocklist-max", required_argument, NULL, OPT_BLOCKLIST_MAX },
	{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
	{ "state-max", required_argument, NULL, OPT_STATE_MAX },
	{ "keep", no_argument, NULL, OPT_KEEP },
	{ "replace", no_argument, NULL, OPT_REPLACE },
	{ "detach", no_argument, NULL, OPT_DETACH },
	{ "metrics", required_argument, NULL, OPT_METRICS },
	{ "metrics-top", required_argument, NULL, OPT_METRICS_TOP },
	{ "metrics-web-config", required_argument, NULL, OPT_METRICS_WEB_CONFIG },
	{ "read-group", required_argument, NULL, OPT_READ_GROUP },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: flowsketchd -i IFACE [-i IFACE ...] [options]\n"
"Count every packet on IFACE in fixed memory: top talkers (Count-Min),\n"
"distinct flows, sources and destinations (HyperLogLog), per window.\n"
"\n"
"  -i, --interface IFACE   attach the XDP datapath to IFACE (repeatable)\n"
"      --window SECONDS    window length (default 1)\n"
"      --history SECONDS   finished windows kept for queries (default 300)\n"
"      --socket PATH       query socket (default " FS_SOCKET_DEFAULT ")\n"
"      --pin-dir DIR       bpffs directory for the maps (default " FS_PIN_DIR_DEFAULT ")\n"
"      --epsilon E         Count-Min overcount bound E * total ...\n"
"      --delta D           ... with probability 1 - D (give both)\n"
"      --width W           Count-Min columns, rounded up to a power of two\n"
"                          (16 .. 4194304; default 4096)\n"
"      --depth D           Count-Min rows, 1 .. 8 (default 5)\n"
"      --precision P       HyperLogLog 2^P registers, 4 .. 18 (default 14)\n"
"      --conservative      Count-Min conservative update\n"
"      --xdp-mode MODE     native (default) or generic\n"
"      --ingress HOOK      what counts received frames: xdp (default; counts\n"
"                          and drops what the blocklist covers) or tracepoint\n"
"                          (tp_btf/netif_receive_skb: counts only, for\n"
"                          interfaces XDP should not hold)\n"
"      --hh-fraction PHI   report flows above PHI of the window's traffic\n"
"                          (so far, per CPU) as top-talker candidates\n"
"                          (default 0.001)\n"
"      --max-candidates N  distinct candidates kept per window (default 65536;\n"
"                          48 bytes each, in a table up to twice that)\n"
"      --ringbuf-kib N     report ring buffer size, a power of two (default 256)\n"
"      --secret-file FILE  16-byte hash secret (for sketches merged across\n"
"                          hosts); default: random at every start\n"
"      --blocklist FILE    sources to drop, one CIDR a line, kept by the daemon\n"
"                          (default " FSD_BLOCKLIST_DEFAULT "; missing: empty)\n"
"      --blocklist-max N   entries the blocklist can hold (default 100000,\n"
"                          at most 1000000; maps sized for it at load)\n"
"      --state-dir DIR     finished windows, for the next start (default\n"
"                          " FSD_STATE_DIR_DEFAULT "/ and the pin directory's name)\n"
"      --state-max SIZE    the most --state-dir may hold, e.g. 64M or 2G (default\n"
"                          25%% of its file system); past it the oldest windows\n"
"                          of every history are given up first\n"
"      --keep              on SIGTERM leave the datapath counting, pinned with\n"
"                          its links and history, for the next start to adopt\n"
"      --replace           start afresh even if a datapath is pinned in --pin-dir\n"
"                          (by default a new daemon adopts it)\n"
"      --detach            remove everything flowsketch left under --pin-dir and\n"
"                          --state-dir (links, pins, history), then exit\n"
"      --metrics ADDR:PORT serve Prometheus metrics at http://ADDR:PORT/metrics\n"
"                          (e.g. 127.0.0.1:9108 or [::1]:9108; default: none)\n"
"      --metrics-top N     the last window's top N talkers in the metrics\n"
"                          (default %d, at most %d; 0: none)\n"
"      --metrics-web-config FILE  HTTPS and/or basic auth for --metrics, in\n"
"                          Prometheus exporter-toolkit's web config format\n"
"                          (tls_server_config, basic_auth_users)\n"
"      --read-group GROUP  the socket is 0660 root:GROUP; GROUP's members may\n"
"                          read (top, flows, status, export, block list),\n"
"                          only root may change (default: root only)\n"
"  -v, --verbose           debug messages and libbpf's log\n"
"  -h, --help              this text\n",
		FSD_METRICS_TOP_DEFAULT, FSD_METRICS_TOP_MAX);
}

/* A whole decimal number in [min, max], or -EINVAL with a message. */
static int parse_uint(const char *opt, const char *s, unsigned long long min,
		      unsigned long long max, unsigned long long *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (!*s || *end || errno || *s == '-' || v < min || v > max) {
		fsd_err("--%s must be a whole number from %llu to %llu, not \"%s\"",
			opt, min, max, s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* A number in the open interval (0, 1) (or (0, 1] when one_ok). */
static int parse_fraction(const char *opt, const char *s, int one_ok,
			  double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (!*s || *end || errno || !(v > 0) || v > 1 || (v == 1 && !one_ok)) {
		fsd_err("--%s must be a number in (0, 1%c, not \"%s\"", opt,
			one_ok ? ']' : ')', s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int add_iface(struct fsd_options *o, const char *name)
{
	struct fsd_iface *it;
	unsigned int i;
	int ifindex;

	if (o->n_ifaces == FSD_MAX_IFACES) {
		fsd_err("at most %d interfaces", FSD_MAX_IFACES);
		return -EINVAL;
	}
	ifindex = strlen(name) < IF_NAMESIZE ? (int)if_nametoindex(name) : 0;
	if (!ifindex) {
		fsd_err("no interface named \"%s\"", name);
		return -EINVAL;
	}
	for (i = 0; i < o->n_ifaces; i++) {
		if (o->ifaces[i].ifindex == ifindex) {
			fsd_err("interface %s given twice", name);
			return -EINVAL;
		}
	}
	it = &o->ifaces[o->n_ifaces++];
	snprintf(it->name, sizeof(it->name), "%s", name);
	it->ifindex = ifindex;
	return 0;
}

static __u32 log2_ceil(unsigned long long v)
{
	__u32 l = 0;

	while ((1ULL << l) < v)
		l++;
	return l;
}

unsigned int fsd_options_windows_kept(const struct fsd_options *o)
{
	return (o->history_sec + o->window_sec - 1) / o->window_sec;
}

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
		   sizeof(struct fs_cms_chunk);
	return FSD_HISTORIES * (fsd_history_max_bytes(p, fsd_options_windows_kept(o),
						      o->max_candidates) + rotation) +
	       fsd_workers_max_bytes(p) + FSD_ANSWER_BYTES_MAX;
}

/* Sizes that only make sense together. */
static int check_sizes(struct fsd_options *o)
{
	const struct fs_sketch_params *p = &o->params;
	unsigned long long per_cpu, history;

	per_cpu = ((unsigned long long)fs_cms_chunks(p, FS_NSLOTS) *
		   sizeof(struct fs_cms_chunk)) +
		  ((unsigned long long)fs_hll_chunks(p, FS_NSLOTS) *
		   sizeof(struct fs_hll_chunk));
	if (per_cpu > FSD_MAX_BYTES_PER_CPU) {
		fsd_err("width %u x depth %u and precision %u need %llu MiB per CPU, more than the %llu MiB cap",
			1U << p->cms_log2_width, p->cms_depth, p->hll_p,
			per_cpu >> 20, FSD_MAX_BYTES_PER_CPU >> 20);
		return -EINVAL;
	}
	if (o->history_sec < o->window_sec) {
		fsd_err("--history (%u s) must be at least one window (%u s)",
			o->history_sec, o->window_sec);
		return -EINVAL;
	}
	history = fsd_options_history_max_bytes(o);
	if (history > FSD_MAX_HISTORY_BYTES) {
		fsd_err("%u windows of history in each of %d frontends need up to %llu MiB with %u candidates each, more than the %llu MiB cap; keep less history, use longer windows or fewer candidates",
			fsd_options_windows_kept(o), FSD_HISTORIES, history >> 20,
			o->max_candidates, FSD_MAX_HISTORY_BYTES >> 20);
		return -EINVAL;
	}
	if (o->state_max && o->state_max < fsd_state_min_bytes(p)) {
		fsd_err("--state-max %llu KiB is less than one window of each frontend takes at these sizes (%llu KiB)",
			o->state_max >> 10, fsd_state_min_bytes(p) >> 10);
		return -EINVAL;
	}
	return 0;
}

int fsd_options_parse(struct fsd_options *o, int argc, char **argv)
{
	double epsilon = 0, delta = 0;
	unsigned long long v;
	int width_given = 0, depth_given = 0, metrics_top_given = 0, c, err;
	__u32 log2w, depth;

	memset(o, 0, sizeof(*o));
	o->window_sec = 1;
	o->history_sec = 300;
	o->socket_path = FS_SOCKET_DEFAULT;
	o->pin_dir = FS_PIN_DIR_DEFAULT;
	o->hh_fraction = 0.001;
	o->max_candidates = FSD_CANDIDATE_LIMIT;
	o->ringbuf_kib = 256;
	o->blocklist = FSD_BLOCKLIST_DEFAULT;
	o->blocklist_max = FSD_BLOCKLIST_MAX_DEFAULT;
	o->metrics_top = FSD_METRICS_TOP_DEFAULT;
	/* The secret is drawn (or read) later, by daemon.c. */
	fs_params_init(&o->params, FS_DEFAULT_CMS_DEPTH, FS_DEFAULT_CMS_LOG2W,
		       FS_DEFAULT_HLL_P, 0, &(struct fs_hash_secret){ 0 });

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":i:vh", long_options, NULL)) != -1) {
		err = 0;
		switch (c) {
		case 'i':
			err = add_iface(o, optarg);
			break;
		case OPT_WINDOW:
			err = parse_uint("window", optarg, 1, 86400, &v);
			o->window_sec = (unsigned int)v;
			break;
		case OPT_HISTORY:
			err = parse_uint("history", optarg, 1, 30 * 86400, &v);
			o->history_sec = (unsigned int)v;
			break;
		case OPT_SOCKET:
			o->socket_path = optarg;
			break;
		case OPT_PIN_DIR:
			o->pin_dir = optarg;
			break;
		case OPT_EPSILON:
			err = parse_fraction("epsilon", optarg, 0, &epsilon);
			break;
		case OPT_DELTA:
			err = parse_fraction("delta", optarg, 0, &delta);
			break;
		case OPT_WIDTH:
			err = parse_uint("width", optarg, 1U << FS_CMS_MIN_LOG2W,
					 1U << FS_CMS_MAX_LOG2W, &v);
			o->params.cms_log2_width = (__u8)log2_ceil(v);
			width_given = 1;
			break;
		case OPT_DEPTH:
			err = parse_uint("depth", optarg, 1, FS_CMS_MAX_DEPTH, &v);
			o->params.cms_depth = (__u8)v;
			depth_given = 1;
			break;
		case OPT_PRECISION:
			err = parse_uint("precision", optarg, FS_HLL_MIN_P,
					 FS_HLL_MAX_P, &v);
			o->params.hll_p = (__u8)v;
			break;
		case OPT_CONSERVATIVE:
			o->params.flags |= FS_PARAM_F_CONSERVATIVE;
			break;
		case OPT_XDP_MODE:
			if (!strcmp(optarg, "generic")) {
				o->xdp_generic = true;
			} else if (strcmp(optarg, "native")) {
				fsd_err("--xdp-mode must be native or generic, not \"%s\"",
					optarg);
				err = -EINVAL;
			}
			break;
		case OPT_INGRESS:
			if (!strcmp(optarg, "tracepoint")) {
				o->ingress_tp = true;
			} else if (strcmp(optarg, "xdp")) {
				fsd_err("--ingress must be xdp or tracepoint, not \"%s\"",
					optarg);
				err = -EINVAL;
			}
			break;
		case OPT_HH_FRACTION:
			err = parse_fraction("hh-fraction", optarg, 1,
					     &o->hh_fraction);
			break;
		case OPT_RINGBUF_KIB:
			err = parse_uint("ringbuf-kib", optarg, 4, 1U << 20, &v);
			if (!err && (v & (v - 1))) {
				fsd_err("--ringbuf-kib must be a power of two, not %llu",
					v);
				err = -EINVAL;
			}
			o->ringbuf_kib = (unsigned int)v;
			break;
		case OPT_SECRET_FILE:
			o->secret_file = optarg;
			break;
		case OPT_BLOCKLIST:
			if (!*optarg) {
				fsd_err("--blocklist needs a file path");
				err = -EINVAL;
			}
			o->blocklist = optarg;
			o->blocklist_given = true;
			break;
		case OPT_BLOCKLIST_MAX:
			err = parse_uint("blocklist-max", optarg, 1,
					 FSD_BLOCKLIST_MAX_LIMIT, &v);
			o->blocklist_max = (unsigned int)v;
			break;
		case OPT_STATE_DIR:
			o->state_dir = optarg;
			break;
		case OPT_STATE_MAX:
			if (fsd_parse_size(optarg, &v) || !v) {
				fsd_err("--state-max must be a size such as 64M or 2G (K, M, G, T: powers of 1024), not \"%s\"",
					optarg);
				err = -EINVAL;
			}
			o->state_max = v;
			break;
		case OPT_KEEP:
			o->keep = true;
			break;
		case OPT_REPLACE:
			o->replace = true;
			break;
		case OPT_DETACH:
			o->detach = true;
			break;
		case OPT_METRICS:
			o->metrics = optarg;
			err = fsd_metrics_parse_addr(optarg, &o->metrics_addr,
						     &o->metrics_addr_len);
			break;
		case OPT_METRICS_TOP:
			err = parse_uint("metrics-top", optarg, 0,
					 FSD_METRICS_TOP_MAX, &v);
			o->metrics_top = (unsigned int)v;
			metrics_top_given = 1;
			break;
		case OPT_METRICS_WEB_CONFIG:
			o->metrics_web_config = optarg;
			break;
		case OPT_READ_GROUP:
			err = fsd_access_group(optarg, &o->read_gid);
			o->read_group = optarg;
			break;
		case OPT_MAX_CANDIDATES:
			err = parse_uint("max-candidates", optarg, 1,
					 FSD_CANDIDATE_LIMIT_MAX, &v);
			o->max_candidates = (unsigned int)v;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case ':':
			fsd_err("%s needs a value (see --help)", argv[optind - 1]);
			return -EINVAL;
		default:
			fsd_err("unknown option %s (see --help)", argv[optind - 1]);
			return -EINVAL;
		}
		if (err)
			return err;
	}
	if (optind < argc) {
		fsd_err("unexpected argument \"%s\" (see --help)", argv[optind]);
		return -EINVAL;
	}
	if (!o->state_dir) {
		/* One state directory per pin directory, named after it. */
		const char *base = strrchr(o->pin_dir, '/');

		base = base && base[1] ? base + 1 : "flowsketch";
		if (snprintf(o->state_dir_buf, sizeof(o->state_dir_buf), "%s/%s",
			     FSD_STATE_DIR_DEFAULT, base) >= (int)sizeof(o->state_dir_buf)) {
			fsd_err("--pin-dir %s makes too long a state directory name", o->pin_dir);
			return -EINVAL;
		}
		o->state_dir = o->state_dir_buf;
	}
	if (*o->pin_dir != '/' || *o->state_dir != '/') {
		fsd_err("--pin-dir and --state-dir must be absolute paths");
		return -EINVAL;
	}
	if (o->detach) {
		if (o->n_ifaces || o->keep || o->replace || o->metrics ||
		    o->metrics_web_config || o->read_group) {
			fsd_err("--detach takes only --pin-dir, --state-dir and -v");
			return -EINVAL;
		}
		return 0;
	}
	if (!o->n_ifaces) {
		fsd_err("no interface given: use -i IFACE");
		return -EINVAL;
	}
	if (epsilon || delta) {
		if (!epsilon || !delta) {
			fsd_err("--epsilon and --delta go together");
			return -EINVAL;
		}
		if (width_given || depth_given) {
			fsd_err("give either --epsilon/--delta or --width/--depth, not both");
			return -EINVAL;
		}
		if (fs_cms_size_for(epsilon, delta, &log2w, &depth)) {
			fsd_err("--epsilon %g --delta %g needs a Count-Min sketch beyond width %u and depth %u",
				epsilon, delta, 1U << FS_CMS_MAX_LOG2W,
				FS_CMS_MAX_DEPTH);
			return -EINVAL;
		}
		o->params.cms_log2_width = (__u8)log2w;
		o->params.cms_depth = (__u8)depth;
	}
	if (o->ingress_tp && (o->blocklist_given || o->xdp_generic)) {
		fsd_err("%s works on XDP only: --ingress tracepoint counts, it cannot drop or choose an XDP mode",
			o->blocklist_given ? "--blocklist" : "--xdp-mode");
		return -EINVAL;
	}
	if ((metrics_top_given || o->metrics_web_config) && !o->metrics) {
		fsd_err("%s needs --metrics ADDR:PORT",
			metrics_top_given ? "--metrics-top" : "--metrics-web-config");
		return -EINVAL;
	}
	if (*o->socket_path != '/') {
		fsd_err("--socket must be an absolute path");
		return -EINVAL;
	}
	return check_sizes(o);
}
