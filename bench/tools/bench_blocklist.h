/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * bench_blocklist.h - fs-bench's blocklist section (included once, by
 * fs-bench.c): what the verdict step costs traffic that is not
 * blocked, at 10,000 and 100,000 entries, through BPF_PROG_TEST_RUN,
 * against the same program with the list switched off (fs_ctl.bloom 0)
 * and against the kernel's own BPF_MAP_TYPE_BLOOM_FILTER holding the same
 * keys (the same summary in front and the same exact confirm after it);
 * and what loading the entries and rebuilding the filter after a delete
 * take.
 *
 * Entries are random prefixes of mixed lengths, IPv4 outside 10.0.0.0/8
 * and IPv6 (bench_blocklist_fill.h).  Two kinds of IPv4 traffic, none of
 * it blocked: far, the driver's own sources 10.x.y.z (bench.bpf.c), in
 * /16s that hold no entry, so the summary answers alone; and near, 65,536
 * sources that share a /16 or /24 with an entry without being inside any
 * (bb_near_source()), which the filter must answer.  The filters are
 * compared on near traffic, where they are probed.  The kernel's filter
 * gets as many hash functions as it needs to be at least as selective as
 * ours (it sizes its bit array itself: entries * hashes * 7 / 5, rounded
 * up to a power of two); both rates are printed.  The verdict cache is
 * off here (the live benchmark measures it): each packet probes.
 */
#include "bench_blocklist_fill.h"

#define BB_SIZES 2
#define BB_NEAR (1U << 16)	/* near sources the driver cycles through */
#define BB_NEAR_HOT 256		/* the first of them, for hot lines */
#define BB_TRAFFIC 3		/* far, near, near and hot */
static const unsigned int bb_sizes[BB_SIZES] = { 10000, 100000 };

enum { BB_FULL_ON, BB_FULL_OFF, BB_OURS, BB_KERNEL, BB_NONE, BB_PARSE, BB_NPROG };

struct bb_result {
	double ns[BB_TRAFFIC][BB_NPROG];	/* [traffic][program], ns per packet */
	double probes[BB_TRAFFIC], exact[BB_TRAFFIC];	/* per packet of ours */
	double fpr, kfpr;		/* per probe, by design */
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
		kk = fs_cidr_filter_keys(&l->c[i]);	/* 0: the summary's */
		for (j = 0; j < kk; j++) {
			struct { __u32 group; __u8 addr[16]; } v = { 0 };
			int g = fs_cidr_key_addr(&l->c[i], j, v.addr);
			unsigned int len = fs_bloom_key_len((__u32)g);

			for (b = len; b < 128; b++)
				v.addr[b / 8] &= (__u8)~(0x80 >> (b % 8));
			v.group = (__u32)l->c[i].family << 8 | (__u32)g;
			if (bpf_map_update_elem(fd, NULL, &v, 0))
				return -errno;
		}
	}
	return 0;
}

/* The near sources into bench_src (network order, as the packet has them). */
static int bb_fill_near(int fd, const struct bb_list *l)
{
	__u8 a[16];
	__u32 i, src;

	for (i = 0; i < BB_NEAR; i++) {
		if (bb_near_source(l, FS_FAMILY_IPV4, a))
			return -ENOENT;
		memcpy(&src, a, 4);
		if (bpf_map_update_elem(fd, &i, &src, 0))
			return -errno;
	}
	return 0;
}

static void bb_stats(struct bench *skel, struct fs_block_stats *out)
{
	int ncpus = libbpf_num_possible_cpus(), c;
	struct fs_block_stats v[ncpus > 0 ? ncpus : 1];
	__u32 zero = 0;

	memset(out, 0, sizeof(*out));
	if (ncpus <= 0 || bpf_map_lookup_elem(bpf_map__fd(skel->maps.fs_block_stats), &zero, v))
		return;
	for (c = 0; c < ncpus; c++) {
		out->checked += v[c].checked;
		out->probes += v[c].probes;
		out->maybe += v[c].maybe;
		out->dropped += v[c].dropped;
	}
}

