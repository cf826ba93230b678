/*
 * lint.h - `cordonc lint`: the rule catalogue run over a compiled policy and
 * the YAML it came from.
 *
 * A rule needs two views of the same input: the decoded policy (what the
 * runtime will enforce, defaults filled in) to judge, and the YAML tree with
 * marks to point at the exact key or value that is to blame.  struct
 * lint_ctx holds both, plus the seccomp policy files parsed once more so a
 * syscall finding can point at its rule.  Rules append findings; nothing in
 * lint/ prints except the writers (out_*.c), which take a FILE.
 *
 * Findings have a fingerprint made of the rule, the file's base name and a
 * subject that names what the finding is about ("mount:/run/docker.sock",
 * "env:GITHUB_TOKEN"), never the line: a baseline keeps matching when lines
 * move.
 */
#ifndef CORDON_LINT_H
#define CORDON_LINT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "compiler/compile.h"
#include "compiler/diag.h"
#include "compiler/yaml_doc.h"
#include "cordon/policy.h"
#include "grammar/ast.h"
#include "grammar/policy_parse.h"

enum lint_sev { LINT_OFF = -1, LINT_NOTE = 0, LINT_WARNING = 1, LINT_ERROR = 2 };

struct lint_ctx;
struct lint_rule;

typedef void (*lint_check_fn)(struct lint_ctx *c, const struct lint_rule *r);

/* One catalogue entry (lint/catalogue.c). */
struct lint_rule {
	const char *id;       /* "CDN303" */
	const char *name;     /* "container-socket-mount": SARIF's rule name */
	const char *title;    /* one line: SARIF shortDescription */
	enum lint_sev sev;    /* default severity */
	const char *security_severity; /* "9.8": GitHub's CVSS-like score */
	const char *hint;     /* how to fix, one sentence */
	const char *explain;  /* what it checks and how, paragraphs */
	const char *rationale; /* why it matters */
	lint_check_fn check;  /* NULL: a rule the pipeline itself reports (CDN0xx) */
};

/* The catalogue, sorted by id. */
const struct lint_rule *lint_catalogue(size_t *n);
/* Recorded in compiled blobs with their verdict (catalogue_version.c). */
const char *lint_catalogue_version(void);
const struct lint_rule *lint_rule_find(const char *id);
const char *lint_sev_name(enum lint_sev s); /* "error", "warning", "note", "off" */
int lint_sev_parse(const char *s, enum lint_sev *out); /* 0, or -1 */

/* Where a finding points: 1-based, end exclusive (SARIF's convention). */
struct lint_pos {
	const struct src_file *file;
	uint32_t line, col, end_line, end_col;
};

enum lint_state { LINT_ACTIVE = 0, LINT_SUPPRESSED, LINT_BASELINED };

struct lint_finding {
	const struct lint_rule *rule;
	enum lint_sev sev; /* after --rule overrides */
	struct lint_pos pos;
	char *msg;     /* owned */
	char *subject; /* owned; fingerprint input */
	char fingerprint[17];
	enum lint_state state;
	/* LINT_SUPPRESSED: the directive that did it. */
	char *reason;  /* owned */
	char until[11]; /* "YYYY-MM-DD" or "" */
	uint32_t supp_line;
};

/* The seccomp policy files of the descriptor, parsed again with their
 * marks (the compile keeps only the BPF). */
struct lint_seccomp {
	int ok;                 /* 0: not loaded (lint rules on it are skipped) */
	struct arena arena;     /* owns the files' text and nodes */
	struct policy_srcs srcs;
	struct pol_file prof, extra;
	char *prof_path;        /* malloc'd */
	char *extra_path;       /* malloc'd, NULL when no extra */
};

struct lint_override {
	const char *id;
	enum lint_sev sev;
};

struct lint_options {
	const char *const *policy_dirs; /* NULL: the default path */
	size_t npolicy_dirs;
	const struct lint_override *overrides;
	size_t noverrides;
	int no_inline_suppressions;
	long today; /* days since 1970-01-01 (UTC), for `until` dates */
};

struct lint_ctx {
	const struct lint_options *opt;
	struct cpol_policy p; /* the compiled policy */
	const struct src_file *app;
	struct ydoc app_doc;
	const struct src_file *const *tools;
	struct ydoc *tool_docs;
	size_t ntools;
	struct lint_seccomp sc;
	struct lint_finding *v;
	size_t n, cap;
	int oom; /* a finding could not be stored: the run must fail */
};

/*
 * Compile the inputs and run every rule that is not turned off.  Returns 0
 * with c filled, or -1 when the inputs do not compile (the reasons are in
 * d; lint reports nothing on a policy that would not be built).  Inline
 * suppressions are applied here; baselines are the caller's (baseline.c).
 * Findings come out sorted: file (app first, then inventories in order,
 * then policy files), line, column, rule id.  Always call lint_ctx_free().
 */
int lint_run(struct lint_ctx *c, const struct lint_options *opt, const struct src_file *app,
	     const struct src_file *const *tools, size_t ntools, struct diags *d);
void lint_ctx_free(struct lint_ctx *c);

/* --- for rules ------------------------------------------------------------ */

/* Append a finding at node n of file f (n NULL: line 1, col 1).  subject
 * identifies what it is about, for the fingerprint.  A rule turned off by
 * an override reports nothing. */
void lint_report(struct lint_ctx *c, const struct lint_rule *r, const struct src_file *f, const struct ynode *n,
		 const char *subject, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* The same at a position given outright (suppression comments). */
void lint_report_pos(struct lint_ctx *c, const struct lint_rule *r, const struct lint_pos *pos, const char *subject,
		     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* The same at a position in a policy file. */
void lint_report_loc(struct lint_ctx *c, const struct lint_rule *r, const struct ast_loc *loc,
		     const char *subject, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* The value at a dotted key path ("execution.executor.network") below
 * root, or NULL. */
const struct ynode *lint_get(const struct ynode *root, const char *dotted);
/* The key node of the last component, or NULL when any part is absent. */
const struct ynode *lint_key(const struct ynode *root, const char *dotted);
/* The key node of the deepest component that exists (for "this is not
 * set" findings), or root's first key, or NULL for an empty document. */
const struct ynode *lint_nearest_key(const struct ynode *root, const char *dotted);

/* The tool's mapping in the inventories, and the file it is in, or NULL. */
const struct ynode *lint_tool_node(const struct lint_ctx *c, const char *id, const struct src_file **f);

/* Days since 1970-01-01 of "YYYY-MM-DD", or -1 when it is not a real date. */
long lint_parse_date(const char *s);

/* Inline suppressions (suppress.c): mark findings suppressed by `# cordon:
 * allow ID -- reason` directives and add CDN0xx findings for directives that
 * are broken, expired or unused. */
void lint_suppress(struct lint_ctx *c);

#endif
