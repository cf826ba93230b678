/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_constraints.c - tool constraints end to end: compile
 * (compiler/constraint_gen.c), emit, load and verify
 * (runtime/constraint_verify.c), evaluate (runtime/constraint_eval.c).
 *
 * Parts:
 *   - each operator and type, compiled from text and evaluated;
 *   - absent and mistyped parameters deny, has() guards by short circuit;
 *   - type errors: the exact message and position of each;
 *   - the loader refuses broken bytecode, naming the field;
 *   - every byte of a compiled CONSTRAINTS section set to every value: what
 *     loads must never make the evaluator report a broken program;
 *   - differential: thousands of random well-typed syntax trees, evaluated
 *     by a reference evaluator over the tree (written here) and by the
 *     bytecode evaluator, over random inputs, must agree exactly;
 *   - the café example's constraints.
 *
 * Environment:
 *   CORDON_SRC=dir               source tree (for examples/cafe)
 *   CORDON_WRITE_SEEDS=dir       also write fuzz seeds for
 *                                fuzz_constraint_verify into dir
 *   CORDON_DIFF_EXPRS=n          expressions in the differential test
 *                                (default 10000, 30 inputs each)
 *   CORDON_MUTATION_STRIDE=n     try every n-th byte value in the mutation
 *                                test (default 1: all of them)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include "compiler/compile.h"
#include "compiler/constraint_gen.h"
#include "cordon/blob.h"
#include "grammar/policy_parse.h"
#include "runtime/constraint_eval.h"

/* ---- the signature every test compiles against ------------------------- */

/* Top-level params of tool "t.x", sorted by name (their run is 0..7), then
 * the array's items spec and the object's one property. */
enum {
	P_AMOUNT, /* number */
	P_COUNT,  /* integer, required */
	P_FLAG,   /* boolean */
	P_META,   /* object { x: integer } */
	P_NAME,   /* string, required */
	P_NOTE,   /* string */
	P_QTY,    /* integer */
	P_TAGS,   /* array of strings */
	P_TOP,    /* number of top-level params */
	P_TAGS_ITEMS = P_TOP,
	P_META_X,
	P_ALL,
};

static const struct {
	const char *name;
	uint32_t type;
} sig[P_ALL] = {
	{ "amount", CPOL_T_NUMBER }, { "count", CPOL_T_INTEGER }, { "flag", CPOL_T_BOOLEAN },
	{ "meta", CPOL_T_OBJECT },   { "name", CPOL_T_STRING },   { "note", CPOL_T_STRING },
	{ "qty", CPOL_T_INTEGER },   { "tags", CPOL_T_ARRAY },    { "", CPOL_T_STRING },
	{ "x", CPOL_T_INTEGER },
};

static const char *const exec_argv[] = { "/bin/true" };

/* A loadable policy with one tool "t.x" over the signature above and no
 * constraints yet. */
static void build_sig(struct cpol_policy *p)
{
	policy_init(p);
	p->arch = CPOL_ARCH_X86_64;
	p->limits = (struct cpol_limits){ 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, CPOL_MODE_LOCAL, 1, 0 };
	p->nparams = P_ALL;
	p->params = arena_calloc(&p->arena, P_ALL, sizeof(*p->params));
	p->ntools = 1;
	p->tools = arena_calloc(&p->arena, 1, sizeof(*p->tools));
	assert_non_null(p->params);
	assert_non_null(p->tools);
	for (uint32_t i = 0; i < P_ALL; i++) {
		p->params[i].name = sig[i].name;
		p->params[i].type = sig[i].type;
		p->params[i].items = CPOL_NONE;
	}
	p->params[P_COUNT].flags = CPOL_PRM_F_REQUIRED;
	p->params[P_NAME].flags = CPOL_PRM_F_REQUIRED;
	p->params[P_TAGS].items = P_TAGS_ITEMS;
	p->params[P_META].props = (struct cpol_range){ P_META_X, 1 };
	p->tools[0].id = "t.x";
	p->tools[0].description = "a tool";
	p->tools[0].timeout_ms = 1000;
	p->tools[0].memory_bytes = 1;
	p->tools[0].pids = 1;
	p->tools[0].exec.v = (const char **)exec_argv;
	p->tools[0].exec.n = 1;
	p->tools[0].params = (struct cpol_range){ 0, P_TOP };
}

/* ---- compiling text ---------------------------------------------------- */

#define MAX_EXPRS 8

struct cx {
	struct cpol_policy p; /* as compiled */
	struct cpol_policy q; /* as loaded back */
	struct diags d;
	struct arena ast;
	struct src_file src[MAX_EXPRS];
	struct constraint_code code;
	uint8_t *blob;
	size_t len;
	int loaded;
};

static void cx_init(struct cx *x)
{
	memset(x, 0, sizeof(*x));
	build_sig(&x->p);
	policy_init(&x->q);
	diags_init(&x->d);
	arena_init(&x->ast);
}

static void cx_free(struct cx *x)
{
	policy_free(&x->p);
	policy_free(&x->q);
	diags_free(&x->d);
	arena_free(&x->ast);
	constraint_gen_free(&x->code);
	free(x->blob);
}

static void cx_print_diags(struct cx *x)
{
	for (size_t i = 0; i < x->d.n; i++)
		fprintf(stderr, "  %u:%u: %s\n", x->d.v[i].line, x->d.v[i].col, x->d.v[i].msg);
}

/* Compile each text as one constraint of t.x (file "c.yaml", line i + 1,
 * column 1); -1 when any reported an error. */
static int cx_gen(struct cx *x, const char *const *texts, size_t n)
{
	struct constraint_src s = { &x->d, &x->p.arena, "c", x->p.params, P_TOP, NULL, 0, 0 };
	int rc = 0;

	assert_true(n <= MAX_EXPRS);
	for (size_t i = 0; i < n; i++) {
		struct ast_node *e = NULL;

		x->src[i].path = (char *)"c.yaml";
		x->src[i].text = (char *)texts[i];
		x->src[i].len = strlen(texts[i]);
		if (policy_parse_expr(&x->src[i], (uint32_t)i + 1, 1, texts[i], strlen(texts[i]), &x->ast, &e,
				      &x->d) != 0 ||
		    constraint_gen_expr(&s, e, &x->code) != 0)
			rc = -1;
	}
	return rc;
}

/* Store the code, emit, load back (which verifies). */
static void cx_load(struct cx *x)
{
	struct blob_error err;

	x->p.tools[0].constraints = (struct cpol_range){ 0, (uint32_t)x->code.n };
	assert_int_equal(constraint_gen_store(&x->code, &x->p), 0);
	assert_int_equal(blob_emit(&x->p, &x->blob, &x->len, &err), 0);
	policy_free(&x->q);
	if (blob_load(x->blob, x->len, BLOB_ANY_ARCH, &x->q, &err) != 0)
		fail_msg("compiled constraints refused by the loader: %s: %s", err.field, err.msg);
	x->loaded = 1;
}

static void cx_compile(struct cx *x, const char *const *texts, size_t n)
{
	if (cx_gen(x, texts, n) != 0) {
		cx_print_diags(x);
		fail_msg("constraint did not compile: %s", texts[0]);
	}
	cx_load(x);
}

static struct constraint_result cx_eval(struct cx *x, const char *json)
{
	struct constraint_result r;
	cJSON *j = cJSON_Parse(json);

	assert_non_null(j);
	constraint_eval(&x->q, 0, j, &r);
	cJSON_Delete(j);
	return r;
}

/* ---- operators and types ----------------------------------------------- */

struct op_case {
	const char *expr;
	const char *json;
	enum constraint_verdict want;
};

#define BASE "\"count\": 3, \"name\": \"abc\""

