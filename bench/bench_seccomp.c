/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_seccomp.c - figures for the shipped seccomp profiles (make bench):
 * compile time as a ratio to parsing the same text alone, program size, and
 * the per-syscall cost of the compiled python-compute filter on a getppid
 * loop, as a ratio to the same loop without a filter, measured in the same
 * run (and recorded, bench/figure.h).
 */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <seccomp.h>

#include "compiler/bpf_sim.h"
#include "compiler/seccomp_gen.h"
#include "grammar/policy_check.h"
#include "grammar/policy_parse.h"
#include "bench/figure.h"


static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int build(const char *dir, const char *text, struct cpol_policy *p)
{
	const char *dirs[1] = { dir };
	struct policy_search search = { dirs, 1 };
	struct policy_srcs srcs = { 0 };
	struct pol_file pf;
	struct sc_policy sp;
	struct diags d;
	int rc;

	diags_init(&d);
	policy_init(p);
	memset(&pf, 0, sizeof(pf));
	rc = policy_parse_mem("bench.policy", text, strlen(text), &search, &p->arena, &srcs, &pf, &d) == 0 &&
			     policy_check(&pf, &p->arena, &sp, &d) == 0 && seccomp_gen(&sp, p, &d) == 0
		     ? 0
		     : -1;
	if (rc != 0)
		diags_print(&d, stderr);
	policy_srcs_free(&srcs);
	diags_free(&d);
	return rc;
}

/* Milliseconds per parse of text alone (the front end's floor). */
static double parse_batch(const char *dir, const char *text, size_t n)
{
	const char *dirs[1] = { dir };
	struct policy_search search = { dirs, 1 };
	double t0 = now_ns();
	int rc = 0;

	for (size_t k = 0; k < n && rc == 0; k++) {
		struct policy_srcs srcs = { 0 };
		struct cpol_policy p;
		struct pol_file pf;
		struct diags d;

		diags_init(&d);
		policy_init(&p);
		memset(&pf, 0, sizeof(pf));
		rc = policy_parse_mem("bench.policy", text, strlen(text), &search, &p.arena, &srcs, &pf, &d);
		if (rc != 0)
			diags_print(&d, stderr);
		policy_srcs_free(&srcs);
		policy_free(&p);
		diags_free(&d);
	}
	return rc == 0 ? (now_ns() - t0) / (double)n / 1e6 : -1;
}

/* Milliseconds per compile (parse, check, BPF); p keeps the last. */
static double build_batch(const char *dir, const char *text, size_t n, struct cpol_policy *p)
{
	double t0 = now_ns();

	for (size_t k = 0; k < n; k++) {
		if (k > 0)
			policy_free(p);
		if (build(dir, text, p) != 0) {
			policy_free(p);
			return -1;
		}
	}
	return (now_ns() - t0) / (double)n / 1e6;
}

