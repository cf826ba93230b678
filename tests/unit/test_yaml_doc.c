/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_yaml_doc.c - the YAML loader: tree shape, positions, scalar
 * resolution, and every refusal with the exact place it is reported.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compiler/yaml_doc.h"

struct parsed {
	struct diags d;
	struct src_file f;
	struct ydoc doc;
	int rc;
};

static void parse_len(struct parsed *p, const char *text, size_t len)
{
	diags_init(&p->d);
	assert_int_equal(src_from_mem("t.yaml", text, len, YDOC_MAX_BYTES, &p->f, &p->d), 0);
	p->rc = ydoc_parse(&p->f, &p->doc, &p->d);
}

static void parse(struct parsed *p, const char *text)
{
	parse_len(p, text, strlen(text));
}

static void done(struct parsed *p)
{
	ydoc_free(&p->doc);
	diags_free(&p->d);
	src_free(&p->f);
}

static void expect_diag(const struct parsed *p, size_t i, enum diag_sev sev, uint32_t line, uint32_t col,
			const char *msg)
{
	if (i >= p->d.n)
		fail_msg("diagnostic %zu missing (have %zu)", i, p->d.n);
	assert_int_equal(p->d.v[i].sev, sev);
	assert_string_equal(p->d.v[i].msg, msg);
	if (p->d.v[i].line != line || p->d.v[i].col != col)
		fail_msg("'%s' at %u:%u, want %u:%u", msg, p->d.v[i].line, p->d.v[i].col, line, col);
}

/* Exactly one error, this one. */
static void expect_error(const char *text, uint32_t line, uint32_t col, const char *msg)
{
	struct parsed p;

	parse(&p, text);
	assert_int_equal(p.rc, -1);
	if (p.d.n != 1)
		fail_msg("'%s': %zu diagnostics, want 1 (first: %s)", text, p.d.n, p.d.n ? p.d.v[0].msg : "-");
	expect_diag(&p, 0, DIAG_ERROR, line, col, msg);
	done(&p);
}

static void test_tree_and_positions(void **state)
{
	struct parsed p;
	const struct ynode *r, *list, *v;

	(void)state;
	parse(&p, "app: demo\n"
		  "limits:\n"
		  "  timeout: 30s\n"
		  "list:\n"
		  "  - one\n"
		  "  - \"two\"\n"
		  "  - [3, {k: v}]\n");
	assert_int_equal(p.rc, 0);
	assert_int_equal(p.d.n, 0);
	r = p.doc.root;
	assert_non_null(r);
	assert_int_equal(r->kind, YN_MAP);
	assert_int_equal(r->n, 3);
	assert_string_equal(r->keys[0]->str, "app");
	assert_string_equal(r->keys[1]->str, "limits");
	assert_string_equal(r->keys[2]->str, "list");
	assert_int_equal(r->line, 1);
	assert_int_equal(r->col, 1);

	v = ymap_get(ymap_get(r, "limits"), "timeout");
	assert_non_null(v);
	assert_string_equal(v->str, "30s");
	assert_int_equal(v->len, 3);
	assert_int_equal(v->line, 3);
	assert_int_equal(v->col, 12);
	v = ymap_key(ymap_get(r, "limits"), "timeout");
	assert_int_equal(v->line, 3);
	assert_int_equal(v->col, 3);
	assert_null(ymap_get(r, "missing"));
	assert_null(ymap_get(r, "ap"));
	assert_null(ymap_get(v, "x")); /* not a mapping */
	assert_null(ymap_key(NULL, "x"));

	list = ymap_get(r, "list");
	assert_int_equal(list->kind, YN_SEQ);
	assert_int_equal(list->n, 3);
	assert_int_equal(list->line, 5);
	assert_int_equal(list->col, 3);
	assert_string_equal(list->vals[0]->str, "one");
	assert_int_equal(list->vals[0]->plain, 1);
	assert_string_equal(list->vals[1]->str, "two");
	assert_int_equal(list->vals[1]->plain, 0);
	assert_int_equal(list->vals[1]->col, 5);
	v = list->vals[2];
	assert_int_equal(v->kind, YN_SEQ);
	assert_int_equal(v->n, 2);
	assert_int_equal(v->vals[0]->resolve, YR_INT);
	assert_string_equal(ymap_get(v->vals[1], "k")->str, "v");
	assert_int_equal(v->vals[1]->line, 7);
	assert_int_equal(v->vals[1]->col, 9);

	assert_string_equal(ynode_kind_name(r), "mapping");
	assert_string_equal(ynode_kind_name(list), "sequence");
	assert_string_equal(ynode_kind_name(list->vals[0]), "string");
	done(&p);
}

