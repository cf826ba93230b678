/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_tool_exec.c - running a tool implementation
 * (runtime/supervise/tool_exec.c): real processes, /bin/sh and python3.
 *
 * Parts:
 *   - the happy path: params on stdin, the answer on stdout, stderr kept
 *     apart and bounded; a large stdin fully written; the environment is
 *     exactly what tool_env_build made; no fd of ours reaches the tool;
 *     signal dispositions and the mask are the tool's own;
 *   - ends: timeout kills the group (a forked grandchild included), cancel
 *     by fd (also before start: the tool never runs), endless output cut at
 *     max_output fast, an exit leaving a grandchild on stdout, a tool that
 *     never reads a large stdin, exit status, signal, exec failure;
 *   - two calls at once from two threads; many starts (half failing
 *     execs) while another thread mallocs leave the supervisor's signal
 *     dispositions, request and mappings as they were;
 *   - the answer: one JSON value, nothing after it, no NUL, no \u0000, no
 *     control byte, no duplicate key at any depth;
 *   - a failure's detail: the last bytes of stderr in order and the count
 *     of those before; the tool's own error message and code; exit 75
 *     retryable, any other exit not; every secret value scrubbed before a
 *     bound (none shows its start); well-formed UTF-8, cut on characters.
 *   - identity (root): uid/gid switched, no groups, every capability set
 *     empty (bounding and ambient too), no_new_privs, cwd /; the control
 *     without set_ids keeps root's; the cgroup join: the tool writes
 *     itself into the cgroup.procs files it is given before exec, and a
 *     setsid()'d grandchild is in the cgroup too (root, real cgroups).
 * Every test also checks that no fd leaked and SIGPIPE did not stay
 * pending.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/utf8.h"
#include "runtime/launch/cgroup.h"
#include "runtime/supervise/secrets.h"
#include "runtime/supervise/tool_exec.h"
#include "tests/unit/unit_fds.h"

#define PY "/usr/bin/python3"

static char *const no_env[] = { "PATH=/usr/bin:/bin", NULL };

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Every test: no fd left behind, no SIGPIPE left pending, the mask as
 * before. */
struct fx {
	int fds;
	sigset_t mask;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return -1;
	f->fds = unit_fd_count();
	pthread_sigmask(SIG_SETMASK, NULL, &f->mask);
	alarm(60); /* a hang fails the test instead of the session */
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	sigset_t pending, mask;

	alarm(0);
	assert_int_equal(unit_fd_count(), f->fds);
	sigpending(&pending);
	assert_false(sigismember(&pending, SIGPIPE));
	pthread_sigmask(SIG_SETMASK, NULL, &mask);
	for (int s = 1; s < NSIG; s++)
		assert_int_equal(sigismember(&mask, s), sigismember(&f->mask, s));
	free(f);
	return 0;
}

static struct tool_exec_req req_of(const char *const *argv, const char *input)
{
	struct tool_exec_req r = {
		.argv = argv,
		.envp = no_env,
		.input = input,
		.input_len = input ? strlen(input) : 0,
		.timeout_ms = 10000,
		.max_output = TOOL_EXEC_MAX_OUTPUT,
		.cancel_fd = -1,
	};
	return r;
}

static void run_ok(const struct tool_exec_req *r, struct tool_exec_res *res)
{
	char msg[256] = "";
	int rc = tool_exec_run(r, res, msg, sizeof(msg));

	if (rc != 0)
		fail_msg("tool_exec_run: %s", msg);
	assert_non_null(res->out);
	assert_non_null(res->err);
	assert_int_equal(res->out[res->out_len], '\0');
	assert_int_equal(res->err[res->err_len], '\0');
}

/* A process is gone when /proc no longer has it or it is a zombie waiting
 * for init (which some containers never reap). */
static int pid_gone(pid_t pid)
{
	char p[64], buf[512];
	FILE *f;
	char *rp;
	int gone;

	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	if ((f = fopen(p, "r")) == NULL)
		return 1;
	gone = fgets(buf, sizeof(buf), f) == NULL || ((rp = strrchr(buf, ')')) != NULL && rp[1] == ' ' &&
							(rp[2] == 'Z' || rp[2] == 'X'));
	fclose(f);
	return gone;
}

static int pid_gone_within(pid_t pid, int ms)
{
	for (int i = 0; i < ms / 10; i++) {
		if (pid_gone(pid))
			return 1;
		usleep(10000);
	}
	return pid_gone(pid);
}

/* ---- the happy path -------------------------------------------------------- */

static void test_echo_stdin_to_stdout(void **state)
{
	const char *argv[] = { "/bin/cat", NULL };
	struct tool_exec_req r = req_of(argv, "{\"to\": \"a@example.org\", \"n\": [1, 2]}");
	struct tool_exec_res res;
	char why[256];
	cJSON *v;

	(void)state;
	run_ok(&r, &res);
	assert_int_equal(res.outcome, TOOL_EXEC_OK);
	assert_int_equal(res.out_len, r.input_len);
	assert_memory_equal(res.out, r.input, r.input_len);
	assert_int_equal(res.err_len, 0);
	assert_string_equal(res.reason, "");
	v = tool_exec_parse_output(res.out, res.out_len, why, sizeof(why));
	assert_non_null(v);
	assert_string_equal(cJSON_GetObjectItem(v, "to")->valuestring, "a@example.org");
	cJSON_Delete(v);
	tool_exec_res_free(&res);
}

/* 4 MiB through a pipe of 64 KiB: every byte is written, non-blocking,
 * and stdin is closed after it (wc would wait otherwise). */
static void test_large_stdin_written_whole(void **state)
{
	const char *argv[] = { "/usr/bin/wc", "-c", NULL };
	size_t len = 4u << 20;
	char *in = malloc(len + 1);
	struct tool_exec_req r;
	struct tool_exec_res res;

	(void)state;
	assert_non_null(in);
	memset(in, 'x', len);
	in[len] = '\0';
	r = req_of(argv, in);
	run_ok(&r, &res);
	assert_int_equal(res.outcome, TOOL_EXEC_OK);
	assert_int_equal(strtoul(res.out, NULL, 10), len);
	tool_exec_res_free(&res);
	free(in);
}

/* stderr is kept apart from the answer, its last TOOL_EXEC_MAX_STDERR
 * bytes, and the rest drained: 200 KiB of it neither blocks the tool nor
 * fails the call. */
