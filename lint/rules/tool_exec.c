/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tool_exec.c - what a tool runs: where its code lies, who may change it,
 * and whether its code is a file at all.
 *
 * Three rules read `exec` the same way: exec[0] is code; after an
 * interpreter (python3, sh, node...) its first operand is code too; and
 * any argument (or --opt=VALUE) naming a script is code.  Other arguments
 * are data (an outbox directory, an address).  exec_walk() is that
 * reading, once.
 */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/tool_path.h"
#include "lint/rules/rules.h"

#define SUBJECT_MAX 256

/* Host directories the sandboxed program, or any local user, can write:
 * a tool implementation there can be replaced by the code it serves. */
static const char *const writable_dirs[] = { "/workspace", "/tmp", "/var/tmp", "/dev/shm", "/supervisor-socket" };

/* Interpreters whose first operand is the program they run. */
static const char *const interpreters[] = { "python", "python3", "sh", "bash", "dash", "node", "perl", "ruby" };

/* Shells: whatever they run, their program is text a shell interprets. */
static const char *const shells[] = { "sh",  "bash", "dash", "zsh",  "ksh",  "mksh", "pdksh", "ash",
				      "yash", "fish", "csh",  "tcsh", "rbash", "busybox" };

/* Interpreters and the options that take the program as a string. */
static const struct {
	const char *name;
	const char *flags; /* short option letters, the last of a cluster */
	const char *longopt; /* or NULL */
} inline_code[] = {
	{ "python", "c", NULL },   { "python3", "c", NULL }, { "pypy3", "c", NULL }, { "perl", "eE", NULL },
	{ "ruby", "e", NULL },     { "node", "ep", "--eval" }, { "nodejs", "ep", "--eval" }, { "php", "r", NULL },
	{ "lua", "e", NULL },      { "Rscript", "e", NULL }, { "deno", "", "eval" },
};

static int is_script_name(const char *p)
{
	const char *dot = strrchr(p, '.');

	return dot != NULL && (!strcmp(dot, ".py") || !strcmp(dot, ".sh") || !strcmp(dot, ".js") ||
			       !strcmp(dot, ".rb") || !strcmp(dot, ".pl"));
}

