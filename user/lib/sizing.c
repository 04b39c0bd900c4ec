// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* sizing.c - sketch sizes from error targets and back (see sizing.h). */
#include <errno.h>
#include <math.h>
#include "flowsketch/bloom.h"
#include "flowsketch/hll.h"
#include "sizing.h"
#include "flowsketch/params.h"

double fs_bloom_bits_per_item(double p)
{
	/* m/n = -ln p / (ln 2)^2 = -log2(p) / ln 2 */
	return -log2(p) / M_LN2;
}

double fs_bloom_bits(double n, double p)
{
	return -n * log(p) / (M_LN2 * M_LN2);
}

unsigned int fs_bloom_best_k(double bits_per_item)
{
	/* k = (m/n) ln 2, at least one hash however few bits there are. */
	double k = round(bits_per_item * M_LN2);

	return k < 1 ? 1 : (unsigned int)k;
}

double fs_bloom_fill(double n, double m, unsigned int k)
{
	/* Each of the k*n bit settings misses a given bit with probability
	 * (1 - 1/m), so it stays clear with (1 - 1/m)^(kn) ~ e^(-kn/m). */
	return -expm1(-(double)k * n / m);
}

double fs_bloom_false_positive(double n, double m, unsigned int k)
{
	/* A stranger is a false positive when all its k bits are set. */
	return pow(fs_bloom_fill(n, m, k), k);
}

double fs_cms_width_exact(double epsilon)
{
	return ceil(M_E / epsilon);
}

__u32 fs_cms_depth_for(double delta)
{
	return (__u32)ceil(log(1 / delta));
}

double fs_cms_epsilon_of(double width)
{
	return M_E / width;
}

double fs_cms_delta_of(__u32 depth)
{
	return exp(-(double)depth);
}

double fs_cms_overcount(double epsilon, double total)
{
	return epsilon * total;
}

double fs_cms_min_epsilon(void)
{
	return M_E / (double)(1U << FS_CMS_MAX_LOG2W);
}

double fs_cms_min_delta(void)
{
	return exp(-(double)FS_CMS_MAX_DEPTH);
}

int fs_cms_size_for(double epsilon, double delta, __u32 *log2w, __u32 *depth)
{
	double width, rows;
	__u32 l = FS_CMS_MIN_LOG2W;

	/* Written so that NaN fails every comparison and is refused. */
	if (!(epsilon > 0 && epsilon < 1) || !(delta > 0 && delta < 1))
		return -EINVAL;
	width = fs_cms_width_exact(epsilon);
	/* fs_cms_depth_for() in double, range-checked before it narrows to
	 * __u32: 1 / delta is infinite for a subnormal delta. */
	rows = ceil(log(1 / delta));
	if (width > (double)(1U << FS_CMS_MAX_LOG2W) || rows > FS_CMS_MAX_DEPTH)
		return -EINVAL;
	while ((double)(1U << l) < width)
		l++;
	*log2w = l;
	*depth = rows < 1 ? 1 : (__u32)rows;
	return 0;
}

double fs_cms_bytes(double width, __u32 depth, unsigned int cell_bytes)
{
	return width * depth * cell_bytes;
}

__u64 fs_hll_registers(__u32 p)
{
	return 1ULL << p;
}

double fs_hll_bytes(__u32 p, unsigned int bits_per_register)
{
	return (double)fs_hll_registers(p) * bits_per_register / 8;
}

__u32 fs_sketch_lines_per_packet(__u32 depth)
{
	return depth + FS_HLL_NSKETCH;
}

unsigned int fs_blocklist_max_log2(unsigned int max)
{
	double worst = (double)FS_BLOOM_MAX_EXPAND * max;
	unsigned int log2 = 0, k;

	if (fs_bloom_size(worst > 1024 ? worst : 1024, FS_BLOCKLIST_FPR, &log2, &k))
		return FS_BLOOM_MAX_LOG2_BLOCKS;
	return log2;
}

double fs_blocklist_map_bytes(unsigned int max)
{
	return 2 * ldexp(sizeof(struct fs_bloom_block), (int)fs_blocklist_max_log2(max)) +
	       sizeof(struct fs_block_summary);
}

double fs_blocklist_filter(double keys, unsigned int max_log2,
			   unsigned int *log2_blocks, unsigned int *k,
			   double *capacity)
{
	double want = keys * 2 > 1024 ? keys * 2 : 1024, best = 2;
	unsigned int kk;

	*capacity = want;
	if (!fs_bloom_size(want, FS_BLOCKLIST_FPR, log2_blocks, k) &&
	    *log2_blocks <= max_log2)
		return fs_bloom_fpr(keys, ldexp(1, (int)*log2_blocks), *k);
	/* More than twice the keys fit at the target: the largest filter,
	 * which holds a full list at its worst at the target, with the best
	 * k for the keys there are. */
	*log2_blocks = max_log2;
	for (kk = 1; kk <= FS_BLOOM_MAX_K; kk++) {
		double f = fs_bloom_fpr(keys, ldexp(1, (int)max_log2), kk);

		if (f < best) {
			best = f;
			*k = kk;
		}
	}
	return best;
}
