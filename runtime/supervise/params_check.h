/*
 * params_check.h - a call's params against its tool's signature in the
 * blob (DESIGN.md §5): unknown, missing, mistyped, out-of-range and
 * over-long values are refused, each with the path of the value and the
 * reason, before any constraint runs.
 */
#ifndef CORDON_PARAMS_CHECK_H
#define CORDON_PARAMS_CHECK_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "cordon/policy.h"

enum params_verdict {
	PARAMS_OK = 0,
	PARAMS_NOT_OBJECT,   /* params is not a JSON object */
	PARAMS_UNKNOWN,      /* a name the signature does not declare */
	PARAMS_MISSING,      /* a required name is absent */
	PARAMS_MISTYPED,     /* wrong JSON type (null included; a fraction for an integer) */
	PARAMS_OUT_OF_RANGE, /* below min / above max, not in the enum, an integer beyond ±2^53 */
	PARAMS_TOO_LONG,     /* string over max_length, array over max_items */
	PARAMS_TOO_SHORT,    /* string under min_length */
};

struct params_result {
	enum params_verdict verdict;
	char path[256]; /* where: "to", "equations[2].coefficients[0]" */
	char msg[256];  /* in words, for the caller */
};

/* Returns 1 when params fit tool `tool`'s signature, 0 with res filled. */
int params_check(const struct cpol_policy *p, uint32_t tool, const cJSON *params, struct params_result *res);

/* "ok", "not_object", "unknown", "missing", "mistyped", "out_of_range", "too_long", "too_short". */
const char *params_verdict_name(enum params_verdict v);

#endif
