/* SPDX-License-Identifier: Apache-2.0 */
/*
 * run.c - `cordon run`: read the request from files, load and verify the
 * blob, then walk the sandbox lifecycle once (sandbox.h): prepare, start,
 * wait, reduce, destroy.  Every setup step lives in sandbox.c; this file
 * only turns a command line into a request.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cordon/blob.h"
#include "cordon/keys.h"
#include "runtime/context.h"
#include "runtime/lint_gate.h"
#include "runtime/run.h"
#include "runtime/supervise/export.h"
#include "runtime/trust_dir.h"

/* What a path that is not a regular file is, for the message. */
static const char *run_file_kind(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	return "not a plain file";
}

/*
 * Reads a whole regular file of at most max bytes into *buf; 0, or -1
 * with err: one message per failure, its cause taken at the failing call.
 * O_NONBLOCK: a FIFO opens at once instead of waiting for a writer, and is
 * then refused by its type like any other file that is not regular (a
 * socket fails the open itself, ENXIO, and is named by a stat); a
 * terminal never becomes the controlling one (O_NOCTTY).  Links are
 * followed: the caller named the path.
 */
static int read_small(const char *path, uint64_t max, char **buf, size_t *len, const char *bound, char *err,
		      size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY), rc = -1;
	struct stat st;

	*buf = NULL;
	*len = 0;
	if (fd < 0) {
		int e = errno;

		if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
			snprintf(err, n, "%s: not a regular file (%s)", path, run_file_kind(st.st_mode));
		else
			snprintf(err, n, "%s: %s", path, strerror(e));
		return -1;
	}
	if (fstat(fd, &st) != 0) {
		snprintf(err, n, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, n, "%s: not a regular file (%s)", path, run_file_kind(st.st_mode));
		goto out;
	}
	if ((uint64_t)st.st_size > max) {
		snprintf(err, n, "%s is over %s", path, bound);
		goto out;
	}
	if ((*buf = malloc((size_t)st.st_size + 1)) == NULL) {
		snprintf(err, n, "%s: out of memory", path);
		goto out;
	}
	while (*len < (size_t)st.st_size) {
		ssize_t r = read(fd, *buf + *len, (size_t)st.st_size - *len);

		if (r < 0) {
			snprintf(err, n, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		*len += (size_t)r;
	}
	(*buf)[*len] = '\0';
	rc = 0;
out:
	if (rc != 0) {
		free(*buf);
		*buf = NULL;
	}
	close(fd);
	return rc;
}

/* The program from standard input (--code - or /dev/stdin), read to its
 * end as `python3 -` does, and refused once it passes max: a pipe has no
 * size to check first, so the bound is counted as it arrives. */
static int read_stdin(uint64_t max, char **buf, size_t *len, const char *bound, char *err, size_t n)
{
	size_t cap = 0;
	int rc = -1;

	*buf = NULL;
	*len = 0;
	for (;;) {
		ssize_t r;

		if (*len == cap) {
			size_t ncap = cap ? cap * 2 : 65536;
			char *nb;

			if ((nb = realloc(*buf, ncap + 1)) == NULL) {
				snprintf(err, n, "standard input: out of memory");
				goto out;
			}
			*buf = nb;
			cap = ncap;
		}
		r = read(0, *buf + *len, cap - *len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, n, "standard input: %s", strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		*len += (size_t)r;
		if ((uint64_t)*len > max) {
			snprintf(err, n, "standard input is over %s", bound);
			goto out;
		}
	}
	(*buf)[*len] = '\0';
	rc = 0;
out:
	if (rc != 0) {
		free(*buf);
		*buf = NULL;
		*len = 0;
	}
	return rc;
}

static int run_code_is_stdin(const char *path)
{
	return strcmp(path, "-") == 0 || strcmp(path, "/dev/stdin") == 0;
}

struct run_req {
	struct cpol_policy pol;
	struct blob_map map;
	char *code;
	size_t code_len;
	struct sandbox_file inputs[RUN_MAX_INPUTS];
	char *data[RUN_MAX_INPUTS];
	cJSON *context;
	struct trust_verdict trust;
};

static int run_policy(const struct run_opts *o, struct run_req *r, struct sandbox_err *e)
{
	struct blob_error be;
	char err[512];

	if (blob_map_file(o->policy, &r->map, &be) != 0) {
		snprintf(e->stage, sizeof(e->stage), "policy");
		snprintf(e->msg, sizeof(e->msg), "%s", be.msg); /* it names the file */
		return -1;
	}
	if (blob_load(r->map.data, r->map.len, CPOL_ARCH_X86_64, &r->pol, &be) != 0) {
		snprintf(e->stage, sizeof(e->stage), "policy");
		snprintf(e->msg, sizeof(e->msg), "%s: invalid policy blob: %s [field %s, byte %llu]", o->policy, be.msg,
			 be.field, (unsigned long long)be.offset);
		return -1;
	}
	if (trust_check(&r->pol, o->trusted_key, o->trust_dir, o->allow_unsigned, &r->trust, err, sizeof(err)) != 0) {
		snprintf(e->stage, sizeof(e->stage), "signature");
		snprintf(e->msg, sizeof(e->msg), "%s", err);
		return -1;
	}
	if (lint_gate_check(&r->pol, o->lint_level, err, sizeof(err)) != 0) {
		snprintf(e->stage, sizeof(e->stage), "policy");
		snprintf(e->msg, sizeof(e->msg), "%s", err);
		return -1;
	}
	return 0;
}

/* Which key let the policy in, and from where: evidence beside the
 * sandbox's own (enforcement.policySignature). */
static void run_trust_json(cJSON *res, const struct trust_verdict *v)
{
	cJSON *enf = cJSON_GetObjectItemCaseSensitive(res, "enforcement");
	cJSON *o;

	if (!cJSON_IsObject(enf) || (o = cJSON_AddObjectToObject(enf, "policySignature")) == NULL)
		return;
	cJSON_AddStringToObject(o, "source", v->source);
	cJSON_AddBoolToObject(o, "verified", v->verified);
	if (v->keyid[0])
		cJSON_AddStringToObject(o, "keyId", v->keyid);
	else
		cJSON_AddNullToObject(o, "keyId");
	if (v->key[0])
		cJSON_AddStringToObject(o, "key", v->key);
	if (v->dir[0])
		cJSON_AddStringToObject(o, "trustDir", v->dir);
	if (v->allowed_unsigned)
		cJSON_AddBoolToObject(o, "allowUnsigned", 1);
}

/* The request from files: context first (a bad one is the caller's
 * mistake, found before any file of the program is read), then the
 * program and its inputs, each read up to the policy's bound. */
static int run_read(const struct run_opts *o, struct run_req *r, struct sandbox_err *e)
{
	char text_err[256], bound[64];
	size_t len;
	char *text;

	if (o->context != NULL) {
		if (read_small(o->context, CONTEXT_MAX_BYTES, &text, &len, "1 MiB", e->msg, sizeof(e->msg)) != 0) {
			snprintf(e->stage, sizeof(e->stage), "context");
			return -1;
		}
		r->context = context_parse(text, len, text_err, sizeof(text_err));
		free(text);
		if (r->context == NULL) {
			snprintf(e->stage, sizeof(e->stage), "context");
			snprintf(e->msg, sizeof(e->msg), "%.512s: %s", o->context, text_err);
			return -1;
		}
	}
	snprintf(bound, sizeof(bound), "max_code_bytes (%llu)", (unsigned long long)r->pol.limits.max_code_bytes);
	if ((run_code_is_stdin(o->code)
		     ? read_stdin(r->pol.limits.max_code_bytes, &r->code, &r->code_len, bound, e->msg, sizeof(e->msg))
		     : read_small(o->code, r->pol.limits.max_code_bytes, &r->code, &r->code_len, bound, e->msg,
				  sizeof(e->msg))) != 0) {
		snprintf(e->stage, sizeof(e->stage), "code");
		return -1;
	}
	for (unsigned i = 0; i < o->ninputs; i++) {
		const char *base = strrchr(o->inputs[i], '/');
		uint64_t max = r->pol.limits.max_file_bytes ? r->pol.limits.max_file_bytes : UINT64_MAX;

		if (read_small(o->inputs[i], max, &r->data[i], &len, "max_file_bytes", e->msg, sizeof(e->msg)) != 0) {
			snprintf(e->stage, sizeof(e->stage), "inputs");
			return -1;
		}
		r->inputs[i] = (struct sandbox_file){ base ? base + 1 : o->inputs[i], r->data[i], len };
	}
	return 0;
}

/* Which signal cancelled the run, in words ("Terminated"). */
static void run_cancel_reason(int fd, struct sandbox *sb)
{
	struct signalfd_siginfo si;

	if (fd >= 0 && read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		sandbox_cancel_reason(sb, strsignal((int)si.ssi_signo));
}

/*
 * Writes the result line to out and ends out's stream: the reader has the
 * whole answer now, not after the sandbox's teardown (a pipe's reader
 * waits for EOF), so fd 1 is closed here (/dev/null takes its place).
 * The write counts only once the close went through: a full disk or
 * /dev/full fails the flush, and a file system that writes back at close
 * (NFS, quotas) reports there.  0, or the errno of the failed step.
 */
static int run_write_result(FILE *out, const char *text)
{
	int fd = fileno(out), keep = -1, nul = -1, rc = -1, e = 0;

	if (fprintf(out, "%s\n", text) < 0 || fflush(out) != 0) {
		e = errno;
		goto out;
	}
	/* dup2 closes fd 1 silently: a copy is closed apart, checked. */
	if ((keep = dup(fd)) < 0 || (nul = open("/dev/null", O_WRONLY | O_CLOEXEC)) < 0 || dup2(nul, fd) < 0) {
		e = errno;
		goto out;
	}
	rc = close(keep);
	e = errno;
	keep = -1;
out:
	if (keep >= 0)
		close(keep);
	if (nul >= 0)
		close(nul);
	return rc == 0 ? 0 : e ? e : EIO;
}

int run_execute(const struct run_opts *o, FILE *out, FILE *errs)
{
	struct sandbox_host_opts ho = { .state_dir = o->state_dir, .ledger = o->ledger, .secrets = o->secrets, .host_ids = o->host_ids };
	struct sandbox_host h;
	struct sandbox_err e;
	struct run_req *r = calloc(1, sizeof(*r));
	struct sandbox *sb = NULL;
	struct sandbox_spec spec;
	struct sandbox_reduce_opts ro = { 0 };
	struct export_dest dest = { .fd = -1 };
	cJSON *res = NULL;
	char *text = NULL;
	int rc = RUN_EXIT_HARNESS, pre = -1, werr;

	memset(&e, 0, sizeof(e));
	memset(&h, 0, sizeof(h));
	if (r == NULL)
		goto oom;
	policy_init(&r->pol);
	pre = run_policy(o, r, &e);
	/* The policy goes in even when it did not load (policy_init left it
	 * empty, and sandbox_fail below stops the sandbox before any use):
	 * given NULL, sandbox_new records "no policy" first, and that would
	 * be reported instead of why the blob was refused. */
	spec = (struct sandbox_spec){ &r->pol, o->agent, o->run_dir };
	if (pre == 0)
		pre = sandbox_host_probe(&h, &ho, &e);
	if (pre == 0)
		pre = run_read(o, r, &e);
	/* Before any sandbox is made: sandbox_start() would find it too,
	 * but only after a clone and an interpreter's start. */
	if (pre == 0)
		pre = sandbox_check_secrets(&h, &r->pol, o->agent, r->context, &e);
	/* --out DIR is made or opened before the program runs: one that
	 * cannot be used is found while nothing has run yet. */
	if (pre == 0 && o->out != NULL) {
		pre = export_open(o->out, &dest, e.msg, sizeof(e.msg));
		snprintf(e.stage, sizeof(e.stage), "out");
		ro.copy = &dest;
	}
	if ((sb = sandbox_new(&h, &spec)) == NULL)
		goto oom;
	if (pre != 0)
		sandbox_fail(sb, &e);
	{
		struct sandbox_request rq = { r->code, r->code_len, o->code, r->inputs, o->ninputs, &r->context };

		/* Each call returns at once once one has failed. */
		if (sandbox_prepare(sb, 0) == 0 && sandbox_start(sb, &rq) == 0 && sandbox_wait(sb, o->cancel_fd) == 0)
			run_cancel_reason(o->cancel_fd, sb);
	}
	res = sandbox_reduce(sb, &ro, &rc);
	if (res != NULL && pre == 0)
		run_trust_json(res, &r->trust);
	text = res ? cJSON_PrintUnformatted(res) : NULL;
	if (text == NULL)
		goto oom;
	if ((werr = run_write_result(out, text)) != 0) {
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(res, "status");

		fprintf(errs, "cordon run: the result could not be written to stdout: %s (the run's status was %s)\n",
			strerror(werr), cJSON_IsString(st) ? st->valuestring : "unknown");
		rc = RUN_EXIT_HARNESS;
	}
	goto out;
oom:
	fprintf(errs, "cordon run: out of memory\n");
	rc = RUN_EXIT_HARNESS;
out:
	sandbox_destroy(sb);
	sandbox_host_free(&h);
	if (dest.fd >= 0)
		close(dest.fd);
	free(text);
	cJSON_Delete(res);
	if (r != NULL) {
		free(r->code);
		for (unsigned i = 0; i < RUN_MAX_INPUTS; i++)
			free(r->data[i]);
		cJSON_Delete(r->context);
		policy_free(&r->pol);
		blob_unmap(&r->map);
		free(r);
	}
	return rc;
}
