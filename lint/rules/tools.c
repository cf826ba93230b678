/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools.c - the governed tools: who may call them, with what, run from
 * where, and for how long.
 *
 * Tools are judged from the compiled policy (defaults filled in, ids
 * sorted) and located in the inventory that defines them.
 */
#include <stdio.h>
#include <string.h>

#include "lint/rules/rules.h"

#define PATHBUF 256

static const struct ynode *tool_id_node(const struct ynode *tool)
{
	return tool != NULL ? ymap_get(tool, "id") : NULL;
}

/* Where a finding about one whole tool points: the value of key in the
 * tool's mapping, or its id when the key is not written (a default);
 * *f gets the inventory, subject the fingerprint's "tool:ID".  *written
 * (when not NULL) says which. */
static const struct ynode *tool_at(struct lint_ctx *c, const char *id, const char *key, const struct src_file **f,
				   char *subject, size_t n, int *written)
{
	const struct ynode *tn = lint_tool_node(c, id, f), *at = tn && key ? ymap_get(tn, key) : NULL;

	snprintf(subject, n, "tool:%s", id);
	if (written != NULL)
		*written = at != NULL;
	return at ? at : tool_id_node(tn);
}

void rule_tool_no_replay(struct lint_ctx *c, const struct lint_rule *r)
{
	const struct src_file *f;
	char subject[128];
	uint32_t i;

	for (i = 0; i < c->p.ntools; i++) {
		const struct cpol_tool *t = &c->p.tools[i];
		const struct ynode *at;

		if (!(t->flags & CPOL_TOOL_F_SIDE_EFFECT) || (t->flags & CPOL_TOOL_F_REPLAY))
			continue;
		at = tool_at(c, t->id, "replay", &f, subject, sizeof(subject), NULL);
		lint_report(c, r, f, at, subject,
			    "tool %s has side effects and replay: false: a retried call runs twice", t->id);
	}
}

struct param_walk {
	struct lint_ctx *c;
	const struct lint_rule *r;
	const struct src_file *f;
	const char *tool;
};

static void spec_check(struct param_walk *w, const struct ynode *at, const struct ynode *spec, const char *path,
		       int depth);

static void params_walk(struct param_walk *w, const struct ynode *map, const char *prefix, int depth)
{
	char path[PATHBUF];
	size_t i;

	if (map == NULL || map->kind != YN_MAP || depth > COMPILE_MAX_PARAM_DEPTH)
		return;
	for (i = 0; i < map->n; i++) {
		snprintf(path, sizeof(path), "%s%s%s", prefix, prefix[0] ? "." : "", map->keys[i]->str);
		spec_check(w, map->keys[i], map->vals[i], path, depth);
	}
}

static void spec_check(struct param_walk *w, const struct ynode *at, const struct ynode *spec, const char *path,
		       int depth)
{
	const struct ynode *type = spec->kind == YN_MAP ? ymap_get(spec, "type") : NULL;
	char subject[PATHBUF + 64], sub[PATHBUF];

	if (type == NULL || type->kind != YN_SCALAR)
		return;
	snprintf(subject, sizeof(subject), "tool:%s:param:%s", w->tool, path);
	if (strcmp(type->str, "string") == 0 && ymap_get(spec, "max_length") == NULL && ymap_get(spec, "enum") == NULL)
		lint_report(w->c, w->r, w->f, at, subject,
			    "parameter %s of tool %s is a string with no max_length or enum", path, w->tool);
	if (strcmp(type->str, "array") == 0) {
		if (ymap_get(spec, "max_items") == NULL)
			lint_report(w->c, w->r, w->f, at, subject, "parameter %s of tool %s is an array with no max_items",
				    path, w->tool);
		snprintf(sub, sizeof(sub), "%s[]", path);
		if (ymap_get(spec, "items") != NULL)
			spec_check(w, ymap_key(spec, "items"), ymap_get(spec, "items"), sub, depth + 1);
	}
	if (strcmp(type->str, "object") == 0)
		params_walk(w, ymap_get(spec, "properties"), path, depth + 1);
}

void rule_tool_unbounded_param(struct lint_ctx *c, const struct lint_rule *r)
{
	uint32_t i;

	for (i = 0; i < c->p.ntools; i++) {
		struct param_walk w = { c, r, NULL, c->p.tools[i].id };
		const struct ynode *tn = lint_tool_node(c, w.tool, &w.f);

		if (tn != NULL)
			params_walk(&w, ymap_get(tn, "params"), "", 1);
	}
}

void rule_tool_no_roles(struct lint_ctx *c, const struct lint_rule *r)
{
	const struct src_file *f;
	char subject[128];
	uint32_t i;

	for (i = 0; i < c->p.ntools; i++) {
		const struct cpol_tool *t = &c->p.tools[i];

		const struct ynode *tn;

		if (t->roles.n > 0)
			continue;
		tn = lint_tool_node(c, t->id, &f);
		snprintf(subject, sizeof(subject), "tool:%s", t->id);
		lint_report(c, r, f, tool_id_node(tn), subject,
			    "tool %s has no allow.roles: any caller whose agent lists it may call it", t->id);
	}
}

/* Role names that grant a tool to everyone in practice: platforms put such
 * a role into every request context.  cordon matches roles literally, so
 * the name alone is the signal. */
static const char *const wildcard_roles[] = { "*", "any", "all", "everyone", "anyone", "public", "anonymous",
					      "default", "authenticated" };

