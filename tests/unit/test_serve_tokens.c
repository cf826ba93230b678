/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_serve_tokens.c - the TCP listener's tokens file (runtime/serve/
 * tokens.c): the grammar, each refusal with its file:line message, the
 * file's mode, and what a presented Authorization header gets.
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

#include "runtime/serve/engine.h"
#include "runtime/serve/tokens.h"

#define T1 "tok-aaaaaaaaaaaaaaaa"
#define T2 "tok-bbbbbbbbbbbbbbbb"
#define T3 "tok+/~._-ccccccccccc=="

static struct tokens *parse(const char *text, char *err, size_t n)
{
	return tokens_parse(text, strlen(text), "tokens", err, n);
}

/* text must be refused with exactly msg. */
static void refused(const char *text, const char *msg)
{
	char err[512] = "";
	struct tokens *t = parse(text, err, sizeof(err));

	if (t != NULL)
		fail_msg("accepted: %s", text);
	assert_string_equal(err, msg);
}

static void test_tokens_grammar(void **state)
{
	struct serve_scope sc;
	char err[256] = "";
	struct tokens *t;

	(void)state;
	t = parse("# the platform\n" T1 "\n\n   \t\n" T2 " cafe,bank   # scoped\r\n" T3 "\n", err, sizeof(err));
	assert_non_null(t);
	assert_int_equal(tokens_count(t), 3);

	assert_int_equal(tokens_check(t, "Bearer " T1, &sc), 1);
	assert_int_equal(sc.all, 1);
	assert_int_equal(sc.token_index, 1);

	assert_int_equal(tokens_check(t, "bearer   " T2 "  ", &sc), 1);
	assert_int_equal(sc.all, 0);
	assert_int_equal(sc.napps, 2);
	assert_string_equal(sc.apps[0], "cafe");
	assert_string_equal(sc.apps[1], "bank");
	assert_int_equal(sc.token_index, 2);

	assert_int_equal(tokens_check(t, "Bearer " T3, &sc), 1);
	assert_int_equal(sc.token_index, 3);
	tokens_free(t);
	tokens_free(NULL);
}

static void test_tokens_check_refuses(void **state)
{
	struct serve_scope sc = { 0 };
	char err[256] = "";
	struct tokens *t = parse(T1 "\n", err, sizeof(err));

	(void)state;
	assert_non_null(t);
	assert_int_equal(tokens_check(t, NULL, &sc), 0);
	assert_int_equal(tokens_check(t, "", &sc), 0);
	assert_int_equal(tokens_check(t, "Bearer", &sc), 0);
	assert_int_equal(tokens_check(t, "Bearer ", &sc), 0);
	assert_int_equal(tokens_check(t, "Basic " T1, &sc), 0);
	assert_int_equal(tokens_check(t, "Bearer" T1, &sc), 0);
	assert_int_equal(tokens_check(t, "Bearer " T1 "x", &sc), 0);
	assert_int_equal(tokens_check(t, "Bearer tok-aaaaaaaaaaaaaaa", &sc), 0); /* a prefix */
	assert_int_equal(tokens_check(t, "Bearer " T2, &sc), 0);
	assert_int_equal(tokens_check(NULL, "Bearer " T1, &sc), 0);
	assert_int_equal(sc.token_index, 0); /* untouched by refusals */
	tokens_free(t);
}

static void test_tokens_refusals(void **state)
{
	(void)state;
	refused("", "tokens: no token (a TCP listener needs at least one)");
	refused("# nothing\n\n", "tokens: no token (a TCP listener needs at least one)");
	refused("short\n", "tokens:1: the token is 5 characters; it must have 16 to 512");
	refused(T1 "\n" T2 " cafe extra\n",
		"tokens:2: unexpected text after the app list (write apps as app1,app2 without spaces)");
	refused(T1 "\n\n" T1 " cafe\n", "tokens:3: the same token as line 1");
	refused("tok\"aaaaaaaaaaaaaaaaa\n",
		"tokens:1: the token has a character outside RFC 6750's b64token (A-Z a-z 0-9 - . _ ~ + / and "
		"trailing =)");
	refused("tok=aaaaaaaaaaaaaaaa\n",
		"tokens:1: the token has a character outside RFC 6750's b64token (A-Z a-z 0-9 - . _ ~ + / and "
		"trailing =)");
	refused(T1 " cafe,,bank\n", "tokens:1: empty app name in the app list");
	refused(T1 " cafe,\n", "tokens:1: empty app name in the app list");
	refused(T1 " ca/fe\n", "tokens:1: app name 'ca/fe' has a character outside [A-Za-z0-9._-]");
	refused(T1 " cafe,cafe\n", "tokens:1: app 'cafe' listed twice");
	{
		static const char with_nul[] = T1 "\n\0" T2 "\n";
		char err[256] = "";

		assert_null(tokens_parse(with_nul, sizeof(with_nul) - 1, "tokens", err, sizeof(err)));
		assert_string_equal(err, "tokens:2: NUL byte");
	}
	{
		char line[5000], err[256] = "";

		memset(line, 'a', sizeof(line) - 1);
		line[sizeof(line) - 1] = '\0';
		assert_null(parse(line, err, sizeof(err)));
		assert_string_equal(err, "tokens:1: line over 4096 bytes");
		line[513] = '\0';
		assert_null(parse(line, err, sizeof(err)));
		assert_string_equal(err, "tokens:1: the token is 513 characters; it must have 16 to 512");
	}
	{
		char name[140], text[200], err[256] = "";

		memset(name, 'n', 129);
		name[129] = '\0';
		snprintf(text, sizeof(text), T1 " %s\n", name);
		assert_null(parse(text, err, sizeof(err)));
		assert_string_equal(err, "tokens:1: app name over 128 characters");
	}
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void test_tokens_load_mode(void **state)
{
	char dir[] = "/tmp/cordon-test-tokens.XXXXXX", path[128], link[128], err[512], want[512];
	struct serve_scope sc;
	struct tokens *t;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/tokens", dir);
	snprintf(link, sizeof(link), "%s/link", dir);

	write_file(path, T1 " cafe\n", 0640);
	t = tokens_load(path, err, sizeof(err));
	assert_non_null(t);
	assert_int_equal(tokens_check(t, "Bearer " T1, &sc), 1);
	assert_int_equal(sc.napps, 1);
	tokens_free(t);

	write_file(path, T1 "\n", 0644);
	assert_null(tokens_load(path, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s: mode 0644 lets others read it; chmod o-rw %s", path, path);
	assert_string_equal(err, want);

	write_file(path, T1 "\n", 0602);
	assert_null(tokens_load(path, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s: mode 0602 lets others write it; chmod o-rw %s", path, path);
	assert_string_equal(err, want);

	write_file(path, T1 "\nbad\n", 0600);
	assert_null(tokens_load(path, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s:2: the token is 3 characters; it must have 16 to 512", path);
	assert_string_equal(err, want);

	/* a symbolic link is not followed */
	assert_int_equal(symlink(path, link), 0);
	assert_null(tokens_load(link, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s: Too many levels of symbolic links", link);
	assert_string_equal(err, want);

	assert_null(tokens_load(dir, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s: not a regular file", dir);
	assert_string_equal(err, want);

	unlink(link);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tokens_grammar),
		cmocka_unit_test(test_tokens_check_refuses),
		cmocka_unit_test(test_tokens_refusals),
		cmocka_unit_test(test_tokens_load_mode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
