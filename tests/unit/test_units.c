/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_units.c - the strict value parsers and their display forms.
 *
 * Each table row is one rule of units.h, good and bad; a bad row names the
 * sentence the user will read.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "compiler/units.h"

struct ucase {
	const char *in;
	uint64_t want; /* when why is NULL */
	const char *why;
};

typedef int (*uparse_fn)(const char *s, size_t len, uint64_t *out, const char **why);

static void run_cases(uparse_fn fn, const struct ucase *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t out = 12345;
		const char *why = NULL;
		int rc = fn(c[i].in, strlen(c[i].in), &out, &why);

		if (c[i].why == NULL) {
			if (rc != 0)
				fail_msg("'%s': unexpected error '%s'", c[i].in, why);
			if (out != c[i].want)
				fail_msg("'%s': got %llu, want %llu", c[i].in, (unsigned long long)out,
					 (unsigned long long)c[i].want);
		} else {
			if (rc != -1)
				fail_msg("'%s': accepted as %llu", c[i].in, (unsigned long long)out);
			if (why == NULL || strcmp(why, c[i].why) != 0)
				fail_msg("'%s': why '%s', want '%s'", c[i].in, why ? why : "(null)", c[i].why);
			assert_int_equal(out, 12345); /* untouched on error */
		}
	}
}

#define NCASES(a) (sizeof(a) / sizeof((a)[0]))

static void test_size(void **state)
{
	static const struct ucase cases[] = {
		{ "0", 0, NULL },
		{ "1", 1, NULL },
		{ "1000", 1000, NULL },
		{ "64k", 65536, NULL },
		{ "64K", 65536, NULL },
		{ "100m", 100ull << 20, NULL },
		{ "1G", 1ull << 30, NULL },
		{ "2t", 2ull << 40, NULL },
		{ "0k", 0, NULL },
		{ "18446744073709551615", UINT64_MAX, NULL },
		{ "18446744073709551616", 0, "too large" },
		{ "16777216t", 0, "too large" }, /* 2^24 TiB = 2^64 */
		{ "16777215t", 16777215ull << 40, NULL },
		{ "064k", 0, "leading zero (write the number without it; octal is not supported)" },
		{ "00", 0, "leading zero (write the number without it; octal is not supported)" },
		{ "", 0, "empty value" },
		{ "-1", 0, "no sign is allowed" },
		{ "+1k", 0, "no sign is allowed" },
		{ " 64k", 0, "spaces are not allowed" },
		{ "64 k", 0, "spaces are not allowed" },
		{ "64k ", 0, "unknown size unit (use k, m, g or t)" },
		{ "1.5m", 0, "a size has no fraction (write 1536k, not 1.5m)" },
		{ ".5m", 0, "write a digit before the decimal point" },
		{ "64x", 0, "unknown size unit (use k, m, g or t)" },
		{ "64kb", 0, "unknown size unit (use k, m, g or t)" },
		{ "64KiB", 0, "unknown size unit (use k, m, g or t)" },
		{ "k", 0, "a size starts with a digit (e.g. 64k, 100m, 1g)" },
	};

	(void)state;
	run_cases(units_parse_size, cases, NCASES(cases));
}

static void test_duration(void **state)
{
	static const struct ucase cases[] = {
		{ "30s", 30000, NULL },
		{ "500ms", 500, NULL },
		{ "0ms", 0, NULL },
		{ "0s", 0, NULL },
		{ "2m", 120000, NULL },
		{ "1h", 3600000, NULL },
		{ "1m30s", 90000, NULL },
		{ "1h2m3s4ms", 3723004, NULL },
		{ "1h500ms", 3600500, NULL },
		{ "1m05s", 65000, NULL },
		{ "90s", 90000, NULL },
		{ "18446744073709551615ms", UINT64_MAX, NULL },
		{ "18446744073709551616ms", 0, "too large" },
		{ "18446744073709552s", 0, "too large" },
		{ "18446744073709551s", 18446744073709551000ull, NULL },
		{ "18446744073709551ms615ms", 0,
		  "units must go from largest to smallest, each at most once (e.g. 1h30m, 1m30s)" },
		{ "30s1m", 0, "units must go from largest to smallest, each at most once (e.g. 1h30m, 1m30s)" },
		{ "1s1s", 0, "units must go from largest to smallest, each at most once (e.g. 1h30m, 1m30s)" },
		{ "1ms1s", 0, "units must go from largest to smallest, each at most once (e.g. 1h30m, 1m30s)" },
		{ "30", 0, "missing unit (write e.g. 30s or 500ms)" },
		{ "0", 0, "missing unit (write e.g. 30s or 500ms)" },
		{ "1m30", 0, "missing unit (write e.g. 30s or 500ms)" },
		{ "", 0, "empty value" },
		{ "-1s", 0, "no sign is allowed" },
		{ " 1s", 0, "spaces are not allowed" },
		{ "1 s", 0, "spaces are not allowed" },
		{ "1.5s", 0, "a duration has no fraction (write 1500ms, not 1.5s)" },
		{ "1d", 0, "unknown duration unit (use ms, s, m or h)" },
		{ "1sec", 0, "expected a number after the unit (e.g. 1m30s)" },
		{ "1m s", 0, "expected a number after the unit (e.g. 1m30s)" },
		{ "s", 0, "a duration starts with a digit (e.g. 30s, 500ms, 1m30s)" },
	};

	(void)state;
	run_cases(units_parse_duration_ms, cases, NCASES(cases));
}

