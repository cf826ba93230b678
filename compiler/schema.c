/* SPDX-License-Identifier: Apache-2.0 */
/*
 * schema.c - typed, located reads of YAML values; see schema.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "compiler/schema.h"
#include "compiler/units.h"

#define PATH_BYTES_MAX 4095u

void schema_path(char *buf, size_t cap, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, cap, fmt, ap);
	va_end(ap);
}

static void schema_vreport(struct schema_ctx *c, enum diag_sev sev, const struct src_file *f,
			   const struct ynode *at, const char *fmt, va_list ap)
{
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	diag_at(c->d, sev, f, at ? at->line : 0, at ? at->col : 0, "%s", msg);
}

void schema_error(struct schema_ctx *c, const struct ynode *at, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	schema_vreport(c, DIAG_ERROR, c->f, at, fmt, ap);
	va_end(ap);
}

void schema_note(struct schema_ctx *c, const struct src_file *f, const struct ynode *at, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	schema_vreport(c, DIAG_NOTE, f, at, fmt, ap);
	va_end(ap);
}

const char *schema_got(const struct ynode *n)
{
	if (n->kind == YN_MAP)
		return "a mapping";
	if (n->kind == YN_SEQ)
		return "a sequence";
	if (!n->plain)
		return "a quoted string";
	switch (n->resolve) {
	case YR_NULL: return "null (an empty value)";
	case YR_BOOL: return "a boolean";
	case YR_INT: return "an integer";
	case YR_FLOAT: return "a number";
	default: return "a string";
	}
}

int schema_map(struct schema_ctx *c, const struct ynode *n, const char *path, const char *const *keys)
{
	size_t i, nkeys = 0;
	int rc = 0;

	if (n->kind != YN_MAP) {
		schema_error(c, n, "%s: expected a mapping, got %s", path, schema_got(n));
		return -1;
	}
	while (keys[nkeys] != NULL)
		nkeys++;
	for (i = 0; i < n->n; i++) {
		const struct ynode *k = n->keys[i];
		const char *hint;
		size_t j;

		for (j = 0; j < nkeys; j++)
			if (strcmp(k->str, keys[j]) == 0)
				break;
		if (j < nkeys)
			continue;
		hint = suggest_nearest(k->str, keys, nkeys);
		if (hint != NULL)
			schema_error(c, k, "%s: unknown key '%s'; did you mean '%s'?", path, k->str, hint);
		else
			schema_error(c, k, "%s: unknown key '%s'", path, k->str);
		rc = -1;
	}
	return rc;
}

int schema_seq(struct schema_ctx *c, const struct ynode *n, const char *path)
{
	if (n->kind != YN_SEQ) {
		schema_error(c, n, "%s: expected a sequence, got %s", path, schema_got(n));
		return -1;
	}
	return 0;
}

/* A scalar usable as a string.  Plain scalars that YAML would read as null,
 * booleans or numbers are refused rather than silently stringified: the
 * author of `LANG: no` or `to: 0x10` almost certainly did not mean that. */
static int scalar_as_string(struct schema_ctx *c, const struct ynode *n, const char *path)
{
	if (n->kind != YN_SCALAR) {
		schema_error(c, n, "%s: expected a string, got %s", path, schema_got(n));
		return -1;
	}
	if (n->resolve != YR_STRING) {
		schema_error(c, n, "%s: expected a string, got %s; quote it (\"%s\") if a string is meant", path,
			     schema_got(n), n->str);
		return -1;
	}
	return 0;
}

int schema_string(struct schema_ctx *c, const struct ynode *n, const char *path, size_t min_len, size_t max_len,
		  const char **out)
{
	size_t i;

	if (scalar_as_string(c, n, path) != 0)
		return -1;
	if (n->len < min_len) {
		schema_error(c, n, "%s: must not be empty", path);
		return -1;
	}
	if (n->len > max_len) {
		schema_error(c, n, "%s: too long (%zu bytes; the limit is %zu)", path, n->len, max_len);
		return -1;
	}
	for (i = 0; i < n->len; i++) {
		unsigned char ch = (unsigned char)n->str[i];

		/* Newlines and tabs are fine in prose (descriptions); other
		 * control bytes only ever hide something from a reviewer. */
		if ((ch < 0x20 && ch != '\n' && ch != '\t') || ch == 0x7f) {
			schema_error(c, n, "%s: control character 0x%02x in string", path, ch);
			return -1;
		}
	}
	*out = arena_strndup(c->a, n->str, n->len);
	if (*out == NULL) {
		schema_error(c, n, "%s: out of memory", path);
		return -1;
	}
	return 0;
}

