/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_client.c - the C client of governed tools (runtime/client/
 * cordon_tools.c) against a fake supervisor: a thread that accepts one
 * connection on a Unix socket, records the request frame, and answers
 * with bytes chosen by each test (good answers, every error code, broken
 * frames, silence).
 *
 * What is pinned: the request's shape (v, token from $CORDON_TOKEN, id,
 * tool, params, messageId only when given); the result re-encoded; each
 * error code mapped to its enum with check and message; an unknown code
 * kept by name; and every broken answer (short header, short body,
 * oversized, not JSON, trailing bytes, NUL, wrong version, wrong id, no
 * ok, no result, no error code, closed without answer) refused as a
 * protocol error, never a crash or a result; the caller's timeout; usage
 * errors that send nothing; no supervisor at all.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "runtime/client/cordon_tools.h"

struct fake {
	char dir[64];
	char path[96];
	int lfd;
	pthread_t th;
	/* the answer: raw bytes, written after the request was read */
	const char *answer;
	size_t answer_len;
	int hang;      /* answer nothing; wait until the client goes */
	int connections;
	char request[65536];
	size_t request_len;
};

static void *fake_serve(void *arg)
{
	struct fake *f = arg;
	unsigned char head[4];
	size_t len, got = 0;
	ssize_t k;
	int c = accept(f->lfd, NULL, NULL);

	if (c < 0)
		return NULL;
	f->connections++;
	while (got < 4 && (k = read(c, head + got, 4 - got)) > 0)
		got += (size_t)k;
	len = got == 4 ? (size_t)head[0] << 24 | (size_t)head[1] << 16 | (size_t)head[2] << 8 | head[3] : 0;
	if (len >= sizeof(f->request))
		len = 0;
	got = 0;
	while (got < len && (k = read(c, f->request + got, len - got)) > 0)
		got += (size_t)k;
	f->request[got] = '\0';
	f->request_len = got;
	if (f->hang) {
		char b;

		while (read(c, &b, 1) > 0)
			;
	} else if (f->answer_len > 0) {
		size_t off = 0;

		while (off < f->answer_len && (k = write(c, f->answer + off, f->answer_len - off)) > 0)
			off += (size_t)k;
	}
	close(c);
	return NULL;
}

