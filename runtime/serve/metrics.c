/* SPDX-License-Identifier: Apache-2.0 */
/*
 * metrics.c - cordon serve's counters (metrics.h).
 *
 * Label values come from fixed sets (statuses, tool-call codes, HTTP
 * codes, the policies' app and agent names), so each family is a small
 * array filled on first use; a value past an array's end is counted under
 * "other" rather than growing memory on a client's say-so.  One mutex
 * guards everything: the counters are touched a few times per request.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/serve/metrics.h"

#define METRICS_LABEL_MAX 128
#define METRICS_MAX_STATUS 16
#define METRICS_MAX_CODES 32
#define METRICS_MAX_HTTP 32
#define METRICS_MAX_POOLS 128

/* Seconds; the last bucket, +Inf, is the count. */
static const double metrics_bounds[] = { .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10 };
#define METRICS_NBOUNDS (sizeof(metrics_bounds) / sizeof(metrics_bounds[0]))

struct metrics_hist {
	uint64_t bucket[METRICS_NBOUNDS]; /* not cumulative: rendered as sums */
	uint64_t count;
	uint64_t sum_us;
};

struct metrics_counter {
	char label[METRICS_LABEL_MAX + 1];
	uint64_t n;
};

struct metrics_pool {
	char app[METRICS_LABEL_MAX + 1];
	char agent[METRICS_LABEL_MAX + 1];
	unsigned warm, target;
};

struct metrics {
	pthread_mutex_t lock;
	struct metrics_counter status[METRICS_MAX_STATUS];
	struct metrics_counter tool[METRICS_MAX_CODES];
	struct {
		int code;
		uint64_t n;
	} http[METRICS_MAX_HTTP];
	struct metrics_hist exec[2]; /* [0] cold, [1] warm */
	struct metrics_hist prepare;
	uint64_t created, failed;
	struct metrics_pool pool[METRICS_MAX_POOLS];
	unsigned running, queued;
	uint64_t sessions[2]; /* created: [0] cold, [1] warm */
	uint64_t sessions_ended;
	struct metrics_counter session_end[METRICS_MAX_STATUS];
	struct metrics_counter cell[METRICS_MAX_STATUS];
};

struct metrics *metrics_new(void)
{
	struct metrics *m = calloc(1, sizeof(*m));

	if (m != NULL && pthread_mutex_init(&m->lock, NULL) != 0) {
		free(m);
		return NULL;
	}
	return m;
}

void metrics_free(struct metrics *m)
{
	if (m == NULL)
		return;
	pthread_mutex_destroy(&m->lock);
	free(m);
}

static void hist_add(struct metrics_hist *h, uint64_t us)
{
	size_t i = 0;

	while (i < METRICS_NBOUNDS && (double)us > metrics_bounds[i] * 1e6)
		i++;
	if (i < METRICS_NBOUNDS)
		h->bucket[i]++;
	h->count++;
	h->sum_us += us;
}

/* The slot for label: the last slot is kept for "other", which takes
 * empty and over-long labels and every label past the array's size. */
static struct metrics_counter *counter_slot(struct metrics_counter *v, size_t nv, const char *label)
{
	if (label == NULL || *label == '\0' || strlen(label) > METRICS_LABEL_MAX)
		label = "other";
	for (size_t i = 0; i < nv - 1; i++) {
		if (v[i].label[0] == '\0')
			strcpy(v[i].label, label);
		if (strcmp(v[i].label, label) == 0)
			return &v[i];
	}
	for (size_t i = 0; i < nv - 1; i++)
		if (strcmp(v[i].label, "other") == 0)
			return &v[i];
	strcpy(v[nv - 1].label, "other");
	return &v[nv - 1];
}

void metrics_execution(struct metrics *m, const char *status, int warm, uint64_t latency_us)
{
	pthread_mutex_lock(&m->lock);
	counter_slot(m->status, METRICS_MAX_STATUS, status)->n++;
	hist_add(&m->exec[warm ? 1 : 0], latency_us);
	pthread_mutex_unlock(&m->lock);
}

void metrics_http(struct metrics *m, int http_status)
{
	size_t i;

	/* code 0 is "other": out of range, or past the array (its last slot) */
	if (http_status < 100 || http_status > 599)
		http_status = 0;
	pthread_mutex_lock(&m->lock);
	for (i = 0; i < METRICS_MAX_HTTP - 1; i++)
		if (m->http[i].n == 0 || m->http[i].code == http_status)
			break;
	if (i == METRICS_MAX_HTTP - 1) {
		http_status = 0;
		for (i = 0; i < METRICS_MAX_HTTP - 1 && m->http[i].code != 0; i++)
			;
	}
	m->http[i].code = http_status;
	m->http[i].n++;
	pthread_mutex_unlock(&m->lock);
}

