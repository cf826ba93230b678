/* SPDX-License-Identifier: Apache-2.0 */
/*
 * session.h - cordon serve's code-interpreter sessions (docs/serve.md,
 * "Sessions"): one sandbox kept alive between cells, whose interpreter
 * runs each cell in the globals the cells before it left.
 *
 * A session is one sandbox and so one execution id: its token, its tool
 * bridge and its budgets per execution (a tool's max_calls) hold for the
 * whole session, not per cell, so a model cannot multiply a budget by
 * running more cells.  Its limits are the agent's `session:` in the blob
 * (cpol_session): idle expiry, lifetime, cells, CPU over every cell,
 * workspace bytes; each cell has the policy's per-execution limits.
 *
 * Threads: each session has a thread of its own, which takes a warm
 * sandbox (any warm one can hold a session: its loader waits for 's' or
 * 'g') or prepares one cold (the executor dies with the thread that
 * prepared it, and this thread lives as long as the session), starts it,
 * and then runs its cells one at a time, expiring it when idle or old.  A
 * request thread hands it a cell and waits for the answer.  Every call
 * below is thread-safe.
 *
 * Identity: a session belongs to the token that created it and to the
 * context's tenant and user at creation.  Every later request must come
 * with the same three (the tenant and user of a cell's context, or the
 * query of GET and DELETE); anyone else finds no session (404), never a
 * hint that one exists.
 *
 * Life: sessions live in this process's memory only.  A restart of serve
 * ends them all (their executors die with it); an ended session is
 * remembered for keep_s seconds (its end and reason: GET 200, a cell 409),
 * then forgotten (404).
 */
#ifndef CORDON_SERVE_SESSION_H
#define CORDON_SERVE_SESSION_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "runtime/sandbox.h"
#include "runtime/serve/engine.h"
#include "runtime/serve/log.h"
#include "runtime/serve/policies.h"
#include "runtime/serve/pool.h"

#define SESSION_ID_LEN 32
#define SESSIONS_MAX_DEFAULT 16

/* Who asks: the token, and the context's tenant and user (NULL: none). */
struct session_who {
	unsigned token;
	const char *tenant;
	const char *user;
};

struct sessions_opts {
	const struct sandbox_host *host;
	struct pool *pool;
	struct metrics *metrics;
	const char *work_dir;     /* borrowed: the run directories */
	int work_fd;
	unsigned max;             /* sessions alive at once; 0: SESSIONS_MAX_DEFAULT */
	unsigned keep_s;          /* how long an ended session is remembered */
	size_t inline_max;        /* artifacts inline in a cell's answer */
	/* The engine's end of a session's sandbox, on the session's thread:
	 * the run directory kept under the execution id (the session's
	 * record, result.json and the audit) and the sandbox destroyed off
	 * any answer's path.  Takes it and record. */
	void (*finish)(void *arg, struct pool_item *it, cJSON *record, unsigned token);
	void *finish_arg;
	serve_log_fn *log;
	void *log_arg;
};

struct sessions;

int sessions_new(const struct sessions_opts *o, struct sessions **out, char *err, size_t n);

/* POST /v1/sessions, after the engine resolved app and agent (ent is
 * referenced here) and admitted it: 201 with the session; 403
 * sessions_not_allowed (the agent declares no `session:`); 429
 * too_many_sessions; 503 sandbox_error (the sandbox could not be
 * prepared or started: the stage and why) or draining.  Takes rq's inputs
 * and context. */
int sessions_create(struct sessions *ss, const struct session_who *who, struct policy_entry *ent, const char *agent,
		    struct serve_exec_req *rq, cJSON **out, struct serve_err *err);

/* Whether a cell could be run now, without running it: 200; 404 no such
 * session of who; 409 session_ended (why) or cell_running; 413 the code
 * is over max_code_bytes.  The engine asks before it admits the cell. */
int sessions_cell_check(struct sessions *ss, const struct session_who *who, const char *id, size_t code_len,
			struct serve_err *err);

/* POST /v1/sessions/{id}/cells: runs the cell to its end.  200 with its
 * result (the execution's shape, with "session": id, cell, state, end)
 * whatever its status; else as sessions_cell_check().  cancel_fd: -1, or
 * readable = cancel the cell (which ends the session).  rq->stream: NULL,
 * or the cell followed as it runs (its events, from the session's thread
 * and the bridge's).  Takes rq's code. */
int sessions_cell(struct sessions *ss, const struct session_who *who, const char *id, struct serve_exec_req *rq,
		  int cancel_fd, cJSON **out, struct serve_err *err);

/* GET /v1/sessions/{id}: 200 with the session, 404. */
int sessions_get(struct sessions *ss, const struct session_who *who, const char *id, cJSON **out,
		 struct serve_err *err);

/* DELETE /v1/sessions/{id}: ends it (a running cell is cancelled) and
 * answers 200 with the ended session once its sandbox is gone; 404. */
int sessions_delete(struct sessions *ss, const struct session_who *who, const char *id, cJSON **out,
		    struct serve_err *err);

/* Drain: no new session; every session ends ("the server is shutting
 * down"), a running cell once it is cancelled or done.  Returns how many
 * were alive. */
unsigned sessions_end_all(struct sessions *ss, const char *why);

/* Ends what is left, waits for every session's thread, frees.  NULL is
 * fine. */
void sessions_free(struct sessions *ss);

#endif
