/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * maps.h - every BPF map of flowsketch, its layout and who writes it.
 *
 * The daemon pins them all under one directory (default
 * /sys/fs/bpf/flowsketch), so `bpftool map dump pinned DIR/NAME` prints
 * them with their BTF types.
 *
 *  pin      map name    type             key       value                      written by
 *  ------   ---------   --------------   -------   ------------------------   -----------------
 *  params   <obj>.rodata ARRAY (frozen)   0         fs_params (params.h),      daemon, before load
 *                                                   fs_hash_key (hash.h),
 *                                                   fs_use_kfunc
 *  ctl      fs_ctl      ARRAY, mmapable  0         struct fs_ctl              daemon
 *  MAP      fs_MAP      PERCPU_ARRAY     chunk     struct fs_MAP_chunk        datapath; daemon zeroes
 *           one a datapath map of sketch state (sketch_kind.h, FS_DP_MAPS):
 *           cms_narrow (4-byte cells, cms.h "Narrow cells"), hll_packed (5
 *           registers a word, hll.h), what every packet touches; cms (wide
 *           cells the narrow ones spill into; bit 63 of each counter: the
 *           report flag of a release before the narrow cells, mask it off
 *           to read), hll (byte registers, written by such releases only)
 *  hot      fs_hot      PERCPU_ARRAY     0         struct fs_hot_line         datapath only; daemon
 *                                                   (rx, sketched, both slots'  reads, never writes
 *                                                   epoch-tagged totals)
 *  stats    fs_stats    PERCPU_ARRAY     fs_stat   __u64 (since load; the     datapath
 *                                                   cold counters, see enum)
 *  reports  fs_reports  RINGBUF          -         struct fs_hh_report        datapath -> daemon
 *  barrier  fs_barrier  ARRAY_OF_MAPS    0         a one-entry array          daemon (see below)
 *  kfunc_args fs_kfunc_args PERCPU_ARRAY 0         struct fs_kfunc_args       datapath, kfunc path only
 *                                                   (kfunc.h)
 *  params   <obj>.rodata                  fs_bloom_key (bloom.h)     daemon, before load
 *  bfilter  fs_bfilter  ARRAY, mmapable  block     struct fs_bloom_block      daemon; datapath reads
 *                                                   (bloom.h): two filters, blocks [0, 2^L) and
 *                                                   [2^L, 2^(L+1)); fs_ctl.bloom names the live one
 *  block4   fs_block4   LPM_TRIE         fs_block_key4 __u32 entry id (>= 1)  daemon; datapath reads
 *  block6   fs_block6   LPM_TRIE         fs_block_key6 __u32 entry id         (the exact set)
 *  bsummary fs_bsummary ARRAY, mmapable  0         struct fs_block_summary    daemon; datapath reads
 *                                                   (bloom.h, "The summary")
 *  hits     fs_block_hits ARRAY, mmapable entry id struct fs_block_hits      datapath, atomic adds;
 *                                                                             daemon zeroes a freed id
 *  bstats   fs_block_stats PERCPU_ARRAY  0         struct fs_block_stats      datapath
 *  ifslot   fs_ifslot   ARRAY, mmapable  0         struct fs_ifslots          daemon; XDP reads
 *                                                   (which interface each slot is)
 *  ifcount  fs_ifcount  PERCPU_ARRAY     slot      struct fs_if_counts        datapath; daemon zeroes
 *                                                   (per interface, since load)  a slot it reassigns
 *
 * Windows and slots.  The datapath maps hold FS_NSLOTS (2) copies of every
 * per-window sketch; slot = fs_ctl.window_seq % FS_NSLOTS.  To close a
 * window the daemon increments window_seq, then updates fs_barrier: an
 * update of a map-in-map returns only after an RCU grace period
 * (synchronize_rcu() in the map_update_elem syscall), and XDP and
 * tracepoint programs run inside RCU read-side sections, so once it returns
 * no program is still writing the old slot.  The daemon then reads the
 * old slot's chunks and totals, merges the per-CPU copies, and zeroes the
 * chunks before they become current again one window later.  Every packet
 * is thus counted in exactly one window.
 *
 * Totals reset by epoch.  The totals are not zeroed by the daemon: they
 * share their per-CPU line (fs_hot) with counters the datapath increments
 * in every window, and user space can only rewrite a whole per-CPU
 * element, which would lose the increments made between its read and its
 * write.  So each slot's totals carry the window_seq they belong to
 * (fs_slot_totals.seq).  A packet of window seq whose slot's tag differs
 * starts that slot's totals from zero on its CPU and sets the tag to seq;
 * the tag can only be older (seq - 2, seq - 4, ...), since seq is the
 * newest window.  After the barrier the daemon reads fs_hot and counts a
 * CPU's totals of the closed window old only if their tag is old; any
 * other tag means that CPU had no packet in window old (its totals there
 * are 0, and what the line holds is an earlier window's, already counted
 * or lost).  No writer of window old is left after the barrier, and the
 * next writer of that slot belongs to old + 2, which cannot start before
 * the daemon's next rotation: the read is stable.  A window whose totals
 * cannot be read is lost, and nothing needs cleaning: its slot's next
 * window resets them by its tag.
 *
 * Per-CPU copies avoid atomics and cache-line bouncing: each CPU owns its
 * sketch, and merging is exact (sum for Count-Min, max for HyperLogLog).
 */
