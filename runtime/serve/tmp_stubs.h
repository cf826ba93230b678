/*
 * tmp_stubs.h - TEMPORARY: delete with tmp_stubs.c once the parts below
 * have landed on main and this branch is rebased onto it.
 *
 *   http.h       (branch serve-http): struct http_opts (a copy of that
 *                branch's), http_start, http_quiesce, http_stop
 *   agent_doc.h  (branch preload-doc): agent_doc_markdown,
 *                agent_doc_tools_json, agent_doc_probe_python
 *
 * tmp_stubs.c also defines weak versions of metrics_* (serve-http's
 * metrics.c), so this branch links before they land; a strong definition,
 * once it exists, wins.
 */
#ifndef CORDON_SERVE_TMP_STUBS_H
#define CORDON_SERVE_TMP_STUBS_H

#include <stddef.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "cordon/policy.h"

struct engine;
struct http_server;

struct http_opts {
	const char *socket_path;
	mode_t socket_mode;
	const char *socket_group;
	const char *listen;
	const char *tokens_path;
	size_t max_body;
	unsigned body_timeout_s;
	unsigned max_connections;
};

struct http_server *http_start(const struct http_opts *o, struct engine *e, char *err, size_t n);
void http_quiesce(struct http_server *srv);
void http_stop(struct http_server *srv);

#define AGENT_DOC_VERSION_MAX 4096
int agent_doc_probe_python(const char *interp, char *version, size_t n, char *err, size_t errlen);
char *agent_doc_markdown(const struct cpol_policy *p, const char *agent, const char *python_version, size_t *len);
cJSON *agent_doc_tools_json(const struct cpol_policy *p, const char *agent);

#endif
