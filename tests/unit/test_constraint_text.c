/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_constraint_text.c - the constraint decompiler
 * (runtime/client/constraint_text.c): what `cordonc describe` and the
 * Python stubs tell the model must be what the supervisor enforces.
 *
 * The property: for every expression, compile -> emit -> load (verified)
 * -> decompile -> compile gives identical bytecode, and decompiling that
 * again gives the same text (a fixed point).  Checked over
 *   - the expressions of tests/unit/test_constraints.c and docs/,
 *   - shapes chosen to be awkward (left- and right-nested chains, `in`
 *     chains that are and are not `in`, literals at their limits, strings
 *     with every escape),
 *   - thousands of random well-typed expressions (CORDON_RT_EXPRS, default
 *     5000), printed with random parenthesisation;
 * plus the exact text of a few (so the texts are readable, not only
 * faithful), code the decompiler must refuse, and a deep tree; and, over
 * every byte of a compiled CONSTRAINTS section set to other values (every
 * CORDON_MUTATION_STRIDE-th value, default 2), code that still loads (the
 * verifier accepts it) is either refused as text or its text compiles to
 * exactly that code.
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

#include "compiler/constraint_gen.h"
#include "runtime/constraint_eval.h"
#include "cordon/blob.h"
#include "grammar/policy_parse.h"
#include "runtime/client/constraint_text.h"

/* ---- one tool whose signature every expression is compiled against ----- */

/* Top-level params, sorted by name; then the nested specs they own. */
static const struct {
	const char *name;
	uint32_t type;
} sig_params[] = {
	{ "amount", CPOL_T_NUMBER },  { "count", CPOL_T_INTEGER }, { "flag", CPOL_T_BOOLEAN },
	{ "meta", CPOL_T_OBJECT },    { "name", CPOL_T_STRING },   { "note", CPOL_T_STRING },
	{ "priority", CPOL_T_STRING }, { "qty", CPOL_T_INTEGER },  { "subject", CPOL_T_STRING },
	{ "tags", CPOL_T_ARRAY },     { "to", CPOL_T_STRING },     { "unknowns", CPOL_T_ARRAY },
	/* owned: tags' items, unknowns' items, meta's one property */
	{ "", CPOL_T_STRING },        { "", CPOL_T_STRING },       { "x", CPOL_T_INTEGER },
};
#define NTOP 12u
#define NSIG (sizeof(sig_params) / sizeof(sig_params[0]))

static const char *const true_argv[] = { "/bin/true" };

static void sig_policy(struct cpol_policy *p)
{
	struct cpol_tool *t;

	policy_init(p);
	p->arch = CPOL_ARCH_X86_64;
	p->limits.timeout_ms = p->limits.max_file_bytes = p->limits.ws_delta_bytes = 1;
	p->limits.monitor_ms = p->limits.max_output_bytes = p->limits.max_result_bytes = 1;
	p->limits.max_code_bytes = p->limits.memory_bytes = p->limits.max_tool_request_bytes = 1;
	p->limits.pids = p->limits.open_files = 1;
	p->limits.mode = CPOL_MODE_LOCAL;
	p->limits.ws_entries = 1;
	p->params = arena_calloc(&p->arena, NSIG, sizeof(*p->params));
	t = p->tools = arena_calloc(&p->arena, 1, sizeof(*p->tools));
	assert_non_null(p->params);
	assert_non_null(t);
	p->nparams = NSIG;
	p->ntools = 1;
	for (uint32_t i = 0; i < NSIG; i++) {
		p->params[i].name = sig_params[i].name;
		p->params[i].type = sig_params[i].type;
		p->params[i].items = CPOL_NONE;
	}
	p->params[9].items = NTOP;      /* tags */
	p->params[11].items = NTOP + 1; /* unknowns */
	p->params[3].props = (struct cpol_range){ NTOP + 2, 1 };
	p->params[1].flags = p->params[4].flags = CPOL_PRM_F_REQUIRED;
	t->id = "t.x";
	t->description = "a tool";
	t->timeout_ms = 1000;
	t->memory_bytes = 1;
	t->pids = 1;
	t->exec.v = (const char **)true_argv;
	t->exec.n = 1;
	t->params = (struct cpol_range){ 0, NTOP };
}

/* ---- compile, load, decompile ------------------------------------------ */

