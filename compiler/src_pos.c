/* SPDX-License-Identifier: Apache-2.0 */
/*
 * src_pos.c - line:col <-> byte offset in a text input, in O(log n).
 *
 * Lines and columns here must agree with libyaml's marks, because most
 * diagnostics carry a position libyaml computed and are printed by quoting
 * the line this file finds.  libyaml counts a column per code point and ends
 * a line at LF, CR, CR LF, NEL (U+0085), LS (U+2028) and PS (U+2029); it does
 * not see a leading UTF-8 byte order mark.  Every lookup below is the same
 * walk by those rules, one step a line break or a code point.
 *
 * A walk from the top of the file for every lookup made compile and lint
 * quadratic: a 1 MiB inventory with thousands of constraints took a minute.
 * So src_take() records, once per file, a stop (offset, line, column) where
 * the walk first reaches each SRC_STOP_EVERY-byte block; a lookup finds the
 * last stop before its target by binary search and walks at most one block
 * from there.  A src_file built by hand (tests) has no stops: its lookups
 * walk from the top, by the same steps, and give the same answers.
 */
#include <stdlib.h>
#include <string.h>

#include "compiler/diag.h"

#define SRC_STOP_EVERY 64

struct src_stop {
	size_t off;
	uint32_t line, col;
};

/* Byte length of the line break at p (0 when none), by libyaml's rules. */
static size_t src_break_len(const char *p, const char *end)
{
	const unsigned char *u = (const unsigned char *)p;
	size_t left = (size_t)(end - p);

	if (left == 0)
		return 0;
	if (u[0] == '\n')
		return 1;
	if (u[0] == '\r')
		return (left >= 2 && u[1] == '\n') ? 2 : 1;
	if (left >= 2 && u[0] == 0xC2 && u[1] == 0x85)
		return 2;
	if (left >= 3 && u[0] == 0xE2 && u[1] == 0x80 && (u[2] == 0xA8 || u[2] == 0xA9))
		return 3;
	return 0;
}

size_t src_cp_len(const char *p, const char *end)
{
	unsigned char c = (unsigned char)*p;
	size_t n = 1, left = (size_t)(end - p);

	if (c >= 0xF0)
		n = 4;
	else if (c >= 0xE0)
		n = 3;
	else if (c >= 0xC0)
		n = 2;
	return n <= left ? n : 1;
}

/* Where the walk starts: after a UTF-8 byte order mark, which libyaml skips
 * without counting a column. */
static struct src_stop src_top(const struct src_file *f)
{
	struct src_stop s = { 0, 1, 1 };

	if (f->len >= 3 && memcmp(f->text, "\xEF\xBB\xBF", 3) == 0)
		s.off = 3;
	return s;
}

/* One step of the walk: over a line break or one code point.  The caller
 * checks s->off < f->len. */
static void src_step(const struct src_file *f, struct src_stop *s)
{
	const char *p = f->text + s->off, *e = f->text + f->len;
	size_t bl = src_break_len(p, e);

	if (bl > 0) {
		s->off += bl;
		s->line++;
		s->col = 1;
	} else {
		s->off += src_cp_len(p, e);
		s->col++;
	}
	if (f->index != NULL)
		f->index->steps++;
}

int src_index_build(struct src_file *f)
{
	struct src_index *ix;
	struct src_stop s;
	size_t cap = f->len / SRC_STOP_EVERY + 1, next = 0;

	src_index_free(f);
	if (f->text == NULL)
		return 0;
	ix = calloc(1, sizeof(*ix));
	if (ix == NULL || (ix->stops = malloc(cap * sizeof(*ix->stops))) == NULL) {
		free(ix);
		return -1;
	}
	/* Stops sit where the walk is (never inside a code point or a CR LF),
	 * one in each block the walk enters: at most one a block, so cap
	 * holds them all. */
	for (s = src_top(f); s.off < f->len; src_step(f, &s)) {
		if (s.off >= next && ix->n < cap) {
			ix->stops[ix->n++] = s;
			next = (s.off / SRC_STOP_EVERY + 1) * SRC_STOP_EVERY;
		}
	}
	ix->steps = 0;
	f->index = ix;
	return 0;
}

void src_index_free(struct src_file *f)
{
	if (f->index != NULL)
		free(f->index->stops);
	free(f->index);
	f->index = NULL;
}

int src_index_adopt(struct src_file *f, struct arena *a)
{
	struct src_index *ix;

	if (f->index == NULL)
		return 0;
	ix = arena_alloc(a, sizeof(*ix));
	if (ix == NULL)
		return -1;
	*ix = *f->index;
	ix->stops = ix->n > 0 ? arena_calloc(a, ix->n, sizeof(*ix->stops)) : NULL;
	if (ix->n > 0 && ix->stops == NULL)
		return -1;
	if (ix->n > 0)
		memcpy(ix->stops, f->index->stops, ix->n * sizeof(*ix->stops));
	src_index_free(f);
	f->index = ix;
	return 0;
}

/* The last stop at or before offset off (by_pos 0) or position line:col
 * (by_pos 1); the top of the file when there is none. */
static struct src_stop src_stop_before(const struct src_file *f, int by_pos, size_t off, uint32_t line,
				       uint32_t col)
{
	const struct src_index *ix = f->index;
	size_t lo = 0, hi;

	if (ix == NULL || ix->n == 0)
		return src_top(f);
	/* Invariant: stops[0 .. lo) are at or before the target, stops[hi ..)
	 * after it.  stops[0] is the top of the file. */
	hi = ix->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct src_stop *m = &ix->stops[mid];
		int before = by_pos ? (m->line < line || (m->line == line && m->col <= col)) : m->off <= off;

		if (before)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 ? ix->stops[lo - 1] : src_top(f);
}

void src_pos(const struct src_file *f, size_t offset, uint32_t *line, uint32_t *col)
{
	struct src_stop s;

	*line = 1;
	*col = 1;
	if (f == NULL || f->text == NULL)
		return;
	if (offset > f->len)
		offset = f->len;
	for (s = src_stop_before(f, 0, offset, 0, 0); s.off < offset; src_step(f, &s))
		;
	*line = s.line;
	*col = s.col;
}

size_t src_offset(const struct src_file *f, uint32_t line, uint32_t col)
{
	struct src_stop s;

	if (f == NULL || f->text == NULL)
		return 0;
	s = src_stop_before(f, 1, 0, line, col);
	while (s.off < f->len && (s.line < line || (s.line == line && s.col < col))) {
		/* A column past the end of its line stops at the break. */
		if (s.line == line && src_break_len(f->text + s.off, f->text + f->len) > 0)
			break;
		src_step(f, &s);
	}
	return s.off;
}

int src_line_span(const struct src_file *f, uint32_t line, const char **start, const char **end)
{
	const char *p, *e;
	struct src_stop s;

	if (f == NULL || f->text == NULL || line == 0)
		return -1;
	for (s = src_stop_before(f, 1, 0, line, 1); s.line < line && s.off < f->len; src_step(f, &s))
		;
	/* The empty line after a final break exists, because libyaml puts
	 * end-of-stream errors there. */
	if (s.line != line)
		return -1;
	p = f->text + s.off;
	e = f->text + f->len;
	*start = p;
	while (p < e && src_break_len(p, e) == 0)
		p++;
	*end = p;
	return 0;
}
