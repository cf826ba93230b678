/* SPDX-License-Identifier: Apache-2.0 */
/*
 * constraint_text.c - decompile one constraint program (see
 * constraint_text.h).
 *
 * The code shapes are those of compiler/constraint_gen.c:
 *
 *   a && b      a; JF L; b; L:
 *   a || b      a; JT L; b; L:
 *   x in [..]   x; v1; EQ; JT L; x; v2; EQ; JT L; ... x; vn; EQ; L:
 *
 * One pass runs the program on a stack of syntax nodes.  A jump pops its
 * left operand and leaves a mark "an && (||) whose right operand ends at
 * L"; at L, the one node the fall-through path has pushed since then is
 * that right operand.  Marks nest (several may end at the same L, the
 * innermost first), so a || (b || c) and the `in` chain come out as
 * right-nested trees and (a || b) || c as a left-nested one, exactly as the
 * parser builds them.  TONUM is implicit in the language (an integer meets
 * a number as a number), so it prints as its operand.
 *
 * Printing puts parentheses where the grammar's precedence needs them
 * (loosest first: ||, &&, !, the comparisons and `in`, which do not chain)
 * and around a comparison under '!', where they only help the reader.
 * A right-nested chain of `x == literal` over the same x prints as
 * `x in [...]`, which compiles to the same chain; strings are excluded,
 * since `in` over strings compiles to one IN instruction instead.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "runtime/client/constraint_text.h"
#include "runtime/client/textbuf.h"

/* The most values an `in` list may hold (compiler/constraint_gen.h,
 * CONSTRAINT_MAX_IN); a longer chain prints as comparisons. */
#define CT_MAX_IN 256u

enum ct_kind {
	CT_INSN, /* a value, an op over a (and b): in says which */
	CT_AND,
	CT_OR,
};

struct ct_node {
	enum ct_kind kind;
	const struct cpol_insn *in; /* CT_INSN */
	const struct ct_node *a, *b;
	/* CT_OR: the number of arms when the node is a right-nested chain of
	 * `x == literal` over the same x (it prints as `x in [...]`), else 0.
	 * Worked out once, when the node is made: deciding it while printing
	 * would redo it at every level of a nested tree. */
	uint32_t in_arms;
};

/* A jump waiting for the end of its right operand. */
struct ct_mark {
	enum ct_kind kind; /* CT_AND (JF) or CT_OR (JT) */
	uint32_t target;
	const struct ct_node *left;
	uint32_t depth; /* stack depth once left was popped */
};

struct ct {
	const struct cpol_policy *p;
	const struct cpol_tool *t;
	struct ct_node *nodes; /* one per instruction at most */
	size_t nnodes, capnodes;
	const struct ct_node *stack[CPOL_CONSTRAINT_MAX_STACK];
	uint32_t depth;
	struct ct_mark *marks; /* one per jump at most */
	uint32_t nmarks;
	char *err;
	size_t errlen;
	int failed;
};

/* Precedence levels of the printer, loosest first. */
enum { CT_P_OR = 1, CT_P_AND, CT_P_NOT, CT_P_CMP, CT_P_ATOM };

__attribute__((format(printf, 2, 3))) static void ct_fail(struct ct *c, const char *fmt, ...)
{
	va_list ap;

	if (c->failed)
		return;
	c->failed = 1;
	va_start(ap, fmt);
	vsnprintf(c->err, c->errlen, fmt, ap);
	va_end(ap);
}

/* ---- bytecode -> tree --------------------------------------------------- */

static uint32_t ct_in_arms(const struct ct_node *n);

static const struct ct_node *ct_node(struct ct *c, enum ct_kind kind, const struct cpol_insn *in,
				     const struct ct_node *a, const struct ct_node *b)
{
	struct ct_node *n;

	if (c->nnodes == c->capnodes) {
		ct_fail(c, "more nodes than instructions");
		return NULL;
	}
	n = &c->nodes[c->nnodes++];
	n->kind = kind;
	n->in = in;
	n->a = a;
	n->b = b;
	n->in_arms = kind == CT_OR ? ct_in_arms(n) : 0;
	return n;
}

