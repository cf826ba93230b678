/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_hostid.c - the host-id range text (--host-ids, hostid_range_parse)
 * and the account files hostid reads (passwd, group, subuid, subgid
 * lines): any range text gives a range that holds neither 0 nor
 * (uid_t)-1, or an error naming --host-ids; any file content gives taken
 * or free for an id, or an error; never a crash or a leak.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/hostid.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_range(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), err[512] = "";
	struct hostid_range r;

	if (text == NULL)
		return;
	memcpy(text, data, size);
	text[size] = '\0';
	if (hostid_range_parse(text, &r, err, sizeof(err)) == 0) {
		if (r.first == 0 || r.count == 0 || (uint64_t)r.first + r.count - 1 >= UINT32_MAX)
			abort(); /* a range that maps root or (uid_t)-1 */
	} else if (strncmp(err, "--host-ids: ", 12) != 0) {
		abort(); /* every refusal names the flag */
	}
	free(text);
}

/* The same bytes as all four databases; the first four bytes pick the id. */
static void fuzz_files(const uint8_t *data, size_t size)
{
	char path[64], err[512] = "";
	uint32_t id = 1;
	int fd = memfd_create("fuzz-hostid", MFD_CLOEXEC), rc;
	struct hostid_files files;

	if (fd < 0)
		return;
	if (size >= 4)
		memcpy(&id, data, 4);
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	files = (struct hostid_files){ path, path, path, path };
	rc = hostid_is_taken(&files, id, err, sizeof(err));
	if (rc < -1 || rc > 1 || (rc == -1 && err[0] == '\0'))
		abort();
	/* 0 and (uid_t)-1 are never free, whatever the files say. */
	if (hostid_is_taken(&files, 0, err, sizeof(err)) == 0 ||
	    hostid_is_taken(&files, UINT32_MAX, err, sizeof(err)) == 0)
		abort();
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 0 && data[0] == '#')
		fuzz_files(data + 1, size - 1);
	else
		fuzz_range(data, size);
	return 0;
}
