/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ledger_common.h - what every ledger back end shares, inside
 * runtime/ledger/ only: argument checks (so both back ends refuse the
 * same calls with the same words), who a process is and whether an owner
 * on this host still runs, and the bounded, cancellable wait for another
 * owner's pending record.
 */
#ifndef CORDON_LEDGER_COMMON_H
#define CORDON_LEDGER_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/ledger/ledger.h"

/* Day counters and the run counters of crashed runs are kept this long. */
#define LEDGER_KEEP_DAYS 30
/* Names and ids come from the policy and from the sandbox's request; the
 * bridge bounds the frame, this bounds what one row may hold. */
#define LEDGER_MAX_ID 1024
/* Polling a pending record: the first retry soon (a same-process owner is
 * usually about to finish), then no more often than this. */
#define LEDGER_POLL_MAX_MS 50

/* Who a process is on this host: pid and start time (clock ticks since
 * boot, /proc/<pid>/stat field 22) so a reused pid is not taken for the
 * owner, plus the boot and pid namespace both are relative to. */
struct ledger_owner {
	int64_t pid;
	int64_t start;
	char boot[64]; /* /proc/sys/kernel/random/boot_id, "" when unreadable */
	int64_t pidns; /* inode of /proc/self/ns/pid, 0 when unreadable */
};

enum owner_liveness { OWNER_GONE, OWNER_ALIVE, OWNER_UNKNOWN };

/* CLOCK_MONOTONIC in ms. */
uint64_t ledger_now_ms(void);

/* Sleeps *step ms, cut to what is left before deadline (CLOCK_MONOTONIC
 * ms), and doubles *step up to LEDGER_POLL_MAX_MS.  Returns 0, without
 * sleeping, once the deadline has passed; -1 as soon as cancel_fd (when
 * >= 0) is readable; 1 otherwise. */
int ledger_nap(uint64_t deadline, uint64_t *step, int cancel_fd);

/* This process: pid, start time, boot id, pid namespace.  Returns 0, or
 * -1 with err when /proc/self/stat cannot be read. */
int ledger_owner_self(struct ledger_owner *o, char *err, size_t n);

/* Is the owner o of a pending record, judged from self, still running?
 * Only a definite "gone" lets a caller answer IN_DOUBT at once. */
enum owner_liveness ledger_owner_check(const struct ledger_owner *self, const struct ledger_owner *o);

/* Argument checks: an id of at most LEDGER_MAX_ID bytes (may_be_empty:
 * "" allowed), a real "YYYY-MM-DD", 64 lower-case hex digits, and the
 * fields every call names (l: the handle, only checked for NULL). */
int ledger_arg_id(const char *s, int may_be_empty);
int ledger_arg_day(const char *d);
int ledger_arg_digest(const char *h);
int ledger_arg_call(const void *l, const struct ledger_call *c, char *err, size_t n);
/* A listing filter: key fields bounded, state one of pending, done, in_doubt. */
int ledger_arg_filter(const struct ledger_filter *f, char *err, size_t n);

/* One look at a replay record by a back end (l is its handle): RUN,
 * RECORDED, CONFLICT, IN_DOUBT or ERROR, and *wait set when the record is
 * pending under an owner that may still finish (look again later). */
typedef enum ledger_replay (*ledger_replay_try_fn)(void *l, const struct ledger_call *c, const char *message_id,
						   const char *digest, char **response, int *wait, char *err,
						   size_t n);

/* ledger_replay_begin() for any back end: checks the arguments, then
 * calls try_fn until it needs no wait, napping between looks (holding no
 * lock of the back end's) up to wait_ms, or until cancel_fd fires. */
enum ledger_replay ledger_replay_loop(void *l, ledger_replay_try_fn try_fn, const struct ledger_call *c,
				      const char *message_id, const char *params_sha256, uint64_t wait_ms,
				      int cancel_fd, char **response, char *err, size_t n);

#endif
