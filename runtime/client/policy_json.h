/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy_json.h - pieces of a loaded policy as JSON, shared by
 * `cordonc inspect --json` and the agent description (agent_doc.h), so a
 * signature and a limit read the same in both (tests/cli/test_describe.sh
 * compares them).  64-bit values are written exactly: a double would round
 * them.
 */
#ifndef CORDON_POLICY_JSON_H
#define CORDON_POLICY_JSON_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "cordon/policy.h"

/* Raw JSON numbers; NULL when out of memory. */
cJSON *policy_json_u64(uint64_t v);
cJSON *policy_json_i64(int64_t v);
/* A string list as an array of strings. */
cJSON *policy_json_strs(const struct cpol_strs *s);

/* A parameter's signature: {"type", "required", "minLength", ..., "items",
 * "properties"}, as inspect shows it.  A hook adds fields of its own to each
 * param's object, nested ones too.  Recursion depth is bounded by the
 * loader's nesting limit. */
typedef void (*policy_json_param_hook)(cJSON *o, const struct cpol_policy *p, const struct cpol_param *prm);
cJSON *policy_json_param(const struct cpol_policy *p, const struct cpol_param *prm, policy_json_param_hook hook);
/* The run r as an object keyed by name (sorted, as in the blob). */
cJSON *policy_json_params(const struct cpol_policy *p, struct cpol_range r, policy_json_param_hook hook);

#endif
