/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_cgroup.c - the execution's cgroups (runtime/launch/cgroup.h).
 *
 * Two kinds of test.  Fake trees: cgroup v2 (and v1) laid out as plain
 * files in a temporary directory, described by a fake mountinfo and
 * /proc/self/cgroup, so the choice of place and every file written can be
 * checked on any host.  Real cgroups: as root on a host whose memory and
 * pids controllers are cgroup v1 (our development machines), a child is
 * OOM-killed at 64 MiB, a fork loop stops at 16 pids, and destroy leaves
 * nothing; elsewhere those tests skip and say why.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <inttypes.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "runtime/launch/cgroup.h"
#include "tests/unit/unit_fds.h"
#include "tests/unit/unit_read.h"

#define MIB (1024ull * 1024ull)
#define NOBODY 65534

/* ---- helpers ------------------------------------------------------------ */

static void pathf(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* snprintf that fails the test rather than cut a path short. */
static void pathf(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len)
		fail_msg("path too long for %zu bytes: %s...", len, out);
}

static void put(const char *dir, const char *file, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	pathf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "w");
	if (f == NULL)
		fail_msg("%s: %s", path, strerror(errno));
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* Contents of dir/file ("" for file NULL: dir is the path), trailing
 * newline dropped; fails the test if it cannot be read. */
static void get(const char *dir, const char *file, char *buf, size_t len)
{
	char path[PATH_MAX];
	size_t n;
	FILE *f;

	pathf(path, sizeof(path), "%s%s%s", dir, file ? "/" : "", file ? file : "");
	f = fopen(path, "r");
	if (f == NULL)
		fail_msg("%s: %s", path, strerror(errno));
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
}

static int exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static void mkdirs(const char *base, const char *rel)
{
	char path[PATH_MAX];
	char *p;

	pathf(path, sizeof(path), "%s/%s", base, rel);
	for (p = path + strlen(base) + 1; *p != '\0'; p++) {
		if (*p == '/') {
			*p = '\0';
			if (mkdir(path, 0755) != 0 && errno != EEXIST)
				fail_msg("mkdir %s: %s", path, strerror(errno));
			*p = '/';
		}
	}
	if (mkdir(path, 0755) != 0 && errno != EEXIST)
		fail_msg("mkdir %s: %s", path, strerror(errno));
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		return rmdir(path);
	return unlink(path);
}

/* A fake host: tmp/cg2 is a cgroup2 mount, `own` our cgroup in it (e.g.
 * "/svc"), with the given controllers, subtree_control and procs. */
struct fake {
	char tmp[PATH_MAX];
	char mnt[PATH_MAX];
	char own[PATH_MAX];
	char mountinfo[PATH_MAX];
	char cgroup[PATH_MAX];
};

static void fake_make(struct fake *fk, const char *own, const char *controllers, const char *subtree,
		      const char *procs)
{
	char line[PATH_MAX * 2];

	memset(fk, 0, sizeof(*fk));
	strcpy(fk->tmp, "/tmp/cordon-test-cg-XXXXXX");
	assert_non_null(mkdtemp(fk->tmp));
	assert_int_equal(chmod(fk->tmp, 0755), 0);
	pathf(fk->mnt, sizeof(fk->mnt), "%s/cg2", fk->tmp);
	mkdirs(fk->tmp, "cg2");
	pathf(fk->own, sizeof(fk->own), "%s%s", fk->mnt, own);
	mkdirs(fk->mnt, own + 1);
	put(fk->own, "cgroup.controllers", controllers);
	put(fk->own, "cgroup.subtree_control", subtree);
	put(fk->own, "cgroup.procs", procs);
	put(fk->own, "cgroup.type", "domain\n");
	pathf(fk->mountinfo, sizeof(fk->mountinfo), "%s/mountinfo", fk->tmp);
	pathf(fk->cgroup, sizeof(fk->cgroup), "%s/cgroup", fk->tmp);
	pathf(line, sizeof(line),
		 "22 1 0:20 / /proc rw - proc proc rw\n"
		 "41 31 0:38 / %s rw,nosuid - cgroup2 cgroup2 rw\n", fk->mnt);
	put(fk->tmp, "mountinfo", line);
	pathf(line, sizeof(line), "0::%s\n", own);
	put(fk->tmp, "cgroup", line);
}

