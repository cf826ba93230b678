/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_policy_parse.c - the flex/bison front end: shapes it builds, the
 * positions it reports, includes and their cycles.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "grammar/policy_parse.h"

struct fx {
	struct arena a;
	struct diags d;
	struct policy_srcs srcs;
	struct pol_file pf;
	char dir[64];
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	arena_init(&f->a);
	diags_init(&f->d);
	strcpy(f->dir, "/tmp/cordon-pp-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	if (system(cmd) != 0)
		return -1;
	policy_srcs_free(&f->srcs);
	diags_free(&f->d);
	arena_free(&f->a);
	free(f);
	return 0;
}

static const char *write_file(struct fx *f, const char *name, const char *text)
{
	static char path[128];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
	return path;
}

static void expect_in(const char *out, const char *want)
{
	if (strstr(out, want) == NULL)
		fail_msg("missing: %s\n--- got:\n%s", want, out);
}

/* Diagnostics as printed, for exact comparisons. */
static char *printed(struct fx *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	diags_print(&f->d, m);
	fclose(m);
	return buf;
}

static void test_rules_and_keywords(void **state)
{
	struct fx *f = *state;
	const char *p = write_file(f, "a.policy",
				   "# comment\n"
				   "default errno(EPERM);\n"
				   "allow { read, write, kill, }\n"
				   "errno(13) { ptrace }\n"
				   "allow socket(domain, type) { domain == AF_UNIX || (type & 0x80000) }\n");

	assert_int_equal(policy_parse_file(p, NULL, &f->a, &f->srcs, &f->pf, &f->d), 0);
	assert_int_equal(f->d.n, 0);
	assert_true(f->pf.has_default);
	assert_int_equal(f->pf.def.kind, POL_ERRNO);
	assert_string_equal(f->pf.def.errno_name, "EPERM");
	assert_int_equal(f->pf.nrules, 5);
	assert_string_equal(f->pf.rules[2].syscall, "kill"); /* a keyword as a name */
	assert_int_equal(f->pf.rules[3].action.kind, POL_ERRNO);
	assert_int_equal(f->pf.rules[3].action.errno_value, 13);
	assert_int_equal(f->pf.rules[4].nargs, 2);
	assert_string_equal(f->pf.rules[4].argnames[1], "type");
	assert_int_equal(f->pf.rules[4].cond->kind, AST_BINARY);
	assert_int_equal(f->pf.rules[4].cond->op, AST_OP_OR);
	assert_int_equal(f->pf.rules[4].cond->b->op, AST_OP_BAND);
	assert_int_equal(f->pf.rules[4].cond->b->b->ival, 0x80000);
	assert_int_equal(f->pf.rules[4].loc.line, 5);
	assert_int_equal(f->pf.rules[4].loc.col, 7);
}

static void test_syntax_errors_located(void **state)
{
	struct fx *f = *state;
	const char *p = write_file(f, "b.policy",
				   "allow { read write }\n"
				   "kill { ptrace };\n"
				   "errno(EPERM) { mount, \"x }\n"
				   "allow { 0644 }\n");
	char *out;

	assert_int_equal(policy_parse_file(p, NULL, &f->a, &f->srcs, &f->pf, &f->d), -1);
	out = printed(f);
	/* Every bad statement is reported, each at its own place. */
	expect_in(out, "b.policy:1:14: error: syntax error, unexpected name, expecting '}'");
	expect_in(out, "b.policy:2:16: error: syntax error, unexpected ';'");
	expect_in(out, "b.policy:3:23: error: unterminated string");
	free(out);
}

static void test_include_and_cycle(void **state)
{
	struct fx *f = *state;
	const char *p;
	char *out;

	write_file(f, "inc.policy", "kill { ptrace }\ninclude \"top.policy\";\n");
	p = write_file(f, "top.policy", "default kill;\ninclude \"inc.policy\";\nallow { read }\n");
	assert_int_equal(policy_parse_file(p, NULL, &f->a, &f->srcs, &f->pf, &f->d), -1);
	out = printed(f);
	expect_in(out, "inc.policy:2:9: error: include cycle: \"top.policy\" is already being read");
	free(out);
	/* Rules of both files were still read. */
	assert_int_equal(f->pf.nrules, 2);
}

static void test_two_defaults(void **state)
{
	struct fx *f = *state;
	const char *p;
	char *out;

	write_file(f, "d1.policy", "default errno(EPERM);\n");
	p = write_file(f, "d2.policy", "default kill;\ninclude \"d1.policy\";\n");
	assert_int_equal(policy_parse_file(p, NULL, &f->a, &f->srcs, &f->pf, &f->d), -1);
	out = printed(f);
	expect_in(out, "d1.policy:1:9: error: a second 'default': a policy has one default action");
	expect_in(out, "d2.policy:1:9: note: the first 'default' is here");
	free(out);
}

static void test_missing_include(void **state)
{
	struct fx *f = *state;
	const char *p = write_file(f, "m.policy", "include \"nope.policy\";\n");
	char *out;

	assert_int_equal(policy_parse_file(p, NULL, &f->a, &f->srcs, &f->pf, &f->d), -1);
	out = printed(f);
	expect_in(out, "m.policy:1:9: error: cannot find included file \"nope.policy\"");
	free(out);
}

static void test_expr_positions(void **state)
{
	struct fx *f = *state;
	struct src_file yaml;
	struct ast_node *e = NULL;
	const char *text = "len(to) <= 254 && amount in [1, 2.5] && !has(cc)";
	char *out;

	memset(&yaml, 0, sizeof(yaml));
	assert_int_equal(src_from_mem("t.yaml", "x\n      - \"len(to) <= 254\"\n", 26, 1 << 20, &yaml, &f->d), 0);
	assert_int_equal(policy_parse_expr(&yaml, 2, 10, text, strlen(text), &f->a, &e, &f->d), 0);
	assert_int_equal(e->op, AST_OP_AND);
	assert_int_equal(e->a->op, AST_OP_AND);
	assert_int_equal(e->a->a->a->kind, AST_CALL);
	assert_string_equal(e->a->a->a->str, "len");
	assert_int_equal(e->a->b->op, AST_OP_IN);
	assert_int_equal(e->a->b->b->n, 2);
	assert_int_equal(e->b->op, AST_OP_NOT);
	/* "log" and "default" are plain names in an expression. */
	assert_int_equal(policy_parse_expr(&yaml, 2, 10, "log == default", 14, &f->a, &e, &f->d), 0);
	/* An error points into the YAML line: column 10 + offset 8. */
	assert_int_equal(policy_parse_expr(&yaml, 2, 10, "len(to) <= ", 11, &f->a, &e, &f->d), -1);
	out = printed(f);
	expect_in(out, "t.yaml:2:21: error: syntax error, unexpected end of file");
	free(out);
	src_free(&yaml);
}

static void test_expr_depth_bounded(void **state)
{
	struct fx *f = *state;
	struct ast_node *e = NULL;
	size_t n = 5000, i;
	char *text = malloc(2 * n + 2);
	char *out;

	for (i = 0; i < n; i++)
		text[i] = '(';
	text[n] = '1';
	for (i = 0; i < n; i++)
		text[n + 1 + i] = ')';
	assert_int_equal(policy_parse_expr(NULL, 1, 1, text, 2 * n + 1, &f->a, &e, &f->d), -1);
	out = printed(f);
	expect_in(out, "expression nested too deeply");
	free(out);
	free(text);
}

/* An included file's rules stand where the include stands. */
static void test_include_rules_in_place(void **state)
{
	struct fx *f = *state;
	const char *p;

	write_file(f, "mid.policy", "kill { ptrace }\nerrno(EPERM) { mount }\n");
	p = write_file(f, "order.policy", "default kill;\nallow { read }\ninclude \"mid.policy\";\nallow { write }\n");
	assert_int_equal(policy_parse_file(p, NULL, &f->a, &f->srcs, &f->pf, &f->d), 0);
	assert_int_equal(f->pf.nrules, 4);
	assert_string_equal(f->pf.rules[0].syscall, "read");
	assert_string_equal(f->pf.rules[1].syscall, "ptrace");
	assert_true(f->pf.rules[1].included);
	assert_string_equal(f->pf.rules[2].syscall, "mount");
	assert_string_equal(f->pf.rules[3].syscall, "write");
	assert_false(f->pf.rules[3].included);
}

/*
 * A file reached twice is read once: by two includes (directly, through
 * another file, by a symbolic or a hard link), and by a profile and its
 * extra file parsed into the same srcs.  Reading it twice gave every rule
 * of base.policy twice, each a "conflicting rules" error.
 */
static void test_bug_include_same_file_twice(void **state)
{
	struct fx *f = *state;
	struct pol_file extra;
	char target[128], link1[128], link2[128];
	const char *p;

	write_file(f, "base2.policy", "kill { ptrace }\nerrno(EPERM) { mount }\n");
	write_file(f, "mid.policy", "include \"base2.policy\";\nallow { read }\n");
	snprintf(target, sizeof(target), "%s/base2.policy", f->dir);
	snprintf(link1, sizeof(link1), "%s/sym.policy", f->dir);
	snprintf(link2, sizeof(link2), "%s/hard.policy", f->dir);
	assert_int_equal(symlink(target, link1), 0);
	assert_int_equal(link(target, link2), 0);
	p = write_file(f, "top.policy",
		       "default kill;\n"
		       "include \"base2.policy\";\n"
		       "include \"mid.policy\";\n"
		       "include \"./base2.policy\";\n"
		       "include \"sym.policy\";\n"
		       "include \"hard.policy\";\n");
	assert_int_equal(policy_parse_file(p, NULL, &f->a, &f->srcs, &f->pf, &f->d), 0);
	assert_int_equal(f->d.n, 0);
	assert_int_equal(f->pf.nrules, 3); /* ptrace, mount, read */
	assert_string_equal(f->pf.rules[0].syscall, "ptrace");
	assert_string_equal(f->pf.rules[2].syscall, "read");
	/* The extra file shares srcs: its include of base2 is a no-op. */
	memset(&extra, 0, sizeof(extra));
	p = write_file(f, "extra.policy", "include \"base2.policy\";\nallow { write }\n");
	assert_int_equal(policy_parse_file(p, NULL, &f->a, &f->srcs, &extra, &f->d), 0);
	assert_int_equal(extra.nrules, 1);
	assert_string_equal(extra.rules[0].syscall, "write");
}

/* The hint offers only readings that exist: 09 is not octal, 00 is 0. */
static void test_bug_leading_zero_hints(void **state)
{
	struct fx *f = *state;
	const char *p = write_file(f, "z.policy", "errno(09) { mount }\nerrno(00) { chroot }\nerrno(0017) { acct }\n");
	char *out;

	assert_int_equal(policy_parse_file(p, NULL, &f->a, &f->srcs, &f->pf, &f->d), -1);
	out = printed(f);
	expect_in(out, "z.policy:1:7: error: '09': a leading zero is ambiguous; write 9\n");
	expect_in(out, "z.policy:2:7: error: '00': a leading zero is ambiguous; write 0\n");
	expect_in(out, "z.policy:3:7: error: '0017': a leading zero is ambiguous; write 0o17 or 17\n");
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rules_and_keywords, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_syntax_errors_located, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_include_and_cycle, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_two_defaults, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_missing_include, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_expr_positions, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_expr_depth_bounded, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_include_rules_in_place, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_bug_include_same_file_twice, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_bug_leading_zero_hints, fx_setup, fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
