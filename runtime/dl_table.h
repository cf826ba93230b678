/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dl_table.h - a table of functions from a library loaded on demand
 * (dlopen), for the libraries only some commands need: libmicrohttpd for
 * serve (runtime/serve/mhd.h), libpq for a PostgreSQL ledger
 * (runtime/ledger/pq.h).  Linked, each would be loaded by every process.
 */
#ifndef CORDON_DL_TABLE_H
#define CORDON_DL_TABLE_H

#include <stddef.h>

struct dl_sym {
	const char *name;
	void **slot;
};

/* Opens soname and fills every slot with its symbol.  Returns 0, or -1
 * with err (why: "<dlerror> (hint)" when the library is missing, the
 * first missing symbol otherwise) and every slot NULL.  The handle is
 * never closed: the table points into it for the process's life. */
int dl_table_load(const char *soname, const struct dl_sym *syms, size_t count, const char *hint, char *err,
		  size_t n);

#endif
