/* SPDX-License-Identifier: Apache-2.0 */
/*
 * describe_apis.c - the tool definitions in the shapes of three model APIs
 * (describe_apis.h).  Everything is taken from agent_doc_tools_json()'s
 * array, so the schemas and the decompiled constraints stay one
 * implementation; here only names, envelopes, the message id argument,
 * OpenAI's strict flag and MCP's annotations are decided.
 */
#include <stdio.h>
#include <string.h>

#include "compiler/describe_apis.h"
#include "cordon/cpol.h"

/* OpenAI and Anthropic: ^[a-zA-Z0-9_-]{1,64}$.  MCP 2025-11-25 ("Tool
 * Names"): 1 to 128 of the same and '.'. */
#define DESCRIBE_API_FN_NAME_MAX 64
#define DESCRIBE_API_MCP_NAME_MAX 128

/* OpenAI's strict mode nests objects at most this deep (its error: "6
 * levels of nesting exceeds limit of 5"). */
#define DESCRIBE_API_STRICT_DEPTH 5

/* MCP's alphabet; OpenAI's and Anthropic's once '.' is "__". */
static int describe_api_name_byte(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
	       c == '.';
}

int describe_api_id(const char *name, char *id, size_t n)
{
	size_t j = 0;

	for (size_t i = 0; name[i] != '\0'; i++, j++) {
		if (j + 1 >= n)
			return -1;
		if (name[i] == '_' && name[i + 1] == '_') {
			id[j] = '.';
			i++;
		} else {
			id[j] = name[i];
		}
	}
	if (j >= n)
		return -1;
	id[j] = '\0';
	return 0;
}

int describe_api_name(enum describe_api api, const char *id, char *name, size_t n, char *err, size_t errlen)
{
	int fn = api != DESCRIBE_API_MCP;
	size_t j = 0, len = 0, max = fn ? DESCRIBE_API_FN_NAME_MAX : DESCRIBE_API_MCP_NAME_MAX;
	char back[DESCRIBE_API_NAME_MAX];

	for (const char *c = id; *c != '\0'; c++) {
		if (!describe_api_name_byte((unsigned char)*c)) {
			snprintf(err, errlen, "tool %s: its id holds a byte a tool name may not", id);
			return -1;
		}
		len += fn && *c == '.' ? 2 : 1;
	}
	if (len == 0 || len > max || len >= n) {
		snprintf(err, errlen,
			 "tool %s: its name would be %zu characters long, this format allows 1 to %zu ('.' is "
			 "written \"__\"); shorten the id",
			 id, len, max);
		return -1;
	}
	for (const char *c = id; *c != '\0'; c++) {
		if (fn && *c == '.') {
			name[j++] = '_';
			name[j++] = '_';
		} else {
			name[j++] = *c;
		}
	}
	name[j] = '\0';
	if (!fn)
		return 0;
	/* A "__" already in the id, or a '_' beside the dot, would read back
	 * as another id: such a name could send a call to the wrong tool.
	 * (back has room: the name is at most 64 bytes.) */
	if (describe_api_id(name, back, sizeof(back)) != 0 || strcmp(back, id) != 0) {
		snprintf(err, errlen,
			 "tool %s: its name %s would read back as %s ('.' is written \"__\"); rename the tool so no part "
			 "holds \"__\" or ends in '_'",
			 id, name, back);
		return -1;
	}
	return 0;
}

/* ---- OpenAI's strict mode ------------------------------------------------ */

static int describe_api_keys_in(const cJSON *s, const char *const *allowed)
{
	const cJSON *k;

	cJSON_ArrayForEach(k, s)
	{
		size_t i = 0;

		while (allowed[i] != NULL && strcmp(allowed[i], k->string) != 0)
			i++;
		if (allowed[i] == NULL)
			return 0;
	}
	return 1;
}

/* Whether schema s (of our making: one "type" per schema) fits strict
 * mode as it is: every object closed and every property required, only
 * the keywords strict mode takes (no minLength/maxLength), and objects at
 * most DESCRIBE_API_STRICT_DEPTH deep.  An optional parameter could be
 * spelled as a required nullable one, but the supervisor refuses null
 * (docs/params.md), so such a tool is simply not strict. */
