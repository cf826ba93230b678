/* SPDX-License-Identifier: Apache-2.0 */
/*
 * constraint_gen.c - compile one tool constraint to checked bytecode.
 *
 * One recursive walk both types a node and emits its code, left operand
 * first, so the stack at run time mirrors the walk.  A node whose subtree
 * already produced an error has type CG_ERR, and nothing above it reports
 * again: one mistake, one message, while errors in unrelated parts of the
 * same expression are all reported.
 *
 * Code shapes (docs/constraints.md lists the language):
 *
 *   a && b      a; JF L; b; L:        JF keeps a false a as the result,
 *   a || b      a; JT L; b; L:        and pops a true one before b
 *   x < y       x; [TONUM]; y; [TONUM]; LT     ints meet numbers as numbers
 *   s in [..]   s; IN list                     strings: one op, STRLIST
 *   x in [..]   x; v1; EQ; JT L; x; v2; EQ; JT L; ... x; vn; EQ; L:
 *               (integers, numbers, booleans: the same as x == v1 || ...)
 *
 * Integer-typed code never contains a jump (jumps only come from && || and
 * `in`, which are boolean), which is what makes inserting a TONUM after an
 * integer left operand, once the right operand turns out to be a number,
 * safe: nothing jumps across the insertion point.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/constraint_gen.h"

/* Node types: the cpol_type values, and this one for "already reported". */
#define CG_ERR 0u

struct cg {
	const struct constraint_src *s;
	struct constraint_code *code;
	size_t start;         /* first instruction of this program */
	uint32_t depth;       /* stack depth on the fall-through path */
	uint32_t max_depth;
	int errors;
	int oom;
};

/* A literal after folding unary minus: `-5`, `-2.5`. */
struct cg_lit {
	uint32_t type; /* CPOL_T_INTEGER, NUMBER, STRING, BOOLEAN; CG_ERR */
	int64_t i;
	double f;
	const struct ast_node *node;
};

static const char *const cg_functions[] = { "ends_with", "has", "len", "starts_with" };

static const char *cg_op_text(enum ast_op op)
{
	switch (op) {
	case AST_OP_OR: return "||";
	case AST_OP_AND: return "&&";
	case AST_OP_NOT: return "!";
	case AST_OP_NEG: return "-";
	case AST_OP_EQ: return "==";
	case AST_OP_NE: return "!=";
	case AST_OP_LT: return "<";
	case AST_OP_LE: return "<=";
	case AST_OP_GT: return ">";
	case AST_OP_GE: return ">=";
	case AST_OP_IN: return "in";
	case AST_OP_BAND: return "&";
	case AST_OP_BOR: return "|";
	default: return "?";
	}
}

/* "an integer", "a string": the type as a message names it. */
static const char *cg_a(uint32_t type)
{
	switch (type) {
	case CPOL_T_STRING: return "a string";
	case CPOL_T_INTEGER: return "an integer";
	case CPOL_T_NUMBER: return "a number";
	case CPOL_T_BOOLEAN: return "a boolean";
	case CPOL_T_ARRAY: return "an array";
	case CPOL_T_OBJECT: return "an object";
	default: return "an unknown type";
	}
}

__attribute__((format(printf, 3, 4))) static void cg_error(struct cg *g, const struct ast_node *at, const char *fmt,
							     ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	diag_at(g->s->d, DIAG_ERROR, at->loc.file, at->loc.line, at->loc.col, "%s: %s", g->s->path, msg);
	g->errors++;
}

/* ---- emitting ---------------------------------------------------------- */

/* Room for one more instruction. */
static int cg_room(struct cg *g)
{
	struct constraint_code *c = g->code;
	struct cpol_insn *v;
	size_t cap;

	if (c->n < c->cap)
		return 0;
	cap = c->cap ? c->cap * 2 : 64;
	v = realloc(c->v, cap * sizeof(*v));
	if (v == NULL) {
		g->oom = 1;
		return -1;
	}
	c->v = v;
	c->cap = cap;
	return 0;
}

/* How an op changes the fall-through stack depth. */
static int cg_effect(uint8_t op)
{
	switch (op) {
	case CPOL_OP_PARAM:
	case CPOL_OP_HAS:
	case CPOL_OP_INT:
	case CPOL_OP_NUM:
	case CPOL_OP_BOOL:
	case CPOL_OP_STR:
		return 1;
	case CPOL_OP_EQ:
	case CPOL_OP_NE:
	case CPOL_OP_LT:
	case CPOL_OP_LE:
	case CPOL_OP_GT:
	case CPOL_OP_GE:
	case CPOL_OP_JF:
	case CPOL_OP_JT:
	case CPOL_OP_RET:
		return -1;
	default:
		return 0;
	}
}

