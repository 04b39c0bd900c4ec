// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_blocklist.c - the datapath's blocklist verdict, through
 * BPF_PROG_TEST_RUN on the XDP program the daemon attaches.
 *
 * 10,000 random prefixes of mixed lengths (IPv4 /5../32, IPv6 /10../128,
 * a few of them at most /16, so that the summary's cover bits are
 * exercised) go into the exact tries, the summary and a filter fuller than
 * the daemon's (1 to 2 % a probe, to have false positives to count); then
 * 1,000,000 packets run through
 * the program: 40 % of the sources inside a random entry, 30 % next to one
 * (sharing the /16, /24, ... boundary below it, or all but its last bit),
 * 30 % random.  The oracle is the test's own: for each source, the
 * entries of each present length, kept sorted, are searched for the
 * source masked to that length (the longest hit is the entry a drop is
 * counted against).
 *   - every source an entry covers is dropped and every other passes;
 *   - each entry's drop counters equal the packets and bytes whose
 *     longest covering entry it is;
 *   - the filter's false-positive rate per probe, measured on the sources
 *     no entry covers, near ones included (every key a source can match is
 *     an entry's that covers it, so their "maybe" answers can only be
 *     false positives), is within 20 % of Putze, Sanders and Singler's
 *     rate for the filter's size, k and the keys the test expands the
 *     list into (ref_bloom.h, not bloom.h's own);
 *   - a packet probes at most once per group its /16 holds an entry of
 *     (the test counts them from the list), so none where its /16 holds
 *     none.
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cmocka.h>

#include "cidr.h"
#include "datapath_setup.h"
#include "flowsketch.skel.h"
#include "pkt_build.h"
#include "ref_bloom.h"

#define NPREFIX 10000
#define NPACKETS 1000000
#define XDP_DROP_RET 1
#define XDP_PASS_RET 2

static __u64 rng = 0x9b05688c2b3e6c1fULL;

static __u64 rnd(void)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return rng ^ (rng >> 31);
}

/* An entry as the oracle keeps it: sorted by (family, len, addr). */
struct entry {
	struct fs_cidr c;
	__u32 id;
	__u64 want_packets, want_bytes;
};

static int entry_cmp(const void *a, const void *b)
{
	const struct fs_cidr *x = &((const struct entry *)a)->c;
	const struct fs_cidr *y = &((const struct entry *)b)->c;

	if (x->family != y->family)
		return x->family - y->family;
	if (x->len != y->len)
		return x->len - y->len;
	return memcmp(x->addr, y->addr, 16);
}

/* addr masked to len bits, byte by byte. */
static void mask_to(__u8 *out, const __u8 *addr, unsigned int len)
{
	unsigned int i;

	for (i = 0; i < 16; i++) {
		if (len >= (i + 1) * 8)
			out[i] = addr[i];
		else if (len <= i * 8)
			out[i] = 0;
		else
			out[i] = addr[i] & (__u8)(0xff << (8 - (len - i * 8)));
	}
}

static struct entry *entries;
static size_t nentries;

/* The longest entry covering (family, addr), by search per length. */
static struct entry *oracle_longest(__u8 family, const __u8 *addr)
{
	unsigned int max = family == FS_FAMILY_IPV4 ? 32 : 128;
	int len;

	for (len = (int)max; len >= 0; len--) {
		struct entry probe = { .c = { .family = family, .len = (__u8)len } };
		struct entry *e;

		mask_to(probe.c.addr, addr, (unsigned int)len);
		if (family == FS_FAMILY_IPV4)
			memset(probe.c.addr + 4, 0, 12);
		e = bsearch(&probe, entries, nentries, sizeof(*entries), entry_cmp);
		if (e)
			return e;
	}
	return NULL;
}

/* The groups some entry of which lies in addr's /16 (bloom.h: 0 for a
 * cover entry, of length <= 16, that covers it; else (len - 13) / 4),
 * as a bit mask: a search per length over the sorted entries. */
static __u32 oracle_groups_in_16(__u8 family, const __u8 *addr)
{
	unsigned int max = family == FS_FAMILY_IPV4 ? 32 : 128, len;
	__u32 groups = 0;

	for (len = 0; len <= max; len++) {
		struct entry key = { .c = { .family = family, .len = (__u8)len } };
		size_t l = 0, r = nentries;
		__u8 m[16];

		mask_to(key.c.addr, addr, len <= 16 ? len : 16);
		/* The first entry of (family, len) at or after the prefix. */
		while (l < r) {
			size_t mid = (l + r) / 2;

			if (entry_cmp(&entries[mid], &key) < 0)
				l = mid + 1;
			else
				r = mid;
		}
		if (l == nentries || entries[l].c.family != family || entries[l].c.len != len)
			continue;
		mask_to(m, entries[l].c.addr, len <= 16 ? len : 16);
		if (!memcmp(m, key.c.addr, 16))
			groups |= 1U << (len <= 16 ? 0 : (len - 13) / 4);
	}
	return groups;
}

