/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * bench_blocklist.h - fs-bench's blocklist section (included once, by
 * fs-bench.c): what the verdict step costs traffic that is not
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
#include "bench_blocklist_fill.h"

#define BB_SIZES 3
static const unsigned int bb_sizes[BB_SIZES] = { 0, 10000, 100000 };

struct bb_result {
	double full, verdict, kverdict, parse;	/* ns per packet */
	double exact;		/* verdict with the exact groups only */
	double fpr, kfpr;			/* per probe, by design */
	unsigned int log2, k, khashes;
	__u64 keys;
	double load_ms, trie_ms, filter_ms, rebuild_ms, barrier_ms;
};

/* The same keys into the kernel's Bloom filter map. */
static int bb_fill_kernel(int fd, const struct bb_list *l)
{
	unsigned int i, b;
	__u64 j, kk;

	for (i = 0; i < l->n; i++) {
		if (fs_cidr_exact(&l->c[i]))	/* bitmaps in both variants */
			continue;
		fs_cidr_group(&l->c[i], &kk);
		for (j = 0; j < kk; j++) {
			struct { __u32 group; __u8 addr[16]; } v = { 0 };
			int g = fs_cidr_key_addr(&l->c[i], j, v.addr);
			unsigned int len = l->c[i].family == FS_FAMILY_IPV4 ?
					   fs_bloom_base4[g] : fs_bloom_base6[g];

			for (b = len; b < 128; b++)
				v.addr[b / 8] &= (__u8)~(0x80 >> (b % 8));
			v.group = (__u32)l->c[i].family << 8 | (__u32)g;
			if (bpf_map_update_elem(fd, NULL, &v, 0))
				return -errno;
		}
	}
	return 0;
}

/* One size: a fresh object, n entries in tries and both filters. */
static int bb_measure(const struct fs_sketch_params *p, const struct bench_opts *o,
		      unsigned int n, struct bb_result *r)
{
	struct bb_list l;
	struct timespec t0;
	struct bench *skel;
	unsigned int i, round;
	__u32 zero = 0;
	__u64 word;
	int err;

	memset(r, 0, sizeof(*r));
	err = bb_make(n, &l);
	if (err) {
		bb_free(&l);
		return err;
	}
	r->keys = l.keys;
	r->log2 = l.log2;
	r->k = l.k;
	r->fpr = l.n ? fs_bloom_fpr((double)l.keys, ldexp(1, (int)l.log2), l.k) : 0;
	/* The kernel's classic filter: fewest hashes at least as selective. */
	for (i = 1; i <= 15; i++) {
		double m = pow(2, ceil(log2((double)(l.keys ? l.keys : 1) * i * 7 / 5)));

		r->khashes = i;
		r->kfpr = pow(1 - exp(-(double)i * l.keys / m), i);
		if (!l.n || r->kfpr <= r->fpr)
			break;
	}

	skel = bench__open();
	if (!skel) {
		bb_free(&l);
		return -ENOENT;
	}
	FS_DATAPATH_SETUP(skel, p, false);
	bpf_map__set_max_entries(skel->maps.naive_cms, 1);
	bpf_map__set_max_entries(skel->maps.naive_hll, 1);
	bb_size(skel->maps.fs_block4, skel->maps.fs_block6, skel->maps.fs_block_hits,
		skel->maps.fs_bloom, &l);
	bpf_map__set_max_entries(skel->maps.fs_kbloom, l.keys ? (__u32)l.keys : 1);
	bpf_map__set_map_extra(skel->maps.fs_kbloom, r->khashes);
	err = bench__load(skel);
	if (!err) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		err = bb_fill(bpf_map__fd(skel->maps.fs_block4),
			      bpf_map__fd(skel->maps.fs_block6),
			      bpf_map__fd(skel->maps.fs_bloom),
			      bpf_map__fd(skel->maps.fs_block_exact), &p->secret, &l,
			      &word, &r->trie_ms, &r->filter_ms);
		r->load_ms = bb_ms_since(&t0);
	}
	/* A rebuild after a delete: the RCU barrier, then the filter anew
	 * (the daemon's order, blocklist.c). */
	if (!err) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.fs_barrier), &zero,
					&(int){ bpf_map__fd(skel->maps.fs_barrier_inner) }, 0))
			err = -errno;
		r->barrier_ms = bb_ms_since(&t0);
	}
	/* The rest of a rebuild is a filter built from the entries, which
	 * the load above timed (filter_ms), into a zeroed half. */
	r->rebuild_ms = r->barrier_ms + r->filter_ms;
	if (!err)
		err = bb_fill_kernel(bpf_map__fd(skel->maps.fs_kbloom), &l);
	if (!err) {
		struct fs_ctl ctl = { .bloom = word };

		if (bpf_map_update_elem(bpf_map__fd(skel->maps.fs_ctl), &zero, &ctl, 0))
			err = -errno;
	}
	/* Fastest of the rounds, programs interleaved, after a warm-up.  The
	 * fifth run is our verdict with only the exact groups switched on
	 * (bloom.h): what both variants share, taken off each filter's cost. */
	r->full = r->verdict = r->kverdict = r->parse = r->exact = INFINITY;
	for (round = 0; round <= o->rounds && !err; round++) {
		struct bpf_program *progs[5] = {
			skel->progs.fs_bench_full, skel->progs.fs_bench_verdict,
			skel->progs.fs_bench_kverdict, skel->progs.fs_bench_parse,
			skel->progs.fs_bench_verdict,
		};
		double *out[5] = { &r->full, &r->verdict, &r->kverdict, &r->parse,
				   &r->exact };
		double ns;

		for (i = 0; i < 5 && !err; i++) {
			struct fs_ctl ctl = { .bloom = word };

			if (i == 4)
				ctl.bloom = word & ~((__u64)(~FS_BLOOM_EXACT4 & 0xf) << 16 |
						     (__u64)(~FS_BLOOM_EXACT6 & 0x3f) << 24);
			if (word && (i == 0 || i == 4) &&
			    bpf_map_update_elem(bpf_map__fd(skel->maps.fs_ctl), &zero, &ctl, 0)) {
				err = -errno;
				break;
			}
			err = bench_prog_run(progs[i], round ? o->repeat : o->repeat / 4 + 1, &ns);
			if (!err && round && ns < *out[i])
				*out[i] = ns;
		}
	}
	bench__destroy(skel);
	bb_free(&l);
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
	       "   kernel = parse + BPF_MAP_TYPE_BLOOM_FILTER with the same keys + the same confirm;\n"
	       "   both test the exact groups' bits first, %.1f ns at 100,000 entries: taken off below)\n",
	       r[BB_SIZES - 1].exact);
	for (s = 1; s < BB_SIZES; s++) {
		double ours = r[s].verdict - r[s].exact, theirs = r[s].kverdict - r[s].exact;

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