/* Append one instruction; returns its index, or SIZE_MAX when out of
 * memory.  Once an error is reported nothing more is emitted: the code is
 * dropped anyway, and the walk goes on only to find further errors. */
static size_t cg_emit(struct cg *g, uint8_t op, uint8_t type, uint32_t a)
{
	struct cpol_insn *in;
	int e = cg_effect(op);

	if (g->errors || g->oom || cg_room(g) < 0)
		return SIZE_MAX;
	in = &g->code->v[g->code->n];
	memset(in, 0, sizeof(*in));
	in->op = op;
	in->type = type;
	in->a = a;
	if (e < 0 && g->depth > 0)
		g->depth--;
	else if (e > 0 && ++g->depth > g->max_depth)
		g->max_depth = g->depth;
	return g->code->n++;
}

/* Insert a TONUM at index at (see the file comment for why it is safe). */
static void cg_insert_tonum(struct cg *g, size_t at)
{
	struct constraint_code *c = g->code;

	if (g->errors || g->oom || cg_room(g) < 0)
		return;
	memmove(c->v + at + 1, c->v + at, (c->n - at) * sizeof(*c->v));
	memset(&c->v[at], 0, sizeof(c->v[at]));
	c->v[at].op = CPOL_OP_TONUM;
	c->n++;
}

/* Point the jump at index j to the next instruction to be emitted. */
static void cg_patch(struct cg *g, size_t j)
{
	if (j == SIZE_MAX || g->errors || g->oom)
		return;
	g->code->v[j].a = (uint32_t)(g->code->n - (j + 1));
}

/* ---- names ------------------------------------------------------------- */

static uint32_t cg_find_param(const struct cg *g, const char *name)
{
	for (uint32_t i = 0; i < g->s->nparams; i++)
		if (strcmp(g->s->params[i].name, name) == 0)
			return i;
	return CPOL_NONE;
}

static int cg_broken_param(const struct constraint_src *s, const char *name)
{
	if (s->all_broken)
		return 1;
	for (size_t i = 0; i < s->nbroken; i++)
		if (strcmp(s->broken[i], name) == 0)
			return 1;
	return 0;
}

static void cg_unknown_param(struct cg *g, const struct ast_node *n)
{
	const char *cands[64] = { NULL };
	char list[256];
	size_t k = 0, used = 0;
	const char *hint;

	/* One error a mistake: the spec's own error stands for this use. */
	if (cg_broken_param(g->s, n->str)) {
		g->errors++;
		return;
	}
	for (uint32_t i = 0; i < g->s->nparams && k < 64; i++)
		cands[k++] = g->s->params[i].name;
	hint = suggest_nearest(n->str, cands, k);
	if (hint != NULL) {
		cg_error(g, n, "unknown parameter '%s'; did you mean '%s'?", n->str, hint);
		return;
	}
	if (k == 0) {
		cg_error(g, n, "unknown parameter '%s' (the tool has no parameters)", n->str);
		return;
	}
	list[0] = '\0';
	for (size_t i = 0; i < k && used < sizeof(list); i++)
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "", cands[i]);
	if (used >= sizeof(list))
		memcpy(list + sizeof(list) - 4, "...", 4);
	cg_error(g, n, "unknown parameter '%s' (the tool's parameters are: %s)", n->str, list);
}

/* ---- literals ---------------------------------------------------------- */

/* A literal, with unary minus folded in; CG_ERR (after reporting) when n
 * is a literal out of range, CG_ERR without a report when it is not a
 * literal at all (*is_lit 0). */
static struct cg_lit cg_literal(struct cg *g, const struct ast_node *n, int negate, int *is_lit)
{
	struct cg_lit l = { CG_ERR, 0, 0, n };

