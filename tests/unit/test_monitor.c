/*
 * test_monitor.c - the workspace monitor counts what the sandbox really
 * holds: allocated bytes under the roots, links never followed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/supervise/supervise.h"

static void write_bytes(const char *path, size_t n)
{
	char buf[4096];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	memset(buf, 'x', sizeof(buf));
	while (n > 0) {
		size_t k = n < sizeof(buf) ? n : sizeof(buf);

		assert_int_equal(write(fd, buf, k), (ssize_t)k);
		n -= k;
	}
	fsync(fd);
	close(fd);
}

static void test_counts_blocks_not_links(void **state)
{
	char dir[] = "/tmp/cordon-monitor.XXXXXX", p[1200], outside[512];
	const char *roots[1];
	uint64_t entries, base, now;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	roots[0] = dir;
	base = monitor_bytes(roots, 1, &entries);
	assert_int_equal(entries, 0);

	/* 1 MiB of data in a nested directory is counted (at least its size). */
	snprintf(p, sizeof(p), "%s/a", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/a/data", dir);
	write_bytes(p, 1 << 20);
	now = monitor_bytes(roots, 1, &entries);
	assert_true(now - base >= (1u << 20));
	assert_true(now - base < (1u << 20) + 64 * 1024);
	assert_int_equal(entries, 2);

	/* A symlink to a big file outside is not followed: it adds (almost)
	 * nothing. */
	snprintf(outside, sizeof(outside), "%s.big", dir);
	write_bytes(outside, 4 << 20);
	snprintf(p, sizeof(p), "%s/link", dir);
	assert_int_equal(symlink(outside, p), 0);
	snprintf(p, sizeof(p), "%s/dirlink", dir);
	assert_int_equal(symlink("/usr", p), 0);
	assert_true(monitor_bytes(roots, 1, &entries) - now < 64 * 1024);
	assert_int_equal(entries, 4);

	/* A sparse file of 1 GiB costs its allocated blocks, not its size. */
	snprintf(p, sizeof(p), "%s/sparse", dir);
	fd = open(p, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 1ll << 30), 0);
	close(fd);
	assert_true(monitor_bytes(roots, 1, &entries) - now < 64 * 1024);

	/* A missing root counts as empty rather than failing the run. */
	roots[0] = "/nonexistent/cordon";
	assert_int_equal(monitor_bytes(roots, 1, &entries), 0);

	snprintf(p, sizeof(p), "rm -rf '%s' '%s'", dir, outside);
	assert_int_equal(system(p), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_blocks_not_links),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
