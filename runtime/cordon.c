/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cordon.c - main() and argument parsing of the runtime.
 *
 * The runtime never parses policy text or YAML: it maps a compiled blob,
 * validates it completely (runtime/blob_load.c) and, with --trusted-key,
 * refuses anything not signed by that key.  `run` executes one program under
 * the policy (runtime/run.c); `check-policy` takes the same loading path so
 * an operator can test an artifact on the host that will run it; `ledger`
 * lists, shows and forgets replay records (runtime/ledger/: the decisions
 * are there, this file parses and prints); `serve` is the long-lived
 * server of runtime/serve/ (this file checks its flags and owns its
 * process-wide signal state).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include "cordon/blob.h"
#include "cordon/keys.h"
#include "cordon/version.h"
#include "runtime/hostid.h"
#include "runtime/ledger/ledger.h"
#include "runtime/lint_gate.h"
#include "runtime/run.h"
#include "runtime/trust_dir.h"
#include "runtime/serve/serve.h"

#define EXIT_NO 1
#define EXIT_USAGE 2
#define STR_(x) #x
#define STR(x) STR_(x)

static void usage(FILE *f)
{
	fprintf(f, "usage: cordon COMMAND [ARGS]\n\n"
		   "cordon's runtime: enforces a compiled policy blob.\n\n"
		   "commands:\n"
		   "  run --policy BLOB --code FILE [--input FILE]... [--context CTX.json]\n"
		   "      [--agent NAME] [--run-dir DIR] [--out DIR] [--trusted-key KEY.pub]\n"
		   "      [--state-dir DIR | --ledger URL] [--secrets FILE]\n"
		   "      [--host-ids FIRST:COUNT] [--trust-dir DIR] [--allow-unsigned]\n"
		   "      [--require-lint-clean[=LEVEL]]\n"
		   "                 run FILE (Python; - or /dev/stdin: read it from standard\n"
		   "                 input) in the sandbox the policy describes and\n"
		   "                 print one result JSON.  The program calls the tools of\n"
		   "                 --agent (narrowed by the context's \"tools\") through the\n"
		   "                 supervisor; budgets and replay records live in the\n"
		   "                 ledger under --state-dir (default /var/lib/cordon as root,\n"
		   "                 ~/.local/state/cordon otherwise), or with --ledger URL\n"
		   "                 (postgresql://... or postgres://...) on a PostgreSQL\n"
		   "                 server a fleet of hosts shares (an unreachable server is\n"
		   "                 a harness error, never a local ledger instead; not with\n"
		   "                 --state-dir); --secrets is a NAME=value\n"
		   "                 file for the tools' env_from (else the environment); a\n"
		   "                 selected tool's secret set by neither is a harness error\n"
		   "                 before the program starts.  --out DIR (made 0700 if\n"
		   "                 missing) gets a copy of each artifact the result lists,\n"
		   "                 its hash checked; an existing file is never replaced,\n"
		   "                 and an artifact not copied makes the run an error.\n"
		   "                 As root the executor runs as a host uid/gid leased for\n"
		   "                 this run from --host-ids (FIRST:COUNT or FIRST-LAST,\n"
		   "                 default " HOSTID_RANGE_DEFAULT_TEXT "), one that no account,\n"
		   "                 group, subordinate range or other run has.\n"
		   "                 Signatures: --trusted-key demands that key; else when\n"
		   "                 the trust directory (" CORDON_TRUST_DIR ",\n"
		   "                 or --trust-dir DIR) holds *.pub keys, the policy must be\n"
		   "                 signed by one of them unless --allow-unsigned (the\n"
		   "                 result says so); a trust directory or key another\n"
		   "                 user could write is refused.  --require-lint-clean\n"
		   "                 refuses a policy whose recorded lint verdict has errors\n"
		   "                 (=warning: or warnings, =note: any finding) or that\n"
		   "                 records none (compiled before format 3.5).\n"
		   "                 Exit 0 succeeded, 1 failed or a\n"
		   "                 limit was hit, 124 timed out, 125 harness error,\n"
		   "                 130 cancelled, 2 usage error\n"
		   "  serve --policies DIR --trusted-key KEY.pub [--socket PATH]\n"
		   "      [--socket-mode MODE] [--socket-group NAME] [--listen ADDR:PORT\n"
		   "      --tokens FILE] [--pool N] [--max-concurrency N] [--queue N]\n"
		   "      [--queue-timeout S] [--max-body BYTES] [--body-timeout S]\n"
		   "      [--inline-max BYTES] [--retain-seconds S] [--grace S]\n"
		   "      [--work-dir DIR] [--state-dir DIR | --ledger URL] [--secrets FILE]\n"
		   "      [--host-ids FIRST:COUNT] [--trust-dir DIR]\n"
		   "      [--require-lint-clean[=LEVEL]]\n"
		   "                 run executions for many requests over HTTP/1.1 + JSON\n"
		   "                 (docs/man/cordon.1): every *.cpol blob of --policies,\n"
		   "                 each signed by --trusted-key, or without it by a key of\n"
		   "                 the trust directory (" CORDON_TRUST_DIR " or\n"
		   "                 --trust-dir DIR; checked again on SIGHUP), and with\n"
		   "                 --require-lint-clean held to its recorded lint verdict;\n"
		   "                 a Unix socket (--socket-mode, default 0660) and/or TCP\n"
		   "                 (--listen, bearer tokens from --tokens); --pool warm\n"
		   "                 sandboxes per (app, agent) (default 2, 0 none);\n"
		   "                 --max-concurrency running (default twice the CPUs), then\n"
		   "                 --queue waiting (default 64) at most --queue-timeout s\n"
		   "                 (default 30), then 429; bodies up to --max-body (default\n"
		   "                 16m) within --body-timeout s (default 30); artifacts\n"
		   "                 inline up to --inline-max (default 1m) and kept\n"
		   "                 --retain-seconds (default 300) under --work-dir (default\n"
		   "                 /run/cordon/serve, rootless $XDG_RUNTIME_DIR/cordon-serve).\n"
		   "                 The ledger as cordon run's (--state-dir, or --ledger URL\n"
		   "                 on PostgreSQL, which replicas share), opened at start.\n"
		   "                 SIGHUP reloads the policies, SIGTERM drains (--grace s,\n"
		   "                 default 30, then running executions are cancelled).\n"
		   "                 Exit 0 after a drain, 1 could not start, 2 usage error\n"
		   "  check-policy [--trusted-key KEY.pub] [--trust-dir DIR] BLOB\n"
		   "                 load and validate BLOB exactly as a run would: format,\n"
		   "                 arch of this host, every field, SHA-256, and with\n"
		   "                 --trusted-key an Ed25519 signature by that key, else\n"
		   "                 one by a key of the trust directory when it holds any\n"
		   "  ledger list [--app APP] [--tool TOOL] [--tenant T] [--user U]\n"
		   "      [--state pending|done|in_doubt] [--json]\n"
		   "  ledger show [--tenant T] [--user U] [--json] APP TOOL MESSAGE_ID\n"
		   "  ledger forget [--tenant T] [--user U] [--force] --reason TEXT\n"
		   "      APP TOOL MESSAGE_ID\n"
		   "  ledger forgotten [--json]\n"
		   "  ledger check\n"
		   "                 the side-effect replay records of the ledger under\n"
		   "                 --state-dir DIR, or on the server of --ledger URL (each\n"
		   "                 takes them; the default is cordon run's): list them,\n"
		   "                 show one with its recorded answer, forget one\n"
		   "                 (deleted, with a row in the forget\n"
		   "                 log: time, uid, key, state, reason; a pending record\n"
		   "                 whose supervisor still runs only with --force), or\n"
		   "                 print the forget log.  --tenant and --user narrow a\n"
		   "                 MESSAGE_ID used by several.  check: the ledger's\n"
		   "                 identity (ledger.id against the database) and SQLite's\n"
		   "                 full integrity check (PostgreSQL: schema version, id and\n"
		   "                 counts), changing nothing.  Exit 0 ok, 1\n"
		   "                 not found (or refused, a problem found, the ledger\n"
		   "                 unreadable), 2 usage error\n"
		   "  --help         this text\n"
		   "  --version      version and blob format\n\n"
		   "Exit (check-policy): 0 valid, 1 rejected, 2 usage error or unreadable file.\n");
}

