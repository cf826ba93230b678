/* SPDX-License-Identifier: Apache-2.0 */
/*
 * constants.c - lookups over the generated constant table.
 */
#include "compiler/constants.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "compiler/diag.h"

struct const_entry {
	const char *name;
	uint64_t value;
};

/* Sorted by name (strcmp order) by the generator, for bsearch; the unit
 * test checks the order. */
static const struct const_entry const_table[] = {
#define CONST(name, value) { name, value },
#include "compiler/constants.inc"
#undef CONST
};

/* The same names as a plain array, the shape suggest_nearest() takes. */
static const char *const const_names[] = {
#define CONST(name, value) name,
#include "compiler/constants.inc"
#undef CONST
};

#define CONST_TABLE_LEN (sizeof(const_table) / sizeof(const_table[0]))

static int const_entry_cmp(const void *key, const void *elem)
{
	const struct const_entry *e = elem;

	return strcmp(key, e->name);
}

int const_lookup(const char *name, uint64_t *value)
{
	const struct const_entry *e;

	if (name == NULL)
		return -1;
	e = bsearch(name, const_table, CONST_TABLE_LEN, sizeof(const_table[0]), const_entry_cmp);
	if (e == NULL)
		return -1;
	*value = e->value;
	return 0;
}

const char *const_suggest(const char *name)
{
	size_t i;

	if (name == NULL)
		return NULL;
	/* Every name in the table is upper case apart from AF_DECnet, so a
	 * lower-case spelling is the likeliest slip and is too far from the
	 * right one by edit distance to be found below. */
	for (i = 0; i < CONST_TABLE_LEN; i++)
		if (strcasecmp(name, const_names[i]) == 0)
			return const_names[i];
	return suggest_nearest(name, const_names, CONST_TABLE_LEN);
}

size_t const_count(void)
{
	return CONST_TABLE_LEN;
}

const char *const_name(size_t i)
{
	return i < CONST_TABLE_LEN ? const_table[i].name : NULL;
}
