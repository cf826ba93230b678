/* SPDX-License-Identifier: Apache-2.0 */
/*
 * out_gitlab.c - findings as a GitLab Code Quality report (a subset of the
 * Code Climate issue format), the file a job names under
 * artifacts:reports:codequality; GitLab shows the issues in the merge
 * request widget and on the diff.  An array of
 *
 *     { "type": "issue", "check_name": "CDN303", "description": "...",
 *       "categories": ["Security"], "severity": "critical",
 *       "fingerprint": "...", "content": { "body": hint },
 *       "location": { "path": "app.yaml", "lines": { "begin": 22, "end": 22 } } }
 *
 * Severity: error is critical, warning major, note info.  GitLab matches
 * issues between the base and the head of a merge request by fingerprint:
 * it is the lint fingerprint (rule, file name, subject; never the line),
 * so moving a finding does not make it "new".  Paths are as given on the
 * command line, without "./": run lint from the repository root.  Only
 * active findings are written; an empty array is a clean report.
 */
#include <cjson/cJSON.h>

#include "lint/out.h"

static const char *severity(enum lint_sev s)
{
	return s == LINT_ERROR ? "critical" : s == LINT_WARNING ? "major" : "info";
}

static cJSON *issue_json(const struct lint_finding *f)
{
	cJSON *o = cJSON_CreateObject(), *cats, *content, *loc, *lines;
	char *desc = NULL;

	if (o == NULL || asprintf(&desc, "%s [%s]", f->msg, f->rule->id) < 0) {
		cJSON_Delete(o);
		return NULL;
	}
	cJSON_AddStringToObject(o, "type", "issue");
	cJSON_AddStringToObject(o, "check_name", f->rule->id);
	cJSON_AddStringToObject(o, "description", desc);
	free(desc);
	if ((cats = cJSON_AddArrayToObject(o, "categories")) != NULL)
		cJSON_AddItemToArray(cats, cJSON_CreateString("Security"));
	cJSON_AddStringToObject(o, "severity", severity(f->sev));
	cJSON_AddStringToObject(o, "fingerprint", f->fingerprint);
	if ((content = cJSON_AddObjectToObject(o, "content")) != NULL)
		cJSON_AddStringToObject(content, "body", f->rule->hint);
	if ((loc = cJSON_AddObjectToObject(o, "location")) != NULL) {
		cJSON_AddStringToObject(loc, "path", lint_finding_path(f));
		if ((lines = cJSON_AddObjectToObject(loc, "lines")) != NULL) {
			cJSON_AddNumberToObject(lines, "begin", f->pos.line);
			cJSON_AddNumberToObject(lines, "end", f->pos.end_line ? f->pos.end_line : f->pos.line);
		}
	}
	return o;
}

int lint_print_gitlab(FILE *out, const struct lint_ctx *c, const struct lint_summary *s)
{
	cJSON *root = cJSON_CreateArray();
	size_t i;

	(void)s;
	if (root == NULL)
		return -1;
	for (i = 0; i < c->n; i++) {
		cJSON *item;

		if (c->v[i].state != LINT_ACTIVE)
			continue;
		item = issue_json(&c->v[i]);
		if (item == NULL || !cJSON_AddItemToArray(root, item)) {
			cJSON_Delete(item);
			cJSON_Delete(root);
			return -1;
		}
	}
	return lint_json_emit(out, root);
}
