/* SPDX-License-Identifier: Apache-2.0 */
/*
 * keys.h - Ed25519 keys and blob signatures, in the manner of signify.
 *
 * Key files are two lines: an untrusted comment, then base64 of
 * "Ed" || key id (8 bytes) || key (32 public / 64 secret).  The key id is
 * random at keygen and travels in the blob's signature section, so a blob
 * signed by another key is refused by name before any cryptography runs.
 * The signed message is CPOL_SIG_CONTEXT (without NUL) || the blob's
 * SHA-256.  Secret key files are created O_EXCL, mode 0600, and wiped from
 * memory after use.
 */
#ifndef CORDON_KEYS_H
#define CORDON_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "cordon/policy.h"

#define KEY_ID_BYTES 8
#define KEY_FILE_MAX 4096

struct pubkey {
	uint8_t keyid[KEY_ID_BYTES];
	uint8_t pk[32];
};

struct seckey {
	uint8_t keyid[KEY_ID_BYTES];
	uint8_t sk[64];
};

/* Read a public key file; -1 with err filled ("path: reason"). */
int key_read_public(const char *path, struct pubkey *k, char *err, size_t errlen);
/* Check a loaded policy's signature against k: unsigned, another key id, or
 * a bad signature each give -1 and a distinct message. */
int sig_verify_policy(const struct cpol_policy *p, const struct pubkey *k, char *err, size_t errlen);
/* The message that is signed: CPOL_SIG_CONTEXT || sha256.  Returns its length. */
size_t sig_message(const uint8_t sha256[32], uint8_t *buf, size_t cap);
/* Hex of a key id into buf (17 bytes). */
void key_id_hex(const uint8_t keyid[KEY_ID_BYTES], char buf[2 * KEY_ID_BYTES + 1]);

#endif
