/* SPDX-License-Identifier: Apache-2.0 */
/*
 * engine.c - cordon serve's engine (engine.h, engine_ctl.h): scope checks,
 * admission, one execution's walk through the sandbox lifecycle, cancel
 * handles, and the kept run directories behind the artifact endpoint.
 *
 * An execution: resolve app and agent in the current set (holding a
 * reference to the entry for the whole run) -> register its cancel handle
 * (409 on a request id already running) -> the gate (429 / 503) -> a warm
 * sandbox, or a cold one prepared on this thread -> start (a warm sandbox
 * that fails to start is replaced once by a cold one: it may have died
 * just before) -> wait with the handle's eventfd -> reduce -> destroy ->
 * its run directory renamed to the execution id and kept retain_s seconds.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/client/agent_doc.h"
#include "runtime/rmtree.h"
#include "runtime/serve/clock.h"
#include "runtime/serve/engine_ctl.h"
#include "runtime/serve/gate.h"
#include "runtime/serve/metrics.h"
#include "runtime/serve/session.h"

#define EXEC_ID_LEN 32
#define ARTIFACTS_KEPT_MAX 1024 /* names remembered per execution */

/* A running execution's cancel handle. */
struct exec_slot {
	struct exec_slot *next;
	unsigned token;
	char request_id[SERVE_REQUEST_ID_MAX + 1]; /* "" none: only a drain cancels it */
	int cancel_fd;                             /* eventfd: readable = cancel */
	const char *reason;                        /* set with the write; static text */
};

/* A finished execution whose run directory is kept for the artifacts. */
struct kept_exec {
	struct kept_exec *next;
	char id[EXEC_ID_LEN + 1];
	unsigned token;
	uint64_t expires_us;
	char **names;                              /* the result's artifact paths */
	unsigned nnames;
};

struct engine {
	struct engine_opts o;
	char work_dir[PATH_MAX];
	int work_fd;                               /* O_DIRECTORY, flock'ed */
	struct metrics *metrics;
	struct pool *pool;
	struct sessions *sessions;
	struct gate gate;
	int gate_made;
	atomic_int draining;

	pthread_mutex_t mu;                        /* slots, kept, inflight, stopping */
	pthread_cond_t cv;                         /* CLOCK_MONOTONIC: idle and the sweeper */
	struct exec_slot *slots;
	struct kept_exec *kept;
	/* Sandboxes whose result is out, destroyed by the sweeper: the
	 * teardown (kill, cgroup removal, ids) is not on the answer's path. */
	struct pool_item *doomed;
	unsigned inflight;
	int stopping;
	pthread_t sweeper;
	int sweeper_started;
};

static int oom(struct serve_err *err)
{
	return serve_fail(err, 500, "internal", "out of memory");
}

/* ---- scope and lookup ---------------------------------------------------- */

static int scope_allows(const struct serve_scope *scope, const char *app)
{
	if (scope->all)
		return 1;
	for (unsigned i = 0; i < scope->napps; i++)
		if (strcmp(scope->apps[i], app) == 0)
			return 1;
	return 0;
}

/* The entry of app (a reference) and, when agent is given, its name inside
 * that policy (*agent_in, which lives as long as the entry).  403 out of
 * scope (api.md: the token may not use the app), 404 unknown. */
static int resolve(struct engine *e, const struct serve_scope *scope, const char *app, const char *agent,
		   struct policy_entry **ent, const char **agent_in, struct serve_err *err)
{
	struct policy_set *set;
	struct policy_entry *found;
	const struct cpol_agent *ag;
	int status = 200;

	*ent = NULL;
	*agent_in = NULL;
	if (app == NULL)
		return serve_fail(err, 404, "unknown_app", "no app given");
	if (!scope_allows(scope, app))
		return serve_fail(err, 403, "forbidden", "app '%.200s' is outside this token's scope", app);
	set = policies_current(e->o.policies);
	if ((found = policy_set_find(set, app)) == NULL) {
		status = serve_fail(err, 404, "unknown_app", "no policy for app '%.200s'", app);
		goto out;
	}
	if (agent != NULL) {
		if ((ag = policy_find_agent(&found->pol, agent)) == NULL) {
			status = serve_fail(err, 404, "unknown_agent", "app '%.200s' declares no agent '%.200s'", app, agent);
			goto out;
		}
		*agent_in = ag->name;
	}
	*ent = policy_entry_get(found);
out:
	policy_set_put(set);
	return status;
}

/* executor.preload or executor.packages as a JSON array of names. */
static cJSON *names_json(const char *const *names, uint32_t n)
{
	cJSON *arr = cJSON_CreateArray();

	for (uint32_t i = 0; arr != NULL && i < n; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(names[i]));
	return arr;
}

/* ---- GET endpoints --------------------------------------------------------- */

