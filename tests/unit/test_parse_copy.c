// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_parse_copy.c - one parser for frames in place and for copies.
 *
 * The tracepoint frontends parse a copy of an skb's first FS_HDR_COPY
 * bytes in a map value, with every header offset clamped for the verifier
 * (bpf/parse.bpf.h, "Two kinds of frame"); XDP parses the frame where it
 * lies.  The clamp must never change an answer: bpf/test_parse.bpf.c runs
 * both on each frame, and for 1,000,000 frames, well-formed ones of every
 * shape the parser knows, the same mutated (bytes flipped, cut short,
 * lengths lied about) and plain random bytes, the copy must give what the
 * frame gives in place, key byte for byte, reason and fragment flag.  For
 * a frame longer than FS_HDR_COPY the copy holds its first FS_HDR_COPY
 * bytes, so it must answer as that frame cut to FS_HDR_COPY does in place.
 * The oracle is the XDP parser, whose answers test_datapath.c checks
 * against hand-built frames; what is tested here is that the clamp adds
 * nothing and takes nothing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "flowsketch/flow_key.h"
#include "pkt_build.h"
#include "rng.h"
#include "test_parse.skel.h"

#define FRAMES 1000000
#define FS_HDR_COPY 256		/* bpf/parse.bpf.h */

struct outcome {
	struct fs_flow_key key;
	int32_t reason;
	int32_t nonfirst_frag;
};

struct pair {
	struct outcome place, copy;
};

static __u64 rng_state = 0x2545f4914f6cdd1dULL;

static uint64_t rnd(void)
{
	return rng_next(&rng_state);
}

static uint32_t below(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

/* A frame of some shape the parser walks: VLAN tags, IPv4 with options
 * and fragments, IPv6 with extension headers, then a transport. */
static void build(struct pkt *p)
{
	static const uint8_t l4s[] = { 6, 17, 1, 58, 47 };
	uint8_t src[16], dst[16], proto = l4s[below(sizeof(l4s))];
	unsigned int tags = below(4), i;
	uint16_t ether = below(8) ? (below(2) ? PKT_ETH_P_IP : PKT_ETH_P_IPV6) :
				    (uint16_t)rnd();

	for (i = 0; i < 16; i++) {
		src[i] = (uint8_t)rnd();
		dst[i] = (uint8_t)rnd();
	}
	pkt_init(p);
	pkt_eth(p, tags ? (below(2) ? PKT_ETH_P_8021Q : PKT_ETH_P_8021AD) : ether);
	for (i = 0; i < tags; i++)
		pkt_vlan(p, (uint16_t)below(4096),
			 i + 1 < tags ? PKT_ETH_P_8021Q : ether);
	if (ether == PKT_ETH_P_IP) {
		uint16_t frag = below(6) ? 0 : (uint16_t)(below(2) ? 0x2000 : rnd());

		pkt_ipv4(p, proto == 58 ? 1 : proto, src, dst, 5 + below(11), frag);
	} else if (ether == PKT_ETH_P_IPV6) {
		static const uint8_t exts[] = { 0, 43, 60, 51, 44 };
		unsigned int n = below(8), e;
		uint8_t next[9];

		for (e = 0; e < n; e++)
			next[e] = exts[below(sizeof(exts))];
		next[n] = proto == 1 ? 58 : proto;
		pkt_ipv6(p, next[0], src, dst);
		for (e = 0; e < n; e++) {
			if (next[e] == 44)
				pkt_ipv6_frag(p, next[e + 1], (uint16_t)(below(3) ? 0 : below(8192)), (int)below(2));
			else if (next[e] == 51)
				pkt_ipv6_ah(p, next[e + 1], (uint8_t)below(8));
			else
				pkt_ipv6_opts(p, next[e + 1], (uint8_t)below(below(4) ? 4 : 40));
		}
		proto = next[n];
	} else {
		pkt_payload(p, below(64));
		pkt_finish(p);
		return;
	}
	if (proto == 6)
		pkt_tcp(p, (uint16_t)rnd(), (uint16_t)rnd(), (uint8_t)(5 + below(11)));
	else if (proto == 17)
		pkt_udp(p, (uint16_t)rnd(), (uint16_t)rnd());
	else if (proto == 1 || proto == 58)
		pkt_icmp(p, (uint8_t)rnd(), (uint8_t)rnd());
	pkt_payload(p, below(4) ? below(64) : below(400));
	pkt_finish(p);
}

/* Flip bytes, cut the frame, or lie in a length field. */
static void mutate(struct pkt *p)
{
	unsigned int n = 1 + below(4), i;

	for (i = 0; i < n; i++) {
		switch (below(4)) {
		case 0:
			if (p->len)
				p->data[below((uint32_t)p->len)] ^= (uint8_t)(1 + below(255));
			break;
		case 1:
			if (p->len > 1)
				p->len = 1 + below((uint32_t)p->len - 1);
			break;
		case 2:
			if (p->l3 && p->l3 + 4 < p->len) {
				size_t at = p->l3 + (p->family == 4 ? 2 : 4);

				p->data[at] = (uint8_t)rnd();
				p->data[at + 1] = (uint8_t)rnd();
			}
			break;
		default:	/* a byte early on, where the headers are */
			if (p->len)
				p->data[below((uint32_t)(p->len < 120 ? p->len : 120))] = (uint8_t)rnd();
		}
	}
}

static void run(int prog, int out, const struct pkt *p, struct pair *r)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .repeat = 1);
	uint32_t zero = 0;

	opts.data_in = p->data;
	opts.data_size_in = (uint32_t)p->len;
	assert_int_equal(bpf_prog_test_run_opts(prog, &opts), 0);
	assert_int_equal(opts.retval, 2 /* XDP_PASS */);
	assert_int_equal(bpf_map_lookup_elem(out, &zero, r), 0);
}

