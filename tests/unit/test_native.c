// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_native.c - the native export file (user/lib/native.h).
 *
 * Round trips keep every field, cell, register and candidate; the header
 * is checked byte by byte against the layout documented in native.h; and
 * every refusal documented there is provoked once, its message checked
 * for the words that name the fault: a reader that accepted the file, or
 * refused it for another reason, fails.  Every prefix of a file is
 * refused as truncated.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <zlib.h>
#include <cmocka.h>

#include "native.h"
#include "rng.h"

/* An export of depth d, width 2^log2w, precision p, with ncand
 * candidates (IPv4 and IPv6) and pseudo-random contents. */
static void make(struct fs_native *n, __u32 d, __u32 log2w, __u32 p,
		 __u64 ncand, __u64 seed)
{
	const struct fs_hash_secret secret = { 0x0123456789abcdefULL, 42 };
	struct fs_sketch_params params;
	__u64 i, s = seed | 1;

	fs_params_init(&params, d, log2w, p, 0, &secret);
	assert_int_equal(fs_native_init(n, &params, ncand), 0);
	/* The secret never reaches an export. */
	assert_int_equal(n->sketch.params.secret.k0, 0);
	assert_int_equal(n->sketch.params.secret.k1, 0);
	n->direction = FS_NATIVE_DIR_BOTH;
	n->fingerprint = fs_params_fingerprint(&secret);
	n->start_ns = 1700000000123456789ULL;
	n->end_ns = n->start_ns + 30000000000ULL;
	n->window_ns = 1000000000ULL;
	n->windows = 30;
	n->sketch.totals.packets = rng_next(&s) >> 4;
	n->sketch.totals.bytes = rng_next(&s) >> 4;
	for (i = 0; i < fs_cms_cells_per_slot(&params); i++) {
		n->sketch.cms[i].packets = rng_next(&s) >> 1;
		n->sketch.cms[i].bytes = rng_next(&s) >> 1;
	}
	for (i = 0; i < fs_hll_regs_per_slot(&params); i++)
		n->sketch.hll[i] = (__u8)(rng_next(&s) % (66 - p));
	for (i = 0; i < ncand; i++) {
		struct fs_native_candidate *c = &n->candidates[i];

		c->key.family = i % 2 ? FS_FAMILY_IPV6 : FS_FAMILY_IPV4;
		c->key.proto = i % 3 ? 6 : 17;
		c->key.sport = (__u16)rng_next(&s);
		c->key.dport = (__u16)rng_next(&s);
		c->key.src[0] = 10;
		c->key.src[3] = (__u8)i;
		c->key.dst[0] = 10;
		c->key.dst[2] = (__u8)(i >> 8);
		/* Rows past the depth stay zero, as a decoder leaves them. */
		for (__u32 row = 0; row < d; row++)
			c->cols[row] = (__u32)(rng_next(&s) >> (64 - log2w));
	}
	fs_native_sort(n);
}

/* Encode n into a new buffer of *len bytes. */
static __u8 *encode(const struct fs_native *n, size_t *len)
{
	__u8 *buf;

	*len = fs_native_size(n);
	assert_true(*len > 0);
	buf = malloc(*len);
	assert_non_null(buf);
	assert_int_equal(fs_native_encode(n, buf, *len), 0);
	return buf;
}

