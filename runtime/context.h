/* SPDX-License-Identifier: Apache-2.0 */
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
 * Judge an already parsed context: one JSON object with only the keys
 * tenant, project, user, session (strings), roles and tools (arrays of
 * strings) and accounting (a flat object of at most 32 strings and
 * numbers), each at most once; every key and string well-formed UTF-8 and
 * at most 256 bytes; every number finite and within +-2^53 (1e999, which
 * cJSON reads as infinity, is refused).  0, or -1 with err naming the
 * field (and the byte in a string that is not UTF-8).  A caller that
 * parsed the JSON itself checks \u0000 and duplicate keys first
 * (json_strict.h).
 */
int context_check(const cJSON *ctx, char *err, size_t errlen);

/*
 * Parse text[0..len) as a context: one JSON object, nothing after it, no
 * NUL byte or \u0000, the whole text well-formed UTF-8 (else the byte
 * offset is named), then context_check().  Returns the object (caller
 * frees with cJSON_Delete), or NULL with err filled.
 */
cJSON *context_parse(const char *text, size_t len, char *err, size_t errlen);

#endif
