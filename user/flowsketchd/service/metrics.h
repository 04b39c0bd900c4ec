/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * metrics.h - flowsketchd --metrics ADDR:PORT: /metrics for Prometheus.
 *
 * Threads.  libmicrohttpd serves HTTP on a thread of its own (its internal
 * epoll thread); the event loop (daemon.c) never waits for a client.  What
 * it serves is a page of text that the loop builds at start and after
 * every rotation, from the daemon's state as the loop alone sees it (BPF
 * maps, histories, the blocklist), and publishes by swapping one pointer
 * under m->lock.  The HTTP thread takes that lock only to take a reference
 * to the current page, so neither side ever holds it for more than a few
 * pointer operations; it never reads a map or a history.  A page is freed
 * by whoever drops its last reference: the loop when it replaces a page no
 * request holds, the HTTP thread when the last response sending it is
 * done.  Before the first page (setup still running) /metrics answers 503.
 *
 * Access (--metrics-web-config, webconfig.h).  With tls_server_config the
 * port speaks HTTPS only (libmicrohttpd over GnuTLS): plain HTTP gets no
 * answer.  With RequireAndVerifyClientCert a request whose connection
 * showed no client certificate that client_ca_file verifies is answered
 * 403.  With basic_auth_users a request without a user and password of
 * the file is answered 401 (WWW-Authenticate: Basic realm="flowsketch"),
 * one whose check would exceed bcrypt's budget 429 (basicauth.h).  These
 * come before anything else, whatever the path or method.
 *
 * HTTP.  GET and HEAD of /metrics, nothing else: another method is 405
 * (with Allow: GET, HEAD), another path 404.  At most
 * FSD_METRICS_CONNECTIONS connections at once, each closed after
 * FSD_METRICS_TIMEOUT_SEC idle seconds (a client that connects and sends
 * nothing holds a slot that long, never the loop), each with
 * FSD_METRICS_CONN_MEMORY bytes for its request (larger headers are
 * answered 431 by libmicrohttpd, or the connection is closed).  The
 * listening socket is bound by fsd_metrics_open() before setup touches
 * anything, so that a bad address or a port in use fails with the host
 * left as it was.
 *
 * Format: the Prometheus text exposition format 0.0.4
 * (Content-Type: text/plain; version=0.0.4), every family with # HELP and
 * # TYPE, names in base units, counters ending in _total:
 *
 *   flowsketch_packets_total{interface,direction} packets sketched, per -i
 *   flowsketch_bytes_total{interface,direction}   their bytes (ifslots.h)
 *   flowsketch_unattributed_packets_total{direction}  ... on no -i
 *   flowsketch_unattributed_bytes_total{direction}
 *   flowsketch_malformed_packets_total{direction,reason}
 *   flowsketch_reports_total{frontend}            heavy-hitter reports sent
 *   flowsketch_reports_dropped_total{frontend}    ... lost (ring full)
 *   flowsketch_windows_finished_total{frontend}
 *   flowsketch_windows_lost_total{frontend}
 *   flowsketch_distinct_flows{direction}          gauges: the last finished
 *   flowsketch_distinct_sources{direction}        window (HyperLogLog)
 *   flowsketch_distinct_destinations{direction}
 *   flowsketch_connections_opened_total           the connection frontend's
 *   flowsketch_connections_established_total      finished windows
 *   flowsketch_blocklist_entries                  gauge  } only with a
 *   flowsketch_blocklist_dropped_packets_total           } blocklist (none
 *   flowsketch_blocklist_dropped_bytes_total             } with --ingress
 *   flowsketch_blocklist_false_positive_ratio     gauge  } tracepoint)
 *   flowsketch_recursion_misses_total{frontend}   tracing frontends only
 *   flowsketch_top_packets{src,dst,sport,dport,proto,direction}
 *                                                 gauge: the last window's
 *                                                 top --metrics-top flows,
 *                                                 both directions ranked
 *                                                 together, as `top -n N`
 *   flowsketch_top_prefix_packets{side,prefix,direction}
 *                                                 gauge, --detect prefixes:
 *                                                 the last window's top
 *                                                 --metrics-top prefixes of
 *                                                 each side, family and
 *                                                 length, as `top --by`
 *   flowsketch_top_spread{side,host,direction}    gauge, --detect spread:
 *                                                 its widest --metrics-top
 *                                                 of each side, as `spread`
 *
 * direction is "in" (the XDP or ingress tracepoint frontend) or "out" (the
 * egress frontend); frontend is "xdp" or "ingress", "egress", "conn" (the
 * names of status); interface is the -i name.  Values are the ones
 * `flowsketch status --json` and `top`/`flows` show for the same window
 * (the per-interface counts: as status shows them when the window
 * closed).
 *
 * Counters never go backwards.  The datapath's counters (fs_stats,
 * fs_ifcount, fs_block_stats, a program's recursion misses) live in
 * pinned maps and links: they survive any restart that adopts the pins
 * and start at 0 only with a new datapath.  The daemon's own (the windows' totals, the
 * windows finished and lost) are rebuilt by each daemon: totals and
 * windows finished from the newest stored window (winstore.h), which may
 * be older than the last one exported (a window kept in memory only, the
 * store full or unusable), windows lost from 0.  So every counter is
 * exported as max(last exported, read + base), with base set on its first
 * read by this daemon to what the previous one exported beyond that read
 * (0 if nothing), and what was exported is kept in STATE_DIR/metrics,
 * written (temporary file, rename) after every build and before the page
 * is published: a daemon killed at any point leaves a file at least as
 * high as anything served.  The file is one of the datapath's (the fs_ctl
 * map id, which an adoption keeps and a new load changes, is its first
 * line after the version); a daemon on another datapath ignores it, and a
 * stop that discards the datapath removes it.  Version 1:
 *
 *   # flowsketchd metrics state 1
 *   datapath MAP_ID
 *   SERIES VALUE                       one line per counter, e.g.
 *   flowsketch_packets_total{interface="eth0",direction="in"} 123
 *
 * If the state directory is unusable (no window survives a restart
 * either), counters the daemon rebuilds start again from what it restores.
 */
