/* SPDX-License-Identifier: Apache-2.0 */
/*
 * out_sarif.c - findings as SARIF 2.1.0, the shape GitHub code scanning
 * uploads: every rule of the catalogue in tool.driver.rules (id, name,
 * short and full description, help, default level, security-severity),
 * one result a finding with a region (start and end, code-point columns)
 * and partialFingerprints, and a results array even when it is empty.
 * Relative artifact URIs name %SRCROOT%, which originalUriBaseIds sets to
 * the working directory.
 * Suppressed findings stay in with an inSource suppression carrying the
 * reason; baselined ones are left out, the others marked "new" when a
 * baseline was given.  tests/cli/test_lint.sh validates the output against
 * the OASIS schema.
 */
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "lint/out.h"

#ifndef CORDON_VERSION
#define CORDON_VERSION "0.0.0"
#endif

#define SRCROOT "%SRCROOT%"
#define SARIF_SCHEMA "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

static const char *level(enum lint_sev s)
{
	return s == LINT_ERROR ? "error" : s == LINT_WARNING ? "warning" : "note";
}

/* A path as a URI reference: relative paths stay relative (to the
 * checkout, which is what code scanning expects), absolute ones become
 * file:// URIs; every byte outside RFC 3986's unreserved set and '/' is
 * percent-encoded.  Malloc'd, or NULL. */
static char *path_uri(const char *path)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(path), i, o = 0;
	char *u;

	while (path[0] == '.' && path[1] == '/')
		path += 2;
	u = malloc(3 * n + 8);
	if (u == NULL)
		return NULL;
	if (path[0] == '/') {
		memcpy(u, "file://", 7);
		o = 7;
	}
	for (i = 0; path[i] != '\0'; i++) {
		unsigned char ch = (unsigned char)path[i];

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' ||
		    ch == '.' || ch == '_' || ch == '~' || ch == '/') {
			u[o++] = (char)ch;
		} else {
			u[o++] = '%';
			u[o++] = hex[ch >> 4];
			u[o++] = hex[ch & 15];
		}
	}
	u[o] = '\0';
	return u;
}

/* run.originalUriBaseIds: %SRCROOT% is the working directory, as an
 * absolute file URI ending in '/' (SARIF 3.14.14).  GitHub resolves the
 * relative URIs against the checkout; other readers learn the base here.
 * 0, or -1 when memory ran out.  A working directory that cannot be read
 * leaves the base out (it is optional). */
static int add_srcroot(cJSON *run)
{
	char *cwd = getcwd(NULL, 0), *dir = NULL, *uri = NULL;
	cJSON *bases, *base;
	int rc = 0;

	if (cwd == NULL || cwd[0] != '/')
		goto out;
	rc = -1;
	if (asprintf(&dir, "%s%s", cwd, strcmp(cwd, "/") == 0 ? "" : "/") < 0) {
		dir = NULL;
		goto out;
	}
	if ((uri = path_uri(dir)) == NULL || (bases = cJSON_AddObjectToObject(run, "originalUriBaseIds")) == NULL ||
	    (base = cJSON_AddObjectToObject(bases, SRCROOT)) == NULL ||
	    cJSON_AddStringToObject(base, "uri", uri) == NULL)
		goto out;
	rc = 0;
out:
	free(uri);
	free(dir);
	free(cwd);
	return rc;
}

static cJSON *text_obj(const char *text)
{
	cJSON *o = cJSON_CreateObject();

	if (o != NULL)
		cJSON_AddStringToObject(o, "text", text);
	return o;
}

static cJSON *rule_json(const struct lint_rule *r)
{
	cJSON *o = cJSON_CreateObject(), *help, *cfg, *props, *tags;
	char *md = NULL, *full = NULL;

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "id", r->id);
	cJSON_AddStringToObject(o, "name", r->name);
	cJSON_AddItemToObject(o, "shortDescription", text_obj(r->title));
	if (asprintf(&full, "%s %s", r->explain, r->rationale) < 0)
		full = NULL;
	cJSON_AddItemToObject(o, "fullDescription", text_obj(full ? full : r->explain));
	help = text_obj(r->hint);
	if (help != NULL && asprintf(&md, "%s\n\n**Why it matters.** %s\n\n**How to fix.** %s", r->explain,
				     r->rationale, r->hint) >= 0)
		cJSON_AddStringToObject(help, "markdown", md);
	cJSON_AddItemToObject(o, "help", help);
	cfg = cJSON_AddObjectToObject(o, "defaultConfiguration");
	if (cfg != NULL)
		cJSON_AddStringToObject(cfg, "level", level(r->sev));
	props = cJSON_AddObjectToObject(o, "properties");
	if (props != NULL) {
		cJSON_AddStringToObject(props, "security-severity", r->security_severity);
		cJSON_AddStringToObject(props, "precision", "high");
		tags = cJSON_AddArrayToObject(props, "tags");
		if (tags != NULL)
			cJSON_AddItemToArray(tags, cJSON_CreateString("security"));
	}
	free(md);
	free(full);
	return o;
}

