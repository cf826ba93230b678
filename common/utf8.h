/* SPDX-License-Identifier: Apache-2.0 */
/*
 * utf8.h - well-formed UTF-8, as Unicode's table 3-7 defines it: no
 * overlong form, no surrogate, nothing above U+10FFFF.  One decoder for
 * every place that judges or escapes text: params, outputs, messages,
 * generated code.
 */
#ifndef CORDON_UTF8_H
#define CORDON_UTF8_H

#include <stddef.h>

/* Length (1-4) of the well-formed character at s (left > 0 bytes), or 0. */
size_t utf8_char(const char *s, size_t left);

/* Length of the longest well-formed prefix of s[0..n): the offset of the
 * first byte that does not start a character, or n when all is UTF-8. */
size_t utf8_prefix(const char *s, size_t n);

/* A copy of buf[0..len) as text: each NUL byte, and each byte that does
 * not begin a well-formed character, becomes U+FFFD (EF BF BD), so the
 * copy is well-formed UTF-8 and no NUL cuts it short as a C string.
 * *replaced gets how many bytes were replaced.  Malloc'd and NUL-
 * terminated; NULL when out of memory. */
char *utf8_sanitize(const char *buf, size_t len, size_t *replaced);

#endif
