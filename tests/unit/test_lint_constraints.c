/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_lint_constraints.c - the constraint analysis of lint CDN709-CDN711
 * (lint/rules/constraints.c) is sound: what it says a constraint can do
 * covers everything the bytecode evaluator (runtime/constraint_eval.c)
 * does with it.
 *
 * Random well-typed constraints over one signature with bounds (integers,
 * numbers, string lengths, an enum, an array, optional parameters) are
 * compiled as tools of one inventory, one constraint a tool; each is run
 * against random calls that pass the signature, near the bounds and with
 * optional parameters left out.  Every verdict seen (allow, false, absent)
 * must be among the outcomes the analysis gave.  The analysis must also
 * decide often enough (never true, or always true) that the check is not
 * vacuous, and a few hand-written constraints pin exact answers.
 *
 * Environment: CORDON_LINT_EXPRS=n constraints (default 3000), 120 calls
 * each; CORDON_SEED=n fixes the seed (printed on failure).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "compiler/compile.h"
#include "grammar/policy_parse.h"
#include "lint/rules/rules.h"
#include "runtime/constraint_eval.h"

#define BATCH 64 /* tools an inventory, one constraint each */
#define CALLS 120

static unsigned seed;

static unsigned rnd(unsigned n)
{
	seed = seed * 1103515245u + 12345u;
	return (seed >> 16) % n;
}

static const char *pick(const char *const *v, size_t n)
{
	return v[rnd((unsigned)n)];
}
#define PICK(v) pick(v, sizeof(v) / sizeof(v[0]))

/* The signature, sorted by name as the compiler sorts it. */
static const char params_yaml[] = "    params:\n"
				  "      amount: { type: integer, min: 1, max: 100, required: true }\n"
				  "      fee: { type: number, min: 0.5, max: 2.5 }\n"
				  "      flag: { type: boolean }\n"
				  "      items: { type: array, items: { type: string, max_length: 2 }, max_items: 3, required: true }\n"
				  "      note: { type: string, max_length: 4 }\n"
				  "      priority: { type: string, enum: [low, high] }\n"
				  "      to: { type: string, min_length: 3, max_length: 6, required: true }\n";

static const char *const ops[] = { "<", "<=", ">", ">=", "==", "!=" };

/* One comparison, call or guard. */
static void gen_atom(char *b, size_t n)
{
	static const char *const amount_lits[] = { "-1", "0", "1", "2", "50", "99", "100", "101", "1000", "0.5", "1.5",
						    "100.5" };
	static const char *const fee_lits[] = { "0", "0.5", "1", "2.5", "3", "0.49", "2", "-7" };
	static const char *const len_lits[] = { "0", "1", "2", "3", "4", "5", "6", "7" };
	static const char *const strs[] = { "\"low\"", "\"high\"", "\"urgent\"", "\"\"", "\"abc\"", "\"ab\"",
					    "\"abcdefg\"", "\"lo\"" };
	static const char *const affixes[] = { "\"l\"", "\"h\"", "\"x\"", "\"\"", "\"gh\"", "\"abcdefg\"", "\"w\"" };
	static const char *const optional[] = { "fee", "note", "priority", "flag", "amount", "to" };
	static const char *const lists[] = { "[\"low\"]", "[\"low\", \"high\"]", "[\"high\", \"urgent\"]", "[\"x\"]",
					     "[\"abc\", \"ab\"]" };
	static const char *const nums[] = { "[1, 2, 3]", "[0, 101]", "[100, 1.5]", "[0.5, 2.5]" };

	switch (rnd(12)) {
	case 0: snprintf(b, n, "amount %s %s", PICK(ops), PICK(amount_lits)); break;
	case 1: snprintf(b, n, "fee %s %s", PICK(ops), PICK(fee_lits)); break;
	case 2: snprintf(b, n, "len(%s) %s %s", rnd(2) ? "to" : "note", PICK(ops), PICK(len_lits)); break;
	case 3: snprintf(b, n, "len(items) %s %s", PICK(ops), PICK(len_lits)); break;
	case 4: snprintf(b, n, "%s %s %s", rnd(2) ? "priority" : "to", rnd(2) ? "==" : "!=", PICK(strs)); break;
	case 5: snprintf(b, n, "%s in %s", rnd(2) ? "priority" : "to", PICK(lists)); break;
	case 6: snprintf(b, n, "%s(%s, %s)", rnd(2) ? "starts_with" : "ends_with", rnd(2) ? "priority" : "to",
			 PICK(affixes)); break;
	case 7: snprintf(b, n, "has(%s)", PICK(optional)); break;
	case 8: snprintf(b, n, "%s", rnd(2) ? "flag" : rnd(2) ? "true" : "false"); break;
	case 9: snprintf(b, n, "amount %s fee", PICK(ops)); break;
	case 10: snprintf(b, n, "%s in %s", rnd(2) ? "amount" : "fee", PICK(nums)); break;
	default: snprintf(b, n, "len(to) %s len(%s)", PICK(ops), rnd(2) ? "note" : "items"); break;
	}
}

