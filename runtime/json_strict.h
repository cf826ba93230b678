/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_strict.h - the two rules cJSON does not enforce and every JSON the
 * supervisor judges needs: tool requests, the request context, tools'
 * answers and result.json.
 *
 * cJSON decodes \u0000 into a NUL inside a C string, silently cutting a
 * string (or a key) short; and it keeps every member of an object,
 * duplicates included, while its lookups return the first.  Either way one
 * document could mean one thing to us and another to the next reader.
 */
#ifndef CORDON_JSON_STRICT_H
#define CORDON_JSON_STRICT_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* Byte offset of the first \u0000 escape in the JSON text s[0..n), or n.
 * Escapes are skipped in pairs, so "\\u0000" (an escaped backslash
 * followed by text) is not one. */
size_t json_nul_escape_at(const char *s, size_t n);

/* 1 when some object at or below node has a key twice: *key is that key
 * and where the object's place as a JSON pointer (RFC 6901; "the top
 * level" for node itself; whole segments only, "/..." once where is
 * full); 0 when none; -1 out of memory.  Sorting keeps a large object
 * O(n log n); depth is bounded by cJSON's nesting limit. */
int json_find_duplicate(const cJSON *node, const char **key, char *where, size_t n);

#endif
