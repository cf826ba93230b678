/* SPDX-License-Identifier: Apache-2.0 */
/*
 * session.c - code-interpreter sessions of cordon serve (session.h).
 *
 * A session's thread: a sandbox (warm, or prepared here cold) -> start as
 * a session (inputs and context bound, the interpreter waiting for cells)
 * -> the creator answered -> until the session ends: wait for a cell, the
 * idle expiry or the lifetime; run the cell (sandbox_cell) and answer it
 * -> the end: the executor ended if it still runs, the session's record
 * reduced, the sandbox handed to the engine (finish), the thread gone.
 *
 * One mutex guards the table, every session's state and its cell
 * handoff; the sandbox itself is only ever driven by the session's own
 * thread (sandbox.h: one thread at a time).
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <sodium.h>

#include "runtime/serve/clock.h"
#include "runtime/serve/metrics.h"
#include "runtime/serve/session.h"

enum session_state { S_STARTING, S_IDLE, S_RUNNING, S_ENDED };

/* A cell handed from a request's thread to the session's. */
struct cell_job {
	const char *code;
	size_t len;
	int cancel_fd;
	const struct sandbox_events *events; /* NULL: not streamed */
	const char *why;         /* set by who cancels it; static text */
	cJSON *res;              /* the answer, once done */
	int done;
};

struct session {
	struct session *next;
	struct sessions *ss;
	char id[SESSION_ID_LEN + 1];
	unsigned token;
	char *tenant, *user;
	struct policy_entry *ent;
	const char *agent;       /* a name in ent's policy */
	struct cpol_session lim;
	struct serve_exec_req start; /* inputs and context, until start takes them */
	pthread_cond_t cv;       /* the session's thread and its waiters */

	/* under ss->mu */
	enum session_state state;
	int start_status;        /* 0 while starting, then 201 or the error */
	struct serve_err start_err;
	char exec_id[33];
	int warm;
	uint64_t created_us, last_us, ended_us;
	unsigned cells;
	uint64_t cpu_ms, ws_bytes;
	const char *cpu_source;
	struct cell_job *job;    /* the cell waiting or running */
	int want_end;            /* DELETE or drain */
	const char *want_why;
	char end_reason[32];
	char end_msg[300];
	int thread_done;
	unsigned refs;           /* requests holding it */
};

struct sessions {
	struct sessions_opts o;
	pthread_mutex_t mu;
	pthread_cond_t cv;       /* threads ending (sessions_free) */
	struct session *list;
	unsigned alive;          /* not ended */
	unsigned threads;        /* not done */
	int stopping;
};

static const char *state_name(enum session_state s)
{
	return s == S_STARTING ? "starting" : s == S_IDLE ? "idle" : s == S_RUNNING ? "running" : "ended";
}

static void session_free(struct session *s)
{
	if (s == NULL)
		return;
	free(s->tenant);
	free(s->user);
	serve_exec_req_free(&s->start);
	policy_entry_put(s->ent);
	pthread_cond_destroy(&s->cv);
	free(s);
}

/* ---- the table (under ss->mu) ------------------------------------------- */

