/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lex.c - token builders for policy.l, kept out of the generated scanner so
 * they compile with the project's full warning set.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grammar/lex_state.h"
#include "grammar/policy.tab.h"
#include "grammar/lex_funcs.h"

void lex_error_at(struct lex_state *ls, uint32_t line, uint32_t col, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	diag_at(ls->d, DIAG_ERROR, ls->f, line, col, "%s", msg);
	ls->errors++;
}

struct ast_loc lex_loc(const struct lex_state *ls, const struct pol_loc *l)
{
	struct ast_loc a;

	a.file = ls->f;
	a.line = (uint32_t)l->first_line;
	a.col = (uint32_t)l->first_column;
	return a;
}

struct ast_node *lex_node(struct lex_state *ls, enum ast_kind kind, const struct pol_loc *l)
{
	struct ast_node *n = arena_alloc(ls->a, sizeof(*n));

	if (n == NULL) {
		ls->oom = 1;
		return NULL;
	}
	n->kind = kind;
	n->loc = lex_loc(ls, l);
	return n;
}

/* Called for every token and every skipped byte run: the token starts at
 * the current position, which then moves past its text. */
void lex_advance(struct lex_state *ls, struct pol_loc *l, const char *text, size_t len)
{
	size_t i;

	l->first_line = (int)ls->line;
	l->first_column = (int)ls->col;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c == '\n') {
			ls->line++;
			ls->col = 1;
		} else if ((c & 0xC0) != 0x80) {
			ls->col++;
		}
	}
	l->last_line = (int)ls->line;
	l->last_column = (int)ls->col;
	if (ls->col > LEX_MAX_LINE && ls->long_line != ls->line) {
		ls->long_line = ls->line;
		lex_error_at(ls, ls->line, 1, "line is longer than %d characters", LEX_MAX_LINE);
	}
}

int lex_int(struct lex_state *ls, POL_STYPE *v, const struct pol_loc *l, const char *text)
{
	struct ast_node *n = lex_node(ls, AST_INT, l);
	const char *digits = text;
	unsigned long long x;
	char *end = NULL;
	int base = 10;

	v->node = n;
	if (n == NULL)
		return INT;
	if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
		base = 16;
		digits = text + 2;
	} else if (text[0] == '0' && (text[1] == 'o' || text[1] == 'O')) {
		base = 8;
		digits = text + 2;
	} else if (text[0] == '0' && text[1] != '\0') {
		/* C would read 0644 as octal and Python refuses it: neither
		 * reading is safe to guess.  The hint offers only readings
		 * that exist: 09 has no octal one, and 00 is 0. */
		const char *dec = text + strspn(text, "0");

		if (*dec == '\0')
			lex_error_at(ls, n->loc.line, n->loc.col, "'%s': a leading zero is ambiguous; write 0", text);
		else if (dec[strspn(dec, "01234567")] != '\0')
			lex_error_at(ls, n->loc.line, n->loc.col, "'%s': a leading zero is ambiguous; write %s", text,
				     dec);
		else
			lex_error_at(ls, n->loc.line, n->loc.col, "'%s': a leading zero is ambiguous; write 0o%s or %s",
				     text, dec, dec);
		return INT;
	}
	errno = 0;
	x = strtoull(digits, &end, base);
	if (errno == ERANGE || end == digits || *end != '\0') {
		lex_error_at(ls, n->loc.line, n->loc.col, "integer literal '%s' does not fit in 64 bits", text);
		return INT;
	}
	n->ival = x;
	return INT;
}

int lex_float(struct lex_state *ls, POL_STYPE *v, const struct pol_loc *l, const char *text)
{
	struct ast_node *n = lex_node(ls, AST_NUM, l);
	char *end = NULL;

	v->node = n;
	if (n == NULL)
		return FLOAT;
	errno = 0;
	n->fval = strtod(text, &end);
	if (errno == ERANGE || *end != '\0' || !isfinite(n->fval))
		lex_error_at(ls, n->loc.line, n->loc.col, "number literal '%s' is out of range", text);
	return FLOAT;
}

int lex_ident(struct lex_state *ls, POL_STYPE *v, const struct pol_loc *l, const char *text, size_t len)
{
	static const struct {
		const char *word;
		int token;
		int policy_only;
	} kw[] = {
		{ "default", KW_DEFAULT, 1 }, { "include", KW_INCLUDE, 1 }, { "allow", KW_ALLOW, 1 },
		{ "kill", KW_KILL, 1 },       { "log", KW_LOG, 1 },         { "trap", KW_TRAP, 1 },
		{ "errno", KW_ERRNO, 1 },     { "in", KW_IN, 0 },           { "true", KW_TRUE, 0 },
		{ "false", KW_FALSE, 0 },
	};
	struct ast_node *n = lex_node(ls, AST_IDENT, l);
	size_t i;

	v->node = n;
	if (n != NULL) {
		n->str = arena_strndup(ls->a, text, len);
		n->len = len;
		if (n->str == NULL)
			ls->oom = 1;
	}
	for (i = 0; i < sizeof(kw) / sizeof(kw[0]); i++)
		if (strcmp(text, kw[i].word) == 0 && !(kw[i].policy_only && ls->expr_mode))
			return kw[i].token;
	return IDENT;
}

/* text is the whole literal with its quotes; escapes: \" \\ \n \t. */
static int string_node(struct lex_state *ls, POL_STYPE *v, const struct pol_loc *l, const char *text,
		       size_t len, int closed)
{
	struct ast_node *n = lex_node(ls, AST_STR, l);
	size_t i, end = closed ? len - 1 : len, o = 0;
	char *s;

	v->node = n;
	if (n == NULL)
		return STRING;
	s = arena_alloc(ls->a, len + 1);
	if (s == NULL) {
		ls->oom = 1;
		return STRING;
	}
	for (i = 1; i < end; i++) {
		if (text[i] != '\\') {
			s[o++] = text[i];
			continue;
		}
		if (++i >= end)
			break;
		switch (text[i]) {
		case '"': s[o++] = '"'; break;
		case '\\': s[o++] = '\\'; break;
		case 'n': s[o++] = '\n'; break;
		case 't': s[o++] = '\t'; break;
		default:
			lex_error_at(ls, n->loc.line, n->loc.col, "unknown escape '\\%c' in string (use \\\", \\\\, \\n or \\t)",
				     text[i]);
			break;
		}
	}
	s[o] = '\0';
	n->str = s;
	n->len = o;
	return STRING;
}

int lex_string(struct lex_state *ls, POL_STYPE *v, const struct pol_loc *l, const char *text, size_t len)
{
	return string_node(ls, v, l, text, len, 1);
}

int lex_unterminated(struct lex_state *ls, POL_STYPE *v, const struct pol_loc *l, const char *text, size_t len)
{
	lex_error_at(ls, (uint32_t)l->first_line, (uint32_t)l->first_column, "unterminated string");
	return string_node(ls, v, l, text, len, 0);
}

void lex_bad_char(struct lex_state *ls, const struct pol_loc *l, const char *text, size_t len)
{
	unsigned char c = (unsigned char)text[0];

	if (len == 1 && c >= 0x20 && c < 0x7f)
		lex_error_at(ls, (uint32_t)l->first_line, (uint32_t)l->first_column, "unexpected character '%c'", c);
	else if (len == 1)
		lex_error_at(ls, (uint32_t)l->first_line, (uint32_t)l->first_column, "unexpected byte 0x%02x", c);
	else
		lex_error_at(ls, (uint32_t)l->first_line, (uint32_t)l->first_column,
			     "unexpected non-ASCII character (names and operators are ASCII)");
}
