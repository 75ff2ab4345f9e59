/* SPDX-License-Identifier: MIT */
/* clock.h: time, for every layer: the monotonic clock that log prefixes,
 * rates, deadlines and trace spans read, the process's CPU time, and a
 * sleep. A leaf: it includes nothing of gorila's, so ctx and util can both
 * use it without depending on each other.
 */
#ifndef GORILA_CLOCK_H
#define GORILA_CLOCK_H

/* Seconds from an arbitrary fixed point (CLOCK_MONOTONIC). */
double now_seconds(void);

/* CPU seconds used by this process so far (user + system). */
double cpu_seconds(void);

/* Sleep for s seconds (nanosleep, restarted on EINTR); nothing when s is
 * not positive. */
void sleep_seconds(double s);

#endif
