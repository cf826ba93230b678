/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_outcome.c - the classification of an ended run (runtime/outcome.h):
 * every branch, and the order in which the supervisor's own verdicts win
 * over the program's exit.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <signal.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/outcome.h"

#define EXITED(c) (((c) & 0xff) << 8)
#define KILLED(s) ((s) & 0x7f)

static struct outcome run(enum sup_end end, int wstatus, int oom, size_t nviol)
{
	struct outcome_in in = { end, wstatus, oom, nviol, "Terminated", NULL, NULL, 0 };
	struct outcome o;

	outcome_classify(&in, &o);
	return o;
}

static void test_succeeded(void **state)
{
	struct outcome o = run(SUP_EXITED, EXITED(0), 0, 0);

	(void)state;
	assert_string_equal(o.status, "succeeded");
	assert_int_equal(o.exit_code_run, OUTCOME_EXIT_OK);
	assert_true(o.has_exit_code);
	assert_int_equal(o.exit_code, 0);
	assert_null(o.signal);
	assert_null(o.error_code);
}

static void test_program_failed(void **state)
{
	struct outcome o = run(SUP_EXITED, EXITED(3), 0, 0);

	(void)state;
	assert_string_equal(o.status, "failed");
	assert_int_equal(o.exit_code_run, OUTCOME_EXIT_FAILED);
	assert_int_equal(o.exit_code, 3);
	assert_string_equal(o.error_code, "program_failed");
	assert_non_null(strstr(o.error_message, "non-zero"));
}

static void test_killed_by_signal(void **state)
{
	struct outcome o = run(SUP_EXITED, KILLED(SIGSEGV), 0, 0);

	(void)state;
	assert_string_equal(o.status, "failed");
	assert_false(o.has_exit_code);
	assert_string_equal(o.signal, "SEGV");
	assert_non_null(strstr(o.error_message, "signal"));
}

static void test_output_contract(void **state)
{
	struct outcome o = run(SUP_EXITED, EXITED(0), 0, 2);

	(void)state;
	assert_string_equal(o.status, "failed");
	assert_string_equal(o.error_code, "output_contract");
	assert_int_equal(o.exit_code_run, OUTCOME_EXIT_FAILED);
}

/* The OOM kill wins over the exit it caused and over the outputs. */
static void test_oom(void **state)
{
	struct outcome o = run(SUP_EXITED, KILLED(SIGKILL), 1, 1);

	(void)state;
	assert_string_equal(o.status, "limit_exceeded");
	assert_string_equal(o.error_code, "memory_limit");
	assert_string_equal(o.signal, "KILL");
}

/* pids_limit_never_reported (issue 15): a program that failed after the
 * pids cgroup refused a fork is limit_exceeded / pids_limit; one that
 * handled the refusal and exited 0 succeeded; OOM and the supervisor's
 * verdicts still come first. */
static void test_pids_limit(void **state)
{
	struct outcome_in in = { SUP_EXITED, EXITED(1), 0, 0, "Terminated", NULL, NULL, 2 };
	struct outcome o;

	(void)state;
	outcome_classify(&in, &o);
	assert_string_equal(o.status, "limit_exceeded");
	assert_int_equal(o.exit_code_run, OUTCOME_EXIT_FAILED);
	assert_string_equal(o.error_code, "pids_limit");
	in.wstatus = KILLED(SIGSEGV);
	outcome_classify(&in, &o);
	assert_string_equal(o.error_code, "pids_limit");
	in.wstatus = EXITED(0);
	outcome_classify(&in, &o);
	assert_string_equal(o.status, "succeeded");
	in.nviolations = 1;
	outcome_classify(&in, &o);
	assert_string_equal(o.error_code, "output_contract");
	in = (struct outcome_in){ SUP_EXITED, KILLED(SIGKILL), 1, 0, "Terminated", NULL, NULL, 2 };
	outcome_classify(&in, &o);
	assert_string_equal(o.error_code, "memory_limit");
	in.end = SUP_TIMED_OUT;
	outcome_classify(&in, &o);
	assert_string_equal(o.error_code, "timeout");
	in = (struct outcome_in){ SUP_EXITED, EXITED(1), 0, 0, "Terminated", NULL, NULL, 0 };
	outcome_classify(&in, &o);
	assert_string_equal(o.error_code, "program_failed");
}

