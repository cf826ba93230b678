/* SPDX-License-Identifier: Apache-2.0 */
/*
 * constraint_eval.c - the constraint bytecode interpreter.
 *
 * Every value on the stack carries its type tag, and every pop checks it,
 * although the verifier has proved the tags right: the checks cost a
 * compare each and turn any verifier bug into a denied call instead of a
 * misread union.  For the same reason jumps and the stack are bounds
 * checked here too (CONSTRAINT_BROKEN).
 */
#include <math.h>
#include <string.h>

#include "runtime/constraint_eval.h"

struct ce_val {
	uint32_t type; /* enum cpol_type */
	union {
		int64_t i; /* integer; an array's item count */
		double f;
		int b;
		struct {
			const char *p;
			size_t n;
		} s;
	} u;
};

struct ce_stack {
	struct ce_val v[CPOL_CONSTRAINT_MAX_STACK];
	uint32_t n;
};

static int ce_push(struct ce_stack *st, struct ce_val v)
{
	if (st->n >= CPOL_CONSTRAINT_MAX_STACK)
		return -1;
	st->v[st->n++] = v;
	return 0;
}

static int ce_pop(struct ce_stack *st, uint32_t type, struct ce_val *out)
{
	if (st->n == 0 || st->v[st->n - 1].type != type)
		return -1;
	*out = st->v[--st->n];
	return 0;
}

static int ce_push_bool(struct ce_stack *st, int b)
{
	struct ce_val v = { .type = CPOL_T_BOOLEAN };

	v.u.b = b != 0;
	return ce_push(st, v);
}

/* The member named like the tool's param a, or NULL; JSON null counts as
 * absent, as an optional parameter left out. */
static const cJSON *ce_member(const struct cpol_policy *p, const struct cpol_tool *t, uint32_t a,
			      const cJSON *params)
{
	const cJSON *m;

	if (!cJSON_IsObject(params))
		return NULL;
	m = cJSON_GetObjectItemCaseSensitive(params, p->params[t->params.first + a].name);
	return cJSON_IsNull(m) ? NULL : m;
}

/* 2^63 as a double: the integers a double can hold and an int64 cannot
 * start there. */
#define CE_TWO63 9223372036854775808.0

/* A JSON value as the param's declared type; -1 when it is not one. */
static int ce_value(const cJSON *m, uint32_t type, struct ce_val *out)
{
	double d;

	out->type = type;
	switch (type) {
	case CPOL_T_STRING:
		if (!cJSON_IsString(m) || m->valuestring == NULL)
			return -1;
		out->u.s.p = m->valuestring;
		out->u.s.n = strlen(m->valuestring);
		return 0;
	case CPOL_T_INTEGER:
		if (!cJSON_IsNumber(m))
			return -1;
		d = m->valuedouble;
		/* In range first: converting an out-of-range double to an
		 * integer is undefined behaviour. */
		if (!(d >= -CE_TWO63 && d < CE_TWO63))
			return -1;
		out->u.i = (int64_t)d;
		return (double)out->u.i == d ? 0 : -1;
	case CPOL_T_NUMBER:
		if (!cJSON_IsNumber(m) || !isfinite(m->valuedouble))
			return -1;
		out->u.f = m->valuedouble;
		return 0;
	case CPOL_T_BOOLEAN:
		if (!cJSON_IsBool(m))
			return -1;
		out->u.b = cJSON_IsTrue(m) ? 1 : 0;
		return 0;
	case CPOL_T_ARRAY:
		if (!cJSON_IsArray(m))
			return -1;
		out->u.i = cJSON_GetArraySize(m);
		return 0;
	default:
		return -1;
	}
}

/* a OP b for one of the six comparisons, on a three-way result. */
static int ce_cmp_result(uint8_t op, int c)
{
	switch (op) {
	case CPOL_OP_EQ: return c == 0;
	case CPOL_OP_NE: return c != 0;
	case CPOL_OP_LT: return c < 0;
	case CPOL_OP_LE: return c <= 0;
	case CPOL_OP_GT: return c > 0;
	default: return c >= 0; /* CPOL_OP_GE */
	}
}

/* Three-way compare; -2 when the operands cannot be compared (refused by
 * the verifier: strings and booleans only take == and !=). */
