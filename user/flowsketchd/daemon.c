// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * daemon.c - set up, run the event loop, tear down (daemon.h).
 *
 * Setup order is chosen so that each step only needs what came before and
 * so that a failure at any step is undone by the one teardown below:
 * signals are blocked first, in main before anything else (a SIGINT
 * during setup waits, pending, for the signalfd made here, and ends the
 * loop at once, through the same cleanup), the secret (a bad
 * --secret-file is refused before anything is touched), a look at the pin
 * directory's lock (a daemon already there is named, rather than the
 * --metrics port it holds refused as in use), the --metrics listener (an
 * address not of this host or a port in use likewise), then
 * the pin directory lock (nothing is touched while another daemon owns
 * it), the pinned datapath's parameters when one is adopted (options that
 * differ are refused with the host untouched), the socket (a second
 * daemon on it is refused before anything loads), load, history and
 * rotation state, pins, and last the XDP attach, so that packets are
 * counted only once everything that reads them works.
 *
 * Adopting (loader.h, rotation.h "Adoption"), the history starts with the
 * windows the state directory holds (winstore.h), the rotation finishes
 * whatever its predecessor left half done, and the attach moves the
 * pinned links to the new program.  A failed adoption leaves the pinned
 * datapath as it found it, counting.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "cmdline.h"
#include "base/crashpoint.h"
#include "export_perm.h"
#include "base/log.h"
#include "windows/reports.h"
#include "base/safedir.h"
#include "base/secret.h"
#include "service/blockreq.h"
#include "service/server.h"
#include "daemon.h"
#include "flowsketch.skel.h"	/* after daemon.h: needs params.h's types */

/*
 * Room for every client (of the socket and of --metrics) and the
 * daemon's own descriptors: a service's default soft limit (1024) is
 * below that, and running out would pause accepting (server.c) and fail
 * a re-attach (ifwatch.c).  Up to the hard limit; less is not an error,
 * only fewer clients at once.
 */
#define FSD_NOFILE_ALL (FSD_NOFILE + FSD_METRICS_CONNECTIONS)

static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= FSD_NOFILE_ALL)
		return;
	rl.rlim_cur = rl.rlim_max < FSD_NOFILE_ALL ? rl.rlim_max : FSD_NOFILE_ALL;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		fsd_warn("cannot raise the open files limit to %d: %s",
			 FSD_NOFILE_ALL, strerror(errno));
}

/* The signals that stop the daemon: an operator's Ctrl-C, systemd's stop,
 * the terminal gone. */
static void stop_signals(sigset_t *mask)
{
	sigemptyset(mask);
	sigaddset(mask, SIGINT);
	sigaddset(mask, SIGTERM);
	sigaddset(mask, SIGHUP);
}

int fsd_daemon_block_signals(void)
{
	sigset_t mask;

	stop_signals(&mask);
	return sigprocmask(SIG_BLOCK, &mask, NULL) ? -errno : 0;
}

/*
 * Blocked already (main); blocked again here for a caller that came
 * another way, which changes nothing when they are.  A signal sent since
 * is pending and makes the signalfd readable at once.
 */
static int open_signals(struct fsd_daemon *d)
{
	sigset_t mask;
	int err;

	err = fsd_daemon_block_signals();
	if (err)
		return err;
	signal(SIGPIPE, SIG_IGN);
	stop_signals(&mask);
	d->signal_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	return d->signal_fd < 0 ? -errno : 0;
}

static __u64 monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/*
 * Windows end on wall-clock multiples of their length (Unix time, UTC):
 * two hosts whose clocks agree close their windows at the same instants,
 * so the same span covers the same time on both and their sketches can be
 * merged window for window (the fleet's export and merge).  The timer is
 * one-shot on CLOCK_MONOTONIC, armed for the next boundary after each
 * rotation: a step of the wall clock moves the next boundary, never makes
 * a burst of rotations or a window of the wrong length beyond one (the
 * window the step falls in), and the first window after a start is the
 * rest of the current period.
 */
