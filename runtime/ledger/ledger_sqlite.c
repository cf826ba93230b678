/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ledger_sqlite.c - ledger.h on one SQLite database per state directory
 * (docs/ledger.md has the schema, the replay state machine and the
 * guarantees).
 *
 * Every decision is one BEGIN IMMEDIATE transaction: the write lock is
 * taken before the first read, so two processes deciding on the same row
 * are serialised by SQLite (WAL mode, busy timeout) and a read-then-write
 * never has to be upgraded, which in WAL mode fails with SQLITE_BUSY
 * instead of waiting.  Inside one process the connection is shared by the
 * bridge's call threads and guarded by one mutex, held for one transaction
 * at a time and never while waiting for another owner to finish.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "runtime/ledger/ledger.h"
#include "runtime/ledger/ledger_id.h"
#include "runtime/ledger/ledger_common.h"
#include "runtime/ledger/ledger_backend.h"

#define LEDGER_FILE "ledger.sqlite3"
#define LEDGER_BUSY_MS 5000

/*
 * The schema, one step per version: step i takes user_version i to i + 1 in
 * one transaction, so a crash mid-migration leaves the previous version
 * whole.  Steps are only ever appended; a shipped step is never edited.
 */
static const char *const ledger_steps[] = {
	/* v1: the base tables. */
	"CREATE TABLE budget_run ("
	" exec_id TEXT NOT NULL,"
	" tool TEXT NOT NULL,"
	" calls INTEGER NOT NULL,"
	" created INTEGER NOT NULL,"
	" PRIMARY KEY (exec_id, tool)"
	") WITHOUT ROWID;"
	"CREATE TABLE budget_day ("
	" app TEXT NOT NULL,"
	" user TEXT NOT NULL,"
	" tool TEXT NOT NULL,"
	" day TEXT NOT NULL,"
	" calls INTEGER NOT NULL,"
	" PRIMARY KEY (app, user, tool, day)"
	") WITHOUT ROWID;"
	"CREATE TABLE replay ("
	" app TEXT NOT NULL,"
	" tool TEXT NOT NULL,"
	" message_id TEXT NOT NULL,"
	" params_sha256 TEXT NOT NULL,"
	" state TEXT NOT NULL CHECK ((state = 'pending' AND response IS NULL)"
	"  OR (state = 'done' AND response IS NOT NULL)),"
	" response TEXT,"
	" owner_pid INTEGER NOT NULL,"
	" owner_start INTEGER NOT NULL,"
	" exec_id TEXT NOT NULL,"
	" created INTEGER NOT NULL,"
	" updated INTEGER NOT NULL,"
	" PRIMARY KEY (app, tool, message_id)"
	") WITHOUT ROWID;",
	/* v2: a pid and start time name a process only within one boot and one
	 * pid namespace; the owner check needs both to tell "gone" (another
	 * boot) from "cannot tell" (another namespace).  Rows written by v1
	 * carry '' and 0: unknown, the pid and start time alone decide.  The
	 * indexes keep the opportunistic prune a range scan. */
	"ALTER TABLE replay ADD COLUMN owner_boot TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE replay ADD COLUMN owner_pidns INTEGER NOT NULL DEFAULT 0;"
	"CREATE INDEX budget_day_by_day ON budget_day (day);"
	"CREATE INDEX budget_run_by_created ON budget_run (created);",
	/* v3: the tenant joins the day and replay keys, so tenants sharing a
	 * state directory share no budget and no replay record; the user joins
	 * the replay key, so one user's recorded answers (and whether an id
	 * was used) are not another's.  SQLite cannot
	 * change a primary key in place: each table is rebuilt (create, copy,
	 * drop, rename) inside the step's transaction.  Rows written before
	 * carry tenant '': they were written without isolation and stay
	 * visible to calls that have no tenant, to no one else. */
	"CREATE TABLE budget_day_v3 ("
	" app TEXT NOT NULL,"
	" tenant TEXT NOT NULL,"
	" user TEXT NOT NULL,"
	" tool TEXT NOT NULL,"
	" day TEXT NOT NULL,"
	" calls INTEGER NOT NULL,"
	" PRIMARY KEY (app, tenant, user, tool, day)"
	") WITHOUT ROWID;"
	"INSERT INTO budget_day_v3 (app, tenant, user, tool, day, calls)"
	" SELECT app, '', user, tool, day, calls FROM budget_day;"
	"DROP TABLE budget_day;"
	"ALTER TABLE budget_day_v3 RENAME TO budget_day;"
	"CREATE INDEX budget_day_by_day ON budget_day (day);"
	"CREATE TABLE replay_v3 ("
	" app TEXT NOT NULL,"
	" tenant TEXT NOT NULL,"
	" user TEXT NOT NULL,"
	" tool TEXT NOT NULL,"
	" message_id TEXT NOT NULL,"
	" params_sha256 TEXT NOT NULL,"
	" state TEXT NOT NULL CHECK ((state = 'pending' AND response IS NULL)"
	"  OR (state = 'done' AND response IS NOT NULL)),"
	" response TEXT,"
	" owner_pid INTEGER NOT NULL,"
	" owner_start INTEGER NOT NULL,"
	" owner_boot TEXT NOT NULL,"
	" owner_pidns INTEGER NOT NULL,"
	" exec_id TEXT NOT NULL,"
	" created INTEGER NOT NULL,"
	" updated INTEGER NOT NULL,"
	" PRIMARY KEY (app, tenant, user, tool, message_id)"
	") WITHOUT ROWID;"
	"INSERT INTO replay_v3 (app, tenant, user, tool, message_id, params_sha256, state, response, owner_pid,"
	" owner_start, owner_boot, owner_pidns, exec_id, created, updated)"
	" SELECT app, '', '', tool, message_id, params_sha256, state, response, owner_pid, owner_start,"
	" owner_boot, owner_pidns, exec_id, created, updated FROM replay;"
	"DROP TABLE replay;"
	"ALTER TABLE replay_v3 RENAME TO replay;",
	/* v4: the forget log of `cordon ledger forget`.  A table, not a file
	 * beside the database: its row is written in the transaction that
	 * deletes the record, so there is a row exactly when a record went,
	 * and it has the database's owner and mode. */
	"CREATE TABLE replay_forgotten ("
	" time INTEGER NOT NULL,"
	" uid INTEGER NOT NULL,"
	" app TEXT NOT NULL,"
	" tenant TEXT NOT NULL,"
	" user TEXT NOT NULL,"
	" tool TEXT NOT NULL,"
	" message_id TEXT NOT NULL,"
	" state TEXT NOT NULL,"
	" exec_id TEXT NOT NULL,"
	" params_sha256 TEXT NOT NULL,"
	" response TEXT,"
	" forced INTEGER NOT NULL,"
	" reason TEXT NOT NULL"
	");",
	/* v5: the ledger's identity (ledger_id.h).  The step makes the table;
	 * ledger_sq_open() draws the id and writes its row in a transaction of
	 * its own, because a step is fixed text and the id is random. */
	"CREATE TABLE ledger_meta ("
	" key TEXT PRIMARY KEY NOT NULL,"
	" value TEXT NOT NULL"
	") WITHOUT ROWID;",
};
#define LEDGER_VERSION ((int)(sizeof(ledger_steps) / sizeof(ledger_steps[0])))
/* The first version with ledger_meta, so with an id. */
#define LEDGER_ID_SINCE 5
/* SQLite's report quoted in an error from ledger_sq_open(): its first lines. */
#define LEDGER_CHECK_QUOTED 2

/* Statements prepared once per connection, on first use. */
enum ledger_sql {
	SQL_BEGIN,
	SQL_COMMIT,
	SQL_ROLLBACK,
	SQL_RUN_GET,
	SQL_RUN_ADD,
	SQL_RUN_END,
	SQL_DAY_GET,
	SQL_DAY_ADD,
	SQL_PRUNE_DAY,
	SQL_PRUNE_RUN,
	SQL_REPLAY_GET,
	SQL_REPLAY_PUT,
	SQL_REPLAY_DONE,
	SQL_REPLAY_DROP,
	SQL_BEGIN_READ,
	SQL_REPLAY_LIST,
	SQL_REPLAY_FORGET,
	SQL_FORGET_LOG_PUT,
	SQL_FORGET_LOG_LIST,
	SQL_COUNT
};