static void assert_same(const struct outcome *want, const struct outcome *got,
			const struct pkt *p, unsigned long n)
{
	if (!memcmp(want, got, sizeof(*want)))
		return;
	fail_msg("frame %lu (%zu bytes): in place reason %d frag %d, on the copy reason %d frag %d%s",
		 n, p->len, want->reason, want->nonfirst_frag, got->reason,
		 got->nonfirst_frag,
		 want->reason == got->reason ? " (keys differ)" : "");
}

static void test_copy_answers_as_in_place(void **state)
{
	struct test_parse *skel = test_parse__open_and_load();
	unsigned long n, keyed = 0, long_frames = 0, reasons[64] = { 0 };
	struct pkt p, cut;
	struct pair r, rc;
	int prog, out, kinds = 0;
	unsigned int i;

	(void)state;
	assert_non_null(skel);
	prog = bpf_program__fd(skel->progs.fs_test_parse);
	out = bpf_map__fd(skel->maps.parse_out);
	for (n = 0; n < FRAMES; n++) {
		unsigned int kind = below(10);

		if (kind < 4) {
			build(&p);			/* well-formed */
		} else if (kind < 9) {
			build(&p);
			mutate(&p);
		} else {
			pkt_init(&p);
			p.len = 14 + below(300);
			for (i = 0; i < p.len; i++)
				p.data[i] = (uint8_t)rnd();
			if (below(2))			/* an IP EtherType */
				pkt_put_be16(p.data + 12, below(2) ? PKT_ETH_P_IP : PKT_ETH_P_IPV6);
		}
		if (p.len < 14)		/* test runs want an Ethernet header */
			p.len = 14;
		run(prog, out, &p, &r);
		if (p.len > FS_HDR_COPY) {
			long_frames++;
			cut = p;
			cut.len = FS_HDR_COPY;
			run(prog, out, &cut, &rc);
			assert_same(&rc.place, &r.copy, &p, n);
		} else {
			assert_same(&r.place, &r.copy, &p, n);
		}
		keyed += !r.copy.reason;
		if (r.copy.reason >= 0 && r.copy.reason < 64)
			reasons[r.copy.reason]++;
	}
	for (i = 0; i < 64; i++)
		kinds += reasons[i] > 0;
	printf("# %d frames: %lu keyed, %lu longer than the copy, %d distinct outcomes\n",
	       FRAMES, keyed, long_frames, kinds);
	/* The frames reach every part of the parser: keyed ones and many
	 * reasons (a generator that only made garbage would test little). */
	assert_true(keyed > FRAMES / 10);
	assert_true(long_frames > 1000);
	assert_true(kinds >= 10);
	test_parse__destroy(skel);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy_answers_as_in_place),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
