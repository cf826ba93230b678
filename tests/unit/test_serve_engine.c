/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_serve_engine.c - cordon serve's engine (runtime/serve/engine.c,
 * pool.c) driven directly, without HTTP, with real sandboxes: a warm
 * execution and its kept artifact, scope and lookup errors, cancel by
 * request id (and 409 while it runs), 429 past the limit and the queue,
 * an idle sandbox killed and replaced, a reload that changes an app, and
 * the drain.  Needs what `cordon run` needs (root here; the boundary
 * suite covers rootless).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/serve/engine_ctl.h"
#include "tests/unit/serve_fixture.h"

static const char tools_yaml[] = "version: 1\n"
				 "tools:\n"
				 "  - id: calc.add\n"
				 "    description: Add.\n"
				 "    params: { a: { type: number, required: true } }\n"
				 "    exec: [/bin/true]\n";

/* timeout: the policy's (the executions here end within it). */
static const char app_fmt[] = "version: 1\n"
			      "app: eng\n"
			      "execution:\n"
			      "  runtime: { mode: isolated, timeout: %s, pids: 32 }\n"
			      "  executor:\n"
			      "    interpreter: /usr/bin/python3\n"
			      "    mounts:\n"
			      "      - { source: /usr, target: /usr }\n"
			      "      - { source: /lib, target: /lib }\n"
			      "      - { source: /lib64, target: /lib64 }\n"
			      "      - { type: tmpfs, target: /tmp, size: 16m }\n"
			      "  outputs:\n"
			      "    - { path: \"summary.txt\", max_bytes: 64k, required: false }\n"
			      "agents: { helper: { tools: [calc.add] } }\n";

struct fx {
	char dir[64], pols[96], state[96], work[96], pub[96], sec[96];
	struct sandbox_host host;
	struct policy_store *ps;
	struct engine *e;
};

static const struct serve_scope socket_scope = { 1, NULL, 0, 0 };

static void blob_write(struct fx *f, const char *timeout)
{
	char yaml[2048];
	uint8_t *buf;
	size_t len;

	snprintf(yaml, sizeof(yaml), app_fmt, timeout);
	fixture_blob(yaml, tools_yaml, f->sec, &buf, &len);
	fixture_file_put(f->pols, "eng.cpol", buf, len);
	free(buf);
}

static void quiet(void *arg, const char *msg)
{
	(void)arg;
	if (getenv("TEST_VERBOSE") != NULL)
		fprintf(stderr, "engine: %s\n", msg);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct sandbox_host_opts ho = { .state_dir = NULL };
	struct engine_opts eo = { 0 };
	struct sandbox_err se;
	char err[1024];

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_serve_engine.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	assert_int_equal(chmod(f->dir, 0755), 0);
	snprintf(f->pols, sizeof(f->pols), "%s/pols", f->dir);
	snprintf(f->state, sizeof(f->state), "%s/state", f->dir);
	snprintf(f->work, sizeof(f->work), "%s/work", f->dir);
	snprintf(f->pub, sizeof(f->pub), "%s/k.pub", f->dir);
	snprintf(f->sec, sizeof(f->sec), "%s/k.sec", f->dir);
	assert_int_equal(mkdir(f->pols, 0700), 0);
	assert_int_equal(key_generate(f->pub, f->sec, err, sizeof(err)), 0);
	blob_write(f, "20s");
	assert_int_equal(policies_open(f->pols, f->pub, &f->ps, err, sizeof(err)), 0);
	ho.state_dir = f->state;
	if (sandbox_host_probe(&f->host, &ho, &se) != 0)
		fail_msg("host: %s: %s", se.stage, se.msg);
	eo.host = &f->host;
	eo.policies = f->ps;
	eo.work_dir = f->work;
	eo.pool = 1;
	eo.max_concurrency = 2;
	eo.queue = 1;
	eo.queue_timeout_s = 1;
	eo.inline_max = 1024;
	eo.retain_s = 60;
	eo.log = quiet;
	if (engine_new(&eo, &f->e, err, sizeof(err)) != 0)
		fail_msg("engine_new: %s", err);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	assert_true(engine_wait_idle(f->e, 30000));
	engine_free(f->e);
	policies_close(f->ps);
	sandbox_host_free(&f->host);
	fixture_tmp_drop(f->dir);
	free(f);
	return 0;
}