/* A filter key as the oracle sees it: family, group, prefix. */
struct fkey {
	__u8 family, group;
	__u8 addr[16];
};

static int fkey_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct fkey));
}

/*
 * The distinct keys the entries put into the filter: each entry longer
 * than /16, in group g = (len - 13) / 4, as every prefix of length
 * 16 + 4g under it (bits len .. end - 1 spelling 0 .. 2^(end - len) - 1).
 */
static __u64 oracle_distinct_keys(void)
{
	struct fkey *keys = NULL;
	size_t n = 0, cap = 0, j, d;
	__u64 i;

	for (j = 0; j < nentries; j++) {
		const struct fs_cidr *c = &entries[j].c;
		unsigned int g, end, b;

		if (c->len <= 16)
			continue;	/* the summary's, no filter key */
		g = (c->len - 13) / 4;
		end = 16 + 4 * g;
		for (i = 0; i < 1ULL << (end - c->len); i++) {
			struct fkey *k;

			if (n == cap) {
				cap = cap ? cap * 2 : 4096;
				keys = realloc(keys, cap * sizeof(*keys));
				assert_non_null(keys);
			}
			k = &keys[n++];
			memset(k, 0, sizeof(*k));
			k->family = c->family;
			k->group = (__u8)g;
			memcpy(k->addr, c->addr, 16);
			for (b = c->len; b < end; b++)
				if ((i >> (end - 1 - b)) & 1)
					k->addr[b / 8] |= (__u8)(0x80 >> (b % 8));
		}
	}
	qsort(keys, n, sizeof(*keys), fkey_cmp);
	for (j = 0, d = 0; j < n; j++)
		if (!d || fkey_cmp(&keys[d - 1], &keys[j]))
			keys[d++] = keys[j];
	free(keys);
	return d;
}

static void random_prefix(struct fs_cidr *c)
{
	__u8 a[16];
	unsigned int i, len;

	for (i = 0; i < 16; i++)
		a[i] = (__u8)rnd();
	memset(c, 0, sizeof(*c));
	if (rnd() & 1) {
		c->family = FS_FAMILY_IPV4;
		/* 1 in 200 from /5 to /7 (256 /16s and more), else /8../32 */
		len = rnd() % 200 == 0 ? 5 + (unsigned int)(rnd() % 3) :
					 8 + (unsigned int)(rnd() % 25);
		mask_to(c->addr, a, len);
		memset(c->addr + 4, 0, 12);
	} else {
		c->family = FS_FAMILY_IPV6;
		len = rnd() % 200 == 0 ? 10 + (unsigned int)(rnd() % 6) :
					 16 + (unsigned int)(rnd() % 113);
		mask_to(c->addr, a, len);
	}
	c->len = (__u8)len;
}

static void build_packet(struct pkt *p, __u8 family, const __u8 *src,
			 unsigned int payload)
{
	static const __u8 dst4[4] = { 192, 0, 2, 1 };
	static const __u8 dst6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };

	pkt_init(p);
	if (family == FS_FAMILY_IPV4) {
		pkt_eth(p, PKT_ETH_P_IP);
		pkt_ipv4(p, 17, src, dst4, 5, 0);
	} else {
		pkt_eth(p, PKT_ETH_P_IPV6);
		pkt_ipv6(p, 17, src, dst6);
	}
	pkt_udp(p, 4000, 53);
	pkt_payload(p, payload);
	pkt_finish(p);
}

static void stats_sum(struct flowsketch *skel, struct fs_block_stats *out)
{
	int ncpus = libbpf_num_possible_cpus(), c;
	struct fs_block_stats *v = calloc((size_t)ncpus, sizeof(*v));
	__u32 zero = 0;

	assert_non_null(v);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(skel->maps.fs_block_stats),
					     &zero, v), 0);
	memset(out, 0, sizeof(*out));
	for (c = 0; c < ncpus; c++) {
		out->checked += v[c].checked;
		out->probes += v[c].probes;
		out->maybe += v[c].maybe;
		out->dropped += v[c].dropped;
		out->dropped_bytes += v[c].dropped_bytes;
		out->unjudged += v[c].unjudged;
		out->unjudged_bytes += v[c].unjudged_bytes;
		out->cached += v[c].cached;
	}
	free(v);
}

struct source {
	__u8 family;
	__u8 addr[16];
	struct entry *cover;	/* the oracle's longest covering entry */
	__u32 groups;		/* groups with an entry in its /16 */
};

/* A source next to entry e: its first `keep` bits (the /16, /24, ...
 * boundary below its length, or all but its last bit, flipped), random
 * after them. */
