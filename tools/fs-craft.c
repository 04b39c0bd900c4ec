// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * fs-craft - random, mutated and malformed Ethernet frames, each with the
 * verdict flowsketch's datapath must give it, for
 * tests/integration/skb_frames.sh.
 *
 *   fs-craft -i IFACE --dst-mac MAC [--frames N] [--seed S] [--rate PPS]
 *            [--copy BYTES] [--no-copy-limit] --truth FILE [--keys FILE]
 *   fs-craft --dry-run [--frames N] [--seed S] ...   build and judge only
 *
 * Every frame follows from --seed and its number alone (the same seed
 * gives the same frames, in the same order, whatever is sent), and is one
 * of these classes:
 *
 *   wf          well-formed IPv4/IPv6, TCP/UDP/ICMP/ICMPv6/other protocol,
 *               0-2 VLAN tags (802.1Q or 802.1ad), IPv4 options, IPv6
 *               extension headers (hop-by-hop, routing, destination
 *               options, AH, a first fragment's header)
 *   trunc       a wf frame cut inside one of its headers or at a boundary
 *   bad_ihl     IPv4 IHL < 5
 *   bad_len     IPv4 total length < header length
 *   short_len   IP length (IPv4 total, IPv6 payload) ending inside a header
 *               after the IP header
 *   bad_doff    TCP data offset < 5
 *   big_doff    TCP data offset past the frame or the IP packet
 *   vlan3       three or four VLAN tags
 *   ext_chain   seven or more IPv6 extension headers
 *   version     an IP EtherType whose header says another IP version
 *   frag4       IPv4 fragments, first (MF) and non-first (offset != 0)
 *   frag6       IPv6 fragment headers, first and non-first
 *   nonip       ARP (also behind a VLAN tag), LLDP, other EtherTypes,
 *               802.3 length frames
 *   deep        well-formed IPv6 whose headers run past the first --copy
 *               bytes (what a tracepoint frontend copies)
 *   mutated     a wf frame with bytes overwritten, bits flipped, cut
 *   random_ip   random bytes behind an IP or VLAN EtherType, some with the
 *               version, IHL and lengths made plausible
 *   random      random bytes of random length (14 .. 1514)
 *
 * Two oracles, written apart from the datapath's parser (bpf/parse.bpf.h)
 * and from each other:
 *
 *  - by construction: the builder records where it put each header and
 *    the reason a frame gets when it ends inside that header (a VLAN tag:
 *    trunc_vlan, the fixed IPv4 header: trunc_ipv4, its options: bad_ihl,
 *    ...), and for a field it broke the reason that field gives once its
 *    header is whole (IHL < 5: bad_ihl, ...).  The verdict of a frame is
 *    then where it ends, the IP length included (it bounds the headers
 *    after the IP header), against that map.  Used for every class but
 *    mutated, random_ip and random, whose outcome nothing but a parser
 *    knows;
 *  - the reference classifier, ref_frame(): the protocols from their
 *    specifications (IEEE 802.1Q; RFC 791; RFC 8200 with RFC 2675's zero
 *    payload length; RFC 4302's AH length; RFC 793 / 9293; RFC 768; RFC
 *    792 / 4443's 8-byte ICMP header) and flowsketch's documented contract
 *    (README, include/flowsketch/maps.h, the header comment of
 *    parse.bpf.h): at most two VLAN tags and six extension headers
 *    walked, a non-first fragment keyed with ports 0, ICMP keyed by type
 *    and code, no header read past the first --copy bytes.  It judges
 *    mutated and random frames, and every constructed frame too: where
 *    it and the construction disagree the oracle itself is wrong, and the
 *    count is in the truth ("disagreements", expected 0).
 *
 * --no-copy-limit: the verdicts of a frontend that parses the whole frame
 * in place (XDP), not a copy of its first --copy bytes.  The frames are
 * the very same (--copy still shapes them: a wf frame's headers stay
 * within it, a deep frame's run past it), and both oracles read every
 * byte: a deep frame, truncated in a copy, is keyed.  "past_copy" still
 * counts the frames whose verdict the --copy limit would change, i.e.
 * where this truth and the copy's differ; "copy_limit" says which truth
 * this is.
 *
 * Frames are sent with an AF_PACKET raw socket bound to IFACE (sendmmsg,
 * GEN_BATCH at a time, paced to --rate); a full queue (ENOBUFS) is waited
 * out and retried; only frames the kernel took are in the truth.  The
 * truth (JSON) has the frames and bytes sent, the class mix, every
 * verdict's count as the datapath names it (sketched, non_ip, fragments,
 * and each malformed reason), the sketched frames' bytes, and the exact
 * numbers of distinct flows, sources and destinations sketched.  --keys
 * writes every key sketched, one a line:
 *   SRC DST SPORT DPORT PROTO PACKETS BYTES
 * (addresses as inet_ntop() prints them, ports as the daemon prints them:
 * ICMP type << 8 | code in DPORT).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define FRAME_MAX 1514U		/* Ethernet header + 1500-byte MTU */
#define FRAME_MIN 14U		/* an Ethernet header: veth drops less */
#define COPY_DEFAULT 256U	/* bytes a tracepoint frontend copies */
#define GEN_BATCH 32U
#define RETRY_NS 20000L
#define RETRY_MAX 500000UL	/* 10 s of full queues in a row: give up */
#define POOL 256U		/* the flows most wf frames belong to */
#define MAX_HDRS 32

/* Verdicts, named as flowsketchd's status names the counters. */
enum verdict {
	V_SKETCHED,
	V_NON_IP,
	V_TRUNC_ETH,
	V_TRUNC_VLAN,
	V_VLAN_DEPTH,
	V_TRUNC_IPV4,
	V_BAD_IHL,
	V_BAD_IPV4_LEN,
	V_TRUNC_IPV6,
	V_TRUNC_IPV6_EXT,
	V_IPV6_EXT_CHAIN,
	V_TRUNC_L4,
	V_BAD_TCP_DOFF,
	V_MAX,
	V_NONE = -1,		/* layout: not a stop / not a header */
};

static const char *const v_name[V_MAX] = {
	"sketched", "non_ip", "trunc_eth", "trunc_vlan", "vlan_depth",
	"trunc_ipv4", "bad_ihl", "bad_ipv4_len", "trunc_ipv6",
	"trunc_ipv6_ext", "ipv6_ext_chain", "trunc_l4", "bad_tcp_doff",
};

enum cls {
	C_WF, C_TRUNC, C_BAD_IHL, C_BAD_LEN, C_SHORT_LEN, C_BAD_DOFF,
	C_BIG_DOFF, C_VLAN3, C_EXT_CHAIN, C_VERSION, C_FRAG4, C_FRAG6,
	C_NONIP, C_DEEP, C_MUTATED, C_RANDOM_IP, C_RANDOM, C_MAX,
};

static const char *const c_name[C_MAX] = {
	"wf", "trunc", "bad_ihl", "bad_len", "short_len", "bad_doff",
	"big_doff", "vlan3", "ext_chain", "version", "frag4", "frag6",
	"nonip", "deep", "mutated", "random_ip", "random",
};

/* Per mille of the frames. */
static const unsigned int c_weight[C_MAX] = {
	[C_WF] = 300, [C_TRUNC] = 150, [C_BAD_IHL] = 30, [C_BAD_LEN] = 30,
	[C_SHORT_LEN] = 40, [C_BAD_DOFF] = 30, [C_BIG_DOFF] = 20,
	[C_VLAN3] = 15, [C_EXT_CHAIN] = 15, [C_VERSION] = 20,
	[C_FRAG4] = 40, [C_FRAG6] = 40, [C_NONIP] = 50, [C_DEEP] = 20,
	[C_MUTATED] = 100, [C_RANDOM_IP] = 50, [C_RANDOM] = 50,
};

/* Unknown by construction: judged by the reference classifier only. */
static bool c_unknown(int c)
{
	return c == C_MUTATED || c == C_RANDOM_IP || c == C_RANDOM;
}

/* A flow key as the daemon reports it: ports in host order, ICMP's type
 * and code in dport, unused bytes zero. */
struct ckey {
	uint8_t family;		/* 4 or 6 */
	uint8_t proto;
	uint16_t sport, dport;
	uint8_t src[16], dst[16];
};

struct outcome {
	int v;
	bool nonfirst;		/* a non-first fragment (sketched, ports 0) */
	struct ckey k;
};

/* ------------------------------------------------------------ random */

static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n). */
static uint32_t rn(uint64_t *s, uint32_t n)
{
	return n ? (uint32_t)(rnd(s) % n) : 0;
}

/* Uniform in [lo, hi]. */
static uint32_t rr(uint64_t *s, uint32_t lo, uint32_t hi)
{
	return lo + rn(s, hi - lo + 1);
}

static bool chance(uint64_t *s, unsigned int percent)
{
	return rn(s, 100) < percent;
}

static void rbytes(uint64_t *s, uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)rnd(s);
}

