/* SPDX-License-Identifier: Apache-2.0 */
/*
 * suppress.c - inline suppressions:
 *
 *     # cordon: allow CDN301[, CDN302] [until YYYY-MM-DD] -- reason
 *
 * A directive is a comment (a '#' at the start of a line or after a blank)
 * whose text starts with "cordon:".  It covers findings of the rules it
 * names on its own line, or, when it stands on a line of its own, on the
 * next line.  The reason after "--" (or an em dash) is required; `until`
 * may also end the reason.  A directive without a reason, past its date,
 * naming an unknown rule, or matching nothing suppresses nothing and is
 * itself reported (CDN001-CDN004), so a broken exception cannot pass for
 * a working one.  Comments are found in the raw text, since libyaml drops
 * them; a "# cordon:" inside a quoted string would be read as one too.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lint/lint.h"

#define DIR_MAX_IDS 8
#define DIR_TEXT_MAX 1024

struct directive {
	const struct src_file *f;
	struct lint_pos pos; /* the comment, '#' to the end of the line */
	int own_line;
	char ids[DIR_MAX_IDS][16];
	size_t nids;
	char reason[DIR_TEXT_MAX];
	char until[11];
	long until_day;  /* -1: none */
	char problem[160]; /* malformed: why */
	int used;
};

struct directives {
	struct directive *v;
	size_t n, cap;
};

static const struct lint_rule *meta(const char *id)
{
	return lint_rule_find(id);
}

static void skip_ws(const char **p)
{
	while (**p == ' ' || **p == '\t')
		(*p)++;
}

/* Parse the text after "cordon:" into d (NUL-terminated copy). */
static void parse_body(const char *s, struct directive *d)
{
	const char *p = s;
	char tok[32], *t;
	size_t n;

	d->until_day = -1;
	skip_ws(&p);
	if (strncmp(p, "allow", 5) != 0 || (p[5] != ' ' && p[5] != '\t')) {
		snprintf(d->problem, sizeof(d->problem), "expected 'allow' after 'cordon:'");
		return;
	}
	p += 5;
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		for (n = 0; isalnum((unsigned char)p[n]) && n < sizeof(tok) - 1; n++)
			tok[n] = (char)toupper((unsigned char)p[n]);
		tok[n] = '\0';
		if (n == 0 || strcmp(tok, "UNTIL") == 0)
			break;
		p += n;
		if (lint_rule_find(tok) == NULL || strncmp(tok, "CDN0", 4) == 0) {
			snprintf(d->problem, sizeof(d->problem), "'%s' is not a rule that can be suppressed", tok);
			return;
		}
		if (d->nids == DIR_MAX_IDS) {
			snprintf(d->problem, sizeof(d->problem), "more than %d rule ids", DIR_MAX_IDS);
			return;
		}
		memcpy(d->ids[d->nids++], tok, n + 1);
	}
	if (d->nids == 0) {
		snprintf(d->problem, sizeof(d->problem), "names no rule id");
		return;
	}
	if (strncasecmp(p, "until", 5) == 0) {
		p += 5;
		skip_ws(&p);
		snprintf(d->until, sizeof(d->until), "%.10s", p);
		if ((d->until_day = lint_parse_date(d->until)) < 0) {
			snprintf(d->problem, sizeof(d->problem), "'until %.10s' is not a date (YYYY-MM-DD)", p);
			return;
		}
		p += 10;
		skip_ws(&p);
	}
	if (strncmp(p, "--", 2) == 0)
		p += 2;
	else if (strncmp(p, "\xE2\x80\x94", 3) == 0) /* em dash */
		p += 3;
	else if (*p != '\0') {
		snprintf(d->problem, sizeof(d->problem), "expected '-- reason' after the rule ids");
		return;
	} else {
		return; /* no reason: CDN001 */
	}
	skip_ws(&p);
	snprintf(d->reason, sizeof(d->reason), "%s", p);
	n = strlen(d->reason);
	while (n > 0 && (d->reason[n - 1] == ' ' || d->reason[n - 1] == '\t'))
		d->reason[--n] = '\0';
	/* "-- reason until YYYY-MM-DD" */
	t = d->reason + (n >= 16 ? n - 16 : 0);
	if (d->until_day < 0 && n >= 16 && strncasecmp(t, "until ", 6) == 0 && (t == d->reason || t[-1] == ' ')) {
		if ((d->until_day = lint_parse_date(t + 6)) < 0) {
			snprintf(d->problem, sizeof(d->problem), "'%s' is not a date (YYYY-MM-DD)", t);
			return;
		}
		memcpy(d->until, t + 6, 11);
		while (t > d->reason && t[-1] == ' ')
			t--;
		*t = '\0';
	}
}

/* Code points in s[0..n). */
static uint32_t cps(const char *s, size_t n)
{
	uint32_t k = 0;
	size_t i;

	for (i = 0; i < n; i++)
		k += ((unsigned char)s[i] & 0xC0) != 0x80;
	return k;
}

