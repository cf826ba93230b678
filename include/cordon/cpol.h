/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpol.h - the on-disk policy blob (.cpol), format 3.6.
 *
 * This header is the one contract between the writer (compiler/emit.c) and
 * the reader (runtime/blob_load.c).  docs/blob-format.md is the prose version
 * of the same facts; when one changes, the other changes in the same commit.
 *
 * Encoding rules, all of them checked by the loader:
 *   - every integer is little-endian, fixed width, unsigned unless noted;
 *   - the header is CPOL_HEADER_SIZE bytes, followed by exactly
 *     CPOL_SEC_COUNT section-table entries, in section-id order;
 *   - sections follow the table in id order, each starting at the previous
 *     end rounded up to 8, padding bytes zero: one blob, one byte layout;
 *   - the signature section is last and ends exactly at total_size;
 *   - SHA-256 covers bytes [0, signature offset) with the 32-byte hash field
 *     read as zeros, so signing a blob never changes its hash;
 *   - reserved fields are zero, strings are (offset, length) references into
 *     the string table that start at an entry (offset 0 or just after a
 *     NUL), NUL-terminated there and free of inner NULs; an empty string is
 *     (0, 0) and an empty list is (first 0, count 0);
 *   - parameters nest at most CPOL_MAX_PARAM_DEPTH levels; an array's items
 *     spec has no name and is not 'required'.
 */
#ifndef CORDON_CPOL_H
#define CORDON_CPOL_H

#include <stdint.h>

/* PNG-style trap: a high byte, then CR LF, ^Z and LF, so a text-mode copy,
 * a 7-bit channel or an EOL conversion breaks the magic at once. */
#define CPOL_MAGIC "\x93" "CPL\r\n\x1a\n"
#define CPOL_MAGIC_LEN 8

/* A reader of M.m reads every M.k with k <= m, so a minor version may only
 * give meaning to bytes that were reserved (zero) before.  A change that
 * moves or resizes anything is a new major version, and a reader refuses
 * every other major: it never guesses at a layout.  (3.3's LIMITS tail and
 * 3.4's EXECUTOR tail are the resizes in a minor: present only in blobs of
 * minor >= 3 and >= 4, their size stated by the section table, so nothing
 * is guessed.)  History:
 * docs/blob-format.md, section 8 "Versions". */
#define CPOL_VERSION_MAJOR 3
#define CPOL_VERSION_MINOR 6
/* 3.1 gave the EXECUTOR record's reserved word to the preload list.  The
 * writer stamps a blob with the oldest minor that can hold it, so a policy
 * without preloads is byte for byte a 3.0 blob and older runtimes still
 * take it. */
#define CPOL_MINOR_PRELOAD 1
/* 3.2 gave the TOOLS record's reserved word to the tool's result schema
 * (CPOL_TOOL_RETURNS); a policy whose tools declare no `returns:` keeps the
 * word 0 and its older minor. */
#define CPOL_MINOR_RETURNS 2
/* 3.3 lets the LIMITS section grow from 96 to 104 bytes (CPOL_LIMITS_CPU_
 * BYTES) to hold a CPU quota.  Only a blob that sets one has the longer
 * section and minor 3, so every other blob keeps its bytes; the section's
 * size in the table is what tells the reader which layout it holds. */
#define CPOL_MINOR_CPU 3
/* 3.4 lets the EXECUTOR section grow from 48 to 56 bytes (CPOL_EXECUTOR_
 * PKG_BYTES) to hold the count of executor.packages, as 3.3 did for
 * LIMITS: only a blob that declares packages has the longer record and
 * minor 4. */
#define CPOL_MINOR_PACKAGES 4
/* 3.5 adds two sections after OUTPUTS, SOURCES and LINT: the provenance
 * `cordonc compile` records (the SHA-256 of every source file, the lint
 * verdict).  A blob that has them lists 17 sections, one that does not
 * lists the 15 it always had and keeps its bytes and older minor.  They go
 * before SIGNATURE, which stays the last entry and the last section, so
 * the hash (everything before the signature) covers them and a signature
 * signs them. */
