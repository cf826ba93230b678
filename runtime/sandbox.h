/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sandbox.h - one execution's sandbox, used once: the lifecycle that
 * `cordon run` and `cordon serve` share (docs/runtime.md, "The sandbox
 * lifecycle").  No setup step exists anywhere else.
 *
 *   sandbox_host_probe()  host facts, once per process, read-only after:
 *                         rootless or root, cgroup hierarchies, landlock,
 *                         the ledger's directory, secrets, host id range.
 *   sandbox_new()         an empty sandbox for a policy and an agent: its
 *                         execution id and tool token are drawn here.
 *   sandbox_prepare()     host ids, cgroups, the plan, clone and the whole
 *                         ordered setup (sequence.c), the private
 *                         filesystems received and the loader written; the
 *                         interpreter starts, imports executor.preload and
 *                         blocks on its start socket.  Nothing of the
 *                         request is known yet.
 *   sandbox_start()       binds the request: code and inputs into the
 *                         workspace (then bounded to baseline + delta by a
 *                         tmpfs reconfigure), the tools the context selects,
 *                         the bridge bound to the context and agent, then
 *                         the go byte.  The timeout starts here.
 *   sandbox_wait()        until the executor is reaped: its pidfd, bounded
 *                         output, the workspace monitor, the timeout, and a
 *                         caller's cancel fd (readable = cancel).  No
 *                         process signals are used or changed.
 *   sandbox_reduce()      the one result writer: outputs, classification,
 *                         evidence, the kept run directory.
 *   sandbox_destroy()     reverse order of prepare, safe from any state:
 *                         executor killed and reaped, bridge stopped,
 *                         cgroups removed, private filesystems closed, ids
 *                         released.
 *
 * Errors: a step that fails records a harness error in the sandbox (stage
 * and message, reported as error.details.where = exec.harness.<stage>) and
 * returns -1; every later step but reduce and destroy then returns -1 at
 * once, so a caller may walk the five calls without checking each.  Nothing
 * here prints, exits, or touches the process's signal state: the caller
 * blocks SIGTERM/SIGINT/SIGHUP and ignores SIGPIPE in main(), before any
 * thread exists.
 *
 * Threads: different sandboxes may be driven from different threads at
 * once.  One sandbox is driven by one thread at a time.  The executor dies
 * with the thread that ran sandbox_prepare() (PR_SET_PDEATHSIG follows the
 * cloning thread), so prepare only from threads that outlive the sandbox.
 */
#ifndef CORDON_SANDBOX_H
#define CORDON_SANDBOX_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "cordon/policy.h"
#include "runtime/hostid.h"
#include "runtime/launch/cgroup.h"

struct secrets;
struct ledger;

#define SANDBOX_MAX_INPUTS 64

/* What main() says about the host; all may be NULL for the defaults. */
struct sandbox_host_opts {
	const char *state_dir; /* the ledger; NULL: /var/lib/cordon or ~/.local/state/cordon */
	/* --ledger: a postgresql:// URL naming the ledger instead of
	 * state_dir (main() refuses both).  Opened here whatever
	 * share_ledger says: an unreachable server is a harness error
	 * before any program runs, not a failure of its first tool call. */
	const char *ledger;
	const char *secrets;   /* NAME=value file for the tools' env_from */
	const char *host_ids;  /* --host-ids text; NULL: HOSTID_RANGE_DEFAULT_TEXT */
	/* Open the ledger here, once, and share it among every sandbox of
	 * the process (serve): its open checks identity and integrity, a
	 * cost a server should pay at start, where a refused ledger also
	 * stops it.  0: each run opens it at its first call that needs it. */
	int share_ledger;
};

/* Probed once, then only read (any number of threads). */
struct sandbox_host {
	int rootless;
	struct cg_host cgh;     /* all empty when the host has no cgroups */
	int landlock_abi;
	char state_dir[PATH_MAX]; /* the ledger's place: a state directory, or --ledger's URL */
	struct secrets *secrets;
	struct hostid_range ids;
	struct ledger *ledger;  /* share_ledger and a state directory: open */
};

/* A harness error: the stage names the step (exec.harness.<stage>). */
struct sandbox_err {
	char stage[32];
	char msg[1024];
};

int sandbox_host_probe(struct sandbox_host *h, const struct sandbox_host_opts *o, struct sandbox_err *e);
void sandbox_host_free(struct sandbox_host *h);

/* What a sandbox is made for.  pol (and the blob it was loaded from) is
 * borrowed: it must outlive the sandbox.  agent NULL: no tools. */
struct sandbox_spec {
	const struct cpol_policy *pol;
	const char *agent;
	const char *run_dir;     /* kept run directory, must not exist; NULL: none kept */
};

/* One input file, borrowed for the duration of sandbox_start(). */
struct sandbox_file {
	const char *name;        /* a base name: no '/', not reserved */
	const char *data;
	size_t len;
};

struct sandbox_request {
	const char *code;        /* the program, verbatim */
	size_t code_len;
	const char *code_name;   /* for messages: "app.py" or "request" */
	const struct sandbox_file *inputs;
	unsigned ninputs;
	/* The request context (context.h), already parsed; ownership passes
	 * to the sandbox, which sets the caller's pointer to NULL. */
	cJSON **context;
};

struct sandbox;

/* NULL only when out of memory. */
struct sandbox *sandbox_new(const struct sandbox_host *h, const struct sandbox_spec *s);

/* Records a harness error found before prepare (the host probe, the
 * policy, reading the request): the sandbox then only reduces it to the
 * error result.  The first error recorded is the one reported. */
void sandbox_fail(struct sandbox *sb, const struct sandbox_err *e);

/* Up to the interpreter waiting for its program.  wait_ready: also wait
 * (at most the policy's timeout) for the interpreter to say it finished
 * its preloads, as a pool does; a one-shot run does not wait and overlaps
 * the interpreter's start with sandbox_start()'s writes. */
int sandbox_prepare(struct sandbox *sb, int wait_ready);

/* Whether the tools of agent that context selects (its "tools"; NULL or
 * without it: all of the agent's) have every env_from secret they declare,
 * from the host's --secrets file or else the environment: 0, or -1 with e
 * (stage "secrets", the tool and the name, never a value).  What
 * sandbox_start() checks before it writes anything; serve asks first, so
 * that a request refused for it uses no sandbox. */
int sandbox_check_secrets(const struct sandbox_host *h, const struct cpol_policy *p, const char *agent,
			  const cJSON *context, struct sandbox_err *e);

/* Bind the request and let the program run.  On -1 the executor is
 * already killed: only reduce and destroy remain. */
int sandbox_start(struct sandbox *sb, const struct sandbox_request *rq);

/* Until the executor is reaped.  cancel_fd: -1, or an fd whose readability
 * cancels the run; the caller then names why with sandbox_cancel_reason()
 * (before reduce), e.g. "Terminated" or "cancelled by request". */
int sandbox_wait(struct sandbox *sb, int cancel_fd);
void sandbox_cancel_reason(struct sandbox *sb, const char *why);

struct export_dest;

/* How the result carries artifacts: inline_max > 0 adds each artifact's
 * bytes (base64, "contentBase64") when it is at most inline_max bytes.
 * copy (cordon run --out): each artifact is copied there too, its entry
 * says where ("copiedTo") or why not ("copyError"), and one not copied is
 * the run's error at stage out (runtime/supervise/export.h). */
struct sandbox_reduce_opts {
	size_t inline_max;
	const struct export_dest *copy;
};

/* The result JSON (the caller owns it) and the exit code of `cordon run`
 * (RUN_EXIT_*).  Works from any state: a sandbox that failed to prepare or
 * start gives status "error" with the harness stage.  Writes result.json
 * and supervisor.log into a kept run directory. */
cJSON *sandbox_reduce(struct sandbox *sb, const struct sandbox_reduce_opts *o, int *exit_code);

/* Safe from any state and on NULL. */
void sandbox_destroy(struct sandbox *sb);

/* The execution id (32 hex digits), fixed at sandbox_new(). */
const char *sandbox_id(const struct sandbox *sb);

/* An fd that becomes readable when the executor dies (its pidfd), -1
 * before prepare: a pool polls it to replace a sandbox that died idle. */
int sandbox_pidfd(const struct sandbox *sb);

/* 1 when the stage recorded is a harness error (prepare or start failed). */
int sandbox_failed(const struct sandbox *sb, struct sandbox_err *e);

/* Milliseconds spent in prepare, start, and running (wait): for metrics. */
struct sandbox_times {
	uint64_t prepare_ms, start_ms, run_ms;
};
void sandbox_times(const struct sandbox *sb, struct sandbox_times *t);

#endif
