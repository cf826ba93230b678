/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_blob.c - compile and load figures for the cafe example (make bench).
 *
 * Each figure is printed (and recorded, bench/figure.h) beside the floor it
 * is built on, measured in the same run: compiling against bare libyaml event parsing of the same files,
 * loading against one SHA-256 of the same bytes.  The ratio is what the
 * design budget talks about; absolute numbers move with the machine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>
#include "compiler/compile.h"
#include "cordon/blob.h"
#include "bench/figure.h"
#include "bench/yaml_floor.h"

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Microseconds per compile of the files already read (YAML -> checked
 * policy -> blob bytes); *blob keeps the last blob. */
static double compile_batch(struct compile_inputs *in, size_t n, uint8_t **blob, size_t *blen, struct diags *d)
{
	struct cpol_policy p;
	struct blob_error be;
	double t0 = now_us();

	for (size_t i = 0; i < n; i++) {
		free(*blob);
		*blob = NULL;
		if (compile_sources(&in->app, in->refs, 1, &p, d) != 0 || blob_emit(&p, blob, blen, &be) != 0)
			return -1;
		policy_free(&p);
	}
	return (now_us() - t0) / (double)n;
}

static double yaml_batch(const struct compile_inputs *in, size_t n, size_t *sink)
{
	double t0 = now_us();

	for (size_t i = 0; i < n; i++)
		*sink += yaml_floor_events(in->app.text, in->app.len) + yaml_floor_events(in->tools[0].text, in->tools[0].len);
	return (now_us() - t0) / (double)n;
}

/* Every check of the runtime's loader, hash included. */
static double load_batch(const uint8_t *blob, size_t blen, size_t n, size_t *sink)
{
	struct cpol_policy p;
	struct blob_error be;
	double t0 = now_us();

	for (size_t i = 0; i < n; i++) {
		if (blob_load(blob, blen, CPOL_ARCH_X86_64, &p, &be) != 0) {
			fprintf(stderr, "bench_blob: load: %s\n", be.msg);
			return -1;
		}
		*sink += p.ntools;
		policy_free(&p);
	}
	return (now_us() - t0) / (double)n;
}

static double sha_batch(const uint8_t *blob, size_t blen, size_t n, size_t *sink)
{
	uint8_t sha[32];
	double t0 = now_us();

	for (size_t i = 0; i < n; i++) {
		crypto_hash_sha256(sha, blob, blen);
		*sink += sha[0];
	}
	return (now_us() - t0) / (double)n;
}

/*
 * Batches, each timing one op and its floor back to back, so both meet
 * the same moment of a busy machine; the figure is the median batch.
 */
int main(void)
{
	const char *src = getenv("CORDON_SRC");
	char app[4096], tools[4096];
	const char *tool_paths[1] = { tools };
	struct compile_inputs in;
	struct diags d;
	uint8_t *blob = NULL;
	size_t blen = 0, sink = 0, k, batches = figure_runs(31, 7), n_compile = figure_runs(40, 10),
	       n_load = figure_runs(2000, 500);
	double *t = NULL, st[4][3];
	int rc = 1;

	if (sodium_init() < 0)
		return 1;
	snprintf(app, sizeof(app), "%s/examples/cafe/app.yaml", src ? src : ".");
	snprintf(tools, sizeof(tools), "%s/examples/cafe/tools.yaml", src ? src : ".");
	diags_init(&d);
	if (compile_inputs_read(&in, app, tool_paths, 1, &d) != 0) {
		diags_print(&d, stderr);
		diags_free(&d);
		return 1;
	}
	/* t[0..3][batch]: compile, libyaml, load, SHA-256. */
	if ((t = calloc(4 * batches, sizeof(*t))) == NULL)
		goto out;
	for (k = 0; k < batches; k++) {
		t[k] = compile_batch(&in, n_compile, &blob, &blen, &d);
		if (t[k] < 0) {
			diags_print(&d, stderr);
			goto out;
		}
		t[batches + k] = yaml_batch(&in, n_compile, &sink);
		if ((t[2 * batches + k] = load_batch(blob, blen, n_load, &sink)) < 0)
			goto out;
		t[3 * batches + k] = sha_batch(blob, blen, n_load, &sink);
	}
	for (k = 0; k < 4; k++)
		if (figure_stats(t + k * batches, batches, st[k]) != 0)
			goto out;

	printf("bench_blob: cafe example, blob %zu bytes, medians of %zu batches (sink %zu)\n", blen, batches, sink);
	printf("  compile (parse, check, emit):   %8.1f us   = %5.1fx libyaml event parse alone (%.1f us)\n",
	       st[0][0], st[0][0] / st[1][0], st[1][0]);
	printf("  load + verify (all checks):     %8.2f us   = %5.1fx one SHA-256 of the blob (%.2f us)\n", st[2][0],
	       st[2][0] / st[3][0], st[3][0]);
	{
		const struct figure f[] = {
			{ "blob.compile", "us", 0, t, batches, "libyaml event parse, same files", t + batches, batches },
			{ "blob.load", "us", 0, t + 2 * batches, batches, "one SHA-256 of the blob", t + 3 * batches,
			  batches },
		};

		if (figure_emit_all(f, sizeof(f) / sizeof(f[0])) != 0) {
			fprintf(stderr, "bench_blob: figures not recorded in %s\n", getenv("BENCH_FIGURES"));
			goto out;
		}
	}
	rc = 0;
out:
	free(t);
	free(blob);
	diags_free(&d);
	compile_inputs_free(&in);
	return rc;
}
