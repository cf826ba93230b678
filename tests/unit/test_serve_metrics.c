/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_serve_metrics.c - cordon serve's registry (runtime/serve/metrics.c):
 * counts in, exposition text out, parsed back line by line: every sample
 * well-formed, label values escaped, histogram buckets cumulative, the
 * fixed arrays full without growing or duplicating a series.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/serve/metrics.h"

/* One parsed sample line: name{labels} value. */
struct sample {
	char name[96];
	char labels[512]; /* as written, escapes kept */
	double value;
};

/* Parses text into samples; every non-comment line must be one.  A
 * label value is read through its escapes, so a quote inside it cannot
 * end it early. */
static size_t parse_exposition(const char *text, size_t len, struct sample *v, size_t nv)
{
	size_t n = 0, pos = 0;

	while (pos < len) {
		const char *line = text + pos, *nl = memchr(line, '\n', len - pos), *p = line;
		size_t l;
		char *end;

		assert_non_null(nl); /* every line ends with a newline */
		l = (size_t)(nl - line);
		pos += l + 1;
		if (l == 0)
			fail_msg("empty line in the exposition");
		if (line[0] == '#') {
			assert_true(strncmp(line, "# HELP ", 7) == 0 || strncmp(line, "# TYPE ", 7) == 0);
			continue;
		}
		assert_true(n < nv);
		while (p < nl && *p != '{' && *p != ' ')
			p++;
		assert_true((size_t)(p - line) < sizeof(v[n].name));
		memcpy(v[n].name, line, (size_t)(p - line));
		v[n].name[p - line] = '\0';
		v[n].labels[0] = '\0';
		if (*p == '{') {
			const char *ls = ++p;
			int inq = 0;

			for (; p < nl && (inq || *p != '}'); p++) {
				if (inq && *p == '\\') {
					p++;
					assert_true(*p == '\\' || *p == '"' || *p == 'n');
				} else if (*p == '"') {
					inq = !inq;
				}
			}
			assert_true(p < nl);
			memcpy(v[n].labels, ls, (size_t)(p - ls));
			v[n].labels[p - ls] = '\0';
			p++;
		}
		assert_true(*p == ' ');
		v[n].value = strtod(p + 1, &end);
		assert_ptr_equal(end, nl);
		n++;
	}
	return n;
}

static const struct sample *find(const struct sample *v, size_t n, const char *name, const char *labels)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0 && strcmp(v[i].labels, labels) == 0)
			return &v[i];
	return NULL;
}

static double value_of(const struct sample *v, size_t n, const char *name, const char *labels)
{
	const struct sample *s = find(v, n, name, labels);

	if (s == NULL)
		fail_msg("no sample %s{%s}", name, labels);
	return s->value;
}

static struct sample samples[2048];

static size_t render(struct metrics *m)
{
	size_t len = 0, n;
	char *text = metrics_render(m, &len);

	assert_non_null(text);
	assert_int_equal(strlen(text), len);
	n = parse_exposition(text, len, samples, sizeof(samples) / sizeof(samples[0]));
	/* no series twice */
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (strcmp(samples[i].name, samples[j].name) == 0 && strcmp(samples[i].labels, samples[j].labels) == 0)
				fail_msg("series %s{%s} twice", samples[i].name, samples[i].labels);
	free(text);
	return n;
}

static void test_metrics_empty(void **state)
{
	struct metrics *m = metrics_new();
	size_t n;

	(void)state;
	assert_non_null(m);
	n = render(m);
	assert_true(value_of(samples, n, "cordon_sandboxes_created_total", "") == 0);
	assert_true(value_of(samples, n, "cordon_executions_running", "") == 0);
	assert_true(value_of(samples, n, "cordon_execution_seconds_count", "warm=\"true\"") == 0);
	assert_true(value_of(samples, n, "cordon_sandbox_prepare_seconds_bucket", "le=\"+Inf\"") == 0);
	metrics_free(m);
	metrics_free(NULL);
}

