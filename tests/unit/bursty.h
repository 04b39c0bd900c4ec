/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * bursty.h - bursty heavy-tailed traffic and the report oracle, for the
 * model test (test_model.c) and the datapath test (test_datapath.c).
 *
 * Traffic: flows drawn from Zipf(s) over nflows, each draw sending a train
 * of consecutive packets (geometric length, mean train_mean), the way TCP
 * sends bursts; optionally a window starts with a share of packets from a
 * "mice" pool of other flows before the heavy traffic ramps up.  Flow f's
 * packets are all bursty_len(f) bytes.
 *
 * Oracle, computed here from what was sent, not from the code under test
 * (the report rule of include/flowsketch/cms.h, restated):
 *   recall  every flow with >= phi of a window's packets (bytes) is
 *           reported for packets (bytes) in that window;
 *   once    no flow is reported twice for one metric in one window;
 *   bound   reports per window and metric <= 2 * H + 1 / phi, where H is
 *           the number of flows with >= (phi / 2 - eps) of the window,
 *           eps = e / w (the Count-Min overcount allowance: the rule
 *           compares estimates, which may exceed the truth by eps * N).
 * One CPU, as in the tests, so "per CPU" is the whole window.
 */
#ifndef FLOWSKETCH_TEST_BURSTY_H
#define FLOWSKETCH_TEST_BURSTY_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BURSTY_MAX_FLOWS 4096	/* heavy pool + mice pool */

struct bursty {
	uint64_t rng;
	unsigned int nflows;		/* Zipf pool: flows 0 .. nflows-1 */
	unsigned int nmice;		/* mice pool: nflows .. nflows+nmice-1 */
	double cdf[BURSTY_MAX_FLOWS];
	double train_mean;
	unsigned int flow;		/* current train's flow */
	unsigned int left;		/* packets left in it */
	/* Truth and reports of the current window. */
	uint64_t packets[BURSTY_MAX_FLOWS], bytes[BURSTY_MAX_FLOWS];
	unsigned int rep_packets[BURSTY_MAX_FLOWS], rep_bytes[BURSTY_MAX_FLOWS];
	uint64_t total_packets, total_bytes;
};

static inline uint64_t bursty_rand(struct bursty *b)
{
	b->rng ^= b->rng >> 12;
	b->rng ^= b->rng << 25;
	b->rng ^= b->rng >> 27;
	return b->rng * 0x2545f4914f6cdd1dULL;
}

static inline double bursty_unit(struct bursty *b)
{
	return (double)(bursty_rand(b) >> 11) / 9007199254740992.0;
}

static inline void bursty_init(struct bursty *b, uint64_t seed,
			       unsigned int nflows, unsigned int nmice,
			       double zipf_s, double train_mean)
{
	double sum = 0;
	unsigned int i;

	memset(b, 0, sizeof(*b));
	b->rng = seed | 1;
	b->nflows = nflows;
	b->nmice = nmice;
	b->train_mean = train_mean;
	for (i = 0; i < nflows; i++) {
		sum += pow((double)(i + 1), -zipf_s);
		b->cdf[i] = sum;
	}
	for (i = 0; i < nflows; i++)
		b->cdf[i] /= sum;
}

/* Bytes of every packet of flow f: 64 .. 1500, fixed per flow. */
static inline unsigned int bursty_len(unsigned int f)
{
	return 64 + (f * 2654435761U) % 1437;
}

/* The next packet's flow; mice: draw from the mice pool instead. */
static inline unsigned int bursty_next(struct bursty *b, int mice)
{
	if (!b->left) {
		double u = bursty_unit(b);
		unsigned int lo = 0, hi = b->nflows - 1;

		if (mice) {
			b->flow = b->nflows + (unsigned int)(bursty_rand(b) % b->nmice);
		} else {
			while (lo < hi) {	/* first cdf >= u */
				unsigned int mid = (lo + hi) / 2;

				if (b->cdf[mid] < u)
					lo = mid + 1;
				else
					hi = mid;
			}
			b->flow = lo;
		}
		/* Geometric, mean train_mean, at least 1. */
		b->left = 1 + (unsigned int)floor(log(1 - bursty_unit(b)) /
						 log(1 - 1 / b->train_mean));
	}
	b->left--;
	return b->flow;
}

/* Record a sent packet of flow f and the report bits it came with
 * (FS_REPORT_PACKETS 1, FS_REPORT_BYTES 2). */
static inline void bursty_sent(struct bursty *b, unsigned int f, int report)
{
	b->packets[f]++;
	b->bytes[f] += bursty_len(f);
	b->total_packets++;
	b->total_bytes += bursty_len(f);
	b->rep_packets[f] += !!(report & 1);
	b->rep_bytes[f] += !!(report & 2);
}

struct bursty_verdict {
	unsigned int reports, heavy_half, bound;
	unsigned int missed, repeated;
};

/* Check one metric of the window; fills v. */
static inline void bursty_check_metric(const struct bursty *b, double phi,
				       double eps, const uint64_t *truth,
				       const unsigned int *rep, uint64_t total,
				       struct bursty_verdict *v)
{
	unsigned int f, n = b->nflows + b->nmice;

	memset(v, 0, sizeof(*v));
	for (f = 0; f < n; f++) {
		v->reports += rep[f];
		if (rep[f] > 1)
			v->repeated++;
		if (!truth[f])
			continue;
		if ((double)truth[f] >= (phi / 2 - eps) * (double)total)
			v->heavy_half++;
		if ((double)truth[f] >= phi * (double)total && !rep[f])
			v->missed++;
	}
	v->bound = 2 * v->heavy_half + (unsigned int)ceil(1 / phi);
}

static inline int bursty_verdict_ok(const struct bursty_verdict *v)
{
	return !v->missed && !v->repeated && v->reports <= v->bound;
}

/* Forget the window (after checking it). */
static inline void bursty_next_window(struct bursty *b)
{
	memset(b->packets, 0, sizeof(b->packets));
	memset(b->bytes, 0, sizeof(b->bytes));
	memset(b->rep_packets, 0, sizeof(b->rep_packets));
	memset(b->rep_bytes, 0, sizeof(b->rep_bytes));
	b->total_packets = 0;
	b->total_bytes = 0;
}

#endif /* FLOWSKETCH_TEST_BURSTY_H */
