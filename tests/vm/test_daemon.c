// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_daemon.c - flowsketchd and the flowsketch CLI on both datapaths.
 *
 * Issue 3 asks that the daemon pick the kfunc path by itself when the
 * module is loaded and that `flowsketch status` say which path is in use;
 * only a kernel that loads modules can show that, hence this group in the
 * VM.  The real, statically linked flowsketchd and flowsketch (lib.sh)
 * run as children of this program:
 *
 *   1. module loaded: the daemon must report "datapath":"kfunc", count
 *      real UDP traffic within the Count-Min bound, hold the module
 *      (rmmod refused while it runs), exit 0 on SIGTERM leaving no pin
 *      or socket, after which rmmod works;
 *   2. module gone: the same daemon must report "datapath":"bpf" and
 *      count the same traffic just as well.
 *
 * Everything runs in a network namespace this program creates, where lo
 * is the only interface; the daemon attaches generic XDP to that lo, and
 * the datagrams sent over it pass its receive path once each.
 *
 * Ground truth is the traffic sent: per flow (five-tuple) the datagram
 * count and the frame length the datapath counts as bytes (datapath.bpf.h:
 * the whole frame, 14 Ethernet + 20 IPv4 or 40 IPv6 + 8 UDP + payload).
 * Count-Min never undercounts and overcounts by more than eps * N only
 * with probability delta, so each flow's count must lie in [truth, truth +
 * eps * N], and every flow listed must be one that was sent; the span's
 * totals are exact.  The bounds are computed here, eps = e / cms_width
 * from status --json .params and N the packets (bytes) sent, and rse =
 * 1.04 / sqrt(2^hll_precision), never the bound or error the daemon states
 * (its stated error_bound is checked against ours instead).
 */
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>
#include "vmtest.h"
#include "spawn.h"

#define FS_VM_FSD "/flowsketchd"
#define FS_VM_CLI "/flowsketch"
#define FS_VM_PIN_DIR "/sys/fs/bpf/fs-vm"
#define FS_VM_SOCK_DIR "/tmp/fsd"
#define FS_VM_SOCK FS_VM_SOCK_DIR "/flowsketchd.sock"
#define FS_VM_FSD_LOG "/tmp/flowsketchd.log"
#define FS_VM_CLI_LOG "/tmp/flowsketch.log"
/* One-second windows; a 60 s span covers every window of a run. */
#define FS_VM_WINDOW "1"
#define FS_VM_SPAN "60"
#define FS_VM_CLI_TIMEOUT_MS 10000
#define FS_VM_READY_TIMEOUT_MS 30000
#define FS_VM_ROTATE_TIMEOUT_MS 30000
#define FS_VM_ANSWER_MAX 65536

#define FS_VM_ETH_HLEN 14
#define FS_VM_UDP_HLEN 8

/* Distinct counts and sizes, so a count or a byte total credited to the
 * wrong flow shows; IPv4 and IPv6. */
static const struct fs_vm_udp_flow {
	int family;
	__u16 sport, dport;
	unsigned int packets, payload;
} fs_vm_udp_flows[] = {
	{ AF_INET, 40001, 7001, 400, 64 },
	{ AF_INET, 40002, 7002, 200, 512 },
	{ AF_INET, 40003, 7003, 100, 1400 },
	{ AF_INET6, 40004, 7004, 250, 128 },
	{ AF_INET6, 40005, 7005, 50, 1000 },
};

#define FS_VM_NFLOWS (sizeof(fs_vm_udp_flows) / sizeof(fs_vm_udp_flows[0]))
/* 127.0.0.1 and ::1, each both source and destination. */
#define FS_VM_NADDRS 2

struct fs_vm_sent {
	__u64 packets, bytes;
};

static __u64 fs_vm_frame_len(const struct fs_vm_udp_flow *f)
{
	return FS_VM_ETH_HLEN + (f->family == AF_INET ? 20 : 40) +
	       FS_VM_UDP_HLEN + f->payload;
}

/*
 * Send every flow's datagrams, round robin so that each window holds a
 * mix.  A socket is bound on each destination port, so no datagram draws
 * an ICMP port-unreachable (a flow we would not have sent); what those
 * sockets drop when their buffer fills was counted before, on lo's
 * receive path.  0 or -errno, *sent what went out.
 */