#define FSD_BOUNDARY_SLACK_NS 10000000ULL

static int arm_timer(struct fsd_daemon *d)
{
	__u64 period = (__u64)d->opts.window_sec * 1000000000ULL, left;
	struct itimerspec its = { 0 };
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	left = period - ((__u64)now.tv_sec * 1000000000ULL + (__u64)now.tv_nsec) % period;
	/* A boundary a few ms away is the one just passed, seen early: the
	 * timer runs on the monotonic clock, the boundaries on the wall's. */
	if (left < FSD_BOUNDARY_SLACK_NS)
		left += period;
	its.it_value.tv_sec = (time_t)(left / 1000000000ULL);
	its.it_value.tv_nsec = (long)(left % 1000000000ULL);
	if (timerfd_settime(d->timer_fd, 0, &its, NULL))
		return -errno;
	/* Read by a blocklist change on a query thread (blockpace.h). */
	__atomic_store_n(&d->timer_due_ns, monotonic_ns() + left, __ATOMIC_RELAXED);
	return 0;
}

/* How late this rotation is after its boundary was due (a stopped
 * process: one longer window, ending at a later boundary, counted late). */
static __u64 timer_lateness(const struct fsd_daemon *d)
{
	__u64 now = monotonic_ns(), due = d->timer_due_ns;

	return now > due ? now - due : 0;
}

static int open_timer(struct fsd_daemon *d)
{
	d->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (d->timer_fd < 0)
		return -errno;
	return arm_timer(d);
}

static int watch(struct fsd_daemon *d, int fd)
{
	/* All 64 bits set: the loop tests FSD_EV_CLIENT, bit 63. */
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = (__u32)fd };

	return epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

static int open_loop(struct fsd_daemon *d)
{
	unsigned int i;
	int err;

	d->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (d->epoll_fd < 0)
		return -errno;
	err = open_timer(d);
	if (!err)
		err = watch(d, d->timer_fd);
	if (!err)
		err = watch(d, d->signal_fd);
	if (!err)
		err = fsd_server_watch(&d->server, d->epoll_fd);
	for (i = 0; !err && i < FSD_FE_MAX; i++)
		if (d->fe[i].reports)
			err = watch(d, ring_buffer__epoll_fd(d->fe[i].reports));
	if (!err)
		err = watch(d, d->workers.event_fd);
	if (!err)
		err = watch(d, d->ifwatch.fd);
	if (err)
		fsd_fail(err, "cannot set up the event loop");
	return err;
}

/* "1 in 1024 in 128 buckets", or "none". */
static void say_sample(char *buf, size_t len, const struct fs_sketch_params *p)
{
	if (p->sample_log2b)
		snprintf(buf, len, "1 flow in %u in %u buckets", 1U << p->sample_shift,
			 1U << p->sample_log2b);
	else
		snprintf(buf, len, "none");
}

/*
 * The keyed sample of an adopted datapath, which its window files hold
 * too: what the options name (--sample-rate, --sample-buckets) must be the
 * pinned one's; what they leave to its default follows the pinned one, so
 * that a restart (an upgrade from a release whose default kept no sample,
 * or another bucket count) keeps the history.  Refused when a named value
 * differs; the sizes checked again when the pinned one is taken.
 */
static int adopt_sample(struct fsd_options *o, const struct fs_sketch_params *pinned)
{
	struct fs_sketch_params *p = &o->params;
	bool rate = pinned->sample_log2b && p->sample_log2b ?
		    p->sample_shift != pinned->sample_shift :
		    !pinned->sample_log2b != !p->sample_log2b;
	bool buckets = pinned->sample_log2b && p->sample_log2b &&
		       p->sample_log2b != pinned->sample_log2b;
	char was[64], now[64];

	if (!rate && !buckets)
		return 0;
	say_sample(was, sizeof(was), pinned);
	say_sample(now, sizeof(now), p);
	/* A pinned datapath without a sample has no buckets to follow. */
	if ((rate && o->sample_rate_given) || (buckets && o->sample_buckets_given) ||
	    (!pinned->sample_log2b && o->sample_buckets_given))
		return fsd_reject(-ESTALE, "the datapath pinned under %s keeps a keyed sample of %s, not %s: start with the same --sample-rate and --sample-buckets, or with --replace to discard it",
				  o->pin_dir, was, now);
	fsd_info("keeping the pinned datapath's keyed sample (%s) and its history: --replace starts the one asked for (%s)",
		 was, now);
	p->sample_log2b = pinned->sample_log2b;
	p->sample_shift = pinned->sample_shift;
	return fsd_options_check_sizes(o);
}

