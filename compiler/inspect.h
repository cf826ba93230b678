/* SPDX-License-Identifier: Apache-2.0 */
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

#endif