static const struct op_case op_cases[] = {
	/* integers */
	{ "count == 3", "{" BASE "}", CONSTRAINT_ALLOW },
	{ "count != 3", "{" BASE "}", CONSTRAINT_FALSE },
	{ "count < 4 && count <= 3 && count > 2 && count >= 3", "{" BASE "}", CONSTRAINT_ALLOW },
	{ "count < 3", "{" BASE "}", CONSTRAINT_FALSE },
	{ "count > -1 && -5 < count", "{" BASE "}", CONSTRAINT_ALLOW },
	{ "count > 9223372036854775807", "{" BASE "}", CONSTRAINT_FALSE },
	{ "count > -9223372036854775808", "{" BASE "}", CONSTRAINT_ALLOW },
	{ "count == -9223372036854775808", "{\"count\": -9223372036854775808, \"name\": \"\"}", CONSTRAINT_ALLOW },
	{ "count == 0x10 && count == 0o20", "{\"count\": 16, \"name\": \"\"}", CONSTRAINT_ALLOW },
	/* integers meet numbers as numbers */
	{ "count < 3.5 && count > 2.5 && count == 3.0", "{" BASE "}", CONSTRAINT_ALLOW },
	{ "amount <= 500", "{" BASE ", \"amount\": 499.99}", CONSTRAINT_ALLOW },
	{ "amount <= 500", "{" BASE ", \"amount\": 500.5}", CONSTRAINT_FALSE },
	{ "amount == count", "{" BASE ", \"amount\": 3}", CONSTRAINT_ALLOW },
	{ "amount > -0.5 && amount < 0.5 && amount == -0.0", "{" BASE ", \"amount\": 0}", CONSTRAINT_ALLOW },
	{ "amount >= 1e3", "{" BASE ", \"amount\": 1000}", CONSTRAINT_ALLOW },
	/* strings: bytes, == and != */
	{ "name == \"abc\" && name != \"abd\"", "{" BASE "}", CONSTRAINT_ALLOW },
	{ "name == \"ab\"", "{" BASE "}", CONSTRAINT_FALSE },
	{ "name == \"\"", "{\"count\": 0, \"name\": \"\"}", CONSTRAINT_ALLOW },
	{ "name == \"café\" && name != \"cafe\"", "{\"count\": 0, \"name\": \"caf\\u00e9\"}", CONSTRAINT_ALLOW },
	{ "name == note", "{" BASE ", \"note\": \"abc\"}", CONSTRAINT_ALLOW },
	/* booleans */
	{ "flag", "{" BASE ", \"flag\": true}", CONSTRAINT_ALLOW },
	{ "flag == false", "{" BASE ", \"flag\": true}", CONSTRAINT_FALSE },
	{ "flag != true || !flag", "{" BASE ", \"flag\": false}", CONSTRAINT_ALLOW },
	{ "true", "{}", CONSTRAINT_ALLOW },
	{ "false", "{}", CONSTRAINT_FALSE },
	{ "(count == 3) == (name == \"abc\")", "{" BASE "}", CONSTRAINT_ALLOW },
	/* len: bytes of a string, items of an array */
	{ "len(name) == 3", "{" BASE "}", CONSTRAINT_ALLOW },
	{ "len(name) == 5", "{\"count\": 0, \"name\": \"café\"}", CONSTRAINT_ALLOW },
	{ "len(\"abcd\") == 4", "{}", CONSTRAINT_ALLOW },
	{ "len(tags) == 2", "{" BASE ", \"tags\": [\"a\", \"b\"]}", CONSTRAINT_ALLOW },
	{ "len(tags) >= 1", "{" BASE ", \"tags\": []}", CONSTRAINT_FALSE },
	/* in */
	{ "name in [\"x\", \"abc\"]", "{" BASE "}", CONSTRAINT_ALLOW },
	{ "name in [\"x\", \"ab\"]", "{" BASE "}", CONSTRAINT_FALSE },
	{ "count in [1, 2, 3]", "{" BASE "}", CONSTRAINT_ALLOW },
	{ "count in [1, 2, -3]", "{\"count\": -3, \"name\": \"\"}", CONSTRAINT_ALLOW },
	{ "count in [1, 2]", "{" BASE "}", CONSTRAINT_FALSE },
	{ "count in [2.5, 3.0]", "{" BASE "}", CONSTRAINT_ALLOW },
	{ "amount in [1, 2.5]", "{" BASE ", \"amount\": 2.5}", CONSTRAINT_ALLOW },
	{ "amount in [1, 2.5]", "{" BASE ", \"amount\": 1}", CONSTRAINT_ALLOW },
	{ "amount in [1, 2.5]", "{" BASE ", \"amount\": 2}", CONSTRAINT_FALSE },
	{ "flag in [true]", "{" BASE ", \"flag\": true}", CONSTRAINT_ALLOW },
	{ "len(name) in [3]", "{" BASE "}", CONSTRAINT_ALLOW },
	/* starts_with, ends_with */
	{ "starts_with(name, \"ab\") && ends_with(name, \"bc\")", "{" BASE "}", CONSTRAINT_ALLOW },
	{ "starts_with(name, \"\") && ends_with(name, \"\")", "{" BASE "}", CONSTRAINT_ALLOW },
	{ "starts_with(name, \"abcd\")", "{" BASE "}", CONSTRAINT_FALSE },
	{ "ends_with(name, \"xabc\")", "{" BASE "}", CONSTRAINT_FALSE },
	{ "ends_with(name, \"@example.org\")", "{\"count\": 0, \"name\": \"a@example.org\"}", CONSTRAINT_ALLOW },
	{ "ends_with(name, \"@example.org\")", "{\"count\": 0, \"name\": \"a@example.org.evil\"}", CONSTRAINT_FALSE },
	/* has, and guards that make reading an optional param safe */
	{ "has(qty)", "{" BASE ", \"qty\": 1}", CONSTRAINT_ALLOW },
	{ "has(qty)", "{" BASE "}", CONSTRAINT_FALSE },
	{ "has(qty)", "{" BASE ", \"qty\": null}", CONSTRAINT_FALSE },
	{ "has(meta)", "{" BASE ", \"meta\": {\"x\": 1}}", CONSTRAINT_ALLOW },
	{ "!has(qty) || qty < 5", "{" BASE "}", CONSTRAINT_ALLOW },
	{ "!has(qty) || qty < 5", "{" BASE ", \"qty\": 9}", CONSTRAINT_FALSE },
	{ "has(qty) && qty < 5", "{" BASE "}", CONSTRAINT_FALSE },
	{ "qty < 5 || true", "{" BASE "}", CONSTRAINT_ABSENT },
	{ "true || qty < 5", "{" BASE "}", CONSTRAINT_ALLOW },
	{ "false && qty < 5", "{" BASE "}", CONSTRAINT_FALSE },
	{ "qty < 5", "{" BASE "}", CONSTRAINT_ABSENT },
	{ "qty < 5", "{" BASE ", \"qty\": null}", CONSTRAINT_ABSENT },
	/* values that do not have their declared type deny */
	{ "count > 0", "{\"count\": \"5\", \"name\": \"\"}", CONSTRAINT_MISTYPED },
	{ "count > 0", "{\"count\": 5.5, \"name\": \"\"}", CONSTRAINT_MISTYPED },
	{ "count > 0", "{\"count\": 1e300, \"name\": \"\"}", CONSTRAINT_MISTYPED },
	{ "count > 0", "{\"count\": 9223372036854775808, \"name\": \"\"}", CONSTRAINT_MISTYPED },
	{ "count > 0", "{\"count\": true, \"name\": \"\"}", CONSTRAINT_MISTYPED },
	{ "len(name) > 0", "{\"count\": 1, \"name\": 3}", CONSTRAINT_MISTYPED },
	{ "flag", "{" BASE ", \"flag\": 1}", CONSTRAINT_MISTYPED },
	{ "len(tags) > 0", "{" BASE ", \"tags\": \"a\"}", CONSTRAINT_MISTYPED },
	{ "amount > 0", "{" BASE ", \"amount\": \"1\"}", CONSTRAINT_MISTYPED },
	{ "count > 0", "[1, 2]", CONSTRAINT_ABSENT },
	{ "!has(count)", "\"not an object\"", CONSTRAINT_ALLOW },
};

static void test_operators(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(op_cases) / sizeof(op_cases[0]); i++) {
		struct cx x;
		struct constraint_result r;

		cx_init(&x);
		cx_compile(&x, &op_cases[i].expr, 1);
		r = cx_eval(&x, op_cases[i].json);
		if (r.verdict != op_cases[i].want)
			fail_msg("%s with %s: %s, want %s", op_cases[i].expr, op_cases[i].json,
				 constraint_verdict_name(r.verdict), constraint_verdict_name(op_cases[i].want));
		assert_int_equal(r.index, op_cases[i].want == CONSTRAINT_ALLOW ? 1 : 0);
		cx_free(&x);
	}
}

/* The audit log gets which constraint denied and, for a missing or
 * mistyped value, which parameter. */
static void test_which_constraint(void **state)
{
	static const char *const texts[] = { "count > 0", "!has(qty) || qty <= count", "len(name) < 4",
					     "qty > 1" };
	struct constraint_result r;
	struct cx x;

	(void)state;
	cx_init(&x);
	cx_compile(&x, texts, 4);
	assert_int_equal(constraint_count(&x.q, 0), 4);
	r = cx_eval(&x, "{\"count\": 2, \"name\": \"ab\", \"qty\": 2}");
	assert_int_equal(r.verdict, CONSTRAINT_ALLOW);
	assert_int_equal(r.index, 4);
	assert_int_equal(r.param, CPOL_NONE);
	r = cx_eval(&x, "{\"count\": 2, \"name\": \"ab\", \"qty\": 3}");
	assert_int_equal(r.verdict, CONSTRAINT_FALSE);
	assert_int_equal(r.index, 1);
	assert_int_equal(r.param, CPOL_NONE);
	r = cx_eval(&x, "{\"count\": 2, \"name\": \"abcd\", \"qty\": 2}");
	assert_int_equal(r.verdict, CONSTRAINT_FALSE);
	assert_int_equal(r.index, 2);
	r = cx_eval(&x, "{\"count\": 2, \"name\": \"ab\"}");
	assert_int_equal(r.verdict, CONSTRAINT_ABSENT);
	assert_int_equal(r.index, 3);
	assert_int_equal(r.param, P_QTY);
	r = cx_eval(&x, "{\"count\": 2, \"name\": \"ab\", \"qty\": \"2\"}");
	assert_int_equal(r.verdict, CONSTRAINT_MISTYPED);
	assert_int_equal(r.index, 1);
	assert_int_equal(r.param, P_QTY);
	r = cx_eval(&x, "{\"name\": \"ab\"}");
	assert_int_equal(r.verdict, CONSTRAINT_ABSENT);
	assert_int_equal(r.index, 0);
	assert_int_equal(r.param, P_COUNT);
	cx_free(&x);
}

/* The code shapes docs/constraints.md promises, so the verifier's rules
 * are exercised by what the compiler really writes. */
