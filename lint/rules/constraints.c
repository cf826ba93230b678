/* SPDX-License-Identifier: Apache-2.0 */
/*
 * constraints.c - tool constraints judged against the parameter bounds
 * the bridge has already enforced when they run.
 *
 * Each constraint is parsed again from the inventory (the compile keeps
 * only bytecode, and bytecode has no positions) and evaluated abstractly:
 * every sub-expression yields the set of outcomes it can have over all
 * calls the signature check lets through - true, false, or a failed read
 * of an absent optional parameter, which denies the call wherever it
 * happens (docs/constraints.md, "Absent and mistyped parameters").
 * Values are intervals (integers, numbers, lengths) or, for strings, the
 * parameter's enum and length bounds.  The analysis is sound and not
 * relational: each comparison is judged on its own, so `x < 5 && x > 7`
 * with an unbounded x is not found, but nothing is ever reported that
 * some call could contradict.  `&&`, `||` and `!` are followed
 * everywhere; `has(p)` on the left of `&&` (or `!has(p)` on the left of
 * `||`) makes p present on the right, which is how guards work.
 *
 * Since the compile succeeded, every constraint type-checks and sits on
 * one line verbatim: the position arithmetic below relies on both.
 */
#include <float.h>
#include <stdio.h>
#include <string.h>

#include "lint/rules/rules.h"

/* Outcomes of a boolean sub-expression (rules.h's CONSTRAINT_O_*). */
#define O_T CONSTRAINT_O_TRUE
#define O_F CONSTRAINT_O_FALSE
#define O_E CONSTRAINT_O_ABSENT

/* Longest piece of a constraint quoted in a message. */
#define SNIPPET_MAX 80

/* Top-level parameters are at most 64 (COMPILE_MAX_LIST), one bit each. */
struct cenv {
	uint64_t present, absent;
};

struct ctool {
	const struct cpol_param *params; /* the tool's top-level run, sorted by name */
	uint32_t nparams;
	/* CDN711: report unguarded reads while evaluating (NULL: quiet). */
	struct lint_ctx *c;
	const struct lint_rule *r;
	const struct src_file *f;
	const char *id;
	size_t idx;
	uint64_t reported;
};

enum akind { AV_OTHER = 0, AV_INT, AV_NUM, AV_STR };

/* What a value sub-expression may be. */
struct aval {
	enum akind kind;
	int64_t ilo, ihi;
	double flo, fhi;
	const struct cpol_param *sp; /* AV_STR: the parameter, or NULL */
	const char *lit;             /* AV_STR: the literal, or NULL */
	size_t litlen;
	unsigned err;                /* O_E when reading it may fail */
	int dead;                    /* reading it fails for certain */
};

static int param_index(const struct ctool *t, const char *name)
{
	uint32_t k;

	for (k = 0; k < t->nparams && k < 64; k++)
		if (strcmp(t->params[k].name, name) == 0)
			return (int)k;
	return -1;
}

/* A read of parameter n (an identifier): what may go wrong with it, and
 * for CDN711 a finding when an optional one is read unguarded. */
static void param_read(struct ctool *t, const struct ast_node *n, const struct cenv *env, struct aval *v)
{
	int k = param_index(t, n->str);
	uint64_t bit;
	char subject[256];

	if (k < 0)
		return;
	bit = 1ull << k;
	if ((t->params[k].flags & CPOL_PRM_F_REQUIRED) || ((env->present & bit) && !(env->absent & bit)))
		return;
	v->err = O_E;
	if ((env->absent & bit) && !(env->present & bit))
		v->dead = 1;
	if (t->r == NULL || (t->reported & bit))
		return;
	t->reported |= bit;
	snprintf(subject, sizeof(subject), "tool:%s:constraint:%zu:param:%s", t->id, t->idx, n->str);
	lint_report_loc(t->c, t->r, &n->loc, subject,
			"constraint %zu of tool %s reads the optional parameter '%s' %s: a call without it is denied",
			t->idx, t->id, n->str, v->dead ? "where it is certainly absent" : "without has() guarding it");
}

