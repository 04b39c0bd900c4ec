// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * fs-gen - deterministic, skewed test traffic with its exact ground truth.
 *
 * Sends crafted Ethernet frames out of one interface with an AF_PACKET raw
 * socket: F flows (IPv4 and IPv6, UDP and TCP) whose packet counts follow a
 * Zipf law, P(flow of rank k) = k^-s / H(F, s), H(F, s) = sum_{j<=F} j^-s.
 * Everything (flow keys, sizes, the sequence of flows) follows from --seed,
 * so a run is reproducible, and what was actually sent is written to
 * --truth as JSON: every flow's key, packets and bytes (frame bytes as XDP
 * sees them: Ethernet header included, no FCS), the totals and the exact
 * numbers of distinct flows, sources and destinations.  Tests compare the
 * sketches' answers against that file.
 *
 * Unpaced runs send GEN_BATCH frames per sendmmsg(), paced ones one at a
 * time.  Only frames that the kernel accepted are counted.  A full queue makes send()
 * fail with ENOBUFS (give the interface a real qdisc so that a busy veth
 * pushes back instead of dropping); the frame is then retried, never lost
 * silently.  The addresses are private (10.64/10, 10.128/10, fd00::/8): the
 * traffic is meant for a veth pair inside test namespaces, where the
 * receiving stack drops it after XDP has seen it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <linux/if_packet.h>
#include <math.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "flowsketch/flow_key.h"

#define GEN_MAX_FLOWS 1000000U
#define GEN_MAX_ADDRS 1000000U	/* fits the /10 that addresses come from */
#define GEN_PORT_BASE 1024U
#define GEN_PORT_SPAN 64512U	/* source ports 1024..65535, one per flow */
#define GEN_FRAME_MAX 1514U	/* Ethernet header + 1500-byte MTU */
#define GEN_FRAME_MIN 80U	/* Ethernet + IPv6 + TCP headers fit */
#define GEN_RETRY_NS 20000L	/* back-off when the queue is full */
#define GEN_RETRY_MAX 500000UL	/* 10 s of consecutive full queues: give up */

struct gen_opts {
	const char *ifname;
	const char *truth;
	__u8 dst_mac[ETH_ALEN];
	__u32 flows;
	__u64 packets;		/* 0: until --duration */
	double zipf;
	__u64 seed;
	double ipv6_share;
	__u32 sources;
	__u32 destinations;
	__u64 rate;		/* packets per second, 0: as fast as possible */
	double duration;	/* seconds, 0: until --packets */
	bool round_robin;	/* flow i from source i mod S; packet j of flow j mod F */
};

struct gen_flow {
	struct fs_flow_key key;
	__u32 src_index;	/* address pool indices, for distinct counts */
	__u32 dst_index;
	__u32 base_len;		/* frame length before per-packet jitter */
	__u64 packets;
	__u64 bytes;
};

struct gen_stats {
	__u64 packets;
	__u64 bytes;
	__u64 retries;
	double seconds;
};

static volatile sig_atomic_t gen_stop;

static void gen_on_signal(int sig)
{
	gen_stop = 1;
}

/* splitmix64: a full-period 64-bit generator, good enough for test traffic
 * and trivially reproducible from the seed. */
static __u64 gen_next(__u64 *state)
{
	__u64 z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1) with the 53 bits a double holds. */
static double gen_uniform(__u64 *state)
{
	return (double)(gen_next(state) >> 11) * 0x1.0p-53;
}

static double gen_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void gen_addr(__u8 *out, int family, bool source, __u32 index)
{
	__u32 host = index + 1;	/* never the network address */

	memset(out, 0, 16);
	if (family == FS_FAMILY_IPV4) {
		/* sources 10.64.0.0/10, destinations 10.128.0.0/10 */
		__u32 a = (10U << 24) | ((source ? 64U : 128U) << 16);

		a += host;
		out[0] = a >> 24;
		out[1] = a >> 16;
		out[2] = a >> 8;
		out[3] = a;
		return;
	}
	/* sources fd00:0:5::/48, destinations fd00:0:d::/48 */
	out[0] = 0xfd;
	out[5] = source ? 0x05 : 0x0d;
	out[12] = host >> 24;
	out[13] = host >> 16;
	out[14] = host >> 8;
	out[15] = host;
}

