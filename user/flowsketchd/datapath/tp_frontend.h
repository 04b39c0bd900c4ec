/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * tp_frontend.h - the interface filter of the tracepoint frontends.
 *
 * The tracepoints fire for every device of every network namespace; a
 * frontend counts a frame only when its device is in the object's
 * fs_ifaces map (bpf/skb_frontend.bpf.h), keyed by the daemon's network
 * namespace (its inode number) and the device's ifindex there.
 */
#ifndef FLOWSKETCHD_TP_FRONTEND_H
#define FLOWSKETCHD_TP_FRONTEND_H

#include <stdbool.h>
#include <linux/types.h>

/* Count (on) or stop counting ifindex of the daemon's namespace in the
 * fs_ifaces map map_fd, its frames in fs_ifcount[slot] (ifslots.h).
 * 0 or -errno. */
int fsd_tp_iface_set(int map_fd, int ifindex, __u32 slot, bool on);
/* Remove every entry but the n ifindexes of keep (0s ignored): what an
 * adopted map holds for interfaces this daemon does not count, or for
 * another namespace.  The number removed, or -errno. */
int fsd_tp_iface_keep_only(int map_fd, const int *keep, unsigned int n);

/* The runs the kernel skipped for the program link_fd holds because it
 * was already running on that CPU (a tracing program never nests on
 * one): bpf_prog_info.recursion_misses.  The program is the link's, which
 * for an adopted link is the predecessor's.  0 or -errno. */
int fsd_tp_recursion_misses(int link_fd, __u64 *misses);

/* Does the program link_fd holds use the map map_fd?  An adopted link
 * keeps the program an earlier release loaded, which may not know a map
 * this release added (the per-interface counts).  1, 0 or -errno. */
int fsd_tp_link_uses_map(int link_fd, int map_fd);

#endif /* FLOWSKETCHD_TP_FRONTEND_H */
