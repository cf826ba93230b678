/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_secrets.c - the secrets file's rules (runtime/supervise/secrets.c,
 * secrets_parse_text): any text gives secrets whose names are well formed,
 * or an error that names a line and never quotes the text; never a crash
 * or a leak.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/supervise/secrets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct secrets *s = NULL;
	char err[512] = "";

	if (secrets_parse_text((const char *)data, size, "fuzz.env", &s, err, sizeof(err)) != 0) {
		if (memchr(err, '\0', sizeof(err)) == NULL || strncmp(err, "fuzz.env", 8) != 0)
			abort(); /* every refusal says where */
		return 0;
	}
	/* A name that parsed is found again, with a value. */
	for (size_t i = 0; i + 1 < size; i++)
		if (data[i] == '\n' && data[i + 1] == 'A' && i + 2 < size && data[i + 2] == '=' &&
		    secrets_get(s, "A") == NULL)
			abort();
	secrets_free(s);
	return 0;
}
