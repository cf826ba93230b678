/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_ledger.c - the ledger (runtime/ledger/): budgets counted exactly,
 * replay records that run a side effect at most once across threads,
 * processes and crashes, tenants kept apart, schema migration and
 * refusal, many processes opening a fresh ledger at once, and a state
 * directory nobody else can swap.
 *
 * Run twice by make: on SQLite, and with CORDON_TEST_LEDGER_URL set (a
 * private server from tests/lib/pgtmp, whose directory is in
 * CORDON_TEST_PGTMP) on PostgreSQL.  The semantic tests run on both;
 * file identity, WAL and rotted rows are SQLite's alone, the lease,
 * schema refusal, a restarted server and a killed connection are
 * PostgreSQL's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>
#include <postgresql/libpq-fe.h>

#include "runtime/ledger/ledger.h"

struct fx {
	char tmp[64];
	char state[128];
	char db[160];
	struct ledger *l;
};

/* The PostgreSQL run's server (CORDON_TEST_LEDGER_URL), NULL on SQLite. */
static const char *pg_url;

/* Where the fixture's ledger lives: the server, or its state directory. */
static const char *where(const struct fx *f)
{
	return pg_url != NULL ? pg_url : f->state;
}

/* The test's own connection to the server, to look at and forge rows. */
static PGconn *pg_raw(void)
{
	PGconn *c = PQconnectdb(pg_url);

	if (PQstatus(c) != CONNECTION_OK)
		fail_msg("connecting to %s: %s", pg_url, PQerrorMessage(c));
	return c;
}

/* Runs sql with texts $1..; returns the first column of the first row as
 * a number (0 when there is none). */
static long long pg_raw_exec(PGconn *c, const char *sql, int count, const char *const *v)
{
	PGresult *res = PQexecParams(c, sql, count, NULL, v, NULL, NULL, 0);
	long long out = 0;

	if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK)
		fail_msg("%s: %s", sql, PQresultErrorMessage(res));
	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) > 0 && !PQgetisnull(res, 0, 0))
		out = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return out;
}

/* Every test starts from an empty database. */
static void pg_wipe(void)
{
	PGconn *c = pg_raw();

	pg_raw_exec(c, "SET client_min_messages = warning", 0, NULL);
	pg_raw_exec(c,
		    "DROP TABLE IF EXISTS cordon_schema, cordon_meta, cordon_owner, cordon_budget_run,"
		    " cordon_budget_day, cordon_replay, cordon_replay_forgotten",
		    0, NULL);
	PQfinish(c);
}

static const char DIG_A[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
static const char DIG_B[] = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int setup_dir(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return -1;
	snprintf(f->tmp, sizeof(f->tmp), "/tmp/test_ledger.XXXXXX");
	if (mkdtemp(f->tmp) == NULL) {
		free(f);
		return -1;
	}
	snprintf(f->state, sizeof(f->state), "%s/state", f->tmp);
	snprintf(f->db, sizeof(f->db), "%s/ledger.sqlite3", f->state);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	ledger_close(f->l);
	nftw(f->tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return 0;
}

static int setup_open(void **state)
{
	struct fx *f;
	char err[256];

	if (setup_dir(state) != 0)
		return -1;
	f = *state;
	if (pg_url != NULL)
		pg_wipe();
	if (ledger_open(where(f), &f->l, err, sizeof(err)) != 0) {
		fprintf(stderr, "ledger_open: %s\n", err);
		teardown(state); /* cmocka skips the teardown of a failed setup */
		return -1;
	}
	return 0;
}

static struct ledger_call call_of(const char *app, const char *tool, const char *user, const char *exec_id,
				  const char *day)
{
	struct ledger_call c = {.app = app, .tenant = "", .tool = tool, .user = user, .exec_id = exec_id, .day = day};

	return c;
}

static struct ledger_call call_in(const char *tenant, struct ledger_call c)
{
	c.tenant = tenant;
	return c;
}

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* The test's own connection, to look at and forge rows. */
static sqlite3 *raw_open(const char *path, int create)
{
	sqlite3 *db = NULL;
	int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);

	assert_int_equal(sqlite3_open_v2(path, &db, flags, NULL), SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	return db;
}

static void raw_exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg);
}

static int64_t raw_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int64_t v;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* A pid that was ours and is gone. */
static pid_t dead_pid(void)
{
	pid_t p = fork();

	assert_true(p >= 0);
	if (p == 0)
		_exit(0);
	assert_int_equal(waitpid(p, NULL, 0), p);
	return p;
}

/* ---- opening ---------------------------------------------------------- */

static void test_open_creates_private_wal(void **state)
{
	struct fx *f = *state;
	struct ledger *again = NULL;
	char err[256], slash[200];
	struct stat st;
	sqlite3 *db;

	assert_int_equal(stat(f->state, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(lstat(f->db, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_true(ledger_schema_version() >= 2);

	db = raw_open(f->db, 0);
	assert_int_equal(raw_int(db, "PRAGMA user_version"), ledger_schema_version());
	{
		sqlite3_stmt *st2 = NULL;
		assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st2, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_step(st2), SQLITE_ROW);
		assert_string_equal((const char *)sqlite3_column_text(st2, 0), "wal");
		sqlite3_finalize(st2);
	}
	sqlite3_close(db);

	/* A second handle on the same directory, named with a trailing
	 * slash, shares the data. */
	snprintf(slash, sizeof(slash), "%s//", f->state);
	assert_int_equal(ledger_open(slash, &again, err, sizeof(err)), 0);
	ledger_close(again);
}

static void test_open_refuses_links_and_strangers(void **state)
{
	struct fx *f = *state;
	struct ledger *l = NULL;
	char err[256], path[200], slash[220];
	struct stat st;
	int fd;

	/* the database is a symbolic link */
	assert_int_equal(mkdir(f->state, 0700), 0);
	snprintf(path, sizeof(path), "%s/elsewhere", f->tmp);
	fd = open(path, O_CREAT | O_WRONLY | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(symlink(path, f->db), 0);
	assert_int_equal(ledger_open(f->state, &l, err, sizeof(err)), -1);
	assert_null(l);
	assert_non_null(strstr(err, "symbolic link"));
	assert_non_null(strstr(err, "ledger.sqlite3"));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 0); /* the target was not touched */
	assert_int_equal(unlink(f->db), 0);

	/* the state directory is a symbolic link, with or without a slash */
	snprintf(path, sizeof(path), "%s/linked", f->tmp);
	assert_int_equal(symlink(f->state, path), 0);
	assert_int_equal(ledger_open(path, &l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "symbolic link"));
	snprintf(slash, sizeof(slash), "%s/", path);
	assert_int_equal(ledger_open(slash, &l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "symbolic link"));

	/* a database open to others */
	fd = open(f->db, O_CREAT | O_WRONLY | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(chmod(f->db, 0644), 0);
	assert_int_equal(ledger_open(f->state, &l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "0600"));
	assert_int_equal(chmod(f->db, 0600), 0);

	/* a directory others may write */
	assert_int_equal(chmod(f->state, 0770), 0);
	assert_int_equal(ledger_open(f->state, &l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "writable by group or others"));
	assert_int_equal(chmod(f->state, 0700), 0);

	/* files of another user: only root can make them here */
	if (geteuid() == 0) {
		assert_int_equal(chown(f->db, 65534, 65534), 0);
		assert_int_equal(ledger_open(f->state, &l, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "belongs to uid 65534"));
		assert_int_equal(chown(f->db, 0, 0), 0);
		assert_int_equal(chown(f->state, 65534, 65534), 0);
		assert_int_equal(ledger_open(f->state, &l, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "belongs to uid 65534"));
		assert_int_equal(chown(f->state, 0, 0), 0);
	}

	/* and with all of that put right it opens */
	assert_int_equal(ledger_open(f->state, &l, err, sizeof(err)), 0);
	ledger_close(l);
	assert_int_equal(ledger_open("", &l, err, sizeof(err)), -1);
	assert_int_equal(ledger_open(NULL, &l, err, sizeof(err)), -1);
}

/* The tables a v1 build wrote, spelled out here rather than taken from the
 * implementation, so a changed v1 or v2 step fails the migration tests. */
#define V1_TABLES \
	"CREATE TABLE budget_run (exec_id TEXT NOT NULL, tool TEXT NOT NULL, calls INTEGER NOT NULL," \
	" created INTEGER NOT NULL, PRIMARY KEY (exec_id, tool)) WITHOUT ROWID;" \
	"CREATE TABLE budget_day (app TEXT NOT NULL, user TEXT NOT NULL, tool TEXT NOT NULL," \
	" day TEXT NOT NULL, calls INTEGER NOT NULL, PRIMARY KEY (app, user, tool, day)) WITHOUT ROWID;" \
	"CREATE TABLE replay (app TEXT NOT NULL, tool TEXT NOT NULL, message_id TEXT NOT NULL," \
	" params_sha256 TEXT NOT NULL, state TEXT NOT NULL CHECK ((state = 'pending' AND response IS NULL)" \
	"  OR (state = 'done' AND response IS NOT NULL)), response TEXT, owner_pid INTEGER NOT NULL," \
	" owner_start INTEGER NOT NULL, exec_id TEXT NOT NULL, created INTEGER NOT NULL," \
	" updated INTEGER NOT NULL, PRIMARY KEY (app, tool, message_id)) WITHOUT ROWID;"

static const char V1_SCHEMA[] = V1_TABLES "PRAGMA user_version = 1;";

/* What a v2 build wrote: v1 and its one step. */
static const char V2_SCHEMA[] = V1_TABLES
	"ALTER TABLE replay ADD COLUMN owner_boot TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE replay ADD COLUMN owner_pidns INTEGER NOT NULL DEFAULT 0;"
	"CREATE INDEX budget_day_by_day ON budget_day (day);"
	"CREATE INDEX budget_run_by_created ON budget_run (created);"
	"PRAGMA user_version = 2;";

/* Writes an old ledger (schema, then rows) by hand, then opens it, which
 * migrates it. */
static void old_ledger_open(struct fx *f, const char *schema, const char *rows)
{
	char err[256];
	sqlite3 *db;

	assert_int_equal(mkdir(f->state, 0700), 0);
	db = raw_open(f->db, 1);
	raw_exec(db, schema);
	raw_exec(db, rows);
	sqlite3_close(db);
	assert_int_equal(chmod(f->db, 0600), 0);
	if (ledger_open(f->state, &f->l, err, sizeof(err)) != 0)
		fail_msg("migrating: %s", err);
}

/* The rows both old-ledger tests write mean what they meant, for c: ann's
 * day counter at 2 (of 3), m-done recorded, m-pending left by a dead owner. */
static void assert_old_rows_kept(struct fx *f, const struct ledger_call *c)
{
	char err[256], *resp = NULL;
	/* Replay records from before v3 name no user: they are user "". */
	struct ledger_call anon = *c, *rc = &anon;

	anon.user = "";
	assert_int_equal(ledger_budget_take(f->l, c, 0, 3, err, sizeof(err)), LEDGER_BUDGET_OK);
	assert_int_equal(ledger_budget_take(f->l, c, 0, 3, err, sizeof(err)), LEDGER_BUDGET_DAY);
	assert_int_equal(ledger_replay_begin(f->l, rc, "m-done", DIG_A, 0, -1, &resp, err, sizeof(err)),
			 LEDGER_REPLAY_RECORDED);
	assert_string_equal(resp, "{\"sent\":1}");
	free(resp);
	resp = NULL;
	assert_int_equal(ledger_replay_begin(f->l, rc, "m-pending", DIG_A, 2000, -1, &resp, err, sizeof(err)),
			 LEDGER_REPLAY_IN_DOUBT);
	assert_null(resp);
}

/* The v3 keys, read from the schema: (app, tenant, user, tool, message_id) and
 * (app, tenant, user, tool, day), and the prune indexes still there; the
 * forget log of v4 after them. */
static void assert_v3_schema(sqlite3 *db)
{
	assert_int_equal(raw_int(db, "PRAGMA user_version"), ledger_schema_version());
	assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'replay_forgotten'"), 1);
	assert_int_equal(raw_int(db, "SELECT group_concat(name, ',') = 'app,tenant,user,tool,message_id' FROM"
				     " (SELECT name FROM pragma_table_info('replay') WHERE pk > 0 ORDER BY pk)"),
			 1);
	assert_int_equal(raw_int(db, "SELECT group_concat(name, ',') = 'app,tenant,user,tool,day' FROM"
				     " (SELECT name FROM pragma_table_info('budget_day') WHERE pk > 0 ORDER BY pk)"),
			 1);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_master WHERE name IN"
				     " ('budget_day_by_day', 'budget_run_by_created')"),
			 2);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_master WHERE name LIKE '%_v3'"), 0);
}

static void test_migrates_v1(void **state)
{
	struct fx *f = *state;
	struct ledger_call c = call_of("cafe", "mail.send", "ann", "e1", "2024-05-01");
	char err[256], sql[512], *resp = NULL;
	sqlite3 *db;

	snprintf(sql, sizeof(sql),
		 "INSERT INTO budget_day VALUES ('cafe', 'ann', 'mail.send', '2024-05-01', 2);"
		 "INSERT INTO replay VALUES ('cafe', 'mail.send', 'm-done', '%s', 'done', '{\"sent\":1}', 1, 1, 'e0',"
		 " 0, 0), ('cafe', 'mail.send', 'm-pending', '%s', 'pending', NULL, %d, 1, 'e0', 0, 0)",
		 DIG_A, DIG_A, (int)dead_pid());
	old_ledger_open(f, V1_SCHEMA, sql);
	db = raw_open(f->db, 0);
	assert_int_equal(raw_int(db, "PRAGMA user_version"), ledger_schema_version());
	assert_int_equal(raw_int(db, "SELECT count(*) FROM pragma_table_info('replay') WHERE name = 'owner_boot'"), 1);
	assert_v3_schema(db);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM replay WHERE tenant = '' AND owner_boot = ''"), 2);
	sqlite3_close(db);

	assert_old_rows_kept(f, &c);
	/* and the new columns work */
	assert_int_equal(ledger_replay_begin(f->l, &c, "m-new", DIG_A, 0, -1, &resp, err, sizeof(err)), LEDGER_REPLAY_RUN);
	assert_int_equal(ledger_replay_finish(f->l, &c, "m-new", "ok", err, sizeof(err)), 0);
}

/* A v2 ledger with rows: the rebuild keeps every row and column, the rows
 * belong to tenant "" (written without isolation), and no other tenant
 * sees them. */
static void test_migrates_v2(void **state)
{
	struct fx *f = *state;
	struct ledger_call c = call_of("cafe", "mail.send", "ann", "e1", "2024-05-01");
	struct ledger_call acme = call_in("acme", c);
	struct ledger_call crashed = call_of("cafe", "mail.send", "ann", "crashed", "2024-05-01");
	char err[256], sql[1024], *resp = NULL;
	sqlite3 *db;

	/* the run counter is created now, or the first counting call would
	 * prune it */
	snprintf(sql, sizeof(sql),
		 "INSERT INTO budget_day VALUES ('cafe', 'ann', 'mail.send', '2024-05-01', 2),"
		 " ('cafe', 'bob', 'mail.send', '2024-05-01', 7);"
		 "INSERT INTO budget_run VALUES ('crashed', 'mail.send', 4, CAST(strftime('%%s', 'now') AS INTEGER));"
		 "INSERT INTO replay VALUES ('cafe', 'mail.send', 'm-done', '%s', 'done', '{\"sent\":1}', 1, 1, 'e0',"
		 " 10, 11, 'boot-x', 77), ('cafe', 'mail.send', 'm-pending', '%s', 'pending', NULL, %d, 1, 'e0',"
		 " 12, 12, '', 0)",
		 DIG_A, DIG_A, (int)dead_pid());
	old_ledger_open(f, V2_SCHEMA, sql);
	db = raw_open(f->db, 0);
	assert_v3_schema(db);
	/* every row and column came across, tenant '' */
	assert_int_equal(raw_int(db, "SELECT count(*) FROM budget_day WHERE tenant = ''"), 2);
	assert_int_equal(raw_int(db, "SELECT calls FROM budget_day WHERE user = 'bob'"), 7);
	assert_int_equal(raw_int(db, "SELECT calls FROM budget_run WHERE exec_id = 'crashed'"), 4);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM replay WHERE tenant = '' AND message_id = 'm-done'"
				     " AND state = 'done' AND owner_boot = 'boot-x' AND owner_pidns = 77"
				     " AND exec_id = 'e0' AND created = 10 AND updated = 11"),
			 1);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM replay"), 2);
	sqlite3_close(db);

	/* tenant '': the old rows mean what they meant */
	assert_old_rows_kept(f, &c);
	assert_int_equal(ledger_budget_take(f->l, &crashed, 5, 0, err, sizeof(err)), LEDGER_BUDGET_OK);
	assert_int_equal(ledger_budget_take(f->l, &crashed, 5, 0, err, sizeof(err)), LEDGER_BUDGET_RUN);
	/* another tenant sees none of them */
	assert_int_equal(ledger_budget_take(f->l, &acme, 0, 1, err, sizeof(err)), LEDGER_BUDGET_OK);
	assert_int_equal(ledger_replay_begin(f->l, &acme, "m-done", DIG_B, 0, -1, &resp, err, sizeof(err)),
			 LEDGER_REPLAY_RUN);
	assert_null(resp);
	assert_int_equal(ledger_replay_finish(f->l, &acme, "m-done", "acme's", err, sizeof(err)), 0);
}

