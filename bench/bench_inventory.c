/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_inventory.c - compile time against inventory size (make bench).
 *
 * Compiling must stay linear in its input: a 1 MiB inventory, within every
 * documented limit, once took a minute because positions were found by
 * rescanning the file.  This bench compiles generated inventories of 1, 10
 * and 100 tools and the largest the limits allow (256 tools, close to the
 * 1 MiB file limit), each with the same small descriptor, and sets each
 * beside libyaml's event parse of the same two texts in the same batch.  A
 * compile that is linear keeps its ratio roughly flat from 10x up (at 1x
 * the descriptor's seccomp profile dominates); a quadratic one shows as a
 * ratio that grows with the size.
 *
 * The generator is deterministic: the same tool count gives the same bytes
 * on every machine, so figures of two runs compare.  `bench_inventory
 * --write N FILE` writes the inventory of N tools (and FILE.app.yaml, the
 * descriptor) for profiling by hand: `cordonc compile FILE.app.yaml FILE`.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/figure.h"
#include "bench/yaml_floor.h"
#include "compiler/compile.h"
#include "cordon/blob.h"

/* Each tool is about 4 KB: 15 parameter specs (3840 for 256 tools, under
 * the 4096 limit) and 40 constraints, the part whose positions the
 * compiler has to find in the file.  256 of them come close to 1 MiB. */
#define GEN_CONSTRAINTS 40

static const char app_text[] = "version: 1\n"
			       "app: inventory-bench\n"
			       "execution:\n"
			       "  runtime: { mode: isolated, timeout: 30s, memory: 256m, pids: 64 }\n"
			       "  executor:\n"
			       "    interpreter: /usr/bin/python3\n"
			       "    uid: 1001\n"
			       "    gid: 1000\n"
			       "    network: none\n"
			       "    mounts:\n"
			       "      - { source: /usr, target: /usr }\n"
			       "    seccomp: { profile: python-compute }\n";

struct gbuf {
	char *v;
	size_t n, cap;
	int oom;
};

static void gen_put(struct gbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void gen_put(struct gbuf *b, const char *fmt, ...)
{
	va_list ap;
	int len;

	if (b->oom)
		return;
	va_start(ap, fmt);
	len = vsnprintf(b->v ? b->v + b->n : NULL, b->v ? b->cap - b->n : 0, fmt, ap);
	va_end(ap);
	if (len < 0) {
		b->oom = 1;
		return;
	}
	if (b->v == NULL || b->n + (size_t)len + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 65536;
		char *nv;

		while (cap < b->n + (size_t)len + 1)
			cap *= 2;
		if ((nv = realloc(b->v, cap)) == NULL) {
			b->oom = 1;
			return;
		}
		b->v = nv;
		b->cap = cap;
		va_start(ap, fmt);
		vsnprintf(b->v + b->n, b->cap - b->n, fmt, ap);
		va_end(ap);
	}
	b->n += (size_t)len;
}

/* Constraint k of tool i: every form the expression language has, with
 * numbers from i and k so that no two lines are the same text. */
static void gen_constraint(struct gbuf *b, unsigned i, unsigned k)
{
	switch (k % 5) {
	case 0:
		gen_put(b, "      - 'len(subject) <= %u && starts_with(subject, \"t%u\")'\n", 100 + k, i);
		break;
	case 1:
		gen_put(b, "      - \"!has(count) || count >= %u && count <= %u\"\n", k, 100000 + i);
		break;
	case 2:
		gen_put(b, "      - 'level in [\"low\", \"normal\", \"high\"] || len(note_%u) < %u'\n", k % 3, 40 + k);
		break;
	case 3:
		gen_put(b, "      - \"!has(amount) || amount < %u.5 || urgent == true\"\n", 1000 + i + k);
		break;
	default:
		gen_put(b, "      - 'len(tags) <= %u || ends_with(to, \"@t%u.example.org\")'\n", 1 + k % 8, i);
		break;
	}
}

static void gen_tool(struct gbuf *b, unsigned i)
{
	gen_put(b, "  - id: gen%03u.call\n", i);
	gen_put(b, "    description: >-\n"
		   "      Generated tool %u of the inventory bench. It takes a subject, a count, an amount,\n"
		   "      a level, three notes, tags and a nested options object, like a real tool would.\n"
		   "      Its constraints use every form of the expression language: comparisons, in,\n"
		   "      len, has, starts_with and ends_with, joined with && and ||, so that compiling\n"
		   "      them costs what a real inventory's would, and their positions are looked up.\n",
		i);
	gen_put(b, "    params:\n"
		   "      subject: { type: string, min_length: 1, max_length: 200, required: true }\n"
		   "      to: { type: string, min_length: 3, max_length: 254, required: true }\n"
		   "      count: { type: integer, min: 0, max: %u }\n"
		   "      amount: { type: number, min: -1000000, max: 1000000 }\n"
		   "      level: { type: string, enum: [low, normal, high] }\n"
		   "      urgent: { type: boolean }\n"
		   "      note_0: { type: string, max_length: 4096 }\n"
		   "      note_1: { type: string, max_length: 4096 }\n"
		   "      note_2: { type: string, max_length: 4096 }\n"
		   "      tags:\n"
		   "        type: array\n"
		   "        max_items: 8\n"
		   "        items: { type: string, min_length: 1, max_length: 32 }\n"
		   "      options:\n"
		   "        type: object\n"
		   "        properties:\n"
		   "          dry_run: { type: boolean }\n"
		   "          retries: { type: integer, min: 0, max: 5 }\n",
		100000 + i);
	gen_put(b, "    constraints:\n");
	for (unsigned k = 0; k < GEN_CONSTRAINTS; k++)
		gen_constraint(b, i, k);
	gen_put(b, "    side_effect: %s\n"
		   "    timeout: %us\n"
		   "    exec: [/bin/cat, --, t%u]\n"
		   "    env_from: [GEN_TOKEN_%u]\n"
		   "    allow: { roles: [analyst, role_%u] }\n"
		   "    max_calls: %u\n\n",
		i % 2 ? "true" : "false", 1 + i % 60, i, i, i % 7, 1 + i % 100);
}

/* The inventory of n tools; NULL when out of memory. */
static char *gen_inventory(unsigned n, size_t *len)
{
	struct gbuf b = { NULL, 0, 0, 0 };

	gen_put(&b, "# Generated by bench/bench_inventory.c: %u tools.\nversion: 1\ntools:\n", n);
	for (unsigned i = 0; i < n; i++)
		gen_tool(&b, i);
	if (b.oom) {
		free(b.v);
		return NULL;
	}
	*len = b.n;
	return b.v;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Microseconds per compile, from the texts in memory (the checks of
 * src_read and the position index included) to the blob's bytes. */
static double compile_batch(const char *inv, size_t inv_len, size_t n, size_t *sink, struct diags *d)
{
	double t0 = now_us();

	for (size_t i = 0; i < n; i++) {
		struct src_file app, tools;
		const struct src_file *refs[1] = { &tools };
		struct cpol_policy p;
		struct blob_error be;
		uint8_t *blob = NULL;
		size_t blen = 0;
		int rc;

		rc = src_from_mem("app.yaml", app_text, sizeof(app_text) - 1, YDOC_MAX_BYTES, &app, d) |
		     src_from_mem("tools.yaml", inv, inv_len, YDOC_MAX_BYTES, &tools, d);
		if (rc == 0) {
			rc = compile_sources(&app, refs, 1, &p, d);
			if (rc == 0)
				rc = blob_emit(&p, &blob, &blen, &be);
			policy_free(&p);
		}
		free(blob);
		*sink += blen;
		if (rc != 0) {
			diags_print(d, stderr);
			src_free(&app);
			src_free(&tools);
			return -1;
		}
		src_free(&app);
		src_free(&tools);
	}
	return (now_us() - t0) / (double)n;
}

static double yaml_batch(const char *inv, size_t inv_len, size_t n, size_t *sink)
{
	double t0 = now_us();

	for (size_t i = 0; i < n; i++)
		*sink += yaml_floor_events(app_text, sizeof(app_text) - 1) + yaml_floor_events(inv, inv_len);
	return (now_us() - t0) / (double)n;
}

static int write_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");
	int rc = -1;

	if (f == NULL)
		return -1;
	if (fwrite(text, 1, len, f) == len)
		rc = 0;
	if (fclose(f) != 0)
		rc = -1;
	return rc;
}

static int write_mode(const char *count, const char *path)
{
	char app_path[4096];
	char *end = NULL, *inv;
	unsigned long n = strtoul(count, &end, 10);
	size_t len = 0;
	int rc = 1;

	if (end == count || *end != '\0' || n == 0 || n > COMPILE_MAX_TOOLS) {
		fprintf(stderr, "bench_inventory: --write takes 1 to %d tools\n", COMPILE_MAX_TOOLS);
		return 2;
	}
	snprintf(app_path, sizeof(app_path), "%s.app.yaml", path);
	if ((inv = gen_inventory((unsigned)n, &len)) == NULL)
		return 1;
	if (write_file(path, inv, len) == 0 && write_file(app_path, app_text, sizeof(app_text) - 1) == 0)
		rc = 0;
	else
		perror(path);
	free(inv);
	return rc;
}

struct size_case {
	const char *name; /* figure name */
	unsigned tools;
	size_t per_batch; /* compiles a batch, full run */
};

int main(int argc, char **argv)
{
	static const struct size_case cases[] = {
		{ "inventory.compile.1x", 1, 20 },
		{ "inventory.compile.10x", 10, 8 },
		{ "inventory.compile.100x", 100, 2 },
		{ "inventory.compile.max", COMPILE_MAX_TOOLS, 1 },
	};
	const size_t ncases = sizeof(cases) / sizeof(cases[0]);
	size_t batches = figure_runs(15, 5), sink = 0;
	struct diags d;
	double *t = NULL;
	char *inv = NULL;
	int rc = 1;

	if (argc == 4 && strcmp(argv[1], "--write") == 0)
		return write_mode(argv[2], argv[3]);
	if (argc != 1) {
		fprintf(stderr, "usage: bench_inventory [--write TOOLS FILE]\n");
		return 2;
	}
	diags_init(&d);
	if ((t = calloc(2 * batches, sizeof(*t))) == NULL)
		goto out;
	printf("bench_inventory: compile of generated inventories, medians of %zu batches\n", batches);
	for (size_t c = 0; c < ncases; c++) {
		size_t len = 0, n = figure_runs(cases[c].per_batch, 1);
		double st[2][3];

		free(inv);
		if ((inv = gen_inventory(cases[c].tools, &len)) == NULL)
			goto out;
		/* Batch by batch, the compile and its floor back to back, so
		 * both meet the same moment of a busy machine. */
		for (size_t k = 0; k < batches; k++) {
			if ((t[k] = compile_batch(inv, len, n, &sink, &d)) < 0)
				goto out;
			t[batches + k] = yaml_batch(inv, len, n, &sink);
		}
		if (figure_stats(t, batches, st[0]) != 0 || figure_stats(t + batches, batches, st[1]) != 0)
			goto out;
		printf("  %-24s %3u tools %8zu bytes: %10.1f us = %6.2fx libyaml event parse (%.1f us)\n",
		       cases[c].name, cases[c].tools, len, st[0][0], st[0][0] / st[1][0], st[1][0]);
		{
			const struct figure f = { cases[c].name, "us", 0, t, batches,
						  "libyaml event parse, same files", t + batches, batches };

			if (figure_emit(&f) != 0) {
				fprintf(stderr, "bench_inventory: figure not recorded in %s\n", getenv("BENCH_FIGURES"));
				goto out;
			}
		}
	}
	printf("  (sink %zu)\n", sink);
	rc = 0;
out:
	free(inv);
	free(t);
	diags_free(&d);
	return rc;
}
