/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lint.c - the lint pipeline: compile, parse the trees again with their
 * marks, run the catalogue, apply suppressions, sort, fingerprint.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "lint/lint.h"

/* --- positions ------------------------------------------------------------ */

/* Offset of the end of the line holding off, trailing blanks and a comment
 * left out. */
static size_t line_end(const struct src_file *f, size_t off)
{
	size_t e = off, last = off;
	int in_q = 0;

	while (e < f->len && f->text[e] != '\n' && f->text[e] != '\r') {
		char ch = f->text[e];

		if (ch == '"' || ch == '\'')
			in_q = !in_q;
		if (!in_q && ch == '#' && e > off && (f->text[e - 1] == ' ' || f->text[e - 1] == '\t'))
			break;
		if (ch != ' ' && ch != '\t')
			last = e + 1;
		e++;
	}
	return last > off ? last : off + (off < f->len ? 1 : 0);
}

/* Where a block scalar (`|` or `>` at off) ends: after its last content
 * line, the lines below the indicator that are blank or indented deeper
 * than the line the indicator is on. */
static size_t block_end(const struct src_file *f, size_t off)
{
	const char *t = f->text;
	size_t ls = off, ind = 0, e, end;

	while (ls > 0 && t[ls - 1] != '\n' && t[ls - 1] != '\r')
		ls--;
	while (ls + ind < f->len && t[ls + ind] == ' ')
		ind++;
	end = line_end(f, off);
	for (e = off; e < f->len && t[e] != '\n' && t[e] != '\r'; e++)
		;
	while (e < f->len) {
		size_t s = e + (t[e] == '\r' && e + 1 < f->len && t[e + 1] == '\n' ? 2 : 1), i = 0, le;

		while (s + i < f->len && t[s + i] == ' ')
			i++;
		for (le = s + i; le < f->len && t[le] != '\n' && t[le] != '\r'; le++)
			;
		if (le > s + i && i <= ind)
			break; /* a line with text, not deeper: the next key */
		if (le > s + i)
			end = le;
		e = le;
	}
	return end;
}

/* Where a scalar that starts at off ends in the source (exclusive). */
static size_t scalar_end(const struct src_file *f, size_t off, const struct ynode *n)
{
	const char *t = f->text;
	size_t e;

	if (off >= f->len)
		return off;
	if (t[off] == '"' || t[off] == '\'') {
		char q = t[off];

		for (e = off + 1; e < f->len; e++) {
			if (q == '"' && t[e] == '\\' && e + 1 < f->len) {
				e++;
				continue;
			}
			if (t[e] == q) {
				if (q == '\'' && e + 1 < f->len && t[e + 1] == '\'') {
					e++;
					continue;
				}
				return e + 1;
			}
		}
		return line_end(f, off);
	}
	if (t[off] == '|' || t[off] == '>')
		return block_end(f, off);
	/* A plain scalar on one line is its own text; anything else (folded
	 * plain scalars) ends where its first line does. */
	if (n->str != NULL && memchr(n->str, '\n', n->len) == NULL && off + n->len <= f->len &&
	    memcmp(t + off, n->str, n->len) == 0 && n->len > 0)
		return off + n->len;
	return line_end(f, off);
}

static void pos_of_node(const struct src_file *f, const struct ynode *n, struct lint_pos *pos)
{
	size_t off, end;

	pos->file = f;
	pos->line = n ? n->line : 1;
	pos->col = n ? n->col : 1;
	if (f == NULL || f->text == NULL) {
		pos->end_line = pos->line;
		pos->end_col = pos->col + 1;
		return;
	}
	off = src_offset(f, pos->line, pos->col);
	end = (n != NULL && n->kind == YN_SCALAR) ? scalar_end(f, off, n) : line_end(f, off);
	src_pos(f, end, &pos->end_line, &pos->end_col);
	if (pos->end_line == pos->line && pos->end_col <= pos->col)
		pos->end_col = pos->col + 1;
}