/* A fake supervisor listening at a fresh path, $CORDON_SOCKET set to it. */
static void fake_start(struct fake *f, const char *answer, size_t answer_len, int hang)
{
	struct sockaddr_un sa;

	memset(f, 0, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_client.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/tools.sock", f->dir);
	f->answer = answer;
	f->answer_len = answer_len;
	f->hang = hang;
	f->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(f->lfd >= 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	assert_true(strlen(f->path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, f->path, strlen(f->path) + 1);
	assert_int_equal(bind(f->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(f->lfd, 4), 0);
	assert_int_equal(setenv("CORDON_SOCKET", f->path, 1), 0);
	assert_int_equal(setenv("CORDON_TOKEN", "tok-123", 1), 0);
	assert_int_equal(pthread_create(&f->th, NULL, fake_serve, f), 0);
}

static void fake_stop(struct fake *f)
{
	/* a thread still in accept() (usage errors connect nowhere) is woken
	 * by shutting the listening socket down */
	shutdown(f->lfd, SHUT_RDWR);
	pthread_join(f->th, NULL);
	close(f->lfd);
	unlink(f->path);
	rmdir(f->dir);
}

/* A frame around text. */
static char *frame(const char *text, size_t *len)
{
	size_t n = strlen(text);
	char *b = malloc(n + 4);

	assert_non_null(b);
	b[0] = (char)(n >> 24);
	b[1] = (char)(n >> 16);
	b[2] = (char)(n >> 8);
	b[3] = (char)n;
	memcpy(b + 4, text, n);
	*len = n + 4;
	return b;
}

/* One call against an answer given as JSON text (framed here). */
static int call_with(const char *answer, const char *message_id, char **result, struct cordon_tool_error *e,
		     struct fake *f)
{
	size_t len;
	char *b = frame(answer, &len);
	int rc;

	fake_start(f, b, len, 0);
	rc = cordon_tool_call("calc.add", "{\"a\": 1, \"b\": [true, null, \"x\"]}", message_id, result, e);
	fake_stop(f);
	free(b);
	return rc;
}

static void test_success(void **state)
{
	struct cordon_tool_error e;
	struct fake f;
	char *result = (char *)"junk";
	cJSON *req;

	(void)state;
	assert_int_equal(call_with("{\"v\":1,\"id\":\"c1\",\"ok\":true,\"result\":{\"sum\":3,\"s\":\"é\"}}", NULL,
				   &result, &e, &f),
			 0);
	assert_string_equal(result, "{\"sum\":3,\"s\":\"é\"}");
	assert_int_equal(e.code, CORDON_TOOL_OK);
	free(result);
	/* what went over the wire */
	req = cJSON_Parse(f.request);
	assert_non_null(req);
	assert_int_equal(cJSON_GetObjectItem(req, "v")->valueint, 1);
	assert_string_equal(cJSON_GetObjectItem(req, "token")->valuestring, "tok-123");
	assert_string_equal(cJSON_GetObjectItem(req, "id")->valuestring, "c1");
	assert_string_equal(cJSON_GetObjectItem(req, "tool")->valuestring, "calc.add");
	assert_true(cJSON_IsObject(cJSON_GetObjectItem(req, "params")));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(req, "params"), "b")), 3);
	assert_null(cJSON_GetObjectItem(req, "messageId"));
	cJSON_Delete(req);
	assert_int_equal(f.connections, 1);

	/* a message id goes along; a result that is not an object too */
	assert_int_equal(call_with("{\"v\":1,\"id\":\"c1\",\"ok\":true,\"result\":null}", "m-7", &result, &e, &f), 0);
	assert_string_equal(result, "null");
	free(result);
	req = cJSON_Parse(f.request);
	assert_string_equal(cJSON_GetObjectItem(req, "messageId")->valuestring, "m-7");
	cJSON_Delete(req);
}

static void test_error_codes(void **state)
{
	static const struct {
		const char *name;
		enum cordon_tool_code code;
	} codes[] = {
		{ "unauthenticated", CORDON_TOOL_UNAUTHENTICATED }, { "bad_request", CORDON_TOOL_BAD_REQUEST },
		{ "unknown_tool", CORDON_TOOL_UNKNOWN_TOOL },       { "invalid_params", CORDON_TOOL_INVALID_PARAMS },
		{ "tool_denied", CORDON_TOOL_DENIED },              { "budget_exceeded", CORDON_TOOL_BUDGET_EXCEEDED },
		{ "in_doubt", CORDON_TOOL_IN_DOUBT },               { "tool_failed", CORDON_TOOL_FAILED },
		{ "tool_timeout", CORDON_TOOL_TIMEOUT },            { "internal_error", CORDON_TOOL_INTERNAL_ERROR },
		{ "frobnicated", CORDON_TOOL_OTHER },
	};
	struct cordon_tool_error e;
	struct fake f;
	char *result = NULL;
	char answer[256];

	(void)state;
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		snprintf(answer, sizeof(answer),
			 "{\"v\":1,\"id\":\"c1\",\"ok\":false,\"error\":{\"code\":\"%s\",\"check\":\"constraints[%zu]\","
			 "\"message\":\"no, %s\"}}",
			 codes[i].name, i, codes[i].name);
		assert_int_equal(call_with(answer, NULL, &result, &e, &f), -1);
		assert_null(result);
		assert_int_equal(e.code, codes[i].code);
		assert_string_equal(e.name, codes[i].name);
		snprintf(answer, sizeof(answer), "constraints[%zu]", i);
		assert_string_equal(e.check, answer);
		snprintf(answer, sizeof(answer), "no, %s", codes[i].name);
		assert_string_equal(e.message, answer);
		if (codes[i].code != CORDON_TOOL_OTHER)
			assert_string_equal(cordon_tool_code_name(e.code), codes[i].name);
	}
	/* an error about an unparsable frame has no id; no check, no message */
	assert_int_equal(call_with("{\"v\":1,\"id\":null,\"ok\":false,\"error\":{\"code\":\"bad_request\"}}", NULL, &result,
				   &e, &f),
			 -1);
	assert_int_equal(e.code, CORDON_TOOL_BAD_REQUEST);
	assert_string_equal(e.check, "");
	assert_string_equal(e.message, "bad_request");
}

