/* SPDX-License-Identifier: Apache-2.0 */
/*
 * launch.h - the executor's setup: a plan decoded from the blob before any
 * clone (plan, then act), and the one ordered sequence the child runs.
 *
 * The supervisor fills a struct launch_plan completely, then clones.  The
 * child only executes the plan: it decides nothing, and any failure ends it
 * with a message on the error pipe naming the stage (exec.harness.<stage>).
 */
#ifndef CORDON_LAUNCH_H
#define CORDON_LAUNCH_H

#include <limits.h>
#include <linux/filter.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "cordon/policy.h"
#include "runtime/launch/cgroup.h"

#define LAUNCH_MAX_MOUNTS 96
#define LAUNCH_MAX_ENV 96
#define LAUNCH_MAX_PRIVATE 4
/* Where the child builds its root: a directory every host has, which a
 * tmpfs of the child's own covers in its namespace only. */
#define LAUNCH_BASE "/tmp"
#define LAUNCH_START_FD 3

enum launch_mount_kind {
	LM_BIND_RO,  /* host path, read-only, nosuid, nodev */
	LM_BIND_RW,  /* host path, writable (workspace, rw: true mounts) */
	LM_TMPFS,    /* fresh tmpfs, mode 1777 */
	LM_DEVFILE,  /* a host device node bound onto an empty file */
	LM_PRIVATE,  /* fresh tmpfs (size, inodes) whose fd goes to the supervisor,
		      * which fills it and later reads it: workspace, client, socket */
};

struct launch_mount {
	enum launch_mount_kind kind;
	char src[PATH_MAX]; /* host path; "" for tmpfs */
	char dst[PATH_MAX]; /* path inside the sandbox, absolute */
	uint64_t size;      /* tmpfs bytes; 0 for LM_PRIVATE: the kernel's default */
	uint64_t inodes;    /* LM_PRIVATE: nr_inodes */
	const char *rw_sub[4]; /* LM_PRIVATE: the only writable directories in it */
	unsigned nrw_sub;
	int landlock_rw;    /* writable under landlock too */
};

struct launch_plan {
	struct launch_mount mounts[LAUNCH_MAX_MOUNTS];
	unsigned nmounts;
	int write_etc;          /* no /etc mount: write minimal passwd and group */
	int usr_links;          /* /usr mounted, /bin and /sbin not: link them into it */
	/* Writable under landlock beyond the rw mounts (inside an LM_PRIVATE). */
	const char *landlock_rw[4];
	unsigned nlandlock_rw;

	uid_t uid;              /* inside */
	gid_t gid;
	int rootless;           /* setgroups is denied; supplementary groups stay */

	/* rlimits; 0 means "not set by this layer" */
	uint64_t fsize, nofile, nproc, as;

	int loopback;           /* bring up lo in the empty net namespace */
	int landlock;           /* apply landlock */
	int need_landlock;      /* absence is a harness error */

	const struct cpol_bpf *filter; /* NULL: no seccomp filter in the blob */
	uint32_t nfilter;

	const char *interpreter;
	char *envp[LAUNCH_MAX_ENV + 1];
	unsigned nenv;

	int err_fd;    /* child -> supervisor: "stage\tmessage" then exit;
			* above LAUNCH_START_FD, which the start socket takes */
	int sync_fd;   /* supervisor -> child: a byte once the maps are written,
			* a second once the cgroups are attached and the
			* private filesystems filled */
	int fd_sock;   /* child -> supervisor: the LM_PRIVATE fds (SCM_RIGHTS) */
	/* The interpreter's start socket, fd 3 after exec (LAUNCH_START_FD):
	 * the loader writes 'r' once its preloads are imported and reads 'g'
	 * once the program is in the workspace (sandbox.h). */
	int start_fd;
	/* The init channel's inside end (init.c): kept by pid 1 of the pid
	 * namespace, closed in the program (pid 2). */
	int init_fd;
	/* The supervisor's command line in its memory (launch_init_args()),
	 * which init, a fork of it, blanks: /proc/1/cmdline is readable to
	 * the program whatever init's dumpable flag says.  0, 0: unknown. */
	uintptr_t args_start, args_end;
	/* v1 cgroups' `tasks` files, opened by the supervisor (cgroup.h,
	 * "Attach"): the child writes "0" to each first thing; -1 unused. */
	int cg_tasks[CG_PROCS_FDS];
	int stdin_fd, stdout_fd, stderr_fd;
	/* The supervisor's ends of the pipes, which clone copied into the
	 * child: closed first, or the sync pipe could never report the
	 * supervisor's death (the child would hold its write end). */
	int parent_fds[7];
};

