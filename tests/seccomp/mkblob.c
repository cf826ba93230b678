/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mkblob.c - test-only: a blob whose seccomp filter is made by libseccomp
 * directly, without the policy language.
 *
 *   mkblob PROFILE OUT.cpol
 *
 * It tests the harness (apply_filter, attack) independently of cordonc's
 * generator, so a fault in one cannot hide behind the other.  The filters
 * are built as the generator must build them: x86_64 the only arch, a bad
 * arch (and x32, which libseccomp 2.5 sends to the bad-arch action) kills
 * the process, the binary-tree optimisation.  The rest of the policy is
 * the least a blob may hold.
 *
 * Profiles:
 *   deny        default allow, base.policy-like refusals; deny rules on
 *               32-bit arguments compare the low word only
 *   deny-naive  the same with plain 64-bit == on those arguments: the
 *               CVE-2019-10063 shape, kept to show the probes catch it
 *   allow       default errno(EPERM), only what `attack` needs to run
 *   bad-jump    a hand-written program with a jump past its end: the
 *               loader must refuse the blob, naming the instruction
 *   none        no seccomp program at all: the loader accepts the blob,
 *               apply_filter must refuse to run anything under it
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <seccomp.h>

#include "cordon/blob.h"

#define NS_FLAGS                                                                                   \
	((uint64_t)(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID |     \
		    CLONE_NEWNET | CLONE_NEWCGROUP))

static struct scmp_arg_cmp mk_cmp(unsigned arg, enum scmp_compare op, uint64_t a, uint64_t b)
{
	return (struct scmp_arg_cmp){ .arg = arg, .op = op, .datum_a = a, .datum_b = b };
}

/* Add one rule; a name libseccomp does not know is an error, not a
 * silently missing refusal. */
static int mk_rule(scmp_filter_ctx ctx, uint32_t action, const char *name, unsigned argc,
		   const struct scmp_arg_cmp *cmp)
{
	int nr = seccomp_syscall_resolve_name(name);
	int r;

	if (nr == __NR_SCMP_ERROR) {
		fprintf(stderr, "mkblob: unknown syscall %s\n", name);
		return -1;
	}
	r = seccomp_rule_add_array(ctx, action, nr, argc, cmp);
	if (r < 0)
		fprintf(stderr, "mkblob: rule for %s: %s\n", name, strerror(-r));
	return r < 0 ? -1 : 0;
}

static int mk_rules(scmp_filter_ctx ctx, uint32_t action, const char *const *names)
{
	for (; *names; names++)
		if (mk_rule(ctx, action, *names, 0, NULL) < 0)
			return -1;
	return 0;
}