void rule_tool_wildcard_role(struct lint_ctx *c, const struct lint_rule *r)
{
	const struct src_file *f;
	char subject[128];
	uint32_t i;
	size_t j, k;

	for (i = 0; i < c->p.ntools; i++) {
		const struct cpol_tool *t = &c->p.tools[i];
		const struct ynode *tn = lint_tool_node(c, t->id, &f);
		const struct ynode *roles = tn ? lint_get(tn, "allow.roles") : NULL;

		if (roles == NULL || roles->kind != YN_SEQ)
			continue;
		for (j = 0; j < roles->n; j++) {
			const struct ynode *role = roles->vals[j];

			for (k = 0; k < sizeof(wildcard_roles) / sizeof(wildcard_roles[0]); k++) {
				if (role->kind != YN_SCALAR || strcasecmp(role->str, wildcard_roles[k]) != 0)
					continue;
				snprintf(subject, sizeof(subject), "tool:%s:role:%s", t->id, role->str);
				lint_report(c, r, f, role, subject, "tool %s allows role '%s', which names every caller",
					    t->id, role->str);
			}
		}
	}
}

void rule_tool_timeout(struct lint_ctx *c, const struct lint_rule *r)
{
	const struct src_file *f;
	char subject[128];
	uint32_t i;

	for (i = 0; i < c->p.ntools; i++) {
		const struct cpol_tool *t = &c->p.tools[i];
		const struct ynode *at;
		int written;

		if (t->timeout_ms <= c->p.limits.timeout_ms)
			continue;
		at = tool_at(c, t->id, "timeout", &f, subject, sizeof(subject), &written);
		lint_report(c, r, f, at, subject, "tool %s may run %llums, longer than the whole execution (%llums)%s",
			    t->id, (unsigned long long)t->timeout_ms, (unsigned long long)c->p.limits.timeout_ms,
			    written ? "" : " (its default timeout)");
	}
}

static int tool_listed(const struct cpol_policy *p, uint32_t tool)
{
	uint32_t a, k;

	for (a = 0; a < p->nagents; a++)
		for (k = 0; k < p->agents[a].ntools; k++)
			if (p->agents[a].tools[k] == tool)
				return 1;
	return 0;
}

void rule_tool_unlisted(struct lint_ctx *c, const struct lint_rule *r)
{
	const struct src_file *f;
	char subject[128];
	uint32_t i;

	/* Without agents the descriptor does not say who calls what. */
	if (c->p.nagents == 0)
		return;
	for (i = 0; i < c->p.ntools; i++) {
		const struct cpol_tool *t = &c->p.tools[i];
		const struct ynode *at;

		if (tool_listed(&c->p, i))
			continue;
		at = tool_at(c, t->id, NULL, &f, subject, sizeof(subject), NULL);
		lint_report(c, r, f, at, subject,
			    "tool %s is in the inventory, but no agent lists it: nobody may call it", t->id);
	}
}

void rule_tool_unused_secret(struct lint_ctx *c, const struct lint_rule *r)
{
	const struct src_file *f;
	char subject[256];
	uint32_t i;
	size_t j;

	/* Without agents the descriptor does not say who calls what. */
	if (c->p.nagents == 0)
		return;
	for (i = 0; i < c->p.ntools; i++) {
		const struct cpol_tool *t = &c->p.tools[i];
		const struct ynode *tn, *ef;

		if (t->env_from.n == 0 || tool_listed(&c->p, i))
			continue;
		tn = lint_tool_node(c, t->id, &f);
		ef = tn ? ymap_get(tn, "env_from") : NULL;
		if (ef == NULL || ef->kind != YN_SEQ)
			continue;
		for (j = 0; j < ef->n; j++) {
			if (ef->vals[j]->kind != YN_SCALAR)
				continue;
			snprintf(subject, sizeof(subject), "tool:%s:secret:%s", t->id, ef->vals[j]->str);
			lint_report(c, r, f, ef->vals[j], subject, "tool %s takes secret %s, but no agent lists the tool",
				    t->id, ef->vals[j]->str);
		}
	}
}

void rule_tool_unbudgeted(struct lint_ctx *c, const struct lint_rule *r)
{
	const struct src_file *f;
	char subject[128];
	uint32_t i;

	for (i = 0; i < c->p.ntools; i++) {
		const struct cpol_tool *t = &c->p.tools[i];
		const struct ynode *at;

		if (!(t->flags & CPOL_TOOL_F_SIDE_EFFECT) || t->max_calls != 0 || t->max_calls_per_day != 0)
			continue;
		at = tool_at(c, t->id, "side_effect", &f, subject, sizeof(subject), NULL);
		lint_report(c, r, f, at, subject,
			    "tool %s has side effects and no budget: neither max_calls nor max_calls_per_day bounds how "
			    "often one run may cause them",
			    t->id);
	}
}

void rule_tool_run_as_supervisor(struct lint_ctx *c, const struct lint_rule *r)
{
	const struct src_file *f;
	char subject[128];
	uint32_t i;

	for (i = 0; i < c->p.ntools; i++) {
		const struct cpol_tool *t = &c->p.tools[i];
		const struct ynode *at;

		if (t->run_as != CPOL_RUN_AS_SUPERVISOR)
			continue;
		at = tool_at(c, t->id, "run_as", &f, subject, sizeof(subject), NULL);
		lint_report(c, r, f, at, subject,
			    "tool %s runs as the supervisor's own user: root with every capability when cordon runs as root",
			    t->id);
	}
}
