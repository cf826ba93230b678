/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policies.c - the policy set of cordon serve (policies.h).
 *
 * Loading takes the same checks as `cordon run --trusted-key` (run.c's
 * policy stage): map, blob_load for this host's arch, signature by the
 * trusted key, isolated mode.  One bad blob fails the whole load: a server
 * that silently dropped an app would answer 404 for it with no sign why.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "runtime/client/agent_doc.h"
#include "runtime/lint_gate.h"
#include "runtime/serve/policies.h"

struct policy_store {
	pthread_mutex_t mu;          /* guards cur */
	struct policy_set *cur;
	char *dir, *key_path, *trust_dir; /* key_path NULL: the trust directory's keys */
	int lint_level;              /* enum lint_gate_level */
	pthread_mutex_t reload_mu;   /* one reload at a time */
};

static void entry_free(struct policy_entry *e)
{
	if (e == NULL)
		return;
	policy_free(&e->pol);
	blob_unmap(&e->map);
	pthread_mutex_destroy(&e->probe_mu);
	free(e->python_version);
	free(e->file);
	free(e);
}

struct policy_entry *policy_entry_get(struct policy_entry *e)
{
	atomic_fetch_add(&e->refs, 1);
	return e;
}

void policy_entry_put(struct policy_entry *e)
{
	if (e != NULL && atomic_fetch_sub(&e->refs, 1) == 1)
		entry_free(e);
}

static void set_free(struct policy_set *set)
{
	for (unsigned i = 0; i < set->n; i++)
		policy_entry_put(set->entries[i]);
	free(set->entries);
	free(set);
}

void policy_set_put(struct policy_set *set)
{
	if (set != NULL && atomic_fetch_sub(&set->refs, 1) == 1)
		set_free(set);
}

struct policy_entry *policy_set_find(const struct policy_set *set, const char *app)
{
	unsigned lo = 0, hi = set->n;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		int c = strcmp(app, set->entries[mid]->pol.meta.app);

		if (c == 0)
			return set->entries[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

const char *policy_entry_python(struct policy_entry *e)
{
	char *ver = NULL, err[256];
	const char *v;

	pthread_mutex_lock(&e->probe_mu);
	if (!e->probed && (ver = malloc(AGENT_DOC_VERSION_MAX)) != NULL) {
		/* Once per entry: a probe runs the interpreter (agent_doc.h).
		 * A failed one is not retried; the text says "unknown". */
		if (agent_doc_probe_python(e->pol.exec.interpreter, ver, AGENT_DOC_VERSION_MAX, err, sizeof(err)) == 0)
			e->python_version = ver;
		else
			free(ver);
		e->probed = 1;
	}
	v = e->python_version;
	pthread_mutex_unlock(&e->probe_mu);
	return v;
}

/* One blob, loaded and verified as `cordon run --trusted-key` would, and
 * held to --require-lint-clean. */
static int entry_load(const char *dir, const char *name, const struct trust_keys *keys, int lint_level,
		      struct policy_entry **out, char *err, size_t n)
{
	size_t which;
	struct policy_entry *e = calloc(1, sizeof(*e));
	struct blob_error be;
	char path[PATH_MAX], serr[512];
	int rc = -1;

	*out = NULL;
	if (e == NULL) {
		snprintf(err, n, "out of memory");
		return -1;
	}
	policy_init(&e->pol);
	atomic_init(&e->refs, 1);
	pthread_mutex_init(&e->probe_mu, NULL);
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path)) {
		snprintf(err, n, "%s/%s: path too long", dir, name);
		goto out;
	}
	if ((e->file = strdup(name)) == NULL) {
		snprintf(err, n, "out of memory");
		goto out;
	}
	if (blob_map_file(path, &e->map, &be) != 0) {
		snprintf(err, n, "%s: %s", path, be.msg);
		goto out;
	}
	if (blob_load(e->map.data, e->map.len, CPOL_ARCH_X86_64, &e->pol, &be) != 0) {
		snprintf(err, n, "%s: invalid policy blob: %s [field %s, byte %llu]", path, be.msg, be.field,
			 (unsigned long long)be.offset);
		goto out;
	}
	if (trust_keys_verify(keys, &e->pol, &which, serr, sizeof(serr)) != 0 ||
	    lint_gate_check(&e->pol, (enum lint_gate_level)lint_level, serr, sizeof(serr)) != 0) {
		snprintf(err, n, "%s: refused: %s", path, serr);
		goto out;
	}
	if (e->pol.limits.mode != CPOL_MODE_ISOLATED) {
		snprintf(err, n, "%s: mode '%s' is not supported by cordon serve (only isolated)", path,
			 policy_mode_name(e->pol.limits.mode));
		goto out;
	}
	sodium_bin2hex(e->sha256, sizeof(e->sha256), e->pol.sha256, 32);
	key_id_hex(e->pol.signature.keyid, e->key_id);
	*out = e;
	e = NULL;
	rc = 0;
out:
	entry_free(e);
	return rc;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int entry_cmp(const void *a, const void *b)
{
	const struct policy_entry *x = *(struct policy_entry *const *)a, *y = *(struct policy_entry *const *)b;
	int c = strcmp(x->pol.meta.app, y->pol.meta.app);

	/* ties by file name: a duplicate is reported the same way every time */
	return c != 0 ? c : strcmp(x->file, y->file);
}

/* The *.cpol names of dir, sorted (so errors and duplicates are reported
 * the same way every time).  Hidden names are skipped: editors and
 * atomic writers leave ".name.cpol.tmp"-like files beside the real ones. */
static int dir_list(const char *dir, char ***names, unsigned *count, char *err, size_t n)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **v = NULL;
	unsigned nv = 0;
	int rc = -1;

