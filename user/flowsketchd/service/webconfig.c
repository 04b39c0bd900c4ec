// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* webconfig.c - --metrics-web-config FILE, read with libyaml (webconfig.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <gnutls/gnutls.h>
#include <yaml.h>
#include "base/log.h"
#include "base/smallfile.h"
#include "webconfig.h"

#define TLS_KEYS "cert_file, key_file, client_auth_type, client_ca_file, min_version"

/* GnuTLS priorities for min_version: TLS 1.0 and 1.1 are never offered. */
#define PRIO_TLS12 "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"
#define PRIO_TLS13 "NORMAL:-VERS-ALL:+VERS-TLS1.3"

/* The document being walked, for messages. */
struct walk {
	struct fsd_webconfig *wc;
	yaml_document_t *doc;
	char dir[PATH_MAX];		/* the file's directory, for relative paths */
};

static size_t line_of(const yaml_node_t *n)
{
	return n->start_mark.line + 1;
}

/* The one message of a refusal: "FILE:LINE: KEY: ...". */
static int refuse(const struct walk *w, const yaml_node_t *at, const char *key,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int refuse(const struct walk *w, const yaml_node_t *at, const char *key,
		  const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return fsd_reject(-EINVAL, "--metrics-web-config %s:%zu: %s: %s",
			  w->wc->path, line_of(at), key, what);
}

/* PATH's bytes, NUL-terminated, in *out (smallfile.h). */
static int read_capped(const char *path, char **out, size_t *len)
{
	return fsd_read_small_file(path, FSD_WEBCONFIG_FILE_MAX, out, len);
}

static const char *read_error(int err)
{
	return err == -EFBIG ? "larger than 1 MiB" :
	       err == -EISDIR ? "not a regular file" : strerror(-err);
}

/* A scalar's text, or NULL when n is not a scalar or is YAML's null. */
static const char *scalar(const yaml_node_t *n)
{
	const char *v;

	if (n->type != YAML_SCALAR_NODE)
		return NULL;
	v = (const char *)n->data.scalar.value;
	if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	    (!*v || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") ||
	     !strcmp(v, "NULL")))
		return NULL;
	/* A NUL inside (an escaped \0) would cut the text short unseen. */
	if (strlen(v) != n->data.scalar.length)
		return NULL;
	return v;
}

/* A file named by KEY's value n, into *out (a PEM text). */
static int read_pem(struct walk *w, const yaml_node_t *n, const char *key,
		    char **out)
{
	char path[PATH_MAX];
	const char *v = scalar(n);
	size_t len;
	int err;

	if (!v || !*v)
		return refuse(w, n, key, "must be a file name");
	if (*v == '/' || !*w->dir)
		err = snprintf(path, sizeof(path), "%s", v);
	else
		err = snprintf(path, sizeof(path), "%s/%s", w->dir, v);
	if (err < 0 || err >= (int)sizeof(path))
		return refuse(w, n, key, "the path is too long");
	free(*out);
	*out = NULL;
	err = read_capped(path, out, &len);
	if (err)
		return refuse(w, n, key, "cannot read %s: %s", path, read_error(err));
	if (!strstr(*out, "-----BEGIN "))
		return refuse(w, n, key, "%s is not PEM (no -----BEGIN line)", path);
	return 0;
}

/* Each key of a mapping at most once: a second one is refused. */
static int once(struct walk *w, const yaml_node_t *k, const char *key,
		unsigned int *seen, unsigned int bit)
{
	if (*seen & bit)
		return refuse(w, k, key, "given twice");
	*seen |= bit;
	return 0;
}

/* The certificate and key are a pair, the CA file has certificates:
 * GnuTLS's own checks, before libmicrohttpd gets them. */