static void test_metrics_roundtrip(void **state)
{
	struct metrics *m = metrics_new();
	size_t n;

	(void)state;
	metrics_execution(m, "ok", 1, 800);         /* 0.0008 s: first bucket */
	metrics_execution(m, "ok", 1, 20000);       /* 0.02 s */
	metrics_execution(m, "timeout", 0, 11000000); /* 11 s: only +Inf */
	metrics_http(m, 200);
	metrics_http(m, 200);
	metrics_http(m, 429);
	metrics_http(m, 42);
	metrics_tool_call(m, "ok");
	metrics_tool_call(m, "denied");
	metrics_tool_call(m, "denied");
	metrics_sandbox_created(m, 5000);
	metrics_sandbox_failed(m);
	metrics_pool_size(m, "cafe", "barista", 2, 4);
	metrics_pool_size(m, "cafe", "barista", 3, 4);
	metrics_pool_size(m, "cafe", NULL, 1, 1);
	metrics_pool_size(m, "we\"ird\\app\n", "a", 0, 1);
	metrics_running(m, 5, 2);
	n = render(m);

	assert_true(value_of(samples, n, "cordon_executions_total", "status=\"ok\"") == 2);
	assert_true(value_of(samples, n, "cordon_executions_total", "status=\"timeout\"") == 1);
	assert_true(value_of(samples, n, "cordon_execution_seconds_bucket", "warm=\"true\",le=\"0.001\"") == 1);
	assert_true(value_of(samples, n, "cordon_execution_seconds_bucket", "warm=\"true\",le=\"0.01\"") == 1);
	assert_true(value_of(samples, n, "cordon_execution_seconds_bucket", "warm=\"true\",le=\"0.025\"") == 2);
	assert_true(value_of(samples, n, "cordon_execution_seconds_bucket", "warm=\"true\",le=\"+Inf\"") == 2);
	assert_true(value_of(samples, n, "cordon_execution_seconds_count", "warm=\"true\"") == 2);
	assert_float_equal(value_of(samples, n, "cordon_execution_seconds_sum", "warm=\"true\""), 0.0208, 1e-9);
	assert_true(value_of(samples, n, "cordon_execution_seconds_bucket", "warm=\"false\",le=\"10\"") == 0);
	assert_true(value_of(samples, n, "cordon_execution_seconds_bucket", "warm=\"false\",le=\"+Inf\"") == 1);
	assert_true(value_of(samples, n, "cordon_http_requests_total", "code=\"200\"") == 2);
	assert_true(value_of(samples, n, "cordon_http_requests_total", "code=\"429\"") == 1);
	assert_true(value_of(samples, n, "cordon_http_requests_total", "code=\"other\"") == 1);
	assert_true(value_of(samples, n, "cordon_tool_calls_total", "code=\"denied\"") == 2);
	assert_true(value_of(samples, n, "cordon_sandboxes_created_total", "") == 1);
	assert_true(value_of(samples, n, "cordon_sandboxes_failed_total", "") == 1);
	assert_true(value_of(samples, n, "cordon_sandbox_prepare_seconds_bucket", "le=\"0.005\"") == 1);
	assert_true(value_of(samples, n, "cordon_sandbox_prepare_seconds_bucket", "le=\"0.0025\"") == 0);
	assert_true(value_of(samples, n, "cordon_pool_warm", "app=\"cafe\",agent=\"barista\"") == 3);
	assert_true(value_of(samples, n, "cordon_pool_target", "app=\"cafe\",agent=\"barista\"") == 4);
	assert_true(value_of(samples, n, "cordon_pool_warm", "app=\"cafe\",agent=\"\"") == 1);
	assert_true(value_of(samples, n, "cordon_pool_warm", "app=\"we\\\"ird\\\\app\\n\",agent=\"a\"") == 0);
	assert_true(value_of(samples, n, "cordon_executions_running", "") == 5);
	assert_true(value_of(samples, n, "cordon_executions_queued", "") == 2);

	/* buckets never decrease */
	for (size_t i = 1; i < n; i++)
		if (strcmp(samples[i].name, "cordon_execution_seconds_bucket") == 0 &&
		    strcmp(samples[i - 1].name, samples[i].name) == 0 &&
		    strncmp(samples[i].labels, samples[i - 1].labels, 12) == 0)
			assert_true(samples[i].value >= samples[i - 1].value);
	metrics_free(m);
}

/* More distinct labels than slots: the rest is "other", once. */
static void test_metrics_overflow(void **state)
{
	struct metrics *m = metrics_new();
	char label[32];
	double total = 0;
	size_t n;

	(void)state;
	metrics_execution(m, "other", 0, 1);
	for (int i = 0; i < 40; i++) {
		snprintf(label, sizeof(label), "s%d", i);
		metrics_execution(m, label, 0, 1);
		metrics_tool_call(m, label);
	}
	for (int i = 100; i < 160; i++)
		metrics_http(m, i);
	metrics_tool_call(m, "");
	metrics_tool_call(m, NULL);
	n = render(m);
	for (size_t i = 0; i < n; i++)
		if (strcmp(samples[i].name, "cordon_executions_total") == 0)
			total += samples[i].value;
	assert_true(total == 41);
	assert_true(value_of(samples, n, "cordon_executions_total", "status=\"s0\"") == 1);
	assert_true(value_of(samples, n, "cordon_http_requests_total", "code=\"other\"") == 60 - 31);
	assert_non_null(find(samples, n, "cordon_tool_calls_total", "code=\"other\""));
	metrics_free(m);
}

static void *hammer(void *arg)
{
	struct metrics *m = arg;

	for (int i = 0; i < 10000; i++) {
		metrics_http(m, 200);
		metrics_execution(m, "ok", i & 1, (uint64_t)i);
	}
	return NULL;
}

static void test_metrics_threads(void **state)
{
	struct metrics *m = metrics_new();
	pthread_t t[4];
	size_t n;

	(void)state;
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, hammer, m), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	n = render(m);
	assert_true(value_of(samples, n, "cordon_http_requests_total", "code=\"200\"") == 40000);
	assert_true(value_of(samples, n, "cordon_executions_total", "status=\"ok\"") == 40000);
	metrics_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metrics_empty),
		cmocka_unit_test(test_metrics_roundtrip),
		cmocka_unit_test(test_metrics_overflow),
		cmocka_unit_test(test_metrics_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