struct rt {
	struct cpol_policy p; /* compiled into */
	struct cpol_policy q; /* loaded back */
	struct diags d;
	struct arena ast;
	struct src_file src;
	struct constraint_code code;
	uint8_t *blob;
};

static void rt_init(struct rt *r)
{
	memset(r, 0, sizeof(*r));
	sig_policy(&r->p);
	policy_init(&r->q);
	diags_init(&r->d);
	arena_init(&r->ast);
}

static void rt_free(struct rt *r)
{
	policy_free(&r->p);
	policy_free(&r->q);
	diags_free(&r->d);
	arena_free(&r->ast);
	constraint_gen_free(&r->code);
	free(r->blob);
}

/* Compile text as the tool's only constraint; -1 (nothing kept) when the
 * compiler refuses it. */
static int rt_compile(struct rt *r, const char *text)
{
	struct constraint_src s = { &r->d, &r->p.arena, "c", r->p.params, NTOP, NULL, 0, 0 };
	struct ast_node *e = NULL;

	r->src.path = (char *)"c.yaml";
	r->src.text = (char *)text;
	r->src.len = strlen(text);
	if (policy_parse_expr(&r->src, 1, 1, text, strlen(text), &r->ast, &e, &r->d) != 0 ||
	    constraint_gen_expr(&s, e, &r->code) != 0)
		return -1;
	return 0;
}

/* Emit and load (the loader verifies), so the decompiler reads what the
 * runtime reads. */
static void rt_load(struct rt *r)
{
	struct blob_error err;
	size_t len = 0;

	r->p.tools[0].constraints = (struct cpol_range){ 0, (uint32_t)r->code.n };
	assert_int_equal(constraint_gen_store(&r->code, &r->p), 0);
	assert_int_equal(blob_emit(&r->p, &r->blob, &len, &err), 0);
	if (blob_load(r->blob, len, BLOB_ANY_ARCH, &r->q, &err) != 0)
		fail_msg("loader refused compiled code: %s: %s", err.field, err.msg);
}

static void print_diags(const struct diags *d)
{
	for (size_t i = 0; i < d->n; i++)
		fprintf(stderr, "    %u:%u: %s\n", d->v[i].line, d->v[i].col, d->v[i].msg);
}

static int insn_equal(const struct cpol_insn *x, const struct cpol_insn *y)
{
	if (x->op != y->op || x->type != y->type || x->a != y->a || x->ival != y->ival ||
	    memcmp(&x->fval, &y->fval, sizeof(x->fval)) != 0 || x->len != y->len || x->list.n != y->list.n)
		return 0;
	if ((x->str == NULL) != (y->str == NULL) || (x->str != NULL && memcmp(x->str, y->str, x->len) != 0))
		return 0;
	for (uint32_t i = 0; i < x->list.n; i++)
		if (strcmp(x->list.v[i], y->list.v[i]) != 0)
			return 0;
	return 1;
}

/* The decompiled text of a compiled expression; NULL when text does not
 * compile (callers decide whether that is a failure). */
static char *decompile(const char *text)
{
	char err[256];
	struct rt r;
	char *out;

	rt_init(&r);
	if (rt_compile(&r, text) != 0) {
		rt_free(&r);
		return NULL;
	}
	rt_load(&r);
	out = constraint_text(&r.q, 0, 0, err, sizeof(err));
	if (out == NULL)
		fail_msg("cannot decompile %s: %s", text, err);
	rt_free(&r);
	return out;
}

/* The property.  Returns 0 when text did not compile in the first place. */
static int round_trip(const char *text)
{
	struct rt a, b;
	char err[256];
	char *t1, *t2;

	rt_init(&a);
	if (rt_compile(&a, text) != 0) {
		rt_free(&a);
		return 0;
	}
	rt_load(&a);
	t1 = constraint_text(&a.q, 0, 0, err, sizeof(err));
	if (t1 == NULL)
		fail_msg("cannot decompile '%s': %s", text, err);
	rt_init(&b);
	if (rt_compile(&b, t1) != 0) {
		print_diags(&b.d);
		fail_msg("'%s' decompiles to '%s', which does not compile", text, t1);
	}
	if (b.code.n != a.q.nconstraints) {
		fail_msg("'%s' -> '%s': %zu instructions, not %u", text, t1, b.code.n, a.q.nconstraints);
	}
	for (size_t i = 0; i < b.code.n; i++)
		if (!insn_equal(&b.code.v[i], &a.q.constraints[i]))
			fail_msg("'%s' -> '%s': instruction %zu differs (op %u / %u)", text, t1, i,
				 a.q.constraints[i].op, b.code.v[i].op);
	rt_load(&b);
	t2 = constraint_text(&b.q, 0, 0, err, sizeof(err));
	if (t2 == NULL || strcmp(t1, t2) != 0)
		fail_msg("'%s' -> '%s' -> '%s': not a fixed point", text, t1, t2 ? t2 : err);
	free(t1);
	free(t2);
	rt_free(&a);
	rt_free(&b);
	return 1;
}

