/*
 * tmp_stubs.c - TEMPORARY (see tmp_stubs.h): weak stand-ins so this branch
 * builds before metrics.c, http.c and agent_doc.c land.  Every
 * symbol is weak: the real definition replaces it at link time.  Delete
 * this file and tmp_stubs.h after rebasing onto a main that has them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/serve/metrics.h"
#include "runtime/serve/tmp_stubs.h"

#define WEAK __attribute__((weak))

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

WEAK struct http_server *http_start(const struct http_opts *o, struct engine *e, char *err, size_t n)
{
	(void)o;
	(void)e;
	snprintf(err, n, "http.c has not landed on this branch yet");
	return NULL;
}
WEAK void http_quiesce(struct http_server *srv) { (void)srv; }
WEAK void http_stop(struct http_server *srv) { (void)srv; }

WEAK int agent_doc_probe_python(const char *interp, char *version, size_t n, char *err, size_t errlen)
{
	(void)interp;
	(void)version;
	(void)n;
	snprintf(err, errlen, "agent_doc.c has not landed on this branch yet");
	return -1;
}
WEAK char *agent_doc_markdown(const struct cpol_policy *p, const char *agent, const char *python_version, size_t *len)
{
	(void)p;
	(void)agent;
	(void)python_version;
	*len = 0;
	return strdup("");
}
WEAK cJSON *agent_doc_tools_json(const struct cpol_policy *p, const char *agent)
{
	(void)p;
	(void)agent;
	return cJSON_CreateArray();
}
