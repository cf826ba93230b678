/* SPDX-License-Identifier: Apache-2.0 */
/*
 * init.c - pid 1 of the executor's pid namespace (launch.h, "The init").
 *
 * The setup forks at step 9b (sequence.c): this process stays pid 1 for
 * the whole run and its child, pid 2, becomes the program.  It does what
 * the supervisor cannot be relied on for:
 *
 *   the deadline  the supervisor sends when the timeout ends before its go
 *                 byte; at that time + LAUNCH_INIT_GRACE_MS init kills every
 *                 process of the namespace, whether or not the supervisor
 *                 runs (a stopped supervisor's own timeout never fires);
 *   reaping       every process re-parented to pid 1 is reaped, so an
 *                 orphan is no zombie for the rest of the run, and the CPU
 *                 time of all it reaped is in the rusage that the
 *                 supervisor's wait4() of init reads;
 *   the end       when the program ends, the rest of the namespace is
 *                 killed and reaped (as when the program was pid 1 and its
 *                 end took the namespace with it), and how the program
 *                 ended goes to the supervisor, which reaps init, not it.
 *
 * Why the program cannot stop it: the kernel delivers a signal sent from
 * inside a pid namespace to its init only when init has a handler for it,
 * and this init has none (SIGCHLD is blocked and read from a signalfd), so
 * SIGKILL and SIGSTOP from the program are dropped; from its arming on
 * (before the program's first line) it is not dumpable, so neither ptrace
 * nor /proc/1/mem reach the copy of the supervisor's memory that the fork
 * left it, and a seccomp filter of its own allows the few calls its loop
 * makes and kills it on any other; it holds no capability and the
 * program's landlock domain.  Its filter is not the policy's: a
 * profile is written for the program and may refuse wait4 or kill, which
 * this loop cannot do without, while the list here is fixed by this file.
 *
 * Like all of the setup, it runs after a raw clone of what may be a
 * multi-threaded server: raw syscalls, nothing that allocates or locks.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtime/launch/launch.h"

#if defined(__x86_64__)
#define INIT_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define INIT_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "init.c: no seccomp architecture for this target"
#endif

#define INIT_KILL BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)
#define INIT_ALLOW(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

/* Every call the loop below makes, through glibc as it makes them (poll()
 * is the poll syscall where the architecture has one); clock_gettime is
 * the vDSO's on most hosts, a syscall on the rest. */
static const struct sock_filter init_filter[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, INIT_AUDIT_ARCH, 1, 0),
	INIT_KILL,
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#ifdef __x86_64__
	/* x32 numbers: the same arch, bit 30 set */
	BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, __X32_SYSCALL_BIT, 0, 1),
	INIT_KILL,
	INIT_ALLOW(__NR_poll),
#endif
	INIT_ALLOW(__NR_ppoll),
	INIT_ALLOW(__NR_read),       /* the signalfd */
	INIT_ALLOW(__NR_recvfrom),   /* the init channel */
	INIT_ALLOW(__NR_sendto),
	INIT_ALLOW(__NR_close),      /* the error pipe, once set up */
	INIT_ALLOW(__NR_wait4),
	INIT_ALLOW(__NR_kill),
	INIT_ALLOW(__NR_clock_gettime),
	INIT_ALLOW(__NR_restart_syscall),
	INIT_ALLOW(__NR_exit_group),
	INIT_ALLOW(__NR_exit),
	INIT_KILL,
};

const struct sock_filter *launch_init_filter(unsigned short *n)
{
	*n = (unsigned short)(sizeof(init_filter) / sizeof(init_filter[0]));
	return init_filter;
}

/* ---- the init channel: both sides ---------------------------------------- */

