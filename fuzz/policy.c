// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * policy.c - fuzz the mitigation policy file's parser (fsd_policy_parse,
 * user/flowsketchd/policy/policy_file.h), which reads --policy FILE at
 * start and on every reload.
 *
 * Besides crashes and sanitizer reports (leaks included), aborts when a
 * promise of policy_file.h breaks: an error leaves *out zeroed with one
 * line of printable text "fuzz:LINE: ..."; a policy has every field in
 * its range (keys of the grammar, spread only on host keys, thresholds
 * finite and above 0, durations and limit in their bounds, lines rising,
 * no two rules of one key and metric), an allowlist sorted without
 * repeats, the --detect needs its rules imply, and each rule's canonical
 * text parses back to the same rule.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "policy/policy_file.h"

static void check_error(int err, const char *msg, const struct fsd_policy *p)
{
	static const struct fsd_policy zero;
	size_t i;

	if (memcmp(p, &zero, sizeof(zero)))
		abort();
	if (err == -ENOMEM ? strcmp(msg, "fuzz: out of memory") :
	    err != -EINVAL || strncmp(msg, "fuzz:", 5) || msg[5] < '1' || msg[5] > '9')
		abort();
	for (i = 0; msg[i]; i++)
		if (msg[i] < 0x20 || msg[i] >= 0x7f)
			abort();
}

static void check_rule(const struct fsd_policy_rule *r)
{
	char text[FSD_POLICY_RULE_TEXT_MAX], key[FS_KEYSPEC_TEXT_MAX], msg[512];
	struct fs_keyspec k;
	struct fsd_policy back;
	const char *why;

	/* The key is one of the grammar's: it formats and parses back. */
	fs_keyspec_format(&r->key, key, sizeof(key));
	if (fs_keyspec_parse(key, &k, &why) || memcmp(&k, &r->key, sizeof(k)))
		abort();
	if ((unsigned int)r->metric > FSD_POLICY_SPREAD ||
	    (r->metric == FSD_POLICY_SPREAD && r->key.family))
		abort();
	if (!isfinite(r->threshold) || !(r->threshold > 0))
		abort();
	if (r->hold_sec < 1 || r->hold_sec > 86400 || r->ban_sec < 1 ||
	    r->ban_sec > 365 * 86400)
		abort();
	fsd_policy_rule_format(r, text, sizeof(text));
	if (fsd_policy_parse(text, strlen(text), "back", &back, msg, sizeof(msg)) ||
	    back.nrules != 1 || back.nallow || memcmp(&back.rule[0].key, &r->key, sizeof(k)) ||
	    back.rule[0].metric != r->metric || back.rule[0].threshold != r->threshold ||
	    back.rule[0].hold_sec != r->hold_sec || back.rule[0].ban_sec != r->ban_sec)
		abort();
	fsd_policy_free(&back);
}

static void check_policy(const struct fsd_policy *p)
{
	bool prefixes = false, spread = false;
	size_t i, j;

	if (p->nrules > FSD_POLICY_RULES_MAX || p->nallow > FSD_POLICY_ALLOW_MAX ||
	    (p->nrules && !p->rule))
		abort();
	for (i = 0; i < p->nrules; i++) {
		const struct fsd_policy_rule *r = &p->rule[i];

		check_rule(r);
		if (r->line < 1 || (i && r->line <= p->rule[i - 1].line))
			abort();
		for (j = 0; j < i; j++)
			if (p->rule[j].metric == r->metric &&
			    !memcmp(&p->rule[j].key, &r->key, sizeof(r->key)))
				abort();
		if (r->metric == FSD_POLICY_SPREAD)
			spread = true;
		else
			prefixes = true;
	}
	if (p->needs_prefixes != prefixes || p->needs_spread != spread)
		abort();
	for (i = 1; i < p->nallow; i++)
		if (fs_cidr_cmp(&p->allow[i - 1], &p->allow[i]) >= 0)
			abort();
	if (p->limit_n < 1 || p->limit_n > 1000000 ||
	    (p->limit_sec != 1 && p->limit_sec != 60 && p->limit_sec != 3600))
		abort();
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct fsd_policy p;
	char msg[512];
	int err;

	memset(msg, 0x55, sizeof(msg));
	err = fsd_policy_parse((const char *)data, size, "fuzz", &p, msg, sizeof(msg));
	if (err) {
		check_error(err, msg, &p);
		return 0;
	}
	if (msg[0])
		abort();
	check_policy(&p);
	fsd_policy_free(&p);
	return 0;
}
