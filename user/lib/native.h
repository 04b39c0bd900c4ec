/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * native.h - a span's sketches in one portable file (`flowsketch export
 * --format native`), for `flowsketch merge` on any machine.
 *
 * One host's span, self-described: its parameters (never the secret, only
 * its fingerprint, which is what tells two hosts' sketches apart), the
 * exact time it covers, its totals, its heavy-hitter candidates and the
 * summed sketches, so that files of many hosts merge into the sketch of
 * their union (sketch.h: cells add, registers take the max) and answer
 * top and flows as one daemon would.  Cells and registers are in the
 * secret coordinates of export_perm.h (each row's columns and each
 * HyperLogLog's registers through a permutation the secret fixes), and
 * each candidate carries its column in every row in those coordinates,
 * with which the merged Count-Min sketch is queried: a reader needs no
 * secret, and no keyed hash output leaves the host (hash.h, "What leaves
 * the host").
 *
 * File layout, format version 4, every integer little-endian whatever
 * the host, no padding, no alignment:
 *
 *   off    size  field
 *     0       8  magic "FSEXPORT"
 *     8       4  format version (3)
 *    12       4  direction: 1 what the interfaces received ("in"), 2 what
 *                they sent ("out"), 3 both (cells and totals added,
 *                registers the max: the union)
 *    16      16  the parameters record of params.h without its secret:
 *                its bytes 0..15 (magic "FSK1", version 1, Count-Min
 *                depth, log2 width, HyperLogLog precision p, flags,
 *                nslots, the prefix and spread sketches' sizes (0: off),
 *                the keyed sample's log2 buckets (0: off) and rate shift)
 *    32       8  fingerprint of the secret (fs_params_fingerprint())
 *    40       8  span start, wall clock, ns since the Unix epoch (UTC)
 *    48       8  span end, same clock, >= start
 *    56       8  window length, ns
 *    64       8  windows summed
 *    72       8  total packets of the span
 *    80       8  total bytes of the span
 *    88       8  candidates N
 *    96     KN  candidates, K = 40 + 4 depth, in ascending order of their
 *                key's bytes, each a flow key (40 bytes, flow_key.h's
 *                layout: ports in network order) and its exported column
 *                in rows 0 .. depth - 1 (4 each, < 2^log2w): the heavy
 *                hitters' candidates and every flow of the sample
 *     A       8  Count-Min cells C, A = 96 + KN; C = depth << log2w
 *   A+8     16C  cells, row-major ((row << log2w) | exported column):
 *                packets (8), bytes (8)
 *     B       8  HyperLogLog registers R, B = A + 8 + 16C; R = 3 << p
 *   B+8       R  registers, one byte each, 1 .. 65 - p or 0: distinct
 *                flows, sources, destinations, 2^p each (hll.h), each
 *                sketch's in its exported order
 *     D       8  prefix buckets P, D = B + 8 + R; P = depth << log2w of
 *                the prefix sketch, 0 when it is off
 *   D+8     64P  buckets (struct fs_prefix_bucket, prefix.h), as 8
 *                little-endian words each, rows in their exported order
 *     E       8  spread buckets S, E = D + 8 + 64P; 2 sides x depth <<
 *                log2w, 0 when off
 *   E+8     64S  buckets (struct fs_spread_bucket, spread.h), the same way
 *     F       8  sample buckets Q, F = E + 8 + 64S; 2^b, 0 when off
 *   F+8    512Q  buckets (struct fs_sample_bucket, sample.h) as exported
 *                (sample.h, "Exports": limits and values cut to their
 *                leading bit), as 64 little-endian words each, in their
 *                exported order
 *   F+8+512Q  4  CRC-32 (zlib's crc32(), the ISO-HDLC polynomial) of
 *                every byte before it
 *
 * From A to the checksum are the parts, one a sketch kind in
 * sketch_kind.h's order, each its count and its elements as little-endian
 * words: a new kind adds its part here, and so a new format version.  So
 * a file is 96 + KN + 8 + 16C + 8 + R + 8 + 64P + 8 + 64S + 8 + 512Q + 4
 * bytes: 376,972 for d = 5, w = 4096, p = 14 with no candidate, no
 * detection sketch and no sample, and 442,508 with the default sample
 * (128 buckets) and its flows' candidates on top.  Version 2, the same
 * without D, E and F (written before the detection sketches), and
 * version 3, without F (before the sample), are read as files of those
 * parts off.  A reader refuses,
 * each with one sentence saying what it found: another magic, a format
 * version it does not know, parameters out of range, a direction it does
 * not know, an end before the start, a candidate of no address family,
 * counts of cells or registers other than the parameters make, a register
 * above its precision's largest rank, a file shorter than its counts say
 * (truncated) or longer (bytes after the end), a candidate's column
 * outside the width, a prefix or spread bucket no update leaves (a vote
 * leading by more than it counted, a tag or family out of range, bits
 * past a prefix or an address), a sample bucket no export leaves (a
 * limit or a value of more than one bit, a flow twice) or holding a flow
 * that is not a candidate (its columns are the candidate's), and a
 * checksum that does not match.  Version 1 (each
 * candidate's raw 64-bit flow hash, cells and registers in the datapath's
 * order) is refused with a sentence saying why: its hashes gave away the
 * key, and its cells cannot be moved into version 2's coordinates without
 * the secret; re-export from the daemons.
 */
#ifndef FLOWSKETCH_NATIVE_H
#define FLOWSKETCH_NATIVE_H

#include <stdbool.h>
#include <stddef.h>
#include "sketch.h"
#include "flowsketch/flow_key.h"

#define FS_NATIVE_MAGIC "FSEXPORT"
#define FS_NATIVE_VERSION 4
#define FS_NATIVE_HEADER 96
/* A candidate's bytes: its key and one 4-byte column per row. */
#define FS_NATIVE_CANDIDATE(depth) (40 + 4 * (depth))
#define FS_NATIVE_TRAILER 4

#define FS_NATIVE_DIR_IN 1
#define FS_NATIVE_DIR_OUT 2
#define FS_NATIVE_DIR_BOTH 3

/* No file of any parameters is larger: 8 << 22 cells of 16 bytes (512
 * MiB), 3 << 18 registers and a million candidates fit well below. */
#define FS_NATIVE_MAX_BYTES (1ULL << 30)

/* Room for any message of the decoder (a file name is not part of it). */
#define FS_NATIVE_ERR_MAX 256

struct fs_native_candidate {
	struct fs_flow_key key;
	__u32 cols[FS_CMS_MAX_DEPTH];	/* exported columns, rows 0 .. depth */
};

/* A decoded file, or what an encoder is given. */
struct fs_native {
	/* params (secret zero), cells, registers, totals */
	struct fs_sketch sketch;
	__u64 fingerprint;
	__u64 start_ns, end_ns;		/* wall clock, ns since the epoch */
	__u64 window_ns;
	__u64 windows;
	__u32 direction;		/* FS_NATIVE_DIR_* */
	__u64 ncandidates;
	struct fs_native_candidate *candidates;
};

/*
 * An empty export of these parameters (secret zeroed here) with room for
 * ncandidates: 0, -EINVAL (parameters out of range) or -ENOMEM.
 */
int fs_native_init(struct fs_native *n, const struct fs_sketch_params *p,
		   __u64 ncandidates);
void fs_native_free(struct fs_native *n);

/* Sort the candidates into the file's order (ascending key bytes). */
void fs_native_sort(struct fs_native *n);

/*
 * Kind k's part of s as little-endian words at b (sketch_kind.h: the
 * native file's parts, each after its count, and an export answer's
 * sketch.data, kind after kind), and back; the bytes either way.
 */
__u64 fs_native_put_words(__u8 *b, const struct fs_sketch *s, enum fs_kind k);
__u64 fs_native_get_words(const __u8 *b, struct fs_sketch *s, enum fs_kind k);

/* The first word of s above its kind's word_max (a register above its
 * precision's largest rank): true, kind *k, index *i in its part. */
bool fs_native_bad_word(const struct fs_sketch *s, enum fs_kind *k, __u64 *i);
/* A detection sketch's bucket no update or merge leaves (a vote leading by
 * more than it counted, a family of no address, bytes past a prefix):
 * -EINVAL with why naming the bucket, else 0. */
int fs_native_bad_bucket(const struct fs_sketch *s, char *why, size_t len);

/* The candidate of key in n (sorted, fs_native_sort()), or NULL. */
const struct fs_native_candidate *fs_native_find(const struct fs_native *n,
						 const struct fs_flow_key *key);

/* A live flow of n's sample that is not among n's candidates (sorted):
 * -EINVAL with why naming its bucket, else 0. */
int fs_native_sample_unlisted(const struct fs_native *n, char *why, size_t len);

/* Bytes of n's file; 0 if it could not be represented in a size_t. */
size_t fs_native_size(const struct fs_native *n);

/* Write n's file into out (fs_native_size(n) bytes): 0, -ENOSPC when
 * out_len is short, -EINVAL when n is not one a reader would take. */
int fs_native_encode(const struct fs_native *n, void *out, size_t out_len);

/*
 * Read a file: 0 with *n filled (fs_native_free() it), or -EINVAL with
 * err holding one sentence saying what is wrong, or -ENOMEM.  Nothing to
 * free on failure.
 */
int fs_native_decode(const void *buf, size_t len, struct fs_native *n,
		     char err[FS_NATIVE_ERR_MAX]);

/* fs_native_decode() of the file at path; -errno from reading it, with
 * err saying so; -EFBIG for one over FS_NATIVE_MAX_BYTES. */
int fs_native_read_file(const char *path, struct fs_native *n,
			char err[FS_NATIVE_ERR_MAX]);

/* The same of an open file (or pipe) fd of at most max bytes: a regular
 * file larger is refused by its size before anything is allocated, and no
 * more than max + 1 bytes are ever held, however much the file grows
 * while read.  The caller closes fd. */
int fs_native_read_fd(int fd, size_t max, struct fs_native *n,
		      char err[FS_NATIVE_ERR_MAX]);

#endif /* FLOWSKETCH_NATIVE_H */