void metrics_tool_call(struct metrics *m, const char *code)
{
	pthread_mutex_lock(&m->lock);
	counter_slot(m->tool, METRICS_MAX_CODES, code)->n++;
	pthread_mutex_unlock(&m->lock);
}

void metrics_sandbox_created(struct metrics *m, uint64_t prepare_us)
{
	pthread_mutex_lock(&m->lock);
	m->created++;
	hist_add(&m->prepare, prepare_us);
	pthread_mutex_unlock(&m->lock);
}

void metrics_sandbox_failed(struct metrics *m)
{
	pthread_mutex_lock(&m->lock);
	m->failed++;
	pthread_mutex_unlock(&m->lock);
}

void metrics_pool_size(struct metrics *m, const char *app, const char *agent, unsigned warm, unsigned target)
{
	if (app == NULL || strlen(app) > METRICS_LABEL_MAX)
		app = "other";
	if (agent == NULL)
		agent = "";
	if (strlen(agent) > METRICS_LABEL_MAX)
		agent = "other";
	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < METRICS_MAX_POOLS; i++) {
		struct metrics_pool *p = &m->pool[i];

		if (p->app[0] == '\0') {
			strcpy(p->app, app);
			strcpy(p->agent, agent);
		} else if (strcmp(p->app, app) != 0 || strcmp(p->agent, agent) != 0) {
			continue;
		}
		p->warm = warm;
		p->target = target;
		break;
	}
	pthread_mutex_unlock(&m->lock);
}

void metrics_running(struct metrics *m, unsigned running, unsigned queued)
{
	pthread_mutex_lock(&m->lock);
	m->running = running;
	m->queued = queued;
	pthread_mutex_unlock(&m->lock);
}

void metrics_session_started(struct metrics *m, int warm)
{
	pthread_mutex_lock(&m->lock);
	m->sessions[warm ? 1 : 0]++;
	pthread_mutex_unlock(&m->lock);
}

void metrics_session_ended(struct metrics *m, const char *reason)
{
	pthread_mutex_lock(&m->lock);
	m->sessions_ended++;
	counter_slot(m->session_end, METRICS_MAX_STATUS, reason)->n++;
	pthread_mutex_unlock(&m->lock);
}

void metrics_cell(struct metrics *m, const char *status)
{
	pthread_mutex_lock(&m->lock);
	counter_slot(m->cell, METRICS_MAX_STATUS, status)->n++;
	pthread_mutex_unlock(&m->lock);
}

