/* SPDX-License-Identifier: Apache-2.0 */
/*
 * units.c - strict parsers for sizes, durations and numbers; see units.h.
 *
 * Every parser walks the exact bytes it was given (the scalar may hold
 * anything, so nothing here relies on a NUL terminator), accumulates with
 * overflow checks, and refuses rather than guesses: a value that could be
 * read two ways is an error whose sentence says how to write it.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/units.h"

#define WHY_EMPTY "empty value"
#define WHY_TOO_LARGE "too large"

static int units_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* *v = *v * 10 + digit, or -1 on overflow. */
static int units_push_digit(uint64_t *v, char c)
{
	uint64_t d = (uint64_t)(c - '0');

	if (*v > (UINT64_MAX - d) / 10)
		return -1;
	*v = *v * 10 + d;
	return 0;
}

static int units_mul(uint64_t a, uint64_t b, uint64_t *out)
{
	if (b != 0 && a > UINT64_MAX / b)
		return -1;
	*out = a * b;
	return 0;
}

/* Why a value does not start with a digit, for the parsers that want one. */
static const char *units_why_start(char c, const char *what)
{
	if (c == '-' || c == '+')
		return "no sign is allowed";
	if (c == ' ' || c == '\t')
		return "spaces are not allowed";
	if (c == '.')
		return "write a digit before the decimal point";
	return what;
}

/* Digits at s[*i..len) into *v.  -1 with *why when there are none, when a
 * number has a leading zero (refused where "0644" could be meant as octal),
 * or on overflow. */
static int units_digits(const char *s, size_t len, size_t *i, int allow_lead_zero, uint64_t *v, const char **why)
{
	size_t start = *i;

	*v = 0;
	while (*i < len && units_is_digit(s[*i])) {
		if (units_push_digit(v, s[*i]) != 0) {
			*why = WHY_TOO_LARGE;
			return -1;
		}
		(*i)++;
	}
	if (*i == start) {
		*why = "a number is missing";
		return -1;
	}
	if (!allow_lead_zero && s[start] == '0' && *i - start > 1) {
		*why = "leading zero (write the number without it; octal is not supported)";
		return -1;
	}
	return 0;
}

int units_parse_size(const char *s, size_t len, uint64_t *out, const char **why)
{
	uint64_t v, mult = 1;
	size_t i = 0;

	if (len == 0) {
		*why = WHY_EMPTY;
		return -1;
	}
	if (!units_is_digit(s[0])) {
		*why = units_why_start(s[0], "a size starts with a digit (e.g. 64k, 100m, 1g)");
		return -1;
	}
	if (units_digits(s, len, &i, 0, &v, why) != 0)
		return -1;
	if (i < len) {
		switch (s[i]) {
		case 'k':
		case 'K':
			mult = 1ull << 10;
			break;
		case 'm':
		case 'M':
			mult = 1ull << 20;
			break;
		case 'g':
		case 'G':
			mult = 1ull << 30;
			break;
		case 't':
		case 'T':
			mult = 1ull << 40;
			break;
		case '.':
		case ',':
			*why = "a size has no fraction (write 1536k, not 1.5m)";
			return -1;
		case ' ':
		case '\t':
			*why = "spaces are not allowed";
			return -1;
		default:
			*why = "unknown size unit (use k, m, g or t)";
			return -1;
		}
		/* "64kb", "64KiB": the unit is one letter, and guessing whether
		 * b means bytes or bits is how limits go wrong. */
		if (i + 1 != len) {
			*why = "unknown size unit (use k, m, g or t)";
			return -1;
		}
	}
	if (units_mul(v, mult, &v) != 0) {
		*why = WHY_TOO_LARGE;
		return -1;
	}
	*out = v;
	return 0;
}

/* Duration units, largest first; rank orders "descending, once each". */
static int units_duration_unit(const char *s, size_t len, size_t *i, uint64_t *ms, int *rank)
{
	if (*i + 1 < len && s[*i] == 'm' && s[*i + 1] == 's') {
		*i += 2;
		*ms = 1;
		*rank = 0;
		return 0;
	}
	if (*i >= len)
		return -1;
	switch (s[*i]) {
	case 'h':
		*ms = 3600000;
		*rank = 3;
		break;
	case 'm':
		*ms = 60000;
		*rank = 2;
		break;
	case 's':
		*ms = 1000;
		*rank = 1;
		break;
	default:
		return -1;
	}
	(*i)++;
	return 0;
}

