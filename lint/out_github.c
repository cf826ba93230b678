/* SPDX-License-Identifier: Apache-2.0 */
/*
 * out_github.c - findings as GitHub Actions workflow commands, which the
 * runner turns into annotations on the pull request's diff:
 *
 *     ::error file=app.yaml,line=22,col=19,endLine=22,endColumn=39,title=CDN303 container-runtime-socket::msg
 *
 * error and warning keep their names; a note is ::notice.  GitHub's
 * escaping (actions/toolkit, command.ts): in the message '%', CR and LF
 * become %25, %0D, %0A; in a property value also ':' and ',' become %3A
 * and %2C, since they end the value.  The message carries the hint after
 * an escaped line break, which the annotation shows as a second line.
 * Only active findings are written; one command a line, nothing else.
 */
#include "lint/out.h"

static void put_escaped(FILE *out, const char *s, int property)
{
	for (; *s != '\0'; s++) {
		switch (*s) {
		case '%': fputs("%25", out); break;
		case '\r': fputs("%0D", out); break;
		case '\n': fputs("%0A", out); break;
		case ':':
		case ',':
			/* %3A, %2C: they would end a property's value. */
			if (property)
				fprintf(out, "%%%02X", (unsigned)*s);
			else
				fputc(*s, out);
			break;
		default: fputc(*s, out);
		}
	}
}

int lint_print_github(FILE *out, const struct lint_ctx *c, const struct lint_summary *s)
{
	size_t i;

	(void)s;
	for (i = 0; i < c->n; i++) {
		const struct lint_finding *f = &c->v[i];
		const char *cmd = f->sev == LINT_ERROR ? "error" : f->sev == LINT_WARNING ? "warning" : "notice";

		if (f->state != LINT_ACTIVE)
			continue;
		fprintf(out, "::%s file=", cmd);
		put_escaped(out, lint_finding_path(f), 1);
		fprintf(out, ",line=%u,col=%u,endLine=%u,endColumn=%u,title=", (unsigned)f->pos.line,
			(unsigned)f->pos.col, (unsigned)f->pos.end_line, (unsigned)f->pos.end_col);
		put_escaped(out, f->rule->id, 1);
		fputc(' ', out);
		put_escaped(out, f->rule->name, 1);
		fputs("::", out);
		put_escaped(out, f->msg, 0);
		fprintf(out, " [%s]%%0Ahint: ", f->rule->id);
		put_escaped(out, f->rule->hint, 0);
		fputc('\n', out);
	}
	return ferror(out) ? -1 : 0;
}
