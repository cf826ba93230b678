/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trust_dir.c - see trust_dir.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/trust_dir.h"

/* Root's, or the caller's own, and writable by nobody else. */
static int trust_safe(const struct stat *st, const char *what, const char *path, char *err, size_t errlen)
{
	if (st->st_uid != 0 && st->st_uid != geteuid()) {
		snprintf(err, errlen, "%s %s is owned by uid %u, neither root nor this user: refused (a trusted key "
				      "must not be addable by another user)", what, path, (unsigned)st->st_uid);
		return -1;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(err, errlen, "%s %s is writable by group or others (mode %04o): refused (a trusted key "
				      "must not be addable by another user)", what, path, (unsigned)(st->st_mode & 07777));
		return -1;
	}
	return 0;
}

static int trust_is_pub(const char *name)
{
	size_t len = strlen(name);

	return name[0] != '.' && len > 4 && strcmp(name + len - 4, ".pub") == 0;
}

int trust_dir_load(const char *dir, struct trust_keys *out, char *err, size_t errlen)
{
	struct dirent *de;
	struct stat st;
	DIR *d = NULL;
	int fd = -1, rc = -1;

	memset(out, 0, sizeof(*out));
	/* O_NOFOLLOW: the directory itself may not be a link someone could
	 * point elsewhere; its checks are made on the fd that is then read. */
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		if (e == ENOENT)
			return 0;
		/* O_DIRECTORY|O_NOFOLLOW on a link says ENOTDIR or ELOOP. */
		if ((e == ENOTDIR || e == ELOOP) && lstat(dir, &st) == 0 && S_ISLNK(st.st_mode))
			snprintf(err, errlen, "trust directory %s: is a symbolic link: refused", dir);
		else
			snprintf(err, errlen, "trust directory %s: %s", dir, strerror(e));
		return -1;
	}
	if (fstat(fd, &st) != 0 || trust_safe(&st, "trust directory", dir, err, errlen) != 0)
		goto out;
	d = fdopendir(fd);
	if (d == NULL) {
		snprintf(err, errlen, "trust directory %s: %s", dir, strerror(errno));
		goto out;
	}
	fd = -1; /* d owns it */
	while ((de = readdir(d)) != NULL) {
		char path[PATH_MAX];

		if (!trust_is_pub(de->d_name))
			continue;
		if (out->n == TRUST_MAX_KEYS) {
			snprintf(err, errlen, "trust directory %s holds more than %d keys", dir, TRUST_MAX_KEYS);
			goto out;
		}
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= sizeof(path)) {
			snprintf(err, errlen, "trust directory %s: a name is too long", dir);
			goto out;
		}
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (!S_ISREG(st.st_mode)) {
			snprintf(err, errlen, "%s: a trusted key must be a regular file (not a link)", path);
			goto out;
		}
		/* The directory is safe, so nobody else can swap the file
		 * between this check and the read (which is O_NOFOLLOW too). */
		if (trust_safe(&st, "trusted key", path, err, errlen) != 0 ||
		    key_read_public(path, &out->key[out->n], err, errlen) != 0)
			goto out;
		snprintf(out->file[out->n], sizeof(out->file[out->n]), "%s", de->d_name);
		out->n++;
	}
	rc = 0;
out:
	if (d != NULL)
		closedir(d);
	if (fd >= 0)
		close(fd);
	return rc;
}

int trust_keys_verify(const struct trust_keys *k, const struct cpol_policy *p, size_t *which, char *err,
		      size_t errlen)
{
	char kid[2 * KEY_ID_BYTES + 1];

	/* One key (a --trusted-key): its own messages, which name it. */
	if (k->n == 1) {
		*which = 0;
		return sig_verify_policy(p, &k->key[0], err, errlen);
	}
	if (p->signature.algo != CPOL_SIG_ED25519) {
		snprintf(err, errlen, "policy is not signed");
		return -1;
	}
	/* By key id first, as sig_verify_policy() does for one key. */
	for (size_t i = 0; i < k->n; i++) {
		if (memcmp(k->key[i].keyid, p->signature.keyid, KEY_ID_BYTES) != 0)
			continue;
		if (sig_verify_policy(p, &k->key[i], err, errlen) != 0)
			return -1;
		*which = i;
		return 0;
	}
	key_id_hex(p->signature.keyid, kid);
	snprintf(err, errlen, "policy is signed by key %s, which is not among them", kid);
	return -1;
}

int trust_check(const struct cpol_policy *p, const char *trusted_key, const char *dir, int allow_unsigned,
		struct trust_verdict *v, char *err, size_t errlen)
{
	struct trust_keys tk;
	char why[512];
	size_t i;

	memset(v, 0, sizeof(*v));
	v->source = "none";
	if (p->signature.algo == CPOL_SIG_ED25519)
		key_id_hex(p->signature.keyid, v->keyid);
	if (trusted_key != NULL) {
		struct pubkey key;

		if (key_read_public(trusted_key, &key, err, errlen) != 0 ||
		    sig_verify_policy(p, &key, err, errlen) != 0)
			return -1;
		v->source = "trusted-key";
		v->verified = 1;
		snprintf(v->key, sizeof(v->key), "%s", trusted_key);
		return 0;
	}
	if (dir == NULL)
		dir = CORDON_TRUST_DIR;
	if (trust_dir_load(dir, &tk, err, errlen) != 0)
		return -1;
	if (tk.n == 0)
		return 0;
	snprintf(v->dir, sizeof(v->dir), "%s", dir);
	v->source = "trust-dir";
	if (trust_keys_verify(&tk, p, &i, why, sizeof(why)) == 0) {
		v->verified = 1;
		snprintf(v->key, sizeof(v->key), "%s/%s", dir, tk.file[i]);
		return 0;
	}
	if (allow_unsigned) {
		v->allowed_unsigned = 1;
		return 0;
	}
	snprintf(err, errlen,
		 "trust directory %s holds %zu trusted key%s, so only policies signed by one of them run: %s "
		 "(sign it with 'cordonc sign', name a key with --trusted-key, or pass --allow-unsigned)",
		 dir, tk.n, tk.n == 1 ? "" : "s", why);
	return -1;
}
