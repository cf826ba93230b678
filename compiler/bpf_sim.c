/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bpf_sim.c - classic-BPF interpreter over seccomp_data (bpf_sim.h).
 *
 * One switch over the opcodes seccomp allows, the same list as
 * common/bpf_check.c, so the two cannot disagree about what a program may
 * contain without one of the differential tests noticing.  Every operand is
 * checked at the point of use rather than trusted from an earlier
 * bpf_check(): this file is also fed unchecked programs (inspect of a
 * damaged blob, tests that build programs by hand).
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <linux/filter.h>

#include "compiler/bpf_sim.h"

_Static_assert(sizeof(struct bpf_sim_data) == 64, "seccomp_data is 64 bytes");
_Static_assert(offsetof(struct bpf_sim_data, nr) == BPF_SIM_OFF_NR, "nr offset");
_Static_assert(offsetof(struct bpf_sim_data, arch) == BPF_SIM_OFF_ARCH, "arch offset");
_Static_assert(offsetof(struct bpf_sim_data, instruction_pointer) == BPF_SIM_OFF_IP_LO, "ip offset");
_Static_assert(offsetof(struct bpf_sim_data, args) == BPF_SIM_OFF_ARG_LO(0), "args offset");

#define BPF_SIM_MAX_INSNS 4096u
#define BPF_SIM_MEM_WORDS 16u

/* The 32-bit word at byte offset off of *d, as the kernel loads it on a
 * little-endian machine.  Built from the fields rather than by copying the
 * struct's bytes, so the answer is the x86_64 one on any host. */
static uint32_t bpf_sim_word(const struct bpf_sim_data *d, uint32_t off)
{
	switch (off) {
	case BPF_SIM_OFF_NR: return (uint32_t)d->nr;
	case BPF_SIM_OFF_ARCH: return d->arch;
	case BPF_SIM_OFF_IP_LO: return (uint32_t)d->instruction_pointer;
	case BPF_SIM_OFF_IP_HI: return (uint32_t)(d->instruction_pointer >> 32);
	default: break;
	}
	/* off is 16..60 and a multiple of 4 here (checked by the caller). */
	uint64_t arg = d->args[(off - BPF_SIM_OFF_ARG_LO(0)) / 8u];
	return (off & 4u) ? (uint32_t)(arg >> 32) : (uint32_t)arg;
}

/* Outcome of a conditional jump's test. */
static int bpf_sim_cond(uint16_t code, uint32_t a, uint32_t v)
{
	switch (BPF_OP(code)) {
	case BPF_JEQ: return a == v;
	case BPF_JGT: return a > v;
	case BPF_JGE: return a >= v;
	default: return (a & v) != 0; /* BPF_JSET: the caller allows no other */
	}
}

