/* SPDX-License-Identifier: Apache-2.0 */
/*
 * diag.c - located diagnostics, and the checked reading of text inputs.
 *
 * Lines and columns here must agree with libyaml's marks, because most
 * diagnostics carry a position libyaml computed and are printed by quoting
 * the line src_line_span() finds (compiler/src_pos.c follows libyaml's
 * rules), so a caret lands under the character libyaml meant.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compiler/diag.h"

#define DIAG_OOM_TEXT "out of memory while formatting this diagnostic"

void diags_init(struct diags *d)
{
	memset(d, 0, sizeof(*d));
}

void diags_free(struct diags *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		free(d->v[i].msg);
	free(d->v);
	memset(d, 0, sizeof(*d));
}

/* Room for one more entry; -1 when the cap is reached or memory is out. */
static int diags_reserve(struct diags *d)
{
	struct diag *nv;
	size_t ncap;

	if (d->n >= DIAG_MAX)
		return -1;
	if (d->n < d->cap)
		return 0;
	ncap = d->cap == 0 ? 16 : d->cap * 2;
	if (ncap > DIAG_MAX)
		ncap = DIAG_MAX;
	nv = realloc(d->v, ncap * sizeof(*nv));
	if (nv == NULL)
		return -1;
	d->v = nv;
	d->cap = ncap;
	return 0;
}

void diag_at(struct diags *d, enum diag_sev sev, const struct src_file *f, uint32_t line, uint32_t col,
	     const char *fmt, ...)
{
	va_list ap, ap2;
	struct diag *e;
	char *msg = NULL;
	int len;

	/* Counted first: a dropped diagnostic must still fail the compile. */
	if (sev == DIAG_ERROR)
		d->nerrors++;
	else if (sev == DIAG_WARNING)
		d->nwarnings++;
	if (diags_reserve(d) != 0) {
		d->overflow = 1;
		return;
	}

	va_start(ap, fmt);
	va_copy(ap2, ap);
	len = vsnprintf(NULL, 0, fmt, ap);
	if (len >= 0) {
		msg = malloc((size_t)len + 1);
		if (msg != NULL)
			vsnprintf(msg, (size_t)len + 1, fmt, ap2);
	}
	va_end(ap2);
	va_end(ap);

	e = &d->v[d->n++];
	e->sev = sev;
	e->file = f;
	e->line = line;
	e->col = col;
	e->msg = msg; /* NULL: printed as DIAG_OOM_TEXT */
}

static const char *diag_sev_word(enum diag_sev sev)
{
	switch (sev) {
	case DIAG_ERROR:
		return "error";
	case DIAG_WARNING:
		return "warning";
	case DIAG_NOTE:
		break;
	}
	return "note";
}

/* Bytes that would move the terminal's cursor or start an escape sequence
 * are shown as '?': a policy file must not be able to rewrite the screen of
 * whoever compiles it.  One byte becomes one byte, so columns still line up. */
static void diag_put_text(FILE *out, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c < 0x20 && c != '\t') || c == 0x7F)
			c = '?';
		fputc(c, out);
	}
}

/* A line longer than this many code points is quoted as a window of
 * that width around the column, with "..." where it was cut: a file
 * written on one line (a 1 MiB JSON-style inventory) would otherwise be
 * printed whole under each of its findings, gigabytes for thousands. */
#define DIAG_EXCERPT_WIDTH 160
#define DIAG_EXCERPT_BEFORE 60 /* of which, before the column */

/* p moved back by up to n code points, not before start. */
static const char *diag_back_cps(const char *start, const char *p, uint32_t n)
{
	while (n-- > 0 && p > start) {
		p--;
		while (p > start && ((unsigned char)*p & 0xC0) == 0x80)
			p--;
	}
	return p;
}

/* p moved on by up to n code points, not past end. */
static const char *diag_fwd_cps(const char *p, const char *end, uint32_t n)
{
	while (n-- > 0 && p < end)
		p += src_cp_len(p, end);
	return p;
}

