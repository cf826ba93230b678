/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bpf_check.c - the kernel's seccomp filter checks, before the kernel
 * (bpf_check.h).
 *
 * Three passes: each instruction on its own (opcode allowed, operand in
 * range, jump targets inside), then "ends in ret", then the scratch-memory
 * dataflow, which may only run once every jump target is known to be in
 * range.  The kernel runs its two instruction loops one after the other;
 * merging them changes only which of several faults is named first, never
 * whether a program is accepted (the kernel says EINVAL either way).  The
 * rules were checked against a 6.x kernel by loading hand-made programs,
 * and tests/unit/test_bpf.c keeps that as a differential test over random
 * programs.
 */
#include <stddef.h>
#include <stdint.h>

#include <linux/filter.h>

#include "common/bpf_check.h"

_Static_assert(BPF_CHECK_MAX_INSNS == BPF_MAXINSNS, "BPF_MAXINSNS changed");
_Static_assert(BPF_CHECK_MEM_WORDS == BPF_MEMWORDS, "BPF_MEMWORDS changed");
_Static_assert(BPF_CHECK_MAX_INSNS == CPOL_MAX_SECCOMP_INSNS, "blob and kernel limits differ");
/* The dataflow below keeps one bit per scratch word in a uint16_t. */
_Static_assert(BPF_CHECK_MEM_WORDS <= 16, "memory mask too narrow");

static int bpf_check_fail(int result, uint32_t at, const char *msg, uint32_t *bad_index,
			  const char **why)
{
	if (bad_index)
		*bad_index = at;
	if (why)
		*why = msg;
	return result;
}

/* One instruction on its own, as bpf_check_classic()'s loop and
 * seccomp_check_filter()'s allowlist judge it together.  Returns a result
 * code and sets *why on failure. */
static int bpf_check_insn(const struct cpol_bpf *f, uint32_t pc, uint32_t n, const char **why)
{
	switch (f->code) {
	case BPF_LD | BPF_W | BPF_ABS:
		/* seccomp rewrites this into a load from struct seccomp_data:
		 * 32-bit, aligned, inside the 64 bytes. */
		if (f->k >= BPF_CHECK_DATA_BYTES || (f->k & 3u) != 0) {
			*why = "ld [k] must read an aligned 32-bit word inside seccomp_data (k < 64, k % 4 == 0)";
			return BPF_CHECK_LOAD_OFFSET;
		}
		return BPF_CHECK_OK;

	case BPF_LD | BPF_W | BPF_LEN:
	case BPF_LDX | BPF_W | BPF_LEN:
	case BPF_LD | BPF_IMM:
	case BPF_LDX | BPF_IMM:
	case BPF_RET | BPF_K:
	case BPF_RET | BPF_A:
	case BPF_ALU | BPF_ADD | BPF_K:
	case BPF_ALU | BPF_ADD | BPF_X:
	case BPF_ALU | BPF_SUB | BPF_K:
	case BPF_ALU | BPF_SUB | BPF_X:
	case BPF_ALU | BPF_MUL | BPF_K:
	case BPF_ALU | BPF_MUL | BPF_X:
	case BPF_ALU | BPF_DIV | BPF_X: /* x == 0 at run time: the filter returns 0 */
	case BPF_ALU | BPF_AND | BPF_K:
	case BPF_ALU | BPF_AND | BPF_X:
	case BPF_ALU | BPF_OR | BPF_K:
	case BPF_ALU | BPF_OR | BPF_X:
	case BPF_ALU | BPF_XOR | BPF_K:
	case BPF_ALU | BPF_XOR | BPF_X:
	case BPF_ALU | BPF_LSH | BPF_X:
	case BPF_ALU | BPF_RSH | BPF_X:
	case BPF_ALU | BPF_NEG:
	case BPF_MISC | BPF_TAX:
	case BPF_MISC | BPF_TXA:
		return BPF_CHECK_OK;

	case BPF_ALU | BPF_DIV | BPF_K:
		if (f->k == 0) {
			*why = "div #0 divides by zero";
			return BPF_CHECK_DIV_ZERO;
		}
		return BPF_CHECK_OK;

	case BPF_ALU | BPF_LSH | BPF_K:
	case BPF_ALU | BPF_RSH | BPF_K:
		if (f->k >= 32) {
			*why = "a shift by a constant must be less than 32";
			return BPF_CHECK_SHIFT;
		}
		return BPF_CHECK_OK;

	case BPF_LD | BPF_MEM:
	case BPF_LDX | BPF_MEM:
	case BPF_ST:
	case BPF_STX:
		if (f->k >= BPF_CHECK_MEM_WORDS) {
			*why = "scratch memory has 16 words: M[k] needs k < 16";
			return BPF_CHECK_MEM_INDEX;
		}
		return BPF_CHECK_OK;

	case BPF_JMP | BPF_JA:
		/* pc < n, so n - pc - 1 cannot wrap; k is compared as is so a
		 * huge k cannot wrap pc + 1 + k around to a small target. */
		if (f->k >= n - pc - 1) {
			*why = "ja jumps to or past the end of the program";
			return BPF_CHECK_JUMP_RANGE;
		}
		return BPF_CHECK_OK;

	case BPF_JMP | BPF_JEQ | BPF_K:
	case BPF_JMP | BPF_JEQ | BPF_X:
	case BPF_JMP | BPF_JGT | BPF_K:
	case BPF_JMP | BPF_JGT | BPF_X:
	case BPF_JMP | BPF_JGE | BPF_K:
	case BPF_JMP | BPF_JGE | BPF_X:
	case BPF_JMP | BPF_JSET | BPF_K:
	case BPF_JMP | BPF_JSET | BPF_X:
		/* pc <= 4095 and offsets <= 255: no overflow in uint32_t. */
		if (pc + f->jt + 1u >= n || pc + f->jf + 1u >= n) {
			*why = "a conditional jump goes to or past the end of the program";
			return BPF_CHECK_JUMP_RANGE;
		}
		return BPF_CHECK_OK;

	default:
		/* Includes mod (classic BPF has it, seccomp refuses it), byte
		 * and half-word loads, indirect loads, ret x and neg x. */
		*why = "opcode not allowed in a seccomp filter";
		return BPF_CHECK_OPCODE;
	}
}

