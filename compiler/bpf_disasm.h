/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bpf_disasm.h - print a seccomp classic-BPF program for people.
 *
 * One line per instruction, numbered, with jump targets as absolute
 * instruction numbers and a comment saying what the operand means:
 *
 *     0000: ld  [4]                      ; arch
 *     0001: jeq #0xc000003e, 2, 14       ; AUDIT_ARCH_X86_64
 *     0002: ld  [0]                      ; nr
 *     0003: jge #0x40000000, 4, 5        ; nr >= __X32_SYSCALL_BIT (x32)
 *     0005: jeq #0x65, 13, 6             ; ptrace
 *     0013: ret KILL_PROCESS
 *     0014: ret ERRNO(1)                 ; EPERM
 *
 * The comments come from a forward pass that tracks which seccomp_data
 * word is in A and which architecture a path has already tested, so a
 * syscall number is named for the arch it is compared under (x86_64 when
 * no test was seen).  Instructions no path reaches are marked unreachable.
 * Unchecked programs are printed too: an opcode seccomp refuses, or a jump
 * out of the program, is shown and marked, never followed.
 */
#ifndef CORDON_BPF_DISASM_H
#define CORDON_BPF_DISASM_H

#include <stdint.h>
#include <stdio.h>

#include "cordon/policy.h"

void bpf_disasm(FILE *f, const struct cpol_bpf *prog, uint32_t n);

/* The AUDIT_ARCH_* name of an arch value ("AUDIT_ARCH_X86_64"), or NULL. */
const char *bpf_disasm_arch_name(uint32_t arch);

#endif
