/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tool_doc.c - see tool_doc.h.
 */
#include <inttypes.h>
#include <string.h>

#include "runtime/client/tool_doc.h"

void tool_doc_pytype(struct textbuf *b, const struct cpol_policy *p, const struct cpol_param *prm)
{
	switch (prm->type) {
	case CPOL_T_STRING: textbuf_puts(b, "str"); break;
	case CPOL_T_INTEGER: textbuf_puts(b, "int"); break;
	case CPOL_T_NUMBER: textbuf_puts(b, "float"); break;
	case CPOL_T_BOOLEAN: textbuf_puts(b, "bool"); break;
	case CPOL_T_ARRAY:
		textbuf_puts(b, "list[");
		if (prm->items < p->nparams)
			tool_doc_pytype(b, p, &p->params[prm->items]);
		else
			textbuf_puts(b, "Any");
		textbuf_putc(b, ']');
		break;
	default: textbuf_puts(b, "dict[str, Any]"); break;
	}
}

static void tool_doc_bytes(struct textbuf *b, uint64_t n)
{
	textbuf_printf(b, "%" PRIu64 " byte%s", n, n == 1 ? "" : "s");
}

/* "from A to B", "at least A", "at most B" */
static void tool_doc_range(struct textbuf *b, const struct cpol_param *prm)
{
	int lo = (prm->flags & CPOL_PRM_F_MIN) != 0, hi = (prm->flags & CPOL_PRM_F_MAX) != 0;

	if (!lo && !hi)
		return;
	textbuf_puts(b, lo && hi ? "; from " : lo ? "; at least " : "; at most ");
	if (lo) {
		if (prm->type == CPOL_T_INTEGER)
			textbuf_printf(b, "%" PRId64, prm->imin);
		else
			textbuf_double(b, prm->fmin, 0);
	}
	if (lo && hi)
		textbuf_puts(b, " to ");
	if (hi) {
		if (prm->type == CPOL_T_INTEGER)
			textbuf_printf(b, "%" PRId64, prm->imax);
		else
			textbuf_double(b, prm->fmax, 0);
	}
}

static void tool_doc_length(struct textbuf *b, const struct cpol_param *prm)
{
	int lo = (prm->flags & CPOL_PRM_F_MIN_LENGTH) != 0, hi = (prm->flags & CPOL_PRM_F_MAX_LENGTH) != 0;

	if (lo && hi && prm->min_length == prm->max_length) {
		textbuf_puts(b, "; exactly ");
		tool_doc_bytes(b, prm->max_length);
	} else if (lo && hi) {
		textbuf_printf(b, "; %" PRIu64 " to ", prm->min_length);
		tool_doc_bytes(b, prm->max_length);
	} else if (lo) {
		textbuf_puts(b, "; at least ");
		tool_doc_bytes(b, prm->min_length);
	} else if (hi) {
		textbuf_puts(b, "; at most ");
		tool_doc_bytes(b, prm->max_length);
	}
	if (lo || hi)
		textbuf_puts(b, " (UTF-8)");
}

static void tool_doc_props(struct textbuf *b, const struct cpol_policy *p, struct cpol_range r, unsigned indent);

/* The rules of prm after its type, on the current line.  Properties of an
 * object (its own or its items') go on the lines after, more indented;
 * returns 1 when it wrote them (the line is ended), 0 when the caller
 * ends the line. */
static int tool_doc_rules(struct textbuf *b, const struct cpol_policy *p, const struct cpol_param *prm,
			  unsigned indent)
{
	switch (prm->type) {
	case CPOL_T_STRING:
		tool_doc_length(b, prm);
		for (uint32_t i = 0; i < prm->enums.n; i++) {
			textbuf_puts(b, i ? ", " : "; one of ");
			textbuf_quote(b, prm->enums.v[i], strlen(prm->enums.v[i]));
		}
		return 0;
	case CPOL_T_INTEGER:
	case CPOL_T_NUMBER:
		tool_doc_range(b, prm);
		return 0;
	case CPOL_T_ARRAY:
		if (prm->flags & CPOL_PRM_F_MAX_ITEMS)
			textbuf_printf(b, "; at most %" PRIu64 " item%s", prm->max_items, prm->max_items == 1 ? "" : "s");
		if (prm->items >= p->nparams)
			return 0;
		prm = &p->params[prm->items];
		if (prm->type == CPOL_T_OBJECT) {
			textbuf_puts(b, "; each item an object");
			tool_doc_props(b, p, prm->props, indent);
			return 1;
		}
		textbuf_puts(b, "; each item: ");
		tool_doc_pytype(b, p, prm);
		return tool_doc_rules(b, p, prm, indent);
	case CPOL_T_OBJECT:
		textbuf_puts(b, "; an object");
		tool_doc_props(b, p, prm->props, indent);
		return 1;
	default:
		return 0;
	}
}

/* ":" and the properties, one a line; "with no properties: {}" when there
 * are none (the signature check refuses any key then). */
