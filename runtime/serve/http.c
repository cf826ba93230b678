/* SPDX-License-Identifier: Apache-2.0 */
/*
 * http.c - cordon serve's HTTP front (http.h).
 *
 * libmicrohttpd parses HTTP; this file routes, authenticates, bounds the
 * body and turns engine answers into responses.  Each request walks:
 * route (404) -> method (405) -> token (401) -> app scope (403) ->
 * Content-Type (415) -> Content-Length (413) -> body within its deadline
 * (408/413) -> JSON (400) -> engine.  Every check that needs no body comes
 * before the body is read, so an unauthenticated client cannot make the
 * server buffer anything.
 *
 * Slow clients.  libmicrohttpd 0.9.75 only knows an idle timeout, which a
 * client sending one byte every few seconds never trips, and it refuses a
 * response queued while a body is still arriving.  So the server keeps
 * its own record of each connection's phase (idle or receiving headers,
 * receiving a body, handled, cut) and a watchdog thread cuts the ones past
 * their deadline: a late body gets a fixed 408 written to the socket
 * before the write side is shut, an idle or header-sending connection is
 * shut without a word.  The same record serialises the watchdog with the
 * connection's own thread, and libmicrohttpd closes a socket only after
 * telling us (MHD_CONNECTION_NOTIFY_CLOSED, under our lock), so the
 * watchdog never touches a closed or reused fd.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "runtime/serve/engine.h"
#include "runtime/serve/exec_request.h"
#include "runtime/serve/http.h"
#include "runtime/serve/metrics.h"
#include "runtime/serve/mhd.h"
#include "runtime/serve/stream.h"

/* libmicrohttpd through the table mhd.c loaded (mhd.h says why). */
#define MHD (mhd_get())
#include "runtime/serve/tokens.h"

/* A cut connection may still be sending; after this long its read side
 * is shut too, so its thread ends whatever the client does. */
#define HTTP_LINGER_MS 2000
#define HTTP_WATCHDOG_TICK_MS 100
/* libmicrohttpd's idle timeout is the body timeout plus this: past the
 * watchdog's deadline and its linger. */
#define HTTP_MHD_TIMEOUT_SLACK_S 5
#define HTTP_ARTIFACT_NAME_MAX 4096
#define HTTP_EXEC_ID_MAX 64

enum conn_phase {
	CONN_IDLE,     /* between requests, or receiving headers */
	CONN_BODY,     /* headers seen, body arriving: the deadline runs */
	CONN_HANDLING, /* body complete: the engine has it, then the response */
	CONN_CUT,      /* the watchdog or the body bound ended it */
};

/* One accepted connection (libmicrohttpd's socket context). */
struct http_conn {
	struct http_conn *prev, *next;
	int fd;                /* libmicrohttpd's; valid until NOTIFY_CLOSED */
	enum conn_phase phase;
	uint64_t since_ms;     /* the phase's start */
	int lingering;         /* CUT: read side already shut */
};

struct http_listener {
	struct http_server *srv;
	int tcp;
	int fd;                /* ours until libmicrohttpd takes it, -1 after */
	struct MHD_Daemon *d;
};

#define HTTP_STOP_WAIT_MS 5000

struct http_server {
	struct engine *e;
	struct metrics *m;
	struct tokens *tokens;
	size_t max_body;
	uint64_t body_timeout_ms;
	struct http_listener unix_l, tcp_l;
	char *socket_path;     /* set once the path is ours */
	dev_t sock_dev;
	ino_t sock_ino;
	unsigned tcp_port;
	atomic_int draining;

	pthread_mutex_t lock;  /* conns, every conn's phase, stopping */
	pthread_cond_t wake;
	struct http_conn *conns;
	int stopping;
	/* Requests begun and not yet completed (their response fully sent or
	 * their connection gone): http_stop() lets them finish first. */
	atomic_uint active;
	int lock_ok, wake_ok, watchdog_started;
	pthread_t watchdog;
};

enum route {
	R_NONE,
	R_HEALTH,
	R_READY,
	R_METRICS,
	R_APPS,
	R_AGENT,
	R_EXEC,
	R_CANCEL,
	R_ARTIFACT,
	R_SESSIONS, /* POST /v1/sessions */
	R_SESSION,  /* GET, DELETE /v1/sessions/{id} */
	R_CELLS,    /* POST /v1/sessions/{id}/cells */
};

/* One request (libmicrohttpd's per-request context). */
struct http_req {
	struct http_conn *conn;
	enum route route;
	char *path;            /* a copy of the URL; the params point into it */
	const char *p1, *p2;   /* app/agent, request id, execution id/name */
	struct serve_scope scope;
	char *body;            /* routes with a JSON body only (route_body()); others are counted and dropped */
	size_t len, cap;
	int replied;           /* a response was queued before the body */
	int is_delete;         /* R_SESSION: DELETE, not GET */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- responses ------------------------------------------------------- */

static const char *status_code_name(int status)
{
	switch (status) {
	case 400: return "bad_request";
	case 401: return "unauthorized";
	case 403: return "forbidden";
	case 404: return "not_found";
	case 405: return "method_not_allowed";
	case 408: return "request_timeout";
	case 409: return "conflict";
	case 413: return "body_too_large";
	case 415: return "unsupported_media_type";
	case 429: return "overloaded";
	case 503: return "unavailable";
	default: return "internal";
	}
}

static enum MHD_Result queue(struct http_server *s, struct MHD_Connection *c, int status, struct MHD_Response *r)
{
	enum MHD_Result ok;

	if (r == NULL)
		return MHD_NO;
	/* Draining: a kept-alive client goes elsewhere for its next request. */
	if (atomic_load(&s->draining))
		MHD->add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	ok = MHD->queue_response(c, (unsigned)status, r);
	MHD->destroy_response(r);
	if (ok == MHD_YES)
		metrics_http(s->m, status);
	return ok;
}

static void text_free(void *p)
{
	cJSON_free(p);
}

/* doc is consumed. */
static struct MHD_Response *json_response(cJSON *doc)
{
	struct MHD_Response *r = NULL;
	char *text = doc ? cJSON_PrintUnformatted(doc) : NULL;

