// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* metrics.c - /metrics for Prometheus (metrics.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <microhttpd.h>
#include <gnutls/gnutls.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "stat_names.h"
#include "cidr.h"
#include "flow_fmt.h"
#include "prefix_estimate.h"
#include "spread_estimate.h"
#include "base/log.h"
#include "request.h"
#include "sketch.h"
#include "datapath/tp_frontend.h"
#include "windows/topk.h"
#include "blocklist/blocklist.h"
#include "policy/policy.h"
#include "windows/accuracy_watch.h"
#include "frontends/frontend.h"
#include "frontends/loader.h"
#include "metrics.h"
#include "windows/statebudget.h"
#include "view.h"
#include "flowsketch.skel.h"	/* after loader.h: needs params.h's types */

#define STATE_MAGIC "# flowsketchd metrics state 1"
#define SERIES_MAX 256


/* ------------------------------------------------------------ the address */

int fsd_metrics_parse_addr(const char *arg, struct sockaddr_storage *addr,
			   socklen_t *len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
	const char *host_at = arg, *port = NULL, *end;
	char host[256];
	unsigned long v;
	size_t n;
	int err;

	if (*arg == '[') {
		/* [IPv6]:PORT */
		end = strchr(arg, ']');
		if (!end)
			return fsd_reject(-EINVAL, "--metrics \"%s\": no ] after the IPv6 address",
					  arg);
		host_at = arg + 1;
		n = (size_t)(end - host_at);
		if (end[1] == ':')
			port = end + 2;
		hints.ai_family = AF_INET6;
		hints.ai_flags = AI_NUMERICHOST;
	} else {
		end = strrchr(arg, ':');
		n = end ? (size_t)(end - arg) : strlen(arg);
		if (end)
			port = end + 1;
		if (memchr(arg, ':', n))
			return fsd_reject(-EINVAL, "--metrics \"%s\": an IPv6 address goes in brackets, e.g. [::1]:9108",
					  arg);
	}
	if (!port || !*port)
		return fsd_reject(-EINVAL, "--metrics \"%s\": no port: give ADDR:PORT, e.g. 127.0.0.1:9108",
				  arg);
	if (!n)
		return fsd_reject(-EINVAL, "--metrics \"%s\": no address before the port (0.0.0.0 or [::] for every address)",
				  arg);
	if (n >= sizeof(host))
		return fsd_reject(-EINVAL, "--metrics: the address is longer than %zu bytes",
				  sizeof(host) - 1);
	memcpy(host, host_at, n);
	host[n] = 0;
	errno = 0;
	v = strtoul(port, (char **)&end, 10);
	if (*end || errno || *port < '0' || *port > '9' || v < 1 || v > 65535)
		return fsd_reject(-EINVAL, "--metrics \"%s\": the port must be a number from 1 to 65535, not \"%s\"",
				  arg, port);
	err = getaddrinfo(host, NULL, &hints, &res);
	if (err || !res)
		return fsd_reject(-EINVAL, "--metrics \"%s\": cannot resolve \"%s\": %s",
				  arg, host,
				  err == EAI_SYSTEM ? strerror(errno) : gai_strerror(err));
	memset(addr, 0, sizeof(*addr));
	memcpy(addr, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	if (addr->ss_family == AF_INET6)
		((struct sockaddr_in6 *)addr)->sin6_port = htons((__u16)v);
	else
		((struct sockaddr_in *)addr)->sin_port = htons((__u16)v);
	freeaddrinfo(res);
	return 0;
}

/* ------------------------------------------------------------ pages */

static void page_put(struct fsd_metrics_page *p)
{
	if (p && !__atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL))
		free(p);
}

/* libmicrohttpd is done with a response (its free callback). */
static void page_sent(void *cls)
{
	page_put(cls);
}

/* ------------------------------------------------------------ HTTP */

/* A plain text answer with status, and a header when name is given;
 * status 0: the basic auth challenge (401 and WWW-Authenticate). */
static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned int status,
				  const char *text, const char *name, const char *value)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(strlen(text), (void *)text,
					    MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; charset=utf-8");
	if (name)
		MHD_add_response_header(r, name, value);
	ret = status ? MHD_queue_response(c, status, r) :
	      MHD_queue_basic_auth_fail_response(c, "flowsketch", r);
	MHD_destroy_response(r);
	return ret;
}

/* A client certificate that client_ca_file verifies (GnuTLS checks the
 * chain and the dates against the trust list libmicrohttpd was given). */
static bool client_cert_ok(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci;
	unsigned int status = 0;

	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (!ci || !ci->tls_session)
		return false;
	return gnutls_certificate_verify_peers2(ci->tls_session, &status) >= 0 &&
	       !status;
}

/*
 * May this request be answered (metrics.h, "Access")?  MHD_YES with
 * *refused false: go on; otherwise the refusal is queued (or failed) and
 * its result is what answer() returns.
 */
static enum MHD_Result access_check(struct fsd_metrics *m,
				    struct MHD_Connection *c, bool *refused)
{
	enum fsd_auth_result res = FSD_AUTH_DENIED;
	char *user, *pass = NULL;

	*refused = true;
	if (m->web.client_auth == FSD_CLIENT_CERT_REQUIRE && !client_cert_ok(c))
		return reply_text(c, MHD_HTTP_FORBIDDEN,
				  "forbidden: /metrics needs a client certificate of client_ca_file\n",
				  NULL, NULL);
	if (!m->auth_ready) {
		*refused = false;
		return MHD_YES;
	}
	user = MHD_basic_auth_get_username_password(c, &pass);
	if (user && pass)
		res = fsd_basicauth_check(&m->auth, user, pass);
	if (pass) {
		explicit_bzero(pass, strlen(pass));
		MHD_free(pass);
	}
	if (user)
		MHD_free(user);
	if (res == FSD_AUTH_OK) {
		*refused = false;
		return MHD_YES;
	}
	if (res == FSD_AUTH_BUSY)
		return reply_text(c, MHD_HTTP_TOO_MANY_REQUESTS,
				  "too many new passwords: try again\n",
				  MHD_HTTP_HEADER_RETRY_AFTER, "1");
	return reply_text(c, 0, "unauthorized: /metrics needs a user and password\n",
			  NULL, NULL);
}

