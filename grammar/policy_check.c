/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy_check.c - semantic pass over seccomp policies; see policy_check.h.
 *
 * Conditions go through three steps:
 *   1. values: every operand becomes a constant (names and literals, folded
 *      through & and |) or an argument, possibly masked with a constant;
 *   2. NNF: negations are pushed down to comparisons, which flip
 *      (!(a < 5) is a >= 5); a masked != becomes an OR of single-bit tests,
 *      which is exact and the only form libseccomp can test;
 *   3. DNF: && is distributed over ||, within a step budget; each
 *      conjunction must test an argument at most once (libseccomp refuses
 *      a rule that tests one argument twice), after merging the pairs one
 *      test can say (atom_merge()).
 * Then two judgements on the result: the shape libseccomp 2.5.4 loops on is
 * refused, and a refusal list the high 32 bits of an argument can dodge is
 * warned about.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/constants.h"
#include "compiler/syscall_table.h"
#include "grammar/policy_check.h"

/* A boolean formula in negation normal form. */
enum cf_kind { CF_TRUE, CF_FALSE, CF_ATOM, CF_AND, CF_OR };

struct cf {
	enum cf_kind kind;
	struct scmp_arg_cmp atom;
	struct ast_loc loc;
	struct cf *a, *b;
};

/* A value: a constant, or argument `arg` masked with `mask`. */
struct val {
	int is_arg;
	unsigned arg;
	uint64_t mask; /* UINT64_MAX: no mask */
	uint64_t c;
};

struct ck {
	struct arena *a;
	struct diags *d;
	const struct pol_rule *r;
	int failed;
	size_t steps; /* dnf_expand() calls for the current rule */
};

static void ck_error(struct ck *k, const struct ast_loc *l, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void ck_error(struct ck *k, const struct ast_loc *l, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	diag_at(k->d, DIAG_ERROR, l->file, l->line, l->col, "%s", msg);
	k->failed = 1;
}

static struct cf *cf_new(struct ck *k, enum cf_kind kind, const struct ast_loc *l)
{
	struct cf *f = arena_alloc(k->a, sizeof(*f));

	if (f == NULL) {
		k->failed = 1;
		return NULL;
	}
	f->kind = kind;
	if (l != NULL)
		f->loc = *l;
	return f;
}

static struct cf *cf_bin(struct ck *k, enum cf_kind kind, struct cf *a, struct cf *b)
{
	struct cf *f;

	if (a == NULL || b == NULL)
		return NULL;
	/* Fold constants so an always-true part does not multiply out. */
	if (kind == CF_AND) {
		if (a->kind == CF_FALSE || b->kind == CF_TRUE)
			return a;
		if (b->kind == CF_FALSE || a->kind == CF_TRUE)
			return b;
	} else {
		if (a->kind == CF_TRUE || b->kind == CF_FALSE)
			return a;
		if (b->kind == CF_TRUE || a->kind == CF_FALSE)
			return b;
	}
	f = cf_new(k, kind, &a->loc);
	if (f != NULL) {
		f->a = a;
		f->b = b;
	}
	return f;
}

static struct cf *cf_atom(struct ck *k, const struct ast_loc *l, unsigned arg, enum scmp_compare op, uint64_t x,
			  uint64_t y)
{
	struct cf *f = cf_new(k, CF_ATOM, l);

	if (f != NULL) {
		f->atom.arg = arg;
		f->atom.op = op;
		f->atom.datum_a = x;
		f->atom.datum_b = y;
	}
	return f;
}

/* --- step 1: values ----------------------------------------------------- */

static int arg_index(const struct pol_rule *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->nargs; i++)
		if (strcmp(r->argnames[i], name) == 0)
			return (int)i;
	return -1;
}