static struct aval val_of(struct ctool *t, const struct ast_node *n, const struct cenv *env);

/* A literal with unary minus folded in; 0 when n is none. */
static int literal_of(const struct ast_node *n, int neg, struct aval *v)
{
	switch (n->kind) {
	case AST_INT:
		if (n->ival > (uint64_t)INT64_MAX + (neg ? 1u : 0u))
			return 0;
		v->kind = AV_INT;
		v->ilo = v->ihi = neg ? (int64_t)(0 - n->ival) : (int64_t)n->ival;
		return 1;
	case AST_NUM:
		v->kind = AV_NUM;
		v->flo = v->fhi = neg ? -n->fval : n->fval;
		return 1;
	case AST_STR:
		if (neg)
			return 0;
		v->kind = AV_STR;
		v->lit = n->str;
		v->litlen = n->len;
		return 1;
	case AST_UNARY:
		return n->op == AST_OP_NEG && literal_of(n->a, !neg, v);
	default:
		return 0;
	}
}

static void string_lengths(const struct cpol_param *p, int64_t *lo, int64_t *hi)
{
	uint32_t k;

	*lo = (p->flags & CPOL_PRM_F_MIN_LENGTH) ? (int64_t)p->min_length : 0;
	*hi = (p->flags & CPOL_PRM_F_MAX_LENGTH) ? (int64_t)p->max_length : INT64_MAX;
	if (p->enums.n == 0)
		return;
	*lo = INT64_MAX;
	*hi = 0;
	for (k = 0; k < p->enums.n; k++) {
		int64_t l = (int64_t)strlen(p->enums.v[k]);

		*lo = l < *lo ? l : *lo;
		*hi = l > *hi ? l : *hi;
	}
}

static struct aval val_of(struct ctool *t, const struct ast_node *n, const struct cenv *env)
{
	struct aval v;
	const struct cpol_param *p;
	int k;

	memset(&v, 0, sizeof(v));
	if (literal_of(n, 0, &v))
		return v;
	if (n->kind == AST_CALL && strcmp(n->str, "len") == 0 && n->n == 1 && n->items[0]->kind == AST_IDENT) {
		if ((k = param_index(t, n->items[0]->str)) < 0)
			return v;
		param_read(t, n->items[0], env, &v);
		p = &t->params[k];
		v.kind = AV_INT;
		v.ilo = 0;
		v.ihi = INT64_MAX;
		if (p->type == CPOL_T_STRING)
			string_lengths(p, &v.ilo, &v.ihi);
		else if (p->type == CPOL_T_ARRAY && (p->flags & CPOL_PRM_F_MAX_ITEMS))
			v.ihi = (int64_t)p->max_items;
		return v;
	}
	if (n->kind != AST_IDENT || (k = param_index(t, n->str)) < 0)
		return v;
	param_read(t, n, env, &v);
	p = &t->params[k];
	switch (p->type) {
	case CPOL_T_INTEGER:
		v.kind = AV_INT;
		v.ilo = (p->flags & CPOL_PRM_F_MIN) ? p->imin : INT64_MIN;
		v.ihi = (p->flags & CPOL_PRM_F_MAX) ? p->imax : INT64_MAX;
		break;
	case CPOL_T_NUMBER:
		v.kind = AV_NUM;
		v.flo = (p->flags & CPOL_PRM_F_MIN) ? p->fmin : -DBL_MAX;
		v.fhi = (p->flags & CPOL_PRM_F_MAX) ? p->fmax : DBL_MAX;
		break;
	case CPOL_T_STRING:
		v.kind = AV_STR;
		v.sp = p;
		break;
	default:
		break;
	}
	return v;
}

/* Integers meet numbers as numbers: the conversion rounds, but
 * monotonically, so an interval's ends bound its converted values. */
static void as_number(struct aval *v)
{
	if (v->kind != AV_INT)
		return;
	v->kind = AV_NUM;
	v->flo = (double)v->ilo;
	v->fhi = (double)v->ihi;
}

