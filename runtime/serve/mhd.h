/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mhd.h - libmicrohttpd, loaded when `cordon serve` starts (dlopen).
 *
 * Debian's libmicrohttpd links GnuTLS, whose load and constructor (with
 * nettle, gmp, p11-kit, idn2, ...) cost every process that links it
 * about 6 ms: `cordon --version` took 10 ms instead of 4, and so did
 * every `cordon run`.  Only serve needs HTTP, so only serve loads it; a
 * host without the library runs `cordon run` and gets a clear error from
 * `cordon serve`.  The table's types are the header's own (__typeof__),
 * so a signature mismatch is a compile error, not a crash.
 */
#ifndef CORDON_SERVE_MHD_H
#define CORDON_SERVE_MHD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <microhttpd.h>

struct mhd_api {
	__typeof__(&MHD_start_daemon) start_daemon;
	__typeof__(&MHD_stop_daemon) stop_daemon;
	__typeof__(&MHD_quiesce_daemon) quiesce_daemon;
	__typeof__(&MHD_get_connection_info) get_connection_info;
	__typeof__(&MHD_lookup_connection_value) lookup_connection_value;
	__typeof__(&MHD_queue_response) queue_response;
	__typeof__(&MHD_create_response_from_buffer) create_response_from_buffer;
	__typeof__(&MHD_create_response_from_buffer_with_free_callback) create_response_from_buffer_with_free_callback;
	__typeof__(&MHD_create_response_from_fd64) create_response_from_fd64;
	__typeof__(&MHD_create_response_from_callback) create_response_from_callback;
	__typeof__(&MHD_set_connection_option) set_connection_option;
	__typeof__(&MHD_add_response_header) add_response_header;
	__typeof__(&MHD_destroy_response) destroy_response;
};

/* Loads the library once (any thread, any number of times): the table, or
 * NULL with err saying what is missing. */
const struct mhd_api *mhd_load(char *err, size_t n);

/* The table once mhd_load() succeeded (http_start() loads it before any
 * daemon exists, so every later call has it). */
const struct mhd_api *mhd_get(void);

#endif
