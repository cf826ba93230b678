/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rmtree.c - tree removal by directory fds (rmtree.h).
 *
 * The walk is iterative: a stack of open directories, the deepest last.
 * Each directory is read in passes; a pass that met any entry is followed
 * by another (entries may have been moved in by the flattening, or by a
 * racing process), and a directory is done when a whole pass meets
 * nothing.  A process that keeps changing a directory without the walk
 * removing anything ends the walk with an error after RMTREE_MAX_STALLS
 * such passes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/rmtree.h"

#define RMTREE_MAX_STALLS 8 /* passes in a row that met entries and removed none */

struct rm_level {
	DIR *d;
	char name[NAME_MAX + 1]; /* its name in the level above */
	int seen;                /* this pass met an entry */
	int progress;            /* this pass removed or moved one */
	unsigned stalls;         /* passes in a row with entries and no progress */
};

struct rm_walk {
	struct rm_level lv[RMTREE_MAX_FDS];
	int depth;        /* levels open; lv[0] is the directory being emptied */
	dev_t dev;        /* its filesystem: the walk does not leave it */
	uid_t euid;
	unsigned long seq; /* for the names of moved-up directories */
	const char *root; /* how errors name lv[0] */
	char *err;
	size_t n;
};

/* The entry name of the deepest level, as a path from the start. */
static void rm_where(const struct rm_walk *w, const char *name, char *buf, size_t size)
{
	size_t used = (size_t)snprintf(buf, size, "%s", w->root);

	for (int i = 1; i < w->depth && used < size; i++)
		used += (size_t)snprintf(buf + used, size - used, "/%s", w->lv[i].name);
	if (name != NULL && used < size)
		snprintf(buf + used, size - used, "/%s", name);
}

static int rm_fail(struct rm_walk *w, const char *what, const char *name, int e)
{
	char where[512];

	rm_where(w, name, where, sizeof(where));
	snprintf(w->err, w->n, "%s %s: %s", what, where, strerror(e));
	return -1;
}

/* errno values that mean the name no longer holds what fstatat saw: a
 * racing process swapped it.  The next pass looks again. */
static int rm_changed(int e)
{
	return e == ENOENT || e == ELOOP || e == ENOTDIR || e == ESTALE || e == EOPNOTSUPP || e == EISDIR;
}

/* A directory of ours without rwx for us (the sandbox made it so; rootless
 * it is us) can be neither read nor emptied nor moved.  The mode is set by
 * name with AT_SYMLINK_NOFOLLOW, which glibc does through an O_PATH fd:
 * it lands on the inode the name held, never on a link's target (a link
 * is refused).  Root needs no mode, so it never changes one by name. */
static int rm_fix_mode(const struct rm_walk *w, int dfd, const char *name, const struct stat *st)
{
	if (w->euid == 0 || st->st_uid != w->euid || (st->st_mode & S_IRWXU) == S_IRWXU)
		return 0;
	return fchmodat(dfd, name, S_IRWXU, AT_SYMLINK_NOFOLLOW);
}

/* Opens the directory name of dfd that fstatat described as *st.  -1 with
 * errno; ESTALE when the name now holds another inode. */
static int rm_open_dir(int dfd, const char *name, const struct stat *st)
{
	struct stat now;
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), e;

	if (fd < 0)
		return -1;
	if (fstat(fd, &now) != 0) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	if (now.st_dev != st->st_dev || now.st_ino != st->st_ino) {
		close(fd);
		errno = ESTALE;
		return -1;
	}
	return fd;
}

/* Pushes a level for the open directory *fd (ownership passes; *fd is set
 * to -1 either way). */
static int rm_push(struct rm_walk *w, int *fd, const char *name)
{
	struct rm_level *l = &w->lv[w->depth];

	l->d = fdopendir(*fd);
	if (l->d == NULL) {
		int e = errno;

		close(*fd);
		*fd = -1;
		return rm_fail(w, "cannot read", name, e);
	}
	*fd = -1;
	snprintf(l->name, sizeof(l->name), "%s", name);
	l->seen = l->progress = 0;
	l->stalls = 0;
	w->depth++;
	return 0;
}

