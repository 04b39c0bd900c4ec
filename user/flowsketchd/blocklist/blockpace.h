/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * blockpace.h - when a long blocklist change may touch the LPM tries.
 *
 * A trie delete hands its node to the kernel to free after an RCU grace
 * period, and the kernel frees such nodes later, in batches, in softirq on
 * whichever CPU: work that no nice level or policy of the changing thread
 * defers, and that runs ahead of every task, the event loop included.  A
 * `block clear` of 1,000,000 entries without pauses put the loop's window
 * timer 15-59 ms late in 4 of 5 runs here; with a 1 ms pause every 4096
 * deletes alone, 0 of 6 here and once 36 ms on CI's slower machine (its
 * clear ran 1.5 s, this machine's 0.8 s).  Two rules keep that work off
 * the window boundary:
 *
 *   burst  after every FSD_BLOCK_BURST deletes, a pause of
 *          FSD_BLOCK_BURST_PAUSE_NS: grace periods drain the queue as it
 *          fills, instead of past RCU's high mark (qhimark, 10,000), where
 *          the kernel runs callbacks without a batch limit;
 *   quiet  no trie change (insert or delete) from FSD_BLOCK_QUIET_NS
 *          before the loop's next boundary until FSD_BLOCK_AFTER_NS past
 *          it: what the kernel owes for the changes before the quiet is
 *          paid before the timer fires, not when it does.
 *
 * The cost: the quiet takes QUIET / window of a long change's time (10 %
 * at 1 s windows, 0.2 % at the default 60 s), the bursts about a quarter
 * of a delete's (1 ms per 4096 deletes of about 1 us each).  A change of
 * a few entries meets neither rule unless it falls in a quiet, and then
 * waits at most QUIET + AFTER.
 */
#ifndef FLOWSKETCHD_BLOCKPACE_H
#define FLOWSKETCHD_BLOCKPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define FSD_BLOCK_BURST 4096
#define FSD_BLOCK_BURST_PAUSE_NS 1000000ULL
#define FSD_BLOCK_QUIET_NS 100000000ULL
#define FSD_BLOCK_AFTER_NS 5000000ULL

/* One long change's pacing: the loop's next boundary (CLOCK_MONOTONIC ns,
 * written by the loop; NULL: no loop to keep quiet for), and how many
 * deletes it has made. */
struct fsd_block_pace {
	const __u64 *due_ns;
	size_t deletes;
};

/* How long to wait before the next trie change, at now, with the
 * boundary due at due (0: none), after deletes deletes; frees: the change
 * is a delete.  Pure: the rules above, and nothing else. */
__u64 fsd_block_pause_ns(__u64 now, __u64 due, size_t deletes, bool frees);

/* Before each trie change of a long one: wait as the rules say. */
void fsd_block_pace(struct fsd_block_pace *p, bool frees);

#endif
