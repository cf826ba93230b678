/* SPDX-License-Identifier: Apache-2.0 */
/*
 * baseline.c - known findings kept aside, so CI fails only on new ones.
 *
 * A baseline is a JSON file (schema "cordon-lint-baseline/1") listing
 * findings by rule and fingerprint; the file, line and message are there
 * for the person who reads it, not for matching.  Matching is by (rule,
 * fingerprint) and counts: two identical entries absorb two findings.
 * Since a fingerprint leaves the line out, a baseline survives edits that
 * move lines; a finding whose subject changes (another mount path, a
 * renamed variable) is new.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "compiler/sign.h"
#include "lint/baseline.h"

#define BASELINE_MAX_BYTES (16u << 20)

int lint_baseline_write(const char *path, const struct lint_ctx *c, size_t *written, char *err, size_t n)
{
	cJSON *root = cJSON_CreateObject(), *list;
	char *text = NULL;
	size_t i, count = 0;
	int rc = -1;

	if (root == NULL)
		goto oom;
	cJSON_AddStringToObject(root, "schema", "cordon-lint-baseline/1");
	list = cJSON_AddArrayToObject(root, "findings");
	if (list == NULL)
		goto oom;
	for (i = 0; i < c->n; i++) {
		const struct lint_finding *f = &c->v[i];
		cJSON *o;

		if (f->state == LINT_SUPPRESSED)
			continue;
		o = cJSON_CreateObject();
		if (o == NULL || !cJSON_AddItemToArray(list, o)) {
			cJSON_Delete(o);
			goto oom;
		}
		cJSON_AddStringToObject(o, "rule", f->rule->id);
		cJSON_AddStringToObject(o, "fingerprint", f->fingerprint);
		cJSON_AddStringToObject(o, "file", f->pos.file && f->pos.file->path ? f->pos.file->path : "");
		cJSON_AddNumberToObject(o, "line", f->pos.line);
		cJSON_AddStringToObject(o, "message", f->msg);
		count++;
	}
	text = cJSON_Print(root);
	if (text == NULL)
		goto oom;
	if (outfile_write_atomic(path, (const uint8_t *)text, strlen(text), 0644, err, n) != 0)
		goto out;
	*written = count;
	rc = 0;
	goto out;
oom:
	snprintf(err, n, "out of memory writing the baseline");
out:
	cJSON_free(text);
	cJSON_Delete(root);
	return rc;
}

/* One baseline entry, for matching. */
struct base_ent {
	const char *rule, *fp;
};

static int base_ent_cmp(const void *a, const void *b)
{
	const struct base_ent *x = a, *y = b;
	int k = strcmp(x->rule, y->rule);

	return k != 0 ? k : strcmp(x->fp, y->fp);
}

int lint_baseline_apply(const char *path, struct lint_ctx *c, char *err, size_t n)
{
	uint8_t *buf = NULL;
	size_t len = 0, i, j, nent;
	cJSON *root = NULL, *list, *e;
	struct base_ent *ents = NULL;
	size_t *taken = NULL;
	int rc = -1;

	if (file_read_all(path, BASELINE_MAX_BYTES, &buf, &len, err, n) != 0)
		return -1;
	root = cJSON_ParseWithLength((const char *)buf, len);
	if (root == NULL || !cJSON_IsObject(root)) {
		snprintf(err, n, "%s: not a JSON baseline", path);
		goto out;
	}
	e = cJSON_GetObjectItemCaseSensitive(root, "schema");
	list = cJSON_GetObjectItemCaseSensitive(root, "findings");
	if (!cJSON_IsString(e) || strcmp(e->valuestring, "cordon-lint-baseline/1") != 0 || !cJSON_IsArray(list)) {
		snprintf(err, n, "%s: not a cordon lint baseline (schema cordon-lint-baseline/1 with a findings array)",
			 path);
		goto out;
	}
	nent = (size_t)cJSON_GetArraySize(list);
	ents = calloc(nent ? nent : 1, sizeof(*ents));
	taken = calloc(nent ? nent : 1, sizeof(*taken));
	if (ents == NULL || taken == NULL) {
		snprintf(err, n, "out of memory reading the baseline");
		goto out;
	}
	/* Entries are checked before any is used: a half-valid file must not
	 * silence half the findings. */
	j = 0;
	cJSON_ArrayForEach(e, list)
	{
		cJSON *r = cJSON_GetObjectItemCaseSensitive(e, "rule"), *f = cJSON_GetObjectItemCaseSensitive(e, "fingerprint");

		if (!cJSON_IsString(r) || !cJSON_IsString(f)) {
			snprintf(err, n, "%s: entry %zu has no rule or fingerprint string", path, j);
			goto out;
		}
		ents[j].rule = r->valuestring;
		ents[j].fp = f->valuestring;
		j++;
	}
	/* Sorted, equal entries side by side: a finding takes the next
	 * untaken one of its run (taken[] counts them at the run's first
	 * entry), found by binary search instead of a scan of the file per
	 * finding. */
	qsort(ents, nent, sizeof(*ents), base_ent_cmp);
	for (i = 0; i < c->n; i++) {
		struct lint_finding *f = &c->v[i];
		struct base_ent key = { f->rule->id, f->fingerprint };
		size_t lo = 0, hi = nent;

		if (f->state != LINT_ACTIVE)
			continue;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (base_ent_cmp(&ents[mid], &key) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < nent && lo + taken[lo] < nent && base_ent_cmp(&ents[lo + taken[lo]], &key) == 0) {
			taken[lo]++;
			f->state = LINT_BASELINED;
		}
	}
	rc = 0;
out:
	free(ents);
	free(taken);
	cJSON_Delete(root);
	free(buf);
	return rc;
}
