/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seccomp_verify.h - check a generated seccomp filter against the policy
 * it was generated from, by running it (compiler/bpf_sim.c).
 *
 * libseccomp 2.5.4 builds wrong programs for some conditions that expand to
 * more than one alternative (docs/policy-language.md, "Verification"), so
 * what it returns is not trusted: every syscall with a rule is run over
 * boundary argument vectors and compared with the rule's meaning
 * (policy_rule_holds()), and the arch, x32 and unlisted-syscall paths are
 * run as well.
 */
#ifndef CORDON_SECCOMP_VERIFY_H
#define CORDON_SECCOMP_VERIFY_H

#include <stdint.h>

#include "compiler/diag.h"
#include "cordon/policy.h"
#include "grammar/policy_check.h"

/* Most argument vectors run per syscall with a rule. */
#define SECCOMP_VERIFY_MAX_VECTORS 4096

/* 0 when prog[0..n) gives what sp says on every vector tried; -1 after
 * reporting the first disagreement, at the rule's place when a rule is
 * concerned. */
int seccomp_verify(const struct sc_policy *sp, const struct cpol_bpf *prog, uint32_t n, struct diags *d);

#endif
