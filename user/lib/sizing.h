/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * sizing.h - how big a sketch must be for a given error, and back.
 *
 * Pure formulas, shared by the CLI's `flowsketch size` calculator and by
 * the daemon, which turns --epsilon/--delta into sketch parameters with
 * fs_cms_size_for().  Nothing here is a table: every figure the calculator
 * prints is computed from these functions.
 *
 * Bloom filter, n items in m bits with k hash functions:
 *   fraction of bits set    f  = 1 - e^(-kn/m)
 *   false-positive rate     p  = f^k
 *   best k for m/n bits     k  = (m/n) ln 2       (then f = 1/2)
 *   bits for n items at p   m  = -n ln p / (ln 2)^2
 *   bits per item           m/n = -log2(p) / ln 2 = 1.44 log2(1/p)
 *
 * Count-Min (Cormode and Muthukrishnan): estimate <= truth + eps * N with
 * probability >= 1 - delta when
 *   width  w = ceil(e / eps),   depth d = ceil(ln(1 / delta)).
 * flowsketch rounds w up to a power of two (a column is then a mask of hash
 * bits, see cms.h), which only lowers eps to e / w.
 *
 * HyperLogLog with m = 2^p registers: relative standard error 1.04/sqrt(m);
 * a register needs 6 bits (ranks reach 65 - p < 64), 6m/8 bytes packed.
 */
#ifndef FLOWSKETCH_SIZING_H
#define FLOWSKETCH_SIZING_H

#include <linux/types.h>

/* Bloom filter. */
double fs_bloom_bits_per_item(double p);
double fs_bloom_bits(double n, double p);
unsigned int fs_bloom_best_k(double bits_per_item);
double fs_bloom_fill(double n, double m, unsigned int k);
double fs_bloom_false_positive(double n, double m, unsigned int k);

/* Count-Min: the textbook (unrounded) width and the depth. */
double fs_cms_width_exact(double epsilon);
__u32 fs_cms_depth_for(double delta);
double fs_cms_epsilon_of(double width);
double fs_cms_delta_of(__u32 depth);
double fs_cms_overcount(double epsilon, double total);

/*
 * flowsketch's Count-Min size for (epsilon, delta): *log2w such that
 * 2^log2w >= ceil(e / epsilon) (at least FS_CMS_MIN_LOG2W) and *depth =
 * ceil(ln(1 / delta)).  -EINVAL when epsilon or delta is not in (0, 1) or
 * the result exceeds FS_CMS_MAX_LOG2W / FS_CMS_MAX_DEPTH; the outputs are
 * then left untouched.
 */
int fs_cms_size_for(double epsilon, double delta, __u32 *log2w, __u32 *depth);

/* Smallest epsilon / delta fs_cms_size_for() accepts (the range limits). */
double fs_cms_min_epsilon(void);
double fs_cms_min_delta(void);

/* Bytes of one Count-Min slot: at `cell_bytes` per cell (4 in the
 * textbook, sizeof(struct fs_cms_cell) = 16 in flowsketch). */
double fs_cms_bytes(double width, __u32 depth, unsigned int cell_bytes);

/* HyperLogLog. */
__u64 fs_hll_registers(__u32 p);
/* Standard error: fs_hll_rse() in hll_estimate.h. */
double fs_hll_bytes(__u32 p, unsigned int bits_per_register);

/*
 * Cache lines (64 bytes) one packet touches in flowsketch's datapath
 * layout (maps.h, cms.h, hll.h), counted from the layout: random per flow,
 * the d Count-Min cells (rows are 2^log2w cells apart, so each on its own
 * line) and the FS_HLL_NSKETCH HyperLogLog registers (sketches 2^p bytes
 * apart); the same for every packet, fs_ctl, the per-CPU fs_hot line, the
 * interface's slot (XDP: fs_ifslot's table, read-only and shared; a
 * tracepoint frontend: its fs_ifaces entry) and its per-CPU fs_ifcount
 * counts (maps.h).  The packet's own headers and the read-only hash key
 * are left out.
 */
#define FS_FIXED_LINES_PER_PACKET 4
__u32 fs_sketch_lines_per_packet(__u32 depth);

/*
 * The blocklist's filter (include/flowsketch/bloom.h), as the daemon sizes
 * it; the CLI's `flowsketch size --blocklist` prints the same figures.
 * Sizes count expanded keys: an entry of length L in group [e - 3, e]
 * puts 2^(e - L) <= FS_BLOOM_MAX_EXPAND keys into the filter (none for
 * /0../16, the summary's).
 */
#define FS_BLOCKLIST_FPR 0.01	/* per probe, by design */

/* log2 of the blocks of each of the maps' two filters for --blocklist-max
 * max: the worst case, FS_BLOOM_MAX_EXPAND keys an entry, at
 * FS_BLOCKLIST_FPR (at least 1024 keys). */
unsigned int fs_blocklist_max_log2(unsigned int max);
/* The bytes the maps take for it: two filters and the summary. */
double fs_blocklist_map_bytes(unsigned int max);
/*
 * The filter a rebuild makes for `keys` keys: twice them (at least 1024)
 * at FS_BLOCKLIST_FPR, at most 2^max_log2 blocks, k the best for that
 * size; *capacity the keys it was sized for.  Returns its design rate
 * for `keys` (above the target only past the maps' worst case).
 */
double fs_blocklist_filter(double keys, unsigned int max_log2,
			   unsigned int *log2_blocks, unsigned int *k,
			   double *capacity);

#endif /* FLOWSKETCH_SIZING_H */