/* One size: a fresh object, n entries in tries, summary and both filters. */
static int bb_measure(const struct fs_sketch_params *p, const struct bench_opts *o,
		      unsigned int n, struct bb_result *r)
{
	struct bpf_program *progs[BB_NPROG];
	struct bb_list l;
	struct timespec t0;
	struct bench *skel;
	unsigned int i, round, t;
	__u32 zero = 0;
	__u64 word = 0;
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
		skel->maps.fs_bfilter, &skel->rodata->fs_bfilter_mask, &l);
	bpf_map__set_max_entries(skel->maps.fs_kbloom, l.keys ? (__u32)l.keys : 1);
	bpf_map__set_map_extra(skel->maps.fs_kbloom, r->khashes);
	bpf_map__set_max_entries(skel->maps.bench_src, BB_NEAR);
	err = bench__load(skel);
	if (!err) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		err = bb_fill(bpf_map__fd(skel->maps.fs_block4),
			      bpf_map__fd(skel->maps.fs_block6),
			      bpf_map__fd(skel->maps.fs_bfilter),
			      bpf_map__fd(skel->maps.fs_bsummary), &p->secret, &l,
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
	if (!err)
		err = bb_fill_near(bpf_map__fd(skel->maps.bench_src), &l);
	/* The verdict cache off (generation 0): every packet probes, the
	 * filters are compared probe for probe. */
	word &= ~((__u64)0xff << 32);

	/* Fastest of the rounds, programs interleaved, after a warm-up; far
	 * traffic, then near.  The list is on for every program but
	 * BB_FULL_OFF; BB_NONE is our verdict with every probe "no" (the
	 * summary, counters and confirm that both filters share). */
	progs[BB_FULL_ON] = skel->progs.fs_bench_full;
	progs[BB_FULL_OFF] = skel->progs.fs_bench_full;
	progs[BB_OURS] = skel->progs.fs_bench_verdict;
	progs[BB_KERNEL] = skel->progs.fs_bench_kverdict;
	progs[BB_NONE] = skel->progs.fs_bench_sverdict;
	progs[BB_PARSE] = skel->progs.fs_bench_parse;
	for (t = 0; t < BB_TRAFFIC; t++)
		for (i = 0; i < BB_NPROG; i++)
			r->ns[t][i] = INFINITY;
	for (t = 0; t < BB_TRAFFIC && !err; t++) {
		skel->bss->bench_nsrc = t == 2 ? BB_NEAR_HOT : t ? BB_NEAR : 0;
		for (round = 0; round <= o->rounds && !err; round++) {
			for (i = 0; i < BB_NPROG && !err; i++) {
				struct fs_ctl ctl = { .bloom = i == BB_FULL_OFF ? 0 : word };
				struct fs_block_stats a, b;
				__u32 reps = round ? o->repeat : o->repeat / 4 + 1;
				double ns;

				if (bpf_map_update_elem(bpf_map__fd(skel->maps.fs_ctl), &zero,
							&ctl, 0)) {
					err = -errno;
					break;
				}
				bb_stats(skel, &a);
				err = bench_prog_run(progs[i], reps, &ns);
				bb_stats(skel, &b);
				if (!err && round && ns < r->ns[t][i])
					r->ns[t][i] = ns;
				if (!err && i == BB_OURS && b.checked > a.checked) {
					r->probes[t] = (double)(b.probes - a.probes) /
						       (double)(b.checked - a.checked);
					r->exact[t] = (double)(b.maybe - a.maybe) /
						      (double)(b.checked - a.checked);
				}
			}
		}
	}
	skel->bss->bench_nsrc = 0;
	bench__destroy(skel);
	bb_free(&l);
	return err;
}

