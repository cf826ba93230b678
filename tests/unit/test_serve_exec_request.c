/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_serve_exec_request.c - the POST /v1/executions body (runtime/serve/
 * exec_request.c): a full request, then every refusal with its message.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/serve/exec_request.h"

static int parse(const char *body, struct serve_exec_req *rq, char *err, size_t n)
{
	return exec_request_parse(body, strlen(body), rq, err, n);
}

/* body must be refused with exactly msg, leaving nothing allocated. */
static void refused(const char *body, const char *msg)
{
	struct serve_exec_req rq;
	char err[512] = "";

	if (parse(body, &rq, err, sizeof(err)) == 0)
		fail_msg("accepted: %s", body);
	assert_string_equal(err, msg);
	assert_null(rq.app);
	assert_null(rq.code);
	assert_null(rq.context);
	assert_int_equal(rq.ninputs, 0);
}

static void test_exec_request_full(void **state)
{
	struct serve_exec_req rq;
	char err[256] = "";

	(void)state;
	assert_int_equal(parse("{\"app\":\"cafe\",\"agent\":\"barista\",\"code\":\"print(1)\\n\","
			       "\"inputs\":[{\"name\":\"a.txt\",\"content\":\"h\\u00e9\"},"
			       "{\"name\":\"b.bin\",\"contentBase64\":\"AAEC/w==\"}],"
			       "\"context\":{\"user\":\"u1\",\"roles\":[\"r\"]},\"requestId\":\"req-1.a_B\"}",
			       &rq, err, sizeof(err)),
			 0);
	assert_string_equal(rq.app, "cafe");
	assert_string_equal(rq.agent, "barista");
	assert_string_equal(rq.code, "print(1)\n");
	assert_int_equal(rq.code_len, 9);
	assert_string_equal(rq.request_id, "req-1.a_B");
	assert_int_equal(rq.ninputs, 2);
	assert_string_equal(rq.inputs[0].name, "a.txt");
	assert_int_equal(rq.inputs[0].len, 3);
	assert_memory_equal(rq.inputs[0].data, "h\xc3\xa9", 3);
	assert_string_equal(rq.inputs[1].name, "b.bin");
	assert_int_equal(rq.inputs[1].len, 4);
	assert_memory_equal(rq.inputs[1].data, "\x00\x01\x02\xff", 4);
	assert_non_null(rq.context);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(rq.context, "user")->valuestring, "u1");
	serve_exec_req_free(&rq);
	assert_null(rq.app);
	serve_exec_req_free(&rq); /* twice is safe */
}

static void test_exec_request_minimal(void **state)
{
	struct serve_exec_req rq;
	char err[256] = "";

	(void)state;
	assert_int_equal(parse("{\"app\":\"a\",\"code\":\"\"}", &rq, err, sizeof(err)), 0);
	assert_null(rq.agent);
	assert_string_equal(rq.code, "");
	assert_int_equal(rq.code_len, 0);
	assert_string_equal(rq.request_id, "");
	assert_int_equal(rq.ninputs, 0);
	assert_null(rq.context);
	serve_exec_req_free(&rq);
	/* nulls mean absent */
	assert_int_equal(parse("{\"app\":\"a\",\"code\":\"x\",\"agent\":null,\"inputs\":null,\"context\":null,"
			       "\"requestId\":null}",
			       &rq, err, sizeof(err)),
			 0);
	assert_null(rq.agent);
	serve_exec_req_free(&rq);
	/* an empty file, base64 and plain */
	assert_int_equal(parse("{\"app\":\"a\",\"code\":\"x\",\"inputs\":[{\"name\":\"e\",\"content\":\"\"},"
			       "{\"contentBase64\":\"\",\"name\":\"f\"}]}",
			       &rq, err, sizeof(err)),
			 0);
	assert_int_equal(rq.ninputs, 2);
	assert_int_equal(rq.inputs[0].len, 0);
	assert_int_equal(rq.inputs[1].len, 0);
	serve_exec_req_free(&rq);
}

static void test_exec_request_framing(void **state)
{
	(void)state;
	refused("", "malformed JSON at byte offset 0");
	refused("{\"app\":", "malformed JSON at byte offset 7");
	refused("{\"app\":\"a\",\"code\":\"\"} x", "malformed JSON at byte offset 22");
	refused("[1]", "the body must be a JSON object");
	refused("\"a\"", "the body must be a JSON object");
	refused("{\"app\":\"a\",\"code\":\"\",\"app\":\"b\"}", "key 'app' given twice in the top level");
	refused("{\"app\":\"a\",\"code\":\"\",\"context\":{\"user\":\"x\",\"user\":\"y\"}}",
		"key 'user' given twice in /context");
	refused("{\"app\":\"a\",\"code\":\"a\\u0000b\"}",
		"\\u0000 in a string at offset 20 (send binary input as contentBase64)");
	{
		static const char body[] = "{\"app\":\"a\",\0\"code\":\"\"}";
		struct serve_exec_req rq;
		char err[128];

		assert_int_equal(exec_request_parse(body, sizeof(body) - 1, &rq, err, sizeof(err)), -1);
		assert_string_equal(err, "NUL byte at offset 11");
	}
}