static int who_is(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Ended sessions past their keep window, whose thread is done and that no
 * request holds, are forgotten. */
static void table_sweep(struct sessions *ss)
{
	uint64_t now = serve_now_us();
	struct session **pp = &ss->list;

	while (*pp != NULL) {
		struct session *s = *pp;

		if (s->state == S_ENDED && s->thread_done && s->refs == 0 &&
		    now - s->ended_us >= (uint64_t)ss->o.keep_s * 1000000u) {
			*pp = s->next;
			session_free(s);
		} else {
			pp = &s->next;
		}
	}
}

/* The session id of who, or 404: another token's, tenant's or user's is
 * not told apart from none. */
static struct session *table_find(struct sessions *ss, const struct session_who *who, const char *id,
				  struct serve_err *err)
{
	table_sweep(ss);
	for (struct session *s = ss->list; s != NULL; s = s->next)
		if (s->start_status == 201 && strcmp(s->id, id) == 0 && s->token == who->token &&
		    who_is(s->tenant, who->tenant) && who_is(s->user, who->user))
			return s;
	/* One answer for "another's", "expired long ago" and "from before a
	 * restart", which must not be told apart; it names the last, the one
	 * a client cannot guess. */
	serve_fail(err, 404, "unknown_session",
		   "no session of yours has id '%.40s' (sessions live in the server's memory: a restart ends them all)",
		   id);
	return NULL;
}

/* ---- answers ------------------------------------------------------------------ */

static cJSON *u64_json(uint64_t v)
{
	return cJSON_CreateNumber((double)v);
}

/* The session as GET, POST and DELETE answer it (docs/openapi.yaml,
 * Session).  Under ss->mu. */
static cJSON *session_json(const struct session *s)
{
	uint64_t now = serve_now_us(), idle_end = s->last_us + s->lim.idle_ms * 1000u,
		 life_end = s->created_us + s->lim.life_ms * 1000u;
	cJSON *o = cJSON_CreateObject(), *l;

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "sessionId", s->id);
	cJSON_AddStringToObject(o, "app", s->ent->pol.meta.app);
	cJSON_AddStringToObject(o, "agent", s->agent);
	cJSON_AddStringToObject(o, "executionId", s->exec_id);
	/* A session whose end is decided reads as ended at once, though its
	 * sandbox may still be going. */
	cJSON_AddStringToObject(o, "state", s->end_reason[0] ? "ended" : state_name(s->state));
	cJSON_AddBoolToObject(o, "warm", s->warm);
	cJSON_AddNumberToObject(o, "cells", s->cells);
	cJSON_AddItemToObject(o, "cpuMs", u64_json(s->cpu_ms));
	cJSON_AddStringToObject(o, "cpuSource", s->cpu_source ? s->cpu_source : "none");
	cJSON_AddItemToObject(o, "workspaceBytes", u64_json(s->ws_bytes));
	cJSON_AddItemToObject(o, "ageMs", u64_json(((s->state == S_ENDED ? s->ended_us : now) - s->created_us) / 1000));
	if (s->state == S_ENDED || s->end_reason[0]) {
		cJSON_AddNullToObject(o, "expiresInMs");
		cJSON_AddStringToObject(o, "endReason", s->end_reason);
		cJSON_AddStringToObject(o, "endMessage", s->end_msg);
	} else {
		uint64_t end = s->state == S_RUNNING || idle_end > life_end ? life_end : idle_end;

		cJSON_AddItemToObject(o, "expiresInMs", u64_json(end > now ? (end - now) / 1000 : 0));
		cJSON_AddNullToObject(o, "endReason");
		cJSON_AddNullToObject(o, "endMessage");
	}
	l = cJSON_AddObjectToObject(o, "limits");
	cJSON_AddItemToObject(l, "idleTimeoutMs", u64_json(s->lim.idle_ms));
	cJSON_AddItemToObject(l, "lifetimeMs", u64_json(s->lim.life_ms));
	cJSON_AddNumberToObject(l, "maxCells", s->lim.max_cells);
	cJSON_AddItemToObject(l, "cpuMs", u64_json(s->lim.cpu_ms));
	cJSON_AddItemToObject(l, "workspaceBytes", u64_json(s->lim.ws_bytes));
	cJSON_AddItemToObject(l, "timeoutMs", u64_json(s->ent->pol.limits.timeout_ms));
	return o;
}

