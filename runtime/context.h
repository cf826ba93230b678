/*
 * context.h - the request context of a run (--context ctx.json): who asks
 * and for what.  The tool bridge takes roles from here, never from params.
 */
#ifndef CORDON_CONTEXT_H
#define CORDON_CONTEXT_H

#include <stddef.h>

#include <cjson/cJSON.h>

#define CONTEXT_MAX_BYTES (1u << 20)

/*
 * Parse text[0..len) as a context: one JSON object, nothing after it, no
 * NUL byte, with only the keys tenant, project, user, session (strings),
 * roles and tools (arrays of strings) and accounting (a flat object of at
 * most 32 strings and numbers), each at most once.  Returns the object (caller
 * frees with cJSON_Delete), or NULL with err filled.
 */
cJSON *context_parse(const char *text, size_t len, char *err, size_t errlen);

#endif