static int fs_vm_send_traffic(struct fs_vm_sent *sent)
{
	int tx[FS_VM_NFLOWS], rx[FS_VM_NFLOWS];
	static char payload[1500];
	unsigned int i, round, busy;
	int err = 0;

	memset(sent, 0, sizeof(*sent));
	for (i = 0; i < FS_VM_NFLOWS; i++)
		tx[i] = rx[i] = -1;
	for (i = 0; i < FS_VM_NFLOWS; i++) {
		const struct fs_vm_udp_flow *f = &fs_vm_udp_flows[i];

		rx[i] = fs_vm_udp_bound(f->family, f->dport);
		tx[i] = fs_vm_udp_bound(f->family, f->sport);
		if (rx[i] < 0 || tx[i] < 0) {
			err = rx[i] < 0 ? rx[i] : tx[i];
			goto out;
		}
	}
	memset(payload, 0xa5, sizeof(payload));
	for (round = 0, busy = 1; busy; round++) {
		busy = 0;
		for (i = 0; i < FS_VM_NFLOWS; i++) {
			const struct fs_vm_udp_flow *f = &fs_vm_udp_flows[i];
			struct sockaddr_storage dst;
			socklen_t len;

			if (round >= f->packets)
				continue;
			busy = 1;
			len = fs_vm_loopback(f->family, f->dport, &dst);
			if (sendto(tx[i], payload, f->payload, 0,
				   (struct sockaddr *)&dst, len) !=
			    (ssize_t)f->payload) {
				err = -errno;
				goto out;
			}
			sent->packets++;
			sent->bytes += fs_vm_frame_len(f);
		}
	}
out:
	for (i = 0; i < FS_VM_NFLOWS; i++) {
		if (tx[i] >= 0)
			close(tx[i]);
		if (rx[i] >= 0)
			close(rx[i]);
	}
	return err;
}

/* Run the CLI with args after "--socket SOCK"; its JSON answer or NULL
 * (the reason as diagnostics). */
static struct json_object *fs_vm_cli(const char *const *args, bool quiet)
{
	static char out[FS_VM_ANSWER_MAX];
	char *argv[16] = { FS_VM_CLI, "--socket", FS_VM_SOCK };
	struct json_object *answer;
	unsigned int n = 3;
	int rc;

	while (*args && n < sizeof(argv) / sizeof(argv[0]) - 1)
		argv[n++] = (char *)*args++;
	argv[n] = NULL;
	unlink(FS_VM_CLI_LOG);
	rc = fs_vm_run_capture(argv, out, sizeof(out), FS_VM_CLI_LOG,
			       FS_VM_CLI_TIMEOUT_MS);
	if (rc) {
		if (!quiet) {
			fs_vm_diag("flowsketch %s: %s", argv[3],
				   rc < 0 ? strerror(-rc) : "non-zero exit");
			fs_vm_diag_file(FS_VM_CLI_LOG);
		}
		return NULL;
	}
	answer = json_tokener_parse(out);
	if (!answer && !quiet)
		fs_vm_diag("flowsketch %s printed no JSON: %.200s", argv[3], out);
	return answer;
}

static struct json_object *fs_vm_status(bool quiet)
{
	static const char *const args[] = { "status", "--json", NULL };

	return fs_vm_cli(args, quiet);
}

/* o.key (o.key.sub when sub), or NULL. */
static struct json_object *fs_vm_get(struct json_object *o, const char *key,
				     const char *sub)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return NULL;
	if (sub && !json_object_object_get_ex(v, sub, &v))
		return NULL;
	return v;
}

/* A count from the answer; -1 (never a count) when it is missing. */
static long long fs_vm_count(struct json_object *o, const char *key,
			     const char *sub)
{
	struct json_object *v = fs_vm_get(o, key, sub);

	return v && json_object_is_type(v, json_type_int) ?
	       (long long)json_object_get_int64(v) : -1;
}

static const char *fs_vm_str(struct json_object *o, const char *key)
{
	struct json_object *v = fs_vm_get(o, key, NULL);

	return v && json_object_is_type(v, json_type_string) ?
	       json_object_get_string(v) : "(none)";
}

/* Status once the daemon answers, or NULL if it died or never did. */
static struct json_object *fs_vm_daemon_ready(pid_t pid)
{
	const struct timespec tick = { .tv_nsec = 100 * 1000 * 1000 };
	struct json_object *status;
	int waited, wstatus;

	for (waited = 0; waited < FS_VM_READY_TIMEOUT_MS; waited += 100) {
		status = fs_vm_status(true);
		if (status)
			return status;
		if (fs_vm_exited(pid, &wstatus)) {
			fs_vm_diag("flowsketchd exited before answering (status 0x%x)",
				   wstatus);
			return NULL;
		}
		nanosleep(&tick, NULL);
	}
	return NULL;
}

/* Packets in the daemon's finished windows once they reach `want` (the
 * windows holding the traffic have rotated), or what they held at the
 * timeout. */
