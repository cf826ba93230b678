/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seccomp_gen.h - a checked seccomp policy into classic BPF, with libseccomp.
 */
#ifndef CORDON_SECCOMP_GEN_H
#define CORDON_SECCOMP_GEN_H

#include "compiler/diag.h"
#include "cordon/policy.h"
#include "grammar/policy_check.h"

/* Generate the filter for sp and store it in p->seccomp (p's arena).
 * -1 after reporting when libseccomp refuses or the program is too long. */
int seccomp_gen(const struct sc_policy *sp, struct cpol_policy *p, struct diags *d);

#endif
