/*
 * seccomp_gen.c - libseccomp turns the checked rules into BPF; we take its
 * program and put a fixed prelude in front.
 *
 * The pipeline is fixed, as minijail's is: init with the default action,
 * x86_64 only with a process kill for any other arch, the binary-tree
 * optimisation (so the per-syscall cost stays flat as the allowlist grows),
 * the rules in syscall order, export, then the prelude and the length check.
 *
 * Why a prelude: the design requires a kill on any other arch and on x32
 * syscall numbers (nr | 0x40000000 with arch x86_64), and we want that
 * property to hold by construction, not by a reading of one libseccomp
 * release.  libseccomp 2.5.4 does send x32 numbers to the bad-arch action
 * (tests/unit/test_seccomp_gen.c checks the result either way), so today
 * the prelude repeats its test; it costs five instructions per syscall and
 * stays correct if a libseccomp version or an attribute change makes the
 * x32 path fall to the default action instead.  It sits in front, so
 * libseccomp's relative jumps are untouched.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <seccomp.h>

#include "compiler/seccomp_gen.h"

#define X32_SYSCALL_BIT 0x40000000u
#define RET_KILL_PROCESS 0x80000000u
#define BPF_LD_W_ABS 0x20u
#define BPF_JEQ_K 0x15u
#define BPF_JGE_K 0x35u
#define BPF_RET_K 0x06u
#define SECCOMP_DATA_NR 0
#define SECCOMP_DATA_ARCH 4

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

int seccomp_gen(const struct sc_policy *sp, struct cpol_policy *p, struct diags *d)
{
	scmp_filter_ctx ctx = NULL;
	uint8_t *raw = NULL;
	size_t rawlen = 0, i, j, n;
	int rc = -1, e;

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
	for (i = 0; i < sp->nrules; i++) {
		const struct sc_rule *r = &sp->rules[i];

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
	p->nseccomp = (uint32_t)n;
	rc = 0;
out:
	free(raw);
	if (ctx != NULL)
		seccomp_release(ctx);
	return rc;
}