static void test_refuses_newer_schema(void **state)
{
	struct fx *f = *state;
	char err[256], want[64];
	sqlite3 *db;

	ledger_close(f->l);
	f->l = NULL;
	db = raw_open(f->db, 0);
	snprintf(want, sizeof(want), "PRAGMA user_version = %d", ledger_schema_version() + 1);
	raw_exec(db, want);
	sqlite3_close(db);

	assert_int_equal(ledger_open(f->state, &f->l, err, sizeof(err)), -1);
	assert_null(f->l);
	assert_non_null(strstr(err, "newer"));
	snprintf(want, sizeof(want), "version %d", ledger_schema_version() + 1);
	assert_non_null(strstr(err, want));
	db = raw_open(f->db, 0);
	assert_int_equal(raw_int(db, "PRAGMA user_version"), ledger_schema_version() + 1);
	sqlite3_close(db);
}

/* ---- budgets ---------------------------------------------------------- */

static void test_budget_per_run(void **state)
{
	struct fx *f = *state;
	struct ledger_call c = call_of("cafe", "mail.send", "ann", "e1", "2024-05-01");
	struct ledger_call other_tool = call_of("cafe", "crm.get", "ann", "e1", "2024-05-01");
	struct ledger_call other_run = call_of("cafe", "mail.send", "ann", "e2", "2024-05-01");
	char err[256];
	int i;

	for (i = 0; i < 3; i++)
		assert_int_equal(ledger_budget_take(f->l, &c, 3, 0, err, sizeof(err)), LEDGER_BUDGET_OK);
	assert_int_equal(ledger_budget_take(f->l, &c, 3, 0, err, sizeof(err)), LEDGER_BUDGET_RUN);
	assert_int_equal(ledger_budget_take(f->l, &c, 3, 0, err, sizeof(err)), LEDGER_BUDGET_RUN);
	/* the refusals were not counted: one more fits under 4 */
	assert_int_equal(ledger_budget_take(f->l, &c, 4, 0, err, sizeof(err)), LEDGER_BUDGET_OK);
	assert_int_equal(ledger_budget_take(f->l, &c, 4, 0, err, sizeof(err)), LEDGER_BUDGET_RUN);
	/* another tool, another run: their own counters */
	assert_int_equal(ledger_budget_take(f->l, &other_tool, 1, 0, err, sizeof(err)), LEDGER_BUDGET_OK);
	assert_int_equal(ledger_budget_take(f->l, &other_tool, 1, 0, err, sizeof(err)), LEDGER_BUDGET_RUN);
	assert_int_equal(ledger_budget_take(f->l, &other_run, 1, 0, err, sizeof(err)), LEDGER_BUDGET_OK);
	/* the run ends: its counters go, the other run's stay */
	assert_int_equal(ledger_run_end(f->l, "e1", err, sizeof(err)), 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(ledger_budget_take(f->l, &c, 3, 0, err, sizeof(err)), LEDGER_BUDGET_OK);
	assert_int_equal(ledger_budget_take(f->l, &c, 3, 0, err, sizeof(err)), LEDGER_BUDGET_RUN);
	assert_int_equal(ledger_budget_take(f->l, &other_run, 1, 0, err, sizeof(err)), LEDGER_BUDGET_RUN);
	/* no budget at all: always OK */
	for (i = 0; i < 5; i++)
		assert_int_equal(ledger_budget_take(f->l, &c, 0, 0, err, sizeof(err)), LEDGER_BUDGET_OK);
}

static void test_budget_per_day(void **state)
{
	struct fx *f = *state;
	struct ledger_call r1 = call_of("cafe", "mail.send", "ann", "e1", "2024-05-01");
	struct ledger_call r2 = call_of("cafe", "mail.send", "ann", "e2", "2024-05-01");
	struct ledger_call bob = call_of("cafe", "mail.send", "bob", "e2", "2024-05-01");
	struct ledger_call nobody = call_of("cafe", "mail.send", "", "e2", "2024-05-01");
	struct ledger_call tomorrow = call_of("cafe", "mail.send", "ann", "e2", "2024-05-02");
	struct ledger_call tool = call_of("cafe", "crm.get", "ann", "e2", "2024-05-01");
	struct ledger_call app = call_of("shop", "mail.send", "ann", "e2", "2024-05-01");
	char err[256];

	/* the day's budget spans runs */
	assert_int_equal(ledger_budget_take(f->l, &r1, 0, 3, err, sizeof(err)), LEDGER_BUDGET_OK);
	assert_int_equal(ledger_budget_take(f->l, &r1, 0, 3, err, sizeof(err)), LEDGER_BUDGET_OK);
	assert_int_equal(ledger_run_end(f->l, "e1", err, sizeof(err)), 0);
	assert_int_equal(ledger_budget_take(f->l, &r2, 0, 3, err, sizeof(err)), LEDGER_BUDGET_OK);
	assert_int_equal(ledger_budget_take(f->l, &r2, 0, 3, err, sizeof(err)), LEDGER_BUDGET_DAY);
	assert_int_equal(ledger_budget_take(f->l, &r2, 0, 3, err, sizeof(err)), LEDGER_BUDGET_DAY);
	assert_int_equal(ledger_budget_take(f->l, &r2, 0, 4, err, sizeof(err)), LEDGER_BUDGET_OK);
	assert_int_equal(ledger_budget_take(f->l, &r2, 0, 4, err, sizeof(err)), LEDGER_BUDGET_DAY);
	/* other users, days, tools and apps are their own */
	assert_int_equal(ledger_budget_take(f->l, &bob, 0, 1, err, sizeof(err)), LEDGER_BUDGET_OK);
	assert_int_equal(ledger_budget_take(f->l, &bob, 0, 1, err, sizeof(err)), LEDGER_BUDGET_DAY);
	assert_int_equal(ledger_budget_take(f->l, &nobody, 0, 1, err, sizeof(err)), LEDGER_BUDGET_OK);
	assert_int_equal(ledger_budget_take(f->l, &tomorrow, 0, 1, err, sizeof(err)), LEDGER_BUDGET_OK);
	assert_int_equal(ledger_budget_take(f->l, &tool, 0, 1, err, sizeof(err)), LEDGER_BUDGET_OK);
	assert_int_equal(ledger_budget_take(f->l, &app, 0, 1, err, sizeof(err)), LEDGER_BUDGET_OK);
}

/* Regression: tenants sharing a state directory shared daily budgets when
 * their users had the same name. */
static void test_tenant_budget_isolated(void **state)
{
	struct fx *f = *state;
	struct ledger_call c = call_of("cafe", "mail.send", "ann", "e1", "2024-05-01");
	struct ledger_call acme = call_in("acme", c), globex = call_in("globex", c);
	char err[256];

	assert_int_equal(ledger_budget_take(f->l, &acme, 0, 2, err, sizeof(err)), LEDGER_BUDGET_OK);
	assert_int_equal(ledger_budget_take(f->l, &acme, 0, 2, err, sizeof(err)), LEDGER_BUDGET_OK);
	assert_int_equal(ledger_budget_take(f->l, &acme, 0, 2, err, sizeof(err)), LEDGER_BUDGET_DAY);
	/* globex's ann has spent nothing, nor has the tenant-less ann */
	assert_int_equal(ledger_budget_take(f->l, &globex, 0, 2, err, sizeof(err)), LEDGER_BUDGET_OK);
	assert_int_equal(ledger_budget_take(f->l, &globex, 0, 2, err, sizeof(err)), LEDGER_BUDGET_OK);
	assert_int_equal(ledger_budget_take(f->l, &globex, 0, 2, err, sizeof(err)), LEDGER_BUDGET_DAY);
	assert_int_equal(ledger_budget_take(f->l, &c, 0, 1, err, sizeof(err)), LEDGER_BUDGET_OK);
	assert_int_equal(ledger_budget_take(f->l, &c, 0, 1, err, sizeof(err)), LEDGER_BUDGET_DAY);
}

static void test_budget_refusal_counts_neither(void **state)
{
	struct fx *f = *state;
	struct ledger_call a = call_of("cafe", "mail.send", "ann", "e1", "2024-05-01");
	struct ledger_call b = call_of("cafe", "mail.send", "ann", "e2", "2024-05-01");
	char err[256];

	/* refused by the day: the run counter did not move */
	assert_int_equal(ledger_budget_take(f->l, &a, 5, 1, err, sizeof(err)), LEDGER_BUDGET_OK);
	assert_int_equal(ledger_budget_take(f->l, &a, 5, 1, err, sizeof(err)), LEDGER_BUDGET_DAY);
	assert_int_equal(ledger_budget_take(f->l, &a, 2, 0, err, sizeof(err)), LEDGER_BUDGET_OK);
	assert_int_equal(ledger_budget_take(f->l, &a, 2, 0, err, sizeof(err)), LEDGER_BUDGET_RUN);
	/* refused by the run: the day counter did not move (it is 1) */
	assert_int_equal(ledger_budget_take(f->l, &a, 2, 10, err, sizeof(err)), LEDGER_BUDGET_RUN);
	assert_int_equal(ledger_budget_take(f->l, &b, 0, 2, err, sizeof(err)), LEDGER_BUDGET_OK);
	assert_int_equal(ledger_budget_take(f->l, &b, 0, 2, err, sizeof(err)), LEDGER_BUDGET_DAY);
}

static void test_budget_prunes_old_days(void **state)
{
	struct fx *f = *state;
	struct ledger_call old = call_of("cafe", "mail.send", "ann", "e1", "2024-01-20");
	struct ledger_call recent = call_of("cafe", "mail.send", "ann", "e1", "2024-02-15");
	struct ledger_call edge = call_of("cafe", "mail.send", "ann", "e1", "2024-01-31");
	struct ledger_call now = call_of("cafe", "mail.send", "ann", "e1", "2024-03-01");
	char err[256];
	sqlite3 *db;

	assert_int_equal(ledger_budget_take(f->l, &old, 0, 9, err, sizeof(err)), LEDGER_BUDGET_OK);
	assert_int_equal(ledger_budget_take(f->l, &recent, 0, 9, err, sizeof(err)), LEDGER_BUDGET_OK);
	assert_int_equal(ledger_budget_take(f->l, &edge, 0, 9, err, sizeof(err)), LEDGER_BUDGET_OK);
	db = raw_open(f->db, 0);
	/* 26 days before a call's day is kept */
	assert_int_equal(raw_int(db, "SELECT count(*) FROM budget_day WHERE day = '2024-01-20'"), 1);
	/* a crashed run's counter from long ago */
	raw_exec(db, "INSERT INTO budget_run VALUES ('crashed', 'mail.send', 1, 1000)");
	assert_int_equal(ledger_budget_take(f->l, &now, 0, 9, err, sizeof(err)), LEDGER_BUDGET_OK);
	/* 41 days before goes, exactly 30 stays */
	assert_int_equal(raw_int(db, "SELECT count(*) FROM budget_day WHERE day = '2024-01-20'"), 0);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM budget_day WHERE day = '2024-01-31'"), 1);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM budget_day WHERE day = '2024-02-15'"), 1);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM budget_run WHERE exec_id = 'crashed'"), 0);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM budget_day"), 3);
	sqlite3_close(db);
}

