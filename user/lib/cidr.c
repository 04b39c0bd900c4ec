// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* cidr.c - CIDR text and filter keys of blocklist entries (cidr.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <bpf/libbpf.h>
#include "cidr.h"

/* The prefix length after '/': 1 to 3 decimal digits, nothing else. */
static int parse_len(const char *s, unsigned int max, unsigned int *len,
		     const char **why)
{
	unsigned int v = 0;
	size_t i, n = strlen(s);

	if (!n) {
		*why = "empty prefix length after '/'";
		return -EINVAL;
	}
	if (n > 3) {
		*why = max == 32 ? "prefix length above 32" : "prefix length above 128";
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9') {
			*why = "prefix length is not a decimal number";
			return -EINVAL;
		}
		v = v * 10 + (unsigned int)(s[i] - '0');
	}
	if (v > max) {
		*why = max == 32 ? "prefix length above 32" : "prefix length above 128";
		return -EINVAL;
	}
	*len = v;
	return 0;
}

static int host_bits_clear(const __u8 *addr, unsigned int len, unsigned int bytes)
{
	unsigned int i;

	for (i = 0; i < bytes; i++) {
		unsigned int first = i * 8;
		__u8 mask;

		if (len >= first + 8)
			continue;
		mask = len <= first ? 0xff : (__u8)(0xff >> (len - first));
		if (addr[i] & mask)
			return 0;
	}
	return 1;
}

int fs_cidr_parse(const char *s, struct fs_cidr *c, const char **why)
{
	char buf[FS_CIDR_TEXT_MAX];
	const char *slash;
	unsigned int len, max;
	size_t n;

	memset(c, 0, sizeof(*c));
	if (!s || !*s) {
		*why = "empty";
		return -EINVAL;
	}
	slash = strchr(s, '/');
	n = slash ? (size_t)(slash - s) : strlen(s);
	if (n == 0) {
		*why = "no address before '/'";
		return -EINVAL;
	}
	if (n >= sizeof(buf)) {
		*why = "not an IPv4 or IPv6 address";
		return -EINVAL;
	}
	memcpy(buf, s, n);
	buf[n] = 0;
	if (inet_pton(AF_INET, buf, c->addr) == 1) {
		c->family = FS_FAMILY_IPV4;
		max = 32;
	} else if (strchr(buf, ':') && inet_pton(AF_INET6, buf, c->addr) == 1) {
		c->family = FS_FAMILY_IPV6;
		max = 128;
	} else {
		*why = "not an IPv4 or IPv6 address";
		return -EINVAL;
	}
	len = max;
	if (slash && parse_len(slash + 1, max, &len, why))
		return -EINVAL;
	if (!host_bits_clear(c->addr, len, max / 8)) {
		*why = "host bits set (the address has bits beyond the prefix length)";
		return -EINVAL;
	}
	c->len = (__u8)len;
	return 0;
}

void fs_cidr_format(const struct fs_cidr *c, char *buf, size_t n)
{
	char a[INET6_ADDRSTRLEN];

	if (!inet_ntop(c->family == FS_FAMILY_IPV4 ? AF_INET : AF_INET6,
		       c->addr, a, sizeof(a)))
		snprintf(a, sizeof(a), "?");
	snprintf(buf, n, "%s/%u", a, c->len);
}

int fs_cidr_covers(const struct fs_cidr *c, __u32 family, const __u8 *addr)
{
	unsigned int full = c->len / 8, rest = c->len % 8;

	if (c->family != family)
		return 0;
	if (memcmp(c->addr, addr, full))
		return 0;
	if (rest && ((c->addr[full] ^ addr[full]) & (__u8)(0xff << (8 - rest))))
		return 0;
	return 1;
}

int fs_cidr_equal(const struct fs_cidr *a, const struct fs_cidr *b)
{
	return a->family == b->family && a->len == b->len &&
	       !memcmp(a->addr, b->addr, sizeof(a->addr));
}

int fs_cidr_group(const struct fs_cidr *c, __u64 *keys)
{
	return fs_bloom_group_of(c->family, c->len, keys);
}

__u32 fs_cidr_summary_bit(const struct fs_cidr *c)
{
	__u64 keys;
	int g = fs_cidr_group(c, &keys);

	return g < 0 ? 0 : 1U << g;
}

/* The hash of one key: addr (network order) in filter group b. */
static __u64 key_hash(const struct fs_bloom_key *key, __u32 family, __u32 b,
		      const __u8 *addr)
{
	__u32 x[4];

	memcpy(x, addr, sizeof(x));
	if (family == FS_FAMILY_IPV4)
		return fs_bloom_hash4(key, b, x[0]);
	return fs_bloom_hash6(key, b, x);
}

