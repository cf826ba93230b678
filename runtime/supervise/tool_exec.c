/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tool_exec.c - run one tool implementation on the trusted side
 * (docs/tool-exec.md).
 *
 * One clone(CLONE_VM | CLONE_VFORK) and one poll() loop per call.  The
 * loop watches the child through a pidfd, so it needs no SIGCHLD: the
 * supervisor's main thread keeps its signalfd to itself, and several
 * bridge threads can run tools at once without stealing each other's
 * children (each waits for its own pid).
 *
 * The tool gets its own process group.  Every way a run ends - timeout,
 * cancel, too much output, or a normal exit - sends SIGKILL to the whole
 * group, so a grandchild that inherited stdout cannot keep us reading.
 * A tool that leaves its group (setsid, setpgid) escapes that kill; we then
 * stop reading its pipes after a short grace and let it be.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/utf8.h"
#include "runtime/json_strict.h"
#include "runtime/supervise/secrets.h"
#include "runtime/supervise/tool_exec.h"

/* After the tool exits, how long its pipes may take to reach EOF: data it
 * wrote is already in them; only a process outside its group can hold
 * them open longer, and we do not wait for that one. */
#define TE_DRAIN_MS 100
/* While a killed tool has not yet been seen to die, SIGKILL is sent again
 * this often (a tool that was still in the middle of fork). */
#define TE_REKILL_MS 100
/* Reads per fd per poll round: a fast writer cannot starve the pidfd,
 * the timeout or the other pipe. */
#define TE_READS_PER_ROUND 64
/* The child's own stack (a guard page below it): te_child and libc's
 * syscall wrappers need well under a page of it. */
#define TE_CHILD_STACK (64 * 1024)

/* ASan cannot cope with a CLONE_VM child: its noreturn hook in the child
 * takes our stack for the child's and reports a stack-buffer-overflow in
 * its own sigaltstack interceptor, and its interceptors would keep their
 * state in our memory.  TSan neither: a CLONE_VM child shares its shadow
 * memory and thread state with the parent, so it would report the child's
 * steps as races with the thread that cloned it.  Those builds fork
 * instead; the child's steps are the same code. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TE_USE_FORK 1
#else
#define TE_USE_FORK 0
#endif

/* Where the child stopped when it could not start; sent on the fail pipe
 * as the only thing ever written to it. */
enum te_stage {
	TE_STAGE_SIGNALS = 1,
	TE_STAGE_PGID,
	TE_STAGE_PDEATHSIG,
	TE_STAGE_PARENT,
	TE_STAGE_STDIO,
	TE_STAGE_FDS,
	TE_STAGE_EXEC,
	TE_STAGE_CGROUP,
	TE_STAGE_CAPS,
	TE_STAGE_IDS,
	TE_STAGE_NNP,
	TE_STAGE_CWD,
};

struct te_fail {
	int stage; /* enum te_stage */
	int err;   /* errno */
};

/* One output pipe.  stdout keeps its first max bytes (over says there was
 * more: the answer is then refused).  stderr keeps its last max bytes in a
 * ring (tail): what a failing tool wrote last is why it failed; dropped
 * counts what went out at the front. */
struct te_capture {
	int fd;
	char *buf; /* cap + 1 bytes: room for the NUL */
	size_t len, cap, max;
	int over;
	int tail;       /* keep the last max bytes instead of the first */
	size_t start;   /* tail: where the oldest kept byte is in buf */
	uint64_t dropped; /* tail: bytes read and no longer kept */
};

enum te_kill {
	TE_KILL_NONE = 0,
	TE_KILL_TIMEOUT,
	TE_KILL_CANCEL,
	TE_KILL_OVERFLOW,
};

struct te_run {
	const struct tool_exec_req *req;
	size_t max_output;
	pid_t pid; /* also the process group id */
	int pidfd;
	int in_fd; /* write end of the tool's stdin, non-blocking */
	size_t in_off;
	int epipe; /* a write to stdin raised SIGPIPE (blocked here) */
	struct te_capture out, err;
	int started; /* the child was started; 0 when cancelled before */
	int exited;  /* the pidfd said so; not reaped yet */
	enum te_kill killed;
	uint64_t start, deadline, drain_until, rekill_at;
};

static uint64_t te_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* strerror() may format unknown numbers into a shared buffer; this runs in
 * several threads at once. */
static const char *te_strerror(int e)
{
	const char *s = strerrordesc_np(e);

	return s != NULL ? s : "unknown error";
}

static void te_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* ---- the child, between clone and execve --------------------------------- */

/* Everything the child needs, made ready by the parent before the clone:
 * the child only reads it. */
struct te_child_args {
	const struct tool_exec_req *req;
	int stdio[3]; /* the tool's ends of the stdin, stdout, stderr pipes */
	int fail_fd;
	pid_t parent;
};

static void te_child_fail(int fd, int stage, int err) __attribute__((noreturn));
static void te_child_fail(int fd, int stage, int err)
{
	struct te_fail f = { stage, err };
	ssize_t w;

	do
		w = write(fd, &f, sizeof(f));
	while (w < 0 && errno == EINTR);
	_exit(127);
}

/*
 * The child runs in the supervisor's memory (CLONE_VM) on a stack of its
 * own, while the calling thread waits for its execve or exit (CLONE_VFORK)
 * and the other threads run on.  So: system calls through libc's thin
 * wrappers only - no malloc, no stdio, nothing that takes a lock another
 * thread may hold, nothing that writes memory of ours.  The one exception
 * is errno, which the wrappers set: it is the waiting thread's, and that
 * thread reads none across the clone.  Under fork (the sanitizer build)
 * the same rules keep the child clear of locks held at the fork.  Each
 * step says why it comes where it does.
 */