/* Outcomes of `a op b` for intervals [alo, ahi] op [blo, bhi]: a side is
 * certain only when every pair of values agrees. */
#define RANGE_CMP(op, alo, ahi, blo, bhi)                                                                        \
	((op) == AST_OP_LT   ? ((ahi) < (blo) ? O_T : (alo) >= (bhi) ? O_F : O_T | O_F)                          \
	 : (op) == AST_OP_LE ? ((ahi) <= (blo) ? O_T : (alo) > (bhi) ? O_F : O_T | O_F)                          \
	 : (op) == AST_OP_GT ? ((alo) > (bhi) ? O_T : (ahi) <= (blo) ? O_F : O_T | O_F)                          \
	 : (op) == AST_OP_GE ? ((alo) >= (bhi) ? O_T : (ahi) < (blo) ? O_F : O_T | O_F)                          \
	 : (op) == AST_OP_EQ ? ((alo) == (ahi) && (blo) == (bhi) && (alo) == (blo) ? O_T                         \
				: (ahi) < (blo) || (bhi) < (alo)          ? O_F                                  \
									  : O_T | O_F)                           \
	 : (op) == AST_OP_NE ? ((alo) == (ahi) && (blo) == (bhi) && (alo) == (blo) ? O_F                         \
				: (ahi) < (blo) || (bhi) < (alo)          ? O_T                                  \
									  : O_T | O_F)                           \
			     : O_T | O_F)

/* May the string parameter p hold the literal s?  Must it? */
static int str_may_be(const struct cpol_param *p, const char *s, size_t len)
{
	int64_t lo, hi;
	uint32_t k;

	if (p->enums.n > 0) {
		for (k = 0; k < p->enums.n; k++)
			if (strlen(p->enums.v[k]) == len && memcmp(p->enums.v[k], s, len) == 0)
				return 1;
		return 0;
	}
	string_lengths(p, &lo, &hi);
	return (int64_t)len >= lo && (int64_t)len <= hi;
}

static int str_must_be(const struct cpol_param *p, const char *s, size_t len)
{
	return p->enums.n == 1 && str_may_be(p, s, len);
}

static unsigned str_eq(const struct aval *a, const struct aval *b)
{
	const struct aval *par = a->sp ? a : b, *lit = a->lit ? a : b;

	if (a->lit && b->lit)
		return a->litlen == b->litlen && memcmp(a->lit, b->lit, a->litlen) == 0 ? O_T : O_F;
	if (par->sp == NULL || lit->lit == NULL)
		return O_T | O_F;
	if (!str_may_be(par->sp, lit->lit, lit->litlen))
		return O_F;
	return str_must_be(par->sp, lit->lit, lit->litlen) ? O_T : O_T | O_F;
}

static unsigned flip(unsigned o)
{
	return (o & O_E) | ((o & O_T) ? O_F : 0) | ((o & O_F) ? O_T : 0);
}

static unsigned compare(enum ast_op op, struct aval a, struct aval b)
{
	if (a.kind == AV_STR && b.kind == AV_STR && (op == AST_OP_EQ || op == AST_OP_NE))
		return op == AST_OP_EQ ? str_eq(&a, &b) : flip(str_eq(&a, &b));
	if (a.kind == AV_INT && b.kind == AV_INT)
		return RANGE_CMP(op, a.ilo, a.ihi, b.ilo, b.ihi);
	if ((a.kind == AV_INT || a.kind == AV_NUM) && (b.kind == AV_INT || b.kind == AV_NUM)) {
		as_number(&a);
		as_number(&b);
		return RANGE_CMP(op, a.flo, a.fhi, b.flo, b.fhi);
	}
	return O_T | O_F;
}

/* `x in [v...]`: true when one item is certainly equal, or when x is a
 * string parameter whose enum the list covers; false when every item
 * certainly differs. */
