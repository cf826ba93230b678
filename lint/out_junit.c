/* SPDX-License-Identifier: Apache-2.0 */
/*
 * out_junit.c - findings as JUnit XML, for the test-report views of
 * Jenkins, GitLab (artifacts:reports:junit), Azure Pipelines and the
 * GitHub test-report actions.
 *
 * One <testsuite> ("cordonc lint") with a <testcase> for each finding and
 * one for each rule that ran and found nothing.  A test case a finding is
 * what those views show best: they list failed test cases by name with
 * their message and group them by classname, so each finding is one line
 * there, named by rule and place, grouped by file (classname is the
 * file's path).  A test case a rule would fold a rule's findings into one
 * entry, and GitLab shows only the first <failure> of a case.  The passing
 * rule cases keep a clean run from being an empty suite, which Jenkins'
 * junit step and GitLab report as "no tests".
 *
 * A finding at or above the fail level has a <failure>; one below it
 * passes, its message in <system-out>; a suppressed one is <skipped> with
 * the reason; baselined ones are left out.  The shape is the Jenkins/Ant
 * junit-4 schema (tests/lint/fixtures/junit.xsd).
 */
#include <string.h>

#include "lint/out.h"

static void put_case_open(FILE *out, const char *classname, const char *name)
{
	fputs("    <testcase classname=\"", out);
	lint_xml_put(out, classname);
	fputs("\" name=\"", out);
	lint_xml_put(out, name);
	fputs("\"", out);
}

static int rule_has_findings(const struct lint_ctx *c, const struct lint_rule *r)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->v[i].rule == r && c->v[i].state != LINT_BASELINED)
			return 1;
	return 0;
}

static void put_finding(FILE *out, const struct lint_finding *f, enum lint_sev fail_level)
{
	char name[160];
	const char *path = lint_finding_path(f);

	snprintf(name, sizeof(name), "%s %s at %u:%u", f->rule->id, f->rule->name, (unsigned)f->pos.line,
		 (unsigned)f->pos.col);
	put_case_open(out, path, name);
	fputs(">\n", out);
	if (f->state == LINT_SUPPRESSED) {
		fputs("      <skipped>suppressed: ", out);
		lint_xml_put(out, f->reason != NULL ? f->reason : "");
		fputs("</skipped>\n", out);
	} else {
		const char *el = f->sev >= fail_level ? "failure" : "system-out";

		fprintf(out, "      <%s", el);
		if (f->sev >= fail_level) {
			fprintf(out, " type=\"%s\" message=\"", lint_sev_name(f->sev));
			lint_xml_put(out, f->msg);
			fprintf(out, " [%s]\"", f->rule->id);
		}
		fprintf(out, ">%s:%u:%u: %s: ", path, (unsigned)f->pos.line, (unsigned)f->pos.col, lint_sev_name(f->sev));
		lint_xml_put(out, f->msg);
		fprintf(out, " [%s]&#10;hint: ", f->rule->id);
		lint_xml_put(out, f->rule->hint);
		fprintf(out, "</%s>\n", el);
	}
	fputs("    </testcase>\n", out);
}

int lint_print_junit(FILE *out, const struct lint_ctx *c, const struct lint_summary *s)
{
	const struct lint_rule *cat = NULL;
	size_t ncat = 0, i, tests = 0, failures = 0, skipped = 0;

	cat = lint_catalogue(&ncat);
	for (i = 0; i < ncat; i++)
		if (lint_rule_sev(c->opt, &cat[i]) != LINT_OFF && !rule_has_findings(c, &cat[i]))
			tests++;
	for (i = 0; i < c->n; i++) {
		const struct lint_finding *f = &c->v[i];

		if (f->state == LINT_BASELINED)
			continue;
		tests++;
		if (f->state == LINT_SUPPRESSED)
			skipped++;
		else if (f->sev >= s->fail_level)
			failures++;
	}
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
	fprintf(out, "<testsuites name=\"cordonc lint\" tests=\"%zu\" failures=\"%zu\" errors=\"0\">\n", tests, failures);
	fprintf(out, "  <testsuite name=\"cordonc lint\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\">\n",
		tests, failures, skipped);
	for (i = 0; i < c->n; i++)
		if (c->v[i].state != LINT_BASELINED)
			put_finding(out, &c->v[i], s->fail_level);
	for (i = 0; i < ncat; i++) {
		char name[160];

		if (lint_rule_sev(c->opt, &cat[i]) == LINT_OFF || rule_has_findings(c, &cat[i]))
			continue;
		snprintf(name, sizeof(name), "%s %s", cat[i].id, cat[i].name);
		put_case_open(out, "cordon.rules", name);
		fputs("/>\n", out);
	}
	fputs("  </testsuite>\n</testsuites>\n", out);
	return ferror(out) ? -1 : 0;
}