static void test_stderr_bounded_and_drained(void **state)
{
	const char *argv[] = { PY, "-I", "-c",
			       "import sys\n"
			       "sys.stderr.write('e' * 200000); sys.stderr.flush()\n"
			       "print('{\"ok\": true}')",
			       NULL };
	struct tool_exec_req r = req_of(argv, NULL);
	struct tool_exec_res res;

	(void)state;
	run_ok(&r, &res);
	assert_int_equal(res.outcome, TOOL_EXEC_OK);
	assert_string_equal(res.out, "{\"ok\": true}\n");
	assert_int_equal(res.err_len, TOOL_EXEC_MAX_STDERR);
	assert_int_equal(res.err[0], 'e');
	assert_int_equal(res.err[TOOL_EXEC_MAX_STDERR - 1], 'e');
	assert_int_equal(res.err_dropped, 200000 - TOOL_EXEC_MAX_STDERR);
	assert_int_equal(res.out_truncated, 0);
	tool_exec_res_free(&res);
}

/* The ring keeps the last bytes in order however the writes fall across
 * its edge: byte k of the stream is 'a' + 7k mod 26, written in uneven
 * chunks; a short stderr drops nothing. */
static void test_stderr_keeps_the_tail(void **state)
{
	const char *argv[] = { PY, "-I", "-c",
			       "import sys\n"
			       "b = bytes(97 + (k * 7) % 26 for k in range(100003))\n"
			       "i = 0\n"
			       "while i < len(b):\n"
			       "    n = 1 + (i * 13) % 5003\n"
			       "    sys.stderr.buffer.write(b[i:i + n]); sys.stderr.flush(); i += n\n"
			       "sys.exit(1)",
			       NULL };
	const char *small[] = { "/bin/sh", "-c", "echo oops >&2; exit 1", NULL };
	struct tool_exec_req r = req_of(argv, NULL);
	struct tool_exec_res res;

	(void)state;
	run_ok(&r, &res);
	assert_int_equal(res.outcome, TOOL_EXEC_FAILED);
	assert_int_equal(res.err_len, TOOL_EXEC_MAX_STDERR);
	assert_int_equal(res.err_dropped, 100003 - TOOL_EXEC_MAX_STDERR);
	for (size_t j = 0; j < res.err_len; j++)
		if (res.err[j] != 'a' + (char)(((res.err_dropped + j) * 7) % 26))
			fail_msg("stderr byte %zu of the tail is out of order", j);
	tool_exec_res_free(&res);
	r = req_of(small, NULL);
	run_ok(&r, &res);
	assert_string_equal(res.err, "oops\n");
	assert_int_equal(res.err_dropped, 0);
	tool_exec_res_free(&res);
}

#define TE_SECRET "hunter2-te-secret-VALUE"

/* A tool given TE_SECRET (from the environment, as secrets_load(NULL)
 * reads it) that runs script. */
static void fail_run(const char *script, struct tool_exec_res *res, struct tool_exec_failure *f)
{
	static const char *names[] = { "TE_SECRET" };
	const struct cpol_tool t = { .id = "t.fail", .env_from = { names, 1 } };
	const char *argv[] = { PY, "-I", "-c", script, NULL };
	struct tool_exec_req r = req_of(argv, NULL);
	struct secrets *s = NULL;
	char err[128];

	setenv("TE_SECRET", TE_SECRET, 1);
	assert_int_equal(secrets_load(NULL, &s, err, sizeof(err)), 0);
	run_ok(&r, res);
	assert_int_equal(tool_exec_failure_build(res, &t, s, f), 0);
	secrets_free(s);
	unsetenv("TE_SECRET");
}

static void assert_utf8(const char *s)
{
	assert_non_null(s);
	assert_int_equal(utf8_prefix(s, strlen(s)), strlen(s));
}

static void test_failure_detail(void **state)
{
	struct tool_exec_res res;
	struct tool_exec_failure f;

	(void)state;
	/* exit 75: retryable; its error answer and its stderr, scrubbed */
	fail_run("import sys, json\n"
		 "json.dump({'error': {'message': 'login refused for " TE_SECRET "', 'code': 'smtp_auth'}}, sys.stdout)\n"
		 "sys.stderr.buffer.write(b'x' * 5000 + b'pw=" TE_SECRET " bad\\xff\\x00\\n')\n"
		 "sys.exit(75)",
		 &res, &f);
	assert_int_equal(f.retryable, 1);
	assert_string_equal(f.message, "login refused for [secret TE_SECRET]");
	assert_int_equal(f.message_cut, 0);
	assert_string_equal(f.code, "smtp_auth");
	assert_utf8(f.stderr_tail);
	assert_true(strlen(f.stderr_tail) <= TOOL_EXEC_MAX_STDERR_TAIL);
	if (strstr(f.stderr_tail, "pw=[secret TE_SECRET] bad\xEF\xBF\xBD\xEF\xBF\xBD\n") == NULL)
		fail_msg("stderr tail: %s", f.stderr_tail);
	assert_null(strstr(f.stderr_tail, "hunter2"));
	assert_true(f.stderr_dropped > 5000 - TOOL_EXEC_MAX_STDERR_TAIL);
	tool_exec_failure_free(&f);
	tool_exec_res_free(&res);

	/* exit 1: not retryable; {"error": "text"} is a message too */
	fail_run("import sys\nprint('{\"error\": \"disk full\"}'); sys.exit(1)", &res, &f);
	assert_int_equal(f.retryable, 0);
	assert_string_equal(f.message, "disk full");
	assert_null(f.code);
	assert_null(f.stderr_tail);
	tool_exec_failure_free(&f);
	tool_exec_res_free(&res);

	/* a signal speaks for no one: no message, not retryable */
	fail_run("import os, signal, sys\nprint('{\"error\": \"x\"}'); sys.stdout.flush()\n"
		 "os.kill(os.getpid(), signal.SIGKILL)",
		 &res, &f);
	assert_int_equal(f.retryable, 0);
	assert_null(f.message);
	tool_exec_failure_free(&f);
	tool_exec_res_free(&res);
}

/* A message over its bound: scrubbed first, so a value across the bound
 * shows none of its start; cut on a character. */
