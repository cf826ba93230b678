/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_doc_tools.c - the agent's tools as function definitions with JSON
 * Schema 2020-12 parameters (agent_doc.h, agent_doc_tools_json()).
 *
 * The schema is the supervisor's signature check (docs/params.md) in JSON
 * Schema's words, as close as they go, and never looser where it can be
 * exact: every object closed with additionalProperties false, integers
 * held to +-2^53 (beyond it the check refuses whatever the bounds say).
 * Two rules JSON Schema counts differently are said in words beside the
 * keyword: a length bound counts UTF-8 bytes where minLength/maxLength
 * count characters.  What no keyword can say, the tool's constraints over
 * several parameters, goes into the description, decompiled from the
 * verified bytecode (constraint_text.h), so it is what is enforced.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/client/agent_doc.h"
#include "runtime/client/constraint_text.h"
#include "runtime/client/policy_json.h"
#include "runtime/client/textbuf.h"
#include "runtime/client/tool_doc.h"
#include "runtime/constraint_eval.h"

/* docs/params.md: an integer beyond 2^53 may already have been rounded by
 * the parser, so the check refuses it; the schema says the same. */
#define AGENT_DOC_INT_LIMIT INT64_C(9007199254740992)

static cJSON *agent_doc_schema_params(const struct cpol_policy *p, struct cpol_range r);

/* "3 to 254 bytes", "at most 254 bytes": a length bound as the check
 * counts it. */
static void agent_doc_length_words(struct textbuf *b, const struct cpol_param *prm)
{
	int lo = (prm->flags & CPOL_PRM_F_MIN_LENGTH) != 0, hi = (prm->flags & CPOL_PRM_F_MAX_LENGTH) != 0;

	if (lo && hi)
		textbuf_printf(b, "%" PRIu64 " to %" PRIu64, prm->min_length, prm->max_length);
	else if (lo)
		textbuf_printf(b, "at least %" PRIu64, prm->min_length);
	else
		textbuf_printf(b, "at most %" PRIu64, prm->max_length);
	textbuf_puts(b, " bytes of UTF-8 (the length is counted in bytes, not characters)");
}

static void agent_doc_schema_string(cJSON *o, const struct cpol_param *prm)
{
	struct textbuf b;

	if (prm->flags & CPOL_PRM_F_MIN_LENGTH)
		cJSON_AddItemToObject(o, "minLength", policy_json_u64(prm->min_length));
	if (prm->flags & CPOL_PRM_F_MAX_LENGTH)
		cJSON_AddItemToObject(o, "maxLength", policy_json_u64(prm->max_length));
	if (prm->enums.n > 0)
		cJSON_AddItemToObject(o, "enum", policy_json_strs(&prm->enums));
	if (!(prm->flags & (CPOL_PRM_F_MIN_LENGTH | CPOL_PRM_F_MAX_LENGTH)))
		return;
	textbuf_init(&b);
	agent_doc_length_words(&b, prm);
	if (!b.oom)
		cJSON_AddStringToObject(o, "description", b.s);
	textbuf_free(&b);
}

static void agent_doc_schema_integer(cJSON *o, const struct cpol_param *prm)
{
	int64_t lo = -AGENT_DOC_INT_LIMIT, hi = AGENT_DOC_INT_LIMIT;

	if ((prm->flags & CPOL_PRM_F_MIN) && prm->imin > lo)
		lo = prm->imin;
	if ((prm->flags & CPOL_PRM_F_MAX) && prm->imax < hi)
		hi = prm->imax;
	cJSON_AddItemToObject(o, "minimum", policy_json_i64(lo));
	cJSON_AddItemToObject(o, "maximum", policy_json_i64(hi));
}

/* One parameter's schema.  Recursion is as deep as the signature, which
 * the loader bounds (CPOL_MAX_PARAM_DEPTH). */
static cJSON *agent_doc_schema_param(const struct cpol_policy *p, const struct cpol_param *prm)
{
	cJSON *o = cJSON_CreateObject();

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "type", policy_type_name(prm->type));
	switch (prm->type) {
	case CPOL_T_STRING:
		agent_doc_schema_string(o, prm);
		break;
	case CPOL_T_INTEGER:
		agent_doc_schema_integer(o, prm);
		break;
	case CPOL_T_NUMBER:
		if (prm->flags & CPOL_PRM_F_MIN)
			cJSON_AddNumberToObject(o, "minimum", prm->fmin);
		if (prm->flags & CPOL_PRM_F_MAX)
			cJSON_AddNumberToObject(o, "maximum", prm->fmax);
		break;
	case CPOL_T_ARRAY:
		if (prm->items < p->nparams)
			cJSON_AddItemToObject(o, "items", agent_doc_schema_param(p, &p->params[prm->items]));
		if (prm->flags & CPOL_PRM_F_MAX_ITEMS)
			cJSON_AddItemToObject(o, "maxItems", policy_json_u64(prm->max_items));
		break;
	case CPOL_T_OBJECT:
		cJSON_Delete(o);
		return agent_doc_schema_params(p, prm->props);
	default:
		break;
	}
	return o;
}

/* An object schema of the run r: its properties, the required ones, and
 * nothing else (the check refuses an undeclared name at any level). */
