/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy_parse.c - drives the flex/bison front end over files and strings:
 * reading, include resolution with cycle detection, and the one default a
 * policy may have.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grammar/lex_state.h"
#include "grammar/policy.tab.h"
#include "grammar/policy_parse.h"

/* From the flex scanner (reentrant API with prefix pol_). */
typedef void *yyscan_t;
int pol_lex_init_extra(struct lex_state *extra, yyscan_t *scanner);
int pol_lex_destroy(yyscan_t scanner);
void *pol__scan_bytes(const char *bytes, int len, yyscan_t scanner);
int pol_parse(void *scanner, struct lex_state *ls);

#define POLICY_MAX_BYTES (1024u * 1024u)

/* Run the parser over text; the results stay in *ls. */
static int parse_text(struct lex_state *ls, const char *text, size_t len)
{
	yyscan_t scanner = NULL;
	int rc;

	if (len > INT_MAX)
		return -1;
	if (pol_lex_init_extra(ls, &scanner) != 0)
		return -1;
	pol__scan_bytes(text, (int)len, scanner);
	rc = pol_parse(scanner, ls);
	pol_lex_destroy(scanner);
	if (ls->oom)
		diag_at(ls->d, DIAG_ERROR, ls->f, 0, 0, "out of memory");
	return rc == 0 && ls->errors == 0 && !ls->oom ? 0 : -1;
}

int policy_parse_expr(const struct src_file *f, uint32_t line, uint32_t col, const char *text, size_t len,
		      struct arena *a, struct ast_node **out, struct diags *d)
{
	struct lex_state ls;
	int rc;

	memset(&ls, 0, sizeof(ls));
	ls.start = START_EXPR;
	ls.expr_mode = 1;
	ls.a = a;
	ls.d = d;
	ls.f = f;
	ls.line = line;
	ls.col = col;
	ls.base_col = col;
	*out = NULL;
	rc = parse_text(&ls, text, len);
	free(ls.rules);
	free(ls.includes);
	if (rc == 0 && ls.expr == NULL) {
		diag_at(d, DIAG_ERROR, f, line, col, "empty expression");
		rc = -1;
	}
	if (rc == 0)
		*out = ls.expr;
	return rc;
}

/* --- files and includes ------------------------------------------------- */

struct walk {
	const struct policy_search *search;
	struct arena *a;
	struct policy_srcs *srcs;
	struct diags *d;
	char *stack[POLICY_MAX_INCLUDE_DEPTH + 1]; /* real paths being parsed */
	size_t depth;
	struct pol_rule *rules;
	size_t nrules, cap;
	struct pol_file *out;
	const struct src_file *def_file;
};

static struct src_file *srcs_add(struct policy_srcs *s, struct arena *a)
{
	struct src_file *f;

	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;
		struct src_file **v = realloc(s->v, cap * sizeof(*v));

		if (v == NULL)
			return NULL;
		s->v = v;
		s->cap = cap;
	}
	f = arena_alloc(a, sizeof(*f));
	if (f != NULL)
		s->v[s->n++] = f;
	return f;
}

/* Move a file's path, text and position index into the arena:
 * diagnostics quote the file after the parse, for as long as the arena's
 * owner (the policy) lives. */
static int src_adopt(struct src_file *f, struct arena *a)
{
	char *path = f->path ? arena_strdup(a, f->path) : NULL;
	char *text = f->text ? arena_strndup(a, f->text, f->len) : NULL;

	if ((f->path != NULL && path == NULL) || (f->text != NULL && text == NULL) || src_index_adopt(f, a) != 0)
		return -1;
	free(f->path);
	free(f->text);
	f->path = path;
	f->text = text;
	return 0;
}

void policy_srcs_free(struct policy_srcs *s)
{
	/* The files themselves live in the arena (src_adopt). */
	free(s->v);
	free(s->ids);
	memset(s, 0, sizeof(*s));
}

/* Whether the file st names was read already; if not, remember it.
 * Returns 1 (seen), 0 (new, remembered) or -1 (out of memory). */
static int srcs_seen(struct policy_srcs *s, const struct stat *st)
{
	size_t i;

	for (i = 0; i < s->nids; i++)
		if (s->ids[i].dev == st->st_dev && s->ids[i].ino == st->st_ino)
			return 1;
	if (s->nids == s->capids) {
		size_t cap = s->capids ? s->capids * 2 : 8;
		struct policy_file_id *v = realloc(s->ids, cap * sizeof(*v));

		if (v == NULL)
			return -1;
		s->ids = v;
		s->capids = cap;
	}
	s->ids[s->nids].dev = st->st_dev;
	s->ids[s->nids].ino = st->st_ino;
	s->nids++;
	return 0;
}

