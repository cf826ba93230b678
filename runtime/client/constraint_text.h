/* SPDX-License-Identifier: Apache-2.0 */
/*
 * constraint_text.h - a tool's verified constraint bytecode read back as
 * the expression text of the constraint language (docs/constraints.md).
 *
 * What the model is told about a constraint (`cordonc describe`, the
 * docstrings of the Python stubs) is decompiled from the blob, not copied
 * from the YAML, so it says what the supervisor enforces.  The text
 * compiles back to the same instructions (given lines as long as it
 * needs: the parser takes 4096 columns): `x in [1, 2]` for the chain of
 * comparisons that `in` compiles to, parentheses wherever the tree needs
 * them, literals that keep their type (a number always has a '.' or an
 * exponent) and their exact value.
 *
 * It lives beside the stubs because both binaries use it: `cordon run`
 * writes stubs, `cordonc describe` writes the description.
 */
#ifndef CORDON_CONSTRAINT_TEXT_H
#define CORDON_CONSTRAINT_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "cordon/policy.h"

/*
 * Constraint k (0-based, in the order of the tool's `constraints:` list)
 * of tool `tool`, as text.  Returns malloc'd NUL-terminated text (caller
 * frees), or NULL with err filled: k out of range, out of memory, or code
 * that is not in a shape the compiler writes or holds a value the language
 * cannot write (verified code from another writer may; it is still
 * enforced, only not shown as text).
 */
char *constraint_text(const struct cpol_policy *p, uint32_t tool, uint32_t k, char *err, size_t errlen);

#endif
