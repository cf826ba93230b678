/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_utf8.c - utf8_sanitize(): what the result JSON gets of a program's
 * output (issue 12 item 6).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"

#define FFFD "\xEF\xBF\xBD"

struct sanitize_case {
	const char *in;
	size_t len;
	const char *out;
	size_t replaced;
};

#define C(in, out, n) { in, sizeof(in) - 1, out, n }

static void test_utf8_sanitize_cases(void **state)
{
	static const struct sanitize_case cases[] = {
		C("", "", 0),
		C("plain ascii\n", "plain ascii\n", 0),
		C("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80", "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80", 0),
		/* the output: a NUL no longer ends the text */
		C("a\0b\xFF\xFE c", "a" FFFD "b" FFFD FFFD " c", 3),
		C("\0\0", FFFD FFFD, 2),
		/* a lone continuation byte, an overlong form, a surrogate,
		 * above U+10FFFF: one replacement a byte that begins nothing */
		C("\x80", FFFD, 1),
		C("\xC0\xAF", FFFD FFFD, 2),
		C("\xED\xA0\x80", FFFD FFFD FFFD, 3),
		C("\xF4\x90\x80\x80", FFFD FFFD FFFD FFFD, 4),
		/* a character cut short at the end, and in the middle */
		C("ok\xE2\x82", "ok" FFFD FFFD, 2),
		C("\xE2\x82x", FFFD FFFD "x", 2),
		/* U+FFFD itself is text, not a replacement */
		C(FFFD, FFFD, 0),
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = 99;
		char *s = utf8_sanitize(cases[i].in, cases[i].len, &n);

		assert_non_null(s);
		assert_string_equal(s, cases[i].out);
		assert_int_equal(n, cases[i].replaced);
		assert_int_equal(utf8_prefix(s, strlen(s)), strlen(s));
		free(s);
	}
}

/* Every byte value, alone and after a valid character: the copy is always
 * well-formed and as long as the text says. */
static void test_utf8_sanitize_all_bytes(void **state)
{
	(void)state;
	for (int b = 0; b < 256; b++) {
		char in[3] = { (char)0xC3, (char)0xA9, (char)b };
		size_t n;
		char *s = utf8_sanitize(in, sizeof(in), &n);

		assert_non_null(s);
		assert_int_equal(utf8_prefix(s, strlen(s)), strlen(s));
		assert_int_equal(strlen(s), 2 + (b == 0 || b >= 0x80 ? 3 : 1));
		assert_int_equal(n, b == 0 || b >= 0x80 ? 1 : 0);
		free(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_utf8_sanitize_cases),
		cmocka_unit_test(test_utf8_sanitize_all_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