static int mk_deny(scmp_filter_ctx ctx, int naive)
{
	static const char *const eperm[] = {
		"mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "bpf",
		"perf_event_open", "keyctl", "add_key", "request_key", "kexec_load",
		"kexec_file_load", "init_module", "finit_module", "delete_module",
		"open_by_handle_at", "name_to_handle_at", "userfaultfd", "io_uring_setup",
		"io_uring_enter", "io_uring_register", "acct", "swapon", "swapoff", "reboot",
		"settimeofday", "clock_settime", "syslog", NULL,
	};
	static const int domains[] = { AF_ALG, AF_NETLINK, AF_PACKET };
	static const unsigned long cmds[] = { TIOCSTI, TIOCLINUX };
	struct scmp_arg_cmp c[1];

	if (mk_rule(ctx, SCMP_ACT_KILL_PROCESS, "ptrace", 0, NULL) < 0 ||
	    mk_rules(ctx, SCMP_ACT_ERRNO(EPERM), eperm) < 0)
		return -1;
	/* clone3's flags sit behind a pointer seccomp cannot read: ENOSYS
	 * makes glibc fall back to clone, whose flags it can. */
	if (mk_rule(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL) < 0)
		return -1;
	/* One rule per flag: "any of these bits" is an OR of masked tests. */
	for (uint64_t bit = 1; bit; bit <<= 1) {
		if (!(NS_FLAGS & bit))
			continue;
		c[0] = mk_cmp(0, SCMP_CMP_MASKED_EQ, bit, bit);
		if (mk_rule(ctx, SCMP_ACT_ERRNO(EPERM), "clone", 1, c) < 0)
			return -1;
	}
	for (size_t i = 0; i < sizeof(domains) / sizeof(domains[0]); i++) {
		c[0] = naive ? mk_cmp(0, SCMP_CMP_EQ, (uint64_t)domains[i], 0)
			     : mk_cmp(0, SCMP_CMP_MASKED_EQ, 0xffffffffu, (uint64_t)domains[i]);
		if (mk_rule(ctx, SCMP_ACT_ERRNO(EPERM), "socket", 1, c) < 0)
			return -1;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		c[0] = naive ? mk_cmp(1, SCMP_CMP_EQ, cmds[i], 0)
			     : mk_cmp(1, SCMP_CMP_MASKED_EQ, 0xffffffffu, cmds[i]);
		if (mk_rule(ctx, SCMP_ACT_ERRNO(EPERM), "ioctl", 1, c) < 0)
			return -1;
	}
	/* personality: PER_LINUX (0) only.  libseccomp refuses two tests of
	 * one argument in a rule, so the query (0xffffffff) is refused too;
	 * a fixture can afford that, a shipped profile would list it. */
	c[0] = mk_cmp(0, SCMP_CMP_NE, 0, 0);
	return mk_rule(ctx, SCMP_ACT_ERRNO(EPERM), "personality", 1, c);
}

static int mk_allow(scmp_filter_ctx ctx)
{
	/* What a dynamically linked `attack` needs: the loader, stdio,
	 * fork, wait, exit. */
	static const char *const allow[] = {
		"execve", "brk", "arch_prctl", "mmap", "munmap", "mprotect", "openat", "close",
		"read", "pread64", "write", "newfstatat", "fstat", "access", "set_tid_address",
		"set_robust_list", "rseq", "prlimit64", "getrandom", "rt_sigaction",
		"rt_sigprocmask", "rt_sigreturn", "wait4", "getpid", "gettid", "exit", "exit_group",
		NULL,
	};
	struct scmp_arg_cmp c[1];

	if (mk_rules(ctx, SCMP_ACT_ALLOW, allow) < 0 ||
	    mk_rule(ctx, SCMP_ACT_KILL_PROCESS, "ptrace", 0, NULL) < 0)
		return -1;
	c[0] = mk_cmp(0, SCMP_CMP_MASKED_EQ, NS_FLAGS, 0);
	if (mk_rule(ctx, SCMP_ACT_ALLOW, "clone", 1, c) < 0)
		return -1;
	c[0] = mk_cmp(1, SCMP_CMP_MASKED_EQ, 0xffffffffu, TCGETS);
	return mk_rule(ctx, SCMP_ACT_ALLOW, "ioctl", 1, c);
}