static void test_failure_bounds(void **state)
{
	char script[512];
	struct tool_exec_res res;
	struct tool_exec_failure f;

	(void)state;
	snprintf(script, sizeof(script),
		 "import sys, json\njson.dump({'error': {'message': 'a' * %d + '" TE_SECRET "'}}, sys.stdout)\n"
		 "sys.exit(2)",
		 TOOL_EXEC_MAX_ERROR_MESSAGE - 4);
	fail_run(script, &res, &f);
	assert_utf8(f.message);
	assert_int_equal(strlen(f.message), TOOL_EXEC_MAX_ERROR_MESSAGE);
	assert_int_equal(f.message_cut, 1);
	assert_null(strstr(f.message, "hunt"));
	assert_string_equal(f.message + TOOL_EXEC_MAX_ERROR_MESSAGE - 4, "[sec");
	tool_exec_failure_free(&f);
	tool_exec_res_free(&res);

	/* two-byte characters: the cut falls on one */
	fail_run("import sys, json\njson.dump({'error': {'message': '\\u00e9' * 700, 'code': 'c' * 100}}, sys.stdout)\n"
		 "sys.exit(1)",
		 &res, &f);
	assert_utf8(f.message);
	assert_int_equal(strlen(f.message), TOOL_EXEC_MAX_ERROR_MESSAGE);
	assert_int_equal(strlen(f.code), TOOL_EXEC_MAX_ERROR_CODE);
	tool_exec_failure_free(&f);
	tool_exec_res_free(&res);
}

static void test_text_fit(void **state)
{
	const char e10[] = "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9";
	size_t cut = 0;
	char *w;

	(void)state;
	w = tool_exec_text_fit("ab\0c\xff", 5, 100, 0, &cut);
	assert_string_equal(w, "ab\xEF\xBF\xBD" "c\xEF\xBF\xBD");
	assert_int_equal(cut, 0);
	free(w);
	/* a lone lead byte at the end, a continuation byte at the start */
	w = tool_exec_text_fit("\x80x\xC3", 3, 100, 1, &cut);
	assert_string_equal(w, "\xEF\xBF\xBDx\xEF\xBF\xBD");
	free(w);
	w = tool_exec_text_fit(e10, 20, 5, 1, &cut);
	assert_string_equal(w, "\xC3\xA9\xC3\xA9");
	assert_int_equal(cut, 16);
	free(w);
	w = tool_exec_text_fit(e10, 20, 5, 0, &cut);
	assert_string_equal(w, "\xC3\xA9\xC3\xA9");
	assert_int_equal(cut, 16);
	free(w);
}

static int has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; p != NULL && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, line, n) == 0 && (p[n] == '\n' || p[n] == '\0'))
			return 1;
	return 0;
}

static int count_lines(const char *text)
{
	int n = 0;

	for (const char *p = text; *p; p++)
		n += *p == '\n';
	return n;
}

/* The tool sees exactly the environment tool_env_build made: PATH, LANG,
 * the extras, its declared secret; nothing of the test process's own. */
static void test_environment_is_exactly_built(void **state)
{
	const char *argv[] = { "/usr/bin/env", NULL };
	const char *names[] = { "CORDON_TEST_MAIL_TOKEN" };
	const char *extra[] = { "CORDON_USER=alice", "CORDON_MESSAGE_ID=m-17", NULL };
	struct cpol_tool t = { .id = "mail.send", .env_from = { names, 1 } };
	struct secrets *s = NULL;
	struct tool_exec_req r;
	struct tool_exec_res res;
	char err[256] = "", **envp = NULL;

	(void)state;
	setenv("CORDON_TEST_MAIL_TOKEN", "tok-from-env", 1);
	setenv("CORDON_TEST_UNDECLARED", "must-not-leak", 1);
	assert_int_equal(secrets_load(NULL, &s, err, sizeof(err)), 0);
	if (tool_env_build(&t, s, extra, &envp, err, sizeof(err)) != 0)
		fail_msg("tool_env_build: %s", err);
	r = req_of(argv, NULL);
	r.envp = envp;
	run_ok(&r, &res);
	assert_int_equal(res.outcome, TOOL_EXEC_OK);
	assert_true(has_line(res.out, "PATH=/usr/local/bin:/usr/bin:/bin"));
	assert_true(has_line(res.out, "LANG=C.UTF-8"));
	assert_true(has_line(res.out, "CORDON_USER=alice"));
	assert_true(has_line(res.out, "CORDON_MESSAGE_ID=m-17"));
	assert_true(has_line(res.out, "CORDON_TEST_MAIL_TOKEN=tok-from-env"));
	assert_null(strstr(res.out, "CORDON_TEST_UNDECLARED"));
	assert_null(strstr(res.out, "HOME="));
	assert_int_equal(count_lines(res.out), 5);
	tool_exec_res_free(&res);
	tool_env_free(envp);
	secrets_free(s);
	unsetenv("CORDON_TEST_MAIL_TOKEN");
	unsetenv("CORDON_TEST_UNDECLARED");
}

/* No descriptor of the supervisor's reaches the tool, even one opened
 * without O_CLOEXEC; and fds 0-2 are the three pipes. */
static void test_only_stdio_reaches_the_tool(void **state)
{
	const char *argv[] = { PY, "-I", "-c",
			       "import os, stat\n"
			       "fds = []\n"
			       "for fd in range(4096):\n"
			       "    try: os.fstat(fd); fds.append(fd)\n"
			       "    except OSError: pass\n"
			       "print(fds, [stat.S_ISFIFO(os.fstat(i).st_mode) for i in range(3)])",
			       NULL };
	struct tool_exec_req r = req_of(argv, "{}");
	struct tool_exec_res res;
	/* No O_CLOEXEC on purpose; high, so that no dup in the child lands on
	 * it by chance. */
	int low = open("/dev/null", O_RDONLY), leaky = fcntl(low, F_DUPFD, 100);

	(void)state;
	assert_true(low >= 3 && leaky >= 100);
	run_ok(&r, &res);
	close(leaky);
	close(low);
	assert_int_equal(res.outcome, TOOL_EXEC_OK);
	assert_string_equal(res.out, "[0, 1, 2] [True, True, True]\n");
	tool_exec_res_free(&res);
}

/* A supervisor started with fds 0-2 closed gets pipe ends on 0-2; one may
 * sit on the very number it must become in the child, where dup2(fd, fd)
 * would keep close-on-exec.  Run in a forked copy of the test, which
 * closes its own 0-2 and answers by exit status. */
