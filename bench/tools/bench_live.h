/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * bench_live.h - what the live benchmarks share (fs-livebench.c,
 * XDP; fs-tpbench.c, the tracepoint frontends): the traffic
 * generator (prebuilt frames of a Zipf mix of flows, sent with sendmmsg on
 * an AF_PACKET socket from a thread of its own, see fs-livebench.c,
 * "Traffic"), entering a named network namespace, the sending socket
 * opened in another namespace than the caller's, a program's run-time
 * statistics, medians, and a report's rows.
 *
 * Set g->flows, zipf, ipv6_share, seed, fd, src_mac and dst_mac, then
 * gen_prepare(g) and start gen_main(g) in a thread; it sends while
 * sent < budget and says idle when it has caught up.
 *
 * The rest of what the two share is by job: bench_live_opts.h (the
 * options both take), bench_live_run.h (windows closed the daemon's way,
 * phases of traffic on the program measured, the run's setup).
 */
#ifndef FLOWSKETCH_BENCH_LIVE_H
#define FLOWSKETCH_BENCH_LIVE_H

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <bpf/bpf.h>

#define LIVE_SEQ_LEN (1U << 20)		/* packets before the sequence repeats */
#define LIVE_FRAME_SLOT 192U		/* bytes per prebuilt frame */
#define LIVE_BATCH 64U			/* frames per sendmmsg */
#define LB_MAX_ROUNDS 64		/* --rounds at most */

struct gen {
	int fd;
	__u8 src_mac[ETH_ALEN], dst_mac[ETH_ALEN];
	__u8 *frames;			/* flows x LIVE_FRAME_SLOT */
	/* Another set of the same flows (other sources, say), sent instead
	 * of frames while use_alt is set: switched between batches. */
	__u8 *alt_frames;
	_Atomic int use_alt;
	__u16 *lens;			/* per flow */
	__u32 *seq;			/* LIVE_SEQ_LEN flow indices */
	int cpu;			/* -1: not pinned */
	__u32 flows;			/* traffic: set before gen_prepare() */
	double zipf, ipv6_share;
	__u64 seed;
	pthread_t thread;
	_Atomic __u64 budget;		/* send until sent reaches this */
	_Atomic __u64 sent;
	_Atomic __u64 retries;
	_Atomic int idle;
	_Atomic int stop;
	_Atomic int err;		/* 0 or a positive errno */
};

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static void sleep_ns(__u64 ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000ULL,
			       .tv_nsec = ns % 1000000000ULL };

	nanosleep(&ts, NULL);
}

