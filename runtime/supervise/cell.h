/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cell.h - one cell of a code-interpreter session (docs/serve.md,
 * "Sessions"): the protocol between the supervisor and the session loop
 * inside the sandbox, both of its sides here.
 *
 * The channel is the loader's start socket (fd 3 inside, a SOCK_STREAM
 * pair made at prepare), kept open after the start byte 's' instead of
 * closed after 'g':
 *
 *   supervisor -> loop  a cell: its length (4 bytes, big-endian, at most
 *                       the policy's max_code_bytes) and its source;
 *   loop -> supervisor  one byte once the cell is over and stdout and
 *                       stderr are flushed: '0' it ran to its end, '1' it
 *                       raised (the traceback is on stderr).  Whatever the
 *                       cell wrote before it is already in the capture
 *                       pipes, so reading them until they are empty after
 *                       the byte gives the cell's whole output;
 *   EOF                 the interpreter ended (sys.exit() in a cell, a
 *                       crash): the session is over.
 *
 * The loop runs in the sandbox, as the program does, so the program can
 * read and write fd 3 too: every byte from it is untrusted.  A program that
 * forges a status byte only confuses its own session (its output is then
 * counted in the next cell); anything but '0' or '1' ends the session as
 * broken.  The supervisor never waits for the loop past the cell's
 * timeout.
 */
#ifndef CORDON_CELL_H
#define CORDON_CELL_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/supervise/supervise.h"
#include "runtime/workspace.h"

#define CELL_LEN_BYTES 4
#define CELL_DONE_BYTE '0'
#define CELL_RAISED_BYTE '1'
/* After EOF on the channel, how long the executor has to end by itself
 * before the cell is taken as broken (the program closed fd 3). */
#define CELL_EXIT_WAIT_MS 2000u

/* The loop's Python (/cordon/cordon_session.py), which the loader calls on
 * the start byte 's'. */
extern const char cell_loop_py[];
extern const size_t cell_loop_py_len;

enum cell_end {
	CELL_DONE,      /* '0': the cell ran to its end */
	CELL_RAISED,    /* '1': it raised; the session goes on */
	CELL_EXITED,    /* the interpreter ended (EOF, or the executor died) */
	CELL_TIMED_OUT, /* the cell ran past timeout_ms */
	CELL_CANCELLED, /* cancel_fd became readable */
	CELL_WS_BREACH, /* the workspace passed the execution's bound */
	CELL_SESSION_WS, /* ... or the session's */
	CELL_SESSION_CPU, /* the session's CPU passed its bound */
	CELL_BROKEN,    /* the loop broke the protocol */
};

/* 1 when the session can go on after a cell that ended so. */
int cell_end_continues(enum cell_end e);

struct cell_cfg {
	int chan_fd;          /* the start socket; made non-blocking here */
	int pidfd;            /* readable once the executor ended */
	int cancel_fd;        /* -1, or readable = cancel */
	uint64_t timeout_ms;  /* the policy's timeout, per cell */
	uint64_t monitor_ms;  /* how often the bounds below are checked */
	const struct ws *ws;  /* the workspace, and its bounds (supervise.h); 0: none */
	uint64_t ws_bytes_max, ws_inodes_max;
	uint64_t session_ws_max; /* the session's workspace bound; 0: none */
	/* The session's CPU so far (ms), read at each check; NULL: not
	 * checked.  cpu_max_ms: the most it may reach. */
	int (*cpu_now)(void *arg, uint64_t *ms);
	void *cpu_arg;
	uint64_t cpu_max_ms;
};

struct cell_out {
	enum cell_end end;
	uint64_t duration_ms;
	uint64_t ws_baseline, ws_peak;          /* bytes in use: at the start, at most */
	uint64_t ws_inodes_baseline, ws_inodes_peak;
};

/*
 * Sends the cell and follows it until its status byte (then reads the
 * capture pipes until they are empty) or an end that is not the cell's
 * own.  The output is read through capture_read() (supervise.h), so a
 * capture's tap is told each part as it is kept, from this thread.  Kills nothing: on an end but DONE and RAISED the caller ends the
 * executor (sandbox.h).  Returns 0, or -1 with msg when the supervisor
 * itself failed (poll).
 */
int cell_run(const struct cell_cfg *cfg, const char *code, size_t len, struct capture *out, struct capture *err,
	     struct cell_out *res, char *msg, size_t n);

#endif
