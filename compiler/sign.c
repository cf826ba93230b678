/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sign.c - keygen, secret keys, blob signing, atomic output; see sign.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compiler/sign.h"
#include "cordon/blob.h"
#include "cordon/key_file.h"

static int write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len > 0) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

static int key_file_write(const char *path, unsigned mode, const char *comment, const uint8_t *raw, size_t rawlen,
			  char *err, size_t errlen)
{
	char b64[256], text[512];
	int fd = -1, rc = -1, n;

	sodium_bin2base64(b64, sizeof(b64), raw, rawlen, sodium_base64_VARIANT_ORIGINAL);
	n = snprintf(text, sizeof(text), "untrusted comment: %s\n%s\n", comment, b64);
	if (n < 0 || (size_t)n >= sizeof(text)) {
		snprintf(err, errlen, "%s: key text too long", path);
		goto out;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot create key file: %s", path, strerror(errno));
		goto out;
	}
	if (fchmod(fd, mode) != 0 || write_all(fd, text, (size_t)n) != 0 || fsync(fd) != 0) {
		snprintf(err, errlen, "%s: cannot write key file: %s", path, strerror(errno));
		unlink(path);
		goto out;
	}
	rc = 0;
out:
	sodium_memzero(b64, sizeof(b64));
	sodium_memzero(text, sizeof(text));
	if (fd >= 0)
		close(fd);
	return rc;
}

int key_generate(const char *pub_path, const char *sec_path, char *err, size_t errlen)
{
	uint8_t pk[crypto_sign_PUBLICKEYBYTES], sk[crypto_sign_SECRETKEYBYTES];
	uint8_t keyid[KEY_ID_BYTES];
	uint8_t raw_pub[2 + KEY_ID_BYTES + 32], raw_sec[2 + KEY_ID_BYTES + 64];
	char hex[2 * KEY_ID_BYTES + 1], comment[96];
	int rc = -1;

	if (sodium_init() < 0) {
		snprintf(err, errlen, "libsodium failed to initialise");
		return -1;
	}
	crypto_sign_keypair(pk, sk);
	randombytes_buf(keyid, sizeof(keyid));
	key_id_hex(keyid, hex);
	raw_pub[0] = raw_sec[0] = 'E';
	raw_pub[1] = raw_sec[1] = 'd';
	memcpy(raw_pub + 2, keyid, KEY_ID_BYTES);
	memcpy(raw_pub + 2 + KEY_ID_BYTES, pk, sizeof(pk));
	memcpy(raw_sec + 2, keyid, KEY_ID_BYTES);
	memcpy(raw_sec + 2 + KEY_ID_BYTES, sk, sizeof(sk));
	/* Secret first: if it cannot be created (it exists, say), no public
	 * key is left pointing at a secret nobody has. */
	snprintf(comment, sizeof(comment), "cordon secret key %s", hex);
	if (key_file_write(sec_path, 0600, comment, raw_sec, sizeof(raw_sec), err, errlen) != 0)
		goto out;
	snprintf(comment, sizeof(comment), "cordon public key %s", hex);
	if (key_file_write(pub_path, 0644, comment, raw_pub, sizeof(raw_pub), err, errlen) != 0) {
		unlink(sec_path);
		goto out;
	}
	rc = 0;
out:
	sodium_memzero(sk, sizeof(sk));
	sodium_memzero(raw_sec, sizeof(raw_sec));
	return rc;
}

int key_read_secret(const char *path, struct seckey *k, char *err, size_t errlen)
{
	uint8_t raw[2 + KEY_ID_BYTES + 64];
	int rc = -1;

	if (key_file_decode(path, "secret", raw, sizeof(raw), err, errlen) != 0)
		goto out;
	memcpy(k->keyid, raw + 2, KEY_ID_BYTES);
	memcpy(k->sk, raw + 2 + KEY_ID_BYTES, 64);
	rc = 0;
out:
	sodium_memzero(raw, sizeof(raw));
	return rc;
}

int blob_sign(uint8_t *buf, size_t len, const struct seckey *k, char *err, size_t errlen)
{
	struct cpol_policy p;
	struct blob_error be;
	uint8_t msg[64], sig[64];
	uint64_t off;
	size_t mlen;
	int rc = -1;

	if (blob_load(buf, len, BLOB_ANY_ARCH, &p, &be) != 0) {
		snprintf(err, errlen, "not a valid policy blob: %s (%s, byte %llu)", be.msg, be.field,
			 (unsigned long long)be.offset);
		goto out;
	}
	mlen = sig_message(p.sha256, msg, sizeof(msg));
	if (mlen == 0 || crypto_sign_detached(sig, NULL, msg, mlen, k->sk) != 0) {
		snprintf(err, errlen, "signing failed");
		goto out;
	}
	off = blob_sig_offset(buf);
	memset(buf + off, 0, CPOL_SIGNATURE_BYTES);
	buf[off + CPOL_SIG_ALGO] = CPOL_SIG_ED25519; /* u32 little-endian */
	memcpy(buf + off + CPOL_SIG_KEYID, k->keyid, KEY_ID_BYTES);
	memcpy(buf + off + CPOL_SIG_BYTES_OFF, sig, sizeof(sig));
	rc = 0;
out:
	policy_free(&p);
	return rc;
}

int outfile_write_atomic(const char *path, const uint8_t *buf, size_t len, unsigned mode, char *err,
			 size_t errlen)
{
	char tmp[PATH_MAX];
	int fd = -1, rc = -1, n;

	n = snprintf(tmp, sizeof(tmp), "%s.tmpXXXXXX", path);
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		snprintf(err, errlen, "%s: path too long", path);
		return -1;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot create temporary file: %s", path, strerror(errno));
		return -1;
	}
	if (fchmod(fd, mode) != 0 || write_all(fd, buf, len) != 0 || fsync(fd) != 0) {
		snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
		goto out;
	}
	if (close(fd) != 0) {
		fd = -1;
		snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) != 0) {
		snprintf(err, errlen, "%s: cannot rename into place: %s", path, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	if (rc != 0)
		unlink(tmp);
	return rc;
}

int file_read_all(const char *path, size_t max, uint8_t **out, size_t *outlen, char *err, size_t errlen)
{
	struct stat st;
	uint8_t *buf = NULL;
	size_t got = 0;
	int fd = -1, rc = -1;

	*out = NULL;
	*outlen = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		goto out;
	}
	if ((uint64_t)st.st_size > max) {
		snprintf(err, errlen, "%s: too large (%lld bytes; the limit is %zu)", path, (long long)st.st_size,
			 max);
		goto out;
	}
	buf = malloc((size_t)st.st_size ? (size_t)st.st_size : 1);
	if (buf == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	*out = buf;
	*outlen = got;
	buf = NULL;
	rc = 0;
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	return rc;
}