static void test_code_shapes(void **state)
{
	static const char *const t1[] = { "count > 1 && name == \"x\"" };
	static const char *const t2[] = { "count < amount" };
	static const char *const t3[] = { "count in [1, 2.5]" };
	static const uint8_t want1[] = { CPOL_OP_PARAM, CPOL_OP_INT, CPOL_OP_GT, CPOL_OP_JF,
					 CPOL_OP_PARAM, CPOL_OP_STR, CPOL_OP_EQ, CPOL_OP_RET };
	static const uint8_t want2[] = { CPOL_OP_PARAM, CPOL_OP_TONUM, CPOL_OP_PARAM, CPOL_OP_LT, CPOL_OP_RET };
	static const uint8_t want3[] = { CPOL_OP_PARAM, CPOL_OP_INT, CPOL_OP_EQ, CPOL_OP_JT, CPOL_OP_PARAM,
					 CPOL_OP_TONUM, CPOL_OP_NUM, CPOL_OP_EQ, CPOL_OP_RET };
	struct cx x;

	(void)state;
	cx_init(&x);
	cx_compile(&x, t1, 1);
	assert_int_equal(x.q.nconstraints, sizeof(want1));
	for (uint32_t i = 0; i < x.q.nconstraints; i++)
		assert_int_equal(x.q.constraints[i].op, want1[i]);
	assert_int_equal(x.q.constraints[3].a, 3); /* to the RET */
	assert_int_equal(x.q.constraints[2].type, CPOL_T_INTEGER);
	assert_int_equal(x.q.constraints[6].type, CPOL_T_STRING);
	assert_string_equal(x.q.constraints[5].str, "x");
	cx_free(&x);

	cx_init(&x);
	cx_compile(&x, t2, 1);
	assert_int_equal(x.q.nconstraints, sizeof(want2));
	for (uint32_t i = 0; i < x.q.nconstraints; i++)
		assert_int_equal(x.q.constraints[i].op, want2[i]);
	assert_int_equal(x.q.constraints[3].type, CPOL_T_NUMBER);
	cx_free(&x);

	cx_init(&x);
	cx_compile(&x, t3, 1);
	assert_int_equal(x.q.nconstraints, sizeof(want3));
	for (uint32_t i = 0; i < x.q.nconstraints; i++)
		assert_int_equal(x.q.constraints[i].op, want3[i]);
	assert_int_equal(x.q.constraints[2].type, CPOL_T_INTEGER);
	assert_int_equal(x.q.constraints[7].type, CPOL_T_NUMBER);
	assert_int_equal(x.q.constraints[3].a, 4);
	cx_free(&x);
}

/* ---- compile-time errors ----------------------------------------------- */

struct err_case {
	const char *expr;
	uint32_t col;
	const char *msg; /* after "c: " */
};

static const struct err_case err_cases[] = {
	{ "nme == \"x\"", 1, "unknown parameter 'nme'; did you mean 'name'?" },
	{ "zzzzz > 1", 1,
	  "unknown parameter 'zzzzz' (the tool's parameters are: amount, count, flag, meta, name, note, qty, tags)" },
	{ "has(nmae)", 5, "unknown parameter 'nmae'; did you mean 'name'?" },
	{ "has(1)", 5, "has() takes a parameter name" },
	{ "name == 5", 1, "'==' compares a string with an integer" },
	{ "count != true", 1, "'!=' compares an integer with a boolean" },
	{ "name < \"b\"", 1, "'<' does not apply to strings; only == and != do" },
	{ "flag >= true", 1, "'>=' does not apply to booleans; only == and != do" },
	{ "count", 1, "a constraint must be a boolean expression; this one is an integer" },
	{ "len(name)", 1, "a constraint must be a boolean expression; this one is an integer" },
	{ "\"yes\"", 1, "a constraint must be a boolean expression; this one is a string" },
	{ "tags", 1, "a constraint must be a boolean expression; this one is an array" },
	{ "tags == 2", 1, "'==' cannot compare the array 'tags'; compare its length, len(tags)" },
	{ "1 < tags", 5, "'<' cannot compare the array 'tags'; compare its length, len(tags)" },
	{ "meta == 1", 1, "'meta' is an object; a constraint can only test whether it is given, with has(meta)" },
	{ "len(meta) > 0", 5, "'meta' is an object; a constraint can only test whether it is given, with has(meta)" },
	{ "len(count) > 1", 5, "len() takes a string or an array, not an integer" },
	{ "len(flag)", 5, "len() takes a string or an array, not a boolean" },
	{ "len(name, note) > 1", 1, "len() takes 1 argument, not 2" },
	{ "len() > 1", 1, "len() takes 1 argument, not 0" },
	{ "starts_with(name)", 1, "starts_with() takes 2 arguments, not 1" },
	{ "ends_with(name, note)", 17, "the second argument of ends_with() must be a string literal" },
	{ "starts_with(count, \"1\")", 13, "starts_with() takes a string as its first argument, not an integer" },
	{ "lem(name) > 1", 1, "unknown function 'lem'; did you mean 'len'?" },
	{ "size(name) > 1", 1, "unknown function 'size' (a constraint can call len, starts_with, ends_with and has)" },
	{ "count in [\"a\"]", 11, "the list holds a string, but the value tested is an integer" },
	{ "name in [\"a\", 2]", 15, "the list holds an integer, but the value tested is a string" },
	{ "count in [qty]", 11, "an 'in' list holds literals only (strings, numbers, true, false)" },
	{ "count in []", 10, "an 'in' list needs at least one value" },
	{ "tags in [\"a\"]", 1, "'in' cannot test an array; it tests one value against a list" },
	{ "flag == [true]", 9, "a list can only appear on the right of 'in'" },
	{ "!count", 2, "'!' needs a boolean, not an integer" },
	{ "count && flag", 1, "the left side of '&&' needs a boolean, not an integer" },
	{ "flag || name", 9, "the right side of '||' needs a boolean, not a string" },
	{ "-count < 1", 1, "'-' applies only to number literals in a constraint" },
	{ "-\"a\" == name", 1, "'-' applies only to number literals in a constraint" },
	{ "(count & 1) == 1", 2, "'&' is not a constraint operator (it tests flags in seccomp policies)" },
	{ "count > 9223372036854775808", 9, "the integer 9223372036854775808 is out of range (integers are 64-bit signed)" },
	{ "count > -9223372036854775809", 10,
	  "the integer -9223372036854775809 is out of range (integers are 64-bit signed)" },
};

static void test_type_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(err_cases) / sizeof(err_cases[0]); i++) {
		const struct err_case *c = &err_cases[i];
		char want[512];
		struct cx x;

		cx_init(&x);
		if (cx_gen(&x, &c->expr, 1) == 0)
			fail_msg("%s compiled; expected: %s", c->expr, c->msg);
		snprintf(want, sizeof(want), "c: %s", c->msg);
		if (x.d.nerrors != 1 || strcmp(x.d.v[0].msg, want) != 0 || x.d.v[0].line != 1 ||
		    x.d.v[0].col != c->col) {
			cx_print_diags(&x);
			fail_msg("%s: want exactly 1:%u: %s", c->expr, c->col, want);
		}
		assert_int_equal(x.code.n, 0); /* nothing left behind */
		cx_free(&x);
	}
}

/* Every error of one expression, and of the next expression too. */
static void test_errors_all_reported(void **state)
{
	static const char *const texts[] = { "nme == 1 && qtty > len(count)", "count > 0", "flag < 1" };
	struct cx x;

	(void)state;
	cx_init(&x);
	assert_int_equal(cx_gen(&x, texts, 3), -1);
	if (x.d.nerrors != 4)
		cx_print_diags(&x);
	assert_int_equal(x.d.nerrors, 4);
	assert_string_equal(x.d.v[0].msg, "c: unknown parameter 'nme'; did you mean 'name'?");
	assert_string_equal(x.d.v[1].msg, "c: unknown parameter 'qtty'; did you mean 'qty'?");
	assert_int_equal(x.d.v[1].col, 13);
	assert_string_equal(x.d.v[2].msg, "c: len() takes a string or an array, not an integer");
	assert_int_equal(x.d.v[2].col, 24);
	assert_string_equal(x.d.v[3].msg, "c: '<' compares a boolean with an integer");
	assert_int_equal(x.d.v[3].line, 3);
	/* The good constraint in between is still there. */
	assert_int_equal(x.code.n, 4);
	cx_free(&x);
}

/* The parser cannot write a NUL into a string, but a tree is a tree: the
 * generator refuses it because the blob's strings are NUL-terminated. */
static void test_nul_in_string(void **state)
{
	static const struct src_file f = { (char *)"c.yaml", (char *)"", 0, NULL };
	struct ast_node lit = { .kind = AST_STR, .loc = { &f, 1, 9 }, .str = "a\0b", .len = 3 };
	struct ast_node id = { .kind = AST_IDENT, .loc = { &f, 1, 1 }, .str = "name", .len = 4 };
	struct ast_node eq = { .kind = AST_BINARY, .op = AST_OP_EQ, .loc = { &f, 1, 1 }, .a = &id, .b = &lit };
	struct cx x;
	struct constraint_src s;

	(void)state;
	cx_init(&x);
	s = (struct constraint_src){ &x.d, &x.p.arena, "c", x.p.params, P_TOP, NULL, 0, 0 };
	assert_int_equal(constraint_gen_expr(&s, &eq, &x.code), -1);
	assert_int_equal(x.d.nerrors, 1);
	assert_string_equal(x.d.v[0].msg, "c: a string in a constraint cannot contain a NUL byte");
	assert_int_equal(x.d.v[0].col, 9);
	cx_free(&x);
}

