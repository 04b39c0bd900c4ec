// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * native.c - the native export file: encode, check, decode (native.h).
 *
 * Every field is written and read a byte at a time in little-endian
 * order, so a file means the same on any host; the checks run on the
 * file's bytes before anything is allocated, so a hostile length cannot
 * make a reader allocate more than the file's own size.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "native.h"

/* Little-endian integers of n bytes (1, 4 or 8), whatever the host. */
static void put_le(__u8 *b, __u64 v, __u32 n)
{
	__u32 i;

	for (i = 0; i < n; i++)
		b[i] = (__u8)(v >> (8 * i));
}

static __u64 get_le(const __u8 *b, __u32 n)
{
	__u64 v = 0;
	__u32 i;

	for (i = 0; i < n; i++)
		v |= (__u64)b[i] << (8 * i);
	return v;
}

#define put_le32(b, v) put_le(b, v, 4)
#define put_le64(b, v) put_le(b, v, 8)
#define get_le32(b) ((__u32)get_le(b, 4))
#define get_le64(b) get_le(b, 8)

/* zlib's crc32_z() takes any length (crc32() only 32-bit ones). */
static __u32 checksum(const __u8 *b, size_t len)
{
	return (__u32)crc32_z(crc32_z(0, Z_NULL, 0), b, len);
}