#ifndef FLOWSKETCHD_METRICS_H
#define FLOWSKETCHD_METRICS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <linux/types.h>
#include "basicauth.h"
#include "webconfig.h"

struct fsd_view;
struct MHD_Daemon;

#define FSD_METRICS_TOP_DEFAULT 10
#define FSD_METRICS_TOP_MAX 100
#define FSD_METRICS_CONNECTIONS 256
#define FSD_METRICS_TIMEOUT_SEC 10
#define FSD_METRICS_CONN_MEMORY (16 * 1024)
/* In the state directory, beside the windows (winstore.h). */
#define FSD_METRICS_STATE "metrics"

/* One published page: shared by the loop and the responses sending it. */
struct fsd_metrics_page {
	int refs;
	size_t len;
	char text[];
};

/* A counter this daemon exports (or the previous one did). */
struct fsd_metrics_counter {
	char *series;		/* name{labels}, as exported */
	__u64 base;		/* added to what is read */
	__u64 value;		/* the last exported (or restored) */
	bool restored;		/* value is the state file's */
	bool live;		/* read by this daemon: base is set */
};

struct fsd_metrics {
	struct MHD_Daemon *httpd;	/* NULL: no --metrics, or not started */
	bool lock_ready;
	pthread_mutex_t lock;		/* guards page, nothing else */
	struct fsd_metrics_page *page;	/* served; NULL before the first */
	/* --metrics-web-config: set before the HTTP thread starts, then
	 * read-only but for auth's own lock. */
	struct fsd_webconfig web;
	bool auth_ready;		/* basic_auth_users given */
	struct fsd_basicauth auth;
	/* The loop's alone from here. */
	bool restored;			/* the state file was looked at */
	__u32 datapath_id;		/* fs_ctl's map id */
	struct fsd_metrics_counter *counters;
	size_t ncounters, counters_cap;
	size_t page_hint;		/* the last page's length */
	__u64 builds;
	__u64 build_errors;		/* pages not built: out of memory */
	bool state_failing;		/* the last write of the state failed */
};

/*
 * --metrics ADDR:PORT into *addr (cmdline.c): ADDR an IPv4 address, an
 * IPv6 one in brackets or a name (its first address); PORT 1 .. 65535.
 * 0, or -EINVAL with one message.
 */
int fsd_metrics_parse_addr(const char *arg, struct sockaddr_storage *addr,
			   socklen_t *len);
/* Bind and start serving (503 until the first page): before setup
 * touches anything; with web_config (--metrics-web-config, or NULL) read
 * and checked first, HTTPS and/or basic auth as it says.  Nothing
 * without --metrics.  0 or -errno. */
int fsd_metrics_open(struct fsd_metrics *m, const struct sockaddr_storage *addr,
		     socklen_t len, const char *arg, const char *web_config);
/* Build the page from the daemon's state as v shows it, keep its
 * counters in the state file and publish it: at start and after each
 * rotation. */
void fsd_metrics_update(struct fsd_metrics *m, const struct fsd_view *v);
/* Stop serving and free (the state file stays). */
void fsd_metrics_close(struct fsd_metrics *m);
/* The datapath is gone: remove the state file from dir. */
void fsd_metrics_forget(const char *dir);

#endif /* FLOWSKETCHD_METRICS_H */
