/* SPDX-License-Identifier: Apache-2.0 */
/*
 * context.c - the request context, checked strictly: a context decides
 * which tools and roles a run has, so a typo must not silently grant or
 * drop anything.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/suggest.h"
#include "common/utf8.h"
#include "runtime/context.h"
#include "runtime/json_strict.h"

static const char *const context_keys[] = { "tenant", "project", "user", "session", "roles", "tools", "accounting" };
#define CONTEXT_NKEYS (sizeof(context_keys) / sizeof(context_keys[0]))
#define CONTEXT_FIRST_LIST 4 /* keys from here on are arrays of strings */
#define CONTEXT_ACCOUNTING 6 /* a flat object of strings and numbers */
#define CONTEXT_MAX_ACCOUNTING 32
/* Identity strings go into every audit line, the ledger's keys and the
 * tools' environment: bounded, so none of them is cut differently. */
#define CONTEXT_MAX_FIELD 256
/* Beyond 2^53 a double no longer holds every integer: a quota or an id
 * would be printed into the audit as another number than it was sent. */
#define CONTEXT_MAX_NUMBER 9007199254740992.0

/* Every key and string of the context is copied into audit lines, the
 * ledger's keys and the tools' environment: text, or refused here with
 * the field and the byte offset in it (cJSON takes any bytes). */
static int context_utf8_ok(const char *s, const char *what, const char *name, char *err, size_t errlen)
{
	size_t n = strlen(s), at = utf8_prefix(s, n);

	if (at == n)
		return 1;
	if (name != NULL && utf8_prefix(name, strlen(name)) == strlen(name))
		snprintf(err, errlen, "%s '%.64s' is not valid UTF-8 (byte %zu)", what, name, at);
	else
		snprintf(err, errlen, "%s is not valid UTF-8 (byte %zu)", what, at);
	return 0;
}

static int context_string_ok(const cJSON *s, const char *what, char *err, size_t errlen)
{
	if (strlen(s->valuestring) > CONTEXT_MAX_FIELD) {
		snprintf(err, errlen, "'%s' holds a string over %d bytes", what, CONTEXT_MAX_FIELD);
		return 0;
	}
	return 1;
}

/* Accounting fields are copied into every audit line as they are, so they
 * stay flat and small: a platform's cost centre, a request id, a quota. */
static int context_check_accounting(const cJSON *it, char *err, size_t errlen)
{
	unsigned n = 0;

	if (!cJSON_IsObject(it)) {
		snprintf(err, errlen, "'accounting' must be an object of strings and numbers");
		return -1;
	}
	for (const cJSON *a = it->child; a != NULL; a = a->next, n++) {
		if (n == CONTEXT_MAX_ACCOUNTING) {
			snprintf(err, errlen, "'accounting' has more than %d fields", CONTEXT_MAX_ACCOUNTING);
			return -1;
		}
		if (!context_utf8_ok(a->string, "an accounting field's name", NULL, err, errlen))
			return -1;
		if (!cJSON_IsString(a) && !cJSON_IsNumber(a)) {
			snprintf(err, errlen, "accounting field '%.64s' must be a string or a number", a->string);
			return -1;
		}
		/* cJSON reads 1e999 as infinity and would print it as null. */
		if (cJSON_IsNumber(a) &&
		    !(a->valuedouble <= CONTEXT_MAX_NUMBER && a->valuedouble >= -CONTEXT_MAX_NUMBER)) {
			snprintf(err, errlen, "accounting field '%.64s' is not a number within +-2^53 (%s)", a->string,
				 isfinite(a->valuedouble) ? "too large to be exact" : "it overflows a double");
			return -1;
		}
		if (cJSON_IsString(a) && !context_utf8_ok(a->valuestring, "accounting field", a->string, err, errlen))
			return -1;
		if (strlen(a->string) > CONTEXT_MAX_FIELD || (cJSON_IsString(a) && !context_string_ok(a, "accounting", err, errlen))) {
			snprintf(err, errlen, "accounting field '%.64s' is over %d bytes", a->string, CONTEXT_MAX_FIELD);
			return -1;
		}
		for (const cJSON *dup = a->next; dup != NULL; dup = dup->next)
			if (strcmp(dup->string, a->string) == 0) {
				snprintf(err, errlen, "accounting field '%.64s' given twice", a->string);
				return -1;
			}
	}
	return 0;
}

