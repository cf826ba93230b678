/* SPDX-License-Identifier: Apache-2.0 */
/*
 * params_check.c - a call's params against its tool's signature.
 *
 * One walk over the request, led by the signature: a value is only
 * descended into when its spec is an array or an object, so the recursion
 * is as deep as the signature (at most CPOL_MAX_PARAM_DEPTH, which the
 * loader enforces and the walk checks again) and the work is linear in the
 * request, which the frame bound already limits.  The rules are in
 * docs/params.md.
 *
 * The policy is trusted but the walk does not lean on it: an index or run
 * outside the params table, a spec cycle or an unknown type refuses the
 * call instead of reading out of bounds.
 *
 * Paths are not built while walking: a stack of frames (a name or an array
 * index per level) is kept and rendered only for the one violation that is
 * reported.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "runtime/supervise/params_check.h"

/* 2^53: above it a double no longer holds every integer, so a JSON number
 * that large may already have been rounded by the parser. */
#define PC_INT_LIMIT 9007199254740992.0

/* The most bytes of a caller's value quoted in a message or a path. */
#define PC_QUOTE_MAX 40

/* Enum values named in a message before "...". */
#define PC_ENUM_SHOWN 8

/* ---- bounded text -------------------------------------------------------- */

/* Appends into a fixed buffer and never splits a character: a piece that
 * does not fit ends the text with "...", and nothing is added after. */
struct pc_buf {
	char *s;
	size_t cap; /* >= 4 */
	size_t len;
	int full;
};

static void pc_buf_init(struct pc_buf *b, char *s, size_t cap)
{
	b->s = s;
	b->cap = cap;
	b->len = 0;
	b->full = 0;
	s[0] = '\0';
}

/* One unit (a character, an escape) whole or not at all; room for "..."
 * and the NUL is always kept. */
static void pc_put(struct pc_buf *b, const char *t, size_t n)
{
	if (b->full)
		return;
	if (n > b->cap - b->len - 4) {
		memcpy(b->s + b->len, "...", 4);
		b->len += 3;
		b->full = 1;
		return;
	}
	memcpy(b->s + b->len, t, n);
	b->len += n;
	b->s[b->len] = '\0';
}

/* ASCII text from this file (never the caller's bytes), one byte a unit. */
__attribute__((format(printf, 2, 3))) static void pc_printf(struct pc_buf *b, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	for (size_t i = 0; tmp[i] != '\0'; i++)
		pc_put(b, tmp + i, 1);
}

/* At most max bytes of s, escaped so that a message or a log line showing
 * it stays one clean line: control characters (C0, DEL, C1), quotes,
 * backslashes and bytes outside well-formed UTF-8 are written as \xNN, \"
 * or \\.  The caller's text gets max PC_QUOTE_MAX; the signature's names,
 * at most 64 bytes each, are shown whole. */
static void pc_escape(struct pc_buf *b, const char *s, size_t n, size_t max)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, k;
	char esc[8];

	while (i < n && i < max) {
		k = utf8_char((const char *)u + i, n - i);
		if (k > 1 && i + k > max)
			break;
		if (k == 0 || (k == 1 && (u[i] < 0x20 || u[i] == 0x7F)) || (k == 2 && u[i] == 0xC2 && u[i + 1] < 0xA0)) {
			for (size_t j = 0; j < (k == 0 ? 1 : k); j++) {
				snprintf(esc, sizeof(esc), "\\x%02X", u[i + j]);
				pc_put(b, esc, 4);
			}
			i += k == 0 ? 1 : k;
		} else if (u[i] == '"' || u[i] == '\\') {
			esc[0] = '\\';
			esc[1] = (char)u[i];
			pc_put(b, esc, 2);
			i++;
		} else {
			pc_put(b, s + i, k);
			i += k;
		}
	}
	if (i < n)
		pc_put(b, "...", 3);
}

static void pc_quote(struct pc_buf *b, const char *s)
{
	pc_put(b, "\"", 1);
	pc_escape(b, s, strlen(s), PC_QUOTE_MAX);
	pc_put(b, "\"", 1);
}

/* A double as short as it reads back exactly ("2.5", not
 * "2.5000000000000000"). */