	if (d == NULL) {
		snprintf(err, n, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if ((v = calloc(POLICIES_MAX, sizeof(*v))) == NULL) {
		snprintf(err, n, "out of memory");
		goto out;
	}
	errno = 0;
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);

		if (de->d_name[0] == '.' || len <= 5 || strcmp(de->d_name + len - 5, ".cpol") != 0)
			continue;
		if (nv == POLICIES_MAX) {
			snprintf(err, n, "%s: more than %d policy blobs", dir, POLICIES_MAX);
			goto out;
		}
		if ((v[nv] = strdup(de->d_name)) == NULL) {
			snprintf(err, n, "out of memory");
			goto out;
		}
		nv++;
		errno = 0;
	}
	if (errno != 0) {
		snprintf(err, n, "%s: %s", dir, strerror(errno));
		goto out;
	}
	if (nv == 0) {
		/* An empty set is refused, at a reload too: a directory that
		 * lost every blob is a mistake to report, not a server to
		 * empty. */
		snprintf(err, n, "%s: no *.cpol policy blobs", dir);
		goto out;
	}
	qsort(v, nv, sizeof(*v), name_cmp);
	*names = v;
	*count = nv;
	v = NULL;
	nv = 0;
	rc = 0;
out:
	for (unsigned i = 0; i < nv; i++)
		free(v[i]);
	free(v);
	closedir(d);
	return rc;
}

/* The entry of reuse that is this very blob (same file, app, hash and
 * signing key), so a reload keeps the entry pools were filled from.  The
 * file name counts: a copy of a blob under a second name is a second blob
 * of its app, and the duplicate check must name both files. */
static struct policy_entry *reuse_find(const struct policy_set *reuse, const struct policy_entry *e)
{
	struct policy_entry *old = reuse ? policy_set_find(reuse, e->pol.meta.app) : NULL;

	if (old == NULL || strcmp(old->file, e->file) != 0 || strcmp(old->sha256, e->sha256) != 0 ||
	    strcmp(old->key_id, e->key_id) != 0)
		return NULL;
	return old;
}

int policies_load_dir(const char *dir, const struct trust_keys *keys, int lint_level, const struct policy_set *reuse,
		      struct policy_set **out, char *err, size_t n)
{
	struct policy_set *set = NULL;
	char **names = NULL;
	unsigned nnames = 0;
	int rc = -1;

