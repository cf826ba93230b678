/* SPDX-License-Identifier: Apache-2.0 */
/*
 * provenance.c - record the sources and the lint verdict of a compile in its
 * policy (see provenance.h).
 */
#include <libgen.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lint/provenance.h"

/* Components of an absolute, resolved path: a/b/c -> 3; the prefix of the
 * first k of them is path[0..prefix_len(path, k)). */
static size_t prov_prefix_len(const char *path, size_t k)
{
	size_t i = 0;

	while (k-- > 0) {
		i++; /* the '/' */
		while (path[i] != '\0' && path[i] != '/')
			i++;
	}
	return i;
}

static size_t prov_components(const char *path)
{
	size_t n = 0;

	for (const char *s = path; *s; s++)
		if (*s == '/' && s[1] != '\0')
			n++;
	return n;
}

/* file relative to the directory dir, both resolved and absolute. */
static char *prov_relative(const char *dir, const char *file)
{
	size_t ndir = prov_components(dir), common = 0, up, tail, len;
	char *out, *w;

	while (common < ndir) {
		size_t a = prov_prefix_len(dir, common + 1), b = prov_prefix_len(file, common + 1);

		if (a != b || strncmp(dir, file, a) != 0 || (file[b] != '/' && file[b] != '\0'))
			break;
		common++;
	}
	up = ndir - common;
	tail = prov_prefix_len(file, common);
	if (file[tail] == '/')
		tail++;
	len = up * 3 + strlen(file + tail) + 1;
	out = malloc(len);
	if (out == NULL)
		return NULL;
	w = out;
	for (size_t i = 0; i < up; i++, w += 3)
		memcpy(w, "../", 3);
	strcpy(w, file + tail);
	return out;
}

char *provenance_name(const char *app_path, const char *path, int role)
{
	char *app = NULL, *file = NULL, *dir, *name = NULL;
	size_t dlen;

	app = realpath(app_path, NULL);
	file = realpath(path, NULL);
	if (app == NULL || file == NULL)
		goto out;
	dir = dirname(app); /* within app's buffer */
	dlen = strlen(dir);
	/* A profile on the policy path is found by name wherever it is
	 * installed: its directory says nothing about what was compiled. */
	if (role == CPOL_SRC_POLICY &&
	    !(strncmp(file, dir, dlen) == 0 && (file[dlen] == '/' || strcmp(dir, "/") == 0))) {
		name = strdup(strrchr(file, '/') + 1);
		goto out;
	}
	name = prov_relative(dir, file);
out:
	free(app);
	free(file);
	return name;
}

static int prov_add(struct cpol_provenance *v, struct arena *a, const char *app_path, const struct src_file *f,
		    uint32_t role, char *err, size_t errlen)
{
	struct cpol_source *s = &v->sources[v->nsources];
	char *name = provenance_name(app_path, f->path, (int)role);
	int rc = -1;

	if (name == NULL) {
		snprintf(err, errlen, "cannot resolve the path of %s to record it", f->path);
		goto out;
	}
	s->name = arena_strdup(a, name);
	if (s->name == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	s->role = role;
	crypto_hash_sha256(s->sha256, (const unsigned char *)f->text, f->len);
	v->nsources++;
	rc = 0;
out:
	free(name);
	return rc;
}

static int prov_cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Counts of the active findings by level, and the rules that inline
 * directives suppressed, each once, in strcmp order. */
static int prov_verdict(struct lint_ctx *c, struct cpol_provenance *v, char *err, size_t errlen)
{
	const char **ids;
	uint32_t n = 0;

	v->catalogue = lint_catalogue_version();
	ids = arena_calloc(&c->p.arena, c->n ? c->n : 1, sizeof(*ids));
	if (ids == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < c->n; i++) {
		const struct lint_finding *f = &c->v[i];

		if (f->state == LINT_SUPPRESSED) {
			v->suppressed++;
			ids[n++] = f->rule->id;
		} else if (f->state == LINT_ACTIVE) {
			if (f->sev == LINT_ERROR)
				v->errors++;
			else if (f->sev == LINT_WARNING)
				v->warnings++;
			else if (f->sev == LINT_NOTE)
				v->notes++;
		}
	}
	qsort(ids, n, sizeof(*ids), prov_cmp_str);
	v->rules.v = ids;
	v->rules.n = 0;
	for (uint32_t i = 0; i < n; i++)
		if (v->rules.n == 0 || strcmp(ids[v->rules.n - 1], ids[i]) != 0)
			ids[v->rules.n++] = ids[i];
	return 0;
}

int provenance_record(struct lint_ctx *c, char *err, size_t errlen)
{
	struct cpol_provenance *v = &c->p.prov;
	size_t n = 1 + c->ntools + c->sc.srcs.n;

	memset(v, 0, sizeof(*v));
	/* lint reads the policy files a second time; if that failed they
	 * changed under the compile, and what was compiled is unknown. */
	if (!c->sc.ok) {
		snprintf(err, errlen, "the seccomp policy files changed while they were compiled");
		return -1;
	}
	if (n > CPOL_MAX_SOURCES) {
		snprintf(err, errlen, "%zu source files; a blob records at most %u", n, CPOL_MAX_SOURCES);
		return -1;
	}
	v->sources = arena_calloc(&c->p.arena, n, sizeof(*v->sources));
	if (v->sources == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (prov_add(v, &c->p.arena, c->app->path, c->app, CPOL_SRC_DESCRIPTOR, err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < c->ntools; i++)
		if (prov_add(v, &c->p.arena, c->app->path, c->tools[i], CPOL_SRC_INVENTORY, err, errlen) < 0)
			return -1;
	for (size_t i = 0; i < c->sc.srcs.n; i++)
		if (prov_add(v, &c->p.arena, c->app->path, c->sc.srcs.v[i], CPOL_SRC_POLICY, err, errlen) < 0)
			return -1;
	if (prov_verdict(c, v, err, errlen) < 0)
		return -1;
	v->has = 1;
	return 0;
}
