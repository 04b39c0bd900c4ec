/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * options.h - flowsketchd's settings, as its command line gave them
 * (cmdline.h parses and checks them).  A plain struct, low in the layers:
 * every module takes the options it needs from it.
 */
#ifndef FLOWSKETCHD_OPTIONS_H
#define FLOWSKETCHD_OPTIONS_H

#include <net/if.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>
#include "flowsketch/params.h"

#define FSD_MAX_IFACES 64

/* Datapath memory one CPU may hold (every sketch map, all slots, as a
 * fresh datapath makes them: fs_dp_percpu_bytes(), sketch_kind.h). */
#define FSD_MAX_BYTES_PER_CPU (256ULL << 20)
/* User-space memory the window history may take. */
#define FSD_MAX_HISTORY_BYTES (8ULL << 30)
/* Distinct heavy-hitter candidates kept per window, by default and at
 * most (--max-candidates). */
#define FSD_CANDIDATE_LIMIT 65536
#define FSD_CANDIDATE_LIMIT_MAX (1U << 22)

/* Finished windows kept for the next start (winstore.h): by default in
 * FSD_STATE_DIR_DEFAULT/NAME, NAME the pin directory's last component. */
#define FSD_STATE_DIR_DEFAULT "/run/flowsketch"

struct fsd_iface {
	char name[IF_NAMESIZE];
	int ifindex;
};

struct fsd_options {
	struct fsd_iface ifaces[FSD_MAX_IFACES];
	unsigned int n_ifaces;
	unsigned int window_sec;
	unsigned int history_sec;
	const char *socket_path;
	const char *pin_dir;
	const char *state_dir;		/* --state-dir */
	unsigned long long state_max;	/* --state-max bytes; 0: the default
					   share of its file system */
	char state_dir_buf[256];	/* the default's name */
	bool keep;			/* --keep: SIGTERM leaves it all pinned */
	bool replace;			/* --replace: never adopt */
	bool detach;			/* --detach: remove what is left, exit */
	/* magic, version, depth, width, precision, flags; no secret yet */
	struct fs_sketch_params params;
	bool xdp_generic;
	bool ingress_tp;		/* --ingress tracepoint: no XDP */
	bool blocklist_given;		/* --blocklist was on the command line */
	double hh_fraction;
	double epsilon, delta;		/* --epsilon, --delta; 0: not given */
	unsigned int max_candidates;
	unsigned int sample_buckets;	/* --sample-buckets; the rate turns it on */
	bool sample_rate_given;		/* --sample-rate */
	bool sample_buckets_given;	/* --sample-buckets */
	unsigned int ringbuf_kib;
	const char *secret_file;
	const char *blocklist;		/* --blocklist FILE */
	const char *policy;		/* --policy FILE (policy.h); NULL: none */
	bool policy_dry_run;		/* --policy-dry-run */
	unsigned int blocklist_max;	/* --blocklist-max */
	const char *metrics;		/* --metrics ADDR:PORT; NULL: none */
	struct sockaddr_storage metrics_addr;	/* what it resolved to */
	socklen_t metrics_addr_len;
	unsigned int metrics_top;	/* --metrics-top */
	const char *metrics_web_config;	/* --metrics-web-config FILE; NULL: none */
	const char *read_group;		/* --read-group; NULL: root only */
	gid_t read_gid;			/* its gid */
	int verbose;
};

/* Windows the history keeps: ceil(history / window). */
static inline unsigned int fsd_options_windows_kept(const struct fsd_options *o)
{
	return (o->history_sec + o->window_sec - 1) / o->window_sec;
}

#endif /* FLOWSKETCHD_OPTIONS_H */
