/* SPDX-License-Identifier: Apache-2.0 */
/*
 * constraint_eval.h - run a tool's constraints against one call's params.
 *
 * The bridge calls this after the parameter-signature check and before
 * roles, budget and replay (docs/constraints.md).  The programs were verified
 * when the blob was loaded (constraint_verify.c); the evaluator still
 * checks every value it takes from the request, because the signature
 * check is another module's promise, and a mismatch denies the call.
 *
 * Nothing is allocated: the stack is CPOL_CONSTRAINT_MAX_STACK values on
 * the C stack, strings are read in place from the cJSON tree, and the
 * time taken is at most one step per instruction of the tool's run (plus
 * the length of the strings compared).
 */
#ifndef CORDON_CONSTRAINT_EVAL_H
#define CORDON_CONSTRAINT_EVAL_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "cordon/policy.h"

enum constraint_verdict {
	CONSTRAINT_ALLOW = 0, /* every constraint held */
	CONSTRAINT_FALSE,     /* a constraint evaluated to false */
	CONSTRAINT_ABSENT,    /* a constraint read a parameter the call does not give (or gives as null) */
	CONSTRAINT_MISTYPED,  /* a parameter's value does not have its declared type */
	CONSTRAINT_BROKEN,    /* the program misbehaved; verification makes this unreachable */
};

struct constraint_result {
	enum constraint_verdict verdict;
	/* The constraint that decided, 0-based in the tool's `constraints:`
	 * list (for the audit log); with ALLOW, the number of constraints. */
	uint32_t index;
	/* ABSENT / MISTYPED: which of the tool's top-level params (an index
	 * into its params run); CPOL_NONE otherwise. */
	uint32_t param;
};

/*
 * Evaluate tool `tool`'s constraints, in order, against params (a JSON
 * object; anything else is treated as an object without members).  Stops
 * at the first constraint that does not hold.  Returns 1 when the call may
 * run (res->verdict == CONSTRAINT_ALLOW), 0 when it is denied.  p must have
 * come from blob_load(), or from the compiler, which emits the same code.
 */
int constraint_eval(const struct cpol_policy *p, uint32_t tool, const cJSON *params, struct constraint_result *res);

/* The number of constraints (programs) of a tool: the RETs in its run. */
uint32_t constraint_count(const struct cpol_policy *p, uint32_t tool);

/* "allow", "false", "absent", "mistyped", "broken". */
const char *constraint_verdict_name(enum constraint_verdict v);

#endif
