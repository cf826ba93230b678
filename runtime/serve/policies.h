/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policies.h - cordon serve's policy set: every *.cpol blob of a directory,
 * mapped, loaded completely (blob_load) and verified against the trusted
 * key, one blob per app.
 *
 *   policies_open()     first load; fails (nothing kept) unless every blob
 *                       of the directory loads and verifies.
 *   policies_reload()   SIGHUP: builds a whole new set the same way and
 *                       swaps it in atomically; on any error the old set
 *                       stays current and the error is returned (the
 *                       caller logs it).  A blob whose app, SHA-256 and
 *                       key id are unchanged keeps its entry (the same
 *                       pointer), so a pool can tell what changed.
 *   policies_current()  the current set, with a reference.
 *
 * Lifetimes: sets and entries are refcounted.  A set holds a reference to
 * each of its entries; a running execution or a pooled sandbox holds one
 * to the entry it was made from (policy_entry_get/put), so a reload never
 * frees a policy under a sandbox.  All calls are thread-safe.
 */
#ifndef CORDON_SERVE_POLICIES_H
#define CORDON_SERVE_POLICIES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "cordon/blob.h"
#include "cordon/keys.h"
#include "cordon/policy.h"
#include "runtime/trust_dir.h"

/* The number of blobs one directory may hold: a bound on start-up work. */
#define POLICIES_MAX 1024

struct policy_entry {
	atomic_uint refs;
	char *file;                     /* the blob's file name in the directory */
	struct blob_map map;            /* kept mapped: the sandbox borrows it */
	struct cpol_policy pol;
	char sha256[2 * 32 + 1];        /* hex */
	char key_id[2 * KEY_ID_BYTES + 1];
	pthread_mutex_t probe_mu;       /* policy_entry_python() */
	int probed;
	char *python_version;
};

struct policy_set {
	atomic_uint refs;
	struct policy_entry **entries;  /* sorted by app */
	unsigned n;
};

struct policy_store;

/* dir: the blobs; key_path: the trusted Ed25519 public key, read again at
 * every reload (a rotated key applies to the next SIGHUP).  -1 with err. */
int policies_open(const char *dir, const char *key_path, struct policy_store **out, char *err, size_t n);
/* The same with every choice: key_path NULL takes the keys of trust_dir
 * (NULL: CORDON_TRUST_DIR), read again at every reload, and there must be
 * at least one; lint_level (enum lint_gate_level) refuses blobs as
 * `cordon run --require-lint-clean` does. */
struct policies_opts {
	const char *key_path;
	const char *trust_dir;
	int lint_level;
};
int policies_open_opts(const char *dir, const struct policies_opts *o, struct policy_store **out, char *err,
		       size_t n);
int policies_reload(struct policy_store *s, char *err, size_t n);
void policies_close(struct policy_store *s);

/* The current set with a reference: release it with policy_set_put(). */
struct policy_set *policies_current(struct policy_store *s);
void policy_set_put(struct policy_set *set);

/* The entry of app in set, or NULL; borrowed from the set (take a
 * reference before dropping the set). */
struct policy_entry *policy_set_find(const struct policy_set *set, const char *app);

struct policy_entry *policy_entry_get(struct policy_entry *e);
void policy_entry_put(struct policy_entry *e);

/* sys.version of the entry's interpreter for its description (what
 * `cordonc describe` says), probed once on first use; NULL when it could
 * not be run (the description then says "version unknown"). */
const char *policy_entry_python(struct policy_entry *e);

/* Load one directory into a new set (what open and reload do), without a
 * store: for tests and for cordon serve's start-up check.  reuse: a set
 * whose unchanged entries are kept, or NULL. */
int policies_load_dir(const char *dir, const struct trust_keys *keys, int lint_level, const struct policy_set *reuse,
		      struct policy_set **out, char *err, size_t n);

#endif