static unsigned in_list(const struct aval *x, const struct ast_node *list)
{
	int all_f = 1, covered;
	uint32_t k;
	size_t i, j;

	for (i = 0; i < list->n; i++) {
		struct aval it;
		unsigned o;

		memset(&it, 0, sizeof(it));
		if (!literal_of(list->items[i], 0, &it))
			return O_T | O_F;
		o = compare(AST_OP_EQ, *x, it);
		if (o == O_T)
			return O_T;
		all_f &= o == O_F;
	}
	if (all_f)
		return O_F;
	if (x->kind != AV_STR || x->sp == NULL || x->sp->enums.n == 0)
		return O_T | O_F;
	for (k = 0, covered = 1; k < x->sp->enums.n && covered; k++) {
		for (j = 0; j < list->n; j++)
			if (list->items[j]->kind == AST_STR && strcmp(list->items[j]->str, x->sp->enums.v[k]) == 0)
				break;
		covered = j < list->n;
	}
	return covered ? O_T : O_T | O_F;
}

/* starts_with / ends_with a literal. */
static unsigned affix(const struct aval *s, const struct ast_node *lit, int at_end)
{
	unsigned seen = 0;
	int64_t lo, hi;
	uint32_t k;

	if (s->lit != NULL) {
		if (lit->len > s->litlen)
			return O_F;
		return memcmp(s->lit + (at_end ? s->litlen - lit->len : 0), lit->str, lit->len) == 0 ? O_T : O_F;
	}
	if (s->sp == NULL)
		return O_T | O_F;
	if (lit->len == 0)
		return O_T;
	if (s->sp->enums.n == 0) {
		string_lengths(s->sp, &lo, &hi);
		return (int64_t)lit->len > hi ? O_F : O_T | O_F;
	}
	for (k = 0; k < s->sp->enums.n; k++) {
		const char *e = s->sp->enums.v[k];
		size_t el = strlen(e);

		seen |= el >= lit->len && memcmp(e + (at_end ? el - lit->len : 0), lit->str, lit->len) == 0 ? O_T : O_F;
	}
	return seen;
}

/* What becomes known about presence when n is known to be truth. */
static void assume(const struct ctool *t, const struct ast_node *n, int truth, struct cenv *env)
{
	int k;

	if (n->kind == AST_CALL && strcmp(n->str, "has") == 0 && n->n == 1 && n->items[0]->kind == AST_IDENT) {
		if ((k = param_index(t, n->items[0]->str)) < 0)
			return;
		if (truth)
			env->present |= 1ull << k;
		else
			env->absent |= 1ull << k;
	} else if (n->kind == AST_UNARY && n->op == AST_OP_NOT) {
		assume(t, n->a, !truth, env);
	} else if (n->kind == AST_BINARY && ((n->op == AST_OP_AND && truth) || (n->op == AST_OP_OR && !truth))) {
		assume(t, n->a, truth, env);
		assume(t, n->b, truth, env);
	}
}

static unsigned eval(struct ctool *t, const struct ast_node *n, const struct cenv *env)
{
	struct aval a, b;
	struct cenv e2;
	unsigned ra, res;
	int k;

	switch (n->kind) {
	case AST_BOOL:
		return n->ival ? O_T : O_F;
	case AST_IDENT:
		a = val_of(t, n, env);
		return a.dead ? O_E : O_T | O_F | a.err;
	case AST_CALL:
		if (strcmp(n->str, "has") == 0 && n->n == 1 && (k = param_index(t, n->items[0]->str)) >= 0) {
			uint64_t bit = 1ull << k;
			unsigned o = 0;

			if (t->params[k].flags & CPOL_PRM_F_REQUIRED)
				return O_T;
			o |= (env->absent & bit) ? 0 : O_T;
			o |= (env->present & bit) ? 0 : O_F;
			return o ? o : O_T | O_F;
		}
		if ((strcmp(n->str, "starts_with") == 0 || strcmp(n->str, "ends_with") == 0) && n->n == 2 &&
		    n->items[1]->kind == AST_STR) {
			a = val_of(t, n->items[0], env);
			return a.dead ? O_E : affix(&a, n->items[1], n->str[0] == 'e') | a.err;
		}
		return O_T | O_F | O_E;
	case AST_UNARY:
		return n->op == AST_OP_NOT ? flip(eval(t, n->a, env)) : O_T | O_F | O_E;
	case AST_BINARY:
		break;
	default:
		return O_T | O_F | O_E;
	}
	switch (n->op) {
	case AST_OP_AND:
	case AST_OP_OR:
		/* The right side runs only when the left did not decide, and
		 * then with what the left side's value says. */
		ra = eval(t, n->a, env);
		res = ra & (O_E | (n->op == AST_OP_AND ? O_F : O_T));
		if (ra & (n->op == AST_OP_AND ? O_T : O_F)) {
			e2 = *env;
			assume(t, n->a, n->op == AST_OP_AND, &e2);
			res |= eval(t, n->b, &e2);
		}
		return res;
	case AST_OP_IN:
		a = val_of(t, n->a, env);
		return a.dead ? O_E : in_list(&a, n->b) | a.err;
	case AST_OP_EQ:
	case AST_OP_NE:
	case AST_OP_LT:
	case AST_OP_LE:
	case AST_OP_GT:
	case AST_OP_GE:
		a = val_of(t, n->a, env);
		b = val_of(t, n->b, env);
		if (a.dead || b.dead)
			return O_E;
		return compare(n->op, a, b) | a.err | b.err;
	default:
		return O_T | O_F | O_E;
	}
}

