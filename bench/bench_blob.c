/*
 * bench_blob.c - compile and load figures for the cafe example (make bench).
 *
 * Each figure is printed beside the floor it is built on, measured in the
 * same run: compiling against bare libyaml event parsing of the same files,
 * loading against one SHA-256 of the same bytes.  The ratio is what the
 * design budget talks about; absolute numbers move with the machine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>
#include <yaml.h>

#include "compiler/compile.h"
#include "cordon/blob.h"

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static size_t yaml_events(const struct src_file *f)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	size_t n = 0;
	int done = 0;

	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)f->text, f->len);
	while (!done && yaml_parser_parse(&parser, &ev)) {
		done = ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
		n++;
	}
	yaml_parser_delete(&parser);
	return n;
}

int main(void)
{
	const char *src = getenv("CORDON_SRC");
	char app[4096], tools[4096];
	const char *tool_paths[1] = { tools };
	struct compile_inputs in;
	struct cpol_policy p;
	struct blob_error be;
	struct diags d;
	uint8_t *blob = NULL, sha[32];
	size_t blen = 0, sink = 0;
	double t0, t_compile, t_yaml, t_load, t_sha;
	int i, n_compile = 2000, n_load = 200000;

	if (sodium_init() < 0)
		return 1;
	snprintf(app, sizeof(app), "%s/examples/cafe/app.yaml", src ? src : ".");
	snprintf(tools, sizeof(tools), "%s/examples/cafe/tools.yaml", src ? src : ".");
	diags_init(&d);
	if (compile_inputs_read(&in, app, tool_paths, 1, &d) != 0) {
		diags_print(&d, stderr);
		return 1;
	}

	/* Compile: YAML -> checked policy -> blob bytes, files already read. */
	t0 = now_us();
	for (i = 0; i < n_compile; i++) {
		if (compile_sources(&in.app, in.refs, 1, &p, &d) != 0 || blob_emit(&p, &blob, &blen, &be) != 0) {
			diags_print(&d, stderr);
			return 1;
		}
		if (i + 1 < n_compile)
			free(blob);
		policy_free(&p);
	}
	t_compile = (now_us() - t0) / n_compile;
	t0 = now_us();
	for (i = 0; i < n_compile; i++)
		sink += yaml_events(&in.app) + yaml_events(&in.tools[0]);
	t_yaml = (now_us() - t0) / n_compile;

	/* Load: every check of the runtime's loader, hash included. */
	t0 = now_us();
	for (i = 0; i < n_load; i++) {
		if (blob_load(blob, blen, CPOL_ARCH_X86_64, &p, &be) != 0) {
			fprintf(stderr, "load: %s\n", be.msg);
			return 1;
		}
		sink += p.ntools;
		policy_free(&p);
	}
	t_load = (now_us() - t0) / n_load;
	t0 = now_us();
	for (i = 0; i < n_load; i++) {
		crypto_hash_sha256(sha, blob, blen);
		sink += sha[0];
	}
	t_sha = (now_us() - t0) / n_load;

	printf("bench_blob: cafe example, blob %zu bytes (sink %zu)\n", blen, sink);
	printf("  compile (parse, check, emit):   %8.1f us   = %5.1fx libyaml event parse alone (%.1f us)\n",
	       t_compile, t_compile / t_yaml, t_yaml);
	printf("  load + verify (all checks):     %8.2f us   = %5.1fx one SHA-256 of the blob (%.2f us)\n", t_load,
	       t_load / t_sha, t_sha);
	free(blob);
	diags_free(&d);
	compile_inputs_free(&in);
	return 0;
}
