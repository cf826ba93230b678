/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pq.c - libpq loaded on demand (pq.h says why).
 */
#include <pthread.h>
#include <stdio.h>

#include "runtime/dl_table.h"
#include "runtime/ledger/pq.h"

/* The soname of Debian 12's libpq5, the ABI this was built for. */
#define PQ_SONAME "libpq.so.5"

/* Written once under pthread_once, only read after: the one process-wide
 * state here, as a library handle is. */
static struct pq_api pq_table;
static char pq_error[256];
static pthread_once_t pq_once = PTHREAD_ONCE_INIT;

static void pq_init(void)
{
	const struct dl_sym syms[] = {
#define PQ_SYM(f) { #f, (void **)&pq_table.f },
		PQ_FUNCS(PQ_SYM)
#undef PQ_SYM
	};

	dl_table_load(PQ_SONAME, syms, sizeof(syms) / sizeof(syms[0]), "a PostgreSQL ledger needs libpq: Debian libpq5",
		      pq_error, sizeof(pq_error));
}

const struct pq_api *pq_load(char *err, size_t n)
{
	pthread_once(&pq_once, pq_init);
	if (pq_table.PQclear == NULL) {
		snprintf(err, n, "ledger: %s", pq_error[0] ? pq_error : "libpq could not be loaded");
		return NULL;
	}
	return &pq_table;
}