#ifndef FLOWSKETCH_MAPS_H
#define FLOWSKETCH_MAPS_H

#include "compat.h"
#include "flow_key.h"
#include "cms.h"
#include "hll.h"
#include "bloom.h"

#define FS_PIN_DIR_DEFAULT "/sys/fs/bpf/flowsketch"

/*
 * fs_ctl[0]: window sequence (selects the slot) and the report fraction.
 * Both share one line with nothing the datapath writes.  Report
 * thresholds are not here: each packet's follows its own window's running
 * total on its CPU (cms.h, "Heavy-hitter reporting").
 *
 * The last two words are the daemon's alone (the datapath never reads
 * them): where the rotation protocol stands, kept in the pinned map so
 * that a daemon that adopts the datapath after a SIGKILL knows what its
 * predecessor finished (user/flowsketchd/windows/rotation.c, "Adoption"):
 *   window_start_ns  CLOCK_MONOTONIC when window window_seq began
 *   done_seq         windows below it are finished: stored in the history
 *                    (or counted lost) before their slot is zeroed; so
 *                    done_seq < window_seq means window window_seq - 1 is
 *                    still whole in its slot, done_seq == window_seq that
 *                    its slot may be partly zeroed
 */
struct fs_ctl {
	__u64 window_seq;
	__u64 hh_phi_q32;	/* floor(phi * 2^32), phi = --hh-fraction; 0: no reports */
	__u64 bloom;		/* the blocklist filter, fs_bloom_ctl() (bloom.h); 0: none */
	__u64 window_start_ns;
	__u64 done_seq;
};

/*
 * The blocklist (bpf/blocklist.bpf.h, bloom.h).  The exact set is two LPM
 * tries keyed by prefix, whose values are entry ids; the filter keys every
 * entry on its group's longest length (expanded), the summary marks the
 * /16s that hold entries.  Per entry, what it dropped:
 * fs_block_hits[id], added to atomically (any CPU may drop for any
 * entry); id 0 is never used.  Per CPU, what the verdict did:
 *
 *   off size field
 *     0    8 checked        packets the verdict looked at (list not empty)
 *     8    8 probes         filter probes made
 *    16    8 maybe          packets the filter answered "maybe" for
 *    24    8 dropped        packets confirmed and dropped
 *    32    8 dropped_bytes  their bytes
 * "maybe" minus "dropped" are the filter's false positives (per packet;
 * per probe, at most one "maybe" probe a packet: the verdict stops there).
 * Then the unjudged frames and their bytes, and "cached": packets the
 * verdict cache passed without a probe (the struct is still one line, so
 * an earlier release's pinned map of it is adopted as it is).
 */
struct fs_block_key4 {
	__u32 prefixlen;
	__u8 addr[4];
};

struct fs_block_key6 {
	__u32 prefixlen;
	__u8 addr[16];
};

struct fs_block_hits {
	__u64 packets;
	__u64 bytes;
};

