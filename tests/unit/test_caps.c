/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_caps.c - caps_drop_all() (runtime/launch/caps.c): every capability
 * set empty afterwards, as /proc/self/status shows it; a caller that may
 * not drop them gets an error naming the capability; and no allocation on
 * the way, since the executor calls it between a raw clone and execve of a
 * multi-threaded server.
 *
 * Each case runs in a child, which the drop would otherwise leave this
 * test process without its capabilities.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "runtime/launch/launch.h"
#include "tests/unit/unit_read.h"

#define NOBODY 65534

/* Exit codes of the children, one per check. */
enum { C_OK = 0, C_SETUP = 10, C_DROP, C_STATUS, C_HELD, C_MSG, C_MALLOC };

/*
 * Allocation watch: this test binary's own malloc, calloc and realloc,
 * which count calls once a child sets watching, and hand the work to
 * glibc's.  Under ASan or TSan the sanitizer owns these names (TSan's
 * start-up calls them before its own state exists: a crash), and the
 * watch is left out (its test skips).
 */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define CAPS_WATCH 1
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t k, size_t n);
extern void *__libc_realloc(void *p, size_t n);

static volatile int watching, allocs;

void *malloc(size_t n)
{
	if (watching)
		allocs++;
	return __libc_malloc(n);
}

void *calloc(size_t k, size_t n)
{
	if (watching)
		allocs++;
	return __libc_calloc(k, n);
}

void *realloc(void *p, size_t n)
{
	if (watching)
		allocs++;
	return __libc_realloc(p, n);
}
#endif

/* In a child: whether the five Cap* lines of /proc/self/status are all
 * zero.  -1 when the file cannot be read. */
static int status_caps_zero(void)
{
	static const char *const keys[] = { "CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:" };
	char buf[8192];

	if (unit_read_small("/proc/self/status", buf, sizeof(buf)) <= 0)
		return -1;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *v = strstr(buf, keys[i]);

		if (v == NULL)
			return -1;
		v += strlen(keys[i]);
		v += strspn(v, " \t");
		if (strspn(v, "0") != 16)
			return 0;
	}
	return 1;
}

/* Run fn in a raw-cloned child (the executor's kind of child) and return
 * its exit code. */
static int in_child(int (*fn)(void))
{
	int status;
	pid_t pid = (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, NULL);

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(fn());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static int drop_and_check(void)
{
	char msg[256] = "";

	if (caps_drop_all(msg, sizeof(msg)) != 0) {
		fprintf(stderr, "caps_drop_all: %s\n", msg);
		return C_DROP;
	}
	return status_caps_zero() == 1 ? C_OK : C_STATUS;
}

static int drop_in_userns(void)
{
	if (unshare(CLONE_NEWUSER) != 0)
		return C_SETUP;
	return drop_and_check();
}

/* Root holding every capability: all five sets empty afterwards. */
static void test_drop_as_root(void **state)
{
	(void)state;
	if (geteuid() != 0) {
		print_message("    skipped: not root\n");
		skip();
	}
	assert_int_equal(in_child(drop_and_check), C_OK);
}

/* As the executor has them: every capability of a fresh user namespace. */
static void test_drop_in_user_namespace(void **state)
{
	int code;

	(void)state;
	code = in_child(drop_in_userns);
	if (code == C_SETUP) {
		print_message("    skipped: no user namespace for this user\n");
		skip();
	}
	assert_int_equal(code, C_OK);
}

/* Without CAP_SETPCAP the bounding set cannot be dropped: an error naming
 * the first capability and the errno's words, cut short to the buffer. */
static int drop_unprivileged(void)
{
	char msg[256] = "", tiny[5] = "xxxx";

	if (geteuid() == 0 && (setgroups(0, NULL) != 0 || setresgid(NOBODY, NOBODY, NOBODY) != 0 ||
			       setresuid(NOBODY, NOBODY, NOBODY) != 0))
		return C_SETUP;
	if (caps_drop_all(msg, sizeof(msg)) != -1)
		return C_HELD;
	if (strcmp(msg, "drop bounding capability 0: Operation not permitted") != 0) {
		fprintf(stderr, "message: \"%s\"\n", msg);
		return C_MSG;
	}
	if (caps_drop_all(tiny, sizeof(tiny)) != -1 || strcmp(tiny, "drop") != 0)
		return C_MSG;
	return C_OK;
}

static void test_unprivileged_fails_with_message(void **state)
{
	(void)state;
	assert_int_equal(in_child(drop_unprivileged), C_OK);
}

#if CAPS_WATCH
static int drop_watched(void)
{
	char msg[256] = "";
	int r, n;

	if (geteuid() != 0 && unshare(CLONE_NEWUSER) != 0)
		return C_SETUP;
	watching = 1;
	r = caps_drop_all(msg, sizeof(msg));
	watching = 0;
	n = allocs;
	if (r != 0)
		return C_DROP;
	return n == 0 ? C_OK : C_MALLOC;
}
#endif

/* No allocation: in a child of a multi-threaded process, a malloc lock
 * another thread held at the clone is held forever. */
static void test_no_allocation(void **state)
{
	(void)state;
#if CAPS_WATCH
	int code = in_child(drop_watched);

	if (code == C_SETUP) {
		print_message("    skipped: no user namespace for this user\n");
		skip();
	}
	assert_int_equal(code, C_OK);
#else
	print_message("    skipped: the allocation watch does not run under ASan\n");
	skip();
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drop_as_root),
		cmocka_unit_test(test_drop_in_user_namespace),
		cmocka_unit_test(test_unprivileged_fails_with_message),
		cmocka_unit_test(test_no_allocation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