/* A policy-language token: an identifier (syscall or action name) or one
 * character. */
static void pos_of_loc(const struct ast_loc *loc, struct lint_pos *pos)
{
	const struct src_file *f = loc->file;
	size_t off, e;

	pos->file = f;
	pos->line = loc->line ? loc->line : 1;
	pos->col = loc->col ? loc->col : 1;
	pos->end_line = pos->line;
	pos->end_col = pos->col + 1;
	if (f == NULL || f->text == NULL)
		return;
	off = src_offset(f, pos->line, pos->col);
	for (e = off; e < f->len; e++) {
		char ch = f->text[e];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_'))
			break;
	}
	if (e > off)
		pos->end_col = pos->col + (uint32_t)(e - off);
}

/* --- findings ------------------------------------------------------------- */

enum lint_sev lint_rule_sev(const struct lint_options *opt, const struct lint_rule *r)
{
	size_t i;
	enum lint_sev s = r->sev;

	/* The last override of a rule wins: a flag given after a config file's
	 * level for the same rule replaces it. */
	if (opt != NULL)
		for (i = 0; i < opt->noverrides; i++)
			if (strcmp(opt->overrides[i].id, r->id) == 0)
				s = opt->overrides[i].sev;
	return s;
}

static void report_v(struct lint_ctx *c, const struct lint_rule *r, const struct lint_pos *pos, const char *subject,
		     const char *fmt, va_list ap)
{
	struct lint_finding *f;
	enum lint_sev sev = lint_rule_sev(c->opt, r);

	if (sev == LINT_OFF)
		return;
	if (c->n == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 16;
		struct lint_finding *nv = realloc(c->v, ncap * sizeof(*nv));

		if (nv == NULL) {
			c->oom = 1;
			return;
		}
		c->v = nv;
		c->cap = ncap;
	}
	f = &c->v[c->n];
	memset(f, 0, sizeof(*f));
	f->rule = r;
	f->sev = sev;
	f->pos = *pos;
	if (vasprintf(&f->msg, fmt, ap) < 0)
		f->msg = NULL;
	f->subject = strdup(subject != NULL ? subject : "");
	if (f->msg == NULL || f->subject == NULL) {
		free(f->msg);
		free(f->subject);
		c->oom = 1;
		return;
	}
	c->n++;
}

void lint_report_pos(struct lint_ctx *c, const struct lint_rule *r, const struct lint_pos *pos, const char *subject,
		     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report_v(c, r, pos, subject, fmt, ap);
	va_end(ap);
}

void lint_report(struct lint_ctx *c, const struct lint_rule *r, const struct src_file *f, const struct ynode *n,
		 const char *subject, const char *fmt, ...)
{
	struct lint_pos pos;
	va_list ap;

	pos_of_node(f, n, &pos);
	va_start(ap, fmt);
	report_v(c, r, &pos, subject, fmt, ap);
	va_end(ap);
}

void lint_report_loc(struct lint_ctx *c, const struct lint_rule *r, const struct ast_loc *loc, const char *subject,
		     const char *fmt, ...)
{
	struct lint_pos pos;
	va_list ap;

	pos_of_loc(loc, &pos);
	va_start(ap, fmt);
	report_v(c, r, &pos, subject, fmt, ap);
	va_end(ap);
}

/* --- tree lookups --------------------------------------------------------- */

/* Walk dotted below root; *key gets the last key node found, *depth how
 * many components matched. */
static const struct ynode *walk(const struct ynode *root, const char *dotted, const struct ynode **key,
				const struct ynode **deepest_key)
{
	const struct ynode *cur = root, *k = NULL;
	char part[64];
	const char *p = dotted;

	if (key)
		*key = NULL;
	if (deepest_key)
		*deepest_key = NULL;
	while (cur != NULL && *p != '\0') {
		const char *dot = strchr(p, '.');
		size_t len = dot ? (size_t)(dot - p) : strlen(p);

		if (len >= sizeof(part) || cur->kind != YN_MAP)
			return NULL;
		memcpy(part, p, len);
		part[len] = '\0';
		k = ymap_key(cur, part);
		cur = ymap_get(cur, part);
		if (k == NULL)
			return NULL;
		if (deepest_key)
			*deepest_key = k;
		p = dot ? dot + 1 : p + len;
	}
	if (key)
		*key = k;
	return cur;
}