/*
 * Adopt what is pinned under --pin-dir, unless --replace: its parameters
 * must be the options' (the keyed sample's may follow it, adopt_sample()),
 * and its secret --secret-file's if one is given (else it is the pinned
 * one).  1 adopt, 0 start afresh, -errno.
 */
static int decide_adoption(struct fsd_daemon *d, struct fs_hash_secret *secret)
{
	const struct fsd_options *o = &d->opts;
	struct fsd_pinned pin;
	int err;

	if (!fsd_loader_is_pinned(o->pin_dir))
		return 0;
	if (o->replace) {
		fsd_info("--replace: discarding the datapath pinned under %s", o->pin_dir);
		d->loader.replacing = true;
		return 0;
	}
	err = fsd_loader_read_pinned(o->pin_dir, &pin);
	if (!err)
		err = fsd_loader_check_pinned(&pin, o);
	if (!err)
		err = adopt_sample(&d->opts, &pin.params);
	if (err)
		return err;
	if (o->secret_file && memcmp(secret, &pin.params.secret, sizeof(*secret)))
		return fsd_reject(-ESTALE, "the datapath pinned under %s was loaded with another hash secret than %s: start with its secret file, or with --replace to discard it",
				  o->pin_dir, o->secret_file);
	*secret = pin.params.secret;
	memset(&pin, 0, sizeof(pin));
	return 1;
}

/*
 * The directories the daemon keeps files in, looked at before anything is
 * read from them or touched on the host (safedir.h): one another user may
 * write to or aim stops the start with the host as it was.
 */
static int check_dirs(const struct fsd_options *o)
{
	int err;

	err = fsd_safedir_check(o->pin_dir, "pin directory") ?:
	      fsd_safedir_check(o->state_dir, "state directory");
	if (!err && o->socket_path)
		err = fsd_safedir_check_parent(o->socket_path, "socket directory");
	if (!err && o->blocklist && !o->ingress_tp)
		err = fsd_safedir_check_parent(o->blocklist, "blocklist directory");
	return err;
}

/*
 * What comes before anything is loaded, in the order of the header
 * comment: signals, directories, the secret, the blocklist file, the
 * pin directory's lock and --metrics, the adoption decision, the socket.
 * 1 adopt, 0 start afresh, or -errno (logged).
 */
static int prepare(struct fsd_daemon *d, struct fs_hash_secret *secret)
{
	const struct fsd_options *o = &d->opts;
	int err, adopt;

	err = open_signals(d);
	if (err)
		return fsd_fail(err, "cannot set up signal handling");
	err = check_dirs(o);
	if (err)
		return err;
	err = fsd_secret_get(o->secret_file, secret, d->signal_fd);
	if (err)
		return err;
	/* Before anything is loaded or attached: a list file with a bad
	 * line stops the daemon with the host untouched. */
	err = o->ingress_tp ? 0 :
	      fsd_blocklist_read(&d->blocklist, o->blocklist, o->blocklist_max);
	if (err)
		return err;
	/* So is a bad policy file; and the sketches its rules need go into
	 * the parameters before the datapath is sized or adopted. */
	{
		char msg[512];

		err = fsd_policy_start(&d->policy, o->policy, o->policy_dry_run,
				       &d->opts.params, msg, sizeof(msg));
		if (err)
			return fsd_reject(err, "policy %s", msg);
	}
	/* A daemon already on the pin directory holds its --metrics port
	 * too: named first, rather than refused as "port in use". */
	err = fsd_pinlock_check(o->pin_dir);
	if (err)
		return err;
	/* Bound before anything is touched: a bad address or a port in use
	 * stops the daemon with the host as it was.  It answers 503 until
	 * the first page (fsd_daemon_run). */
	err = fsd_metrics_open(&d->metrics, &o->metrics_addr,
			       o->metrics_addr_len, o->metrics,
			       o->metrics_web_config);
	if (err)
		return err;
	err = fsd_bpffs_mount();
	if (err)
		return err;
	err = fsd_pinlock_take(&d->lock, o->pin_dir);
	if (err)
		return err;
	adopt = decide_adoption(d, secret);
	if (adopt < 0)
		return adopt;
	d->adopting = adopt;
	fs_export_key_derive(secret, &d->export_key);
	fs_hash_key_derive(secret, &d->hash_key);
	raise_nofile();
	err = fsd_server_open(&d->server, o->socket_path, o->read_group,
			      o->read_gid);
	return err ? err : adopt;
}

