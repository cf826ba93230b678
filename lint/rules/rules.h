/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rules.h - the check functions of the catalogue, one file per family.
 *
 * Each takes the lint context and its own catalogue entry (for the id,
 * severity override and texts) and reports through lint_report*().  The
 * texts a person reads about a rule live in lint/catalogue.c; a check's
 * message says what this input does, with the values it found.
 */
#ifndef CORDON_LINT_RULES_H
#define CORDON_LINT_RULES_H

#include "lint/lint.h"

/* network.c */
void rule_network_enabled(struct lint_ctx *c, const struct lint_rule *r);
void rule_mode_local(struct lint_ctx *c, const struct lint_rule *r);
/* identity.c */
void rule_uid_host_account(struct lint_ctx *c, const struct lint_rule *r);
void rule_gid_host_group(struct lint_ctx *c, const struct lint_rule *r);
/* mounts.c */
void rule_mount_writable(struct lint_ctx *c, const struct lint_rule *r);
void rule_mount_sensitive(struct lint_ctx *c, const struct lint_rule *r);
void rule_mount_runtime_socket(struct lint_ctx *c, const struct lint_rule *r);
/* limits.c */
void rule_limits_unset(struct lint_ctx *c, const struct lint_rule *r);
void rule_limit_timeout(struct lint_ctx *c, const struct lint_rule *r);
void rule_limit_memory(struct lint_ctx *c, const struct lint_rule *r);
void rule_limit_pids(struct lint_ctx *c, const struct lint_rule *r);
void rule_limit_file_bytes(struct lint_ctx *c, const struct lint_rule *r);
void rule_limit_workspace(struct lint_ctx *c, const struct lint_rule *r);
void rule_limit_memory_cgroup(struct lint_ctx *c, const struct lint_rule *r);
/* seccomp.c */
void rule_seccomp_unnamed(struct lint_ctx *c, const struct lint_rule *r);
void rule_seccomp_default_allow(struct lint_ctx *c, const struct lint_rule *r);
void rule_seccomp_dangerous(struct lint_ctx *c, const struct lint_rule *r);
void rule_landlock_off(struct lint_ctx *c, const struct lint_rule *r);
/* env_secrets.c */
void rule_env_secret_name(struct lint_ctx *c, const struct lint_rule *r);
void rule_env_secret_value(struct lint_ctx *c, const struct lint_rule *r);
void rule_env_high_entropy(struct lint_ctx *c, const struct lint_rule *r);
void rule_env_tool_secret(struct lint_ctx *c, const struct lint_rule *r);
/* tools.c */
void rule_tool_no_replay(struct lint_ctx *c, const struct lint_rule *r);
void rule_tool_unbounded_param(struct lint_ctx *c, const struct lint_rule *r);
void rule_tool_no_roles(struct lint_ctx *c, const struct lint_rule *r);
void rule_tool_wildcard_role(struct lint_ctx *c, const struct lint_rule *r);
void rule_tool_timeout(struct lint_ctx *c, const struct lint_rule *r);
void rule_tool_unused_secret(struct lint_ctx *c, const struct lint_rule *r);
void rule_tool_run_as_supervisor(struct lint_ctx *c, const struct lint_rule *r);
void rule_tool_unlisted(struct lint_ctx *c, const struct lint_rule *r);
void rule_tool_unbudgeted(struct lint_ctx *c, const struct lint_rule *r);
/* tool_exec.c */
void rule_tool_exec_writable(struct lint_ctx *c, const struct lint_rule *r);
void rule_tool_exec_shell(struct lint_ctx *c, const struct lint_rule *r);
void rule_tool_exec_host_writable(struct lint_ctx *c, const struct lint_rule *r);
/* constraints.c */
void rule_constraint_unsatisfiable(struct lint_ctx *c, const struct lint_rule *r);
void rule_constraint_always_true(struct lint_ctx *c, const struct lint_rule *r);
void rule_constraint_unguarded_optional(struct lint_ctx *c, const struct lint_rule *r);

/* env_secrets.c, for tests: 1 when an environment name reads as a secret
 * (whole words, benign names excepted); the kind of secret a value looks
 * like ("a GitHub token"), or NULL; Shannon entropy in bits per byte. */
int secret_name_like(const char *name);
const char *secret_value_kind(const char *v);
double secret_entropy(const char *v, size_t len);

/* constraints.c, for tests: the outcomes a constraint can have over every
 * call whose top-level params (params[0..nparams), sorted by name) pass
 * the signature check: true, false, a read of an absent parameter. */
#define CONSTRAINT_O_TRUE 1u
#define CONSTRAINT_O_FALSE 2u
#define CONSTRAINT_O_ABSENT 4u
unsigned constraint_outcomes(const struct cpol_param *params, uint32_t nparams, const struct ast_node *expr);

#endif
