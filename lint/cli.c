/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli.c - argument parsing and exit status of `cordonc lint` and
 * `cordonc explain` (`cordonc diff` is in diff_cli.c).  Like the commands
 * in compiler/cordonc.c, these print and choose the exit status; the
 * library code under lint/ does neither.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compiler/sign.h"
#include "lint/baseline.h"
#include "lint/cli.h"
#include "lint/out.h"

#define EXIT_FINDINGS 1
#define EXIT_USAGE 2
#define MAX_OVERRIDES 64
#define MAX_DIRS 16

static int usage(const char *cmd, const char *msg)
{
	fprintf(stderr, "cordonc %s: %s\nTry 'cordonc %s --help'.\n", cmd, msg, cmd);
	return EXIT_USAGE;
}

static int explain_one(const char *id)
{
	const struct lint_rule *r = lint_rule_find(id);

	if (r == NULL) {
		fprintf(stderr, "cordonc explain: unknown rule '%s' (see 'cordonc explain --all')\n", id);
		return EXIT_USAGE;
	}
	lint_explain_text(stdout, r);
	return 0;
}

struct lint_args {
	const char *format, *baseline, *write_baseline, *output;
	enum lint_sev fail_level;
	struct lint_override ov[MAX_OVERRIDES];
	size_t nov;
	const char *dirs[MAX_DIRS];
	size_t ndirs;
	int no_inline;
};

static int parse_override(struct lint_args *a, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char id[16];
	const struct lint_rule *r;

	if (eq == NULL || (size_t)(eq - arg) >= sizeof(id) || a->nov == MAX_OVERRIDES)
		return -1;
	memcpy(id, arg, (size_t)(eq - arg));
	id[eq - arg] = '\0';
	if ((r = lint_rule_find(id)) == NULL || lint_sev_parse(eq + 1, &a->ov[a->nov].sev) != 0)
		return -1;
	a->ov[a->nov++].id = r->id;
	return 0;
}

/* Write the report to memory first, so -o FILE is replaced atomically and
 * never left half-written. */
static int emit(const struct lint_args *a, const struct lint_ctx *c, const struct lint_summary *s)
{
	char *buf = NULL, err[512];
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int rc = -1;

	if (m == NULL)
		return -1;
	if (strcmp(a->format, "json") == 0)
		rc = lint_print_json(m, c, s);
	else if (strcmp(a->format, "sarif") == 0)
		rc = lint_print_sarif(m, c, s);
	else {
		lint_print_text(m, c, s);
		rc = 0;
	}
	if (fclose(m) != 0)
		rc = -1;
	if (rc == 0) {
		if (a->output != NULL) {
			if (outfile_write_atomic(a->output, (const uint8_t *)buf, len, 0644, err, sizeof(err)) != 0) {
				fprintf(stderr, "cordonc lint: %s\n", err);
				rc = -1;
			}
		} else if (fwrite(buf, 1, len, stdout) != len || fflush(stdout) != 0) {
			rc = -1;
		}
	} else {
		fprintf(stderr, "cordonc lint: out of memory writing the report\n");
	}
	free(buf);
	return rc;
}

