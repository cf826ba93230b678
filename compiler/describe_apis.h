/* SPDX-License-Identifier: Apache-2.0 */
/*
 * describe_apis.h - `cordonc describe --format openai|anthropic|mcp`: the
 * tool definitions of agent_doc_tools_json() (--format jsonschema) in the
 * shapes three model APIs take (docs/describe-apis.md):
 *
 *   openai     [{"type":"function","function":{"name","description",
 *                "parameters","strict"}}]   (Chat Completions `tools`)
 *   anthropic  [{"name","description","input_schema"}]   (Messages `tools`)
 *   mcp        [{"name","description","inputSchema","annotations"}]
 *              (the Tool objects of an MCP tools/list result)
 *
 * The schemas and descriptions are jsonschema's, so every format says what
 * the supervisor enforces.  Two things change on the way:
 *  - the name.  OpenAI and Anthropic take ^[a-zA-Z0-9_-]{1,64}$, so the id's
 *    '.' becomes "__" (describe_api_name()); the spelling is kept only when
 *    describe_api_id() gives the id back, else the tool is an error, never a
 *    truncated or guessed name.  MCP allows '.' (spec 2025-11-25, "Tool
 *    Names"), so its name is the id itself.
 *  - a side-effect tool's parameters gain a required "message_id", the
 *    argument the stub takes beside the params: the description tells the
 *    model to choose one, and a closed schema would otherwise forbid it.
 *    The platform moves it to the request's messageId.
 */
#ifndef CORDON_DESCRIBE_APIS_H
#define CORDON_DESCRIBE_APIS_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "cordon/policy.h"

enum describe_api { DESCRIBE_API_OPENAI, DESCRIBE_API_ANTHROPIC, DESCRIBE_API_MCP };

/* Room for a name or an id, its NUL included (names are at most 64 bytes
 * for OpenAI and Anthropic, ids at most 65). */
#define DESCRIBE_API_NAME_MAX 160

/* The name api gives the tool id (its '.' as "__" for OpenAI and
 * Anthropic, the id itself for MCP).  -1 with err when the name would not
 * fit the API's alphabet or length, or would not map back to id. */
int describe_api_name(enum describe_api api, const char *id, char *name, size_t n, char *err, size_t errlen);

/* The inverse for OpenAI and Anthropic names: each "__", left to right, as
 * '.'.  What a platform does with a model's tool call to find the id the
 * stub and the bridge use.  -1 when id[n] is too small. */
int describe_api_id(const char *name, char *id, size_t n);

/* defs: agent_doc_tools_json()'s array for the same policy.  The same
 * tools in api's shape, a new array (caller deletes); NULL with err when a
 * tool cannot be written in that shape (its name, a parameter called
 * message_id beside a side effect) or memory ran out. */
cJSON *describe_api_tools(const struct cpol_policy *p, const cJSON *defs, enum describe_api api, char *err,
			  size_t errlen);

#endif
