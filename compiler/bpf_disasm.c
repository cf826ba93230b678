/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bpf_disasm.c - seccomp classic-BPF for people (bpf_disasm.h).
 *
 * Two passes.  The first walks the program forward once and records, for
 * every instruction, what holds on entry on every path that reaches it:
 * which seccomp_data word A holds (if any, and under which mask) and which
 * architecture the path has already compared equal.  Jumps only go
 * forward, so each instruction's predecessors are all seen before it and
 * one pass is exact.  The second pass prints, using those facts only for
 * comments: the instruction text itself never depends on the analysis.
 *
 * Syscall names come from libseccomp's tables (compiler side only).
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <seccomp.h>

#include "compiler/bpf_disasm.h"
#include "compiler/bpf_sim.h"

#define DIS_X32_BIT 0x40000000u /* __X32_SYSCALL_BIT */

/* What is known on entry to an instruction. */
struct dis_state {
	uint8_t reached; /* some path reaches here */
	int8_t field;    /* seccomp_data word index (offset / 4) in A, or -1 */
	uint8_t masked;  /* A is that word ANDed with mask */
	uint32_t mask;
	uint32_t arch; /* AUDIT_ARCH value tested equal on every path, or 0 */
};

static const struct {
	uint32_t arch;
	const char *name;
} dis_arches[] = {
#define DIS_ARCH(x) { AUDIT_ARCH_##x, "AUDIT_ARCH_" #x }
	DIS_ARCH(X86_64),  DIS_ARCH(I386),    DIS_ARCH(AARCH64), DIS_ARCH(ARM),
	DIS_ARCH(ARMEB),   DIS_ARCH(RISCV64), DIS_ARCH(RISCV32), DIS_ARCH(PPC),
	DIS_ARCH(PPC64),   DIS_ARCH(PPC64LE), DIS_ARCH(S390),    DIS_ARCH(S390X),
	DIS_ARCH(MIPS),    DIS_ARCH(MIPSEL),  DIS_ARCH(MIPS64),  DIS_ARCH(MIPSEL64),
	DIS_ARCH(MIPS64N32), DIS_ARCH(MIPSEL64N32), DIS_ARCH(PARISC), DIS_ARCH(PARISC64),
	DIS_ARCH(IA64),    DIS_ARCH(SPARC),   DIS_ARCH(SPARC64), DIS_ARCH(ALPHA),
	DIS_ARCH(M68K),    DIS_ARCH(SH),      DIS_ARCH(SHEL),
#undef DIS_ARCH
};

const char *bpf_disasm_arch_name(uint32_t arch)
{
	for (size_t i = 0; i < sizeof(dis_arches) / sizeof(dis_arches[0]); i++)
		if (dis_arches[i].arch == arch)
			return dis_arches[i].name;
	return NULL;
}

/* "nr", "arch", "ip.lo", "args[2].hi" for a valid word index. */
static void dis_field_name(int field, char *buf, size_t cap)
{
	if (field == 0)
		snprintf(buf, cap, "nr");
	else if (field == 1)
		snprintf(buf, cap, "arch");
	else if (field == 2 || field == 3)
		snprintf(buf, cap, "ip.%s", field == 2 ? "lo" : "hi");
	else
		snprintf(buf, cap, "args[%d].%s", (field - 4) / 2, (field & 1) ? "hi" : "lo");
}

static int dis_is_cond_jump(uint16_t code)
{
	switch (code & ~BPF_X) {
	case BPF_JMP | BPF_JEQ:
	case BPF_JMP | BPF_JGT:
	case BPF_JMP | BPF_JGE:
	case BPF_JMP | BPF_JSET:
		return 1;
	}
	return 0;
}

static void dis_merge(struct dis_state *to, const struct dis_state *from)
{
	if (!to->reached) {
		*to = *from;
		to->reached = 1;
		return;
	}
	if (to->field != from->field || to->masked != from->masked ||
	    (to->masked && to->mask != from->mask)) {
		to->field = -1;
		to->masked = 0;
		to->mask = 0;
	}
	if (to->arch != from->arch)
		to->arch = 0;
}

