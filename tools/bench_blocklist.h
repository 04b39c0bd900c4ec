/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * bench_blocklist.h - fs-bench's blocklist section (included once, by
 * tools/fs-bench.c): what the verdict step costs traffic that is not
 * blocked, at 0, 10,000 and 100,000 entries, through BPF_PROG_TEST_RUN,
 * against the same programs with an empty list and against the kernel's
 * own BPF_MAP_TYPE_BLOOM_FILTER holding the same keys (same exact confirm
 * after it); and what loading the entries and rebuilding the filter after
 * a delete take.
 *
 * Entries are random prefixes of mixed lengths, IPv4 outside 10.0.0.0/8
 * and IPv6; the driver's sources are 10.x.y.z (bench.bpf.c), so no packet
 * is blocked and every one probes every IPv4 group.  The kernel's filter
 * gets as many hash functions as it needs to be at least as selective as
 * ours (it sizes its bit array itself: entries * hashes * 7 / 5, rounded
 * up to a power of two); both rates are printed.
 */
#include <math.h>
#include <time.h>
#include <sys/mman.h>
#include "cidr.h"

#define BB_SIZES 3
static const unsigned int bb_sizes[BB_SIZES] = { 0, 10000, 100000 };

static __u64 bb_rng = 0x5851f42d4c957f2dULL;

static __u64 bb_rand(void)
{
	bb_rng = bb_rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return bb_rng ^ (bb_rng >> 29);
}

static void bb_prefix(struct fs_cidr *c)
{
	unsigned int len, i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < 16; i++)
		c->addr[i] = (__u8)bb_rand();
	if (bb_rand() & 1) {
		c->family = FS_FAMILY_IPV4;
		len = 8 + (unsigned int)(bb_rand() % 25);
		if (c->addr[0] == 10)
			c->addr[0] = 11;
		memset(c->addr + 4, 0, 12);
	} else {
		c->family = FS_FAMILY_IPV6;
		len = 16 + (unsigned int)(bb_rand() % 113);
	}
	for (i = len; i < 128; i++)
		c->addr[i / 8] &= (__u8)~(0x80 >> (i % 8));
	c->len = (__u8)len;
}

static double bb_ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1e3 + (t1.tv_nsec - t0->tv_nsec) / 1e6;
}

struct bb_result {
	double full, verdict, kverdict, parse;	/* ns per packet */
	double fpr, kfpr;			/* per probe, by design */
	unsigned int log2, k, khashes;
	__u64 keys;
	double load_ms, trie_ms, filter_ms, rebuild_ms, barrier_ms;
};