/* A label value in the exposition format: \ " and newline escaped. */
static void put_label(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '"')
			fputs("\\\"", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

static void put_head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* labels: "" or `warm="true",` (with the trailing comma). */
static void put_hist(FILE *f, const char *name, const char *labels, const struct metrics_hist *h)
{
	uint64_t cum = 0;

	for (size_t i = 0; i < METRICS_NBOUNDS; i++) {
		cum += h->bucket[i];
		fprintf(f, "%s_bucket{%sle=\"%g\"} %llu\n", name, labels, metrics_bounds[i], (unsigned long long)cum);
	}
	fprintf(f, "%s_bucket{%sle=\"+Inf\"} %llu\n", name, labels, (unsigned long long)h->count);
	if (labels[0] != '\0') {
		/* labels without the trailing comma */
		fprintf(f, "%s_sum{%.*s} %.6f\n", name, (int)strlen(labels) - 1, labels, (double)h->sum_us / 1e6);
		fprintf(f, "%s_count{%.*s} %llu\n", name, (int)strlen(labels) - 1, labels,
			(unsigned long long)h->count);
	} else {
		fprintf(f, "%s_sum %.6f\n", name, (double)h->sum_us / 1e6);
		fprintf(f, "%s_count %llu\n", name, (unsigned long long)h->count);
	}
}

static void put_counters(FILE *f, const char *name, const char *label, const struct metrics_counter *v, size_t nv)
{
	for (size_t i = 0; i < nv; i++) {
		if (v[i].label[0] == '\0')
			continue;
		fprintf(f, "%s{%s=\"", name, label);
		put_label(f, v[i].label);
		fprintf(f, "\"} %llu\n", (unsigned long long)v[i].n);
	}
}

/* One gauge a pool: its warm count, or (target) the count it keeps. */
static void put_pools(FILE *f, const char *name, const struct metrics_pool *v, int target)
{
	for (size_t i = 0; i < METRICS_MAX_POOLS && v[i].app[0] != '\0'; i++) {
		fprintf(f, "%s{app=\"", name);
		put_label(f, v[i].app);
		fputs("\",agent=\"", f);
		put_label(f, v[i].agent);
		fprintf(f, "\"} %u\n", target ? v[i].target : v[i].warm);
	}
}

static void metrics_write(FILE *f, const struct metrics *m)
{
	put_head(f, "cordon_executions_total", "counter", "Executions finished, by result status.");
	put_counters(f, "cordon_executions_total", "status", m->status, METRICS_MAX_STATUS);
	put_head(f, "cordon_execution_seconds", "histogram",
		 "Request received to result written, by whether a warm sandbox served it.");
	put_hist(f, "cordon_execution_seconds", "warm=\"false\",", &m->exec[0]);
	put_hist(f, "cordon_execution_seconds", "warm=\"true\",", &m->exec[1]);
	put_head(f, "cordon_http_requests_total", "counter", "HTTP responses, by status code.");
	for (size_t i = 0; i < METRICS_MAX_HTTP; i++) {
		if (m->http[i].n == 0)
			continue;
		if (m->http[i].code == 0)
			fprintf(f, "cordon_http_requests_total{code=\"other\"} %llu\n", (unsigned long long)m->http[i].n);
		else
			fprintf(f, "cordon_http_requests_total{code=\"%d\"} %llu\n", m->http[i].code,
				(unsigned long long)m->http[i].n);
	}
	put_head(f, "cordon_tool_calls_total", "counter", "Tool calls, by answer code.");
	put_counters(f, "cordon_tool_calls_total", "code", m->tool, METRICS_MAX_CODES);
	put_head(f, "cordon_sandboxes_created_total", "counter", "Sandboxes prepared.");
	fprintf(f, "cordon_sandboxes_created_total %llu\n", (unsigned long long)m->created);
	put_head(f, "cordon_sandboxes_failed_total", "counter", "Sandboxes that failed to prepare.");
	fprintf(f, "cordon_sandboxes_failed_total %llu\n", (unsigned long long)m->failed);
	put_head(f, "cordon_sandbox_prepare_seconds", "histogram", "Time to prepare a sandbox (pool refill).");
	put_hist(f, "cordon_sandbox_prepare_seconds", "", &m->prepare);
	put_head(f, "cordon_pool_warm", "gauge", "Warm sandboxes waiting, by pool.");
	put_pools(f, "cordon_pool_warm", m->pool, 0);
	put_head(f, "cordon_pool_target", "gauge", "Warm sandboxes each pool keeps.");
	put_pools(f, "cordon_pool_target", m->pool, 1);
	put_head(f, "cordon_executions_running", "gauge", "Executions running now.");
	fprintf(f, "cordon_executions_running %u\n", m->running);
	put_head(f, "cordon_executions_queued", "gauge", "Executions waiting for a slot.");
	fprintf(f, "cordon_executions_queued %u\n", m->queued);
	put_head(f, "cordon_sessions_created_total", "counter",
		 "Code-interpreter sessions started, by whether a warm sandbox held them.");
	fprintf(f, "cordon_sessions_created_total{warm=\"false\"} %llu\n", (unsigned long long)m->sessions[0]);
	fprintf(f, "cordon_sessions_created_total{warm=\"true\"} %llu\n", (unsigned long long)m->sessions[1]);
	put_head(f, "cordon_sessions_ended_total", "counter", "Sessions ended, by reason.");
	put_counters(f, "cordon_sessions_ended_total", "reason", m->session_end, METRICS_MAX_STATUS);
	put_head(f, "cordon_sessions_active", "gauge", "Sessions alive now.");
	fprintf(f, "cordon_sessions_active %llu\n",
		(unsigned long long)(m->sessions[0] + m->sessions[1] - m->sessions_ended));
	put_head(f, "cordon_cells_total", "counter", "Session cells run, by result status.");
	put_counters(f, "cordon_cells_total", "status", m->cell, METRICS_MAX_STATUS);
}

char *metrics_render(struct metrics *m, size_t *len)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	int bad;

	if (f == NULL)
		return NULL;
	pthread_mutex_lock(&m->lock);
	metrics_write(f, m);
	pthread_mutex_unlock(&m->lock);
	bad = ferror(f);
	if (fclose(f) != 0 || bad) {
		free(buf);
		return NULL;
	}
	if (len != NULL)
		*len = size;
	return buf;
}
