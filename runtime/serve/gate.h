/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gate.h - cordon serve's admission: at most max_running executions at
 * once, then a FIFO queue of at most max_queued waiters, each waiting at
 * most its deadline.  Pure threading code (a mutex and a condition
 * variable): no sandbox, no clock but the one the caller's deadline names.
 *
 *   gate_enter()  GATE_OK: admitted, call gate_leave() when done.
 *                 GATE_FULL: the queue is full (429 at once).
 *                 GATE_TIMEOUT: queued, but not admitted by the deadline.
 *                 GATE_DRAINING: the server drains (503), also for waiters
 *                 already queued when gate_drain() is called.
 *
 * Order: a waiter is admitted only when it heads the queue, so a burst of
 * new arrivals never passes one that waited (a newcomer finding the queue
 * non-empty queues too, even when a slot is free for a moment).
 */
#ifndef CORDON_SERVE_GATE_H
#define CORDON_SERVE_GATE_H

#include <pthread.h>
#include <time.h>

enum gate_result { GATE_OK = 0, GATE_FULL, GATE_TIMEOUT, GATE_DRAINING };

struct gate_waiter;

struct gate {
	pthread_mutex_t mu;
	pthread_cond_t cv;           /* CLOCK_MONOTONIC */
	unsigned max_running, max_queued;
	unsigned running, queued;
	int draining;
	struct gate_waiter *head, *tail;
};

int gate_init(struct gate *g, unsigned max_running, unsigned max_queued);
void gate_destroy(struct gate *g);

/* deadline: CLOCK_MONOTONIC.  *running and *queued (may be NULL): the
 * counts right after the call, for the gauges. */
enum gate_result gate_enter(struct gate *g, const struct timespec *deadline, unsigned *running, unsigned *queued);
void gate_leave(struct gate *g, unsigned *running, unsigned *queued);

/* The counts now (the gauges are read from here when /metrics is
 * scraped: a waiter's count changes while it waits, with no call). */
void gate_snapshot(struct gate *g, unsigned *running, unsigned *queued);

/* Refuse newcomers and send every waiter away with GATE_DRAINING; the
 * admitted ones run on. */
void gate_drain(struct gate *g);

#endif