struct fs_block_stats {
	__u64 checked;
	__u64 probes;
	__u64 maybe;
	__u64 dropped;
	__u64 dropped_bytes;
	__u64 unjudged;		/* frames dropped unjudged (parse.bpf.h,
				   "Deep VLAN stacks") */
	__u64 unjudged_bytes;
	__u64 cached;		/* passed by the verdict cache (bloom.h) */
} __attribute__((aligned(64)));

/* A window's totals: everything that entered its sketches (the daemon's
 * sum over CPUs, and the history's). */
struct fs_window_totals {
	__u64 packets;
	__u64 bytes;
};

/* One slot's running totals on one CPU, tagged with their window. */
struct fs_slot_totals {
	__u64 seq;	/* the window_seq packets and bytes belong to */
	__u64 packets;
	__u64 bytes;
};

/*
 * fs_hot[0], one per CPU: every fixed per-packet write in one 64-byte
 * line, so that a packet touches fs_ctl and this line besides its sketch
 * cells.  Written by the datapath only (see "Totals reset by epoch"
 * above); the daemon reads it.
 *
 *   off size field
 *     0    8 sketched          packets counted in the sketches, since load
 *     8    8 rx                frames the program ran on, since load
 *    16   24 slot[0]           seq, packets, bytes of slot 0's window
 *    40   24 slot[1]           the same for slot 1
 *
 * sketched comes before rx: the datapath adds to rx first and to
 * sketched later, and a reader copying the line in address order (as the
 * kernel's per-CPU lookup does) thus never sees more sketched than rx.
 * The cold counters (non-IP, malformed, fragments, reports) stay in
 * fs_stats: with 64-bit tags there is room for two counters here, and
 * those are not written by the common packet.  Aligned to the line, so a
 * CPU's element never straddles two lines.
 */
struct fs_hot_line {
	__u64 sketched;
	__u64 rx;
	struct fs_slot_totals slot[FS_NSLOTS];
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct fs_hot_line) == 64, "fs_hot is one cache line");
_Static_assert(FS_NSLOTS == 2, "fs_hot_line holds two slots");

/*
 * Counters since load, never reset by rotation.  FS_STAT_RX and
 * FS_STAT_SKETCHED live in fs_hot (struct fs_hot_line, rx and sketched);
 * their fs_stats elements are never written and read 0 (kept so that the
 * parse reasons below stay non-zero and the numbering stays).  The others
 * are fs_stats[stat].
 */
enum fs_stat {
	FS_STAT_RX = 0,			/* frames the program ran on (fs_hot) */
	FS_STAT_SKETCHED,		/* packets counted in the sketches (fs_hot) */
	FS_STAT_NON_IP,			/* not IPv4/IPv6 (ARP, LLDP, ...) */
	FS_STAT_FRAGMENTS,		/* non-first fragments: sketched, ports 0 */
	FS_STAT_TRUNC_ETH,		/* shorter than an Ethernet header */
	FS_STAT_TRUNC_VLAN,		/* truncated inside a VLAN tag */
	FS_STAT_VLAN_DEPTH,		/* more than two VLAN tags (judged by
					   source up to eight) */
	FS_STAT_TRUNC_IPV4,		/* shorter than the IPv4 header */
	FS_STAT_BAD_IHL,		/* IHL < 5 or options past the frame */
	FS_STAT_BAD_IPV4_LEN,		/* total length < header length */
	FS_STAT_TRUNC_IPV6,		/* shorter than the IPv6 header */
	FS_STAT_TRUNC_IPV6_EXT,		/* extension header past the frame or
					   the payload length */
	FS_STAT_IPV6_EXT_CHAIN,		/* more extension headers than we walk */
	FS_STAT_TRUNC_L4,		/* TCP/UDP/ICMP header past the frame or
					   the IP packet's length */
	FS_STAT_BAD_TCP_DOFF,		/* TCP data offset < 5 */
	FS_STAT_REPORTS,		/* heavy-hitter reports sent */
	FS_STAT_REPORTS_DROPPED,	/* reports lost: ring buffer full */
	FS_STAT_UPDATE_ERRORS,		/* sketch chunk missing (cannot happen
					   unless maps and params disagree) */
	FS_STAT_SKB_NONLINEAR,		/* tracepoint frontends: headers past
					   the skb's linear part, not read */
	FS_STAT_MAX,
};


