/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sequence.c - the executor's one ordered setup, from clone to execve.
 *
 * Each step says why it comes where it does.  A failure at any step ends the
 * child with "stage\tmessage" on the error pipe: once setup has begun there
 * is no half-sandboxed fallback.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cordon/paths.h"
#include "runtime/launch/launch.h"

static __attribute__((noreturn)) void die(const struct launch_plan *lp, const char *stage, const char *m)
{
	char buf[600];
	int len = snprintf(buf, sizeof(buf), "%s\t%s", stage, m);

	if (len > 0 && write(lp->err_fd, buf, (size_t)len < sizeof(buf) ? (size_t)len : sizeof(buf) - 1) < 0) {
		/* nothing left to tell anyone */
	}
	_exit(127);
}

static int set_limit(int res, uint64_t v)
{
	struct rlimit rl = { (rlim_t)v, (rlim_t)v };

	return setrlimit(res, &rl);
}

static int rlimits_apply(const struct launch_plan *lp, char *msg, size_t n)
{
	const struct { int res; const char *name; uint64_t v; } lims[] = {
		{ RLIMIT_FSIZE, "FSIZE", lp->fsize },
		{ RLIMIT_NOFILE, "NOFILE", lp->nofile },
		{ RLIMIT_NPROC, "NPROC", lp->nproc },
		{ RLIMIT_AS, "AS", lp->as },
	};

	for (size_t i = 0; i < sizeof(lims) / sizeof(lims[0]); i++) {
		if (lims[i].v != 0 && set_limit(lims[i].res, lims[i].v) != 0) {
			snprintf(msg, n, "RLIMIT_%s %llu: %s", lims[i].name, (unsigned long long)lims[i].v, launch_strerror(errno));
			return -1;
		}
	}
	if (set_limit(RLIMIT_CORE, 0) != 0) {
		snprintf(msg, n, "RLIMIT_CORE 0: %s", launch_strerror(errno));
		return -1;
	}
	return 0;
}

/* network: loopback gives the program 127.0.0.1 of its own, still in an
 * empty namespace: nothing of the host's is reachable there. */
static int loopback_up(char *msg, size_t n)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = -1;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) != 0)
		goto out;
	ifr.ifr_flags |= IFF_UP;
	rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
out:
	if (rc != 0)
		snprintf(msg, n, "bring up lo: %s", launch_strerror(errno));
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Every descriptor but 0-2 and the start socket (moved to fd 3) goes,
 * including the error pipe: it is CLOEXEC, so it stays usable until
 * execve and closes there, which is how the supervisor learns that exec
 * succeeded.  Raw syscalls only: this runs after a raw clone of what may
 * be a multi-threaded server. */
static int fds_close_rest(const struct launch_plan *lp)
{
	/* The supervisor made the error pipe's fd above fd 3 (launch.h). */
	if (lp->err_fd <= LAUNCH_START_FD || lp->start_fd == lp->err_fd) {
		errno = EBADF;
		return -1;
	}
	if (lp->start_fd != LAUNCH_START_FD) {
		if (dup2(lp->start_fd, LAUNCH_START_FD) < 0)
			return -1;
	} else if (fcntl(LAUNCH_START_FD, F_SETFD, 0) != 0) {
		return -1;
	}
	if (lp->err_fd > LAUNCH_START_FD + 1 &&
	    syscall(SYS_close_range, LAUNCH_START_FD + 1, lp->err_fd - 1, 0) != 0)
		return -1;
	if (syscall(SYS_close_range, lp->err_fd + 1, ~0U, 0) != 0)
		return -1;
	return fcntl(lp->err_fd, F_SETFD, FD_CLOEXEC);
}

/* Closes every descriptor but 0-2 and the ones setup still needs (the
 * error, sync, hand-over, start and init channels). */