/*
 * Joins the call's cgroups: one write of "0" (the writer itself) to each
 * file the parent opened (v1 `tasks`, which moves this single-threaded
 * child without the threadgroup lock; cgroup.procs on v2).  Still
 * privileged here, so the kernel's check of the writer passes.
 */
static int te_child_cgroup(const struct tool_exec_req *req)
{
	for (unsigned i = 0; i < req->ncg_procs; i++) {
		ssize_t w;

		do
			w = write(req->cg_procs[i], "0", 1);
		while (w < 0 && errno == EINTR);
		if (w != 1)
			return -1;
	}
	return 0;
}

/*
 * Becomes the tool's identity.  Raw system calls, not libc's setresuid()
 * and friends: in a multi-threaded process those signal every thread of
 * the thread list so that all change together, and the list they walk is
 * the supervisor's (CLONE_VM), with its lock possibly held by another of
 * our threads.  The raw calls change this task's credentials only, which
 * is what the child wants.
 *
 * Order: the bounding set can only be emptied while we still hold
 * CAP_SETPCAP, and the ambient set while we may; groups and gid before the
 * uid, which takes the right to change them; setresuid to a non-zero uid
 * (no keep-caps) clears the permitted and effective sets, and capset()
 * then clears the inheritable one as well.
 */
static int te_child_identity(const struct tool_exec_req *req, int *stage)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct none[2];

	*stage = TE_STAGE_CAPS;
	for (unsigned long cap = 0; cap < 64; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
			return -1;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
		return -1;
	*stage = TE_STAGE_IDS;
	if (syscall(SYS_setgroups, 0, NULL) != 0 ||
	    syscall(SYS_setresgid, req->gid, req->gid, req->gid) != 0 ||
	    syscall(SYS_setresuid, req->uid, req->uid, req->uid) != 0)
		return -1;
	*stage = TE_STAGE_CAPS;
	for (int i = 0; i < 2; i++)
		none[i] = (struct __user_cap_data_struct){ 0, 0, 0 };
	if (syscall(SYS_capset, &hdr, none) != 0)
		return -1;
	return 0;
}

static void te_child(const struct te_child_args *a) __attribute__((noreturn));
static void te_child(const struct te_child_args *a)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t none;
	int fail_fd = a->fail_fd;
	int hi[3];

	/* 1. Signals.  The parent blocked all of them around the clone, so no
	 * handler of the supervisor's can run here - on our memory - before
	 * its disposition is back to default; only then is the mask emptied.
	 * The dispositions are the child's own copy (no CLONE_SIGHAND): ours
	 * stay as they are.  Ignored signals (SIGPIPE in many daemons) would
	 * survive execve otherwise.  sigaction refuses SIGKILL, SIGSTOP and
	 * libc's own signals: nothing to reset (libc's handlers of those
	 * ignore every sender but the process itself). */
	for (int sig = 1; sig < NSIG; sig++)
		(void)sigaction(sig, &dfl, NULL);
	if (sigemptyset(&none) != 0 || sigprocmask(SIG_SETMASK, &none, NULL) != 0)
		te_child_fail(fail_fd, TE_STAGE_SIGNALS, errno);
	/* 2. A process group of its own, before anything can fork, so that
	 * one kill(-pgid) reaches every process the tool starts.  Under
	 * CLONE_VFORK this is done before the parent runs again. */
	if (setpgid(0, 0) != 0)
		te_child_fail(fail_fd, TE_STAGE_PGID, errno);
	/* 3. Into the call's cgroups, before anything can fork, so that
	 * nothing the tool starts - also what leaves its process group with
	 * setsid() - is outside them: the cgroup is what kills it all. */
	if (te_child_cgroup(a->req) != 0)
		te_child_fail(fail_fd, TE_STAGE_CGROUP, errno);
	/* 4. The tool's identity, while still able to change it.  Before
	 * PDEATHSIG: a change of credentials clears that setting. */
	if (a->req->set_ids) {
		int stage;

		if (te_child_identity(a->req, &stage) != 0)
			te_child_fail(fail_fd, stage, errno);
	}
	/* 5. Die with the supervisor.  The "parent" of PDEATHSIG is the
	 * calling thread, which stays in tool_exec_run() until we are reaped.
	 * A supervisor that died before the prctl is caught by getppid(). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
		te_child_fail(fail_fd, TE_STAGE_PDEATHSIG, errno);
	if (getppid() != a->parent)
		te_child_fail(fail_fd, TE_STAGE_PARENT, 0);
	/* 6. stdio.  Every pipe end first moves to 3 or above: if the
	 * supervisor runs with 0-2 closed, a pipe end may already sit on its
	 * target number, and dup2(fd, fd) would leave its close-on-exec flag
	 * set.  The fail pipe settles on 3, still close-on-exec: its EOF at
	 * execve is how the parent learns that exec worked.  The fd table is
	 * the child's own copy (no CLONE_FILES). */
	for (int i = 0; i < 3; i++)
		if ((hi[i] = fcntl(a->stdio[i], F_DUPFD_CLOEXEC, 4)) < 0)
			te_child_fail(fail_fd, TE_STAGE_STDIO, errno);
	if (fail_fd != 3) {
		int f = fcntl(fail_fd, F_DUPFD_CLOEXEC, 4);

		if (f < 0 || dup3(f, 3, O_CLOEXEC) < 0)
			te_child_fail(fail_fd, TE_STAGE_STDIO, errno);
		fail_fd = 3;
	}
	for (int i = 0; i < 3; i++)
		if (dup2(hi[i], i) < 0)
			te_child_fail(fail_fd, TE_STAGE_STDIO, errno);
	/* 7. Nothing else of the supervisor's goes with the tool: not the
	 * bridge socket, the ledger, the other calls' pipes, the cgroup.procs
	 * files, or an fd some library opened without O_CLOEXEC. */
	if (close_range(4, ~0U, 0) != 0)
		te_child_fail(fail_fd, TE_STAGE_FDS, errno);
	/* 8. No setuid binary or file capability can give back what step 4
	 * took; last, since nothing after it needs privilege. */
	if (a->req->no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		te_child_fail(fail_fd, TE_STAGE_NNP, errno);
	/* 9. The supervisor's working directory may be nowhere the tool's
	 * identity may go (or somewhere it should not look). */
	if (chdir("/") != 0)
		te_child_fail(fail_fd, TE_STAGE_CWD, errno);
	execve(a->req->argv[0], (char *const *)a->req->argv, a->req->envp);
	te_child_fail(fail_fd, TE_STAGE_EXEC, errno);
}