/*
 * Flow i (rank i + 1 in the Zipf law).  Keys are distinct by construction:
 * the source port is 1024 + i mod 64512, and flows that share it differ in
 * the destination port (a service port below 20000 for the first 64512
 * flows, 20000 + i / 64512 after).
 */
static void gen_make_flow(struct gen_flow *f, __u32 i, const struct gen_opts *o)
{
	static const __u16 services[] = { 53, 80, 123, 443, 5201, 8080 };
	__u64 state = o->seed ^ ((__u64)i * 0xd1b54a32d192ed03ULL);
	__u32 round = i / GEN_PORT_SPAN;
	__u64 r = gen_next(&state);
	int family = gen_uniform(&state) < o->ipv6_share ? FS_FAMILY_IPV6 :
							    FS_FAMILY_IPV4;

	memset(f, 0, sizeof(*f));
	f->key.family = family;
	f->key.proto = (r & 1) ? IPPROTO_TCP : IPPROTO_UDP;
	f->key.sport = htons(GEN_PORT_BASE + i % GEN_PORT_SPAN);
	f->key.dport = htons(round ? 20000 + round :
				     services[(r >> 1) % FS_ARRAY_SIZE(services)]);
	f->src_index = gen_next(&state) % o->sources;
	if (o->round_robin)
		f->src_index = i % o->sources;
	f->dst_index = gen_next(&state) % o->destinations;
	gen_addr(f->key.src, family, true, f->src_index);
	gen_addr(f->key.dst, family, false, f->dst_index);
	/* Sizes vary per flow so that the top by bytes differs from the top
	 * by packets; 64 bytes of per-packet jitter are added on top. */
	f->base_len = GEN_FRAME_MIN + gen_next(&state) % (1200 - GEN_FRAME_MIN);
}

/* cdf[k] = sum_{j<=k} (j+1)^-s, normalised to cdf[F-1] = 1. */
static double *gen_zipf_cdf(__u32 flows, double s)
{
	double *cdf = malloc(sizeof(*cdf) * flows);
	double sum = 0;
	__u32 k;

	if (!cdf)
		return NULL;
	for (k = 0; k < flows; k++) {
		sum += pow((double)k + 1, -s);
		cdf[k] = sum;
	}
	for (k = 0; k < flows; k++)
		cdf[k] /= sum;
	cdf[flows - 1] = 1.0;
	return cdf;
}

/* Smallest k with cdf[k] > u: flow k is drawn with probability
 * cdf[k] - cdf[k-1], the Zipf weight of rank k + 1. */
