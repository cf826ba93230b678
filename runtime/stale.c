/*
 * stale.c - is the supervisor a name was made by still alive?  And the
 * sweep of run directories whose supervisor is not.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/rmtree.h"
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

int stale_sweep_rundirs(const char *tmpdir, char *err, size_t n)
{
	int fd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = NULL;
	struct dirent *e;
	unsigned failed = 0;
	char first[512] = "", why[512];
	int rc = -1;

	if (fd < 0) {
		snprintf(err, n, "%.300s: %s", tmpdir, strerror(errno));
		goto out;
	}
	d = fdopendir(fd);
	if (d == NULL) {
		snprintf(err, n, "%.300s: %s", tmpdir, strerror(errno));
		goto out;
	}
	fd = -1;
	for (;;) {
		struct stat st;

		errno = 0;
		e = readdir(d);
		if (e == NULL)
			break;
		/* The type is judged on the entry itself, never through a
		 * link: a sandbox-made symlink named like a run directory is
		 * not ours to follow. */
		if (!stale_pid_name(e->d_name, "cordon-run.", '.') ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
		    st.st_uid != geteuid())
			continue;
		if (rmtree_at(dirfd(d), e->d_name, why, sizeof(why)) != 0 && failed++ == 0)
			snprintf(first, sizeof(first), "%s", why);
	}
	if (errno != 0) {
		snprintf(err, n, "%.300s: %s", tmpdir, strerror(errno));
		goto out;
	}
	if (failed > 0) {
		snprintf(err, n, "%.300s: %u stale run directories not removed; the first: %s", tmpdir, failed, first);
		goto out;
	}
	rc = 0;
out:
	if (d != NULL)
		closedir(d);
	if (fd >= 0)
		close(fd);
	return rc;
}