static int describe_api_strict_ok(const cJSON *s, int depth)
{
	static const char *const obj[] = { "type", "properties", "required", "additionalProperties", "description",
					   NULL };
	static const char *const str[] = { "type", "enum", "pattern", "description", NULL };
	static const char *const num[] = { "type", "minimum", "maximum", "description", NULL };
	static const char *const arr[] = { "type", "items", "maxItems", "description", NULL };
	static const char *const other[] = { "type", "description", NULL };
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(s, "type"), *props, *req, *p;

	if (!cJSON_IsString(t))
		return 0;
	if (strcmp(t->valuestring, "string") == 0)
		return describe_api_keys_in(s, str);
	if (strcmp(t->valuestring, "integer") == 0 || strcmp(t->valuestring, "number") == 0)
		return describe_api_keys_in(s, num);
	if (strcmp(t->valuestring, "array") == 0)
		return describe_api_keys_in(s, arr) &&
		       describe_api_strict_ok(cJSON_GetObjectItemCaseSensitive(s, "items"), depth);
	if (strcmp(t->valuestring, "object") != 0)
		return describe_api_keys_in(s, other);
	props = cJSON_GetObjectItemCaseSensitive(s, "properties");
	req = cJSON_GetObjectItemCaseSensitive(s, "required");
	if (depth >= DESCRIBE_API_STRICT_DEPTH || !describe_api_keys_in(s, obj) ||
	    !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(s, "additionalProperties")) || !cJSON_IsObject(props) ||
	    !cJSON_IsArray(req) || cJSON_GetArraySize(req) != cJSON_GetArraySize(props))
		return 0;
	/* Names are unique in both, so equal counts and each required name a
	 * property mean the two sets are equal. */
	cJSON_ArrayForEach(p, req)
	{
		if (!cJSON_IsString(p) || cJSON_GetObjectItemCaseSensitive(props, p->valuestring) == NULL)
			return 0;
	}
	cJSON_ArrayForEach(p, props)
	{
		if (!describe_api_strict_ok(p, depth + 1))
			return 0;
	}
	return 1;
}

/* ---- one tool --------------------------------------------------------------- */

/* The stub's message_id argument, as the bridge takes it (docs/bridge.md:
 * 1 to 128 printable ASCII characters without space). */
