/* SPDX-License-Identifier: Apache-2.0 */
/*
 * supervise.h - the supervisor's side of one run: bounded capture of the
 * executor's output, the timeout, the workspace monitor and cancellation.
 */
#ifndef CORDON_SUPERVISE_H
#define CORDON_SUPERVISE_H

#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "runtime/workspace.h"

/* One output stream: the first max bytes are kept, the rest is read and
 * dropped so the writer never blocks, and truncated says so. */
struct capture {
	int fd;
	char *buf;
	size_t len, max;
	int truncated;
	/* NULL, or told each kept part as it is kept (a stream's sink):
	 * only kept bytes, so what is told never exceeds max.  Called under
	 * lock when lock is set; the tap must not block. */
	void (*tap)(void *arg, const char *data, size_t len);
	void *tap_arg;
	pthread_mutex_t *lock;
};

/* Reads what the pipe holds now (FIONREAD), keeping and tapping it as the
 * supervisor's loop would; the caller holds c->lock (so that it can drain
 * both pipes and tell the call as one step); never closes the fd.  A tool
 * call's event calls it first, so the output the program wrote before the
 * call is told before the call. */
void capture_drain(struct capture *c);

/* Reads what is there into c (the rest dropped past max, the kept part
 * tapped), under c->lock; 0 at EOF (fd closed and set to -1), 1
 * otherwise.  The run's loop and a cell's (cell.h) both read through it. */
int capture_read(struct capture *c);

enum sup_end {
	SUP_EXITED,     /* the executor ended by itself */
	SUP_TIMED_OUT,
	SUP_CANCELLED,  /* the caller's cancel fd became readable */
	SUP_WS_BREACH,  /* the workspace monitor stopped it */
};

struct supervise_cfg {
	pid_t child;        /* pid 1 of the executor's pid namespace */
	uint64_t timeout_ms;
	uint64_t monitor_ms;
	/* The workspace, a tmpfs the kernel already bounds (workspace.h);
	 * statfs() reads its use each monitor_ms, and a use past these is a
	 * breach: the program reached the kernel's bound, which is a page and
	 * an inode above them.  0: none. */
	const struct ws *ws;
	uint64_t ws_bytes_max;
	uint64_t ws_inodes_max;
	int pidfd;          /* the child's pidfd: readable once it exited */
	int cancel_fd;      /* -1, or readable = cancel (the caller reads it) */
	int init_fd;        /* -1, or the init channel (launch.h): a kill asks
			     * init first, so the processes it kills are
			     * reaped and counted, then SIGKILLs it */
};

/* How long init has to kill and reap the namespace when asked before
 * the supervisor SIGKILLs it: reaping killed processes takes
 * milliseconds; a stuck or gone init must not hold the run. */
#define SUPERVISE_KILL_WAIT_MS 200u

struct supervise_out {
	enum sup_end end;
	int wstatus;
	struct rusage ru;
	uint64_t duration_ms;
	uint64_t ws_baseline, ws_peak;  /* bytes in use: at the start, at most */
	uint64_t ws_inodes_baseline, ws_inodes_peak;
};

/* Runs until the executor is reaped.  Any breach kills the whole pid
 * namespace (LAUNCH_INIT_KILL to its pid 1, then SIGKILL to it if it has
 * not ended within SUPERVISE_KILL_WAIT_MS).  Returns 0, or -1 with msg on a
 * supervisor failure (the executor is killed and reaped then too). */
int supervise_run(const struct supervise_cfg *cfg, struct capture *out, struct capture *err,
		  struct supervise_out *res, char *msg, size_t n);

#endif
