/* SPDX-License-Identifier: Apache-2.0 */
/*
 * limits.c - the limits of one execution: set at all, and not absurd.
 *
 * "Absurd" is a threshold far above what a generated program needs and far
 * below what the compiler accepts: the compiler's bounds keep a value
 * meaningful, these keep it sane for untrusted code on a shared host.
 */
#include <stdio.h>
#include <string.h>

#include "lint/diff.h"
#include "lint/rules/rules.h"

#define KiB 1024ull
#define MiB (1024ull * KiB)
#define GiB (1024ull * MiB)

#define TIMEOUT_MAX_MS (60ull * 60 * 1000)
#define MEMORY_MAX (16 * GiB)
#define PIDS_MAX 1024u
#define FILE_BYTES_MAX (10 * GiB)
#define WS_DELTA_MAX (16 * GiB)
#define WS_TOTAL_MAX (64 * GiB)

void rule_limits_unset(struct lint_ctx *c, const struct lint_rule *r)
{
	static const char *const keys[] = { "timeout", "memory", "pids", "max_file_bytes",
					    "max_exec_workspace_delta_bytes" };
	const struct ynode *rt = lint_get(c->app_doc.root, "execution.runtime");
	char missing[256] = "";
	size_t i, n = 0;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (rt != NULL && rt->kind == YN_MAP && ymap_get(rt, keys[i]) != NULL)
			continue;
		snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), "%s%s", n ? ", " : "",
			 keys[i]);
		n++;
	}
	if (n == 0)
		return;
	lint_report(c, r, c->app, lint_nearest_key(c->app_doc.root, "execution.runtime"), "unset",
		    "execution.runtime does not set %s: the defaults apply", missing);
}

/* One limit above its threshold: report at the key's value, with both
 * written in the descriptor's own units. */
static void over(struct lint_ctx *c, const struct lint_rule *r, const char *key, uint64_t v, uint64_t max,
		 int is_ms, const char *what)
{
	char path[96], a[32], b[32];

	if (v <= max)
		return;
	snprintf(path, sizeof(path), "execution.runtime.%s", key);
	lint_report(c, r, c->app, lint_get(c->app_doc.root, path), key, "%s %s is above %s", what,
		    is_ms ? lint_fmt_ms(v, a, sizeof(a)) : lint_fmt_size(v, a, sizeof(a)),
		    is_ms ? lint_fmt_ms(max, b, sizeof(b)) : lint_fmt_size(max, b, sizeof(b)));
}

void rule_limit_timeout(struct lint_ctx *c, const struct lint_rule *r)
{
	over(c, r, "timeout", c->p.limits.timeout_ms, TIMEOUT_MAX_MS, 1, "timeout");
}

void rule_limit_memory(struct lint_ctx *c, const struct lint_rule *r)
{
	over(c, r, "memory", c->p.limits.memory_bytes, MEMORY_MAX, 0, "memory limit");
}

void rule_limit_pids(struct lint_ctx *c, const struct lint_rule *r)
{
	if (c->p.limits.pids <= PIDS_MAX)
		return;
	lint_report(c, r, c->app, lint_get(c->app_doc.root, "execution.runtime.pids"), "pids",
		    "pids limit %u is above %u", (unsigned)c->p.limits.pids, PIDS_MAX);
}

void rule_limit_file_bytes(struct lint_ctx *c, const struct lint_rule *r)
{
	over(c, r, "max_file_bytes", c->p.limits.max_file_bytes, FILE_BYTES_MAX, 0, "max_file_bytes");
}

void rule_limit_workspace(struct lint_ctx *c, const struct lint_rule *r)
{
	over(c, r, "max_exec_workspace_delta_bytes", c->p.limits.ws_delta_bytes, WS_DELTA_MAX, 0,
	     "max_exec_workspace_delta_bytes");
	over(c, r, "max_exec_workspace_bytes", c->p.limits.ws_max_bytes, WS_TOTAL_MAX, 0, "max_exec_workspace_bytes");
}

/* Without a cgroup the runtime holds memory with RLIMIT_AS, a bound on each
 * process's address space: N processes may hold N times the limit.  Only
 * require: [cgroup] makes such a host refuse the run.  The default limit
 * counts too, or leaving `memory` out would be the way to silence this. */
void rule_limit_memory_cgroup(struct lint_ctx *c, const struct lint_rule *r)
{
	const struct ynode *mem = lint_get(c->app_doc.root, "execution.runtime.memory");
	char a[32];

	if (c->p.exec.require & CPOL_LAYER_CGROUP)
		return;
	lint_report(c, r, c->app, mem != NULL ? mem : lint_nearest_key(c->app_doc.root, "execution.runtime.memory"),
		    "memory", "%smemory limit %s is per process, not a total, on a host without a memory cgroup: "
			      "execution.executor.require does not list cgroup",
		    mem != NULL ? "" : "the default ", lint_fmt_size(c->p.limits.memory_bytes, a, sizeof(a)));
}
