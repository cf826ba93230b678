/* SPDX-License-Identifier: Apache-2.0 */
/*
 * blob.h - writing and loading .cpol blobs (format in cpol.h).
 *
 * emit (compiler/emit.c) and load (runtime/blob_load.c) are mirror images:
 * the same sections, the same fields, in the same order.
 */
#ifndef CORDON_BLOB_H
#define CORDON_BLOB_H

#include <stddef.h>
#include <stdint.h>

#include "cordon/policy.h"

/* What went wrong with a blob, and where: the field (e.g.
 * "tools[3].params.first") and the byte offset of that field in the blob.
 * msg is a complete sentence for the user. */
struct blob_error {
	char field[96];
	uint64_t offset;
	char msg[256];
};

/* Load flags. */
#define BLOB_ANY_ARCH 0u /* want_arch: accept any arch the format knows */

/*
 * Validate buf[0..len) completely and decode it into *out (initialised by
 * the call; free with policy_free() whatever the result).  Checks, in order:
 * header (magic, version, arch, sizes), section table (ids, order, offsets,
 * alignment, padding, lengths), SHA-256, then every record: string and list
 * references, indices, enums, flags, reserved zeros, sort order and
 * uniqueness, bounds (min <= max), the seccomp program's size.  Returns 0, or
 * -1 with *err filled.  Never reads outside buf.
 */
int blob_load(const uint8_t *buf, size_t len, uint32_t want_arch, struct cpol_policy *out,
	      struct blob_error *err);

/* SHA-256 of a blob as the format defines it (hash field as zeros, the
 * signature section excluded).  sig_off is the signature section's offset;
 * the caller has checked sig_off <= len and that the hash field lies below
 * it. */
void blob_hash(const uint8_t *buf, size_t sig_off, uint8_t out[32]);

/* Offset of the signature section, read from the last table entry (entry
 * 14 of 15, or 16 of 17 in a 3.5 blob with provenance): a blob that
 * blob_load() accepted, or at least CPOL_TABLE_END_PROV bytes. */
uint64_t blob_sig_offset(const uint8_t *buf);

/*
 * Serialise p into a fresh malloc'd buffer (*out, *outlen; caller frees).
 * Deterministic: the same policy gives the same bytes.  The signature
 * section is written from p->signature (zero for a new blob) and p->sha256 is
 * set to the blob's hash.  The policy's tables must already be sorted and
 * unique as cpol.h requires; emit checks nothing it does not have to, blob_load
 * checks everything.  Returns 0, or -1 with *err filled (a table too large
 * for the format).
 */
int blob_emit(struct cpol_policy *p, uint8_t **out, size_t *outlen, struct blob_error *err);

/* A read-only mapping of a blob file. */
struct blob_map {
	uint8_t *data;
	size_t len;
};

/* Map path read-only (O_RDONLY|O_CLOEXEC), refusing non-regular files, empty
 * files and files over CPOL_MAX_BLOB_SIZE.  -1 with *err filled. */
int blob_map_file(const char *path, struct blob_map *m, struct blob_error *err);
void blob_unmap(struct blob_map *m);

#endif