/* ---- known expressions -------------------------------------------------- */

/* From tests/unit/test_constraints.c (operators and types, code shapes,
 * which-constraint), docs/constraints.md, docs/tools.md and the café
 * example. */
static const char *const known[] = {
	"count == 3", "count != 3", "count < 4 && count <= 3 && count > 2 && count >= 3", "count < 3",
	"count > -1 && -5 < count", "count > 9223372036854775807", "count > -9223372036854775808",
	"count == -9223372036854775808", "count == 0x10 && count == 0o20", "count < 3.5 && count > 2.5 && count == 3.0",
	"amount <= 500", "amount == count", "amount > -0.5 && amount < 0.5 && amount == -0.0", "amount >= 1e3",
	"name == \"abc\" && name != \"abd\"", "name == \"\"", "name == \"café\" && name != \"cafe\"", "name == note",
	"flag", "flag == false", "flag != true || !flag", "true", "false", "(count == 3) == (name == \"abc\")",
	"len(name) == 3", "len(\"abcd\") == 4", "len(tags) == 2", "len(tags) >= 1", "name in [\"x\", \"abc\"]",
	"count in [1, 2, 3]", "count in [1, 2, -3]", "count in [1, 2]", "count in [2.5, 3.0]", "amount in [1, 2.5]",
	"flag in [true]", "len(name) in [3]", "starts_with(name, \"ab\") && ends_with(name, \"bc\")",
	"starts_with(name, \"\") && ends_with(name, \"\")", "ends_with(name, \"@example.org\")", "has(qty)",
	"has(meta)", "!has(qty) || qty < 5", "has(qty) && qty < 5", "qty < 5 || true", "true || qty < 5",
	"false && qty < 5", "count > 1 && name == \"x\"", "count < amount", "count in [1, 2.5]",
	"!has(qty) || qty <= count", "len(name) < 4", "qty > 1",
	/* docs and the café */
	"ends_with(to, \"@example.org\")", "!has(amount) || amount <= 500", "priority != \"high\" || len(to) < 40",
	"len(to) <= 254 && len(subject) > 0", "has(amount) && amount <= 500", "len(unknowns) >= 1",
	"amount == 3", "count < 2.5",
};

static void test_known(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!round_trip(known[i]))
			fail_msg("'%s' does not compile", known[i]);
}

/* Shapes where a careless decompiler would change the tree. */
static const char *const awkward[] = {
	"flag || flag || flag", "flag || (flag || flag)", "(flag || flag) || flag", "flag && (flag && flag)",
	"(flag && flag) && flag", "flag || flag && flag", "(flag || flag) && flag", "flag && (flag || flag)",
	"!(flag && flag)", "!!flag", "!!!flag", "!(count < 3)", "!count < 3 || flag", "(!flag) == flag",
	"!(flag == flag)", "(flag == (flag == (flag == flag)))", "((flag == flag) == flag) == flag",
	"count == 1 || count == 2", "count == 1 || (count == 2 || count == 3)", "(count == 1 || count == 2) || count == 3",
	"count == 1 || qty == 2", "count == 1 || (count == 2 || qty == 3)", "qty == 1 || (count == 2 || count == 3)",
	"amount == 2 || amount == 3", "amount in [2, 3]", "amount in [2.0, 3]", "count in [2.5, 3, 4.0]",
	"1 == count || 2 == count", "count == 1 || count != 2", "count == 1 || count == qty",
	"name == \"a\" || name == \"b\"", "name in [\"a\"]", "flag in [true, false]", "flag == true || flag == false",
	"(flag || flag) in [true]", "len(name) in [1, 2] || len(note) in [1, 2]", "-1 in [-1]", "1 == 1.0",
	"2.5 > count", "len(name) == 2.0", "count == 0", "amount == 0.0", "amount == -0.0", "amount == 1e300",
	"amount == -1e-300", "amount == 0.1", "amount == 123456789012345678.0", "amount == 2.2250738585072014e-308",
	"amount == 1.7976931348623157e308", "amount == 4.9406564584124654e-300", "count == -9223372036854775808",
	"count == 9223372036854775807", "count in [-9223372036854775808, 9223372036854775807]",
	"name == \"say \\\"hi\\\"\"", "name == \"back\\\\slash\"", "name == \"tab\\there\\nnewline\"",
	"name in [\"\\\"\", \"\\\\\", \"\\n\", \"\\t\", \"'\", \"\"]", "starts_with(name, \"\\\"\\\"\\\"\")",
	"ends_with(\"lit\", \"t\")", "starts_with(name, \"é€𝄞\")", "len(\"é\") == 2", "has(tags) && len(tags) > 0",
	"has(meta) || !has(meta)",
};

