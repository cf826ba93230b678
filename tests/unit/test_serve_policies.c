/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_serve_policies.c - cordon serve's policy set (runtime/serve/policies.c):
 * a directory of blobs compiled and signed here (the compiler's own
 * functions, as cordonc compile --sign does), loaded and verified; every
 * bad blob (tampered, unsigned, another key's, not isolated, a second blob
 * of one app) fails the whole load with a message naming the file; a
 * reload swaps atomically or not at all, and keeps unchanged entries.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "cordon/cpol.h"
#include "runtime/serve/policies.h"
#include "tests/unit/serve_fixture.h"

struct fixture {
	char dir[64];      /* the scratch directory */
	char pols[96];     /* dir/pols: the policy directory */
	char pub[96], sec[96], other_pub[96], other_sec[96];
};

static const char tools_yaml[] = "version: 1\n"
				 "tools:\n"
				 "  - id: calc.add\n"
				 "    description: Add.\n"
				 "    params: { a: { type: number, required: true } }\n"
				 "    exec: [/bin/true]\n";

/* A blob of app `app` in memory (*buf malloc'd), signed by sec unless NULL. */
static void blob_make(const char *app, const char *sec, const char *mode, uint8_t **buf, size_t *len)
{
	char yaml[512];

	snprintf(yaml, sizeof(yaml),
		 "version: 1\napp: %s\nexecution: { runtime: { mode: %s, timeout: 5s } }\n"
		 "agents: { helper: { tools: [calc.add] }, other: { tools: [] } }\n",
		 app, mode);
	fixture_blob(yaml, tools_yaml, sec, buf, len);
}

static void blob_put(const struct fixture *f, const char *name, const char *app, const char *sec)
{
	uint8_t *buf;
	size_t len;

	blob_make(app, sec, "isolated", &buf, &len);
	fixture_file_put(f->pols, name, buf, len);
	free(buf);
}

static void file_drop(const struct fixture *f, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", f->pols, name);
	assert_int_equal(unlink(path), 0);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char err[256];

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_serve_policies.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->pols, sizeof(f->pols), "%s/pols", f->dir);
	assert_int_equal(mkdir(f->pols, 0700), 0);
	snprintf(f->pub, sizeof(f->pub), "%s/k.pub", f->dir);
	snprintf(f->sec, sizeof(f->sec), "%s/k.sec", f->dir);
	snprintf(f->other_pub, sizeof(f->other_pub), "%s/o.pub", f->dir);
	snprintf(f->other_sec, sizeof(f->other_sec), "%s/o.sec", f->dir);
	assert_int_equal(key_generate(f->pub, f->sec, err, sizeof(err)), 0);
	assert_int_equal(key_generate(f->other_pub, f->other_sec, err, sizeof(err)), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	fixture_tmp_drop(f->dir);
	free(f);
	return 0;
}

/* Opening must fail, and the message must name the file and say why. */
static void open_fails(const struct fixture *f, const char *want1, const char *want2)
{
	struct policy_store *s = (struct policy_store *)1;
	char err[1024] = "";

	assert_int_equal(policies_open(f->pols, f->pub, &s, err, sizeof(err)), -1);
	assert_null(s);
	if (strstr(err, want1) == NULL || (want2 != NULL && strstr(err, want2) == NULL))
		fail_msg("error '%s' lacks '%s' / '%s'", err, want1, want2 ? want2 : "");
}

static void test_good_set(void **state)
{
	struct fixture *f = *state;
	struct policy_store *s;
	struct policy_set *set;
	struct policy_entry *e;
	struct pubkey k;
	char err[1024], kid[17];

	blob_put(f, "b.cpol", "beta", f->sec);
	blob_put(f, "a.cpol", "alpha", f->sec);
	fixture_file_put(f->pols, "README", (const uint8_t *)"not a blob", 10);   /* ignored: not *.cpol */
	fixture_file_put(f->pols, ".x.cpol", (const uint8_t *)"half written", 12); /* ignored: hidden */
	assert_int_equal(policies_open(f->pols, f->pub, &s, err, sizeof(err)), 0);
	set = policies_current(s);
	assert_int_equal(set->n, 2);
	assert_string_equal(set->entries[0]->pol.meta.app, "alpha");
	assert_string_equal(set->entries[1]->pol.meta.app, "beta");
	assert_null(policy_set_find(set, "gamma"));
	e = policy_set_find(set, "beta");
	assert_non_null(e);
	assert_string_equal(e->file, "b.cpol");
	assert_int_equal(strlen(e->sha256), 64);
	assert_int_equal(key_read_public(f->pub, &k, err, sizeof(err)), 0);
	key_id_hex(k.keyid, kid);
	assert_string_equal(e->key_id, kid);
	assert_non_null(policy_find_agent(&e->pol, "helper"));
	policy_set_put(set);
	policies_close(s);
}

static void test_tampered(void **state)
{
	struct fixture *f = *state;
	uint8_t *buf;
	size_t len;

	blob_put(f, "a.cpol", "alpha", f->sec);
	/* One byte of the last section flipped after signing: the hash
	 * check of the loader refuses it. */
	blob_make("beta", f->sec, "isolated", &buf, &len);
	buf[len - 80] ^= 0x01;
	fixture_file_put(f->pols, "t.cpol", buf, len);
	free(buf);
	open_fails(f, "/t.cpol: ", "invalid policy blob");
}

