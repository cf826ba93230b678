/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_serve_request.c - the POST /v1/executions body parser
 * (runtime/serve/exec_request.c), and the same parser for a session's and
 * a cell's body: any input gives a request whose every field holds its
 * bound and whose keys are its kind's, or an error that says why; never a
 * crash or a leak.
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

/* One kind's parse of the input: a refusal says why and leaves nothing; a
 * request holds every bound, and only the keys its kind takes. */
static void check_kind(const uint8_t *data, size_t size, enum exec_request_kind kind)
{
	struct serve_exec_req rq;
	char err[512];

	if (exec_request_parse_kind((const char *)data, size, kind, &rq, err, sizeof(err)) != 0) {
		if (memchr(err, '\0', sizeof(err)) == NULL || err[0] == '\0')
			abort(); /* every refusal says why */
		if (rq.app != NULL || rq.code != NULL || rq.ninputs != 0 || rq.context != NULL)
			abort(); /* nothing left behind */
		return;
	}
	if ((kind == EXEC_REQ_CELL) != (rq.app == NULL))
		abort(); /* a cell names no app, the others must */
	if (rq.app != NULL && !exec_request_name_ok(rq.app, EXEC_REQUEST_NAME_MAX))
		abort();
	if (rq.agent != NULL && (kind == EXEC_REQ_CELL || !exec_request_name_ok(rq.agent, EXEC_REQUEST_NAME_MAX)))
		abort();
	if (kind == EXEC_REQ_SESSION && rq.agent == NULL)
		abort(); /* a session is held by an agent */
	if ((kind == EXEC_REQ_SESSION) != (rq.code == NULL) || (rq.code != NULL && strlen(rq.code) != rq.code_len))
		abort();
	if (rq.request_id[0] != '\0' &&
	    (kind == EXEC_REQ_SESSION || !exec_request_name_ok(rq.request_id, SERVE_REQUEST_ID_MAX)))
		abort();
	if (rq.ninputs > SANDBOX_MAX_INPUTS || (kind == EXEC_REQ_CELL && rq.ninputs != 0))
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
	/* a cell's context names who asks, nothing more */
	for (const cJSON *k = kind == EXEC_REQ_CELL && rq.context ? rq.context->child : NULL; k != NULL; k = k->next)
		if (strcmp(k->string, "tenant") != 0 && strcmp(k->string, "user") != 0)
			abort();
	serve_exec_req_free(&rq);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_kind(data, size, EXEC_REQ_EXECUTION);
	check_kind(data, size, EXEC_REQ_SESSION);
	check_kind(data, size, EXEC_REQ_CELL);
	return 0;
}