static void near_source(const struct entry *e, struct source *s)
{
	static const unsigned int bound4[] = { 24, 16 }, bound6[] = { 64, 56, 48, 32, 16 };
	const unsigned int *bound = e->c.family == FS_FAMILY_IPV4 ? bound4 : bound6;
	unsigned int nb = e->c.family == FS_FAMILY_IPV4 ? 2 : 5, keep = 0, b;
	int sibling = (int)(rnd() & 1);

	for (b = 0; b < nb; b++)
		if (bound[b] < e->c.len) {
			keep = bound[b];
			break;
		}
	if (sibling)
		keep = e->c.len;
	for (b = 0; b < 16; b++)
		s->addr[b] = (__u8)rnd();
	for (b = 0; b < keep; b++) {
		__u8 m = (__u8)(0x80 >> (b % 8));

		s->addr[b / 8] = (__u8)((s->addr[b / 8] & ~m) | (e->c.addr[b / 8] & m));
	}
	if (sibling && e->c.len)
		s->addr[(e->c.len - 1) / 8] ^= (__u8)(0x80 >> ((e->c.len - 1) % 8));
}

static void test_verdict_10k_prefixes_1m_sources(void **state)
{
	static const struct fs_hash_secret secret = { 0x0123456789abcdefULL,
						      0xfedcba9876543210ULL };
	struct fs_sketch_params params;
	struct fs_bloom_key bkey;
	struct flowsketch *skel;
	struct fs_bloom_block *blocks, *map;
	struct fs_block_summary *sum;
	struct fs_block_stats before, mid, after;
	struct source *src;
	struct pkt p;
	unsigned int log2b = 0, k = 0, kk;
	__u64 keys = 0, uncovered_n = 0, covered_n = 0, near_n = 0, i;
	__u64 false_drops = 0, misses = 0, bad_hits = 0, distinct, max_probes = 0;
	size_t j, uniq;
	double fpr, want;
	int phase;

	fs_params_init(&params, FS_DEFAULT_CMS_DEPTH, FS_DEFAULT_CMS_LOG2W,
		       FS_DEFAULT_HLL_P, 0, &secret);
	fs_bloom_key_derive(&secret, &bkey);

	/* The prefixes, unique. */
	entries = calloc(NPREFIX, sizeof(*entries));
	assert_non_null(entries);
	for (j = 0; j < NPREFIX; j++)
		random_prefix(&entries[j].c);
	qsort(entries, NPREFIX, sizeof(*entries), entry_cmp);
	for (j = 0, uniq = 0; j < NPREFIX; j++)
		if (!uniq || entry_cmp(&entries[uniq - 1], &entries[j]))
			entries[uniq++] = entries[j];
	nentries = uniq;
	for (j = 0; j < nentries; j++) {
		__u64 kk;

		entries[j].id = (__u32)j + 1;
		assert_true(fs_cidr_group(&entries[j].c, &kk) >= 0);
		keys += fs_cidr_filter_keys(&entries[j].c);
	}
	/* A full filter, about 50 keys a block (a rate of 1 to 2 %): enough
	 * false positives to measure, and the best k for it by ref_fpr(). */
	while (keys >> (log2b + 1) >= 40)
		log2b++;
	for (kk = 1, want = 2; kk <= FS_BLOOM_MAX_K; kk++)
		if (ref_fpr((double)keys, ldexp(1, (int)log2b), kk) < want) {
			want = ref_fpr((double)keys, ldexp(1, (int)log2b), kk);
			k = kk;
		}
	print_message("# %zu prefixes, %llu filter keys, 2^%u blocks, k %u\n",
		      nentries, (unsigned long long)keys, log2b, k);

	skel = flowsketch__open();
	assert_non_null(skel);
	assert_int_equal(FS_DATAPATH_SETUP(skel, &params, false), 0);
	assert_int_equal(bpf_map__set_max_entries(skel->maps.fs_block4, NPREFIX), 0);
	assert_int_equal(bpf_map__set_max_entries(skel->maps.fs_block6, NPREFIX), 0);
	assert_int_equal(bpf_map__set_max_entries(skel->maps.fs_block_hits, NPREFIX + 1), 0);
	assert_int_equal(fs_bfilter_size(skel->maps.fs_bfilter,
					 &skel->rodata->fs_bfilter_mask, log2b), 0);
	assert_int_equal(flowsketch__load(skel), 0);

	/* The filter, built in the second half of fs_bfilter's memory (as the
	 * daemon's first rebuild does not; base is what the datapath must
	 * honour), the summary and the tries. */
	map = mmap(NULL, (size_t)sizeof(*blocks) << (log2b + 1), PROT_READ | PROT_WRITE,
		   MAP_SHARED, bpf_map__fd(skel->maps.fs_bfilter), 0);
	assert_true(map != MAP_FAILED);
	blocks = map + ((size_t)1 << log2b);
	sum = mmap(NULL, sizeof(*sum), PROT_READ | PROT_WRITE, MAP_SHARED,
		   bpf_map__fd(skel->maps.fs_bsummary), 0);
	assert_true(sum != MAP_FAILED);
	for (j = 0; j < nentries; j++) {
		const struct fs_cidr *c = &entries[j].c;

		fs_cidr_filter_add(&bkey, c, blocks, log2b, k);
		fs_cidr_summary_set(sum, c);
		if (c->family == FS_FAMILY_IPV4) {
			struct fs_block_key4 tk;

			fs_cidr_trie_key4(c, &tk);
			assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.fs_block4),
							     &tk, &entries[j].id, BPF_ANY), 0);
		} else {
			struct fs_block_key6 tk;

			fs_cidr_trie_key6(c, &tk);
			assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.fs_block6),
							     &tk, &entries[j].id, BPF_ANY), 0);
		}
	}
	{
		struct fs_ctl ctl = { .bloom = fs_bloom_ctl(k, log2b, 1U << log2b, 1) };
		__u32 zero = 0;

		assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.fs_ctl),
						     &zero, &ctl, BPF_ANY), 0);
	}

	/* The sources and what the oracle says of each. */
	src = calloc(NPACKETS, sizeof(*src));
	assert_non_null(src);
	for (i = 0; i < NPACKETS; i++) {
		struct source *s = &src[i];
		unsigned int b, kind = (unsigned int)(rnd() % 10);

		if (kind < 7) {
			const struct entry *e = &entries[rnd() % nentries];

			s->family = e->c.family;
			if (kind < 4) {
				for (b = 0; b < 16; b++)
					s->addr[b] = (__u8)rnd();
				/* e's prefix, random host bits */
				for (b = 0; b < e->c.len; b++) {
					__u8 m = (__u8)(0x80 >> (b % 8));

					s->addr[b / 8] = (__u8)((s->addr[b / 8] & ~m) |
								(e->c.addr[b / 8] & m));
				}
			} else {
				near_source(e, s);
				near_n++;
			}
		} else {
			s->family = rnd() & 1 ? FS_FAMILY_IPV4 : FS_FAMILY_IPV6;
			for (b = 0; b < 16; b++)
				s->addr[b] = (__u8)rnd();
		}
		if (s->family == FS_FAMILY_IPV4)
			memset(s->addr + 4, 0, 12);
		s->cover = oracle_longest(s->family, s->addr);
		s->groups = oracle_groups_in_16(s->family, s->addr);
		uncovered_n += (__u64)!s->cover;
		covered_n += (__u64)!!s->cover;
		/* a probe per group in the /16 at most, none for the cover bit */
		max_probes += (__u64)__builtin_popcount(s->groups & ~1U);
	}

	/* Phase 0: the covered sources; phase 1: the others, whose "maybe"
	 * answers are the filter's false positives. */
	stats_sum(skel, &before);
	mid = before;
	for (phase = 0; phase < 2; phase++) {
		if (phase == 1)
			stats_sum(skel, &mid);
		for (i = 0; i < NPACKETS; i++) {
			struct source *s = &src[i];
			unsigned int payload = 16 + (unsigned int)(i % 200);
			LIBBPF_OPTS(bpf_test_run_opts, opts, .repeat = 1);

			if ((s->cover == NULL) != phase)
				continue;
			build_packet(&p, s->family, s->addr, payload);
			opts.data_in = p.data;
			opts.data_size_in = (__u32)p.len;
			assert_int_equal(bpf_prog_test_run_opts(
					bpf_program__fd(skel->progs.fs_xdp), &opts), 0);
			if (s->cover) {
				misses += opts.retval != XDP_DROP_RET;
				s->cover->want_packets++;
				s->cover->want_bytes += p.len;
			} else {
				false_drops += opts.retval != XDP_PASS_RET;
			}
		}
	}
	stats_sum(skel, &after);

	print_message("# %llu sources covered, %llu not (%llu drawn next to an entry); %llu false drops, %llu misses\n",
		      (unsigned long long)covered_n, (unsigned long long)uncovered_n,
		      (unsigned long long)near_n, (unsigned long long)false_drops,
		      (unsigned long long)misses);
	assert_int_equal(false_drops, 0);
	assert_int_equal(misses, 0);
	assert_true(covered_n > NPACKETS / 4);
	assert_true(uncovered_n > NPACKETS / 3);
	assert_int_equal(after.checked - before.checked, NPACKETS);
	assert_int_equal(after.dropped - before.dropped, covered_n);
	print_message("# probes %llu, at most %llu by the groups in each source's /16\n",
		      (unsigned long long)(after.probes - before.probes),
		      (unsigned long long)max_probes);
	assert_true(after.probes - before.probes <= max_probes);

	/* Per-entry drops against the oracle's longest cover. */
	for (j = 0; j < nentries; j++) {
		struct fs_block_hits h;

		assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(skel->maps.fs_block_hits),
						     &entries[j].id, &h), 0);
		bad_hits += h.packets != entries[j].want_packets ||
			    h.bytes != entries[j].want_bytes;
	}
	assert_int_equal(bad_hits, 0);

	/* The filter's false-positive rate per probe, uncovered sources. */
	fpr = (double)(after.maybe - mid.maybe) / (double)(after.probes - mid.probes);
	distinct = oracle_distinct_keys();
	want = ref_fpr((double)distinct, ldexp(1, (int)log2b), k);
	print_message("# uncovered: %llu probes, %llu maybe: rate %.5f, design %.5f for %llu distinct keys (target 0.01)\n",
		      (unsigned long long)(after.probes - mid.probes),
		      (unsigned long long)(after.maybe - mid.maybe), fpr, want,
		      (unsigned long long)distinct);
	assert_true(after.maybe - mid.maybe > 0);
	assert_true(fabs(fpr - want) <= 0.2 * want);

	munmap(map, (size_t)sizeof(*blocks) << (log2b + 1));
	munmap(sum, sizeof(*sum));
	flowsketch__destroy(skel);
	free(src);
	free(entries);
}

