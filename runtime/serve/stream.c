/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stream.c - one execution's or cell's event sink (stream.h).
 *
 * Events are serialised when they happen, on the producer's thread, into
 * a queue of text the reader drains; the queue's bound is checked before
 * anything is appended, so a reader that stops reading costs at most
 * buffer_max bytes and never a producer's wait.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/utf8.h"
#include "runtime/serve/stream.h"

/* Bytes of a UTF-8 character held back at a chunk's end: at most 3. */
#define STREAM_CARRY_MAX 3

struct ev_node {
	struct ev_node *next;
	size_t len, off;
	char text[];
};

enum stream_state {
	ST_WAITING,  /* admitted or queued, the program not yet started */
	ST_STARTED,  /* "start" queued */
	ST_ENDED,    /* the last event queued, or the HTTP error known */
};

struct stream {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned refs;
	enum stream_format fmt;
	size_t max, queued;
	struct ev_node *head, *tail;
	enum stream_state state;
	int status;                 /* ST_ENDED: the engine's */
	struct serve_err err;
	uint64_t dropped_bytes;     /* output lost since the last "dropped" */
	unsigned dropped_events;
	char carry[2][STREAM_CARRY_MAX];
	size_t ncarry[2];
	int gone;
	void (*cancel)(void *ctx, const char *why);
	void *cancel_ctx;
	struct serve_stream_hooks hooks;
};

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- the queue (st->mu held) ----------------------------------------- */

/* The event's wire text: type and a JSON object, consumed. */
static struct ev_node *ev_render(enum stream_format f, const char *type, cJSON *obj)
{
	char *json = obj != NULL ? cJSON_PrintUnformatted(obj) : NULL;
	struct ev_node *n = NULL;
	size_t jl, cap;

	cJSON_Delete(obj);
	if (json == NULL)
		return NULL;
	jl = strlen(json);
	cap = jl + strlen(type) + 32;
	n = malloc(sizeof(*n) + cap);
	if (n != NULL) {
		int w = f == STREAM_SSE ? snprintf(n->text, cap, "event: %s\ndata: %s\n\n", type, json)
					: snprintf(n->text, cap, "%s\n", json);

		n->next = NULL;
		n->off = 0;
		n->len = w > 0 ? (size_t)w : 0;
	}
	cJSON_free(json);
	return n;
}

static void ev_append(struct stream *st, struct ev_node *n)
{
	if (st->tail != NULL)
		st->tail->next = n;
	else
		st->head = n;
	st->tail = n;
	st->queued += n->len;
	pthread_cond_broadcast(&st->cv);
}

