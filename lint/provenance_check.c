/* SPDX-License-Identifier: Apache-2.0 */
/*
 * provenance_check.c - `cordonc verify --sources`: were these the files a
 * blob was compiled from?  See provenance.h.
 */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/sign.h"
#include "lint/provenance.h"

const char *prov_status_name(enum prov_status s)
{
	switch (s) {
	case PROV_MATCHED: return "matched";
	case PROV_CHANGED: return "changed";
	case PROV_MISSING: return "missing";
	case PROV_EXTRA: return "extra";
	case PROV_UNREADABLE: return "unreadable";
	}
	return "?";
}

/* Hash path into it->got and judge it against it->want. */
static void prov_hash_item(struct prov_item *it)
{
	uint8_t *buf = NULL;
	size_t len = 0;

	/* A source is at most 1 MiB (src_read's limit for YAML and policy
	 * files); anything larger cannot have been compiled. */
	if (file_read_all(it->path, YDOC_MAX_BYTES, &buf, &len, it->why, sizeof(it->why)) != 0) {
		it->status = PROV_UNREADABLE;
		return;
	}
	crypto_hash_sha256(it->got, buf, len);
	free(buf);
	it->status = memcmp(it->got, it->want, 32) == 0 ? PROV_MATCHED : PROV_CHANGED;
}

/* A recorded policy file nobody named: where compile would look. */
static char *prov_find_policy(const char *app_path, const char *name, const char *const *dirs, size_t ndirs)
{
	const char *slash = strrchr(app_path, '/');
	char *p = NULL;

	if (asprintf(&p, "%.*s%s%s", slash ? (int)(slash - app_path) : 0, app_path, slash ? "/" : "", name) >= 0 &&
	    access(p, F_OK) == 0)
		return p;
	free(p);
	for (size_t i = 0; i < ndirs && strchr(name, '/') == NULL; i++) {
		if (asprintf(&p, "%s/%s", dirs[i], name) < 0)
			return NULL;
		if (access(p, F_OK) == 0)
			return p;
		free(p);
	}
	return NULL;
}

int provenance_check(const struct cpol_provenance *v, const char *const *files, size_t nfiles,
		     const char *const *dirs, size_t ndirs, struct prov_report *r, char *err, size_t errlen)
{
	uint8_t *claimed = NULL;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	/* One spare item: the extra guess below may sit one past r->n. */
	r->v = calloc(v->nsources + nfiles + 1, sizeof(*r->v));
	claimed = calloc(v->nsources ? v->nsources : 1, 1);
	if (r->v == NULL || claimed == NULL)
		goto oom;
	r->n = v->nsources;
	for (uint32_t i = 0; i < v->nsources; i++) {
		r->v[i].role = v->sources[i].role;
		r->v[i].name = strdup(v->sources[i].name);
		memcpy(r->v[i].want, v->sources[i].sha256, 32);
		r->v[i].status = PROV_MISSING;
		if (r->v[i].name == NULL)
			goto oom;
	}
	/* The descriptor is the first file by position: its name is only
	 * its base name, and another name is the same source renamed. */
	if (nfiles > 0 && v->nsources > 0) {
		r->v[0].path = strdup(files[0]);
		if (r->v[0].path == NULL)
			goto oom;
		claimed[0] = 1;
	}
	for (size_t f = 1; f < nfiles; f++) {
		struct prov_item *it = NULL;

		for (int role = CPOL_SRC_INVENTORY; it == NULL && role <= CPOL_SRC_POLICY; role++) {
			char *name = provenance_name(files[0], files[f], role);

			for (uint32_t i = 1; name != NULL && i < v->nsources; i++)
				if (!claimed[i] && r->v[i].role == (uint32_t)role && strcmp(r->v[i].name, name) == 0) {
					claimed[i] = 1;
					it = &r->v[i];
					break;
				}
			if (it == NULL && role == CPOL_SRC_INVENTORY) {
				/* Unless a policy name matches below, it is extra,
				 * and named as an inventory would be. */
				it = &r->v[r->n];
				it->status = PROV_EXTRA;
				it->role = CPOL_SRC_INVENTORY;
				it->name = name != NULL ? name : strdup(files[f]);
				name = NULL;
				if (it->name == NULL)
					goto oom;
				it = NULL;
			}
			free(name);
		}
		if (it == NULL) {
			it = &r->v[r->n++];
		} else {
			/* Claimed by a recorded source: the extra guess goes. */
			free(r->v[r->n].name);
			memset(&r->v[r->n], 0, sizeof(r->v[r->n]));
		}
		it->path = strdup(files[f]);
		if (it->path == NULL)
			goto oom;
	}
	for (uint32_t i = 0; i < v->nsources; i++) {
		struct prov_item *it = &r->v[i];

		if (!claimed[i] && it->role == CPOL_SRC_POLICY && nfiles > 0) {
			it->path = prov_find_policy(files[0], it->name, dirs, ndirs);
			it->found = it->path != NULL;
		}
		if (it->path != NULL)
			prov_hash_item(it);
	}
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i].status != PROV_MATCHED)
			r->mismatches++;
	rc = 0;
	goto out;
oom:
	snprintf(err, errlen, "out of memory");
out:
	free(claimed);
	return rc;
}

void prov_report_free(struct prov_report *r)
{
	/* Items past n may hold a name from an unfinished match. */
	for (size_t i = 0; r->v != NULL && i <= r->n; i++) {
		free(r->v[i].name);
		free(r->v[i].path);
	}
	free(r->v);
	memset(r, 0, sizeof(*r));
}