/* Propagate *s to instruction t (pc + 1 + offset) when it is in range. */
static void dis_flow(struct dis_state *st, uint32_t n, uint64_t t, const struct dis_state *s)
{
	if (t < n)
		dis_merge(&st[t], s);
}

/* The forward pass: st[pc] is what holds on entry to pc. */
static void dis_analyse(const struct cpol_bpf *prog, uint32_t n, struct dis_state *st)
{
	memset(st, 0, (size_t)n * sizeof(*st));
	st[0] = (struct dis_state){ .reached = 1, .field = -1 };
	for (uint32_t pc = 0; pc < n; pc++) {
		const struct cpol_bpf *f = &prog[pc];
		struct dis_state s = st[pc];

		if (!s.reached)
			continue;
		if (f->code == (BPF_LD | BPF_W | BPF_ABS)) {
			s.field = (f->k < 64u && (f->k & 3u) == 0) ? (int8_t)(f->k / 4u) : -1;
			s.masked = 0;
		} else if (f->code == (BPF_ALU | BPF_AND | BPF_K) && s.field >= 0) {
			s.mask = s.masked ? (s.mask & f->k) : f->k;
			s.masked = 1;
		} else if (BPF_CLASS(f->code) == BPF_LD || BPF_CLASS(f->code) == BPF_ALU ||
			   f->code == (BPF_MISC | BPF_TXA)) {
			s.field = -1;
			s.masked = 0;
		}

		if (f->code == (BPF_JMP | BPF_JA)) {
			dis_flow(st, n, (uint64_t)pc + 1u + f->k, &s);
		} else if (dis_is_cond_jump(f->code)) {
			struct dis_state t = s;

			/* "arch == X" holds on the taken branch only. */
			if (f->code == (BPF_JMP | BPF_JEQ | BPF_K) && s.field == 1 && !s.masked)
				t.arch = f->k;
			dis_flow(st, n, (uint64_t)pc + 1u + f->jt, &t);
			dis_flow(st, n, (uint64_t)pc + 1u + f->jf, &s);
		} else if (BPF_CLASS(f->code) != BPF_RET) {
			dis_flow(st, n, (uint64_t)pc + 1u, &s);
		}
	}
}

/* Name syscall nr under arch (x86_64 when unknown) into buf. */
static void dis_syscall_name(uint32_t arch, uint32_t nr, char *buf, size_t cap)
{
	uint32_t token = arch ? arch : AUDIT_ARCH_X86_64;
	const char *prefix = "";
	char *name;

	if (nr == 0xffffffffu) {
		snprintf(buf, cap, "-1 (no syscall)");
		return;
	}
	/* x32 calls come in under AUDIT_ARCH_X86_64 with the x32 bit set. */
	if (token == AUDIT_ARCH_X86_64 && (nr & DIS_X32_BIT)) {
		token = SCMP_ARCH_X32;
		prefix = "x32 ";
	}
	name = seccomp_syscall_resolve_num_arch(token, (int)nr);
	if (name)
		snprintf(buf, cap, "%s%s", prefix, name);
	else
		snprintf(buf, cap, "%ssyscall %u", prefix, nr);
	free(name);
}

