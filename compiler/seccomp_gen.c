/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seccomp_gen.c - libseccomp turns the checked rules into BPF; we take its
 * program and put a fixed prelude in front.
 *
 * The pipeline is fixed, as minijail's is: a trial build of each rule that
 * might make libseccomp loop (in a child, see gen_trial()), init with the
 * default action, x86_64 only with a process kill for any other arch, the
 * binary-tree optimisation (so the per-syscall cost stays flat as the
 * allowlist grows), the rules in syscall order, export, the prelude and the
 * length check, and last the verification of the whole program against the
 * rules (compiler/seccomp_verify.c), because libseccomp 2.5.4 builds wrong
 * programs for some conditions of several alternatives.
 *
 * Why a prelude: the design requires a kill on any other arch and on x32
 * syscall numbers (nr | 0x40000000 with arch x86_64), and we want that
 * property to hold by construction, not by a reading of one libseccomp
 * release.  libseccomp 2.5.4 does send x32 numbers to the bad-arch action
 * (tests/unit/test_seccomp_gen.c checks the result either way), so today
 * the prelude repeats its test; it costs four instructions per syscall (two
 * loads and two jumps; its two returns run only to kill) and
 * stays correct if a libseccomp version or an attribute change makes the
 * x32 path fall to the default action instead.  It sits in front, so
 * libseccomp's relative jumps are untouched.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <seccomp.h>

#include "compiler/seccomp_gen.h"
#include "compiler/seccomp_verify.h"

#define X32_SYSCALL_BIT 0x40000000u
#define RET_KILL_PROCESS 0x80000000u
#define BPF_LD_W_ABS 0x20u
#define BPF_JEQ_K 0x15u
#define BPF_JGE_K 0x35u
#define BPF_RET_K 0x06u
#define SECCOMP_DATA_NR 0
#define SECCOMP_DATA_ARCH 4
/* A rule alone builds in well under a millisecond; this is for a loaded
 * machine and sanitizer builds. */
#define GEN_TRIAL_MS 3000

static const struct cpol_bpf prelude[] = {
	{ BPF_LD_W_ABS, 0, 0, SECCOMP_DATA_ARCH },
	{ BPF_JEQ_K, 1, 0, CPOL_ARCH_X86_64 },
	{ BPF_RET_K, 0, 0, RET_KILL_PROCESS },
	{ BPF_LD_W_ABS, 0, 0, SECCOMP_DATA_NR },
	{ BPF_JGE_K, 0, 1, X32_SYSCALL_BIT },
	{ BPF_RET_K, 0, 0, RET_KILL_PROCESS },
};
#define PRELUDE_LEN (sizeof(prelude) / sizeof(prelude[0]))

