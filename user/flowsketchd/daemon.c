// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * daemon.c - set up, run the event loop, tear down (daemon.h).
 *
 * Setup order is chosen so that each step only needs what came before and
 * so that a failure at any step is undone by the one teardown below:
 * signals are blocked first (a SIGINT during setup waits in the signalfd
 * and ends the loop at once, through the same cleanup), the secret (a bad
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
#include "crashpoint.h"
#include "export_perm.h"
#include "log.h"
#include "reports.h"
#include "safedir.h"
#include "secret.h"
#include "server.h"
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

static int open_signals(struct fsd_daemon *d)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL))
		return -errno;
	signal(SIGPIPE, SIG_IGN);
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
	d->timer_due_ns = monotonic_ns() + left;
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
		err = watch(d, d->listen_fd);
	if (!err)
		err = watch(d, ring_buffer__epoll_fd(d->reports));
	if (!err && d->out.reports)
		err = watch(d, ring_buffer__epoll_fd(d->out.reports));
	if (!err && d->conn.reports)
		err = watch(d, ring_buffer__epoll_fd(d->conn.reports));
	if (!err)
		err = watch(d, d->workers.event_fd);
	if (!err)
		err = watch(d, d->ifwatch.fd);
	if (err)
		fsd_err("cannot set up the event loop: %s", strerror(-err));
	return err;
}