	cJSON_Delete(doc);
	if (text == NULL)
		return NULL;
	r = MHD->create_response_from_buffer_with_free_callback(strlen(text), text, text_free);
	if (r == NULL) {
		cJSON_free(text);
		return NULL;
	}
	MHD->add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	return r;
}

static cJSON *error_doc(const char *code, const char *message)
{
	cJSON *doc = cJSON_CreateObject(), *e = cJSON_AddObjectToObject(doc, "error");

	if (e == NULL || !cJSON_AddStringToObject(e, "code", code) || !cJSON_AddStringToObject(e, "message", message)) {
		cJSON_Delete(doc);
		return NULL;
	}
	return doc;
}

static enum MHD_Result reply_error(struct http_server *s, struct MHD_Connection *c, int status, const char *code,
				   const char *message, unsigned retry_after_s, const char *allow)
{
	struct MHD_Response *r = json_response(error_doc(code && *code ? code : status_code_name(status), message));
	char ra[16];

	if (r == NULL)
		return MHD_NO;
	if (retry_after_s > 0 && (status == 429 || status == 503)) {
		snprintf(ra, sizeof(ra), "%u", retry_after_s);
		MHD->add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, ra);
	}
	if (allow != NULL)
		MHD->add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	if (status == 401)
		MHD->add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
	return queue(s, c, status, r);
}

/* An engine answer: doc on 2xx, err otherwise. */
static enum MHD_Result reply_engine(struct http_server *s, struct MHD_Connection *c, int status, cJSON *doc,
				    const struct serve_err *err)
{
	if (status >= 200 && status < 300) {
		if (doc == NULL)
			return reply_error(s, c, 500, "internal", "the engine gave no answer", 0, NULL);
		return queue(s, c, status, json_response(doc));
	}
	cJSON_Delete(doc);
	if (status < 400 || status > 599)
		return reply_error(s, c, 500, "internal", "the engine answered an unexpected status", 0, NULL);
	return reply_error(s, c, status, err->code, err->message[0] ? err->message : status_code_name(status),
			   err->retry_after_s, NULL);
}

/* ---- connections and the watchdog ------------------------------------ */

/* Ends conn, lock held.  status 408/413: a fixed response goes first.
 * The socket is libmicrohttpd's and non-blocking; a response that does not
 * fit the send buffer at once is cut short, which a client stalled long
 * enough to be cut has earned. */
static void conn_cut(struct http_server *s, struct http_conn *conn, int status)
{
	static const char b408[] = "{\"error\":{\"code\":\"request_timeout\","
				   "\"message\":\"the request body did not arrive in time\"}}";
	static const char b413[] = "{\"error\":{\"code\":\"body_too_large\","
				   "\"message\":\"the request body is over the server's --max-body\"}}";
	const char *body = status == 408 ? b408 : b413;
	char r[320];
	int len = 0;

	if (status == 408 || status == 413)
		len = snprintf(r, sizeof(r),
			       "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nConnection: close\r\n"
			       "Content-Length: %zu\r\n\r\n%s",
			       status, status == 408 ? "Request Timeout" : "Content Too Large", strlen(body), body);
	if (conn->phase == CONN_CUT)
		return;
	if (len > 0 && (size_t)len < sizeof(r)) {
		metrics_http(s->m, status);
		(void)send(conn->fd, r, (size_t)len, MSG_NOSIGNAL | MSG_DONTWAIT);
		(void)shutdown(conn->fd, SHUT_WR);
	} else {
		(void)shutdown(conn->fd, SHUT_RDWR);
		conn->lingering = 1;
	}
	conn->phase = CONN_CUT;
	conn->since_ms = now_ms();
}

static void *watchdog_main(void *arg)
{
	struct http_server *s = arg;
	struct timespec ts;

	pthread_mutex_lock(&s->lock);
	while (!s->stopping) {
		uint64_t now = now_ms();

		for (struct http_conn *c = s->conns; c != NULL; c = c->next) {
			if ((c->phase == CONN_IDLE || c->phase == CONN_BODY) && now - c->since_ms > s->body_timeout_ms) {
				conn_cut(s, c, c->phase == CONN_BODY ? 408 : 0);
			} else if (c->phase == CONN_CUT && !c->lingering && now - c->since_ms > HTTP_LINGER_MS) {
				(void)shutdown(c->fd, SHUT_RDWR);
				c->lingering = 1;
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += HTTP_WATCHDOG_TICK_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&s->wake, &s->lock, &ts);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct http_listener *l = cls;
	struct http_server *s = l->srv;
	struct http_conn *conn = *socket_context;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci = MHD->get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

		/* Without a record the request handler refuses the
		 * connection (it could not be cut). */
		conn = calloc(1, sizeof(*conn));
		if (conn == NULL || ci == NULL) {
			free(conn);
			return;
		}
		conn->fd = ci->connect_fd;
		conn->phase = CONN_IDLE;
		conn->since_ms = now_ms();
		pthread_mutex_lock(&s->lock);
		conn->next = s->conns;
		if (s->conns != NULL)
			s->conns->prev = conn;
		s->conns = conn;
		pthread_mutex_unlock(&s->lock);
		*socket_context = conn;
		return;
	}
	if (conn == NULL)
		return;
	pthread_mutex_lock(&s->lock);
	if (conn->prev != NULL)
		conn->prev->next = conn->next;
	else
		s->conns = conn->next;
	if (conn->next != NULL)
		conn->next->prev = conn->prev;
	pthread_mutex_unlock(&s->lock);
	free(conn);
	*socket_context = NULL;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
	struct http_listener *l = cls;
	struct http_req *rq = *con_cls;

	(void)c;
	(void)toe;
	if (rq == NULL)
		return;
	if (rq->conn != NULL) {
		pthread_mutex_lock(&l->srv->lock);
		if (rq->conn->phase != CONN_CUT) {
			rq->conn->phase = CONN_IDLE;
			rq->conn->since_ms = now_ms();
		}
		pthread_mutex_unlock(&l->srv->lock);
	}
	free(rq->path);
	free(rq->body);
	free(rq);
	*con_cls = NULL;
	atomic_fetch_sub(&l->srv->active, 1);
}

/* ---- routing ---------------------------------------------------------- */

/* "a/b/c" segments of an artifact's path below out/: no empty, "." or
 * ".." segment, no control character.  The engine resolves it safely; this
 * only keeps nonsense out of its way. */
static int artifact_name_ok(const char *s)
{
	size_t len = strlen(s);
	const char *seg = s;

	if (len == 0 || len > HTTP_ARTIFACT_NAME_MAX)
		return 0;
	for (const char *p = s;; p++) {
		if (*p == '/' || *p == '\0') {
			size_t sl = (size_t)(p - seg);

			if (sl == 0 || (sl == 1 && seg[0] == '.') || (sl == 2 && seg[0] == '.' && seg[1] == '.'))
				return 0;
			if (*p == '\0')
				return 1;
			seg = p + 1;
		} else if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			return 0;
		}
	}
}

