/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * planted.h - IPv4 traffic with planted spreaders and a planted heavy
 * prefix, and its exact counts: the oracle of test_datapath.c's
 * test_detect_planted.
 *
 * Traffic (one UDP packet a record, shuffled with the seed):
 *   ordinary  100,000 flows between two pools of 20,000 hosts (sources in
 *             10/8 and 100/8, destinations in 172.16/12), 1 to 6 packets
 *             each, small counts most often (P(k) falling with k);
 *   scanner   203.0.113.66 to 1,000 hosts x 5 ports, one packet each:
 *             5,000 distinct (destination, port) pairs;
 *   victim    198.18.0.10 from 5,000 distinct spoofed sources, one packet
 *             each;
 *   heavy     198.51.100.1 .. .200, ten flows each to four servers
 *             192.0.2.1 .. .4, together a quarter of all packets: each
 *             host is 1/800 of the traffic, the /24 is 1/4.
 * Several ports a scanned host: an element that lost its port would read
 * 1,000, not 5,000.
 *
 * Counts, from the records alone: a key's distinct elements on a spread
 * side (spread.h's element: (destination, port) of a source, source of a
 * destination) with the side's distinct (key, element) pairs F, and the
 * packets of every prefix of a length on a side.
 */
#ifndef FLOWSKETCH_TEST_PLANTED_H
#define FLOWSKETCH_TEST_PLANTED_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "rng.h"

#define PLANTED_ORDINARY 100000
#define PLANTED_POOL 20000
#define PLANTED_SCAN_HOSTS 1000
#define PLANTED_SCAN_PORTS 5
#define PLANTED_VICTIM_SOURCES 5000
#define PLANTED_HEAVY_HOSTS 200
#define PLANTED_HEAVY_SERVERS 4
#define PLANTED_HEAVY_FLOWS 10		/* a host's */

#define PLANTED_IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | \
				(uint32_t)(c) << 8 | (uint32_t)(d))
#define PLANTED_SCANNER PLANTED_IP(203, 0, 113, 66)
#define PLANTED_VICTIM PLANTED_IP(198, 18, 0, 10)
#define PLANTED_HEAVY24 PLANTED_IP(198, 51, 100, 0)

/* One packet; addresses and ports in host order. */
struct planted_pkt {
	uint32_t src, dst;
	uint16_t sport, dport;
};

struct planted {
	struct planted_pkt *pkt;
	size_t n, cap;
};

/* A prefix and its packets. */
struct planted_count {
	uint32_t prefix;
	uint64_t packets;
};

static inline void planted_add(struct planted *t, uint32_t src, uint32_t dst,
			       uint16_t sport, uint16_t dport, unsigned int times)
{
	struct planted_pkt p = { src, dst, sport, dport };

	while (times--) {
		if (t->n == t->cap) {
			t->cap = t->cap ? 2 * t->cap : 1 << 18;
			t->pkt = realloc(t->pkt, t->cap * sizeof(*t->pkt));
			if (!t->pkt)
				abort();
		}
		t->pkt[t->n++] = p;
	}
}

/* Host i of a pool: distinct for distinct i (odd multipliers are
 * bijections modulo a power of two). */
static inline uint32_t planted_source(uint32_t i)
{
	return (i % 3 ? 10U : 100U) << 24 | ((i * 2654435761U) & 0xffffff);
}

static inline uint32_t planted_dest(uint32_t i)
{
	return PLANTED_IP(172, 16 + (i & 15), 0, 0) | (((i >> 4) * 40503U) & 0xffff);
}