/* Until every pool holds a warm sandbox (at most 30 s). */
static void wait_ready(struct fx *f)
{
	for (int i = 0; i < 300; i++) {
		cJSON *out = NULL;
		int st = engine_ready(f->e, &out);

		cJSON_Delete(out);
		if (st == 200)
			return;
		usleep(100000);
	}
	fail_msg("the pools never filled");
}

/* A request as exec_request.c would hand it over: every part malloc'd. */
static void req_make(struct serve_exec_req *rq, const char *app, const char *agent, const char *code,
		     const char *request_id)
{
	memset(rq, 0, sizeof(*rq));
	rq->app = app ? strdup(app) : NULL;
	rq->agent = agent ? strdup(agent) : NULL;
	rq->code = strdup(code);
	rq->code_len = strlen(code);
	snprintf(rq->request_id, sizeof(rq->request_id), "%s", request_id ? request_id : "");
}

static void req_done(struct serve_exec_req *rq)
{
	/* engine_execute took code, inputs and context */
	assert_null(rq->code);
	assert_null(rq->context);
	assert_int_equal(rq->ninputs, 0);
	free(rq->app);
	free(rq->agent);
}

static int execute(struct fx *f, const struct serve_scope *sc, const char *app, const char *agent, const char *code,
		   const char *request_id, cJSON **out, struct serve_err *err)
{
	struct serve_exec_req rq;
	int st;

	req_make(&rq, app, agent, code, request_id);
	memset(err, 0, sizeof(*err));
	st = engine_execute(f->e, sc, &rq, out, err);
	req_done(&rq);
	return st;
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(v) ? v->valuestring : "";
}

static void test_warm_execution_and_artifact(void **state)
{
	struct fx *f = *state;
	const struct serve_scope other = { 1, NULL, 0, 7 };
	struct serve_err err;
	cJSON *out = NULL, *a;
	char path[256], buf[64];
	uint64_t size;
	int fd;

	wait_ready(f);
	assert_int_equal(execute(f, &socket_scope, "eng", "helper",
				 "open('/workspace/out/summary.txt', 'w').write('hello')\nprint('hi')\n", NULL, &out,
				 &err),
			 200);
	assert_string_equal(str(out, "status"), "succeeded");
	assert_string_equal(str(out, "stdout"), "hi\n");
	snprintf(path, sizeof(path), "%s/%s", f->work, str(out, "executionId"));
	assert_string_equal(str(out, "runDir"), path);
	a = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(out, "artifacts"), 0);
	assert_non_null(a);
	assert_string_equal(str(a, "path"), "summary.txt");
	assert_string_equal(str(a, "contentBase64"), "aGVsbG8=");

	assert_int_equal(engine_artifact(f->e, &socket_scope, str(out, "executionId"), "summary.txt", &fd, &size, &err),
			 200);
	assert_int_equal(size, 5);
	assert_int_equal(read(fd, buf, sizeof(buf)), 5);
	assert_memory_equal(buf, "hello", 5);
	close(fd);
	/* another token's, a name that is no artifact, a path out, an unknown id */
	assert_int_equal(engine_artifact(f->e, &other, str(out, "executionId"), "summary.txt", &fd, &size, &err), 404);
	assert_int_equal(engine_artifact(f->e, &socket_scope, str(out, "executionId"), "result.json", &fd, &size, &err),
			 404);
	assert_int_equal(engine_artifact(f->e, &socket_scope, str(out, "executionId"), "../result.json", &fd, &size,
					 &err),
			 404);
	assert_int_equal(engine_artifact(f->e, &socket_scope, "0123456789abcdef0123456789abcdef", "summary.txt", &fd,
					 &size, &err),
			 404);
	cJSON_Delete(out);
}