	*is_lit = 1;
	switch (n->kind) {
	case AST_INT:
		/* -9223372036854775808 is an integer; 9223372036854775808 is not. */
		if (n->ival > (uint64_t)INT64_MAX + (negate ? 1u : 0u)) {
			cg_error(g, n, "the integer %s%llu is out of range (integers are 64-bit signed)",
				 negate ? "-" : "", (unsigned long long)n->ival);
			return l;
		}
		l.type = CPOL_T_INTEGER;
		l.i = negate ? (int64_t)(0 - n->ival) : (int64_t)n->ival;
		return l;
	case AST_NUM:
		if (!isfinite(n->fval)) {
			cg_error(g, n, "the number is out of range (numbers are finite 64-bit floats)");
			return l;
		}
		l.type = CPOL_T_NUMBER;
		l.f = negate ? -n->fval : n->fval;
		return l;
	case AST_STR:
		if (negate)
			break;
		l.type = CPOL_T_STRING;
		return l;
	case AST_BOOL:
		if (negate)
			break;
		l.type = CPOL_T_BOOLEAN;
		l.i = n->ival != 0;
		return l;
	case AST_UNARY:
		if (n->op == AST_OP_NEG)
			return cg_literal(g, n->a, !negate, is_lit);
		break;
	default:
		break;
	}
	*is_lit = 0;
	return l;
}

/* The literal's text copied into the policy's arena (NUL-terminated, so a
 * NUL inside would cut it: refused). */
static const char *cg_string(struct cg *g, const struct ast_node *n)
{
	const char *s;

	if (memchr(n->str, '\0', n->len) != NULL) {
		cg_error(g, n, "a string in a constraint cannot contain a NUL byte");
		return NULL;
	}
	if (n->len > UINT32_MAX / 2) {
		cg_error(g, n, "the string is too long");
		return NULL;
	}
	s = arena_strndup(g->s->a, n->str, n->len);
	if (s == NULL)
		g->oom = 1;
	return s;
}

static void cg_push_lit(struct cg *g, const struct cg_lit *l, uint32_t as)
{
	size_t k;

	switch (l->type) {
	case CPOL_T_INTEGER:
		if (as == CPOL_T_NUMBER) {
			/* The same value TONUM would give at run time. */
			if ((k = cg_emit(g, CPOL_OP_NUM, 0, 0)) != SIZE_MAX)
				g->code->v[k].fval = (double)l->i;
		} else if ((k = cg_emit(g, CPOL_OP_INT, 0, 0)) != SIZE_MAX) {
			g->code->v[k].ival = l->i;
		}
		break;
	case CPOL_T_NUMBER:
		if ((k = cg_emit(g, CPOL_OP_NUM, 0, 0)) != SIZE_MAX)
			g->code->v[k].fval = l->f;
		break;
	case CPOL_T_BOOLEAN:
		cg_emit(g, CPOL_OP_BOOL, 0, (uint32_t)l->i);
		break;
	case CPOL_T_STRING: {
		const char *s = cg_string(g, l->node);

		if (s != NULL && (k = cg_emit(g, CPOL_OP_STR, 0, 0)) != SIZE_MAX) {
			g->code->v[k].str = s;
			g->code->v[k].len = (uint32_t)l->node->len;
		}
		break;
	}
	default:
		break;
	}
}

/* ---- expressions ------------------------------------------------------- */

static uint32_t cg_expr(struct cg *g, const struct ast_node *n);

static uint32_t cg_ident(struct cg *g, const struct ast_node *n)
{
	uint32_t i = cg_find_param(g, n->str);
	const struct cpol_param *m;

	if (i == CPOL_NONE) {
		cg_unknown_param(g, n);
		return CG_ERR;
	}
	m = &g->s->params[i];
	if (m->type == CPOL_T_OBJECT) {
		cg_error(g, n, "'%s' is an object; a constraint can only test whether it is given, with has(%s)",
			 n->str, n->str);
		return CG_ERR;
	}
	cg_emit(g, CPOL_OP_PARAM, (uint8_t)m->type, i);
	return m->type;
}

/* Operand of a logical operator: a boolean, or an error reported here. */
static void cg_need_bool(struct cg *g, const struct ast_node *n, uint32_t t, const char *what)
{
	if (t != CG_ERR && t != CPOL_T_BOOLEAN)
		cg_error(g, n, "%s needs a boolean, not %s", what, cg_a(t));
}

static uint32_t cg_logic(struct cg *g, const struct ast_node *n)
{
	char what[64];
	uint32_t t;
	size_t j;

	t = cg_expr(g, n->a);
	snprintf(what, sizeof(what), "the left side of '%s'", cg_op_text(n->op));
	cg_need_bool(g, n->a, t, what);
	j = cg_emit(g, n->op == AST_OP_AND ? CPOL_OP_JF : CPOL_OP_JT, 0, 0);
	t = cg_expr(g, n->b);
	snprintf(what, sizeof(what), "the right side of '%s'", cg_op_text(n->op));
	cg_need_bool(g, n->b, t, what);
	cg_patch(g, j);
	return CPOL_T_BOOLEAN;
}

