/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ledger_pg.c - ledger.h on PostgreSQL (docs/ledger.md "PostgreSQL"), so
 * that several hosts running `cordon serve` share budgets and replay
 * records.
 *
 * Every decision is one statement or one transaction: a budget take is
 * an upsert that returns the new count (the row lock orders racing
 * takers; a count over the limit rolls the transaction back), a replay
 * begin is INSERT ... ON CONFLICT DO NOTHING (the one who inserted owns
 * the record) and otherwise one read of the record and its owner.
 *
 * A pid names a process only on its host, so a pending record names an
 * owner row: the handle that wrote it, with a lease (LEDGER_PG_LEASE_S)
 * renewed by a thread of the handle.  An owner whose lease ran out is
 * gone: its record is in doubt.  On the owner's own boot the pid and start
 * time answer at once, as with SQLite.
 *
 * One connection per handle under one mutex, held for one statement or
 * transaction and never while waiting for another owner.  A lost
 * connection fails the call it happened in and is re-made by the next;
 * nothing is retried inside, because a retried "write pending" or
 * "record the answer" could not tell whether the first one committed.
 * Every parameter is bound ($1...): no SQL is ever built from input.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime/ledger/ledger.h"
#include "runtime/ledger/ledger_backend.h"
#include "runtime/ledger/ledger_common.h"
#include "runtime/ledger/ledger_id.h"
#include "runtime/ledger/pq.h"

/*
 * The lease: long enough that a renewal every third of it survives a slow
 * server or a short network stall without another host judging a live
 * owner gone (that would answer in_doubt for a call that then succeeds:
 * safe, but wrong), short enough that a retry after a crash on another host
 * learns "in doubt" within a caller's usual wait.  30 s.
 */
#define LEDGER_PG_LEASE_S 30
#define LEDGER_PG_RENEW_S 10
/* Owner rows expired this long ago go (their records read as gone
 * whether the row is there or not). */
#define LEDGER_PG_OWNER_KEEP "1 day"
/* The advisory lock key of the migration: "cordon" in ASCII. */
#define LEDGER_PG_LOCK "109857468263278"
/* How long a connection attempt may take. */
#define LEDGER_PG_CONNECT_S "10"

/*
 * The schema, one step per version, each run in the migration's
 * transaction; steps are only appended, never edited.
 */
static const char *const pg_steps[] = {
	/* v1 */
	"CREATE TABLE cordon_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
	"CREATE TABLE cordon_owner ("
	" id BIGSERIAL PRIMARY KEY,"
	" hostname TEXT NOT NULL,"
	" boot TEXT NOT NULL,"
	" pid BIGINT NOT NULL,"
	" start BIGINT NOT NULL,"
	" pidns BIGINT NOT NULL,"
	" expires TIMESTAMPTZ NOT NULL);"
	"CREATE TABLE cordon_budget_run ("
	" exec_id TEXT NOT NULL, tool TEXT NOT NULL, calls BIGINT NOT NULL, created BIGINT NOT NULL,"
	" PRIMARY KEY (exec_id, tool));"
	"CREATE INDEX cordon_budget_run_by_created ON cordon_budget_run (created);"
	"CREATE TABLE cordon_budget_day ("
	" app TEXT NOT NULL, tenant TEXT NOT NULL, \"user\" TEXT NOT NULL, tool TEXT NOT NULL, day DATE NOT NULL,"
	" calls BIGINT NOT NULL, PRIMARY KEY (app, tenant, \"user\", tool, day));"
	"CREATE INDEX cordon_budget_day_by_day ON cordon_budget_day (day);"
	"CREATE TABLE cordon_replay ("
	" app TEXT NOT NULL, tenant TEXT NOT NULL, \"user\" TEXT NOT NULL, tool TEXT NOT NULL,"
	" message_id TEXT NOT NULL, params_sha256 TEXT NOT NULL,"
	" state TEXT NOT NULL CHECK ((state = 'pending' AND response IS NULL)"
	"  OR (state = 'done' AND response IS NOT NULL)),"
	" response TEXT, owner BIGINT NOT NULL, owner_pid BIGINT NOT NULL, exec_id TEXT NOT NULL,"
	" created BIGINT NOT NULL, updated BIGINT NOT NULL,"
	" PRIMARY KEY (app, tenant, \"user\", tool, message_id));"
	"CREATE TABLE cordon_replay_forgotten ("
	" id BIGSERIAL PRIMARY KEY, time BIGINT NOT NULL, uid BIGINT NOT NULL,"
	" app TEXT NOT NULL, tenant TEXT NOT NULL, \"user\" TEXT NOT NULL, tool TEXT NOT NULL,"
	" message_id TEXT NOT NULL, state TEXT NOT NULL, exec_id TEXT NOT NULL, params_sha256 TEXT NOT NULL,"
	" response TEXT, forced BOOLEAN NOT NULL, reason TEXT NOT NULL);",
};
#define PG_VERSION ((int)(sizeof(pg_steps) / sizeof(pg_steps[0])))

static const char SQL_SCHEMA_MAKE[] = "CREATE TABLE IF NOT EXISTS cordon_schema (version INTEGER NOT NULL)";
static const char SQL_SCHEMA_GET[] = "SELECT max(version) FROM cordon_schema";
static const char SQL_SCHEMA_CLEAR[] = "DELETE FROM cordon_schema";
static const char SQL_SCHEMA_SET[] = "INSERT INTO cordon_schema (version) VALUES ($1)";
static const char SQL_SCHEMA_PEEK[] = "SELECT to_regclass('cordon_schema') IS NOT NULL";
static const char SQL_ID_PUT[] = "INSERT INTO cordon_meta (key, value) VALUES ('ledger_id', $1) ON CONFLICT DO NOTHING";
static const char SQL_ID_GET[] = "SELECT value FROM cordon_meta WHERE key = 'ledger_id'";
static const char SQL_OWNER_NEW[] =
	"INSERT INTO cordon_owner (hostname, boot, pid, start, pidns, expires)"
	" VALUES ($1, $2, $3, $4, $5, clock_timestamp() + make_interval(secs => $6)) RETURNING id";
/* Upsert: an owner row pruned while this handle was cut off comes back
 * under the same id, which its pending records name. */
static const char SQL_OWNER_RENEW[] =
	"INSERT INTO cordon_owner (id, hostname, boot, pid, start, pidns, expires)"
	" VALUES ($1, $2, $3, $4, $5, $6, clock_timestamp() + make_interval(secs => $7))"
	" ON CONFLICT (id) DO UPDATE SET expires = EXCLUDED.expires";
