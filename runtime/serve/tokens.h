/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tokens.h - the bearer tokens of cordon serve's TCP listener (--tokens
 * FILE): one token a line, `TOKEN` (every app) or `TOKEN app1,app2`, `#`
 * comments, blank lines ignored.
 *
 * Only SHA-256 digests of the tokens are kept; a presented token is hashed
 * and compared with every digest in constant time (sodium_memcmp), so
 * neither the comparison nor the count of tokens tried leaks how much of a
 * guess matched.  The text read from the file is wiped once parsed.
 */
#ifndef CORDON_SERVE_TOKENS_H
#define CORDON_SERVE_TOKENS_H

#include <stddef.h>

struct serve_scope;
struct tokens;

/* Bounds: a token is RFC 6750's b64token, TOKENS_MIN_LEN to TOKENS_MAX_LEN
 * characters (a short one is guessable); app names are
 * [A-Za-z0-9._-]{1,128}. */
#define TOKENS_MIN_LEN 16
#define TOKENS_MAX_LEN 512
#define TOKENS_MAX 1024
#define TOKENS_MAX_APPS 256
#define TOKENS_MAX_FILE (1u << 20)

/* Reads path (O_NOFOLLOW, a regular file, not readable or writable by
 * others: mode & 0006 is refused) and parses it.  NULL with err
 * ("path:line: reason" for a bad line). */
struct tokens *tokens_load(const char *path, char *err, size_t n);

/* The parser alone: text[0..len) named name in messages.  A file without
 * any token is an error (a TCP listener nobody can use is a mistake). */
struct tokens *tokens_parse(const char *text, size_t len, const char *name, char *err, size_t n);

/* Safe on NULL; wipes the digests. */
void tokens_free(struct tokens *t);

unsigned tokens_count(const struct tokens *t);

/* header: the Authorization header's value, or NULL.  1 when it is
 * "Bearer <a token of t>": *out is that token's scope (its arrays live as
 * long as t; token_index is 1 + the token's line order, 0 being the Unix
 * socket).  0 otherwise (missing, another scheme, unknown token). */
int tokens_check(const struct tokens *t, const char *header, struct serve_scope *out);

#endif