static int value_of(struct ck *k, const struct ast_node *n, struct val *v)
{
	struct val x, y;
	int i;

	memset(v, 0, sizeof(*v));
	v->mask = UINT64_MAX;
	switch (n->kind) {
	case AST_INT:
		v->c = n->ival;
		return 0;
	case AST_IDENT:
		i = arg_index(k->r, n->str);
		if (i >= 0) {
			v->is_arg = 1;
			v->arg = (unsigned)i;
			return 0;
		}
		if (const_lookup(n->str, &v->c) == 0)
			return 0;
		{
			const char *hint = const_suggest(n->str);

			if (hint != NULL)
				ck_error(k, &n->loc, "unknown name '%s': not an argument of %s() nor a known constant; did you mean '%s'?",
					 n->str, k->r->syscall, hint);
			else
				ck_error(k, &n->loc, "unknown name '%s': not an argument of %s() nor a known constant",
					 n->str, k->r->syscall);
		}
		return -1;
	case AST_BINARY:
		if (n->op != AST_OP_BAND && n->op != AST_OP_BOR)
			break;
		if (value_of(k, n->a, &x) != 0 || value_of(k, n->b, &y) != 0)
			return -1;
		if (!x.is_arg && !y.is_arg) {
			v->c = n->op == AST_OP_BAND ? (x.c & y.c) : (x.c | y.c);
			return 0;
		}
		if (n->op == AST_OP_BOR) {
			ck_error(k, &n->loc, "'|' combines constants only; an argument cannot be or-ed");
			return -1;
		}
		if (x.is_arg && y.is_arg) {
			ck_error(k, &n->loc, "'&' of two arguments cannot be tested by seccomp");
			return -1;
		}
		*v = x.is_arg ? x : y;
		v->mask &= x.is_arg ? y.c : x.c;
		if (v->mask == 0) {
			/* (a & 0) == 0 would hold for every value: a rule that
			 * looks conditional and is not. */
			ck_error(k, &n->loc, "the mask is 0: nothing of '%s' is left to test", k->r->argnames[v->arg]);
			return -1;
		}
		return 0;
	case AST_UNARY:
		if (n->op == AST_OP_NEG) {
			/* A negative int argument reaches the filter sign- or
			 * zero-extended depending on the caller; no single
			 * 64-bit constant matches both, so none is offered. */
			ck_error(k, &n->loc, "negative values cannot be compared reliably in seccomp; write the "
					    "unsigned 64-bit value");
			return -1;
		}
		break;
	default:
		break;
	}
	ck_error(k, &n->loc, "this is not a value seccomp can test (use arguments, constants, numbers, & and |)");
	return -1;
}

/* --- step 2: NNF -------------------------------------------------------- */

static enum scmp_compare op_of(enum ast_op op, int negate)
{
	switch (op) {
	case AST_OP_EQ: return negate ? SCMP_CMP_NE : SCMP_CMP_EQ;
	case AST_OP_NE: return negate ? SCMP_CMP_EQ : SCMP_CMP_NE;
	case AST_OP_LT: return negate ? SCMP_CMP_GE : SCMP_CMP_LT;
	case AST_OP_LE: return negate ? SCMP_CMP_GT : SCMP_CMP_LE;
	case AST_OP_GT: return negate ? SCMP_CMP_LE : SCMP_CMP_GT;
	case AST_OP_GE: return negate ? SCMP_CMP_LT : SCMP_CMP_GE;
	default: return _SCMP_CMP_MIN;
	}
}

/* Swap the sides of a comparison: 5 < a is a > 5. */
static enum ast_op op_flip(enum ast_op op)
{
	switch (op) {
	case AST_OP_LT: return AST_OP_GT;
	case AST_OP_LE: return AST_OP_GE;
	case AST_OP_GT: return AST_OP_LT;
	case AST_OP_GE: return AST_OP_LE;
	default: return op;
	}
}

static int const_cmp(enum scmp_compare op, uint64_t x, uint64_t y)
{
	switch (op) {
	case SCMP_CMP_EQ: return x == y;
	case SCMP_CMP_NE: return x != y;
	case SCMP_CMP_LT: return x < y;
	case SCMP_CMP_LE: return x <= y;
	case SCMP_CMP_GT: return x > y;
	case SCMP_CMP_GE: return x >= y;
	default: return 0;
	}
}

/* (arg & m) == c, or its negation, as a formula of libseccomp atoms. */
static struct cf *masked_test(struct ck *k, const struct ast_loc *l, unsigned arg, uint64_t m, uint64_t c, int eq)
{
	struct cf *f = NULL;
	unsigned bit;

	if ((c & ~m) != 0) /* a bit outside the mask can never match */
		return cf_new(k, eq ? CF_FALSE : CF_TRUE, l);
	if (eq)
		return cf_atom(k, l, arg, SCMP_CMP_MASKED_EQ, m, c);
	/* (arg & m) != c  <=>  some bit of m differs from c's: an OR of
	 * single-bit tests, each one libseccomp atom. */
	for (bit = 0; bit < 64; bit++) {
		uint64_t b = 1ull << bit;
		struct cf *t;

		if (!(m & b))
			continue;
		t = cf_atom(k, l, arg, SCMP_CMP_MASKED_EQ, b, (c & b) ^ b);
		f = f == NULL ? t : cf_bin(k, CF_OR, f, t);
	}
	return f != NULL ? f : cf_new(k, CF_FALSE, l);
}