static void assert_same(const struct fs_native *a, const struct fs_native *b)
{
	const struct fs_sketch_params *p = &a->sketch.params;

	assert_memory_equal(&a->sketch.params, &b->sketch.params, sizeof(*p));
	assert_int_equal(a->fingerprint, b->fingerprint);
	assert_int_equal(a->start_ns, b->start_ns);
	assert_int_equal(a->end_ns, b->end_ns);
	assert_int_equal(a->window_ns, b->window_ns);
	assert_int_equal(a->windows, b->windows);
	assert_int_equal(a->direction, b->direction);
	assert_int_equal(a->sketch.totals.packets, b->sketch.totals.packets);
	assert_int_equal(a->sketch.totals.bytes, b->sketch.totals.bytes);
	assert_int_equal(a->ncandidates, b->ncandidates);
	if (a->ncandidates)
		assert_memory_equal(a->candidates, b->candidates,
				    a->ncandidates * sizeof(*a->candidates));
	assert_memory_equal(a->sketch.cms, b->sketch.cms,
			    fs_cms_cells_per_slot(p) * sizeof(*a->sketch.cms));
	assert_memory_equal(a->sketch.hll, b->sketch.hll, fs_hll_regs_per_slot(p));
	if (fs_prefix_buckets_per_slot(p))
		assert_memory_equal(a->sketch.prefix, b->sketch.prefix,
				    fs_prefix_buckets_per_slot(p) * 64);
	if (fs_spread_buckets_per_slot(p))
		assert_memory_equal(a->sketch.spread, b->sketch.spread,
				    fs_spread_buckets_per_slot(p) * 64);
}

static void test_round_trip(void **state)
{
	static const __u32 shapes[][4] = {
		/* depth, log2 width, precision, candidates */
		{ 1, 4, 4, 0 },
		{ 3, 6, 10, 7 },
		{ 5, 12, 14, 1000 },
		{ 8, 4, 18, 2 },
	};
	char err[FS_NATIVE_ERR_MAX];
	struct fs_native a, b;
	size_t i, len, len2;
	__u8 *buf, *buf2;

	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		make(&a, shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], i + 1);
		buf = encode(&a, &len);
		/* ... and three counts of 0: no prefix or spread sketch, no
		 * sample. */
		assert_int_equal(len, 96 + (40 + 4 * shapes[i][0]) * shapes[i][3] + 8 +
				 16 * ((__u64)shapes[i][0] << shapes[i][1]) + 8 +
				 (3U << shapes[i][2]) + 8 + 8 + 8 + 4);
		err[0] = 0;
		assert_int_equal(fs_native_decode(buf, len, &b, err), 0);
		assert_same(&a, &b);
		/* One export, one file. */
		buf2 = encode(&b, &len2);
		assert_int_equal(len, len2);
		assert_memory_equal(buf, buf2, len);
		free(buf);
		free(buf2);
		fs_native_free(&a);
		fs_native_free(&b);
	}
}

/* The defaults' size, as native.h says: 376,972 bytes without candidates,
 * detection sketches or sample. */
static void test_default_size(void **state)
{
	struct fs_native n;

	make(&n, FS_DEFAULT_CMS_DEPTH, FS_DEFAULT_CMS_LOG2W, FS_DEFAULT_HLL_P, 0, 9);
	assert_int_equal(fs_native_size(&n), 376972);
	fs_native_free(&n);
}

static __u32 le32(const __u8 *b)
{
	return (__u32)b[0] | (__u32)b[1] << 8 | (__u32)b[2] << 16 |
	       (__u32)b[3] << 24;
}

