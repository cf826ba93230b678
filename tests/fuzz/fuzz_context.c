/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_context.c - the request context parser (runtime/context.c): any
 * input gives an object that holds only the allowed keys and types, or an
 * error; never a crash or a leak.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/context.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	cJSON *ctx = context_parse((const char *)data, size, err, sizeof(err));

	if (ctx == NULL) {
		if (memchr(err, '\0', sizeof(err)) == NULL || err[0] == '\0')
			abort(); /* every refusal says why */
		return 0;
	}
	if (!cJSON_IsObject(ctx))
		abort();
	for (cJSON *it = ctx->child; it != NULL; it = it->next)
		if (!cJSON_IsString(it) && !cJSON_IsArray(it) &&
		    !(cJSON_IsObject(it) && strcmp(it->string, "accounting") == 0))
			abort();
	cJSON_Delete(ctx);
	return 0;
}
