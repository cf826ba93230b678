/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stubs.c - the typed stubs module `tools.py` (stubs.h), written from the
 * loaded blob.
 *
 * The module is Python source built from text the inventory's author
 * wrote (descriptions, enum values) and, for a blob from elsewhere, from
 * any bytes the loader accepts; a description must never end a string
 * literal early or add code.  So every such string goes through py_text():
 * backslashes and quotes escaped (a `"""` cannot close a docstring), control
 * characters, bidirectional overrides and invalid UTF-8 written as escapes.
 * Names become code only after tool_doc_py_ok() has found them to be plain
 * identifiers; a tool that fails it gets no stub, only a line saying so.
 *
 * Each stub's body refers to one global, _cordon_call, which no parameter
 * may shadow, and annotations stay strings (`from __future__ import
 * annotations`), so a namespace class named like a builtin cannot change
 * what they mean at import time.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "runtime/client/constraint_text.h"
#include "runtime/client/stubs.h"
#include "runtime/client/textbuf.h"
#include "runtime/client/tool_doc.h"
#include "runtime/constraint_eval.h"

/* The code point of a well-formed UTF-8 character of k bytes. */
static uint32_t py_code_point(const unsigned char *u, size_t k)
{
	static const unsigned char lead_mask[] = { 0, 0x7F, 0x1F, 0x0F, 0x07 };
	uint32_t c = u[0] & lead_mask[k];

	for (size_t i = 1; i < k; i++)
		c = c << 6 | (u[i] & 0x3Fu);
	return c;
}

/* Characters that are legal in a Python string but change how the source
 * reads: C1 controls, line and paragraph separators, bidirectional
 * embeddings, overrides and isolates, zero-width and BOM. */
static int py_suspect(uint32_t c)
{
	return (c >= 0x80 && c <= 0x9F) || (c >= 0x200B && c <= 0x200F) || (c >= 0x2028 && c <= 0x202E) ||
	       (c >= 0x2066 && c <= 0x2069) || c == 0xFEFF;
}

/* s[0..n) as the inside of a Python "..." literal, or, with doc, of a
 * """...""" docstring: there a quote is escaped only after another one, so
 * no run of three can close the string (py_docstring() ends every
 * docstring with a newline, so a last quote never meets the closing ones).
 * Invalid UTF-8 becomes U+FFFD: the module must decode. */
static void py_text(struct textbuf *b, const char *s, size_t n, int doc)
{
	size_t i = 0, k;
	int quote = 0; /* the last byte written was a bare '"' */

	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		uint32_t cp;
		int was_quote = quote;

		quote = 0;
		switch (c) {
		case '\\': textbuf_puts(b, "\\\\"); i++; continue;
		case '"':
			if (doc && !was_quote) {
				textbuf_putc(b, '"');
				quote = 1;
			} else {
				textbuf_puts(b, "\\\"");
			}
			i++;
			continue;
		case '\n': textbuf_puts(b, "\\n"); i++; continue;
		case '\t': textbuf_puts(b, "\\t"); i++; continue;
		case '\r': textbuf_puts(b, "\\r"); i++; continue;
		default: break;
		}
		if (c < 0x20 || c == 0x7F) {
			textbuf_printf(b, "\\x%02x", c);
			i++;
			continue;
		}
		k = utf8_char(s + i, n - i);
		if (k == 0) {
			textbuf_puts(b, "\\ufffd");
			i++;
			continue;
		}
		cp = py_code_point((const unsigned char *)s + i, k);
		if (py_suspect(cp))
			textbuf_printf(b, "\\u%04x", cp);
		else
			textbuf_put(b, s + i, k);
		i += k;
	}
}

static void py_str(struct textbuf *b, const char *s)
{
	textbuf_putc(b, '"');
	py_text(b, s, strlen(s), 0);
	textbuf_putc(b, '"');
}

/* doc (already in words) as an indented docstring. */
static void py_docstring(struct textbuf *b, const char *doc, size_t n, unsigned indent)
{
	size_t i = 0;

	while (n > 0 && doc[n - 1] == '\n')
		n--;
	textbuf_printf(b, "%*s\"\"\"", (int)indent, "");
	while (i < n) {
		const char *nl = memchr(doc + i, '\n', n - i);
		size_t len = nl ? (size_t)(nl - (doc + i)) : n - i;

		if (i > 0 && len > 0)
			textbuf_printf(b, "%*s", (int)indent, "");
		py_text(b, doc + i, len, 1);
		if (nl == NULL)
			break;
		textbuf_putc(b, '\n');
		i += len + 1;
	}
	textbuf_printf(b, "\n%*s\"\"\"\n", (int)indent, "");
}

