/* SPDX-License-Identifier: Apache-2.0 */
/*
 * units.h - strict parsers for the descriptor's sizes, durations, integers.
 *
 * Each takes the exact scalar text (no trimming: " 64k" is an error) and
 * either fills *out and returns 0, or returns -1 and points *why at a static
 * sentence for the diagnostic.  Overflow is an error, never a wrap.
 *
 *   size:      digits, optional suffix k|K (KiB), m|M (MiB), g|G (GiB),
 *              t|T (TiB); "0", "64k", "100m", "1g".  No sign, no fraction,
 *              no space, no leading zeros except "0" itself.
 *   duration:  digits and a unit ms|s|m|h, or several in descending order
 *              without repetition ("1m30s"); result in milliseconds.
 *              A bare number is refused: the unit is not guessed.
 *   seconds:   a decimal number of seconds with at most 3 decimals
 *              ("0.5", "2", "0.125"); result in milliseconds.
 *   cpus:      the same decimal, a number of CPUs ("0.5", "1.5");
 *              result in thousandths of a CPU.
 *   uint:      decimal digits only, at most max.
 */
#ifndef CORDON_UNITS_H
#define CORDON_UNITS_H

#include <stddef.h>
#include <stdint.h>

int units_parse_size(const char *s, size_t len, uint64_t *out, const char **why);
int units_parse_duration_ms(const char *s, size_t len, uint64_t *out, const char **why);
int units_parse_seconds_ms(const char *s, size_t len, uint64_t *out, const char **why);
int units_parse_cpus_milli(const char *s, size_t len, uint64_t *out, const char **why);
int units_parse_uint(const char *s, size_t len, uint64_t max, uint64_t *out, const char **why);
/* Signed decimal integer within [min, max]. */
int units_parse_int(const char *s, size_t len, int64_t min, int64_t max, int64_t *out, const char **why);
/* Decimal or exponent number, finite. */
int units_parse_number(const char *s, size_t len, double *out, const char **why);

/* Shortest exact spelling for display: 65536 -> "64k", 1000 -> "1000". */
void units_format_size(uint64_t bytes, char *buf, size_t cap);
/* 30000 -> "30s", 1500 -> "1500ms", 120000 -> "2m". */
void units_format_duration(uint64_t ms, char *buf, size_t cap);

#endif
