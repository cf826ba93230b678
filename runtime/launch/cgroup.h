/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroup.h - the launcher's cgroups: one per execution, holding its whole
 * process tree under a memory limit, a pids limit and, when the policy sets
 * one, a CPU quota (docs/cgroups.md).
 *
 * Memory, pids and the CPU quota are decided apart, each with the best
 * mechanism this caller has: cgroup v2 where the controller is delegated to
 * us, else the controller's cgroup v1 hierarchy where we may write to it,
 * else none (the caller then falls back to RLIMIT_AS / RLIMIT_NPROC; a CPU
 * quota has no fallback and the caller refuses the run).  The kind chosen
 * for each is what the result's "enforcement" object reports.
 *
 * Sequence: cgroup_detect() reads where the hierarchies are and which
 * cgroup we are in (it writes nothing); cgroup_create() makes the
 * execution's cgroups and sets the limits; the executor gets in before it
 * runs untrusted code, by the fast path below or by cgroup_attach() from
 * outside; cgroup_usage() reads what happened; cgroup_destroy() kills what
 * is left and removes the cgroups.
 */
#ifndef CORDON_CGROUP_H
#define CORDON_CGROUP_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum cg_kind { CG_NONE = 0, CG_V1, CG_V2 };

/* One hierarchy as this process sees it; dir[0] == '\0' when absent. */
struct cg_hier {
	char mount[PATH_MAX]; /* where the hierarchy is mounted */
	char rel[PATH_MAX];   /* our cgroup, as /proc/self/cgroup names it */
	char dir[PATH_MAX];   /* our cgroup as a directory: mount + rel */
};

struct cg_host {
	struct cg_hier v2;         /* the cgroup2 mount, whatever it controls */
	struct cg_hier v1_memory;  /* the v1 hierarchy bound to "memory" */
	struct cg_hier v1_pids;    /* the v1 hierarchy bound to "pids" */
	struct cg_hier v1_cpu;     /* the v1 hierarchy bound to "cpu" (CFS quota) */
	int v2_memory, v2_pids, v2_cpu; /* listed in our v2 cgroup.controllers */
	/* Tests only: the tree is plain files in a temporary directory, so
	 * control files a real cgroupfs makes by itself are created on write,
	 * and destroy removes them before rmdir. */
	int plain_files;
};

/* 0 in a field: no limit of that kind, and no cgroup made for it. */
struct cg_limits {
	uint64_t memory_bytes;
	uint32_t pids;
	/* CPU quota: the tree may run cpu_quota_us per cpu_period_us (v2
	 * cpu.max, v1 cpu.cfs_quota_us / cpu.cfs_period_us).  Unlike memory
	 * and pids it has no rlimit to fall back on, so the caller must treat
	 * quota_kind CG_NONE as a failure when it asked for one. */
	uint64_t cpu_quota_us;
	uint64_t cpu_period_us;
};

struct cg_run {
	enum cg_kind mem_kind, pids_kind;
	char mem_dir[PATH_MAX];  /* "" when mem_kind is CG_NONE */
	char pids_dir[PATH_MAX]; /* v2: the same directory as mem_dir */
	/* The same cgroups as /proc/<pid>/cgroup names them: destroy signals
	 * only a process whose own cgroup file says it is still inside, so a
	 * pid that exited and was reused elsewhere is never killed. */
	char mem_rel[PATH_MAX];
	char pids_rel[PATH_MAX];
	/* CPU accounting (cgroup_cpu_account()): always a v2 cgroup, where
	 * cpu.stat is a core file that needs no controller.  The v2 cgroup of
	 * memory or pids when there is one (the same directory), else one of
	 * its own under our v2 cgroup (a hybrid host: v1 limits, a v2 mount
	 * beside them), entered by clone3 like the others, at no extra
	 * attach.  CG_NONE without a writable v2 cgroup: a pure v1 host, or
	 * rootless without delegation; the caller then has rusage only. */
	enum cg_kind cpu_kind;
	char cpu_dir[PATH_MAX];
	char cpu_rel[PATH_MAX];
	/* The CPU quota's cgroup (cg_limits.cpu_quota_us): v2, the same
	 * directory as memory and pids when they are v2 too; v1, a cgroup in
	 * the cpu hierarchy.  CG_NONE when no quota was asked for or none
	 * could be set (note says why). */
	enum cg_kind quota_kind;
	char quota_dir[PATH_MAX];
	char quota_rel[PATH_MAX];
	int plain_files;
	/* Why a better mechanism was passed over for a limit that was asked
	 * for, for the supervisor log: "memory: cgroup v2 does not offer
	 * memory at /sys/fs/cgroup/unified; memory: no cgroup v1 memory
	 * hierarchy holds us". */
	char note[1024];
};

