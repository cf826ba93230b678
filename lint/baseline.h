/* SPDX-License-Identifier: Apache-2.0 */
/*
 * baseline.h - write the current findings as a baseline; mark the findings
 * a baseline already knows (state LINT_BASELINED).  Both return 0, or -1
 * with err.  See baseline.c for the format and the matching.
 */
#ifndef CORDON_LINT_BASELINE_H
#define CORDON_LINT_BASELINE_H

#include <stddef.h>

#include "lint/lint.h"

int lint_baseline_write(const char *path, const struct lint_ctx *c, size_t *written, char *err, size_t n);
int lint_baseline_apply(const char *path, struct lint_ctx *c, char *err, size_t n);

#endif
