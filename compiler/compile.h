/* SPDX-License-Identifier: Apache-2.0 */
/*
 * compile.h - the compiler front end: descriptor + inventories -> policy.
 *
 * The pipeline is fixed: read and check each text input (src_read), build
 * its YAML tree (ydoc_parse), read the descriptor, read every inventory,
 * sort and de-duplicate the tools, build the parameter forest, resolve the
 * agents' tool lists.  Each stage reports every error it can find; a stage
 * whose input is broken is skipped, not guessed around.  Any error means no
 * policy.
 */
#ifndef CORDON_COMPILE_H
#define CORDON_COMPILE_H

#include <stddef.h>

#include "compiler/diag.h"
#include "compiler/schema.h"
#include "compiler/yaml_doc.h"
#include "cordon/policy.h"

/* Bounds the front end enforces; docs/descriptor.md and docs/tools.md
 * list them. */
#define COMPILE_MAX_TOOLS 256
#define COMPILE_MAX_PARAMS 4096 /* all tools together */
#define COMPILE_MAX_PARAM_DEPTH 8
#define COMPILE_MAX_LIST 64 /* env, mounts, outputs, agents, exec args, roles... */
#define COMPILE_MAX_ENUM 256

/* One inventory tool while the front end works on it. */
struct tool_src {
	struct cpol_tool tool;
	const struct src_file *file;
	const struct ynode *node;   /* the tool's mapping */
	const struct ynode *id_node;
	const struct ynode *params; /* NULL when the tool has none */
	const struct ynode *returns; /* the result's spec, NULL when none */
	const struct ynode *constraints; /* sequence of strings, NULL when none (or broken) */
	size_t order;               /* input position, for stable sorting */
};

struct inventory {
	struct tool_src *v;
	size_t n, cap;
	uint32_t version;
};

/* Descriptor: fills meta, limits, exec, env, mounts, outputs.  *agents is
 * set to the agents mapping (or NULL) for agents_resolve(), which runs once
 * the tools are known. */
int descriptor_load(struct schema_ctx *c, const struct ynode *root, struct cpol_policy *p,
		    const struct ynode **agents);
int agents_resolve(struct schema_ctx *c, const struct ynode *agents, struct cpol_policy *p);

/* Inventory: appends one file's tools to inv. */
int inventory_load(struct schema_ctx *c, const struct ynode *root, struct inventory *inv);
/* Sorts, checks ids are unique across files, builds params, moves the
 * result into p. */
int inventory_finish(struct schema_ctx *c, struct inventory *inv, struct cpol_policy *p);
void inventory_free(struct inventory *inv);

/* Options of one compile. */
struct compile_options {
	/* Where seccomp profiles (NAME.policy) and includes are looked up,
	 * after the including file's own directory.  NULL: the default path,
	 * compile_default_policy_dirs(). */
	const char *const *policy_dirs;
	size_t npolicy_dirs;
};

/* The default policy path: $CORDON_POLICY_PATH (colon-separated) if set,
 * then this binary's own profiles (policy_home.h): PREFIX/share/cordon/
 * policies when installed, the source tree's policies/ when run from a
 * build tree (so a build runs without installing).  Malloc'd vector of
 * malloc'd strings; free with compile_dirs_free(). */
char **compile_default_policy_dirs(size_t *n);
void compile_dirs_free(char **dirs, size_t n);

/* The whole front end over in-memory sources (tests and fuzzers use it
 * directly).  p is initialised by the call; free it whatever the result,
 * after printing d (diagnostics may quote policy files kept in p's arena).
 * The diagnostics it adds to d are sorted by file (app, then tools in
 * order), line and column (diags_sort()).  Returns 0, or -1 when any error
 * was reported. */
int compile_sources(const struct src_file *app, const struct src_file *const *tools, size_t ntools,
		    struct cpol_policy *p, struct diags *d);
int compile_sources_opt(const struct src_file *app, const struct src_file *const *tools, size_t ntools,
			const struct compile_options *opt, struct cpol_policy *p, struct diags *d);
/* The text inputs of one compile.  They outlive the policy's diagnostics:
 * diags_print() quotes their lines, so free them after printing. */
struct compile_inputs {
	struct src_file app;
	struct src_file *tools;
	const struct src_file **refs; /* &tools[i], the shape compile_sources takes */
	size_t ntools;
};

/* Read every file (size, NUL and UTF-8 checked by src_read); -1 when any
 * could not be used.  Always call compile_inputs_free(). */
int compile_inputs_read(struct compile_inputs *in, const char *app_path, const char *const *tool_paths,
			size_t ntools, struct diags *d);
void compile_inputs_free(struct compile_inputs *in);

#endif