/*
 * Adopt what is pinned under --pin-dir, unless --replace: its parameters
 * must be the options', and its secret --secret-file's if one is given
 * (else it is the pinned one).  1 adopt, 0 start afresh, -errno.
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
	if (err)
		return err;
	if (o->secret_file && memcmp(secret, &pin.params.secret, sizeof(*secret))) {
		fsd_err("the datapath pinned under %s was loaded with another hash secret than %s: start with its secret file, or with --replace to discard it",
			o->pin_dir, o->secret_file);
		return -ESTALE;
	}
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

static int setup(struct fsd_daemon *d)
{
	const struct fsd_options *o = &d->opts;
	struct fs_hash_secret secret;
	__u64 last_end_ns = 0, first;
	int err, adopt;

	err = open_signals(d);
	if (err) {
		fsd_err("cannot set up signal handling: %s", strerror(-err));
		return err;
	}
	err = check_dirs(o);
	if (err)
		return err;
	err = fsd_secret_get(o->secret_file, &secret);
	if (err)
		return err;
	/* Before anything is loaded or attached: a list file with a bad
	 * line stops the daemon with the host untouched. */
	err = o->ingress_tp ? 0 :
	      fsd_blocklist_read(&d->blocklist, o->blocklist, o->blocklist_max);
	if (err)
		return err;
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
	adopt = decide_adoption(d, &secret);
	if (adopt < 0)
		return adopt;
	d->adopting = adopt;
	fs_export_key_derive(&secret, &d->export_key);
	raise_nofile();
	err = fsd_server_open(d);
	if (err)
		return err;
	fsd_log_libbpf();
	{
		struct fs_sketch_params p = o->params;

		p.secret = secret;
		err = fsd_winstore_open(&d->store, o->state_dir, &p, adopt);
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
		err = fsd_blocklist_start(&d->blocklist, &d->loader, &secret);
	if (!err) {
		err = fsd_frontend_setup(d, &d->out, &fsd_tp_egress, &secret, adopt);
		if (err)
			fsd_err("cannot set up the egress frontend: %s", strerror(-err));
	}
	if (!err) {
		err = fsd_frontend_setup(d, &d->conn, &fsd_tp_conn, &secret, adopt);
		if (err)
			fsd_err("cannot set up the connection frontend: %s", strerror(-err));
	}
	memset(&secret, 0, sizeof(secret));
	if (err)
		return err;
	/* The window the datapath starts in is fs_ctl's (0 after a fresh
	 * load), or its predecessor when that one is still to finish. */
	first = adopt ? fsd_rotation_first_pending(d->loader.obj.ctl, &d->store) :
			d->loader.obj.ctl->window_seq;
	err = fsd_history_init(&d->history, &o->params,
			       fsd_options_windows_kept(o), o->max_candidates,
			       first);
	if (err) {
		fsd_err("cannot allocate the window history: %s", strerror(-err));
		return err;
	}
	d->history_ready = true;
	fsd_state_budget_add(&d->budget, &d->history, &d->store);
	if (adopt) {
		err = fsd_winstore_load(&d->store, &d->history,
					d->loader.obj.ctl->window_seq, &last_end_ns);
		if (err < 0) {
			fsd_err("cannot read the windows kept in %s: %s",
				o->state_dir, strerror(-err));
			return err;
		}
		d->windows_restored = (__u32)err;
	}
	err = fsd_rotation_init(&d->rotation, &d->loader, &o->params,
				o->hh_fraction);
	if (err) {
		fsd_err("cannot allocate the rotation buffers: %s", strerror(-err));
		return err;
	}
	d->rotation.store = &d->store;
	d->rotation_ready = true;
	err = fsd_workers_start(&d->workers, d);
	if (err)
		return err;
	d->workers_ready = true;
	d->reports = fsd_reports_open(&d->report_state, bpf_map__fd(d->loader.skel->maps.fs_reports),
				      &d->history);
	if (!d->reports)
		return -errno;
	d->report_state.store = &d->store;
	if (adopt) {
		__u64 n = fsd_winstore_replay(&d->store, &d->history, first);

		if (n)
			fsd_info("filed %llu candidates of the open windows again from their journal",
				 (unsigned long long)n);
	}
	/* Every store's windows are read back and charged: a smaller budget
	 * than the last daemon's gives up the oldest now. */
	if (d->store.usable) {
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
	d->started_ns = fsd_now_ns();
	err = fsd_frontend_pin(d, &d->out);
	if (!err)
		err = fsd_frontend_pin(d, &d->conn);
	if (err)
		return err;
	if (adopt) {
		/* Its errors lose a window (counted), not the daemon. */
		fsd_rotation_adopt(&d->rotation, &d->history, d->reports,
				   last_end_ns, (__u64)o->window_sec * 1000000000ULL);
		fsd_crash_point("adopted");
		fsd_info("adopted the datapath pinned under %s: window %llu, %u finished windows from %s",
			 o->pin_dir, (unsigned long long)d->rotation.seq,
			 d->windows_restored, o->state_dir);
	} else {
		d->rotation.start_ns = d->started_ns;
		__atomic_store_n(&d->loader.obj.ctl->window_start_ns, d->started_ns,
				 __ATOMIC_RELEASE);
	}
	err = fsd_loader_attach(&d->loader, o);
	if (!err)
		err = fsd_frontend_attach(d, &d->out);
	if (!err)
		err = fsd_frontend_attach(d, &d->conn);
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

	/* No more pages: it reads the state torn down below. */
	fsd_metrics_close(&d->metrics);
	/* The candidates noted last go to their journals while every history
	 * that the budget may evict from is still there; then the stores
	 * stop sharing it, as the histories go one by one. */
	fsd_winstore_flush(&d->store);
	fsd_winstore_flush(&d->out.store);
	fsd_winstore_flush(&d->conn.store);
	d->store.budget = d->out.store.budget = d->conn.store.budget = NULL;
	/* Detach and unpin first: the host is clean as soon as possible. */
	fsd_frontend_teardown(&d->conn, keep);
	fsd_frontend_teardown(&d->out, keep);
	fsd_loader_close(&d->loader, keep);
	fsd_server_drop_clients(d);
	fsd_server_close(d);
	/* Before the history they read goes. */
	if (d->workers_ready)
		fsd_workers_stop(&d->workers);
	d->workers_ready = false;
	fsd_blocklist_free(&d->blocklist);
	fsd_ifwatch_close(&d->ifwatch);
	ring_buffer__free(d->reports);
	d->reports = NULL;
	if (d->rotation_ready)
		fsd_rotation_free(&d->rotation);
	if (d->history_ready)
		fsd_history_free(&d->history);
	/* Cleared while still locked, and with nothing more journaled. */
	if (!keep && d->store.usable) {
		fsd_winstore_discard(&d->store);
		fsd_metrics_forget(d->store.dir);
		fsd_winstore_clear(d->store.dir);
	}
	fsd_winstore_close(&d->store);
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

/*
 * Close the window if the timer has fired: a non-blocking read of the
 * timerfd, so that the loop can look between any two events, not only
 * when epoll hands the timer over.
 */
void fsd_daemon_rotate_if_due(struct fsd_daemon *d)
{
	__u64 expirations;

	if (read(d->timer_fd, &expirations, sizeof(expirations)) !=
	    sizeof(expirations))
		return;
	fsd_rotation_note_late(&d->rotation, timer_lateness(d));
	/* The next boundary, before the rotation's work: its time is not
	 * the next window's. */
	if (arm_timer(d))
		fsd_warn("cannot arm the window timer: %s", strerror(errno));
	fsd_rotate(&d->rotation, &d->history, d->reports);
	if (d->out.rotation_ready)
		fsd_rotate(&d->out.rotation, &d->out.history, d->out.reports);
	if (d->conn.rotation_ready)
		fsd_rotate(&d->conn.rotation, &d->conn.history, d->conn.reports);
	fsd_state_budget_warn(&d->budget, fsd_now_ns());
	fsd_metrics_update(d);
}

/* Client events handled between two looks at the timer: a batch of
 * hostile or busy clients (status answers read per-CPU maps) delays a
 * rotation by at most this many of them. */
#define FSD_EVENTS_PER_TIMER_LOOK 8

/* Returns when a stop signal arrives (or the loop cannot go on). */
static int loop(struct fsd_daemon *d)
{
	int rb_fd = ring_buffer__epoll_fd(d->reports);
	struct epoll_event ev[64];
	int i, n;

	for (;;) {
		/* Clients' deadlines bound the wait: a client that never
		 * sends is answered (or dropped) on time. */
		n = epoll_wait(d->epoll_fd, ev, FS_ARRAY_SIZE(ev),
			       fsd_server_expire(d));
		if (n < 0) {
			int err = -errno;

			if (err == -EINTR)
				continue;
			fsd_err("epoll_wait failed: %s", strerror(-err));
			return err;
		}
		for (i = 0; i < n; i++) {
			int fd = ev[i].data.fd;

			if (i % FSD_EVENTS_PER_TIMER_LOOK == 0)
				fsd_daemon_rotate_if_due(d);
			if (ev[i].data.u64 & FSD_EV_CLIENT) {
				fsd_server_client_event(d, ev[i].data.u64 & ~FSD_EV_CLIENT,
							ev[i].events);
			} else if (fd == d->signal_fd) {
				struct signalfd_siginfo si;

				if (read(fd, &si, sizeof(si)) == sizeof(si)) {
					fsd_info("%s: stopping", strsignal((int)si.ssi_signo));
					return 0;
				}
			} else if (fd == d->timer_fd) {
				fsd_daemon_rotate_if_due(d);
			} else if (fd == rb_fd) {
				fsd_reports_drain(d->reports, &d->report_state);
			} else if (d->out.reports && fd == ring_buffer__epoll_fd(d->out.reports)) {
				fsd_reports_drain(d->out.reports, &d->out.report_state);
			} else if (d->conn.reports && fd == ring_buffer__epoll_fd(d->conn.reports)) {
				fsd_reports_drain(d->conn.reports, &d->conn.report_state);
			} else if (fd == d->listen_fd) {
				fsd_server_accept(d);
			} else if (fd == d->workers.event_fd) {
				struct fsd_job *job = fsd_workers_take_done(&d->workers);

				while (job) {
					struct fsd_job *next = job->next;

					fsd_server_job_done(d, job);
					job = next;
				}
			} else if (fd == d->ifwatch.fd) {
				fsd_ifwatch_handle(&d->ifwatch, &d->loader);
				fsd_frontend_sync_ifaces(d, &d->out);
			}
		}
	}
}

int fsd_daemon_detach(const struct fsd_options *o)
{
	struct fsd_pinlock lock = { .fd = -1 };
	int n, m, err;

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
	n = fsd_frontend_remove(&fsd_tp_egress, o->pin_dir, o->state_dir);
	m = fsd_frontend_remove(&fsd_tp_conn, o->pin_dir, o->state_dir);
	n = fsd_loader_remove_pins(o->pin_dir) + (n > 0 ? n : 0) + (m > 0 ? m : 0);
	fsd_metrics_forget(o->state_dir);
	err = fsd_winstore_clear_locked(o->state_dir);
	if (err && !n)
		n = err;
	lock.created = true;	/* what flowsketch made: the directory goes too */
	fsd_pinlock_release(&lock);
	if (n < 0)
		return n;
	if (!access(o->pin_dir, F_OK)) {
		fsd_err("%s is not empty: something other than flowsketch's pins is there",
			o->pin_dir);
		return -ENOTEMPTY;
	}
	fsd_info("detached: removed %d pins and links under %s, and %s", n,
		 o->pin_dir, o->state_dir);
	return 0;
}

int fsd_daemon_run(struct fsd_daemon *d)
{
	int err;

	d->listen_fd = -1;
	d->timer_fd = -1;
	d->signal_fd = -1;
	d->epoll_fd = -1;
	d->lock.fd = -1;
	d->ifwatch.fd = -1;
	d->store.lock_fd = -1;
	fsd_frontend_init(&d->out);
	fsd_frontend_init(&d->conn);
	err = setup(d);
	if (!err) {
		fsd_info("running: window %u s, history %u s, %u windows kept",
			 d->opts.window_sec, d->opts.history_sec,
			 d->history.capacity);
		fsd_metrics_update(d);
		err = loop(d);
	}
	teardown(d);
	return err;
}