static struct cf *compare(struct ck *k, const struct ast_node *n, enum ast_op op, const struct ast_node *lhs,
			  const struct ast_node *rhs, int negate)
{
	struct val x, y;
	enum scmp_compare sop;

	if (value_of(k, lhs, &x) != 0 || value_of(k, rhs, &y) != 0)
		return NULL;
	if (x.is_arg && y.is_arg) {
		ck_error(k, &n->loc, "seccomp cannot compare two arguments with each other");
		return NULL;
	}
	if (!x.is_arg && !y.is_arg)
		return cf_new(k, const_cmp(op_of(op, negate), x.c, y.c) ? CF_TRUE : CF_FALSE, &n->loc);
	if (!x.is_arg) {
		struct val t = x;

		x = y;
		y = t;
		op = op_flip(op);
	}
	sop = op_of(op, negate);
	if (x.mask != UINT64_MAX) {
		if (sop != SCMP_CMP_EQ && sop != SCMP_CMP_NE) {
			ck_error(k, &n->loc, "a masked argument can only be tested with == or !=");
			return NULL;
		}
		return masked_test(k, &n->loc, x.arg, x.mask, y.c, sop == SCMP_CMP_EQ);
	}
	return cf_atom(k, &n->loc, x.arg, sop, y.c, 0);
}

/* A value used as a condition: true when nonzero. */
static struct cf *truthy(struct ck *k, const struct ast_node *n, int negate)
{
	struct val v;

	if (value_of(k, n, &v) != 0)
		return NULL;
	if (!v.is_arg)
		return cf_new(k, (v.c != 0) != negate ? CF_TRUE : CF_FALSE, &n->loc);
	if (v.mask != UINT64_MAX)
		return masked_test(k, &n->loc, v.arg, v.mask, 0, negate);
	return cf_atom(k, &n->loc, v.arg, negate ? SCMP_CMP_EQ : SCMP_CMP_NE, 0, 0);
}

static struct cf *nnf(struct ck *k, const struct ast_node *n, int negate, int depth)
{
	size_t i;
	struct cf *f = NULL;

	if (depth > 200) {
		ck_error(k, &n->loc, "condition nested too deeply");
		return NULL;
	}
	switch (n->kind) {
	case AST_UNARY:
		if (n->op == AST_OP_NOT)
			return nnf(k, n->a, !negate, depth + 1);
		break;
	case AST_BINARY:
		switch (n->op) {
		case AST_OP_AND:
		case AST_OP_OR:
			/* De Morgan: a negated && is an || of negations. */
			return cf_bin(k, (n->op == AST_OP_AND) != negate ? CF_AND : CF_OR,
				      nnf(k, n->a, negate, depth + 1), nnf(k, n->b, negate, depth + 1));
		case AST_OP_EQ:
		case AST_OP_NE:
		case AST_OP_LT:
		case AST_OP_LE:
		case AST_OP_GT:
		case AST_OP_GE:
			return compare(k, n, n->op, n->a, n->b, negate);
		case AST_OP_IN:
			/* x in [a, b] is x == a || x == b. */
			if (n->b->kind != AST_LIST || n->b->n == 0) {
				ck_error(k, &n->loc, "'in' needs a non-empty list");
				return NULL;
			}
			for (i = 0; i < n->b->n; i++) {
				struct cf *t = compare(k, n, AST_OP_EQ, n->a, n->b->items[i], negate);

				f = f == NULL ? t : cf_bin(k, negate ? CF_AND : CF_OR, f, t);
				if (f == NULL)
					return NULL;
			}
			return f;
		case AST_OP_BAND:
		case AST_OP_BOR:
			return truthy(k, n, negate);
		default:
			break;
		}
		break;
	case AST_IDENT:
	case AST_INT:
		return truthy(k, n, negate);
	default:
		break;
	}
	ck_error(k, &n->loc, "this is not a condition seccomp can test");
	return NULL;
}

/* --- step 3: DNF -------------------------------------------------------- */

struct dnf {
	struct sc_conj *v;
	size_t n, cap;
};

/* Evaluate one atom on a known argument value. */
static int atom_holds(const struct scmp_arg_cmp *a, uint64_t x)
{
	if (a->op == SCMP_CMP_MASKED_EQ)
		return (x & a->datum_a) == a->datum_b;
	return const_cmp(a->op, x, a->datum_a);
}

int policy_rule_holds(const struct sc_rule *r, const uint64_t args[6])
{
	size_t i;
	unsigned j;

	if (r->nconj == 0)
		return 1;
	for (i = 0; i < r->nconj; i++) {
		const struct sc_conj *c = &r->conj[i];

		for (j = 0; j < c->n && atom_holds(&c->cmp[j], args[c->cmp[j].arg]); j++)
			;
		if (j == c->n)
			return 1;
	}
	return 0;
}

/* The value nearest the limit that a bound (<, <=, >, >=) admits: the
 * smallest for > and >=, the largest for < and <=; 0 when none does
 * (a > 0xffffffffffffffff, a < 0). */