/* libseccomp writes the program to an fd; read it back from a memfd. */
static int export_bpf(scmp_filter_ctx ctx, uint8_t **buf, size_t *len, struct diags *d)
{
	off_t size;
	ssize_t got;
	int fd = -1, rc = -1, e;

	*buf = NULL;
	fd = memfd_create("cordon-bpf", MFD_CLOEXEC);
	if (fd < 0) {
		diag_at(d, DIAG_ERROR, NULL, 0, 0, "seccomp: memfd_create: %s", strerror(errno));
		goto out;
	}
	e = seccomp_export_bpf(ctx, fd);
	if (e != 0) {
		diag_at(d, DIAG_ERROR, NULL, 0, 0, "seccomp: libseccomp could not export the filter: %s",
			strerror(-e));
		goto out;
	}
	size = lseek(fd, 0, SEEK_END);
	if (size <= 0 || size % 8 != 0 || size > (off_t)(CPOL_MAX_SECCOMP_INSNS * 8) ||
	    lseek(fd, 0, SEEK_SET) != 0) {
		diag_at(d, DIAG_ERROR, NULL, 0, 0, "seccomp: the exported filter has an unusable size (%lld bytes)",
			(long long)size);
		goto out;
	}
	*buf = malloc((size_t)size);
	if (*buf == NULL)
		goto out;
	got = read(fd, *buf, (size_t)size);
	if (got != size) {
		diag_at(d, DIAG_ERROR, NULL, 0, 0, "seccomp: short read of the exported filter");
		goto out;
	}
	*len = (size_t)size;
	rc = 0;
out:
	if (rc != 0) {
		free(*buf);
		*buf = NULL;
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

/*
 * A libseccomp context for sp's default and attributes holding rules[0..n).
 * 0 and *out, or -1 after reporting (*out is then NULL).
 */
static int gen_ctx(const struct sc_policy *sp, const struct sc_rule *rules, size_t n, scmp_filter_ctx *out,
		   struct diags *d)
{
	scmp_filter_ctx ctx = NULL;
	size_t i, j;
	int rc = -1, e;

	*out = NULL;
	ctx = seccomp_init(sp->def_action);
	if (ctx == NULL) {
		diag_at(d, DIAG_ERROR, NULL, 0, 0, "seccomp: libseccomp could not start a filter");
		goto out;
	}
	/* The native arch of the compiler is the target only when it is
	 * x86_64; make that explicit rather than inherited from the host. */
	if (seccomp_arch_native() != SCMP_ARCH_X86_64) {
		seccomp_arch_add(ctx, SCMP_ARCH_X86_64);
		seccomp_arch_remove(ctx, SCMP_ARCH_NATIVE);
	}
	if ((e = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) != 0 ||
	    (e = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2)) != 0) {
		diag_at(d, DIAG_ERROR, NULL, 0, 0, "seccomp: libseccomp refused a filter attribute: %s", strerror(-e));
		goto out;
	}
	for (i = 0; i < n; i++) {
		const struct sc_rule *r = &rules[i];

		if (r->nconj == 0) {
			e = seccomp_rule_add_exact(ctx, r->action, r->nr, 0);
		} else {
			for (j = 0, e = 0; j < r->nconj && e == 0; j++)
				e = seccomp_rule_add_exact_array(ctx, r->action, r->nr, r->conj[j].n, r->conj[j].cmp);
		}
		if (e != 0) {
			diag_at(d, DIAG_ERROR, r->loc.file, r->loc.line, r->loc.col,
				"seccomp: libseccomp refused the rule for '%s': %s", r->name, strerror(-e));
			goto out;
		}
	}
	*out = ctx;
	ctx = NULL;
	rc = 0;
out:
	if (ctx != NULL)
		seccomp_release(ctx);
	return rc;
}

/* The trial child: build and export one rule, then end.  It never returns
 * into the caller, whose state it shares a copy of. */
static void gen_trial_child(const struct sc_policy *sp, const struct sc_rule *r)
{
	scmp_filter_ctx ctx = NULL;
	struct diags d;
	int fd, ok;

	diags_init(&d);
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	ok = fd >= 0 && gen_ctx(sp, r, 1, &ctx, &d) == 0 && seccomp_export_bpf(ctx, fd) == 0;
	_exit(ok ? 0 : 1);
}

/*
 * Whether libseccomp finishes building rule r, tried in a child that is
 * killed after GEN_TRIAL_MS.  Why a child: libseccomp 2.5.4 can loop
 * forever merging the alternatives of one syscall's rule, and the shapes
 * that do were characterised by experiment only (grammar/policy_check.c
 * refuses the one that loops most), so a rule that may still loop
 * (policy_rule_may_loop()) is tried where a loop costs a kill rather than
 * the compiler.  A syscall's rule is merged apart from the others, so the
 * rule alone behaves as it does in the whole filter.  0, or -1 after
 * reporting at the rule.
 */
static int gen_trial(const struct sc_policy *sp, const struct sc_rule *r, struct diags *d)
{
	struct pollfd pfd;
	struct timespec t0, t1;
	int fds[2] = { -1, -1 };
	pid_t pid = -1;
	long left = GEN_TRIAL_MS;
	int rc = -1, st = 0, got;

	if (pipe2(fds, O_CLOEXEC) != 0) {
		diag_at(d, DIAG_ERROR, NULL, 0, 0, "seccomp: pipe: %s", strerror(errno));
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		diag_at(d, DIAG_ERROR, NULL, 0, 0, "seccomp: fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		close(fds[0]);
		gen_trial_child(sp, r); /* keeps fds[1] open until it ends */
	}
	close(fds[1]);
	fds[1] = -1;
	/* The pipe's write end closes when the child ends, however it ends. */
	pfd.fd = fds[0];
	pfd.events = POLLIN;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		got = poll(&pfd, 1, (int)left);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		left = GEN_TRIAL_MS - ((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
	} while (got < 0 && errno == EINTR && left > 0);
	if (got <= 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		pid = -1;
		diag_at(d, DIAG_ERROR, r->loc.file, r->loc.line, r->loc.col,
			"libseccomp did not finish building the rule for '%s' in %d ms: libseccomp 2.5 can loop "
			"forever on a condition of several alternatives where one tests an argument with '!=', '<', "
			"'<=', '>' or '>=' before a later argument; rewrite it so that such a test is the last of "
			"its alternative", r->name, GEN_TRIAL_MS);
		goto out;
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		pid = -1;
		diag_at(d, DIAG_ERROR, r->loc.file, r->loc.line, r->loc.col,
			"seccomp: libseccomp failed building the rule for '%s' on its own", r->name);
		goto out;
	}
	pid = -1;
	rc = 0;
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	return rc;
}

int seccomp_gen(const struct sc_policy *sp, struct cpol_policy *p, struct diags *d)
{
	scmp_filter_ctx ctx = NULL;
	uint8_t *raw = NULL;
	size_t rawlen = 0, i, n;
	int rc = -1;

	for (i = 0; i < sp->nrules; i++)
		if (policy_rule_may_loop(&sp->rules[i]) && gen_trial(sp, &sp->rules[i], d) != 0)
			goto out;
	if (gen_ctx(sp, sp->rules, sp->nrules, &ctx, d) != 0)
		goto out;
	if (export_bpf(ctx, &raw, &rawlen, d) != 0)
		goto out;
	n = rawlen / 8 + PRELUDE_LEN;
	if (n > CPOL_MAX_SECCOMP_INSNS) {
		diag_at(d, DIAG_ERROR, NULL, 0, 0, "seccomp: the filter has %zu instructions; the kernel takes %u", n,
			CPOL_MAX_SECCOMP_INSNS);
		goto out;
	}
	p->seccomp = arena_calloc(&p->arena, n, sizeof(*p->seccomp));
	if (p->seccomp == NULL)
		goto out;
	memcpy(p->seccomp, prelude, sizeof(prelude));
	for (i = 0; i < rawlen / 8; i++) {
		const uint8_t *b = raw + 8 * i;
		struct cpol_bpf *ins = &p->seccomp[PRELUDE_LEN + i];

		/* struct sock_filter in host order; the host is x86_64. */
		ins->code = (uint16_t)(b[0] | b[1] << 8);
		ins->jt = b[2];
		ins->jf = b[3];
		ins->k = (uint32_t)b[4] | (uint32_t)b[5] << 8 | (uint32_t)b[6] << 16 | (uint32_t)b[7] << 24;
	}
	/* libseccomp 2.5.4 is known to build wrong programs for some
	 * multi-alternative conditions: nothing it made is kept unchecked. */
	if (seccomp_verify(sp, p->seccomp, (uint32_t)n, d) != 0) {
		p->seccomp = NULL; /* the arena still owns the memory */
		goto out;
	}
	p->nseccomp = (uint32_t)n;
	rc = 0;
out:
	free(raw);
	if (ctx != NULL)
		seccomp_release(ctx);
	return rc;
}
