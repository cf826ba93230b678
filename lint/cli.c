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
#include <unistd.h>

#include "compiler/sign.h"
#include "cordon/cpol.h"
#include "lint/config.h"
#include "lint/baseline.h"
#include "lint/cli.h"
#include "lint/out.h"

#define EXIT_FINDINGS 1
#define EXIT_USAGE 2
#define MAX_OVERRIDES 64
#define MAX_DIRS 16
#define MAX_IGNORE 64
/* Long options without a short form. */
#define OPT_INLINE 256
#define OPT_NO_CONFIG 257
#define OPT_IGNORE 258
#define OPT_COLOR 259

static int usage(const char *cmd, const char *msg)
{
	fprintf(stderr, "cordonc %s: %s\nTry 'cordonc %s --help'.\n", cmd, msg, cmd);
	return EXIT_USAGE;
}

static int explain_one(const char *id)
{
	const struct lint_rule *r = lint_rule_find(id);
	const char *near;

	if (r == NULL) {
		near = lint_rule_suggest(id);
		fprintf(stderr, "cordonc explain: unknown rule '%s'%s%s%s (see 'cordonc explain --all')\n", id,
			near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
		return EXIT_USAGE;
	}
	lint_explain_text(stdout, r);
	return 0;
}

enum color_when { COLOR_AUTO = 0, COLOR_ALWAYS, COLOR_NEVER };

/* What the flags said; -1 / NULL where they said nothing, so that the
 * config file fills only those. */
struct lint_args {
	const char *format, *baseline, *write_baseline, *output, *config;
	int fail_level;
	struct lint_override ov[MAX_OVERRIDES];
	size_t nov;
	const char *dirs[MAX_DIRS];
	size_t ndirs;
	const char *ignore[MAX_IGNORE];
	size_t nignore;
	int inline_supp;
	int no_config;
	enum color_when color;
};

static int parse_override(struct lint_args *a, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char id[SUGGEST_MAX_LEN + 1];
	const struct lint_rule *r;
	const char *near;

	if (eq == NULL || (size_t)(eq - arg) >= sizeof(id) || a->nov == MAX_OVERRIDES)
		return usage("lint", "--rule takes ID=off|note|warning|error (a rule id or name)");
	memcpy(id, arg, (size_t)(eq - arg));
	id[eq - arg] = '\0';
	if ((r = lint_rule_find(id)) == NULL) {
		near = lint_rule_suggest(id);
		fprintf(stderr, "cordonc lint: --rule: unknown rule '%s'%s%s%s\n", id, near ? "; did you mean '" : "",
			near ? near : "", near ? "'?" : "");
		return EXIT_USAGE;
	}
	if (lint_sev_parse(eq + 1, &a->ov[a->nov].sev) != 0)
		return usage("lint", "--rule takes ID=off|note|warning|error (a rule id or name)");
	a->ov[a->nov++].id = r->id;
	return 0;
}

static int parse_format(struct lint_args *a, const char *arg)
{
	size_t i;

	for (i = 0; lint_format_names[i] != NULL; i++) {
		if (strcmp(arg, lint_format_names[i]) == 0) {
			a->format = lint_format_names[i];
			return 0;
		}
	}
	return usage("lint", "--format is text, json, sarif, junit, github, gitlab or checkstyle");
}

static int parse_color(struct lint_args *a, const char *arg)
{
	if (arg == NULL || strcmp(arg, "always") == 0)
		a->color = COLOR_ALWAYS;
	else if (strcmp(arg, "never") == 0)
		a->color = COLOR_NEVER;
	else if (strcmp(arg, "auto") == 0)
		a->color = COLOR_AUTO;
	else
		return usage("lint", "--color is auto, always or never");
	return 0;
}

/* Colour for people at a terminal: never into a file (-o) or a pipe, and
 * never when NO_COLOR is set to anything (no-color.org) unless asked for
 * outright. */
static int want_color(const struct lint_args *a)
{
	const char *nc = getenv("NO_COLOR");

	if (a->color != COLOR_AUTO)
		return a->color == COLOR_ALWAYS;
	return a->output == NULL && (nc == NULL || nc[0] == '\0') && isatty(STDOUT_FILENO);
}

static const struct {
	const char *name;
	int (*print)(FILE *out, const struct lint_ctx *c, const struct lint_summary *s);
} writers[] = {
	{ "json", lint_print_json },	     { "sarif", lint_print_sarif },   { "junit", lint_print_junit },
	{ "github", lint_print_github },     { "gitlab", lint_print_gitlab }, { "checkstyle", lint_print_checkstyle },
};

/* Write the report to memory first, so -o FILE is replaced atomically and
 * never left half-written. */
static int emit(const struct lint_args *a, const struct lint_ctx *c, const struct lint_summary *s)
{
	char *buf = NULL, err[512];
	size_t len = 0, i;
	FILE *m = open_memstream(&buf, &len);
	int rc = 0;

	if (m == NULL)
		return -1;
	if (strcmp(a->format, "text") == 0)
		lint_print_text(m, c, s, want_color(a));
	for (i = 0; i < sizeof(writers) / sizeof(writers[0]); i++)
		if (strcmp(a->format, writers[i].name) == 0)
			rc = writers[i].print(m, c, s);
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

/* A compiled blob given where YAML belongs would otherwise be refused as
 * invalid UTF-8 with its bytes quoted: say what it is instead.  1 when
 * path starts with the blob magic. */
static int is_blob(const char *path)
{
	unsigned char head[CPOL_MAGIC_LEN];
	FILE *f = fopen(path, "rb");
	int blob = 0;

	if (f == NULL)
		return 0; /* src_read() reports what is wrong with it */
	blob = fread(head, 1, sizeof(head), f) == sizeof(head) && memcmp(head, CPOL_MAGIC, CPOL_MAGIC_LEN) == 0;
	fclose(f);
	return blob;
}

static int refuse_blobs(char **paths, int n)
{
	int i, found = 0;

	for (i = 0; i < n; i++) {
		if (is_blob(paths[i])) {
			fprintf(stderr, "cordonc lint: %s: this is a compiled blob; lint its sources (cordonc inspect %s shows it)\n",
				paths[i], paths[i]);
			found = 1;
		}
	}
	return found;
}

/* Read the config file named by --config or found upward, unless
 * --no-config.  0 (cfg zeroed when there is none), or -1 reported. */
static int load_config(const struct lint_args *a, struct lint_config *cfg)
{
	char *found = NULL, err[512];
	struct diags d;
	int rc = 0;

	memset(cfg, 0, sizeof(*cfg));
	cfg->fail_level = -1;
	cfg->inline_suppressions = -1;
	if (a->no_config)
		return 0;
	if (a->config == NULL) {
		rc = lint_config_find(&found, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "cordonc lint: %s\n", err);
			return -1;
		}
		if (rc == 0)
			return 0;
	}
	diags_init(&d);
	rc = lint_config_load(cfg, a->config != NULL ? a->config : found, &d);
	if (rc != 0) {
		diags_print(&d, stderr);
		fprintf(stderr, "cordonc lint: %s: the config file cannot be used; nothing was linted\n",
			a->config != NULL ? a->config : found);
	}
	diags_free(&d);
	free(found);
	return rc;
}

/* Settings the flags left out come from the file; rule levels from both,
 * the file's first, so a flag for the same rule wins (lint_rule_sev()). */
static int merge_config(struct lint_args *a, const struct lint_config *cfg, struct lint_override **ov, size_t *nov)
{
	if (a->format == NULL)
		a->format = cfg->format != NULL ? cfg->format : "text";
	if (a->fail_level < 0)
		a->fail_level = cfg->fail_level >= 0 ? cfg->fail_level : LINT_WARNING;
	if (a->baseline == NULL)
		a->baseline = cfg->baseline;
	if (a->inline_supp < 0)
		a->inline_supp = cfg->inline_suppressions >= 0 ? cfg->inline_suppressions : 1;
	*nov = cfg->nov + a->nov;
	*ov = calloc(*nov ? *nov : 1, sizeof(**ov));
	if (*ov == NULL)
		return -1;
	memcpy(*ov, cfg->ov, cfg->nov * sizeof(**ov));
	memcpy(*ov + cfg->nov, a->ov, a->nov * sizeof(**ov));
	return 0;
}

int lint_cmd_lint(int argc, char **argv)
{
	static const struct option opts[] = { { "format", required_argument, NULL, 'f' },
					      { "fail-level", required_argument, NULL, 'l' },
					      { "baseline", required_argument, NULL, 'b' },
					      { "write-baseline", required_argument, NULL, 'w' },
					      { "no-inline-suppressions", no_argument, NULL, 'n' },
					      { "inline-suppressions", no_argument, NULL, OPT_INLINE },
					      { "rule", required_argument, NULL, 'r' },
					      { "output", required_argument, NULL, 'o' },
					      { "policy-dir", required_argument, NULL, 'I' },
					      { "explain", required_argument, NULL, 'e' },
					      { "config", required_argument, NULL, 'c' },
					      { "no-config", no_argument, NULL, OPT_NO_CONFIG },
					      { "ignore", required_argument, NULL, OPT_IGNORE },
					      { "color", optional_argument, NULL, OPT_COLOR },
					      { "colour", optional_argument, NULL, OPT_COLOR },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	struct lint_args a;
	struct lint_config cfg;
	struct lint_options opt;
	struct compile_inputs in;
	struct lint_summary sum;
	struct lint_ctx c;
	struct lint_override *ov = NULL;
	struct diags d;
	char **defdirs = NULL, err[512];
	const char **alldirs = NULL;
	size_t ndef = 0, i, nw = 0, nov = 0;
	int ch, rc = EXIT_USAGE;

	memset(&a, 0, sizeof(a));
	a.fail_level = -1;
	a.inline_supp = -1;
	while ((ch = getopt_long(argc, argv, "f:l:b:w:nr:o:I:e:c:h", opts, NULL)) != -1) {
		enum lint_sev lv;

		switch (ch) {
		case 'f':
			if (parse_format(&a, optarg) != 0)
				return EXIT_USAGE;
			break;
		case 'l':
			if (lint_sev_parse(optarg, &lv) != 0 || lv == LINT_OFF)
				return usage("lint", "--fail-level is error, warning or note");
			a.fail_level = lv;
			break;
		case 'b': a.baseline = optarg; break;
		case 'w': a.write_baseline = optarg; break;
		case 'n': a.inline_supp = 0; break;
		case OPT_INLINE: a.inline_supp = 1; break;
		case 'r':
			if (parse_override(&a, optarg) != 0)
				return EXIT_USAGE;
			break;
		case 'o': a.output = optarg; break;
		case 'I':
			if (a.ndirs == MAX_DIRS)
				return usage("lint", "too many -I options");
			a.dirs[a.ndirs++] = optarg;
			break;
		case 'c': a.config = optarg; break;
		case OPT_NO_CONFIG: a.no_config = 1; break;
		case OPT_IGNORE:
			if (a.nignore == MAX_IGNORE)
				return usage("lint", "too many --ignore options");
			a.ignore[a.nignore++] = optarg;
			break;
		case OPT_COLOR:
			if (parse_color(&a, optarg) != 0)
				return EXIT_USAGE;
			break;
		case 'e': return explain_one(optarg);
		case 'h': printf("usage: cordonc lint %s\n\n%s", LINT_SYNOPSIS, LINT_HELP); return 0;
		default: return usage("lint", "bad option");
		}
	}
	if (argc - optind < 2)
		return usage("lint", "needs an app descriptor and at least one tool inventory");
	if (a.config != NULL && a.no_config)
		return usage("lint", "--config and --no-config exclude each other");

	diags_init(&d);
	memset(&c, 0, sizeof(c));
	memset(&opt, 0, sizeof(opt));
	memset(&in, 0, sizeof(in));
	if (load_config(&a, &cfg) != 0)
		goto out;
	if (merge_config(&a, &cfg, &ov, &nov) != 0) {
		fprintf(stderr, "cordonc lint: out of memory\n");
		goto out;
	}
	if (refuse_blobs(argv + optind, argc - optind))
		goto out;
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
	opt.overrides = ov;
	opt.noverrides = nov;
	opt.no_inline_suppressions = !a.inline_supp;
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
	/* Globs in the file are relative to it, those of --ignore to the
	 * working directory. */
	lint_ignore_paths(&c, cfg.ignore, cfg.nignore, cfg.dir);
	lint_ignore_paths(&c, a.ignore, a.nignore, ".");
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
	lint_summarise(&c, (enum lint_sev)a.fail_level, &sum);
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
	free(ov);
	lint_config_free(&cfg);
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
