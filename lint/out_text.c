/* SPDX-License-Identifier: Apache-2.0 */
/*
 * out_text.c - findings for people: the compiler's diagnostic form
 * (file:line:col: severity: message [ID], the source line, a caret) and a
 * hint line, then one summary line.
 */
#include <string.h>

#include "lint/out.h"

static enum diag_sev to_diag(enum lint_sev s)
{
	return s == LINT_ERROR ? DIAG_ERROR : s == LINT_WARNING ? DIAG_WARNING : DIAG_NOTE;
}

void lint_print_text(FILE *out, const struct lint_ctx *c, const struct lint_summary *s)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		const struct lint_finding *f = &c->v[i];
		struct diag g;
		struct diags one;
		char *msg = NULL;

		if (f->state != LINT_ACTIVE)
			continue;
		if (asprintf(&msg, "%s [%s]", f->msg, f->rule->id) < 0)
			msg = NULL;
		/* diags_print() quotes the line and draws the caret exactly as
		 * the compiler's own errors do. */
		memset(&g, 0, sizeof(g));
		memset(&one, 0, sizeof(one));
		g.sev = to_diag(f->sev);
		g.file = f->pos.file;
		g.line = f->pos.line;
		g.col = f->pos.col;
		g.msg = msg;
		one.v = &g;
		one.n = 1;
		diags_print(&one, out);
		fprintf(out, "    hint: %s\n", f->rule->hint);
		free(msg);
	}
	fprintf(out, "cordonc lint: %zu error%s, %zu warning%s, %zu note%s", s->count[LINT_ERROR],
		s->count[LINT_ERROR] == 1 ? "" : "s", s->count[LINT_WARNING], s->count[LINT_WARNING] == 1 ? "" : "s",
		s->count[LINT_NOTE], s->count[LINT_NOTE] == 1 ? "" : "s");
	if (s->suppressed)
		fprintf(out, "; %zu suppressed", s->suppressed);
	if (s->baselined)
		fprintf(out, "; %zu in the baseline", s->baselined);
	fprintf(out, "%s\n", s->failed ? "" : " (passed)");
}

void lint_summarise(const struct lint_ctx *c, enum lint_sev fail_level, struct lint_summary *s)
{
	size_t i;

	memset(s, 0, sizeof(*s));
	s->fail_level = fail_level;
	for (i = 0; i < c->n; i++) {
		const struct lint_finding *f = &c->v[i];

		if (f->state == LINT_SUPPRESSED)
			s->suppressed++;
		else if (f->state == LINT_BASELINED)
			s->baselined++;
		else if (f->sev >= LINT_NOTE) {
			s->count[f->sev]++;
			if (f->sev >= fail_level)
				s->failed = 1;
		}
	}
}
