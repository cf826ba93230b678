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

#endif