int launch_init_send(int fd, uint32_t magic, uint32_t flags, int32_t wstatus, uint64_t deadline_ns)
{
	struct launch_init_msg m = { .magic = magic, .flags = flags, .wstatus = wstatus, .deadline_ns = deadline_ns };
	ssize_t w;

	do
		w = send(fd, &m, sizeof(m), MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		return -1;
	if (w != (ssize_t)sizeof(m)) {
		errno = EMSGSIZE;
		return -1;
	}
	return 0;
}

int launch_init_recv(int fd, uint32_t magic, struct launch_init_msg *m)
{
	ssize_t r;

	/* MSG_TRUNC: a longer message answers its real length, so it is
	 * refused instead of passing cut. */
	do
		r = recv(fd, m, sizeof(*m), MSG_DONTWAIT | MSG_TRUNC);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
	if (r == 0) {
		errno = ECONNRESET;
		return -1;
	}
	if (r != (ssize_t)sizeof(*m) || m->magic != magic || m->reserved != 0 ||
	    (m->flags & ~LAUNCH_INIT_F_DEADLINE) != 0) {
		errno = EPROTO;
		return -1;
	}
	return 1;
}

int launch_init_args(uintptr_t *start, uintptr_t *end)
{
	char buf[2048], *p, *e;
	unsigned long long v[2];
	ssize_t got = -1;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC), rc = -1;

	*start = *end = 0;
	if (fd >= 0)
		got = read(fd, buf, sizeof(buf) - 1);
	if (got <= 0)
		goto out;
	buf[got] = '\0';
	/* Fields 48 and 49 (proc(5)), counted after the command name, which
	 * may hold spaces and parentheses: the last ')' ends it. */
	if ((p = strrchr(buf, ')')) == NULL)
		goto out;
	p++;
	for (int field = 3; field < 48; field++) {
		p += strspn(p, " ");
		p += strcspn(p, " ");
	}
	for (int i = 0; i < 2; i++) {
		errno = 0;
		v[i] = strtoull(p, &e, 10);
		if (e == p || errno != 0)
			goto out;
		p = e;
	}
	if (v[1] <= v[0] || v[1] - v[0] > (1u << 20))
		goto out;
	*start = (uintptr_t)v[0];
	*end = (uintptr_t)v[1];
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

/* ---- pid 1 ----------------------------------------------------------------- */

static __attribute__((noreturn)) void init_die(const struct launch_plan *lp, const char *what)
{
	char buf[300];
	int len = snprintf(buf, sizeof(buf), "init\t%s: %s", what, launch_strerror(errno));

	if (len > 0 && write(lp->err_fd, buf, (size_t)len < sizeof(buf) ? (size_t)len : sizeof(buf) - 1) < 0) {
		/* nothing left to tell anyone */
	}
	/* pid 1 ending takes the program (pid 2) with it */
	_exit(127);
}

static uint64_t init_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Every descriptor but the init channel and the error pipe: init must not
 * hold the program's stdio (the supervisor reads them to EOF), its start
 * socket (whose EOF tells the supervisor the interpreter died), or
 * anything else the clone copied. */
static int init_fds(const struct launch_plan *lp)
{
	int lo = lp->init_fd < lp->err_fd ? lp->init_fd : lp->err_fd;
	int hi = lp->init_fd < lp->err_fd ? lp->err_fd : lp->init_fd;

	if (lo == hi) {
		errno = EBADF;
		return -1;
	}
	if (lo > 0 && syscall(SYS_close_range, 0, lo - 1, 0) != 0)
		return -1;
	if (hi > lo + 1 && syscall(SYS_close_range, lo + 1, hi - 1, 0) != 0)
		return -1;
	return (int)syscall(SYS_close_range, hi + 1, ~0U, 0);
}

/* Every disposition back to the default, so no handler copied from the
 * supervisor (a server's own) could run here, and the kernel drops each
 * signal the program sends; SIGCHLD alone blocked, read from a signalfd. */
static int init_signals(sigset_t *chld)
{
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && (sig < 32 || sig >= SIGRTMIN))
			signal(sig, SIG_DFL);
	sigemptyset(chld);
	sigaddset(chld, SIGCHLD);
	if (sigprocmask(SIG_SETMASK, chld, NULL) != 0)
		return -1;
	return signalfd(-1, chld, SFD_NONBLOCK | SFD_CLOEXEC);
}

/* Milliseconds from now until t (ns), rounded up, for poll(). */
static int init_ms_until(uint64_t now, uint64_t t)
{
	uint64_t ms = t > now ? (t - now + 999999u) / 1000000u : 0;

	return ms > 60000 ? 60000 : (int)ms;
}

/* Once armed, before the supervisor lets the program's code run: from
 * here on nothing of init is the program's to reach.  Not dumpable: the
 * program runs as our uid, and a dumpable init would let it ptrace us or
 * read /proc/1/mem, a copy of the supervisor's memory.  (Not before: until
 * the go byte only the interpreter and the policy's preloads run, and a
 * rootless supervisor, our uid without a capability, still reads
 * /proc/<init>/ns when it starts the bridge.)  Then the filter, which
 * allows only what the loop calls.  A failure ends init, and with it the
 * program, before its first line: the supervisor sees no ARMED. */