static const char *const ledger_sql_text[SQL_COUNT] = {
	[SQL_BEGIN] = "BEGIN IMMEDIATE",
	[SQL_COMMIT] = "COMMIT",
	[SQL_ROLLBACK] = "ROLLBACK",
	[SQL_RUN_GET] = "SELECT calls FROM budget_run WHERE exec_id = ?1 AND tool = ?2",
	[SQL_RUN_ADD] = "INSERT INTO budget_run (exec_id, tool, calls, created) VALUES (?1, ?2, 1, ?3)"
			" ON CONFLICT (exec_id, tool) DO UPDATE SET calls = calls + 1",
	[SQL_RUN_END] = "DELETE FROM budget_run WHERE exec_id = ?1",
	[SQL_DAY_GET] = "SELECT calls FROM budget_day"
			" WHERE app = ?1 AND tenant = ?2 AND user = ?3 AND tool = ?4 AND day = ?5",
	[SQL_DAY_ADD] = "INSERT INTO budget_day (app, tenant, user, tool, day, calls) VALUES (?1, ?2, ?3, ?4, ?5, 1)"
			" ON CONFLICT (app, tenant, user, tool, day) DO UPDATE SET calls = calls + 1",
	[SQL_PRUNE_DAY] = "DELETE FROM budget_day WHERE day < date(?1, '-30 days')",
	[SQL_PRUNE_RUN] = "DELETE FROM budget_run WHERE created < ?1",
	[SQL_REPLAY_GET] = "SELECT params_sha256, state, response, owner_pid, owner_start, owner_boot, owner_pidns"
			   " FROM replay WHERE app = ?1 AND tenant = ?2 AND user = ?3 AND tool = ?4 AND message_id = ?5",
	[SQL_REPLAY_PUT] = "INSERT INTO replay (app, tenant, user, tool, message_id, params_sha256, state, response,"
			   " owner_pid, owner_start, owner_boot, owner_pidns, exec_id, created, updated)"
			   " VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', NULL, ?7, ?8, ?9, ?10, ?11, ?12, ?12)",
	[SQL_REPLAY_DONE] = "UPDATE replay SET state = 'done', response = ?6, updated = ?10"
			    " WHERE app = ?1 AND tenant = ?2 AND user = ?3 AND tool = ?4 AND message_id = ?5"
			    " AND state = 'pending' AND owner_pid = ?7 AND owner_start = ?8 AND owner_boot = ?9",
	[SQL_REPLAY_DROP] = "DELETE FROM replay"
			    " WHERE app = ?1 AND tenant = ?2 AND user = ?3 AND tool = ?4 AND message_id = ?5"
			    " AND state = 'pending' AND owner_pid = ?6 AND owner_start = ?7 AND owner_boot = ?8",
	/* A reader: in WAL mode it blocks no writer, so a listing piped into
	 * a slow pager holds up no supervisor. */
	[SQL_BEGIN_READ] = "BEGIN",
	/* NULL binds match anything: one fixed statement, no SQL built from
	 * the caller's words. */
	[SQL_REPLAY_LIST] = "SELECT app, tenant, user, tool, message_id, state, params_sha256, exec_id, response,"
			    " created, updated, owner_pid, owner_start, owner_boot, owner_pidns FROM replay"
			    " WHERE (?1 IS NULL OR app = ?1) AND (?2 IS NULL OR tenant = ?2) AND (?3 IS NULL OR user = ?3)"
			    " AND (?4 IS NULL OR tool = ?4) AND (?5 IS NULL OR message_id = ?5)"
			    " AND (?6 IS NULL OR state = ?6) ORDER BY created, app, tenant, user, tool, message_id",
	[SQL_REPLAY_FORGET] = "DELETE FROM replay"
			      " WHERE app = ?1 AND tenant = ?2 AND user = ?3 AND tool = ?4 AND message_id = ?5",
	[SQL_FORGET_LOG_PUT] = "INSERT INTO replay_forgotten (time, uid, app, tenant, user, tool, message_id, state,"
			       " exec_id, params_sha256, response, forced, reason)"
			       " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
	[SQL_FORGET_LOG_LIST] = "SELECT time, uid, app, tenant, user, tool, message_id, state, exec_id, forced, reason"
				" FROM replay_forgotten ORDER BY rowid",
};


struct ledger_sq {
	sqlite3 *db;
	/* The state directory, and which file the database was when opened:
	 * every transaction first checks that the name still means it. */
	int dfd;
	dev_t dev;
	ino_t ino;
	char path[PATH_MAX + sizeof("/" LEDGER_FILE)];
	char id[LEDGER_ID_HEX + 1];
	sqlite3_stmt *stmt[SQL_COUNT];
	pthread_mutex_t mu;
	struct ledger_owner self;
	char pruned_day[16]; /* the call day the last prune ran for */
	/* The SQLite code of the first failure since it was set to SQLITE_OK:
	 * opening tells a busy database (tried again) from a broken one. */
	int first_rc;
};

static int ledger_dberr(struct ledger_sq *l, const char *what, char *err, size_t n)
{
	if (l->first_rc == SQLITE_OK)
		l->first_rc = sqlite3_errcode(l->db);
	ledger_errf(err, n, "ledger: %s: %s", what, sqlite3_errmsg(l->db));
	return -1;
}


/* ---- statements and transactions ------------------------------------- */

/* The statement for sql, reset and unbound, ready for binding. */
static sqlite3_stmt *ledger_stmt(struct ledger_sq *l, enum ledger_sql sql, char *err, size_t n)
{
	if (l->stmt[sql] == NULL &&
	    sqlite3_prepare_v3(l->db, ledger_sql_text[sql], -1, SQLITE_PREPARE_PERSISTENT, &l->stmt[sql], NULL) !=
		    SQLITE_OK) {
		ledger_dberr(l, "preparing a statement", err, n);
		return NULL;
	}
	return l->stmt[sql];
}

static void ledger_done(sqlite3_stmt *st)
{
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
}

/* Binds texts to ?1..?count.  Returns 0 or an SQLite code. */
static int bind_texts(sqlite3_stmt *st, const char *const *v, int count)
{
	int i, rc;

	for (i = 0; i < count; i++) {
		rc = sqlite3_bind_text(st, i + 1, v[i], -1, SQLITE_STATIC);
		if (rc != SQLITE_OK)
			return rc;
	}
	return SQLITE_OK;
}

/* Binds who this process is (pid, start time, boot) to ?at..?at+2, as
 * both writing and finishing a pending record name the owner. */
static int bind_owner(sqlite3_stmt *st, int at, const struct ledger_owner *o)
{
	int rc = sqlite3_bind_int64(st, at, o->pid);

	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, at + 1, o->start);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, at + 2, o->boot, -1, SQLITE_STATIC);
	return rc;
}

/* Runs a statement that returns no row, after binding texts ?1..?count
 * and then one integer at ?count+1 unless nums is 0. */
static int ledger_run(struct ledger_sq *l, enum ledger_sql sql, const char *const *v, int count, int nums,
		      int64_t num, const char *what, char *err, size_t n)
{
	sqlite3_stmt *st = ledger_stmt(l, sql, err, n);
	int rc;

	if (st == NULL)
		return -1;
	rc = bind_texts(st, v, count);
	if (rc == SQLITE_OK && nums)
		rc = sqlite3_bind_int64(st, count + 1, num);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc != SQLITE_DONE) {
		ledger_dberr(l, what, err, n);
		ledger_done(st);
		return -1;
	}
	ledger_done(st);
	return 0;
}

/* One integer column of the row the key names; 0 when there is no row. */
static int ledger_count(struct ledger_sq *l, enum ledger_sql sql, const char *const *key, int count, int64_t *out,
			char *err, size_t n)
{
	sqlite3_stmt *st = ledger_stmt(l, sql, err, n);
	int rc;

	*out = 0;
	if (st == NULL)
		return -1;
	rc = bind_texts(st, key, count);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*out = sqlite3_column_int64(st, 0);
		rc = sqlite3_step(st);
	}
	ledger_done(st);
	if (rc != SQLITE_DONE)
		return ledger_dberr(l, "reading a counter", err, n);
	return 0;
}

/*
 * Does the database's name still mean the file this handle opened?  A
 * database deleted (or replaced, or emptied) under a running supervisor
 * stays open to it: what it recorded from then on would go into a file no
 * later run reads, and the later runs refuse the directory anyway (its
 * identity file names a ledger that is not there).  One fstatat per
 * transaction, beside a commit's fsync.
 */