struct cg_usage {
	uint64_t mem_peak;   /* bytes; 0 when unknown */
	int mem_limit_hit;   /* the memory limit was reached at least once */
	int oom_killed;      /* the OOM killer killed a process in the cgroup */
	int pids_max_hit;    /* a fork or clone was refused by pids.max */
	uint64_t pids_max_events; /* how many (pids.events "max", v1 and v2) */
	int have_cpu;        /* cpu_usec was read (cpu_kind is CG_V2) */
	uint64_t cpu_usec;   /* CPU time of every process that was in it */
	/* The quota's cpu.stat (quota_kind not CG_NONE): enforcement
	 * periods, those in which the tree ran out of quota, and how long
	 * it waited (v1 throttled_time is in ns, given here in us). */
	int have_throttle;
	uint64_t cpu_periods, cpu_throttled, cpu_throttled_usec;
};

/*
 * Find the cgroup hierarchies and our place in them.  mountinfo_path and
 * cgroup_path default (NULL) to /proc/self/mountinfo and /proc/self/cgroup;
 * tests pass files describing a fake tree.  A host without cgroups is not an
 * error: the hierarchies are left empty.  Returns -1 with err only when a
 * file exists but cannot be read or is malformed.
 */
int cgroup_detect(struct cg_host *h, const char *mountinfo_path, const char *cgroup_path,
		  char *err, size_t errlen);

/*
 * Make the execution's cgroup(s), named `name` (letters, digits, '.', '_',
 * '-'; e.g. "cordon-<execid>"), and set the limits in lim.  v2: a child of
 * our own cgroup when it can have children with memory and pids, else of a
 * "cordon" cgroup beside ours (docs/cgroups.md); memory.max,
 * memory.swap.max = 0, memory.oom.group = 1, pids.max.  v1: a child of our
 * cgroup in each hierarchy; memory.limit_in_bytes and, where swap is
 * accounted, memory.memsw.limit_in_bytes to the same value, pids.max.
 * CPU quota (cpu_quota_us non-zero): v2 cpu.max in the same v2 cgroup
 * (cpu enabled with the others), else v1 cpu.cfs_period_us, then
 * cpu.cfs_quota_us, in the hierarchy bound to cpu.
 *
 * Never fails because cgroups are missing or not ours: that kind is
 * CG_NONE and cg->note says why.  Fails (-1, err filled, nothing left
 * behind, cg all CG_NONE) when a cgroup was usable but setting it up went
 * wrong, e.g. the name already exists.  Overwrites *cg.
 */
int cgroup_create(struct cg_run *cg, const struct cg_host *h, const char *name,
		  const struct cg_limits *lim, char *err, size_t errlen);

/*
 * After cgroup_create(): also measure the CPU time of the whole tree,
 * processes killed at the end included (cpu.stat usage_usec, read by
 * cgroup_usage()).  An execution asks for it, a tool call does not.  Uses
 * the v2 cgroup of memory or pids when there is one, else makes `name`
 * under our own v2 cgroup when we may move a process there (see cpu_kind).
 * Never fails: without a place, cpu_kind stays CG_NONE and cg->note says
 * why.  The executor then joins it with the others (cgroup_v2_dirfd,
 * cgroup_attach) and cgroup_destroy() removes it.
 */
void cgroup_cpu_account(struct cg_run *cg, const struct cg_host *h, const char *name);

/* Move process pid (as this process's pid namespace numbers it) into every
 * cgroup of cg.  0 when cg has none. */
int cgroup_attach(const struct cg_run *cg, pid_t pid, char *err, size_t errlen);

/*
 * Open the cgroup.procs file of each of cg's cgroups (one, or two for v1
 * memory and pids), O_WRONLY|O_CLOEXEC, for a child that joins by writing
 * "0" before it execs: a process that cannot be attached from outside in
 * time (a CLONE_VFORK child runs to execve before its parent returns).
 * fds[] gets the fds, -1 for unused slots; the caller owns and closes them.
 * Open them while privileged: the write is then allowed after the child
 * has dropped its identity.  Returns 0, or -1 with err and nothing open.
 */
#define CG_PROCS_FDS 3
int cgroup_procs_open(const struct cg_run *cg, int fds[CG_PROCS_FDS], char *err, size_t errlen);