static void test_supervisor_with_stdio_closed(void **state)
{
	const char *argv[] = { "/bin/cat", NULL };
	int status = 0;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct tool_exec_req r = req_of(argv, "{\"closed\": true}");
		struct tool_exec_res res;
		char msg[256];
		int ok;

		close(0);
		close(1);
		close(2);
		ok = tool_exec_run(&r, &res, msg, sizeof(msg)) == 0 && res.outcome == TOOL_EXEC_OK &&
		     res.out_len == r.input_len && memcmp(res.out, r.input, r.input_len) == 0;
		_exit(ok ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* The calling thread ignores SIGUSR1 and blocks SIGTERM (as the bridge
 * threads do); the tool must get default dispositions and an empty mask,
 * so both signals end it. */
static void test_signals_are_reset_in_the_tool(void **state)
{
	const char *usr1[] = { "/bin/sh", "-c", "kill -USR1 $$; echo survived", NULL };
	const char *term[] = { "/bin/sh", "-c", "kill -TERM $$; echo survived", NULL };
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	sigset_t block, prev;
	struct tool_exec_req r;
	struct tool_exec_res res;

	(void)state;
	sigaction(SIGUSR1, &ign, &old);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &prev);
	r = req_of(usr1, NULL);
	run_ok(&r, &res);
	assert_int_equal(res.outcome, TOOL_EXEC_FAILED);
	assert_string_equal(res.reason, "killed by signal 10 (SIGUSR1)");
	tool_exec_res_free(&res);
	r = req_of(term, NULL);
	run_ok(&r, &res);
	assert_int_equal(res.outcome, TOOL_EXEC_FAILED);
	assert_string_equal(res.reason, "killed by signal 15 (SIGTERM)");
	tool_exec_res_free(&res);
	pthread_sigmask(SIG_SETMASK, &prev, NULL);
	sigaction(SIGUSR1, &old, NULL);
}

/* ---- how a run ends -------------------------------------------------------- */

/* A tool that forks a sleeper and waits: at 300 ms both are killed, and
 * the call returns at once (the sleeper held stdout). */
static void test_timeout_kills_the_group(void **state)
{
	const char *argv[] = { "/bin/sh", "-c", "sleep 60 & echo $!; wait", NULL };
	struct tool_exec_req r = req_of(argv, NULL);
	struct tool_exec_res res;
	uint64_t t0 = ms_now(), took;
	long child;

	(void)state;
	r.timeout_ms = 300;
	run_ok(&r, &res);
	took = ms_now() - t0;
	print_message("timeout 300 ms: returned after %llu ms\n", (unsigned long long)took);
	assert_int_equal(res.outcome, TOOL_EXEC_TIMEOUT);
	assert_non_null(strstr(res.reason, "timed out after 300 ms"));
	assert_true(took >= 300 && took < 1500);
	child = strtol(res.out, NULL, 10);
	assert_true(child > 1);
	assert_true(pid_gone_within((pid_t)child, 500));
	tool_exec_res_free(&res);
}

/* The tool exits at once, leaving a grandchild that holds stdout: the
 * answer is the tool's, we do not wait for the grandchild, and it is
 * killed with the group. */
static void test_exit_kills_stragglers(void **state)
{
	const char *argv[] = { "/bin/sh", "-c", "sleep 60 & echo \"{\\\"pid\\\": $!}\"", NULL };
	struct tool_exec_req r = req_of(argv, NULL);
	struct tool_exec_res res;
	uint64_t t0 = ms_now(), took;
	char why[256];
	cJSON *v;

	(void)state;
	run_ok(&r, &res);
	took = ms_now() - t0;
	assert_int_equal(res.outcome, TOOL_EXEC_OK);
	assert_true(took < 1000);
	v = tool_exec_parse_output(res.out, res.out_len, why, sizeof(why));
	assert_non_null(v);
	assert_true(pid_gone_within((pid_t)cJSON_GetObjectItem(v, "pid")->valuedouble, 500));
	cJSON_Delete(v);
	tool_exec_res_free(&res);
}

static int timer_after_ms(int ms)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	struct itimerspec it = { .it_value = { ms / 1000, (long)(ms % 1000) * 1000000L } };

	assert_true(fd >= 0);
	assert_int_equal(timerfd_settime(fd, 0, &it, NULL), 0);
	return fd;
}

static void test_cancel_fd_kills(void **state)
{
	const char *argv[] = { "/bin/sh", "-c", "sleep 60 & echo $!; wait", NULL };
	struct tool_exec_req r = req_of(argv, NULL);
	struct tool_exec_res res;
	uint64_t t0 = ms_now(), took;

	(void)state;
	r.cancel_fd = timer_after_ms(200);
	run_ok(&r, &res);
	took = ms_now() - t0;
	assert_int_equal(res.outcome, TOOL_EXEC_CANCELLED);
	assert_true(took >= 200 && took < 1500);
	assert_true(pid_gone_within((pid_t)strtol(res.out, NULL, 10), 500));
	/* Looked at, not read: it still says "cancel" to the other calls. */
	{
		uint64_t ticks;

		assert_int_equal(read(r.cancel_fd, &ticks, sizeof(ticks)), (ssize_t)sizeof(ticks));
	}
	close(r.cancel_fd);
	tool_exec_res_free(&res);
}

/* Cancelled before it starts: a side-effecting tool must not run. */
static void test_cancelled_before_start_never_runs(void **state)
{
	char dir[] = "/tmp/cordon-te-XXXXXX", mark[64], script[128];
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	struct tool_exec_req r = req_of(argv, NULL);
	struct tool_exec_res res;
	int p[2];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(mark, sizeof(mark), "%s/ran", dir);
	snprintf(script, sizeof(script), "touch %s", mark);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(write(p[1], "x", 1), 1);
	r.cancel_fd = p[0];
	run_ok(&r, &res);
	assert_int_equal(res.outcome, TOOL_EXEC_CANCELLED);
	assert_string_equal(res.reason, "cancelled before it started");
	assert_int_equal(access(mark, F_OK), -1);
	/* The same request without the cancel runs (the check above can fail). */
	r.cancel_fd = -1;
	tool_exec_res_free(&res);
	run_ok(&r, &res);
	assert_int_equal(res.outcome, TOOL_EXEC_OK);
	assert_int_equal(access(mark, F_OK), 0);
	tool_exec_res_free(&res);
	unlink(mark);
	rmdir(dir);
	close(p[0]);
	close(p[1]);
}