static void test_seconds(void **state)
{
	static const struct ucase cases[] = {
		{ "0.5", 500, NULL },
		{ "2", 2000, NULL },
		{ "0.125", 125, NULL },
		{ "0", 0, NULL },
		{ "1.05", 1050, NULL },
		{ "10.0", 10000, NULL },
		{ "18446744073709551.615", UINT64_MAX, NULL },
		{ "18446744073709552", 0, "too large" },
		{ "0.1255", 0, "at most 3 decimals (milliseconds)" },
		{ "1.", 0, "write a digit after the decimal point" },
		{ ".5", 0, "write a digit before the decimal point" },
		{ "-1", 0, "no sign is allowed" },
		{ "+1", 0, "no sign is allowed" },
		{ "1e3", 0, "not a number of seconds (write e.g. 0.5 or 2, without a unit)" },
		{ "2s", 0, "not a number of seconds (write e.g. 0.5 or 2, without a unit)" },
		{ "1 ", 0, "not a number of seconds (write e.g. 0.5 or 2, without a unit)" },
		{ "", 0, "empty value" },
		{ "abc", 0, "not a number of seconds (write e.g. 0.5 or 2)" },
	};

	(void)state;
	run_cases(units_parse_seconds_ms, cases, NCASES(cases));
}

/* execution.runtime.cpu: the same decimal as seconds, in thousandths of a
 * CPU, its messages in CPUs. */
static void test_cpus(void **state)
{
	static const struct ucase cases[] = {
		{ "0.5", 500, NULL },
		{ "1.5", 1500, NULL },
		{ "2", 2000, NULL },
		{ "0.01", 10, NULL },
		{ "0.0005", 0, "at most 3 decimals (thousandths of a CPU)" },
		{ "500m", 0, "not a number of CPUs (write e.g. 0.5 or 2, without a unit)" },
		{ "1.", 0, "write a digit after the decimal point" },
		{ "-1", 0, "no sign is allowed" },
		{ "half", 0, "not a number of CPUs (write e.g. 0.5 or 2)" },
		{ "", 0, "empty value" },
	};

	(void)state;
	run_cases(units_parse_cpus_milli, cases, NCASES(cases));
}

static int parse_uint_max1000(const char *s, size_t len, uint64_t *out, const char **why)
{
	return units_parse_uint(s, len, 1000, out, why);
}

static int parse_uint_max(const char *s, size_t len, uint64_t *out, const char **why)
{
	return units_parse_uint(s, len, UINT64_MAX, out, why);
}

static void test_uint(void **state)
{
	static const struct ucase small[] = {
		{ "0", 0, NULL },
		{ "1000", 1000, NULL },
		{ "1001", 0, "too large" },
		{ "0644", 0, "leading zero (write the number without it; octal is not supported)" },
		{ "", 0, "empty value" },
		{ "-1", 0, "no sign is allowed" },
		{ "1k", 0, "not a decimal integer" },
		{ "0x10", 0, "not a decimal integer" },
		{ "1.0", 0, "not a decimal integer" },
		{ " 1", 0, "spaces are not allowed" },
	};
	static const struct ucase big[] = {
		{ "18446744073709551615", UINT64_MAX, NULL },
		{ "18446744073709551616", 0, "too large" },
		{ "99999999999999999999999", 0, "too large" },
	};

	(void)state;
	run_cases(parse_uint_max1000, small, NCASES(small));
	run_cases(parse_uint_max, big, NCASES(big));
}