static int ce_compare(uint8_t type, const struct ce_val *x, const struct ce_val *y)
{
	switch (type) {
	case CPOL_T_INTEGER:
		return (x->u.i > y->u.i) - (x->u.i < y->u.i);
	case CPOL_T_NUMBER:
		return (x->u.f > y->u.f) - (x->u.f < y->u.f);
	case CPOL_T_STRING:
		return x->u.s.n == y->u.s.n && memcmp(x->u.s.p, y->u.s.p, x->u.s.n) == 0 ? 0 : 1;
	case CPOL_T_BOOLEAN:
		return x->u.b == y->u.b ? 0 : 1;
	default:
		return -2;
	}
}

static int ce_affix(uint8_t op, const struct ce_val *s, const struct cpol_insn *in)
{
	if (in->len > s->u.s.n)
		return 0;
	if (op == CPOL_OP_STARTS_WITH)
		return memcmp(s->u.s.p, in->str, in->len) == 0;
	return memcmp(s->u.s.p + (s->u.s.n - in->len), in->str, in->len) == 0;
}

static int ce_in(const struct ce_val *s, const struct cpol_strs *l)
{
	for (uint32_t k = 0; k < l->n; k++)
		if (strlen(l->v[k]) == s->u.s.n && memcmp(l->v[k], s->u.s.p, s->u.s.n) == 0)
			return 1;
	return 0;
}

/*
 * One program, from instruction *pc to its RET (run_end is one past the
 * tool's run: no jump or step may reach it).  On return *pc is one past
 * the RET.  Returns the verdict of this constraint.
 */
static enum constraint_verdict ce_program(const struct cpol_policy *p, const struct cpol_tool *t, uint32_t *pc,
					  uint32_t run_end, const cJSON *params, uint32_t *param)
{
	struct ce_stack st;
	struct ce_val x, y;
	const cJSON *m;
	int c;

	st.n = 0;
	while (*pc < run_end) {
		const struct cpol_insn *in = &p->constraints[*pc];
		uint64_t target;

		(*pc)++;
		switch (in->op) {
		case CPOL_OP_RET:
			if (ce_pop(&st, CPOL_T_BOOLEAN, &x) < 0 || st.n != 0)
				return CONSTRAINT_BROKEN;
			return x.u.b ? CONSTRAINT_ALLOW : CONSTRAINT_FALSE;
		case CPOL_OP_PARAM:
			if (in->a >= t->params.count)
				return CONSTRAINT_BROKEN;
			*param = in->a;
			m = ce_member(p, t, in->a, params);
			if (m == NULL)
				return CONSTRAINT_ABSENT;
			if (ce_value(m, in->type, &x) < 0)
				return CONSTRAINT_MISTYPED;
			*param = CPOL_NONE;
			if (ce_push(&st, x) < 0)
				return CONSTRAINT_BROKEN;
			break;
		case CPOL_OP_HAS:
			if (in->a >= t->params.count || ce_push_bool(&st, ce_member(p, t, in->a, params) != NULL) < 0)
				return CONSTRAINT_BROKEN;
			break;
		case CPOL_OP_INT:
			x.type = CPOL_T_INTEGER;
			x.u.i = in->ival;
			if (ce_push(&st, x) < 0)
				return CONSTRAINT_BROKEN;
			break;
		case CPOL_OP_NUM:
			x.type = CPOL_T_NUMBER;
			x.u.f = in->fval;
			if (ce_push(&st, x) < 0)
				return CONSTRAINT_BROKEN;
			break;
		case CPOL_OP_BOOL:
			if (ce_push_bool(&st, in->a != 0) < 0)
				return CONSTRAINT_BROKEN;
			break;
		case CPOL_OP_STR:
			x.type = CPOL_T_STRING;
			x.u.s.p = in->str ? in->str : "";
			x.u.s.n = in->str ? in->len : 0;
			if (ce_push(&st, x) < 0)
				return CONSTRAINT_BROKEN;
			break;
		case CPOL_OP_LEN:
			if ((in->type != CPOL_T_STRING && in->type != CPOL_T_ARRAY) || ce_pop(&st, in->type, &x) < 0)
				return CONSTRAINT_BROKEN;
			y.type = CPOL_T_INTEGER;
			y.u.i = in->type == CPOL_T_STRING ? (int64_t)x.u.s.n : x.u.i;
			if (ce_push(&st, y) < 0)
				return CONSTRAINT_BROKEN;
			break;
		case CPOL_OP_TONUM:
			if (ce_pop(&st, CPOL_T_INTEGER, &x) < 0)
				return CONSTRAINT_BROKEN;
			y.type = CPOL_T_NUMBER;
			y.u.f = (double)x.u.i;
			if (ce_push(&st, y) < 0)
				return CONSTRAINT_BROKEN;
			break;
		case CPOL_OP_EQ:
		case CPOL_OP_NE:
		case CPOL_OP_LT:
		case CPOL_OP_LE:
		case CPOL_OP_GT:
		case CPOL_OP_GE:
			if ((in->type == CPOL_T_STRING || in->type == CPOL_T_BOOLEAN) && in->op != CPOL_OP_EQ &&
			    in->op != CPOL_OP_NE)
				return CONSTRAINT_BROKEN;
			if (ce_pop(&st, in->type, &y) < 0 || ce_pop(&st, in->type, &x) < 0)
				return CONSTRAINT_BROKEN;
			c = ce_compare(in->type, &x, &y);
			if (c == -2)
				return CONSTRAINT_BROKEN;
			if (ce_push_bool(&st, ce_cmp_result(in->op, c)) < 0)
				return CONSTRAINT_BROKEN;
			break;
		case CPOL_OP_IN:
			if (ce_pop(&st, CPOL_T_STRING, &x) < 0 || ce_push_bool(&st, ce_in(&x, &in->list)) < 0)
				return CONSTRAINT_BROKEN;
			break;
		case CPOL_OP_STARTS_WITH:
		case CPOL_OP_ENDS_WITH:
			if (ce_pop(&st, CPOL_T_STRING, &x) < 0 || ce_push_bool(&st, ce_affix(in->op, &x, in)) < 0)
				return CONSTRAINT_BROKEN;
			break;
		case CPOL_OP_NOT:
			if (ce_pop(&st, CPOL_T_BOOLEAN, &x) < 0 || ce_push_bool(&st, !x.u.b) < 0)
				return CONSTRAINT_BROKEN;
			break;
		case CPOL_OP_JF:
		case CPOL_OP_JT:
			if (st.n == 0 || st.v[st.n - 1].type != CPOL_T_BOOLEAN)
				return CONSTRAINT_BROKEN;
			/* *pc is already index + 1. */
			target = (uint64_t)*pc + (uint64_t)(int64_t)(int32_t)in->a;
			if ((int32_t)in->a < 0 || target >= run_end)
				return CONSTRAINT_BROKEN;
			if ((st.v[st.n - 1].u.b != 0) == (in->op == CPOL_OP_JT))
				*pc = (uint32_t)target; /* short cut: the condition stays as the result */
			else
				st.n--;
			break;
		default:
			return CONSTRAINT_BROKEN;
		}
	}
	return CONSTRAINT_BROKEN; /* ran off the run without a RET */
}