/* Endless output is cut at max_output and the tool killed: `yes` at 64 KiB
 * and at the 1 MiB maximum, python trying to write 1 GiB. */
static void endless(const char *const *argv, size_t max, const char *what)
{
	struct tool_exec_req r = req_of(argv, NULL);
	struct tool_exec_res res;
	uint64_t t0 = ms_now(), took;

	r.max_output = max;
	run_ok(&r, &res);
	took = ms_now() - t0;
	print_message("%s, max_output %zu: FAILED after %llu ms\n", what, max, (unsigned long long)took);
	assert_int_equal(res.outcome, TOOL_EXEC_FAILED);
	assert_int_equal(res.out_truncated, 1);
	assert_int_equal(res.out_len, max);
	assert_non_null(strstr(res.reason, "wrote more than"));
	assert_true(took < 2000);
	tool_exec_res_free(&res);
}

static void test_endless_output_cut_fast(void **state)
{
	const char *yes[] = { "/usr/bin/yes", NULL };
	const char *py[] = { PY, "-I", "-c",
			     "import sys\n"
			     "b = b'x' * (1 << 20)\n"
			     "for _ in range(1024): sys.stdout.buffer.write(b)\n",
			     NULL };
	/* Shrugs off the closed pipe (python ignores SIGPIPE) and lingers:
	 * only the kill ends it before its 10 s timeout. */
	const char *stubborn[] = { PY, "-I", "-c",
				   "import os, time\n"
				   "b = b'x' * 65536\n"
				   "try:\n"
				   "    while True: os.write(1, b)\n"
				   "except BrokenPipeError:\n"
				   "    time.sleep(60)\n",
				   NULL };

	(void)state;
	endless(yes, 64 << 10, "yes");
	endless(yes, TOOL_EXEC_MAX_OUTPUT, "yes");
	endless(py, TOOL_EXEC_MAX_OUTPUT, "python writing 1 GiB");
	endless(stubborn, TOOL_EXEC_MAX_OUTPUT, "python lingering after EPIPE");
}

/* Exactly max_output bytes is within bounds. */
static void test_output_at_the_bound_is_ok(void **state)
{
	const char *argv[] = { PY, "-I", "-c", "import sys; sys.stdout.write('7' * 4096)", NULL };
	struct tool_exec_req r = req_of(argv, NULL);
	struct tool_exec_res res;

	(void)state;
	r.max_output = 4096;
	run_ok(&r, &res);
	assert_int_equal(res.outcome, TOOL_EXEC_OK);
	assert_int_equal(res.out_len, 4096);
	tool_exec_res_free(&res);
	r.max_output = 4095;
	run_ok(&r, &res);
	assert_int_equal(res.outcome, TOOL_EXEC_FAILED);
	assert_int_equal(res.out_truncated, 1);
	tool_exec_res_free(&res);
}

/* A tool that never reads 8 MiB of stdin: we neither hang nor die of
 * SIGPIPE when it exits with our input unread. */
static void test_unread_stdin_does_not_hang(void **state)
{
	const char *argv[] = { "/bin/sh", "-c", "sleep 0.2; echo '{}'", NULL };
	size_t len = 8u << 20;
	char *in = malloc(len + 1);
	struct tool_exec_req r;
	struct tool_exec_res res;
	uint64_t t0 = ms_now();

	(void)state;
	assert_non_null(in);
	memset(in, ' ', len);
	in[len] = '\0';
	r = req_of(argv, in);
	run_ok(&r, &res);
	assert_int_equal(res.outcome, TOOL_EXEC_OK);
	assert_string_equal(res.out, "{}\n");
	assert_true(ms_now() - t0 < 2000);
	tool_exec_res_free(&res);
	free(in);
}

static void test_exit_status_and_signal(void **state)
{
	const char *three[] = { "/bin/sh", "-c", "echo partial; exit 3", NULL };
	const char *nine[] = { "/bin/sh", "-c", "kill -9 $$", NULL };
	struct tool_exec_req r = req_of(three, NULL);
	struct tool_exec_res res;

	(void)state;
	run_ok(&r, &res);
	assert_int_equal(res.outcome, TOOL_EXEC_FAILED);
	assert_string_equal(res.reason, "exited with status 3");
	assert_string_equal(res.out, "partial\n"); /* kept for the log */
	assert_true(WIFEXITED(res.wstatus) && WEXITSTATUS(res.wstatus) == 3);
	tool_exec_res_free(&res);
	r = req_of(nine, NULL);
	run_ok(&r, &res);
	assert_int_equal(res.outcome, TOOL_EXEC_FAILED);
	assert_string_equal(res.reason, "killed by signal 9 (SIGKILL)");
	tool_exec_res_free(&res);
}

static void test_exec_failure_reasons(void **state)
{
	const char *missing[] = { "/nonexistent/cordon-tool", NULL };
	const char *notexec[] = { "/etc/hostname", NULL };
	const char *dir[] = { "/tmp", NULL };
	struct tool_exec_req r = req_of(missing, "{}");
	struct tool_exec_res res;

	(void)state;
	run_ok(&r, &res);
	assert_int_equal(res.outcome, TOOL_EXEC_FAILED);
	assert_string_equal(res.reason, "cannot execute /nonexistent/cordon-tool: No such file or directory");
	tool_exec_res_free(&res);
	if (access("/etc/hostname", F_OK) == 0 && access("/etc/hostname", X_OK) != 0) {
		r = req_of(notexec, NULL);
		run_ok(&r, &res);
		assert_string_equal(res.reason, "cannot execute /etc/hostname: Permission denied");
		tool_exec_res_free(&res);
	}
	r = req_of(dir, NULL);
	run_ok(&r, &res);
	assert_string_equal(res.reason, "cannot execute /tmp: Permission denied");
	tool_exec_res_free(&res);
}

