/* SPDX-License-Identifier: Apache-2.0 */
/*
 * apply_filter.c - a test loader: run a program under a blob's seccomp
 * filter.
 *
 *   apply_filter BLOB -- PROG [ARGS...]
 *
 * Until the runtime launches sandboxes, this is how the tests put a
 * compiled filter in front of a real program.  It does what the runtime's
 * last step will do and nothing else (no namespaces, no Landlock):
 *
 *   1. map the blob and load it with blob_load(): hash, every field, and
 *      the seccomp program by bpf_check(), so a bad program is refused
 *      here with a named reason and never reaches the kernel;
 *   2. copy the program out and release the blob, while every syscall is
 *      still allowed;
 *   3. core dumps off (probes die of SIGSYS on purpose), then
 *      PR_SET_NO_NEW_PRIVS, which seccomp requires of an unprivileged
 *      caller and the runtime sets anyway;
 *   4. seccomp(SECCOMP_SET_MODE_FILTER) as the last act before execve, so
 *      the filter judges PROG from its first instruction (and execve
 *      itself must be allowed by the filter).
 *
 * Exit status: PROG's, or 126 when the blob or the filter is refused, 127
 * when PROG cannot be executed, 2 for a usage error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/filter.h>
#include <linux/seccomp.h>

#include "common/bpf_check.h"
#include "cordon/blob.h"

/* Steps 1 and 2: the blob's filter as the kernel's struct, or NULL with a
 * message on stderr.  The caller frees the result. */
static struct sock_filter *apply_load(const char *path, uint32_t *n)
{
	struct blob_map m = { NULL, 0 };
	struct blob_error err;
	struct cpol_policy p;
	struct sock_filter *f = NULL;
	uint32_t bad = 0;
	const char *why = NULL;

	policy_init(&p);
	memset(&err, 0, sizeof(err));
	if (blob_map_file(path, &m, &err) < 0 ||
	    blob_load(m.data, m.len, CPOL_ARCH_X86_64, &p, &err) < 0) {
		fprintf(stderr, "apply_filter: %s: %s (field %s, offset %llu)\n", path, err.msg,
			err.field[0] ? err.field : "-", (unsigned long long)err.offset);
		goto out;
	}
	if (p.nseccomp == 0) {
		/* No filter is not "allow everything": refuse to run. */
		fprintf(stderr, "apply_filter: %s: the blob has no seccomp program\n", path);
		goto out;
	}
	/* blob_load() ran the same check; repeating it keeps this loader
	 * honest if the loader's rules ever change. */
	if (bpf_check(p.seccomp, p.nseccomp, &bad, &why) != BPF_CHECK_OK) {
		fprintf(stderr, "apply_filter: %s: seccomp instruction %u: %s\n", path, bad, why);
		goto out;
	}
	f = calloc(p.nseccomp, sizeof(*f));
	if (f == NULL) {
		fprintf(stderr, "apply_filter: out of memory\n");
		goto out;
	}
	for (uint32_t i = 0; i < p.nseccomp; i++)
		f[i] = (struct sock_filter){ p.seccomp[i].code, p.seccomp[i].jt, p.seccomp[i].jf,
					     p.seccomp[i].k };
	*n = p.nseccomp;
out:
	policy_free(&p);
	blob_unmap(&m);
	return f;
}

/* Steps 3 and 4.  -1 with errno set on failure. */
static int apply_install(const struct sock_filter *f, uint32_t n)
{
	struct sock_fprog prog = { (unsigned short)n, (struct sock_filter *)f };
	struct rlimit nocore = { 0, 0 };

	if (setrlimit(RLIMIT_CORE, &nocore) < 0)
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

int main(int argc, char **argv)
{
	struct sock_filter *f;
	uint32_t n = 0;

	if (argc < 4 || strcmp(argv[2], "--") != 0) {
		fprintf(stderr, "usage: apply_filter BLOB -- PROG [ARGS...]\n");
		return 2;
	}
	f = apply_load(argv[1], &n);
	if (f == NULL)
		return 126;
	if (apply_install(f, n) < 0) {
		fprintf(stderr, "apply_filter: installing the filter: %s\n", strerror(errno));
		free(f);
		return 126;
	}
	/* From here on every syscall goes through the filter: nothing but
	 * execve, and the error report if that fails.  The exit is the raw
	 * call: a normal return would run atexit work (and, in a sanitizer
	 * build, leak checks) that the filter may refuse, and spin. */
	execvp(argv[3], &argv[3]);
	fprintf(stderr, "apply_filter: %s: %s\n", argv[3], strerror(errno));
	syscall(SYS_exit_group, 127);
	return 127;
}
