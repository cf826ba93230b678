/*
 * tmp_stubs.c - TEMPORARY (see tmp_stubs.h): weak stand-ins so this branch
 * builds before sandbox.c, metrics.c, http.c and agent_doc.c land.  Every
 * symbol is weak: the real definition replaces it at link time.  Delete
 * this file and tmp_stubs.h after rebasing onto a main that has them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/sandbox.h"
#include "runtime/serve/metrics.h"
#include "runtime/serve/tmp_stubs.h"

#define WEAK __attribute__((weak))

struct sandbox {
	char id[33];
};

WEAK int sandbox_host_probe(struct sandbox_host *h, const struct sandbox_host_opts *o, struct sandbox_err *e)
{
	(void)o;
	memset(h, 0, sizeof(*h));
	snprintf(e->stage, sizeof(e->stage), "host");
	snprintf(e->msg, sizeof(e->msg), "sandbox.c has not landed on this branch yet");
	return -1;
}
WEAK void sandbox_host_free(struct sandbox_host *h) { (void)h; }
WEAK struct sandbox *sandbox_new(const struct sandbox_host *h, const struct sandbox_spec *s)
{
	(void)h;
	(void)s;
	return calloc(1, sizeof(struct sandbox));
}
WEAK int sandbox_prepare(struct sandbox *sb, int wait_ready) { (void)sb; (void)wait_ready; return -1; }
WEAK int sandbox_start(struct sandbox *sb, const struct sandbox_request *rq) { (void)sb; (void)rq; return -1; }
WEAK int sandbox_wait(struct sandbox *sb, int cancel_fd) { (void)sb; (void)cancel_fd; return -1; }
WEAK void sandbox_cancel_reason(struct sandbox *sb, const char *why) { (void)sb; (void)why; }
WEAK cJSON *sandbox_reduce(struct sandbox *sb, const struct sandbox_reduce_opts *o, int *exit_code)
{
	cJSON *r = cJSON_CreateObject();

	(void)sb;
	(void)o;
	*exit_code = 125;
	cJSON_AddStringToObject(r, "status", "error");
	return r;
}
WEAK void sandbox_destroy(struct sandbox *sb) { free(sb); }
WEAK const char *sandbox_id(const struct sandbox *sb) { return sb->id; }
WEAK int sandbox_pidfd(const struct sandbox *sb) { (void)sb; return -1; }
WEAK int sandbox_failed(const struct sandbox *sb, struct sandbox_err *e) { (void)sb; (void)e; return 1; }
WEAK void sandbox_times(const struct sandbox *sb, struct sandbox_times *t) { (void)sb; memset(t, 0, sizeof(*t)); }

WEAK struct metrics *metrics_new(void) { return calloc(1, 1); }
WEAK void metrics_free(struct metrics *m) { free(m); }
WEAK void metrics_execution(struct metrics *m, const char *status, int warm, uint64_t latency_us)
{
	(void)m; (void)status; (void)warm; (void)latency_us;
}
WEAK void metrics_http(struct metrics *m, int http_status) { (void)m; (void)http_status; }
WEAK void metrics_tool_call(struct metrics *m, const char *code) { (void)m; (void)code; }
WEAK void metrics_sandbox_created(struct metrics *m, uint64_t prepare_us) { (void)m; (void)prepare_us; }
WEAK void metrics_sandbox_failed(struct metrics *m) { (void)m; }
WEAK void metrics_pool_size(struct metrics *m, const char *app, const char *agent, unsigned warm, unsigned target)
{
	(void)m; (void)app; (void)agent; (void)warm; (void)target;
}
WEAK void metrics_running(struct metrics *m, unsigned running, unsigned queued) { (void)m; (void)running; (void)queued; }
WEAK char *metrics_render(struct metrics *m, size_t *len) { (void)m; *len = 0; return strdup(""); }

WEAK struct http_server *http_start(const struct serve_opts *o, struct engine *e, char *err, size_t n)
{
	(void)o;
	(void)e;
	snprintf(err, n, "http.c has not landed on this branch yet");
	return NULL;
}
WEAK void http_quiesce(struct http_server *srv) { (void)srv; }
WEAK void http_stop(struct http_server *srv) { (void)srv; }

WEAK char *agent_doc_markdown(const struct cpol_policy *p, const char *agent, size_t *len)
{
	(void)p;
	(void)agent;
	*len = 0;
	return strdup("");
}
WEAK cJSON *agent_doc_tools_json(const struct cpol_policy *p, const char *agent)
{
	(void)p;
	(void)agent;
	return cJSON_CreateArray();
}
