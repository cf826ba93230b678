/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outputs.c - reduce: judge out/ against the declared outputs, hash the
 * artifacts, read result.json.
 *
 * The walk opens one component at a time, relative to the directory fd it
 * came from, so a path string is never resolved by the kernel: renaming or
 * swapping a directory cannot move the walk outside out/.  Before a name is
 * opened its type comes from fstatat(AT_SYMLINK_NOFOLLOW), and after the
 * open fstat must agree (same type, device and inode); only directories
 * and regular files are ever opened, so a fifo is never opened (it would
 * block) and a device never sees an open (it may act on one).
 *
 * The program is dead by the time reduce runs, so the re-checks guard
 * against a file system that is not what it seemed (another process
 * sharing the directory, a bug elsewhere), not against a racing sandbox;
 * a mismatch is reported as OUTPUTS_CHANGED rather than trusted.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <sodium.h>

#include "common/utf8.h"
#include "runtime/json_strict.h"
#include "runtime/supervise/outputs.h"

#define OUT_NONE UINT32_MAX
#define OUT_FNM_FLAGS (FNM_PATHNAME | FNM_PERIOD)
/* Read buffer for hashing and result.json; on the stack, one at a time. */
#define OUT_CHUNK 65536
/* Longest symlink target quoted in a violation message. */
#define OUT_LINK_SHOWN 256

/* ---- text ---------------------------------------------------------------- */

static int out_is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7F;
}

/* A name we can report as it is: UTF-8 without control characters (a
 * newline or an escape sequence in a path would garble every log line
 * that shows it). */
static int out_text_ok(const char *s)
{
	size_t n = strlen(s);

	for (size_t i = 0; i < n; i++)
		if (out_is_control((unsigned char)s[i]))
			return 0;
	return utf8_prefix(s, n) == n;
}

/* s with every control byte and every byte outside a well-formed UTF-8
 * sequence written as \xNN: a form that is safe in JSON and in a log.
 * NULL on allocation failure. */
static char *out_escape(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), j = 0, k;
	char *e;

	if (n > (SIZE_MAX - 1) / 4)
		return NULL;
	e = malloc(4 * n + 1);
	if (e == NULL)
		return NULL;
	for (size_t i = 0; i < n; i += k) {
		k = utf8_char(s + i, n - i);
		if (k == 0 || (k == 1 && out_is_control(u[i]))) {
			snprintf(e + j, 5, "\\x%02X", u[i]);
			j += 4;
			k = 1;
		} else {
			memcpy(e + j, s + i, k);
			j += k;
		}
	}
	e[j] = '\0';
	return e;
}

/* How many bytes of s, at most max, end on a character boundary (s is
 * UTF-8): for quoting the start of a long name or key. */
static int out_fit(const char *s, size_t max)
{
	/* A sequence that crosses max is malformed within it: it stops. */
	return (int)utf8_prefix(s, strnlen(s, max));
}

/* Format into the caller's error buffer.  A message cut short is cut back
 * to whole UTF-8 characters, because the caller puts it into JSON. */
__attribute__((format(printf, 3, 4))) static void out_errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n >= errlen)
		err[utf8_prefix(err, strlen(err))] = '\0';
}

/* ---- opening ------------------------------------------------------------- */

int outputs_open_entry(int dirfd, const char *name, int flags, bool *use_openat2)
{
	struct open_how how;
	int fd;

	/* O_TMPFILE includes O_DIRECTORY's bit: test it whole. */
	if (name[0] == '\0' || strchr(name, '/') != NULL || strcmp(name, "..") == 0 || (flags & O_CREAT) != 0 ||
	    (flags & O_TMPFILE) == O_TMPFILE) {
		errno = EINVAL;
		return -1;
	}
	flags |= O_NOFOLLOW | O_CLOEXEC | O_NOCTTY;
	if (*use_openat2) {
		memset(&how, 0, sizeof(how));
		how.flags = (uint64_t)(unsigned)flags;
		how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
		do
			fd = (int)syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
		while (fd < 0 && errno == EINTR);
		/* ENOSYS: a kernel before 5.6.  EPERM: some container seccomp
		 * profiles refuse syscalls they do not know with EPERM; if plain
		 * openat then succeeds, openat2 itself was refused.  Either way
		 * the fallback is as strict for one component: O_NOFOLLOW
		 * refuses a symlink, and there is no '/' or ".." to resolve. */
		if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
			return fd;
		if (errno == ENOSYS)
			*use_openat2 = false;
	}
	do
		fd = openat(dirfd, name, flags);
	while (fd < 0 && errno == EINTR);
	if (fd >= 0 && *use_openat2)
		*use_openat2 = false;
	return fd;
}