static void diag_print_excerpt(FILE *out, const struct diag *g)
{
	const char *start, *end, *from, *to, *at, *p;
	uint32_t line_end, col_end;

	if (src_line_span(g->file, g->line, &start, &end) != 0)
		return;
	/* The column's byte (the line's end for a column past it) and how
	 * many columns lie beyond the end: both O(log n) with the index. */
	at = g->file->text + src_offset(g->file, g->line, g->col);
	if (at < start || at > end)
		at = end;
	from = start;
	to = end;
	if (diag_fwd_cps(start, end, DIAG_EXCERPT_WIDTH + 1) < end) {
		from = diag_back_cps(start, at, DIAG_EXCERPT_BEFORE);
		to = diag_fwd_cps(from, end, DIAG_EXCERPT_WIDTH);
	}
	fputs(from > start ? "    ..." : "    ", out);
	diag_put_text(out, from, (size_t)(to - from));
	fputs(to < end ? "...\n    " : "\n    ", out);
	if (from > start)
		fputs("   ", out);
	/* One pad character per code point before the column, a tab under a
	 * tab, so the caret lines up whatever the tab width.  Past the end of
	 * the line (errors at end of line) spaces go on. */
	for (p = from; p < at; p += src_cp_len(p, end))
		fputc(*p == '\t' ? '\t' : ' ', out);
	if (at == end) {
		src_pos(g->file, (size_t)(end - g->file->text), &line_end, &col_end);
		for (; line_end == g->line && col_end < g->col; col_end++)
			fputc(' ', out);
	}
	fputs("^\n", out);
}

void diags_print(const struct diags *d, FILE *out)
{
	size_t i, shown = 0;

	for (i = 0; i < d->n; i++) {
		const struct diag *g = &d->v[i];
		const char *msg = g->msg != NULL ? g->msg : DIAG_OOM_TEXT;

		if (g->sev != DIAG_NOTE)
			shown++;
		if (g->file == NULL)
			fputs("cordonc", out);
		else
			diag_put_text(out, g->file->path, strlen(g->file->path));
		if (g->file != NULL && g->line != 0)
			fprintf(out, ":%u:%u", (unsigned)g->line, (unsigned)g->col);
		fprintf(out, ": %s: ", diag_sev_word(g->sev));
		diag_put_text(out, msg, strlen(msg));
		fputc('\n', out);
		if (g->file != NULL && g->line != 0)
			diag_print_excerpt(out, g);
	}
	/* Dropped notes are not counted: only errors and warnings are. */
	if (d->overflow)
		fprintf(out, "cordonc: note: too many diagnostics; %zu more errors and warnings not shown\n",
			d->nerrors + d->nwarnings - shown);
}

/* Decode the code point at p; 0 and its length in *n when well formed
 * (shortest form, not a surrogate, at most U+10FFFF), else -1. */
static int src_utf8_check(const unsigned char *p, size_t left, size_t *n)
{
	unsigned char c = p[0];
	uint32_t cp, min;
	size_t len, i;

	if (c < 0x80) {
		*n = 1;
		return 0;
	}
	if (c >= 0xC2 && c <= 0xDF) {
		len = 2;
		cp = c & 0x1F;
		min = 0x80;
	} else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		cp = c & 0x0F;
		min = 0x800;
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		cp = c & 0x07;
		min = 0x10000;
	} else {
		return -1; /* continuation byte, C0/C1 overlong lead, or > F4 */
	}
	if (left < len)
		return -1;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return -1;
		cp = (cp << 6) | (p[i] & 0x3F);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return -1;
	*n = len;
	return 0;
}

/* Fill out with a copy of text, then judge it.  out stays filled on a
 * located failure so the diagnostic can quote the line. */