int constraint_eval(const struct cpol_policy *p, uint32_t tool, const cJSON *params, struct constraint_result *res)
{
	const struct cpol_tool *t;
	uint32_t pc, end, k = 0;

	res->verdict = CONSTRAINT_BROKEN;
	res->index = 0;
	res->param = CPOL_NONE;
	if (tool >= p->ntools)
		return 0;
	t = &p->tools[tool];
	pc = t->constraints.first;
	end = t->constraints.first + t->constraints.count;
	if (end < pc || end > p->nconstraints)
		return 0;
	for (; pc < end; k++) {
		uint32_t param = CPOL_NONE;
		enum constraint_verdict v = ce_program(p, t, &pc, end, params, &param);

		if (v != CONSTRAINT_ALLOW) {
			res->verdict = v;
			res->index = k;
			res->param = (v == CONSTRAINT_ABSENT || v == CONSTRAINT_MISTYPED) ? param : CPOL_NONE;
			return 0;
		}
	}
	res->verdict = CONSTRAINT_ALLOW;
	res->index = k;
	return 1;
}

uint32_t constraint_count(const struct cpol_policy *p, uint32_t tool)
{
	const struct cpol_tool *t;
	uint32_t n = 0;

	if (tool >= p->ntools)
		return 0;
	t = &p->tools[tool];
	for (uint32_t i = 0; i < t->constraints.count && t->constraints.first + i < p->nconstraints; i++)
		if (p->constraints[t->constraints.first + i].op == CPOL_OP_RET)
			n++;
	return n;
}

const char *constraint_verdict_name(enum constraint_verdict v)
{
	switch (v) {
	case CONSTRAINT_ALLOW: return "allow";
	case CONSTRAINT_FALSE: return "false";
	case CONSTRAINT_ABSENT: return "absent";
	case CONSTRAINT_MISTYPED: return "mistyped";
	case CONSTRAINT_BROKEN: return "broken";
	}
	return "?";
}