int schema_bool(struct schema_ctx *c, const struct ynode *n, const char *path, bool *out)
{
	if (n->kind == YN_SCALAR && n->plain && n->resolve == YR_BOOL) {
		if (strcmp(n->str, "true") == 0) {
			*out = true;
			return 0;
		}
		if (strcmp(n->str, "false") == 0) {
			*out = false;
			return 0;
		}
		schema_error(c, n, "%s: write booleans as true or false, not '%s'", path, n->str);
		return -1;
	}
	if (n->kind == YN_SCALAR && n->plain)
		schema_error(c, n, "%s: expected true or false, got '%s'", path, n->str);
	else
		schema_error(c, n, "%s: expected true or false, got %s", path, schema_got(n));
	return -1;
}

/* Numbers must be plain scalars: a quoted "5" is a string, and accepting it
 * would make `max_calls: "5"` and `max_calls: 5` mean the same to us but not
 * to every other YAML reader of the file. */
static int scalar_plain(struct schema_ctx *c, const struct ynode *n, const char *path, const char *want)
{
	if (n->kind != YN_SCALAR || !n->plain || n->resolve == YR_NULL || n->resolve == YR_BOOL) {
		schema_error(c, n, "%s: expected %s, got %s", path, want, schema_got(n));
		return -1;
	}
	return 0;
}

int schema_uint(struct schema_ctx *c, const struct ynode *n, const char *path, uint64_t min, uint64_t max,
		uint64_t *out)
{
	const char *why = NULL;
	uint64_t v;

	if (scalar_plain(c, n, path, "an integer") != 0)
		return -1;
	if (n->len > 0 && n->str[0] == '-') {
		schema_error(c, n, "%s: must not be negative (got %s)", path, n->str);
		return -1;
	}
	if (units_parse_uint(n->str, n->len, UINT64_MAX, &v, &why) != 0) {
		schema_error(c, n, "%s: invalid integer '%s': %s", path, n->str, why);
		return -1;
	}
	if (v < min || v > max) {
		schema_error(c, n, "%s: %s is out of range (%llu to %llu)", path, n->str, (unsigned long long)min,
			     (unsigned long long)max);
		return -1;
	}
	*out = v;
	return 0;
}

int schema_int(struct schema_ctx *c, const struct ynode *n, const char *path, int64_t *out)
{
	const char *why = NULL;

	if (scalar_plain(c, n, path, "an integer") != 0)
		return -1;
	if (units_parse_int(n->str, n->len, INT64_MIN, INT64_MAX, out, &why) != 0) {
		schema_error(c, n, "%s: invalid integer '%s': %s", path, n->str, why);
		return -1;
	}
	return 0;
}

int schema_number(struct schema_ctx *c, const struct ynode *n, const char *path, double *out)
{
	const char *why = NULL;

	if (scalar_plain(c, n, path, "a number") != 0)
		return -1;
	if (units_parse_number(n->str, n->len, out, &why) != 0) {
		schema_error(c, n, "%s: invalid number '%s': %s", path, n->str, why);
		return -1;
	}
	return 0;
}