struct rcase {
	const char *yaml;
	enum yresolve want;
	const char *kind;
};

static void test_scalar_resolution(void **state)
{
	static const struct rcase cases[] = {
		{ "v: x", YR_STRING, "string" },
		{ "v:", YR_NULL, "null" },
		{ "v: ~", YR_NULL, "null" },
		{ "v: null", YR_NULL, "null" },
		{ "v: Null", YR_NULL, "null" },
		{ "v: NULL", YR_NULL, "null" },
		{ "v: nULL", YR_STRING, "string" },
		{ "v: true", YR_BOOL, "boolean" },
		{ "v: False", YR_BOOL, "boolean" },
		{ "v: TRUE", YR_BOOL, "boolean" },
		{ "v: yes", YR_BOOL, "boolean" },
		{ "v: No", YR_BOOL, "boolean" },
		{ "v: ON", YR_BOOL, "boolean" },
		{ "v: off", YR_BOOL, "boolean" },
		{ "v: y", YR_BOOL, "boolean" },
		{ "v: N", YR_BOOL, "boolean" },
		{ "v: tRue", YR_STRING, "string" },
		{ "v: yess", YR_STRING, "string" },
		{ "v: 0", YR_INT, "integer" },
		{ "v: -12", YR_INT, "integer" },
		{ "v: +7", YR_INT, "integer" },
		{ "v: 0644", YR_INT, "integer" },
		{ "v: 0x1F", YR_INT, "integer" },
		{ "v: 0o17", YR_INT, "integer" },
		{ "v: 0o19", YR_STRING, "string" },
		{ "v: 0x", YR_STRING, "string" },
		{ "v: 1.5", YR_FLOAT, "number" },
		{ "v: -.5", YR_FLOAT, "number" },
		{ "v: 1.", YR_FLOAT, "number" },
		{ "v: 1e3", YR_FLOAT, "number" },
		{ "v: 2.5E-3", YR_FLOAT, "number" },
		{ "v: .inf", YR_FLOAT, "number" },
		{ "v: -.Inf", YR_FLOAT, "number" },
		{ "v: .NaN", YR_FLOAT, "number" },
		{ "v: .", YR_STRING, "string" },
		{ "v: 1e", YR_STRING, "string" },
		{ "v: 64k", YR_STRING, "string" },
		{ "v: 1.2.3", YR_STRING, "string" },
		{ "v: 30s", YR_STRING, "string" },
		{ "v: \"true\"", YR_STRING, "string" },
		{ "v: '12'", YR_STRING, "string" },
		{ "v: ''", YR_STRING, "string" },
		{ "v: |\n  yes\n", YR_STRING, "string" },
		{ "v: >\n  1\n", YR_STRING, "string" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct parsed p;
		const struct ynode *v;

		parse(&p, cases[i].yaml);
		assert_int_equal(p.rc, 0);
		v = ymap_get(p.doc.root, "v");
		assert_non_null(v);
		if (v->resolve != cases[i].want)
			fail_msg("'%s': resolved %d, want %d", cases[i].yaml, v->resolve, cases[i].want);
		assert_string_equal(ynode_kind_name(v), cases[i].kind);
		if (cases[i].want != YR_STRING)
			assert_int_equal(v->plain, 1);
		done(&p);
	}
}

static void test_duplicate_key_names_both_places(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, "a: 1\n"
		  "b:\n"
		  "  x: 1\n"
		  "  x: 2\n"
		  "a: 3\n"
		  "c: 4\n"
		  "a: 5\n");
	assert_int_equal(p.rc, -1);
	assert_int_equal(p.d.n, 6);
	expect_diag(&p, 0, DIAG_ERROR, 4, 3, "duplicate key 'x'");
	expect_diag(&p, 1, DIAG_NOTE, 3, 3, "previous definition of 'x' is here");
	expect_diag(&p, 2, DIAG_ERROR, 5, 1, "duplicate key 'a'");
	expect_diag(&p, 3, DIAG_NOTE, 1, 1, "previous definition of 'a' is here");
	expect_diag(&p, 4, DIAG_ERROR, 7, 1, "duplicate key 'a'");
	expect_diag(&p, 5, DIAG_NOTE, 1, 1, "previous definition of 'a' is here");
	/* The tree keeps the first definition for lookups. */
	assert_string_equal(ymap_get(p.doc.root, "a")->str, "1");
	done(&p);
}

