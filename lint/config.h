/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config.h - `.cordonlint.yaml`, the repository's settings for `cordonc
 * lint` (docs/lint.md, "Configuration file").
 *
 * The file is YAML read with the compiler's loader (marks, no anchors or
 * tags) and checked with its schema helpers, so a bad key or value gets
 * file:line:col, a caret and a "did you mean" like any descriptor error.
 * Every setting is also a flag; lint/cli.c lets the flag win.
 */
#ifndef CORDON_LINT_CONFIG_H
#define CORDON_LINT_CONFIG_H

#include <stddef.h>

#include "compiler/diag.h"
#include "compiler/yaml_doc.h"
#include "lint/lint.h"

#define LINT_CONFIG_NAME ".cordonlint.yaml"
#define LINT_CONFIG_MAX_RULES 128
#define LINT_CONFIG_MAX_IGNORE 64

struct lint_config {
	struct src_file src;  /* the file's text: diagnostics quote it */
	struct ydoc doc;      /* owns the strings below that are not malloc'd */
	char *dir;            /* the file's directory (absolute, malloc'd) */
	/* Settings; NULL / -1 / 0 counts when the file leaves them out. */
	const char *format;
	int fail_level;       /* an enum lint_sev, or -1 */
	char *baseline;       /* resolved against dir, malloc'd */
	int inline_suppressions; /* 1, 0, or -1 */
	struct lint_override ov[LINT_CONFIG_MAX_RULES];
	size_t nov;
	const char *ignore[LINT_CONFIG_MAX_IGNORE];
	size_t nignore;
};

/*
 * Look for LINT_CONFIG_NAME in the working directory and each parent,
 * stopping after the first directory that holds `.git` (the repository's
 * root: a config above it belongs to something else) or at "/".  Returns
 * 1 with *path malloc'd when found, 0 when there is none, -1 with err set
 * when the working directory cannot be read.
 */
int lint_config_find(char **path, char *err, size_t errlen);

/* Read and check path into cfg.  0, or -1 with the reasons in d (printed
 * with diags_print() before lint_config_free()).  Always call
 * lint_config_free(). */
int lint_config_load(struct lint_config *cfg, const char *path, struct diags *d);
void lint_config_free(struct lint_config *cfg);

/* The output formats, NULL-terminated (the config and --format share it). */
extern const char *const lint_format_names[];

/*
 * Drop the findings whose file matches one of globs[] (fnmatch(3), '*'
 * crossing '/'): a glob is tried on the path as given (without "./") and,
 * when the file lies below base_dir, on its path relative to base_dir.
 * Returns how many findings were dropped.
 */
size_t lint_ignore_paths(struct lint_ctx *c, const char *const *globs, size_t n, const char *base_dir);

#endif