/* ---- the report ---------------------------------------------------------- */

/* The array arr holding n elements, with room for one more: arr itself,
 * or a larger copy, or NULL (arr untouched) when memory runs out.  The
 * capacity is implied by the count (the next power of two), so the public
 * struct carries no capacity fields. */
static void *out_room(void *arr, size_t n, size_t size)
{
	if (n != 0 && (n & (n - 1)) != 0)
		return arr;
	if (n > SIZE_MAX / 2 / size)
		return NULL;
	return realloc(arr, (n ? 2 * n : 1) * size);
}

void outputs_report_free(struct outputs_report *rep)
{
	for (size_t i = 0; i < rep->nartifacts; i++)
		free(rep->artifacts[i].path);
	for (size_t i = 0; i < rep->nviolations; i++) {
		free(rep->violations[i].path);
		free(rep->violations[i].message);
	}
	for (size_t i = 0; i < rep->nundeclared; i++)
		free(rep->undeclared[i].path);
	free(rep->artifacts);
	free(rep->violations);
	free(rep->undeclared);
	memset(rep, 0, sizeof(*rep));
}

/* Add a violation; path is copied.  -1 on allocation failure. */
__attribute__((format(printf, 4, 5))) static int out_add_violation(struct outputs_report *rep, const char *path,
								    enum outputs_code code, const char *fmt, ...)
{
	struct outputs_violation v = { NULL, code, NULL }, *room;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&v.message, fmt, ap);
	va_end(ap);
	if (n < 0) {
		v.message = NULL;
		goto fail;
	}
	v.path = strdup(path);
	if (v.path == NULL || (room = out_room(rep->violations, rep->nviolations, sizeof(v))) == NULL)
		goto fail;
	rep->violations = room;
	rep->violations[rep->nviolations++] = v;
	return 0;
fail:
	free(v.path);
	free(v.message);
	return -1;
}

/* Add an undeclared entry; takes ownership of path (also on failure). */
static int out_add_undeclared(struct outputs_report *rep, char *path, const char *type)
{
	struct outputs_undeclared *room = out_room(rep->undeclared, rep->nundeclared, sizeof(*room));

	if (room == NULL) {
		free(path);
		return -1;
	}
	rep->undeclared = room;
	rep->undeclared[rep->nundeclared].path = path;
	rep->undeclared[rep->nundeclared].type = type;
	rep->nundeclared++;
	return 0;
}

static int out_add_artifact(struct outputs_report *rep, const char *path, uint64_t bytes, const char *hex)
{
	struct outputs_artifact *a = NULL;
	char *p = strdup(path);

	if (p == NULL || (a = out_room(rep->artifacts, rep->nartifacts, sizeof(*a))) == NULL) {
		free(p);
		return -1;
	}
	rep->artifacts = a;
	a = &rep->artifacts[rep->nartifacts++];
	a->path = p;
	a->bytes = bytes;
	memcpy(a->sha256, hex, sizeof(a->sha256));
	return 0;
}

static int out_cmp_artifact(const void *a, const void *b)
{
	return strcmp(((const struct outputs_artifact *)a)->path, ((const struct outputs_artifact *)b)->path);
}

static int out_cmp_violation(const void *a, const void *b)
{
	const struct outputs_violation *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	if (c != 0)
		return c;
	return x->code < y->code ? -1 : x->code > y->code;
}

