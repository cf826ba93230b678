/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_displays.c - one display bundle as the sandbox may write it
 * (runtime/supervise/displays.c displays_collect): any bytes give exactly
 * one element, either accepted (data with a text/plain string, no error)
 * or refused (empty data, an error with a code and a message); the array
 * prints as UTF-8, since it goes into the result as it is.  Never a
 * crash, a leak or a read past the bound.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/utf8.h"
#include "runtime/supervise/displays.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int ws = -1, dir = -1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char tmpl[] = "/tmp/fuzz-displays.XXXXXX";
	const cJSON *e, *err, *d;
	cJSON *arr;
	char *text;
	int fd;

	if (ws < 0) {
		if (mkdtemp(tmpl) == NULL || (ws = open(tmpl, O_RDONLY | O_DIRECTORY)) < 0 ||
		    mkdirat(ws, "work", 0700) != 0 || mkdirat(ws, "work/.cordon-display", 0700) != 0 ||
		    (dir = openat(ws, "work/.cordon-display", O_RDONLY | O_DIRECTORY)) < 0)
			abort();
	}
	fd = openat(dir, "000000.json", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	close(fd);
	arr = displays_collect(ws);
	if (arr == NULL || cJSON_GetArraySize(arr) != 1)
		abort();
	e = cJSON_GetArrayItem(arr, 0);
	err = cJSON_GetObjectItemCaseSensitive(e, "error");
	d = cJSON_GetObjectItemCaseSensitive(e, "data");
	if (cJSON_IsNull(err) ? !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(d, "text/plain"))
			      : (d->child != NULL ||
				 !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(err, "code")) ||
				 cJSON_GetObjectItemCaseSensitive(err, "message")->valuestring[0] == '\0'))
		abort();
	text = cJSON_PrintUnformatted(arr);
	if (text == NULL || utf8_prefix(text, strlen(text)) != strlen(text))
		abort();
	free(text);
	cJSON_Delete(arr);
	return 0;
}
