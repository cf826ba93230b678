/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bpf_sim.h - a classic-BPF interpreter over seccomp_data, for inspect and
 * tests.
 *
 * It answers "what would this filter return for this call" without
 * installing anything, so `cordonc inspect --syscall` and the behaviour
 * tables can ask a compiled filter directly.  The semantics are the
 * kernel's on x86_64, including its corner cases:
 *   - A and X start at 0; scratch memory starts at 0 (the kernel refuses
 *     programs that could read it unset, so this only matters for programs
 *     that bpf_check() would refuse);
 *   - ld [k] reads a little-endian 32-bit word of struct seccomp_data;
 *   - ld/ldx #len gives 64;
 *   - div x with x == 0 ends the program with return value 0
 *     (SECCOMP_RET_KILL_THREAD), as the kernel's cBPF-to-eBPF conversion does;
 *   - lsh/rsh x shift by x & 31 (the eBPF interpreter masks, and the x86 JIT
 *     uses the CPU's 5-bit count);
 *   - arithmetic wraps at 32 bits, comparisons are unsigned.
 *
 * The interpreter trusts nothing: an opcode seccomp does not allow, an
 * operand out of range, a jump out of the program or running off the end
 * makes the run invalid instead of undefined.
 */
#ifndef CORDON_BPF_SIM_H
#define CORDON_BPF_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "cordon/policy.h"

/* struct seccomp_data, spelled out with fixed widths so the layout is ours:
 * offsets 0, 4, 8, 16 + 8 * i, 64 bytes in all. */
struct bpf_sim_data {
	int32_t nr;
	uint32_t arch;
	uint64_t instruction_pointer;
	uint64_t args[6];
};

/* Offsets of the fields, for hand-written programs and the disassembler. */
#define BPF_SIM_OFF_NR 0u
#define BPF_SIM_OFF_ARCH 4u
#define BPF_SIM_OFF_IP_LO 8u
#define BPF_SIM_OFF_IP_HI 12u
#define BPF_SIM_OFF_ARG_LO(i) (16u + 8u * (unsigned)(i))
#define BPF_SIM_OFF_ARG_HI(i) (20u + 8u * (unsigned)(i))

/* seccomp return values (<linux/seccomp.h>), spelled out so the compiler's
 * tables do not depend on which kernel headers are installed. */
#define BPF_SIM_RET_KILL_PROCESS 0x80000000u
#define BPF_SIM_RET_KILL_THREAD 0x00000000u
#define BPF_SIM_RET_TRAP 0x00030000u
#define BPF_SIM_RET_ERRNO 0x00050000u
#define BPF_SIM_RET_USER_NOTIF 0x7fc00000u
#define BPF_SIM_RET_TRACE 0x7ff00000u
#define BPF_SIM_RET_LOG 0x7ffc0000u
#define BPF_SIM_RET_ALLOW 0x7fff0000u
#define BPF_SIM_RET_ACTION 0xffff0000u /* SECCOMP_RET_ACTION_FULL */
#define BPF_SIM_RET_DATA 0x0000ffffu

/* What bpf_sim_run() returns for a run that is invalid.  It is also a value
 * a ret #k may legally return (an unknown action, which the kernel treats
 * as kill_process), so callers that must tell the two apart use
 * bpf_sim_exec(). */
#define BPF_SIM_INVALID 0xffffffffu

/*
 * Run prog[0..n) over *d.  Returns 0 with *ret set to the filter's return
 * value, or -1 when the run is invalid (NULL input, n outside 1..4096, an
 * opcode or operand the kernel would refuse, a jump out of the program,
 * running off the end); *ret is then BPF_SIM_INVALID.  At most n
 * instructions execute: every jump goes forward.  *steps (when steps is
 * not NULL) is the number of instructions executed, the ret included: the
 * filter's cost for this call, as inspect and the benchmarks report it.
 */
int bpf_sim_exec(const struct cpol_bpf *prog, uint32_t n, const struct bpf_sim_data *d,
		 uint32_t *ret, uint32_t *steps);

/* bpf_sim_exec()'s return value, or BPF_SIM_INVALID. */
uint32_t bpf_sim_run(const struct cpol_bpf *prog, uint32_t n, const struct bpf_sim_data *d);

/*
 * Name a return value as an action into buf[0..cap) and return buf:
 * "allow", "kill_process", "kill_thread", "trap", "errno(1)", "log",
 * "trace(N)", "user_notif"; trap with nonzero data is "trap(N)"; anything
 * else is "unknown(0x%08x)" (the kernel kills the process for those).
 * Always NUL-terminated when cap > 0; truncated to fit.
 */
const char *bpf_sim_action_name(uint32_t ret, char *buf, size_t cap);

#endif
