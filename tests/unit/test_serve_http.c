/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_serve_http.c - cordon serve's HTTP front (runtime/serve/http.c)
 * against a fake engine: this file defines engine_*() with canned answers,
 * so it links http.o and never the real engine (Makefile:
 * SERVE_UNIT_SRC_test_serve_http).  Raw requests over a temporary Unix
 * socket and a loopback port drive every route, each refusal (401, 403,
 * 404, 405, 408, 413, 415, 400), the engine's statuses passed through
 * (429/503 with Retry-After, 409), and after each one the server must
 * still answer.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "runtime/serve/engine.h"
#include "runtime/serve/http.h"
#include "runtime/serve/metrics.h"
#include "unit_fds.h"

#define T_ALL "tok-all-aaaaaaaaaaaaaaaa"
#define T_BANK "tok-bank-bbbbbbbbbbbbbbb"
#define MAX_BODY 4096
#define BODY_TIMEOUT 2

/* ---- the fake engine -------------------------------------------------- */

struct engine {
	struct metrics *m;
	pthread_mutex_t lock;
	int ready;                 /* engine_ready: 200 or 503 */
	unsigned exec_calls;
	unsigned last_token;       /* scope.token_index of the last call */
	char last_code[64];
	unsigned last_ninputs;
	int last_had_context;
	char artifact_path[128];
	/* sessions: the last call's route, id and who */
	char last_session_call[16];
	char last_session_id[64];
	char last_tenant[32], last_user[32];
};

static int scope_sees(const struct serve_scope *sc, const char *app)
{
	if (sc->all)
		return 1;
	for (unsigned i = 0; i < sc->napps; i++)
		if (strcmp(sc->apps[i], app) == 0)
			return 1;
	return 0;
}

static int fake_err(struct serve_err *err, int status, const char *code, const char *msg, unsigned retry)
{
	snprintf(err->code, sizeof(err->code), "%s", code);
	snprintf(err->message, sizeof(err->message), "%s", msg);
	err->retry_after_s = retry;
	return status;
}

struct metrics *engine_metrics(struct engine *e)
{
	return e->m;
}

int engine_apps(struct engine *e, const struct serve_scope *scope, cJSON **out, struct serve_err *err)
{
	cJSON *apps;

	(void)err;
	pthread_mutex_lock(&e->lock);
	e->last_token = scope->token_index;
	pthread_mutex_unlock(&e->lock);
	*out = cJSON_CreateObject();
	apps = cJSON_AddArrayToObject(*out, "apps");
	if (scope_sees(scope, "cafe"))
		cJSON_AddItemToArray(apps, cJSON_CreateString("cafe"));
	if (scope_sees(scope, "bank"))
		cJSON_AddItemToArray(apps, cJSON_CreateString("bank"));
	return 200;
}

int engine_capabilities(struct engine *e, const struct serve_scope *scope, const char *app, const char *agent,
			cJSON **out, struct serve_err *err)
{
	(void)e;
	if (!scope_sees(scope, app) || strcmp(app, "cafe") != 0 || strcmp(agent, "barista") != 0)
		return fake_err(err, 404, "unknown_agent", "no such app or agent", 0);
	*out = cJSON_CreateObject();
	cJSON_AddStringToObject(*out, "app", app);
	cJSON_AddStringToObject(*out, "agent", agent);
	return 200;
}

/* The code says what to answer: "overload" 429, "drain" 503, "dup" 409,
 * "slow" sleeps a second; else 200 echoing the code. */
int engine_execute(struct engine *e, const struct serve_scope *scope, struct serve_exec_req *rq, cJSON **out,
		   struct serve_err *err)
{
	int status = 200;

	pthread_mutex_lock(&e->lock);
	e->exec_calls++;
	e->last_token = scope->token_index;
	snprintf(e->last_code, sizeof(e->last_code), "%s", rq->code);
	e->last_ninputs = rq->ninputs;
	e->last_had_context = rq->context != NULL;
	pthread_mutex_unlock(&e->lock);
	if (strcmp(rq->app, "cafe") != 0 && strcmp(rq->app, "bank") != 0)
		status = fake_err(err, 404, "unknown_app", "no such app", 0);
	else if (strcmp(rq->code, "overload") == 0)
		status = fake_err(err, 429, "overloaded", "too many executions", 7);
	else if (strcmp(rq->code, "drain") == 0)
		status = fake_err(err, 503, "draining", "the server is draining", 2);
	else if (strcmp(rq->code, "dup") == 0)
		status = fake_err(err, 409, "request_running", "requestId already running", 0);
	else if (strcmp(rq->code, "slow") == 0)
		usleep(1000 * 1000);
	if (status == 200) {
		*out = cJSON_CreateObject();
		cJSON_AddStringToObject(*out, "status", "ok");
		cJSON_AddStringToObject(*out, "stdout", rq->code);
	}
	/* the engine takes the contents whatever it answers */
	serve_exec_req_free(rq);
	return status;
}