/* An empty list (fs_ctl.bloom == 0) drops nothing and reads nothing. */
static void test_empty_list_passes_everything(void **state)
{
	static const struct fs_hash_secret secret = { 1, 2 };
	struct fs_sketch_params params;
	struct fs_block_stats st;
	struct flowsketch *skel;
	struct pkt p;
	__u8 a[16] = { 10, 0, 0, 1 };
	unsigned int i;

	fs_params_init(&params, FS_DEFAULT_CMS_DEPTH, FS_DEFAULT_CMS_LOG2W,
		       FS_DEFAULT_HLL_P, 0, &secret);
	skel = flowsketch__open();
	assert_non_null(skel);
	assert_int_equal(FS_DATAPATH_SETUP(skel, &params, false), 0);
	assert_int_equal(flowsketch__load(skel), 0);
	for (i = 0; i < 1000; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .repeat = 1);

		a[3] = (__u8)i;
		build_packet(&p, i & 1 ? FS_FAMILY_IPV4 : FS_FAMILY_IPV6, a, 32);
		opts.data_in = p.data;
		opts.data_size_in = (__u32)p.len;
		assert_int_equal(bpf_prog_test_run_opts(
				bpf_program__fd(skel->progs.fs_xdp), &opts), 0);
		assert_int_equal(opts.retval, XDP_PASS_RET);
	}
	stats_sum(skel, &st);
	assert_int_equal(st.checked, 0);
	flowsketch__destroy(skel);
}

