/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * policy_file.h - flowsketchd --policy FILE: the mitigation policy's text,
 * parsed and checked whole.  Parsing only: what the rules decide is the
 * policy module's.
 *
 * One statement a line; '#' starts a comment anywhere (to the end of the
 * line); blank lines are skipped; tokens are separated by spaces and tabs
 * (a CR counts as a blank, so a file saved with CRLF reads the same):
 *
 *   block KEY if METRIC > VALUE for DURATION ban DURATION
 *   allow CIDR
 *   limit N/UNIT
 *
 * block  KEY is what `flowsketch top --by` takes (keyspec.h) of the
 *        source side, since the blocklist drops sources: src (hosts of
 *        either family), src4/N (N 8, 16, 24, 32), src6/N (N 32, 48, 64,
 *        128); a dst key is refused.  METRIC is
 *          packets, bytes  a rate: VALUE ends in /s ("50k/s"), packets or
 *                          bytes a second;
 *          spread          distinct peers, a count: VALUE without /s
 *                          ("1000"); KEY src or dst only, since the spread
 *                          sketch keeps hosts, not prefixes.
 *        VALUE is a number above 0, digits with an optional fraction
 *        ("50", "1.5", at most 15 digits in all), then an optional SI
 *        suffix, powers of 1000: k 1e3, M 1e6, G 1e9, T 1e12.  The
 *        threshold is the double nearest the number written, however it
 *        is written ("1.5k" and "1500" are the same threshold).  The rule
 *        fires when METRIC stays above VALUE for the first DURATION
 *        (1s .. 1d), and the block it adds expires after the second
 *        (1s .. 365d); DURATION as duration.h reads it: 90s, 10m, 24h, 7d,
 *        a bare number being seconds.  Two rules with the same KEY and
 *        METRIC are refused (which would act?), so a file holds at most
 *        FSD_POLICY_RULES_MAX rules: one a pair.
 * allow  CIDR as `flowsketch block add` takes it (cidr.h: IPv4 or IPv6,
 *        host bits clear): never blocked automatically.  At most
 *        FSD_POLICY_ALLOW_MAX allow lines (repeats count: the cap is
 *        against a broken file, before anything is merged).
 * limit  at most N new automatic blocks every UNIT: s, min or h, N in
 *        1 .. 1,000,000.  At most one limit line; without one, 100/min.
 *
 * A line is at most FSD_POLICY_LINE_MAX bytes (without its newline), and
 * no byte of the file is NUL: a binary or runaway file is refused, not
 * half read.  A file with no statement is a policy of no rules.
 *
 * Errors: the file is refused whole with one line, "NAME:LINE: what is
 * wrong, and what was expected", the offending token quoted with any byte
 * outside printable ASCII shown as '?' (the message goes to logs and
 * answers), e.g.
 *   policy:3: "50q/s" is not a rate: a number, an optional k, M, G or T, then /s
 */
#ifndef FLOWSKETCHD_POLICY_FILE_H
#define FLOWSKETCHD_POLICY_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "keyspec.h"	/* user/lib: struct fs_keyspec, fs_keyspec_parse() - the KEY grammar of `top --by` */
#include "cidr.h"	/* user/lib: struct fs_cidr, fs_cidr_parse() */
#include "duration.h"	/* user/lib: fs_duration_parse(), fs_duration_format() */

#define FSD_POLICY_FILE_MAX (1 << 20)
#define FSD_POLICY_LINE_MAX 1024
/* One rule a (KEY, METRIC): the source side's keys are its hosts and its
 * FS_PREFIX_LEVELS prefix lengths of each family, each with packets and
 * bytes; spread only with the host key.  (1 + 2 * 4) * 2 + 1 = 19. */
#define FSD_POLICY_RULES_MAX ((1 + 2 * FS_PREFIX_LEVELS) * 2 + 1)
#define FSD_POLICY_ALLOW_MAX 65536
#define FSD_POLICY_HOLD_MAX (24 * 3600)		/* "for": 1d */
#define FSD_POLICY_BAN_MAX (365 * 24 * 3600)	/* "ban": 365d */
#define FSD_POLICY_LIMIT_N_MAX 1000000
#define FSD_POLICY_DEFAULT_LIMIT_N 100
#define FSD_POLICY_DEFAULT_LIMIT_SEC 60
/* Longest text fsd_policy_rule_format() writes, with its NUL: "block "
 * KEY (11) " if " "packets" " > " VALUE (15 digits, '.', suffix, "/s")
 * " for " "86400s" " ban " "31535999s", with room to spare. */
#define FSD_POLICY_RULE_TEXT_MAX 96

enum fsd_policy_metric { FSD_POLICY_PACKETS, FSD_POLICY_BYTES, FSD_POLICY_SPREAD };

struct fsd_policy_rule {
	struct fs_keyspec key;
	enum fsd_policy_metric metric;
	double threshold;	/* packets or bytes a second; distinct peers for spread */
	__u32 hold_sec;		/* "for": how long it must hold */
	__u32 ban_sec;		/* "ban": the entry's expiry */
	unsigned int line;	/* in its file */
};

struct fsd_policy {
	struct fsd_policy_rule *rule;
	size_t nrules;
	struct fs_cidr *allow;	/* sorted, repeats removed (fs_cidr_sort_unique) */
	size_t nallow;
	__u32 limit_n, limit_sec;	/* at most limit_n new automatic blocks each limit_sec */
	bool needs_prefixes, needs_spread;	/* the --detect structures the rules need */
};

/*
 * Parse text (len bytes, need not be NUL-terminated; name is the file's
 * name for messages) into *out: 0, or -EINVAL with msg = "NAME:LINE: what
 * is wrong" (one line, msg_len bytes), *out untouched (zeroed) on error.
 * -ENOMEM ("NAME: out of memory").
 */
int fsd_policy_parse(const char *text, size_t len, const char *name, struct fsd_policy *out,
		     char *msg, size_t msg_len);

/*
 * Read and parse the file at path: only a regular file (opened without
 * blocking, so a FIFO cannot stall a reload) of at most
 * FSD_POLICY_FILE_MAX bytes.  0 or -errno with msg naming the file
 * (-EINVAL not a regular file, -EFBIG too large, or the parse's).
 */
int fsd_policy_load(const char *path, struct fsd_policy *out, char *msg, size_t msg_len);

/* Free what a successful parse allocated; *p is zeroed (freeing it again
 * is harmless). */
void fsd_policy_free(struct fsd_policy *p);

/*
 * The rule as canonical text, e.g. "block src4/24 if bytes > 1G/s for 10s
 * ban 1h": parsing it again gives the same rule (line aside).  VALUE is
 * written with the largest suffix that leaves a whole part, then the
 * fewest decimals that give back the same threshold.
 */
void fsd_policy_rule_format(const struct fsd_policy_rule *r, char *buf, size_t n);

#endif /* FLOWSKETCHD_POLICY_FILE_H */
