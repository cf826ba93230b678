/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge.c - the tool bridge: accept, check, run, answer, audit.
 *
 * Threads: one accepts; each connection gets one thread that reads frames
 * in order and answers each.  Shared state (the audit file, the list of
 * calls, the lazily opened ledger, the fault) sits behind one mutex; the
 * ledger has its own.  A tool runs on its connection's thread, so a slow
 * tool only delays the next call on that connection, never the run's
 * timeout.
 *
 * Records before answers: a call's audit line (and, for a side-effect
 * tool, the ledger's copy of its answer) is written before its answer is
 * sent.  A record that cannot be written faults the bridge: that call is
 * answered in_doubt when its tool acted (internal_error when it did not),
 * every later call is refused without running, and the run's result is
 * status error (bridge_failed(), read by sandbox_reduce()).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "common/tool_path.h"
#include "common/utf8.h"
#include "runtime/client/constraint_text.h"
#include "runtime/constraint_eval.h"
#include "runtime/launch/cgroup.h"
#include "runtime/ledger/ledger.h"
#include "runtime/outcome.h"
#include "runtime/supervise/bridge.h"
#include "runtime/supervise/params_check.h"
#include "runtime/supervise/request.h"
#include "runtime/supervise/secrets.h"
#include "runtime/supervise/tool_exec.h"

struct bridge_conn {
	struct bridge *b;
	int fd;
	int idle;          /* waiting for a frame to start; atomic */
	uint64_t last_ms;  /* when its last frame ended (acceptor-side estimate); atomic */
	pthread_t thread;
	int used;          /* a thread was started and not joined yet */
	int done;          /* the thread has finished (joinable without waiting); atomic */
};

struct bridge {
	struct bridge_cfg cfg;
	int listen_fd;
	int stop_fd; /* eventfd: readable once the run ends */
	pthread_t acceptor;
	int acceptor_started;
	pthread_mutex_t mu;
	struct bridge_conn conns[BRIDGE_MAX_CONNS];
	cJSON *calls;       /* toolCalls, under mu */
	unsigned ncalls;    /* all calls, also those not listed */
	unsigned tool_runs; /* tool executions started: the t<n> of their cgroups */
	unsigned dropped;   /* refused past BRIDGE_MAX_CALLS, without an audit line */
	unsigned peer_refusals; /* connections refused at the peer check; under mu */
	int peer_summarized;    /* bridge_stop() wrote their summary line (stop may run twice) */
	struct ledger *ledger; /* under mu until opened */
	char ledger_err[256];
	ino_t child_pidns;
	/* A record that could not be written (bridge_fault); under mu.  The
	 * first is the one reported. */
	int faulted;
	char fault_stage[16];
	char fault_msg[512];
	int audit_broken;   /* a line failed: no later line is appended after it */
	off_t audit_len;    /* the audit's length up to its last whole line */
	int audit_synced;   /* bridge_stop() made the audit durable (stop may run twice) */
};

/* What one call came to: the deciding check and the answer's parts. */
struct verdict {
	const char *check; /* the check that decided ("exec" when the tool ran) */
	const char *code;  /* NULL: allowed */
	const char *reason; /* finer than code, for the audit line and tests */
	char message[512];
	char audit[320];   /* the audit line's message when message quotes the caller's values */
	cJSON *result;     /* allowed: the tool's answer (owned) */
	cJSON *detail;     /* a failed tool's own words, scrubbed and bounded (owned) */
	int retryable;     /* the tool failed before any effect, by its word (exit 75) */
	int replayed;
	int doubt;         /* its tool ran, but the answer is withheld as in_doubt: audited "allowed" */
	int unrecorded;    /* the ledger could not record the answer ("recorded": false) */
	int close_after;   /* auth or framing: the connection cannot go on */
	uint64_t tool_ms;
	int started;       /* the tool may have acted (tool_exec_res.started) */
	int params_known;  /* the params passed the signature: their names may be logged */
	/* How the exec step ran the tool, for the audit line (exec_meta). */
	int exec_meta;
	const char *run_as;  /* policy_run_as_name(), or "caller" (rootless dedicated) */
	int ids_set;         /* the tool ran as uid/gid below */
	uid_t uid;
	gid_t gid;
	int cg_tried;        /* a cgroup was asked for (cg_host given) */
	enum cg_kind cg_mem, cg_pids;
	int cgu_ok;
	struct cg_usage cgu;
	int cg_left;         /* destroy failed: something of the call may still run */
};

static uint64_t bridge_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void verdict_deny(struct verdict *v, const char *check, const char *code, const char *reason,
			 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void verdict_deny(struct verdict *v, const char *check, const char *code, const char *reason,
			 const char *fmt, ...)
{
	va_list ap;

	v->check = check;
	v->code = code;
	v->reason = reason;
	va_start(ap, fmt);
	vsnprintf(v->message, sizeof(v->message), fmt, ap);
	va_end(ap);
	/* A message cut at its size may end inside a character: the answer,
	 * the audit line and the recorded answer must stay UTF-8. */
	v->message[utf8_prefix(v->message, strlen(v->message))] = '\0';
}

/* What a call returned or said is dropped: its answer is replaced by a
 * verdict that says why (a record of it could not be written). */
static void verdict_withhold(struct verdict *v)
{
	cJSON_Delete(v->result);
	v->result = NULL;
	cJSON_Delete(v->detail);
	v->detail = NULL;
	v->retryable = 0;
	v->audit[0] = '\0';
}

static void bridge_fault(struct bridge *b, const char *stage, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The first record the bridge could not write: from now on no call runs
 * (bridge_serve_frame), and the run's result is an error naming stage. */
static void bridge_fault(struct bridge *b, const char *stage, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&b->mu);
	if (!b->faulted) {
		b->faulted = 1;
		snprintf(b->fault_stage, sizeof(b->fault_stage), "%s", stage);
		va_start(ap, fmt);
		vsnprintf(b->fault_msg, sizeof(b->fault_msg), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&b->mu);
}

/* 1 with the fault's message in msg when the bridge has faulted. */
static int bridge_fault_get(struct bridge *b, char *msg, size_t n)
{
	int f;

	pthread_mutex_lock(&b->mu);
	f = b->faulted;
	if (f)
		snprintf(msg, n, "%.*s", (int)(n > 0 ? n - 1 : 0), b->fault_msg);
	pthread_mutex_unlock(&b->mu);
	return f;
}

/* --- the socket ------------------------------------------------------ */

int bridge_listen(const char *path, int chown_to, uid_t uid, gid_t gid, int *fd, char *err, size_t n)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s = -1;

	*fd = -1;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, n, "socket path %s is too long for AF_UNIX", path);
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof(sa)) != 0 || chmod(path, 0600) != 0 ||
	    (chown_to && chown(path, uid, gid) != 0) || listen(s, 64) != 0) {
		snprintf(err, n, "socket %s: %s", path, strerror(errno));
		if (s >= 0)
			close(s);
		return -1;
	}
	*fd = s;
	return 0;
}

/* --- frames ---------------------------------------------------------- */

/* Reads exactly len bytes.  Before the first byte it waits as long as the
 * connection lives (idle != NULL, and *idle is 1 meanwhile, so the acceptor
 * may end the connection for a new one); once a frame has started, the rest
 * must come within BRIDGE_FRAME_TIMEOUT_MS.  Returns 1 when complete, 0 on
 * a clean end before any byte (EOF, or the run stopping), -1 on a cut (EOF,
 * timeout, error, stop). */
static int bridge_read_full(struct bridge *b, int fd, void *buf, size_t len, int *idle)
{
	size_t got = 0;
	int idle_ok = idle != NULL;
	uint64_t deadline = idle_ok ? 0 : bridge_now_ms() + BRIDGE_FRAME_TIMEOUT_MS;
	int rc = 1;

	if (idle != NULL)
		__atomic_store_n(idle, 1, __ATOMIC_RELEASE);

	while (got < len) {
		struct pollfd pfd[2] = { { .fd = fd, .events = POLLIN }, { .fd = b->stop_fd, .events = POLLIN } };
		int wait = -1;
		ssize_t r;

		if (deadline != 0) {
			uint64_t t = bridge_now_ms();

			if (t >= deadline) {
				rc = -1;
				break;
			}
			wait = (int)(deadline - t);
		}
		if (poll(pfd, 2, wait) < 0) {
			if (errno == EINTR)
				continue;
			rc = -1;
			break;
		}
		if (pfd[1].revents) {
			rc = got == 0 && idle_ok ? 0 : -1;
			break;
		}
		if (pfd[0].revents == 0)
			continue;
		r = read(fd, (char *)buf + got, len - got);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0) {
			rc = got == 0 && idle_ok ? 0 : -1;
			break;
		}
		if (got == 0 && idle != NULL)
			__atomic_store_n(idle, 0, __ATOMIC_RELEASE);
		got += (size_t)r;
		if (deadline == 0)
			deadline = bridge_now_ms() + BRIDGE_FRAME_TIMEOUT_MS;
	}
	if (idle != NULL)
		__atomic_store_n(idle, 0, __ATOMIC_RELEASE);
	return rc;
}

