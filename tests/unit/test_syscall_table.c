/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_syscall_table.c - argument counts of x86_64 system calls.
 *
 * The coverage test asks libseccomp, at test time, for every x86_64 name
 * it resolves: a libseccomp upgrade that learns a new syscall fails here
 * until scripts/gen-syscall-table is re-run, instead of the compiler
 * reporting "unknown argument count" for a valid policy.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <seccomp.h>

#include "compiler/syscall_table.h"

#define NCASES(a) (sizeof(a) / sizeof((a)[0]))

/* libseccomp's x86_64 numbers are below 1000 (the highest is in the 450s
 * today; the x32 range starts at 0x40000000 and is another ABI). */
#define SCAN_MAX 1000

static void test_covers_libseccomp(void **state)
{
	int nr, seen = 0;

	(void)state;
	for (nr = 0; nr < SCAN_MAX; nr++) {
		char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);

		if (name == NULL)
			continue;
		seen++;
		if (syscall_nargs(name) < 0) {
			fail_msg("libseccomp knows x86_64 syscall %d '%s', the table does not; "
				 "re-run scripts/gen-syscall-table",
				 nr, name);
		}
		free(name);
	}
	/* Guards the loop itself: a libseccomp that resolved nothing would
	 * make the check above pass vacuously. */
	assert_true(seen > 300);
}

/* The other direction: no stale name the compiler would accept but
 * libseccomp could not turn into a number. */
static void test_no_unknown_names(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < syscall_table_count(); i++) {
		const char *name = syscall_table_name(i);

		if (seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, name) < 0)
			fail_msg("'%s' is in the table but libseccomp cannot resolve it", name);
	}
}

static void test_sorted_and_bounded(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < syscall_table_count(); i++) {
		const char *name = syscall_table_name(i);
		int n = syscall_nargs(name);
		unsigned a;

		if (i > 0 && strcmp(syscall_table_name(i - 1), name) >= 0)
			fail_msg("out of order: '%s' before '%s'", syscall_table_name(i - 1), name);
		if (n < 0 || n > 6)
			fail_msg("%s: %d arguments", name, n);
		for (a = 0; a < (unsigned)n; a++)
			if (syscall_arg_name(name, a) == NULL || syscall_arg_name(name, a)[0] == '\0')
				fail_msg("%s: argument %u has no name", name, a);
		assert_null(syscall_arg_name(name, (unsigned)n));
	}
	assert_null(syscall_table_name(syscall_table_count()));
}

static void test_known_counts(void **state)
{
	static const struct {
		const char *name;
		int nargs;
	} known[] = {
		{ "read", 3 },	      { "getpid", 0 },	     { "mmap", 6 },	    { "socket", 3 },
		{ "ioctl", 3 },	      { "clone", 5 },	     { "clone3", 2 },	    { "prctl", 5 },
		{ "personality", 1 }, { "exit_group", 1 },   { "rt_sigreturn", 0 }, { "futex", 6 },
		/* the man page and the kernel disagree; the kernel wins */
		{ "ppoll", 5 },	      { "pselect6", 6 },     { "epoll_pwait", 6 },  { "waitid", 5 },
		{ "preadv", 5 },      { "preadv2", 6 },	     { "faccessat", 3 },    { "fchmodat", 3 },
		{ "getpgrp", 0 },     { "eventfd", 1 },	     { "getcpu", 3 },	    { "rt_sigaction", 4 },
		{ "pread64", 4 },     { "newfstatat", 4 },   { "io_uring_enter", 6 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < NCASES(known); i++)
		if (syscall_nargs(known[i].name) != known[i].nargs)
			fail_msg("%s: %d arguments, want %d", known[i].name, syscall_nargs(known[i].name),
				 known[i].nargs);
}

static void test_arg_names(void **state)
{
	(void)state;
	assert_string_equal(syscall_arg_name("socket", 0), "domain");
	assert_string_equal(syscall_arg_name("ioctl", 1), "cmd");
	assert_string_equal(syscall_arg_name("clone", 0), "flags");
	assert_null(syscall_arg_name("read", 3));
	assert_null(syscall_arg_name("getpid", 0));
	assert_null(syscall_arg_name("nosuchcall", 0));
}

static void test_unknown(void **state)
{
	(void)state;
	assert_int_equal(syscall_nargs("nosuchcall"), -1);
	assert_int_equal(syscall_nargs(""), -1);
	assert_int_equal(syscall_nargs(NULL), -1);
	assert_int_equal(syscall_nargs("READ"), -1);
	/* i386 / multiplexer names libseccomp knows only as pseudo-syscalls on
	 * x86_64: not x86_64 calls, so not in the table. */
	assert_int_equal(syscall_nargs("socketcall"), -1);
	assert_int_equal(syscall_nargs("mmap2"), -1);
	assert_string_equal(syscall_suggest("ptrce"), "ptrace");
	assert_null(syscall_suggest("completely_unrelated"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_covers_libseccomp), cmocka_unit_test(test_no_unknown_names),
		cmocka_unit_test(test_sorted_and_bounded), cmocka_unit_test(test_known_counts),
		cmocka_unit_test(test_arg_names),	  cmocka_unit_test(test_unknown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