/* The supervisor's verdicts win over everything the program did: its
 * SIGKILL exit is the supervisor's doing. */
static void test_supervisor_verdicts_win(void **state)
{
	struct outcome o = run(SUP_TIMED_OUT, KILLED(SIGKILL), 1, 3);

	(void)state;
	assert_string_equal(o.status, "timed_out");
	assert_int_equal(o.exit_code_run, OUTCOME_EXIT_TIMEOUT);
	assert_string_equal(o.error_code, "timeout");
	o = run(SUP_CANCELLED, KILLED(SIGKILL), 1, 0);
	assert_string_equal(o.status, "cancelled");
	assert_int_equal(o.exit_code_run, OUTCOME_EXIT_CANCELLED);
	assert_string_equal(o.error_message, "Terminated");
	o = run(SUP_WS_BREACH, KILLED(SIGKILL), 0, 0);
	assert_string_equal(o.status, "limit_exceeded");
	assert_string_equal(o.error_code, "workspace_limit");
	assert_int_equal(o.exit_code_run, OUTCOME_EXIT_FAILED);
}

static struct outcome faulted(enum sup_end end, int wstatus, int oom, const char *stage, const char *msg)
{
	struct outcome_in in = { end, wstatus, oom, 0, "Terminated", stage, msg, 0 };
	struct outcome o;

	outcome_classify(&in, &o);
	return o;
}

/* Issue 15: a full run-directory disk dropped every audit line and the
 * run still said succeeded, exit 0.  A record that could not be written
 * makes the run an error naming the stage, though the program exited 0,
 * and its exit code stays reported. */
static void test_full_rundir_audit_lost_is_error(void **state)
{
	struct outcome o = faulted(SUP_EXITED, EXITED(0), 0, "audit", "logs/tool-calls.jsonl: No space left on device");

	(void)state;
	assert_string_equal(o.status, "error");
	assert_int_equal(o.exit_code_run, OUTCOME_EXIT_HARNESS);
	assert_string_equal(o.error_code, "sandbox_execution_failed");
	assert_string_equal(o.error_where, "exec.harness.audit");
	assert_string_equal(o.error_message, "logs/tool-calls.jsonl: No space left on device");
	assert_true(o.has_exit_code);
	assert_int_equal(o.exit_code, 0);
	o = faulted(SUP_EXITED, EXITED(0), 0, "ledger", NULL);
	assert_string_equal(o.error_where, "exec.harness.ledger");
	assert_non_null(o.error_message);
	/* no fault: no where */
	o = faulted(SUP_EXITED, EXITED(0), 0, NULL, NULL);
	assert_string_equal(o.status, "succeeded");
	assert_string_equal(o.error_where, "");
}

/* A lost record wins over the supervisor's verdicts and the OOM kill: a
 * timed-out run whose audit was lost is reported as the error. */
static void test_fault_wins_over_verdicts(void **state)
{
	static const enum sup_end ends[] = { SUP_TIMED_OUT, SUP_CANCELLED, SUP_WS_BREACH, SUP_EXITED };

	(void)state;
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		struct outcome o = faulted(ends[i], KILLED(SIGKILL), 1, "rundir", "result.json: Input/output error");

		assert_string_equal(o.status, "error");
		assert_int_equal(o.exit_code_run, OUTCOME_EXIT_HARNESS);
		assert_string_equal(o.error_where, "exec.harness.rundir");
		assert_string_equal(o.signal, "KILL");
	}
}

/* Issue 15: a tool that ran, then its answer could not be recorded, was
 * answered internal_error ("did not run"), and a platform would send it
 * again under a new id.  A call that acted is in_doubt. */
static void test_ran_unrecorded_is_in_doubt(void **state)
{
	(void)state;
	assert_string_equal(outcome_call_unrecorded(1), "in_doubt");
	assert_string_equal(outcome_call_unrecorded(0), "internal_error");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_succeeded),	   cmocka_unit_test(test_program_failed),
		cmocka_unit_test(test_killed_by_signal),   cmocka_unit_test(test_output_contract),
		cmocka_unit_test(test_oom),		   cmocka_unit_test(test_supervisor_verdicts_win),
		cmocka_unit_test(test_full_rundir_audit_lost_is_error),
		cmocka_unit_test(test_fault_wins_over_verdicts),
		cmocka_unit_test(test_ran_unrecorded_is_in_doubt),
		cmocka_unit_test(test_pids_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