int fs_cidr_key_addr(const struct fs_cidr *c, __u64 i, __u8 out[16])
{
	__u64 keys;
	int g = fs_cidr_group(c, &keys);
	__u32 end, b, n;

	memcpy(out, c->addr, 16);
	if (g < 0 || keys <= 1)
		return g;
	/* Bits len .. end - 1 spell i, most significant first (at most 16
	 * of them: the cover group's /0). */
	end = g ? fs_bloom_key_len((__u32)g) : FS_BLOOM_SUMMARY_LEN;
	for (b = c->len, n = end - c->len; b < end; b++) {
		n--;
		if ((i >> n) & 1)
			out[b / 8] |= (__u8)(0x80 >> (b % 8));
	}
	return g;
}

__u64 fs_cidr_key_hash(const struct fs_bloom_key *key, const struct fs_cidr *c,
		       __u64 i)
{
	__u8 a[16];
	int g = fs_cidr_key_addr(c, i, a);

	return key_hash(key, c->family, g > 0 ? (__u32)g : 1, a);
}

__u64 fs_cidr_filter_keys(const struct fs_cidr *c)
{
	__u64 keys;

	if (fs_cidr_group(c, &keys) <= 0)
		return 0;
	return keys;
}

void fs_cidr_filter_add(const struct fs_bloom_key *key, const struct fs_cidr *c,
			struct fs_bloom_block *blocks, __u32 log2_blocks, __u32 k)
{
	__u64 keys = fs_cidr_filter_keys(c), i;

	for (i = 0; i < keys; i++) {
		__u64 h = fs_cidr_key_hash(key, c, i);

		fs_bloom_block_set(&blocks[fs_bloom_block_index(h, log2_blocks)], h, k);
	}
}

void fs_cidr_summary_set(struct fs_block_summary *s, const struct fs_cidr *c)
{
	__u64 keys, i, n;
	int g = fs_cidr_group(c, &keys);
	__u8 a[16];

	if (g < 0)
		return;
	/* A filter group's entry marks its own /16 once; a cover entry
	 * every /16 under it. */
	n = g ? 1 : keys;
	for (i = 0; i < n; i++) {
		__u32 idx;

		fs_cidr_key_addr(c, i, a);
		idx = fs_block_summary_index(a);
		if (c->family == FS_FAMILY_IPV4)
			__atomic_fetch_or(&s->v4[idx], (__u8)(1U << g), __ATOMIC_RELAXED);
		else
			__atomic_fetch_or(&s->v6[idx], 1U << g, __ATOMIC_RELAXED);
	}
}

int fs_bfilter_size(struct bpf_map *m, __u32 *rodata_mask, unsigned int log2_blocks)
{
	__u64 blocks = 2ULL << log2_blocks;

	if (log2_blocks > FS_BLOOM_MAX_LOG2_BLOCKS)
		return -E2BIG;
	*rodata_mask = (__u32)(blocks - 1);
	return bpf_map__set_value_size(m, (__u32)(blocks * sizeof(struct fs_bloom_block)));
}

void fs_cidr_trie_key4(const struct fs_cidr *c, struct fs_block_key4 *k)
{
	memset(k, 0, sizeof(*k));
	k->prefixlen = c->len;
	memcpy(k->addr, c->addr, sizeof(k->addr));
}

void fs_cidr_trie_key6(const struct fs_cidr *c, struct fs_block_key6 *k)
{
	memset(k, 0, sizeof(*k));
	k->prefixlen = c->len;
	memcpy(k->addr, c->addr, sizeof(k->addr));
}

int fs_cidr_cmp(const void *a, const void *b)
{
	const struct fs_cidr *x = a, *y = b;

	if (x->family != y->family)
		return x->family - y->family;
	if (x->len != y->len)
		return x->len - y->len;
	return memcmp(x->addr, y->addr, sizeof(x->addr));
}

size_t fs_cidr_sort_unique(struct fs_cidr *c, size_t n)
{
	size_t i, u = 0;

	if (!n)
		return 0;
	qsort(c, n, sizeof(*c), fs_cidr_cmp);
	for (i = 0; i < n; i++)
		if (!u || fs_cidr_cmp(&c[u - 1], &c[i]))
			c[u++] = c[i];
	return u;
}

/*
 * One line of a list file into line (FS_CIDR_LINE_MAX + 2 bytes), its
 * comment and surrounding blanks cut: *entry the text left (empty for a
 * blank or comment line).  Fixed-size reads: a line longer than the limit
 * is refused after FS_CIDR_LINE_MAX bytes, not read into memory first.
 * 1: a line; 0: the end of the file; -EINVAL with msg.
 */