static __u64 splitmix(__u64 *s)
{
	__u64 z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double uniform(__u64 *s)
{
	return (double)(splitmix(s) >> 11) * 0x1.0p-53;
}

static __u16 csum16(const __u8 *p, size_t len)
{
	__u32 sum = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (__u32)p[i] << 8 | p[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((__u16)~sum);
}

/*
 * Frame of flow i: private addresses (10.64/10 -> 10.128/10, fd00:0:5:: ->
 * fd00:0:d::), source port 1024 + i % 64512 and a destination port that
 * makes keys distinct.  Checksums: IPv4 header only; the receiving stack
 * drops the frames after XDP anyway (no address, no forwarding).
 */
static void gen_frame(struct gen *g, __u32 i, __u64 seed)
{
	__u64 s = seed ^ ((__u64)i * 0xd1b54a32d192ed03ULL);
	bool v6 = uniform(&s) < g->ipv6_share;
	bool tcp = splitmix(&s) & 1;
	__u32 src = (__u32)(splitmix(&s) % 50000) + 1;
	__u32 dst = (__u32)(splitmix(&s) % 20000) + 1;
	__u32 minlen = 14 + (v6 ? 40 : 20) + (tcp ? 20 : 8);
	__u32 len = 64 + (__u32)(splitmix(&s) % 128);
	__u8 *f = g->frames + (size_t)i * LIVE_FRAME_SLOT, *l4;
	__u16 sport = htons((__u16)(1024 + i % 64512));
	__u16 dport = htons((__u16)(i < 64512 ? 53 + (i % 7) * 1000 : 20000 + i / 64512));

	if (len < minlen)
		len = minlen;
	memset(f, 0, LIVE_FRAME_SLOT);
	memcpy(f, g->dst_mac, ETH_ALEN);
	memcpy(f + 6, g->src_mac, ETH_ALEN);
	if (!v6) {
		__u8 *ip = f + 14;
		__u32 sa = htonl(((10U << 24) | (64U << 16)) + src);
		__u32 da = htonl(((10U << 24) | (128U << 16)) + dst);

		f[12] = 0x08;
		ip[0] = 0x45;
		ip[2] = (__u8)((len - 14) >> 8);
		ip[3] = (__u8)(len - 14);
		ip[6] = 0x40;		/* DF */
		ip[8] = 64;
		ip[9] = tcp ? 6 : 17;
		memcpy(ip + 12, &sa, 4);
		memcpy(ip + 16, &da, 4);
		memcpy(ip + 10, &(__u16){ csum16(ip, 20) }, 2);
		l4 = ip + 20;
	} else {
		__u8 *ip = f + 14;
		__u16 plen = htons((__u16)(len - 54));

		f[12] = 0x86;
		f[13] = 0xdd;
		ip[0] = 0x60;
		memcpy(ip + 4, &plen, 2);
		ip[6] = tcp ? 6 : 17;
		ip[7] = 64;
		ip[8] = 0xfd; ip[13] = 0x05;
		ip[20] = (__u8)(src >> 24); ip[21] = (__u8)(src >> 16);
		ip[22] = (__u8)(src >> 8); ip[23] = (__u8)src;
		ip[24] = 0xfd; ip[29] = 0x0d;
		ip[36] = (__u8)(dst >> 24); ip[37] = (__u8)(dst >> 16);
		ip[38] = (__u8)(dst >> 8); ip[39] = (__u8)dst;
		l4 = ip + 40;
	}
	memcpy(l4, &sport, 2);
	memcpy(l4 + 2, &dport, 2);
	if (tcp) {
		l4[12] = 5 << 4;
		l4[13] = 0x18;		/* PSH, ACK */
	} else {
		__u16 ulen = htons((__u16)(len - (l4 - f)));

		memcpy(l4 + 4, &ulen, 2);
	}
	g->lens[i] = (__u16)len;
}

static int gen_prepare(struct gen *g)
{
	double *cdf, sum = 0;
	__u64 s = g->seed;
	__u32 i;

	g->frames = malloc((size_t)g->flows * LIVE_FRAME_SLOT);
	g->lens = malloc((size_t)g->flows * sizeof(*g->lens));
	g->seq = malloc((size_t)LIVE_SEQ_LEN * sizeof(*g->seq));
	cdf = malloc((size_t)g->flows * sizeof(*cdf));
	if (!g->frames || !g->lens || !g->seq || !cdf) {
		free(cdf);
		return -ENOMEM;
	}
	for (i = 0; i < g->flows; i++)
		gen_frame(g, i, g->seed);
	for (i = 0; i < g->flows; i++) {
		sum += pow((double)i + 1, -g->zipf);
		cdf[i] = sum;
	}
	for (i = 0; i < LIVE_SEQ_LEN; i++) {
		double u = uniform(&s) * sum;
		__u32 lo = 0, hi = g->flows - 1;

		while (lo < hi) {
			__u32 mid = lo + (hi - lo) / 2;

			if (cdf[mid] > u)
				hi = mid;
			else
				lo = mid + 1;
		}
		g->seq[i] = lo;
	}
	free(cdf);
	return 0;
}

static void pin_to(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void *gen_main(void *arg)
{
	struct gen *g = arg;
	struct mmsghdr msgs[LIVE_BATCH];
	struct iovec iov[LIVE_BATCH];
	__u8 *frames;
	__u64 pos = 0;
	unsigned int i;

	pin_to(g->cpu);
	memset(msgs, 0, sizeof(msgs));
	for (i = 0; i < LIVE_BATCH; i++) {
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	while (!atomic_load(&g->stop)) {
		__u64 sent = atomic_load(&g->sent);
		__u64 budget = atomic_load(&g->budget);
		unsigned int n;
		int r;

		if (sent >= budget) {
			atomic_store(&g->idle, 1);
			sleep_ns(50000);
			continue;
		}
		atomic_store(&g->idle, 0);
		n = budget - sent < LIVE_BATCH ? (unsigned int)(budget - sent) : LIVE_BATCH;
		frames = atomic_load(&g->use_alt) && g->alt_frames ? g->alt_frames : g->frames;
		for (i = 0; i < n; i++) {
			__u32 f = g->seq[(pos + i) & (LIVE_SEQ_LEN - 1)];

			iov[i].iov_base = frames + (size_t)f * LIVE_FRAME_SLOT;
			iov[i].iov_len = g->lens[f];
		}
		r = sendmmsg(g->fd, msgs, n, 0);
		if (r > 0) {
			pos += (unsigned int)r;
			atomic_fetch_add(&g->sent, (__u64)r);
			continue;
		}
		if (r < 0 && errno != ENOBUFS && errno != EAGAIN && errno != EINTR) {
			atomic_store(&g->err, errno);
			atomic_store(&g->idle, 1);
			return NULL;
		}
		/* The queue is full: let the receiver drain it. */
		atomic_fetch_add(&g->retries, 1);
		sched_yield();
	}
	atomic_store(&g->idle, 1);
	return NULL;
}

static int enter_netns(const char *name)
{
	char path[256];
	int fd, err = 0;

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (setns(fd, CLONE_NEWNET))
		err = -errno;
	close(fd);
	return err;
}

static int iface_mac(int fd, const char *ifname, __u8 *mac)
{
	struct ifreq ifr = {};

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0)
		return -errno;
	memcpy(mac, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
	return 0;
}

/* Open the sending socket in the sending namespace, from a helper thread
 * so that this thread stays in the receiving one.  The socket keeps its
 * namespace; the generator thread then only needs the descriptor. */
struct sock_req {
	const char *netns, *ifname;
	int fd;
	__u8 mac[ETH_ALEN];
	int err;
};

static void *open_sock_main(void *arg)
{
	struct sock_req *q = arg;
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };

	q->err = enter_netns(q->netns);
	if (q->err)
		return NULL;
	sll.sll_ifindex = (int)if_nametoindex(q->ifname);
	if (!sll.sll_ifindex) {
		q->err = -ENODEV;
		return NULL;
	}
	q->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (q->fd < 0) {
		q->err = -errno;
		return NULL;
	}
	if (bind(q->fd, (struct sockaddr *)&sll, sizeof(sll)) < 0 ||
	    iface_mac(q->fd, q->ifname, q->mac)) {
		q->err = -errno;
		close(q->fd);
		q->fd = -1;
	}
	return NULL;
}

/* ------------------------------------------------------------ statistics */

struct stat_snap {
	__u64 run_ns, run_cnt;
};

static int prog_stats(int fd, struct stat_snap *s)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	s->run_ns = info.run_time_ns;
	s->run_cnt = info.run_cnt;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median: the middle one, or the mean of the two middle ones. */
static double median(double *v, __u32 n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The figure as printed (one decimal), so that ratios follow from it. */
static double printed1(double v)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%.1f", v);
	return strtod(buf, NULL);
}

/* One program's (or phase's) figures in one round. */
struct lb_sample {
	double ns;		/* per run */
	__u64 runs;		/* the program's runs in the phase */
	__u64 sent;		/* frames the generator sent in it */
	double seconds;		/* wall time of the phase's sending */
};

/* The head of a report's table: two name columns, then the figures. */
static void lb_table_head(int wa, const char *a, int wb, const char *b)
{
	printf("  %-*s %-*s %9s %9s %9s %11s %9s\n", wa, a, wb, b, "ns/pkt",
	       "min", "max", "packets", "kpps");
}

/*
 * A row of it: the median over the n samples s[0..n) (rounds, or a
 * phase's bursts) as printed, the smallest and largest, the runs and
 * their rate over the phases' wall time.  Returns the median; adds runs,
 * sent and seconds to *sum.
 */
static double lb_table_row(int wa, const char *a, int wb, const char *b,
			   const struct lb_sample *s, __u32 n,
			   struct lb_sample *sum)
{
	double v[n], lo = 1e300, hi = 0, med;
	struct lb_sample t = { 0 };
	__u32 r;

	for (r = 0; r < n; r++) {
		v[r] = s[r].ns;
		lo = v[r] < lo ? v[r] : lo;
		hi = v[r] > hi ? v[r] : hi;
		t.runs += s[r].runs;
		t.sent += s[r].sent;
		t.seconds += s[r].seconds;
	}
	med = printed1(median(v, n));
	printf("  %-*s %-*s %9.1f %9.1f %9.1f %11llu %9.1f\n", wa, a, wb, b,
	       med, lo, hi, (unsigned long long)t.runs,
	       t.seconds > 0 ? (double)t.runs / t.seconds / 1e3 : 0.0);
	sum->runs += t.runs;
	sum->sent += t.sent;
	sum->seconds += t.seconds;
	return med;
}

#endif /* FLOWSKETCH_BENCH_LIVE_H */
