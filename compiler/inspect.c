/* SPDX-License-Identifier: Apache-2.0 */
/*
 * inspect.c - a loaded blob shown to people (text) and to programs (JSON).
 *
 * Both views are built from what blob_load() decoded, never from the YAML:
 * inspect shows what the runtime will enforce.  The JSON is documented in
 * docs/cordonc.md; integers are written exactly (64-bit values do not pass
 * through a double).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include "compiler/bpf_disasm.h"
#include "compiler/inspect.h"
#include "runtime/client/policy_json.h"
#include "compiler/units.h"
#include "runtime/constraint_eval.h"
#include "cordon/keys.h"

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p)
{
	return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static const char *arch_name(uint32_t arch)
{
	return arch == CPOL_ARCH_X86_64 ? "x86_64" : "unknown";
}

/* --- JSON --------------------------------------------------------------- */

static cJSON *json_sections(const uint8_t *buf)
{
	cJSON *a = cJSON_CreateArray();
	uint32_t i;

	for (i = 0; a != NULL && i < rd32(buf + CPOL_HDR_SECTION_COUNT); i++) {
		const uint8_t *e = buf + CPOL_HEADER_SIZE + i * CPOL_SEC_ENT_BYTES;
		cJSON *s = cJSON_CreateObject();
		uint32_t id = rd32(e + CPOL_SEC_ENT_ID);

		cJSON_AddNumberToObject(s, "id", id);
		cJSON_AddStringToObject(s, "name", policy_section_name(id));
		cJSON_AddItemToObject(s, "offset", policy_json_u64(rd64(e + CPOL_SEC_ENT_OFFSET)));
		cJSON_AddItemToObject(s, "size", policy_json_u64(rd64(e + CPOL_SEC_ENT_SIZE)));
		cJSON_AddNumberToObject(s, "count", rd32(e + CPOL_SEC_ENT_COUNT));
		cJSON_AddItemToArray(a, s);
	}
	return a;
}

/* null in a blob without provenance (older than 3.5). */
static cJSON *json_provenance(const struct cpol_provenance *v)
{
	cJSON *o, *a, *lint, *counts;
	char hex[65];

	if (!v->has)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	a = cJSON_AddArrayToObject(o, "sources");
	for (uint32_t i = 0; i < v->nsources; i++) {
		cJSON *s = cJSON_CreateObject();

		sodium_bin2hex(hex, sizeof(hex), v->sources[i].sha256, 32);
		cJSON_AddStringToObject(s, "role", policy_src_role_name(v->sources[i].role));
		cJSON_AddStringToObject(s, "name", v->sources[i].name);
		cJSON_AddStringToObject(s, "sha256", hex);
		cJSON_AddItemToArray(a, s);
	}
	lint = cJSON_AddObjectToObject(o, "lint");
	cJSON_AddStringToObject(lint, "catalogue", v->catalogue);
	counts = cJSON_AddObjectToObject(lint, "counts");
	cJSON_AddNumberToObject(counts, "error", v->errors);
	cJSON_AddNumberToObject(counts, "warning", v->warnings);
	cJSON_AddNumberToObject(counts, "note", v->notes);
	cJSON_AddNumberToObject(lint, "suppressed", v->suppressed);
	a = cJSON_AddArrayToObject(lint, "suppressedRules");
	for (uint32_t i = 0; i < v->rules.n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(v->rules.v[i]));
	return o;
}