static int bound_edge(const struct scmp_arg_cmp *a, uint64_t *edge)
{
	*edge = a->datum_a;
	if (a->op == SCMP_CMP_GT) {
		*edge = a->datum_a + 1;
		return a->datum_a != UINT64_MAX;
	}
	if (a->op == SCMP_CMP_LT) {
		*edge = a->datum_a - 1;
		return a->datum_a != 0;
	}
	return 1;
}

static int is_lower(enum scmp_compare op)
{
	return op == SCMP_CMP_GT || op == SCMP_CMP_GE;
}

static int is_upper(enum scmp_compare op)
{
	return op == SCMP_CMP_LT || op == SCMP_CMP_LE;
}

/*
 * Two tests of one argument as one libseccomp atom, when one exists: the
 * result replaces *o.  Returns 1 when merged, 0 when the pair can never
 * hold, -1 when no single atom says both (a range a > 3 && a < 10, two
 * different !=).
 */
static int atom_merge(struct scmp_arg_cmp *o, const struct scmp_arg_cmp *atom)
{
	uint64_t x, y;
	int okx, oky;

	/* An equality pins the value: the other test is then a constant,
	 * true (keep the equality) or false. */
	if (o->op == SCMP_CMP_EQ)
		return atom_holds(atom, o->datum_a) ? 1 : 0;
	if (atom->op == SCMP_CMP_EQ) {
		if (!atom_holds(o, atom->datum_a))
			return 0;
		*o = *atom;
		return 1;
	}
	if (o->op == SCMP_CMP_MASKED_EQ && atom->op == SCMP_CMP_MASKED_EQ) {
		uint64_t both = o->datum_a & atom->datum_a;

		if ((o->datum_b & both) != (atom->datum_b & both))
			return 0;
		o->datum_a |= atom->datum_a;
		o->datum_b |= atom->datum_b;
		return 1;
	}
	/* Two bounds on the same side: the tighter one says both. */
	if ((is_lower(o->op) && is_lower(atom->op)) || (is_upper(o->op) && is_upper(atom->op))) {
		okx = bound_edge(o, &x);
		oky = bound_edge(atom, &y);
		if (!okx || !oky)
			return 0;
		if (is_lower(o->op) ? y > x : y < x)
			*o = *atom;
		return 1;
	}
	/* a != c next to a bound that already excludes c is the bound. */
	if (o->op == SCMP_CMP_NE && atom->op != SCMP_CMP_NE && atom->op != SCMP_CMP_MASKED_EQ &&
	    !atom_holds(atom, o->datum_a)) {
		*o = *atom;
		return 1;
	}
	if (atom->op == SCMP_CMP_NE && o->op != SCMP_CMP_NE && o->op != SCMP_CMP_MASKED_EQ &&
	    !atom_holds(o, atom->datum_a))
		return 1;
	return -1;
}

/*
 * Add atom to conjunction c.  Returns 1 when added or merged, 0 when the
 * conjunction became false, -1 when the pair cannot be expressed (*clash is
 * then the test already there).
 */
static int conj_add(struct sc_conj *c, const struct scmp_arg_cmp *atom, struct scmp_arg_cmp *clash)
{
	unsigned i;
	int m;

	for (i = 0; i < c->n; i++) {
		struct scmp_arg_cmp *o = &c->cmp[i];

		if (o->arg != atom->arg)
			continue;
		if (o->op == atom->op && o->datum_a == atom->datum_a && o->datum_b == atom->datum_b)
			return 1;
		m = atom_merge(o, atom);
		if (m < 0)
			*clash = *o;
		return m;
	}
	if (c->n == 6)
		return -1; /* cannot happen: six arguments, one test each */
	c->cmp[c->n++] = *atom;
	return 1;
}

static int dnf_push(struct dnf *d, const struct sc_conj *c)
{
	if (d->n == CHECK_MAX_CONJ)
		return -1;
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 8;
		struct sc_conj *v = realloc(d->v, cap * sizeof(*v));

		if (v == NULL)
			return -1;
		d->v = v;
		d->cap = cap;
	}
	d->v[d->n++] = *c;
	return 0;
}

static const char *arg_name(const struct pol_rule *r, unsigned i)
{
	return i < r->nargs ? r->argnames[i] : "?";
}

/*
 * Expand f, conjoined with the atoms already in base, into out.  Returns 0,
 * -1 after an error, -2 past CHECK_MAX_CONJ alternatives, -3 past
 * CHECK_MAX_STEPS calls.  The step budget is what bounds the time: an &&
 * re-expands its right side once per alternative of its left side, and
 * alternatives that contradict each other vanish without counting towards
 * CHECK_MAX_CONJ, so nested groups can take exponential time while the
 * result stays small.
 */