static int bridge_write_full(struct bridge *b, int fd, const void *buf, size_t len)
{
	size_t put = 0;
	uint64_t deadline = bridge_now_ms() + BRIDGE_FRAME_TIMEOUT_MS;

	while (put < len) {
		struct pollfd pfd[2] = { { .fd = fd, .events = POLLOUT }, { .fd = b->stop_fd, .events = POLLIN } };
		uint64_t t = bridge_now_ms();
		ssize_t w;

		if (t >= deadline || poll(pfd, 2, (int)(deadline - t)) < 0 || pfd[1].revents)
			return -1;
		if (pfd[0].revents == 0)
			continue;
		w = send(fd, (const char *)buf + put, len - put, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (w <= 0)
			return -1;
		put += (size_t)w;
	}
	return 0;
}

/* The answer as one frame (header and body, malloc'd), *len its bytes;
 * NULL when out of memory or over BRIDGE_MAX_RESPONSE.  Built before the
 * audit line is written, which names its size, and sent after it. */
static char *bridge_answer_frame(const char *id, const struct verdict *v, size_t *len)
{
	cJSON *o = cJSON_CreateObject();
	char *text = NULL, *frame = NULL;
	size_t n;

	*len = 0;
	if (o == NULL)
		return NULL;
	cJSON_AddNumberToObject(o, "v", 1);
	if (id != NULL)
		cJSON_AddStringToObject(o, "id", id);
	else
		cJSON_AddNullToObject(o, "id");
	if (v->code == NULL) {
		cJSON_AddBoolToObject(o, "ok", 1);
		cJSON_AddItemReferenceToObject(o, "result", v->result);
		if (v->replayed)
			cJSON_AddBoolToObject(o, "replayed", 1);
	} else {
		cJSON *e = cJSON_AddObjectToObject(o, "error");

		cJSON_AddBoolToObject(o, "ok", 0);
		cJSON_AddStringToObject(e, "code", v->code);
		cJSON_AddStringToObject(e, "check", v->check);
		cJSON_AddStringToObject(e, "message", v->message);
		if (v->detail != NULL)
			cJSON_AddItemReferenceToObject(e, "detail", v->detail);
		if (v->retryable)
			cJSON_AddBoolToObject(e, "retryable", 1);
	}
	text = cJSON_PrintUnformatted(o);
	if (text != NULL && (n = strlen(text)) <= BRIDGE_MAX_RESPONSE && (frame = malloc(n + 4)) != NULL) {
		request_frame_put((unsigned char *)frame, (uint32_t)n);
		memcpy(frame + 4, text, n);
		*len = n + 4;
	}
	free(text);
	cJSON_Delete(o);
	return frame;
}

/* --- identity and audit ---------------------------------------------- */

static const char *ctx_str(const struct bridge *b, const char *key)
{
	const cJSON *it = b->cfg.context ? cJSON_GetObjectItemCaseSensitive(b->cfg.context, key) : NULL;

	return cJSON_IsString(it) ? it->valuestring : "";
}

static int ctx_list_has(const struct bridge *b, const char *key, const char *want)
{
	const cJSON *it = b->cfg.context ? cJSON_GetObjectItemCaseSensitive(b->cfg.context, key) : NULL;

	for (const cJSON *s = it ? it->child : NULL; s != NULL; s = s->next)
		if (cJSON_IsString(s) && strcmp(s->valuestring, want) == 0)
			return 1;
	return 0;
}

struct call_record {
	const char *id, *tool, *message_id;
	const cJSON *params;
	size_t req_bytes, resp_bytes;
	uint64_t ms;
};

/* cJSON's adders return NULL when out of memory: each result goes through
 * need(), so a line that lost a member is never written as if whole. */
static void need(int *bad, const void *added)
{
	if (added == NULL)
		*bad = 1;
}

/* Adds it (owned; NULL counts as out of memory) under key. */
static void need_item(int *bad, cJSON *o, const char *key, cJSON *it)
{
	if (it == NULL || !cJSON_AddItemToObject(o, key, it)) {
		cJSON_Delete(it);
		*bad = 1;
	}
}

static void need_str(int *bad, cJSON *o, const char *key, const char *s)
{
	need(bad, s != NULL ? cJSON_AddStringToObject(o, key, s) : cJSON_AddNullToObject(o, key));
}

/* Who ran the tool and what its cgroup saw: "identity" {kind, uid, gid}
 * and "cgroup", "none" when the call had none (then only its process
 * group was killed, which a setsid() escapes). */
static void bridge_audit_exec(cJSON *line, const struct verdict *v, int *bad)
{
	cJSON *id = cJSON_AddObjectToObject(line, "identity"), *cg;

	need(bad, id);
	need(bad, cJSON_AddStringToObject(id, "kind", v->run_as ? v->run_as : "?"));
	if (v->ids_set) {
		need(bad, cJSON_AddNumberToObject(id, "uid", (double)v->uid));
		need(bad, cJSON_AddNumberToObject(id, "gid", (double)v->gid));
	}
	if (!v->cg_tried || (v->cg_mem == CG_NONE && v->cg_pids == CG_NONE)) {
		need(bad, cJSON_AddStringToObject(line, "cgroup", "none"));
		return;
	}
	cg = cJSON_AddObjectToObject(line, "cgroup");
	need(bad, cg);
	need(bad, cJSON_AddStringToObject(cg, "memory", cgroup_kind_name(v->cg_mem)));
	need(bad, cJSON_AddStringToObject(cg, "pids", cgroup_kind_name(v->cg_pids)));
	if (v->cgu_ok) {
		need(bad, cJSON_AddNumberToObject(cg, "memoryPeakBytes", (double)v->cgu.mem_peak));
		need(bad, cJSON_AddBoolToObject(cg, "memoryLimitHit", v->cgu.mem_limit_hit));
		need(bad, cJSON_AddBoolToObject(cg, "oomKill", v->cgu.oom_killed));
		need(bad, cJSON_AddBoolToObject(cg, "pidsLimitHit", v->cgu.pids_max_hit));
	}
	if (v->cg_left)
		need(bad, cJSON_AddBoolToObject(cg, "removed", 0));
}

/* One audit line, whole, or NULL when out of memory.  It carries the
 * identity of the request and the parameter names, never their values:
 * params may hold personal data, and the tool's own log is the place for
 * them.  decision: "allowed" when every check passed and the tool ran,
 * also when its answer is then withheld as in_doubt (it may have acted);
 * "denied" when a check or the tool's failure decided. */
static cJSON *bridge_audit_line(const struct bridge *b, const struct call_record *cr, const struct verdict *v)
{
	cJSON *line = cJSON_CreateObject(), *names, *ctx;
	char ts[40];
	struct timespec now;
	struct tm tm;
	int bad = line == NULL;

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, 24, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(ts + strlen(ts), sizeof(ts) - strlen(ts), ".%03dZ", (int)(now.tv_nsec / 1000000));
	need_str(&bad, line, "time", ts);
	need_str(&bad, line, "executionId", b->cfg.exec_id);
	need_str(&bad, line, "app", b->cfg.pol->meta.app ? b->cfg.pol->meta.app : "");
	need_str(&bad, line, "agent", b->cfg.agent ? b->cfg.agent : "");
	need_str(&bad, line, "tenant", ctx_str(b, "tenant"));
	need_str(&bad, line, "project", ctx_str(b, "project"));
	need_str(&bad, line, "user", ctx_str(b, "user"));
	need_str(&bad, line, "session", ctx_str(b, "session"));
	ctx = b->cfg.context ? cJSON_GetObjectItemCaseSensitive(b->cfg.context, "roles") : NULL;
	need_item(&bad, line, "roles", ctx ? cJSON_Duplicate(ctx, 1) : cJSON_CreateArray());
	ctx = b->cfg.context ? cJSON_GetObjectItemCaseSensitive(b->cfg.context, "accounting") : NULL;
	if (ctx != NULL)
		need_item(&bad, line, "accounting", cJSON_Duplicate(ctx, 1));
	need_str(&bad, line, "requestId", cr->id);
	need_str(&bad, line, "tool", cr->tool);
	if (cr->message_id)
		need_str(&bad, line, "messageId", cr->message_id);
	need_str(&bad, line, "decision", v->code == NULL || v->doubt ? "allowed" : "denied");
	need_str(&bad, line, "check", v->check);
	if (v->code) {
		need_str(&bad, line, "code", v->code);
		need_str(&bad, line, "reason", v->reason ? v->reason : "");
		need_str(&bad, line, "message", v->audit[0] ? v->audit : v->message);
		/* The tool's own words hold no secret (scrubbed) and are
		 * bounded: 3 KiB at most. */
		if (v->detail != NULL)
			need_item(&bad, line, "detail", cJSON_Duplicate(v->detail, 1));
		if (v->retryable)
			need(&bad, cJSON_AddBoolToObject(line, "retryable", 1));
	}
	if (v->unrecorded)
		need(&bad, cJSON_AddBoolToObject(line, "recorded", 0));
	if (v->replayed)
		need(&bad, cJSON_AddBoolToObject(line, "replayed", 1));
	/* Only names the signature declares: a refused call's names are the
	 * caller's text, and would let the sandbox write what it likes into
	 * the log. */
	names = cJSON_AddArrayToObject(line, "paramNames");
	need(&bad, names);
	for (const cJSON *p = cr->params && v->params_known ? cr->params->child : NULL; p != NULL; p = p->next) {
		cJSON *name = cJSON_CreateString(p->string);

		if (name == NULL || !cJSON_AddItemToArray(names, name)) {
			cJSON_Delete(name);
			bad = 1;
		}
	}
	if (v->exec_meta)
		bridge_audit_exec(line, v, &bad);
	need(&bad, cJSON_AddNumberToObject(line, "durationMs", (double)cr->ms));
	need(&bad, cJSON_AddNumberToObject(line, "toolMs", (double)v->tool_ms));
	need(&bad, cJSON_AddNumberToObject(line, "requestBytes", (double)cr->req_bytes));
	need(&bad, cJSON_AddNumberToObject(line, "responseBytes", (double)cr->resp_bytes));
	if (bad) {
		cJSON_Delete(line);
		return NULL;
	}
	return line;
}

/*
 * Appends one line (text, NULL when it could not be built) to the audit,
 * whole or not at all: O_APPEND keeps lines whole between the call
 * threads, and a write cut short (a full disk) is cut off again, so the
 * file stays one JSON object a line.  sync: made durable before the call's
 * answer goes out (fdatasync), for a line of a tool that ran: the ledger
 * commits its records the same way (synchronous=FULL), and a line in the
 * page cache alone is lost with the host.  A refusal's line is not synced
 * one by one (a loop of refusals would pay a disk flush each);
 * bridge_stop() syncs the whole audit once, and its failure fails the run
 * too.  Returns 0, or -1 with the bridge faulted.
 */
static int bridge_audit_put(struct bridge *b, char *text, int sync)
{
	int fd = b->cfg.audit_fd, rc = -1, e = 0;
	size_t len = text != NULL ? strlen(text) : 0, put = 0;
	const char *why = NULL;

	if (fd < 0)
		return 0;
	pthread_mutex_lock(&b->mu);
	if (b->audit_broken)
		why = "an earlier line could not be written";
	else if (text == NULL)
		why = "out of memory building the line";
	else {
		text[len] = '\n';
		while (put < len + 1) {
			ssize_t w = write(fd, text + put, len + 1 - put);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				e = w < 0 ? errno : ENOSPC;
				break;
			}
			put += (size_t)w;
		}
		text[len] = '\0';
		if (put == len + 1) {
			b->audit_len += (off_t)put;
			rc = 0;
		} else {
			b->audit_broken = 1;
			if (put > 0 && ftruncate(fd, b->audit_len) != 0) {
				/* the torn line stays; the run fails either way */
			}
		}
	}
	pthread_mutex_unlock(&b->mu);
	if (rc == 0 && sync && fdatasync(fd) != 0) {
		e = errno;
		rc = -1;
		pthread_mutex_lock(&b->mu);
		b->audit_broken = 1;
		pthread_mutex_unlock(&b->mu);
	}
	if (rc != 0)
		bridge_fault(b, "audit", "an audit line (logs/tool-calls.jsonl) could not be written: %s",
			     why != NULL ? why : strerror(e));
	return rc;
}