/* Equal text is the same key however it was quoted; different text is
 * not, even when a prefix matches. */
static void test_duplicate_key_by_value(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, "{ab: 1, \"ab\": 2}");
	assert_int_equal(p.d.n, 2);
	expect_diag(&p, 0, DIAG_ERROR, 1, 9, "duplicate key 'ab'");
	expect_diag(&p, 1, DIAG_NOTE, 1, 2, "previous definition of 'ab' is here");
	done(&p);
	parse(&p, "{ab: 1, a: 2, abc: 3, \"a\\0\": 4}");
	assert_int_equal(p.d.n, 1); /* only the NUL is refused */
	expect_diag(&p, 0, DIAG_ERROR, 1, 23, "NUL character in string");
	done(&p);
}

static void test_refused_features(void **state)
{
	(void)state;
	expect_error("a: &x 1\n", 1, 4, "YAML anchors are not allowed");
	expect_error("a: 1\nb: *x\n", 2, 4, "YAML aliases are not allowed");
	expect_error("a: !!str 1\n", 1, 4, "YAML tags are not allowed");
	expect_error("a: !foo 1\n", 1, 4, "YAML tags are not allowed");
	expect_error("a: ! x\n", 1, 4, "YAML tags are not allowed");
	expect_error("a: !!map {}\n", 1, 4, "YAML tags are not allowed");
	expect_error("a: &s [1]\n", 1, 4, "YAML anchors are not allowed");
	expect_error("? [k]\n: v\n", 1, 3, "mapping keys must be plain strings");
	expect_error("{? {k: v} : 1}\n", 1, 4, "mapping keys must be plain strings");
	expect_error("a: \"x\\0y\"\n", 1, 4, "NUL character in string");
}

/* Refusals that libyaml can parse past are all reported, in file order. */
static void test_keeps_going_after_refusals(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, "a: &x 1\nb: !t 2\nc: *x\nd: [*x]\ne: ok\n");
	assert_int_equal(p.rc, -1);
	assert_int_equal(p.d.n, 4);
	expect_diag(&p, 0, DIAG_ERROR, 1, 4, "YAML anchors are not allowed");
	expect_diag(&p, 1, DIAG_ERROR, 2, 4, "YAML tags are not allowed");
	expect_diag(&p, 2, DIAG_ERROR, 3, 4, "YAML aliases are not allowed");
	expect_diag(&p, 3, DIAG_ERROR, 4, 5, "YAML aliases are not allowed");
	/* The pair with an alias value is left out, never a NULL value. */
	assert_null(ymap_get(p.doc.root, "c"));
	assert_int_equal(ymap_get(p.doc.root, "d")->n, 0);
	assert_string_equal(ymap_get(p.doc.root, "e")->str, "ok");
	done(&p);
}

/* n nested flow sequences around a scalar: "[[[1]]]". */
static char *nested(size_t n)
{
	char *s = malloc(2 * n + 2);
	size_t i;

	assert_non_null(s);
	for (i = 0; i < n; i++) {
		s[i] = '[';
		s[n + 1 + i] = ']';
	}
	s[n] = '1';
	s[2 * n + 1] = '\0';
	return s;
}

static void test_nesting_limit(void **state)
{
	struct parsed p;
	char *s;

	(void)state;
	s = nested(YDOC_MAX_DEPTH);
	parse(&p, s);
	assert_int_equal(p.rc, 0);
	done(&p);
	free(s);

	s = nested(YDOC_MAX_DEPTH + 1);
	expect_error(s, 1, YDOC_MAX_DEPTH + 1, "nesting is deeper than 32 levels");
	free(s);
}

/* After a too-deep part, parsing goes on and later errors still show. */
static void test_nesting_limit_keeps_going(void **state)
{
	char text[256];
	struct parsed p;
	char *s = nested(YDOC_MAX_DEPTH);

	(void)state;
	snprintf(text, sizeof(text), "a: %s\nb: 1\nb: 2\n", s);
	parse(&p, text);
	assert_int_equal(p.rc, -1);
	assert_int_equal(p.d.n, 3);
	expect_diag(&p, 0, DIAG_ERROR, 1, 4 + YDOC_MAX_DEPTH - 1, "nesting is deeper than 32 levels");
	expect_diag(&p, 1, DIAG_ERROR, 3, 1, "duplicate key 'b'");
	expect_diag(&p, 2, DIAG_NOTE, 2, 1, "previous definition of 'b' is here");
	done(&p);
	free(s);
}

