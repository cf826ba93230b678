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
};

void outcome_classify(const struct outcome_in *in, struct outcome *out);

#endif
