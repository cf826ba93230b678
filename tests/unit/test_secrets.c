/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_secrets.c - the secrets file and a tool's environment
 * (runtime/supervise/secrets.c).
 *
 * Parts:
 *   - the file: values verbatim, comments and blank lines, the file before
 *     the supervisor's environment, the environment alone without a file;
 *   - refusals, each with its reason and never a value: a malformed line
 *     (its number), a repeated name (both lines), CRLF, a NUL, group or
 *     other access, a symlink, a directory, a fifo (no hang), another
 *     owner, an oversized file;
 *   - tool_env_build: fixed entries, extras, env_from in that order; a
 *     missing secret names the secret and no value; repeated names and bad
 *     extras refused;
 *   - secrets_scrub: each value the tool was given becomes "[secret NAME]",
 *     the longest match first; values it was not given and empty values
 *     stay; a text that is the end of a longer one loses the bytes where a
 *     value's end could hide; a limit never shows the start of a value.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/supervise/secrets.h"

#define SECRET_A "hunter2-alpha-value"
#define SECRET_B "s3cr3t-beta value with = and # inside "

struct fx {
	char dir[64];
	char path[128];
	char err[512];
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/cordon-secrets-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/secrets", f->dir);
	alarm(10); /* a fifo that blocks the open fails the test, not the run */
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	alarm(0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

static void write_file(const char *path, const char *text, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

#define WRITE(f, lit, mode) write_file((f)->path, lit, sizeof(lit) - 1, mode)

/* Loads f->path and expects a refusal whose message holds want and no
 * secret value. */
static void refused(struct fx *f, const char *want)
{
	struct secrets *s = NULL;

	f->err[0] = '\0';
	assert_int_equal(secrets_load(f->path, &s, f->err, sizeof(f->err)), -1);
	assert_null(s);
	if (strstr(f->err, want) == NULL)
		fail_msg("\"%s\" lacks \"%s\"", f->err, want);
	assert_null(strstr(f->err, "hunter2"));
	assert_null(strstr(f->err, "s3cr3t"));
}

/* ---- the file ------------------------------------------------------------- */

static void test_good_file(void **state)
{
	struct fx *f = *state;
	struct secrets *s = NULL;

	WRITE(f,
	      "# tokens for the mail tool\n"
	      "\n"
	      "SMTP_PASSWORD=" SECRET_A "\n"
	      "   \t\n"
	      "  # an indented comment\n"
	      "_B2=" SECRET_B "\n"
	      "EMPTY=\n"
	      "LAST=no newline at the end",
	      0600);
	setenv("CORDON_TEST_ONLY_ENV", "from-env", 1);
	setenv("SMTP_PASSWORD", "env-loses", 1);
	if (secrets_load(f->path, &s, f->err, sizeof(f->err)) != 0)
		fail_msg("secrets_load: %s", f->err);
	assert_string_equal(secrets_get(s, "SMTP_PASSWORD"), SECRET_A); /* the file first */
	assert_string_equal(secrets_get(s, "_B2"), SECRET_B);         /* verbatim, trailing space too */
	assert_string_equal(secrets_get(s, "EMPTY"), "");
	assert_string_equal(secrets_get(s, "LAST"), "no newline at the end");
	assert_string_equal(secrets_get(s, "CORDON_TEST_ONLY_ENV"), "from-env"); /* then the environment */
	assert_null(secrets_get(s, "CORDON_TEST_NOWHERE"));
	assert_null(secrets_get(s, "smtp_password")); /* names are exact */
	secrets_free(s);
	unsetenv("CORDON_TEST_ONLY_ENV");
	unsetenv("SMTP_PASSWORD");
}

static void test_no_file_means_environment(void **state)
{
	struct fx *f = *state;
	struct secrets *s = NULL;

	setenv("CORDON_TEST_ONLY_ENV", "from-env", 1);
	assert_int_equal(secrets_load(NULL, &s, f->err, sizeof(f->err)), 0);
	assert_non_null(s);
	assert_string_equal(secrets_get(s, "CORDON_TEST_ONLY_ENV"), "from-env");
	assert_null(secrets_get(s, "CORDON_TEST_NOWHERE"));
	assert_string_equal(secrets_get(NULL, "CORDON_TEST_ONLY_ENV"), "from-env");
	secrets_free(s);
	unsetenv("CORDON_TEST_ONLY_ENV");
}

/* Each bad file, the reason it must get (with its line number), and in
 * every one a value the message must not show. */
#define BAD(text, want) { text, sizeof(text) - 1, want }
static const struct {
	const char *text;
	size_t len;
	const char *want;
} bad_lines[] = {
	BAD("A=1\n# fine\nbad-name=" SECRET_A "\n", ":3: expected NAME=value"),
	BAD("A=1\n\n\n" SECRET_A "\n", ":4: expected NAME=value"),
	BAD("  A=" SECRET_A "\n", ":1: expected NAME=value"),
	BAD("A =" SECRET_A "\n", ":1: expected NAME=value"),
	BAD("9A=" SECRET_A "\n", ":1: expected NAME=value"),
	BAD("=" SECRET_A "\n", ":1: expected NAME=value"),
	BAD("export A=" SECRET_A "\n", ":1: expected NAME=value"),
	BAD("A=1\r\nB=" SECRET_A "\r\n", ":1: a carriage return"),
	BAD("A=1\nB=hunter2\0rest\n", ":2: a NUL byte"),
};
#undef BAD

static void test_malformed_lines(void **state)
{
	struct fx *f = *state;

	for (size_t i = 0; i < sizeof(bad_lines) / sizeof(bad_lines[0]); i++) {
		write_file(f->path, bad_lines[i].text, bad_lines[i].len, 0600);
		refused(f, bad_lines[i].want);
	}
}

static void test_duplicate_name(void **state)
{
	struct fx *f = *state;

	WRITE(f, "A=" SECRET_A "\nZ=1\nZ=2\n# x\nA=" SECRET_B "\n", 0600);
	refused(f, ":3: Z is set again (first on line 2)");
}

static void test_access_by_others_refused(void **state)
{
	struct fx *f = *state;
	static const mode_t bad[] = { 0640, 0604, 0620, 0602, 0644 };
	struct secrets *s = NULL;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[32];

		WRITE(f, "A=" SECRET_A "\n", bad[i]);
		snprintf(want, sizeof(want), "(mode %04o)", (unsigned)bad[i]);
		refused(f, want);
	}
	/* Owner-only modes are fine (the same file, so the check can fail). */
	WRITE(f, "A=" SECRET_A "\n", 0400);
	assert_int_equal(secrets_load(f->path, &s, f->err, sizeof(f->err)), 0);
	secrets_free(s);
}

static void test_symlink_refused(void **state)
{
	struct fx *f = *state;
	char real[160];

	snprintf(real, sizeof(real), "%s/real", f->dir);
	write_file(real, "A=" SECRET_A "\n", strlen("A=" SECRET_A "\n"), 0600);
	assert_int_equal(symlink(real, f->path), 0);
	refused(f, "is a symbolic link");
}

static void test_not_a_regular_file(void **state)
{
	struct fx *f = *state;

	assert_int_equal(mkdir(f->path, 0700), 0);
	refused(f, "not a regular file");
	assert_int_equal(rmdir(f->path), 0);
	assert_int_equal(mkfifo(f->path, 0600), 0);
	refused(f, "not a regular file");
}

static void test_other_owner_refused(void **state)
{
	struct fx *f = *state;

	if (geteuid() != 0)
		skip(); /* only root can give a file away */
	WRITE(f, "A=" SECRET_A "\n", 0600);
	assert_int_equal(chown(f->path, 1, 1), 0);
	refused(f, "owned by uid 1");
}

static void test_oversized_file_refused(void **state)
{
	struct fx *f = *state;
	size_t len = (1u << 20) + 1;
	char *big = malloc(len);

	assert_non_null(big);
	memset(big, '#', len);
	write_file(f->path, big, len, 0600);
	refused(f, "over the 1048576-byte limit");
	/* One byte less is a (long) comment. */
	write_file(f->path, big, len - 1, 0600);
	{
		struct secrets *s = NULL;

		assert_int_equal(secrets_load(f->path, &s, f->err, sizeof(f->err)), 0);
		secrets_free(s);
	}
	free(big);
}

/* ---- the environment ------------------------------------------------------ */

static void test_env_built_in_order(void **state)
{
	struct fx *f = *state;
	const char *names[] = { "SMTP_PASSWORD", "_B2" };
	const char *extra[] = { "CORDON_USER=alice", "CORDON_MESSAGE_ID=m-1", NULL };
	struct cpol_tool t = { .id = "mail.send", .env_from = { names, 2 } };
	struct secrets *s = NULL;
	char **env = NULL;

	WRITE(f, "SMTP_PASSWORD=" SECRET_A "\n_B2=" SECRET_B "\nUNUSED=x\n", 0600);
	assert_int_equal(secrets_load(f->path, &s, f->err, sizeof(f->err)), 0);
	if (tool_env_build(&t, s, extra, &env, f->err, sizeof(f->err)) != 0)
		fail_msg("tool_env_build: %s", f->err);
	assert_string_equal(env[0], "PATH=/usr/local/bin:/usr/bin:/bin");
	assert_string_equal(env[1], "LANG=C.UTF-8");
	assert_string_equal(env[2], "CORDON_USER=alice");
	assert_string_equal(env[3], "CORDON_MESSAGE_ID=m-1");
	assert_string_equal(env[4], "SMTP_PASSWORD=" SECRET_A);
	assert_string_equal(env[5], "_B2=" SECRET_B);
	assert_null(env[6]);
	tool_env_free(env);
	/* No extras, no env_from. */
	t.env_from.n = 0;
	assert_int_equal(tool_env_build(&t, s, NULL, &env, f->err, sizeof(f->err)), 0);
	assert_string_equal(env[1], "LANG=C.UTF-8");
	assert_null(env[2]);
	tool_env_free(env);
	secrets_free(s);
}

static void test_env_missing_secret(void **state)
{
	struct fx *f = *state;
	const char *names[] = { "SMTP_PASSWORD", "CORDON_TEST_ABSENT" };
	const char *extra[] = { "CORDON_USER=hunter2-in-extra", NULL };
	struct cpol_tool t = { .id = "mail.send", .env_from = { names, 2 } };
	struct secrets *s = NULL;
	char **env = (char **)1;

	unsetenv("CORDON_TEST_ABSENT");
	WRITE(f, "SMTP_PASSWORD=" SECRET_A "\n", 0600);
	assert_int_equal(secrets_load(f->path, &s, f->err, sizeof(f->err)), 0);
	assert_int_equal(tool_env_build(&t, s, extra, &env, f->err, sizeof(f->err)), -1);
	assert_null(env);
	assert_string_equal(f->err, "secret CORDON_TEST_ABSENT is not set");
	assert_null(strstr(f->err, "hunter2"));
	/* Set in the supervisor's environment, it is found there. */
	setenv("CORDON_TEST_ABSENT", "now-present", 1);
	assert_int_equal(tool_env_build(&t, s, extra, &env, f->err, sizeof(f->err)), 0);
	assert_string_equal(env[4], "CORDON_TEST_ABSENT=now-present");
	tool_env_free(env);
	unsetenv("CORDON_TEST_ABSENT");
	secrets_free(s);
}

/* The check before a run: each selected tool's names, first missing one
 * named with its tool, never a value; tools left out are not looked at. */
static void test_check_tools(void **state)
{
	struct fx *f = *state;
	const char *mail_names[] = { "SMTP_PASSWORD" }, *calc_names[] = { "CORDON_TEST_ABSENT" };
	struct cpol_tool tools[] = { { .id = "mail.send", .env_from = { mail_names, 1 } },
				     { .id = "calc.solve" },
				     { .id = "calc.check", .env_from = { calc_names, 1 } } };
	struct cpol_policy p = { .tools = tools, .ntools = 3 };
	uint32_t all[] = { 0, 1, 2 }, some[] = { 1, 0 };
	struct secrets *s = NULL;

	unsetenv("CORDON_TEST_ABSENT");
	WRITE(f, "SMTP_PASSWORD=" SECRET_A "\n", 0600);
	assert_int_equal(secrets_load(f->path, &s, f->err, sizeof(f->err)), 0);
	assert_int_equal(secrets_check_tools(&p, all, 3, s, f->err, sizeof(f->err)), -1);
	assert_string_equal(f->err, "tool calc.check needs the secret CORDON_TEST_ABSENT, which neither --secrets "
				    "FILE nor the environment sets");
	assert_int_equal(secrets_check_tools(&p, some, 2, s, f->err, sizeof(f->err)), 0);
	assert_int_equal(secrets_check_tools(&p, all, 0, NULL, f->err, sizeof(f->err)), 0);
	/* Without the file, the first tool's name is the one missing. */
	assert_int_equal(secrets_check_tools(&p, all, 3, NULL, f->err, sizeof(f->err)), -1);
	assert_non_null(strstr(f->err, "tool mail.send needs the secret SMTP_PASSWORD"));
	assert_null(strstr(f->err, SECRET_A));
	/* The environment counts. */
	setenv("CORDON_TEST_ABSENT", "now-present", 1);
	assert_int_equal(secrets_check_tools(&p, all, 3, s, f->err, sizeof(f->err)), 0);
	unsetenv("CORDON_TEST_ABSENT");
	secrets_free(s);
}

static void test_env_refusals(void **state)
{
	struct fx *f = *state;
	const char *path_again[] = { "PATH" };
	const char *bad_name[] = { "NOT-A-NAME" };
	const char *twice[] = { "A", "A" };
	const char *dup_extra[] = { "A=1", "A=2", NULL };
	const char *no_eq[] = { "JUSTTEXT", NULL };
	const char *shadow[] = { "LANG=C", NULL };
	struct cpol_tool t = { .id = "t.x" };
	struct secrets *s = NULL;
	char **env = NULL;

	(void)f;
	setenv("A", "a", 1);
	assert_int_equal(secrets_load(NULL, &s, f->err, sizeof(f->err)), 0);
	t.env_from = (struct cpol_strs){ path_again, 1 };
	assert_int_equal(tool_env_build(&t, s, NULL, &env, f->err, sizeof(f->err)), -1);
	assert_non_null(strstr(f->err, "PATH is already set"));
	t.env_from = (struct cpol_strs){ bad_name, 1 };
	assert_int_equal(tool_env_build(&t, s, NULL, &env, f->err, sizeof(f->err)), -1);
	assert_non_null(strstr(f->err, "not a valid environment name"));
	t.env_from = (struct cpol_strs){ twice, 2 };
	assert_int_equal(tool_env_build(&t, s, NULL, &env, f->err, sizeof(f->err)), -1);
	assert_non_null(strstr(f->err, "A is already set"));
	t.env_from = (struct cpol_strs){ NULL, 0 };
	assert_int_equal(tool_env_build(&t, s, dup_extra, &env, f->err, sizeof(f->err)), -1);
	assert_non_null(strstr(f->err, "A is given twice"));
	assert_int_equal(tool_env_build(&t, s, no_eq, &env, f->err, sizeof(f->err)), -1);
	assert_non_null(strstr(f->err, "entry 0 is not NAME=value"));
	assert_null(strstr(f->err, "JUSTTEXT"));
	assert_int_equal(tool_env_build(&t, s, shadow, &env, f->err, sizeof(f->err)), -1);
	assert_non_null(strstr(f->err, "LANG is given twice"));
	assert_null(env);
	unsetenv("A");
	secrets_free(s);
}

/* ---- scrubbing ------------------------------------------------------------- */

static void scrub(const struct cpol_tool *t, const struct secrets *s, const char *in, int head_cut, size_t limit,
		  const char *want, size_t want_cut)
{
	char *out = NULL;
	size_t len = 0, cut = 99;

	assert_int_equal(secrets_scrub(t, s, in, strlen(in), head_cut, limit, &out, &len, &cut), 0);
	assert_non_null(out);
	assert_int_equal(strlen(out), len);
	if (strcmp(out, want) != 0)
		fail_msg("scrubbed \"%s\", want \"%s\"", out, want);
	assert_int_equal(cut, want_cut);
	free(out);
}

static void test_scrub_replaces_given_values(void **state)
{
	struct fx *f = *state;
	const char *names[] = { "SMTP_PASSWORD", "_B2", "EMPTY", "SHORT" };
	struct cpol_tool t = { .id = "mail.send", .env_from = { names, 4 } };
	struct secrets *s = NULL;

	WRITE(f, "SMTP_PASSWORD=" SECRET_A "\n_B2=" SECRET_B "\nEMPTY=\nSHORT=hunter2\nUNUSED=refused\n", 0600);
	assert_int_equal(secrets_load(f->path, &s, f->err, sizeof(f->err)), 0);
	scrub(&t, s, "login " SECRET_A " refused", 0, SIZE_MAX, "login [secret SMTP_PASSWORD] refused", 0);
	/* twice, back to back, and another value; the undeclared UNUSED stays */
	scrub(&t, s, SECRET_A SECRET_A "|" SECRET_B "|refused", 0, SIZE_MAX,
	      "[secret SMTP_PASSWORD][secret SMTP_PASSWORD]|[secret _B2]|refused", 0);
	/* SHORT is a prefix of SMTP_PASSWORD's value: the longer match wins,
	 * and SHORT alone is still found */
	scrub(&t, s, "hunter2 and hunter2-alpha-valu", 0, SIZE_MAX, "[secret SHORT] and [secret SHORT]-alpha-valu", 0);
	scrub(&t, s, "", 0, SIZE_MAX, "", 0);
	scrub(&t, s, "nothing to hide", 0, SIZE_MAX, "nothing to hide", 0);
	secrets_free(s);
}

static void test_scrub_cut_edges(void **state)
{
	struct fx *f = *state;
	const char *names[] = { "SMTP_PASSWORD" };
	struct cpol_tool t = { .id = "mail.send", .env_from = { names, 1 } };
	struct secrets *s = NULL;
	const size_t vlen = sizeof(SECRET_A) - 1;

	WRITE(f, "SMTP_PASSWORD=" SECRET_A "\n", 0600);
	assert_int_equal(secrets_load(f->path, &s, f->err, sizeof(f->err)), 0);
	/* The end of a longer text that began inside the value: its first
	 * vlen - 1 bytes may be the value's end, and go. */
	scrub(&t, s, "alpha-value and the rest of the line", 1, SIZE_MAX,
	      &"alpha-value and the rest of the line"[vlen - 1], vlen - 1);
	scrub(&t, s, "short", 1, SIZE_MAX, "", 5);
	/* A limit stops the copy after whole pieces: a value across it is a
	 * marker or nothing, never its first bytes. */
	scrub(&t, s, "0123456789" SECRET_A "tail", 0, 12, "0123456789[secret SMTP_PASSWORD]", 0);
	scrub(&t, s, "0123456789" SECRET_A "tail", 0, 10, "0123456789", 0);
	secrets_free(s);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
	const struct CMUnitTest tests[] = {
		T(test_good_file),
		T(test_no_file_means_environment),
		T(test_malformed_lines),
		T(test_duplicate_name),
		T(test_access_by_others_refused),
		T(test_symlink_refused),
		T(test_not_a_regular_file),
		T(test_other_owner_refused),
		T(test_oversized_file_refused),
		T(test_env_built_in_order),
		T(test_env_missing_secret),
		T(test_check_tools),
		T(test_env_refusals),
		T(test_scrub_replaces_given_values),
		T(test_scrub_cut_edges),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