static inline void planted_make(struct planted *t, __u64 seed)
{
	/* Small counts most often: P(k) about 1 / k^1.3 over 1..6. */
	static const unsigned int counts[] = { 1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 4, 6 };
	static const uint16_t ports[PLANTED_SCAN_PORTS] = { 22, 23, 80, 443, 3389 };
	__u64 rng = seed, others, heavy, per_host;
	uint32_t i, j;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < PLANTED_ORDINARY; i++) {
		uint64_t r = rng_next(&rng);

		planted_add(t, planted_source((uint32_t)(r % PLANTED_POOL)),
			    planted_dest((uint32_t)((r >> 20) % PLANTED_POOL)),
			    (uint16_t)(1024 + (r >> 40) % 60000),
			    (r >> 58) % 8 ? 443 : 80,
			    counts[(r >> 32) % (sizeof(counts) / sizeof(counts[0]))]);
	}
	for (i = 0; i < PLANTED_SCAN_HOSTS * PLANTED_SCAN_PORTS; i++) {
		uint32_t host = i / PLANTED_SCAN_PORTS;

		planted_add(t, PLANTED_SCANNER,
			    PLANTED_IP(192, 168, host >> 8, host & 255), 40000,
			    ports[i % PLANTED_SCAN_PORTS], 1);
	}
	for (i = 0; i < PLANTED_VICTIM_SOURCES; i++)
		planted_add(t, (i + 1) * 2654435761U, PLANTED_VICTIM,
			    (uint16_t)(1024 + i), 80, 1);
	/* heavy = others / 3 makes the /24 a quarter of the whole. */
	others = t->n;
	heavy = others / 3;
	per_host = heavy / PLANTED_HEAVY_HOSTS;
	for (i = 0; i < PLANTED_HEAVY_HOSTS; i++)
		for (j = 0; j < PLANTED_HEAVY_FLOWS; j++)
			planted_add(t, PLANTED_HEAVY24 | (i + 1),
				    PLANTED_IP(192, 0, 2, 1 + (i + j) % PLANTED_HEAVY_SERVERS),
				    (uint16_t)(30000 + j), 443,
				    (unsigned int)(per_host / PLANTED_HEAVY_FLOWS +
						   (j < per_host % PLANTED_HEAVY_FLOWS)));
	for (i = (uint32_t)t->n - 1; i > 0; i--) {
		uint32_t k = (uint32_t)(rng_next(&rng) % (i + 1));
		struct planted_pkt x = t->pkt[i];

		t->pkt[i] = t->pkt[k];
		t->pkt[k] = x;
	}
}

static inline void planted_free(struct planted *t)
{
	free(t->pkt);
	memset(t, 0, sizeof(*t));
}

static inline int planted_u128_cmp(const void *a, const void *b)
{
	unsigned __int128 x = *(const unsigned __int128 *)a;
	unsigned __int128 y = *(const unsigned __int128 *)b;

	return x < y ? -1 : x > y;
}

/*
 * The distinct elements of key on a side (0: sources, element
 * (destination, port); 1: destinations, element source), and in *pairs
 * the side's distinct (key, element) pairs, F of spread.h's "Error".
 */
static inline size_t planted_spread(const struct planted *t, int side,
				    uint32_t key, size_t *pairs)
{
	unsigned __int128 *v = malloc(t->n * sizeof(*v));
	size_t i, n = 0, all = 0;

	if (!v)
		abort();
	for (i = 0; i < t->n; i++) {
		const struct planted_pkt *p = &t->pkt[i];

		v[i] = side ? (unsigned __int128)p->dst << 32 | p->src :
			      (unsigned __int128)p->src << 48 |
			      (unsigned __int128)p->dst << 16 | p->dport;
	}
	qsort(v, t->n, sizeof(*v), planted_u128_cmp);
	for (i = 0; i < t->n; i++) {
		if (i && v[i] == v[i - 1])
			continue;
		all++;
		n += (uint32_t)(v[i] >> (side ? 32 : 48)) == key;
	}
	free(v);
	*pairs = all;
	return n;
}

static inline int planted_u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The packets of every prefix of len bits (1..32) on a side (0 sources,
 * 1 destinations), ascending by prefix, into *out (malloc'd); returns
 * how many prefixes.
 */
static inline size_t planted_prefixes(const struct planted *t, int side,
				      unsigned int len, struct planted_count **out)
{
	uint32_t *v = malloc(t->n * sizeof(*v)), mask = ~0U << (32 - len);
	struct planted_count *c = malloc(t->n * sizeof(*c));
	size_t i, n = 0;

	if (!v || !c)
		abort();
	for (i = 0; i < t->n; i++)
		v[i] = (side ? t->pkt[i].dst : t->pkt[i].src) & mask;
	qsort(v, t->n, sizeof(*v), planted_u32_cmp);
	for (i = 0; i < t->n; i++) {
		if (!n || c[n - 1].prefix != v[i]) {
			c[n].prefix = v[i];
			c[n++].packets = 0;
		}
		c[n - 1].packets++;
	}
	free(v);
	*out = c;
	return n;
}

#endif