static int src_take(const char *path, const char *text, size_t len, size_t max_bytes, struct src_file *out,
		    struct diags *d)
{
	const unsigned char *u;
	uint32_t line, col;
	size_t i, n;

	memset(out, 0, sizeof(*out));
	out->path = strdup(path);
	if (out->path == NULL) {
		diag_at(d, DIAG_ERROR, NULL, 0, 0, "out of memory reading '%s'", path);
		return -1;
	}
	if (len > max_bytes) {
		diag_at(d, DIAG_ERROR, out, 0, 0, "file is too large (%zu bytes; the limit is %zu)", len, max_bytes);
		return -1;
	}
	out->text = malloc(len + 1);
	if (out->text == NULL) {
		diag_at(d, DIAG_ERROR, out, 0, 0, "out of memory reading the file");
		return -1;
	}
	if (len > 0)
		memcpy(out->text, text, len);
	out->text[len] = '\0';
	out->len = len;

	u = (const unsigned char *)out->text;
	for (i = 0; i < len; i += n) {
		n = 1;
		if (u[i] == 0) {
			src_pos(out, i, &line, &col);
			diag_at(d, DIAG_ERROR, out, line, col, "NUL byte in input");
			return -1;
		}
		if (src_utf8_check(u + i, len - i, &n) != 0) {
			src_pos(out, i, &line, &col);
			diag_at(d, DIAG_ERROR, out, line, col, "invalid UTF-8 (byte 0x%02X)", u[i]);
			return -1;
		}
	}
	/* After the checks: the index walks code points that are known to be
	 * whole. */
	if (src_index_build(out) != 0) {
		diag_at(d, DIAG_ERROR, out, 0, 0, "out of memory reading the file");
		return -1;
	}
	return 0;
}

int src_from_mem(const char *path, const char *text, size_t len, size_t max_bytes, struct src_file *out,
		 struct diags *d)
{
	return src_take(path, text, len, max_bytes, out, d);
}

int src_read(const char *path, size_t max_bytes, struct src_file *out, struct diags *d)
{
	struct stat st;
	char *buf = NULL;
	size_t size, got = 0;
	ssize_t r;
	int fd = -1, rc = -1, err = 0;

	memset(out, 0, sizeof(*out));
	/* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
	 * writer before fstat() could refuse it.  It changes nothing for a
	 * regular file. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) != 0) {
		err = errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode) || (uintmax_t)st.st_size > (uintmax_t)max_bytes) {
		/* Refused before reading a byte; the path is kept so the
		 * diagnostic can name the file. */
		out->path = strdup(path);
		if (out->path == NULL) {
			err = ENOMEM;
			goto out;
		}
		if (!S_ISREG(st.st_mode))
			diag_at(d, DIAG_ERROR, out, 0, 0, "not a regular file");
		else
			diag_at(d, DIAG_ERROR, out, 0, 0, "file is too large (%jd bytes; the limit is %zu)",
				(intmax_t)st.st_size, max_bytes);
		goto out;
	}
	size = (size_t)st.st_size;
	/* One byte more than the size says, to notice a file that grew. */
	buf = malloc(size + 1);
	if (buf == NULL) {
		err = ENOMEM;
		goto out;
	}
	while (got <= size) {
		r = read(fd, buf + got, size + 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = errno;
			goto out;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	if (got > size) {
		err = EAGAIN; /* grew while read: refuse a moving target */
		goto out;
	}
	rc = src_take(path, buf, got, max_bytes, out, d);
out:
	if (err != 0) {
		diag_at(d, DIAG_ERROR, NULL, 0, 0, "cannot read '%s': %s", path,
			err == EAGAIN ? "the file changed while it was read" : strerror(err));
		src_free(out);
	}
	free(buf);
	if (fd >= 0)
		close(fd);
	return rc;
}

void src_free(struct src_file *f)
{
	src_index_free(f);
	free(f->path);
	free(f->text);
	memset(f, 0, sizeof(*f));
}
