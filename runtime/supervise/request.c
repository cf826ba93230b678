/* SPDX-License-Identifier: Apache-2.0 */
/*
 * request.c - one tool request from its bytes (request.h says why each
 * rule is there).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "common/utf8.h"
#include "runtime/json_strict.h"
#include "runtime/supervise/request.h"

static const char *const request_keys[] = { "v", "token", "id", "tool", "params", "messageId" };
#define REQUEST_NKEYS (sizeof(request_keys) / sizeof(request_keys[0]))

int request_has_duplicate_key(const cJSON *node)
{
	const char *key;

	/* Out of memory counts as a duplicate: the request is refused rather
	 * than judged unchecked. */
	return json_find_duplicate(node, &key, NULL, 0) != 0;
}

/* Printable ASCII without space: ids end up in logs and file names. */
static int request_plain(const char *s, size_t max)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++)
		if (i == max || (unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
			return 0;
	return i > 0;
}

enum request_fault request_parse(const char *text, size_t len, const char *want, struct request *rq, char *why,
				 size_t n)
{
	char *buf = NULL;
	const char *end = NULL;
	const cJSON *tok, *it;
	size_t at;
	enum request_fault f = REQUEST_MALFORMED;

	memset(rq, 0, sizeof(*rq));
	if (memchr(text, '\0', len) != NULL) {
		snprintf(why, n, "NUL byte in the frame");
		goto out;
	}
	if (json_nul_escape_at(text, len) != len) {
		snprintf(why, n, "\\u0000 in a string");
		goto out;
	}
	/* JSON is UTF-8 (RFC 8259): cJSON passes other bytes through, and
	 * they would reach the tool, its answer and the audit undecodable. */
	if ((at = utf8_prefix(text, len)) != len) {
		snprintf(why, n, "not UTF-8 at byte %zu", at);
		goto out;
	}
	buf = malloc(len + 1);
	if (buf == NULL) {
		snprintf(why, n, "out of memory");
		goto out;
	}
	memcpy(buf, text, len);
	buf[len] = '\0';
	rq->root = cJSON_ParseWithLengthOpts(buf, len + 1, &end, 1);
	if (rq->root == NULL || !cJSON_IsObject(rq->root)) {
		snprintf(why, n, rq->root == NULL ? "not valid JSON (or text after the object)" : "not a JSON object");
		goto out;
	}
	if (request_has_duplicate_key(rq->root)) {
		snprintf(why, n, "a key appears twice in one object");
		goto out;
	}
	f = REQUEST_NO_TOKEN;
	tok = cJSON_GetObjectItemCaseSensitive(rq->root, "token");
	if (!cJSON_IsString(tok)) {
		snprintf(why, n, "no token");
		goto out;
	}
	f = REQUEST_BAD_TOKEN;
	if (strlen(tok->valuestring) != REQUEST_TOKEN_HEX || strlen(want) != REQUEST_TOKEN_HEX ||
	    sodium_memcmp(tok->valuestring, want, REQUEST_TOKEN_HEX) != 0) {
		snprintf(why, n, "wrong token");
		goto out;
	}
	f = REQUEST_SHAPE;
	for (it = rq->root->child; it != NULL; it = it->next) {
		size_t k;

		for (k = 0; k < REQUEST_NKEYS && strcmp(request_keys[k], it->string) != 0; k++)
			;
		if (k == REQUEST_NKEYS) {
			snprintf(why, n, "unknown member '%.32s'", it->string);
			goto out;
		}
	}
	it = cJSON_GetObjectItemCaseSensitive(rq->root, "v");
	if (!cJSON_IsNumber(it) || it->valuedouble != 1) {
		snprintf(why, n, "'v' must be 1");
		goto out;
	}
	it = cJSON_GetObjectItemCaseSensitive(rq->root, "id");
	if (!cJSON_IsString(it) || !request_plain(it->valuestring, REQUEST_MAX_ID)) {
		snprintf(why, n, "'id' must be 1 to %d printable ASCII characters", REQUEST_MAX_ID);
		goto out;
	}
	rq->id = it->valuestring;
	it = cJSON_GetObjectItemCaseSensitive(rq->root, "tool");
	if (!cJSON_IsString(it) || !request_plain(it->valuestring, 80)) {
		snprintf(why, n, "'tool' must be a tool id");
		goto out;
	}
	rq->tool = it->valuestring;
	rq->params = cJSON_GetObjectItemCaseSensitive(rq->root, "params");
	if (!cJSON_IsObject(rq->params)) {
		snprintf(why, n, "'params' must be an object");
		goto out;
	}
	it = cJSON_GetObjectItemCaseSensitive(rq->root, "messageId");
	if (it != NULL) {
		if (!cJSON_IsString(it) || !request_plain(it->valuestring, REQUEST_MAX_MESSAGE_ID)) {
			/* Named as the program wrote it (the stubs' keyword), the
			 * wire name after it. */
			snprintf(why, n, "message_id ('messageId' in the request) must be 1 to %d printable ASCII characters",
				 REQUEST_MAX_MESSAGE_ID);
			goto out;
		}
		rq->message_id = it->valuestring;
	}
	f = REQUEST_OK;
out:
	free(buf);
	return f;
}

void request_free(struct request *rq)
{
	cJSON_Delete(rq->root);
	memset(rq, 0, sizeof(*rq));
}
