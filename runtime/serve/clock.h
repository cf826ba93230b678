/* SPDX-License-Identifier: Apache-2.0 */
/*
 * clock.h - the one monotonic clock of runtime/serve/ (microseconds, and a
 * deadline for pthread_cond_timedwait on a CLOCK_MONOTONIC condition).
 */
#ifndef CORDON_SERVE_CLOCK_H
#define CORDON_SERVE_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t serve_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static inline struct timespec serve_deadline_us(uint64_t at_us)
{
	struct timespec ts = { (time_t)(at_us / 1000000u), (long)(at_us % 1000000u) * 1000 };

	return ts;
}

#endif
