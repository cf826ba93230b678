/* SPDX-License-Identifier: Apache-2.0 */
/*
 * network.c - how far the executor reaches: its network and its namespaces.
 */
#include "cordon/cpol.h"
#include "lint/rules/rules.h"

void rule_network_enabled(struct lint_ctx *c, const struct lint_rule *r)
{
	const struct ynode *n;

	if (c->p.exec.network == CPOL_NET_NONE)
		return;
	n = lint_get(c->app_doc.root, "execution.executor.network");
	lint_report(c, r, c->app, n, "network", "the executor gets a '%s' network: code inside can open sockets",
		    policy_network_name(c->p.exec.network));
}

void rule_mode_local(struct lint_ctx *c, const struct lint_rule *r)
{
	if (c->p.limits.mode != CPOL_MODE_LOCAL)
		return;
	lint_report(c, r, c->app, lint_get(c->app_doc.root, "execution.runtime.mode"), "mode",
		    "mode 'local' runs generated code without namespaces, mounts or an identity of its own");
}