static void gen_expr(char *b, size_t n, int depth)
{
	char l[512], r[512];

	if (depth == 0 || rnd(3) == 0) {
		gen_atom(b, n);
		return;
	}
	gen_expr(l, sizeof(l), depth - 1);
	switch (rnd(5)) {
	case 0: snprintf(b, n, "!(%s)", l); return;
	case 1:
	case 2:
		/* A guard on the left, as people write them. */
		if (rnd(2)) {
			static const char *const g[] = { "has(fee)", "has(note)", "has(priority)", "!has(fee)",
							 "!has(note)", "!has(priority)" };

			snprintf(b, n, "%s %s (%s)", PICK(g), rnd(2) ? "&&" : "||", l);
			return;
		}
		/* fall through */
	default:
		gen_expr(r, sizeof(r), depth - 1);
		snprintf(b, n, "(%s) %s (%s)", l, rnd(2) ? "&&" : "||", r);
		return;
	}
}

/* A call the signature check accepts: bounds and their neighbours inside,
 * optional parameters often left out. */
static cJSON *gen_call(void)
{
	static const char *const notes[] = { "", "a", "ab", "abcd", "low" };
	static const char *const tos[] = { "abc", "abcd", "abcdef", "low", "hig", "xgh", "abcdeh", "lll" };
	static const double fees[] = { 0.5, 0.75, 1, 2, 2.5 };
	static const int amounts[] = { 1, 2, 3, 50, 99, 100 };
	cJSON *o = cJSON_CreateObject(), *items = cJSON_AddArrayToObject(o, "items");
	unsigned k, ni = rnd(4);

	cJSON_AddNumberToObject(o, "amount", rnd(3) ? amounts[rnd(6)] : 1 + (int)rnd(100));
	cJSON_AddStringToObject(o, "to", tos[rnd(8)]);
	for (k = 0; k < ni; k++)
		cJSON_AddItemToArray(items, cJSON_CreateString("x"));
	if (rnd(2))
		cJSON_AddNumberToObject(o, "fee", fees[rnd(5)]);
	if (rnd(2))
		cJSON_AddBoolToObject(o, "flag", rnd(2));
	if (rnd(2))
		cJSON_AddStringToObject(o, "note", notes[rnd(5)]);
	if (rnd(2))
		cJSON_AddStringToObject(o, "priority", rnd(2) ? "low" : "high");
	return o;
}

struct batch {
	char exprs[BATCH][2048];
	size_t n;
	struct cpol_policy p;
	struct arena ast;
	struct ast_node *trees[BATCH];
	struct src_file srcs[BATCH];
};

