/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_constraint_verify.c - libFuzzer target for the constraint bytecode
 * verifier (runtime/constraint_verify.c) and evaluator
 * (runtime/constraint_eval.c).
 *
 * The input is raw CONSTRAINTS instructions (16 bytes each, at most
 * FUZZ_MAX_INSNS) for the one tool of a fixed, valid policy; when the
 * length leaves 8 or more bytes over, the 8 after the instructions replace
 * the tool's constraints (first, count) field.  The blob is emitted with
 * placeholder instructions, the input is written over them, and the hash
 * is recomputed, so every input reaches the loader's instruction checks and
 * the verifier (a hostile writer can always produce a correct hash).
 *
 * Whatever the bytes: the loader returns without a crash, a hang, a leak or
 * an out-of-bounds read, and a refusal names a field.  A blob it accepts is
 * evaluated against fixed parameter objects, and the evaluator's own
 * defensive checks must never fire (CONSTRAINT_BROKEN aborts): that is the
 * verifier's promise.
 *
 * Seeds in tests/fuzz/corpus/constraint_verify are compiled constraints over
 * the same signature, written by the unit test:
 *   CORDON_WRITE_SEEDS=tests/fuzz/corpus/constraint_verify build/tests/test_constraints
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cordon/blob.h"
#include "runtime/constraint_eval.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_INSNS 1024u

/* The signature of tests/unit/test_constraints.c, so its seeds name the
 * same params: a top-level run of eight, an array's items, an object's
 * property. */
static const struct {
	const char *name;
	uint32_t type;
} sig[] = {
	{ "amount", CPOL_T_NUMBER }, { "count", CPOL_T_INTEGER }, { "flag", CPOL_T_BOOLEAN },
	{ "meta", CPOL_T_OBJECT },   { "name", CPOL_T_STRING },   { "note", CPOL_T_STRING },
	{ "qty", CPOL_T_INTEGER },   { "tags", CPOL_T_ARRAY },    { "", CPOL_T_STRING },
	{ "x", CPOL_T_INTEGER },
};
#define NSIG ((uint32_t)(sizeof(sig) / sizeof(sig[0])))
#define NTOP 8u

static const char *const exec_argv[] = { "/bin/true" };

static const char *const inputs[] = {
	"{}",
	"{\"amount\": 2.5, \"count\": 3, \"flag\": true, \"meta\": {\"x\": 1}, \"name\": \"abc\", "
	"\"note\": \"x@example.org\", \"qty\": -7, \"tags\": [\"a\", \"b\"]}",
	"{\"amount\": \"1\", \"count\": 1.5, \"flag\": 0, \"meta\": [], \"name\": 5, \"note\": null, "
	"\"qty\": 1e300, \"tags\": {}}",
	"[1, 2, 3]",
};
#define NINPUTS (sizeof(inputs) / sizeof(inputs[0]))

static cJSON *parsed[NINPUTS];

static int fuzz_build(struct cpol_policy *p, uint32_t n)
{
	policy_init(p);
	p->arch = CPOL_ARCH_X86_64;
	p->limits = (struct cpol_limits){ 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, CPOL_MODE_LOCAL, 1, 0 };
	p->params = arena_calloc(&p->arena, NSIG, sizeof(*p->params));
	p->tools = arena_calloc(&p->arena, 1, sizeof(*p->tools));
	p->constraints = arena_calloc(&p->arena, n ? n : 1, sizeof(*p->constraints));
	if (p->params == NULL || p->tools == NULL || p->constraints == NULL)
		return -1;
	p->nparams = NSIG;
	for (uint32_t i = 0; i < NSIG; i++) {
		p->params[i].name = sig[i].name;
		p->params[i].type = sig[i].type;
		p->params[i].items = CPOL_NONE;
	}
	p->params[7].items = 8;
	p->params[3].props = (struct cpol_range){ 9, 1 };
	p->ntools = 1;
	p->tools[0].id = "t.x";
	p->tools[0].description = "a tool";
	p->tools[0].timeout_ms = 1000;
	p->tools[0].memory_bytes = 1;
	p->tools[0].pids = 1;
	p->tools[0].exec.v = (const char **)exec_argv;
	p->tools[0].exec.n = 1;
	p->tools[0].params = (struct cpol_range){ 0, NTOP };
	p->tools[0].constraints = (struct cpol_range){ 0, n };
	/* Placeholders, overwritten below: emit writes what it is given. */
	for (uint32_t i = 0; i < n; i++)
		p->constraints[i].op = CPOL_OP_RET;
	p->nconstraints = n;
	return 0;
}

static uint64_t fuzz_le(const uint8_t *b, size_t w)
{
	uint64_t v = 0;

	for (size_t i = 0; i < w; i++)
		v |= (uint64_t)b[i] << (8 * i);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cpol_policy p, q;
	struct blob_error err;
	uint8_t *blob = NULL;
	size_t len = 0, n = size / CPOL_INSN_BYTES, rest;
	uint64_t ins_off, tool_off;

	if (parsed[0] == NULL)
		for (size_t k = 0; k < NINPUTS; k++)
			if ((parsed[k] = cJSON_Parse(inputs[k])) == NULL)
				abort();
	if (n > FUZZ_MAX_INSNS)
		n = FUZZ_MAX_INSNS;
	rest = size - n * CPOL_INSN_BYTES;
	if (fuzz_build(&p, (uint32_t)n) != 0 || blob_emit(&p, &blob, &len, &err) != 0)
		abort(); /* the fixed policy always emits */
	/* Section-table entries: offset of CONSTRAINTS and TOOLS. */
	ins_off = fuzz_le(blob + CPOL_HEADER_SIZE + (CPOL_SEC_CONSTRAINTS - 1) * CPOL_SEC_ENT_BYTES +
				  CPOL_SEC_ENT_OFFSET,
			  8);
	tool_off = fuzz_le(blob + CPOL_HEADER_SIZE + (CPOL_SEC_TOOLS - 1) * CPOL_SEC_ENT_BYTES + CPOL_SEC_ENT_OFFSET,
			   8);
	memcpy(blob + ins_off, data, n * CPOL_INSN_BYTES);
	if (rest >= 8)
		memcpy(blob + tool_off + CPOL_TOOL_CONSTRAINTS, data + n * CPOL_INSN_BYTES, 8);
	blob_hash(blob, (size_t)blob_sig_offset(blob), blob + CPOL_HDR_SHA256);

	if (blob_load(blob, len, BLOB_ANY_ARCH, &q, &err) == 0) {
		for (size_t k = 0; k < NINPUTS; k++) {
			struct constraint_result r;

			constraint_eval(&q, 0, parsed[k], &r);
			if (r.verdict == CONSTRAINT_BROKEN)
				abort(); /* verified code must never trip the evaluator */
		}
		(void)constraint_count(&q, 0);
	} else if (err.field[0] == '\0' || err.msg[0] == '\0') {
		abort(); /* every refusal names a field and says why */
	}
	policy_free(&q);
	policy_free(&p);
	free(blob);
	return 0;
}