/* Too deep for another fd: the directory moves up into lv[0] under a
 * fresh name, and the walk meets it there in lv[0]'s next pass. */
static int rm_flatten(struct rm_walk *w, struct rm_level *l, const char *name)
{
	char to[40];

	for (unsigned tries = 0; tries < 1000; tries++) {
		snprintf(to, sizeof(to), ".rmtree.%lu", w->seq++);
		if (renameat2(dirfd(l->d), name, dirfd(w->lv[0].d), to, RENAME_NOREPLACE) == 0) {
			l->progress = 1;
			w->lv[0].seen = 1;
			return 0;
		}
		if (errno != EEXIST)
			return rm_changed(errno) ? 0 : rm_fail(w, "cannot move up", name, errno);
	}
	return rm_fail(w, "cannot move up", name, EEXIST);
}

/* One entry of the deepest level: removed, moved up, or entered. */
static int rm_entry(struct rm_walk *w, const char *name)
{
	struct rm_level *l = &w->lv[w->depth - 1];
	int dfd = dirfd(l->d), fd;
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT ? 0 : rm_fail(w, "cannot inspect", name, errno);
	if (!S_ISDIR(st.st_mode)) {
		if (unlinkat(dfd, name, 0) == 0) {
			l->progress = 1;
			return 0;
		}
		return rm_changed(errno) ? 0 : rm_fail(w, "cannot remove", name, errno);
	}
	/* A mount point (only a host process could have made one) is not
	 * ours to empty. */
	if (st.st_dev != w->dev)
		return rm_fail(w, "not entering another filesystem at", name, EXDEV);
	if (rm_fix_mode(w, dfd, name, &st) != 0)
		return rm_changed(errno) ? 0 : rm_fail(w, "cannot set mode 0700 on", name, errno);
	if (w->depth == RMTREE_MAX_FDS)
		return rm_flatten(w, l, name);
	fd = rm_open_dir(dfd, name, &st);
	if (fd < 0)
		return rm_changed(errno) ? 0 : rm_fail(w, "cannot open", name, errno);
	return rm_push(w, &fd, name);
}

/* The deepest level met nothing in a whole pass: close it and remove it
 * from its parent. */
static int rm_pop(struct rm_walk *w)
{
	struct rm_level *l = &w->lv[w->depth - 1], *up = &w->lv[w->depth - 2];
	char name[NAME_MAX + 1];

	snprintf(name, sizeof(name), "%s", l->name);
	closedir(l->d);
	l->d = NULL;
	w->depth--;
	if (unlinkat(dirfd(up->d), name, AT_REMOVEDIR) == 0) {
		up->progress = 1;
		return 0;
	}
	/* Filled again, or swapped, after the empty pass: the parent's next
	 * pass meets it again. */
	if (errno == ENOTEMPTY || errno == EEXIST || rm_changed(errno))
		return 0;
	return rm_fail(w, "cannot remove", name, errno);
}

/* End of a pass over the deepest level: 1 when it is empty, 0 to read it
 * again, -1 on error. */
static int rm_pass_end(struct rm_walk *w, struct rm_level *l)
{
	if (!l->seen)
		return 1;
	l->stalls = l->progress ? 0 : l->stalls + 1;
	if (l->stalls > RMTREE_MAX_STALLS) {
		char where[512];

		rm_where(w, NULL, where, sizeof(where));
		snprintf(w->err, w->n, "cannot empty %s: another process kept changing it", where);
		return -1;
	}
	l->seen = l->progress = 0;
	rewinddir(l->d);
	return 0;
}

