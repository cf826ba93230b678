/* SPDX-License-Identifier: Apache-2.0 */
/*
 * identity.c - who the executor is: someone the host already knows.  (Root
 * is not linted: the compiler refuses uid and gid 0.)
 *
 * The host-account rules read the linting host's account database
 * (getpwuid_r / getgrgid_r): as root, cordon maps the executor's ids to the
 * same numbers on the host, so a uid that is already somebody's owns that
 * somebody's files in every writable mount.  The answer depends on the host
 * lint runs on, which the rule's explain text says.
 */
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>

#include "lint/rules/rules.h"

/* The uid or gid value node, or the nearest key when the default is used. */
static const struct ynode *id_node(struct lint_ctx *c, const char *path)
{
	const struct ynode *n = lint_get(c->app_doc.root, path);

	return n != NULL ? n : lint_nearest_key(c->app_doc.root, path);
}

void rule_uid_host_account(struct lint_ctx *c, const struct lint_rule *r)
{
	struct passwd pw, *res = NULL;
	char buf[4096];

	if (getpwuid_r(c->p.exec.uid, &pw, buf, sizeof(buf), &res) != 0 || res == NULL)
		return;
	lint_report(c, r, c->app, id_node(c, "execution.executor.uid"), "uid",
		    "the executor's uid %u is the account '%.64s' on this host", (unsigned)c->p.exec.uid, pw.pw_name);
}

void rule_gid_host_group(struct lint_ctx *c, const struct lint_rule *r)
{
	struct group gr, *res = NULL;
	char buf[16384];

	if (getgrgid_r(c->p.exec.gid, &gr, buf, sizeof(buf), &res) != 0 || res == NULL)
		return;
	lint_report(c, r, c->app, id_node(c, "execution.executor.gid"), "gid",
		    "the executor's gid %u is the group '%.64s' on this host", (unsigned)c->p.exec.gid, gr.gr_name);
}