static long long fs_vm_wait_windows(__u64 want)
{
	const struct timespec tick = { .tv_nsec = 200 * 1000 * 1000 };
	long long total = -1;
	int waited;

	for (waited = 0; waited < FS_VM_ROTATE_TIMEOUT_MS; waited += 200) {
		struct json_object *status = fs_vm_status(false);

		total = fs_vm_count(status, "totals", "packets");
		json_object_put(status);
		if (total >= 0 && (__u64)total >= want)
			break;
		nanosleep(&tick, NULL);
	}
	return total;
}

static bool fs_vm_flow_is(struct json_object *jf, const struct fs_vm_udp_flow *f)
{
	const char *addr = f->family == AF_INET ? "127.0.0.1" : "::1";

	return !strcmp(fs_vm_str(jf, "src"), addr) &&
	       !strcmp(fs_vm_str(jf, "dst"), addr) &&
	       !strcmp(fs_vm_str(jf, "proto"), "udp") &&
	       fs_vm_count(jf, "sport", NULL) == f->sport &&
	       fs_vm_count(jf, "dport", NULL) == f->dport;
}

/* The sketch's parameters, read once from status --json. */
struct fs_vm_params {
	long long cms_width, hll_p;
};

/* How many sent flows top lists with packets and bytes in
 * [truth, truth + bound]; each one that is not is explained.  *unknown:
 * how many listed flows are none of those sent. */
static unsigned int fs_vm_top_flows_ok(struct json_object *top, double bound_p,
				       double bound_b, unsigned int *unknown)
{
	struct json_object *flows = fs_vm_get(top, "flows", NULL);
	size_t nlisted = flows ? json_object_array_length(flows) : 0;
	unsigned int i, good = 0;
	size_t j;

	for (i = 0; i < FS_VM_NFLOWS; i++) {
		const struct fs_vm_udp_flow *f = &fs_vm_udp_flows[i];
		long long want_p = f->packets;
		long long want_b = (long long)(f->packets * fs_vm_frame_len(f));
		struct json_object *jf = NULL;
		long long p, b;

		for (j = 0; j < nlisted && !jf; j++)
			if (fs_vm_flow_is(json_object_array_get_idx(flows, j), f))
				jf = json_object_array_get_idx(flows, j);
		if (!jf) {
			fs_vm_diag("flow to port %u is not in top", f->dport);
			continue;
		}
		p = fs_vm_count(jf, "packets", NULL);
		b = fs_vm_count(jf, "bytes", NULL);
		if (p < want_p || p > want_p + bound_p ||
		    b < want_b || b > want_b + bound_b) {
			fs_vm_diag("flow to port %u: %lld packets, %lld bytes; sent %lld, %lld (bounds %.1f, %.1f)",
				   f->dport, p, b, want_p, want_b, bound_p,
				   bound_b);
			continue;
		}
		good++;
	}
	*unknown = 0;
	for (j = 0; j < nlisted; j++) {
		struct json_object *jf = json_object_array_get_idx(flows, j);

		for (i = 0; i < FS_VM_NFLOWS; i++)
			if (fs_vm_flow_is(jf, &fs_vm_udp_flows[i]))
				break;
		if (i == FS_VM_NFLOWS) {
			fs_vm_diag("top lists a flow never sent: %s", json_object_to_json_string(jf));
			(*unknown)++;
		}
	}
	return good;
}

/* |estimate - truth| within 3 standard errors, rounded up to a whole
 * item since the daemon rounds its estimates. */
static bool fs_vm_distinct_ok(struct json_object *flows, const char *key,
			      long long truth, double rse)
{
	long long est = fs_vm_count(flows, key, NULL);
	double tol;

	if (est < 0)
		return false;
	tol = ceil(3 * rse * (double)truth);
	return fabs((double)(est - truth)) <= tol;
}

/* What the daemon counted of the traffic: top's totals and flows, flows'
 * distinct counts. */