/* Block style counts the same way, and absurd depth stops at once (libyaml
 * slows down with every open flow level, so the loader must not feed it a
 * megabyte of them). */
static void test_nesting_block_and_absurd(void **state)
{
	size_t n = 1024 * 1024 - 1;
	struct parsed p;
	char *s = malloc(n + 1);
	size_t i;

	(void)state;
	assert_non_null(s);
	for (i = 0; i < 40 * 2; i++)
		s[i] = "- "[i % 2];
	s[i] = '\0';
	expect_error(s, 1, 2 * YDOC_MAX_DEPTH + 1, "nesting is deeper than 32 levels");

	memset(s, '[', n);
	s[n] = '\0';
	parse(&p, s);
	assert_int_equal(p.rc, -1);
	assert_int_equal(p.d.n, 1);
	expect_diag(&p, 0, DIAG_ERROR, 1, YDOC_MAX_DEPTH + 1, "nesting is deeper than 32 levels");
	done(&p);
	free(s);
}

static char *flow_items(size_t items)
{
	char *s = malloc(2 * items + 3);
	size_t i, k = 0;

	assert_non_null(s);
	s[k++] = '[';
	for (i = 0; i < items; i++) {
		s[k++] = '1';
		s[k++] = ',';
	}
	s[k++] = ']';
	s[k] = '\0';
	return s;
}

static void test_node_limit(void **state)
{
	struct parsed p;
	char *s;

	(void)state;
	/* The sequence itself plus its items: exactly at the limit. */
	s = flow_items(YDOC_MAX_NODES - 1);
	parse(&p, s);
	assert_int_equal(p.rc, 0);
	assert_int_equal(p.doc.root->n, YDOC_MAX_NODES - 1);
	done(&p);
	free(s);

	s = flow_items(YDOC_MAX_NODES);
	expect_error(s, 1, 2 * YDOC_MAX_NODES, "more than 100000 YAML nodes");
	free(s);
}

static void test_one_document_only(void **state)
{
	(void)state;
	expect_error("a: 1\n---\nb: 2\n", 2, 1, "only one YAML document is allowed");
	expect_error("--- {a: 1}\n--- {b: 2}\n", 2, 1, "only one YAML document is allowed");
	expect_error("a: 1\n...\n---\nb: 2\n", 3, 1, "only one YAML document is allowed");
}

static void test_single_document_markers_ok(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, "%YAML 1.1\n---\na: 1\n...\n# trailing comment\n");
	assert_int_equal(p.rc, 0);
	assert_string_equal(ymap_get(p.doc.root, "a")->str, "1");
	done(&p);
}

static void test_empty_document(void **state)
{
	static const char *const empties[] = { "", "\n\n", "# only a comment\n", "---\n", "--- # c\n...\n",
					       "   \n  # c\n" };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(empties) / sizeof(empties[0]); i++) {
		struct parsed p;

		parse(&p, empties[i]);
		assert_int_equal(p.rc, -1);
		assert_int_equal(p.d.n, 1);
		expect_diag(&p, 0, DIAG_ERROR, 1, 1, "empty document");
		assert_null(p.doc.root);
		done(&p);
	}
}

