/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outputs.h - reduce: the declared output files and result.json of a run
 * (docs/runtime.md, "The run directory").
 *
 * Everything under out/ was written by the sandboxed program, so every name
 * in it is hostile: no symlink is ever followed (openat2 with
 * RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS, and O_NOFOLLOW
 * on every open), nothing but a regular file is ever opened for reading, and
 * the walk is bounded in depth and in entries so that a program that made a
 * million files cannot make reduce slow.
 *
 * What the program did wrong is data, not an error: outputs_collect()
 * returns 0 with violations in the report, and -1 only when the harness
 * itself failed (out of memory, an fd limit, an I/O error).
 */
#ifndef CORDON_OUTPUTS_H
#define CORDON_OUTPUTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "cordon/policy.h"

/* Defaults for struct outputs_limits; max_depth is also a hard ceiling. */
#define OUTPUTS_MAX_ENTRIES 10000u
#define OUTPUTS_MAX_DEPTH 32u
/* Longest relative path the walk builds; a longer one is a violation. */
#define OUTPUTS_PATH_MAX 4096u

struct outputs_limits {
	/* Directory entries examined below out/, of every type (directories
	 * too); one more stops the walk with OUTPUTS_TOO_MANY_FILES.  0:
	 * OUTPUTS_MAX_ENTRIES. */
	uint64_t max_entries;
	/* Directories entered below out/; 0 or more than OUTPUTS_MAX_DEPTH:
	 * OUTPUTS_MAX_DEPTH.  A deeper directory is OUTPUTS_TOO_DEEP. */
	uint32_t max_depth;
	/* Use the O_NOFOLLOW openat fallback even where openat2 exists (what a
	 * kernel before 5.6 gets; for tests). */
	bool no_openat2;
};

enum outputs_code {
	OUTPUTS_SYMLINK,          /* a declared path is a symbolic link */
	OUTPUTS_NOT_REGULAR,      /* a declared path is a fifo, socket or device */
	OUTPUTS_TOO_LARGE,        /* over the output's max_bytes */
	OUTPUTS_MISSING_REQUIRED, /* a required output matched no regular file */
	OUTPUTS_TOO_MANY_FILES,   /* the entry bound stopped the walk */
	OUTPUTS_TOO_DEEP,         /* a directory below the depth bound */
	OUTPUTS_BAD_NAME,         /* a name that is not UTF-8, or has a control character */
	OUTPUTS_PATH_TOO_LONG,    /* a path over OUTPUTS_PATH_MAX */
	OUTPUTS_UNREADABLE,       /* a file or directory the supervisor may not open */
	OUTPUTS_CHANGED,          /* a file changed between stat, open and read */
};

struct outputs_artifact {
	char *path; /* relative to out/ */
	uint64_t bytes;
	char sha256[65]; /* lowercase hex */
};

struct outputs_violation {
	char *path; /* relative to out/; the pattern for MISSING_REQUIRED; "." for TOO_MANY_FILES */
	enum outputs_code code;
	char *message;
};

/* A file that no declared pattern matches: reported, not an error. */
struct outputs_undeclared {
	char *path;
	const char *type; /* "file", "symlink", "fifo", "socket", "device", "other" */
};

/* Owns every array and string; each array is sorted by path (violations
 * then by code), so the same out/ gives the same report. */
struct outputs_report {
	struct outputs_artifact *artifacts;
	size_t nartifacts;
	struct outputs_violation *violations;
	size_t nviolations;
	struct outputs_undeclared *undeclared;
	size_t nundeclared;
};

/*
 * Walk out/ (out_dirfd: opened by the caller with O_DIRECTORY|O_NOFOLLOW;
 * not closed, its file offset untouched) and judge it against the declared
 * outputs decl[0..ndecl).  A path is matched against each pattern with
 * fnmatch(FNM_PATHNAME|FNM_PERIOD); directories are walked, never matched.
 * lim may be NULL for the defaults.  *rep is overwritten (it need not be
 * initialised) and owned by the caller afterwards, on both outcomes.
 * Returns 0 when the walk finished, or stopped at the entry bound (the
 * report then holds only that violation: which entries came first is the
 * file system's order, so nothing else in it would be reproducible); -1
 * with err set and *rep empty when the harness failed.
 */
int outputs_collect(int out_dirfd, const struct cpol_output *decl, uint32_t ndecl, const struct outputs_limits *lim,
		    struct outputs_report *rep, char *err, size_t errlen);

/* Free what a report owns and empty it; harmless on an empty report. */
void outputs_report_free(struct outputs_report *rep);

/* The report as JSON arrays, new trees the caller deletes; NULL on
 * allocation failure.  Artifacts: [{"path","bytes","sha256"}]; violations:
 * [{"path","code","message"}]; undeclared: [{"path","type"}]. */
cJSON *outputs_artifacts_json(const struct outputs_report *rep);
cJSON *outputs_violations_json(const struct outputs_report *rep);
cJSON *outputs_undeclared_json(const struct outputs_report *rep);

/* "symlink", "not_regular", "too_large", "missing_required", ... */
const char *outputs_code_name(enum outputs_code code);

/*
 * Open name, one entry of directory dirfd (no '/'; "." for dirfd itself),
 * never following a symlink: openat2 with RESOLVE_BENEATH|
 * RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS, and O_NOFOLLOW|O_CLOEXEC|
 * O_NOCTTY added to flags (which must not hold O_CREAT or O_TMPFILE).
 * *use_openat2 starts true; it is set false when the kernel has no openat2
 * (ENOSYS), or refuses it with EPERM where plain openat works (container
 * seccomp profiles), and then, or when the caller set it false, plain
 * openat with the same flags is used: for one component, O_NOFOLLOW alone
 * already refuses every symlink.  Returns the fd, or -1 with errno (ELOOP
 * for a symlink, EINVAL for a name with '/', "..", or a creating flag).
 */
int outputs_open_entry(int dirfd, const char *name, int flags, bool *use_openat2);

/*
 * Read and parse out/result.json: a regular file (never a symlink), at most
 * max_bytes, valid UTF-8 without NUL bytes or \u0000 escapes, one JSON
 * value and nothing after it but white space, no object with the same key
 * twice at any depth.  Returns 0 with *value (the caller deletes it), 1
 * when there is no result.json (not an error), -1 with err set when the
 * file breaks a rule or cannot be read (the caller reports it as
 * resultError).
 */
int result_read(int out_dirfd, uint64_t max_bytes, cJSON **value, char *err, size_t errlen);

/* The same rules for any JSON file name of directory dirfd (the bundles of
 * displays.c): messages name the file as name and its bound as limit. */
int outputs_read_json(int dirfd, const char *name, uint64_t max_bytes, const char *limit, cJSON **value, char *err,
		      size_t errlen);

/* The same on fd, open for reading (taken: closed on every outcome), for
 * a caller that judged the open file first (displays.c checks its link
 * count); -1 with err on every failure (there is no "absent" here). */
int outputs_read_json_fd(int fd, const char *name, uint64_t max_bytes, const char *limit, cJSON **value, char *err,
			 size_t errlen);

#endif
