/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tool_exec.h - run one tool implementation on the trusted side
 * (docs/tool-exec.md): argv from the blob, params as JSON on stdin, the answer
 * as JSON on stdout, an environment built from scratch, a timeout, bounded
 * output, and its whole process group killed when it overstays.
 *
 * Called from the bridge's call threads, so the child between fork and
 * exec only makes async-signal-safe calls.  The child also joins the
 * call's cgroups and drops to the tool's identity (docs/tool-exec.md).
 */
#ifndef CORDON_TOOL_EXEC_H
#define CORDON_TOOL_EXEC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "cordon/policy.h"

#define TOOL_EXEC_MAX_OUTPUT (1u << 20) /* stdout kept; more is tool_failed */
#define TOOL_EXEC_MAX_STDERR (16u << 10) /* the last bytes of stderr kept, for a failure's detail */

struct tool_exec_req {
	const char *const *argv; /* NULL-terminated; argv[0] absolute */
	char *const *envp;       /* NULL-terminated, built by tool_env_build() */
	const char *input;       /* params JSON, written to stdin then closed */
	size_t input_len;
	uint64_t timeout_ms;     /* > 0 */
	size_t max_output;       /* <= TOOL_EXEC_MAX_OUTPUT; 0 means TOOL_EXEC_MAX_OUTPUT */
	int cancel_fd;           /* -1, or readable when the run ends: kill, CANCELLED.
				  * Polled, never read, so one fd may serve many calls;
				  * readable before the start: the tool never runs. */
	/* Identity.  set_ids (the supervisor is root): the tool runs as
	 * uid/gid (neither 0) with no supplementary groups and every
	 * capability set empty, bounding and ambient included.  0: it keeps
	 * the supervisor's identity. */
	int set_ids;
	uid_t uid;
	gid_t gid;
	int no_new_privs;        /* PR_SET_NO_NEW_PRIVS before execve */
	/* cgroup.procs files (cgroup_procs_open) the child writes "0" to
	 * before anything else: the tool and all it starts are in the call's
	 * cgroups from its first instruction.  The first ncg_procs are used
	 * (0: none, so a zeroed request joins nothing); they stay the caller's. */
	int cg_procs[2];
	unsigned ncg_procs;
};

enum tool_exec_outcome {
	TOOL_EXEC_OK = 0,    /* exited 0 with output within bounds */
	TOOL_EXEC_FAILED,    /* non-zero exit, signal, oversized output, or could not start */
	TOOL_EXEC_TIMEOUT,   /* killed (process group) at its timeout */
	TOOL_EXEC_CANCELLED, /* killed because cancel_fd fired */
};

struct tool_exec_res {
	enum tool_exec_outcome outcome;
	int wstatus;
	char *out;       /* malloc'd stdout, NUL-terminated; caller frees */
	size_t out_len;
	char *err;       /* malloc'd stderr (its last TOOL_EXEC_MAX_STDERR bytes), NUL-terminated */
	size_t err_len;
	uint64_t err_dropped; /* stderr bytes written before those kept */
	int out_truncated; /* output went over max_output (then outcome FAILED) */
	int started;       /* the tool may have run: a child was made and did not
			    * report a failure before execve.  0 means the tool
			    * certainly did nothing (the replay record is given up). */
	uint64_t duration_ms;
	char reason[256];  /* why it FAILED, in words, for the log and the answer */
};

/* Runs it to the end.  Returns 0 with res filled (any outcome), or -1 with
 * msg when the supervisor itself failed (pipes, fork) or req is malformed;
 * then res holds nothing to free.
 *
 * Safe from several threads at once.  It waits for its own pid only, so no
 * other code of the process may reap children it did not start
 * (waitpid(-1), wait()) or set SIGCHLD to SIG_IGN.  SIGPIPE is blocked in
 * the calling thread for the call.  The tool's PR_SET_PDEATHSIG is tied to
 * the calling thread, which does not return before the tool is reaped. */
int tool_exec_run(const struct tool_exec_req *req, struct tool_exec_res *res, char *msg, size_t n);
void tool_exec_res_free(struct tool_exec_res *res);

/*
 * Why a tool failed, in its own words, fit to be shown to the program and
 * written to the audit (docs/tool-exec.md, "When a tool fails"):
 *
 * - exit status TOOL_EXEC_EX_TEMPFAIL (75, EX_TEMPFAIL of sysexits.h) is
 *   the tool's word that it failed before any effect: a retry may run it
 *   again (retryable).  Any other failure may have acted.
 * - a tool that exits non-zero may answer {"error": {"message": "...",
 *   "code": "..."}} (or {"error": "..."}) on stdout, as the examples'
 *   tools do: message and code are taken from it.
 * - the end of its stderr.
 *
 * Each text has the value of every secret the tool was given replaced by
 * "[secret NAME]" (secrets_scrub(), before any cut, so a value across a
 * bound shows nothing of itself), is well-formed UTF-8 (a byte outside a
 * character, and NUL, become U+FFFD) and is bounded: message and code
 * keep their start, the stderr tail its end, each cut on a character.
 */
#define TOOL_EXEC_EX_TEMPFAIL 75
#define TOOL_EXEC_MAX_ERROR_MESSAGE 1024
#define TOOL_EXEC_MAX_ERROR_CODE 64
#define TOOL_EXEC_MAX_STDERR_TAIL 2048

struct secrets;

struct tool_exec_failure {
	char *message;       /* the tool's error message, or NULL */
	char *code;          /* the tool's error code, or NULL */
	char *stderr_tail;   /* the end of its stderr, or NULL when it wrote none */
	uint64_t stderr_dropped; /* bytes of stderr before stderr_tail */
	int message_cut;     /* message was longer and was cut */
	int retryable;       /* exited TOOL_EXEC_EX_TEMPFAIL before any effect, by its word */
};

/* Fills f from a run that did not end OK (res->outcome != TOOL_EXEC_OK);
 * t is the tool that ran and s where its env_from values came from.
 * Returns 0, or -1 when out of memory (f then holds nothing to free). */
int tool_exec_failure_build(const struct tool_exec_res *res, const struct cpol_tool *t, const struct secrets *s,
			    struct tool_exec_failure *f);
void tool_exec_failure_free(struct tool_exec_failure *f);

/* s[0..len) as well-formed UTF-8 (a byte outside a character, and NUL,
 * become U+FFFD) of at most max bytes, cut on a character: its start kept,
 * or its end when tail.  *cut (may be NULL) gets how many bytes of the
 * well-formed text were left out.  malloc'd; NULL when out of memory. */
char *tool_exec_text_fit(const char *s, size_t len, size_t max, int tail, size_t *cut);

/* The tool's answer: exactly one JSON value, nothing but white space after
 * it, no NUL byte, no duplicate key in any object.  Returns the value
 * (caller frees), or NULL with why. */
cJSON *tool_exec_parse_output(const char *out, size_t len, char *why, size_t n);

#endif