static void pc_number(struct pc_buf *b, double d)
{
	char tmp[40];

	snprintf(tmp, sizeof(tmp), "%.15g", d);
	if (strtod(tmp, NULL) != d)
		snprintf(tmp, sizeof(tmp), "%.17g", d);
	pc_printf(b, "%s", tmp);
}

/* ---- the walk ------------------------------------------------------------ */

/* One level of the path: a member name or an array index. */
struct pc_frame {
	const char *name; /* NULL: an index */
	size_t index;
	int caller;       /* name is the caller's (an unknown member) */
};

struct pc_ctx {
	const struct cpol_policy *p;
	const struct cpol_tool *tool;
	struct params_result *res;
	struct pc_frame frame[CPOL_MAX_PARAM_DEPTH];
};

/* Sets the verdict and the path of a violation at the value of level
 * `depth` (0: params itself, 1: a tool's parameter) and opens *out on the
 * message, which the caller writes.  Returns 0, the walk's "refused". */
static int pc_fail(struct pc_ctx *c, unsigned depth, enum params_verdict v, struct pc_buf *out)
{
	struct pc_buf path;

	c->res->verdict = v;
	pc_buf_init(&path, c->res->path, sizeof(c->res->path));
	for (unsigned i = 0; i < depth; i++) {
		const struct pc_frame *f = &c->frame[i];

		if (f->name == NULL) {
			pc_printf(&path, "[%zu]", f->index);
			continue;
		}
		if (i > 0)
			pc_put(&path, ".", 1);
		pc_escape(&path, f->name, strlen(f->name), f->caller ? PC_QUOTE_MAX : SIZE_MAX);
	}
	pc_buf_init(out, c->res->msg, sizeof(c->res->msg));
	return 0;
}

static const char *pc_json_kind(const cJSON *v)
{
	if (cJSON_IsNull(v))
		return "null";
	if (cJSON_IsBool(v))
		return "a boolean";
	if (cJSON_IsNumber(v))
		return "a number";
	if (cJSON_IsString(v))
		return "a string";
	if (cJSON_IsArray(v))
		return "an array";
	if (cJSON_IsObject(v))
		return "an object";
	return "no JSON value";
}

static int pc_mistyped(struct pc_ctx *c, unsigned depth, const struct cpol_param *spec, const cJSON *v)
{
	struct pc_buf m;

	pc_fail(c, depth, PARAMS_MISTYPED, &m);
	pc_printf(&m, "expected type %s, got %s", policy_type_name(spec->type), pc_json_kind(v));
	return 0;
}

/* A run of specs that lies inside the params table. */
static int pc_run_ok(const struct cpol_policy *p, struct cpol_range r)
{
	return r.first <= p->nparams && r.count <= p->nparams - r.first;
}

/* The spec named `name` in a run sorted by name (strcmp order, as the
 * compiler sorts and the loader checks), or NULL. */
