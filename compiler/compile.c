/* SPDX-License-Identifier: Apache-2.0 */
/*
 * compile.c - the front-end pipeline; see compile.h for the stages.
 */
#include <dirent.h>
#include <limits.h>
#include <linux/audit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "compiler/bpf_sim.h"
#include "compiler/compile.h"
#include "compiler/policy_home.h"
#include "compiler/seccomp_gen.h"
#include "grammar/policy_check.h"
#include "grammar/policy_parse.h"

/* Only when /proc/self/exe cannot be read (policy_home.h): the make
 * install PREFIX of the build. */
#ifndef CORDON_POLICY_DIRS
#define CORDON_POLICY_DIRS "/usr/local/share/cordon/policies"
#endif

static int dirs_push(char ***v, size_t *n, const char *s, size_t len)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (nv == NULL)
		return -1;
	*v = nv;
	nv[*n] = strndup(s, len);
	if (nv[*n] == NULL)
		return -1;
	(*n)++;
	return 0;
}

static int dirs_split(char ***v, size_t *n, const char *list)
{
	while (list != NULL && *list != '\0') {
		const char *colon = strchr(list, ':');
		size_t len = colon ? (size_t)(colon - list) : strlen(list);

		if (len > 0 && dirs_push(v, n, list, len) != 0)
			return -1;
		list = colon ? colon + 1 : NULL;
	}
	return 0;
}

char **compile_default_policy_dirs(size_t *n)
{
	char **v = NULL;
	char home[PATH_MAX];
	const char *own = policy_home_dir(home, sizeof(home)) == 0 ? home : CORDON_POLICY_DIRS;

	*n = 0;
	if (dirs_split(&v, n, getenv("CORDON_POLICY_PATH")) != 0 || dirs_split(&v, n, own) != 0) {
		compile_dirs_free(v, *n);
		*n = 0;
		return NULL;
	}
	return v;
}

void compile_dirs_free(char **dirs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(dirs[i]);
	free(dirs);
}

/* The shipped files that are included by profiles and are none
 * themselves (no default): never offered as "did you mean". */
static int profile_include_only(const char *file)
{
	return strcmp(file, "base.policy") == 0 || strcmp(file, "python-common.policy") == 0;
}

/* The profile a descriptor named that is on no policy directory: said at
 * the name's place, with the nearest profile that is (the names of every
 * *.policy file on the path but the include-only ones). */
static void profile_not_found(const struct src_file *app, const struct ynode *root, const char *name,
			      const struct policy_search *search, struct diags *d)
{
	const struct ynode *n = ymap_get(root, "execution");
	char *names[256];
	size_t nn = 0;
	const char *near;

	n = n ? ymap_get(n, "executor") : NULL;
	n = n ? ymap_get(n, "seccomp") : NULL;
	n = n ? ymap_get(n, "profile") : NULL;
	for (size_t i = 0; i < search->ndirs; i++) {
		DIR *dir = opendir(search->dirs[i]);
		struct dirent *de;

		while (dir != NULL && (de = readdir(dir)) != NULL && nn < sizeof(names) / sizeof(names[0])) {
			size_t len = strlen(de->d_name);

			if (len > 7 && strcmp(de->d_name + len - 7, ".policy") == 0 && !profile_include_only(de->d_name) &&
			    (names[nn] = strndup(de->d_name, len - 7)) != NULL)
				nn++;
		}
		if (dir != NULL)
			closedir(dir);
	}
	near = suggest_nearest(name, (const char *const *)names, nn);
	diag_at(d, DIAG_ERROR, app, n ? n->line : 0, n ? n->col : 0,
		"seccomp profile '%s' not found (looked for %s.policy on the policy path)%s%s%s", name, name,
		near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
}

/* `network: loopback` gives the sandbox a loopback interface, which only
 * matters to a program that may make an inet socket.  Under a filter that
 * refuses socket(AF_INET) it changes nothing, and the author who asked for
 * it would find out only at run time: warn at the key (a warning, not an
 * error: the blob is as safe as with network: none).  The compiled filter
 * itself is asked (bpf_sim), whatever profile and extra made it. */
static void loopback_check(const struct src_file *app, const struct ynode *root, const struct cpol_policy *p,
			   struct diags *d)
{
	static const int families[] = { AF_INET, AF_INET6 };
	const struct ynode *n = ymap_get(root, "execution");

	if (p->exec.network != CPOL_NET_LOOPBACK || p->nseccomp == 0)
		return;
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		struct bpf_sim_data sd = { .nr = SYS_socket, .arch = AUDIT_ARCH_X86_64,
					   .args = { (uint64_t)families[i], SOCK_STREAM, 0 } };

		if ((bpf_sim_run(p->seccomp, p->nseccomp, &sd) & BPF_SIM_RET_ACTION) == BPF_SIM_RET_ALLOW)
			return;
	}
	n = n ? ymap_get(n, "executor") : NULL;
	n = n ? ymap_get(n, "network") : NULL;
	diag_at(d, DIAG_WARNING, app, n ? n->line : 0, n ? n->col : 0,
		"network: loopback changes nothing under seccomp profile '%s': its filter refuses inet sockets "
		"(socket(AF_INET) and socket(AF_INET6)), so no program can use the loopback interface; use a "
		"profile that allows them (python-net-loopback: python-compute's calls and inet sockets), or say "
		"network: none",
		p->exec.seccomp_profile);
}