/* ---- result types (returns:) ---------------------------------------------- */

/* The TypedDict names of one tool's result: each base name once, a later
 * one that would repeat it numbered ("_2"), so a property "a_b" and an
 * object "a" with a property "b" get two classes. */
struct stubs_rt {
	const struct cpol_policy *p;
	struct textbuf *defs;
	struct textbuf names; /* "\n" + each name + "\n" */
};

static void stubs_rt_unique(struct stubs_rt *r, const char *base, struct textbuf *out)
{
	struct textbuf key;

	for (unsigned k = 1;; k++) {
		textbuf_init(&key);
		textbuf_printf(&key, "\n%s", base);
		if (k > 1)
			textbuf_printf(&key, "_%u", k);
		textbuf_putc(&key, '\n');
		if (key.oom || r->names.s == NULL || strstr(r->names.s, key.s) == NULL)
			break;
		textbuf_free(&key);
	}
	if (key.oom) {
		out->oom = 1;
	} else {
		textbuf_put(&r->names, key.s + 1, key.n - 1);
		textbuf_put(out, key.s + 1, key.n - 2);
	}
	textbuf_free(&key);
}

/* base + "_" + name, with anything that cannot be in an identifier made
 * '_' (the compiler allows none; a blob from elsewhere might). */
static void stubs_rt_base(struct textbuf *out, const char *base, const char *name)
{
	textbuf_printf(out, "%s_", base);
	for (const char *c = name; *c != '\0'; c++)
		textbuf_putc(out, ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9'))
					  ? *c
					  : '_');
}

static void stubs_rt_type(struct stubs_rt *r, const struct cpol_param *prm, const char *base, unsigned depth,
			  struct textbuf *ty)
{
	const struct cpol_policy *p = r->p;
	struct textbuf sub, body, name;

	/* The loader bounds nesting; a broken signature in memory is typed
	 * Any rather than followed. */
	if (depth > CPOL_MAX_PARAM_DEPTH) {
		textbuf_puts(ty, "Any");
		return;
	}
	switch (prm->type) {
	case CPOL_T_ARRAY:
		if (prm->items >= p->nparams) {
			textbuf_puts(ty, "list[Any]");
			return;
		}
		textbuf_init(&sub);
		stubs_rt_base(&sub, base, "item");
		textbuf_puts(ty, "list[");
		if (sub.oom)
			ty->oom = 1;
		else
			stubs_rt_type(r, &p->params[prm->items], sub.s, depth + 1, ty);
		textbuf_putc(ty, ']');
		textbuf_free(&sub);
		return;
	case CPOL_T_OBJECT:
		if (prm->props.first > p->nparams || prm->props.count > p->nparams - prm->props.first) {
			textbuf_puts(ty, "dict[str, Any]");
			return;
		}
		break;
	default:
		tool_doc_pytype(ty, p, prm);
		return;
	}
	/* An object: its properties' types first (their classes are defined
	 * before this one), then "Name = TypedDict("Name", {...})".  The
	 * functional form takes any key and evaluates its types at once, which
	 * is why every class is defined before the namespace classes that
	 * could shadow a builtin. */
	textbuf_init(&body);
	textbuf_init(&name);
	stubs_rt_unique(r, base, &name);
	for (uint32_t i = 0; i < prm->props.count; i++) {
		const struct cpol_param *c = &p->params[prm->props.first + i];

		textbuf_init(&sub);
		stubs_rt_base(&sub, base, c->name);
		textbuf_puts(&body, i ? ", " : "");
		py_str(&body, c->name);
		textbuf_puts(&body, (c->flags & CPOL_PRM_F_REQUIRED) ? ": Required[" : ": NotRequired[");
		if (sub.oom)
			body.oom = 1;
		else
			stubs_rt_type(r, c, sub.s, depth + 1, &body);
		textbuf_putc(&body, ']');
		textbuf_free(&sub);
	}
	if (body.oom || name.oom) {
		ty->oom = 1;
	} else {
		if (r->defs != NULL)
			textbuf_printf(r->defs, "%s = TypedDict(\"%s\", {%s})\n", name.s, name.s, body.n ? body.s : "");
		textbuf_puts(ty, name.s);
	}
	textbuf_free(&body);
	textbuf_free(&name);
}

