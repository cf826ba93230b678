/* SPDX-License-Identifier: Apache-2.0 */
/*
 * out_text.c - findings for people: the compiler's diagnostic form
 * (file:line:col: severity: message [ID], the source line, a caret) and a
 * hint line, then one summary line.  With colour, the location is bold,
 * the severity red, yellow or cyan, the caret green: the same layout,
 * escape sequences added around parts of it and nothing else.
 */
#include <string.h>

#include "lint/out.h"

#define BOLD "\033[1m"
#define RESET "\033[0m"
#define GREEN "\033[32m"
#define CYAN "\033[36m"

static enum diag_sev to_diag(enum lint_sev s)
{
	return s == LINT_ERROR ? DIAG_ERROR : s == LINT_WARNING ? DIAG_WARNING : DIAG_NOTE;
}

static const char *sev_color(enum lint_sev s)
{
	return s == LINT_ERROR ? "\033[1;31m" : s == LINT_WARNING ? "\033[1;33m" : "\033[1;36m";
}

/* Copy one diagnostic as diags_print() wrote it (header, source line,
 * caret line) to out with colours.  The header's severity word is found
 * as ": WORD: " after the location, which diags_print() writes first. */
static void put_colored(FILE *out, const char *text, enum lint_sev sev)
{
	char word[16];
	const char *nl = strchr(text, '\n'), *at;
	size_t hdr = nl != NULL ? (size_t)(nl - text) : strlen(text);

	snprintf(word, sizeof(word), ": %s: ", lint_sev_name(sev));
	at = strstr(text, word);
	if (at == NULL || at > text + hdr) {
		fputs(text, out);
		return;
	}
	fprintf(out, BOLD "%.*s:" RESET " %s%s:" RESET " %.*s\n", (int)(at - text), text, sev_color(sev),
		lint_sev_name(sev), (int)(text + hdr - (at + strlen(word))), at + strlen(word));
	if (nl == NULL)
		return;
	text = nl + 1;
	/* The quoted line as it is; the caret line in green. */
	if ((nl = strchr(text, '\n')) == NULL) {
		fputs(text, out);
		return;
	}
	fprintf(out, "%.*s\n", (int)(nl - text), text);
	text = nl + 1;
	if ((nl = strchr(text, '\n')) != NULL) {
		fprintf(out, GREEN "%.*s" RESET "\n", (int)(nl - text), text);
		text = nl + 1;
	}
	fputs(text, out);
}

void lint_print_text(FILE *out, const struct lint_ctx *c, const struct lint_summary *s, int color)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		const struct lint_finding *f = &c->v[i];
		struct diag g;
		struct diags one;
		char *msg = NULL, *buf = NULL;
		size_t len = 0;
		FILE *m = NULL;

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
		if (color && (m = open_memstream(&buf, &len)) != NULL) {
			diags_print(&one, m);
			if (fclose(m) == 0)
				put_colored(out, buf, f->sev);
			free(buf);
			fprintf(out, "    " CYAN "hint:" RESET " %s\n", f->rule->hint);
		} else {
			diags_print(&one, out);
			fprintf(out, "    hint: %s\n", f->rule->hint);
		}
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
