/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ast.c - small helpers over the syntax tree.
 */
#include "grammar/ast.h"

const char *ast_op_text(enum ast_op op)
{
	switch (op) {
	case AST_OP_OR: return "||";
	case AST_OP_AND: return "&&";
	case AST_OP_NOT: return "!";
	case AST_OP_NEG: return "-";
	case AST_OP_EQ: return "==";
	case AST_OP_NE: return "!=";
	case AST_OP_LT: return "<";
	case AST_OP_LE: return "<=";
	case AST_OP_GT: return ">";
	case AST_OP_GE: return ">=";
	case AST_OP_IN: return "in";
	case AST_OP_BAND: return "&";
	case AST_OP_BOR: return "|";
	case AST_OP_NONE: break;
	}
	return "?";
}