/* Under ss->mu: the session ends with this reason (the first one holds). */
static void session_mark_end(struct session *s, const char *reason, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void session_mark_end(struct session *s, const char *reason, const char *fmt, ...)
{
	va_list ap;

	if (s->end_reason[0] != '\0')
		return;
	snprintf(s->end_reason, sizeof(s->end_reason), "%s", reason);
	va_start(ap, fmt);
	vsnprintf(s->end_msg, sizeof(s->end_msg), fmt, ap);
	va_end(ap);
}

/* Why a cell that could not go on ends the session (sandbox_cell_info's
 * end), and how the session's end names it. */
static void cell_end_reason(struct session *s, const struct sandbox_cell_info *ci)
{
	static const struct {
		const char *end, *reason, *msg;
	} map[] = {
		{ "exited", "exited", "the interpreter ended (sys.exit(), os._exit() or a crash)" },
		{ "timed_out", "cell_timed_out", "the cell ran past the policy's timeout and was killed" },
		{ "cancelled", "cancelled", "the cell was cancelled" },
		{ "workspace_limit", "workspace", "the cell passed the execution's workspace bound" },
		{ "session_workspace", "workspace", "the cell passed the session's workspace bound" },
		{ "session_cpu", "cpu", "the cell passed the session's CPU bound" },
		{ "broken", "broken", "the cell broke the session's cell channel" },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(ci->end, map[i].end) == 0) {
			if (strcmp(map[i].reason, "cancelled") == 0 && s->want_end && s->want_why != NULL)
				session_mark_end(s, "deleted", "%s", s->want_why);
			else
				session_mark_end(s, map[i].reason, "cell %u: %s", ci->index, map[i].msg);
			return;
		}
	session_mark_end(s, "error", "cell %u: the sandbox failed", ci->index);
}

/* The "session" member of a cell's answer. */
static void cell_add_session(cJSON *res, const struct session *s, unsigned index)
{
	cJSON *o = cJSON_AddObjectToObject(res, "session");

	/* The run directory is kept, under the execution id, once the
	 * session ends; until then there is none to read. */
	cJSON_ReplaceItemInObjectCaseSensitive(res, "runDir", cJSON_CreateString(""));
	if (o == NULL)
		return;
	cJSON_AddStringToObject(o, "sessionId", s->id);
	cJSON_AddNumberToObject(o, "cell", index);
	cJSON_AddStringToObject(o, "state", s->end_reason[0] ? "ended" : "idle");
	if (s->end_reason[0]) {
		cJSON_AddStringToObject(o, "endReason", s->end_reason);
		cJSON_AddStringToObject(o, "endMessage", s->end_msg);
	} else {
		cJSON_AddNullToObject(o, "endReason");
		cJSON_AddNullToObject(o, "endMessage");
	}
}

/* ---- the session's thread ------------------------------------------------- */

/* A warm sandbox when the pool has one (the loader of any warm sandbox
 * can run cells), else one prepared here, cold: this thread outlives it. */
static int session_sandbox(struct session *s, struct pool_item **itp, char *err, size_t n)
{
	struct sessions *ss = s->ss;
	struct sandbox_err se;

	*itp = pool_take(ss->o.pool, s->ent, s->agent);
	s->warm = *itp != NULL;
	if (*itp != NULL)
		return 0;
	if (pool_item_make(ss->o.host, ss->o.work_dir, ss->o.work_fd, s->ent, s->agent, 1, itp) == 0)
		return 0;
	if (*itp == NULL)
		snprintf(err, n, "out of memory");
	else if (sandbox_failed((*itp)->sb, &se))
		snprintf(err, n, "exec.harness.%s: %.400s", se.stage, se.msg);
	else
		snprintf(err, n, "the sandbox was not prepared");
	return -1;
}

/* Start as a session: the inputs and the context bound, the bridge
 * serving, the interpreter told 's'.  Its lifetime is init's deadline. */
static int session_start(struct session *s, struct pool_item *it, char *err, size_t n)
{
	struct sandbox_err se;
	struct sandbox_request rq = { "", 0, "session", s->start.inputs, s->start.ninputs, &s->start.context,
				      NULL, s->lim.life_ms };

	if (sandbox_check_secrets(s->ss->o.host, &s->ent->pol, s->agent, s->start.context, &se) != 0) {
		snprintf(err, n, "exec.harness.%s: %.400s", se.stage, se.msg);
		return -1;
	}
	if (sandbox_start(it->sb, &rq) == 0)
		return 0;
	if (sandbox_failed(it->sb, &se))
		snprintf(err, n, "exec.harness.%s: %.400s", se.stage, se.msg);
	else
		snprintf(err, n, "the sandbox did not start");
	return -1;
}

/* Until a cell comes, the session should end, or it expires. */
static struct cell_job *session_next(struct session *s)
{
	struct sessions *ss = s->ss;

	for (;;) {
		uint64_t now = serve_now_us(), idle_end = s->last_us + s->lim.idle_ms * 1000u,
			 life_end = s->created_us + s->lim.life_ms * 1000u;
		struct timespec dl;

		if (s->want_end) {
			session_mark_end(s, ss->stopping ? "shutdown" : "deleted", "%s",
					 s->want_why ? s->want_why : "the session was deleted");
			return NULL;
		}
		if (s->job != NULL)
			return s->job;
		if (now >= life_end) {
			session_mark_end(s, "lifetime", "the session reached its lifetime (%llu ms)",
					 (unsigned long long)s->lim.life_ms);
			return NULL;
		}
		if (now >= idle_end) {
			session_mark_end(s, "idle_timeout", "the session was idle for %llu ms",
					 (unsigned long long)s->lim.idle_ms);
			return NULL;
		}
		dl = serve_deadline_us(idle_end < life_end ? idle_end : life_end);
		pthread_cond_timedwait(&s->cv, &ss->mu, &dl);
	}
}

/* One cell on the session's thread (ss->mu not held).  Its timeout is
 * the policy's, or what is left of the session's lifetime. */
static cJSON *session_run_cell(struct session *s, struct pool_item *it, struct cell_job *job,
			       struct sandbox_cell_info *ci)
{
	struct sandbox_reduce_opts ro = { .inline_max = s->ss->o.inline_max };
	uint64_t now = serve_now_us(), life_end = s->created_us + s->lim.life_ms * 1000u;
	struct sandbox_cell_opts co = { .cancel_fd = job->cancel_fd,
					.timeout_ms = life_end > now ? (life_end - now) / 1000 : 1,
					.cpu_max_ms = s->lim.cpu_ms,
					.ws_max_bytes = s->lim.ws_bytes,
					.events = job->events };
	const char *why;

	pool_running(s->ss->o.pool, +1);
	sandbox_cell(it->sb, job->code, job->len, &co, ci);
	pool_running(s->ss->o.pool, -1);
	if (strcmp(ci->end, "cancelled") == 0) {
		pthread_mutex_lock(&s->ss->mu);
		why = job->why;
		pthread_mutex_unlock(&s->ss->mu);
		sandbox_cancel_reason(it->sb, why != NULL ? why : "cancelled by request");
	}
	return sandbox_cell_result(it->sb, &ro);
}

/* The session's end: the executor ended if it still runs (cancelled with
 * the reason), the session's record reduced into its run directory, and
 * the sandbox handed to the engine. */
static void session_finish(struct session *s, struct pool_item *it, int over)
{
	struct sandbox_reduce_opts ro = { .inline_max = 0 };
	char why[400];
	cJSON *record;
	uint64_t one = 1;
	int efd, rc;

	if (it == NULL)
		return;
	if (!over && (efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) >= 0) {
		snprintf(why, sizeof(why), "the session ended: %s", s->end_msg);
		sandbox_cancel_reason(it->sb, why);
		if (write(efd, &one, sizeof(one)) == sizeof(one))
			sandbox_wait(it->sb, efd);
		close(efd);
	}
	record = sandbox_reduce(it->sb, &ro, &rc);
	s->ss->o.finish(s->ss->o.finish_arg, it, record, s->token);
}

static void *session_main(void *arg)
{
	struct session *s = arg;
	struct sessions *ss = s->ss;
	struct pool_item *it = NULL;
	struct cell_job *job;
	char err[480] = "";
	int over = 0, ok;

	ok = session_sandbox(s, &it, err, sizeof(err)) == 0 && session_start(s, it, err, sizeof(err)) == 0;
	pthread_mutex_lock(&ss->mu);
	if (!ok) {
		s->start_status = serve_fail(&s->start_err, 503, "sandbox_error", "the session's sandbox: %.480s", err);
		session_mark_end(s, "error", "%.290s", err);
	} else {
		snprintf(s->exec_id, sizeof(s->exec_id), "%s", sandbox_id(it->sb));
		s->start_status = 201;
		s->state = S_IDLE;
		s->created_us = s->last_us = serve_now_us();
	}
	pthread_cond_broadcast(&s->cv);
	while (ok && !over && (job = session_next(s)) != NULL) {
		struct sandbox_cell_info ci;
		cJSON *res;

		s->state = S_RUNNING;
		pthread_mutex_unlock(&ss->mu);
		res = session_run_cell(s, it, job, &ci);
		pthread_mutex_lock(&ss->mu);
		over = ci.over;
		s->cells = ci.index > s->cells ? ci.index : s->cells;
		s->cpu_ms = ci.cpu_total_ms;
		s->cpu_source = ci.cpu_source;
		s->ws_bytes = ci.ws_bytes;
		s->last_us = serve_now_us();
		if (over && strcmp(ci.end, "timed_out") == 0 &&
		    s->last_us + 1000u * 50 >= s->created_us + s->lim.life_ms * 1000u) {
			session_mark_end(s, "lifetime", "the session reached its lifetime (%llu ms) in cell %u",
					 (unsigned long long)s->lim.life_ms, ci.index);
		} else if (over) {
			cell_end_reason(s, &ci);
		} else if (s->cells >= s->lim.max_cells) {
			session_mark_end(s, "max_cells", "the session ran its %u cells", s->lim.max_cells);
		}
		if (res != NULL)
			cell_add_session(res, s, ci.index);
		job->res = res;
		job->done = 1;
		s->job = NULL;
		s->state = S_IDLE;
		pthread_cond_broadcast(&s->cv);
		if (s->end_reason[0] != '\0')
			break;
	}
	pthread_mutex_unlock(&ss->mu);
	if (ok) {
		session_finish(s, it, over);
	} else if (it != NULL) {
		char rerr[512];

		if (pool_item_discard(it, rerr, sizeof(rerr)) != 0)
			serve_logf(ss->o.log, ss->o.log_arg, "run directory not fully removed: %s", rerr);
	}
	pthread_mutex_lock(&ss->mu);
	if (s->end_reason[0] == '\0')
		session_mark_end(s, "error", "the session ended");
	if (s->start_status == 201) {
		metrics_session_ended(ss->o.metrics, s->end_reason);
		serve_logf(ss->o.log, ss->o.log_arg, "session %s (app %s agent %s) ended after %u cells: %s", s->id,
			   s->ent->pol.meta.app, s->agent, s->cells, s->end_reason);
	}
	s->state = S_ENDED;
	s->ended_us = serve_now_us();
	s->thread_done = 1;
	ss->alive--;
	ss->threads--;
	pthread_cond_broadcast(&s->cv);
	pthread_cond_broadcast(&ss->cv);
	pthread_mutex_unlock(&ss->mu);
	return NULL;
}

/* ---- requests ------------------------------------------------------------------ */

int sessions_new(const struct sessions_opts *o, struct sessions **out, char *err, size_t n)
{
	struct sessions *ss = calloc(1, sizeof(*ss));
	pthread_condattr_t ca;

	*out = NULL;
	if (ss == NULL) {
		snprintf(err, n, "out of memory");
		return -1;
	}
	ss->o = *o;
	if (ss->o.max == 0)
		ss->o.max = SESSIONS_MAX_DEFAULT;
	pthread_mutex_init(&ss->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ss->cv, &ca);
	pthread_condattr_destroy(&ca);
	*out = ss;
	return 0;
}

static int dup_opt(const cJSON *ctx, const char *key, char **dst)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(ctx, key);

	*dst = NULL;
	if (!cJSON_IsString(v))
		return 0;
	*dst = strdup(v->valuestring);
	return *dst == NULL ? -1 : 0;
}