/* The caller's mistakes are errors of the call, never a run. */
static void test_bad_requests(void **state)
{
	const char *rel[] = { "bin/tool", NULL };
	const char *ok[] = { "/bin/true", NULL };
	struct tool_exec_req r = req_of(rel, NULL);
	struct tool_exec_res res;
	char msg[256];

	(void)state;
	assert_int_equal(tool_exec_run(&r, &res, msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "absolute"));
	assert_null(res.out);
	r = req_of(ok, NULL);
	r.max_output = TOOL_EXEC_MAX_OUTPUT + 1;
	assert_int_equal(tool_exec_run(&r, &res, msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "max_output"));
	r = req_of(ok, NULL);
	r.timeout_ms = 0;
	assert_int_equal(tool_exec_run(&r, &res, msg, sizeof(msg)), -1);
	r = req_of(ok, NULL);
	r.envp = NULL;
	assert_int_equal(tool_exec_run(&r, &res, msg, sizeof(msg)), -1);
}

/* ---- threads ------------------------------------------------------------- */

struct call {
	const char *const *argv;
	const char *input;
	uint64_t timeout_ms;
	struct tool_exec_res res;
	int rc;
	char msg[256];
};

static void *call_thread(void *p)
{
	struct call *c = p;
	struct tool_exec_req r = req_of(c->argv, c->input);

	r.timeout_ms = c->timeout_ms;
	c->rc = tool_exec_run(&r, &c->res, c->msg, sizeof(c->msg));
	return NULL;
}

/* Two bridge threads at once, each with its own child: one times out while
 * the other echoes; neither reaps or reads the other's.  Four rounds, so
 * that forks overlap. */
static void test_two_threads_at_once(void **state)
{
	const char *cat[] = { "/bin/cat", NULL };
	const char *slow[] = { "/bin/sh", "-c", "cat; sleep 60", NULL };

	(void)state;
	for (int round = 0; round < 4; round++) {
		char in_a[64], in_b[64];
		struct call a = { .argv = cat, .input = in_a, .timeout_ms = 10000 };
		struct call b = { .argv = slow, .input = in_b, .timeout_ms = 300 };
		pthread_t ta, tb;

		snprintf(in_a, sizeof(in_a), "{\"thread\": \"a\", \"round\": %d}", round);
		snprintf(in_b, sizeof(in_b), "{\"thread\": \"b\", \"round\": %d}", round);
		assert_int_equal(pthread_create(&tb, NULL, call_thread, &b), 0);
		assert_int_equal(pthread_create(&ta, NULL, call_thread, &a), 0);
		pthread_join(ta, NULL);
		pthread_join(tb, NULL);
		if (a.rc != 0 || b.rc != 0)
			fail_msg("tool_exec_run: %s%s", a.msg, b.msg);
		assert_int_equal(a.res.outcome, TOOL_EXEC_OK);
		assert_string_equal(a.res.out, in_a);
		assert_int_equal(b.res.outcome, TOOL_EXEC_TIMEOUT);
		assert_string_equal(b.res.out, in_b);
		tool_exec_res_free(&a.res);
		tool_exec_res_free(&b.res);
	}
}

/* The tool is started in the supervisor's memory (CLONE_VM) on a stack of
 * its own.  After many starts - two thirds of them failing execs, which
 * run the child's error path - the supervisor must be as it was: its
 * signal dispositions (the child resets its own copy only), its request,
 * no stack mapping left behind; and every failure still names its errno.
 * Meanwhile another thread mallocs and frees without pause: a child that
 * took a lock of libc's would hang here (the alarm fails the test) or
 * corrupt the heap. */