static int cmd_check_policy(int argc, char **argv)
{
	static const struct option opts[] = { { "trusted-key", required_argument, NULL, 'k' },
					      { "trust-dir", required_argument, NULL, 'T' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	struct blob_map m = { NULL, 0 };
	struct cpol_policy p;
	struct blob_error be;
	struct trust_verdict tv;
	struct pubkey key;
	const char *keypath = NULL, *trust_dir = NULL;
	char err[1024], hex[65];
	int c, rc = EXIT_USAGE;

	policy_init(&p);
	while ((c = getopt_long(argc, argv, "k:h", opts, NULL)) != -1) {
		switch (c) {
		case 'k': keypath = optarg; break;
		case 'T': trust_dir = optarg; break;
		case 'h': usage(stdout); return 0;
		default: fprintf(stderr, "Try 'cordon --help'.\n"); return EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "cordon check-policy: needs exactly one blob\nTry 'cordon --help'.\n");
		return EXIT_USAGE;
	}
	if (keypath != NULL && key_read_public(keypath, &key, err, sizeof(err)) != 0) {
		fprintf(stderr, "cordon check-policy: %s\n", err);
		return EXIT_USAGE;
	}
	if (blob_map_file(argv[optind], &m, &be) != 0) {
		fprintf(stderr, "cordon check-policy: %s\n", be.msg); /* it names the file */
		goto out;
	}
	rc = EXIT_NO;
	if (blob_load(m.data, m.len, CPOL_ARCH_X86_64, &p, &be) != 0) {
		fprintf(stderr, "cordon check-policy: %s: invalid policy blob: %s [field %s, byte %llu]\n",
			argv[optind], be.msg, be.field, (unsigned long long)be.offset);
		goto out;
	}
	/* As a run decides: --trusted-key, else the trust directory. */
	if (trust_check(&p, keypath, trust_dir, 0, &tv, err, sizeof(err)) != 0) {
		fprintf(stderr, "cordon check-policy: %s: refused: %s\n", argv[optind], err);
		goto out;
	}
	sodium_bin2hex(hex, sizeof(hex), p.sha256, 32);
	printf("%s: ok: app %s, sha256 %s, %s%s%s\n", argv[optind], p.meta.app, hex,
	       tv.verified ? "signature verified" : (p.signature.algo ? "signed (not checked)" : "unsigned"),
	       tv.verified && tv.dir[0] ? " by " : "", tv.verified && tv.dir[0] ? tv.key : "");
	rc = 0;
out:
	policy_free(&p);
	blob_unmap(&m);
	return rc;
}

static int cmd_run_signals(struct run_opts *o);

/* --ledger URL against --state-dir, for run, serve and ledger: NULL when
 * they fit, else why not.  Both at once is refused rather than one
 * silently winning: which ledger holds the replay records decides whether
 * a retried call runs again.  A value that is not a URL is refused here,
 * never taken for a directory. */
static const char *ledger_opt_problem(const char *state_dir, const char *ledger)
{
	if (ledger == NULL)
		return NULL;
	if (state_dir != NULL)
		return "--ledger and --state-dir exclude each other (the ledger is on the server or under the "
		       "directory, not both)";
	if (!ledger_is_url(ledger))
		return "--ledger takes a postgresql:// or postgres:// URL (docs/ledger.md, \"PostgreSQL\")";
	return NULL;
}

static int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = { { "policy", required_argument, NULL, 'p' },
					      { "code", required_argument, NULL, 'c' },
					      { "input", required_argument, NULL, 'i' },
					      { "context", required_argument, NULL, 'x' },
					      { "agent", required_argument, NULL, 'a' },
					      { "run-dir", required_argument, NULL, 'd' },
					      { "out", required_argument, NULL, 'o' },
					      { "trusted-key", required_argument, NULL, 'k' },
					      { "state-dir", required_argument, NULL, 's' },
					      { "ledger", required_argument, NULL, 'G' },
					      { "secrets", required_argument, NULL, 'S' },
					      { "host-ids", required_argument, NULL, 'H' },
					      { "trust-dir", required_argument, NULL, 'T' },
					      { "allow-unsigned", no_argument, NULL, 'U' },
					      { "require-lint-clean", optional_argument, NULL, 'L' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	struct run_opts o;
	enum lint_gate_level lv;
	struct hostid_range hr;
	char err[256];
	int c;

	memset(&o, 0, sizeof(o));
	o.lint_level = LINT_GATE_OFF;
	while ((c = getopt_long(argc, argv, "+p:c:i:x:a:d:o:k:s:S:H:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p': o.policy = optarg; break;
		case 'c': o.code = optarg; break;
		case 'i':
			if (o.ninputs == RUN_MAX_INPUTS) {
				fprintf(stderr, "cordon run: at most %d --input files\n", RUN_MAX_INPUTS);
				return EXIT_USAGE;
			}
			o.inputs[o.ninputs++] = optarg;
			break;
		case 'x': o.context = optarg; break;
		case 'a': o.agent = optarg; break;
		case 'd': o.run_dir = optarg; break;
		case 'o': o.out = optarg; break;
		case 'k': o.trusted_key = optarg; break;
		case 's': o.state_dir = optarg; break;
		case 'G': o.ledger = optarg; break;
		case 'S': o.secrets = optarg; break;
		case 'H': o.host_ids = optarg; break;
		case 'T': o.trust_dir = optarg; break;
		case 'U': o.allow_unsigned = 1; break;
		case 'L':
			if (lint_gate_parse(optarg, &lv) != 0) {
				fprintf(stderr, "cordon run: --require-lint-clean takes error, warning or note\n");
				return EXIT_USAGE;
			}
			o.lint_level = lv;
			break;
		case 'h': usage(stdout); return 0;
		default: fprintf(stderr, "Try 'cordon --help'.\n"); return EXIT_USAGE;
		}
	}
	if (optind != argc || o.policy == NULL || o.code == NULL) {
		fprintf(stderr, "cordon run: needs --policy BLOB and --code FILE, and no other arguments\n"
				"Try 'cordon --help'.\n");
		return EXIT_USAGE;
	}
	if (ledger_opt_problem(o.state_dir, o.ledger) != NULL) {
		fprintf(stderr, "cordon run: %s\n", ledger_opt_problem(o.state_dir, o.ledger));
		return EXIT_USAGE;
	}
	/* Checked here so a typo is a usage error before anything runs; run.c
	 * parses the same text again.  No environment variable: which host ids
	 * a root process hands to untrusted code is said on its command line. */
	if (o.host_ids != NULL && hostid_range_parse(o.host_ids, &hr, err, sizeof(err)) != 0) {
		fprintf(stderr, "cordon run: %s\n", err);
		return EXIT_USAGE;
	}
	/* Rootless, the only host id an unprivileged caller may map is its
	 * own: a range would be silently ignored, so it is refused. */
	if (o.host_ids != NULL && geteuid() != 0) {
		fprintf(stderr, "cordon run: --host-ids needs root; rootless, the executor runs as the caller "
				"(docs/runtime.md, \"Host identity\")\n");
		return EXIT_USAGE;
	}
	return cmd_run_signals(&o);
}

/* ---- signals: main()'s alone ------------------------------------------- */

/* SIGTERM, SIGINT and SIGHUP cancel the run: blocked here and read from a
 * signalfd by the run's wait, so they are events of its loop, never
 * asynchronous handlers.  SIGPIPE is ignored: a tool or peer that went away
 * is an error code to report, not the supervisor's end.  The executor
 * resets every signal before its exec (sequence.c step 10). */
static int cmd_run_signals(struct run_opts *o)
{
	sigset_t mask;
	int rc;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) != 0 ||
	    (o->cancel_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		fprintf(stderr, "cordon run: signals: %s\n", strerror(errno));
		return RUN_EXIT_HARNESS;
	}
	rc = run_execute(o, stdout, stderr);
	close(o->cancel_fd);
	return rc;
}

/* ---- cordon serve ------------------------------------------------------- */

static int serve_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int serve_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("cordon serve: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'cordon --help'.\n", stderr);
	return EXIT_USAGE;
}

/* A decimal count in [min, max]; the whole text, no sign, no spaces. */
static int parse_uint(const char *text, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (text[0] < '0' || text[0] > '9')
		return -1;
	errno = 0;
	v = strtoul(text, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Bytes: a count with an optional k, m or g (powers of 1024). */
static int parse_bytes(const char *text, unsigned long max, size_t *out)
{
	char num[32], *end;
	unsigned long long v, mul = 1;
	size_t len = strlen(text);

	if (len == 0 || len >= sizeof(num) || text[0] < '0' || text[0] > '9')
		return -1;
	memcpy(num, text, len + 1);
	switch (num[len - 1]) {
	case 'k': case 'K': mul = 1ull << 10; num[--len] = '\0'; break;
	case 'm': case 'M': mul = 1ull << 20; num[--len] = '\0'; break;
	case 'g': case 'G': mul = 1ull << 30; num[--len] = '\0'; break;
	default: break;
	}
	errno = 0;
	v = strtoull(num, &end, 10);
	if (len == 0 || errno != 0 || *end != '\0' || v > max / mul)
		return -1;
	*out = (size_t)(v * mul);
	return 0;
}

/* ADDR:PORT, [V6ADDR]:PORT: the port is checked here, the address by the
 * listener (getaddrinfo) when it binds. */
static int listen_ok(const char *text)
{
	const char *colon = strrchr(text, ':');
	unsigned long port;

	return colon != NULL && colon != text && parse_uint(colon + 1, 1, 65535, &port) == 0;
}

static int cmd_serve(int argc, char **argv)
{
	enum { O_SOCKET_MODE = 256, O_SOCKET_GROUP, O_MAX_CONC, O_QUEUE_TIMEOUT, O_MAX_BODY, O_BODY_TIMEOUT,
	       O_INLINE_MAX, O_RETAIN, O_GRACE, O_WORK_DIR, O_TRUST_DIR, O_LINT_CLEAN, O_LEDGER };
	static const struct option opts[] = { { "policies", required_argument, NULL, 'p' },
					      { "trusted-key", required_argument, NULL, 'k' },
					      { "socket", required_argument, NULL, 'u' },
					      { "socket-mode", required_argument, NULL, O_SOCKET_MODE },
					      { "socket-group", required_argument, NULL, O_SOCKET_GROUP },
					      { "listen", required_argument, NULL, 'l' },
					      { "tokens", required_argument, NULL, 't' },
					      { "pool", required_argument, NULL, 'n' },
					      { "max-concurrency", required_argument, NULL, O_MAX_CONC },
					      { "queue", required_argument, NULL, 'q' },
					      { "queue-timeout", required_argument, NULL, O_QUEUE_TIMEOUT },
					      { "max-body", required_argument, NULL, O_MAX_BODY },
					      { "body-timeout", required_argument, NULL, O_BODY_TIMEOUT },
					      { "inline-max", required_argument, NULL, O_INLINE_MAX },
					      { "retain-seconds", required_argument, NULL, O_RETAIN },
					      { "grace", required_argument, NULL, O_GRACE },
					      { "work-dir", required_argument, NULL, O_WORK_DIR },
					      { "state-dir", required_argument, NULL, 's' },
					      { "ledger", required_argument, NULL, O_LEDGER },
					      { "secrets", required_argument, NULL, 'S' },
					      { "host-ids", required_argument, NULL, 'H' },
					      { "trust-dir", required_argument, NULL, O_TRUST_DIR },
					      { "require-lint-clean", optional_argument, NULL, O_LINT_CLEAN },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	struct serve_opts o;
	enum lint_gate_level lv;
	struct hostid_range hr;
	struct sigaction sa;
	sigset_t block;
	unsigned long v;
	char err[256], *end;
	int c;

	memset(&o, 0, sizeof(o));
	o.lint_level = LINT_GATE_OFF;
	o.socket_mode = SERVE_DEFAULT_SOCKET_MODE;
	o.pool = SERVE_DEFAULT_POOL;
	o.queue = SERVE_DEFAULT_QUEUE;
	o.queue_timeout_s = SERVE_DEFAULT_QUEUE_TIMEOUT_S;
	o.max_body = SERVE_DEFAULT_MAX_BODY;
	o.body_timeout_s = SERVE_DEFAULT_BODY_TIMEOUT_S;
	o.inline_max = SERVE_DEFAULT_INLINE_MAX;
	o.retain_s = SERVE_DEFAULT_RETAIN_S;
	o.grace_s = SERVE_DEFAULT_GRACE_S;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'p': o.policies = optarg; break;
		case 'k': o.trusted_key = optarg; break;
		case 'u': o.socket = optarg; break;
		case O_SOCKET_MODE:
			errno = 0;
			v = strtoul(optarg, &end, 8);
			if (optarg[0] < '0' || optarg[0] > '7' || errno != 0 || *end != '\0' || v > 0777)
				return serve_usage("--socket-mode '%s': an octal mode of at most 0777, e.g. 0660", optarg);
			o.socket_mode = (mode_t)v;
			break;
		case O_SOCKET_GROUP: o.socket_group = optarg; break;
		case 'l':
			if (!listen_ok(optarg))
				return serve_usage("--listen '%s': ADDR:PORT, e.g. 127.0.0.1:8080 or [::1]:8080", optarg);
			o.listen = optarg;
			break;
		case 't': o.tokens = optarg; break;
		case 'n':
			if (parse_uint(optarg, 0, SERVE_MAX_POOL, &v) != 0)
				return serve_usage("--pool '%s': a count from 0 to " STR(SERVE_MAX_POOL), optarg);
			o.pool = (unsigned)v;
			break;
		case O_MAX_CONC:
			if (parse_uint(optarg, 1, SERVE_MAX_CONCURRENCY, &v) != 0)
				return serve_usage("--max-concurrency '%s': a count from 1 to " STR(SERVE_MAX_CONCURRENCY),
						   optarg);
			o.max_concurrency = (unsigned)v;
			break;
		case 'q':
			if (parse_uint(optarg, 0, SERVE_MAX_QUEUE, &v) != 0)
				return serve_usage("--queue '%s': a count from 0 to " STR(SERVE_MAX_QUEUE), optarg);
			o.queue = (unsigned)v;
			break;
		case O_QUEUE_TIMEOUT:
			if (parse_uint(optarg, 0, 3600, &v) != 0)
				return serve_usage("--queue-timeout '%s': seconds from 0 to 3600", optarg);
			o.queue_timeout_s = (unsigned)v;
			break;
		case O_MAX_BODY:
			if (parse_bytes(optarg, 1ul << 30, &o.max_body) != 0 || o.max_body < 1024)
				return serve_usage("--max-body '%s': bytes (k, m, g suffixes) from 1k to 1g", optarg);
			break;
		case O_BODY_TIMEOUT:
			if (parse_uint(optarg, 1, 3600, &v) != 0)
				return serve_usage("--body-timeout '%s': seconds from 1 to 3600", optarg);
			o.body_timeout_s = (unsigned)v;
			break;
		case O_INLINE_MAX:
			if (parse_bytes(optarg, 1ul << 30, &o.inline_max) != 0)
				return serve_usage("--inline-max '%s': bytes (k, m, g suffixes) up to 1g; 0: never inline",
						   optarg);
			break;
		case O_RETAIN:
			if (parse_uint(optarg, 0, 7 * 86400, &v) != 0)
				return serve_usage("--retain-seconds '%s': seconds from 0 to 604800", optarg);
			o.retain_s = (unsigned)v;
			break;
		case O_GRACE:
			if (parse_uint(optarg, 0, 3600, &v) != 0)
				return serve_usage("--grace '%s': seconds from 0 to 3600", optarg);
			o.grace_s = (unsigned)v;
			break;
		case O_WORK_DIR:
			if (optarg[0] != '/')
				return serve_usage("--work-dir '%s': an absolute path", optarg);
			o.work_dir = optarg;
			break;
		case O_TRUST_DIR: o.trust_dir = optarg; break;
		case O_LINT_CLEAN:
			if (lint_gate_parse(optarg, &lv) != 0)
				return serve_usage("--require-lint-clean='%s': error, warning or note", optarg);
			o.lint_level = lv;
			break;
		case 's': o.state_dir = optarg; break;
		case O_LEDGER: o.ledger = optarg; break;
		case 'S': o.secrets = optarg; break;
		case 'H': o.host_ids = optarg; break;
		case 'h': usage(stdout); return 0;
		default: fprintf(stderr, "Try 'cordon --help'.\n"); return EXIT_USAGE;
		}
	}
	if (optind != argc)
		return serve_usage("unexpected argument '%s'", argv[optind]);
	if (ledger_opt_problem(o.state_dir, o.ledger) != NULL)
		return serve_usage("%s", ledger_opt_problem(o.state_dir, o.ledger));
	if (o.policies == NULL)
		return serve_usage("needs --policies DIR (the signed *.cpol blobs)");
	/* Without --trusted-key the trust directory's keys sign (checked,
	 * with a message naming it, when the policies load). */

	if (o.socket == NULL && o.listen == NULL)
		return serve_usage("needs --socket PATH, --listen ADDR:PORT, or both");
	if (o.listen != NULL && o.tokens == NULL)
		return serve_usage("--listen needs --tokens FILE: every TCP request but /v1/health carries a token");
	if (o.listen == NULL && o.tokens != NULL)
		return serve_usage("--tokens applies to --listen only (the Unix socket's mode is its access control)");
	if (o.socket == NULL && (o.socket_group != NULL || o.socket_mode != SERVE_DEFAULT_SOCKET_MODE))
		return serve_usage("--socket-mode and --socket-group need --socket PATH");
	if (o.host_ids != NULL && hostid_range_parse(o.host_ids, &hr, err, sizeof(err)) != 0)
		return serve_usage("%s", err);
	if (o.host_ids != NULL && geteuid() != 0)
		return serve_usage("--host-ids needs root; rootless, the executor runs as the caller");
	/* The process-wide signal state, set here before any thread exists
	 * (sandbox.h): the three signals go to serve's signalfd alone, and a
	 * client that hangs up mid-answer is an error on that write, not the
	 * end of the server. */
	sigemptyset(&block);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	if (sigprocmask(SIG_BLOCK, &block, NULL) != 0 || sigaction(SIGPIPE, &sa, NULL) != 0) {
		fprintf(stderr, "cordon serve: signals: %s\n", strerror(errno));
		return EXIT_NO;
	}
	return serve_main(&o);
}

/* ---- cordon ledger ------------------------------------------------------ */

struct ledger_opts {
	const char *state_dir, *ledger, *reason;
	struct ledger_filter f;
	int json, force;
};

/* Text for a terminal: a control byte in a name (a user id from a request
 * context) could move the cursor or fake a line; it is shown as \xNN. */
static void put_text(const char *s)
{
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f || c == '\\')
			printf("\\x%02X", c);
		else
			putchar(c);
	}
}

/* "APP TOOL tenant=T user=U message=M", as list and forgotten print it. */
static void put_key(const char *app, const char *tool, const char *tenant, const char *user, const char *mid)
{
	put_text(app);
	putchar(' ');
	put_text(tool);
	fputs(" tenant=", stdout);
	put_text(tenant);
	fputs(" user=", stdout);
	put_text(user);
	fputs(" message=", stdout);
	put_text(mid);
}

static const char *owner_word(enum ledger_owner_state o)
{
	switch (o) {
	case LEDGER_OWNER_ALIVE:
		return "running";
	case LEDGER_OWNER_GONE:
		return "gone";
	case LEDGER_OWNER_UNKNOWN:
		return "unknown";
	default:
		return "-";
	}
}

static void put_time(int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;
	char buf[32];

	if (gmtime_r(&tt, &tm) == NULL || strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, sizeof(buf), "%" PRId64, t);
	fputs(buf, stdout);
}

static cJSON *record_json(const struct ledger_record *r, int with_response)
{
	cJSON *o = cJSON_CreateObject(), *resp;

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "app", r->app);
	cJSON_AddStringToObject(o, "tenant", r->tenant);
	cJSON_AddStringToObject(o, "user", r->user);
	cJSON_AddStringToObject(o, "tool", r->tool);
	cJSON_AddStringToObject(o, "messageId", r->message_id);
	cJSON_AddStringToObject(o, "state", r->owner == LEDGER_OWNER_GONE ? "in_doubt" : r->state);
	cJSON_AddStringToObject(o, "execId", r->exec_id);
	cJSON_AddNumberToObject(o, "created", (double)r->created);
	cJSON_AddNumberToObject(o, "updated", (double)r->updated);
	cJSON_AddStringToObject(o, "paramsSha256", r->params_sha256);
	if (r->response == NULL) {
		cJSON_AddNumberToObject(o, "ownerPid", (double)r->owner_pid);
		cJSON_AddStringToObject(o, "owner", owner_word(r->owner));
	}
	if (with_response && r->response != NULL) {
		resp = cJSON_Parse(r->response);
		cJSON_AddItemToObject(o, "response", resp != NULL ? resp : cJSON_CreateString(r->response));
	}
	return o;
}