static cJSON *json_limits(const struct cpol_limits *l)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "mode", policy_mode_name(l->mode));
	cJSON_AddItemToObject(o, "timeoutMs", policy_json_u64(l->timeout_ms));
	cJSON_AddItemToObject(o, "maxFileBytes", policy_json_u64(l->max_file_bytes));
	cJSON_AddItemToObject(o, "maxExecWorkspaceDeltaBytes", policy_json_u64(l->ws_delta_bytes));
	if (l->ws_max_bytes != 0)
		cJSON_AddItemToObject(o, "maxExecWorkspaceBytes", policy_json_u64(l->ws_max_bytes));
	else
		cJSON_AddNullToObject(o, "maxExecWorkspaceBytes");
	cJSON_AddNumberToObject(o, "maxExecWorkspaceEntries", l->ws_entries);
	cJSON_AddItemToObject(o, "workspaceMonitorIntervalMs", policy_json_u64(l->monitor_ms));
	cJSON_AddItemToObject(o, "maxOutputBytes", policy_json_u64(l->max_output_bytes));
	cJSON_AddItemToObject(o, "maxResultBytes", policy_json_u64(l->max_result_bytes));
	cJSON_AddItemToObject(o, "maxCodeBytes", policy_json_u64(l->max_code_bytes));
	cJSON_AddItemToObject(o, "maxToolRequestBytes", policy_json_u64(l->max_tool_request_bytes));
	cJSON_AddItemToObject(o, "memoryBytes", policy_json_u64(l->memory_bytes));
	cJSON_AddNumberToObject(o, "pids", l->pids);
	cJSON_AddNumberToObject(o, "openFiles", l->open_files);
	/* CPUs as the descriptor writes them (1.5); null: no quota. */
	if (l->cpu_milli != 0)
		cJSON_AddNumberToObject(o, "cpu", l->cpu_milli / 1000.0);
	else
		cJSON_AddNullToObject(o, "cpu");
	return o;
}

static cJSON *json_executor(const struct cpol_policy *p)
{
	const struct cpol_executor *e = &p->exec;
	const struct cpol_strs pre = { e->preload, e->npreload };
	const struct cpol_strs pkg = { e->packages, e->npackages };
	cJSON *o = cJSON_CreateObject(), *req = cJSON_CreateArray(), *sc = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "interpreter", e->interpreter);
	cJSON_AddNumberToObject(o, "uid", e->uid);
	cJSON_AddNumberToObject(o, "gid", e->gid);
	cJSON_AddStringToObject(o, "network", policy_network_name(e->network));
	cJSON_AddBoolToObject(o, "landlock", (e->flags & CPOL_EXE_F_LANDLOCK) != 0);
	if (e->require & CPOL_LAYER_LANDLOCK)
		cJSON_AddItemToArray(req, cJSON_CreateString("landlock"));
	if (e->require & CPOL_LAYER_CGROUP)
		cJSON_AddItemToArray(req, cJSON_CreateString("cgroup"));
	cJSON_AddItemToObject(o, "require", req);
	cJSON_AddStringToObject(sc, "profile", e->seccomp_profile);
	cJSON_AddStringToObject(sc, "extra", e->seccomp_extra);
	cJSON_AddItemToObject(o, "seccomp", sc);
	cJSON_AddItemToObject(o, "preload", policy_json_strs(&pre));
	cJSON_AddItemToObject(o, "packages", policy_json_strs(&pkg));
	return o;
}

/* {"kind": "dedicated"}, {"kind": "user", "user": NAME}, {"kind": "ids", "uid": N, "gid": M}. */
static cJSON *json_run_as(const struct cpol_tool *t)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "kind", policy_run_as_name(t->run_as));
	if (t->run_as == CPOL_RUN_AS_USER)
		cJSON_AddStringToObject(o, "user", t->run_user);
	if (t->run_as == CPOL_RUN_AS_IDS) {
		cJSON_AddNumberToObject(o, "uid", t->run_uid);
		cJSON_AddNumberToObject(o, "gid", t->run_gid);
	}
	return o;
}