int lint_cmd_lint(int argc, char **argv)
{
	static const struct option opts[] = { { "format", required_argument, NULL, 'f' },
					      { "fail-level", required_argument, NULL, 'l' },
					      { "baseline", required_argument, NULL, 'b' },
					      { "write-baseline", required_argument, NULL, 'w' },
					      { "no-inline-suppressions", no_argument, NULL, 'n' },
					      { "rule", required_argument, NULL, 'r' },
					      { "output", required_argument, NULL, 'o' },
					      { "policy-dir", required_argument, NULL, 'I' },
					      { "explain", required_argument, NULL, 'e' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	struct lint_args a;
	struct lint_options opt;
	struct compile_inputs in;
	struct lint_summary sum;
	struct lint_ctx c;
	struct diags d;
	char **defdirs = NULL, err[512];
	const char **alldirs = NULL;
	size_t ndef = 0, i, nw = 0;
	int ch, rc = EXIT_USAGE;

	memset(&a, 0, sizeof(a));
	a.format = "text";
	a.fail_level = LINT_WARNING;
	while ((ch = getopt_long(argc, argv, "f:l:b:w:nr:o:I:e:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			if (strcmp(optarg, "text") && strcmp(optarg, "json") && strcmp(optarg, "sarif"))
				return usage("lint", "--format is text, json or sarif");
			a.format = optarg;
			break;
		case 'l':
			if (lint_sev_parse(optarg, &a.fail_level) != 0 || a.fail_level == LINT_OFF)
				return usage("lint", "--fail-level is error, warning or note");
			break;
		case 'b': a.baseline = optarg; break;
		case 'w': a.write_baseline = optarg; break;
		case 'n': a.no_inline = 1; break;
		case 'r':
			if (parse_override(&a, optarg) != 0)
				return usage("lint", "--rule takes ID=off|note|warning|error with a known rule id");
			break;
		case 'o': a.output = optarg; break;
		case 'I':
			if (a.ndirs == MAX_DIRS)
				return usage("lint", "too many -I options");
			a.dirs[a.ndirs++] = optarg;
			break;
		case 'e': return explain_one(optarg);
		case 'h': printf("usage: cordonc lint %s\n\n%s", LINT_SYNOPSIS, LINT_HELP); return 0;
		default: return usage("lint", "bad option");
		}
	}
	if (argc - optind < 2)
		return usage("lint", "needs an app descriptor and at least one tool inventory");

	diags_init(&d);
	memset(&c, 0, sizeof(c));
	memset(&opt, 0, sizeof(opt));
	memset(&in, 0, sizeof(in));
	/* -I directories come before the default policy path, as in compile. */
	defdirs = compile_default_policy_dirs(&ndef);
	alldirs = calloc(a.ndirs + ndef + 1, sizeof(*alldirs));
	if (alldirs == NULL) {
		fprintf(stderr, "cordonc lint: out of memory\n");
		goto out;
	}
	for (i = 0; i < a.ndirs; i++)
		alldirs[i] = a.dirs[i];
	for (i = 0; i < ndef; i++)
		alldirs[a.ndirs + i] = defdirs[i];
	opt.policy_dirs = alldirs;
	opt.npolicy_dirs = a.ndirs + ndef;
	opt.overrides = a.ov;
	opt.noverrides = a.nov;
	opt.no_inline_suppressions = a.no_inline;
	opt.today = (long)(time(NULL) / 86400);

	if (compile_inputs_read(&in, argv[optind], (const char *const *)argv + optind + 1,
				(size_t)(argc - optind - 1), &d) != 0) {
		diags_print(&d, stderr);
		goto out;
	}
	if (lint_run(&c, &opt, &in.app, in.refs, in.ntools, &d) != 0) {
		diags_print(&d, stderr);
		fprintf(stderr, "cordonc lint: the inputs do not compile (%zu error%s); nothing was linted\n",
			d.nerrors, d.nerrors == 1 ? "" : "s");
		goto out;
	}
	if (a.baseline != NULL && lint_baseline_apply(a.baseline, &c, err, sizeof(err)) != 0) {
		fprintf(stderr, "cordonc lint: %s\n", err);
		goto out;
	}
	if (a.write_baseline != NULL) {
		if (lint_baseline_write(a.write_baseline, &c, &nw, err, sizeof(err)) != 0) {
			fprintf(stderr, "cordonc lint: %s\n", err);
			goto out;
		}
		fprintf(stderr, "cordonc lint: wrote %zu finding%s to %s\n", nw, nw == 1 ? "" : "s", a.write_baseline);
		rc = 0;
		goto out;
	}
	lint_summarise(&c, a.fail_level, &sum);
	sum.baseline_used = a.baseline != NULL;
	if (emit(&a, &c, &sum) != 0)
		goto out;
	rc = sum.failed ? EXIT_FINDINGS : 0;
out:
	lint_ctx_free(&c);
	diags_free(&d);
	compile_inputs_free(&in);
	compile_dirs_free(defdirs, ndef);
	free(alldirs);
	return rc;
}

int lint_cmd_explain(int argc, char **argv)
{
	static const struct option opts[] = { { "all", no_argument, NULL, 'a' },
					      { "markdown", no_argument, NULL, 'm' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	const struct lint_rule *cat;
	size_t n, i;
	int ch, all = 0, md = 0;

	while ((ch = getopt_long(argc, argv, "amh", opts, NULL)) != -1) {
		switch (ch) {
		case 'a': all = 1; break;
		case 'm': md = 1; break;
		case 'h': printf("usage: cordonc explain %s\n\n%s", EXPLAIN_SYNOPSIS, EXPLAIN_HELP); return 0;
		default: return usage("explain", "bad option");
		}
	}
	if (all) {
		if (optind != argc)
			return usage("explain", "--all takes no rule id");
		if (md) {
			lint_explain_markdown(stdout);
			return 0;
		}
		cat = lint_catalogue(&n);
		for (i = 0; i < n; i++) {
			if (i)
				fputc('\n', stdout);
			lint_explain_text(stdout, &cat[i]);
		}
		return 0;
	}
	if (argc - optind != 1)
		return usage("explain", "needs one rule id, or --all");
	if (md) {
		const struct lint_rule *r = lint_rule_find(argv[optind]);

		if (r == NULL)
			return explain_one(argv[optind]);
		printf("## %s `%s`\n\n%s.\n\n%s\n\n**Why it matters.** %s\n\n**How to fix.** %s\n", r->id, r->name,
		       r->title, r->explain, r->rationale, r->hint);
		return 0;
	}
	return explain_one(argv[optind]);
}
