/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_bridge.c - tool call round trips through the bridge (make bench).
 *
 * docs/bench.md: a denied call costs tens of microseconds; an allowed one
 * the tool's own cost plus well under a millisecond.  Each series is
 * sequential calls over one connection, as the executor makes them, timed
 * from the request's write to the answer's last byte, in rounds: every
 * series makes a tenth of its calls in each round, so the floors and the
 * calls measured against them meet the same moments of a busy machine.
 * Every call's time is a sample (bench/figure.h).  The floors are
 * measured in the same run: a plain Unix-socket echo with the same framing
 * and the same request bytes (what any socket round trip costs here); the
 * tool alone (/bin/cat started with posix_spawn, params on stdin, answer
 * read to EOF); and the same tool through tool_exec_run(), the bridge's
 * runner, so an allowed call's overhead splits into runner and bridge.
 * The bridge is the real one, with its audit file and, for the budgeted
 * tools, its SQLite ledger under a temporary state directory in $TMPDIR
 * (a counted call commits, synchronous=FULL, so the disk under it shows; a
 * refused one only reads); only the sandbox around the caller is left out.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "compiler/compile.h"
#include "cordon/blob.h"
#include "runtime/supervise/bridge.h"
#include "runtime/supervise/request.h"
#include "runtime/supervise/tool_exec.h"
#include "bench/figure.h"

extern char **environ;

/* Calls that never start a process (with the warm-up under
 * BRIDGE_MAX_CALLS), and calls that fork the tool or commit to the ledger;
 * fewer of each under BENCH_QUICK=1. */
#define N_FAST figure_runs(9000, 2000)
#define N_SLOW figure_runs(600, 200)
#define WARMUP_FAST 50 /* per round, on each fresh connection */
#define WARMUP_SLOW 3

static const char app_yaml[] = "version: 1\n"
			       "app: bench\n"
			       "execution:\n"
			       "  executor:\n"
			       "    env: { LANG: C.UTF-8 }\n"
			       "agents:\n"
			       "  bench: { tools: [bench.echo, bench.counted, bench.spent] }\n"
			       "  other: { tools: [bench.other] }\n";

/* One trivial tool under four names: no budget, a budget too large to
 * run out (every call is a ledger transaction), a budget of one (spent by
 * the warm-up, so each call after it is refused by the ledger), and one
 * the agent does not list. */
static const char tools_yaml[] = "version: 1\n"
				 "tools:\n"
				 "  - id: bench.echo\n"
				 "    description: Answers its params.\n"
				 "    params: { text: { type: string, min_length: 1, max_length: 16, required: true } }\n"
				 "    timeout: 5s\n"
				 "    exec: [/bin/cat]\n"
				 "  - id: bench.counted\n"
				 "    description: Answers its params, counted.\n"
				 "    params: { text: { type: string, min_length: 1, max_length: 16, required: true } }\n"
				 "    timeout: 5s\n"
				 "    exec: [/bin/cat]\n"
				 "    max_calls: 1000000\n"
				 "  - id: bench.spent\n"
				 "    description: Answers its params, once a run.\n"
				 "    params: { text: { type: string, min_length: 1, max_length: 16, required: true } }\n"
				 "    timeout: 5s\n"
				 "    exec: [/bin/cat]\n"
				 "    max_calls: 1\n"
				 "  - id: bench.other\n"
				 "    description: Answers its params, for another agent.\n"
				 "    params: { text: { type: string, required: true } }\n"
				 "    timeout: 5s\n"
				 "    exec: [/bin/cat]\n";

struct stats {
	double p50, p90, p99;
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static struct stats stats_of(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return (struct stats){ v[n * 50 / 100], v[n * 90 / 100], v[n * 99 / 100] };
}

static int read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = read(fd, (char *)buf + got, len - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t len)
{
	size_t put = 0;

	while (put < len) {
		ssize_t w = write(fd, (const char *)buf + put, len - put);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		put += (size_t)w;
	}
	return 0;
}

/* One frame (header and body in one buffer) for the request text. */
static size_t frame_build(char *out, size_t cap, const char *text)
{
	size_t len = strlen(text);

	if (len + 4 > cap)
		return 0;
	request_frame_put((unsigned char *)out, (uint32_t)len);
	memcpy(out + 4, text, len);
	return len + 4;
}

/* The answer frame into buf (NUL-terminated); -1 on a cut or oversize. */
static int frame_read(int fd, char *buf, size_t cap)
{
	unsigned char h[4];
	uint32_t len;

	if (read_full(fd, h, 4) != 0)
		return -1;
	len = request_frame_len(h);
	if (len >= cap || read_full(fd, buf, len) != 0)
		return -1;
	buf[len] = '\0';
	return 0;
}

static int unix_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = strlen(path);
	int fd;