static int maps_lines(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0, c;

	assert_non_null(f);
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

static volatile sig_atomic_t usr2_seen;

static void on_usr2(int sig)
{
	(void)sig;
	usr2_seen = 1;
}

static void *malloc_churn(void *p)
{
	volatile int *stop = p;

	while (!__atomic_load_n(stop, __ATOMIC_RELAXED)) {
		void *m[16];

		for (int i = 0; i < 16; i++)
			m[i] = malloc((size_t)(i + 1) * 97);
		for (int i = 0; i < 16; i++)
			free(m[i]);
	}
	return NULL;
}

static void test_many_starts_leave_the_supervisor_as_it_was(void **state)
{
	const char *ok[] = { "/bin/true", NULL };
	const char *missing[] = { "/nonexistent/cordon-tool", NULL };
	const char *dir[] = { "/tmp", NULL };
	struct sigaction usr2 = { .sa_handler = on_usr2 }, ign = { .sa_handler = SIG_IGN };
	struct sigaction old1, old2, now;
	volatile int stop = 0;
	pthread_t churn;
	int before;

	(void)state;
	sigaction(SIGUSR1, &ign, &old1);
	sigaction(SIGUSR2, &usr2, &old2);
	assert_int_equal(pthread_create(&churn, NULL, malloc_churn, (void *)&stop), 0);
	for (int round = 0; round < 2; round++) {
		/* The first round warms up whatever libc and the sanitizers
		 * map once; the second is counted. */
		before = maps_lines();
		for (int i = 0; i < 150; i++) {
			const char *const *argv = i % 3 == 0 ? ok : i % 3 == 1 ? missing : dir;
			struct tool_exec_req r = req_of(argv, "{}");
			struct tool_exec_res res;

			run_ok(&r, &res);
			if (argv == ok)
				assert_int_equal(res.outcome, TOOL_EXEC_OK);
			else if (argv == missing)
				assert_string_equal(res.reason,
						    "cannot execute /nonexistent/cordon-tool: No such file or directory");
			else
				assert_string_equal(res.reason, "cannot execute /tmp: Permission denied");
			tool_exec_res_free(&res);
			/* The request is ours; the child only read it. */
			assert_string_equal(argv[0], argv == ok ? "/bin/true" : argv == missing ? "/nonexistent/cordon-tool" : "/tmp");
			assert_null(argv[1]);
			assert_string_equal(no_env[0], "PATH=/usr/bin:/bin");
			assert_null(no_env[1]);
		}
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED); /* volatile is no atomic: TSan reported the race */
	pthread_join(churn, NULL);
	/* A stack left mapped per start would add a hundred lines or more. */
	if (maps_lines() > before + 16)
		fail_msg("/proc/self/maps grew from %d to %d lines over 150 starts", before, maps_lines());
	sigaction(SIGUSR1, NULL, &now);
	assert_ptr_equal(now.sa_handler, SIG_IGN);
	sigaction(SIGUSR2, NULL, &now);
	assert_ptr_equal(now.sa_handler, on_usr2);
	usr2_seen = 0;
	raise(SIGUSR2);
	assert_int_equal(usr2_seen, 1);
	sigaction(SIGUSR1, &old1, NULL);
	sigaction(SIGUSR2, &old2, NULL);
}

/* ---- identity and cgroup ---------------------------------------------------- */

/* The fields of /proc/self/status a tool's identity shows, as the tool
 * itself reads them, one per line. */
#define STATUS_SH "grep -E '^(Uid|Gid|Groups|CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' /proc/self/status; pwd"

static int status_has(const char *out, const char *line)
{
	const char *p = strstr(out, line);

	return p != NULL && (p == out || p[-1] == '\n');
}

static void test_identity_dropped(void **state)
{
	const char *argv[] = { "/bin/sh", "-c", STATUS_SH, NULL };
	struct tool_exec_req r = req_of(argv, NULL);
	struct tool_exec_res res;

	(void)state;
	if (geteuid() != 0)
		skip();
	/* Control: without set_ids the tool is the supervisor, with its caps. */
	run_ok(&r, &res);
	assert_int_equal(res.outcome, TOOL_EXEC_OK);
	assert_true(status_has(res.out, "Uid:\t0\t0\t0\t0"));
	assert_false(status_has(res.out, "CapEff:\t0000000000000000"));
	assert_true(status_has(res.out, "NoNewPrivs:\t0"));
	tool_exec_res_free(&res);

	r.set_ids = 1;
	r.uid = 65534;
	r.gid = 65533;
	r.no_new_privs = 1;
	run_ok(&r, &res);
	if (res.outcome != TOOL_EXEC_OK)
		fail_msg("%s; stderr %s", res.reason, res.err);
	assert_true(status_has(res.out, "Uid:\t65534\t65534\t65534\t65534"));
	assert_true(status_has(res.out, "Gid:\t65533\t65533\t65533\t65533"));
	assert_true(status_has(res.out, "Groups:\t \n") || status_has(res.out, "Groups:\t\n"));
	assert_true(status_has(res.out, "CapInh:\t0000000000000000"));
	assert_true(status_has(res.out, "CapPrm:\t0000000000000000"));
	assert_true(status_has(res.out, "CapEff:\t0000000000000000"));
	assert_true(status_has(res.out, "CapBnd:\t0000000000000000"));
	assert_true(status_has(res.out, "CapAmb:\t0000000000000000"));
	assert_true(status_has(res.out, "NoNewPrivs:\t1"));
	assert_true(status_has(res.out, "/\n"));
	tool_exec_res_free(&res);
}

/* Root or (uid_t)-1 is refused before anything starts. */
static void test_identity_root_refused(void **state)
{
	const char *argv[] = { "/bin/true", NULL };
	struct tool_exec_req r = req_of(argv, NULL);
	struct tool_exec_res res;
	char msg[256];

	(void)state;
	r.set_ids = 1;
	r.uid = 0;
	r.gid = 100;
	assert_int_equal(tool_exec_run(&r, &res, msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "refusing to switch to uid 0"));
	r.uid = (uid_t)-1;
	assert_int_equal(tool_exec_run(&r, &res, msg, sizeof(msg)), -1);
	r.uid = 100;
	r.gid = 0;
	assert_int_equal(tool_exec_run(&r, &res, msg, sizeof(msg)), -1);
}

/* The join is the child's own write of "0", before exec: a plain file
 * stands in for cgroup.procs and gets exactly that. */
static void test_cgroup_join_written_before_exec(void **state)
{
	const char *argv[] = { "/bin/true", NULL };
	struct tool_exec_req r = req_of(argv, NULL);
	struct tool_exec_res res;
	char path[] = "/tmp/test_tool_exec.procs.XXXXXX", buf[8] = "";
	int fd = mkstemp(path), rd;

	(void)state;
	assert_true(fd >= 0);
	r.cg_procs[0] = fd;
	r.ncg_procs = 1;
	run_ok(&r, &res);
	assert_int_equal(res.outcome, TOOL_EXEC_OK);
	tool_exec_res_free(&res);
	rd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(rd >= 0);
	assert_int_equal(read(rd, buf, sizeof(buf)), 1);
	assert_int_equal(buf[0], '0');
	close(rd);
	close(fd);
	unlink(path);
}

/* Root on a host with cgroups: the tool and a setsid()'d grandchild are
 * both in the call's cgroup, and destroy kills the grandchild, which the
 * process-group kill alone cannot reach (the control). */
static void test_cgroup_holds_setsid_grandchild(void **state)
{
	/* The pause lets setsid() happen before the tool's exit kills its
	 * group: a grandchild still in the group would not test anything. */
	const char *argv[] = { "/bin/sh", "-c", "setsid sleep 60 </dev/null >/dev/null 2>&1 & echo $!; sleep 0.3", NULL };
	struct tool_exec_req r = req_of(argv, NULL);
	struct tool_exec_res res;
	struct cg_host h;
	struct cg_run cg;
	struct cg_limits lim = { 64u << 20, 16, 0, 0 };
	char name[64], err[512], p[64], line[512];
	int fds[CG_PROCS_FDS];
	long child;
	FILE *f;
	int inside = 0;

	(void)state;
	if (geteuid() != 0 || cgroup_detect(&h, NULL, NULL, err, sizeof(err)) != 0)
		skip();
	snprintf(name, sizeof(name), "cordon-%d-test-tool-exec", (int)getpid());
	assert_int_equal(cgroup_create(&cg, &h, name, &lim, err, sizeof(err)), 0);
	if (cg.mem_kind == CG_NONE && cg.pids_kind == CG_NONE)
		skip();
	assert_int_equal(cgroup_procs_open(&cg, fds, err, sizeof(err)), 0);
	for (int i = 0; i < CG_PROCS_FDS; i++)
		if (fds[i] >= 0)
			r.cg_procs[r.ncg_procs++] = fds[i];
	run_ok(&r, &res);
	assert_int_equal(res.outcome, TOOL_EXEC_OK);
	child = strtol(res.out, NULL, 10);
	assert_true(child > 1);
	/* The process-group kill at exit missed it: setsid left the group. */
	usleep(200000);
	assert_false(pid_gone((pid_t)child));
	snprintf(p, sizeof(p), "/proc/%ld/cgroup", child);
	f = fopen(p, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, name) != NULL)
			inside = 1;
	fclose(f);
	assert_true(inside);
	assert_int_equal(cgroup_destroy(&cg, err, sizeof(err)), 0);
	assert_true(pid_gone_within((pid_t)child, 1000));
	for (int i = 0; i < CG_PROCS_FDS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	tool_exec_res_free(&res);
}

/* ---- the answer ------------------------------------------------------------ */

static cJSON *parse(const char *s, size_t len, char *why, size_t n)
{
	why[0] = '\0';
	return tool_exec_parse_output(s, len, why, n);
}

static void refused(const char *s, size_t len, const char *reason)
{
	char why[256];
	cJSON *v = parse(s, len, why, sizeof(why));

	if (v != NULL)
		fail_msg("accepted: %.*s", (int)len, s);
	if (strstr(why, reason) == NULL)
		fail_msg("reason \"%s\" lacks \"%s\"", why, reason);
}

#define REFUSED(lit, reason) refused(lit, sizeof(lit) - 1, reason)

static void test_parse_accepts_one_value(void **state)
{
	static const char *good[] = {
		"{\"a\": 1}",
		"  {\"a\": {\"b\": [1, 2, {\"c\": null}]}, \"d\": \"x\"}\r\n\t ",
		"[]",
		"\"text\"\n",
		"42",
		"{\"a\": {\"k\": 1}, \"b\": {\"k\": 2}}", /* same key in two objects */
		"[{\"k\": 1}, {\"k\": 2}]",
		"{\"s\": \"a\\\\u0000\"}", /* an escaped backslash, then text */
		"{\"s\": \"\\u00e9\\n\"}",
	};
	char why[256];

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		cJSON *v = parse(good[i], strlen(good[i]), why, sizeof(why));

		if (v == NULL)
			fail_msg("refused %s: %s", good[i], why);
		cJSON_Delete(v);
	}
}