static int ct_push(struct ct *c, const struct ct_node *n, uint32_t at)
{
	if (n == NULL)
		return -1;
	if (c->depth == CPOL_CONSTRAINT_MAX_STACK) {
		ct_fail(c, "instruction %u overflows the stack", at);
		return -1;
	}
	c->stack[c->depth++] = n;
	return 0;
}

/* A pop may not reach below a pending jump's depth: the compiler's right
 * operands never consume what lies under them. */
static const struct ct_node *ct_pop(struct ct *c, uint32_t at)
{
	uint32_t floor = c->nmarks ? c->marks[c->nmarks - 1].depth : 0;

	if (c->depth <= floor) {
		ct_fail(c, "instruction %u takes an operand the compiler would not have left there", at);
		return NULL;
	}
	return c->stack[--c->depth];
}

static int ct_is_op(const struct ct_node *n, uint8_t op)
{
	return n->kind == CT_INSN && n->in->op == op;
}

/* `x == literal` over an integer, number or boolean literal, as `in`
 * pushes it: one arm of an `in` chain. */
static int ct_arm(const struct ct_node *n)
{
	return ct_is_op(n, CPOL_OP_EQ) &&
	       (ct_is_op(n->b, CPOL_OP_INT) || ct_is_op(n->b, CPOL_OP_NUM) || ct_is_op(n->b, CPOL_OP_BOOL));
}

static const struct ct_node *ct_skip_tonum(const struct ct_node *n)
{
	while (ct_is_op(n, CPOL_OP_TONUM))
		n = n->a;
	return n;
}

/* The same expression, as text: equal trees once the (invisible) TONUMs
 * are left out. */
static int ct_same(const struct ct_node *x, const struct ct_node *y)
{
	const struct cpol_insn *a, *b;

	x = ct_skip_tonum(x);
	y = ct_skip_tonum(y);
	if (x->kind != y->kind)
		return 0;
	if (x->kind != CT_INSN)
		return ct_same(x->a, y->a) && ct_same(x->b, y->b);
	a = x->in;
	b = y->in;
	if (a->op != b->op)
		return 0;
	switch (a->op) {
	case CPOL_OP_PARAM:
	case CPOL_OP_HAS:
	case CPOL_OP_BOOL:
		return a->a == b->a;
	case CPOL_OP_INT: return a->ival == b->ival;
	case CPOL_OP_NUM: return memcmp(&a->fval, &b->fval, sizeof(a->fval)) == 0;
	case CPOL_OP_STR: return a->len == b->len && memcmp(a->str, b->str, a->len) == 0;
	case CPOL_OP_STARTS_WITH:
	case CPOL_OP_ENDS_WITH:
		return a->len == b->len && memcmp(a->str, b->str, a->len) == 0 && ct_same(x->a, y->a);
	case CPOL_OP_IN:
		if (a->list.n != b->list.n)
			return 0;
		for (uint32_t i = 0; i < a->list.n; i++)
			if (strcmp(a->list.v[i], b->list.v[i]) != 0)
				return 0;
		return ct_same(x->a, y->a);
	case CPOL_OP_LEN:
	case CPOL_OP_NOT:
		return ct_same(x->a, y->a);
	default: /* comparisons */
		return ct_same(x->a, y->a) && ct_same(x->b, y->b);
	}
}

/* in_arms of a new || node (see struct ct_node). */
static uint32_t ct_in_arms(const struct ct_node *n)
{
	if (!ct_arm(n->a))
		return 0;
	if (ct_arm(n->b))
		return ct_same(n->a->a, n->b->a) ? 2 : 0;
	if (n->b->kind == CT_OR && n->b->in_arms > 0 && n->b->in_arms < CT_MAX_IN && ct_same(n->a->a, n->b->a->a))
		return n->b->in_arms + 1;
	return 0;
}

/* Close every jump that ends at instruction i, innermost first. */
static int ct_land(struct ct *c, uint32_t i)
{
	while (c->nmarks > 0 && c->marks[c->nmarks - 1].target <= i) {
		struct ct_mark *m = &c->marks[c->nmarks - 1];
		const struct ct_node *right;

		if (m->target < i || c->depth != m->depth + 1) {
			ct_fail(c, "the jump to instruction %u is not the end of an && or || operand", m->target);
			return -1;
		}
		right = c->stack[--c->depth];
		c->nmarks--;
		if (ct_push(c, ct_node(c, m->kind, NULL, m->left, right), i) != 0)
			return -1;
	}
	return 0;
}

