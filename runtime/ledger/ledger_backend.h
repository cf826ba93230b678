/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ledger_backend.h - the two back ends behind ledger.h, inside
 * runtime/ledger/ only.  ledger.c chooses one per ledger_open() by the
 * place it is given (ledger_is_url()) and forwards every call; each
 * function here has the contract of its ledger.h namesake.
 */
#ifndef CORDON_LEDGER_BACKEND_H
#define CORDON_LEDGER_BACKEND_H

#include "runtime/ledger/ledger.h"

/* SQLite under a state directory (ledger_sqlite.c). */
struct ledger_sq;
int ledger_sq_open(const char *state_dir, struct ledger_sq **out, char *err, size_t n);
void ledger_sq_close(struct ledger_sq *l);
const char *ledger_sq_id(const struct ledger_sq *l);
int ledger_sq_check(const char *state_dir, ledger_finding_fn fn, void *arg, char *err, size_t n);
int ledger_sq_exists(const char *state_dir);
enum ledger_budget ledger_sq_budget_take(struct ledger_sq *l, const struct ledger_call *c, uint32_t max_run,
					 uint32_t max_day, char *err, size_t n);
enum ledger_replay ledger_sq_replay_begin(struct ledger_sq *l, const struct ledger_call *c, const char *message_id,
					  const char *params_sha256, uint64_t wait_ms, int cancel_fd, char **response,
					  char *err, size_t n);
/* finish (response set) or abandon (NULL), only by the record's owner. */
int ledger_sq_replay_close(struct ledger_sq *l, const struct ledger_call *c, const char *message_id,
			   const char *response, char *err, size_t n);
int ledger_sq_run_end(struct ledger_sq *l, const char *exec_id, char *err, size_t n);
int ledger_sq_replay_list(struct ledger_sq *l, const struct ledger_filter *f, ledger_record_fn fn, void *arg,
			  char *err, size_t n);
enum ledger_forget ledger_sq_replay_forget(struct ledger_sq *l, const struct ledger_filter *key, const char *reason,
					   int force, uint32_t uid, char *prev, size_t pn, char *err, size_t n);
int ledger_sq_forget_log(struct ledger_sq *l, ledger_forgotten_fn fn, void *arg, char *err, size_t n);

/* PostgreSQL at a URL (ledger_pg.c). */
struct ledger_pg;
int ledger_pg_open(const char *url, struct ledger_pg **out, char *err, size_t n);
void ledger_pg_close(struct ledger_pg *l);
const char *ledger_pg_id(const struct ledger_pg *l);
int ledger_pg_check(const char *url, ledger_finding_fn fn, void *arg, char *err, size_t n);
int ledger_pg_exists(const char *url);
enum ledger_budget ledger_pg_budget_take(struct ledger_pg *l, const struct ledger_call *c, uint32_t max_run,
					 uint32_t max_day, char *err, size_t n);
enum ledger_replay ledger_pg_replay_begin(struct ledger_pg *l, const struct ledger_call *c, const char *message_id,
					  const char *params_sha256, uint64_t wait_ms, int cancel_fd, char **response,
					  char *err, size_t n);
/* finish (response set) or abandon (NULL), only by the record's owner. */
int ledger_pg_replay_close(struct ledger_pg *l, const struct ledger_call *c, const char *message_id,
			   const char *response, char *err, size_t n);
int ledger_pg_run_end(struct ledger_pg *l, const char *exec_id, char *err, size_t n);
int ledger_pg_replay_list(struct ledger_pg *l, const struct ledger_filter *f, ledger_record_fn fn, void *arg,
			  char *err, size_t n);
enum ledger_forget ledger_pg_replay_forget(struct ledger_pg *l, const struct ledger_filter *key, const char *reason,
					   int force, uint32_t uid, char *prev, size_t pn, char *err, size_t n);
int ledger_pg_forget_log(struct ledger_pg *l, ledger_forgotten_fn fn, void *arg, char *err, size_t n);

#endif
