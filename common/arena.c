/* SPDX-License-Identifier: Apache-2.0 */
/*
 * arena.c - chunked bump allocator; see arena.h for why.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cordon/arena.h"

#define ARENA_CHUNK 8192u
#define ARENA_ALIGN 16u

struct arena_chunk {
	struct arena_chunk *next;
	size_t size;
	size_t used;
	_Alignas(16) unsigned char data[];
};

void arena_init(struct arena *a)
{
	a->head = NULL;
	a->used_total = 0;
}

void arena_free(struct arena *a)
{
	struct arena_chunk *c = a->head;

	while (c != NULL) {
		struct arena_chunk *next = c->next;
		free(c);
		c = next;
	}
	a->head = NULL;
	a->used_total = 0;
}

void *arena_alloc(struct arena *a, size_t size)
{
	struct arena_chunk *c = a->head;
	size_t need, csize;
	void *p;

	if (size == 0)
		size = 1;
	if (size > SIZE_MAX / 2)
		return NULL;
	need = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	if (c == NULL || c->size - c->used < need) {
		/* Large requests get a chunk of their own so the bump chunk
		 * in front keeps its free space. */
		csize = need > ARENA_CHUNK ? need : ARENA_CHUNK;
		c = malloc(sizeof(*c) + csize);
		if (c == NULL)
			return NULL;
		c->size = csize;
		c->used = 0;
		if (a->head != NULL && need > ARENA_CHUNK) {
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
		}
	}
	p = c->data + c->used;
	c->used += need;
	a->used_total += need;
	memset(p, 0, size);
	return p;
}

void *arena_calloc(struct arena *a, size_t n, size_t sz)
{
	if (sz != 0 && n > SIZE_MAX / sz)
		return NULL;
	return arena_alloc(a, n * sz);
}

char *arena_strndup(struct arena *a, const char *s, size_t len)
{
	char *d;

	if (len == SIZE_MAX)
		return NULL;
	d = arena_alloc(a, len + 1);
	if (d == NULL)
		return NULL;
	memcpy(d, s, len);
	d[len] = '\0';
	return d;
}

char *arena_strdup(struct arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}
