/* SPDX-License-Identifier: Apache-2.0 */
/*
 * log.c - serve_logf() (log.h), and serve_fail() (engine.h): the two ways
 * serve's library code reports, to the log or to the caller.
 */
#include <stdarg.h>
#include <stdio.h>

#include "runtime/serve/engine.h"
#include "runtime/serve/log.h"

void serve_logf(serve_log_fn *log, void *arg, const char *fmt, ...)
{
	char line[1400];
	va_list ap;

	if (log == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log(arg, line);
}

int serve_fail(struct serve_err *err, int status, const char *code, const char *fmt, ...)
{
	va_list ap;

	snprintf(err->code, sizeof(err->code), "%s", code);
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return status;
}
