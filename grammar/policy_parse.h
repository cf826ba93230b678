/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy_parse.h - entry points of the flex/bison front end.
 */
#ifndef CORDON_POLICY_PARSE_H
#define CORDON_POLICY_PARSE_H

#include <sys/types.h>

#include "compiler/diag.h"
#include "cordon/arena.h"
#include "grammar/ast.h"

#define POLICY_MAX_INCLUDE_DEPTH 16

/* Where `include "x.policy"` and profile names are looked up, in order:
 * the including file's directory first (for includes), then dirs[]. */
struct policy_search {
	const char *const *dirs;
	size_t ndirs;
};

/*
 * Parse a seccomp policy file and, recursively, what it includes (cycles
 * and depth are errors).  An included file's rules stand where its
 * `include` stands.  The files read are listed in *srcs and live in the
 * arena a, so diagnostics can quote them for as long as the arena lives;
 * policy_srcs_free() frees only the lists.  A file already in *srcs (the
 * same device and inode, whatever the path) is not read again: its second
 * include is a no-op, also across calls that share srcs (a profile and its
 * extra file both including base.policy).  Returns 0, or -1 when any error
 * was reported.  Initialise srcs with { 0 }.
 */
struct policy_file_id {
	dev_t dev;
	ino_t ino;
};
struct policy_srcs {
	struct src_file **v; /* in the arena: diagnostics point at them */
	size_t n, cap;
	struct policy_file_id *ids; /* files read so far, each once */
	size_t nids, capids;
};
int policy_parse_file(const char *path, const struct policy_search *search, struct arena *a,
		      struct policy_srcs *srcs, struct pol_file *out, struct diags *d);
/* The same for a policy held in memory (tests, fuzzers); name is what
 * diagnostics call it.  Its includes are still read from files. */
int policy_parse_mem(const char *name, const char *text, size_t len, const struct policy_search *search,
		     struct arena *a, struct policy_srcs *srcs, struct pol_file *out, struct diags *d);
/* Find NAME.policy on the search path; 0 and a malloc'd path, or -1. */
int policy_find_profile(const char *name, const struct policy_search *search, char **path);
void policy_srcs_free(struct policy_srcs *s);

/*
 * Parse one expression (a tool constraint) from text[0..len), which sits in
 * file f at line:col (the position of its first character), so diagnostics
 * point into the YAML file.  Returns 0 and *out, or -1 after reporting.
 */
int policy_parse_expr(const struct src_file *f, uint32_t line, uint32_t col, const char *text, size_t len,
		      struct arena *a, struct ast_node **out, struct diags *d);

#endif