static cJSON *json_tool(const struct cpol_policy *p, const struct cpol_tool *t)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "id", t->id);
	cJSON_AddStringToObject(o, "description", t->description);
	cJSON_AddBoolToObject(o, "sideEffect", (t->flags & CPOL_TOOL_F_SIDE_EFFECT) != 0);
	cJSON_AddBoolToObject(o, "replay", (t->flags & CPOL_TOOL_F_REPLAY) != 0);
	cJSON_AddItemToObject(o, "timeoutMs", policy_json_u64(t->timeout_ms));
	if (t->max_calls != 0)
		cJSON_AddNumberToObject(o, "maxCalls", t->max_calls);
	else
		cJSON_AddNullToObject(o, "maxCalls");
	if (t->max_calls_per_day != 0)
		cJSON_AddNumberToObject(o, "maxCallsPerDay", t->max_calls_per_day);
	else
		cJSON_AddNullToObject(o, "maxCallsPerDay");
	cJSON_AddItemToObject(o, "runAs", json_run_as(t));
	cJSON_AddItemToObject(o, "memoryBytes", policy_json_u64(t->memory_bytes));
	cJSON_AddNumberToObject(o, "pids", t->pids);
	cJSON_AddItemToObject(o, "exec", policy_json_strs(&t->exec));
	cJSON_AddItemToObject(o, "envFrom", policy_json_strs(&t->env_from));
	cJSON_AddItemToObject(o, "roles", policy_json_strs(&t->roles));
	cJSON_AddItemToObject(o, "params", policy_json_params(p, t->params, NULL));
	if (policy_tool_returns(p, (uint32_t)(t - p->tools)) != NULL)
		cJSON_AddItemToObject(o, "returns",
				      policy_json_param(p, policy_tool_returns(p, (uint32_t)(t - p->tools)), NULL));
	else
		cJSON_AddNullToObject(o, "returns");
	cJSON_AddNumberToObject(o, "constraints", constraint_count(p, (uint32_t)(t - p->tools)));
	cJSON_AddNumberToObject(o, "constraintInstructions", t->constraints.count);
	return o;
}