	if (len >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sa.sun_path, path, len);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * warm + n round trips of one request over fd; every answer must contain
 * want (a denied call that came back for another reason would time the
 * wrong path).  v gets n microsecond figures.  Returns 0, or -1 with the
 * offending answer printed.
 */
static int series_run(int fd, const char *name, const char *request, const char *want, size_t warm, size_t n,
		      double *v)
{
	char req[1024], ans[4096];
	size_t len = frame_build(req, sizeof(req), request);

	for (size_t i = 0; i < warm + n; i++) {
		double t0 = now_us(), t;

		if (len == 0 || write_full(fd, req, len) != 0 || frame_read(fd, ans, sizeof(ans)) != 0) {
			fprintf(stderr, "bench_bridge: %s: the connection failed at call %zu\n", name, i);
			return -1;
		}
		t = now_us() - t0;
		if (strstr(ans, want) == NULL) {
			fprintf(stderr, "bench_bridge: %s: unexpected answer: %s\n", name, ans);
			return -1;
		}
		if (i >= warm)
			v[i - warm] = t;
	}
	return 0;
}

/* --- the floors ------------------------------------------------------- */

/* The echo server: one connection at a time until the listener is shut
 * down, the bridge's framing, a fixed small answer.  No checks and no
 * JSON: what a round trip costs by itself. */
static void *echo_main(void *arg)
{
	int lfd = *(int *)arg, fd;
	static const char answer[] = "{\"v\":1,\"id\":\"r1\",\"ok\":true,\"result\":{}}";
	char frame[128], body[4096];
	size_t alen = frame_build(frame, sizeof(frame), answer);

	while ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		while (frame_read(fd, body, sizeof(body)) == 0 && write_full(fd, frame, alen) == 0)
			;
		close(fd);
	}
	return NULL;
}

/* The tool alone: /bin/cat with the params on stdin, its answer read to
 * the end, reaped.  The params are a few bytes, far below a pipe's
 * buffer, so writing all before reading cannot deadlock. */
static double cat_once(const char *params)
{
	static char *const argv[] = { "/bin/cat", NULL };
	posix_spawn_file_actions_t fa;
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, st, ok = 0;
	char buf[256];
	double t0 = now_us();
	pid_t pid = -1;
	ssize_t r;

	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
		goto out;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	ok = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) == 0;
	posix_spawn_file_actions_destroy(&fa);
	close(in[0]);
	close(out[1]);
	in[0] = out[1] = -1;
	if (ok && write_full(in[1], params, strlen(params)) != 0)
		ok = 0;
	close(in[1]);
	in[1] = -1;
	while ((r = read(out[0], buf, sizeof(buf))) > 0 || (r < 0 && errno == EINTR))
		;
	if (pid > 0 && (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0))
		ok = 0;
out:
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (out[i] >= 0)
			close(out[i]);
	}
	return ok ? now_us() - t0 : -1;
}

static int cat_series(const char *params, size_t warm, size_t n, double *v)
{
	for (size_t i = 0; i < warm + n; i++) {
		double t = cat_once(params);

		if (t < 0) {
			fprintf(stderr, "bench_bridge: /bin/cat could not be run\n");
			return -1;
		}
		if (i >= warm)
			v[i - warm] = t;
	}
	return 0;
}

/* The bridge's own runner without the bridge: fork, its own process
 * group, a pidfd and the poll loop, what every allowed call pays on top of
 * the tool itself. */
static int exec_series(const char *params, size_t warm, size_t n, double *v)
{
	static const char *const argv[] = { "/bin/cat", NULL };
	static char *const envp[] = { "PATH=/usr/bin:/bin", "LANG=C.UTF-8", NULL };
	struct tool_exec_req req = { .argv = argv,
				     .envp = envp,
				     .input = params,
				     .input_len = strlen(params),
				     .timeout_ms = 5000,
				     .cancel_fd = -1 };
	char msg[256];

	for (size_t i = 0; i < warm + n; i++) {
		struct tool_exec_res res;
		double t0 = now_us(), t;
		int ok = tool_exec_run(&req, &res, msg, sizeof(msg)) == 0;

		t = now_us() - t0;
		if (!ok || res.outcome != TOOL_EXEC_OK) {
			fprintf(stderr, "bench_bridge: tool_exec_run /bin/cat: %s\n", ok ? res.reason : msg);
			if (ok)
				tool_exec_res_free(&res);
			return -1;
		}
		tool_exec_res_free(&res);
		if (i >= warm)
			v[i - warm] = t;
	}
	return 0;
}

