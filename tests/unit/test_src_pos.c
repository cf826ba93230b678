/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_src_pos.c - positions through the stop index (compiler/src_pos.c)
 * and the sorting of diagnostics (compiler/diag_sort.c).
 *
 * The index must give the answers of a walk from the top of the file
 * (the same src_file with no index), for every offset, line and column of
 * texts with every line break libyaml knows; and its lookups must cost a
 * bounded walk each, counted in steps, not timed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compiler/diag.h"

/* Pieces a text is drawn from: text, every line break, multi-byte code
 * points (2, 3 and 4 bytes), a tab. */
static const char *const pieces[] = {
	"a", "key: value", "\n", "\r", "\r\n", "\xC2\x85", "\xE2\x80\xA8", "\xE2\x80\xA9", "\xC3\xA9", "\xE2\x82\xAC",
	"\xF0\x9F\x98\x80", "\t", "- 'x < 1'", "                                                                  ",
};

/* A deterministic text of about len bytes: the same every run. */
static char *gen_text(size_t len, int bom, uint32_t seed, size_t *out_len)
{
	size_t cap = len + 128, n = 0;
	char *t = malloc(cap);
	uint32_t x = seed;

	assert_non_null(t);
	if (bom) {
		memcpy(t, "\xEF\xBB\xBF", 3);
		n = 3;
	}
	while (n < len) {
		const char *p;

		x = x * 1103515245u + 12345u;
		p = pieces[(x >> 16) % (sizeof(pieces) / sizeof(pieces[0]))];
		memcpy(t + n, p, strlen(p));
		n += strlen(p);
	}
	*out_len = n;
	return t;
}

/* f from text (with its index) and bare, the same text with none. */
static void two_files(const char *text, size_t len, struct src_file *f, struct src_file *bare, struct diags *d)
{
	assert_int_equal(src_from_mem("t.yaml", text, len, 1u << 22, f, d), 0);
	assert_non_null(f->index);
	*bare = *f;
	bare->index = NULL;
}

static void test_index_agrees_with_walk(void **state)
{
	static const size_t sizes[] = { 0, 1, 63, 64, 65, 200, 5000 };
	struct diags d;

	(void)state;
	diags_init(&d);
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		for (int bom = 0; bom < 2; bom++) {
			struct src_file f, bare;
			size_t len, off;
			char *text = gen_text(sizes[s], bom, (uint32_t)(s * 2 + (size_t)bom + 1), &len);
			uint32_t l1, c1, l2, c2, line;

			two_files(text, len, &f, &bare, &d);
			for (off = 0; off <= len; off++) {
				src_pos(&f, off, &l1, &c1);
				src_pos(&bare, off, &l2, &c2);
				assert_int_equal(l1, l2);
				assert_int_equal(c1, c2);
				/* The inverse lands on the first byte the walk
				 * gives that position to. */
				assert_int_equal(src_offset(&f, l1, c1), src_offset(&bare, l1, c1));
				src_pos(&f, src_offset(&f, l1, c1), &l2, &c2);
				assert_int_equal(l1, l2);
				assert_int_equal(c1, c2);
			}
			for (line = 1; line < l1 + 3; line++) {
				const char *a0 = NULL, *a1 = NULL, *b0 = NULL, *b1 = NULL;
				int ra = src_line_span(&f, line, &a0, &a1), rb = src_line_span(&bare, line, &b0, &b1);

				assert_int_equal(ra, rb);
				assert_int_equal(ra, line <= l1 ? 0 : -1);
				assert_ptr_equal(a0, b0);
				assert_ptr_equal(a1, b1);
				/* Past the end of a line: the offset of its break. */
				assert_int_equal(src_offset(&f, line, 100000), src_offset(&bare, line, 100000));
			}
			free(text);
			src_free(&f);
		}
	}
	diags_free(&d);
}

/* Every line's start, looked up both ways, costs a bounded walk: the
 * steps grow with the lookups, not with lookups times the file. */
