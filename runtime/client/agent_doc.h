/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_doc.h - what the model is told about a sandbox and its tools,
 * written from the loaded blob itself (docs/client.md), so it cannot drift
 * from what the runtime and the supervisor enforce.  One implementation for
 * `cordonc describe` and `cordon serve`'s capabilities endpoint
 * (GET /v1/apps/{app}/agents/{agent}).
 *
 * The description is one JSON document built from the policy; the Markdown
 * is rendered from that document, never from the policy, so `describe
 * --json` and the Markdown cannot say different things.  The tool
 * definitions (agent_doc_tools_json) are the same tools as JSON Schema
 * 2020-12, for a model's function-calling interface.
 *
 * Everything here is runtime code (no libyaml, no libseccomp), returns its
 * errors, and prints nothing.  Functions are pure on the policy but for
 * agent_doc_probe_python(), which runs the interpreter, so a server can
 * probe once per policy and pass the answer to every later call.
 */
#ifndef CORDON_AGENT_DOC_H
#define CORDON_AGENT_DOC_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "cordon/policy.h"

/* Room for a probed sys.version, its NUL included. */
#define AGENT_DOC_VERSION_MAX 4096

/* The tools an agent may use (ascending indices; all of them when agent
 * is NULL), malloc'd (*tools NULL when n is 0).  -1 with err when there is
 * no such agent or memory ran out. */
int agent_doc_select(const struct cpol_policy *p, const char *agent, uint32_t **tools, uint32_t *n, char *err,
		     size_t errlen);

/* sys.version of the interpreter interp (the policy's exec.interpreter),
 * run on this host as `INTERP -I -c ...` with an empty environment, stdin
 * and stderr on /dev/null, and a 10 s limit; newlines become spaces.  It
 * spawns and reaps one child and touches no signal disposition.  -1 with
 * err when it cannot be run or fails. */
int agent_doc_probe_python(const char *interp, char *version, size_t n, char *err, size_t errlen);

/* The description document (`cordonc describe --json`; caller deletes).
 * tools/n from agent_doc_select().  version: the probed interpreter
 * version, or NULL with why (probe_err) it is unknown.  NULL when memory
 * ran out. */
cJSON *agent_doc_json(const struct cpol_policy *p, const char *agent, const uint32_t *tools, uint32_t n,
		      const char *version, const char *probe_err);

/* The run's input files, named to the model: d (agent_doc_json()'s
 * document) gets "inputs", the names `cordon run --input PATH` gives them
 * in the workspace's work/ (each path's last component), in order.  Only
 * a caller that knows the run's inputs adds them; without the key the
 * description says nothing about inputs.  -1 with err for a name the
 * sandbox would refuse (policy_input_name_ok()), one given twice, or no
 * memory. */
int agent_doc_add_inputs(cJSON *d, char *const *paths, unsigned n, char *err, size_t errlen);

/* Markdown rendered from agent_doc_json()'s document; malloc'd, or NULL
 * when memory ran out. */
char *agent_doc_render(const cJSON *d);

/* Exactly the text `cordonc describe [--agent AGENT] BLOB` prints: the
 * description of the sandbox and of agent's tools (all tools when agent is
 * NULL) in Markdown.  python_version: agent_doc_probe_python()'s answer,
 * or NULL ("version unknown").  Malloc'd, its length in *len (len may be
 * NULL); NULL when there is no such agent or memory ran out. */
char *agent_doc_markdown(const struct cpol_policy *p, const char *agent, const char *python_version, size_t *len);

/* The agent's tools (all tools when agent is NULL) as function
 * definitions, in the blob's order:
 *   [{"name": "<ns>_<action>", "id": "<ns>.<action>", "description": ...,
 *     "parameters": <a JSON Schema 2020-12 object schema>}]
 * The schema says what JSON Schema can: types, required, enum,
 * minLength/maxLength, minimum/maximum, maxItems, nested objects and array
 * items, additionalProperties false at every object.  What it cannot, the
 * description says in words: the tool's constraints (decompiled from the
 * bytecode), lengths counted in UTF-8 bytes, a side effect's message id and
 * the budget.  A name two tools would share gets a suffix "_2", "_3", ...
 * (ids are unique; names only nearly so).  Caller deletes; NULL when there
 * is no such agent or memory ran out. */
cJSON *agent_doc_tools_json(const struct cpol_policy *p, const char *agent);

#endif