int engine_apps(struct engine *e, const struct serve_scope *scope, cJSON **out, struct serve_err *err)
{
	struct policy_set *set = policies_current(e->o.policies);
	cJSON *root = cJSON_CreateObject(), *apps = root ? cJSON_AddArrayToObject(root, "apps") : NULL;
	int status = 200;

	*out = NULL;
	if (apps == NULL)
		goto nomem;
	for (unsigned i = 0; i < set->n; i++) {
		const struct policy_entry *pe = set->entries[i];
		cJSON *o, *agents;

		if (!scope_allows(scope, pe->pol.meta.app))
			continue;
		if ((o = cJSON_CreateObject()) == NULL)
			goto nomem;
		cJSON_AddItemToArray(apps, o);
		cJSON_AddStringToObject(o, "app", pe->pol.meta.app);
		cJSON_AddStringToObject(o, "sha256", pe->sha256);
		cJSON_AddStringToObject(o, "keyId", pe->key_id);
		if ((agents = cJSON_AddArrayToObject(o, "agents")) == NULL)
			goto nomem;
		for (uint32_t a = 0; a < pe->pol.nagents; a++)
			cJSON_AddItemToArray(agents, cJSON_CreateString(pe->pol.agents[a].name));
		cJSON_AddItemToObject(o, "preload", names_json(pe->pol.exec.preload, pe->pol.exec.npreload));
		cJSON_AddItemToObject(o, "packages", names_json(pe->pol.exec.packages, pe->pol.exec.npackages));
	}
	*out = root;
	root = NULL;
	goto out;
nomem:
	status = oom(err);
out:
	cJSON_Delete(root);
	policy_set_put(set);
	return status;
}

int engine_capabilities(struct engine *e, const struct serve_scope *scope, const char *app, const char *agent,
			cJSON **out, struct serve_err *err)
{
	struct policy_entry *ent = NULL;
	const char *agent_in;
	cJSON *root = NULL, *tools = NULL;
	char *md = NULL;
	size_t mdlen = 0;
	int status;

	*out = NULL;
	if (agent == NULL)
		return serve_fail(err, 404, "unknown_agent", "no agent given");
	if ((status = resolve(e, scope, app, agent, &ent, &agent_in, err)) != 200)
		return status;
	if ((root = cJSON_CreateObject()) == NULL ||
	    (md = agent_doc_markdown(&ent->pol, agent_in, policy_entry_python(ent), &mdlen)) == NULL ||
	    (tools = agent_doc_tools_json(&ent->pol, agent_in)) == NULL) {
		status = oom(err);
		goto out;
	}
	cJSON_AddStringToObject(root, "app", ent->pol.meta.app);
	cJSON_AddStringToObject(root, "agent", agent_in);
	cJSON_AddStringToObject(root, "sha256", ent->sha256);
	cJSON_AddStringToObject(root, "description", md);
	cJSON_AddItemToObject(root, "tools", tools);
	tools = NULL;
	cJSON_AddItemToObject(root, "preload", names_json(ent->pol.exec.preload, ent->pol.exec.npreload));
	cJSON_AddItemToObject(root, "packages", names_json(ent->pol.exec.packages, ent->pol.exec.npackages));
	*out = root;
	root = NULL;
out:
	free(md);
	cJSON_Delete(tools);
	cJSON_Delete(root);
	policy_entry_put(ent);
	return status;
}

int engine_ready(struct engine *e, cJSON **out)
{
	int ready, draining = atomic_load(&e->draining);
	cJSON *root = cJSON_CreateObject(), *pools = pool_state(e->pool, &ready);

	*out = NULL;
	if (root == NULL || pools == NULL) {
		cJSON_Delete(root);
		cJSON_Delete(pools);
		return 503;
	}
	ready = ready && !draining;
	cJSON_AddBoolToObject(root, "ready", ready);
	cJSON_AddBoolToObject(root, "draining", draining);
	cJSON_AddItemToObject(root, "pools", pools);
	*out = root;
	return ready ? 200 : 503;
}

struct metrics *engine_metrics(struct engine *e)
{
	unsigned running, queued;

	/* Called for every scrape: the gauges then say what the gate holds
	 * now, waiters included. */
	if (e->gate_made) {
		gate_snapshot(&e->gate, &running, &queued);
		metrics_running(e->metrics, running, queued);
	}
	return e->metrics;
}

/* ---- cancel handles -------------------------------------------------------- */

static int slot_register(struct engine *e, unsigned token, const char *request_id, struct exec_slot **out,
			 struct serve_err *err)
{
	struct exec_slot *s = calloc(1, sizeof(*s));
	int status = 200;