/* Writes the call's audit line: 0, or -1 with the bridge faulted.  keep:
 * NULL, or where the line goes (the caller's, for its toolCalls entry;
 * NULL when it could not be built). */
static int bridge_record(struct bridge *b, const struct call_record *cr, const struct verdict *v, cJSON **keep)
{
	cJSON *line = bridge_audit_line(b, cr, v);
	char *text = line != NULL ? cJSON_PrintUnformatted(line) : NULL;
	int rc = bridge_audit_put(b, text, v->started);

	free(text);
	if (keep != NULL)
		*keep = line;
	else
		cJSON_Delete(line);
	return rc;
}

/* One toolCalls entry, from the call's line: the same decision without
 * the identity the caller already knows; counted against
 * BRIDGE_MAX_CALLS.  line NULL (out of memory): counted, not listed. */
static void bridge_list_call(struct bridge *b, const cJSON *line)
{
	static const char *const keep[] = { "requestId", "tool", "messageId", "decision", "check", "code",
					    "reason", "recorded", "replayed", "durationMs", "toolMs" };
	cJSON *entry = line != NULL ? cJSON_CreateObject() : NULL;

	for (size_t i = 0; entry != NULL && i < sizeof(keep) / sizeof(keep[0]); i++) {
		const cJSON *it = cJSON_GetObjectItemCaseSensitive(line, keep[i]);

		if (it != NULL)
			cJSON_AddItemToObject(entry, keep[i], cJSON_Duplicate(it, 1));
	}
	if (entry != NULL && b->cfg.on_call != NULL)
		b->cfg.on_call(b->cfg.on_call_arg, entry);
	pthread_mutex_lock(&b->mu);
	b->ncalls++;
	if (entry != NULL && cJSON_GetArraySize(b->calls) < BRIDGE_MAX_LISTED_CALLS) {
		cJSON_AddItemToArray(b->calls, entry);
		entry = NULL;
	}
	pthread_mutex_unlock(&b->mu);
	cJSON_Delete(entry);
}

/* A call whose audit line could not be written: its answer cannot stand
 * (no answer goes out without its record), and what replaces it must not
 * say "did not run" of a tool that acted (outcome_call_unrecorded). */
static void bridge_unrecorded(struct bridge *b, struct verdict *v)
{
	char why[512];
	int acted = v->started || v->replayed;

	/* Refused because the run had failed already: that answer stands. */
	if (v->code != NULL && strcmp(v->check, "record") == 0)
		return;
	if (!bridge_fault_get(b, why, sizeof(why)))
		snprintf(why, sizeof(why), "the audit failed");
	verdict_withhold(v);
	v->doubt = acted;
	if (acted)
		verdict_deny(v, "record", outcome_call_unrecorded(1), "audit",
			     "%.300s: the tool ran and may have acted; a retry with the same message id gets the "
			     "recorded answer if the ledger has one, and never runs it again", why);
	else
		verdict_deny(v, "record", outcome_call_unrecorded(0), "audit", "%.300s: the call did not run", why);
}

/* --- the checks ------------------------------------------------------ */

/* The peer must be the executor: its uid, and a process in its pid
 * namespace.  The uid alone would admit any process of that host uid,
 * which rootless is the caller's own. */
static int bridge_peer_ok(struct bridge *b, int fd, char *why, size_t n)
{
	struct ucred uc;
	socklen_t len = sizeof(uc);
	char p[64];
	struct stat st;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) != 0) {
		snprintf(why, n, "no peer credentials: %s", strerror(errno));
		return 0;
	}
	if (uc.uid != b->cfg.peer_uid) {
		snprintf(why, n, "peer uid %u is not the executor's (%u)", (unsigned)uc.uid, (unsigned)b->cfg.peer_uid);
		return 0;
	}
	snprintf(p, sizeof(p), "/proc/%d/ns/pid", (int)uc.pid);
	if (uc.pid <= 0 || stat(p, &st) != 0 || st.st_ino != b->child_pidns) {
		snprintf(why, n, "peer pid %d is not in the executor's pid namespace", (int)uc.pid);
		return 0;
	}
	return 1;
}

static struct ledger *bridge_ledger(struct bridge *b, char *err, size_t n)
{
	struct ledger *l;

	/* A failed open is tried again at the next call: a busy database
	 * or a directory made a moment late must not fail the whole run. */
	pthread_mutex_lock(&b->mu);
	if (b->ledger == NULL && b->cfg.ledger != NULL)
		b->ledger = b->cfg.ledger;
	else if (b->ledger == NULL && b->cfg.state_dir[0] == '\0')
		snprintf(b->ledger_err, sizeof(b->ledger_err),
			 "ledger: no state directory (cordon run --state-dir, or a HOME to keep it in)");
	else if (b->ledger == NULL) {
		/* The default place may lack its parents (~/.local/state on a
		 * fresh account); a --state-dir must have them. */
		if (ledger_default_parents(b->cfg.state_dir, geteuid() != 0, b->ledger_err, sizeof(b->ledger_err)) != 0 ||
		    ledger_open(b->cfg.state_dir, &b->ledger, b->ledger_err, sizeof(b->ledger_err)) != 0)
			b->ledger = NULL;
	}
	l = b->ledger;
	snprintf(err, n, "%s", b->ledger_err); /* the ledger names itself */
	pthread_mutex_unlock(&b->mu);
	return l;
}

/* A digest of params that does not depend on member order: the replay
 * record must match the same call however the client ordered its dict. */
static void bridge_sort_members(cJSON *node)
{
	for (; node != NULL; node = node->next) {
		if (cJSON_IsObject(node) && node->child != NULL) {
			cJSON *sorted = NULL, *it = node->child;

			while (it != NULL) {
				cJSON *next = it->next, **pp = &sorted;

				while (*pp != NULL && strcmp((*pp)->string, it->string) < 0)
					pp = &(*pp)->next;
				it->next = *pp;
				*pp = it;
				it = next;
			}
			/* cJSON keeps prev links; child->prev is the last. */
			cJSON *prev = NULL, *last = NULL;
			for (it = sorted; it != NULL; it = it->next) {
				it->prev = prev;
				prev = last = it;
			}
			node->child = sorted;
			sorted->prev = last;
		}
		if (cJSON_IsObject(node) || cJSON_IsArray(node))
			bridge_sort_members(node->child);
	}
}

/*
 * Integral numbers are printed as integers.  cJSON prints a double with
 * %1.15g first, so 1000000000000000 would reach a tool as 1e+15, which
 * Python's json reads as a float: an `integer` param would change type on
 * its way.  Values were checked to be within ±2^53, where a double holds
 * every integer exactly.
 */