/* The profile's filter as BPF into p->seccomp (owned by p's arena). */
static int mk_filter(const char *profile, struct cpol_policy *p)
{
	scmp_filter_ctx ctx = NULL;
	uint8_t *buf = NULL;
	int fd = -1, ret = -1, r;
	off_t len;
	uint32_t def;

	if (strcmp(profile, "none") == 0)
		return 0;
	if (strcmp(profile, "bad-jump") == 0) {
		/* blob_emit() checks nothing it need not: the loader must. */
		static const struct cpol_bpf bad[] = {
			{ 0x20, 0, 0, 0 },          /* ld [0] */
			{ 0x15, 5, 0, 0 },          /* jeq #0, +5 (past the end), +0 */
			{ 0x06, 0, 0, 0x7fff0000 }, /* ret ALLOW */
		};

		p->nseccomp = 3;
		p->seccomp = arena_calloc(&p->arena, 3, sizeof(*p->seccomp));
		if (p->seccomp == NULL)
			return -1;
		memcpy(p->seccomp, bad, sizeof(bad));
		return 0;
	}
	if (strcmp(profile, "deny") == 0 || strcmp(profile, "deny-naive") == 0) {
		def = SCMP_ACT_ALLOW;
	} else if (strcmp(profile, "allow") == 0) {
		def = SCMP_ACT_ERRNO(EPERM);
	} else {
		fprintf(stderr, "mkblob: unknown profile %s (deny, deny-naive, allow, bad-jump, none)\n",
			profile);
		goto out;
	}
	ctx = seccomp_init(def);
	if (ctx == NULL || seccomp_arch_native() != SCMP_ARCH_X86_64 ||
	    seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) < 0 ||
	    seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2) < 0) {
		fprintf(stderr, "mkblob: cannot set up an x86_64 libseccomp filter\n");
		goto out;
	}
	r = def == SCMP_ACT_ALLOW ? mk_deny(ctx, strcmp(profile, "deny-naive") == 0) : mk_allow(ctx);
	if (r < 0)
		goto out;
	fd = memfd_create("mkblob", MFD_CLOEXEC);
	if (fd < 0 || seccomp_export_bpf(ctx, fd) < 0 || (len = lseek(fd, 0, SEEK_END)) <= 0 ||
	    len % 8 != 0 || len / 8 > CPOL_MAX_SECCOMP_INSNS) {
		fprintf(stderr, "mkblob: exporting the filter failed\n");
		goto out;
	}
	buf = malloc((size_t)len);
	p->nseccomp = (uint32_t)(len / 8);
	p->seccomp = arena_calloc(&p->arena, p->nseccomp, sizeof(*p->seccomp));
	if (buf == NULL || p->seccomp == NULL || pread(fd, buf, (size_t)len, 0) != len) {
		fprintf(stderr, "mkblob: reading the filter back failed\n");
		goto out;
	}
	/* sock_filter records, little-endian: the blob's own encoding. */
	for (uint32_t i = 0; i < p->nseccomp; i++) {
		const uint8_t *b = buf + 8u * i;

		p->seccomp[i] = (struct cpol_bpf){
			(uint16_t)(b[0] | b[1] << 8), b[2], b[3],
			(uint32_t)b[4] | (uint32_t)b[5] << 8 | (uint32_t)b[6] << 16 | (uint32_t)b[7] << 24,
		};
	}
	ret = 0;
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	if (ctx)
		seccomp_release(ctx);
	return ret;
}

int main(int argc, char **argv)
{
	struct cpol_policy p;
	struct blob_error err;
	uint8_t *blob = NULL;
	size_t len = 0;
	FILE *f = NULL;
	int ret = 1;

	if (argc != 3) {
		fprintf(stderr, "usage: mkblob deny|deny-naive|allow|bad-jump|none OUT.cpol\n");
		return 2;
	}
	policy_init(&p);
	p.arch = CPOL_ARCH_X86_64;
	/* The least a loadable policy holds: nonzero limits, empty tables. */
	p.limits = (struct cpol_limits){ 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, CPOL_MODE_LOCAL, 1, 0 };
	if (mk_filter(argv[1], &p) < 0)
		goto out;
	memset(&err, 0, sizeof(err));
	if (blob_emit(&p, &blob, &len, &err) < 0) {
		fprintf(stderr, "mkblob: %s (%s)\n", err.msg, err.field);
		goto out;
	}
	f = fopen(argv[2], "wb");
	if (f == NULL || fwrite(blob, 1, len, f) != len) {
		fprintf(stderr, "mkblob: %s: %s\n", argv[2], strerror(errno));
		goto out;
	}
	ret = 0;
out:
	if (f && fclose(f) != 0 && ret == 0) {
		fprintf(stderr, "mkblob: %s: %s\n", argv[2], strerror(errno));
		ret = 1;
	}
	free(blob);
	policy_free(&p);
	return ret;
}
