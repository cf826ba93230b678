/*
 * inspect.h - show a loaded blob: text for people, JSON for programs.
 */
#ifndef CORDON_INSPECT_H
#define CORDON_INSPECT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "cordon/policy.h"

/* buf is the blob p was loaded from (its section table is shown). */
void inspect_text(FILE *f, const char *name, const struct cpol_policy *p, const uint8_t *buf, size_t len);
/* Malloc'd JSON text (free with cJSON_free / free), or NULL. */
char *inspect_json(const struct cpol_policy *p, const uint8_t *buf, size_t len);

/* The pieces describe.c shares, so `describe --json` shows a signature
 * and a limit exactly as `inspect --json` does (test_describe compares
 * them).  64-bit values are written exactly (a double would round them). */
cJSON *inspect_json_u64(uint64_t v);
cJSON *inspect_json_i64(int64_t v);
/* A hook adds fields of its own to each param's object, nested ones too. */
typedef void (*inspect_param_hook)(cJSON *o, const struct cpol_policy *p, const struct cpol_param *prm);
cJSON *inspect_json_param(const struct cpol_policy *p, const struct cpol_param *prm, inspect_param_hook hook);
cJSON *inspect_json_params(const struct cpol_policy *p, struct cpol_range r, inspect_param_hook hook);

#endif
