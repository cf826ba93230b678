/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hostid.c - per-run host uid/gid leases (hostid.h).
 *
 * The databases are read once per acquire into a list of taken intervals,
 * so a candidate inside a subordinate range is skipped to the range's end
 * rather than tried id by id.  The NSS lookups (real database only) are
 * asked per candidate: NSS has no cheap "list everything", and the first
 * candidate is almost always free.
 *
 * Lock files are removed on release, or a long-lived host would keep one
 * file per id ever leased (up to 16M in /run with the default range).
 * Removing a lock file is only safe with a check after locking: a second
 * acquirer may have opened the file just before the holder unlinked it and
 * lock the orphaned inode once the holder closes.  So an acquirer that
 * gets the flock checks that the name still points at the inode it
 * locked; if not, it lost a race with a release and opens the name again.
 * The holder unlinks before it unlocks, so the name never points at an
 * inode whose lock a new acquirer could take while an old one thinks it
 * holds the id.
 */
#include "runtime/hostid.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Lock-then-check retries for one id before calling it busy: each retry
 * means another process released and re-created the file in between,
 * which cannot go on for long. */
#define HOSTID_LOCK_TRIES 8
/* Largest buffer for one getpwuid_r / getgrgid_r answer (a group with
 * thousands of members); the search starts at 16 KiB. */
#define HOSTID_NSS_BUF_MAX (1u << 20)
/* Largest taken-interval list: a passwd, group and subordinate file
 * together with more entries than this are not a host we were built for. */
#define HOSTID_TAKEN_MAX (1u << 20)

/* [lo, hi): 64-bit so first + count of a subordinate range cannot wrap. */
struct taken_span {
	uint64_t lo, hi;
};

struct taken {
	struct taken_span *v;
	size_t len, cap;
	int nss_pw, nss_gr; /* also ask getpwuid_r / getgrgid_r per candidate */
};

static void hostid_fail(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void hostid_fail(char *err, size_t n, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || n == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, n, fmt, ap);
	va_end(ap);
}

/* ---- the range ---------------------------------------------------------- */

/* One number of a range: decimal without a leading zero, or 0x-hex; the
 * whole of [s, s+len), at most 0xFFFFFFFF. */