/* The comment of a conditional jump on a known word. */
static void dis_jump_comment(const struct cpol_bpf *f, const struct dis_state *s, char *buf,
			     size_t cap)
{
	const char *op;
	char field[32], what[64];

	if (s->field < 0 || BPF_SRC(f->code) != BPF_K) {
		buf[0] = '\0';
		return;
	}
	switch (BPF_OP(f->code)) {
	case BPF_JEQ: op = "=="; break;
	case BPF_JGT: op = ">"; break;
	case BPF_JGE: op = ">="; break;
	default: op = "&"; break;
	}
	dis_field_name(s->field, field, sizeof(field));
	if (s->masked) {
		snprintf(buf, cap, "(%s & 0x%x) %s 0x%x", field, s->mask, op, f->k);
		return;
	}
	if (s->field == 1) {
		const char *a = bpf_disasm_arch_name(f->k);

		if (BPF_OP(f->code) == BPF_JEQ && a)
			snprintf(buf, cap, "%s", a);
		else
			snprintf(buf, cap, "arch %s 0x%x", op, f->k);
		return;
	}
	if (s->field == 0) {
		if (f->k == DIS_X32_BIT && (BPF_OP(f->code) == BPF_JGE || BPF_OP(f->code) == BPF_JSET)) {
			snprintf(buf, cap, "nr %s __X32_SYSCALL_BIT (x32)", op);
			return;
		}
		dis_syscall_name(s->arch, f->k, what, sizeof(what));
		if (BPF_OP(f->code) == BPF_JEQ)
			snprintf(buf, cap, "%s", what);
		else
			snprintf(buf, cap, "nr %s %s", op, what);
		return;
	}
	snprintf(buf, cap, "%s %s 0x%x", field, op, f->k);
}