/* Answers that must be refused, each with the check that names why. */
static void test_broken_answers(void **state)
{
	static const struct {
		const char *answer;
		const char *check;
	} cases[] = {
		{ "{\"v\":1,\"id\":\"c2\",\"ok\":true,\"result\":1}", "id" },
		{ "{\"v\":1,\"id\":null,\"ok\":true,\"result\":1}", "id" },
		{ "{\"v\":1,\"ok\":true,\"result\":1}", "id" },
		{ "{\"v\":2,\"id\":\"c1\",\"ok\":true,\"result\":1}", "json" },
		{ "{\"id\":\"c1\",\"ok\":true,\"result\":1}", "json" },
		{ "{\"v\":1,\"id\":\"c1\",\"ok\":\"yes\",\"result\":1}", "json" },
		{ "{\"v\":1,\"id\":\"c1\",\"ok\":true}", "json" },
		{ "{\"v\":1,\"id\":\"c1\",\"ok\":false}", "json" },
		{ "{\"v\":1,\"id\":\"c1\",\"ok\":false,\"error\":{\"code\":7}}", "json" },
		{ "{\"v\":1,\"id\":\"c1\",\"ok\":true,\"result\":1} x", "json" },
		{ "{\"v\":1,\"id\":\"c1\",\"ok\":true,\"result\":", "json" },
		{ "[1,2]", "json" },
		{ "", "json" },
	};
	struct cordon_tool_error e;
	struct fake f;
	char *result = NULL;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (call_with(cases[i].answer, NULL, &result, &e, &f) != -1)
			fail_msg("accepted: %s", cases[i].answer);
		assert_null(result);
		if (e.code != CORDON_TOOL_PROTOCOL_ERROR || strcmp(e.check, cases[i].check) != 0)
			fail_msg("%s: %s/%s (%s), want protocol_error/%s", cases[i].answer, e.name, e.check, e.message,
				 cases[i].check);
		assert_string_equal(e.name, "protocol_error");
	}
}

/* Frames cut short, too long, or holding a NUL. */
static void test_broken_frames(void **state)
{
	static const char nul_body[] = "\0\0\0\x2a{\"v\":1,\"id\":\"c1\",\"ok\":true,\"result\":\"a\0b\"}";
	static const struct {
		const char *bytes;
		size_t len;
		const char *check;
		const char *msg;
	} cases[] = {
		{ "\0\0", 2, "frame", "length header" },
		{ "\0\0\0\x10{\"v\":1", 10, "frame", "middle of an answer (6 of 16 bytes)" },
		{ "\0\x20\0\x01{}", 6, "frame", "announces 2097153 bytes" },
		{ "\xff\xff\xff\xff", 4, "frame", "announces 4294967295 bytes" },
		{ nul_body, sizeof(nul_body) - 1, "json", "NUL" },
		{ "", 0, "receive", "closed the connection without answering" },
	};
	struct cordon_tool_error e;
	struct fake f;
	char *result = NULL;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fake_start(&f, cases[i].bytes, cases[i].len, 0);
		assert_int_equal(cordon_tool_call("t.x", "{}", NULL, &result, &e), -1);
		fake_stop(&f);
		assert_null(result);
		if (e.code != CORDON_TOOL_PROTOCOL_ERROR || strcmp(e.check, cases[i].check) != 0 ||
		    strstr(e.message, cases[i].msg) == NULL)
			fail_msg("case %zu: %s/%s: %s", i, e.name, e.check, e.message);
	}
}

