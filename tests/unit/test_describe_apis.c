/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_describe_apis.c - compiler/describe_apis.h: the tool names of the
 * model API formats and their way back to the id.  The name rule is where
 * a mistake would send a model's call to another tool, so its edges are
 * pinned here: the 64-character limit to the byte, ids whose "__" spelling
 * would not read back, bytes outside the alphabet, and buffers too small.
 * The shapes, schemas, strict flag and annotations are checked end to end
 * by tests/cli/test_describe_formats.sh against each format's schema.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "compiler/describe_apis.h"

/* "aaa...a" of n bytes, a dot, "bbb...b" of m bytes. */
static void make_id(char *id, size_t n, size_t m)
{
	memset(id, 'a', n);
	id[n] = '.';
	memset(id + n + 1, 'b', m);
	id[n + 1 + m] = '\0';
}

static void assert_named(enum describe_api api, const char *id, const char *want)
{
	char name[DESCRIBE_API_NAME_MAX], back[DESCRIBE_API_NAME_MAX], err[256] = "";

	if (describe_api_name(api, id, name, sizeof(name), err, sizeof(err)) != 0)
		fail_msg("%s refused: %s", id, err);
	assert_string_equal(name, want);
	if (api == DESCRIBE_API_MCP)
		return;
	assert_int_equal(describe_api_id(name, back, sizeof(back)), 0);
	assert_string_equal(back, id);
}

static void assert_refused(enum describe_api api, const char *id, const char *why)
{
	char name[DESCRIBE_API_NAME_MAX], err[256] = "";

	assert_int_equal(describe_api_name(api, id, name, sizeof(name), err, sizeof(err)), -1);
	if (strstr(err, why) == NULL || strstr(err, id) == NULL)
		fail_msg("%s: the error \"%s\" lacks the id or \"%s\"", id, err, why);
}

static void test_names(void **state)
{
	(void)state;
	assert_named(DESCRIBE_API_OPENAI, "mail.send", "mail__send");
	assert_named(DESCRIBE_API_ANTHROPIC, "calc.solve_2", "calc__solve_2");
	assert_named(DESCRIBE_API_MCP, "mail.send", "mail.send");
	/* '_' after the dot reads back: "__" is taken left to right. */
	assert_named(DESCRIBE_API_OPENAI, "a._b", "a___b");
	assert_named(DESCRIBE_API_OPENAI, "a.b_", "a__b_");
}

static void test_limit(void **state)
{
	char id[80];

	(void)state;
	make_id(id, 31, 31); /* 63 bytes, a name of 64 */
	assert_int_equal(strlen(id), 63);
	{
		char name[DESCRIBE_API_NAME_MAX], err[256];

		assert_int_equal(describe_api_name(DESCRIBE_API_OPENAI, id, name, sizeof(name), err, sizeof(err)), 0);
		assert_int_equal(strlen(name), 64);
	}
	make_id(id, 32, 31); /* a name of 65 */
	assert_refused(DESCRIBE_API_OPENAI, id, "would be 65 characters long, this format allows 1 to 64");
	assert_refused(DESCRIBE_API_ANTHROPIC, id, "would be 65 characters long");
	make_id(id, 32, 32); /* the compiler's longest id: MCP names it */
	assert_named(DESCRIBE_API_MCP, id, id);
	assert_refused(DESCRIBE_API_MCP, "", "would be 0 characters long");
}

static void test_not_reversible(void **state)
{
	(void)state;
	assert_refused(DESCRIBE_API_OPENAI, "odd__ns.x", "its name odd__ns__x would read back as odd.ns.x");
	assert_refused(DESCRIBE_API_ANTHROPIC, "a_.b", "its name a___b would read back as a._b");
	assert_refused(DESCRIBE_API_OPENAI, "a.b__c", "would read back as a.b.c");
	/* MCP keeps the id as it is: nothing to read back. */
	assert_named(DESCRIBE_API_MCP, "odd__ns.x", "odd__ns.x");
}

static void test_alphabet(void **state)
{
	(void)state;
	assert_refused(DESCRIBE_API_OPENAI, "a.b c", "holds a byte a tool name may not");
	assert_refused(DESCRIBE_API_MCP, "a.b/c", "holds a byte a tool name may not");
	assert_refused(DESCRIBE_API_ANTHROPIC, "caf\xc3\xa9.x", "holds a byte");
}

static void test_buffers(void **state)
{
	char small[8] = "", id[8], err[256];

	(void)state;
	/* A name that does not fit the caller's buffer is refused, not cut. */
	assert_int_equal(describe_api_name(DESCRIBE_API_OPENAI, "mail.send", small, sizeof(small), err, sizeof(err)),
			 -1);
	assert_int_equal(describe_api_id("mail__send", id, sizeof(id)), -1);
	assert_int_equal(describe_api_id("mail__s", id, sizeof(id)), 0);
	assert_string_equal(id, "mail.s");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),	       cmocka_unit_test(test_limit),
		cmocka_unit_test(test_not_reversible), cmocka_unit_test(test_alphabet),
		cmocka_unit_test(test_buffers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
