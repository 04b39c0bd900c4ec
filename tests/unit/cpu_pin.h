/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * cpu_pin.h - keep a test on the CPU it runs on, so that every
 * BPF_PROG_TEST_RUN updates the same per-CPU copy of the maps.
 */
#ifndef FLOWSKETCH_TESTS_CPU_PIN_H
#define FLOWSKETCH_TESTS_CPU_PIN_H

#include <errno.h>
#include <sched.h>

/* The CPU now pinned to, or -errno. */
static inline int pin_to_current_cpu(void)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	if (cpu < 0)
		return -errno;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return -errno;
	return cpu;
}

#endif /* FLOWSKETCH_TESTS_CPU_PIN_H */
