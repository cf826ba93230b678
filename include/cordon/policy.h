/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy.h - the decoded policy, the same in memory on both sides.
 *
 * The compiler builds a struct cpol_policy from YAML and emit.c writes it;
 * blob_load.c reads a blob back into the same struct.  Round-trip tests
 * compare the two field by field, so the struct is the meaning of a blob.
 *
 * Ownership: every array and string hangs off the policy's arena and is freed
 * with policy_free(); nothing points into the file a policy came from.
 */
#ifndef CORDON_POLICY_H
#define CORDON_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "cordon/arena.h"
#include "cordon/cpol.h"

struct cpol_strs {
	const char **v;
	uint32_t n;
};

struct cpol_meta {
	const char *app;
	uint32_t descriptor_version;
	uint32_t inventory_version;
};

struct cpol_limits {
	uint64_t timeout_ms;
	uint64_t max_file_bytes;
	uint64_t ws_delta_bytes;
	uint64_t ws_max_bytes; /* 0: unset */
	uint64_t monitor_ms;
	uint64_t max_output_bytes;
	uint64_t max_result_bytes;
	uint64_t max_code_bytes;
	uint64_t memory_bytes;
	uint64_t max_tool_request_bytes;
	uint32_t pids;
	uint32_t open_files;
	uint32_t mode; /* enum cpol_mode */
	uint32_t ws_entries; /* files + directories the workspace may hold */
	/* CPU quota in thousandths of a CPU (execution.runtime.cpu); 0: no
	 * quota.  Non-zero only in a blob of minor >= CPOL_MINOR_CPU. */
	uint32_t cpu_milli;
};

struct cpol_executor {
	const char *interpreter;
	uint32_t uid;
	uint32_t gid;
	uint32_t network; /* enum cpol_network */
	uint32_t flags;   /* CPOL_EXE_F_* */
	uint32_t require; /* CPOL_LAYER_* */
	const char *seccomp_profile; /* "" when none */
	const char *seccomp_extra;   /* "" when none */
	/* Modules imported before the program arrives (executor.preload),
	 * in the descriptor's order; NULL when npreload is 0. */
	const char **preload;
	uint32_t npreload;
	/* Packages the program may import (executor.packages): imported
	 * after the preloads, before the program arrives, and told to the
	 * model; NULL when npackages is 0. */
	const char **packages;
	uint32_t npackages;
};

struct cpol_env {
	const char *key;
	const char *value;
};

struct cpol_mount {
	uint32_t type;  /* enum cpol_mount_type */
	uint32_t flags; /* CPOL_MNT_F_* */
	const char *source; /* "" for tmpfs */
	const char *target;
	uint64_t size; /* tmpfs bytes; 0 for bind */
};

struct cpol_bpf {
	uint16_t code;
	uint8_t jt;
	uint8_t jf;
	uint32_t k;
};

struct cpol_range {
	uint32_t first;
	uint32_t count;
};

struct cpol_param {
	const char *name; /* "" for an array's items spec */
	uint32_t type;    /* enum cpol_type */
	uint32_t flags;   /* CPOL_PRM_F_* */
	int64_t imin, imax; /* integer bounds, when flagged */
	double fmin, fmax;  /* number bounds, when flagged */
	uint64_t min_length;
	uint64_t max_length;
	uint64_t max_items;
	struct cpol_strs enums; /* strings only; empty when no enum */
	uint32_t items;         /* index into params, or CPOL_NONE */
	struct cpol_range props; /* object properties, sorted by name */
};

/* One constraint instruction (cpol.h, enum cpol_op), decoded.  Only the
 * operand fields its op uses are set; the others are zero / NULL.  Owned by
 * the policy's arena like everything else. */
struct cpol_insn {
	uint8_t op;   /* enum cpol_op */
	uint8_t type; /* enum cpol_type the op works on, or 0 */
	uint32_t a;   /* param index, jump offset (as i32), or 0/1 */
	int64_t ival; /* CPOL_OP_INT */
	double fval;  /* CPOL_OP_NUM */
	const char *str; /* CPOL_OP_STR, STARTS_WITH, ENDS_WITH */
	uint32_t len;    /* of str, in bytes */
	struct cpol_strs list; /* CPOL_OP_IN */
};

struct cpol_tool {
	const char *id;
	const char *description;
	uint32_t flags;     /* CPOL_TOOL_F_* */
	uint32_t max_calls; /* 0: no budget */
	uint32_t max_calls_per_day; /* 0: no daily budget */
	uint32_t run_as;      /* enum cpol_run_as */
	uint32_t run_uid;     /* CPOL_RUN_AS_IDS only, else 0 */
	uint32_t run_gid;     /* CPOL_RUN_AS_IDS only, else 0 */
	const char *run_user; /* CPOL_RUN_AS_USER: the name; else "" */
	uint64_t memory_bytes; /* the tool's own cgroup */
	uint32_t pids;
	uint64_t timeout_ms;
	struct cpol_strs exec; /* argv; exec.v[0] is an absolute path */
	struct cpol_strs env_from;
	struct cpol_strs roles; /* empty: any role the agent grants */
	struct cpol_range params;      /* top-level params, sorted by name */
	/* The result's spec: 1 + its index into params, 0 for none.  Biased as
	 * in the blob, so a zeroed tool has no result schema rather than
	 * params[0]'s. */
	uint32_t returns;
	struct cpol_range constraints; /* run of instructions in constraints[], one
					* program per constraint, each ending in RET */
};