static int bridge_fix_integers(cJSON *node)
{
	for (; node != NULL; node = node->next) {
		if (cJSON_IsNumber(node) && node->valuedouble >= -9007199254740992.0 &&
		    node->valuedouble <= 9007199254740992.0 &&
		    node->valuedouble == (double)(long long)node->valuedouble) {
			char digits[32];

			snprintf(digits, sizeof(digits), "%lld", (long long)node->valuedouble);
			node->valuestring = strdup(digits);
			if (node->valuestring == NULL)
				return -1;
			node->type = cJSON_Raw;
		}
		if ((cJSON_IsObject(node) || cJSON_IsArray(node)) && bridge_fix_integers(node->child) != 0)
			return -1;
	}
	return 0;
}

/* The params as the tool gets them; sorted for the replay digest. */
static char *bridge_params_text(const cJSON *params, int sorted)
{
	cJSON *copy = cJSON_Duplicate(params, 1);
	char *text = NULL;

	if (copy == NULL)
		return NULL;
	if (sorted)
		bridge_sort_members(copy);
	if (bridge_fix_integers(copy) == 0)
		text = cJSON_PrintUnformatted(copy);
	cJSON_Delete(copy);
	return text;
}

static int bridge_params_digest(const cJSON *params, char hex[65])
{
	char *text = bridge_params_text(params, 1);
	unsigned char d[crypto_hash_sha256_BYTES];

	if (text == NULL)
		return -1;
	crypto_hash_sha256(d, (const unsigned char *)text, strlen(text));
	sodium_bin2hex(hex, 65, d, sizeof(d));
	free(text);
	return 0;
}

static uint32_t bridge_agent_index(const struct bridge *b)
{
	const struct cpol_agent *a = b->cfg.agent ? policy_find_agent(b->cfg.pol, b->cfg.agent) : NULL;

	return a != NULL ? (uint32_t)(a - b->cfg.pol->agents) : CPOL_NONE;
}

/* tool, selection, params, constraint, role: the checks that need no
 * shared state.  Returns the tool's index, or CPOL_NONE with v filled. */
static uint32_t bridge_check_call(struct bridge *b, const struct request *rq, struct verdict *v)
{
	const struct cpol_policy *p = b->cfg.pol;
	uint32_t t = policy_find_tool(p, rq->tool), a = bridge_agent_index(b), i;
	const struct cpol_tool *tool;
	const cJSON *sel;
	struct params_result pr;
	struct constraint_result cr;

	if (a == CPOL_NONE) {
		verdict_deny(v, "tool", "unknown_tool", "no_agent",
			     "no agent was named for this run (cordon run --agent), so no tool is known");
		return CPOL_NONE;
	}
	for (i = 0; t != CPOL_NONE && i < p->agents[a].ntools && p->agents[a].tools[i] != t; i++)
		;
	if (t == CPOL_NONE || i == p->agents[a].ntools) {
		verdict_deny(v, "tool", "unknown_tool", "unknown", "agent '%s' has no tool '%.80s'", b->cfg.agent,
			     rq->tool);
		return CPOL_NONE;
	}
	tool = &p->tools[t];
	/* The context's `tools` narrows the agent's list for this user;
	 * without it the agent's list stands. */
	sel = b->cfg.context ? cJSON_GetObjectItemCaseSensitive(b->cfg.context, "tools") : NULL;
	if (sel != NULL && !ctx_list_has(b, "tools", tool->id)) {
		verdict_deny(v, "selection", "unknown_tool", "not_selected",
			     "tool '%s' is not selected for this request", tool->id);
		return CPOL_NONE;
	}
	if (!params_check(p, t, rq->params, &pr)) {
		verdict_deny(v, "params", "invalid_params", params_verdict_name(pr.verdict), "%s: %s", pr.path, pr.msg);
		/* The caller is told the value that failed; the audit log keeps
		 * no parameter values (they may be personal data), only where. */
		snprintf(v->audit, sizeof(v->audit), "%s: %s", pr.path, params_verdict_name(pr.verdict));
		return CPOL_NONE;
	}
	v->params_known = 1;
	if (!constraint_eval(p, t, rq->params, &cr)) {
		/* Quoted, so the program (and the model writing it) can see
		 * what to change; the text is the policy's, not the caller's. */
		char terr[128];
		char *text = constraint_text(p, t, cr.index, terr, sizeof(terr));

		verdict_deny(v, "constraint", "tool_denied", constraint_verdict_name(cr.verdict),
			     "constraint %u of %s does not hold: %.600s", cr.index + 1, tool->id,
			     text ? text : "(its text cannot be shown)");
		free(text);
		return CPOL_NONE;
	}
	if (tool->roles.n > 0) {
		for (i = 0; i < tool->roles.n && !ctx_list_has(b, "roles", tool->roles.v[i]); i++)
			;
		if (i == tool->roles.n) {
			verdict_deny(v, "role", "tool_denied", "role",
				     "the request's roles do not include one that may call %s", tool->id);
			return CPOL_NONE;
		}
	}
	if ((tool->flags & CPOL_TOOL_F_SIDE_EFFECT) && rq->message_id == NULL) {
		verdict_deny(v, "params", "invalid_params", "message_id",
			     "%s has side effects: a message_id is required (messageId in the request)", tool->id);
		return CPOL_NONE;
	}
	return t;
}

/* The day of the daily budget: UTC, so every host of a fleet agrees. */
static void bridge_today(char day[16])
{
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(day, 16, "%Y-%m-%d", &tm);
}

/* What a failed tool said of its failure (tool_exec_failure_build), as
 * the answer's and the audit line's "detail"; NULL when it said nothing. */
static cJSON *bridge_failure_detail(struct bridge *b, const struct cpol_tool *tool, const struct tool_exec_res *res,
				    int *retryable)
{
	struct tool_exec_failure f;
	cJSON *d = NULL;

	*retryable = 0;
	if (tool_exec_failure_build(res, tool, b->cfg.secrets, &f) != 0)
		return NULL;
	*retryable = f.retryable;
	if (f.message == NULL && f.code == NULL && f.stderr_tail == NULL)
		goto out;
	if ((d = cJSON_CreateObject()) == NULL)
		goto out;
	if (f.message != NULL)
		cJSON_AddStringToObject(d, "message", f.message);
	if (f.message_cut)
		cJSON_AddBoolToObject(d, "messageCut", 1);
	if (f.code != NULL)
		cJSON_AddStringToObject(d, "code", f.code);
	if (f.stderr_tail != NULL) {
		cJSON_AddStringToObject(d, "stderr", f.stderr_tail);
		cJSON_AddNumberToObject(d, "stderrDropped", (double)f.stderr_dropped);
	}
out:
	tool_exec_failure_free(&f);
	return d;
}

/*
 * The identity a call of tool runs with (docs/tools.md, run_as), into req.
 * A name is looked up here, on the supervisor's host and thread, never in
 * the child.  Returns 0, or -1 with v denied: the tool never starts.
 */
static int bridge_tool_identity(const struct bridge *b, const struct cpol_tool *tool, struct tool_exec_req *req,
				struct verdict *v)
{
	int root = geteuid() == 0;
	uid_t uid = 0;
	gid_t gid = 0;

	v->run_as = policy_run_as_name(tool->run_as);
	/* run_as: supervisor is the explicit way back to today's behaviour;
	 * every other tool also loses setuid binaries and file caps. */
	req->no_new_privs = tool->run_as != CPOL_RUN_AS_SUPERVISOR;
	switch (tool->run_as) {
	case CPOL_RUN_AS_SUPERVISOR:
		return 0;
	case CPOL_RUN_AS_DEDICATED:
		if (!root) {
			v->run_as = "caller";
			return 0;
		}
		if (!b->cfg.tool_ids) {
			verdict_deny(v, "exec", "internal_error", "identity",
				     "%s: this run has no dedicated tool identity; refusing to run it as root", tool->id);
			return -1;
		}
		uid = b->cfg.tool_uid;
		gid = b->cfg.tool_gid;
		break;
	case CPOL_RUN_AS_USER: {
		struct passwd pw, *found = NULL;
		char buf[16384];
		int e = getpwnam_r(tool->run_user, &pw, buf, sizeof(buf), &found);

		if (found == NULL) {
			verdict_deny(v, "exec", "tool_failed", "identity", "%s: run_as user %s %s", tool->id,
				     tool->run_user, e ? strerrordesc_np(e) : "does not exist on this host");
			return -1;
		}
		uid = pw.pw_uid;
		gid = pw.pw_gid;
		break;
	}
	case CPOL_RUN_AS_IDS:
		uid = tool->run_uid;
		gid = tool->run_gid;
		break;
	}
	/* The blob refuses 0 in the ids; a name can still be root's here. */
	if (uid == 0 || gid == 0) {
		verdict_deny(v, "exec", "tool_failed", "identity", "%s: run_as resolves to uid %u gid %u; a tool never runs as root",
			     tool->id, (unsigned)uid, (unsigned)gid);
		return -1;
	}
	if (!root) {
		if (uid == geteuid() && gid == getegid())
			return 0;
		verdict_deny(v, "exec", "tool_failed", "identity",
			     "%s: run_as asks for uid %u gid %u, but cordon runs rootless as uid %u and cannot switch identity",
			     tool->id, (unsigned)uid, (unsigned)gid, (unsigned)geteuid());
		return -1;
	}
	req->set_ids = 1;
	req->uid = uid;
	req->gid = gid;
	v->ids_set = 1;
	v->uid = uid;
	v->gid = gid;
	return 0;
}