static __u64 le64(const __u8 *b)
{
	__u64 v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

/* Offsets and byte order of native.h's table. */
static void test_layout(void **state)
{
	struct fs_native n;
	size_t len, a, bo;
	__u8 *b;

	make(&n, 3, 5, 6, 2, 3);
	b = encode(&n, &len);
	assert_memory_equal(b, "FSEXPORT", 8);
	assert_memory_equal(b + 8, "\x04\x00\x00\x00", 4);
	assert_memory_equal(b + 12, "\x03\x00\x00\x00", 4);
	assert_memory_equal(b + 16, "FSK1", 4);
	assert_int_equal(b[20], 1);		/* params version */
	assert_int_equal(b[21], 3);		/* depth */
	assert_int_equal(b[22], 5);		/* log2 width */
	assert_int_equal(b[23], 6);		/* precision */
	assert_int_equal(b[24], 0);		/* flags */
	assert_int_equal(b[25], FS_NSLOTS);
	assert_memory_equal(b + 26, "\0\0\0\0\0\0", 6);
	assert_int_equal(le64(b + 32), n.fingerprint);
	assert_int_equal(le64(b + 40), n.start_ns);
	assert_int_equal(le64(b + 48), n.end_ns);
	assert_int_equal(le64(b + 56), n.window_ns);
	assert_int_equal(le64(b + 64), n.windows);
	assert_int_equal(le64(b + 72), n.sketch.totals.packets);
	assert_int_equal(le64(b + 80), n.sketch.totals.bytes);
	assert_int_equal(le64(b + 88), 2);
	/* A candidate: its key, then its column in each of the 3 rows. */
	assert_memory_equal(b + 96, &n.candidates[0].key, 40);
	assert_int_equal(le32(b + 136), n.candidates[0].cols[0]);
	assert_int_equal(le32(b + 140), n.candidates[0].cols[1]);
	assert_int_equal(le32(b + 144), n.candidates[0].cols[2]);
	assert_memory_equal(b + 148, &n.candidates[1].key, 40);
	assert_int_equal(le32(b + 196), n.candidates[1].cols[2]);
	/* Candidates in ascending key order. */
	assert_true(memcmp(b + 96, b + 148, 40) < 0);
	a = 96 + 2 * 52;
	assert_int_equal(le64(b + a), 3 << 5);
	assert_int_equal(le64(b + a + 8), n.sketch.cms[0].packets);
	assert_int_equal(le64(b + a + 16), n.sketch.cms[0].bytes);
	assert_int_equal(le64(b + a + 8 + 16 * 33), n.sketch.cms[33].packets);
	bo = a + 8 + 16 * (3 << 5);
	assert_int_equal(le64(b + bo), 3 << 6);
	assert_memory_equal(b + bo + 8, n.sketch.hll, 3 << 6);
	/* No prefix buckets, no spread buckets, no sample buckets. */
	assert_int_equal(le64(b + bo + 8 + (3 << 6)), 0);
	assert_int_equal(le64(b + bo + 16 + (3 << 6)), 0);
	assert_int_equal(le64(b + bo + 24 + (3 << 6)), 0);
	assert_int_equal(len, bo + 8 + (3 << 6) + 24 + 4);
	assert_int_equal((__u32)(b[len - 4] | b[len - 3] << 8 | b[len - 2] << 16 |
				 (__u32)b[len - 1] << 24),
			 (__u32)crc32_z(0, b, len - 4));
	free(b);
	fs_native_free(&n);
}

/* Make a file's checksum right again after an edit of its content. */
static void fix_crc(__u8 *b, size_t len)
{
	__u32 c = (__u32)crc32_z(0, b, len - 4);

	b[len - 4] = (__u8)c;
	b[len - 3] = (__u8)(c >> 8);
	b[len - 2] = (__u8)(c >> 16);
	b[len - 1] = (__u8)(c >> 24);
}

/* The decoder refuses buf with a message containing want. */
static void refused(const __u8 *buf, size_t len, const char *want)
{
	char err[FS_NATIVE_ERR_MAX] = "";
	struct fs_native n;

	assert_int_equal(fs_native_decode(buf, len, &n, err), -EINVAL);
	if (!strstr(err, want))
		fail_msg("refused with \"%s\", not for \"%s\"", err, want);
}

static void test_refusals(void **state)
{
	struct fs_native n;
	size_t len, a, bo;
	__u8 *good, *b;

	make(&n, 2, 4, 4, 3, 5);
	good = encode(&n, &len);
	b = malloc(len + 1);
	assert_non_null(b);
	/* Depth 2: a candidate is 40 + 2 * 4 = 48 bytes. */
	a = 96 + 3 * 48;
	bo = a + 8 + 16 * (2 << 4);

#define EDIT(stmt, want) do {				\
		memcpy(b, good, len);			\
		stmt;					\
		refused(b, len, want);			\
	} while (0)
#define EDIT_CRC(stmt, want) do {			\
		memcpy(b, good, len);			\
		stmt;					\
		fix_crc(b, len);			\
		refused(b, len, want);			\
	} while (0)

	EDIT(b[3] = 'x', "not a flowsketch export");
	EDIT(b[8] = 5, "format version 5");
	/* Version 1 carried raw flow hashes: refused, saying why. */
	EDIT(b[8] = 1, "format version 1, which carried raw keyed flow hashes");
	EDIT(b[11] = 1, "format version 16777220");
	EDIT(b[12] = 0, "direction 0");
	EDIT(b[12] = 4, "direction 4");
	EDIT(b[16] = 'X', "parameters record");
	EDIT(b[20] = 2, "parameters record");
	EDIT(b[21] = 0, "depth 0");
	EDIT(b[21] = 9, "depth 9");
	EDIT(b[22] = 3, "width 2^3");
	EDIT(b[22] = 23, "width 2^23");
	EDIT(b[23] = 19, "precision 19");
	EDIT(b[24] = 0x80, "flags 0x80");
	EDIT(b[25] = 3, "nslots is 3");
	/* A keyed sample's bytes (params.h 14, 15): a rate without buckets,
	 * too many buckets, and buckets the file does not hold. */
	EDIT(b[31] = 1, "sample sizes are out of range (prefix 0x00 0x00, spread 0x00 0x00, sample 0x00 0x01)");
	EDIT(b[30] = 14, "sample sizes are out of range");
	EDIT(b[30] = 9, "it holds 0 sample buckets, and 512 sample buckets");
	/* A detection sketch's shape without its width (params.h bytes 10, 11). */
	EDIT(b[27] = 0x20, "prefix, spread or sample sizes are out of range");
	EDIT(b[55] = 0, "before it starts");
	EDIT(memset(b + 56, 0, 8), "window length is 0");
	/* Counts that disagree with the parameters. */
	EDIT(b[a] ^= 1, "Count-Min cells, and depth 2 times width 16 make 32");
	EDIT(b[bo] ^= 1, "HyperLogLog registers, and precision 4 makes 48");
	/* More candidates than the file holds. */
	EDIT(b[88] = 200, "truncated: 200 candidates");
	/* Content damaged: the checksum catches it... */
	EDIT(b[a + 20] ^= 0x10, "checksum");
	EDIT(b[len - 1] ^= 1, "checksum");
	/* ... and content wrong but checksummed is refused for what it is. */
	EDIT_CRC(b[96] = 5, "candidate 0 has address family 5");
	EDIT_CRC(b[96 + 48 + 2] = 1, "candidate 1 has a non-zero pad");
	EDIT_CRC(b[96 + 48 + 44] = 16, "candidate 1 has column 16 in row 1, outside width 16");
	EDIT_CRC(b[bo + 8 + 7] = 62, "register 7 holds 62");
	/* Candidates out of order, or one twice. */
	EDIT_CRC(memcpy(b + 96, b + 96 + 48, 48), "candidate 1 is not after candidate 0");
	EDIT_CRC(memcpy(b + 96 + 96, b + 96, 48), "candidate 2 is not after candidate 1");
	/* Bytes after the end. */
	memcpy(b, good, len);
	b[len] = 0;
	refused(b, len + 1, "1 bytes follow the end");
	/* Every prefix is truncated. */
	for (size_t cut = 0; cut < len; cut++)
		refused(good, cut, "truncated");
