/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * view.h - what the reporting side (status.h, metrics.h) reads of the
 * daemon: pointers into the daemon's state (daemon.h), which fills them
 * once as it starts.  Only the event loop reads through them, as it alone
 * changes what they point to.
 */
#ifndef FLOWSKETCHD_VIEW_H
#define FLOWSKETCHD_VIEW_H

struct fs_hash_key;
struct fs_sketch_params;
struct fsd_blocklist;
struct fsd_frontend;
struct fsd_loader;
struct fsd_options;
struct fsd_server;
struct fsd_state_budget;

struct fsd_policy_state;
struct fsd_accuracy_watch;

struct fsd_view {
	const struct fsd_options *opts;
	const struct fsd_loader *loader;	/* the in object, the -i links */
	const struct fsd_frontend *fe;		/* [FSD_FE_MAX], frontend.h */
	const struct fsd_state_budget *budget;
	const struct fsd_server *server;	/* its refused and timeouts */
	/* Not const: its status takes the list's lock (blocklist.h). */
	struct fsd_blocklist *blocklist;
	/* The loop's: read by status and metrics on the loop only. */
	const struct fsd_policy_state *policy;
	/* The keyed sample's window checks (accuracy_watch.h), the loop's. */
	const struct fsd_accuracy_watch *accuracy;
	/* The most the histories may hold at these options (cmdline.h). */
	unsigned long long history_max_bytes;
	/* The datapath's parameters, and its packet hash's keys: where the
	 * detection sketches keep a candidate (metrics' top prefixes). */
	const struct fs_sketch_params *params;
	const struct fs_hash_key *hash_key;
};

#endif /* FLOWSKETCHD_VIEW_H */
