/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_context.c - the request context (runtime/context.h): what is
 * accepted, and every refusal with its message.  context_utf8_inf_accepted
 * pins issue 15: invalid UTF-8 and 1e999 used to pass.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "runtime/context.h"

/* text must be refused with exactly msg. */
static void refused(const char *text, const char *msg)
{
	char err[256] = "";
	cJSON *ctx = context_parse(text, strlen(text), err, sizeof(err));

	if (ctx != NULL) {
		cJSON_Delete(ctx);
		fail_msg("accepted: %s", text);
	}
	assert_string_equal(err, msg);
}

static cJSON *accepted(const char *text)
{
	char err[256] = "";
	cJSON *ctx = context_parse(text, strlen(text), err, sizeof(err));

	if (ctx == NULL)
		fail_msg("refused: %s: %s", text, err);
	return ctx;
}

static void test_context_accepts(void **state)
{
	cJSON *ctx;

	(void)state;
	ctx = accepted("{\"tenant\":\"t\",\"user\":\"caf\xc3\xa9 \xf0\x9f\x98\x80\",\"roles\":[\"a\",\"b\"],"
		       "\"tools\":[],\"accounting\":{\"cost\":\"c-1\",\"quota\":9007199254740992,"
		       "\"low\":-9007199254740992,\"rate\":0.25}}");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(ctx, "user")->valuestring, "caf\xc3\xa9 \xf0\x9f\x98\x80");
	cJSON_Delete(ctx);
	cJSON_Delete(accepted("{}"));
	/* An escape is decoded to well-formed UTF-8 by cJSON. */
	cJSON_Delete(accepted("{\"user\":\"\\u00e9\\ud83d\\ude00\"}"));
}

static void test_context_shape(void **state)
{
	(void)state;
	refused("[]", "not a JSON object");
	refused("{", "not a JSON object (invalid JSON)");
	refused("{\"role\":\"x\"}", "unknown key 'role'; did you mean 'roles'? (known: tenant, project, user, session, "
				       "roles, tools, accounting)");
	refused("{\"tennat\":\"x\"}", "unknown key 'tennat'; did you mean 'tenant'? (known: tenant, project, user, "
					  "session, roles, tools, accounting)");
	refused("{\"zzz\":\"x\"}", "unknown key 'zzz' (known: tenant, project, user, session, roles, tools, "
				      "accounting)");
	refused("{\"user\":\"a\",\"user\":\"b\"}", "key 'user' given twice");
	refused("{\"user\":1}", "'user' must be a string");
	refused("{\"roles\":[1]}", "'roles' must hold strings only");
	refused("{\"accounting\":{\"a\":true}}", "accounting field 'a' must be a string or a number");
	refused("{\"user\":\"a\\u0000b\"}", "\\u0000 in a string");
	refused("{\"user\":\"\\ud800\"}", "not a JSON object (invalid JSON)");
}

static void test_context_utf8_inf_accepted(void **state)
{
	static const char ctx_inf[] = "{\"accounting\":{\"quota\":1e999}}";
	char err[256];
	cJSON *obj;

	(void)state;
	/* The file: the first byte that is not UTF-8, by its offset. */
	refused("{\"user\":\"ab\xff\"}", "invalid UTF-8 at byte offset 11");
	refused("{\"user\":\"\xc0\xaf\"}", "invalid UTF-8 at byte offset 9");     /* overlong '/' */
	refused("{\"user\":\"\xed\xa0\x80\"}", "invalid UTF-8 at byte offset 9"); /* a surrogate */
	refused("{\"user\":\"\xf4\x90\x80\x80\"}", "invalid UTF-8 at byte offset 9"); /* above U+10FFFF */
	/* Numbers: finite and exact as a double's integers are. */
	refused(ctx_inf, "accounting field 'quota' is not a number within +-2^53 (it overflows a double)");
	refused("{\"accounting\":{\"quota\":-1e999}}",
		"accounting field 'quota' is not a number within +-2^53 (it overflows a double)");
	refused("{\"accounting\":{\"id\":12345678901234567890}}",
		"accounting field 'id' is not a number within +-2^53 (too large to be exact)");
	/* An object parsed elsewhere (serve's body): by field and byte. */
	obj = cJSON_Parse("{\"user\":\"x\",\"accounting\":{\"k\":\"v\"}}");
	assert_non_null(obj);
	cJSON_ReplaceItemInObjectCaseSensitive(obj, "user", cJSON_CreateString("ok\xe2\x82"));
	assert_int_equal(context_check(obj, err, sizeof(err)), -1);
	assert_string_equal(err, "the value of 'user' is not valid UTF-8 (byte 2)");
	cJSON_ReplaceItemInObjectCaseSensitive(obj, "user", cJSON_CreateString("ok"));
	assert_int_equal(context_check(obj, err, sizeof(err)), 0);
	cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(obj, "accounting"), "k\xff", "v");
	assert_int_equal(context_check(obj, err, sizeof(err)), -1);
	assert_string_equal(err, "an accounting field's name is not valid UTF-8 (byte 1)");
	cJSON_Delete(obj);
	obj = cJSON_Parse("{\"accounting\":{\"k\":\"\xc3\"}}");
	assert_non_null(obj);
	assert_int_equal(context_check(obj, err, sizeof(err)), -1);
	assert_string_equal(err, "accounting field 'k' is not valid UTF-8 (byte 0)");
	cJSON_Delete(obj);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_context_accepts),
		cmocka_unit_test(test_context_shape),
		cmocka_unit_test(test_context_utf8_inf_accepted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