#define CPOL_MINOR_PROVENANCE 5
/* 3.6 lets the AGENTS records grow from 16 to 56 bytes (CPOL_AGENT_
 * SESSION_BYTES) to hold each agent's code-interpreter session limits, as
 * 3.3 did for LIMITS: only a blob where some agent declares `session:` has
 * the longer records and minor 6. */
#define CPOL_MINOR_SESSION 6

/* AUDIT_ARCH_X86_64 from <linux/audit.h>; spelled out so the format does not
 * depend on a kernel header being present. */
#define CPOL_ARCH_X86_64 0xC000003Eu

#define CPOL_ALIGN 8u
#define CPOL_MAX_BLOB_SIZE (16u * 1024u * 1024u)
#define CPOL_MAX_SECCOMP_INSNS 4096u /* BPF_MAXINSNS */
/* Parameters nest at most this deep (a tool's own params are level 1). */
#define CPOL_MAX_PARAM_DEPTH 16u

/* Header layout (byte offsets). */
#define CPOL_HDR_MAGIC 0          /* u8[8] */
#define CPOL_HDR_MAJOR 8          /* u16 */
#define CPOL_HDR_MINOR 10         /* u16 */
#define CPOL_HDR_ARCH 12          /* u32 */
#define CPOL_HDR_TOTAL_SIZE 16    /* u64 */
#define CPOL_HDR_SECTION_COUNT 24 /* u32 */
#define CPOL_HDR_TABLE_END 28     /* u32: CPOL_HEADER_SIZE + count * entry */
#define CPOL_HDR_SHA256 32        /* u8[32] */
#define CPOL_HEADER_SIZE 64

/* Section-table entry (24 bytes). */
#define CPOL_SEC_ENT_ID 0     /* u32 */
#define CPOL_SEC_ENT_COUNT 4  /* u32: records (bytes for STRTAB) */
#define CPOL_SEC_ENT_OFFSET 8 /* u64 */
#define CPOL_SEC_ENT_SIZE 16  /* u64: count * record size, no padding */
#define CPOL_SEC_ENT_BYTES 24

/* Section ids: the table lists every one, in this order. */
enum cpol_section {
	CPOL_SEC_STRTAB = 1,      /* bytes; byte 0 is NUL, last byte is NUL */
	CPOL_SEC_STRLIST = 2,     /* cpol_str[]: string lists, referenced by (first, count) */
	CPOL_SEC_IDXLIST = 3,     /* u32[]: index lists (agent -> tools) */
	CPOL_SEC_META = 4,        /* one record */
	CPOL_SEC_LIMITS = 5,      /* one record */
	CPOL_SEC_EXECUTOR = 6,    /* one record: identity, network, layers */
	CPOL_SEC_ENV = 7,         /* sorted by key */
	CPOL_SEC_MOUNTS = 8,      /* sorted by target */
	CPOL_SEC_SECCOMP = 9,     /* struct sock_filter[] (8 bytes each) */
	CPOL_SEC_TOOLS = 10,      /* sorted by id */
	CPOL_SEC_PARAMS = 11,     /* parameter signatures, a forest */
	CPOL_SEC_CONSTRAINTS = 12, /* constraint bytecode (struct cpol_insn[]) */
	CPOL_SEC_AGENTS = 13,     /* sorted by name */
	CPOL_SEC_OUTPUTS = 14,    /* sorted by path */
	CPOL_SEC_SIGNATURE = 15,  /* one record, always last */
	CPOL_SEC_SOURCES = 16,    /* 3.5: the source files and their SHA-256 */
	CPOL_SEC_LINT = 17,       /* 3.5: one record, the lint verdict */
};
/* A blob without provenance lists ids 1..15 in id order; one with it (3.5)
 * lists 1..14, 16, 17, 15: SIGNATURE is always the last entry and the last
 * section (policy_section_at()). */
#define CPOL_SEC_COUNT 15
#define CPOL_SEC_COUNT_PROV 17
#define CPOL_SEC_MAX_ID 17
#define CPOL_TABLE_END (CPOL_HEADER_SIZE + CPOL_SEC_COUNT * CPOL_SEC_ENT_BYTES)
#define CPOL_TABLE_END_PROV (CPOL_HEADER_SIZE + CPOL_SEC_COUNT_PROV * CPOL_SEC_ENT_BYTES)