int bpf_sim_exec(const struct cpol_bpf *prog, uint32_t n, const struct bpf_sim_data *d,
		 uint32_t *ret, uint32_t *steps)
{
	uint32_t dummy;
	uint32_t mem[BPF_SIM_MEM_WORDS] = { 0 };
	uint32_t a = 0, x = 0;
	uint32_t pc = 0;

	if (steps == NULL)
		steps = &dummy;
	*steps = 0;
	*ret = BPF_SIM_INVALID;
	if (prog == NULL || d == NULL || n == 0 || n > BPF_SIM_MAX_INSNS)
		return -1;
	/* Jumps only go forward and every step advances pc, so this loop
	 * runs at most n times. */
	while (pc < n) {
		const struct cpol_bpf *f = &prog[pc];
		uint32_t k = f->k;
		uint64_t next = (uint64_t)pc + 1u;

		++*steps;
		switch (f->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (k >= 64u || (k & 3u) != 0)
				return -1;
			a = bpf_sim_word(d, k);
			break;
		case BPF_LD | BPF_W | BPF_LEN: a = 64u; break;
		case BPF_LDX | BPF_W | BPF_LEN: x = 64u; break;
		case BPF_LD | BPF_IMM: a = k; break;
		case BPF_LDX | BPF_IMM: x = k; break;
		case BPF_LD | BPF_MEM:
		case BPF_LDX | BPF_MEM:
		case BPF_ST:
		case BPF_STX:
			if (k >= BPF_SIM_MEM_WORDS)
				return -1;
			if (f->code == (BPF_LD | BPF_MEM))
				a = mem[k];
			else if (f->code == (BPF_LDX | BPF_MEM))
				x = mem[k];
			else if (f->code == BPF_ST)
				mem[k] = a;
			else
				mem[k] = x;
			break;

		case BPF_ALU | BPF_ADD | BPF_K: a += k; break;
		case BPF_ALU | BPF_ADD | BPF_X: a += x; break;
		case BPF_ALU | BPF_SUB | BPF_K: a -= k; break;
		case BPF_ALU | BPF_SUB | BPF_X: a -= x; break;
		case BPF_ALU | BPF_MUL | BPF_K: a *= k; break;
		case BPF_ALU | BPF_MUL | BPF_X: a *= x; break;
		case BPF_ALU | BPF_DIV | BPF_K:
			if (k == 0)
				return -1; /* refused at load time by the kernel */
			a /= k;
			break;
		case BPF_ALU | BPF_DIV | BPF_X:
			if (x == 0) {
				*ret = 0; /* the kernel's converted program returns 0 */
				return 0;
			}
			a /= x;
			break;
		case BPF_ALU | BPF_AND | BPF_K: a &= k; break;
		case BPF_ALU | BPF_AND | BPF_X: a &= x; break;
		case BPF_ALU | BPF_OR | BPF_K: a |= k; break;
		case BPF_ALU | BPF_OR | BPF_X: a |= x; break;
		case BPF_ALU | BPF_XOR | BPF_K: a ^= k; break;
		case BPF_ALU | BPF_XOR | BPF_X: a ^= x; break;
		case BPF_ALU | BPF_LSH | BPF_K:
		case BPF_ALU | BPF_RSH | BPF_K:
			if (k >= 32u)
				return -1; /* refused at load time by the kernel */
			a = BPF_OP(f->code) == BPF_LSH ? a << k : a >> k;
			break;
		case BPF_ALU | BPF_LSH | BPF_X: a <<= (x & 31u); break;
		case BPF_ALU | BPF_RSH | BPF_X: a >>= (x & 31u); break;
		case BPF_ALU | BPF_NEG: a = 0u - a; break;

		case BPF_MISC | BPF_TAX: x = a; break;
		case BPF_MISC | BPF_TXA: a = x; break;

		case BPF_JMP | BPF_JA:
			next += k;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
		case BPF_JMP | BPF_JGT | BPF_K:
		case BPF_JMP | BPF_JGE | BPF_K:
		case BPF_JMP | BPF_JSET | BPF_K:
			next += bpf_sim_cond(f->code, a, k) ? f->jt : f->jf;
			break;
		case BPF_JMP | BPF_JEQ | BPF_X:
		case BPF_JMP | BPF_JGT | BPF_X:
		case BPF_JMP | BPF_JGE | BPF_X:
		case BPF_JMP | BPF_JSET | BPF_X:
			next += bpf_sim_cond(f->code, a, x) ? f->jt : f->jf;
			break;

		case BPF_RET | BPF_K:
			*ret = k;
			return 0;
		case BPF_RET | BPF_A:
			*ret = a;
			return 0;

		default:
			return -1; /* not an opcode seccomp accepts */
		}
		if (next >= n)
			return -1; /* a jump out of the program, or off its end */
		pc = (uint32_t)next;
	}
	return -1;
}

uint32_t bpf_sim_run(const struct cpol_bpf *prog, uint32_t n, const struct bpf_sim_data *d)
{
	uint32_t ret;

	if (bpf_sim_exec(prog, n, d, &ret, NULL) < 0)
		return BPF_SIM_INVALID;
	return ret;
}

const char *bpf_sim_action_name(uint32_t ret, char *buf, size_t cap)
{
	uint32_t data = ret & BPF_SIM_RET_DATA;

	if (buf == NULL || cap == 0)
		return "";
	/* The kernel looks at the full 16-bit action; data is ignored for
	 * the actions that carry none. */
	switch (ret & BPF_SIM_RET_ACTION) {
	case BPF_SIM_RET_KILL_PROCESS: snprintf(buf, cap, "kill_process"); break;
	case BPF_SIM_RET_KILL_THREAD: snprintf(buf, cap, "kill_thread"); break;
	case BPF_SIM_RET_TRAP:
		if (data)
			snprintf(buf, cap, "trap(%u)", data);
		else
			snprintf(buf, cap, "trap");
		break;
	case BPF_SIM_RET_ERRNO: snprintf(buf, cap, "errno(%u)", data); break;
	case BPF_SIM_RET_USER_NOTIF: snprintf(buf, cap, "user_notif"); break;
	case BPF_SIM_RET_TRACE: snprintf(buf, cap, "trace(%u)", data); break;
	case BPF_SIM_RET_LOG: snprintf(buf, cap, "log"); break;
	case BPF_SIM_RET_ALLOW: snprintf(buf, cap, "allow"); break;
	default: snprintf(buf, cap, "unknown(0x%08x)", ret); break;
	}
	return buf;
}