static const char SQL_OWNER_DROP[] = "DELETE FROM cordon_owner WHERE id = $1";
static const char SQL_OWNER_PRUNE[] =
	"DELETE FROM cordon_owner WHERE expires < clock_timestamp() - interval '" LEDGER_PG_OWNER_KEEP "'";
static const char SQL_RUN_ADD[] =
	"INSERT INTO cordon_budget_run (exec_id, tool, calls, created) VALUES ($1, $2, 1, $3)"
	" ON CONFLICT (exec_id, tool) DO UPDATE SET calls = cordon_budget_run.calls + 1 RETURNING calls";
static const char SQL_DAY_ADD[] =
	"INSERT INTO cordon_budget_day (app, tenant, \"user\", tool, day, calls) VALUES ($1, $2, $3, $4, $5, 1)"
	" ON CONFLICT (app, tenant, \"user\", tool, day) DO UPDATE SET calls = cordon_budget_day.calls + 1"
	" RETURNING calls";
static const char SQL_PRUNE_DAY[] = "DELETE FROM cordon_budget_day WHERE day < $1::date - 30";
static const char SQL_PRUNE_RUN[] = "DELETE FROM cordon_budget_run WHERE created < $1";
static const char SQL_RUN_END[] = "DELETE FROM cordon_budget_run WHERE exec_id = $1";
static const char SQL_REPLAY_PUT[] =
	"INSERT INTO cordon_replay (app, tenant, \"user\", tool, message_id, params_sha256, state, response,"
	" owner, owner_pid, exec_id, created, updated)"
	" VALUES ($1, $2, $3, $4, $5, $6, 'pending', NULL, $7, $8, $9, $10, $10)"
	" ON CONFLICT DO NOTHING RETURNING 1";
/* The record and what its owner is now; live: the lease has not run out. */
static const char SQL_REPLAY_GET[] =
	"SELECT r.params_sha256, r.state, r.response, r.owner, o.boot, o.pid, o.start, o.pidns,"
	" o.expires > clock_timestamp()"
	" FROM cordon_replay r LEFT JOIN cordon_owner o ON o.id = r.owner"
	" WHERE r.app = $1 AND r.tenant = $2 AND r.\"user\" = $3 AND r.tool = $4 AND r.message_id = $5";
static const char SQL_REPLAY_DONE[] =
	"UPDATE cordon_replay SET state = 'done', response = $6, updated = $8"
	" WHERE app = $1 AND tenant = $2 AND \"user\" = $3 AND tool = $4 AND message_id = $5"
	" AND state = 'pending' AND owner = $7";
static const char SQL_REPLAY_DROP[] =
	"DELETE FROM cordon_replay"
	" WHERE app = $1 AND tenant = $2 AND \"user\" = $3 AND tool = $4 AND message_id = $5"
	" AND state = 'pending' AND owner = $6";
/* NULL parameters match anything: one fixed statement. */
static const char SQL_REPLAY_LIST[] =
	"SELECT r.app, r.tenant, r.\"user\", r.tool, r.message_id, r.state, r.params_sha256, r.exec_id, r.response,"
	" r.created, r.updated, r.owner_pid, r.owner, o.boot, o.pid, o.start, o.pidns, o.expires > clock_timestamp()"
	" FROM cordon_replay r LEFT JOIN cordon_owner o ON o.id = r.owner"
	" WHERE ($1::text IS NULL OR r.app = $1) AND ($2::text IS NULL OR r.tenant = $2)"
	" AND ($3::text IS NULL OR r.\"user\" = $3) AND ($4::text IS NULL OR r.tool = $4)"
	" AND ($5::text IS NULL OR r.message_id = $5) AND ($6::text IS NULL OR r.state = $6)"
	" ORDER BY r.created, r.app, r.tenant, r.\"user\", r.tool, r.message_id";
static const char SQL_REPLAY_LOCK[] =
	"SELECT r.app, r.tenant, r.\"user\", r.tool, r.message_id, r.state, r.params_sha256, r.exec_id, r.response,"
	" r.created, r.updated, r.owner_pid, r.owner, o.boot, o.pid, o.start, o.pidns, o.expires > clock_timestamp()"
	" FROM cordon_replay r LEFT JOIN cordon_owner o ON o.id = r.owner"
	" WHERE r.app = $1 AND r.tenant = $2 AND r.\"user\" = $3 AND r.tool = $4 AND r.message_id = $5"
	" FOR UPDATE OF r";
static const char SQL_REPLAY_FORGET[] =
	"DELETE FROM cordon_replay WHERE app = $1 AND tenant = $2 AND \"user\" = $3 AND tool = $4 AND message_id = $5";
static const char SQL_FORGET_LOG_PUT[] =
	"INSERT INTO cordon_replay_forgotten (time, uid, app, tenant, \"user\", tool, message_id, state, exec_id,"
	" params_sha256, response, forced, reason) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)";
static const char SQL_FORGET_LOG_LIST[] =
	"SELECT time, uid, app, tenant, \"user\", tool, message_id, state, exec_id, forced, reason"
	" FROM cordon_replay_forgotten ORDER BY id";
static const char SQL_COUNT_RECORDS[] =
	"SELECT count(*), count(*) FILTER (WHERE state = 'pending') FROM cordon_replay";

struct ledger_pg {
	const struct pq_api *pq; /* libpq, loaded by the first open */
	PGconn *conn;
	/* "PostgreSQL at HOST:PORT/DB", for errors: never the password. */
	char name[256];
	char id[LEDGER_ID_HEX + 1];
	pthread_mutex_t mu;
	struct ledger_owner self;
	char hostname[256];
	char owner[24]; /* our cordon_owner id, as text */
	pid_t opener;
	char pruned_day[16];
	/* The renewal thread, and the pipe that stops it. */
	pthread_t renewer;
	PGconn *renew_conn;
	int renewing;
	int stop[2];
};

/* ---- connection -------------------------------------------------------- */

/* err <- what, the server's name and the first line of libpq's message. */
static int pg_err(struct ledger_pg *l, const char *what, const PGresult *res, char *err, size_t n)
{
	const struct pq_api *pq = l->pq;
	const char *msg = res != NULL ? pq->PQresultErrorMessage(res) : "";
	int len;

	if (msg == NULL || msg[0] == '\0')
		msg = pq->PQerrorMessage(l->conn);
	len = (int)strcspn(msg, "\n");
	ledger_errf(err, n, "ledger: %s: %s: %.*s", l->name, what, len, msg);
	return -1;
}

