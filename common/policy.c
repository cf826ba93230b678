/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy.c - life cycle and names for the decoded policy (policy.h).
 */
#include <string.h>

#include "cordon/policy.h"

void policy_init(struct cpol_policy *p)
{
	memset(p, 0, sizeof(*p));
	arena_init(&p->arena);
}

void policy_free(struct cpol_policy *p)
{
	arena_free(&p->arena);
	memset(p, 0, sizeof(*p));
}

const char *policy_type_name(uint32_t type)
{
	switch (type) {
	case CPOL_T_STRING: return "string";
	case CPOL_T_INTEGER: return "integer";
	case CPOL_T_NUMBER: return "number";
	case CPOL_T_BOOLEAN: return "boolean";
	case CPOL_T_ARRAY: return "array";
	case CPOL_T_OBJECT: return "object";
	}
	return "?";
}

const char *policy_mode_name(uint32_t mode)
{
	switch (mode) {
	case CPOL_MODE_ISOLATED: return "isolated";
	case CPOL_MODE_LOCAL: return "local";
	}
	return "?";
}

const char *policy_network_name(uint32_t net)
{
	switch (net) {
	case CPOL_NET_NONE: return "none";
	case CPOL_NET_LOOPBACK: return "loopback";
	}
	return "?";
}

const char *policy_mount_type_name(uint32_t type)
{
	switch (type) {
	case CPOL_MOUNT_BIND: return "bind";
	case CPOL_MOUNT_TMPFS: return "tmpfs";
	}
	return "?";
}

const char *policy_run_as_name(uint32_t run_as)
{
	switch (run_as) {
	case CPOL_RUN_AS_DEDICATED: return "dedicated";
	case CPOL_RUN_AS_SUPERVISOR: return "supervisor";
	case CPOL_RUN_AS_USER: return "user";
	case CPOL_RUN_AS_IDS: return "ids";
	}
	return "?";
}

const char *policy_section_name(uint32_t id)
{
	static const char *const names[CPOL_SEC_MAX_ID + 1] = {
		"?",      "strtab", "strlist", "idxlist",     "meta",   "limits",  "executor",  "env",
		"mounts", "seccomp", "tools",  "params", "constraints", "agents", "outputs", "signature",
		"sources", "lint",
	};

	return id <= CPOL_SEC_MAX_ID ? names[id] : "?";
}

uint32_t policy_section_at(uint32_t nsec, uint32_t i)
{
	/* 3.5 put its sections before SIGNATURE so that the hash, which
	 * stops at the signature, covers them. */
	static const uint32_t prov[CPOL_SEC_COUNT_PROV] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 16, 17, 15 };

	if (nsec == CPOL_SEC_COUNT_PROV && i < CPOL_SEC_COUNT_PROV)
		return prov[i];
	return i + 1;
}

const char *policy_src_role_name(uint32_t role)
{
	switch (role) {
	case CPOL_SRC_DESCRIPTOR: return "descriptor";
	case CPOL_SRC_INVENTORY: return "inventory";
	case CPOL_SRC_POLICY: return "policy";
	}
	return "?";
}

static int policy_ident_start(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

int policy_module_name_ok(const char *s)
{
	size_t n = strlen(s);
	int at_start = 1; /* the next byte begins a component */

	if (n == 0 || n > CPOL_PRELOAD_NAME_MAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (at_start) {
			if (!policy_ident_start(c))
				return 0;
			at_start = 0;
		} else if (c == '.') {
			at_start = 1;
		} else if (!policy_ident_start(c) && !(c >= '0' && c <= '9')) {
			return 0;
		}
	}
	return !at_start; /* no trailing '.' */
}

int policy_input_name_ok(const char *s)
{
	static const char *const reserved[] = { ".", "..", "main.py", "user_code.py" };

	if (s[0] == '\0' || strlen(s) > 255 || strchr(s, '/') != NULL)
		return 0;
	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (strcmp(s, reserved[i]) == 0)
			return 0;
	return 1;
}

uint32_t policy_find_tool(const struct cpol_policy *p, const char *id)
{
	uint32_t lo = 0, hi = p->ntools;

	/* Tools are sorted by id (emit writes them so, the loader checks). */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = strcmp(p->tools[mid].id, id);

		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return CPOL_NONE;
}

const struct cpol_param *policy_tool_returns(const struct cpol_policy *p, uint32_t t)
{
	uint32_t r;

	if (p == NULL || t >= p->ntools)
		return NULL;
	r = p->tools[t].returns;
	if (r == 0 || r - 1 >= p->nparams)
		return NULL;
	return &p->params[r - 1];
}

const struct cpol_agent *policy_find_agent(const struct cpol_policy *p, const char *name)
{
	/* A handful of agents a policy: a scan is the simple, sufficient
	 * lookup (the loader checks names are unique, not their order). */
	for (uint32_t i = 0; i < p->nagents; i++)
		if (strcmp(p->agents[i].name, name) == 0)
			return &p->agents[i];
	return NULL;
}