const struct ynode *lint_get(const struct ynode *root, const char *dotted)
{
	return walk(root, dotted, NULL, NULL);
}

const struct ynode *lint_key(const struct ynode *root, const char *dotted)
{
	const struct ynode *k;

	return walk(root, dotted, &k, NULL) != NULL ? k : NULL;
}

const struct ynode *lint_nearest_key(const struct ynode *root, const char *dotted)
{
	const struct ynode *k = NULL;

	walk(root, dotted, NULL, &k);
	if (k == NULL && root != NULL && root->kind == YN_MAP && root->n > 0)
		k = root->keys[0];
	return k;
}

const struct ynode *lint_tool_node(const struct lint_ctx *c, const char *id, const struct src_file **f)
{
	size_t i, j;

	for (i = 0; i < c->ntools; i++) {
		const struct ynode *tools = lint_get(c->tool_docs[i].root, "tools");

		if (tools == NULL || tools->kind != YN_SEQ)
			continue;
		for (j = 0; j < tools->n; j++) {
			const struct ynode *idn = ymap_get(tools->vals[j], "id");

			if (idn != NULL && idn->kind == YN_SCALAR && strcmp(idn->str, id) == 0) {
				*f = c->tools[i];
				return tools->vals[j];
			}
		}
	}
	*f = NULL;
	return NULL;
}

