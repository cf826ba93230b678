/*
 * tmp_stubs.h - TEMPORARY: delete with tmp_stubs.c once the parts below
 * have landed on main and this branch is rebased onto it.
 *
 *   http.h            (branch serve-http): http_start, http_quiesce, http_stop
 *   agent_doc.h       (branch preload-doc): agent_doc_markdown, agent_doc_tools_json
 *   pol->exec.preload (branch preload-doc): TMP_NPRELOAD / TMP_PRELOAD below
 *
 * tmp_stubs.c also defines weak versions of sandbox_* (runtime/sandbox.c,
 * the lead) and metrics_* (serve-http's metrics.c), so this branch links
 * before they land; a strong definition, once it exists, wins.
 */
#ifndef CORDON_SERVE_TMP_STUBS_H
#define CORDON_SERVE_TMP_STUBS_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "cordon/policy.h"

struct serve_opts;
struct engine;
struct http_server;

struct http_server *http_start(const struct serve_opts *o, struct engine *e, char *err, size_t n);
void http_quiesce(struct http_server *srv);
void http_stop(struct http_server *srv);

char *agent_doc_markdown(const struct cpol_policy *p, const char *agent, size_t *len);
cJSON *agent_doc_tools_json(const struct cpol_policy *p, const char *agent);

#define TMP_NPRELOAD(p) ((void)(p), 0u)
#define TMP_PRELOAD(p, i) ((void)(p), (void)(i), "")

#endif
