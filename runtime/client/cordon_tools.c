/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cordon_tools.c - the C client (cordon_tools.h).
 *
 * One connection per call: connect, send one frame, read one frame, close.
 * That keeps the library free of state (no connection to share between
 * threads or to lose across fork) at the cost of a connect per call, small
 * beside running a tool.  Frames are a 4-byte big-endian length and one
 * JSON object; an answer is read only up to CORDON_TOOLS_MAX_RESPONSE, and
 * everything in it is checked before it is believed: version, id, the
 * types of ok, result and error.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cordon_tools.h"

/* The one request of a connection has this id. */
#define CT_ID "c1"

static const char *const ct_names[] = {
	[CORDON_TOOL_OK] = "ok",
	[CORDON_TOOL_UNAUTHENTICATED] = "unauthenticated",
	[CORDON_TOOL_BAD_REQUEST] = "bad_request",
	[CORDON_TOOL_UNKNOWN_TOOL] = "unknown_tool",
	[CORDON_TOOL_INVALID_PARAMS] = "invalid_params",
	[CORDON_TOOL_DENIED] = "tool_denied",
	[CORDON_TOOL_BUDGET_EXCEEDED] = "budget_exceeded",
	[CORDON_TOOL_IN_DOUBT] = "in_doubt",
	[CORDON_TOOL_FAILED] = "tool_failed",
	[CORDON_TOOL_TIMEOUT] = "tool_timeout",
	[CORDON_TOOL_INTERNAL_ERROR] = "internal_error",
	[CORDON_TOOL_OTHER] = "other",
	[CORDON_TOOL_PROTOCOL_ERROR] = "protocol_error",
	[CORDON_TOOL_USAGE] = "usage",
};

const char *cordon_tool_code_name(enum cordon_tool_code code)
{
	if ((unsigned)code >= sizeof(ct_names) / sizeof(ct_names[0]))
		return "?";
	return ct_names[code];
}

__attribute__((format(printf, 4, 5))) static int ct_fail(struct cordon_tool_error *e, enum cordon_tool_code code,
							  const char *check, const char *fmt, ...)
{
	va_list ap;

	e->code = code;
	snprintf(e->name, sizeof(e->name), "%s", cordon_tool_code_name(code));
	snprintf(e->check, sizeof(e->check), "%s", check);
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
	return -1;
}

/* The request frame: header and JSON text in one malloc'd buffer. */
static char *ct_request(const char *tool, const char *params_json, const char *message_id, size_t *len,
			struct cordon_tool_error *e)
{
	const char *token = getenv("CORDON_TOKEN");
	cJSON *req = NULL, *params;
	char *text = NULL, *frame = NULL;
	size_t n;

	/* one value and nothing after it but white space */
	params = cJSON_ParseWithOpts(params_json, NULL, 1);
	if (!cJSON_IsObject(params)) {
		cJSON_Delete(params);
		ct_fail(e, CORDON_TOOL_USAGE, "", "params must be the text of one JSON object");
		return NULL;
	}
	req = cJSON_CreateObject();
	if (req == NULL || !cJSON_AddNumberToObject(req, "v", 1) ||
	    !cJSON_AddStringToObject(req, "token", token ? token : "") || !cJSON_AddStringToObject(req, "id", CT_ID) ||
	    !cJSON_AddStringToObject(req, "tool", tool) || !cJSON_AddItemToObject(req, "params", params)) {
		cJSON_Delete(params);
		goto oom;
	}
	if (message_id != NULL && !cJSON_AddStringToObject(req, "messageId", message_id))
		goto oom;
	text = cJSON_PrintUnformatted(req);
	if (text == NULL)
		goto oom;
	n = strlen(text);
	if (n > UINT32_MAX - 4) {
		ct_fail(e, CORDON_TOOL_USAGE, "", "the request is too large to send");
		goto out;
	}
	frame = malloc(n + 4);
	if (frame == NULL)
		goto oom;
	frame[0] = (char)(n >> 24);
	frame[1] = (char)(n >> 16);
	frame[2] = (char)(n >> 8);
	frame[3] = (char)n;
	memcpy(frame + 4, text, n);
	*len = n + 4;
	goto out;
oom:
	ct_fail(e, CORDON_TOOL_USAGE, "", "out of memory");
out:
	cJSON_free(text);
	cJSON_Delete(req);
	return frame;
}