static int out_cmp_undeclared(const void *a, const void *b)
{
	return strcmp(((const struct outputs_undeclared *)a)->path, ((const struct outputs_undeclared *)b)->path);
}

static void out_sort(struct outputs_report *rep)
{
	if (rep->nartifacts > 1)
		qsort(rep->artifacts, rep->nartifacts, sizeof(*rep->artifacts), out_cmp_artifact);
	if (rep->nviolations > 1)
		qsort(rep->violations, rep->nviolations, sizeof(*rep->violations), out_cmp_violation);
	if (rep->nundeclared > 1)
		qsort(rep->undeclared, rep->nundeclared, sizeof(*rep->undeclared), out_cmp_undeclared);
}

const char *outputs_code_name(enum outputs_code code)
{
	switch (code) {
	case OUTPUTS_SYMLINK:
		return "symlink";
	case OUTPUTS_NOT_REGULAR:
		return "not_regular";
	case OUTPUTS_TOO_LARGE:
		return "too_large";
	case OUTPUTS_MISSING_REQUIRED:
		return "missing_required";
	case OUTPUTS_TOO_MANY_FILES:
		return "too_many_files";
	case OUTPUTS_TOO_DEEP:
		return "too_deep";
	case OUTPUTS_BAD_NAME:
		return "bad_name";
	case OUTPUTS_PATH_TOO_LONG:
		return "path_too_long";
	case OUTPUTS_UNREADABLE:
		return "unreadable";
	case OUTPUTS_CHANGED:
		return "changed";
	}
	return "?";
}

static const char *out_type_name(mode_t m)
{
	if (S_ISREG(m))
		return "file";
	if (S_ISLNK(m))
		return "symlink";
	if (S_ISFIFO(m))
		return "fifo";
	if (S_ISSOCK(m))
		return "socket";
	if (S_ISCHR(m) || S_ISBLK(m))
		return "device";
	if (S_ISDIR(m))
		return "directory";
	return "other";
}

/* ---- the walk ------------------------------------------------------------ */

struct out_walk {
	const struct cpol_output *decl;
	uint32_t ndecl;
	bool *matched; /* per output: a regular file matched it */
	uint64_t max_entries;
	uint64_t nentries;
	uint32_t max_depth;
	bool use_openat2;
	bool overflow; /* the entry bound stopped the walk */
	struct outputs_report *rep;
	char *err;
	size_t errlen;
	/* The entry being judged, relative to out/; only names that passed
	 * out_text_ok() are ever left in it for the entries below. */
	char path[OUTPUTS_PATH_MAX];
	size_t len;
};

static int out_oom(struct out_walk *w)
{
	out_errf(w->err, w->errlen, "out of memory while collecting outputs");
	return -1;
}

/* What an open or stat failing with err means: the program's doing (a
 * mode that shuts the supervisor out, or a file that changed), reported
 * as a violation; else the harness failed. */
static int out_open_failed(struct out_walk *w, int e, const char *what)
{
	if (e == EACCES || e == EPERM)
		return out_add_violation(w->rep, w->path, OUTPUTS_UNREADABLE, "%s cannot be opened: %s", w->path,
					 strerror(e)) < 0 ? out_oom(w) : 0;
	if (e == ENOENT || e == ELOOP || e == ENOTDIR || e == ENXIO)
		return out_add_violation(w->rep, w->path, OUTPUTS_CHANGED,
					 "%s changed while outputs were collected (%s)", w->path, strerror(e)) < 0
			       ? out_oom(w)
			       : 0;
	out_errf(w->err, w->errlen, "%s out/%s: %s", what, w->path, strerror(e));
	return -1;
}

/* Open an entry that fstatat saw as st, and check that the fd is that
 * file (same device, inode and type; its fstat goes to st2).  1 with *fd
 * open; 0 with *fd -1 when a violation was recorded instead; -1 when the
 * harness failed. */
static int out_open_same(struct out_walk *w, int dirfd, const char *name, int flags, const struct stat *st,
			 struct stat *st2, int *fd)
{
	int rc = -1;