int units_parse_duration_ms(const char *s, size_t len, uint64_t *out, const char **why)
{
	uint64_t total = 0, v, unit_ms;
	int rank, last_rank = 4;
	size_t i = 0;

	if (len == 0) {
		*why = WHY_EMPTY;
		return -1;
	}
	if (!units_is_digit(s[0])) {
		*why = units_why_start(s[0], "a duration starts with a digit (e.g. 30s, 500ms, 1m30s)");
		return -1;
	}
	while (i < len) {
		if (!units_is_digit(s[i])) {
			*why = "expected a number after the unit (e.g. 1m30s)";
			return -1;
		}
		/* Leading zeros read naturally here ("1m05s") and no one means
		 * octal in a duration. */
		if (units_digits(s, len, &i, 1, &v, why) != 0)
			return -1;
		if (i == len) {
			*why = "missing unit (write e.g. 30s or 500ms)";
			return -1;
		}
		if (s[i] == '.' || s[i] == ',') {
			*why = "a duration has no fraction (write 1500ms, not 1.5s)";
			return -1;
		}
		if (s[i] == ' ' || s[i] == '\t') {
			*why = "spaces are not allowed";
			return -1;
		}
		if (units_duration_unit(s, len, &i, &unit_ms, &rank) != 0) {
			*why = "unknown duration unit (use ms, s, m or h)";
			return -1;
		}
		if (rank >= last_rank) {
			*why = "units must go from largest to smallest, each at most once (e.g. 1h30m, 1m30s)";
			return -1;
		}
		last_rank = rank;
		if (units_mul(v, unit_ms, &v) != 0 || total > UINT64_MAX - v) {
			*why = WHY_TOO_LARGE;
			return -1;
		}
		total += v;
	}
	*out = total;
	return 0;
}

/* The words a decimal with three places is described in, per unit. */
struct units_milli_words {
	const char *start; /* what to write instead of a bad first char */
	const char *places; /* why a fourth decimal is refused */
	const char *tail;  /* what to write instead of a trailing unit */
};

/* A decimal with at most 3 places, in thousandths: seconds as ms, CPUs as
 * thousandths of a CPU.  One parser, so both keys refuse the same text. */
static int units_parse_milli(const char *s, size_t len, uint64_t *out, const char **why,
			     const struct units_milli_words *w)
{
	uint64_t whole, frac = 0, ms;
	size_t i = 0, ndec = 0;

	if (len == 0) {
		*why = WHY_EMPTY;
		return -1;
	}
	if (!units_is_digit(s[0])) {
		*why = units_why_start(s[0], w->start);
		return -1;
	}
	if (units_digits(s, len, &i, 1, &whole, why) != 0)
		return -1;
	if (i < len && s[i] == '.') {
		i++;
		while (i < len && units_is_digit(s[i]) && ndec < 3) {
			frac = frac * 10 + (uint64_t)(s[i] - '0');
			ndec++;
			i++;
		}
		if (i < len && units_is_digit(s[i])) {
			*why = w->places;
			return -1;
		}
		if (ndec == 0) {
			*why = "write a digit after the decimal point";
			return -1;
		}
	}
	if (i < len) {
		*why = w->tail;
		return -1;
	}
	while (ndec < 3) {
		frac *= 10;
		ndec++;
	}
	if (units_mul(whole, 1000, &ms) != 0 || ms > UINT64_MAX - frac) {
		*why = WHY_TOO_LARGE;
		return -1;
	}
	*out = ms + frac;
	return 0;
}

int units_parse_seconds_ms(const char *s, size_t len, uint64_t *out, const char **why)
{
	static const struct units_milli_words w = { "not a number of seconds (write e.g. 0.5 or 2)",
						    "at most 3 decimals (milliseconds)",
						    "not a number of seconds (write e.g. 0.5 or 2, without a unit)" };

	return units_parse_milli(s, len, out, why, &w);
}

int units_parse_cpus_milli(const char *s, size_t len, uint64_t *out, const char **why)
{
	static const struct units_milli_words w = { "not a number of CPUs (write e.g. 0.5 or 2)",
						    "at most 3 decimals (thousandths of a CPU)",
						    "not a number of CPUs (write e.g. 0.5 or 2, without a unit)" };

	return units_parse_milli(s, len, out, why, &w);
}