char *inspect_json(const struct cpol_policy *p, const uint8_t *buf, size_t len)
{
	cJSON *root = cJSON_CreateObject(), *fmt, *arr, *obj, *sig;
	char hex[65], kid[2 * KEY_ID_BYTES + 1];
	char *out = NULL;
	uint32_t i, j;

	if (root == NULL)
		return NULL;
	fmt = cJSON_AddObjectToObject(root, "format");
	cJSON_AddNumberToObject(fmt, "major", p->major);
	cJSON_AddNumberToObject(fmt, "minor", p->minor);
	cJSON_AddStringToObject(fmt, "arch", arch_name(p->arch));
	cJSON_AddItemToObject(fmt, "size", policy_json_u64(len));
	sodium_bin2hex(hex, sizeof(hex), p->sha256, 32);
	cJSON_AddStringToObject(fmt, "sha256", hex);
	cJSON_AddItemToObject(root, "sections", json_sections(buf));

	obj = cJSON_AddObjectToObject(root, "meta");
	cJSON_AddStringToObject(obj, "app", p->meta.app);
	cJSON_AddNumberToObject(obj, "descriptorVersion", p->meta.descriptor_version);
	cJSON_AddNumberToObject(obj, "inventoryVersion", p->meta.inventory_version);
	cJSON_AddItemToObject(root, "limits", json_limits(&p->limits));
	cJSON_AddItemToObject(root, "executor", json_executor(p));

	obj = cJSON_AddObjectToObject(root, "env");
	for (i = 0; i < p->nenv; i++)
		cJSON_AddStringToObject(obj, p->env[i].key, p->env[i].value);

	arr = cJSON_AddArrayToObject(root, "mounts");
	for (i = 0; i < p->nmounts; i++) {
		const struct cpol_mount *m = &p->mounts[i];
		cJSON *mo = cJSON_CreateObject();

		cJSON_AddStringToObject(mo, "type", policy_mount_type_name(m->type));
		if (m->type == CPOL_MOUNT_BIND)
			cJSON_AddStringToObject(mo, "source", m->source);
		cJSON_AddStringToObject(mo, "target", m->target);
		cJSON_AddBoolToObject(mo, "rw", (m->flags & CPOL_MNT_F_RW) != 0);
		if (m->type == CPOL_MOUNT_TMPFS)
			cJSON_AddItemToObject(mo, "sizeBytes", policy_json_u64(m->size));
		cJSON_AddItemToArray(arr, mo);
	}

	obj = cJSON_AddObjectToObject(root, "seccomp");
	cJSON_AddNumberToObject(obj, "instructions", p->nseccomp);
	arr = cJSON_AddArrayToObject(obj, "program");
	for (i = 0; i < p->nseccomp; i++) {
		cJSON *ins = cJSON_CreateArray();

		cJSON_AddItemToArray(ins, cJSON_CreateNumber(p->seccomp[i].code));
		cJSON_AddItemToArray(ins, cJSON_CreateNumber(p->seccomp[i].jt));
		cJSON_AddItemToArray(ins, cJSON_CreateNumber(p->seccomp[i].jf));
		cJSON_AddItemToArray(ins, policy_json_u64(p->seccomp[i].k));
		cJSON_AddItemToArray(arr, ins);
	}

	arr = cJSON_AddArrayToObject(root, "tools");
	for (i = 0; i < p->ntools; i++)
		cJSON_AddItemToArray(arr, json_tool(p, &p->tools[i]));

	obj = cJSON_AddObjectToObject(root, "agents");
	for (i = 0; i < p->nagents; i++) {
		cJSON *ta = cJSON_CreateArray();

		for (j = 0; j < p->agents[i].ntools; j++)
			cJSON_AddItemToArray(ta, cJSON_CreateString(p->tools[p->agents[i].tools[j]].id));
		cJSON_AddItemToObject(obj, p->agents[i].name, ta);
	}
	/* 3.6: the agents that may hold code-interpreter sessions, with their
	 * limits; an agent not listed may hold none. */
	obj = cJSON_AddObjectToObject(root, "sessions");
	for (i = 0; i < p->nagents; i++) {
		const struct cpol_session *s = &p->agents[i].session;
		cJSON *so;

		if (!(s->flags & CPOL_AGT_F_SESSION))
			continue;
		so = cJSON_AddObjectToObject(obj, p->agents[i].name);
		cJSON_AddItemToObject(so, "idleTimeoutMs", policy_json_u64(s->idle_ms));
		cJSON_AddItemToObject(so, "lifetimeMs", policy_json_u64(s->life_ms));
		cJSON_AddNumberToObject(so, "maxCells", s->max_cells);
		cJSON_AddItemToObject(so, "cpuMs", policy_json_u64(s->cpu_ms));
		cJSON_AddItemToObject(so, "workspaceBytes", policy_json_u64(s->ws_bytes));
	}

	arr = cJSON_AddArrayToObject(root, "outputs");
	for (i = 0; i < p->noutputs; i++) {
		cJSON *oo = cJSON_CreateObject();

		cJSON_AddStringToObject(oo, "path", p->outputs[i].path);
		cJSON_AddItemToObject(oo, "maxBytes", policy_json_u64(p->outputs[i].max_bytes));
		cJSON_AddBoolToObject(oo, "required", (p->outputs[i].flags & CPOL_OUT_F_REQUIRED) != 0);
		cJSON_AddItemToArray(arr, oo);
	}

	cJSON_AddItemToObject(root, "provenance", json_provenance(&p->prov));
	sig = cJSON_AddObjectToObject(root, "signature");
	if (p->signature.algo == CPOL_SIG_ED25519) {
		key_id_hex(p->signature.keyid, kid);
		cJSON_AddStringToObject(sig, "algorithm", "ed25519");
		cJSON_AddStringToObject(sig, "keyId", kid);
	} else {
		cJSON_AddStringToObject(sig, "algorithm", "none");
		cJSON_AddNullToObject(sig, "keyId");
	}
	out = cJSON_Print(root);
	cJSON_Delete(root);
	return out;
}

/* --- text --------------------------------------------------------------- */

static void text_strs(FILE *f, const struct cpol_strs *s)
{
	uint32_t i;

	for (i = 0; i < s->n; i++)
		fprintf(f, "%s%s", i ? " " : "", s->v[i]);
	if (s->n == 0)
		fputs("-", f);
}