static int check_tls(struct walk *w, const yaml_node_t *cert_at,
		     const yaml_node_t *ca_at)
{
	struct fsd_webconfig *wc = w->wc;
	gnutls_certificate_credentials_t cred = NULL;
	gnutls_datum_t cert = { (unsigned char *)wc->cert_pem,
				(unsigned int)strlen(wc->cert_pem) };
	gnutls_datum_t key = { (unsigned char *)wc->key_pem,
			       (unsigned int)strlen(wc->key_pem) };
	int rc, err = 0;

	if (gnutls_certificate_allocate_credentials(&cred) < 0)
		return fsd_reject(-ENOMEM, "--metrics-web-config %s: out of memory", wc->path);
	rc = gnutls_certificate_set_x509_key_mem2(cred, &cert, &key,
						  GNUTLS_X509_FMT_PEM, NULL, 0);
	if (rc < 0) {
		err = refuse(w, cert_at, "tls_server_config.cert_file",
			     "the certificate and key_file are not a usable pair: %s",
			     gnutls_strerror(rc));
		goto out;
	}
	if (wc->ca_pem) {
		gnutls_datum_t ca = { (unsigned char *)wc->ca_pem,
				      (unsigned int)strlen(wc->ca_pem) };

		rc = gnutls_certificate_set_x509_trust_mem(cred, &ca,
							   GNUTLS_X509_FMT_PEM);
		if (rc <= 0) {
			err = refuse(w, ca_at, "tls_server_config.client_ca_file",
				     "no CA certificate in it%s%s",
				     rc < 0 ? ": " : "", rc < 0 ? gnutls_strerror(rc) : "");
			goto out;
		}
	}
out:
	gnutls_certificate_free_credentials(cred);
	return err;
}

enum { T_CERT = 1, T_KEY = 2, T_AUTH = 4, T_CA = 8, T_MIN = 16 };

static int parse_tls(struct walk *w, const yaml_node_t *map)
{
	struct fsd_webconfig *wc = w->wc;
	const yaml_node_t *cert_at = NULL, *ca_at = NULL, *auth_at = NULL;
	unsigned int seen = 0;
	yaml_node_pair_t *p;
	char key[64];
	int err;

	if (map->type != YAML_MAPPING_NODE)
		return refuse(w, map, "tls_server_config",
			      "must be a mapping of " TLS_KEYS);
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(w->doc, p->value);
		const char *name = k ? scalar(k) : NULL;

		if (!k || !v)
			return -EINVAL;
		if (!name)
			return refuse(w, k, "tls_server_config", "a key must be a name");
		snprintf(key, sizeof(key), "tls_server_config.%s", name);
		if (!strcmp(name, "cert_file")) {
			err = once(w, k, key, &seen, T_CERT) ?:
			      read_pem(w, v, key, &wc->cert_pem);
			cert_at = v;
		} else if (!strcmp(name, "key_file")) {
			err = once(w, k, key, &seen, T_KEY) ?:
			      read_pem(w, v, key, &wc->key_pem);
		} else if (!strcmp(name, "client_ca_file")) {
			err = once(w, k, key, &seen, T_CA) ?:
			      read_pem(w, v, key, &wc->ca_pem);
			ca_at = v;
		} else if (!strcmp(name, "client_auth_type")) {
			const char *s = scalar(v);

			err = once(w, k, key, &seen, T_AUTH);
			auth_at = v;
			if (err)
				;
			else if (s && !strcmp(s, "NoClientCert"))
				wc->client_auth = FSD_CLIENT_CERT_NONE;
			else if (s && !strcmp(s, "RequireAndVerifyClientCert"))
				wc->client_auth = FSD_CLIENT_CERT_REQUIRE;
			else
				err = refuse(w, v, key, "\"%s\" is not supported: NoClientCert or RequireAndVerifyClientCert",
					     s ? s : "");
		} else if (!strcmp(name, "min_version")) {
			const char *s = scalar(v);

			err = once(w, k, key, &seen, T_MIN);
			if (err)
				;
			else if (s && !strcmp(s, "TLS12"))
				wc->priorities = PRIO_TLS12;
			else if (s && !strcmp(s, "TLS13"))
				wc->priorities = PRIO_TLS13;
			else
				err = refuse(w, v, key, "\"%s\" is not supported: TLS12 or TLS13 (TLS 1.0 and 1.1 are never offered)",
					     s ? s : "");
		} else {
			err = refuse(w, k, key, "not supported by flowsketchd (it takes " TLS_KEYS ")");
		}
		if (err)
			return err;
	}
	if (!(seen & T_CERT) || !(seen & T_KEY))
		return refuse(w, map, "tls_server_config", "needs both cert_file and key_file");
	if (wc->client_auth == FSD_CLIENT_CERT_REQUIRE && !wc->ca_pem)
		return refuse(w, auth_at, "tls_server_config.client_auth_type",
			      "RequireAndVerifyClientCert needs client_ca_file");
	if (wc->client_auth == FSD_CLIENT_CERT_NONE && wc->ca_pem)
		return refuse(w, ca_at, "tls_server_config.client_ca_file",
			      "verifies nothing without client_auth_type: RequireAndVerifyClientCert");
	wc->tls = true;
	return check_tls(w, cert_at, ca_at);
}