static void fake_free(struct fake *fk)
{
	nftw(fk->tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void fake_detect(const struct fake *fk, struct cg_host *h)
{
	char err[512] = "";

	if (cgroup_detect(h, fk->mountinfo, fk->cgroup, err, sizeof(err)) != 0)
		fail_msg("detect: %s", err);
	h->plain_files = 1;
}

static const struct cg_limits lim_64m_16 = { 64 * MIB, 16, 0, 0 };

/* cgroup_create that must succeed. */
static void create_ok(struct cg_run *cg, const struct cg_host *h, const char *name, const struct cg_limits *lim)
{
	char err[512] = "";

	if (cgroup_create(cg, h, name, lim, err, sizeof(err)) != 0)
		fail_msg("create %s: %s", name, err);
}

/* cgroup_destroy that must succeed, remove dir, forget the run, and do
 * nothing the second time. */
static void destroy_ok(struct cg_run *cg, const char *dir)
{
	char err[512] = "", keep[PATH_MAX];

	pathf(keep, sizeof(keep), "%s", dir);
	if (cgroup_destroy(cg, err, sizeof(err)) != 0)
		fail_msg("destroy: %s", err);
	assert_false(exists(keep));
	assert_int_equal(cg->mem_kind, CG_NONE);
	assert_int_equal(cg->pids_kind, CG_NONE);
	assert_int_equal(cgroup_destroy(cg, err, sizeof(err)), 0);
}

/* ---- no cgroups at all --------------------------------------------------- */

static void test_kind_names_and_none_run(void **state)
{
	struct cg_run cg;
	struct cg_usage u;
	char err[256] = "";

	(void)state;
	assert_string_equal(cgroup_kind_name(CG_NONE), "none");
	assert_string_equal(cgroup_kind_name(CG_V1), "cgroup-v1");
	assert_string_equal(cgroup_kind_name(CG_V2), "cgroup-v2");
	assert_string_equal(cgroup_kind_name((enum cg_kind)7), "none");

	memset(&cg, 0, sizeof(cg));
	assert_int_equal(cgroup_attach(&cg, getpid(), err, sizeof(err)), 0);
	assert_int_equal(cgroup_usage(&cg, &u, err, sizeof(err)), 0);
	assert_int_equal(u.mem_peak, 0);
	assert_int_equal(cgroup_destroy(&cg, err, sizeof(err)), 0);
	assert_int_equal(cgroup_destroy(&cg, err, sizeof(err)), 0);
}

/* A host without /proc/self/cgroup (no cgroups in the kernel) is not an
 * error, and cgroup_create then makes nothing. */
static void test_detect_no_cgroups(void **state)
{
	struct cg_host h;
	struct cg_run cg;
	char err[256] = "";

	(void)state;
	assert_int_equal(cgroup_detect(&h, "/nonexistent/mountinfo", "/nonexistent/cgroup", err, sizeof(err)), 0);
	assert_string_equal(h.v2.dir, "");
	assert_string_equal(h.v1_memory.dir, "");
	assert_int_equal(cgroup_create(&cg, &h, "cordon-none", &lim_64m_16, err, sizeof(err)), 0);
	assert_int_equal(cg.mem_kind, CG_NONE);
	assert_int_equal(cg.pids_kind, CG_NONE);
	assert_non_null(strstr(cg.note, "memory: no cgroup v2 holds us"));
	assert_non_null(strstr(cg.note, "no cgroup v1 pids hierarchy holds us"));
}

/* ---- detection from mountinfo and /proc/self/cgroup ----------------------- */

/* v1 paths are our /proc/self/cgroup path below the mount's root, mount
 * points are unescaped, a mount whose root does not hold us is ignored, and
 * a path outside our cgroup namespace is refused. */
static void test_detect_v1_paths(void **state)
{
	struct fake fk;
	struct cg_host h;
	char want[PATH_MAX * 2], text[PATH_MAX * 3];

	(void)state;
	fake_make(&fk, "/x", "", "", "");
	pathf(text, sizeof(text),
		 "35 31 0:32 /other %s/wrong rw - cgroup cgroup rw,memory\n"
		 "36 31 0:32 /process_api %s/mem\\040ory rw,relatime - cgroup cgroup rw,memory\n"
		 "39 31 0:36 / %s/pids rw shared:5 - cgroup cgroup rw,pids\n"
		 "32 31 0:29 / %s/cpu rw - cgroup cgroup rw,cpu,cpuacct\n",
		 fk.tmp, fk.tmp, fk.tmp, fk.tmp);
	put(fk.tmp, "mountinfo", text);
	put(fk.tmp, "cgroup", "9:name=systemd:/\n8:pids:/a/b\n4:memory:/process_api/abc\n1:cpu,cpuacct:/../up\n"
			      "0::/\n");
	fake_detect(&fk, &h);

	pathf(want, sizeof(want), "%s/mem ory/abc", fk.tmp);
	assert_string_equal(h.v1_memory.dir, want);
	assert_string_equal(h.v1_memory.rel, "/process_api/abc");
	pathf(want, sizeof(want), "%s/pids/a/b", fk.tmp);
	assert_string_equal(h.v1_pids.dir, want);
	/* No cgroup2 mount in this mountinfo: v2 is absent. */
	assert_string_equal(h.v2.dir, "");
	assert_int_equal(h.v2_memory, 0);

	/* Our memory cgroup outside the only memory mount's root. */
	put(fk.tmp, "cgroup", "4:memory:/elsewhere\n0::/\n");
	fake_detect(&fk, &h);
	assert_string_equal(h.v1_memory.dir, "");

	/* "/.." means outside our cgroup namespace: no place for us. */
	put(fk.tmp, "cgroup", "4:memory:/process_api/../../x\n0::/\n");
	fake_detect(&fk, &h);
	assert_string_equal(h.v1_memory.rel, "");
	assert_string_equal(h.v1_memory.dir, "");
	fake_free(&fk);
}

/* ---- cgroup v2 on a fake tree -------------------------------------------- */

/* Our own cgroup already passes memory and pids down: the execution's
 * cgroup is its child, and every limit file holds its value. */
static void test_fake_v2_own_cgroup(void **state)
{
	struct fake fk;
	struct cg_host h;
	struct cg_run cg;
	struct cg_usage u;
	char err[512] = "", buf[256], want[PATH_MAX * 2];

	(void)state;
	fake_make(&fk, "/svc", "cpu io memory pids\n", "memory pids\n", "");
	fake_detect(&fk, &h);
	assert_string_equal(h.v2.dir, fk.own);
	assert_string_equal(h.v2.rel, "/svc");
	assert_true(h.v2_memory);
	assert_true(h.v2_pids);

	create_ok(&cg, &h, "cordon-e1", &lim_64m_16);
	assert_int_equal(cg.mem_kind, CG_V2);
	assert_int_equal(cg.pids_kind, CG_V2);
	pathf(want, sizeof(want), "%s/cordon-e1", fk.own);
	assert_string_equal(cg.mem_dir, want);
	assert_string_equal(cg.pids_dir, want);
	assert_string_equal(cg.mem_rel, "/svc/cordon-e1");
	assert_string_equal(cg.note, "");
	get(want, "memory.max", buf, sizeof(buf));
	assert_string_equal(buf, "67108864");
	get(want, "memory.swap.max", buf, sizeof(buf));
	assert_string_equal(buf, "0");
	get(want, "memory.oom.group", buf, sizeof(buf));
	assert_string_equal(buf, "1");
	get(want, "pids.max", buf, sizeof(buf));
	assert_string_equal(buf, "16");
	/* Nothing was enabled: it already was. */
	get(fk.own, "cgroup.subtree_control", buf, sizeof(buf));
	assert_string_equal(buf, "memory pids");

	/* One directory for both kinds: attach writes the pid once. */
	assert_int_equal(cgroup_attach(&cg, 4242, err, sizeof(err)), 0);
	get(want, "cgroup.procs", buf, sizeof(buf));
	assert_string_equal(buf, "4242");

	/* CPU time from the same directory: no cgroup of its own. */
	cgroup_cpu_account(&cg, &h, "cordon-e1");
	assert_int_equal(cg.cpu_kind, CG_V2);
	assert_string_equal(cg.cpu_dir, want);
	put(want, "memory.peak", "5001216\n");
	put(want, "memory.events", "low 0\nhigh 0\nmax 7\noom 1\noom_kill 1\noom_group_kill 1\n");
	put(want, "pids.events", "max 3\n");
	put(want, "cpu.stat", "usage_usec 5712345\nuser_usec 5000000\nsystem_usec 712345\n");
	assert_int_equal(cgroup_usage(&cg, &u, err, sizeof(err)), 0);
	assert_int_equal(u.mem_peak, 5001216);
	assert_true(u.mem_limit_hit);
	assert_true(u.oom_killed);
	assert_true(u.pids_max_hit);
	assert_int_equal(u.pids_max_events, 3);
	assert_true(u.have_cpu);
	assert_int_equal(u.cpu_usec, 5712345);
	put(want, "memory.events", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n");
	put(want, "pids.events", "max 0\n");
	assert_int_equal(cgroup_usage(&cg, &u, err, sizeof(err)), 0);
	assert_false(u.oom_killed);
	assert_false(u.mem_limit_hit);
	assert_false(u.pids_max_hit);
	put(want, "memory.peak", "lots\n");
	assert_int_equal(cgroup_usage(&cg, &u, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "memory.peak: not a number"));

	put(want, "cgroup.procs", "");
	destroy_ok(&cg, want);
	assert_true(exists(fk.own));
	fake_free(&fk);
}

/* Our cgroup is empty and does not yet pass the controllers down: they
 * are enabled in its subtree_control and it becomes the parent. */
static void test_fake_v2_enable_in_empty_own(void **state)
{
	struct fake fk;
	struct cg_host h;
	struct cg_run cg;
	char buf[256], want[PATH_MAX * 2];

	(void)state;
	fake_make(&fk, "/svc", "memory pids\n", "", "");
	fake_detect(&fk, &h);
	create_ok(&cg, &h, "cordon-e2", &lim_64m_16);
	assert_int_equal(cg.mem_kind, CG_V2);
	pathf(want, sizeof(want), "%s/cordon-e2", fk.own);
	assert_string_equal(cg.mem_dir, want);
	get(fk.own, "cgroup.subtree_control", buf, sizeof(buf));
	assert_string_equal(buf, "+memory +pids");
	destroy_ok(&cg, want);
	fake_free(&fk);
}

/* Our cgroup holds processes ("no internal processes"): it is left alone
 * and the execution's cgroup goes under a "cordon" cgroup beside it. */
static void test_fake_v2_busy_own_uses_sibling(void **state)
{
	struct fake fk;
	struct cg_host h;
	struct cg_run cg;
	char err[512] = "", buf[256], want[PATH_MAX * 2], parent[PATH_MAX * 2];

	(void)state;
	fake_make(&fk, "/svc/app", "memory pids\n", "", "1234\n");
	fake_detect(&fk, &h);
	create_ok(&cg, &h, "cordon-e3", &lim_64m_16);
	assert_int_equal(cg.mem_kind, CG_V2);
	assert_int_equal(cg.pids_kind, CG_V2);
	pathf(parent, sizeof(parent), "%s/svc/cordon", fk.mnt);
	pathf(want, sizeof(want), "%s/cordon-e3", parent);
	assert_string_equal(cg.mem_dir, want);
	assert_string_equal(cg.mem_rel, "/svc/cordon/cordon-e3");
	get(parent, "cgroup.subtree_control", buf, sizeof(buf));
	assert_string_equal(buf, "+memory +pids");
	get(fk.own, "cgroup.subtree_control", buf, sizeof(buf));
	assert_string_equal(buf, "");
	get(want, "memory.max", buf, sizeof(buf));
	assert_string_equal(buf, "67108864");

	/* A second execution shares the "cordon" parent. */
	{
		struct cg_run cg2;

		if (cgroup_create(&cg2, &h, "cordon-e4", &lim_64m_16, err, sizeof(err)) != 0)
			fail_msg("create 2: %s", err);
		assert_non_null(strstr(cg2.mem_dir, "/svc/cordon/cordon-e4"));
		assert_int_equal(cgroup_destroy(&cg2, err, sizeof(err)), 0);
	}
	destroy_ok(&cg, want);
	assert_true(exists(parent)); /* shared, kept */
	fake_free(&fk);
}

/* Our cgroup is the top of what we see (a container's cgroup namespace)
 * and holds processes: v2 cannot be used, and the note says so. */
static void test_fake_v2_busy_top_is_none(void **state)
{
	struct fake fk;
	struct cg_host h;
	struct cg_run cg;
	char err[512] = "", buf[256], path[PATH_MAX * 2];

	(void)state;
	fake_make(&fk, "/", "memory pids\n", "", "1\n");
	fake_detect(&fk, &h);
	assert_string_equal(h.v2.dir, fk.mnt);
	assert_int_equal(cgroup_create(&cg, &h, "cordon-e5", &lim_64m_16, err, sizeof(err)), 0);
	assert_int_equal(cg.mem_kind, CG_NONE);
	assert_int_equal(cg.pids_kind, CG_NONE);
	assert_non_null(strstr(cg.note, "has no parent we can see"));

	/* The real root cgroup (no cgroup.type) is exempt from the rule:
	 * controllers are enabled there, processes and all. */
	pathf(path, sizeof(path), "%s/cgroup.type", fk.own);
	assert_int_equal(unlink(path), 0);
	create_ok(&cg, &h, "cordon-e5", &lim_64m_16);
	assert_int_equal(cg.mem_kind, CG_V2);
	assert_string_equal(cg.mem_rel, "/cordon-e5");
	get(fk.own, "cgroup.subtree_control", buf, sizeof(buf));
	assert_string_equal(buf, "+memory +pids");
	pathf(path, sizeof(path), "%s/cordon-e5", fk.mnt);
	destroy_ok(&cg, path);
	fake_free(&fk);
}

/* A fake host whose v2 cgroup /svc offers memory only, and whose pids
 * controller is a v1 hierarchy at tmp/pids where we sit at the root. */
static void fake_v2_memory_v1_pids(struct fake *fk, struct cg_host *h)
{
	char text[PATH_MAX * 3];

	fake_make(fk, "/svc", "memory\n", "memory\n", "");
	mkdirs(fk->tmp, "pids");
	pathf(text, sizeof(text),
	      "41 31 0:38 / %s rw - cgroup2 cgroup2 rw\n39 31 0:36 / %s/pids rw - cgroup cgroup rw,pids\n", fk->mnt,
	      fk->tmp);
	put(fk->tmp, "mountinfo", text);
	put(fk->tmp, "cgroup", "8:pids:/\n0::/svc\n");
	fake_detect(fk, h);
}

/* Memory and pids are decided apart: v2 offers memory only, the pids
 * cgroup is v1; a limit of 0 makes no cgroup of its kind. */
static void test_fake_v2_memory_v1_pids(void **state)
{
	struct fake fk;
	struct cg_host h;
	struct cg_run cg;
	struct cg_limits only_pids = { 0, 16, 0, 0 };
	char err[512] = "", buf[256], want[PATH_MAX * 2];

	(void)state;
	fake_v2_memory_v1_pids(&fk, &h);
	assert_true(h.v2_memory);
	assert_false(h.v2_pids);

	create_ok(&cg, &h, "cordon-e6", &lim_64m_16);
	assert_int_equal(cg.mem_kind, CG_V2);
	assert_int_equal(cg.pids_kind, CG_V1);
	pathf(want, sizeof(want), "%s/pids/cordon-e6", fk.tmp);
	assert_string_equal(cg.pids_dir, want);
	assert_string_equal(cg.pids_rel, "/cordon-e6");
	get(want, "pids.max", buf, sizeof(buf));
	assert_string_equal(buf, "16");
	assert_non_null(strstr(cg.note, "pids: cgroup v2 does not offer pids"));

	/* Two directories: attach writes the pid into each. */
	assert_int_equal(cgroup_attach(&cg, 4243, err, sizeof(err)), 0);
	get(want, "cgroup.procs", buf, sizeof(buf));
	assert_string_equal(buf, "4243");
	get(cg.mem_dir, "cgroup.procs", buf, sizeof(buf));
	assert_string_equal(buf, "4243");
	put(want, "cgroup.procs", "");
	put(cg.mem_dir, "cgroup.procs", "");
	destroy_ok(&cg, want);

	create_ok(&cg, &h, "cordon-e7", &only_pids);
	assert_int_equal(cg.mem_kind, CG_NONE);
	assert_int_equal(cg.pids_kind, CG_V1);
	pathf(want, sizeof(want), "%s/cordon-e7", fk.own);
	assert_false(exists(want));
	assert_int_equal(cgroup_destroy(&cg, err, sizeof(err)), 0);
	fake_free(&fk);
}

/* The CPU quota (issue 14), v2: the cpu controller is enabled with the
 * others, cpu.max holds "quota period" in the one v2 cgroup, the
 * throttle counts come from its cpu.stat, and the clone into that cgroup
 * is the whole attach.  Without cpu in cgroup.controllers and no v1 cpu
 * hierarchy the quota is CG_NONE, and the note says why. */
static void test_fake_v2_cpu_quota(void **state)
{
	struct fake fk;
	struct cg_host h;
	struct cg_run cg;
	struct cg_usage u;
	const struct cg_limits lim = { 64 * MIB, 16, 50000, 100000 };
	int none[CG_PROCS_FDS] = { -1, -1, -1 };
	char err[512] = "", buf[256], want[PATH_MAX * 2];

	(void)state;
	fake_make(&fk, "/svc", "cpu io memory pids\n", "memory pids\n", "");
	fake_detect(&fk, &h);
	assert_true(h.v2_cpu);
	create_ok(&cg, &h, "cordon-q1", &lim);
	pathf(want, sizeof(want), "%s/cordon-q1", fk.own);
	assert_int_equal(cg.quota_kind, CG_V2);
	assert_string_equal(cg.quota_dir, want);
	assert_string_equal(cg.mem_dir, want);
	get(fk.own, "cgroup.subtree_control", buf, sizeof(buf));
	assert_string_equal(buf, "+memory +pids +cpu");
	get(want, "cpu.max", buf, sizeof(buf));
	assert_string_equal(buf, "50000 100000");
	assert_true(cgroup_fast_complete(&cg, none, 7));
	assert_false(cgroup_fast_complete(&cg, none, -1));
	/* One directory: attach writes the pid once, CPU time is read there. */
	assert_int_equal(cgroup_attach(&cg, 4250, err, sizeof(err)), 0);
	get(want, "cgroup.procs", buf, sizeof(buf));
	assert_string_equal(buf, "4250");
	cgroup_cpu_account(&cg, &h, "cordon-q1");
	assert_string_equal(cg.cpu_dir, want);
	put(want, "cpu.stat",
	    "usage_usec 1500000\nuser_usec 1400000\nsystem_usec 100000\nnr_periods 30\nnr_throttled 12\n"
	    "throttled_usec 400000\n");
	assert_int_equal(cgroup_usage(&cg, &u, err, sizeof(err)), 0);
	assert_true(u.have_throttle);
	assert_int_equal(u.cpu_periods, 30);
	assert_int_equal(u.cpu_throttled, 12);
	assert_int_equal(u.cpu_throttled_usec, 400000);
	assert_int_equal(u.cpu_usec, 1500000);
	put(want, "cgroup.procs", "");
	destroy_ok(&cg, want);
	assert_int_equal(cg.quota_kind, CG_NONE);
	fake_free(&fk);

	fake_make(&fk, "/svc", "io memory pids\n", "memory pids\n", "");
	fake_detect(&fk, &h);
	assert_false(h.v2_cpu);
	create_ok(&cg, &h, "cordon-q2", &lim);
	assert_int_equal(cg.quota_kind, CG_NONE);
	assert_int_equal(cg.mem_kind, CG_V2);
	assert_non_null(strstr(cg.note, "cpu quota: cgroup v2 does not offer cpu"));
	assert_non_null(strstr(cg.note, "cpu: no cgroup v1 cpu hierarchy holds us"));
	put(cg.mem_dir, "cgroup.procs", "");
	pathf(want, sizeof(want), "%s", cg.mem_dir);
	destroy_ok(&cg, want);
	fake_free(&fk);
}

/* The CPU quota, v1: the cgroup goes in the hierarchy bound to "cpu" (not
 * one bound to "cpuacct" alone), the period is written before the quota,
 * the executor joins through a third tasks fd, cpu.stat's throttled_time
 * (ns) is given in us, and destroy removes the directory. */
static void test_fake_v1_cpu_quota(void **state)
{
	struct fake fk;
	struct cg_host h;
	struct cg_run cg;
	struct cg_usage u;
	const struct cg_limits lim = { 64 * MIB, 0, 25000, 100000 };
	int fds[CG_PROCS_FDS] = { -1, -1, -1 };
	char err[512] = "", buf[256], want[PATH_MAX * 2], text[PATH_MAX * 4];

	(void)state;
	fake_make(&fk, "/svc", "memory\n", "memory\n", "");
	mkdirs(fk.tmp, "cpuacct");
	mkdirs(fk.tmp, "cpu");
	pathf(text, sizeof(text),
	      "41 31 0:38 / %s rw - cgroup2 cgroup2 rw\n32 31 0:29 / %s/cpuacct rw - cgroup cgroup rw,cpuacct\n"
	      "31 31 0:28 / %s/cpu rw - cgroup cgroup rw,cpu,cpuacct\n",
	      fk.mnt, fk.tmp, fk.tmp);
	put(fk.tmp, "mountinfo", text);
	put(fk.tmp, "cgroup", "3:cpuacct:/\n2:cpu,cpuacct:/\n0::/svc\n");
	fake_detect(&fk, &h);
	pathf(want, sizeof(want), "%s/cpu", fk.tmp);
	assert_string_equal(h.v1_cpu.dir, want);

	create_ok(&cg, &h, "cordon-q3", &lim);
	assert_int_equal(cg.mem_kind, CG_V2);
	assert_int_equal(cg.quota_kind, CG_V1);
	pathf(want, sizeof(want), "%s/cpu/cordon-q3", fk.tmp);
	assert_string_equal(cg.quota_dir, want);
	assert_string_equal(cg.quota_rel, "/cordon-q3");
	get(want, "cpu.cfs_period_us", buf, sizeof(buf));
	assert_string_equal(buf, "100000");
	get(want, "cpu.cfs_quota_us", buf, sizeof(buf));
	assert_string_equal(buf, "25000");

	assert_int_equal(cgroup_tasks_open(&cg, fds, err, sizeof(err)), 0);
	assert_int_equal(fds[0], -1);
	assert_int_equal(fds[1], -1);
	assert_true(fds[2] >= 0);
	assert_true(cgroup_fast_complete(&cg, fds, 9));
	close(fds[2]);
	fds[2] = -1;
	assert_false(cgroup_fast_complete(&cg, fds, 9));
	assert_int_equal(cgroup_attach(&cg, 4251, err, sizeof(err)), 0);
	get(want, "cgroup.procs", buf, sizeof(buf));
	assert_string_equal(buf, "4251");

	put(want, "cpu.stat", "nr_periods 10\nnr_throttled 4\nthrottled_time 2000000\n");
	assert_int_equal(cgroup_usage(&cg, &u, err, sizeof(err)), 0);
	assert_true(u.have_throttle);
	assert_int_equal(u.cpu_periods, 10);
	assert_int_equal(u.cpu_throttled, 4);
	assert_int_equal(u.cpu_throttled_usec, 2000);

	put(want, "cgroup.procs", "");
	put(want, "tasks", "");
	put(cg.mem_dir, "cgroup.procs", "");
	assert_int_equal(cgroup_destroy(&cg, err, sizeof(err)), 0);
	assert_false(exists(want));
	assert_int_equal(cg.quota_kind, CG_NONE);
	assert_int_equal(cg.mem_kind, CG_NONE);
	fake_free(&fk);
}

/* cpu_ms_misses_killed_children (issue 15): on a hybrid host (v1 limits,
 * a v2 mount beside them) CPU time is measured in a v2 cgroup of its own,
 * entered with the others (the v2 dirfd, or attach), read from cpu.stat,
 * and removed by destroy; pids.events' count is kept. */
static void test_fake_cpu_account_hybrid(void **state)
{
	struct fake fk;
	struct cg_host h;
	struct cg_run cg;
	struct cg_usage u;
	struct cg_limits only_pids = { 0, 16, 0, 0 };
	char err[512] = "", buf[256], cpu[PATH_MAX * 2], pids[PATH_MAX * 2];
	struct stat st, st2;
	int fd;

	(void)state;
	fake_v2_memory_v1_pids(&fk, &h);
	create_ok(&cg, &h, "cordon-e8", &only_pids);
	assert_int_equal(cg.pids_kind, CG_V1);
	assert_int_equal(cg.cpu_kind, CG_NONE);
	assert_int_equal(cgroup_v2_dirfd(&cg, err, sizeof(err)), -1);
	cgroup_cpu_account(&cg, &h, "cordon-e8");
	assert_int_equal(cg.cpu_kind, CG_V2);
	pathf(cpu, sizeof(cpu), "%s/cordon-e8", fk.own);
	pathf(pids, sizeof(pids), "%s/pids/cordon-e8", fk.tmp);
	assert_string_equal(cg.cpu_dir, cpu);
	assert_string_equal(cg.cpu_rel, "/svc/cordon-e8");
	assert_true(exists(cpu));
	fd = cgroup_v2_dirfd(&cg, err, sizeof(err));
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(stat(cpu, &st2), 0);
	assert_int_equal(st.st_ino, st2.st_ino);
	close(fd);
	assert_int_equal(cgroup_attach(&cg, 4244, err, sizeof(err)), 0);
	get(cpu, "cgroup.procs", buf, sizeof(buf));
	assert_string_equal(buf, "4244");
	put(pids, "pids.events", "max 5\n");
	put(cpu, "cpu.stat", "usage_usec 5700999\n");
	assert_int_equal(cgroup_usage(&cg, &u, err, sizeof(err)), 0);
	assert_int_equal(u.pids_max_events, 5);
	assert_true(u.pids_max_hit);
	assert_true(u.have_cpu);
	assert_int_equal(u.cpu_usec, 5700999);
	put(cpu, "cgroup.procs", "");
	put(pids, "cgroup.procs", "");
	assert_int_equal(cgroup_destroy(&cg, err, sizeof(err)), 0);
	assert_false(exists(cpu));
	assert_false(exists(pids));
	assert_int_equal(cg.cpu_kind, CG_NONE);
	assert_int_equal(cgroup_destroy(&cg, err, sizeof(err)), 0);

	/* No v2 cgroup we may write: none, and the note says rusage. */
	create_ok(&cg, &h, "cordon-e9", &only_pids);
	h.v2.dir[0] = '\0';
	cgroup_cpu_account(&cg, &h, "cordon-e9");
	assert_int_equal(cg.cpu_kind, CG_NONE);
	assert_non_null(strstr(cg.note, "CPU time from rusage"));
	put(cg.pids_dir, "cgroup.procs", "");
	assert_int_equal(cgroup_destroy(&cg, err, sizeof(err)), 0);
	fake_free(&fk);
}

/* Inode of path, for telling which directory an fd is. */
static ino_t ino_of(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		fail_msg("stat %s: %s", path, strerror(errno));
	return st.st_ino;
}

/* The fast path's fds follow the kinds: a tasks file for each v1 cgroup in
 * its fixed slot, the directory fd for the v2 one, and "0" written to each
 * tasks fd by cgroup_self_attach(). */
static void test_fake_fast_attach_fds(void **state)
{
	struct fake fk;
	struct cg_host h;
	struct cg_run cg;
	struct stat st;
	char err[512] = "", buf[256], text[PATH_MAX * 4];
	int fds[CG_PROCS_FDS] = { 7, 7 };
	int before, dfd;

	(void)state;
	before = unit_fd_count();

	/* Nothing made: nothing to open, no error, attach writes nothing. */
	memset(&cg, 0, sizeof(cg));
	assert_int_equal(cgroup_tasks_open(&cg, fds, err, sizeof(err)), 0);
	assert_int_equal(fds[0], -1);
	assert_int_equal(fds[1], -1);
	pathf(err, sizeof(err), "stale");
	assert_int_equal(cgroup_v2_dirfd(&cg, err, sizeof(err)), -1);
	assert_string_equal(err, "");
	assert_int_equal(cgroup_self_attach(fds), 0);

	/* v2 memory, v1 pids: one tasks fd, in the pids slot, and a dirfd. */
	fake_v2_memory_v1_pids(&fk, &h);
	create_ok(&cg, &h, "cordon-f1", &lim_64m_16);
	assert_int_equal(cg.mem_kind, CG_V2);
	assert_int_equal(cg.pids_kind, CG_V1);
	assert_int_equal(cgroup_tasks_open(&cg, fds, err, sizeof(err)), 0);
	assert_int_equal(fds[0], -1);
	assert_true(fds[1] >= 0);
	dfd = cgroup_v2_dirfd(&cg, err, sizeof(err));
	if (dfd < 0)
		fail_msg("v2 dirfd: %s", err);
	assert_int_equal(fstat(dfd, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_ino, ino_of(cg.mem_dir));
	assert_int_equal(cgroup_self_attach(fds), 0);
	get(cg.pids_dir, "tasks", buf, sizeof(buf));
	assert_string_equal(buf, "0");
	close(dfd);
	close(fds[1]);
	put(cg.pids_dir, "tasks", "");
	destroy_ok(&cg, cg.mem_dir);

	/* v1 both: two tasks fds, no dirfd; a written fd that fails (here
	 * read-only) is an error with errno. */
	mkdirs(fk.tmp, "memory");
	pathf(text, sizeof(text),
	      "38 31 0:35 / %s/memory rw - cgroup cgroup rw,memory\n39 31 0:36 / %s/pids rw - cgroup cgroup rw,pids\n",
	      fk.tmp, fk.tmp);
	put(fk.tmp, "mountinfo", text);
	put(fk.tmp, "cgroup", "4:memory:/\n8:pids:/\n");
	fake_detect(&fk, &h);
	create_ok(&cg, &h, "cordon-f2", &lim_64m_16);
	assert_int_equal(cg.mem_kind, CG_V1);
	assert_int_equal(cg.pids_kind, CG_V1);
	assert_int_equal(cgroup_v2_dirfd(&cg, err, sizeof(err)), -1);
	assert_string_equal(err, "");
	assert_int_equal(cgroup_tasks_open(&cg, fds, err, sizeof(err)), 0);
	assert_true(fds[0] >= 0 && fds[1] >= 0);
	assert_int_equal(cgroup_self_attach(fds), 0);
	get(cg.mem_dir, "tasks", buf, sizeof(buf));
	assert_string_equal(buf, "0");
	get(cg.pids_dir, "tasks", buf, sizeof(buf));
	assert_string_equal(buf, "0");
	close(fds[1]);
	pathf(text, sizeof(text), "%s/tasks", cg.pids_dir);
	fds[1] = open(text, O_RDONLY | O_CLOEXEC);
	assert_true(fds[1] >= 0);
	errno = 0;
	assert_int_equal(cgroup_self_attach(fds), -1);
	assert_int_equal(errno, EBADF);
	close(fds[0]);
	close(fds[1]);

	/* A cgroup that is gone: an error naming it, nothing left open. */
	put(cg.mem_dir, "tasks", "");
	put(cg.pids_dir, "tasks", "");
	pathf(text, sizeof(text), "%s", cg.pids_dir);
	assert_int_equal(cgroup_destroy(&cg, err, sizeof(err)), 0);
	cg.mem_kind = CG_V1;
	pathf(cg.mem_dir, sizeof(cg.mem_dir), "%s", text);
	cg.plain_files = 0;
	assert_int_equal(cgroup_tasks_open(&cg, fds, err, sizeof(err)), -1);
	assert_int_equal(fds[0], -1);
	assert_int_equal(fds[1], -1);
	assert_non_null(strstr(err, "cordon-f2/tasks: cannot open for writing"));
	cg.mem_kind = CG_V2;
	assert_int_equal(cgroup_v2_dirfd(&cg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cordon-f2: cannot open"));
	fake_free(&fk);
	assert_int_equal(unit_fd_count(), before);
}

/* Failures once a cgroup was usable: a bad name, a name that exists (the
 * existing cgroup is not touched), and a failure after the first cgroup
 * was made (it is removed again). */
static void test_fake_create_failures(void **state)
{
	struct fake fk;
	struct cg_host h;
	struct cg_run cg;
	char err[512] = "", text[PATH_MAX * 3], path[PATH_MAX * 2];

	(void)state;
	fake_make(&fk, "/svc", "memory\n", "memory\n", "");
	mkdirs(fk.tmp, "pids/cordon-dup");
	pathf(text, sizeof(text),
		 "41 31 0:38 / %s rw - cgroup2 cgroup2 rw\n39 31 0:36 / %s/pids rw - cgroup cgroup rw,pids\n",
		 fk.mnt, fk.tmp);
	put(fk.tmp, "mountinfo", text);
	put(fk.tmp, "cgroup", "8:pids:/\n0::/svc\n");
	fake_detect(&fk, &h);

	assert_int_equal(cgroup_create(&cg, &h, "../escape", &lim_64m_16, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a plain name"));
	assert_int_equal(cgroup_create(&cg, &h, "", &lim_64m_16, err, sizeof(err)), -1);

	mkdirs(fk.own, "cordon-taken");
	assert_int_equal(cgroup_create(&cg, &h, "cordon-taken", &lim_64m_16, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "already exists"));
	assert_int_equal(cg.mem_kind, CG_NONE);
	pathf(path, sizeof(path), "%s/cordon-taken", fk.own);
	assert_true(exists(path));

	/* v2 memory cgroup made, then the v1 pids one collides. */
	err[0] = '\0';
	assert_int_equal(cgroup_create(&cg, &h, "cordon-dup", &lim_64m_16, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "pids/cordon-dup: already exists"));
	assert_int_equal(cg.mem_kind, CG_NONE);
	assert_int_equal(cg.pids_kind, CG_NONE);
	pathf(path, sizeof(path), "%s/cordon-dup", fk.own);
	assert_false(exists(path));
	fake_free(&fk);
}

/* Destroy signals only processes that /proc says are in the cgroup: a pid
 * listed in (fake) cgroup.procs that lives elsewhere - here, this test -
 * is never killed, and destroy reports that the cgroup did not empty. */
static void test_fake_destroy_kills_only_members(void **state)
{
	struct fake fk;
	struct cg_host h;
	struct cg_run cg;
	char err[512] = "", pid[32], want[PATH_MAX * 2];

	(void)state;
	fake_make(&fk, "/svc", "memory pids\n", "memory pids\n", "");
	fake_detect(&fk, &h);
	create_ok(&cg, &h, "cordon-e8", &lim_64m_16);
	pathf(want, sizeof(want), "%s", cg.mem_dir);
	pathf(pid, sizeof(pid), "%d\n", (int)getpid());
	put(want, "cgroup.procs", pid);
	assert_int_equal(cgroup_destroy(&cg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "still listed"));
	/* Still here, and the run still knows its cgroup for a retry. */
	assert_int_equal(cg.mem_kind, CG_V2);
	assert_int_equal(cg.pids_kind, CG_V2);
	assert_true(exists(want));
	put(want, "cgroup.procs", "");
	destroy_ok(&cg, want);
	fake_free(&fk);
}

/* ---- real cgroups (root, v1 memory and pids) ------------------------------ */

/* Skips unless this host is the development setup: memory and pids as
 * cgroup v1, neither offered by v2, and (need_root) we are root. */
static int real_v1_host(struct cg_host *h, int need_root)
{
	char err[512] = "";

	if (need_root && geteuid() != 0) {
		print_message("    skipped: not root, the real cgroup tests need it\n");
		return 0;
	}
	if (cgroup_detect(h, NULL, NULL, err, sizeof(err)) != 0)
		fail_msg("detect: %s", err);
	if (h->v1_memory.dir[0] == '\0' || h->v1_pids.dir[0] == '\0' || h->v2_memory || h->v2_pids) {
		print_message("    skipped: memory and pids are not cgroup v1 on this host\n");
		return 0;
	}
	return 1;
}

/* The v1 directory is our own memory cgroup from /proc/self/cgroup below
 * the hierarchy's mount, not the mount itself. */
static void test_real_detect(void **state)
{
	struct cg_host h;
	char line[PATH_MAX], rel[PATH_MAX] = "", path[PATH_MAX * 2];
	FILE *f;
	size_t n;

	(void)state;
	if (!real_v1_host(&h, 0))
		skip();
	f = fopen("/proc/self/cgroup", "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		char *c = strstr(line, ":memory:");

		if (c != NULL) {
			pathf(rel, sizeof(rel), "%s", c + 8);
			rel[strcspn(rel, "\n")] = '\0';
		}
	}
	fclose(f);
	assert_string_equal(h.v1_memory.rel, rel);
	n = strlen(h.v1_memory.dir);
	if (strcmp(rel, "/") != 0)
		assert_string_equal(h.v1_memory.dir + n - strlen(rel), rel);
	pathf(path, sizeof(path), "%s/memory.limit_in_bytes", h.v1_memory.dir);
	assert_true(exists(path));
	pathf(path, sizeof(path), "%s/pids.max", h.v1_pids.dir);
	assert_true(exists(path) || strcmp(h.v1_pids.rel, "/") == 0); /* the root has no pids.max */
}

/* The real tests keep their run in the test state, so that a failed
 * assertion still leaves no cgroup (and no process) behind. */
static int real_setup(void **state)
{
	struct cg_run *cg = calloc(1, sizeof(*cg));

	*state = cg;
	return cg == NULL ? -1 : 0;
}

static int real_teardown(void **state)
{
	char err[512] = "";
	int rc = cgroup_destroy(*state, err, sizeof(err));

	if (rc != 0)
		print_error("teardown: %s\n", err);
	free(*state);
	return rc;
}

/* Whether dir/cgroup.procs lists pid. */
static int procs_has(const char *dir, pid_t pid)
{
	char path[PATH_MAX], line[64];
	int found = 0;
	FILE *f;

	pathf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (atoi(line) == (int)pid)
			found = 1;
	fclose(f);
	return found;
}

/* Reap n orphaned grandchildren (we are their subreaper), each of which
 * destroy must have killed: all come back within a second.  Then stop
 * being a subreaper. */
static void reap_killed(int n)
{
	int reaped = 0, status;

	for (int tries = 0; tries < 1000 && reaped < n; tries++) {
		struct timespec ts = { 0, 1000000 };
		pid_t r = waitpid(-1, &status, WNOHANG);

		if (r > 0) {
			assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
			reaped++;
		} else {
			nanosleep(&ts, NULL);
		}
	}
	assert_int_equal(reaped, n);
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 0), 0);
}

static void test_real_v1_memory_oom(void **state)
{
	struct cg_host h;
	struct cg_run *cgp = *state;
	struct cg_usage u;
	char err[512] = "", name[64], buf[256], mem_dir[PATH_MAX], pids_dir[PATH_MAX], path[PATH_MAX * 2];
	int go[2], status;
	pid_t child;

	if (!real_v1_host(&h, 1))
		skip();
	pathf(name, sizeof(name), "cordon-test-%d-oom", (int)getpid());
	if (cgroup_create(cgp, &h, name, &lim_64m_16, err, sizeof(err)) != 0)
		fail_msg("create: %s", err);
	pathf(mem_dir, sizeof(mem_dir), "%s", cgp->mem_dir);
	pathf(pids_dir, sizeof(pids_dir), "%s", cgp->pids_dir);
	assert_int_equal(cgp->mem_kind, CG_V1);
	assert_int_equal(cgp->pids_kind, CG_V1);
	assert_true(strncmp(cgp->mem_dir, h.v1_memory.dir, strlen(h.v1_memory.dir)) == 0);
	assert_true(strncmp(cgp->pids_dir, h.v1_pids.dir, strlen(h.v1_pids.dir)) == 0);
	get(cgp->mem_dir, "memory.limit_in_bytes", buf, sizeof(buf));
	assert_string_equal(buf, "67108864");
	pathf(path, sizeof(path), "%s/memory.memsw.limit_in_bytes", cgp->mem_dir);
	if (exists(path)) {
		get(cgp->mem_dir, "memory.memsw.limit_in_bytes", buf, sizeof(buf));
		assert_string_equal(buf, "67108864");
	}
	get(cgp->pids_dir, "pids.max", buf, sizeof(buf));
	assert_string_equal(buf, "16");

	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		/* Wait to be attached, then touch 200 MiB: the cgroup's OOM
		 * killer must end us long before the last page. */
		size_t len = 200 * MIB, i;
		char c;
		char *p;

		/* A failed assertion in the parent must not leave us waiting. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(3);
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			_exit(4);
		for (i = 0; i < len; i += 4096)
			p[i] = 1;
		_exit(0);
	}
	close(go[0]);
	if (cgroup_attach(cgp, child, err, sizeof(err)) != 0)
		fail_msg("attach: %s", err);
	assert_true(procs_has(cgp->mem_dir, child));
	assert_true(procs_has(cgp->pids_dir, child));
	assert_int_equal(write(go[1], "g", 1), 1);
	close(go[1]);
	assert_int_equal(waitpid(child, &status, 0), child);
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
		fail_msg("child was not OOM-killed: status 0x%x", status);

	if (cgroup_usage(cgp, &u, err, sizeof(err)) != 0)
		fail_msg("usage: %s", err);
	assert_true(u.oom_killed);
	assert_true(u.mem_limit_hit);
	assert_false(u.pids_max_hit);
	if (u.mem_peak < 32 * MIB || u.mem_peak > 64 * MIB)
		fail_msg("peak %" PRIu64 " bytes, want between 32 and 64 MiB", u.mem_peak);

	if (cgroup_destroy(cgp, err, sizeof(err)) != 0)
		fail_msg("destroy: %s", err);
	assert_false(exists(mem_dir));
	assert_false(exists(pids_dir));
	assert_int_equal(cgp->mem_kind, CG_NONE);
	assert_int_equal(cgroup_destroy(cgp, err, sizeof(err)), 0);
}

/* A child forks until fork fails; the grandchildren stay behind, asleep,
 * for destroy to kill. */
static void test_real_v1_pids_limit(void **state)
{
	struct cg_host h;
	struct cg_run *cgp = *state;
	struct cg_usage u;
	struct cg_limits lim = { 0, 16, 0, 0 };
	char err[512] = "", name[64], buf[64], pids_dir[PATH_MAX];
	int go[2], rep[2], status, forks = -1;
	pid_t child;

	if (!real_v1_host(&h, 1))
		skip();
	/* Orphaned grandchildren come back to us, so we can reap them and
	 * count that none escaped. */
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	pathf(name, sizeof(name), "cordon-test-%d-pids", (int)getpid());
	if (cgroup_create(cgp, &h, name, &lim, err, sizeof(err)) != 0)
		fail_msg("create: %s", err);
	assert_int_equal(cgp->mem_kind, CG_NONE);
	assert_int_equal(cgp->pids_kind, CG_V1);
	pathf(pids_dir, sizeof(pids_dir), "%s", cgp->pids_dir);

	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	assert_int_equal(pipe2(rep, O_CLOEXEC), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		int n = 0;
		char c;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(go[1]);
		close(rep[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(3);
		while (n < 100) {
			pid_t g = fork();

			if (g < 0)
				break;
			if (g == 0) {
				for (;;)
					pause();
			}
			n++;
		}
		if (write(rep[1], &n, sizeof(n)) != (ssize_t)sizeof(n))
			_exit(4);
		_exit(0);
	}
	close(go[0]);
	close(rep[1]);
	if (cgroup_attach(cgp, child, err, sizeof(err)) != 0)
		fail_msg("attach: %s", err);
	assert_true(procs_has(cgp->pids_dir, child));
	assert_int_equal(write(go[1], "g", 1), 1);
	close(go[1]);
	assert_int_equal(read(rep[0], &forks, sizeof(forks)), (ssize_t)sizeof(forks));
	close(rep[0]);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* The child counted as one of the 16. */
	if (forks < 1 || forks > 15)
		fail_msg("%d forks succeeded under pids.max 16", forks);
	get(cgp->pids_dir, "pids.current", buf, sizeof(buf));
	assert_int_equal(atoi(buf), forks);

	if (cgroup_usage(cgp, &u, err, sizeof(err)) != 0)
		fail_msg("usage: %s", err);
	assert_true(u.pids_max_hit);
	assert_false(u.oom_killed);

	if (cgroup_destroy(cgp, err, sizeof(err)) != 0)
		fail_msg("destroy: %s", err);
	assert_false(exists(pids_dir));
	reap_killed(forks);
}

/* ---- the executor's fast path, on real cgroups ---------------------------- */

/* A child made as the executor is: a raw clone (fork semantics, no atfork
 * handlers), with flags beside SIGCHLD. */
static pid_t raw_clone(unsigned long flags)
{
	return (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
}

/* In a child: how many lines of /proc/self/cgroup end in "/name" (one a
 * hierarchy we are in). */
static int self_lines_in(const char *name)
{
	char buf[4096];
	size_t nl = strlen(name);
	int n = 0;

	if (unit_read_small("/proc/self/cgroup", buf, sizeof(buf)) <= 0)
		return -1;
	for (char *line = buf, *end; (end = strchr(line, '\n')) != NULL; line = end + 1)
		if ((size_t)(end - line) > nl && end[-(ptrdiff_t)nl - 1] == '/' &&
		    strncmp(end - nl, name, nl) == 0)
			n++;
	return n;
}

/* Codes a self-attaching child exits with. */
enum { SA_OK = 0, SA_ATTACH = 20, SA_NOT_IN, SA_FORK, SA_NOT_OOM, SA_DROP, SA_OPEN, SA_CLONE, SA_GRAND };

/* The v1 fast path: the tasks fds opened before the clone, "0" written by
 * the child itself.  It and all it forks count against pids.max 3 (it is
 * the first of the three, so its third fork fails), as they would had the
 * supervisor moved it. */
static void test_real_v1_self_attach_pids(void **state)
{
	struct cg_host h;
	struct cg_run *cgp = *state;
	struct cg_usage u;
	struct cg_limits lim = { 64 * MIB, 3, 0, 0 };
	char err[512] = "", name[64], buf[64];
	int fds[CG_PROCS_FDS], rep[2], hold[2], status, got[3] = { -1, -1, -1 };
	pid_t child;

	if (!real_v1_host(&h, 1))
		skip();
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	pathf(name, sizeof(name), "cordon-test-%d-self", (int)getpid());
	if (cgroup_create(cgp, &h, name, &lim, err, sizeof(err)) != 0)
		fail_msg("create: %s", err);
	assert_int_equal(cgp->mem_kind, CG_V1);
	assert_int_equal(cgp->pids_kind, CG_V1);
	if (cgroup_tasks_open(cgp, fds, err, sizeof(err)) != 0)
		fail_msg("tasks open: %s", err);
	assert_true(fds[0] >= 0 && fds[1] >= 0);
	assert_int_equal(pipe2(rep, O_CLOEXEC), 0);
	/* The grandchildren wait on hold: should the attach not hold them
	 * (a failing test), they still end when this process does. */
	assert_int_equal(pipe2(hold, O_CLOEXEC), 0);
	child = raw_clone(0);
	assert_true(child >= 0);
	if (child == 0) {
		int r[3] = { 0, 0, 0 }; /* attach errno, hierarchies in, forks */
		char c;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(rep[0]);
		close(hold[1]);
		if (cgroup_self_attach(fds) != 0)
			r[0] = errno;
		r[1] = self_lines_in(name);
		while (r[0] == 0 && r[2] < 10) {
			pid_t g = fork();

			if (g < 0)
				break;
			if (g == 0)
				_exit(read(hold[0], &c, 1) == 0 ? 0 : 1);
			r[2]++;
		}
		_exit(write(rep[1], r, sizeof(r)) == (ssize_t)sizeof(r) ? SA_OK : SA_FORK);
	}
	close(fds[0]);
	close(fds[1]);
	close(rep[1]);
	close(hold[0]);
	assert_int_equal(read(rep[0], got, sizeof(got)), (ssize_t)sizeof(got));
	close(rep[0]);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == SA_OK);
	if (got[0] != 0)
		fail_msg("self attach: %s", strerror(got[0]));
	assert_int_equal(got[1], 2); /* memory and pids */
	assert_int_equal(got[2], 2);
	get(cgp->pids_dir, "pids.current", buf, sizeof(buf));
	assert_string_equal(buf, "2");
	if (cgroup_usage(cgp, &u, err, sizeof(err)) != 0)
		fail_msg("usage: %s", err);
	assert_true(u.pids_max_hit);
	if (cgroup_destroy(cgp, err, sizeof(err)) != 0)
		fail_msg("destroy: %s", err);
	reap_killed(2);
	close(hold[1]);
}

/* Memory the same way: a grandchild of the self-attached child touches
 * 200 MiB under a 64 MiB limit and the cgroup's OOM killer ends it. */
static void test_real_v1_self_attach_memory(void **state)
{
	struct cg_host h;
	struct cg_run *cgp = *state;
	struct cg_usage u;
	char err[512] = "", name[64];
	int fds[CG_PROCS_FDS], status;
	pid_t child;

	if (!real_v1_host(&h, 1))
		skip();
	pathf(name, sizeof(name), "cordon-test-%d-selfmem", (int)getpid());
	if (cgroup_create(cgp, &h, name, &lim_64m_16, err, sizeof(err)) != 0)
		fail_msg("create: %s", err);
	if (cgroup_tasks_open(cgp, fds, err, sizeof(err)) != 0)
		fail_msg("tasks open: %s", err);
	child = raw_clone(0);
	assert_true(child >= 0);
	if (child == 0) {
		pid_t g;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (cgroup_self_attach(fds) != 0)
			_exit(SA_ATTACH);
		if (self_lines_in(name) != 2)
			_exit(SA_NOT_IN);
		g = fork();
		if (g < 0)
			_exit(SA_FORK);
		if (g == 0) {
			size_t len = 200 * MIB;
			char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (p == MAP_FAILED)
				_exit(1);
			for (size_t i = 0; i < len; i += 4096)
				p[i] = 1;
			_exit(0);
		}
		if (waitpid(g, &status, 0) != g || !WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
			_exit(SA_NOT_OOM);
		_exit(SA_OK);
	}
	close(fds[0]);
	close(fds[1]);
	assert_int_equal(waitpid(child, &status, 0), child);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != SA_OK)
		fail_msg("self-attached child: status 0x%x", status);
	if (cgroup_usage(cgp, &u, err, sizeof(err)) != 0)
		fail_msg("usage: %s", err);
	assert_true(u.oom_killed);
	assert_true(u.mem_peak <= 64 * MIB);
	if (cgroup_destroy(cgp, err, sizeof(err)) != 0)
		fail_msg("destroy: %s", err);
}

/* Drop to nobody for good; 0, or -1. */
/* The CPU quota on a real v1 cpu hierarchy (root): the cfs files read back,
 * the executor joins through the third tasks fd with the others, and the
 * quota is live (cpu.stat counts enforcement periods while it spins; how
 * often it was throttled depends on the host's load, so the boundary suite
 * judges that with a margin, not this test).  Destroy removes all three. */
static void test_real_v1_cpu_quota(void **state)
{
	struct cg_host h;
	struct cg_run *cgp = *state;
	struct cg_usage u;
	const struct cg_limits lim = { 64 * MIB, 16, 20000, 100000 };
	char err[512] = "", name[64], buf[64], dir[PATH_MAX];
	int fds[CG_PROCS_FDS], status;
	pid_t child;

	if (!real_v1_host(&h, 1))
		skip();
	if (h.v1_cpu.dir[0] == '\0' || h.v2_cpu) {
		print_message("    skipped: the cpu controller is not cgroup v1 on this host\n");
		skip();
	}
	pathf(name, sizeof(name), "cordon-test-%d-cpuq", (int)getpid());
	if (cgroup_create(cgp, &h, name, &lim, err, sizeof(err)) != 0)
		fail_msg("create: %s", err);
	assert_int_equal(cgp->quota_kind, CG_V1);
	pathf(dir, sizeof(dir), "%s", cgp->quota_dir);
	get(dir, "cpu.cfs_quota_us", buf, sizeof(buf));
	assert_int_equal(strtol(buf, NULL, 10), 20000);
	get(dir, "cpu.cfs_period_us", buf, sizeof(buf));
	assert_int_equal(strtol(buf, NULL, 10), 100000);
	if (cgroup_tasks_open(cgp, fds, err, sizeof(err)) != 0)
		fail_msg("tasks open: %s", err);
	assert_true(fds[2] >= 0);
	child = raw_clone(0);
	assert_true(child >= 0);
	if (child == 0) {
		struct timespec t0, t;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (cgroup_self_attach(fds) != 0)
			_exit(SA_ATTACH);
		if (self_lines_in(name) != 3)
			_exit(SA_NOT_IN);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do
			clock_gettime(CLOCK_MONOTONIC, &t);
		while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 500000000L);
		_exit(SA_OK);
	}
	for (int i = 0; i < CG_PROCS_FDS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	assert_int_equal(waitpid(child, &status, 0), child);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != SA_OK)
		fail_msg("self-attached child: status 0x%x", status);
	if (cgroup_usage(cgp, &u, err, sizeof(err)) != 0)
		fail_msg("usage: %s", err);
	assert_true(u.have_throttle);
	assert_true(u.cpu_periods > 0);
	print_message("    0.5 s of spinning under 0.2 CPU: %" PRIu64 " periods, %" PRIu64 " throttled, %" PRIu64
		      " us waited\n", u.cpu_periods, u.cpu_throttled, u.cpu_throttled_usec);
	if (cgroup_destroy(cgp, err, sizeof(err)) != 0)
		fail_msg("destroy: %s", err);
	assert_false(exists(dir));
	assert_int_equal(cgp->quota_kind, CG_NONE);
}

static int drop_to_nobody(void)
{
	if (setgroups(0, NULL) != 0 || setresgid(NOBODY, NOBODY, NOBODY) != 0 ||
	    setresuid(NOBODY, NOBODY, NOBODY) != 0)
		return -1;
	return 0;
}

/* Run in a raw-cloned child (flags: e.g. CLONE_NEWUSER): optionally drop
 * to nobody, write "0" through fds, exit with an SA_ code and, on a failed
 * write, the errno in rep. */
static int self_attach_child(unsigned long flags, int drop, const int fds[CG_PROCS_FDS], const char *name)
{
	int status;
	pid_t child = raw_clone(flags);

	if (child < 0)
		return SA_CLONE;
	if (child == 0) {
		if (drop && drop_to_nobody() != 0)
			_exit(SA_DROP);
		if (cgroup_self_attach(fds) != 0)
			_exit(errno == EACCES ? EACCES : SA_ATTACH);
		_exit(self_lines_in(name) == 1 ? SA_OK : SA_NOT_IN);
	}
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status))
		return SA_GRAND;
	return WEXITSTATUS(status);
}

/* As nobody with a delegated v1 cgroup: open tasks, then a child in a new
 * user namespace (the executor's) joins it. */
static int delegated_nobody(const struct cg_run *cg, const char *name)
{
	int fds[CG_PROCS_FDS], code;

	if (drop_to_nobody() != 0)
		return SA_DROP;
	if (cgroup_tasks_open(cg, fds, NULL, 0) != 0)
		return SA_OPEN;
	code = self_attach_child(CLONE_NEWUSER, 0, fds, name);
	close(fds[1]);
	return code;
}

/* Open tasks with euid nobody (the real and saved uid stay root), then a
 * root child writes: the kernel judges the opener, so it must refuse. */
static int opened_by_nobody(const struct cg_run *cg, const char *name)
{
	int fds[CG_PROCS_FDS], r;

	if (setresuid((uid_t)-1, NOBODY, (uid_t)-1) != 0)
		return SA_DROP;
	r = cgroup_tasks_open(cg, fds, NULL, 0);
	if (setresuid((uid_t)-1, 0, (uid_t)-1) != 0)
		return SA_DROP;
	if (r != 0)
		return SA_OPEN;
	return self_attach_child(0, 0, fds, name);
}

/*
 * Who may write: the kernel judges a v1 tasks write by the credentials of
 * whoever opened the file (open-time credentials, Linux 5.16+).  So a fd
 * root opened still works after the writer dropped to nobody (the order
 * the executor relies on: open privileged, write after the clone); a
 * delegated cgroup works rootless; and a fd nobody opened does not move a
 * root writer, which is why a rootless executor writes before it changes
 * its uid.
 */
static void test_real_v1_self_attach_who(void **state)
{
	struct cg_host h;
	struct cg_run *cgp = *state;
	struct cg_limits lim = { 0, 16, 0, 0 };
	char err[512] = "", name[64], path[PATH_MAX * 2];
	int fds[CG_PROCS_FDS], code, status;
	pid_t pid;

	if (!real_v1_host(&h, 1))
		skip();
	pathf(name, sizeof(name), "cordon-test-%d-who", (int)getpid());
	if (cgroup_create(cgp, &h, name, &lim, err, sizeof(err)) != 0)
		fail_msg("create: %s", err);
	assert_int_equal(cgp->pids_kind, CG_V1);

	if (cgroup_tasks_open(cgp, fds, err, sizeof(err)) != 0)
		fail_msg("tasks open: %s", err);
	assert_int_equal(fds[0], -1);
	code = self_attach_child(0, 1, fds, name);
	close(fds[1]);
	if (code != SA_OK)
		fail_msg("root-opened fd, writer dropped to nobody: code %d", code);

	/* Delegated: the directory and its tasks file are nobody's. */
	assert_int_equal(chown(cgp->pids_dir, NOBODY, NOBODY), 0);
	pathf(path, sizeof(path), "%s/tasks", cgp->pids_dir);
	assert_int_equal(chown(path, NOBODY, NOBODY), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(delegated_nobody(cgp, name));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != SA_OK)
		fail_msg("delegated, opened by nobody, child in a user namespace: status 0x%x", status);

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(opened_by_nobody(cgp, name));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != EACCES)
		fail_msg("opened by nobody, written by root: status 0x%x, want exit %d (EACCES)", status, EACCES);
	if (cgroup_destroy(cgp, err, sizeof(err)) != 0)
		fail_msg("destroy: %s", err);
}

/* cgroup v2: born inside with clone3(CLONE_INTO_CGROUP) and the directory
 * fd.  Any writable cgroup2 mount will do, controllers or not (our hosts
 * have none on theirs), so the cg_run is made by hand. */
static void test_real_v2_clone_into_cgroup(void **state)
{
	struct cg_host h;
	struct cg_run *cgp = *state;
	struct clone_args ca;
	char err[512] = "", name[64];
	int dfd, status;
	pid_t child;

	(void)state;
	if (geteuid() != 0) {
		print_message("    skipped: not root\n");
		skip();
	}
	if (cgroup_detect(&h, NULL, NULL, err, sizeof(err)) != 0)
		fail_msg("detect: %s", err);
	if (h.v2.dir[0] == '\0' || access(h.v2.dir, W_OK) != 0) {
		print_message("    skipped: no writable cgroup2 mount\n");
		skip();
	}
	pathf(name, sizeof(name), "cordon-test-%d-v2", (int)getpid());
	memset(cgp, 0, sizeof(*cgp));
	cgp->mem_kind = CG_V2;
	pathf(cgp->mem_dir, sizeof(cgp->mem_dir), "%s/%s", h.v2.dir, name);
	pathf(cgp->mem_rel, sizeof(cgp->mem_rel), "%s/%s", strcmp(h.v2.rel, "/") == 0 ? "" : h.v2.rel, name);
	assert_int_equal(mkdir(cgp->mem_dir, 0755), 0);
	dfd = cgroup_v2_dirfd(cgp, err, sizeof(err));
	if (dfd < 0)
		fail_msg("v2 dirfd: %s", err);
	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_INTO_CGROUP;
	ca.exit_signal = SIGCHLD;
	ca.cgroup = (uint64_t)dfd;
	child = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
	if (child < 0 && (errno == ENOSYS || errno == E2BIG)) {
		close(dfd);
		print_message("    skipped: no clone3 with CLONE_INTO_CGROUP (Linux 5.7)\n");
		skip();
	}
	assert_true(child >= 0);
	if (child == 0)
		_exit(self_lines_in(name) == 1 ? SA_OK : SA_NOT_IN);
	close(dfd);
	assert_int_equal(waitpid(child, &status, 0), child);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != SA_OK)
		fail_msg("clone3 child not in %s: status 0x%x", cgp->mem_dir, status);
	if (cgroup_destroy(cgp, err, sizeof(err)) != 0)
		fail_msg("destroy: %s", err);
}

/* ---- as an ordinary user ------------------------------------------------- */

/* Codes the unprivileged child exits with, one per check. */
enum { NR_OK = 0, NR_DROP = 10, NR_DETECT, NR_REAL_CREATE, NR_REAL_KIND, NR_REAL_LEFT, NR_FAKE_CREATE,
       NR_FAKE_KIND, NR_FAKE_NOTE, NR_DELEG_CREATE, NR_DELEG_KIND, NR_DELEG_DIR, NR_DELEG_DESTROY };

static int nonroot_checks(const struct fake *fk)
{
	struct cg_host h;
	struct cg_run cg;
	char err[512], path[PATH_MAX * 2];

	if (cgroup_detect(&h, NULL, NULL, err, sizeof(err)) != 0)
		return NR_DETECT;
	/* The real host: root-owned v1 hierarchies, v2 without memory. */
	if (cgroup_create(&cg, &h, "cordon-test-nonroot", &lim_64m_16, err, sizeof(err)) != 0)
		return NR_REAL_CREATE;
	if (h.v1_memory.dir[0] != '\0' && !h.v2_memory && cg.mem_kind != CG_NONE)
		return NR_REAL_KIND;
	if (h.v1_pids.dir[0] != '\0' && !h.v2_pids && cg.pids_kind != CG_NONE)
		return NR_REAL_KIND;
	pathf(path, sizeof(path), "%s/cordon-test-nonroot", h.v1_memory.dir);
	if (h.v1_memory.dir[0] != '\0' && exists(path))
		return NR_REAL_LEFT;
	cgroup_destroy(&cg, err, sizeof(err));

	/* A fake v2 cgroup of ours holding processes, under a parent that
	 * is not ours: not delegated, so none. */
	if (cgroup_detect(&h, fk->mountinfo, fk->cgroup, err, sizeof(err)) != 0)
		return NR_DETECT;
	h.plain_files = 1;
	if (cgroup_create(&cg, &h, "cordon-e9", &lim_64m_16, err, sizeof(err)) != 0)
		return NR_FAKE_CREATE;
	if (cg.mem_kind != CG_NONE || cg.pids_kind != CG_NONE)
		return NR_FAKE_KIND;
	if (strstr(cg.note, "not delegated") == NULL)
		return NR_FAKE_NOTE;
	return NR_OK;
}

static int nonroot_delegated(const struct fake *fk)
{
	struct cg_host h;
	struct cg_run cg;
	char err[512], want[PATH_MAX * 2];

	if (cgroup_detect(&h, fk->mountinfo, fk->cgroup, err, sizeof(err)) != 0)
		return NR_DETECT;
	h.plain_files = 1;
	if (cgroup_create(&cg, &h, "cordon-e10", &lim_64m_16, err, sizeof(err)) != 0)
		return NR_DELEG_CREATE;
	if (cg.mem_kind != CG_V2 || cg.pids_kind != CG_V2)
		return NR_DELEG_KIND;
	pathf(want, sizeof(want), "%s/user/cordon/cordon-e10", fk->mnt);
	if (strcmp(cg.mem_dir, want) != 0 || !exists(want))
		return NR_DELEG_DIR;
	if (cgroup_destroy(&cg, err, sizeof(err)) != 0 || exists(want))
		return NR_DELEG_DESTROY;
	return NR_OK;
}

static int run_as_nobody(int (*fn)(const struct fake *), const struct fake *fk)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		if (setgroups(0, NULL) != 0 || setgid(NOBODY) != 0 || setuid(NOBODY) != 0)
			_exit(NR_DROP);
		_exit(fn(fk));
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void chown_tree(const char *path)
{
	if (chown(path, NOBODY, NOBODY) != 0)
		fail_msg("chown %s: %s", path, strerror(errno));
}

static void test_nonroot(void **state)
{
	struct fake fk;
	char path[PATH_MAX * 2];
	int code;

	(void)state;
	if (geteuid() != 0) {
		struct cg_host h;
		struct cg_run cg;
		char err[512] = "";

		/* Already an ordinary user: detection and create must not fail
		 * on this host, whatever they find. */
		assert_int_equal(cgroup_detect(&h, NULL, NULL, err, sizeof(err)), 0);
		if (cgroup_create(&cg, &h, "cordon-test-nonroot", &lim_64m_16, err, sizeof(err)) != 0)
			fail_msg("create: %s", err);
		assert_int_equal(cgroup_destroy(&cg, err, sizeof(err)), 0);
		print_message("    skipped the setuid part: not root\n");
		return;
	}
	/* Our cgroup /user/app is ours and busy; /user is root's. */
	fake_make(&fk, "/user/app", "memory pids\n", "", "77\n");
	chown_tree(fk.own);
	pathf(path, sizeof(path), "%s/cgroup.subtree_control", fk.own);
	chown_tree(path);
	code = run_as_nobody(nonroot_checks, &fk);
	if (code != NR_OK)
		fail_msg("unprivileged check %d failed", code);

	/* Delegated from /user down (as systemd's user@.service is): the
	 * "cordon" parent goes beside our cgroup. */
	pathf(path, sizeof(path), "%s/user", fk.mnt);
	chown_tree(path);
	code = run_as_nobody(nonroot_delegated, &fk);
	if (code != NR_OK)
		fail_msg("unprivileged delegated check %d failed", code);
	fake_free(&fk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kind_names_and_none_run),
		cmocka_unit_test(test_detect_no_cgroups),
		cmocka_unit_test(test_detect_v1_paths),
		cmocka_unit_test(test_fake_v2_own_cgroup),
		cmocka_unit_test(test_fake_v2_enable_in_empty_own),
		cmocka_unit_test(test_fake_v2_busy_own_uses_sibling),
		cmocka_unit_test(test_fake_v2_busy_top_is_none),
		cmocka_unit_test(test_fake_v2_memory_v1_pids),
		cmocka_unit_test(test_fake_cpu_account_hybrid),
		cmocka_unit_test(test_fake_v2_cpu_quota),
		cmocka_unit_test(test_fake_v1_cpu_quota),
		cmocka_unit_test(test_fake_fast_attach_fds),
		cmocka_unit_test(test_fake_create_failures),
		cmocka_unit_test(test_fake_destroy_kills_only_members),
		cmocka_unit_test(test_real_detect),
		cmocka_unit_test_setup_teardown(test_real_v1_memory_oom, real_setup, real_teardown),
		cmocka_unit_test_setup_teardown(test_real_v1_pids_limit, real_setup, real_teardown),
		cmocka_unit_test_setup_teardown(test_real_v1_self_attach_pids, real_setup, real_teardown),
		cmocka_unit_test_setup_teardown(test_real_v1_self_attach_memory, real_setup, real_teardown),
		cmocka_unit_test_setup_teardown(test_real_v1_cpu_quota, real_setup, real_teardown),
		cmocka_unit_test_setup_teardown(test_real_v1_self_attach_who, real_setup, real_teardown),
		cmocka_unit_test_setup_teardown(test_real_v2_clone_into_cgroup, real_setup, real_teardown),
		cmocka_unit_test(test_nonroot),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