static int file_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

static char *join(const char *dir, size_t dirlen, const char *name)
{
	size_t nlen = strlen(name);
	char *p = malloc(dirlen + 1 + nlen + 1);

	if (p == NULL)
		return NULL;
	memcpy(p, dir, dirlen);
	p[dirlen] = '/';
	memcpy(p + dirlen + 1, name, nlen + 1);
	return p;
}

int policy_find_profile(const char *name, const struct policy_search *search, char **path)
{
	char file[NAME_MAX + 1];
	size_t i;

	*path = NULL;
	if (snprintf(file, sizeof(file), "%s.policy", name) >= (int)sizeof(file))
		return -1;
	for (i = 0; search != NULL && i < search->ndirs; i++) {
		char *p = join(search->dirs[i], strlen(search->dirs[i]), file);

		if (p != NULL && file_exists(p)) {
			*path = p;
			return 0;
		}
		free(p);
	}
	return -1;
}

/* An include names a file relative to the including file, then on the
 * search path; an absolute include is taken as it is. */
static char *resolve_include(const struct walk *w, const char *from, const char *name)
{
	const char *slash = strrchr(from, '/');
	size_t i;
	char *p;

	if (name[0] == '/')
		return file_exists(name) ? strdup(name) : NULL;
	p = slash ? join(from, (size_t)(slash - from), name) : strdup(name);
	if (p != NULL && file_exists(p))
		return p;
	free(p);
	for (i = 0; w->search != NULL && i < w->search->ndirs; i++) {
		p = join(w->search->dirs[i], strlen(w->search->dirs[i]), name);
		if (p != NULL && file_exists(p))
			return p;
		free(p);
	}
	return NULL;
}

static int walk_file(struct walk *w, const char *path, const char *shown, const struct ast_loc *from);

static int walk_include(struct walk *w, const char *path, const struct pol_include *inc)
{
	char *p = resolve_include(w, path, inc->path);
	int rc;

	if (p == NULL) {
		diag_at(w->d, DIAG_ERROR, inc->loc.file, inc->loc.line, inc->loc.col,
			"cannot find included file \"%s\"", inc->path);
		return -1;
	}
	rc = walk_file(w, p, inc->path, &inc->loc);
	free(p);
	return rc;
}

/* Append ls's rules [from, from + n). */
static int walk_append(struct walk *w, const struct lex_state *ls, size_t from, size_t n)
{
	if (w->nrules + n > w->cap) {
		size_t cap = w->cap ? w->cap : 64;
		struct pol_rule *v;

		while (cap < w->nrules + n)
			cap *= 2;
		v = realloc(w->rules, cap * sizeof(*v));
		if (v == NULL)
			return -1;
		w->rules = v;
		w->cap = cap;
	}
	if (n > 0) /* ls->rules is NULL for a file without rules */
		memcpy(w->rules + w->nrules, ls->rules + from, n * sizeof(*ls->rules));
	w->nrules += n;
	return 0;
}

static int loc_before(const struct ast_loc *a, const struct ast_loc *b)
{
	return a->line < b->line || (a->line == b->line && a->col < b->col);
}

/* The file's rules with each include's rules where the include stands:
 * "as if its statements stood here", so a duplicate is reported at the
 * later of two rules in reading order. */
static int walk_body(struct walk *w, const char *path, const struct lex_state *ls)
{
	size_t i, r = 0, from;
	int rc = 0;

	for (i = 0; i < ls->nincludes; i++) {
		const struct pol_include *inc = &ls->includes[i];

		for (from = r; r < ls->nrules && loc_before(&ls->rules[r].loc, &inc->loc); r++)
			;
		if (walk_append(w, ls, from, r - from) != 0)
			rc = -1;
		if (walk_include(w, path, inc) != 0)
			rc = -1;
	}
	if (walk_append(w, ls, r, ls->nrules - r) != 0)
		rc = -1;
	return rc;
}

/* Parse one file already read into f, then what it includes.  real (owned
 * here) is its identity on the include stack. */
static int walk_src(struct walk *w, struct src_file *f, char *real)
{
	struct lex_state ls;
	size_t i;
	int rc;

	memset(&ls, 0, sizeof(ls));
	ls.start = START_POLICY;
	ls.a = w->a;
	ls.d = w->d;
	ls.f = f;
	ls.line = 1;
	ls.col = 1;
	ls.base_col = 1;
	rc = parse_text(&ls, f->text, f->len);
	if (ls.has_default) {
		if (w->out->has_default) {
			diag_at(w->d, DIAG_ERROR, f, ls.def.loc.line, ls.def.loc.col,
				"a second 'default': a policy has one default action");
			diag_at(w->d, DIAG_NOTE, w->def_file, w->out->def.loc.line, w->out->def.loc.col,
				"the first 'default' is here");
			rc = -1;
		} else {
			w->out->has_default = 1;
			w->out->def = ls.def;
			w->def_file = f;
		}
	}
	for (i = 0; i < ls.nrules; i++)
		ls.rules[i].included = w->depth > 0;
	w->stack[w->depth++] = real;
	if (walk_body(w, f->path, &ls) != 0)
		rc = -1;
	free(w->stack[--w->depth]);
	free(ls.rules);
	free(ls.includes);
	return rc;
}