/* An agent's code-interpreter sessions (3.6, docs/descriptor.md): flags 0
 * means the agent may hold none, and every other field is 0. */
struct cpol_session {
	uint32_t flags;      /* CPOL_AGT_F_* */
	uint32_t max_cells;
	uint64_t idle_ms;
	uint64_t life_ms;
	uint64_t cpu_ms;
	uint64_t ws_bytes;
};

struct cpol_agent {
	const char *name;
	uint32_t *tools; /* indices into tools, ascending */
	uint32_t ntools;
	struct cpol_session session;
};

struct cpol_output {
	const char *path;
	uint64_t max_bytes;
	uint32_t flags; /* CPOL_OUT_F_* */
};

struct cpol_signature {
	uint32_t algo; /* enum cpol_sig_algo */
	uint8_t keyid[8];
	uint8_t sig[64];
};

/* Provenance (3.5, SOURCES and LINT): what the blob was compiled from.
 * has is 0 in a blob without it (older, or built by blob_emit() from a
 * policy no compile filled in). */
struct cpol_source {
	uint32_t role; /* enum cpol_src_role */
	const char *name;
	uint8_t sha256[32];
};

struct cpol_provenance {
	int has;
	struct cpol_source *sources;
	uint32_t nsources;
	const char *catalogue;
	uint32_t errors, warnings, notes, suppressed;
	struct cpol_strs rules; /* suppressed rule ids, strictly ascending */
};

struct cpol_policy {
	struct arena arena;
	uint16_t major, minor;
	uint32_t arch;
	uint8_t sha256[32]; /* filled by the loader, and by emit on write */
	struct cpol_meta meta;
	struct cpol_limits limits;
	struct cpol_executor exec;
	struct cpol_env *env;
	uint32_t nenv;
	struct cpol_mount *mounts;
	uint32_t nmounts;
	struct cpol_bpf *seccomp;
	uint32_t nseccomp;
	struct cpol_tool *tools;
	uint32_t ntools;
	struct cpol_param *params;
	uint32_t nparams;
	/* Constraint bytecode of all tools (the CONSTRAINTS section); its
	 * fields are owned by the constraint code (compiler/constraint_gen.c,
	 * runtime/constraint_verify.c). */
	struct cpol_insn *constraints;
	uint32_t nconstraints; /* instructions */
	struct cpol_agent *agents;
	uint32_t nagents;
	struct cpol_output *outputs;
	uint32_t noutputs;
	struct cpol_provenance prov;
	struct cpol_signature signature;
};

void policy_init(struct cpol_policy *p);
void policy_free(struct cpol_policy *p);

/* Names for enums and flags, shared by inspect and diagnostics. */
const char *policy_type_name(uint32_t type);
const char *policy_mode_name(uint32_t mode);
const char *policy_network_name(uint32_t net);
const char *policy_mount_type_name(uint32_t type);
const char *policy_run_as_name(uint32_t run_as); /* "dedicated", "supervisor", "user", "ids"; "?" */
const char *policy_section_name(uint32_t id); /* "strtab", ...; "?" when unknown */
/* The section id at entry i of a table of nsec entries (CPOL_SEC_COUNT or
 * CPOL_SEC_COUNT_PROV): the one place that knows 3.5's order. */
uint32_t policy_section_at(uint32_t nsec, uint32_t i);
const char *policy_src_role_name(uint32_t role); /* "descriptor", "inventory", "policy"; "?" */

/* 1 when s is a name executor.preload takes: a dotted Python identifier,
 * [A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*, of 1 to
 * CPOL_PRELOAD_NAME_MAX bytes.  One rule for the compiler and the loader. */
int policy_module_name_ok(const char *s);

/* 1 when s can name a run's input file in the workspace's work/: 1 to 255
 * bytes, no '/', not "." or "..", and not main.py or user_code.py (the
 * loader's and the program's names).  One rule for the sandbox, which
 * writes the inputs, and the description, which names them to the model. */
int policy_input_name_ok(const char *s);

/* Lookups over the sorted tables: index or CPOL_NONE. */
uint32_t policy_find_tool(const struct cpol_policy *p, const char *id);
/* Tool t's result spec (its `returns:`), or NULL when it declares none or
 * the reference lies outside p's params. */
const struct cpol_param *policy_tool_returns(const struct cpol_policy *p, uint32_t t);
/* The agent named so, or NULL. */
const struct cpol_agent *policy_find_agent(const struct cpol_policy *p, const char *name);

#endif
