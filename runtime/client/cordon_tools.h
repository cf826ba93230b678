/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cordon_tools.h - the C client of cordon's governed tools, for programs
 * that run inside a cordon sandbox (the Python one is cordon_tools.py;
 * docs/client.md describes both and the wire protocol).
 *
 *     struct cordon_tool_error e;
 *     char *result = NULL;
 *
 *     if (cordon_tool_call("mail.send", "{\"to\":\"a@example.org\",\"subject\":\"s\",\"body\":\"b\"}",
 *                          "order-42-mail", &result, &e) != 0) {
 *             fprintf(stderr, "%s: %s\n", e.name, e.message);
 *             ...
 *     }
 *     ... use result (JSON text) ...
 *     free(result);
 *
 * Link with -lcordon_tools -lcjson.  Each call opens its own connection to
 * the supervisor ($CORDON_SOCKET, default /supervisor-socket/tools.sock,
 * token $CORDON_TOKEN), so the library keeps no state: it is safe from any
 * thread and in a child after fork.
 */
#ifndef CORDON_TOOLS_H
#define CORDON_TOOLS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CORDON_TOOLS_DEFAULT_SOCKET "/supervisor-socket/tools.sock" /* SANDBOX_SOCKET (cordon/paths.h) */
/* The supervisor never answers with more; a longer frame is refused. */
#define CORDON_TOOLS_MAX_RESPONSE (2u * 1024u * 1024u)

/* Why a call gave no result: the supervisor's error codes, then the
 * client's own. */
enum cordon_tool_code {
	CORDON_TOOL_OK = 0,
	CORDON_TOOL_UNAUTHENTICATED, /* unauthenticated: token or peer refused */
	CORDON_TOOL_BAD_REQUEST,     /* bad_request: malformed or too large */
	CORDON_TOOL_UNKNOWN_TOOL,    /* unknown_tool */
	CORDON_TOOL_INVALID_PARAMS,  /* invalid_params: the signature refused a param */
	CORDON_TOOL_DENIED,          /* tool_denied: a constraint or a role rule */
	CORDON_TOOL_BUDGET_EXCEEDED, /* budget_exceeded */
	CORDON_TOOL_IN_DOUBT,        /* in_doubt: this call or an earlier one with its id may have acted, unrecorded */
	CORDON_TOOL_FAILED,          /* tool_failed: the tool ran and failed */
	CORDON_TOOL_TIMEOUT,         /* tool_timeout; check "client": the caller's timeout ran out */
	CORDON_TOOL_INTERNAL_ERROR,  /* internal_error: the supervisor failed */
	CORDON_TOOL_OTHER,           /* a code this client does not know: see name */
	CORDON_TOOL_PROTOCOL_ERROR,  /* protocol_error: no valid answer (connection, frame, JSON, id);
				      * the call may or may not have run */
	CORDON_TOOL_USAGE,           /* usage: bad arguments; nothing was sent */
};

struct cordon_tool_error {
	enum cordon_tool_code code;
	char name[32];     /* the code as text: "tool_denied", "protocol_error", "usage", ... */
	char check[64];    /* which check decided, "" when none was named */
	char message[512]; /* in words; cut to fit */
};

/*
 * Call tool (e.g. "mail.send") with params_json (the text of one JSON
 * object) and, for a tool with a side effect, message_id (NULL: none).
 * Returns 0 with *result_json set to the tool's answer as JSON text
 * (malloc'd, NUL-terminated; free it), or -1 with *e filled and
 * *result_json NULL.  The answer is re-encoded by cJSON, so a number goes
 * through a double, as it does in the supervisor.
 */
int cordon_tool_call(const char *tool, const char *params_json, const char *message_id, char **result_json,
		     struct cordon_tool_error *e);

/* The same with a limit on the wait for the answer: timeout_ms < 0 waits
 * as long as the supervisor takes; when it runs out, -1 with
 * CORDON_TOOL_TIMEOUT and check "client" (the call may still run). */
int cordon_tool_call_timeout(const char *tool, const char *params_json, const char *message_id, int timeout_ms,
			     char **result_json, struct cordon_tool_error *e);

/* "tool_denied", ...; "?" for a value outside the enum. */
const char *cordon_tool_code_name(enum cordon_tool_code code);

#ifdef __cplusplus
}
#endif

#endif