static unsigned int be16(const uint8_t *p)
{
	return (unsigned int)p[0] << 8 | p[1];
}

static void put16(uint8_t *p, unsigned int v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* ------------------------------------------------ reference classifier */

/*
 * A frame of which the first vis bytes can be read.  Bytes [off, off + n)
 * of a header are there when off + n <= vis and, for a header inside an
 * IP packet, n <= room, the bytes the IP length leaves from off.
 */
static uint64_t avail(size_t vis, size_t off, uint64_t room)
{
	uint64_t a = off <= vis ? vis - off : 0;

	return a < room ? a : room;
}

/* The transport header at off (RFC 9293 3.1, RFC 768, RFC 792 / 4443). */
static int ref_l4(const uint8_t *p, size_t vis, size_t off, uint64_t room,
		  uint8_t icmp, struct outcome *o)
{
	uint64_t a = avail(vis, off, room);
	unsigned int hl;

	if (o->k.proto == 6) {
		if (a < 20)
			return V_TRUNC_L4;
		hl = (p[off + 12] >> 4) * 4U;
		if (hl < 20)
			return V_BAD_TCP_DOFF;
		if (a < hl)
			return V_TRUNC_L4;
		o->k.sport = (uint16_t)be16(p + off);
		o->k.dport = (uint16_t)be16(p + off + 2);
	} else if (o->k.proto == 17) {
		if (a < 8)
			return V_TRUNC_L4;
		o->k.sport = (uint16_t)be16(p + off);
		o->k.dport = (uint16_t)be16(p + off + 2);
	} else if (o->k.proto == icmp) {
		if (a < 8)
			return V_TRUNC_L4;
		o->k.dport = (uint16_t)be16(p + off);	/* type, code */
	}
	return V_SKETCHED;
}

/* RFC 791 3.1. */
static int ref_ipv4(const uint8_t *p, size_t vis, size_t off, struct outcome *o)
{
	unsigned int ihl, total;

	if (vis < off + 20)
		return V_TRUNC_IPV4;
	if (p[off] >> 4 != 4)
		return V_NON_IP;
	ihl = (p[off] & 0xfU) * 4;
	if (ihl < 20 || vis < off + ihl)
		return V_BAD_IHL;
	total = be16(p + off + 2);
	if (total < ihl)
		return V_BAD_IPV4_LEN;
	o->k.family = 4;
	o->k.proto = p[off + 9];
	memcpy(o->k.src, p + off + 12, 4);
	memcpy(o->k.dst, p + off + 16, 4);
	if (be16(p + off + 6) & 0x1fffU) {	/* fragment offset */
		o->nonfirst = true;
		return V_SKETCHED;
	}
	return ref_l4(p, vis, off + ihl, total - ihl, 1, o);
}

static bool ref_ipv6_ext(uint8_t nh)
{
	/* RFC 8200 4.1's order and IANA's list, less ESP (50: what follows
	 * is encrypted, so it is the upper layer) and No Next Header (59),
	 * and the mobility, HIP and shim6 headers flowsketch does not walk
	 * (135, 139, 140: README, "IPv6 with extension headers": hop-by-hop,
	 * routing, fragment, destination options, AH). */
	return nh == 0 || nh == 43 || nh == 44 || nh == 51 || nh == 60;
}

/* RFC 8200 3 and 4. */
static int ref_ipv6(const uint8_t *p, size_t vis, size_t off, struct outcome *o)
{
	uint64_t room, a, len;
	unsigned int walked = 0;
	size_t at = off + 40;
	uint8_t nh;

	if (vis < off + 40)
		return V_TRUNC_IPV6;
	if (p[off] >> 4 != 6)
		return V_NON_IP;
	o->k.family = 6;
	memcpy(o->k.src, p + off + 8, 16);
	memcpy(o->k.dst, p + off + 24, 16);
	room = be16(p + off + 4);
	if (!room)		/* RFC 2675: the length is elsewhere */
		room = UINT64_MAX;
	nh = p[off + 6];
	while (ref_ipv6_ext(nh)) {
		if (walked == 6)
			return V_IPV6_EXT_CHAIN;
		a = avail(vis, at, room);
		if (a < 8)
			return V_TRUNC_IPV6_EXT;
		if (nh == 44) {		/* RFC 8200 4.5 */
			if (be16(p + at + 2) >> 3) {
				o->k.proto = p[at];
				o->nonfirst = true;
				return V_SKETCHED;
			}
			len = 8;
		} else if (nh == 51) {	/* RFC 4302 2.2 */
			len = ((uint64_t)p[at + 1] + 2) * 4;
		} else {		/* RFC 8200 4.3, 4.4, 4.6 */
			len = ((uint64_t)p[at + 1] + 1) * 8;
		}
		if (a < len)
			return V_TRUNC_IPV6_EXT;
		nh = p[at];
		at += len;
		if (room != UINT64_MAX)
			room -= len;
		walked++;
	}
	o->k.proto = nh;
	return ref_l4(p, vis, at, room, 58, o);
}

/* The verdict on a frame whose first vis bytes are read. */
static void ref_frame(const uint8_t *p, size_t vis, struct outcome *o)
{
	unsigned int type, tags = 0;
	size_t off = 14;

	memset(o, 0, sizeof(*o));
	if (vis < 14) {
		o->v = V_TRUNC_ETH;
		return;
	}
	type = be16(p + 12);
	while (type == 0x8100 || type == 0x88a8) {	/* IEEE 802.1Q 9.5 */
		if (tags == 2) {
			o->v = V_VLAN_DEPTH;
			return;
		}
		if (vis < off + 4) {
			o->v = V_TRUNC_VLAN;
			return;
		}
		type = be16(p + off + 2);
		off += 4;
		tags++;
	}
	if (type == 0x0800)
		o->v = ref_ipv4(p, vis, off, o);
	else if (type == 0x86dd)
		o->v = ref_ipv6(p, vis, off, o);
	else
		o->v = V_NON_IP;
	if (o->v != V_SKETCHED) {	/* only a sketched frame has a key */
		memset(&o->k, 0, sizeof(o->k));
		o->nonfirst = false;
	}
}

/* ------------------------------------------------------------ builder */

/*
 * A frame being built, and its map: each header's bytes, the reason a
 * frame gets that ends inside it (trunc), and the reason it gets once the
 * header is whole (stop, V_NONE: go on).  Headers from index post_ip on
 * lie inside the IP packet and also end where its length says (room_end).
 * full: the verdict when every header is there and no stop applies.
 */
struct hdr {
	uint16_t start, end;
	int8_t trunc, stop;
};

struct craft {
	uint8_t b[FRAME_MAX];
	size_t len;
	int cls;
	struct hdr h[MAX_HDRS];
	int nh;
	int post_ip;
	size_t l3;		/* IP header offset */
	int family;
	int tcp_hdr;		/* index of the fixed TCP header, -1 */
	int ip_hdr;		/* index of the fixed IP header, -1 */
	int ip_last;		/* index of the IP header's last part */
	size_t etype;		/* offset of the EtherType being written */
	size_t nexthdr;		/* offset of the next-header byte (IPv6) */
	struct outcome full;
};

static void reset(struct craft *c)
{
	memset(c, 0, sizeof(*c));
	c->tcp_hdr = c->ip_hdr = c->ip_last = -1;
	c->post_ip = MAX_HDRS;
}

static uint8_t *add_hdr(struct craft *c, size_t n, int trunc)
{
	uint8_t *p = c->b + c->len;
	struct hdr *h = &c->h[c->nh++];

	h->start = (uint16_t)c->len;
	h->end = (uint16_t)(c->len + n);
	h->trunc = (int8_t)trunc;
	h->stop = V_NONE;
	memset(p, 0, n);
	c->len += n;
	return p;
}

/* A map entry for bytes already there (a header made longer). */
static void add_hdr_at(struct craft *c, size_t start, size_t end, int trunc)
{
	struct hdr *h = &c->h[c->nh++];

	h->start = (uint16_t)start;
	h->end = (uint16_t)end;
	h->trunc = (int8_t)trunc;
	h->stop = V_NONE;
}

static size_t hdr_end(const struct craft *c)
{
	return c->nh ? c->h[c->nh - 1].end : 0;
}

/* The verdict the map gives a frame of c->len bytes, copy bytes read. */
static void map_verdict(const struct craft *c, size_t copy, struct outcome *o)
{
	size_t vis = c->len < copy ? c->len : copy;
	uint64_t room_end = UINT64_MAX;
	int i;

	if (c->ip_hdr >= 0 && c->family == 4)
		room_end = c->l3 + be16(c->b + c->l3 + 2);
	else if (c->ip_hdr >= 0 && c->family == 6 && be16(c->b + c->l3 + 4))
		room_end = c->l3 + 40 + be16(c->b + c->l3 + 4);
	memset(o, 0, sizeof(*o));
	for (i = 0; i < c->nh; i++) {
		const struct hdr *h = &c->h[i];
		uint64_t bound = vis;

		if (i >= c->post_ip && room_end < bound)
			bound = room_end;
		if (h->end > bound) {
			o->v = h->trunc;
			return;
		}
		if (h->stop != V_NONE) {
			o->v = h->stop;
			return;
		}
	}
	*o = c->full;
}

struct shape {
	int tags;
	int family;
	uint8_t proto;
	unsigned int ihl;		/* IPv4 header bytes, 20 .. 60 */
	int next[12];			/* IPv6 extension headers in order */
	unsigned int hl[12];		/* and their length fields */
	int nnext;
	int frag6;			/* index in next[] of a fragment header, -1 */
	unsigned int frag_off;		/* its offset (8-byte units) */
	unsigned int v4_frag;		/* IPv4 frag_off field */
	unsigned int doff;		/* TCP header words */
	size_t payload;
};

/* Bytes of IPv6 extension header t with length field hl. */
static size_t ext_len(int t, unsigned int hl)
{
	return t == 44 ? 8 : t == 51 ? (hl + 2) * 4 : (hl + 1) * 8;
}

/* Bytes of headers shape sh builds (Ethernet to the transport header). */
static size_t shape_hdrs(const struct shape *sh)
{
	size_t n = 14 + 4 * (size_t)sh->tags + (sh->family == 4 ? sh->ihl : 40);
	int i;

	for (i = 0; i < sh->nnext; i++)
		n += ext_len(sh->next[i], sh->hl[i]);
	if (sh->proto == 6)
		n += sh->doff * 4;
	else if (sh->proto == 17 || sh->proto == (sh->family == 4 ? 1 : 58))
		n += 8;
	return n;
}

static void put_tags(struct craft *c, uint64_t *s, int tags)
{
	int i;

	for (i = 0; i < tags; i++) {
		uint8_t *t;

		put16(c->b + c->etype, chance(s, 70) ? 0x8100 : 0x88a8);
		t = add_hdr(c, 4, V_TRUNC_VLAN);
		put16(t, rn(s, 0x10000));	/* PCP, DEI, VID */
		c->etype = c->len - 2;
	}
}

static void put_eth(struct craft *c, uint64_t *s, const uint8_t *dst,
		    const uint8_t *src)
{
	uint8_t *e = add_hdr(c, 14, V_TRUNC_ETH);

	if (dst && chance(s, 70)) {
		memcpy(e, dst, 6);
	} else {			/* another host's: locally administered */
		rbytes(s, e, 6);
		e[0] = (uint8_t)((e[0] & 0xfc) | 0x02);
	}
	memcpy(e + 6, src, 6);
	c->etype = 12;
}

static uint16_t ip_csum(const uint8_t *p, size_t n)
{
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		sum += be16(p + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* One IPv6 extension header of type t with its length field chosen. */
static void put_ext(struct craft *c, uint64_t *s, int t, unsigned int hdrlen,
		    unsigned int frag_off)
{
	size_t len = ext_len(t, hdrlen);
	uint8_t *x;

	c->b[c->nexthdr] = (uint8_t)t;
	x = add_hdr(c, len, V_TRUNC_IPV6_EXT);
	if (t == 44) {
		put16(x + 2, frag_off << 3 | 1);	/* M: more follow */
		rbytes(s, x + 4, 4);			/* identification */
	} else {
		x[1] = (uint8_t)hdrlen;
		if (t == 51) {
			rbytes(s, x + 4, len - 4);	/* SPI, seq, ICV */
		} else if (t == 43) {
			x[2] = 4;			/* type 4, SRH-like */
			x[3] = 0;			/* segments left */
		} else {
			/* options: PadN over the rest (RFC 8200 4.2) */
			x[2] = 1;
			x[3] = (uint8_t)(len - 4);
		}
	}
	c->nexthdr = x - c->b;
}

/*
 * Build the frame of shape sh for key k: Ethernet, tags, the IP header,
 * extension headers, the transport header, payload.  Lengths say the
 * whole frame; the caller breaks what it breaks afterwards.
 */
static void build(struct craft *c, uint64_t *s, const struct shape *sh,
		  const struct ckey *k, const uint8_t *dst, const uint8_t *src)
{
	size_t n;
	int i;

	reset(c);
	put_eth(c, s, dst, src);
	put_tags(c, s, sh->tags);
	c->l3 = c->len;
	c->family = sh->family;
	c->full.v = V_SKETCHED;
	c->full.k = *k;
	if (sh->family == 4) {
		uint8_t *ip;

		put16(c->b + c->etype, 0x0800);
		c->ip_hdr = c->nh;
		ip = add_hdr(c, 20, V_TRUNC_IPV4);
		if (sh->ihl > 20) {
			uint8_t *opt = add_hdr(c, sh->ihl - 20, V_BAD_IHL);

			memset(opt, 1, sh->ihl - 20);	/* NOP */
			opt[sh->ihl - 21] = 0;		/* EOL */
		}
		c->ip_last = c->nh - 1;
		c->post_ip = c->nh;
		ip[0] = (uint8_t)(0x40 | sh->ihl / 4);
		ip[1] = (uint8_t)rn(s, 256);
		put16(ip + 4, rn(s, 0x10000));
		put16(ip + 6, sh->v4_frag);
		ip[8] = (uint8_t)rr(s, 1, 255);
		ip[9] = sh->proto;
		memcpy(ip + 12, k->src, 4);
		memcpy(ip + 16, k->dst, 4);
		if (sh->v4_frag & 0x1fff)
			c->full.nonfirst = true;
	} else {
		uint8_t *ip;

		put16(c->b + c->etype, 0x86dd);
		c->ip_hdr = c->nh;
		ip = add_hdr(c, 40, V_TRUNC_IPV6);
		c->ip_last = c->nh - 1;
		c->post_ip = c->nh;	/* extension headers are payload */
		ip[0] = (uint8_t)(0x60 | rn(s, 16));
		ip[1] = (uint8_t)rn(s, 256);
		put16(ip + 2, rn(s, 0x10000));
		ip[7] = (uint8_t)rr(s, 1, 255);
		memcpy(ip + 8, k->src, 16);
		memcpy(ip + 24, k->dst, 16);
		c->nexthdr = c->l3 + 6;
		for (i = 0; i < sh->nnext; i++)
			put_ext(c, s, sh->next[i], sh->hl[i],
				i == sh->frag6 ? sh->frag_off : 0);
		if (sh->frag6 >= 0 && sh->frag_off)
			c->full.nonfirst = true;
		c->b[c->nexthdr] = sh->proto;
	}
	if (!c->full.nonfirst) {
		if (sh->proto == 6) {
			uint8_t *t;

			c->tcp_hdr = c->nh;
			t = add_hdr(c, 20, V_TRUNC_L4);
			if (sh->doff > 5) {
				uint8_t *opt = add_hdr(c, (sh->doff - 5) * 4, V_TRUNC_L4);

				memset(opt, 1, (sh->doff - 5) * 4);	/* NOP */
			}
			put16(t, k->sport);
			put16(t + 2, k->dport);
			rbytes(s, t + 4, 8);			/* seq, ack */
			t[12] = (uint8_t)(sh->doff << 4);
			t[13] = (uint8_t)rn(s, 256);		/* flags */
			put16(t + 14, rn(s, 0x10000));		/* window */
			/* checksum left 0 (wrong): nothing merges them */
		} else if (sh->proto == 17) {
			uint8_t *u = add_hdr(c, 8, V_TRUNC_L4);

			put16(u, k->sport);
			put16(u + 2, k->dport);
		} else if (sh->proto == (sh->family == 4 ? 1 : 58)) {
			uint8_t *m = add_hdr(c, 8, V_TRUNC_L4);

			put16(m, k->dport);			/* type, code */
			rbytes(s, m + 4, 4);
		}
	}
	n = sh->payload;
	if (c->len > FRAME_MAX)		/* cannot happen: headers < 1 KiB */
		abort();
	if (n > FRAME_MAX - c->len)
		n = FRAME_MAX - c->len;
	rbytes(s, c->b + c->len, n);
	c->len += n;
	if (sh->family == 4) {
		uint8_t *ip = c->b + c->l3;

		put16(ip + 2, (unsigned int)(c->len - c->l3));
		put16(ip + 10, ip_csum(ip, sh->ihl));
	} else {
		put16(c->b + c->l3 + 4, (unsigned int)(c->len - c->l3 - 40));
	}
	if (c->full.nonfirst) {		/* keyed with ports 0 */
		c->full.k.sport = c->full.k.dport = 0;
		if (sh->family == 6)
			c->full.k.proto = sh->proto;
	}
}

/* ------------------------------------------------------------ flows */

/* A key of family and protocol: ports, or ICMP type and code. */
static void make_key(uint64_t *s, struct ckey *k, int family, uint8_t proto,
		     bool pool, uint32_t index)
{
	static const uint16_t icmp4[] = { 0x0800, 0x0000, 0x0303, 0x0b00, 0x0301 };
	static const uint16_t icmp6[] = { 0x8000, 0x8100, 0x0104, 0x8700, 0x0300 };

	memset(k, 0, sizeof(*k));
	k->family = (uint8_t)family;
	k->proto = proto;
	if (family == 4) {
		/* pool: 10.1.0.0/16 -> 10.2.0.0/16; fresh: 10.128.0.0/9 */
		k->src[0] = k->dst[0] = 10;
		if (pool) {
			k->src[1] = 1;
			k->src[2] = (uint8_t)(index >> 4);
			k->src[3] = (uint8_t)(index * 7 + 1);
			k->dst[1] = 2;
			k->dst[2] = (uint8_t)(index % 5);
			k->dst[3] = (uint8_t)(index % 31 + 1);
		} else {
			rbytes(s, k->src + 1, 3);
			rbytes(s, k->dst + 1, 3);
			k->src[1] |= 0x80;
			k->dst[1] |= 0x80;
		}
	} else {
		/* pool: fd00:1::/32 -> fd00:2::/32; fresh: fd00:f000::/20 */
		k->src[0] = k->dst[0] = 0xfd;
		if (pool) {
			k->src[3] = 1;
			k->src[14] = (uint8_t)(index >> 8);
			k->src[15] = (uint8_t)index;
			k->dst[3] = 2;
			k->dst[15] = (uint8_t)(index % 37 + 1);
		} else {
			rbytes(s, k->src + 2, 14);
			rbytes(s, k->dst + 2, 14);
			k->src[2] |= 0xf0;
			k->dst[2] |= 0xf0;
		}
	}
	if (proto == 6 || proto == 17) {
		k->sport = (uint16_t)rr(s, 1024, 65535);
		k->dport = (uint16_t)(chance(s, 50) ? rr(s, 1, 1023) : rr(s, 1024, 65535));
	} else if (proto == (family == 4 ? 1 : 58)) {
		k->dport = family == 4 ? icmp4[rn(s, 5)] : icmp6[rn(s, 5)];
	}
}

/* TCP, UDP, the family's ICMP, or another protocol: the other family's
 * ICMP among them, and none an IPv6 extension header. */
static uint8_t pick_proto(uint64_t *s, int family)
{
	static const uint8_t other4[] = { 47, 50, 51, 132, 58, 89, 253 };
	static const uint8_t other6[] = { 47, 50, 59, 132, 1, 89, 253 };
	uint32_t r = rn(s, 100);

	if (r < 38)
		return 6;
	if (r < 76)
		return 17;
	if (r < 90)
		return family == 4 ? 1 : 58;
	return family == 4 ? other4[rn(s, 7)] : other6[rn(s, 7)];
}

static struct ckey pool_keys[POOL];

static void make_pool(uint64_t seed)
{
	uint32_t i;

	for (i = 0; i < POOL; i++) {
		uint64_t s = seed ^ (0xa0761d6478bd642fULL * (i + 1));
		int family = chance(&s, 50) ? 4 : 6;

		make_key(&s, &pool_keys[i], family, pick_proto(&s, family), true, i);
	}
}

/*
 * A key of family (-1: any) and protocol (0: any).  With both free, most
 * are one of the pool (skewed: low ranks heavier), so that the pool's
 * flows are the heavy hitters; the rest are fresh random addresses.
 */
static void pick_key(uint64_t *s, struct ckey *k, int family, int proto)
{
	if (family < 0 && !proto && chance(s, 70)) {
		double u = (double)(rnd(s) >> 11) * 0x1.0p-53;

		*k = pool_keys[(uint32_t)(u * u * u * POOL) % POOL];
		return;
	}
	if (family < 0)
		family = chance(s, 50) ? 4 : 6;
	make_key(s, k, family, proto ? (uint8_t)proto : pick_proto(s, family),
		 false, 0);
}

/* ------------------------------------------------------------ classes */

struct ctx {
	uint8_t dst_mac[6], src_mac[6];
	size_t copy;
};

/* Payload bytes, mostly few (the rate is in frames), at most room. */
static size_t pick_payload(uint64_t *s, size_t room)
{
	uint32_t r = rn(s, 100);
	size_t n;

	if (r < 55)
		n = rn(s, 65);
	else if (r < 90)
		n = rn(s, 513);
	else
		n = rn(s, (uint32_t)room + 1);
	return n < room ? n : room;
}

/* One extension header's length field: AH's even (RFC 4302 2.2 for
 * IPv6: a multiple of 8 bytes), the others' up to words. */
static unsigned int pick_hl(uint64_t *s, int t, unsigned int words)
{
	if (t == 44)
		return 0;
	if (t == 51)
		return 2 * rn(s, 3);
	return rn(s, words + 1);
}

/*
 * A well-formed shape for key k: 0-2 tags, IPv4 options, IPv6 extension
 * headers (hop-by-hop first if any, a first fragment's header at most
 * once), TCP options, payload; its headers within the copy.
 */
static void pick_shape(uint64_t *s, struct shape *sh, const struct ckey *k,
		       size_t copy)
{
	static const int exts[] = { 43, 60, 51, 44, 60, 43 };

	memset(sh, 0, sizeof(*sh));
	sh->frag6 = -1;
	sh->family = k->family;
	sh->proto = k->proto;
	sh->tags = chance(s, 60) ? 0 : chance(s, 70) ? 1 : 2;
	sh->ihl = chance(s, 70) ? 20 : 4 * rr(s, 6, 15);
	sh->v4_frag = chance(s, 50) ? 0x4000 : 0;		/* DF */
	sh->doff = chance(s, 60) ? 5 : rr(s, 6, 15);
	if (sh->family == 6 && chance(s, 50)) {
		int n = (int)(chance(s, 80) ? rr(s, 1, 3) : rr(s, 4, 6));

		if (chance(s, 50))
			sh->next[sh->nnext++] = 0;	/* hop-by-hop */
		while (sh->nnext < n) {
			int t = exts[rn(s, 6)];

			if (t == 44) {
				if (sh->frag6 >= 0)
					continue;
				sh->frag6 = sh->nnext;
			}
			sh->hl[sh->nnext] = pick_hl(s, t, 2);
			sh->next[sh->nnext++] = t;
		}
	}
	while (shape_hdrs(sh) > copy && sh->nnext) {
		if (sh->frag6 == sh->nnext - 1)
			sh->frag6 = -1;
		sh->nnext--;
	}
	sh->payload = pick_payload(s, FRAME_MAX - shape_hdrs(sh));
}

/* A well-formed frame of family (-1: any) and protocol (0: any). */
static void craft_wf_of(struct craft *c, uint64_t *s, const struct ctx *x,
			int family, int proto, struct shape *sh)
{
	struct ckey k;

	pick_key(s, &k, family, proto);
	pick_shape(s, sh, &k, x->copy);
	build(c, s, sh, &k, x->dst_mac, x->src_mac);
}

static void craft_wf(struct craft *c, uint64_t *s, const struct ctx *x)
{
	struct shape sh;

	craft_wf_of(c, s, x, -1, 0, &sh);
	/* Now and then an IPv6 payload length of 0: the frame alone bounds
	 * its headers (RFC 2675's jumbogram, README's contract). */
	if (c->family == 6 && chance(s, 3))
		put16(c->b + c->l3 + 4, 0);
}

/* Cut inside a header, at a boundary, or a byte either side of one. */
static void craft_trunc(struct craft *c, uint64_t *s, const struct ctx *x)
{
	struct shape sh;
	size_t cut;

	craft_wf_of(c, s, x, -1, 0, &sh);
	if (chance(s, 60)) {
		const struct hdr *h = &c->h[rr(s, 1, (uint32_t)c->nh - 1)];

		cut = chance(s, 30) ? h->end - 1u : h->start + rn(s, 3) - 1u;
	} else {
		cut = rr(s, FRAME_MIN, (uint32_t)hdr_end(c));
	}
	if (cut < FRAME_MIN)
		cut = FRAME_MIN;
	if (cut < c->len)
		c->len = cut;
}

static void craft_bad_ihl(struct craft *c, uint64_t *s, const struct ctx *x)
{
	struct shape sh;

	craft_wf_of(c, s, x, 4, 0, &sh);
	c->b[c->l3] = (uint8_t)(0x40 | rn(s, 5));
	c->h[c->ip_hdr].stop = V_BAD_IHL;
}

static void craft_bad_len(struct craft *c, uint64_t *s, const struct ctx *x)
{
	struct shape sh;

	craft_wf_of(c, s, x, 4, 0, &sh);
	put16(c->b + c->l3 + 2, rn(s, sh.ihl));
	c->h[c->ip_last].stop = V_BAD_IPV4_LEN;
}

/* The IP length ends inside a header after the IP header. */
static void craft_short_len(struct craft *c, uint64_t *s, const struct ctx *x)
{
	static const int protos[] = { 6, 17, 0 };
	int family = chance(s, 50) ? 4 : 6;
	int proto = protos[rn(s, 3)];
	struct shape sh;
	size_t ip_end, end, stop;

	if (!proto)
		proto = family == 4 ? 1 : 58;
	craft_wf_of(c, s, x, family, proto, &sh);
	ip_end = c->h[c->post_ip - 1].end;
	end = hdr_end(c);
	stop = rr(s, (uint32_t)ip_end, (uint32_t)end - 1);
	if (family == 4)
		put16(c->b + c->l3 + 2, (unsigned int)(stop - c->l3));
	else			/* not 0: that would be a jumbogram's */
		put16(c->b + c->l3 + 4, stop > ip_end ? (unsigned int)(stop - ip_end) : 1);
}

static void craft_bad_doff(struct craft *c, uint64_t *s, const struct ctx *x)
{
	struct shape sh;
	uint8_t *t;

	craft_wf_of(c, s, x, -1, 6, &sh);
	t = c->b + c->h[c->tcp_hdr].start;
	t[12] = (uint8_t)(rn(s, 5) << 4 | (t[12] & 0xf));
	c->h[c->tcp_hdr].stop = V_BAD_TCP_DOFF;
}

/* A data offset past the end of the frame or of the IP packet. */
static void craft_big_doff(struct craft *c, uint64_t *s, const struct ctx *x)
{
	struct shape sh;
	size_t t, end, cut;
	unsigned int doff;

	craft_wf_of(c, s, x, -1, 6, &sh);
	t = c->h[c->tcp_hdr].start;
	doff = rr(s, 6, 15);
	c->b[t + 12] = (uint8_t)(doff << 4);
	/* The map: the TCP header is now doff words, whatever its bytes. */
	end = t + doff * 4;
	c->nh = c->tcp_hdr + 1;
	add_hdr_at(c, t + 20, end, V_TRUNC_L4);
	if (end > c->len)
		return;
	cut = rr(s, (uint32_t)t + 20, (uint32_t)end - 1);
	if (c->family == 4 && chance(s, 50))
		put16(c->b + c->l3 + 2, (unsigned int)(cut - c->l3));
	else if (c->family == 6 && chance(s, 50))
		put16(c->b + c->l3 + 4, (unsigned int)(cut - c->l3 - 40));
	else
		c->len = cut;
}

/* Three or four tags: once the second is whole, its EtherType announces
 * a third, which is not walked. */
static void craft_vlan3(struct craft *c, uint64_t *s, const struct ctx *x)
{
	struct shape sh;
	struct ckey k;
	int i, tags = 0;

	pick_key(s, &k, -1, 0);
	pick_shape(s, &sh, &k, x->copy);
	sh.tags = (int)rr(s, 3, 4);
	build(c, s, &sh, &k, x->dst_mac, x->src_mac);
	for (i = 0; i < c->nh; i++)
		if (c->h[i].trunc == V_TRUNC_VLAN && ++tags == 2)
			c->h[i].stop = V_VLAN_DEPTH;
}

/* Seven to ten extension headers of 8 bytes: once the sixth is whole,
 * what it announces is not walked. */
static void craft_ext_chain(struct craft *c, uint64_t *s, const struct ctx *x)
{
	static const int exts[] = { 0, 43, 60, 51 };
	struct shape sh;
	struct ckey k;
	int i, seen = 0;

	pick_key(s, &k, 6, 0);
	pick_shape(s, &sh, &k, x->copy);
	sh.nnext = (int)rr(s, 7, 10);
	sh.frag6 = -1;
	for (i = 0; i < sh.nnext; i++) {
		sh.next[i] = exts[rn(s, 4)];
		sh.hl[i] = 0;
	}
	sh.payload = pick_payload(s, FRAME_MAX - shape_hdrs(&sh));
	build(c, s, &sh, &k, x->dst_mac, x->src_mac);
	for (i = 0; i < c->nh; i++)
		if (c->h[i].trunc == V_TRUNC_IPV6_EXT && ++seen == 6)
			c->h[i].stop = V_IPV6_EXT_CHAIN;
}

/* An IP EtherType, a whole header of another version. */
static void craft_version(struct craft *c, uint64_t *s, const struct ctx *x)
{
	struct shape sh;
	unsigned int v;

	craft_wf_of(c, s, x, -1, 0, &sh);
	do
		v = rn(s, 16);
	while (v == (unsigned int)c->family);
	c->b[c->l3] = (uint8_t)(v << 4 | (c->b[c->l3] & 0xf));
	c->h[c->ip_hdr].stop = V_NON_IP;
}

/* IPv4: a first fragment (MF, offset 0) is keyed like any packet; a
 * non-first one (offset != 0) has no transport header. */
static void craft_frag4(struct craft *c, uint64_t *s, const struct ctx *x)
{
	struct shape sh;
	struct ckey k;

	pick_key(s, &k, 4, 0);
	pick_shape(s, &sh, &k, x->copy);
	if (chance(s, 40))
		sh.v4_frag = 0x2000;
	else
		sh.v4_frag = (chance(s, 50) ? 0x2000 : 0) | rr(s, 1, 0x1fff);
	build(c, s, &sh, &k, x->dst_mac, x->src_mac);
}

/* IPv6 fragment header after 0-2 others, perhaps destination options
 * after it; non-first: keyed on the next header it names, ports 0. */
static void craft_frag6(struct craft *c, uint64_t *s, const struct ctx *x)
{
	struct shape sh;
	struct ckey k;
	int i, before = (int)rn(s, 3);

	pick_key(s, &k, 6, 0);
	pick_shape(s, &sh, &k, x->copy);
	sh.nnext = 0;
	for (i = 0; i < before; i++) {
		sh.next[sh.nnext] = i == 0 ? 0 : 60;
		sh.hl[sh.nnext++] = rn(s, 3);
	}
	sh.frag6 = sh.nnext;
	sh.hl[sh.nnext] = 0;
	sh.next[sh.nnext++] = 44;
	if (chance(s, 40)) {
		sh.hl[sh.nnext] = rn(s, 3);
		sh.next[sh.nnext++] = 60;
	}
	sh.frag_off = chance(s, 40) ? 0 : rr(s, 1, 0x1fff);
	sh.payload = pick_payload(s, FRAME_MAX - shape_hdrs(&sh));
	build(c, s, &sh, &k, x->dst_mac, x->src_mac);
	if (c->full.nonfirst) {
		int f = c->ip_hdr + 1 + sh.frag6;

		c->full.k.proto = c->b[c->h[f].start];
		c->nh = f + 1;		/* nothing after it is read */
	}
}

/* ARP (perhaps tagged), other EtherTypes (perhaps tagged), 802.3. */
static void craft_nonip(struct craft *c, uint64_t *s, const struct ctx *x)
{
	static const uint16_t types[] = { 0x88cc, 0x88b5, 0x88b6, 0x9000, 0x0842,
					  0x88e5, 0x8847, 0x0805 };
	uint32_t r = rn(s, 100);
	uint8_t *p;

	reset(c);
	put_eth(c, s, x->dst_mac, x->src_mac);
	if (r < 45) {
		put_tags(c, s, chance(s, 70) ? 0 : 1);
		put16(c->b + c->etype, 0x0806);
		p = c->b + c->len;
		put16(p, 1);			/* Ethernet */
		put16(p + 2, 0x0800);
		p[4] = 6;
		p[5] = 4;
		put16(p + 6, rr(s, 1, 2));	/* request, reply */
		memcpy(p + 8, x->src_mac, 6);
		p[14] = 10, p[15] = 9, p[16] = (uint8_t)rn(s, 256), p[17] = (uint8_t)rr(s, 1, 254);
		if (chance(s, 50))
			rbytes(s, p + 18, 6);
		p[24] = 10, p[25] = 9, p[26] = (uint8_t)rn(s, 256), p[27] = (uint8_t)rr(s, 1, 254);
		c->len += 28 + (chance(s, 50) ? 18 : 0);	/* padded to 60 */
	} else if (r < 80) {
		put_tags(c, s, chance(s, 80) ? 0 : (int)rr(s, 1, 2));
		put16(c->b + c->etype, types[rn(s, 8)]);
		p = c->b + c->len;
		c->len += pick_payload(s, FRAME_MAX - c->len);
		rbytes(s, p, c->len - (size_t)(p - c->b));
	} else {				/* a length, then LLC */
		size_t n = pick_payload(s, FRAME_MAX - c->len - 3) + 3;

		put16(c->b + 12, (unsigned int)n);
		p = c->b + c->len;
		rbytes(s, p, n);
		p[0] = p[1] = 0x42;		/* STP's SAP */
		p[2] = 0x03;			/* UI */
		c->len += n;
	}
	c->full.v = V_NON_IP;
}

/* Well-formed IPv6 whose transport header lies past the copy: one
 * destination options or routing header of 168 to 968 bytes. */
static void craft_deep(struct craft *c, uint64_t *s, const struct ctx *x)
{
	struct shape sh;
	struct ckey k;

	pick_key(s, &k, 6, chance(s, 50) ? 6 : 17);
	pick_shape(s, &sh, &k, x->copy);
	sh.nnext = 1;
	sh.frag6 = -1;
	sh.next[0] = chance(s, 50) ? 60 : 43;
	sh.hl[0] = rr(s, 20, 120);
	sh.payload = pick_payload(s, FRAME_MAX - shape_hdrs(&sh));
	build(c, s, &sh, &k, x->dst_mac, x->src_mac);
}

/* A wf frame with 1 .. 4 random changes in and near its headers. */
static void craft_mutated(struct craft *c, uint64_t *s, const struct ctx *x)
{
	struct shape sh;
	int i, n = (int)rr(s, 1, 4);
	size_t span;

	craft_wf_of(c, s, x, -1, 0, &sh);
	span = hdr_end(c) + 8;
	for (i = 0; i < n; i++) {
		size_t at;

		if (span > c->len)
			span = c->len;
		if (span <= 12)
			break;
		at = rr(s, 12, (uint32_t)span - 1);
		switch (rn(s, 4)) {
		case 0:
			c->b[at] = (uint8_t)rnd(s);
			break;
		case 1:
			c->b[at] ^= (uint8_t)(1U << rn(s, 8));
			break;
		case 2:
			c->b[at] = (uint8_t)(chance(s, 50) ? 0 : 0xff);
			break;
		default:
			if (at >= FRAME_MIN)
				c->len = at;
			break;
		}
	}
}

static size_t random_len(uint64_t *s)
{
	uint32_t r = rn(s, 100);

	if (r < 40)
		return FRAME_MIN + rn(s, 64);
	if (r < 80)
		return FRAME_MIN + rn(s, 300);
	return rr(s, FRAME_MIN, FRAME_MAX);
}

static void craft_random(struct craft *c, uint64_t *s, const struct ctx *x)
{
	reset(c);
	c->len = random_len(s);
	rbytes(s, c->b, c->len);
	(void)x;
}

/* Random bytes behind IP or VLAN EtherTypes, the version, IHL, lengths,
 * fragment field and next protocol made plausible at random. */
static void craft_random_ip(struct craft *c, uint64_t *s, const struct ctx *x)
{
	static const uint16_t types[] = { 0x0800, 0x86dd, 0x8100, 0x88a8, 0x0800, 0x86dd };
	static const uint8_t nh[] = { 0, 43, 44, 51, 60, 6, 17, 58 };
	size_t off = 12, l3;
	unsigned int t;

	reset(c);
	c->len = chance(s, 70) ? rr(s, 64, 400) : random_len(s);
	rbytes(s, c->b, c->len);
	for (;;) {
		if (off + 2 > c->len)
			return;
		t = types[rn(s, 6)];
		put16(c->b + off, t);
		if (t != 0x8100 && t != 0x88a8)
			break;
		off += 4;
		if (off > 12 + 4 * 3)
			return;
	}
	l3 = off + 2;
	if (l3 + 42 > c->len)
		return;
	if (chance(s, 70))
		c->b[l3] = (uint8_t)((t == 0x0800 ? 0x40 : 0x60) | (c->b[l3] & 0xf));
	if (t == 0x0800 && chance(s, 50)) {
		c->b[l3] = (uint8_t)(0x40 | rr(s, 5, 15));
		if (chance(s, 70))
			put16(c->b + l3 + 2, (unsigned int)(c->len - l3));
		if (chance(s, 60))
			put16(c->b + l3 + 6, chance(s, 50) ? 0x4000 : 0);
		if (chance(s, 60))
			c->b[l3 + 9] = chance(s, 50) ? 6 : 17;
	} else if (t == 0x86dd && chance(s, 50)) {
		if (chance(s, 70))
			put16(c->b + l3 + 4, (unsigned int)(c->len - l3 - 40));
		c->b[l3 + 6] = nh[rn(s, 8)];
		if (chance(s, 50))
			c->b[l3 + 41] = (uint8_t)rn(s, 4);	/* a short one */
	}
}

typedef void (*craft_fn)(struct craft *, uint64_t *, const struct ctx *);

static const craft_fn c_fn[C_MAX] = {
	[C_WF] = craft_wf, [C_TRUNC] = craft_trunc, [C_BAD_IHL] = craft_bad_ihl,
	[C_BAD_LEN] = craft_bad_len, [C_SHORT_LEN] = craft_short_len,
	[C_BAD_DOFF] = craft_bad_doff, [C_BIG_DOFF] = craft_big_doff,
	[C_VLAN3] = craft_vlan3, [C_EXT_CHAIN] = craft_ext_chain,
	[C_VERSION] = craft_version, [C_FRAG4] = craft_frag4,
	[C_FRAG6] = craft_frag6, [C_NONIP] = craft_nonip, [C_DEEP] = craft_deep,
	[C_MUTATED] = craft_mutated, [C_RANDOM_IP] = craft_random_ip,
	[C_RANDOM] = craft_random,
};

/* Frame number i of seed: its class and bytes (and its map if known). */
static void craft_frame(struct craft *c, uint64_t seed, uint64_t i,
			const struct ctx *x)
{
	uint64_t s = seed * 0xd1b54a32d192ed03ULL ^ (i + 1) * 0x9e3779b97f4a7c15ULL;
	uint32_t r;
	int k;

	rnd(&s);
	r = rn(&s, 1000);
	for (k = 0; k < C_MAX - 1; k++) {
		if (r < c_weight[k])
			break;
		r -= c_weight[k];
	}
	c_fn[k](c, &s, x);
	c->cls = k;
	if (c->len < FRAME_MIN)
		c->len = FRAME_MIN;
}

/* ------------------------------------------------------------ tallies */

struct kentry {
	struct ckey k;
	uint64_t packets, bytes;
	bool used;
};

struct kset {
	struct kentry *e;
	size_t mask, n;
};

static uint64_t khash(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h ^ (h >> 29);
}

static int kset_init(struct kset *t, size_t expect)
{
	size_t n = 1024;

	while (n < 2 * expect)
		n <<= 1;
	t->e = calloc(n, sizeof(*t->e));
	t->mask = n - 1;
	t->n = 0;
	return t->e ? 0 : -ENOMEM;
}

/* Add (packets, bytes) to k's entry; 1 if it was new. */
static int kset_add(struct kset *t, const struct ckey *k, uint64_t bytes)
{
	size_t i = khash(k, sizeof(*k)) & t->mask;

	while (t->e[i].used && memcmp(&t->e[i].k, k, sizeof(*k)))
		i = (i + 1) & t->mask;
	if (!t->e[i].used) {
		t->e[i].used = true;
		t->e[i].k = *k;
		t->n++;
	}
	t->e[i].packets++;
	t->e[i].bytes += bytes;
	return t->e[i].packets == 1;
}

/* A set of addresses (family, 16 bytes). */
struct aentry {
	uint8_t used, family, a[16];
};

struct aset {
	struct aentry *e;
	size_t mask, n;
};

static int aset_init(struct aset *t, size_t expect)
{
	size_t n = 1024;

	while (n < 2 * expect)
		n <<= 1;
	t->e = calloc(n, sizeof(*t->e));
	t->mask = n - 1;
	t->n = 0;
	return t->e ? 0 : -ENOMEM;
}

static void aset_add(struct aset *t, uint8_t family, const uint8_t *a)
{
	struct aentry want = { .used = 1, .family = family };
	size_t i;

	memcpy(want.a, a, 16);
	i = khash(&want, sizeof(want)) & t->mask;
	while (t->e[i].used && memcmp(&t->e[i], &want, sizeof(want)))
		i = (i + 1) & t->mask;
	if (!t->e[i].used) {
		t->e[i] = want;
		t->n++;
	}
}

struct tally {
	uint64_t frames, bytes;
	uint64_t cls[C_MAX];
	uint64_t v[V_MAX];
	uint64_t v_known[V_MAX], v_ref[V_MAX];
	uint64_t sketched_bytes, fragments;
	uint64_t disagreements, past_copy;
	struct kset flows;
	struct aset srcs, dsts;
};

static void key_str(const struct ckey *k, char *src, char *dst)
{
	int af = k->family == 4 ? AF_INET : AF_INET6;

	inet_ntop(af, k->src, src, INET6_ADDRSTRLEN);
	inet_ntop(af, k->dst, dst, INET6_ADDRSTRLEN);
}

static void hexdump(FILE *f, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		fprintf(f, "%02x%s", p[i], (i + 1) % 32 ? "" : "\n");
	fputc('\n', f);
}

static bool same_outcome(const struct outcome *a, const struct outcome *b)
{
	if (a->v != b->v)
		return false;
	if (a->v != V_SKETCHED)
		return true;
	return a->nonfirst == b->nonfirst && !memcmp(&a->k, &b->k, sizeof(a->k));
}

static void describe(FILE *f, const struct outcome *o)
{
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];

	if (o->v != V_SKETCHED) {
		fprintf(f, "%s", v_name[o->v]);
		return;
	}
	key_str(&o->k, src, dst);
	fprintf(f, "sketched %s %s %u %u %u%s", src, dst, o->k.sport, o->k.dport,
		o->k.proto, o->nonfirst ? " (non-first fragment)" : "");
}

/*
 * The verdict frame c gets when limit of its bytes are read (the copy, or
 * SIZE_MAX: all of it, in place); counts disagreements between the
 * oracles, and the frames whose verdict reading only copy bytes changes.
 */
static void judge(const struct craft *c, size_t copy, size_t limit,
		  struct outcome *o, struct tally *t, uint64_t i)
{
	struct outcome cut, all, ref;

	ref_frame(c->b, c->len < copy ? c->len : copy, &cut);
	ref_frame(c->b, c->len, &all);
	if (!same_outcome(&cut, &all))
		t->past_copy++;
	ref = limit == copy ? cut : all;	/* limit: copy or SIZE_MAX */
	if (c_unknown(c->cls)) {
		*o = ref;
		t->v_ref[o->v]++;
		return;
	}
	map_verdict(c, limit, o);
	t->v_known[o->v]++;
	if (!same_outcome(o, &ref)) {
		if (t->disagreements++ < 10) {
			fprintf(stderr, "fs-craft: frame %llu (%s, %zu bytes): built as ",
				(unsigned long long)i, c_name[c->cls], c->len);
			describe(stderr, o);
			fprintf(stderr, ", the reference says ");
			describe(stderr, &ref);
			fprintf(stderr, "\n");
			hexdump(stderr, c->b, c->len < 160 ? c->len : 160);
		}
	}
}

static void count(struct tally *t, const struct craft *c, const struct outcome *o)
{
	t->frames++;
	t->bytes += c->len;
	t->cls[c->cls]++;
	t->v[o->v]++;
	if (o->v != V_SKETCHED)
		return;
	t->sketched_bytes += c->len;
	if (o->nonfirst)
		t->fragments++;
	kset_add(&t->flows, &o->k, c->len);
	aset_add(&t->srcs, o->k.family, o->k.src);
	aset_add(&t->dsts, o->k.family, o->k.dst);
}

/* ------------------------------------------------------------ sending */

static volatile sig_atomic_t stop_now;

static void on_signal(int sig)
{
	(void)sig;
	stop_now = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int open_socket(const char *ifname, uint8_t *mac)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	struct ifreq ifr;
	int fd;

	sll.sll_ifindex = (int)if_nametoindex(ifname);
	if (!sll.sll_ifindex) {
		fprintf(stderr, "fs-craft: no interface named %s.\n", ifname);
		return -1;
	}
	/* Protocol 0: it only sends, it is handed no copy of anything. */
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		fprintf(stderr, "fs-craft: packet socket on %s: %s.\n", ifname,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
		fprintf(stderr, "fs-craft: MAC address of %s: %s.\n", ifname,
			strerror(errno));
		close(fd);
		return -1;
	}
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return fd;
}

/* Send frames [0, n); *sent: how many the kernel took, also on error. */
static int send_batch(int fd, struct craft *cs, unsigned int n,
		      unsigned int *sent, uint64_t *retries)
{
	struct mmsghdr msgs[GEN_BATCH];
	struct iovec iov[GEN_BATCH];
	struct timespec backoff = { .tv_nsec = RETRY_NS };
	unsigned long tries = 0;
	unsigned int i;

	memset(msgs, 0, sizeof(msgs));
	for (i = 0; i < n; i++) {
		iov[i].iov_base = cs[i].b;
		iov[i].iov_len = cs[i].len;
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	*sent = 0;
	while (*sent < n) {
		int r = sendmmsg(fd, msgs + *sent, n - *sent, 0);

		if (r > 0) {
			for (i = *sent; i < *sent + (unsigned int)r; i++)
				if (msgs[i].msg_len != cs[i].len)
					return -EMSGSIZE;
			*sent += (unsigned int)r;
			tries = 0;
			continue;
		}
		if (r < 0 && errno != ENOBUFS && errno != EAGAIN && errno != EINTR) {
			fprintf(stderr, "fs-craft: frame of %zu bytes refused: %s.\n",
				cs[*sent].len, strerror(errno));
			return -errno;
		}
		if (++tries > RETRY_MAX)
			return -ETIMEDOUT;
		(*retries)++;
		nanosleep(&backoff, NULL);
	}
	return 0;
}

static void pace(double start, uint64_t sent, uint64_t rate)
{
	double due = start + (double)sent / (double)rate, now = now_s();
	struct timespec ts;

	if (!rate || due <= now)
		return;
	ts.tv_sec = (time_t)(due - now);
	ts.tv_nsec = (long)((due - now - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------ output */

static void json_counts(FILE *f, const char *name, const uint64_t *v)
{
	int i;

	fprintf(f, "  \"%s\": {", name);
	for (i = 0; i < V_MAX; i++)
		fprintf(f, "%s\"%s\": %llu", i ? ", " : "", v_name[i],
			(unsigned long long)v[i]);
	fprintf(f, "},\n");
}

static int write_truth(const char *path, const struct tally *t, uint64_t seed,
		       size_t copy, bool copy_limit, double secs, uint64_t retries)
{
	FILE *f = fopen(path, "w");
	uint64_t malformed = 0;
	int i;

	if (!f) {
		fprintf(stderr, "fs-craft: %s: %s.\n", path, strerror(errno));
		return -1;
	}
	for (i = V_NON_IP + 1; i < V_MAX; i++)
		malformed += t->v[i];
	fprintf(f, "{\n  \"seed\": %llu,\n  \"copy\": %zu,\n  \"copy_limit\": %s,\n",
		(unsigned long long)seed, copy, copy_limit ? "true" : "false");
	fprintf(f, "  \"frames\": %llu,\n  \"bytes\": %llu,\n",
		(unsigned long long)t->frames, (unsigned long long)t->bytes);
	fprintf(f, "  \"classes\": {");
	for (i = 0; i < C_MAX; i++)
		fprintf(f, "%s\"%s\": %llu", i ? ", " : "", c_name[i],
			(unsigned long long)t->cls[i]);
	fprintf(f, "},\n");
	json_counts(f, "verdicts", t->v);
	json_counts(f, "by_construction", t->v_known);
	json_counts(f, "by_reference", t->v_ref);
	fprintf(f, "  \"sketched\": %llu,\n  \"sketched_bytes\": %llu,\n",
		(unsigned long long)t->v[V_SKETCHED], (unsigned long long)t->sketched_bytes);
	fprintf(f, "  \"non_ip\": %llu,\n  \"fragments\": %llu,\n",
		(unsigned long long)t->v[V_NON_IP], (unsigned long long)t->fragments);
	fprintf(f, "  \"malformed\": {");
	for (i = V_NON_IP + 1; i < V_MAX; i++)
		fprintf(f, "%s\"%s\": %llu", i > V_NON_IP + 1 ? ", " : "", v_name[i],
			(unsigned long long)t->v[i]);
	fprintf(f, ", \"skb_nonlinear\": 0},\n");
	fprintf(f, "  \"malformed_total\": %llu,\n", (unsigned long long)malformed);
	fprintf(f, "  \"disagreements\": %llu,\n  \"past_copy\": %llu,\n",
		(unsigned long long)t->disagreements, (unsigned long long)t->past_copy);
	fprintf(f, "  \"distinct_flows\": %zu,\n  \"distinct_sources\": %zu,\n"
		"  \"distinct_destinations\": %zu,\n", t->flows.n, t->srcs.n, t->dsts.n);
	fprintf(f, "  \"seconds\": %.3f,\n  \"retries\": %llu\n}\n", secs,
		(unsigned long long)retries);
	return fclose(f) ? -1 : 0;
}

static int write_keys(const char *path, const struct kset *t)
{
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
	FILE *f = fopen(path, "w");
	size_t i;

	if (!f) {
		fprintf(stderr, "fs-craft: %s: %s.\n", path, strerror(errno));
		return -1;
	}
	for (i = 0; i <= t->mask; i++) {
		const struct kentry *e = &t->e[i];

		if (!e->used)
			continue;
		key_str(&e->k, src, dst);
		fprintf(f, "%s %s %u %u %u %llu %llu\n", src, dst, e->k.sport,
			e->k.dport, e->k.proto, (unsigned long long)e->packets,
			(unsigned long long)e->bytes);
	}
	return fclose(f) ? -1 : 0;
}

static int parse_mac(const char *s, uint8_t *mac)
{
	unsigned int b[6];
	char tail;
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3], &b[4],
		   &b[5], &tail) != 6)
		return -1;
	for (i = 0; i < 6; i++) {
		if (b[i] > 0xff)
			return -1;
		mac[i] = (uint8_t)b[i];
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: fs-craft -i IFACE --dst-mac MAC [--frames N] [--seed S] [--rate PPS]\n"
		"                [--copy BYTES] [--no-copy-limit] --truth FILE [--keys FILE]\n"
		"       fs-craft --dry-run [--frames N] [--seed S] [--truth FILE] [--keys FILE]\n"
		"Random, mutated and malformed frames, each with the verdict flowsketch's\n"
		"datapath must give it (see the header of tools/fs-craft.c).\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "interface", required_argument, NULL, 'i' },
		{ "dst-mac", required_argument, NULL, 'm' },
		{ "frames", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 's' },
		{ "rate", required_argument, NULL, 'r' },
		{ "copy", required_argument, NULL, 'c' },
		{ "truth", required_argument, NULL, 't' },
		{ "keys", required_argument, NULL, 'k' },
		{ "no-copy-limit", no_argument, NULL, 'w' },
		{ "dry-run", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *ifname = NULL, *truth = NULL, *keys = NULL;
	uint64_t frames = 1000000, seed = 1, rate = 0, retries = 0, i = 0;
	struct ctx x = { .src_mac = { 0x02, 0, 0, 0, 0, 1 },
			 .dst_mac = { 0x02, 0, 0, 0, 0, 2 }, .copy = COPY_DEFAULT };
	static struct craft batch[GEN_BATCH];
	static struct outcome verdicts[GEN_BATCH];
	struct tally t;
	bool dry = false, have_mac = false, whole = false;
	double start;
	int fd = -1, o, err = 0;

	while ((o = getopt_long(argc, argv, "i:h", opts, NULL)) != -1) {
		switch (o) {
		case 'i': ifname = optarg; break;
		case 'm':
			if (parse_mac(optarg, x.dst_mac)) {
				fprintf(stderr, "fs-craft: bad MAC '%s'.\n", optarg);
				return 2;
			}
			have_mac = true;
			break;
		case 'n': frames = strtoull(optarg, NULL, 0); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'r': rate = strtoull(optarg, NULL, 0); break;
		case 'c': x.copy = strtoull(optarg, NULL, 0); break;
		case 't': truth = optarg; break;
		case 'k': keys = optarg; break;
		case 'w': whole = true; break;
		case 'd': dry = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || (!dry && (!ifname || !have_mac || !truth)) ||
	    x.copy < FRAME_MIN || !frames) {
		usage(stderr);
		return 2;
	}
	memset(&t, 0, sizeof(t));
	if (kset_init(&t.flows, frames) || aset_init(&t.srcs, frames) ||
	    aset_init(&t.dsts, frames)) {
		fprintf(stderr, "fs-craft: out of memory.\n");
		return 1;
	}
	if (!dry) {
		fd = open_socket(ifname, x.src_mac);
		if (fd < 0)
			return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	make_pool(seed);
	start = now_s();
	while (i < frames && !stop_now) {
		unsigned int n = 0, sent, j;

		while (n < GEN_BATCH && i + n < frames) {
			craft_frame(&batch[n], seed, i + n, &x);
			judge(&batch[n], x.copy, whole ? SIZE_MAX : x.copy,
			      &verdicts[n], &t, i + n);
			n++;
		}
		if (dry) {
			sent = n;
		} else {
			pace(start, i, rate);
			err = send_batch(fd, batch, n, &sent, &retries);
		}
		for (j = 0; j < sent; j++)
			count(&t, &batch[j], &verdicts[j]);
		i += n;
		if (err) {
			fprintf(stderr, "fs-craft: sending on %s failed: %s.\n",
				ifname, strerror(-err));
			break;
		}
	}
	if (fd >= 0)
		close(fd);
	fprintf(stderr, "fs-craft: %llu frames (%llu bytes) in %.2f s, %llu sketched, "
		"%llu disagreements, %llu retries\n",
		(unsigned long long)t.frames, (unsigned long long)t.bytes,
		now_s() - start, (unsigned long long)t.v[V_SKETCHED],
		(unsigned long long)t.disagreements, (unsigned long long)retries);
	if (truth && write_truth(truth, &t, seed, x.copy, !whole,
				 now_s() - start, retries))
		return 1;
	if (keys && write_keys(keys, &t.flows))
		return 1;
	return err || stop_now ? 1 : 0;
}
