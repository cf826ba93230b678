/*
 * utf8.c - the one UTF-8 decoder (utf8.h).
 */
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