/* Splits path (a writable copy of the URL) into the route and its
 * parameters; R_NONE for anything else, names included that could not
 * exist. */
static enum route route_match(char *path, const char **p1, const char **p2)
{
	char *seg[6];
	unsigned n = 0;
	char *p = path, *rest = NULL;

	*p1 = *p2 = NULL;
	if (*p != '/')
		return R_NONE;
	p++;
	while (n < 6) {
		char *slash = strchr(p, '/');

		seg[n++] = p;
		if (slash == NULL)
			break;
		*slash = '\0';
		p = slash + 1;
		if (n == 5) { /* an artifact's name keeps its slashes */
			rest = p;
			break;
		}
	}
	if (n == 1 && strcmp(seg[0], "metrics") == 0)
		return R_METRICS;
	if (n < 2 || strcmp(seg[0], "v1") != 0)
		return R_NONE;
	if (n == 2 && strcmp(seg[1], "health") == 0)
		return R_HEALTH;
	if (n == 2 && strcmp(seg[1], "ready") == 0)
		return R_READY;
	if (n == 2 && strcmp(seg[1], "apps") == 0)
		return R_APPS;
	if (n == 2 && strcmp(seg[1], "executions") == 0)
		return R_EXEC;
	if (n == 2 && strcmp(seg[1], "sessions") == 0)
		return R_SESSIONS;
	if ((n == 3 || (n == 4 && strcmp(seg[3], "cells") == 0)) && rest == NULL && strcmp(seg[1], "sessions") == 0 &&
	    exec_request_name_ok(seg[2], HTTP_EXEC_ID_MAX)) {
		*p1 = seg[2];
		return n == 3 ? R_SESSION : R_CELLS;
	}
	if (n == 5 && rest == NULL && strcmp(seg[1], "apps") == 0 && strcmp(seg[3], "agents") == 0 &&
	    exec_request_name_ok(seg[2], EXEC_REQUEST_NAME_MAX) && exec_request_name_ok(seg[4], EXEC_REQUEST_NAME_MAX)) {
		*p1 = seg[2];
		*p2 = seg[4];
		return R_AGENT;
	}
	if (n == 4 && strcmp(seg[1], "executions") == 0 && strcmp(seg[3], "cancel") == 0 &&
	    exec_request_name_ok(seg[2], SERVE_REQUEST_ID_MAX)) {
		*p1 = seg[2];
		return R_CANCEL;
	}
	if (n == 5 && rest != NULL && strcmp(seg[1], "executions") == 0 && strcmp(seg[3], "artifacts") == 0 &&
	    exec_request_name_ok(seg[2], HTTP_EXEC_ID_MAX)) {
		/* seg[4] ended at the slash now a NUL: put it back */
		rest[-1] = '/';
		if (!artifact_name_ok(seg[4]))
			return R_NONE;
		*p1 = seg[2];
		*p2 = seg[4];
		return R_ARTIFACT;
	}
	if (n == 5 && rest == NULL && strcmp(seg[1], "executions") == 0 && strcmp(seg[3], "artifacts") == 0 &&
	    exec_request_name_ok(seg[2], HTTP_EXEC_ID_MAX) && artifact_name_ok(seg[4])) {
		*p1 = seg[2];
		*p2 = seg[4];
		return R_ARTIFACT;
	}
	return R_NONE;
}

/* The methods a route takes, as the Allow header lists them. */
static const char *route_method(enum route r)
{
	if (r == R_SESSION)
		return "GET, DELETE";
	return r == R_EXEC || r == R_CANCEL || r == R_SESSIONS || r == R_CELLS ? MHD_HTTP_METHOD_POST
										 : MHD_HTTP_METHOD_GET;
}

static int route_allows(enum route r, const char *method)
{
	if (r == R_SESSION)
		return strcmp(method, MHD_HTTP_METHOD_GET) == 0 || strcmp(method, MHD_HTTP_METHOD_DELETE) == 0;
	return strcmp(method, route_method(r)) == 0;
}

/* The routes whose JSON body is read and kept. */
static int route_body(enum route r)
{
	return r == R_EXEC || r == R_SESSIONS || r == R_CELLS;
}

static int scope_has_app(const struct serve_scope *sc, const char *app)
{
	if (sc->all)
		return 1;
	for (unsigned i = 0; i < sc->napps; i++)
		if (strcmp(sc->apps[i], app) == 0)
			return 1;
	return 0;
}

/* application/json, with or without parameters (charset=utf-8). */
static int content_type_json(const char *v)
{
	size_t n = strlen("application/json");

	if (v == NULL)
		return 0;
	while (*v == ' ' || *v == '\t')
		v++;
	if (strncasecmp(v, "application/json", n) != 0)
		return 0;
	v += n;
	while (*v == ' ' || *v == '\t')
		v++;
	return *v == '\0' || *v == ';';
}

/* The first call of a request: every check that needs no body.  A
 * response queued here (rq->replied) ends the request before its body is
 * read. */
