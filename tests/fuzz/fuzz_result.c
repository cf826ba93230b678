/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_result.c - result.json as the sandbox may write it
 * (runtime/supervise/outputs.c result_read): any bytes give a value or a
 * refusal with a message; never a crash, a leak or a read past the bound.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/supervise/outputs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int out_dir = -1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char tmpl[] = "/tmp/fuzz-result.XXXXXX", err[512];
	cJSON *v = NULL;
	int fd, rc;

	if (out_dir < 0) {
		if (mkdtemp(tmpl) == NULL || (out_dir = open(tmpl, O_RDONLY | O_DIRECTORY)) < 0)
			abort();
	}
	fd = openat(out_dir, "result.json", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	close(fd);
	/* the bound is below some inputs, so the size refusal is exercised */
	rc = result_read(out_dir, 4096, &v, err, sizeof(err));
	if (rc == 0 && v == NULL)
		abort();
	if (rc < 0 && (v != NULL || err[0] == '\0'))
		abort();
	cJSON_Delete(v);
	return 0;
}
