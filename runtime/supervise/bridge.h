/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge.h - the supervisor's tool bridge (docs/bridge.md): the Unix socket
 * the executor reaches the world through.
 *
 * Every call goes through one fixed order of checks, and the first that
 * refuses decides (its name is in the answer and the audit line): peer
 * credentials, token, frame, JSON, shape, tool, selection, params,
 * constraint, role, budget, replay; then the tool runs (exec).  Calls are
 * served on threads of their own, so the supervisor's main loop (output,
 * monitor, timeout, cancellation) never waits for a tool; bridge_stop()
 * kills running tools when the run ends.
 */
#ifndef CORDON_BRIDGE_H
#define CORDON_BRIDGE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "cordon/policy.h"

struct secrets;
struct cg_host;

#define BRIDGE_MAX_CONNS 8          /* connections served at once; more wait in the backlog */
#define BRIDGE_EVICT_MS 500         /* an idle connection this old may make room for a new one */
#define BRIDGE_MAX_RESPONSE (2u << 20)
#define BRIDGE_FRAME_TIMEOUT_MS 5000 /* a started frame must arrive within it */
#define BRIDGE_MAX_LISTED_CALLS 1000 /* toolCalls entries kept for the result */
#define BRIDGE_MAX_CALLS 10000      /* calls of one run with an audit line each */
#define BRIDGE_MAX_PEER_LINES 32    /* peer refusals of one run with an audit line each */

struct bridge_cfg {
	const struct cpol_policy *pol;
	const char *exec_id;
	const char *token;        /* REQUEST_TOKEN_HEX hex digits */
	const cJSON *context;     /* the request context, or NULL */
	const char *agent;        /* NULL: no agent given, so no tool is known */
	const char *state_dir;    /* the ledger's directory, opened at the first call that needs it;
				   * "": none, and a call that needs it is refused */
	struct ledger *ledger;    /* borrowed: one ledger a server shares among its
				   * runs (its open pays the integrity check once);
				   * NULL: opened from state_dir as above */
	const struct secrets *secrets;
	int audit_fd;             /* logs/tool-calls.jsonl, O_APPEND; stays the caller's */
	uid_t peer_uid;           /* host uid of the executor */
	pid_t child;              /* the executor: a peer must be in its pid namespace */
	uint64_t deadline_ms;     /* CLOCK_MONOTONIC ms when the run's timeout fires; 0: none */
	/* The host identity of tools with run_as dedicated (the default;
	 * docs/tools.md).  As root, run.c fills one that no account and no
	 * other run has, and sets tool_ids; without it such a tool is refused,
	 * never run as root.  Rootless, tool_ids is 0 and tools run as the
	 * caller (a run_as naming anyone else is refused). */
	uid_t tool_uid;
	gid_t tool_gid;
	int tool_ids;
	/* Where each call's cgroup is made (cgroup_create, named
	 * cordon-<pid>-<exec id>-t<n>); NULL, or a host with no usable
	 * hierarchy: none, and a call is killed by its process group only. */
	const struct cg_host *cg_host;
	/* NULL, or told each call's toolCalls entry once it is recorded and
	 * before its answer is sent (a stream's sink); from the call's
	 * thread, so it must not block. */
	void (*on_call)(void *arg, const cJSON *entry);
	void *on_call_arg;
};

struct bridge;

/* Binds and listens on path (a fresh name), mode 0600, owned by uid/gid
 * when chown_to is set (as root: the executor's host ids).  *fd gets the
 * listening socket.  Returns 0, or -1 with err. */
int bridge_listen(const char *path, int chown_to, uid_t uid, gid_t gid, int *fd, char *err, size_t n);

/* Starts serving on listen_fd (ownership passes to the bridge; the
 * caller's copy is set to -1).  Returns 0, or -1 with err. */
int bridge_start(const struct bridge_cfg *cfg, int *listen_fd, struct bridge **out, char *err, size_t n);

/* Stops accepting, kills running tools, ends every connection and waits
 * for the threads.  Safe on NULL. */
void bridge_stop(struct bridge *b);

/* A record the bridge could not write (an audit line: stage "audit"; the
 * ledger's copy of an answer, or giving up a pending record: "ledger"):
 * 1 with the stage and the message, the first fault of the run; 0 when
 * every record was written (or for NULL).  The call it happened to was
 * answered in_doubt when its tool acted, internal_error when not, and
 * every later call was refused.  After stop (stop syncs the audit, and a
 * failed sync is a fault too). */
int bridge_failed(const struct bridge *b, char *stage, size_t sn, char *msg, size_t mn);

/* The calls for the run's result (toolCalls); caller frees.  After stop. */
cJSON *bridge_calls_json(const struct bridge *b);

/* While it serves (a code-interpreter session's cells, sandbox.h): how
 * many toolCalls entries are listed so far, and a copy of those from
 * index `from` on; under the bridge's lock, so calls may go on.  NULL b:
 * 0 and an empty array. */
unsigned bridge_calls_listed(struct bridge *b);
cJSON *bridge_calls_from(struct bridge *b, unsigned from);

/* Connections refused at the peer check (peerRefusals): not the program's
 * calls, so neither in toolCalls nor counted against BRIDGE_MAX_CALLS.
 * 0 for NULL.  After stop. */
unsigned bridge_peer_refusals(const struct bridge *b);

void bridge_free(struct bridge *b);

#endif
