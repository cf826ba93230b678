/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lint_gate.h - `--require-lint-clean[=LEVEL]` of `cordon run` and `cordon
 * serve`: refuse a blob whose recorded lint verdict (format 3.5, LINT) has
 * findings at or above LEVEL, or that records no verdict at all.
 */
#ifndef CORDON_LINT_GATE_H
#define CORDON_LINT_GATE_H

#include <stddef.h>

#include "cordon/policy.h"

/* Levels, in the order of lint's severities. */
enum lint_gate_level { LINT_GATE_OFF = -1, LINT_GATE_NOTE = 0, LINT_GATE_WARNING = 1, LINT_GATE_ERROR = 2 };

/* "error", "warning" or "note"; NULL (the flag without a value) is error.
 * -1 on anything else. */
int lint_gate_parse(const char *s, enum lint_gate_level *out);

/* 0 when p passes at level (always at LINT_GATE_OFF), else -1 with err
 * naming the recorded counts, or saying that the blob has none. */
int lint_gate_check(const struct cpol_policy *p, enum lint_gate_level level, char *err, size_t errlen);

#endif