static int ledger_same_file(struct ledger_sq *l, char *err, size_t n)
{
	struct stat st;

	if (fstatat(l->dfd, LEDGER_FILE, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == l->dev &&
	    st.st_ino == l->ino && st.st_size > 0)
		return 0;
	ledger_errf(err, n,
		    "ledger: %s was deleted, emptied or replaced while in use; nothing more is recorded "
		    "(docs/ledger.md, recovering)",
		    l->path);
	return -1;
}

/* Takes the mutex and opens the transaction; on failure holds neither. */
static int ledger_tx_begin(struct ledger_sq *l, char *err, size_t n)
{
	if (l->self.pid != getpid()) {
		/* An SQLite connection must not cross fork(): its locks stay
		 * with the parent. */
		ledger_errf(err, n, "ledger: used in a child process; open the ledger there");
		return -1;
	}
	if (ledger_same_file(l, err, n) != 0)
		return -1;
	pthread_mutex_lock(&l->mu);
	if (ledger_run(l, SQL_BEGIN, NULL, 0, 0, 0, "starting a transaction", err, n) != 0) {
		pthread_mutex_unlock(&l->mu);
		return -1;
	}
	return 0;
}

/* Commits when ok, else rolls back; releases the mutex.  Returns 0 when
 * ok and the commit went through. */
static int ledger_tx_end(struct ledger_sq *l, int ok, char *err, size_t n)
{
	int rc = -1;

	if (ok && ledger_run(l, SQL_COMMIT, NULL, 0, 0, 0, "committing", err, n) == 0)
		rc = 0;
	if (rc != 0 && sqlite3_get_autocommit(l->db) == 0)
		(void)ledger_run(l, SQL_ROLLBACK, NULL, 0, 0, 0, "rolling back", NULL, 0);
	pthread_mutex_unlock(&l->mu);
	return rc;
}

/* ---- opening: the directory, the file, the schema --------------------- */

/* dir (state_dir without trailing slashes: "dir/" would make lstat and
 * O_NOFOLLOW follow a link named dir) and the database's path in it. */
static int ledger_paths(const char *state_dir, char *dir, size_t dn, char *path, size_t pn, char *err, size_t n)
{
	size_t len;

	if (state_dir == NULL || state_dir[0] == '\0') {
		ledger_errf(err, n, "ledger: no state directory");
		return -1;
	}
	len = strlen(state_dir);
	while (len > 1 && state_dir[len - 1] == '/')
		len--;
	if (len + sizeof("/" LEDGER_FILE) > dn || len + sizeof("/" LEDGER_FILE) > pn) {
		ledger_errf(err, n, "ledger: state directory path too long");
		return -1;
	}
	memcpy(dir, state_dir, len);
	dir[len] = '\0';
	snprintf(path, pn, "%s%s%s", dir, strcmp(dir, "/") == 0 ? "" : "/", LEDGER_FILE);
	return 0;
}

/* Opens the state directory, creating it 0700 first when create is set
 * and it is absent (its parent never: a mistyped path must fail).  It must
 * be a real directory of ours that nobody else may write: SQLite opens the
 * database and its -wal and -shm files by name inside it. */
static int ledger_dir_open(const char *dir, int create, int *dfd, char *err, size_t n)
{
	struct stat st;
	int fd;

	if (create && mkdir(dir, 0700) != 0 && errno != EEXIST) {
		if (errno == ENOENT)
			ledger_errf(err, n,
				    "ledger: cannot create state directory %s: its parent does not exist (a state "
				    "directory's parent must; is the path mistyped?)",
				    dir);
		else
			ledger_errf(err, n, "ledger: cannot create state directory %s: %s", dir, strerror(errno));
		return -1;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (lstat(dir, &st) == 0 && S_ISLNK(st.st_mode))
			ledger_errf(err, n, "ledger: state directory %s is a symbolic link; refusing it", dir);
		else
			ledger_errf(err, n, "ledger: cannot open state directory %s: %s", dir, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0) {
		ledger_errf(err, n, "ledger: cannot stat state directory %s: %s", dir, strerror(errno));
		close(fd);
		return -1;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 022) != 0) {
		if (st.st_uid != geteuid())
			ledger_errf(err, n, "ledger: state directory %s belongs to uid %u, not to this user (%u)", dir,
				    (unsigned)st.st_uid, (unsigned)geteuid());
		else
			ledger_errf(err, n, "ledger: state directory %s is writable by group or others (mode %03o)",
				    dir, (unsigned)(st.st_mode & 07777));
		close(fd);
		return -1;
	}
	*dfd = fd;
	return 0;
}

/* The error for a state directory whose identity file names a ledger its
 * database is not (what: "is missing", "is empty (0 bytes)", ...). */
static void ledger_lost(const char *dir, const char *what, const struct ledger_id *named, char *err, size_t n)
{
	ledger_errf(err, n,
		    "ledger: %s/%s %s, but %s/%s names ledger %.12s: restore the database from a backup "
		    "(docs/ledger.md, recovering); a fresh one would run recorded calls again",
		    dir, LEDGER_FILE, what, dir, LEDGER_ID_FILE, named->hex);
}

/* Checks the database file, and creates it 0600 when it is absent and
 * named is NULL (SQLite would create it 0644 less the umask).  When named
 * (the identity file's id) is given, an absent or empty file is a lost
 * ledger.  A file that is a link, not ours or open to others is refused.
 * It is never opened while it may already be in use: closing any
 * descriptor of a file drops every POSIX lock this process holds on it,
 * SQLite's included. */
static int ledger_file_check(int dfd, const char *dir, const struct ledger_id *named, char *err, size_t n)
{
	struct stat st;
	int fd, tries;

	for (tries = 0; tries < 2; tries++) {
		if (fstatat(dfd, LEDGER_FILE, &st, AT_SYMLINK_NOFOLLOW) == 0)
			break;
		if (errno != ENOENT)
			goto fail;
		if (named != NULL) {
			ledger_lost(dir, "is missing", named, err, n);
			return -1;
		}
		fd = openat(dfd, LEDGER_FILE, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0) {
			close(fd);
			return 0;
		}
		if (errno != EEXIST) /* else another process made it first: check theirs */
			goto fail;
	}
	if (tries == 2)
		goto fail;
	if (S_ISLNK(st.st_mode)) {
		ledger_errf(err, n, "ledger: %s/%s is a symbolic link; refusing it", dir, LEDGER_FILE);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		ledger_errf(err, n, "ledger: %s/%s is not a regular file", dir, LEDGER_FILE);
		return -1;
	}
	if (st.st_uid != geteuid()) {
		ledger_errf(err, n, "ledger: %s/%s belongs to uid %u, not to this user (%u)", dir, LEDGER_FILE,
			    (unsigned)st.st_uid, (unsigned)geteuid());
		return -1;
	}
	if ((st.st_mode & 077) != 0) {
		ledger_errf(err, n, "ledger: %s/%s is open to group or others (mode %03o); it must be 0600", dir,
			    LEDGER_FILE, (unsigned)(st.st_mode & 07777));
		return -1;
	}
	/* The identity file is written only after the database holds the
	 * id, so by then the file has its header: empty is emptied. */
	if (named != NULL && st.st_size == 0) {
		ledger_lost(dir, "is empty (0 bytes)", named, err, n);
		return -1;
	}
	return 0;
fail:
	ledger_errf(err, n, "ledger: cannot create %s/%s: %s", dir, LEDGER_FILE, strerror(errno));
	return -1;
}

static int ledger_user_version(struct ledger_sq *l, int *v, char *err, size_t n)
{
	sqlite3_stmt *st = NULL;
	int rc;

	rc = sqlite3_prepare_v2(l->db, "PRAGMA user_version", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return ledger_dberr(l, "reading the schema version", err, n);
	return 0;
}

/* Applies the missing steps, one transaction each.  The version is read
 * inside the write transaction, so two processes opening a fresh ledger at
 * once apply each step exactly once. */
static int ledger_migrate(struct ledger_sq *l, void *arg, char *err, size_t n)
{
	char sql[64], what[64];
	int v;

	(void)arg;
	for (;;) {
		if (ledger_tx_begin(l, err, n) != 0)
			return -1;
		if (ledger_user_version(l, &v, err, n) != 0)
			goto fail;
		if (v < 0 || v > LEDGER_VERSION) {
			ledger_errf(err, n,
				    "ledger: %s has schema version %d, newer than the %d this cordon knows; "
				    "refusing it (a newer cordon wrote it; use that one)",
				    l->path, v, LEDGER_VERSION);
			goto fail;
		}
		if (v == LEDGER_VERSION)
			return ledger_tx_end(l, 1, err, n);
		snprintf(what, sizeof(what), "migrating the schema to version %d", v + 1);
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", v + 1);
		if (sqlite3_exec(l->db, ledger_steps[v], NULL, NULL, NULL) != SQLITE_OK ||
		    sqlite3_exec(l->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
			ledger_dberr(l, what, err, n);
			goto fail;
		}
		if (ledger_tx_end(l, 1, err, n) != 0)
			return -1;
	}
fail:
	ledger_tx_end(l, 0, NULL, 0);
	return -1;
}

/* Open-time failures worth another try: another process holds the lock. */
static int ledger_busy(int code)
{
	return (code & 0xff) == SQLITE_BUSY || (code & 0xff) == SQLITE_LOCKED;
}

/* Runs step until it succeeds, fails for another reason than a busy
 * database, or the deadline passes.  A step is whole transactions that a
 * busy failure rolled back, so running it again is safe. */
static int ledger_retry(struct ledger_sq *l, int (*step)(struct ledger_sq *, void *, char *, size_t), void *arg,
			uint64_t deadline, char *err, size_t n)
{
	uint64_t nap = 1;

	for (;;) {
		l->first_rc = SQLITE_OK;
		if (step(l, arg, err, n) == 0)
			return 0;
		if (!ledger_busy(l->first_rc) || !ledger_nap(deadline, &nap, -1))
			return -1;
	}
}

/*
 * WAL: readers never block the one writer.  The switch rewrites the file
 * header, so it needs the write lock, and SQLite does not always call the
 * busy handler for it: where waiting could deadlock (this connection holds
 * a read lock another writer waits on), or while another connection runs
 * WAL recovery, it answers SQLITE_BUSY at once.  Several processes opening
 * a fresh state directory together hit exactly that, so a busy answer is
 * tried again (ledger_retry).
 */
static int ledger_wal(struct ledger_sq *l, void *arg, char *err, size_t n)
{
	sqlite3_stmt *st = NULL;
	const char *mode;
	int rc = -1, got;

	(void)arg;
	got = sqlite3_prepare_v2(l->db, "PRAGMA journal_mode = WAL", -1, &st, NULL);
	if (got == SQLITE_OK)
		got = sqlite3_step(st);
	if (got != SQLITE_ROW) {
		ledger_dberr(l, "switching to WAL mode", err, n);
		goto out;
	}
	mode = (const char *)sqlite3_column_text(st, 0);
	if (mode == NULL || sqlite3_stricmp(mode, "wal") != 0) {
		ledger_errf(err, n, "ledger: %s stays in journal mode %s, not WAL", l->path, mode != NULL ? mode : "?");
		goto out;
	}
	rc = 0;
out:
	sqlite3_finalize(st);
	return rc;
}

/* ---- integrity ---------------------------------------------------------- */

static int ledger_past(void *arg)
{
	const uint64_t *deadline = arg;

	return ledger_now_ms() >= *deadline;
}

/*
 * SQLite's integrity_check, each line of its report that is not "ok" given
 * to fn and counted in *bad.  Not quick_check: a rotted key in the replay
 * table (a row out of primary-key order, a field read as NULL) is what
 * makes a lookup miss a record and run its call again, and only the full
 * check compares rows with their key order and constraints (tested:
 * quick_check answers "ok" for exactly that).  bound_ms 0: no bound, else
 * the check stops at it (SQLite's progress handler).  Returns 0 checked, 1
 * stopped at the bound, -1 with err when SQLite could not run it.
 */
static int ledger_integrity(struct ledger_sq *l, uint64_t bound_ms, void (*fn)(const char *, void *), void *arg,
			    int *bad, char *err, size_t n)
{
	uint64_t deadline = ledger_now_ms() + bound_ms;
	sqlite3_stmt *st = NULL;
	const char *line;
	int rc;

	*bad = 0;
	if (bound_ms != 0)
		sqlite3_progress_handler(l->db, 1000, ledger_past, &deadline);
	rc = sqlite3_prepare_v2(l->db, "PRAGMA integrity_check", -1, &st, NULL);
	while (rc == SQLITE_OK || rc == SQLITE_ROW) {
		rc = sqlite3_step(st);
		if (rc != SQLITE_ROW)
			break;
		line = (const char *)sqlite3_column_text(st, 0);
		if (line != NULL && strcmp(line, "ok") == 0)
			continue;
		(*bad)++;
		fn(line != NULL ? line : "(a NULL line)", arg);
	}
	sqlite3_progress_handler(l->db, 0, NULL, NULL);
	if (rc == SQLITE_INTERRUPT) {
		sqlite3_finalize(st);
		return 1;
	}
	if (rc != SQLITE_DONE)
		ledger_dberr(l, "checking integrity", err, n);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* The first lines of a failed check, for the error of ledger_sq_open(). */
struct ledger_quote {
	char text[200];
	int lines;
};

static void ledger_quote_line(const char *line, void *arg)
{
	struct ledger_quote *q = arg;
	size_t used = strlen(q->text);

	if (q->lines++ < LEDGER_CHECK_QUOTED)
		snprintf(q->text + used, sizeof(q->text) - used, "%s%s", used ? "; " : "", line);
}

static int ledger_open_check(struct ledger_sq *l, void *arg, char *err, size_t n)
{
	struct ledger_quote q = { "", 0 };
	int bad;

	(void)arg;
	if (ledger_integrity(l, LEDGER_OPEN_CHECK_MS, ledger_quote_line, &q, &bad, err, n) < 0)
		return -1;
	/* Stopped at the bound: what it reached was sound, the rest is
	 * ledger_sq_check()'s (docs/ledger.md says why that is enough). */
	if (bad == 0)
		return 0;
	ledger_errf(err, n, "ledger: %s failed its integrity check: %s%s (cordon ledger check; docs/ledger.md, recovering)",
		    l->path, q.text, bad > LEDGER_CHECK_QUOTED ? "; ..." : "");
	return -1;
}

/* ---- identity ------------------------------------------------------------ */

/* The id inside the database; "" when it has none (a schema before v5, or
 * no row).  A value that is not an id is an error. */
static int ledger_db_id(struct ledger_sq *l, char *id, char *err, size_t n)
{
	sqlite3_stmt *st = NULL;
	const char *v;
	int rc, ver;

	id[0] = '\0';
	if (ledger_user_version(l, &ver, err, n) != 0)
		return -1;
	if (ver < LEDGER_ID_SINCE)
		return 0;
	rc = sqlite3_prepare_v2(l->db, "SELECT value FROM ledger_meta WHERE key = 'id'", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		v = (const char *)sqlite3_column_text(st, 0);
		if (v == NULL || !ledger_id_ok(v)) {
			ledger_errf(err, n, "ledger: %s holds a malformed ledger id (docs/ledger.md, recovering)",
				    l->path);
			sqlite3_finalize(st);
			return -1;
		}
		memcpy(id, v, LEDGER_ID_HEX + 1);
		rc = SQLITE_DONE;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return ledger_dberr(l, "reading the ledger id", err, n);
	return 0;
}

/* With an identity file: the database must hold the id it names.  Before
 * migrating, so that a database refused is a database left as it was. */
static int ledger_id_match(struct ledger_sq *l, void *arg, char *err, size_t n)
{
	const struct ledger_id *named = arg;
	/* The directory is the path less its last component. */
	int dn = (int)(strlen(l->path) - strlen("/" LEDGER_FILE));

	if (ledger_db_id(l, l->id, err, n) != 0)
		return -1;
	if (strcmp(l->id, named->hex) == 0)
		return 0;
	if (l->id[0] == '\0')
		ledger_errf(err, n,
			    "ledger: %s holds no ledger id, but %.*s/%s names ledger %.12s: not the database kept "
			    "here; restore it (docs/ledger.md, recovering)",
			    l->path, dn, l->path, LEDGER_ID_FILE, named->hex);
	else
		ledger_errf(err, n,
			    "ledger: %s is ledger %.12s, but %.*s/%s names ledger %.12s: not the database kept "
			    "here; restore it (docs/ledger.md, recovering)",
			    l->path, l->id, dn, l->path, LEDGER_ID_FILE, named->hex);
	l->id[0] = '\0';
	return -1;
}

/* Without an identity file: the database's id, drawn now when it has
 * none, in one write transaction, so of many processes opening a fresh
 * directory (or an old ledger) at once exactly one draws it. */
static int ledger_id_take(struct ledger_sq *l, void *arg, char *err, size_t n)
{
	struct ledger_id *id = arg;
	sqlite3_stmt *st = NULL;
	int ok = 0, rc;

	if (ledger_tx_begin(l, err, n) != 0)
		return -1;
	if (ledger_db_id(l, id->hex, err, n) != 0)
		goto out;
	id->schema = LEDGER_VERSION;
	if (id->hex[0] != '\0') {
		ok = 1;
		goto out;
	}
	if (ledger_id_new(id, LEDGER_VERSION, err, n) != 0)
		goto out;
	rc = sqlite3_prepare_v2(l->db, "INSERT INTO ledger_meta (key, value) VALUES ('id', ?1)", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 1, id->hex, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc != SQLITE_DONE) {
		ledger_dberr(l, "writing the ledger id", err, n);
		goto out;
	}
	ok = 1;
out:
	sqlite3_finalize(st);
	return ledger_tx_end(l, ok, err, n);
}

/* The database's id, committed, goes to the identity file.  Never the
 * other way round: a file naming an id that no database holds would make
 * the directory refuse itself. */
static int ledger_id_adopt(struct ledger_sq *l, uint64_t deadline, const char *dir, char *err, size_t n)
{
	struct ledger_id mine, theirs;
	int r;

	if (ledger_retry(l, ledger_id_take, &mine, deadline, err, n) != 0)
		return -1;
	r = ledger_id_write(l->dfd, dir, &mine, err, n);
	if (r < 0)
		return -1;
	/* Another process wrote it meanwhile: of the same database, so the
	 * same id, or something is badly wrong. */
	if (r == 1) {
		r = ledger_id_read(l->dfd, dir, &theirs, err, n);
		if (r < 0)
			return -1;
		if (r == 0 || strcmp(theirs.hex, mine.hex) != 0) {
			ledger_errf(err, n, "ledger: %s is ledger %.12s, but %s/%s, written meanwhile, names %.12s",
				    l->path, mine.hex, dir, LEDGER_ID_FILE, r == 0 ? "none (it went again)" : theirs.hex);
			return -1;
		}
	}
	memcpy(l->id, mine.hex, sizeof(l->id));
	return 0;
}

/* ---- open, close --------------------------------------------------------- */

int ledger_schema_version(void)
{
	return LEDGER_VERSION;
}

const char *ledger_sq_id(const struct ledger_sq *l)
{
	return l->id;
}

/* A handle holding nothing yet: ledger_sq_close() frees it from any state. */
static struct ledger_sq *ledger_new(char *err, size_t n)
{
	struct ledger_sq *l = calloc(1, sizeof(*l));

	if (l == NULL) {
		ledger_errf(err, n, "ledger: out of memory");
		return NULL;
	}
	l->dfd = -1;
	if (pthread_mutex_init(&l->mu, NULL) != 0) {
		ledger_errf(err, n, "ledger: cannot create its mutex");
		free(l);
		return NULL;
	}
	return l;
}

/* Opens the SQLite connection to l->path (no SQLITE_OPEN_CREATE: the file
 * was checked or made 0600 before; if it is gone now, something else is at
 * work in the directory) and records which file it is. */
static int ledger_db_open(struct ledger_sq *l, int flags, char *err, size_t n)
{
	struct stat st;

	if (sqlite3_open_v2(l->path, &l->db, flags | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		if (l->db == NULL)
			ledger_errf(err, n, "ledger: cannot open %s: out of memory", l->path);
		else
			ledger_errf(err, n, "ledger: cannot open %s: %s", l->path, sqlite3_errmsg(l->db));
		return -1;
	}
	if (fstatat(l->dfd, LEDGER_FILE, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		ledger_errf(err, n, "ledger: %s went while being opened: %s", l->path, strerror(errno));
		return -1;
	}
	l->dev = st.st_dev;
	l->ino = st.st_ino;
	sqlite3_extended_result_codes(l->db, 1);
	/* Before any statement: opening takes no lock, everything after may. */
	sqlite3_busy_timeout(l->db, LEDGER_BUSY_MS);
	sqlite3_db_config(l->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_db_config(l->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	return 0;
}

int ledger_sq_open(const char *state_dir, struct ledger_sq **out, char *err, size_t n)
{
	char dir[PATH_MAX];
	struct ledger_sq *l = NULL;
	struct ledger_id named;
	uint64_t deadline;
	int rc = -1, has_id;

	if (out == NULL) {
		ledger_errf(err, n, "ledger: no place for the handle");
		return -1;
	}
	*out = NULL;
	l = ledger_new(err, n);
	if (l == NULL)
		return -1;
	if (ledger_paths(state_dir, dir, sizeof(dir), l->path, sizeof(l->path), err, n) != 0)
		goto out;
	if (ledger_owner_self(&l->self, err, n) != 0)
		goto out;

	/* 1. The directory, then what its identity file says, before the
	 * database is looked at: with the file there, a missing database
	 * must not be made. */
	if (ledger_dir_open(dir, 1, &l->dfd, err, n) != 0)
		goto out;
	has_id = ledger_id_read(l->dfd, dir, &named, err, n);
	if (has_id < 0 || ledger_file_check(l->dfd, dir, has_id ? &named : NULL, err, n) != 0)
		goto out;
	/* 2. The connection, in WAL mode before anything reads the file:
	 * the switch needs the write lock. */
	if (ledger_db_open(l, SQLITE_OPEN_READWRITE, err, n) != 0)
		goto out;
	deadline = ledger_now_ms() + LEDGER_BUSY_MS;
	if (ledger_retry(l, ledger_wal, NULL, deadline, err, n) != 0)
		goto out;
	/* synchronous=FULL: a `pending` record must be on disk before the
	 * tool runs, or a power loss could forget it and let the call run
	 * twice.  cell_size_check: pages are checked as they are read, so a
	 * rot the bounded check below did not reach is found at use rather
	 * than read as data.  Neither takes a lock. */
	if (sqlite3_exec(l->db, "PRAGMA synchronous = FULL; PRAGMA cell_size_check = ON", NULL, NULL, NULL) !=
	    SQLITE_OK) {
		ledger_dberr(l, "setting synchronous mode", err, n);
		goto out;
	}
	/* 3. Sound, before anything is decided from it or written to it. */
	if (ledger_retry(l, ledger_open_check, NULL, deadline, err, n) != 0)
		goto out;
	/* 4. The one the identity file names, before migrating: a database
	 * refused is left as it was. */
	if (has_id && ledger_retry(l, ledger_id_match, &named, deadline, err, n) != 0)
		goto out;
	if (ledger_retry(l, ledger_migrate, NULL, deadline, err, n) != 0)
		goto out;
	/* 5. A new or an old ledger gets its identity file now. */
	if (!has_id && ledger_id_adopt(l, deadline, dir, err, n) != 0)
		goto out;
	*out = l;
	l = NULL;
	rc = 0;
out:
	ledger_sq_close(l);
	return rc;
}

void ledger_sq_close(struct ledger_sq *l)
{
	int i;

	if (l == NULL)
		return;
	for (i = 0; i < SQL_COUNT; i++)
		sqlite3_finalize(l->stmt[i]);
	sqlite3_close_v2(l->db);
	if (l->dfd >= 0)
		close(l->dfd);
	pthread_mutex_destroy(&l->mu);
	free(l);
}

/* ---- ledger check -------------------------------------------------------- */

struct ledger_findings {
	ledger_finding_fn fn;
	void *arg;
	int problems;
};

__attribute__((format(printf, 3, 4))) static void finding(struct ledger_findings *f, int problem, const char *fmt,
							  ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	f->problems += problem;
	f->fn(line, problem, f->arg);
}

static void finding_integrity(const char *line, void *arg)
{
	finding(arg, 1, "integrity: %s", line);
}

/* The replay records, counted for the notes: an operator reading "ok"
 * sees which ledger it was about. */
static void ledger_check_counts(struct ledger_sq *l, struct ledger_findings *f)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(l->db, "SELECT count(*), count(*) FILTER (WHERE state = 'pending') FROM replay", -1, &st,
			       NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		finding(f, 0, "replay records: %lld (%lld pending)", (long long)sqlite3_column_int64(st, 0),
			(long long)sqlite3_column_int64(st, 1));
	sqlite3_finalize(st);
}

int ledger_sq_check(const char *state_dir, ledger_finding_fn fn, void *arg, char *err, size_t n)
{
	struct ledger_findings f = { fn, arg, 0 };
	struct ledger_id named;
	struct ledger_sq *l = NULL;
	char dir[PATH_MAX], why[512], have[LEDGER_ID_HEX + 1];
	struct stat st;
	int rc = -1, has_id, ver, bad;

	if (fn == NULL) {
		ledger_errf(err, n, "ledger: check needs a callback");
		return -1;
	}
	l = ledger_new(err, n);
	if (l == NULL)
		return -1;
	if (ledger_paths(state_dir, dir, sizeof(dir), l->path, sizeof(l->path), err, n) != 0)
		goto out;
	if (lstat(dir, &st) != 0 && errno == ENOENT) {
		ledger_errf(err, n, "ledger: no ledger in %s (no such directory)", dir);
		goto out;
	}
	if (ledger_dir_open(dir, 0, &l->dfd, err, n) != 0)
		goto out;
	has_id = ledger_id_read(l->dfd, dir, &named, why, sizeof(why));
	if (has_id < 0)
		finding(&f, 1, "%s", why);
	if (fstatat(l->dfd, LEDGER_FILE, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		if (errno != ENOENT || has_id == 0) {
			ledger_errf(err, n, "ledger: no ledger in %s (%s: %s)", dir, LEDGER_FILE, strerror(errno));
			goto out;
		}
		if (has_id > 0) {
			ledger_lost(dir, "is missing", &named, why, sizeof(why));
			finding(&f, 1, "%s", why);
		}
		rc = 1;
		goto out;
	}
	/* The same refusals as ledger_sq_open(), without creating anything. */
	if (ledger_file_check(l->dfd, dir, has_id > 0 ? &named : NULL, why, sizeof(why)) != 0) {
		finding(&f, 1, "%s", why);
		rc = 1;
		goto out;
	}
	if (st.st_size == 0) {
		finding(&f, 0, "%s is empty: no ledger has been made in it yet", l->path);
		rc = f.problems ? 1 : 0;
		goto out;
	}
	/* Read-only: a check changes nothing, and in WAL mode it holds up no
	 * supervisor (it reads one snapshot). */
	if (ledger_db_open(l, SQLITE_OPEN_READONLY, why, sizeof(why)) != 0) {
		finding(&f, 1, "%s", why);
		rc = 1;
		goto out;
	}
	if (ledger_user_version(l, &ver, why, sizeof(why)) != 0) {
		finding(&f, 1, "%s", why);
		rc = 1;
		goto out;
	}
	if (ver > LEDGER_VERSION)
		finding(&f, 1, "%s has schema version %d, newer than the %d this cordon knows", l->path, ver,
			LEDGER_VERSION);
	else if (ver < LEDGER_VERSION)
		finding(&f, 0, "schema version %d; the next cordon run migrates it to %d", ver, LEDGER_VERSION);
	if (ledger_db_id(l, have, why, sizeof(why)) != 0)
		finding(&f, 1, "%s", why);
	else if (has_id > 0 && strcmp(have, named.hex) != 0)
		finding(&f, 1, "%s is ledger %s, but %s/%s names ledger %s", l->path, have[0] ? have : "(none)", dir,
			LEDGER_ID_FILE, named.hex);
	else if (has_id > 0)
		finding(&f, 0, "ledger %s (%s/%s matches)", have, dir, LEDGER_ID_FILE);
	else if (has_id == 0)
		finding(&f, 0, "no %s/%s yet: the next cordon run writes it (%s)", dir, LEDGER_ID_FILE,
			have[0] ? "the database's id" : "a new id");
	if (ledger_integrity(l, 0, finding_integrity, &f, &bad, why, sizeof(why)) != 0)
		finding(&f, 1, "%s", why);
	else if (bad == 0)
		finding(&f, 0, "integrity check: ok");
	ledger_check_counts(l, &f);
	rc = f.problems ? 1 : 0;
out:
	ledger_sq_close(l);
	return rc;
}

/* ---- argument checks -------------------------------------------------- */


/* ---- budgets ---------------------------------------------------------- */

/* Day counters older than LEDGER_KEEP_DAYS before the call's day, and the
 * counters of runs that ended without ledger_sq_run_end(), go once per call
 * day per handle: an index range scan, inside the counting transaction. */
static int budget_prune(struct ledger_sq *l, const struct ledger_call *c, int64_t now, char *err, size_t n)
{
	if (strcmp(l->pruned_day, c->day) == 0)
		return 0;
	if (ledger_run(l, SQL_PRUNE_DAY, &c->day, 1, 0, 0, "pruning day counters", err, n) != 0 ||
	    ledger_run(l, SQL_PRUNE_RUN, NULL, 0, 1, now - (int64_t)LEDGER_KEEP_DAYS * 86400,
		       "pruning run counters", err, n) != 0)
		return -1;
	/* Under the mutex; should the transaction still fail, the next
	 * call day prunes what this one did not. */
	snprintf(l->pruned_day, sizeof(l->pruned_day), "%s", c->day);
	return 0;
}

enum ledger_budget ledger_sq_budget_take(struct ledger_sq *l, const struct ledger_call *c, uint32_t max_run,
				      uint32_t max_day, char *err, size_t n)
{
	const char *run_key[2], *day_key[5];
	enum ledger_budget res = LEDGER_BUDGET_ERROR;
	int64_t now = (int64_t)time(NULL), run = 0, day = 0;
	int ok = 0;

	if (!ledger_arg_call(l, c, err, n))
		return LEDGER_BUDGET_ERROR;
	if (!ledger_arg_id(c->user, 1) || !ledger_arg_day(c->day)) {
		ledger_errf(err, n, "ledger: the call needs a user (\"\" for none) and a day as YYYY-MM-DD");
		return LEDGER_BUDGET_ERROR;
	}
	/* Nothing to check, nothing to count: no transaction at all. */
	if (max_run == 0 && max_day == 0)
		return LEDGER_BUDGET_OK;
	run_key[0] = c->exec_id;
	run_key[1] = c->tool;
	day_key[0] = c->app;
	day_key[1] = c->tenant;
	day_key[2] = c->user;
	day_key[3] = c->tool;
	day_key[4] = c->day;
	if (ledger_tx_begin(l, err, n) != 0)
		return LEDGER_BUDGET_ERROR;
	if ((max_run && ledger_count(l, SQL_RUN_GET, run_key, 2, &run, err, n) != 0) ||
	    (max_day && ledger_count(l, SQL_DAY_GET, day_key, 5, &day, err, n) != 0))
		goto out;
	if (max_run && run >= max_run) {
		res = LEDGER_BUDGET_RUN;
		goto out;
	}
	if (max_day && day >= max_day) {
		res = LEDGER_BUDGET_DAY;
		goto out;
	}
	if ((max_run && ledger_run(l, SQL_RUN_ADD, run_key, 2, 1, now, "counting the call", err, n) != 0) ||
	    (max_day && ledger_run(l, SQL_DAY_ADD, day_key, 5, 0, 0, "counting the call", err, n) != 0) ||
	    budget_prune(l, c, now, err, n) != 0)
		goto out;
	ok = 1;
	res = LEDGER_BUDGET_OK;
out:
	/* A refusal changed nothing; rolling it back is the same as
	 * committing it. */
	if (ledger_tx_end(l, ok, err, n) != 0 && ok)
		res = LEDGER_BUDGET_ERROR;
	return res;
}

int ledger_sq_run_end(struct ledger_sq *l, const char *exec_id, char *err, size_t n)
{
	int rc;

	if (l == NULL || !ledger_arg_id(exec_id, 0)) {
		ledger_errf(err, n, "ledger: run_end needs a ledger and a non-empty exec_id");
		return -1;
	}
	if (ledger_tx_begin(l, err, n) != 0)
		return -1;
	rc = ledger_run(l, SQL_RUN_END, &exec_id, 1, 0, 0, "dropping the run's counters", err, n);
	return ledger_tx_end(l, rc == 0, err, n);
}

/* ---- replay ----------------------------------------------------------- */

static const char *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t != NULL ? (const char *)t : "";
}

/* One look at the record, in one transaction.  Sets *wait when it is
 * pending under an owner that may still finish it. */
static enum ledger_replay replay_try(struct ledger_sq *l, const struct ledger_call *c, const char *message_id,
				     const char *digest, char **response, int *wait, char *err, size_t n)
{
	const char *key[6] = {c->app, c->tenant, c->user, c->tool, message_id, digest};
	enum ledger_replay res = LEDGER_REPLAY_ERROR;
	struct ledger_owner o;
	sqlite3_stmt *st, *put;
	int rc, ok = 0;

	*wait = 0;
	if (ledger_tx_begin(l, err, n) != 0)
		return LEDGER_REPLAY_ERROR;
	st = ledger_stmt(l, SQL_REPLAY_GET, err, n);
	if (st == NULL)
		goto out;
	rc = bind_texts(st, key, 5);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		memset(&o, 0, sizeof(o));
		o.pid = sqlite3_column_int64(st, 3);
		o.start = sqlite3_column_int64(st, 4);
		snprintf(o.boot, sizeof(o.boot), "%s", col_text(st, 5));
		o.pidns = sqlite3_column_int64(st, 6);
		ok = 1;
		if (strcmp(col_text(st, 0), digest) != 0) {
			res = LEDGER_REPLAY_CONFLICT;
		} else if (strcmp(col_text(st, 1), "done") == 0) {
			*response = strdup(col_text(st, 2));
			if (*response == NULL) {
				ledger_errf(err, n, "ledger: out of memory copying a recorded response");
				ok = 0;
			}
			res = *response != NULL ? LEDGER_REPLAY_RECORDED : LEDGER_REPLAY_ERROR;
		} else if (ledger_owner_check(&l->self, &o) == OWNER_GONE) {
			res = LEDGER_REPLAY_IN_DOUBT;
		} else {
			*wait = 1;
			res = LEDGER_REPLAY_IN_DOUBT;
		}
		ledger_done(st);
		goto out;
	}
	ledger_done(st);
	if (rc != SQLITE_DONE) {
		ledger_dberr(l, "reading the replay record", err, n);
		goto out;
	}
	/* No record: ours now, pending until finish. */
	put = ledger_stmt(l, SQL_REPLAY_PUT, err, n);
	if (put == NULL)
		goto out;
	rc = bind_texts(put, key, 6);
	if (rc == SQLITE_OK)
		rc = bind_owner(put, 7, &l->self);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(put, 10, l->self.pidns);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(put, 11, c->exec_id, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(put, 12, (int64_t)time(NULL));
	if (rc == SQLITE_OK)
		rc = sqlite3_step(put);
	if (rc != SQLITE_DONE)
		ledger_dberr(l, "writing the pending record", err, n);
	ledger_done(put);
	ok = rc == SQLITE_DONE;
	res = LEDGER_REPLAY_RUN;
out:
	/* RUN is only RUN once the pending record is durable. */
	if (ledger_tx_end(l, ok, err, n) != 0) {
		*wait = 0;
		if (res == LEDGER_REPLAY_RECORDED)
			free(*response);
		*response = NULL;
		return LEDGER_REPLAY_ERROR;
	}
	return res;
}

/* ledger_replay_loop()'s view of replay_try(). */
static enum ledger_replay replay_try_any(void *l, const struct ledger_call *c, const char *message_id,
					 const char *digest, char **response, int *wait, char *err, size_t n)
{
	return replay_try(l, c, message_id, digest, response, wait, err, n);
}

enum ledger_replay ledger_sq_replay_begin(struct ledger_sq *l, const struct ledger_call *c, const char *message_id,
				       const char *params_sha256, uint64_t wait_ms, int cancel_fd, char **response,
				       char *err, size_t n)
{
	return ledger_replay_loop(l, replay_try_any, c, message_id, params_sha256, wait_ms, cancel_fd, response, err,
				  n);
}

/* finish (response set: the record becomes done) or abandon (NULL: the
 * pending record goes, as if never begun); either only by its owner. */
int ledger_sq_replay_close(struct ledger_sq *l, const struct ledger_call *c, const char *message_id,
			   const char *response, char *err, size_t n)
{
	const char *key[6] = {NULL, NULL, NULL, NULL, message_id, response};
	sqlite3_stmt *st;
	int rc = -1, ok = 0;

	if (!ledger_arg_call(l, c, err, n))
		return -1;
	if (!ledger_arg_id(message_id, 0) || !ledger_arg_id(c->user, 1)) {
		ledger_errf(err, n, "ledger: finish and abandon need a message id and a user (\"\" for none)");
		return -1;
	}
	key[0] = c->app;
	key[1] = c->tenant;
	key[2] = c->user;
	key[3] = c->tool;
	if (ledger_tx_begin(l, err, n) != 0)
		return -1;
	st = ledger_stmt(l, response != NULL ? SQL_REPLAY_DONE : SQL_REPLAY_DROP, err, n);
	if (st == NULL)
		goto out;
	rc = bind_texts(st, key, response != NULL ? 6 : 5);
	if (rc == SQLITE_OK)
		rc = bind_owner(st, response != NULL ? 7 : 6, &l->self);
	if (rc == SQLITE_OK && response != NULL)
		rc = sqlite3_bind_int64(st, 10, (int64_t)time(NULL));
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	ledger_done(st);
	if (rc != SQLITE_DONE) {
		ledger_dberr(l, "recording the response", err, n);
		goto out;
	}
	/* Only the process ledger_sq_replay_begin() said RUN to may finish, and
	 * only once: anything else is a bug in the caller, not a new answer. */
	if (sqlite3_changes(l->db) != 1) {
		ledger_errf(err, n,
			    "ledger: %s/%s message %s (tenant \"%s\") has no pending record owned by this process",
			    c->app, c->tool, message_id, c->tenant);
		goto out;
	}
	ok = 1;
out:
	return ledger_tx_end(l, ok, err, n);
}

/* ---- by hand: cordon ledger ------------------------------------------- */

int ledger_sq_exists(const char *state_dir)
{
	char path[PATH_MAX];
	struct stat st;
	int w;

	if (state_dir == NULL || state_dir[0] == '\0')
		return 0;
	w = snprintf(path, sizeof(path), "%s/%s", state_dir, LEDGER_FILE);
	if (w > 0 && (size_t)w < sizeof(path) && lstat(path, &st) == 0 && S_ISREG(st.st_mode))
		return 1;
	w = snprintf(path, sizeof(path), "%s/%s", state_dir, LEDGER_ID_FILE);
	return w > 0 && (size_t)w < sizeof(path) && lstat(path, &st) == 0;
}

/* A read transaction, under the mutex; ended by ledger_tx_end(). */
static int ledger_read_begin(struct ledger_sq *l, char *err, size_t n)
{
	if (l->self.pid != getpid()) {
		ledger_errf(err, n, "ledger: used in a child process; open the ledger there");
		return -1;
	}
	if (ledger_same_file(l, err, n) != 0)
		return -1;
	pthread_mutex_lock(&l->mu);
	if (ledger_run(l, SQL_BEGIN_READ, NULL, 0, 0, 0, "starting a transaction", err, n) != 0) {
		pthread_mutex_unlock(&l->mu);
		return -1;
	}
	return 0;
}

/* Ends a walk of st begun by ledger_read_begin(): stop is what the
 * callback returned, rc the last step's code.  Returns stop, or -1 with
 * err when the walk failed. */
static int ledger_read_end(struct ledger_sq *l, sqlite3_stmt *st, int rc, int stop, const char *what, char *err,
			   size_t n)
{
	if (!stop && rc != SQLITE_DONE) {
		ledger_dberr(l, what, err, n);
		stop = -1;
	}
	ledger_done(st);
	/* Nothing was written: the end of a reader cannot lose anything. */
	ledger_tx_end(l, 0, NULL, 0);
	return stop;
}

/* The record at the current row of SQL_REPLAY_LIST, its owner judged. */
static void record_of_row(struct ledger_sq *l, sqlite3_stmt *st, struct ledger_record *r)
{
	struct ledger_owner o;

	memset(r, 0, sizeof(*r));
	r->app = col_text(st, 0);
	r->tenant = col_text(st, 1);
	r->user = col_text(st, 2);
	r->tool = col_text(st, 3);
	r->message_id = col_text(st, 4);
	r->state = col_text(st, 5);
	r->params_sha256 = col_text(st, 6);
	r->exec_id = col_text(st, 7);
	r->response = sqlite3_column_type(st, 8) == SQLITE_NULL ? NULL : col_text(st, 8);
	r->created = sqlite3_column_int64(st, 9);
	r->updated = sqlite3_column_int64(st, 10);
	r->owner_pid = sqlite3_column_int64(st, 11);
	if (strcmp(r->state, "pending") != 0)
		return;
	/* The same judgement ledger_sq_replay_begin() makes: only a definite
	 * "gone" is in doubt. */
	memset(&o, 0, sizeof(o));
	o.pid = r->owner_pid;
	o.start = sqlite3_column_int64(st, 12);
	snprintf(o.boot, sizeof(o.boot), "%s", col_text(st, 13));
	o.pidns = sqlite3_column_int64(st, 14);
	switch (ledger_owner_check(&l->self, &o)) {
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

int ledger_sq_replay_list(struct ledger_sq *l, const struct ledger_filter *f, ledger_record_fn fn, void *arg, char *err,
		       size_t n)
{
	const struct ledger_filter any = { 0 };
	const char *state;
	struct ledger_record r;
	sqlite3_stmt *st;
	int rc = SQLITE_OK, stop = 0, in_doubt;

	if (l == NULL || fn == NULL) {
		ledger_errf(err, n, "ledger: list needs a ledger and a callback");
		return -1;
	}
	if (f == NULL)
		f = &any;
	if (!ledger_arg_filter(f, err, n))
		return -1;
	in_doubt = f->state != NULL && strcmp(f->state, "in_doubt") == 0;
	state = in_doubt ? "pending" : f->state;
	if (ledger_read_begin(l, err, n) != 0)
		return -1;
	st = ledger_stmt(l, SQL_REPLAY_LIST, err, n);
	if (st == NULL) {
		ledger_tx_end(l, 0, NULL, 0);
		return -1;
	}
	{
		const char *key[6] = { f->app, f->tenant, f->user, f->tool, f->message_id, state };

		for (int i = 0; i < 6 && rc == SQLITE_OK; i++)
			rc = key[i] != NULL ? sqlite3_bind_text(st, i + 1, key[i], -1, SQLITE_STATIC)
					    : sqlite3_bind_null(st, i + 1);
	}
	while (rc == SQLITE_OK || rc == SQLITE_ROW) {
		rc = sqlite3_step(st);
		if (rc != SQLITE_ROW)
			break;
		record_of_row(l, st, &r);
		if (in_doubt && r.owner != LEDGER_OWNER_GONE)
			continue;
		if ((stop = fn(&r, arg)) != 0)
			break;
	}
	return ledger_read_end(l, st, rc, stop, "listing replay records", err, n);
}

/* Writes the forget log's row for the record at st's current row. */
static int forget_log_put(struct ledger_sq *l, sqlite3_stmt *row, const char *reason, int force, uint32_t uid,
			  char *err, size_t n)
{
	sqlite3_stmt *st = ledger_stmt(l, SQL_FORGET_LOG_PUT, err, n);
	int rc;

	if (st == NULL)
		return -1;
	rc = sqlite3_bind_int64(st, 1, (int64_t)time(NULL));
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 2, (int64_t)uid);
	/* app, tenant, user, tool, message_id, state from the record, then
	 * exec_id, params_sha256, response. */
	for (int i = 0; i < 6 && rc == SQLITE_OK; i++)
		rc = sqlite3_bind_text(st, 3 + i, col_text(row, i), -1, SQLITE_TRANSIENT);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 9, col_text(row, 7), -1, SQLITE_TRANSIENT);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 10, col_text(row, 6), -1, SQLITE_TRANSIENT);
	if (rc == SQLITE_OK)
		rc = sqlite3_column_type(row, 8) == SQLITE_NULL
			     ? sqlite3_bind_null(st, 11)
			     : sqlite3_bind_text(st, 11, col_text(row, 8), -1, SQLITE_TRANSIENT);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int(st, 12, force ? 1 : 0);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 13, reason, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	ledger_done(st);
	if (rc != SQLITE_DONE)
		return ledger_dberr(l, "writing the forget log", err, n);
	return 0;
}

enum ledger_forget ledger_sq_replay_forget(struct ledger_sq *l, const struct ledger_filter *key, const char *reason,
					int force, uint32_t uid, char *prev, size_t pn, char *err, size_t n)
{
	enum ledger_forget res = LEDGER_FORGET_ERROR;
	struct ledger_record r;
	sqlite3_stmt *st = NULL;
	int rc = SQLITE_OK, ok = 0;

	if (prev != NULL && pn != 0)
		prev[0] = '\0';
	if (l == NULL || key == NULL || key->app == NULL || key->tenant == NULL || key->user == NULL ||
	    key->tool == NULL || key->message_id == NULL || reason == NULL || reason[0] == '\0') {
		ledger_errf(err, n, "ledger: forget needs the whole key (app, tenant, user, tool, message id) and a reason");
		return LEDGER_FORGET_ERROR;
	}
	if (!ledger_arg_filter(&(struct ledger_filter){ key->app, key->tenant, key->user, key->tool, key->message_id, NULL },
		       err, n))
		return LEDGER_FORGET_ERROR;
	/* A write transaction from the first read: the record judged is the
	 * record deleted, and a supervisor cannot take it meanwhile. */
	if (ledger_tx_begin(l, err, n) != 0)
		return LEDGER_FORGET_ERROR;
	st = ledger_stmt(l, SQL_REPLAY_LIST, err, n);
	if (st == NULL)
		goto out;
	{
		const char *k[5] = { key->app, key->tenant, key->user, key->tool, key->message_id };

		rc = bind_texts(st, k, 5);
		if (rc == SQLITE_OK)
			rc = sqlite3_bind_null(st, 6);
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		res = LEDGER_FORGET_NOT_FOUND;
		ok = 1;
		goto out;
	}
	if (rc != SQLITE_ROW) {
		ledger_dberr(l, "reading the replay record", err, n);
		goto out;
	}
	record_of_row(l, st, &r);
	if (prev != NULL && pn != 0)
		snprintf(prev, pn, "%s", r.state);
	if (!force && (r.owner == LEDGER_OWNER_ALIVE || r.owner == LEDGER_OWNER_UNKNOWN)) {
		res = LEDGER_FORGET_OWNER_ALIVE;
		ok = 1;
		goto out;
	}
	if (forget_log_put(l, st, reason, force, uid, err, n) != 0)
		goto out;
	ledger_done(st);
	st = NULL;
	{
		const char *k[5] = { key->app, key->tenant, key->user, key->tool, key->message_id };

		if (ledger_run(l, SQL_REPLAY_FORGET, k, 5, 0, 0, "deleting the replay record", err, n) != 0)
			goto out;
	}
	res = LEDGER_FORGOT;
	ok = 1;
out:
	if (st != NULL)
		ledger_done(st);
	/* A refusal or a miss wrote nothing: rolling back is the same. */
	if (ledger_tx_end(l, ok && res == LEDGER_FORGOT, err, n) != 0 && res == LEDGER_FORGOT)
		return LEDGER_FORGET_ERROR;
	return ok ? res : LEDGER_FORGET_ERROR;
}

int ledger_sq_forget_log(struct ledger_sq *l, ledger_forgotten_fn fn, void *arg, char *err, size_t n)
{
	struct ledger_forgotten r;
	sqlite3_stmt *st;
	int rc, stop = 0;

	if (l == NULL || fn == NULL) {
		ledger_errf(err, n, "ledger: the forget log needs a ledger and a callback");
		return -1;
	}
	if (ledger_read_begin(l, err, n) != 0)
		return -1;
	st = ledger_stmt(l, SQL_FORGET_LOG_LIST, err, n);
	if (st == NULL) {
		ledger_tx_end(l, 0, NULL, 0);
		return -1;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r = (struct ledger_forgotten){
			.time = sqlite3_column_int64(st, 0),
			.uid = sqlite3_column_int64(st, 1),
			.app = col_text(st, 2),
			.tenant = col_text(st, 3),
			.user = col_text(st, 4),
			.tool = col_text(st, 5),
			.message_id = col_text(st, 6),
			.state = col_text(st, 7),
			.exec_id = col_text(st, 8),
			.forced = sqlite3_column_int(st, 9),
			.reason = col_text(st, 10),
		};
		if ((stop = fn(&r, arg)) != 0)
			break;
	}
	return ledger_read_end(l, st, rc, stop, "reading the forget log", err, n);
}