/* One size: a fresh object, n entries in tries and both filters. */
static int bb_measure(const struct fs_sketch_params *p, const struct bench_opts *o,
		      unsigned int n, struct bb_result *r)
{
	struct fs_bloom_key bkey;
	struct fs_cidr *c = calloc(n ? n : 1, sizeof(*c));
	struct fs_bloom_block *filter = NULL;
	struct timespec t0, t1;
	struct bench *skel;
	size_t fbytes = 0;
	unsigned int i, g4 = 0, g6 = 0, round;
	__u64 keys = 0, j;
	__u32 zero = 0;
	int err;

	memset(r, 0, sizeof(*r));
	if (!c)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		bb_prefix(&c[i]);
	n = (unsigned int)fs_cidr_sort_unique(c, n);
	for (i = 0; i < n; i++) {
		__u64 kk;

		fs_cidr_group(&c[i], &kk);
		keys += kk;
		if (c[i].family == FS_FAMILY_IPV4)
			g4 |= fs_cidr_group_bit(&c[i]);
		else
			g6 |= fs_cidr_group_bit(&c[i]);
	}
	r->keys = keys;
	if (n && fs_bloom_size((double)keys, 0.01, &r->log2, &r->k)) {
		free(c);
		return -E2BIG;
	}
	r->fpr = n ? fs_bloom_fpr((double)keys, ldexp(1, (int)r->log2), r->k) : 0;
	/* The kernel's classic filter: fewest hashes at least as selective. */
	r->khashes = 1;
	for (i = 1; i <= 15; i++) {
		double m = pow(2, ceil(log2((double)(keys ? keys : 1) * i * 7 / 5)));
		double f = pow(1 - exp(-(double)i * keys / m), i);

		r->khashes = i;
		r->kfpr = f;
		if (!n || f <= r->fpr)
			break;
	}

	skel = bench__open();
	if (!skel) {
		free(c);
		return -ENOENT;
	}
	FS_DATAPATH_SETUP(skel, p, false);
	bpf_map__set_max_entries(skel->maps.naive_cms, 1);
	bpf_map__set_max_entries(skel->maps.naive_hll, 1);
	bpf_map__set_max_entries(skel->maps.fs_block4, n ? n : 1);
	bpf_map__set_max_entries(skel->maps.fs_block6, n ? n : 1);
	bpf_map__set_max_entries(skel->maps.fs_block_hits, n + 1);
	bpf_map__set_max_entries(skel->maps.fs_bloom, 2U << r->log2);
	bpf_map__set_max_entries(skel->maps.fs_kbloom, keys ? (__u32)keys : 1);
	bpf_map__set_map_extra(skel->maps.fs_kbloom, r->khashes);
	err = bench__load(skel);
	if (err)
		goto out;
	fs_bloom_key_derive(&p->secret, &bkey);
	fbytes = sizeof(*filter) << r->log2;
	filter = mmap(NULL, fbytes, PROT_READ | PROT_WRITE, MAP_SHARED,
		      bpf_map__fd(skel->maps.fs_bloom), 0);
	if (filter == MAP_FAILED) {
		filter = NULL;
		err = -errno;
		goto out;
	}

	/* Load: tries, then the filter, as the daemon does (blocklist.c). */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n && !err; i++) {
		__u32 id = i + 1;

		if (c[i].family == FS_FAMILY_IPV4) {
			struct fs_block_key4 k;

			fs_cidr_trie_key4(&c[i], &k);
			err = bpf_map_update_elem(bpf_map__fd(skel->maps.fs_block4), &k, &id, 0);
		} else {
			struct fs_block_key6 k;

			fs_cidr_trie_key6(&c[i], &k);
			err = bpf_map_update_elem(bpf_map__fd(skel->maps.fs_block6), &k, &id, 0);
		}
	}
	if (err) {
		err = -errno;
		goto out;
	}
	r->trie_ms = bb_ms_since(&t0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	for (i = 0; i < n; i++)
		fs_cidr_filter_add(&bkey, &c[i], filter, r->log2, r->k);
	r->filter_ms = bb_ms_since(&t1);
	r->load_ms = bb_ms_since(&t0);
	/* A rebuild after a delete: the barrier, then the filter anew. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = bpf_map_update_elem(bpf_map__fd(skel->maps.fs_barrier), &zero,
				  &(int){ bpf_map__fd(skel->maps.fs_barrier_inner) }, 0);
	if (err) {
		err = -errno;
		goto out;
	}
	r->barrier_ms = bb_ms_since(&t0);
	memset(filter, 0, fbytes);
	for (i = 0; i < n; i++)
		fs_cidr_filter_add(&bkey, &c[i], filter, r->log2, r->k);
	r->rebuild_ms = bb_ms_since(&t0);
	/* The same keys into the kernel's filter. */
	for (i = 0; i < n && !err; i++) {
		__u64 kk;

		fs_cidr_group(&c[i], &kk);
		for (j = 0; j < kk && !err; j++) {
			struct { __u32 group; __u8 addr[16]; } v = { 0 };
			int g = fs_cidr_key_addr(&c[i], j, v.addr);
			unsigned int len = c[i].family == FS_FAMILY_IPV4 ?
					   fs_bloom_base4[g] : fs_bloom_base6[g], b;

			for (b = len; b < 128; b++)
				v.addr[b / 8] &= (__u8)~(0x80 >> (b % 8));
			v.group = (__u32)c[i].family << 8 | (__u32)g;
			err = bpf_map_update_elem(bpf_map__fd(skel->maps.fs_kbloom), NULL, &v, 0);
		}
	}
	if (err) {
		err = -errno;
		goto out;
	}
	{
		struct fs_ctl ctl = {
			.bloom = n ? fs_bloom_ctl(r->k, r->log2, 0, g4, g6) : 0,
		};

		err = bpf_map_update_elem(bpf_map__fd(skel->maps.fs_ctl), &zero, &ctl, 0);
		if (err) {
			err = -errno;
			goto out;
		}
	}
	/* Fastest of the rounds, programs interleaved, after a warm-up. */
	r->full = r->verdict = r->kverdict = r->parse = INFINITY;
	for (round = 0; round <= o->rounds && !err; round++) {
		struct bpf_program *progs[4] = {
			skel->progs.fs_bench_full, skel->progs.fs_bench_verdict,
			skel->progs.fs_bench_kverdict, skel->progs.fs_bench_parse,
		};
		double *out[4] = { &r->full, &r->verdict, &r->kverdict, &r->parse };
		double ns;

		for (i = 0; i < 4 && !err; i++) {
			err = bench_prog_run(progs[i], round ? o->repeat : o->repeat / 4 + 1, &ns);
			if (!err && round && ns < *out[i])
				*out[i] = ns;
		}
	}
out:
	if (filter)
		munmap(filter, fbytes);
	bench__destroy(skel);
	free(c);
	return err;
}

