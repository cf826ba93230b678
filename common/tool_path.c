/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tool_path.c - ssh-StrictModes for tool executables (tool_path.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/tool_path.h"

/* The kernel's own bound on symlinks followed in one lookup (MAXSYMLINKS). */
#define TP_MAX_LINKS 40

/* Owner and mode of one component; the sentence names it. */
static enum tool_path_verdict tp_judge(const char *name, const struct stat *st, uid_t trusted, char *why,
				       size_t n)
{
	unsigned mode = (unsigned)(st->st_mode & 07777);

	if (st->st_uid != 0 && st->st_uid != trusted) {
		snprintf(why, n, "%s is owned by uid %u; only root or uid %u may own the tool or a directory above it",
			 name, (unsigned)st->st_uid, (unsigned)trusted);
		return TOOL_PATH_UNSAFE;
	}
	/* The sticky bit protects names from other users' unlink, not from
	 * anyone creating a name: a world-writable directory fails with it. */
	if (st->st_mode & S_IWOTH) {
		snprintf(why, n, "%s is writable by others (mode %04o)", name, mode);
		return TOOL_PATH_UNSAFE;
	}
	if (st->st_mode & S_IWGRP) {
		snprintf(why, n, "%s is writable by its group (mode %04o)", name, mode);
		return TOOL_PATH_UNSAFE;
	}
	return TOOL_PATH_OK;
}

/* dst = a "/" b, within PATH_MAX.  0, or -1 when too long. */
static int tp_join(char *dst, const char *a, const char *b, size_t blen)
{
	size_t alen = strlen(a);

	if (alen + 1 + blen >= PATH_MAX)
		return -1;
	memmove(dst + alen + 1, b, blen);
	memmove(dst, a, alen);
	dst[alen] = '/';
	dst[alen + 1 + blen] = '\0';
	return 0;
}

enum tool_path_verdict tool_path_check(const char *path, uid_t trusted, char *why, size_t n)
{
	/* cur: the resolved directory reached so far ("" is "/"), every
	 * component of it already judged.  rest: what is still to walk. */
	char cur[PATH_MAX], rest[PATH_MAX], cand[PATH_MAX], link[PATH_MAX];
	struct stat st;
	int links = 0;

	if (path[0] != '/') {
		snprintf(why, n, "%s is not an absolute path", path);
		return TOOL_PATH_UNSAFE;
	}
	if (strlen(path) >= sizeof(rest)) {
		snprintf(why, n, "the path is longer than %d bytes", PATH_MAX - 1);
		return TOOL_PATH_UNSAFE;
	}
	if (lstat("/", &st) != 0) {
		snprintf(why, n, "/: %s", strerror(errno));
		return TOOL_PATH_UNSAFE;
	}
	if (tp_judge("/", &st, trusted, why, n) != TOOL_PATH_OK)
		return TOOL_PATH_UNSAFE;
	cur[0] = '\0';
	strcpy(rest, path);
	for (;;) {
		const char *comp = rest, *slash;
		size_t clen;
		int last;
		ssize_t l;

		while (*comp == '/')
			comp++;
		if (*comp == '\0') {
			/* "/usr/bin/" or a link to a directory at the end. */
			snprintf(why, n, "%s is a directory, not a regular file", cur[0] ? cur : "/");
			return TOOL_PATH_UNSAFE;
		}
		slash = strchr(comp, '/');
		clen = slash ? (size_t)(slash - comp) : strlen(comp);
		/* The last component: nothing but slashes follows it. */
		last = slash == NULL || slash[strspn(slash, "/")] == '\0';
		if (clen == 1 && comp[0] == '.') {
			memmove(rest, comp + clen, strlen(comp + clen) + 1);
			if (last) {
				snprintf(why, n, "%s is a directory, not a regular file", cur[0] ? cur : "/");
				return TOOL_PATH_UNSAFE;
			}
			continue;
		}
		if (clen == 2 && comp[0] == '.' && comp[1] == '.') {
			/* cur is resolved, so its parent is the real one, and
			 * was judged on the way down. */
			char *up = strrchr(cur, '/');

			if (up != NULL)
				*up = '\0';
			memmove(rest, comp + clen, strlen(comp + clen) + 1);
			if (last) {
				snprintf(why, n, "%s is a directory, not a regular file", cur[0] ? cur : "/");
				return TOOL_PATH_UNSAFE;
			}
			continue;
		}
		if (tp_join(cand, cur, comp, clen) != 0) {
			snprintf(why, n, "the path is longer than %d bytes", PATH_MAX - 1);
			return TOOL_PATH_UNSAFE;
		}
		if (lstat(cand, &st) != 0) {
			if (errno == ENOENT) {
				snprintf(why, n, "%s does not exist", cand);
				return TOOL_PATH_MISSING;
			}
			snprintf(why, n, "%s: %s", cand, strerror(errno));
			return TOOL_PATH_UNSAFE;
		}
		if (S_ISLNK(st.st_mode)) {
			/* The link's directory (cur) was judged; the link
			 * itself cannot be changed but by replacing it there.
			 * Its target is walked in place of the link. */
			if (++links > TP_MAX_LINKS) {
				snprintf(why, n, "%s: more than %d symbolic links on the way", path, TP_MAX_LINKS);
				return TOOL_PATH_UNSAFE;
			}
			l = readlink(cand, link, sizeof(link) - 1);
			if (l < 0 || l == 0) {
				snprintf(why, n, "%s: cannot read the link: %s", cand, l < 0 ? strerror(errno) : "empty");
				return TOOL_PATH_UNSAFE;
			}
			link[l] = '\0';
			/* rest = target "/" what followed the link */
			if (slash == NULL) {
				memmove(rest, link, (size_t)l + 1);
			} else {
				size_t tail = strlen(slash);

				if ((size_t)l + tail >= sizeof(rest)) {
					snprintf(why, n, "the path is longer than %d bytes", PATH_MAX - 1);
					return TOOL_PATH_UNSAFE;
				}
				memmove(rest + l, slash, tail + 1);
				memcpy(rest, link, (size_t)l);
			}
			if (link[0] == '/')
				cur[0] = '\0';
			continue;
		}
		if (tp_judge(cand, &st, trusted, why, n) != TOOL_PATH_OK)
			return TOOL_PATH_UNSAFE;
		if (last) {
			if (!S_ISREG(st.st_mode)) {
				snprintf(why, n, "%s is not a regular file", cand);
				return TOOL_PATH_UNSAFE;
			}
			return TOOL_PATH_OK;
		}
		if (!S_ISDIR(st.st_mode)) {
			snprintf(why, n, "%s is not a directory", cand);
			return TOOL_PATH_UNSAFE;
		}
		strcpy(cur, cand);
		memmove(rest, slash, strlen(slash) + 1);
	}
}
