/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy.y - the grammar of the policy language (docs/policy-language.md).
 *
 * Actions only build nodes and collect rules; every judgement (does the
 * syscall exist, is the constant known, do the types fit) happens in a later
 * pass (grammar/policy_check.c, compiler/constraint_gen.c), as in OpenBSD's
 * parse.y files.  `error` productions let one run report every bad
 * statement of a file.
 */
%define api.pure full
%define api.prefix {pol_}
%define api.location.type {struct pol_loc}
%define parse.error verbose
%locations
%parse-param {void *scanner} {struct lex_state *ls}
%lex-param {void *scanner}

%code requires {
#include "grammar/ast.h"
#include "grammar/lex_state.h"
}

%code {
#include <stdlib.h>
#include <string.h>

/* Bounded parser stack: the expression tree, which later passes walk
 * recursively, can be no deeper than this. */
#define YYMAXDEPTH 400
#define YYINITDEPTH 64

int pol_lex(POL_STYPE *lval, struct pol_loc *lloc, void *scanner);
static void pol_error(struct pol_loc *l, void *scanner, struct lex_state *ls, const char *msg);
static struct ast_node *mk_bin(struct lex_state *ls, enum ast_op op, struct ast_node *a, struct ast_node *b);
static struct ast_node *mk_un(struct lex_state *ls, enum ast_op op, struct ast_node *a, const struct pol_loc *l);
static struct ast_node *mk_list(struct lex_state *ls, struct ast_node *seq, const struct pol_loc *l);
static struct ast_node *seq_add(struct lex_state *ls, struct ast_node *seq, struct ast_node *item);
static void add_rules(struct lex_state *ls, const struct pol_action *act, struct ast_node *names);
static void add_cond_rule(struct lex_state *ls, const struct pol_action *act, struct ast_node *name,
			  struct ast_node *args, struct ast_node *cond);
static void set_default(struct lex_state *ls, const struct pol_action *act);
static void add_include(struct lex_state *ls, struct ast_node *path);
static struct pol_action mk_action(struct lex_state *ls, enum pol_action_kind k, const struct pol_loc *l,
				   struct ast_node *arg);
}

%union {
	struct ast_node *node;
	struct pol_action action;
}

%token START_POLICY START_EXPR
%token <node> INT "integer" FLOAT "number" STRING "string" IDENT "name"
%token <node> KW_DEFAULT "default" KW_INCLUDE "include" KW_ALLOW "allow" KW_KILL "kill"
%token <node> KW_LOG "log" KW_TRAP "trap" KW_ERRNO "errno"
%token <node> KW_IN "in" KW_TRUE "true" KW_FALSE "false"
%token AND "&&" OR "||" EQ "==" NE "!=" LE "<=" GE ">=" LT "<" GT ">"
%token LEXERROR "invalid token"

%type <node> expr exprs list name names argnames
%type <action> action

%left OR
%left AND
%precedence '!'
%nonassoc EQ NE LT LE GT GE KW_IN
%left '|'
%left '&'
%precedence UMINUS

%%

start
	: START_POLICY stmts
	| START_EXPR expr		{ ls->expr = $2; }
	;

stmts
	: %empty
	| stmts stmt
	;

stmt
	: KW_DEFAULT action ';'		{ set_default(ls, &$2); }
	| KW_INCLUDE STRING ';'		{ add_include(ls, $2); }
	| action '{' names opt_comma '}'	{ add_rules(ls, &$1, $3); }
	| action name '(' argnames ')' '{' expr '}'	{ add_cond_rule(ls, &$1, $2, $4, $7); }
	| action name '(' ')' '{' expr '}'	{ add_cond_rule(ls, &$1, $2, NULL, $6); }
	| error ';'
	| error '}'
	;

action
	: KW_ALLOW			{ $$ = mk_action(ls, POL_ALLOW, &@1, NULL); }
	| KW_KILL			{ $$ = mk_action(ls, POL_KILL, &@1, NULL); }
	| KW_LOG			{ $$ = mk_action(ls, POL_LOG, &@1, NULL); }
	| KW_TRAP			{ $$ = mk_action(ls, POL_TRAP, &@1, NULL); }
	| KW_ERRNO '(' INT ')'		{ $$ = mk_action(ls, POL_ERRNO, &@1, $3); }
	| KW_ERRNO '(' IDENT ')'	{ $$ = mk_action(ls, POL_ERRNO, &@1, $3); }
	;

/* Syscall names may be spelled like keywords: kill(2) and syslog-ish
 * names must be listable. */