static const char *base_of(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* name, or name followed by a version: python3.11, perl5.36, ruby3.1. */
static int name_is(const char *base, const char *name)
{
	size_t n = strlen(name);

	return strncmp(base, name, n) == 0 && strspn(base + n, "0123456789.") == strlen(base + n);
}

static int in_list(const char *base, const char *const *names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (name_is(base, names[i]))
			return 1;
	return 0;
}

/* The path an exec argument names as code, or NULL when it names none:
 * the value of --opt=VALUE, the argument itself when is_code or when it
 * names a script; never an option or a URL. */
static const char *exec_code_path(const char *arg, int is_code)
{
	const char *p = arg, *eq;

	if (arg[0] == '-' && (eq = strchr(arg, '=')) != NULL)
		p = eq + 1;
	else if (arg[0] == '-')
		return NULL;
	if (p[0] == '\0' || strstr(p, "://") != NULL || (!is_code && !is_script_name(p)))
		return NULL;
	return p;
}

/* The option that makes interpreter base take its program from the next
 * argument (or this one), or NULL.  Options are read up to the first
 * operand: after a script, arguments are the script's. */
static const char *inline_flag(const char *base, const struct ynode *ex, size_t first)
{
	size_t i, j;

	for (i = 0; i < sizeof(inline_code) / sizeof(inline_code[0]); i++) {
		if (!name_is(base, inline_code[i].name))
			continue;
		for (j = first; j < ex->n && ex->vals[j]->kind == YN_SCALAR; j++) {
			const char *a = ex->vals[j]->str;
			size_t n = strlen(a);

			if (inline_code[i].longopt != NULL &&
			    (strcmp(a, inline_code[i].longopt) == 0 ||
			     (strncmp(a, inline_code[i].longopt, strlen(inline_code[i].longopt)) == 0 &&
			      a[strlen(inline_code[i].longopt)] == '=')))
				return a;
			if (a[0] != '-')
				return NULL;
			/* A cluster of short options ending in the flag: -c, -Sc, -ne. */
			if (n >= 2 && a[1] != '-' && strchr(inline_code[i].flags, a[n - 1]) != NULL &&
			    inline_code[i].flags[0] != '\0')
				return a;
		}
		return NULL;
	}
	return NULL;
}

typedef void (*exec_fn)(void *arg, const char *tool, const struct ynode *at, size_t j, const char *path);

/* Calls fn for each argument of ex that names code, with that path. */
static void exec_walk(const struct ynode *ex, const char *tool, exec_fn fn, void *arg)
{
	const char *base = ex->n > 0 && ex->vals[0]->kind == YN_SCALAR ? base_of(ex->vals[0]->str) : "";
	int operand_is_code = in_list(base, interpreters, sizeof(interpreters) / sizeof(interpreters[0]));
	const char *path, *inline_opt = inline_flag(base, ex, 1);
	size_t j;

	for (j = 0; j < ex->n; j++) {
		const struct ynode *a = ex->vals[j];
		int is_code = j == 0;

		if (a->kind != YN_SCALAR)
			continue;
		/* python3 -m MODULE, sh -c TEXT, perl -ne TEXT: no file to judge. */
		if (operand_is_code && (!strcmp(a->str, "-m") || !strcmp(a->str, "-c") || !strcmp(a->str, "-e") ||
					a->str == inline_opt))
			operand_is_code = 0;
		if (j > 0 && operand_is_code && a->str[0] != '-') {
			is_code = 1; /* the interpreter's program; later operands are its arguments */
			operand_is_code = 0;
		}
		if ((path = exec_code_path(a->str, is_code)) != NULL)
			fn(arg, tool, a, j, path);
	}
}

struct exec_rule {
	struct lint_ctx *c;
	const struct lint_rule *r;
	const struct src_file *f;
};

/* Runs fn over the code of every tool's exec. */
static void exec_each(struct lint_ctx *c, const struct lint_rule *r, exec_fn fn)
{
	struct exec_rule w = { c, r, NULL };
	uint32_t i;

	for (i = 0; i < c->p.ntools; i++) {
		const struct ynode *tn = lint_tool_node(c, c->p.tools[i].id, &w.f);
		const struct ynode *ex = tn ? ymap_get(tn, "exec") : NULL;

		if (ex != NULL && ex->kind == YN_SEQ)
			exec_walk(ex, c->p.tools[i].id, fn, &w);
	}
}

static void report_code(struct exec_rule *w, const char *tool, const struct ynode *at, size_t j, const char *path,
			const char *why)
{
	char subject[SUBJECT_MAX];

	snprintf(subject, sizeof(subject), "tool:%s:exec:%zu", tool, j);
	lint_report(w->c, w->r, w->f, at, subject, "tool %s runs %s: %s", tool, path, why);
}

/* --- CDN705: code under a directory others write, by its path ------------ */

static void prefix_judge(void *arg, const char *tool, const struct ynode *at, size_t j, const char *p)
{
	size_t i, len;

	if (p[0] != '/') {
		report_code(arg, tool, at, j, at->str,
			    "a relative path, resolved against whatever directory the supervisor runs in");
		return;
	}
	for (i = 0; i < sizeof(writable_dirs) / sizeof(writable_dirs[0]); i++) {
		len = strlen(writable_dirs[i]);
		if (strncmp(p, writable_dirs[i], len) == 0 && (p[len] == '/' || p[len] == '\0')) {
			report_code(arg, tool, at, j, at->str,
				    strcmp(writable_dirs[i], "/workspace") == 0
					    ? "under /workspace, which the sandboxed program writes"
					    : "under a directory every local user can write");
			return;
		}
	}
}

void rule_tool_exec_writable(struct lint_ctx *c, const struct lint_rule *r)
{
	exec_each(c, r, prefix_judge);
}

/* --- CDN715: code others may change, by owner and mode on this host ------ */

/* Trusted owners: root, and the `cordon` service account when the host
 * has one.  Everyone else - any other uid, system accounts included - is
 * an ordinary user whose files cordon must not run with a tool's secrets. */
static uid_t service_uid(void)
{
	struct passwd pw, *res = NULL;
	char buf[4096];

	if (getpwnam_r("cordon", &pw, buf, sizeof(buf), &res) != 0 || res == NULL)
		return 0;
	return res->pw_uid;
}

static void host_judge(void *arg, const char *tool, const struct ynode *at, size_t j, const char *p)
{
	char why[600], msg[700];

	/* Relative paths are CDN705's; a path that does not exist here, with
	 * every directory above it that does exist safe, is the run's to
	 * judge on the host that has it. */
	if (p[0] != '/' || tool_path_check(p, service_uid(), why, sizeof(why)) != TOOL_PATH_UNSAFE)
		return;
	snprintf(msg, sizeof(msg), "on this host %s", why);
	report_code(arg, tool, at, j, p, msg);
}

void rule_tool_exec_host_writable(struct lint_ctx *c, const struct lint_rule *r)
{
	exec_each(c, r, host_judge);
}

/* --- CDN714: a shell, or code given as a string -------------------------- */

void rule_tool_exec_shell(struct lint_ctx *c, const struct lint_rule *r)
{
	const struct src_file *f;
	char subject[SUBJECT_MAX];
	uint32_t i;

	for (i = 0; i < c->p.ntools; i++) {
		const char *id = c->p.tools[i].id, *base, *flag;
		const struct ynode *tn = lint_tool_node(c, id, &f);
		const struct ynode *ex = tn ? ymap_get(tn, "exec") : NULL;
		size_t prog = 0;

		if (ex == NULL || ex->kind != YN_SEQ || ex->n == 0 || ex->vals[0]->kind != YN_SCALAR)
			continue;
		/* env [-i] [-u NAME] [NAME=VALUE...] PROGRAM: judge PROGRAM. */
		while (prog < ex->n && ex->vals[prog]->kind == YN_SCALAR) {
			const char *a = ex->vals[prog]->str;

			if (prog == 0 && strcmp(base_of(a), "env") != 0)
				break;
			if (prog > 0 && a[0] != '-' && strchr(a, '=') == NULL)
				break;
			prog += prog > 0 && (!strcmp(a, "-u") || !strcmp(a, "--unset")) ? 2 : 1;
		}
		if (prog >= ex->n || ex->vals[prog]->kind != YN_SCALAR)
			continue;
		base = base_of(ex->vals[prog]->str);
		snprintf(subject, sizeof(subject), "tool:%s", id);
		if (in_list(base, shells, sizeof(shells) / sizeof(shells[0]))) {
			/* busybox is every tool at once; only its shells count. */
			if (name_is(base, "busybox") &&
			    (prog + 1 >= ex->n || ex->vals[prog + 1]->kind != YN_SCALAR ||
			     !in_list(ex->vals[prog + 1]->str, shells, sizeof(shells) / sizeof(shells[0]))))
				continue;
			lint_report(c, r, f, ex->vals[prog], subject,
				    "tool %s runs the shell %s: its program is shell text, and a parameter that reaches "
				    "it can become a command",
				    id, ex->vals[prog]->str);
		} else if ((flag = inline_flag(base, ex, prog + 1)) != NULL) {
			lint_report(c, r, f, ex->vals[prog], subject,
				    "tool %s runs %s %s: its code is a string in the inventory, not a file that can be "
				    "owned, reviewed and tested",
				    id, ex->vals[prog]->str, flag);
		}
	}
}
