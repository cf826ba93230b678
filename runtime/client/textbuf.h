/* SPDX-License-Identifier: Apache-2.0 */
/*
 * textbuf.h - a growable NUL-terminated text, for the generated texts of
 * runtime/client/ (stubs, constraint text) and `cordonc describe`.
 *
 * An allocation failure is remembered, not reported at each append: the
 * writer appends freely and asks once, at textbuf_take(), so generators
 * keep one cleanup path instead of a check per line.
 */
#ifndef CORDON_TEXTBUF_H
#define CORDON_TEXTBUF_H

#include <stddef.h>

struct textbuf {
	char *s;    /* NUL-terminated when n > 0 */
	size_t n;   /* bytes, without the NUL */
	size_t cap;
	int oom;    /* an append failed; everything after it was dropped */
};

void textbuf_init(struct textbuf *b);
void textbuf_put(struct textbuf *b, const char *s, size_t n);
void textbuf_puts(struct textbuf *b, const char *s);
void textbuf_putc(struct textbuf *b, char c);
__attribute__((format(printf, 2, 3))) void textbuf_printf(struct textbuf *b, const char *fmt, ...);
/* d as the shortest decimal text that reads back (strtod) as exactly d,
 * -0.0 included: plain decimals where they stay short ("1000", "0.001"),
 * else an exponent ("1e+300").  With TEXTBUF_FLOAT the text always reads
 * as a floating-point literal, never an integer: "1000.0".  d must be
 * finite; NaN and infinities are written "nan", "inf", "-inf". */
#define TEXTBUF_FLOAT 0x1
void textbuf_double(struct textbuf *b, double d, int flags);
/* s[0..n) in double quotes, as words quote a value: \" \\ \n \t \r, and
 * \xNN for other control bytes and bytes outside well-formed UTF-8. */
void textbuf_quote(struct textbuf *b, const char *s, size_t n);
/* The text (caller frees; "" when nothing was appended) and its length,
 * or NULL when an append failed.  b is empty afterwards either way. */
char *textbuf_take(struct textbuf *b, size_t *len);
void textbuf_free(struct textbuf *b);

#endif