static void test_int(void **state)
{
	int64_t v = 7;
	const char *why = NULL;

	(void)state;
	assert_int_equal(units_parse_int("-5", 2, -10, 10, &v, &why), 0);
	assert_int_equal(v, -5);
	assert_int_equal(units_parse_int("+5", 2, -10, 10, &v, &why), 0);
	assert_int_equal(v, 5);
	assert_int_equal(units_parse_int("0", 1, -10, 10, &v, &why), 0);
	assert_int_equal(v, 0);
	assert_int_equal(units_parse_int("-9223372036854775808", 20, INT64_MIN, INT64_MAX, &v, &why), 0);
	assert_true(v == INT64_MIN);
	assert_int_equal(units_parse_int("9223372036854775807", 19, INT64_MIN, INT64_MAX, &v, &why), 0);
	assert_true(v == INT64_MAX);

	v = 7;
	assert_int_equal(units_parse_int("9223372036854775808", 19, INT64_MIN, INT64_MAX, &v, &why), -1);
	assert_string_equal(why, "out of range");
	assert_int_equal(units_parse_int("-9223372036854775809", 20, INT64_MIN, INT64_MAX, &v, &why), -1);
	assert_string_equal(why, "out of range");
	assert_int_equal(units_parse_int("-99999999999999999999999", 24, INT64_MIN, INT64_MAX, &v, &why), -1);
	assert_string_equal(why, "out of range");
	assert_int_equal(units_parse_int("11", 2, -10, 10, &v, &why), -1);
	assert_string_equal(why, "out of range");
	assert_int_equal(units_parse_int("-11", 3, -10, 10, &v, &why), -1);
	assert_string_equal(why, "out of range");
	assert_int_equal(units_parse_int("-", 1, -10, 10, &v, &why), -1);
	assert_string_equal(why, "not a decimal integer");
	assert_int_equal(units_parse_int("--1", 3, -10, 10, &v, &why), -1);
	assert_string_equal(why, "no sign is allowed");
	assert_int_equal(units_parse_int("-07", 3, -10, 10, &v, &why), -1);
	assert_string_equal(why, "leading zero (write the number without it; octal is not supported)");
	assert_int_equal(units_parse_int("1e2", 3, -1000, 1000, &v, &why), -1);
	assert_string_equal(why, "not a decimal integer");
	assert_int_equal(units_parse_int("", 0, -10, 10, &v, &why), -1);
	assert_string_equal(why, "empty value");
	assert_int_equal(v, 7);
}

static void test_number(void **state)
{
	static const char *const bad[] = { "",    "inf", "nan", "0x10", " 1", "1 ",   "1e",
					   "1e999", "-1e999", "--1", "1.2.3", "e5", "1,5" };
	double v = 0;
	const char *why = NULL;
	size_t i;

	(void)state;
	assert_int_equal(units_parse_number("1.5", 3, &v, &why), 0);
	assert_true(v == 1.5);
	assert_int_equal(units_parse_number("-2e3", 4, &v, &why), 0);
	assert_true(v == -2000.0);
	assert_int_equal(units_parse_number("7", 1, &v, &why), 0);
	assert_true(v == 7.0);
	assert_int_equal(units_parse_number(".25", 3, &v, &why), 0);
	assert_true(v == 0.25);
	/* Only len bytes are read: a longer buffer is not a longer number. */
	assert_int_equal(units_parse_number("12345", 2, &v, &why), 0);
	assert_true(v == 12.0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		if (units_parse_number(bad[i], strlen(bad[i]), &v, &why) != -1)
			fail_msg("'%s' accepted", bad[i]);
		assert_non_null(why);
	}
	assert_int_equal(units_parse_number("1e999", 5, &v, &why), -1);
	assert_string_equal(why, "too large");
	assert_int_equal(units_parse_number(" 1", 2, &v, &why), -1);
	assert_string_equal(why, "spaces are not allowed");
}

static void test_format_size(void **state)
{
	static const struct {
		uint64_t v;
		const char *want;
	} cases[] = {
		{ 0, "0" },
		{ 1, "1" },
		{ 1000, "1000" },
		{ 1024, "1k" },
		{ 65536, "64k" },
		{ 1536, "1536" },
		{ 1536ull << 10, "1536k" },
		{ 1ull << 20, "1m" },
		{ 3ull << 30, "3g" },
		{ 1ull << 40, "1t" },
		{ UINT64_MAX, "18446744073709551615" },
	};
	char buf[32];
	size_t i;

	(void)state;
	for (i = 0; i < NCASES(cases); i++) {
		units_format_size(cases[i].v, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].want);
	}
	/* What is printed parses back to the same value. */
	for (i = 0; i < NCASES(cases); i++) {
		uint64_t back = 0;
		const char *why = NULL;

		units_format_size(cases[i].v, buf, sizeof(buf));
		assert_int_equal(units_parse_size(buf, strlen(buf), &back, &why), 0);
		assert_true(back == cases[i].v);
	}
	units_format_size(65536, buf, 3);
	assert_string_equal(buf, "64");
}

static void test_format_duration(void **state)
{
	static const struct {
		uint64_t v;
		const char *want;
	} cases[] = {
		{ 0, "0ms" },
		{ 1, "1ms" },
		{ 1500, "1500ms" },
		{ 30000, "30s" },
		{ 90000, "90s" },
		{ 120000, "2m" },
		{ 3600000, "1h" },
		{ 5400000, "90m" },
	};
	char buf[32];
	size_t i;

	(void)state;
	for (i = 0; i < NCASES(cases); i++) {
		uint64_t back = 0;
		const char *why = NULL;

		units_format_duration(cases[i].v, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].want);
		assert_int_equal(units_parse_duration_ms(buf, strlen(buf), &back, &why), 0);
		assert_true(back == cases[i].v);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_size),          cmocka_unit_test(test_duration),
		cmocka_unit_test(test_seconds), cmocka_unit_test(test_cpus),       cmocka_unit_test(test_uint),
		cmocka_unit_test(test_int),           cmocka_unit_test(test_number),
		cmocka_unit_test(test_format_size),   cmocka_unit_test(test_format_duration),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