/* A connection that works: the one we have, or a new one when the server
 * dropped it (restarted, the backend was killed).
 *
 * A server that went away while we were idle has closed the socket, but
 * libpq only learns that when it next reads.  Reading what is pending
 * first (PQconsumeInput never blocks: libpq's socket is non-blocking)
 * finds the close before a statement is sent, so the call reconnects
 * instead of failing; a warm sandbox's supervisor opened its ledger long
 * before its first call, and without this every one of them failed one
 * call after a server restart.  A connection lost during a statement
 * still fails that call: whether it committed is unknown.  Under the
 * mutex. */
static int pg_conn_ready(const struct pq_api *pq, PGconn *c)
{
	struct pollfd p = { .events = POLLIN };
	int i;

	/* A closing server sends its FATAL message, then closes: one read
	 * may return the message and only the next one the end. */
	for (i = 0; i < 4 && pq->PQstatus(c) == CONNECTION_OK; i++) {
		p.fd = pq->PQsocket(c);
		if (p.fd < 0 || poll(&p, 1, 0) <= 0)
			return 1;
		pq->PQconsumeInput(c);
	}
	if (pq->PQstatus(c) == CONNECTION_OK)
		return 1;
	pq->PQreset(c);
	return pq->PQstatus(c) == CONNECTION_OK;
}

static int pg_ready(struct ledger_pg *l, char *err, size_t n)
{
	if (getpid() != l->opener) {
		ledger_errf(err, n, "ledger: used in a child process; open the ledger there");
		return -1;
	}
	if (!pg_conn_ready(l->pq, l->conn))
		return pg_err(l, "cannot connect", NULL, err, n);
	return 0;
}

/* Runs sql with texts v[0..count) as $1..; NULL entries are SQL NULL.
 * want: the status a success has.  Returns the result (the caller clears
 * it), or NULL with err (the result cleared). */
static PGresult *pg_exec(struct ledger_pg *l, const char *sql, const char *const *v, int count,
			 ExecStatusType want, const char *what, char *err, size_t n)
{
	const struct pq_api *pq = l->pq;
	PGresult *res = pq->PQexecParams(l->conn, sql, count, NULL, v, NULL, NULL, 0);

	if (res == NULL || pq->PQresultStatus(res) != want) {
		pg_err(l, what, res, err, n);
		pq->PQclear(res);
		return NULL;
	}
	return res;
}

/* A statement whose rows do not matter. */
static int pg_run(struct ledger_pg *l, const char *sql, const char *const *v, int count, const char *what,
		  char *err, size_t n)
{
	const struct pq_api *pq = l->pq;
	PGresult *res = pg_exec(l, sql, v, count, PGRES_COMMAND_OK, what, err, n);

	pq->PQclear(res);
	return res != NULL ? 0 : -1;
}

/* A migration step: several statements, no parameters (the simple
 * query protocol, which the extended one behind pg_exec() is not). */
static int pg_script(struct ledger_pg *l, const char *sql, char *err, size_t n)
{
	const struct pq_api *pq = l->pq;
	PGresult *res = pq->PQexec(l->conn, sql);
	int rc = 0;

	if (res == NULL || pq->PQresultStatus(res) != PGRES_COMMAND_OK)
		rc = pg_err(l, "migrating the schema", res, err, n);
	pq->PQclear(res);
	return rc;
}

static int pg_tx_end(struct ledger_pg *l, int ok, char *err, size_t n)
{
	const struct pq_api *pq = l->pq;
	/* A failed COMMIT rolls back; a lost connection has nothing left. */
	if (pq->PQstatus(l->conn) != CONNECTION_OK)
		return ok ? pg_err(l, "the connection was lost", NULL, err, n) : -1;
	if (ok)
		return pg_run(l, "COMMIT", NULL, 0, "committing", err, n);
	pg_run(l, "ROLLBACK", NULL, 0, "rolling back", NULL, 0);
	return -1;
}

static void fmt_i64(char *buf, size_t n, int64_t v)
{
	snprintf(buf, n, "%" PRId64, v);
}

static int64_t col_i64(const struct pq_api *pq, const PGresult *res, int row, int col)
{
	return pq->PQgetisnull(res, row, col) ? 0 : strtoll(pq->PQgetvalue(res, row, col), NULL, 10);
}

/* ---- schema, identity, owner ------------------------------------------ */

/* Migrates to PG_VERSION in one transaction under an advisory lock, so
 * processes opening a fresh database at once take turns and the second
 * finds the work done; then makes sure the ledger has its id. */
static int pg_migrate(struct ledger_pg *l, char *err, size_t n)
{
	const struct pq_api *pq = l->pq;
	struct ledger_id fresh;
	const char *v[1];
	PGresult *res = NULL;
	char set[16];
	int version, ok = 0, i;

	if (pg_run(l, "BEGIN", NULL, 0, "beginning the migration", err, n) != 0)
		return -1;
	res = pg_exec(l, "SELECT pg_advisory_xact_lock(" LEDGER_PG_LOCK ")", NULL, 0, PGRES_TUPLES_OK,
		      "locking the schema", err, n);
	if (res == NULL)
		goto out;
	pq->PQclear(res);
	res = NULL;
	if (pg_run(l, SQL_SCHEMA_MAKE, NULL, 0, "making the schema table", err, n) != 0)
		goto out;
	res = pg_exec(l, SQL_SCHEMA_GET, NULL, 0, PGRES_TUPLES_OK, "reading the schema version", err, n);
	if (res == NULL)
		goto out;
	version = (int)col_i64(pq, res, 0, 0);
	if (version > PG_VERSION) {
		ledger_errf(err, n, "ledger: %s: schema version %d is newer than this cordon knows (%d): upgrade cordon",
			    l->name, version, PG_VERSION);
		goto out;
	}
	for (i = version; i < PG_VERSION; i++)
		if (pg_script(l, pg_steps[i], err, n) != 0)
			goto out;
	snprintf(set, sizeof(set), "%d", PG_VERSION);
	v[0] = set;
	if (version < PG_VERSION && (pg_run(l, SQL_SCHEMA_CLEAR, NULL, 0, "recording the schema version", err, n) != 0 ||
				     pg_run(l, SQL_SCHEMA_SET, v, 1, "recording the schema version", err, n) != 0))
		goto out;
	if (ledger_id_new(&fresh, PG_VERSION, err, n) != 0)
		goto out;
	v[0] = fresh.hex;
	if (pg_run(l, SQL_ID_PUT, v, 1, "writing the ledger id", err, n) != 0)
		goto out;
	pq->PQclear(res);
	res = pg_exec(l, SQL_ID_GET, NULL, 0, PGRES_TUPLES_OK, "reading the ledger id", err, n);
	if (res == NULL)
		goto out;
	if (pq->PQntuples(res) != 1 || !ledger_id_ok(pq->PQgetvalue(res, 0, 0))) {
		ledger_errf(err, n, "ledger: %s: the ledger id in cordon_meta is missing or malformed", l->name);
		goto out;
	}
	snprintf(l->id, sizeof(l->id), "%s", pq->PQgetvalue(res, 0, 0));
	ok = 1;
out:
	pq->PQclear(res);
	return pg_tx_end(l, ok, err, n) == 0 && ok ? 0 : -1;
}