	*out = NULL;
	if (s == NULL)
		return oom(err);
	s->token = token;
	snprintf(s->request_id, sizeof(s->request_id), "%s", request_id);
	if ((s->cancel_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		free(s);
		return serve_fail(err, 500, "internal", "eventfd: %s", strerror(errno));
	}
	pthread_mutex_lock(&e->mu);
	for (struct exec_slot *o = e->slots; o != NULL && request_id[0] != '\0'; o = o->next) {
		if (o->token == token && strcmp(o->request_id, request_id) == 0) {
			status = serve_fail(err, 409, "request_id_running", "an execution with requestId '%s' is running",
				      request_id);
			break;
		}
	}
	if (status == 200) {
		s->next = e->slots;
		e->slots = s;
		*out = s;
		s = NULL;
	}
	pthread_mutex_unlock(&e->mu);
	if (s != NULL) {
		close(s->cancel_fd);
		free(s);
	}
	return status;
}

static void slot_unregister(struct engine *e, struct exec_slot *s)
{
	struct exec_slot **pp;

	if (s == NULL)
		return;
	pthread_mutex_lock(&e->mu);
	for (pp = &e->slots; *pp != NULL && *pp != s; pp = &(*pp)->next)
		;
	if (*pp != NULL)
		*pp = s->next;
	pthread_mutex_unlock(&e->mu);
	close(s->cancel_fd);
	free(s);
}

/* Under e->mu. */
static void slot_cancel(struct exec_slot *s, const char *why)
{
	uint64_t one = 1;

	if (s->reason == NULL)
		s->reason = why;
	if (write(s->cancel_fd, &one, sizeof(one)) < 0) {
		/* the counter is already non-zero: cancelled before */
	}
}

int engine_cancel(struct engine *e, const struct serve_scope *scope, const char *request_id, struct serve_err *err)
{
	int status = 404;

	if (request_id == NULL || request_id[0] == '\0')
		return serve_fail(err, 404, "unknown_execution", "no requestId given");
	pthread_mutex_lock(&e->mu);
	for (struct exec_slot *s = e->slots; s != NULL; s = s->next) {
		if (s->token == scope->token_index && strcmp(s->request_id, request_id) == 0) {
			slot_cancel(s, "cancelled by request");
			status = 202;
			break;
		}
	}
	pthread_mutex_unlock(&e->mu);
	if (status != 202)
		return serve_fail(err, 404, "unknown_execution", "no running execution of yours has requestId '%.80s'",
			    request_id);
	return status;
}

unsigned engine_cancel_all(struct engine *e, const char *why)
{
	unsigned n = 0;

	/* First, so a running cell's answer names why, not "cancelled by
	 * request" (its slot below cancels it too). */
	sessions_end_all(e->sessions, why);
	pthread_mutex_lock(&e->mu);
	for (struct exec_slot *s = e->slots; s != NULL; s = s->next, n++)
		slot_cancel(s, why);
	pthread_mutex_unlock(&e->mu);
	return n;
}

/* ---- kept run directories ------------------------------------------------ */

static void kept_free(struct kept_exec *k)
{
	if (k == NULL)
		return;
	for (unsigned i = 0; i < k->nnames; i++)
		free(k->names[i]);
	free(k->names);
	free(k);
}

static void rundir_remove(const struct engine *e, const char *name)
{
	char err[512];

	if (rmtree_at(e->work_fd, name, err, sizeof(err)) != 0)
		serve_logf(e->o.log, e->o.log_arg, "run directory %s/%s not fully removed: %s", e->work_dir, name, err);
}

/* The run directory of a finished execution, pending-<random> while it
 * ran, becomes <execution id> (the artifact URLs name it) and is kept for
 * the retention window; "runDir" in the result is made to say so. */
static void retain(struct engine *e, const char *pending, const char *id, unsigned token, cJSON *res)
{
	struct kept_exec *k = NULL;
	const cJSON *arts = cJSON_GetObjectItemCaseSensitive(res, "artifacts"), *a;
	char path[PATH_MAX + EXEC_ID_LEN + 2];

	if (strlen(id) != EXEC_ID_LEN || strspn(id, "0123456789abcdef") != EXEC_ID_LEN ||
	    renameat(e->work_fd, pending, e->work_fd, id) != 0) {
		rundir_remove(e, pending);
		cJSON_ReplaceItemInObjectCaseSensitive(res, "runDir", cJSON_CreateString(""));
		return;
	}
	snprintf(path, sizeof(path), "%s/%s", e->work_dir, id);
	cJSON_ReplaceItemInObjectCaseSensitive(res, "runDir", cJSON_CreateString(path));
	if (e->o.retain_s == 0 || (k = calloc(1, sizeof(*k))) == NULL)
		goto drop;
	memcpy(k->id, id, EXEC_ID_LEN + 1);
	k->token = token;
	k->expires_us = serve_now_us() + (uint64_t)e->o.retain_s * 1000000u;
	if (cJSON_IsArray(arts) && cJSON_GetArraySize(arts) > 0) {
		unsigned cap = (unsigned)cJSON_GetArraySize(arts);

		if (cap > ARTIFACTS_KEPT_MAX)
			cap = ARTIFACTS_KEPT_MAX;
		if ((k->names = calloc(cap, sizeof(*k->names))) == NULL)
			goto drop;
		cJSON_ArrayForEach(a, arts)
		{
			const cJSON *p = cJSON_GetObjectItemCaseSensitive(a, "path");

			if (k->nnames < cap && cJSON_IsString(p) && (k->names[k->nnames] = strdup(p->valuestring)) != NULL)
				k->nnames++;
		}
	}
	pthread_mutex_lock(&e->mu);
	k->next = e->kept;
	e->kept = k;
	pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->mu);
	return;
drop:
	kept_free(k);
	rundir_remove(e, id);
}

/* After its answer: the sandbox goes to the sweeper. */
static void engine_doom(struct engine *e, struct pool_item *it)
{
	pthread_mutex_lock(&e->mu);
	it->next = e->doomed;
	e->doomed = it;
	pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->mu);
}

/* The sweeper: finished sandboxes are destroyed, and kept run
 * directories past their window go. */