static void test_lookup_errors(void **state)
{
	struct fx *f = *state;
	const char *apps[] = { "other" };
	const struct serve_scope narrow = { 0, apps, 1, 3 };
	struct serve_err err;
	cJSON *out = NULL;

	assert_int_equal(execute(f, &socket_scope, "nope", NULL, "pass", NULL, &out, &err), 404);
	assert_string_equal(err.code, "unknown_app");
	assert_int_equal(execute(f, &socket_scope, "eng", "nobody", "pass", NULL, &out, &err), 404);
	assert_string_equal(err.code, "unknown_agent");
	assert_int_equal(execute(f, &narrow, "eng", NULL, "pass", NULL, &out, &err), 403);
	assert_null(out);
	assert_int_equal(engine_capabilities(f->e, &socket_scope, "eng", "nobody", &out, &err), 404);
	assert_int_equal(engine_apps(f->e, &narrow, &out, &err), 200);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(out, "apps")), 0);
	cJSON_Delete(out);
	assert_int_equal(engine_apps(f->e, &socket_scope, &out, &err), 200);
	assert_string_equal(str(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(out, "apps"), 0), "app"), "eng");
	cJSON_Delete(out);
	assert_int_equal(engine_cancel(f->e, &socket_scope, "nothing-runs", &err), 404);
}

struct bg {
	struct fx *f;
	const char *code, *request_id;
	int status;
	cJSON *out;
	struct serve_err err;
	pthread_t t;
};

static void *bg_run(void *arg)
{
	struct bg *b = arg;

	b->status = execute(b->f, &socket_scope, "eng", NULL, b->code, b->request_id, &b->out, &b->err);
	return NULL;
}

static void test_cancel_and_conflict(void **state)
{
	struct fx *f = *state;
	struct bg b = { f, "import time\ntime.sleep(15)\n", "job-1", 0, NULL, { "", "", 0 }, 0 };
	struct serve_err err;
	cJSON *out = NULL;
	int st = 0;

	wait_ready(f);
	assert_int_equal(pthread_create(&b.t, NULL, bg_run, &b), 0);
	usleep(500000); /* job-1 registers at once, before the gate */
	/* 409 once job-1 is registered (a quick "pass" runs meanwhile) */
	for (int i = 0; i < 200 && (st = execute(f, &socket_scope, "eng", NULL, "pass", "job-1", &out, &err)) != 409;
	     i++) {
		cJSON_Delete(out);
		out = NULL;
		usleep(20000);
	}
	if (st != 409) {
		pthread_join(b.t, NULL);
		fail_msg("no 409; the background execution: %d %s", b.status, b.out ? cJSON_PrintUnformatted(b.out) : "");
	}
	assert_string_equal(err.code, "request_id_running");
	usleep(300000); /* into the program's sleep */
	assert_int_equal(engine_cancel(f->e, &socket_scope, "job-1", &err), 202);
	pthread_join(b.t, NULL);
	assert_int_equal(b.status, 200);
	assert_string_equal(str(b.out, "status"), "cancelled");
	assert_non_null(strstr(str(cJSON_GetObjectItemCaseSensitive(b.out, "error"), "message"), "cancelled by request"));
	cJSON_Delete(b.out);
}

static void test_overload(void **state)
{
	struct fx *f = *state;
	struct bg b[3];
	struct serve_err err;
	cJSON *out = NULL;
	char rid[3][16];

	/* two running, one queued (which times out after 1 s), the next one
	 * finds the queue full: 429 with Retry-After */
	for (int i = 0; i < 3; i++) {
		snprintf(rid[i], sizeof(rid[i]), "bg-%d", i);
		b[i] = (struct bg){ f, "import time\ntime.sleep(15)\n", rid[i], 0, NULL, { "", "", 0 }, 0 };
		assert_int_equal(pthread_create(&b[i].t, NULL, bg_run, &b[i]), 0);
		usleep(200000);
	}
	assert_int_equal(execute(f, &socket_scope, "eng", NULL, "pass", NULL, &out, &err), 429);
	assert_string_equal(err.code, "overloaded");
	assert_int_equal(err.retry_after_s, 1);
	pthread_join(b[2].t, NULL); /* the queued one: 429 after its second */
	assert_int_equal(b[2].status, 429);
	assert_int_equal(engine_cancel_all(f->e, "test over"), 2);
	for (int i = 0; i < 2; i++) {
		pthread_join(b[i].t, NULL);
		assert_int_equal(b[i].status, 200);
		assert_string_equal(str(b[i].out, "status"), "cancelled");
		cJSON_Delete(b[i].out);
	}
}

/* 1 while pid runs (not yet a zombie, not gone). */
static int still_running(int pid)
{
	char path[64], buf[512], *p;
	FILE *fp;
	int running = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if ((fp = fopen(path, "r")) == NULL)
		return 0;
	p = fgets(buf, sizeof(buf), fp) ? strrchr(buf, ')') : NULL;
	fclose(fp);
	if (p != NULL && p[1] == ' ')
		running = p[2] != 'Z' && p[2] != 'X';
	return running;
}