int engine_cancel(struct engine *e, const struct serve_scope *scope, const char *request_id, struct serve_err *err)
{
	(void)e;
	if (strcmp(request_id, "r1") == 0 && scope->token_index == 0)
		return 202;
	return fake_err(err, 404, "unknown_request", "no running execution of yours has that requestId", 0);
}

int engine_artifact(struct engine *e, const struct serve_scope *scope, const char *exec_id, const char *name,
		    int *fd, uint64_t *size, struct serve_err *err)
{
	struct stat st;

	(void)scope;
	if (strcmp(exec_id, "e1") != 0 || strcmp(name, "sub/a.txt") != 0)
		return fake_err(err, 404, "unknown_artifact", "no such artifact", 0);
	*fd = open(e->artifact_path, O_RDONLY | O_CLOEXEC);
	assert_true(*fd >= 0);
	assert_int_equal(fstat(*fd, &st), 0);
	*size = (uint64_t)st.st_size;
	return 200;
}

/* The fake sessions: "s1" exists (owned by tenant t, user u); every
 * call records what reached it. */
static void session_seen(struct engine *e, const char *call, const char *id, const char *tenant, const char *user)
{
	pthread_mutex_lock(&e->lock);
	snprintf(e->last_session_call, sizeof(e->last_session_call), "%s", call);
	snprintf(e->last_session_id, sizeof(e->last_session_id), "%s", id ? id : "");
	snprintf(e->last_tenant, sizeof(e->last_tenant), "%s", tenant ? tenant : "-");
	snprintf(e->last_user, sizeof(e->last_user), "%s", user ? user : "-");
	pthread_mutex_unlock(&e->lock);
}

static int session_answer(const char *id, const char *tenant, const char *user, cJSON **out, struct serve_err *err)
{
	if (strcmp(id, "s1") != 0 || tenant == NULL || strcmp(tenant, "t") != 0 || user == NULL || strcmp(user, "u") != 0)
		return fake_err(err, 404, "unknown_session", "no such session", 0);
	*out = cJSON_CreateObject();
	cJSON_AddStringToObject(*out, "sessionId", id);
	return 200;
}