/* shown: the name as the user wrote it, for messages. */
static int walk_file(struct walk *w, const char *path, const char *shown, const struct ast_loc *from)
{
	struct src_file *f;
	struct stat st;
	char *real = NULL;
	size_t i;
	int rd, seen;

	real = realpath(path, NULL);
	if (real == NULL) {
		if (from != NULL)
			diag_at(w->d, DIAG_ERROR, from->file, from->line, from->col, "cannot open \"%s\": %s", shown,
				strerror(errno));
		else
			diag_at(w->d, DIAG_ERROR, NULL, 0, 0, "cannot open policy \"%s\": %s", path, strerror(errno));
		return -1;
	}
	for (i = 0; i < w->depth; i++) {
		if (strcmp(w->stack[i], real) == 0) {
			diag_at(w->d, DIAG_ERROR, from->file, from->line, from->col,
				"include cycle: \"%s\" is already being read", shown);
			goto fail;
		}
	}
	if (stat(real, &st) != 0) {
		diag_at(w->d, DIAG_ERROR, from ? from->file : NULL, from ? from->line : 0, from ? from->col : 0,
			"cannot open \"%s\": %s", shown, strerror(errno));
		goto fail;
	}
	/* Read each file once: base.policy reached from a profile and from
	 * its extra file would otherwise give every one of its rules twice,
	 * each a "conflicting rules" error. */
	seen = srcs_seen(w->srcs, &st);
	if (seen < 0) {
		diag_at(w->d, DIAG_ERROR, NULL, 0, 0, "out of memory");
		goto fail;
	}
	if (seen > 0) {
		free(real);
		return 0;
	}
	if (w->depth >= POLICY_MAX_INCLUDE_DEPTH) {
		diag_at(w->d, DIAG_ERROR, from->file, from->line, from->col, "includes nest deeper than %d files",
			POLICY_MAX_INCLUDE_DEPTH);
		goto fail;
	}
	f = srcs_add(w->srcs, w->a);
	if (f == NULL)
		goto fail;
	rd = src_read(path, POLICY_MAX_BYTES, f, w->d);
	if (src_adopt(f, w->a) != 0 || rd != 0)
		goto fail;
	return walk_src(w, f, real);
fail:
	free(real);
	return -1;
}

static int parse_finish(struct walk *w, struct pol_file *out, int rc)
{
	out->rules = NULL;
	out->nrules = 0;
	if (w->nrules > 0) {
		out->rules = arena_calloc(w->a, w->nrules, sizeof(*out->rules));
		if (out->rules == NULL) {
			rc = -1;
		} else {
			memcpy(out->rules, w->rules, w->nrules * sizeof(*w->rules));
			out->nrules = w->nrules;
		}
	}
	free(w->rules);
	return rc;
}

int policy_parse_mem(const char *name, const char *text, size_t len, const struct policy_search *search,
		     struct arena *a, struct policy_srcs *srcs, struct pol_file *out, struct diags *d)
{
	struct walk w;
	struct src_file *f;
	char *real;
	int rd;

	memset(&w, 0, sizeof(w));
	w.search = search;
	w.a = a;
	w.srcs = srcs;
	w.d = d;
	w.out = out;
	f = srcs_add(srcs, a);
	real = strdup(name);
	if (f == NULL || real == NULL) {
		free(real);
		return parse_finish(&w, out, -1);
	}
	rd = src_from_mem(name, text, len, POLICY_MAX_BYTES, f, d);
	if (src_adopt(f, a) != 0 || rd != 0) {
		free(real);
		return parse_finish(&w, out, -1);
	}
	return parse_finish(&w, out, walk_src(&w, f, real));
}

int policy_parse_file(const char *path, const struct policy_search *search, struct arena *a,
		      struct policy_srcs *srcs, struct pol_file *out, struct diags *d)
{
	struct walk w;

	memset(&w, 0, sizeof(w));
	w.search = search;
	w.a = a;
	w.srcs = srcs;
	w.d = d;
	w.out = out;
	return parse_finish(&w, out, walk_file(&w, path, path, NULL));
}
