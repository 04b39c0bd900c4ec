// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_hash.bpf.c - the shared keyed hash, run by the BPF target, for
 * tests/unit/test_bpf_hash.c.
 *
 * Each program reads a key from the start of the packet, hashes it with
 * the secret in .rodata and writes the 8-byte hash over the start of the
 * packet, where BPF_PROG_TEST_RUN's data_out returns it.  Comparing that
 * with the user-space build of the same hash.h catches any difference in
 * how clang -target bpf compiles it (byte order, shifts, unrolling).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "flowsketch/hash.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile struct fs_hash_secret fs_test_secret;

SEC("xdp")
int fs_test_flow_hash(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct fs_hash_secret secret = {
		.k0 = fs_test_secret.k0,
		.k1 = fs_test_secret.k1,
	};
	struct fs_flow_key key;
	__u64 h;

	if (data + sizeof(key) > data_end)
		return XDP_ABORTED;
	__builtin_memcpy(&key, data, sizeof(key));
	h = fs_flow_hash(&key, &secret);
	__builtin_memcpy(data, &h, sizeof(h));
	return XDP_PASS;
}

SEC("xdp")
int fs_test_addr_hash(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct fs_hash_secret secret = {
		.k0 = fs_test_secret.k0,
		.k1 = fs_test_secret.k1,
	};
	struct fs_addr_key key;
	__u64 h;

	if (data + sizeof(key) > data_end)
		return XDP_ABORTED;
	__builtin_memcpy(&key, data, sizeof(key));
	h = fs_addr_hash(&key, &secret);
	__builtin_memcpy(data, &h, sizeof(h));
	return XDP_PASS;
}
