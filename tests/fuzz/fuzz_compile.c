/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_compile.c - libFuzzer target for the compiler front end.
 *
 * The input is an app descriptor compiled with a fixed good inventory, or,
 * when it starts with "#tools\n", an inventory compiled with a fixed good
 * descriptor.  Beyond "no crash, no leak, no hang" it checks one property:
 * whatever the front end accepts, the writer can encode and the runtime's
 * loader accepts.  A policy the compiler emits and the runtime refuses is a
 * bug in one of the two, and this target aborts on it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compile.h"
#include "cordon/blob.h"

static const char good_app[] = "version: 1\n"
			       "app: fuzz\n"
			       "execution:\n"
			       "  executor:\n"
			       "    env: { LANG: C.UTF-8 }\n"
			       "agents:\n"
			       "  a: { tools: [x.y] }\n";

static const char good_tools[] = "version: 1\n"
				 "tools:\n"
				 "  - id: x.y\n"
				 "    description: d\n"
				 "    exec: [/bin/true]\n"
				 "    params:\n"
				 "      s: { type: string, max_length: 10, enum: [a, b] }\n"
				 "      o: { type: object, properties: { n: { type: number, min: 0 } } }\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char tag[] = "#tools\n";
	struct src_file app, tools;
	const struct src_file *refs[1];
	struct cpol_policy p, q;
	struct blob_error be;
	struct diags d;
	uint8_t *blob = NULL;
	size_t blen = 0;
	int is_tools = size >= sizeof(tag) - 1 && memcmp(data, tag, sizeof(tag) - 1) == 0;

	memset(&app, 0, sizeof(app));
	memset(&tools, 0, sizeof(tools));
	diags_init(&d);
	policy_init(&p);
	policy_init(&q);
	if (is_tools) {
		src_from_mem("app.yaml", good_app, sizeof(good_app) - 1, YDOC_MAX_BYTES, &app, &d);
		if (src_from_mem("tools.yaml", (const char *)data, size, YDOC_MAX_BYTES, &tools, &d) != 0)
			goto out;
	} else {
		src_from_mem("tools.yaml", good_tools, sizeof(good_tools) - 1, YDOC_MAX_BYTES, &tools, &d);
		if (src_from_mem("app.yaml", (const char *)data, size, YDOC_MAX_BYTES, &app, &d) != 0)
			goto out;
	}
	refs[0] = &tools;
	policy_free(&p);
	if (compile_sources(&app, refs, 1, &p, &d) != 0)
		goto out;
	if (blob_emit(&p, &blob, &blen, &be) != 0)
		goto out; /* a policy too large for the format: refused, fine */
	if (blob_load(blob, blen, CPOL_ARCH_X86_64, &q, &be) != 0)
		abort();
out:
	{
		/* Printing exercises the caret code on every diagnostic. */
		FILE *null = fopen("/dev/null", "w");

		if (null != NULL) {
			diags_print(&d, null);
			fclose(null);
		}
	}
	free(blob);
	policy_free(&p);
	policy_free(&q);
	diags_free(&d);
	src_free(&app);
	src_free(&tools);
	return 0;
}
