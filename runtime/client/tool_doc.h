/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tool_doc.h - a tool of the blob in words, for the model: the Python
 * signature of its stub, each parameter's type and rules, its budget.
 * Shared by the stubs (`cordon run`, runtime/client/stubs.c) and
 * `cordonc describe`, so the two say the same thing, and both say what the
 * supervisor enforces: everything here is read from the loaded blob.
 *
 * Text taken from the blob (descriptions, enum values, names) is copied as
 * it is; the caller escapes it for where it goes (a Python string literal,
 * Markdown).
 */
#ifndef CORDON_TOOL_DOC_H
#define CORDON_TOOL_DOC_H

#include <stddef.h>
#include <stdint.h>

#include "cordon/policy.h"
#include "runtime/client/textbuf.h"

/* The Python type of a parameter in the stubs: str, int, float, bool,
 * list[...], dict[str, Any]. */
void tool_doc_pytype(struct textbuf *b, const struct cpol_policy *p, const struct cpol_param *prm);

/* One line per parameter of the run r (sorted by name, as in the blob),
 * nested ones indented further, each starting with `indent` spaces:
 *   to: str, required; 3 to 254 bytes
 *   priority: str, optional; one of "low", "normal", "high"
 *   equations: list[dict[str, Any]], required; at most 8 items; each item an object:
 *       equals: float, required; from -1000000000 to 1000000000
 * Recursion is bounded by the loader's nesting limit. */
void tool_doc_params(struct textbuf *b, const struct cpol_policy *p, struct cpol_range r, unsigned indent);

/* "at most 5 calls per run, 100 per user and day", or "" without one. */
void tool_doc_budget(struct textbuf *b, const struct cpol_tool *t);

/* Whether t can be written as a stub tools.<ns>.<action>(**params): the
 * id is two lowercase identifiers, no name is a Python keyword or one the
 * stub itself uses.  The compiler accepts no other tool; a blob from
 * elsewhere may hold one, which then gets no stub (why: *why). */
int tool_doc_py_ok(const struct cpol_policy *p, const struct cpol_tool *t, const char **why);

/* The stub's signature, after "def <action>" or "tools.<ns>.<action>":
 * "(*, to: str, priority: str | None = None, message_id: str) -> Any",
 * with ret in place of Any when given (the result's type, stubs.h).
 * Only for a tool tool_doc_py_ok() accepts. */
void tool_doc_py_signature(struct textbuf *b, const struct cpol_policy *p, const struct cpol_tool *t,
			   const char *ret);

/* A tool's result spec (its `returns:`) in words, as tool_doc_params()
 * writes one parameter: "result: list[int]; at most 3 items; ...". */
void tool_doc_result(struct textbuf *b, const struct cpol_policy *p, const struct cpol_param *spec, unsigned indent);

/* The name of the one global a stub's body uses (a parameter may not
 * shadow it). */
#define TOOL_DOC_PY_CALL "_cordon_call"

#endif