/*
 * Every request, on the HTTP thread.  Refusals are answered at the first
 * call (libmicrohttpd then closes the connection: a body may follow);
 * GET and HEAD once the request is whole, any body skipped, so that the
 * connection can be kept for the next scrape.  Touches m->page and
 * nothing else of the daemon.
 */
static enum MHD_Result answer(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload,
			      size_t *upload_size, void **req)
{
	struct fsd_metrics *m = cls;
	struct fsd_metrics_page *p;
	struct MHD_Response *r;
	enum MHD_Result ret;
	bool refused;

	/* Access first, once a request: whatever the path or method. */
	if (!*req) {
		ret = access_check(m, c, &refused);
		if (refused)
			return ret;
	}
	if (strcmp(url, "/metrics"))
		return reply_text(c, MHD_HTTP_NOT_FOUND,
				  "not found: the metrics are at /metrics\n", NULL, NULL);
	if (strcmp(method, MHD_HTTP_METHOD_GET) &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED,
				  "method not allowed: GET or HEAD /metrics\n",
				  MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	if (!*req) {
		*req = m;	/* seen: the next call has the whole request */
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0;
		return MHD_YES;
	}
	pthread_mutex_lock(&m->lock);
	p = m->page;
	if (p)
		__atomic_add_fetch(&p->refs, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&m->lock);
	if (!p)
		return reply_text(c, MHD_HTTP_SERVICE_UNAVAILABLE,
				  "flowsketchd is starting: no metrics yet\n", NULL, NULL);
	r = MHD_create_response_from_buffer_with_free_callback_cls(
			p->len, p->text, page_sent, p);
	if (!r) {
		page_put(p);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; version=0.0.4; charset=utf-8");
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* libmicrohttpd's messages (a client's bad request, mostly): with -v. */
static void httpd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[256];
	size_t n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = 0;
	fsd_debug("metrics: %s", msg);
}

/* --metrics-web-config: read, checked, the password cache ready. */
static int web_open(struct fsd_metrics *m, const char *web_config)
{
	int err;

	err = fsd_webconfig_load(&m->web, web_config);
	if (err)
		return err;
	if (m->web.tls && !MHD_is_feature_supported(MHD_FEATURE_TLS))
		return fsd_reject(-ENOTSUP, "--metrics-web-config %s: this libmicrohttpd is built without TLS",
				  web_config);
	if (m->web.nusers) {
		err = fsd_basicauth_init(&m->auth, m->web.users, m->web.nusers);
		if (err)
			return err;
		m->auth_ready = true;
	}
	if (m->web.nusers && !m->web.tls)
		fsd_warn("--metrics-web-config %s: basic_auth_users without tls_server_config: passwords cross the network in clear",
			 web_config);
	return 0;
}

int fsd_metrics_open(struct fsd_metrics *m, const struct sockaddr_storage *addr,
		     socklen_t len, const char *arg, const char *web_config)
{
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
			     MHD_USE_ERROR_LOG;
	char host[INET6_ADDRSTRLEN] = "?";
	struct MHD_OptionItem tls[5];
	unsigned int ntls = 0;
	int fd, one = 1, err;
	__u16 port;

	if (!arg)
		return 0;
	if (web_config) {
		err = web_open(m, web_config);
		if (err)
			return err;
	}
	if (m->web.tls) {
		flags |= MHD_USE_TLS;
		tls[ntls++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0,
						       m->web.cert_pem };
		tls[ntls++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0,
						       m->web.key_pem };
		tls[ntls++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES, 0,
						       (void *)m->web.priorities };
		/* With a trust list libmicrohttpd asks each client for its
		 * certificate; access_check() refuses those it cannot verify. */
		if (m->web.ca_pem)
			tls[ntls++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_TRUST, 0,
							       m->web.ca_pem };
	}
	tls[ntls] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	if (addr->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const void *)addr;

		inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
		port = ntohs(a->sin6_port);
		flags |= MHD_USE_IPv6;
	} else {
		const struct sockaddr_in *a = (const void *)addr;

		inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
		port = ntohs(a->sin_port);
	}
	fd = socket(addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fsd_fail(-errno, "--metrics %s: cannot make a socket", arg);
	/* A restart binds again at once, whatever TIME_WAIT is left; a port
	 * another socket listens on is still refused. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)addr, len) || listen(fd, 64)) {
		err = -errno;
		fsd_err("--metrics %s: cannot listen on %s port %u: %s%s", arg,
			host, port, strerror(-err),
			err == -EADDRNOTAVAIL ? " (not an address of this host)" :
			err == -EADDRINUSE ? " (another program listens there)" : "");
		goto fail;
	}
	err = pthread_mutex_init(&m->lock, NULL);
	if (err) {
		err = -err;
		fsd_fail(err, "--metrics");
		goto fail;
	}
	m->lock_ready = true;
	/* Signals are blocked by now (daemon.c): its thread inherits that. */
	errno = 0;
	m->httpd = MHD_start_daemon(flags, 0, NULL, NULL, answer, m,
			MHD_OPTION_EXTERNAL_LOGGER, httpd_log, NULL,
			MHD_OPTION_LISTEN_SOCKET, fd,
			MHD_OPTION_CONNECTION_LIMIT, (unsigned int)FSD_METRICS_CONNECTIONS,
			MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)FSD_METRICS_TIMEOUT_SEC,
			MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)FSD_METRICS_CONN_MEMORY,
			MHD_OPTION_ARRAY, tls,
			MHD_OPTION_END);
	if (!m->httpd) {
		err = errno ? -errno : -EIO;
		fsd_fail(err, "--metrics %s: cannot start the HTTP server", arg);
		goto fail;
	}
	fsd_info("metrics at http%s://%s%s%s:%u/metrics%s%s",
		 m->web.tls ? "s" : "",
		 addr->ss_family == AF_INET6 ? "[" : "", host,
		 addr->ss_family == AF_INET6 ? "]" : "", port,
		 m->web.client_auth == FSD_CLIENT_CERT_REQUIRE ? ", client certificates required" : "",
		 m->auth_ready ? ", basic auth" : "");
	return 0;