/* What the frontends read of the daemon (frontend.h). */
static struct fsd_frontend_env frontend_env(struct fsd_daemon *d)
{
	return (struct fsd_frontend_env){
		.opts = &d->opts, .loader = &d->loader, .budget = &d->budget,
		.started_ns = d->started_ns,
	};
}

static int setup(struct fsd_daemon *d)
{
	const struct fsd_options *o = &d->opts;
	struct fsd_frontend_env env = frontend_env(d);
	struct fsd_frontend *in = &d->fe[FSD_FE_IN];
	struct fs_hash_secret secret;
	unsigned int i;
	int err, adopt;

	adopt = prepare(d, &secret);
	if (adopt < 0) {
		memset(&secret, 0, sizeof(secret));
		return adopt;
	}
	fsd_log_libbpf();
	{
		struct fs_sketch_params p = o->params;

		p.secret = secret;
		err = fsd_winstore_open(&in->store, o->state_dir, &p, adopt);
		memset(&p, 0, sizeof(p));
		/* Again, now that it exists: made by us, or raced into
		 * place under a sticky parent by someone else. */
		if (!err)
			err = fsd_safedir_check(o->state_dir, "state directory");
		/* Before the frontends' stores, which share it. */
		if (!err)
			fsd_state_budget_init(&d->budget, o->state_dir, o->state_max);
	}
	if (!err)
		err = fsd_loader_load(&d->loader, o, &secret, adopt);
	/* A tracepoint cannot drop: with --ingress tracepoint there is no
	 * blocklist (its requests say so, query.c). */
	if (!err && !o->ingress_tp)
		err = fsd_blocklist_start(&d->blocklist, d->loader.skel, &d->loader.obj, &secret,
					  &d->timer_due_ns);
	if (!err)
		in->loaded = true;
	for (i = 0; !err && i < FSD_FE_MAX; i++)
		if (d->fe[i].ops->tp)
			err = fsd_frontend_setup(&env, &d->fe[i], &secret, adopt);
	memset(&secret, 0, sizeof(secret));
	if (err)
		return err;
	in->adopted = adopt;
	err = fsd_frontend_open_windows(&env, in);
	if (err)
		return err;
	err = fsd_workers_start(&d->workers, &d->query, &o->params);
	if (err)
		return err;
	d->workers_ready = true;
	/* Every store's windows are read back and charged: a smaller budget
	 * than the last daemon's gives up the oldest now. */
	if (in->store.usable) {
		fsd_state_budget_enforce(&d->budget);
		fsd_state_budget_report(&d->budget, fsd_options_windows_kept(o),
			fsd_state_worst_bytes(&o->params, fsd_options_windows_kept(o), 0),
			fsd_state_worst_bytes(&o->params, fsd_options_windows_kept(o),
					      o->max_candidates));
	}
	/* Subscribed before the first attach: a link change after it is
	 * queued for the loop, never missed. */
	err = fsd_ifwatch_open(&d->ifwatch);
	if (err)
		return err;
	err = open_loop(d);
	if (err)
		return err;
	err = fsd_loader_pin(&d->loader, o->pin_dir);
	if (err)
		return err;
	env.started_ns = d->started_ns = fsd_now_ns();
	for (i = 0; !err && i < FSD_FE_MAX; i++)
		if (d->fe[i].ops->tp)
			err = fsd_frontend_pin(&env, &d->fe[i]);
	if (err)
		return err;
	if (adopt) {
		/* Its errors lose a window (counted), not the daemon. */
		fsd_rotation_adopt(&in->rotation, &in->history, in->reports,
				   in->last_end_ns, (__u64)o->window_sec * 1000000000ULL);
		fsd_crash_point("adopted");
		fsd_info("adopted the datapath pinned under %s: window %llu, %u finished windows from %s",
			 o->pin_dir, (unsigned long long)in->rotation.seq,
			 in->windows_restored, o->state_dir);
	} else {
		in->rotation.start_ns = d->started_ns;
		__atomic_store_n(&d->loader.obj.ctl->window_start_ns, d->started_ns,
				 __ATOMIC_RELEASE);
	}
	err = fsd_loader_attach(&d->loader, o);
	for (i = 0; !err && i < FSD_FE_MAX; i++)
		if (d->fe[i].ops->tp)
			err = fsd_frontend_attach(&env, &d->fe[i]);
	if (!err)
		d->running = true;
	return err;
}

