/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_diag.c - diagnostics, their printed form, checked text inputs, and
 * "did you mean" suggestions.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "compiler/diag.h"

/* What diags_print() writes, as a malloc'd string. */
static char *print_to_string(const struct diags *d)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	assert_non_null(fp);
	diags_print(d, fp);
	assert_int_equal(fclose(fp), 0);
	return buf;
}

static void assert_printed(const struct diags *d, const char *want)
{
	char *got = print_to_string(d);

	assert_string_equal(got, want);
	free(got);
}

static void mem_src(struct src_file *f, struct diags *d, const char *text)
{
	assert_int_equal(src_from_mem("app.yaml", text, strlen(text), 4096, f, d), 0);
}

static void test_diag_at_formats_and_counts(void **state)
{
	struct diags d;

	(void)state;
	diags_init(&d);
	diag_at(&d, DIAG_ERROR, NULL, 0, 0, "bad %s %d", "thing", 42);
	diag_at(&d, DIAG_WARNING, NULL, 0, 0, "w");
	diag_at(&d, DIAG_NOTE, NULL, 0, 0, "n");
	assert_int_equal(d.n, 3);
	assert_int_equal(d.nerrors, 1);
	assert_int_equal(d.nwarnings, 1);
	assert_int_equal(d.overflow, 0);
	assert_string_equal(d.v[0].msg, "bad thing 42");
	assert_int_equal(d.v[1].sev, DIAG_WARNING);
	diags_free(&d);
	assert_int_equal(d.n, 0);
	assert_null(d.v);
}

static void test_diag_overflow_counts_dropped(void **state)
{
	struct diags d;
	char *out, *last;
	int i;

	(void)state;
	diags_init(&d);
	for (i = 0; i < DIAG_MAX + 5; i++)
		diag_at(&d, DIAG_ERROR, NULL, 0, 0, "e%d", i);
	diag_at(&d, DIAG_NOTE, NULL, 0, 0, "dropped note");
	assert_int_equal(d.n, DIAG_MAX);
	assert_int_equal(d.nerrors, DIAG_MAX + 5);
	assert_int_equal(d.overflow, 1);
	out = print_to_string(&d);
	/* The summary is the last line; the one before ends the last kept. */
	last = strstr(out, "e999\ncordonc: note:");
	assert_non_null(last);
	assert_string_equal(last + 5, "cordonc: note: too many diagnostics; 5 more errors and warnings not shown\n");
	free(out);
	diags_free(&d);
}

/* The form diag.h documents, byte for byte. */
static void test_print_exact_form(void **state)
{
	struct diags d;
	struct src_file f;

	(void)state;
	diags_init(&d);
	mem_src(&f, &d, "app: demo\n  timout: 30s\n");
	diag_at(&d, DIAG_ERROR, &f, 2, 3, "unknown key '%s'; did you mean '%s'?", "timout", "timeout");
	diag_at(&d, DIAG_NOTE, &f, 1, 1, "mapping starts here");
	diag_at(&d, DIAG_WARNING, &f, 0, 0, "whole-file warning");
	diag_at(&d, DIAG_ERROR, NULL, 0, 0, "no file at all");
	assert_printed(&d, "app.yaml:2:3: error: unknown key 'timout'; did you mean 'timeout'?\n"
			   "      timout: 30s\n"
			   "      ^\n"
			   "app.yaml:1:1: note: mapping starts here\n"
			   "    app: demo\n"
			   "    ^\n"
			   "app.yaml: warning: whole-file warning\n"
			   "cordonc: error: no file at all\n");
	diags_free(&d);
	src_free(&f);
}

/* Columns count code points: two-byte 'é' and four-byte emoji are one
 * column each, and the caret line has one pad per code point. */
static void test_print_caret_utf8(void **state)
{
	struct diags d;
	struct src_file f;

	(void)state;
	diags_init(&d);
	mem_src(&f, &d, "n: \"h\xC3\xA9\xF0\x9F\x98\x80\" x\n");
	diag_at(&d, DIAG_ERROR, &f, 1, 10, "here");
	assert_printed(&d, "app.yaml:1:10: error: here\n"
			   "    n: \"h\xC3\xA9\xF0\x9F\x98\x80\" x\n"
			   "             ^\n");
	diags_free(&d);
	src_free(&f);
}

