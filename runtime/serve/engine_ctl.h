/* SPDX-License-Identifier: Apache-2.0 */
/*
 * engine_ctl.h - the engine's life, driven by serve.c's main thread alone
 * (engine.h is what the HTTP front asks of it).
 *
 *   engine_new()        the work directory made or checked (0700, ours),
 *                       locked against a second server and swept of what a
 *                       killed one left; the admission gate; the retention
 *                       sweeper; the pools filled from the current set.
 *   engine_reload()     SIGHUP: a new policy set swapped in, pools synced.
 *   engine_drain()      new executions get 503, queued ones too; idle
 *                       sandboxes destroyed; running ones go on;
 *                       sessions end (a running cell first).
 *   engine_wait_idle()  whether every execution has returned.
 *   engine_cancel_all() cancel what still runs (the grace period is over).
 *   engine_free()       only once idle: pools, threads, kept run dirs.
 */
#ifndef CORDON_SERVE_ENGINE_CTL_H
#define CORDON_SERVE_ENGINE_CTL_H

#include <stddef.h>

#include "runtime/sandbox.h"
#include "runtime/serve/engine.h"
#include "runtime/serve/policies.h"
#include "runtime/serve/pool.h"

struct engine_opts {
	const struct sandbox_host *host;    /* borrowed, outlives the engine */
	struct policy_store *policies;      /* borrowed, outlives the engine */
	const char *work_dir;               /* NULL: engine_work_dir_default() */
	unsigned pool;                      /* warm sandboxes per (app, agent) */
	unsigned max_concurrency;           /* 0: twice the online CPUs */
	unsigned queue;
	unsigned queue_timeout_s;
	size_t inline_max;
	unsigned retain_s;
	unsigned max_sessions;              /* sessions alive at once; 0: SESSIONS_MAX_DEFAULT */
	serve_log_fn *log;                  /* serve.c's printer; may be NULL */
	void *log_arg;
};

/* /run/cordon/serve as root, $XDG_RUNTIME_DIR/cordon-serve rootless; -1
 * with err when rootless and XDG_RUNTIME_DIR is unset or not absolute. */
int engine_work_dir_default(char *buf, size_t n, char *err, size_t en);

int engine_new(const struct engine_opts *o, struct engine **out, char *err, size_t n);
/* 0: swapped (*napps: apps in the new set); -1: the old set stays, err says why. */
int engine_reload(struct engine *e, unsigned *napps, char *err, size_t n);
void engine_drain(struct engine *e);
/* 1 when no execution is in engine_execute() any more; waits at most
 * timeout_ms for that. */
int engine_wait_idle(struct engine *e, unsigned timeout_ms);
/* Cancels every running execution (why: the result's error message);
 * returns how many. */
unsigned engine_cancel_all(struct engine *e, const char *why);
const char *engine_work_dir(const struct engine *e);
void engine_free(struct engine *e);

#endif