/* Whether the language can write s: its escapes cover \n and \t only, and
 * a constraint is UTF-8 text without other control characters. */
static int ct_writable(const char *s, size_t n)
{
	size_t i = 0, k;

	while (i < n) {
		unsigned char ch = (unsigned char)s[i];

		if ((ch < 0x20 && ch != '\n' && ch != '\t') || ch == 0x7f || (k = utf8_char(s + i, n - i)) == 0)
			return 0;
		i += k;
	}
	return 1;
}

/* What a verified program may hold that the language cannot write: a
 * number it cannot spell (a subnormal reads as out of range), a string
 * with other control bytes or malformed UTF-8, an `in` list over
 * CT_MAX_IN strings.  The compiler never writes them. */
static int ct_expressible(struct ct *c, const struct cpol_insn *in, uint32_t at)
{
	int ok = 1;

	switch (in->op) {
	case CPOL_OP_NUM: ok = isfinite(in->fval) && (in->fval == 0 || isnormal(in->fval)); break;
	case CPOL_OP_STR:
	case CPOL_OP_STARTS_WITH:
	case CPOL_OP_ENDS_WITH: ok = ct_writable(in->str, in->len); break;
	case CPOL_OP_IN:
		ok = in->list.n <= CT_MAX_IN;
		for (uint32_t j = 0; ok && j < in->list.n; j++)
			ok = ct_writable(in->list.v[j], strlen(in->list.v[j]));
		break;
	default: break;
	}
	if (!ok)
		ct_fail(c, "instruction %u holds a value the constraint language cannot write", at);
	return ok;
}

static int ct_step(struct ct *c, uint32_t i, uint32_t ret)
{
	const struct cpol_insn *in = &c->p->constraints[i];
	const struct ct_node *a, *b;
	int32_t off;

	if (!ct_expressible(c, in, i))
		return -1;
	switch (in->op) {
	case CPOL_OP_PARAM:
	case CPOL_OP_HAS:
		if (in->a >= c->t->params.count) {
			ct_fail(c, "instruction %u names parameter %u of %u", i, in->a, c->t->params.count);
			return -1;
		}
		return ct_push(c, ct_node(c, CT_INSN, in, NULL, NULL), i);
	case CPOL_OP_INT:
	case CPOL_OP_NUM:
	case CPOL_OP_BOOL:
	case CPOL_OP_STR:
		return ct_push(c, ct_node(c, CT_INSN, in, NULL, NULL), i);
	case CPOL_OP_LEN:
	case CPOL_OP_TONUM:
	case CPOL_OP_IN:
	case CPOL_OP_STARTS_WITH:
	case CPOL_OP_ENDS_WITH:
	case CPOL_OP_NOT:
		if ((a = ct_pop(c, i)) == NULL)
			return -1;
		return ct_push(c, ct_node(c, CT_INSN, in, a, NULL), i);
	case CPOL_OP_EQ:
	case CPOL_OP_NE:
	case CPOL_OP_LT:
	case CPOL_OP_LE:
	case CPOL_OP_GT:
	case CPOL_OP_GE:
		if ((b = ct_pop(c, i)) == NULL || (a = ct_pop(c, i)) == NULL)
			return -1;
		return ct_push(c, ct_node(c, CT_INSN, in, a, b), i);
	case CPOL_OP_JF:
	case CPOL_OP_JT:
		memcpy(&off, &in->a, sizeof(off));
		if (off < 1 || (uint64_t)i + 1 + (uint64_t)off > ret) {
			ct_fail(c, "the jump at instruction %u does not end inside its program", i);
			return -1;
		}
		if ((a = ct_pop(c, i)) == NULL)
			return -1;
		c->marks[c->nmarks++] = (struct ct_mark){ in->op == CPOL_OP_JF ? CT_AND : CT_OR,
							  i + 1 + (uint32_t)off, a, c->depth };
		return 0;
	default:
		ct_fail(c, "instruction %u has op %u", i, in->op);
		return -1;
	}
}