static void teardown(struct fsd_daemon *d)
{
	/* Kept: a stop with --keep after a complete setup, and an adoption
	 * that failed anywhere (what was pinned goes on counting as before,
	 * its windows kept). */
	bool keep = d->running ? d->opts.keep : d->adopting;
	unsigned int i;

	/* No more pages: it reads the state torn down below. */
	fsd_metrics_close(&d->metrics);
	/* The candidates noted last go to their journals while every history
	 * that the budget may evict from is still there; then the stores
	 * stop sharing it, as the histories go one by one. */
	for (i = 0; i < FSD_FE_MAX; i++)
		fsd_winstore_flush(&d->fe[i].store);
	for (i = 0; i < FSD_FE_MAX; i++)
		d->fe[i].store.budget = NULL;
	/* The query threads stop before anything they use goes: a span
	 * query reads the histories, and a blocklist change writes the
	 * tries, fs_ctl and the filter until it is done (a change of a
	 * million entries: seconds, which the stop waits for). */
	fsd_server_drop_clients(&d->server);
	fsd_server_close(&d->server);
	if (d->workers_ready)
		fsd_workers_stop(&d->workers);
	d->workers_ready = false;
	/* Then detach and unpin: the last set up first, ingress (the
	 * loader's) last. */
	for (i = FSD_FE_MAX; i-- > 0;)
		if (d->fe[i].ops->tp)
			fsd_frontend_close_object(&d->fe[i], keep);
	fsd_loader_close(&d->loader, keep);
	fsd_blocklist_free(&d->blocklist);
	fsd_policy_stop(&d->policy);
	fsd_ifwatch_close(&d->ifwatch);
	/* Cleared while still locked, and with nothing more journaled. */
	if (!keep && d->fe[FSD_FE_IN].store.usable)
		fsd_metrics_forget(d->fe[FSD_FE_IN].store.dir);
	for (i = FSD_FE_MAX; i-- > 0;)
		fsd_frontend_close_windows(&d->fe[i], keep);
	/* The pin directory is flowsketch's whoever made it; kept, it is
	 * not empty. */
	d->lock.created = !keep && (d->lock.created || d->loader.obj.adopted ||
				     d->loader.replacing);
	fsd_pinlock_release(&d->lock);
	if (d->epoll_fd >= 0)
		close(d->epoll_fd);
	if (d->timer_fd >= 0)
		close(d->timer_fd);
	if (d->signal_fd >= 0)
		close(d->signal_fd);
}

