/* SPDX-License-Identifier: Apache-2.0 */
/*
 * provenance.h - what `cordonc compile` records about where a blob came from
 * (format 3.5, SOURCES and LINT; docs/provenance.md): the SHA-256 of every
 * source file and the lint verdict over them.
 */
#ifndef CORDON_LINT_PROVENANCE_H
#define CORDON_LINT_PROVENANCE_H

#include <stddef.h>

#include "lint/lint.h"

/*
 * Fill c->p.prov from a finished lint_run(): the descriptor, the
 * inventories and every seccomp policy file the compile read, each with the
 * SHA-256 of the bytes that were compiled, and the counts of c's findings.
 * Names are what provenance_name() gives.  Returns 0, or -1 with err filled.
 */
int provenance_record(struct lint_ctx *c, char *err, size_t errlen);

/*
 * The name a source is recorded under, malloc'd: its path relative to the
 * descriptor's directory (symbolic links resolved), so the same checkout
 * gives the same names wherever it lies; a policy file outside that
 * directory (a profile found on the policy path, which differs from host to
 * host) is recorded by its base name.  NULL when a path cannot be resolved.
 */
char *provenance_name(const char *app_path, const char *path, int role);

/* --- cordonc verify --sources --------------------------------------------- */

enum prov_status {
	PROV_MATCHED = 0,
	PROV_CHANGED,    /* the file's SHA-256 differs from the recorded one */
	PROV_MISSING,    /* recorded, but no such file was given or found */
	PROV_EXTRA,      /* given, but the blob records no such source */
	PROV_UNREADABLE, /* given or found, but could not be read */
};

struct prov_item {
	enum prov_status status;
	uint32_t role;      /* enum cpol_src_role; the recorded one, or a guess for EXTRA */
	char *name;         /* the recorded name, or the name the file would have */
	char *path;         /* the file checked; NULL when MISSING */
	int found;          /* a policy file not given, found on the policy path */
	uint8_t want[32];   /* recorded SHA-256 (not for EXTRA) */
	uint8_t got[32];    /* the file's (MATCHED, CHANGED) */
	char why[160];      /* UNREADABLE: the reason */
};

struct prov_report {
	struct prov_item *v;
	size_t n;
	size_t mismatches; /* items not MATCHED */
};

/*
 * Check a blob's recorded sources against files: files[0] is the
 * descriptor, the others inventories or policy files, told apart by the
 * name each would be recorded under.  A recorded policy file that is not
 * given is looked for as compile would find it: by its name relative to
 * the descriptor's directory, then by base name in dirs (the policy path).
 * One item per recorded source, in recorded order, then one per extra
 * file.  Returns 0 with r filled (r->mismatches 0: exactly these sources),
 * or -1 with err filled (out of memory).  Always call prov_report_free().
 */
int provenance_check(const struct cpol_provenance *v, const char *const *files, size_t nfiles,
		     const char *const *dirs, size_t ndirs, struct prov_report *r, char *err, size_t errlen);
void prov_report_free(struct prov_report *r);
const char *prov_status_name(enum prov_status s); /* "matched", "changed", ... */

#endif
