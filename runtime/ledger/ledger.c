/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ledger.c - ledger.h's entry points: the place given to ledger_open()
 * chooses the back end once (a postgresql:// or postgres:// URL:
 * PostgreSQL; anything else: a state directory with SQLite), and every
 * later call goes to the one the handle was opened with.  A URL is never
 * read as a directory nor the other way round, so a server that cannot
 * be reached is an error, never a quiet fallback to a local file.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/ledger/ledger.h"
#include "runtime/ledger/ledger_backend.h"
#include "runtime/ledger/ledger_id.h"

/* Exactly one of the two is set. */
struct ledger {
	struct ledger_sq *sq;
	struct ledger_pg *pg;
};

int ledger_is_url(const char *where)
{
	return where != NULL && (strncmp(where, "postgresql://", 13) == 0 || strncmp(where, "postgres://", 11) == 0);
}

/* A window remains between exec and this call, so docs/ledger.md still
 * says to prefer PGPASSWORD or a passfile; this keeps the password out of
 * every later `ps`. */
int ledger_url_hide(char *arg, char *copy, size_t n)
{
	size_t len = strlen(arg);
	char *p, *end, *at = NULL, *colon, *q;

	if (len >= n)
		return -1;
	memcpy(copy, arg, len + 1);
	if ((p = strstr(arg, "://")) == NULL)
		return 0;
	p += 3;
	/* The authority ends at the path or the query; its userinfo at the
	 * last '@' (one inside a password is written %40). */
	end = p + strcspn(p, "/?");
	for (q = p; q < end; q++)
		if (*q == '@')
			at = q;
	if (at != NULL && (colon = memchr(p, ':', (size_t)(at - p))) != NULL)
		memset(colon + 1, '*', (size_t)(at - colon - 1));
	for (q = strchr(end, '?'); q != NULL; q = strchr(q, '&')) {
		q++;
		if (strncmp(q, "password=", 9) == 0)
			memset(q + 9, '*', strcspn(q + 9, "&"));
	}
	return 0;
}

const char *ledger_backend(const struct ledger *l)
{
	return l != NULL && l->pg != NULL ? "postgresql" : "sqlite";
}

int ledger_open(const char *where, struct ledger **out, char *err, size_t n)
{
	struct ledger *l = NULL;
	int rc = -1;

	if (out == NULL) {
		ledger_errf(err, n, "ledger: no place for the handle");
		return -1;
	}
	*out = NULL;
	l = calloc(1, sizeof(*l));
	if (l == NULL) {
		ledger_errf(err, n, "ledger: out of memory");
		return -1;
	}
	rc = ledger_is_url(where) ? ledger_pg_open(where, &l->pg, err, n) : ledger_sq_open(where, &l->sq, err, n);
	if (rc != 0) {
		free(l);
		return -1;
	}
	*out = l;
	return 0;
}

void ledger_close(struct ledger *l)
{
	if (l == NULL)
		return;
	ledger_sq_close(l->sq);
	ledger_pg_close(l->pg);
	free(l);
}

const char *ledger_id(const struct ledger *l)
{
	return l->pg != NULL ? ledger_pg_id(l->pg) : ledger_sq_id(l->sq);
}

int ledger_check(const char *where, ledger_finding_fn fn, void *arg, char *err, size_t n)
{
	return ledger_is_url(where) ? ledger_pg_check(where, fn, arg, err, n) : ledger_sq_check(where, fn, arg, err, n);
}

int ledger_exists(const char *where)
{
	return ledger_is_url(where) ? ledger_pg_exists(where) : ledger_sq_exists(where);
}

/* A NULL handle goes to the SQLite side, whose checks refuse it with the
 * usual message. */
enum ledger_budget ledger_budget_take(struct ledger *l, const struct ledger_call *c, uint32_t max_run,
				      uint32_t max_day, char *err, size_t n)
{
	if (l != NULL && l->pg != NULL)
		return ledger_pg_budget_take(l->pg, c, max_run, max_day, err, n);
	return ledger_sq_budget_take(l != NULL ? l->sq : NULL, c, max_run, max_day, err, n);
}

enum ledger_replay ledger_replay_begin(struct ledger *l, const struct ledger_call *c, const char *message_id,
				       const char *params_sha256, uint64_t wait_ms, int cancel_fd, char **response,
				       char *err, size_t n)
{
	if (l != NULL && l->pg != NULL)
		return ledger_pg_replay_begin(l->pg, c, message_id, params_sha256, wait_ms, cancel_fd, response, err,
					      n);
	return ledger_sq_replay_begin(l != NULL ? l->sq : NULL, c, message_id, params_sha256, wait_ms, cancel_fd,
				      response, err, n);
}

int ledger_replay_finish(struct ledger *l, const struct ledger_call *c, const char *message_id,
			 const char *response, char *err, size_t n)
{
	if (response == NULL) {
		ledger_errf(err, n, "ledger: finish needs a response");
		return -1;
	}
	if (l != NULL && l->pg != NULL)
		return ledger_pg_replay_close(l->pg, c, message_id, response, err, n);
	return ledger_sq_replay_close(l != NULL ? l->sq : NULL, c, message_id, response, err, n);
}

int ledger_replay_abandon(struct ledger *l, const struct ledger_call *c, const char *message_id, char *err,
			  size_t n)
{
	if (l != NULL && l->pg != NULL)
		return ledger_pg_replay_close(l->pg, c, message_id, NULL, err, n);
	return ledger_sq_replay_close(l != NULL ? l->sq : NULL, c, message_id, NULL, err, n);
}

int ledger_run_end(struct ledger *l, const char *exec_id, char *err, size_t n)
{
	if (l != NULL && l->pg != NULL)
		return ledger_pg_run_end(l->pg, exec_id, err, n);
	return ledger_sq_run_end(l != NULL ? l->sq : NULL, exec_id, err, n);
}

int ledger_replay_list(struct ledger *l, const struct ledger_filter *f, ledger_record_fn fn, void *arg, char *err,
		       size_t n)
{
	if (l != NULL && l->pg != NULL)
		return ledger_pg_replay_list(l->pg, f, fn, arg, err, n);
	return ledger_sq_replay_list(l != NULL ? l->sq : NULL, f, fn, arg, err, n);
}

enum ledger_forget ledger_replay_forget(struct ledger *l, const struct ledger_filter *key, const char *reason,
					int force, uint32_t uid, char *prev, size_t pn, char *err, size_t n)
{
	if (l != NULL && l->pg != NULL)
		return ledger_pg_replay_forget(l->pg, key, reason, force, uid, prev, pn, err, n);
	return ledger_sq_replay_forget(l != NULL ? l->sq : NULL, key, reason, force, uid, prev, pn, err, n);
}

int ledger_forget_log(struct ledger *l, ledger_forgotten_fn fn, void *arg, char *err, size_t n)
{
	if (l != NULL && l->pg != NULL)
		return ledger_pg_forget_log(l->pg, fn, arg, err, n);
	return ledger_sq_forget_log(l != NULL ? l->sq : NULL, fn, arg, err, n);
}
