/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_serve_gate.c - cordon serve's admission (runtime/serve/gate.c): the
 * concurrency limit, the bounded FIFO queue, its timeout, and the drain,
 * with real threads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "runtime/serve/clock.h"
#include "runtime/serve/gate.h"

#define LONG_US 10000000u /* a deadline no test waits for */

static struct timespec in_us(uint64_t us)
{
	return serve_deadline_us(serve_now_us() + us);
}

struct waiter {
	struct gate *g;
	uint64_t wait_us;
	enum gate_result r;
	int order;        /* admission order, from *counter */
	int *counter;
	pthread_mutex_t *mu;
	pthread_t t;
};

static void *waiter_run(void *arg)
{
	struct waiter *w = arg;
	struct timespec dl = in_us(w->wait_us);

	w->r = gate_enter(w->g, &dl, NULL, NULL);
	if (w->r == GATE_OK) {
		pthread_mutex_lock(w->mu);
		w->order = ++*w->counter;
		pthread_mutex_unlock(w->mu);
	}
	return NULL;
}

/* Until the gate holds this many waiters (the threads are queued). */
static void wait_queued(struct gate *g, unsigned n)
{
	for (int i = 0; i < 5000; i++) {
		unsigned q;

		pthread_mutex_lock(&g->mu);
		q = g->queued;
		pthread_mutex_unlock(&g->mu);
		if (q == n)
			return;
		usleep(1000);
	}
	fail_msg("the queue never held %u waiters", n);
}

static void test_limit_then_queue_then_full(void **state)
{
	struct gate g;
	struct timespec dl = in_us(LONG_US), now = in_us(0);
	unsigned running, queued;

	(void)state;
	assert_int_equal(gate_init(&g, 2, 0), 0);
	assert_int_equal(gate_enter(&g, &dl, &running, &queued), GATE_OK);
	assert_int_equal(gate_enter(&g, &dl, &running, &queued), GATE_OK);
	assert_int_equal(running, 2);
	/* no queue at all: the third is turned away at once */
	assert_int_equal(gate_enter(&g, &now, &running, &queued), GATE_FULL);
	gate_leave(&g, &running, &queued);
	assert_int_equal(running, 1);
	assert_int_equal(gate_enter(&g, &dl, NULL, NULL), GATE_OK);
	gate_leave(&g, NULL, NULL);
	gate_leave(&g, NULL, NULL);
	gate_destroy(&g);
}

static void test_fifo(void **state)
{
	struct gate g;
	struct timespec dl = in_us(LONG_US);
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	struct waiter w[3];
	int counter = 0;

	(void)state;
	assert_int_equal(gate_init(&g, 1, 3), 0);
	assert_int_equal(gate_enter(&g, &dl, NULL, NULL), GATE_OK);
	for (int i = 0; i < 3; i++) {
		w[i] = (struct waiter){ &g, LONG_US, GATE_FULL, 0, &counter, &mu, 0 };
		assert_int_equal(pthread_create(&w[i].t, NULL, waiter_run, &w[i]), 0);
		wait_queued(&g, (unsigned)i + 1); /* queued in this order */
	}
	/* the queue is full now */
	{
		struct timespec now = in_us(0);

		assert_int_equal(gate_enter(&g, &now, NULL, NULL), GATE_FULL);
	}
	for (int i = 0; i < 3; i++) {
		gate_leave(&g, NULL, NULL);
		pthread_join(w[i].t, NULL);
		assert_int_equal(w[i].r, GATE_OK);
		assert_int_equal(w[i].order, i + 1);
	}
	gate_leave(&g, NULL, NULL);
	assert_int_equal(g.running, 0);
	assert_int_equal(g.queued, 0);
	gate_destroy(&g);
}

static void test_timeout(void **state)
{
	struct gate g;
	struct timespec dl = in_us(LONG_US), short_dl = in_us(50000);
	uint64_t t0 = serve_now_us();
	unsigned running, queued;

	(void)state;
	assert_int_equal(gate_init(&g, 1, 4), 0);
	assert_int_equal(gate_enter(&g, &dl, NULL, NULL), GATE_OK);
	assert_int_equal(gate_enter(&g, &short_dl, &running, &queued), GATE_TIMEOUT);
	assert_true(serve_now_us() - t0 >= 45000);
	assert_int_equal(running, 1);
	assert_int_equal(queued, 0); /* the waiter left the queue */
	gate_leave(&g, NULL, NULL);
	gate_destroy(&g);
}

/* A newcomer never passes a waiter, even when it arrives just as a slot
 * frees: the waiter gets the slot, the newcomer waits (and times out). */
static void test_no_overtaking(void **state)
{
	struct gate g;
	struct timespec dl = in_us(LONG_US), now;
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	struct waiter b;
	int counter = 0;

	(void)state;
	assert_int_equal(gate_init(&g, 1, 4), 0);
	assert_int_equal(gate_enter(&g, &dl, NULL, NULL), GATE_OK);
	b = (struct waiter){ &g, LONG_US, GATE_FULL, 0, &counter, &mu, 0 };
	assert_int_equal(pthread_create(&b.t, NULL, waiter_run, &b), 0);
	wait_queued(&g, 1);
	gate_leave(&g, NULL, NULL);
	now = in_us(0);
	assert_int_equal(gate_enter(&g, &now, NULL, NULL), GATE_TIMEOUT);
	pthread_join(b.t, NULL);
	assert_int_equal(b.r, GATE_OK);
	gate_leave(&g, NULL, NULL);
	gate_destroy(&g);
}

static void test_drain(void **state)
{
	struct gate g;
	struct timespec dl = in_us(LONG_US);
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	struct waiter w[2];
	int counter = 0;
	unsigned running;

	(void)state;
	assert_int_equal(gate_init(&g, 1, 4), 0);
	assert_int_equal(gate_enter(&g, &dl, NULL, NULL), GATE_OK);
	for (int i = 0; i < 2; i++) {
		w[i] = (struct waiter){ &g, LONG_US, GATE_OK, 0, &counter, &mu, 0 };
		assert_int_equal(pthread_create(&w[i].t, NULL, waiter_run, &w[i]), 0);
	}
	wait_queued(&g, 2);
	gate_drain(&g);
	for (int i = 0; i < 2; i++) {
		pthread_join(w[i].t, NULL);
		assert_int_equal(w[i].r, GATE_DRAINING);
	}
	assert_int_equal(gate_enter(&g, &dl, NULL, NULL), GATE_DRAINING);
	/* the admitted one runs on and leaves as usual */
	gate_leave(&g, &running, NULL);
	assert_int_equal(running, 0);
	gate_destroy(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limit_then_queue_then_full),
		cmocka_unit_test(test_fifo),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_no_overtaking),
		cmocka_unit_test(test_drain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
