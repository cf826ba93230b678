/* SPDX-License-Identifier: Apache-2.0 */
/*
 * arena.h - one owner for many small allocations.
 *
 * A policy is hundreds of small strings and arrays with one lifetime; an
 * arena gives them one owner and one free, so no code path can leak or
 * double-free a piece of a policy.  Allocation failure returns NULL.
 */
#ifndef CORDON_ARENA_H
#define CORDON_ARENA_H

#include <stddef.h>

struct arena_chunk;

struct arena {
	struct arena_chunk *head;
	size_t used_total; /* bytes handed out, for limits and tests */
};

void arena_init(struct arena *a);
void arena_free(struct arena *a);
/* Zeroed memory aligned to 16; NULL on overflow or exhaustion. */
void *arena_alloc(struct arena *a, size_t size);
/* Zeroed array of n elements of size sz, overflow-checked. */
void *arena_calloc(struct arena *a, size_t n, size_t sz);
/* Copy of s[0..len) with a NUL after it. */
char *arena_strndup(struct arena *a, const char *s, size_t len);
char *arena_strdup(struct arena *a, const char *s);

#endif