/*
 * A blocked source gets no way round the list by sending frames the
 * parser gives up on after the IP header (counted as malformed, not
 * sketched): an IPv6 chain of 8 extension headers and a truncated TCP
 * header are dropped from a listed source and passed from another.
 */
static int run_one(struct flowsketch *skel, const struct pkt *p)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .repeat = 1);

	opts.data_in = p->data;
	opts.data_size_in = (__u32)p->len;
	assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(skel->progs.fs_xdp),
						&opts), 0);
	return (int)opts.retval;
}

/* A datapath with two entries, 203.0.113.0/24 (id 1) and
 * 2001:db8:bad0::/48 (id 2), in force. */
struct small_list {
	struct flowsketch *skel;
	struct fs_bloom_block *map;
	struct fs_block_summary *sum;
	struct fs_bloom_key bkey;
	unsigned int log2b, k;
};

static const __u8 dst4[4] = { 192, 0, 2, 1 };
static const __u8 dst6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
static const __u8 bad4[16] = { 203, 0, 113, 9 }, ok4[16] = { 198, 51, 100, 9 };
static const __u8 bad6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0xba, 0xd0, [15] = 7 };
static const __u8 ok6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0x60, 0x0d, [15] = 7 };

static void small_list_open(struct small_list *l)
{
	static const struct fs_hash_secret secret = { 3, 4 };
	struct fs_sketch_params params;
	struct fs_bloom_key bkey;
	struct flowsketch *skel;
	struct fs_cidr c4, c6;
	const char *why;
	unsigned int log2b = 0, k = 0;
	__u32 one = 1, two = 2;

	fs_params_init(&params, FS_DEFAULT_CMS_DEPTH, FS_DEFAULT_CMS_LOG2W,
		       FS_DEFAULT_HLL_P, 0, &secret);
	fs_bloom_key_derive(&secret, &bkey);
	assert_int_equal(fs_cidr_parse("203.0.113.0/24", &c4, &why), 0);
	assert_int_equal(fs_cidr_parse("2001:db8:bad0::/48", &c6, &why), 0);
	assert_int_equal(fs_bloom_size(16, 0.01, &log2b, &k), 0);
	skel = flowsketch__open();
	assert_non_null(skel);
	assert_int_equal(FS_DATAPATH_SETUP(skel, &params, false), 0);
	assert_int_equal(bpf_map__set_max_entries(skel->maps.fs_block4, 4), 0);
	assert_int_equal(bpf_map__set_max_entries(skel->maps.fs_block6, 4), 0);
	assert_int_equal(bpf_map__set_max_entries(skel->maps.fs_block_hits, 4), 0);
	assert_int_equal(fs_bfilter_size(skel->maps.fs_bfilter,
					 &skel->rodata->fs_bfilter_mask, log2b), 0);
	assert_int_equal(flowsketch__load(skel), 0);
	l->skel = skel;
	l->log2b = log2b;
	l->k = k;
	l->bkey = bkey;
	l->map = mmap(NULL, sizeof(*l->map) << (log2b + 1), PROT_READ | PROT_WRITE,
		      MAP_SHARED, bpf_map__fd(skel->maps.fs_bfilter), 0);
	l->sum = mmap(NULL, sizeof(*l->sum), PROT_READ | PROT_WRITE, MAP_SHARED,
		      bpf_map__fd(skel->maps.fs_bsummary), 0);
	assert_true(l->map != MAP_FAILED && l->sum != MAP_FAILED);
	fs_cidr_filter_add(&bkey, &c4, l->map, log2b, k);
	fs_cidr_filter_add(&bkey, &c6, l->map, log2b, k);
	fs_cidr_summary_set(l->sum, &c4);
	fs_cidr_summary_set(l->sum, &c6);
	{
		struct fs_block_key4 k4;
		struct fs_block_key6 k6;
		struct fs_ctl ctl = { .bloom = fs_bloom_ctl(k, log2b, 0, 1) };
		__u32 zero = 0;

		fs_cidr_trie_key4(&c4, &k4);
		fs_cidr_trie_key6(&c6, &k6);
		assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.fs_block4), &k4, &one, 0), 0);
		assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.fs_block6), &k6, &two, 0), 0);
		assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.fs_ctl), &zero, &ctl, 0), 0);
	}
}

