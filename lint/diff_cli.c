/* SPDX-License-Identifier: Apache-2.0 */
/*
 * diff_cli.c - `cordonc diff OLD.cpol NEW.cpol [--json]`: both blobs are
 * read and fully validated with the runtime's loader, then compared by
 * meaning (lint/diff.c).  Exit 1 when anything widens, so CI can ask for a
 * second review.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include "compiler/sign.h"
#include "cordon/blob.h"
#include "lint/cli.h"
#include "lint/diff.h"
#include "lint/out.h"

#define EXIT_WIDENS 1
#define EXIT_USAGE 2

static int load(const char *path, struct cpol_policy *p)
{
	struct blob_error be;
	uint8_t *buf = NULL;
	size_t len = 0;
	char err[512];
	int rc = -1;

	policy_init(p);
	if (file_read_all(path, CPOL_MAX_BLOB_SIZE, &buf, &len, err, sizeof(err)) != 0)
		fprintf(stderr, "cordonc diff: %s\n", err);
	else if (blob_load(buf, len, BLOB_ANY_ARCH, p, &be) != 0)
		fprintf(stderr, "cordonc diff: %s: invalid policy blob: %s [field %s, byte %llu]\n", path, be.msg,
			be.field, (unsigned long long)be.offset);
	else
		rc = 0;
	free(buf);
	return rc;
}

static void print_text(const char *pa, const char *pb, const struct diff_result *r)
{
	size_t i;

	printf("cordonc diff: %s -> %s\n", pa, pb);
	for (i = 0; i < r->n; i++) {
		const struct diff_change *c = &r->v[i];

		printf("  %-6s  %s: ", diff_kind_name(c->kind), c->path);
		if (c->old[0] == '\0' && c->new[0] != '\0')
			printf("added %s\n", c->new);
		else if (c->new[0] == '\0' && c->old[0] != '\0')
			printf("removed %s\n", c->old);
		else
			printf("%s -> %s\n", c->old, c->new);
	}
	if (r->n == 0)
		printf("no change in meaning\n");
	else
		printf("%zu change%s: %zu widening, %zu narrowing, %zu neutral%s\n", r->n, r->n == 1 ? "" : "s",
		       r->count[DIFF_WIDEN], r->count[DIFF_NARROW], r->count[DIFF_CHANGE],
		       r->count[DIFF_WIDEN] ? " (widens: ask for a second review)" : "");
}

static cJSON *side(const char *path, const struct cpol_policy *p)
{
	char hex[65];
	cJSON *o = cJSON_CreateObject();

	sodium_bin2hex(hex, sizeof(hex), p->sha256, 32);
	cJSON_AddStringToObject(o, "path", path);
	cJSON_AddStringToObject(o, "sha256", hex);
	return o;
}

static int print_json(const char *pa, const struct cpol_policy *a, const char *pb, const struct cpol_policy *b,
		      const struct diff_result *r)
{
	cJSON *root = cJSON_CreateObject(), *list;
	size_t i;

	if (root == NULL)
		return -1;
	cJSON_AddStringToObject(root, "schema", "cordon-diff/1");
	cJSON_AddItemToObject(root, "old", side(pa, a));
	cJSON_AddItemToObject(root, "new", side(pb, b));
	cJSON_AddBoolToObject(root, "widens", r->count[DIFF_WIDEN] > 0);
	cJSON_AddNumberToObject(root, "widening", (double)r->count[DIFF_WIDEN]);
	cJSON_AddNumberToObject(root, "narrowing", (double)r->count[DIFF_NARROW]);
	cJSON_AddNumberToObject(root, "neutral", (double)r->count[DIFF_CHANGE]);
	list = cJSON_AddArrayToObject(root, "changes");
	for (i = 0; i < r->n; i++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "kind", diff_kind_name(r->v[i].kind));
		cJSON_AddStringToObject(o, "path", r->v[i].path);
		cJSON_AddStringToObject(o, "old", r->v[i].old);
		cJSON_AddStringToObject(o, "new", r->v[i].new);
		if (!cJSON_AddItemToArray(list, o)) {
			cJSON_Delete(o);
			cJSON_Delete(root);
			return -1;
		}
	}
	return lint_json_emit(stdout, root);
}

int lint_cmd_diff(int argc, char **argv)
{
	static const struct option opts[] = { { "json", no_argument, NULL, 'j' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	struct cpol_policy a, b;
	struct diff_result r;
	int ch, json = 0, rc = EXIT_USAGE;

	while ((ch = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (ch) {
		case 'j': json = 1; break;
		case 'h': printf("usage: cordonc diff %s\n\n%s", DIFF_SYNOPSIS, DIFF_HELP); return 0;
		default:
			fprintf(stderr, "cordonc diff: bad option\nTry 'cordonc diff --help'.\n");
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "cordonc diff: needs two blobs, OLD and NEW\nTry 'cordonc diff --help'.\n");
		return EXIT_USAGE;
	}
	memset(&r, 0, sizeof(r));
	policy_init(&a);
	policy_init(&b);
	/* Both are loaded even when the first fails, so one run names both. */
	if ((load(argv[optind], &a) | load(argv[optind + 1], &b)) != 0)
		goto out;
	if (policy_diff(&a, &b, &r) != 0) {
		fprintf(stderr, "cordonc diff: out of memory\n");
		goto out;
	}
	if (json) {
		if (print_json(argv[optind], &a, argv[optind + 1], &b, &r) != 0) {
			fprintf(stderr, "cordonc diff: out of memory\n");
			goto out;
		}
	} else {
		print_text(argv[optind], argv[optind + 1], &r);
	}
	rc = r.count[DIFF_WIDEN] ? EXIT_WIDENS : 0;
out:
	diff_free(&r);
	policy_free(&a);
	policy_free(&b);
	return rc;
}
