/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ledger_id.h - the identity file beside a ledger (docs/ledger.md,
 * "Identity"), inside runtime/ledger/ only.
 *
 * A ledger draws a random id when it makes its database and records it
 * twice: inside the database (the back end's business) and in
 * <state_dir>/ledger.id, a small text file that outlives the database.
 * A state directory with the file but without a database holding that id
 * once had a ledger that is now gone (deleted, emptied, replaced): an
 * error, never a fresh start, because a fresh start would run every
 * recorded side effect again.  The file is plain files and no back end, so
 * another back end keeps the same file.
 *
 * The format is fixed and tiny, three lines:
 *
 *	cordon-ledger-id 1
 *	id <32 lower-case hex digits>
 *	schema <the schema version the id was drawn or adopted at>
 *
 * The writer and the reader below mirror each other.
 */
#ifndef CORDON_LEDGER_ID_H
#define CORDON_LEDGER_ID_H

#include <stddef.h>

#define LEDGER_ID_FILE "ledger.id"
#define LEDGER_ID_HEX 32 /* 16 random bytes */

struct ledger_id {
	char hex[LEDGER_ID_HEX + 1];
	int schema;
};

/* err <- the formatted message (nothing when err is NULL or n is 0): the
 * one error writer of runtime/ledger/. */
__attribute__((format(printf, 3, 4))) void ledger_errf(char *err, size_t n, const char *fmt, ...);

/* A new id from libsodium's randombytes.  Returns 0, or -1 with err. */
int ledger_id_new(struct ledger_id *id, int schema, char *err, size_t n);

/* 1 when s is an id as ledger_id_new() draws them. */
int ledger_id_ok(const char *s);

/* Writes <dir>/ledger.id (dfd is dir) once: a temporary file created
 * O_EXCL 0600 and fsync'd, then linked to the name, which fails when the
 * name exists, then the directory fsync'd.  So a reader sees no file or a
 * whole one, and of two processes writing at once one wins.  Returns 0
 * written, 1 when the file existed already (the caller reads and compares
 * it), -1 with err. */
int ledger_id_write(int dfd, const char *dir, const struct ledger_id *id, char *err, size_t n);

/* Reads <dir>/ledger.id (O_NOFOLLOW; a regular file of this user that
 * nobody else may write).  Returns 1 with *id, 0 when there is none, -1
 * with err (a link, not ours, malformed, unreadable). */
int ledger_id_read(int dfd, const char *dir, struct ledger_id *id, char *err, size_t n);

#endif