#undef EDIT
#undef EDIT_CRC
	free(b);
	free(good);
	fs_native_free(&n);
}

static void test_encode_refusals(void **state)
{
	struct fs_native n;
	size_t len;
	__u8 *b;

	make(&n, 2, 4, 4, 1, 7);
	len = fs_native_size(&n);
	b = malloc(len);
	assert_non_null(b);
	assert_int_equal(fs_native_encode(&n, b, len - 1), -ENOSPC);
	n.direction = 0;
	assert_int_equal(fs_native_encode(&n, b, len), -EINVAL);
	n.direction = FS_NATIVE_DIR_IN;
	n.candidates[0].key.family = 0;
	assert_int_equal(fs_native_encode(&n, b, len), -EINVAL);
	n.candidates[0].key.family = FS_FAMILY_IPV4;
	n.sketch.hll[3] = 62;
	assert_int_equal(fs_native_encode(&n, b, len), -EINVAL);
	n.sketch.hll[3] = 61;
	n.end_ns = n.start_ns - 1;
	assert_int_equal(fs_native_encode(&n, b, len), -EINVAL);
	n.end_ns = n.start_ns;
	assert_int_equal(fs_native_encode(&n, b, len), 0);
	free(b);
	fs_native_free(&n);
}

static void test_read_file(void **state)
{
	char path[] = "/tmp/fs-test-native.XXXXXX", err[FS_NATIVE_ERR_MAX];
	struct fs_native a, b;
	size_t len;
	__u8 *buf;
	int fd;

	make(&a, 4, 8, 12, 50, 11);
	buf = encode(&a, &len);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
	assert_int_equal(fs_native_read_file(path, &b, err), 0);
	assert_same(&a, &b);
	fs_native_free(&b);
	/* Cut short on disk, as an interrupted copy would leave it. */
	assert_int_equal(truncate(path, (off_t)len - 100), 0);
	assert_int_equal(fs_native_read_file(path, &b, err), -EINVAL);
	assert_non_null(strstr(err, "truncated"));
	unlink(path);
	assert_int_equal(fs_native_read_file(path, &b, err), -ENOENT);
	assert_non_null(strstr(err, "cannot be read"));
	free(buf);
	fs_native_free(&a);
}