static void tool_doc_props(struct textbuf *b, const struct cpol_policy *p, struct cpol_range r, unsigned indent)
{
	if (r.count == 0) {
		textbuf_puts(b, " with no properties: {}\n");
		return;
	}
	textbuf_puts(b, " with:\n");
	tool_doc_params(b, p, r, indent + 4);
}

void tool_doc_params(struct textbuf *b, const struct cpol_policy *p, struct cpol_range r, unsigned indent)
{
	for (uint32_t i = 0; i < r.count && r.first + i < p->nparams; i++) {
		const struct cpol_param *prm = &p->params[r.first + i];

		textbuf_printf(b, "%*s%s: ", (int)indent, "", prm->name);
		tool_doc_pytype(b, p, prm);
		textbuf_puts(b, (prm->flags & CPOL_PRM_F_REQUIRED) ? ", required" : ", optional");
		if (!tool_doc_rules(b, p, prm, indent))
			textbuf_putc(b, '\n');
	}
}

void tool_doc_result(struct textbuf *b, const struct cpol_policy *p, const struct cpol_param *spec, unsigned indent)
{
	textbuf_printf(b, "%*sresult: ", (int)indent, "");
	tool_doc_pytype(b, p, spec);
	if (!tool_doc_rules(b, p, spec, indent))
		textbuf_putc(b, '\n');
}

void tool_doc_budget(struct textbuf *b, const struct cpol_tool *t)
{
	if (t->max_calls != 0)
		textbuf_printf(b, "at most %u call%s per run", t->max_calls, t->max_calls == 1 ? "" : "s");
	if (t->max_calls != 0 && t->max_calls_per_day != 0)
		textbuf_printf(b, ", %u per user and day", t->max_calls_per_day);
	else if (t->max_calls_per_day != 0)
		textbuf_printf(b, "at most %u call%s per user and day", t->max_calls_per_day,
			       t->max_calls_per_day == 1 ? "" : "s");
}

/* Python 3.11's keywords, and __debug__, which cannot be assigned. */
static const char *const py_reserved[] = {
	"False", "None",  "True",   "and",    "as",     "assert", "async",    "await",    "break",
	"class", "continue", "def", "del",    "elif",   "else",   "except",   "finally",  "for",
	"from",  "global", "if",    "import", "in",     "is",     "lambda",   "nonlocal", "not",
	"or",    "pass",  "raise",  "return", "try",    "while",  "with",     "yield",    "__debug__",
};

/* An ASCII identifier of [first][A-Za-z0-9_]* that is not reserved; with
 * lower, lowercase letters only. */
static int tool_doc_ident(const char *s, size_t n, int lower)
{
	if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || (!lower && c >= 'A' && c <= 'Z')))
			return 0;
	}
	for (size_t i = 0; i < sizeof(py_reserved) / sizeof(py_reserved[0]); i++)
		if (strlen(py_reserved[i]) == n && memcmp(py_reserved[i], s, n) == 0)
			return 0;
	return 1;
}

int tool_doc_py_ok(const struct cpol_policy *p, const struct cpol_tool *t, const char **why)
{
	const char *dot = strchr(t->id, '.');

	if (dot == NULL || !tool_doc_ident(t->id, (size_t)(dot - t->id), 1) ||
	    !tool_doc_ident(dot + 1, strlen(dot + 1), 1) || t->id[0] == '_' || dot[1] == '_') {
		*why = "its id is not two lowercase Python identifiers";
		return 0;
	}
	for (uint32_t i = 0; i < t->params.count; i++) {
		const char *name = p->params[t->params.first + i].name;

		/* In a class body, a name starting with "__" would be mangled. */
		if (!tool_doc_ident(name, strlen(name), 0) || strncmp(name, "__", 2) == 0 ||
		    strcmp(name, TOOL_DOC_PY_CALL) == 0) {
			*why = "a parameter name cannot be a Python keyword argument";
			return 0;
		}
		if ((t->flags & CPOL_TOOL_F_SIDE_EFFECT) && strcmp(name, "message_id") == 0) {
			*why = "a parameter is named message_id, which the stub of a side-effect tool takes itself";
			return 0;
		}
	}
	return 1;
}

void tool_doc_py_signature(struct textbuf *b, const struct cpol_policy *p, const struct cpol_tool *t,
			   const char *ret)
{
	int side = (t->flags & CPOL_TOOL_F_SIDE_EFFECT) != 0;

	textbuf_puts(b, t->params.count > 0 || side ? "(*" : "(");
	for (uint32_t i = 0; i < t->params.count; i++) {
		const struct cpol_param *prm = &p->params[t->params.first + i];

		textbuf_printf(b, ", %s: ", prm->name);
		tool_doc_pytype(b, p, prm);
		if (!(prm->flags & CPOL_PRM_F_REQUIRED))
			textbuf_puts(b, " | None = None");
	}
	if (side)
		textbuf_puts(b, ", message_id: str");
	textbuf_printf(b, ") -> %s", ret != NULL ? ret : "Any");
}
