/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stream.h - one execution followed as it runs (docs/serve.md,
 * "Streaming"): the event sink between the sandbox's threads (output
 * capture, tool bridge) and the HTTP connection that reads it.
 *
 *   stream_new()          an empty sink for one reader, in SSE or NDJSON.
 *   stream_hooks()        the callbacks the engine hands to the sandbox
 *                         (sandbox_events) and the cancel handle it binds.
 *   stream_finish()       the producer's end: violations, then the result
 *                         (or the HTTP error when nothing started).
 *   stream_wait_begun()   the reader: blocks until the program started or
 *                         the execution ended, to know whether to stream or
 *                         answer an HTTP error.
 *   stream_read()         the reader: the next bytes of event text.
 *   stream_reader_gone()  the reader left: cancels a running execution.
 *
 * Bounds: output events carry only what the capture keeps (its limit
 * bounds them), split in chunks of at most STREAM_CHUNK_MAX bytes of
 * output.  Events wait in a buffer of at most buffer_max bytes; a producer
 * never waits for the reader: an output or toolCall event that does not
 * fit is dropped and counted, and a "dropped" event (bytes and events lost)
 * goes before the next one that fits.  The final events (dropped,
 * violation, result, error) are always queued, whatever the bound.
 *
 * Text: output is UTF-8; a byte that does not begin a well-formed character
 * becomes U+FFFD (as in the result's stdout), and a character cut by a
 * chunk's end is held back for the next chunk, so the chunks joined equal
 * the result's stdout and stderr.
 *
 * Reuse: nothing here knows what an execution is beyond the callbacks of
 * sandbox_events and a cancel to bind, so a code-interpreter cell is
 * streamed by the same code: a sink per cell, its hooks on the cell's
 * request (sandbox_cell_opts), stream_finish() with the cell's result.
 *
 * Threads: every call is thread-safe.  A stream is reference counted: new
 * gives one reference (the reader's), stream_ref() another (the
 * producer's); stream_reader_gone() and stream_unref() each drop one.
 * Nothing blocks but the reader's two calls, and the producers never wait
 * for the reader.
 */
#ifndef CORDON_SERVE_STREAM_H
#define CORDON_SERVE_STREAM_H

#include <stddef.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "runtime/serve/engine.h"

enum stream_format {
	STREAM_SSE,    /* text/event-stream: "event: T\ndata: JSON\n\n" */
	STREAM_NDJSON, /* application/x-ndjson: "JSON\n" */
};

#define STREAM_BUFFER_DEFAULT (256u << 10)
#define STREAM_CHUNK_MAX 4096u
/* With nothing to send for this long the reader gets a keep-alive (an SSE
 * comment, an empty NDJSON line), so proxies and the server's own idle
 * timeout see a live connection. */
#define STREAM_KEEPALIVE_MS 10000u
/* How long a streamed answer may make no progress (a reader that reads
 * nothing) before its connection is cut, in place of the server's idle
 * bound (--body-timeout + 5 s): a reader may pause this long and still get
 * the result, which waits in the buffer.  What a stalled reader holds is
 * bounded meanwhile: one connection, buffer_max and the result. */
#define STREAM_STALL_S 300u

struct stream;

/* NULL when out of memory.  buffer_max 0: STREAM_BUFFER_DEFAULT. */
struct stream *stream_new(enum stream_format f, size_t buffer_max);
void stream_ref(struct stream *st);
void stream_unref(struct stream *st);

/* The engine's side (engine.h, struct serve_stream_hooks). */
const struct serve_stream_hooks *stream_hooks(struct stream *st);

/* The execution ended: status and, on 200, result (consumed; its
 * violations are sent as events before it), else err. */
void stream_finish(struct stream *st, int status, cJSON *result, const struct serve_err *err);

/* 200 once the program started or the execution ended with a result (then
 * the events are streamed); another status with err when it ended without
 * one (404, 409, 429, 503: an HTTP error answers the request). */
int stream_wait_begun(struct stream *st, struct serve_err *err);

/* Up to max bytes of event text into buf; blocks until there are some.
 * Returns the count, 0 at the end (everything sent), or -1 when the peer
 * on conn_fd (-1: not watched) hung up. */
ssize_t stream_read(struct stream *st, char *buf, size_t max, int conn_fd);

/* Drops the reader's reference; an execution still running is cancelled
 * ("the client disconnected"). */
void stream_reader_gone(struct stream *st);

#endif