static void *engine_sweeper(void *arg)
{
	struct engine *e = arg;

	pthread_mutex_lock(&e->mu);
	for (;;) {
		uint64_t now = serve_now_us(), next = UINT64_MAX;
		struct kept_exec *expired = NULL, **pp = &e->kept;
		struct pool_item *doomed = e->doomed;

		if (doomed != NULL) {
			e->doomed = NULL;
			pthread_mutex_unlock(&e->mu);
			while (doomed != NULL) {
				struct pool_item *it = doomed;

				doomed = it->next;
				pool_item_free(it);
			}
			/* Give the freed memory back: each execution's threads
			 * allocate in glibc's per-thread arenas, which keep what
			 * is freed, so without this RSS climbed from 10 to 63 MiB
			 * over a 200 s soak while 9 MiB was in use (make soak). */
			malloc_trim(0);
			pthread_mutex_lock(&e->mu);
			continue;
		}
		if (e->stopping)
			break;

		while (*pp != NULL) {
			struct kept_exec *k = *pp;

			if (k->expires_us <= now) {
				*pp = k->next;
				k->next = expired;
				expired = k;
			} else {
				if (k->expires_us < next)
					next = k->expires_us;
				pp = &k->next;
			}
		}
		if (expired != NULL) {
			pthread_mutex_unlock(&e->mu);
			while (expired != NULL) {
				struct kept_exec *k = expired;

				expired = k->next;
				rundir_remove(e, k->id);
				kept_free(k);
			}
			pthread_mutex_lock(&e->mu);
			continue;
		}
		if (next == UINT64_MAX) {
			pthread_cond_wait(&e->cv, &e->mu);
		} else {
			struct timespec ts = serve_deadline_us(next);

			pthread_cond_timedwait(&e->cv, &e->mu, &ts);
		}
	}
	pthread_mutex_unlock(&e->mu);
	return NULL;
}

/* A relative path of plain components: no "", ".", ".." or leading '/'. */
static int artifact_name_ok(const char *name)
{
	const char *p = name;

	if (name[0] == '\0' || strlen(name) >= PATH_MAX)
		return 0;
	for (;;) {
		size_t len = strcspn(p, "/");

		if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		if (p[len] == '\0')
			return 1;
		p += len + 1;
	}
}

/* name below dir, one component at a time, never following a link. */
static int open_beneath(int dir, const char *name)
{
	char buf[PATH_MAX], *save = NULL, *comp, *next;
	int fd = dup(dir), sub;

	snprintf(buf, sizeof(buf), "%s", name);
	for (comp = strtok_r(buf, "/", &save); fd >= 0 && comp != NULL; comp = next) {
		next = strtok_r(NULL, "/", &save);
		sub = openat(fd, comp,
			     next != NULL ? O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
					  : O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		close(fd);
		fd = sub;
	}
	return fd;
}

int engine_artifact(struct engine *e, const struct serve_scope *scope, const char *exec_id, const char *name,
		    int *fd, uint64_t *size, struct serve_err *err)
{
	const struct kept_exec *k;
	char sub[64];
	int known = 0, dfd = -1, f = -1, status;
	struct stat st;

	*fd = -1;
	*size = 0;
	if (exec_id == NULL || strlen(exec_id) != EXEC_ID_LEN || name == NULL || !artifact_name_ok(name))
		return serve_fail(err, 404, "unknown_artifact", "no such artifact");
	pthread_mutex_lock(&e->mu);
	for (k = e->kept; k != NULL && !known; k = k->next) {
		if (strcmp(k->id, exec_id) != 0 || k->token != scope->token_index || k->expires_us <= serve_now_us())
			continue;
		for (unsigned i = 0; i < k->nnames && !known; i++)
			known = strcmp(k->names[i], name) == 0;
	}
	pthread_mutex_unlock(&e->mu);
	/* Unknown, expired, another token's, or not an artifact of the
	 * result: one answer for all, so ids cannot be probed. */
	if (!known)
		return serve_fail(err, 404, "unknown_artifact", "no such artifact");
	snprintf(sub, sizeof(sub), "%s/out", exec_id);
	if ((dfd = open_beneath(e->work_fd, sub)) < 0 || (f = open_beneath(dfd, name)) < 0 || fstat(f, &st) != 0 ||
	    !S_ISREG(st.st_mode)) {
		status = serve_fail(err, 404, "unknown_artifact", "no such artifact");
		goto out;
	}
	*fd = f;
	*size = (uint64_t)st.st_size;
	f = -1;
	status = 200;
out:
	if (f >= 0)
		close(f);
	if (dfd >= 0)
		close(dfd);
	return status;
}

/* ---- executions ------------------------------------------------------------ */

/* The request's contents, moved out of the front's struct. */
struct exec_input {
	char *code;
	size_t code_len;
	struct sandbox_file inputs[SANDBOX_MAX_INPUTS];
	unsigned ninputs;
	cJSON *context;
	const struct sandbox_events *events;
};

static void input_take(struct exec_input *x, struct serve_exec_req *rq)
{
	x->code = rq->code;
	x->code_len = rq->code_len;
	x->ninputs = rq->ninputs <= SANDBOX_MAX_INPUTS ? rq->ninputs : SANDBOX_MAX_INPUTS;
	memcpy(x->inputs, rq->inputs, sizeof(x->inputs));
	x->context = rq->context;
	x->events = rq->stream != NULL ? &rq->stream->events : NULL;
	rq->code = NULL;
	rq->code_len = 0;
	memset(rq->inputs, 0, sizeof(rq->inputs));
	rq->ninputs = 0;
	rq->context = NULL;
}

static void input_free(struct exec_input *x)
{
	free(x->code);
	for (unsigned i = 0; i < SANDBOX_MAX_INPUTS; i++) {
		free((char *)x->inputs[i].name);
		free((char *)x->inputs[i].data);
	}
	cJSON_Delete(x->context);
}

/* A pooled or cold sandbox that will not run: destroyed, and the run
 * directory it may have made removed. */
static void item_discard(struct engine *e, struct pool_item *it)
{
	char err[512];

	if (pool_item_discard(it, err, sizeof(err)) != 0)
		serve_logf(e->o.log, e->o.log_arg, "run directory not fully removed: %s", err);
}

/* Start: a warm sandbox when the pool has one, else (or when the warm one
 * fails to start, having died just before) one made here, cold.  *itp is
 * the item that started or, on failure, the one whose reduce tells why. */
static int exec_start(struct engine *e, struct policy_entry *ent, const char *agent, struct exec_input *x,
		      struct pool_item **itp, int *warm)
{
	struct sandbox_request rq = { x->code, x->code_len, "request", x->inputs, x->ninputs, &x->context, x->events, 0 };
	struct pool_item *it = NULL;
	int had_context = x->context != NULL, rc;
	struct sandbox_err se;
	cJSON *spare = NULL;

	*itp = NULL;
	*warm = 0;
	/* A tool's missing secret is the server's configuration, the same
	 * for every sandbox: the request gets its harness error result
	 * (stage secrets) from a sandbox that is never prepared, and no warm
	 * one is spent on it. */
	if (sandbox_check_secrets(e->o.host, &ent->pol, agent, x->context, &se) != 0) {
		if (pool_item_new(e->o.host, e->work_dir, e->work_fd, ent, agent, &it) != 0)
			return -1;
		sandbox_fail(it->sb, &se);
		*itp = it;
		return sandbox_start(it->sb, &rq);
	}
	it = pool_take(e->pool, ent, agent);
	*warm = it != NULL;
	if (it != NULL) {
		/* start takes the context: a retry needs a copy of its own */
		if (had_context)
			spare = cJSON_Duplicate(x->context, 1);
		if ((rc = sandbox_start(it->sb, &rq)) == 0 || (had_context && spare == NULL)) {
			cJSON_Delete(spare);
			*itp = it;
			return rc;
		}
		serve_logf(e->o.log, e->o.log_arg, "app %s: a warm sandbox failed to start; retrying once cold",
			   ent->pol.meta.app);
		metrics_sandbox_failed(e->metrics);
		item_discard(e, it);
		it = NULL;
		cJSON_Delete(x->context);
		x->context = spare;
		*warm = 0;
	}
	if (pool_item_make(e->o.host, e->work_dir, e->work_fd, ent, agent, 0, &it) != 0 && it == NULL)
		return -1;
	*itp = it;
	return sandbox_start(it->sb, &rq);
}

/* Metrics from the result: its status, its tool calls by code. */
static void exec_count(struct engine *e, const cJSON *res, int warm, uint64_t t0)
{
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(res, "status");
	const cJSON *calls = cJSON_GetObjectItemCaseSensitive(res, "toolCalls"), *c;

	metrics_execution(e->metrics, cJSON_IsString(st) ? st->valuestring : "error", warm, serve_now_us() - t0);
	cJSON_ArrayForEach(c, calls)
	{
		const cJSON *code = cJSON_GetObjectItemCaseSensitive(c, "code");

		metrics_tool_call(e->metrics, cJSON_IsString(code) ? code->valuestring : "ok");
	}
}

static void inflight_done(struct engine *e)
{
	pthread_mutex_lock(&e->mu);
	e->inflight--;
	pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->mu);
}

