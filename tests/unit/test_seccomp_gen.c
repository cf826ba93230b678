/*
 * test_seccomp_gen.c - policies compiled to BPF and run through the BPF
 * interpreter (compiler/bpf_sim.c) over tables of (arch, syscall, args) ->
 * action: synthetic policies for each language feature, and the shipped
 * profiles.  The real kernel gets the same profiles in
 * tests/cli/test_seccomp_kernel.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <seccomp.h>

#include "common/bpf_check.h"
#include "compiler/bpf_sim.h"
#include "compiler/constants.h"
#include "compiler/seccomp_gen.h"
#include "grammar/policy_check.h"
#include "grammar/policy_parse.h"

#define ARCH_I386 0x40000003u
#define X32_BIT 0x40000000

struct row {
	uint32_t arch; /* 0: x86_64 */
	const char *sys;
	int nr_or; /* ORed into the number (x32 bit) */
	uint64_t args[6];
	const char *want; /* bpf_sim_action_name() text */
};

/* Compile the policy text (or file) to a filter in p. */
static void compile_policy(const char *text, const char *path, struct cpol_policy *p)
{
	struct policy_search search = { NULL, 0 };
	struct policy_srcs srcs = { NULL, 0, 0 };
	const char *dirs[1];
	struct pol_file pf;
	struct sc_policy sp;
	struct diags d;
	char tmp[] = "/tmp/cordon-sg-XXXXXX";
	int fd = -1;

	diags_init(&d);
	policy_init(p);
	memset(&pf, 0, sizeof(pf));
	{
		char *src = getenv("CORDON_SRC");
		static char pdir[512];

		snprintf(pdir, sizeof(pdir), "%s/policies", src ? src : ".");
		dirs[0] = pdir;
		search.dirs = dirs;
		search.ndirs = 1;
	}
	if (path == NULL) {
		fd = mkstemp(tmp);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
		close(fd);
		path = tmp;
	}
	if (policy_parse_file(path, &search, &p->arena, &srcs, &pf, &d) != 0 ||
	    policy_check(&pf, &p->arena, &sp, &d) != 0 || seccomp_gen(&sp, p, &d) != 0) {
		diags_print(&d, stderr);
		fail_msg("policy did not compile");
	}
	if (fd >= 0)
		unlink(tmp);
	policy_srcs_free(&srcs);
	diags_free(&d);
}

static void run_table(const struct cpol_policy *p, const struct row *rows, size_t n)
{
	uint32_t bad = 0;
	const char *why = NULL;
	size_t i;

	/* Everything we generate must pass the runtime's own verifier. */
	if (bpf_check(p->seccomp, p->nseccomp, &bad, &why) != 0)
		fail_msg("generated filter fails bpf_check at %u: %s", bad, why);
	for (i = 0; i < n; i++) {
		struct bpf_sim_data d;
		char buf[64];
		uint32_t ret;
		int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, rows[i].sys);

		assert_true(nr >= 0);
		memset(&d, 0, sizeof(d));
		d.nr = nr | rows[i].nr_or;
		d.arch = rows[i].arch ? rows[i].arch : CPOL_ARCH_X86_64;
		memcpy(d.args, rows[i].args, sizeof(d.args));
		assert_int_equal(bpf_sim_exec(p->seccomp, p->nseccomp, &d, &ret, NULL), 0);
		bpf_sim_action_name(ret, buf, sizeof(buf));
		if (strcmp(buf, rows[i].want) != 0)
			fail_msg("row %zu: %s(0x%llx, 0x%llx) arch 0x%x -> %s, want %s", i, rows[i].sys,
				 (unsigned long long)d.args[0], (unsigned long long)d.args[1], d.arch, buf, rows[i].want);
	}
}