static void test_exec_request_fields(void **state)
{
	(void)state;
	refused("{\"code\":\"\"}", "app: missing");
	refused("{\"app\":\"a\"}", "code: missing");
	refused("{\"app\":\"a\",\"code\":\"\",\"tools\":[]}",
		"unknown key 'tools' (known: app, agent, code, inputs, context, requestId)");
	refused("{\"app\":1,\"code\":\"\"}", "app: must be a string");
	refused("{\"app\":null,\"code\":\"\"}", "app: must be a string");
	refused("{\"app\":\"\",\"code\":\"\"}", "app: must match [A-Za-z0-9._-]{1,128}");
	refused("{\"app\":\"a b\",\"code\":\"\"}", "app: must match [A-Za-z0-9._-]{1,128}");
	refused("{\"app\":\"../x\",\"code\":\"\"}", "app: must match [A-Za-z0-9._-]{1,128}");
	refused("{\"app\":\"a\",\"agent\":[],\"code\":\"\"}", "agent: must be a string or null");
	refused("{\"app\":\"a\",\"agent\":\"\\u00e9\",\"code\":\"\"}", "agent: must match [A-Za-z0-9._-]{1,128}");
	refused("{\"app\":\"a\",\"code\":1}", "code: must be a string");
	refused("{\"app\":\"a\",\"code\":null}", "code: must be a string");
	refused("{\"app\":\"a\",\"code\":\"\",\"requestId\":5}", "requestId: must be a string or null");
	refused("{\"app\":\"a\",\"code\":\"\",\"requestId\":\"\"}", "requestId: must match [A-Za-z0-9._-]{1,64}");
	refused("{\"app\":\"a\",\"code\":\"\",\"requestId\":\"a/b\"}", "requestId: must match [A-Za-z0-9._-]{1,64}");
	refused("{\"app\":\"a\",\"code\":\"\",\"context\":[]}", "context: must be an object or null");
	refused("{\"app\":\"a\",\"code\":\"\",\"context\":{\"role\":\"x\"}}",
		"context: unknown key 'role'; did you mean 'roles'? (known: tenant, project, user, session, roles, "
		"tools, accounting)");
	refused("{\"app\":\"a\",\"code\":\"\",\"context\":{\"roles\":\"x\"}}",
		"context: 'roles' must be an array of strings");
	{
		char body[400], name[140];

		memset(name, 'n', 129);
		name[129] = '\0';
		snprintf(body, sizeof(body), "{\"app\":\"%s\",\"code\":\"\"}", name);
		refused(body, "app: must match [A-Za-z0-9._-]{1,128}");
		name[128] = '\0';
		snprintf(body, sizeof(body), "{\"app\":\"a\",\"agent\":\"%s\",\"code\":\"\"}", name);
		{
			struct serve_exec_req rq;
			char err[128];

			assert_int_equal(parse(body, &rq, err, sizeof(err)), 0);
			serve_exec_req_free(&rq);
		}
		name[65] = '\0';
		snprintf(body, sizeof(body), "{\"app\":\"a\",\"code\":\"\",\"requestId\":\"%s\"}", name);
		refused(body, "requestId: must match [A-Za-z0-9._-]{1,64}");
	}
}