static int fds_keep_setup(const struct launch_plan *lp)
{
	int keep[] = { lp->err_fd, lp->sync_fd, lp->fd_sock, lp->start_fd, lp->init_fd };
	const size_t n = sizeof(keep) / sizeof(keep[0]);
	int from = 3;

	/* sorted by hand: five numbers, no qsort after a raw clone */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
			int t = keep[j];

			keep[j] = keep[j - 1];
			keep[j - 1] = t;
		}
	for (size_t i = 0; i < n; i++) {
		if (keep[i] < from)
			continue;
		if (keep[i] > from && syscall(SYS_close_range, from, keep[i] - 1, 0) != 0)
			return -1;
		from = keep[i] + 1;
	}
	return (int)syscall(SYS_close_range, from, ~0U, 0);
}

void launch_child(const struct launch_plan *lp)
{
	char msg[512] = "";
	char byte;
	sigset_t all;
	pid_t init_child;
	int abi = 0;

	for (size_t i = 0; i < sizeof(lp->parent_fds) / sizeof(lp->parent_fds[0]); i++)
		if (lp->parent_fds[i] >= 0)
			close(lp->parent_fds[i]);
	/* 0a. Into our v1 cgroups, first thing: we are single-threaded and
	 * still the supervisor's ids, and nothing is charged to the
	 * supervisor's cgroups yet.  Writing "0" to `tasks` moves us without
	 * the threadgroup lock whose RCU wait a move from outside pays (on v2
	 * the clone put us there already). */
	if (cgroup_self_attach(lp->cg_tasks) != 0)
		die(lp, "cgroup", launch_strerror(errno));
	/* 0. A session of our own: kill(0, ...) and terminal signals must not
	 * reach the supervisor's process group (rootless, only the uid check
	 * would stand between them, and it does not: same uid). */
	if (setsid() < 0)
		die(lp, "session", launch_strerror(errno));
	/* 1. Wait until the supervisor has written our id maps: nothing below
	 * may run unmapped.  EOF means the supervisor is gone. */
	if (read(lp->sync_fd, &byte, 1) != 1)
		die(lp, "sync", "supervisor went away before setup");
	if (dup2(lp->stdin_fd, 0) < 0 || dup2(lp->stdout_fd, 1) < 0 || dup2(lp->stderr_fd, 2) < 0)
		die(lp, "stdio", launch_strerror(errno));
	/* 1b. Everything else the clone copied from the supervisor goes now,
	 * not at exec: a server holds hundreds of descriptors, and with them
	 * still open, RLIMIT_NOFILE (step 4) would leave no free number for
	 * what setup opens later (landlock's ruleset). */
	if (fds_keep_setup(lp) != 0)
		die(lp, "fds", launch_strerror(errno));
	/* 2. The root: needs CAP_SYS_ADMIN of our user namespace, so first.
	 * It hands the supervisor the private filesystems (workspace, client,
	 * socket) to fill while we go on. */
	if (mounts_build(lp, msg, sizeof(msg)) != 0)
		die(lp, "mounts", msg);
	/* 3. The supervisor attached us to our cgroups while we built the root
	 * (on cgroup v1 a move can wait for an RCU grace period, milliseconds
	 * we need not spend in series) and filled the private filesystems;
	 * the second byte says both are done. */
	if (read(lp->sync_fd, &byte, 1) != 1)
		die(lp, "sync", "supervisor went away before the cgroups were set");
	/* 3b. A cgroup namespace rooted at our own cgroup, made only now that
	 * we are in it: /proc/self/cgroup then names no host cgroup (which
	 * carries the supervisor's pid).  Needs CAP_SYS_ADMIN: before the drop. */
	if (unshare(CLONE_NEWCGROUP) != 0)
		die(lp, "namespaces", launch_strerror(errno));
	/* 3c. Loopback needs CAP_NET_ADMIN of our namespaces: before the drop. */
	if (lp->loopback && loopback_up(msg, sizeof(msg)) != 0)
		die(lp, "network", msg);
	/* 4. Limits: lowering needs no privilege, and NPROC must be in place
	 * before the uid it counts is ours. */
	if (rlimits_apply(lp, msg, sizeof(msg)) != 0)
		die(lp, "rlimits", msg);
	/* 5. Identity: needs CAP_SETUID/CAP_SETGID, so before the caps go. */
	if (identity_drop(lp, msg, sizeof(msg)) != 0)
		die(lp, "identity", msg);
	/* 6. Capabilities: every set emptied and checked. */
	if (caps_drop_all(msg, sizeof(msg)) != 0)
		die(lp, "capabilities", msg);
	/* 7. Parent death: the credential changes above cleared any earlier
	 * setting, so it is set here, and the supervisor re-checked. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
		die(lp, "pdeathsig", launch_strerror(errno));
	{
		/* getppid() is 0 across a pid namespace, so the sync pipe tells
		 * instead: the supervisor holds its write end until we are
		 * reaped, and a hang-up means it died before the line above. */
		struct pollfd pfd = { .fd = lp->sync_fd, .events = POLLIN };

		if (poll(&pfd, 1, 0) < 0 || (pfd.revents & (POLLHUP | POLLERR)))
			die(lp, "pdeathsig", "supervisor went away during setup");
	}
	/* 8. no_new_privs: required by landlock and seccomp for an
	 * unprivileged caller, and makes setuid binaries inert. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		die(lp, "no_new_privs", launch_strerror(errno));
	/* 9. Landlock, after pivot_root: its rules name the new root's paths. */
	if (lp->landlock && landlock_apply(lp, &abi, msg, sizeof(msg)) != 0)
		die(lp, "landlock", msg);
	/* 9b. The init (init.c): this process stays pid 1 of the pid
	 * namespace, the timeout's backstop and the reaper, and its child,
	 * pid 2, goes on to be the program.  After the identity, the
	 * capabilities, no_new_privs and landlock, which the fork keeps for
	 * both; before step 10, which sets their descriptors and signals
	 * apart.  A raw fork: glibc's runs atfork handlers and takes locks
	 * another thread of a server may have held at the clone. */
	init_child = (pid_t)syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
	if (init_child < 0)
		die(lp, "init", launch_strerror(errno));
	if (init_child > 0)
		launch_init(lp, init_child);
	/* The program leads a process group of its own, as it did as pid 1:
	 * kill(0, sig) reaches its own processes, not init. */
	if (setpgid(0, 0) != 0)
		die(lp, "session", launch_strerror(errno));
	/* 10. Descriptors and signals: nothing of the supervisor's survives. */
	if (fds_close_rest(lp) != 0)
		die(lp, "fds", launch_strerror(errno));
	/* A umask of our own: the program's files must not depend on how
	 * the supervisor was started (a service's UMask=0077 would make every
	 * artifact 0600 under serve and not under a shell's run). */
	umask(022);
	sigemptyset(&all);
	/* Every signal back to its default: the supervisor ignores SIGPIPE
	 * (a peer that died must be an error code, not its end), and a caller
	 * may have ignored SIGINT; an ignored signal survives exec, and Python
	 * then has no KeyboardInterrupt.  Blocked ones are unblocked. */
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && (sig < 32 || sig >= SIGRTMIN))
			signal(sig, SIG_DFL);
	if (sigprocmask(SIG_SETMASK, &all, NULL) != 0)
		die(lp, "signals", launch_strerror(errno));
	/* 11. Seccomp last: the filter may refuse calls the steps above need. */
	if (lp->filter != NULL) {
		struct sock_fprog prog = { (unsigned short)lp->nfilter, (struct sock_filter *)lp->filter };

		if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0)
			die(lp, "seccomp", launch_strerror(errno));
	}
	{
		/* -u: stdout and stderr unbuffered, so what the program printed
		 * before a kill (its timeout, a limit, a cancel) is in the
		 * result; a buffered interpreter lost it with its memory. */
		char *const argv[] = { (char *)"python3", (char *)"-I", (char *)"-u", (char *)SANDBOX_LOADER, NULL };

		/* 12. The interpreter, with the environment of the plan. */
		execve(lp->interpreter, argv, lp->envp);
		snprintf(msg, sizeof(msg), "execve %s: %s", lp->interpreter, launch_strerror(errno));
		die(lp, "exec", msg);
	}
}