static int dnf_expand(struct ck *k, const struct cf *f, const struct sc_conj *base, struct dnf *out)
{
	struct sc_conj c;
	struct dnf left = { NULL, 0, 0 };
	struct scmp_arg_cmp clash;
	size_t i;
	int rc = 0;

	if (++k->steps > CHECK_MAX_STEPS)
		return -3;
	switch (f->kind) {
	case CF_TRUE:
		return dnf_push(out, base) == 0 ? 0 : -2;
	case CF_FALSE:
		return 0;
	case CF_ATOM:
		c = *base;
		switch (conj_add(&c, &f->atom, &clash)) {
		case 1: return dnf_push(out, &c) == 0 ? 0 : -2;
		case 0: return 0;
		default:
			ck_error(k, &f->loc, "'%s' is tested twice in one && chain, which seccomp (libseccomp) cannot "
					     "express; list the allowed values instead (%s == A || %s == B)",
				 arg_name(k->r, f->atom.arg), arg_name(k->r, f->atom.arg), arg_name(k->r, f->atom.arg));
			return -1;
		}
	case CF_OR:
		rc = dnf_expand(k, f->a, base, out);
		return rc != 0 ? rc : dnf_expand(k, f->b, base, out);
	case CF_AND:
		rc = dnf_expand(k, f->a, base, &left);
		for (i = 0; rc == 0 && i < left.n; i++)
			rc = dnf_expand(k, f->b, &left.v[i], out);
		free(left.v);
		return rc;
	}
	return -1;
}

/* --- a shape libseccomp 2.5.4 loops on --------------------------------- */

/*
 * libseccomp builds one tree per syscall from its rules, and an argument
 * test is two or three nodes on 32-bit words: the high word first.  A test
 * with !=, <, <=, > or >= points two of its nodes at the next argument's
 * test, so the rule is a graph, not a tree.  When a second rule begins with
 * a node equal to the first rule's first node (same argument, same
 * operator class, same high word and mask), _db_tree_add() merges the two
 * through the shared nodes and can link a level into itself: generation
 * never ends (`a0 != 0 && (a1 & 0x300000000)`, whose two alternatives
 * share `a0 != 0`, loops; alternatives that begin `a0 > 0x10` and
 * `a0 > 0xffffffff` have the same first node, "high word > 0", and can loop
 * as well; tests/unit/test_seccomp_gen.c has both).  Found by experiment
 * over random conditions, each built in a child with a time limit: of
 * about 12,000 with two to four alternatives over up to four arguments,
 * some 550 looped, and all but two of them had such a pair, refused here as
 *   two alternatives whose first tests (lowest argument) have the same
 *   high-word node, one of the two with a !=, <, <=, > or >= test that is
 *   not its last.
 * About half of the conditions refused this way would have terminated,
 * often with a wrong filter.  The two others looped through libseccomp's
 * pruning of one rule by another, with no shared first test; every loop
 * seen needed a !=/</> test before a later argument (without one, every
 * rule is a tree), so that wider shape (policy_rule_may_loop()) is built
 * in a child with a time limit by compiler/seccomp_gen.c.  Whatever
 * terminates is checked by compiler/seccomp_verify.c.
 */
struct seccomp_root {
	unsigned arg;
	int cls; /* 1: == and != (and a mask of all high bits); 2: ordering; 3: mask */
	uint32_t mask, datum;
};

static struct seccomp_root conj_root(const struct sc_conj *c)
{
	const struct scmp_arg_cmp *a = &c->cmp[0];
	struct seccomp_root k;
	unsigned i;

	for (i = 1; i < c->n; i++)
		if (c->cmp[i].arg < a->arg)
			a = &c->cmp[i];
	k.arg = a->arg;
	k.mask = 0xffffffffu;
	k.datum = (uint32_t)(a->datum_a >> 32);
	k.cls = 2;
	if (a->op == SCMP_CMP_EQ || a->op == SCMP_CMP_NE) {
		k.cls = 1;
	} else if (a->op == SCMP_CMP_MASKED_EQ) {
		k.mask = (uint32_t)(a->datum_a >> 32);
		k.datum = (uint32_t)(a->datum_b >> 32) & k.mask;
		k.cls = k.mask == 0xffffffffu ? 1 : 3;
	}
	return k;
}

/* Whether c has a test other than == and a mask before its last argument. */
static int conj_forks(const struct sc_conj *c)
{
	unsigned i, last = 0;

	for (i = 0; i < c->n; i++)
		if (c->cmp[i].arg > last)
			last = c->cmp[i].arg;
	for (i = 0; i < c->n; i++)
		if (c->cmp[i].op != SCMP_CMP_EQ && c->cmp[i].op != SCMP_CMP_MASKED_EQ && c->cmp[i].arg < last)
			return 1;
	return 0;
}

int policy_rule_may_loop(const struct sc_rule *r)
{
	size_t i;

	/* Without such a test every rule is a tree, and no merge of trees
	 * has been seen to loop. */
	for (i = 0; r->nconj > 1 && i < r->nconj; i++)
		if (conj_forks(&r->conj[i]))
			return 1;
	return 0;
}

