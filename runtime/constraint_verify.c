/* SPDX-License-Identifier: Apache-2.0 */
/*
 * constraint_verify.c - verify constraint bytecode before it may run.
 *
 * The loader has already checked each instruction on its own (known op,
 * allowed type byte, zero unused fields, valid string and list references);
 * this pass checks the programs they form.  Like the BPF verifier, it
 * relies on the shape of the code rather than on running it: jumps only go
 * forward, so one pass in instruction order sees every path into an
 * instruction before the instruction itself, and the abstract state at
 * each instruction (the types on the stack) is known exactly.  Work is
 * linear in the number of instructions.
 *
 * The abstract stack fits in one word: at most CPOL_CONSTRAINT_MAX_STACK
 * (16) slots of 4 bits, each a cpol_type.  Comparing two states at a join
 * is comparing two integers.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/constraint_verify.h"

_Static_assert(CPOL_CONSTRAINT_MAX_STACK * 4 <= 64, "the abstract stack must fit in 64 bits");

/* The types on the stack: slot k (0 = bottom) in bits [4k, 4k + 4). */
struct cv_state {
	uint64_t types;
	uint32_t depth;
};

/* What the first jump to an instruction brought, for later paths to match. */
struct cv_join {
	struct cv_state st;
	uint32_t from; /* the jump's index */
	int set;
};

struct cv {
	const struct cpol_policy *p;
	uint64_t tools_off, insns_off;
	struct blob_error *err;
	struct cv_join *join; /* by instruction index */
	struct cv_state st;   /* before the instruction being checked */
	uint32_t i;           /* that instruction */
};

static const char *const cv_op_names[] = {
	[CPOL_OP_RET] = "ret",     [CPOL_OP_PARAM] = "param", [CPOL_OP_HAS] = "has",
	[CPOL_OP_INT] = "int",     [CPOL_OP_NUM] = "num",     [CPOL_OP_BOOL] = "bool",
	[CPOL_OP_STR] = "str",     [CPOL_OP_LEN] = "len",     [CPOL_OP_TONUM] = "tonum",
	[CPOL_OP_EQ] = "eq",       [CPOL_OP_NE] = "ne",       [CPOL_OP_LT] = "lt",
	[CPOL_OP_LE] = "le",       [CPOL_OP_GT] = "gt",       [CPOL_OP_GE] = "ge",
	[CPOL_OP_IN] = "in",       [CPOL_OP_STARTS_WITH] = "starts_with",
	[CPOL_OP_ENDS_WITH] = "ends_with", [CPOL_OP_NOT] = "not", [CPOL_OP_JF] = "jf",
	[CPOL_OP_JT] = "jt",
};

const char *constraint_op_name(uint8_t op)
{
	if (op < sizeof(cv_op_names) / sizeof(cv_op_names[0]) && cv_op_names[op] != NULL)
		return cv_op_names[op];
	return "?";
}

__attribute__((format(printf, 4, 0))) static void cv_vset(struct cv *v, const char *field, uint64_t off,
							   const char *fmt, va_list ap)
{
	snprintf(v->err->field, sizeof(v->err->field), "%s", field);
	v->err->offset = off;
	vsnprintf(v->err->msg, sizeof(v->err->msg), fmt, ap);
}

/* A failure at a named field and byte offset (tool records). */
__attribute__((format(printf, 4, 5))) static int cv_fail_at(struct cv *v, const char *field, uint64_t off,
							      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cv_vset(v, field, off, fmt, ap);
	va_end(ap);
	return -1;
}

/* A failure at field `what` (op, type, a, b) of instruction i, which sits
 * `at` bytes into the record. */
__attribute__((format(printf, 5, 6))) static int cv_fail(struct cv *v, uint32_t i, const char *what, size_t at,
							   const char *fmt, ...)
{
	char field[64];
	va_list ap;

	snprintf(field, sizeof(field), "constraints[%u].%s", i, what);
	va_start(ap, fmt);
	cv_vset(v, field, v->insns_off + (uint64_t)i * CPOL_INSN_BYTES + at, fmt, ap);
	va_end(ap);
	return -1;
}