long lint_parse_date(const char *s)
{
	static const int mdays[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int y, m, d, i, leap;
	long days = 0;

	for (i = 0; i < 10; i++) {
		if (i == 4 || i == 7) {
			if (s[i] != '-')
				return -1;
		} else if (s[i] < '0' || s[i] > '9') {
			return -1;
		}
	}
	if (s[10] != '\0')
		return -1;
	y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
	m = (s[5] - '0') * 10 + (s[6] - '0');
	d = (s[8] - '0') * 10 + (s[9] - '0');
	leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (y < 1970 || m < 1 || m > 12 || d < 1 || d > mdays[m - 1] + (m == 2 && leap))
		return -1;
	for (i = 1970; i < y; i++)
		days += ((i % 4 == 0 && i % 100 != 0) || i % 400 == 0) ? 366 : 365;
	for (i = 1; i < m; i++)
		days += mdays[i - 1] + (i == 2 && leap);
	return days + d - 1;
}

/* --- seccomp files -------------------------------------------------------- */

static void seccomp_load(struct lint_ctx *c, const struct policy_search *search)
{
	struct lint_seccomp *s = &c->sc;
	const char *extra = c->p.exec.seccomp_extra;
	struct diags scratch;
	int rc;

	diags_init(&scratch);
	arena_init(&s->arena);
	if (c->p.exec.seccomp_profile == NULL || policy_find_profile(c->p.exec.seccomp_profile, search, &s->prof_path))
		goto out;
	rc = policy_parse_file(s->prof_path, search, &s->arena, &s->srcs, &s->prof, &scratch);
	if (rc == 0 && extra != NULL && extra[0] != '\0') {
		const char *slash = strrchr(c->app->path, '/');

		if (extra[0] == '/' || slash == NULL)
			s->extra_path = strdup(extra);
		else if (asprintf(&s->extra_path, "%.*s/%s", (int)(slash - c->app->path), c->app->path, extra) < 0)
			s->extra_path = NULL;
		if (s->extra_path == NULL ||
		    policy_parse_file(s->extra_path, search, &s->arena, &s->srcs, &s->extra, &scratch) != 0)
			rc = -1;
	}
	/* The compile parsed the same files a moment ago; a failure now means
	 * they changed meanwhile, and the seccomp rules are skipped. */
	s->ok = rc == 0;
out:
	diags_free(&scratch);
}

static void seccomp_free(struct lint_seccomp *s)
{
	policy_srcs_free(&s->srcs);
	arena_free(&s->arena);
	free(s->prof_path);
	free(s->extra_path);
	memset(s, 0, sizeof(*s));
}

/* --- order and fingerprints ----------------------------------------------- */

static size_t file_rank(const struct lint_ctx *c, const struct src_file *f)
{
	size_t i;

	if (f == c->app)
		return 0;
	for (i = 0; i < c->ntools; i++)
		if (f == c->tools[i])
			return i + 1;
	return c->ntools + 1;
}

static int cmp_finding(const void *a, const void *b, void *arg)
{
	const struct lint_ctx *sort_ctx = arg;
	const struct lint_finding *x = a, *y = b;
	size_t rx = file_rank(sort_ctx, x->pos.file), ry = file_rank(sort_ctx, y->pos.file);
	int k;

	if (rx != ry)
		return rx < ry ? -1 : 1;
	if (rx > sort_ctx->ntools && x->pos.file != y->pos.file && (k = strcmp(x->pos.file->path, y->pos.file->path)))
		return k;
	if (x->pos.line != y->pos.line)
		return x->pos.line < y->pos.line ? -1 : 1;
	if (x->pos.col != y->pos.col)
		return x->pos.col < y->pos.col ? -1 : 1;
	if ((k = strcmp(x->rule->id, y->rule->id)) != 0)
		return k;
	return strcmp(x->msg, y->msg);
}

static const char *base_name(const struct src_file *f)
{
	const char *s;

	if (f == NULL || f->path == NULL)
		return "";
	s = strrchr(f->path, '/');
	return s ? s + 1 : f->path;
}

/* BLAKE2b over rule, file base name, subject and an occurrence number for
 * repeats, so the same finding keeps its fingerprint when lines move and a
 * checkout lives under another directory. */
static void fingerprint(struct lint_finding *f, unsigned occurrence)
{
	crypto_generichash_state st;
	unsigned char h[16];
	char occ[16];
	size_t i;

	crypto_generichash_init(&st, NULL, 0, sizeof(h));
	crypto_generichash_update(&st, (const unsigned char *)f->rule->id, strlen(f->rule->id) + 1);
	crypto_generichash_update(&st, (const unsigned char *)base_name(f->pos.file), strlen(base_name(f->pos.file)) + 1);
	crypto_generichash_update(&st, (const unsigned char *)f->subject, strlen(f->subject) + 1);
	snprintf(occ, sizeof(occ), "%u", occurrence);
	crypto_generichash_update(&st, (const unsigned char *)occ, strlen(occ));
	crypto_generichash_final(&st, h, sizeof(h));
	for (i = 0; i < 8; i++)
		snprintf(f->fingerprint + 2 * i, 3, "%02x", h[i]);
}

/* Findings that count as repeats of one another: same rule, same file base
 * name, same subject; ties in report order. */
static int cmp_repeat(const void *a, const void *b)
{
	const struct lint_finding *x = *(const struct lint_finding *const *)a, *y = *(const struct lint_finding *const *)b;
	int k;

	if ((k = strcmp(x->rule->id, y->rule->id)) != 0 || (k = strcmp(base_name(x->pos.file), base_name(y->pos.file))) != 0 ||
	    (k = strcmp(x->subject, y->subject)) != 0)
		return k;
	return x < y ? -1 : x > y;
}

/* Each finding's occurrence number is how many repeats of it come before
 * it; sorted into groups of repeats, that is its place in its group.  A
 * pairwise count took 8 million comparisons for 4000 findings. */
static int fingerprint_all(struct lint_ctx *c)
{
	struct lint_finding **ord;
	size_t i, g = 0;

	if (c->n == 0)
		return 0;
	ord = malloc(c->n * sizeof(*ord));
	if (ord == NULL)
		return -1;
	for (i = 0; i < c->n; i++)
		ord[i] = &c->v[i];
	qsort(ord, c->n, sizeof(*ord), cmp_repeat);
	for (i = 0; i < c->n; i++) {
		if (i > 0 && (ord[i]->rule != ord[g]->rule || strcmp(ord[i]->subject, ord[g]->subject) != 0 ||
			      strcmp(base_name(ord[i]->pos.file), base_name(ord[g]->pos.file)) != 0))
			g = i;
		fingerprint(ord[i], (unsigned)(i - g));
	}
	free(ord);
	return 0;
}

/* --- the pipeline --------------------------------------------------------- */

int lint_run(struct lint_ctx *c, const struct lint_options *opt, const struct src_file *app,
	     const struct src_file *const *tools, size_t ntools, struct diags *d)
{
	struct compile_options copt = { NULL, 0 };
	struct policy_search search;
	const struct lint_rule *cat;
	struct diags scratch;
	char **defdirs = NULL;
	size_t ndef = 0, ncat, i;
	int rc = -1;

	memset(c, 0, sizeof(*c));
	policy_init(&c->p);
	c->opt = opt;
	c->app = app;
	c->tools = tools;
	c->ntools = ntools;
	diags_init(&scratch);
	if (opt->policy_dirs != NULL) {
		copt.policy_dirs = opt->policy_dirs;
		copt.npolicy_dirs = opt->npolicy_dirs;
	} else {
		defdirs = compile_default_policy_dirs(&ndef);
		copt.policy_dirs = (const char *const *)defdirs;
		copt.npolicy_dirs = ndef;
	}
	policy_free(&c->p);
	if (compile_sources_opt(app, tools, ntools, &copt, &c->p, d) != 0)
		goto out;

	/* The trees again, with their marks: the compile dropped its own.
	 * They parsed cleanly a moment ago, so errors here are not expected;
	 * a missing tree only means fewer positions. */
	c->tool_docs = calloc(ntools ? ntools : 1, sizeof(*c->tool_docs));
	if (c->tool_docs == NULL) {
		diag_at(d, DIAG_ERROR, NULL, 0, 0, "out of memory");
		goto out;
	}
	ydoc_parse(app, &c->app_doc, &scratch);
	for (i = 0; i < ntools; i++)
		ydoc_parse(tools[i], &c->tool_docs[i], &scratch);
	search.dirs = copt.policy_dirs;
	search.ndirs = copt.npolicy_dirs;
	seccomp_load(c, &search);

	cat = lint_catalogue(&ncat);
	for (i = 0; i < ncat; i++)
		if (cat[i].check != NULL && lint_rule_sev(c->opt, &cat[i]) != LINT_OFF)
			cat[i].check(c, &cat[i]);
	if (!opt->no_inline_suppressions)
		lint_suppress(c);
	if (c->n > 1)
		qsort_r(c->v, c->n, sizeof(*c->v), cmp_finding, c);
	if (fingerprint_all(c) != 0)
		c->oom = 1;
	if (c->oom) {
		diag_at(d, DIAG_ERROR, NULL, 0, 0, "out of memory while linting");
		goto out;
	}
	rc = 0;
out:
	diags_free(&scratch);
	compile_dirs_free(defdirs, ndef);
	return rc;
}

void lint_ctx_free(struct lint_ctx *c)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		free(c->v[i].msg);
		free(c->v[i].subject);
		free(c->v[i].reason);
	}
	free(c->v);
	ydoc_free(&c->app_doc);
	if (c->tool_docs != NULL)
		for (i = 0; i < c->ntools; i++)
			ydoc_free(&c->tool_docs[i]);
	free(c->tool_docs);
	seccomp_free(&c->sc);
	policy_free(&c->p);
	memset(c, 0, sizeof(*c));
}
