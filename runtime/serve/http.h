/* SPDX-License-Identifier: Apache-2.0 */
/*
 * http.h - the HTTP front of cordon serve: libmicrohttpd on a Unix socket
 * and, optionally, a TCP port; routing, authentication and bounds per the
 * API contract (docs: the OpenAPI file), then one engine.h call per
 * request.
 *
 *   http_start()    creates the listeners and starts serving: one thread
 *                   per connection (engine_execute() blocks for the whole
 *                   execution), plus a watchdog thread that cuts slow
 *                   clients.  A streamed execution or session cell
 *                   (Accept: SSE or NDJSON, stream.h) runs on a thread
 *                   of its own while its connection's thread feeds the
 *                   events from the stream's buffer.  Fails with nothing left behind.
 *   http_quiesce()  stops accepting: the listening sockets are closed (the
 *                   Unix socket's path stays until http_stop()); open
 *                   connections are served, with "Connection: close".
 *   http_stop()     closes every connection and waits for their threads,
 *                   so the engine must have ended its executions first
 *                   (a thread inside engine_execute() is waited for);
 *                   removes the socket path if it is still ours; frees.
 *
 * Access: the Unix socket's mode and group are its access control (every
 * request there has the unscoped scope, token_index 0).  On TCP every
 * request but GET /v1/health needs "Authorization: Bearer TOKEN" from the
 * tokens file (tokens.h).
 *
 * Slow clients: a request's body must arrive within body_timeout_s of its
 * headers (408 otherwise, trickling or silent); a connection may sit idle,
 * or send its headers, for no longer than body_timeout_s either.
 */
#ifndef CORDON_SERVE_HTTP_H
#define CORDON_SERVE_HTTP_H

#include <stddef.h>
#include <sys/types.h>

struct engine;
struct http_server;

#define HTTP_MAX_BODY_DEFAULT (16u << 20)
#define HTTP_BODY_TIMEOUT_DEFAULT 30
#define HTTP_MAX_CONNECTIONS_DEFAULT 256

struct http_opts {
	/* The Unix listener; NULL: none (then listen is required).  An
	 * existing path is replaced only when it is a stale socket (nothing
	 * accepts on it); anything else is refused. */
	const char *socket_path;
	mode_t socket_mode;       /* 0: 0660; at most 0777 */
	const char *socket_group; /* NULL: the process's group */
	/* "ADDR:PORT" or "[ADDR6]:PORT", numeric; port 0 takes any (see
	 * http_tcp_port()).  NULL: no TCP listener.  Needs tokens_path. */
	const char *listen;
	const char *tokens_path;
	size_t max_body;          /* bytes; 0: HTTP_MAX_BODY_DEFAULT */
	unsigned body_timeout_s;  /* 0: HTTP_BODY_TIMEOUT_DEFAULT */
	unsigned max_connections; /* per listener; 0: HTTP_MAX_CONNECTIONS_DEFAULT */
};

/* e is borrowed and must outlive the server.  NULL with err on failure. */
struct http_server *http_start(const struct http_opts *o, struct engine *e, char *err, size_t n);

void http_quiesce(struct http_server *s);

/* Safe on NULL. */
void http_stop(struct http_server *s);

/* The TCP listener's port (useful after port 0), 0 when none. */
unsigned http_tcp_port(const struct http_server *s);

#endif