static void test_print_caret_tabs(void **state)
{
	struct diags d;
	struct src_file f;

	(void)state;
	diags_init(&d);
	mem_src(&f, &d, "a:\t\tb\n");
	diag_at(&d, DIAG_ERROR, &f, 1, 5, "at b");
	assert_printed(&d, "app.yaml:1:5: error: at b\n"
			   "    a:\t\tb\n"
			   "      \t\t^\n");
	diags_free(&d);
	src_free(&f);
}

/* libyaml puts some errors just past the end of a line or on the empty
 * line after the final newline; a line that does not exist gets no
 * excerpt. */
static void test_print_past_end(void **state)
{
	struct diags d;
	struct src_file f;

	(void)state;
	diags_init(&d);
	mem_src(&f, &d, "ab\r\ncd\n");
	diag_at(&d, DIAG_ERROR, &f, 2, 5, "past end");
	diag_at(&d, DIAG_ERROR, &f, 3, 1, "empty last line");
	diag_at(&d, DIAG_ERROR, &f, 9, 1, "no such line");
	assert_printed(&d, "app.yaml:2:5: error: past end\n"
			   "    cd\n"
			   "        ^\n"
			   "app.yaml:3:1: error: empty last line\n"
			   "    \n"
			   "    ^\n"
			   "app.yaml:9:1: error: no such line\n");
	diags_free(&d);
	src_free(&f);
}

/* Escape sequences from a file or a message never reach the terminal. */
static void test_print_hides_control_bytes(void **state)
{
	struct diags d;
	struct src_file f;

	(void)state;
	diags_init(&d);
	mem_src(&f, &d, "k: \x1b[2J\n");
	diag_at(&d, DIAG_ERROR, &f, 1, 4, "bad '%s'", "\x1b[2J");
	assert_printed(&d, "app.yaml:1:4: error: bad '?[2J'\n"
			   "    k: ?[2J\n"
			   "       ^\n");
	diags_free(&d);
	src_free(&f);
}

/* Lines end where libyaml ends them; a BOM is not a column. */
static void test_src_pos_follows_libyaml(void **state)
{
	struct diags d;
	struct src_file f;
	uint32_t line, col;

	(void)state;
	diags_init(&d);
	mem_src(&f, &d, "\xEF\xBB\xBF" "a\r\nb\rc\xC2\x85" "d\xE2\x80\xA8\xC3\xA9x");
	src_pos(&f, 3, &line, &col);
	assert_int_equal(line, 1);
	assert_int_equal(col, 1);
	src_pos(&f, 6, &line, &col); /* b */
	assert_int_equal(line, 2);
	assert_int_equal(col, 1);
	src_pos(&f, 8, &line, &col); /* c */
	assert_int_equal(line, 3);
	src_pos(&f, 11, &line, &col); /* d after NEL */
	assert_int_equal(line, 4);
	src_pos(&f, f.len - 1, &line, &col); /* x after LS and e-acute */
	assert_int_equal(line, 5);
	assert_int_equal(col, 2);
	diags_free(&d);
	src_free(&f);
}

static void test_src_empty_is_fine(void **state)
{
	struct diags d;
	struct src_file f;

	(void)state;
	diags_init(&d);
	assert_int_equal(src_from_mem("e.yaml", "", 0, 10, &f, &d), 0);
	assert_int_equal(f.len, 0);
	assert_string_equal(f.text, "");
	assert_int_equal(d.n, 0);
	diags_free(&d);
	src_free(&f);
}

static void test_src_nul_byte_position(void **state)
{
	struct diags d;
	struct src_file f;

	(void)state;
	diags_init(&d);
	assert_int_equal(src_from_mem("app.yaml", "a: 1\n\xC3\xA9x\0y\n", 11, 100, &f, &d), -1);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.v[0].line, 2);
	assert_int_equal(d.v[0].col, 3);
	assert_string_equal(d.v[0].msg, "NUL byte in input");
	assert_ptr_equal(d.v[0].file, &f);
	diags_free(&d);
	src_free(&f);
}