static cJSON *result_json(const struct lint_finding *f, size_t rule_index, int baseline_used)
{
	cJSON *o = cJSON_CreateObject(), *locs, *loc, *phys, *art, *region, *fp;
	char *uri;

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "ruleId", f->rule->id);
	cJSON_AddNumberToObject(o, "ruleIndex", (double)rule_index);
	cJSON_AddStringToObject(o, "level", level(f->sev));
	cJSON_AddItemToObject(o, "message", text_obj(f->msg));
	locs = cJSON_AddArrayToObject(o, "locations");
	loc = cJSON_CreateObject();
	cJSON_AddItemToArray(locs, loc);
	phys = cJSON_AddObjectToObject(loc, "physicalLocation");
	art = cJSON_AddObjectToObject(phys, "artifactLocation");
	uri = path_uri(f->pos.file && f->pos.file->path ? f->pos.file->path : "unknown");
	cJSON_AddStringToObject(art, "uri", uri ? uri : "unknown");
	/* A relative reference is relative to where lint ran, which the run
	 * names in originalUriBaseIds. */
	if (uri == NULL || strncmp(uri, "file://", 7) != 0)
		cJSON_AddStringToObject(art, "uriBaseId", SRCROOT);
	free(uri);
	region = cJSON_AddObjectToObject(phys, "region");
	cJSON_AddNumberToObject(region, "startLine", f->pos.line);
	cJSON_AddNumberToObject(region, "startColumn", f->pos.col);
	cJSON_AddNumberToObject(region, "endLine", f->pos.end_line);
	cJSON_AddNumberToObject(region, "endColumn", f->pos.end_col);
	fp = cJSON_AddObjectToObject(o, "partialFingerprints");
	cJSON_AddStringToObject(fp, "cordonFingerprint/v1", f->fingerprint);
	if (f->state == LINT_SUPPRESSED) {
		cJSON *sups = cJSON_AddArrayToObject(o, "suppressions"), *s = cJSON_CreateObject();

		cJSON_AddStringToObject(s, "kind", "inSource");
		cJSON_AddStringToObject(s, "status", "accepted");
		cJSON_AddStringToObject(s, "justification", f->reason ? f->reason : "");
		cJSON_AddItemToArray(sups, s);
	}
	if (baseline_used)
		cJSON_AddStringToObject(o, "baselineState", "new");
	return o;
}

int lint_print_sarif(FILE *out, const struct lint_ctx *c, const struct lint_summary *s)
{
	cJSON *root = cJSON_CreateObject(), *runs, *run, *tool, *driver, *rules, *results;
	const struct lint_rule *cat;
	size_t ncat, i;
	if (root == NULL)
		return -1;
	cJSON_AddStringToObject(root, "$schema", SARIF_SCHEMA);
	cJSON_AddStringToObject(root, "version", "2.1.0");
	runs = cJSON_AddArrayToObject(root, "runs");
	run = cJSON_CreateObject();
	if (runs == NULL || run == NULL || !cJSON_AddItemToArray(runs, run)) {
		cJSON_Delete(run);
		goto out;
	}
	tool = cJSON_AddObjectToObject(run, "tool");
	driver = cJSON_AddObjectToObject(tool, "driver");
	cJSON_AddStringToObject(driver, "name", "cordonc");
	cJSON_AddStringToObject(driver, "semanticVersion", CORDON_VERSION);
	/* Which rules a rule id meant: compiled blobs record the same number. */
	cJSON_AddStringToObject(cJSON_AddObjectToObject(driver, "properties"), "catalogueVersion",
				lint_catalogue_version());
	rules = cJSON_AddArrayToObject(driver, "rules");
	cat = lint_catalogue(&ncat);
	for (i = 0; i < ncat; i++)
		cJSON_AddItemToArray(rules, rule_json(&cat[i]));
	if (add_srcroot(run) != 0)
		goto out;
	cJSON_AddStringToObject(run, "columnKind", "unicodeCodePoints");
	results = cJSON_AddArrayToObject(run, "results");
	if (results == NULL)
		goto out;
	for (i = 0; i < c->n; i++) {
		const struct lint_finding *f = &c->v[i];

		if (f->state == LINT_BASELINED)
			continue;
		if (!cJSON_AddItemToArray(results, result_json(f, (size_t)(f->rule - cat), s->baseline_used)))
			goto out;
	}
	return lint_json_emit(out, root);
out:
	cJSON_Delete(root);
	return -1;
}
