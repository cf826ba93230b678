/* SPDX-License-Identifier: Apache-2.0 */
/*
 * unit_fds.h - for unit tests that check no fd is left behind: how many
 * this process has open.  Include after <cmocka.h>.
 */
#ifndef CORDON_UNIT_FDS_H
#define CORDON_UNIT_FDS_H

#include <dirent.h>

/* Entries of /proc/self/fd ("." and ".." and the listing's own fd count
 * too, the same on every call). */
static inline int unit_fd_count(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n;
}

#endif