/* The list out of force (fs_ctl.bloom = 0), the entries still there. */
static void small_list_off(struct small_list *l)
{
	struct fs_ctl ctl = { 0 };
	__u32 zero = 0;

	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(l->skel->maps.fs_ctl), &zero, &ctl), 0);
	ctl.bloom = 0;
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(l->skel->maps.fs_ctl), &zero, &ctl, 0), 0);
}

static void small_list_close(struct small_list *l)
{
	munmap(l->map, sizeof(*l->map) << (l->log2b + 1));
	munmap(l->sum, sizeof(*l->sum));
	flowsketch__destroy(l->skel);
}

static void test_malformed_from_blocked_source(void **state)
{
	struct small_list l;
	unsigned int v, i;
	struct pkt p;

	small_list_open(&l);
	for (v = 0; v < 2; v++) {
		/* Truncated TCP: the IPv4 header is whole, the TCP one is not. */
		pkt_init(&p);
		pkt_eth(&p, PKT_ETH_P_IP);
		pkt_ipv4(&p, 6, v ? ok4 : bad4, dst4, 5, 0);
		pkt_payload(&p, 10);
		pkt_finish(&p);
		assert_int_equal(run_one(l.skel, &p), v ? XDP_PASS_RET : XDP_DROP_RET);
		/* IPv6 with more extension headers than the parser walks. */
		pkt_init(&p);
		pkt_eth(&p, PKT_ETH_P_IPV6);
		pkt_ipv6(&p, 60, v ? ok6 : bad6, dst6);
		for (i = 0; i < 8; i++)
			pkt_ipv6_opts(&p, i < 7 ? 60 : 17, 0);
		pkt_udp(&p, 1000, 53);
		pkt_finish(&p);
		assert_int_equal(run_one(l.skel, &p), v ? XDP_PASS_RET : XDP_DROP_RET);
	}
	small_list_close(&l);
}

/* fs_stats[stat] summed over CPUs. */
static __u64 datapath_stat(struct flowsketch *skel, __u32 stat)
{
	int ncpus = libbpf_num_possible_cpus();
	__u64 *v = calloc((size_t)ncpus, sizeof(*v)), sum = 0;
	int c;

	assert_non_null(v);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(skel->maps.fs_stats), &stat, v), 0);
	for (c = 0; c < ncpus; c++)
		sum += v[c];
	free(v);
	return sum;
}

/*
 * A frame behind n VLAN tags, their VIDs and EtherTypes (0x8100 and
 * 0x88a8) drawn from the pattern: the stack strips priority tags (VID 0)
 * in any number and delivers the IP packet inside (PLATFORM.md), and a VID
 * with a VLAN device is delivered too.
 */