/* A string reference: 8 bytes. */
#define CPOL_STR_OFF 0 /* u32 into STRTAB */
#define CPOL_STR_LEN 4 /* u32, without the NUL */
#define CPOL_STR_BYTES 8

/* A list reference (first, count) into STRLIST, IDXLIST or PARAMS: 8 bytes. */
#define CPOL_LIST_BYTES 8

#define CPOL_IDX_BYTES 4
#define CPOL_NONE 0xFFFFFFFFu /* "no index" */

/* META record. */
#define CPOL_META_APP 0               /* str */
#define CPOL_META_DESCRIPTOR_VERSION 8 /* u32 */
#define CPOL_META_INVENTORY_VERSION 12 /* u32 */
#define CPOL_META_BYTES 16

/* LIMITS record. */
#define CPOL_LIM_TIMEOUT_MS 0
#define CPOL_LIM_MAX_FILE_BYTES 8
#define CPOL_LIM_WS_DELTA_BYTES 16
#define CPOL_LIM_WS_MAX_BYTES 24 /* 0: unset */
#define CPOL_LIM_MONITOR_MS 32
#define CPOL_LIM_MAX_OUTPUT_BYTES 40
#define CPOL_LIM_MAX_RESULT_BYTES 48
#define CPOL_LIM_MAX_CODE_BYTES 56
#define CPOL_LIM_MEMORY_BYTES 64
#define CPOL_LIM_MAX_TOOL_REQ_BYTES 72
#define CPOL_LIM_PIDS 80       /* u32 */
#define CPOL_LIM_OPEN_FILES 84 /* u32 */
#define CPOL_LIM_MODE 88       /* u32: enum cpol_mode */
#define CPOL_LIM_WS_ENTRIES 92 /* u32: files + directories in the workspace, 1..CPOL_MAX_WS_ENTRIES */
#define CPOL_LIMITS_BYTES 96
/* From 3.3, only when the policy sets a CPU quota: 8 more bytes. */
#define CPOL_LIM_CPU_MILLI 96     /* u32: CPU quota in thousandths of a CPU, CPOL_CPU_MILLI_MIN..MAX */
#define CPOL_LIM_CPU_RESERVED 100 /* u32: 0 */
#define CPOL_LIMITS_CPU_BYTES 104
/* Bounds of execution.runtime.cpu, in the YAML and in the blob: 0.01 CPU
 * gives the kernel's smallest quota (1 ms per 100 ms period); 1024 CPUs is
 * more than any host we run on, so anything above it is a typo. */
#define CPOL_CPU_MILLI_MIN 10u
#define CPOL_CPU_MILLI_MAX 1024000u
/* The period the quota is a share of: the kernel's default (100 ms). */
#define CPOL_CPU_PERIOD_US 100000u
/* Upper bound of max_exec_workspace_entries, in the YAML and in the blob. */
#define CPOL_MAX_WS_ENTRIES 10000000u

/* EXECUTOR record. */
#define CPOL_EXE_INTERPRETER 0 /* str */
#define CPOL_EXE_UID 8         /* u32 */
#define CPOL_EXE_GID 12        /* u32 */
#define CPOL_EXE_NETWORK 16    /* u32: enum cpol_network */
#define CPOL_EXE_FLAGS 20      /* u32: CPOL_EXE_F_* */
#define CPOL_EXE_REQUIRE 24    /* u32: CPOL_LAYER_* mask */
#define CPOL_EXE_PRELOAD 28    /* u32: count of the preload list, STRLIST[0, count); 3.0: zero */
#define CPOL_EXE_SECCOMP_PROFILE 32 /* str, may be empty */
#define CPOL_EXE_SECCOMP_EXTRA 40   /* str, may be empty */
#define CPOL_EXECUTOR_BYTES 48
/* From 3.4, only when the policy declares packages: 8 more bytes. */
#define CPOL_EXE_PACKAGES 48     /* u32: count of the package list, STRLIST[preload, preload + count), >= 1 */
#define CPOL_EXE_PKG_RESERVED 52 /* u32: 0 */
#define CPOL_EXECUTOR_PKG_BYTES 56