void stubs_result_type(struct textbuf *defs, struct textbuf *ty, const struct cpol_policy *p, uint32_t ti)
{
	const struct cpol_param *spec = policy_tool_returns(p, ti);
	struct stubs_rt r = { p, defs, { 0 } };
	struct textbuf base;
	const char *id;

	if (spec == NULL) {
		textbuf_puts(ty, "Any");
		return;
	}
	/* mail.send: MailSend; the parts are lowercase, so their capitals
	 * mark where each starts and no two tools share a name. */
	id = p->tools[ti].id;
	textbuf_init(&base);
	textbuf_init(&r.names);
	for (size_t i = 0; id[i] != '\0'; i++) {
		if (id[i] == '.')
			continue;
		textbuf_putc(&base, (i == 0 || id[i - 1] == '.') && id[i] >= 'a' && id[i] <= 'z' ? (char)(id[i] - 32)
											  : id[i]);
	}
	textbuf_puts(&base, "Result");
	if (base.oom)
		ty->oom = 1;
	else
		stubs_rt_type(&r, spec, base.s, 1, ty);
	if (r.names.oom)
		ty->oom = 1;
	textbuf_free(&base);
	textbuf_free(&r.names);
}

static void stubs_duration(struct textbuf *b, uint64_t ms)
{
	if (ms % 1000 == 0)
		textbuf_printf(b, "%" PRIu64 " s", ms / 1000);
	else
		textbuf_printf(b, "%" PRIu64 " ms", ms);
}

/* The words of one tool's docstring. */
static void stubs_tool_doc(struct textbuf *d, const struct cpol_policy *p, uint32_t ti)
{
	const struct cpol_tool *t = &p->tools[ti];
	int side = (t->flags & CPOL_TOOL_F_SIDE_EFFECT) != 0;
	uint32_t nc = constraint_count(p, ti);
	struct textbuf budget;

	textbuf_printf(d, "%s\n\n%s", t->id, t->description);
	textbuf_puts(d, "\n\nParameters:\n");
	if (t->params.count == 0 && !side)
		textbuf_puts(d, "    none\n");
	tool_doc_params(d, p, t->params, 4);
	if (side)
		textbuf_puts(d, "    message_id: str, required; names this one action: calling again with the same\n"
				"        id returns the first answer and does not act again; a new action needs a new id\n");
	if (nc > 0) {
		textbuf_printf(d, "\nConstraints (%s must hold, or the call is refused with ToolDenied):\n",
			       nc == 1 ? "it" : "all");
		for (uint32_t k = 0; k < nc; k++) {
			char err[256];
			char *text = constraint_text(p, ti, k, err, sizeof(err));

			if (text != NULL)
				textbuf_printf(d, "    %s\n", text);
			else
				textbuf_printf(d, "    (constraint %u cannot be shown as text: %s; it is enforced all the same)\n",
					       k, err);
			free(text);
		}
	}
	textbuf_puts(d, "\n");
	if (side)
		textbuf_printf(d, "Side effect: it changes the world; message_id is required%s.\n",
			       (t->flags & CPOL_TOOL_F_REPLAY) ? " and a repeated id is answered from the record" : "");
	textbuf_init(&budget);
	tool_doc_budget(&budget, t);
	if (budget.oom)
		d->oom = 1;
	else if (budget.n > 0)
		textbuf_printf(d, "Budget: %s; then BudgetExceeded.\n", budget.s);
	textbuf_free(&budget);
	textbuf_puts(d, "Timeout: ");
	stubs_duration(d, t->timeout_ms);
	textbuf_puts(d, ", then ToolTimeout.\n\n");
	if (policy_tool_returns(p, ti) != NULL) {
		textbuf_puts(d, "Returns the tool's answer (JSON as Python values), checked by the supervisor:\n");
		tool_doc_result(d, p, policy_tool_returns(p, ti), 4);
		textbuf_puts(d, "An answer that does not fit is ToolFailed (its message names where).\n");
	} else {
		textbuf_puts(d, "Returns the tool's answer (JSON as Python values).\n");
	}
	textbuf_puts(d, "Raises (all from cordon_tools, all ToolError): InvalidParams when a parameter\n"
			"breaks the rules above, ToolDenied, BudgetExceeded, ToolFailed, ToolTimeout,\n");
	textbuf_puts(d, (t->flags & CPOL_TOOL_F_REPLAY) ? "InDoubt (an earlier call with this message_id may have run), "
							 "UnknownTool, ProtocolError.\n"
						       : "UnknownTool, ProtocolError.\n");
}