/* --- setup ------------------------------------------------------------ */

/* Compiled, emitted and loaded back, so the bridge sees what a run sees. */
static int policy_build(const char *src_dir, struct cpol_policy *q)
{
	char dir[4096];
	const char *dirs[1] = { dir };
	struct compile_options opt = { .policy_dirs = dirs, .npolicy_dirs = 1 };
	struct src_file app = { 0 }, tools = { 0 };
	const struct src_file *refs[1] = { &tools };
	struct cpol_policy p;
	struct blob_error be;
	struct diags d;
	uint8_t *blob = NULL;
	size_t blen = 0;
	int rc = -1;

	snprintf(dir, sizeof(dir), "%s/policies", src_dir);
	diags_init(&d);
	policy_init(&p);
	policy_init(q);
	if (src_from_mem("app.yaml", app_yaml, strlen(app_yaml), YDOC_MAX_BYTES, &app, &d) != 0 ||
	    src_from_mem("tools.yaml", tools_yaml, strlen(tools_yaml), YDOC_MAX_BYTES, &tools, &d) != 0 ||
	    compile_sources_opt(&app, refs, 1, &opt, &p, &d) != 0) {
		diags_print(&d, stderr);
		goto out;
	}
	if (blob_emit(&p, &blob, &blen, &be) != 0 || blob_load(blob, blen, CPOL_ARCH_X86_64, q, &be) != 0) {
		fprintf(stderr, "bench_bridge: the policy does not round-trip: %s\n", be.msg);
		goto out;
	}
	rc = 0;
out:
	free(blob);
	policy_free(&p);
	diags_free(&d);
	src_free(&app);
	src_free(&tools);
	return rc;
}

struct series {
	const char *label;
	const char *figure; /* its name in the report; NULL for a floor */
	int floor;	    /* the series its figure is the ratio to */
	enum { BY_BRIDGE, BY_ECHO, BY_SPAWN, BY_TOOL_EXEC } how;
	const char *request; /* BY_BRIDGE, BY_ECHO: the request text */
	const char *want;
	size_t warm, n;
	double *v;
	struct stats s;
};

static void print_row(const struct series *x, const struct stats *floor, const struct stats *tool)
{
	printf("  %-36s p50 %7.1f  p90 %7.1f  p99 %7.1f us", x->label, x->s.p50, x->s.p90, x->s.p99);
	if (floor != NULL)
		printf("  = %6.1fx echo p50", x->s.p50 / floor->p50);
	if (tool != NULL)
		printf(", %+.0f us over the tool alone", x->s.p50 - tool->p50);
	printf("\n");
}

struct chunk_env {
	const char *sock;      /* the bridge's socket path */
	const char *echo_sock; /* the echo floor's */
	const char *params;    /* the tool floors' stdin */
};

/*
 * Round r of rounds for one series: its warm-up, then its share of calls
 * into x->v.  A socket series gets a fresh connection, and the bridge a
 * fresh bridge (a run is allowed BRIDGE_MAX_CALLS audited calls, fewer
 * than the rounds make together).  spend: a request made once first,
 * untimed, that must be allowed.  0, or -1 with err set or the reason
 * printed.
 */
static int series_chunk(struct series *x, size_t r, size_t rounds, const struct bridge_cfg *cfg,
			const struct chunk_env *e, const char *spend, char *err, size_t errlen)
{
	size_t share = x->n / rounds;
	double *v = x->v + r * share;
	struct bridge *b = NULL;
	int lfd = -1, fd = -1, rc = -1;

	snprintf(err, errlen, "%s: round %zu failed", x->label, r);
	if (x->how == BY_SPAWN)
		return cat_series(e->params, x->warm, share, v);
	if (x->how == BY_TOOL_EXEC)
		return exec_series(e->params, x->warm, share, v);
	if (x->how == BY_BRIDGE) {
		unlink(e->sock);
		if (bridge_listen(e->sock, 0, 0, 0, &lfd, err, errlen) != 0 ||
		    bridge_start(cfg, &lfd, &b, err, errlen) != 0)
			goto out;
	}
	if ((fd = unix_connect(x->how == BY_BRIDGE ? e->sock : e->echo_sock)) < 0) {
		snprintf(err, errlen, "%s: connect: %s", x->label, strerror(errno));
		goto out;
	}
	if (spend != NULL && series_run(fd, "spend", spend, "\"ok\":true", 0, 1, v) != 0)
		goto out;
	rc = series_run(fd, x->label, x->request, x->want, x->warm, share, v);
out:
	if (fd >= 0)
		close(fd);
	bridge_free(b);
	if (lfd >= 0)
		close(lfd);
	return rc;
}

