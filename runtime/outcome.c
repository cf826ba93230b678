/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outcome.c - the classification of an ended run (outcome.h).
 *
 * The order of the checks is the contract: a record that could not be
 * written (audit, ledger, run directory) wins over everything, since a
 * run whose record is incomplete must never read as succeeded, and its
 * evidence is still reported; then what the supervisor did (timeout,
 * cancel, workspace breach) wins over how the program ended, since a killed
 * program's exit says nothing of its own; then the kernel's OOM kill; then
 * the program's exit, where a failure after the pids limit refused a fork
 * is put down to the limit (a program that handled the refusal and
 * exited 0 succeeded: the count is still in usage); then the output
 * contract.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "runtime/outcome.h"

static void set(struct outcome *o, const char *status, int rc, const char *code, const char *msg)
{
	o->status = status;
	o->exit_code_run = rc;
	o->error_code = code;
	o->error_message = msg;
}

void outcome_classify(const struct outcome_in *in, struct outcome *o)
{
	int exited = WIFEXITED(in->wstatus), sig = WIFSIGNALED(in->wstatus) ? WTERMSIG(in->wstatus) : 0;

	memset(o, 0, sizeof(*o));
	o->has_exit_code = exited;
	o->exit_code = exited ? WEXITSTATUS(in->wstatus) : 0;
	o->signal = sig ? (sigabbrev_np(sig) ? sigabbrev_np(sig) : "?") : NULL;
	if (in->fault_stage != NULL) {
		set(o, "error", OUTCOME_EXIT_HARNESS, "sandbox_execution_failed",
		    in->fault_msg ? in->fault_msg : "a record of the run could not be written");
		snprintf(o->error_where, sizeof(o->error_where), "exec.harness.%.24s", in->fault_stage);
		return;
	}
	switch (in->end) {
	case SUP_TIMED_OUT:
		set(o, "timed_out", OUTCOME_EXIT_TIMEOUT, "timeout", "the program ran past the policy's timeout");
		return;
	case SUP_CANCELLED:
		set(o, "cancelled", OUTCOME_EXIT_CANCELLED, "cancelled", in->cancel_why ? in->cancel_why : "cancelled");
		return;
	case SUP_WS_BREACH:
		set(o, "limit_exceeded", OUTCOME_EXIT_FAILED, "workspace_limit",
		    "the workspace grew past max_exec_workspace_delta_bytes, max_exec_workspace_bytes or its entry bound");
		return;
	case SUP_EXITED:
		break;
	}
	if (in->oom_killed)
		set(o, "limit_exceeded", OUTCOME_EXIT_FAILED, "memory_limit",
		    "the memory limit was reached and the kernel killed the program");
	else if (in->pids_limit_hits > 0 && !(exited && o->exit_code == 0))
		set(o, "limit_exceeded", OUTCOME_EXIT_FAILED, "pids_limit",
		    "the process limit (pids) refused a fork or clone and the program then failed");
	else if (exited && o->exit_code == 0 && in->nviolations == 0)
		set(o, "succeeded", OUTCOME_EXIT_OK, NULL, NULL);
	else if (exited && o->exit_code == 0)
		set(o, "failed", OUTCOME_EXIT_FAILED, "output_contract", "the declared outputs were not met");
	else
		set(o, "failed", OUTCOME_EXIT_FAILED, "program_failed",
		    sig ? "the program was killed by a signal" : "the program exited with a non-zero status");
}

const char *outcome_call_unrecorded(int tool_acted)
{
	return tool_acted ? "in_doubt" : "internal_error";
}