/*
 * The call's own cgroup(s), named so that a later run's sweep recognises
 * them when this supervisor dies (cordon-<pid>-<exec id>-t<n>), with the
 * tool's limits, and its cgroup.procs files open for the child.  No usable
 * hierarchy is not an error (the audit line says "none").  Returns 0, or
 * -1 with v denied and nothing left behind.
 */
static int bridge_tool_cgroup(struct bridge *b, const struct cpol_tool *tool, struct cg_run *cg, int *made,
			      int procs[CG_PROCS_FDS], struct tool_exec_req *req, struct verdict *v)
{
	struct cg_limits lim = { .memory_bytes = tool->memory_bytes, .pids = tool->pids };
	char name[96], err[512];
	unsigned n;

	if (b->cfg.cg_host == NULL)
		return 0;
	v->cg_tried = 1;
	pthread_mutex_lock(&b->mu);
	n = ++b->tool_runs;
	pthread_mutex_unlock(&b->mu);
	snprintf(name, sizeof(name), "cordon-%d-%s-t%u", (int)getpid(), b->cfg.exec_id, n);
	if (cgroup_create(cg, b->cfg.cg_host, name, &lim, err, sizeof(err)) != 0) {
		verdict_deny(v, "exec", "internal_error", "cgroup", "%s: cannot make its cgroup: %s", tool->id, err);
		return -1;
	}
	*made = 1;
	v->cg_mem = cg->mem_kind;
	v->cg_pids = cg->pids_kind;
	/* On v1 the tool moves itself through `tasks`, which skips the
	 * threadgroup lock and its RCU wait (cgroup.h, "Attach"); v2 has no
	 * `tasks` for a domain cgroup, so any v2 kind takes cgroup.procs. */
	if ((cg->mem_kind == CG_V2 || cg->pids_kind == CG_V2 ? cgroup_procs_open(cg, procs, err, sizeof(err))
							       : cgroup_tasks_open(cg, procs, err, sizeof(err))) != 0) {
		verdict_deny(v, "exec", "internal_error", "cgroup", "%s: %s", tool->id, err);
		return -1;
	}
	for (int i = 0; i < CG_PROCS_FDS; i++)
		if (procs[i] >= 0)
			req->cg_procs[req->ncg_procs++] = procs[i];
	return 0;
}

/* A failure the call's cgroup explains: the limit is the better reason. */
static void bridge_limit_reason(struct verdict *v, const struct cpol_tool *tool)
{
	size_t len = strlen(v->message);

	if (!v->cgu_ok || len >= sizeof(v->message) - 1)
		return;
	if (v->cgu.oom_killed || v->cgu.mem_limit_hit) {
		v->reason = "memory_limit";
		snprintf(v->message + len, sizeof(v->message) - len, "; it reached its memory limit of %llu bytes",
			 (unsigned long long)tool->memory_bytes);
	} else if (v->cgu.pids_max_hit) {
		v->reason = "pids_limit";
		snprintf(v->message + len, sizeof(v->message) - len, "; it reached its limit of %u processes",
			 tool->pids);
	}
}

/*
 * The tool's answer against its `returns:` spec, with the params' checker
 * (docs/params.md), before the program sees it.  A tool that ran and
 * answered the wrong shape failed: tool_failed, reason `returns`, the path
 * and the reason in the message.  As for params, the audit line keeps only
 * the path and the verdict: the answer's values may be personal data.
 */
static void bridge_check_result(const struct bridge *b, const struct cpol_tool *tool, struct verdict *v)
{
	struct params_result pr;

	if (params_check_result(b->cfg.pol, (uint32_t)(tool - b->cfg.pol->tools), v->result, &pr))
		return;
	cJSON_Delete(v->result);
	v->result = NULL;
	verdict_deny(v, "exec", "tool_failed", "returns", "%s answered a result that does not fit its returns: %s: %s",
		     tool->id, pr.path, pr.msg);
	snprintf(v->audit, sizeof(v->audit), "%s answered a result that does not fit its returns: %s: %s", tool->id,
		 pr.path, params_verdict_name(pr.verdict));
}

/* Runs the tool and fills v from what it did. */
static void bridge_exec(struct bridge *b, const struct cpol_tool *tool, const struct request *rq, struct verdict *v)
{
	char *input = bridge_params_text(rq->params, 0), **envp = NULL, why[256], msg[256];
	char e_tool[128], e_exec[64], e_app[160], e_tenant[160], e_user[160], e_session[160], e_project[160],
		e_msg[160], e_req[96];
	const char *extra[10], **argv = calloc(tool->exec.n + 1, sizeof(*argv));
	struct tool_exec_req req = { 0 };
	struct tool_exec_res res = { 0 };
	struct cg_run cg;
	int cg_made = 0, procs[CG_PROCS_FDS] = { -1, -1, -1 };
	enum tool_path_verdict pv;

	memset(&cg, 0, sizeof(cg));
	snprintf(e_tool, sizeof(e_tool), "CORDON_TOOL=%s", tool->id);
	snprintf(e_exec, sizeof(e_exec), "CORDON_EXECUTION_ID=%s", b->cfg.exec_id);
	snprintf(e_app, sizeof(e_app), "CORDON_APP=%.140s", b->cfg.pol->meta.app ? b->cfg.pol->meta.app : "");
	snprintf(e_tenant, sizeof(e_tenant), "CORDON_TENANT=%.140s", ctx_str(b, "tenant"));
	snprintf(e_project, sizeof(e_project), "CORDON_PROJECT=%.140s", ctx_str(b, "project"));
	snprintf(e_user, sizeof(e_user), "CORDON_USER=%.140s", ctx_str(b, "user"));
	snprintf(e_session, sizeof(e_session), "CORDON_SESSION=%.140s", ctx_str(b, "session"));
	snprintf(e_msg, sizeof(e_msg), "CORDON_MESSAGE_ID=%s", rq->message_id ? rq->message_id : "");
	snprintf(e_req, sizeof(e_req), "CORDON_REQUEST_ID=%s", rq->id);
	extra[0] = e_tool, extra[1] = e_exec, extra[2] = e_app, extra[3] = e_tenant, extra[4] = e_project;
	extra[5] = e_user, extra[6] = e_session, extra[7] = e_msg, extra[8] = e_req, extra[9] = NULL;
	v->check = "exec";
	if (input == NULL || argv == NULL) {
		verdict_deny(v, "exec", "internal_error", "memory", "out of memory");
		goto out;
	}
	if (tool_env_build(tool, b->cfg.secrets, extra, &envp, why, sizeof(why)) != 0) {
		verdict_deny(v, "exec", "tool_failed", "secret", "%s", why);
		goto out;
	}
	/* The blob's lists are counted; exec wants a NULL at the end. */
	memcpy(argv, tool->exec.v, tool->exec.n * sizeof(*argv));
	req.argv = argv;
	req.envp = envp;
	req.input = input;
	req.input_len = strlen(input);
	req.timeout_ms = tool->timeout_ms;
	req.max_output = TOOL_EXEC_MAX_OUTPUT;
	req.cancel_fd = b->stop_fd;
	/* Who runs it, whether it may be run at all, and where it is
	 * counted: each decided before anything starts. */
	v->exec_meta = 1;
	if (bridge_tool_identity(b, tool, &req, v) != 0)
		goto out;
	/* StrictModes (common/tool_path.h): a program that someone other
	 * than root or our own user could have swapped is not run.  A missing
	 * one is left to execve, which reports it as before. */
	pv = tool_path_check(argv[0], geteuid(), why, sizeof(why));
	if (pv == TOOL_PATH_UNSAFE) {
		verdict_deny(v, "exec", "tool_failed", "untrusted_path", "%s: refusing to run %s: %s", tool->id, argv[0],
			     why);
		goto out;
	}
	if (bridge_tool_cgroup(b, tool, &cg, &cg_made, procs, &req, v) != 0)
		goto out;
	if (tool_exec_run(&req, &res, msg, sizeof(msg)) != 0) {
		verdict_deny(v, "exec", "internal_error", "spawn", "%s", msg);
		goto out;
	}
	/* Read before destroy, which kills what the tool left running. */
	if (cg_made && cgroup_usage(&cg, &v->cgu, msg, sizeof(msg)) == 0)
		v->cgu_ok = 1;
	v->tool_ms = res.duration_ms;
	v->started = res.started;
	switch (res.outcome) {
	case TOOL_EXEC_OK:
		v->result = tool_exec_parse_output(res.out, res.out_len, why, sizeof(why));
		if (v->result == NULL) {
			verdict_deny(v, "exec", "tool_failed", "bad_answer", "%s answered with invalid JSON: %s",
				     tool->id, why);
		} else {
			/* Printed again, a number can grow (5e-324 has 21
			 * digits once printed): the answer frame must still fit. */
			char *again = cJSON_PrintUnformatted(v->result);

			if (again == NULL || strlen(again) > BRIDGE_MAX_RESPONSE - 1024) {
				cJSON_Delete(v->result);
				v->result = NULL;
				verdict_deny(v, "exec", "tool_failed", "oversized",
					     "%s answered more than the bridge can pass on", tool->id);
			} else {
				bridge_check_result(b, tool, v);
			}
			free(again);
		}
		break;
	case TOOL_EXEC_TIMEOUT:
		verdict_deny(v, "exec", "tool_timeout", "timeout", "%s did not answer within %llu ms", tool->id,
			     (unsigned long long)tool->timeout_ms);
		v->detail = bridge_failure_detail(b, tool, &res, &v->retryable);
		break;
	case TOOL_EXEC_CANCELLED:
		verdict_deny(v, "exec", "tool_failed", "cancelled", "the run ended while %s was running", tool->id);
		break;
	case TOOL_EXEC_FAILED:
		verdict_deny(v, "exec", "tool_failed", res.out_truncated ? "oversized" : "failed", "%s: %s", tool->id,
			     res.reason);
		v->detail = bridge_failure_detail(b, tool, &res, &v->retryable);
		break;
	}
	if (res.outcome == TOOL_EXEC_FAILED && !res.out_truncated)
		bridge_limit_reason(v, tool);
out:
	/* Kills every process of the call (a setsid()'d or double-forked
	 * one too), at the end of any outcome, and removes the cgroups. */
	if (cg_made && cgroup_destroy(&cg, msg, sizeof(msg)) != 0)
		v->cg_left = 1; /* the answer stands; the next run's sweep retries */
	for (int i = 0; i < CG_PROCS_FDS; i++)
		if (procs[i] >= 0)
			close(procs[i]);
	tool_exec_res_free(&res);
	if (envp != NULL)
		tool_env_free(envp);
	free(argv);
	free(input);
}

