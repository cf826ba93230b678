/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_request.c - the tool bridge's request parser (runtime/supervise/
 * request.c), the first code to read bytes the sandbox wrote.  Any input
 * gives a fault with a reason, or a request whose members hold the
 * promised types, with no duplicate key, that parses again the same way
 * once printed; never a crash or a leak.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/supervise/request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char TOKEN[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct request rq, again;
	char why[256];
	enum request_fault f = request_parse((const char *)data, size, TOKEN, &rq, why, sizeof(why));

	if (f != REQUEST_OK) {
		if (memchr(why, '\0', sizeof(why)) == NULL || why[0] == '\0')
			abort(); /* every refusal says why */
		request_free(&rq);
		return 0;
	}
	if (rq.id == NULL || rq.tool == NULL || !cJSON_IsObject(rq.params) || request_has_duplicate_key(rq.root) ||
	    strlen(rq.id) > REQUEST_MAX_ID || (rq.message_id && strlen(rq.message_id) > REQUEST_MAX_MESSAGE_ID))
		abort();
	char *text = cJSON_PrintUnformatted(rq.root);
	if (text != NULL) {
		if (request_parse(text, strlen(text), TOKEN, &again, why, sizeof(why)) != REQUEST_OK ||
		    strcmp(again.id, rq.id) != 0 || strcmp(again.tool, rq.tool) != 0)
			abort();
		request_free(&again);
		free(text);
	}
	request_free(&rq);
	return 0;
}