static int ct_connect(struct cordon_tool_error *e)
{
	const char *path = getenv("CORDON_SOCKET");
	struct sockaddr_un sa;
	int fd;

	if (path == NULL || path[0] == '\0')
		path = CORDON_TOOLS_DEFAULT_SOCKET;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa.sun_path))
		return ct_fail(e, CORDON_TOOL_PROTOCOL_ERROR, "connect", "the socket path %s is too long", path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ct_fail(e, CORDON_TOOL_PROTOCOL_ERROR, "connect", "socket: %s", strerror(errno));
	while (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		if (errno == EINTR)
			continue;
		ct_fail(e, CORDON_TOOL_PROTOCOL_ERROR, "connect", "cannot connect to the tool supervisor at %s: %s", path,
			strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* Send it all; 0, or -1 with errno (EPIPE: the supervisor closed, maybe
 * after answering). */
static int ct_send(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t k = send(fd, buf, len, MSG_NOSIGNAL);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		buf += k;
		len -= (size_t)k;
	}
	return 0;
}

static long ct_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Read exactly len bytes before deadline (< 0: none).  Returns the bytes
 * read; fewer means the connection ended (errno 0), failed, or the time
 * ran out (errno ETIMEDOUT). */
static size_t ct_recv(int fd, char *buf, size_t len, long deadline)
{
	size_t got = 0;

	errno = 0;
	while (got < len) {
		ssize_t k;

		if (deadline >= 0) {
			struct pollfd p = { fd, POLLIN, 0 };
			long left = deadline - ct_now_ms();
			int r;

			if (left <= 0) {
				errno = ETIMEDOUT;
				return got;
			}
			r = poll(&p, 1, left > 1000000 ? 1000000 : (int)left);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				return got;
			if (r == 0)
				continue;
		}
		k = recv(fd, buf + got, len - got, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == ECONNRESET) {
			errno = 0;
			return got;
		}
		if (k <= 0)
			return got;
		got += (size_t)k;
	}
	return got;
}

static enum cordon_tool_code ct_code(const char *name)
{
	for (unsigned c = CORDON_TOOL_UNAUTHENTICATED; c <= CORDON_TOOL_INTERNAL_ERROR; c++)
		if (strcmp(ct_names[c], name) == 0)
			return (enum cordon_tool_code)c;
	return CORDON_TOOL_OTHER;
}

/* Judge the answer body[0..len). */
static int ct_answer(const char *body, size_t len, char **result_json, struct cordon_tool_error *e)
{
	const cJSON *v, *id, *ok, *res, *err, *code, *check, *msg;
	const char *end = NULL;
	cJSON *a;
	int rc = -1;

	if (memchr(body, '\0', len) != NULL)
		return ct_fail(e, CORDON_TOOL_PROTOCOL_ERROR, "json", "the answer holds a NUL byte");
	a = cJSON_ParseWithLengthOpts(body, len, &end, 0);
	if (a == NULL)
		return ct_fail(e, CORDON_TOOL_PROTOCOL_ERROR, "json", "the answer is not valid JSON");
	while (end != NULL && end < body + len && (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r'))
		end++;
	v = cJSON_GetObjectItemCaseSensitive(a, "v");
	id = cJSON_GetObjectItemCaseSensitive(a, "id");
	ok = cJSON_GetObjectItemCaseSensitive(a, "ok");
	if (end != body + len || !cJSON_IsObject(a)) {
		ct_fail(e, CORDON_TOOL_PROTOCOL_ERROR, "json", "the answer is not one JSON object");
	} else if (!cJSON_IsNumber(v) || v->valuedouble != 1) {
		ct_fail(e, CORDON_TOOL_PROTOCOL_ERROR, "json", "the answer is not protocol version 1");
	} else if (!cJSON_IsBool(ok)) {
		ct_fail(e, CORDON_TOOL_PROTOCOL_ERROR, "json", "the answer has no boolean 'ok'");
	} else if (!(cJSON_IsString(id) && strcmp(id->valuestring, CT_ID) == 0) &&
		   !(cJSON_IsNull(id) && cJSON_IsFalse(ok))) {
		/* an error about a frame the supervisor could not parse has no id */
		ct_fail(e, CORDON_TOOL_PROTOCOL_ERROR, "id", "the answer is not for this request");
	} else if (cJSON_IsTrue(ok)) {
		res = cJSON_GetObjectItemCaseSensitive(a, "result");
		if (res == NULL) {
			ct_fail(e, CORDON_TOOL_PROTOCOL_ERROR, "json", "the answer has no 'result'");
		} else if ((*result_json = cJSON_PrintUnformatted(res)) == NULL) {
			ct_fail(e, CORDON_TOOL_USAGE, "", "out of memory");
		} else {
			rc = 0;
		}
	} else {
		err = cJSON_GetObjectItemCaseSensitive(a, "error");
		code = cJSON_GetObjectItemCaseSensitive(err, "code");
		check = cJSON_GetObjectItemCaseSensitive(err, "check");
		msg = cJSON_GetObjectItemCaseSensitive(err, "message");
		if (!cJSON_IsString(code)) {
			ct_fail(e, CORDON_TOOL_PROTOCOL_ERROR, "json", "the answer has no error code");
		} else {
			ct_fail(e, ct_code(code->valuestring), cJSON_IsString(check) ? check->valuestring : "", "%s",
				cJSON_IsString(msg) ? msg->valuestring : code->valuestring);
			snprintf(e->name, sizeof(e->name), "%s", code->valuestring);
		}
	}
	cJSON_Delete(a);
	return rc;
}

int cordon_tool_call_timeout(const char *tool, const char *params_json, const char *message_id, int timeout_ms,
			     char **result_json, struct cordon_tool_error *e)
{
	long deadline = timeout_ms >= 0 ? ct_now_ms() + timeout_ms : -1;
	unsigned char head[4];
	char *frame = NULL, *body = NULL;
	size_t flen = 0, len, got;
	int fd = -1, rc = -1, sent;

	memset(e, 0, sizeof(*e));
	if (result_json == NULL)
		return ct_fail(e, CORDON_TOOL_USAGE, "", "result_json must not be NULL");
	*result_json = NULL;
	if (tool == NULL || params_json == NULL)
		return ct_fail(e, CORDON_TOOL_USAGE, "", "tool and params_json are required");
	frame = ct_request(tool, params_json, message_id, &flen, e);
	if (frame == NULL)
		goto out;
	if ((fd = ct_connect(e)) < 0)
		goto out;
	if (timeout_ms >= 0) {
		struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };

		/* a supervisor that stops reading must not hold send() forever */
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	/* A refused request may be answered and the connection closed before
	 * all of it was read: the answer is still waiting to be read. */
	sent = ct_send(fd, frame, flen);
	if (sent != 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		ct_fail(e, CORDON_TOOL_TIMEOUT, "client", "the request could not be sent within %d ms", timeout_ms);
		goto out;
	}
	got = ct_recv(fd, (char *)head, sizeof(head), deadline);
	if (got < sizeof(head)) {
		if (errno == ETIMEDOUT)
			ct_fail(e, CORDON_TOOL_TIMEOUT, "client", "no answer within %d ms", timeout_ms);
		else if (got == 0)
			ct_fail(e, CORDON_TOOL_PROTOCOL_ERROR, "receive", "the supervisor closed the connection without "
				"answering%s", sent != 0 ? " (the request could not be sent whole)" : "");
		else
			ct_fail(e, CORDON_TOOL_PROTOCOL_ERROR, "frame", "the answer ends inside its length header");
		goto out;
	}
	len = (size_t)head[0] << 24 | (size_t)head[1] << 16 | (size_t)head[2] << 8 | head[3];
	if (len > CORDON_TOOLS_MAX_RESPONSE) {
		ct_fail(e, CORDON_TOOL_PROTOCOL_ERROR, "frame", "the answer announces %zu bytes; at most %u are allowed",
			len, CORDON_TOOLS_MAX_RESPONSE);
		goto out;
	}
	body = malloc(len ? len : 1);
	if (body == NULL) {
		ct_fail(e, CORDON_TOOL_USAGE, "", "out of memory");
		goto out;
	}
	got = ct_recv(fd, body, len, deadline);
	if (got < len) {
		if (errno == ETIMEDOUT)
			ct_fail(e, CORDON_TOOL_TIMEOUT, "client", "no answer within %d ms", timeout_ms);
		else
			ct_fail(e, CORDON_TOOL_PROTOCOL_ERROR, "frame",
				"the connection ended in the middle of an answer (%zu of %zu bytes)", got, len);
		goto out;
	}
	rc = ct_answer(body, len, result_json, e);
out:
	if (fd >= 0)
		close(fd);
	free(frame);
	free(body);
	return rc;
}

int cordon_tool_call(const char *tool, const char *params_json, const char *message_id, char **result_json,
		     struct cordon_tool_error *e)
{
	return cordon_tool_call_timeout(tool, params_json, message_id, -1, result_json, e);
}