/* The largest answer allowed comes through whole. */
static void test_large_answer(void **state)
{
	const size_t n = CORDON_TOOLS_MAX_RESPONSE - 64;
	struct cordon_tool_error e;
	struct fake f;
	char *text = malloc(n + 1), *result = NULL, *b;
	size_t len, k;

	(void)state;
	assert_non_null(text);
	k = (size_t)snprintf(text, n, "{\"v\":1,\"id\":\"c1\",\"ok\":true,\"result\":\"");
	memset(text + k, 'a', n - k - 2);
	memcpy(text + n - 2, "\"}", 3);
	b = frame(text, &len);
	assert_int_equal(len, CORDON_TOOLS_MAX_RESPONSE - 60);
	fake_start(&f, b, len, 0);
	assert_int_equal(cordon_tool_call("t.x", "{}", NULL, &result, &e), 0);
	fake_stop(&f);
	assert_int_equal(strlen(result), n - k - 2 + 2);
	free(result);
	free(b);
	free(text);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void test_timeout(void **state)
{
	struct cordon_tool_error e;
	struct fake f;
	char *result = NULL;
	double t0;

	(void)state;
	fake_start(&f, NULL, 0, 1);
	t0 = now_s();
	assert_int_equal(cordon_tool_call_timeout("t.x", "{}", NULL, 200, &result, &e), -1);
	assert_true(now_s() - t0 >= 0.19);
	assert_true(now_s() - t0 < 5);
	fake_stop(&f);
	assert_int_equal(e.code, CORDON_TOOL_TIMEOUT);
	assert_string_equal(e.check, "client");
	assert_int_equal(f.request_len > 0, 1);
}

/* Arguments the client judges itself: nothing is sent. */
static void test_usage(void **state)
{
	static const char *const bad_params[] = { "[1,2]", "{\"a\":", "\"s\"", "", "{} {}" };
	struct cordon_tool_error e;
	struct fake f;
	char *result = NULL;

	(void)state;
	fake_start(&f, NULL, 0, 0);
	for (size_t i = 0; i < sizeof(bad_params) / sizeof(bad_params[0]); i++) {
		assert_int_equal(cordon_tool_call("t.x", bad_params[i], NULL, &result, &e), -1);
		assert_int_equal(e.code, CORDON_TOOL_USAGE);
		assert_null(result);
	}
	assert_int_equal(cordon_tool_call(NULL, "{}", NULL, &result, &e), -1);
	assert_int_equal(e.code, CORDON_TOOL_USAGE);
	assert_int_equal(cordon_tool_call("t.x", NULL, NULL, &result, &e), -1);
	assert_int_equal(e.code, CORDON_TOOL_USAGE);
	assert_int_equal(cordon_tool_call("t.x", "{}", NULL, NULL, &e), -1);
	assert_int_equal(e.code, CORDON_TOOL_USAGE);
	fake_stop(&f);
	assert_int_equal(f.connections, 0);
	assert_string_equal(cordon_tool_code_name(CORDON_TOOL_USAGE), "usage");
	assert_string_equal(cordon_tool_code_name((enum cordon_tool_code)99), "?");
}

static void test_no_supervisor(void **state)
{
	struct cordon_tool_error e;
	char *result = NULL;

	(void)state;
	assert_int_equal(setenv("CORDON_SOCKET", "/nonexistent/tools.sock", 1), 0);
	assert_int_equal(cordon_tool_call("t.x", "{}", NULL, &result, &e), -1);
	assert_int_equal(e.code, CORDON_TOOL_PROTOCOL_ERROR);
	assert_string_equal(e.check, "connect");
	assert_non_null(strstr(e.message, "/nonexistent/tools.sock"));
	assert_null(result);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_success),      cmocka_unit_test(test_error_codes),
		cmocka_unit_test(test_broken_answers), cmocka_unit_test(test_broken_frames),
		cmocka_unit_test(test_large_answer), cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_usage),        cmocka_unit_test(test_no_supervisor),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
