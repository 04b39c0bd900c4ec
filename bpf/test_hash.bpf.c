// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_hash.bpf.c - the shared per-packet hash, run by the BPF target, for
 * tests/unit/test_bpf_hash.c.
 *
 * The program reads a flow key from the start of the packet, hashes it
 * with the key in .rodata (fs_packet_hash(): flow, source and destination
 * hashes) and writes the three 8-byte hashes over the start of the packet,
 * where BPF_PROG_TEST_RUN's data_out returns them.  Comparing them with
 * the user-space build of the same hash.h catches any difference in how
 * clang -target bpf compiles it (byte order, shifts, unrolling).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "flowsketch/hash.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Not const: a const object's loads could be folded into its (zero)
 * initializer; see bpf/maps.bpf.h. */
volatile struct fs_hash_key fs_test_key SEC(".rodata");

SEC("xdp")
int fs_test_packet_hash(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct fs_packet_hashes h;
	struct fs_flow_key key;

	if (data + sizeof(key) > data_end)
		return XDP_ABORTED;
	__builtin_memcpy(&key, data, sizeof(key));
	fs_packet_hash(&key, (const struct fs_hash_key *)&fs_test_key, &h);
	__builtin_memcpy(data, &h, sizeof(h));
	return XDP_PASS;
}