static int bench_blocklist(const struct fs_sketch_params *p, const struct bench_opts *o)
{
	static const char *const traffic[BB_TRAFFIC] = { "far", "near", "hot" };
	struct bb_result r[BB_SIZES];
	unsigned int s, t;
	int err;

	for (s = 0; s < BB_SIZES; s++) {
		err = bb_measure(p, o, bb_sizes[s], &r[s]);
		if (err) {
			fprintf(stderr, "fs-bench: blocklist of %u entries: %s.\n",
				bb_sizes[s], strerror(-err));
			return err;
		}
	}
	printf("Blocklist, BPF_PROG_TEST_RUN, IPv4 traffic that is not blocked, fastest of %u rounds; entries\n"
	       "are random IPv4 and IPv6 prefixes of mixed lengths.  Far: sources in 10/8, whose /16s hold no\n"
	       "entry; near: 65,536 sources sharing a /16 or /24 with an entry, inside none; hot: 256 of them,\n"
	       "whose lines stay in the cache (what the code costs); the verdict cache off\n\n",
	       o->rounds);
	printf("  entries  keys    filter   k  rate/probe  traffic  on    off   on/off  probes  exact   verdict  none  kernel  parse\n");
	for (s = 0; s < BB_SIZES; s++)
		for (t = 0; t < BB_TRAFFIC; t++) {
			const double *ns = r[s].ns[t];

			printf("  %7u  %6llu  %4u KiB  %2u  %9.5f   %-5s  %5.1f %5.1f  %5.3fx  %5.2f  %6.4f  %7.1f  %5.1f  %6.1f  %5.1f\n",
			       bb_sizes[s], (unsigned long long)r[s].keys,
			       (64U << r[s].log2) / 1024, r[s].k, r[s].fpr, traffic[t],
			       ns[BB_FULL_ON], ns[BB_FULL_OFF],
			       ns[BB_FULL_ON] / ns[BB_FULL_OFF], r[s].probes[t], r[s].exact[t],
			       ns[BB_OURS], ns[BB_NONE], ns[BB_KERNEL], ns[BB_PARSE]);
		}
	printf("  (ns per packet; on, off = the full datapath with the list and with fs_ctl.bloom 0;\n"
	       "   probes, exact = our filter's probes and trie lookups per packet; verdict = parse + summary\n"
	       "   + our filter + confirm; none = the same with every probe \"no\"; kernel = the same with\n"
	       "   BPF_MAP_TYPE_BLOOM_FILTER holding the same keys: each filter's cost is its row minus none)\n");
	for (s = 0; s < BB_SIZES; s++)
		for (t = 1; t < BB_TRAFFIC; t++) {
			const double *ns = r[s].ns[t];
			double ours = ns[BB_OURS] - ns[BB_NONE], theirs = ns[BB_KERNEL] - ns[BB_NONE];

			printf("  %u entries, %s: our filter %.1f ns a packet, the kernel's %.1f ns (%u hashes, rate %.5f against our %.5f): %.2fx",
			       bb_sizes[s], traffic[t], ours, theirs, r[s].khashes, r[s].kfpr,
			       r[s].fpr, ours > 0 ? theirs / ours : 0);
			if (s == BB_SIZES - 1 && t == 2)
				printf("   target >= 3x: %s",
				       bench_verdict(ours > 0 && theirs >= 3 * ours));
			printf("\n");
		}
	printf("  (near: both pay a miss or two a probe, ours one line, the kernel's a line a hash until\n"
	       "   a clear bit; hot: the code alone)\n");
	printf("  load %u entries: %.1f ms (tries %.1f ms, filter and summary %.1f ms); rebuild after a delete: %.1f ms (RCU barrier %.1f ms)\n\n",
	       bb_sizes[BB_SIZES - 1], r[BB_SIZES - 1].load_ms, r[BB_SIZES - 1].trie_ms,
	       r[BB_SIZES - 1].filter_ms, r[BB_SIZES - 1].rebuild_ms,
	       r[BB_SIZES - 1].barrier_ms);
	return 0;
}