static cJSON *ev_obj(const char *type)
{
	cJSON *o = cJSON_CreateObject();

	if (o != NULL && cJSON_AddStringToObject(o, "type", type) == NULL) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* A "dropped" event for what was lost, if anything; past the bound. */
static void ev_dropped_flush(struct stream *st)
{
	cJSON *o;
	struct ev_node *n;

	if (st->dropped_events == 0)
		return;
	o = ev_obj("dropped");
	if (o == NULL || cJSON_AddNumberToObject(o, "bytes", (double)st->dropped_bytes) == NULL ||
	    cJSON_AddNumberToObject(o, "events", (double)st->dropped_events) == NULL) {
		cJSON_Delete(o);
		return; /* out of memory: counted on, said with the next */
	}
	if ((n = ev_render(st->fmt, "dropped", o)) == NULL)
		return;
	ev_append(st, n);
	st->dropped_bytes = 0;
	st->dropped_events = 0;
}

/* A droppable event (output, toolCall): queued when it fits, else counted
 * (raw: the output bytes it carried).  obj consumed. */
static void ev_offer(struct stream *st, const char *type, cJSON *obj, size_t raw)
{
	struct ev_node *n;

	if (st->state == ST_ENDED || st->gone) {
		cJSON_Delete(obj);
		return;
	}
	n = ev_render(st->fmt, type, obj);
	/* Room is kept for the marker that says what was lost: ~64 bytes. */
	if (n == NULL || st->queued + n->len + 128 > st->max) {
		free(n);
		st->dropped_bytes += raw;
		st->dropped_events++;
		return;
	}
	ev_dropped_flush(st);
	ev_append(st, n);
}

/* A final event: always queued.  obj consumed. */
static void ev_force(struct stream *st, const char *type, cJSON *obj)
{
	struct ev_node *n = ev_render(st->fmt, type, obj);

	if (n != NULL)
		ev_append(st, n);
}

/* ---- output text ------------------------------------------------------- */

/* How many bytes at the end of b[0..n) begin a character that the next
 * bytes may complete: 0 when none does. */
static size_t utf8_tail_open(const unsigned char *b, size_t n)
{
	for (size_t k = 1; k <= STREAM_CARRY_MAX && k <= n; k++) {
		unsigned char c = b[n - k];
		size_t need;

		if ((c & 0xC0) == 0x80)
			continue; /* a continuation byte: look further back */
		need = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 1;
		return need > k ? k : 0;
	}
	return 0;
}

/* One chunk's event from raw bytes (already split to the chunk bound). */
static void out_event(struct stream *st, int which, const char *raw, size_t len)
{
	size_t replaced = 0;
	char *text = utf8_sanitize(raw, len, &replaced);
	cJSON *o = text != NULL ? ev_obj(which == 1 ? "stdout" : "stderr") : NULL;

	if (o == NULL || cJSON_AddStringToObject(o, "text", text) == NULL ||
	    (replaced > 0 && cJSON_AddNumberToObject(o, "replaced", (double)replaced) == NULL)) {
		cJSON_Delete(o);
		o = NULL;
	}
	free(text);
	if (o == NULL) {
		st->dropped_bytes += len;
		st->dropped_events++;
		return;
	}
	ev_offer(st, which == 1 ? "stdout" : "stderr", o, len);
}

static void on_output(void *arg, int fd, const char *data, size_t len)
{
	struct stream *st = arg;
	int w = fd == 2 ? 1 : 0;
	char buf[STREAM_CHUNK_MAX + STREAM_CARRY_MAX];

	pthread_mutex_lock(&st->mu);
	while (len > 0) {
		size_t c = st->ncarry[w], take = len > STREAM_CHUNK_MAX ? STREAM_CHUNK_MAX : len, open_;

		memcpy(buf, st->carry[w], c);
		memcpy(buf + c, data, take);
		data += take;
		len -= take;
		c += take;
		open_ = utf8_tail_open((const unsigned char *)buf, c);
		memcpy(st->carry[w], buf + c - open_, open_);
		st->ncarry[w] = open_;
		if (c > open_)
			out_event(st, fd == 2 ? 2 : 1, buf, c - open_);
	}
	pthread_mutex_unlock(&st->mu);
}

static void on_call(void *arg, const cJSON *entry)
{
	struct stream *st = arg;
	cJSON *o = ev_obj("toolCall");

	if (o != NULL && !cJSON_AddItemToObject(o, "call", cJSON_Duplicate(entry, 1))) {
		cJSON_Delete(o);
		o = NULL;
	}
	pthread_mutex_lock(&st->mu);
	if (o != NULL) {
		ev_offer(st, "toolCall", o, 0);
	} else {
		st->dropped_events++;
	}
	pthread_mutex_unlock(&st->mu);
}

static void start_event(struct stream *st, const char *exec_id)
{
	cJSON *o = ev_obj("start");

	if (o != NULL && cJSON_AddStringToObject(o, "executionId", exec_id) == NULL) {
		cJSON_Delete(o);
		o = NULL;
	}
	ev_force(st, "start", o);
	st->state = ST_STARTED;
	pthread_cond_broadcast(&st->cv);
}

static void on_started(void *arg, const char *exec_id)
{
	struct stream *st = arg;

	pthread_mutex_lock(&st->mu);
	if (st->state == ST_WAITING)
		start_event(st, exec_id);
	pthread_mutex_unlock(&st->mu);
}

static void bind_cancel(void *arg, void (*cancel)(void *ctx, const char *why), void *ctx)
{
	struct stream *st = arg;

	pthread_mutex_lock(&st->mu);
	st->cancel = cancel;
	st->cancel_ctx = ctx;
	/* Gone before the engine could be told: told now. */
	if (st->gone && cancel != NULL)
		cancel(ctx, "the client disconnected");
	pthread_mutex_unlock(&st->mu);
}

/* ---- lifecycle --------------------------------------------------------- */

struct stream *stream_new(enum stream_format f, size_t buffer_max)
{
	struct stream *st = calloc(1, sizeof(*st));
	pthread_condattr_t ca;
	int cv_ok = 0;

	if (st == NULL)
		return NULL;
	if (pthread_condattr_init(&ca) == 0) {
		cv_ok = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 && pthread_cond_init(&st->cv, &ca) == 0;
		pthread_condattr_destroy(&ca);
	}
	if (!cv_ok || pthread_mutex_init(&st->mu, NULL) != 0) {
		if (cv_ok)
			pthread_cond_destroy(&st->cv);
		free(st);
		return NULL;
	}
	st->refs = 1;
	st->fmt = f;
	st->max = buffer_max ? buffer_max : STREAM_BUFFER_DEFAULT;
	st->hooks.events = (struct sandbox_events){ .arg = st, .started = on_started, .output = on_output,
						    .call = on_call };
	st->hooks.bind_cancel = bind_cancel;
	return st;
}

void stream_ref(struct stream *st)
{
	pthread_mutex_lock(&st->mu);
	st->refs++;
	pthread_mutex_unlock(&st->mu);
}

void stream_unref(struct stream *st)
{
	unsigned left;

	if (st == NULL)
		return;
	pthread_mutex_lock(&st->mu);
	left = --st->refs;
	pthread_mutex_unlock(&st->mu);
	if (left > 0)
		return;
	for (struct ev_node *n = st->head, *next; n != NULL; n = next) {
		next = n->next;
		free(n);
	}
	pthread_cond_destroy(&st->cv);
	pthread_mutex_destroy(&st->mu);
	free(st);
}

const struct serve_stream_hooks *stream_hooks(struct stream *st)
{
	return &st->hooks;
}

void stream_finish(struct stream *st, int status, cJSON *result, const struct serve_err *err)
{
	const cJSON *v, *id;
	cJSON *o;

	pthread_mutex_lock(&st->mu);
	if (status == 200 && result != NULL) {
		/* A harness error ends before the program starts: its result
		 * still names the execution. */
		if (st->state == ST_WAITING) {
			id = cJSON_GetObjectItemCaseSensitive(result, "executionId");
			start_event(st, cJSON_IsString(id) ? id->valuestring : "");
		}
		/* What a held-back character's bytes were: as the result
		 * says them, replaced. */
		for (int w = 0; w < 2; w++) {
			size_t c = st->ncarry[w];

			st->ncarry[w] = 0;
			if (c > 0)
				out_event(st, w + 1, st->carry[w], c);
		}
		ev_dropped_flush(st);
		cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(result, "violations"))
		{
			o = ev_obj("violation");
			if (o != NULL && !cJSON_AddItemToObject(o, "violation", cJSON_Duplicate(v, 1))) {
				cJSON_Delete(o);
				o = NULL;
			}
			ev_force(st, "violation", o);
		}
		o = ev_obj("result");
		if (o != NULL && !cJSON_AddItemToObject(o, "result", result)) {
			cJSON_Delete(o);
			o = NULL;
		} else {
			result = NULL;
		}
		ev_force(st, "result", o);
		st->status = 200;
	} else if (st->state == ST_STARTED) {
		/* Started, then no result (out of memory): the stream still
		 * ends with a final event, not a silent close. */
		ev_dropped_flush(st);
		o = ev_obj("error");
		if (o != NULL && (cJSON_AddStringToObject(o, "code", err && err->code[0] ? err->code : "internal") == NULL ||
				  cJSON_AddStringToObject(o, "message", err ? err->message : "") == NULL)) {
			cJSON_Delete(o);
			o = NULL;
		}
		ev_force(st, "error", o);
		st->status = 200;
	} else {
		st->status = status == 200 ? 500 : status;
		if (err != NULL)
			st->err = *err;
		if (status == 200)
			snprintf(st->err.code, sizeof(st->err.code), "internal");
	}
	cJSON_Delete(result);
	st->state = ST_ENDED;
	pthread_cond_broadcast(&st->cv);
	pthread_mutex_unlock(&st->mu);
}