static void test_language_features(void **state)
{
	struct cpol_policy p;
	const char *text = "default kill;\n"
			   "allow { read, write, kill }\n"
			   "errno(EPERM) { ptrace }\n"
			   "log { getpid }\n"
			   "trap { getppid }\n"
			   "allow socket(domain, type) { domain in [AF_UNIX, AF_INET] && type == SOCK_STREAM }\n"
			   "errno(EACCES) ioctl(fd, cmd) { cmd == TIOCSTI || cmd == TIOCLINUX }\n"
			   "allow clone(flags) { !(flags & (CLONE_NEWUSER | CLONE_NEWNS)) }\n"
			   "allow mmap(addr, len, prot) { (prot & PROT_EXEC) != PROT_EXEC && len <= 0x100000 }\n"
			   "allow personality(persona) { persona == 0 || persona == 0xffffffff }\n";
	const struct row rows[] = {
		{ 0, "read", 0, { 0 }, "allow" },
		{ 0, "kill", 0, { 0 }, "allow" },
		{ 0, "ptrace", 0, { 0 }, "errno(1)" },
		{ 0, "getpid", 0, { 0 }, "log" },
		{ 0, "getppid", 0, { 0 }, "trap" },
		{ 0, "getuid", 0, { 0 }, "kill_process" },
		{ 0, "socket", 0, { 1, 1 }, "allow" },
		{ 0, "socket", 0, { 2, 1 }, "allow" },
		{ 0, "socket", 0, { 2, 2 }, "kill_process" },
		{ 0, "socket", 0, { 38, 1 }, "kill_process" },
		{ 0, "socket", 0, { 16, 1 }, "kill_process" },
		{ 0, "ioctl", 0, { 0, 0x5412 }, "errno(13)" },
		{ 0, "ioctl", 0, { 0, 0x541C }, "errno(13)" },
		{ 0, "ioctl", 0, { 0, 0x5401 }, "kill_process" },
		{ 0, "clone", 0, { 0x11 }, "allow" },
		{ 0, "clone", 0, { 0x10000000 }, "kill_process" },
		{ 0, "clone", 0, { 0x20000 }, "kill_process" },
		{ 0, "mmap", 0, { 0, 4096, 3 }, "allow" },
		{ 0, "mmap", 0, { 0, 4096, 7 }, "kill_process" },
		{ 0, "mmap", 0, { 0, 0x200000, 3 }, "kill_process" },
		{ 0, "personality", 0, { 0xffffffff }, "allow" },
		{ 0, "personality", 0, { 0x0008 }, "kill_process" },
		/* The 64-bit comparison: a high word set is not the same value. */
		{ 0, "personality", 0, { 0x100000000ull }, "kill_process" },
		/* Another architecture, and x32 numbers, are killed outright. */
		{ ARCH_I386, "read", 0, { 0 }, "kill_process" },
		{ 0, "read", X32_BIT, { 0 }, "kill_process" },
		{ 0, "ptrace", X32_BIT, { 0 }, "kill_process" },
	};

	(void)state;
	compile_policy(text, NULL, &p);
	run_table(&p, rows, sizeof(rows) / sizeof(rows[0]));
	policy_free(&p);
}

/* A default of allow is where x32 would hurt: libseccomp's own program
 * sends x32 numbers to the default action. */
static void test_x32_with_default_allow(void **state)
{
	struct cpol_policy p;
	const struct row rows[] = {
		{ 0, "getpid", 0, { 0 }, "allow" },
		{ 0, "ptrace", 0, { 0 }, "errno(1)" },
		{ 0, "ptrace", X32_BIT, { 0 }, "kill_process" },
		{ 0, "getpid", X32_BIT, { 0 }, "kill_process" },
		{ ARCH_I386, "getpid", 0, { 0 }, "kill_process" },
	};

	(void)state;
	compile_policy("default allow;\nerrno(EPERM) { ptrace }\n", NULL, &p);
	run_table(&p, rows, sizeof(rows) / sizeof(rows[0]));
	policy_free(&p);
}