static void test_awkward(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(awkward) / sizeof(awkward[0]); i++)
		if (!round_trip(awkward[i]))
			fail_msg("'%s' does not compile", awkward[i]);
}

/* What the model reads: the decompiled text of a few, exactly. */
static void test_texts(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "ends_with(to, \"@example.org\")", "ends_with(to, \"@example.org\")" },
		{ "!has(amount)||amount<=500", "!has(amount) || amount <= 500" },
		{ "count in [1, 2, 3]", "count in [1, 2, 3]" },
		{ "count == 1 || count == 2", "count in [1, 2]" },
		{ "count in [2.5, 3]", "count in [2.5, 3]" },
		{ "amount in [2, 3.5]", "amount in [2.0, 3.5]" },
		{ "amount == 2", "amount == 2" },
		{ "amount >= 1e3", "amount >= 1000.0" },
		{ "amount < 1e300", "amount < 1e+300" },
		{ "count == 0x10", "count == 16" },
		{ "flag || (flag || flag)", "flag || (flag || flag)" },
		{ "(flag || flag) || flag", "flag || flag || flag" },
		{ "flag && flag || flag", "flag && flag || flag" },
		{ "flag && (flag || flag)", "flag && (flag || flag)" },
		{ "!count < 3", "!(count < 3)" },
		{ "!(flag)", "!flag" },
		{ "(count == 3) == flag", "(count == 3) == flag" },
		{ "name == \"a\\\"b\\\\c\\nd\"", "name == \"a\\\"b\\\\c\\nd\"" },
		{ "priority in [\"low\", \"high\"]", "priority in [\"low\", \"high\"]" },
		{ "len(name) < 2.5", "len(name) < 2.5" },
		{ "amount == -0.0", "amount == -0.0" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *t = decompile(cases[i].in);

		if (t == NULL)
			fail_msg("'%s' does not compile", cases[i].in);
		if (strcmp(t, cases[i].out) != 0)
			fail_msg("'%s' reads back as '%s', want '%s'", cases[i].in, t, cases[i].out);
		free(t);
	}
}

/* ---- random expressions ------------------------------------------------- */

struct rng {
	uint64_t s;
};

static uint32_t pick(struct rng *r, uint32_t n)
{
	/* splitmix64: reproducible everywhere */
	uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return (uint32_t)((z ^ (z >> 31)) % n);
}

struct gen {
	struct rng r;
	char buf[8192];
	size_t n;
	int overflow;
};

__attribute__((format(printf, 2, 3))) static void put(struct gen *g, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (g->n >= sizeof(g->buf))
		return;
	va_start(ap, fmt);
	k = vsnprintf(g->buf + g->n, sizeof(g->buf) - g->n, fmt, ap);
	va_end(ap);
	if (k < 0 || (size_t)k >= sizeof(g->buf) - g->n) {
		g->overflow = 1;
		g->n = sizeof(g->buf);
		return;
	}
	g->n += (size_t)k;
}

static void gen_bool(struct gen *g, int depth);

static void gen_int_lit(struct gen *g)
{
	static const char *const lits[] = { "0", "1", "-1", "3", "42", "0x2a", "0o52", "-7", "1000",
					    "9007199254740993", "9223372036854775807", "-9223372036854775808" };

	put(g, "%s", lits[pick(&g->r, sizeof(lits) / sizeof(lits[0]))]);
}