/* ENV record. */
#define CPOL_ENV_KEY 0
#define CPOL_ENV_VALUE 8
#define CPOL_ENV_BYTES 16

/* MOUNTS record. */
#define CPOL_MNT_TYPE 0   /* u32: enum cpol_mount_type */
#define CPOL_MNT_FLAGS 4  /* u32: CPOL_MNT_F_* */
#define CPOL_MNT_SOURCE 8 /* str, empty for tmpfs */
#define CPOL_MNT_TARGET 16 /* str */
#define CPOL_MNT_SIZE 24  /* u64: tmpfs size, 0 for bind */
#define CPOL_MOUNT_BYTES 32

/* SECCOMP record: struct sock_filter, little-endian. */
#define CPOL_BPF_CODE 0 /* u16 */
#define CPOL_BPF_JT 2   /* u8 */
#define CPOL_BPF_JF 3   /* u8 */
#define CPOL_BPF_K 4    /* u32 */
#define CPOL_BPF_BYTES 8

/* TOOLS record. */
#define CPOL_TOOL_ID 0           /* str */
#define CPOL_TOOL_DESCRIPTION 8  /* str */
#define CPOL_TOOL_FLAGS 16       /* u32: CPOL_TOOL_F_* */
#define CPOL_TOOL_MAX_CALLS 20   /* u32: 0 = no budget */
#define CPOL_TOOL_TIMEOUT_MS 24  /* u64 */
#define CPOL_TOOL_EXEC 32        /* list into STRLIST, count >= 1 */
#define CPOL_TOOL_ENV_FROM 40    /* list into STRLIST */
#define CPOL_TOOL_ROLES 48       /* list into STRLIST */
#define CPOL_TOOL_PARAMS 56      /* list into PARAMS: top-level params */
#define CPOL_TOOL_CONSTRAINTS 64 /* list into CONSTRAINTS: the tool's programs */
#define CPOL_TOOL_MAX_CALLS_PER_DAY 72 /* u32: 0 = no daily budget */
#define CPOL_TOOL_RUN_AS 76      /* u32: enum cpol_run_as */
#define CPOL_TOOL_RUN_UID 80     /* u32: CPOL_RUN_AS_IDS only (never 0 or ~0), else 0 */
#define CPOL_TOOL_RUN_GID 84     /* u32: the same */
#define CPOL_TOOL_RUN_USER 88    /* str: CPOL_RUN_AS_USER only (a user name), else empty */
#define CPOL_TOOL_MEMORY_BYTES 96 /* u64: the tool's cgroup memory limit, > 0 */
#define CPOL_TOOL_PIDS 104       /* u32: the tool's cgroup pids limit, 1..CPOL_TOOL_MAX_PIDS */
/* u32: 0 = no result schema; else 1 + the PARAMS index of the result's
 * spec (unnamed, not required, owned by this tool alone).  Biased by one so
 * that "none" is the 0 every 3.0 and 3.1 blob already has here. */
#define CPOL_TOOL_RETURNS 108
#define CPOL_TOOL_BYTES 112

/* PARAMS record.  Params form a forest: a tool owns a contiguous run of
 * top-level params, an object param owns a run of properties, an array param
 * owns one items param.  Every child index is greater than its parent's, so
 * the structure is acyclic by construction, and every param has exactly one
 * owner.  Runs are sorted by name. */
#define CPOL_PRM_NAME 0        /* str; empty for an items spec */
#define CPOL_PRM_TYPE 8        /* u32: enum cpol_type */
#define CPOL_PRM_FLAGS 12      /* u32: CPOL_PRM_F_* */
#define CPOL_PRM_MIN 16        /* i64 (integer) or f64 bits (number) */
#define CPOL_PRM_MAX 24        /* same */
#define CPOL_PRM_MIN_LENGTH 32 /* u64 */
#define CPOL_PRM_MAX_LENGTH 40 /* u64 */
#define CPOL_PRM_MAX_ITEMS 48  /* u64 */
#define CPOL_PRM_ENUM 56       /* list into STRLIST */
#define CPOL_PRM_ITEMS 64      /* u32 index into PARAMS or CPOL_NONE */
#define CPOL_PRM_RESERVED 68   /* u32, zero */
#define CPOL_PRM_PROPS 72      /* list into PARAMS */
#define CPOL_PARAM_BYTES 80