static uint8_t cg_cmp_op(enum ast_op op)
{
	switch (op) {
	case AST_OP_EQ: return CPOL_OP_EQ;
	case AST_OP_NE: return CPOL_OP_NE;
	case AST_OP_LT: return CPOL_OP_LT;
	case AST_OP_LE: return CPOL_OP_LE;
	case AST_OP_GT: return CPOL_OP_GT;
	default: return CPOL_OP_GE;
	}
}

static int cg_numeric(uint32_t t)
{
	return t == CPOL_T_INTEGER || t == CPOL_T_NUMBER;
}

/* An array operand where a scalar is needed: say how to compare it. */
static int cg_array_operand(struct cg *g, const struct ast_node *n, uint32_t t, const char *op)
{
	if (t != CPOL_T_ARRAY)
		return 0;
	if (n->kind == AST_IDENT)
		cg_error(g, n, "'%s' cannot compare the array '%s'; compare its length, len(%s)", op, n->str, n->str);
	else
		cg_error(g, n, "'%s' cannot compare an array; compare its length with len()", op);
	return 1;
}

static uint32_t cg_compare(struct cg *g, const struct ast_node *n)
{
	const char *op = cg_op_text(n->op);
	uint32_t ta, tb, t;
	size_t after_a;

	ta = cg_expr(g, n->a);
	after_a = g->code->n;
	tb = cg_expr(g, n->b);
	if (ta == CG_ERR || tb == CG_ERR)
		return CPOL_T_BOOLEAN;
	if (cg_array_operand(g, n->a, ta, op) || cg_array_operand(g, n->b, tb, op))
		return CPOL_T_BOOLEAN;
	if (cg_numeric(ta) && cg_numeric(tb)) {
		t = ta == tb ? ta : CPOL_T_NUMBER;
		if (ta == CPOL_T_INTEGER && tb == CPOL_T_NUMBER)
			cg_insert_tonum(g, after_a);
		else if (ta == CPOL_T_NUMBER && tb == CPOL_T_INTEGER)
			cg_emit(g, CPOL_OP_TONUM, 0, 0);
	} else if (ta != tb) {
		cg_error(g, n, "'%s' compares %s with %s", op, cg_a(ta), cg_a(tb));
		return CPOL_T_BOOLEAN;
	} else {
		t = ta;
		if (n->op != AST_OP_EQ && n->op != AST_OP_NE) {
			cg_error(g, n, "'%s' does not apply to %ss; only == and != do", op, policy_type_name(t));
			return CPOL_T_BOOLEAN;
		}
	}
	cg_emit(g, cg_cmp_op(n->op), (uint8_t)t, 0);
	return CPOL_T_BOOLEAN;
}

/* x in [v1, v2, ...]: the values are literals of x's type (integers and
 * numbers mix, as in comparisons). */