static int list_one(const struct ledger_record *r, void *arg)
{
	cJSON *all = arg, *o;

	if (all != NULL) {
		if ((o = record_json(r, 0)) == NULL)
			return -1;
		cJSON_AddItemToArray(all, o);
		return 0;
	}
	printf("%-8s ", r->owner == LEDGER_OWNER_GONE ? "in_doubt" : r->state);
	put_key(r->app, r->tool, r->tenant, r->user, r->message_id);
	fputs(" created=", stdout);
	put_time(r->created);
	fputs(" updated=", stdout);
	put_time(r->updated);
	fputs(" exec=", stdout);
	put_text(r->exec_id);
	putchar('\n');
	return 0;
}

/* The one record show and forget name, and its whole key. */
struct ledger_pick {
	int count;
	char *tenant, *user;
	cJSON *shown; /* the record with its answer, copied while its row lives */
};

static int pick_one(const struct ledger_record *r, void *arg)
{
	struct ledger_pick *p = arg;

	if (++p->count > 1) {
		fprintf(stderr, "cordon ledger: message also used by tenant \"%s\" user \"%s\"\n", r->tenant, r->user);
		return 0;
	}
	free(p->tenant);
	free(p->user);
	p->tenant = strdup(r->tenant);
	p->user = strdup(r->user);
	cJSON_Delete(p->shown);
	p->shown = record_json(r, 1);
	if (p->tenant == NULL || p->user == NULL || p->shown == NULL)
		return -1;
	return 0;
}