static void test_syntax_errors(void **state)
{
	(void)state;
	expect_error("a: b: c\n", 1, 5, "YAML syntax error: mapping values are not allowed in this context");
	expect_error("a:\n  - b\n - c\n", 3, 2,
		     "YAML syntax error: did not find expected key (while parsing a block mapping at line 1, column 1)");
	/* libyaml puts end-of-stream errors on the line after the last; with
	 * no final newline that line does not exist, so the position is the
	 * end of the text instead. */
	expect_error("a: [1, 2", 1, 9,
		     "YAML syntax error: did not find expected ',' or ']' "
		     "(while parsing a flow sequence at line 1, column 4)");
	expect_error("a: [1, 2\n", 2, 1,
		     "YAML syntax error: did not find expected ',' or ']' "
		     "(while parsing a flow sequence at line 1, column 4)");
	expect_error("a: \"open\n", 2, 1,
		     "YAML syntax error: found unexpected end of stream "
		     "(while scanning a quoted scalar at line 1, column 4)");
	/* Columns count code points; tabs are one column. */
	expect_error("k: \t\"\xC3\xA9\" : x\n", 1, 9,
		     "YAML syntax error: mapping values are not allowed in this context");
	/* A leading BOM is not a column. */
	expect_error("\xEF\xBB\xBF" "a: b: c\n", 1, 5,
		     "YAML syntax error: mapping values are not allowed in this context");
	/* Lines end at CR and CR LF too. */
	expect_error("a: 1\r\nb: 2\rc: d: e\r\n", 3, 5,
		     "YAML syntax error: mapping values are not allowed in this context");
	/* Reader errors only have a byte offset. */
	expect_error("a: 1\nb: \xC3\xA9\x01\n", 2, 5, "YAML syntax error: control characters are not allowed (U+0001)");
}

/* The printed form of a YAML error, caret under the character libyaml
 * meant, after a multibyte character. */
static void test_printed_syntax_error(void **state)
{
	struct parsed p;
	char *buf = NULL;
	size_t len = 0;
	FILE *fp;

	(void)state;
	parse(&p, "n\xC3\xA9: b: c\n");
	fp = open_memstream(&buf, &len);
	assert_non_null(fp);
	diags_print(&p.d, fp);
	fclose(fp);
	assert_string_equal(buf, "t.yaml:1:6: error: YAML syntax error: mapping values are not allowed in this context\n"
				 "    n\xC3\xA9: b: c\n"
				 "         ^\n");
	free(buf);
	done(&p);
}

/* Which errors keep the tree for later passes (compile.c checks it despite
 * errors, to report everything in one run) and which drop it (a tree cut
 * short by a syntax error would only add noise about what is missing). */
static void test_root_after_errors(void **state)
{
	static const struct {
		const char *yaml;
		int kept;
	} cases[] = {
		{ "a: 1\na: 2\n", 1 },
		{ "a: &x 1\n", 1 },
		{ "a: !!str 1\n", 1 },
		{ "a: *x\nb: 1\n", 1 },
		{ "a: \"\\0\"\n", 1 },
		{ "? [k]\n: v\nb: 1\n", 1 },
		{ "a: 1\n---\nb: 2\n", 1 },
		{ "a: b: c\n", 0 },
		{ "a: [1\n", 0 },
		{ "a: 1\n]\n", 0 },
		{ "a: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\nb: 1\n", 1 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct parsed p;

		parse(&p, cases[i].yaml);
		assert_int_equal(p.rc, -1);
		if ((p.doc.root != NULL) != cases[i].kept)
			fail_msg("'%s': root %s", cases[i].yaml, p.doc.root ? "kept" : "dropped");
		done(&p);
	}
}

static void test_root_kinds(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, "- a\n- b\n");
	assert_int_equal(p.rc, 0);
	assert_int_equal(p.doc.root->kind, YN_SEQ);
	assert_null(ymap_get(p.doc.root, "a"));
	done(&p);

	parse(&p, "just a string\n");
	assert_int_equal(p.rc, 0);
	assert_string_equal(ynode_kind_name(p.doc.root), "string");
	done(&p);

	parse(&p, "~\n");
	assert_int_equal(p.rc, 0);
	assert_string_equal(ynode_kind_name(p.doc.root), "null");
	done(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree_and_positions),
		cmocka_unit_test(test_scalar_resolution),
		cmocka_unit_test(test_duplicate_key_names_both_places),
		cmocka_unit_test(test_duplicate_key_by_value),
		cmocka_unit_test(test_refused_features),
		cmocka_unit_test(test_keeps_going_after_refusals),
		cmocka_unit_test(test_nesting_limit),
		cmocka_unit_test(test_nesting_limit_keeps_going),
		cmocka_unit_test(test_nesting_block_and_absurd),
		cmocka_unit_test(test_node_limit),
		cmocka_unit_test(test_one_document_only),
		cmocka_unit_test(test_single_document_markers_ok),
		cmocka_unit_test(test_empty_document),
		cmocka_unit_test(test_syntax_errors),
		cmocka_unit_test(test_printed_syntax_error),
		cmocka_unit_test(test_root_after_errors),
		cmocka_unit_test(test_root_kinds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
