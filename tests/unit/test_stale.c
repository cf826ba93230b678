/*
 * test_stale.c - stale_pid_name(): what the sweeps may remove.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/rmtree.h"
#include "runtime/stale.h"

static void test_stale_pid_name(void **state)
{
	char name[64];
	pid_t dead = fork();

	(void)state;
	assert_true(dead >= 0);
	if (dead == 0)
		_exit(0);
	assert_int_equal(waitpid(dead, NULL, 0), dead);

	snprintf(name, sizeof(name), "cordon-%d-abc", (int)dead);
	assert_int_equal(stale_pid_name(name, "cordon-", '-'), 1);
	snprintf(name, sizeof(name), "cordon-run.%d.XyZ", (int)dead);
	assert_int_equal(stale_pid_name(name, "cordon-run.", '.'), 1);
	/* a live supervisor's name is not stale */
	snprintf(name, sizeof(name), "cordon-%d-abc", (int)getpid());
	assert_int_equal(stale_pid_name(name, "cordon-", '-'), 0);
	/* shapes that are not ours */
	snprintf(name, sizeof(name), "cordon-%d.abc", (int)dead);
	assert_int_equal(stale_pid_name(name, "cordon-", '-'), 0);
	assert_int_equal(stale_pid_name("cordon--abc", "cordon-", '-'), 0);
	assert_int_equal(stale_pid_name("cordon-0-abc", "cordon-", '-'), 0);
	assert_int_equal(stale_pid_name("cordon--5-abc", "cordon-", '-'), 0);
	assert_int_equal(stale_pid_name("cordon-99999999999999999999-a", "cordon-", '-'), 0);
	assert_int_equal(stale_pid_name("other-1-abc", "cordon-", '-'), 0);
	assert_int_equal(stale_pid_name("cordon-", "cordon-", '-'), 0);
}

static int entry_exists(int dfd, const char *name)
{
	struct stat st;

	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static void mkdir_with_file(int dfd, const char *name)
{
	int d, f;

	assert_int_equal(mkdirat(dfd, name, 0755), 0);
	d = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(d >= 0);
	f = openat(d, "f", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	assert_true(f >= 0);
	close(f);
	close(d);
}

/* Only a dead supervisor's directory of ours goes; a live run's, a
 * symlink named like one (to a directory with files), a plain file and a
 * name of another shape stay. */
static void test_stale_sweep_rundirs(void **state)
{
	char tmp[] = "/tmp/test_stale.XXXXXX", name[64], err[512];
	pid_t dead = fork();
	int fd;

	(void)state;
	assert_true(dead >= 0);
	if (dead == 0)
		_exit(0);
	assert_int_equal(waitpid(dead, NULL, 0), dead);
	assert_non_null(mkdtemp(tmp));
	fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);

	mkdir_with_file(fd, "decoy");
	snprintf(name, sizeof(name), "cordon-run.%d.dead01", (int)dead);
	mkdir_with_file(fd, name);
	snprintf(name, sizeof(name), "cordon-run.%d.dead02", (int)dead);
	assert_int_equal(symlinkat("decoy", fd, name), 0);
	snprintf(name, sizeof(name), "cordon-run.%d.dead03", (int)dead);
	assert_int_equal(mknodat(fd, name, S_IFREG | 0600, 0), 0);
	snprintf(name, sizeof(name), "cordon-run.%d.live01", (int)getpid());
	mkdir_with_file(fd, name);
	mkdir_with_file(fd, "other");

	assert_int_equal(stale_sweep_rundirs(tmp, err, sizeof(err)), 0);
	snprintf(name, sizeof(name), "cordon-run.%d.dead01", (int)dead);
	assert_false(entry_exists(fd, name));
	snprintf(name, sizeof(name), "cordon-run.%d.dead02", (int)dead);
	assert_true(entry_exists(fd, name));
	snprintf(name, sizeof(name), "cordon-run.%d.dead03", (int)dead);
	assert_true(entry_exists(fd, name));
	snprintf(name, sizeof(name), "cordon-run.%d.live01", (int)getpid());
	assert_true(entry_exists(fd, name));
	assert_true(entry_exists(fd, "other"));
	assert_true(entry_exists(fd, "decoy/f"));

	/* the directory itself is never followed through a link */
	assert_int_equal(symlinkat(tmp, fd, "link"), 0);
	snprintf(name, sizeof(name), "%s/link", tmp);
	assert_int_equal(stale_sweep_rundirs(name, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "/link: "));

	close(fd);
	fd = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_int_equal(rmtree_at(fd, tmp + strlen("/tmp/"), err, sizeof(err)), 0);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stale_pid_name),
		cmocka_unit_test(test_stale_sweep_rundirs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