static enum MHD_Result request_begin(struct http_listener *l, struct MHD_Connection *c, struct http_req *rq,
				     const char *method)
{
	struct http_server *s = l->srv;
	const char *v, *allow = NULL, *code = NULL;
	char msg[96] = "";
	int status = 0;

	if (rq->route == R_NONE) {
		status = 404, code = "not_found", snprintf(msg, sizeof(msg), "no such resource");
	} else if (!route_allows(rq->route, method)) {
		allow = route_method(rq->route);
		status = 405, code = "method_not_allowed", snprintf(msg, sizeof(msg), "this resource takes %s", allow);
	} else if (!l->tcp) {
		rq->scope.all = 1; /* the socket's mode and group decided */
		rq->scope.token_index = 0;
	} else if (rq->route != R_HEALTH) {
		v = MHD->lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
		if (!tokens_check(s->tokens, v, &rq->scope))
			status = 401, code = "unauthorized",
			snprintf(msg, sizeof(msg), "%s",
				 v ? "the bearer token is not valid" : "an Authorization: Bearer token is needed");
	}
	if (status == 0 && rq->route == R_AGENT && !scope_has_app(&rq->scope, rq->p1))
		status = 403, code = "forbidden", snprintf(msg, sizeof(msg), "the token is not scoped to this app");
	if (status == 0 && route_body(rq->route) &&
	    !content_type_json(MHD->lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE)))
		status = 415, code = "unsupported_media_type",
		snprintf(msg, sizeof(msg), "Content-Type must be application/json");
	v = MHD->lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (status == 0 && v != NULL) {
		char *end = NULL;
		unsigned long long cl;

		errno = 0;
		cl = strtoull(v, &end, 10);
		/* libmicrohttpd has checked the number; this only compares */
		if (errno == 0 && end != v && cl > s->max_body)
			status = 413, code = "body_too_large",
			snprintf(msg, sizeof(msg), "the request body is over %zu bytes", s->max_body);
	}
	if (status == 0)
		return MHD_YES;
	rq->replied = 1;
	return reply_error(s, c, status, code, msg, 0, allow);
}

/* ---- streamed executions and cells (stream.h) ------------------------ */

/* The execution or cell of a streamed request runs on a thread of its
 * own, so that its connection's thread can queue the streaming response
 * as soon as the program (or cell) starts and then feed it. */
struct stream_job {
	struct http_server *s;
	struct stream *st;           /* the job's reference */
	struct serve_scope scope;    /* apps borrowed from the tokens, which outlive the server's threads */
	struct serve_exec_req er;
	char *session_id;            /* a cell of this session; NULL: an execution */
};

static void *stream_job_main(void *arg)
{
	struct stream_job *j = arg;
	struct serve_err err = { .code = "" };
	cJSON *out = NULL;
	int status = j->session_id != NULL
			     ? engine_session_cell(j->s->e, &j->scope, j->session_id, &j->er, &out, &err)
			     : engine_execute(j->s->e, &j->scope, &j->er, &out, &err);

	stream_finish(j->st, status, out, &err);
	serve_exec_req_free(&j->er);
	stream_unref(j->st);
	atomic_fetch_sub(&j->s->active, 1);
	free(j->session_id);
	free(j);
	return NULL;
}

/* The reader's side: one per streamed response. */
struct stream_reader {
	struct stream *st;
	int fd;                      /* the connection's, watched for a hang-up */
};

static ssize_t stream_reader_cb(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream_reader *r = cls;
	ssize_t got = stream_read(r->st, buf, max, r->fd);

	(void)pos;
	if (got < 0)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	return got == 0 ? MHD_CONTENT_READER_END_OF_STREAM : got;
}

/* libmicrohttpd is done with the response: sent whole, or the client left
 * (then a running execution is cancelled: stream.h). */
static void stream_reader_free(void *cls)
{
	struct stream_reader *r = cls;

	stream_reader_gone(r->st);
	free(r);
}

/* The Accept header asks for a stream: its format, or -1 for the one JSON
 * answer.  A media range is matched by name; parameters and q are not
 * weighed (a client asking for a stream asks for nothing else). */
static int accept_stream(const char *v)
{
	if (v == NULL)
		return -1;
	if (strcasestr(v, "text/event-stream") != NULL)
		return STREAM_SSE;
	if (strcasestr(v, "application/x-ndjson") != NULL)
		return STREAM_NDJSON;
	return -1;
}

/* er's contents move to the job whatever happens.  session_id: a cell of
 * that session (copied); NULL: an execution. */
static enum MHD_Result handle_exec_stream(struct http_server *s, struct MHD_Connection *c, struct http_req *rq,
					  struct serve_exec_req *er, enum stream_format f, const char *session_id)
{
	struct serve_err err = { .code = "" };
	struct stream_job *j = calloc(1, sizeof(*j));
	struct stream_reader *r = calloc(1, sizeof(*r));
	struct stream *st = stream_new(f, 0);
	struct MHD_Response *resp = NULL;
	pthread_attr_t pa;
	pthread_t t;
	int status, started = 0;

	if (j == NULL || r == NULL || st == NULL ||
	    (session_id != NULL && (j->session_id = strdup(session_id)) == NULL))
		goto oom;
	j->s = s;
	j->st = st;
	j->scope = rq->scope;
	j->er = *er;
	memset(er, 0, sizeof(*er));
	j->er.stream = stream_hooks(st);
	stream_ref(st); /* the job's */
	atomic_fetch_add(&s->active, 1);
	if (pthread_attr_init(&pa) == 0) {
		pthread_attr_setdetachstate(&pa, PTHREAD_CREATE_DETACHED);
		started = pthread_create(&t, &pa, stream_job_main, j) == 0;
		pthread_attr_destroy(&pa);
	}
	if (!started) {
		atomic_fetch_sub(&s->active, 1);
		stream_unref(st);
		serve_exec_req_free(&j->er);
		free(j->session_id);
		goto oom;
	}
	j = NULL; /* the thread's */
	status = stream_wait_begun(st, &err);
	if (status != 200) {
		stream_unref(st);
		free(r);
		return reply_engine(s, c, status, NULL, &err);
	}
	r->st = st;
	r->fd = rq->conn->fd;
	resp = MHD->create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, stream_reader_cb, r, stream_reader_free);
	if (resp == NULL) {
		stream_reader_gone(st); /* cancels it: nobody will read */
		free(r);
		return MHD_NO;
	}
	(void)MHD->set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, STREAM_STALL_S);
	MHD->add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				 f == STREAM_SSE ? "text/event-stream" : "application/x-ndjson");
	MHD->add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	/* a buffering proxy in front would hold the events back */
	MHD->add_response_header(resp, "X-Accel-Buffering", "no");
	return queue(s, c, 200, resp);
