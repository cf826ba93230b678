/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exec_request.h - the body of POST /v1/executions, checked for shape and
 * bounds before the engine sees it (docs of the API: prompts' api.md and
 * the OpenAPI file).  The engine then checks it against the policy
 * (max_code_bytes, max_file_bytes, the agent).
 *
 *   {"app": str, "agent": str|null, "code": str,
 *    "inputs": [{"name": str, "content": str} | {"name": str, "contentBase64": str}]|null,
 *    "context": {...}|null, "requestId": str|null}
 */
#ifndef CORDON_SERVE_EXEC_REQUEST_H
#define CORDON_SERVE_EXEC_REQUEST_H

#include <stddef.h>

#include "runtime/serve/engine.h"

/* App and agent names, as the policy compiler allows them. */
#define EXEC_REQUEST_NAME_MAX 128
/* An input file's name (a base name in the workspace). */
#define EXEC_REQUEST_INPUT_NAME_MAX 255

/* The bodies that share this shape: an execution's, a session's (POST
 * /v1/sessions: app, agent (required), inputs, context), a cell's (POST
 * /v1/sessions/{id}/cells: code, context naming only tenant and user,
 * requestId). */
enum exec_request_kind { EXEC_REQ_EXECUTION, EXEC_REQ_SESSION, EXEC_REQ_CELL };

/* 0 with *out filled (the caller frees it with serve_exec_req_free()), or
 * -1 with *out empty and err naming the field: "inputs[2].name: ...".
 * body need not be NUL-terminated; a NUL byte or a \u0000 escape in it is
 * refused (binary input travels as contentBase64). */
int exec_request_parse(const char *body, size_t len, struct serve_exec_req *out, char *err, size_t n);
/* The same for each kind: its keys only, the ones it needs present. */
int exec_request_parse_kind(const char *body, size_t len, enum exec_request_kind kind, struct serve_exec_req *out,
			    char *err, size_t n);

/* [A-Za-z0-9._-]{1,max}: app and agent names, request ids. */
int exec_request_name_ok(const char *s, size_t max);

#endif