static void batch_compile(struct batch *bt)
{
	static const char app[] = "version: 1\napp: lint-unit\n";
	size_t cap = 1 << 20, used = 0, i;
	char *inv = malloc(cap);
	struct src_file a, t;
	const struct src_file *tv[1] = { &t };
	struct diags d;

	assert_non_null(inv);
	used += (size_t)snprintf(inv, cap, "version: 1\ntools:\n");
	for (i = 0; i < bt->n; i++)
		used += (size_t)snprintf(inv + used, cap - used,
					 "  - id: t.c%03zu\n    description: one constraint\n%s"
					 "    exec: [/usr/local/libexec/lint-unit/t]\n    constraints:\n      - '%s'\n",
					 i, params_yaml, bt->exprs[i]);
	assert_true(used < cap);
	diags_init(&d);
	policy_init(&bt->p);
	assert_int_equal(src_from_mem("app.yaml", app, strlen(app), 1 << 20, &a, &d), 0);
	assert_int_equal(src_from_mem("tools.yaml", inv, used, 1 << 22, &t, &d), 0);
	policy_free(&bt->p);
	if (compile_sources(&a, tv, 1, &bt->p, &d) != 0) {
		diags_print(&d, stderr);
		fail_msg("seed %u: the generated inventory does not compile", seed);
	}
	/* The trees again, as lint parses them. */
	arena_init(&bt->ast);
	for (i = 0; i < bt->n; i++) {
		assert_int_equal(src_from_mem("c", bt->exprs[i], strlen(bt->exprs[i]), 4096, &bt->srcs[i], &d), 0);
		assert_int_equal(policy_parse_expr(&bt->srcs[i], 1, 1, bt->exprs[i], strlen(bt->exprs[i]), &bt->ast,
						   &bt->trees[i], &d),
				 0);
	}
	diags_free(&d);
	src_free(&a);
	src_free(&t);
	free(inv);
}

static void batch_free(struct batch *bt)
{
	size_t i;

	for (i = 0; i < bt->n; i++)
		src_free(&bt->srcs[i]);
	arena_free(&bt->ast);
	policy_free(&bt->p);
}

/* The analysis of constraint i of the batch (tool t.cNNN). */
static unsigned analysed(struct batch *bt, size_t i, uint32_t *tool)
{
	char id[16];
	uint32_t k;

	snprintf(id, sizeof(id), "t.c%03zu", i);
	for (k = 0; k < bt->p.ntools && strcmp(bt->p.tools[k].id, id) != 0; k++)
		;
	assert_true(k < bt->p.ntools);
	*tool = k;
	return constraint_outcomes(bt->p.params + bt->p.tools[k].params.first, bt->p.tools[k].params.count,
				   bt->trees[i]);
}

static unsigned seen_of(const struct constraint_result *r)
{
	switch (r->verdict) {
	case CONSTRAINT_ALLOW: return CONSTRAINT_O_TRUE;
	case CONSTRAINT_FALSE: return CONSTRAINT_O_FALSE;
	case CONSTRAINT_ABSENT: return CONSTRAINT_O_ABSENT;
	default: fail_msg("seed %u: verdict %s", seed, constraint_verdict_name(r->verdict));
	}
	return 0;
}

