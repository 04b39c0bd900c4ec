// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * bench.bpf.c - XDP programs that bench/tools/fs-bench.c times with
 * BPF_PROG_TEST_RUN, all sharing one driver so that their differences are
 * the cost of what they add:
 *
 *   fs_bench_base    the driver alone
 *   fs_bench_parse   + fs_datapath_parse_only(): parse to the flow key
 *   fs_bench_full    + fs_datapath_process(): the program the daemon
 *                    attaches (parse, one keyed hash pass, d Count-Min cells,
 *                    three HyperLogLog registers, the fs_hot line)
 *   fs_bench_naive   + parse, then the textbook sketch of the seeds'
 *                    example code: FNV-1a of the key once per row, one
 *                    map lookup per row, and FNV-1a again per HyperLogLog
 *   fs_bench_floor   + parse, then only the memory work every sketch of
 *                    this shape must do: d Count-Min cells and three
 *                    HyperLogLog registers (4-byte cells and packed
 *                    registers, the datapath's layout), addressed from one
 *                    unkeyed multiplication, with no windows, totals,
 *                    statistics, spills or reports.  Not a usable sketch (anyone can aim
 *                    collisions at it); the least the full program could
 *                    cost, so that full / floor says what is left to gain
 *                    by tuning code and floor / parse-only what the
 *                    sketch's shape (d and the three HyperLogLogs) costs.
 *
 * fs_live_* (at the end) are the same programs without the driver, for
 * live traffic.
 *
 * The driver.  BPF_PROG_TEST_RUN with repeat runs the program over the
 * same buffer, so a fixed packet would hit the same d cells every time
 * and measure a cache-hot toy.  Each run therefore first rewrites the IPv4
 * source address and UDP source port from a per-CPU counter: run n is flow
 * n (2^24 addresses x 2^8 ports before it wraps), so a run of 1e6 repeats
 * spreads over 1e6 flows and the sketches' cells as real traffic would.
 * The test packet is Ethernet + IPv4 (no options) + UDP, built by fs-bench.
 */
/* The kernel's Bloom filter map beside ours, for the blocklist's
 * comparison (blocklist.bpf.h). */
#define FS_BENCH_KERNEL_BLOOM 1
/* The sampled Count-Min's state map in every build of this file, used by
 * bench_nitro.bpf.c's only (sketch_update.bpf.h). */
#define FS_BENCH_NITRO_MAP 1
#include "datapath.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define BENCH_IP_SADDR_OFF (14 + 12)
#define BENCH_UDP_SPORT_OFF (14 + 20)
#define BENCH_HDR_LEN (14 + 20 + 8)

#define FNV64_OFFSET 0xcbf29ce484222325ULL
#define FNV64_PRIME 0x100000001b3ULL

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} bench_ctr SEC(".maps");

/* The naive sketch: one map element per Count-Min cell, rows laid out one
 * after the other (row * w + column), and one element per HyperLogLog
 * register (sketch * m + index).  fs-bench sizes them like fs_cms/fs_hll. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fs_cms_cell);
} naive_cms SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8);
} naive_hll SEC(".maps");

/*
 * Sources of the test packets when bench_nsrc is set: run n gets
 * bench_src[n % bench_nsrc] (fs-bench's near sources for the blocklist,
 * bench_blocklist.h) instead of 10.x.y.z.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} bench_src SEC(".maps");

volatile __u32 bench_nsrc;

/* Make this run a new flow; 0, or -1 if the packet is not fs-bench's. */
static __always_inline int bench_next_flow(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 zero = 0, saddr;
	__u16 sport;
	__u64 *ctr, n;

	if (data + BENCH_HDR_LEN > data_end)
		return -1;
	ctr = bpf_map_lookup_elem(&bench_ctr, &zero);
	if (!ctr)
		return -1;
	n = (*ctr)++;
	saddr = bpf_htonl(0x0a000000U | (__u32)(n & 0xffffff));
	if (bench_nsrc) {
		__u32 i = (__u32)(n % bench_nsrc), *src;

		src = bpf_map_lookup_elem(&bench_src, &i);
		if (src)
			saddr = *src;
	}
	sport = bpf_htons((__u16)(1024 + ((n >> 24) & 0xff)));
	__builtin_memcpy(data + BENCH_IP_SADDR_OFF, &saddr, sizeof(saddr));
	__builtin_memcpy(data + BENCH_UDP_SPORT_OFF, &sport, sizeof(sport));
	return 0;
}

SEC("xdp")
int fs_bench_base(struct xdp_md *ctx)
{
	if (bench_next_flow(ctx))
		return XDP_ABORTED;
	return XDP_PASS;
}

SEC("xdp")
int fs_bench_parse(struct xdp_md *ctx)
{
	if (bench_next_flow(ctx))
		return XDP_ABORTED;
	return fs_datapath_parse_only(ctx);
}

