/* SPDX-License-Identifier: Apache-2.0 */
/*
 * figure.h - the C benches' machine-readable figures (make bench).
 *
 * A figure is cordon's samples beside a peer's samples measured in the same
 * run; bench/report.py gathers them into one table, results.json and a
 * chart (docs/bench.md).  figure_emit() appends one JSON line per figure to
 * the file named by BENCH_FIGURES (bench/figures.py writes the same record
 * for the Python benches); without BENCH_FIGURES it does nothing, so a
 * bench run by hand prints only its text.  One write() per line with
 * O_APPEND: lines from benches sharing a file never interleave.
 *
 * Header only: each bench is one file and links nothing else of bench/.
 */
#ifndef CORDON_BENCH_FIGURE_H
#define CORDON_BENCH_FIGURE_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct figure {
	const char *name; /* stable: a baseline is compared by it */
	const char *unit;
	int higher_is_better;
	const double *v; /* cordon's samples, one per run */
	size_t n;
	const char *peer; /* what the ratio is against, measured in the same run */
	const double *pv;
	size_t pn;
};

/* BENCH_QUICK=1 asks for fewer runs; each bench chooses how many. */
static inline size_t figure_runs(size_t full, size_t quick)
{
	const char *q = getenv("BENCH_QUICK");

	return q != NULL && strcmp(q, "1") == 0 ? quick : full;
}

static inline int figure_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median, min and max of n > 0 samples; v is left as it was. */
static inline int figure_stats(const double *v, size_t n, double out[3])
{
	double *s = n > 0 ? malloc(n * sizeof(*s)) : NULL;

	if (s == NULL)
		return -1;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), figure_cmp);
	out[0] = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	out[1] = s[0];
	out[2] = s[n - 1];
	free(s);
	return 0;
}

/* Names, units and peers are the benches' own constants: refused, not
 * escaped, if they hold anything JSON would need escaped. */
static inline int figure_plain(const char *s)
{
	for (; *s; s++)
		if (*s == '"' || *s == '\\' || (unsigned char)*s < 0x20)
			return 0;
	return 1;
}

/* 0, or -1 when the figure is malformed or its line could not be written. */
static inline int figure_emit(const struct figure *f)
{
	const char *path = getenv("BENCH_FIGURES");
	double a[3], p[3];
	char line[1024];
	int fd = -1, len, rc = -1;

	if (path == NULL || *path == '\0')
		return 0;
	if (!figure_plain(f->name) || !figure_plain(f->unit) || !figure_plain(f->peer) ||
	    figure_stats(f->v, f->n, a) != 0 || figure_stats(f->pv, f->pn, p) != 0 || p[0] <= 0)
		goto out;
	len = snprintf(line, sizeof(line),
		       "{\"kind\":\"figure\",\"name\":\"%s\",\"unit\":\"%s\",\"better\":\"%s\",\"median\":%.6g,"
		       "\"min\":%.6g,\"max\":%.6g,\"n\":%zu,\"peer\":\"%s\",\"peer_median\":%.6g,\"peer_n\":%zu,"
		       "\"ratio\":%.6g}\n",
		       f->name, f->unit, f->higher_is_better ? "higher" : "lower", a[0], a[1], a[2], f->n, f->peer, p[0],
		       f->pn, a[0] / p[0]);
	if (len < 0 || (size_t)len >= sizeof(line))
		goto out;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0 && write(fd, line, (size_t)len) == len)
		rc = 0;
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

/* How many of the n figures could not be recorded. */
static inline size_t figure_emit_all(const struct figure *f, size_t n)
{
	size_t bad = 0;

	for (size_t i = 0; i < n; i++)
		bad += figure_emit(&f[i]) != 0;
	return bad;
}

#endif