#if !TE_USE_FORK
static int te_child_main(void *arg)
{
	te_child(arg);
}
#endif

/*
 * Starts the child; called with every signal blocked.  Returns its pid,
 * with its pidfd in *pidfd when the start gave one (else -1), or -1 with
 * msg.
 *
 * Why not fork(): it copies the page tables of the whole supervisor, which
 * cost 0.3-0.6 ms a call here and grows with its resident memory.  Why not
 * posix_spawn(), which avoids that copy the same way: it cannot set
 * PDEATHSIG or check getppid() in the child.  So this is what posix_spawn
 * does, with our child: CLONE_VM shares our memory instead of copying it,
 * CLONE_VFORK keeps this thread waiting until the child has exec'd or
 * exited (so its stack can go, and a failed step is already in the fail
 * pipe), CLONE_PIDFD hands us the pidfd before the child runs.
 */
static pid_t te_start(const struct te_child_args *a, int *pidfd, char *msg, size_t n)
{
	pid_t pid;

	*pidfd = -1;
#if TE_USE_FORK
	pid = fork();
	if (pid == 0)
		te_child(a);
	if (pid < 0) {
		snprintf(msg, n, "fork: %s", te_strerror(errno));
		return -1;
	}
	/* Also from this side: a kill(-pid) right after fork must not miss
	 * the group because the child has not run yet.  EACCES after its
	 * execve is fine, it did it itself by then. */
	(void)setpgid(pid, pid);
#else
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len = page + TE_CHILD_STACK;
	char *stack;
	int err;

	/* A guard page below: a child that overran its stack would write
	 * into whatever mapping lies under it, in our memory. */
	stack = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED) {
		snprintf(msg, n, "mmap for the child's stack: %s", te_strerror(errno));
		return -1;
	}
	if (mprotect(stack, page, PROT_NONE) != 0) {
		snprintf(msg, n, "mprotect the child's guard page: %s", te_strerror(errno));
		(void)munmap(stack, len);
		return -1;
	}
	pid = clone(te_child_main, stack + len, CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, (void *)a, pidfd);
	err = errno;
	/* The child has exec'd (into a memory of its own) or exited: the
	 * stack is no one's now. */
	(void)munmap(stack, len);
	if (pid < 0) {
		*pidfd = -1;
		snprintf(msg, n, "clone: %s", te_strerror(err));
		return -1;
	}
#endif
	return pid;
}

/* ---- the parent's loop ---------------------------------------------------- */

/* Grows the buffer towards max + 1 bytes (the one more shows that there
 * was more). */
static int te_capture_grow(struct te_capture *c)
{
	size_t cap = c->cap ? c->cap * 2 : 16384;
	char *p;

	if (cap > c->max + 1)
		cap = c->max + 1;
	p = realloc(c->buf, cap + 1);
	if (p == NULL)
		return -1;
	c->buf = p;
	c->cap = cap;
	return 0;
}

/* Puts k bytes into a tail capture's ring (buf of max bytes), the oldest
 * bytes making room. */
static void te_tail_put(struct te_capture *c, const char *p, size_t k)
{
	size_t at, first;

	if (c->max == 0) {
		c->dropped += k;
		return;
	}
	if (k >= c->max) {
		c->dropped += c->len + (k - c->max);
		memcpy(c->buf, p + (k - c->max), c->max);
		c->start = 0;
		c->len = c->max;
		return;
	}
	if (c->len + k > c->max) {
		size_t d = c->len + k - c->max;

		c->start = (c->start + d) % c->max;
		c->len -= d;
		c->dropped += d;
	}
	at = (c->start + c->len) % c->max;
	first = k < c->max - at ? k : c->max - at;
	memcpy(c->buf + at, p, first);
	memcpy(c->buf, p + first, k - first);
	c->len += k;
}

/* Reads what is there.  EOF or a read error closes the fd.  Returns -1
 * only when out of memory. */
