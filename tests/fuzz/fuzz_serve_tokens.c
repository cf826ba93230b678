/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_serve_tokens.c - cordon serve's tokens file (runtime/serve/tokens.c):
 * any text gives a token set or an error naming the line; never a crash or
 * a leak.  A set that loads then answers a header made from the same
 * bytes, so the constant-time check runs on every shape of token too.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/serve/engine.h"
#include "runtime/serve/tokens.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tokens *t;
	struct serve_scope scope;
	char err[512], header[300];
	size_t n = size < 200 ? size : 200;

	err[0] = '\0';
	t = tokens_parse((const char *)data, size, "fuzz", err, sizeof(err));
	if (t == NULL) {
		if (memchr(err, '\0', sizeof(err)) == NULL || strncmp(err, "fuzz", 4) != 0)
			abort(); /* every refusal names the file (and its line) */
		return 0;
	}
	memcpy(header, "Bearer ", 7);
	memcpy(header + 7, data, n);
	header[7 + n] = '\0';
	if (tokens_check(t, header, &scope) == 1 && !scope.all && scope.napps == 0)
		abort(); /* a token that passes has a scope */
	tokens_free(t);
	return 0;
}