oom:
	if (j != NULL)
		free(j->session_id);
	free(j);
	free(r);
	stream_unref(st);
	serve_exec_req_free(er);
	return reply_error(s, c, 500, "internal", "out of memory", 0, NULL);
}

static enum MHD_Result handle_exec(struct http_server *s, struct MHD_Connection *c, struct http_req *rq)
{
	int f = accept_stream(MHD->lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT));
	struct serve_exec_req er;
	struct serve_err err = { .code = "" };
	cJSON *out = NULL;
	char why[512];
	int status;

	if (exec_request_parse(rq->body ? rq->body : "", rq->len, &er, why, sizeof(why)) != 0)
		return reply_error(s, c, 400, "bad_request", why, 0, NULL);
	if (!scope_has_app(&rq->scope, er.app)) {
		serve_exec_req_free(&er);
		return reply_error(s, c, 403, "forbidden", "the token is not scoped to this app", 0, NULL);
	}
	if (f >= 0)
		return handle_exec_stream(s, c, rq, &er, (enum stream_format)f, NULL);
	status = engine_execute(s->e, &rq->scope, &er, &out, &err);
	/* The engine took the contents; what is left (if anything) is ours. */
	serve_exec_req_free(&er);
	return reply_engine(s, c, status, out, &err);
}

static enum MHD_Result handle_artifact(struct http_server *s, struct MHD_Connection *c, struct http_req *rq)
{
	struct serve_err err = { .code = "" };
	struct MHD_Response *r;
	uint64_t size = 0;
	int fd = -1, status;

	status = engine_artifact(s->e, &rq->scope, rq->p1, rq->p2, &fd, &size, &err);
	if (status != 200) {
		if (fd >= 0)
			close(fd);
		return reply_engine(s, c, status, NULL, &err);
	}
	/* libmicrohttpd owns fd from here, and closes it with the response */
	r = MHD->create_response_from_fd64(size, fd);
	if (r == NULL) {
		close(fd);
		return reply_error(s, c, 500, "internal", "out of memory", 0, NULL);
	}
	MHD->add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream");
	return queue(s, c, 200, r);
}

/* POST /v1/sessions and POST /v1/sessions/{id}/cells: bodies of the
 * execution's shape (exec_request.h, each kind its own keys).  A cell is
 * streamed on the same Accept as an execution; a session's creation runs
 * no code and is never streamed. */
static enum MHD_Result handle_session_post(struct http_server *s, struct MHD_Connection *c, struct http_req *rq)
{
	enum exec_request_kind kind = rq->route == R_SESSIONS ? EXEC_REQ_SESSION : EXEC_REQ_CELL;
	int f = accept_stream(MHD->lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT));
	struct serve_exec_req er;
	struct serve_err err = { .code = "" };
	cJSON *out = NULL;
	char why[512];
	int status;

	if (exec_request_parse_kind(rq->body ? rq->body : "", rq->len, kind, &er, why, sizeof(why)) != 0)
		return reply_error(s, c, 400, "bad_request", why, 0, NULL);
	if (kind == EXEC_REQ_SESSION && !scope_has_app(&rq->scope, er.app)) {
		serve_exec_req_free(&er);
		return reply_error(s, c, 403, "forbidden", "the token is not scoped to this app", 0, NULL);
	}
	if (kind == EXEC_REQ_CELL && f >= 0)
		return handle_exec_stream(s, c, rq, &er, (enum stream_format)f, rq->p1);
	if (kind == EXEC_REQ_SESSION)
		status = engine_session_create(s->e, &rq->scope, &er, &out, &err);
	else
		status = engine_session_cell(s->e, &rq->scope, rq->p1, &er, &out, &err);
	serve_exec_req_free(&er);
	return reply_engine(s, c, status, out, &err);
}

/* GET and DELETE /v1/sessions/{id}: who asks is the token and the query's
 * tenant and user (?tenant=T&user=U), as the session's creator named them
 * in its context. */
static enum MHD_Result handle_session(struct http_server *s, struct MHD_Connection *c, struct http_req *rq)
{
	const char *tenant = MHD->lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "tenant");
	const char *user = MHD->lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "user");
	struct serve_err err = { .code = "" };
	cJSON *out = NULL;
	int status;

	if (rq->is_delete)
		status = engine_session_delete(s->e, &rq->scope, rq->p1, tenant, user, &out, &err);
	else
		status = engine_session_get(s->e, &rq->scope, rq->p1, tenant, user, &out, &err);
	return reply_engine(s, c, status, out, &err);
}

/* The request is whole: act on it. */
static enum MHD_Result request_handle(struct http_server *s, struct MHD_Connection *c, struct http_req *rq)
{
	struct serve_err err = { .code = "" };
	struct MHD_Response *r;
	cJSON *out = NULL;
	char *text;
	size_t len = 0;
	int status;

