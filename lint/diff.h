/* SPDX-License-Identifier: Apache-2.0 */
/*
 * diff.h - the meaning of a policy change, for reviewers: two decoded
 * policies in, a list of changes out, each marked as widening (more
 * authority for the generated code or its tools), narrowing, or neutral.
 *
 * "Widening" is judged per field: a new mount, a network, a looser limit,
 * a syscall the filter now allows for some arguments, a tool, role, secret
 * or agent grant added, a budget raised or removed, a parameter bound
 * loosened, a tool's implementation or constraints replaced.  Changes
 * that grant nothing (env values, names, descriptions) are neutral.
 */
#ifndef CORDON_LINT_DIFF_H
#define CORDON_LINT_DIFF_H

#include <stddef.h>

#include "cordon/policy.h"

enum diff_kind { DIFF_WIDEN = 0, DIFF_NARROW = 1, DIFF_CHANGE = 2 };

struct diff_change {
	enum diff_kind kind;
	char *path; /* "limits.timeout", "mounts[/data].rw", "tools[mail.send].roles" */
	char *old;  /* "" when added */
	char *new;  /* "" when removed */
};

struct diff_result {
	struct diff_change *v;
	size_t n, cap;
	size_t count[3]; /* by kind */
	int oom;
};

/* Compare a (old) with b (new).  Returns 0, or -1 when memory ran out.
 * Always call diff_free(). */
int policy_diff(const struct cpol_policy *a, const struct cpol_policy *b, struct diff_result *out);
void diff_free(struct diff_result *r);
const char *diff_kind_name(enum diff_kind k); /* "widen", "narrow", "change" */

/* Sizes and durations in the descriptor's units ("64k", "1m30s"... as
 * "90s"), for messages of lint and diff. */
const char *lint_fmt_size(uint64_t v, char *buf, size_t cap);
const char *lint_fmt_ms(uint64_t ms, char *buf, size_t cap);

#endif