/* The text and comment of one instruction. */
static void dis_insn(const struct cpol_bpf *f, uint32_t pc, uint32_t n, const struct dis_state *s,
		     char *text, size_t tcap, char *cmt, size_t ccap)
{
	static const char *const alu[16] = {
		[BPF_ADD >> 4] = "add", [BPF_SUB >> 4] = "sub", [BPF_MUL >> 4] = "mul",
		[BPF_DIV >> 4] = "div", [BPF_OR >> 4] = "or",   [BPF_AND >> 4] = "and",
		[BPF_LSH >> 4] = "lsh", [BPF_RSH >> 4] = "rsh", [BPF_MOD >> 4] = "mod",
		[BPF_XOR >> 4] = "xor",
	};
	static const char *const jmp[16] = {
		[BPF_JEQ >> 4] = "jeq", [BPF_JGT >> 4] = "jgt", [BPF_JGE >> 4] = "jge",
		[BPF_JSET >> 4] = "jset",
	};
	uint64_t jt = (uint64_t)pc + 1u + f->jt, jf = (uint64_t)pc + 1u + f->jf;
	char act[48];

	cmt[0] = '\0';
	switch (f->code) {
	case BPF_LD | BPF_W | BPF_ABS:
		snprintf(text, tcap, "ld  [%u]", f->k);
		if (f->k < 64u && (f->k & 3u) == 0)
			dis_field_name((int)(f->k / 4u), cmt, ccap);
		else
			snprintf(cmt, ccap, "not a word of seccomp_data: refused by the kernel");
		return;
	case BPF_LD | BPF_W | BPF_LEN: snprintf(text, tcap, "ld  #len"); snprintf(cmt, ccap, "64"); return;
	case BPF_LDX | BPF_W | BPF_LEN: snprintf(text, tcap, "ldx #len"); snprintf(cmt, ccap, "64"); return;
	case BPF_LD | BPF_IMM: snprintf(text, tcap, "ld  #0x%x", f->k); return;
	case BPF_LDX | BPF_IMM: snprintf(text, tcap, "ldx #0x%x", f->k); return;
	case BPF_LD | BPF_MEM: snprintf(text, tcap, "ld  M[%u]", f->k); break;
	case BPF_LDX | BPF_MEM: snprintf(text, tcap, "ldx M[%u]", f->k); break;
	case BPF_ST: snprintf(text, tcap, "st  M[%u]", f->k); break;
	case BPF_STX: snprintf(text, tcap, "stx M[%u]", f->k); break;
	case BPF_ALU | BPF_NEG: snprintf(text, tcap, "neg"); return;
	case BPF_MISC | BPF_TAX: snprintf(text, tcap, "tax"); return;
	case BPF_MISC | BPF_TXA: snprintf(text, tcap, "txa"); return;
	case BPF_RET | BPF_A: snprintf(text, tcap, "ret a"); return;
	case BPF_RET | BPF_K: {
		bpf_sim_action_name(f->k, act, sizeof(act));
		if (strncmp(act, "unknown", 7) == 0) {
			snprintf(text, tcap, "ret #0x%08x", f->k);
			snprintf(cmt, ccap, "unknown action: the kernel kills the process");
			return;
		}
		for (char *p = act; *p; p++)
			*p = (char)toupper((unsigned char)*p);
		snprintf(text, tcap, "ret %s", act);
		if ((f->k & BPF_SIM_RET_ACTION) == BPF_SIM_RET_ERRNO) {
			const char *e = strerrorname_np((int)(f->k & BPF_SIM_RET_DATA));

			if (e)
				snprintf(cmt, ccap, "%s", e);
		}
		return;
	}
	case BPF_JMP | BPF_JA:
		snprintf(text, tcap, "ja  %llu", (unsigned long long)((uint64_t)pc + 1u + f->k));
		if ((uint64_t)pc + 1u + f->k >= n)
			snprintf(cmt, ccap, "jump out of the program");
		return;
	default:
		if (BPF_CLASS(f->code) == BPF_ALU && (BPF_SRC(f->code) == BPF_K || BPF_SRC(f->code) == BPF_X) &&
		    (f->code & ~0xffu) == 0 && alu[BPF_OP(f->code) >> 4]) {
			const char *m = alu[BPF_OP(f->code) >> 4];

			if (BPF_SRC(f->code) == BPF_X)
				snprintf(text, tcap, "%-3s x", m);
			else
				snprintf(text, tcap, "%-3s #0x%x", m, f->k);
			if (BPF_OP(f->code) == BPF_MOD)
				snprintf(cmt, ccap, "mod is refused by seccomp");
			else if (s->field >= 0)
				dis_field_name(s->field, cmt, ccap);
			return;
		}
		if (dis_is_cond_jump(f->code) && (f->code & ~0xffu) == 0) {
			const char *m = jmp[BPF_OP(f->code) >> 4];

			if (BPF_SRC(f->code) == BPF_X)
				snprintf(text, tcap, "%s x, %llu, %llu", m, (unsigned long long)jt,
					 (unsigned long long)jf);
			else
				snprintf(text, tcap, "%s #0x%x, %llu, %llu", m, f->k,
					 (unsigned long long)jt, (unsigned long long)jf);
			if (jt >= n || jf >= n)
				snprintf(cmt, ccap, "jump out of the program");
			else
				dis_jump_comment(f, s, cmt, ccap);
			return;
		}
		snprintf(text, tcap, ".insn 0x%04x, %u, %u, 0x%x", f->code, f->jt, f->jf, f->k);
		snprintf(cmt, ccap, "not a seccomp opcode");
		return;
	}
	/* The M[k] forms. */
	if (f->k >= 16u)
		snprintf(cmt, ccap, "scratch memory has 16 words");
}

void bpf_disasm(FILE *f, const struct cpol_bpf *prog, uint32_t n)
{
	struct dis_state *st = NULL;
	char text[64], cmt[96];

	if (prog == NULL || n == 0)
		return;
	/* The analysis only adds comments; without memory the listing is
	 * printed bare rather than not at all. */
	st = calloc(n, sizeof(*st));
	if (st)
		dis_analyse(prog, n, st);
	for (uint32_t pc = 0; pc < n; pc++) {
		/* Nothing is known where the analysis did not run or did not
		 * reach: comment from the instruction alone. */
		static const struct dis_state unknown = { .reached = 1, .field = -1 };
		int dead = st && !st[pc].reached;
		const struct dis_state *s = st && !dead ? &st[pc] : &unknown;

		dis_insn(&prog[pc], pc, n, s, text, sizeof(text), cmt, sizeof(cmt));
		if (dead) {
			size_t l = strlen(cmt);

			snprintf(cmt + l, sizeof(cmt) - l, "%sunreachable", l ? "; " : "");
		}
		if (cmt[0])
			fprintf(f, "  %04u: %-28s ; %s\n", pc, text, cmt);
		else
			fprintf(f, "  %04u: %s\n", pc, text);
	}
	free(st);
}