static void scan_file(const struct src_file *f, struct directives *out)
{
	const char *t = f->text, *end = f->text + f->len, *s, *e, *p;
	uint32_t line = 1;

	if (t == NULL)
		return;
	for (s = t; s <= end; s = e + 1, line++) {
		char body[DIR_TEXT_MAX];
		struct directive *d;

		for (e = s; e < end && *e != '\n'; e++)
			;
		for (p = s; p < e; p++) {
			const char *q = p + 1;

			if (*p != '#' || (p > s && p[-1] != ' ' && p[-1] != '\t'))
				continue;
			while (q < e && (*q == ' ' || *q == '\t'))
				q++;
			if ((size_t)(e - q) < 7 || strncmp(q, "cordon:", 7) != 0)
				break; /* an ordinary comment: the rest of the line is its text */
			if (out->n == out->cap) {
				size_t ncap = out->cap ? out->cap * 2 : 8;
				struct directive *nv = realloc(out->v, ncap * sizeof(*nv));

				if (nv == NULL)
					return;
				out->v = nv;
				out->cap = ncap;
			}
			d = &out->v[out->n++];
			memset(d, 0, sizeof(*d));
			d->f = f;
			d->pos.file = f;
			d->pos.line = d->pos.end_line = line;
			d->pos.col = cps(s, (size_t)(p - s)) + 1;
			d->pos.end_col = cps(s, (size_t)(e - s)) + 1 - (e > s && e[-1] == '\r');
			d->own_line = 1;
			for (const char *b = s; b < p; b++)
				if (*b != ' ' && *b != '\t')
					d->own_line = 0;
			snprintf(body, sizeof(body), "%.*s", (int)(e - q - 7 - (e[-1] == '\r')), q + 7);
			parse_body(body, d);
			break;
		}
		if (e >= end)
			break;
	}
}

static int covers(const struct directive *d, const struct lint_finding *f)
{
	size_t i;

	if (d->f != f->pos.file || !(d->pos.line == f->pos.line || (d->own_line && d->pos.line + 1 == f->pos.line)))
		return 0;
	for (i = 0; i < d->nids; i++)
		if (strcmp(d->ids[i], f->rule->id) == 0)
			return 1;
	return 0;
}

/* The directives of one file: ds.v[first .. first + n), by line, since
 * scan_file() reads the file top to bottom. */
struct dir_run {
	const struct src_file *f;
	size_t first, n;
};

static void scan_once(const struct src_file *f, struct dir_run *runs, size_t *nruns, size_t cap,
		      struct directives *ds)
{
	size_t i;

	if (f == NULL)
		return;
	for (i = 0; i < *nruns; i++)
		if (runs[i].f == f)
			return;
	if (*nruns == cap)
		return;
	runs[*nruns].f = f;
	runs[*nruns].first = ds->n;
	scan_file(f, ds);
	runs[*nruns].n = ds->n - runs[*nruns].first;
	(*nruns)++;
}

/* The first directive that may cover f: in f's file, on its line or the
 * one before (a directive alone on its line covers the next).  Found by
 * binary search, so thousands of findings and directives cost n log n. */
static size_t first_candidate(const struct directives *ds, const struct dir_run *r, const struct lint_finding *f)
{
	uint32_t from = f->pos.line > 1 ? f->pos.line - 1 : 1;
	size_t lo = r->first, hi = r->first + r->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ds->v[mid].pos.line < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void lint_suppress(struct lint_ctx *c)
{
	struct directives ds = { NULL, 0, 0 };
	struct dir_run runs[64];
	size_t nruns = 0, i, j, k, nfind = c->n;

	scan_once(c->app, runs, &nruns, 64, &ds);
	for (i = 0; i < c->ntools; i++)
		scan_once(c->tools[i], runs, &nruns, 64, &ds);
	for (i = 0; i < nfind; i++)
		scan_once(c->v[i].pos.file, runs, &nruns, 64, &ds);

	for (i = 0; i < nfind; i++) {
		struct lint_finding *f = &c->v[i];

		for (k = 0; k < nruns && runs[k].f != f->pos.file; k++)
			;
		if (k == nruns)
			continue;
		for (j = first_candidate(&ds, &runs[k], f);
		     j < runs[k].first + runs[k].n && ds.v[j].pos.line <= f->pos.line && f->state == LINT_ACTIVE; j++) {
			struct directive *d = &ds.v[j];

			if (d->problem[0] || d->reason[0] == '\0' || !covers(d, f))
				continue;
			if (d->until_day >= 0 && c->opt->today > d->until_day)
				continue;
			f->state = LINT_SUPPRESSED;
			f->reason = strdup(d->reason);
			if (f->reason == NULL)
				c->oom = 1;
			memcpy(f->until, d->until, sizeof(f->until));
			f->supp_line = d->pos.line;
			d->used = 1;
		}
	}
	for (j = 0; j < ds.n; j++) {
		struct directive *d = &ds.v[j];
		char subject[64];

		snprintf(subject, sizeof(subject), "directive:%s", d->nids ? d->ids[0] : "");
		if (d->problem[0])
			lint_report_pos(c, meta("CDN003"), &d->pos, subject, "suppression cannot be read: %s", d->problem);
		else if (d->reason[0] == '\0')
			lint_report_pos(c, meta("CDN001"), &d->pos, subject,
					"suppression of %s has no reason, so it suppresses nothing", d->ids[0]);
		else if (d->until_day >= 0 && c->opt->today > d->until_day)
			lint_report_pos(c, meta("CDN002"), &d->pos, subject,
					"suppression of %s expired on %s, so it suppresses nothing", d->ids[0], d->until);
		else if (!d->used)
			lint_report_pos(c, meta("CDN004"), &d->pos, subject, "suppression of %s matches no finding",
					d->ids[0]);
	}
	free(ds.v);
}