	switch (rq->route) {
	case R_HEALTH:
		out = cJSON_CreateObject();
		if (out == NULL || !cJSON_AddStringToObject(out, "status", "ok")) {
			cJSON_Delete(out);
			return MHD_NO;
		}
		return queue(s, c, 200, json_response(out));
	case R_READY:
		status = engine_ready(s->e, &out);
		if (status != 200 && status != 503) {
			cJSON_Delete(out);
			return reply_error(s, c, 500, "internal", "the engine answered an unexpected status", 0, NULL);
		}
		return out ? queue(s, c, status, json_response(out))
			   : reply_error(s, c, 500, "internal", "the engine gave no answer", 0, NULL);
	case R_METRICS:
		text = metrics_render(engine_metrics(s->e), &len);
		if (text == NULL)
			return reply_error(s, c, 500, "internal", "out of memory", 0, NULL);
		r = MHD->create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
		if (r == NULL) {
			free(text);
			return MHD_NO;
		}
		MHD->add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; version=0.0.4");
		return queue(s, c, 200, r);
	case R_APPS:
		status = engine_apps(s->e, &rq->scope, &out, &err);
		return reply_engine(s, c, status, out, &err);
	case R_AGENT:
		status = engine_capabilities(s->e, &rq->scope, rq->p1, rq->p2, &out, &err);
		return reply_engine(s, c, status, out, &err);
	case R_EXEC:
		return handle_exec(s, c, rq);
	case R_CANCEL:
		status = engine_cancel(s->e, &rq->scope, rq->p1, &err);
		if (status == 202) {
			out = cJSON_CreateObject();
			if (out == NULL || !cJSON_AddTrueToObject(out, "cancelled")) {
				cJSON_Delete(out);
				return MHD_NO;
			}
		}
		return reply_engine(s, c, status, out, &err);
	case R_ARTIFACT:
		return handle_artifact(s, c, rq);
	case R_SESSIONS:
	case R_CELLS:
		return handle_session_post(s, c, rq);
	case R_SESSION:
		return handle_session(s, c, rq);
	case R_NONE:
		break;
	}
	return reply_error(s, c, 404, "not_found", "no such resource", 0, NULL);
}

/* A part of the body: kept for a route with a JSON body, counted and
 * dropped otherwise. */
static int request_body(struct http_server *s, struct http_req *rq, const char *data, size_t size)
{
	if (size > s->max_body - rq->len)
		return 413;
	if (route_body(rq->route)) {
		if (rq->len + size > rq->cap) {
			size_t cap = rq->cap ? rq->cap : 4096;
			char *b;

			while (cap < rq->len + size)
				cap = cap > s->max_body / 2 ? s->max_body : cap * 2;
			b = realloc(rq->body, cap);
			if (b == NULL)
				return 500;
			rq->body = b;
			rq->cap = cap;
		}
		memcpy(rq->body + rq->len, data, size);
	}
	rq->len += size;
	return 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				  const char *version, const char *upload_data, size_t *upload_data_size,
				  void **con_cls)
{
	struct http_listener *l = cls;
	struct http_server *s = l->srv;
	struct http_req *rq = *con_cls;
	const union MHD_ConnectionInfo *ci;
	enum conn_phase phase;
	enum MHD_Result res;

	(void)version;
	if (rq == NULL) {
		ci = MHD->get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
		if (ci == NULL || ci->socket_context == NULL)
			return MHD_NO; /* no record: it could not be cut, so it is not served */
		rq = calloc(1, sizeof(*rq));
		if (rq == NULL)
			return MHD_NO;
		*con_cls = rq;
		atomic_fetch_add(&s->active, 1);
		rq->conn = ci->socket_context;
		rq->path = strdup(url);
		if (rq->path == NULL)
			return MHD_NO;
		rq->route = route_match(rq->path, &rq->p1, &rq->p2);
		rq->is_delete = strcmp(method, MHD_HTTP_METHOD_DELETE) == 0;
		res = request_begin(l, c, rq, method);
		pthread_mutex_lock(&s->lock);
		phase = rq->conn->phase;
		if (phase != CONN_CUT) {
			rq->conn->phase = rq->replied ? CONN_HANDLING : CONN_BODY;
			rq->conn->since_ms = now_ms();
		}
		pthread_mutex_unlock(&s->lock);
		return phase == CONN_CUT ? MHD_NO : res;
	}
	if (*upload_data_size > 0) {
		size_t size = *upload_data_size;
		int bad = 0;

		*upload_data_size = 0;
		pthread_mutex_lock(&s->lock);
		phase = rq->conn->phase;
		if (phase == CONN_BODY) {
			if (now_ms() - rq->conn->since_ms > s->body_timeout_ms)
				bad = 408;
			else
				bad = request_body(s, rq, upload_data, size);
			if (bad == 408 || bad == 413)
				conn_cut(s, rq->conn, bad);
		}
		pthread_mutex_unlock(&s->lock);
		/* A cut connection's remaining bytes are dropped until the
		 * client stops or the watchdog shuts the socket. */
		return bad == 500 ? MHD_NO : MHD_YES;
	}
	pthread_mutex_lock(&s->lock);
	phase = rq->conn->phase;
	if (phase == CONN_BODY)
		rq->conn->phase = CONN_HANDLING;
	pthread_mutex_unlock(&s->lock);
	if (phase == CONN_CUT)
		return MHD_NO;
	if (rq->replied)
		return MHD_YES; /* answered at the first call */
	return request_handle(s, c, rq);
}

/* ---- listeners -------------------------------------------------------- */

/* What is at path now: 0 nothing, 1 a stale socket (nobody accepts on
 * it), -1 anything else (err says what). */
static int unix_path_state(const char *path, char *err, size_t n)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, rc;

	if (lstat(path, &st) != 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, n, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, n, "%s exists and is not a socket; refusing to replace it", path);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, n, "socket: %s", strerror(errno));
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (rc == 0)
		snprintf(err, n, "%s: a server is listening there", path);
	else if (errno != ECONNREFUSED)
		snprintf(err, n, "%s: cannot tell whether the socket is stale: %s", path, strerror(errno));
	close(fd);
	return rc != 0 && errno == ECONNREFUSED ? 1 : -1;
}

static int group_id(const char *name, gid_t *gid, char *err, size_t n)
{
	struct group gr, *res = NULL;
	char buf[16384];
	int e = getgrnam_r(name, &gr, buf, sizeof(buf), &res);

	if (res == NULL) {
		snprintf(err, n, "socket group %s: %s", name, e ? strerror(e) : "no such group");
		return -1;
	}
	*gid = gr.gr_gid;
	return 0;
}

