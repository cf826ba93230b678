/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_serve_stream.c - a streamed execution's event sink
 * (runtime/serve/stream.c), driven through the callbacks a sandbox calls:
 * the order of the events, UTF-8 carried across chunks, the chunk bound,
 * the buffer bound with its "dropped" marker, the final events past the
 * bound, HTTP errors before the start, and cancel when the reader leaves.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "runtime/serve/stream.h"

/* Everything queued, as text (the reader's view); caller frees. */
static char *drain(struct stream *st)
{
	size_t cap = 1 << 16, len = 0;
	char *out = malloc(cap);
	ssize_t got;

	assert_non_null(out);
	while ((got = stream_read(st, out + len, cap - len - 1, -1)) > 0) {
		len += (size_t)got;
		if (cap - len < 4096) {
			cap *= 2;
			out = realloc(out, cap);
			assert_non_null(out);
		}
	}
	out[len] = '\0';
	return out;
}

/* The NDJSON lines of text as JSON objects, in an array. */
static cJSON *events(const char *text)
{
	cJSON *arr = cJSON_CreateArray();
	const char *p = text;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char *line = strndup(p, n);

		if (n > 0) {
			cJSON *ev = cJSON_Parse(line);

			assert_non_null(ev);
			cJSON_AddItemToArray(arr, ev);
		}
		free(line);
		p += n + (nl ? 1 : 0);
	}
	return arr;
}

static const char *type_of(const cJSON *ev)
{
	return cJSON_GetObjectItemCaseSensitive(ev, "type")->valuestring;
}

static cJSON *result_doc(const char *out)
{
	cJSON *r = cJSON_CreateObject();

	cJSON_AddStringToObject(r, "executionId", "0123456789abcdef0123456789abcdef");
	cJSON_AddStringToObject(r, "status", "succeeded");
	cJSON_AddStringToObject(r, "stdout", out);
	cJSON_AddItemToObject(r, "violations", cJSON_Parse("[{\"path\":\"x\",\"code\":\"symlink\",\"message\":\"m\"}]"));
	return r;
}

static void test_order_and_text(void **state)
{
	struct stream *st = stream_new(STREAM_NDJSON, 0);
	const struct sandbox_events *ev = &stream_hooks(st)->events;
	cJSON *call = cJSON_Parse("{\"tool\":\"calc.check\",\"decision\":\"denied\"}");
	struct serve_err err = { .code = "" };
	char *text;
	cJSON *evs;

	(void)state;
	ev->started(ev->arg, "0123456789abcdef0123456789abcdef");
	assert_int_equal(stream_wait_begun(st, &err), 200);
	/* "é" (C3 A9) cut between two writes, and an invalid byte. */
	ev->output(ev->arg, 1, "a\xff" "b\xc3", 4);
	ev->call(ev->arg, call);
	ev->output(ev->arg, 1, "\xa9\n", 2);
	ev->output(ev->arg, 2, "err\n", 4);
	stream_finish(st, 200, result_doc("a\xef\xbf\xbd" "b\xc3\xa9\n"), NULL);
	text = drain(st);
	evs = events(text);
	assert_int_equal(cJSON_GetArraySize(evs), 7);
	assert_string_equal(type_of(cJSON_GetArrayItem(evs, 0)), "start");
	assert_string_equal(type_of(cJSON_GetArrayItem(evs, 1)), "stdout");
	/* the cut character is held back, not replaced */
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(evs, 1), "text")->valuestring, "a\xef\xbf\xbd" "b");
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(evs, 1), "replaced")->valueint, 1);
	assert_string_equal(type_of(cJSON_GetArrayItem(evs, 2)), "toolCall");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(evs, 3), "text")->valuestring, "\xc3\xa9\n");
	assert_string_equal(type_of(cJSON_GetArrayItem(evs, 4)), "stderr");
	assert_string_equal(type_of(cJSON_GetArrayItem(evs, 5)), "violation");
	assert_string_equal(type_of(cJSON_GetArrayItem(evs, 6)), "result");
	cJSON_Delete(evs);
	cJSON_Delete(call);
	free(text);
	stream_reader_gone(st);
}