/* 1 and the argument of the shared first test when libseccomp would loop. */
static int dnf_loops(const struct dnf *d, unsigned *arg)
{
	struct seccomp_root x, y;
	size_t i, j;

	for (i = 0; i < d->n; i++) {
		x = conj_root(&d->v[i]);
		for (j = i + 1; j < d->n; j++) {
			y = conj_root(&d->v[j]);
			if (x.arg == y.arg && x.cls == y.cls && x.mask == y.mask && x.datum == y.datum &&
			    (conj_forks(&d->v[i]) || conj_forks(&d->v[j]))) {
				*arg = x.arg;
				return 1;
			}
		}
	}
	return 0;
}

/* --- the high 32 bits --------------------------------------------------- */

/* Whether an action lets the call run. */
static int action_runs(uint32_t act)
{
	return act == SCMP_ACT_ALLOW || act == SCMP_ACT_LOG;
}

/* The first atom of f with operator op and a constant of at most 32 bits. */
static const struct cf *cf_find_narrow(const struct cf *f, enum scmp_compare op)
{
	const struct cf *g;

	if (f->kind == CF_ATOM)
		return f->atom.op == op && f->atom.datum_a <= 0xffffffffu ? f : NULL;
	if (f->kind != CF_AND && f->kind != CF_OR)
		return NULL;
	g = cf_find_narrow(f->a, op);
	return g != NULL ? g : cf_find_narrow(f->b, op);
}

/*
 * Seccomp compares all 64 bits of an argument; the kernel reads an int
 * argument as its low 32.  A test that picks out the values to refuse by
 * their full 64 bits is then dodged by setting high bits: 0x100000026 is
 * not AF_ALG to `domain != AF_ALG`, and is AF_ALG to socket().  That is a
 * != in a rule that lets the call run when the default refuses it, or an
 * == in a rule that refuses when the default runs it.  The opposite uses
 * (an allowlist of ==, a refusal by !=) fail closed, so they are not
 * warned about; neither are masked tests (the mask says which bits count)
 * nor constants above 32 bits (the argument is evidently 64 bits wide).
 * Argument types are not known here, so a 64-bit argument gets the warning
 * too: for it, high bits are real and the test is what it says.
 */
static void warn_high_bits(struct ck *k, const struct pol_rule *r, const struct cf *f, uint32_t act, uint32_t def)
{
	const struct cf *g;
	const char *name;
	unsigned long long c;

	if (action_runs(act) == action_runs(def))
		return;
	g = cf_find_narrow(f, action_runs(act) ? SCMP_CMP_NE : SCMP_CMP_EQ);
	if (g == NULL)
		return;
	name = arg_name(r, g->atom.arg);
	c = (unsigned long long)g->atom.datum_a;
	if (action_runs(act))
		diag_at(k->d, DIAG_WARNING, g->loc.file, g->loc.line, g->loc.col,
			"'%s != 0x%llx' lets high bits through: seccomp compares all 64 bits of '%s', the kernel "
			"reads an int argument as its low 32, so 0x%llx passes here and is 0x%llx to the kernel; "
			"allow the wanted values with == instead", name, c, name, c | 0x100000000ull, c);
	else
		diag_at(k->d, DIAG_WARNING, g->loc.file, g->loc.line, g->loc.col,
			"'%s == 0x%llx' can be dodged with high bits: seccomp compares all 64 bits of '%s', the "
			"kernel reads an int argument as its low 32, so 0x%llx gets the default here and is "
			"0x%llx to the kernel; compare the low bits ((%s & 0xffffffff) == 0x%llx) or allow the "
			"wanted values instead", name, c, name, c | 0x100000000ull, c, name, c);
}

/* --- rules -------------------------------------------------------------- */

static int action_of(struct ck *k, const struct pol_action *a, uint32_t *out)
{
	uint64_t e = a->errno_value;

	switch (a->kind) {
	case POL_ALLOW: *out = SCMP_ACT_ALLOW; return 0;
	case POL_KILL: *out = SCMP_ACT_KILL_PROCESS; return 0;
	case POL_LOG: *out = SCMP_ACT_LOG; return 0;
	case POL_TRAP: *out = SCMP_ACT_TRAP; return 0;
	case POL_ERRNO:
		if (a->errno_name != NULL) {
			if (a->errno_name[0] != 'E' || const_lookup(a->errno_name, &e) != 0) {
				const char *hint = const_suggest(a->errno_name);

				if (hint != NULL && hint[0] == 'E')
					ck_error(k, &a->loc, "unknown errno name '%s'; did you mean '%s'?", a->errno_name,
						 hint);
				else
					ck_error(k, &a->loc, "unknown errno name '%s'", a->errno_name);
				return -1;
			}
		}
		/* The kernel keeps 16 bits of SECCOMP_RET_DATA; errno values
		 * above MAX_ERRNO would read as valid return values. */
		if (e == 0 || e > 4095) {
			ck_error(k, &a->loc, "errno(%llu) is out of range (1 to 4095)", (unsigned long long)e);
			return -1;
		}
		*out = SCMP_ACT_ERRNO((uint32_t)e);
		return 0;
	}
	return -1;
}