/*
 * A sparse file one byte over the cap is refused by its size: in a child
 * whose address space is capped at 256 MiB, so a reader that allocated the
 * file's gigabyte first fails with "out of memory" instead, and within a
 * second (one that read the gigabyte of holes would take longer).
 */
static void test_read_over_cap(void **state)
{
	char path[] = "/tmp/fs-test-native-big.XXXXXX", err[FS_NATIVE_ERR_MAX];
	char want[64];
	int fd, status;
	pid_t pid;

	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)FS_NATIVE_MAX_BYTES + 1), 0);
	close(fd);
	snprintf(want, sizeof(want), "is %llu bytes", FS_NATIVE_MAX_BYTES + 1);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct rlimit as = { 256 << 20, 256 << 20 };
		struct timespec t0, t1;
		struct fs_native n;
		int ret;

		if (setrlimit(RLIMIT_AS, &as))
			_exit(10);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		ret = fs_native_read_file(path, &n, err);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (ret != -EFBIG) {
			fprintf(stderr, "got %d: %s\n", ret, err);
			_exit(11);
		}
		if (!strstr(err, want) || !strstr(err, "1073741824")) {
			fprintf(stderr, "message: %s\n", err);
			_exit(12);
		}
		_exit(t1.tv_sec - t0.tv_sec >= 1 ? 13 : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	unlink(path);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * A pipe (as a file that grows while read) that goes past the cap is
 * refused once it has, and a regular file over a small cap by its size;
 * one of exactly the cap's size is read.
 */
static void test_read_fd_cap(void **state)
{
	char path[] = "/tmp/fs-test-native-cap.XXXXXX", err[FS_NATIVE_ERR_MAX];
	struct fs_native a, b;
	int fds[2], fd;
	size_t len;
	__u8 *buf;

	make(&a, 1, 4, 4, 1, 3);
	buf = encode(&a, &len);
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], buf, len), (ssize_t)len);
	assert_int_equal(write(fds[1], "x", 1), 1);
	close(fds[1]);
	assert_int_equal(fs_native_read_fd(fds[0], len, &b, err), -EFBIG);
	assert_non_null(strstr(err, "grew while read"));
	close(fds[0]);

	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	assert_int_equal(fs_native_read_fd(fd, len - 1, &b, err), -EFBIG);
	assert_non_null(strstr(err, "more than the"));
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(fs_native_read_fd(fd, len, &b, err), 0);
	assert_same(&a, &b);
	fs_native_free(&b);
	close(fd);
	unlink(path);
	free(buf);
	fs_native_free(&a);
}

