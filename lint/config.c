/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config.c - find, read and check `.cordonlint.yaml`; see config.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compiler/schema.h"
#include "lint/config.h"

const char *const lint_format_names[] = { "text", "json", "sarif", "junit", "github", "gitlab", "checkstyle", NULL };

static const char *const config_keys[] = { "rules", "ignore", "fail-level", "baseline", "format",
					   "inline-suppressions", NULL };
/* Index + LINT_OFF is the severity. */
static const char *const levels[] = { "off", "note", "warning", "error", NULL };
static const char *const fail_levels[] = { "note", "warning", "error", NULL };

static int exists(const char *dir, const char *name, int want_reg)
{
	char p[PATH_MAX];
	struct stat st;

	if ((size_t)snprintf(p, sizeof(p), "%s/%s", strcmp(dir, "/") ? dir : "", name) >= sizeof(p))
		return 0;
	if (stat(p, &st) != 0)
		return 0;
	return want_reg ? S_ISREG(st.st_mode) : 1;
}

int lint_config_find(char **path, char *err, size_t errlen)
{
	char *dir = getcwd(NULL, 0), *slash;
	int rc = 0;

	*path = NULL;
	if (dir == NULL) {
		snprintf(err, errlen, "cannot read the working directory: %s", strerror(errno));
		return -1;
	}
	for (;;) {
		if (exists(dir, LINT_CONFIG_NAME, 1)) {
			if (asprintf(path, "%s/%s", strcmp(dir, "/") ? dir : "", LINT_CONFIG_NAME) < 0) {
				*path = NULL;
				snprintf(err, errlen, "out of memory");
				rc = -1;
			} else {
				rc = 1;
			}
			break;
		}
		/* .git is a directory in a clone, a file in a worktree or a
		 * submodule: either marks the top of the repository. */
		if (exists(dir, ".git", 0) || strcmp(dir, "/") == 0)
			break;
		slash = strrchr(dir, '/');
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	free(dir);
	return rc;
}

static char *dir_of(const char *path)
{
	char *abs = realpath(path, NULL), *slash;

	if (abs == NULL)
		return NULL;
	slash = strrchr(abs, '/');
	if (slash == abs)
		slash[1] = '\0';
	else if (slash != NULL)
		*slash = '\0';
	return abs;
}

static int load_rules(struct schema_ctx *sc, struct lint_config *cfg, const struct ynode *n)
{
	size_t i;
	int rc = 0;

	if (n->kind != YN_MAP) {
		schema_error(sc, n, "rules: expected a mapping of rule id or name to a level, got %s", schema_got(n));
		return -1;
	}
	for (i = 0; i < n->n; i++) {
		const struct ynode *key = n->keys[i];
		const struct lint_rule *r = lint_rule_find(key->str);
		const struct ynode *v;
		uint32_t lv;
		char path[SCHEMA_PATH_MAX];

		if (r == NULL) {
			const char *near = lint_rule_suggest(key->str);

			schema_error(sc, key, "rules: unknown rule '%s'%s%s%s", key->str, near ? "; did you mean '" : "",
				     near ? near : "", near ? "'?" : "");
			rc = -1;
			continue;
		}
		schema_path(path, sizeof(path), "rules.%s", key->str);
		/* Plain `off` reads as a boolean to the loader (YAML 1.1's
		 * words); here it can only mean the level. */
		v = n->vals[i];
		if (v->kind == YN_SCALAR && v->plain && strcmp(v->str, "off") == 0)
			lv = 0;
		else if (schema_enum(sc, v, path, levels, &lv) != 0) {
			rc = -1;
			continue;
		}
		if (cfg->nov == LINT_CONFIG_MAX_RULES) {
			schema_error(sc, key, "rules: more than %d entries", LINT_CONFIG_MAX_RULES);
			return -1;
		}
		cfg->ov[cfg->nov].id = r->id;
		cfg->ov[cfg->nov++].sev = (enum lint_sev)((int)lv + LINT_OFF);
	}
	return rc;
}

static int load_ignore(struct schema_ctx *sc, struct lint_config *cfg, const struct ynode *n)
{
	size_t i;
	int rc = 0;

	if (schema_seq(sc, n, "ignore") != 0)
		return -1;
	for (i = 0; i < n->n; i++) {
		const char *g;

		if (schema_string(sc, n->vals[i], "ignore[]", 1, PATH_MAX, &g) != 0) {
			rc = -1;
			continue;
		}
		if (cfg->nignore == LINT_CONFIG_MAX_IGNORE) {
			schema_error(sc, n->vals[i], "ignore: more than %d globs", LINT_CONFIG_MAX_IGNORE);
			return -1;
		}
		cfg->ignore[cfg->nignore++] = g;
	}
	return rc;
}

int lint_config_load(struct lint_config *cfg, const char *path, struct diags *d)
{
	struct schema_ctx sc;
	const struct ynode *root, *v;
	const char *s;
	uint32_t ix;
	bool b;
	int rc = -1;

	memset(cfg, 0, sizeof(*cfg));
	cfg->fail_level = -1;
	cfg->inline_suppressions = -1;
	if (src_read(path, YDOC_MAX_BYTES, &cfg->src, d) != 0)
		goto out;
	if ((cfg->dir = dir_of(path)) == NULL) {
		diag_at(d, DIAG_ERROR, &cfg->src, 0, 0, "cannot resolve its directory: %s", strerror(errno));
		goto out;
	}
	if (ydoc_parse(&cfg->src, &cfg->doc, d) != 0)
		goto out;
	root = cfg->doc.root;
	if (root == NULL) { /* an empty file: no settings */
		rc = 0;
		goto out;
	}
	memset(&sc, 0, sizeof(sc));
	sc.d = d;
	sc.f = &cfg->src;
	sc.a = &cfg->doc.arena;
	rc = schema_map(&sc, root, "config", config_keys);
	if (root->kind != YN_MAP)
		goto out;
	if ((v = ymap_get(root, "rules")) != NULL && load_rules(&sc, cfg, v) != 0)
		rc = -1;
	if ((v = ymap_get(root, "ignore")) != NULL && load_ignore(&sc, cfg, v) != 0)
		rc = -1;
	if ((v = ymap_get(root, "fail-level")) != NULL) {
		if (schema_enum(&sc, v, "fail-level", fail_levels, &ix) == 0)
			cfg->fail_level = (int)ix + LINT_NOTE;
		else
			rc = -1;
	}
	if ((v = ymap_get(root, "format")) != NULL) {
		if (schema_enum(&sc, v, "format", lint_format_names, &ix) == 0)
			cfg->format = lint_format_names[ix];
		else
			rc = -1;
	}
	if ((v = ymap_get(root, "inline-suppressions")) != NULL) {
		if (schema_bool(&sc, v, "inline-suppressions", &b) == 0)
			cfg->inline_suppressions = b;
		else
			rc = -1;
	}
	if ((v = ymap_get(root, "baseline")) != NULL) {
		if (schema_string(&sc, v, "baseline", 1, PATH_MAX, &s) != 0) {
			rc = -1;
		} else if (asprintf(&cfg->baseline, "%s%s%s", s[0] == '/' ? "" : cfg->dir,
				    s[0] == '/' || strcmp(cfg->dir, "/") == 0 ? "" : "/", s) < 0) {
			cfg->baseline = NULL;
			diag_at(d, DIAG_ERROR, &cfg->src, 0, 0, "out of memory");
			rc = -1;
		}
	}
out:
	return rc;
}

void lint_config_free(struct lint_config *cfg)
{
	ydoc_free(&cfg->doc);
	src_free(&cfg->src);
	free(cfg->dir);
	free(cfg->baseline);
	memset(cfg, 0, sizeof(*cfg));
}