/*
 * Per-interface counts.  The sketches are host-wide; what each interface
 * carried is counted beside them, per CPU, in fs_ifcount[slot]: packets
 * and bytes of the frames the parser keyed, as the window totals count
 * them, so that, while every interface a datapath counted keeps its
 * slot, the slots of one object sum to the totals of all its windows
 * since load, the current one included.  (They are added before the
 * sketch update, whose stack the skb frontends have no room to outlive:
 * a frame whose update failed, FS_STAT_UPDATE_ERRORS, which cannot happen
 * while maps and parameters agree, would be counted here only.)
 *
 * A slot is an interface name, not an ifindex: a device deleted and
 * recreated under its name keeps its slot and its count goes on.  The
 * daemon keeps the names in fs_ifslot[0].name (an empty name: the slot is
 * free, and zero), so that a daemon adopting the pinned maps finds each
 * name's slot whatever order its -i options come in.  The slot of a name
 * it no longer counts it zeroes, after an RCU barrier (no program still
 * holds it), and frees: that name, given again later, starts from 0.
 * Slot FS_IFSLOT_OTHER has no name: frames of an interface that has no
 * slot when they arrive (an adopted XDP link of an interface the daemon is
 * about to detach), so that the sum stays exact.
 *
 * How a frontend finds the slot.  A tracepoint frontend looks its device
 * up in fs_ifaces anyway (its filter): the value is the slot.  XDP runs
 * only on the interfaces it is attached to and needs no filter, so it
 * scans fs_ifslot[0].ifindex[0, n) for ctx->ingress_ifindex: n is the
 * number of slots in use (1 or 2 on most hosts, at most FS_IFSLOTS), the
 * words a line away from fs_ctl's, read-only, shared by all CPUs.
 *
 *   fs_ifslots (fs_ifslot[0], 1284 bytes):
 *     off  size  field
 *       0     4  n         slots [0, n) may be named; XDP scans no further
 *       4   256  ifindex   XDP: the ifindex slot i counts now; 0: none
 *     260  1024  name      the daemon's: slot i's interface, NUL padded
 *   fs_if_counts (fs_ifcount[slot], per CPU): packets, bytes (u64 each)
 */
#define FS_IFSLOTS 64			/* = FSD_MAX_IFACES */
#define FS_IFSLOT_OTHER FS_IFSLOTS	/* fs_ifcount has FS_IFSLOTS + 1 */
#define FS_IFNAME_LEN 16		/* IFNAMSIZ */

struct fs_ifslots {
	__u32 n;
	__u32 ifindex[FS_IFSLOTS];
	char name[FS_IFSLOTS][FS_IFNAME_LEN];
};

_Static_assert(sizeof(struct fs_ifslots) == 1284, "fs_ifslots layout");

struct fs_if_counts {
	__u64 packets;
	__u64 bytes;
};

/* An interface a tracepoint frontend counts (fs_ifaces, bpf/skb_frontend.bpf.h):
 * its index within the network namespace of that inode number. */
struct fs_tp_iface {
	__u32 ifindex;
	__u32 netns_ino;
};

/* The parse reasons that say "the frame ends inside a header": on a copy
 * that stops early, they say only that the copy does. */
FS_INLINE int fs_stat_is_truncation(int reason)
{
	return reason == FS_STAT_TRUNC_ETH || reason == FS_STAT_TRUNC_VLAN ||
	       reason == FS_STAT_TRUNC_IPV4 || reason == FS_STAT_TRUNC_IPV6 || reason == FS_STAT_TRUNC_IPV6_EXT ||
	       reason == FS_STAT_TRUNC_L4;
}

/*
 * Ring buffer record: a flow reached a report threshold on one CPU.
 *
 *   off size field
 *     0   40 key         the flow (flow_key.h)
 *    40    8 hash        its flow hash, so the daemon queries without rehashing
 *    48    8 window_seq  the window it was counted in (fs_ctl.window_seq)
 *    56    4 report      FS_REPORT_* bits (packet_update.h)
 *    60    4 cpu         the CPU whose sketch crossed
 */
struct fs_hh_report {
	struct fs_flow_key key;
	__u64 hash;
	__u64 window_seq;
	__u32 report;
	__u32 cpu;
};

_Static_assert(sizeof(struct fs_hh_report) == 64, "report record layout");

#endif /* FLOWSKETCH_MAPS_H */