/* unnamed: what an unnamed spec is called ("items", "returns"). */
static void text_param(FILE *f, const struct cpol_policy *p, const struct cpol_param *prm, const char *unnamed,
		       int indent)
{
	uint32_t i;

	fprintf(f, "%*s%s: %s%s", indent, "", prm->name[0] ? prm->name : unnamed, policy_type_name(prm->type),
		(prm->flags & CPOL_PRM_F_REQUIRED) ? " required" : "");
	if (prm->flags & CPOL_PRM_F_MIN_LENGTH)
		fprintf(f, " min_length=%" PRIu64, prm->min_length);
	if (prm->flags & CPOL_PRM_F_MAX_LENGTH)
		fprintf(f, " max_length=%" PRIu64, prm->max_length);
	if (prm->type == CPOL_T_INTEGER && (prm->flags & CPOL_PRM_F_MIN))
		fprintf(f, " min=%" PRId64, prm->imin);
	if (prm->type == CPOL_T_INTEGER && (prm->flags & CPOL_PRM_F_MAX))
		fprintf(f, " max=%" PRId64, prm->imax);
	if (prm->type == CPOL_T_NUMBER && (prm->flags & CPOL_PRM_F_MIN))
		fprintf(f, " min=%.17g", prm->fmin);
	if (prm->type == CPOL_T_NUMBER && (prm->flags & CPOL_PRM_F_MAX))
		fprintf(f, " max=%.17g", prm->fmax);
	if (prm->flags & CPOL_PRM_F_MAX_ITEMS)
		fprintf(f, " max_items=%" PRIu64, prm->max_items);
	if (prm->enums.n > 0) {
		fputs(" enum=[", f);
		for (i = 0; i < prm->enums.n; i++)
			fprintf(f, "%s%s", i ? "," : "", prm->enums.v[i]);
		fputs("]", f);
	}
	fputc('\n', f);
	if (prm->type == CPOL_T_ARRAY && prm->items != CPOL_NONE)
		text_param(f, p, &p->params[prm->items], "items", indent + 2);
	for (i = 0; prm->type == CPOL_T_OBJECT && i < prm->props.count; i++)
		text_param(f, p, &p->params[prm->props.first + i], "items", indent + 2);
}

/* An agent's session limits (3.6), on the line under its tools. */
static void text_session(FILE *f, const struct cpol_session *s)
{
	char idle[32], life[32], cpu[32], ws[32];

	if (!(s->flags & CPOL_AGT_F_SESSION))
		return;
	units_format_duration(s->idle_ms, idle, sizeof(idle));
	units_format_duration(s->life_ms, life, sizeof(life));
	units_format_duration(s->cpu_ms, cpu, sizeof(cpu));
	units_format_size(s->ws_bytes, ws, sizeof(ws));
	fprintf(f, "    session: idle %s, lifetime %s, %u cells, cpu %s, workspace %s\n", idle, life, s->max_cells,
		cpu, ws);
}

static void text_provenance(FILE *f, const struct cpol_provenance *v)
{
	char hex[65];

	if (!v->has) {
		fprintf(f, "\nprovenance: none (format older than 3.5)\n");
		return;
	}
	fprintf(f, "\nprovenance: %u source files\n", v->nsources);
	for (uint32_t i = 0; i < v->nsources; i++) {
		sodium_bin2hex(hex, sizeof(hex), v->sources[i].sha256, 32);
		fprintf(f, "  %-10s %s  %s\n", policy_src_role_name(v->sources[i].role), hex, v->sources[i].name);
	}
	fprintf(f, "  lint (catalogue %s): %u error%s, %u warning%s, %u note%s; %u suppressed", v->catalogue,
		v->errors, v->errors == 1 ? "" : "s", v->warnings, v->warnings == 1 ? "" : "s", v->notes,
		v->notes == 1 ? "" : "s", v->suppressed);
	for (uint32_t i = 0; i < v->rules.n; i++)
		fprintf(f, "%s%s", i ? " " : " (", v->rules.v[i]);
	fprintf(f, "%s\n", v->rules.n ? ")" : "");
}

