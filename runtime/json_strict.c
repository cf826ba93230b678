/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_strict.c - \u0000 and duplicate keys (json_strict.h).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/json_strict.h"

size_t json_nul_escape_at(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '\\')
			continue;
		if (n - i >= 6 && memcmp(s + i + 1, "u0000", 5) == 0)
			return i;
		i++;
	}
	return n;
}

struct json_ptr {
	char s[256];
	size_t len;
	bool full;
};

static void json_ptr_push(struct json_ptr *p, const char *seg)
{
	size_t need = 1;

	if (p->full)
		return;
	for (const char *c = seg; *c; c++)
		need += (*c == '~' || *c == '/') ? 2 : 1;
	if (p->len + need >= sizeof(p->s) - 4) {
		memcpy(p->s + p->len, "/...", 5);
		p->len += 4;
		p->full = true;
		return;
	}
	p->s[p->len++] = '/';
	for (const char *c = seg; *c; c++) {
		if (*c == '~' || *c == '/') {
			p->s[p->len++] = '~';
			p->s[p->len++] = *c == '~' ? '0' : '1';
		} else {
			p->s[p->len++] = *c;
		}
	}
	p->s[p->len] = '\0';
}

static int json_cmp_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int json_dup_at(const cJSON *node, struct json_ptr *ptr, const char **key)
{
	const char **keys;
	const cJSON *c;
	size_t n = 0, i = 0, len = ptr->len;
	bool full = ptr->full;
	char idx[24];

	if (!cJSON_IsObject(node) && !cJSON_IsArray(node))
		return 0;
	for (c = node->child; c != NULL; c = c->next)
		n++;
	if (cJSON_IsObject(node) && n > 1) {
		keys = malloc(n * sizeof(*keys));
		if (keys == NULL)
			return -1;
		for (c = node->child; c != NULL; c = c->next)
			keys[i++] = c->string;
		qsort(keys, n, sizeof(*keys), json_cmp_key);
		for (i = 1; i < n && *key == NULL; i++)
			if (strcmp(keys[i - 1], keys[i]) == 0)
				*key = keys[i];
		free(keys);
		if (*key != NULL)
			return 1;
	}
	i = 0;
	for (c = node->child; c != NULL; c = c->next, i++) {
		int rc;

		if (cJSON_IsObject(node)) {
			json_ptr_push(ptr, c->string);
		} else {
			snprintf(idx, sizeof(idx), "%zu", i);
			json_ptr_push(ptr, idx);
		}
		rc = json_dup_at(c, ptr, key);
		if (rc != 0)
			return rc;
		ptr->len = len;
		ptr->full = full;
		ptr->s[len] = '\0';
	}
	return 0;
}

int json_find_duplicate(const cJSON *node, const char **key, char *where, size_t n)
{
	struct json_ptr ptr = { "", 0, false };
	int rc;

	*key = NULL;
	rc = json_dup_at(node, &ptr, key);
	if (rc == 1 && where != NULL)
		snprintf(where, n, "%s", ptr.len ? ptr.s : "the top level");
	return rc;
}