static const char *action_text(uint32_t act, char *buf, size_t cap)
{
	if (act == SCMP_ACT_ALLOW)
		return "allow";
	if (act == SCMP_ACT_KILL_PROCESS)
		return "kill";
	if (act == SCMP_ACT_LOG)
		return "log";
	if (act == SCMP_ACT_TRAP)
		return "trap";
	snprintf(buf, cap, "errno(%u)", act & 0xFFFFu);
	return buf;
}

/* Every syscall name libseccomp knows for x86_64, for "did you mean". */
static const char **syscall_names(size_t *n)
{
	const char **v = calloc(1024, sizeof(*v));
	int nr;

	*n = 0;
	if (v == NULL)
		return NULL;
	for (nr = 0; nr < 1024; nr++) {
		char *s = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);

		if (s != NULL)
			v[(*n)++] = s;
	}
	return v;
}

static void syscall_names_free(const char **v, size_t n)
{
	size_t i;

	for (i = 0; v != NULL && i < n; i++)
		free((void *)v[i]);
	free(v);
}

static int cmp_rule_nr(const void *a, const void *b)
{
	const struct sc_rule *x = a, *y = b;

	return x->nr < y->nr ? -1 : x->nr > y->nr;
}

static int rule_check(struct ck *k, const struct pol_rule *r, uint32_t def, const char **names, size_t nnames,
		      struct sc_rule *out)
{
	struct sc_conj none;
	struct dnf dnf = { NULL, 0, 0 };
	struct cf *f;
	char b1[32];
	unsigned shared = 0;
	int nr, nargs, rc;
	size_t i, j;

	k->r = r;
	k->failed = 0;
	k->steps = 0;
	memset(out, 0, sizeof(*out));
	nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, r->syscall);
	if (nr == __NR_SCMP_ERROR || nr < 0) {
		const char *hint = suggest_nearest(r->syscall, names, nnames);

		if (nr != __NR_SCMP_ERROR)
			ck_error(k, &r->loc, "syscall '%s' does not exist on x86_64", r->syscall);
		else if (hint != NULL)
			ck_error(k, &r->loc, "unknown syscall '%s'; did you mean '%s'?", r->syscall, hint);
		else
			ck_error(k, &r->loc, "unknown syscall '%s' for x86_64", r->syscall);
		return -1;
	}
	out->nr = nr;
	out->name = r->syscall;
	out->loc = r->loc;
	if (action_of(k, &r->action, &out->action) != 0)
		return -1;
	nargs = syscall_nargs(r->syscall);
	if (nargs < 0)
		nargs = 6;
	for (i = 0; i < r->nargs; i++) {
		if ((int)i >= nargs) {
			ck_error(k, &r->argloc[i], "%s() has %d argument%s; '%s' would be argument %zu", r->syscall,
				 nargs, nargs == 1 ? "" : "s", r->argnames[i], i + 1);
			return -1;
		}
		for (j = 0; j < i; j++) {
			if (strcmp(r->argnames[i], r->argnames[j]) == 0) {
				ck_error(k, &r->argloc[i], "argument name '%s' is used twice", r->argnames[i]);
				return -1;
			}
		}
	}
	if (out->action == def) {
		/* Only the policy's own rules are worth a warning: an included
		 * file (base.policy) serves profiles with other defaults. */
		if (!r->included)
			diag_at(k->d, DIAG_WARNING, r->loc.file, r->loc.line, r->loc.col,
				"rule for '%s' has no effect: the default action is already %s", r->syscall,
				action_text(def, b1, sizeof(b1)));
		return 1; /* dropped: libseccomp refuses such a rule anyway */
	}
	if (r->cond == NULL)
		return 0;
	f = nnf(k, r->cond, 0, 0);
	if (f == NULL || k->failed)
		return -1;
	if (f->kind == CF_TRUE || f->kind == CF_FALSE) {
		ck_error(k, &r->cond->loc, "the condition of '%s' is always %s, whatever the arguments",
			 r->syscall, f->kind == CF_TRUE ? "true" : "false");
		return -1;
	}
	memset(&none, 0, sizeof(none));
	rc = dnf_expand(k, f, &none, &dnf);
	if (rc == -2) {
		ck_error(k, &r->cond->loc, "the condition of '%s' expands to more than %d alternatives", r->syscall,
			 CHECK_MAX_CONJ);
		rc = -1;
	} else if (rc == -3) {
		ck_error(k, &r->cond->loc,
			 "the condition of '%s' is too complex to expand into at most %d alternatives (more than %d "
			 "steps); simplify it", r->syscall, CHECK_MAX_CONJ, CHECK_MAX_STEPS);
		rc = -1;
	}
	if (rc == 0 && dnf.n == 0) {
		ck_error(k, &r->cond->loc, "the condition of '%s' can never hold", r->syscall);
		rc = -1;
	}
	for (i = 0; rc == 0 && i < dnf.n; i++) {
		if (dnf.v[i].n == 0) {
			ck_error(k, &r->cond->loc, "the condition of '%s' always holds: write the rule without one",
				 r->syscall);
			rc = -1;
		}
	}
	if (rc == 0 && dnf_loops(&dnf, &shared)) {
		ck_error(k, &r->cond->loc,
			 "the condition of '%s' has a shape libseccomp 2.5 loops forever on: two of its "
			 "alternatives begin with the same test of '%s' (its high 32 bits), and one goes on from a "
			 "'!=', '<', '<=', '>' or '>=' test to a later argument; rewrite it so that such a test is "
			 "the last of its alternative, or so that the alternatives begin differently",
			 r->syscall, arg_name(r, shared));
		rc = -1;
	}
	if (rc == 0)
		warn_high_bits(k, r, f, out->action, def);
	if (rc == 0) {
		out->conj = arena_calloc(k->a, dnf.n, sizeof(*out->conj));
		if (out->conj == NULL) {
			rc = -1;
		} else {
			memcpy(out->conj, dnf.v, dnf.n * sizeof(*dnf.v));
			out->nconj = dnf.n;
		}
	}
	free(dnf.v);
	return rc;
}