static __u32 gen_zipf_draw(const double *cdf, __u32 flows, double u)
{
	__u32 lo = 0, hi = flows - 1;

	while (lo < hi) {
		__u32 mid = lo + (hi - lo) / 2;

		if (cdf[mid] > u)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static __u32 gen_csum_add(__u32 sum, const void *data, size_t len)
{
	const __u8 *p = data;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (__u32)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (__u32)p[len - 1] << 8;
	return sum;
}

static __u16 gen_csum_fold(__u32 sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((__u16)~sum);
}

/* TCP/UDP checksum over the pseudo-header (RFC 768, RFC 8200 8.1). */
static __u16 gen_l4_csum(const struct fs_flow_key *k, const void *l4,
			 size_t len)
{
	size_t alen = k->family == FS_FAMILY_IPV4 ? 4 : 16;
	__u32 sum = 0;

	sum = gen_csum_add(sum, k->src, alen);
	sum = gen_csum_add(sum, k->dst, alen);
	sum += k->proto;
	sum += (__u32)len;
	return gen_csum_fold(gen_csum_add(sum, l4, len));
}

/* Build one frame of exactly len bytes for flow f; returns len. */
static size_t gen_build_frame(__u8 *buf, size_t len, const struct gen_flow *f,
			      const __u8 *src_mac, const __u8 *dst_mac,
			      __u32 seq)
{
	const struct fs_flow_key *k = &f->key;
	struct ether_header *eth = (struct ether_header *)buf;
	size_t l3 = k->family == FS_FAMILY_IPV4 ? sizeof(struct iphdr) :
						  sizeof(struct ip6_hdr);
	size_t l4_off = sizeof(*eth) + l3;
	size_t l4_len = len - l4_off;
	__u8 *l4 = buf + l4_off;
	size_t i;

	memcpy(eth->ether_dhost, dst_mac, ETH_ALEN);
	memcpy(eth->ether_shost, src_mac, ETH_ALEN);
	for (i = l4_off; i < len; i++)
		buf[i] = (__u8)i;

	if (k->family == FS_FAMILY_IPV4) {
		struct iphdr *ip = (struct iphdr *)(eth + 1);

		eth->ether_type = htons(ETHERTYPE_IP);
		memset(ip, 0, sizeof(*ip));
		ip->version = 4;
		ip->ihl = 5;
		ip->tot_len = htons((__u16)(len - sizeof(*eth)));
		ip->id = htons((__u16)seq);
		ip->frag_off = htons(IP_DF);
		ip->ttl = 64;
		ip->protocol = k->proto;
		memcpy(&ip->saddr, k->src, 4);
		memcpy(&ip->daddr, k->dst, 4);
		ip->check = gen_csum_fold(gen_csum_add(0, ip, sizeof(*ip)));
	} else {
		struct ip6_hdr *ip6 = (struct ip6_hdr *)(eth + 1);

		eth->ether_type = htons(ETHERTYPE_IPV6);
		memset(ip6, 0, sizeof(*ip6));
		ip6->ip6_flow = htonl(6U << 28);
		ip6->ip6_plen = htons((__u16)l4_len);
		ip6->ip6_nxt = k->proto;
		ip6->ip6_hlim = 64;
		memcpy(&ip6->ip6_src, k->src, 16);
		memcpy(&ip6->ip6_dst, k->dst, 16);
	}

	if (k->proto == IPPROTO_TCP) {
		struct tcphdr *tcp = (struct tcphdr *)l4;

		memset(tcp, 0, sizeof(*tcp));
		tcp->source = k->sport;
		tcp->dest = k->dport;
		tcp->seq = htonl(seq);
		tcp->doff = sizeof(*tcp) / 4;
		tcp->ack = 1;
		tcp->psh = 1;
		tcp->window = htons(65535);
		tcp->check = gen_l4_csum(k, tcp, l4_len);
	} else {
		struct udphdr *udp = (struct udphdr *)l4;

		udp->source = k->sport;
		udp->dest = k->dport;
		udp->len = htons((__u16)l4_len);
		udp->check = 0;
		udp->check = gen_l4_csum(k, udp, l4_len);
		if (!udp->check)
			udp->check = 0xffff;	/* 0 means "none" in UDP */
	}
	return len;
}

static int gen_parse_mac(const char *s, __u8 *mac)
{
	unsigned int b[ETH_ALEN];
	char tail;
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3],
		   &b[4], &b[5], &tail) != ETH_ALEN)
		return -EINVAL;
	for (i = 0; i < ETH_ALEN; i++) {
		if (b[i] > 0xff)
			return -EINVAL;
		mac[i] = (__u8)b[i];
	}
	return 0;
}

static int gen_open_socket(const char *ifname, __u8 *src_mac)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	struct ifreq ifr = {};
	int fd, err;

	sll.sll_ifindex = (int)if_nametoindex(ifname);
	if (!sll.sll_ifindex) {
		fprintf(stderr, "fs-gen: no interface named %s.\n", ifname);
		return -ENODEV;
	}
	/* Protocol 0: this socket only sends, it never receives a copy. */
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0) {
		err = -errno;
		fprintf(stderr, "fs-gen: cannot open a packet socket: %s.\n",
			strerror(errno));
		return err;
	}
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		err = -errno;
		fprintf(stderr, "fs-gen: cannot bind to %s: %s.\n", ifname,
			strerror(errno));
		goto err_close;
	}
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
		err = -errno;
		fprintf(stderr, "fs-gen: cannot read the MAC address of %s: %s.\n",
			ifname, strerror(errno));
		goto err_close;
	}
	memcpy(src_mac, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
	return fd;

err_close:
	close(fd);
	return err;
}

/* Send one frame, waiting out full queues; 0 or a negative errno. */
/*
 * Send frames[0 .. count) with sendmmsg(), retrying what a full queue
 * refused (it takes a prefix and refuses the rest).  *sent is how many
 * went out, also on error: only those are counted in the truth.
 */
#define GEN_BATCH 32