/*
 * The detection sketches' parts (native.h, D and E): a file with both on
 * round-trips byte for byte, and its counts and first words sit where
 * the layout says.
 */
static void test_detect_parts(void **state)
{
	const struct fs_prefix_params pp = { 2, 4, 1 };
	const struct fs_spread_params sp = { 3, 4, 3 };
	struct fs_sketch_params params;
	struct fs_native a, b;
	char err[FS_NATIVE_ERR_MAX];
	__u64 seed = 77, np = 2 << 4, ns = 2 * 3 << 4, i;
	size_t len, d;
	__u8 *buf;

	(void)state;
	make(&a, 2, 4, 4, 1, 3);
	params = a.sketch.params;
	fs_native_free(&a);
	fs_params_set_prefix(&params, &pp);
	fs_params_set_spread(&params, &sp);
	assert_int_equal(fs_native_init(&a, &params, 0), 0);
	a.direction = FS_NATIVE_DIR_IN;
	a.end_ns = a.start_ns = 1;
	a.window_ns = 1;
	a.windows = 1;
	/* Buckets as updates leave them (a file of random bytes is refused,
	 * test_bad_buckets). */
	for (i = 0; i < np + ns; i++) {
		/* 4-aligned: fs_prefix_mask() reads words, as of a flow key */
		__u8 addr[16] __attribute__((aligned(4))), masked[16] __attribute__((aligned(8)));
		__u64 r = rng_next(&seed);
		__u8 tag = (__u8)(1 + r % 16);
		__u32 fam = r & 16 ? FS_FAMILY_IPV6 : FS_FAMILY_IPV4;

		rng_fill(&seed, addr, sizeof(addr));
		if (i < np) {
			fs_prefix_mask(addr, fs_prefix_level_len(fs_prefix_tag_family(tag),
								 fs_prefix_tag_level(tag)), masked);
			fs_prefix_bucket_add_n(&a.sketch.prefix[i], tag, masked, r >> 40, r >> 20);
		} else {
			if (fam == FS_FAMILY_IPV4)
				memset(addr + 4, 0, 12);
			fs_spread_bucket_add(&a.sketch.spread[i - np], rng_next(&seed), addr, fam);
		}
	}
	buf = encode(&a, &len);
	d = 96 + 8 + 16 * (2 << 4) + 8 + (3 << 4);
	assert_int_equal(len, d + 8 + 64 * np + 8 + 64 * ns + 8 + 4);
	assert_int_equal(le64(buf + d), np);
	assert_memory_equal(buf + d + 8, a.sketch.prefix, 64);	/* words LE */
	assert_int_equal(le64(buf + d + 8 + 64 * np), ns);
	/* The parameters' bytes 10..13: widths and shapes (params.h). */
	assert_int_equal(buf[16 + 10], 4);
	assert_int_equal(buf[16 + 11], 2 << 4 | 1);
	assert_int_equal(buf[16 + 12], 4);
	assert_int_equal(buf[16 + 13], 3 << 4 | 3);
	assert_int_equal(fs_native_decode(buf, len, &b, err), 0);
	assert_same(&a, &b);
	free(buf);
	fs_native_free(&a);
	fs_native_free(&b);
}

/* Buckets no update leaves are refused, each naming what is wrong: the
 * readers' estimates rest on the vote's invariant and on addresses of a
 * family. */