	*out = NULL;
	if (dir_list(dir, &names, &nnames, err, n) != 0)
		goto out;
	if ((set = calloc(1, sizeof(*set))) == NULL || (set->entries = calloc(nnames, sizeof(*set->entries))) == NULL) {
		snprintf(err, n, "out of memory");
		goto out;
	}
	atomic_init(&set->refs, 1);
	for (unsigned i = 0; i < nnames; i++) {
		struct policy_entry *e, *old;

		if (entry_load(dir, names[i], keys, lint_level, &e, err, n) != 0)
			goto out;
		if ((old = reuse_find(reuse, e)) != NULL) {
			entry_free(e);
			e = policy_entry_get(old);
		}
		set->entries[set->n++] = e;
	}
	qsort(set->entries, set->n, sizeof(*set->entries), entry_cmp);
	for (unsigned i = 1; i < set->n; i++) {
		if (strcmp(set->entries[i - 1]->pol.meta.app, set->entries[i]->pol.meta.app) == 0) {
			snprintf(err, n, "%s/%s: app '%s' is also the app of %s/%s: one blob per app", dir,
				 set->entries[i]->file, set->entries[i]->pol.meta.app, dir, set->entries[i - 1]->file);
			goto out;
		}
	}
	*out = set;
	set = NULL;
	rc = 0;
out:
	if (set != NULL)
		set_free(set);
	for (unsigned i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	return rc;
}

/* A fresh load of the store's directory against the keys as they are now:
 * the named key, or else the trust directory's, which must hold one (a
 * server runs signed policies only). */
static int store_load(struct policy_store *s, const struct policy_set *reuse, struct policy_set **out, char *err,
		      size_t n)
{
	struct trust_keys *keys = calloc(1, sizeof(*keys));
	int rc = -1;

	if (keys == NULL) {
		snprintf(err, n, "out of memory");
		return -1;
	}
	if (s->key_path != NULL) {
		if (key_read_public(s->key_path, &keys->key[0], err, n) != 0)
			goto out;
		snprintf(keys->file[0], sizeof(keys->file[0]), "%s", s->key_path);
		keys->n = 1;
	} else {
		if (trust_dir_load(s->trust_dir, keys, err, n) != 0)
			goto out;
		if (keys->n == 0) {
			snprintf(err, n, "no --trusted-key, and trust directory %s holds no *.pub key: a server runs "
					 "signed policies only", s->trust_dir);
			goto out;
		}
	}
	rc = policies_load_dir(s->dir, keys, s->lint_level, reuse, out, err, n);
out:
	free(keys);
	return rc;
}

int policies_open(const char *dir, const char *key_path, struct policy_store **out, char *err, size_t n)
{
	struct policies_opts o = { key_path, NULL, LINT_GATE_OFF };

	return policies_open_opts(dir, &o, out, err, n);
}

int policies_open_opts(const char *dir, const struct policies_opts *o, struct policy_store **out, char *err,
		       size_t n)
{
	struct policy_store *s = calloc(1, sizeof(*s));
	int rc = -1;

	*out = NULL;
	if (s == NULL) {
		snprintf(err, n, "out of memory");
		return -1;
	}
	pthread_mutex_init(&s->mu, NULL);
	pthread_mutex_init(&s->reload_mu, NULL);
	s->lint_level = o->lint_level;
	if ((s->dir = strdup(dir)) == NULL || (o->key_path != NULL && (s->key_path = strdup(o->key_path)) == NULL) ||
	    (s->trust_dir = strdup(o->trust_dir ? o->trust_dir : CORDON_TRUST_DIR)) == NULL) {
		snprintf(err, n, "out of memory");
		goto out;
	}
	if (store_load(s, NULL, &s->cur, err, n) != 0)
		goto out;
	*out = s;
	s = NULL;
	rc = 0;
out:
	policies_close(s);
	return rc;
}

int policies_reload(struct policy_store *s, char *err, size_t n)
{
	struct policy_set *old, *fresh = NULL;
	int rc = -1;

	pthread_mutex_lock(&s->reload_mu);
	old = policies_current(s);
	if (store_load(s, old, &fresh, err, n) != 0)
		goto out;
	pthread_mutex_lock(&s->mu);
	policy_set_put(s->cur);
	s->cur = fresh;
	pthread_mutex_unlock(&s->mu);
	rc = 0;
out:
	pthread_mutex_unlock(&s->reload_mu);
	policy_set_put(old);
	return rc;
}

struct policy_set *policies_current(struct policy_store *s)
{
	struct policy_set *set;

	pthread_mutex_lock(&s->mu);
	set = s->cur;
	atomic_fetch_add(&set->refs, 1);
	pthread_mutex_unlock(&s->mu);
	return set;
}

void policies_close(struct policy_store *s)
{
	if (s == NULL)
		return;
	if (s->cur != NULL)
		policy_set_put(s->cur);
	pthread_mutex_destroy(&s->mu);
	pthread_mutex_destroy(&s->reload_mu);
	free(s->dir);
	free(s->key_path);
	free(s->trust_dir);
	free(s);
}