/* AGENTS record. */
#define CPOL_AGT_NAME 0  /* str */
#define CPOL_AGT_TOOLS 8 /* list into IDXLIST; indices into TOOLS, ascending */
#define CPOL_AGENT_BYTES 16
/* From 3.6, only when some agent of the policy declares `session:`: 40
 * more bytes on every agent record.  An agent without sessions has flags
 * 0 and every other field 0; one with them has the flag and every field in
 * its bounds (the compiler writes the defaults of docs/descriptor.md for
 * what the YAML leaves out, so the runtime never guesses one). */
#define CPOL_AGT_SESSION_FLAGS 16     /* u32: CPOL_AGT_F_* */
#define CPOL_AGT_SESSION_MAX_CELLS 20 /* u32: 1..CPOL_SESSION_MAX_CELLS */
#define CPOL_AGT_SESSION_IDLE_MS 24   /* u64: idle expiry, 1 s..lifetime */
#define CPOL_AGT_SESSION_LIFE_MS 32   /* u64: total lifetime, 1 s..CPOL_SESSION_MAX_LIFE_MS */
#define CPOL_AGT_SESSION_CPU_MS 40    /* u64: cumulative CPU of the session, 1 ms..CPOL_SESSION_MAX_LIFE_MS * 1024 */
#define CPOL_AGT_SESSION_WS_BYTES 48  /* u64: workspace bytes in use, at most, 1..1 TiB */
#define CPOL_AGENT_SESSION_BYTES 56
#define CPOL_AGT_F_SESSION 0x1u       /* the agent may hold sessions */
#define CPOL_AGT_F_ALL 0x1u
#define CPOL_SESSION_MIN_MS 1000u
#define CPOL_SESSION_MAX_LIFE_MS (7ull * 24 * 3600 * 1000) /* a week */
#define CPOL_SESSION_MAX_CELLS 1000000u
#define CPOL_SESSION_MAX_WS_BYTES (1ull << 40)

/* OUTPUTS record. */
#define CPOL_OUT_PATH 0      /* str: glob relative to /workspace/out */
#define CPOL_OUT_MAX_BYTES 8 /* u64 */
#define CPOL_OUT_FLAGS 16    /* u32: CPOL_OUT_F_* */
#define CPOL_OUT_RESERVED 20 /* u32, zero */
#define CPOL_OUTPUT_BYTES 24

/* SIGNATURE record: present in every blob, zero-filled when unsigned. */
#define CPOL_SIG_ALGO 0      /* u32: enum cpol_sig_algo */
#define CPOL_SIG_RESERVED 4  /* u32, zero */
#define CPOL_SIG_KEYID 8     /* u8[8] */
#define CPOL_SIG_BYTES_OFF 16 /* u8[64]: Ed25519 over CPOL_SIG_CONTEXT || sha256 */
#define CPOL_SIGNATURE_BYTES 80
#define CPOL_SIG_CONTEXT "cordon-policy-signature-v1"

enum cpol_mode { CPOL_MODE_ISOLATED = 0, CPOL_MODE_LOCAL = 1 };
enum cpol_network { CPOL_NET_NONE = 0, CPOL_NET_LOOPBACK = 1 };
enum cpol_mount_type { CPOL_MOUNT_BIND = 0, CPOL_MOUNT_TMPFS = 1 };
enum cpol_type {
	CPOL_T_STRING = 1,
	CPOL_T_INTEGER = 2,
	CPOL_T_NUMBER = 3,
	CPOL_T_BOOLEAN = 4,
	CPOL_T_ARRAY = 5,
	CPOL_T_OBJECT = 6,
};
/* SOURCES record (3.5): one source file of the compile, in the order the
 * compile read them: the descriptor first (exactly one), then the
 * inventories in command-line order (at least one), then the seccomp policy
 * files in the order they were read. */