static void gen_num_lit(struct gen *g)
{
	static const char *const lits[] = { "0.0", "-0.0", "0.5", "2.5", "-2.5", "1e3", "1E-3", "3.0", "0.1",
					    "1e300", "-1.5e-7", "9007199254740993.0" };
	double d;
	uint64_t bits;

	if (pick(&g->r, 3) != 0) {
		put(g, "%s", lits[pick(&g->r, sizeof(lits) / sizeof(lits[0]))]);
		return;
	}
	/* any normal double, written so that it reads back exactly */
	do {
		bits = ((uint64_t)pick(&g->r, 1u << 31) << 33) ^ ((uint64_t)pick(&g->r, 1u << 31) << 2) ^
		       pick(&g->r, 4);
		bits &= ~(1ull << 63);
		memcpy(&d, &bits, sizeof(d));
	} while (!isnormal(d));
	put(g, "%.17e", d);
}

static void gen_str_lit(struct gen *g)
{
	static const char *const lits[] = { "\"\"", "\"a\"", "\"abc\"", "\"\\\"\"", "\"\\\\\"", "\"\\n\\t\"",
					    "\"é\"", "\"'\"", "\"a b\"", "\"@example.org\"", "\"\\\"\\\"\\\"\"" };

	put(g, "%s", lits[pick(&g->r, sizeof(lits) / sizeof(lits[0]))]);
}

static void gen_str(struct gen *g)
{
	static const char *const names[] = { "name", "note", "priority", "subject", "to" };

	if (pick(&g->r, 3) == 0)
		gen_str_lit(g);
	else
		put(g, "%s", names[pick(&g->r, 5)]);
}

static void gen_int(struct gen *g)
{
	switch (pick(&g->r, 6)) {
	case 0: put(g, "count"); break;
	case 1: put(g, "qty"); break;
	case 2: gen_int_lit(g); break;
	case 3: put(g, "len(tags)"); break;
	case 4: put(g, "len(unknowns)"); break;
	default:
		put(g, "len(");
		gen_str(g);
		put(g, ")");
		break;
	}
}

static void gen_numeric(struct gen *g)
{
	switch (pick(&g->r, 4)) {
	case 0: put(g, "amount"); break;
	case 1: gen_num_lit(g); break;
	default: gen_int(g); break;
	}
}

/* A boolean operand where a comparison needs an atom. */
static void gen_bool_atom(struct gen *g, int depth)
{
	if (depth <= 0 || pick(&g->r, 2) == 0) {
		put(g, "%s", pick(&g->r, 2) ? "flag" : (pick(&g->r, 2) ? "true" : "false"));
		return;
	}
	put(g, "(");
	gen_bool(g, depth - 1);
	put(g, ")");
}

static void gen_in(struct gen *g, int depth)
{
	uint32_t k = 1 + pick(&g->r, 4);

	switch (pick(&g->r, 3)) {
	case 0:
		gen_str(g);
		put(g, " in [");
		for (uint32_t i = 0; i < k; i++) {
			put(g, "%s", i ? ", " : "");
			gen_str_lit(g);
		}
		break;
	case 1:
		gen_numeric(g);
		put(g, " in [");
		for (uint32_t i = 0; i < k; i++) {
			put(g, "%s", i ? ", " : "");
			if (pick(&g->r, 2))
				gen_int_lit(g);
			else
				gen_num_lit(g);
		}
		break;
	default:
		gen_bool_atom(g, depth);
		put(g, " in [");
		for (uint32_t i = 0; i < k; i++)
			put(g, "%s%s", i ? ", " : "", pick(&g->r, 2) ? "true" : "false");
		break;
	}
	put(g, "]");
}