int schema_size(struct schema_ctx *c, const struct ynode *n, const char *path, uint64_t min, uint64_t max,
		uint64_t *out)
{
	const char *why = NULL;
	char lo[32], hi[32];
	uint64_t v;

	if (scalar_plain(c, n, path, "a size such as 64k, 100m or 1g") != 0)
		return -1;
	if (n->len > 0 && n->str[0] == '-') {
		schema_error(c, n, "%s: a size must not be negative (got %s)", path, n->str);
		return -1;
	}
	if (units_parse_size(n->str, n->len, &v, &why) != 0) {
		schema_error(c, n, "%s: invalid size '%s': %s", path, n->str, why);
		return -1;
	}
	if (v < min || v > max) {
		units_format_size(min, lo, sizeof(lo));
		units_format_size(max, hi, sizeof(hi));
		schema_error(c, n, "%s: %s is out of range (%s to %s)", path, n->str, lo, hi);
		return -1;
	}
	*out = v;
	return 0;
}

static int check_ms_range(struct schema_ctx *c, const struct ynode *n, const char *path, uint64_t v,
			  uint64_t min_ms, uint64_t max_ms)
{
	char lo[32], hi[32];

	if (v >= min_ms && v <= max_ms)
		return 0;
	units_format_duration(min_ms, lo, sizeof(lo));
	units_format_duration(max_ms, hi, sizeof(hi));
	schema_error(c, n, "%s: %s is out of range (%s to %s)", path, n->str, lo, hi);
	return -1;
}

int schema_duration(struct schema_ctx *c, const struct ynode *n, const char *path, uint64_t min_ms,
		    uint64_t max_ms, uint64_t *out)
{
	const char *why = NULL;
	uint64_t v;

	if (scalar_plain(c, n, path, "a duration such as 30s or 500ms") != 0)
		return -1;
	if (n->len > 0 && n->str[0] == '-') {
		schema_error(c, n, "%s: a duration must not be negative (got %s)", path, n->str);
		return -1;
	}
	if (units_parse_duration_ms(n->str, n->len, &v, &why) != 0) {
		schema_error(c, n, "%s: invalid duration '%s': %s", path, n->str, why);
		return -1;
	}
	if (check_ms_range(c, n, path, v, min_ms, max_ms) != 0)
		return -1;
	*out = v;
	return 0;
}

/* A decimal with three places (units_parse_milli): seconds or CPUs, kept
 * in thousandths, its range said back in the unit the key is written in. */
struct schema_milli_unit {
	const char *want; /* "a number of seconds such as 0.5" */
	const char *what; /* "seconds" */
	int (*parse)(const char *s, size_t len, uint64_t *out, const char **why);
};

static int schema_milli(struct schema_ctx *c, const struct ynode *n, const char *path,
			const struct schema_milli_unit *u, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *why = NULL;
	uint64_t v;

	if (scalar_plain(c, n, path, u->want) != 0)
		return -1;
	if (n->len > 0 && n->str[0] == '-') {
		schema_error(c, n, "%s: must not be negative (got %s)", path, n->str);
		return -1;
	}
	if (u->parse(n->str, n->len, &v, &why) != 0) {
		schema_error(c, n, "%s: invalid number of %s '%s': %s", path, u->what, n->str, why);
		return -1;
	}
	if (v < min || v > max) {
		schema_error(c, n, "%s: %s is out of range (%llu.%03llu to %llu.%03llu %s)", path, n->str,
			     (unsigned long long)(min / 1000), (unsigned long long)(min % 1000),
			     (unsigned long long)(max / 1000), (unsigned long long)(max % 1000), u->what);
		return -1;
	}
	*out = v;
	return 0;
}

int schema_seconds(struct schema_ctx *c, const struct ynode *n, const char *path, uint64_t min_ms,
		   uint64_t max_ms, uint64_t *out)
{
	static const struct schema_milli_unit u = { "a number of seconds such as 0.5", "seconds",
						    units_parse_seconds_ms };

	return schema_milli(c, n, path, &u, min_ms, max_ms, out);
}

int schema_cpus(struct schema_ctx *c, const struct ynode *n, const char *path, uint64_t min_milli,
		uint64_t max_milli, uint64_t *out)
{
	static const struct schema_milli_unit u = { "a number of CPUs such as 0.5", "CPUs",
						    units_parse_cpus_milli };

	return schema_milli(c, n, path, &u, min_milli, max_milli, out);
}

