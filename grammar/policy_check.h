/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy_check.h - the semantic pass over a parsed seccomp policy.
 *
 * The grammar accepted the text; this pass decides what it means for
 * x86_64 and reports, each at its place, what cannot be meant: unknown
 * syscalls and constants, argument names past the syscall's arity, a
 * syscall given two rules, conditions that are constant or that libseccomp
 * cannot express.  Its output is a flat list of rules in the shape
 * libseccomp takes (compiler/seccomp_gen.c), so the generator decides
 * nothing.
 *
 * Meaning of a rule: "ACTION syscall(args) { cond }" is "if cond then ACTION
 * else the default"; a syscall has at most one rule.  cond is rewritten into
 * a disjunction of conjunctions of single-argument comparisons (one
 * libseccomp rule each, all with the same action, so their overlap cannot
 * matter).
 */
#ifndef CORDON_POLICY_CHECK_H
#define CORDON_POLICY_CHECK_H

#include <stdint.h>

#include <seccomp.h>

#include "compiler/diag.h"
#include "cordon/arena.h"
#include "grammar/ast.h"

#define CHECK_MAX_CONJ 64 /* alternatives a condition may expand to */
/* Work the expansion may do for one condition (see dnf_expand()): well
 * above what a condition of at most CHECK_MAX_CONJ alternatives without
 * contradictions needs, and a few milliseconds at most. */
#define CHECK_MAX_STEPS 65536

struct sc_conj {
	struct scmp_arg_cmp cmp[6];
	unsigned n;
};

struct sc_rule {
	int nr;
	const char *name;
	uint32_t action; /* SCMP_ACT_* */
	struct ast_loc loc;
	struct sc_conj *conj; /* NULL and nconj 0: unconditional */
	size_t nconj;
};

struct sc_policy {
	uint32_t def_action;
	struct sc_rule *rules; /* sorted by syscall number */
	size_t nrules;
};

/* Whether rule r's condition holds for args, by the DNF with 64-bit
 * semantics: the meaning the generated filter is verified against
 * (compiler/seccomp_verify.c).  An unconditional rule always holds. */
int policy_rule_holds(const struct sc_rule *r, const uint64_t args[6]);

/* Whether libseccomp 2.5.4 might loop building r: several alternatives,
 * one testing an argument with !=, <, <=, > or >= before a later argument.
 * policy_check() refuses the shape known to loop; compiler/seccomp_gen.c
 * builds the rest of these in a child with a time limit. */
int policy_rule_may_loop(const struct sc_rule *r);

/* Judge pf; on success fill *out (arrays in arena a) and return 0.  Errors
 * and warnings go to d; -1 when any error was reported. */
int policy_check(const struct pol_file *pf, struct arena *a, struct sc_policy *out, struct diags *d);

#endif