#define REQ(tool, params)                                                                                    \
	"{\"v\":1,\"token\":\"%s\",\"id\":\"r1\",\"tool\":\"" tool "\",\"params\":" params "}"

int main(void)
{
	const char *src = getenv("CORDON_SRC"), *tmp = getenv("TMPDIR"), *params = "{\"text\":\"hello\"}";
	char dir[256], sock[300], echo_sock[300], state[300], audit[300], token[REQUEST_TOKEN_HEX + 1], err[256];
	char req[6][512];
	unsigned char rnd[32];
	struct cpol_policy pol;
	struct bridge_cfg cfg;
	struct chunk_env env = { sock, echo_sock, params };
	cJSON *ctx = NULL;
	pthread_t echo_thread;
	int echo_started = 0, elfd = -1, audit_fd = -1, rc = 1;
	size_t rounds = figure_runs(10, 4);
	/* The floor first, the tool floors right before the allowed calls
	 * they are compared with (print_row's references depend on it). */
	struct series s[] = {
		{ .label = "unix-socket echo (floor)", .how = BY_ECHO, .request = req[0], .want = "\"ok\":true", .warm = WARMUP_FAST,
		  .n = N_FAST },
		{ .label = "denied: unknown_tool", .figure = "bridge.denied.unknown_tool", .request = req[1],
		  .want = "\"unknown_tool\"", .warm = WARMUP_FAST, .n = N_FAST },
		{ .label = "denied: invalid_params", .figure = "bridge.denied.invalid_params", .request = req[2],
		  .want = "\"invalid_params\"", .warm = WARMUP_FAST, .n = N_FAST },
		{ .label = "denied: budget_exceeded (ledger)", .figure = "bridge.denied.budget_exceeded",
		  .request = req[3], .want = "\"budget_exceeded\"", .warm = WARMUP_SLOW, .n = N_SLOW },
		{ .label = "/bin/cat alone (tool floor)", .how = BY_SPAWN, .warm = WARMUP_SLOW, .n = N_SLOW },
		{ .label = "/bin/cat by tool_exec_run", .figure = "bridge.tool_exec_run", .floor = 4,
		  .how = BY_TOOL_EXEC, .warm = WARMUP_SLOW, .n = N_SLOW },
		{ .label = "allowed: /bin/cat, no budget", .figure = "bridge.allowed", .floor = 4, .request = req[4],
		  .want = "\"ok\":true", .warm = WARMUP_SLOW, .n = N_SLOW },
		{ .label = "allowed: /bin/cat, budget (ledger)", .figure = "bridge.allowed.budget", .floor = 4,
		  .request = req[5], .want = "\"ok\":true", .warm = WARMUP_SLOW, .n = N_SLOW },
	};
	/* The report's peer for each floor series. */
	static const char *const floor_name[] = { [0] = "unix-socket echo, same framing",
						  [4] = "/bin/cat alone (posix_spawn)" };
	size_t ns = sizeof(s) / sizeof(s[0]);
	double t_all = now_us();

	if (sodium_init() < 0)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	randombytes_buf(rnd, sizeof(rnd));
	sodium_bin2hex(token, sizeof(token), rnd, sizeof(rnd));
	snprintf(req[0], sizeof(req[0]), REQ("bench.echo", "{\"text\":\"hello\"}"), token);
	snprintf(req[1], sizeof(req[1]), REQ("bench.other", "{\"text\":\"hello\"}"), token);
	snprintf(req[2], sizeof(req[2]), REQ("bench.echo", "{\"text\":\"far longer than sixteen\"}"), token);
	snprintf(req[3], sizeof(req[3]), REQ("bench.spent", "{\"text\":\"hello\"}"), token);
	snprintf(req[4], sizeof(req[4]), REQ("bench.echo", "{\"text\":\"hello\"}"), token);
	snprintf(req[5], sizeof(req[5]), REQ("bench.counted", "{\"text\":\"hello\"}"), token);

	snprintf(dir, sizeof(dir), "%s/cordon-bench-bridge-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL) {
		fprintf(stderr, "bench_bridge: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	snprintf(sock, sizeof(sock), "%s/tools.sock", dir);
	snprintf(echo_sock, sizeof(echo_sock), "%s/echo.sock", dir);
	snprintf(state, sizeof(state), "%s/state", dir);
	snprintf(audit, sizeof(audit), "%s/tool-calls.jsonl", dir);
	policy_init(&pol);
	for (size_t i = 0; i < ns; i++) {
		s[i].n -= s[i].n % rounds;
		if ((s[i].v = calloc(s[i].n, sizeof(double))) == NULL)
			goto out;
	}
	if (policy_build(src ? src : ".", &pol) != 0)
		goto out;
	ctx = cJSON_Parse("{\"tenant\":\"bench\",\"user\":\"bench\",\"roles\":[]}");
	audit_fd = open(audit, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (ctx == NULL || audit_fd < 0) {
		fprintf(stderr, "bench_bridge: %s: %s\n", audit, strerror(errno));
		goto out;
	}
	cfg = (struct bridge_cfg){ .pol = &pol,
				   .exec_id = "bench",
				   .token = token,
				   .context = ctx,
				   .agent = "bench",
				   .state_dir = state,
				   .audit_fd = audit_fd,
				   .peer_uid = geteuid(),
				   .child = getpid(),
				   /* as root the tools switch to an unprivileged
				    * identity, as under cordon run; no cgroup */
				   .tool_uid = 65534,
				   .tool_gid = 65534,
				   .tool_ids = geteuid() == 0 };

	/* The floor: the same request bytes to a server that only frames. */
	if (bridge_listen(echo_sock, 0, 0, 0, &elfd, err, sizeof(err)) != 0)
		goto fail;
	if (pthread_create(&echo_thread, NULL, echo_main, &elfd) != 0)
		goto out;
	echo_started = 1;

	/* Rounds: every series makes its share of calls in each round, so a
	 * burst of other work on the machine meets the floors and the calls
	 * measured against them alike.  bench.spent's one call is spent on
	 * each fresh bridge (a budget is per run), so its series is all
	 * refusals. */
	for (size_t r = 0; r < rounds; r++)
		for (size_t i = 0; i < ns; i++)
			if (series_chunk(&s[i], r, rounds, &cfg, &env, i == 3 ? req[3] : NULL, err, sizeof(err)) != 0)
				goto fail;
	for (size_t i = 0; i < ns; i++)
		s[i].s = stats_of(s[i].v, s[i].n);

	printf("bench_bridge: sequential round trips over one connection, request %zu bytes, ledger in %s\n",
	       strlen(req[4]), tmp && *tmp ? tmp : "/tmp");
	for (size_t i = 0; i < ns; i++)
		print_row(&s[i], i == 0 ? NULL : &s[0].s, i >= 5 ? &s[4].s : NULL);
	printf("  (%zu calls each without a process or commit, %zu with; %.1f s in all)\n", N_FAST, N_SLOW,
	       (now_us() - t_all) / 1e6);
	for (size_t i = 0; i < ns; i++) {
		const struct series *fl = &s[s[i].floor];
		struct figure f = { s[i].figure, "us", 0, s[i].v, s[i].n, floor_name[s[i].floor], fl->v, fl->n };

		if (s[i].figure != NULL && figure_emit(&f) != 0) {
			fprintf(stderr, "bench_bridge: figure %s not recorded in %s\n", f.name, getenv("BENCH_FIGURES"));
			goto out;
		}
	}
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "bench_bridge: %s\n", err);
out:
	if (elfd >= 0)
		shutdown(elfd, SHUT_RDWR);
	if (echo_started)
		pthread_join(echo_thread, NULL);
	if (elfd >= 0)
		close(elfd);
	if (audit_fd >= 0)
		close(audit_fd);
	cJSON_Delete(ctx);
	policy_free(&pol);
	for (size_t i = 0; i < ns; i++)
		free(s[i].v);
	unlink(sock);
	unlink(echo_sock);
	unlink(audit);
	{
		static const char *const files[] = { "ledger.sqlite3", "ledger.sqlite3-wal", "ledger.sqlite3-shm",
						     "ledger.id" };
		char p[400];

		for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
			snprintf(p, sizeof(p), "%s/%s", state, files[i]);
			unlink(p);
		}
	}
	rmdir(state);
	rmdir(dir);
	return rc;
}