static int te_capture_read(struct te_capture *c)
{
	char sink[4096];

	if (c->tail && c->buf == NULL && (c->buf = malloc(c->max + 1)) == NULL)
		return -1;
	for (int i = 0; i < TE_READS_PER_ROUND && c->fd >= 0; i++) {
		char *dst = sink;
		size_t room = sizeof(sink);
		ssize_t r;

		if (!c->over && !c->tail) {
			if (c->len == c->cap && te_capture_grow(c) < 0)
				return -1;
			dst = c->buf + c->len;
			room = c->cap - c->len;
		}
		r = read(c->fd, dst, room);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return 0;
		if (r <= 0) {
			te_close(&c->fd);
			return 0;
		}
		if (c->tail) {
			te_tail_put(c, sink, (size_t)r);
			continue;
		}
		if (c->over)
			continue;
		c->len += (size_t)r;
		if (c->len > c->max) {
			c->len = c->max;
			c->over = 1;
		}
	}
	return 0;
}

/* The write end is non-blocking: a tool that never reads its stdin fills
 * the pipe and we go on watching its exit and output meanwhile. */
static void te_write_input(struct te_run *r)
{
	while (r->in_off < r->req->input_len) {
		ssize_t w = write(r->in_fd, r->req->input + r->in_off, r->req->input_len - r->in_off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return;
		if (w < 0) {
			/* EPIPE: the tool closed stdin; what it read is its input. */
			r->epipe = errno == EPIPE;
			break;
		}
		r->in_off += (size_t)w;
	}
	te_close(&r->in_fd);
}

/* The group first: it holds the grandchildren.  Then the pidfd, which
 * reaches the tool even when it left its group; a pid cannot be reused
 * while we have not reaped it, so neither can hit a stranger. */
static void te_kill(struct te_run *r, enum te_kill why)
{
	if (r->killed == TE_KILL_NONE)
		r->killed = why;
	(void)kill(-r->pid, SIGKILL);
	if (!r->exited && r->pidfd >= 0)
		(void)pidfd_send_signal(r->pidfd, SIGKILL, NULL, 0);
	else if (!r->exited)
		(void)kill(r->pid, SIGKILL);
	r->rekill_at = te_now_ms() + TE_REKILL_MS;
}

static int te_poll_timeout(uint64_t wake, uint64_t t)
{
	if (wake <= t)
		return 0;
	return wake - t > INT_MAX ? INT_MAX : (int)(wake - t);
}

/* Until the tool has exited and its pipes are drained (or the grace is
 * over).  Returns 0, or -1 with msg when the supervisor failed; the caller
 * then kills and reaps. */
static int te_loop(struct te_run *r, char *msg, size_t n)
{
	for (;;) {
		struct pollfd pfd[5];
		int ipid = -1, iout = -1, ierr = -1, iin = -1, ican = -1;
		nfds_t np = 0;
		uint64_t t = te_now_ms(), wake;

		if (r->exited && ((r->out.fd < 0 && r->err.fd < 0) || t >= r->drain_until))
			return 0;
		if (!r->exited && r->killed == TE_KILL_NONE && t >= r->deadline)
			te_kill(r, TE_KILL_TIMEOUT);
		else if (!r->exited && r->killed != TE_KILL_NONE && t >= r->rekill_at)
			te_kill(r, r->killed);
		if (!r->exited) {
			ipid = (int)np;
			pfd[np++] = (struct pollfd){ .fd = r->pidfd, .events = POLLIN };
		}
		if (r->out.fd >= 0) {
			iout = (int)np;
			pfd[np++] = (struct pollfd){ .fd = r->out.fd, .events = POLLIN };
		}
		if (r->err.fd >= 0) {
			ierr = (int)np;
			pfd[np++] = (struct pollfd){ .fd = r->err.fd, .events = POLLIN };
		}
		if (r->in_fd >= 0) {
			iin = (int)np;
			pfd[np++] = (struct pollfd){ .fd = r->in_fd, .events = POLLOUT };
		}
		if (!r->exited && r->killed == TE_KILL_NONE && r->req->cancel_fd >= 0) {
			ican = (int)np;
			pfd[np++] = (struct pollfd){ .fd = r->req->cancel_fd, .events = POLLIN };
		}
		if (r->exited)
			wake = r->drain_until;
		else if (r->killed != TE_KILL_NONE)
			wake = r->rekill_at;
		else
			wake = r->deadline;
		if (poll(pfd, np, te_poll_timeout(wake, t)) < 0) {
			if (errno == EINTR)
				continue;
			snprintf(msg, n, "poll: %s", te_strerror(errno));
			return -1;
		}
		/* Cancel is only looked at, never read: one cancel_fd may stand
		 * for many calls. */
		if (ican >= 0 && pfd[ican].revents != 0)
			te_kill(r, TE_KILL_CANCEL);
		if (iout >= 0 && pfd[iout].revents != 0) {
			if (te_capture_read(&r->out) < 0) {
				snprintf(msg, n, "out of memory for the output of %s", r->req->argv[0]);
				return -1;
			}
			if (r->out.over) {
				/* Stop at once: a tool printing without end must cost
				 * us one buffer, not its whole output. */
				te_kill(r, TE_KILL_OVERFLOW);
				te_close(&r->out.fd);
			}
		}
		if (ierr >= 0 && pfd[ierr].revents != 0 && te_capture_read(&r->err) < 0) {
			snprintf(msg, n, "out of memory for the stderr of %s", r->req->argv[0]);
			return -1;
		}
		if (iin >= 0 && pfd[iin].revents != 0)
			te_write_input(r);
		if (ipid >= 0 && pfd[ipid].revents != 0) {
			r->exited = 1;
			/* The tool is a zombie now, so its pid (our pgid) is still
			 * taken: the group kill cannot reach a stranger.  What is
			 * left of the group would only hold the pipes open. */
			(void)kill(-r->pid, SIGKILL);
			te_close(&r->in_fd);
			r->drain_until = te_now_ms() + TE_DRAIN_MS;
		}
	}
}

static const char *te_stage_name(int stage)
{
	switch (stage) {
	case TE_STAGE_SIGNALS:
		return "resetting signals";
	case TE_STAGE_PGID:
		return "setpgid";
	case TE_STAGE_PDEATHSIG:
		return "PR_SET_PDEATHSIG";
	case TE_STAGE_PARENT:
		return "the supervisor went away";
	case TE_STAGE_STDIO:
		return "setting up stdio";
	case TE_STAGE_FDS:
		return "closing descriptors";
	case TE_STAGE_CGROUP:
		return "joining its cgroup";
	case TE_STAGE_CAPS:
		return "dropping capabilities";
	case TE_STAGE_IDS:
		return "switching to its uid and gid";
	case TE_STAGE_NNP:
		return "PR_SET_NO_NEW_PRIVS";
	case TE_STAGE_CWD:
		return "chdir /";
	default:
		return "setup";
	}
}

/* The outcome, from the most specific cause down: our own kill, a child
 * that never reached execve, then how the tool ended. */
static void te_judge(const struct te_run *r, const struct te_fail *fail, int have_fail, struct tool_exec_res *res)
{
	const char *path = r->req->argv[0];
	int ws = res->wstatus;

	res->outcome = TOOL_EXEC_FAILED;
	/* A child that reported a failure before execve never ran the tool;
	 * one that did not may have acted, whatever happened next. */
	res->started = r->started && !have_fail;
	if (r->killed == TE_KILL_TIMEOUT) {
		res->outcome = TOOL_EXEC_TIMEOUT;
		snprintf(res->reason, sizeof(res->reason), "timed out after %llu ms; its process group was killed",
			 (unsigned long long)r->req->timeout_ms);
	} else if (r->killed == TE_KILL_CANCEL) {
		res->outcome = TOOL_EXEC_CANCELLED;
		snprintf(res->reason, sizeof(res->reason), "%s",
			 r->started ? "cancelled; its process group was killed" : "cancelled before it started");
	} else if (r->killed == TE_KILL_OVERFLOW) {
		res->out_truncated = 1;
		snprintf(res->reason, sizeof(res->reason),
			 "wrote more than %zu bytes to stdout; stopped there and killed", r->max_output);
	} else if (have_fail && fail->stage == TE_STAGE_EXEC) {
		snprintf(res->reason, sizeof(res->reason), "cannot execute %s: %s", path, te_strerror(fail->err));
	} else if (have_fail) {
		snprintf(res->reason, sizeof(res->reason), "cannot start %s: %s%s%s", path,
			 te_stage_name(fail->stage), fail->err ? ": " : "", fail->err ? te_strerror(fail->err) : "");
	} else if (WIFEXITED(ws) && WEXITSTATUS(ws) == 0) {
		res->outcome = TOOL_EXEC_OK;
	} else if (WIFEXITED(ws)) {
		snprintf(res->reason, sizeof(res->reason), "exited with status %d", WEXITSTATUS(ws));
	} else if (WIFSIGNALED(ws)) {
		const char *abbrev = sigabbrev_np(WTERMSIG(ws));

		snprintf(res->reason, sizeof(res->reason), "killed by signal %d%s%s%s", WTERMSIG(ws),
			 abbrev ? " (SIG" : "", abbrev ? abbrev : "", abbrev ? ")" : "");
	} else {
		snprintf(res->reason, sizeof(res->reason), "ended with wait status 0x%x", (unsigned)ws);
	}
}

/* Hands a capture's bytes to the result as a NUL-terminated string, a
 * ring put back in order first. */
static int te_capture_take(struct te_capture *c, char **s, size_t *len)
{
	if (c->tail && c->buf != NULL && c->start != 0) {
		char *line = malloc(c->max + 1);
		size_t first = c->len < c->max - c->start ? c->len : c->max - c->start;

		if (line == NULL)
			return -1;
		memcpy(line, c->buf + c->start, first);
		memcpy(line + first, c->buf, c->len - first);
		free(c->buf);
		c->buf = line;
		c->start = 0;
	}
	if (c->buf == NULL && (c->buf = malloc(1)) == NULL)
		return -1;
	c->buf[c->len] = '\0';
	*s = c->buf;
	*len = c->len;
	c->buf = NULL;
	return 0;
}

static int te_check_req(const struct tool_exec_req *req, char *msg, size_t n)
{
	if (req->argv == NULL || req->argv[0] == NULL || req->argv[0][0] != '/') {
		snprintf(msg, n, "tool_exec: argv[0] must be an absolute path");
		return -1;
	}
	if (req->envp == NULL) {
		snprintf(msg, n, "tool_exec: no environment (build one with tool_env_build)");
		return -1;
	}
	if (req->input == NULL && req->input_len != 0) {
		snprintf(msg, n, "tool_exec: input_len %zu with no input", req->input_len);
		return -1;
	}
	if (req->max_output > TOOL_EXEC_MAX_OUTPUT) {
		snprintf(msg, n, "tool_exec: max_output %zu is over %u", req->max_output, TOOL_EXEC_MAX_OUTPUT);
		return -1;
	}
	if (req->timeout_ms == 0) {
		snprintf(msg, n, "tool_exec: timeout_ms is 0");
		return -1;
	}
	/* Kept for future defense: the bridge never asks for root, and
	 * (uid_t)-1 would mean "unchanged" to setresuid. */
	if (req->ncg_procs > 2) {
		snprintf(msg, n, "tool_exec: %u cgroup.procs files; at most 2", req->ncg_procs);
		return -1;
	}
	if (req->set_ids && (req->uid == 0 || req->gid == 0 || req->uid == (uid_t)-1 || req->gid == (gid_t)-1)) {
		snprintf(msg, n, "tool_exec: refusing to switch to uid %u gid %u", (unsigned)req->uid,
			 (unsigned)req->gid);
		return -1;
	}
	return 0;
}

static int te_cancelled_already(int cancel_fd)
{
	struct pollfd p = { .fd = cancel_fd, .events = POLLIN };

	return cancel_fd >= 0 && poll(&p, 1, 0) > 0 && p.revents != 0;
}

/* Pipes for stdin, stdout, stderr and the fail report, all close-on-exec;
 * our ends non-blocking, the tool's ends as a tool expects them. */
static int te_pipes(int p[4][2], char *msg, size_t n)
{
	static const char *const name[4] = { "stdin", "stdout", "stderr", "exec report" };

	for (int i = 0; i < 4; i++) {
		int ours;

		if (pipe2(p[i], O_CLOEXEC) != 0) {
			snprintf(msg, n, "pipe for %s: %s", name[i], te_strerror(errno));
			return -1;
		}
		ours = i == 0 ? p[i][1] : p[i][0];
		if (fcntl(ours, F_SETFL, O_NONBLOCK) != 0) {
			snprintf(msg, n, "O_NONBLOCK on the %s pipe: %s", name[i], te_strerror(errno));
			return -1;
		}
	}
	return 0;
}

int tool_exec_run(const struct tool_exec_req *req, struct tool_exec_res *res, char *msg, size_t n)
{
	int p[4][2] = { { -1, -1 }, { -1, -1 }, { -1, -1 }, { -1, -1 } };
	struct te_run r = { .req = req, .pid = -1, .pidfd = -1, .in_fd = -1, .out.fd = -1, .err.fd = -1 };
	struct te_child_args child;
	struct te_fail fail;
	sigset_t all, old, during, pending;
	int mask_set = 0, pipe_pending = 0, have_fail = 0, rc = -1;

	memset(res, 0, sizeof(*res));
	if (te_check_req(req, msg, n) != 0)
		goto out;
	r.max_output = req->max_output ? req->max_output : TOOL_EXEC_MAX_OUTPUT;
	r.out.max = r.max_output;
	r.err.max = TOOL_EXEC_MAX_STDERR;
	r.err.tail = 1;
	/* A call cancelled before it starts must not start: its tool may
	 * have side effects. */
	if (te_cancelled_already(req->cancel_fd)) {
		r.killed = TE_KILL_CANCEL;
		r.exited = 1;
		goto judged;
	}
	if (te_pipes(p, msg, n) != 0)
		goto out;
	child = (struct te_child_args){
		.req = req,
		.stdio = { p[0][0], p[1][1], p[2][1] },
		.fail_fd = p[3][1],
		.parent = getpid(),
	};
	/* Every signal blocked across the clone, so the child runs no handler of
	 * ours before it resets them.  SIGPIPE stays blocked in this thread
	 * until we return: a write to the stdin of a tool that is gone must
	 * be EPIPE here, not the death of the supervisor. */
	sigfillset(&all);
	if (sigpending(&pending) == 0)
		pipe_pending = sigismember(&pending, SIGPIPE) == 1;
	if ((errno = pthread_sigmask(SIG_SETMASK, &all, &old)) != 0) {
		snprintf(msg, n, "pthread_sigmask: %s", te_strerror(errno));
		goto out;
	}
	mask_set = 1;
	r.start = te_now_ms();
	r.pid = te_start(&child, &r.pidfd, msg, n);
	if (r.pid < 0)
		goto out;
	r.started = 1;
	during = old;
	sigaddset(&during, SIGPIPE);
	(void)pthread_sigmask(SIG_SETMASK, &during, NULL);
	te_close(&p[0][0]);
	te_close(&p[1][1]);
	te_close(&p[2][1]);
	te_close(&p[3][1]);
	r.in_fd = p[0][1];
	r.out.fd = p[1][0];
	r.err.fd = p[2][0];
	p[0][1] = p[1][0] = p[2][0] = -1;
	if (r.pidfd < 0 && (r.pidfd = pidfd_open(r.pid, 0)) < 0) {
		snprintf(msg, n, "pidfd_open: %s", te_strerror(errno));
		goto out;
	}
	r.deadline = req->timeout_ms > UINT64_MAX - r.start ? UINT64_MAX : r.start + req->timeout_ms;
	te_write_input(&r);
	if (te_loop(&r, msg, n) != 0)
		goto out;
	while (waitpid(r.pid, &res->wstatus, 0) < 0) {
		if (errno != EINTR) {
			snprintf(msg, n, "waitpid %d: %s", (int)r.pid, te_strerror(errno));
			goto out;
		}
	}
	r.pid = -1;
	res->duration_ms = te_now_ms() - r.start;
	/* Written before _exit, so it is in the pipe now if it was ever
	 * written; EOF or EAGAIN means the child reached execve. */
	have_fail = read(p[3][0], &fail, sizeof(fail)) == (ssize_t)sizeof(fail);
judged:
	te_judge(&r, &fail, have_fail, res);
	if (te_capture_take(&r.out, &res->out, &res->out_len) != 0 ||
	    te_capture_take(&r.err, &res->err, &res->err_len) != 0) {
		snprintf(msg, n, "out of memory");
		goto out;
	}
	res->err_dropped = r.err.dropped;
	rc = 0;
out:
	if (r.pid > 0) {
		/* The supervisor failed mid-run: nothing of the tool may outlive
		 * this call. */
		r.exited = 0;
		te_kill(&r, TE_KILL_NONE);
		while (waitpid(r.pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (rc != 0)
		tool_exec_res_free(res);
	te_close(&r.pidfd);
	te_close(&r.in_fd);
	te_close(&r.out.fd);
	te_close(&r.err.fd);
	for (int i = 0; i < 4; i++) {
		te_close(&p[i][0]);
		te_close(&p[i][1]);
	}
	free(r.out.buf);
	free(r.err.buf);
	if (mask_set) {
		/* The SIGPIPE our writes raised is ours to take; one that was
		 * pending before we started is not. */
		if (r.epipe && !pipe_pending) {
			sigset_t pipe_only;
			struct timespec zero = { 0, 0 };

			sigemptyset(&pipe_only);
			sigaddset(&pipe_only, SIGPIPE);
			while (sigtimedwait(&pipe_only, NULL, &zero) < 0 && errno == EINTR)
				;
		}
		(void)pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	return rc;
}

void tool_exec_res_free(struct tool_exec_res *res)
{
	if (res == NULL)
		return;
	free(res->out);
	free(res->err);
	res->out = res->err = NULL;
	res->out_len = res->err_len = 0;
}

/* ---- the answer ------------------------------------------------------------ */

/*
 * Bytes the answer may not hold, before cJSON sees it.  A NUL would end
 * cJSON's text early; a raw control byte is never valid JSON, and refusing
 * it here makes "only white space after the value" mean JSON's four bytes
 * (cJSON skips every byte up to 0x20); a \u0000 escape becomes a NUL in a
 * decoded string, silently cutting a key or value short, so "a\u0000b" and
 * "a" would be the same key (json_nul_escape_at).
 */
static int te_scan_answer(const char *s, size_t len, char *why, size_t n)
{
	const char *nul = memchr(s, '\0', len);
	size_t at;

	if (nul != NULL) {
		snprintf(why, n, "the output has a NUL byte at offset %zu", (size_t)(nul - s));
		return -1;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
			snprintf(why, n, "the output has the control byte 0x%02X at offset %zu", c, i);
			return -1;
		}
	}
	if ((at = json_nul_escape_at(s, len)) != len) {
		snprintf(why, n, "the output has a \\u0000 escape at offset %zu; a NUL in a string is refused", at);
		return -1;
	}
	/* JSON is UTF-8: cJSON passes other bytes through, so the answer,
	 * and the recorded copy every retry of its message id gets, would
	 * not decode at the client.  The tool ran: a refusal here is its
	 * failure (tool_failed), recorded as such. */
	if ((at = utf8_prefix(s, len)) != len) {
		snprintf(why, n, "the output is not UTF-8 at offset %zu", at);
		return -1;
	}
	return 0;
}

/* A key as it may appear in a reason: at most 40 bytes, printable ASCII
 * only, the rest shown as '?'. */
static void te_key_print(char *dst, size_t n, const char *key)
{
	size_t i = 0;

	for (; key[i] != '\0' && i + 4 < n && i < 40; i++)
		dst[i] = key[i] >= 0x20 && key[i] < 0x7f ? key[i] : '?';
	if (key[i] != '\0' && i + 4 <= n) {
		memcpy(dst + i, "...", 3);
		i += 3;
	}
	dst[i] = '\0';
}

cJSON *tool_exec_parse_output(const char *out, size_t len, char *why, size_t n)
{
	const char *end = NULL, *dup;
	char *buf = NULL;
	cJSON *v = NULL, *probe = NULL;
	char key[48], where[256];
	int rc;

	if (out == NULL || len == 0) {
		snprintf(why, n, "the tool wrote nothing to stdout; its answer must be one JSON value");
		goto out;
	}
	if (te_scan_answer(out, len, why, n) != 0)
		goto out;
	if ((buf = malloc(len + 1)) == NULL) {
		snprintf(why, n, "out of memory for a %zu-byte answer", len);
		goto out;
	}
	memcpy(buf, out, len);
	buf[len] = '\0';
	/* The length counts the NUL: with require_null_terminated cJSON then
	 * wants nothing but white space between the value and it. */
	v = cJSON_ParseWithLengthOpts(buf, len + 1, &end, 1);
	if (v == NULL) {
		size_t at = end != NULL && end >= buf && end <= buf + len ? (size_t)(end - buf) : 0;

		/* Whether a value came first tells garbage after it from a
		 * value that was never whole. */
		probe = cJSON_ParseWithLengthOpts(buf, len + 1, NULL, 0);
		if (probe != NULL)
			snprintf(why, n, "the output has more after its JSON value (at offset %zu)", at);
		else
			snprintf(why, n, "the output is not valid JSON (near offset %zu)", at);
		goto out;
	}
	rc = json_find_duplicate(v, &dup, where, sizeof(where));
	if (rc < 0) {
		snprintf(why, n, "out of memory checking the keys of the answer");
		goto fail;
	}
	if (rc > 0) {
		te_key_print(key, sizeof(key), dup);
		snprintf(why, n, "the output has the key \"%s\" twice in the object at %s", key, where);
		goto fail;
	}
	goto out;
fail:
	cJSON_Delete(v);
	v = NULL;
out:
	cJSON_Delete(probe);
	free(buf);
	return v;
}

/* ---- when it failed ----------------------------------------------------- */

char *tool_exec_text_fit(const char *s, size_t len, size_t max, int tail, size_t *cut)
{
	static const char repl[] = "\xEF\xBF\xBD"; /* U+FFFD */
	size_t j = 0, k, from = 0, keep;
	char *w;

	if (cut != NULL)
		*cut = 0;
	if (len > (SIZE_MAX - 1) / 3 || (w = malloc(3 * len + 1)) == NULL)
		return NULL;
	for (size_t i = 0; i < len; i += k) {
		k = s[i] != '\0' ? utf8_char(s + i, len - i) : 0;
		if (k == 0) {
			memcpy(w + j, repl, 3);
			j += 3;
			k = 1;
		} else {
			memcpy(w + j, s + i, k);
			j += k;
		}
	}
	keep = j;
	if (j > max && !tail) {
		keep = utf8_prefix(w, max);
	} else if (j > max) {
		/* w is well-formed: past its continuation bytes a character starts. */
		from = j - max;
		while (from < j && ((unsigned char)w[from] & 0xC0) == 0x80)
			from++;
		keep = j - from;
		memmove(w, w + from, keep);
	}
	w[keep] = '\0';
	if (cut != NULL)
		*cut = j - keep;
	return w;
}

/* Scrubbed, then made well-formed and bounded: the order keeps a secret
 * across the bound from showing its start. */
static char *te_show(const char *s, size_t len, const struct cpol_tool *t, const struct secrets *sec, size_t max,
		     int tail, int head_cut, size_t *cut)
{
	char *clean = NULL, *shown;
	size_t clen, gone = 0, fit_cut = 0;

	/* A start needs scrubbing only as far as it can be shown: max + 1
	 * bytes (the one more shows that it was cut); making it well-formed
	 * never shortens it. */
	if (secrets_scrub(t, sec, s, len, head_cut, tail ? SIZE_MAX : max + 1, &clean, &clen, &gone) != 0)
		return NULL;
	shown = tool_exec_text_fit(clean, clen, max, tail, &fit_cut);
	if (cut != NULL)
		*cut = gone + fit_cut;
	free(clean);
	return shown;
}

/* The tool's {"error": {"message", "code"}} or {"error": "message"}. */
static void te_error_answer(const char *out, size_t len, const char **message, const char **code, cJSON **doc)
{
	const cJSON *e, *m = NULL, *c = NULL;
	char why[64];

	*message = *code = NULL;
	*doc = tool_exec_parse_output(out, len, why, sizeof(why));
	e = cJSON_IsObject(*doc) ? cJSON_GetObjectItemCaseSensitive(*doc, "error") : NULL;
	if (cJSON_IsString(e)) {
		m = e;
	} else if (cJSON_IsObject(e)) {
		m = cJSON_GetObjectItemCaseSensitive(e, "message");
		c = cJSON_GetObjectItemCaseSensitive(e, "code");
	}
	if (cJSON_IsString(m))
		*message = m->valuestring;
	if (cJSON_IsString(c))
		*code = c->valuestring;
}

int tool_exec_failure_build(const struct tool_exec_res *res, const struct cpol_tool *t, const struct secrets *s,
			    struct tool_exec_failure *f)
{
	const char *message = NULL, *code = NULL;
	cJSON *doc = NULL;
	size_t cut = 0;
	int rc = -1;

	memset(f, 0, sizeof(*f));
	/* Only an exit the tool chose speaks for it: a signal, a start that
	 * failed or our own kill says nothing of what it did. */
	if (res->outcome == TOOL_EXEC_FAILED && res->started && !res->out_truncated && WIFEXITED(res->wstatus) &&
	    WEXITSTATUS(res->wstatus) != 0) {
		f->retryable = WEXITSTATUS(res->wstatus) == TOOL_EXEC_EX_TEMPFAIL;
		te_error_answer(res->out, res->out_len, &message, &code, &doc);
	}
	if (message != NULL) {
		f->message = te_show(message, strlen(message), t, s, TOOL_EXEC_MAX_ERROR_MESSAGE, 0, 0, &cut);
		if (f->message == NULL)
			goto out;
		f->message_cut = cut != 0;
	}
	if (code != NULL && (f->code = te_show(code, strlen(code), t, s, TOOL_EXEC_MAX_ERROR_CODE, 0, 0, NULL)) == NULL)
		goto out;
	if (res->err != NULL && res->err_len != 0) {
		f->stderr_tail = te_show(res->err, res->err_len, t, s, TOOL_EXEC_MAX_STDERR_TAIL, 1,
					 res->err_dropped != 0, &cut);
		if (f->stderr_tail == NULL)
			goto out;
		f->stderr_dropped = res->err_dropped + cut;
	}
	rc = 0;
out:
	cJSON_Delete(doc);
	if (rc != 0)
		tool_exec_failure_free(f);
	return rc;
}

void tool_exec_failure_free(struct tool_exec_failure *f)
{
	if (f == NULL)
		return;
	free(f->message);
	free(f->code);
	free(f->stderr_tail);
	memset(f, 0, sizeof(*f));
}