/* ns per getppid in a child, with the filter applied when p != NULL. */
static double loop_cost(const struct cpol_policy *p, uint32_t loops)
{
	int fds[2];
	double ns = -1;
	pid_t pid;

	if (pipe(fds) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		struct sock_filter *f = NULL;
		double t0, t;
		uint32_t i;

		if (p != NULL) {
			struct sock_fprog prog;

			f = calloc(p->nseccomp, sizeof(*f));
			for (i = 0; i < p->nseccomp; i++) {
				f[i].code = p->seccomp[i].code;
				f[i].jt = p->seccomp[i].jt;
				f[i].jf = p->seccomp[i].jf;
				f[i].k = p->seccomp[i].k;
			}
			prog.len = (unsigned short)p->nseccomp;
			prog.filter = f;
			if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
			    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
				_exit(1);
		}
		t0 = now_ns();
		for (i = 0; i < loops; i++)
			syscall(SYS_getppid);
		t = (now_ns() - t0) / loops;
		if (write(fds[1], &t, sizeof(t)) != sizeof(t))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (pid > 0 && read(fds[0], &ns, sizeof(ns)) != sizeof(ns))
		ns = -1;
	close(fds[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return ns;
}

#define NPROF 2

/*
 * Rounds: each compiles every profile and parses its text alone, then
 * runs the getppid loop without and with the filter, so an op and its
 * floor share the machine's moment; every figure is the median round.
 */
int main(void)
{
	static const char *const profiles[NPROF] = { "base", "python-compute" };
	static const char *const names[NPROF] = { "seccomp.compile.base", "seccomp.compile.python-compute" };
	const char *src = getenv("CORDON_SRC");
	char dir[512], text[NPROF][256];
	struct cpol_policy p[NPROF];
	size_t i, r, rounds = figure_runs(15, 5), n = figure_runs(10, 4);
	uint32_t loops = (uint32_t)figure_runs(100000, 30000);
	double *t = NULL, st[2 * NPROF + 2][3];
	int rc = 1;

	snprintf(dir, sizeof(dir), "%s/policies", src ? src : ".");
	for (i = 0; i < NPROF; i++) {
		policy_init(&p[i]);
		/* base.policy has no default of its own: compile it the way a
		 * default-allow profile would use it. */
		snprintf(text[i], sizeof(text[i]), "include \"%s.policy\";\n%s", profiles[i],
			 i == 0 ? "default allow;\n" : "");
	}
	/* t[series][round]: compile and parse of each profile, then the loop
	 * without a filter and under python-compute's. */
	if ((t = calloc((2 * NPROF + 2) * rounds, sizeof(*t))) == NULL)
		goto out;
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < NPROF; i++) {
			policy_free(&p[i]);
			if ((t[(2 * i) * rounds + r] = build_batch(dir, text[i], n, &p[i])) < 0 ||
			    (t[(2 * i + 1) * rounds + r] = parse_batch(dir, text[i], n)) < 0)
				goto out;
		}
		t[(2 * NPROF) * rounds + r] = loop_cost(NULL, loops);
		t[(2 * NPROF + 1) * rounds + r] = loop_cost(&p[NPROF - 1], loops);
		if (t[(2 * NPROF) * rounds + r] < 0 || t[(2 * NPROF + 1) * rounds + r] < 0) {
			fprintf(stderr, "bench_seccomp: the getppid loop could not run\n");
			goto out;
		}
	}
	for (i = 0; i < 2 * NPROF + 2; i++)
		if (figure_stats(t + i * rounds, rounds, st[i]) != 0)
			goto out;

	printf("bench_seccomp: shipped profiles, medians of %zu rounds\n", rounds);
	for (i = 0; i < NPROF; i++) {
		struct bpf_sim_data d;
		uint32_t ret, steps = 0;

		memset(&d, 0, sizeof(d));
		d.nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, "getppid");
		d.arch = 0xC000003Eu;
		bpf_sim_exec(p[i].seccomp, p[i].nseccomp, &d, &ret, &steps);
		printf("  %-15s %4u instructions, compile %.2f ms (= %.1fx its parse alone), getppid runs %u "
		       "instructions\n",
		       profiles[i], p[i].nseccomp, st[2 * i][0], st[2 * i][0] / st[2 * i + 1][0], steps);
	}
	printf("  getppid loop (%u calls a round): no filter %.1f ns/call, python-compute %.1f ns/call = %.2fx "
	       "(+%.1f ns)\n",
	       loops, st[2 * NPROF][0], st[2 * NPROF + 1][0], st[2 * NPROF + 1][0] / st[2 * NPROF][0],
	       st[2 * NPROF + 1][0] - st[2 * NPROF][0]);
	{
		struct figure f[NPROF + 1];

		for (i = 0; i < NPROF; i++)
			f[i] = (struct figure){ names[i], "ms", 0, t + 2 * i * rounds, rounds, "its parse alone",
						t + (2 * i + 1) * rounds, rounds };
		f[NPROF] = (struct figure){ "seccomp.getppid.python-compute", "ns", 0, t + (2 * NPROF + 1) * rounds,
					    rounds, "getppid, no filter", t + 2 * NPROF * rounds, rounds };
		if (figure_emit_all(f, NPROF + 1) != 0) {
			fprintf(stderr, "bench_seccomp: figures not recorded in %s\n", getenv("BENCH_FIGURES"));
			goto out;
		}
	}
	rc = 0;
out:
	for (i = 0; i < NPROF; i++)
		policy_free(&p[i]);
	free(t);
	return rc;
}
