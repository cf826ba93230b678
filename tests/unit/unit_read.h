/* SPDX-License-Identifier: Apache-2.0 */
/*
 * unit_read.h - for unit tests that read a small /proc file (one read,
 * NUL-terminated) from a child made by a raw clone, where stdio is best
 * left alone: open and read only.
 */
#ifndef CORDON_UNIT_READ_H
#define CORDON_UNIT_READ_H

#include <fcntl.h>
#include <unistd.h>

/* Bytes read into buf (then NUL-terminated), or -1. */
static inline ssize_t unit_read_small(const char *path, char *buf, size_t len)
{
	ssize_t got;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || len == 0)
		return -1;
	got = read(fd, buf, len - 1);
	close(fd);
	if (got < 0)
		return -1;
	buf[got] = '\0';
	return got;
}

#endif
