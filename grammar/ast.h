/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ast.h - the syntax tree of the policy language (grammar/policy.y).
 *
 * One expression grammar serves two back ends: seccomp argument conditions
 * (compiler/seccomp_gen.c) and tool constraints (compiler/constraint_gen.c).
 * The grammar only builds nodes; grammar/policy_check.c and the two back
 * ends judge them (types, names, ranges), so a node may be well formed and
 * still meaningless for one of the uses.
 *
 * Every node and string lives in the arena given to the parser.
 */
#ifndef CORDON_AST_H
#define CORDON_AST_H

#include <stddef.h>
#include <stdint.h>

#include "compiler/diag.h"

/* Where a node starts: the file it was read from and a 1-based position. */
struct ast_loc {
	const struct src_file *file;
	uint32_t line, col;
};

enum ast_kind {
	AST_INT = 1, /* ival: a non-negative literal (decimal, 0x hex, 0o/0 octal) */
	AST_NUM,     /* fval: a literal with a fraction or exponent (constraints) */
	AST_STR,     /* str/len: a string literal, escapes resolved */
	AST_BOOL,    /* ival 0/1: true / false */
	AST_IDENT,   /* str: a name (syscall argument, constant, parameter) */
	AST_CALL,    /* str: function name; items[0..n): arguments */
	AST_LIST,    /* items[0..n): [a, b, c] */
	AST_UNARY,   /* op: AST_OP_NOT or AST_OP_NEG; a: operand */
	AST_BINARY,  /* op: one of the binary ops; a, b: operands */
};

enum ast_op {
	AST_OP_NONE = 0,
	AST_OP_OR,   /* || */
	AST_OP_AND,  /* && */
	AST_OP_NOT,  /* !  (unary) */
	AST_OP_NEG,  /* -  (unary) */
	AST_OP_EQ,   /* == */
	AST_OP_NE,   /* != */
	AST_OP_LT,   /* <  */
	AST_OP_LE,   /* <= */
	AST_OP_GT,   /* >  */
	AST_OP_GE,   /* >= */
	AST_OP_IN,   /* in (b is an AST_LIST) */
	AST_OP_BAND, /* &  */
	AST_OP_BOR,  /* |  */
};

struct ast_node {
	enum ast_kind kind;
	enum ast_op op;
	struct ast_loc loc;
	uint64_t ival;
	double fval;
	const char *str; /* NUL-terminated; len excludes the NUL */
	size_t len;
	struct ast_node *a, *b;
	struct ast_node **items;
	size_t n;
};

const char *ast_op_text(enum ast_op op); /* "&&", "==", ... */

/* --- seccomp policy files ----------------------------------------------- */

enum pol_action_kind {
	POL_ALLOW = 1,
	POL_KILL,  /* the whole process (SECCOMP_RET_KILL_PROCESS) */
	POL_LOG,   /* allowed and logged */
	POL_TRAP,  /* SIGSYS */
	POL_ERRNO, /* fails with an errno */
};

struct pol_action {
	enum pol_action_kind kind;
	struct ast_loc loc;
	/* POL_ERRNO: either a number (errno_name NULL) or a name to resolve. */
	uint64_t errno_value;
	const char *errno_name;
};

/* One syscall under one action, optionally with argument names bound to
 * positions 0..nargs-1 and a condition over them.  A block
 * `errno(EPERM) { ptrace, mount }` yields one rule per name. */
struct pol_rule {
	struct pol_action action;
	const char *syscall;
	struct ast_loc loc; /* of the syscall name */
	const char **argnames;
	struct ast_loc *argloc;
	size_t nargs;
	struct ast_node *cond; /* NULL: unconditional */
	int included;          /* read from an included file, not the policy itself */
};

/* A policy file with its includes already read and inlined in place. */
struct pol_file {
	int has_default;
	struct pol_action def;
	struct pol_rule *rules;
	size_t nrules;
};

#endif