struct seen {
	int nr;
	uint32_t action;
	struct ast_loc loc;
};

int policy_check(const struct pol_file *pf, struct arena *a, struct sc_policy *out, struct diags *d)
{
	struct ck k = { a, d, NULL, 0, 0 };
	const char **names = NULL;
	struct seen *seen = NULL;
	size_t nnames = 0, nseen = 0, i, j, n = 0;
	char b1[32], b2[32];
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (!pf->has_default) {
		diag_at(d, DIAG_ERROR, pf->nrules ? pf->rules[0].loc.file : NULL, 0, 0,
			"the policy has no 'default' action (write e.g. default kill;)");
		rc = -1;
	} else if (action_of(&k, &pf->def, &out->def_action) != 0) {
		rc = -1;
	}
	names = syscall_names(&nnames);
	seen = malloc((pf->nrules ? pf->nrules : 1) * sizeof(*seen));
	out->rules = arena_calloc(a, pf->nrules ? pf->nrules : 1, sizeof(*out->rules));
	if (names == NULL || seen == NULL || out->rules == NULL) {
		diag_at(d, DIAG_ERROR, NULL, 0, 0, "out of memory");
		rc = -1;
		goto out;
	}
	for (i = 0; i < pf->nrules; i++) {
		const struct pol_rule *r = &pf->rules[i];
		struct sc_rule *sr = &out->rules[n];
		int got = rule_check(&k, r, out->def_action, names, nnames, sr);

		if (got < 0) {
			rc = -1;
			continue;
		}
		/* One rule per syscall: "if cond then A else default" is the
		 * whole meaning; two rules would need a precedence that
		 * libseccomp does not define (an unconditional rule silently
		 * overrides conditional ones there). */
		for (j = 0; j < nseen; j++)
			if (seen[j].nr == sr->nr)
				break;
		if (j < nseen) {
			if (seen[j].action != sr->action)
				diag_at(d, DIAG_ERROR, r->loc.file, r->loc.line, r->loc.col,
					"conflicting rules for '%s': %s here, %s before", r->syscall,
					action_text(sr->action, b1, sizeof(b1)),
					action_text(seen[j].action, b2, sizeof(b2)));
			else
				diag_at(d, DIAG_ERROR, r->loc.file, r->loc.line, r->loc.col,
					"'%s' already has a rule; a syscall has one rule", r->syscall);
			diag_at(d, DIAG_NOTE, seen[j].loc.file, seen[j].loc.line, seen[j].loc.col,
				"the first rule for '%s' is here", r->syscall);
			rc = -1;
			continue;
		}
		seen[nseen].nr = sr->nr;
		seen[nseen].action = sr->action;
		seen[nseen].loc = r->loc;
		nseen++;
		if (got == 0)
			n++; /* got == 1: same as the default, warned and dropped */
	}
	out->nrules = n;
	qsort(out->rules, n, sizeof(*out->rules), cmp_rule_nr);
out:
	syscall_names_free(names, nnames);
	free(seen);
	return rc;
}