static void test_tampered_rehashed(void **state)
{
	struct fixture *f = *state;
	uint8_t *buf;
	size_t len;

	uint8_t h[32], *at;

	/* Changed and re-hashed, so the blob is self-consistent: only the
	 * signature can tell.  The change: the app name in the string table. */
	blob_make("beta", f->sec, "isolated", &buf, &len);
	at = memmem(buf, len, "beta", 4);
	assert_non_null(at);
	at[0] = 'z';
	blob_hash(buf, blob_sig_offset(buf), h);
	memcpy(buf + CPOL_HDR_SHA256, h, 32);
	fixture_file_put(f->pols, "r.cpol", buf, len);
	free(buf);
	open_fails(f, "/r.cpol: refused: ", "signature verification failed");
}

static void test_unsigned(void **state)
{
	struct fixture *f = *state;

	blob_put(f, "u.cpol", "alpha", NULL);
	open_fails(f, "/u.cpol: refused: ", "not signed");
}

static void test_other_key(void **state)
{
	struct fixture *f = *state;

	blob_put(f, "o.cpol", "alpha", f->other_sec);
	open_fails(f, "/o.cpol: refused: ", "not by the trusted key");
}

static void test_duplicate_app(void **state)
{
	struct fixture *f = *state;

	blob_put(f, "one.cpol", "alpha", f->sec);
	blob_put(f, "two.cpol", "alpha", f->sec);
	open_fails(f, "app 'alpha' is also the app of ", "one blob per app");
}

static void test_empty_and_missing(void **state)
{
	struct fixture *f = *state;
	struct policy_store *s;
	char err[1024], missing[160];

	open_fails(f, "no *.cpol policy blobs", NULL);
	snprintf(missing, sizeof(missing), "%s/nope", f->dir);
	assert_int_equal(policies_open(missing, f->pub, &s, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "No such file"));
}

static void test_reload(void **state)
{
	struct fixture *f = *state;
	struct policy_store *s;
	struct policy_set *before, *after;
	struct policy_entry *alpha, *held;
	char err[1024];

	blob_put(f, "a.cpol", "alpha", f->sec);
	blob_put(f, "b.cpol", "beta", f->sec);
	assert_int_equal(policies_open(f->pols, f->pub, &s, err, sizeof(err)), 0);
	before = policies_current(s);
	alpha = policy_set_find(before, "alpha");
	held = policy_entry_get(policy_set_find(before, "beta")); /* a running execution's */

	/* A bad blob joins: the reload is refused, the old set stays. */
	blob_put(f, "c.cpol", "gamma", NULL);
	assert_int_equal(policies_reload(s, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "c.cpol: refused"));
	after = policies_current(s);
	assert_ptr_equal(after, before);
	policy_set_put(after);

	/* A copy of an unchanged blob under a second name: refused, and the
	 * message names both files (regression: the reused entry's name was
	 * given twice). */
	blob_put(f, "c.cpol", "gamma", f->sec);
	blob_put(f, "a2.cpol", "alpha", f->sec);
	assert_int_equal(policies_reload(s, err, sizeof(err)), -1);
	if (strstr(err, "/a2.cpol: app 'alpha' is also the app of ") == NULL || strstr(err, "/a.cpol: one blob") == NULL)
		fail_msg("%s", err);
	file_drop(f, "a2.cpol");

	/* Fixed, and beta gone: a new set; alpha unchanged keeps its entry. */
	blob_put(f, "c.cpol", "gamma", f->sec);
	file_drop(f, "b.cpol");
	assert_int_equal(policies_reload(s, err, sizeof(err)), 0);
	after = policies_current(s);
	assert_ptr_not_equal(after, before);
	assert_int_equal(after->n, 2);
	assert_ptr_equal(policy_set_find(after, "alpha"), alpha);
	assert_null(policy_set_find(after, "beta"));
	assert_non_null(policy_set_find(after, "gamma"));
	policy_set_put(after);

	/* The old set and beta's entry live while referenced. */
	policy_set_put(before);
	assert_string_equal(held->pol.meta.app, "beta");
	policy_entry_put(held);

	/* Re-signed by another key and the trusted key rotated: reloaded,
	 * and the entry is new (its key id differs). */
	rename(f->other_pub, f->pub);
	blob_put(f, "a.cpol", "alpha", f->other_sec);
	blob_put(f, "c.cpol", "gamma", f->other_sec);
	before = policies_current(s);
	alpha = policy_set_find(before, "alpha");
	assert_int_equal(policies_reload(s, err, sizeof(err)), 0);
	after = policies_current(s);
	assert_ptr_not_equal(policy_set_find(after, "alpha"), alpha);
	policy_set_put(after);
	policy_set_put(before);
	policies_close(s);
}

static void test_not_isolated(void **state)
{
	struct fixture *f = *state;
	uint8_t *buf;
	size_t len;

	blob_make("alpha", f->sec, "local", &buf, &len);
	fixture_file_put(f->pols, "m.cpol", buf, len);
	free(buf);
	open_fails(f, "/m.cpol: mode ", "only isolated");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_good_set, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tampered, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tampered_rehashed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unsigned, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_duplicate_app, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_and_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reload, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_isolated, setup, teardown),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
