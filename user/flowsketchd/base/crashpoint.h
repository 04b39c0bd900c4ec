/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * crashpoint.h - the daemon killed at a named step, for the restart tests.
 *
 * A daemon may be killed at any instruction, and whatever it leaves must
 * be something the next one adopts with nothing lost or counted twice
 * (rotation.h, "Adoption").  Random kills (tests/integration/restart.sh)
 * rarely land in the few microseconds between two steps, so each step
 * that changes what a successor finds is a crash point, and
 *
 *	FLOWSKETCHD_CRASH_AT=NAME[:N]
 *
 * in the daemon's environment makes it SIGKILL itself the Nth time (1 if
 * not given) it passes crash point NAME.  The points, in the order a
 * rotation passes them: flip (window_seq moved on), drained (reports
 * taken), written (the window's file whole under its temporary name),
 * stored (renamed into place), committed (in the history), done
 * (done_seq stored), zeroing (half the slot zeroed), zeroed; journaled
 * (candidates appended to a journal); and in setup: replacing (a pin
 * under its temporary name while adopting), adopted (the predecessor's
 * rotation finished, before the links move).  Without the variable a
 * point costs one test of a flag.
 */
#ifndef FLOWSKETCHD_CRASHPOINT_H
#define FLOWSKETCHD_CRASHPOINT_H

void fsd_crash_point(const char *name);

#endif /* FLOWSKETCHD_CRASHPOINT_H */