/* The recorded answer of a side-effect call: ok and result, or the error. */
static char *bridge_replay_text(const struct verdict *v)
{
	cJSON *o = cJSON_CreateObject();
	char *text;

	if (o == NULL)
		return NULL;
	if (v->code == NULL) {
		cJSON_AddBoolToObject(o, "ok", 1);
		cJSON_AddItemReferenceToObject(o, "result", v->result);
	} else {
		cJSON_AddBoolToObject(o, "ok", 0);
		cJSON_AddStringToObject(o, "code", v->code);
		cJSON_AddStringToObject(o, "check", v->check);
		cJSON_AddStringToObject(o, "reason", v->reason ? v->reason : "");
		cJSON_AddStringToObject(o, "message", v->message);
		if (v->detail != NULL)
			cJSON_AddItemReferenceToObject(o, "detail", v->detail);
	}
	text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return text;
}

/* Rebuilds v from a recorded answer.  Codes and checks come back as
 * static strings from a fixed set, so v never points into freed text. */
static void bridge_replay_load(const char *text, struct verdict *v)
{
	static const char *const codes[] = { "tool_failed", "tool_timeout", "internal_error", "tool_denied" };
	static const char *const checks[] = { "exec", "replay" };
	/* Answers are checked to be UTF-8 before they are recorded; one
	 * recorded by an older cordon may not be, and is not passed on. */
	cJSON *o = utf8_prefix(text, strlen(text)) == strlen(text) ? cJSON_Parse(text) : NULL;
	const cJSON *ok = cJSON_GetObjectItemCaseSensitive(o, "ok");

	v->replayed = 1;
	if (cJSON_IsTrue(ok) && cJSON_GetObjectItemCaseSensitive(o, "result") != NULL) {
		v->result = cJSON_DetachItemFromObjectCaseSensitive(o, "result");
		v->check = "replay";
		v->code = NULL;
	} else if (cJSON_IsFalse(ok)) {
		const cJSON *code = cJSON_GetObjectItemCaseSensitive(o, "code");
		const cJSON *msg = cJSON_GetObjectItemCaseSensitive(o, "message");
		const char *c = "tool_failed";

		for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
			if (cJSON_IsString(code) && strcmp(code->valuestring, codes[i]) == 0)
				c = codes[i];
		verdict_deny(v, checks[1], c, "recorded", "recorded answer: %.400s",
			     cJSON_IsString(msg) ? msg->valuestring : "");
		/* Written by bridge_replay_text(): scrubbed and bounded then. */
		if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(o, "detail")))
			v->detail = cJSON_DetachItemFromObjectCaseSensitive(o, "detail");
		v->replayed = 1;
	} else {
		/* A done record means the tool ran: never "did not run". */
		verdict_deny(v, "replay", "in_doubt", "unreadable",
			     "the recorded answer cannot be read: the tool ran and may have acted; it is not run again");
	}
	cJSON_Delete(o);
}

/* The budget check; 0 when the call may go on, -1 with v filled. */
static int bridge_take_budget(struct ledger *l, const struct cpol_tool *tool, const struct ledger_call *lc,
			      struct verdict *v)
{
	char err[300];

	switch (ledger_budget_take(l, lc, tool->max_calls, tool->max_calls_per_day, err, sizeof(err))) {
	case LEDGER_BUDGET_OK:
		return 0;
	case LEDGER_BUDGET_RUN:
		verdict_deny(v, "budget", "budget_exceeded", "run", "%s may be called %u times in one run", tool->id,
			     tool->max_calls);
		return -1;
	case LEDGER_BUDGET_DAY:
		verdict_deny(v, "budget", "budget_exceeded", "day", "%s may be called %u times a day by this user",
			     tool->id, tool->max_calls_per_day);
		return -1;
	default:
		verdict_deny(v, "budget", "internal_error", "ledger", "%s", err);
		return -1;
	}
}

/* The replay check; 0 when this call now owns a pending record and runs,
 * 1 when v holds the answer (recorded, or a refusal). */
static int bridge_replay_begin(struct bridge *b, struct ledger *l, const struct cpol_tool *tool,
			       const struct request *rq, const struct ledger_call *lc, struct verdict *v)
{
	char err[300], digest[65], *recorded = NULL;
	/* A repeat waits for the first call's tool, but never past the run's
	 * own end, and not at all once the run is stopping. */
	uint64_t wait = tool->timeout_ms + 2000, now = bridge_now_ms();

	if (b->cfg.deadline_ms != 0)
		wait = now >= b->cfg.deadline_ms ? 0 : (b->cfg.deadline_ms - now < wait ? b->cfg.deadline_ms - now : wait);
	if (bridge_params_digest(rq->params, digest) != 0) {
		verdict_deny(v, "replay", "internal_error", "memory", "out of memory");
		return 1;
	}
	switch (ledger_replay_begin(l, lc, rq->message_id, digest, wait, b->stop_fd, &recorded, err, sizeof(err))) {
	case LEDGER_REPLAY_RUN:
		return 0;
	case LEDGER_REPLAY_RECORDED:
		bridge_replay_load(recorded, v);
		free(recorded);
		return 1;
	case LEDGER_REPLAY_IN_DOUBT:
		verdict_deny(v, "replay", "in_doubt", "pending",
			     "message %s of %s was started and never recorded (a crash?): it is not run again",
			     rq->message_id, tool->id);
		return 1;
	case LEDGER_REPLAY_CONFLICT:
		verdict_deny(v, "replay", "invalid_params", "conflict",
			     "message %s was already used for %s with other params", rq->message_id, tool->id);
		return 1;
	case LEDGER_REPLAY_CANCELLED:
		verdict_deny(v, "replay", "tool_failed", "cancelled",
			     "the run ended while waiting for an earlier call with message %s", rq->message_id);
		return 1;
	default:
		verdict_deny(v, "replay", "internal_error", "ledger", "%s", err);
		return 1;
	}
}

/*
 * budget, replay, exec: the checks with state that outlives the call.
 *
 * For a side-effect tool the replay record is looked up before the budget
 * (docs/bridge.md lists budget first): a retry of a call that already acted
 * must get its recorded answer even when the budget is spent since, or
 * the retry that replay exists for would fail.  A recorded answer costs no
 * budget.  A call that owns a new pending record and is then refused by
 * the budget, or whose tool never started, gives the record up, so that
 * nothing records an answer the tool never gave.
 */
static void bridge_run_call(struct bridge *b, uint32_t t, const struct request *rq, struct verdict *v)
{
	const struct cpol_tool *tool = &b->cfg.pol->tools[t];
	int replay = (tool->flags & CPOL_TOOL_F_SIDE_EFFECT) && (tool->flags & CPOL_TOOL_F_REPLAY);
	int budget = tool->max_calls != 0 || tool->max_calls_per_day != 0, owned = 0;
	char day[16], err[300], *text = NULL;
	struct ledger *l = NULL;
	struct ledger_call lc;

	bridge_today(day);
	lc = (struct ledger_call){ .app = b->cfg.pol->meta.app ? b->cfg.pol->meta.app : "",
				   .tenant = ctx_str(b, "tenant"),
				   .tool = tool->id,
				   .user = ctx_str(b, "user"),
				   .exec_id = b->cfg.exec_id,
				   .day = day };
	if (budget || replay) {
		l = bridge_ledger(b, err, sizeof(err));
		if (l == NULL) {
			verdict_deny(v, replay ? "replay" : "budget", "internal_error", "ledger", "%s", err);
			return;
		}
	}
	if (replay) {
		if (bridge_replay_begin(b, l, tool, rq, &lc, v) != 0)
			return;
		owned = 1;
	}
	if (budget && bridge_take_budget(l, tool, &lc, v) != 0)
		goto give_up;
	bridge_exec(b, tool, rq, v);
	if (!owned)
		return;
	if (!v->started)
		goto give_up;
	/* The tool's word that it failed before any effect (exit 75): the
	 * record goes, so a retry runs it again.  Any other failure is
	 * recorded: a tool that may have acted never runs twice. */
	if (v->code != NULL && v->retryable)
		goto give_up;
	/* A cancelled tool may or may not have acted: its record stays
	 * pending and answers in_doubt from now on. */
	if (v->code != NULL && strcmp(v->reason, "cancelled") == 0)
		return;
	text = bridge_replay_text(v);
	if (text == NULL || ledger_replay_finish(l, &lc, rq->message_id, text, err, sizeof(err)) != 0) {
		/* The tool ran: saying it did not (internal_error) would have a
		 * platform send it again under a new id.  The record stays
		 * pending, so a retry of this id is in_doubt too, never a
		 * second run; the run fails at stage ledger. */
		if (text == NULL)
			snprintf(err, sizeof(err), "out of memory");
		verdict_withhold(v);
		v->doubt = v->unrecorded = 1;
		verdict_deny(v, "replay", outcome_call_unrecorded(1), "unrecorded",
			     "%s ran, but its answer could not be recorded (%.200s): it may have acted, and message %s "
			     "is never run again",
			     tool->id, err, rq->message_id);
		bridge_fault(b, "ledger", "the answer of %s (message %s) could not be recorded: %.300s", tool->id,
			     rq->message_id, err);
	}
	free(text);
	return;
give_up:
	if (owned && ledger_replay_abandon(l, &lc, rq->message_id, err, sizeof(err)) != 0) {
		/* The record stays pending: a retry finds it in doubt, though
		 * the call did not act.  A record the ledger could not write
		 * fails the run. */
		verdict_withhold(v);
		verdict_deny(v, "replay", "internal_error", "ledger", "the pending record could not be given up: %s",
			     err);
		bridge_fault(b, "ledger", "the pending record of %s (message %s) could not be given up: %.300s",
			     tool->id, rq->message_id, err);
	}
}