int stream_wait_begun(struct stream *st, struct serve_err *err)
{
	int status;

	pthread_mutex_lock(&st->mu);
	while (st->state == ST_WAITING)
		pthread_cond_wait(&st->cv, &st->mu);
	status = st->head != NULL ? 200 : st->status;
	if (status != 200)
		*err = st->err;
	pthread_mutex_unlock(&st->mu);
	return status;
}

/* 1 when the peer hung up (or reset): its reading end is gone. */
static int peer_gone(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLRDHUP };

	return fd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

ssize_t stream_read(struct stream *st, char *buf, size_t max, int conn_fd)
{
	uint64_t idle_since = mono_ms();
	ssize_t got = 0;

	pthread_mutex_lock(&st->mu);
	for (;;) {
		struct timespec ts;

		if (st->head != NULL || st->state == ST_ENDED)
			break;
		if (peer_gone(conn_fd)) {
			got = -1;
			goto out;
		}
		if (mono_ms() - idle_since >= STREAM_KEEPALIVE_MS) {
			const char *ka = st->fmt == STREAM_SSE ? ": keepalive\n\n" : "\n";

			got = (ssize_t)strlen(ka) < (ssize_t)max ? (ssize_t)strlen(ka) : (ssize_t)max;
			memcpy(buf, ka, (size_t)got);
			goto out;
		}
		/* A second at a time: the peer's hang-up is looked for between
		 * waits, so a silent program's reader leaving is seen. */
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&st->cv, &st->mu, &ts);
	}
	while (st->head != NULL && (size_t)got < max) {
		struct ev_node *n = st->head;
		size_t take = n->len - n->off;

		if (take > max - (size_t)got)
			take = max - (size_t)got;
		memcpy(buf + got, n->text + n->off, take);
		got += (ssize_t)take;
		n->off += take;
		if (n->off == n->len) {
			st->head = n->next;
			if (st->head == NULL)
				st->tail = NULL;
			st->queued -= n->len;
			free(n);
		}
	}
out:
	pthread_mutex_unlock(&st->mu);
	return got;
}

void stream_reader_gone(struct stream *st)
{
	pthread_mutex_lock(&st->mu);
	st->gone = 1;
	if (st->state != ST_ENDED && st->cancel != NULL)
		st->cancel(st->cancel_ctx, "the client disconnected");
	pthread_mutex_unlock(&st->mu);
	stream_unref(st);
}
