/* SPDX-License-Identifier: Apache-2.0 */
/*
 * key_file.h - the shared reader of signify-style key files (common/keys.c),
 * used for public keys by both binaries and for secret keys by cordonc.
 */
#ifndef CORDON_KEY_FILE_H
#define CORDON_KEY_FILE_H

#include <stddef.h>
#include <stdint.h>

/* Decode the base64 line of a key file into out[0..want); checks the "Ed"
 * prefix.  kind ("public"/"secret") is for messages.  out may hold secret
 * material: the caller wipes it. */
int key_file_decode(const char *path, const char *kind, uint8_t *out, size_t want, char *err, size_t errlen);

#endif