static int list_line(FILE *f, char *line, size_t size, const char *path,
		     size_t line_no, char **entry, char *msg, size_t msg_len)
{
	size_t len;
	char *s = line, *hash;

	if (!fgets(line, (int)size, f))
		return 0;
	len = strlen(line);
	/* fgets stops at a NUL only in the sense that strlen does: the
	 * bytes it read up to the newline are len or more. */
	if (len + 1 < size && !feof(f) && line[len - (len > 0)] != '\n') {
		snprintf(msg, msg_len, "%s:%zu: the line holds a NUL byte (not a text file?)",
			 path, line_no);
		return -EINVAL;
	}
	if (len && line[len - 1] == '\n')
		line[--len] = 0;
	else if (!feof(f))
		len = FS_CIDR_LINE_MAX + 1;	/* cut short by the buffer */
	if (len > FS_CIDR_LINE_MAX) {
		snprintf(msg, msg_len, "%s:%zu: line longer than %d bytes",
			 path, line_no, FS_CIDR_LINE_MAX);
		return -EINVAL;
	}
	hash = strchr(s, '#');
	if (hash)
		*hash = 0;
	while (*s == ' ' || *s == '\t')
		s++;
	len = strlen(s);
	while (len && strchr(" \t\r", s[len - 1]))
		s[--len] = 0;
	*entry = s;
	return 1;
}

/*
 * A list flowsketchd wrote (blockfile.h) has fields after each CIDR:
 * added=T, expires=T, by RULE.  They are cut off s here, and checked to
 * be of that grammar, so that a typo after a CIDR is not taken for one;
 * what they say is not kept (the entries loaded are manual and for good).
 */
static int list_fields(char *s, const char **why)
{
	char *p = s + strcspn(s, " \t"), *tok, *save = NULL;

	if (!*p)
		return 0;
	*p++ = 0;
	while ((tok = strtok_r(p, " \t", &save))) {
		p = NULL;
		if (!strcmp(tok, "by"))
			return 0;
		if ((strncmp(tok, "added=", 6) && strncmp(tok, "expires=", 8)) ||
		    !tok[strcspn(tok, "=") + 1] ||
		    strspn(tok + strcspn(tok, "=") + 1, "0123456789") !=
		    strlen(tok + strcspn(tok, "=") + 1)) {
			*why = "after the CIDR, only a list flowsketchd wrote has fields: added=T, expires=T, by RULE";
			return -EINVAL;
		}
	}
	return 0;
}

int fs_cidr_list_parse(FILE *f, const char *path, unsigned int max,
		       struct fs_cidr **out, size_t *n, char *msg, size_t msg_len)
{
	/* A read that stops short of the end is an error, never a shorter
	 * list. */
	char line[FS_CIDR_LINE_MAX + 2];
	struct fs_cidr *c = NULL;
	size_t cap = 0, count = 0, line_no = 0;
	const size_t limit = 2 * (size_t)max + 2;	/* entries buffered */
	int err = 0, got;
	char *s;

	*out = NULL;
	*n = 0;
	while ((got = list_line(f, line, sizeof(line), path, line_no + 1, &s,
				msg, msg_len)) != 0) {
		const char *why;

		line_no++;
		if (got < 0) {
			err = got;
			break;
		}
		if (!*s)
			continue;
		if (count == cap && cap == limit) {
			/* Repeats do not count against max: squeeze them out
			 * when the buffer (twice max) is full.  Each squeeze
			 * that does not fail leaves at least max slots free,
			 * so there is one sort per max lines at most:
			 * O(L log max) for L lines, not a sort per line. */
			count = fs_cidr_sort_unique(c, count);
			if (count > max) {
				snprintf(msg, msg_len, "%s:%zu: more than %u entries (the blocklist's maximum)",
					 path, line_no, max);
				err = -E2BIG;
				break;
			}
		}
		if (count == cap) {
			struct fs_cidr *grown;

			cap = cap ? cap * 2 : 256;
			if (cap > limit)
				cap = limit;
			grown = realloc(c, cap * sizeof(*c));
			if (!grown) {
				err = -ENOMEM;
				snprintf(msg, msg_len, "%s: out of memory", path);
				break;
			}
			c = grown;
		}
		if (list_fields(s, &why)) {
			snprintf(msg, msg_len, "%s:%zu: %s", path, line_no, why);
			err = -EINVAL;
			break;
		}
		if (fs_cidr_parse(s, &c[count], &why)) {
			snprintf(msg, msg_len, "%s:%zu: \"%.64s\": %s", path, line_no, s, why);
			err = -EINVAL;
			break;
		}
		count++;
	}
	if (!err && (ferror(f) || !feof(f))) {
		err = -EIO;
		snprintf(msg, msg_len, "%s: read error after line %zu", path, line_no);
	}
	if (err) {
		free(c);
		return err;
	}
	count = fs_cidr_sort_unique(c, count);
	if (count > max) {
		snprintf(msg, msg_len, "%s:%zu: more than %u entries (the blocklist's maximum)",
			 path, line_no, max);
		free(c);
		return -E2BIG;
	}
	*out = c;
	*n = count;
	return 0;
}