/* The executors of idle sandboxes are our direct children.  SIGKILL is
 * delivered asynchronously: the kill is only done once each has died, as
 * a sandbox that "died while idle" has (one still dying when taken would
 * be killed mid-run instead, a different case). */
static unsigned kill_children(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	unsigned n = 0;
	int pids[256];

	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		char path[300], buf[512], *p;
		FILE *fp;
		int ppid;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		if ((fp = fopen(path, "r")) == NULL)
			continue;
		p = fgets(buf, sizeof(buf), fp) ? strrchr(buf, ')') : NULL;
		fclose(fp);
		if (p != NULL && sscanf(p + 2, "%*c %d", &ppid) == 1 && ppid == getpid() && n < 256) {
			pids[n] = atoi(de->d_name);
			kill(pids[n], SIGKILL);
			n++;
		}
	}
	closedir(d);
	for (unsigned i = 0; i < n; i++)
		for (int t = 0; t < 500 && still_running(pids[i]); t++)
			usleep(10000);
	return n;
}

static void test_idle_sandbox_dies(void **state)
{
	struct fx *f = *state;
	struct serve_err err;
	cJSON *out = NULL;

	wait_ready(f);
	assert_true(kill_children() >= 2); /* (app, no agent) and (app, helper) */
	/* the request right after still runs: the dead one is skipped at
	 * take or replaced by the watcher */
	assert_int_equal(execute(f, &socket_scope, "eng", NULL, "print(6*7)", NULL, &out, &err), 200);
	assert_string_equal(str(out, "status"), "succeeded");
	assert_string_equal(str(out, "stdout"), "42\n");
	cJSON_Delete(out);
	wait_ready(f);
}

static void test_reload(void **state)
{
	struct fx *f = *state;
	struct serve_err err;
	cJSON *out = NULL, *before = NULL, *after = NULL;
	unsigned napps;
	char e2[1024];

	wait_ready(f);
	assert_int_equal(engine_apps(f->e, &socket_scope, &before, &err), 200);
	blob_write(f, "21s");
	assert_int_equal(engine_reload(f->e, &napps, e2, sizeof(e2)), 0);
	assert_int_equal(napps, 1);
	assert_int_equal(engine_apps(f->e, &socket_scope, &after, &err), 200);
	assert_string_not_equal(str(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(before, "apps"), 0), "sha256"),
				str(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(after, "apps"), 0), "sha256"));
	wait_ready(f); /* the changed app's pools refilled */
	assert_int_equal(execute(f, &socket_scope, "eng", NULL, "pass", NULL, &out, &err), 200);
	assert_string_equal(str(out, "status"), "succeeded");
	cJSON_Delete(out);
	/* an unsigned blob: refused, the set stays */
	fixture_file_put(f->pols, "bad.cpol", (const uint8_t *)"junk", 4);
	assert_int_equal(engine_reload(f->e, &napps, e2, sizeof(e2)), -1);
	assert_non_null(strstr(e2, "bad.cpol"));
	cJSON_Delete(before);
	cJSON_Delete(after);
}

static void test_drain(void **state)
{
	struct fx *f = *state;
	struct serve_err err;
	cJSON *out = NULL;
	DIR *d;
	struct dirent *de;
	unsigned left = 0;

	wait_ready(f);
	engine_drain(f->e);
	assert_int_equal(execute(f, &socket_scope, "eng", NULL, "pass", NULL, &out, &err), 503);
	assert_string_equal(err.code, "draining");
	assert_int_equal(engine_ready(f->e, &out), 503);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(out, "draining")));
	cJSON_Delete(out);
	/* idle sandboxes are gone, their pending run directories too */
	d = opendir(f->work);
	assert_non_null(d);
	while ((de = readdir(d)) != NULL)
		left += strncmp(de->d_name, "pending-", 8) == 0;
	closedir(d);
	assert_int_equal(left, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_warm_execution_and_artifact, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lookup_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_and_conflict, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overload, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idle_sandbox_dies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reload, setup, teardown),
		cmocka_unit_test_setup_teardown(test_drain, setup, teardown),
	};

	if (sodium_init() < 0)
		return 1;
	if (getenv("TEST_FILTER") != NULL)
		cmocka_set_test_filter(getenv("TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
