/* SPDX-License-Identifier: Apache-2.0 */
/*
 * textbuf.c - see textbuf.h.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "runtime/client/textbuf.h"

void textbuf_init(struct textbuf *b)
{
	b->s = NULL;
	b->n = b->cap = 0;
	b->oom = 0;
}

/* Room for `more` bytes and a NUL. */
static int textbuf_room(struct textbuf *b, size_t more)
{
	size_t cap;
	char *s;

	if (b->oom)
		return -1;
	if (more < b->cap && b->n < b->cap - more)
		return 0;
	if (more > SIZE_MAX / 2 - b->n - 1) {
		b->oom = 1;
		return -1;
	}
	cap = b->cap ? b->cap : 256;
	while (cap <= b->n + more)
		cap *= 2;
	s = realloc(b->s, cap);
	if (s == NULL) {
		b->oom = 1;
		return -1;
	}
	b->s = s;
	b->cap = cap;
	return 0;
}

void textbuf_put(struct textbuf *b, const char *s, size_t n)
{
	if (textbuf_room(b, n) != 0)
		return;
	if (n > 0)
		memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = '\0';
}

void textbuf_puts(struct textbuf *b, const char *s)
{
	textbuf_put(b, s, strlen(s));
}

void textbuf_putc(struct textbuf *b, char c)
{
	textbuf_put(b, &c, 1);
}

void textbuf_printf(struct textbuf *b, const char *fmt, ...)
{
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (k < 0) {
		b->oom = 1;
		return;
	}
	if (textbuf_room(b, (size_t)k) != 0)
		return;
	va_start(ap, fmt);
	vsnprintf(b->s + b->n, (size_t)k + 1, fmt, ap);
	va_end(ap);
	b->n += (size_t)k;
}

/* Whether s reads back as exactly d (-0.0 included). */
static int textbuf_reads_as(const char *s, double d)
{
	double back = strtod(s, NULL);

	return back == d && signbit(back) == signbit(d);
}

void textbuf_double(struct textbuf *b, double d, int flags)
{
	char g[48], f[48];
	int prec, e;

	if (!isfinite(d)) {
		textbuf_puts(b, isnan(d) ? "nan" : d < 0 ? "-inf" : "inf");
		return;
	}
	for (prec = 1; prec < 17; prec++) {
		snprintf(g, sizeof(g), "%.*g", prec, d);
		if (textbuf_reads_as(g, d))
			break;
	}
	snprintf(g, sizeof(g), "%.*g", prec, d);
	/* %g writes 1e+03 for 1000: plain decimals while they stay short. */
	snprintf(f, sizeof(f), "%.*e", prec - 1, d);
	e = atoi(strchr(f, 'e') + 1);
	if (d != 0 && e >= -5 && e < 17) {
		snprintf(f, sizeof(f), "%.*f", prec - 1 - e > 0 ? prec - 1 - e : 0, d);
		if (textbuf_reads_as(f, d))
			memcpy(g, f, sizeof(g));
	}
	textbuf_puts(b, g);
	if ((flags & TEXTBUF_FLOAT) && strpbrk(g, ".e") == NULL)
		textbuf_puts(b, ".0");
}

void textbuf_quote(struct textbuf *b, const char *s, size_t n)
{
	size_t i = 0, k;

	textbuf_putc(b, '"');
	while (i < n) {
		unsigned char c = (unsigned char)s[i];

		switch (c) {
		case '"': textbuf_puts(b, "\\\""); break;
		case '\\': textbuf_puts(b, "\\\\"); break;
		case '\n': textbuf_puts(b, "\\n"); break;
		case '\t': textbuf_puts(b, "\\t"); break;
		case '\r': textbuf_puts(b, "\\r"); break;
		default:
			k = utf8_char(s + i, n - i);
			if (k == 0 || c < 0x20 || c == 0x7f) {
				textbuf_printf(b, "\\x%02x", c);
				k = 1;
			} else {
				textbuf_put(b, s + i, k);
			}
			i += k;
			continue;
		}
		i++;
	}
	textbuf_putc(b, '"');
}

char *textbuf_take(struct textbuf *b, size_t *len)
{
	char *s = NULL;

	if (!b->oom && textbuf_room(b, 0) == 0) {
		s = b->s;
		b->s[b->n] = '\0';
		if (len != NULL)
			*len = b->n;
		b->s = NULL;
	}
	textbuf_free(b);
	return s;
}

void textbuf_free(struct textbuf *b)
{
	free(b->s);
	textbuf_init(b);
}