static void fs_vm_check_counts(const char *path, const struct fs_vm_sent *sent,
			       const struct fs_vm_params *pr)
{
	/* eps * N with eps = e / w; rse = 1.04 / sqrt(m). */
	double bound_p = M_E / (double)pr->cms_width * (double)sent->packets;
	double bound_b = M_E / (double)pr->cms_width * (double)sent->bytes;
	double rse = 1.04 / sqrt(ldexp(1.0, (int)pr->hll_p));
	long long sb_p, sb_b;
	/* What lo received: on lo every frame sent is also received, and
	 * the egress frontend counts the sending (both directions would be
	 * twice the traffic). */
	static const char *const top_args[] = {
		"top", "-n", "20", "--json", "--once", "--span", FS_VM_SPAN,
		"--direction", "in", NULL
	};
	static const char *const flows_args[] = {
		"flows", "--json", "--span", FS_VM_SPAN, "--direction", "in", NULL
	};
	struct json_object *top, *flows;
	long long tp, tb;
	unsigned int good, unknown;

	top = fs_vm_cli(top_args, false);
	tp = fs_vm_count(top, "total_packets", NULL);
	tb = fs_vm_count(top, "total_bytes", NULL);
	fs_vm_tap(tp == (long long)sent->packets && tb == (long long)sent->bytes,
		  "daemon, %s: top's span totals %lld packets, %lld bytes; sent %llu, %llu",
		  path, tp, tb, (unsigned long long)sent->packets,
		  (unsigned long long)sent->bytes);
	good = fs_vm_top_flows_ok(top, bound_p, bound_b, &unknown);
	fs_vm_tap(good == FS_VM_NFLOWS,
		  "daemon, %s: top lists %u of %zu flows with packets and bytes in [truth, truth + e/w*N = %.1f, %.1f]",
		  path, good, FS_VM_NFLOWS, bound_p, bound_b);
	fs_vm_tap(!unknown, "daemon, %s: top lists no flow that was not sent (%u such)",
		  path, unknown);
	sb_p = fs_vm_count(top, "error_bound", "packets");
	sb_b = fs_vm_count(top, "error_bound", "bytes");
	fs_vm_tap(fabs((double)sb_p - bound_p) <= 1 && fabs((double)sb_b - bound_b) <= 1,
		  "daemon, %s: the daemon's stated error bound %lld, %lld is e/w*N (%.1f, %.1f)",
		  path, sb_p, sb_b, bound_p, bound_b);
	json_object_put(top);

	/* The same frames, sent: the egress frontend's windows hold them all. */
	{
		static const char *const out_args[] = {
			"top", "-n", "20", "--json", "--once", "--span", FS_VM_SPAN,
			"--direction", "out", NULL
		};

		top = fs_vm_cli(out_args, false);
		tp = fs_vm_count(top, "total_packets", NULL);
		tb = fs_vm_count(top, "total_bytes", NULL);
		fs_vm_tap(tp == (long long)sent->packets && tb == (long long)sent->bytes,
			  "daemon, %s: top --direction out totals %lld packets, %lld bytes; sent %llu, %llu",
			  path, tp, tb, (unsigned long long)sent->packets,
			  (unsigned long long)sent->bytes);
		json_object_put(top);
	}

	flows = fs_vm_cli(flows_args, false);
	fs_vm_tap(fs_vm_distinct_ok(flows, "distinct_flows", FS_VM_NFLOWS, rse) &&
		  fs_vm_distinct_ok(flows, "distinct_sources", FS_VM_NADDRS, rse) &&
		  fs_vm_distinct_ok(flows, "distinct_destinations", FS_VM_NADDRS, rse),
		  "daemon, %s: distinct flows %lld, sources %lld, destinations %lld within 3 standard errors of %zu, %d, %d",
		  path, fs_vm_count(flows, "distinct_flows", NULL),
		  fs_vm_count(flows, "distinct_sources", NULL),
		  fs_vm_count(flows, "distinct_destinations", NULL),
		  FS_VM_NFLOWS, FS_VM_NADDRS, FS_VM_NADDRS);
	json_object_put(flows);
}

static void fs_vm_check_status(const char *path, struct json_object *status)
{
	struct json_object *ifs = fs_vm_get(status, "interfaces", NULL);
	struct json_object *lo = NULL;

	fs_vm_tap(!strcmp(fs_vm_str(status, "datapath"), path),
		  "daemon, %s: status says \"datapath\":\"%s\" (got \"%s\")",
		  path, path, fs_vm_str(status, "datapath"));
	if (ifs && json_object_array_length(ifs) == 1)
		lo = json_object_array_get_idx(ifs, 0);
	fs_vm_tap(lo && !strcmp(fs_vm_str(lo, "name"), "lo") &&
		  !strcmp(fs_vm_str(lo, "xdp_mode"), "generic"),
		  "daemon, %s: status lists only lo, in generic XDP mode (%s, %s)",
		  path, fs_vm_str(lo, "name"), fs_vm_str(lo, "xdp_mode"));
}

/* SIGTERM, then SIGKILL if it does not go; its wait status or -errno. */
static int fs_vm_daemon_stop(pid_t pid)
{
	int status;

	kill(pid, SIGTERM);
	status = fs_vm_wait_exit(pid, 10000);
	if (status == -ETIMEDOUT) {
		kill(pid, SIGKILL);
		fs_vm_wait_exit(pid, 5000);
	}
	return status;
}