/* A right-nested chain grows the stack one slot a level: 16 fit, 17 do
 * not. */
static void test_stack_limit(void **state)
{
	char text[1024];
	const char *t = text;
	struct cx x;

	(void)state;
	for (int levels = 14; levels <= 16; levels++) {
		size_t n = 0;

		for (int i = 0; i < levels; i++)
			n += (size_t)snprintf(text + n, sizeof(text) - n, "flag == (");
		n += (size_t)snprintf(text + n, sizeof(text) - n, "flag");
		for (int i = 0; i < levels; i++)
			n += (size_t)snprintf(text + n, sizeof(text) - n, ")");
		cx_init(&x);
		if (levels < 16) {
			cx_compile(&x, &t, 1); /* needs levels + 1 slots */
			assert_int_equal(cx_eval(&x, "{\"flag\": true}").verdict, CONSTRAINT_ALLOW);
		} else {
			assert_int_equal(cx_gen(&x, &t, 1), -1);
			assert_int_equal(x.d.nerrors, 1);
			assert_string_equal(x.d.v[0].msg,
					    "c: the constraint nests too deeply: it needs 17 stack slots, the limit is 16");
		}
		cx_free(&x);
	}
}

/* ---- the loader refuses broken code ------------------------------------ */

/* Raw blob helpers, as in test_blob.c. */
static uint64_t get_le(const uint8_t *b, size_t w)
{
	uint64_t v = 0;

	for (size_t i = 0; i < w; i++)
		v |= (uint64_t)b[i] << (8 * i);
	return v;
}

