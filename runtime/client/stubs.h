/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stubs.h - what the executor and the model are told about the tools,
 * generated from the loaded blob itself so it cannot drift from what the
 * supervisor enforces.  Shared by `cordon run` (which writes the Python
 * stubs beside cordon_tools.py for each run) and `cordonc describe`.
 */
#ifndef CORDON_STUBS_H
#define CORDON_STUBS_H

#include <stddef.h>
#include <stdint.h>

#include "cordon/policy.h"
#include "runtime/client/textbuf.h"

/* The stdlib-only client module, embedded at build time from
 * runtime/client/cordon_tools.py. */
extern const char stubs_client_py[];
extern const size_t stubs_client_py_len;

/* The rich-output helper (/cordon/cordon_display.py), embedded from
 * runtime/client/cordon_display.py. */
extern const char display_client_py[];
extern const size_t display_client_py_len;

/*
 * The typed stubs module (`tools.py`): for each tool index in tools[0..n)
 * (ascending), tools.<namespace>.<action>(**typed keyword params) with a
 * docstring from the inventory, calling cordon_tools.tool_call().  Returns
 * malloc'd NUL-terminated text (caller frees) with *len set, or NULL when
 * out of memory.
 *
 * agent names the selection (NULL: no agent was selected).  A name the
 * module does not have raises an AttributeError that says why: no agent
 * (and which the app has), or not among the agent's selected tools.
 */
char *stubs_python(const struct cpol_policy *p, const char *agent, const uint32_t *tools, uint32_t n,
		   size_t *len);

/*
 * The Python type of tool ti's result (its `returns:`) into ty: "Any"
 * without one, str / int / float / bool / list[...] for those types, and
 * for an object a TypedDict named after the tool (mail.send:
 * MailSendResult; a nested object: MailSendResult_rows_item), whose
 * definitions go to defs (children first; NULL: the type only).  Names
 * depend on the tool alone, so the stub and `cordonc describe` agree.
 */
void stubs_result_type(struct textbuf *defs, struct textbuf *ty, const struct cpol_policy *p, uint32_t ti);

#endif