static void test_bad_input_is_an_error(void **state)
{
	struct fx *f = *state;
	static const char *const bad_days[] = {"2024-13-01", "2024-02-30", "2023-02-29", "2024-1-01", "2024/01/01",
					       "2024-01-011", "", "yesterday"};
	struct ledger_call c = call_of("cafe", "mail.send", "ann", "e1", "2024-02-29");
	struct ledger_call none = call_of("", "mail.send", "ann", "e1", "2024-02-29");
	char err[256], longid[1026], *resp = (char *)"untouched";
	size_t i;

	assert_int_equal(ledger_budget_take(f->l, &c, 1, 1, err, sizeof(err)), LEDGER_BUDGET_OK);
	for (i = 0; i < sizeof(bad_days) / sizeof(bad_days[0]); i++) {
		c.day = bad_days[i];
		err[0] = '\0';
		assert_int_equal(ledger_budget_take(f->l, &c, 1, 1, err, sizeof(err)), LEDGER_BUDGET_ERROR);
		assert_non_null(strstr(err, "YYYY-MM-DD"));
	}
	c.day = NULL;
	assert_int_equal(ledger_budget_take(f->l, &c, 1, 1, err, sizeof(err)), LEDGER_BUDGET_ERROR);
	c.day = "2024-02-29";
	c.user = NULL;
	assert_int_equal(ledger_budget_take(f->l, &c, 1, 1, err, sizeof(err)), LEDGER_BUDGET_ERROR);
	c.user = "ann";
	/* a forgotten tenant is an error, never read as "" */
	c.tenant = NULL;
	assert_int_equal(ledger_budget_take(f->l, &c, 1, 1, err, sizeof(err)), LEDGER_BUDGET_ERROR);
	assert_non_null(strstr(err, "tenant"));
	assert_int_equal(ledger_replay_begin(f->l, &c, "m1", DIG_A, 0, -1, &resp, err, sizeof(err)), LEDGER_REPLAY_ERROR);
	assert_non_null(strstr(err, "tenant"));
	assert_int_equal(ledger_replay_finish(f->l, &c, "m1", "{}", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "tenant"));
	memset(longid, 'x', sizeof(longid) - 1);
	longid[sizeof(longid) - 1] = '\0';
	c.tenant = longid;
	assert_int_equal(ledger_budget_take(f->l, &c, 1, 1, err, sizeof(err)), LEDGER_BUDGET_ERROR);
	assert_non_null(strstr(err, "tenant"));
	c.tenant = "";
	assert_int_equal(ledger_budget_take(f->l, &none, 1, 1, err, sizeof(err)), LEDGER_BUDGET_ERROR);
	assert_non_null(strstr(err, "non-empty"));
	assert_int_equal(ledger_budget_take(NULL, &c, 1, 1, err, sizeof(err)), LEDGER_BUDGET_ERROR);
	assert_int_equal(ledger_budget_take(f->l, NULL, 1, 1, err, sizeof(err)), LEDGER_BUDGET_ERROR);

	assert_int_equal(ledger_replay_begin(f->l, &c, "m1", "ABC", 0, -1, &resp, err, sizeof(err)), LEDGER_REPLAY_ERROR);
	assert_null(resp);
	assert_non_null(strstr(err, "digest"));
	assert_int_equal(ledger_replay_begin(f->l, &c, "", DIG_A, 0, -1, &resp, err, sizeof(err)), LEDGER_REPLAY_ERROR);
	assert_int_equal(ledger_replay_begin(f->l, &c, NULL, DIG_A, 0, -1, &resp, err, sizeof(err)), LEDGER_REPLAY_ERROR);
	assert_int_equal(ledger_replay_begin(f->l, &c, "m1", DIG_A, 0, -1, NULL, err, sizeof(err)), LEDGER_REPLAY_ERROR);
	assert_int_equal(ledger_replay_finish(f->l, &c, "m1", NULL, err, sizeof(err)), -1);
	assert_int_equal(ledger_run_end(f->l, "", err, sizeof(err)), -1);
	/* a NULL or empty err buffer is not written */
	assert_int_equal(ledger_run_end(f->l, NULL, NULL, 0), -1);
}

/* ---- replay in one process ------------------------------------------- */

/* What ledger_replay_list() says of the records it walks. */
struct owner_seen {
	int count;
	int64_t pid;
	enum ledger_owner_state owner;
};

static int owner_of(const struct ledger_record *r, void *arg)
{
	struct owner_seen *s = arg;

	s->count++;
	s->pid = r->owner_pid;
	s->owner = r->owner;
	return 0;
}