SEC("xdp")
int fs_bench_full(struct xdp_md *ctx)
{
	if (bench_next_flow(ctx))
		return XDP_ABORTED;
	return fs_datapath_process(ctx);
}

/* FNV-1a, 64-bit, byte by byte, from a per-use seed. */
static __always_inline __u64 naive_fnv1a(const __u8 *p, __u32 len, __u64 seed)
{
	__u64 h = seed;
	__u32 i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= FNV64_PRIME;
	}
	return h;
}

static __always_inline void naive_hll_add(__u32 sketch, const __u8 *p,
					  __u32 len, __u32 hll_p)
{
	__u64 h = naive_fnv1a(p, len, FNV64_OFFSET + sketch * FS_GOLDEN64);
	__u32 reg = (sketch << hll_p) | fs_hll_index(h, hll_p);
	__u8 *r = bpf_map_lookup_elem(&naive_hll, &reg);

	if (r)
		fs_hll_register_max(r, fs_hll_rank(h, hll_p));
}

static __always_inline int naive_process(struct xdp_md *ctx)
{
	__u32 depth = fs_params.cms_depth, width = 1U << fs_params.cms_log2_width;
	__u32 hll_p = fs_params.hll_p, row;
	struct fs_hot_line *hot = fs_hot_line();
	struct fs_flow_key key;
	struct {
		__u64 family;
		__u8 addr[16];
	} addr = {};
	__u64 bytes;

	/* Read before any branch: clang may otherwise merge the two ctx
	 * loads behind the checks into one on a computed ctx offset, which
	 * the verifier refuses. */
	bytes = ctx->data_end - ctx->data;
	if (!hot || fs_datapath_parse_key(ctx, hot, &key))
		return XDP_PASS;

	for (row = 0; row < FS_CMS_MAX_DEPTH && row < depth; row++) {
		__u64 h = naive_fnv1a((const __u8 *)&key, sizeof(key),
				      FNV64_OFFSET + row * FS_GOLDEN64);
		__u32 cell = row * width + (__u32)(h % width);
		struct fs_cms_cell *c = bpf_map_lookup_elem(&naive_cms, &cell);

		if (c) {
			c->packets += 1;
			c->bytes += bytes;
		}
	}

	naive_hll_add(FS_HLL_FLOWS, (const __u8 *)&key, sizeof(key), hll_p);
	addr.family = key.family;
	__builtin_memcpy(addr.addr, key.src, sizeof(addr.addr));
	naive_hll_add(FS_HLL_SOURCES, (const __u8 *)&addr, sizeof(addr), hll_p);
	__builtin_memcpy(addr.addr, key.dst, sizeof(addr.addr));
	naive_hll_add(FS_HLL_DESTS, (const __u8 *)&addr, sizeof(addr), hll_p);

	/* The same bookkeeping as the full program (fs_hot: rx above, one
	 * slot's totals and sketched here), so that only the sketch differs
	 * between the two; no window, so no tag. */
	hot->slot[0].packets += 1;
	hot->slot[0].bytes += bytes;
	hot->sketched += 1;
	return XDP_PASS;
}

/* One odd 64-bit multiplication of the xor of n words: the cheapest hash
 * that still spreads every input bit over the high bits. */
static __always_inline __u64 floor_hash(const __u64 *w, __u32 n)
{
	__u64 x = 0;
	__u32 i;

	for (i = 0; i < n; i++)
		x ^= w[i];
	return x * FS_GOLDEN64;
}

/* The floor's memory is the datapath's layout: packed registers and
 * narrow cells (hll.h, cms.h), the least a sketch of this shape touches. */
static __always_inline void floor_hll_add(const struct fs_sketch_params *p,
					  __u32 sketch, __u64 h)
{
	__u32 reg = (sketch << p->hll_p) | fs_hll_index(h, p->hll_p), shift;
	__u64 word = fs_hll_packed_word(p, 0, reg, &shift);
	__u32 chunk = (__u32)(word >> FS_HLL_PACKED_CHUNK_SHIFT);
	struct fs_hll_packed_chunk *c = bpf_map_lookup_elem(&fs_hll_packed, &chunk);

	if (c)
		fs_hll_packed_max(&c->words[word & FS_HLL_PACKED_CHUNK_MASK], shift,
				  fs_hll_rank(h, p->hll_p));
}