unsigned constraint_outcomes(const struct cpol_param *params, uint32_t nparams, const struct ast_node *expr)
{
	struct ctool t = { params, nparams, NULL, NULL, NULL, "", 0, 0 };
	struct cenv env = { 0, 0 };

	return eval(&t, expr, &env);
}

/* --- where and why ---------------------------------------------------------- */

/* The smallest sub-expression that alone makes the whole never true
 * (want_true 0) or always true (1): the left side of a failing `&&` or
 * succeeding `||` when it decides, else the right side, which then runs
 * under what the left side's value says. */
static const struct ast_node *blame(const struct ctool *t, const struct ast_node *n, struct cenv env, int want_true)
{
	struct ctool q = *t;

	q.r = NULL; /* evaluating again must not report twice */
	while (n->kind == AST_BINARY && (n->op == (want_true ? AST_OP_OR : AST_OP_AND))) {
		unsigned ra = eval(&q, n->a, &env);

		if (want_true ? ra == O_T : !(ra & O_T)) {
			n = n->a;
			continue;
		}
		assume(&q, n->a, !want_true, &env);
		n = n->b;
	}
	return n;
}

static size_t skip_to(const struct src_file *f, size_t off, char ch)
{
	while (off < f->len && f->text[off] != ch && f->text[off] != '\n')
		off++;
	return off < f->len && f->text[off] == ch ? off + 1 : off;
}

/* Where the text of n ends in f (exclusive offset).  Nodes keep only
 * where they start, so the end is found in the text: after the last
 * token of the rightmost leaf, a call's `)` or a list's `]`. */
static size_t node_end(const struct src_file *f, const struct ast_node *n)
{
	size_t off = src_offset(f, n->loc.line, n->loc.col), e = off;

	switch (n->kind) {
	case AST_BINARY:
		return node_end(f, n->b);
	case AST_UNARY:
		return node_end(f, n->a);
	case AST_CALL:
	case AST_LIST:
		if (n->n > 0)
			off = node_end(f, n->items[n->n - 1]);
		return skip_to(f, off, n->kind == AST_CALL ? ')' : ']');
	case AST_STR:
		for (e = off + 1; e < f->len && f->text[e] != '"' && f->text[e] != '\n'; e++)
			if (f->text[e] == '\\')
				e++;
		return e < f->len ? e + 1 : e;
	default:
		while (e < f->len && (f->text[e] == '_' || f->text[e] == '.' || (f->text[e] >= '0' && f->text[e] <= '9') ||
				      (f->text[e] >= 'a' && f->text[e] <= 'z') || (f->text[e] >= 'A' && f->text[e] <= 'Z')))
			e++;
		return e > off ? e : off + 1;
	}
}

/* A sub-expression that starts inside parentheses, `!(x > 5)`, ends
 * after the ones it opened (the tree keeps no parentheses). */
