/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * base64.h - RFC 4648 base64 (section 4: "+/" alphabet, "=" padding).
 *
 * The daemon's export answer carries a span's summed sketch, binary, in a
 * JSON string (protocol.h); JSON has no bytes type, and base64 costs a
 * third more where hex would cost double.  Decoding is strict, so that
 * one sketch has one text: padding is required, nothing outside the
 * alphabet is taken (no white space, no line breaks, no URL-safe "-_"),
 * and the unused low bits of the last character must be zero (RFC 4648
 * section 3.5 allows a decoder to refuse them otherwise).
 */
#ifndef FLOWSKETCH_BASE64_H
#define FLOWSKETCH_BASE64_H

#include <stddef.h>

/* Characters fs_base64_encode() writes for n bytes (no terminating NUL). */
static inline size_t fs_base64_encoded_len(size_t n)
{
	return (n + 2) / 3 * 4;
}

/* Bytes text of len characters decodes to at most (the exact count for
 * valid text once padding is taken off: see fs_base64_decode()). */
static inline size_t fs_base64_decoded_max(size_t len)
{
	return len / 4 * 3;
}

/* Encode n bytes of in into out (fs_base64_encoded_len(n) characters,
 * no NUL written). */
void fs_base64_encode(const void *in, size_t n, char *out);

/*
 * Decode len characters into out (room for fs_base64_decoded_max(len)):
 * 0 with *n_out the bytes written, or -EINVAL for text that is not
 * canonical base64 (length not a multiple of 4, a character outside the
 * alphabet, padding anywhere but at the end, non-zero unused bits).
 */
int fs_base64_decode(const char *in, size_t len, void *out, size_t *n_out);

#endif /* FLOWSKETCH_BASE64_H */