static void test_bad_buckets(void **state)
{
	const struct fs_prefix_params pp = { 1, 4, 0 };
	const struct fs_spread_params sp = { 1, 4, 0 };
	static const struct {
		int spread;
		size_t off;		/* in bucket 2 */
		__u8 v;
		const char *want;
	} cases[] = {
		{ 0, 16, 17, "prefix bucket 2 has a tag above 16" },
		{ 0, 32, 9, "prefix bucket 2 leads by more packets than it counted" },
		{ 0, 3, 1, "prefix bucket 2 names a prefix with bits set past its length" },
		{ 1, 18, 5, "spread bucket 2 has an address family other than 0, 4 and 6" },
		{ 1, 9, 1, "spread bucket 2 has address bytes past its family's" },
	};
	struct fs_sketch_params params;
	struct fs_native a;
	size_t len, d, c;
	__u8 *good, *buf;

	(void)state;
	make(&a, 1, 4, 4, 0, 5);
	params = a.sketch.params;
	fs_native_free(&a);
	fs_params_set_prefix(&params, &pp);
	fs_params_set_spread(&params, &sp);
	assert_int_equal(fs_native_init(&a, &params, 0), 0);
	a.direction = FS_NATIVE_DIR_IN;
	a.end_ns = a.start_ns = 1;
	a.window_ns = a.windows = 1;
	/* Bucket 2 of each: an IPv4 /8 with 8 packets, lead 8; an IPv4
	 * source's element. */
	fs_prefix_bucket_add_n(&a.sketch.prefix[2], fs_prefix_tag(0, FS_FAMILY_IPV4, 0),
			       (const __u8 [16]){ 10 }, 8, 800);
	fs_spread_bucket_add(&a.sketch.spread[2], 0x1234, (const __u8 [16]){ 10, 1, 2, 3 },
			     FS_FAMILY_IPV4);
	good = encode(&a, &len);
	buf = malloc(len);
	assert_non_null(buf);
	d = 96 + 8 + 16 * (1 << 4) + 8 + (3 << 4);
	for (c = 0; c < FS_ARRAY_SIZE(cases); c++) {
		size_t at = cases[c].spread ? d + 8 + 64 * (1 << 4) + 8 : d + 8;

		memcpy(buf, good, len);
		buf[at + 64 * 2 + cases[c].off] = cases[c].v;
		fix_crc(buf, len);
		refused(buf, len, cases[c].want);
	}
	free(buf);
	free(good);
	fs_native_free(&a);
}

/* A file of format version 2 (before the detection sketches: no D or E)
 * reads as the same span with them off; one whose parameters turn one on
 * is refused. */
static void test_version2(void **state)
{
	char err[FS_NATIVE_ERR_MAX] = "";
	struct fs_native a, b;
	size_t len;
	__u8 *buf;

	(void)state;
	make(&a, 3, 5, 6, 2, 11);
	buf = encode(&a, &len);
	/* Version 2: drop the three zero counts before the checksum. */
	len -= 24;
	buf[8] = 2;
	fix_crc(buf, len);
	assert_int_equal(fs_native_decode(buf, len, &b, err), 0);
	assert_same(&a, &b);
	fs_native_free(&b);
	buf[16 + 12] = 4;	/* a spread sketch's width */
	buf[16 + 13] = 2 << 4;
	fix_crc(buf, len);
	refused(buf, len, "format version 2 has no room for its prefix or spread sketch");
	free(buf);
	fs_native_free(&a);
}

/* A file of format version 3 (before the sample: no F) reads as the
 * same span without one; one whose parameters turn it on is refused. */
static void test_version3(void **state)
{
	char err[FS_NATIVE_ERR_MAX] = "";
	struct fs_native a, b;
	size_t len;
	__u8 *buf;

	(void)state;
	make(&a, 3, 5, 6, 2, 12);
	buf = encode(&a, &len);
	len -= 8;		/* the sample's zero count */
	buf[8] = 3;
	fix_crc(buf, len);
	assert_int_equal(fs_native_decode(buf, len, &b, err), 0);
	assert_same(&a, &b);
	assert_int_equal(b.sketch.params.sample_log2b, 0);
	fs_native_free(&b);
	buf[16 + 14] = 1;	/* two sample buckets */
	fix_crc(buf, len);
	refused(buf, len, "format version 3 has no room for its keyed sample");
	free(buf);
	fs_native_free(&a);
}

/*
 * The sample's part (native.h, F): an exported sample of 2 buckets at
 * rate 1/4 whose flows are candidates; its words at their offsets, a round
 * trip, and the refusals: a bucket no export leaves (a value of two bits),
 * and a sampled flow that is not a candidate.
 */
