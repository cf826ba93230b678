/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_constants.c - the policy language's named constants.
 *
 * The table in compiler/constants.inc is generated from the system
 * headers; this test includes the same headers (constants_cases.inc, from
 * the same generator run) and compares every entry with the macro or
 * enumerator C itself defines.  A value typed or edited by hand, a stale
 * table after a header upgrade, or an entry the list does not cover all
 * fail here.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tests/unit/constants_cases.inc"

#include "compiler/constants.h"

struct const_case {
	const char *name;
	uint64_t value;
};

#define NCASES(a) (sizeof(a) / sizeof((a)[0]))

/* Every name the generator put in the table, with the value the C compiler
 * computes for it from the headers right here. */
static const struct const_case header_cases[] = {
#define X(name) { #name, (uint64_t)(name) },
	CONSTANTS_CASES(X)
#undef X
};

static void test_every_entry_matches_header(void **state)
{
	size_t i;

	(void)state;
	/* Same length and, both being sorted, same names in the same order:
	 * the list covers the table exactly, no entry goes unchecked. */
	assert_int_equal(const_count(), NCASES(header_cases));
	for (i = 0; i < NCASES(header_cases); i++) {
		uint64_t v = 0;

		assert_string_equal(const_name(i), header_cases[i].name);
		if (const_lookup(header_cases[i].name, &v) != 0)
			fail_msg("%s: not found", header_cases[i].name);
		if (v != header_cases[i].value)
			fail_msg("%s: table 0x%llx, headers 0x%llx", header_cases[i].name, (unsigned long long)v,
				 (unsigned long long)header_cases[i].value);
	}
}

static void test_sorted_unique(void **state)
{
	size_t i;

	(void)state;
	for (i = 1; i < const_count(); i++)
		if (strcmp(const_name(i - 1), const_name(i)) >= 0)
			fail_msg("out of order: '%s' before '%s'", const_name(i - 1), const_name(i));
	assert_null(const_name(const_count()));
}

/* The names the shipped profiles and the issue rely on, spelled out so a
 * family dropped by the generator's filters is noticed by name. */
static void test_required_names(void **state)
{
	static const char *const need[] = {
		"AF_UNIX",     "AF_INET",	    "AF_INET6",	     "AF_ALG",		"AF_NETLINK",
		"AF_PACKET",   "AF_VSOCK",	    "SOCK_STREAM",   "SOCK_NONBLOCK",	"SOCK_CLOEXEC",
		"CLONE_NEWNS", "CLONE_NEWUSER",	    "CLONE_NEWPID",  "CLONE_NEWNET",	"CLONE_NEWIPC",
		"CLONE_NEWUTS", "CLONE_NEWCGROUP",  "CLONE_NEWTIME", "CLONE_THREAD",	"EPERM",
		"ENOSYS",      "EACCES",	    "ENOTSUP",	     "EWOULDBLOCK",	"EHWPOISON",
		"TIOCSTI",     "TIOCLINUX",	    "TIOCSETD",	     "TIOCCONS",	"FIONREAD",
		"FIONBIO",     "FIOCLEX",	    "TCGETS",	     "TIOCGWINSZ",	"TCSANOW",
		"PR_SET_NO_NEW_PRIVS", "PR_SET_NAME", "PR_CAPBSET_READ", "PER_LINUX",	"PER_LINUX32",
		"ADDR_NO_RANDOMIZE", "UNAME26",	    "READ_IMPLIES_EXEC", "PER_MASK",	"O_RDONLY",
		"O_CLOEXEC",   "O_TMPFILE",	    "PROT_EXEC",     "MAP_ANONYMOUS",	"MAP_32BIT",
		"F_GETFL",     "F_SETFL",	    "F_DUPFD_CLOEXEC", "SOL_SOCKET",	"SOL_TCP",
		"IPPROTO_TCP", "IPPROTO_UDP",	    "NETLINK_ROUTE", "NETLINK_AUDIT",
	};
	size_t i;

	(void)state;
	for (i = 0; i < NCASES(need); i++) {
		uint64_t v;

		if (const_lookup(need[i], &v) != 0)
			fail_msg("%s missing from the table", need[i]);
	}
}

/* Names the generator leaves out on purpose (see EXCLUDE in
 * scripts/gen-constants): a rule naming them must fail to compile rather
 * than test a misleading value. */
static void test_excluded_names(void **state)
{
	static const char *const out[] = {
		"MAP_FAILED", "O_LARGEFILE", "CLONE_ARGS_SIZE_VER0", "TCGETS2",
		"ECHO",	      /* termios flag, not an errno */
		"F_OK",	      /* access() mode, not a fcntl command */
		"F_LOCK",     /* lockf() command, not a fcntl command */
		"TCP_NODELAY", /* not a family we take */
	};
	size_t i;

	(void)state;
	for (i = 0; i < NCASES(out); i++) {
		uint64_t v = 7;

		if (const_lookup(out[i], &v) != -1)
			fail_msg("%s should not be a constant", out[i]);
		assert_int_equal(v, 7);
	}
}

static void test_values(void **state)
{
	static const struct const_case known[] = {
		{ "AF_UNIX", 1 },	    { "AF_INET6", 10 },	       { "AF_NETLINK", 16 },
		{ "AF_PACKET", 17 },	    { "AF_ALG", 38 },	       { "CLONE_NEWUSER", 0x10000000 },
		{ "CLONE_NEWNS", 0x20000 }, { "EPERM", 1 },	       { "ENOSYS", 38 },
		{ "TIOCSTI", 0x5412 },	    { "TIOCLINUX", 0x541c },   { "PER_LINUX32", 8 },
		{ "PR_SET_PTRACER_ANY", UINT64_MAX },		       { "TIOCGPTN", 0x80045430 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < NCASES(known); i++) {
		uint64_t v = 0;

		assert_int_equal(const_lookup(known[i].name, &v), 0);
		if (v != known[i].value)
			fail_msg("%s: 0x%llx", known[i].name, (unsigned long long)v);
	}
}

static void test_unknown(void **state)
{
	uint64_t v = 42;

	(void)state;
	assert_int_equal(const_lookup("AF_NOSUCH", &v), -1);
	assert_int_equal(const_lookup("", &v), -1);
	assert_int_equal(const_lookup(NULL, &v), -1);
	assert_int_equal(const_lookup("af_unix", &v), -1); /* case-sensitive, as in C */
	assert_int_equal(v, 42);
}

static void test_suggest(void **state)
{
	(void)state;
	assert_string_equal(const_suggest("af_alg"), "AF_ALG");
	assert_string_equal(const_suggest("CLONE_NEWUSR"), "CLONE_NEWUSER");
	assert_string_equal(const_suggest("AF_INTE6"), "AF_INET6");
	assert_string_equal(const_suggest("TIOCSTII"), "TIOCSTI");
	assert_null(const_suggest("SOMETHING_ELSE_ENTIRELY"));
	assert_null(const_suggest(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_entry_matches_header),
		cmocka_unit_test(test_sorted_unique),
		cmocka_unit_test(test_required_names),
		cmocka_unit_test(test_excluded_names),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_suggest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
