/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * pkt_build.h - craft Ethernet frames for BPF_PROG_TEST_RUN tests.
 *
 * A frame is built front to back, one header per call, each header given
 * its next-protocol field by the caller (so a test can lie in it):
 *
 *	pkt_init(&p);
 *	pkt_eth(&p, ETH_P_8021Q);
 *	pkt_vlan(&p, 100, ETH_P_IP);
 *	pkt_ipv4(&p, IPPROTO_UDP, src, dst, 5, 0);
 *	pkt_udp(&p, 5353, 53);
 *	pkt_payload(&p, 32);
 *	pkt_finish(&p);		fills IPv4 tot_len, IPv6 payload_len, UDP len
 *
 * Ports and EtherTypes are passed in host order.  Length fields that a
 * test sets by hand are left alone by pkt_finish().  To truncate, set
 * p.len lower after pkt_finish().  Checksums are not computed: XDP does not
 * verify them, and neither does the datapath.
 */
#ifndef FLOWSKETCH_PKT_BUILD_H
#define FLOWSKETCH_PKT_BUILD_H

#include <arpa/inet.h>
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PKT_MAX 4096

#define PKT_ETH_P_IP 0x0800
#define PKT_ETH_P_ARP 0x0806
#define PKT_ETH_P_IPV6 0x86dd
#define PKT_ETH_P_8021Q 0x8100
#define PKT_ETH_P_8021AD 0x88a8

struct pkt {
	uint8_t data[PKT_MAX];
	size_t len;
	size_t l3;		/* offset of the IP header, or 0 */
	int family;		/* 4, 6 or 0 */
	int fixed_ip_len;	/* the test set tot_len / payload_len */
	size_t udp;		/* offset of a UDP header to fix, or 0 */
	int finished;		/* pkt_finish() ran */
};

static inline void pkt_init(struct pkt *p)
{
	memset(p, 0, sizeof(*p));
}

/* Append n zeroed bytes and return them. */
static inline uint8_t *pkt_put(struct pkt *p, size_t n)
{
	uint8_t *h;

	assert(p->len + n <= PKT_MAX);
	h = p->data + p->len;
	memset(h, 0, n);
	p->len += n;
	return h;
}

static inline void pkt_put_be16(uint8_t *at, uint16_t v)
{
	at[0] = (uint8_t)(v >> 8);
	at[1] = (uint8_t)v;
}

static inline void pkt_eth(struct pkt *p, uint16_t ethertype)
{
	static const uint8_t dst[6] = { 0x02, 0, 0, 0, 0, 0x02 };
	static const uint8_t src[6] = { 0x02, 0, 0, 0, 0, 0x01 };
	uint8_t *h = pkt_put(p, 14);

	memcpy(h, dst, 6);
	memcpy(h + 6, src, 6);
	pkt_put_be16(h + 12, ethertype);
}

/* A VLAN tag; the TPID that announces it is the previous EtherType. */
static inline void pkt_vlan(struct pkt *p, uint16_t vid, uint16_t ethertype)
{
	uint8_t *h = pkt_put(p, 4);

	pkt_put_be16(h, vid & 0xfff);
	pkt_put_be16(h + 2, ethertype);
}

/*
 * IPv4 header of ihl 32-bit words (options padded with NOP, ended by EOL);
 * frag_off is the raw 16-bit field: 0x2000 = MF, low 13 bits = offset / 8.
 */
static inline uint8_t *pkt_ipv4(struct pkt *p, uint8_t proto,
				const uint8_t src[4], const uint8_t dst[4],
				unsigned int ihl, uint16_t frag_off)
{
	size_t hlen = (ihl < 5 ? 5 : ihl) * 4;
	uint8_t *h;

	p->l3 = p->len;
	p->family = 4;
	h = pkt_put(p, hlen);
	h[0] = (uint8_t)(0x40 | (ihl & 0xf));
	pkt_put_be16(h + 4, 0x1234);
	pkt_put_be16(h + 6, frag_off);
	h[8] = 64;
	h[9] = proto;
	memcpy(h + 12, src, 4);
	memcpy(h + 16, dst, 4);
	memset(h + 20, 1, hlen - 20);		/* NOP options */
	if (hlen > 20)
		h[hlen - 1] = 0;		/* end of options */
	return h;
}

