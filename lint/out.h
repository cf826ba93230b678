/* SPDX-License-Identifier: Apache-2.0 */
/*
 * out.h - the writers of lint findings and the summary they share.
 *
 * Each writer takes a finished lint context (sorted, suppressions and
 * baseline applied) and writes one document to a FILE; none decides the
 * exit status.  JSON and SARIF go through cJSON.  The JSON schema is
 * documented in docs/lint.md; the SARIF is 2.1.0 as GitHub code scanning
 * reads it.
 */
#ifndef CORDON_LINT_OUT_H
#define CORDON_LINT_OUT_H

#include <stdio.h>
#include <stdlib.h>

#include "lint/lint.h"

struct lint_summary {
	size_t count[3];  /* active findings by severity (LINT_NOTE..LINT_ERROR) */
	size_t suppressed;
	size_t baselined;
	enum lint_sev fail_level;
	int failed;       /* an active finding at or above fail_level */
	int baseline_used;
};

void lint_summarise(const struct lint_ctx *c, enum lint_sev fail_level, struct lint_summary *s);

/* color: ANSI colours on the location, severity, caret and hint. */
void lint_print_text(FILE *out, const struct lint_ctx *c, const struct lint_summary *s, int color);
/* 0, or -1 when memory ran out or the stream failed (nothing useful was
 * written then). */
int lint_print_json(FILE *out, const struct lint_ctx *c, const struct lint_summary *s);
int lint_print_sarif(FILE *out, const struct lint_ctx *c, const struct lint_summary *s);
/* The formats CI systems read natively (docs/lint.md, "Output formats"). */
int lint_print_junit(FILE *out, const struct lint_ctx *c, const struct lint_summary *s);
int lint_print_checkstyle(FILE *out, const struct lint_ctx *c, const struct lint_summary *s);
int lint_print_github(FILE *out, const struct lint_ctx *c, const struct lint_summary *s);
int lint_print_gitlab(FILE *out, const struct lint_ctx *c, const struct lint_summary *s);

/* s as XML text or attribute value (out_xml.c). */
void lint_xml_put(FILE *out, const char *s);
/* The finding's file as CI systems want it: as given, without "./". */
const char *lint_finding_path(const struct lint_finding *f);

/* Print root (pretty) and a newline to out, then free root.  0, or -1
 * when memory ran out. */
struct cJSON;
int lint_json_emit(FILE *out, struct cJSON *root);

/* The rule reference: one rule as text (explain) or the whole catalogue as
 * Markdown (docs/rules.md). */
void lint_explain_text(FILE *out, const struct lint_rule *r);
void lint_explain_markdown(FILE *out);

#endif