/* The policy's look at the last inbound window (policy.h), and the
 * change it decided handed to a query thread (blockreq.h). */
static void run_policy(struct fsd_daemon *d)
{
	const struct fsd_window *w = fsd_history_window(&d->fe[FSD_FE_IN].history, 0);
	struct fsd_policy_block *b = &d->policy_block;
	struct timespec ts;
	int err;

	if (!d->policy.path || !w)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	fsd_policy_tick(&d->policy, &(struct fsd_policy_input){
				.sketch = &w->sketch, .seq = w->seq,
				.params = &d->opts.params, .hash_key = &d->hash_key,
				.window_sec = d->opts.window_sec, .now = (__s64)time(NULL),
				.now_ms = (__s64)ts.tv_sec * 1000 + ts.tv_nsec / 1000000,
				.can_block = !fsd_block_busy(&d->blocklist) },
			&d->blocklist, b);
	if (!b->n)
		return;
	err = fsd_block_auto(&d->blocklist, &d->workers, b->c, b->n, b->origin, b->ban_sec);
	if (err) {
		fsd_policy_block_failed(&d->policy, b);
		fsd_warn("policy: cannot block %zu keys now (%s): the next window decides again",
			 b->n, strerror(-err));
	}
}

/* The keyed sample's check of the window just closed, what the
 * interfaces received and sent as one (accuracy_watch.h). */
static void watch_accuracy(struct fsd_daemon *d)
{
	static const enum fsd_frontend_id dirs[] = { FSD_FE_IN, FSD_FE_OUT };
	const struct fs_sketch *s[2];
	const struct fsd_window *in = NULL;
	size_t n = 0, i;

	if (!d->accuracy.on)
		return;
	for (i = 0; i < 2; i++) {
		const struct fsd_window *w = d->fe[dirs[i]].history_ready ?
			fsd_history_window(&d->fe[dirs[i]].history, 0) : NULL;

		if (!w)
			continue;
		if (!i)
			in = w;
		s[n++] = &w->sketch;
	}
	/* Once a window: the inbound history closes one every boundary. */
	if (!in || (d->accuracy.windows && in->seq == d->accuracy_seq))
		return;
	d->accuracy_seq = in->seq;
	fsd_accuracy_watch_window(&d->accuracy, s, n, &d->hash_key);
}

/*
 * Close the window if the timer has fired: a non-blocking read of the
 * timerfd, so that the loop can look between any two events, not only
 * when epoll hands the timer over.
 */
static void fsd_daemon_rotate_if_due(struct fsd_daemon *d)
{
	__u64 expirations;
	unsigned int i;
	int err;

	if (read(d->timer_fd, &expirations, sizeof(expirations)) !=
	    sizeof(expirations))
		return;
	fsd_rotation_note_late(&d->fe[FSD_FE_IN].rotation, timer_lateness(d));
	/* The next boundary, before the rotation's work: its time is not
	 * the next window's. */
	if (arm_timer(d))
		fsd_warn("cannot arm the window timer: %s", strerror(errno));
	for (i = 0; i < FSD_FE_MAX; i++)
		if (d->fe[i].rotation_ready)
			fsd_rotate(&d->fe[i].rotation, &d->fe[i].history,
				   d->fe[i].reports);
	/* Expiry first: the policy blocks every window under a flood, and
	 * would keep the list busy for it; a policy that finds it busy
	 * decides at the next boundary. */
	err = fsd_block_expire(&d->blocklist, &d->workers);
	if (err && err != -EBUSY)
		fsd_warn("blocklist: cannot delete the expired entries: %s", strerror(-err));
	run_policy(d);
	watch_accuracy(d);
	fsd_state_budget_warn(&d->budget, fsd_now_ns());
	fsd_metrics_update(&d->metrics, &d->view);
}

/* Client events handled between two looks at the timer: a batch of
 * hostile or busy clients (status answers read per-CPU maps) delays a
 * rotation by at most this many of them. */
#define FSD_EVENTS_PER_TIMER_LOOK 8

