/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bpf_check.h - verify a seccomp classic-BPF program as the kernel would.
 *
 * The runtime never compiles BPF, but it must not hand the kernel a program
 * the kernel will refuse: a refusal at seccomp() time comes after the
 * sandbox is half built and says only EINVAL.  bpf_check() applies, before
 * anything is set up, the same rules as the kernel's bpf_check_classic()
 * (net/core/filter.c) followed by seccomp_check_filter()
 * (kernel/seccomp.c), and names the first rule broken and where:
 *
 *   - 1 <= n <= 4096 (BPF_MAXINSNS);
 *   - only the opcodes seccomp allows: ld [k] (32-bit, k 4-aligned and
 *     inside struct seccomp_data, 64 bytes), ld/ldx #len, ld/ldx #k,
 *     ld/ldx M[k], st/stx M[k] (k < 16), add sub mul div and or xor lsh rsh
 *     with #k or x, neg, ja, jeq jgt jge jset with #k or x, ret #k, ret a,
 *     tax, txa.  The kernel does NOT allow mod in seccomp (it is not in
 *     seccomp_check_filter's list), nor byte/half loads, indirect loads,
 *     ret x or neg x;
 *   - div #0 and lsh/rsh #k with k >= 32 are refused;
 *   - every jump lands inside the program (conditional offsets are 8 bits,
 *     ja's is 32 bits: checked without overflow);
 *   - the last instruction is a ret;
 *   - no M[k] is read before a store to it on every path, by the kernel's
 *     own forward pass (see bpf_check.c for the one way it is stricter than
 *     "every path").
 *
 * What the kernel does not check is not checked here either: a ret #k with
 * an unknown action is legal (the kernel kills the process at run time).
 *
 * No allocation, no libseccomp: this file is linked into the runtime.
 */
#ifndef CORDON_BPF_CHECK_H
#define CORDON_BPF_CHECK_H

#include <stdint.h>

#include "cordon/policy.h"

#define BPF_CHECK_MAX_INSNS 4096u    /* BPF_MAXINSNS */
#define BPF_CHECK_DATA_BYTES 64u     /* sizeof(struct seccomp_data) */
#define BPF_CHECK_MEM_WORDS 16u      /* BPF_MEMWORDS */

/* Why a program was refused; 0 means accepted. */
enum bpf_check_result {
	BPF_CHECK_OK = 0,
	BPF_CHECK_EMPTY = 1,       /* n == 0 (or no program at all) */
	BPF_CHECK_TOO_LONG = 2,    /* n > 4096 */
	BPF_CHECK_OPCODE = 3,      /* an opcode seccomp does not accept */
	BPF_CHECK_LOAD_OFFSET = 4, /* ld [k]: k unaligned or outside seccomp_data */
	BPF_CHECK_DIV_ZERO = 5,    /* div #0 */
	BPF_CHECK_SHIFT = 6,       /* lsh/rsh #k, k >= 32 */
	BPF_CHECK_MEM_INDEX = 7,   /* M[k], k >= 16 */
	BPF_CHECK_JUMP_RANGE = 8,  /* a jump target at or past the end */
	BPF_CHECK_NO_RET = 9,      /* the last instruction is not a ret */
	BPF_CHECK_MEM_UNSET = 10,  /* M[k] read before any store to it */
};

/*
 * Check prog[0..n).  Returns BPF_CHECK_OK (0), or the first problem found
 * with *bad_index set to the instruction at fault (n for a length problem)
 * and *why to a static sentence naming the rule.  bad_index and why may be
 * NULL.  Linear time, fixed stack, never reads past prog[n - 1].
 */
int bpf_check(const struct cpol_bpf *prog, uint32_t n, uint32_t *bad_index, const char **why);

/* A short stable name for a result: "ok", "empty", "too-long", "opcode",
 * "load-offset", "div-zero", "shift", "mem-index", "jump-range", "no-ret",
 * "mem-unset"; "?" for anything else. */
const char *bpf_check_result_name(int result);

#endif
