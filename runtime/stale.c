/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stale.c - is the supervisor a name was made by still alive?
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/stale.h"

int stale_pid_name(const char *name, const char *prefix, char sep)
{
	size_t n = strlen(prefix);
	char *end;
	long pid;

	if (strncmp(name, prefix, n) != 0)
		return 0;
	errno = 0;
	pid = strtol(name + n, &end, 10);
	if (end == name + n || *end != sep || pid <= 0 || errno != 0)
		return 0;
	return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}
