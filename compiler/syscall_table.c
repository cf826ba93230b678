/* SPDX-License-Identifier: Apache-2.0 */
/*
 * syscall_table.c - lookups over the generated x86_64 argument table.
 */
#include "compiler/syscall_table.h"

#include <stdlib.h>
#include <string.h>

#include "compiler/diag.h"

struct syscall_info {
	const char *name;
	unsigned nargs;
	const char *args[6];
};

/* Sorted by name (strcmp order) by the generator: the lookups bsearch it,
 * and test_syscall_table.c checks the order, so a hand edit that breaks it
 * fails a test instead of hiding names from the compiler. */
static const struct syscall_info syscall_table[] = {
#define SYSCALL(name, nargs, ...) { name, nargs, { __VA_ARGS__ } },
#include "compiler/syscall_table.inc"
#undef SYSCALL
};

/* The same names as a plain array, the shape suggest_nearest() takes. */
static const char *const syscall_names[] = {
#define SYSCALL(name, nargs, ...) name,
#include "compiler/syscall_table.inc"
#undef SYSCALL
};

#define SYSCALL_TABLE_LEN (sizeof(syscall_table) / sizeof(syscall_table[0]))

static int syscall_info_cmp(const void *key, const void *elem)
{
	const struct syscall_info *info = elem;

	return strcmp(key, info->name);
}

static const struct syscall_info *syscall_info_find(const char *name)
{
	if (name == NULL)
		return NULL;
	return bsearch(name, syscall_table, SYSCALL_TABLE_LEN, sizeof(syscall_table[0]), syscall_info_cmp);
}

int syscall_nargs(const char *name)
{
	const struct syscall_info *info = syscall_info_find(name);

	return info ? (int)info->nargs : -1;
}

const char *syscall_arg_name(const char *name, unsigned i)
{
	const struct syscall_info *info = syscall_info_find(name);

	if (info == NULL || i >= info->nargs)
		return NULL;
	return info->args[i];
}

const char *syscall_suggest(const char *name)
{
	return suggest_nearest(name, syscall_names, SYSCALL_TABLE_LEN);
}

size_t syscall_table_count(void)
{
	return SYSCALL_TABLE_LEN;
}

const char *syscall_table_name(size_t i)
{
	return i < SYSCALL_TABLE_LEN ? syscall_table[i].name : NULL;
}