/*
 * The init: pid 1 of the executor's pid namespace, forked off at step 9b
 * of the setup (sequence.c); the program is its child, pid 2.  It is the
 * timeout's backstop (it kills the namespace at the deadline + the grace
 * whether or not the supervisor runs), it reaps every orphan, and it tells
 * the supervisor how the program ended, since the supervisor waits for
 * init, not for the program.
 *
 * The init channel: a SOCK_SEQPACKET pair, one fixed-size message each
 * way, written and read by this same binary (init is a fork of the
 * supervisor), so a message is the struct's bytes:
 *
 *   supervisor -> init  LAUNCH_INIT_ARM, in sandbox_start() before the go
 *                       byte: when the timeout ends (CLOCK_MONOTONIC);
 *   init -> supervisor  LAUNCH_INIT_ARMED, the answer: the deadline is set
 *                       and init locked down (not dumpable, its filter),
 *                       so the go byte may follow;
 *   supervisor -> init  LAUNCH_INIT_KILL, when the supervisor ends the run
 *                       (timeout, breach, cancel): init kills and reaps
 *                       the namespace itself, so the CPU time of every
 *                       process killed counts in its rusage (a SIGKILL
 *                       to init instead lets the kernel's teardown reap
 *                       them uncounted); the supervisor still sends
 *                       SIGKILL to init if it has not ended soon after;
 *   init -> supervisor  LAUNCH_INIT_END, once the program has ended and
 *                       everything else in the namespace with it: the
 *                       program's wait status, and whether init's own
 *                       deadline ended it.
 */
#define LAUNCH_INIT_ARM 0xc0d1a001u
#define LAUNCH_INIT_END 0xc0d1e002u
#define LAUNCH_INIT_ARMED 0xc0d1a003u
#define LAUNCH_INIT_KILL 0xc0d1c004u
#define LAUNCH_INIT_F_DEADLINE 1u
/* How long after the supervisor's timeout init's own kill comes: enough
 * that a running supervisor always acts first (and reports timed_out as it
 * always did), short enough to bound a stopped supervisor's run. */
#define LAUNCH_INIT_GRACE_MS 1000u
/* How long init waits for the namespace's other processes to be reaped
 * after killing them (their CPU time then counts in its rusage); past it,
 * init ends and the kernel's teardown of the namespace finishes. */
#define LAUNCH_INIT_LINGER_MS 1000u

struct launch_init_msg {
	uint32_t magic;       /* LAUNCH_INIT_ARM, _ARMED, _KILL or _END */
	uint32_t flags;       /* END: LAUNCH_INIT_F_DEADLINE */
	int32_t wstatus;      /* END: the program's, as wait4() gave it to init */
	uint32_t reserved;    /* 0 */
	uint64_t deadline_ns; /* ARM: CLOCK_MONOTONIC; init kills at it + the grace */
};

/* One message of the given magic: 0, or -1 with errno (EPIPE/ECONNRESET
 * when the other side is gone).  Neither allocates: init sends too. */
int launch_init_send(int fd, uint32_t magic, uint32_t flags, int32_t wstatus, uint64_t deadline_ns);
/* Reads one message without blocking: 1 and *m when a whole message of
 * magic was there, 0 when none was (EOF, nothing queued), -1 when what
 * came is not one (size, magic, reserved bits). */
int launch_init_recv(int fd, uint32_t magic, struct launch_init_msg *m);

/* Supervisor side: where this process's command line lies (from
 * /proc/self/stat); 0, or -1 and both 0. */
int launch_init_args(uintptr_t *start, uintptr_t *end);

/* pid 1's whole life after the fork (init.c): never returns.  prog is
 * the program's pid (2). */
void launch_init(const struct launch_plan *lp, pid_t prog) __attribute__((noreturn));

/* init's own seccomp filter (the program's is the policy's): the calls
 * its loop makes, every other call kills it.  For the unit test. */
const struct sock_filter *launch_init_filter(unsigned short *n);

/* strerror() for the child: glibc's strerror() translates through the
 * locale (a lock another thread of a server may have held at the clone)
 * and allocates for an unknown errno; strerrordesc_np() reads a table. */
static inline const char *launch_strerror(int e)
{
	const char *d = strerrordesc_np(e);

	return d != NULL ? d : "unknown error";
}

/* The child's whole life: never returns. */
void launch_child(const struct launch_plan *lp) __attribute__((noreturn));

/* Steps, one file each (mounts.c, identity.c, caps.c, landlock.c).  Each
 * returns 0, or -1 with msg filled. */
int mounts_build(const struct launch_plan *lp, char *msg, size_t n);
int identity_drop(const struct launch_plan *lp, char *msg, size_t n);
int caps_drop_all(char *msg, size_t n);
int landlock_apply(const struct launch_plan *lp, int *abi, char *msg, size_t n);

/* Supervisor side: uid_map / gid_map for the child's user namespace. */
int identity_write_maps(pid_t child, const struct launch_plan *lp, uid_t host_uid, gid_t host_gid,
			char *msg, size_t n);

/* Highest landlock ABI of this kernel, 0 when absent. */
int landlock_abi(void);

#endif