/* "$2a$", "$2b$" or "$2y$", the cost, "$", 53 of [./A-Za-z0-9]: the
 * shape libxcrypt and every bcrypt tool write.  The cost in *cost. */
static bool bcrypt_shaped(const char *h, unsigned int *cost)
{
	static const char b64[] =
		"./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	size_t i;

	if (strlen(h) != FSD_BCRYPT_LEN || h[0] != '$' || h[1] != '2' ||
	    !strchr("aby", h[2]) || !h[2] || h[3] != '$' ||
	    h[4] < '0' || h[4] > '9' || h[5] < '0' || h[5] > '9' || h[6] != '$')
		return false;
	for (i = 7; i < FSD_BCRYPT_LEN; i++)
		if (!memchr(b64, h[i], sizeof(b64) - 1))
			return false;
	*cost = (unsigned int)(h[4] - '0') * 10 + (unsigned int)(h[5] - '0');
	return true;
}

static int parse_users(struct walk *w, const yaml_node_t *map)
{
	struct fsd_webconfig *wc = w->wc;
	yaml_node_pair_t *p;
	unsigned int cost;
	size_t n, i;
	char key[128];

	if (map->type != YAML_MAPPING_NODE)
		return refuse(w, map, "basic_auth_users",
			      "must be a mapping of user names to bcrypt hashes");
	n = (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
	if (!n)
		return refuse(w, map, "basic_auth_users", "no user in it");
	wc->users = calloc(n, sizeof(*wc->users));
	if (!wc->users)
		return -ENOMEM;
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(w->doc, p->value);
		const char *name = k ? scalar(k) : NULL, *hash;
		struct fsd_webuser *u;

		if (!k || !v)
			return -EINVAL;
		/* HTTP basic auth sends "name:password": no colon in a name,
		 * and nothing a header cannot carry. */
		if (!name || !*name || strchr(name, ':') || strlen(name) > 64)
			return refuse(w, k, "basic_auth_users",
				      "a user name must be 1 to 64 characters without a colon");
		for (i = 0; name[i]; i++)
			if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
				return refuse(w, k, "basic_auth_users",
					      "a user name must not hold control characters");
		snprintf(key, sizeof(key), "basic_auth_users.%s", name);
		for (i = 0; i < wc->nusers; i++)
			if (!strcmp(wc->users[i].name, name))
				return refuse(w, k, key, "given twice");
		hash = scalar(v);
		if (!hash || !bcrypt_shaped(hash, &cost))
			return refuse(w, v, key, "not a bcrypt hash ($2y$, $2b$ or $2a$, e.g. from htpasswd -nB USER)");
		if (cost < FSD_BCRYPT_COST_MIN || cost > FSD_BCRYPT_COST_MAX)
			return refuse(w, v, key, "bcrypt cost %u is outside %d .. %d (each check holds /metrics for 2^cost rounds)",
				      cost, FSD_BCRYPT_COST_MIN, FSD_BCRYPT_COST_MAX);
		u = &wc->users[wc->nusers];
		u->name = strdup(name);
		if (!u->name)
			return -ENOMEM;
		memcpy(u->hash, hash, FSD_BCRYPT_LEN + 1);
		wc->nusers++;
	}
	return 0;
}

enum { S_TLS = 1, S_USERS = 2 };