/* One stub, inside its namespace class. */
static void stubs_tool(struct textbuf *b, const struct cpol_policy *p, uint32_t ti)
{
	const struct cpol_tool *t = &p->tools[ti];
	const char *action = strchr(t->id, '.') + 1;
	struct textbuf doc, ret;
	uint32_t i, nopt = 0;

	textbuf_init(&doc);
	textbuf_init(&ret);
	stubs_tool_doc(&doc, p, ti);
	stubs_result_type(NULL, &ret, p, ti);
	if (doc.oom || ret.oom)
		b->oom = 1;
	textbuf_printf(b, "\n    @staticmethod\n    def %s", action);
	tool_doc_py_signature(b, p, t, ret.oom ? NULL : ret.s);
	textbuf_free(&ret);
	textbuf_puts(b, ":\n");
	if (!doc.oom)
		py_docstring(b, doc.s, doc.n, 8);
	textbuf_free(&doc);

	/* required params always sent; optional ones only when not None */
	textbuf_puts(b, "        return " TOOL_DOC_PY_CALL "(");
	py_str(b, t->id);
	textbuf_puts(b, ", {");
	for (i = 0; i < t->params.count; i++) {
		const struct cpol_param *prm = &p->params[t->params.first + i];

		if (!(prm->flags & CPOL_PRM_F_REQUIRED)) {
			nopt++;
			continue;
		}
		textbuf_puts(b, i > nopt ? ", " : "");
		py_str(b, prm->name);
		textbuf_printf(b, ": %s", prm->name);
	}
	textbuf_puts(b, "}, {");
	for (i = 0, nopt = 0; i < t->params.count; i++) {
		const struct cpol_param *prm = &p->params[t->params.first + i];

		if (prm->flags & CPOL_PRM_F_REQUIRED)
			continue;
		textbuf_puts(b, nopt++ ? ", " : "");
		py_str(b, prm->name);
		textbuf_printf(b, ": %s", prm->name);
	}
	textbuf_puts(b, (t->flags & CPOL_TOOL_F_SIDE_EFFECT) ? "}, message_id)\n" : "})\n");
}

static const char stubs_head[] =
	"from __future__ import annotations\n"
	"\n"
	"from typing import Any\n"
	"\n"
	"import cordon_tools as _cordon_tools\n"
	"\n"
	"\n"
	"def " TOOL_DOC_PY_CALL "(tool, given, optional, message_id=None):\n"
	"    for name, value in optional.items():\n"
	"        if value is not None:\n"
	"            given[name] = value\n"
	"    return _cordon_tools.tool_call(tool, given, message_id=message_id)\n";

static const char stubs_intro[] =
	"Typed stubs of the governed tools this program may call.\n"
	"\n"
	"Generated by cordon from the policy blob; the supervisor checks every call\n"
	"against the same policy.  Each function sends one request through\n"
	"cordon_tools.tool_call() and returns the tool's answer; errors are the\n"
	"cordon_tools.ToolError subclasses (help(cordon_tools)).\n"
	"\n"
	"    import tools\n"
	"    help(tools.<namespace>.<action>)\n"
	"\n"
	"Arguments are keywords only.  An optional parameter left as None is not\n"
	"sent.  A tool with a side effect takes message_id: a string you choose\n"
	"that names the action; the same id again does not repeat it.\n"
	"\n"
	"Constraints are written in cordon's constraint language: && || ! and\n"
	"comparisons as in C; len(s) is a string's length in UTF-8 bytes or an\n"
	"array's number of items; has(p) is true when p is given and not None;\n"
	"x in [a, b] is true when x equals one of them; starts_with(s, \"x\") and\n"
	"ends_with(s, \"x\") test a string's start and end.  Reading an optional\n"
	"parameter that is not given makes the constraint fail.\n";

/* The TypedDicts of the results, before any namespace class: their types
 * are evaluated when defined, and a class named like a builtin (a
 * namespace `str`) must not be what they mean. */
static void stubs_result_defs(struct textbuf *b, const struct cpol_policy *p, const uint32_t *tools, uint32_t n)
{
	struct textbuf defs, ty;
	const char *why;

	textbuf_init(&defs);
	for (uint32_t i = 0; i < n; i++) {
		if (tools[i] >= p->ntools || !tool_doc_py_ok(p, &p->tools[tools[i]], &why))
			continue;
		textbuf_init(&ty);
		stubs_result_type(&defs, &ty, p, tools[i]);
		if (ty.oom)
			defs.oom = 1;
		textbuf_free(&ty);
	}
	if (defs.oom)
		b->oom = 1;
	else if (defs.n > 0)
		textbuf_printf(b, "\n\nfrom typing import NotRequired, Required, TypedDict\n\n%s", defs.s);
	textbuf_free(&defs);
}