static int ledger_usage(const char *msg)
{
	fprintf(stderr, "cordon ledger: %s\nTry 'cordon --help'.\n", msg);
	return EXIT_USAGE;
}

static void show_record(const cJSON *o)
{
	static const char *const keys[] = { "state", "app", "tool", "tenant", "user", "messageId", "execId",
					     "paramsSha256", "owner", "ownerPid" };
	const cJSON *it;
	char *resp;

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		it = cJSON_GetObjectItemCaseSensitive(o, keys[i]);
		if (it == NULL)
			continue;
		printf("%s: ", keys[i]);
		if (cJSON_IsString(it))
			put_text(it->valuestring);
		else
			printf("%.0f", it->valuedouble);
		putchar('\n');
	}
	fputs("created: ", stdout);
	put_time((int64_t)cJSON_GetObjectItemCaseSensitive(o, "created")->valuedouble);
	fputs("\nupdated: ", stdout);
	put_time((int64_t)cJSON_GetObjectItemCaseSensitive(o, "updated")->valuedouble);
	putchar('\n');
	it = cJSON_GetObjectItemCaseSensitive(o, "response");
	if (it != NULL && (resp = cJSON_Print(it)) != NULL) {
		printf("response: %s\n", resp);
		free(resp);
	}
}

static int forgotten_one(const struct ledger_forgotten *r, void *arg)
{
	cJSON *all = arg, *o;

	if (all != NULL) {
		if ((o = cJSON_CreateObject()) == NULL)
			return -1;
		cJSON_AddNumberToObject(o, "time", (double)r->time);
		cJSON_AddNumberToObject(o, "uid", (double)r->uid);
		cJSON_AddStringToObject(o, "app", r->app);
		cJSON_AddStringToObject(o, "tenant", r->tenant);
		cJSON_AddStringToObject(o, "user", r->user);
		cJSON_AddStringToObject(o, "tool", r->tool);
		cJSON_AddStringToObject(o, "messageId", r->message_id);
		cJSON_AddStringToObject(o, "state", r->state);
		cJSON_AddStringToObject(o, "execId", r->exec_id);
		cJSON_AddBoolToObject(o, "forced", r->forced);
		cJSON_AddStringToObject(o, "reason", r->reason);
		cJSON_AddItemToArray(all, o);
		return 0;
	}
	put_time(r->time);
	printf(" uid=%" PRId64 " state=", r->uid);
	put_text(r->state);
	putchar(' ');
	put_key(r->app, r->tool, r->tenant, r->user, r->message_id);
	fputs(r->forced ? " forced reason=" : " reason=", stdout);
	put_text(r->reason);
	putchar('\n');
	return 0;
}

