/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_serve_request.c - the POST /v1/executions body parser
 * (runtime/serve/exec_request.c): any input gives a request whose every
 * field holds its bound, or an error that says why; never a crash or a
 * leak.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/serve/exec_request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int input_name_bad(const char *s)
{
	return *s == '\0' || strchr(s, '/') != NULL || strcmp(s, ".") == 0 || strcmp(s, "..") == 0 ||
	       strcmp(s, "main.py") == 0 || strcmp(s, "user_code.py") == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct serve_exec_req rq;
	char err[512];

	if (exec_request_parse((const char *)data, size, &rq, err, sizeof(err)) != 0) {
		if (memchr(err, '\0', sizeof(err)) == NULL || err[0] == '\0')
			abort(); /* every refusal says why */
		if (rq.app != NULL || rq.code != NULL || rq.ninputs != 0 || rq.context != NULL)
			abort(); /* nothing left behind */
		return 0;
	}
	if (rq.app == NULL || !exec_request_name_ok(rq.app, EXEC_REQUEST_NAME_MAX))
		abort();
	if (rq.agent != NULL && !exec_request_name_ok(rq.agent, EXEC_REQUEST_NAME_MAX))
		abort();
	if (rq.code == NULL || strlen(rq.code) != rq.code_len)
		abort();
	if (rq.request_id[0] != '\0' && !exec_request_name_ok(rq.request_id, SERVE_REQUEST_ID_MAX))
		abort();
	if (rq.ninputs > SANDBOX_MAX_INPUTS)
		abort();
	for (unsigned i = 0; i < rq.ninputs; i++) {
		if (input_name_bad(rq.inputs[i].name) || (rq.inputs[i].len > 0 && rq.inputs[i].data == NULL))
			abort();
		for (unsigned j = 0; j < i; j++)
			if (strcmp(rq.inputs[i].name, rq.inputs[j].name) == 0)
				abort();
	}
	if (rq.context != NULL && !cJSON_IsObject(rq.context))
		abort();
	serve_exec_req_free(&rq);
	return 0;
}