/* If fd is a frontend's ring buffer: take its reports.  Whether it is. */
static bool drain_reports(struct fsd_daemon *d, int fd)
{
	unsigned int i;

	for (i = 0; i < FSD_FE_MAX; i++) {
		struct fsd_frontend *fe = &d->fe[i];

		if (fe->reports && fd == ring_buffer__epoll_fd(fe->reports)) {
			fsd_reports_drain(fe->reports, &fe->report_state);
			return true;
		}
	}
	return false;
}

/* Interfaces came or went: the loader re-attaches, the frontends that
 * count the -i interfaces follow. */
static void follow_ifaces(struct fsd_daemon *d)
{
	const struct fsd_frontend_env env = frontend_env(d);
	unsigned int i;

	fsd_ifwatch_handle(&d->ifwatch, &d->loader);
	for (i = 0; i < FSD_FE_MAX; i++)
		if (d->fe[i].ops->tp)
			fsd_frontend_sync_ifaces(&env, &d->fe[i]);
}

/* A stop signal, read from the signalfd and logged: whether there was one.
 * With --policy, SIGHUP reloads the policy instead (policy.h). */
static bool take_stop_signal(struct fsd_daemon *d)
{
	struct signalfd_siginfo si;
	char msg[512];

	if (d->signal_fd < 0 || read(d->signal_fd, &si, sizeof(si)) != sizeof(si))
		return false;
	if (si.ssi_signo == SIGHUP && d->policy.path && d->running) {
		fsd_info("SIGHUP: reloading the policy");
		fsd_policy_reload(&d->policy, &d->opts.params, msg, sizeof(msg));
		return false;
	}
	fsd_info("%s: stopping", strsignal((int)si.ssi_signo));
	return true;
}

/* Returns when a stop signal arrives (or the loop cannot go on). */
static int loop(struct fsd_daemon *d)
{
	struct epoll_event ev[64];
	int i, n, wait;

	for (;;) {
		/* Clients' deadlines bound the wait: a client that never
		 * sends is answered (or dropped) on time. */
		while ((wait = fsd_server_expire(&d->server)) == FSD_EXPIRE_MORE)
			fsd_daemon_rotate_if_due(d);
		n = epoll_wait(d->epoll_fd, ev, FS_ARRAY_SIZE(ev), wait);
		if (n < 0) {
			int err = -errno;

			if (err == -EINTR)
				continue;
			return fsd_fail(err, "epoll_wait failed");
		}
		for (i = 0; i < n; i++) {
			int fd = ev[i].data.fd;

			if (i % FSD_EVENTS_PER_TIMER_LOOK == 0)
				fsd_daemon_rotate_if_due(d);
			if (ev[i].data.u64 & FSD_EV_CLIENT) {
				fsd_server_client_event(&d->server,
							ev[i].data.u64 & ~FSD_EV_CLIENT,
							ev[i].events);
			} else if (fd == d->signal_fd) {
				if (take_stop_signal(d))
					return 0;
			} else if (fd == d->timer_fd) {
				fsd_daemon_rotate_if_due(d);
			} else if (drain_reports(d, fd)) {
				continue;
			} else if (fd == d->server.listen_fd) {
				fsd_server_accept(&d->server);
			} else if (fd == d->workers.event_fd) {
				struct fsd_job *job = fsd_workers_take_done(&d->workers);

				while (job) {
					struct fsd_job *next = job->next;

					fsd_server_job_done(&d->server, job);
					job = next;
				}
			} else if (fd == d->ifwatch.fd) {
				follow_ifaces(d);
			}
		}
	}
}