static void test_chunk_bound(void **state)
{
	struct stream *st = stream_new(STREAM_NDJSON, 1 << 20);
	const struct sandbox_events *ev = &stream_hooks(st)->events;
	size_t n = 3 * STREAM_CHUNK_MAX + 100, total = 0;
	char *big = malloc(n), *text;
	cJSON *evs, *e;

	(void)state;
	memset(big, 'x', n);
	ev->started(ev->arg, "0123456789abcdef0123456789abcdef");
	ev->output(ev->arg, 1, big, n);
	stream_finish(st, 200, result_doc(""), NULL);
	text = drain(st);
	evs = events(text);
	cJSON_ArrayForEach(e, evs)
	{
		if (strcmp(type_of(e), "stdout") == 0) {
			size_t l = strlen(cJSON_GetObjectItem(e, "text")->valuestring);

			assert_true(l <= STREAM_CHUNK_MAX);
			total += l;
		}
	}
	assert_int_equal(total, n);
	cJSON_Delete(evs);
	free(text);
	free(big);
	stream_reader_gone(st);
}

/* A reader that reads nothing: the buffer's bound holds, what is lost is
 * counted once room comes back, and the result always arrives. */
static void test_dropped(void **state)
{
	struct stream *st = stream_new(STREAM_SSE, 8192);
	const struct sandbox_events *ev = &stream_hooks(st)->events;
	char chunk[1000], buf[4096], *text;
	uint64_t lost = 0;
	ssize_t got;

	(void)state;
	memset(chunk, 'y', sizeof(chunk));
	ev->started(ev->arg, "0123456789abcdef0123456789abcdef");
	for (int i = 0; i < 50; i++)
		ev->output(ev->arg, 1, chunk, sizeof(chunk));
	/* room again: the next chunk goes after a marker */
	got = stream_read(st, buf, sizeof(buf), -1);
	assert_true(got > 0);
	ev->output(ev->arg, 1, "z", 1);
	stream_finish(st, 200, result_doc(""), NULL);
	text = drain(st);
	{
		const char *d = strstr(text, "event: dropped\ndata: ");
		cJSON *j;

		assert_non_null(d);
		/* cJSON_Parse stops at the object's end: the rest is the next event */
		j = cJSON_Parse(d + strlen("event: dropped\ndata: "));
		assert_non_null(j);
		lost = (uint64_t)cJSON_GetObjectItem(j, "bytes")->valuedouble;
		cJSON_Delete(j);
	}
	/* 50 kB offered to an 8 KiB buffer: most of it lost, in whole chunks */
	assert_true(lost >= 40000);
	assert_int_equal(lost % sizeof(chunk), 0);
	assert_true(strstr(text, "\"text\":\"z\"") > strstr(text, "event: dropped"));
	assert_non_null(strstr(text, "event: result\n"));
	free(text);
	stream_reader_gone(st);
}

static void test_error_before_start(void **state)
{
	struct stream *st = stream_new(STREAM_NDJSON, 0);
	struct serve_err err = { .code = "overloaded", .message = "busy", .retry_after_s = 1 }, got = { .code = "" };

	(void)state;
	stream_finish(st, 429, NULL, &err);
	assert_int_equal(stream_wait_begun(st, &got), 429);
	assert_string_equal(got.code, "overloaded");
	assert_int_equal(got.retry_after_s, 1);
	stream_reader_gone(st);
}

static int cancels;
static const char *cancel_why;

static void cancel_cb(void *ctx, const char *why)
{
	(void)ctx;
	cancels++;
	cancel_why = why;
}

static void test_reader_gone_cancels(void **state)
{
	struct stream *st = stream_new(STREAM_NDJSON, 0);
	const struct serve_stream_hooks *h = stream_hooks(st);

	(void)state;
	cancels = 0;
	stream_ref(st); /* the producer's */
	h->bind_cancel(h->events.arg, cancel_cb, NULL);
	h->events.started(h->events.arg, "0123456789abcdef0123456789abcdef");
	stream_reader_gone(st);
	assert_int_equal(cancels, 1);
	assert_string_equal(cancel_why, "the client disconnected");
	/* after the reader: output is not queued, and finish is harmless */
	h->events.output(h->events.arg, 1, "late", 4);
	h->bind_cancel(h->events.arg, NULL, NULL);
	stream_finish(st, 200, result_doc(""), NULL);
	assert_int_equal(cancels, 1);
	stream_unref(st);

	/* an execution that ended is not cancelled when its reader leaves */
	st = stream_new(STREAM_NDJSON, 0);
	h = stream_hooks(st);
	h->bind_cancel(h->events.arg, cancel_cb, NULL);
	stream_finish(st, 200, result_doc(""), NULL);
	stream_reader_gone(st);
	assert_int_equal(cancels, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_text),
		cmocka_unit_test(test_chunk_bound),
		cmocka_unit_test(test_dropped),
		cmocka_unit_test(test_error_before_start),
		cmocka_unit_test(test_reader_gone_cancels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