static void put_le(uint8_t *b, size_t w, uint64_t v)
{
	for (size_t i = 0; i < w; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static size_t sec_off(const uint8_t *blob, int id)
{
	return (size_t)get_le(blob + CPOL_HEADER_SIZE + (size_t)(id - 1) * CPOL_SEC_ENT_BYTES + CPOL_SEC_ENT_OFFSET,
			      8);
}

static uint8_t *rec(uint8_t *blob, int id, uint32_t i, size_t recsize)
{
	return blob + sec_off(blob, id) + (size_t)i * recsize;
}

static void rehash(uint8_t *blob)
{
	blob_hash(blob, (size_t)blob_sig_offset(blob), blob + CPOL_HDR_SHA256);
}

static void expect_field(const uint8_t *blob, size_t len, const char *field)
{
	struct cpol_policy p;
	struct blob_error err;
	int rc = blob_load(blob, len, BLOB_ANY_ARCH, &p, &err);

	policy_free(&p);
	if (rc == 0)
		fail_msg("blob loaded; expected an error at %s", field);
	if (strcmp(err.field, field) != 0)
		fail_msg("error at %s (%s); expected %s", err.field, err.msg, field);
	assert_true(err.msg[0] != '\0');
}

#define I(op_, type_, a_) ((struct cpol_insn){ .op = (op_), .type = (type_), .a = (uint32_t)(a_) })

/* Hand-written code for t.x (emit writes what it is given; the loader is
 * the judge). */
static void expect_code_refused(const struct cpol_insn *code, uint32_t n, const char *field, const char *msg_part)
{
	struct cpol_policy p, q;
	struct blob_error err;
	uint8_t *blob = NULL;
	size_t len = 0;
	int rc;

	build_sig(&p);
	p.constraints = arena_calloc(&p.arena, n, sizeof(*p.constraints));
	assert_non_null(p.constraints);
	memcpy(p.constraints, code, n * sizeof(*code));
	p.nconstraints = n;
	p.tools[0].constraints = (struct cpol_range){ 0, n };
	assert_int_equal(blob_emit(&p, &blob, &len, &err), 0);
	rc = blob_load(blob, len, BLOB_ANY_ARCH, &q, &err);
	policy_free(&q);
	if (rc == 0)
		fail_msg("code loaded; expected an error at %s", field);
	if (strcmp(err.field, field) != 0 || (msg_part != NULL && strstr(err.msg, msg_part) == NULL))
		fail_msg("error at %s (%s); expected %s (%s)", err.field, err.msg, field, msg_part ? msg_part : "");
	free(blob);
	policy_free(&p);
}

static void test_loader_refusals(void **state)
{
	struct cpol_insn v[CPOL_CONSTRAINT_MAX_PROGRAM + 2];

	(void)state;
	/* backward jump: a = -2 lands on the jump's own predecessor */
	v[0] = I(CPOL_OP_BOOL, 0, 1);
	v[1] = I(CPOL_OP_JF, 0, -2);
	v[2] = I(CPOL_OP_BOOL, 0, 1);
	v[3] = I(CPOL_OP_RET, 0, 0);
	expect_code_refused(v, 4, "constraints[1].a", "only go forward");
	/* a jump to itself is backward too (the loop it would make) */
	v[1] = I(CPOL_OP_JF, 0, -1);
	expect_code_refused(v, 4, "constraints[1].a", "only go forward");
	/* jump out of its program, into the next one */
	v[1] = I(CPOL_OP_JF, 0, 3);
	v[4] = I(CPOL_OP_BOOL, 0, 1);
	v[5] = I(CPOL_OP_RET, 0, 0);
	expect_code_refused(v, 6, "constraints[1].a", "leaves its constraint program");
	v[1] = I(CPOL_OP_JT, 0, 0x7fffffff);
	expect_code_refused(v, 6, "constraints[1].a", "leaves its constraint program");
	/* paths that join with different stacks */
	v[0] = I(CPOL_OP_BOOL, 0, 1);
	v[1] = I(CPOL_OP_JF, 0, 1);
	v[2] = I(CPOL_OP_INT, 0, 0);
	v[3] = I(CPOL_OP_RET, 0, 0);
	expect_code_refused(v, 4, "constraints[1].a", "reaches instruction 3");
	/* stack overflow */
	for (uint32_t i = 0; i < 17; i++)
		v[i] = I(CPOL_OP_BOOL, 0, 1);
	v[17] = I(CPOL_OP_RET, 0, 0);
	expect_code_refused(v, 18, "constraints[16].op", "full stack");
	/* stack underflow */
	v[0] = I(CPOL_OP_INT, 0, 0);
	v[1] = I(CPOL_OP_EQ, CPOL_T_INTEGER, 0);
	v[2] = I(CPOL_OP_RET, 0, 0);
	expect_code_refused(v, 3, "constraints[1].op", "needs 2 operands");
	v[0] = I(CPOL_OP_RET, 0, 0);
	expect_code_refused(v, 1, "constraints[0].op", "needs 1 operand");
	v[0] = I(CPOL_OP_JT, 0, 0);
	v[1] = I(CPOL_OP_RET, 0, 0);
	expect_code_refused(v, 2, "constraints[0].op", "needs 1 operand");
	/* type mismatches: the op's type byte, or what the op implies */
	v[0] = I(CPOL_OP_PARAM, CPOL_T_STRING, P_NAME);
	v[1] = I(CPOL_OP_INT, 0, 0);
	v[2] = I(CPOL_OP_EQ, CPOL_T_INTEGER, 0);
	v[3] = I(CPOL_OP_RET, 0, 0);
	expect_code_refused(v, 4, "constraints[2].type", "needs an integer operand");
	v[0] = I(CPOL_OP_INT, 0, 0);
	v[1] = I(CPOL_OP_NOT, 0, 0);
	v[2] = I(CPOL_OP_RET, 0, 0);
	expect_code_refused(v, 3, "constraints[1].op", "needs a boolean operand");
	v[0] = I(CPOL_OP_PARAM, CPOL_T_ARRAY, P_TAGS);
	v[1] = I(CPOL_OP_LEN, CPOL_T_STRING, 0);
	v[2] = I(CPOL_OP_RET, 0, 0);
	expect_code_refused(v, 3, "constraints[1].type", "needs a string operand");
	v[0] = I(CPOL_OP_INT, 0, 0);
	v[1] = I(CPOL_OP_RET, 0, 0);
	expect_code_refused(v, 2, "constraints[1].op", "needs a boolean operand");
	v[0] = I(CPOL_OP_BOOL, 0, 1);
	v[1] = I(CPOL_OP_BOOL, 0, 1);
	v[2] = I(CPOL_OP_RET, 0, 0);
	expect_code_refused(v, 3, "constraints[2].op", "exactly one boolean");
	v[0] = I(CPOL_OP_NUM, 0, 0);
	v[1] = I(CPOL_OP_TONUM, 0, 0);
	v[2] = I(CPOL_OP_RET, 0, 0);
	expect_code_refused(v, 3, "constraints[1].op", "needs an integer operand");
	/* param index and declared type against the signature */
	v[0] = I(CPOL_OP_HAS, 0, P_TOP);
	v[1] = I(CPOL_OP_RET, 0, 0);
	expect_code_refused(v, 2, "constraints[0].a", "out of range");
	v[0] = I(CPOL_OP_PARAM, CPOL_T_STRING, 0xFFFFFFFFu);
	expect_code_refused(v, 2, "constraints[0].a", "out of range");
	v[0] = I(CPOL_OP_PARAM, CPOL_T_INTEGER, P_NAME);
	expect_code_refused(v, 2, "constraints[0].type", "signature says string");
	v[0] = I(CPOL_OP_PARAM, CPOL_T_OBJECT, P_META);
	expect_code_refused(v, 2, "constraints[0].type", "does not take type 6");
	/* missing RET: the run's last program has no end */
	v[0] = I(CPOL_OP_BOOL, 0, 1);
	v[1] = I(CPOL_OP_RET, 0, 0);
	v[2] = I(CPOL_OP_BOOL, 0, 1);
	expect_code_refused(v, 3, "constraints[2].op", "not ret");
	/* ops and fields on their own */
	v[0] = I(0, 0, 0);
	v[1] = I(CPOL_OP_RET, 0, 0);
	expect_code_refused(v, 2, "constraints[0].op", "not known");
	v[0] = I(CPOL_OP_LAST + 1, 0, 0);
	expect_code_refused(v, 2, "constraints[0].op", "not known");
	v[0] = I(CPOL_OP_BOOL, 0, 2);
	expect_code_refused(v, 2, "constraints[0].a", "0 or 1");
	v[0] = I(CPOL_OP_BOOL, CPOL_T_BOOLEAN, 1);
	expect_code_refused(v, 2, "constraints[0].type", "does not take type 4");
	v[0] = I(CPOL_OP_BOOL, 0, 1);
	v[1] = I(CPOL_OP_RET, 0, 1);
	expect_code_refused(v, 2, "constraints[1].a", "no operand a");
	/* a program longer than the limit */
	v[0] = I(CPOL_OP_BOOL, 0, 1);
	for (uint32_t i = 1; i < CPOL_CONSTRAINT_MAX_PROGRAM; i++)
		v[i] = I(CPOL_OP_NOT, 0, 0);
	v[CPOL_CONSTRAINT_MAX_PROGRAM] = I(CPOL_OP_RET, 0, 0);
	expect_code_refused(v, CPOL_CONSTRAINT_MAX_PROGRAM + 1, "constraints[0].op", "the limit is 4096");
}

/* Byte patches of a compiled blob, the hash recomputed so the checks
 * behind it are reached: fields only the byte layout can break. */
static void test_loader_byte_patches(void **state)
{
	static const char *const texts[] = { "name == \"abc\" && name in [\"x\", \"y\"]", "amount < 2.5" };
	struct cx x;
	uint8_t *b, *r;
	size_t len;
	uint32_t strtab_size;

	(void)state;
	cx_init(&x);
	cx_compile(&x, texts, 2);
	/* 0 PARAM name, 1 STR "abc", 2 EQ, 3 JF, 4 PARAM name, 5 IN, 6 RET,
	 * 7 PARAM amount, 8 NUM 2.5, 9 LT, 10 RET */
	assert_int_equal(x.q.constraints[1].op, CPOL_OP_STR);
	assert_int_equal(x.q.constraints[5].op, CPOL_OP_IN);
	assert_int_equal(x.q.constraints[8].op, CPOL_OP_NUM);
	len = x.len;
	b = malloc(len);
	assert_non_null(b);
	strtab_size = (uint32_t)get_le(x.blob + CPOL_HEADER_SIZE + CPOL_SEC_ENT_COUNT, 4);

#define PATCH(i, at, w, v, field)                                          \
	do {                                                                \
		memcpy(b, x.blob, len);                                     \
		r = rec(b, CPOL_SEC_CONSTRAINTS, (i), CPOL_INSN_BYTES);     \
		put_le(r + (at), (w), (v));                                 \
		rehash(b);                                                  \
		expect_field(b, len, (field));                              \
	} while (0)

	/* a string reference out of the string table, and into the middle
	 * of another string */
	PATCH(1, CPOL_INSN_B, 4, strtab_size + 10, "constraints[1].b");
	PATCH(1, CPOL_INSN_B + 4, 4, strtab_size, "constraints[1].b");
	PATCH(1, CPOL_INSN_B, 4, get_le(x.blob + sec_off(x.blob, CPOL_SEC_CONSTRAINTS) + CPOL_INSN_BYTES +
						CPOL_INSN_B, 4) + 1,
	      "constraints[1].b");
	/* a string list out of STRLIST, or empty */
	PATCH(5, CPOL_INSN_B, 4, 1000, "constraints[5].b.first");
	PATCH(5, CPOL_INSN_B + 4, 4, 1000, "constraints[5].b.count");
	PATCH(5, CPOL_INSN_B + 4, 4, 0, "constraints[5].b.first");
	/* NaN and infinity */
	PATCH(8, CPOL_INSN_B, 8, 0x7FF8000000000000ull, "constraints[8].b");
	PATCH(8, CPOL_INSN_B, 8, 0x7FF0000000000000ull, "constraints[8].b");
	/* reserved bytes; a b on an op without one */
	PATCH(2, CPOL_INSN_RESERVED, 2, 1, "constraints[2].reserved");
	PATCH(6, CPOL_INSN_B, 8, 1, "constraints[6].b");
	/* the tool's run: it must cover the section exactly */
	memcpy(b, x.blob, len);
	put_le(rec(b, CPOL_SEC_TOOLS, 0, CPOL_TOOL_BYTES) + CPOL_TOOL_CONSTRAINTS + 4, 4, 7);
	rehash(b);
	expect_field(b, len, "constraints[7].op");
	memcpy(b, x.blob, len);
	put_le(rec(b, CPOL_SEC_TOOLS, 0, CPOL_TOOL_BYTES) + CPOL_TOOL_CONSTRAINTS, 4, 1);
	put_le(rec(b, CPOL_SEC_TOOLS, 0, CPOL_TOOL_BYTES) + CPOL_TOOL_CONSTRAINTS + 4, 4, 10);
	rehash(b);
	expect_field(b, len, "tools[0].constraints.first");
	memcpy(b, x.blob, len);
	put_le(rec(b, CPOL_SEC_TOOLS, 0, CPOL_TOOL_BYTES) + CPOL_TOOL_CONSTRAINTS + 4, 4, 12);
	rehash(b);
	expect_field(b, len, "tools[0].constraints.count");
#undef PATCH
	free(b);
	cx_free(&x);
}

/* Runs of two tools: in tool order, back to back. */
static void test_runs_tile(void **state)
{
	struct cpol_policy p, q;
	struct blob_error err;
	uint8_t *blob = NULL;
	size_t len = 0;

	(void)state;
	build_sig(&p);
	p.ntools = 2;
	{
		struct cpol_tool *t = arena_calloc(&p.arena, 2, sizeof(*t));

		assert_non_null(t);
		t[0] = p.tools[0];
		t[1] = p.tools[0];
		t[1].id = "t.y";
		t[1].params = (struct cpol_range){ 0, 0 };
		p.tools = t;
	}
	p.nconstraints = 4;
	p.constraints = arena_calloc(&p.arena, 4, sizeof(*p.constraints));
	assert_non_null(p.constraints);
	p.constraints[0] = I(CPOL_OP_BOOL, 0, 1);
	p.constraints[1] = I(CPOL_OP_RET, 0, 0);
	p.constraints[2] = I(CPOL_OP_BOOL, 0, 0);
	p.constraints[3] = I(CPOL_OP_RET, 0, 0);
	/* t.y's run first: out of tool order */
	p.tools[0].constraints = (struct cpol_range){ 2, 2 };
	p.tools[1].constraints = (struct cpol_range){ 0, 2 };
	assert_int_equal(blob_emit(&p, &blob, &len, &err), 0);
	expect_field(blob, len, "tools[0].constraints.first");
	free(blob);
	/* shared */
	p.tools[0].constraints = (struct cpol_range){ 0, 2 };
	p.tools[1].constraints = (struct cpol_range){ 0, 2 };
	assert_int_equal(blob_emit(&p, &blob, &len, &err), 0);
	expect_field(blob, len, "tools[1].constraints.first");
	free(blob);
	/* right: and t.y's program may not read params it does not have */
	p.tools[1].constraints = (struct cpol_range){ 2, 2 };
	p.constraints[2] = I(CPOL_OP_HAS, 0, 0);
	assert_int_equal(blob_emit(&p, &blob, &len, &err), 0);
	expect_field(blob, len, "constraints[2].a");
	free(blob);
	p.constraints[2] = I(CPOL_OP_BOOL, 0, 0);
	assert_int_equal(blob_emit(&p, &blob, &len, &err), 0);
	assert_int_equal(blob_load(blob, len, BLOB_ANY_ARCH, &q, &err), 0);
	{
		struct constraint_result r;

		assert_int_equal(constraint_eval(&q, 0, NULL, &r), 1);
		assert_int_equal(constraint_eval(&q, 1, NULL, &r), 0);
		assert_int_equal(r.verdict, CONSTRAINT_FALSE);
		assert_int_equal(constraint_eval(&q, 2, NULL, &r), 0); /* no such tool */
		assert_int_equal(r.verdict, CONSTRAINT_BROKEN);
	}
	policy_free(&q);
	free(blob);
	policy_free(&p);
}

/* ---- mutations: what loads, runs cleanly ------------------------------- */

static const char *const mut_texts[] = {
	"count > 1 && name == \"abc\" || !has(qty)",
	"count in [1, 2.5, -3] && amount >= count",
	"name in [\"abc\", \"x\"] || starts_with(name, \"a\") && ends_with(name, \"c\")",
	"len(tags) <= len(name) && flag != true",
	"(qty == 2) == (-0.5 < amount)",
};

static const char *const mut_inputs[] = {
	"{}",
	"{\"count\": 3, \"name\": \"abc\"}",
	"{\"count\": 1, \"name\": \"x\", \"qty\": 2, \"amount\": 2.5, \"flag\": false, \"tags\": [\"a\"]}",
	"{\"count\": \"x\", \"name\": 1, \"qty\": [], \"amount\": {}, \"flag\": 0, \"tags\": \"a\"}",
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Every byte of the CONSTRAINTS section and of the tool's constraints
 * field, every other value, with the hash recomputed: the loader refuses
 * with a named field, or the policy it accepts evaluates every input
 * without the evaluator's own checks ever firing (CONSTRAINT_BROKEN).  That
 * is the verifier's promise, tested from outside.
 */
static void test_mutations(void **state)
{
	struct cx x;
	cJSON *in[sizeof(mut_inputs) / sizeof(mut_inputs[0])];
	uint8_t *b, *zeroed;
	size_t cs, ce, ts, sig_off, done = 0;
	unsigned loads = 0, accepted = 0, stride = 1;
	const char *env = getenv("CORDON_MUTATION_STRIDE");
	crypto_hash_sha256_state prefix, st;
	double t0 = now_s();

	(void)state;
	if (env != NULL && atoi(env) > 0)
		stride = (unsigned)atoi(env);
	cx_init(&x);
	cx_compile(&x, mut_texts, sizeof(mut_texts) / sizeof(mut_texts[0]));
	for (size_t k = 0; k < sizeof(in) / sizeof(in[0]); k++)
		assert_non_null(in[k] = cJSON_Parse(mut_inputs[k]));
	b = malloc(x.len);
	zeroed = malloc(x.len);
	assert_non_null(b);
	assert_non_null(zeroed);
	memcpy(b, x.blob, x.len);
	memcpy(zeroed, x.blob, x.len);
	memset(zeroed + CPOL_HDR_SHA256, 0, 32);
	sig_off = (size_t)blob_sig_offset(x.blob);
	cs = sec_off(x.blob, CPOL_SEC_CONSTRAINTS);
	ce = cs + (size_t)x.q.nconstraints * CPOL_INSN_BYTES;
	ts = (size_t)(rec(x.blob, CPOL_SEC_TOOLS, 0, CPOL_TOOL_BYTES) - x.blob) + CPOL_TOOL_CONSTRAINTS;
	assert_true(ts < cs && ce <= sig_off);
	/* The hash of the unchanged prefix is carried along, as in
	 * test_blob.c, so each candidate hashes one byte and the suffix. */
	assert_true(sodium_init() >= 0);
	crypto_hash_sha256_init(&prefix);
	for (size_t off = ts; off < ce; off++) {
		if (off == ts + 8)
			off = cs; /* the tool field, then the section */
		crypto_hash_sha256_update(&prefix, zeroed + done, off - done);
		done = off;
		for (unsigned v = 0; v < 256; v += stride) {
			struct cpol_policy q;
			struct blob_error err;

			if (v == x.blob[off])
				continue;
			b[off] = (uint8_t)v;
			st = prefix;
			crypto_hash_sha256_update(&st, b + off, 1);
			crypto_hash_sha256_update(&st, zeroed + off + 1, sig_off - off - 1);
			crypto_hash_sha256_final(&st, b + CPOL_HDR_SHA256);
			loads++;
			if (blob_load(b, x.len, BLOB_ANY_ARCH, &q, &err) == 0) {
				accepted++;
				for (size_t k = 0; k < sizeof(in) / sizeof(in[0]); k++) {
					struct constraint_result r;

					constraint_eval(&q, 0, in[k], &r);
					if (r.verdict == CONSTRAINT_BROKEN)
						fail_msg("byte %zu = 0x%02x loaded, then input %zu broke the evaluator",
							 off, v, k);
				}
			} else if (err.field[0] == '\0' || err.msg[0] == '\0') {
				fail_msg("byte %zu = 0x%02x: error without field or message", off, v);
			}
			policy_free(&q);
			b[off] = x.blob[off];
		}
	}
	fprintf(stderr, "constraint mutations: %u loads, %u accepted, %.2f s\n", loads, accepted, now_s() - t0);
	for (size_t k = 0; k < sizeof(in) / sizeof(in[0]); k++)
		cJSON_Delete(in[k]);
	free(zeroed);
	free(b);
	cx_free(&x);
}

/* ---- differential: bytecode against a reference over the tree ---------- */

struct rng {
	uint64_t s;
};

static uint32_t rnd(struct rng *r, uint32_t n)
{
	/* xorshift64*: reproducible across runs and hosts. */
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return (uint32_t)((r->s * 2685821657736338717ull) >> 33) % n;
}

static const struct src_file diff_file = { (char *)"diff", (char *)"", 0, NULL };

static struct ast_node *nn(struct arena *a, enum ast_kind k)
{
	struct ast_node *n = arena_calloc(a, 1, sizeof(*n));

	assert_non_null(n);
	n->kind = k;
	n->loc.file = &diff_file;
	n->loc.line = 1;
	n->loc.col = 1;
	return n;
}

static struct ast_node *nbin(struct arena *a, enum ast_op op, struct ast_node *l, struct ast_node *r)
{
	struct ast_node *n = nn(a, AST_BINARY);

	n->op = op;
	n->a = l;
	n->b = r;
	return n;
}

static struct ast_node *nneg(struct arena *a, struct ast_node *x)
{
	struct ast_node *n = nn(a, AST_UNARY);

	n->op = AST_OP_NEG;
	n->a = x;
	return n;
}

static struct ast_node *nid(struct arena *a, uint32_t param)
{
	struct ast_node *n = nn(a, AST_IDENT);

	n->str = sig[param].name;
	n->len = strlen(n->str);
	return n;
}

static struct ast_node *ncall(struct arena *a, const char *f, size_t nargs, struct ast_node *x, struct ast_node *y)
{
	struct ast_node *n = nn(a, AST_CALL);

	n->str = f;
	n->len = strlen(f);
	n->n = nargs;
	n->items = arena_calloc(a, 2, sizeof(*n->items));
	assert_non_null(n->items);
	n->items[0] = x;
	n->items[1] = y;
	return n;
}

/* Values the generator and the inputs draw from, so that equal values,
 * prefixes and boundaries actually meet. */
static const char *const str_pool[] = { "", "a", "ab", "abc", "b", "ba", "é", "aé", "@example.org",
					"x@example.org" };
static const uint64_t int_mag[] = { 0, 1, 2, 3, 7, 1000, 9007199254740993ull, 9223372036854775807ull,
				    9223372036854775808ull };
static const double num_mag[] = { 0.0, 0.5, 1.5, 2.0, 3.0, 1000.0, 9007199254740992.0, 1e300 };

#define NPOOL(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))

static struct ast_node *gen_int_lit(struct arena *a, struct rng *r)
{
	struct ast_node *n = nn(a, AST_INT);
	int neg = rnd(r, 2);

	n->ival = int_mag[rnd(r, NPOOL(int_mag))];
	/* 2^63 only as -2^63, the one place it is an int64. */
	if (n->ival == 9223372036854775808ull)
		neg = 1;
	return neg ? nneg(a, n) : n;
}

static struct ast_node *gen_num_lit(struct arena *a, struct rng *r)
{
	struct ast_node *n = nn(a, AST_NUM);

	n->fval = num_mag[rnd(r, NPOOL(num_mag))];
	return rnd(r, 2) ? nneg(a, n) : n;
}

static struct ast_node *gen_str_lit(struct arena *a, struct rng *r)
{
	struct ast_node *n = nn(a, AST_STR);

	n->str = str_pool[rnd(r, NPOOL(str_pool))];
	n->len = strlen(n->str);
	return n;
}

static struct ast_node *gen_bool_lit(struct arena *a, struct rng *r)
{
	struct ast_node *n = nn(a, AST_BOOL);

	n->ival = rnd(r, 2);
	return n;
}

static struct ast_node *gen_str(struct arena *a, struct rng *r)
{
	switch (rnd(r, 3)) {
	case 0: return gen_str_lit(a, r);
	case 1: return nid(a, P_NAME);
	default: return nid(a, P_NOTE);
	}
}

static struct ast_node *gen_int(struct arena *a, struct rng *r)
{
	switch (rnd(r, 5)) {
	case 0: return gen_int_lit(a, r);
	case 1: return nid(a, P_COUNT);
	case 2: return nid(a, P_QTY);
	case 3: return ncall(a, "len", 1, gen_str(a, r), NULL);
	default: return ncall(a, "len", 1, nid(a, P_TAGS), NULL);
	}
}

static struct ast_node *gen_num(struct arena *a, struct rng *r)
{
	return rnd(r, 2) ? gen_num_lit(a, r) : nid(a, P_AMOUNT);
}

static struct ast_node *gen_numeric(struct arena *a, struct rng *r)
{
	return rnd(r, 2) ? gen_int(a, r) : gen_num(a, r);
}

static struct ast_node *gen_bool(struct arena *a, struct rng *r, int depth);

static struct ast_node *gen_in(struct arena *a, struct rng *r, int depth)
{
	struct ast_node *list = nn(a, AST_LIST), *x;
	uint32_t kind = rnd(r, 4);

	list->n = 1 + rnd(r, 4);
	list->items = arena_calloc(a, list->n, sizeof(*list->items));
	assert_non_null(list->items);
	switch (kind) {
	case 0: x = gen_str(a, r); break;
	case 1: x = gen_int(a, r); break;
	case 2: x = gen_num(a, r); break;
	default: x = gen_bool(a, r, depth - 1); break;
	}
	for (size_t i = 0; i < list->n; i++) {
		switch (kind) {
		case 0: list->items[i] = gen_str_lit(a, r); break;
		case 1:
		case 2: list->items[i] = rnd(r, 2) ? gen_int_lit(a, r) : gen_num_lit(a, r); break;
		default: list->items[i] = gen_bool_lit(a, r); break;
		}
	}
	return nbin(a, AST_OP_IN, x, list);
}

static const enum ast_op cmp_ops[] = { AST_OP_EQ, AST_OP_NE, AST_OP_LT, AST_OP_LE, AST_OP_GT, AST_OP_GE };

static struct ast_node *gen_bool(struct arena *a, struct rng *r, int depth)
{
	struct ast_node *n;
	uint32_t pick = depth <= 0 ? rnd(r, 3) : 3 + rnd(r, 9);

	switch (pick) {
	case 0: return gen_bool_lit(a, r);
	case 1: return nid(a, P_FLAG);
	case 2: return ncall(a, "has", 1, nid(a, rnd(r, P_TOP)), NULL);
	case 3: return nbin(a, cmp_ops[rnd(r, 6)], gen_numeric(a, r), gen_numeric(a, r));
	case 4: return nbin(a, rnd(r, 2) ? AST_OP_EQ : AST_OP_NE, gen_str(a, r), gen_str(a, r));
	case 5:
		return nbin(a, rnd(r, 2) ? AST_OP_EQ : AST_OP_NE, gen_bool(a, r, depth - 1), gen_bool(a, r, depth - 1));
	case 6: return gen_in(a, r, depth);
	case 7: return ncall(a, rnd(r, 2) ? "starts_with" : "ends_with", 2, gen_str(a, r), gen_str_lit(a, r));
	case 8:
		n = nn(a, AST_UNARY);
		n->op = AST_OP_NOT;
		n->a = gen_bool(a, r, depth - 1);
		return n;
	case 9:
	case 10: return nbin(a, pick == 9 ? AST_OP_AND : AST_OP_OR, gen_bool(a, r, depth - 1), gen_bool(a, r, depth - 1));
	default: return gen_bool(a, r, 0);
	}
}

/* The reference evaluator: the language as docs/constraints.md states it,
 * over the tree, with no code shared with the compiler or the runtime. */
struct rval {
	uint32_t type;
	int64_t i;
	double f;
	int b;
	const char *s;
	size_t n;
};

struct rstate {
	const cJSON *params;
	enum constraint_verdict v; /* ABSENT / MISTYPED once an error happened */
	uint32_t param;
};

static uint32_t ref_param_index(const char *name)
{
	for (uint32_t i = 0; i < P_TOP; i++)
		if (strcmp(sig[i].name, name) == 0)
			return i;
	fail_msg("generator used unknown param %s", name);
	return 0;
}

static const cJSON *ref_member(const struct rstate *st, uint32_t i)
{
	const cJSON *m;

	if (!cJSON_IsObject(st->params))
		return NULL;
	m = cJSON_GetObjectItemCaseSensitive(st->params, sig[i].name);
	return m == NULL || cJSON_IsNull(m) ? NULL : m;
}

static int ref_fail(struct rstate *st, enum constraint_verdict v, uint32_t param)
{
	st->v = v;
	st->param = param;
	return -1;
}

static int ref_eval(struct rstate *st, const struct ast_node *n, struct rval *out);

static int ref_lit(const struct ast_node *n, struct rval *out)
{
	int neg = 0;

	while (n->kind == AST_UNARY && n->op == AST_OP_NEG) {
		neg = !neg;
		n = n->a;
	}
	memset(out, 0, sizeof(*out));
	switch (n->kind) {
	case AST_INT:
		out->type = CPOL_T_INTEGER;
		/* Two's complement negation of the magnitude: -2^63 included. */
		out->i = neg ? (int64_t)(~n->ival + 1) : (int64_t)n->ival;
		return 0;
	case AST_NUM:
		out->type = CPOL_T_NUMBER;
		out->f = neg ? -n->fval : n->fval;
		return 0;
	case AST_STR:
		out->type = CPOL_T_STRING;
		out->s = n->str;
		out->n = n->len;
		return 0;
	case AST_BOOL:
		out->type = CPOL_T_BOOLEAN;
		out->b = n->ival != 0;
		return 0;
	default:
		fail_msg("not a literal");
		return -1;
	}
}

static double ref_num(const struct rval *v)
{
	return v->type == CPOL_T_INTEGER ? (double)v->i : v->f;
}

/* Three-way comparison after promotion; strings and booleans: 0 or 1. */
static int ref_cmp(const struct rval *x, const struct rval *y)
{
	if (x->type == CPOL_T_INTEGER && y->type == CPOL_T_INTEGER)
		return x->i < y->i ? -1 : x->i > y->i;
	if (x->type == CPOL_T_STRING)
		return !(x->n == y->n && memcmp(x->s, y->s, x->n) == 0);
	if (x->type == CPOL_T_BOOLEAN)
		return x->b != y->b;
	return ref_num(x) < ref_num(y) ? -1 : ref_num(x) > ref_num(y);
}

static int ref_apply(enum ast_op op, int c)
{
	switch (op) {
	case AST_OP_EQ: return c == 0;
	case AST_OP_NE: return c != 0;
	case AST_OP_LT: return c < 0;
	case AST_OP_LE: return c <= 0;
	case AST_OP_GT: return c > 0;
	default: return c >= 0;
	}
}

static int ref_eval(struct rstate *st, const struct ast_node *n, struct rval *out)
{
	struct rval x, y;
	const cJSON *m;
	uint32_t i;

	memset(out, 0, sizeof(*out));
	switch (n->kind) {
	case AST_INT:
	case AST_NUM:
	case AST_STR:
	case AST_BOOL:
		return ref_lit(n, out);
	case AST_IDENT:
		i = ref_param_index(n->str);
		m = ref_member(st, i);
		if (m == NULL)
			return ref_fail(st, CONSTRAINT_ABSENT, i);
		out->type = sig[i].type;
		switch (sig[i].type) {
		case CPOL_T_STRING:
			if (!cJSON_IsString(m))
				return ref_fail(st, CONSTRAINT_MISTYPED, i);
			out->s = m->valuestring;
			out->n = strlen(m->valuestring);
			return 0;
		case CPOL_T_INTEGER:
			/* An integer is a JSON number with no fraction that an
			 * int64 holds: [-2^63, 2^63). */
			if (!cJSON_IsNumber(m) || !(m->valuedouble >= -9223372036854775808.0) ||
			    !(m->valuedouble < 9223372036854775808.0))
				return ref_fail(st, CONSTRAINT_MISTYPED, i);
			out->i = (int64_t)m->valuedouble;
			if ((double)out->i != m->valuedouble)
				return ref_fail(st, CONSTRAINT_MISTYPED, i);
			return 0;
		case CPOL_T_NUMBER:
			if (!cJSON_IsNumber(m) || !isfinite(m->valuedouble))
				return ref_fail(st, CONSTRAINT_MISTYPED, i);
			out->f = m->valuedouble;
			return 0;
		case CPOL_T_BOOLEAN:
			if (!cJSON_IsBool(m))
				return ref_fail(st, CONSTRAINT_MISTYPED, i);
			out->b = cJSON_IsTrue(m);
			return 0;
		case CPOL_T_ARRAY:
			if (!cJSON_IsArray(m))
				return ref_fail(st, CONSTRAINT_MISTYPED, i);
			out->n = 0;
			for (const cJSON *e = m->child; e != NULL; e = e->next)
				out->n++;
			return 0;
		default:
			fail_msg("object param in an expression");
			return -1;
		}
	case AST_CALL:
		out->type = CPOL_T_BOOLEAN;
		if (strcmp(n->str, "has") == 0) {
			out->b = ref_member(st, ref_param_index(n->items[0]->str)) != NULL;
			return 0;
		}
		if (ref_eval(st, n->items[0], &x) < 0)
			return -1;
		if (strcmp(n->str, "len") == 0) {
			out->type = CPOL_T_INTEGER;
			out->i = (int64_t)x.n;
			return 0;
		}
		if (n->items[1]->len > x.n) {
			out->b = 0;
		} else if (strcmp(n->str, "starts_with") == 0) {
			out->b = strncmp(x.s, n->items[1]->str, n->items[1]->len) == 0;
		} else {
			out->b = strcmp(x.s + x.n - n->items[1]->len, n->items[1]->str) == 0;
		}
		return 0;
	case AST_UNARY:
		if (n->op == AST_OP_NEG)
			return ref_lit(n, out);
		if (ref_eval(st, n->a, &x) < 0)
			return -1;
		out->type = CPOL_T_BOOLEAN;
		out->b = !x.b;
		return 0;
	case AST_BINARY:
		out->type = CPOL_T_BOOLEAN;
		if (ref_eval(st, n->a, &x) < 0)
			return -1;
		if (n->op == AST_OP_AND || n->op == AST_OP_OR) {
			if (x.b == (n->op == AST_OP_OR)) {
				out->b = x.b;
				return 0;
			}
			if (ref_eval(st, n->b, &y) < 0)
				return -1;
			out->b = y.b;
			return 0;
		}
		if (n->op == AST_OP_IN) {
			out->b = 0;
			for (size_t k = 0; k < n->b->n && !out->b; k++) {
				if (ref_lit(n->b->items[k], &y) < 0)
					return -1;
				out->b = ref_cmp(&x, &y) == 0;
			}
			return 0;
		}
		if (ref_eval(st, n->b, &y) < 0)
			return -1;
		out->b = ref_apply(n->op, ref_cmp(&x, &y));
		return 0;
	default:
		fail_msg("unexpected node");
		return -1;
	}
}

/* Random call params: each param absent now and then, mistyped now and
 * then, else a value from the pools. */
static cJSON *gen_params(struct rng *r)
{
	static const double ints[] = { 0, 1, -1, 2, 3, -3, 7, 1000, -9223372036854775808.0, 9007199254740992.0 };
	static const double nums[] = { 0.0, -0.0, 0.5, -1.5, 2.0, 3.0, -3.0, 1000.0, 1e300, 9007199254740992.0 };
	cJSON *o = cJSON_CreateObject();

	assert_non_null(o);
	for (uint32_t i = 0; i < P_TOP; i++) {
		cJSON *v = NULL;
		uint32_t k = rnd(r, 20);

		if (k < 3)
			continue; /* absent */
		if (k == 3) {
			v = cJSON_CreateNull();
		} else if (k == 4) {
			/* mistyped: a value of some other JSON type */
			v = sig[i].type == CPOL_T_STRING ? cJSON_CreateNumber(1) : cJSON_CreateString("1");
		} else if (k == 5 && sig[i].type == CPOL_T_INTEGER) {
			v = cJSON_CreateNumber(2.5); /* a fraction */
		} else {
			switch (sig[i].type) {
			case CPOL_T_STRING: v = cJSON_CreateString(str_pool[rnd(r, NPOOL(str_pool))]); break;
			case CPOL_T_INTEGER: v = cJSON_CreateNumber(ints[rnd(r, NPOOL(ints))]); break;
			case CPOL_T_NUMBER: v = cJSON_CreateNumber(nums[rnd(r, NPOOL(nums))]); break;
			case CPOL_T_BOOLEAN: v = cJSON_CreateBool(rnd(r, 2)); break;
			case CPOL_T_ARRAY: {
				uint32_t len = rnd(r, 5);

				v = cJSON_CreateArray();
				for (uint32_t e = 0; v != NULL && e < len; e++)
					cJSON_AddItemToArray(v, cJSON_CreateString(str_pool[rnd(r, NPOOL(str_pool))]));
				break;
			}
			default: v = cJSON_CreateObject(); break;
			}
		}
		assert_non_null(v);
		cJSON_AddItemToObject(o, sig[i].name, v);
	}
	return o;
}

static void test_differential(void **state)
{
	const char *env = getenv("CORDON_DIFF_EXPRS");
	unsigned nexpr = env != NULL && atoi(env) > 0 ? (unsigned)atoi(env) : 10000, ninput = 30;
	unsigned count[CONSTRAINT_BROKEN + 1] = { 0 }, insns = 0;
	struct rng r = { 0x9E3779B97F4A7C15ull };
	double t0 = now_s();

	(void)state;
	for (unsigned e = 0; e < nexpr; e++) {
		struct cx x;
		struct ast_node *expr;
		struct constraint_src s;

		cx_init(&x);
		s = (struct constraint_src){ &x.d, &x.p.arena, "diff", x.p.params, P_TOP, NULL, 0, 0 };
		expr = gen_bool(&x.ast, &r, 1 + (int)rnd(&r, 4));
		if (constraint_gen_expr(&s, expr, &x.code) != 0) {
			cx_print_diags(&x);
			fail_msg("expression %u did not compile", e);
		}
		insns += (unsigned)x.code.n;
		cx_load(&x);
		for (unsigned k = 0; k < ninput; k++) {
			cJSON *in = gen_params(&r);
			struct rstate st = { in, CONSTRAINT_ALLOW, CPOL_NONE };
			struct rval v;
			struct constraint_result got;
			enum constraint_verdict want;

			if (ref_eval(&st, expr, &v) < 0)
				want = st.v;
			else
				want = v.b ? CONSTRAINT_ALLOW : CONSTRAINT_FALSE;
			constraint_eval(&x.q, 0, in, &got);
			if (got.verdict != want || (want >= CONSTRAINT_ABSENT && got.param != st.param)) {
				char *js = cJSON_PrintUnformatted(in);

				fail_msg("expression %u, input %s: bytecode says %s (param %u), reference %s (param %u)", e,
					 js, constraint_verdict_name(got.verdict), got.param, constraint_verdict_name(want),
					 st.param);
			}
			count[want]++;
			cJSON_Delete(in);
		}
		cx_free(&x);
	}
	fprintf(stderr,
		"differential: %u expressions (%u instructions) x %u inputs: %u allow, %u false, %u absent, "
		"%u mistyped, all agree, %.2f s\n",
		nexpr, insns, ninput, count[CONSTRAINT_ALLOW], count[CONSTRAINT_FALSE], count[CONSTRAINT_ABSENT],
		count[CONSTRAINT_MISTYPED], now_s() - t0);
	/* The generator must reach every outcome, or the agreement is hollow. */
	for (int v = CONSTRAINT_ALLOW; v <= CONSTRAINT_MISTYPED; v++)
		assert_true(count[v] > nexpr * ninput / 50);
}

/* ---- the café example -------------------------------------------------- */

static void test_cafe(void **state)
{
	const char *src = getenv("CORDON_SRC");
	char app_path[4096], tools_path[4096];
	struct compile_inputs in;
	const char *tp[1] = { tools_path };
	struct cpol_policy p, q;
	struct diags d;
	struct blob_error err;
	struct constraint_result r;
	uint8_t *blob = NULL;
	size_t len = 0;
	uint32_t mail, calc;
	cJSON *j;

	(void)state;
	if (src == NULL)
		src = ".";
	snprintf(app_path, sizeof(app_path), "%s/examples/cafe/app.yaml", src);
	snprintf(tools_path, sizeof(tools_path), "%s/examples/cafe/tools.yaml", src);
	diags_init(&d);
	policy_init(&q);
	assert_int_equal(compile_inputs_read(&in, app_path, tp, 1, &d), 0);
	if (compile_sources(&in.app, in.refs, 1, &p, &d) != 0) {
		diags_print(&d, stderr);
		fail_msg("the café does not compile");
	}
	assert_int_equal(blob_emit(&p, &blob, &len, &err), 0);
	assert_int_equal(blob_load(blob, len, BLOB_ANY_ARCH, &q, &err), 0);
	mail = policy_find_tool(&q, "mail.send");
	calc = policy_find_tool(&q, "calc.solve");
	assert_int_equal(constraint_count(&q, mail), 1);
	assert_int_equal(constraint_count(&q, calc), 1);

	j = cJSON_Parse("{\"to\": \"anna@example.org\", \"subject\": \"s\", \"body\": \"b\"}");
	assert_int_equal(constraint_eval(&q, mail, j, &r), 1);
	cJSON_Delete(j);
	j = cJSON_Parse("{\"to\": \"anna@example.org.evil.com\", \"subject\": \"s\", \"body\": \"b\"}");
	assert_int_equal(constraint_eval(&q, mail, j, &r), 0);
	assert_int_equal(r.verdict, CONSTRAINT_FALSE);
	assert_int_equal(r.index, 0);
	cJSON_Delete(j);
	j = cJSON_Parse("{\"unknowns\": [\"x\"], \"equations\": [{\"coefficients\": [1], \"equals\": 2}]}");
	assert_int_equal(constraint_eval(&q, calc, j, &r), 1);
	cJSON_Delete(j);
	j = cJSON_Parse("{\"unknowns\": [], \"equations\": []}");
	assert_int_equal(constraint_eval(&q, calc, j, &r), 0);
	cJSON_Delete(j);

	free(blob);
	policy_free(&q);
	policy_free(&p);
	diags_free(&d);
	compile_inputs_free(&in);
}

/* ---- fuzz seeds -------------------------------------------------------- */

/* The fuzz target (tests/fuzz/fuzz_constraint_verify.c) takes raw
 * instructions for a tool with this same signature; seeds are the
 * CONSTRAINTS sections of real compiled constraints. */
static void test_write_seeds(void **state)
{
	const char *dir = getenv("CORDON_WRITE_SEEDS");

	(void)state;
	if (dir == NULL)
		return;
	for (size_t i = 0; i < sizeof(mut_texts) / sizeof(mut_texts[0]); i++) {
		char path[4096];
		struct cx x;
		FILE *f;

		cx_init(&x);
		cx_compile(&x, &mut_texts[i], 1);
		snprintf(path, sizeof(path), "%s/compiled-%zu.bin", dir, i);
		f = fopen(path, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(x.blob + sec_off(x.blob, CPOL_SEC_CONSTRAINTS), CPOL_INSN_BYTES,
					x.q.nconstraints, f),
				 x.q.nconstraints);
		assert_int_equal(fclose(f), 0);
		cx_free(&x);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_operators),
		cmocka_unit_test(test_which_constraint),
		cmocka_unit_test(test_code_shapes),
		cmocka_unit_test(test_type_errors),
		cmocka_unit_test(test_errors_all_reported),
		cmocka_unit_test(test_nul_in_string),
		cmocka_unit_test(test_stack_limit),
		cmocka_unit_test(test_loader_refusals),
		cmocka_unit_test(test_loader_byte_patches),
		cmocka_unit_test(test_runs_tile),
		cmocka_unit_test(test_mutations),
		cmocka_unit_test(test_differential),
		cmocka_unit_test(test_cafe),
		cmocka_unit_test(test_write_seeds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