name
	: IDENT | KW_KILL | KW_LOG | KW_TRAP | KW_ALLOW | KW_ERRNO | KW_DEFAULT | KW_INCLUDE
	| KW_IN | KW_TRUE | KW_FALSE
	;

names
	: name				{ $$ = seq_add(ls, NULL, $1); }
	| names ',' name		{ $$ = seq_add(ls, $1, $3); }
	;

argnames
	: name				{ $$ = seq_add(ls, NULL, $1); }
	| argnames ',' name		{ $$ = seq_add(ls, $1, $3); }
	;

opt_comma
	: %empty
	| ','
	;

expr
	: expr OR expr			{ $$ = mk_bin(ls, AST_OP_OR, $1, $3); }
	| expr AND expr			{ $$ = mk_bin(ls, AST_OP_AND, $1, $3); }
	| '!' expr			{ $$ = mk_un(ls, AST_OP_NOT, $2, &@1); }
	| expr EQ expr			{ $$ = mk_bin(ls, AST_OP_EQ, $1, $3); }
	| expr NE expr			{ $$ = mk_bin(ls, AST_OP_NE, $1, $3); }
	| expr LT expr			{ $$ = mk_bin(ls, AST_OP_LT, $1, $3); }
	| expr LE expr			{ $$ = mk_bin(ls, AST_OP_LE, $1, $3); }
	| expr GT expr			{ $$ = mk_bin(ls, AST_OP_GT, $1, $3); }
	| expr GE expr			{ $$ = mk_bin(ls, AST_OP_GE, $1, $3); }
	| expr KW_IN list		{ $$ = mk_bin(ls, AST_OP_IN, $1, $3); }
	| expr '|' expr			{ $$ = mk_bin(ls, AST_OP_BOR, $1, $3); }
	| expr '&' expr			{ $$ = mk_bin(ls, AST_OP_BAND, $1, $3); }
	| '-' expr %prec UMINUS		{ $$ = mk_un(ls, AST_OP_NEG, $2, &@1); }
	| '(' expr ')'			{ $$ = $2; }
	| INT | FLOAT | STRING | IDENT
	| KW_TRUE			{ $$ = $1; if ($$) { $$->kind = AST_BOOL; $$->ival = 1; } }
	| KW_FALSE			{ $$ = $1; if ($$) { $$->kind = AST_BOOL; $$->ival = 0; } }
	| IDENT '(' ')'			{ $$ = $1; if ($$) $$->kind = AST_CALL; }
	| IDENT '(' exprs ')'		{ $$ = $1; if ($$) { $$->kind = AST_CALL; $$->items = $3 ? $3->items : NULL; $$->n = $3 ? $3->n : 0; } }
	| list
	;

list
	: '[' ']'			{ $$ = mk_list(ls, NULL, &@1); }
	| '[' exprs opt_comma ']'	{ $$ = mk_list(ls, $2, &@1); }
	;

exprs
	: expr				{ $$ = seq_add(ls, NULL, $1); }
	| exprs ',' expr		{ $$ = seq_add(ls, $1, $3); }
	;

%%

static void pol_error(struct pol_loc *l, void *scanner, struct lex_state *ls, const char *msg)
{
	(void)scanner;
	/* Bison's stack limit is our expression depth limit. */
	if (strcmp(msg, "memory exhausted") == 0)
		msg = "expression nested too deeply";
	lex_error_at(ls, (uint32_t)l->first_line, (uint32_t)l->first_column, "%s", msg);
}

static struct ast_node *mk_bin(struct lex_state *ls, enum ast_op op, struct ast_node *a, struct ast_node *b)
{
	struct ast_node *n;

	if (a == NULL || b == NULL)
		return NULL;
	n = arena_alloc(ls->a, sizeof(*n));
	if (n == NULL) {
		ls->oom = 1;
		return NULL;
	}
	n->kind = AST_BINARY;
	n->op = op;
	n->loc = a->loc;
	n->a = a;
	n->b = b;
	return n;
}

static struct ast_node *mk_un(struct lex_state *ls, enum ast_op op, struct ast_node *a, const struct pol_loc *l)
{
	struct ast_node *n;

	if (a == NULL)
		return NULL;
	n = lex_node(ls, AST_UNARY, l);
	if (n == NULL)
		return NULL;
	n->op = op;
	n->a = a;
	return n;
}

/* A growing list is kept in a scratch AST_LIST node; the arena does not
 * free, so the old items array is simply left behind when it grows. */
static struct ast_node *seq_add(struct lex_state *ls, struct ast_node *seq, struct ast_node *item)
{
	struct ast_node **items;

