/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_rmtree.c - rmtree_at() / rmtree_contents(): removal by fds only.
 *
 * The regression test for issue 12 item 2 is
 * test_rmtree_symlink_swap_root_deletes_outside: a process swaps a
 * directory of the tree for a symlink to a decoy while the removal runs.
 * RMTREE_CONTROL=1 also runs the same race against the old nftw + remove
 * walk, which must lose decoy files (the test's own control).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/rmtree.h"
#include "tests/unit/unit_fds.h"

#define NDECOY 16
#define NOBODY 65534

struct scratch {
	char path[64];
	int fd;
};

static void scratch_make(struct scratch *s)
{
	snprintf(s->path, sizeof(s->path), "/tmp/test_rmtree.XXXXXX");
	assert_non_null(mkdtemp(s->path));
	s->fd = open(s->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(s->fd >= 0);
}

static void scratch_drop(struct scratch *s)
{
	char err[512];
	int parent = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	assert_true(parent >= 0);
	close(s->fd);
	assert_int_equal(rmtree_at(parent, s->path + strlen("/tmp/"), err, sizeof(err)), 0);
	close(parent);
}

static void file_make(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x\n", 2), 2);
	close(fd);
}

static int dir_make(int dfd, const char *name)
{
	int fd;

	assert_int_equal(mkdirat(dfd, name, 0755), 0);
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	return fd;
}

/* A directory of NDECOY files f0..f15 and a subdirectory holding the same,
 * named as the tree's files are, so a walk through a swapped link would
 * find every name it expects. */
static void decoy_make(int dfd, const char *name)
{
	int d = dir_make(dfd, name), sub = dir_make(d, "sub");
	char f[16];

	for (int i = 0; i < NDECOY; i++) {
		snprintf(f, sizeof(f), "f%d", i);
		file_make(d, f);
		file_make(sub, f);
	}
	close(sub);
	close(d);
}

static int decoy_count(int dfd, const char *name)
{
	int d = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC), sub, n = 0;
	char f[16];

	assert_true(d >= 0);
	sub = openat(d, "sub", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (int i = 0; i < NDECOY; i++) {
		snprintf(f, sizeof(f), "f%d", i);
		n += faccessat(d, f, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
		n += sub >= 0 && faccessat(sub, f, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
	}
	if (sub >= 0)
		close(sub);
	close(d);
	return n;
}

static int gone(int dfd, const char *name)
{
	struct stat st;

	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT;
}

static void test_rmtree_nested_with_links_fifos_sockets(void **state)
{
	struct scratch s;
	char err[512], decoy[128];
	int t, a, b;

	(void)state;
	scratch_make(&s);
	decoy_make(s.fd, "decoy");
	snprintf(decoy, sizeof(decoy), "%s/decoy", s.path);
	t = dir_make(s.fd, "t");
	a = dir_make(t, "a");
	b = dir_make(a, "b");
	file_make(t, "top");
	file_make(a, "f0");
	file_make(b, "f1");
	/* links to the outside, absolute and relative, to a file and a dir */
	assert_int_equal(symlinkat(decoy, a, "sub"), 0);
	assert_int_equal(symlinkat("../../decoy/f0", t, "f0"), 0);
	assert_int_equal(symlinkat("../../../decoy", b, "up"), 0);
	assert_int_equal(symlinkat("/nonexistent/x", b, "dangling"), 0);
	assert_int_equal(linkat(s.fd, "decoy/f1", b, "hard", 0), 0);
	assert_int_equal(mkfifoat(b, "fifo", 0600), 0);
	assert_int_equal(mknodat(a, "sock", S_IFSOCK | 0600, 0), 0);
	close(b);
	close(a);
	close(t);

	assert_int_equal(rmtree_at(s.fd, "t", err, sizeof(err)), 0);
	assert_true(gone(s.fd, "t"));
	assert_int_equal(decoy_count(s.fd, "decoy"), 2 * NDECOY);
	/* gone already: success, nothing to do */
	assert_int_equal(rmtree_at(s.fd, "t", err, sizeof(err)), 0);
	scratch_drop(&s);
}

static void test_rmtree_single_entries_and_bad_names(void **state)
{
	struct scratch s;
	char err[512];

	(void)state;
	scratch_make(&s);
	decoy_make(s.fd, "decoy");
	/* a link to a directory is removed itself, never its target's files */
	assert_int_equal(symlinkat("decoy", s.fd, "link"), 0);
	assert_int_equal(rmtree_at(s.fd, "link", err, sizeof(err)), 0);
	assert_true(gone(s.fd, "link"));
	assert_int_equal(decoy_count(s.fd, "decoy"), 2 * NDECOY);
	file_make(s.fd, "plain");
	assert_int_equal(rmtree_at(s.fd, "plain", err, sizeof(err)), 0);
	assert_true(gone(s.fd, "plain"));
	/* only one component: a path would be resolved through links */
	assert_int_equal(rmtree_at(s.fd, "decoy/sub", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "one path component"));
	assert_int_equal(rmtree_at(s.fd, "..", err, sizeof(err)), -1);
	assert_int_equal(rmtree_at(s.fd, ".", err, sizeof(err)), -1);
	assert_int_equal(rmtree_at(s.fd, "", err, sizeof(err)), -1);
	assert_int_equal(decoy_count(s.fd, "decoy"), 2 * NDECOY);
	scratch_drop(&s);
}

static void test_rmtree_contents_keeps_the_directory(void **state)
{
	struct scratch s;
	char err[512];
	int t, a;

	(void)state;
	scratch_make(&s);
	t = dir_make(s.fd, "t");
	a = dir_make(t, "a");
	file_make(a, "x");
	file_make(t, "y");
	close(a);
	assert_int_equal(rmtree_contents(t, err, sizeof(err)), 0);
	assert_true(gone(t, "a"));
	assert_true(gone(t, "y"));
	/* the caller's fd still reads from its start: the walk read its own */
	file_make(t, "z");
	assert_int_equal(rmtree_contents(t, err, sizeof(err)), 0);
	assert_true(gone(t, "z"));
	close(t);
	assert_int_equal(unlinkat(s.fd, "t", AT_REMOVEDIR), 0);
	scratch_drop(&s);
}

/* Directories without rwx for their owner, as a rootless sandbox leaves
 * them: 0300 (no read), 0000, 0500 (no write), one inside another; the top
 * itself 0000 too. */
static void modes_tree_make(int dfd)
{
	int t = dir_make(dfd, "t"), a = dir_make(t, "d0300"), b = dir_make(a, "d0000"), c = dir_make(t, "d0500");

	file_make(a, "f");
	file_make(b, "f");
	file_make(c, "f");
	assert_int_equal(fchmod(b, 0), 0);
	assert_int_equal(fchmod(a, 0300), 0);
	assert_int_equal(fchmod(c, 0500), 0);
	assert_int_equal(fchmod(t, 0), 0);
	close(c);
	close(b);
	close(a);
	close(t);
}

static void test_rmtree_unreadable_modes(void **state)
{
	struct scratch s;
	char err[512];

	(void)state;
	scratch_make(&s);
	modes_tree_make(s.fd);
	assert_int_equal(rmtree_at(s.fd, "t", err, sizeof(err)), 0);
	assert_true(gone(s.fd, "t"));
	scratch_drop(&s);
}

/* The same as a user that is not root, where only the mode fix makes the
 * tree removable (as root this test forks and becomes nobody, in a 0777
 * scratch directory). */
static void test_rmtree_unreadable_modes_unprivileged(void **state)
{
	struct scratch s;
	char err[512];
	pid_t pid;
	int st;

	(void)state;
	scratch_make(&s);
	assert_int_equal(fchmod(s.fd, 0777), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (geteuid() == 0 && (setresgid(NOBODY, NOBODY, NOBODY) != 0 || setresuid(NOBODY, NOBODY, NOBODY) != 0))
			_exit(10);
		modes_tree_make(s.fd);
		if (rmtree_at(s.fd, "t", err, sizeof(err)) != 0) {
			fprintf(stderr, "rmtree_at: %s\n", err);
			_exit(11);
		}
		/* the sweep's case: rmtree_contents on a 0500 directory of ours */
		int t = dir_make(s.fd, "u");

		file_make(t, "f");
		if (fchmod(t, 0500) != 0 || rmtree_contents(t, err, sizeof(err)) != 0) {
			fprintf(stderr, "rmtree_contents: %s\n", err);
			_exit(12);
		}
		_exit(gone(s.fd, "t") && gone(t, "f") ? 0 : 13);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_true(gone(s.fd, "t"));
	scratch_drop(&s);
}

/* A chain of single directories `depth` deep, a file at each level. */
static void chain_make(int dfd, const char *name, int depth)
{
	int fd = dir_make(dfd, name);

	for (int i = 0; i < depth; i++) {
		int next = dir_make(fd, "d");

		file_make(fd, "f");
		close(fd);
		fd = next;
	}
	close(fd);
}

/* 5000 levels, removed with fds capped just above what the walk may hold
 * (a walk that kept an fd a level fails with EMFILE), and the same fds
 * open after as before.  In a child, so the cap is its own. */
static void test_rmtree_deep_chain_constant_fds(void **state)
{
	struct scratch s;
	char err[512];
	struct rlimit rl;
	pid_t pid;
	int st, before;

	(void)state;
	scratch_make(&s);
	chain_make(s.fd, "t", 5000);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		before = unit_fd_count();
		rl.rlim_cur = rl.rlim_max = (rlim_t)(before + RMTREE_MAX_FDS + 4);
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			_exit(10);
		if (rmtree_at(s.fd, "t", err, sizeof(err)) != 0) {
			fprintf(stderr, "rmtree_at: %s\n", err);
			_exit(11);
		}
		_exit(unit_fd_count() == before ? 0 : 12);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_true(gone(s.fd, "t"));
	scratch_drop(&s);
}

/* --- the race ------------------------------------------------------------ */

typedef int (*remover_fn)(const struct scratch *s);

static int remove_by_fds(const struct scratch *s)
{
	char err[512];

	return rmtree_at(s->fd, "t", err, sizeof(err));
}

static int nftw_remove(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/* The walk run.c had before: nftw(FTW_DEPTH | FTW_PHYS) + remove(). */
static int remove_by_paths(const struct scratch *s)
{
	char p[128];

	snprintf(p, sizeof(p), "%s/t", s->path);
	return nftw(p, nftw_remove, 16, FTW_DEPTH | FTW_PHYS);
}

/* The attacker: swaps t/w/d for a link to the decoy and back, by paths,
 * each state held for a moment (the old walk's read and its removals each
 * meet one state then), until killed.  It says when the first swap is done. */
static void racer_run(const struct scratch *s, int ready)
{
	char d[128], hide[128], decoy[128];
	int told = 0;

	snprintf(d, sizeof(d), "%s/t/w/d", s->path);
	snprintf(hide, sizeof(hide), "%s/t/w/.d", s->path);
	snprintf(decoy, sizeof(decoy), "%s/decoy", s->path);
	for (;;) {
		if (rename(d, hide) == 0 && symlink(decoy, d) == 0) {
			if (!told && write(ready, "r", 1) == 1)
				told = 1;
			usleep(50);
			unlink(d);
			rename(hide, d);
			usleep(50);
		} else {
			if (!told && write(ready, "r", 1) == 1)
				told = 1; /* the tree is gone already */
			usleep(50);
		}
	}
}

/* t/w/d shaped as the decoy is, so the old walk reads the names the
 * decoy holds. */
static void race_tree_make(int dfd)
{
	int t = dir_make(dfd, "t"), w = dir_make(t, "w");

	decoy_make(w, "d");
	close(w);
	close(t);
}

/* Decoy files lost over `iterations` races of remove against the racer. */
static int race_lost(remover_fn remove_tree, int iterations)
{
	struct scratch s;
	char err[512], c;
	int lost = 0;

	scratch_make(&s);
	decoy_make(s.fd, "decoy");
	for (int i = 0; i < iterations; i++) {
		int p[2];
		pid_t racer;

		race_tree_make(s.fd);
		assert_int_equal(pipe2(p, O_CLOEXEC), 0);
		racer = fork();
		assert_true(racer >= 0);
		if (racer == 0) {
			close(p[0]);
			racer_run(&s, p[1]);
		}
		close(p[1]);
		assert_int_equal(read(p[0], &c, 1), 1);
		close(p[0]);
		/* may fail while the racer plays (a swap left as the tree was
		 * read); must not lose a decoy either way */
		(void)remove_tree(&s);
		kill(racer, SIGKILL);
		assert_int_equal(waitpid(racer, NULL, 0), racer);
		lost += 2 * NDECOY - decoy_count(s.fd, "decoy");
		if (lost > 0 && remove_tree == remove_by_paths)
			break; /* the control has shown it; the tree is past saving */
		/* what the racer left (a link, the hidden directory) */
		assert_int_equal(rmtree_at(s.fd, "t", err, sizeof(err)), 0);
		assert_true(gone(s.fd, "t"));
	}
	scratch_drop(&s);
	return lost;
}

static void test_rmtree_symlink_swap_root_deletes_outside(void **state)
{
	(void)state;
	assert_int_equal(race_lost(remove_by_fds, 300), 0);
}

static void test_rmtree_symlink_swap_control_nftw(void **state)
{
	(void)state;
	if (getenv("RMTREE_CONTROL") == NULL)
		skip();
	assert_true(race_lost(remove_by_paths, 300) > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rmtree_nested_with_links_fifos_sockets),
		cmocka_unit_test(test_rmtree_single_entries_and_bad_names),
		cmocka_unit_test(test_rmtree_contents_keeps_the_directory),
		cmocka_unit_test(test_rmtree_unreadable_modes),
		cmocka_unit_test(test_rmtree_unreadable_modes_unprivileged),
		cmocka_unit_test(test_rmtree_deep_chain_constant_fds),
		cmocka_unit_test(test_rmtree_symlink_swap_root_deletes_outside),
		cmocka_unit_test(test_rmtree_symlink_swap_control_nftw),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