static int admit(struct engine *e, struct serve_err *err)
{
	struct timespec dl = serve_deadline_us(serve_now_us() + (uint64_t)e->o.queue_timeout_s * 1000000u);
	unsigned running, queued;
	enum gate_result r = gate_enter(&e->gate, &dl, &running, &queued);

	metrics_running(e->metrics, running, queued);
	switch (r) {
	case GATE_OK:
		return 200;
	case GATE_FULL:
		err->retry_after_s = 1;
		return serve_fail(err, 429, "overloaded", "%u executions running and %u queued: try again later", running,
			    queued);
	case GATE_TIMEOUT:
		err->retry_after_s = 1;
		return serve_fail(err, 429, "overloaded", "no execution slot within %u s: try again later",
			    e->o.queue_timeout_s);
	default:
		return serve_fail(err, 503, "draining", "the server is shutting down");
	}
}

/* A streamed execution's or cell's cancel (its reader left): the slot's,
 * as engine_cancel() does it. */
struct slot_ref {
	struct engine *e;
	struct exec_slot *slot;
};

static void slot_ref_cancel(void *ctx, const char *why)
{
	struct slot_ref *r = ctx;

	pthread_mutex_lock(&r->e->mu);
	slot_cancel(r->slot, why);
	pthread_mutex_unlock(&r->e->mu);
}

/* Binds (slot) or unbinds (NULL) a streamed request's cancel; the ref
 * lives on the caller's stack until it unbinds. */
static void stream_bind(const struct serve_exec_req *rq, struct slot_ref *ref, struct exec_slot *slot)
{
	if (rq->stream == NULL || (slot == NULL && ref->slot == NULL))
		return;
	ref->slot = slot;
	if (slot != NULL)
		rq->stream->bind_cancel(rq->stream->events.arg, slot_ref_cancel, ref);
	else
		rq->stream->bind_cancel(rq->stream->events.arg, NULL, NULL);
}

int engine_execute(struct engine *e, const struct serve_scope *scope, struct serve_exec_req *rq, cJSON **out,
		   struct serve_err *err)
{
	struct slot_ref sref = { e, NULL };
	uint64_t t0 = serve_now_us();
	struct exec_input x = { 0 };
	struct policy_entry *ent = NULL;
	struct exec_slot *slot = NULL;
	struct pool_item *it = NULL;
	struct sandbox_reduce_opts ro = { .inline_max = e->o.inline_max };
	const char *agent = NULL, *base;
	char id[EXEC_ID_LEN + 1], pending[PATH_MAX];
	unsigned running, queued;
	int status, warm = 0, admitted = 0, exit_code;
	cJSON *res = NULL;

