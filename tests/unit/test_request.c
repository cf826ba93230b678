/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_request.c - request_parse(): each rule of the bridge's wire format
 * and the order in which they are judged (the token before the shape).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/supervise/request.h"

#define TOKEN "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static enum request_fault parse(const char *text, struct request *rq)
{
	char why[256] = "";
	enum request_fault f = request_parse(text, strlen(text), TOKEN, rq, why, sizeof(why));

	if (f != REQUEST_OK)
		assert_true(why[0] != '\0');
	return f;
}

static enum request_fault fault_of(const char *text)
{
	struct request rq;
	enum request_fault f = parse(text, &rq);

	request_free(&rq);
	return f;
}

static void test_request_good(void **state)
{
	struct request rq;

	(void)state;
	assert_int_equal(parse("{\"v\":1,\"token\":\"" TOKEN "\",\"id\":\"r1\",\"tool\":\"mail.send\","
			       "\"params\":{\"to\":\"a@b.c\"},\"messageId\":\"m-1\"}", &rq),
			 REQUEST_OK);
	assert_string_equal(rq.id, "r1");
	assert_string_equal(rq.tool, "mail.send");
	assert_string_equal(rq.message_id, "m-1");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(rq.params, "to")->valuestring, "a@b.c");
	request_free(&rq);
	assert_int_equal(parse("{\"token\":\"" TOKEN "\",\"v\":1,\"id\":\"r\",\"tool\":\"a.b\",\"params\":{}}", &rq),
			 REQUEST_OK);
	assert_null(rq.message_id);
	request_free(&rq);
}

static void test_request_malformed(void **state)
{
	(void)state;
	assert_int_equal(fault_of(""), REQUEST_MALFORMED);
	assert_int_equal(fault_of("[1]"), REQUEST_MALFORMED);
	assert_int_equal(fault_of("{\"v\":1} {}"), REQUEST_MALFORMED);
	assert_int_equal(fault_of("{\"v\":1"), REQUEST_MALFORMED);
	/* duplicates at the top, and deep inside params */
	assert_int_equal(fault_of("{\"token\":\"" TOKEN "\",\"token\":\"x\"}"), REQUEST_MALFORMED);
	assert_int_equal(fault_of("{\"v\":1,\"token\":\"" TOKEN "\",\"id\":\"r\",\"tool\":\"a.b\","
				  "\"params\":{\"a\":[{\"x\":1,\"x\":2}]}}"),
			 REQUEST_MALFORMED);
	/* \u0000 ends a cJSON string early; an escaped backslash before
	 * u0000 is ordinary text */
	assert_int_equal(fault_of("{\"v\":1,\"token\":\"" TOKEN "\",\"id\":\"r\",\"tool\":\"a.b\","
				  "\"params\":{\"s\":\"a\\u0000b\"}}"),
			 REQUEST_MALFORMED);
	assert_int_equal(fault_of("{\"v\":1,\"token\":\"" TOKEN "\",\"id\":\"r\",\"tool\":\"a.b\","
				  "\"params\":{\"s\":\"a\\\\u0000b\"}}"),
			 REQUEST_OK);
	{
		static const char with_nul[] = "{\"v\":1}\0{}";
		struct request rq;
		char why[64];

		assert_int_equal(request_parse(with_nul, sizeof(with_nul) - 1, TOKEN, &rq, why, sizeof(why)),
				 REQUEST_MALFORMED);
		request_free(&rq);
	}
}

/* Issue 15: bytes that are not UTF-8 passed cJSON into params, and from
 * there into the tool's input, its answer and the audit, undecodable. */
static void test_request_invalid_utf8_refused(void **state)
{
	(void)state;
	assert_int_equal(fault_of("{\"v\":1,\"token\":\"" TOKEN "\",\"id\":\"r\",\"tool\":\"a.b\","
				  "\"params\":{\"s\":\"caf\xc3\xa9\"}}"),
			 REQUEST_OK);
	assert_int_equal(fault_of("{\"v\":1,\"token\":\"" TOKEN "\",\"id\":\"r\",\"tool\":\"a.b\","
				  "\"params\":{\"s\":\"caf\xe9\"}}"),
			 REQUEST_MALFORMED);
	assert_int_equal(fault_of("{\"v\":1,\"token\":\"" TOKEN "\",\"id\":\"r\",\"tool\":\"a.b\","
				  "\"params\":{\"\xc0\xae\":1}}"),
			 REQUEST_MALFORMED);
}

static void test_request_token_first(void **state)
{
	(void)state;
	assert_int_equal(fault_of("{\"v\":1,\"id\":\"r\",\"tool\":\"a.b\",\"params\":{}}"), REQUEST_NO_TOKEN);
	assert_int_equal(fault_of("{\"v\":1,\"token\":5,\"id\":\"r\",\"tool\":\"a.b\",\"params\":{}}"), REQUEST_NO_TOKEN);
	assert_int_equal(fault_of("{\"v\":1,\"token\":\"" TOKEN "0\",\"id\":\"r\",\"tool\":\"a.b\",\"params\":{}}"),
			 REQUEST_BAD_TOKEN);
	/* one digit off */
	assert_int_equal(fault_of("{\"v\":1,\"token\":\"1123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\","
				  "\"id\":\"r\",\"tool\":\"a.b\",\"params\":{}}"),
			 REQUEST_BAD_TOKEN);
	/* a shape fault behind a wrong token is reported as the token */
	assert_int_equal(fault_of("{\"v\":9,\"token\":\"x\",\"bogus\":1}"), REQUEST_BAD_TOKEN);
}