static cJSON *agent_doc_schema_params(const struct cpol_policy *p, struct cpol_range r)
{
	cJSON *o = cJSON_CreateObject(), *props, *req;

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "type", "object");
	props = cJSON_AddObjectToObject(o, "properties");
	req = cJSON_AddArrayToObject(o, "required");
	for (uint32_t i = 0; props != NULL && req != NULL && i < r.count && r.first + i < p->nparams; i++) {
		const struct cpol_param *prm = &p->params[r.first + i];

		cJSON_AddItemToObject(props, prm->name, agent_doc_schema_param(p, prm));
		if (prm->flags & CPOL_PRM_F_REQUIRED)
			cJSON_AddItemToArray(req, cJSON_CreateString(prm->name));
	}
	cJSON_AddBoolToObject(o, "additionalProperties", 0);
	return o;
}

/* The tool's description, then in words what the schema cannot carry. */
static char *agent_doc_tool_text(const struct cpol_policy *p, uint32_t ti)
{
	const struct cpol_tool *t = &p->tools[ti];
	uint32_t nc = constraint_count(p, ti);
	struct textbuf b, budget;

	textbuf_init(&b);
	textbuf_puts(&b, t->description);
	if (nc > 0) {
		textbuf_puts(&b, b.n ? "\n\n" : "");
		textbuf_puts(&b, "Every call must satisfy all of these constraints, else it is refused (ToolDenied):");
	}
	for (uint32_t k = 0; k < nc; k++) {
		char err[256];
		char *text = constraint_text(p, ti, k, err, sizeof(err));

		if (text == NULL)
			textbuf_printf(&b, "\n- (constraint %u cannot be shown as text: %s; it is enforced all the same)", k,
				       err);
		else
			textbuf_printf(&b, "\n- %s", text);
		free(text);
	}
	if (t->flags & CPOL_TOOL_F_SIDE_EFFECT)
		textbuf_printf(&b, "%sSide effect: each call needs a message_id, a string you choose that names this one "
				 "action; calling again with the same message_id returns the first answer and does not "
				 "act again.", b.n ? "\n\n" : "");
	textbuf_init(&budget);
	tool_doc_budget(&budget, t);
	if (budget.n > 0)
		textbuf_printf(&b, "%sBudget: %s (then BudgetExceeded).", b.n ? "\n\n" : "", budget.s);
	if (budget.oom)
		b.oom = 1;
	textbuf_free(&budget);
	return textbuf_take(&b, NULL);
}

static int agent_doc_name_taken(const cJSON *arr, const char *name)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, arr)
	{
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "name");

		if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0)
			return 1;
	}
	return 0;
}

/* "<ns>_<action>": the id with '.' as '_', and any byte a function name
 * may not hold ([A-Za-z0-9_-]) as '_' too; the compiler's ids need no
 * other change.  Distinct ids can still meet ("a_b.c", "a.b_c"): a later
 * one then gets "_2", "_3", ... so names stay unique within the array. */
static cJSON *agent_doc_tool_name(const cJSON *arr, const char *id)
{
	struct textbuf b;
	cJSON *name = NULL;
	char *base = NULL;

	textbuf_init(&b);
	for (const char *c = id; *c; c++) {
		int ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-';

		textbuf_putc(&b, ok ? *c : '_');
	}
	base = textbuf_take(&b, NULL);
	if (base == NULL)
		goto out;
	textbuf_puts(&b, base);
	/* At most one suffix per name already in the array: this ends. */
	for (unsigned k = 2; !b.oom && agent_doc_name_taken(arr, b.n ? b.s : ""); k++) {
		textbuf_free(&b);
		textbuf_init(&b);
		textbuf_printf(&b, "%s_%u", base, k);
	}
	if (!b.oom)
		name = cJSON_CreateString(b.n ? b.s : "");
out:
	textbuf_free(&b);
	free(base);
	return name;
}

cJSON *agent_doc_tools_json(const struct cpol_policy *p, const char *agent)
{
	uint32_t *tools = NULL, n = 0;
	char err[256];
	cJSON *arr = NULL, *ret = NULL;

	if (agent_doc_select(p, agent, &tools, &n, err, sizeof(err)) != 0)
		goto out;
	arr = cJSON_CreateArray();
	if (arr == NULL)
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		const struct cpol_tool *t;
		cJSON *o, *name, *params;
		char *text;

		if (tools[i] >= p->ntools)
			continue;
		t = &p->tools[tools[i]];
		o = cJSON_CreateObject();
		if (o == NULL)
			goto out;
		cJSON_AddItemToArray(arr, o);
		name = agent_doc_tool_name(arr, t->id);
		text = agent_doc_tool_text(p, tools[i]);
		params = agent_doc_schema_params(p, t->params);
		if (name == NULL || text == NULL || params == NULL) {
			cJSON_Delete(name);
			cJSON_Delete(params);
			free(text);
			goto out;
		}
		cJSON_AddItemToObject(o, "name", name);
		cJSON_AddStringToObject(o, "id", t->id);
		cJSON_AddStringToObject(o, "description", text);
		cJSON_AddItemToObject(o, "parameters", params);
		/* Not a function-calling field: what the answer will be, in the
		 * same schema language, for a model that plans with it. */
		if (policy_tool_returns(p, tools[i]) != NULL)
			cJSON_AddItemToObject(o, "returns", agent_doc_schema_param(p, policy_tool_returns(p, tools[i])));
		free(text);
	}
	ret = arr;
	arr = NULL;
out:
	cJSON_Delete(arr);
	free(tools);
	return ret;
}