static const char *ctx_get(const cJSON *ctx, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(ctx, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

int engine_session_create(struct engine *e, const struct serve_scope *scope, struct serve_exec_req *rq, cJSON **out,
			  struct serve_err *err)
{
	(void)scope;
	session_seen(e, "create", rq->agent, ctx_get(rq->context, "tenant"), ctx_get(rq->context, "user"));
	serve_exec_req_free(rq);
	*out = cJSON_CreateObject();
	cJSON_AddStringToObject(*out, "sessionId", "s1");
	(void)err;
	return 201;
}

int engine_session_cell(struct engine *e, const struct serve_scope *scope, const char *id,
			struct serve_exec_req *rq, cJSON **out, struct serve_err *err)
{
	int status;

	(void)scope;
	session_seen(e, "cell", id, ctx_get(rq->context, "tenant"), ctx_get(rq->context, "user"));
	status = session_answer(id, ctx_get(rq->context, "tenant"), ctx_get(rq->context, "user"), out, err);
	if (status == 200)
		cJSON_AddStringToObject(*out, "stdout", rq->code);
	serve_exec_req_free(rq);
	return status;
}

int engine_session_get(struct engine *e, const struct serve_scope *scope, const char *id, const char *tenant,
		       const char *user, cJSON **out, struct serve_err *err)
{
	(void)scope;
	session_seen(e, "get", id, tenant, user);
	return session_answer(id, tenant, user, out, err);
}

int engine_session_delete(struct engine *e, const struct serve_scope *scope, const char *id, const char *tenant,
			  const char *user, cJSON **out, struct serve_err *err)
{
	(void)scope;
	session_seen(e, "delete", id, tenant, user);
	return session_answer(id, tenant, user, out, err);
}

int engine_ready(struct engine *e, cJSON **out)
{
	*out = cJSON_CreateObject();
	cJSON_AddBoolToObject(*out, "ready", e->ready == 200);
	cJSON_AddBoolToObject(*out, "draining", 0);
	cJSON_AddArrayToObject(*out, "pools");
	return e->ready;
}

/* ---- a raw client ------------------------------------------------------ */

struct fixture {
	char dir[64];
	char sock[128];
	char tokens[128];
	struct engine e;
	struct http_server *srv;
	unsigned port;
	int fds_before;
};

static struct fixture fx;

struct resp {
	int status;
	char head[4096]; /* status line and headers, as received */
	char body[16384];
	size_t body_len;
};

static int connect_unix(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int connect_tcp(unsigned port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* 0 when all was sent, -1 when the server closed first (EPIPE,
 * ECONNRESET): it may answer from the head alone (a 415 for the content
 * type) and close before the body arrives, and its answer is still there
 * to read. */
static int send_upto(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && (errno == EPIPE || errno == ECONNRESET))
			return -1;
		assert_true(w > 0);
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void send_all(int fd, const char *p, size_t n)
{
	assert_int_equal(send_upto(fd, p, n), 0);
}

/* Reads until the server closes (every request here says Connection:
 * close), at most timeout_ms, then splits status, head and body. */
static void read_resp(int fd, struct resp *r, int timeout_ms)
{
	char buf[sizeof(r->head) + sizeof(r->body)];
	size_t len = 0;
	char *sep;

	memset(r, 0, sizeof(*r));
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t got;

		if (poll(&p, 1, timeout_ms) != 1)
			fail_msg("no answer within %d ms (got %zu bytes)", timeout_ms, len);
		got = recv(fd, buf + len, sizeof(buf) - 1 - len, 0);
		if (got < 0 && errno == ECONNRESET)
			break;
		assert_true(got >= 0);
		if (got == 0)
			break;
		len += (size_t)got;
		assert_true(len < sizeof(buf) - 1);
	}
	buf[len] = '\0';
	sep = strstr(buf, "\r\n\r\n");
	if (sep == NULL)
		fail_msg("no complete response head in %zu bytes: %.200s", len, buf);
	assert_true((size_t)(sep - buf) < sizeof(r->head));
	memcpy(r->head, buf, (size_t)(sep - buf));
	r->body_len = len - (size_t)(sep + 4 - buf);
	memcpy(r->body, sep + 4, r->body_len);
	assert_int_equal(sscanf(buf, "HTTP/1.1 %d ", &r->status), 1);
}

/* A header's value from the response head ("" when absent). */
static const char *header(const struct resp *r, const char *name)
{
	static char v[512];
	size_t nl = strlen(name);

	v[0] = '\0';
	for (const char *p = strstr(r->head, "\r\n"); p != NULL; p = strstr(p + 2, "\r\n"))
		if (strncasecmp(p + 2, name, nl) == 0 && p[2 + nl] == ':') {
			const char *s = p + 3 + nl, *e = strstr(s, "\r\n");

			while (*s == ' ')
				s++;
			snprintf(v, sizeof(v), "%.*s", e ? (int)(e - s) : (int)strlen(s), s);
			break;
		}
	return v;
}

/* One request on a fresh connection: tcp 0 the Unix socket, else the
 * loopback port; extra: more header lines, each ending in \r\n. */
static void request(int tcp, const char *method, const char *path, const char *extra, const char *body,
		    struct resp *r)
{
	int fd = tcp ? connect_tcp(fx.port) : connect_unix(fx.sock);
	char head[2048];
	int n;

	assert_true(fd >= 0);
	n = snprintf(head, sizeof(head),
		     "%s %s HTTP/1.1\r\nHost: test\r\nConnection: close\r\n%s%s%zu\r\n\r\n", method, path,
		     extra ? extra : "", body ? "Content-Length: " : "", body ? strlen(body) : (size_t)0);
	if (body == NULL) /* no Content-Length line: cut the "0" */
		n = snprintf(head, sizeof(head), "%s %s HTTP/1.1\r\nHost: test\r\nConnection: close\r\n%s\r\n", method,
			     path, extra ? extra : "");
	send_all(fd, head, (size_t)n);
	if (body != NULL)
		(void)send_upto(fd, body, strlen(body));
	read_resp(fd, r, 10000);
	close(fd);
}

#define JSON "Content-Type: application/json\r\n"
#define AUTH_ALL "Authorization: Bearer " T_ALL "\r\n"
#define AUTH_BANK "Authorization: Bearer " T_BANK "\r\n"

static void assert_error(const struct resp *r, int status, const char *code)
{
	cJSON *doc;
	const cJSON *err;

	if (r->status != status)
		fail_msg("status %d, expected %d: %s", r->status, status, r->body);
	assert_string_equal(header(r, "Content-Type"), "application/json");
	doc = cJSON_ParseWithLength(r->body, r->body_len);
	assert_non_null(doc);
	err = cJSON_GetObjectItemCaseSensitive(doc, "error");
	assert_non_null(err);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(err, "code")->valuestring, code);
	assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(err, "message")));
	cJSON_Delete(doc);
}

