/* SPDX-License-Identifier: Apache-2.0 */
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stale_pid_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
