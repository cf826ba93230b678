/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_blob.c - libFuzzer target for blob_load() (runtime/blob_load.c).
 *
 * Each input is loaded twice: as given, which exercises the header, the
 * section table and the hash check; and with total_size and the SHA-256
 * patched to match, so mutations reach the record decoders behind the hash
 * (a hostile writer can always produce a correct hash).  Whatever the
 * bytes, the loader must return without a crash, a hang, a leak or a read
 * outside the input.
 *
 * Seeds in tests/fuzz/corpus/blob: rich*.cpol and minimal.cpol are written
 * by the unit test (CORDON_WRITE_SEEDS=tests/fuzz/corpus/blob
 * build/tests/test_blob); cafe.cpol is `cordonc compile` of examples/cafe,
 * and cafe-signed.cpol the same signed with a throwaway key.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cordon/blob.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_load(const uint8_t *data, size_t size)
{
	struct cpol_policy p;
	struct blob_error err;

	if (blob_load(data, size, BLOB_ANY_ARCH, &p, &err) != 0 &&
	    (err.field[0] == '\0' || err.msg[0] == '\0'))
		abort(); /* every refusal names a field and says why */
	policy_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;
	uint64_t sig_off;

	fuzz_load(data, size);
	/* blob_sig_offset() reads the last entry of a table of up to 17
	 * (format 3.5): the whole of the longer table must be there. */
	if (size < CPOL_TABLE_END_PROV || size > CPOL_MAX_BLOB_SIZE)
		return 0;
	sig_off = blob_sig_offset(data);
	if (sig_off < CPOL_TABLE_END || sig_off > size)
		return 0;
	/* Exact size, so ASan still sees a read past the end. */
	copy = malloc(size);
	if (copy == NULL)
		return 0;
	memcpy(copy, data, size);
	for (int i = 0; i < 8; i++)
		copy[CPOL_HDR_TOTAL_SIZE + i] = (uint8_t)((uint64_t)size >> (8 * i));
	blob_hash(copy, (size_t)sig_off, copy + CPOL_HDR_SHA256);
	fuzz_load(copy, size);
	free(copy);
	return 0;
}
