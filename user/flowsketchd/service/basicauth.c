// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* basicauth.c - basic auth against bcrypt, cached and budgeted (basicauth.h). */
#include <crypt.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include "base/log.h"
#include "basicauth.h"
#include "webconfig.h"

#define BURST_NS ((__s64)FSD_AUTH_BURST_MS * 1000000)

static __u64 clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static __u64 now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* a == b, in time that depends on b's length only (b: ours, a: theirs). */
static bool same_text(const char *a, const char *b)
{
	size_t alen = strlen(a), blen = strlen(b), i;
	unsigned char diff = alen != blen;

	for (i = 0; i < blen; i++)
		diff |= (unsigned char)((i < alen ? a[i] : 0) ^ b[i]);
	return !diff;
}

static bool same_mac(const unsigned char *a, const unsigned char *b)
{
	unsigned char diff = 0;
	size_t i;

	for (i = 0; i < FSD_AUTH_MAC_LEN; i++)
		diff |= a[i] ^ b[i];
	return !diff;
}

int fsd_basicauth_init(struct fsd_basicauth *a, const struct fsd_webuser *users,
		       size_t nusers)
{
	int err;

	memset(a, 0, sizeof(*a));
	a->users = users;
	a->nusers = nusers;
	if (gnutls_rnd(GNUTLS_RND_KEY, a->key, sizeof(a->key)) < 0)
		return fsd_reject(-EIO,
				  "--metrics-web-config: no random bytes for the password cache's key");
	err = pthread_mutex_init(&a->lock, NULL);
	if (err)
		return -err;
	a->lock_ready = true;
	a->budget_ns = BURST_NS;
	a->refilled_ns = now_ns();
	return 0;
}

void fsd_basicauth_free(struct fsd_basicauth *a)
{
	if (a->lock_ready)
		pthread_mutex_destroy(&a->lock);
	explicit_bzero(a, sizeof(*a));
}

/* HMAC-SHA256(K, user ":" password): 0, or -1 (no memory, GnuTLS). */
static int pair_mac(const struct fsd_basicauth *a, const char *user,
		    const char *password, unsigned char *mac)
{
	size_t ulen = strlen(user), plen = strlen(password);
	char *text = malloc(ulen + plen + 2);
	int rc;

	if (!text)
		return -1;
	memcpy(text, user, ulen);
	text[ulen] = ':';
	memcpy(text + ulen + 1, password, plen + 1);
	rc = gnutls_hmac_fast(GNUTLS_MAC_SHA256, a->key, sizeof(a->key), text,
			      ulen + 1 + plen, mac);
	explicit_bzero(text, ulen + plen + 2);
	free(text);
	return rc < 0 ? -1 : 0;
}

/*
 * The budget now, topped up for the time since the last top-up:
 * FSD_AUTH_SHARE_PCT percent of it, so that over any long stretch bcrypt
 * takes at most that share of the time plus the burst.  Under the lock.
 */
static __s64 budget_now(struct fsd_basicauth *a, __u64 now)
{
	__u64 gain = (now - a->refilled_ns) / 100 * FSD_AUTH_SHARE_PCT;

	a->refilled_ns = now;
	if (gain > (__u64)BURST_NS || a->budget_ns + (__s64)gain > BURST_NS)
		a->budget_ns = BURST_NS;
	else
		a->budget_ns += (__s64)gain;
	return a->budget_ns;
}

/* Does password match hash?  bcrypt through libxcrypt, then a comparison
 * without an early exit. */
static bool bcrypt_matches(const char *password, const char *hash)
{
	struct crypt_data *cd = calloc(1, sizeof(*cd));
	const char *out;
	bool ok = false;

	if (!cd)
		return false;
	out = crypt_rn(password, hash, cd, sizeof(*cd));
	if (out && strlen(out) == FSD_BCRYPT_LEN)
		ok = same_text(out, hash);
	explicit_bzero(cd, sizeof(*cd));
	free(cd);
	return ok;
}

enum fsd_auth_result fsd_basicauth_check(struct fsd_basicauth *a,
					 const char *user, const char *password)
{
	unsigned char mac[FSD_AUTH_MAC_LEN];
	const struct fsd_webuser *u = NULL;
	struct fsd_auth_entry *e, *lru;
	bool ok;
	__u64 t0, cpu0;
	size_t i;

	if (!a->nusers || pair_mac(a, user, password, mac))
		return FSD_AUTH_DENIED;
	pthread_mutex_lock(&a->lock);
	t0 = now_ns();
	for (i = 0; i < FSD_AUTH_GOOD; i++) {
		e = &a->good[i];
		if (e->used_ns && same_mac(e->mac, mac)) {
			e->used_ns = t0;
			a->cache_hits++;
			pthread_mutex_unlock(&a->lock);
			return FSD_AUTH_OK;
		}
	}
	for (i = 0; i < FSD_AUTH_BAD; i++) {
		if (a->bad[i].used_ns && same_mac(a->bad[i].mac, mac)) {
			a->cache_hits++;
			pthread_mutex_unlock(&a->lock);
			return FSD_AUTH_DENIED;
		}
	}
	if (budget_now(a, t0) <= 0) {
		if (!a->busy++)
			fsd_warn("metrics: more new passwords than bcrypt's budget (%d %% of the time): answering 429 meanwhile",
				 FSD_AUTH_SHARE_PCT);
		pthread_mutex_unlock(&a->lock);
		return FSD_AUTH_BUSY;
	}
	pthread_mutex_unlock(&a->lock);

	/* The budget is of CPU time, this thread's: on a busy host a check
	 * takes longer but costs the others no more. */
	cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	/* Every name is compared; an unknown one costs a bcrypt as well. */
	for (i = 0; i < a->nusers; i++)
		if (same_text(user, a->users[i].name) && !u)
			u = &a->users[i];
	ok = bcrypt_matches(password, u ? u->hash : a->users[0].hash) && u;

	pthread_mutex_lock(&a->lock);
	a->bcrypt_runs++;
	a->budget_ns -= (__s64)(clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0);
	if (ok) {
		lru = &a->good[0];
		for (i = 0; i < FSD_AUTH_GOOD; i++) {
			e = &a->good[i];
			if (!e->used_ns || e->used_ns < lru->used_ns)
				lru = e;
			if (!e->used_ns)
				break;
		}
		memcpy(lru->mac, mac, sizeof(mac));
		lru->used_ns = now_ns();
	} else {
		e = &a->bad[a->bad_next];
		a->bad_next = (a->bad_next + 1) % FSD_AUTH_BAD;
		memcpy(e->mac, mac, sizeof(mac));
		e->used_ns = 1;
	}
	pthread_mutex_unlock(&a->lock);
	explicit_bzero(mac, sizeof(mac));
	return ok ? FSD_AUTH_OK : FSD_AUTH_DENIED;
}
