/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * webconfig.h - flowsketchd --metrics-web-config FILE: TLS and HTTP basic
 * auth for /metrics, in the format of Prometheus' exporter-toolkit web
 * configuration (YAML), of which flowsketchd takes these keys and no
 * others:
 *
 *   tls_server_config:
 *     cert_file: PATH            PEM certificate (chain), required
 *     key_file: PATH             PEM private key, required
 *     client_auth_type: TYPE     NoClientCert (default) or
 *                                RequireAndVerifyClientCert
 *     client_ca_file: PATH       PEM CAs for client certificates: required
 *                                with RequireAndVerifyClientCert, refused
 *                                without it (it would do nothing)
 *     min_version: VERSION       TLS12 (default) or TLS13
 *   basic_auth_users:
 *     NAME: BCRYPT-HASH          $2a$, $2b$ or $2y$, cost 4 .. 14
 *
 * Relative paths are read from the file's directory, as exporter-toolkit
 * does.  At least one of the two sections is required (a file that
 * protects nothing is a mistake).  Every other key, value or type (the
 * keys of exporter-toolkit that flowsketchd does not implement included:
 * cert, key, max_version, cipher_suites, client_allowed_sans,
 * http_server_config, ...) is refused with one message naming the file,
 * the line and the key, as is a key given twice.  The certificate and key
 * are checked to be a pair here, so that a bad file stops the daemon
 * before it touches the host.
 *
 * The cost bound: a verification holds the HTTP thread for 2^cost rounds
 * (about 60 ms at cost 10 on these machines, 1 s at 14; basicauth.h).
 */
#ifndef FLOWSKETCHD_WEBCONFIG_H
#define FLOWSKETCHD_WEBCONFIG_H

#include <stdbool.h>
#include <stddef.h>

/* Each file read, at most: a config and a PEM bundle are far smaller. */
#define FSD_WEBCONFIG_FILE_MAX (1 << 20)
#define FSD_BCRYPT_COST_MIN 4
#define FSD_BCRYPT_COST_MAX 14
/* A bcrypt hash: "$2y$" two cost digits "$" then 53 characters (22 of
 * salt, 31 of hash) of ./A-Za-z0-9. */
#define FSD_BCRYPT_LEN 60

enum fsd_client_auth {
	FSD_CLIENT_CERT_NONE,		/* NoClientCert */
	FSD_CLIENT_CERT_REQUIRE,	/* RequireAndVerifyClientCert */
};

struct fsd_webuser {
	char *name;
	char hash[FSD_BCRYPT_LEN + 1];
};

struct fsd_webconfig {
	const char *path;		/* as given, for messages */
	bool tls;			/* tls_server_config given */
	char *cert_pem;			/* the files' contents, NUL-terminated */
	char *key_pem;
	char *ca_pem;			/* NULL without client certificates */
	enum fsd_client_auth client_auth;
	const char *priorities;		/* GnuTLS priority string: min_version */
	struct fsd_webuser *users;	/* basic_auth_users; none: no auth */
	size_t nusers;
};

/*
 * Read and check FILE into *wc (zeroed first).  0, or -EINVAL (or
 * -errno) with one message "FILE:LINE: KEY: what is wrong".
 */
int fsd_webconfig_load(struct fsd_webconfig *wc, const char *path);
/* Free what load took; the key's bytes are wiped first. */
void fsd_webconfig_free(struct fsd_webconfig *wc);

#endif /* FLOWSKETCHD_WEBCONFIG_H */
