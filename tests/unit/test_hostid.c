/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_hostid.c - per-run host id leases (runtime/hostid.h).
 *
 * Every test but one reads fake passwd, group, subuid and subgid files in a
 * temporary directory, so which ids the host "has" is decided here and not
 * by the machine the test runs on; the lock directory lives there too.
 * Concurrency is tested across processes (fork), since that is where two
 * supervisors meet: each holds its leases while the parent checks that no
 * id was handed out twice.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <ftw.h>
#include <pwd.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "runtime/hostid.h"

struct fx {
	char dir[PATH_MAX];
	char passwd[PATH_MAX], group[PATH_MAX], subuid[PATH_MAX], subgid[PATH_MAX];
	char locks[PATH_MAX];
	struct hostid_files files;
};

static void pathf(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void pathf(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len)
		fail_msg("path too long: %s...", out);
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f == NULL)
		fail_msg("%s: %s", path, strerror(errno));
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* Accounts: uid 1001 with primary gid 1000 (no group line), group 1002;
 * alice's subordinate uids 1003-1007, bob's subordinate gids 1008-1010. */
static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return -1;
	pathf(f->dir, sizeof(f->dir), "%s/cordon-hostid-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	pathf(f->passwd, sizeof(f->passwd), "%s/passwd", f->dir);
	pathf(f->group, sizeof(f->group), "%s/group", f->dir);
	pathf(f->subuid, sizeof(f->subuid), "%s/subuid", f->dir);
	pathf(f->subgid, sizeof(f->subgid), "%s/subgid", f->dir);
	pathf(f->locks, sizeof(f->locks), "%s/locks", f->dir);
	put(f->passwd, "root:x:0:0:root:/root:/bin/bash\n"
		       "# not a line of the format\n"
		       "+nis\n"
		       "dev:x:1001:1000::/home/dev:/bin/sh\n");
	put(f->group, "root:x:0:\nstaff:x:1002:dev\n");
	put(f->subuid, "alice:1003:5\n");
	put(f->subgid, "bob:1008:3\n");
	f->files.passwd = f->passwd;
	f->files.group = f->group;
	f->files.subuid = f->subuid;
	f->files.subgid = f->subgid;
	*state = f;
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	nftw(f->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return 0;
}

static struct hostid_range range(uint32_t first, uint32_t count)
{
	struct hostid_range r = { first, count };

	return r;
}

/* ---- parsing ------------------------------------------------------------- */

static void test_parse_good(void **state)
{
	static const struct {
		const char *text;
		uint32_t first, count;
	} cases[] = {
		{ "100:5", 100, 5 },
		{ "100-104", 100, 5 },
		{ "1:1", 1, 1 },
		{ "7-7", 7, 1 },
		{ HOSTID_RANGE_DEFAULT_TEXT, HOSTID_RANGE_DEFAULT_FIRST, HOSTID_RANGE_DEFAULT_COUNT },
		{ "0X10:0x10", 16, 16 },
		{ "1-4294967294", 1, 4294967294u },
		{ "4294967294:1", 4294967294u, 1 },
	};
	struct hostid_range r;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (hostid_range_parse(cases[i].text, &r, err, sizeof(err)) != 0)
			fail_msg("%s: refused: %s", cases[i].text, err);
		assert_int_equal(r.first, cases[i].first);
		assert_int_equal(r.count, cases[i].count);
	}
}

static void test_parse_bad(void **state)
{
	static const struct {
		const char *text, *why;
	} cases[] = {
		{ "", "is not FIRST:COUNT" },
		{ "100", "is not FIRST:COUNT" },
		{ "0:5", "holds id 0" },
		{ "0-5", "holds id 0" },
		{ "1:0", "count must be at least 1" },
		{ "5-4", "LAST is below FIRST" },
		{ "010:3", "no leading zero" },
		{ "-1:3", "no sign" },
		{ "+1:3", "no sign" },
		{ "1 :3", "no sign" },
		{ "0x:3", "no sign" },
		{ "100:5x", "no sign" },
		{ "1:2:3", "no sign" },
		{ "4294967296:1", "below 2^32" },
		{ "1:4294967295", "reaches 4294967295" },
		{ "4294967295:1", "reaches 4294967295" },
		{ "2-4294967295", "reaches 4294967295" },
	};
	struct hostid_range r = { 77, 77 };
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		if (hostid_range_parse(cases[i].text, &r, err, sizeof(err)) == 0)
			fail_msg("'%s' was accepted", cases[i].text);
		if (strstr(err, cases[i].why) == NULL || strncmp(err, "--host-ids: ", 12) != 0)
			fail_msg("'%s': message '%s' does not say '%s'", cases[i].text, err, cases[i].why);
	}
	assert_int_equal(hostid_range_parse(NULL, &r, err, sizeof(err)), -1);
	/* A refused text leaves the range as it was. */
	assert_int_equal(r.first, 77);
	assert_int_equal(r.count, 77);
}