static void test_sample_part(void **state)
{
	const struct fs_sample_params sp = { 2, 1 };
	char err[FS_NATIVE_ERR_MAX] = "";
	struct fs_native a, b;
	size_t len, f;
	__u8 *buf;

	(void)state;
	make(&a, 2, 4, 4, 3, 13);
	fs_params_set_sample(&a.sketch.params, &sp);
	assert_int_equal(fs_native_init(&b, &a.sketch.params, 3), 0);
	memcpy(b.candidates, a.candidates, 3 * sizeof(*a.candidates));
	b.direction = a.direction;
	b.fingerprint = a.fingerprint;
	b.start_ns = a.start_ns;
	b.end_ns = a.end_ns;
	b.window_ns = a.window_ns;
	b.windows = a.windows;
	fs_native_free(&a);
	a = b;
	/* Bucket 1: candidates 0 and 2, values of one bit below 2^62. */
	a.sketch.sample[1].e[0].key = a.candidates[0].key;
	a.sketch.sample[1].e[0].s = 1ULL << 40;
	a.sketch.sample[1].e[0].packets = 3;
	a.sketch.sample[1].e[0].bytes = 300;
	a.sketch.sample[1].e[4].key = a.candidates[2].key;
	a.sketch.sample[1].e[4].s = 1ULL << 61;
	a.sketch.sample[1].e[4].packets = 1;
	a.sketch.sample[1].e[4].bytes = 60;
	a.sketch.sample[1].head.full = 2;
	buf = encode(&a, &len);
	assert_int_equal(buf[16 + 14], 1);
	assert_int_equal(buf[16 + 15], 2);
	f = 96 + 3 * 48 + 8 + 16 * (2 << 4) + 8 + (3 << 4) + 8 + 8;
	assert_int_equal(len, f + 8 + 2 * 512 + 4);
	assert_int_equal(le64(buf + f), 2);
	/* Bucket 1's head (full at its word 1), then entry 0's key and s. */
	assert_int_equal(le64(buf + f + 8 + 512 + 8), 2);
	assert_memory_equal(buf + f + 8 + 512 + 64, &a.candidates[0].key, 40);
	assert_int_equal(le64(buf + f + 8 + 512 + 64 + 40), 1ULL << 40);
	assert_int_equal(le64(buf + f + 8 + 512 + 64 + 48), 3);
	assert_int_equal(fs_native_decode(buf, len, &b, err), 0);
	assert_memory_equal(a.sketch.sample, b.sketch.sample, 2 * 512);
	fs_native_free(&b);
	/* A value of two bits: a raw one. */
	buf[f + 8 + 512 + 64 + 40] = 1;
	fix_crc(buf, len);
	refused(buf, len, "sample bucket 1's entry has a sample value of more than one bit");
	free(buf);
	/* A sampled flow that is not a candidate: refused when written... */
	a.sketch.sample[0].e[2].key = a.candidates[1].key;
	a.sketch.sample[0].e[2].key.sport ^= 1;
	a.sketch.sample[0].e[2].s = 1ULL << 33;
	a.sketch.sample[0].e[2].packets = 1;
	assert_int_equal(fs_native_encode(&a, buf = malloc(len), len), -EINVAL);
	/* ... and when read. */
	a.sketch.sample[0].e[2].key = a.candidates[1].key;
	assert_int_equal(fs_native_encode(&a, buf, len), 0);
	buf[f + 8 + 3 * 64 + 4] ^= 1;	/* bucket 0, entry 2: its sport's first byte */
	fix_crc(buf, len);
	refused(buf, len, "sample bucket 0 holds a flow that is not among its candidates");
	free(buf);
	fs_native_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_default_size),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_detect_parts),
		cmocka_unit_test(test_version2),
		cmocka_unit_test(test_version3),
		cmocka_unit_test(test_sample_part),
		cmocka_unit_test(test_bad_buckets),
		cmocka_unit_test(test_encode_refusals),
		cmocka_unit_test(test_read_file),
		cmocka_unit_test(test_read_over_cap),
		cmocka_unit_test(test_read_fd_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