/*
 * The kernel's check_load_and_stores(): one bit per scratch word, "stored on
 * every path to here".  Jumps only go forward, so one pass in program order
 * sees every predecessor of an instruction before the instruction itself:
 * masks[pc] collects what each jump into pc guarantees, and the value that
 * falls through from pc - 1 is ANDed in.  A jump resets the fall-through
 * value to "all valid" because nothing falls through a jump.
 *
 * ret does NOT reset it, exactly as in the kernel: the instruction after a
 * ret is judged as if the ret fell through to it.  So "st M[0]; ret; ld M[0]"
 * passes, while "ret; ld M[0]" fails even when the load is dead code.  That
 * is stricter than true reachability, and deliberately kept: the point is to
 * refuse what the kernel refuses, no more and no less.
 */
static int bpf_check_mem(const struct cpol_bpf *prog, uint32_t n, uint32_t *at)
{
	/* Fixed-size: n <= 4096 is already checked, and 8 KiB of stack keeps
	 * the check allocation-free for the runtime. */
	uint16_t masks[BPF_CHECK_MAX_INSNS];
	uint16_t valid = 0;

	for (uint32_t pc = 0; pc < n; pc++)
		masks[pc] = 0xFFFFu;
	for (uint32_t pc = 0; pc < n; pc++) {
		const struct cpol_bpf *f = &prog[pc];

		valid &= masks[pc];
		switch (f->code) {
		case BPF_ST:
		case BPF_STX:
			valid |= (uint16_t)(1u << f->k);
			break;
		case BPF_LD | BPF_MEM:
		case BPF_LDX | BPF_MEM:
			if (!(valid & (1u << f->k))) {
				*at = pc;
				return -1;
			}
			break;
		case BPF_JMP | BPF_JA:
			masks[pc + 1u + f->k] &= valid;
			valid = 0xFFFFu;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
		case BPF_JMP | BPF_JEQ | BPF_X:
		case BPF_JMP | BPF_JGT | BPF_K:
		case BPF_JMP | BPF_JGT | BPF_X:
		case BPF_JMP | BPF_JGE | BPF_K:
		case BPF_JMP | BPF_JGE | BPF_X:
		case BPF_JMP | BPF_JSET | BPF_K:
		case BPF_JMP | BPF_JSET | BPF_X:
			masks[pc + 1u + f->jt] &= valid;
			masks[pc + 1u + f->jf] &= valid;
			valid = 0xFFFFu;
			break;
		default:
			break;
		}
	}
	return 0;
}

int bpf_check(const struct cpol_bpf *prog, uint32_t n, uint32_t *bad_index, const char **why)
{
	const char *msg = NULL;
	uint32_t at = 0;
	int r;

	if (n == 0 || prog == NULL)
		return bpf_check_fail(BPF_CHECK_EMPTY, n, "the seccomp program is empty", bad_index, why);
	if (n > BPF_CHECK_MAX_INSNS)
		return bpf_check_fail(BPF_CHECK_TOO_LONG, n,
				      "the seccomp program has more than 4096 instructions", bad_index, why);
	for (uint32_t pc = 0; pc < n; pc++) {
		r = bpf_check_insn(&prog[pc], pc, n, &msg);
		if (r != BPF_CHECK_OK)
			return bpf_check_fail(r, pc, msg, bad_index, why);
	}
	if (prog[n - 1].code != (BPF_RET | BPF_K) && prog[n - 1].code != (BPF_RET | BPF_A))
		return bpf_check_fail(BPF_CHECK_NO_RET, n - 1,
				      "the last instruction is not a ret, so the program can run off its end",
				      bad_index, why);
	if (bpf_check_mem(prog, n, &at) < 0)
		return bpf_check_fail(BPF_CHECK_MEM_UNSET, at,
				      "scratch memory M[k] is read before a store to it on some path",
				      bad_index, why);
	return BPF_CHECK_OK;
}

const char *bpf_check_result_name(int result)
{
	switch (result) {
	case BPF_CHECK_OK: return "ok";
	case BPF_CHECK_EMPTY: return "empty";
	case BPF_CHECK_TOO_LONG: return "too-long";
	case BPF_CHECK_OPCODE: return "opcode";
	case BPF_CHECK_LOAD_OFFSET: return "load-offset";
	case BPF_CHECK_DIV_ZERO: return "div-zero";
	case BPF_CHECK_SHIFT: return "shift";
	case BPF_CHECK_MEM_INDEX: return "mem-index";
	case BPF_CHECK_JUMP_RANGE: return "jump-range";
	case BPF_CHECK_NO_RET: return "no-ret";
	case BPF_CHECK_MEM_UNSET: return "mem-unset";
	}
	return "?";
}