struct bad_utf8 {
	const char *text;
	uint32_t line, col;
	const char *msg;
};

static void test_src_invalid_utf8(void **state)
{
	static const struct bad_utf8 cases[] = {
		{ "a: \x80\n", 1, 4, "invalid UTF-8 (byte 0x80)" },             /* stray continuation */
		{ "a: \xC0\xAF\n", 1, 4, "invalid UTF-8 (byte 0xC0)" },         /* overlong '/' */
		{ "a: \xE0\x80\xAF\n", 1, 4, "invalid UTF-8 (byte 0xE0)" },     /* overlong, 3 bytes */
		{ "a: \xF0\x80\x80\xAF\n", 1, 4, "invalid UTF-8 (byte 0xF0)" }, /* overlong, 4 bytes */
		{ "a: \xED\xA0\x80\n", 1, 4, "invalid UTF-8 (byte 0xED)" },     /* surrogate U+D800 */
		{ "a: \xF4\x90\x80\x80\n", 1, 4, "invalid UTF-8 (byte 0xF4)" }, /* U+110000 */
		{ "a: \xF5\x80\x80\x80\n", 1, 4, "invalid UTF-8 (byte 0xF5)" },
		{ "a: \xFF\n", 1, 4, "invalid UTF-8 (byte 0xFF)" },
		{ "a: \xE2\x82x\n", 1, 4, "invalid UTF-8 (byte 0xE2)" },        /* cut short mid-text */
		{ "ok\n\xC3\xA9\xC3\xA9\xE2\x82", 2, 3, "invalid UTF-8 (byte 0xE2)" }, /* cut by EOF */
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct diags d;
		struct src_file f;

		diags_init(&d);
		assert_int_equal(src_from_mem("u.yaml", cases[i].text, strlen(cases[i].text), 100, &f, &d), -1);
		assert_int_equal(d.n, 1);
		assert_int_equal(d.v[0].line, cases[i].line);
		assert_int_equal(d.v[0].col, cases[i].col);
		assert_string_equal(d.v[0].msg, cases[i].msg);
		diags_free(&d);
		src_free(&f);
	}
}

static void test_src_valid_utf8_edges(void **state)
{
	/* U+007F, U+0080, U+07FF, U+0800, U+D7FF, U+E000, U+FFFF, U+10000,
	 * U+10FFFF: the edges of each length and of the surrogate gap. */
	static const char text[] = "\x7F\xC2\x80\xDF\xBF\xE0\xA0\x80\xED\x9F\xBF\xEE\x80\x80\xEF\xBF\xBF"
				   "\xF0\x90\x80\x80\xF4\x8F\xBF\xBF";
	struct diags d;
	struct src_file f;

	(void)state;
	diags_init(&d);
	assert_int_equal(src_from_mem("v.yaml", text, sizeof(text) - 1, 100, &f, &d), 0);
	assert_int_equal(d.n, 0);
	diags_free(&d);
	src_free(&f);
}

static void test_src_too_large(void **state)
{
	struct diags d;
	struct src_file f;

	(void)state;
	diags_init(&d);
	assert_int_equal(src_from_mem("big.yaml", "0123456789", 10, 9, &f, &d), -1);
	assert_printed(&d, "big.yaml: error: file is too large (10 bytes; the limit is 9)\n");
	diags_free(&d);
	src_free(&f);
}

/* A scratch directory for src_read() tests; removed by the test. */
static void write_file(const char *path, const char *data, size_t len)
{
	FILE *fp = fopen(path, "wb");

	assert_non_null(fp);
	assert_int_equal(fwrite(data, 1, len, fp), len);
	assert_int_equal(fclose(fp), 0);
}

