/* SPDX-License-Identifier: Apache-2.0 */
/*
 * export.h - `cordon run --out DIR`: the declared artifacts copied out of
 * the sandbox's out/ into a directory of the caller's, each checked
 * against the size and SHA-256 the result reports (docs/runtime.md,
 * "Copying the artifacts out").
 *
 * Both sides are hostile in their own way.  out/ was written by the
 * program: every component of an artifact's path is opened one at a time
 * beneath out/ without following a link (outputs_open_entry()), and only a
 * regular file is read.  DIR belongs to the caller, but may hold names
 * already: nothing in it is ever replaced or followed (O_CREAT|O_EXCL|
 * O_NOFOLLOW for files, a directory component that is a link refused), so
 * a planted symlink cannot send a copy elsewhere and an existing file is
 * never overwritten.  New files are 0600, new directories 0700, owned by
 * the supervisor's user (root as root: no chown to anyone).
 */
#ifndef CORDON_EXPORT_H
#define CORDON_EXPORT_H

#include <limits.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/* The destination: opened before the run, so a DIR that cannot be used is
 * an error before the program runs. */
struct export_dest {
	int fd;              /* DIR, O_DIRECTORY */
	char path[PATH_MAX]; /* DIR's real path, for the result's copiedTo */
};

/*
 * DIR made (0700) when it does not exist, else used as it is, then opened
 * without following a link in its last component.  0 with *d filled (the
 * caller closes d->fd), or -1 with err (d->fd -1).
 */
int export_open(const char *dir, struct export_dest *d, char *err, size_t n);

/*
 * Copy each artifact of arts (the result's array: "path", "bytes",
 * "sha256") from out/ (out_dirfd, not closed) into d, keeping its path
 * below DIR.  Each artifact copied gets "copiedTo" (DIR's real path +
 * "/" + path); one that was not gets "copyError" (why, in words) and no
 * file: a partial copy or one whose bytes do not hash to the result's is
 * removed.  Every artifact is tried.  Returns 0 when all were copied, -1
 * with err naming the first that was not.
 */
int export_copy(int out_dirfd, cJSON *arts, const struct export_dest *d, char *err, size_t n);

#endif