/* The tree of the program [first, ret], ret its RET. */
static const struct ct_node *ct_build(struct ct *c, uint32_t first, uint32_t ret)
{
	for (uint32_t i = first; i < ret; i++)
		if (ct_land(c, i) != 0 || ct_step(c, i, ret) != 0)
			return NULL;
	if (ct_land(c, ret) != 0)
		return NULL;
	if (c->nmarks != 0 || c->depth != 1) {
		ct_fail(c, "the program leaves %u values for its RET", c->depth);
		return NULL;
	}
	return c->stack[0];
}

/* ---- tree -> text ------------------------------------------------------- */

static void ct_print(struct textbuf *o, const struct ct *c, const struct ct_node *n, int need);

static int ct_prec(const struct ct_node *n)
{
	switch (n->kind) {
	case CT_OR: return n->in_arms ? CT_P_CMP : CT_P_OR;
	case CT_AND: return CT_P_AND;
	case CT_INSN: break;
	}
	switch (n->in->op) {
	case CPOL_OP_NOT: return CT_P_NOT;
	case CPOL_OP_TONUM: return ct_prec(n->a);
	case CPOL_OP_EQ:
	case CPOL_OP_NE:
	case CPOL_OP_LT:
	case CPOL_OP_LE:
	case CPOL_OP_GT:
	case CPOL_OP_GE:
	case CPOL_OP_IN:
		return CT_P_CMP;
	default:
		return CT_P_ATOM;
	}
}

/* A string literal: the language's escapes are \" \\ \n \t; every other
 * byte stands for itself. */
static void ct_string(struct textbuf *o, const char *s, size_t n)
{
	textbuf_putc(o, '"');
	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
		case '"': textbuf_puts(o, "\\\""); break;
		case '\\': textbuf_puts(o, "\\\\"); break;
		case '\n': textbuf_puts(o, "\\n"); break;
		case '\t': textbuf_puts(o, "\\t"); break;
		default: textbuf_putc(o, s[i]); break;
		}
	}
	textbuf_putc(o, '"');
}

static const char *ct_cmp_text(uint8_t op)
{
	switch (op) {
	case CPOL_OP_EQ: return " == ";
	case CPOL_OP_NE: return " != ";
	case CPOL_OP_LT: return " < ";
	case CPOL_OP_LE: return " <= ";
	case CPOL_OP_GT: return " > ";
	default: return " >= ";
	}
}

static void ct_literal(struct textbuf *o, const struct cpol_insn *in)
{
	switch (in->op) {
	case CPOL_OP_INT: textbuf_printf(o, "%lld", (long long)in->ival); break;
	case CPOL_OP_NUM:
		/* the verifier lets only finite numbers through */
		textbuf_double(o, in->fval, TEXTBUF_FLOAT);
		break;
	case CPOL_OP_BOOL: textbuf_puts(o, in->a ? "true" : "false"); break;
	default: ct_string(o, in->str, in->len); break;
	}
}

