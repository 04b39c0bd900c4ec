// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * fs-ref-hash - the keyed hashes of flows, from the secret file, by the
 * tests' reference (tests/unit/ref_hash.h: written from the formula, not
 * from hash.h's code), for attacker-model checks of exports
 * (tests/integration/fleet.sh): what an export must never contain.
 *
 *   fs-ref-hash SECRET_FILE DEPTH LOG2W <FLOWS
 *
 * FLOWS: one flow a line, "SRC DST SPORT DPORT PROTO" (addresses IPv4 or
 * IPv6, ports and protocol in decimal, ICMP's type << 8 | code as dport).
 * Each gets one line: its flow, source and destination hashes (16 hex
 * digits each), then its raw Count-Min column in rows 0 .. DEPTH - 1 by
 * cms.h's documented rule (row r: bits [k log2w, (k + 1) log2w) of word
 * r / K, K = floor(64 / log2w), word 0 the hash, word j fmix64(hash + j
 * golden)), then its raw HyperLogLog index at precision 14 (hll.h: the
 * low 14 bits).
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../tests/unit/ref_hash.h"

static int read_secret(const char *path, struct fs_hash_secret *s)
{
	unsigned char b[17];
	FILE *f = fopen(path, "rb");
	size_t n;
	int i;

	if (!f)
		return -1;
	n = fread(b, 1, sizeof(b), f);
	fclose(f);
	if (n != 16)
		return -1;
	s->k0 = s->k1 = 0;
	for (i = 0; i < 8; i++) {
		s->k0 |= (uint64_t)b[i] << (8 * i);
		s->k1 |= (uint64_t)b[8 + i] << (8 * i);
	}
	return 0;
}

static int parse_flow(const char *line, struct fs_flow_key *k)
{
	char src[64], dst[64];
	unsigned int sport, dport, proto;

	memset(k, 0, sizeof(*k));
	if (sscanf(line, "%63s %63s %u %u %u", src, dst, &sport, &dport, &proto) != 5 ||
	    sport > 65535 || dport > 65535 || proto > 255)
		return -1;
	if (inet_pton(AF_INET, src, k->src) == 1 && inet_pton(AF_INET, dst, k->dst) == 1)
		k->family = FS_FAMILY_IPV4;
	else if (inet_pton(AF_INET6, src, k->src) == 1 && inet_pton(AF_INET6, dst, k->dst) == 1)
		k->family = FS_FAMILY_IPV6;
	else
		return -1;
	k->proto = (uint8_t)proto;
	k->sport = htons((uint16_t)sport);
	k->dport = htons((uint16_t)dport);
	return 0;
}

int main(int argc, char **argv)
{
	struct fs_hash_secret secret;
	struct fs_hash_key key;
	unsigned int depth, log2w, r;
	char line[256];

	if (argc != 4 || read_secret(argv[1], &secret) ||
	    sscanf(argv[2], "%u", &depth) != 1 || sscanf(argv[3], "%u", &log2w) != 1 ||
	    !depth || depth > 8 || log2w < 4 || log2w > 22) {
		fprintf(stderr, "usage: fs-ref-hash SECRET_FILE DEPTH LOG2W <FLOWS (a 16-byte secret, depth 1..8, log2w 4..22)\n");
		return 2;
	}
	ref_hash_key_derive(&secret, &key);
	while (fgets(line, sizeof(line), stdin)) {
		struct fs_flow_key k;
		struct ref_hashes h;
		unsigned int per_word = 64 / log2w;

		if (parse_flow(line, &k)) {
			fprintf(stderr, "fs-ref-hash: not a flow: %s", line);
			return 1;
		}
		h = ref_packet_hash(&k, &key);
		printf("%016llx %016llx %016llx", (unsigned long long)h.flow,
		       (unsigned long long)h.src, (unsigned long long)h.dst);
		for (r = 0; r < depth; r++) {
			uint64_t word = r / per_word ?
				ref_fmix64(h.flow + (uint64_t)(r / per_word) * 0x9e3779b97f4a7c15ULL) :
				h.flow;

			printf(" %llu", (unsigned long long)((word >> (r % per_word * log2w)) &
							     ((1ULL << log2w) - 1)));
		}
		printf(" %llu\n", (unsigned long long)(h.flow & ((1ULL << 14) - 1)));
	}
	return 0;
}