static void test_parse_refusals(void **state)
{
	(void)state;
	REFUSED("", "nothing");
	REFUSED("   \n", "not valid JSON");
	REFUSED("{\"a\": 1", "not valid JSON");
	REFUSED("{\"a\": 1} x", "more after its JSON value (at offset 9)");
	REFUSED("{} {}", "more after its JSON value");
	REFUSED("1 2", "more after its JSON value");
	REFUSED("{\"a\": 1}\0", "NUL byte at offset 8");
	REFUSED("{\"a\": \"x\0y\"}", "NUL byte at offset 8");
	REFUSED("{\"a\": 1}\x01", "control byte 0x01 at offset 8");
	REFUSED("{\"a\": \"\x1b[31m\"}", "control byte 0x1B");
	REFUSED("{\"a\\u0000b\": 1, \"a\": 2}", "\\u0000 escape at offset 3");
	REFUSED("{\"a\": 1, \"b\": 2, \"a\": 3}", "key \"a\" twice in the object at the top level");
	REFUSED("{\"a\": {\"b\": [0, {\"c\": 1, \"c\": 2}]}}", "key \"c\" twice in the object at /a/b/1");
	REFUSED("[[[{\"x\": {\"y\": 1, \"y\": 1}}]]]", "key \"y\" twice in the object at /0/0/0/x");
}

/* Issue 15: an answer with invalid UTF-8 was recorded, and every retry of
 * its message id then failed to decode at the client.  It is refused
 * (the bridge answers tool_failed, reason bad_answer); well-formed
 * multibyte text passes. */
static void test_answer_invalid_utf8_refused(void **state)
{
	char why[256];
	cJSON *v = parse("{\"s\": \"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"}", 23, why, sizeof(why));

	(void)state;
	if (v == NULL)
		fail_msg("well-formed UTF-8 refused: %s", why);
	cJSON_Delete(v);
	REFUSED("{\"s\": \"\xff\"}", "not UTF-8 at offset 7");
	REFUSED("{\"s\": \"ok\", \"t\": \"\xc3\"}", "not UTF-8 at offset 18"); /* cut short */
	REFUSED("{\"s\": \"\xc0\xaf\"}", "not UTF-8 at offset 7");            /* overlong '/' */
	REFUSED("{\"s\": \"\xed\xa0\x80\"}", "not UTF-8 at offset 7");       /* a surrogate */
	REFUSED("{\"\xfe\": 1}", "not UTF-8 at offset 2");                    /* in a key */
}

/* Many keys: the check is by sorting, and still finds the one repeat. */
static void test_parse_large_object(void **state)
{
	size_t n = 20000, cap = n * 24 + 64, len = 0;
	char *s = malloc(cap), why[256];
	cJSON *v;

	(void)state;
	assert_non_null(s);
	s[len++] = '{';
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(s + len, cap - len, "%s\"k%zu\": %zu", i ? ", " : "", i, i);
	s[len++] = '}';
	v = parse(s, len, why, sizeof(why));
	assert_non_null(v);
	cJSON_Delete(v);
	len--;
	len += (size_t)snprintf(s + len, cap - len, ", \"k777\": 0}");
	assert_null(parse(s, len, why, sizeof(why)));
	assert_non_null(strstr(why, "\"k777\" twice"));
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_echo_stdin_to_stdout, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_large_stdin_written_whole, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_stderr_bounded_and_drained, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_stderr_keeps_the_tail, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_failure_detail, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_failure_bounds, fx_setup, fx_teardown),
		cmocka_unit_test(test_text_fit),
		cmocka_unit_test_setup_teardown(test_environment_is_exactly_built, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_only_stdio_reaches_the_tool, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_supervisor_with_stdio_closed, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_signals_are_reset_in_the_tool, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_timeout_kills_the_group, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_exit_kills_stragglers, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_cancel_fd_kills, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_cancelled_before_start_never_runs, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_endless_output_cut_fast, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_output_at_the_bound_is_ok, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_unread_stdin_does_not_hang, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_exit_status_and_signal, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_exec_failure_reasons, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_bad_requests, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_two_threads_at_once, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_many_starts_leave_the_supervisor_as_it_was, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_identity_dropped, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_identity_root_refused, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_cgroup_join_written_before_exec, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_cgroup_holds_setsid_grandchild, fx_setup, fx_teardown),
		cmocka_unit_test(test_parse_accepts_one_value),
		cmocka_unit_test(test_parse_refusals),
		cmocka_unit_test(test_answer_invalid_utf8_refused),
		cmocka_unit_test(test_parse_large_object),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