int sessions_create(struct sessions *ss, const struct session_who *who, struct policy_entry *ent, const char *agent,
		    struct serve_exec_req *rq, cJSON **out, struct serve_err *err)
{
	const struct cpol_agent *ag = policy_find_agent(&ent->pol, agent);
	struct session *s = NULL;
	pthread_condattr_t ca;
	pthread_attr_t ta;
	pthread_t th;
	unsigned char rnd[16];
	int status, pe;

	*out = NULL;
	if (ag == NULL || !(ag->session.flags & CPOL_AGT_F_SESSION))
		return serve_fail(err, 403, "sessions_not_allowed",
			    "agent '%.100s' of app '%.100s' may hold no session (its policy declares no session:)", agent,
			    ent->pol.meta.app);
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return serve_fail(err, 500, "internal", "out of memory");
	s->ss = ss;
	s->token = who->token;
	s->ent = policy_entry_get(ent);
	s->agent = ag->name;
	s->lim = ag->session;
	memcpy(s->start.inputs, rq->inputs, sizeof(s->start.inputs));
	s->start.ninputs = rq->ninputs;
	s->start.context = rq->context;
	memset(rq->inputs, 0, sizeof(rq->inputs));
	rq->ninputs = 0;
	rq->context = NULL;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (dup_opt(s->start.context, "tenant", &s->tenant) != 0 || dup_opt(s->start.context, "user", &s->user) != 0) {
		session_free(s);
		return serve_fail(err, 500, "internal", "out of memory");
	}
	randombytes_buf(rnd, sizeof(rnd));
	sodium_bin2hex(s->id, sizeof(s->id), rnd, sizeof(rnd));