fail:
	close(fd);
	return err;
}

void fsd_metrics_close(struct fsd_metrics *m)
{
	size_t i;

	if (m->httpd)
		MHD_stop_daemon(m->httpd);	/* closes the listening socket */
	m->httpd = NULL;
	page_put(m->page);
	m->page = NULL;
	if (m->lock_ready)
		pthread_mutex_destroy(&m->lock);
	m->lock_ready = false;
	if (m->auth_ready) {
		if (m->auth.bcrypt_runs || m->auth.busy)
			fsd_debug("metrics: %llu bcrypt checks, %llu cache hits, %llu refused over budget",
				  (unsigned long long)m->auth.bcrypt_runs,
				  (unsigned long long)m->auth.cache_hits,
				  (unsigned long long)m->auth.busy);
		fsd_basicauth_free(&m->auth);
	}
	m->auth_ready = false;
	fsd_webconfig_free(&m->web);
	for (i = 0; i < m->ncounters; i++)
		free(m->counters[i].series);
	free(m->counters);
	m->counters = NULL;
	m->ncounters = m->counters_cap = 0;
}

/* ------------------------------------------------------------ counters */

static struct fsd_metrics_counter *counter_find(struct fsd_metrics *m,
						const char *series, bool add)
{
	struct fsd_metrics_counter *c;
	size_t i;

	for (i = 0; i < m->ncounters; i++)
		if (!strcmp(m->counters[i].series, series))
			return &m->counters[i];
	if (!add)
		return NULL;
	if (m->ncounters == m->counters_cap) {
		size_t cap = m->counters_cap ? 2 * m->counters_cap : 64;

		c = realloc(m->counters, cap * sizeof(*c));
		if (!c)
			return NULL;
		m->counters = c;
		m->counters_cap = cap;
	}
	c = &m->counters[m->ncounters];
	memset(c, 0, sizeof(*c));
	c->series = strdup(series);
	if (!c->series)
		return NULL;
	m->ncounters++;
	return c;
}

/*
 * What to export for a counter that reads v now (metrics.h, "Counters
 * never go backwards"); valid false: it could not be read this time.
 * False when there is nothing to export (never read yet, or no memory).
 */
static bool counter_export(struct fsd_metrics *m, const char *series, __u64 v,
			   bool valid, __u64 *out)
{
	struct fsd_metrics_counter *c = counter_find(m, series, valid);

	if (!c || (!valid && !c->live))
		return false;
	if (valid) {
		if (!c->live) {
			c->base = c->restored && c->value > v ? c->value - v : 0;
			c->live = true;
		}
		if (v + c->base > c->value)
			c->value = v + c->base;
	}
	*out = c->value;
	return true;
}

/* The state file's path in dir: 0 or -ENAMETOOLONG. */
static int state_path(char *buf, size_t len, const char *dir, const char *suffix)
{
	if (snprintf(buf, len, "%s/" FSD_METRICS_STATE "%s", dir, suffix) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

/* The previous daemon's counters, if it ran on this datapath. */
static void state_read(struct fsd_metrics *m, const char *dir)
{
	char path[PATH_MAX], line[SERIES_MAX + 32], *sp, *end;
	struct fsd_metrics_counter *c;
	unsigned long long v;
	unsigned int id;
	size_t n = 0;
	FILE *f;

	if (state_path(path, sizeof(path), dir, ""))
		return;
	f = fopen(path, "re");
	if (!f)
		return;
	if (!fgets(line, sizeof(line), f) || strcmp(line, STATE_MAGIC "\n") ||
	    !fgets(line, sizeof(line), f) || sscanf(line, "datapath %u", &id) != 1) {
		fsd_warn("%s is not a metrics state of this version: ignored", path);
		goto out;
	}
	if (id != m->datapath_id) {
		fsd_debug("%s belongs to another datapath (%u, not %u): ignored",
			  path, id, m->datapath_id);
		goto out;
	}
	while (fgets(line, sizeof(line), f)) {
		sp = strrchr(line, ' ');
		if (!sp || sp == line)
			break;
		*sp = 0;
		errno = 0;
		v = strtoull(sp + 1, &end, 10);
		if (errno || *end != '\n' || sp[1] < '0' || sp[1] > '9')
			break;
		c = counter_find(m, line, true);
		if (!c)
			break;
		c->value = v;
		c->restored = true;
		n++;
	}
	fsd_debug("%zu counters restored from %s", n, path);
out:
	fclose(f);
}

/* Keep what is exported: a temporary file renamed over the last one. */
static void state_write(struct fsd_metrics *m, const char *dir)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	int fd, err = 0;
	size_t i;
	FILE *f;

	if (state_path(path, sizeof(path), dir, "") ||
	    state_path(tmp, sizeof(tmp), dir, ".tmp"))
		return;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		goto out;
	}
	fprintf(f, STATE_MAGIC "\ndatapath %u\n", m->datapath_id);
	for (i = 0; i < m->ncounters; i++)
		if (m->counters[i].live || m->counters[i].restored)
			fprintf(f, "%s %llu\n", m->counters[i].series,
				(unsigned long long)m->counters[i].value);
	if (ferror(f))
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
out:
	/* Once per streak: a full /run would say it every window. */
	if (err && !m->state_failing)
		fsd_warn("cannot keep the metrics' counters in %s (%s): a restart may show them lower",
			 path, strerror(-err));
	m->state_failing = err != 0;
}

void fsd_metrics_forget(const char *dir)
{
	char path[PATH_MAX];

	if (!state_path(path, sizeof(path), dir, ""))
		unlink(path);
	if (!state_path(path, sizeof(path), dir, ".tmp"))
		unlink(path);
}

/* ------------------------------------------------------------ the page */

