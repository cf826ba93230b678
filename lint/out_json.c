/* SPDX-License-Identifier: Apache-2.0 */
/*
 * out_json.c - findings as one JSON document (schema "cordon-lint/1",
 * documented in docs/lint.md).  Keys are stable; new keys may be added,
 * existing ones keep their meaning.
 */
#include <cjson/cJSON.h>

#include "lint/out.h"

#ifndef CORDON_VERSION
#define CORDON_VERSION "0.0.0"
#endif

static cJSON *finding_json(const struct lint_finding *f)
{
	cJSON *o = cJSON_CreateObject();

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "rule", f->rule->id);
	cJSON_AddStringToObject(o, "name", f->rule->name);
	cJSON_AddStringToObject(o, "severity", lint_sev_name(f->sev));
	cJSON_AddStringToObject(o, "message", f->msg);
	cJSON_AddStringToObject(o, "hint", f->rule->hint);
	cJSON_AddStringToObject(o, "file", f->pos.file && f->pos.file->path ? f->pos.file->path : "");
	cJSON_AddNumberToObject(o, "line", f->pos.line);
	cJSON_AddNumberToObject(o, "column", f->pos.col);
	cJSON_AddNumberToObject(o, "end_line", f->pos.end_line);
	cJSON_AddNumberToObject(o, "end_column", f->pos.end_col);
	cJSON_AddStringToObject(o, "fingerprint", f->fingerprint);
	if (f->state == LINT_SUPPRESSED) {
		cJSON *s = cJSON_AddObjectToObject(o, "suppression");

		if (s != NULL) {
			cJSON_AddStringToObject(s, "reason", f->reason ? f->reason : "");
			if (f->until[0])
				cJSON_AddStringToObject(s, "until", f->until);
			else
				cJSON_AddNullToObject(s, "until");
			cJSON_AddNumberToObject(s, "line", f->supp_line);
		}
	}
	return o;
}

int lint_print_json(FILE *out, const struct lint_ctx *c, const struct lint_summary *s)
{
	cJSON *root = cJSON_CreateObject(), *tool, *sum, *lists[3], *inputs;
	static const char *const names[3] = { "findings", "suppressed", "baselined" };
	size_t i;
	if (root == NULL)
		return -1;
	cJSON_AddStringToObject(root, "schema", "cordon-lint/1");
	tool = cJSON_AddObjectToObject(root, "tool");
	if (tool != NULL) {
		cJSON_AddStringToObject(tool, "name", "cordonc");
		cJSON_AddStringToObject(tool, "version", CORDON_VERSION);
	}
	inputs = cJSON_AddArrayToObject(root, "inputs");
	if (inputs != NULL) {
		cJSON_AddItemToArray(inputs, cJSON_CreateString(c->app->path));
		for (i = 0; i < c->ntools; i++)
			cJSON_AddItemToArray(inputs, cJSON_CreateString(c->tools[i]->path));
	}
	cJSON_AddStringToObject(root, "fail_level", lint_sev_name(s->fail_level));
	cJSON_AddBoolToObject(root, "failed", s->failed);
	sum = cJSON_AddObjectToObject(root, "summary");
	if (sum != NULL) {
		cJSON_AddNumberToObject(sum, "error", (double)s->count[LINT_ERROR]);
		cJSON_AddNumberToObject(sum, "warning", (double)s->count[LINT_WARNING]);
		cJSON_AddNumberToObject(sum, "note", (double)s->count[LINT_NOTE]);
		cJSON_AddNumberToObject(sum, "suppressed", (double)s->suppressed);
		cJSON_AddNumberToObject(sum, "baselined", (double)s->baselined);
	}
	for (i = 0; i < 3; i++)
		lists[i] = cJSON_AddArrayToObject(root, names[i]);
	for (i = 0; i < c->n; i++) {
		const struct lint_finding *f = &c->v[i];
		cJSON *list = lists[f->state == LINT_SUPPRESSED ? 1 : f->state == LINT_BASELINED ? 2 : 0];
		cJSON *item = finding_json(f);

		if (item == NULL || list == NULL || !cJSON_AddItemToArray(list, item)) {
			cJSON_Delete(item);
			goto out;
		}
	}
	return lint_json_emit(out, root);
out:
	cJSON_Delete(root);
	return -1;
}

int lint_json_emit(FILE *out, struct cJSON *root)
{
	char *text = cJSON_Print(root);
	int rc = -1;

	if (text != NULL) {
		fprintf(out, "%s\n", text);
		rc = 0;
	}
	cJSON_free(text);
	cJSON_Delete(root);
	return rc;
}