/*
 * One daemon run on `path` ("kfunc" or "bpf", what status must say).
 * With the kfunc path the module must stay while the daemon runs.
 */
static void fs_vm_daemon_run(const char *path, bool kfunc)
{
	char *argv[] = {
		FS_VM_FSD, "-i", "lo", "--xdp-mode", "generic",
		"--window", FS_VM_WINDOW, "--pin-dir", FS_VM_PIN_DIR,
		"--socket", FS_VM_SOCK, NULL
	};
	struct json_object *status;
	struct fs_vm_params params;
	struct fs_vm_sent sent;
	bool answered = false;
	long long windows;
	int err, wstatus;
	pid_t pid;

	unlink(FS_VM_FSD_LOG);
	pid = fs_vm_spawn(argv, FS_VM_FSD_LOG);
	if (pid < 0) {
		fs_vm_tap(false, "daemon, %s: start %s: %s", path, FS_VM_FSD,
			  strerror(-pid));
		return;
	}
	status = fs_vm_daemon_ready(pid);
	fs_vm_tap(status, "daemon, %s: flowsketchd -i lo answers status", path);
	if (!status)
		goto stop;
	answered = true;
	fs_vm_check_status(path, status);
	params.cms_width = fs_vm_count(status, "params", "cms_width");
	params.hll_p = fs_vm_count(status, "params", "hll_precision");
	json_object_put(status);
	fs_vm_tap(params.cms_width > 0 && params.hll_p > 0 && params.hll_p < 32,
		  "daemon, %s: status gives the sketch's parameters (width %lld, p %lld)",
		  path, params.cms_width, params.hll_p);
	if (params.cms_width <= 0 || params.hll_p <= 0 || params.hll_p >= 32)
		goto stop;

	err = fs_vm_send_traffic(&sent);
	fs_vm_tap(!err, "daemon, %s: sent %llu UDP datagrams (%llu frame bytes) in %zu IPv4/IPv6 flows over lo%s%s",
		  path, (unsigned long long)sent.packets,
		  (unsigned long long)sent.bytes, FS_VM_NFLOWS,
		  err ? ": " : "", err ? strerror(-err) : "");
	if (err)
		goto stop;
	windows = fs_vm_wait_windows(sent.packets);
	fs_vm_tap(windows == (long long)sent.packets,
		  "daemon, %s: finished windows total the %llu packets sent (got %lld)",
		  path, (unsigned long long)sent.packets, windows);
	fs_vm_check_counts(path, &sent, &params);

	if (kfunc) {
		err = fs_vm_module_unload();
		fs_vm_tap(err && fs_vm_module_present(),
			  "daemon, %s: rmmod refused while flowsketchd runs (%s)",
			  path, err ? strerror(-err) : "it was unloaded");
	}
stop:
	wstatus = fs_vm_daemon_stop(pid);
	fs_vm_tap(wstatus >= 0 && WIFEXITED(wstatus) && !WEXITSTATUS(wstatus),
		  "daemon, %s: flowsketchd exits 0 on SIGTERM (wait status %d)",
		  path, wstatus);
	fs_vm_tap(access(FS_VM_PIN_DIR, F_OK) && errno == ENOENT &&
		  access(FS_VM_SOCK_DIR, F_OK) && errno == ENOENT,
		  "daemon, %s: no pin, pin directory or socket left after exit",
		  path);
	if (wstatus || !answered)
		fs_vm_diag_file(FS_VM_FSD_LOG);
}

void fs_vm_test_daemon(const char *ko)
{
	struct stat st;
	int err;

	err = fs_vm_netns_enter();
	fs_vm_tap(!err, "daemon: own network namespace with lo up%s%s",
		  err ? ": " : "", err ? strerror(-err) : "");
	if (err)
		return;

	err = fs_vm_module_present() ? 0 : fs_vm_module_load(ko);
	fs_vm_tap(!err, "daemon, kfunc: module loaded%s%s",
		  err ? ": " : "", err ? strerror(-err) : "");
	if (!err)
		fs_vm_daemon_run("kfunc", true);
	err = fs_vm_module_unload_wait(5000);
	fs_vm_tap(!err && !fs_vm_module_present() &&
		  stat("/sys/kernel/btf/" FS_KFUNC_MODULE, &st),
		  "daemon, kfunc: rmmod succeeds once flowsketchd has exited, its BTF is gone%s%s",
		  err ? ": " : "", err ? strerror(-err) : "");
	if (err)
		return;

	fs_vm_daemon_run("bpf", false);
}
