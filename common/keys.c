/* SPDX-License-Identifier: Apache-2.0 */
/*
 * keys.c - public keys and signature checks, shared by cordon and cordonc.
 * The secret-key side (keygen, sign) is compiler-only: compiler/sign.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cordon/keys.h"
#include "cordon/key_file.h"

void key_id_hex(const uint8_t keyid[KEY_ID_BYTES], char buf[2 * KEY_ID_BYTES + 1])
{
	sodium_bin2hex(buf, 2 * KEY_ID_BYTES + 1, keyid, KEY_ID_BYTES);
}

size_t sig_message(const uint8_t sha256[32], uint8_t *buf, size_t cap)
{
	size_t clen = sizeof(CPOL_SIG_CONTEXT) - 1;

	if (cap < clen + 32)
		return 0;
	memcpy(buf, CPOL_SIG_CONTEXT, clen);
	memcpy(buf + clen, sha256, 32);
	return clen + 32;
}

/*
 * Read a key file of at most KEY_FILE_MAX bytes and decode its second line.
 * want is the decoded length ("Ed" + id + key).  O_NOFOLLOW: a key path is
 * named by an operator, and a symlink swapped in by someone else should not
 * silently choose the key.  O_NONBLOCK: a FIFO in its place opens at once,
 * without a writer, and is refused as not a regular file instead of
 * hanging the caller.
 */
int key_file_decode(const char *path, const char *kind, uint8_t *out, size_t want, char *err, size_t errlen)
{
	char buf[KEY_FILE_MAX + 1];
	const char *line2, *end;
	size_t got = 0, binlen = 0;
	struct stat st;
	ssize_t r;
	int fd = -1, rc = -1;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot open %s key: %s", path, kind, strerror(errno));
		goto out;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: %s key is not a regular file", path, kind);
		goto out;
	}
	while (got < sizeof(buf) - 1) {
		r = read(fd, buf + got, sizeof(buf) - 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, errlen, "%s: cannot read %s key: %s", path, kind, strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	if (got >= sizeof(buf) - 1) {
		snprintf(err, errlen, "%s: %s key file is too large", path, kind);
		goto out;
	}
	buf[got] = '\0';
	if (strncmp(buf, "untrusted comment: ", 19) != 0 || (line2 = strchr(buf, '\n')) == NULL) {
		snprintf(err, errlen, "%s: not a cordon %s key (no comment line)", path, kind);
		goto out;
	}
	line2++;
	end = strchr(line2, '\n');
	if (end == NULL || end[1] != '\0') {
		snprintf(err, errlen, "%s: not a cordon %s key (expected exactly two lines)", path, kind);
		goto out;
	}
	if (sodium_base642bin(out, want, line2, (size_t)(end - line2), NULL, &binlen, NULL,
			      sodium_base64_VARIANT_ORIGINAL) != 0 ||
	    binlen != want) {
		snprintf(err, errlen, "%s: not a cordon %s key (bad base64 or wrong length)", path, kind);
		goto out;
	}
	if (out[0] != 'E' || out[1] != 'd') {
		snprintf(err, errlen, "%s: unsupported key algorithm (expected Ed25519)", path);
		goto out;
	}
	rc = 0;
out:
	sodium_memzero(buf, sizeof(buf));
	if (fd >= 0)
		close(fd);
	return rc;
}

int key_read_public(const char *path, struct pubkey *k, char *err, size_t errlen)
{
	uint8_t raw[2 + KEY_ID_BYTES + 32];

	if (key_file_decode(path, "public", raw, sizeof(raw), err, errlen) != 0)
		return -1;
	memcpy(k->keyid, raw + 2, KEY_ID_BYTES);
	memcpy(k->pk, raw + 2 + KEY_ID_BYTES, 32);
	return 0;
}

int sig_verify_policy(const struct cpol_policy *p, const struct pubkey *k, char *err, size_t errlen)
{
	char want[2 * KEY_ID_BYTES + 1], got[2 * KEY_ID_BYTES + 1];
	uint8_t msg[64];
	size_t mlen;

	if (p->signature.algo != CPOL_SIG_ED25519) {
		snprintf(err, errlen, "policy is not signed");
		return -1;
	}
	/* The key id first, as signify does: "signed by another key" is a
	 * more useful answer than "bad signature", and costs no crypto. */
	if (memcmp(p->signature.keyid, k->keyid, KEY_ID_BYTES) != 0) {
		key_id_hex(p->signature.keyid, got);
		key_id_hex(k->keyid, want);
		snprintf(err, errlen, "policy is signed by key %s, not by the trusted key %s", got, want);
		return -1;
	}
	mlen = sig_message(p->sha256, msg, sizeof(msg));
	if (mlen == 0 || crypto_sign_verify_detached(p->signature.sig, msg, mlen, k->pk) != 0) {
		snprintf(err, errlen, "signature verification failed: the policy was changed after signing, "
				      "or the signature is corrupt");
		return -1;
	}
	return 0;
}