/* Module __getattr__ (PEP 562): tools.<name> that is not here says why,
 * instead of Python's bare "module 'tools' has no attribute". */
static void stubs_missing(struct textbuf *b, const struct cpol_policy *p, const char *agent, const uint32_t *tools,
			  uint32_t n)
{
	struct textbuf why;

	textbuf_init(&why);
	if (agent == NULL) {
		textbuf_puts(&why, ": this run has no tools: no agent was selected (cordon run --agent NAME, or the "
				   "execution's \"agent\"); the app's agents:");
		for (uint32_t i = 0; i < p->nagents; i++)
			textbuf_printf(&why, "%s %s", i ? "," : "", p->agents[i].name);
		if (p->nagents == 0)
			textbuf_puts(&why, " none");
	} else {
		textbuf_printf(&why, ": not a tool namespace of this run (agent %s; its tools here:", agent);
		for (uint32_t i = 0; i < n; i++)
			if (tools[i] < p->ntools)
				textbuf_printf(&why, "%s %s", i ? "," : "", p->tools[tools[i]].id);
		if (n == 0)
			textbuf_puts(&why, " none: the context's \"tools\" selected none");
		textbuf_puts(&why, ")");
	}
	if (why.oom) {
		b->oom = 1;
	} else {
		textbuf_puts(b, "\n\n_MISSING = \"");
		py_text(b, why.s, why.n, 0);
		textbuf_putc(b, '"');
		textbuf_puts(b, "\n\n\ndef __getattr__(name):\n"
				"    if name.startswith(\"__\"):\n"
				"        raise AttributeError(name)\n"
				"    raise AttributeError(\"tools.\" + name + _MISSING)\n");
	}
	textbuf_free(&why);
}

char *stubs_python(const struct cpol_policy *p, const char *agent, const uint32_t *tools, uint32_t n, size_t *len)
{
	struct textbuf b, doc, names;
	const char *why, *ns = NULL;
	size_t nslen = 0;
	uint32_t i, nskipped = 0;

	textbuf_init(&b);
	textbuf_init(&doc);
	textbuf_init(&names);
	textbuf_printf(&doc, "%s\nApp: %s.  Tools:", stubs_intro, p->meta.app);
	for (i = 0; i < n; i++)
		if (tools[i] < p->ntools)
			textbuf_printf(&doc, " %s", p->tools[tools[i]].id);
	if (n == 0)
		textbuf_puts(&doc, " none");
	textbuf_puts(&doc, ".\n");
	for (i = 0; i < n; i++) {
		if (tools[i] >= p->ntools || tool_doc_py_ok(p, &p->tools[tools[i]], &why))
			continue;
		if (nskipped++ == 0)
			textbuf_puts(&doc, "\nWithout a stub (call cordon_tools.tool_call(id, params) instead):\n");
		textbuf_printf(&doc, "    %s: %s\n", p->tools[tools[i]].id, why);
	}
	if (doc.oom)
		b.oom = 1;
	else
		py_docstring(&b, doc.s, doc.n, 0);
	textbuf_free(&doc);
	textbuf_printf(&b, "%s", stubs_head);
	stubs_result_defs(&b, p, tools, n);

	/* Tools are sorted by id, so a namespace's tools follow each other:
	 * one class each. */
	textbuf_puts(&names, "\n\n__all__ = [");
	for (i = 0; i < n; i++) {
		const struct cpol_tool *t;
		const char *dot;

		if (tools[i] >= p->ntools || !tool_doc_py_ok(p, &p->tools[tools[i]], &why))
			continue;
		t = &p->tools[tools[i]];
		dot = strchr(t->id, '.');
		if (ns == NULL || nslen != (size_t)(dot - t->id) || memcmp(ns, t->id, nslen) != 0) {
			textbuf_printf(&names, "%s\"%.*s\"", ns ? ", " : "", (int)(dot - t->id), t->id);
			ns = t->id;
			nslen = (size_t)(dot - t->id);
			textbuf_printf(&b, "\n\nclass %.*s:\n    \"\"\"The %.*s.* tools.\"\"\"\n", (int)nslen, ns,
				       (int)nslen, ns);
		}
		stubs_tool(&b, p, tools[i]);
	}
	textbuf_puts(&names, "]\n");
	if (names.oom)
		b.oom = 1;
	else
		textbuf_put(&b, names.s, names.n);
	textbuf_free(&names);
	stubs_missing(&b, p, agent, tools, n);
	return textbuf_take(&b, len);
}