/* The owner row's fields after its id, as text: hostname, boot, pid,
 * start, pidns. */
static void owner_texts(struct ledger_pg *l, char num[3][24], const char **v)
{
	fmt_i64(num[0], sizeof(num[0]), l->self.pid);
	fmt_i64(num[1], sizeof(num[1]), l->self.start);
	fmt_i64(num[2], sizeof(num[2]), l->self.pidns);
	v[0] = l->hostname;
	v[1] = l->self.boot;
	v[2] = num[0];
	v[3] = num[1];
	v[4] = num[2];
}

static int pg_owner_register(struct ledger_pg *l, char *err, size_t n)
{
	const struct pq_api *pq = l->pq;
	char num[3][24], lease[16];
	const char *v[6];
	PGresult *res;

	owner_texts(l, num, v);
	snprintf(lease, sizeof(lease), "%d", LEDGER_PG_LEASE_S);
	v[5] = lease;
	res = pg_exec(l, SQL_OWNER_NEW, v, 6, PGRES_TUPLES_OK, "registering this process", err, n);
	if (res == NULL)
		return -1;
	snprintf(l->owner, sizeof(l->owner), "%s", pq->PQgetvalue(res, 0, 0));
	pq->PQclear(res);
	return pg_run(l, SQL_OWNER_PRUNE, NULL, 0, "pruning old owners", err, n);
}

/* Renews the lease every LEDGER_PG_RENEW_S until stop[0] is readable, on
 * a connection of its own: renewal never waits behind a call's
 * transaction, and a call never finds its connection reset under it.  A
 * failed renewal is tried again at the next tick (with a new connection
 * if the server dropped this one): if the server stays away past the
 * lease, other hosts judge our pending records in doubt, which is what
 * they are. */
static void *pg_renewer(void *arg)
{
	struct ledger_pg *l = arg;
	const struct pq_api *pq = l->pq;
	struct pollfd pfd = { .fd = l->stop[0], .events = POLLIN };
	char num[3][24], lease[16];
	const char *v[7];
	PGresult *res;
	int r;

	owner_texts(l, num, v + 1);
	snprintf(lease, sizeof(lease), "%d", LEDGER_PG_LEASE_S);
	v[0] = l->owner;
	v[6] = lease;
	for (;;) {
		r = poll(&pfd, 1, LEDGER_PG_RENEW_S * 1000);
		if (r > 0 || (r < 0 && errno != EINTR))
			break;
		if (r < 0)
			continue;
		pg_conn_ready(pq, l->renew_conn);
		res = pq->PQexecParams(l->renew_conn, SQL_OWNER_RENEW, 7, NULL, v, NULL, NULL, 0);
		pq->PQclear(res);
	}
	return NULL;
}

/* ---- open, close, check ------------------------------------------------ */

