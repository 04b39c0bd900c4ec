/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * basicauth.h - HTTP basic auth for /metrics against bcrypt hashes
 * (webconfig.h), at a bounded cost.
 *
 * Where the time goes.  bcrypt is slow on purpose: 2^cost rounds, about
 * 60 ms at cost 10 here.  It runs on libmicrohttpd's thread (metrics.h),
 * never on the event loop, so rotations are not delayed by it; but that
 * one thread serves every /metrics client, so each check delays the
 * others.  Three things keep that small:
 *
 *  - Successful pairs are remembered.  A pair (user, password) is kept as
 *    HMAC-SHA256(K, user ":" password), K 32 random bytes drawn at start
 *    and never shown: the cache holds no password and nothing that tests
 *    a guess without K.  A hit costs one HMAC (microseconds), so a scraper
 *    pays bcrypt once per daemon, not every 15 s.  FSD_AUTH_GOOD pairs,
 *    least recently used replaced; only a correct password adds one, so
 *    failures cannot push the scraper's pair out.
 *  - Failed pairs are remembered too (FSD_AUTH_BAD, oldest replaced): the
 *    same wrong password again is refused at HMAC cost.
 *  - New pairs share a budget of bcrypt's CPU time (the HTTP thread's):
 *    FSD_AUTH_SHARE_PCT percent of the wall-clock time on average (it
 *    refills at that rate), up to FSD_AUTH_BURST_MS at once.  A check
 *    that finds the budget spent is answered 429 at once, without bcrypt.
 *    So however many wrong passwords arrive, bcrypt takes at most 10 % of
 *    one CPU over any long stretch, plus the burst, and a client waits
 *    behind at most FSD_AUTH_BURST_MS of others' checks (plus one, and
 *    what other processes take of the CPU).  The price: while such a
 *    flood lasts, a new correct pair may be answered 429 too (a pair
 *    already cached is not).  CPU time, not elapsed: on a loaded host a
 *    check takes longer without costing the other clients more.
 *
 * Timing.  A name that is no user's is checked against the first user's
 * hash anyway, and the result dropped, so that the time taken does not
 * tell names that exist; names and hashes are compared without an early
 * exit.
 */
#ifndef FLOWSKETCHD_BASICAUTH_H
#define FLOWSKETCHD_BASICAUTH_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct fsd_webuser;

#define FSD_AUTH_GOOD 16
#define FSD_AUTH_BAD 256
#define FSD_AUTH_SHARE_PCT 10
#define FSD_AUTH_BURST_MS 1000
#define FSD_AUTH_MAC_LEN 32

enum fsd_auth_result {
	FSD_AUTH_OK,
	FSD_AUTH_DENIED,	/* no such user, or a wrong password */
	FSD_AUTH_BUSY,		/* the bcrypt budget is spent: try later */
};

struct fsd_auth_entry {
	unsigned char mac[FSD_AUTH_MAC_LEN];
	__u64 used_ns;		/* good: last hit, for LRU; 0: free */
};

struct fsd_basicauth {
	const struct fsd_webuser *users;	/* the web config's */
	size_t nusers;
	pthread_mutex_t lock;			/* guards all below */
	bool lock_ready;
	unsigned char key[32];			/* K of the HMAC */
	struct fsd_auth_entry good[FSD_AUTH_GOOD];
	struct fsd_auth_entry bad[FSD_AUTH_BAD];
	size_t bad_next;			/* the oldest bad entry */
	__s64 budget_ns;			/* bcrypt time left */
	__u64 refilled_ns;			/* when budget was last topped up */
	__u64 bcrypt_runs, cache_hits, busy;	/* for -v */
};

/* Ready to check against users (kept, not copied).  0 or -errno. */
int fsd_basicauth_init(struct fsd_basicauth *a, const struct fsd_webuser *users,
		       size_t nusers);
/* May user with password in?  Thread-safe; bcrypt runs without the lock. */
enum fsd_auth_result fsd_basicauth_check(struct fsd_basicauth *a,
					 const char *user, const char *password);
void fsd_basicauth_free(struct fsd_basicauth *a);

#endif /* FLOWSKETCHD_BASICAUTH_H */