static int gen_send_batch(int fd, __u8 (*frames)[GEN_FRAME_MAX],
			  const size_t *lens, unsigned int count,
			  unsigned int *sent, __u64 *retries)
{
	struct timespec backoff = { .tv_nsec = GEN_RETRY_NS };
	struct mmsghdr msgs[GEN_BATCH];
	struct iovec iov[GEN_BATCH];
	unsigned long tries = 0;
	unsigned int i;

	memset(msgs, 0, sizeof(msgs));
	for (i = 0; i < count; i++) {
		iov[i].iov_base = frames[i];
		iov[i].iov_len = lens[i];
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	*sent = 0;
	while (*sent < count) {
		int n = sendmmsg(fd, msgs + *sent, count - *sent, 0);

		if (n > 0) {
			for (i = *sent; i < *sent + (unsigned int)n; i++)
				if (msgs[i].msg_len != lens[i])
					return -EMSGSIZE;
			*sent += (unsigned int)n;
			tries = 0;
			continue;
		}
		if (n < 0 && errno != ENOBUFS && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (++tries > GEN_RETRY_MAX)
			return -ETIMEDOUT;
		(*retries)++;
		nanosleep(&backoff, NULL);
	}
	return 0;
}

/* Sleep until packet number `sent` is due at the requested rate.  Pacing
 * against the start time (not the previous packet) lets a late sender
 * catch up, so the average rate is exact even with coarse sleeps. */
static void gen_pace(double start, __u64 sent, __u64 rate)
{
	double due = start + (double)sent / (double)rate;
	double now = gen_now();
	struct timespec ts;

	if (due <= now)
		return;
	ts.tv_sec = (time_t)(due - now);
	ts.tv_nsec = (long)((due - now - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

/*
 * Paced runs send one frame at a time, so that each leaves when it is
 * due; unpaced ones ("as fast as possible", the load tests) batch
 * GEN_BATCH frames per sendmmsg(), several times the rate of one send()
 * per frame.  Either way a frame enters the truth only once sent.
 */
static int gen_run(int fd, const __u8 *src_mac, const struct gen_opts *o,
		   struct gen_flow *flows, const double *cdf,
		   struct gen_stats *st)
{
	static __u8 frames[GEN_BATCH][GEN_FRAME_MAX];
	struct gen_flow *batch_flow[GEN_BATCH];
	size_t lens[GEN_BATCH];
	unsigned int batch = o->rate ? 1 : GEN_BATCH;
	__u64 state = o->seed;
	double start, end;
	int err = 0;

	start = gen_now();
	end = start + o->duration;
	while (!gen_stop && !err) {
		unsigned int count = 0, sent, i;

		if (o->packets && st->packets >= o->packets)
			break;
		if (o->duration > 0 && gen_now() >= end)
			break;
		if (o->rate)
			gen_pace(start, st->packets, o->rate);
		while (count < batch &&
		       !(o->packets && st->packets + count >= o->packets)) {
			struct gen_flow *f;
			__u64 seq;

			f = o->round_robin ? &flows[(st->packets + count) % o->flows] :
			    &flows[gen_zipf_draw(cdf, o->flows, gen_uniform(&state))];
			/* The flow's frame number: those sent, and those of
			 * this batch before this one. */
			for (seq = f->packets, i = 0; i < count; i++)
				seq += batch_flow[i] == f;
			lens[count] = f->base_len + (gen_next(&state) & 63);
			gen_build_frame(frames[count], lens[count], f, src_mac,
					o->dst_mac, (__u32)seq);
			batch_flow[count++] = f;
		}
		err = gen_send_batch(fd, frames, lens, count, &sent, &st->retries);
		if (err)
			fprintf(stderr, "fs-gen: send on %s failed: %s.\n",
				o->ifname, strerror(-err));
		for (i = 0; i < sent; i++) {
			batch_flow[i]->packets++;
			batch_flow[i]->bytes += lens[i];
			st->packets++;
			st->bytes += lens[i];
		}
	}
	st->seconds = gen_now() - start;
	return err;
}

static const char *gen_proto_name(__u8 proto)
{
	return proto == IPPROTO_TCP ? "tcp" : "udp";
}

static int gen_cmp_packets(const void *a, const void *b)
{
	const struct gen_flow *x = *(struct gen_flow * const *)a;
	const struct gen_flow *y = *(struct gen_flow * const *)b;

	if (x->packets != y->packets)
		return x->packets < y->packets ? 1 : -1;
	return x < y ? -1 : x > y;
}

/* Exact number of distinct pool entries used by flows that sent anything;
 * IPv4 and IPv6 addresses of the same index are different addresses. */
static int gen_count_distinct(const struct gen_flow *flows, __u32 n,
			      __u32 pool, bool source, __u64 *distinct)
{
	__u8 *seen = calloc(2 * (size_t)pool, 1);
	__u32 i;

	if (!seen)
		return -ENOMEM;
	*distinct = 0;
	for (i = 0; i < n; i++) {
		__u32 idx = source ? flows[i].src_index : flows[i].dst_index;
		size_t slot = (flows[i].key.family == FS_FAMILY_IPV6 ? pool : 0) + idx;

		if (!flows[i].packets || seen[slot])
			continue;
		seen[slot] = 1;
		(*distinct)++;
	}
	free(seen);
	return 0;
}

static struct json_object *gen_flow_json(const struct gen_flow *f)
{
	struct json_object *o = json_object_new_object();
	int af = f->key.family == FS_FAMILY_IPV4 ? AF_INET : AF_INET6;
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];

	inet_ntop(af, f->key.src, src, sizeof(src));
	inet_ntop(af, f->key.dst, dst, sizeof(dst));
	json_object_object_add(o, "family", json_object_new_int(f->key.family));
	json_object_object_add(o, "proto", json_object_new_string(gen_proto_name(f->key.proto)));
	json_object_object_add(o, "proto_num", json_object_new_int(f->key.proto));
	json_object_object_add(o, "src", json_object_new_string(src));
	json_object_object_add(o, "dst", json_object_new_string(dst));
	json_object_object_add(o, "sport", json_object_new_int(ntohs(f->key.sport)));
	json_object_object_add(o, "dport", json_object_new_int(ntohs(f->key.dport)));
	json_object_object_add(o, "packets", json_object_new_int64((int64_t)f->packets));
	json_object_object_add(o, "bytes", json_object_new_int64((int64_t)f->bytes));
	return o;
}

static int gen_write_truth(const struct gen_opts *o, struct gen_flow *flows,
			   const struct gen_stats *st)
{
	struct json_object *root, *params, *list;
	struct gen_flow **order = calloc(o->flows, sizeof(*order));
	__u64 distinct_flows = 0, distinct_sources, distinct_dests;
	int err = 0;
	__u32 i;

	/* A truth file with a made-up count would fail the test that reads
	 * it for the wrong reason: no file rather than a wrong one. */
	if (!order ||
	    gen_count_distinct(flows, o->flows, o->sources, true, &distinct_sources) ||
	    gen_count_distinct(flows, o->flows, o->destinations, false, &distinct_dests)) {
		fprintf(stderr, "fs-gen: out of memory for the truth file.\n");
		free(order);
		return -ENOMEM;
	}
	root = json_object_new_object();
	params = json_object_new_object();
	list = json_object_new_array();
	for (i = 0; i < o->flows; i++)
		order[i] = &flows[i];
	qsort(order, o->flows, sizeof(*order), gen_cmp_packets);
	for (i = 0; i < o->flows && order[i]->packets; i++) {
		json_object_array_add(list, gen_flow_json(order[i]));
		distinct_flows++;
	}

	json_object_object_add(params, "interface", json_object_new_string(o->ifname));
	json_object_object_add(params, "flows", json_object_new_int64(o->flows));
	json_object_object_add(params, "packets", json_object_new_int64((int64_t)o->packets));
	json_object_object_add(params, "zipf", json_object_new_double(o->zipf));
	json_object_object_add(params, "round_robin", json_object_new_boolean(o->round_robin));
	json_object_object_add(params, "seed", json_object_new_uint64(o->seed));
	json_object_object_add(params, "ipv6_share", json_object_new_double(o->ipv6_share));
	json_object_object_add(params, "sources", json_object_new_int64(o->sources));
	json_object_object_add(params, "destinations", json_object_new_int64(o->destinations));
	json_object_object_add(params, "rate", json_object_new_int64((int64_t)o->rate));
	json_object_object_add(params, "duration", json_object_new_double(o->duration));

	json_object_object_add(root, "params", params);
	json_object_object_add(root, "total_packets", json_object_new_int64((int64_t)st->packets));
	json_object_object_add(root, "total_bytes", json_object_new_int64((int64_t)st->bytes));
	json_object_object_add(root, "distinct_flows", json_object_new_int64((int64_t)distinct_flows));
	json_object_object_add(root, "distinct_sources",
			       json_object_new_int64((int64_t)distinct_sources));
	json_object_object_add(root, "distinct_destinations",
			       json_object_new_int64((int64_t)distinct_dests));
	json_object_object_add(root, "elapsed_seconds", json_object_new_double(st->seconds));
	json_object_object_add(root, "send_retries", json_object_new_int64((int64_t)st->retries));
	json_object_object_add(root, "flows", list);

	if (json_object_to_file_ext(o->truth, root, JSON_C_TO_STRING_PRETTY) < 0) {
		fprintf(stderr, "fs-gen: cannot write the truth file %s.\n",
			o->truth);
		err = -EIO;
	}
	json_object_put(root);
	free(order);
	return err;
}

static void gen_usage(FILE *out)
{
	fprintf(out,
		"usage: fs-gen -i IFACE [options]\n"
		"  -i, --interface IFACE   send out of IFACE (a veth in a test namespace)\n"
		"      --dst-mac MAC       destination MAC, the peer's (default ff:ff:ff:ff:ff:ff)\n"
		"      --flows F           number of flows (default 1000, max %u)\n"
		"      --packets N         stop after N packets (0: only --duration)\n"
		"      --zipf S            Zipf exponent of the flow sizes (default 1.1)\n"
		"      --seed X            seed of everything random (default 1)\n"
		"      --ipv6-share F      fraction of flows that are IPv6 (default 0.3)\n"
		"      --sources S         source address pool per family (default 500)\n"
		"      --destinations D    destination address pool per family (default 200)\n"
		"      --rate PPS          packets per second (default 0: as fast as possible)\n"
		"      --duration SECONDS  stop after this long (0: only --packets)\n"
		"      --truth FILE        write the ground truth as JSON to FILE\n"
		"      --round-robin       flow i from source i mod S, packet j of flow j mod F\n"
		"                          (every source F/S flows, every flow its share of\n"
		"                          packets; --zipf is then unused)\n",
		GEN_MAX_FLOWS);
}

static int gen_parse_u64(const char *s, const char *what, __u64 max, __u64 *out)
{
	char *end;
	unsigned long long v;

	/* Decimal only: base 0 would read "010" as 8.  strtoull also
	 * skips blanks and negates "-1"; a count starts with a digit. */
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || s[0] < '0' || s[0] > '9' || v > max) {
		fprintf(stderr, "fs-gen: %s must be an integer from 0 to %llu, not \"%s\".\n",
			what, (unsigned long long)max, s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int gen_parse_double(const char *s, const char *what, double lo,
			    double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !*s || !(v >= lo && v <= hi)) {
		fprintf(stderr, "fs-gen: %s must be a number from %g to %g, not \"%s\".\n",
			what, lo, hi, s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

enum {
	OPT_DST_MAC = 256, OPT_FLOWS, OPT_PACKETS, OPT_ZIPF, OPT_SEED,
	OPT_IPV6_SHARE, OPT_SOURCES, OPT_DESTS, OPT_RATE, OPT_DURATION,
	OPT_TRUTH, OPT_ROUND_ROBIN,
};

static int gen_parse_args(int argc, char **argv, struct gen_opts *o)
{
	static const struct option longopts[] = {
		{ "interface", required_argument, NULL, 'i' },
		{ "dst-mac", required_argument, NULL, OPT_DST_MAC },
		{ "flows", required_argument, NULL, OPT_FLOWS },
		{ "packets", required_argument, NULL, OPT_PACKETS },
		{ "zipf", required_argument, NULL, OPT_ZIPF },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "ipv6-share", required_argument, NULL, OPT_IPV6_SHARE },
		{ "sources", required_argument, NULL, OPT_SOURCES },
		{ "destinations", required_argument, NULL, OPT_DESTS },
		{ "rate", required_argument, NULL, OPT_RATE },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "truth", required_argument, NULL, OPT_TRUTH },
		{ "round-robin", no_argument, NULL, OPT_ROUND_ROBIN },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	__u64 v;
	int c, err = 0;

	opterr = 0;
	while (!err && (c = getopt_long(argc, argv, "i:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			o->ifname = optarg;
			break;
		case OPT_DST_MAC:
			err = gen_parse_mac(optarg, o->dst_mac);
			if (err)
				fprintf(stderr, "fs-gen: \"%s\" is not a MAC address (aa:bb:cc:dd:ee:ff).\n",
					optarg);
			break;
		case OPT_FLOWS:
			err = gen_parse_u64(optarg, "--flows", GEN_MAX_FLOWS, &v);
			o->flows = (__u32)v;
			break;
		case OPT_PACKETS:
			err = gen_parse_u64(optarg, "--packets", ~0ULL >> 1, &o->packets);
			break;
		case OPT_ZIPF:
			err = gen_parse_double(optarg, "--zipf", 0, 10, &o->zipf);
			break;
		case OPT_SEED:
			err = gen_parse_u64(optarg, "--seed", ~0ULL, &o->seed);
			break;
		case OPT_IPV6_SHARE:
			err = gen_parse_double(optarg, "--ipv6-share", 0, 1, &o->ipv6_share);
			break;
		case OPT_SOURCES:
			err = gen_parse_u64(optarg, "--sources", GEN_MAX_ADDRS, &v);
			o->sources = (__u32)v;
			break;
		case OPT_DESTS:
			err = gen_parse_u64(optarg, "--destinations", GEN_MAX_ADDRS, &v);
			o->destinations = (__u32)v;
			break;
		case OPT_RATE:
			err = gen_parse_u64(optarg, "--rate", 100000000ULL, &o->rate);
			break;
		case OPT_DURATION:
			err = gen_parse_double(optarg, "--duration", 0, 86400, &o->duration);
			break;
		case OPT_TRUTH:
			o->truth = optarg;
			break;
		case OPT_ROUND_ROBIN:
			o->round_robin = true;
			break;
		case 'h':
			gen_usage(stdout);
			exit(0);
		default:
			/* One line, instead of getopt's and a usage block. */
			fprintf(stderr, "fs-gen: '%s' is not an option or lacks its value (see --help)\n",
				argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (err)
		return err;
	if (optind < argc) {
		fprintf(stderr, "fs-gen: unexpected argument \"%s\".\n", argv[optind]);
		return -EINVAL;
	}
	if (!o->ifname) {
		fprintf(stderr, "fs-gen: an interface is required (-i IFACE).\n");
		return -EINVAL;
	}
	if (!o->flows || !o->sources || !o->destinations) {
		fprintf(stderr, "fs-gen: --flows, --sources and --destinations must be at least 1.\n");
		return -EINVAL;
	}
	if (!o->packets && o->duration <= 0) {
		fprintf(stderr, "fs-gen: give --packets or --duration, or it would never stop.\n");
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct gen_opts o = {
		.dst_mac = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
		.flows = 1000,
		.packets = 0,
		.zipf = 1.1,
		.seed = 1,
		.ipv6_share = 0.3,
		.sources = 500,
		.destinations = 200,
	};
	struct sigaction sa = { .sa_handler = gen_on_signal };
	struct gen_stats st = {};
	struct gen_flow *flows = NULL;
	__u8 src_mac[ETH_ALEN];
	double *cdf = NULL;
	int fd, err;
	__u32 i;

	err = gen_parse_args(argc, argv, &o);
	if (err)
		return 2;
	fd = gen_open_socket(o.ifname, src_mac);
	if (fd < 0)
		return 1;

	flows = calloc(o.flows, sizeof(*flows));
	cdf = gen_zipf_cdf(o.flows, o.zipf);
	if (!flows || !cdf) {
		fprintf(stderr, "fs-gen: out of memory for %u flows.\n", o.flows);
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < o.flows; i++)
		gen_make_flow(&flows[i], i, &o);

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	err = gen_run(fd, src_mac, &o, flows, cdf, &st);
	fprintf(stderr, "fs-gen: sent %llu packets, %llu bytes in %.2f s (%.0f pps), %llu retries on full queues\n",
		(unsigned long long)st.packets, (unsigned long long)st.bytes,
		st.seconds, st.seconds > 0 ? (double)st.packets / st.seconds : 0.0,
		(unsigned long long)st.retries);
	/* The truth is written even after an error: it describes exactly the
	 * frames that were sent. */
	if (o.truth) {
		int werr = gen_write_truth(&o, flows, &st);

		if (!err)
			err = werr;
	}
out:
	free(cdf);
	free(flows);
	close(fd);
	return err ? 1 : 0;
}
