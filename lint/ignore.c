/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ignore.c - drop findings in files a config or --ignore names by glob;
 * see lint_ignore_paths() in config.h.  The inputs are still compiled (the
 * policy needs every one); only what is reported about them goes.
 */
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "lint/config.h"
#include "lint/out.h"

/* The part of path below base ("a/b.yaml"), or NULL when it is not below
 * it.  Both are resolved, so "./x", "../repo/x" and symlinks agree. */
static const char *below(const char *abs, const char *base)
{
	size_t n = strlen(base);

	if (strcmp(base, "/") == 0)
		return abs + 1;
	if (strncmp(abs, base, n) == 0 && abs[n] == '/')
		return abs + n + 1;
	return NULL;
}

static int matches(const char *const *globs, size_t n, const char *given, const char *rel)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (fnmatch(globs[i], given, 0) == 0 || (rel != NULL && fnmatch(globs[i], rel, 0) == 0))
			return 1;
	return 0;
}

size_t lint_ignore_paths(struct lint_ctx *c, const char *const *globs, size_t n, const char *base_dir)
{
	const struct src_file *last = NULL;
	char *base = NULL, *abs = NULL;
	size_t i, kept = 0, dropped = 0;
	int drop = 0;

	if (n == 0)
		return 0;
	base = base_dir != NULL ? realpath(base_dir, NULL) : NULL;
	for (i = 0; i < c->n; i++) {
		struct lint_finding *f = &c->v[i];

		/* Findings come sorted by file: decide once a file. */
		if (i == 0 || f->pos.file != last) {
			last = f->pos.file;
			free(abs);
			abs = f->pos.file != NULL && f->pos.file->path != NULL ? realpath(f->pos.file->path, NULL) : NULL;
			drop = matches(globs, n, lint_finding_path(f),
				       abs != NULL && base != NULL ? below(abs, base) : NULL);
		}
		if (drop) {
			free(f->msg);
			free(f->subject);
			free(f->reason);
			dropped++;
			continue;
		}
		c->v[kept++] = *f;
	}
	c->n = kept;
	free(abs);
	free(base);
	return dropped;
}