static void test_exec_request_inputs(void **state)
{
	(void)state;
#define IN(x) "{\"app\":\"a\",\"code\":\"\",\"inputs\":" x "}"
	refused(IN("{}"), "inputs: must be an array or null");
	refused(IN("[1]"), "inputs[0]: must be an object {\"name\", \"content\" or \"contentBase64\"}");
	refused(IN("[{\"content\":\"\"}]"), "inputs[0]: 'name' is missing");
	refused(IN("[{\"name\":1,\"content\":\"\"}]"), "inputs[0].name: must be a string");
	refused(IN("[{\"name\":\"\",\"content\":\"\"}]"), "inputs[0].name: '' is empty");
	refused(IN("[{\"name\":\".\",\"content\":\"\"}]"), "inputs[0].name: '.' is '.' or '..'");
	refused(IN("[{\"name\":\"..\",\"content\":\"\"}]"), "inputs[0].name: '..' is '.' or '..'");
	refused(IN("[{\"name\":\"d/x\",\"content\":\"\"}]"), "inputs[0].name: 'd/x' has a '/' (a base name is needed)");
	refused(IN("[{\"name\":\"main.py\",\"content\":\"\"}]"),
		"inputs[0].name: 'main.py' is reserved (main.py and user_code.py are the loader's)");
	refused(IN("[{\"name\":\"user_code.py\",\"content\":\"\"}]"),
		"inputs[0].name: 'user_code.py' is reserved (main.py and user_code.py are the loader's)");
	refused(IN("[{\"name\":\"x\",\"content\":\"\"},{\"name\":\"x\",\"content\":\"\"}]"),
		"inputs[1].name: 'x' given twice (also inputs[0])");
	refused(IN("[{\"name\":\"x\"}]"), "inputs[0]: needs exactly one of 'content' and 'contentBase64'");
	refused(IN("[{\"name\":\"x\",\"content\":\"\",\"contentBase64\":\"\"}]"),
		"inputs[0]: needs exactly one of 'content' and 'contentBase64'");
	refused(IN("[{\"name\":\"x\",\"content\":\"\",\"mode\":420}]"),
		"inputs[0]: unknown key 'mode' (known: name, content, contentBase64)");
	refused(IN("[{\"name\":\"x\",\"content\":[]}]"), "inputs[0].content: must be a string");
	refused(IN("[{\"name\":\"x\",\"contentBase64\":1}]"), "inputs[0].contentBase64: must be a string");
	refused(IN("[{\"name\":\"x\",\"contentBase64\":\"AAE\"}]"),
		"inputs[0].contentBase64: not padded standard base64 (RFC 4648 section 4)");
	refused(IN("[{\"name\":\"x\",\"contentBase64\":\"AA-_\"}]"),
		"inputs[0].contentBase64: not padded standard base64 (RFC 4648 section 4)");
	refused(IN("[{\"name\":\"x\",\"contentBase64\":\"AAEC /w==\"}]"),
		"inputs[0].contentBase64: not padded standard base64 (RFC 4648 section 4)");
	{
		char name[300];

		memset(name, 'n', 256);
		name[256] = '\0';
		char body[600];

		snprintf(body, sizeof(body), IN("[{\"name\":\"%s\",\"content\":\"\"}]"), name);
		{
			char msg[200];

			snprintf(msg, sizeof(msg), "inputs[0].name: '%.64s' is over 255 bytes", name);
			refused(body, msg);
		}
	}
	{
		/* SANDBOX_MAX_INPUTS files pass; one more is refused */
		size_t cap = 64 + (SANDBOX_MAX_INPUTS + 1) * 40;
		char *body = malloc(cap);
		size_t len;
		struct serve_exec_req rq;
		char err[128];

		assert_non_null(body);
		len = (size_t)snprintf(body, cap, "{\"app\":\"a\",\"code\":\"\",\"inputs\":[");
		for (unsigned i = 0; i < SANDBOX_MAX_INPUTS; i++)
			len += (size_t)snprintf(body + len, cap - len, "%s{\"name\":\"f%u\",\"content\":\"\"}",
						i ? "," : "", i);
		snprintf(body + len, cap - len, "]}");
		assert_int_equal(parse(body, &rq, err, sizeof(err)), 0);
		assert_int_equal(rq.ninputs, SANDBOX_MAX_INPUTS);
		serve_exec_req_free(&rq);
		snprintf(body + len, cap - len, ",{\"name\":\"g\",\"content\":\"\"}]}");
		refused(body, "inputs: more than 64 files");
		free(body);
	}
#undef IN
}

/* context_utf8_inf_accepted (issue 15): the context of a request is
 * judged as parsed, so 1e999 is named as such (a reprint made it null) and
 * a string that is not UTF-8 is refused with its field and byte. */
static void test_exec_request_context_utf8_inf_accepted(void **state)
{
	(void)state;
	refused("{\"app\":\"a\",\"code\":\"\",\"context\":{\"accounting\":{\"quota\":1e999}}}",
		"context: accounting field 'quota' is not a number within +-2^53 (it overflows a double)");
	refused("{\"app\":\"a\",\"code\":\"\",\"context\":{\"user\":\"ab\xff\"}}",
		"context: the value of 'user' is not valid UTF-8 (byte 2)");
	refused("{\"app\":\"a\",\"code\":\"\",\"context\":{\"roles\":[\"ok\",\"\xc0\xaf\"]}}",
		"context: a string of 'roles' is not valid UTF-8 (byte 0)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exec_request_full),   cmocka_unit_test(test_exec_request_minimal),
		cmocka_unit_test(test_exec_request_framing), cmocka_unit_test(test_exec_request_fields),
		cmocka_unit_test(test_exec_request_inputs), cmocka_unit_test(test_exec_request_context_utf8_inf_accepted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