int schema_enum(struct schema_ctx *c, const struct ynode *n, const char *path, const char *const *names,
		uint32_t *out)
{
	char list[256];
	size_t i, count = 0, used = 0;
	const char *hint;

	if (scalar_as_string(c, n, path) != 0)
		return -1;
	while (names[count] != NULL)
		count++;
	for (i = 0; i < count; i++) {
		if (strcmp(n->str, names[i]) == 0) {
			*out = (uint32_t)i;
			return 0;
		}
	}
	list[0] = '\0';
	for (i = 0; i < count && used < sizeof(list); i++) {
		int w = snprintf(list + used, sizeof(list) - used, "%s%s", i ? (i + 1 == count ? " or " : ", ") : "",
				 names[i]);
		if (w < 0)
			break;
		used += (size_t)w;
	}
	hint = suggest_nearest(n->str, names, count);
	if (hint != NULL)
		schema_error(c, n, "%s: unknown value '%s'; did you mean '%s'? (expected %s)", path, n->str, hint,
			     list);
	else
		schema_error(c, n, "%s: unknown value '%s' (expected %s)", path, n->str, list);
	return -1;
}

int schema_abs_path(struct schema_ctx *c, const struct ynode *n, const char *path, const char **out)
{
	const char *s, *comp;
	size_t i;

	if (schema_string(c, n, path, 1, PATH_BYTES_MAX, out) != 0)
		return -1;
	s = *out;
	if (s[0] != '/') {
		schema_error(c, n, "%s: '%s' is not an absolute path", path, s);
		return -1;
	}
	for (i = 0; s[i] != '\0'; i++) {
		if (s[i] == '\n' || s[i] == '\t') {
			schema_error(c, n, "%s: control character in path", path);
			return -1;
		}
	}
	if (strcmp(s, "/") == 0)
		return 0;
	if (s[strlen(s) - 1] == '/') {
		schema_error(c, n, "%s: '%s' must not end with '/'", path, s);
		return -1;
	}
	/* Walk components: each lies between two slashes. */
	comp = s + 1;
	for (;;) {
		const char *end = strchr(comp, '/');
		size_t len = end ? (size_t)(end - comp) : strlen(comp);

		if (len == 0) {
			schema_error(c, n, "%s: '%s' has an empty component ('//')", path, s);
			return -1;
		}
		if (len == 2 && comp[0] == '.' && comp[1] == '.') {
			schema_error(c, n, "%s: '%s' must not contain '..'", path, s);
			return -1;
		}
		if (len == 1 && comp[0] == '.') {
			schema_error(c, n, "%s: '%s' must not contain '.' components", path, s);
			return -1;
		}
		if (end == NULL)
			break;
		comp = end + 1;
	}
	return 0;
}

/* Does ch belong to a class like "a-z0-9_"? */
static int class_has(const char *cls, char ch)
{
	size_t i;

	for (i = 0; cls[i] != '\0'; i++) {
		if (cls[i + 1] == '-' && cls[i + 2] != '\0') {
			if (ch >= cls[i] && ch <= cls[i + 2])
				return 1;
			i += 2;
		} else if (cls[i] == ch) {
			return 1;
		}
	}
	return 0;
}

int schema_name_ok(const char *s, size_t len, const char *first, const char *rest, size_t max_len)
{
	size_t i;

	if (len == 0 || len > max_len || !class_has(first, s[0]))
		return 0;
	for (i = 1; i < len; i++)
		if (!class_has(rest, s[i]))
			return 0;
	return 1;
}

int schema_name(struct schema_ctx *c, const struct ynode *n, const char *path, const char *first,
		const char *rest, size_t max_len, const char *what, const char **out)
{
	if (scalar_as_string(c, n, path) != 0)
		return -1;
	if (!schema_name_ok(n->str, n->len, first, rest, max_len)) {
		schema_error(c, n, "%s: '%s' is not %s", path, n->str, what);
		return -1;
	}
	*out = arena_strndup(c->a, n->str, n->len);
	if (*out == NULL) {
		schema_error(c, n, "%s: out of memory", path);
		return -1;
	}
	return 0;
}