static void test_lookups_stay_linear(void **state)
{
	const size_t lines = 20000;
	size_t len = 0, off = 0, lookups = 0;
	char *text = malloc(lines * 48 + 1);
	struct src_file f;
	struct diags d;
	uint32_t line, col;

	(void)state;
	assert_non_null(text);
	diags_init(&d);
	for (size_t i = 0; i < lines; i++)
		len += (size_t)sprintf(text + len, "      - 'len(subject) <= %05zu' # \xC3\xA9\n", i);
	assert_int_equal(src_from_mem("big.yaml", text, len, 1u << 22, &f, &d), 0);
	assert_int_equal(f.index->steps, 0);
	for (size_t i = 1; i <= lines; i++, lookups += 3) {
		off = src_offset(&f, (uint32_t)i, 9);
		src_pos(&f, off, &line, &col);
		assert_int_equal(line, i);
		assert_int_equal(col, 9);
		assert_int_equal(text[off], '\'');
	}
	/* At most a block (64 bytes) and a code point of walk a lookup; a
	 * walk from the top would take about lines / 2 lines each. */
	assert_true(f.index->steps <= lookups * 70);
	free(text);
	src_free(&f);
	diags_free(&d);
}

static void test_diags_sort_by_file_line_col(void **state)
{
	struct src_file app = { (char *)"app.yaml", (char *)"", 0, NULL };
	struct src_file tools = { (char *)"tools.yaml", (char *)"", 0, NULL };
	struct src_file pol = { (char *)"x.policy", (char *)"", 0, NULL };
	const struct src_file *files[] = { &app, &tools };
	static const char *const want[] = { "nofile", "app-nopos", "app-2-1", "app-3-1", "app-3-1-again", "app-3-7",
					    "tools-1-5",  "note-before", "tools-4-2", "note-app", "policy" };
	struct diags d;

	(void)state;
	diags_init(&d);
	diag_at(&d, DIAG_ERROR, &pol, 1, 1, "policy");
	diag_at(&d, DIAG_ERROR, &tools, 4, 2, "tools-4-2");
	diag_at(&d, DIAG_NOTE, &app, 9, 9, "note-app"); /* stays after tools-4-2 */
	diag_at(&d, DIAG_ERROR, &app, 3, 7, "app-3-7");
	diag_at(&d, DIAG_ERROR, &app, 3, 1, "app-3-1");
	diag_at(&d, DIAG_WARNING, &app, 3, 1, "app-3-1-again"); /* ties keep their order */
	diag_at(&d, DIAG_ERROR, &tools, 1, 5, "tools-1-5");
	diag_at(&d, DIAG_NOTE, &tools, 8, 1, "note-before"); /* a note goes with tools-1-5 */
	diag_at(&d, DIAG_ERROR, &app, 2, 1, "app-2-1");
	diag_at(&d, DIAG_ERROR, &app, 0, 0, "app-nopos");
	diag_at(&d, DIAG_ERROR, NULL, 0, 0, "nofile");
	assert_int_equal(diags_sort(&d, 0, files, 2), 0);
	assert_int_equal(d.n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < d.n; i++)
		assert_string_equal(d.v[i].msg, want[i]);
	diags_free(&d);
}

/* Only the diagnostics from `from` on are moved: an earlier compile's stay
 * where they were. */
static void test_diags_sort_from(void **state)
{
	struct src_file app = { (char *)"app.yaml", (char *)"", 0, NULL };
	const struct src_file *files[] = { &app };
	struct diags d;

	(void)state;
	diags_init(&d);
	diag_at(&d, DIAG_ERROR, &app, 9, 1, "earlier");
	diag_at(&d, DIAG_ERROR, &app, 5, 1, "b");
	diag_at(&d, DIAG_ERROR, &app, 1, 1, "a");
	assert_int_equal(diags_sort(&d, 1, files, 1), 0);
	assert_string_equal(d.v[0].msg, "earlier");
	assert_string_equal(d.v[1].msg, "a");
	assert_string_equal(d.v[2].msg, "b");
	assert_int_equal(diags_sort(&d, 3, files, 1), 0);
	diags_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_index_agrees_with_walk),
		cmocka_unit_test(test_lookups_stay_linear),
		cmocka_unit_test(test_diags_sort_by_file_line_col),
		cmocka_unit_test(test_diags_sort_from),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
