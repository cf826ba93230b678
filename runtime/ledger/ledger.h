/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ledger.h - what outlives one run: budgets and side-effect replay records
 * (DESIGN.md §5), in SQLite under --state-dir, shared by every concurrent
 * `cordon run` on the host.
 *
 * The interface is the seam for another back end (PostgreSQL for a fleet):
 * nothing outside ledger/ knows it is SQLite.  Every decision is one
 * transaction.  A struct ledger may be used from several threads of one
 * supervisor at once (the bridge serves calls concurrently); calls are
 * serialised inside.  A handle belongs to the process that opened it: a
 * forked child opens its own (using the parent's is an error).
 * docs/ledger.md has the schema, the replay states and the guarantees.
 */
#ifndef CORDON_LEDGER_H
#define CORDON_LEDGER_H

#include <stddef.h>
#include <stdint.h>

struct ledger;

/*
 * Opens <state_dir>/ledger.sqlite3 in WAL mode with a busy timeout and
 * migrates its schema to the current version.  The state directory is
 * created 0700 when absent, its parent never: it must exist (a mistyped
 * path is an error, not a new empty ledger; ledger_default_parents() makes
 * those of the default place).  A schema newer than this build knows is an
 * error, never a downgrade.
 *
 * Identity (docs/ledger.md): a ledger is named by a random id drawn when
 * it made its database, kept inside it and in <state_dir>/ledger.id.  With
 * that file present, a database that is missing, empty, or holds no id or
 * another one is an error naming both paths, never a fresh start (it would
 * run every recorded side effect again).  Neither present: a new ledger,
 * its id drawn once however many processes open the fresh directory at
 * once (a busy database is waited for, up to 5 s in all).  A database
 * without the file (written before ids, or the file was lost) is adopted:
 * its id (drawn now when it has none) is written to the file.
 *
 * Integrity: the database passes SQLite's integrity check before it is
 * used, bounded in time (LEDGER_OPEN_CHECK_MS; a larger ledger is checked
 * as far as the bound reaches, ledger_check() checks all of it).  A found
 * problem is an error quoting SQLite's first lines.  An open handle checks
 * before each transaction that the path still names the file it opened,
 * so nothing is recorded into a database that was deleted or replaced.
 * Returns 0, or -1 with err.
 */
#define LEDGER_OPEN_CHECK_MS 50
int ledger_open(const char *state_dir, struct ledger **out, char *err, size_t n);
void ledger_close(struct ledger *l);

/*
 * PostgreSQL (docs/ledger.md "PostgreSQL"): wherever a state directory is
 * taken above and below (ledger_open, ledger_check, ledger_exists), a
 * postgresql:// or postgres:// URL names a server instead, for a fleet of
 * hosts sharing one ledger.  Its schema is migrated on open under an
 * advisory lock, its id is kept in the database, and a pending record's
 * owner is a lease the handle renews, so another host can tell a crashed
 * owner from a running one.  An unreachable server or a bad URL is an
 * error naming the server (never its password), never SQLite instead.
 */
int ledger_is_url(const char *where);
/* "sqlite" or "postgresql": which back end l was opened on. */
const char *ledger_backend(const struct ledger *l);

/* The schema version this build writes (PRAGMA user_version). */
int ledger_schema_version(void);

/* The id of the ledger l: LEDGER_ID_LEN lower-case hex digits. */
#define LEDGER_ID_LEN 32
const char *ledger_id(const struct ledger *l);

/* One finding of ledger_check(): problem 1 for something wrong, 0 for a
 * note (which ledger, how many records, an identity to be adopted). */
typedef void (*ledger_finding_fn)(const char *line, int problem, void *arg);

/* Checks the ledger under state_dir without changing or creating
 * anything: the identity as ledger_open() judges it, and SQLite's full
 * integrity check, unbounded in time.  Each finding goes to fn.  Returns
 * 0 when sound, 1 when a problem was found, -1 with err when there is no
 * ledger to check (neither database nor identity file) or the directory
 * cannot be read. */
int ledger_check(const char *state_dir, ledger_finding_fn fn, void *arg, char *err, size_t n);

/*
 * Who a call is for.  Every field is part of some key (docs/ledger.md):
 * budgets per (exec_id, tool) and (app, tenant, user, tool, day), replay
 * per (app, tenant, tool, message_id).  The tenant is in both keys because
 * one state directory serves every tenant of a host: without it one
 * tenant's message id would fetch another's recorded answer, and two
 * tenants' users of the same name would share a daily budget.
 */
struct ledger_call {
	const char *app;
	const char *tenant;  /* from the request context; "" when none, never NULL */
	const char *tool;
	const char *user;    /* from the request context; "" when none */
	const char *exec_id; /* this run */
	const char *day;     /* UTC "YYYY-MM-DD" of the call (the caller's clock) */
};

enum ledger_budget {
	LEDGER_BUDGET_OK = 0, /* counted */
	LEDGER_BUDGET_RUN,    /* max_run calls already made in this execution */
	LEDGER_BUDGET_DAY,    /* max_day calls already made by (app, tenant, user, tool) today */
	LEDGER_BUDGET_ERROR,  /* err filled */
};

/* Atomically checks both budgets and, when neither is spent, counts one
 * call against both.  0 means no budget of that kind: it is neither checked
 * nor counted (both 0: OK without touching the database).  A refused call
 * is not counted.  When both are spent the answer is LEDGER_BUDGET_RUN. */
enum ledger_budget ledger_budget_take(struct ledger *l, const struct ledger_call *c, uint32_t max_run,
				      uint32_t max_day, char *err, size_t n);

enum ledger_replay {
	LEDGER_REPLAY_RUN = 0,  /* no record: one is now written `pending`, owned
				 * by this process; run the tool, then finish */
	LEDGER_REPLAY_RECORDED, /* *response holds the recorded answer */
	LEDGER_REPLAY_IN_DOUBT, /* a `pending` record whose owner is gone (a
				 * crash between "tool ran" and "recorded"):
				 * never run again */
	LEDGER_REPLAY_CONFLICT, /* the id was used with other params */
	LEDGER_REPLAY_ERROR,    /* err filled */
	LEDGER_REPLAY_CANCELLED, /* cancel_fd fired while waiting for another owner */
};

/*
 * Side-effect replay for (app, tenant, user, tool, message_id).  params_sha256 is the
 * hex SHA-256 of the canonical params text; a repeat with another digest is
 * a CONFLICT.  When the record is `pending` and its owner (pid and process
 * start time, on this host) is alive, waits for it to finish, up to
 * wait_ms, then answers IN_DOUBT, or until cancel_fd (-1: none) is
 * readable, then answers CANCELLED.  *response (RECORDED only) is
 * malloc'd, the caller frees it.
 *
 * The owner may be another thread of this process (the same id twice in
 * one run): that waits the same way.  A different digest is a CONFLICT
 * whatever the record's state, without waiting.  The wait holds neither
 * the handle's mutex nor a transaction.
 */
enum ledger_replay ledger_replay_begin(struct ledger *l, const struct ledger_call *c, const char *message_id,
				       const char *params_sha256, uint64_t wait_ms, int cancel_fd, char **response,
				       char *err, size_t n);

/* Records the answer of a call that ledger_replay_begin() let run; the
 * record stops being `pending`.  Returns 0, or -1 with err, also when the
 * record is not `pending` under this process (begun by another process,
 * never begun, or finished already). */
int ledger_replay_finish(struct ledger *l, const struct ledger_call *c, const char *message_id,
			 const char *response, char *err, size_t n);

/* Removes a `pending` record this process owns, as if it had never been
 * begun: for a call refused or failed before its tool could act (a budget
 * spent, a secret missing, an implementation that could not be started),
 * so that a retry runs it rather than finding in_doubt or a failure that
 * was never the tool's.  Returns 0, or -1 with err (also when there is no
 * such record). */
int ledger_replay_abandon(struct ledger *l, const struct ledger_call *c, const char *message_id, char *err,
			  size_t n);

/* Drops the per-execution counters of exec_id (the run is over). */
int ledger_run_end(struct ledger *l, const char *exec_id, char *err, size_t n);

/* ---- by hand: `cordon ledger list|show|forget` (docs/ledger.md) ---------- */

/* The state directory of `cordon run` and `cordon ledger`: given when not
 * NULL; else /var/lib/cordon as root (rootless 0), $XDG_STATE_HOME/cordon
 * or $HOME/.local/state/cordon otherwise (absolute paths only); "" when
 * there is none of those.  A fixed place, because replay records and daily
 * budgets span runs.  Returns 0, or -1 with err when it does not fit. */
int ledger_state_dir(const char *given, int rootless, char *dir, size_t n, char *err, size_t en);

/* Makes the missing parents (0700) of state_dir when it is the default
 * place, ledger_state_dir(NULL, rootless) (~/.local/state on a fresh
 * account), and nothing for any other: a state directory an operator
 * named must have its parent already, so that a mistyped --state-dir is
 * refused by ledger_open() instead of becoming a new, empty ledger.
 * Returns 0, or -1 with err. */
int ledger_default_parents(const char *state_dir, int rootless, char *err, size_t n);

/* 1 when state_dir holds a ledger (its database, or its identity file:
 * a ledger whose database is gone is still one, and opening it says
 * what is wrong), else 0; creates nothing (a listing must not make a
 * ledger where there was none).  For a URL: 0 only when the server
 * answers that it holds no ledger; 1 when it does or cannot be asked. */
int ledger_exists(const char *state_dir);

enum ledger_owner_state {
	LEDGER_OWNER_NONE = 0, /* done: no owner */
	LEDGER_OWNER_ALIVE,    /* pending, its supervisor still runs: the tool may be running */
	LEDGER_OWNER_GONE,     /* pending, its supervisor is gone: in doubt */
	LEDGER_OWNER_UNKNOWN,  /* pending, cannot tell from here (another pid namespace) */
};

/* One replay record as it is stored; the strings live as long as the
 * callback that gets it runs. */
struct ledger_record {
	const char *app, *tenant, *user, *tool, *message_id;
	const char *state;    /* "pending" or "done" */
	const char *params_sha256, *exec_id;
	const char *response; /* done: the recorded answer; pending: NULL */
	int64_t created, updated; /* Unix seconds */
	int64_t owner_pid;
	enum ledger_owner_state owner;
};

/* Which records: each field NULL for any, else exactly it.  state is
 * "pending", "done" or "in_doubt" (pending, its owner gone). */
struct ledger_filter {
	const char *app, *tenant, *user, *tool, *message_id, *state;
};

typedef int (*ledger_record_fn)(const struct ledger_record *r, void *arg);

/* Calls fn for each matching record, oldest first, inside one read
 * transaction (it blocks no supervisor: WAL).  A non-zero return of fn
 * stops the walk and is returned.  Returns 0, or -1 with err. */
int ledger_replay_list(struct ledger *l, const struct ledger_filter *f, ledger_record_fn fn, void *arg, char *err,
		       size_t n);

enum ledger_forget {
	LEDGER_FORGOT = 0,          /* deleted, and the forget log has its row */
	LEDGER_FORGET_NOT_FOUND,    /* no such record */
	LEDGER_FORGET_OWNER_ALIVE,  /* pending under an owner that may still run its tool; force not given */
	LEDGER_FORGET_ERROR,        /* err filled */
};

/*
 * Deletes one replay record, named by every key field of key (app, tenant,
 * user, tool, message_id; state is ignored), and in the same transaction
 * adds a row to the forget log: time, uid, the key, the state it had, its
 * execution, whether forced, reason (non-empty).  Both or neither.  A
 * pending record whose owner is alive or cannot be judged is refused
 * unless force: its tool may be running, and the next call would run it
 * again beside it.  prev (may be NULL) gets the state it had.
 */
enum ledger_forget ledger_replay_forget(struct ledger *l, const struct ledger_filter *key, const char *reason,
					int force, uint32_t uid, char *prev, size_t pn, char *err, size_t n);

/* One row of the forget log. */
struct ledger_forgotten {
	int64_t time;
	int64_t uid;
	const char *app, *tenant, *user, *tool, *message_id, *state, *exec_id, *reason;
	int forced;
};

typedef int (*ledger_forgotten_fn)(const struct ledger_forgotten *r, void *arg);

/* The forget log, oldest first, as ledger_replay_list() walks records. */
int ledger_forget_log(struct ledger *l, ledger_forgotten_fn fn, void *arg, char *err, size_t n);

#endif