static void test_replay_records_once(void **state)
{
	struct fx *f = *state;
	struct ledger_call c = call_of("cafe", "mail.send", "ann", "e1", "2024-05-01");
	struct ledger_call retry = call_of("cafe", "mail.send", "ann", "e2", "2024-05-01");
	struct ledger_call other_tool = call_of("cafe", "sms.send", "ann", "e1", "2024-05-01");
	struct ledger_filter m1 = {.message_id = "m1", .state = "pending"};
	char err[256], *resp = NULL;
	struct owner_seen seen = {0};

	assert_int_equal(ledger_replay_begin(f->l, &c, "m1", DIG_A, 0, -1, &resp, err, sizeof(err)), LEDGER_REPLAY_RUN);
	assert_null(resp);
	assert_int_equal(ledger_replay_list(f->l, &m1, owner_of, &seen, err, sizeof(err)), 0);
	assert_int_equal(seen.count, 1);
	assert_int_equal(seen.pid, getpid());
	assert_int_equal(seen.owner, LEDGER_OWNER_ALIVE);
	assert_int_equal(ledger_replay_finish(f->l, &c, "m1", "{\"id\":\"42\"}", err, sizeof(err)), 0);
	/* a second finish is a caller bug */
	assert_int_equal(ledger_replay_finish(f->l, &c, "m1", "{\"id\":\"43\"}", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no pending record"));
	/* a retried execution gets the first answer */
	assert_int_equal(ledger_replay_begin(f->l, &retry, "m1", DIG_A, 0, -1, &resp, err, sizeof(err)),
			 LEDGER_REPLAY_RECORDED);
	assert_string_equal(resp, "{\"id\":\"42\"}");
	free(resp);
	resp = NULL;
	/* the key is (app, tenant, tool, message id): another tool, another record */
	assert_int_equal(ledger_replay_begin(f->l, &other_tool, "m1", DIG_A, 0, -1, &resp, err, sizeof(err)),
			 LEDGER_REPLAY_RUN);
	/* never begun */
	assert_int_equal(ledger_replay_finish(f->l, &c, "m-none", "{}", err, sizeof(err)), -1);
}

/* Regression: with one state directory for many tenants, tenant B's
 * message id fetched tenant A's recorded answer (a leak), or a CONFLICT
 * told B that A had used the id.  Each tenant runs its own call once. */
static void test_tenant_replay_isolated(void **state)
{
	struct fx *f = *state;
	struct ledger_call c = call_of("cafe", "mail.send", "ann", "e1", "2024-05-01");
	struct ledger_call a = call_in("acme", c), b = call_in("globex", c);
	char err[256], *resp = NULL;
	uint64_t t0;
	int runs = 0;

	/* A's record is pending: B neither waits for it nor conflicts with it */
	runs += ledger_replay_begin(f->l, &a, "m1", DIG_A, 0, -1, &resp, err, sizeof(err)) == LEDGER_REPLAY_RUN;
	t0 = ms_now();
	runs += ledger_replay_begin(f->l, &b, "m1", DIG_B, 2000, -1, &resp, err, sizeof(err)) == LEDGER_REPLAY_RUN;
	assert_true(ms_now() - t0 < 1000);
	assert_int_equal(runs, 2);
	assert_null(resp);
	/* nor may one finish the other's: B finishes its own record only */
	assert_int_equal(ledger_replay_finish(f->l, &b, "m1", "globex's answer", err, sizeof(err)), 0);
	assert_int_equal(ledger_replay_finish(f->l, &b, "m1", "again", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "globex"));
	assert_int_equal(ledger_replay_finish(f->l, &a, "m1", "acme's answer", err, sizeof(err)), 0);
	/* each gets its own answer back, and its own conflicts */
	assert_int_equal(ledger_replay_begin(f->l, &a, "m1", DIG_A, 0, -1, &resp, err, sizeof(err)),
			 LEDGER_REPLAY_RECORDED);
	assert_string_equal(resp, "acme's answer");
	free(resp);
	resp = NULL;
	assert_int_equal(ledger_replay_begin(f->l, &b, "m1", DIG_B, 0, -1, &resp, err, sizeof(err)),
			 LEDGER_REPLAY_RECORDED);
	assert_string_equal(resp, "globex's answer");
	free(resp);
	resp = NULL;
	assert_int_equal(ledger_replay_begin(f->l, &b, "m1", DIG_A, 0, -1, &resp, err, sizeof(err)),
			 LEDGER_REPLAY_CONFLICT);
	/* a call without a tenant is a third party, not a wildcard */
	assert_int_equal(ledger_replay_begin(f->l, &c, "m1", DIG_A, 0, -1, &resp, err, sizeof(err)), LEDGER_REPLAY_RUN);
	assert_null(resp);
}

/* Users of one tenant: ann's recorded answer is not bob's to read, and
 * bob cannot learn (conflict) that ann used an id. */
static void test_user_replay_isolated(void **state)
{
	struct fx *f = *state;
	struct ledger_call ann = call_in("acme", call_of("cafe", "mail.send", "ann", "e1", "2024-05-01"));
	struct ledger_call bob = ann;
	char err[256], *resp = NULL;

	bob.user = "bob";
	assert_int_equal(ledger_replay_begin(f->l, &ann, "m1", DIG_A, 0, -1, &resp, err, sizeof(err)), LEDGER_REPLAY_RUN);
	assert_int_equal(ledger_replay_finish(f->l, &ann, "m1", "ann's answer", err, sizeof(err)), 0);
	assert_int_equal(ledger_replay_begin(f->l, &bob, "m1", DIG_B, 0, -1, &resp, err, sizeof(err)), LEDGER_REPLAY_RUN);
	assert_null(resp);
	assert_int_equal(ledger_replay_finish(f->l, &bob, "m1", "bob's answer", err, sizeof(err)), 0);
	assert_int_equal(ledger_replay_begin(f->l, &ann, "m1", DIG_A, 0, -1, &resp, err, sizeof(err)),
			 LEDGER_REPLAY_RECORDED);
	assert_string_equal(resp, "ann's answer");
	free(resp);
}

/* A call refused or failed before its tool acted gives its record up: the
 * next call with that id runs, as if the first had never begun.  Only the
 * owner of a pending record may give it up. */
static void test_replay_abandon(void **state)
{
	struct fx *f = *state;
	struct ledger_call c = call_of("cafe", "mail.send", "ann", "e1", "2024-05-01");
	char err[256], *resp = NULL;

	assert_int_equal(ledger_replay_begin(f->l, &c, "m1", DIG_A, 0, -1, &resp, err, sizeof(err)), LEDGER_REPLAY_RUN);
	assert_int_equal(ledger_replay_abandon(f->l, &c, "m1", err, sizeof(err)), 0);
	assert_int_equal(ledger_replay_abandon(f->l, &c, "m1", err, sizeof(err)), -1);
	assert_int_equal(ledger_replay_begin(f->l, &c, "m1", DIG_B, 0, -1, &resp, err, sizeof(err)), LEDGER_REPLAY_RUN);
	assert_int_equal(ledger_replay_finish(f->l, &c, "m1", "done", err, sizeof(err)), 0);
	/* a done record is not given up */
	assert_int_equal(ledger_replay_abandon(f->l, &c, "m1", err, sizeof(err)), -1);
	assert_int_equal(ledger_replay_begin(f->l, &c, "m1", DIG_B, 0, -1, &resp, err, sizeof(err)),
			 LEDGER_REPLAY_RECORDED);
	free(resp);
}

/* A repeat waiting for a live owner stops at once when the run ends
 * (cancel_fd readable), instead of after wait_ms. */
static void test_replay_wait_cancelled(void **state)
{
	struct fx *f = *state;
	struct ledger_call c = call_of("cafe", "mail.send", "ann", "e1", "2024-05-01");
	char err[256], *resp = NULL;
	int p[2];
	uint64_t t0;

	assert_int_equal(pipe(p), 0);
	assert_int_equal(ledger_replay_begin(f->l, &c, "m1", DIG_A, 0, -1, &resp, err, sizeof(err)), LEDGER_REPLAY_RUN);
	/* not cancelled: the wait runs out */
	t0 = ms_now();
	assert_int_equal(ledger_replay_begin(f->l, &c, "m1", DIG_A, 300, p[0], &resp, err, sizeof(err)),
			 LEDGER_REPLAY_IN_DOUBT);
	assert_true(ms_now() - t0 >= 250);
	assert_int_equal(write(p[1], "x", 1), 1);
	t0 = ms_now();
	assert_int_equal(ledger_replay_begin(f->l, &c, "m1", DIG_A, 10000, p[0], &resp, err, sizeof(err)),
			 LEDGER_REPLAY_CANCELLED);
	assert_true(ms_now() - t0 < 1000);
	assert_null(resp);
	close(p[0]);
	close(p[1]);
}

static void test_replay_conflict(void **state)
{
	struct fx *f = *state;
	struct ledger_call c = call_of("cafe", "mail.send", "ann", "e1", "2024-05-01");
	char err[256], *resp = NULL;
	uint64_t t0;

	assert_int_equal(ledger_replay_begin(f->l, &c, "m1", DIG_A, 0, -1, &resp, err, sizeof(err)), LEDGER_REPLAY_RUN);
	/* pending, other params: a conflict at once, no waiting */
	t0 = ms_now();
	assert_int_equal(ledger_replay_begin(f->l, &c, "m1", DIG_B, 2000, -1, &resp, err, sizeof(err)),
			 LEDGER_REPLAY_CONFLICT);
	assert_true(ms_now() - t0 < 1000);
	assert_int_equal(ledger_replay_finish(f->l, &c, "m1", "sent", err, sizeof(err)), 0);
	assert_int_equal(ledger_replay_begin(f->l, &c, "m1", DIG_B, 0, -1, &resp, err, sizeof(err)),
			 LEDGER_REPLAY_CONFLICT);
	assert_null(resp);
	/* the record is unchanged by the conflicting tries */
	assert_int_equal(ledger_replay_begin(f->l, &c, "m1", DIG_A, 0, -1, &resp, err, sizeof(err)),
			 LEDGER_REPLAY_RECORDED);
	assert_string_equal(resp, "sent");
	free(resp);
}

/* The owner check: same pid with another start time is a reused pid; a
 * record from another boot is from a gone process; one from another pid
 * namespace cannot be checked and is waited for. */
static void test_replay_owner_identity(void **state)
{
	struct fx *f = *state;
	struct ledger_call c = call_of("cafe", "mail.send", "ann", "e1", "2024-05-01");
	char err[256], *resp = NULL;
	uint64_t t0, took;
	sqlite3 *db = raw_open(f->db, 0);

	/* ours and alive: waited for, then in doubt */
	assert_int_equal(ledger_replay_begin(f->l, &c, "alive", DIG_A, 0, -1, &resp, err, sizeof(err)), LEDGER_REPLAY_RUN);
	t0 = ms_now();
	assert_int_equal(ledger_replay_begin(f->l, &c, "alive", DIG_A, 150, -1, &resp, err, sizeof(err)),
			 LEDGER_REPLAY_IN_DOUBT);
	took = ms_now() - t0;
	assert_true(took >= 150);

	assert_int_equal(ledger_replay_begin(f->l, &c, "reused", DIG_A, 0, -1, &resp, err, sizeof(err)),
			 LEDGER_REPLAY_RUN);
	raw_exec(db, "UPDATE replay SET owner_start = owner_start + 1 WHERE message_id = 'reused'");
	t0 = ms_now();
	assert_int_equal(ledger_replay_begin(f->l, &c, "reused", DIG_A, 3000, -1, &resp, err, sizeof(err)),
			 LEDGER_REPLAY_IN_DOUBT);
	assert_true(ms_now() - t0 < 1000);
	/* not ours any more: we may not finish it either */
	assert_int_equal(ledger_replay_finish(f->l, &c, "reused", "x", err, sizeof(err)), -1);

	assert_int_equal(ledger_replay_begin(f->l, &c, "reboot", DIG_A, 0, -1, &resp, err, sizeof(err)),
			 LEDGER_REPLAY_RUN);
	raw_exec(db, "UPDATE replay SET owner_boot = 'another-boot' WHERE message_id = 'reboot'");
	t0 = ms_now();
	assert_int_equal(ledger_replay_begin(f->l, &c, "reboot", DIG_A, 3000, -1, &resp, err, sizeof(err)),
			 LEDGER_REPLAY_IN_DOUBT);
	assert_true(ms_now() - t0 < 1000);

	assert_int_equal(ledger_replay_begin(f->l, &c, "ns", DIG_A, 0, -1, &resp, err, sizeof(err)), LEDGER_REPLAY_RUN);
	raw_exec(db, "UPDATE replay SET owner_pidns = owner_pidns + 1, owner_pid = 1 WHERE message_id = 'ns'");
	t0 = ms_now();
	assert_int_equal(ledger_replay_begin(f->l, &c, "ns", DIG_A, 150, -1, &resp, err, sizeof(err)),
			 LEDGER_REPLAY_IN_DOUBT);
	assert_true(ms_now() - t0 >= 150);
	assert_null(resp);
	sqlite3_close(db);
}

struct waiter {
	struct ledger *l;
	const char *message_id;
	uint64_t wait_ms;
	enum ledger_replay res;
	char *resp;
	uint64_t took;
	char err[256];
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	struct ledger_call c = call_of("cafe", "mail.send", "ann", "e1", "2024-05-01");
	uint64_t t0 = ms_now();

	w->res = ledger_replay_begin(w->l, &c, w->message_id, DIG_A, w->wait_ms, -1, &w->resp, w->err, sizeof(w->err));
	w->took = ms_now() - t0;
	return NULL;
}

/* Another thread of this process asks for the id this thread is running:
 * it waits, and the wait must not keep this thread from finishing. */
static void test_replay_two_threads(void **state)
{
	struct fx *f = *state;
	struct ledger_call c = call_of("cafe", "mail.send", "ann", "e1", "2024-05-01");
	struct waiter w = {.l = f->l, .message_id = "m1", .wait_ms = 3000};
	char err[256], *resp = NULL;
	pthread_t t;

	assert_int_equal(ledger_replay_begin(f->l, &c, "m1", DIG_A, 0, -1, &resp, err, sizeof(err)), LEDGER_REPLAY_RUN);
	assert_int_equal(pthread_create(&t, NULL, waiter_main, &w), 0);
	sleep_ms(150);
	assert_int_equal(ledger_replay_finish(f->l, &c, "m1", "first", err, sizeof(err)), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(w.res, LEDGER_REPLAY_RECORDED);
	assert_string_equal(w.resp, "first");
	assert_true(w.took >= 100 && w.took < 2000);
	free(w.resp);
}

struct taker {
	struct ledger *l;
	int ok, refused, errors;
};

static void *taker_main(void *arg)
{
	struct taker *t = arg;
	struct ledger_call c = call_of("cafe", "mail.send", "ann", "e1", "2024-05-01");
	char err[256];
	int i;

	for (i = 0; i < 30; i++) {
		switch (ledger_budget_take(t->l, &c, 50, 0, err, sizeof(err))) {
		case LEDGER_BUDGET_OK: t->ok++; break;
		case LEDGER_BUDGET_RUN: t->refused++; break;
		default: t->errors++; break;
		}
	}
	return NULL;
}

/* Four threads share one handle: exactly the budget is granted. */
static void test_budget_threads(void **state)
{
	struct fx *f = *state;
	struct taker tk[4];
	pthread_t t[4];
	int i, ok = 0, refused = 0;

	memset(tk, 0, sizeof(tk));
	for (i = 0; i < 4; i++) {
		tk[i].l = f->l;
		assert_int_equal(pthread_create(&t[i], NULL, taker_main, &tk[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(tk[i].errors, 0);
		ok += tk[i].ok;
		refused += tk[i].refused;
	}
	assert_int_equal(ok, 50);
	assert_int_equal(refused, 70);
}

/* ---- replay across processes ----------------------------------------- */

#define RACE_IDS 20

struct race_out {
	int i;
	int res;
	char resp[64];
};

/* A child: its own handle, released with the other child, then one call
 * per id; runs what it is told to run and records "<pid>:<i>". */
static void race_child(const char *dir, int go, int out)
{
	struct ledger_call c = call_of("cafe", "mail.send", "ann", "e-race", "2024-05-01");
	struct ledger *l = NULL;
	struct race_out r;
	char err[256], id[32], b, *resp;
	int i;

	if (ledger_open(dir, &l, err, sizeof(err)) != 0)
		_exit(2);
	if (read(go, &b, 1) < 0)
		_exit(2);
	for (i = 0; i < RACE_IDS; i++) {
		memset(&r, 0, sizeof(r));
		r.i = i;
		resp = NULL;
		snprintf(id, sizeof(id), "m%d", i);
		r.res = ledger_replay_begin(l, &c, id, DIG_A, 3000, -1, &resp, err, sizeof(err));
		if (r.res == LEDGER_REPLAY_RUN) {
			snprintf(r.resp, sizeof(r.resp), "%d:%d", (int)getpid(), i);
			if (ledger_replay_finish(l, &c, id, r.resp, err, sizeof(err)) != 0)
				r.res = -1;
		} else if (r.res == LEDGER_REPLAY_RECORDED) {
			snprintf(r.resp, sizeof(r.resp), "%.60s", resp);
		}
		free(resp);
		if (write(out, &r, sizeof(r)) != (ssize_t)sizeof(r))
			_exit(2);
	}
	ledger_close(l);
	_exit(0);
}

static void test_replay_two_processes_race(void **state)
{
	struct fx *f = *state;
	struct race_out got[2][RACE_IDS];
	int go[2], out[2][2], k, i, st, runs;
	pid_t kid[2];

	/* The fixture's handle is not used here: closed, the parent has no
	 * thread of it (a PostgreSQL handle renews its lease from one) when
	 * it forks, so the children start like separate processes. */
	ledger_close(f->l);
	f->l = NULL;
	assert_int_equal(pipe(go), 0);
	for (k = 0; k < 2; k++) {
		assert_int_equal(pipe(out[k]), 0);
		kid[k] = fork();
		assert_true(kid[k] >= 0);
		if (kid[k] == 0) {
			close(go[1]);
			close(out[k][0]);
			race_child(where(f), go[0], out[k][1]);
		}
		close(out[k][1]);
	}
	close(go[0]);
	sleep_ms(50); /* both have opened the ledger */
	close(go[1]); /* both read EOF at once */
	for (k = 0; k < 2; k++) {
		for (i = 0; i < RACE_IDS; i++)
			assert_int_equal(read(out[k][0], &got[k][i], sizeof(got[k][i])), (ssize_t)sizeof(got[k][i]));
		close(out[k][0]);
		assert_int_equal(waitpid(kid[k], &st, 0), kid[k]);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	for (i = 0; i < RACE_IDS; i++) {
		runs = (got[0][i].res == LEDGER_REPLAY_RUN) + (got[1][i].res == LEDGER_REPLAY_RUN);
		assert_int_equal(runs, 1);
		k = got[0][i].res == LEDGER_REPLAY_RUN ? 1 : 0;
		assert_int_equal(got[k][i].res, LEDGER_REPLAY_RECORDED);
		assert_string_equal(got[k][i].resp, got[1 - k][i].resp);
	}
}

#define OPEN_RACE_PROCS 8
#define OPEN_RACE_ROUNDS 20

/* A child of the open race: waits for the start, opens the fresh ledger,
 * takes a budget and a replay record; exits 0, or 1 with the error on out. */
static void open_race_child(const char *dir, int go, int out, int k)
{
	struct ledger_call c = call_of("cafe", "mail.send", "ann", "e-open", "2024-05-01");
	struct ledger *l = NULL;
	char err[256] = "", id[32], b, *resp = NULL;
	enum ledger_replay r;
	int ok = 0;

	if (read(go, &b, 1) < 0)
		_exit(2);
	snprintf(id, sizeof(id), "m%d", k);
	if (ledger_open(dir, &l, err, sizeof(err)) == 0 &&
	    ledger_budget_take(l, &c, 0, 100, err, sizeof(err)) == LEDGER_BUDGET_OK) {
		r = ledger_replay_begin(l, &c, id, DIG_A, 3000, -1, &resp, err, sizeof(err));
		ok = r == LEDGER_REPLAY_RUN && ledger_replay_finish(l, &c, id, "sent", err, sizeof(err)) == 0;
		if (!ok && err[0] == '\0')
			snprintf(err, sizeof(err), "replay answered %d, not RUN", (int)r);
	}
	free(resp);
	ledger_close(l);
	if (!ok && write(out, err, strlen(err) + 1) < 0)
		_exit(2);
	_exit(ok ? 0 : 1);
}

/* Regression: supervisors opening a new state directory at the same moment;
 * one failed with "switching to WAL mode: database is locked" (about one
 * pair in 25).  Every one of them must open it and use it. */
static void test_first_open_race(void **state)
{
	struct fx *f = *state;
	char dir[200], why[300];
	int round, k, go[2], out[2], st, failed = 0;
	pid_t kid[OPEN_RACE_PROCS];
	ssize_t got;
	sqlite3 *db;

	for (round = 0; round < OPEN_RACE_ROUNDS; round++) {
		snprintf(dir, sizeof(dir), "%s/round%d", f->tmp, round);
		assert_int_equal(pipe(go), 0);
		assert_int_equal(pipe(out), 0);
		for (k = 0; k < OPEN_RACE_PROCS; k++) {
			kid[k] = fork();
			assert_true(kid[k] >= 0);
			if (kid[k] == 0) {
				close(go[1]);
				close(out[0]);
				open_race_child(dir, go[0], out[1], k);
			}
		}
		close(go[0]);
		close(out[1]);
		close(go[1]); /* every child reads EOF at once */
		for (k = 0; k < OPEN_RACE_PROCS; k++) {
			assert_int_equal(waitpid(kid[k], &st, 0), kid[k]);
			if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
				failed++;
		}
		got = read(out[0], why, sizeof(why) - 1);
		why[got > 0 ? got : 0] = '\0';
		close(out[0]);
		if (failed != 0)
			fail_msg("round %d: %d of %d processes failed; first error: %s", round, failed,
				 OPEN_RACE_PROCS, why);
		snprintf(why, sizeof(why), "%s/ledger.sqlite3", dir);
		db = raw_open(why, 0);
		assert_int_equal(raw_int(db, "SELECT calls FROM budget_day"), OPEN_RACE_PROCS);
		assert_int_equal(raw_int(db, "SELECT count(*) FROM replay WHERE state = 'done'"), OPEN_RACE_PROCS);
		assert_int_equal(raw_int(db, "PRAGMA user_version"), ledger_schema_version());
		sqlite3_close(db);
	}
}

/* This process runs the id; another process asks for it meanwhile and
 * must wait for the answer, not run it and not give up. */
static void test_replay_other_process_waits(void **state)
{
	struct fx *f = *state;
	struct ledger_call c = call_of("cafe", "mail.send", "ann", "e1", "2024-05-01");
	struct race_out r;
	char err[256], *resp = NULL;
	int out[2], st;
	uint64_t took;
	pid_t kid;

	assert_int_equal(ledger_replay_begin(f->l, &c, "m1", DIG_A, 0, -1, &resp, err, sizeof(err)), LEDGER_REPLAY_RUN);
	assert_int_equal(pipe(out), 0);
	kid = fork();
	assert_true(kid >= 0);
	if (kid == 0) {
		struct ledger *l = NULL;
		uint64_t t0 = ms_now();

		close(out[0]);
		memset(&r, 0, sizeof(r));
		r.res = -1;
		if (ledger_open(where(f), &l, err, sizeof(err)) == 0)
			r.res = ledger_replay_begin(l, &c, "m1", DIG_A, 3000, -1, &resp, err, sizeof(err));
		r.i = (int)(ms_now() - t0);
		snprintf(r.resp, sizeof(r.resp), "%.60s", resp != NULL ? resp : err);
		_exit(write(out[1], &r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 2);
	}
	close(out[1]);
	sleep_ms(200);
	assert_int_equal(ledger_replay_finish(f->l, &c, "m1", "the answer", err, sizeof(err)), 0);
	assert_int_equal(read(out[0], &r, sizeof(r)), (ssize_t)sizeof(r));
	close(out[0]);
	assert_int_equal(waitpid(kid, &st, 0), kid);
	assert_int_equal(r.res, LEDGER_REPLAY_RECORDED);
	assert_string_equal(r.resp, "the answer");
	took = (uint64_t)r.i;
	assert_true(took >= 100 && took < 2500);
}

/* A child begins and dies before finishing: the pending record answers
 * IN_DOUBT at once, whether the child is a zombie or reaped, and is never
 * handed out to run again. */
static void test_replay_crashed_owner_in_doubt(void **state)
{
	struct fx *f = *state;
	struct ledger_call c = call_of("cafe", "mail.send", "ann", "e1", "2024-05-01");
	char err[256], *resp = NULL;
	siginfo_t si;
	uint64_t t0;
	pid_t kid;
	int i;

	kid = fork();
	assert_true(kid >= 0);
	if (kid == 0) {
		struct ledger *l = NULL;

		if (ledger_open(where(f), &l, err, sizeof(err)) != 0 ||
		    ledger_replay_begin(l, &c, "m1", DIG_A, 0, -1, &resp, err, sizeof(err)) != LEDGER_REPLAY_RUN)
			_exit(2);
		_exit(0); /* the tool "ran"; the answer is never recorded */
	}
	/* exited, not yet reaped */
	memset(&si, 0, sizeof(si));
	assert_int_equal(waitid(P_PID, (id_t)kid, &si, WEXITED | WNOWAIT), 0);
	assert_int_equal(si.si_status, 0);
	t0 = ms_now();
	assert_int_equal(ledger_replay_begin(f->l, &c, "m1", DIG_A, 3000, -1, &resp, err, sizeof(err)),
			 LEDGER_REPLAY_IN_DOUBT);
	assert_true(ms_now() - t0 < 1000);
	assert_int_equal(waitpid(kid, NULL, 0), kid);
	for (i = 0; i < 3; i++) {
		t0 = ms_now();
		assert_int_equal(ledger_replay_begin(f->l, &c, "m1", DIG_A, 3000, -1, &resp, err, sizeof(err)),
				 LEDGER_REPLAY_IN_DOUBT);
		assert_true(ms_now() - t0 < 1000);
		assert_null(resp);
	}
	/* and nobody else may record an answer for it */
	assert_int_equal(ledger_replay_finish(f->l, &c, "m1", "late", err, sizeof(err)), -1);
}

/* ---- by hand: list and forget ---------------------------------------- */

struct seen {
	int n;
	char ids[8][32];
	enum ledger_owner_state owner[8];
	int responses;
};

static int seen_one(const struct ledger_record *r, void *arg)
{
	struct seen *s = arg;

	if (s->n < 8) {
		snprintf(s->ids[s->n], sizeof(s->ids[0]), "%s", r->message_id);
		s->owner[s->n] = r->owner;
	}
	s->responses += r->response != NULL;
	s->n++;
	return 0;
}

static struct seen list_of(struct fx *f, struct ledger_filter flt)
{
	struct seen s;
	char err[256];

	memset(&s, 0, sizeof(s));
	if (ledger_replay_list(f->l, &flt, seen_one, &s, err, sizeof(err)) != 0)
		fail_msg("ledger_replay_list: %s", err);
	return s;
}

static int logged_one(const struct ledger_forgotten *r, void *arg)
{
	struct ledger_forgotten *last = arg;

	/* the strings die with the row: the test keeps what it checks */
	assert_string_equal(r->app, "cafe");
	last->time = r->time;
	last->uid = r->uid;
	last->forced = r->forced;
	last->state = strcmp(r->state, "done") == 0 ? "done" : "pending";
	last->reason = strcmp(r->reason, "fixed") == 0 ? "fixed" : "other";
	last->message_id = strcmp(r->message_id, "m-done") == 0 ? "m-done" : "other";
	return 0;
}

/* list sees every record with its owner judged, by any key field and by
 * state (in_doubt: a pending record whose owner is gone); forget deletes
 * one with a row in the forget log, refuses a pending record whose owner
 * lives unless forced, and the forgotten id runs again. */
/* A pending record whose owner is gone (a crash), written behind the
 * ledger's back: on SQLite a pid that is not running, on PostgreSQL an
 * owner id no cordon_owner row has.  Created at 5: oldest of all. */
static void forge_dead_pending(struct fx *f, const char *message_id)
{
	char sql[512];

	if (pg_url != NULL) {
		PGconn *c = pg_raw();
		const char *v[2] = { message_id, DIG_A };

		pg_raw_exec(c,
			    "INSERT INTO cordon_replay VALUES ('cafe', '', 'ann', 'mail.send', $1, $2, 'pending', NULL,"
			    " -1, 0, 'e0', 5, 5)",
			    2, v);
		PQfinish(c);
		return;
	}
	{
		sqlite3 *db = raw_open(f->db, 0);

		snprintf(sql, sizeof(sql),
			 "INSERT INTO replay VALUES ('cafe', '', 'ann', 'mail.send', '%s', '%s', 'pending', NULL, %d, 1,"
			 " '', 0, 'e0', 5, 5)",
			 message_id, DIG_A, (int)dead_pid());
		raw_exec(db, sql);
		sqlite3_close(db);
	}
}

struct log_rows {
	int n;
	struct ledger_forgotten *last;
};

static int log_row(const struct ledger_forgotten *r, void *arg)
{
	struct log_rows *lr = arg;

	lr->n++;
	return logged_one(r, lr->last);
}

/* How many rows the forget log has; *last gets the newest. */
static int forget_log_rows(struct fx *f, struct ledger_forgotten *last)
{
	struct log_rows lr = { 0, last };
	char err[256];

	assert_int_equal(ledger_forget_log(f->l, log_row, &lr, err, sizeof(err)), 0);
	return lr.n;
}

static void test_list_and_forget(void **state)
{
	struct fx *f = *state;
	struct ledger_call c = call_of("cafe", "mail.send", "ann", "e1", "2024-05-01");
	struct ledger_call other = call_in("acme", call_of("cafe", "sms.send", "bob", "e1", "2024-05-01"));
	struct ledger_filter key = { "cafe", "", "ann", "mail.send", "m-done", NULL };
	struct ledger_forgotten last = { 0 };
	char err[256], prev[16], *resp = NULL;
	struct seen s;

	assert_int_equal(ledger_replay_begin(f->l, &c, "m-done", DIG_A, 0, -1, &resp, err, sizeof(err)),
			 LEDGER_REPLAY_RUN);
	assert_int_equal(ledger_replay_finish(f->l, &c, "m-done", "{\"ok\":true}", err, sizeof(err)), 0);
	assert_int_equal(ledger_replay_begin(f->l, &c, "m-mine", DIG_A, 0, -1, &resp, err, sizeof(err)),
			 LEDGER_REPLAY_RUN);
	assert_int_equal(ledger_replay_begin(f->l, &other, "m-sms", DIG_A, 0, -1, &resp, err, sizeof(err)),
			 LEDGER_REPLAY_RUN);
	forge_dead_pending(f, "m-dead");

	s = list_of(f, (struct ledger_filter){ 0 });
	assert_int_equal(s.n, 4);
	assert_int_equal(s.responses, 1);
	assert_string_equal(s.ids[0], "m-dead"); /* oldest first */
	assert_int_equal(s.owner[0], LEDGER_OWNER_GONE);
	assert_int_equal(list_of(f, (struct ledger_filter){ .state = "done" }).n, 1);
	assert_int_equal(list_of(f, (struct ledger_filter){ .state = "pending" }).n, 3);
	s = list_of(f, (struct ledger_filter){ .state = "in_doubt" });
	assert_int_equal(s.n, 1);
	assert_string_equal(s.ids[0], "m-dead");
	s = list_of(f, (struct ledger_filter){ .tool = "mail.send", .message_id = "m-mine" });
	assert_int_equal(s.n, 1);
	assert_int_equal(s.owner[0], LEDGER_OWNER_ALIVE);
	assert_int_equal(list_of(f, (struct ledger_filter){ .tenant = "acme", .user = "bob" }).n, 1);
	assert_int_equal(list_of(f, (struct ledger_filter){ .app = "other" }).n, 0);
	assert_int_equal(ledger_replay_list(f->l, &(struct ledger_filter){ .state = "maybe" }, seen_one, &s, err,
					    sizeof(err)),
			 -1);

	/* forget: done, with its log row */
	assert_int_equal(ledger_replay_forget(f->l, &key, "", 0, 7, prev, sizeof(prev), err, sizeof(err)),
			 LEDGER_FORGET_ERROR);
	assert_int_equal(ledger_replay_forget(f->l, &key, "fixed", 0, 4242, prev, sizeof(prev), err, sizeof(err)),
			 LEDGER_FORGOT);
	assert_string_equal(prev, "done");
	assert_int_equal(ledger_replay_forget(f->l, &key, "fixed", 0, 4242, prev, sizeof(prev), err, sizeof(err)),
			 LEDGER_FORGET_NOT_FOUND);
	assert_int_equal(ledger_forget_log(f->l, logged_one, &last, err, sizeof(err)), 0);
	assert_int_equal(last.uid, 4242);
	assert_string_equal(last.state, "done");
	assert_string_equal(last.reason, "fixed");
	assert_string_equal(last.message_id, "m-done");
	assert_true(llabs(last.time - (int64_t)time(NULL)) < 60);
	assert_int_equal(forget_log_rows(f, &last), 1);
	/* the forgotten id runs again, with other params even */
	assert_int_equal(ledger_replay_begin(f->l, &c, "m-done", DIG_B, 0, -1, &resp, err, sizeof(err)),
			 LEDGER_REPLAY_RUN);

	/* a pending record whose owner lives (this process): only forced */
	key.message_id = "m-mine";
	assert_int_equal(ledger_replay_forget(f->l, &key, "stuck", 0, 1, prev, sizeof(prev), err, sizeof(err)),
			 LEDGER_FORGET_OWNER_ALIVE);
	assert_int_equal(forget_log_rows(f, &last), 1);
	assert_int_equal(ledger_replay_forget(f->l, &key, "stuck", 1, 1, prev, sizeof(prev), err, sizeof(err)),
			 LEDGER_FORGOT);
	assert_string_equal(prev, "pending");
	assert_int_equal(forget_log_rows(f, &last), 2);
	assert_true(last.forced);
	/* in doubt: the owner is gone, no force needed */
	key.message_id = "m-dead";
	assert_int_equal(ledger_replay_forget(f->l, &key, "checked", 0, 1, prev, sizeof(prev), err, sizeof(err)),
			 LEDGER_FORGOT);
	/* the whole key: no wildcard deletes */
	key.user = NULL;
	assert_int_equal(ledger_replay_forget(f->l, &key, "x", 1, 1, prev, sizeof(prev), err, sizeof(err)),
			 LEDGER_FORGET_ERROR);
}

/* ---- identity and integrity (issue 15) ---------------------------------- */

/* Records a done call for mid: ran once. */
static void record_done(struct ledger *l, const char *mid)
{
	struct ledger_call c = call_of("cafe", "mail.send", "ann", "e1", "2024-05-01");
	char err[256], *resp = NULL;

	assert_int_equal(ledger_replay_begin(l, &c, mid, DIG_A, 0, -1, &resp, err, sizeof(err)), LEDGER_REPLAY_RUN);
	assert_int_equal(ledger_replay_finish(l, &c, mid, "{\"sent\":1}", err, sizeof(err)), 0);
}

/* What a call with mid gets now: RECORDED after record_done(), RUN when
 * the record was lost. */
static enum ledger_replay replay_of(struct ledger *l, const char *mid)
{
	struct ledger_call c = call_of("cafe", "mail.send", "ann", "e2", "2024-05-01");
	char err[256], *resp = NULL;
	enum ledger_replay r = ledger_replay_begin(l, &c, mid, DIG_A, 0, -1, &resp, err, sizeof(err));

	free(resp);
	return r;
}

/* m-1 recorded, the handle closed (its last close checkpoints the WAL
 * into the database file). */
static void closed_with_record(struct fx *f)
{
	record_done(f->l, "m-1");
	ledger_close(f->l);
	f->l = NULL;
}

static void unlink_db_files(struct fx *f)
{
	char p[200];

	assert_int_equal(unlink(f->db), 0);
	snprintf(p, sizeof(p), "%s-wal", f->db);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", f->db);
	unlink(p);
}

static off_t size_of(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? st.st_size : -1;
}

/* Regression (issue 15): with ledger.sqlite3 emptied, every done id ran
 * again: the open made a fresh ledger of the 0-byte file. */
static void test_ledger_truncated_refused(void **state)
{
	struct fx *f = *state;
	char err[512];

	closed_with_record(f);
	assert_int_equal(truncate(f->db, 0), 0);
	assert_int_equal(ledger_open(f->state, &f->l, err, sizeof(err)), -1);
	assert_null(f->l);
	assert_non_null(strstr(err, "ledger.sqlite3 is empty"));
	assert_non_null(strstr(err, "ledger.id names ledger"));
	assert_non_null(strstr(err, "restore"));
	assert_int_equal(size_of(f->db), 0); /* and left as it was */
}

/* Regression (issue 15): with ledger.sqlite3 deleted, every done id ran
 * again: the open made a new database. */
static void test_ledger_deleted_refused(void **state)
{
	struct fx *f = *state;
	char err[512];

	closed_with_record(f);
	unlink_db_files(f);
	assert_int_equal(ledger_open(f->state, &f->l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "ledger.sqlite3 is missing"));
	assert_non_null(strstr(err, "ledger.id names ledger"));
	assert_int_equal(size_of(f->db), -1); /* nothing made in its place */
}

/* Regression (issue 15): the ledger deleted while one run had it open,
 * a second run started: it made a new ledger and every id ran twice.  The
 * second open refuses, and the first handle records nothing more into
 * the deleted file. */
static void test_ledger_deleted_while_open_refused(void **state)
{
	struct fx *f = *state;
	struct ledger_call c = call_of("cafe", "mail.send", "ann", "e1", "2024-05-01");
	struct ledger *second = NULL;
	char err[512];

	record_done(f->l, "m-1");
	unlink_db_files(f);
	assert_int_equal(ledger_open(f->state, &second, err, sizeof(err)), -1);
	assert_null(second);
	assert_non_null(strstr(err, "is missing"));
	assert_int_equal(ledger_budget_take(f->l, &c, 5, 0, err, sizeof(err)), LEDGER_BUDGET_ERROR);
	assert_non_null(strstr(err, "deleted, emptied or replaced while in use"));
	assert_int_equal(replay_of(f->l, "m-2"), LEDGER_REPLAY_ERROR);
}

/* Another ledger's database in place of this one's (or one without an
 * id, as a v4 ledger has) is refused and left untouched; the identity
 * file that is a link, or not an identity, is refused too. */
static void test_ledger_swapped_refused(void **state)
{
	struct fx *f = *state;
	struct ledger *other = NULL;
	char err[512], dir2[200], db2[220], idf[200];
	sqlite3 *db;
	int fd;

	closed_with_record(f);
	snprintf(dir2, sizeof(dir2), "%s/other", f->tmp);
	snprintf(db2, sizeof(db2), "%s/ledger.sqlite3", dir2);
	assert_int_equal(ledger_open(dir2, &other, err, sizeof(err)), 0);
	ledger_close(other);
	unlink_db_files(f);
	assert_int_equal(rename(db2, f->db), 0);
	assert_int_equal(ledger_open(f->state, &f->l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "is ledger "));
	assert_non_null(strstr(err, "not the database kept here"));

	/* no id at all: what a ledger from before v5 holds */
	db = raw_open(f->db, 0);
	raw_exec(db, "DROP TABLE ledger_meta; PRAGMA user_version = 4");
	sqlite3_close(db);
	assert_int_equal(ledger_open(f->state, &f->l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "holds no ledger id"));
	db = raw_open(f->db, 0);
	assert_int_equal(raw_int(db, "PRAGMA user_version"), 4); /* not migrated */
	sqlite3_close(db);

	/* the identity file is a link, or garbage */
	snprintf(idf, sizeof(idf), "%s/ledger.id", f->state);
	assert_int_equal(unlink(idf), 0);
	assert_int_equal(symlink("/etc/hostname", idf), 0);
	assert_int_equal(ledger_open(f->state, &f->l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "symbolic link"));
	assert_int_equal(unlink(idf), 0);
	fd = open(idf, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "cordon-ledger-id 1\nid xyz\n", 26), 26);
	close(fd);
	assert_int_equal(ledger_open(f->state, &f->l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "is not a ledger identity"));
}

/* The identity file gone but the database whole: nothing was lost, the
 * database's own id is written back (not a new one). */
static void test_ledger_id_file_rewritten(void **state)
{
	struct fx *f = *state;
	char err[256], id[LEDGER_ID_LEN + 1], idf[200];

	snprintf(id, sizeof(id), "%s", ledger_id(f->l));
	assert_int_equal((int)strlen(id), LEDGER_ID_LEN);
	closed_with_record(f);
	snprintf(idf, sizeof(idf), "%s/ledger.id", f->state);
	assert_int_equal(unlink(idf), 0);
	assert_int_equal(ledger_open(f->state, &f->l, err, sizeof(err)), 0);
	assert_string_equal(ledger_id(f->l), id);
	assert_int_equal(replay_of(f->l, "m-1"), LEDGER_REPLAY_RECORDED);
	assert_true(size_of(idf) > 0);
}

/* The identity file as written: its format, mode 0600, and the id the
 * database holds. */
static void assert_id_file(const char *state, const char *db_path, const char *want)
{
	char path[200], text[200], expect[200];
	struct stat st;
	sqlite3 *db;
	sqlite3_stmt *q = NULL;
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "%s/ledger.id", state);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	got = read(fd, text, sizeof(text) - 1);
	close(fd);
	assert_true(got > 0);
	text[got] = '\0';
	db = raw_open(db_path, 0);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM ledger_meta"), 1);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT value FROM ledger_meta WHERE key = 'id'", -1, &q, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	snprintf(expect, sizeof(expect), "cordon-ledger-id 1\nid %s\nschema %d\n",
		 (const char *)sqlite3_column_text(q, 0), ledger_schema_version());
	if (want != NULL)
		assert_string_equal((const char *)sqlite3_column_text(q, 0), want);
	sqlite3_finalize(q);
	sqlite3_close(db);
	assert_string_equal(text, expect);
}

static void test_ledger_id_written(void **state)
{
	struct fx *f = *state;

	assert_id_file(f->state, f->db, ledger_id(f->l));
}

/* A child of the adoption race: opens the directory, answers its id. */
static void adopt_child(const char *dir, int go, int out)
{
	struct ledger *l = NULL;
	char err[256] = "", b, line[LEDGER_ID_LEN + 1];

	if (read(go, &b, 1) < 0)
		_exit(2);
	memset(line, 0, sizeof(line));
	if (ledger_open(dir, &l, err, sizeof(err)) == 0)
		memcpy(line, ledger_id(l), LEDGER_ID_LEN);
	ledger_close(l);
	if (write(out, line, sizeof(line)) != (ssize_t)sizeof(line))
		_exit(2);
	_exit(line[0] ? 0 : 1);
}

/* A ledger from before ids (v2 here), opened by many processes at once:
 * adopted once, every one of them gets the same id, the rows are kept. */
static void test_old_ledger_adopted_once(void **state)
{
	struct fx *f = *state;
	char ids[OPEN_RACE_PROCS][LEDGER_ID_LEN + 1], err[256];
	int go[2], out[2], k, st;
	pid_t kid[OPEN_RACE_PROCS];
	sqlite3 *db;

	assert_int_equal(mkdir(f->state, 0700), 0);
	db = raw_open(f->db, 1);
	raw_exec(db, V2_SCHEMA);
	raw_exec(db, "INSERT INTO replay VALUES ('cafe', 'mail.send', 'm-old', '" "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'done', '{\"sent\":1}', 1, 1, 'e0', 1, 1, '', 0)");
	sqlite3_close(db);
	assert_int_equal(chmod(f->db, 0600), 0);
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(out), 0);
	for (k = 0; k < OPEN_RACE_PROCS; k++) {
		kid[k] = fork();
		assert_true(kid[k] >= 0);
		if (kid[k] == 0) {
			close(go[1]);
			close(out[0]);
			adopt_child(f->state, go[0], out[1]);
		}
	}
	close(go[0]);
	close(out[1]);
	close(go[1]);
	for (k = 0; k < OPEN_RACE_PROCS; k++)
		assert_int_equal(read(out[0], ids[k], sizeof(ids[k])), (ssize_t)sizeof(ids[k]));
	close(out[0]);
	for (k = 0; k < OPEN_RACE_PROCS; k++) {
		assert_int_equal(waitpid(kid[k], &st, 0), kid[k]);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		assert_string_equal(ids[k], ids[0]);
	}
	assert_id_file(f->state, f->db, ids[0]);
	assert_int_equal(ledger_open(f->state, &f->l, err, sizeof(err)), 0);
	assert_string_equal(ledger_id(f->l), ids[0]);
	{
		struct ledger_call anon = call_of("cafe", "mail.send", "", "e1", "2024-05-01");
		char *resp = NULL;

		assert_int_equal(ledger_replay_begin(f->l, &anon, "m-old", DIG_A, 0, -1, &resp, err, sizeof(err)),
				 LEDGER_REPLAY_RECORDED);
		free(resp);
	}
}

#define ROT_RECORDS 50

/* Flips one bit of the last byte of every copy of text in the file (a
 * key lives in its leaf and may be copied into an interior page). */
static int rot_bytes(const char *path, const char *text)
{
	size_t len = strlen(text), i;
	char *buf;
	off_t size = size_of(path);
	int fd, hits = 0;

	if (size <= 0 || size > (1 << 24))
		fail_msg("%s: size %lld", path, (long long)size);
	buf = malloc((size_t)size);
	assert_non_null(buf);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, (size_t)size, 0), size);
	for (i = 0; i + len <= (size_t)size; i++)
		if (memcmp(buf + i, text, len) == 0) {
			buf[i + len - 1] ^= 0x01;
			hits++;
		}
	assert_int_equal(pwrite(fd, buf, (size_t)size, 0), size);
	close(fd);
	free(buf);
	return hits;
}

struct found {
	int problems, notes;
	char first[256];
};

static void found_one(const char *line, int problem, void *arg)
{
	struct found *fo = arg;

	if (problem && fo->problems++ == 0)
		snprintf(fo->first, sizeof(fo->first), "%s", line);
	fo->notes += !problem;
}

/* Regression (issue 15): one rotted row (a flipped bit in a record's
 * key) went unnoticed and its id ran again.  The open refuses the ledger
 * quoting SQLite's report, and ledger_check() finds it. */
static void test_ledger_rotted_row_detected(void **state)
{
	struct fx *f = *state;
	struct found fo = { 0 };
	char err[512], mid[32];
	int i;

	for (i = 0; i < ROT_RECORDS; i++) {
		snprintf(mid, sizeof(mid), "msg-%04d", i);
		record_done(f->l, mid);
	}
	assert_int_equal(ledger_check(f->state, found_one, &fo, err, sizeof(err)), 0);
	assert_int_equal(fo.problems, 0);
	ledger_close(f->l); /* the last close checkpoints: every row is in the file */
	f->l = NULL;
	assert_true(rot_bytes(f->db, "msg-0017") >= 1);

	assert_int_equal(ledger_open(f->state, &f->l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "failed its integrity check"));
	assert_non_null(strstr(err, "row not in PRIMARY KEY order for replay"));
	memset(&fo, 0, sizeof(fo));
	assert_int_equal(ledger_check(f->state, found_one, &fo, err, sizeof(err)), 1);
	assert_true(fo.problems >= 1);
	assert_non_null(strstr(fo.first, "integrity: row not in PRIMARY KEY order for replay"));
}

/* ledger_check() looks and changes nothing: no ledger is an error and
 * makes nothing; a lost database is a problem; a sound one says which. */
static void test_ledger_check(void **state)
{
	struct fx *f = *state;
	struct found fo = { 0 };
	char err[512];

	assert_int_equal(ledger_check(f->state, found_one, &fo, err, sizeof(err)), -1);
	assert_int_equal(size_of(f->state), -1);
	assert_int_equal(ledger_open(f->state, &f->l, err, sizeof(err)), 0);
	record_done(f->l, "m-1");
	assert_int_equal(ledger_check(f->state, found_one, &fo, err, sizeof(err)), 0);
	assert_int_equal(fo.problems, 0);
	assert_true(fo.notes >= 3);
	ledger_close(f->l);
	f->l = NULL;
	unlink_db_files(f);
	memset(&fo, 0, sizeof(fo));
	assert_int_equal(ledger_check(f->state, found_one, &fo, err, sizeof(err)), 1);
	assert_non_null(strstr(fo.first, "is missing"));
	assert_int_equal(size_of(f->db), -1);
}

/* Regression (issue 15): a mistyped --state-dir made its missing
 * parents and a new, empty ledger.  A named directory's parent must
 * exist; only the default place gets its parents. */
static void test_state_dir_missing_parent_refused(void **state)
{
	struct fx *f = *state;
	char dir[300], home[200], def[300], err[512];
	struct stat st;

	snprintf(dir, sizeof(dir), "%s/typo/state", f->tmp);
	setenv("HOME", "/nonexistent-home", 1);
	unsetenv("XDG_STATE_HOME");
	assert_int_equal(ledger_default_parents(dir, 1, err, sizeof(err)), 0);
	assert_int_equal(ledger_open(dir, &f->l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "its parent does not exist"));
	snprintf(dir, sizeof(dir), "%s/typo", f->tmp);
	assert_int_equal(lstat(dir, &st), -1); /* nothing made */

	/* the default place on a fresh account: ~/.local/state made 0700 */
	snprintf(home, sizeof(home), "%s/home", f->tmp);
	assert_int_equal(mkdir(home, 0700), 0);
	setenv("HOME", home, 1);
	assert_int_equal(ledger_state_dir(NULL, 1, def, sizeof(def), err, sizeof(err)), 0);
	assert_int_equal(ledger_default_parents(def, 1, err, sizeof(err)), 0);
	assert_int_equal(ledger_open(def, &f->l, err, sizeof(err)), 0);
	snprintf(dir, sizeof(dir), "%s/.local/state", home);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	unsetenv("HOME");
}

static void test_state_dir(void **state)
{
	char dir[64], err[64], longer[80];

	(void)state;
	setenv("HOME", "/home/ann", 1);
	setenv("XDG_STATE_HOME", "/xdg", 1);
	assert_int_equal(ledger_state_dir("/given", 1, dir, sizeof(dir), err, sizeof(err)), 0);
	assert_string_equal(dir, "/given");
	assert_int_equal(ledger_state_dir(NULL, 0, dir, sizeof(dir), err, sizeof(err)), 0);
	assert_string_equal(dir, "/var/lib/cordon");
	assert_int_equal(ledger_state_dir(NULL, 1, dir, sizeof(dir), err, sizeof(err)), 0);
	assert_string_equal(dir, "/xdg/cordon");
	setenv("XDG_STATE_HOME", "relative", 1);
	assert_int_equal(ledger_state_dir(NULL, 1, dir, sizeof(dir), err, sizeof(err)), 0);
	assert_string_equal(dir, "/home/ann/.local/state/cordon");
	unsetenv("XDG_STATE_HOME");
	unsetenv("HOME");
	assert_int_equal(ledger_state_dir(NULL, 1, dir, sizeof(dir), err, sizeof(err)), 0);
	assert_string_equal(dir, "");
	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	assert_int_equal(ledger_state_dir(longer, 1, dir, sizeof(dir), err, sizeof(err)), -1);
	assert_string_equal(err, "state directory path too long");
}

/* A handle does not cross fork(): the child gets an error, not a shared
 * connection. */
static void test_handle_refused_in_child(void **state)
{
	struct fx *f = *state;
	struct ledger_call c = call_of("cafe", "mail.send", "ann", "e1", "2024-05-01");
	char err[256];
	pid_t kid;
	int st;

	kid = fork();
	assert_true(kid >= 0);
	if (kid == 0) {
		enum ledger_budget b = ledger_budget_take(f->l, &c, 1, 1, err, sizeof(err));
		_exit(b == LEDGER_BUDGET_ERROR && strstr(err, "child process") != NULL ? 0 : 1);
	}
	assert_int_equal(waitpid(kid, &st, 0), kid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(ledger_budget_take(f->l, &c, 1, 1, err, sizeof(err)), LEDGER_BUDGET_OK);
}

/* ---- PostgreSQL alone ------------------------------------------------- */

/* A schema newer than this build is refused, naming the version, and left
 * as it is. */
static void test_pg_refuses_newer_schema(void **state)
{
	struct fx *f = *state;
	PGconn *c = pg_raw();
	long long v = pg_raw_exec(c, "SELECT max(version) FROM cordon_schema", 0, NULL);
	char err[256], want[32];

	assert_true(v >= 1);
	ledger_close(f->l);
	f->l = NULL;
	pg_raw_exec(c, "UPDATE cordon_schema SET version = version + 1", 0, NULL);
	assert_int_equal(ledger_open(pg_url, &f->l, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "version %lld", v + 1);
	assert_non_null(strstr(err, want));
	assert_non_null(strstr(err, "PostgreSQL at "));
	assert_int_equal(pg_raw_exec(c, "SELECT max(version) FROM cordon_schema", 0, NULL), v + 1);
	PQfinish(c);
}

/* A bad URL and a server that is not there are errors naming the server
 * and never its password; the ledger id is kept in the database. */
static void test_pg_open_errors(void **state)
{
	struct fx *f = *state;
	struct ledger *l = NULL;
	char err[512];
	PGconn *c = pg_raw();
	PGresult *res = PQexec(c, "SELECT value FROM cordon_meta WHERE key = 'ledger_id'");

	assert_int_equal(PQntuples(res), 1);
	assert_string_equal(PQgetvalue(res, 0, 0), ledger_id(f->l));
	PQclear(res);
	PQfinish(c);
	assert_string_equal(ledger_backend(f->l), "postgresql");
	assert_int_equal(ledger_open("postgresql://cordon:s3cret@/cordon?host=/nonexistent", &l, err, sizeof(err)),
			 -1);
	assert_null(l);
	assert_non_null(strstr(err, "PostgreSQL at /nonexistent"));
	assert_null(strstr(err, "s3cret"));
	assert_int_equal(ledger_open("postgresql://cordon:s3cret@/cordon?nosuchoption=1", &l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "bad PostgreSQL URL"));
	assert_null(strstr(err, "s3cret"));
}

/* The owner of a pending record on another host is judged by its lease:
 * live, it is waited for (here: until cancel_fd, already readable, stops
 * the wait); expired or gone, the record is in doubt at once. */
static void test_pg_lease_expiry_in_doubt(void **state)
{
	struct fx *f = *state;
	struct ledger_call c = call_of("cafe", "mail.send", "ann", "e1", "2024-05-01");
	struct ledger *other = NULL;
	char err[256], *resp = NULL;
	int cancel[2];
	PGconn *raw = pg_raw();
	const char *owner_of_m1 = "UPDATE cordon_owner SET boot = 'another-host' WHERE id ="
				  " (SELECT owner FROM cordon_replay WHERE message_id = 'm1')";

	assert_int_equal(pipe(cancel), 0);
	assert_int_equal(write(cancel[1], "x", 1), 1);
	assert_int_equal(ledger_open(pg_url, &other, err, sizeof(err)), 0);
	assert_int_equal(ledger_replay_begin(other, &c, "m1", DIG_A, 0, -1, &resp, err, sizeof(err)),
			 LEDGER_REPLAY_RUN);
	/* another host's owner with a live lease: waited for */
	pg_raw_exec(raw, owner_of_m1, 0, NULL);
	assert_int_equal(ledger_replay_begin(f->l, &c, "m1", DIG_A, 600000, cancel[0], &resp, err, sizeof(err)),
			 LEDGER_REPLAY_CANCELLED);
	/* its lease ran out: in doubt, without waiting */
	pg_raw_exec(raw,
		    "UPDATE cordon_owner SET expires = clock_timestamp() - interval '1 second' WHERE id ="
		    " (SELECT owner FROM cordon_replay WHERE message_id = 'm1')",
		    0, NULL);
	assert_int_equal(ledger_replay_begin(f->l, &c, "m1", DIG_A, 600000, cancel[0], &resp, err, sizeof(err)),
			 LEDGER_REPLAY_IN_DOUBT);
	{
		struct ledger_filter doubt = {.state = "in_doubt"};
		struct owner_seen seen = {0};

		assert_int_equal(ledger_replay_list(f->l, &doubt, owner_of, &seen, err, sizeof(err)), 0);
		assert_int_equal(seen.count, 1);
		assert_int_equal(seen.owner, LEDGER_OWNER_GONE);
	}
	/* a clean close ends the lease: its records are in doubt at once */
	assert_int_equal(ledger_replay_begin(other, &c, "m2", DIG_A, 0, -1, &resp, err, sizeof(err)),
			 LEDGER_REPLAY_RUN);
	pg_raw_exec(raw,
		    "UPDATE cordon_owner SET boot = 'another-host' WHERE id ="
		    " (SELECT owner FROM cordon_replay WHERE message_id = 'm2')",
		    0, NULL);
	ledger_close(other);
	assert_int_equal(ledger_replay_begin(f->l, &c, "m2", DIG_A, 600000, cancel[0], &resp, err, sizeof(err)),
			 LEDGER_REPLAY_IN_DOUBT);
	close(cancel[0]);
	close(cancel[1]);
	PQfinish(raw);
}

/* Processes opening a fresh database at once: the advisory lock lets
 * one migrate and draw the id, every other finds it done; all agree on the
 * id and none fails. */
static void test_pg_first_open_race(void **state)
{
	struct fx *f = *state;
	enum { N = 8 };
	char ids[N][LEDGER_ID_LEN + 1], err[256];
	int out[N][2], go[2], k, st;
	pid_t kid[N];
	char b = 'g';

	ledger_close(f->l);
	f->l = NULL;
	pg_wipe();
	assert_int_equal(pipe(go), 0);
	for (k = 0; k < N; k++) {
		assert_int_equal(pipe(out[k]), 0);
		kid[k] = fork();
		assert_true(kid[k] >= 0);
		if (kid[k] == 0) {
			struct ledger *l = NULL;
			char c;

			close(go[1]);
			if (read(go[0], &c, 1) != 1 || ledger_open(pg_url, &l, err, sizeof(err)) != 0)
				_exit(2);
			_exit(write(out[k][1], ledger_id(l), LEDGER_ID_LEN) == LEDGER_ID_LEN ? 0 : 3);
		}
		close(out[k][1]);
	}
	close(go[0]);
	for (k = 0; k < N; k++)
		assert_int_equal(write(go[1], &b, 1), 1);
	close(go[1]);
	for (k = 0; k < N; k++) {
		assert_int_equal(waitpid(kid[k], &st, 0), kid[k]);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		assert_int_equal(read(out[k][0], ids[k], LEDGER_ID_LEN), LEDGER_ID_LEN);
		ids[k][LEDGER_ID_LEN] = '\0';
		close(out[k][0]);
		assert_string_equal(ids[k], ids[0]);
	}
}

/* Day counters older than 30 days before the call's day go, as on
 * SQLite (test_budget_prunes_old_days). */
static void test_pg_budget_prunes_old_days(void **state)
{
	struct fx *f = *state;
	struct ledger_call old = call_of("cafe", "mail.send", "ann", "e1", "2024-01-01");
	struct ledger_call edge = call_of("cafe", "mail.send", "ann", "e1", "2024-01-20");
	struct ledger_call now = call_of("cafe", "mail.send", "ann", "e2", "2024-02-15");
	char err[256];
	PGconn *c = pg_raw();

	assert_int_equal(ledger_budget_take(f->l, &old, 0, 9, err, sizeof(err)), LEDGER_BUDGET_OK);
	assert_int_equal(ledger_budget_take(f->l, &edge, 0, 9, err, sizeof(err)), LEDGER_BUDGET_OK);
	assert_int_equal(pg_raw_exec(c, "SELECT count(*) FROM cordon_budget_day", 0, NULL), 2);
	assert_int_equal(ledger_budget_take(f->l, &now, 0, 9, err, sizeof(err)), LEDGER_BUDGET_OK);
	/* 2024-01-20 is 26 days before 2024-02-15: kept; 2024-01-01 is 45: gone */
	assert_int_equal(pg_raw_exec(c, "SELECT count(*) FROM cordon_budget_day WHERE day = '2024-01-20'", 0, NULL), 1);
	assert_int_equal(pg_raw_exec(c, "SELECT count(*) FROM cordon_budget_day WHERE day = '2024-01-01'", 0, NULL), 0);
	PQfinish(c);
}

/* The owner of another handle on this boot is judged by its process, as
 * on SQLite: running, it is waited for (until cancel_fd, already readable,
 * stops the wait); a reused pid (another start time) is gone at once; a
 * pid from another pid namespace cannot be judged and is waited for. */
static void test_pg_owner_identity(void **state)
{
	struct fx *f = *state;
	struct ledger_call c = call_of("cafe", "mail.send", "ann", "e1", "2024-05-01");
	struct ledger *other = NULL;
	char err[256], *resp = NULL;
	const char *ids[] = { "alive", "reused", "ns" };
	const char *forge[] = {
		NULL,
		"UPDATE cordon_owner SET start = start + 1"
		" WHERE id = (SELECT owner FROM cordon_replay WHERE message_id = $1)",
		"UPDATE cordon_owner SET pidns = pidns + 1, pid = 1"
		" WHERE id = (SELECT owner FROM cordon_replay WHERE message_id = $1)",
	};
	const enum ledger_replay want[] = { LEDGER_REPLAY_CANCELLED, LEDGER_REPLAY_IN_DOUBT, LEDGER_REPLAY_CANCELLED };
	int cancel[2], i;
	PGconn *raw = pg_raw();

	assert_int_equal(pipe(cancel), 0);
	assert_int_equal(write(cancel[1], "x", 1), 1);
	assert_int_equal(ledger_open(pg_url, &other, err, sizeof(err)), 0);
	for (i = 0; i < 3; i++) {
		assert_int_equal(ledger_replay_begin(other, &c, ids[i], DIG_A, 0, -1, &resp, err, sizeof(err)),
				 LEDGER_REPLAY_RUN);
		if (forge[i] != NULL)
			pg_raw_exec(raw, forge[i], 1, &ids[i]);
		assert_int_equal(
			ledger_replay_begin(f->l, &c, ids[i], DIG_A, 600000, cancel[0], &resp, err, sizeof(err)),
			want[i]);
		assert_null(resp);
	}
	ledger_close(other);
	close(cancel[0]);
	close(cancel[1]);
	PQfinish(raw);
}

/* A forked child that closes its copy of the handle leaves the parent's
 * connections alone (closing them would end the parent's sessions). */
static void test_pg_close_in_child(void **state)
{
	struct fx *f = *state;
	struct ledger_call c = call_of("cafe", "mail.send", "ann", "e1", "2024-05-01");
	char err[256];
	pid_t kid;
	int st;

	kid = fork();
	assert_true(kid >= 0);
	if (kid == 0) {
		ledger_close(f->l);
		_exit(0);
	}
	assert_int_equal(waitpid(kid, &st, 0), kid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(ledger_budget_take(f->l, &c, 0, 5, err, sizeof(err)), LEDGER_BUDGET_OK);
	assert_int_equal(ledger_budget_take(f->l, &c, 0, 5, err, sizeof(err)), LEDGER_BUDGET_OK);
}

/* ledger_exists() on a URL asks the server and creates nothing: a
 * listing of an empty database leaves it empty. */
static void test_pg_exists(void **state)
{
	struct fx *f = *state;
	PGconn *raw = pg_raw();

	assert_int_equal(ledger_exists(pg_url), 1);
	ledger_close(f->l);
	f->l = NULL;
	pg_wipe();
	assert_int_equal(ledger_exists(pg_url), 0);
	assert_int_equal(pg_raw_exec(raw, "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'cordon%'", 0, NULL), 0);
	/* a server that cannot be asked: opening it will say why */
	assert_int_equal(ledger_exists("postgresql:///cordon?host=/nonexistent"), 1);
	PQfinish(raw);
}

/* tests/lib/pgtmp VERB on the test's server. */
static void pgtmp(const char *verb)
{
	const char *dir = getenv("CORDON_TEST_PGTMP"), *src = getenv("CORDON_SRC");
	char cmd[1024];

	assert_non_null(dir);
	snprintf(cmd, sizeof(cmd), "%s/tests/lib/pgtmp %s '%s' >/dev/null", src != NULL ? src : ".", verb, dir);
	assert_int_equal(system(cmd), 0);
}

/* The server restarted between two calls: the next call reconnects and
 * succeeds (the closed socket is seen before anything is sent), and what
 * was recorded before is still there.  While the server is down a call
 * fails, naming the server, and counts nothing. */
static void test_pg_server_restarted(void **state)
{
	struct fx *f = *state;
	struct ledger_call c = call_of("cafe", "mail.send", "ann", "e1", "2024-05-01");
	char err[256], *resp = NULL;

	assert_int_equal(ledger_budget_take(f->l, &c, 0, 3, err, sizeof(err)), LEDGER_BUDGET_OK);
	pgtmp("restart");
	assert_int_equal(ledger_budget_take(f->l, &c, 0, 3, err, sizeof(err)), LEDGER_BUDGET_OK);
	pgtmp("stop");
	assert_int_equal(ledger_budget_take(f->l, &c, 0, 3, err, sizeof(err)), LEDGER_BUDGET_ERROR);
	assert_non_null(strstr(err, "PostgreSQL at "));
	pgtmp("restart");
	/* the failed call counted nothing: one more fits, then the day is spent */
	assert_int_equal(ledger_budget_take(f->l, &c, 0, 3, err, sizeof(err)), LEDGER_BUDGET_OK);
	assert_int_equal(ledger_budget_take(f->l, &c, 0, 3, err, sizeof(err)), LEDGER_BUDGET_DAY);
	assert_int_equal(ledger_replay_begin(f->l, &c, "m1", DIG_A, 0, -1, &resp, err, sizeof(err)),
			 LEDGER_REPLAY_RUN);
}

/* Kills the ledger's own connection (not the renewal one) from outside
 * and waits until its backend has exited (so its socket is closed). */
static void pg_kill_ledger_conn(void)
{
	PGconn *raw = pg_raw();

	assert_true(pg_raw_exec(raw,
				"SELECT count(pg_terminate_backend(pid, 10000)) FROM pg_stat_activity"
				" WHERE application_name = 'cordon-ledger' AND pid <> pg_backend_pid()",
				0, NULL) >= 1);
	PQfinish(raw);
}

/* The connection killed under the idle ledger (pg_terminate_backend from
 * a second connection): the next call reconnects.  The server gone
 * between the tool and its record: the record fails clearly, and however
 * the caller retries, a tool that was let run is never let run again. */
static void test_pg_connection_killed(void **state)
{
	struct fx *f = *state;
	struct ledger_call c = call_of("cafe", "mail.send", "ann", "e1", "2024-05-01");
	char err[256], *resp = NULL;
	int ran = 0;
	enum ledger_replay r;

	pg_kill_ledger_conn();
	r = ledger_replay_begin(f->l, &c, "m1", DIG_A, 0, -1, &resp, err, sizeof(err));
	assert_int_equal(r, LEDGER_REPLAY_RUN);
	ran++;
	pgtmp("stop");
	assert_int_equal(ledger_replay_finish(f->l, &c, "m1", "{\"ok\":1}", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "PostgreSQL at "));
	pgtmp("restart");
	r = ledger_replay_begin(f->l, &c, "m1", DIG_A, 0, -1, &resp, err, sizeof(err));
	assert_int_equal(r, LEDGER_REPLAY_IN_DOUBT);
	/* the answer can still be recorded by its owner, and is then replayed */
	assert_int_equal(ledger_replay_finish(f->l, &c, "m1", "{\"ok\":1}", err, sizeof(err)), 0);
	r = ledger_replay_begin(f->l, &c, "m1", DIG_A, 0, -1, &resp, err, sizeof(err));
	assert_int_equal(r, LEDGER_REPLAY_RECORDED);
	assert_string_equal(resp, "{\"ok\":1}");
	free(resp);
	assert_int_equal(ran, 1);
}

int main(void)
{
	/* The semantic tests: the same on every back end. */
	const struct CMUnitTest both[] = {
		cmocka_unit_test_setup_teardown(test_budget_per_run, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_budget_per_day, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_tenant_budget_isolated, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_budget_refusal_counts_neither, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_bad_input_is_an_error, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_replay_records_once, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_tenant_replay_isolated, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_replay_conflict, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_user_replay_isolated, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_replay_abandon, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_replay_wait_cancelled, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_replay_two_threads, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_budget_threads, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_replay_two_processes_race, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_replay_other_process_waits, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_replay_crashed_owner_in_doubt, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_handle_refused_in_child, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_list_and_forget, setup_open, teardown),
	};
	const struct CMUnitTest pg_only[] = {
		cmocka_unit_test_setup_teardown(test_pg_refuses_newer_schema, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_pg_open_errors, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_pg_lease_expiry_in_doubt, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_pg_connection_killed, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_pg_owner_identity, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_pg_close_in_child, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_pg_exists, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_pg_first_open_race, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_pg_budget_prunes_old_days, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_pg_server_restarted, setup_open, teardown),
	};
	/* SQLite alone, and the semantic tests that forge rows in its file. */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_open_creates_private_wal, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_open_refuses_links_and_strangers, setup_dir, teardown),
		cmocka_unit_test_setup_teardown(test_migrates_v1, setup_dir, teardown),
		cmocka_unit_test_setup_teardown(test_migrates_v2, setup_dir, teardown),
		cmocka_unit_test_setup_teardown(test_refuses_newer_schema, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_first_open_race, setup_dir, teardown),
		cmocka_unit_test_setup_teardown(test_budget_prunes_old_days, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_replay_owner_identity, setup_open, teardown),
		cmocka_unit_test(test_state_dir),
		cmocka_unit_test_setup_teardown(test_ledger_truncated_refused, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_ledger_deleted_refused, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_ledger_deleted_while_open_refused, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_ledger_swapped_refused, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_ledger_id_file_rewritten, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_ledger_id_written, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_old_ledger_adopted_once, setup_dir, teardown),
		cmocka_unit_test_setup_teardown(test_ledger_rotted_row_detected, setup_open, teardown),
		cmocka_unit_test_setup_teardown(test_ledger_check, setup_dir, teardown),
		cmocka_unit_test_setup_teardown(test_state_dir_missing_parent_refused, setup_dir, teardown),
	};

	int failed;

	pg_url = getenv("CORDON_TEST_LEDGER_URL");
	if (pg_url != NULL && pg_url[0] == '\0')
		pg_url = NULL;
	failed = cmocka_run_group_tests_name(pg_url != NULL ? "ledger on PostgreSQL" : "ledger on SQLite", both,
					     NULL, NULL);
	if (pg_url != NULL)
		return failed + cmocka_run_group_tests_name("PostgreSQL alone", pg_only, NULL, NULL);
	return failed + cmocka_run_group_tests_name("SQLite alone", tests, NULL, NULL);
}
