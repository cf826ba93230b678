/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroup.c - the execution's cgroups (cgroup.h; docs/cgroups.md).
 *
 * Every path is built with a truncation check and every control file is
 * opened O_NOFOLLOW|O_CLOEXEC: the cgroup of an execution is a directory
 * the sandbox's uid may own (rootless v2), so nothing in it is trusted to be
 * what its name says.  A control file takes one value per write(), so a
 * short write is an error, not something to resume.
 *
 * Deciding and acting are kept apart as far as cgroups allow: detection
 * only reads, and cgroup_create() picks where each cgroup goes from what it
 * reads before making anything.  The one write that is also a probe is
 * enabling controllers in our own cgroup's subtree_control, which the
 * kernel may refuse (a process raced in); that refusal sends us to the
 * next place, not to an error.
 */
#include "runtime/launch/cgroup.h"
#include "runtime/stale.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Destroy waits at most CG_ROUNDS * CG_ROUND_NS for a cgroup to empty and
 * as long again for rmdir to stop saying EBUSY: a process that a SIGKILL
 * has hit leaves within milliseconds, so running out means something keeps
 * forking faster than we kill, and the caller must hear about it. */
#define CG_ROUNDS 200
#define CG_ROUND_NS 5000000L
/* Nested cgroups below an execution's that destroy will remove. */
#define CG_MAX_DEPTH 16
/* Longest execution cgroup name; leaves room under PATH_MAX. */
#define CG_NAME_MAX 128
/* The v2 parent made beside our own cgroup when ours holds processes. */
#define CG_V2_PARENT "cordon"

