/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_lint_config.c - libFuzzer target for `.cordonlint.yaml`
 * (lint/config.c).  The loader reads a path (the baseline it names is
 * resolved against the file's directory), so each input is written to one
 * scratch file first.  Beyond "no crash, no leak, no hang": a file refused
 * must say why (at least one diagnostic), never fail silently.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lint/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[] = "/tmp/fuzz-lint-config-XXXXXX";

static void scratch_remove(void)
{
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	struct lint_config cfg;
	struct diags d;

	if (fd < 0) {
		if ((fd = mkstemp(path)) < 0)
			abort();
		atexit(scratch_remove);
	}
	if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	diags_init(&d);
	if (lint_config_load(&cfg, path, &d) != 0 && d.n == 0)
		abort();
	lint_config_free(&cfg);
	diags_free(&d);
	return 0;
}