	*fd = outputs_open_entry(dirfd, name, flags, &w->use_openat2);
	if (*fd < 0)
		return out_open_failed(w, errno, "opening") < 0 ? -1 : 0;
	if (fstat(*fd, st2) < 0) {
		out_errf(w->err, w->errlen, "fstat out/%s: %s", w->path, strerror(errno));
		goto fail;
	}
	if (st2->st_dev == st->st_dev && st2->st_ino == st->st_ino &&
	    (st2->st_mode & S_IFMT) == (st->st_mode & S_IFMT))
		return 1;
	rc = out_open_failed(w, ENOENT, "opening") < 0 ? -1 : 0;
fail:
	close(*fd);
	*fd = -1;
	return rc;
}

static int out_walk_dir(struct out_walk *w, int dirfd, uint32_t depth);

static int out_walk_subdir(struct out_walk *w, int dirfd, const char *name, const struct stat *st, uint32_t depth)
{
	struct stat st2;
	int fd = -1, rc = -1;

	if (depth >= w->max_depth) {
		rc = out_add_violation(w->rep, w->path, OUTPUTS_TOO_DEEP,
				       "%s is a directory more than %" PRIu32 " levels below out/; it was not walked",
				       w->path, w->max_depth) < 0
			     ? out_oom(w)
			     : 0;
		goto out;
	}
	rc = out_open_same(w, dirfd, name, O_RDONLY | O_DIRECTORY, st, &st2, &fd);
	if (rc <= 0)
		goto out;
	rc = out_walk_dir(w, fd, depth + 1);
	fd = -1; /* out_walk_dir took it */
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Hash a regular file that matched, reading at most max_bytes + 1 bytes:
 * the size from stat is checked again against what was read. */
static int out_hash_file(struct out_walk *w, int dirfd, const char *name, const struct stat *st, uint64_t max_bytes,
			 uint32_t which)
{
	crypto_hash_sha256_state h;
	unsigned char buf[OUT_CHUNK], digest[crypto_hash_sha256_BYTES];
	char hex[sizeof(digest) * 2 + 1];
	uint64_t total = 0, limit = max_bytes == UINT64_MAX ? max_bytes : max_bytes + 1;
	struct stat st2;
	int fd = -1, rc = -1;

	/* O_NONBLOCK: should the name have become a fifo after fstatat, the
	 * open returns at once and fstat below refuses it. */
	rc = out_open_same(w, dirfd, name, O_RDONLY | O_NONBLOCK, st, &st2, &fd);
	if (rc <= 0)
		goto out;
	rc = -1;
	crypto_hash_sha256_init(&h);
	while (total < limit) {
		size_t want = limit - total < sizeof(buf) ? (size_t)(limit - total) : sizeof(buf);
		ssize_t n = read(fd, buf, want);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			out_errf(w->err, w->errlen, "reading out/%s: %s", w->path, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		crypto_hash_sha256_update(&h, buf, (unsigned long long)n);
		total += (uint64_t)n;
	}
	crypto_hash_sha256_final(&h, digest);
	if (total > max_bytes)
		rc = out_add_violation(w->rep, w->path, OUTPUTS_TOO_LARGE,
				       "%s grew past max_bytes %" PRIu64 " of output %s while it was read", w->path,
				       max_bytes, w->decl[which].path);
	else if (total != (uint64_t)st2.st_size)
		rc = out_add_violation(w->rep, w->path, OUTPUTS_CHANGED,
				       "%s changed while it was read (%" PRIu64 " bytes read, %jd in stat)", w->path,
				       total, (intmax_t)st2.st_size);
	else
		rc = out_add_artifact(w->rep, w->path, total,
				      sodium_bin2hex(hex, sizeof(hex), digest, sizeof(digest)));
	if (rc < 0)
		rc = out_oom(w);
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

/* A non-directory entry: match it, then judge what matched. */
static int out_walk_file(struct out_walk *w, int dirfd, const char *name, const struct stat *st)
{
	char target[OUT_LINK_SHOWN + 1];
	char *shown = NULL;
	uint64_t max_bytes = UINT64_MAX;
	uint32_t first = OUT_NONE, tightest = OUT_NONE;
	ssize_t n;
	int rc = -1;

	for (uint32_t i = 0; i < w->ndecl; i++) {
		if (fnmatch(w->decl[i].path, w->path, OUT_FNM_FLAGS) != 0)
			continue;
		if (first == OUT_NONE)
			first = i;
		/* A file must meet every output it matches: the smallest
		 * max_bytes holds, and it counts for each required one. */
		if (tightest == OUT_NONE || w->decl[i].max_bytes < max_bytes)
			tightest = i, max_bytes = w->decl[i].max_bytes;
		if (S_ISREG(st->st_mode))
			w->matched[i] = true;
	}
	if (first == OUT_NONE) {
		char *p;

		/* result.json is read by result_read(), not an undeclared
		 * output; unless it is a regular file it is listed. */
		if (strcmp(w->path, "result.json") == 0 && S_ISREG(st->st_mode)) {
			rc = 0;
			goto out;
		}
		p = strdup(w->path);
		rc = p == NULL || out_add_undeclared(w->rep, p, out_type_name(st->st_mode)) < 0 ? out_oom(w) : 0;
		goto out;
	}
	if (S_ISLNK(st->st_mode)) {
		/* readlinkat reads the link itself; it follows nothing.  The
		 * target is shown so an operator sees what was aimed at. */
		n = readlinkat(dirfd, name, target, sizeof(target) - 1);
		if (n < 0)
			n = 0;
		target[n] = '\0';
		shown = out_escape(target);
		if (shown == NULL) {
			rc = out_oom(w);
			goto out;
		}
		rc = out_add_violation(w->rep, w->path, OUTPUTS_SYMLINK,
				       "%s is a symbolic link (to %s%s), matching output %s; links are never followed, "
				       "an output must be a regular file",
				       w->path, shown, (size_t)n == sizeof(target) - 1 ? "..." : "", w->decl[first].path);
	} else if (!S_ISREG(st->st_mode)) {
		rc = out_add_violation(w->rep, w->path, OUTPUTS_NOT_REGULAR,
				       "%s is a %s, matching output %s; an output must be a regular file", w->path,
				       out_type_name(st->st_mode), w->decl[first].path);
	} else if ((uint64_t)st->st_size > max_bytes) {
		rc = out_add_violation(w->rep, w->path, OUTPUTS_TOO_LARGE,
				       "%s is %jd bytes, over max_bytes %" PRIu64 " of output %s", w->path,
				       (intmax_t)st->st_size, max_bytes, w->decl[tightest].path);
	} else {
		rc = out_hash_file(w, dirfd, name, st, max_bytes, tightest);
		goto out;
	}
	if (rc < 0)
		rc = out_oom(w);
out:
	free(shown);
	return rc;
}

/* A name whose path cannot be reported as it is.  Left in undeclared (as
 * \xNN) when nothing could match it; a violation when an output pattern
 * matches it or it is a directory that may hold a match. */
static int out_walk_bad_name(struct out_walk *w, const struct stat *st)
{
	char *shown = out_escape(w->path);
	bool matches = S_ISDIR(st->st_mode);
	int rc;

	if (shown == NULL)
		return out_oom(w);
	for (uint32_t i = 0; i < w->ndecl && !matches; i++)
		matches = fnmatch(w->decl[i].path, w->path, OUT_FNM_FLAGS) == 0;
	if (!matches)
		return out_add_undeclared(w->rep, shown, out_type_name(st->st_mode)) < 0 ? out_oom(w) : 0;
	rc = out_add_violation(w->rep, shown, OUTPUTS_BAD_NAME,
			       "%s: a name must be UTF-8 without control characters%s", shown,
			       S_ISDIR(st->st_mode) ? "; the directory was not walked" : "");
	free(shown);
	return rc < 0 ? out_oom(w) : 0;
}

static int out_walk_entry(struct out_walk *w, int dirfd, const char *name, uint32_t depth)
{
	size_t base = w->len, nlen = strlen(name), need = base + (base ? 1 : 0) + nlen;
	struct stat st;
	char *shown = NULL;
	int rc = -1;

	if (need >= sizeof(w->path)) {
		/* Only a valid prefix goes into the message; the name is cut. */
		shown = out_escape(name);
		if (shown == NULL) {
			rc = out_oom(w);
			goto out;
		}
		rc = out_add_violation(w->rep, w->path, OUTPUTS_PATH_TOO_LONG,
				       "an entry of %s/ (%.*s...) makes a path over %u bytes; it was not looked at",
				       w->path, out_fit(shown, 64), shown, OUTPUTS_PATH_MAX - 1) < 0
			     ? out_oom(w)
			     : 0;
		goto out;
	}
	if (base)
		w->path[w->len++] = '/';
	memcpy(w->path + w->len, name, nlen + 1);
	w->len += nlen;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		rc = errno == ENOENT ? 0 : out_open_failed(w, errno, "stat");
		goto out;
	}
	if (!out_text_ok(name))
		rc = out_walk_bad_name(w, &st);
	else if (S_ISDIR(st.st_mode))
		rc = out_walk_subdir(w, dirfd, name, &st, depth);
	else
		rc = out_walk_file(w, dirfd, name, &st);
out:
	free(shown);
	w->len = base;
	w->path[base] = '\0';
	return rc;
}

/* Walk the directory open on fd (taking ownership of it); depth is its
 * own depth, out/ being 0. */
static int out_walk_dir(struct out_walk *w, int fd, uint32_t depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *e;
	int rc = 0;

	if (d == NULL) {
		out_errf(w->err, w->errlen, "fdopendir out/%s: %s", w->path, strerror(errno));
		close(fd);
		return -1;
	}
	for (;;) {
		errno = 0;
		e = readdir(d);
		if (e == NULL) {
			if (errno != 0) {
				out_errf(w->err, w->errlen, "reading directory out/%s: %s", w->path,
					 strerror(errno));
				rc = -1;
			}
			break;
		}
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (++w->nentries > w->max_entries) {
			w->overflow = true;
			break;
		}
		rc = out_walk_entry(w, dirfd(d), e->d_name, depth);
		if (rc < 0 || w->overflow)
			break;
	}
	closedir(d);
	return rc;
}

int outputs_collect(int out_dirfd, const struct cpol_output *decl, uint32_t ndecl, const struct outputs_limits *lim,
		    struct outputs_report *rep, char *err, size_t errlen)
{
	struct out_walk *w = NULL;
	int fd = -1, rc = -1;

	memset(rep, 0, sizeof(*rep));
	w = calloc(1, sizeof(*w));
	if (w == NULL || (w->matched = calloc(ndecl ? ndecl : 1, sizeof(*w->matched))) == NULL) {
		out_errf(err, errlen, "out of memory while collecting outputs");
		goto out;
	}
	w->decl = decl;
	w->ndecl = ndecl;
	w->max_entries = lim && lim->max_entries ? lim->max_entries : OUTPUTS_MAX_ENTRIES;
	w->max_depth = lim && lim->max_depth && lim->max_depth <= OUTPUTS_MAX_DEPTH ? lim->max_depth
										    : OUTPUTS_MAX_DEPTH;
	w->use_openat2 = !(lim && lim->no_openat2);
	w->rep = rep;
	w->err = err;
	w->errlen = errlen;
	/* Our own fd for out/: a dup would share the caller's file offset,
	 * which readdir moves. */
	fd = outputs_open_entry(out_dirfd, ".", O_RDONLY | O_DIRECTORY, &w->use_openat2);
	if (fd < 0) {
		out_errf(err, errlen, "opening out/: %s", strerror(errno));
		goto out;
	}
	rc = out_walk_dir(w, fd, 0);
	fd = -1;
	if (rc < 0)
		goto out;
	if (w->overflow) {
		outputs_report_free(rep);
		if (out_add_violation(rep, ".", OUTPUTS_TOO_MANY_FILES,
				      "out/ holds more than %" PRIu64 " entries; the walk stopped there, so no "
				      "artifact is reported",
				      w->max_entries) < 0) {
			rc = out_oom(w);
			goto out;
		}
	}
	for (uint32_t i = 0; i < ndecl && !w->overflow; i++) {
		if ((decl[i].flags & CPOL_OUT_F_REQUIRED) == 0 || w->matched[i])
			continue;
		if (out_add_violation(rep, decl[i].path, OUTPUTS_MISSING_REQUIRED,
				      "no regular file matches the required output %s", decl[i].path) < 0) {
			rc = out_oom(w);
			goto out;
		}
	}
	out_sort(rep);
out:
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		outputs_report_free(rep);
	if (w != NULL)
		free(w->matched);
	free(w);
	return rc;
}

/* ---- JSON ---------------------------------------------------------------- */

/* Fill one array element's object; 0 on success, -1 on allocation failure. */
typedef int (*out_fill_fn)(cJSON *o, const void *elem);

static cJSON *out_json_array(const void *elems, size_t n, size_t size, out_fill_fn fill)
{
	cJSON *arr = cJSON_CreateArray(), *o;

	for (size_t i = 0; arr != NULL && i < n; i++) {
		if ((o = cJSON_CreateObject()) == NULL || !cJSON_AddItemToArray(arr, o) ||
		    fill(o, (const char *)elems + i * size) < 0) {
			cJSON_Delete(arr);
			arr = NULL;
		}
	}
	return arr;
}

static int out_fill_artifact(cJSON *o, const void *elem)
{
	const struct outputs_artifact *a = elem;

	/* Exact as a JSON number: max_bytes is at most 1 TiB, far below 2^53. */
	return cJSON_AddStringToObject(o, "path", a->path) && cJSON_AddNumberToObject(o, "bytes", (double)a->bytes) &&
		       cJSON_AddStringToObject(o, "sha256", a->sha256)
		       ? 0
		       : -1;
}

static int out_fill_violation(cJSON *o, const void *elem)
{
	const struct outputs_violation *v = elem;

	return cJSON_AddStringToObject(o, "path", v->path) &&
		       cJSON_AddStringToObject(o, "code", outputs_code_name(v->code)) &&
		       cJSON_AddStringToObject(o, "message", v->message)
		       ? 0
		       : -1;
}

static int out_fill_undeclared(cJSON *o, const void *elem)
{
	const struct outputs_undeclared *u = elem;

	return cJSON_AddStringToObject(o, "path", u->path) && cJSON_AddStringToObject(o, "type", u->type) ? 0 : -1;
}

cJSON *outputs_artifacts_json(const struct outputs_report *rep)
{
	return out_json_array(rep->artifacts, rep->nartifacts, sizeof(*rep->artifacts), out_fill_artifact);
}

cJSON *outputs_violations_json(const struct outputs_report *rep)
{
	return out_json_array(rep->violations, rep->nviolations, sizeof(*rep->violations), out_fill_violation);
}

cJSON *outputs_undeclared_json(const struct outputs_report *rep)
{
	return out_json_array(rep->undeclared, rep->nundeclared, sizeof(*rep->undeclared), out_fill_undeclared);
}

/* ---- result.json --------------------------------------------------------- */

int outputs_read_json(int dirfd, const char *name, uint64_t max_bytes, const char *limit, cJSON **value, char *err,
		      size_t errlen)
{
	bool use_openat2 = true;
	int fd;

	*value = NULL;
	/* O_NONBLOCK: a fifo under the name must not hang reduce. */
	fd = outputs_open_entry(dirfd, name, O_RDONLY | O_NONBLOCK, &use_openat2);
	if (fd < 0) {
		if (errno == ENOENT)
			return 1;
		if (errno == ELOOP)
			out_errf(err, errlen, "%s is a symbolic link; links are never followed", name);
		else
			out_errf(err, errlen, "cannot open %s: %s", name, strerror(errno));
		return -1;
	}
	return outputs_read_json_fd(fd, name, max_bytes, limit, value, err, errlen);
}

int outputs_read_json_fd(int fd, const char *name, uint64_t max_bytes, const char *limit, cJSON **value, char *err,
			 size_t errlen)
{
	const char *end = NULL;
	struct stat st;
	char *buf = NULL;
	cJSON *v = NULL;
	const char *key;
	char where[256];
	size_t cap, n = 0, at;
	int rc = -1;

	*value = NULL;
	if (fstat(fd, &st) < 0) {
		out_errf(err, errlen, "fstat %s: %s", name, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		out_errf(err, errlen, "%s is a %s, not a regular file", name, out_type_name(st.st_mode));
		goto out;
	}
	if ((uint64_t)st.st_size > max_bytes) {
		out_errf(err, errlen, "%s is %jd bytes, over %s %" PRIu64, name, (intmax_t)st.st_size, limit,
			 max_bytes);
		goto out;
	}
	/* One byte more than stat said, to see a file that grew; never more
	 * than max_bytes + 1 in all. */
	cap = (size_t)st.st_size + 1;
	buf = malloc(cap + 1);
	if (buf == NULL) {
		out_errf(err, errlen, "out of memory reading %s (%jd bytes)", name, (intmax_t)st.st_size);
		goto out;
	}
	while (n < cap) {
		ssize_t r = read(fd, buf + n, cap - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			out_errf(err, errlen, "reading %s: %s", name, strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (n != (size_t)st.st_size) {
		out_errf(err, errlen, "%s changed while it was read", name);
		goto out;
	}
	buf[n] = '\0';
	if (n == 0) {
		out_errf(err, errlen, "%s is empty", name);
		goto out;
	}
	if ((end = memchr(buf, '\0', n)) != NULL) {
		out_errf(err, errlen, "%s has a NUL byte at offset %zu", name, (size_t)(end - buf));
		goto out;
	}
	if ((at = utf8_prefix(buf, n)) != n) {
		out_errf(err, errlen, "%s is not valid UTF-8 (byte 0x%02X at offset %zu)", name,
			 (unsigned char)buf[at], at);
		goto out;
	}
	/* cJSON skips a byte order mark; RFC 8259 forbids writing one. */
	if (n >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) {
		out_errf(err, errlen, "%s starts with a byte order mark", name);
		goto out;
	}
	v = cJSON_ParseWithLengthOpts(buf, n, &end, 0);
	if (v == NULL) {
		at = end != NULL && end >= buf && end <= buf + n ? (size_t)(end - buf) : 0;
		out_errf(err, errlen, "%s is not valid JSON (near offset %zu)", name, at);
		goto out;
	}
	at = (size_t)(end - buf);
	while (at < n && (buf[at] == ' ' || buf[at] == '\t' || buf[at] == '\n' || buf[at] == '\r'))
		at++;
	if (at != n) {
		out_errf(err, errlen, "%s has more after its JSON value (at offset %zu)", name, at);
		goto out;
	}
	if ((at = json_nul_escape_at(buf, n)) != n) {
		out_errf(err, errlen, "%s has a \\u0000 escape at offset %zu; a NUL in a string is refused", name,
			 at);
		goto out;
	}
	switch (json_find_duplicate(v, &key, where, sizeof(where))) {
	case 0:
		break;
	case 1:
		out_errf(err, errlen, "%s has the key \"%.*s%s\" twice in the object at %s", name,
			 out_fit(key, 64), key, strlen(key) > 64 ? "..." : "", where);
		goto out;
	default:
		out_errf(err, errlen, "out of memory while checking %s", name);
		goto out;
	}
	*value = v;
	v = NULL;
	rc = 0;
out:
	cJSON_Delete(v);
	free(buf);
	close(fd);
	return rc;
}

int result_read(int out_dirfd, uint64_t max_bytes, cJSON **value, char *err, size_t errlen)
{
	return outputs_read_json(out_dirfd, "result.json", max_bytes, "max_result_bytes", value, err, errlen);
}