static void test_request_shape(void **state)
{
	static const char *const bad[] = {
		"{\"v\":2,\"token\":\"" TOKEN "\",\"id\":\"r\",\"tool\":\"a.b\",\"params\":{}}",
		"{\"v\":\"1\",\"token\":\"" TOKEN "\",\"id\":\"r\",\"tool\":\"a.b\",\"params\":{}}",
		"{\"v\":1,\"token\":\"" TOKEN "\",\"id\":\"\",\"tool\":\"a.b\",\"params\":{}}",
		"{\"v\":1,\"token\":\"" TOKEN "\",\"id\":\"has space\",\"tool\":\"a.b\",\"params\":{}}",
		"{\"v\":1,\"token\":\"" TOKEN "\",\"id\":\"r\",\"tool\":7,\"params\":{}}",
		"{\"v\":1,\"token\":\"" TOKEN "\",\"id\":\"r\",\"tool\":\"a.b\",\"params\":[]}",
		"{\"v\":1,\"token\":\"" TOKEN "\",\"id\":\"r\",\"tool\":\"a.b\"}",
		"{\"v\":1,\"token\":\"" TOKEN "\",\"id\":\"r\",\"tool\":\"a.b\",\"params\":{},\"messageId\":\"\"}",
		"{\"v\":1,\"token\":\"" TOKEN "\",\"id\":\"r\",\"tool\":\"a.b\",\"params\":{},\"extra\":1}",
		"{\"v\":1,\"token\":\"" TOKEN "\",\"id\":\"r\",\"tool\":\"a.b\",\"params\":{},\"messageId\":\"\xc3\xa9\"}",
	};
	char longid[200];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(fault_of(bad[i]), REQUEST_SHAPE);
	snprintf(longid, sizeof(longid), "{\"v\":1,\"token\":\"" TOKEN "\",\"id\":\"%065d\",\"tool\":\"a.b\",\"params\":{}}", 0);
	assert_int_equal(fault_of(longid), REQUEST_SHAPE);
	snprintf(longid, sizeof(longid), "{\"v\":1,\"token\":\"" TOKEN "\",\"id\":\"%064d\",\"tool\":\"a.b\",\"params\":{}}", 0);
	assert_int_equal(fault_of(longid), REQUEST_OK);
	/* Issue 14: named as the program wrote it (the stubs' keyword). */
	{
		struct request rq;
		char why[256] = "";

		assert_int_equal(request_parse(bad[7], strlen(bad[7]), TOKEN, &rq, why, sizeof(why)), REQUEST_SHAPE);
		assert_non_null(strstr(why, "message_id ('messageId' in the request) must be 1 to"));
		request_free(&rq);
	}
}

/* Duplicate keys are found by sorting: comparing every pair made a 1 MiB
 * frame of 110k keys cost the supervisor a minute, before the token was
 * looked at (a regression test, with room for a slow sanitizer build). */
static void test_request_many_keys_fast(void **state)
{
	size_t cap = 2u << 20, len = 0;
	char *text = malloc(cap);
	struct request rq;
	char why[256];
	struct timespec t0, t1;
	double ms;

	(void)state;
	assert_non_null(text);
	len += (size_t)snprintf(text + len, cap - len, "{\"v\":1,\"params\":{");
	for (int i = 0; i < 110000; i++)
		len += (size_t)snprintf(text + len, cap - len, "%s\"k%d\":1", i ? "," : "", i);
	len += (size_t)snprintf(text + len, cap - len, "}}");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(request_parse(text, len, TOKEN, &rq, why, sizeof(why)), REQUEST_NO_TOKEN);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	request_free(&rq);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	assert_true(ms < 3000);
	/* the same keys with one repeated at the end: found */
	len -= 2;
	len += (size_t)snprintf(text + len, cap - len, ",\"k5\":2}}");
	assert_int_equal(request_parse(text, len, TOKEN, &rq, why, sizeof(why)), REQUEST_MALFORMED);
	request_free(&rq);
	free(text);
}

static void test_request_frame_header(void **state)
{
	unsigned char h[4];

	(void)state;
	request_frame_put(h, 0x01020304u);
	assert_int_equal(h[0], 1);
	assert_int_equal(h[3], 4);
	assert_int_equal(request_frame_len(h), 0x01020304u);
	request_frame_put(h, 0xffffffffu);
	assert_int_equal(request_frame_len(h), 0xffffffffu);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_good),       cmocka_unit_test(test_request_malformed),
		cmocka_unit_test(test_request_token_first), cmocka_unit_test(test_request_shape),
		cmocka_unit_test(test_request_frame_header), cmocka_unit_test(test_request_many_keys_fast),
		cmocka_unit_test(test_request_invalid_utf8_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