/*
 * The seccomp stage: the descriptor's profile (found on the policy path)
 * and its optional extra file (relative to the descriptor) are parsed as
 * one policy, judged, and compiled to BPF.  An extra file adds rules; the
 * one-rule-per-syscall check spans both, so an extra cannot quietly
 * override what the profile refuses.
 */
static int seccomp_stage(const struct src_file *app, const struct ynode *root, const struct compile_options *opt,
			 struct cpol_policy *p, struct diags *d)
{
	struct policy_search search = { opt->policy_dirs, opt->npolicy_dirs };
	struct policy_srcs srcs = { 0 };
	struct pol_file prof, extra, all;
	struct sc_policy sp;
	char *path = NULL, *extra_path = NULL;
	int rc = -1;

	memset(&prof, 0, sizeof(prof));
	memset(&extra, 0, sizeof(extra));
	memset(&all, 0, sizeof(all));
	if (p->exec.seccomp_profile[0] == '\0') {
		diag_at(d, DIAG_ERROR, app, 0, 0,
			"execution.executor.seccomp.profile is empty: every executor runs under a seccomp profile");
		return -1;
	}
	if (policy_find_profile(p->exec.seccomp_profile, &search, &path) != 0) {
		profile_not_found(app, root, p->exec.seccomp_profile, &search, d);
		return -1;
	}
	rc = policy_parse_file(path, &search, &p->arena, &srcs, &prof, d);
	if (p->exec.seccomp_extra[0] != '\0') {
		const char *slash = strrchr(app->path, '/');

		if (p->exec.seccomp_extra[0] == '/' || slash == NULL)
			extra_path = strdup(p->exec.seccomp_extra);
		else if (asprintf(&extra_path, "%.*s/%s", (int)(slash - app->path), app->path,
				  p->exec.seccomp_extra) < 0)
			extra_path = NULL;
		if (extra_path == NULL || policy_parse_file(extra_path, &search, &p->arena, &srcs, &extra, d) != 0)
			rc = -1;
		if (extra.has_default && prof.has_default) {
			diag_at(d, DIAG_ERROR, extra.def.loc.file, extra.def.loc.line, extra.def.loc.col,
				"the extra policy sets a 'default', but profile '%s' already has one",
				p->exec.seccomp_profile);
			diag_at(d, DIAG_NOTE, prof.def.loc.file, prof.def.loc.line, prof.def.loc.col,
				"the profile's 'default' is here");
			rc = -1;
		}
	}
	if (rc != 0)
		goto out;
	all = prof.has_default ? prof : extra;
	all.rules = arena_calloc(&p->arena, prof.nrules + extra.nrules + 1, sizeof(*all.rules));
	if (all.rules == NULL)
		goto fail;
	if (prof.nrules) /* a profile of only a default has no rule list at all */
		memcpy(all.rules, prof.rules, prof.nrules * sizeof(*all.rules));
	if (extra.nrules)
		memcpy(all.rules + prof.nrules, extra.rules, extra.nrules * sizeof(*all.rules));
	all.nrules = prof.nrules + extra.nrules;
	if (policy_check(&all, &p->arena, &sp, d) != 0 || seccomp_gen(&sp, p, d) != 0)
		goto fail;
	rc = 0;
	goto out;
fail:
	rc = -1;
out:
	free(path);
	free(extra_path);
	policy_srcs_free(&srcs);
	return rc;
}

int compile_sources(const struct src_file *app, const struct src_file *const *tools, size_t ntools,
		    struct cpol_policy *p, struct diags *d)
{
	struct compile_options opt = { NULL, 0 };
	char **dirs;
	size_t n = 0;
	int rc;

	dirs = compile_default_policy_dirs(&n);
	opt.policy_dirs = (const char *const *)dirs;
	opt.npolicy_dirs = n;
	rc = compile_sources_opt(app, tools, ntools, &opt, p, d);
	compile_dirs_free(dirs, n);
	return rc;
}