static int describe_api_add_message_id(cJSON *params, const char *id, char *err, size_t errlen)
{
	cJSON *props = cJSON_GetObjectItemCaseSensitive(params, "properties");
	cJSON *req = cJSON_GetObjectItemCaseSensitive(params, "required");
	cJSON *m = NULL;

	if (!cJSON_IsObject(props) || !cJSON_IsArray(req)) {
		snprintf(err, errlen, "tool %s: its parameters are not an object schema", id);
		return -1;
	}
	if (cJSON_GetObjectItemCaseSensitive(props, "message_id") != NULL) {
		snprintf(err, errlen,
			 "tool %s: a side-effect tool with a parameter called message_id cannot take the message id as "
			 "an argument too",
			 id);
		return -1;
	}
	m = cJSON_AddObjectToObject(props, "message_id");
	if (m == NULL || cJSON_AddStringToObject(m, "type", "string") == NULL ||
	    cJSON_AddStringToObject(m, "pattern", "^[!-~]{1,128}$") == NULL ||
	    cJSON_AddStringToObject(m, "description",
				    "Names this one action, 1 to 128 printable ASCII characters without space: "
				    "calling again with the same message_id returns the first answer and does not act "
				    "again. Not a parameter of the tool: it becomes the request's message id.") == NULL ||
	    !cJSON_AddItemToArray(req, cJSON_CreateString("message_id"))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* MCP's hints, only those the policy can back.  No side effect: the
 * inventory declares the tool changes nothing (readOnlyHint).  A side
 * effect with replay: the same arguments, message_id among them, give the
 * recorded answer and do not act again (idempotentHint), within one
 * ledger and one (app, tenant, user).  Whether an effect destroys, and
 * whether the world is open, the policy does not say: those stay unset
 * (MCP's defaults, destructive and open, are the cautious reading). */
static cJSON *describe_api_annotations(const struct cpol_tool *t)
{
	cJSON *a = cJSON_CreateObject();

	if (a == NULL)
		return NULL;
	if (!(t->flags & CPOL_TOOL_F_SIDE_EFFECT)) {
		cJSON_AddBoolToObject(a, "readOnlyHint", 1);
		return a;
	}
	cJSON_AddBoolToObject(a, "readOnlyHint", 0);
	cJSON_AddBoolToObject(a, "idempotentHint", (t->flags & CPOL_TOOL_F_REPLAY) != 0);
	return a;
}

/* The envelope api puts around name, description and schema (params is
 * taken over, also on failure). */
static cJSON *describe_api_wrap(enum describe_api api, const struct cpol_tool *t, const char *name, const char *text,
				cJSON *params)
{
	cJSON *o = cJSON_CreateObject(), *fn = NULL;
	int strict;

	if (o == NULL) {
		cJSON_Delete(params);
		return NULL;
	}
	switch (api) {
	case DESCRIBE_API_OPENAI:
		strict = describe_api_strict_ok(params, 0);
		cJSON_AddStringToObject(o, "type", "function");
		fn = cJSON_AddObjectToObject(o, "function");
		if (fn == NULL)
			break;
		cJSON_AddStringToObject(fn, "name", name);
		cJSON_AddStringToObject(fn, "description", text);
		cJSON_AddItemToObject(fn, "parameters", params);
		params = NULL;
		/* Said either way: the Responses API takes strict as true
		 * when it is absent, Chat Completions as false. */
		cJSON_AddBoolToObject(fn, "strict", strict);
		break;
	case DESCRIBE_API_ANTHROPIC:
	case DESCRIBE_API_MCP:
		cJSON_AddStringToObject(o, "name", name);
		cJSON_AddStringToObject(o, "description", text);
		cJSON_AddItemToObject(o, api == DESCRIBE_API_MCP ? "inputSchema" : "input_schema", params);
		params = NULL;
		if (api == DESCRIBE_API_MCP)
			cJSON_AddItemToObject(o, "annotations", describe_api_annotations(t));
		break;
	}
	cJSON_Delete(params);
	return o;
}

static cJSON *describe_api_tool(const struct cpol_policy *p, const cJSON *def, enum describe_api api, char *err,
				size_t errlen)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(def, "id");
	const cJSON *text = cJSON_GetObjectItemCaseSensitive(def, "description");
	char name[DESCRIBE_API_NAME_MAX];
	const struct cpol_tool *t;
	cJSON *params = NULL, *ret = NULL;
	uint32_t ti;

	if (!cJSON_IsString(id) || !cJSON_IsString(text) ||
	    (ti = policy_find_tool(p, id->valuestring)) == CPOL_NONE) {
		snprintf(err, errlen, "a tool definition names no tool of the policy");
		goto out;
	}
	t = &p->tools[ti];
	if (describe_api_name(api, t->id, name, sizeof(name), err, errlen) != 0)
		goto out;
	params = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(def, "parameters"), 1);
	if (params == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if ((t->flags & CPOL_TOOL_F_SIDE_EFFECT) && describe_api_add_message_id(params, t->id, err, errlen) != 0)
		goto out;
	ret = describe_api_wrap(api, t, name, text->valuestring, params);
	params = NULL;
	if (ret == NULL)
		snprintf(err, errlen, "out of memory");
out:
	cJSON_Delete(params);
	return ret;
}

cJSON *describe_api_tools(const struct cpol_policy *p, const cJSON *defs, enum describe_api api, char *err,
			  size_t errlen)
{
	cJSON *arr = cJSON_CreateArray(), *ret = NULL, *o;
	const cJSON *def;

	if (arr == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	cJSON_ArrayForEach(def, defs)
	{
		if ((o = describe_api_tool(p, def, api, err, errlen)) == NULL)
			goto out;
		cJSON_AddItemToArray(arr, o);
	}
	ret = arr;
	arr = NULL;
out:
	cJSON_Delete(arr);
	return ret;
}
