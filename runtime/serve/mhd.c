/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mhd.c - libmicrohttpd loaded on demand (mhd.h says why).
 */
#include <pthread.h>
#include <stdio.h>

#include "runtime/dl_table.h"
#include "runtime/serve/mhd.h"

/* The soname of Debian 12's libmicrohttpd12, the ABI this was built for. */
#define MHD_SONAME "libmicrohttpd.so.12"

/* Written once under pthread_once, only read after: the one process-wide
 * state here, as a library handle is. */
static struct mhd_api mhd_table;
static char mhd_error[256];
static pthread_once_t mhd_once = PTHREAD_ONCE_INIT;

static void mhd_init(void)
{
	const struct dl_sym syms[] = {
		{ "MHD_start_daemon", (void **)&mhd_table.start_daemon },
		{ "MHD_stop_daemon", (void **)&mhd_table.stop_daemon },
		{ "MHD_quiesce_daemon", (void **)&mhd_table.quiesce_daemon },
		{ "MHD_get_connection_info", (void **)&mhd_table.get_connection_info },
		{ "MHD_lookup_connection_value", (void **)&mhd_table.lookup_connection_value },
		{ "MHD_queue_response", (void **)&mhd_table.queue_response },
		{ "MHD_create_response_from_buffer", (void **)&mhd_table.create_response_from_buffer },
		{ "MHD_create_response_from_buffer_with_free_callback",
		  (void **)&mhd_table.create_response_from_buffer_with_free_callback },
		{ "MHD_create_response_from_fd64", (void **)&mhd_table.create_response_from_fd64 },
		{ "MHD_add_response_header", (void **)&mhd_table.add_response_header },
		{ "MHD_destroy_response", (void **)&mhd_table.destroy_response },
	};

	dl_table_load(MHD_SONAME, syms, sizeof(syms) / sizeof(syms[0]),
		      "cordon serve needs libmicrohttpd: Debian libmicrohttpd12", mhd_error, sizeof(mhd_error));
}

const struct mhd_api *mhd_load(char *err, size_t n)
{
	pthread_once(&mhd_once, mhd_init);
	if (mhd_table.start_daemon == NULL) {
		snprintf(err, n, "%s", mhd_error[0] ? mhd_error : "libmicrohttpd could not be loaded");
		return NULL;
	}
	return &mhd_table;
}

const struct mhd_api *mhd_get(void)
{
	return &mhd_table;
}
