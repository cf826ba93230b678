/* SPDX-License-Identifier: Apache-2.0 */
/*
 * schema.h - typed, located reads of YAML values for the descriptor and the
 * inventory.
 *
 * Every reader takes the node and the key path it was found at (for the
 * message: "execution.runtime.timeout: ..."), reports a located error when
 * the value is not what the key needs, and returns -1 then.  Nothing is
 * guessed: a quoted "30" is not a number, a plain yes is not a string, a
 * duration needs its unit.  Strings are copied into the policy's arena.
 */
#ifndef CORDON_SCHEMA_H
#define CORDON_SCHEMA_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler/diag.h"
#include "compiler/yaml_doc.h"
#include "cordon/arena.h"

struct schema_ctx {
	struct diags *d;
	const struct src_file *f;
	struct arena *a; /* where strings go: the policy's arena */
};

#define SCHEMA_PATH_MAX 256

/* snprintf for key paths; truncation is fine (the path is only shown). */
void schema_path(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

void schema_error(struct schema_ctx *c, const struct ynode *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void schema_note(struct schema_ctx *c, const struct src_file *f, const struct ynode *at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* "a sequence", "an integer", "a quoted string"...: what a node is, for
 * "expected X, got Y" messages. */
const char *schema_got(const struct ynode *n);

/* n must be a mapping whose keys are all in keys[] (NULL-terminated); an
 * unknown key is reported with a "did you mean" when one is close.  Returns
 * -1 when n is not a mapping or any key is unknown. */
int schema_map(struct schema_ctx *c, const struct ynode *n, const char *path, const char *const *keys);
int schema_seq(struct schema_ctx *c, const struct ynode *n, const char *path);

/* Strings: any scalar that resolves to a string (quoted, or plain and not
 * null/bool/number); length within [min_len, max_len]; no control chars. */
int schema_string(struct schema_ctx *c, const struct ynode *n, const char *path, size_t min_len, size_t max_len,
		  const char **out);
int schema_bool(struct schema_ctx *c, const struct ynode *n, const char *path, bool *out);
int schema_uint(struct schema_ctx *c, const struct ynode *n, const char *path, uint64_t min, uint64_t max,
		uint64_t *out);
int schema_int(struct schema_ctx *c, const struct ynode *n, const char *path, int64_t *out);
int schema_number(struct schema_ctx *c, const struct ynode *n, const char *path, double *out);
int schema_size(struct schema_ctx *c, const struct ynode *n, const char *path, uint64_t min, uint64_t max,
		uint64_t *out);
int schema_duration(struct schema_ctx *c, const struct ynode *n, const char *path, uint64_t min_ms,
		    uint64_t max_ms, uint64_t *out);
int schema_seconds(struct schema_ctx *c, const struct ynode *n, const char *path, uint64_t min_ms,
		   uint64_t max_ms, uint64_t *out);
/* A decimal number of CPUs ("0.5", "2"), in thousandths of a CPU. */
int schema_cpus(struct schema_ctx *c, const struct ynode *n, const char *path, uint64_t min_milli,
		uint64_t max_milli, uint64_t *out);
/* One of names[0..count); *out is its index. */
int schema_enum(struct schema_ctx *c, const struct ynode *n, const char *path, const char *const *names,
		uint32_t *out);
/* Absolute, normalised path: starts with '/', no empty, '.' or '..'
 * component, no trailing '/' (except "/" itself), at most 4095 bytes. */
int schema_abs_path(struct schema_ctx *c, const struct ynode *n, const char *path, const char **out);
/* A string matching a name pattern: first char in first[], the rest in
 * rest[] (character-class strings such as "a-z0-9_"), length 1..max_len.
 * what names the pattern in the error ("an app name: lowercase letters..."). */
int schema_name(struct schema_ctx *c, const struct ynode *n, const char *path, const char *first,
		const char *rest, size_t max_len, const char *what, const char **out);

/* Pattern matcher used by schema_name and by checks that read strings
 * directly (tool ids): 1 when s matches. */
int schema_name_ok(const char *s, size_t len, const char *first, const char *rest, size_t max_len);

#endif