static void check_line(const char *line, int problem, void *arg)
{
	int *problems = arg;

	*problems += problem;
	fputs(problem ? "problem: " : "ok: ", stdout);
	put_text(line);
	putchar('\n');
}

/* cordon ledger check: what ledger_check() finds, one line each; nothing
 * is created or changed, so it may run beside the supervisors. */
static int ledger_check_cmd(const char *dir)
{
	char err[600];
	int problems = 0, r;

	if (dir[0] == '\0') {
		fprintf(stderr, "cordon ledger: no state directory: give --state-dir\n");
		return EXIT_NO;
	}
	r = ledger_check(dir, check_line, &problems, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "cordon ledger: %s\n", err);
		return EXIT_NO;
	}
	/* A URL is not repeated: it may carry a password. */
	if (r > 0)
		fprintf(stderr, "cordon ledger: %d problem%s in the ledger %s%s (docs/ledger.md, recovering)\n",
			problems, problems == 1 ? "" : "s", ledger_is_url(dir) ? "on its server" : "under ",
			ledger_is_url(dir) ? "" : dir);
	return r > 0 ? EXIT_NO : 0;
}

static int cmd_ledger(int argc, char **argv)
{
	static const struct option opts[] = { { "state-dir", required_argument, NULL, 's' },
					      { "ledger", required_argument, NULL, 'G' },
					      { "app", required_argument, NULL, 'a' },
					      { "tool", required_argument, NULL, 't' },
					      { "tenant", required_argument, NULL, 'T' },
					      { "user", required_argument, NULL, 'u' },
					      { "state", required_argument, NULL, 'S' },
					      { "reason", required_argument, NULL, 'r' },
					      { "force", no_argument, NULL, 'f' },
					      { "json", no_argument, NULL, 'j' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	struct ledger_opts o;
	struct ledger_pick pick = { 0 };
	struct ledger *l = NULL;
	cJSON *all = NULL;
	const char *verb;
	char dir[PATH_MAX], err[600], prev[16];
	int c, rc = EXIT_USAGE, nargs, r;

	memset(&o, 0, sizeof(o));
	/* Options go before or after the verb (--state-dir DIR list, or
	 * list --state-dir DIR): the verb is the first word that is not one. */
	while ((c = getopt_long(argc, argv, "s:a:t:T:u:S:r:fjh", opts, NULL)) != -1) {
		switch (c) {
		case 's': o.state_dir = optarg; break;
		case 'G': o.ledger = optarg; break;
		case 'a': o.f.app = optarg; break;
		case 't': o.f.tool = optarg; break;
		case 'T': o.f.tenant = optarg; break;
		case 'u': o.f.user = optarg; break;
		case 'S': o.f.state = optarg; break;
		case 'r': o.reason = optarg; break;
		case 'f': o.force = 1; break;
		case 'j': o.json = 1; break;
		case 'h': usage(stdout); return 0;
		default: return ledger_usage("bad option");
		}
	}
	if (optind >= argc)
		return ledger_usage("needs list, show, forget, forgotten or check");
	verb = argv[optind++];
	nargs = argc - optind;
	/* Each verb takes only its own options: a --reason given to list is
	 * a mistake to point out, not to ignore. */
	if (strcmp(verb, "list") == 0) {
		if (nargs != 0 || o.reason || o.force)
			return ledger_usage("list takes --app, --tool, --tenant, --user, --state, --json and no arguments");
		if (o.f.state && strcmp(o.f.state, "pending") && strcmp(o.f.state, "done") &&
		    strcmp(o.f.state, "in_doubt"))
			return ledger_usage("--state is pending, done or in_doubt");
	} else if (strcmp(verb, "show") == 0 || strcmp(verb, "forget") == 0) {
		int forget = verb[0] == 'f';

		if (nargs != 3 || o.f.app || o.f.tool || o.f.state || (!forget && (o.reason || o.force)) ||
		    (forget && o.json))
			return ledger_usage(forget ? "forget takes APP TOOL MESSAGE_ID, --reason TEXT, and --tenant, "
						     "--user, --force"
						   : "show takes APP TOOL MESSAGE_ID, and --tenant, --user, --json");
		if (forget && (o.reason == NULL || o.reason[0] == '\0'))
			return ledger_usage("forget needs --reason TEXT: the forget log keeps why");
		o.f.app = argv[optind];
		o.f.tool = argv[optind + 1];
		o.f.message_id = argv[optind + 2];
	} else if (strcmp(verb, "forgotten") == 0) {
		if (nargs != 0 || o.reason || o.force || o.f.app || o.f.tool || o.f.tenant || o.f.user || o.f.state)
			return ledger_usage("forgotten takes --json and no arguments");
	} else if (strcmp(verb, "check") == 0) {
		if (nargs != 0 || o.reason || o.force || o.json || o.f.app || o.f.tool || o.f.tenant || o.f.user ||
		    o.f.state)
			return ledger_usage("check takes --state-dir or --ledger and no arguments");
	} else {
		return ledger_usage("needs list, show, forget, forgotten or check");
	}

	if (ledger_opt_problem(o.state_dir, o.ledger) != NULL)
		return ledger_usage(ledger_opt_problem(o.state_dir, o.ledger));
	rc = EXIT_NO;
	if (o.ledger != NULL) {
		if (strlen(o.ledger) >= sizeof(dir))
			return ledger_usage("--ledger: the URL is too long");
		memcpy(dir, o.ledger, strlen(o.ledger) + 1);
	} else if (ledger_state_dir(o.state_dir, geteuid() != 0, dir, sizeof(dir), err, sizeof(err)) != 0) {
		fprintf(stderr, "cordon ledger: %s\n", err);
		return EXIT_USAGE;
	}
	if (strcmp(verb, "check") == 0)
		return ledger_check_cmd(dir);
	if (!ledger_exists(dir)) {
		fprintf(stderr, "cordon ledger: no ledger in %s\n", dir[0] ? dir : "(no state directory: give --state-dir)");
		return EXIT_NO;
	}
	if (ledger_open(dir, &l, err, sizeof(err)) != 0) {
		fprintf(stderr, "cordon ledger: %s\n", err);
		return EXIT_NO;
	}
	if (o.json && (all = cJSON_CreateArray()) == NULL)
		goto oom;
	if (strcmp(verb, "list") == 0 || strcmp(verb, "forgotten") == 0) {
		r = verb[0] == 'l' ? ledger_replay_list(l, &o.f, list_one, all, err, sizeof(err))
				   : ledger_forget_log(l, forgotten_one, all, err, sizeof(err));
		if (r != 0)
			goto failed;
		if (all != NULL) {
			char *text = cJSON_Print(all);

			if (text == NULL)
				goto oom;
			printf("%s\n", text);
			free(text);
		}
		rc = 0;
		goto out;
	}
	/* show, forget: exactly one record, whoever's it is when --tenant
	 * and --user are not given. */
	if (ledger_replay_list(l, &o.f, pick_one, &pick, err, sizeof(err)) != 0)
		goto failed;
	if (pick.count == 0) {
		fprintf(stderr, "cordon ledger: no record of message %s for %s %s\n", o.f.message_id, o.f.app, o.f.tool);
		goto out;
	}
	if (pick.count > 1) {
		fprintf(stderr, "cordon ledger: %d records of message %s; name one with --tenant and --user\n",
			pick.count, o.f.message_id);
		rc = EXIT_USAGE;
		goto out;
	}
	if (verb[0] == 's') {
		char *text;

		if (o.json) {
			if ((text = cJSON_Print(pick.shown)) == NULL)
				goto oom;
			printf("%s\n", text);
			free(text);
		} else {
			show_record(pick.shown);
		}
		rc = 0;
		goto out;
	}
	o.f.tenant = pick.tenant;
	o.f.user = pick.user;
	switch (ledger_replay_forget(l, &o.f, o.reason, o.force, (uint32_t)getuid(), prev, sizeof(prev), err,
				     sizeof(err))) {
	case LEDGER_FORGOT:
		printf("forgot %s %s message %s (tenant \"%s\", user \"%s\"), was %s\n", o.f.app, o.f.tool,
		       o.f.message_id, pick.tenant, pick.user, prev);
		rc = 0;
		break;
	case LEDGER_FORGET_NOT_FOUND:
		fprintf(stderr, "cordon ledger: the record went meanwhile\n");
		break;
	case LEDGER_FORGET_OWNER_ALIVE:
		fprintf(stderr,
			"cordon ledger: the record is pending and its supervisor may still be running the tool; "
			"forgetting it lets the next call run the tool again beside it (--force to do it anyway)\n");
		break;
	default:
		goto failed;
	}
	goto out;
oom:
	snprintf(err, sizeof(err), "out of memory");
failed:
	fprintf(stderr, "cordon ledger: %s\n", err);
	rc = EXIT_NO;
out:
	cJSON_Delete(all);
	cJSON_Delete(pick.shown);
	free(pick.tenant);
	free(pick.user);
	ledger_close(l);
	return rc;
}

/* What a command printed must reach its reader: stdout is buffered, so a
 * full disk or /dev/full shows only at this flush (or in an earlier
 * write's error flag), and exit 0 would claim an answer nobody got.
 * `cordon run` wrote and closed its result itself (run.c) and reports
 * there; this covers the rest (check-policy, ledger, --version). */
static int main_stdout_done(const char *cmd, int rc)
{
	int flushed = fflush(stdout), e = errno;

	if (flushed == 0 && !ferror(stdout))
		return rc;
	fprintf(stderr, "cordon %s: writing to stdout: %s\n", cmd, flushed != 0 ? strerror(e) : "write error");
	return rc != 0 ? rc : EXIT_NO;
}

static int main_dispatch(int argc, char **argv);

int main(int argc, char **argv)
{
	int rc = main_dispatch(argc, argv);

	return main_stdout_done(argc > 1 ? argv[1] : "", rc);
}

static int main_dispatch(int argc, char **argv)
{
	if (sodium_init() < 0) {
		fprintf(stderr, "cordon: libsodium failed to initialise\n");
		return EXIT_USAGE;
	}
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("cordon %s (blob format %d.%d)\n", cordon_version, CPOL_VERSION_MAJOR, CPOL_VERSION_MINOR);
		return 0;
	}
	if (strcmp(argv[1], "run") == 0)
		return cmd_run(argc - 1, argv + 1);
	if (strcmp(argv[1], "serve") == 0)
		return cmd_serve(argc - 1, argv + 1);
	if (strcmp(argv[1], "check-policy") == 0)
		return cmd_check_policy(argc - 1, argv + 1);
	if (strcmp(argv[1], "ledger") == 0)
		return cmd_ledger(argc - 1, argv + 1);
	fprintf(stderr, "cordon: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
