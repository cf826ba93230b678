/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sign.h - the secret-key side of signing (cordonc only): keygen, reading a
 * secret key, signing a blob in memory, and writing files atomically.
 */
#ifndef CORDON_SIGN_H
#define CORDON_SIGN_H

#include <stddef.h>
#include <stdint.h>

#include "cordon/keys.h"

/* Create pub_path (0644) and sec_path (0600), both O_EXCL: an existing key
 * is never overwritten.  On failure neither file is left behind. */
int key_generate(const char *pub_path, const char *sec_path, char *err, size_t errlen);
int key_read_secret(const char *path, struct seckey *k, char *err, size_t errlen);

/* Validate buf as a blob, then fill its signature section with an Ed25519
 * signature by k.  The hash does not cover the signature section, so the
 * blob's SHA-256 is unchanged.  Re-signing replaces an older signature. */
int blob_sign(uint8_t *buf, size_t len, const struct seckey *k, char *err, size_t errlen);

/* Write buf to path through a temporary file in the same directory and
 * rename(): readers see the old file or the whole new one, never a part,
 * and a failed write leaves no output. */
int outfile_write_atomic(const char *path, const uint8_t *buf, size_t len, unsigned mode, char *err,
			 size_t errlen);
/* Read a whole regular file of at most max bytes into a malloc'd buffer. */
int file_read_all(const char *path, size_t max, uint8_t **out, size_t *outlen, char *err, size_t errlen);

#endif
