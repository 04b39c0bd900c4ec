/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * variant.h - a check run as several cmocka tests, one per argument, from
 * rows of main's test list instead of a wrapper function per variant:
 *
 *	VARIANT(test_reports_conservative, check_reports, 1),
 *
 * is the test named test_reports_conservative, running check_reports(1).
 */
#ifndef FLOWSKETCH_TEST_VARIANT_H
#define FLOWSKETCH_TEST_VARIANT_H

struct variant {
	void (*check)(int arg);
	int arg;
};

static inline void variant_run(void **state)
{
	const struct variant *v = *state;

	v->check(v->arg);
}

#define VARIANT(name, check, arg)					\
	{ #name, variant_run, NULL, NULL, &(struct variant){ check, arg } }

#endif /* FLOWSKETCH_TEST_VARIANT_H */
