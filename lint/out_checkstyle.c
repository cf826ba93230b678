/* SPDX-License-Identifier: Apache-2.0 */
/*
 * out_checkstyle.c - findings as checkstyle XML, the report format that
 * Jenkins' warnings-ng, reviewdog, SonarQube and many editors read:
 *
 *     <checkstyle version="4.3">
 *       <file name="app.yaml">
 *         <error line="22" column="19" severity="error" message="..." source="cordon.CDN303"/>
 *       </file>
 *     </checkstyle>
 *
 * One <file> for each input that has active findings, in the order of the
 * findings (they come sorted by file).  Severity is checkstyle's own word:
 * error, warning, info.  Suppressed and baselined findings are left out,
 * as in the text output.  tests/lint/fixtures/checkstyle.xsd is the shape.
 */
#include <string.h>

#include "lint/out.h"

static const char *severity(enum lint_sev s)
{
	return s == LINT_ERROR ? "error" : s == LINT_WARNING ? "warning" : "info";
}

int lint_print_checkstyle(FILE *out, const struct lint_ctx *c, const struct lint_summary *s)
{
	const char *open = NULL;
	size_t i;

	(void)s;
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<checkstyle version=\"4.3\">\n", out);
	for (i = 0; i < c->n; i++) {
		const struct lint_finding *f = &c->v[i];
		const char *path = lint_finding_path(f);

		if (f->state != LINT_ACTIVE)
			continue;
		if (open == NULL || strcmp(open, path) != 0) {
			if (open != NULL)
				fputs("  </file>\n", out);
			fputs("  <file name=\"", out);
			lint_xml_put(out, path);
			fputs("\">\n", out);
			open = path;
		}
		fprintf(out, "    <error line=\"%u\" column=\"%u\" severity=\"%s\" message=\"", (unsigned)f->pos.line,
			(unsigned)f->pos.col, severity(f->sev));
		lint_xml_put(out, f->msg);
		fprintf(out, " [%s]\" source=\"cordon.%s.%s\"/>\n", f->rule->id, f->rule->id, f->rule->name);
	}
	if (open != NULL)
		fputs("  </file>\n", out);
	fputs("</checkstyle>\n", out);
	return ferror(out) ? -1 : 0;
}