static const struct cpol_param *pc_find(const struct cpol_policy *p, struct cpol_range r, const char *name)
{
	uint32_t lo = r.first, hi = r.first + r.count;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int cmp = strcmp(name, p->params[mid].name);

		if (cmp == 0)
			return &p->params[mid];
		if (cmp < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

static int pc_value(struct pc_ctx *c, unsigned depth, const struct cpol_param *spec, const cJSON *v);

/*
 * The members of obj against the run `props` (the tool's params when depth
 * is 1).  Members in document order, each: declared, not seen before in
 * this object, its value; then the required names, in signature order.
 *
 * Seeing a name twice is found by comparing with the members before it.
 * Each of those is a distinct declared name (or the walk would have
 * stopped), so at most props.count comparisons a member and at most
 * props.count + 1 members are looked at before a verdict: the cost is
 * bounded by the signature, not by the request.
 */
static int pc_object(struct pc_ctx *c, unsigned depth, struct cpol_range props, const cJSON *obj)
{
	const struct cpol_policy *p = c->p;
	struct pc_buf m;

	for (const cJSON *mem = obj->child; mem != NULL; mem = mem->next) {
		const char *name = mem->string != NULL ? mem->string : "";
		const struct cpol_param *spec = pc_find(p, props, name);

		c->frame[depth - 1] = (struct pc_frame){ name, 0, spec == NULL };
		if (spec == NULL) {
			pc_fail(c, depth, PARAMS_UNKNOWN, &m);
			pc_quote(&m, name);
			if (depth == 1)
				pc_printf(&m, " is not a parameter of %s", c->tool->id);
			else
				pc_printf(&m, " is not a property of this object");
			return 0;
		}
		for (const cJSON *prev = obj->child; prev != mem; prev = prev->next)
			if (prev->string != NULL && strcmp(prev->string, name) == 0) {
				pc_fail(c, depth, PARAMS_UNKNOWN, &m);
				pc_quote(&m, name);
				pc_printf(&m, " appears twice in one object");
				return 0;
			}
		if (!pc_value(c, depth, spec, mem))
			return 0;
	}
	for (uint32_t k = props.first; k < props.first + props.count; k++) {
		const struct cpol_param *spec = &p->params[k];

		if (!(spec->flags & CPOL_PRM_F_REQUIRED) || cJSON_GetObjectItemCaseSensitive(obj, spec->name) != NULL)
			continue;
		c->frame[depth - 1] = (struct pc_frame){ spec->name, 0, 0 };
		pc_fail(c, depth, PARAMS_MISSING, &m);
		pc_printf(&m, "the required %s ", depth == 1 ? "parameter" : "property");
		pc_quote(&m, spec->name);
		pc_printf(&m, " is missing");
		return 0;
	}
	return 1;
}

static int pc_string(struct pc_ctx *c, unsigned depth, const struct cpol_param *spec, const char *s)
{
	size_t n = strlen(s), bad = utf8_prefix(s, n);
	struct pc_buf m;

	if (bad != n) {
		pc_fail(c, depth, PARAMS_MISTYPED, &m);
		pc_printf(&m, "not valid UTF-8 (byte 0x%02X at offset %zu)", (unsigned char)s[bad], bad);
		return 0;
	}
	if ((spec->flags & CPOL_PRM_F_MIN_LENGTH) && n < spec->min_length) {
		pc_fail(c, depth, PARAMS_TOO_SHORT, &m);
		pc_printf(&m, "%zu byte%s long, shorter than the minimum length %" PRIu64, n, n == 1 ? "" : "s",
			  spec->min_length);
		return 0;
	}
	if ((spec->flags & CPOL_PRM_F_MAX_LENGTH) && n > spec->max_length) {
		pc_fail(c, depth, PARAMS_TOO_LONG, &m);
		pc_printf(&m, "%zu byte%s long, longer than the maximum length %" PRIu64, n, n == 1 ? "" : "s",
			  spec->max_length);
		return 0;
	}
	if (spec->enums.n == 0)
		return 1;
	for (uint32_t k = 0; k < spec->enums.n; k++)
		if (strcmp(spec->enums.v[k], s) == 0)
			return 1;
	pc_fail(c, depth, PARAMS_OUT_OF_RANGE, &m);
	pc_quote(&m, s);
	pc_printf(&m, " is not one of the %" PRIu32 " allowed values: ", spec->enums.n);
	for (uint32_t k = 0; k < spec->enums.n && k < PC_ENUM_SHOWN; k++) {
		if (k > 0)
			pc_put(&m, ", ", 2);
		pc_quote(&m, spec->enums.v[k]);
	}
	if (spec->enums.n > PC_ENUM_SHOWN)
		pc_put(&m, ", ...", 5);
	return 0;
}

/* Integers: a JSON number with no fraction, within ±2^53 (the checks are
 * ordered so that no double outside int64 is ever converted). */
static int pc_integer(struct pc_ctx *c, unsigned depth, const struct cpol_param *spec, double d)
{
	struct pc_buf m;
	int64_t i;

	if (!(fabs(d) <= PC_INT_LIMIT)) {
		pc_fail(c, depth, PARAMS_OUT_OF_RANGE, &m);
		if (isfinite(d))
			pc_number(&m, d);
		else
			pc_printf(&m, "the number");
		pc_printf(&m, " is beyond +-2^53 (9007199254740992): integers that large do not survive JSON exactly");
		return 0;
	}
	if (d != floor(d)) {
		pc_fail(c, depth, PARAMS_MISTYPED, &m);
		pc_printf(&m, "expected an integer, got ");
		pc_number(&m, d);
		return 0;
	}
	i = (int64_t)d;
	if ((spec->flags & CPOL_PRM_F_MIN) && i < spec->imin) {
		pc_fail(c, depth, PARAMS_OUT_OF_RANGE, &m);
		pc_printf(&m, "%" PRId64 " is below the minimum %" PRId64, i, spec->imin);
		return 0;
	}
	if ((spec->flags & CPOL_PRM_F_MAX) && i > spec->imax) {
		pc_fail(c, depth, PARAMS_OUT_OF_RANGE, &m);
		pc_printf(&m, "%" PRId64 " is above the maximum %" PRId64, i, spec->imax);
		return 0;
	}
	return 1;
}

static int pc_double(struct pc_ctx *c, unsigned depth, const struct cpol_param *spec, double d)
{
	struct pc_buf m;

	/* cJSON reads 1e400 as infinity: a number, but none a double holds. */
	if (!isfinite(d)) {
		pc_fail(c, depth, PARAMS_OUT_OF_RANGE, &m);
		pc_printf(&m, "the number is too large to be held as a finite double");
		return 0;
	}
	if ((spec->flags & CPOL_PRM_F_MIN) && d < spec->fmin) {
		pc_fail(c, depth, PARAMS_OUT_OF_RANGE, &m);
		pc_number(&m, d);
		pc_printf(&m, " is below the minimum ");
		pc_number(&m, spec->fmin);
		return 0;
	}
	if ((spec->flags & CPOL_PRM_F_MAX) && d > spec->fmax) {
		pc_fail(c, depth, PARAMS_OUT_OF_RANGE, &m);
		pc_number(&m, d);
		pc_printf(&m, " is above the maximum ");
		pc_number(&m, spec->fmax);
		return 0;
	}
	return 1;
}

static int pc_array(struct pc_ctx *c, unsigned depth, const struct cpol_param *spec, const cJSON *v)
{
	const struct cpol_param *items;
	struct pc_buf m;
	size_t n = 0;

	for (const cJSON *e = v->child; e != NULL; e = e->next)
		n++;
	if ((spec->flags & CPOL_PRM_F_MAX_ITEMS) && n > spec->max_items) {
		pc_fail(c, depth, PARAMS_TOO_LONG, &m);
		pc_printf(&m, "%zu item%s, more than the maximum %" PRIu64, n, n == 1 ? "" : "s", spec->max_items);
		return 0;
	}
	if (n == 0)
		return 1;
	if (spec->items >= c->p->nparams || depth >= CPOL_MAX_PARAM_DEPTH) {
		pc_fail(c, depth, PARAMS_MISTYPED, &m);
		pc_printf(&m, "the signature of this array is broken (items spec out of range or too deep)");
		return 0;
	}
	items = &c->p->params[spec->items];
	n = 0;
	for (const cJSON *e = v->child; e != NULL; e = e->next, n++) {
		c->frame[depth] = (struct pc_frame){ NULL, n, 0 };
		if (!pc_value(c, depth + 1, items, e))
			return 0;
	}
	return 1;
}

/* The value of level `depth` (its frame is set) against spec. */
static int pc_value(struct pc_ctx *c, unsigned depth, const struct cpol_param *spec, const cJSON *v)
{
	struct pc_buf m;

	switch (spec->type) {
	case CPOL_T_STRING:
		if (!cJSON_IsString(v) || v->valuestring == NULL)
			return pc_mistyped(c, depth, spec, v);
		return pc_string(c, depth, spec, v->valuestring);
	case CPOL_T_INTEGER:
		if (!cJSON_IsNumber(v))
			return pc_mistyped(c, depth, spec, v);
		return pc_integer(c, depth, spec, v->valuedouble);
	case CPOL_T_NUMBER:
		if (!cJSON_IsNumber(v))
			return pc_mistyped(c, depth, spec, v);
		return pc_double(c, depth, spec, v->valuedouble);
	case CPOL_T_BOOLEAN:
		return cJSON_IsBool(v) ? 1 : pc_mistyped(c, depth, spec, v);
	case CPOL_T_ARRAY:
		if (!cJSON_IsArray(v))
			return pc_mistyped(c, depth, spec, v);
		return pc_array(c, depth, spec, v);
	case CPOL_T_OBJECT:
		if (!cJSON_IsObject(v))
			return pc_mistyped(c, depth, spec, v);
		if (!pc_run_ok(c->p, spec->props) || depth >= CPOL_MAX_PARAM_DEPTH) {
			pc_fail(c, depth, PARAMS_MISTYPED, &m);
			pc_printf(&m, "the signature of this object is broken (properties out of range or too deep)");
			return 0;
		}
		return pc_object(c, depth + 1, spec->props, v);
	default:
		pc_fail(c, depth, PARAMS_MISTYPED, &m);
		pc_printf(&m, "the signature has an unknown type %" PRIu32, spec->type);
		return 0;
	}
}

/* Sets c up for tool `tool` of p; 0 (and res filled) when there is no
 * such tool or its signature lies outside the params table. */
static int pc_start(struct pc_ctx *c, const struct cpol_policy *p, uint32_t tool, struct params_result *res)
{
	struct pc_buf m;

	memset(res, 0, sizeof(*res));
	c->p = p;
	c->res = res;
	c->tool = NULL;
	if (p == NULL || tool >= p->ntools || !pc_run_ok(p, p->tools[tool].params)) {
		pc_fail(c, 0, PARAMS_UNKNOWN, &m);
		pc_printf(&m, "no tool %" PRIu32 " with a usable signature in this policy", tool);
		return 0;
	}
	c->tool = &p->tools[tool];
	return 1;
}

int params_check(const struct cpol_policy *p, uint32_t tool, const cJSON *params, struct params_result *res)
{
	struct params_result spare;
	struct pc_ctx c;
	struct pc_buf m;

	if (!pc_start(&c, p, tool, res != NULL ? res : &spare))
		return 0;
	if (!cJSON_IsObject(params)) {
		pc_fail(&c, 0, PARAMS_NOT_OBJECT, &m);
		pc_printf(&m, "params must be a JSON object, not %s", params == NULL ? "absent" : pc_json_kind(params));
		return 0;
	}
	if (!pc_object(&c, 1, c.tool->params, params))
		return 0;
	c.res->verdict = PARAMS_OK;
	return 1;
}

/*
 * The result spec is a level-1 value like a tool's own params (the loader
 * gives it depth 1), so the walk starts at depth 1 under a frame named
 * "result" and has the same depth budget.  A reference the loader would
 * refuse (outside the params table) refuses the answer rather than pass
 * it unchecked.
 */
int params_check_result(const struct cpol_policy *p, uint32_t tool, const cJSON *result, struct params_result *res)
{
	struct params_result spare;
	const struct cpol_param *spec;
	struct pc_ctx c;
	struct pc_buf m;

	if (!pc_start(&c, p, tool, res != NULL ? res : &spare))
		return 0;
	if (c.tool->returns == 0)
		return 1; /* pc_start left the verdict PARAMS_OK */
	spec = policy_tool_returns(p, tool);
	c.frame[0] = (struct pc_frame){ "result", 0, 0 };
	if (spec == NULL) {
		pc_fail(&c, 1, PARAMS_MISTYPED, &m);
		pc_printf(&m, "the result spec of %s is broken (outside the params table)", c.tool->id);
		return 0;
	}
	if (result == NULL)
		return pc_mistyped(&c, 1, spec, result);
	return pc_value(&c, 1, spec, result);
}

const char *params_verdict_name(enum params_verdict v)
{
	switch (v) {
	case PARAMS_OK: return "ok";
	case PARAMS_NOT_OBJECT: return "not_object";
	case PARAMS_UNKNOWN: return "unknown";
	case PARAMS_MISSING: return "missing";
	case PARAMS_MISTYPED: return "mistyped";
	case PARAMS_OUT_OF_RANGE: return "out_of_range";
	case PARAMS_TOO_LONG: return "too_long";
	case PARAMS_TOO_SHORT: return "too_short";
	}
	return "?";
}