static int bench_blocklist(const struct fs_sketch_params *p, const struct bench_opts *o)
{
	struct bb_result r[BB_SIZES];
	unsigned int s;
	int err;

	for (s = 0; s < BB_SIZES; s++) {
		err = bb_measure(p, o, bb_sizes[s], &r[s]);
		if (err) {
			fprintf(stderr, "fs-bench: blocklist of %u entries: %s.\n",
				bb_sizes[s], strerror(-err));
			return err;
		}
	}
	printf("Blocklist, BPF_PROG_TEST_RUN, traffic that is not blocked (sources 10.x.y.z, every IPv4\n"
	       "group probed), fastest of %u rounds; entries are random IPv4 and IPv6 prefixes of mixed lengths\n\n",
	       o->rounds);
	printf("  entries  keys   filter        k  rate/probe  full   full/empty  verdict  kernel  parse\n");
	for (s = 0; s < BB_SIZES; s++)
		printf("  %7u  %6llu  %5u KiB  %3u  %9.5f   %5.1f  %6.3fx      %5.1f   %5.1f  %5.1f\n",
		       bb_sizes[s], (unsigned long long)r[s].keys,
		       bb_sizes[s] ? (64U << r[s].log2) / 1024 : 0, r[s].k, r[s].fpr,
		       r[s].full, r[s].full / r[0].full, r[s].verdict, r[s].kverdict,
		       r[s].parse);
	printf("  (ns per packet; full = the datapath with the list; verdict = parse + our filter + confirm;\n"
	       "   kernel = parse + BPF_MAP_TYPE_BLOOM_FILTER with the same keys + the same confirm)\n");
	for (s = 1; s < BB_SIZES; s++) {
		double ours = r[s].verdict - r[s].parse, theirs = r[s].kverdict - r[s].parse;

		printf("  %u entries: our filter %.1f ns a packet, the kernel's %.1f ns (%u hashes, rate %.5f against our %.5f): %.2fx",
		       bb_sizes[s], ours, theirs, r[s].khashes, r[s].kfpr, r[s].fpr,
		       ours > 0 ? theirs / ours : 0);
		if (s == BB_SIZES - 1)
			printf("   target >= 3x: %s", bench_verdict(ours > 0 && theirs >= 3 * ours));
		printf("\n");
	}
	printf("  load %u entries: %.1f ms (tries %.1f ms, filter %.1f ms); rebuild after a delete: %.1f ms (RCU barrier %.1f ms)\n\n",
	       bb_sizes[BB_SIZES - 1], r[BB_SIZES - 1].load_ms, r[BB_SIZES - 1].trie_ms,
	       r[BB_SIZES - 1].filter_ms, r[BB_SIZES - 1].rebuild_ms,
	       r[BB_SIZES - 1].barrier_ms);
	return 0;
}
