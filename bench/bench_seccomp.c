/*
 * bench_seccomp.c - figures for the shipped seccomp profiles (make bench):
 * compile time, program size, and the per-syscall cost of the compiled
 * python-compute filter on a getppid loop, as a ratio to the same loop
 * without a filter, measured in the same run.
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

#define LOOPS 2000000

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

/* ns per getppid in a child, with the filter applied when prog != NULL. */
static double loop_cost(const struct cpol_policy *p)
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
		for (i = 0; i < LOOPS; i++)
			syscall(SYS_getppid);
		t = (now_ns() - t0) / LOOPS;
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

int main(void)
{
	static const char *const profiles[] = { "base", "python-compute" };
	const char *src = getenv("CORDON_SRC");
	char dir[512], text[256];
	struct cpol_policy p;
	double t0, per, base_ns, filt_ns;
	size_t i;
	int k, n = 200;

	snprintf(dir, sizeof(dir), "%s/policies", src ? src : ".");
	printf("bench_seccomp: shipped profiles\n");
	for (i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++) {
		struct bpf_sim_data d;
		uint32_t ret, steps = 0;

		/* base.policy has no default of its own: compile it the way a
		 * default-allow profile would use it. */
		snprintf(text, sizeof(text), "include \"%s.policy\";\n%s", profiles[i],
			 i == 0 ? "default allow;\n" : "");
		t0 = now_ns();
		for (k = 0; k < n; k++) {
			if (build(dir, text, &p) != 0)
				return 1;
			if (k + 1 < n)
				policy_free(&p);
		}
		per = (now_ns() - t0) / n / 1e6;
		memset(&d, 0, sizeof(d));
		d.nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, "getppid");
		d.arch = 0xC000003Eu;
		bpf_sim_exec(p.seccomp, p.nseccomp, &d, &ret, &steps);
		printf("  %-15s %4u instructions, compile %.2f ms, getppid runs %u instructions\n", profiles[i],
		       p.nseccomp, per, steps);
		if (i + 1 < sizeof(profiles) / sizeof(profiles[0]))
			policy_free(&p);
	}
	base_ns = loop_cost(NULL);
	filt_ns = loop_cost(&p);
	printf("  getppid loop (%d calls): no filter %.1f ns/call, python-compute %.1f ns/call = %.2fx "
	       "(+%.1f ns)\n",
	       LOOPS, base_ns, filt_ns, filt_ns / base_ns, filt_ns - base_ns);
	policy_free(&p);
	return 0;
}
