/* SPDX-License-Identifier: Apache-2.0 */
/*
 * serve.c - `cordon serve`'s main thread (serve.h): the start-up sequence,
 * signals through a signalfd, the drain, and the log.
 *
 * This is the one file of runtime/serve/ that prints: every other module
 * hands its events here through serve_log_fn, and each becomes one line on
 * stderr with the time (journald and container runtimes keep stderr).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "runtime/serve/clock.h"
#include "runtime/serve/engine_ctl.h"
#include "runtime/serve/http.h"
#include "runtime/serve/policies.h"
#include "runtime/serve/serve.h"

#define SERVE_DRAIN_POLL_MS 200

static void serve_log(void *arg, const char *msg)
{
	struct timespec now;
	struct tm tm;
	char ts[40];

	(void)arg;
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, 24, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(ts + strlen(ts), sizeof(ts) - strlen(ts), ".%03dZ", (int)(now.tv_nsec / 1000000));
	/* One fprintf per line: stdio locks the stream, so lines from the
	 * pool's threads never interleave. */
	fprintf(stderr, "%s cordon serve: %s\n", ts, msg);
}

#define logf_(...) serve_logf(serve_log, NULL, __VA_ARGS__)

/* The signals the main thread owns, through a signalfd.  main() blocked
 * them before any thread existed, so no other thread ever takes one; if
 * it did not, that is a programming error reported here. */
static int signals_open(void)
{
	sigset_t want, cur;
	int fd;

	sigemptyset(&want);
	sigaddset(&want, SIGHUP);
	sigaddset(&want, SIGTERM);
	sigaddset(&want, SIGINT);
	if (pthread_sigmask(SIG_BLOCK, NULL, &cur) != 0 || !sigismember(&cur, SIGHUP) || !sigismember(&cur, SIGTERM) ||
	    !sigismember(&cur, SIGINT)) {
		logf_("cannot start: SIGHUP, SIGTERM and SIGINT must be blocked before serve_main()");
		return -1;
	}
	if ((fd = signalfd(-1, &want, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
		logf_("cannot start: signalfd: %s", strerror(errno));
	return fd;
}

/* The next signal, or 0 when none is pending (or within wait_ms). */
static int signal_next(int sfd, int wait_ms)
{
	struct pollfd pfd = { sfd, POLLIN, 0 };
	struct signalfd_siginfo si;

	if (poll(&pfd, 1, wait_ms) <= 0)
		return 0;
	if (read(sfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
		return 0;
	return (int)si.ssi_signo;
}

static void reload(struct engine *e, const struct serve_opts *o)
{
	char err[1024];
	unsigned napps = 0;

	if (engine_reload(e, &napps, err, sizeof(err)) != 0)
		logf_("SIGHUP: reload refused, the current policies stay: %s", err);
	else
		logf_("SIGHUP: reloaded %u app%s from %s", napps, napps == 1 ? "" : "s", o->policies);
}

/* SIGTERM/SIGINT: stop taking work, give running executions the grace
 * period, then cancel them; a second SIGTERM/SIGINT cancels at once. */
static void drain(struct engine *e, struct http_server *srv, int sfd, unsigned grace_s)
{
	uint64_t deadline = serve_now_us() + (uint64_t)grace_s * 1000000u;
	int cancelled = 0, sig;

	engine_drain(e);
	http_quiesce(srv);
	logf_("draining: no new executions; running ones have %u s", grace_s);
	while (!engine_wait_idle(e, SERVE_DRAIN_POLL_MS)) {
		sig = signal_next(sfd, 0);
		if (sig == SIGHUP)
			logf_("SIGHUP ignored while draining");
		if (!cancelled && (sig == SIGTERM || sig == SIGINT || serve_now_us() >= deadline)) {
			unsigned n = engine_cancel_all(e, "the server is shutting down");

			logf_("cancelling %u running execution%s (%s)", n, n == 1 ? "" : "s",
			      sig ? strsignal(sig) : "grace period over");
			cancelled = 1;
		}
	}
	http_stop(srv);
}

int serve_main(const struct serve_opts *o)
{
	struct sandbox_host_opts ho = { .state_dir = o->state_dir, .ledger = o->ledger, .secrets = o->secrets, .host_ids = o->host_ids, .share_ledger = 1 };
	struct sandbox_host host;
	struct sandbox_err he;
	struct policy_store *pols = NULL;
	struct policy_set *set;
	struct engine *e = NULL;
	struct http_server *srv = NULL;
	struct engine_opts eo = { 0 };
	struct http_opts hop = { 0 };
	char err[1024];
	int sfd = -1, host_made = 0, rc = 1, sig;

	/* 0. the signals first: nothing may start that cannot be stopped */
	if ((sfd = signals_open()) < 0)
		goto out;
	/* 1. host facts, once: every sandbox of the server reads them */
	if (sandbox_host_probe(&host, &ho, &he) != 0) {
		logf_("cannot start: host: %s: %s", he.stage, he.msg);
		goto out;
	}
	host_made = 1;
	/* 2. the policy set: a bad blob at start is a failed start */
	if (policies_open_opts(o->policies, &(struct policies_opts){ o->trusted_key, o->trust_dir, o->lint_level }, &pols,
			       err, sizeof(err)) != 0) {
		logf_("cannot start: policies: %s", err);
		goto out;
	}
	/* 3. the engine: work directory swept, pools filling */
	eo.host = &host;
	eo.policies = pols;
	eo.work_dir = o->work_dir;
	eo.pool = o->pool;
	eo.max_concurrency = o->max_concurrency;
	eo.queue = o->queue;
	eo.queue_timeout_s = o->queue_timeout_s;
	eo.inline_max = o->inline_max;
	eo.retain_s = o->retain_s;
	eo.log = serve_log;
	if (engine_new(&eo, &e, err, sizeof(err)) != 0) {
		logf_("cannot start: %s", err);
		goto out;
	}
	/* 4. only now the listeners: a request never meets a half-made engine */
	hop.socket_path = o->socket;
	hop.socket_mode = o->socket_mode;
	hop.socket_group = o->socket_group;
	hop.listen = o->listen;
	hop.tokens_path = o->tokens;
	hop.max_body = o->max_body;
	hop.body_timeout_s = o->body_timeout_s;
	if ((srv = http_start(&hop, e, err, sizeof(err))) == NULL) {
		logf_("cannot start: %s", err);
		goto out;
	}
	set = policies_current(pols);
	logf_("serving %u app%s from %s; pool %u per (app, agent); work dir %s%s%s%s%s", set->n,
	      set->n == 1 ? "" : "s", o->policies, o->pool, engine_work_dir(e), o->socket ? "; socket " : "",
	      o->socket ? o->socket : "", o->listen ? "; listening on " : "", o->listen ? o->listen : "");
	policy_set_put(set);
	/* 5. the main thread's only work from here: signals */
	for (;;) {
		sig = signal_next(sfd, -1);
		if (sig == SIGHUP) {
			reload(e, o);
		} else if (sig == SIGTERM || sig == SIGINT) {
			logf_("%s", strsignal(sig));
			drain(e, srv, sfd, o->grace_s);
			srv = NULL;
			rc = 0;
			break;
		}
	}
out:
	if (srv != NULL) {
		/* a start that failed after the listeners: nothing ran yet */
		http_quiesce(srv);
		http_stop(srv);
	}
	engine_free(e);
	policies_close(pols);
	if (host_made)
		sandbox_host_free(&host);
	if (sfd >= 0)
		close(sfd);
	if (rc == 0)
		logf_("stopped");
	return rc;
}
