/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gate.c - concurrency limit and bounded FIFO queue (gate.h).
 */
#include <errno.h>
#include <stddef.h>

#include "runtime/serve/gate.h"

/* One queued caller, on its own stack for the time it waits. */
struct gate_waiter {
	struct gate_waiter *next;
};

int gate_init(struct gate *g, unsigned max_running, unsigned max_queued)
{
	pthread_condattr_t ca;

	g->max_running = max_running;
	g->max_queued = max_queued;
	g->running = g->queued = 0;
	g->draining = 0;
	g->head = g->tail = NULL;
	if (pthread_mutex_init(&g->mu, NULL) != 0)
		return -1;
	if (pthread_condattr_init(&ca) != 0 || pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
	    pthread_cond_init(&g->cv, &ca) != 0) {
		pthread_mutex_destroy(&g->mu);
		return -1;
	}
	pthread_condattr_destroy(&ca);
	return 0;
}

void gate_destroy(struct gate *g)
{
	pthread_cond_destroy(&g->cv);
	pthread_mutex_destroy(&g->mu);
}

static void gate_unlink(struct gate *g, struct gate_waiter *w)
{
	struct gate_waiter **pp = &g->head, *prev = NULL;

	while (*pp != NULL && *pp != w) {
		prev = *pp;
		pp = &(*pp)->next;
	}
	if (*pp == NULL)
		return;
	*pp = w->next;
	if (g->tail == w)
		g->tail = prev;
	g->queued--;
}

static void gate_counts(const struct gate *g, unsigned *running, unsigned *queued)
{
	if (running != NULL)
		*running = g->running;
	if (queued != NULL)
		*queued = g->queued;
}

enum gate_result gate_enter(struct gate *g, const struct timespec *deadline, unsigned *running, unsigned *queued)
{
	struct gate_waiter me = { NULL };
	enum gate_result r;

	pthread_mutex_lock(&g->mu);
	if (g->draining) {
		r = GATE_DRAINING;
		goto out;
	}
	if (g->head == NULL && g->running < g->max_running) {
		g->running++;
		r = GATE_OK;
		goto out;
	}
	if (g->queued >= g->max_queued) {
		r = GATE_FULL;
		goto out;
	}
	if (g->tail != NULL)
		g->tail->next = &me;
	else
		g->head = &me;
	g->tail = &me;
	g->queued++;
	for (;;) {
		if (g->draining) {
			r = GATE_DRAINING;
			break;
		}
		if (g->head == &me && g->running < g->max_running) {
			g->running++;
			r = GATE_OK;
			break;
		}
		if (pthread_cond_timedwait(&g->cv, &g->mu, deadline) == ETIMEDOUT) {
			/* Admitted at the last moment all the same? */
			if (!g->draining && g->head == &me && g->running < g->max_running) {
				g->running++;
				r = GATE_OK;
			} else {
				r = GATE_TIMEOUT;
			}
			break;
		}
	}
	gate_unlink(g, &me);
	/* The next waiter may head the queue now, with a slot free. */
	pthread_cond_broadcast(&g->cv);
out:
	gate_counts(g, running, queued);
	pthread_mutex_unlock(&g->mu);
	return r;
}

void gate_leave(struct gate *g, unsigned *running, unsigned *queued)
{
	pthread_mutex_lock(&g->mu);
	if (g->running > 0)
		g->running--;
	pthread_cond_broadcast(&g->cv);
	gate_counts(g, running, queued);
	pthread_mutex_unlock(&g->mu);
}

void gate_snapshot(struct gate *g, unsigned *running, unsigned *queued)
{
	pthread_mutex_lock(&g->mu);
	gate_counts(g, running, queued);
	pthread_mutex_unlock(&g->mu);
}

void gate_drain(struct gate *g)
{
	pthread_mutex_lock(&g->mu);
	g->draining = 1;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
}