/* The Unix listener.  The socket is bound in a fresh 0700 directory
 * beside path, given its mode and group there, listening, and only then
 * renamed into place: at no moment can anyone reach it under a looser
 * mode, and a client that finds the path finds a server. */
static int unix_listen(struct http_server *s, const struct http_opts *o, char *err, size_t n)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	mode_t mode = o->socket_mode ? o->socket_mode : 0660;
	char tmp[PATH_MAX] = "", *slash;
	int dfd = -1, fd = -1, state, rc = -1, bound = 0;
	gid_t gid = (gid_t)-1;
	struct stat st;

	if (mode & ~(mode_t)0777) {
		snprintf(err, n, "socket mode %o: only permission bits (at most 0777)", (unsigned)mode);
		return -1;
	}
	if (strlen(o->socket_path) >= sizeof(sa.sun_path)) {
		snprintf(err, n, "%s: a socket path has at most %zu bytes", o->socket_path, sizeof(sa.sun_path) - 1);
		return -1;
	}
	if (o->socket_group != NULL && group_id(o->socket_group, &gid, err, n) != 0)
		return -1;
	state = unix_path_state(o->socket_path, err, n);
	if (state < 0)
		return -1;
	slash = strrchr(o->socket_path, '/');
	if (snprintf(tmp, sizeof(tmp), "%.*s.cordon-serve.XXXXXX", slash ? (int)(slash - o->socket_path + 1) : 0,
		     o->socket_path) >= (int)sizeof(tmp) ||
	    mkdtemp(tmp) == NULL) {
		snprintf(err, n, "temporary directory beside %s: %s", o->socket_path, strerror(errno));
		return -1;
	}
	dfd = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		snprintf(err, n, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	/* The temporary path is longer than the final one; through our own
	 * directory fd it is short whatever the directory's name. */
	if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/s", tmp) >= (int)sizeof(sa.sun_path))
		snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/s", dfd);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(err, n, "socket: %s", strerror(errno));
		goto out;
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		snprintf(err, n, "bind %s: %s", sa.sun_path, strerror(errno));
		goto out;
	}
	bound = 1;
	if (fchmodat(dfd, "s", mode, 0) != 0) {
		snprintf(err, n, "chmod %s: %s", sa.sun_path, strerror(errno));
		goto out;
	}
	if (gid != (gid_t)-1 && fchownat(dfd, "s", (uid_t)-1, gid, AT_SYMLINK_NOFOLLOW) != 0) {
		snprintf(err, n, "chown :%s %s: %s", o->socket_group, sa.sun_path, strerror(errno));
		goto out;
	}
	if (fstatat(dfd, "s", &st, AT_SYMLINK_NOFOLLOW) != 0 || listen(fd, SOMAXCONN) != 0) {
		snprintf(err, n, "listen %s: %s", sa.sun_path, strerror(errno));
		goto out;
	}
	/* Nothing was there: do not replace what may have appeared since.
	 * A stale socket: checked again just before replacing it. */
	if (state == 0 && renameat2(dfd, "s", AT_FDCWD, o->socket_path, RENAME_NOREPLACE) != 0) {
		snprintf(err, n, "%s: %s", o->socket_path,
			 errno == EEXIST ? "appeared while starting; refusing to replace it" : strerror(errno));
		goto out;
	}
	if (state == 1) {
		state = unix_path_state(o->socket_path, err, n);
		if (state == 0)
			snprintf(err, n, "%s: the stale socket vanished while starting", o->socket_path);
		if (state != 1)
			goto out;
		if (renameat(dfd, "s", AT_FDCWD, o->socket_path) != 0) {
			snprintf(err, n, "%s: %s", o->socket_path, strerror(errno));
			goto out;
		}
	}
	bound = 0;
	s->socket_path = strdup(o->socket_path);
	s->sock_dev = st.st_dev;
	s->sock_ino = st.st_ino;
	if (s->socket_path == NULL) {
		(void)unlink(o->socket_path);
		snprintf(err, n, "out of memory");
		goto out;
	}
	s->unix_l.fd = fd;
	fd = -1;
	rc = 0;
out:
	if (bound)
		(void)unlinkat(dfd, "s", 0);
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	(void)rmdir(tmp);
	return rc;
}

/* "ADDR:PORT" or "[ADDR6]:PORT", numeric only: a listener address is not
 * looked up in DNS. */
static int tcp_listen(struct http_server *s, const char *spec, char *err, size_t n)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai = NULL;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[128];
	const char *port, *colon = strrchr(spec, ':');
	size_t hl;
	int fd = -1, rc = -1, one = 1, e;

	if (colon == NULL || colon[1] == '\0') {
		snprintf(err, n, "--listen %s: expected ADDR:PORT", spec);
		return -1;
	}
	port = colon + 1;
	hl = (size_t)(colon - spec);
	if (spec[0] == '[') {
		if (hl < 2 || spec[hl - 1] != ']') {
			snprintf(err, n, "--listen %s: expected [ADDR6]:PORT", spec);
			return -1;
		}
		spec++;
		hl -= 2;
	} else if (memchr(spec, ':', hl) != NULL) {
		snprintf(err, n, "--listen %s: an IPv6 address goes in brackets: [ADDR6]:PORT", spec);
		return -1;
	}
	if (hl == 0 || hl >= sizeof(host)) {
		snprintf(err, n, "--listen: bad address");
		return -1;
	}
	memcpy(host, spec, hl);
	host[hl] = '\0';
	e = getaddrinfo(host, port, &hints, &ai);
	if (e != 0) {
		snprintf(err, n, "--listen %s:%s: %s", host, port, gai_strerror(e));
		return -1;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(err, n, "socket: %s", strerror(errno));
		goto out;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ai->ai_family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl) != 0) {
		snprintf(err, n, "--listen %s:%s: %s", host, port, strerror(errno));
		goto out;
	}
	s->tcp_port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
						     : ((struct sockaddr_in *)&ss)->sin_port);
	s->tcp_l.fd = fd;
	fd = -1;
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	freeaddrinfo(ai);
	return rc;
}