	pthread_mutex_lock(&ss->mu);
	table_sweep(ss);
	if (ss->stopping) {
		status = serve_fail(err, 503, "draining", "the server is shutting down");
		goto refuse;
	}
	if (ss->alive >= ss->o.max) {
		err->retry_after_s = 1;
		status = serve_fail(err, 429, "too_many_sessions", "%u sessions are alive, the most this server holds (--max-sessions)",
			      ss->alive);
		goto refuse;
	}
	pthread_attr_init(&ta);
	pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
	pe = pthread_create(&th, &ta, session_main, s);
	pthread_attr_destroy(&ta);
	if (pe != 0) {
		status = serve_fail(err, 503, "sandbox_error", "no thread for the session: %s", strerror(pe));
		goto refuse;
	}
	s->next = ss->list;
	ss->list = s;
	ss->alive++;
	ss->threads++;
	s->refs++;
	while (s->start_status == 0)
		pthread_cond_wait(&s->cv, &ss->mu);
	s->refs--;
	status = s->start_status;
	if (status == 201) {
		metrics_session_started(ss->o.metrics, s->warm);
		*out = session_json(s);
		if (*out == NULL)
			status = serve_fail(err, 500, "internal", "out of memory");
	} else {
		*err = s->start_err;
	}
	pthread_mutex_unlock(&ss->mu);
	return status;
refuse:
	pthread_mutex_unlock(&ss->mu);
	session_free(s);
	return status;
}

