/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy_home.c - where cordonc's own shipped profiles are (policy_home.h).
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "compiler/policy_home.h"

/* The directory this binary sits in. */
static int policy_home_exe_dir(char *out, size_t size)
{
	ssize_t len = readlink("/proc/self/exe", out, size - 1);
	char *slash;

	if (len <= 0 || (size_t)len >= size - 1)
		return -1;
	out[len] = '\0';
	slash = strrchr(out, '/');
	if (slash == NULL || slash == out)
		return -1;
	*slash = '\0';
	return 0;
}

/* The marker's line, when dir is a build tree's, made absolute against
 * dir (a relative path would otherwise be taken against the cwd). */
static int policy_home_marker(const char *dir, char *out, size_t size)
{
	char path[PATH_MAX], line[PATH_MAX];
	FILE *f;
	int rc = -1;

	if (snprintf(path, sizeof(path), "%s/" POLICY_HOME_MARKER, dir) >= (int)sizeof(path))
		return -1;
	f = fopen(path, "re");
	if (f == NULL)
		return -1;
	if (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '/')
			rc = snprintf(out, size, "%s", line) < (int)size ? 0 : -1;
		else if (line[0] != '\0')
			rc = snprintf(out, size, "%s/%s", dir, line) < (int)size ? 0 : -1;
	}
	fclose(f);
	return rc;
}

int policy_home_dir(char *out, size_t size)
{
	char dir[PATH_MAX];
	char *slash;

	if (policy_home_exe_dir(dir, sizeof(dir)) != 0)
		return -1;
	if (policy_home_marker(dir, out, size) == 0)
		return 0;
	/* PREFIX/bin -> PREFIX, cut by hand rather than through "/.." so that
	 * messages name /usr/share/..., not /usr/bin/../share/... */
	slash = strrchr(dir, '/');
	if (slash == NULL)
		return -1;
	*slash = '\0';
	if (snprintf(out, size, "%s/share/cordon/policies", dir) >= (int)size)
		return -1;
	return 0;
}