static uint32_t cg_in(struct cg *g, const struct ast_node *n)
{
	const struct ast_node *list = n->b;
	struct cg_lit lits[CONSTRAINT_MAX_IN];
	size_t jumps[CONSTRAINT_MAX_IN];
	uint32_t t;
	size_t i, k;
	int is_lit, bad = 0;

	t = cg_expr(g, n->a);
	if (list->kind != AST_LIST) {
		cg_error(g, list, "'in' needs a list of literals on its right, such as [\"a\", \"b\"]");
		return CPOL_T_BOOLEAN;
	}
	if (list->n == 0) {
		cg_error(g, list, "an 'in' list needs at least one value");
		return CPOL_T_BOOLEAN;
	}
	if (list->n > CONSTRAINT_MAX_IN) {
		cg_error(g, list, "an 'in' list holds at most %d values, not %zu", CONSTRAINT_MAX_IN, list->n);
		return CPOL_T_BOOLEAN;
	}
	if (t == CG_ERR)
		return CPOL_T_BOOLEAN;
	if (t == CPOL_T_ARRAY) {
		cg_error(g, n->a, "'in' cannot test an array; it tests one value against a list");
		return CPOL_T_BOOLEAN;
	}
	for (i = 0; i < list->n; i++) {
		const struct ast_node *it = list->items[i];

		lits[i] = cg_literal(g, it, 0, &is_lit);
		if (!is_lit) {
			cg_error(g, it, "an 'in' list holds literals only (strings, numbers, true, false)");
			bad = 1;
		} else if (lits[i].type == CG_ERR) {
			bad = 1;
		} else if (lits[i].type != t && !(cg_numeric(t) && cg_numeric(lits[i].type))) {
			cg_error(g, it, "the list holds %s, but the value tested is %s", cg_a(lits[i].type), cg_a(t));
			bad = 1;
		}
	}
	if (bad)
		return CPOL_T_BOOLEAN;

	if (t == CPOL_T_STRING) {
		const char **v = arena_calloc(g->s->a, list->n, sizeof(*v));

		if (v == NULL) {
			g->oom = 1;
			return CPOL_T_BOOLEAN;
		}
		for (i = 0; i < list->n; i++)
			if ((v[i] = cg_string(g, list->items[i])) == NULL)
				return CPOL_T_BOOLEAN;
		if ((k = cg_emit(g, CPOL_OP_IN, 0, 0)) != SIZE_MAX) {
			g->code->v[k].list.v = v;
			g->code->v[k].list.n = (uint32_t)list->n;
		}
		return CPOL_T_BOOLEAN;
	}

	/* The value was emitted once above for the first comparison; it is
	 * emitted again for each further one (it has no side effects, and
	 * typed cleanly, so emitting it again reports nothing). */
	for (i = 0; i < list->n; i++) {
		uint32_t ct = t;
		size_t after = g->code->n;

		if (i > 0) {
			cg_expr(g, n->a);
			after = g->code->n;
		}
		if (cg_numeric(t) && t != lits[i].type)
			ct = CPOL_T_NUMBER;
		if (t == CPOL_T_INTEGER && ct == CPOL_T_NUMBER)
			cg_insert_tonum(g, after);
		cg_push_lit(g, &lits[i], ct);
		cg_emit(g, CPOL_OP_EQ, (uint8_t)ct, 0);
		jumps[i] = i + 1 < list->n ? cg_emit(g, CPOL_OP_JT, 0, 0) : SIZE_MAX;
	}
	for (i = 0; i + 1 < list->n; i++)
		cg_patch(g, jumps[i]);
	return CPOL_T_BOOLEAN;
}

static uint32_t cg_call(struct cg *g, const struct ast_node *n)
{
	const char *f = n->str;
	size_t want = strcmp(f, "len") == 0 || strcmp(f, "has") == 0 ? 1 : 2;
	uint32_t t, i;
	size_t k;

	if (strcmp(f, "len") != 0 && strcmp(f, "has") != 0 && strcmp(f, "starts_with") != 0 &&
	    strcmp(f, "ends_with") != 0) {
		const char *hint = suggest_nearest(f, cg_functions, sizeof(cg_functions) / sizeof(cg_functions[0]));

		if (hint != NULL)
			cg_error(g, n, "unknown function '%s'; did you mean '%s'?", f, hint);
		else
			cg_error(g, n, "unknown function '%s' (a constraint can call len, starts_with, ends_with and has)",
				 f);
		return CG_ERR;
	}
	if (n->n != want) {
		cg_error(g, n, "%s() takes %zu argument%s, not %zu", f, want, want == 1 ? "" : "s", n->n);
		return CG_ERR;
	}
	if (strcmp(f, "has") == 0) {
		const struct ast_node *p = n->items[0];

		if (p->kind != AST_IDENT) {
			cg_error(g, p, "has() takes a parameter name");
			return CPOL_T_BOOLEAN;
		}
		i = cg_find_param(g, p->str);
		if (i == CPOL_NONE) {
			cg_unknown_param(g, p);
			return CPOL_T_BOOLEAN;
		}
		cg_emit(g, CPOL_OP_HAS, 0, i);
		return CPOL_T_BOOLEAN;
	}
	t = cg_expr(g, n->items[0]);
	if (strcmp(f, "len") == 0) {
		if (t == CG_ERR)
			return CG_ERR;
		if (t != CPOL_T_STRING && t != CPOL_T_ARRAY) {
			cg_error(g, n->items[0], "len() takes a string or an array, not %s", cg_a(t));
			return CG_ERR;
		}
		cg_emit(g, CPOL_OP_LEN, (uint8_t)t, 0);
		return CPOL_T_INTEGER;
	}
	/* starts_with, ends_with */
	if (t != CG_ERR && t != CPOL_T_STRING)
		cg_error(g, n->items[0], "%s() takes a string as its first argument, not %s", f, cg_a(t));
	if (n->items[1]->kind != AST_STR) {
		cg_error(g, n->items[1], "the second argument of %s() must be a string literal", f);
		return CPOL_T_BOOLEAN;
	}
	{
		const char *s = cg_string(g, n->items[1]);

		if (s != NULL &&
		    (k = cg_emit(g, strcmp(f, "starts_with") == 0 ? CPOL_OP_STARTS_WITH : CPOL_OP_ENDS_WITH, 0, 0)) !=
			    SIZE_MAX) {
			g->code->v[k].str = s;
			g->code->v[k].len = (uint32_t)n->items[1]->len;
		}
	}
	return CPOL_T_BOOLEAN;
}

