/*
 * run.h - `cordon run`: one execution of untrusted code under a policy.
 */
#ifndef CORDON_RUN_H
#define CORDON_RUN_H

#define RUN_MAX_INPUTS 64

struct run_opts {
	const char *policy;
	const char *code;
	const char *inputs[RUN_MAX_INPUTS];
	unsigned ninputs;
	const char *context;
	const char *agent;
	const char *run_dir;     /* NULL: a temporary one, removed afterwards */
	const char *trusted_key;
	const char *state_dir;   /* the ledger; NULL: /var/lib/cordon (root) or ~/.local/state/cordon */
	const char *secrets;     /* NAME=value file for the tools' env_from; NULL: the environment only */
	/* --host-ids FIRST:COUNT or FIRST-LAST, already checked by
	 * hostid_range_parse() (runtime/hostid.h); NULL: HOSTID_RANGE_DEFAULT_TEXT.
	 * Root only: rootless, the executor maps to the caller. */
	const char *host_ids;
};

/* Exit codes of `cordon run` (DESIGN.md §4). */
#define RUN_EXIT_OK 0
#define RUN_EXIT_FAILED 1
#define RUN_EXIT_USAGE 2
#define RUN_EXIT_TIMEOUT 124
#define RUN_EXIT_HARNESS 125
#define RUN_EXIT_CANCELLED 130

/* Runs it, prints the result JSON on stdout, returns the exit code. */
int run_execute(const struct run_opts *o);

#endif
