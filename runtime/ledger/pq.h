/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pq.h - libpq, loaded when a ledger is first opened on PostgreSQL
 * (dlopen), inside runtime/ledger/ only.
 *
 * Debian's libpq links OpenSSL, Kerberos and OpenLDAP, and OpenLDAP links
 * GnuTLS: linked, every `cordon run` would load them all on every start
 * (the cost runtime/serve/mhd.h keeps out for libmicrohttpd), although the
 * default ledger is SQLite.  So only a --ledger URL loads it; a host
 * without libpq runs SQLite ledgers and gets a clear error for a URL.
 * The table's types are the header's own (__typeof__), so a signature
 * mismatch is a compile error, not a crash.
 */
#ifndef CORDON_LEDGER_PQ_H
#define CORDON_LEDGER_PQ_H

#include <stddef.h>

#include <postgresql/libpq-fe.h>

#define PQ_FUNCS(X)                                                                                                   \
	X(PQconninfoParse)                                                                                            \
	X(PQconninfoFree)                                                                                             \
	X(PQfreemem)                                                                                                  \
	X(PQconnectdbParams)                                                                                          \
	X(PQsetNoticeProcessor)                                                                                       \
	X(PQhost)                                                                                                     \
	X(PQport)                                                                                                     \
	X(PQdb)                                                                                                       \
	X(PQstatus)                                                                                                   \
	X(PQerrorMessage)                                                                                             \
	X(PQreset)                                                                                                    \
	X(PQconsumeInput)                                                                                             \
	X(PQsocket)                                                                                                   \
	X(PQfinish)                                                                                                   \
	X(PQexec)                                                                                                     \
	X(PQexecParams)                                                                                               \
	X(PQresultStatus)                                                                                             \
	X(PQresultErrorMessage)                                                                                       \
	X(PQntuples)                                                                                                  \
	X(PQgetvalue)                                                                                                 \
	X(PQgetisnull)                                                                                                \
	X(PQcmdTuples)                                                                                                \
	X(PQclear)

struct pq_api {
#define PQ_SLOT(f) __typeof__(&f) f;
	PQ_FUNCS(PQ_SLOT)
#undef PQ_SLOT
};

/* Loads the library once (any thread, any number of times): the table, or
 * NULL with err saying what is missing. */
const struct pq_api *pq_load(char *err, size_t n);

#endif