static int daemon_start(struct http_listener *l, const struct http_opts *o, char *err, size_t n)
{
	unsigned limit = o->max_connections ? o->max_connections : HTTP_MAX_CONNECTIONS_DEFAULT;
	unsigned timeout = o->body_timeout_s ? o->body_timeout_s : HTTP_BODY_TIMEOUT_DEFAULT;

	/* One thread per connection: engine_execute() holds its thread for
	 * the whole execution, which a shared pool would starve on. */
	l->d = MHD->start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
					MHD_USE_ITC,
				0, NULL, NULL, on_request, l, MHD_OPTION_LISTEN_SOCKET, l->fd,
				MHD_OPTION_CONNECTION_LIMIT, limit,
				/* the idle bound while a response is sent; the
				 * watchdog covers the other phases, and must come
				 * first there or a late body would get no 408 */
				MHD_OPTION_CONNECTION_TIMEOUT, timeout + HTTP_MHD_TIMEOUT_SLACK_S, MHD_OPTION_NOTIFY_COMPLETED, on_completed, l,
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, l, MHD_OPTION_STRICT_FOR_CLIENT, 1,
				MHD_OPTION_END);
	if (l->d == NULL) {
		snprintf(err, n, "libmicrohttpd did not start on the %s listener", l->tcp ? "TCP" : "Unix");
		return -1;
	}
	l->fd = -1; /* libmicrohttpd's now */
	return 0;
}

struct http_server *http_start(const struct http_opts *o, struct engine *e, char *err, size_t n)
{
	struct http_server *s = NULL;
	pthread_condattr_t ca;

	if (o->socket_path == NULL && o->listen == NULL) {
		snprintf(err, n, "no listener: a socket path, a TCP address, or both");
		return NULL;
	}
	if (o->listen != NULL && o->tokens_path == NULL) {
		snprintf(err, n, "--listen needs --tokens: TCP has no other access control");
		return NULL;
	}
	if (mhd_load(err, n) == NULL)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		snprintf(err, n, "out of memory");
		return NULL;
	}
	s->e = e;
	s->m = engine_metrics(e);
	s->max_body = o->max_body ? o->max_body : HTTP_MAX_BODY_DEFAULT;
	s->body_timeout_ms = 1000ull * (o->body_timeout_s ? o->body_timeout_s : HTTP_BODY_TIMEOUT_DEFAULT);
	s->unix_l = (struct http_listener){ .srv = s, .tcp = 0, .fd = -1 };
	s->tcp_l = (struct http_listener){ .srv = s, .tcp = 1, .fd = -1 };
	atomic_init(&s->draining, 0);
	s->lock_ok = pthread_mutex_init(&s->lock, NULL) == 0;
	if (s->lock_ok && pthread_condattr_init(&ca) == 0) {
		s->wake_ok = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 && pthread_cond_init(&s->wake, &ca) == 0;
		pthread_condattr_destroy(&ca);
	}
	if (!s->wake_ok) {
		snprintf(err, n, "pthread: cannot create a lock");
		goto fail;
	}
	if (o->tokens_path != NULL && (s->tokens = tokens_load(o->tokens_path, err, n)) == NULL)
		goto fail;
	if (o->listen != NULL && tcp_listen(s, o->listen, err, n) != 0)
		goto fail;
	if (o->socket_path != NULL && unix_listen(s, o, err, n) != 0)
		goto fail;
	if (pthread_create(&s->watchdog, NULL, watchdog_main, s) != 0) {
		snprintf(err, n, "pthread_create: cannot start the watchdog");
		goto fail;
	}
	s->watchdog_started = 1;
	if ((s->unix_l.fd >= 0 && daemon_start(&s->unix_l, o, err, n) != 0) ||
	    (s->tcp_l.fd >= 0 && daemon_start(&s->tcp_l, o, err, n) != 0))
		goto fail;
	return s;
fail:
	http_stop(s);
	return NULL;
}

static void listener_quiesce(struct http_listener *l)
{
	if (l->d != NULL) {
		MHD_socket fd = MHD->quiesce_daemon(l->d);

		if (fd != MHD_INVALID_SOCKET)
			close(fd);
	}
	if (l->fd >= 0) {
		close(l->fd);
		l->fd = -1;
	}
}

void http_quiesce(struct http_server *s)
{
	if (s == NULL)
		return;
	atomic_store(&s->draining, 1);
	listener_quiesce(&s->unix_l);
	listener_quiesce(&s->tcp_l);
}

void http_stop(struct http_server *s)
{
	struct stat st;

	if (s == NULL)
		return;
	http_quiesce(s);
	/* An execution the engine finished may still be on its way out:
	 * stopping the daemons closes connections, so a request begun is
	 * given HTTP_STOP_WAIT_MS to complete (its answer sent) first. */
	for (unsigned waited = 0; atomic_load(&s->active) > 0 && waited < HTTP_STOP_WAIT_MS; waited += 10)
		usleep(10000);
	/* Connections are closed and their threads joined; every
	 * NOTIFY_CLOSED has run, so the list is empty after this. */
	if (s->unix_l.d != NULL)
		MHD->stop_daemon(s->unix_l.d);
	if (s->tcp_l.d != NULL)
		MHD->stop_daemon(s->tcp_l.d);
	if (s->watchdog_started) {
		pthread_mutex_lock(&s->lock);
		s->stopping = 1;
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->watchdog, NULL);
	}
	/* Only the socket we made: a later server may own the path now. */
	if (s->socket_path != NULL && lstat(s->socket_path, &st) == 0 && st.st_dev == s->sock_dev &&
	    st.st_ino == s->sock_ino)
		(void)unlink(s->socket_path);
	free(s->socket_path);
	tokens_free(s->tokens);
	if (s->wake_ok)
		pthread_cond_destroy(&s->wake);
	if (s->lock_ok)
		pthread_mutex_destroy(&s->lock);
	free(s);
}

unsigned http_tcp_port(const struct http_server *s)
{
	return s ? s->tcp_port : 0;
}
