/* SPDX-License-Identifier: Apache-2.0 */
/*
 * inventory.c - tool inventories (tools.yaml) into the policy's tools and
 * parameter signatures.
 *
 * docs/tools.md is the user's view of the same keys; a change to one is a
 * change to the other.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/tool_path.h"
#include "compiler/compile.h"
#include "compiler/constraint_gen.h"
#include "grammar/policy_parse.h"

#define PATH(buf, ...) schema_path((buf), sizeof(buf), __VA_ARGS__)
#define MiB (1024ull * 1024ull)
#define TiB (1024ull * 1024ull * MiB)

static const char *const inv_keys[] = { "version", "tools", NULL };
static const char *const tool_keys[] = { "id",        "description", "params",   "constraints",
					 "side_effect", "replay",    "timeout",  "exec",
					 "env_from",  "allow",       "max_calls", "max_calls_per_day",
					 "run_as",    "memory",      "pids",      "returns",
					 NULL };
static const char *const run_as_keys[] = { "user", "uid", "gid", NULL };
/* The scalar forms of run_as, in enum cpol_run_as order. */
static const char *const run_as_names[] = { "dedicated", "supervisor", NULL };
static const char *const allow_keys[] = { "roles", NULL };
static const char *const param_keys[] = { "type", "required", "min_length", "max_length", "enum",
					  "min",  "max",      "items",      "max_items",  "properties",
					  NULL };
static const char *const type_names[] = { "string", "integer", "number", "boolean", "array", "object", NULL };

/* Parameter names become Python keyword arguments in the generated stubs
 * (tools.mail.send(to=...)), and tool ids become attribute paths; a Python
 * keyword in either would make the stub a syntax error. */
static const char *const python_keywords[] = {
	"False", "None",  "True",   "and",  "as",       "assert", "async",  "await", "break",
	"class", "continue", "def", "del",  "elif",     "else",   "except", "finally", "for",
	"from",  "global", "if",    "import", "in",     "is",     "lambda", "nonlocal", "not",
	"or",    "pass",  "raise",  "return", "try",    "while",  "with",   "yield", NULL,
};

static int is_python_keyword(const char *s, size_t len)
{
	size_t i;

	for (i = 0; python_keywords[i] != NULL; i++)
		if (strlen(python_keywords[i]) == len && memcmp(python_keywords[i], s, len) == 0)
			return 1;
	return 0;
}

/* "namespace.action", each part a lowercase identifier that is not a
 * Python keyword. */
static int tool_id_ok(const char *s, size_t len, const char **why)
{
	const char *dot = memchr(s, '.', len);
	size_t a, b;

	*why = "a tool id: namespace.action, lowercase letters, digits and '_'";
	if (dot == NULL)
		return 0;
	a = (size_t)(dot - s);
	b = len - a - 1;
	if (!schema_name_ok(s, a, "a-z", "a-z0-9_", 32) || !schema_name_ok(dot + 1, b, "a-z", "a-z0-9_", 32))
		return 0;
	if (is_python_keyword(s, a) || is_python_keyword(dot + 1, b)) {
		*why = "usable as a tool id: a part of it is a Python keyword";
		return 0;
	}
	return 1;
}

/* A growable array of parameters; indices, never pointers, are kept across
 * calls because it moves when it grows. */
struct pvec {
	struct cpol_param *v;
	size_t n, cap;
};

static int pvec_reserve(struct pvec *pv, size_t more, uint32_t *first)
{
	if (more > COMPILE_MAX_PARAMS || pv->n + more > COMPILE_MAX_PARAMS)
		return -1;
	if (pv->n + more > pv->cap) {
		size_t cap = pv->cap ? pv->cap : 32;
		struct cpol_param *nv;

		while (cap < pv->n + more)
			cap *= 2;
		nv = realloc(pv->v, cap * sizeof(*nv));
		if (nv == NULL)
			return -1;
		pv->v = nv;
		pv->cap = cap;
	}
	memset(pv->v + pv->n, 0, more * sizeof(*pv->v));
	*first = (uint32_t)pv->n;
	pv->n += more;
	return 0;
}

static int params_run(struct schema_ctx *c, const struct ynode *map, const char *path, int depth,
		      struct pvec *pv, struct cpol_range *out, uint8_t *ok);

/* Keys that only some types take. */
struct type_key {
	const char *key;
	uint32_t types; /* bit (1 << type) */
	const char *which;
};

#define TB(t) (1u << (t))
static const struct type_key type_keys[] = {
	{ "min_length", TB(CPOL_T_STRING), "string" },
	{ "max_length", TB(CPOL_T_STRING), "string" },
	{ "enum", TB(CPOL_T_STRING), "string" },
	{ "min", TB(CPOL_T_INTEGER) | TB(CPOL_T_NUMBER), "integer and number" },
	{ "max", TB(CPOL_T_INTEGER) | TB(CPOL_T_NUMBER), "integer and number" },
	{ "items", TB(CPOL_T_ARRAY), "array" },
	{ "max_items", TB(CPOL_T_ARRAY), "array" },
	{ "properties", TB(CPOL_T_OBJECT), "object" },
};