static size_t close_parens(const struct src_file *f, size_t start, size_t end)
{
	long open = 0;
	size_t i;

	for (i = start; i < end; i++) {
		if (f->text[i] != '"') {
			open += f->text[i] == '(' ? 1 : f->text[i] == ')' ? -1 : 0;
			continue;
		}
		for (i++; i < end && f->text[i] != '"'; i++)
			i += f->text[i] == '\\'; /* a parenthesis in a string is text */
	}
	for (; open > 0; open--)
		end = skip_to(f, end, ')');
	return end;
}

/* "amount: 0 .. 100; to: length 3 .. 254": the bounds of every parameter n
 * reads, which are what the verdict rests on. */
static void bounds_text(const struct ctool *t, const struct ast_node *n, char *buf, size_t size, uint64_t *seen)
{
	size_t i, used = strlen(buf);
	const struct cpol_param *p;
	int k;

	if (n->kind == AST_IDENT && (k = param_index(t, n->str)) >= 0 && !(*seen & (1ull << k))) {
		char lo[32] = "", hi[32] = "";

		*seen |= 1ull << k;
		p = &t->params[k];
		if (used > 0 && used < size)
			used += (size_t)snprintf(buf + used, size - used, "; ");
		if (used >= size)
			return;
		if (p->type == CPOL_T_INTEGER || p->type == CPOL_T_NUMBER) {
			if (p->flags & CPOL_PRM_F_MIN)
				p->type == CPOL_T_INTEGER ? snprintf(lo, sizeof(lo), "%lld", (long long)p->imin)
							  : snprintf(lo, sizeof(lo), "%g", p->fmin);
			if (p->flags & CPOL_PRM_F_MAX)
				p->type == CPOL_T_INTEGER ? snprintf(hi, sizeof(hi), "%lld", (long long)p->imax)
							  : snprintf(hi, sizeof(hi), "%g", p->fmax);
			snprintf(buf + used, size - used, "%s: min %s, max %s", p->name, lo[0] ? lo : "none",
				 hi[0] ? hi : "none");
		} else if (p->type == CPOL_T_STRING && p->enums.n > 0) {
			used += (size_t)snprintf(buf + used, size - used, "%s: one of", p->name);
			for (uint32_t j = 0; j < p->enums.n && used < size; j++)
				used += (size_t)snprintf(buf + used, size - used, "%s \"%s\"", j ? "," : "", p->enums.v[j]);
		} else if (p->type == CPOL_T_STRING) {
			if (p->flags & CPOL_PRM_F_MIN_LENGTH)
				snprintf(lo, sizeof(lo), "%llu", (unsigned long long)p->min_length);
			if (p->flags & CPOL_PRM_F_MAX_LENGTH)
				snprintf(hi, sizeof(hi), "%llu", (unsigned long long)p->max_length);
			snprintf(buf + used, size - used, "%s: min_length %s, max_length %s", p->name, lo[0] ? lo : "0",
				 hi[0] ? hi : "none");
		} else if (p->type == CPOL_T_ARRAY && (p->flags & CPOL_PRM_F_MAX_ITEMS)) {
			snprintf(buf + used, size - used, "%s: max_items %llu", p->name, (unsigned long long)p->max_items);
		} else {
			snprintf(buf + used, size - used, "%s: %s", p->name,
				 (p->flags & CPOL_PRM_F_REQUIRED) ? "required" : "optional");
		}
		return;
	}
	if (n->a)
		bounds_text(t, n->a, buf, size, seen);
	if (n->b)
		bounds_text(t, n->b, buf, size, seen);
	for (i = 0; i < n->n; i++)
		bounds_text(t, n->items[i], buf, size, seen);
}

/* --- the walk over every constraint --------------------------------------- */

typedef void (*constraint_fn)(struct lint_ctx *c, const struct lint_rule *r, struct ctool *t,
			      const struct ast_node *expr);

/* Parse each constraint of each tool again, at its place in the file, and
 * hand it to fn. */
