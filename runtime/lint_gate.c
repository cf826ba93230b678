/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lint_gate.c - see lint_gate.h.  The verdict is the compiler's, recorded
 * in the blob and covered by its hash and signature; the runtime only reads
 * the counts (it never parses YAML or runs the catalogue itself).
 */
#include <stdio.h>
#include <string.h>

#include "runtime/lint_gate.h"

int lint_gate_parse(const char *s, enum lint_gate_level *out)
{
	if (s == NULL || strcmp(s, "error") == 0)
		*out = LINT_GATE_ERROR;
	else if (strcmp(s, "warning") == 0)
		*out = LINT_GATE_WARNING;
	else if (strcmp(s, "note") == 0)
		*out = LINT_GATE_NOTE;
	else
		return -1;
	return 0;
}

int lint_gate_check(const struct cpol_policy *p, enum lint_gate_level level, char *err, size_t errlen)
{
	const struct cpol_provenance *v = &p->prov;
	static const char *const names[] = { "note", "warning", "error" };
	uint32_t bad;

	if (level == LINT_GATE_OFF)
		return 0;
	/* No verdict is not a clean verdict: a blob from before 3.5, or one
	 * written without a compile, was never linted as far as we know. */
	if (!v->has) {
		snprintf(err, errlen,
			 "--require-lint-clean: the policy records no lint verdict (format %u.%u; cordonc records "
			 "one from format 3.5): compile it again",
			 p->major, p->minor);
		return -1;
	}
	bad = v->errors + (level <= LINT_GATE_WARNING ? v->warnings : 0) + (level <= LINT_GATE_NOTE ? v->notes : 0);
	if (bad == 0)
		return 0;
	snprintf(err, errlen,
		 "--require-lint-clean%s%s: the policy's recorded lint verdict (catalogue %s) has %u error%s, "
		 "%u warning%s and %u note%s; fix them ('cordonc lint') and compile again",
		 level == LINT_GATE_ERROR ? "" : "=", level == LINT_GATE_ERROR ? "" : names[level], v->catalogue,
		 v->errors, v->errors == 1 ? "" : "s", v->warnings, v->warnings == 1 ? "" : "s", v->notes,
		 v->notes == 1 ? "" : "s");
	return -1;
}