#define CPOL_SRC_ROLE 0     /* u32: enum cpol_src_role, never decreasing */
#define CPOL_SRC_RESERVED 4 /* u32, zero */
#define CPOL_SRC_NAME 8     /* str: non-empty; see docs/provenance.md */
#define CPOL_SRC_SHA256 16  /* u8[32]: SHA-256 of the file's bytes */
#define CPOL_SOURCE_BYTES 48
#define CPOL_MAX_SOURCES 4096u
enum cpol_src_role { CPOL_SRC_DESCRIPTOR = 0, CPOL_SRC_INVENTORY = 1, CPOL_SRC_POLICY = 2 };

/* LINT record (3.5): the verdict of the rule catalogue over the sources,
 * at the catalogue's default levels, inline suppressions honoured. */
#define CPOL_LINT_CATALOGUE 0   /* str: catalogue version, non-empty */
#define CPOL_LINT_ERRORS 8      /* u32: active findings at level error */
#define CPOL_LINT_WARNINGS 12   /* u32 */
#define CPOL_LINT_NOTES 16      /* u32 */
#define CPOL_LINT_SUPPRESSED 20 /* u32: findings an inline directive suppressed */
#define CPOL_LINT_RULES 24      /* list -> STRLIST: their rule ids, strictly ascending */
#define CPOL_LINT_BYTES 32

enum cpol_sig_algo { CPOL_SIG_NONE = 0, CPOL_SIG_ED25519 = 1 };

#define CPOL_EXE_F_LANDLOCK 0x1u
#define CPOL_EXE_F_ALL 0x1u
/* executor.preload: the modules the waiting interpreter imports.  The list
 * is the first run of STRLIST (the executor is the first record of the
 * walk to hold a string list), so the record needs only its count.  Each
 * name is a dotted Python identifier (policy_module_name_ok()), at most
 * CPOL_PRELOAD_NAME_MAX bytes, and no name is listed twice. */
#define CPOL_MAX_PRELOAD 32u
#define CPOL_PRELOAD_NAME_MAX 255u
/* executor.packages: the third-party packages the program may import,
 * imported (and so checked) before the program arrives and listed in the
 * agent doc.  The list is the STRLIST run right after the preload list;
 * same name rule and bound as preload, and no name in either list twice. */
#define CPOL_MAX_PACKAGES 32u

#define CPOL_LAYER_LANDLOCK 0x1u
#define CPOL_LAYER_CGROUP 0x2u
#define CPOL_LAYER_ALL 0x3u

#define CPOL_MNT_F_RW 0x1u
#define CPOL_MNT_F_ALL 0x1u

#define CPOL_TOOL_F_SIDE_EFFECT 0x1u
#define CPOL_TOOL_F_REPLAY 0x2u /* only with SIDE_EFFECT */
#define CPOL_TOOL_F_ALL 0x3u
/* Upper bound of a tool's max_calls_per_day, in the YAML and in the blob. */
#define CPOL_TOOL_MAX_PER_DAY 100000000u
/* Upper bound of a tool's pids, in the YAML and in the blob. */
#define CPOL_TOOL_MAX_PIDS 65536u
/* A run_as user name: at most this many bytes, [a-z_][a-z0-9_-]*, so it
 * is a name getpwnam() can be asked about and a log line can carry. */
#define CPOL_USER_NAME_MAX 32u

/* Whose host identity a tool runs with (docs/tools.md, run_as). */
enum cpol_run_as {
	CPOL_RUN_AS_DEDICATED = 0,  /* as root: the run's dedicated tool uid/gid; rootless: the caller */
	CPOL_RUN_AS_SUPERVISOR = 1, /* the supervisor's own identity (root when it is root) */
	CPOL_RUN_AS_USER = 2,       /* a host user by name, looked up at run time */
	CPOL_RUN_AS_IDS = 3,        /* a fixed uid and gid */
};
#define CPOL_RUN_AS_LAST CPOL_RUN_AS_IDS

#define CPOL_PRM_F_REQUIRED 0x01u
#define CPOL_PRM_F_MIN 0x02u        /* MIN is set (integer, number) */
#define CPOL_PRM_F_MAX 0x04u        /* MAX is set (integer, number) */
#define CPOL_PRM_F_MIN_LENGTH 0x08u /* string */
#define CPOL_PRM_F_MAX_LENGTH 0x10u /* string */
#define CPOL_PRM_F_MAX_ITEMS 0x20u  /* array */
#define CPOL_PRM_F_ALL 0x3Fu