static int walk_root(struct walk *w)
{
	yaml_node_t *root = yaml_document_get_root_node(w->doc);
	unsigned int seen = 0;
	yaml_node_pair_t *p;
	int err;

	if (!root)
		return fsd_reject(-EINVAL, "--metrics-web-config %s: empty: give tls_server_config, basic_auth_users or both",
				  w->wc->path);
	if (root->type != YAML_MAPPING_NODE)
		return refuse(w, root, "(top level)",
			      "must be a mapping with tls_server_config and/or basic_auth_users");
	for (p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(w->doc, p->value);
		const char *name = k ? scalar(k) : NULL;

		if (!k || !v)
			return -EINVAL;
		if (!name)
			return refuse(w, k, "(top level)", "a key must be a name");
		if (!strcmp(name, "tls_server_config"))
			err = once(w, k, name, &seen, S_TLS) ?: parse_tls(w, v);
		else if (!strcmp(name, "basic_auth_users"))
			err = once(w, k, name, &seen, S_USERS) ?: parse_users(w, v);
		else
			err = refuse(w, k, name, "not supported by flowsketchd (it takes tls_server_config and basic_auth_users)");
		if (err)
			return err;
	}
	if (!seen)
		return fsd_reject(-EINVAL, "--metrics-web-config %s: configures nothing: give tls_server_config, basic_auth_users or both",
				  w->wc->path);
	return 0;
}

int fsd_webconfig_load(struct fsd_webconfig *wc, const char *path)
{
	struct walk w = { .wc = wc };
	yaml_parser_t parser;
	yaml_document_t doc, extra;
	bool parser_ready = false, doc_ready = false;
	char *text = NULL;
	const char *slash;
	size_t len;
	int err;

	memset(wc, 0, sizeof(*wc));
	wc->path = path;
	wc->priorities = PRIO_TLS12;
	err = read_capped(path, &text, &len);
	if (err) {
		fsd_err("--metrics-web-config %s: cannot read it: %s", path,
			read_error(err));
		return err;
	}
	slash = strrchr(path, '/');
	if (slash)
		snprintf(w.dir, sizeof(w.dir), "%.*s", (int)(slash - path + (slash == path)),
			 path);
	if (!yaml_parser_initialize(&parser)) {
		err = -ENOMEM;
		goto out;
	}
	parser_ready = true;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		fsd_err("--metrics-web-config %s:%zu: not YAML: %s%s%s", path,
			parser.problem_mark.line + 1,
			parser.problem ? parser.problem : "cannot parse",
			parser.context ? " " : "", parser.context ? parser.context : "");
		err = -EINVAL;
		goto out;
	}
	doc_ready = true;
	w.doc = &doc;
	err = walk_root(&w);
	if (err)
		goto out;
	/* One document: a second one would be read by nobody. */
	if (!yaml_parser_load(&parser, &extra)) {
		fsd_err("--metrics-web-config %s:%zu: not YAML: %s", path,
			parser.problem_mark.line + 1,
			parser.problem ? parser.problem : "cannot parse");
		err = -EINVAL;
		goto out;
	}
	if (yaml_document_get_root_node(&extra)) {
		fsd_err("--metrics-web-config %s:%zu: a second YAML document: give one",
			path, extra.start_mark.line + 1);
		err = -EINVAL;
	}
	yaml_document_delete(&extra);
out:
	if (doc_ready)
		yaml_document_delete(&doc);
	if (parser_ready)
		yaml_parser_delete(&parser);
	free(text);
	if (err)
		fsd_webconfig_free(wc);
	return err;
}

void fsd_webconfig_free(struct fsd_webconfig *wc)
{
	size_t i;

	if (wc->key_pem) {
		explicit_bzero(wc->key_pem, strlen(wc->key_pem));
		free(wc->key_pem);
	}
	free(wc->cert_pem);
	free(wc->ca_pem);
	for (i = 0; i < wc->nusers; i++)
		free(wc->users[i].name);
	free(wc->users);
	wc->key_pem = wc->cert_pem = wc->ca_pem = NULL;
	wc->users = NULL;
	wc->nusers = 0;
	wc->tls = false;
}