static void deep_vlan_frame(struct pkt *p, unsigned int n, int v6,
			    const __u8 *src, unsigned int pattern)
{
	unsigned int i;

	pkt_init(p);
	pkt_eth(p, pattern & 1 ? PKT_ETH_P_8021AD : PKT_ETH_P_8021Q);
	for (i = 0; i < n; i++) {
		uint16_t next = i + 1 < n ?
			((pattern >> (i + 1)) & 1 ? PKT_ETH_P_8021AD : PKT_ETH_P_8021Q) :
			(v6 ? PKT_ETH_P_IPV6 : PKT_ETH_P_IP);

		pkt_vlan(p, (pattern >> 8) & 1 ? (uint16_t)(100 + i) : 0, next);
	}
	if (v6)
		pkt_ipv6(p, 17, src, dst6);
	else
		pkt_ipv4(p, 17, src, dst4, 5, 0);
	pkt_udp(p, 4000, 53);
	pkt_payload(p, 16);
	pkt_finish(p);
}

/*
 * Issue 17, defect 1: three or more stacked tags used to end the parse
 * before the family was known, so the frame passed unjudged.  Now: up to
 * eight tags, a listed source is dropped and any other passes; past
 * eight, every frame is dropped while the list is in force and passed
 * once it is not.  The oracle is the two entries the test put in.
 */
static void test_deep_vlan_from_blocked_source(void **state)
{
	static const unsigned int judged[] = { 3, 4, 8 }, unjudged[] = { 9, 12 };
	struct fs_block_stats st0, st1;
	__u64 depth0;
	unsigned int i, pat, v6, bad, frames = 0, unj_frames = 0;
	struct small_list l;
	struct pkt p;

	small_list_open(&l);
	stats_sum(l.skel, &st0);
	depth0 = datapath_stat(l.skel, FS_STAT_VLAN_DEPTH);
	/* pattern bit 8: VID 0 or not; bits 0..: the tags' EtherTypes. */
	for (pat = 0; pat < 0x200; pat += 0x55)
		for (i = 0; i < 3; i++)
			for (v6 = 0; v6 < 2; v6++)
				for (bad = 0; bad < 2; bad++) {
					const __u8 *src = v6 ? (bad ? bad6 : ok6) :
							       (bad ? bad4 : ok4);

					deep_vlan_frame(&p, judged[i], (int)v6, src, pat);
					if (run_one(l.skel, &p) != (bad ? XDP_DROP_RET : XDP_PASS_RET))
						fail_msg("%u tags (pattern %#x), IPv%d, %s source: wrong verdict",
							 judged[i], pat, v6 ? 6 : 4,
							 bad ? "listed" : "unlisted");
					frames++;
				}
	for (i = 0; i < 2; i++)
		for (v6 = 0; v6 < 2; v6++) {
			deep_vlan_frame(&p, unjudged[i], (int)v6, v6 ? ok6 : ok4, 0x100);
			assert_int_equal(run_one(l.skel, &p), XDP_DROP_RET);
			unj_frames++;
		}
	/* Cut inside the fourth tag: no IP header to judge, never IP to the
	 * stack either. */
	deep_vlan_frame(&p, 4, 0, bad4, 0);
	p.len = 14 + 3 * 4 + 2;
	assert_int_equal(run_one(l.skel, &p), XDP_PASS_RET);
	frames++;
	stats_sum(l.skel, &st1);
	/* Unjudged frames are counted as vlan_depth too (maps.h). */
	assert_int_equal(datapath_stat(l.skel, FS_STAT_VLAN_DEPTH) - depth0,
			 frames + unj_frames);
	assert_int_equal(st1.unjudged - st0.unjudged, unj_frames);
	assert_int_equal(st1.dropped - st0.dropped, (frames - 1) / 2);

	/* No list in force: nothing is dropped, however deep. */
	small_list_off(&l);
	for (i = 0; i < 2; i++) {
		deep_vlan_frame(&p, unjudged[i], 0, bad4, 0);
		assert_int_equal(run_one(l.skel, &p), XDP_PASS_RET);
		deep_vlan_frame(&p, judged[2], 1, bad6, 0x1ff);
		assert_int_equal(run_one(l.skel, &p), XDP_PASS_RET);
	}
	small_list_close(&l);
}

/* fs_ctl.bloom of the small list with the verdict cache at gen. */
static void small_list_gen(struct small_list *l, __u32 gen)
{
	struct fs_ctl ctl = { 0 };
	__u32 zero = 0;

	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(l->skel->maps.fs_ctl), &zero, &ctl), 0);
	ctl.bloom = fs_bloom_ctl(l->k, l->log2b, 0, gen);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(l->skel->maps.fs_ctl), &zero, &ctl, 0), 0);
}

/* Add c as entry id the daemon's way (trie, filter, summary), without
 * touching fs_ctl. */