static uint32_t cg_expr(struct cg *g, const struct ast_node *n)
{
	struct cg_lit l;
	uint32_t t;
	int is_lit;

	switch (n->kind) {
	case AST_INT:
	case AST_NUM:
	case AST_STR:
	case AST_BOOL:
		l = cg_literal(g, n, 0, &is_lit);
		cg_push_lit(g, &l, l.type);
		return l.type;
	case AST_IDENT:
		return cg_ident(g, n);
	case AST_CALL:
		return cg_call(g, n);
	case AST_LIST:
		cg_error(g, n, "a list can only appear on the right of 'in'");
		return CG_ERR;
	case AST_UNARY:
		if (n->op == AST_OP_NEG) {
			l = cg_literal(g, n, 0, &is_lit);
			if (!is_lit || (l.type != CG_ERR && !cg_numeric(l.type))) {
				cg_error(g, n, "'-' applies only to number literals in a constraint");
				return CG_ERR;
			}
			cg_push_lit(g, &l, l.type);
			return l.type;
		}
		t = cg_expr(g, n->a);
		cg_need_bool(g, n->a, t, "'!'");
		cg_emit(g, CPOL_OP_NOT, 0, 0);
		return CPOL_T_BOOLEAN;
	case AST_BINARY:
		switch (n->op) {
		case AST_OP_OR:
		case AST_OP_AND:
			return cg_logic(g, n);
		case AST_OP_EQ:
		case AST_OP_NE:
		case AST_OP_LT:
		case AST_OP_LE:
		case AST_OP_GT:
		case AST_OP_GE:
			return cg_compare(g, n);
		case AST_OP_IN:
			return cg_in(g, n);
		default:
			cg_error(g, n, "'%s' is not a constraint operator (it tests flags in seccomp policies)",
				 cg_op_text(n->op));
			return CG_ERR;
		}
	}
	cg_error(g, n, "this is not an expression a constraint can use");
	return CG_ERR;
}

int constraint_gen_expr(const struct constraint_src *s, const struct ast_node *expr, struct constraint_code *code)
{
	struct cg g;
	uint32_t t;

	memset(&g, 0, sizeof(g));
	g.s = s;
	g.code = code;
	g.start = code->n;

	t = cg_expr(&g, expr);
	if (t != CG_ERR && t != CPOL_T_BOOLEAN)
		cg_error(&g, expr, "a constraint must be a boolean expression; this one is %s", cg_a(t));
	cg_emit(&g, CPOL_OP_RET, 0, 0);
	if (!g.errors && !g.oom && g.max_depth > CPOL_CONSTRAINT_MAX_STACK)
		cg_error(&g, expr, "the constraint nests too deeply: it needs %u stack slots, the limit is %u",
			 g.max_depth, CPOL_CONSTRAINT_MAX_STACK);
	if (!g.errors && !g.oom && code->n - g.start > CPOL_CONSTRAINT_MAX_PROGRAM)
		cg_error(&g, expr, "the constraint compiles to %zu instructions; the limit is %u", code->n - g.start,
			 CPOL_CONSTRAINT_MAX_PROGRAM);
	if (g.oom && !g.errors)
		cg_error(&g, expr, "out of memory");
	if (g.errors) {
		code->n = g.start;
		return -1;
	}
	return 0;
}

int constraint_gen_store(struct constraint_code *code, struct cpol_policy *p)
{
	p->constraints = NULL;
	p->nconstraints = 0;
	if (code->n > UINT32_MAX)
		return -1;
	if (code->n > 0) {
		p->constraints = arena_calloc(&p->arena, code->n, sizeof(*p->constraints));
		if (p->constraints == NULL)
			return -1;
		memcpy(p->constraints, code->v, code->n * sizeof(*code->v));
		p->nconstraints = (uint32_t)code->n;
	}
	constraint_gen_free(code);
	return 0;
}

void constraint_gen_free(struct constraint_code *code)
{
	free(code->v);
	code->v = NULL;
	code->n = code->cap = 0;
}