static void cg_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void cg_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static void cg_note(struct cg_run *cg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Append one reason to cg->note; a note cut short is still a note. */
static void cg_note(struct cg_run *cg, const char *fmt, ...)
{
	size_t used = strlen(cg->note);
	va_list ap;

	if (used + 3 >= sizeof(cg->note))
		return;
	if (used > 0) {
		memcpy(cg->note + used, "; ", 3);
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(cg->note + used, sizeof(cg->note) - used, fmt, ap);
	va_end(ap);
}

/* out = a + b + c; -1 when it does not fit (never a cut-short path). */
static int cg_path(char *out, size_t outlen, const char *a, const char *b, const char *c)
{
	int n = snprintf(out, outlen, "%s%s%s", a, b, c);

	if (n < 0 || (size_t)n >= outlen) {
		if (outlen > 0)
			out[0] = '\0';
		return -1;
	}
	return 0;
}

/* Whether this process may create entries in dir (effective ids, as the
 * kernel will judge the mkdir and the writes). */
static int cg_writable(const char *dir)
{
	return faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) == 0;
}

/* Whether word appears in a space- or comma-separated list. */
static int cg_has_word(const char *list, const char *word, const char *seps)
{
	size_t wl = strlen(word);
	const char *p = list;

	while (*p != '\0') {
		size_t n = strcspn(p, seps);

		if (n == wl && strncmp(p, word, wl) == 0)
			return 1;
		p += n;
		p += strspn(p, seps);
	}
	return 0;
}

/*
 * Read a small control file into buf (NUL-terminated).  Returns 1, 0 when
 * the file does not exist (this kernel or this hierarchy lacks it), or -1
 * with err.  Control files read here are a few hundred bytes; one larger
 * than buf is refused rather than half read.
 */
static int cg_read(const char *dir, const char *file, char *buf, size_t len, char *err, size_t errlen)
{
	char path[PATH_MAX];
	size_t got = 0;
	int fd = -1;
	int rc = -1;

	if (cg_path(path, sizeof(path), dir, "/", file) != 0) {
		cg_fail(err, errlen, "%s/%s: path too long", dir, file);
		goto out;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ENOENT) {
			rc = 0;
			goto out;
		}
		cg_fail(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		goto out;
	}
	for (;;) {
		ssize_t n;

		if (got + 1 >= len) {
			cg_fail(err, errlen, "%s: longer than %zu bytes", path, len - 1);
			goto out;
		}
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			cg_fail(err, errlen, "%s: cannot read: %s", path, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	rc = 1;
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

/*
 * Write val to dir/file in one write().  Returns 0, 1 when the file does not
 * exist (the caller decides whether that matters), or -1 with err.  In a
 * plain test tree the file is created instead, as cgroupfs would have.
 */
static int cg_write(const char *dir, const char *file, const char *val, int plain, char *err, size_t errlen)
{
	char path[PATH_MAX];
	size_t len = strlen(val);
	ssize_t n;
	int fd = -1;
	int rc = -1;

	if (cg_path(path, sizeof(path), dir, "/", file) != 0) {
		cg_fail(err, errlen, "%s/%s: path too long", dir, file);
		goto out;
	}
	if (plain)
		fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_CREAT | O_TRUNC, 0644);
	else
		fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ENOENT) {
			rc = 1;
			goto out;
		}
		cg_fail(err, errlen, "%s: cannot open for writing: %s", path, strerror(errno));
		goto out;
	}
	do
		n = write(fd, val, len);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		cg_fail(err, errlen, "%s: cannot write \"%s\": %s", path, val, strerror(errno));
		goto out;
	}
	if ((size_t)n != len) {
		cg_fail(err, errlen, "%s: short write of \"%s\" (%zd of %zu bytes)", path, val, n, len);
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

/* A file the limit depends on: its absence is an error, not a downgrade. */
static int cg_write_required(const char *dir, const char *file, const char *val, int plain, char *err,
			     size_t errlen)
{
	int r = cg_write(dir, file, val, plain, err, errlen);

	if (r == 1) {
		cg_fail(err, errlen, "%s/%s: missing, cannot set the limit", dir, file);
		return -1;
	}
	return r;
}

/* *out = the unsigned decimal at the start of s (after blanks). */
static int cg_parse_u64(const char *s, uint64_t *out)
{
	char *end = NULL;
	unsigned long long v;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || (*end != '\0' && *end != '\n' && *end != ' '))
		return -1;
	*out = (uint64_t)v;
	return 0;
}

/* Read a file holding one number.  1, 0 when absent, -1 with err. */
static int cg_read_u64(const char *dir, const char *file, uint64_t *out, char *err, size_t errlen)
{
	char buf[128];
	int r = cg_read(dir, file, buf, sizeof(buf), err, errlen);

	if (r != 1)
		return r;
	if (cg_parse_u64(buf, out) != 0) {
		cg_fail(err, errlen, "%s/%s: not a number: \"%.40s\"", dir, file, buf);
		return -1;
	}
	return 1;
}

/* Read the value of `key N` from a keyed file (memory.events, pids.events,
 * memory.oom_control).  1, 0 when the file or the key is absent, -1. */
static int cg_read_key(const char *dir, const char *file, const char *key, uint64_t *out, char *err,
		       size_t errlen)
{
	char buf[4096];
	size_t kl = strlen(key);
	const char *line;
	int r = cg_read(dir, file, buf, sizeof(buf), err, errlen);

	if (r != 1)
		return r;
	for (line = buf; *line != '\0';) {
		const char *nl = strchr(line, '\n');

		if (strncmp(line, key, kl) == 0 && line[kl] == ' ') {
			if (cg_parse_u64(line + kl + 1, out) != 0) {
				cg_fail(err, errlen, "%s/%s: bad value for %s", dir, file, key);
				return -1;
			}
			return 1;
		}
		if (nl == NULL)
			break;
		line = nl + 1;
	}
	return 0;
}

/* ---- detection ---------------------------------------------------------- */

/* Undo mountinfo's octal escapes (\040 space, \011, \012, \134) in place. */
static void cg_unescape(char *s)
{
	char *w = s;

	for (; *s != '\0'; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
		    s[3] <= '7') {
			*w++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = '\0';
}

/* Open a /proc-style text file for line reading; NULL with errno. */
static FILE *cg_open_lines(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	FILE *f;

	if (fd < 0)
		return NULL;
	f = fdopen(fd, "r");
	if (f == NULL) {
		int e = errno;

		close(fd);
		errno = e;
	}
	return f;
}

/*
 * The /proc/<pid>/cgroup path of the hierarchy named by key: "" is the v2
 * line ("0::/path"), otherwise the v1 line whose controller list holds key.
 * Returns 1 and fills out, 0 when there is no such line, -1 with errno
 * when the file cannot be read.
 */
static int cg_proc_path(const char *cgroup_file, const char *key, char *out, size_t outlen)
{
	FILE *f = NULL;
	char *line = NULL;
	size_t cap = 0;
	int rc = -1;

	f = cg_open_lines(cgroup_file);
	if (f == NULL)
		goto out;
	rc = 0;
	while (getline(&line, &cap, f) > 0) {
		char *c1 = strchr(line, ':');
		char *c2 = c1 != NULL ? strchr(c1 + 1, ':') : NULL;
		int match;

		if (c2 == NULL)
			continue;
		*c2 = '\0';
		c2[1 + strcspn(c2 + 1, "\n")] = '\0';
		if (key[0] == '\0')
			match = strncmp(line, "0:", 2) == 0 && c1[1] == '\0';
		else
			match = cg_has_word(c1 + 1, key, ",");
		if (match) {
			if (cg_path(out, outlen, c2 + 1, "", "") != 0) {
				errno = ENAMETOOLONG;
				rc = -1;
			} else {
				rc = 1;
			}
			break;
		}
	}
	if (ferror(f) && rc == 0)
		rc = -1;
out:
	free(line);
	if (f != NULL)
		fclose(f);
	return rc;
}

/* If mount root `root` holds cgroup rel, the rest of rel below it ("" when
 * rel is the root itself); NULL when rel lies outside this mount. */
static const char *cg_below(const char *root, const char *rel)
{
	size_t rl = strlen(root);

	if (strcmp(root, "/") == 0)
		return strcmp(rel, "/") == 0 ? "" : rel;
	if (strncmp(rel, root, rl) != 0)
		return NULL;
	if (rel[rl] == '\0')
		return "";
	return rel[rl] == '/' ? rel + rl : NULL;
}

/* Take this mount for hierarchy hr if it holds our cgroup and its root is
 * deeper than that of a mount already taken (a bind of a subtree shows
 * the path more directly). */
static int cg_take_mount(struct cg_hier *hr, size_t *best_root, const char *root, const char *mnt)
{
	const char *rest;

	if (hr->rel[0] == '\0')
		return 0;
	rest = cg_below(root, hr->rel);
	if (rest == NULL || (hr->dir[0] != '\0' && strlen(root) <= *best_root))
		return 0;
	if (cg_path(hr->dir, sizeof(hr->dir), mnt, rest, "") != 0 ||
	    cg_path(hr->mount, sizeof(hr->mount), mnt, "", "") != 0) {
		hr->dir[0] = '\0';
		hr->mount[0] = '\0';
		return -1;
	}
	*best_root = strlen(root);
	return 0;
}

/* Split one mountinfo line and offer it to the hierarchies it may carry. */
static int cg_mount_line(struct cg_host *h, char *line, size_t best[4])
{
	char *tok[64];
	char *save = NULL;
	char *t;
	size_t n = 0, sep;
	int rc = 0;

	line[strcspn(line, "\n")] = '\0';
	for (t = strtok_r(line, " ", &save); t != NULL && n < 64; t = strtok_r(NULL, " ", &save))
		tok[n++] = t;
	/* id parent maj:min root mountpoint options [optional...] - fstype source superopts */
	for (sep = 6; sep < n && strcmp(tok[sep], "-") != 0; sep++)
		;
	if (sep + 3 >= n)
		return 0;
	cg_unescape(tok[3]);
	cg_unescape(tok[4]);
	if (strcmp(tok[sep + 1], "cgroup2") == 0) {
		rc |= cg_take_mount(&h->v2, &best[0], tok[3], tok[4]);
	} else if (strcmp(tok[sep + 1], "cgroup") == 0) {
		const char *opts = tok[sep + 3];

		if (cg_has_word(opts, "memory", ","))
			rc |= cg_take_mount(&h->v1_memory, &best[1], tok[3], tok[4]);
		if (cg_has_word(opts, "pids", ","))
			rc |= cg_take_mount(&h->v1_pids, &best[2], tok[3], tok[4]);
		if (cg_has_word(opts, "cpu", ","))
			rc |= cg_take_mount(&h->v1_cpu, &best[3], tok[3], tok[4]);
	}
	return rc;
}

/* An absolute path without "." or ".." components or a " (deleted)" tail. */
static int cg_rel_ok(const char *rel)
{
	const char *p;
	size_t n = strlen(rel);

	if (rel[0] != '/' || (n >= 10 && strcmp(rel + n - 10, " (deleted)") == 0))
		return 0;
	for (p = rel; *p != '\0';) {
		size_t c;

		p += strspn(p, "/");
		c = strcspn(p, "/");
		if ((c == 1 && p[0] == '.') || (c == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		p += c;
	}
	return 1;
}

int cgroup_detect(struct cg_host *h, const char *mountinfo_path, const char *cgroup_path, char *err,
		  size_t errlen)
{
	static const char *const keys[4] = { "", "memory", "pids", "cpu" };
	struct cg_hier *hiers[4];
	size_t best[4] = { 0, 0, 0, 0 };
	char ctl[1024];
	FILE *f = NULL;
	char *line = NULL;
	size_t cap = 0;
	int rc = -1;
	int i, r;

	memset(h, 0, sizeof(*h));
	hiers[0] = &h->v2;
	hiers[1] = &h->v1_memory;
	hiers[2] = &h->v1_pids;
	hiers[3] = &h->v1_cpu;
	if (mountinfo_path == NULL)
		mountinfo_path = "/proc/self/mountinfo";
	if (cgroup_path == NULL)
		cgroup_path = "/proc/self/cgroup";

	/* Our place in each hierarchy first: a mount is only of use if it
	 * shows that place. */
	for (i = 0; i < 4; i++) {
		r = cg_proc_path(cgroup_path, keys[i], hiers[i]->rel, sizeof(hiers[i]->rel));
		if (r < 0 && errno == ENOENT) {
			rc = 0; /* a kernel without cgroups */
			goto out;
		}
		if (r < 0) {
			cg_fail(err, errlen, "%s: %s", cgroup_path, strerror(errno));
			goto out;
		}
		/* A path outside our cgroup namespace ("/../x") or one the
		 * kernel marks as removed is no place to make children. */
		if (r == 1 && !cg_rel_ok(hiers[i]->rel))
			hiers[i]->rel[0] = '\0';
	}

	f = cg_open_lines(mountinfo_path);
	if (f == NULL) {
		if (errno == ENOENT) {
			memset(h, 0, sizeof(*h));
			rc = 0;
			goto out;
		}
		cg_fail(err, errlen, "%s: %s", mountinfo_path, strerror(errno));
		goto out;
	}
	while (getline(&line, &cap, f) > 0) {
		if (cg_mount_line(h, line, best) != 0) {
			cg_fail(err, errlen, "%s: a cgroup mount path is too long", mountinfo_path);
			goto out;
		}
	}
	if (ferror(f)) {
		cg_fail(err, errlen, "%s: read error", mountinfo_path);
		goto out;
	}

	if (h->v2.dir[0] != '\0') {
		r = cg_read(h->v2.dir, "cgroup.controllers", ctl, sizeof(ctl), err, errlen);
		if (r < 0)
			goto out;
		if (r == 1) {
			h->v2_memory = cg_has_word(ctl, "memory", " \n");
			h->v2_pids = cg_has_word(ctl, "pids", " \n");
			h->v2_cpu = cg_has_word(ctl, "cpu", " \n");
		}
	}
	rc = 0;
out:
	free(line);
	if (f != NULL)
		fclose(f);
	return rc;
}

/* ---- creation ----------------------------------------------------------- */

static int cg_name_ok(const char *name)
{
	size_t i, n = strlen(name);

	if (n == 0 || n > CG_NAME_MAX || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return 0;
	for (i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
		      c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

/* Whether the v2 cgroup dir holds any process (cgroup.procs not blank). */
static int cg_v2_busy(const char *dir, int *busy, char *err, size_t errlen)
{
	char path[PATH_MAX];
	FILE *f = NULL;
	int c, rc = -1;

	/* Only emptiness matters, so read the first bytes of what may be a
	 * long list. */
	if (cg_path(path, sizeof(path), dir, "/cgroup.procs", "") != 0) {
		cg_fail(err, errlen, "%s: path too long", dir);
		goto out;
	}
	f = cg_open_lines(path);
	if (f == NULL) {
		cg_fail(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	*busy = 0;
	while ((c = fgetc(f)) != EOF) {
		if (c != ' ' && c != '\n') {
			*busy = 1;
			break;
		}
	}
	rc = 0;
out:
	if (f != NULL)
		fclose(f);
	return rc;
}

/* The v2 controllers an execution's cgroup may need, as a mask. */
enum { CG_CTL_MEMORY = 1, CG_CTL_PIDS = 2, CG_CTL_CPU = 4 };
#define CG_NCTL 3
static const char *const cg_ctl_name[CG_NCTL] = { "memory", "pids", "cpu" };

/* The mask in subtree_control's syntax: "+memory +pids +cpu". */
static void cg_ctl_enable(int mask, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < CG_NCTL; i++)
		if ((mask & (1 << i)) && used < len)
			used += (size_t)snprintf(buf + used, len - used, "%s+%s", used ? " " : "", cg_ctl_name[i]);
}

/* Whether dir's cgroup.subtree_control already passes down the wanted
 * controllers to its children. */
static int cg_v2_passes(const char *dir, int mask, int *passes, char *err, size_t errlen)
{
	char sc[1024];
	int r = cg_read(dir, "cgroup.subtree_control", sc, sizeof(sc), err, errlen);

	if (r < 0)
		return -1;
	if (r == 0)
		sc[0] = '\0';
	*passes = 1;
	for (int i = 0; i < CG_NCTL; i++)
		if ((mask & (1 << i)) && !cg_has_word(sc, cg_ctl_name[i], " \n"))
			*passes = 0;
	return 0;
}

/*
 * Where the execution's v2 cgroup goes, for the controllers in mask
 * (CG_CTL_*).
 * Returns 1 with base/base_rel, 0 when v2 cannot be used (cg->note says
 * why), -1 with err when a place we own went wrong.
 *
 * 1. Our own cgroup, if its subtree_control already passes the
 *    controllers down, or we may enable them there: the root cgroup is
 *    exempt from "no internal processes", any other cgroup must be empty.
 * 2. Else a "cordon" cgroup beside ours.  Our parent already passes the
 *    controllers down (they are in our cgroup.controllers), and "cordon"
 *    holds no processes, so it may pass them on.  Needs our parent
 *    writable: root, or a delegated subtree (systemd user@.service).
 * Moving the supervisor itself into a leaf would also free our cgroup, but
 * it changes the caller's own accounting and limits behind its back, so it
 * is left to whoever starts the supervisor (docs/cgroups.md).
 */
static int cg_v2_base(const struct cg_host *h, int mask, char *base, char *base_rel, struct cg_run *cg, char *err,
		      size_t errlen)
{
	const char *own = h->v2.dir;
	char parent[PATH_MAX], prel[PATH_MAX], ctype[PATH_MAX], enable[64];
	char *slash;
	int busy = 1, is_root, passes = 0;
	int rc = -1;

	cg_ctl_enable(mask, enable, sizeof(enable));
	if (cg_v2_passes(own, mask, &passes, err, errlen) != 0)
		goto out;
	if (passes && cg_writable(own)) {
		strcpy(base, own);
		strcpy(base_rel, h->v2.rel);
		rc = 1;
		goto out;
	}
	if (cg_writable(own)) {
		/* Only the real root cgroup lacks cgroup.type; the top of a
		 * cgroup namespace has it and obeys the rule. */
		if (cg_path(ctype, sizeof(ctype), own, "/cgroup.type", "") != 0) {
			cg_fail(err, errlen, "%s: path too long", own);
			goto out;
		}
		is_root = strcmp(own, h->v2.mount) == 0 && access(ctype, F_OK) != 0 && errno == ENOENT;
		if (!is_root && cg_v2_busy(own, &busy, err, errlen) != 0)
			goto out;
		if ((is_root || !busy) &&
		    cg_write(own, "cgroup.subtree_control", enable, h->plain_files, NULL, 0) == 0) {
			strcpy(base, own);
			strcpy(base_rel, h->v2.rel);
			rc = 1;
			goto out;
		}
	}

	if (strcmp(own, h->v2.mount) == 0) {
		cg_note(cg, "cgroup v2 %s cannot pass %s to children (it holds processes or is not ours) "
			    "and has no parent we can see", own, enable);
		rc = 0;
		goto out;
	}
	strcpy(parent, own);
	slash = strrchr(parent, '/');
	*slash = '\0';
	strcpy(prel, h->v2.rel);
	slash = strrchr(prel, '/');
	if (slash == prel)
		slash[1] = '\0';
	else
		*slash = '\0';
	if (cg_path(base, PATH_MAX, parent, "/" CG_V2_PARENT, "") != 0 ||
	    cg_path(base_rel, PATH_MAX, strcmp(prel, "/") == 0 ? "" : prel, "/" CG_V2_PARENT, "") != 0) {
		cg_fail(err, errlen, "%s: path too long", parent);
		goto out;
	}
	if (!cg_writable(base) && !cg_writable(parent)) {
		cg_note(cg, "cgroup v2 %s holds processes and neither its parent nor %s is writable by us "
			    "(not delegated)", own, base);
		rc = 0;
		goto out;
	}
	if (mkdir(base, 0755) != 0 && errno != EEXIST) {
		cg_fail(err, errlen, "%s: cannot create: %s", base, strerror(errno));
		goto out;
	}
	if (cg_v2_passes(base, mask, &passes, err, errlen) != 0)
		goto out;
	if (!passes && cg_write_required(base, "cgroup.subtree_control", enable, h->plain_files,
						      err, errlen) != 0)
		goto out;
	rc = 1;
out:
	return rc;
}

/* Make dir (the execution's cgroup); an existing one is never shared. */
static int cg_mkdir(const char *dir, char *err, size_t errlen)
{
	if (mkdir(dir, 0755) == 0)
		return 0;
	if (errno == EEXIST)
		cg_fail(err, errlen, "%s: already exists (another execution with this name?)", dir);
	else
		cg_fail(err, errlen, "%s: cannot create: %s", dir, strerror(errno));
	return -1;
}

/* Memory limit in a v2 cgroup: swap may not extend it, and an OOM kill
 * takes the whole group, as any other breach ends the whole execution. */
static int cg_v2_memory(const char *dir, const char *val, int plain, char *err, size_t errlen)
{
	if (cg_write_required(dir, "memory.max", val, plain, err, errlen) != 0)
		return -1;
	if (cg_write(dir, "memory.swap.max", "0", plain, err, errlen) < 0)
		return -1;
	if (cg_write(dir, "memory.oom.group", "1", plain, err, errlen) < 0)
		return -1;
	return 0;
}

/* Memory limit in a v1 cgroup.  memsw (memory + swap) may not be below
 * the memory limit, so it is written second; it exists only where swap is
 * accounted, and there it keeps swap from extending the limit. */
static int cg_v1_memory(const char *dir, const char *val, int plain, char *err, size_t errlen)
{
	if (cg_write_required(dir, "memory.limit_in_bytes", val, plain, err, errlen) != 0)
		return -1;
	if (cg_write(dir, "memory.memsw.limit_in_bytes", val, plain, err, errlen) < 0)
		return -1;
	return 0;
}

/* The CPU quota, v2: one file, "quota period" in microseconds. */
static int cg_v2_cpu(const char *dir, const struct cg_limits *lim, int plain, char *err, size_t errlen)
{
	char val[64];

	snprintf(val, sizeof(val), "%" PRIu64 " %" PRIu64, lim->cpu_quota_us, lim->cpu_period_us);
	return cg_write_required(dir, "cpu.max", val, plain, err, errlen);
}

/* The CPU quota, v1: the period first, so the quota is read against the
 * period meant for it (a new cgroup's quota is -1, unlimited, until the
 * second write). */
static int cg_v1_cpu(const char *dir, const struct cg_limits *lim, int plain, char *err, size_t errlen)
{
	char q[32], per[32];

	snprintf(q, sizeof(q), "%" PRIu64, lim->cpu_quota_us);
	snprintf(per, sizeof(per), "%" PRIu64, lim->cpu_period_us);
	if (cg_write_required(dir, "cpu.cfs_period_us", per, plain, err, errlen) != 0)
		return -1;
	return cg_write_required(dir, "cpu.cfs_quota_us", q, plain, err, errlen);
}

/* Make the v1 cgroup for one controller if its hierarchy is ours to write,
 * and record it as CG_V1 at once so a later failure removes it.
 * 1 made, 0 not available (noted), -1 error. */
static int cg_v1_make(const struct cg_hier *hr, const char *what, const char *name, enum cg_kind *kind,
		      char *dir, char *rel, struct cg_run *cg, char *err, size_t errlen)
{
	if (hr->dir[0] == '\0') {
		cg_note(cg, "%s: no cgroup v1 %s hierarchy holds us", what, what);
		return 0;
	}
	if (!cg_writable(hr->dir)) {
		cg_note(cg, "%s: cgroup v1 %s is not writable by us", what, hr->dir);
		return 0;
	}
	if (cg_path(dir, PATH_MAX, hr->dir, "/", name) != 0 ||
	    cg_path(rel, PATH_MAX, strcmp(hr->rel, "/") == 0 ? "" : hr->rel, "/", name) != 0) {
		cg_fail(err, errlen, "%s/%s: path too long", hr->dir, name);
		return -1;
	}
	if (cg_mkdir(dir, err, errlen) != 0) {
		dir[0] = '\0';
		rel[0] = '\0';
		return -1;
	}
	*kind = CG_V1;
	return 1;
}

/* Whether dir is the directory of the run's memory or pids cgroup. */
static int cg_is_mem_pids(const struct cg_run *cg, const char *dir)
{
	return (cg->mem_kind != CG_NONE && strcmp(dir, cg->mem_dir) == 0) ||
	       (cg->pids_kind != CG_NONE && strcmp(dir, cg->pids_dir) == 0);
}

/* The CPU quota's cgroup is a directory of its own (v1, or v2 when memory
 * and pids are not v2), to attach, sweep and remove apart. */
static int cg_quota_own(const struct cg_run *cg)
{
	return cg->quota_kind != CG_NONE && cg->quota_dir[0] != '\0' && !cg_is_mem_pids(cg, cg->quota_dir);
}

/* The CPU accounting cgroup is a directory of its own (not the v2 cgroup
 * of memory, pids or the quota), to attach, sweep and remove apart. */
static int cg_cpu_own(const struct cg_run *cg)
{
	return cg->cpu_kind != CG_NONE && cg->cpu_dir[0] != '\0' && !cg_is_mem_pids(cg, cg->cpu_dir) &&
	       !(cg->quota_kind != CG_NONE && strcmp(cg->cpu_dir, cg->quota_dir) == 0);
}

/*
 * CPU accounting: cpu.stat's usage_usec is kept by every v2 cgroup, with or
 * without the cpu controller, and keeps the time of processes that died
 * in it.  A v2 cgroup made for memory or pids serves; else, on a hybrid
 * host, an empty v2 cgroup of its own under ours (no controller is
 * enabled, so "no internal processes" does not apply), where we may move
 * a process: our cgroup's directory and cgroup.procs writable (the common
 * ancestor's rule).
 */
void cgroup_cpu_account(struct cg_run *cg, const struct cg_host *h, const char *name)
{
	char procs[PATH_MAX], err[256];

	if (cg->cpu_kind != CG_NONE)
		return;
	if (cg->mem_kind == CG_V2 || cg->pids_kind == CG_V2 || cg->quota_kind == CG_V2) {
		cg->cpu_kind = CG_V2;
		strcpy(cg->cpu_dir, cg->mem_kind == CG_V2 ? cg->mem_dir : cg->pids_kind == CG_V2 ? cg->pids_dir : cg->quota_dir);
		strcpy(cg->cpu_rel, cg->mem_kind == CG_V2 ? cg->mem_rel : cg->pids_kind == CG_V2 ? cg->pids_rel : cg->quota_rel);
		return;
	}
	if (h->v2.dir[0] == '\0' || !cg_writable(h->v2.dir) ||
	    cg_path(procs, sizeof(procs), h->v2.dir, "/cgroup.procs", "") != 0 ||
	    (!h->plain_files && faccessat(AT_FDCWD, procs, W_OK, AT_EACCESS) != 0)) {
		cg_note(cg, "cpu: %s%s is not ours to write, CPU time from rusage",
			h->v2.dir[0] != '\0' ? "cgroup v2 " : "no cgroup v2 holds us", h->v2.dir);
		return;
	}
	if (!cg_name_ok(name) || cg_path(cg->cpu_dir, sizeof(cg->cpu_dir), h->v2.dir, "/", name) != 0 ||
	    cg_path(cg->cpu_rel, sizeof(cg->cpu_rel), strcmp(h->v2.rel, "/") == 0 ? "" : h->v2.rel, "/", name) != 0 ||
	    cg_mkdir(cg->cpu_dir, err, sizeof(err)) != 0) {
		cg_note(cg, "cpu: no cgroup v2 %s/%.64s, CPU time from rusage", h->v2.dir, name);
		cg->cpu_dir[0] = cg->cpu_rel[0] = '\0';
		return;
	}
	cg->cpu_kind = CG_V2;
}

int cgroup_create(struct cg_run *cg, const struct cg_host *h, const char *name, const struct cg_limits *lim,
		  char *err, size_t errlen)
{
	char mem[32], pids[32];
	char base[PATH_MAX], base_rel[PATH_MAX];
	int want_mem = lim->memory_bytes != 0;
	int want_pids = lim->pids != 0;
	int want_cpu = lim->cpu_quota_us != 0;
	int v2_mem, v2_pids, v2_cpu;
	int rc = -1, r;

	memset(cg, 0, sizeof(*cg));
	cg->plain_files = h->plain_files;
	if (!cg_name_ok(name)) {
		cg_fail(err, errlen, "cgroup name \"%.64s\" is not a plain name ([A-Za-z0-9._-], 1 to %d bytes)",
			name, CG_NAME_MAX);
		goto out;
	}
	snprintf(mem, sizeof(mem), "%" PRIu64, lim->memory_bytes);
	snprintf(pids, sizeof(pids), "%" PRIu32, lim->pids);

	v2_mem = want_mem && h->v2.dir[0] != '\0' && h->v2_memory;
	v2_pids = want_pids && h->v2.dir[0] != '\0' && h->v2_pids;
	if (want_mem && !v2_mem)
		cg_note(cg, "memory: %s%s", h->v2.dir[0] != '\0' ? "cgroup v2 does not offer memory at " :
								"no cgroup v2 holds us", h->v2.dir);
	if (want_pids && !v2_pids)
		cg_note(cg, "pids: %s%s", h->v2.dir[0] != '\0' ? "cgroup v2 does not offer pids at " :
							       "no cgroup v2 holds us", h->v2.dir);
	v2_cpu = want_cpu && h->v2.dir[0] != '\0' && h->v2_cpu;
	if (want_cpu && !v2_cpu)
		cg_note(cg, "cpu quota: %s%s", h->v2.dir[0] != '\0' ? "cgroup v2 does not offer cpu at " :
								    "no cgroup v2 holds us", h->v2.dir);
	if (v2_mem || v2_pids || v2_cpu) {
		int mask = (v2_mem ? CG_CTL_MEMORY : 0) | (v2_pids ? CG_CTL_PIDS : 0) | (v2_cpu ? CG_CTL_CPU : 0);

		r = cg_v2_base(h, mask, base, base_rel, cg, err, errlen);
		if (r < 0)
			goto out;
		if (r == 0) {
			v2_mem = 0;
			v2_pids = 0;
			v2_cpu = 0;
		}
	}
	if (v2_mem || v2_pids || v2_cpu) {
		char dir[PATH_MAX], rel[PATH_MAX];

		if (cg_path(dir, sizeof(dir), base, "/", name) != 0 ||
		    cg_path(rel, sizeof(rel), strcmp(base_rel, "/") == 0 ? "" : base_rel, "/", name) != 0) {
			cg_fail(err, errlen, "%s/%s: path too long", base, name);
			goto out;
		}
		if (cg_mkdir(dir, err, errlen) != 0)
			goto out;
		/* Recorded at once, so that a failure below removes it; one
		 * v2 cgroup serves both kinds and destroy removes it once. */
		if (v2_mem) {
			cg->mem_kind = CG_V2;
			strcpy(cg->mem_dir, dir);
			strcpy(cg->mem_rel, rel);
		}
		if (v2_pids) {
			cg->pids_kind = CG_V2;
			strcpy(cg->pids_dir, dir);
			strcpy(cg->pids_rel, rel);
		}
		if (v2_cpu) {
			cg->quota_kind = CG_V2;
			strcpy(cg->quota_dir, dir);
			strcpy(cg->quota_rel, rel);
		}
		if (v2_mem && cg_v2_memory(dir, mem, h->plain_files, err, errlen) != 0)
			goto out;
		if (v2_pids && cg_write_required(dir, "pids.max", pids, h->plain_files, err, errlen) != 0)
			goto out;
		if (v2_cpu && cg_v2_cpu(dir, lim, h->plain_files, err, errlen) != 0)
			goto out;
	}

	/* v1: each controller in its own hierarchy, made only for what v2
	 * did not take. */
	if (want_mem && !v2_mem) {
		r = cg_v1_make(&h->v1_memory, "memory", name, &cg->mem_kind, cg->mem_dir, cg->mem_rel, cg, err,
			       errlen);
		if (r < 0 || (r == 1 && cg_v1_memory(cg->mem_dir, mem, h->plain_files, err, errlen) != 0))
			goto out;
	}
	if (want_pids && !v2_pids) {
		r = cg_v1_make(&h->v1_pids, "pids", name, &cg->pids_kind, cg->pids_dir, cg->pids_rel, cg, err,
			       errlen);
		if (r < 0 || (r == 1 && cg_write_required(cg->pids_dir, "pids.max", pids, h->plain_files, err,
							  errlen) != 0))
			goto out;
	}
	if (want_cpu && !v2_cpu) {
		r = cg_v1_make(&h->v1_cpu, "cpu", name, &cg->quota_kind, cg->quota_dir, cg->quota_rel, cg, err,
			       errlen);
		if (r < 0 || (r == 1 && cg_v1_cpu(cg->quota_dir, lim, h->plain_files, err, errlen) != 0))
			goto out;
	}
	rc = 0;
out:
	if (rc != 0) {
		/* Keep the first error: the undo's own failure is secondary. */
		cgroup_destroy(cg, NULL, 0);
		memset(cg, 0, sizeof(*cg));
	}
	return rc;
}

/* ---- use ---------------------------------------------------------------- */

/* Open dirs[i]/file for writing into fds[i] for each dirs[i] != NULL,
 * the others -1.  0, or -1 with err and nothing left open. */
static int cg_open_each(const char *const dirs[CG_PROCS_FDS], const char *file, int plain, int fds[CG_PROCS_FDS],
			char *err, size_t errlen)
{
	int flags = O_WRONLY | O_CLOEXEC | O_NOFOLLOW | (plain ? O_CREAT | O_APPEND : 0);

	for (int i = 0; i < CG_PROCS_FDS; i++)
		fds[i] = -1;
	for (int i = 0; i < CG_PROCS_FDS; i++) {
		char path[PATH_MAX];

		if (dirs[i] == NULL)
			continue;
		if (cg_path(path, sizeof(path), dirs[i], "/", file) != 0) {
			cg_fail(err, errlen, "%s: path too long", dirs[i]);
			goto fail;
		}
		fds[i] = open(path, flags, 0644);
		if (fds[i] < 0) {
			cg_fail(err, errlen, "%s: cannot open for writing: %s", path, strerror(errno));
			goto fail;
		}
	}
	return 0;
fail:
	for (int i = 0; i < CG_PROCS_FDS; i++)
		if (fds[i] >= 0) {
			close(fds[i]);
			fds[i] = -1;
		}
	return -1;
}

int cgroup_procs_open(const struct cg_run *cg, int fds[CG_PROCS_FDS], char *err, size_t errlen)
{
	const char *dirs[CG_PROCS_FDS] = { NULL, NULL };
	int n = 0;

	if (cg->mem_kind != CG_NONE)
		dirs[n++] = cg->mem_dir;
	if (cg->pids_kind != CG_NONE && (n == 0 || strcmp(cg->pids_dir, cg->mem_dir) != 0))
		dirs[n++] = cg->pids_dir;
	if (cg_quota_own(cg))
		dirs[n++] = cg->quota_dir;
	return cg_open_each(dirs, "cgroup.procs", cg->plain_files, fds, err, errlen);
}

/* Slot i of fds is kind i (memory, pids), unlike cgroup_procs_open()'s
 * packed list: v1 and v2 kinds may be mixed, and each slot's fate is then
 * plain from cg alone. */
int cgroup_tasks_open(const struct cg_run *cg, int fds[CG_PROCS_FDS], char *err, size_t errlen)
{
	const char *dirs[CG_PROCS_FDS] = { NULL, NULL, NULL };

	if (cg->mem_kind == CG_V1)
		dirs[0] = cg->mem_dir;
	if (cg->pids_kind == CG_V1 && (dirs[0] == NULL || strcmp(cg->pids_dir, cg->mem_dir) != 0))
		dirs[1] = cg->pids_dir;
	if (cg->quota_kind == CG_V1 && cg_quota_own(cg))
		dirs[2] = cg->quota_dir;
	return cg_open_each(dirs, "tasks", cg->plain_files, fds, err, errlen);
}

int cgroup_fast_complete(const struct cg_run *cg, const int tasks[CG_PROCS_FDS], int v2fd)
{
	int v1_ok = (cg->mem_kind != CG_V1 || tasks[0] >= 0) &&
		    (cg->pids_kind != CG_V1 || tasks[1] >= 0 ||
		     (cg->mem_kind == CG_V1 && strcmp(cg->mem_dir, cg->pids_dir) == 0)) &&
		    (cg->quota_kind != CG_V1 || tasks[2] >= 0 || !cg_quota_own(cg));
	/* One v2 cgroup holds every v2 kind, CPU accounting included unless
	 * it has one of its own, which is v2 only when nothing else is. */
	int v2_ok = (cg->mem_kind != CG_V2 && cg->pids_kind != CG_V2 && cg->quota_kind != CG_V2) || v2fd >= 0;

	return v1_ok && v2_ok;
}

int cgroup_v2_dirfd(const struct cg_run *cg, char *err, size_t errlen)
{
	/* One v2 cgroup serves both kinds (cgroup_create), so the first v2
	 * directory found is the one. */
	const char *dir = cg->mem_kind == CG_V2     ? cg->mem_dir
			  : cg->pids_kind == CG_V2  ? cg->pids_dir
			  : cg->quota_kind == CG_V2 ? cg->quota_dir
			  : cg->cpu_kind == CG_V2   ? cg->cpu_dir
						    : NULL;
	int fd;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (dir == NULL)
		return -1;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		cg_fail(err, errlen, "%s: cannot open: %s", dir, strerror(errno));
	return fd;
}

/* Runs in the executor after a raw clone: nothing here may allocate or
 * take a lock another thread of the supervisor could hold. */
int cgroup_self_attach(const int fds[CG_PROCS_FDS])
{
	for (int i = 0; i < CG_PROCS_FDS; i++) {
		ssize_t n;

		if (fds[i] < 0)
			continue;
		do
			n = write(fds[i], "0", 1);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return -1;
		if (n != 1) {
			errno = EIO;
			return -1;
		}
	}
	return 0;
}

int cgroup_attach(const struct cg_run *cg, pid_t pid, char *err, size_t errlen)
{
	char val[32];

	snprintf(val, sizeof(val), "%d", (int)pid);
	if (cg->mem_kind != CG_NONE &&
	    cg_write_required(cg->mem_dir, "cgroup.procs", val, cg->plain_files, err, errlen) != 0)
		return -1;
	if (cg->pids_kind != CG_NONE && strcmp(cg->pids_dir, cg->mem_dir) != 0 &&
	    cg_write_required(cg->pids_dir, "cgroup.procs", val, cg->plain_files, err, errlen) != 0)
		return -1;
	if (cg_quota_own(cg) &&
	    cg_write_required(cg->quota_dir, "cgroup.procs", val, cg->plain_files, err, errlen) != 0)
		return -1;
	if (cg_cpu_own(cg) && cg_write_required(cg->cpu_dir, "cgroup.procs", val, cg->plain_files, err, errlen) != 0)
		return -1;
	return 0;
}

/* How the quota held: cpu.stat's periods and throttling, v1 and v2 alike
 * but for the unit of the wait (v1 throttled_time in ns). */
static int cg_usage_throttle(const struct cg_run *cg, struct cg_usage *u, char *err, size_t errlen)
{
	int v2 = cg->quota_kind == CG_V2;
	uint64_t wait = 0;
	int r1, r2, r3;

	if ((r1 = cg_read_key(cg->quota_dir, "cpu.stat", "nr_periods", &u->cpu_periods, err, errlen)) < 0 ||
	    (r2 = cg_read_key(cg->quota_dir, "cpu.stat", "nr_throttled", &u->cpu_throttled, err, errlen)) < 0 ||
	    (r3 = cg_read_key(cg->quota_dir, "cpu.stat", v2 ? "throttled_usec" : "throttled_time", &wait, err,
			      errlen)) < 0)
		return -1;
	u->have_throttle = r1 == 1 && r2 == 1 && r3 == 1;
	u->cpu_throttled_usec = v2 ? wait : wait / 1000;
	return 0;
}

int cgroup_usage(const struct cg_run *cg, struct cg_usage *u, char *err, size_t errlen)
{
	uint64_t v = 0;
	int have_oom_count, r;

	memset(u, 0, sizeof(*u));
	if (cg->mem_kind == CG_V2) {
		if (cg_read_u64(cg->mem_dir, "memory.peak", &u->mem_peak, err, errlen) < 0)
			return -1;
		if ((r = cg_read_key(cg->mem_dir, "memory.events", "max", &v, err, errlen)) < 0)
			return -1;
		u->mem_limit_hit = r == 1 && v > 0;
		if ((r = cg_read_key(cg->mem_dir, "memory.events", "oom_kill", &v, err, errlen)) < 0)
			return -1;
		u->oom_killed = r == 1 && v > 0;
		u->mem_limit_hit |= u->oom_killed;
	} else if (cg->mem_kind == CG_V1) {
		uint64_t limit = 0;

		if (cg_read_u64(cg->mem_dir, "memory.max_usage_in_bytes", &u->mem_peak, err, errlen) < 0)
			return -1;
		if ((r = cg_read_key(cg->mem_dir, "memory.oom_control", "oom_kill", &v, err, errlen)) < 0)
			return -1;
		u->oom_killed = r == 1 && v > 0;
		have_oom_count = r == 1;
		/* Recent kernels no longer count v1 failcnt (it reads 0 after
		 * an OOM kill), so the limit also counts as hit when the peak
		 * reached it or the OOM killer fired. */
		if ((r = cg_read_u64(cg->mem_dir, "memory.failcnt", &v, err, errlen)) < 0)
			return -1;
		u->mem_limit_hit = u->oom_killed || (r == 1 && v > 0);
		if ((r = cg_read_u64(cg->mem_dir, "memory.memsw.failcnt", &v, err, errlen)) < 0)
			return -1;
		u->mem_limit_hit |= r == 1 && v > 0;
		if ((r = cg_read_u64(cg->mem_dir, "memory.limit_in_bytes", &limit, err, errlen)) < 0)
			return -1;
		u->mem_limit_hit |= r == 1 && limit > 0 && u->mem_peak >= limit;
		/* Kernels before 4.13 do not count OOM kills; there, reaching
		 * the limit is the best sign we have. */
		if (!have_oom_count)
			u->oom_killed = u->mem_limit_hit;
	}
	if (cg->pids_kind != CG_NONE) {
		if ((r = cg_read_key(cg->pids_dir, "pids.events", "max", &v, err, errlen)) < 0)
			return -1;
		u->pids_max_events = r == 1 ? v : 0;
		u->pids_max_hit = u->pids_max_events > 0;
	}
	if (cg->cpu_kind == CG_V2) {
		if ((r = cg_read_key(cg->cpu_dir, "cpu.stat", "usage_usec", &v, err, errlen)) < 0)
			return -1;
		u->have_cpu = r == 1;
		u->cpu_usec = r == 1 ? v : 0;
	}
	if (cg->quota_kind != CG_NONE && cg_usage_throttle(cg, u, err, errlen) != 0)
		return -1;
	return 0;
}

/* ---- destruction -------------------------------------------------------- */

static void cg_pause(void)
{
	struct timespec ts = { 0, CG_ROUND_NS };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/*
 * SIGKILL pid if it is still in cgroup rel (or below) of the hierarchy key.
 * The pidfd pins the process first, so the membership read afterwards is
 * either about that same process or, if it has died meanwhile, the signal
 * goes nowhere: a pid reused by a process outside the cgroup is never hit.
 */
static void cg_kill_member(pid_t pid, const char *rel, const char *key)
{
	char proc[64], path[PATH_MAX];
	size_t rl = strlen(rel);
	int pfd = -1;

	pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pfd < 0 && errno != ENOSYS)
		goto out; /* gone already */
	snprintf(proc, sizeof(proc), "/proc/%d/cgroup", (int)pid);
	if (cg_proc_path(proc, key, path, sizeof(path)) != 1)
		goto out;
	if (strncmp(path, rel, rl) != 0 || (path[rl] != '\0' && path[rl] != '/'))
		goto out;
	if (pfd >= 0)
		(void)syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0);
	else
		(void)kill(pid, SIGKILL); /* kernel before 5.3: no pidfd, small reuse window */
out:
	if (pfd >= 0)
		close(pfd);
}

/* Kill what dir holds until cgroup.procs is empty.  0, or -1 with err. */
static int cg_empty(const char *dir, const char *rel, const char *key, int v2, char *err, size_t errlen)
{
	char path[PATH_MAX];
	char *line = NULL;
	size_t cap = 0;
	FILE *f = NULL;
	int round, listed = 0, rc = -1;

	if (cg_path(path, sizeof(path), dir, "/cgroup.procs", "") != 0) {
		cg_fail(err, errlen, "%s: path too long", dir);
		goto out;
	}
	/* cgroup.kill (5.14+) kills the whole subtree at once, forks in
	 * flight included; the loop below then only waits. */
	if (v2 && cg_write(dir, "cgroup.kill", "1", 0, err, errlen) < 0)
		goto out;
	for (round = 0; round < CG_ROUNDS; round++) {
		f = cg_open_lines(path);
		if (f == NULL && errno == ENOENT) {
			rc = 0;
			goto out;
		}
		if (f == NULL) {
			cg_fail(err, errlen, "%s: %s", path, strerror(errno));
			goto out;
		}
		listed = 0;
		while (getline(&line, &cap, f) > 0) {
			uint64_t pid;

			if (cg_parse_u64(line, &pid) != 0 || pid == 0 || pid > INT32_MAX)
				continue;
			listed++;
			cg_kill_member((pid_t)pid, rel, key);
		}
		fclose(f);
		f = NULL;
		if (listed == 0) {
			rc = 0;
			goto out;
		}
		cg_pause();
	}
	cg_fail(err, errlen, "%s: %d processes still listed after %d rounds of SIGKILL", dir, listed, CG_ROUNDS);
out:
	free(line);
	if (f != NULL)
		fclose(f);
	return rc;
}

/* In a plain test tree, control files are ordinary files that rmdir would
 * trip over; a real cgroupfs refuses unlink and needs none of this. */
static void cg_unlink_plain(DIR *d)
{
	struct dirent *e;

	rewinddir(d);
	while ((e = readdir(d)) != NULL)
		if (e->d_type == DT_REG)
			(void)unlinkat(dirfd(d), e->d_name, 0);
}

/* Remove dir and any cgroups below it, deepest first.  Each rmdir retries
 * on EBUSY: a killed process leaves its cgroup a moment after its pid
 * leaves cgroup.procs. */
static int cg_remove(const char *dir, int depth, int plain, char *err, size_t errlen)
{
	DIR *d = NULL;
	struct dirent *e;
	char sub[PATH_MAX];
	int round, rc = -1;

	if (depth > CG_MAX_DEPTH) {
		cg_fail(err, errlen, "%s: cgroups nested deeper than %d", dir, CG_MAX_DEPTH);
		goto out;
	}
	d = opendir(dir);
	if (d == NULL && errno == ENOENT) {
		rc = 0;
		goto out;
	}
	if (d == NULL) {
		cg_fail(err, errlen, "%s: cannot open: %s", dir, strerror(errno));
		goto out;
	}
	while ((e = readdir(d)) != NULL) {
		struct stat st;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (e->d_type != DT_DIR &&
		    !(e->d_type == DT_UNKNOWN && fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		      S_ISDIR(st.st_mode)))
			continue;
		if (cg_path(sub, sizeof(sub), dir, "/", e->d_name) != 0) {
			cg_fail(err, errlen, "%s/%s: path too long", dir, e->d_name);
			goto out;
		}
		if (cg_remove(sub, depth + 1, plain, err, errlen) != 0)
			goto out;
	}
	if (plain)
		cg_unlink_plain(d);
	for (round = 0; round < CG_ROUNDS; round++) {
		if (rmdir(dir) == 0 || errno == ENOENT) {
			rc = 0;
			goto out;
		}
		if (errno != EBUSY)
			break;
		cg_pause();
	}
	cg_fail(err, errlen, "%s: cannot remove: %s", dir, strerror(errno));
out:
	if (d != NULL)
		closedir(d);
	return rc;
}

/* Empty and remove one of the run's cgroups; on success forget it. */
static int cg_destroy_one(enum cg_kind *kind, char *dir, char *rel, const char *v1_key, int plain, char *err,
			  size_t errlen)
{
	const char *key = *kind == CG_V2 ? "" : v1_key;

	if (*kind == CG_NONE || dir[0] == '\0')
		return 0;
	if (cg_empty(dir, rel, key, *kind == CG_V2, err, errlen) != 0)
		return -1;
	if (cg_remove(dir, 0, plain, err, errlen) != 0)
		return -1;
	*kind = CG_NONE;
	dir[0] = '\0';
	rel[0] = '\0';
	return 0;
}

int cgroup_destroy(struct cg_run *cg, char *err, size_t errlen)
{
	int rc = 0;

	/* CPU accounting in a directory of its own is removed here; in the
	 * memory or pids cgroup it goes with that one. */
	if (cg_cpu_own(cg) &&
	    cg_destroy_one(&cg->cpu_kind, cg->cpu_dir, cg->cpu_rel, "", cg->plain_files, err, errlen) != 0)
		rc = -1;
	if (!cg_cpu_own(cg)) {
		cg->cpu_kind = CG_NONE;
		cg->cpu_dir[0] = cg->cpu_rel[0] = '\0';
	}
	/* The same for the CPU quota's cgroup. */
	if (cg_quota_own(cg) && cg_destroy_one(&cg->quota_kind, cg->quota_dir, cg->quota_rel, "cpu", cg->plain_files,
					       rc == 0 ? err : NULL, rc == 0 ? errlen : 0) != 0)
		rc = -1;
	if (!cg_quota_own(cg)) {
		cg->quota_kind = CG_NONE;
		cg->quota_dir[0] = cg->quota_rel[0] = '\0';
	}
	if (rc != 0) {
		err = NULL;
		errlen = 0;
	}

	if (cg->mem_kind == CG_V2 && cg->pids_kind == CG_V2 && strcmp(cg->mem_dir, cg->pids_dir) == 0) {
		/* One directory serving both kinds: remove it once. */
		cg->pids_kind = CG_NONE;
		cg->pids_dir[0] = '\0';
		cg->pids_rel[0] = '\0';
		if (cg_destroy_one(&cg->mem_kind, cg->mem_dir, cg->mem_rel, "memory", cg->plain_files, err, errlen) != 0)
			rc = -1;
		if (cg->mem_kind != CG_NONE) {
			/* Keep both kinds on failure, so a retry sees the run
			 * as it was. */
			cg->pids_kind = CG_V2;
			strcpy(cg->pids_dir, cg->mem_dir);
			strcpy(cg->pids_rel, cg->mem_rel);
		}
		return rc;
	}
	if (cg_destroy_one(&cg->mem_kind, cg->mem_dir, cg->mem_rel, "memory", cg->plain_files, err, errlen) != 0)
		rc = -1;
	/* After a failure keep the first message; the second cgroup is still
	 * tried so as little as possible is left behind. */
	if (cg_destroy_one(&cg->pids_kind, cg->pids_dir, cg->pids_rel, "pids", cg->plain_files,
			   rc == 0 ? err : NULL, rc == 0 ? errlen : 0) != 0)
		rc = -1;
	return rc;
}

const char *cgroup_kind_name(enum cg_kind k)
{
	switch (k) {
	case CG_V1:
		return "cgroup-v1";
	case CG_V2:
		return "cgroup-v2";
	case CG_NONE:
		break;
	}
	return "none";
}

/*
 * A supervisor killed with SIGKILL cannot remove its cgroups.  Its
 * executor died with it (pdeathsig, pid namespace), but a tool's children
 * did not: they were reparented to init, still in the tool call's cgroup
 * (cordon-<pid>-<id>-t<n>).  Each run sweeps its siblings: names are
 * cordon-<supervisor pid>-<...>, and one whose supervisor no longer exists
 * is emptied the way destroy empties a cgroup (each member, pinned by a
 * pidfd, killed only while its own cgroup file still says it is inside)
 * and removed.  A reused pid only makes the sweep skip a stale cgroup until
 * a later run.  What it cannot tell: a supervisor in another pid namespace
 * sharing this parent cgroup, whose pid does not exist in ours, looks
 * stale; docs/cgroups.md says to give such supervisors parents of their own.
 */

static void cg_sweep_parent(const char *dir, const char *rel, const char *v1_key, int v2)
{
	char parent[PATH_MAX], parent_rel[PATH_MAX], child[PATH_MAX], child_rel[PATH_MAX];
	char *slash;
	DIR *d;
	struct dirent *e;

	if (dir[0] == '\0' || snprintf(parent, sizeof(parent), "%s", dir) >= (int)sizeof(parent) ||
	    snprintf(parent_rel, sizeof(parent_rel), "%s", rel) >= (int)sizeof(parent_rel))
		return;
	slash = strrchr(parent, '/');
	if (slash == NULL || slash == parent)
		return;
	*slash = '\0';
	slash = strrchr(parent_rel, '/');
	if (slash == NULL)
		return;
	*slash = '\0';
	d = opendir(parent);
	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		struct stat st;

		if (!stale_pid_name(e->d_name, "cordon-", '-') ||
		    cg_path(child, sizeof(child), parent, "/", e->d_name) != 0 ||
		    cg_path(child_rel, sizeof(child_rel), parent_rel, "/", e->d_name) != 0 ||
		    lstat(child, &st) != 0 || !S_ISDIR(st.st_mode))
			continue;
		/* Best effort: what cannot be emptied now is tried again by the
		 * next run. */
		if (cg_empty(child, child_rel, v2 ? "" : v1_key, v2, NULL, 0) == 0)
			(void)cg_remove(child, 0, 0, NULL, 0);
	}
	closedir(d);
}

void cgroup_sweep_stale(const struct cg_run *cg)
{
	if (cg->plain_files)
		return;
	if (cg->mem_kind != CG_NONE)
		cg_sweep_parent(cg->mem_dir, cg->mem_rel, "memory", cg->mem_kind == CG_V2);
	if (cg->pids_kind != CG_NONE && strcmp(cg->pids_dir, cg->mem_dir) != 0)
		cg_sweep_parent(cg->pids_dir, cg->pids_rel, "pids", cg->pids_kind == CG_V2);
	if (cg_quota_own(cg))
		cg_sweep_parent(cg->quota_dir, cg->quota_rel, "cpu", cg->quota_kind == CG_V2);
	if (cg_cpu_own(cg))
		cg_sweep_parent(cg->cpu_dir, cg->cpu_rel, "", 1);
}