static void small_list_add(struct small_list *l, const char *text, __u32 id)
{
	struct fs_cidr c;
	const char *why;

	assert_int_equal(fs_cidr_parse(text, &c, &why), 0);
	if (c.family == FS_FAMILY_IPV4) {
		struct fs_block_key4 k4;

		fs_cidr_trie_key4(&c, &k4);
		assert_int_equal(bpf_map_update_elem(bpf_map__fd(l->skel->maps.fs_block4), &k4, &id, 0), 0);
	} else {
		struct fs_block_key6 k6;

		fs_cidr_trie_key6(&c, &k6);
		assert_int_equal(bpf_map_update_elem(bpf_map__fd(l->skel->maps.fs_block6), &k6, &id, 0), 0);
	}
	fs_cidr_filter_add(&l->bkey, &c, l->map, l->log2b, l->k);
	fs_cidr_summary_set(l->sum, &c);
}

static int judge(struct small_list *l, __u8 family, const __u8 *src)
{
	struct pkt p;

	build_packet(&p, family, src, 32);
	return run_one(l->skel, &p);
}

/*
 * The verdict cache and its generation (bloom.h, "The verdict cache"), on
 * one CPU (it is per CPU).  Sources next to the list's entries (their /16
 * holds an entry, so the cache is asked) pass, and the second time from
 * the cache.  Then entries covering them go in as the daemon adds them:
 * under the same generation the cache would still pass them, which is
 * why an add moves the generation: under the next one they are dropped.
 * Going back to a generation without zeroing the caches would pass them
 * again, which is why the daemon zeroes them before 255 wraps to 1; with
 * the caches zeroed they are dropped.  Generation 0 reads and writes no
 * slot.
 */
static void test_verdict_cache_generation(void **state)
{
	static const __u8 near4[16] = { 203, 0, 112, 9 };
	static const __u8 near6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0xba, 0xd1, [15] = 7 };
	int ncpus = libbpf_num_possible_cpus(), v6;
	struct fs_block_stats st0, st1;
	struct small_list l;
	cpu_set_t one, was;
	void *zeros;
	__u32 zero = 0;

	assert_int_equal(sched_getaffinity(0, sizeof(was), &was), 0);
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	small_list_open(&l);
	for (v6 = 0; v6 < 2; v6++) {
		__u8 fam = v6 ? FS_FAMILY_IPV6 : FS_FAMILY_IPV4;
		const __u8 *src = v6 ? near6 : near4;

		small_list_gen(&l, 1);
		stats_sum(l.skel, &st0);
		assert_int_equal(judge(&l, fam, src), XDP_PASS_RET);
		assert_int_equal(judge(&l, fam, src), XDP_PASS_RET);
		stats_sum(l.skel, &st1);
		assert_int_equal(st1.cached - st0.cached, 1);
		assert_int_equal(st1.probes - st0.probes, 1);
	}
	small_list_add(&l, "203.0.112.0/24", 3);
	small_list_add(&l, "2001:db8:bad1::/48", 3);
	for (v6 = 0; v6 < 2; v6++) {
		__u8 fam = v6 ? FS_FAMILY_IPV6 : FS_FAMILY_IPV4;
		const __u8 *src = v6 ? near6 : near4;

		small_list_gen(&l, 1);	/* the slot still answers */
		assert_int_equal(judge(&l, fam, src), XDP_PASS_RET);
		small_list_gen(&l, 2);	/* the add's generation */
		assert_int_equal(judge(&l, fam, src), XDP_DROP_RET);
		small_list_gen(&l, 1);	/* come round again, caches as they are */
		assert_int_equal(judge(&l, fam, src), XDP_PASS_RET);
	}
	zeros = calloc((size_t)ncpus, sizeof(struct fs_block_cache));
	assert_non_null(zeros);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(l.skel->maps.fs_block_cache),
					     &zero, zeros, 0), 0);
	for (v6 = 0; v6 < 2; v6++) {
		__u8 fam = v6 ? FS_FAMILY_IPV6 : FS_FAMILY_IPV4;

		assert_int_equal(judge(&l, fam, v6 ? near6 : near4), XDP_DROP_RET);
	}
	/* Generation 0: no slot read or written. */
	small_list_gen(&l, 0);
	stats_sum(l.skel, &st0);
	assert_int_equal(judge(&l, FS_FAMILY_IPV4, (const __u8[16]){ 203, 0, 114, 1 }), XDP_PASS_RET);
	assert_int_equal(judge(&l, FS_FAMILY_IPV4, (const __u8[16]){ 203, 0, 114, 1 }), XDP_PASS_RET);
	stats_sum(l.skel, &st1);
	assert_int_equal(st1.cached - st0.cached, 0);
	assert_int_equal(st1.probes - st0.probes, 2);
	free(zeros);
	small_list_close(&l);
	assert_int_equal(sched_setaffinity(0, sizeof(was), &was), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_list_passes_everything),
		cmocka_unit_test(test_malformed_from_blocked_source),
		cmocka_unit_test(test_deep_vlan_from_blocked_source),
		cmocka_unit_test(test_verdict_cache_generation),
		cmocka_unit_test(test_verdict_10k_prefixes_1m_sources),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