static int fail(char *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int fail(char *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, FS_NATIVE_ERR_MAX, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int fs_native_init(struct fs_native *n, const struct fs_sketch_params *p,
		   __u64 ncandidates)
{
	struct fs_sketch_params q = *p;
	int err;

	memset(n, 0, sizeof(*n));
	memset(&q.secret, 0, sizeof(q.secret));
	err = fs_sketch_init(&n->sketch, &q);
	if (err)
		return err;
	if (ncandidates > SIZE_MAX / sizeof(*n->candidates)) {
		err = -ENOMEM;
		goto err_free;
	}
	n->candidates = calloc(ncandidates ? ncandidates : 1,
			       sizeof(*n->candidates));
	if (!n->candidates) {
		err = -ENOMEM;
		goto err_free;
	}
	n->ncandidates = ncandidates;
	return 0;

err_free:
	fs_native_free(n);
	return err;
}

void fs_native_free(struct fs_native *n)
{
	fs_sketch_free(&n->sketch);
	free(n->candidates);
	n->candidates = NULL;
	n->ncandidates = 0;
}

static int candidate_cmp(const void *a, const void *b)
{
	const struct fs_native_candidate *x = a, *y = b;
	int c = memcmp(&x->key, &y->key, sizeof(x->key));

	if (c)
		return c;
	return memcmp(x->cols, y->cols, sizeof(x->cols));
}

void fs_native_sort(struct fs_native *n)
{
	qsort(n->candidates, n->ncandidates, sizeof(*n->candidates),
	      candidate_cmp);
}

static int wrong_count(enum fs_kind k, const struct fs_sketch_params *p,
		       __u64 got, char *err)
{
	char why[96];

	fs_sketch_kinds[k].say_count(why, sizeof(why), p);
	return fail(err, "it holds %llu %ss, and %s", (unsigned long long)got,
		    fs_sketch_kinds[k].noun, why);
}

static int short_part(enum fs_kind k, __u64 n, size_t left, char *err)
{
	const struct fs_sketch_kind *d = &fs_sketch_kinds[k];

	if (d->elem_bytes == 1)
		return fail(err, "truncated: %llu %ss, and only %zu bytes are left",
			    (unsigned long long)n, d->noun, left);
	return fail(err, "truncated: %llu %ss take %llu bytes, and only %zu are left",
		    (unsigned long long)n, d->noun,
		    (unsigned long long)n * d->elem_bytes, left);
}

size_t fs_native_size(const struct fs_native *n)
{
	const struct fs_sketch_params *p = &n->sketch.params;
	/* Each kind's part: its count (8 bytes) and its elements. */
	__u64 fixed = FS_NATIVE_HEADER + 8 * FS_NKINDS + FS_NATIVE_TRAILER;
	int k;

	for (k = 0; k < FS_NKINDS; k++)
		fixed += fs_kind_slot_bytes(k, p);

	/* The parts are bounded by the parameters (512 MiB at most); only
	 * the candidates' count can be anything. */
	if (n->ncandidates > (SIZE_MAX - fixed) / FS_NATIVE_CANDIDATE(p->cms_depth))
		return 0;
	return fixed + n->ncandidates * FS_NATIVE_CANDIDATE(p->cms_depth);
}

__u64 fs_native_put_words(__u8 *b, const struct fs_sketch *s, enum fs_kind k)
{
	__u32 w = fs_sketch_kinds[k].word_bytes;
	__u64 i, n = fs_kind_slot_bytes(k, &s->params) / w;

	for (i = 0; i < n; i++)
		put_le(b + i * w, fs_kind_word(k, s->part[k], i), w);
	return n * w;
}

__u64 fs_native_get_words(const __u8 *b, struct fs_sketch *s, enum fs_kind k)
{
	__u32 w = fs_sketch_kinds[k].word_bytes;
	__u64 i, n = fs_kind_slot_bytes(k, &s->params) / w;

	for (i = 0; i < n; i++)
		fs_kind_set_word(k, s->part[k], i, get_le(b + i * w, w));
	return n * w;
}

bool fs_native_bad_word(const struct fs_sketch *s, enum fs_kind *k, __u64 *i)
{
	int j;

	for (j = 0; j < FS_NKINDS; j++) {
		const struct fs_sketch_kind *d = &fs_sketch_kinds[j];
		__u64 n = fs_kind_slot_bytes(j, &s->params) / d->word_bytes, max;

		if (!d->word_max)
			continue;
		max = d->word_max(&s->params);
		for (*i = 0; *i < n; (*i)++)
			if (fs_kind_word(j, s->part[j], *i) > max) {
				*k = (enum fs_kind)j;
				return true;
			}
	}
	return false;
}

/* The parameters record's first 16 bytes (params.h layout). */
static void put_params(__u8 *b, const struct fs_sketch_params *p)
{
	put_le32(b, p->magic);
	b[4] = p->version;
	b[5] = p->cms_depth;
	b[6] = p->cms_log2_width;
	b[7] = p->hll_p;
	b[8] = p->flags;
	b[9] = p->nslots;
	b[10] = p->prefix_log2w;
	b[11] = p->prefix_shape;
	b[12] = p->spread_log2w;
	b[13] = p->spread_shape;
	b[14] = p->sample_log2b;
	b[15] = p->sample_shift;
}

static void get_params(const __u8 *b, struct fs_sketch_params *p)
{
	memset(p, 0, sizeof(*p));
	p->magic = get_le32(b);
	p->version = b[4];
	p->cms_depth = b[5];
	p->cms_log2_width = b[6];
	p->hll_p = b[7];
	p->flags = b[8];
	p->nslots = b[9];
	p->prefix_log2w = b[10];
	p->prefix_shape = b[11];
	p->spread_log2w = b[12];
	p->spread_shape = b[13];
	p->sample_log2b = b[14];
	p->sample_shift = b[15];
}

/* fs_params_check(), saying which field is wrong. */
static int check_params(const struct fs_sketch_params *p, char *err)
{

	if (p->magic != FS_PARAMS_MAGIC || p->version != FS_PARAMS_VERSION)
		return fail(err, "its parameters record is not one of params.h version %u (magic 0x%08x, version %u)",
			    FS_PARAMS_VERSION, p->magic, p->version);
	if (p->cms_depth < 1 || p->cms_depth > FS_CMS_MAX_DEPTH)
		return fail(err, "Count-Min depth %u is outside 1..%u",
			    p->cms_depth, FS_CMS_MAX_DEPTH);
	if (p->cms_log2_width < FS_CMS_MIN_LOG2W ||
	    p->cms_log2_width > FS_CMS_MAX_LOG2W)
		return fail(err, "Count-Min width 2^%u is outside 2^%u..2^%u",
			    p->cms_log2_width, FS_CMS_MIN_LOG2W, FS_CMS_MAX_LOG2W);
	if (p->hll_p < FS_HLL_MIN_P || p->hll_p > FS_HLL_MAX_P)
		return fail(err, "HyperLogLog precision %u is outside %u..%u",
			    p->hll_p, FS_HLL_MIN_P, FS_HLL_MAX_P);
	if (p->flags & ~FS_PARAM_F_CONSERVATIVE)
		return fail(err, "unknown parameter flags 0x%02x", p->flags);
	if (p->nslots != FS_NSLOTS)
		return fail(err, "nslots is %u, not %u", p->nslots, FS_NSLOTS);
	if (fs_params_check(p))
		return fail(err, "its prefix, spread or sample sizes are out of range (prefix 0x%02x 0x%02x, spread 0x%02x 0x%02x, sample 0x%02x 0x%02x)",
			    p->prefix_log2w, p->prefix_shape, p->spread_log2w,
			    p->spread_shape, p->sample_log2b, p->sample_shift);
	return 0;
}

static int check_candidate(const struct fs_native_candidate *c,
			   const struct fs_sketch_params *p, __u64 i, char *err)
{
	const struct fs_flow_key *k = &c->key;
	__u32 row;

	if (k->family != FS_FAMILY_IPV4 && k->family != FS_FAMILY_IPV6)
		return fail(err, "candidate %llu has address family %u, not 4 or 6",
			    (unsigned long long)i, k->family);
	if (k->pad)
		return fail(err, "candidate %llu has a non-zero pad field",
			    (unsigned long long)i);
	for (row = 0; row < p->cms_depth; row++)
		if (c->cols[row] >> p->cms_log2_width)
			return fail(err, "candidate %llu has column %u in row %u, outside width %u",
				    (unsigned long long)i, c->cols[row], row,
				    1U << p->cms_log2_width);
	return 0;
}

static int check_direction(__u32 dir, char *err)
{
	if (dir < FS_NATIVE_DIR_IN || dir > FS_NATIVE_DIR_BOTH)
		return fail(err, "direction %u is not 1 (in), 2 (out) or 3 (both)",
			    dir);
	return 0;
}

/* Every word within its kind's bound (word_max). */
/* A prefix bucket as the vote leaves one (prefix.h): 0 or a reason. */
static const char *bad_prefix(const struct fs_prefix_bucket *b)
{
	__u32 family, len, i;

	if (!b->tag) {
		for (i = 0; i < sizeof(b->key); i++)
			if (b->key[i])
				return "is empty (tag 0) but names a prefix";
		return b->lead ? "is empty (tag 0) but has a lead" : NULL;
	}
	if (b->tag > 16)
		return "has a tag above 16";
	if (b->lead > b->packets)
		return "leads by more packets than it counted";
	family = fs_prefix_tag_family(b->tag);
	len = fs_prefix_level_len(family, fs_prefix_tag_level(b->tag));
	for (i = len; i < 128; i++)
		if (b->key[i / 8] & (0x80 >> (i % 8)))
			return "names a prefix with bits set past its length";
	return NULL;
}

/* A spread bucket (spread.h): 0 or a reason. */
static const char *bad_spread(const struct fs_spread_bucket *b)
{
	__u32 i;

	if (b->family != 0 && b->family != FS_FAMILY_IPV4 && b->family != FS_FAMILY_IPV6)
		return "has an address family other than 0, 4 and 6";
	for (i = b->family == FS_FAMILY_IPV6 ? 16 : b->family ? 4 : 0; i < 16; i++)
		if (b->key[i])
			return "has address bytes past its family's";
	return !b->family && b->prio ? "is empty (family 0) but has a priority" : NULL;
}

int fs_native_bad_bucket(const struct fs_sketch *s, char *why, size_t len)
{
	__u64 i, n = fs_prefix_buckets_per_slot(&s->params);
	const char *r;

	for (i = 0; i < n; i++)
		if ((r = bad_prefix(&s->prefix[i]))) {
			snprintf(why, len, "prefix bucket %llu %s", (unsigned long long)i, r);
			return -EINVAL;
		}
	n = fs_spread_buckets_per_slot(&s->params);
	for (i = 0; i < n; i++)
		if ((r = bad_spread(&s->spread[i]))) {
			snprintf(why, len, "spread bucket %llu %s", (unsigned long long)i, r);
			return -EINVAL;
		}
	n = fs_params_sample_buckets(&s->params);
	for (i = 0; i < n; i++)
		if ((r = fs_sample_bucket_exported_bad(&s->sample[i], s->params.sample_shift))) {
			snprintf(why, len, "sample bucket %llu's %s", (unsigned long long)i, r);
			return -EINVAL;
		}
	return 0;
}

static int key_cmp(const void *key, const void *cand)
{
	return memcmp(key, &((const struct fs_native_candidate *)cand)->key,
		      sizeof(struct fs_flow_key));
}

const struct fs_native_candidate *fs_native_find(const struct fs_native *n,
						 const struct fs_flow_key *key)
{
	return bsearch(key, n->candidates, n->ncandidates, sizeof(*n->candidates),
		       key_cmp);
}

int fs_native_sample_unlisted(const struct fs_native *n, char *why, size_t len)
{
	const struct fs_sketch *s = &n->sketch;
	__u64 i, nb = fs_params_sample_buckets(&s->params);
	__u32 w;

	for (i = 0; i < nb; i++) {
		const struct fs_sample_bucket *b = &s->sample[i];
		__u64 limit = fs_sample_limit(b, s->params.sample_shift);

		for (w = 0; w < FS_SAMPLE_WAYS; w++)
			if (fs_sample_live(&b->e[w], limit) &&
			    !fs_native_find(n, &b->e[w].key)) {
				snprintf(why, len, "sample bucket %llu holds a flow that is not among its candidates, whose columns it needs",
					 (unsigned long long)i);
				return -EINVAL;
			}
	}
	return 0;
}

static int check_words(const struct fs_sketch *s, char *err)
{
	char bound[64], why[128];
	enum fs_kind k;
	__u64 i, w;

	if (fs_native_bad_bucket(s, why, sizeof(why)))
		return fail(err, "%s", why);
	if (!fs_native_bad_word(s, &k, &i))
		return 0;
	w = fs_kind_word(k, s->part[k], i);
	fs_sketch_kinds[k].say_bound(bound, sizeof(bound), &s->params);
	return fail(err, "%s %llu holds %llu, more than %s allows (%llu)",
		    fs_sketch_kinds[k].noun, (unsigned long long)i,
		    (unsigned long long)w, bound,
		    (unsigned long long)fs_sketch_kinds[k].word_max(&s->params));
}

int fs_native_encode(const struct fs_native *n, void *out, size_t out_len)
{
	const struct fs_sketch_params *p = &n->sketch.params;
	size_t len = fs_native_size(n);
	char err[FS_NATIVE_ERR_MAX];
	__u8 *b = out;
	__u64 i, off;
	int k;

	if (!len || check_params(p, err) || check_direction(n->direction, err) ||
	    n->end_ns < n->start_ns || !n->window_ns ||
	    check_words(&n->sketch, err))
		return -EINVAL;
	for (i = 0; i < n->ncandidates; i++)
		if (check_candidate(&n->candidates[i], p, i, err))
			return -EINVAL;
	if (fs_native_sample_unlisted(n, err, sizeof(err)))
		return -EINVAL;
	if (out_len < len)
		return -ENOSPC;
	memcpy(b, FS_NATIVE_MAGIC, 8);
	put_le32(b + 8, FS_NATIVE_VERSION);
	put_le32(b + 12, n->direction);
	put_params(b + 16, p);
	put_le64(b + 32, n->fingerprint);
	put_le64(b + 40, n->start_ns);
	put_le64(b + 48, n->end_ns);
	put_le64(b + 56, n->window_ns);
	put_le64(b + 64, n->windows);
	put_le64(b + 72, n->sketch.totals.packets);
	put_le64(b + 80, n->sketch.totals.bytes);
	put_le64(b + 88, n->ncandidates);
	off = FS_NATIVE_HEADER;
	for (i = 0; i < n->ncandidates; i++, off += FS_NATIVE_CANDIDATE(p->cms_depth)) {
		__u32 row;

		memcpy(b + off, &n->candidates[i].key, sizeof(struct fs_flow_key));
		for (row = 0; row < p->cms_depth; row++)
			put_le32(b + off + sizeof(struct fs_flow_key) + 4 * row,
				 n->candidates[i].cols[row]);
	}
	for (k = 0; k < FS_NKINDS; k++) {
		put_le64(b + off, fs_sketch_kinds[k].per_slot(p));
		off += 8 + fs_native_put_words(b + off + 8, &n->sketch, k);
	}
	put_le32(b + off, checksum(b, off));
	return 0;
}

/* The parts a file of a format version holds: version 2 was written
 * before the detection sketches, version 3 before the sample (native.h). */
static int fs_native_kinds(__u32 version)
{
	return version == 2 ? FS_KIND_PREFIX : version == 3 ? FS_KIND_SAMPLE : FS_NKINDS;
}

/*
 * The file's structure: every count consistent with the parameters and
 * the length, and the checksum.  *params, *ncand out.
 */
static int check_layout(const __u8 *b, size_t len,
			struct fs_sketch_params *params, __u64 *ncand,
			int *nkinds, char *err)
{
	__u32 version, stored;
	size_t off;
	__u64 n;
	int ret, k;

	if (len < 8)
		return fail(err, "truncated: %zu bytes, not even the 8-byte magic", len);
	if (memcmp(b, FS_NATIVE_MAGIC, 8))
		return fail(err, "not a flowsketch export (it does not start with \"%s\")",
			    FS_NATIVE_MAGIC);
	if (len < 12)
		return fail(err, "truncated: %zu bytes, ends in the format version", len);
	version = get_le32(b + 8);
	if (version == 1)
		return fail(err, "format version 1, which carried raw keyed flow hashes (they give the hash key away) and cannot be read without the secret: export it again with this flowsketch");
	if (version < 2 || version > FS_NATIVE_VERSION)
		return fail(err, "format version %u, and this flowsketch reads versions 2 to %u only",
			    version, FS_NATIVE_VERSION);
	*nkinds = fs_native_kinds(version);
	if (len < FS_NATIVE_HEADER)
		return fail(err, "truncated: %zu bytes, shorter than the %u-byte header",
			    len, FS_NATIVE_HEADER);
	ret = check_direction(get_le32(b + 12), err);
	if (ret)
		return ret;
	get_params(b + 16, params);
	ret = check_params(params, err);
	if (ret)
		return ret;
	if (*nkinds <= FS_KIND_PREFIX && (params->prefix_log2w || params->spread_log2w))
		return fail(err, "format version %u has no room for its prefix or spread sketch", version);
	if (*nkinds <= FS_KIND_SAMPLE && params->sample_log2b)
		return fail(err, "format version %u has no room for its keyed sample", version);
	if (get_le64(b + 48) < get_le64(b + 40))
		return fail(err, "the span ends (%llu ns) before it starts (%llu ns)",
			    (unsigned long long)get_le64(b + 48),
			    (unsigned long long)get_le64(b + 40));
	if (!get_le64(b + 56))
		return fail(err, "its window length is 0");
	*ncand = get_le64(b + 88);
	off = FS_NATIVE_HEADER;
	if (*ncand > (len - off) / FS_NATIVE_CANDIDATE(params->cms_depth))
		return fail(err, "truncated: %llu candidates take %llu bytes, and only %zu follow the header",
			    (unsigned long long)*ncand,
			    (unsigned long long)*ncand * FS_NATIVE_CANDIDATE(params->cms_depth),
			    len - off);
	off += *ncand * FS_NATIVE_CANDIDATE(params->cms_depth);
	for (k = 0; k < *nkinds; k++) {
		const struct fs_sketch_kind *d = &fs_sketch_kinds[k];

		if (len - off < 8)
			return fail(err, "truncated: it ends before its count of %ss (byte %zu)",
				    d->noun, off);
		n = get_le64(b + off);
		if (n != d->per_slot(params))
			return wrong_count(k, params, n, err);
		off += 8;
		if ((len - off) / d->elem_bytes < n)
			return short_part(k, n, len - off, err);
		off += n * d->elem_bytes;
	}
	if (len - off < FS_NATIVE_TRAILER)
		return fail(err, "truncated: it ends before its checksum (byte %zu)", off);
	if (len - off > FS_NATIVE_TRAILER)
		return fail(err, "%zu bytes follow the end of the export",
			    len - off - FS_NATIVE_TRAILER);
	stored = get_le32(b + off);
	if (stored != checksum(b, off))
		return fail(err, "its checksum is %08x, and its content sums to %08x: the file is damaged",
			    stored, checksum(b, off));
	return 0;
}

int fs_native_decode(const void *buf, size_t len, struct fs_native *n,
		     char err[FS_NATIVE_ERR_MAX])
{
	struct fs_sketch_params params;
	const __u8 *b = buf;
	__u64 ncand = 0, i, off;
	int ret, k, nkinds = 0;
	char why[160];

	memset(n, 0, sizeof(*n));
	ret = check_layout(b, len, &params, &ncand, &nkinds, err);
	if (ret)
		return ret;
	ret = fs_native_init(n, &params, ncand);
	if (ret) {
		snprintf(err, FS_NATIVE_ERR_MAX, "out of memory");
		return ret;
	}
	n->direction = get_le32(b + 12);
	n->fingerprint = get_le64(b + 32);
	n->start_ns = get_le64(b + 40);
	n->end_ns = get_le64(b + 48);
	n->window_ns = get_le64(b + 56);
	n->windows = get_le64(b + 64);
	n->sketch.totals.packets = get_le64(b + 72);
	n->sketch.totals.bytes = get_le64(b + 80);
	off = FS_NATIVE_HEADER;
	for (i = 0; i < ncand; i++, off += FS_NATIVE_CANDIDATE(params.cms_depth)) {
		struct fs_native_candidate *c = &n->candidates[i];
		__u32 row;

		memcpy(&c->key, b + off, sizeof(c->key));
		for (row = 0; row < params.cms_depth; row++)
			c->cols[row] = get_le32(b + off + sizeof(c->key) + 4 * row);
		ret = check_candidate(c, &params, i, err);
		/* In ascending order of their bytes, as the layout says, and
		 * so each once: a reader (pgsql.c's primary key, a merge's
		 * union) may count on it. */
		if (!ret && i && memcmp(&n->candidates[i - 1].key, &c->key,
				       sizeof(c->key)) >= 0)
			ret = fail(err, "candidate %llu is not after candidate %llu (keys ascending, each once)",
				   (unsigned long long)i, (unsigned long long)(i - 1));
		if (ret)
			goto err_free;
	}
	for (k = 0; k < nkinds; k++)
		off += 8 + fs_native_get_words(b + off + 8, &n->sketch, k);
	ret = check_words(&n->sketch, err);
	if (!ret && fs_native_sample_unlisted(n, why, sizeof(why)))
		ret = fail(err, "%s", why);
	if (ret)
		goto err_free;
	return 0;

err_free:
	fs_native_free(n);
	return ret;
}

int fs_native_read_fd(int fd, size_t max, struct fs_native *n,
		      char err[FS_NATIVE_ERR_MAX])
{
	size_t len = 0, cap;
	__u8 *buf = NULL;
	struct stat st;
	int ret;

	memset(n, 0, sizeof(*n));
	if (fstat(fd, &st)) {
		ret = -errno;
		snprintf(err, FS_NATIVE_ERR_MAX, "cannot be read: %s", strerror(-ret));
		return ret;
	}
	/* Refused by its size, before a byte is allocated or read. */
	if (S_ISREG(st.st_mode) && (unsigned long long)st.st_size > max) {
		snprintf(err, FS_NATIVE_ERR_MAX, "is %llu bytes, more than the %zu an export can be",
			 (unsigned long long)st.st_size, max);
		return -EFBIG;
	}
	/*
	 * A regular file's size, else (a pipe) grown as it comes; either way
	 * never more than max + 1 bytes, the one more telling a file that
	 * grew while read (or a pipe that goes on) from one of max bytes.
	 */
	cap = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1 : 1 << 20;
	if (cap > max + 1)
		cap = max + 1;
	for (;;) {
		ssize_t got;

		if (len == cap && cap > max)
			break;	/* max + 1 bytes: too many, said below */
		if (len == cap || !buf) {
			size_t want = len < cap ? cap : cap > (max + 1) / 2 ? max + 1 : cap * 2;
			__u8 *bigger = realloc(buf, want);

			if (!bigger) {
				ret = -ENOMEM;
				snprintf(err, FS_NATIVE_ERR_MAX, "out of memory");
				goto out;
			}
			buf = bigger;
			cap = want;
		}
		got = read(fd, buf + len, cap - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			ret = -errno;
			snprintf(err, FS_NATIVE_ERR_MAX, "cannot be read: %s",
				 strerror(-ret));
			goto out;
		}
		if (!got)
			break;
		len += (size_t)got;
	}
	if (len > max) {
		ret = -EFBIG;
		snprintf(err, FS_NATIVE_ERR_MAX, "is more than the %zu bytes an export can be (it grew while read, or is not a file)",
			 max);
		goto out;
	}
	ret = fs_native_decode(buf, len, n, err);
out:
	free(buf);
	return ret;
}

int fs_native_read_file(const char *path, struct fs_native *n,
			char err[FS_NATIVE_ERR_MAX])
{
	int fd, ret;

	memset(n, 0, sizeof(*n));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, FS_NATIVE_ERR_MAX, "cannot be read: %s", strerror(-ret));
		return ret;
	}
	ret = fs_native_read_fd(fd, FS_NATIVE_MAX_BYTES, n, err);
	close(fd);
	return ret;
}