/* --- a connection ---------------------------------------------------- */

/* One frame in, one answer out.  Returns 0 to go on, -1 to close. */
static int bridge_serve_frame(struct bridge_conn *c)
{
	struct bridge *b = c->b;
	int fd = c->fd;
	unsigned char h[4];
	uint32_t len;
	char *body = NULL, *frame = NULL, why[256];
	struct request rq = { 0 };
	struct verdict v = { 0 };
	struct call_record cr = { 0 };
	cJSON *line = NULL;
	size_t flen = 0;
	uint64_t start;
	int r = bridge_read_full(b, fd, h, 4, &c->idle), rc = -1, quiet = 0;
	uint64_t max = b->cfg.pol->limits.max_tool_request_bytes;

	if (r == 0)
		return -1;
	start = bridge_now_ms();
	if (r < 0) {
		verdict_deny(&v, "frame", "bad_request", "truncated", "the frame header was cut short");
		goto answer;
	}
	len = request_frame_len(h);
	cr.req_bytes = len;
	/* Every call is a line on the host's disk: past BRIDGE_MAX_CALLS a
	 * run is refused without a line each (bridge_stop() writes one line
	 * with the count), so a loop in the sandbox cannot fill the disk. */
	pthread_mutex_lock(&b->mu);
	quiet = b->ncalls >= BRIDGE_MAX_CALLS;
	if (quiet)
		b->dropped++;
	pthread_mutex_unlock(&b->mu);
	if (quiet) {
		verdict_deny(&v, "frame", "bad_request", "too_many_calls", "this run has made %d calls, the most a run may",
			     BRIDGE_MAX_CALLS);
		goto answer;
	}
	if (len == 0 || len > max) {
		verdict_deny(&v, "frame", "bad_request", len ? "oversized" : "empty",
			     "a frame of %u bytes (the limit is max_tool_request_bytes, %llu)", len,
			     (unsigned long long)max);
		goto answer;
	}
	body = malloc(len);
	if (body == NULL) {
		verdict_deny(&v, "frame", "internal_error", "memory", "out of memory");
		goto answer;
	}
	if (bridge_read_full(b, fd, body, len, NULL) != 1) {
		verdict_deny(&v, "frame", "bad_request", "truncated", "the frame ended before its %u bytes", len);
		goto answer;
	}
	switch (request_parse(body, len, b->cfg.token, &rq, why, sizeof(why))) {
	case REQUEST_OK:
		break;
	case REQUEST_MALFORMED:
		verdict_deny(&v, "json", "bad_request", "malformed", "%s", why);
		goto answer;
	case REQUEST_NO_TOKEN:
		verdict_deny(&v, "token", "unauthenticated", "missing", "%s", why);
		goto answer;
	case REQUEST_BAD_TOKEN:
		verdict_deny(&v, "token", "unauthenticated", "wrong", "%s", why);
		goto answer;
	case REQUEST_SHAPE:
		verdict_deny(&v, "shape", "bad_request", "shape", "%s", why);
		goto answer;
	}
	cr.id = rq.id;
	cr.tool = rq.tool;
	cr.message_id = rq.message_id;
	cr.params = rq.params;
	/* A run that lost a record runs nothing more: no tool acts without
	 * its audit line, and the run already ends as an error. */
	if (bridge_fault_get(b, why, sizeof(why))) {
		verdict_deny(&v, "record", "internal_error", "run_failed",
			     "this run has failed and runs no more calls: %.200s", why);
		goto answer;
	}
	{
		uint32_t t = bridge_check_call(b, &rq, &v);

		if (t != CPOL_NONE)
			bridge_run_call(b, t, &rq, &v);
	}
answer:
	/* After an auth or framing fault the byte stream cannot be trusted
	 * to be at a frame boundary, so the connection ends; any other
	 * refusal came after a whole frame, and the connection goes on. */
	rc = v.code != NULL && (strcmp(v.check, "frame") == 0 || strcmp(v.check, "token") == 0) ? -1 : 0;
	if (quiet) {
		frame = bridge_answer_frame(NULL, &v, &flen);
		goto send;
	}
	cr.id = rq.id; /* a shape refusal may know it: the audit line names what the answer names */
	frame = bridge_answer_frame(rq.id, &v, &flen);
	cr.resp_bytes = flen;
	cr.ms = bridge_now_ms() - start;
	/* The line first: an answer whose record failed is never sent. */
	if (bridge_record(b, &cr, &v, &line) != 0) {
		bridge_unrecorded(b, &v);
		cJSON_Delete(line);
		line = bridge_audit_line(b, &cr, &v);
		free(frame);
		frame = bridge_answer_frame(rq.id, &v, &flen);
	}
	bridge_list_call(b, line);
send:
	/* An answer that could not be built or sent leaves the client
	 * waiting for bytes that will not come: end the connection so it
	 * sees EOF. */
	if (frame == NULL || bridge_write_full(b, fd, frame, flen) != 0)
		rc = -1;
	__atomic_store_n(&c->last_ms, bridge_now_ms(), __ATOMIC_RELEASE);
	cJSON_Delete(line);
	free(frame);
	cJSON_Delete(v.result);
	cJSON_Delete(v.detail);
	request_free(&rq);
	free(body);
	return rc;
}

