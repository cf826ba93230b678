/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pool.h - warm sandboxes of cordon serve: for each (app, agent) of the
 * current policy set (agent NULL too: a request that names no agent), up
 * to `target` sandboxes prepared ahead (sandbox_prepare(sb, 1): the
 * interpreter started, its preloads imported, waiting for its program).
 *
 * Threads:
 *   - refill workers live as long as the pool.  They alone prepare pooled
 *     sandboxes, because the executor dies with the thread that prepared it
 *     (sandbox.h): a sandbox handed to a request thread must not die when
 *     the thread that made it ends.  So pool_free() may only run once no
 *     taken sandbox is still in use.
 *   - a watcher polls every idle sandbox's pidfd and replaces one that died
 *     idle (metrics_sandbox_failed).
 * A prepare that fails is retried with a backoff (up to 30 s), so a host
 * that cannot make sandboxes is not spun on.
 *
 * A sandbox leaves the pool once (pool_take) and is never given back: it
 * runs one execution and is destroyed by its taker.
 */
#ifndef CORDON_SERVE_POOL_H
#define CORDON_SERVE_POOL_H

#include <limits.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "runtime/sandbox.h"
#include "runtime/serve/log.h"
#include "runtime/serve/policies.h"

struct metrics;

/* A sandbox with what it was made from.  Its run directory is
 * work_dir/pending-<random>: the execution id is only drawn by
 * sandbox_new(), so the taker renames the directory to the id at the end. */
struct pool_item {
	struct pool_item *next;     /* the pool's list */
	struct sandbox *sb;
	struct policy_entry *ent;   /* a reference: the policy outlives the sandbox */
	const char *agent;          /* a name in ent's policy, or NULL */
	struct sandbox_spec spec;   /* borrowed by sb */
	int work_fd;                /* borrowed: the directory run_dir is in */
	char run_dir[PATH_MAX];
};

/* A new item: sandbox_new() and sandbox_prepare(sb, wait_ready) on the
 * calling thread, its run directory work_dir/pending-<random> (work_fd is
 * that directory, borrowed).  Returns 0, or -1 when prepare failed (the
 * item is still made, so its sandbox can reduce the error) or with *out
 * NULL when out of memory.  agent must be a name in ent's policy, or NULL. */
int pool_item_make(const struct sandbox_host *h, const char *work_dir, int work_fd, struct policy_entry *ent,
		   const char *agent, int wait_ready, struct pool_item **out);
/* The same item, its sandbox new and not prepared (nothing cloned, no run
 * directory made): 0, or -1 with *out NULL when out of memory.  For a
 * request refused before any sandbox is used, whose reduce then gives the
 * error result. */
int pool_item_new(const struct sandbox_host *h, const char *work_dir, int work_fd, struct policy_entry *ent,
		  const char *agent, struct pool_item **out);
/* Destroys the sandbox (any state) and drops the entry; NULL is fine.
 * The run directory stays (the taker keeps it after a run). */
void pool_item_free(struct pool_item *it);
/* An item that will not run (or has run, and is not kept): freed, and its
 * run directory removed.  -1 with err when the directory was not removed
 * fully (what could be removed was). */
int pool_item_discard(struct pool_item *it, char *err, size_t n);

struct pool_opts {
	const struct sandbox_host *host;
	struct metrics *metrics;
	const char *work_dir;     /* borrowed for the pool's life */
	int work_fd;              /* the same directory, borrowed */
	unsigned target;          /* per (app, agent); 0: no pools, no threads */
	unsigned workers;         /* refill threads; 0: the online CPUs, at most 4 */
	serve_log_fn *log;
	void *log_arg;
};

struct pool;

int pool_new(const struct pool_opts *o, struct pool **out, char *err, size_t n);

/* Make the pools those of set: a pool whose app is gone or changed is
 * drained (its idle sandboxes destroyed), a new (app, agent) pair gets a
 * pool that starts filling.  Unchanged entries keep their pools. */
void pool_apply(struct pool *p, const struct policy_set *set);

/* A warm sandbox of (ent, agent), out of the pool for good, or NULL (none
 * ready, or ent is not the entry the pool was filled from). */
struct pool_item *pool_take(struct pool *p, const struct policy_entry *ent, const char *agent);

/* An execution began (+1) or ended its run (-1).  While any runs, a pool
 * that still holds a warm sandbox holds its refill back (at most
 * POOL_REFILL_DEFER_MS): a refill is an interpreter start, whose CPU and
 * mount-table work would otherwise land on the running request. */
#define POOL_REFILL_DEFER_MS 250
void pool_running(struct pool *p, int delta);

/* [{"app","agent","warm","target"}] of the live pools; *ready: every pool
 * holds a warm sandbox (1 when there are no pools). */
cJSON *pool_state(struct pool *p, int *ready);

/* Drain: no more refills, every idle sandbox destroyed.  The workers stay
 * alive for the sandboxes already taken. */
void pool_drain(struct pool *p);

/* Stops and joins the threads, destroys what is idle.  Only once no taken
 * sandbox is in use (see Threads above).  NULL is fine. */
void pool_free(struct pool *p);

#endif
