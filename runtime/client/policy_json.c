/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy_json.c - see policy_json.h.
 */
#include <inttypes.h>
#include <stdio.h>

#include "runtime/client/policy_json.h"

cJSON *policy_json_u64(uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return cJSON_CreateRaw(buf);
}

cJSON *policy_json_i64(int64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	return cJSON_CreateRaw(buf);
}

cJSON *policy_json_strs(const struct cpol_strs *s)
{
	cJSON *a = cJSON_CreateArray();
	uint32_t i;

	for (i = 0; a != NULL && i < s->n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(s->v[i]));
	return a;
}

cJSON *policy_json_params(const struct cpol_policy *p, struct cpol_range r, policy_json_param_hook hook)
{
	cJSON *o = cJSON_CreateObject();
	uint32_t i;

	for (i = 0; o != NULL && i < r.count; i++) {
		const struct cpol_param *c = &p->params[r.first + i];

		cJSON_AddItemToObject(o, c->name, policy_json_param(p, c, hook));
	}
	return o;
}

cJSON *policy_json_param(const struct cpol_policy *p, const struct cpol_param *prm, policy_json_param_hook hook)
{
	cJSON *o = cJSON_CreateObject();

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "type", policy_type_name(prm->type));
	cJSON_AddBoolToObject(o, "required", (prm->flags & CPOL_PRM_F_REQUIRED) != 0);
	if (prm->flags & CPOL_PRM_F_MIN_LENGTH)
		cJSON_AddItemToObject(o, "minLength", policy_json_u64(prm->min_length));
	if (prm->flags & CPOL_PRM_F_MAX_LENGTH)
		cJSON_AddItemToObject(o, "maxLength", policy_json_u64(prm->max_length));
	if (prm->enums.n > 0)
		cJSON_AddItemToObject(o, "enum", policy_json_strs(&prm->enums));
	if (prm->type == CPOL_T_INTEGER) {
		if (prm->flags & CPOL_PRM_F_MIN)
			cJSON_AddItemToObject(o, "min", policy_json_i64(prm->imin));
		if (prm->flags & CPOL_PRM_F_MAX)
			cJSON_AddItemToObject(o, "max", policy_json_i64(prm->imax));
	} else if (prm->type == CPOL_T_NUMBER) {
		if (prm->flags & CPOL_PRM_F_MIN)
			cJSON_AddNumberToObject(o, "min", prm->fmin);
		if (prm->flags & CPOL_PRM_F_MAX)
			cJSON_AddNumberToObject(o, "max", prm->fmax);
	}
	if (prm->flags & CPOL_PRM_F_MAX_ITEMS)
		cJSON_AddItemToObject(o, "maxItems", policy_json_u64(prm->max_items));
	if (prm->type == CPOL_T_ARRAY && prm->items != CPOL_NONE)
		cJSON_AddItemToObject(o, "items", policy_json_param(p, &p->params[prm->items], hook));
	if (prm->type == CPOL_T_OBJECT)
		cJSON_AddItemToObject(o, "properties", policy_json_params(p, prm->props, hook));
	if (hook != NULL)
		hook(o, p, prm);
	return o;
}