static void test_src_read_files(void **state)
{
	char dir[] = "/tmp/cordon-test-diag-XXXXXX";
	char good[64], big[64], nul[64], missing[64], want[160];
	struct diags d;
	struct src_file f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(good, sizeof(good), "%s/good.yaml", dir);
	snprintf(big, sizeof(big), "%s/big.yaml", dir);
	snprintf(nul, sizeof(nul), "%s/nul.yaml", dir);
	snprintf(missing, sizeof(missing), "%s/missing.yaml", dir);
	write_file(good, "a: 1\n", 5);
	write_file(big, "a: 12345\n", 9);
	write_file(nul, "a: 1\nb:\0\n", 9);

	diags_init(&d);
	assert_int_equal(src_read(good, 100, &f, &d), 0);
	assert_int_equal(f.len, 5);
	assert_string_equal(f.text, "a: 1\n");
	assert_string_equal(f.path, good);
	src_free(&f);
	assert_int_equal(d.n, 0);

	assert_int_equal(src_read(big, 8, &f, &d), -1);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.v[0].line, 0);
	assert_string_equal(d.v[0].msg, "file is too large (9 bytes; the limit is 8)");
	assert_ptr_equal(d.v[0].file, &f);
	assert_string_equal(f.path, big);
	diags_free(&d);
	src_free(&f);

	diags_init(&d);
	assert_int_equal(src_read(nul, 100, &f, &d), -1);
	assert_int_equal(d.v[0].line, 2);
	assert_int_equal(d.v[0].col, 3);
	assert_string_equal(d.v[0].msg, "NUL byte in input");
	diags_free(&d);
	src_free(&f);

	diags_init(&d);
	assert_int_equal(src_read(dir, 100, &f, &d), -1);
	assert_string_equal(d.v[0].msg, "not a regular file");
	assert_int_equal(d.v[0].line, 0);
	diags_free(&d);
	src_free(&f);

	diags_init(&d);
	assert_int_equal(src_read(missing, 100, &f, &d), -1);
	snprintf(want, sizeof(want), "cordonc: error: cannot read '%s': No such file or directory\n", missing);
	assert_printed(&d, want);
	assert_null(f.path);
	diags_free(&d);
	src_free(&f);
	src_free(&f); /* twice is harmless */

	unlink(good);
	unlink(big);
	unlink(nul);
	assert_int_equal(rmdir(dir), 0);
}

static void test_suggest_nearest(void **state)
{
	static const char *const keys[] = { "app", "timeout", "network", "mounts", "memory", "env" };
	static const char *const tie[] = { "abcd", "abce" };
	const size_t n = sizeof(keys) / sizeof(keys[0]);

	(void)state;
	assert_string_equal(suggest_nearest("timout", keys, n), "timeout");
	assert_string_equal(suggest_nearest("netwrok", keys, n), "network");  /* swap */
	assert_string_equal(suggest_nearest("moutns", keys, n), "mounts");    /* swap */
	assert_string_equal(suggest_nearest("memroy", keys, n), "memory");
	assert_string_equal(suggest_nearest("timeouts", keys, n), "timeout");
	assert_string_equal(suggest_nearest("tmeuot", keys, n), "timeout");   /* distance 2 of 6 */
	assert_null(suggest_nearest("x", keys, n));   /* distance 1 is half of 1 */
	assert_null(suggest_nearest("ap", keys, n));  /* distance 1 is half of 2 */
	assert_string_equal(suggest_nearest("apq", keys, n), "app");
	assert_null(suggest_nearest("envv", (const char *const[]){ "timeout" }, 1));
	assert_null(suggest_nearest("completely", keys, n));
	assert_null(suggest_nearest("abcd", keys, 0));
	assert_string_equal(suggest_nearest("abcf", tie, 2), "abcd"); /* tie: first */
	assert_string_equal(suggest_nearest("timeout", keys, n), "timeout");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diag_at_formats_and_counts),
		cmocka_unit_test(test_diag_overflow_counts_dropped),
		cmocka_unit_test(test_print_exact_form),
		cmocka_unit_test(test_print_caret_utf8),
		cmocka_unit_test(test_print_caret_tabs),
		cmocka_unit_test(test_print_past_end),
		cmocka_unit_test(test_print_hides_control_bytes),
		cmocka_unit_test(test_src_pos_follows_libyaml),
		cmocka_unit_test(test_src_empty_is_fine),
		cmocka_unit_test(test_src_nul_byte_position),
		cmocka_unit_test(test_src_invalid_utf8),
		cmocka_unit_test(test_src_valid_utf8_edges),
		cmocka_unit_test(test_src_too_large),
		cmocka_unit_test(test_src_read_files),
		cmocka_unit_test(test_suggest_nearest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