static void init_lockdown(const struct launch_plan *lp)
{
	struct sock_fprog fprog;
	unsigned short nf;

	fprog.filter = (struct sock_filter *)launch_init_filter(&nf);
	fprog.len = nf;
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		init_die(lp, "PR_SET_DUMPABLE");
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) != 0)
		init_die(lp, "seccomp");
	close(lp->err_fd);
}

void launch_init(const struct launch_plan *lp, pid_t prog)
{
	sigset_t chld;
	int sfd, ctl = lp->init_fd, prog_status = 0, prog_done = 0, killed = 0, asked = 0;
	uint32_t flags = 0;
	uint64_t deadline = 0, linger = 0;

	/* kill(-1) below must mean "every other process of this pid
	 * namespace": anywhere but at its pid 1 it means far more. */
	if (getpid() != 1) {
		errno = EINVAL;
		init_die(lp, "not pid 1 of a pid namespace");
	}
	/* What is left readable of pid 1 is its name and, through
	 * /proc/1/cmdline, its command line: the supervisor's, which names
	 * host paths (the policy, the run directory). */
	if (prctl(PR_SET_NAME, "cordon-init", 0, 0, 0) != 0)
		init_die(lp, "PR_SET_NAME");
	if (lp->args_end > lp->args_start)
		memset((void *)lp->args_start, 0, lp->args_end - lp->args_start);
	if (init_fds(lp) != 0)
		init_die(lp, "close the inherited descriptors");
	if ((sfd = init_signals(&chld)) < 0)
		init_die(lp, "signals");

	for (;;) {
		struct pollfd pfd[2] = { { .fd = sfd, .events = POLLIN }, { .fd = ctl, .events = POLLIN } };
		uint64_t now;
		pid_t r;
		int st, wait_ms;

		while ((r = wait4(-1, &st, WNOHANG, NULL)) > 0)
			if (r == prog) {
				prog_status = st;
				prog_done = 1;
			}
		/* No child left: the program was one until reaped, so it is
		 * done, and nothing else is in the namespace. */
		if (r < 0 && errno == ECHILD)
			break;
		now = init_now_ns();
		if (!killed && (prog_done || asked || (deadline != 0 && now >= deadline))) {
			if (!prog_done && !asked)
				flags |= LAUNCH_INIT_F_DEADLINE;
			/* From pid 1, every other process of the namespace. */
			kill(-1, SIGKILL);
			killed = 1;
			linger = now + LAUNCH_INIT_LINGER_MS * 1000000ull;
			continue;
		}
		if (killed && now >= linger)
			break;
		wait_ms = killed ? init_ms_until(now, linger) : deadline != 0 ? init_ms_until(now, deadline) : -1;
		if (poll(pfd, 2, wait_ms) < 0 && errno != EINTR)
			break; /* cannot watch any more: ending takes everything with us */
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si[8];

			while (read(sfd, si, sizeof(si)) > 0)
				;
		}
		if (pfd[1].revents) {
			struct launch_init_msg m;
			/* Before ARM only ARM is valid, after it only KILL. */
			int got = launch_init_recv(ctl, deadline == 0 ? LAUNCH_INIT_ARM : LAUNCH_INIT_KILL, &m);

			if (got == 1 && deadline != 0) {
				asked = 1;
			} else if (got == 1 && m.deadline_ns != 0) {
				deadline = m.deadline_ns + LAUNCH_INIT_GRACE_MS * 1000000ull;
				init_lockdown(lp);
				if (launch_init_send(ctl, LAUNCH_INIT_ARMED, 0, 0, 0) != 0)
					deadline = 1;
			} else if (got < 0) {
				/* The supervisor is gone (or speaks nonsense):
				 * nothing may run unsupervised, so the
				 * deadline is now. */
				ctl = -1;
				deadline = 1;
			}
		}
	}
	if (prog_done && ctl >= 0 && launch_init_send(ctl, LAUNCH_INIT_END, flags, prog_status, 0) != 0) {
		/* the supervisor is gone; our end still tells it something */
	}
	/* exit_group itself, not _exit(): a sanitizer's _exit interceptor
	 * first calls sigaltstack, which the filter answers by killing us,
	 * and our end would read as SIGSYS instead of the program's. */
	syscall(SYS_exit_group, !prog_done ? 127 : WIFEXITED(prog_status) ? WEXITSTATUS(prog_status) : 128 + WTERMSIG(prog_status));
	_exit(127); /* not reached: for the compiler's noreturn */
}