#define CPOL_OUT_F_REQUIRED 0x1u
#define CPOL_OUT_F_ALL 0x1u

/* ==== Constraint bytecode (CONSTRAINTS section) ==========================
 *
 * docs/blob-format.md, "CONSTRAINTS", is the prose version; docs/
 * constraints.md the language it is compiled from.
 *
 * The section is an array of 16-byte instructions.  A tool's `constraints`
 * list (first, count) is an ordinary list reference into it: the tool's run
 * of instructions.  The run is cut into programs, one per constraint, each
 * ending at its first RET; the run's last instruction is a RET.  The tools'
 * non-empty runs tile the section in tool order (each starts where the
 * previous one ended, the last ends at the section's end), so every
 * instruction belongs to exactly one tool and is verified once.
 *
 * A program runs on a typed stack of at most CPOL_CONSTRAINT_MAX_STACK
 * values (cpol_type values: string, integer, number, boolean, array; an
 * array is only ever consumed by LEN).  The loader verifies every program
 * as BPF is verified: jumps go forward and stay inside their program, every
 * op finds operands of the type it names, the stack never underflows or
 * overflows, every path reaching an instruction brings the same stack, and
 * RET finds exactly one boolean.  So evaluation always terminates, in at
 * most one step per instruction, and never confuses types.
 */
#define CPOL_INSN_OP 0       /* u8: enum cpol_op */
#define CPOL_INSN_TYPE 1     /* u8: enum cpol_type the op works on, or 0 */
#define CPOL_INSN_RESERVED 2 /* u16, zero */
#define CPOL_INSN_A 4        /* u32: param index, i32 jump offset, or 0/1 */
#define CPOL_INSN_B 8        /* u64: i64, f64 bits, str, or list into STRLIST */
#define CPOL_INSN_BYTES 16

#define CPOL_CONSTRAINT_MAX_STACK 16u    /* values on the evaluation stack */
#define CPOL_CONSTRAINT_MAX_PROGRAM 4096u /* instructions in one constraint */

/* Fields an op does not list below are zero.  "param" is an index into the
 * tool's top-level params run (a < tool.params.count). */
enum cpol_op {
	CPOL_OP_RET = 1,          /* pop boolean: the constraint's verdict; ends the program */
	CPOL_OP_PARAM = 2,        /* type: the param's declared type (not object); a: param.
				   * push its value (an array: its item count); absent: deny */
	CPOL_OP_HAS = 3,          /* a: param; push boolean: present (and not null) */
	CPOL_OP_INT = 4,          /* b: i64; push integer */
	CPOL_OP_NUM = 5,          /* b: f64 bits, finite; push number */
	CPOL_OP_BOOL = 6,         /* a: 0 or 1; push boolean */
	CPOL_OP_STR = 7,          /* b: str; push string */
	CPOL_OP_LEN = 8,          /* type: string (bytes) or array (items); pop, push integer */
	CPOL_OP_TONUM = 9,        /* pop integer, push it as a number (nearest double) */
	CPOL_OP_EQ = 10,          /* type: integer, number, string or boolean */
	CPOL_OP_NE = 11,          /*   pop right, pop left, push boolean */
	CPOL_OP_LT = 12,          /* type: integer or number */
	CPOL_OP_LE = 13,
	CPOL_OP_GT = 14,
	CPOL_OP_GE = 15,
	CPOL_OP_IN = 16,          /* b: list into STRLIST, count >= 1; pop string, push boolean */
	CPOL_OP_STARTS_WITH = 17, /* b: str; pop string, push boolean */
	CPOL_OP_ENDS_WITH = 18,   /* b: str; pop string, push boolean */
	CPOL_OP_NOT = 19,         /* pop boolean, push its negation */
	CPOL_OP_JF = 20,          /* a: i32 offset, target = index + 1 + a, forward, at most the
				   * program's RET.  Top is boolean: false: jump, keeping it;
				   * true: pop it and fall through */
	CPOL_OP_JT = 21,          /* the same with true and false exchanged */
};
#define CPOL_OP_LAST CPOL_OP_JT
/* ==== end of constraint bytecode ========================================= */

#endif