/* The server still answers, on both listeners. */
static void still_serving(void)
{
	struct resp r;

	request(0, "GET", "/v1/health", NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	request(1, "GET", "/v1/health", NULL, NULL, &r);
	assert_int_equal(r.status, 200);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static struct http_opts opts(void)
{
	struct http_opts o = {
		.socket_path = fx.sock,
		.socket_mode = 0660,
		.listen = "127.0.0.1:0",
		.tokens_path = fx.tokens,
		.max_body = MAX_BODY,
		.body_timeout_s = BODY_TIMEOUT,
		.max_connections = 32,
	};
	return o;
}

static int setup(void **state)
{
	struct http_opts o;
	char err[512] = "";

	(void)state;
	memset(&fx, 0, sizeof(fx));
	fx.fds_before = unit_fd_count();
	snprintf(fx.dir, sizeof(fx.dir), "/tmp/cordon-test-http.XXXXXX");
	assert_non_null(mkdtemp(fx.dir));
	snprintf(fx.sock, sizeof(fx.sock), "%s/serve.sock", fx.dir);
	snprintf(fx.tokens, sizeof(fx.tokens), "%s/tokens", fx.dir);
	snprintf(fx.e.artifact_path, sizeof(fx.e.artifact_path), "%s/artifact", fx.dir);
	write_file(fx.tokens, "# test tokens\n" T_ALL "\n" T_BANK " bank\n", 0600);
	write_file(fx.e.artifact_path, "artifact", 0600);
	{
		int fd = open(fx.e.artifact_path, O_WRONLY | O_APPEND | O_CLOEXEC);

		assert_int_equal(write(fd, "\0bytes", 6), 6); /* binary: a NUL inside */
		close(fd);
	}
	fx.e.m = metrics_new();
	assert_non_null(fx.e.m);
	pthread_mutex_init(&fx.e.lock, NULL);
	fx.e.ready = 200;
	o = opts();
	fx.srv = http_start(&o, &fx.e, err, sizeof(err));
	if (fx.srv == NULL)
		fail_msg("http_start: %s", err);
	fx.port = http_tcp_port(fx.srv);
	assert_true(fx.port > 0);
	return 0;
}

static int teardown(void **state)
{
	struct stat st;

	(void)state;
	http_stop(fx.srv);
	/* the socket path went with the server */
	assert_int_equal(lstat(fx.sock, &st), -1);
	metrics_free(fx.e.m);
	pthread_mutex_destroy(&fx.e.lock);
	unlink(fx.tokens);
	unlink(fx.e.artifact_path);
	assert_int_equal(rmdir(fx.dir), 0); /* nothing else left beside the socket */
	assert_int_equal(unit_fd_count(), fx.fds_before);
	return 0;
}

/* ---- the tests -------------------------------------------------------- */

static void test_http_socket_mode(void **state)
{
	struct stat st;

	(void)state;
	assert_int_equal(lstat(fx.sock, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0660);
}

static void test_http_routes(void **state)
{
	struct resp r;

	(void)state;
	request(0, "GET", "/v1/health", NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "{\"status\":\"ok\"}");
	assert_string_equal(header(&r, "Content-Type"), "application/json");

	request(0, "GET", "/v1/ready", NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "{\"ready\":true,\"draining\":false,\"pools\":[]}");
	fx.e.ready = 503;
	request(0, "GET", "/v1/ready", NULL, NULL, &r);
	assert_int_equal(r.status, 503);
	assert_string_equal(r.body, "{\"ready\":false,\"draining\":false,\"pools\":[]}");
	fx.e.ready = 200;

	request(0, "GET", "/v1/apps", NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "{\"apps\":[\"cafe\",\"bank\"]}");
	assert_int_equal(fx.e.last_token, 0);

	request(0, "GET", "/v1/apps/cafe/agents/barista", NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "{\"app\":\"cafe\",\"agent\":\"barista\"}");
	request(0, "GET", "/v1/apps/cafe/agents/nobody", NULL, NULL, &r);
	assert_error(&r, 404, "unknown_agent");
	request(0, "GET", "/v1/apps/ca%20fe/agents/barista", NULL, NULL, &r);
	assert_error(&r, 404, "not_found");

	request(0, "POST", "/v1/executions", JSON,
		"{\"app\":\"cafe\",\"code\":\"print(1)\",\"inputs\":[{\"name\":\"a\",\"content\":\"x\"}],"
		"\"context\":{\"user\":\"u\"},\"requestId\":\"r1\"}",
		&r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "{\"status\":\"ok\",\"stdout\":\"print(1)\"}");
	assert_string_equal(fx.e.last_code, "print(1)");
	assert_int_equal(fx.e.last_ninputs, 1);
	assert_int_equal(fx.e.last_had_context, 1);
	request(0, "POST", "/v1/executions", "Content-Type: Application/JSON; charset=utf-8\r\n",
		"{\"app\":\"cafe\",\"code\":\"\"}", &r);
	assert_int_equal(r.status, 200);
	request(0, "POST", "/v1/executions", JSON, "{\"app\":\"nope\",\"code\":\"\"}", &r);
	assert_error(&r, 404, "unknown_app");

	request(0, "POST", "/v1/executions/r1/cancel", NULL, NULL, &r);
	assert_int_equal(r.status, 202);
	assert_string_equal(r.body, "{\"cancelled\":true}");
	request(0, "POST", "/v1/executions/r2/cancel", NULL, "", &r);
	assert_error(&r, 404, "unknown_request");

	request(0, "GET", "/v1/executions/e1/artifacts/sub/a.txt", NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(header(&r, "Content-Type"), "application/octet-stream");
	assert_int_equal(r.body_len, 14);
	assert_memory_equal(r.body, "artifact\0bytes", 14);
	request(0, "GET", "/v1/executions/e1/artifacts/other", NULL, NULL, &r);
	assert_error(&r, 404, "unknown_artifact");
	request(0, "GET", "/v1/executions/e1/artifacts/sub/../a.txt", NULL, NULL, &r);
	assert_error(&r, 404, "not_found");
	request(0, "GET", "/v1/executions/e1/artifacts/sub//a.txt", NULL, NULL, &r);
	assert_error(&r, 404, "not_found");

	request(0, "GET", "/metrics", NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(header(&r, "Content-Type"), "text/plain; version=0.0.4");
	assert_non_null(strstr(r.body, "cordon_http_requests_total{code=\"200\"} "));
	assert_non_null(strstr(r.body, "cordon_http_requests_total{code=\"404\"} "));
	still_serving();
}

static void test_http_not_found_and_method(void **state)
{
	static const char *const missing[] = { "/", "/v1", "/v1/", "/v1/health/", "/v2/health", "/v1/apps/cafe",
					       "/v1/apps/cafe/agents", "/v1/apps/cafe/agents/b/x",
					       "/v1/executions/r1", "/v1/executions/r1/cancel/x", "/metrics/x" };
	struct resp r;

	(void)state;
	for (size_t i = 0; i < sizeof(missing) / sizeof(missing[0]); i++) {
		request(0, "GET", missing[i], NULL, NULL, &r);
		assert_error(&r, 404, "not_found");
	}
	request(0, "POST", "/v1/health", NULL, "", &r);
	assert_error(&r, 405, "method_not_allowed");
	assert_string_equal(header(&r, "Allow"), "GET");
	request(0, "GET", "/v1/executions", NULL, NULL, &r);
	assert_error(&r, 405, "method_not_allowed");
	assert_string_equal(header(&r, "Allow"), "POST");
	request(0, "DELETE", "/v1/executions/r1/cancel", NULL, NULL, &r);
	assert_error(&r, 405, "method_not_allowed");
	assert_string_equal(header(&r, "Allow"), "POST");
	still_serving();
}

/* The session routes: each reaches its engine call with its body's kind
 * checked (a session takes no code, a cell's context only names who
 * asks), GET and DELETE with the query's tenant and user; one path, two
 * methods, and the Allow of both. */
static void test_http_sessions(void **state)
{
	struct resp r;

	(void)state;
	request(0, "POST", "/v1/sessions", JSON, "{\"app\":\"cafe\",\"agent\":\"a\",\"context\":{\"tenant\":\"t\"}}", &r);
	assert_int_equal(r.status, 201);
	assert_string_equal(fx.e.last_session_call, "create");
	assert_string_equal(fx.e.last_tenant, "t");
	request(0, "POST", "/v1/sessions", JSON, "{\"app\":\"cafe\",\"agent\":\"a\",\"code\":\"1\"}", &r);
	assert_error(&r, 400, "bad_request");
	request(0, "POST", "/v1/sessions", JSON, "{\"app\":\"cafe\"}", &r);
	assert_error(&r, 400, "bad_request");
	request(0, "POST", "/v1/sessions", NULL, "{\"app\":\"cafe\",\"agent\":\"a\"}", &r);
	assert_error(&r, 415, "unsupported_media_type");

	request(0, "POST", "/v1/sessions/s1/cells", JSON, "{\"code\":\"x\",\"context\":{\"tenant\":\"t\",\"user\":\"u\"}}",
		&r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "{\"sessionId\":\"s1\",\"stdout\":\"x\"}");
	request(0, "POST", "/v1/sessions/s1/cells", JSON, "{\"code\":\"x\",\"context\":{\"tenant\":\"t\"}}", &r);
	assert_error(&r, 404, "unknown_session");
	request(0, "POST", "/v1/sessions/s1/cells", JSON,
		"{\"code\":\"x\",\"context\":{\"tenant\":\"t\",\"user\":\"u\",\"roles\":[\"admin\"]}}", &r);
	assert_error(&r, 400, "bad_request");
	assert_non_null(strstr(r.body, "names only who asks"));
	request(0, "POST", "/v1/sessions/s1/cells", JSON, "{\"app\":\"cafe\",\"code\":\"x\"}", &r);
	assert_error(&r, 400, "bad_request");

	request(0, "GET", "/v1/sessions/s1?tenant=t&user=u", NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(fx.e.last_session_call, "get");
	request(0, "GET", "/v1/sessions/s1?tenant=t", NULL, NULL, &r);
	assert_error(&r, 404, "unknown_session");
	assert_string_equal(fx.e.last_user, "-");
	request(0, "DELETE", "/v1/sessions/s1?user=u&tenant=t", NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(fx.e.last_session_call, "delete");
	request(0, "POST", "/v1/sessions/s1", JSON, "{}", &r);
	assert_error(&r, 405, "method_not_allowed");
	assert_string_equal(header(&r, "Allow"), "GET, DELETE");
	request(0, "GET", "/v1/sessions/s1/cells", NULL, NULL, &r);
	assert_error(&r, 405, "method_not_allowed");
	assert_string_equal(header(&r, "Allow"), "POST");
	request(0, "GET", "/v1/sessions/s1/cells/x", NULL, NULL, &r);
	assert_error(&r, 404, "not_found");
	request(0, "GET", "/v1/sessions/s%201", NULL, NULL, &r);
	assert_error(&r, 404, "not_found");
	still_serving();
}

static void test_http_tokens(void **state)
{
	struct resp r;

	(void)state;
	request(1, "GET", "/v1/health", NULL, NULL, &r); /* no token needed */
	assert_int_equal(r.status, 200);

	request(1, "GET", "/v1/apps", NULL, NULL, &r);
	assert_error(&r, 401, "unauthorized");
	assert_string_equal(header(&r, "WWW-Authenticate"), "Bearer");
	request(1, "GET", "/metrics", NULL, NULL, &r);
	assert_error(&r, 401, "unauthorized");
	request(1, "GET", "/v1/apps", "Authorization: Bearer tok-all-aaaaaaaaaaaaaaab\r\n", NULL, &r);
	assert_error(&r, 401, "unauthorized");
	request(1, "GET", "/v1/apps", "Authorization: Basic " T_ALL "\r\n", NULL, &r);
	assert_error(&r, 401, "unauthorized");
	/* refused before the body is read */
	request(1, "POST", "/v1/executions", JSON, "{\"app\":\"cafe\",\"code\":\"\"}", &r);
	assert_error(&r, 401, "unauthorized");

	request(1, "GET", "/v1/apps", AUTH_ALL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "{\"apps\":[\"cafe\",\"bank\"]}");
	assert_int_equal(fx.e.last_token, 1);
	request(1, "GET", "/v1/apps", AUTH_BANK, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "{\"apps\":[\"bank\"]}");
	assert_int_equal(fx.e.last_token, 2);

	request(1, "GET", "/v1/apps/cafe/agents/barista", AUTH_BANK, NULL, &r);
	assert_error(&r, 403, "forbidden");
	request(1, "GET", "/v1/apps/cafe/agents/barista", AUTH_ALL, NULL, &r);
	assert_int_equal(r.status, 200);
	request(1, "POST", "/v1/executions", AUTH_BANK JSON, "{\"app\":\"cafe\",\"code\":\"\"}", &r);
	assert_error(&r, 403, "forbidden");
	request(1, "POST", "/v1/executions", AUTH_BANK JSON, "{\"app\":\"bank\",\"code\":\"x\"}", &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(fx.e.last_token, 2);
	/* the cancel goes to the engine with the caller's token */
	request(1, "POST", "/v1/executions/r1/cancel", AUTH_ALL, NULL, &r);
	assert_error(&r, 404, "unknown_request");
	still_serving();
}

static void test_http_bad_bodies(void **state)
{
	struct resp r;
	unsigned calls = fx.e.exec_calls;

	(void)state;
	request(0, "POST", "/v1/executions", JSON, "{\"app\":", &r);
	assert_error(&r, 400, "bad_request");
	assert_non_null(strstr(r.body, "malformed JSON at byte offset 7"));
	request(0, "POST", "/v1/executions", JSON, "{\"app\":\"cafe\",\"code\":1}", &r);
	assert_error(&r, 400, "bad_request");
	assert_non_null(strstr(r.body, "code: must be a string"));
	request(0, "POST", "/v1/executions", JSON, "", &r);
	assert_error(&r, 400, "bad_request");
	request(0, "POST", "/v1/executions", NULL, "{\"app\":\"cafe\",\"code\":\"\"}", &r);
	assert_error(&r, 415, "unsupported_media_type");
	request(0, "POST", "/v1/executions", "Content-Type: application/jsonx\r\n", "{\"app\":\"cafe\",\"code\":\"\"}",
		&r);
	assert_error(&r, 415, "unsupported_media_type");
	request(0, "POST", "/v1/executions", "Content-Type: text/plain\r\n", "{}", &r);
	assert_error(&r, 415, "unsupported_media_type");
	assert_int_equal(fx.e.exec_calls, calls); /* none reached the engine */
	still_serving();
}

static void test_http_engine_statuses(void **state)
{
	struct resp r;

	(void)state;
	request(0, "POST", "/v1/executions", JSON, "{\"app\":\"cafe\",\"code\":\"overload\"}", &r);
	assert_error(&r, 429, "overloaded");
	assert_string_equal(header(&r, "Retry-After"), "7");
	request(1, "POST", "/v1/executions", AUTH_ALL JSON, "{\"app\":\"cafe\",\"code\":\"drain\"}", &r);
	assert_error(&r, 503, "draining");
	assert_string_equal(header(&r, "Retry-After"), "2");
	request(0, "POST", "/v1/executions", JSON, "{\"app\":\"cafe\",\"code\":\"dup\"}", &r);
	assert_error(&r, 409, "request_running");
	assert_string_equal(header(&r, "Retry-After"), "");
	still_serving();
}

static void test_http_oversize(void **state)
{
	char *big = malloc(MAX_BODY + 200), head[256];
	struct resp r;
	int fd, n;

	(void)state;
	assert_non_null(big);
	/* Content-Length over the bound: 413 before any byte is read */
	memset(big, ' ', MAX_BODY + 1);
	memcpy(big, "{\"app\":\"cafe\",\"code\":\"\"}", 24);
	big[MAX_BODY + 1] = '\0';
	request(0, "POST", "/v1/executions", JSON, big, &r);
	assert_error(&r, 413, "body_too_large");
	/* exactly the bound is fine */
	big[MAX_BODY] = '\0';
	request(0, "POST", "/v1/executions", JSON, big, &r);
	assert_int_equal(r.status, 200);
	/* chunked, no length: cut once the bound is crossed */
	fd = connect_unix(fx.sock);
	n = snprintf(head, sizeof(head),
		     "POST /v1/executions HTTP/1.1\r\nHost: t\r\nConnection: close\r\n" JSON
		     "Transfer-Encoding: chunked\r\n\r\n");
	send_all(fd, head, (size_t)n);
	for (int i = 0; i < 3; i++) {
		n = snprintf(head, sizeof(head), "%x\r\n", MAX_BODY / 2);
		send_all(fd, head, (size_t)n);
		send_all(fd, big, MAX_BODY / 2);
		send_all(fd, "\r\n", 2);
	}
	read_resp(fd, &r, 10000);
	close(fd);
	assert_error(&r, 413, "body_too_large");
	free(big);
	still_serving();
}

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* One byte every 300 ms: the idle timeout never fires, the body deadline
 * does. */
static void test_http_slow_body_trickle(void **state)
{
	static const char head[] = "POST /v1/executions HTTP/1.1\r\nHost: t\r\nConnection: close\r\n" JSON
				   "Content-Length: 100\r\n\r\n{";
	uint64_t t0 = ms_now(), took;
	int fd = connect_unix(fx.sock);
	struct resp r;

	(void)state;
	send_all(fd, head, sizeof(head) - 1);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, 300) == 1)
			break; /* the server has spoken */
		if (send(fd, " ", 1, MSG_NOSIGNAL) != 1)
			break;
		assert_true(ms_now() - t0 < 10000);
	}
	read_resp(fd, &r, 5000);
	close(fd);
	took = ms_now() - t0;
	assert_error(&r, 408, "request_timeout");
	assert_true(took >= BODY_TIMEOUT * 1000 - 100 && took < BODY_TIMEOUT * 1000 + 3000);
	still_serving();
}

/* Headers, part of the body, then nothing: the watchdog answers. */
static void test_http_slow_body_silent(void **state)
{
	static const char head[] = "POST /v1/executions HTTP/1.1\r\nHost: t\r\nConnection: close\r\n" JSON
				   "Content-Length: 100\r\n\r\n{\"app\":";
	uint64_t t0 = ms_now(), took;
	int fd = connect_unix(fx.sock);
	struct resp r;

	(void)state;
	send_all(fd, head, sizeof(head) - 1);
	read_resp(fd, &r, 10000);
	close(fd);
	took = ms_now() - t0;
	assert_error(&r, 408, "request_timeout");
	assert_true(took >= BODY_TIMEOUT * 1000 - 100 && took < BODY_TIMEOUT * 1000 + 3000);
	still_serving();
}

/* Headers sent a byte at a time never finish: the connection is cut
 * (no response: there is no request yet). */
static void test_http_slow_headers(void **state)
{
	static const char head[] = "GET /v1/health HTTP/1.1\r\nHost: t\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	uint64_t t0 = ms_now();
	int fd = connect_tcp(fx.port);
	size_t i = 0;
	char c;

	(void)state;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, 200) == 1)
			break;
		if (send(fd, &head[i % (sizeof(head) - 1)], 1, MSG_NOSIGNAL) != 1)
			break;
		i++;
		assert_true(ms_now() - t0 < 10000);
	}
	assert_true(recv(fd, &c, 1, 0) <= 0);
	close(fd);
	assert_true(ms_now() - t0 >= BODY_TIMEOUT * 1000 - 100);
	still_serving();
}

/* Several executions at once: one thread each, none waits for another. */
struct par {
	struct resp r;
};

static void *par_exec(void *arg)
{
	struct par *p = arg;

	request(0, "POST", "/v1/executions", JSON, "{\"app\":\"cafe\",\"code\":\"slow\"}", &p->r);
	return NULL;
}

static void test_http_concurrent(void **state)
{
	struct par p[6];
	pthread_t t[6];
	uint64_t t0 = ms_now();

	(void)state;
	for (int i = 0; i < 6; i++)
		assert_int_equal(pthread_create(&t[i], NULL, par_exec, &p[i]), 0);
	for (int i = 0; i < 6; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(p[i].r.status, 200);
	}
	assert_true(ms_now() - t0 < 2500); /* six 1 s executions side by side */
}

static void test_http_start_refusals(void **state)
{
	struct http_opts o = opts();
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char err[512], other[100], want[512];
	struct http_server *s;
	struct stat st;
	int fd;

	(void)state;
	/* a live socket: ours */
	o.listen = NULL;
	assert_null(http_start(&o, &fx.e, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s: a server is listening there", fx.sock);
	assert_string_equal(err, want);

	/* not a socket */
	snprintf(other, sizeof(other), "%s/file", fx.dir);
	write_file(other, "keep me", 0600);
	o.socket_path = other;
	assert_null(http_start(&o, &fx.e, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s exists and is not a socket; refusing to replace it", other);
	assert_string_equal(err, want);
	unlink(other);

	/* a stale socket is replaced, with the mode asked for */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", other);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	o.socket_mode = 0600;
	s = http_start(&o, &fx.e, err, sizeof(err));
	if (s == NULL)
		fail_msg("stale socket not replaced: %s", err);
	assert_int_equal(lstat(other, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	fd = connect_unix(other);
	assert_true(fd >= 0);
	close(fd);
	http_stop(s);
	assert_int_equal(lstat(other, &st), -1);

	/* TCP without tokens; tokens others can read; a bad address */
	o = opts();
	o.socket_path = NULL;
	o.tokens_path = NULL;
	assert_null(http_start(&o, &fx.e, err, sizeof(err)));
	assert_string_equal(err, "--listen needs --tokens: TCP has no other access control");
	o.tokens_path = other;
	write_file(other, T_ALL "\n", 0604);
	assert_null(http_start(&o, &fx.e, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s: mode 0604 lets others read it; chmod o-rw %s", other, other);
	assert_string_equal(err, want);
	unlink(other);
	o.tokens_path = fx.tokens;
	o.listen = "::1:80";
	assert_null(http_start(&o, &fx.e, err, sizeof(err)));
	assert_string_equal(err, "--listen ::1:80: an IPv6 address goes in brackets: [ADDR6]:PORT");
	o.listen = "localhost:80";
	assert_null(http_start(&o, &fx.e, err, sizeof(err)));
	assert_non_null(strstr(err, "--listen localhost:80: "));
	o.listen = NULL;
	assert_null(http_start(&o, &fx.e, err, sizeof(err)));
	assert_string_equal(err, "no listener: a socket path, a TCP address, or both");
	/* an unknown group: nothing left beside the socket's place */
	o = opts();
	o.listen = NULL;
	o.socket_path = other;
	o.socket_group = "cordon-no-such-group";
	assert_null(http_start(&o, &fx.e, err, sizeof(err)));
	assert_string_equal(err, "socket group cordon-no-such-group: no such group");
	assert_int_equal(lstat(other, &st), -1);
	still_serving();
}

/* Reads one response on a kept-alive connection: the head, then
 * Content-Length bytes. */
static void read_one(int fd, struct resp *r)
{
	char buf[8192], *sep = NULL;
	size_t len = 0, need = 0;

	memset(r, 0, sizeof(*r));
	while (sep == NULL || len < need) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t got;

		assert_int_equal(poll(&p, 1, 5000), 1);
		got = recv(fd, buf + len, sizeof(buf) - 1 - len, 0);
		assert_true(got > 0);
		len += (size_t)got;
		buf[len] = '\0';
		if (sep == NULL && (sep = strstr(buf, "\r\n\r\n")) != NULL) {
			memcpy(r->head, buf, (size_t)(sep - buf));
			need = (size_t)(sep + 4 - buf) + (size_t)atoi(header(r, "Content-Length"));
		}
	}
	r->body_len = len - (size_t)(sep + 4 - buf);
	memcpy(r->body, sep + 4, r->body_len);
	assert_int_equal(sscanf(buf, "HTTP/1.1 %d ", &r->status), 1);
}

/* Last: after http_quiesce() nothing new is accepted; a connection
 * already open is answered, and told to close. */
static void test_http_quiesce(void **state)
{
	static const char get[] = "GET /v1/health HTTP/1.1\r\nHost: t\r\n\r\n";
	struct resp r;
	char c;
	int fd;

	(void)state;
	fd = connect_unix(fx.sock);
	assert_true(fd >= 0);
	send_all(fd, get, sizeof(get) - 1);
	read_one(fd, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(header(&r, "Connection"), "");
	http_quiesce(fx.srv);
	send_all(fd, get, sizeof(get) - 1);
	read_one(fd, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(header(&r, "Connection"), "close");
	assert_int_equal(recv(fd, &c, 1, 0), 0);
	close(fd);
	assert_int_equal(connect_unix(fx.sock), -1);
	assert_int_equal(errno, ECONNREFUSED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_http_socket_mode),
		cmocka_unit_test(test_http_routes),
		cmocka_unit_test(test_http_not_found_and_method),
		cmocka_unit_test(test_http_sessions),
		cmocka_unit_test(test_http_tokens),
		cmocka_unit_test(test_http_bad_bodies),
		cmocka_unit_test(test_http_engine_statuses),
		cmocka_unit_test(test_http_oversize),
		cmocka_unit_test(test_http_slow_body_trickle),
		cmocka_unit_test(test_http_slow_body_silent),
		cmocka_unit_test(test_http_slow_headers),
		cmocka_unit_test(test_http_concurrent),
		cmocka_unit_test(test_http_start_refusals),
		cmocka_unit_test(test_http_quiesce),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
