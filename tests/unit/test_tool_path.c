/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_tool_path.c - the StrictModes check of tool executables
 * (common/tool_path.c) on a tree of its own: good paths pass, and each way
 * a path can be swapped by someone other than root or the supervisor's
 * user fails with a sentence naming the component.
 *
 * The tree is made inside the source tree (CORDON_SRC), not in /tmp: a
 * sticky world-writable /tmp above it would fail every case.  Cases that
 * need another owner (uid 65534) run as root only.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/tool_path.h"

static char base[1024];

/* p = base/rel; the tree's names are short, a long one is a test bug. */
static void at(char p[PATH_MAX], const char *rel)
{
	if (snprintf(p, PATH_MAX, "%s/%s", base, rel) >= PATH_MAX)
		fail_msg("path too long: %s", rel);
}

static void mk(const char *rel, mode_t mode)
{
	char p[PATH_MAX];

	at(p, rel);
	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(chmod(p, mode), 0); /* past the umask */
}

static void mkfile(const char *rel, mode_t mode)
{
	char p[PATH_MAX];
	FILE *f;

	at(p, rel);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs("#!/bin/sh\necho '{}'\n", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(p, mode), 0);
}

static void mklink(const char *target, const char *rel)
{
	char p[PATH_MAX];

	at(p, rel);
	assert_int_equal(symlink(target, p), 0);
}

static void own(const char *rel, uid_t uid)
{
	char p[PATH_MAX];

	at(p, rel);
	assert_int_equal(lchown(p, uid, (gid_t)-1), 0);
}

/* Checks base/rel and insists on the verdict and, for a failure, on a
 * piece of the sentence. */
static void expect(const char *rel, enum tool_path_verdict want, const char *words)
{
	char p[PATH_MAX], why[512] = "";
	enum tool_path_verdict got;

	at(p, rel);
	got = tool_path_check(p, geteuid(), why, sizeof(why));
	if (got != want || (words != NULL && strstr(why, words) == NULL))
		fail_msg("%s: verdict %d (%s); want %d saying \"%s\"", rel, got, why, want, words ? words : "");
}

static int setup(void **state)
{
	const char *src = getenv("CORDON_SRC");
	char why[512];

	(void)state;
	if (snprintf(base, sizeof(base), "%s/tests/unit/.tool_path.XXXXXX", src ? src : ".") >= (int)sizeof(base))
		return -1;
	if (mkdtemp(base) == NULL)
		return -1;
	chmod(base, 0755);
	/* The tree's own ancestors must pass, or no good case can. */
	if (tool_path_check("/bin/sh", geteuid(), why, sizeof(why)) != TOOL_PATH_OK)
		fprintf(stderr, "note: /bin/sh: %s\n", why);
	mk("good", 0755);
	mk("good/bin", 0755);
	mkfile("good/bin/tool", 0755);
	mkfile("good/bin/group-writable", 0775);
	mkfile("good/bin/world-writable", 0757);
	mk("open", 0777);
	mkfile("open/tool", 0755);
	mk("sticky", 01777);
	mkfile("sticky/tool", 0755);
	mk("group", 0775);
	mkfile("group/tool", 0755);
	mklink("bin/tool", "good/rel-link");
	mklink("../open/tool", "good/link-into-open");
	mklink("../good/bin/tool", "open/link-out");
	mklink("loop-b", "good/loop-a");
	mklink("loop-a", "good/loop-b");
	mklink("bin", "good/dir-link");
	return 0;
}

static int teardown(void **state)
{
	char cmd[sizeof(base) + 32];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_good_paths(void **state)
{
	char why[512];

	(void)state;
	expect("good/bin/tool", TOOL_PATH_OK, NULL);
	/* a relative link in a trusted directory, and a link to a directory */
	expect("good/rel-link", TOOL_PATH_OK, NULL);
	expect("good/dir-link/tool", TOOL_PATH_OK, NULL);
	/* ".." inside the walk resolves against the real parent */
	expect("good/bin/../bin/tool", TOOL_PATH_OK, NULL);
	/* a real system path through Debian's /bin -> usr/bin link */
	assert_int_equal(tool_path_check("/bin/sh", geteuid(), why, sizeof(why)), TOOL_PATH_OK);
}

/* The control: the same file, made group- or world-writable, fails. */
static void test_writable_file(void **state)
{
	(void)state;
	expect("good/bin/group-writable", TOOL_PATH_UNSAFE, "writable by its group (mode 0775)");
	expect("good/bin/world-writable", TOOL_PATH_UNSAFE, "writable by others (mode 0757)");
}

static void test_writable_directory(void **state)
{
	(void)state;
	expect("open/tool", TOOL_PATH_UNSAFE, "/open is writable by others (mode 0777)");
	/* sticky does not help: anyone may create the name */
	expect("sticky/tool", TOOL_PATH_UNSAFE, "/sticky is writable by others (mode 1777)");
	expect("group/tool", TOOL_PATH_UNSAFE, "/group is writable by its group (mode 0775)");
}

/* A link is judged by the directory that holds it and by its target. */
static void test_links(void **state)
{
	(void)state;
	expect("open/link-out", TOOL_PATH_UNSAFE, "/open is writable by others");
	expect("good/link-into-open", TOOL_PATH_UNSAFE, "/open is writable by others");
	expect("good/loop-a", TOOL_PATH_UNSAFE, "symbolic links");
}

static void test_not_a_file(void **state)
{
	(void)state;
	expect("good/bin", TOOL_PATH_UNSAFE, "not a regular file");
	expect("good/dir-link", TOOL_PATH_UNSAFE, "not a regular file");
	expect("good/bin/tool/x", TOOL_PATH_UNSAFE, "not a directory");
	expect("good/bin/missing", TOOL_PATH_MISSING, "does not exist");
	expect("nowhere/tool", TOOL_PATH_MISSING, "does not exist");
}

/* As root: the case, a 0777 directory owned by an ordinary user
 * (65534), and a 0755 one owned by it, which it could chmod at will. */
static void test_other_owner(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	mk("nobody", 0755);
	mkfile("nobody/tool", 0755);
	own("nobody", 65534);
	expect("nobody/tool", TOOL_PATH_UNSAFE, "/nobody is owned by uid 65534");
	own("open", 65534);
	expect("open/tool", TOOL_PATH_UNSAFE, "/open is owned by uid 65534");
	/* a file owned by the ordinary user in a good directory */
	mkfile("good/bin/theirs", 0755);
	own("good/bin/theirs", 65534);
	expect("good/bin/theirs", TOOL_PATH_UNSAFE, "theirs is owned by uid 65534");
	/* the supervisor's own user is trusted like root */
	{
		char p[PATH_MAX], why[512];

		at(p, "good/bin/theirs");
		assert_int_equal(tool_path_check(p, 65534, why, sizeof(why)), TOOL_PATH_OK);
	}
}

static void test_relative_refused(void **state)
{
	char why[256];

	(void)state;
	assert_int_equal(tool_path_check("bin/tool", 0, why, sizeof(why)), TOOL_PATH_UNSAFE);
	assert_non_null(strstr(why, "not an absolute path"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_paths),
		cmocka_unit_test(test_writable_file),
		cmocka_unit_test(test_writable_directory),
		cmocka_unit_test(test_links),
		cmocka_unit_test(test_not_a_file),
		cmocka_unit_test(test_other_owner),
		cmocka_unit_test(test_relative_refused),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