static void gen_bool(struct gen *g, int depth)
{
	static const char *const cmp[] = { "==", "!=", "<", "<=", ">", ">=" };
	static const char *const has[] = { "amount", "meta", "qty", "tags", "flag", "note" };
	uint32_t k;

	switch (depth <= 0 ? pick(&g->r, 7) : pick(&g->r, 13)) {
	case 0: put(g, "flag"); break;
	case 1: put(g, "%s", pick(&g->r, 2) ? "true" : "false"); break;
	case 2: put(g, "has(%s)", has[pick(&g->r, 6)]); break;
	case 3:
		gen_numeric(g);
		put(g, " %s ", cmp[pick(&g->r, 6)]);
		gen_numeric(g);
		break;
	case 4:
		gen_str(g);
		put(g, " %s ", pick(&g->r, 2) ? "==" : "!=");
		gen_str(g);
		break;
	case 5:
		put(g, "%s(", pick(&g->r, 2) ? "starts_with" : "ends_with");
		gen_str(g);
		put(g, ", ");
		gen_str_lit(g);
		put(g, ")");
		break;
	case 6: gen_in(g, depth - 1); break;
	case 7:
		gen_bool_atom(g, depth - 1);
		put(g, " %s ", pick(&g->r, 2) ? "==" : "!=");
		gen_bool_atom(g, depth - 1);
		break;
	case 8:
		put(g, "!");
		gen_bool_atom(g, depth - 1);
		break;
	case 9:
		/* a flat chain: the parser nests it to the left */
		k = 2 + pick(&g->r, 3);
		for (uint32_t i = 0; i < k; i++) {
			put(g, "%s", i ? (pick(&g->r, 2) ? " && " : " || ") : "");
			gen_bool_atom(g, depth - 1);
		}
		break;
	default:
		/* nested explicitly, either way */
		put(g, "(");
		gen_bool(g, depth - 1);
		put(g, ") %s (", pick(&g->r, 2) ? "&&" : "||");
		gen_bool(g, depth - 1);
		put(g, ")");
		break;
	}
}

static void test_random(void **state)
{
	const char *env = getenv("CORDON_RT_EXPRS");
	long want = env ? strtol(env, NULL, 10) : 5000;
	struct gen g;
	long compiled = 0;

	(void)state;
	memset(&g, 0, sizeof(g));
	g.r.s = 0x5eed1234abcdull;
	for (long i = 0; i < want; i++) {
		g.n = 0;
		g.overflow = 0;
		gen_bool(&g, 1 + (int)pick(&g.r, 5));
		if (g.overflow)
			continue;
		g.buf[g.n] = '\0';
		compiled += round_trip(g.buf);
	}
	/* The generator writes well-typed text; only the stack and size limits
	 * refuse some.  Most must have been tried for real. */
	fprintf(stderr, "    %ld of %ld random expressions compiled and round-tripped\n", compiled, want);
	assert_true(compiled * 10 >= want * 9);
}

/* ---- limits and refusals ----------------------------------------------- */

/* A long left-nested chain (a deep tree on a shallow stack; lines hold at
 * most 4096 columns) and the longest `in` chain the language has. */
