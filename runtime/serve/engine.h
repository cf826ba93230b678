/* SPDX-License-Identifier: Apache-2.0 */
/*
 * engine.h - what the HTTP front (http.c) asks of cordon serve's engine
 * (engine.c, pool.c, policies.c): the contract between the two halves.
 *
 * The front parses and authenticates; the engine knows policies, pools and
 * sandboxes.  Every engine call is thread-safe and returns an HTTP status
 * with, on an error, a code and message the front turns into the JSON error
 * body {"error": {"code": ..., "message": ...}}.  Nothing here prints.
 */
#ifndef CORDON_SERVE_ENGINE_H
#define CORDON_SERVE_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "runtime/sandbox.h"

struct engine;
struct metrics;

/* Who is asking.  The Unix socket (access by its mode and group) is
 * unscoped; a TCP bearer token carries the apps it may use. */
struct serve_scope {
	int all;                 /* every app */
	const char *const *apps; /* else these */
	unsigned napps;
	unsigned token_index;    /* which token (0: the Unix socket): an execution is cancelled only by its creator */
};

struct serve_err {
	char code[48];           /* "unknown_app", "overloaded", "draining", ... */
	char message[512];
	unsigned retry_after_s;  /* 429/503: the Retry-After header, 0 none */
};

/* A streamed execution or session cell (stream.h): the sandbox's
 * followers, and where the engine binds its cancel while it may be
 * cancelled: cancel and ctx once registered, then (NULL, NULL) before the
 * handle is gone. */
struct serve_stream_hooks {
	struct sandbox_events events;
	void (*bind_cancel)(void *arg, void (*cancel)(void *ctx, const char *why), void *ctx);
};

/* Fills err (code, and the message from fmt) and returns status, so an
 * engine call can `return serve_fail(err, 404, "unknown_app", ...)`. */
int serve_fail(struct serve_err *err, int status, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* A parsed POST /v1/executions body (exec_request.c): every field checked
 * for type and bound; the engine checks it against the policy. */
#define SERVE_REQUEST_ID_MAX 64
struct serve_exec_req {
	char *app;
	char *agent;             /* NULL: the policy's tools are not offered */
	char request_id[SERVE_REQUEST_ID_MAX + 1]; /* [A-Za-z0-9._-]{1,64}, "" none: the cancel handle */
	char *code;
	size_t code_len;
	struct sandbox_file inputs[SANDBOX_MAX_INPUTS]; /* names and data owned here */
	unsigned ninputs;
	cJSON *context;          /* context.h's shape, already validated; NULL none */
	const struct serve_stream_hooks *stream; /* NULL: not streamed; borrowed (an execution or a cell) */
};
void serve_exec_req_free(struct serve_exec_req *r);

/* GET /v1/apps: [{"app","sha256","keyId","agents":[...],"preload":[...],
 * "packages":[...]}]
 * for the apps scope may see.  Always 200. */
int engine_apps(struct engine *e, const struct serve_scope *scope, cJSON **out, struct serve_err *err);

/* GET /v1/apps/{app}/agents/{agent}: {"app","agent","sha256","description"
 * (cordonc describe's text),"tools":[{"name","description","parameters"
 * (JSON Schema 2020-12)}],"preload":[...],"packages":[...]}.  404 unknown or out of scope. */
int engine_capabilities(struct engine *e, const struct serve_scope *scope, const char *app, const char *agent,
			cJSON **out, struct serve_err *err);

/* POST /v1/executions: runs it to the end.  200 with the result JSON of
 * `cordon run` (artifacts inline up to the server's bound) whatever the
 * execution's status; 404 unknown app/agent or out of scope; 409 a
 * request_id already running; 429 past the concurrency limit and the
 * queue (retry_after_s set); 503 draining.  Takes the request's contents
 * (code, inputs, context) whatever it returns. */
int engine_execute(struct engine *e, const struct serve_scope *scope, struct serve_exec_req *rq, cJSON **out,
		   struct serve_err *err);

/* POST /v1/executions/{request_id}/cancel: 202 when a running execution of
 * this scope's token had that request id, else 404. */
int engine_cancel(struct engine *e, const struct serve_scope *scope, const char *request_id, struct serve_err *err);

/* GET /v1/executions/{executionId}/artifacts/{name}: an artifact kept for
 * the retention window.  200 with *fd (the caller closes it) and *size;
 * 404 unknown, expired, or another token's. */
int engine_artifact(struct engine *e, const struct serve_scope *scope, const char *exec_id, const char *name,
		    int *fd, uint64_t *size, struct serve_err *err);

/* ---- code-interpreter sessions (session.h, docs/serve.md "Sessions") ----
 * Each answers as session.h says, after the engine's own checks: 503
 * draining; app and agent resolved in scope (403, 404); creation and
 * cells admitted through the concurrency gate (429).  A session belongs
 * to the token, tenant and user that created it; a cell's context, and
 * GET's and DELETE's tenant and user (NULL: none), must name the same. */
int engine_session_create(struct engine *e, const struct serve_scope *scope, struct serve_exec_req *rq, cJSON **out,
			  struct serve_err *err);
/* A cell streamed (rq->stream) is cancelled, and so its session ended, by
 * the stream's reader leaving, as a streamed execution is. */
int engine_session_cell(struct engine *e, const struct serve_scope *scope, const char *id,
			struct serve_exec_req *rq, cJSON **out, struct serve_err *err);
int engine_session_get(struct engine *e, const struct serve_scope *scope, const char *id, const char *tenant,
		       const char *user, cJSON **out, struct serve_err *err);
int engine_session_delete(struct engine *e, const struct serve_scope *scope, const char *id, const char *tenant,
			  const char *user, cJSON **out, struct serve_err *err);

/* GET /v1/ready: 200 when every pool holds at least one warm sandbox and
 * the server is not draining, else 503; *out says each pool's state. */
int engine_ready(struct engine *e, cJSON **out);

/* The metrics registry the engine counts into (metrics.h). */
struct metrics *engine_metrics(struct engine *e);

#endif
