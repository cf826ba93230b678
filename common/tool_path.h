/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tool_path.h - may this file be run as a tool?  ssh's StrictModes for a
 * tool's executable (docs/tools.md, "Identity and cgroup").
 *
 * The path is resolved one component at a time with lstat, following
 * symlinks as the kernel would, and every directory that is passed
 * through - also one that only holds a symlink on the way - and the file
 * at the end must be owned by root or by `trusted` and be writable by
 * neither group nor others.  A sticky world-writable directory (/tmp)
 * fails too: anyone may create a name there.  The file must be a regular
 * file.  Whoever passes this check cannot swap what is run, so the check
 * and the later execve see the same file unless root (or `trusted`)
 * changes it.
 *
 * realpath() and a walk of its result alone were rejected: a symlink
 * inside a writable directory on the way would not be seen, and whoever
 * can write that directory could point the link elsewhere between the
 * check and the execve.
 *
 * Used by the compiler (at exec[0], when the path exists there) and by
 * the supervisor before each call.  No allocation, no global state; safe
 * from several threads.
 */
#ifndef CORDON_TOOL_PATH_H
#define CORDON_TOOL_PATH_H

#include <stddef.h>
#include <sys/types.h>

enum tool_path_verdict {
	TOOL_PATH_OK = 0,
	TOOL_PATH_MISSING = 1, /* a component does not exist: nothing to judge */
	TOOL_PATH_UNSAFE = -1, /* why says which component and what is wrong */
};

/* Judges path (absolute).  why (n bytes) gets a sentence for MISSING and
 * UNSAFE: "/opt/t is writable by others (mode 0777)". */
enum tool_path_verdict tool_path_check(const char *path, uid_t trusted, char *why, size_t n);

#endif