static int range_number(const char *s, size_t len, uint32_t *out)
{
	uint64_t v = 0;
	unsigned base = 10;
	size_t i = 0;

	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	} else if (len == 0 || (len > 1 && s[0] == '0')) {
		return -1;
	}
	for (; i < len; i++) {
		unsigned d;

		if (s[i] >= '0' && s[i] <= '9')
			d = (unsigned)(s[i] - '0');
		else if (base == 16 && s[i] >= 'a' && s[i] <= 'f')
			d = (unsigned)(s[i] - 'a' + 10);
		else if (base == 16 && s[i] >= 'A' && s[i] <= 'F')
			d = (unsigned)(s[i] - 'A' + 10);
		else
			return -1;
		v = v * base + d;
		if (v > UINT32_MAX)
			return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

int hostid_range_parse(const char *text, struct hostid_range *r, char *err, size_t n)
{
	const char *sep;
	uint32_t a, b;
	uint64_t first, last;

	if (text == NULL || (sep = strpbrk(text, ":-")) == NULL) {
		hostid_fail(err, n, "--host-ids: '%.64s' is not FIRST:COUNT or FIRST-LAST", text ? text : "");
		return -1;
	}
	if (range_number(text, (size_t)(sep - text), &a) != 0 || range_number(sep + 1, strlen(sep + 1), &b) != 0) {
		hostid_fail(err, n, "--host-ids: '%.64s': each side must be a decimal or 0x-hex number below 2^32 "
				    "(no sign, no leading zero)", text);
		return -1;
	}
	first = a;
	if (*sep == ':') {
		if (b == 0) {
			hostid_fail(err, n, "--host-ids: '%.64s': the count must be at least 1", text);
			return -1;
		}
		last = first + b - 1;
	} else {
		if (b < a) {
			hostid_fail(err, n, "--host-ids: '%.64s': LAST is below FIRST", text);
			return -1;
		}
		last = b;
	}
	if (first == 0) {
		hostid_fail(err, n, "--host-ids: '%.64s' holds id 0 (root)", text);
		return -1;
	}
	/* (uid_t)-1 means "leave unchanged" to setresuid and chown. */
	if (last >= UINT32_MAX) {
		hostid_fail(err, n, "--host-ids: '%.64s' reaches 4294967295, which is (uid_t)-1", text);
		return -1;
	}
	r->first = (uint32_t)first;
	r->count = (uint32_t)(last - first + 1);
	return 0;
}

/* ---- what the host has taken ------------------------------------------- */

static int taken_add(struct taken *t, uint64_t lo, uint64_t hi, char *err, size_t n)
{
	if (hi <= lo)
		return 0;
	if (t->len == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct taken_span *v;

		if (cap > HOSTID_TAKEN_MAX) {
			hostid_fail(err, n, "more than %u account and subordinate entries", HOSTID_TAKEN_MAX);
			return -1;
		}
		v = realloc(t->v, cap * sizeof(*v));
		if (v == NULL) {
			hostid_fail(err, n, "out of memory");
			return -1;
		}
		t->v = v;
		t->cap = cap;
	}
	t->v[t->len].lo = lo;
	t->v[t->len].hi = hi;
	t->len++;
	return 0;
}

/* Field i (0-based) of a colon-separated line as a decimal uint32; -1 when
 * the line has no such field or it is not a plain number. */
static int line_field(const char *line, unsigned i, uint32_t *out)
{
	const char *s = line, *e;
	uint64_t v = 0;

	for (; i > 0; i--) {
		s = strchr(s, ':');
		if (s == NULL)
			return -1;
		s++;
	}
	e = s + strcspn(s, ":\n");
	if (e == s || e - s > 10)
		return -1;
	for (; s < e; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (v > UINT32_MAX)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

enum db_kind { DB_PASSWD, DB_GROUP, DB_SUB };

/*
 * Add the ids one database file takes.  Lines that do not parse are skipped,
 * as libc skips them: they name no id the kernel would see.  ("+" and "-"
 * NIS compat lines are among them; the NSS lookup covers those sources.)
 */
static int taken_load_file(struct taken *t, const char *path, enum db_kind kind, char *err, size_t n)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	uint32_t a, b;
	int rc = 0;

	if (f == NULL) {
		if (errno == ENOENT)
			return 0; /* no /etc/subuid: nobody has subordinate ids */
		hostid_fail(err, n, "%s: %s", path, strerror(errno));
		return -1;
	}
	errno = 0;
	while (getline(&line, &cap, f) >= 0) {
		switch (kind) {
		case DB_PASSWD:
			/* name:pw:uid:gid: both the uid and the primary gid
			 * (which may have no line in the group file). */
			if (line_field(line, 2, &a) == 0 && taken_add(t, a, (uint64_t)a + 1, err, n) != 0)
				rc = -1;
			if (rc == 0 && line_field(line, 3, &b) == 0 && taken_add(t, b, (uint64_t)b + 1, err, n) != 0)
				rc = -1;
			break;
		case DB_GROUP:
			if (line_field(line, 2, &a) == 0 && taken_add(t, a, (uint64_t)a + 1, err, n) != 0)
				rc = -1;
			break;
		case DB_SUB:
			if (line_field(line, 1, &a) == 0 && line_field(line, 2, &b) == 0 &&
			    taken_add(t, a, (uint64_t)a + b, err, n) != 0)
				rc = -1;
			break;
		}
		if (rc != 0)
			goto out;
	}
	if (ferror(f)) {
		hostid_fail(err, n, "%s: read error", path);
		rc = -1;
	}
out:
	free(line);
	fclose(f);
	return rc;
}

static void taken_free(struct taken *t)
{
	free(t->v);
	t->v = NULL;
	t->len = t->cap = 0;
}

static int taken_load(struct taken *t, const struct hostid_files *files, char *err, size_t n)
{
	static const struct hostid_files real = { NULL, NULL, NULL, NULL };
	const struct hostid_files *f = files != NULL ? files : &real;

	memset(t, 0, sizeof(*t));
	/* NSS only for the real database: a test's fake files must decide
	 * alone, whatever accounts the test host has. */
	t->nss_pw = f->passwd == NULL;
	t->nss_gr = f->group == NULL;
	/* Root, nobody (the overflow id), 16-bit -1 and (uid_t)-1 ("leave
	 * unchanged" to setresuid and chown), on every host: whatever range a
	 * caller passes, these are never free. */
	if (taken_add(t, 0, 1, err, n) != 0 || taken_add(t, 65534, 65536, err, n) != 0 ||
	    taken_add(t, UINT32_MAX, (uint64_t)UINT32_MAX + 1, err, n) != 0 ||
	    taken_load_file(t, f->passwd ? f->passwd : "/etc/passwd", DB_PASSWD, err, n) != 0 ||
	    taken_load_file(t, f->group ? f->group : "/etc/group", DB_GROUP, err, n) != 0 ||
	    taken_load_file(t, f->subuid ? f->subuid : "/etc/subuid", DB_SUB, err, n) != 0 ||
	    taken_load_file(t, f->subgid ? f->subgid : "/etc/subgid", DB_SUB, err, n) != 0) {
		taken_free(t);
		return -1;
	}
	return 0;
}

/* The end of the taken span holding id, or id itself when none does. */
static uint64_t taken_span_end(const struct taken *t, uint64_t id)
{
	size_t i;

	for (i = 0; i < t->len; i++)
		if (t->v[i].lo <= id && id < t->v[i].hi)
			return t->v[i].hi;
	return id;
}

/* 1 when NSS knows id as a user (when t->nss_pw) or a group (when
 * t->nss_gr), 0 when not, -1 on a lookup error: a directory service that
 * cannot answer might know the id, so that is a failure, never "free". */
static int nss_knows(const struct taken *t, uint32_t id, char *err, size_t n)
{
	size_t cap = 16384;
	char *buf = NULL;
	int rc = -1, e, pass;

	for (pass = 0; pass < 2; pass++) {
		if ((pass == 0 && !t->nss_pw) || (pass == 1 && !t->nss_gr))
			continue;
		for (;;) {
			struct passwd pw, *pwr = NULL;
			struct group gr, *grr = NULL;
			char *nb = realloc(buf, cap);

			if (nb == NULL) {
				hostid_fail(err, n, "out of memory");
				goto out;
			}
			buf = nb;
			if (pass == 0)
				e = getpwuid_r((uid_t)id, &pw, buf, cap, &pwr);
			else
				e = getgrgid_r((gid_t)id, &gr, buf, cap, &grr);
			if (e == ERANGE && cap < HOSTID_NSS_BUF_MAX) {
				cap *= 2;
				continue;
			}
			/* ENOENT, ESRCH, EBADF, EPERM: "not found" in some
			 * NSS modules (getpwuid_r(3)). */
			if (e != 0 && e != ENOENT && e != ESRCH && e != EBADF && e != EPERM) {
				hostid_fail(err, n, "%s(%u): %s", pass == 0 ? "getpwuid_r" : "getgrgid_r",
					    (unsigned)id, strerror(e));
				goto out;
			}
			if (e == 0 && (pwr != NULL || grr != NULL)) {
				rc = 1;
				goto out;
			}
			break;
		}
	}
	rc = 0;
out:
	free(buf);
	return rc;
}

/* 1 taken, 0 free, -1 error: the files' spans, then NSS. */
static int taken_has(const struct taken *t, uint32_t id, char *err, size_t n)
{
	if (taken_span_end(t, id) != id)
		return 1;
	return nss_knows(t, id, err, n);
}

int hostid_is_taken(const struct hostid_files *files, uint32_t id, char *err, size_t n)
{
	struct taken t;
	int rc;

	if (taken_load(&t, files, err, n) != 0)
		return -1;
	rc = taken_has(&t, id, err, n);
	taken_free(&t);
	return rc;
}

/* ---- the lock directory and lock files --------------------------------- */

/* Open lock_dir as an fd, creating it 0700 when missing, and refuse one we
 * do not own alone: whoever else could write it could delete a lock file
 * under a holder or plant one that makes an id look leased forever. */
static int lockdir_open(const char *lock_dir, char *err, size_t n)
{
	struct stat st;
	int fd, tries;

	for (tries = 0; tries < 2; tries++) {
		fd = open(lock_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0 || errno != ENOENT || tries > 0)
			break;
		/* Missing: make it; a concurrent acquirer may win (EEXIST). */
		if (mkdir(lock_dir, 0700) != 0 && errno != EEXIST) {
			hostid_fail(err, n, "lock directory %s: mkdir: %s", lock_dir, strerror(errno));
			return -1;
		}
	}
	if (fd < 0) {
		if (errno == ELOOP || errno == ENOTDIR)
			hostid_fail(err, n, "lock directory %s: not a directory (a symlink is refused)", lock_dir);
		else
			hostid_fail(err, n, "lock directory %s: %s", lock_dir, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0) {
		hostid_fail(err, n, "lock directory %s: fstat: %s", lock_dir, strerror(errno));
		goto bad;
	}
	if (st.st_uid != geteuid()) {
		hostid_fail(err, n, "lock directory %s: owned by uid %u, not by us (uid %u)", lock_dir,
			    (unsigned)st.st_uid, (unsigned)geteuid());
		goto bad;
	}
	if ((st.st_mode & 077) != 0) {
		hostid_fail(err, n, "lock directory %s: mode %04o; it must be 0700 (chmod 0700 %s)", lock_dir,
			    (unsigned)(st.st_mode & 07777), lock_dir);
		goto bad;
	}
	return fd;
bad:
	close(fd);
	return -1;
}

/*
 * Try to lock id's file.  1: locked, *lock_fd set (owned by the caller).
 * 0: another run holds it.  -1: error.
 */
static int lockfile_take(int dir_fd, uint32_t id, int *lock_fd, char *err, size_t n)
{
	char name[16];
	struct stat fst, nst;
	int tries, fd = -1;

	snprintf(name, sizeof(name), "%u", (unsigned)id);
	for (tries = 0; tries < HOSTID_LOCK_TRIES; tries++) {
		fd = openat(dir_fd, name, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0) {
			hostid_fail(err, n, "lock file %s: %s", name, strerror(errno));
			return -1;
		}
		if (fstat(fd, &fst) != 0 || !S_ISREG(fst.st_mode) || fst.st_uid != geteuid()) {
			/* The directory is ours alone (lockdir_open), so this
			 * is tampering by someone as privileged as us. */
			hostid_fail(err, n, "lock file %s: not a regular file of ours", name);
			goto fail;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
			if (errno == EWOULDBLOCK) {
				close(fd);
				return 0;
			}
			hostid_fail(err, n, "lock file %s: flock: %s", name, strerror(errno));
			goto fail;
		}
		/* Locked: is it still the file the name points at? */
		if (fstatat(dir_fd, name, &nst, AT_SYMLINK_NOFOLLOW) == 0 && nst.st_dev == fst.st_dev &&
		    nst.st_ino == fst.st_ino) {
			*lock_fd = fd;
			return 1;
		}
		close(fd); /* a release removed it between our open and flock */
		fd = -1;
	}
	return 0;
fail:
	close(fd);
	return -1;
}

/* ---- acquire and release ----------------------------------------------- */

static uint32_t random_offset(uint32_t count)
{
	uint32_t v;

	/* The offset spreads runs over the range so an id is seldom reused
	 * soon; it guards nothing, so a clock will do when getrandom cannot
	 * answer at once. */
	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v))
		v = (uint32_t)getpid() ^ (uint32_t)time(NULL);
	return v % count;
}

/* Walk [lo, hi): 1 with *got and *lock_fd set, 0 none free, -1 error. */
static int acquire_span(const struct taken *t, int dir_fd, uint64_t lo, uint64_t hi, uint32_t *got, int *lock_fd,
			char *err, size_t n)
{
	uint64_t x = lo;

	while (x < hi) {
		uint64_t end = taken_span_end(t, x);
		int r;

		if (end != x) {
			x = end;
			continue;
		}
		r = nss_knows(t, (uint32_t)x, err, n);
		if (r == 0)
			r = lockfile_take(dir_fd, (uint32_t)x, lock_fd, err, n);
		else if (r == 1)
			r = 0; /* an NSS account: taken, like a busy lock */
		if (r < 0)
			return -1;
		if (r == 1) {
			*got = (uint32_t)x;
			return 1;
		}
		x++;
	}
	return 0;
}

int hostid_acquire_many(const struct hostid_range *r, const struct hostid_files *files, const char *lock_dir,
			struct hostid_lease *out, unsigned count, char *err, size_t n)
{
	static const struct hostid_lease none = HOSTID_LEASE_NONE;
	struct taken t = { NULL, 0, 0, 0, 0 };
	uint64_t first, start, end;
	int dir_fd = -1, rc = -1;
	unsigned k;

	for (k = 0; k < count; k++)
		out[k] = none;
	if (r == NULL || r->count == 0 || r->first == 0 || (uint64_t)r->first + r->count - 1 >= UINT32_MAX) {
		hostid_fail(err, n, "host id range is empty or holds 0 or (uid_t)-1");
		return -1;
	}
	/* One look at the databases and the lock directory for all leases:
	 * they are the start-up path of every run. */
	if ((dir_fd = lockdir_open(lock_dir, err, n)) < 0)
		goto out;
	if (taken_load(&t, files, err, n) != 0)
		goto out;
	first = r->first;
	end = first + r->count;
	for (k = 0; k < count; k++) {
		uint32_t id = 0;
		int lock_fd = -1, got;

		/* From a random start to the end, then wrap to the start.  An id
		 * leased just before is busy to the next search like any other:
		 * flock conflicts between open files, also of one process. */
		start = first + random_offset(r->count);
		got = acquire_span(&t, dir_fd, start, end, &id, &lock_fd, err, n);
		if (got == 0)
			got = acquire_span(&t, dir_fd, first, start, &id, &lock_fd, err, n);
		if (got < 0)
			goto out;
		if (got == 0) {
			hostid_fail(err, n, "no free host id in %u-%u (%u ids): every one is an account, a group, a "
					    "subordinate id or leased by another run; widen --host-ids",
				    (unsigned)r->first, (unsigned)(end - 1), (unsigned)r->count);
			goto out;
		}
		out[k].uid = (uid_t)id;
		out[k].gid = (gid_t)id;
		out[k].lock_fd = lock_fd;
		out[k].dir_fd = k + 1 < count ? fcntl(dir_fd, F_DUPFD_CLOEXEC, 0) : dir_fd;
		if (out[k].dir_fd < 0) {
			hostid_fail(err, n, "dup the lock directory: %s", strerror(errno));
			goto out;
		}
	}
	dir_fd = -1; /* the last lease owns it */
	rc = 0;
out:
	taken_free(&t);
	if (rc != 0) {
		for (k = 0; k < count; k++)
			hostid_release(&out[k]);
		if (dir_fd >= 0)
			close(dir_fd);
	}
	return rc;
}

int hostid_acquire(const struct hostid_range *r, const struct hostid_files *files, const char *lock_dir,
		   struct hostid_lease *out, char *err, size_t n)
{
	return hostid_acquire_many(r, files, lock_dir, out, 1, err, n);
}

void hostid_release(struct hostid_lease *l)
{
	static const struct hostid_lease none = HOSTID_LEASE_NONE;
	char name[16];

	if (l == NULL)
		return;
	if (l->lock_fd >= 0) {
		/* Unlink while still locked (see the top of this file). */
		snprintf(name, sizeof(name), "%u", (unsigned)l->uid);
		if (l->dir_fd >= 0)
			(void)unlinkat(l->dir_fd, name, 0);
		close(l->lock_fd);
	}
	if (l->dir_fd >= 0)
		close(l->dir_fd);
	*l = none;
}