/* ---- what the host has taken ------------------------------------------- */

static void test_taken_fake_files(void **state)
{
	struct fx *f = *state;
	static const uint32_t taken[] = { 0, 1000, 1001, 1002, 1003, 1007, 1008, 1010, 65534, 65535 };
	static const uint32_t free_ids[] = { 1, 999, 1011, 65533, 65536, 0x70000000u };
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(taken) / sizeof(taken[0]); i++)
		if (hostid_is_taken(&f->files, taken[i], err, sizeof(err)) != 1)
			fail_msg("id %u should be taken", (unsigned)taken[i]);
	for (i = 0; i < sizeof(free_ids) / sizeof(free_ids[0]); i++)
		if (hostid_is_taken(&f->files, free_ids[i], err, sizeof(err)) != 0)
			fail_msg("id %u should be free (%s)", (unsigned)free_ids[i], err);
}

static void test_taken_missing_and_unreadable(void **state)
{
	struct fx *f = *state;
	char err[256], nowhere[PATH_MAX];
	struct hostid_files files = f->files;

	/* No subuid file: nobody has subordinate ids. */
	pathf(nowhere, sizeof(nowhere), "%s/none", f->dir);
	files.subuid = nowhere;
	assert_int_equal(hostid_is_taken(&files, 1003, err, sizeof(err)), 0);
	/* One that exists and cannot be read fails: a lease must never come
	 * from a database that was not read. */
	files.passwd = f->dir; /* a directory: fopen works, reading does not */
	assert_int_equal(hostid_is_taken(&files, 5000, err, sizeof(err)), -1);
	assert_non_null(strstr(err, f->dir));
}

/* ---- acquiring ----------------------------------------------------------- */