	*out = NULL;
	input_take(&x, rq);
	pthread_mutex_lock(&e->mu);
	e->inflight++;
	pthread_mutex_unlock(&e->mu);
	if (atomic_load(&e->draining)) {
		status = serve_fail(err, 503, "draining", "the server is shutting down");
		goto out;
	}
	if ((status = resolve(e, scope, rq->app, rq->agent, &ent, &agent, err)) != 200)
		goto out;
	if ((status = slot_register(e, scope->token_index, rq->request_id, &slot, err)) != 200)
		goto out;
	stream_bind(rq, &sref, slot);
	if ((status = admit(e, err)) != 200)
		goto out;
	admitted = 1;

	pool_running(e->pool, +1);
	if (exec_start(e, ent, agent, &x, &it, &warm) == 0)
		sandbox_wait(it->sb, slot->cancel_fd);
	pool_running(e->pool, -1);
	if (it == NULL) {
		status = oom(err);
		goto out;
	}
	pthread_mutex_lock(&e->mu);
	if (slot->reason != NULL)
		sandbox_cancel_reason(it->sb, slot->reason);
	pthread_mutex_unlock(&e->mu);
	res = sandbox_reduce(it->sb, &ro, &exit_code);
	snprintf(id, sizeof(id), "%s", sandbox_id(it->sb));
	base = strrchr(it->run_dir, '/');
	snprintf(pending, sizeof(pending), "%s", base ? base + 1 : it->run_dir);
	/* Nothing writes the run directory after reduce: it is renamed
	 * (retain) while the sweeper destroys the sandbox. */
	if (res != NULL)
		retain(e, pending, id, scope->token_index, res);
	engine_doom(e, it);
	it = NULL;
	gate_leave(&e->gate, &running, &queued);
	metrics_running(e->metrics, running, queued);
	admitted = 0;
	if (res == NULL) {
		rundir_remove(e, pending);
		status = oom(err);
		goto out;
	}
	exec_count(e, res, warm, t0);
	*out = res;
	res = NULL;
	status = 200;
out:
	if (it != NULL)
		item_discard(e, it);
	if (admitted) {
		gate_leave(&e->gate, &running, &queued);
		metrics_running(e->metrics, running, queued);
	}
	cJSON_Delete(res);
	stream_bind(rq, &sref, NULL);
	slot_unregister(e, slot);
	policy_entry_put(ent);
	input_free(&x);
	inflight_done(e);
	return status;
}

/* ---- code-interpreter sessions ---------------------------------------------------- */

/* A session's sandbox at its end (sessions_opts.finish): kept and
 * destroyed as an execution's is. */
static void session_finish(void *arg, struct pool_item *it, cJSON *record, unsigned token)
{
	struct engine *e = arg;
	const char *base = strrchr(it->run_dir, '/');
	char pending[PATH_MAX], id[EXEC_ID_LEN + 1];

	snprintf(pending, sizeof(pending), "%s", base ? base + 1 : it->run_dir);
	snprintf(id, sizeof(id), "%s", sandbox_id(it->sb));
	if (record != NULL)
		retain(e, pending, id, token, record);
	engine_doom(e, it);
	if (record == NULL)
		rundir_remove(e, pending);
	cJSON_Delete(record);
}