static int context_check_member(const cJSON *it, char *err, size_t errlen)
{
	size_t k;

	if (!context_utf8_ok(it->string, "a key", NULL, err, errlen))
		return -1;
	for (k = 0; k < CONTEXT_NKEYS && strcmp(context_keys[k], it->string) != 0; k++)
		;
	if (k == CONTEXT_NKEYS) {
		const char *near = suggest_nearest(it->string, context_keys, CONTEXT_NKEYS);

		snprintf(err, errlen,
			 "unknown key '%.64s'%s%s%s (known: tenant, project, user, session, roles, tools, accounting)",
			 it->string, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
		return -1;
	}
	for (const cJSON *dup = it->next; dup != NULL; dup = dup->next)
		if (strcmp(dup->string, it->string) == 0) {
			snprintf(err, errlen, "key '%s' given twice", it->string);
			return -1;
		}
	if (k == CONTEXT_ACCOUNTING)
		return context_check_accounting(it, err, errlen);
	if (k < CONTEXT_FIRST_LIST ? !cJSON_IsString(it) : !cJSON_IsArray(it)) {
		snprintf(err, errlen, "'%s' must be %s", it->string,
			 k < CONTEXT_FIRST_LIST ? "a string" : "an array of strings");
		return -1;
	}
	if (k < CONTEXT_FIRST_LIST)
		return context_string_ok(it, it->string, err, errlen) &&
			       context_utf8_ok(it->valuestring, "the value of", it->string, err, errlen)
			       ? 0
			       : -1;
	for (const cJSON *s = it->child; s != NULL; s = s->next) {
		if (!cJSON_IsString(s)) {
			snprintf(err, errlen, "'%s' must hold strings only", it->string);
			return -1;
		}
		if (!context_string_ok(s, it->string, err, errlen) ||
		    !context_utf8_ok(s->valuestring, "a string of", it->string, err, errlen))
			return -1;
	}
	return 0;
}

int context_check(const cJSON *ctx, char *err, size_t errlen)
{
	if (!cJSON_IsObject(ctx)) {
		snprintf(err, errlen, "not a JSON object");
		return -1;
	}
	for (const cJSON *it = ctx->child; it != NULL; it = it->next)
		if (context_check_member(it, err, errlen) != 0)
			return -1;
	return 0;
}

cJSON *context_parse(const char *text, size_t len, char *err, size_t errlen)
{
	char *buf = NULL;
	cJSON *ctx = NULL;
	const char *end = NULL;
	size_t at;

	if (len > CONTEXT_MAX_BYTES) {
		snprintf(err, errlen, "over %u bytes", CONTEXT_MAX_BYTES);
		return NULL;
	}
	/* cJSON stops at a NUL and would take what follows for the end. */
	if (memchr(text, '\0', len) != NULL) {
		snprintf(err, errlen, "NUL byte at offset %zu", (size_t)((const char *)memchr(text, '\0', len) - text));
		return NULL;
	}
	if (json_nul_escape_at(text, len) != len) {
		snprintf(err, errlen, "\\u0000 in a string");
		return NULL;
	}
	/* The whole text at once, so a file's offset can be named; the
	 * strings are checked again, by field, in context_check(). */
	if ((at = utf8_prefix(text, len)) != len) {
		snprintf(err, errlen, "invalid UTF-8 at byte offset %zu", at);
		return NULL;
	}
	buf = malloc(len + 1);
	if (buf == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	memcpy(buf, text, len);
	buf[len] = '\0';
	ctx = cJSON_ParseWithLengthOpts(buf, len + 1, &end, 1);
	if (ctx == NULL || !cJSON_IsObject(ctx)) {
		snprintf(err, errlen, "not a JSON object%s", ctx == NULL ? " (invalid JSON)" : "");
		goto fail;
	}
	if (context_check(ctx, err, errlen) != 0)
		goto fail;
	free(buf);
	return ctx;
fail:
	cJSON_Delete(ctx);
	free(buf);
	return NULL;
}