static void test_deep(void **state)
{
	static char text[16384];
	size_t n = 0;
	char *t;

	(void)state;
	for (int i = 0; i < 500; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%sflag", i ? " && " : "");
	assert_true(round_trip(text));
	n = (size_t)snprintf(text, sizeof(text), "count in [");
	for (int i = 0; i < 256; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s%d", i ? ", " : "", i);
	snprintf(text + n, sizeof(text) - n, "]");
	assert_true(round_trip(text));
	t = decompile(text);
	assert_non_null(t);
	assert_string_equal(t, text);
	free(t);
	/* `in` within `in`, nested: every level emits its operand again */
	snprintf(text, sizeof(text), "(((count in [1, 2]) in [true, false]) in [true]) in [false, true]");
	assert_true(round_trip(text));
}

#define I(op_, type_, a_) ((struct cpol_insn){ .op = (op_), .type = (type_), .a = (uint32_t)(a_) })

/* Code the compiler never writes: refused with a reason, never a crash.
 * (Unverified, in memory: the decompiler checks what it relies on.) */
static void test_refusals(void **state)
{
	static const struct {
		struct cpol_insn code[6];
		uint32_t n;
		const char *msg;
	} cases[] = {
		{ { I(CPOL_OP_BOOL, 0, 1), I(CPOL_OP_JF, 0, 0), I(CPOL_OP_BOOL, 0, 1), I(CPOL_OP_RET, 0, 0) }, 4,
		  "does not end inside" },
		{ { I(CPOL_OP_BOOL, 0, 1), I(CPOL_OP_JT, 0, 5), I(CPOL_OP_BOOL, 0, 1), I(CPOL_OP_RET, 0, 0) }, 4,
		  "does not end inside" },
		{ { I(CPOL_OP_BOOL, 0, 1), I(CPOL_OP_JF, 0, 2), I(CPOL_OP_BOOL, 0, 1), I(CPOL_OP_BOOL, 0, 1),
		    I(CPOL_OP_RET, 0, 0) },
		  5, "not the end of an && or || operand" },
		{ { I(CPOL_OP_BOOL, 0, 1), I(CPOL_OP_JF, 0, 1), I(CPOL_OP_NOT, 0, 0), I(CPOL_OP_RET, 0, 0) }, 4,
		  "takes an operand" },
		{ { I(CPOL_OP_EQ, CPOL_T_INTEGER, 0), I(CPOL_OP_RET, 0, 0) }, 2, "takes an operand" },
		{ { I(CPOL_OP_BOOL, 0, 1), I(CPOL_OP_BOOL, 0, 1), I(CPOL_OP_RET, 0, 0) }, 3, "leaves 2 values" },
		{ { I(CPOL_OP_HAS, 0, NTOP), I(CPOL_OP_RET, 0, 0) }, 2, "names parameter" },
		{ { I(99, 0, 0), I(CPOL_OP_RET, 0, 0) }, 2, "has op 99" },
	};
	struct cpol_policy p;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sig_policy(&p);
		p.constraints = (struct cpol_insn *)cases[i].code;
		p.nconstraints = cases[i].n;
		p.tools[0].constraints = (struct cpol_range){ 0, cases[i].n };
		err[0] = '\0';
		if (constraint_text(&p, 0, 0, err, sizeof(err)) != NULL)
			fail_msg("case %zu decompiled", i);
		if (strstr(err, cases[i].msg) == NULL)
			fail_msg("case %zu: '%s', want '%s'", i, err, cases[i].msg);
		p.constraints = NULL;
		policy_free(&p);
	}
	/* values the language cannot write: a subnormal, a string with CR */
	{
		struct cpol_insn v[4] = { I(CPOL_OP_PARAM, CPOL_T_NUMBER, 0), I(CPOL_OP_NUM, 0, 0),
					  I(CPOL_OP_EQ, CPOL_T_NUMBER, 0), I(CPOL_OP_RET, 0, 0) };

		v[1].fval = 5e-324;
		for (int round = 0; round < 2; round++) {
			if (round == 1) {
				v[0] = I(CPOL_OP_PARAM, CPOL_T_STRING, 4);
				v[1] = I(CPOL_OP_STR, 0, 0);
				v[1].str = "a\rb";
				v[1].len = 3;
				v[2] = I(CPOL_OP_EQ, CPOL_T_STRING, 0);
			}
			sig_policy(&p);
			p.constraints = v;
			p.nconstraints = 4;
			p.tools[0].constraints = (struct cpol_range){ 0, 4 };
			assert_null(constraint_text(&p, 0, 0, err, sizeof(err)));
			assert_non_null(strstr(err, "instruction 1 holds a value the constraint language cannot write"));
			p.constraints = NULL;
			policy_free(&p);
		}
	}
	/* no such constraint, no such tool */
	sig_policy(&p);
	p.constraints = (struct cpol_insn *)cases[5].code;
	p.nconstraints = 3;
	p.tools[0].constraints = (struct cpol_range){ 0, 3 };
	assert_null(constraint_text(&p, 0, 1, err, sizeof(err)));
	assert_non_null(strstr(err, "has no constraint 1"));
	assert_null(constraint_text(&p, 1, 0, err, sizeof(err)));
	assert_non_null(strstr(err, "no tool 1"));
	p.constraints = NULL;
	policy_free(&p);
}

/* Several constraints of one tool: each by its index. */
static void test_several(void **state)
{
	static const char *const texts[] = { "count > 0", "!has(qty) || qty <= count", "name in [\"a\", \"b\"]" };
	struct rt r;
	char err[256];

	(void)state;
	rt_init(&r);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(rt_compile(&r, texts[i]), 0);
	rt_load(&r);
	for (uint32_t k = 0; k < 3; k++) {
		char *t = constraint_text(&r.q, 0, k, err, sizeof(err));

		assert_non_null(t);
		assert_string_equal(t, texts[k]);
		free(t);
	}
	assert_null(constraint_text(&r.q, 0, 3, err, sizeof(err)));
	rt_free(&r);
}

/* ---- mutated code that still verifies ----------------------------------- */

static const char *const mut_texts[] = {
	"count > 1 && name == \"abc\" || !has(qty)",
	"count in [1, 2.5, -3] && amount >= count",
	"name in [\"abc\", \"x\"] || starts_with(name, \"a\") && ends_with(note, \"c\")",
	"len(tags) <= len(name) && flag != true || flag == false",
	"(qty == 2) == (-0.5 < amount) && (flag || flag && flag)",
};

/* Instructions [*first, ret] of program k of tool 0; the RET's index. */
static uint32_t program_of(const struct cpol_policy *q, uint32_t k, uint32_t *first)
{
	uint32_t seen = 0, i;

	*first = q->tools[0].constraints.first;
	for (i = *first; i < q->tools[0].constraints.first + q->tools[0].constraints.count; i++) {
		if (q->constraints[i].op != CPOL_OP_RET)
			continue;
		if (seen++ == k)
			return i;
		*first = i + 1;
	}
	fail_msg("no program %u", k);
	return 0;
}

/* What the mutated program k decompiles to must compile back to it. */
static int check_mutant(const struct cpol_policy *q, uint32_t k, size_t off, unsigned v)
{
	char err[256];
	char *text = constraint_text(q, 0, k, err, sizeof(err));
	uint32_t first, ret;
	struct rt r;
	int shown = text != NULL;

	if (text == NULL)
		return 0;
	ret = program_of(q, k, &first);
	rt_init(&r);
	if (rt_compile(&r, text) != 0) {
		print_diags(&r.d);
		fail_msg("byte %zu = 0x%02x: program %u reads '%s', which does not compile", off, v, k, text);
	} else {
		if (r.code.n != ret - first + 1)
			fail_msg("byte %zu = 0x%02x: '%s' compiles to %zu instructions, not %u", off, v, text, r.code.n,
				 ret - first + 1);
		for (uint32_t i = 0; i < r.code.n; i++)
			if (!insn_equal(&r.code.v[i], &q->constraints[first + i]))
				fail_msg("byte %zu = 0x%02x: '%s' differs at instruction %u", off, v, text, i);
	}
	rt_free(&r);
	free(text);
	return shown;
}

static void test_mutations(void **state)
{
	const char *env = getenv("CORDON_MUTATION_STRIDE");
	unsigned stride = env != NULL && atoi(env) > 0 ? (unsigned)atoi(env) : 2;
	unsigned loads = 0, accepted = 0, shown = 0, refused = 0;
	struct timespec t0, t1;
	struct rt r;
	size_t cs, ce, sig_off, len;
	uint8_t *b;

	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rt_init(&r);
	for (size_t i = 0; i < sizeof(mut_texts) / sizeof(mut_texts[0]); i++)
		assert_int_equal(rt_compile(&r, mut_texts[i]), 0);
	rt_load(&r);
	sig_off = (size_t)blob_sig_offset(r.blob);
	len = sig_off + CPOL_SIGNATURE_BYTES;
	cs = 0;
	for (uint32_t i = 0; i < CPOL_SEC_COUNT; i++) {
		const uint8_t *e = r.blob + CPOL_HEADER_SIZE + i * CPOL_SEC_ENT_BYTES;
		uint64_t off = 0;

		if (e[CPOL_SEC_ENT_ID] != CPOL_SEC_CONSTRAINTS)
			continue;
		for (int j = 7; j >= 0; j--)
			off = off << 8 | e[CPOL_SEC_ENT_OFFSET + j];
		cs = (size_t)off;
	}
	ce = cs + (size_t)r.q.nconstraints * CPOL_INSN_BYTES;
	assert_true(cs > 0 && ce <= sig_off);
	b = malloc(len);
	assert_non_null(b);
	memcpy(b, r.blob, len);
	for (size_t off = cs; off < ce; off++) {
		for (unsigned v = 0; v < 256; v += stride) {
			struct cpol_policy q;
			struct blob_error err;

			if (v == r.blob[off])
				continue;
			b[off] = (uint8_t)v;
			blob_hash(b, sig_off, b + CPOL_HDR_SHA256);
			loads++;
			if (blob_load(b, len, BLOB_ANY_ARCH, &q, &err) == 0) {
				accepted++;
				for (uint32_t k = 0; k < constraint_count(&q, 0); k++) {
					int ok = check_mutant(&q, k, off, v);

					shown += (unsigned)ok;
					refused += (unsigned)!ok;
				}
			}
			policy_free(&q);
			b[off] = r.blob[off];
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(stderr, "    mutations: %u loads, %u verified; programs shown %u, refused as text %u; %.2f s\n", loads,
		accepted, shown, refused, (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	assert_true(accepted > 0 && shown > 0);
	free(b);
	rt_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known),    cmocka_unit_test(test_awkward), cmocka_unit_test(test_texts),
		cmocka_unit_test(test_random),   cmocka_unit_test(test_deep),    cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_several),  cmocka_unit_test(test_mutations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
