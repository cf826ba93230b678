/* SPDX-License-Identifier: Apache-2.0 */
/*
 * utf8.c - the one UTF-8 decoder (utf8.h).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"

size_t utf8_char(const char *s, size_t left)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned char lo = 0x80, hi = 0xBF;
	size_t n;

	if (u[0] < 0x80)
		return 1;
	if (u[0] >= 0xC2 && u[0] <= 0xDF)
		n = 2;
	else if (u[0] >= 0xE0 && u[0] <= 0xEF)
		n = 3;
	else if (u[0] >= 0xF0 && u[0] <= 0xF4)
		n = 4;
	else
		return 0; /* a continuation byte, an overlong C0/C1 lead, or above F4 */
	/* The second byte's range excludes overlong forms (E0, F0),
	 * surrogates (ED) and code points above U+10FFFF (F4). */
	if (u[0] == 0xE0)
		lo = 0xA0;
	else if (u[0] == 0xED)
		hi = 0x9F;
	else if (u[0] == 0xF0)
		lo = 0x90;
	else if (u[0] == 0xF4)
		hi = 0x8F;
	if (left < n || u[1] < lo || u[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (u[i] < 0x80 || u[i] > 0xBF)
			return 0;
	return n;
}

size_t utf8_prefix(const char *s, size_t n)
{
	size_t i = 0, k;

	while (i < n && (k = utf8_char(s + i, n - i)) != 0)
		i += k;
	return i;
}

char *utf8_sanitize(const char *buf, size_t len, size_t *replaced)
{
	static const char fffd[3] = { (char)0xEF, (char)0xBF, (char)0xBD };
	size_t i = 0, o = 0, k;
	char *out;

	*replaced = 0;
	/* Every byte may become three. */
	if (len > (SIZE_MAX - 1) / 3)
		return NULL;
	out = malloc(len * 3 + 1);
	if (out == NULL)
		return NULL;
	while (i < len) {
		k = buf[i] == '\0' ? 0 : utf8_char(buf + i, len - i);
		if (k == 0) {
			memcpy(out + o, fffd, sizeof(fffd));
			o += sizeof(fffd);
			(*replaced)++;
			i++;
			continue;
		}
		memcpy(out + o, buf + i, k);
		o += k;
		i += k;
	}
	out[o] = '\0';
	return out;
}
