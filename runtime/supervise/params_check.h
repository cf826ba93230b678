/* SPDX-License-Identifier: Apache-2.0 */
/*
 * params_check.h - a call's params against its tool's signature in the
 * blob (docs/params.md): unknown, missing, mistyped, out-of-range and
 * over-long values are refused, each with the path of the value and the
 * reason, before any constraint runs.  The rules, their order and the
 * message format are in docs/params.md.
 *
 * One violation is reported: the first in document order, with the
 * required names of an object judged after its members.  The walk is as
 * deep as the signature (at most CPOL_MAX_PARAM_DEPTH), descends into each
 * element of params at most once, and per object does name lookups bounded
 * by the names the signature declares there; it allocates nothing.
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

/* Returns 1 when params fit tool `tool`'s signature (res->verdict
 * PARAMS_OK), 0 with res filled.  params NULL is NOT_OBJECT; a tool index
 * outside p, or a signature broken in memory, refuses the call (UNKNOWN,
 * MISTYPED) instead of being followed.  res may be NULL when only the
 * answer is wanted.  Caller text in path and msg is escaped and cut, so
 * both are one line of UTF-8. */
int params_check(const struct cpol_policy *p, uint32_t tool, const cJSON *params, struct params_result *res);

/* A tool's answer against its `returns:` spec (docs/params.md, "Results"),
 * by the same rules and walk as params.  Returns 1 when the tool declares
 * no result spec or the answer fits it, 0 with res filled: the path starts
 * at "result" ("result", "result.rows[1].k", "result[0]").  A tool index
 * outside p refuses (UNKNOWN).  res may be NULL. */
int params_check_result(const struct cpol_policy *p, uint32_t tool, const cJSON *result, struct params_result *res);

/* "ok", "not_object", "unknown", "missing", "mistyped", "out_of_range", "too_long", "too_short". */
const char *params_verdict_name(enum params_verdict v);

#endif
