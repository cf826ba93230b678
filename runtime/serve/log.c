/* SPDX-License-Identifier: Apache-2.0 */
/*
 * log.c - serve_logf() (log.h).
 */
#include <stdarg.h>
#include <stdio.h>

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
