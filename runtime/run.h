/* SPDX-License-Identifier: Apache-2.0 */
/*
 * run.h - `cordon run`: one execution of untrusted code under a policy,
 * the sandbox lifecycle (sandbox.h) walked once.
 */
#ifndef CORDON_RUN_H
#define CORDON_RUN_H

#include <stdio.h>

#include "runtime/outcome.h"
#include "runtime/sandbox.h"

#define RUN_MAX_INPUTS SANDBOX_MAX_INPUTS

struct run_opts {
	const char *policy;
	const char *code;
	const char *inputs[RUN_MAX_INPUTS];
	unsigned ninputs;
	const char *context;
	const char *agent;
	const char *run_dir;     /* NULL: nothing kept (the run touches no disk) */
	const char *out;         /* --out DIR: the artifacts copied there; NULL: none */
	const char *trusted_key;
	const char *trust_dir;   /* --trust-dir DIR; NULL: CORDON_TRUST_DIR (runtime/trust_dir.h) */
	int allow_unsigned;      /* --allow-unsigned: run what the trust directory would refuse */
	int lint_level;          /* --require-lint-clean[=LEVEL]: enum lint_gate_level; LINT_GATE_OFF */
	const char *state_dir;   /* the ledger; NULL: /var/lib/cordon (root) or ~/.local/state/cordon */
	const char *ledger;      /* --ledger URL: the ledger on a PostgreSQL server; excludes state_dir */
	const char *secrets;     /* NAME=value file for the tools' env_from; NULL: the environment only */
	/* --host-ids FIRST:COUNT or FIRST-LAST, already checked by
	 * hostid_range_parse() (runtime/hostid.h); NULL: HOSTID_RANGE_DEFAULT_TEXT.
	 * Root only: rootless, the executor maps to the caller. */
	const char *host_ids;
	/* A signalfd of SIGTERM, SIGINT and SIGHUP (main() blocked them):
	 * readable cancels the run, and the signal names why.  -1: none. */
	int cancel_fd;
};

/* Exit codes of `cordon run` (docs/runtime.md). */
#define RUN_EXIT_OK OUTCOME_EXIT_OK
#define RUN_EXIT_FAILED OUTCOME_EXIT_FAILED
#define RUN_EXIT_USAGE 2
#define RUN_EXIT_TIMEOUT OUTCOME_EXIT_TIMEOUT
#define RUN_EXIT_HARNESS OUTCOME_EXIT_HARNESS
#define RUN_EXIT_CANCELLED OUTCOME_EXIT_CANCELLED

/* Runs it and writes the result JSON, one line, to out (flushed and
 * closed before the sandbox is torn down, so a reader has it at once);
 * returns the exit code.  A result that could not be written (a full
 * disk, /dev/full, a closed pipe) is RUN_EXIT_HARNESS whatever the run's
 * status, with the cause on errs. */
int run_execute(const struct run_opts *o, FILE *out, FILE *errs);

#endif