static void constraints_each(struct lint_ctx *c, const struct lint_rule *r, constraint_fn fn)
{
	struct diags scratch;
	struct arena a;
	uint32_t i;
	size_t j;

	diags_init(&scratch);
	arena_init(&a);
	for (i = 0; i < c->p.ntools; i++) {
		const struct cpol_tool *tl = &c->p.tools[i];
		struct ctool t = { c->p.params + tl->params.first, tl->params.count, c, NULL, NULL, tl->id, 0, 0 };
		const struct ynode *tn = lint_tool_node(c, tl->id, &t.f);
		const struct ynode *cs = tn ? ymap_get(tn, "constraints") : NULL;

		if (cs == NULL || cs->kind != YN_SEQ || tl->params.first + (uint64_t)tl->params.count > c->p.nparams)
			continue;
		for (j = 0; j < cs->n; j++) {
			const struct ynode *e = cs->vals[j];
			struct ast_node *expr = NULL;

			if (e->kind != YN_SCALAR ||
			    policy_parse_expr(t.f, e->line, e->col + (e->plain ? 0 : 1), e->str, e->len, &a, &expr,
					      &scratch) != 0 ||
			    expr == NULL)
				continue;
			t.idx = j;
			t.reported = 0;
			fn(c, r, &t, expr);
		}
	}
	arena_free(&a);
	diags_free(&scratch);
}

/* CDN709 (want_true 0: never true) and CDN710 (1: always true). */
static void judge_outcome(struct lint_ctx *c, const struct lint_rule *r, struct ctool *t, const struct ast_node *expr,
			  int want_true)
{
	struct cenv env = { 0, 0 };
	const struct ast_node *n;
	unsigned o = eval(t, expr, &env);
	struct lint_pos pos;
	uint64_t seen = 0;
	char bounds[512] = "", subject[256];
	size_t start, end;

	if (want_true ? o != O_T : (o & O_T) != 0)
		return;
	n = blame(t, expr, env, want_true);
	bounds_text(t, n, bounds, sizeof(bounds), &seen);
	pos.file = t->f;
	pos.line = n->loc.line;
	pos.col = n->loc.col;
	start = src_offset(t->f, n->loc.line, n->loc.col);
	end = close_parens(t->f, start, node_end(t->f, n));
	src_pos(t->f, end, &pos.end_line, &pos.end_col);
	snprintf(subject, sizeof(subject), "tool:%s:constraint:%zu", t->id, t->idx);
	lint_report_pos(c, r, &pos, subject, "constraint %zu of tool %s is %s: '%.*s%s' %s (%s)", t->idx, t->id,
			want_true ? "dead" : "unsatisfiable", end - start > SNIPPET_MAX ? SNIPPET_MAX : (int)(end - start),
			t->f->text + start, end - start > SNIPPET_MAX ? "..." : "",
			want_true ? "holds for every call the parameter bounds let through"
				  : "holds for no call the parameter bounds let through, so every call is denied",
			bounds[0] ? bounds : "no parameters");
}

static void judge_never(struct lint_ctx *c, const struct lint_rule *r, struct ctool *t, const struct ast_node *expr)
{
	judge_outcome(c, r, t, expr, 0);
}

static void judge_always(struct lint_ctx *c, const struct lint_rule *r, struct ctool *t, const struct ast_node *expr)
{
	judge_outcome(c, r, t, expr, 1);
}

void rule_constraint_unsatisfiable(struct lint_ctx *c, const struct lint_rule *r)
{
	constraints_each(c, r, judge_never);
}

void rule_constraint_always_true(struct lint_ctx *c, const struct lint_rule *r)
{
	constraints_each(c, r, judge_always);
}

static void judge_reads(struct lint_ctx *c, const struct lint_rule *r, struct ctool *t, const struct ast_node *expr)
{
	struct cenv env = { 0, 0 };

	(void)c;
	t->r = r;
	eval(t, expr, &env);
	t->r = NULL;
}

void rule_constraint_unguarded_optional(struct lint_ctx *c, const struct lint_rule *r)
{
	constraints_each(c, r, judge_reads);
}