static const char *ctx_str(const cJSON *ctx, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(ctx, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The common head of a session request: counted in flight (a drain waits
 * for it), refused while draining. */
static int session_enter(struct engine *e, struct serve_err *err)
{
	pthread_mutex_lock(&e->mu);
	e->inflight++;
	pthread_mutex_unlock(&e->mu);
	if (atomic_load(&e->draining))
		return serve_fail(err, 503, "draining", "the server is shutting down");
	return 200;
}

int engine_session_create(struct engine *e, const struct serve_scope *scope, struct serve_exec_req *rq, cJSON **out,
			  struct serve_err *err)
{
	struct session_who who = { scope->token_index, NULL, NULL };
	struct policy_entry *ent = NULL;
	const char *agent = NULL;
	unsigned running, queued;
	int status;

	*out = NULL;
	if ((status = session_enter(e, err)) != 200 ||
	    (status = resolve(e, scope, rq->app, rq->agent, &ent, &agent, err)) != 200)
		goto out;
	/* Preparing a cold sandbox is an interpreter start: admitted as an
	 * execution is, for as long as the creation takes. */
	if ((status = admit(e, err)) != 200)
		goto out;
	status = sessions_create(e->sessions, &who, ent, agent, rq, out, err);
	gate_leave(&e->gate, &running, &queued);
	metrics_running(e->metrics, running, queued);
out:
	policy_entry_put(ent);
	inflight_done(e);
	return status;
}

int engine_session_cell(struct engine *e, const struct serve_scope *scope, const char *id,
			struct serve_exec_req *rq, cJSON **out, struct serve_err *err)
{
	struct session_who who = { scope->token_index, ctx_str(rq->context, "tenant"), ctx_str(rq->context, "user") };
	struct slot_ref sref = { e, NULL };
	struct exec_slot *slot = NULL;
	unsigned running, queued;
	int status, admitted = 0;

	*out = NULL;
	if ((status = session_enter(e, err)) != 200 ||
	    (status = sessions_cell_check(e->sessions, &who, id, rq->code_len, err)) != 200 ||
	    (status = slot_register(e, scope->token_index, rq->request_id, &slot, err)) != 200)
		goto out;
	stream_bind(rq, &sref, slot);
	if ((status = admit(e, err)) != 200)
		goto out;
	admitted = 1;
	status = sessions_cell(e->sessions, &who, id, rq, slot->cancel_fd, out, err);
	if (status == 200) {
		const cJSON *c;

		cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(*out, "toolCalls"))
		{
			const cJSON *code = cJSON_GetObjectItemCaseSensitive(c, "code");

			metrics_tool_call(e->metrics, cJSON_IsString(code) ? code->valuestring : "ok");
		}
	}
out:
	if (admitted) {
		gate_leave(&e->gate, &running, &queued);
		metrics_running(e->metrics, running, queued);
	}
	stream_bind(rq, &sref, NULL);
	slot_unregister(e, slot);
	inflight_done(e);
	return status;
}

int engine_session_get(struct engine *e, const struct serve_scope *scope, const char *id, const char *tenant,
		       const char *user, cJSON **out, struct serve_err *err)
{
	struct session_who who = { scope->token_index, tenant, user };

	return sessions_get(e->sessions, &who, id, out, err);
}

int engine_session_delete(struct engine *e, const struct serve_scope *scope, const char *id, const char *tenant,
			  const char *user, cJSON **out, struct serve_err *err)
{
	struct session_who who = { scope->token_index, tenant, user };
	int status;

	pthread_mutex_lock(&e->mu);
	e->inflight++;
	pthread_mutex_unlock(&e->mu);
	status = sessions_delete(e->sessions, &who, id, out, err);
	inflight_done(e);
	return status;
}

/* ---- life -------------------------------------------------------------------- */

int engine_work_dir_default(char *buf, size_t n, char *err, size_t en)
{
	const char *xdg;

	if (geteuid() == 0) {
		snprintf(buf, n, "/run/cordon/serve");
		return 0;
	}
	xdg = getenv("XDG_RUNTIME_DIR");
	if (xdg == NULL || xdg[0] != '/') {
		snprintf(err, en, "no work directory: XDG_RUNTIME_DIR is %s; give --work-dir",
			 xdg ? "not an absolute path" : "unset");
		return -1;
	}
	if ((size_t)snprintf(buf, n, "%s/cordon-serve", xdg) >= n) {
		snprintf(err, en, "XDG_RUNTIME_DIR is too long");
		return -1;
	}
	return 0;
}

/* Made 0700 if missing; an existing one must be a directory of ours (not
 * a link) and is set to 0700.  Locked (flock) so two servers never sweep
 * each other's executions, then swept: everything in it is a run
 * directory a killed server left. */
static int work_dir_open(struct engine *e, char *err, size_t n)
{
	struct stat st;
	char sweep_err[512];

	if (geteuid() == 0 && strcmp(e->work_dir, "/run/cordon/serve") == 0 && mkdir("/run/cordon", 0755) != 0 &&
	    errno != EEXIST) {
		snprintf(err, n, "/run/cordon: %s", strerror(errno));
		return -1;
	}
	if (mkdir(e->work_dir, 0700) != 0 && errno != EEXIST) {
		snprintf(err, n, "%s: %s", e->work_dir, strerror(errno));
		return -1;
	}
	if ((e->work_fd = open(e->work_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		snprintf(err, n, "%s: %s", e->work_dir, strerror(errno));
		return -1;
	}
	if (fstat(e->work_fd, &st) != 0 || st.st_uid != geteuid()) {
		snprintf(err, n, "%s: not a directory owned by this user", e->work_dir);
		return -1;
	}
	if ((st.st_mode & 07777) != 0700 && fchmod(e->work_fd, 0700) != 0) {
		snprintf(err, n, "%s: chmod 0700: %s", e->work_dir, strerror(errno));
		return -1;
	}
	if (flock(e->work_fd, LOCK_EX | LOCK_NB) != 0) {
		snprintf(err, n, "%s: %s", e->work_dir,
			 errno == EWOULDBLOCK ? "another cordon serve uses this work directory" : strerror(errno));
		return -1;
	}
	if (rmtree_contents(e->work_fd, sweep_err, sizeof(sweep_err)) != 0)
		serve_logf(e->o.log, e->o.log_arg, "work directory %s: sweep incomplete: %s", e->work_dir, sweep_err);
	return 0;
}

/* At load and at each reload: every agent whose tools declare a secret
 * neither --secrets nor the environment has is named in the log, with the
 * tool and the name, so an operator learns it before a request does.  Its
 * pool still fills: a request whose context leaves that tool out runs. */
static void engine_log_secrets(const struct engine *e, const struct policy_set *set)
{
	struct sandbox_err se;

	for (unsigned i = 0; i < set->n; i++) {
		const struct cpol_policy *p = &set->entries[i]->pol;

		for (uint32_t a = 0; a < p->nagents; a++)
			if (sandbox_check_secrets(e->o.host, p, p->agents[a].name, NULL, &se) != 0)
				serve_logf(e->o.log, e->o.log_arg,
					   "app %s agent %s: %s; an execution that selects that tool is refused "
					   "(exec.harness.secrets)",
					   p->meta.app, p->agents[a].name, se.msg);
	}
}

int engine_new(const struct engine_opts *o, struct engine **out, char *err, size_t n)
{
	struct engine *e = calloc(1, sizeof(*e));
	struct pool_opts po = { 0 };
	struct policy_set *set = NULL;
	pthread_condattr_t ca;
	unsigned maxc;
	int rc = -1, pe;

	*out = NULL;
	if (e == NULL) {
		snprintf(err, n, "out of memory");
		return -1;
	}
	e->o = *o;
	e->work_fd = -1;
	atomic_init(&e->draining, 0);
	pthread_mutex_init(&e->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&e->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (o->work_dir != NULL) {
		if (o->work_dir[0] != '/' || (size_t)snprintf(e->work_dir, sizeof(e->work_dir), "%s", o->work_dir) >=
						     sizeof(e->work_dir) - 64) {
			snprintf(err, n, "--work-dir must be an absolute path of reasonable length");
			goto out;
		}
	} else if (engine_work_dir_default(e->work_dir, sizeof(e->work_dir), err, n) != 0) {
		goto out;
	}
	e->o.work_dir = e->work_dir;
	if (work_dir_open(e, err, n) != 0)
		goto out;
	if ((e->metrics = metrics_new()) == NULL) {
		snprintf(err, n, "out of memory");
		goto out;
	}
	maxc = o->max_concurrency;
	if (maxc == 0) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);

		maxc = cpus < 1 ? 2 : 2 * (unsigned)cpus;
	}
	if (gate_init(&e->gate, maxc, o->queue) != 0) {
		snprintf(err, n, "out of memory");
		goto out;
	}
	e->gate_made = 1;
	if ((pe = pthread_create(&e->sweeper, NULL, engine_sweeper, e)) != 0) {
		snprintf(err, n, "retention thread: %s", strerror(pe));
		goto out;
	}
	e->sweeper_started = 1;
	po.host = o->host;
	po.metrics = e->metrics;
	po.work_dir = e->work_dir;
	po.work_fd = e->work_fd;
	po.target = o->pool;
	po.log = o->log;
	po.log_arg = o->log_arg;
	if (pool_new(&po, &e->pool, err, n) != 0)
		goto out;
	if (sessions_new(&(struct sessions_opts){ .host = o->host,
						  .pool = e->pool,
						  .metrics = e->metrics,
						  .work_dir = e->work_dir,
						  .work_fd = e->work_fd,
						  .max = o->max_sessions,
						  .keep_s = o->retain_s,
						  .inline_max = o->inline_max,
						  .finish = session_finish,
						  .finish_arg = e,
						  .log = o->log,
						  .log_arg = o->log_arg },
			 &e->sessions, err, n) != 0)
		goto out;
	set = policies_current(o->policies);
	engine_log_secrets(e, set);
	pool_apply(e->pool, set);
	policy_set_put(set);
	*out = e;
	e = NULL;
	rc = 0;
out:
	engine_free(e);
	return rc;
}

int engine_reload(struct engine *e, unsigned *napps, char *err, size_t n)
{
	struct policy_set *set;

	if (policies_reload(e->o.policies, err, n) != 0)
		return -1;
	set = policies_current(e->o.policies);
	*napps = set->n;
	engine_log_secrets(e, set);
	if (!atomic_load(&e->draining))
		pool_apply(e->pool, set);
	policy_set_put(set);
	return 0;
}

void engine_drain(struct engine *e)
{
	atomic_store(&e->draining, 1);
	gate_drain(&e->gate);
	sessions_end_all(e->sessions, "the server is shutting down");
	pool_drain(e->pool);
}

int engine_wait_idle(struct engine *e, unsigned timeout_ms)
{
	struct timespec dl = serve_deadline_us(serve_now_us() + (uint64_t)timeout_ms * 1000u);
	int idle;

	pthread_mutex_lock(&e->mu);
	while (e->inflight > 0 && pthread_cond_timedwait(&e->cv, &e->mu, &dl) == 0)
		;
	idle = e->inflight == 0;
	pthread_mutex_unlock(&e->mu);
	return idle;
}

const char *engine_work_dir(const struct engine *e)
{
	return e->work_dir;
}

void engine_free(struct engine *e)
{
	if (e == NULL)
		return;
	/* Sessions first: one may hold a sandbox a pool worker prepared,
	 * whose executor dies with that worker (pool.h). */
	sessions_free(e->sessions);
	pool_free(e->pool);
	if (e->sweeper_started) {
		pthread_mutex_lock(&e->mu);
		e->stopping = 1;
		pthread_cond_broadcast(&e->cv);
		pthread_mutex_unlock(&e->mu);
		pthread_join(e->sweeper, NULL);
	}
	/* The sweeper empties the list before it stops; without one
	 * (start failed), here. */
	while (e->doomed != NULL) {
		struct pool_item *it = e->doomed;

		e->doomed = it->next;
		pool_item_free(it);
	}
	/* Kept run directories go with the server: nothing serves their
	 * artifacts any more (and the next start would sweep them). */
	while (e->kept != NULL) {
		struct kept_exec *k = e->kept;

		e->kept = k->next;
		rundir_remove(e, k->id);
		kept_free(k);
	}
	if (e->gate_made)
		gate_destroy(&e->gate);
	metrics_free(e->metrics);
	if (e->work_fd >= 0)
		close(e->work_fd);
	pthread_cond_destroy(&e->cv);
	pthread_mutex_destroy(&e->mu);
	free(e);
}