void inspect_text(FILE *f, const char *name, const struct cpol_policy *p, const uint8_t *buf, size_t len)
{
	const struct cpol_limits *l = &p->limits;
	const struct cpol_executor *e = &p->exec;
	char hex[65], a[32], b[32], kid[2 * KEY_ID_BYTES + 1];
	uint32_t i, j;

	sodium_bin2hex(hex, sizeof(hex), p->sha256, 32);
	fprintf(f, "%s: cordon policy, format %u.%u, arch %s, %zu bytes\n", name, p->major, p->minor,
		arch_name(p->arch), len);
	fprintf(f, "sha256:    %s\n", hex);
	if (p->signature.algo == CPOL_SIG_ED25519) {
		key_id_hex(p->signature.keyid, kid);
		fprintf(f, "signature: ed25519, key %s\n", kid);
	} else {
		fprintf(f, "signature: none\n");
	}

	fprintf(f, "\nsections:\n  %2s %-12s %8s %8s %6s\n", "id", "name", "offset", "size", "count");
	for (i = 0; i < rd32(buf + CPOL_HDR_SECTION_COUNT); i++) {
		const uint8_t *ent = buf + CPOL_HEADER_SIZE + i * CPOL_SEC_ENT_BYTES;
		uint32_t id = rd32(ent + CPOL_SEC_ENT_ID);

		fprintf(f, "  %2u %-12s %8" PRIu64 " %8" PRIu64 " %6u\n", id, policy_section_name(id),
			rd64(ent + CPOL_SEC_ENT_OFFSET), rd64(ent + CPOL_SEC_ENT_SIZE), rd32(ent + CPOL_SEC_ENT_COUNT));
	}

	fprintf(f, "\nmeta:\n  app %s (descriptor version %u, inventory version %u)\n", p->meta.app,
		p->meta.descriptor_version, p->meta.inventory_version);

	fprintf(f, "\nlimits:\n  mode %s\n", policy_mode_name(l->mode));
	units_format_duration(l->timeout_ms, a, sizeof(a));
	fprintf(f, "  timeout %s\n", a);
	units_format_size(l->max_file_bytes, a, sizeof(a));
	fprintf(f, "  max_file_bytes %s\n", a);
	units_format_size(l->ws_delta_bytes, a, sizeof(a));
	fprintf(f, "  max_exec_workspace_delta_bytes %s\n", a);
	if (l->ws_max_bytes != 0) {
		units_format_size(l->ws_max_bytes, a, sizeof(a));
		fprintf(f, "  max_exec_workspace_bytes %s\n", a);
	} else {
		fprintf(f, "  max_exec_workspace_bytes unset\n");
	}
	fprintf(f, "  max_exec_workspace_entries %u\n", l->ws_entries);
	units_format_duration(l->monitor_ms, a, sizeof(a));
	fprintf(f, "  workspace_monitor_interval %s\n", a);
	units_format_size(l->max_output_bytes, a, sizeof(a));
	units_format_size(l->max_result_bytes, b, sizeof(b));
	fprintf(f, "  max_output_bytes %s, max_result_bytes %s\n", a, b);
	units_format_size(l->max_code_bytes, a, sizeof(a));
	units_format_size(l->max_tool_request_bytes, b, sizeof(b));
	fprintf(f, "  max_code_bytes %s, max_tool_request_bytes %s\n", a, b);
	units_format_size(l->memory_bytes, a, sizeof(a));
	fprintf(f, "  memory %s, pids %u, open_files %u\n", a, l->pids, l->open_files);
	if (l->cpu_milli != 0)
		fprintf(f, "  cpu %u.%03u CPUs (cgroup quota)\n", l->cpu_milli / 1000, l->cpu_milli % 1000);
	else
		fprintf(f, "  cpu unlimited (no quota)\n");

	fprintf(f, "\nexecutor:\n  interpreter %s\n  uid %u, gid %u\n  network %s\n  landlock %s\n",
		e->interpreter, e->uid, e->gid, policy_network_name(e->network),
		(e->flags & CPOL_EXE_F_LANDLOCK) ? "on" : "off");
	fprintf(f, "  require%s%s%s\n", e->require ? "" : " -", (e->require & CPOL_LAYER_LANDLOCK) ? " landlock" : "",
		(e->require & CPOL_LAYER_CGROUP) ? " cgroup" : "");
	fprintf(f, "  preload%s", e->npreload ? "" : " -");
	for (i = 0; i < e->npreload; i++)
		fprintf(f, " %s", e->preload[i]);
	fputc('\n', f);
	/* Only when declared, so the text of a blob without them is as before. */
	if (e->npackages > 0) {
		fprintf(f, "  packages");
		for (i = 0; i < e->npackages; i++)
			fprintf(f, " %s", e->packages[i]);
		fputc('\n', f);
	}

	fprintf(f, "\nenv: %u\n", p->nenv);
	for (i = 0; i < p->nenv; i++)
		fprintf(f, "  %s=%s\n", p->env[i].key, p->env[i].value);

	fprintf(f, "\nmounts: %u\n", p->nmounts);
	for (i = 0; i < p->nmounts; i++) {
		const struct cpol_mount *m = &p->mounts[i];

		if (m->type == CPOL_MOUNT_TMPFS) {
			units_format_size(m->size, a, sizeof(a));
			fprintf(f, "  tmpfs %s size %s\n", m->target, a);
		} else {
			fprintf(f, "  bind  %s <- %s %s\n", m->target, m->source,
				(m->flags & CPOL_MNT_F_RW) ? "rw" : "ro");
		}
	}

	fprintf(f, "\nseccomp: %u instructions (profile %s%s%s)\n", p->nseccomp,
		e->seccomp_profile[0] ? e->seccomp_profile : "-", e->seccomp_extra[0] ? ", extra " : "",
		e->seccomp_extra);
	if (p->nseccomp == 0)
		fprintf(f, "  no filter in this blob\n");
	else
		bpf_disasm(f, p->seccomp, p->nseccomp);

	fprintf(f, "\ntools: %u\n", p->ntools);
	for (i = 0; i < p->ntools; i++) {
		const struct cpol_tool *t = &p->tools[i];

		units_format_duration(t->timeout_ms, a, sizeof(a));
		fprintf(f, "  %s%s%s, timeout %s, ", t->id, (t->flags & CPOL_TOOL_F_SIDE_EFFECT) ? ", side effect" : "",
			(t->flags & CPOL_TOOL_F_REPLAY) ? " (replay recorded)" : "", a);
		if (t->max_calls)
			fprintf(f, "max_calls %u", t->max_calls);
		else
			fprintf(f, "no call budget");
		if (t->max_calls_per_day)
			fprintf(f, ", max_calls_per_day %u\n", t->max_calls_per_day);
		else
			fprintf(f, ", no daily budget\n");
		units_format_size(t->memory_bytes, a, sizeof(a));
		fprintf(f, "    %s\n    run_as: ", t->description);
		if (t->run_as == CPOL_RUN_AS_USER)
			fprintf(f, "user %s", t->run_user);
		else if (t->run_as == CPOL_RUN_AS_IDS)
			fprintf(f, "uid %u gid %u", t->run_uid, t->run_gid);
		else
			fputs(policy_run_as_name(t->run_as), f);
		fprintf(f, ", memory %s, pids %u\n    exec: ", a, t->pids);
		text_strs(f, &t->exec);
		fputs("\n    env_from: ", f);
		text_strs(f, &t->env_from);
		fputs("\n    roles: ", f);
		if (t->roles.n == 0)
			fputs("any role of an agent that lists it", f);
		else
			text_strs(f, &t->roles);
		fprintf(f, "\n    params: %u\n", t->params.count);
		for (j = 0; j < t->params.count; j++)
			text_param(f, p, &p->params[t->params.first + j], "items", 6);
		if (policy_tool_returns(p, i) != NULL)
			text_param(f, p, policy_tool_returns(p, i), "returns", 4);
		else
			fputs("    returns: -\n", f);
	}

	fprintf(f, "\nagents: %u\n", p->nagents);
	for (i = 0; i < p->nagents; i++) {
		fprintf(f, "  %s:", p->agents[i].name);
		for (j = 0; j < p->agents[i].ntools; j++)
			fprintf(f, " %s", p->tools[p->agents[i].tools[j]].id);
		fputc('\n', f);
		text_session(f, &p->agents[i].session);
	}

	fprintf(f, "\noutputs: %u\n", p->noutputs);
	for (i = 0; i < p->noutputs; i++) {
		units_format_size(p->outputs[i].max_bytes, a, sizeof(a));
		fprintf(f, "  %s max %s%s\n", p->outputs[i].path, a,
			(p->outputs[i].flags & CPOL_OUT_F_REQUIRED) ? " required" : "");
	}
	fprintf(f, "\nconstraints: %u instructions of verified bytecode\n", p->nconstraints);
	for (i = 0; i < p->ntools; i++)
		if (p->tools[i].constraints.count > 0)
			fprintf(f, "  %s: %u constraint%s, %u instructions\n", p->tools[i].id, constraint_count(p, i),
				constraint_count(p, i) == 1 ? "" : "s", p->tools[i].constraints.count);
	text_provenance(f, &p->prov);
}
