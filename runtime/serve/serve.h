/* SPDX-License-Identifier: Apache-2.0 */
/*
 * serve.h - `cordon serve`: a long-lived supervisor that runs executions in
 * warm single-use sandboxes behind an HTTP API (docs/man/cordon.1, issue 13).
 *
 * serve_main() is the daemon's whole life on the main thread:
 *   1. probe the host once (sandbox_host_probe);
 *   2. load the policy set (a start with a bad blob fails: exit 1);
 *   3. the engine: work dir swept and locked, pools filling;
 *   4. the HTTP front (http.h) on its listeners;
 *   5. signals through a signalfd, on this thread alone: SIGHUP reloads the
 *      policy set, SIGTERM/SIGINT drain (stop accepting, let running
 *      executions finish within the grace period, then cancel them,
 *      destroy idle sandboxes) and return 0.
 * main() must block SIGTERM, SIGINT and SIGHUP and ignore SIGPIPE before
 * calling it (before any thread exists), as sandbox.h requires.
 * serve.c is the only file of runtime/serve/ that prints: one line per
 * event on stderr, with the time.
 */
#ifndef CORDON_SERVE_SERVE_H
#define CORDON_SERVE_SERVE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Defaults of the flags (cordon.c's usage text quotes them). */
#define SERVE_DEFAULT_POOL 2
#define SERVE_DEFAULT_QUEUE 64
#define SERVE_DEFAULT_QUEUE_TIMEOUT_S 30
#define SERVE_DEFAULT_MAX_BODY (16u << 20)
#define SERVE_DEFAULT_BODY_TIMEOUT_S 30
#define SERVE_DEFAULT_INLINE_MAX (1u << 20)
#define SERVE_DEFAULT_RETAIN_S 300
#define SERVE_DEFAULT_GRACE_S 30
#define SERVE_DEFAULT_SOCKET_MODE 0660
#define SERVE_MAX_POOL 64
#define SERVE_MAX_CONCURRENCY 4096
#define SERVE_MAX_QUEUE 65536

struct serve_opts {
	const char *policies;     /* directory of *.cpol blobs */
	const char *trusted_key;  /* NULL: the trust directory's keys (one at least) */
	const char *trust_dir;    /* --trust-dir; NULL: CORDON_TRUST_DIR */
	int lint_level;           /* --require-lint-clean: enum lint_gate_level, LINT_GATE_OFF */
	/* Listeners (http.c): the Unix socket, and TCP when listen is set. */
	const char *socket;       /* NULL: no Unix socket */
	mode_t socket_mode;
	const char *socket_group; /* NULL: the server's group */
	const char *listen;       /* ADDR:PORT, NULL: none */
	const char *tokens;       /* bearer tokens for TCP; required with listen */
	size_t max_body;          /* bytes */
	unsigned body_timeout_s;
	/* The engine. */
	unsigned pool;            /* warm sandboxes per (app, agent); 0: none */
	unsigned max_concurrency; /* 0: twice the online CPUs */
	unsigned queue;
	unsigned queue_timeout_s;
	size_t inline_max;        /* artifacts inline up to this many bytes */
	unsigned retain_s;        /* kept run directories and artifacts */
	unsigned grace_s;         /* a drain's wait before cancelling */
	const char *work_dir;     /* NULL: /run/cordon/serve, or $XDG_RUNTIME_DIR/cordon-serve */
	/* The host (sandbox_host_opts). */
	const char *state_dir;
	const char *ledger;       /* --ledger URL (PostgreSQL); excludes state_dir */
	const char *secrets;
	const char *host_ids;
};

/* The whole daemon; 0 after a drain, 1 when it could not start. */
int serve_main(const struct serve_opts *o);

#endif
