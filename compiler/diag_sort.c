/* SPDX-License-Identifier: Apache-2.0 */
/*
 * diag_sort.c - diagnostics in the order of the files they point into.
 *
 * The compiler's stages report in their own order: every file's YAML
 * first, then the descriptor, then each inventory's tools in file order,
 * then the checks that need all tools (parameters and constraints, in tool
 * id order).  A reader fixing a file top to bottom wants them by file,
 * line and column, so one run's report is sorted before it is printed.  A
 * note ("previous definition is here") stays right after the error or
 * warning it explains, wherever it points.
 */
#include <stdlib.h>
#include <string.h>

#include "compiler/diag.h"

/* One error or warning and the notes that follow it. */
struct diag_group {
	size_t first, n;
	size_t rank; /* the file's place: see diags_sort() */
	const char *path;
	uint32_t line, col;
};

static int diag_group_cmp(const void *pa, const void *pb)
{
	const struct diag_group *a = pa, *b = pb;
	int c;

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->path != b->path && a->path != NULL && b->path != NULL && (c = strcmp(a->path, b->path)) != 0)
		return c;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	if (a->col != b->col)
		return a->col < b->col ? -1 : 1;
	/* qsort is not stable: equal places keep the order reported. */
	return a->first < b->first ? -1 : a->first > b->first;
}

static size_t diag_file_rank(const struct src_file *f, const struct src_file *const *files, size_t nfiles)
{
	if (f == NULL)
		return 0;
	for (size_t i = 0; i < nfiles; i++)
		if (files[i] == f)
			return i + 1;
	return nfiles + 1;
}

int diags_sort(struct diags *d, size_t from, const struct src_file *const *files, size_t nfiles)
{
	struct diag_group *g = NULL;
	struct diag *v = NULL;
	size_t ng = 0, i, k = 0;
	int rc = -1;

	if (from >= d->n)
		return 0;
	g = malloc((d->n - from) * sizeof(*g));
	v = malloc((d->n - from) * sizeof(*v));
	if (g == NULL || v == NULL)
		goto out;
	for (i = from; i < d->n; i++) {
		const struct diag *e = &d->v[i];

		/* A note opens a group only when nothing precedes it. */
		if (e->sev == DIAG_NOTE && ng > 0) {
			g[ng - 1].n++;
			continue;
		}
		g[ng].first = i;
		g[ng].n = 1;
		g[ng].rank = diag_file_rank(e->file, files, nfiles);
		g[ng].path = e->file != NULL ? e->file->path : NULL;
		g[ng].line = e->line;
		g[ng].col = e->col;
		ng++;
	}
	qsort(g, ng, sizeof(*g), diag_group_cmp);
	for (i = 0; i < ng; i++) {
		memcpy(v + k, d->v + g[i].first, g[i].n * sizeof(*v));
		k += g[i].n;
	}
	memcpy(d->v + from, v, k * sizeof(*v));
	rc = 0;
out:
	free(g);
	free(v);
	return rc;
}
