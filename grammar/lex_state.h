/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lex_state.h - what the lexer and the parser share for one input, and the
 * lexer's helper functions (grammar/lex.c).
 */
#ifndef CORDON_LEX_STATE_H
#define CORDON_LEX_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "compiler/diag.h"
#include "cordon/arena.h"
#include "grammar/ast.h"

#define LEX_MAX_LINE 4096 /* columns */

struct pol_include {
	const char *path;
	struct ast_loc loc;
};

struct lex_state {
	int start;     /* first token to hand out (START_POLICY / START_EXPR), then 0 */
	int expr_mode; /* keywords of policy files are plain names in expressions */
	struct arena *a;
	struct diags *d;
	const struct src_file *f;
	uint32_t line, col;     /* position of the next character */
	uint32_t base_col;      /* expressions: column of the text's first char */
	uint32_t long_line;     /* last line reported as too long */
	size_t errors;
	/* Parser results. */
	struct pol_rule *rules;
	size_t nrules, caprules;
	struct pol_include *includes;
	size_t nincludes, capincludes;
	int has_default;
	struct pol_action def;
	struct ast_node *expr;
	int oom;
};

/* The location type bison uses (YYLTYPE): first position of the token. */
struct pol_loc {
	int first_line, first_column, last_line, last_column;
};

void lex_error_at(struct lex_state *ls, uint32_t line, uint32_t col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
struct ast_loc lex_loc(const struct lex_state *ls, const struct pol_loc *l);
struct ast_node *lex_node(struct lex_state *ls, enum ast_kind kind, const struct pol_loc *l);

#endif
