/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_provenance.c - the names compile records sources under
 * (lint/provenance.c) and the --require-lint-clean gate
 * (runtime/lint_gate.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lint/provenance.h"
#include "runtime/lint_gate.h"

static char root[] = "/tmp/cordon-prov-XXXXXX";

static void touch(const char *rel)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	f = fopen(p, "w");
	assert_non_null(f);
	fclose(f);
}

static void dir(const char *rel)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

static void expect_name(const char *app, const char *path, int role, const char *want)
{
	char a[512], f[512], *got;

	snprintf(a, sizeof(a), "%s/%s", root, app);
	snprintf(f, sizeof(f), "%s/%s", root, path);
	got = provenance_name(a, f, role);
	assert_non_null(got);
	if (strcmp(got, want) != 0)
		fail_msg("%s from %s: got %s, want %s", path, app, got, want);
	free(got);
}

/* Relative to the descriptor's directory, through links and `..`; a
 * policy file outside it by base name. */
static void test_names(void **state)
{
	char link[512], target[512], a[512];

	(void)state;
	assert_non_null(mkdtemp(root));
	dir("app");
	dir("app/tools");
	dir("shared");
	dir("pol");
	dir("appx");
	touch("app/app.yaml");
	touch("app/tools.yaml");
	touch("app/tools/b.yaml");
	touch("shared/c.yaml");
	touch("pol/base.policy");
	touch("app/extra.policy");
	touch("appx/d.yaml");
	expect_name("app/app.yaml", "app/app.yaml", CPOL_SRC_DESCRIPTOR, "app.yaml");
	expect_name("app/app.yaml", "app/tools.yaml", CPOL_SRC_INVENTORY, "tools.yaml");
	expect_name("app/app.yaml", "app/tools/b.yaml", CPOL_SRC_INVENTORY, "tools/b.yaml");
	expect_name("app/app.yaml", "app/./tools/../tools.yaml", CPOL_SRC_INVENTORY, "tools.yaml");
	expect_name("app/app.yaml", "shared/c.yaml", CPOL_SRC_INVENTORY, "../shared/c.yaml");
	/* "appx" shares a prefix with "app" but is another directory. */
	expect_name("app/app.yaml", "appx/d.yaml", CPOL_SRC_INVENTORY, "../appx/d.yaml");
	expect_name("app/tools/../app.yaml", "shared/c.yaml", CPOL_SRC_INVENTORY, "../shared/c.yaml");
	expect_name("app/app.yaml", "pol/base.policy", CPOL_SRC_POLICY, "base.policy");
	expect_name("app/app.yaml", "app/extra.policy", CPOL_SRC_POLICY, "extra.policy");
	/* A link to the descriptor's directory: resolved, the same names. */
	snprintf(link, sizeof(link), "%s/lnk", root);
	snprintf(target, sizeof(target), "%s/app", root);
	assert_int_equal(symlink(target, link), 0);
	expect_name("lnk/app.yaml", "app/tools/b.yaml", CPOL_SRC_INVENTORY, "tools/b.yaml");
	snprintf(a, sizeof(a), "%s/app/app.yaml", root);
	assert_null(provenance_name(a, "/nonexistent/x.yaml", CPOL_SRC_INVENTORY));
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		assert_int_equal(system(cmd), 0);
	}
}

static void test_lint_gate(void **state)
{
	struct cpol_policy p;
	enum lint_gate_level lv;
	char err[512];

	(void)state;
	assert_int_equal(lint_gate_parse(NULL, &lv), 0);
	assert_int_equal(lv, LINT_GATE_ERROR);
	assert_int_equal(lint_gate_parse("warning", &lv), 0);
	assert_int_equal(lv, LINT_GATE_WARNING);
	assert_int_equal(lint_gate_parse("note", &lv), 0);
	assert_int_equal(lv, LINT_GATE_NOTE);
	assert_int_equal(lint_gate_parse("Error", &lv), -1);

	policy_init(&p);
	p.major = 3;
	p.minor = 4;
	assert_int_equal(lint_gate_check(&p, LINT_GATE_OFF, err, sizeof(err)), 0);
	assert_int_equal(lint_gate_check(&p, LINT_GATE_ERROR, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "records no lint verdict (format 3.4"));
	p.prov.has = 1;
	p.prov.catalogue = "7";
	p.prov.notes = 2;
	assert_int_equal(lint_gate_check(&p, LINT_GATE_ERROR, err, sizeof(err)), 0);
	assert_int_equal(lint_gate_check(&p, LINT_GATE_WARNING, err, sizeof(err)), 0);
	assert_int_equal(lint_gate_check(&p, LINT_GATE_NOTE, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--require-lint-clean=note: "));
	assert_non_null(strstr(err, "(catalogue 7) has 0 errors, 0 warnings and 2 notes"));
	p.prov.warnings = 1;
	assert_int_equal(lint_gate_check(&p, LINT_GATE_WARNING, err, sizeof(err)), -1);
	assert_int_equal(lint_gate_check(&p, LINT_GATE_ERROR, err, sizeof(err)), 0);
	p.prov.errors = 1;
	assert_int_equal(lint_gate_check(&p, LINT_GATE_ERROR, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--require-lint-clean: "));
	assert_non_null(strstr(err, "has 1 error, 1 warning and 2 notes"));
	/* Suppressed findings do not count. */
	p.prov.errors = p.prov.warnings = p.prov.notes = 0;
	p.prov.suppressed = 5;
	assert_int_equal(lint_gate_check(&p, LINT_GATE_NOTE, err, sizeof(err)), 0);
	policy_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_lint_gate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
