/* SPDX-License-Identifier: Apache-2.0 */
/*
 * request.h - the tool bridge's wire format (docs/bridge.md): a frame is a
 * 4-byte big-endian length and one JSON object; the request object is
 * {"v":1,"token":…,"id":…,"tool":…,"params":{…},"messageId":…}.
 *
 * Parsing is strict because a request decides what runs with credentials:
 * one object, nothing after it, no NUL byte or \u0000 escape (cJSON would
 * end a string there, so two readers could see two different values), no
 * duplicate key at any depth (the signature check and a tool could read
 * different members), only the known members with their types.
 */
#ifndef CORDON_REQUEST_H
#define CORDON_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#define REQUEST_MAX_ID 64
#define REQUEST_MAX_MESSAGE_ID 128
#define REQUEST_TOKEN_HEX 64

enum request_fault {
	REQUEST_OK = 0,
	REQUEST_MALFORMED, /* not one JSON object: bad_request, check "json" */
	REQUEST_NO_TOKEN,  /* unauthenticated, check "token" */
	REQUEST_BAD_TOKEN,
	REQUEST_SHAPE,     /* members or types: bad_request, check "shape" */
};

struct request {
	cJSON *root;            /* owns everything below */
	const char *id;         /* NULL when the request did not get that far */
	const char *tool;
	const cJSON *params;
	const char *message_id; /* NULL when absent */
};

/*
 * Parse text[0..len) and check the token against want (REQUEST_TOKEN_HEX
 * hex digits, compared in constant time).  The token is checked right
 * after the JSON parses and before any other member is judged, so a caller
 * without it learns nothing about the shape rules.  Returns REQUEST_OK
 * with rq filled, or the fault with why; rq->root may be set either way
 * and is freed by request_free().
 */
enum request_fault request_parse(const char *text, size_t len, const char *want, struct request *rq, char *why,
				 size_t n);
void request_free(struct request *rq);

/* 1 when any object in the tree has a key twice. */
int request_has_duplicate_key(const cJSON *node);

/* The frame header: the length it announces. */
static inline uint32_t request_frame_len(const unsigned char h[4])
{
	return (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | (uint32_t)h[3];
}

static inline void request_frame_put(unsigned char h[4], uint32_t len)
{
	h[0] = (unsigned char)(len >> 24);
	h[1] = (unsigned char)(len >> 16);
	h[2] = (unsigned char)(len >> 8);
	h[3] = (unsigned char)len;
}

#endif
