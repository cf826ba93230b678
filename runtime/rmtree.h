/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rmtree.h - remove a tree the sandbox could have written, by file
 * descriptors only (issue 12, item 2).
 *
 * A path-based walk (nftw + remove) resolves "dir/sub/file" again for
 * every entry, so a process that swaps "sub" for a symlink between the
 * walk's reading and its removing makes the remover delete files through
 * the link, with the remover's rights (root's, for a root supervisor).
 * Here every step is relative to a directory fd opened with O_NOFOLLOW,
 * names are single components, and a symlink is only ever unlinked itself.
 *
 * Bounded resources: at most RMTREE_MAX_FDS directory fds are open at
 * once.  A directory deeper than that is renamed up into the directory
 * being emptied (under a fresh ".rmtree.N" name) and removed from there
 * later, so any depth is removed in O(entries) work with constant fds.
 *
 * Rootless, the sandbox may leave directories of ours without rwx for
 * their owner (0300, 0000); their mode is set to 0700 before they are
 * entered, and only when the caller owns them and is not root (root
 * needs no mode, and must not change one by name on a path another user
 * can rename under it).
 *
 * Failure: -1 with err naming the entry (relative to the start) and the
 * reason; whatever could be removed was.  Nothing is left behind silently.
 *
 * How run.c calls them (the lead integrates):
 *   - the temporary run directory, at the end of a run:
 *       int tfd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
 *       rmtree_at(tfd, "cordon-run.<pid>.XXXXXX", err, sizeof(err));
 *     (the base name of c->dir; keep tfd from stage_rundir instead of
 *     opening tmpdir again when that rewrite lands)
 *   - stale run directories: stale_sweep_rundirs() in stale.h.
 */
#ifndef CORDON_RMTREE_H
#define CORDON_RMTREE_H

#include <stddef.h>

#define RMTREE_MAX_FDS 64 /* directory fds one removal holds at most */

/* Removes the entry name (one path component) of dirfd: a directory with
 * everything below it, or any other entry itself (a symlink is unlinked,
 * never followed).  An entry that does not exist is success. */
int rmtree_at(int dirfd, const char *name, char *err, size_t n);

/* Removes everything below dirfd and keeps the directory itself.  dirfd
 * must be a directory opened for reading (O_RDONLY | O_DIRECTORY, with
 * O_NOFOLLOW when a sandbox could write its parent); it stays the
 * caller's. */
int rmtree_contents(int dirfd, char *err, size_t n);

#endif