	if (item == NULL)
		return seq;
	if (seq == NULL) {
		seq = arena_alloc(ls->a, sizeof(*seq));
		if (seq == NULL) {
			ls->oom = 1;
			return NULL;
		}
		seq->kind = AST_LIST;
		seq->loc = item->loc;
	}
	/* Capacity doubles at powers of two. */
	if ((seq->n & (seq->n - 1)) == 0) {
		size_t cap = seq->n ? seq->n * 2 : 1;

		items = arena_calloc(ls->a, cap, sizeof(*items));
		if (items == NULL) {
			ls->oom = 1;
			return seq;
		}
		if (seq->n)
			memcpy(items, seq->items, seq->n * sizeof(*items));
		seq->items = items;
	}
	seq->items[seq->n++] = item;
	return seq;
}

static struct ast_node *mk_list(struct lex_state *ls, struct ast_node *seq, const struct pol_loc *l)
{
	struct ast_node *n = lex_node(ls, AST_LIST, l);

	if (n != NULL && seq != NULL) {
		n->items = seq->items;
		n->n = seq->n;
	}
	return n;
}

static struct pol_action mk_action(struct lex_state *ls, enum pol_action_kind k, const struct pol_loc *l,
				   struct ast_node *arg)
{
	struct pol_action a;

	memset(&a, 0, sizeof(a));
	a.kind = k;
	a.loc = lex_loc(ls, l);
	if (arg != NULL) {
		if (arg->kind == AST_INT)
			a.errno_value = arg->ival;
		else
			a.errno_name = arg->str;
	}
	return a;
}

static void set_default(struct lex_state *ls, const struct pol_action *act)
{
	/* A second default in one file is judged by the driver, which also
	 * sees defaults of included files. */
	if (ls->has_default) {
		lex_error_at(ls, act->loc.line, act->loc.col, "a second 'default' in this file");
		diag_at(ls->d, DIAG_NOTE, ls->f, ls->def.loc.line, ls->def.loc.col, "the first 'default' is here");
		return;
	}
	ls->has_default = 1;
	ls->def = *act;
}

static void add_include(struct lex_state *ls, struct ast_node *path)
{
	if (path == NULL)
		return;
	if (ls->nincludes == ls->capincludes) {
		size_t cap = ls->capincludes ? ls->capincludes * 2 : 4;
		struct pol_include *v = realloc(ls->includes, cap * sizeof(*v));

		if (v == NULL) {
			ls->oom = 1;
			return;
		}
		ls->includes = v;
		ls->capincludes = cap;
	}
	ls->includes[ls->nincludes].path = path->str;
	ls->includes[ls->nincludes].loc = path->loc;
	ls->nincludes++;
}

static struct pol_rule *rule_new(struct lex_state *ls)
{
	if (ls->nrules == ls->caprules) {
		size_t cap = ls->caprules ? ls->caprules * 2 : 64;
		struct pol_rule *v = realloc(ls->rules, cap * sizeof(*v));

		if (v == NULL) {
			ls->oom = 1;
			return NULL;
		}
		ls->rules = v;
		ls->caprules = cap;
	}
	memset(&ls->rules[ls->nrules], 0, sizeof(ls->rules[0]));
	return &ls->rules[ls->nrules++];
}

static void add_rules(struct lex_state *ls, const struct pol_action *act, struct ast_node *names)
{
	size_t i;

	for (i = 0; names != NULL && i < names->n; i++) {
		struct pol_rule *r = rule_new(ls);

		if (r == NULL)
			return;
		r->action = *act;
		r->syscall = names->items[i]->str;
		r->loc = names->items[i]->loc;
	}
}

static void add_cond_rule(struct lex_state *ls, const struct pol_action *act, struct ast_node *name,
			  struct ast_node *args, struct ast_node *cond)
{
	struct pol_rule *r;
	size_t i, n = args ? args->n : 0;

	if (name == NULL || cond == NULL)
		return;
	r = rule_new(ls);
	if (r == NULL)
		return;
	r->action = *act;
	r->syscall = name->str;
	r->loc = name->loc;
	r->cond = cond;
	r->nargs = n;
	if (n > 0) {
		r->argnames = arena_calloc(ls->a, n, sizeof(*r->argnames));
		r->argloc = arena_calloc(ls->a, n, sizeof(*r->argloc));
		if (r->argnames == NULL || r->argloc == NULL) {
			ls->oom = 1;
			r->nargs = 0;
			return;
		}
		for (i = 0; i < n; i++) {
			r->argnames[i] = args->items[i]->str;
			r->argloc[i] = args->items[i]->loc;
		}
	}
}
