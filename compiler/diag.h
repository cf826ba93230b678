/* SPDX-License-Identifier: Apache-2.0 */
/*
 * diag.h - located diagnostics for text inputs (YAML, policy files).
 *
 * Library code never prints: it appends diagnostics here, and main() prints
 * them once at the end.  That is how one run reports every error, and how
 * tests compare diagnostics without scraping stderr.
 *
 * Printed form (what tests/corpus expects, byte for byte):
 *
 *     app.yaml:3:12: error: unknown key 'timout'; did you mean 'timeout'?
 *         timout: 30s
 *         ^
 *
 * Line and column are 1-based; the column counts characters (UTF-8 code
 * points), as libyaml does.  A diagnostic with line 0 has no position and
 * prints as "file: error: message" without a source excerpt.
 */
#ifndef CORDON_DIAG_H
#define CORDON_DIAG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/suggest.h"
#include "cordon/arena.h"

/* Where positions of a text are found without walking it from the top:
 * built once by src_read()/src_from_mem() (compiler/src_pos.c). */
struct src_index {
	struct src_stop *stops;
	size_t n;
	/* Steps walked by lookups since the build: tests check with it that
	 * the work of finding positions grows with the input, not its square. */
	size_t steps;
};

/* A text input held in memory for the whole compile, so diagnostics can
 * quote its lines.  Owns path, text and index.  One built by hand (tests)
 * may leave index NULL: its positions are then found by walking from the
 * top. */
struct src_file {
	char *path;
	char *text; /* NUL-terminated copy, len bytes before the NUL */
	size_t len;
	struct src_index *index;
};

enum diag_sev { DIAG_NOTE = 0, DIAG_WARNING = 1, DIAG_ERROR = 2 };

struct diag {
	enum diag_sev sev;
	const struct src_file *file; /* may be NULL: no file at all */
	uint32_t line, col;          /* 1-based; line 0: no position */
	char *msg;                   /* owned */
};

struct diags {
	struct diag *v;
	size_t n, cap;
	size_t nerrors, nwarnings;
	int overflow; /* more than DIAG_MAX were reported; the rest dropped */
};

#define DIAG_MAX 1000

void diags_init(struct diags *d);
void diags_free(struct diags *d);

/* Append one diagnostic.  Never fails from the caller's view: when memory
 * runs out the diagnostic is counted (nerrors/nwarnings) but its text is
 * replaced by a fixed one. */
void diag_at(struct diags *d, enum diag_sev sev, const struct src_file *f, uint32_t line, uint32_t col,
	     const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Sort d->v[from..] by file, line and column (compiler/diag_sort.c).
 * Files are ordered as in files[] (the inputs as given); a diagnostic with
 * no file comes first, one in a file not listed (a policy file) after them,
 * by path.  Within a file, one with no position (line 0) comes first.  Each
 * note stays after the error or warning before it; equal places keep the
 * order reported.  -1 when out of memory, with d left as it was. */
int diags_sort(struct diags *d, size_t from, const struct src_file *const *files, size_t nfiles);

/* Print every diagnostic in the order it holds: header line, then for a
 * positioned one the source line and a caret line. */
void diags_print(const struct diags *d, FILE *out);

/* Read a text input: at most max_bytes, no NUL byte, valid UTF-8.  A file
 * that breaks a rule gets a located diagnostic and -1; 0 on success.
 * src_free() releases what src_read() filled.  On -1 *out may still hold the
 * path and text, because the diagnostic points at it: call src_free() on
 * both outcomes, after diags_print() (src_free() of a zeroed or already
 * freed src_file is harmless). */
int src_read(const char *path, size_t max_bytes, struct src_file *out, struct diags *d);
/* Take a copy of an in-memory text (tests, fuzzers), with the same checks. */
int src_from_mem(const char *path, const char *text, size_t len, size_t max_bytes, struct src_file *out,
		 struct diags *d);
void src_free(struct src_file *f);

/* Positions (compiler/src_pos.c), each O(log n) with the index. */
/* 1-based line and column of byte offset in f->text, counted as libyaml
 * counts (code points; LF, CR, CR LF, NEL, LS, PS end a line; a leading BOM
 * is not a column).  For errors known by byte offset. */
void src_pos(const struct src_file *f, size_t offset, uint32_t *line, uint32_t *col);
/* The inverse: byte offset of 1-based line:col.  A column past the end of
 * its line gives the offset of the line's break; a line past the end of
 * the file gives f->len. */
size_t src_offset(const struct src_file *f, uint32_t line, uint32_t col);
/* The bytes of 1-based line `line`, without its break.  -1 when the file
 * has fewer lines. */
int src_line_span(const struct src_file *f, uint32_t line, const char **start, const char **end);
/* Bytes in the code point starting at p (a stray byte counts as one). */
size_t src_cp_len(const char *p, const char *end);
/* Build f->index over f->text (replacing any); -1 when out of memory.
 * src_free() frees it, src_index_free() alone too. */
int src_index_build(struct src_file *f);
void src_index_free(struct src_file *f);
/* Move f->index into arena a, for a file whose text moves there too; -1
 * when out of memory, with f->index left as it was. */
int src_index_adopt(struct src_file *f, struct arena *a);


#endif
