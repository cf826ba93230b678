/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seccomp.c - the executor's kernel filters: seccomp and landlock.
 *
 * The rules read the policy files themselves (lint_ctx.sc, parsed with
 * their marks), not the BPF: they need to say which rule allows a call.
 * The compile has already proved that the files are consistent (one rule a
 * syscall across the profile and its extra file) and that the BPF means
 * exactly those rules (compiler/seccomp_verify.c).  A finding that comes
 * from the descriptor's extra policy file points at the rule there; one
 * that comes from the named profile points at the profile's name in the
 * descriptor and names the profile's line in its message.
 */
#include <stdio.h>
#include <string.h>

#include "lint/rules/rules.h"

/* Calls that open the kernel up to whoever makes them.  Each name is one
 * the list (ptrace, bpf, mount, unshare, keyctl, perf_event_open,
 * io_uring) covers, spelled as the syscalls that implement it. */
static const char *const dangerous[] = {
	"ptrace",          "process_vm_readv", "process_vm_writev", "bpf",
	"mount",           "umount2",          "pivot_root",        "move_mount",
	"open_tree",       "fsopen",           "fsmount",           "unshare",
	"setns",           "keyctl",           "add_key",           "request_key",
	"perf_event_open", "io_uring_setup",   "io_uring_enter",    "io_uring_register",
	"userfaultfd",     "kexec_load",       "kexec_file_load",   "init_module",
	"finit_module",    "open_by_handle_at",
};

static int allows(const struct pol_action *a)
{
	return a->kind == POL_ALLOW || a->kind == POL_LOG;
}

/* The node that stands for the named profile in the descriptor. */
static const struct ynode *profile_node(struct lint_ctx *c)
{
	const struct ynode *n = lint_get(c->app_doc.root, "execution.executor.seccomp.profile");

	return n != NULL ? n : lint_nearest_key(c->app_doc.root, "execution.executor.seccomp.profile");
}

static const char *loc_file(const struct ast_loc *l)
{
	return l->file != NULL && l->file->path != NULL ? l->file->path : "?";
}

void rule_seccomp_unnamed(struct lint_ctx *c, const struct lint_rule *r)
{
	if (lint_get(c->app_doc.root, "execution.executor.seccomp.profile") != NULL)
		return;
	lint_report(c, r, c->app, profile_node(c), "profile",
		    "no seccomp profile is named: the default '%s' applies", c->p.exec.seccomp_profile);
}

void rule_seccomp_default_allow(struct lint_ctx *c, const struct lint_rule *r)
{
	const struct pol_file *src;
	const struct pol_action *def;

	if (!c->sc.ok)
		return;
	src = c->sc.prof.has_default ? &c->sc.prof : &c->sc.extra;
	if (!src->has_default || !allows(&src->def))
		return;
	def = &src->def;
	if (src == &c->sc.extra)
		lint_report_loc(c, r, &def->loc, "default", "the seccomp default allows every call no rule names");
	else
		lint_report(c, r, c->app, profile_node(c), "default",
			    "seccomp profile '%s' allows every call no rule names (default at %s:%u:%u)",
			    c->p.exec.seccomp_profile, loc_file(&def->loc), (unsigned)def->loc.line,
			    (unsigned)def->loc.col);
}

static const struct pol_rule *rule_for(const struct pol_file *pf, const char *sys)
{
	size_t i;

	for (i = 0; i < pf->nrules; i++)
		if (strcmp(pf->rules[i].syscall, sys) == 0)
			return &pf->rules[i];
	return NULL;
}

void rule_seccomp_dangerous(struct lint_ctx *c, const struct lint_rule *r)
{
	const struct pol_file *defsrc;
	char subject[64];
	size_t i;

	if (!c->sc.ok)
		return;
	defsrc = c->sc.prof.has_default ? &c->sc.prof : &c->sc.extra;
	for (i = 0; i < sizeof(dangerous) / sizeof(dangerous[0]); i++) {
		const char *sys = dangerous[i];
		const struct pol_rule *rule = rule_for(&c->sc.extra, sys);
		int from_extra = rule != NULL;
		const char *how;

		if (rule == NULL)
			rule = rule_for(&c->sc.prof, sys);
		snprintf(subject, sizeof(subject), "syscall:%s", sys);
		if (rule == NULL) {
			/* Left to the default; a default that allows is its own
			 * finding too, but each dangerous call it lets through is
			 * worth naming. */
			if (!defsrc->has_default || !allows(&defsrc->def))
				continue;
			if (defsrc == &c->sc.extra)
				lint_report_loc(c, r, &defsrc->def.loc, subject,
						"%s is allowed by the seccomp default", sys);
			else
				lint_report(c, r, c->app, profile_node(c), subject,
					    "seccomp profile '%s' allows %s by its default", c->p.exec.seccomp_profile,
					    sys);
			continue;
		}
		if (!allows(&rule->action))
			continue;
		how = rule->cond != NULL ? " when its condition holds" : "";
		if (from_extra && !rule->included)
			lint_report_loc(c, r, &rule->loc, subject, "%s is allowed%s", sys, how);
		else
			lint_report(c, r, c->app, from_extra ? lint_get(c->app_doc.root, "execution.executor.seccomp.extra")
							   : profile_node(c),
				    subject, "seccomp %s '%s' allows %s%s (%s:%u:%u)", from_extra ? "extra policy" : "profile",
				    from_extra ? c->p.exec.seccomp_extra : c->p.exec.seccomp_profile, sys, how,
				    loc_file(&rule->loc), (unsigned)rule->loc.line, (unsigned)rule->loc.col);
	}
}

void rule_landlock_off(struct lint_ctx *c, const struct lint_rule *r)
{
	if (c->p.exec.flags & CPOL_EXE_F_LANDLOCK)
		return;
	lint_report(c, r, c->app, lint_get(c->app_doc.root, "execution.executor.landlock"), "landlock",
		    "landlock is turned off: file access rests on the mounts alone");
}