int fsd_daemon_detach(const struct fsd_options *o)
{
	struct fsd_pinlock lock = { .fd = -1 };
	int n = 0, m, err;
	unsigned int i;

	err = fsd_bpffs_mount();
	if (!err)
		err = fsd_safedir_check(o->pin_dir, "pin directory") ?:
		      fsd_safedir_check(o->state_dir, "state directory");
	if (err)
		return err;
	if (access(o->pin_dir, F_OK)) {
		fsd_info("nothing pinned under %s", o->pin_dir);
		return fsd_winstore_clear_locked(o->state_dir);
	}
	err = fsd_pinlock_take(&lock, o->pin_dir);
	if (err)
		return err;	/* a daemon runs there: it says which */
	for (i = 0; i < FSD_FE_MAX; i++) {
		const struct fsd_frontend_ops *ops = fsd_frontend_kind(i, false);

		m = ops->tp ? fsd_frontend_remove(ops->tp, o->pin_dir, o->state_dir) : 0;
		n += m > 0 ? m : 0;
	}
	n += fsd_loader_remove_pins(o->pin_dir);
	fsd_metrics_forget(o->state_dir);
	err = fsd_winstore_clear_locked(o->state_dir);
	if (err && !n)
		n = err;
	lock.created = true;	/* what flowsketch made: the directory goes too */
	fsd_pinlock_release(&lock);
	if (n < 0)
		return n;
	if (!access(o->pin_dir, F_OK))
		return fsd_reject(-ENOTEMPTY, "%s is not empty: something other than flowsketch's pins is there",
				  o->pin_dir);
	fsd_info("detached: removed %d pins and links under %s, and %s", n,
		 o->pin_dir, o->state_dir);
	return 0;
}

/* The query threads' context (workers.h): once all it names is set up,
 * before the loop hands over a job. */
static void fill_query(struct fsd_daemon *d)
{
	d->query = (struct fsd_query_ctx){
		.params = &d->opts.params,
		.window_sec = d->opts.window_sec,
		.started_ns = d->started_ns,
		.in = &d->fe[FSD_FE_IN].history,
		.out = &d->fe[FSD_FE_OUT].history,
		.conn = &d->fe[FSD_FE_CONN].history,
		.out_ready = &d->fe[FSD_FE_OUT].history_ready,
		.conn_ready = &d->fe[FSD_FE_CONN].history_ready,
		.blocklist = &d->blocklist,
		.export_key = &d->export_key,
		.hash_key = &d->hash_key,
		.fingerprint = d->fe[FSD_FE_IN].store.fingerprint,
	};
}

int fsd_daemon_run(struct fsd_daemon *d, fsd_request_fn *request)
{
	unsigned int i;
	int err;

	fsd_server_init(&d->server, request, d, &d->workers);
	d->timer_fd = -1;
	d->signal_fd = -1;
	d->epoll_fd = -1;
	d->lock.fd = -1;
	d->ifwatch.fd = -1;
	for (i = 0; i < FSD_FE_MAX; i++)
		fsd_frontend_init(&d->fe[i], fsd_frontend_kind(i, d->opts.ingress_tp));
	fsd_frontend_use_loader(&d->fe[FSD_FE_IN], &d->loader);
	d->view = (struct fsd_view){ .opts = &d->opts, .loader = &d->loader,
				     .fe = d->fe, .budget = &d->budget,
				     .server = &d->server,
				     .blocklist = &d->blocklist,
				     .policy = &d->policy,
				     .accuracy = &d->accuracy,
				     .params = &d->opts.params,
				     .hash_key = &d->hash_key,
				     .history_max_bytes =
					fsd_options_history_max_bytes(&d->opts) };
	err = setup(d);
	if (!err) {
		/* An adoption may have taken the pinned sample's sizes. */
		d->view.history_max_bytes = fsd_options_history_max_bytes(&d->opts);
		fill_query(d);
		fsd_accuracy_watch_init(&d->accuracy, &d->opts.params);
		fsd_info("running: window %u s, history %u s, %u windows kept",
			 d->opts.window_sec, d->opts.history_sec,
			 d->fe[FSD_FE_IN].history.capacity);
		fsd_metrics_update(&d->metrics, &d->view);
		err = loop(d);
	} else if (err == -EINTR && take_stop_signal(d)) {
		/* A stop cut a wait of the setup short (a secret's pipe):
		 * as clean a stop as one in the loop. */
		err = 0;
	}
	teardown(d);
	return err;
}