static uint32_t cv_slot(const struct cv_state *s, uint32_t k)
{
	return (uint32_t)(s->types >> (4 * k)) & 0xFu;
}

/* "[integer, boolean]", bottom first, for messages about stack shapes. */
static void cv_format(const struct cv_state *s, char *buf, size_t cap)
{
	size_t n = 0;

	n += (size_t)snprintf(buf + n, cap - n, "[");
	for (uint32_t k = 0; k < s->depth && n < cap; k++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%s", k ? ", " : "", policy_type_name(cv_slot(s, k)));
	if (n < cap)
		snprintf(buf + n, cap - n, "]");
}

static int cv_push(struct cv *v, uint32_t type)
{
	if (v->st.depth >= CPOL_CONSTRAINT_MAX_STACK)
		return cv_fail(v, v->i, "op", CPOL_INSN_OP,
			       "The %s instruction would push a value onto a full stack (%u values; the limit is %u).",
			       constraint_op_name(v->p->constraints[v->i].op), v->st.depth,
			       CPOL_CONSTRAINT_MAX_STACK);
	v->st.types &= ~((uint64_t)0xF << (4 * v->st.depth));
	v->st.types |= (uint64_t)type << (4 * v->st.depth);
	v->st.depth++;
	return 0;
}

/* Check the operand `back` slots below the top (0: the top) without
 * popping.  field names where the expected type came from: "type" when the
 * instruction's type byte set it, "op" when the op alone implies it. */
static int cv_peek(struct cv *v, uint32_t back, uint32_t want, const char *field)
{
	const struct cpol_insn *in = &v->p->constraints[v->i];
	uint32_t got;

	if (v->st.depth <= back)
		return cv_fail(v, v->i, "op", CPOL_INSN_OP,
			       "The %s instruction needs %u operand%s, but the stack holds %u.",
			       constraint_op_name(in->op), back + 1, back ? "s" : "", v->st.depth);
	got = cv_slot(&v->st, v->st.depth - 1 - back);
	if (got != want)
		return cv_fail(v, v->i, field, strcmp(field, "type") == 0 ? CPOL_INSN_TYPE : CPOL_INSN_OP,
			       "The %s instruction needs %s %s operand, but the stack holds %s %s there.",
			       constraint_op_name(in->op), want == CPOL_T_INTEGER || want == CPOL_T_ARRAY ? "an" : "a",
			       policy_type_name(want),
			       got == CPOL_T_INTEGER || got == CPOL_T_ARRAY ? "an" : "a", policy_type_name(got));
	return 0;
}

static int cv_pop(struct cv *v, uint32_t want, const char *field)
{
	if (cv_peek(v, 0, want, field) < 0)
		return -1;
	v->st.depth--;
	return 0;
}

static int cv_same(const struct cv_state *a, const struct cv_state *b)
{
	uint64_t mask = a->depth >= 16 ? ~(uint64_t)0 : (((uint64_t)1 << (4 * a->depth)) - 1);

	return a->depth == b->depth && (a->types & mask) == (b->types & mask);
}

/* A path reaches instruction `to` with state s (from the jump at `from`). */
static int cv_arrive(struct cv *v, uint32_t from, uint32_t to, const struct cv_state *s)
{
	struct cv_join *j = &v->join[to];
	char a[160], b[160];

	if (!j->set) {
		j->st = *s;
		j->from = from;
		j->set = 1;
		return 0;
	}
	if (cv_same(&j->st, s))
		return 0;
	cv_format(s, a, sizeof(a));
	cv_format(&j->st, b, sizeof(b));
	return cv_fail(v, from, "a", CPOL_INSN_A,
		       "The jump reaches instruction %u with the stack %s, but the jump at %u reaches it with %s.",
		       to, a, j->from, b);
}

/* A param operand: inside the tool's top-level params. */
static int cv_param(struct cv *v, const struct cpol_tool *t, const struct cpol_insn *in)
{
	const struct cpol_param *m;

	if (in->a >= t->params.count)
		return cv_fail(v, v->i, "a", CPOL_INSN_A,
			       "Parameter index %u is out of range: the tool has %u top-level parameters.", in->a,
			       t->params.count);
	m = &v->p->params[t->params.first + in->a];
	if (in->op == CPOL_OP_PARAM && in->type != m->type)
		return cv_fail(v, v->i, "type", CPOL_INSN_TYPE,
			       "The instruction reads parameter %u as %s, but its signature says %s.", in->a,
			       policy_type_name(in->type), policy_type_name(m->type));
	return 0;
}

/* One instruction's effect on the abstract stack.  end is the index of the
 * program's RET, the furthest a jump may go. */
static int cv_step(struct cv *v, const struct cpol_tool *t, uint32_t start, uint32_t end)
{
	const struct cpol_insn *in = &v->p->constraints[v->i];
	int64_t target;

	switch (in->op) {
	case CPOL_OP_RET:
		if (cv_peek(v, 0, CPOL_T_BOOLEAN, "op") < 0)
			return -1;
		if (v->st.depth != 1)
			return cv_fail(v, v->i, "op", CPOL_INSN_OP,
				       "The ret instruction finds %u values on the stack; it must find exactly one boolean.",
				       v->st.depth);
		v->st.depth = 0;
		return 0;
	case CPOL_OP_PARAM:
		return cv_param(v, t, in) < 0 ? -1 : cv_push(v, in->type);
	case CPOL_OP_HAS:
		return cv_param(v, t, in) < 0 ? -1 : cv_push(v, CPOL_T_BOOLEAN);
	case CPOL_OP_INT:
		return cv_push(v, CPOL_T_INTEGER);
	case CPOL_OP_NUM:
		return cv_push(v, CPOL_T_NUMBER);
	case CPOL_OP_BOOL:
		return cv_push(v, CPOL_T_BOOLEAN);
	case CPOL_OP_STR:
		return cv_push(v, CPOL_T_STRING);
	case CPOL_OP_LEN:
		return cv_pop(v, in->type, "type") < 0 ? -1 : cv_push(v, CPOL_T_INTEGER);
	case CPOL_OP_TONUM:
		return cv_pop(v, CPOL_T_INTEGER, "op") < 0 ? -1 : cv_push(v, CPOL_T_NUMBER);
	case CPOL_OP_EQ:
	case CPOL_OP_NE:
	case CPOL_OP_LT:
	case CPOL_OP_LE:
	case CPOL_OP_GT:
	case CPOL_OP_GE:
		if (cv_peek(v, 1, in->type, "type") < 0 || cv_pop(v, in->type, "type") < 0)
			return -1;
		v->st.depth--;
		return cv_push(v, CPOL_T_BOOLEAN);
	case CPOL_OP_IN:
	case CPOL_OP_STARTS_WITH:
	case CPOL_OP_ENDS_WITH:
		return cv_pop(v, CPOL_T_STRING, "op") < 0 ? -1 : cv_push(v, CPOL_T_BOOLEAN);
	case CPOL_OP_NOT:
		return cv_pop(v, CPOL_T_BOOLEAN, "op") < 0 ? -1 : cv_push(v, CPOL_T_BOOLEAN);
	case CPOL_OP_JF:
	case CPOL_OP_JT:
		/* a is an i32: a "negative" offset is how a backward jump
		 * would be written, and is refused as one. */
		target = (int64_t)v->i + 1 + (int64_t)(int32_t)in->a;
		if (target <= (int64_t)v->i)
			return cv_fail(v, v->i, "a", CPOL_INSN_A,
				       "The jump goes back to instruction %lld; jumps only go forward.",
				       (long long)target);
		if (target > (int64_t)end)
			return cv_fail(v, v->i, "a", CPOL_INSN_A,
				       "The jump to instruction %lld leaves its constraint program (instructions %u to %u).",
				       (long long)target, start, end);
		if (cv_peek(v, 0, CPOL_T_BOOLEAN, "op") < 0 ||
		    cv_arrive(v, v->i, (uint32_t)target, &v->st) < 0)
			return -1;
		v->st.depth--; /* falling through consumes the condition */
		return 0;
	default:
		/* The loader refuses unknown ops before this pass; kept so a
		 * new op cannot slip through unverified. */
		return cv_fail(v, v->i, "op", CPOL_INSN_OP, "Opcode %u is not known.", in->op);
	}
}

/* One program: instructions start..end, end being its RET. */
static int cv_program(struct cv *v, const struct cpol_tool *t, uint32_t start, uint32_t end)
{
	char a[160], b[160];

	if (end - start + 1 > CPOL_CONSTRAINT_MAX_PROGRAM)
		return cv_fail(v, start, "op", CPOL_INSN_OP,
			       "The constraint program starting here has %u instructions; the limit is %u.",
			       end - start + 1, CPOL_CONSTRAINT_MAX_PROGRAM);
	memset(&v->st, 0, sizeof(v->st));
	for (v->i = start; v->i <= end; v->i++) {
		const struct cv_join *j = &v->join[v->i];

		/* Every instruction but a RET falls through, so the state
		 * here is known from the previous one; a jump landing here
		 * must bring the same. */
		if (j->set && !cv_same(&j->st, &v->st)) {
			cv_format(&j->st, a, sizeof(a));
			cv_format(&v->st, b, sizeof(b));
			return cv_fail(v, j->from, "a", CPOL_INSN_A,
				       "The jump reaches instruction %u with the stack %s, but the instruction before it leaves %s.",
				       v->i, a, b);
		}
		if (cv_step(v, t, start, end) < 0)
			return -1;
	}
	return 0;
}

/* A tool's run: cut at each RET into programs; the last must end it. */
static int cv_tool(struct cv *v, uint32_t ti)
{
	const struct cpol_tool *t = &v->p->tools[ti];
	const struct cpol_insn *ins = v->p->constraints;
	uint32_t start = t->constraints.first, last = t->constraints.first + t->constraints.count - 1;

	if (ins[last].op != CPOL_OP_RET)
		return cv_fail(v, last, "op", CPOL_INSN_OP,
			       "The tool's constraint run ends with %s, not ret: its last program has no end.",
			       constraint_op_name(ins[last].op));
	while (start <= last) {
		uint32_t end = start;

		while (ins[end].op != CPOL_OP_RET)
			end++; /* stops at `last` at the latest */
		if (cv_program(v, t, start, end) < 0)
			return -1;
		start = end + 1;
	}
	return 0;
}

int constraint_verify(const struct cpol_policy *p, uint64_t tools_off, uint64_t insns_off, struct blob_error *err)
{
	struct cv v;
	uint32_t next = 0;
	int rc = -1;

	memset(&v, 0, sizeof(v));
	v.p = p;
	v.tools_off = tools_off;
	v.insns_off = insns_off;
	v.err = err;

	/* Ownership first: the runs tile the array in tool order, so each
	 * instruction is checked exactly once and none lies unowned (code
	 * no tool runs would be a place to hide bytes in a signed blob). */
	for (uint32_t ti = 0; ti < p->ntools; ti++) {
		const struct cpol_range *r = &p->tools[ti].constraints;
		char f[64];

		if (r->count == 0)
			continue;
		if (r->first != next) {
			snprintf(f, sizeof(f), "tools[%u].constraints.first", ti);
			return cv_fail_at(&v, f, tools_off + (uint64_t)ti * CPOL_TOOL_BYTES + CPOL_TOOL_CONSTRAINTS,
					  "The tool's constraints start at instruction %u; tools' runs follow each other in tool order, so they must start at %u.",
					  r->first, next);
		}
		next += r->count;
	}
	if (next != p->nconstraints)
		return cv_fail(&v, next, "op", CPOL_INSN_OP,
			       "Instructions %u to %u belong to no tool's constraints.", next, p->nconstraints - 1);
	if (p->nconstraints == 0)
		return 0;

	v.join = calloc(p->nconstraints, sizeof(*v.join));
	if (v.join == NULL) {
		cv_fail_at(&v, "constraints", insns_off, "Out of memory while verifying constraints.");
		goto out;
	}
	for (uint32_t ti = 0; ti < p->ntools; ti++)
		if (p->tools[ti].constraints.count != 0 && cv_tool(&v, ti) < 0)
			goto out;
	rc = 0;
out:
	free(v.join);
	return rc;
}