/* Under ss->mu: whether s can take a cell now. */
static int cell_admissible(const struct session *s, size_t code_len, struct serve_err *err)
{
	if (s->state == S_ENDED || s->end_reason[0] != '\0')
		return serve_fail(err, 409, "session_ended", "the session ended (%s): %.400s", s->end_reason, s->end_msg);
	if (s->job != NULL)
		return serve_fail(err, 409, "cell_running", "a cell of this session is running; cells run one at a time");
	if (code_len > s->ent->pol.limits.max_code_bytes)
		return serve_fail(err, 413, "code_too_large", "the cell is %zu bytes, over max_code_bytes (%llu)", code_len,
			    (unsigned long long)s->ent->pol.limits.max_code_bytes);
	return 200;
}

int sessions_cell_check(struct sessions *ss, const struct session_who *who, const char *id, size_t code_len,
			struct serve_err *err)
{
	struct session *s;
	int status;

	pthread_mutex_lock(&ss->mu);
	s = table_find(ss, who, id, err);
	status = s == NULL ? 404 : cell_admissible(s, code_len, err);
	pthread_mutex_unlock(&ss->mu);
	return status;
}

int sessions_cell(struct sessions *ss, const struct session_who *who, const char *id, struct serve_exec_req *rq,
		  int cancel_fd, cJSON **out, struct serve_err *err)
{
	struct cell_job job = { rq->code, rq->code_len, cancel_fd, rq->stream != NULL ? &rq->stream->events : NULL,
				NULL, NULL, 0 };
	struct session *s;
	int status;

	*out = NULL;
	pthread_mutex_lock(&ss->mu);
	if ((s = table_find(ss, who, id, err)) == NULL) {
		pthread_mutex_unlock(&ss->mu);
		return 404;
	}
	if ((status = cell_admissible(s, rq->code_len, err)) != 200) {
		pthread_mutex_unlock(&ss->mu);
		return status;
	}
	s->job = &job;
	s->refs++;
	pthread_cond_broadcast(&s->cv);
	while (!job.done && !(s->state == S_ENDED && s->job == &job))
		pthread_cond_wait(&s->cv, &ss->mu);
	if (!job.done)
		s->job = NULL; /* the session ended before it took the cell */
	s->refs--;
	if (job.res != NULL) {
		*out = job.res;
		status = 200;
	} else if (job.done) {
		status = serve_fail(err, 500, "internal", "out of memory");
	} else {
		status = serve_fail(err, 409, "session_ended", "the session ended (%s): %.400s", s->end_reason, s->end_msg);
	}
	if (status == 200)
		metrics_cell(ss->o.metrics,
			     cJSON_IsString(cJSON_GetObjectItemCaseSensitive(job.res, "status"))
				     ? cJSON_GetObjectItemCaseSensitive(job.res, "status")->valuestring
				     : "error");
	pthread_mutex_unlock(&ss->mu);
	return status;
}

