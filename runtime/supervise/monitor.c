/*
 * monitor.c - how many bytes the executor's writable roots hold.
 *
 * The supervisor polls this every workspace_monitor_interval_s; the walk
 * never follows a symlink (the sandbox made them) and counts allocated
 * blocks, so a sparse file costs what it really costs on disk.  Hard links
 * count once per name: an over-count can only stop a run early, never let a
 * fill through.
 */
#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/supervise/supervise.h"

#define MONITOR_MAX_DEPTH 64

static uint64_t walk(int dirfd, int depth, uint64_t *entries)
{
	uint64_t total = 0;
	DIR *d;
	struct dirent *e;

	if (depth > MONITOR_MAX_DEPTH)
		return 0;
	d = fdopendir(dirfd);
	if (d == NULL) {
		close(dirfd);
		return 0;
	}
	while ((e = readdir(d)) != NULL) {
		struct stat st;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		(*entries)++;
		if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		total += (uint64_t)st.st_blocks * 512u;
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub >= 0)
				total += walk(sub, depth + 1, entries);
		}
	}
	closedir(d);
	return total;
}

uint64_t monitor_bytes(const char *const *roots, unsigned nroots, uint64_t *entries)
{
	uint64_t total = 0;

	*entries = 0;
	for (unsigned i = 0; i < nroots; i++) {
		int fd = open(roots[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (fd >= 0)
			total += walk(fd, 0, entries);
	}
	return total;
}