static void test_acquire_skips_every_kind_of_taken(void **state)
{
	struct fx *f = *state;
	struct hostid_range r = range(1000, 12); /* only 1011 is free */
	struct hostid_lease l = HOSTID_LEASE_NONE, l2 = HOSTID_LEASE_NONE;
	char err[256];
	int i;

	/* Random start offsets: repeat so that every start is likely met. */
	for (i = 0; i < 40; i++) {
		if (hostid_acquire(&r, &f->files, f->locks, &l, err, sizeof(err)) != 0)
			fail_msg("acquire: %s", err);
		assert_int_equal(l.uid, 1011);
		assert_int_equal(l.gid, 1011);
		assert_true(l.lock_fd >= 0);
		hostid_release(&l);
		assert_int_equal(l.lock_fd, -1);
	}
	/* Held: the only id is gone, and the error says what to do. */
	assert_int_equal(hostid_acquire(&r, &f->files, f->locks, &l, err, sizeof(err)), 0);
	assert_int_equal(hostid_acquire(&r, &f->files, f->locks, &l2, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no free host id in 1000-1011 (12 ids)"));
	assert_int_equal(l2.lock_fd, -1);
	assert_int_equal(l2.dir_fd, -1);
	hostid_release(&l);
}

static void test_acquire_exhaustion_then_release(void **state)
{
	struct fx *f = *state;
	struct hostid_range r = range(5000, 3);
	struct hostid_lease l[4] = { HOSTID_LEASE_NONE, HOSTID_LEASE_NONE, HOSTID_LEASE_NONE, HOSTID_LEASE_NONE };
	char err[256];
	int i;
	uid_t freed;

	for (i = 0; i < 3; i++)
		if (hostid_acquire(&r, &f->files, f->locks, &l[i], err, sizeof(err)) != 0)
			fail_msg("acquire %d: %s", i, err);
	assert_true(l[0].uid != l[1].uid && l[0].uid != l[2].uid && l[1].uid != l[2].uid);
	for (i = 0; i < 3; i++)
		assert_true(l[i].uid >= 5000 && l[i].uid < 5003);
	assert_int_equal(hostid_acquire(&r, &f->files, f->locks, &l[3], err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no free host id in 5000-5002"));
	/* A released id is free again at once, and it is the only one. */
	freed = l[1].uid;
	hostid_release(&l[1]);
	assert_int_equal(hostid_acquire(&r, &f->files, f->locks, &l[3], err, sizeof(err)), 0);
	assert_int_equal(l[3].uid, freed);
	for (i = 0; i < 4; i++)
		hostid_release(&l[i]);
}

/* A run leases two ids at once (executor, tools): distinct, and all or
 * none when the range cannot give both. */
static void test_acquire_many_all_or_none(void **state)
{
	struct fx *f = *state;
	struct hostid_range two = range(6000, 2), one = range(6100, 1);
	struct hostid_lease l[2], probe = HOSTID_LEASE_NONE;
	char err[256];

	if (hostid_acquire_many(&two, &f->files, f->locks, l, 2, err, sizeof(err)) != 0)
		fail_msg("acquire two: %s", err);
	assert_true(l[0].uid != l[1].uid && l[0].uid >= 6000 && l[1].uid >= 6000 && l[0].uid < 6002 &&
		    l[1].uid < 6002);
	assert_true(l[0].dir_fd >= 0 && l[1].dir_fd >= 0 && l[0].dir_fd != l[1].dir_fd);
	hostid_release(&l[0]);
	hostid_release(&l[1]);
	assert_int_equal(hostid_acquire_many(&one, &f->files, f->locks, l, 2, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no free host id in 6100-6100"));
	assert_int_equal(l[0].lock_fd, -1);
	assert_int_equal(l[1].lock_fd, -1);
	/* The one id the failed call had leased was given back. */
	assert_int_equal(hostid_acquire(&one, &f->files, f->locks, &probe, err, sizeof(err)), 0);
	assert_int_equal(probe.uid, 6100);
	hostid_release(&probe);
}

static void test_release_removes_lock_file_and_is_idempotent(void **state)
{
	struct fx *f = *state;
	struct hostid_range r = range(6000, 1);
	struct hostid_lease l = HOSTID_LEASE_NONE, none = HOSTID_LEASE_NONE;
	char err[256], lockfile[PATH_MAX];
	struct stat st;

	assert_int_equal(hostid_acquire(&r, &f->files, f->locks, &l, err, sizeof(err)), 0);
	pathf(lockfile, sizeof(lockfile), "%s/6000", f->locks);
	assert_int_equal(lstat(lockfile, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	hostid_release(&l);
	/* Removed, so a long-lived host keeps no file per id ever used. */
	assert_int_equal(lstat(lockfile, &st), -1);
	hostid_release(&l);
	hostid_release(&none);
	hostid_release(NULL);
	assert_int_equal(hostid_acquire(&r, &f->files, f->locks, &l, err, sizeof(err)), 0);
	assert_int_equal(l.uid, 6000);
	hostid_release(&l);
}

/* ---- the lock directory --------------------------------------------------- */

static void test_lockdir_created_0700(void **state)
{
	struct fx *f = *state;
	struct hostid_range r = range(6000, 1);
	struct hostid_lease l = HOSTID_LEASE_NONE;
	char err[256];
	struct stat st;
	mode_t old = umask(0);

	assert_int_equal(hostid_acquire(&r, &f->files, f->locks, &l, err, sizeof(err)), 0);
	umask(old);
	assert_int_equal(lstat(f->locks, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(st.st_uid, geteuid());
	hostid_release(&l);
}

static void expect_refused(struct fx *f, const char *lock_dir, const char *why)
{
	struct hostid_range r = range(6000, 1);
	struct hostid_lease l = HOSTID_LEASE_NONE;
	char err[512] = "";

	if (hostid_acquire(&r, &f->files, lock_dir, &l, err, sizeof(err)) == 0) {
		hostid_release(&l);
		fail_msg("lock dir %s was accepted", lock_dir);
	}
	if (strstr(err, why) == NULL)
		fail_msg("lock dir %s: '%s' does not say '%s'", lock_dir, err, why);
	assert_int_equal(l.lock_fd, -1);
	assert_int_equal(l.dir_fd, -1);
}

static void test_lockdir_refused(void **state)
{
	struct fx *f = *state;
	char real[PATH_MAX], link[PATH_MAX], deep[PATH_MAX];

	/* Parent missing: only the last component is created. */
	pathf(deep, sizeof(deep), "%s/no/such", f->dir);
	expect_refused(f, deep, "mkdir");
	/* A symlink, even to a good directory. */
	pathf(real, sizeof(real), "%s/real", f->dir);
	pathf(link, sizeof(link), "%s/link", f->dir);
	assert_int_equal(mkdir(real, 0700), 0);
	assert_int_equal(symlink(real, link), 0);
	expect_refused(f, link, "symlink");
	/* Group or world bits: writable, or merely readable. */
	assert_int_equal(chmod(real, 0770), 0);
	expect_refused(f, real, "mode 0770");
	assert_int_equal(chmod(real, 0755), 0);
	expect_refused(f, real, "mode 0755");
	assert_int_equal(chmod(real, 01777), 0);
	expect_refused(f, real, "mode 1777");
	/* A file, not a directory. */
	expect_refused(f, f->passwd, "not a directory");
	/* Someone else's directory (root only can make one). */
	assert_int_equal(chmod(real, 0700), 0);
	if (geteuid() == 0) {
		assert_int_equal(chown(real, 65534, 65534), 0);
		expect_refused(f, real, "owned by uid 65534");
	}
}

static void test_lockfile_not_regular(void **state)
{
	struct fx *f = *state;
	struct hostid_range r = range(6000, 1);
	struct hostid_lease l = HOSTID_LEASE_NONE;
	char err[256], odd[PATH_MAX];

	/* Only someone as privileged as the supervisor can put a directory
	 * where a lock file goes: that is reported, not skipped. */
	assert_int_equal(mkdir(f->locks, 0700), 0);
	pathf(odd, sizeof(odd), "%s/6000", f->locks);
	assert_int_equal(mkdir(odd, 0700), 0);
	assert_int_equal(hostid_acquire(&r, &f->files, f->locks, &l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "lock file 6000"));
}

/* ---- across processes ---------------------------------------------------- */

#define PER_CHILD 50

/* Child: lease PER_CHILD ids, send them, hold them until go_fd reads EOF. */
static void child_hold(struct fx *f, struct hostid_range r, int out_fd, int go_fd)
{
	struct hostid_lease l[PER_CHILD];
	uint32_t ids[PER_CHILD];
	char err[256], c;
	int i;

	for (i = 0; i < PER_CHILD; i++) {
		if (hostid_acquire(&r, &f->files, f->locks, &l[i], err, sizeof(err)) != 0)
			_exit(10 + i);
		ids[i] = (uint32_t)l[i].uid;
	}
	if (write(out_fd, ids, sizeof(ids)) != (ssize_t)sizeof(ids))
		_exit(3);
	while (read(go_fd, &c, 1) > 0)
		;
	for (i = 0; i < PER_CHILD; i++)
		hostid_release(&l[i]);
	_exit(0);
}

static void read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = read(fd, (char *)buf + got, len - got);

		if (r <= 0)
			fail_msg("short read from a child (%zu of %zu)", got, len);
		got += (size_t)r;
	}
}

static void test_concurrent_acquirers_never_share(void **state)
{
	struct fx *f = *state;
	struct hostid_range r = range(7000, 2 * PER_CHILD); /* exactly enough */
	struct hostid_lease extra = HOSTID_LEASE_NONE;
	uint32_t ids[2 * PER_CHILD];
	unsigned char seen[2 * PER_CHILD];
	int out[2][2], go[2];
	pid_t pid[2];
	char err[256];
	int i, k, status;

	assert_int_equal(mkdir(f->locks, 0700), 0);
	assert_int_equal(pipe(go), 0);
	for (k = 0; k < 2; k++) {
		assert_int_equal(pipe(out[k]), 0);
		pid[k] = fork();
		assert_true(pid[k] >= 0);
		if (pid[k] == 0) {
			/* A failed assertion in the parent must not leave
			 * children holding the test runner's pipes. */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(go[1]);
			close(out[k][0]);
			child_hold(f, r, out[k][1], go[0]);
		}
		close(out[k][1]);
	}
	close(go[0]);
	for (k = 0; k < 2; k++)
		read_full(out[k][0], ids + k * PER_CHILD, PER_CHILD * sizeof(uint32_t));
	/* Both hold their 50 now: all 100 distinct, the range is full. */
	memset(seen, 0, sizeof(seen));
	for (i = 0; i < 2 * PER_CHILD; i++) {
		assert_true(ids[i] >= 7000 && ids[i] < 7000 + 2 * PER_CHILD);
		if (seen[ids[i] - 7000]++)
			fail_msg("id %u was leased twice", (unsigned)ids[i]);
	}
	assert_int_equal(hostid_acquire(&r, &f->files, f->locks, &extra, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no free host id"));
	close(go[1]);
	for (k = 0; k < 2; k++) {
		assert_int_equal(waitpid(pid[k], &status, 0), pid[k]);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		close(out[k][0]);
	}
	/* Released by both: free again. */
	assert_int_equal(hostid_acquire(&r, &f->files, f->locks, &extra, err, sizeof(err)), 0);
	hostid_release(&extra);
}

static void test_sigkilled_holder_frees_its_id(void **state)
{
	struct fx *f = *state;
	struct hostid_range r = range(9000, 1);
	struct hostid_lease l = HOSTID_LEASE_NONE;
	int p[2], status;
	uint32_t id;
	char err[256];
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(p[0]);
		if (hostid_acquire(&r, &f->files, f->locks, &l, err, sizeof(err)) != 0)
			_exit(2);
		id = (uint32_t)l.uid;
		if (write(p[1], &id, sizeof(id)) != (ssize_t)sizeof(id))
			_exit(3);
		for (;;)
			pause();
	}
	close(p[1]);
	read_full(p[0], &id, sizeof(id));
	close(p[0]);
	assert_int_equal(id, 9000);
	assert_int_equal(hostid_acquire(&r, &f->files, f->locks, &l, err, sizeof(err)), -1);
	/* No release ran: the lock file is still there, but its flock went
	 * with the process. */
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	if (hostid_acquire(&r, &f->files, f->locks, &l, err, sizeof(err)) != 0)
		fail_msg("after SIGKILL: %s", err);
	assert_int_equal(l.uid, 9000);
	hostid_release(&l);
}

/* ---- the real account database ------------------------------------------ */

static void test_real_database_default_range(void **state)
{
	struct fx *f = *state;
	struct hostid_range r;
	struct hostid_lease l = HOSTID_LEASE_NONE;
	char err[256];

	assert_int_equal(hostid_range_parse(HOSTID_RANGE_DEFAULT_TEXT, &r, err, sizeof(err)), 0);
	if (hostid_acquire(&r, NULL, f->locks, &l, err, sizeof(err)) != 0)
		fail_msg("default range on this host: %s", err);
	assert_true(l.uid >= HOSTID_RANGE_DEFAULT_FIRST &&
		    l.uid < HOSTID_RANGE_DEFAULT_FIRST + HOSTID_RANGE_DEFAULT_COUNT);
	assert_null(getpwuid(l.uid));
	assert_null(getgrgid(l.gid));
	assert_int_equal(hostid_is_taken(NULL, (uint32_t)l.uid, err, sizeof(err)), 0);
	hostid_release(&l);
	/* The real database: root is taken through NSS or /etc/passwd. */
	assert_int_equal(hostid_is_taken(NULL, 0, err, sizeof(err)), 1);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_bad),
		T(test_taken_fake_files),
		T(test_taken_missing_and_unreadable),
		T(test_acquire_skips_every_kind_of_taken),
		T(test_acquire_exhaustion_then_release),
		T(test_acquire_many_all_or_none),
		T(test_release_removes_lock_file_and_is_idempotent),
		T(test_lockdir_created_0700),
		T(test_lockdir_refused),
		T(test_lockfile_not_regular),
		T(test_concurrent_acquirers_never_share),
		T(test_sigkilled_holder_frees_its_id),
		T(test_real_database_default_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