int sessions_get(struct sessions *ss, const struct session_who *who, const char *id, cJSON **out,
		 struct serve_err *err)
{
	struct session *s;
	int status = 200;

	*out = NULL;
	pthread_mutex_lock(&ss->mu);
	if ((s = table_find(ss, who, id, err)) == NULL)
		status = 404;
	else if ((*out = session_json(s)) == NULL)
		status = serve_fail(err, 500, "internal", "out of memory");
	pthread_mutex_unlock(&ss->mu);
	return status;
}

/* Under ss->mu: s is to end; a running cell is cancelled. */
static void session_want_end(struct session *s, const char *why)
{
	uint64_t one = 1;

	if (!s->want_end) {
		s->want_end = 1;
		s->want_why = why;
	}
	if (s->job != NULL && s->job->cancel_fd >= 0) {
		if (s->job->why == NULL)
			s->job->why = why;
		if (write(s->job->cancel_fd, &one, sizeof(one)) < 0) {
			/* the counter is non-zero already: cancelled before */
		}
	}
	pthread_cond_broadcast(&s->cv);
}

int sessions_delete(struct sessions *ss, const struct session_who *who, const char *id, cJSON **out,
		    struct serve_err *err)
{
	struct session *s;
	int status = 200;

	*out = NULL;
	pthread_mutex_lock(&ss->mu);
	if ((s = table_find(ss, who, id, err)) == NULL) {
		pthread_mutex_unlock(&ss->mu);
		return 404;
	}
	session_want_end(s, "the session was deleted");
	s->refs++;
	while (!s->thread_done)
		pthread_cond_wait(&s->cv, &ss->mu);
	s->refs--;
	if ((*out = session_json(s)) == NULL)
		status = serve_fail(err, 500, "internal", "out of memory");
	pthread_mutex_unlock(&ss->mu);
	return status;
}

unsigned sessions_end_all(struct sessions *ss, const char *why)
{
	unsigned n = 0;

	if (ss == NULL)
		return 0;
	pthread_mutex_lock(&ss->mu);
	ss->stopping = 1;
	for (struct session *s = ss->list; s != NULL; s = s->next)
		if (s->state != S_ENDED) {
			session_want_end(s, why);
			n++;
		}
	pthread_mutex_unlock(&ss->mu);
	return n;
}

void sessions_free(struct sessions *ss)
{
	if (ss == NULL)
		return;
	sessions_end_all(ss, "the server is shutting down");
	pthread_mutex_lock(&ss->mu);
	while (ss->threads > 0)
		pthread_cond_wait(&ss->cv, &ss->mu);
	while (ss->list != NULL) {
		struct session *s = ss->list;

		ss->list = s->next;
		session_free(s);
	}
	pthread_mutex_unlock(&ss->mu);
	pthread_cond_destroy(&ss->cv);
	pthread_mutex_destroy(&ss->mu);
	free(ss);
}
