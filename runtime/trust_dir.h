/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trust_dir.h - the host's system trust directory: when it holds keys,
 * `cordon run` and `cordon serve` run only policies signed by one of them.
 *
 * Which key decides, in order:
 *   1. --trusted-key KEY.pub: that key alone (the trust directory is not
 *      read: the command line named the key outright);
 *   2. the trust directory (CORDON_TRUST_DIR, /etc/cordon/trusted-keys by
 *      default; --trust-dir DIR instead), when it exists and holds at least
 *      one *.pub: the blob must be signed by one of them, unless
 *      --allow-unsigned, which runs it anyway and says so in the result;
 *   3. neither: no signature is required (as before the trust directory).
 *
 * The directory and every key file must be owned by root (or by the user
 * running cordon: a rootless caller's own directory) and writable by no one
 * else, and neither may be a symbolic link; otherwise a local user could add
 * a key, and the directory is refused whatever the flags.
 */
#ifndef CORDON_TRUST_DIR_H
#define CORDON_TRUST_DIR_H

#include <limits.h>
#include <stddef.h>

#include "cordon/keys.h"
#include "cordon/policy.h"

#ifndef CORDON_TRUST_DIR
#define CORDON_TRUST_DIR "/etc/cordon/trusted-keys"
#endif

#define TRUST_MAX_KEYS 64

/* A trust directory's keys. */
struct trust_keys {
	struct pubkey key[TRUST_MAX_KEYS];
	char file[TRUST_MAX_KEYS][NAME_MAX + 1];
	size_t n;
};

/* Read the *.pub files of dir.  A directory that does not exist gives 0
 * keys and success; an unsafe directory or key file, or one that does not
 * parse, gives -1 with err filled. */
int trust_dir_load(const char *dir, struct trust_keys *out, char *err, size_t errlen);

/* Verify p against the key of k with its key id: 0 with *which its index,
 * or -1 with err saying why (unsigned, no such key, bad signature). */
int trust_keys_verify(const struct trust_keys *k, const struct cpol_policy *p, size_t *which, char *err,
		      size_t errlen);

/* How a policy was accepted, for the result's evidence. */
struct trust_verdict {
	const char *source; /* "trusted-key", "trust-dir", "none" */
	int verified;       /* the signature was checked against a trusted key */
	int allowed_unsigned; /* the trust directory demanded a signature; --allow-unsigned overrode it */
	char key[PATH_MAX]; /* the key file that verified it, or "" */
	char keyid[2 * KEY_ID_BYTES + 1]; /* the blob's key id, or "" */
	char dir[PATH_MAX]; /* the trust directory consulted, or "" */
};

/*
 * Decide whether p may run, by the order above.  trusted_key and dir may be
 * NULL (dir NULL: CORDON_TRUST_DIR).  Returns 0 with v filled, or -1 with
 * err saying why, naming the directory that demanded a signature.
 */
int trust_check(const struct cpol_policy *p, const char *trusted_key, const char *dir, int allow_unsigned,
		struct trust_verdict *v, char *err, size_t errlen);

#endif
