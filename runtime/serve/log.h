/* SPDX-License-Identifier: Apache-2.0 */
/*
 * log.h - how runtime/serve/'s modules report an event: through a function
 * serve.c gives them (the only printer of runtime/serve/), one line each.
 */
#ifndef CORDON_SERVE_LOG_H
#define CORDON_SERVE_LOG_H

typedef void serve_log_fn(void *arg, const char *msg);

/* Formats one line and hands it to log (nothing when log is NULL). */
void serve_logf(serve_log_fn *log, void *arg, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