static int param_enum(struct schema_ctx *c, const struct ynode *n, const char *path, struct cpol_param *prm)
{
	char sub[SCHEMA_PATH_MAX];
	size_t i, j;
	int rc = 0;

	if (schema_seq(c, n, path) != 0)
		return -1;
	if (n->n == 0 || n->n > COMPILE_MAX_ENUM) {
		schema_error(c, n, "%s: an enum lists 1 to %d values", path, COMPILE_MAX_ENUM);
		return -1;
	}
	prm->enums.v = arena_calloc(c->a, n->n, sizeof(*prm->enums.v));
	if (prm->enums.v == NULL)
		return -1;
	for (i = 0; i < n->n; i++) {
		const char *s;

		PATH(sub, "%s[%zu]", path, i);
		if (schema_string(c, n->vals[i], sub, 0, 1024, &s) != 0) {
			rc = -1;
			continue;
		}
		for (j = 0; j < prm->enums.n; j++) {
			if (strcmp(prm->enums.v[j], s) == 0) {
				schema_error(c, n->vals[i], "%s: '%s' is listed twice", sub, s);
				rc = -1;
				break;
			}
		}
		if (j == prm->enums.n)
			prm->enums.v[prm->enums.n++] = s;
	}
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Why an unnamed spec (an array's items, a tool's result) takes no
 * 'required': it describes a value that is always there. */
static const char no_required_items[] = "'required' has no meaning for array items; put it on the array";
static const char no_required_returns[] =
	"'required' has no meaning for a result: a tool that answers always gives one";

/* Fill pv->v[idx] from one parameter spec; children go after idx.  A spec
 * without a name (name "") says in no_required why it takes no 'required'. */
static int param_fill(struct schema_ctx *c, const struct ynode *spec, const char *path, int depth, const char *name,
		      const char *no_required, struct pvec *pv, uint32_t idx)
{
	char sub[SCHEMA_PATH_MAX];
	struct cpol_param prm;
	const struct ynode *v, *tnode;
	bool req = false;
	uint64_t u;
	size_t i;
	int rc = 0;

	memset(&prm, 0, sizeof(prm));
	prm.name = name;
	prm.items = CPOL_NONE;
	if (depth > COMPILE_MAX_PARAM_DEPTH) {
		schema_error(c, spec, "%s: parameters nest deeper than %d levels", path, COMPILE_MAX_PARAM_DEPTH);
		return -1;
	}
	if (schema_map(c, spec, path, param_keys) != 0)
		rc = -1;
	if (spec->kind != YN_MAP)
		return -1;
	tnode = ymap_get(spec, "type");
	if (tnode == NULL) {
		schema_error(c, spec, "%s: missing required key 'type'", path);
		return -1;
	}
	PATH(sub, "%s.type", path);
	if (schema_enum(c, tnode, sub, type_names, &prm.type) != 0)
		return -1;
	prm.type += 1; /* type_names[0] is CPOL_T_STRING (1) */
	for (i = 0; i < sizeof(type_keys) / sizeof(type_keys[0]); i++) {
		const struct ynode *k = ymap_key(spec, type_keys[i].key);

		if (k != NULL && !(type_keys[i].types & TB(prm.type))) {
			schema_error(c, k, "%s: '%s' applies to %s parameters, not %s", path, type_keys[i].key,
				     type_keys[i].which, policy_type_name(prm.type));
			rc = -1;
		}
	}
	/* Past a key that does not fit the type the checks go on: each case
	 * below reads only its own type's keys, so the rest of the spec is
	 * judged in the same run without noise. */
	if ((v = ymap_get(spec, "required")) != NULL) {
		PATH(sub, "%s.required", path);
		if (name[0] == '\0') {
			schema_error(c, ymap_key(spec, "required"), "%s: %s", sub, no_required);
			rc = -1;
		} else if (schema_bool(c, v, sub, &req) != 0) {
			rc = -1;
		}
	}
	if (req)
		prm.flags |= CPOL_PRM_F_REQUIRED;
	switch (prm.type) {
	case CPOL_T_STRING:
		if ((v = ymap_get(spec, "min_length")) != NULL) {
			PATH(sub, "%s.min_length", path);
			if (schema_uint(c, v, sub, 0, UINT32_MAX, &prm.min_length) != 0)
				rc = -1;
			else
				prm.flags |= CPOL_PRM_F_MIN_LENGTH;
		}
		if ((v = ymap_get(spec, "max_length")) != NULL) {
			PATH(sub, "%s.max_length", path);
			if (schema_uint(c, v, sub, 0, UINT32_MAX, &prm.max_length) != 0)
				rc = -1;
			else
				prm.flags |= CPOL_PRM_F_MAX_LENGTH;
		}
		if ((prm.flags & CPOL_PRM_F_MIN_LENGTH) && (prm.flags & CPOL_PRM_F_MAX_LENGTH) &&
		    prm.min_length > prm.max_length) {
			schema_error(c, ymap_get(spec, "min_length"),
				     "%s: min_length %llu is greater than max_length %llu", path,
				     (unsigned long long)prm.min_length, (unsigned long long)prm.max_length);
			schema_note(c, c->f, ymap_get(spec, "max_length"), "max_length is set here");
			rc = -1;
		}
		if ((v = ymap_get(spec, "enum")) != NULL) {
			PATH(sub, "%s.enum", path);
			if (param_enum(c, v, sub, &prm) != 0) {
				rc = -1;
			} else {
				for (i = 0; i < prm.enums.n && rc == 0; i++) {
					size_t len = strlen(prm.enums.v[i]);

					if (((prm.flags & CPOL_PRM_F_MIN_LENGTH) && len < prm.min_length) ||
					    ((prm.flags & CPOL_PRM_F_MAX_LENGTH) && len > prm.max_length)) {
						schema_error(c, v->vals[i],
							     "%s: enum value '%s' is outside the length bounds", sub,
							     prm.enums.v[i]);
						rc = -1;
					}
				}
				/* Sorted so the blob does not depend on the order the
				 * author happened to list them in. */
				qsort(prm.enums.v, prm.enums.n, sizeof(*prm.enums.v), cmp_str);
			}
		}
		break;
	case CPOL_T_INTEGER:
		if ((v = ymap_get(spec, "min")) != NULL) {
			PATH(sub, "%s.min", path);
			if (schema_int(c, v, sub, &prm.imin) != 0)
				rc = -1;
			else
				prm.flags |= CPOL_PRM_F_MIN;
		}
		if ((v = ymap_get(spec, "max")) != NULL) {
			PATH(sub, "%s.max", path);
			if (schema_int(c, v, sub, &prm.imax) != 0)
				rc = -1;
			else
				prm.flags |= CPOL_PRM_F_MAX;
		}
		if ((prm.flags & CPOL_PRM_F_MIN) && (prm.flags & CPOL_PRM_F_MAX) && prm.imin > prm.imax) {
			schema_error(c, ymap_get(spec, "min"), "%s: min %lld is greater than max %lld", path,
				     (long long)prm.imin, (long long)prm.imax);
			schema_note(c, c->f, ymap_get(spec, "max"), "max is set here");
			rc = -1;
		}
		break;
	case CPOL_T_NUMBER:
		if ((v = ymap_get(spec, "min")) != NULL) {
			PATH(sub, "%s.min", path);
			if (schema_number(c, v, sub, &prm.fmin) != 0)
				rc = -1;
			else
				prm.flags |= CPOL_PRM_F_MIN;
		}
		if ((v = ymap_get(spec, "max")) != NULL) {
			PATH(sub, "%s.max", path);
			if (schema_number(c, v, sub, &prm.fmax) != 0)
				rc = -1;
			else
				prm.flags |= CPOL_PRM_F_MAX;
		}
		if ((prm.flags & CPOL_PRM_F_MIN) && (prm.flags & CPOL_PRM_F_MAX) && prm.fmin > prm.fmax) {
			schema_error(c, ymap_get(spec, "min"), "%s: min %s is greater than max %s", path,
				     ymap_get(spec, "min")->str, ymap_get(spec, "max")->str);
			schema_note(c, c->f, ymap_get(spec, "max"), "max is set here");
			rc = -1;
		}
		break;
	case CPOL_T_ARRAY:
		if ((v = ymap_get(spec, "max_items")) != NULL) {
			PATH(sub, "%s.max_items", path);
			if (schema_uint(c, v, sub, 0, UINT32_MAX, &u) != 0) {
				rc = -1;
			} else {
				prm.max_items = u;
				prm.flags |= CPOL_PRM_F_MAX_ITEMS;
			}
		}
		v = ymap_get(spec, "items");
		if (v == NULL) {
			schema_error(c, spec, "%s: an array parameter needs 'items' (the type of its elements)", path);
			rc = -1;
			break;
		}
		if (pvec_reserve(pv, 1, &prm.items) != 0) {
			schema_error(c, v, "%s: too many parameters (the limit is %d)", path, COMPILE_MAX_PARAMS);
			return -1;
		}
		PATH(sub, "%s.items", path);
		if (param_fill(c, v, sub, depth + 1, "", no_required_items, pv, prm.items) != 0)
			rc = -1;
		break;
	case CPOL_T_OBJECT:
		v = ymap_get(spec, "properties");
		if (v == NULL) {
			schema_error(c, spec, "%s: an object parameter needs 'properties'", path);
			rc = -1;
			break;
		}
		PATH(sub, "%s.properties", path);
		if (params_run(c, v, sub, depth + 1, pv, &prm.props, NULL) != 0)
			rc = -1;
		break;
	default:
		break;
	}
	pv->v[idx] = prm;
	return rc;
}

struct key_order {
	const struct ynode *key;
	const struct ynode *val;
};

static int cmp_key_order(const void *a, const void *b)
{
	return strcmp(((const struct key_order *)a)->key->str, ((const struct key_order *)b)->key->str);
}

/* One mapping of name -> spec becomes a contiguous run, sorted by name.
 * ok, when not NULL, has room for map->n flags and gets 1 for each entry
 * of the run (in its sorted order) whose name and spec had no error. */
static int params_run(struct schema_ctx *c, const struct ynode *map, const char *path, int depth,
		      struct pvec *pv, struct cpol_range *out, uint8_t *ok)
{
	char sub[SCHEMA_PATH_MAX];
	struct key_order *ord = NULL;
	uint32_t first;
	size_t i;
	int rc = 0;

	out->first = 0;
	out->count = 0;
	if (map->kind != YN_MAP) {
		schema_error(c, map, "%s: expected a mapping of parameter name to spec", path);
		return -1;
	}
	if (map->n > COMPILE_MAX_LIST) {
		schema_error(c, map, "%s: too many parameters (%zu; the limit is %d)", path, map->n,
			     COMPILE_MAX_LIST);
		return -1;
	}
	if (map->n == 0)
		return 0;
	ord = calloc(map->n, sizeof(*ord));
	if (ord == NULL)
		return -1;
	for (i = 0; i < map->n; i++) {
		ord[i].key = map->keys[i];
		ord[i].val = map->vals[i];
	}
	qsort(ord, map->n, sizeof(*ord), cmp_key_order);
	if (pvec_reserve(pv, map->n, &first) != 0) {
		schema_error(c, map, "%s: too many parameters (the limit is %d in all)", path, COMPILE_MAX_PARAMS);
		rc = -1;
		goto out;
	}
	out->first = first;
	out->count = (uint32_t)map->n;
	for (i = 0; i < map->n; i++) {
		const struct ynode *k = ord[i].key;
		const char *name;

		PATH(sub, "%s.%s", path, k->str);
		if (!schema_name_ok(k->str, k->len, "A-Za-z_", "A-Za-z0-9_", 64)) {
			schema_error(c, k, "%s: '%s' is not a parameter name (letters, digits and '_', "
					   "not starting with a digit)", path, k->str);
			rc = -1;
			continue;
		}
		if (is_python_keyword(k->str, k->len)) {
			schema_error(c, k, "%s: '%s' is a Python keyword and cannot name a parameter", path, k->str);
			rc = -1;
			continue;
		}
		name = arena_strndup(c->a, k->str, k->len);
		if (name == NULL) {
			rc = -1;
			goto out;
		}
		if (param_fill(c, ord[i].val, sub, depth, name, NULL, pv, first + (uint32_t)i) != 0)
			rc = -1;
		else if (ok != NULL)
			ok[i] = 1;
	}
out:
	free(ord);
	return rc;
}

static int strlist_load(struct schema_ctx *c, const struct ynode *n, const char *path, size_t min_n,
			int names, struct cpol_strs *out)
{
	char sub[SCHEMA_PATH_MAX];
	size_t i, j;
	int rc = 0;

	if (schema_seq(c, n, path) != 0)
		return -1;
	if (n->n < min_n) {
		schema_error(c, n, "%s: must list at least %zu entr%s", path, min_n, min_n == 1 ? "y" : "ies");
		return -1;
	}
	if (n->n > COMPILE_MAX_LIST) {
		schema_error(c, n, "%s: too many entries (%zu; the limit is %d)", path, n->n, COMPILE_MAX_LIST);
		return -1;
	}
	out->v = arena_calloc(c->a, n->n ? n->n : 1, sizeof(*out->v));
	if (out->v == NULL)
		return -1;
	for (i = 0; i < n->n; i++) {
		const char *s;

		PATH(sub, "%s[%zu]", path, i);
		if (names == 1) {
			if (schema_name(c, n->vals[i], sub, "A-Za-z_", "A-Za-z0-9_", 128,
					"an environment variable name", &s) != 0) {
				rc = -1;
				continue;
			}
		} else if (names == 2) {
			if (schema_name(c, n->vals[i], sub, "A-Za-z0-9", "A-Za-z0-9_.:-", 64,
					"a role name (letters, digits, '_', '.', ':' and '-')", &s) != 0) {
				rc = -1;
				continue;
			}
		} else if (schema_string(c, n->vals[i], sub, 0, 4096, &s) != 0) {
			rc = -1;
			continue;
		}
		if (names) {
			for (j = 0; j < out->n; j++) {
				if (strcmp(out->v[j], s) == 0) {
					schema_error(c, n->vals[i], "%s: '%s' is listed twice", sub, s);
					rc = -1;
					break;
				}
			}
			if (j < out->n)
				continue;
		}
		out->v[out->n++] = s;
	}
	/* Sets are sorted; argv keeps its order, it means something. */
	if (names)
		qsort(out->v, out->n, sizeof(*out->v), cmp_str);
	return rc;
}

/* A tool's `constraints:`: a sequence of 1..COMPILE_MAX_LIST strings. */
static int constraints_shape(struct schema_ctx *c, const struct ynode *n, const char *path)
{
	char sub[SCHEMA_PATH_MAX];
	const char *s;
	int rc = 0;

	if (schema_seq(c, n, path) != 0)
		return -1;
	if (n->n == 0 || n->n > COMPILE_MAX_LIST) {
		schema_error(c, n, "%s: list 1 to %d constraints (or leave the key out)", path, COMPILE_MAX_LIST);
		return -1;
	}
	for (size_t i = 0; i < n->n; i++) {
		PATH(sub, "%s[%zu]", path, i);
		if (schema_string(c, n->vals[i], sub, 1, 4096, &s) != 0)
			rc = -1;
	}
	return rc;
}

/*
 * Where a constraint's text starts in its file.  Diagnostics from the
 * expression parser count columns from there, which is only right when
 * the scalar's value is its source text verbatim, on one line: plain, or
 * quoted without escapes.  Anything else (a block scalar, a folded line,
 * an escape) is refused rather than reported at a wrong column.  The byte
 * offset comes from the file's position index (src_offset(), the inverse
 * of the src_pos() that YAML positions are defined by), so finding it costs
 * the same wherever in the file the constraint is.
 */
static int constraint_text_pos(const struct src_file *f, const struct ynode *n, uint32_t *line, uint32_t *col)
{
	const unsigned char *t = (const unsigned char *)f->text;
	size_t off = src_offset(f, n->line, n->col);
	uint32_t l2, k2;

	/* A node whose column lies past the end of its line (cannot happen
	 * for a mark libyaml made) would land on the break: refused. */
	src_pos(f, off, &l2, &k2);
	if (l2 != n->line || k2 != n->col)
		return -1;
	*line = n->line;
	*col = n->col;
	if (!n->plain) {
		if (off >= f->len || (t[off] != '"' && t[off] != '\''))
			return -1;
		off++;
		(*col)++;
	}
	if (memchr(n->str, '\n', n->len) != NULL || memchr(n->str, '\r', n->len) != NULL ||
	    n->len > f->len - off || memcmp(t + off, n->str, n->len) != 0)
		return -1;
	return 0;
}

/*
 * Build one tool's params into pv, and fill sig with the signature its
 * constraints are judged against: the whole run when it built cleanly;
 * else the parameters that did, with every other name marked broken, so
 * a constraint's own mistakes are reported in the same run as the specs'
 * and a use of a broken parameter adds no second error.  sig's arrays
 * live in scratch; sig->params points into pv until pv grows.
 */
static int tool_params_build(struct schema_ctx *c, struct tool_src *ts, struct pvec *pv, struct arena *scratch,
			     struct constraint_src *sig)
{
	char path[SCHEMA_PATH_MAX];
	const struct ynode *map = ts->params;
	struct cpol_param *good;
	const char **broken;
	uint8_t *ok;
	uint32_t n, i, ng = 0;
	size_t k, j;

	sig->params = NULL;
	sig->nparams = 0;
	sig->broken = NULL;
	sig->nbroken = 0;
	sig->all_broken = 0;
	if (map == NULL)
		return 0;
	ok = arena_calloc(scratch, map->kind == YN_MAP && map->n ? map->n : 1, 1);
	if (ok == NULL)
		return -1;
	PATH(path, "tools.%s.params", ts->tool.id);
	if (params_run(c, map, path, 1, pv, &ts->tool.params, ok) == 0) {
		sig->params = ts->tool.params.count ? pv->v + ts->tool.params.first : NULL;
		sig->nparams = ts->tool.params.count;
		return 0;
	}
	n = ts->tool.params.count;
	if (n == 0) { /* not a mapping, or too many: no name can be judged */
		sig->all_broken = 1;
		return -1;
	}
	good = arena_calloc(scratch, n, sizeof(*good));
	broken = arena_calloc(scratch, map->n, sizeof(*broken));
	if (good == NULL || broken == NULL)
		return -1;
	for (i = 0; i < n; i++)
		if (ok[i])
			good[ng++] = pv->v[ts->tool.params.first + i];
	for (k = 0; k < map->n; k++) {
		for (j = 0; j < ng && strcmp(good[j].name, map->keys[k]->str) != 0; j++)
			;
		if (j == ng)
			broken[sig->nbroken++] = map->keys[k]->str;
	}
	sig->params = good;
	sig->nparams = ng;
	sig->broken = broken;
	return -1;
}

/* Compile one tool's constraints against sig (tool_params_build());
 * ts->tool's constraints range is set to the run of instructions appended
 * to code. */
static int constraints_build(struct schema_ctx *c, struct tool_src *ts, const struct constraint_src *sig,
			     struct arena *ast_arena, struct constraint_code *code)
{
	char path[SCHEMA_PATH_MAX];
	struct constraint_src src = *sig;
	size_t first = code->n;
	int rc = 0;

	src.d = c->d;
	src.a = c->a;
	src.path = path;
	for (size_t i = 0; i < ts->constraints->n; i++) {
		const struct ynode *e = ts->constraints->vals[i];
		struct ast_node *expr = NULL;
		uint32_t line, col;

		PATH(path, "tools.%s.constraints[%zu]", ts->tool.id, i);
		if (constraint_text_pos(c->f, e, &line, &col) != 0) {
			schema_error(c, e, "%s: write the constraint on one line, plain or in quotes, without escapes or "
					   "line folding, so that errors can point into it", path);
			rc = -1;
			continue;
		}
		if (policy_parse_expr(c->f, line, col, e->str, e->len, ast_arena, &expr, c->d) != 0 ||
		    constraint_gen_expr(&src, expr, code) != 0)
			rc = -1;
	}
	if (rc == 0 && code->n - first > UINT32_MAX) {
		schema_error(c, ts->constraints, "tools.%s.constraints: too much code", ts->tool.id);
		rc = -1;
	}
	ts->tool.constraints.first = rc == 0 ? (uint32_t)first : 0;
	ts->tool.constraints.count = rc == 0 ? (uint32_t)(code->n - first) : 0;
	return rc;
}

/*
 * The supervisor refuses to run a program that someone other than root or
 * its own user could swap (common/tool_path.h); saying so at compile time
 * spares a policy that fails on every call.  The compiling user stands in
 * for the supervisor's.  A path that does not exist here is left to the
 * run: policies are often compiled where the tools are not installed.
 */
static int exec_path_check(struct schema_ctx *c, const struct ynode *at, const char *path, const char *argv0)
{
	char why[512];

	if (tool_path_check(argv0, geteuid(), why, sizeof(why)) != TOOL_PATH_UNSAFE)
		return 0;
	schema_error(c, at, "%s: %s may be replaced by someone other than root or uid %u: %s", path, argv0,
		     (unsigned)geteuid(), why);
	return -1;
}

/*
 * run_as: `dedicated` (the default), `supervisor`, `{ user: NAME }` or
 * `{ uid: N, gid: M }`.  Root is refused in each spelling the compiler
 * can see (uid 0, gid 0, the name root); a name is looked up on the host
 * that runs the tool, not here, and the supervisor refuses one that
 * resolves to uid 0 there.
 */
static int run_as_load(struct schema_ctx *c, const struct ynode *v, const char *path, struct cpol_tool *t)
{
	char sub[SCHEMA_PATH_MAX];
	const struct ynode *user, *uid, *gid;
	uint64_t u;
	int rc = 0;

	if (v->kind == YN_SCALAR)
		return schema_enum(c, v, path, run_as_names, &t->run_as);
	if (schema_map(c, v, path, run_as_keys) != 0)
		return -1;
	user = ymap_get(v, "user");
	uid = ymap_get(v, "uid");
	gid = ymap_get(v, "gid");
	if (user != NULL && (uid != NULL || gid != NULL)) {
		schema_error(c, uid != NULL ? ymap_key(v, "uid") : ymap_key(v, "gid"),
			     "%s: give either user, or uid and gid, not both", path);
		return -1;
	}
	if (user != NULL) {
		PATH(sub, "%s.user", path);
		if (schema_name(c, user, sub, "a-z_", "a-z0-9_-", CPOL_USER_NAME_MAX,
				"a user name: a lowercase letter or '_', then lowercase letters, digits, '_' or '-'",
				&t->run_user) != 0)
			return -1;
		if (strcmp(t->run_user, "root") == 0) {
			schema_error(c, user, "%s: a tool may not run as root; name an unprivileged user, or leave "
					      "run_as out for a dedicated one", sub);
			return -1;
		}
		t->run_as = CPOL_RUN_AS_USER;
		return 0;
	}
	if (uid == NULL || gid == NULL) {
		schema_error(c, v, "%s: missing required key '%s' (write { user: NAME } or { uid: N, gid: M })", path,
			     uid == NULL ? "uid" : "gid");
		return -1;
	}
	/* 4294967295 is (uid_t)-1, "leave unchanged" to setresuid(). */
	PATH(sub, "%s.uid", path);
	if (schema_uint(c, uid, sub, 0, UINT32_MAX - 1, &u) != 0) {
		rc = -1;
	} else if (u == 0) {
		schema_error(c, uid, "%s: uid 0 is root; a tool may not run as root", sub);
		rc = -1;
	} else {
		t->run_uid = (uint32_t)u;
	}
	PATH(sub, "%s.gid", path);
	if (schema_uint(c, gid, sub, 0, UINT32_MAX - 1, &u) != 0) {
		rc = -1;
	} else if (u == 0) {
		schema_error(c, gid, "%s: gid 0 is root's group; a tool may not run with it", sub);
		rc = -1;
	} else {
		t->run_gid = (uint32_t)u;
	}
	t->run_as = CPOL_RUN_AS_IDS;
	return rc;
}

static int tool_load(struct schema_ctx *c, const struct ynode *n, size_t idx, struct tool_src *ts)
{
	char path[SCHEMA_PATH_MAX], sub[SCHEMA_PATH_MAX];
	struct cpol_tool *t = &ts->tool;
	const struct ynode *v, *se_node, *replay_node;
	const char *why = NULL;
	bool side_effect = false, replay = false;
	uint64_t u;
	int rc = 0;

	PATH(path, "tools[%zu]", idx);
	if (n->kind != YN_MAP) {
		schema_error(c, n, "%s: expected a mapping, got %s", path, schema_got(n));
		return -1;
	}
	ts->file = c->f;
	ts->node = n;
	ts->id_node = v = ymap_get(n, "id");
	if (v == NULL) {
		schema_error(c, n, "%s: missing required key 'id'", path);
		rc = -1;
	} else if (v->kind != YN_SCALAR || v->resolve != YR_STRING) {
		schema_string(c, v, "id", 1, 65, &t->id); /* reports the type error */
		rc = -1;
	} else if (!tool_id_ok(v->str, v->len, &why)) {
		schema_error(c, v, "%s.id: '%s' is not %s", path, v->str, why);
		rc = -1;
	} else {
		t->id = arena_strndup(c->a, v->str, v->len);
		if (t->id == NULL)
			return -1;
		PATH(path, "tools.%s", t->id);
	}
	/* Keys are checked once the tool has its name, so every message
	 * about one tool names it the same way. */
	if (schema_map(c, n, path, tool_keys) != 0)
		rc = -1;
	if ((v = ymap_get(n, "description")) == NULL) {
		schema_error(c, n, "%s: missing required key 'description' (the model reads it)", path);
		rc = -1;
	} else {
		PATH(sub, "%s.description", path);
		if (schema_string(c, v, sub, 1, 4096, &t->description) != 0)
			rc = -1;
	}
	ts->params = ymap_get(n, "params");
	/* Built with the params by inventory_finish(), into the same table. */
	ts->returns = ymap_get(n, "returns");
	if ((v = ymap_get(n, "constraints")) != NULL) {
		PATH(sub, "%s.constraints", path);
		/* Only the shape here; the expressions are compiled by
		 * inventory_finish(), once the params they name are built. */
		if (constraints_shape(c, v, sub) == 0)
			ts->constraints = v;
		else
			rc = -1;
	}
	se_node = ymap_get(n, "side_effect");
	if (se_node != NULL) {
		PATH(sub, "%s.side_effect", path);
		if (schema_bool(c, se_node, sub, &side_effect) != 0)
			rc = -1;
	}
	replay = side_effect;
	replay_node = ymap_get(n, "replay");
	if (replay_node != NULL) {
		PATH(sub, "%s.replay", path);
		if (schema_bool(c, replay_node, sub, &replay) != 0) {
			rc = -1;
		} else if (!side_effect) {
			schema_error(c, replay_node, "%s: replay applies only to tools with side_effect: true", sub);
			rc = -1;
		}
	}
	t->flags = (side_effect ? CPOL_TOOL_F_SIDE_EFFECT : 0) | (side_effect && replay ? CPOL_TOOL_F_REPLAY : 0);
	t->timeout_ms = 10000;
	if ((v = ymap_get(n, "timeout")) != NULL) {
		PATH(sub, "%s.timeout", path);
		if (schema_duration(c, v, sub, 1, 3600 * 1000ull, &t->timeout_ms) != 0)
			rc = -1;
	}
	if ((v = ymap_get(n, "exec")) == NULL) {
		schema_error(c, n, "%s: missing required key 'exec' (the implementation's argv)", path);
		rc = -1;
	} else {
		PATH(sub, "%s.exec", path);
		if (strlist_load(c, v, sub, 1, 0, &t->exec) != 0) {
			rc = -1;
		} else if (v->n > 0) {
			const char *argv0;

			PATH(sub, "%s.exec[0]", path);
			if (schema_abs_path(c, v->vals[0], sub, &argv0) != 0)
				rc = -1;
			else if (exec_path_check(c, v->vals[0], sub, argv0) != 0)
				rc = -1;
		}
	}
	if ((v = ymap_get(n, "env_from")) != NULL) {
		PATH(sub, "%s.env_from", path);
		if (strlist_load(c, v, sub, 0, 1, &t->env_from) != 0)
			rc = -1;
	}
	if ((v = ymap_get(n, "allow")) != NULL) {
		PATH(sub, "%s.allow", path);
		if (schema_map(c, v, sub, allow_keys) != 0) {
			rc = -1;
		} else if (ymap_get(v, "roles") == NULL) {
			schema_error(c, v, "%s: missing required key 'roles'", sub);
			rc = -1;
		} else {
			PATH(sub, "%s.allow.roles", path);
			if (strlist_load(c, ymap_get(v, "roles"), sub, 1, 2, &t->roles) != 0)
				rc = -1;
		}
	}
	if ((v = ymap_get(n, "max_calls")) != NULL) {
		PATH(sub, "%s.max_calls", path);
		if (schema_uint(c, v, sub, 1, 1000000, &u) != 0)
			rc = -1;
		else
			t->max_calls = (uint32_t)u;
	}
	/* Counted by the ledger across runs, per (app, tenant, user, tool, UTC day);
	 * leaving the key out, not 0, is how to say "no daily budget". */
	if ((v = ymap_get(n, "max_calls_per_day")) != NULL) {
		PATH(sub, "%s.max_calls_per_day", path);
		if (schema_uint(c, v, sub, 1, CPOL_TOOL_MAX_PER_DAY, &u) != 0)
			rc = -1;
		else
			t->max_calls_per_day = (uint32_t)u;
	}
	/* The tool's own cgroup (docs/tools.md): every call is charged and
	 * limited on its own, whatever the run's limits are. */
	t->run_as = CPOL_RUN_AS_DEDICATED;
	if ((v = ymap_get(n, "run_as")) != NULL) {
		PATH(sub, "%s.run_as", path);
		if (run_as_load(c, v, sub, t) != 0)
			rc = -1;
	}
	t->memory_bytes = 256 * MiB;
	if ((v = ymap_get(n, "memory")) != NULL) {
		PATH(sub, "%s.memory", path);
		if (schema_size(c, v, sub, 16 * MiB, TiB, &t->memory_bytes) != 0)
			rc = -1;
	}
	t->pids = 32;
	if ((v = ymap_get(n, "pids")) != NULL) {
		PATH(sub, "%s.pids", path);
		if (schema_uint(c, v, sub, 1, CPOL_TOOL_MAX_PIDS, &u) != 0)
			rc = -1;
		else
			t->pids = (uint32_t)u;
	}
	return rc;
}

int inventory_load(struct schema_ctx *c, const struct ynode *root, struct inventory *inv)
{
	const struct ynode *tools, *v;
	uint64_t u;
	size_t i;
	int rc = 0;

	if (root->kind != YN_MAP) {
		schema_error(c, root, "expected the tool inventory to be a mapping, got %s", schema_got(root));
		return -1;
	}
	if (schema_map(c, root, "tool inventory", inv_keys) != 0)
		rc = -1;
	v = ymap_get(root, "version");
	if (v == NULL) {
		schema_error(c, root, "missing required key 'version' (write version: 1)");
		rc = -1;
	} else if (schema_uint(c, v, "version", 0, UINT32_MAX, &u) != 0) {
		rc = -1;
	} else if (u != 1) {
		schema_error(c, v, "version: unsupported inventory version %llu (this cordonc reads version 1)",
			     (unsigned long long)u);
		rc = -1;
	} else {
		inv->version = 1;
	}
	tools = ymap_get(root, "tools");
	if (tools == NULL) {
		schema_error(c, root, "missing required key 'tools'");
		return -1;
	}
	if (schema_seq(c, tools, "tools") != 0)
		return -1;
	if (inv->n + tools->n > COMPILE_MAX_TOOLS) {
		schema_error(c, tools, "tools: too many tools (the limit is %d in all inventories)",
			     COMPILE_MAX_TOOLS);
		return -1;
	}
	if (inv->n + tools->n > inv->cap) {
		size_t cap = inv->n + tools->n;
		struct tool_src *nv = realloc(inv->v, (cap ? cap : 1) * sizeof(*nv));

		if (nv == NULL)
			return -1;
		inv->v = nv;
		inv->cap = cap;
	}
	for (i = 0; i < tools->n; i++) {
		struct tool_src *ts = &inv->v[inv->n];

		memset(ts, 0, sizeof(*ts));
		/* A tool with errors but a good id is kept, so its params are
		 * still checked and agents naming it do not add "unknown tool"
		 * noise; any error already means no blob. */
		if (tool_load(c, tools->vals[i], i, ts) != 0)
			rc = -1;
		if (ts->tool.id != NULL)
			inv->n++;
	}
	return rc;
}

/*
 * returns: one spec in the params' type language, of any type (an object's
 * properties become a TypedDict in the stubs, anything else the plain
 * type).  It is level 1 like a tool's own params, unnamed like an items
 * spec, and its children follow it in the same table, so the loader's
 * forest rules hold for it unchanged.
 */
static int returns_build(struct schema_ctx *c, struct tool_src *ts, struct pvec *pv)
{
	char path[SCHEMA_PATH_MAX];
	uint32_t idx;

	PATH(path, "tools.%s.returns", ts->tool.id);
	if (pvec_reserve(pv, 1, &idx) != 0) {
		schema_error(c, ts->returns, "%s: too many parameters (the limit is %d in all)", path,
			     COMPILE_MAX_PARAMS);
		return -1;
	}
	if (param_fill(c, ts->returns, path, 1, "", no_required_returns, pv, idx) != 0)
		return -1;
	ts->tool.returns = idx + 1;
	return 0;
}

static int cmp_tool_src(const void *a, const void *b)
{
	const struct tool_src *x = a, *y = b;
	int c = strcmp(x->tool.id, y->tool.id);

	/* Equal ids keep input order (files in command-line order, tools in
	 * file order) so the later definition is the one reported. */
	if (c != 0)
		return c;
	return x->order < y->order ? -1 : x->order > y->order;
}

int inventory_finish(struct schema_ctx *c, struct inventory *inv, struct cpol_policy *p)
{
	struct pvec pv = { NULL, 0, 0 };
	struct constraint_code code = { NULL, 0, 0 };
	struct arena ast_arena; /* syntax trees of constraints, dropped at the end */
	const struct src_file *f0 = c->f;
	size_t i;
	int rc = 0;

	arena_init(&ast_arena);

	/* qsort is not stable; equal ids are ordered by input position,
	 * recorded before the sort starts moving things. */
	for (i = 0; i < inv->n; i++)
		inv->v[i].order = i;
	if (inv->n > 0)
		qsort(inv->v, inv->n, sizeof(*inv->v), cmp_tool_src);
	p->tools = arena_calloc(&p->arena, inv->n ? inv->n : 1, sizeof(*p->tools));
	if (p->tools == NULL) {
		rc = -1;
		goto out;
	}
	for (i = 0; i < inv->n; i++) {
		struct tool_src *ts = &inv->v[i];
		struct constraint_src sig;
		int dup = i > 0 && strcmp(ts->tool.id, inv->v[i - 1].tool.id) == 0;

		c->f = ts->file;
		if (dup) {
			schema_error(c, ts->id_node, "duplicate tool id '%s'", ts->tool.id);
			schema_note(c, inv->v[i - 1].file, inv->v[i - 1].id_node, "previous definition of '%s' is here",
				    ts->tool.id);
			rc = -1;
		}
		/* A duplicate's params and constraints are still judged, so
		 * their errors come in this run too; it never reaches p. */
		if (tool_params_build(c, ts, &pv, &ast_arena, &sig) != 0)
			rc = -1;
		if (ts->returns != NULL && returns_build(c, ts, &pv) != 0)
			rc = -1;
		if (ts->constraints != NULL && constraints_build(c, ts, &sig, &ast_arena, &code) != 0)
			rc = -1;
		if (!dup)
			p->tools[p->ntools++] = ts->tool;
	}
	c->f = f0;
	if (rc != 0)
		goto out;
	p->params = arena_calloc(&p->arena, pv.n ? pv.n : 1, sizeof(*p->params));
	if (p->params == NULL) {
		rc = -1;
		goto out;
	}
	if (pv.n > 0)
		memcpy(p->params, pv.v, pv.n * sizeof(*pv.v));
	p->nparams = (uint32_t)pv.n;
	if (constraint_gen_store(&code, p) != 0) {
		rc = -1;
		goto out;
	}
	p->meta.inventory_version = inv->version;
out:
	free(pv.v);
	constraint_gen_free(&code);
	arena_free(&ast_arena);
	return rc;
}

void inventory_free(struct inventory *inv)
{
	free(inv->v);
	inv->v = NULL;
	inv->n = inv->cap = 0;
}