int units_parse_uint(const char *s, size_t len, uint64_t max, uint64_t *out, const char **why)
{
	uint64_t v;
	size_t i = 0;

	if (len == 0) {
		*why = WHY_EMPTY;
		return -1;
	}
	if (!units_is_digit(s[0])) {
		*why = units_why_start(s[0], "not a decimal integer");
		return -1;
	}
	if (units_digits(s, len, &i, 0, &v, why) != 0)
		return -1;
	if (i < len) {
		*why = "not a decimal integer";
		return -1;
	}
	if (v > max) {
		*why = WHY_TOO_LARGE;
		return -1;
	}
	*out = v;
	return 0;
}

int units_parse_int(const char *s, size_t len, int64_t min, int64_t max, int64_t *out, const char **why)
{
	uint64_t mag;
	size_t i = 0;
	int neg = 0;
	int64_t v;

	if (len == 0) {
		*why = WHY_EMPTY;
		return -1;
	}
	if (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-';
		i = 1;
	}
	if (i >= len || !units_is_digit(s[i])) {
		*why = i < len ? units_why_start(s[i], "not a decimal integer") : "not a decimal integer";
		return -1;
	}
	if (units_digits(s, len, &i, 0, &mag, why) != 0) {
		if (strcmp(*why, WHY_TOO_LARGE) == 0)
			*why = "out of range";
		return -1;
	}
	if (i < len) {
		*why = "not a decimal integer";
		return -1;
	}
	/* The magnitude of INT64_MIN is one more than INT64_MAX. */
	if (neg) {
		if (mag > (uint64_t)INT64_MAX + 1) {
			*why = "out of range";
			return -1;
		}
		v = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
	} else {
		if (mag > (uint64_t)INT64_MAX) {
			*why = "out of range";
			return -1;
		}
		v = (int64_t)mag;
	}
	if (v < min || v > max) {
		*why = "out of range";
		return -1;
	}
	*out = v;
	return 0;
}

int units_parse_number(const char *s, size_t len, double *out, const char **why)
{
	/* Long enough for any double written out sensibly; strtod needs a
	 * terminated copy and gets one no longer than this. */
	char buf[128];
	char *end = NULL;
	size_t i;
	double v;

	if (len == 0) {
		*why = WHY_EMPTY;
		return -1;
	}
	if (len >= sizeof(buf)) {
		*why = "too long for a number";
		return -1;
	}
	/* strtod also takes leading spaces, hex floats, "inf" and "nan";
	 * allowing only these characters leaves it plain decimal notation. */
	for (i = 0; i < len; i++) {
		if (!units_is_digit(s[i]) && strchr("+-.eE", s[i]) == NULL) {
			*why = s[i] == ' ' || s[i] == '\t' ? "spaces are not allowed" : "not a decimal number";
			return -1;
		}
	}
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	v = strtod(buf, &end);
	if (end != buf + len) {
		*why = "not a decimal number";
		return -1;
	}
	if (!isfinite(v)) {
		*why = WHY_TOO_LARGE;
		return -1;
	}
	*out = v;
	return 0;
}

void units_format_size(uint64_t bytes, char *buf, size_t cap)
{
	static const char suffix[] = "tgmk";
	unsigned shift;
	size_t i;

	if (cap == 0)
		return;
	if (bytes != 0) {
		for (i = 0, shift = 40; i < 4; i++, shift -= 10) {
			uint64_t unit = 1ull << shift;

			if (bytes % unit == 0) {
				snprintf(buf, cap, "%" PRIu64 "%c", bytes / unit, suffix[i]);
				return;
			}
		}
	}
	snprintf(buf, cap, "%" PRIu64, bytes);
}

void units_format_duration(uint64_t ms, char *buf, size_t cap)
{
	static const struct {
		uint64_t ms;
		const char *name;
	} units[] = { { 3600000, "h" }, { 60000, "m" }, { 1000, "s" } };
	size_t i;

	if (cap == 0)
		return;
	if (ms != 0) {
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			if (ms % units[i].ms == 0) {
				snprintf(buf, cap, "%" PRIu64 "%s", ms / units[i].ms, units[i].name);
				return;
			}
		}
	}
	snprintf(buf, cap, "%" PRIu64 "ms", ms);
}