/* A page being built; failed once memory ran out. */
struct text {
	struct fsd_metrics_page *page;
	size_t cap;			/* bytes for text */
	bool failed;
};

static void put(struct text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put(struct text *t, const char *fmt, ...)
{
	struct fsd_metrics_page *p;
	va_list ap;
	int n;

	while (!t->failed) {
		va_start(ap, fmt);
		n = vsnprintf(t->page->text + t->page->len, t->cap - t->page->len,
			      fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->failed = true;
		} else if ((size_t)n < t->cap - t->page->len) {
			t->page->len += (size_t)n;
			return;
		} else {
			p = realloc(t->page, sizeof(*p) + 2 * t->cap + (size_t)n);
			if (!p) {
				t->failed = true;
				break;
			}
			t->page = p;
			t->cap = 2 * t->cap + (size_t)n;
		}
	}
}

static void family(struct text *t, const char *name, const char *type,
		   const char *help)
{
	put(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A counter's sample, "name{labels} value" (labels may be ""). */
static void counter(struct text *t, struct fsd_metrics *m, const char *name,
		    const char *labels, __u64 v, bool valid)
{
	char series[SERIES_MAX];
	__u64 out;

	if (snprintf(series, sizeof(series), "%s%s%s%s", name, *labels ? "{" : "",
		     labels, *labels ? "}" : "") >= (int)sizeof(series))
		return;
	if (counter_export(m, series, v, valid, &out))
		put(t, "%s %llu\n", series, (unsigned long long)out);
}

/* A label value as the format wants it: \, " and newline escaped. */
static void escape(char *out, size_t len, const char *s)
{
	size_t n = 0;

	for (; *s && n + 3 < len; s++) {
		if (*s == '\\' || *s == '"' || *s == '\n') {
			out[n++] = '\\';
			out[n++] = *s == '\n' ? 'n' : *s;
		} else {
			out[n++] = *s;
		}
	}
	out[n] = 0;
}

/* One frontend as the page needs it. */
struct source {
	const char *frontend;		/* status's name */
	const char *direction;		/* "in", "out"; NULL: not a direction */
	const struct fsd_history *history;	/* NULL: not set up */
	const struct fsd_rotation *rotation;
	const struct fsd_winstore *store;	/* NULL: no state directory */
	const struct fsd_ifslots *ifslots;	/* NULL: counts no interface */
	__u64 stats[FS_STAT_MAX];
	bool stats_ok;
	bool tracing;			/* a tracing program: it has misses */
	int link_fd;			/* its link; -1 if not attached */
};

static unsigned int sources_of(const struct fsd_view *v, struct source s[FSD_FE_MAX])
{
	unsigned int i, n = 0;

	memset(s, 0, FSD_FE_MAX * sizeof(*s));
	for (i = 0; i < FSD_FE_MAX; i++) {
		const struct fsd_frontend *fe = &v->fe[i];

		if (!fe->loaded)
			continue;
		s[n].frontend = fe->ops->name;
		s[n].direction = fe->ops->metrics_direction;
		s[n].history = fe->history_ready ? &fe->history : NULL;
		s[n].rotation = fe->rotation_ready ? &fe->rotation : NULL;
		s[n].store = fe->store.usable ? &fe->store : NULL;
		s[n].ifslots = fe->counts;
		s[n].stats_ok = !fsd_object_read_stats(fe->bpf, s[n].stats);
		s[n].tracing = fe->ops->tracing;
		s[n].link_fd = fe->link_fd ? *fe->link_fd : -1;
		n++;
	}
	return n;
}

/* Does source s count per interface (ifslots.h)? */
static bool counts_interfaces(const struct source *s)
{
	return s->direction && s->ifslots && s->ifslots->t && s->ifslots->counted;
}

/*
 * One interface's packets or bytes in one direction (ifslots.h), read
 * as the page is built, after a window closed; or, unattributed, those
 * of frames of no configured interface (FS_IFSLOT_OTHER), in a family of
 * their own so that no interface name can clash with them.
 */
static void put_interface_counts(struct text *t, struct fsd_metrics *m,
				 const struct fsd_view *v,
				 const struct source *s, const char *name,
				 bool bytes, bool unattributed)
{
	char l[96], esc[2 * IF_NAMESIZE + 1];
	struct fs_if_counts c;
	unsigned int i, n = unattributed ? 1 : v->loader->n_ifaces;
	bool ok;

	for (i = 0; i < n; i++) {
		__u32 slot = unattributed ? FS_IFSLOT_OTHER : s->ifslots->slot[i];

		ok = !fsd_ifslots_read(s->ifslots, slot, &c);
		if (unattributed) {
			snprintf(l, sizeof(l), "direction=\"%s\"", s->direction);
		} else {
			escape(esc, sizeof(esc), v->loader->ifaces[i].iface->name);
			snprintf(l, sizeof(l), "interface=\"%s\",direction=\"%s\"",
				 esc, s->direction);
		}
		counter(t, m, name, l, bytes ? c.bytes : c.packets, ok);
	}
}

static void put_totals(struct text *t, struct fsd_metrics *m,
		       const struct fsd_view *v, const struct source *s,
		       unsigned int n)
{
	static const struct {
		const char *name, *help;
		bool bytes, unattributed;
	} families[] = {
		{ "flowsketch_packets_total",
		  "Packets counted in the sketches since the interface got its counter in this datapath, by interface and direction (in: received on it, out: sent on it).",
		  false, false },
		{ "flowsketch_bytes_total",
		  "Bytes of those packets (whole frames from the Ethernet header, without FCS), by interface and direction.",
		  true, false },
		{ "flowsketch_unattributed_packets_total",
		  "Packets counted in the sketches on no -i interface (a link of an interface the daemon detached as it started), by direction.",
		  false, true },
		{ "flowsketch_unattributed_bytes_total",
		  "Bytes of those packets, by direction.",
		  true, true },
	};
	char l[64];
	unsigned int f, i;

	for (f = 0; f < FS_ARRAY_SIZE(families); f++) {
		family(t, families[f].name, "counter", families[f].help);
		for (i = 0; i < n; i++)
			if (counts_interfaces(&s[i]))
				put_interface_counts(t, m, v, &s[i], families[f].name,
						     families[f].bytes,
						     families[f].unattributed);
	}
	family(t, "flowsketch_malformed_packets_total", "counter",
	       "Frames the parser refused (counted, passed, never misparsed), by direction and reason.");
	for (i = 0; i < n; i++) {
		size_t r;

		if (!s[i].direction)
			continue;
		for (r = 0; r < fs_malformed_reasons_n; r++) {
			snprintf(l, sizeof(l), "direction=\"%s\",reason=\"%s\"",
				 s[i].direction, fs_malformed_reasons[r].name);
			counter(t, m, "flowsketch_malformed_packets_total", l,
				s[i].stats[fs_malformed_reasons[r].stat], s[i].stats_ok);
		}
	}
}

/* Source s's sample of a per-frontend counter. */
static void frontend_counter(struct text *t, struct fsd_metrics *m, const char *name,
			     const struct source *s, __u64 v, bool valid)
{
	char l[64];

	snprintf(l, sizeof(l), "frontend=\"%s\"", s->frontend);
	counter(t, m, name, l, v, valid);
}

static void put_frontends(struct text *t, struct fsd_metrics *m,
			  const struct source *s, unsigned int n)
{
	unsigned int i;
	__u64 v = 0;
	bool ok;

	family(t, "flowsketch_reports_total", "counter",
	       "Heavy-hitter reports the datapath put in its ring buffer, by frontend.");
	for (i = 0; i < n; i++)
		frontend_counter(t, m, "flowsketch_reports_total", &s[i],
				 s[i].stats[FS_STAT_REPORTS], s[i].stats_ok);
	family(t, "flowsketch_reports_dropped_total", "counter",
	       "Heavy-hitter reports lost because the ring buffer was full, by frontend.");
	for (i = 0; i < n; i++)
		frontend_counter(t, m, "flowsketch_reports_dropped_total", &s[i],
				 s[i].stats[FS_STAT_REPORTS_DROPPED], s[i].stats_ok);
	family(t, "flowsketch_windows_finished_total", "counter",
	       "Windows closed into the history since the datapath was loaded, by frontend.");
	for (i = 0; i < n; i++)
		if (s[i].history)
			frontend_counter(t, m, "flowsketch_windows_finished_total", &s[i],
					 s[i].history->windows_before +
					 s[i].history->windows_finished, true);
	family(t, "flowsketch_windows_lost_total", "counter",
	       "Windows a failed rotation gave up (none of their counts kept), by frontend.");
	for (i = 0; i < n; i++)
		if (s[i].rotation)
			frontend_counter(t, m, "flowsketch_windows_lost_total", &s[i],
					 s[i].rotation->errors, true);
	family(t, "flowsketch_state_windows_evicted_total", "counter",
	       "Finished windows given up, oldest first across every frontend, to keep the state directory within --state-max and its file system's free space, by frontend.");
	for (i = 0; i < n; i++)
		if (s[i].store)
			frontend_counter(t, m, "flowsketch_state_windows_evicted_total",
					 &s[i], s[i].store->evicted, true);
	family(t, "flowsketch_history_bytes", "gauge",
	       "Memory a frontend's window history holds now (sketches, mapped or not, and candidate sets), by frontend.");
	for (i = 0; i < n; i++)
		if (s[i].history)
			put(t, "flowsketch_history_bytes{frontend=\"%s\"} %zu\n",
			    s[i].frontend, fsd_history_bytes(s[i].history));
	family(t, "flowsketch_recursion_misses_total", "counter",
	       "Runs of a tracing frontend the kernel skipped because it was already running on that CPU, by frontend.");
	for (i = 0; i < n; i++) {
		if (!s[i].tracing)
			continue;	/* XDP has no such thing */
		ok = !fsd_tp_recursion_misses(s[i].link_fd, &v);
		frontend_counter(t, m, "flowsketch_recursion_misses_total", &s[i], v, ok);
	}
}

/* The last finished window of each direction: distinct counts. */
static void put_distinct(struct text *t, const struct source *s, unsigned int n)
{
	static const struct {
		const char *name, *help;
		enum fs_hll_sketch which;
	} gauges[] = {
		{ "flowsketch_distinct_flows",
		  "Distinct five-tuples in the last finished window (HyperLogLog estimate), by direction.",
		  FS_HLL_FLOWS },
		{ "flowsketch_distinct_sources",
		  "Distinct source addresses in the last finished window (HyperLogLog estimate), by direction.",
		  FS_HLL_SOURCES },
		{ "flowsketch_distinct_destinations",
		  "Distinct destination addresses in the last finished window (HyperLogLog estimate), by direction.",
		  FS_HLL_DESTS },
	};
	const struct fsd_window *w;
	unsigned int i;
	size_t g;

	for (g = 0; g < FS_ARRAY_SIZE(gauges); g++) {
		family(t, gauges[g].name, "gauge", gauges[g].help);
		for (i = 0; i < n; i++) {
			if (!s[i].direction || !s[i].history)
				continue;
			w = fsd_history_window(s[i].history, 0);
			if (!w)
				continue;	/* no window finished yet */
			put(t, "%s{direction=\"%s\"} %lld\n", gauges[g].name,
			    s[i].direction, (long long)llround(
				    fs_sketch_distinct(&w->sketch, gauges[g].which)));
		}
	}
}

static void put_connections(struct text *t, struct fsd_metrics *m,
			    const struct fsd_view *v)
{
	if (!v->fe[FSD_FE_CONN].history_ready)
		return;
	family(t, "flowsketch_connections_opened_total", "counter",
	       "TCP connections opened in the daemon's network namespace (attempts: CLOSE->SYN_SENT and LISTEN->SYN_RECV), in finished windows.");
	counter(t, m, "flowsketch_connections_opened_total", "",
		v->fe[FSD_FE_CONN].history.totals.packets, true);
	family(t, "flowsketch_connections_established_total", "counter",
	       "TCP connections established (handshake completed), in finished windows.");
	counter(t, m, "flowsketch_connections_established_total", "",
		v->fe[FSD_FE_CONN].history.totals.bytes, true);
}

/* The state directory's budget (statebudget.h), shared by every store. */
static void put_state(struct text *t, const struct fsd_view *v)
{
	if (!v->fe[FSD_FE_IN].store.usable)
		return;
	family(t, "flowsketch_state_bytes", "gauge",
	       "Bytes the window files and journals take in the state directory (file system blocks), with a reserve for the metrics' counter file.");
	put(t, "flowsketch_state_bytes %llu\n", v->budget->used);
	family(t, "flowsketch_state_max_bytes", "gauge",
	       "The state directory's budget (--state-max, or a quarter of its file system).");
	put(t, "flowsketch_state_max_bytes %llu\n", v->budget->max);
}

/* The policy's decisions and state (policy.h), when it runs one. */
static void put_policy(struct text *t, struct fsd_metrics *m,
		       const struct fsd_policy_state *ps)
{
	char labels[64];
	unsigned int a;

	if (!ps || !ps->path)
		return;
	family(t, "flowsketch_policy_rules", "gauge", "Rules of the running policy.");
	put(t, "flowsketch_policy_rules %zu\n", ps->pol.nrules);
	family(t, "flowsketch_policy_dry_run", "gauge",
	       "1 when the policy only logs and counts its decisions (--policy-dry-run).");
	put(t, "flowsketch_policy_dry_run %d\n", ps->dry_run);
	family(t, "flowsketch_policy_keys_above", "gauge",
	       "Keys above a rule in the last window (lower end of the estimate), held toward its duration.");
	put(t, "flowsketch_policy_keys_above %zu\n", ps->nhold);
	family(t, "flowsketch_policy_decisions_total", "counter",
	       "The policy's decisions, by action: blocked, dry-run, limited, allowed, own address, list full.");
	for (a = 0; a < FSD_ACT_COUNT; a++) {
		snprintf(labels, sizeof(labels), "action=\"%s\"", fsd_policy_action_name(a));
		counter(t, m, "flowsketch_policy_decisions_total", labels, ps->count[a], true);
	}
	family(t, "flowsketch_policy_reloads_total", "counter",
	       "Policy reloads (SIGHUP, policy reload), by result.");
	counter(t, m, "flowsketch_policy_reloads_total", "result=\"ok\"", ps->reloads, true);
	counter(t, m, "flowsketch_policy_reloads_total", "result=\"refused\"",
		ps->reload_failures, true);
}

/*
 * The keyed sample's check of the last inbound window (accuracy_watch.h),
 * with a sample: what an alert rule watches (dist/flowsketch-accuracy.rules.yml).
 */
static void put_accuracy(struct text *t, struct fsd_metrics *m,
			 const struct fsd_accuracy_watch *w)
{
	char labels[64];
	unsigned int i;

	if (!w || !w->on)
		return;
	family(t, "flowsketch_accuracy_windows_total", "counter",
	       "Windows whose keyed sample was checked against the sketches.");
	counter(t, m, "flowsketch_accuracy_windows_total", "", w->windows, true);
	family(t, "flowsketch_accuracy_sample_flows", "gauge",
	       "Flows of the last window's keyed sample, each counted exactly.");
	put(t, "flowsketch_accuracy_sample_flows %llu\n", (unsigned long long)w->last.sum.flows);
	family(t, "flowsketch_accuracy_undercounts_total", "counter",
	       "Sampled flows whose Count-Min estimate was below their exact count (never allowed), packets and bytes.");
	counter(t, m, "flowsketch_accuracy_undercounts_total", "", w->undercounts, true);
	family(t, "flowsketch_accuracy_overcount_max_eps", "gauge",
	       "The last window's largest overcount of a sampled flow, in units of the bound eps N (packets or bytes, the larger).");
	put(t, "flowsketch_accuracy_overcount_max_eps %.6g\n",
	    fs_sample_check_overcount_max_eps(&w->last));
	family(t, "flowsketch_accuracy_over_bound_share", "gauge",
	       "The last window's share of sampled flows overcounted by more than eps N, packets or bytes, the larger (design: at most delta).");
	put(t, "flowsketch_accuracy_over_bound_share %.6g\n",
	    fs_sample_check_over_bound_share(&w->last));
	family(t, "flowsketch_accuracy_delta", "gauge",
	       "Count-Min's delta, the most a flow may pass eps N by design (e^-depth).");
	put(t, "flowsketch_accuracy_delta %.6g\n", w->delta);
	family(t, "flowsketch_accuracy_hll_z", "gauge",
	       "The last window's HyperLogLog of flows against the sample's distinct estimate, in standard errors.");
	put(t, "flowsketch_accuracy_hll_z %.6g\n", w->last.z);
	family(t, "flowsketch_accuracy_hll_within_2se_share", "gauge",
	       "Share of the last windows whose HyperLogLog z is within 2 (design: about 0.95; windows of the same flows agree, so it moves in steps).");
	put(t, "flowsketch_accuracy_hll_within_2se_share %.6g\n", w->within);
	family(t, "flowsketch_accuracy_hll_windows", "gauge",
	       "Windows in that share (those with enough sampled flows), at most 64.");
	put(t, "flowsketch_accuracy_hll_windows %zu\n", w->nz);
	family(t, "flowsketch_accuracy_alarm", "gauge",
	       "1 while the last check raised the alarm of its kind: undercount, overcount, distinct.");
	for (i = 0; i < FS_SAMPLE_NALARMS; i++)
		put(t, "flowsketch_accuracy_alarm{kind=\"%s\"} %d\n", fs_sample_alarm_names[i],
		    !!(w->alarms & (1U << i)));
	family(t, "flowsketch_accuracy_alarm_windows_total", "counter",
	       "Windows whose check raised each alarm.");
	for (i = 0; i < FS_SAMPLE_NALARMS; i++) {
		snprintf(labels, sizeof(labels), "kind=\"%s\"", fs_sample_alarm_names[i]);
		counter(t, m, "flowsketch_accuracy_alarm_windows_total", labels,
			w->alarm_windows[i], true);
	}
}

static void put_blocklist(struct text *t, struct fsd_metrics *m,
			  const struct fsd_blocklist *bl)
{
	struct fs_block_stats sum;
	bool ok;

	if (!bl->started)
		return;	/* --ingress tracepoint: nothing is ever dropped */
	ok = !fsd_blocklist_stats(bl, &sum);
	family(t, "flowsketch_blocklist_entries", "gauge",
	       "CIDRs in the blocklist.");
	put(t, "flowsketch_blocklist_entries %zu\n", fsd_blocklist_entries(bl));
	family(t, "flowsketch_blocklist_dropped_packets_total", "counter",
	       "Packets dropped because a blocklist entry covers their source, since the datapath was loaded.");
	counter(t, m, "flowsketch_blocklist_dropped_packets_total", "",
		sum.dropped, ok);
	family(t, "flowsketch_blocklist_dropped_bytes_total", "counter",
	       "Bytes of the packets the blocklist dropped.");
	counter(t, m, "flowsketch_blocklist_dropped_bytes_total", "",
		sum.dropped_bytes, ok);
	family(t, "flowsketch_blocklist_unjudged_dropped_packets_total", "counter",
	       "Frames dropped because they carry more VLAN tags than the datapath walks to read their source, while the blocklist is in force.");
	counter(t, m, "flowsketch_blocklist_unjudged_dropped_packets_total", "",
		sum.unjudged, ok);
	family(t, "flowsketch_blocklist_unjudged_dropped_bytes_total", "counter",
	       "Bytes of the frames dropped unjudged.");
	counter(t, m, "flowsketch_blocklist_unjudged_dropped_bytes_total", "",
		sum.unjudged_bytes, ok);
	family(t, "flowsketch_blocklist_cached_packets_total", "counter",
	       "Packets the verdict cache let pass without a filter probe (a source near an entry that the filter had let pass on the same CPU, under the list as it is), since the datapath was loaded (status cached).");
	counter(t, m, "flowsketch_blocklist_cached_packets_total", "",
		sum.cached, ok);
	family(t, "flowsketch_blocklist_false_positive_ratio", "gauge",
	       "Filter probes answered maybe and not confirmed by the exact set, per probe, since the datapath was loaded (status measured_fpr).");
	if (ok)
		put(t, "flowsketch_blocklist_false_positive_ratio %.17g\n",
		    sum.probes ? (double)(sum.maybe - sum.dropped) /
				 (double)sum.probes : 0.0);
}

static void offer_window(struct fsd_topk *top, const struct fsd_window *w,
			 __u32 direction)
{
	top->direction = direction;
	if (w)
		fsd_offer_candidates(top, &w->candidates, &w->sketch);
}

/*
 * The top talkers of the last finished window, both directions ranked
 * together: what `flowsketch top -n N` answers for it (query.c), read
 * here from the windows themselves (the loop alone changes the ring).
 */
static void put_top(struct text *t, const struct fsd_view *v, unsigned int n)
{
	char src[FS_ADDR_STR_MAX] = "?", dst[FS_ADDR_STR_MAX] = "?";
	char esrc[2 * FS_ADDR_STR_MAX], edst[2 * FS_ADDR_STR_MAX], num[4];
	struct fsd_topk top;
	size_t i, got;

	if (!n)
		return;
	family(t, "flowsketch_top_packets", "gauge",
	       "Packets of the last finished window's top talkers (Count-Min estimate, never below the truth), by flow and direction.");
	if (fsd_topk_init(&top, n, FSD_SORT_PACKETS)) {
		t->failed = true;
		return;
	}
	offer_window(&top, fsd_history_window(&v->fe[FSD_FE_IN].history, 0), FSD_DIR_IN);
	if (v->fe[FSD_FE_OUT].history_ready)
		offer_window(&top, fsd_history_window(&v->fe[FSD_FE_OUT].history, 0),
			     FSD_DIR_OUT);
	got = fsd_topk_finish(&top);
	for (i = 0; i < got; i++) {
		const struct fsd_flow_count *c = &top.heap[i];

		fs_addr_str(c->key.family, c->key.src, src, sizeof(src));
		fs_addr_str(c->key.family, c->key.dst, dst, sizeof(dst));
		escape(esrc, sizeof(esrc), src);
		escape(edst, sizeof(edst), dst);
		put(t, "flowsketch_top_packets{src=\"%s\",dst=\"%s\",sport=\"%u\",dport=\"%u\",proto=\"%s\",direction=\"%s\"} %llu\n",
		    esrc, edst, fs_flow_sport(&c->key), fs_flow_dport(&c->key),
		    fs_proto_str(c->key.proto, num, sizeof(num)),
		    c->direction == FSD_DIR_OUT ? "out" : "in",
		    (unsigned long long)c->packets);
	}
	fsd_topk_free(&top);
}

/*
 * The heaviest prefixes of each (side, family, length) and the widest
 * spreaders of each side in the last finished window, per direction:
 * what `flowsketch top --by KEY -n N` and `spread --by SIDE -n N` answer
 * for it (prefixes.c, spread.c), as estimates.  Nothing of a sketch the
 * datapath does not keep.
 */
static void put_prefixes(struct text *t, const struct fsd_view *v,
			 const struct fs_sketch *s, const char *dir, unsigned int n,
			 struct fs_heavy_prefix *top)
{
	struct fs_prefix_params p;
	char text[FS_CIDR_TEXT_MAX];
	__u8 tag;
	int got, i;

	fs_params_prefix(&s->params, &p);
	for (tag = 1; tag <= 2 * FS_PREFIX_PAIRS; tag++) {
		got = fs_prefix_top(s->prefix, &p, v->hash_key, tag,
				    FS_PREFIX_BY_PACKETS, top, n);
		if (got < 0)
			t->failed = true;
		for (i = 0; i < got; i++) {
			struct fs_cidr c = { .family = (__u8)fs_prefix_tag_family(tag) };

			c.len = (__u8)fs_prefix_level_len(c.family, fs_prefix_tag_level(tag));
			memcpy(c.addr, top[i].addr, sizeof(c.addr));
			fs_cidr_format(&c, text, sizeof(text));
			put(t, "flowsketch_top_prefix_packets{side=\"%s\",prefix=\"%s\",direction=\"%s\"} %llu\n",
			    fs_prefix_tag_side(tag) == FS_PREFIX_SRC ? "src" : "dst",
			    text, dir, (unsigned long long)top[i].packets);
		}
	}
}

static void put_spreaders(struct text *t, const struct fsd_view *v,
			  const struct fs_sketch *s, const char *dir, unsigned int n,
			  struct fs_spreader *top)
{
	char addr[FS_ADDR_STR_MAX], esc[2 * FS_ADDR_STR_MAX];
	struct fs_spread_params p;
	__u32 side;
	int got, i;

	fs_params_spread(&s->params, &p);
	for (side = FS_PREFIX_SRC; side <= FS_PREFIX_DST; side++) {
		got = fs_spread_top(s->spread, &p, side, v->hash_key, top, n);
		if (got < 0)
			t->failed = true;
		for (i = 0; i < got; i++) {
			fs_addr_str(top[i].family, top[i].addr, addr, sizeof(addr));
			escape(esc, sizeof(esc), addr);
			put(t, "flowsketch_top_spread{side=\"%s\",host=\"%s\",direction=\"%s\"} %.0f\n",
			    side == FS_PREFIX_SRC ? "src" : "dst", esc, dir,
			    top[i].distinct);
		}
	}
}

static void put_detect(struct text *t, const struct fsd_view *v, unsigned int n)
{
	static const char *const dir[] = { "in", "out" };
	const struct fsd_history *h[] = { &v->fe[FSD_FE_IN].history,
					  &v->fe[FSD_FE_OUT].history };
	const struct fs_sketch_params *sp = v->params;
	struct fs_heavy_prefix *pt = calloc(n ? n : 1, sizeof(*pt));
	struct fs_spreader *st = calloc(n ? n : 1, sizeof(*st));
	const struct fsd_window *w;
	unsigned int d;

	if (!pt || !st) {
		t->failed = true;
		goto out;
	}
	if (n && sp->prefix_log2w)
		family(t, "flowsketch_top_prefix_packets", "gauge",
		       "Packets of the last finished window's heaviest prefixes of each side, family and length (sampled estimate, bound in `flowsketch top --by`), by direction.");
	for (d = 0; n && sp->prefix_log2w && d < 2; d++)
		if ((!d || v->fe[FSD_FE_OUT].history_ready) &&
		    (w = fsd_history_window(h[d], 0)))
			put_prefixes(t, v, &w->sketch, dir[d], n, pt);
	if (n && sp->spread_log2w)
		family(t, "flowsketch_top_spread", "gauge",
		       "Distinct peers of the last finished window's widest spreaders of each side (estimate, error in `flowsketch spread`), by direction.");
	for (d = 0; n && sp->spread_log2w && d < 2; d++)
		if ((!d || v->fe[FSD_FE_OUT].history_ready) &&
		    (w = fsd_history_window(h[d], 0)))
			put_spreaders(t, v, &w->sketch, dir[d], n, st);
out:
	free(pt);
	free(st);
}

/* The page from the daemon's state now: NULL when memory ran out. */
static struct fsd_metrics_page *build(struct fsd_metrics *m,
				      const struct fsd_view *v)
{
	struct text t = { .cap = m->page_hint + m->page_hint / 4 + 4096 };
	struct source s[FSD_FE_MAX];
	unsigned int n;

	t.page = malloc(sizeof(*t.page) + t.cap);
	if (!t.page)
		return NULL;
	t.page->refs = 1;
	t.page->len = 0;
	n = sources_of(v, s);
	put_totals(&t, m, v, s, n);
	put_frontends(&t, m, s, n);
	put_distinct(&t, s, n);
	put_connections(&t, m, v);
	put_state(&t, v);
	put_blocklist(&t, m, v->blocklist);
	put_policy(&t, m, v->policy);
	put_accuracy(&t, m, v->accuracy);
	put_top(&t, v, v->opts->metrics_top);
	put_detect(&t, v, v->opts->metrics_top);
	if (t.failed) {
		free(t.page);
		return NULL;
	}
	m->page_hint = t.page->len;
	return t.page;
}

/* Which datapath the counters belong to: fs_ctl's map id. */
static __u32 datapath_id(const struct fsd_view *v)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_map__fd(v->loader->skel->maps.fs_ctl),
				   &info, &len))
		return 0;
	return info.id;
}

void fsd_metrics_update(struct fsd_metrics *m, const struct fsd_view *v)
{
	struct fsd_metrics_page *p, *old;
	__u64 t0;

	if (!m->httpd)
		return;
	if (!m->restored) {
		m->datapath_id = datapath_id(v);
		if (v->fe[FSD_FE_IN].store.usable && m->datapath_id)
			state_read(m, v->fe[FSD_FE_IN].store.dir);
		m->restored = true;
	}
	t0 = fsd_now_ns();
	p = build(m, v);
	if (!p) {
		if (!m->build_errors++)
			fsd_warn("metrics: out of memory building the page: the last one is served");
		return;
	}
	m->builds++;
	fsd_debug("metrics: a page of %zu bytes in %llu us", p->len,
		  (unsigned long long)(fsd_now_ns() - t0) / 1000);
	/* Kept before it is served: nothing served is above the file. */
	if (v->fe[FSD_FE_IN].store.usable && m->datapath_id)
		state_write(m, v->fe[FSD_FE_IN].store.dir);
	pthread_mutex_lock(&m->lock);
	old = m->page;
	m->page = p;
	pthread_mutex_unlock(&m->lock);
	page_put(old);
}
