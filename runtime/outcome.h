/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outcome.h - how a run that ended is classified: status, exit code of
 * `cordon run`, error code and message.  Pure (no I/O), so every branch is
 * unit-tested (tests/unit/test_outcome.c); sandbox_reduce() collects the
 * facts, this decides, and the result writer writes.
 */
#ifndef CORDON_OUTCOME_H
#define CORDON_OUTCOME_H

#include <stddef.h>

#include "runtime/supervise/supervise.h"

/* Exit codes of `cordon run` (docs/runtime.md). */
#define OUTCOME_EXIT_OK 0
#define OUTCOME_EXIT_FAILED 1
#define OUTCOME_EXIT_TIMEOUT 124
#define OUTCOME_EXIT_HARNESS 125
#define OUTCOME_EXIT_CANCELLED 130

struct outcome_in {
	enum sup_end end;
	int wstatus;            /* as waitpid() gives it */
	int oom_killed;         /* the cgroup says the OOM killer struck */
	size_t nviolations;     /* of the output contract */
	const char *cancel_why; /* the error message of a cancelled run */
	/* A harness fault found after the program ran (NULL: none): an
	 * audit line, a ledger record or a file of the kept run directory
	 * that could not be written.  fault_stage is the harness stage
	 * ("audit", "ledger", "rundir"), fault_msg what failed. */
	const char *fault_stage;
	const char *fault_msg;
	/* forks or clones the pids cgroup refused (pids.events "max"); 0
	 * also when no pids cgroup counted (RLIMIT_NPROC keeps no count) */
	unsigned long long pids_limit_hits;
};

struct outcome {
	const char *status;     /* succeeded, failed, timed_out, cancelled, limit_exceeded */
	int exit_code_run;      /* OUTCOME_EXIT_* */
	int has_exit_code;      /* the program exited (exitCode is not null) */
	int exit_code;
	const char *signal;     /* "KILL", ...; NULL when not killed by a signal */
	const char *error_code; /* NULL when succeeded */
	const char *error_message;
	char error_where[48];   /* "exec.harness.<stage>" for status error; "" otherwise */
};

void outcome_classify(const struct outcome_in *in, struct outcome *out);

/*
 * The code a tool call is answered with when its record (its audit line,
 * or the ledger's copy of its answer) could not be written.  tool_acted:
 * its tool ran in this call, or its answer was a recorded one (the tool
 * ran before).  Then the effect may have happened and the answer is
 * "in_doubt" (a retry with the same message id gets the recorded answer
 * when the ledger has one, never a second run); otherwise the call did not
 * run and the answer is "internal_error".  A call that acted is never
 * reported as one that did not.
 */
const char *outcome_call_unrecorded(int tool_acted);

#endif