static void test_sound_on_random_constraints(void **state)
{
	const char *env = getenv("CORDON_LINT_EXPRS");
	long total = env ? strtol(env, NULL, 10) : 3000, done = 0, never = 0, always = 0;
	struct batch *bt = calloc(1, sizeof(*bt));

	(void)state;
	assert_non_null(bt);
	seed = getenv("CORDON_SEED") ? (unsigned)strtoul(getenv("CORDON_SEED"), NULL, 10) : (unsigned)time(NULL);
	print_message("seed %u\n", seed);
	while (done < total) {
		size_t i;

		for (bt->n = 0; bt->n < BATCH; bt->n++)
			gen_expr(bt->exprs[bt->n], sizeof(bt->exprs[bt->n]), 3);
		batch_compile(bt);
		for (i = 0; i < bt->n; i++) {
			uint32_t tool;
			unsigned o = analysed(bt, i, &tool), c;

			never += !(o & CONSTRAINT_O_TRUE);
			always += o == CONSTRAINT_O_TRUE;
			for (c = 0; c < CALLS; c++) {
				cJSON *call = gen_call();
				struct constraint_result res;
				unsigned s;

				constraint_eval(&bt->p, tool, call, &res);
				s = seen_of(&res);
				if (!(o & s)) {
					char *txt = cJSON_PrintUnformatted(call);

					fail_msg("seed %u: '%s' with %s gave %s; the analysis said %s%s%s", seed,
						 bt->exprs[i], txt, constraint_verdict_name(res.verdict),
						 (o & CONSTRAINT_O_TRUE) ? "true " : "", (o & CONSTRAINT_O_FALSE) ? "false " : "",
						 (o & CONSTRAINT_O_ABSENT) ? "absent" : "");
				}
				cJSON_Delete(call);
			}
		}
		done += (long)bt->n;
		batch_free(bt);
	}
	print_message("%ld constraints: %ld never true, %ld always true\n", done, never, always);
	/* Random atoms near the bounds decide often; if the analysis stopped
	 * deciding, soundness alone would pass. */
	assert_true(never * 20 > done);
	assert_true(always * 20 > done);
	free(bt);
}

/* Exact answers on the examples and their near misses. */
static void test_known_answers(void **state)
{
	static const struct {
		const char *expr;
		unsigned want;
	} cases[] = {
		{ "amount > 500", CONSTRAINT_O_FALSE },
		{ "amount <= 1000", CONSTRAINT_O_TRUE },
		{ "amount > 50", CONSTRAINT_O_TRUE | CONSTRAINT_O_FALSE },
		{ "len(to) < 2", CONSTRAINT_O_FALSE },
		{ "priority == \"urgent\"", CONSTRAINT_O_FALSE | CONSTRAINT_O_ABSENT },
		{ "has(priority) && priority == \"urgent\"", CONSTRAINT_O_FALSE },
		{ "!has(fee) || fee <= 2.5", CONSTRAINT_O_TRUE },
		{ "!has(fee) || fee < 2.5", CONSTRAINT_O_TRUE | CONSTRAINT_O_FALSE },
		{ "fee <= 2.5", CONSTRAINT_O_TRUE | CONSTRAINT_O_ABSENT },
		{ "has(note) || note == \"x\"", CONSTRAINT_O_TRUE | CONSTRAINT_O_ABSENT },
		{ "priority in [\"low\", \"high\"] || !has(priority)", CONSTRAINT_O_TRUE | CONSTRAINT_O_ABSENT },
		{ "!has(priority) || priority in [\"low\", \"high\"]", CONSTRAINT_O_TRUE },
		{ "amount < 50 || amount >= 50", CONSTRAINT_O_TRUE | CONSTRAINT_O_FALSE },
		{ "len(items) <= 3 && has(to)", CONSTRAINT_O_TRUE },
	};
	struct batch *bt = calloc(1, sizeof(*bt));
	size_t i;

	(void)state;
	assert_non_null(bt);
	for (bt->n = 0; bt->n < sizeof(cases) / sizeof(cases[0]); bt->n++)
		snprintf(bt->exprs[bt->n], sizeof(bt->exprs[bt->n]), "%s", cases[bt->n].expr);
	batch_compile(bt);
	for (i = 0; i < bt->n; i++) {
		uint32_t tool;
		unsigned o = analysed(bt, i, &tool);

		if (o != cases[i].want)
			fail_msg("'%s': outcomes %u, want %u", cases[i].expr, o, cases[i].want);
	}
	batch_free(bt);
	free(bt);
}

int main(void)
{
#define T(f) cmocka_unit_test(f)
	const struct CMUnitTest tests[] = {
		T(test_known_answers),
		T(test_sound_on_random_constraints),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
