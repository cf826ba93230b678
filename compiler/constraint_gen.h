/* SPDX-License-Identifier: Apache-2.0 */
/*
 * constraint_gen.h - tool constraints: syntax tree -> typed check ->
 * bytecode (format: cpol.h, "Constraint bytecode"; language:
 * docs/constraints.md).
 *
 * The grammar (grammar/policy.y) only builds the tree; this pass judges it
 * against the tool's parameter signature, reports every error it finds
 * with the position of the node at fault, and emits one program per
 * constraint.  The loader verifies the result again (constraint_verify.c):
 * what this pass accepts, the verifier must accept.
 */
#ifndef CORDON_CONSTRAINT_GEN_H
#define CORDON_CONSTRAINT_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "compiler/diag.h"
#include "cordon/arena.h"
#include "cordon/policy.h"
#include "grammar/ast.h"

/* The instructions of all tools, in tool order, while they are built. */
struct constraint_code {
	struct cpol_insn *v;
	size_t n, cap;
};

/* What one constraint is compiled against. */
struct constraint_src {
	struct diags *d;
	struct arena *a;  /* the policy's: literal strings and lists are copied here */
	const char *path; /* "tools.mail.send.constraints[0]": prefix of every message */
	const struct cpol_param *params; /* the tool's top-level params, sorted by name */
	uint32_t nparams;
	/* Parameters whose specs had errors, already reported there: a name
	 * among them is not judged again, and the expression fails without a
	 * message of its own.  all_broken: the params could not be read at
	 * all, so every unknown name is one of those. */
	const char *const *broken;
	size_t nbroken;
	int all_broken;
};

/* Most values an `x in [...]` list may hold. */
#define CONSTRAINT_MAX_IN 256

/*
 * Check expr (a tree from policy_parse_expr()) against s->params and append
 * its program, ending in RET, to code.  Returns 0, or -1 after reporting
 * every error found, with code left as it was.  A program that would need
 * more than CPOL_CONSTRAINT_MAX_STACK stack slots or
 * CPOL_CONSTRAINT_MAX_PROGRAM instructions is an error too.
 */
int constraint_gen_expr(const struct constraint_src *s, const struct ast_node *expr, struct constraint_code *code);

/* Move code into p (p->constraints, p->nconstraints, in p's arena) and
 * empty it.  -1 when out of memory. */
int constraint_gen_store(struct constraint_code *code, struct cpol_policy *p);
void constraint_gen_free(struct constraint_code *code);

#endif