/* Empties the directory *top (ownership passes; *top is set to -1). */
static int rm_walk_run(struct rm_walk *w, int *top)
{
	int rc = -1, r;

	if (rm_push(w, top, "") != 0)
		goto out;
	while (w->depth > 0) {
		struct rm_level *l = &w->lv[w->depth - 1];
		struct dirent *e;

		errno = 0;
		e = readdir(l->d);
		if (e == NULL) {
			if (errno != 0) {
				rm_fail(w, "cannot read", NULL, errno);
				goto out;
			}
			r = rm_pass_end(w, l);
			if (r < 0)
				goto out;
			if (r == 1 && w->depth == 1)
				break;
			if (r == 1 && rm_pop(w) != 0)
				goto out;
			continue;
		}
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		l->seen = 1;
		if (rm_entry(w, e->d_name) != 0)
			goto out;
	}
	rc = 0;
out:
	while (w->depth > 0) {
		closedir(w->lv[w->depth - 1].d);
		w->lv[--w->depth].d = NULL;
	}
	return rc;
}

static struct rm_walk *rm_walk_new(const char *root, char *err, size_t n)
{
	struct rm_walk *w = calloc(1, sizeof(*w));

	if (w == NULL) {
		snprintf(err, n, "%s: out of memory", root);
		return NULL;
	}
	w->euid = geteuid();
	w->root = root;
	w->err = err;
	w->n = n;
	return w;
}

int rmtree_contents(int dirfd, char *err, size_t n)
{
	struct rm_walk *w = rm_walk_new(".", err, n);
	struct stat st;
	int fd = -1, rc = -1;

	if (w == NULL)
		goto out;
	/* An fd of its own: fdopendir's reading moves the file offset, which
	 * a dup would share with the caller's. */
	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		rm_fail(w, "cannot open", NULL, errno);
		goto out;
	}
	if (w->euid != 0 && st.st_uid == w->euid && (st.st_mode & S_IRWXU) != S_IRWXU && fchmod(fd, S_IRWXU) != 0) {
		rm_fail(w, "cannot set mode 0700 on", NULL, errno);
		goto out;
	}
	w->dev = st.st_dev;
	rc = rm_walk_run(w, &fd);
out:
	if (fd >= 0)
		close(fd);
	free(w);
	return rc;
}

int rmtree_at(int dirfd, const char *name, char *err, size_t n)
{
	struct rm_walk *w = NULL;
	struct stat st;
	int fd = -1, rc = -1;

	if (name[0] == '\0' || strchr(name, '/') != NULL || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
		snprintf(err, n, "'%.200s' is not one path component", name);
		goto out;
	}
	w = rm_walk_new(name, err, n);
	if (w == NULL)
		goto out;
	/* Each attempt starts from what the name holds now: a racing process
	 * may swap it, or add an entry after the last pass. */
	for (unsigned attempt = 0;; attempt++) {
		int again = attempt < RMTREE_MAX_STALLS;

		if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			if (errno == ENOENT)
				rc = 0;
			else
				snprintf(err, n, "cannot inspect %s: %s", name, strerror(errno));
			goto out;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT) {
				rc = 0;
				goto out;
			}
			if (again && rm_changed(errno))
				continue;
			snprintf(err, n, "cannot remove %s: %s", name, strerror(errno));
			goto out;
		}
		if (rm_fix_mode(w, dirfd, name, &st) != 0) {
			if (again && rm_changed(errno))
				continue;
			snprintf(err, n, "cannot set mode 0700 on %s: %s", name, strerror(errno));
			goto out;
		}
		fd = rm_open_dir(dirfd, name, &st);
		if (fd < 0) {
			if (again && rm_changed(errno))
				continue;
			snprintf(err, n, "cannot open %s: %s", name, strerror(errno));
			goto out;
		}
		w->dev = st.st_dev;
		if (rm_walk_run(w, &fd) != 0)
			goto out;
		if (unlinkat(dirfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT) {
			rc = 0;
			goto out;
		}
		if (again && (errno == ENOTEMPTY || errno == EEXIST || rm_changed(errno)))
			continue;
		snprintf(err, n, "cannot remove %s: %s", name, strerror(errno));
		goto out;
	}
out:
	if (fd >= 0)
		close(fd);
	free(w);
	return rc;
}