static void *bridge_conn_main(void *arg)
{
	struct bridge_conn *c = arg;

	while (bridge_serve_frame(c) == 0)
		;
	shutdown(c->fd, SHUT_RDWR);
	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * A connection from a process that is not the executor is not one of the
 * program's calls: any process that can reach the socket (as root, every
 * process of the executor's host uid) could otherwise spend the run's
 * BRIDGE_MAX_CALLS, fill toolCalls and write audit lines without bound.
 * So it is counted apart, the first BRIDGE_MAX_PEER_LINES get a line each,
 * and bridge_stop() writes one line with the total past that.
 */
static void bridge_refuse_peer(struct bridge *b, int fd, const char *why)
{
	struct verdict v = { 0 };
	struct call_record cr = { 0 };
	char *frame;
	unsigned nth;

	pthread_mutex_lock(&b->mu);
	nth = ++b->peer_refusals;
	pthread_mutex_unlock(&b->mu);
	verdict_deny(&v, "peer", "unauthenticated", "peer", "%s", why);
	frame = bridge_answer_frame(NULL, &v, &cr.resp_bytes);
	/* Its line first, as for a call; a line that fails faults the run. */
	if (nth <= BRIDGE_MAX_PEER_LINES)
		bridge_record(b, &cr, &v, NULL);
	if (frame != NULL && bridge_write_full(b, fd, frame, cr.resp_bytes) != 0) {
		/* the peer went away; it was refused either way */
	}
	free(frame);
}

/*
 * A connection of the executor that gets no thread (pthread_create
 * failed: out of memory, or the pids limit of the supervisor's cgroup) is
 * still one of the program's calls: it is answered internal_error from the
 * acceptor, before its request is read (so with id null), and gets its
 * audit line and toolCalls entry, instead of a silent close the program
 * could not tell from a crash.
 */
static void bridge_refuse_unserved(struct bridge *b, int fd, int err)
{
	struct verdict v = { 0 };
	struct call_record cr = { 0 };
	cJSON *line = NULL;
	char *frame;

	verdict_deny(&v, "frame", "internal_error", "threads",
		     "the supervisor could not start a thread for this connection (%s): the call did not run",
		     strerror(err));
	frame = bridge_answer_frame(NULL, &v, &cr.resp_bytes);
	bridge_record(b, &cr, &v, &line);
	bridge_list_call(b, line);
	if (frame != NULL && bridge_write_full(b, fd, frame, cr.resp_bytes) != 0) {
		/* the program went away; its call was refused either way */
	}
	free(frame);
	cJSON_Delete(line);
}

/*
 * All slots taken: the client keeps one connection per process open
 * between calls, so a program with more processes than slots would wait
 * although most connections sit idle.  The connection idle the
 * longest is ended (its client reconnects on its next call, as it does
 * after any close) and its slot given to the new one.  Returns the slot,
 * or -1 when every connection is in a call.
 */
static int bridge_evict_idle(struct bridge *b)
{
	int pick = -1;
	uint64_t oldest = UINT64_MAX;

	for (int i = 0; i < BRIDGE_MAX_CONNS; i++) {
		struct bridge_conn *c = &b->conns[i];
		uint64_t last = __atomic_load_n(&c->last_ms, __ATOMIC_ACQUIRE);

		/* A connection only just accepted is idle until its client's
		 * first frame arrives: it is not taken before BRIDGE_EVICT_MS. */
		if (c->used && __atomic_load_n(&c->idle, __ATOMIC_ACQUIRE) && last < oldest &&
		    bridge_now_ms() - last >= BRIDGE_EVICT_MS) {
			oldest = last;
			pick = i;
		}
	}
	if (pick < 0)
		return -1;
	/* Its thread sees EOF in its idle read and ends without a line. */
	shutdown(b->conns[pick].fd, SHUT_RDWR);
	pthread_join(b->conns[pick].thread, NULL);
	close(b->conns[pick].fd);
	b->conns[pick].used = 0;
	return pick;
}

/* A free slot (joining threads that have ended), or an idle one made
 * free; -1 when every connection is busy in a call. */
static int bridge_free_slot(struct bridge *b)
{
	int slot = -1;

	for (int i = 0; i < BRIDGE_MAX_CONNS; i++) {
		struct bridge_conn *c = &b->conns[i];

		if (c->used && __atomic_load_n(&c->done, __ATOMIC_ACQUIRE)) {
			pthread_join(c->thread, NULL);
			close(c->fd);
			c->used = 0;
		}
		if (!c->used && slot < 0)
			slot = i;
	}
	return slot >= 0 ? slot : bridge_evict_idle(b);
}

/*
 * Connections are accepted only when a slot is free: with every slot in a
 * call, a new connection waits in the listen backlog (its client blocks, as
 * on any busy server) until a call ends, instead of being refused.  Calls
 * end within their tool's timeout, and idle connections make room
 * (bridge_evict_idle), so the wait is bounded.
 */
static void *bridge_accept_main(void *arg)
{
	struct bridge *b = arg;

	for (;;) {
		struct pollfd pfd[2] = { { .fd = b->listen_fd, .events = POLLIN }, { .fd = b->stop_fd, .events = POLLIN } };
		char why[256];
		int fd, slot, e;

		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			break;
		if (pfd[1].revents)
			break;
		if (!(pfd[0].revents & POLLIN))
			continue;
		slot = bridge_free_slot(b);
		if (slot < 0) {
			/* All in calls: look again shortly, or stop. */
			if (poll(&pfd[1], 1, 10) > 0)
				break;
			continue;
		}
		fd = accept4(b->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			/* Out of fds or memory: the connection waits in the
			 * backlog; look again shortly rather than spin. */
			if (errno != EINTR && errno != ECONNABORTED && poll(&pfd[1], 1, 10) > 0)
				break;
			continue;
		}
		if (!bridge_peer_ok(b, fd, why, sizeof(why))) {
			bridge_refuse_peer(b, fd, why);
			close(fd);
			continue;
		}
		b->conns[slot] = (struct bridge_conn){ .b = b, .fd = fd, .used = 1, .last_ms = bridge_now_ms() };
		if ((e = pthread_create(&b->conns[slot].thread, NULL, bridge_conn_main, &b->conns[slot])) != 0) {
			b->conns[slot].used = 0;
			bridge_refuse_unserved(b, fd, e);
			close(fd);
		}
	}
	return NULL;
}

int bridge_start(const struct bridge_cfg *cfg, int *listen_fd, struct bridge **out, char *err, size_t n)
{
	struct bridge *b = calloc(1, sizeof(*b));
	char p[64];
	struct stat st;

	*out = NULL;
	if (b == NULL) {
		snprintf(err, n, "out of memory");
		return -1;
	}
	b->cfg = *cfg;
	b->listen_fd = *listen_fd;
	*listen_fd = -1;
	b->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	b->calls = cJSON_CreateArray();
	pthread_mutex_init(&b->mu, NULL);
	snprintf(p, sizeof(p), "/proc/%d/ns/pid", (int)cfg->child);
	if (stat(p, &st) != 0) {
		snprintf(err, n, "%s: %s", p, strerror(errno));
		goto fail;
	}
	b->child_pidns = st.st_ino;
	/* Lines are appended after what the file holds (nothing, when the
	 * sandbox made it): a torn line is cut back to here. */
	if (cfg->audit_fd >= 0 && fstat(cfg->audit_fd, &st) == 0)
		b->audit_len = st.st_size;
	if (b->stop_fd < 0 || b->calls == NULL) {
		snprintf(err, n, "bridge: %s", strerror(errno ? errno : ENOMEM));
		goto fail;
	}
	if (pthread_create(&b->acceptor, NULL, bridge_accept_main, b) != 0) {
		snprintf(err, n, "bridge: cannot start a thread");
		goto fail;
	}
	b->acceptor_started = 1;
	*out = b;
	return 0;
fail:
	bridge_free(b);
	return -1;
}

void bridge_stop(struct bridge *b)
{
	uint64_t one = 1;

	if (b == NULL || b->stop_fd < 0)
		return;
	/* One write wakes every poll: the acceptor, each connection's read
	 * and each running tool's wait (tool_exec kills the tool). */
	if (write(b->stop_fd, &one, sizeof(one)) < 0) {
		/* an eventfd write only fails on overflow, which one write cannot cause */
	}
	if (b->acceptor_started) {
		pthread_join(b->acceptor, NULL);
		b->acceptor_started = 0;
	}
	for (int i = 0; i < BRIDGE_MAX_CONNS; i++)
		if (b->conns[i].used) {
			pthread_join(b->conns[i].thread, NULL);
			close(b->conns[i].fd);
			b->conns[i].used = 0;
		}
	/* No one may connect any more: a late connect would wait in the
	 * backlog for an answer that never comes. */
	if (b->listen_fd >= 0) {
		close(b->listen_fd);
		b->listen_fd = -1;
	}
	if (b->dropped > 0) {
		struct verdict v = { 0 };
		struct call_record cr = { 0 };

		cJSON *line = NULL;

		verdict_deny(&v, "frame", "bad_request", "too_many_calls",
			     "%u more calls were refused past %d, without a line each", b->dropped, BRIDGE_MAX_CALLS);
		b->dropped = 0;
		bridge_record(b, &cr, &v, &line);
		bridge_list_call(b, line);
		cJSON_Delete(line);
	}
	if (b->peer_refusals > BRIDGE_MAX_PEER_LINES && !b->peer_summarized) {
		struct verdict v = { 0 };
		struct call_record cr = { 0 };

		verdict_deny(&v, "peer", "unauthenticated", "peer_summary",
			     "%u connections were refused at the peer check in all, the first %d with a line each",
			     b->peer_refusals, BRIDGE_MAX_PEER_LINES);
		b->peer_summarized = 1;
		bridge_record(b, &cr, &v, NULL);
	}
	/* Every line on disk before the run's result says it ended: a write
	 * the page cache took can still fail on its way to the disk (EIO,
	 * or ENOSPC on a file system that allocates late). */
	if (!b->audit_synced && b->cfg.audit_fd >= 0) {
		b->audit_synced = 1;
		if (fdatasync(b->cfg.audit_fd) != 0)
			bridge_fault(b, "audit", "the audit (logs/tool-calls.jsonl) could not be made durable: %s",
				     strerror(errno));
	}
}

int bridge_failed(const struct bridge *b, char *stage, size_t sn, char *msg, size_t mn)
{
	if (b == NULL || !b->faulted)
		return 0;
	snprintf(stage, sn, "%s", b->fault_stage);
	snprintf(msg, mn, "%s", b->fault_msg);
	return 1;
}

cJSON *bridge_calls_json(const struct bridge *b)
{
	return b ? cJSON_Duplicate(b->calls, 1) : cJSON_CreateArray();
}

unsigned bridge_calls_listed(struct bridge *b)
{
	unsigned n = 0;

	if (b == NULL)
		return 0;
	pthread_mutex_lock(&b->mu);
	n = (unsigned)cJSON_GetArraySize(b->calls);
	pthread_mutex_unlock(&b->mu);
	return n;
}

cJSON *bridge_calls_from(struct bridge *b, unsigned from)
{
	cJSON *arr = cJSON_CreateArray(), *c;
	unsigned i = 0;

	if (b == NULL || arr == NULL)
		return arr;
	pthread_mutex_lock(&b->mu);
	cJSON_ArrayForEach(c, b->calls)
	{
		if (i++ >= from)
			cJSON_AddItemToArray(arr, cJSON_Duplicate(c, 1));
	}
	pthread_mutex_unlock(&b->mu);
	return arr;
}

unsigned bridge_peer_refusals(const struct bridge *b)
{
	return b ? b->peer_refusals : 0;
}

void bridge_free(struct bridge *b)
{
	char err[256];

	if (b == NULL)
		return;
	bridge_stop(b);
	if (b->ledger != NULL) {
		ledger_run_end(b->ledger, b->cfg.exec_id, err, sizeof(err));
		if (b->ledger != b->cfg.ledger)
			ledger_close(b->ledger);
	}
	if (b->listen_fd >= 0)
		close(b->listen_fd);
	if (b->stop_fd >= 0)
		close(b->stop_fd);
	cJSON_Delete(b->calls);
	pthread_mutex_destroy(&b->mu);
	free(b);
}
