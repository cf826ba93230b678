/* SPDX-License-Identifier: Apache-2.0 */
/*
 * metrics.h - cordon serve's counters for GET /metrics (Prometheus text
 * exposition format 0.0.4).  Thread-safe; fixed label sets, so the
 * registry is a few arrays and no allocation after metrics_new().
 */
#ifndef CORDON_SERVE_METRICS_H
#define CORDON_SERVE_METRICS_H

#include <stddef.h>
#include <stdint.h>

struct metrics;

struct metrics *metrics_new(void);
void metrics_free(struct metrics *m);

/* cordon_executions_total{status} and cordon_execution_seconds (histogram,
 * request received -> result written, and its warm/cold label). */
void metrics_execution(struct metrics *m, const char *status, int warm, uint64_t latency_us);
/* cordon_http_requests_total{code} */
void metrics_http(struct metrics *m, int http_status);
/* cordon_tool_calls_total{code}: "ok", "denied", "budget_exceeded", ... */
void metrics_tool_call(struct metrics *m, const char *code);
/* cordon_sandboxes_created_total, cordon_sandboxes_failed_total,
 * cordon_sandbox_prepare_seconds (histogram: refill time). */
void metrics_sandbox_created(struct metrics *m, uint64_t prepare_us);
void metrics_sandbox_failed(struct metrics *m);
/* cordon_pool_warm{app,agent} (gauge), set by the pool. */
void metrics_pool_size(struct metrics *m, const char *app, const char *agent, unsigned warm, unsigned target);
/* cordon_executions_running, cordon_executions_queued (gauges). */
void metrics_running(struct metrics *m, unsigned running, unsigned queued);

/* Code-interpreter sessions (session.h): cordon_sessions_created_total
 * {warm}, cordon_sessions_ended_total{reason}, cordon_sessions_active
 * (created less ended), cordon_cells_total{status}. */
void metrics_session_started(struct metrics *m, int warm);
void metrics_session_ended(struct metrics *m, const char *reason);
void metrics_cell(struct metrics *m, const char *status);

/* The whole exposition, malloc'd text; NULL when out of memory. */
char *metrics_render(struct metrics *m, size_t *len);

#endif