static inline uint8_t *pkt_ipv6(struct pkt *p, uint8_t nexthdr,
				const uint8_t src[16], const uint8_t dst[16])
{
	uint8_t *h;

	p->l3 = p->len;
	p->family = 6;
	h = pkt_put(p, 40);
	h[0] = 0x60;
	h[6] = nexthdr;
	h[7] = 64;
	memcpy(h + 8, src, 16);
	memcpy(h + 24, dst, 16);
	return h;
}

/* Hop-by-hop (0), routing (43) or destination options (60): (hdrlen+1)*8 bytes. */
static inline void pkt_ipv6_opts(struct pkt *p, uint8_t nexthdr, uint8_t hdrlen)
{
	size_t len = ((size_t)hdrlen + 1) * 8;
	uint8_t *h = pkt_put(p, len);

	h[0] = nexthdr;
	h[1] = hdrlen;
	/* PadN option over the rest, so the header is well formed. */
	h[2] = 1;
	h[3] = (uint8_t)(len - 4);
}

/* Authentication header: (hdrlen+2)*4 bytes. */
static inline void pkt_ipv6_ah(struct pkt *p, uint8_t nexthdr, uint8_t hdrlen)
{
	uint8_t *h = pkt_put(p, ((size_t)hdrlen + 2) * 4);

	h[0] = nexthdr;
	h[1] = hdrlen;
	h[7] = 0x42;			/* SPI */
}

/* Fragment header; offset in 8-byte units. */
static inline void pkt_ipv6_frag(struct pkt *p, uint8_t nexthdr,
				 uint16_t offset, int more)
{
	uint8_t *h = pkt_put(p, 8);

	h[0] = nexthdr;
	pkt_put_be16(h + 2, (uint16_t)(offset << 3 | (more ? 1 : 0)));
	h[7] = 0x99;			/* identification */
}

/* TCP header of doff words (options padded with NOP); SYN|ACK set. */
static inline void pkt_tcp(struct pkt *p, uint16_t sport, uint16_t dport,
			   unsigned int doff)
{
	size_t hlen = (doff < 5 ? 5 : doff) * 4;
	uint8_t *h = pkt_put(p, hlen);

	pkt_put_be16(h, sport);
	pkt_put_be16(h + 2, dport);
	h[12] = (uint8_t)(doff << 4);
	h[13] = 0x12;
	pkt_put_be16(h + 14, 65535);
	memset(h + 20, 1, hlen - 20);
}

static inline void pkt_udp(struct pkt *p, uint16_t sport, uint16_t dport)
{
	uint8_t *h;

	p->udp = p->len;
	h = pkt_put(p, 8);
	pkt_put_be16(h, sport);
	pkt_put_be16(h + 2, dport);
}

/* ICMP or ICMPv6: type, code, checksum, 4 bytes of rest (id/seq). */
static inline void pkt_icmp(struct pkt *p, uint8_t type, uint8_t code)
{
	uint8_t *h = pkt_put(p, 8);

	h[0] = type;
	h[1] = code;
	h[5] = 1;
	h[7] = 1;
}

/* n bytes of a pattern that would read as ports 0xa5a5 if misparsed. */
static inline void pkt_payload(struct pkt *p, size_t n)
{
	memset(pkt_put(p, n), 0xa5, n);
}

/* Set the IPv4 total length by hand (e.g. shorter than the header). */
static inline void pkt_ipv4_set_tot_len(struct pkt *p, uint16_t tot_len)
{
	pkt_put_be16(p->data + p->l3 + 2, tot_len);
	p->fixed_ip_len = 1;
}

/* Set the IPv6 payload length by hand (e.g. shorter than the headers). */
static inline void pkt_ipv6_set_payload_len(struct pkt *p, uint16_t len)
{
	pkt_put_be16(p->data + p->l3 + 4, len);
	p->fixed_ip_len = 1;
}

static inline void pkt_finish(struct pkt *p)
{
	p->finished = 1;
	if (p->udp)
		pkt_put_be16(p->data + p->udp + 4, (uint16_t)(p->len - p->udp));
	if (p->fixed_ip_len || !p->l3)
		return;
	if (p->family == 4)
		pkt_put_be16(p->data + p->l3 + 2, (uint16_t)(p->len - p->l3));
	else if (p->family == 6)
		pkt_put_be16(p->data + p->l3 + 4,
			     (uint16_t)(p->len - p->l3 - 40));
}

#endif /* FLOWSKETCH_PKT_BUILD_H */