static void pg_notice_drop(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

/* Connects to url: a bad URL and an unreachable server are errors that
 * name the server, never the password. */
static PGconn *pg_connect(const struct pq_api *pq, const char *url, char *name, size_t nn, char *err, size_t n)
{
	const char *keys[] = { "connect_timeout", "keepalives_idle", "keepalives_interval", "keepalives_count",
			       "tcp_user_timeout", "application_name", "dbname", NULL };
	const char *vals[] = { LEDGER_PG_CONNECT_S, "10", "5", "3", "30000", "cordon-ledger", url, NULL };
	PQconninfoOption *opts;
	char *perr = NULL;
	PGconn *c;

	opts = pq->PQconninfoParse(url, &perr);
	if (opts == NULL) {
		ledger_errf(err, n, "ledger: bad PostgreSQL URL: %.*s", perr != NULL ? (int)strcspn(perr, "\n") : 0,
			    perr != NULL ? perr : "");
		pq->PQfreemem(perr);
		return NULL;
	}
	pq->PQconninfoFree(opts);
	/* Defaults first, then dbname expanded as the URL, whose own
	 * settings override them.  Over TCP a dead server or network is
	 * noticed within about 30 s (keepalives, tcp_user_timeout) rather
	 * than a call hanging with the handle's mutex held; a connection
	 * attempt gives up after LEDGER_PG_CONNECT_S. */
	c = pq->PQconnectdbParams(keys, vals, 1);
	if (c == NULL) {
		ledger_errf(err, n, "ledger: out of memory connecting to PostgreSQL");
		return NULL;
	}
	/* The server's notices ("already exists, skipping") are not ours to
	 * print: library code never writes to stderr. */
	pq->PQsetNoticeProcessor(c, pg_notice_drop, NULL);
	snprintf(name, nn, "PostgreSQL at %s:%s/%s", pq->PQhost(c) != NULL && pq->PQhost(c)[0] ? pq->PQhost(c) : "localhost",
		 pq->PQport(c) != NULL && pq->PQport(c)[0] ? pq->PQport(c) : "5432", pq->PQdb(c) != NULL ? pq->PQdb(c) : "?");
	if (pq->PQstatus(c) != CONNECTION_OK) {
		const char *m = pq->PQerrorMessage(c);

		ledger_errf(err, n, "ledger: %s: cannot connect: %.*s", name, (int)strcspn(m, "\n"), m);
		pq->PQfinish(c);
		return NULL;
	}
	return c;
}

int ledger_pg_open(const char *url, struct ledger_pg **out, char *err, size_t n)
{
	struct ledger_pg *l = NULL;

	*out = NULL;
	l = calloc(1, sizeof(*l));
	if (l == NULL) {
		ledger_errf(err, n, "ledger: out of memory");
		return -1;
	}
	l->stop[0] = l->stop[1] = -1;
	pthread_mutex_init(&l->mu, NULL);
	l->pq = pq_load(err, n);
	if (l->pq == NULL)
		goto fail;
	l->opener = getpid();
	if (ledger_owner_self(&l->self, err, n) != 0)
		goto fail;
	if (gethostname(l->hostname, sizeof(l->hostname) - 1) != 0)
		snprintf(l->hostname, sizeof(l->hostname), "?");
	l->conn = pg_connect(l->pq, url, l->name, sizeof(l->name), err, n);
	if (l->conn == NULL)
		goto fail;
	if (pg_migrate(l, err, n) != 0 || pg_owner_register(l, err, n) != 0)
		goto fail;
	if (pipe2(l->stop, O_CLOEXEC) != 0) {
		ledger_errf(err, n, "ledger: pipe: %s", strerror(errno));
		goto fail;
	}
	l->renew_conn = pg_connect(l->pq, url, l->name, sizeof(l->name), err, n);
	if (l->renew_conn == NULL)
		goto fail;
	if (pthread_create(&l->renewer, NULL, pg_renewer, l) != 0) {
		ledger_errf(err, n, "ledger: cannot start the lease renewal thread");
		goto fail;
	}
	l->renewing = 1;
	*out = l;
	return 0;
fail:
	ledger_pg_close(l);
	return -1;
}

void ledger_pg_close(struct ledger_pg *l)
{
	const struct pq_api *pq;
	const char *v[1];

	if (l == NULL)
		return;
	pq = l->pq;
	/* In a forked child the thread does not exist and the connections
	 * are the parent's: PQfinish would send the server a goodbye on the
	 * parent's sockets and end its sessions.  Only the memory goes. */
	if (getpid() != l->opener) {
		free(l);
		return;
	}
	if (l->renewing) {
		/* Closing the write end wakes the thread's poll. */
		close(l->stop[1]);
		l->stop[1] = -1;
		pthread_join(l->renewer, NULL);
	}
	/* A clean close ends the lease at once: our records that are still
	 * pending are in doubt from now on, not in 30 s. */
	if (l->conn != NULL && l->owner[0] != '\0' && pq->PQstatus(l->conn) == CONNECTION_OK) {
		v[0] = l->owner;
		pg_run(l, SQL_OWNER_DROP, v, 1, "ending the lease", NULL, 0);
	}
	if (l->stop[0] >= 0)
		close(l->stop[0]);
	if (l->stop[1] >= 0)
		close(l->stop[1]);
	if (pq != NULL) {
		pq->PQfinish(l->renew_conn);
		pq->PQfinish(l->conn);
	}
	pthread_mutex_destroy(&l->mu);
	free(l);
}

const char *ledger_pg_id(const struct ledger_pg *l)
{
	return l->id;
}

/* 1 when the server holds a ledger (its schema table), or when that
 * cannot be told (no libpq, unreachable, refused): opening it then says
 * what is wrong.  0 only when the database answers that there is none, so
 * a listing makes no schema where there was none. */
int ledger_pg_exists(const char *url)
{
	struct ledger_pg l = { 0 };
	PGresult *res = NULL;
	char err[16];
	int rc = 1;

	l.pq = pq_load(err, sizeof(err));
	if (l.pq == NULL)
		return 1;
	l.conn = pg_connect(l.pq, url, l.name, sizeof(l.name), err, sizeof(err));
	if (l.conn == NULL)
		return 1;
	res = pg_exec(&l, SQL_SCHEMA_PEEK, NULL, 0, PGRES_TUPLES_OK, "looking for the schema", NULL, 0);
	if (res != NULL && strcmp(l.pq->PQgetvalue(res, 0, 0), "f") == 0)
		rc = 0;
	l.pq->PQclear(res);
	l.pq->PQfinish(l.conn);
	return rc;
}

/* Looks without changing anything: no migration, no owner row. */
int ledger_pg_check(const char *url, ledger_finding_fn fn, void *arg, char *err, size_t n)
{
	struct ledger_pg l = { 0 };
	PGresult *res = NULL;
	char line[512];
	int rc = -1, version;
	const struct pq_api *pq;

	l.pq = pq_load(err, n);
	if (l.pq == NULL)
		return -1;
	pq = l.pq;
	l.conn = pg_connect(pq, url, l.name, sizeof(l.name), err, n);
	if (l.conn == NULL)
		return -1;
	res = pg_exec(&l, SQL_SCHEMA_PEEK, NULL, 0, PGRES_TUPLES_OK, "looking for the schema", err, n);
	if (res == NULL)
		goto out;
	if (strcmp(pq->PQgetvalue(res, 0, 0), "t") != 0) {
		ledger_errf(err, n, "ledger: %s: no ledger there (no cordon_schema table)", l.name);
		goto out;
	}
	pq->PQclear(res);
	res = pg_exec(&l, SQL_SCHEMA_GET, NULL, 0, PGRES_TUPLES_OK, "reading the schema version", err, n);
	if (res == NULL)
		goto out;
	version = (int)col_i64(pq, res, 0, 0);
	rc = 0;
	if (version != PG_VERSION) {
		snprintf(line, sizeof(line), "%s: schema version %d, this cordon writes %d%s", l.name, version,
			 PG_VERSION, version > PG_VERSION ? " (newer: upgrade cordon)" : " (migrated on next open)");
		fn(line, version > PG_VERSION, arg);
		rc = version > PG_VERSION;
		goto out;
	}
	pq->PQclear(res);
	res = pg_exec(&l, SQL_ID_GET, NULL, 0, PGRES_TUPLES_OK, "reading the ledger id", err, n);
	if (res == NULL) {
		rc = -1;
		goto out;
	}
	if (pq->PQntuples(res) != 1 || !ledger_id_ok(pq->PQgetvalue(res, 0, 0))) {
		snprintf(line, sizeof(line), "%s: the ledger id is missing or malformed", l.name);
		fn(line, 1, arg);
		rc = 1;
		goto out;
	}
	snprintf(line, sizeof(line), "ledger %s in %s (schema %d)", pq->PQgetvalue(res, 0, 0), l.name, version);
	fn(line, 0, arg);
	pq->PQclear(res);
	res = pg_exec(&l, SQL_COUNT_RECORDS, NULL, 0, PGRES_TUPLES_OK, "counting records", err, n);
	if (res == NULL) {
		rc = -1;
		goto out;
	}
	snprintf(line, sizeof(line), "%s replay records, %s pending", pq->PQgetvalue(res, 0, 0), pq->PQgetvalue(res, 0, 1));
	fn(line, 0, arg);
out:
	pq->PQclear(res);
	pq->PQfinish(l.conn);
	return rc;
}

/* ---- budgets ----------------------------------------------------------- */

/* Adds one to a counter; *calls is the count with this call. */
static int pg_count(struct ledger_pg *l, const char *sql, const char *const *v, int count, int64_t *calls,
		    char *err, size_t n)
{
	const struct pq_api *pq = l->pq;
	PGresult *res = pg_exec(l, sql, v, count, PGRES_TUPLES_OK, "counting the call", err, n);

	if (res == NULL)
		return -1;
	*calls = col_i64(pq, res, 0, 0);
	pq->PQclear(res);
	return 0;
}

static int pg_prune(struct ledger_pg *l, const struct ledger_call *c, int64_t now, char *err, size_t n)
{
	char before[24];
	const char *v[1];

	if (strcmp(l->pruned_day, c->day) == 0)
		return 0;
	v[0] = c->day;
	if (pg_run(l, SQL_PRUNE_DAY, v, 1, "pruning day counters", err, n) != 0)
		return -1;
	fmt_i64(before, sizeof(before), now - (int64_t)LEDGER_KEEP_DAYS * 86400);
	v[0] = before;
	if (pg_run(l, SQL_PRUNE_RUN, v, 1, "pruning run counters", err, n) != 0)
		return -1;
	snprintf(l->pruned_day, sizeof(l->pruned_day), "%s", c->day);
	return 0;
}

enum ledger_budget ledger_pg_budget_take(struct ledger_pg *l, const struct ledger_call *c, uint32_t max_run,
					 uint32_t max_day, char *err, size_t n)
{
	enum ledger_budget res = LEDGER_BUDGET_ERROR;
	int64_t now = (int64_t)time(NULL), run = 0, day = 0;
	char created[24];
	const char *run_key[3], *day_key[5];
	int ok = 0;

	if (!ledger_arg_call(l, c, err, n))
		return LEDGER_BUDGET_ERROR;
	if (!ledger_arg_id(c->user, 1) || !ledger_arg_day(c->day)) {
		ledger_errf(err, n, "ledger: the call needs a user (\"\" for none) and a day as YYYY-MM-DD");
		return LEDGER_BUDGET_ERROR;
	}
	if (max_run == 0 && max_day == 0)
		return LEDGER_BUDGET_OK;
	fmt_i64(created, sizeof(created), now);
	run_key[0] = c->exec_id;
	run_key[1] = c->tool;
	run_key[2] = created;
	day_key[0] = c->app;
	day_key[1] = c->tenant;
	day_key[2] = c->user;
	day_key[3] = c->tool;
	day_key[4] = c->day;
	pthread_mutex_lock(&l->mu);
	if (pg_ready(l, err, n) != 0 || pg_run(l, "BEGIN", NULL, 0, "beginning", err, n) != 0)
		goto unlock;
	/* Count first, judge after: the upsert's row lock orders racing
	 * takers (run row before day row, always, so two never deadlock),
	 * and an over-limit count is rolled back, so a refusal counts
	 * nothing.  Both spent answers RUN, which is judged first. */
	if (max_run && pg_count(l, SQL_RUN_ADD, run_key, 3, &run, err, n) != 0)
		goto out;
	if (max_run && run > max_run) {
		res = LEDGER_BUDGET_RUN;
		goto out;
	}
	if (max_day && pg_count(l, SQL_DAY_ADD, day_key, 5, &day, err, n) != 0)
		goto out;
	if (max_day && day > max_day) {
		res = LEDGER_BUDGET_DAY;
		goto out;
	}
	if (pg_prune(l, c, now, err, n) != 0)
		goto out;
	ok = 1;
	res = LEDGER_BUDGET_OK;
out:
	if (pg_tx_end(l, ok, err, n) != 0 && ok)
		res = LEDGER_BUDGET_ERROR;
unlock:
	pthread_mutex_unlock(&l->mu);
	return res;
}

int ledger_pg_run_end(struct ledger_pg *l, const char *exec_id, char *err, size_t n)
{
	int rc = -1;

	if (l == NULL || !ledger_arg_id(exec_id, 0)) {
		ledger_errf(err, n, "ledger: run_end needs a ledger and a non-empty exec_id");
		return -1;
	}
	pthread_mutex_lock(&l->mu);
	if (pg_ready(l, err, n) == 0)
		rc = pg_run(l, SQL_RUN_END, &exec_id, 1, "dropping the run's counters", err, n);
	pthread_mutex_unlock(&l->mu);
	return rc;
}

/* ---- replay ------------------------------------------------------------ */

/* Is the owner of the pending record in row `row` (columns from `at`:
 * owner id, boot, pid, start, pidns, lease live) still running, as seen
 * from l?  Ours: alive.  No owner row or an expired lease: gone.  On our
 * boot the process itself answers (a crash is known at once, and a pid
 * from another namespace cannot be judged); elsewhere the live lease
 * does. */
static enum owner_liveness pg_owner_judge(struct ledger_pg *l, const PGresult *res, int row, int at)
{
	const struct pq_api *pq = l->pq;
	struct ledger_owner o;

	if (strcmp(pq->PQgetvalue(res, row, at), l->owner) == 0)
		return OWNER_ALIVE;
	if (pq->PQgetisnull(res, row, at + 1) || strcmp(pq->PQgetvalue(res, row, at + 5), "t") != 0)
		return OWNER_GONE;
	if (l->self.boot[0] == '\0' || strcmp(pq->PQgetvalue(res, row, at + 1), l->self.boot) != 0)
		return OWNER_ALIVE;
	memset(&o, 0, sizeof(o));
	snprintf(o.boot, sizeof(o.boot), "%s", pq->PQgetvalue(res, row, at + 1));
	o.pid = col_i64(pq, res, row, at + 2);
	o.start = col_i64(pq, res, row, at + 3);
	o.pidns = col_i64(pq, res, row, at + 4);
	return ledger_owner_check(&l->self, &o);
}

/* One look (ledger_replay_try_fn), holding the mutex: write a pending
 * record, or read the one there.  *wait: pending under an owner that may
 * still finish, or gone between the two statements (look again). */
static enum ledger_replay pg_replay_look(struct ledger_pg *l, const struct ledger_call *c, const char *message_id,
					 const char *digest, char **response, int *wait, char *err, size_t n)
{
	const struct pq_api *pq = l->pq;
	char pid[24], now[24];
	const char *v[10] = { c->app, c->tenant, c->user, c->tool, message_id, digest, l->owner, pid, c->exec_id, now };
	enum ledger_replay res = LEDGER_REPLAY_ERROR;
	PGresult *r = NULL;

	*wait = 0;
	fmt_i64(pid, sizeof(pid), l->self.pid);
	fmt_i64(now, sizeof(now), (int64_t)time(NULL));
	if (pg_ready(l, err, n) != 0)
		return LEDGER_REPLAY_ERROR;
	/* One statement, its own transaction: RUN only once the pending
	 * record is committed. */
	r = pg_exec(l, SQL_REPLAY_PUT, v, 10, PGRES_TUPLES_OK, "writing the pending record", err, n);
	if (r == NULL)
		return LEDGER_REPLAY_ERROR;
	if (pq->PQntuples(r) == 1) {
		res = LEDGER_REPLAY_RUN;
		goto out;
	}
	pq->PQclear(r);
	r = pg_exec(l, SQL_REPLAY_GET, v, 5, PGRES_TUPLES_OK, "reading the replay record", err, n);
	if (r == NULL)
		goto out;
	if (pq->PQntuples(r) != 1) {
		*wait = 1; /* forgotten or abandoned since: try again */
		res = LEDGER_REPLAY_IN_DOUBT;
	} else if (strcmp(pq->PQgetvalue(r, 0, 0), digest) != 0) {
		res = LEDGER_REPLAY_CONFLICT;
	} else if (strcmp(pq->PQgetvalue(r, 0, 1), "done") == 0) {
		*response = strdup(pq->PQgetvalue(r, 0, 2));
		if (*response == NULL)
			ledger_errf(err, n, "ledger: out of memory copying a recorded response");
		res = *response != NULL ? LEDGER_REPLAY_RECORDED : LEDGER_REPLAY_ERROR;
	} else {
		*wait = pg_owner_judge(l, r, 0, 3) != OWNER_GONE;
		res = LEDGER_REPLAY_IN_DOUBT;
	}
out:
	pq->PQclear(r);
	return res;
}

static enum ledger_replay pg_replay_try(void *arg, const struct ledger_call *c, const char *message_id,
					const char *digest, char **response, int *wait, char *err, size_t n)
{
	struct ledger_pg *l = arg;
	enum ledger_replay res;

	pthread_mutex_lock(&l->mu);
	res = pg_replay_look(l, c, message_id, digest, response, wait, err, n);
	pthread_mutex_unlock(&l->mu);
	return res;
}

enum ledger_replay ledger_pg_replay_begin(struct ledger_pg *l, const struct ledger_call *c, const char *message_id,
					  const char *params_sha256, uint64_t wait_ms, int cancel_fd, char **response,
					  char *err, size_t n)
{
	return ledger_replay_loop(l, pg_replay_try, c, message_id, params_sha256, wait_ms, cancel_fd, response, err,
				  n);
}

/* finish (response set) or abandon (NULL), only by the owner. */
int ledger_pg_replay_close(struct ledger_pg *l, const struct ledger_call *c, const char *message_id,
			   const char *response, char *err, size_t n)
{
	const struct pq_api *pq = l != NULL ? l->pq : NULL;
	char now[24];
	const char *v[8] = { NULL };
	PGresult *r = NULL;
	int rc = -1;

	if (!ledger_arg_call(l, c, err, n))
		return -1;
	if (!ledger_arg_id(message_id, 0) || !ledger_arg_id(c->user, 1)) {
		ledger_errf(err, n, "ledger: finish and abandon need a message id and a user (\"\" for none)");
		return -1;
	}
	fmt_i64(now, sizeof(now), (int64_t)time(NULL));
	v[0] = c->app;
	v[1] = c->tenant;
	v[2] = c->user;
	v[3] = c->tool;
	v[4] = message_id;
	if (response != NULL) {
		v[5] = response;
		v[6] = l->owner;
		v[7] = now;
	} else {
		v[5] = l->owner;
	}
	pthread_mutex_lock(&l->mu);
	if (pg_ready(l, err, n) != 0)
		goto out;
	r = pg_exec(l, response != NULL ? SQL_REPLAY_DONE : SQL_REPLAY_DROP, v, response != NULL ? 8 : 6,
		    PGRES_COMMAND_OK, "recording the response", err, n);
	if (r == NULL)
		goto out;
	if (strcmp(pq->PQcmdTuples(r), "1") != 0) {
		ledger_errf(err, n,
			    "ledger: %s/%s message %s (tenant \"%s\") has no pending record owned by this process",
			    c->app, c->tool, message_id, c->tenant);
		goto out;
	}
	rc = 0;
out:
	pq->PQclear(r);
	pthread_mutex_unlock(&l->mu);
	return rc;
}

/* ---- by hand ----------------------------------------------------------- */

/* Row i of a SQL_REPLAY_LIST / SQL_REPLAY_LOCK result as a record. */
static void pg_record(struct ledger_pg *l, PGresult *res, int i, struct ledger_record *r)
{
	const struct pq_api *pq = l->pq;
	memset(r, 0, sizeof(*r));
	r->app = pq->PQgetvalue(res, i, 0);
	r->tenant = pq->PQgetvalue(res, i, 1);
	r->user = pq->PQgetvalue(res, i, 2);
	r->tool = pq->PQgetvalue(res, i, 3);
	r->message_id = pq->PQgetvalue(res, i, 4);
	r->state = pq->PQgetvalue(res, i, 5);
	r->params_sha256 = pq->PQgetvalue(res, i, 6);
	r->exec_id = pq->PQgetvalue(res, i, 7);
	r->response = pq->PQgetisnull(res, i, 8) ? NULL : pq->PQgetvalue(res, i, 8);
	r->created = col_i64(pq, res, i, 9);
	r->updated = col_i64(pq, res, i, 10);
	r->owner_pid = col_i64(pq, res, i, 11);
	if (strcmp(r->state, "pending") != 0)
		return;
	switch (pg_owner_judge(l, res, i, 12)) {
	case OWNER_GONE:
		r->owner = LEDGER_OWNER_GONE;
		break;
	case OWNER_ALIVE:
		r->owner = LEDGER_OWNER_ALIVE;
		break;
	default:
		r->owner = LEDGER_OWNER_UNKNOWN;
		break;
	}
}

int ledger_pg_replay_list(struct ledger_pg *l, const struct ledger_filter *f, ledger_record_fn fn, void *arg,
			  char *err, size_t n)
{
	const struct pq_api *pq = l != NULL ? l->pq : NULL;
	const struct ledger_filter any = { 0 };
	struct ledger_record r;
	PGresult *res = NULL;
	int in_doubt, i, stop = 0;

	if (l == NULL || fn == NULL) {
		ledger_errf(err, n, "ledger: list needs a ledger and a callback");
		return -1;
	}
	if (f == NULL)
		f = &any;
	if (!ledger_arg_filter(f, err, n))
		return -1;
	in_doubt = f->state != NULL && strcmp(f->state, "in_doubt") == 0;
	{
		const char *v[6] = { f->app, f->tenant, f->user, f->tool, f->message_id,
				     in_doubt ? "pending" : f->state };

		pthread_mutex_lock(&l->mu);
		if (pg_ready(l, err, n) == 0)
			res = pg_exec(l, SQL_REPLAY_LIST, v, 6, PGRES_TUPLES_OK, "listing replay records", err, n);
		pthread_mutex_unlock(&l->mu);
	}
	if (res == NULL)
		return -1;
	/* The whole listing is one snapshot in memory: the callback (a
	 * pager) holds no lock and no transaction. */
	for (i = 0; i < pq->PQntuples(res) && stop == 0; i++) {
		pg_record(l, res, i, &r);
		if (in_doubt && r.owner != LEDGER_OWNER_GONE)
			continue;
		stop = fn(&r, arg);
	}
	pq->PQclear(res);
	return stop;
}

enum ledger_forget ledger_pg_replay_forget(struct ledger_pg *l, const struct ledger_filter *key, const char *reason,
					   int force, uint32_t uid, char *prev, size_t pn, char *err, size_t n)
{
	const struct pq_api *pq = l != NULL ? l->pq : NULL;
	enum ledger_forget out = LEDGER_FORGET_ERROR;
	struct ledger_record r;
	PGresult *res = NULL;
	char now[24], uids[24];
	int ok = 0;

	if (l == NULL || key == NULL || key->app == NULL || key->tenant == NULL || key->user == NULL ||
	    key->tool == NULL || key->message_id == NULL || reason == NULL || reason[0] == '\0') {
		ledger_errf(err, n, "ledger: forget needs every key field and a reason");
		return LEDGER_FORGET_ERROR;
	}
	if (!ledger_arg_filter(key, err, n))
		return LEDGER_FORGET_ERROR;
	fmt_i64(now, sizeof(now), (int64_t)time(NULL));
	fmt_i64(uids, sizeof(uids), uid);
	pthread_mutex_lock(&l->mu);
	if (pg_ready(l, err, n) != 0 || pg_run(l, "BEGIN", NULL, 0, "beginning", err, n) != 0)
		goto unlock;
	{
		const char *k[5] = { key->app, key->tenant, key->user, key->tool, key->message_id };

		res = pg_exec(l, SQL_REPLAY_LOCK, k, 5, PGRES_TUPLES_OK, "reading the record", err, n);
		if (res == NULL)
			goto out;
		if (pq->PQntuples(res) != 1) {
			out = LEDGER_FORGET_NOT_FOUND;
			goto out;
		}
		pg_record(l, res, 0, &r);
		if (prev != NULL)
			snprintf(prev, pn, "%s", r.state);
		if (strcmp(r.state, "pending") == 0 && r.owner != LEDGER_OWNER_GONE && !force) {
			out = LEDGER_FORGET_OWNER_ALIVE;
			goto out;
		}
		if (pg_run(l, SQL_REPLAY_FORGET, k, 5, "deleting the record", err, n) != 0)
			goto out;
	}
	{
		const char *v[13] = { now, uids, r.app, r.tenant, r.user, r.tool, r.message_id, r.state,
				      r.exec_id, r.params_sha256, r.response, force ? "t" : "f", reason };

		if (pg_run(l, SQL_FORGET_LOG_PUT, v, 13, "writing the forget log", err, n) != 0)
			goto out;
	}
	ok = 1;
	out = LEDGER_FORGOT;
out:
	pq->PQclear(res);
	if (pg_tx_end(l, ok, err, n) != 0 && ok)
		out = LEDGER_FORGET_ERROR;
unlock:
	pthread_mutex_unlock(&l->mu);
	return out;
}

int ledger_pg_forget_log(struct ledger_pg *l, ledger_forgotten_fn fn, void *arg, char *err, size_t n)
{
	const struct pq_api *pq = l != NULL ? l->pq : NULL;
	struct ledger_forgotten r;
	PGresult *res = NULL;
	int i, stop = 0;

	if (l == NULL || fn == NULL) {
		ledger_errf(err, n, "ledger: the forget log needs a ledger and a callback");
		return -1;
	}
	pthread_mutex_lock(&l->mu);
	if (pg_ready(l, err, n) == 0)
		res = pg_exec(l, SQL_FORGET_LOG_LIST, NULL, 0, PGRES_TUPLES_OK, "reading the forget log", err, n);
	pthread_mutex_unlock(&l->mu);
	if (res == NULL)
		return -1;
	for (i = 0; i < pq->PQntuples(res) && stop == 0; i++) {
		memset(&r, 0, sizeof(r));
		r.time = col_i64(pq, res, i, 0);
		r.uid = col_i64(pq, res, i, 1);
		r.app = pq->PQgetvalue(res, i, 2);
		r.tenant = pq->PQgetvalue(res, i, 3);
		r.user = pq->PQgetvalue(res, i, 4);
		r.tool = pq->PQgetvalue(res, i, 5);
		r.message_id = pq->PQgetvalue(res, i, 6);
		r.state = pq->PQgetvalue(res, i, 7);
		r.exec_id = pq->PQgetvalue(res, i, 8);
		r.forced = strcmp(pq->PQgetvalue(res, i, 9), "t") == 0;
		r.reason = pq->PQgetvalue(res, i, 10);
		stop = fn(&r, arg);
	}
	pq->PQclear(res);
	return stop;
}