static void ct_emit(struct textbuf *o, const struct ct *c, const struct ct_node *n)
{
	const char *name;

	if (n->kind == CT_OR && n->in_arms > 0) {
		const struct ct_node *m = n;

		ct_print(o, c, n->a->a, CT_P_ATOM);
		textbuf_puts(o, " in [");
		for (uint32_t i = 0; i < n->in_arms; i++, m = m->b) {
			textbuf_puts(o, i ? ", " : "");
			ct_literal(o, (i + 1 < n->in_arms ? m->a : m)->b->in);
		}
		textbuf_putc(o, ']');
		return;
	}
	if (n->kind != CT_INSN) {
		ct_print(o, c, n->a, n->kind == CT_OR ? CT_P_OR : CT_P_AND);
		textbuf_puts(o, n->kind == CT_OR ? " || " : " && ");
		ct_print(o, c, n->b, n->kind == CT_OR ? CT_P_AND : CT_P_NOT);
		return;
	}
	switch (n->in->op) {
	case CPOL_OP_PARAM:
	case CPOL_OP_HAS:
		name = c->p->params[c->t->params.first + n->in->a].name;
		textbuf_printf(o, n->in->op == CPOL_OP_HAS ? "has(%s)" : "%s", name);
		break;
	case CPOL_OP_INT:
	case CPOL_OP_NUM:
	case CPOL_OP_BOOL:
	case CPOL_OP_STR:
		ct_literal(o, n->in);
		break;
	case CPOL_OP_TONUM:
		ct_emit(o, c, n->a);
		break;
	case CPOL_OP_LEN:
		textbuf_puts(o, "len(");
		ct_print(o, c, n->a, 0);
		textbuf_putc(o, ')');
		break;
	case CPOL_OP_STARTS_WITH:
	case CPOL_OP_ENDS_WITH:
		textbuf_puts(o, n->in->op == CPOL_OP_STARTS_WITH ? "starts_with(" : "ends_with(");
		ct_print(o, c, n->a, 0);
		textbuf_puts(o, ", ");
		ct_string(o, n->in->str, n->in->len);
		textbuf_putc(o, ')');
		break;
	case CPOL_OP_IN:
		ct_print(o, c, n->a, CT_P_ATOM);
		textbuf_puts(o, " in [");
		for (uint32_t i = 0; i < n->in->list.n; i++) {
			textbuf_puts(o, i ? ", " : "");
			ct_string(o, n->in->list.v[i], strlen(n->in->list.v[i]));
		}
		textbuf_putc(o, ']');
		break;
	case CPOL_OP_NOT:
		/* !!a needs nothing; !(a == b) parses the same without the
		 * parentheses, but few readers know that. */
		textbuf_putc(o, '!');
		ct_print(o, c, n->a, ct_is_op(n->a, CPOL_OP_NOT) ? CT_P_NOT : CT_P_ATOM);
		break;
	default: /* comparisons */
		ct_print(o, c, n->a, CT_P_ATOM);
		textbuf_puts(o, ct_cmp_text(n->in->op));
		ct_print(o, c, n->b, CT_P_ATOM);
		break;
	}
}

/* n where the grammar needs at least precedence `need`. */
static void ct_print(struct textbuf *o, const struct ct *c, const struct ct_node *n, int need)
{
	if (ct_prec(n) >= need) {
		ct_emit(o, c, n);
		return;
	}
	textbuf_putc(o, '(');
	ct_emit(o, c, n);
	textbuf_putc(o, ')');
}

/* ---- entry -------------------------------------------------------------- */

char *constraint_text(const struct cpol_policy *p, uint32_t tool, uint32_t k, char *err, size_t errlen)
{
	const struct cpol_tool *t;
	const struct ct_node *root;
	struct textbuf o;
	struct ct c;
	uint32_t i, first, end, seen = 0;
	char *text = NULL;

	memset(&c, 0, sizeof(c));
	c.p = p;
	c.err = err;
	c.errlen = errlen;
	textbuf_init(&o);
	if (errlen > 0)
		err[0] = '\0';
	if (tool >= p->ntools) {
		ct_fail(&c, "no tool %u", tool);
		goto out;
	}
	t = c.t = &p->tools[tool];
	end = t->constraints.first + t->constraints.count;
	if (end < t->constraints.first || end > p->nconstraints) {
		ct_fail(&c, "the tool's constraints lie outside the code");
		goto out;
	}
	/* Programs follow each other, each ending at its first RET. */
	first = t->constraints.first;
	for (i = first; i < end; i++) {
		if (p->constraints[i].op != CPOL_OP_RET)
			continue;
		if (seen++ == k)
			break;
		first = i + 1;
	}
	if (i == end) {
		ct_fail(&c, "tool %s has no constraint %u", t->id, k);
		goto out;
	}
	c.capnodes = i - first + 1;
	c.nodes = calloc(c.capnodes, sizeof(*c.nodes));
	c.marks = calloc(c.capnodes, sizeof(*c.marks));
	if (c.nodes == NULL || c.marks == NULL) {
		ct_fail(&c, "out of memory");
		goto out;
	}
	root = ct_build(&c, first, i);
	if (root == NULL)
		goto out;
	ct_print(&o, &c, root, 0);
	text = textbuf_take(&o, NULL);
	if (text == NULL)
		ct_fail(&c, "out of memory");
out:
	textbuf_free(&o);
	free(c.nodes);
	free(c.marks);
	return text;
}