static __always_inline int floor_process(struct xdp_md *ctx)
{
	const struct fs_sketch_params copy = *(const struct fs_sketch_params *)&fs_params;
	const struct fs_sketch_params *p = &copy;
	__u32 log2w = p->cms_log2_width, row;
	struct fs_flow_key key;
	const __u64 *w = (const __u64 *)&key;
	struct fs_hot_line *hot = fs_hot_line();
	__u64 bytes, h;

	/* Read before any branch: clang may otherwise merge the two ctx
	 * loads behind the checks into one on a computed ctx offset, which
	 * the verifier refuses. */
	bytes = ctx->data_end - ctx->data;
	if (!hot || fs_datapath_parse_key(ctx, hot, &key))
		return XDP_PASS;
	h = floor_hash(w, sizeof(key) / 8);

	for (row = 0; row < FS_CMS_MAX_DEPTH && row < p->cms_depth; row++) {
		/* Bit fields of h, wrapping round when d * log2 w > 64: only
		 * the cost counts here. */
		__u32 column = (__u32)(h >> ((row * log2w) & 63)) & ((1U << log2w) - 1);
		__u32 cell = (row << log2w) | column;
		__u32 chunk = cell >> FS_CMSN_CHUNK_SHIFT;
		struct fs_cms_narrow_chunk *c =
			bpf_map_lookup_elem(&fs_cms_narrow, &chunk);

		/* No spill: only the cost counts, and a spill comes once in
		 * 59 packets a cell at most (cms.h). */
		if (c)
			c->cells[cell & FS_CMSN_CHUNK_MASK] +=
				1 + ((__u32)bytes << FS_CMSN_BYTES_SHIFT);
	}
	/* Words 1, 2 and 3, 4 of the key are the source and destination. */
	floor_hll_add(p, FS_HLL_FLOWS, h);
	floor_hll_add(p, FS_HLL_SOURCES, floor_hash(w + 1, 2));
	floor_hll_add(p, FS_HLL_DESTS, floor_hash(w + 3, 2));
	return XDP_PASS;
}

/*
 * Parse, then the blocklist's verdict alone: with our filter
 * (FS_PROBE_OURS), with the same keys in the kernel's Bloom filter map
 * (FS_PROBE_KERNEL), or with no filter (FS_PROBE_NONE: the summary, the
 * counters and the same exact confirm after either).  Their differences
 * are what each filter's probes cost a packet; the full program carries
 * the verdict too (fs_bench_full, with a list or without).
 */
static __always_inline int verdict_process(struct xdp_md *ctx, int mode)
{
	struct fs_hot_line *hot = fs_hot_line();
	struct fs_flow_key key;
	struct fs_ctl *ctl;
	__u32 zero = 0;
	__u64 bytes;

	bytes = ctx->data_end - ctx->data;
	if (!hot || fs_datapath_parse_key(ctx, hot, &key))
		return XDP_PASS;
	ctl = bpf_map_lookup_elem(&fs_ctl, &zero);
	if (!ctl)
		return XDP_PASS;
	return fs_block_verdict_with(&key, bytes, *(volatile __u64 *)&ctl->bloom,
				     mode);
}

SEC("xdp")
int fs_bench_verdict(struct xdp_md *ctx)
{
	if (bench_next_flow(ctx))
		return XDP_ABORTED;
	return verdict_process(ctx, FS_PROBE_OURS);
}

SEC("xdp")
int fs_bench_kverdict(struct xdp_md *ctx)
{
	if (bench_next_flow(ctx))
		return XDP_ABORTED;
	return verdict_process(ctx, FS_PROBE_KERNEL);
}

SEC("xdp")
int fs_bench_sverdict(struct xdp_md *ctx)
{
	if (bench_next_flow(ctx))
		return XDP_ABORTED;
	return verdict_process(ctx, FS_PROBE_NONE);
}

SEC("xdp")
int fs_bench_naive(struct xdp_md *ctx)
{
	if (bench_next_flow(ctx))
		return XDP_ABORTED;
	return naive_process(ctx);
}

SEC("xdp")
int fs_bench_floor(struct xdp_md *ctx)
{
	if (bench_next_flow(ctx))
		return XDP_ABORTED;
	return floor_process(ctx);
}

/*
 * Live programs (bench/tools/fs-livebench.c): the same work without the driver,
 * attached in turn as the XDP program of a veth that receives real
 * traffic, and timed by the kernel's run-time statistics.  fs_live_empty
 * only returns XDP_PASS: what the statistics themselves cost per run.
 */
SEC("xdp")
int fs_live_empty(struct xdp_md *ctx)
{
	return XDP_PASS;
}

SEC("xdp")
int fs_live_parse(struct xdp_md *ctx)
{
	return fs_datapath_parse_only(ctx);
}

SEC("xdp")
int fs_live_full(struct xdp_md *ctx)
{
	return fs_datapath_process(ctx);
}

SEC("xdp")
int fs_live_naive(struct xdp_md *ctx)
{
	return naive_process(ctx);
}

SEC("xdp")
int fs_live_floor(struct xdp_md *ctx)
{
	return floor_process(ctx);
}
