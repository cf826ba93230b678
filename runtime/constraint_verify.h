/* SPDX-License-Identifier: Apache-2.0 */
/*
 * constraint_verify.h - the loader's verifier for constraint bytecode
 * (format: cpol.h, "Constraint bytecode"; rules: docs/blob-format.md).
 */
#ifndef CORDON_CONSTRAINT_VERIFY_H
#define CORDON_CONSTRAINT_VERIFY_H

#include <stdint.h>

#include "cordon/blob.h"
#include "cordon/policy.h"

/*
 * Verify every tool's constraint programs in p, in the manner of a BPF
 * verifier: the tools' runs tile the instruction array in tool order, every
 * program ends in RET, jumps go forward and stay inside their program, the
 * stack is typed, bounded by CPOL_CONSTRAINT_MAX_STACK, never underflows,
 * has the same shape wherever paths join, and RET finds exactly one
 * boolean; every param index is inside the tool's top-level params and the
 * op's type is the param's declared type.  After this, evaluation always
 * terminates and an operand always has the type its op expects.
 *
 * Preconditions (blob_load() establishes them first): p's tools, params and
 * instructions are decoded, each instruction is well formed on its own, the
 * parameter forest is checked, and every tool's constraints range lies in
 * [0, p->nconstraints).  tools_off and insns_off are the TOOLS and
 * CONSTRAINTS section offsets, so errors can give byte offsets.  Returns 0,
 * or -1 with *err naming the field ("constraints[12].a",
 * "tools[1].constraints.first").
 */
int constraint_verify(const struct cpol_policy *p, uint64_t tools_off, uint64_t insns_off, struct blob_error *err);

/* "ret", "param", "jf", ...: for messages and disassembly; "?" when unknown. */
const char *constraint_op_name(uint8_t op);

#endif