int compile_sources_opt(const struct src_file *app, const struct src_file *const *tools, size_t ntools,
			const struct compile_options *opt, struct cpol_policy *p, struct diags *d)
{
	struct ydoc app_doc;
	struct ydoc *tool_docs = NULL;
	struct inventory inv = { NULL, 0, 0, 0 };
	struct schema_ctx c = { d, app, NULL };
	const struct ynode *agents = NULL;
	const struct src_file **files = NULL;
	size_t errors0 = d->nerrors, diags0 = d->n, i, parsed = 0;
	int app_ok, inv_ok = 1;

	policy_init(p);
	c.a = &p->arena;
	p->major = CPOL_VERSION_MAJOR;
	p->minor = CPOL_VERSION_MINOR;
	p->arch = CPOL_ARCH_X86_64;
	memset(&app_doc, 0, sizeof(app_doc));
	tool_docs = calloc(ntools ? ntools : 1, sizeof(*tool_docs));
	if (tool_docs == NULL) {
		diag_at(d, DIAG_ERROR, NULL, 0, 0, "out of memory");
		goto out;
	}

	/* Stage 1: every file parses on its own, so a syntax error in the
	 * inventory is reported even when the descriptor is broken too.  A
	 * tree that came back whole despite errors (a duplicate key, an
	 * anchor) is still checked, so one run reports those errors and the
	 * descriptor's own; a tree cut short by a syntax error is not, since
	 * its missing half would only produce noise. */
	ydoc_parse(app, &app_doc, d);
	app_ok = app_doc.root != NULL;
	for (i = 0; i < ntools; i++, parsed++) {
		ydoc_parse(tools[i], &tool_docs[i], d);
		if (tool_docs[i].root == NULL)
			inv_ok = 0;
	}

	/* Stage 2: the descriptor's own keys, then its seccomp profile, which
	 * only makes sense once the descriptor named one without errors. */
	if (app_ok) {
		c.f = app;
		if (descriptor_load(&c, app_doc.root, p, &agents) == 0)
			if (seccomp_stage(app, app_doc.root, opt, p, d) == 0)
				loopback_check(app, app_doc.root, p, d);
	}

	/* Stage 3: inventories, then tools sorted and checked as one set.  A
	 * file cut short by a syntax error is left out, not the others: one
	 * run reports every inventory's errors (issue 14: a syntax error in
	 * one file used to hide the rest until it was fixed). */
	for (i = 0; i < ntools; i++) {
		c.f = tools[i];
		if (tool_docs[i].root != NULL && inventory_load(&c, tool_docs[i].root, &inv) != 0)
			inv_ok = 0;
	}
	c.f = app;
	if (inventory_finish(&c, &inv, p) != 0)
		inv_ok = 0;

	/* Stage 4: agents name tools; with a broken inventory every name would
	 * look unknown, so they are only resolved against a complete one. */
	if (app_ok && inv_ok && agents != NULL) {
		c.f = app;
		agents_resolve(&c, agents, p);
	}
out:
	/* By file, line and column, the inputs in command-line order; kept in
	 * the order reported when there is no memory to sort. */
	files = calloc(ntools + 1, sizeof(*files));
	if (files != NULL) {
		files[0] = app;
		for (i = 0; i < ntools; i++)
			files[i + 1] = tools[i];
		diags_sort(d, diags0, files, ntools + 1);
	}
	free(files);
	inventory_free(&inv);
	ydoc_free(&app_doc);
	for (i = 0; i < parsed; i++)
		ydoc_free(&tool_docs[i]);
	free(tool_docs);
	return d->nerrors > errors0 ? -1 : 0;
}

int compile_inputs_read(struct compile_inputs *in, const char *app_path, const char *const *tool_paths,
			size_t ntools, struct diags *d)
{
	size_t i;
	int rc = 0;

	memset(in, 0, sizeof(*in));
	in->tools = calloc(ntools ? ntools : 1, sizeof(*in->tools));
	in->refs = calloc(ntools ? ntools : 1, sizeof(*in->refs));
	if (in->tools == NULL || in->refs == NULL) {
		diag_at(d, DIAG_ERROR, NULL, 0, 0, "out of memory");
		return -1;
	}
	/* Every file is read even after one fails, so one run names every
	 * unreadable or malformed input. */
	if (src_read(app_path, YDOC_MAX_BYTES, &in->app, d) != 0)
		rc = -1;
	for (i = 0; i < ntools; i++) {
		if (src_read(tool_paths[i], YDOC_MAX_BYTES, &in->tools[i], d) != 0)
			rc = -1;
		in->refs[i] = &in->tools[i];
	}
	in->ntools = ntools;
	return rc;
}

void compile_inputs_free(struct compile_inputs *in)
{
	size_t i;

	src_free(&in->app);
	for (i = 0; i < in->ntools; i++)
		src_free(&in->tools[i]);
	free(in->tools);
	free(in->refs);
	memset(in, 0, sizeof(*in));
}