/* The shipped profiles: the refusals every profile must keep. */
static const struct row refusals[] = {
	{ 0, "ptrace", 0, { 0 }, NULL },
	{ 0, "mount", 0, { 0 }, NULL },
	{ 0, "umount2", 0, { 0 }, NULL },
	{ 0, "pivot_root", 0, { 0 }, NULL },
	{ 0, "chroot", 0, { 0 }, NULL },
	{ 0, "unshare", 0, { 0x10000000 }, NULL },
	{ 0, "setns", 0, { 0 }, NULL },
	{ 0, "bpf", 0, { 0 }, NULL },
	{ 0, "perf_event_open", 0, { 0 }, NULL },
	{ 0, "keyctl", 0, { 0 }, NULL },
	{ 0, "add_key", 0, { 0 }, NULL },
	{ 0, "request_key", 0, { 0 }, NULL },
	{ 0, "kexec_load", 0, { 0 }, NULL },
	{ 0, "kexec_file_load", 0, { 0 }, NULL },
	{ 0, "init_module", 0, { 0 }, NULL },
	{ 0, "finit_module", 0, { 0 }, NULL },
	{ 0, "delete_module", 0, { 0 }, NULL },
	{ 0, "open_by_handle_at", 0, { 0 }, NULL },
	{ 0, "name_to_handle_at", 0, { 0 }, NULL },
	{ 0, "userfaultfd", 0, { 0 }, NULL },
	{ 0, "io_uring_setup", 0, { 0 }, NULL },
	{ 0, "io_uring_enter", 0, { 0 }, NULL },
	{ 0, "io_uring_register", 0, { 0 }, NULL },
	{ 0, "acct", 0, { 0 }, NULL },
	{ 0, "swapon", 0, { 0 }, NULL },
	{ 0, "swapoff", 0, { 0 }, NULL },
	{ 0, "reboot", 0, { 0 }, NULL },
	{ 0, "settimeofday", 0, { 0 }, NULL },
	{ 0, "clock_settime", 0, { 0 }, NULL },
	{ 0, "syslog", 0, { 0 }, NULL },
	{ 0, "socket", 0, { 38 /* AF_ALG */ }, NULL },
	{ 0, "socket", 0, { 16 /* AF_NETLINK */ }, NULL },
	{ 0, "socket", 0, { 17 /* AF_PACKET */ }, NULL },
	{ 0, "ioctl", 0, { 0, 0x5412 /* TIOCSTI */ }, NULL },
	{ 0, "ioctl", 0, { 0, 0x541C /* TIOCLINUX */ }, NULL },
	{ 0, "clone", 0, { 0x10000000 /* CLONE_NEWUSER */ }, NULL },
	{ 0, "clone", 0, { 0x00020000 /* CLONE_NEWNS */ }, NULL },
	{ 0, "personality", 0, { 0x0400000 /* READ_IMPLIES_EXEC */ }, NULL },
	{ ARCH_I386, "getpid", 0, { 0 }, NULL },
	{ 0, "getpid", X32_BIT, { 0 }, NULL },
};

/* Refused means: not allowed, not merely logged.  base.policy leaves the
 * argument-dependent refusals (socket, ioctl, clone) to each profile, whose
 * single rule for those syscalls must carry them (see its header). */
static void expect_refusals(const struct cpol_policy *p, const char *profile, int with_args)
{
	size_t i;

	for (i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		const struct row *r = &refusals[i];

		if (!with_args && (strcmp(r->sys, "socket") == 0 || strcmp(r->sys, "ioctl") == 0 ||
				   strcmp(r->sys, "clone") == 0))
			continue;
		struct bpf_sim_data d;
		char buf[64];
		uint32_t ret;

		memset(&d, 0, sizeof(d));
		d.nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, r->sys) | r->nr_or;
		d.arch = r->arch ? r->arch : CPOL_ARCH_X86_64;
		memcpy(d.args, r->args, sizeof(d.args));
		assert_int_equal(bpf_sim_exec(p->seccomp, p->nseccomp, &d, &ret, NULL), 0);
		bpf_sim_action_name(ret, buf, sizeof(buf));
		if (strcmp(buf, "allow") == 0 || strcmp(buf, "log") == 0)
			fail_msg("%s: %s(0x%llx, 0x%llx) arch 0x%x is %s", profile, r->sys,
				 (unsigned long long)r->args[0], (unsigned long long)r->args[1], d.arch, buf);
	}
}

/* base.policy has no default of its own (profiles include it); under the
 * most permissive default its refusals must still all hold. */
static void test_shipped_base(void **state)
{
	struct cpol_policy p;

	(void)state;
	compile_policy("include \"base.policy\";\ndefault allow;\n", NULL, &p);
	expect_refusals(&p, "base", 0);
	policy_free(&p);
}

static void test_shipped_python_compute(void **state)
{
	struct cpol_policy p;
	char path[512];
	const char *src = getenv("CORDON_SRC");
	const struct row allowed[] = {
		{ 0, "read", 0, { 0 }, "allow" },
		{ 0, "write", 0, { 1 }, "allow" },
		{ 0, "mmap", 0, { 0 }, "allow" },
		{ 0, "futex", 0, { 0 }, "allow" },
		{ 0, "exit_group", 0, { 0 }, "allow" },
		{ 0, "socket", 0, { 1 /* AF_UNIX */, 1 }, "allow" },
		{ 0, "clone", 0, { 0x3d0f00 /* pthread_create's flags */ }, "allow" },
	};

	(void)state;
	snprintf(path, sizeof(path), "%s/policies/python-compute.policy", src ? src : ".");
	compile_policy(NULL, path, &p);
	expect_refusals(&p, "python-compute", 1);
	run_table(&p, allowed, sizeof(allowed) / sizeof(allowed[0]));
	policy_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_language_features),
		cmocka_unit_test(test_x32_with_default_allow),
		cmocka_unit_test(test_shipped_base),
		cmocka_unit_test(test_shipped_python_compute),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