/*
 * The executor's fast path in (docs/cgroups.md, "Attach").  Moving a
 * process from outside, by writing its pid to cgroup.procs, takes the
 * kernel's global threadgroup lock, whose write side waits for an RCU
 * grace period on cgroup v1 (milliseconds).  Two ways skip it:
 *
 *   v1: a single-threaded process moves itself by writing "0" to the
 *       hierarchy's `tasks` file, which moves only the writing thread and
 *       takes no threadgroup lock.  The kernel judges that write by the
 *       credentials of whoever OPENED the file: root, or an opener whose
 *       euid is the writer's uid or saved uid (a delegated v1 cgroup).
 *   v2: the process is born inside: clone3(CLONE_INTO_CGROUP) with the
 *       cgroup directory's fd, judged against the caller of clone3.
 *
 * Who calls what:
 *   supervisor, after cgroup_create() and before the clone:
 *       cgroup_tasks_open() and cgroup_v2_dirfd();
 *   supervisor, the clone: clone3 with CLONE_INTO_CGROUP and the dirfd
 *       when that is >= 0, else the usual clone; then it closes the dirfd
 *       and its copies of the tasks fds;
 *   executor, first thing after the clone: cgroup_self_attach(), while it
 *       is still single-threaded, before anything it allocates is charged
 *       to the supervisor's memory cgroup, before it unshares its cgroup
 *       namespace (rooted where it is), and before identity_drop() (a
 *       non-root opener's euid must still be the writer's uid).  The fds
 *       then go with the executor's other descriptors before execve.
 */

/* Open the `tasks` file of each v1 cgroup of cg, O_WRONLY|O_CLOEXEC|
 * O_NOFOLLOW: fds[0] for memory, fds[1] for pids, fds[2] for the CPU
 * quota; -1 for a kind that is not CG_V1 (and for one whose directory an
 * earlier slot has already).  The caller owns and closes them.  Returns 0,
 * or -1 with err and nothing open. */
int cgroup_tasks_open(const struct cg_run *cg, int fds[CG_PROCS_FDS], char *err, size_t errlen);

/* Whether a child that writes "0" to tasks (from cgroup_tasks_open()) and
 * is born in v2fd (from cgroup_v2_dirfd()) is then in every cgroup of cg:
 * else the supervisor must also cgroup_attach() it from outside. */
int cgroup_fast_complete(const struct cg_run *cg, const int tasks[CG_PROCS_FDS], int v2fd);

/* The fd of cg's cgroup v2 directory (O_RDONLY|O_DIRECTORY|O_CLOEXEC|
 * O_NOFOLLOW), for clone3's CLONE_INTO_CGROUP, when any kind (cpu
 * included) is CG_V2; the
 * caller owns it.  -1 with err "" when no kind is CG_V2 (nothing to open);
 * -1 with err filled when the open failed. */
int cgroup_v2_dirfd(const struct cg_run *cg, char *err, size_t errlen);

/* Executor side, between a raw clone and execve in what may be a
 * multi-threaded supervisor: writes "0" to each fd >= 0 of fds (from
 * cgroup_tasks_open()), moving the calling thread, which must be the
 * process's only one.  Async-signal-safe: write(2) only, no allocation, no
 * stdio, no locks.  Returns 0, or -1 with errno of the failed write (EIO
 * for a short one). */
int cgroup_self_attach(const int fds[CG_PROCS_FDS]);

/* Read peak memory, OOM and pids-limit events, and CPU time.  Fields of a
 * kind that is CG_NONE, or whose file this kernel lacks, stay 0. */
int cgroup_usage(const struct cg_run *cg, struct cg_usage *u, char *err, size_t errlen);

/*
 * Kill every process left in cg's cgroups (v2 cgroup.kill where present,
 * else SIGKILL to each member of cgroup.procs until it is empty, bounded)
 * and remove the directories.  Each removed cgroup is forgotten, so a second
 * call, or a call on a zeroed or CG_NONE run, does nothing and returns 0.
 * Returns -1 with err when a directory could not be removed; it still tries
 * the others.
 */
int cgroup_destroy(struct cg_run *cg, char *err, size_t errlen);

/* Kill what is left in, and remove, sibling cgroups named cordon-<pid>-*
 * whose supervisor pid no longer exists: what a killed supervisor left,
 * the executor's and its tool calls' (their grandchildren outlive it). */
void cgroup_sweep_stale(const struct cg_run *cg);

/* "cgroup-v1", "cgroup-v2", "none": the enforcement object's words. */
const char *cgroup_kind_name(enum cg_kind k);

#endif
