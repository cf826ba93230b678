/* SPDX-License-Identifier: Apache-2.0 */
/*
 * blob_load.c - validate a .cpol blob and decode it (format: cpol.h).
 *
 * The mirror of compiler/emit.c, in the manner of Lua's lundump.c: every
 * byte is read through one bounds-checked primitive on one record view
 * (buffer, length, offset, name), and every failure ends in blob_fail(),
 * which names the field ("tools[3].params.first") and its byte offset.
 * Unlike lundump we trust nothing: a correct hash only proves the bytes are
 * the ones that were hashed, not that their writer was sane, so every
 * reference, enum, flag, reserved field, ordering and bound is checked
 * before the policy is handed out.
 *
 * The order is fixed: header, section table, hash, then the sections in id
 * order, then the parameter forest, which needs TOOLS and PARAMS together,
 * then the constraint bytecode, whose verifier (constraint_verify.c) needs
 * the tools and their checked parameter signatures.
 *
 * Work is linear (or n log n) in the blob size whatever the input, so a
 * hostile blob cannot make the loader hang: string checks are O(1) through
 * a rank table of NUL positions, string references must start at a string
 * table entry (so distinct references in a sorted table never overlap and
 * comparing neighbours costs at most the table size), parameter names are
 * ranked once so the many per-run sort checks compare integers, and agent
 * tool runs are checked against precomputed ascending-run ends.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "common/bpf_check.h"
#include "cordon/blob.h"
#include "runtime/constraint_verify.h"

/* A validated section-table entry. */
struct blob_sec {
	uint64_t off;
	uint64_t size;
	uint32_t count;
	uint32_t rec; /* bytes per record (blob_sec_rec_size()) */
};

/* The loader's one state: input, output, and what earlier sections left
 * for later ones.  Temporary tables are malloc'd and freed by blob_load(). */
struct blob_loader {
	const uint8_t *buf;
	size_t len;
	struct blob_error *err;
	struct cpol_policy *p;
	struct blob_sec sec[CPOL_SEC_MAX_ID + 1]; /* by section id */
	uint32_t nsec; /* table entries: CPOL_SEC_COUNT, or _PROV from 3.5 */

	const char *strtab; /* arena copy of STRTAB */
	uint32_t strtab_size;
	uint64_t *nul_bits;   /* bit i: strtab[i] == 0 */
	uint32_t *nul_rank;   /* NULs in strtab before word w of nul_bits */
	const char **strlist; /* decoded STRLIST */
	uint32_t *idxlist;    /* decoded IDXLIST */
	uint32_t *idx_asc_end; /* idxlist[j..idx_asc_end[j]) strictly ascends */
};

/* A record being read: every read and every error names it. */
struct blob_rec {
	const uint8_t *p;
	size_t size;
	uint64_t off;      /* of p in the blob */
	const char *table; /* "header", "section", "tools", ... */
	uint32_t index;    /* record index, or CPOL_NONE for a lone record */
};

/* Bytes per record, by section id (STRTAB counts bytes). */
static const uint32_t blob_rec_size[CPOL_SEC_MAX_ID + 1] = {
	0,
	1,
	CPOL_STR_BYTES,
	CPOL_IDX_BYTES,
	CPOL_META_BYTES,
	CPOL_LIMITS_BYTES,
	CPOL_EXECUTOR_BYTES,
	CPOL_ENV_BYTES,
	CPOL_MOUNT_BYTES,
	CPOL_BPF_BYTES,
	CPOL_TOOL_BYTES,
	CPOL_PARAM_BYTES,
	CPOL_INSN_BYTES,
	CPOL_AGENT_BYTES,
	CPOL_OUTPUT_BYTES,
	CPOL_SIGNATURE_BYTES,
	CPOL_SOURCE_BYTES,
	CPOL_LINT_BYTES,
};

/*
 * The one way out on failure: "table[index].field" (parts left out when
 * empty), the absolute byte offset, and a sentence.  Returns -1 so callers
 * can `return blob_fail(...)`.
 */
__attribute__((format(printf, 5, 6))) static int blob_fail(struct blob_loader *L,
							     const struct blob_rec *r, size_t at,
							     const char *field, const char *fmt, ...)
{
	struct blob_error *e = L->err;
	const char *dot = field[0] ? "." : "";
	va_list ap;

	if (r->index == CPOL_NONE)
		snprintf(e->field, sizeof(e->field), "%s%s%s", r->table, dot, field);
	else
		snprintf(e->field, sizeof(e->field), "%s[%u]%s%s", r->table, r->index, dot, field);
	e->offset = r->off + at;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -1;
}

/* A blob string made safe to put in a message: at most 60 bytes, control
 * bytes shown as '?', so a hostile blob cannot write escape sequences to
 * the terminal that prints our error.  Used as blob_quote(s).s within one
 * call (C11 keeps the returned array alive to the end of the expression). */
struct blob_quoted {
	char s[64 + 4];
};

static struct blob_quoted blob_quote(const char *s)
{
	struct blob_quoted q;
	size_t i;

	for (i = 0; i < 60 && s[i] != '\0'; i++) {
		unsigned char c = (unsigned char)s[i];

		q.s[i] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	if (s[i] != '\0') {
		memcpy(q.s + i, "...", 3);
		i += 3;
	}
	q.s[i] = '\0';
	return q;
}

/* A view of record i of section id.  The section table check already
 * proved the section lies inside the blob; checking again here keeps the
 * "never read outside buf" promise local to the reader. */
static int blob_rec_at(struct blob_loader *L, int id, uint32_t i, struct blob_rec *r)
{
	const struct blob_sec *s = &L->sec[id];
	uint64_t at = (uint64_t)i * s->rec;

	r->table = policy_section_name((uint32_t)id);
	r->index = i;
	r->size = s->rec;
	r->off = s->off + at;
	r->p = NULL;
	if (i >= s->count || at + r->size > s->size || s->off + s->size > L->len)
		return blob_fail(L, r, 0, "", "The record lies outside its section.");
	r->p = L->buf + r->off;
	return 0;
}

/* The reader primitive: width bytes, little-endian, at offset at. */
static int blob_get(struct blob_loader *L, const struct blob_rec *r, size_t at, size_t width,
		    const char *field, uint64_t *v)
{
	*v = 0;
	if (r->p == NULL || at > r->size || width > r->size - at || width > 8)
		return blob_fail(L, r, at, field, "The field lies outside its %zu-byte record.",
				 r->size);
	for (size_t i = 0; i < width; i++)
		*v |= (uint64_t)r->p[at + i] << (8 * i);
	return 0;
}

static int blob_u32(struct blob_loader *L, const struct blob_rec *r, size_t at, const char *field,
		    uint32_t *v)
{
	uint64_t x;

	if (blob_get(L, r, at, 4, field, &x) < 0)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

static int blob_u64(struct blob_loader *L, const struct blob_rec *r, size_t at, const char *field,
		    uint64_t *v)
{
	return blob_get(L, r, at, 8, field, v);
}

/* A u32 that must be zero: a later minor version can give a reserved field
 * a meaning only if every earlier reader refuses anything but zero. */
static int blob_zero32(struct blob_loader *L, const struct blob_rec *r, size_t at,
		       const char *field)
{
	uint32_t v;

	if (blob_u32(L, r, at, field, &v) < 0)
		return -1;
	if (v != 0)
		return blob_fail(L, r, at, field, "This reserved field holds %u; it must be 0.", v);
	return 0;
}

/* Number of NULs in strtab[0..x), x <= strtab_size: O(1). */
static uint32_t blob_nuls_before(const struct blob_loader *L, uint32_t x)
{
	uint32_t w = x / 64, b = x % 64;
	uint64_t mask = b ? (UINT64_C(1) << b) - 1 : 0;

	return L->nul_rank[w] + (uint32_t)__builtin_popcountll(L->nul_bits[w] & mask);
}

/*
 * A string reference.  Beyond "inside the table and NUL-terminated there",
 * a reference must start where a table entry starts (offset 0 or just after
 * a NUL) and the empty string must be (0, 0): emit never writes anything
 * else, and the first rule is what keeps sorted-table checks linear.
 */
static int blob_str(struct blob_loader *L, const struct blob_rec *r, size_t at, const char *field,
		    const char **out)
{
	uint32_t off = 0, len = 0;

	*out = NULL;
	if (blob_u32(L, r, at + CPOL_STR_OFF, field, &off) < 0 ||
	    blob_u32(L, r, at + CPOL_STR_LEN, field, &len) < 0)
		return -1;
	if ((uint64_t)off + len >= L->strtab_size)
		return blob_fail(L, r, at, field,
				 "The string (offset %u, length %u) runs past the %u-byte string table.",
				 off, len, L->strtab_size);
	if (len == 0 && off != 0)
		return blob_fail(L, r, at, field,
				 "The empty string is written as offset 0, not offset %u.", off);
	if (off != 0 && L->strtab[off - 1] != '\0')
		return blob_fail(L, r, at, field,
				 "The string at offset %u starts inside another string-table entry.",
				 off);
	if (L->strtab[off + len] != '\0')
		return blob_fail(L, r, at, field,
				 "The string (offset %u, length %u) is not NUL-terminated in the string table.",
				 off, len);
	if (blob_nuls_before(L, off + len) != blob_nuls_before(L, off))
		return blob_fail(L, r, at, field,
				 "The string (offset %u, length %u) contains a NUL byte.", off, len);
	*out = L->strtab + off;
	return 0;
}

/* A (first, count) reference into a list of n entries named what.  An empty
 * list is (0, 0): one layout per meaning. */
static int blob_list(struct blob_loader *L, const struct blob_rec *r, size_t at, const char *field,
		     uint32_t n, const char *what, struct cpol_range *out)
{
	char sub[64];

	out->first = out->count = 0;
	if (blob_u32(L, r, at, field, &out->first) < 0 ||
	    blob_u32(L, r, at + 4, field, &out->count) < 0)
		return -1;
	if (out->count == 0 && out->first != 0) {
		snprintf(sub, sizeof(sub), "%s.first", field);
		return blob_fail(L, r, at, sub, "An empty list is written as first 0, not %u.",
				 out->first);
	}
	if (out->count != 0 && out->first >= n) {
		snprintf(sub, sizeof(sub), "%s.first", field);
		return blob_fail(L, r, at, sub, "The list starts at %s entry %u, but %s has %u entries.",
				 what, out->first, what, n);
	}
	/* first < n here, so n - first cannot wrap. */
	if (out->count > n - out->first) {
		snprintf(sub, sizeof(sub), "%s.count", field);
		return blob_fail(L, r, at + 4, sub,
				 "The list of %u entries from %s entry %u runs past the %u entries of %s.",
				 out->count, what, out->first, n, what);
	}
	return 0;
}

/* A string list: (first, count) into STRLIST, decoded once and shared. */
static int blob_strs(struct blob_loader *L, const struct blob_rec *r, size_t at, const char *field,
		     struct cpol_strs *out)
{
	struct cpol_range g;

	out->v = NULL;
	out->n = 0;
	if (blob_list(L, r, at, field, L->sec[CPOL_SEC_STRLIST].count, "strlist", &g) < 0)
		return -1;
	if (g.count) {
		out->v = L->strlist + g.first;
		out->n = g.count;
	}
	return 0;
}

/* Zeroed arena array of n records; NULL (and success) for n == 0. */
static int blob_alloc(struct blob_loader *L, const struct blob_rec *where, uint32_t n, size_t sz,
		      void **out)
{
	*out = NULL;
	if (n == 0)
		return 0;
	*out = arena_calloc(&L->p->arena, n, sz);
	if (*out == NULL)
		return blob_fail(L, where, 0, "", "Out of memory while decoding %u records.", n);
	return 0;
}

/* ---- header and section table ------------------------------------------ */

static int blob_read_header(struct blob_loader *L, uint32_t want_arch)
{
	struct blob_rec h = { L->buf, CPOL_HEADER_SIZE, 0, "header", CPOL_NONE };
	uint64_t major, minor, arch, total, nsec, tend;

	if (L->len < CPOL_TABLE_END) {
		h.p = NULL;
		return blob_fail(L, &h, 0, "",
				 "The blob is %zu bytes long; the header and section table alone take %u.",
				 L->len, (unsigned)CPOL_TABLE_END);
	}
	if (memcmp(L->buf + CPOL_HDR_MAGIC, CPOL_MAGIC, CPOL_MAGIC_LEN) != 0)
		return blob_fail(L, &h, CPOL_HDR_MAGIC, "magic",
				 "This is not a cordon policy blob (bad magic), or it was damaged by a text-mode copy.");
	if (blob_get(L, &h, CPOL_HDR_MAJOR, 2, "major", &major) < 0 ||
	    blob_get(L, &h, CPOL_HDR_MINOR, 2, "minor", &minor) < 0 ||
	    blob_get(L, &h, CPOL_HDR_ARCH, 4, "arch", &arch) < 0 ||
	    blob_get(L, &h, CPOL_HDR_TOTAL_SIZE, 8, "total_size", &total) < 0 ||
	    blob_get(L, &h, CPOL_HDR_SECTION_COUNT, 4, "section_count", &nsec) < 0 ||
	    blob_get(L, &h, CPOL_HDR_TABLE_END, 4, "table_end", &tend) < 0)
		return -1;
	/* Another major version lays records out differently (1.x had 72-byte
	 * tools, 2.x 80-byte ones): refused, never read with this version's
	 * offsets. */
	if (major != CPOL_VERSION_MAJOR)
		return blob_fail(L, &h, CPOL_HDR_MAJOR, "major",
				 "The blob is format %u.%u, %s than this loader's %u.%u, which reads "
				 "format %u.x only%s.",
				 (unsigned)major, (unsigned)minor, major < CPOL_VERSION_MAJOR ? "older" : "newer",
				 CPOL_VERSION_MAJOR, CPOL_VERSION_MINOR, CPOL_VERSION_MAJOR,
				 major < CPOL_VERSION_MAJOR ? "; compile the policy again with this version's cordonc"
							   : "");
	if (minor > CPOL_VERSION_MINOR)
		return blob_fail(L, &h, CPOL_HDR_MINOR, "minor",
				 "The blob is format %u.%u, newer than this loader's %u.%u.",
				 (unsigned)major, (unsigned)minor, CPOL_VERSION_MAJOR, CPOL_VERSION_MINOR);
	if (arch != CPOL_ARCH_X86_64)
		return blob_fail(L, &h, CPOL_HDR_ARCH, "arch",
				 "The blob targets audit arch 0x%08x, which this format does not know.",
				 (unsigned)arch);
	if (want_arch != BLOB_ANY_ARCH && arch != want_arch)
		return blob_fail(L, &h, CPOL_HDR_ARCH, "arch",
				 "The blob targets audit arch 0x%08x, but this host needs 0x%08x.",
				 (unsigned)arch, (unsigned)want_arch);
	if (total != L->len)
		return blob_fail(L, &h, CPOL_HDR_TOTAL_SIZE, "total_size",
				 "The header says the blob is %llu bytes, but %zu bytes were given (truncated or padded?).",
				 (unsigned long long)total, L->len);
	if (total > CPOL_MAX_BLOB_SIZE)
		return blob_fail(L, &h, CPOL_HDR_TOTAL_SIZE, "total_size",
				 "The blob is %llu bytes; the format allows at most %u.",
				 (unsigned long long)total, CPOL_MAX_BLOB_SIZE);
	/* 15 sections always; 17 (with SOURCES and LINT) only from 3.5, so
	 * the section count cannot smuggle a layout past the minor. */
	if (nsec != CPOL_SEC_COUNT && !(nsec == CPOL_SEC_COUNT_PROV && minor >= CPOL_MINOR_PROVENANCE))
		return blob_fail(L, &h, CPOL_HDR_SECTION_COUNT, "section_count",
				 "The header lists %u sections; a format %u.%u blob has %u%s.", (unsigned)nsec,
				 (unsigned)major, (unsigned)minor, CPOL_SEC_COUNT,
				 minor >= CPOL_MINOR_PROVENANCE ? " or 17 (with provenance)" : "");
	if (tend != CPOL_HEADER_SIZE + nsec * CPOL_SEC_ENT_BYTES)
		return blob_fail(L, &h, CPOL_HDR_TABLE_END, "table_end",
				 "The section table ends at %u; with %u sections it ends at %u.",
				 (unsigned)tend, (unsigned)nsec,
				 (unsigned)(CPOL_HEADER_SIZE + nsec * CPOL_SEC_ENT_BYTES));
	if (L->len < tend)
		return blob_fail(L, &h, CPOL_HDR_TABLE_END, "table_end",
				 "The blob is %zu bytes long; its header and section table alone take %u.",
				 L->len, (unsigned)tend);
	L->nsec = (uint32_t)nsec;
	L->p->major = (uint16_t)major;
	L->p->minor = (uint16_t)minor;
	L->p->arch = (uint32_t)arch;
	return 0;
}

/* How many records a section must hold, beyond size == count * record. */
static int blob_check_count(struct blob_loader *L, const struct blob_rec *e, int id, uint32_t n)
{
	switch (id) {
	case CPOL_SEC_STRTAB:
		if (n == 0)
			return blob_fail(L, e, CPOL_SEC_ENT_COUNT, "count",
					 "The string table is empty; it must hold at least its leading NUL.");
		break;
	case CPOL_SEC_META:
	case CPOL_SEC_LIMITS:
	case CPOL_SEC_EXECUTOR:
	case CPOL_SEC_LINT:
	case CPOL_SEC_SIGNATURE:
		if (n != 1)
			return blob_fail(L, e, CPOL_SEC_ENT_COUNT, "count",
					 "The %s section holds %u records; it must hold exactly one.",
					 policy_section_name((uint32_t)id), n);
		break;
	case CPOL_SEC_SOURCES:
		if (n < 2 || n > CPOL_MAX_SOURCES)
			return blob_fail(L, e, CPOL_SEC_ENT_COUNT, "count",
					 "The sources section holds %u records; a compile reads 2 to %u files.", n,
					 CPOL_MAX_SOURCES);
		break;
	case CPOL_SEC_SECCOMP:
		if (n > CPOL_MAX_SECCOMP_INSNS)
			return blob_fail(L, e, CPOL_SEC_ENT_COUNT, "count",
					 "The seccomp program has %u instructions; the kernel takes at most %u.",
					 n, CPOL_MAX_SECCOMP_INSNS);
		break;
	default:
		break;
	}
	return 0;
}

/*
 * Bytes per record of section id whose table entry says `size`.  Two
 * sections have two layouts: from 3.3 (CPOL_MINOR_CPU) the LIMITS record
 * may carry a CPU quota in 8 more bytes, from 3.4 (CPOL_MINOR_PACKAGES)
 * the EXECUTOR record a package count, and the size is what says so.  In
 * an older blob only the old size holds, so a 3.2 blob cannot smuggle
 * bytes past a reader that trusts its minor.  From 3.6 (CPOL_MINOR_
 * SESSION) the AGENTS records may carry session limits the same way.
 */
static uint32_t blob_sec_rec_size(const struct blob_loader *L, int id, uint32_t count, uint64_t size)
{
	if (id == CPOL_SEC_LIMITS && L->p->minor >= CPOL_MINOR_CPU && size == CPOL_LIMITS_CPU_BYTES)
		return CPOL_LIMITS_CPU_BYTES;
	if (id == CPOL_SEC_EXECUTOR && L->p->minor >= CPOL_MINOR_PACKAGES && size == CPOL_EXECUTOR_PKG_BYTES)
		return CPOL_EXECUTOR_PKG_BYTES;
	/* AGENTS from 3.6: the long records, when the size says so (the
	 * count states how many records there are, so 7 short records are
	 * never read as 2 long ones). */
	if (id == CPOL_SEC_AGENTS && L->p->minor >= CPOL_MINOR_SESSION && count > 0 &&
	    size == (uint64_t)count * CPOL_AGENT_SESSION_BYTES)
		return CPOL_AGENT_SESSION_BYTES;
	return blob_rec_size[id];
}

static int blob_read_table(struct blob_loader *L)
{
	uint64_t end = CPOL_HEADER_SIZE + (uint64_t)L->nsec * CPOL_SEC_ENT_BYTES; /* previous end */

	for (uint32_t i = 0; i < L->nsec; i++) {
		int id = (int)policy_section_at(L->nsec, i);
		struct blob_rec e = { L->buf + CPOL_HEADER_SIZE + (size_t)i * CPOL_SEC_ENT_BYTES,
				      CPOL_SEC_ENT_BYTES, CPOL_HEADER_SIZE + (uint64_t)i * CPOL_SEC_ENT_BYTES,
				      "section", i };
		uint32_t sid, count, rec;
		uint64_t off, size, want;

		if (blob_u32(L, &e, CPOL_SEC_ENT_ID, "id", &sid) < 0 ||
		    blob_u32(L, &e, CPOL_SEC_ENT_COUNT, "count", &count) < 0 ||
		    blob_u64(L, &e, CPOL_SEC_ENT_OFFSET, "offset", &off) < 0 ||
		    blob_u64(L, &e, CPOL_SEC_ENT_SIZE, "size", &size) < 0)
			return -1;
		if (sid != (uint32_t)id)
			return blob_fail(L, &e, CPOL_SEC_ENT_ID, "id",
					 "Section-table entry %u has id %u; in a table of %u entries it must be %d (%s).",
					 i, sid, L->nsec, id, policy_section_name((uint32_t)id));
		/* end <= len <= CPOL_MAX_BLOB_SIZE, so rounding cannot wrap. */
		want = (end + CPOL_ALIGN - 1) & ~(uint64_t)(CPOL_ALIGN - 1);
		if (off != want)
			return blob_fail(L, &e, CPOL_SEC_ENT_OFFSET, "offset",
					 "The %s section starts at %llu; it must start at %llu, the previous section's end rounded up to 8.",
					 policy_section_name((uint32_t)id), (unsigned long long)off,
					 (unsigned long long)want);
		if (off > L->len)
			return blob_fail(L, &e, CPOL_SEC_ENT_OFFSET, "offset",
					 "The %s section starts at %llu, past the end of the %zu-byte blob.",
					 policy_section_name((uint32_t)id), (unsigned long long)off, L->len);
		for (uint64_t b = end; b < off; b++)
			if (L->buf[b] != 0)
				return blob_fail(L, &e, (size_t)(b - e.off), "padding",
						 "Padding byte %llu before the %s section is 0x%02x; padding must be zero.",
						 (unsigned long long)b, policy_section_name((uint32_t)id), L->buf[b]);
		if (blob_check_count(L, &e, id, count) < 0)
			return -1;
		rec = blob_sec_rec_size(L, id, count, size);
		/* count < 2^32 and records are at most 112 bytes: no overflow. */
		if (size != (uint64_t)count * rec)
			return blob_fail(L, &e, CPOL_SEC_ENT_SIZE, "size",
					 "The %s section is %llu bytes, but %u records of %u bytes take %llu.",
					 policy_section_name((uint32_t)id), (unsigned long long)size, count, rec,
					 (unsigned long long)count * rec);
		if (size > L->len - off)
			return blob_fail(L, &e, CPOL_SEC_ENT_SIZE, "size",
					 "The %s section (%llu bytes at %llu) runs past the end of the %zu-byte blob.",
					 policy_section_name((uint32_t)id), (unsigned long long)size,
					 (unsigned long long)off, L->len);
		L->sec[id].off = off;
		L->sec[id].size = size;
		L->sec[id].count = count;
		L->sec[id].rec = rec;
		end = off + size;
		if (id == CPOL_SEC_SIGNATURE && end != L->len)
			return blob_fail(L, &e, CPOL_SEC_ENT_SIZE, "size",
					 "The signature section ends at %llu, but the blob is %zu bytes; it must be last and end the blob.",
					 (unsigned long long)end, L->len);
	}
	return 0;
}

static int blob_check_hash(struct blob_loader *L)
{
	struct blob_rec h = { L->buf, CPOL_HEADER_SIZE, 0, "header", CPOL_NONE };
	uint8_t sum[32];

	/* The signature section starts at or after the table end, so the
	 * range blob_hash() reads is inside the blob. */
	blob_hash(L->buf, (size_t)L->sec[CPOL_SEC_SIGNATURE].off, sum);
	if (memcmp(sum, L->buf + CPOL_HDR_SHA256, sizeof(sum)) != 0)
		return blob_fail(L, &h, CPOL_HDR_SHA256, "sha256",
				 "The blob's SHA-256 does not match its contents: it is corrupt or was modified.");
	memcpy(L->p->sha256, sum, sizeof(sum));
	return 0;
}

/* ---- strings and lists ------------------------------------------------- */

static int blob_read_strtab(struct blob_loader *L)
{
	const struct blob_sec *s = &L->sec[CPOL_SEC_STRTAB];
	struct blob_rec t = { L->buf + s->off, (size_t)s->size, s->off, "strtab", CPOL_NONE };
	uint32_t n = s->count, words = n / 64 + 1;
	char *copy;

	if (L->buf[s->off] != 0)
		return blob_fail(L, &t, 0, "", "The string table must start with a NUL byte.");
	if (L->buf[s->off + n - 1] != 0)
		return blob_fail(L, &t, n - 1, "", "The string table must end with a NUL byte.");
	/* One copy, so the policy outlives the buffer it was loaded from. */
	copy = arena_alloc(&L->p->arena, n);
	L->nul_bits = calloc(words, sizeof(*L->nul_bits));
	L->nul_rank = calloc(words, sizeof(*L->nul_rank));
	if (copy == NULL || L->nul_bits == NULL || L->nul_rank == NULL)
		return blob_fail(L, &t, 0, "", "Out of memory while copying the string table.");
	memcpy(copy, L->buf + s->off, n);
	for (uint32_t i = 0; i < n; i++)
		if (copy[i] == '\0')
			L->nul_bits[i / 64] |= UINT64_C(1) << (i % 64);
	for (uint32_t w = 1; w < words; w++)
		L->nul_rank[w] = L->nul_rank[w - 1] +
				 (uint32_t)__builtin_popcountll(L->nul_bits[w - 1]);
	L->strtab = copy;
	L->strtab_size = n;
	return 0;
}

static int blob_read_strlist(struct blob_loader *L)
{
	uint32_t n = L->sec[CPOL_SEC_STRLIST].count;
	struct blob_rec r = { NULL, 0, L->sec[CPOL_SEC_STRLIST].off, "strlist", CPOL_NONE };
	void *v;

	if (blob_alloc(L, &r, n, sizeof(*L->strlist), &v) < 0)
		return -1;
	L->strlist = v;
	for (uint32_t i = 0; i < n; i++)
		if (blob_rec_at(L, CPOL_SEC_STRLIST, i, &r) < 0 ||
		    blob_str(L, &r, 0, "", &L->strlist[i]) < 0)
			return -1;
	return 0;
}

/* IDXLIST holds only agents' tool indices, so every entry must name a
 * tool.  The ascending-run table lets each agent's run be checked in O(1)
 * however many agents share or overlap runs. */
static int blob_read_idxlist(struct blob_loader *L)
{
	uint32_t n = L->sec[CPOL_SEC_IDXLIST].count, ntools = L->sec[CPOL_SEC_TOOLS].count;
	struct blob_rec r = { NULL, 0, L->sec[CPOL_SEC_IDXLIST].off, "idxlist", CPOL_NONE };
	void *v;

	if (blob_alloc(L, &r, n, sizeof(*L->idxlist), &v) < 0)
		return -1;
	L->idxlist = v;
	if (n == 0)
		return 0;
	L->idx_asc_end = calloc(n, sizeof(*L->idx_asc_end));
	if (L->idx_asc_end == NULL)
		return blob_fail(L, &r, 0, "", "Out of memory while decoding the index lists.");
	for (uint32_t i = 0; i < n; i++) {
		if (blob_rec_at(L, CPOL_SEC_IDXLIST, i, &r) < 0 ||
		    blob_u32(L, &r, 0, "", &L->idxlist[i]) < 0)
			return -1;
		if (L->idxlist[i] >= ntools)
			return blob_fail(L, &r, 0, "", "Tool index %u is out of range: there are %u tools.",
					 L->idxlist[i], ntools);
	}
	L->idx_asc_end[n - 1] = n;
	for (uint32_t i = n - 1; i-- > 0;)
		L->idx_asc_end[i] = L->idxlist[i] < L->idxlist[i + 1] ? L->idx_asc_end[i + 1] : i + 1;
	return 0;
}

/* ---- single records ---------------------------------------------------- */

static int blob_read_meta(struct blob_loader *L)
{
	struct cpol_meta *m = &L->p->meta;
	struct blob_rec r;

	if (blob_rec_at(L, CPOL_SEC_META, 0, &r) < 0)
		return -1;
	r.index = CPOL_NONE;
	if (blob_str(L, &r, CPOL_META_APP, "app", &m->app) < 0 ||
	    blob_u32(L, &r, CPOL_META_DESCRIPTOR_VERSION, "descriptor_version",
		     &m->descriptor_version) < 0 ||
	    blob_u32(L, &r, CPOL_META_INVENTORY_VERSION, "inventory_version",
		     &m->inventory_version) < 0)
		return -1;
	return 0;
}

/* A limit the runtime divides by, sleeps on or sizes a buffer with: zero
 * would mean "no limit" by accident, so the format forbids it. */
static int blob_limit64(struct blob_loader *L, const struct blob_rec *r, size_t at,
			const char *field, uint64_t *v)
{
	if (blob_u64(L, r, at, field, v) < 0)
		return -1;
	if (*v == 0)
		return blob_fail(L, r, at, field, "The limit %s is 0; it must be positive.", field);
	return 0;
}

static int blob_limit32(struct blob_loader *L, const struct blob_rec *r, size_t at,
			const char *field, uint32_t *v)
{
	if (blob_u32(L, r, at, field, v) < 0)
		return -1;
	if (*v == 0)
		return blob_fail(L, r, at, field, "The limit %s is 0; it must be positive.", field);
	return 0;
}

/*
 * The CPU quota: present exactly when the record is the 3.3 one (the table
 * check let 104 bytes through only in a blob of minor >= 3).  One layout
 * per meaning: a long record without a quota would be a second spelling of
 * "no quota", so it is refused, as is a reserved word that is not 0.  The
 * bounds are the YAML's: the runtime turns the value into a kernel quota.
 */
static int blob_read_cpu(struct blob_loader *L, const struct blob_rec *r, struct cpol_limits *l)
{
	l->cpu_milli = 0;
	if (r->size == CPOL_LIMITS_BYTES)
		return 0;
	if (blob_u32(L, r, CPOL_LIM_CPU_MILLI, "cpu_milli", &l->cpu_milli) < 0)
		return -1;
	if (l->cpu_milli < CPOL_CPU_MILLI_MIN || l->cpu_milli > CPOL_CPU_MILLI_MAX)
		return blob_fail(L, r, CPOL_LIM_CPU_MILLI, "cpu_milli",
				 "The CPU quota is %u thousandths of a CPU; the format allows %u to %u "
				 "(a blob without a quota has the %u-byte record).",
				 l->cpu_milli, CPOL_CPU_MILLI_MIN, CPOL_CPU_MILLI_MAX, CPOL_LIMITS_BYTES);
	return blob_zero32(L, r, CPOL_LIM_CPU_RESERVED, "reserved");
}

static int blob_read_limits(struct blob_loader *L)
{
	struct cpol_limits *l = &L->p->limits;
	struct blob_rec r;

	if (blob_rec_at(L, CPOL_SEC_LIMITS, 0, &r) < 0)
		return -1;
	r.index = CPOL_NONE;
	if (blob_limit64(L, &r, CPOL_LIM_TIMEOUT_MS, "timeout_ms", &l->timeout_ms) < 0 ||
	    blob_limit64(L, &r, CPOL_LIM_MAX_FILE_BYTES, "max_file_bytes", &l->max_file_bytes) < 0 ||
	    blob_limit64(L, &r, CPOL_LIM_WS_DELTA_BYTES, "ws_delta_bytes", &l->ws_delta_bytes) < 0 ||
	    blob_u64(L, &r, CPOL_LIM_WS_MAX_BYTES, "ws_max_bytes", &l->ws_max_bytes) < 0 ||
	    blob_limit64(L, &r, CPOL_LIM_MONITOR_MS, "monitor_ms", &l->monitor_ms) < 0 ||
	    blob_limit64(L, &r, CPOL_LIM_MAX_OUTPUT_BYTES, "max_output_bytes",
			 &l->max_output_bytes) < 0 ||
	    blob_limit64(L, &r, CPOL_LIM_MAX_RESULT_BYTES, "max_result_bytes",
			 &l->max_result_bytes) < 0 ||
	    blob_limit64(L, &r, CPOL_LIM_MAX_CODE_BYTES, "max_code_bytes", &l->max_code_bytes) < 0 ||
	    blob_limit64(L, &r, CPOL_LIM_MEMORY_BYTES, "memory_bytes", &l->memory_bytes) < 0 ||
	    blob_limit64(L, &r, CPOL_LIM_MAX_TOOL_REQ_BYTES, "max_tool_request_bytes",
			 &l->max_tool_request_bytes) < 0 ||
	    blob_limit32(L, &r, CPOL_LIM_PIDS, "pids", &l->pids) < 0 ||
	    blob_limit32(L, &r, CPOL_LIM_OPEN_FILES, "open_files", &l->open_files) < 0 ||
	    blob_u32(L, &r, CPOL_LIM_MODE, "mode", &l->mode) < 0)
		return -1;
	if (l->mode != CPOL_MODE_ISOLATED && l->mode != CPOL_MODE_LOCAL)
		return blob_fail(L, &r, CPOL_LIM_MODE, "mode", "Mode %u is not a known mode.", l->mode);
	if (blob_limit32(L, &r, CPOL_LIM_WS_ENTRIES, "ws_entries", &l->ws_entries) < 0)
		return -1;
	/* The YAML's bound, checked again: it sizes a tmpfs's inode count. */
	if (l->ws_entries > CPOL_MAX_WS_ENTRIES)
		return blob_fail(L, &r, CPOL_LIM_WS_ENTRIES, "ws_entries",
				 "The workspace may hold %u entries; the format allows at most %u.", l->ws_entries,
				 CPOL_MAX_WS_ENTRIES);
	return blob_read_cpu(L, &r, l);
}

/* A word that a later minor gave a meaning to: in an older blob it is
 * still reserved, and reading it with the new meaning there would give one
 * layout two meanings. */
static int blob_minor_word(struct blob_loader *L, const struct blob_rec *r, size_t at, const char *field,
			   uint32_t n, uint16_t since, const char *what)
{
	if (L->p->minor >= since || n == 0)
		return 0;
	return blob_fail(L, r, at, field,
			 "The blob is format %u.%u, where this word is reserved and must be 0; it holds %u "
			 "(%s needs format %u.%u).",
			 L->p->major, L->p->minor, n, what, CPOL_VERSION_MAJOR, since);
}

/*
 * A module list of the executor: n names in STRLIST[first, first + n),
 * each held to the compiler's rule again (they become import lines in the
 * loader), none equal to an earlier entry of the executor's runs
 * (STRLIST[0, first + i): a package may not repeat a preload either).  An
 * error names the entry and the offset of its reference.
 */
static int blob_read_modules(struct blob_loader *L, const struct blob_rec *r, size_t at, const char *field,
			     const char *what, const char *table, uint32_t first, uint32_t n, uint32_t max,
			     const char ***out)
{
	*out = NULL;
	if (n > max)
		return blob_fail(L, r, at, field, "The %s list names %u modules; the format allows at most %u.",
				 what, n, max);
	if (n > L->sec[CPOL_SEC_STRLIST].count - first)
		return blob_fail(L, r, at, field,
				 "The %s list of %u entries from entry %u runs past the %u entries of strlist.", what,
				 n, first, L->sec[CPOL_SEC_STRLIST].count);
	for (uint32_t i = 0; i < n; i++) {
		struct blob_rec e;
		const char *name = L->strlist[first + i];

		if (blob_rec_at(L, CPOL_SEC_STRLIST, first + i, &e) < 0)
			return -1;
		e.table = table;
		e.index = i;
		if (!policy_module_name_ok(name))
			return blob_fail(L, &e, 0, "",
					 "\"%s\" is not a module name: dotted identifiers "
					 "([A-Za-z_][A-Za-z0-9_]* joined by '.'), at most %u bytes.",
					 blob_quote(name).s, CPOL_PRELOAD_NAME_MAX);
		/* At most 64 names: the quadratic check costs nothing. */
		for (uint32_t j = 0; j < first + i; j++)
			if (strcmp(L->strlist[j], name) == 0)
				return blob_fail(L, &e, 0, "", "\"%s\" is listed twice (also %s entry %u).",
						 blob_quote(name).s, j < first ? "preload" : "package",
						 j < first ? j : j - first);
	}
	*out = n ? L->strlist + first : NULL;
	return 0;
}

/*
 * executor.preload: a count in the record, the names in STRLIST[0, count)
 * (cpol.h).  A 3.0 blob has none: its word was reserved, and reading it as
 * a count there would give one layout two meanings.
 */
static int blob_read_preload(struct blob_loader *L, const struct blob_rec *r, struct cpol_executor *x)
{
	uint32_t n;

	x->npreload = 0;
	if (blob_u32(L, r, CPOL_EXE_PRELOAD, "preload", &n) < 0)
		return -1;
	if (blob_minor_word(L, r, CPOL_EXE_PRELOAD, "preload", n, CPOL_MINOR_PRELOAD, "a preload list") < 0)
		return -1;
	if (blob_read_modules(L, r, CPOL_EXE_PRELOAD, "preload", "preload", "executor.preload", 0, n,
			      CPOL_MAX_PRELOAD, &x->preload) < 0)
		return -1;
	x->npreload = n;
	return 0;
}

/*
 * executor.packages: present exactly when the record is the 3.4 one (the
 * table check let 56 bytes through only in a blob of minor >= 4).  One
 * layout per meaning: a long record with no packages would be a second
 * spelling of "none", so a count of 0 is refused, as is a reserved word
 * that is not 0.  The run follows the preload run.
 */
static int blob_read_packages(struct blob_loader *L, const struct blob_rec *r, struct cpol_executor *x)
{
	uint32_t n;

	x->packages = NULL;
	x->npackages = 0;
	if (r->size == CPOL_EXECUTOR_BYTES)
		return 0;
	if (blob_u32(L, r, CPOL_EXE_PACKAGES, "packages", &n) < 0)
		return -1;
	if (n == 0)
		return blob_fail(L, r, CPOL_EXE_PACKAGES, "packages",
				 "The package list is empty; a blob without packages has the %u-byte record.",
				 CPOL_EXECUTOR_BYTES);
	if (blob_read_modules(L, r, CPOL_EXE_PACKAGES, "packages", "package", "executor.packages", x->npreload, n,
			      CPOL_MAX_PACKAGES, &x->packages) < 0 ||
	    blob_zero32(L, r, CPOL_EXE_PKG_RESERVED, "reserved") < 0)
		return -1;
	x->npackages = n;
	return 0;
}

static int blob_read_executor(struct blob_loader *L)
{
	struct cpol_executor *x = &L->p->exec;
	struct blob_rec r;

	if (blob_rec_at(L, CPOL_SEC_EXECUTOR, 0, &r) < 0)
		return -1;
	r.index = CPOL_NONE;
	if (blob_str(L, &r, CPOL_EXE_INTERPRETER, "interpreter", &x->interpreter) < 0 ||
	    blob_u32(L, &r, CPOL_EXE_UID, "uid", &x->uid) < 0 ||
	    blob_u32(L, &r, CPOL_EXE_GID, "gid", &x->gid) < 0 ||
	    blob_u32(L, &r, CPOL_EXE_NETWORK, "network", &x->network) < 0 ||
	    blob_u32(L, &r, CPOL_EXE_FLAGS, "flags", &x->flags) < 0 ||
	    blob_u32(L, &r, CPOL_EXE_REQUIRE, "require", &x->require) < 0)
		return -1;
	if (x->network != CPOL_NET_NONE && x->network != CPOL_NET_LOOPBACK)
		return blob_fail(L, &r, CPOL_EXE_NETWORK, "network",
				 "Network mode %u is not a known mode.", x->network);
	if (x->flags & ~CPOL_EXE_F_ALL)
		return blob_fail(L, &r, CPOL_EXE_FLAGS, "flags",
				 "Flags 0x%x include bits this format does not define.", x->flags);
	if (x->require & ~CPOL_LAYER_ALL)
		return blob_fail(L, &r, CPOL_EXE_REQUIRE, "require",
				 "Required layers 0x%x include bits this format does not define.",
				 x->require);
	if (blob_read_preload(L, &r, x) < 0 || blob_read_packages(L, &r, x) < 0 ||
	    blob_str(L, &r, CPOL_EXE_SECCOMP_PROFILE, "seccomp_profile", &x->seccomp_profile) < 0 ||
	    blob_str(L, &r, CPOL_EXE_SECCOMP_EXTRA, "seccomp_extra", &x->seccomp_extra) < 0)
		return -1;
	return 0;
}

/* ---- sorted tables ----------------------------------------------------- */

/* Strictly ascending by strcmp.  Keys in one table start at distinct
 * string-table entries until two are equal (and then we stop), so the
 * comparisons of one pass cost at most the table size in total. */
static int blob_check_order(struct blob_loader *L, const struct blob_rec *r, size_t at,
			    const char *field, const char *prev, const char *cur)
{
	int c;

	if (prev == NULL)
		return 0;
	c = strcmp(prev, cur);
	if (c == 0)
		return blob_fail(L, r, at, field, "\"%s\" appears twice; the table must be unique.",
				 blob_quote(cur).s);
	if (c > 0)
		return blob_fail(L, r, at, field,
				 "\"%s\" comes after \"%s\"; the table must be sorted by %s.",
				 blob_quote(cur).s, blob_quote(prev).s, field);
	return 0;
}

static int blob_nonempty(struct blob_loader *L, const struct blob_rec *r, size_t at,
			 const char *field, const char *s)
{
	if (s[0] == '\0')
		return blob_fail(L, r, at, field, "The %s is empty.", field);
	return 0;
}

static int blob_read_env(struct blob_loader *L)
{
	struct cpol_policy *p = L->p;
	uint32_t n = L->sec[CPOL_SEC_ENV].count;
	struct blob_rec r = { NULL, 0, L->sec[CPOL_SEC_ENV].off, "env", CPOL_NONE };
	void *v;

	if (blob_alloc(L, &r, n, sizeof(*p->env), &v) < 0)
		return -1;
	p->env = v;
	p->nenv = n;
	for (uint32_t i = 0; i < n; i++) {
		struct cpol_env *e = &p->env[i];

		if (blob_rec_at(L, CPOL_SEC_ENV, i, &r) < 0 ||
		    blob_str(L, &r, CPOL_ENV_KEY, "key", &e->key) < 0 ||
		    blob_str(L, &r, CPOL_ENV_VALUE, "value", &e->value) < 0 ||
		    blob_nonempty(L, &r, CPOL_ENV_KEY, "key", e->key) < 0)
			return -1;
		/* execve() splits "KEY=VALUE" at the first '='. */
		if (strchr(e->key, '=') != NULL)
			return blob_fail(L, &r, CPOL_ENV_KEY, "key",
					 "The variable name \"%s\" contains '='.", blob_quote(e->key).s);
		if (blob_check_order(L, &r, CPOL_ENV_KEY, "key", i ? p->env[i - 1].key : NULL,
				     e->key) < 0)
			return -1;
	}
	return 0;
}

static int blob_read_mounts(struct blob_loader *L)
{
	struct cpol_policy *p = L->p;
	uint32_t n = L->sec[CPOL_SEC_MOUNTS].count;
	struct blob_rec r = { NULL, 0, L->sec[CPOL_SEC_MOUNTS].off, "mounts", CPOL_NONE };
	void *v;

	if (blob_alloc(L, &r, n, sizeof(*p->mounts), &v) < 0)
		return -1;
	p->mounts = v;
	p->nmounts = n;
	for (uint32_t i = 0; i < n; i++) {
		struct cpol_mount *m = &p->mounts[i];

		if (blob_rec_at(L, CPOL_SEC_MOUNTS, i, &r) < 0 ||
		    blob_u32(L, &r, CPOL_MNT_TYPE, "type", &m->type) < 0 ||
		    blob_u32(L, &r, CPOL_MNT_FLAGS, "flags", &m->flags) < 0 ||
		    blob_str(L, &r, CPOL_MNT_SOURCE, "source", &m->source) < 0 ||
		    blob_str(L, &r, CPOL_MNT_TARGET, "target", &m->target) < 0 ||
		    blob_u64(L, &r, CPOL_MNT_SIZE, "size", &m->size) < 0)
			return -1;
		if (m->type != CPOL_MOUNT_BIND && m->type != CPOL_MOUNT_TMPFS)
			return blob_fail(L, &r, CPOL_MNT_TYPE, "type", "Mount type %u is not known.",
					 m->type);
		if (m->flags & ~CPOL_MNT_F_ALL)
			return blob_fail(L, &r, CPOL_MNT_FLAGS, "flags",
					 "Flags 0x%x include bits this format does not define.", m->flags);
		if (m->target[0] != '/')
			return blob_fail(L, &r, CPOL_MNT_TARGET, "target",
					 "The mount target \"%s\" is not an absolute path.", blob_quote(m->target).s);
		if (m->type == CPOL_MOUNT_TMPFS) {
			if (m->source[0] != '\0')
				return blob_fail(L, &r, CPOL_MNT_SOURCE, "source",
						 "A tmpfs mount has no source, but this one names \"%s\".",
						 blob_quote(m->source).s);
			if (m->size == 0)
				return blob_fail(L, &r, CPOL_MNT_SIZE, "size",
						 "A tmpfs mount needs a size above 0.");
		} else {
			if (m->source[0] != '/')
				return blob_fail(L, &r, CPOL_MNT_SOURCE, "source",
						 "A bind mount's source \"%s\" must be an absolute path.",
						 blob_quote(m->source).s);
			if (m->size != 0)
				return blob_fail(L, &r, CPOL_MNT_SIZE, "size",
						 "A bind mount has no size, but this one says %llu.",
						 (unsigned long long)m->size);
		}
		if (blob_check_order(L, &r, CPOL_MNT_TARGET, "target",
				     i ? p->mounts[i - 1].target : NULL, m->target) < 0)
			return -1;
	}
	return 0;
}

static int blob_read_seccomp(struct blob_loader *L)
{
	struct cpol_policy *p = L->p;
	uint32_t n = L->sec[CPOL_SEC_SECCOMP].count;
	struct blob_rec r = { NULL, 0, L->sec[CPOL_SEC_SECCOMP].off, "seccomp", CPOL_NONE };
	void *v;

	if (blob_alloc(L, &r, n, sizeof(*p->seccomp), &v) < 0)
		return -1;
	p->seccomp = v;
	p->nseccomp = n;
	for (uint32_t i = 0; i < n; i++) {
		struct cpol_bpf *f = &p->seccomp[i];
		uint64_t code, jt, jf, k;

		if (blob_rec_at(L, CPOL_SEC_SECCOMP, i, &r) < 0 ||
		    blob_get(L, &r, CPOL_BPF_CODE, 2, "code", &code) < 0 ||
		    blob_get(L, &r, CPOL_BPF_JT, 1, "jt", &jt) < 0 ||
		    blob_get(L, &r, CPOL_BPF_JF, 1, "jf", &jf) < 0 ||
		    blob_get(L, &r, CPOL_BPF_K, 4, "k", &k) < 0)
			return -1;
		f->code = (uint16_t)code;
		f->jt = (uint8_t)jt;
		f->jf = (uint8_t)jf;
		f->k = (uint32_t)k;
	}
	/* The kernel verifies the program when it is loaded, but that is
	 * after the sandbox is half built and it says only EINVAL; checking
	 * by the kernel's rules here refuses a bad program up front, by
	 * instruction.  An empty section is a blob without a filter, which
	 * the launcher must refuse to run (no silent downgrade). */
	if (n > 0) {
		uint32_t bad = 0;
		const char *why = NULL;

		if (bpf_check(p->seccomp, n, &bad, &why) != 0) {
			if (bad >= n)
				bad = n - 1;
			if (blob_rec_at(L, CPOL_SEC_SECCOMP, bad, &r) < 0)
				return -1;
			return blob_fail(L, &r, CPOL_BPF_CODE, "code", "The seccomp program is invalid: %s.",
					 why ? why : "refused");
		}
	}
	return 0;
}

/* A user name as the compiler takes it: [a-z_][a-z0-9_-]*, at most
 * CPOL_USER_NAME_MAX bytes. */
static int blob_user_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > CPOL_USER_NAME_MAX || !((s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
		return 0;
	for (size_t i = 1; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-'))
			return 0;
	return 1;
}

/*
 * A tool's identity.  Each kind uses only its own fields and the others
 * are zero (one layout per meaning).  Root is refused in every spelling
 * the blob can hold: uid or gid 0, and the name "root"; ~0 is "leave
 * unchanged" to setresuid(), never an identity.  A name that resolves to
 * uid 0 on the host is the supervisor's to refuse at run time.
 */
static int blob_read_run_as(struct blob_loader *L, const struct blob_rec *r, struct cpol_tool *t)
{
	if (blob_u32(L, r, CPOL_TOOL_RUN_AS, "run_as", &t->run_as) < 0 ||
	    blob_u32(L, r, CPOL_TOOL_RUN_UID, "run_uid", &t->run_uid) < 0 ||
	    blob_u32(L, r, CPOL_TOOL_RUN_GID, "run_gid", &t->run_gid) < 0 ||
	    blob_str(L, r, CPOL_TOOL_RUN_USER, "run_user", &t->run_user) < 0)
		return -1;
	if (t->run_as > CPOL_RUN_AS_LAST)
		return blob_fail(L, r, CPOL_TOOL_RUN_AS, "run_as", "Identity kind %u is not a known kind.",
				 t->run_as);
	if (t->run_as == CPOL_RUN_AS_IDS) {
		if (t->run_uid == 0 || t->run_uid == UINT32_MAX)
			return blob_fail(L, r, CPOL_TOOL_RUN_UID, "run_uid",
					 "The tool's uid is %u; a tool never runs as root or as uid %u.", t->run_uid,
					 UINT32_MAX);
		if (t->run_gid == 0 || t->run_gid == UINT32_MAX)
			return blob_fail(L, r, CPOL_TOOL_RUN_GID, "run_gid",
					 "The tool's gid is %u; a tool never runs with gid 0 or %u.", t->run_gid,
					 UINT32_MAX);
	} else if (t->run_uid != 0) {
		return blob_fail(L, r, CPOL_TOOL_RUN_UID, "run_uid",
				 "The uid is %u, but the identity kind %s takes none; it must be 0.", t->run_uid,
				 policy_run_as_name(t->run_as));
	} else if (t->run_gid != 0) {
		return blob_fail(L, r, CPOL_TOOL_RUN_GID, "run_gid",
				 "The gid is %u, but the identity kind %s takes none; it must be 0.", t->run_gid,
				 policy_run_as_name(t->run_as));
	}
	if (t->run_as == CPOL_RUN_AS_USER) {
		if (!blob_user_name_ok(t->run_user) || strcmp(t->run_user, "root") == 0)
			return blob_fail(L, r, CPOL_TOOL_RUN_USER, "run_user",
					 "\"%s\" is not a user name a tool may run as ([a-z_][a-z0-9_-]*, at most %u bytes, not root).",
					 blob_quote(t->run_user).s, CPOL_USER_NAME_MAX);
	} else if (t->run_user[0] != '\0') {
		return blob_fail(L, r, CPOL_TOOL_RUN_USER, "run_user",
				 "A user name is given, but the identity kind %s takes none.",
				 policy_run_as_name(t->run_as));
	}
	return 0;
}

/* tools[i].returns: 0, or 1 + a PARAMS index (cpol.h).  Who owns that
 * param, and that it is an unnamed spec, is blob_check_forest()'s. */
static int blob_read_returns(struct blob_loader *L, const struct blob_rec *r, struct cpol_tool *t)
{
	uint32_t n;

	if (blob_u32(L, r, CPOL_TOOL_RETURNS, "returns", &n) < 0 ||
	    blob_minor_word(L, r, CPOL_TOOL_RETURNS, "returns", n, CPOL_MINOR_RETURNS, "a result schema") < 0)
		return -1;
	if (n != 0 && n - 1 >= L->sec[CPOL_SEC_PARAMS].count)
		return blob_fail(L, r, CPOL_TOOL_RETURNS, "returns",
				 "The result's spec is parameter %u, past the %u entries of params.", n - 1,
				 L->sec[CPOL_SEC_PARAMS].count);
	t->returns = n;
	return 0;
}

static int blob_read_tools(struct blob_loader *L)
{
	struct cpol_policy *p = L->p;
	uint32_t n = L->sec[CPOL_SEC_TOOLS].count;
	struct blob_rec r = { NULL, 0, L->sec[CPOL_SEC_TOOLS].off, "tools", CPOL_NONE };
	void *v;

	if (blob_alloc(L, &r, n, sizeof(*p->tools), &v) < 0)
		return -1;
	p->tools = v;
	p->ntools = n;
	for (uint32_t i = 0; i < n; i++) {
		struct cpol_tool *t = &p->tools[i];

		if (blob_rec_at(L, CPOL_SEC_TOOLS, i, &r) < 0 ||
		    blob_str(L, &r, CPOL_TOOL_ID, "id", &t->id) < 0 ||
		    blob_nonempty(L, &r, CPOL_TOOL_ID, "id", t->id) < 0 ||
		    blob_check_order(L, &r, CPOL_TOOL_ID, "id", i ? p->tools[i - 1].id : NULL,
				     t->id) < 0 ||
		    blob_str(L, &r, CPOL_TOOL_DESCRIPTION, "description", &t->description) < 0 ||
		    blob_u32(L, &r, CPOL_TOOL_FLAGS, "flags", &t->flags) < 0 ||
		    blob_u32(L, &r, CPOL_TOOL_MAX_CALLS, "max_calls", &t->max_calls) < 0 ||
		    blob_u64(L, &r, CPOL_TOOL_TIMEOUT_MS, "timeout_ms", &t->timeout_ms) < 0)
			return -1;
		if (t->flags & ~CPOL_TOOL_F_ALL)
			return blob_fail(L, &r, CPOL_TOOL_FLAGS, "flags",
					 "Flags 0x%x include bits this format does not define.", t->flags);
		/* Replaying a call only makes sense for one that changes the
		 * world; a pure tool is simply called again. */
		if ((t->flags & CPOL_TOOL_F_REPLAY) && !(t->flags & CPOL_TOOL_F_SIDE_EFFECT))
			return blob_fail(L, &r, CPOL_TOOL_FLAGS, "flags",
					 "The replay flag is set on a tool without side effects.");
		if (t->timeout_ms == 0)
			return blob_fail(L, &r, CPOL_TOOL_TIMEOUT_MS, "timeout_ms",
					 "The tool's timeout is 0; it must be positive.");
		if (blob_strs(L, &r, CPOL_TOOL_EXEC, "exec", &t->exec) < 0)
			return -1;
		if (t->exec.n == 0)
			return blob_fail(L, &r, CPOL_TOOL_EXEC + 4, "exec.count",
					 "The tool has no command to run.");
		if (t->exec.v[0][0] != '/')
			return blob_fail(L, &r, CPOL_TOOL_EXEC, "exec",
					 "The tool's program \"%s\" is not an absolute path.",
					 blob_quote(t->exec.v[0]).s);
		if (blob_strs(L, &r, CPOL_TOOL_ENV_FROM, "env_from", &t->env_from) < 0 ||
		    blob_strs(L, &r, CPOL_TOOL_ROLES, "roles", &t->roles) < 0 ||
		    blob_list(L, &r, CPOL_TOOL_PARAMS, "params", L->sec[CPOL_SEC_PARAMS].count,
			      "params", &t->params) < 0 ||
		    blob_list(L, &r, CPOL_TOOL_CONSTRAINTS, "constraints",
			      L->sec[CPOL_SEC_CONSTRAINTS].count, "constraints", &t->constraints) < 0 ||
		    blob_u32(L, &r, CPOL_TOOL_MAX_CALLS_PER_DAY, "max_calls_per_day",
			     &t->max_calls_per_day) < 0)
			return -1;
		/* The YAML's bound, checked again: no compile writes more, and
		 * the ledger that counts against it may rely on it. */
		if (t->max_calls_per_day > CPOL_TOOL_MAX_PER_DAY)
			return blob_fail(L, &r, CPOL_TOOL_MAX_CALLS_PER_DAY, "max_calls_per_day",
					 "The daily budget is %u calls; the format allows at most %u.",
					 t->max_calls_per_day, CPOL_TOOL_MAX_PER_DAY);
		if (blob_read_run_as(L, &r, t) < 0 ||
		    blob_limit64(L, &r, CPOL_TOOL_MEMORY_BYTES, "memory_bytes", &t->memory_bytes) < 0 ||
		    blob_limit32(L, &r, CPOL_TOOL_PIDS, "pids", &t->pids) < 0)
			return -1;
		if (t->pids > CPOL_TOOL_MAX_PIDS)
			return blob_fail(L, &r, CPOL_TOOL_PIDS, "pids",
					 "The tool may have %u processes; the format allows at most %u.", t->pids,
					 CPOL_TOOL_MAX_PIDS);
		if (blob_read_returns(L, &r, t) < 0)
			return -1;
	}
	return 0;
}

/* ---- parameters -------------------------------------------------------- */

static int blob_read_bound(struct blob_loader *L, const struct blob_rec *r, struct cpol_param *m,
			   size_t at, const char *field, uint32_t flag, int64_t *iv, double *fv)
{
	uint64_t bits;

	if (blob_u64(L, r, at, field, &bits) < 0)
		return -1;
	if (!(m->flags & flag)) {
		if (bits != 0)
			return blob_fail(L, r, at, field,
					 "The %s field holds a value but its flag is not set; it must be 0.",
					 field);
		return 0;
	}
	if (m->type == CPOL_T_INTEGER) {
		memcpy(iv, &bits, sizeof(*iv));
		return 0;
	}
	memcpy(fv, &bits, sizeof(*fv));
	if (!isfinite(*fv))
		return blob_fail(L, r, at, field,
				 "The %s bound is NaN or infinite (bits 0x%016llx).", field,
				 (unsigned long long)bits);
	return 0;
}

static int blob_read_flagged(struct blob_loader *L, const struct blob_rec *r, uint32_t flags,
			     size_t at, const char *field, uint32_t flag, uint64_t *v)
{
	if (blob_u64(L, r, at, field, v) < 0)
		return -1;
	if (!(flags & flag) && *v != 0)
		return blob_fail(L, r, at, field,
				 "The %s field holds %llu but its flag is not set; it must be 0.", field,
				 (unsigned long long)*v);
	return 0;
}

/* Which flags each type may carry (REQUIRED: any). */
static uint32_t blob_param_flags_for(uint32_t type)
{
	switch (type) {
	case CPOL_T_STRING:
		return CPOL_PRM_F_REQUIRED | CPOL_PRM_F_MIN_LENGTH | CPOL_PRM_F_MAX_LENGTH;
	case CPOL_T_INTEGER:
	case CPOL_T_NUMBER:
		return CPOL_PRM_F_REQUIRED | CPOL_PRM_F_MIN | CPOL_PRM_F_MAX;
	case CPOL_T_ARRAY:
		return CPOL_PRM_F_REQUIRED | CPOL_PRM_F_MAX_ITEMS;
	default:
		return CPOL_PRM_F_REQUIRED;
	}
}

/* One param on its own; how params hang together is blob_check_forest(). */
static int blob_read_param(struct blob_loader *L, uint32_t i, struct cpol_param *m)
{
	uint32_t np = L->sec[CPOL_SEC_PARAMS].count;
	struct blob_rec r;
	struct cpol_range en;
	uint32_t bad;

	if (blob_rec_at(L, CPOL_SEC_PARAMS, i, &r) < 0 ||
	    blob_str(L, &r, CPOL_PRM_NAME, "name", &m->name) < 0 ||
	    blob_u32(L, &r, CPOL_PRM_TYPE, "type", &m->type) < 0 ||
	    blob_u32(L, &r, CPOL_PRM_FLAGS, "flags", &m->flags) < 0)
		return -1;
	if (m->type < CPOL_T_STRING || m->type > CPOL_T_OBJECT)
		return blob_fail(L, &r, CPOL_PRM_TYPE, "type", "Parameter type %u is not known.",
				 m->type);
	if (m->flags & ~CPOL_PRM_F_ALL)
		return blob_fail(L, &r, CPOL_PRM_FLAGS, "flags",
				 "Flags 0x%x include bits this format does not define.", m->flags);
	bad = m->flags & ~blob_param_flags_for(m->type);
	if (bad)
		return blob_fail(L, &r, CPOL_PRM_FLAGS, "flags",
				 "Flags 0x%x do not apply to a parameter of type %s.", bad,
				 policy_type_name(m->type));
	if (blob_read_bound(L, &r, m, CPOL_PRM_MIN, "min", CPOL_PRM_F_MIN, &m->imin, &m->fmin) < 0 ||
	    blob_read_bound(L, &r, m, CPOL_PRM_MAX, "max", CPOL_PRM_F_MAX, &m->imax, &m->fmax) < 0)
		return -1;
	if ((m->flags & CPOL_PRM_F_MIN) && (m->flags & CPOL_PRM_F_MAX)) {
		if (m->type == CPOL_T_INTEGER && m->imin > m->imax)
			return blob_fail(L, &r, CPOL_PRM_MIN, "min",
					 "The minimum %lld is greater than the maximum %lld.",
					 (long long)m->imin, (long long)m->imax);
		if (m->type == CPOL_T_NUMBER && m->fmin > m->fmax)
			return blob_fail(L, &r, CPOL_PRM_MIN, "min",
					 "The minimum %g is greater than the maximum %g.", m->fmin, m->fmax);
	}
	if (blob_read_flagged(L, &r, m->flags, CPOL_PRM_MIN_LENGTH, "min_length",
			      CPOL_PRM_F_MIN_LENGTH, &m->min_length) < 0 ||
	    blob_read_flagged(L, &r, m->flags, CPOL_PRM_MAX_LENGTH, "max_length",
			      CPOL_PRM_F_MAX_LENGTH, &m->max_length) < 0 ||
	    blob_read_flagged(L, &r, m->flags, CPOL_PRM_MAX_ITEMS, "max_items",
			      CPOL_PRM_F_MAX_ITEMS, &m->max_items) < 0)
		return -1;
	if ((m->flags & CPOL_PRM_F_MIN_LENGTH) && (m->flags & CPOL_PRM_F_MAX_LENGTH) &&
	    m->min_length > m->max_length)
		return blob_fail(L, &r, CPOL_PRM_MIN_LENGTH, "min_length",
				 "The minimum length %llu is greater than the maximum length %llu.",
				 (unsigned long long)m->min_length, (unsigned long long)m->max_length);

	if (blob_list(L, &r, CPOL_PRM_ENUM, "enum", L->sec[CPOL_SEC_STRLIST].count, "strlist", &en) <
	    0)
		return -1;
	if (en.count && m->type != CPOL_T_STRING)
		return blob_fail(L, &r, CPOL_PRM_ENUM, "enum",
				 "Only string parameters take an enum; this one is %s.",
				 policy_type_name(m->type));
	if (en.count) {
		m->enums.v = L->strlist + en.first;
		m->enums.n = en.count;
	}

	if (blob_u32(L, &r, CPOL_PRM_ITEMS, "items", &m->items) < 0)
		return -1;
	if (m->type == CPOL_T_ARRAY) {
		/* A child after its parent: the forest cannot loop. */
		if (m->items == CPOL_NONE || m->items >= np || m->items <= i)
			return blob_fail(L, &r, CPOL_PRM_ITEMS, "items",
					 "An array's items spec must be a later parameter (index %u < n < %u); this one says %u.",
					 i, np, m->items);
	} else if (m->items != CPOL_NONE) {
		return blob_fail(L, &r, CPOL_PRM_ITEMS, "items",
				 "Only arrays have an items spec; this %s says %u.",
				 policy_type_name(m->type), m->items);
	}
	if (blob_zero32(L, &r, CPOL_PRM_RESERVED, "reserved") < 0 ||
	    blob_list(L, &r, CPOL_PRM_PROPS, "props", np, "params", &m->props) < 0)
		return -1;
	if (m->props.count && m->type != CPOL_T_OBJECT)
		return blob_fail(L, &r, CPOL_PRM_PROPS + 4, "props.count",
				 "Only objects have properties; this one is %s.",
				 policy_type_name(m->type));
	if (m->props.count && m->props.first <= i)
		return blob_fail(L, &r, CPOL_PRM_PROPS, "props.first",
				 "An object's properties must come after it (index > %u); these start at %u.",
				 i, m->props.first);
	return 0;
}

static int blob_read_params(struct blob_loader *L)
{
	struct cpol_policy *p = L->p;
	uint32_t n = L->sec[CPOL_SEC_PARAMS].count;
	struct blob_rec r = { NULL, 0, L->sec[CPOL_SEC_PARAMS].off, "params", CPOL_NONE };
	void *v;

	if (blob_alloc(L, &r, n, sizeof(*p->params), &v) < 0)
		return -1;
	p->params = v;
	p->nparams = n;
	for (uint32_t i = 0; i < n; i++)
		if (blob_read_param(L, i, &p->params[i]) < 0)
			return -1;
	return 0;
}

/* Comparison for the merge sort below, with its context. */
struct blob_sort {
	int (*cmp)(const struct blob_sort *s, uint32_t a, uint32_t b);
	const struct cpol_param *params;
	const char *strtab;
	const uint32_t *offs;
};

/* Bottom-up merge sort of v[0..n) with tmp[n]: O(n log n) comparisons, and
 * each merge comparison is charged to the element it outputs, which is what
 * bounds the cost of sorting strings in blob_rank_names(). */
static void blob_sort_idx(uint32_t *v, uint32_t *tmp, uint32_t n, const struct blob_sort *s)
{
	uint32_t *src = v, *dst = tmp;

	for (uint64_t w = 1; w < n; w *= 2) {
		for (uint64_t lo = 0; lo < n; lo += 2 * w) {
			uint64_t mid = lo + w < n ? lo + w : n;
			uint64_t hi = lo + 2 * w < n ? lo + 2 * w : n;
			uint64_t a = lo, b = mid, k = lo;

			while (a < mid && b < hi)
				dst[k++] = s->cmp(s, src[b], src[a]) < 0 ? src[b++] : src[a++];
			while (a < mid)
				dst[k++] = src[a++];
			while (b < hi)
				dst[k++] = src[b++];
		}
		uint32_t *t = src;
		src = dst;
		dst = t;
	}
	if (src != v)
		memcpy(v, src, (size_t)n * sizeof(*v));
}

static int blob_cmp_name_off(const struct blob_sort *s, uint32_t a, uint32_t b)
{
	const char *x = s->params[a].name, *y = s->params[b].name;

	return x < y ? -1 : x > y;
}

static int blob_cmp_text(const struct blob_sort *s, uint32_t a, uint32_t b)
{
	return strcmp(s->strtab + s->offs[a], s->strtab + s->offs[b]);
}

/*
 * rank[i] orders params by name: equal names, equal ranks.  Checking runs
 * with strcmp directly would cost (number of runs) x (name length) when
 * many objects share long, similar names; ranking first touches each
 * distinct name O(log n) times, and distinct names start at distinct
 * string-table entries, so the total is O(strtab size x log n).
 */
static int blob_rank_names(struct blob_loader *L, uint32_t *rank)
{
	const struct cpol_policy *p = L->p;
	uint32_t n = p->nparams, m = 0;
	uint32_t *byoff = malloc((size_t)n * sizeof(uint32_t));
	uint32_t *tmp = malloc((size_t)n * sizeof(uint32_t));
	uint32_t *offs = malloc((size_t)n * sizeof(uint32_t));
	uint32_t *dist = malloc((size_t)n * sizeof(uint32_t)); /* param -> distinct name */
	uint32_t *order = malloc((size_t)n * sizeof(uint32_t));
	uint32_t *drank = malloc((size_t)n * sizeof(uint32_t));
	struct blob_sort s = { blob_cmp_name_off, p->params, L->strtab, NULL };
	int rc = -1;

	if (!byoff || !tmp || !offs || !dist || !order || !drank) {
		struct blob_rec r = { NULL, 0, L->sec[CPOL_SEC_PARAMS].off, "params", CPOL_NONE };

		blob_fail(L, &r, 0, "", "Out of memory while checking parameter names.");
		goto out;
	}
	for (uint32_t i = 0; i < n; i++)
		byoff[i] = i;
	blob_sort_idx(byoff, tmp, n, &s);
	for (uint32_t i = 0; i < n; i++) {
		const char *name = p->params[byoff[i]].name;

		if (m == 0 || L->strtab + offs[m - 1] != name)
			offs[m++] = (uint32_t)(name - L->strtab);
		dist[byoff[i]] = m - 1;
	}
	for (uint32_t j = 0; j < m; j++)
		order[j] = j;
	s.cmp = blob_cmp_text;
	s.offs = offs;
	blob_sort_idx(order, tmp, m, &s);
	for (uint32_t j = 0, r = 0; j < m; j++) {
		if (j > 0 && strcmp(L->strtab + offs[order[j - 1]], L->strtab + offs[order[j]]) != 0)
			r++;
		drank[order[j]] = r;
	}
	for (uint32_t i = 0; i < n; i++)
		rank[i] = drank[dist[i]];
	rc = 0;
out:
	free(byoff);
	free(tmp);
	free(offs);
	free(dist);
	free(order);
	free(drank);
	return rc;
}

/* Take ownership of a run of params for one owner (a tool or an object,
 * whose record and field name the run): each param has exactly one owner,
 * and siblings have non-empty names in strictly ascending order. */
static int blob_own_run(struct blob_loader *L, const struct blob_rec *owner, size_t at,
			const char *field, struct cpol_range run, uint8_t *owned,
			const uint32_t *rank)
{
	const struct cpol_param *pr = L->p->params;

	for (uint32_t k = run.first; k < run.first + run.count; k++) {
		struct blob_rec r;

		if (owned[k])
			return blob_fail(L, owner, at, field,
					 "Parameter %u already belongs to another tool, object or array.",
					 k);
		owned[k] = 1;
		if (blob_rec_at(L, CPOL_SEC_PARAMS, k, &r) < 0 ||
		    blob_nonempty(L, &r, CPOL_PRM_NAME, "name", pr[k].name) < 0)
			return -1;
		if (k > run.first && rank[k] == rank[k - 1])
			return blob_fail(L, &r, CPOL_PRM_NAME, "name",
					 "The name \"%s\" appears twice among its siblings.",
					 blob_quote(pr[k].name).s);
		if (k > run.first && rank[k] < rank[k - 1])
			return blob_fail(L, &r, CPOL_PRM_NAME, "name",
					 "The name \"%s\" comes after \"%s\"; siblings must be sorted by name.",
					 blob_quote(pr[k].name).s, blob_quote(pr[k - 1].name).s);
	}
	return 0;
}

/* An unnamed spec, owned alone: an array's items (at the owner's field
 * "items"), or a tool's result (its field "returns").  Neither has a name
 * nor can be 'required': each describes a value that is always there. */
static int blob_own_unnamed(struct blob_loader *L, const struct blob_rec *owner, size_t at, const char *field,
			    const char *what, uint32_t k, uint8_t *owned)
{
	struct blob_rec r;

	if (owned[k])
		return blob_fail(L, owner, at, field,
				 "Parameter %u already belongs to another tool, object or array.", k);
	owned[k] = 1;
	if (L->p->params[k].name[0] == '\0' && !(L->p->params[k].flags & CPOL_PRM_F_REQUIRED))
		return 0;
	if (blob_rec_at(L, CPOL_SEC_PARAMS, k, &r) < 0)
		return -1;
	if (L->p->params[k].name[0] == '\0')
		return blob_fail(L, &r, CPOL_PRM_FLAGS, "flags", "%s cannot be 'required': it is always there.",
				 what);
	return blob_fail(L, &r, CPOL_PRM_NAME, "name", "%s has no name, but this one is \"%s\".", what,
			 blob_quote(L->p->params[k].name).s);
}

/* Nesting depth: a parent comes before its children, so one pass in index
 * order sees every parent's depth before its children need it.  Bounded so
 * that code walking a signature recursively (the bridge's validator, the
 * stub generator) has a known stack cost. */
static int blob_set_depth(struct blob_loader *L, const struct blob_rec *owner, uint32_t first, uint32_t count,
			  uint8_t parent_depth, uint8_t *depth)
{
	if (count == 0)
		return 0;
	if (parent_depth >= CPOL_MAX_PARAM_DEPTH)
		return blob_fail(L, owner, 0, "",
				 "Parameters nest deeper than %u levels.", (unsigned)CPOL_MAX_PARAM_DEPTH);
	for (uint32_t k = first; k < first + count; k++)
		depth[k] = (uint8_t)(parent_depth + 1);
	return 0;
}

/*
 * The parameter forest: every param is owned exactly once, by a tool's
 * run or result spec, an object's props run or an array's items, and every child comes
 * after its parent (checked per param).  With both, following owners always
 * ends at a tool, so walks over the params terminate.
 */
static int blob_check_forest(struct blob_loader *L)
{
	const struct cpol_policy *p = L->p;
	uint32_t n = p->nparams;
	uint8_t *owned = NULL, *depth = NULL;
	uint32_t *rank = NULL;
	struct blob_rec r;
	int rc = -1;

	if (n == 0)
		return 0;
	owned = calloc(n, 1);
	depth = calloc(n, 1);
	rank = calloc(n, sizeof(*rank));
	if (owned == NULL || depth == NULL || rank == NULL) {
		struct blob_rec s = { NULL, 0, L->sec[CPOL_SEC_PARAMS].off, "params", CPOL_NONE };

		blob_fail(L, &s, 0, "", "Out of memory while checking parameters.");
		goto out;
	}
	if (blob_rank_names(L, rank) < 0)
		goto out;
	for (uint32_t t = 0; t < p->ntools; t++)
		if (blob_rec_at(L, CPOL_SEC_TOOLS, t, &r) < 0 ||
		    blob_own_run(L, &r, CPOL_TOOL_PARAMS, "params", p->tools[t].params, owned,
				 rank) < 0 ||
		    blob_set_depth(L, &r, p->tools[t].params.first, p->tools[t].params.count, 0, depth) < 0 ||
		    (p->tools[t].returns != 0 &&
		     (blob_own_unnamed(L, &r, CPOL_TOOL_RETURNS, "returns", "A tool's result spec",
				       p->tools[t].returns - 1, owned) < 0 ||
		      blob_set_depth(L, &r, p->tools[t].returns - 1, 1, 0, depth) < 0)))
			goto out;
	for (uint32_t i = 0; i < n; i++) {
		const struct cpol_param *m = &p->params[i];

		if (blob_rec_at(L, CPOL_SEC_PARAMS, i, &r) < 0 ||
		    blob_own_run(L, &r, CPOL_PRM_PROPS, "props", m->props, owned, rank) < 0 ||
		    (m->type == CPOL_T_ARRAY &&
		     blob_own_unnamed(L, &r, CPOL_PRM_ITEMS, "items", "An array's items spec", m->items, owned) < 0))
			goto out;
		/* An unowned param has depth 0 here and is refused below. */
		if (blob_set_depth(L, &r, m->props.first, m->props.count, depth[i], depth) < 0 ||
		    (m->type == CPOL_T_ARRAY && blob_set_depth(L, &r, m->items, 1, depth[i], depth) < 0))
			goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (owned[i])
			continue;
		if (blob_rec_at(L, CPOL_SEC_PARAMS, i, &r) == 0)
			blob_fail(L, &r, 0, "", "No tool, object or array refers to this parameter.");
		goto out;
	}
	rc = 0;
out:
	free(owned);
	free(depth);
	free(rank);
	return rc;
}

/* ---- constraint bytecode ----------------------------------------------- */

/* Which operand fields each op uses (cpol.h, enum cpol_op): the rest must
 * be zero, so a program has one byte layout and no field hides data. */
#define INSN_USES_A 0x1u
#define INSN_USES_B 0x2u
#define TYPEBIT(t) (1u << (t))

static uint32_t blob_insn_uses(uint8_t op)
{
	switch (op) {
	case CPOL_OP_PARAM:
	case CPOL_OP_HAS:
	case CPOL_OP_BOOL:
	case CPOL_OP_JF:
	case CPOL_OP_JT:
		return INSN_USES_A;
	case CPOL_OP_INT:
	case CPOL_OP_NUM:
	case CPOL_OP_STR:
	case CPOL_OP_IN:
	case CPOL_OP_STARTS_WITH:
	case CPOL_OP_ENDS_WITH:
		return INSN_USES_B;
	default:
		return 0;
	}
}

/* Bit (1 << type) for every type byte an op may carry; bit 0 is "no type". */
static uint32_t blob_insn_types(uint8_t op)
{
	switch (op) {
	case CPOL_OP_PARAM:
		return TYPEBIT(CPOL_T_STRING) | TYPEBIT(CPOL_T_INTEGER) | TYPEBIT(CPOL_T_NUMBER) |
		       TYPEBIT(CPOL_T_BOOLEAN) | TYPEBIT(CPOL_T_ARRAY);
	case CPOL_OP_LEN:
		return TYPEBIT(CPOL_T_STRING) | TYPEBIT(CPOL_T_ARRAY);
	case CPOL_OP_EQ:
	case CPOL_OP_NE:
		return TYPEBIT(CPOL_T_STRING) | TYPEBIT(CPOL_T_INTEGER) | TYPEBIT(CPOL_T_NUMBER) |
		       TYPEBIT(CPOL_T_BOOLEAN);
	case CPOL_OP_LT:
	case CPOL_OP_LE:
	case CPOL_OP_GT:
	case CPOL_OP_GE:
		return TYPEBIT(CPOL_T_INTEGER) | TYPEBIT(CPOL_T_NUMBER);
	default:
		return TYPEBIT(0);
	}
}

/*
 * Each instruction on its own: a known op, a type byte the op takes, zero
 * reserved and unused fields, and operands that are well formed (a finite
 * number, a valid string reference, a non-empty string list).  What needs
 * the program around it (jumps, stack, param indices) is
 * constraint_verify()'s.
 */
static int blob_read_insn(struct blob_loader *L, uint32_t i, struct cpol_insn *in)
{
	struct blob_rec r;
	uint64_t op, type, res, b;
	uint32_t uses;
	struct cpol_range g;

	if (blob_rec_at(L, CPOL_SEC_CONSTRAINTS, i, &r) < 0 ||
	    blob_get(L, &r, CPOL_INSN_OP, 1, "op", &op) < 0 ||
	    blob_get(L, &r, CPOL_INSN_TYPE, 1, "type", &type) < 0 ||
	    blob_get(L, &r, CPOL_INSN_RESERVED, 2, "reserved", &res) < 0 ||
	    blob_u32(L, &r, CPOL_INSN_A, "a", &in->a) < 0 ||
	    blob_u64(L, &r, CPOL_INSN_B, "b", &b) < 0)
		return -1;
	if (op < CPOL_OP_RET || op > CPOL_OP_LAST)
		return blob_fail(L, &r, CPOL_INSN_OP, "op", "Opcode %u is not known.", (unsigned)op);
	in->op = (uint8_t)op;
	if (type > 31 || !(blob_insn_types(in->op) & TYPEBIT(type)))
		return blob_fail(L, &r, CPOL_INSN_TYPE, "type", "Opcode %u does not take type %u.",
				 (unsigned)op, (unsigned)type);
	in->type = (uint8_t)type;
	if (res != 0)
		return blob_fail(L, &r, CPOL_INSN_RESERVED, "reserved",
				 "This reserved field holds %u; it must be 0.", (unsigned)res);
	uses = blob_insn_uses(in->op);
	if (!(uses & INSN_USES_A) && in->a != 0)
		return blob_fail(L, &r, CPOL_INSN_A, "a", "Opcode %u has no operand a; it must be 0, not %u.",
				 (unsigned)op, in->a);
	if (!(uses & INSN_USES_B) && b != 0)
		return blob_fail(L, &r, CPOL_INSN_B, "b", "Opcode %u has no operand b; it must be 0.",
				 (unsigned)op);
	switch (in->op) {
	case CPOL_OP_BOOL:
		if (in->a > 1)
			return blob_fail(L, &r, CPOL_INSN_A, "a", "A boolean is 0 or 1, not %u.", in->a);
		break;
	case CPOL_OP_INT:
		in->ival = (int64_t)b;
		break;
	case CPOL_OP_NUM:
		memcpy(&in->fval, &b, sizeof(in->fval));
		if (!isfinite(in->fval))
			return blob_fail(L, &r, CPOL_INSN_B, "b", "The number is NaN or infinite (bits 0x%016llx).",
					 (unsigned long long)b);
		break;
	case CPOL_OP_STR:
	case CPOL_OP_STARTS_WITH:
	case CPOL_OP_ENDS_WITH:
		if (blob_str(L, &r, CPOL_INSN_B, "b", &in->str) < 0)
			return -1;
		in->len = (uint32_t)(b >> 32);
		break;
	case CPOL_OP_IN:
		if (blob_list(L, &r, CPOL_INSN_B, "b", L->sec[CPOL_SEC_STRLIST].count, "strlist", &g) < 0)
			return -1;
		if (g.count == 0)
			return blob_fail(L, &r, CPOL_INSN_B + 4, "b.count", "An 'in' list holds at least one string.");
		in->list.v = L->strlist + g.first;
		in->list.n = g.count;
		break;
	default:
		break;
	}
	return 0;
}

static int blob_read_constraints(struct blob_loader *L)
{
	struct cpol_policy *p = L->p;
	uint32_t n = L->sec[CPOL_SEC_CONSTRAINTS].count;
	struct blob_rec r = { NULL, 0, L->sec[CPOL_SEC_CONSTRAINTS].off, "constraints", CPOL_NONE };
	void *v;

	if (blob_alloc(L, &r, n, sizeof(*p->constraints), &v) < 0)
		return -1;
	p->constraints = v;
	p->nconstraints = n;
	for (uint32_t i = 0; i < n; i++)
		if (blob_read_insn(L, i, &p->constraints[i]) < 0)
			return -1;
	return 0;
}

/* ---- the rest ---------------------------------------------------------- */

/*
 * An agent's session limits: present exactly when the records are the 3.6
 * ones.  flags 0 is "no sessions", and then every field is 0 (one layout
 * per meaning); with the flag every field is in the YAML's bounds, and the
 * idle expiry is at most the lifetime.  *any counts agents with the flag:
 * a blob of long records where none has it is refused by the caller.
 */
static int blob_read_session(struct blob_loader *L, const struct blob_rec *r, struct cpol_session *s,
			     uint32_t *any)
{
	memset(s, 0, sizeof(*s));
	if (r->size == CPOL_AGENT_BYTES)
		return 0;
	if (blob_u32(L, r, CPOL_AGT_SESSION_FLAGS, "session_flags", &s->flags) < 0 ||
	    blob_u32(L, r, CPOL_AGT_SESSION_MAX_CELLS, "session_max_cells", &s->max_cells) < 0 ||
	    blob_u64(L, r, CPOL_AGT_SESSION_IDLE_MS, "session_idle_ms", &s->idle_ms) < 0 ||
	    blob_u64(L, r, CPOL_AGT_SESSION_LIFE_MS, "session_lifetime_ms", &s->life_ms) < 0 ||
	    blob_u64(L, r, CPOL_AGT_SESSION_CPU_MS, "session_cpu_ms", &s->cpu_ms) < 0 ||
	    blob_u64(L, r, CPOL_AGT_SESSION_WS_BYTES, "session_workspace_bytes", &s->ws_bytes) < 0)
		return -1;
	if (s->flags & ~CPOL_AGT_F_ALL)
		return blob_fail(L, r, CPOL_AGT_SESSION_FLAGS, "session_flags",
				 "Unknown session flag bits 0x%x.", s->flags & ~CPOL_AGT_F_ALL);
	if (!(s->flags & CPOL_AGT_F_SESSION)) {
		if (s->max_cells != 0 || s->idle_ms != 0 || s->life_ms != 0 || s->cpu_ms != 0 || s->ws_bytes != 0)
			return blob_fail(L, r, CPOL_AGT_SESSION_MAX_CELLS, "session",
					 "The agent holds no sessions (flags 0), yet its session limits are not all 0.");
		return 0;
	}
	(*any)++;
	if (s->max_cells == 0 || s->max_cells > CPOL_SESSION_MAX_CELLS)
		return blob_fail(L, r, CPOL_AGT_SESSION_MAX_CELLS, "session_max_cells",
				 "A session may run %u cells; the format allows 1 to %u.", s->max_cells,
				 CPOL_SESSION_MAX_CELLS);
	if (s->life_ms < CPOL_SESSION_MIN_MS || s->life_ms > CPOL_SESSION_MAX_LIFE_MS)
		return blob_fail(L, r, CPOL_AGT_SESSION_LIFE_MS, "session_lifetime_ms",
				 "A session may live %llu ms; the format allows %u to %llu.",
				 (unsigned long long)s->life_ms, CPOL_SESSION_MIN_MS,
				 (unsigned long long)CPOL_SESSION_MAX_LIFE_MS);
	if (s->idle_ms < CPOL_SESSION_MIN_MS || s->idle_ms > s->life_ms)
		return blob_fail(L, r, CPOL_AGT_SESSION_IDLE_MS, "session_idle_ms",
				 "A session's idle expiry is %llu ms; it must be %u ms to the lifetime (%llu ms).",
				 (unsigned long long)s->idle_ms, CPOL_SESSION_MIN_MS, (unsigned long long)s->life_ms);
	if (s->cpu_ms == 0 || s->cpu_ms > CPOL_SESSION_MAX_LIFE_MS * 1024)
		return blob_fail(L, r, CPOL_AGT_SESSION_CPU_MS, "session_cpu_ms",
				 "A session's CPU is %llu ms; the format allows 1 to %llu.", (unsigned long long)s->cpu_ms,
				 (unsigned long long)CPOL_SESSION_MAX_LIFE_MS * 1024);
	if (s->ws_bytes == 0 || s->ws_bytes > CPOL_SESSION_MAX_WS_BYTES)
		return blob_fail(L, r, CPOL_AGT_SESSION_WS_BYTES, "session_workspace_bytes",
				 "A session's workspace is %llu bytes; the format allows 1 to %llu.",
				 (unsigned long long)s->ws_bytes, (unsigned long long)CPOL_SESSION_MAX_WS_BYTES);
	return 0;
}

static int blob_read_agents(struct blob_loader *L)
{
	struct cpol_policy *p = L->p;
	uint32_t n = L->sec[CPOL_SEC_AGENTS].count;
	struct blob_rec r = { NULL, 0, L->sec[CPOL_SEC_AGENTS].off, "agents", CPOL_NONE };
	uint32_t sessions = 0;
	void *v;

	if (blob_alloc(L, &r, n, sizeof(*p->agents), &v) < 0)
		return -1;
	p->agents = v;
	p->nagents = n;
	for (uint32_t i = 0; i < n; i++) {
		struct cpol_agent *a = &p->agents[i];
		struct cpol_range g;

		if (blob_rec_at(L, CPOL_SEC_AGENTS, i, &r) < 0 ||
		    blob_str(L, &r, CPOL_AGT_NAME, "name", &a->name) < 0 ||
		    blob_nonempty(L, &r, CPOL_AGT_NAME, "name", a->name) < 0 ||
		    blob_check_order(L, &r, CPOL_AGT_NAME, "name", i ? p->agents[i - 1].name : NULL,
				     a->name) < 0 ||
		    blob_list(L, &r, CPOL_AGT_TOOLS, "tools", L->sec[CPOL_SEC_IDXLIST].count,
			      "idxlist", &g) < 0 ||
		    blob_read_session(L, &r, &a->session, &sessions) < 0)
			return -1;
		if (g.count == 0)
			continue;
		if (L->idx_asc_end[g.first] < g.first + g.count)
			return blob_fail(L, &r, CPOL_AGT_TOOLS, "tools",
					 "The agent's tool indices are not strictly ascending (idxlist entry %u is not above entry %u).",
					 L->idx_asc_end[g.first], L->idx_asc_end[g.first] - 1);
		a->tools = L->idxlist + g.first;
		a->ntools = g.count;
	}
	/* The long records are a second spelling of "no sessions" unless
	 * some agent holds them. */
	if (n > 0 && L->sec[CPOL_SEC_AGENTS].rec == CPOL_AGENT_SESSION_BYTES && sessions == 0)
		return blob_fail(L, &r, CPOL_AGT_SESSION_FLAGS, "session_flags",
				 "The agents have the %u-byte records of format 3.6, but none holds sessions "
				 "(a blob without sessions has the %u-byte records).",
				 CPOL_AGENT_SESSION_BYTES, CPOL_AGENT_BYTES);
	return 0;
}

/* The compiler refuses such paths; the loader checks again because the
 * runtime will join this path onto out/, and a blob is not trusted to have
 * come from our compiler. */
static int blob_output_path_ok(const char *s)
{
	const char *comp = s;

	if (s[0] == '/' || strchr(s, '\\') != NULL)
		return 0;
	for (;;) {
		const char *end = strchr(comp, '/');
		size_t len = end ? (size_t)(end - comp) : strlen(comp);

		if (len == 0 || (len == 1 && comp[0] == '.') || (len == 2 && comp[0] == '.' && comp[1] == '.'))
			return 0;
		if (end == NULL)
			return 1;
		comp = end + 1;
	}
}

static int blob_read_outputs(struct blob_loader *L)
{
	struct cpol_policy *p = L->p;
	uint32_t n = L->sec[CPOL_SEC_OUTPUTS].count;
	struct blob_rec r = { NULL, 0, L->sec[CPOL_SEC_OUTPUTS].off, "outputs", CPOL_NONE };
	void *v;

	if (blob_alloc(L, &r, n, sizeof(*p->outputs), &v) < 0)
		return -1;
	p->outputs = v;
	p->noutputs = n;
	for (uint32_t i = 0; i < n; i++) {
		struct cpol_output *o = &p->outputs[i];

		if (blob_rec_at(L, CPOL_SEC_OUTPUTS, i, &r) < 0 ||
		    blob_str(L, &r, CPOL_OUT_PATH, "path", &o->path) < 0 ||
		    blob_nonempty(L, &r, CPOL_OUT_PATH, "path", o->path) < 0 ||
		    blob_check_order(L, &r, CPOL_OUT_PATH, "path", i ? p->outputs[i - 1].path : NULL,
				     o->path) < 0 ||
		    blob_u64(L, &r, CPOL_OUT_MAX_BYTES, "max_bytes", &o->max_bytes) < 0 ||
		    blob_u32(L, &r, CPOL_OUT_FLAGS, "flags", &o->flags) < 0)
			return -1;
		if (o->flags & ~CPOL_OUT_F_ALL)
			return blob_fail(L, &r, CPOL_OUT_FLAGS, "flags",
					 "Flags 0x%x include bits this format does not define.", o->flags);
		if (blob_zero32(L, &r, CPOL_OUT_RESERVED, "reserved") < 0)
			return -1;
		if (!blob_output_path_ok(o->path))
			return blob_fail(L, &r, CPOL_OUT_PATH, "path",
					 "Output path %s leaves the output directory (absolute, '.', '..' or an empty component).",
					 blob_quote(o->path).s);
	}
	return 0;
}

/* ---- provenance (3.5) --------------------------------------------------- */

/* The sources come in the order the compile read them: one descriptor,
 * then inventories, then policy files, so a role never goes back. */
static int blob_read_sources(struct blob_loader *L)
{
	struct cpol_provenance *v = &L->p->prov;
	uint32_t n = L->sec[CPOL_SEC_SOURCES].count;
	struct blob_rec r = { NULL, 0, L->sec[CPOL_SEC_SOURCES].off, "sources", CPOL_NONE };
	void *a;

	if (blob_alloc(L, &r, n, sizeof(*v->sources), &a) < 0)
		return -1;
	v->sources = a;
	v->nsources = n;
	for (uint32_t i = 0; i < n; i++) {
		struct cpol_source *s = &v->sources[i];
		uint32_t want = i == 0 ? CPOL_SRC_DESCRIPTOR : i == 1 ? CPOL_SRC_INVENTORY : CPOL_NONE;

		if (blob_rec_at(L, CPOL_SEC_SOURCES, i, &r) < 0 ||
		    blob_u32(L, &r, CPOL_SRC_ROLE, "role", &s->role) < 0)
			return -1;
		if (s->role > CPOL_SRC_POLICY)
			return blob_fail(L, &r, CPOL_SRC_ROLE, "role", "Source role %u is not known.", s->role);
		if (want != CPOL_NONE && s->role != want)
			return blob_fail(L, &r, CPOL_SRC_ROLE, "role",
					 "Source %u is a %s; the sources start with one descriptor and then at least one inventory.",
					 i, policy_src_role_name(s->role));
		if (i > 1 && (s->role == CPOL_SRC_DESCRIPTOR || s->role < v->sources[i - 1].role))
			return blob_fail(L, &r, CPOL_SRC_ROLE, "role",
					 "Source %u is a %s after a %s; the sources are the descriptor, the inventories, then the policy files.",
					 i, policy_src_role_name(s->role), policy_src_role_name(v->sources[i - 1].role));
		if (blob_zero32(L, &r, CPOL_SRC_RESERVED, "reserved") < 0 ||
		    blob_str(L, &r, CPOL_SRC_NAME, "name", &s->name) < 0 ||
		    blob_nonempty(L, &r, CPOL_SRC_NAME, "name", s->name) < 0)
			return -1;
		memcpy(s->sha256, r.p + CPOL_SRC_SHA256, sizeof(s->sha256));
	}
	return 0;
}

static int blob_read_lint(struct blob_loader *L)
{
	struct cpol_provenance *v = &L->p->prov;
	struct blob_rec r;

	if (blob_rec_at(L, CPOL_SEC_LINT, 0, &r) < 0)
		return -1;
	r.index = CPOL_NONE;
	if (blob_str(L, &r, CPOL_LINT_CATALOGUE, "catalogue", &v->catalogue) < 0 ||
	    blob_nonempty(L, &r, CPOL_LINT_CATALOGUE, "catalogue", v->catalogue) < 0 ||
	    blob_u32(L, &r, CPOL_LINT_ERRORS, "errors", &v->errors) < 0 ||
	    blob_u32(L, &r, CPOL_LINT_WARNINGS, "warnings", &v->warnings) < 0 ||
	    blob_u32(L, &r, CPOL_LINT_NOTES, "notes", &v->notes) < 0 ||
	    blob_u32(L, &r, CPOL_LINT_SUPPRESSED, "suppressed", &v->suppressed) < 0 ||
	    blob_strs(L, &r, CPOL_LINT_RULES, "rules", &v->rules) < 0)
		return -1;
	/* Each rule id names at least one suppressed finding. */
	if (v->rules.n > v->suppressed)
		return blob_fail(L, &r, CPOL_LINT_RULES, "rules",
				 "%u rules are listed as suppressed, but only %u findings were.", v->rules.n,
				 v->suppressed);
	for (uint32_t i = 0; i < v->rules.n; i++)
		if (blob_nonempty(L, &r, CPOL_LINT_RULES, "rules", v->rules.v[i]) < 0 ||
		    blob_check_order(L, &r, CPOL_LINT_RULES, "rules", i ? v->rules.v[i - 1] : NULL,
				     v->rules.v[i]) < 0)
			return -1;
	v->has = 1;
	return 0;
}

static int blob_read_provenance(struct blob_loader *L)
{
	if (L->nsec != CPOL_SEC_COUNT_PROV)
		return 0;
	return blob_read_sources(L) < 0 || blob_read_lint(L) < 0 ? -1 : 0;
}

/* Verifying the signature needs a trusted key and is done by the caller;
 * here the record only has to be well formed. */
static int blob_read_signature(struct blob_loader *L)
{
	struct cpol_signature *s = &L->p->signature;
	static const uint8_t zero[sizeof(s->sig)];
	struct blob_rec r;

	if (blob_rec_at(L, CPOL_SEC_SIGNATURE, 0, &r) < 0)
		return -1;
	r.index = CPOL_NONE;
	if (blob_u32(L, &r, CPOL_SIG_ALGO, "algo", &s->algo) < 0)
		return -1;
	if (s->algo != CPOL_SIG_NONE && s->algo != CPOL_SIG_ED25519)
		return blob_fail(L, &r, CPOL_SIG_ALGO, "algo",
				 "Signature algorithm %u is not known.", s->algo);
	if (blob_zero32(L, &r, CPOL_SIG_RESERVED, "reserved") < 0)
		return -1;
	memcpy(s->keyid, r.p + CPOL_SIG_KEYID, sizeof(s->keyid));
	memcpy(s->sig, r.p + CPOL_SIG_BYTES_OFF, sizeof(s->sig));
	if (s->algo == CPOL_SIG_NONE) {
		if (memcmp(s->keyid, zero, sizeof(s->keyid)) != 0)
			return blob_fail(L, &r, CPOL_SIG_KEYID, "keyid",
					 "An unsigned blob must have an all-zero key id.");
		if (memcmp(s->sig, zero, sizeof(s->sig)) != 0)
			return blob_fail(L, &r, CPOL_SIG_BYTES_OFF, "sig",
					 "An unsigned blob must have an all-zero signature.");
	}
	return 0;
}

int blob_load(const uint8_t *buf, size_t len, uint32_t want_arch, struct cpol_policy *out,
	      struct blob_error *err)
{
	struct blob_loader L;
	int rc = -1;

	policy_init(out);
	memset(err, 0, sizeof(*err));
	memset(&L, 0, sizeof(L));
	L.buf = buf;
	L.len = len;
	L.err = err;
	L.p = out;

	/* Framing first, then integrity, then meaning: nothing is decoded
	 * from a blob whose layout or hash is wrong. */
	if (blob_read_header(&L, want_arch) < 0 || blob_read_table(&L) < 0 ||
	    blob_check_hash(&L) < 0)
		goto out;
	if (blob_read_strtab(&L) < 0 || blob_read_strlist(&L) < 0 || blob_read_idxlist(&L) < 0 ||
	    blob_read_meta(&L) < 0 || blob_read_limits(&L) < 0 || blob_read_executor(&L) < 0 ||
	    blob_read_env(&L) < 0 || blob_read_mounts(&L) < 0 || blob_read_seccomp(&L) < 0 ||
	    blob_read_tools(&L) < 0 || blob_read_params(&L) < 0 || blob_check_forest(&L) < 0 ||
	    blob_read_constraints(&L) < 0 ||
	    constraint_verify(out, L.sec[CPOL_SEC_TOOLS].off, L.sec[CPOL_SEC_CONSTRAINTS].off, err) < 0 ||
	    blob_read_agents(&L) < 0 || blob_read_outputs(&L) < 0 || blob_read_provenance(&L) < 0 ||
	    blob_read_signature(&L) < 0)
		goto out;
	rc = 0;
out:
	free(L.nul_bits);
	free(L.nul_rank);
	free(L.idx_asc_end);
	return rc;
}

void blob_hash(const uint8_t *buf, size_t sig_off, uint8_t out[32])
{
	static const uint8_t zero[32];
	crypto_hash_sha256_state st;

	/* libsodium asks for sodium_init() before use; it is idempotent and
	 * cheap after the first call.  Its failure (no entropy source) does
	 * not concern SHA-256, which needs neither randomness nor dispatch. */
	int ready = sodium_init();

	(void)ready;
	crypto_hash_sha256_init(&st);
	crypto_hash_sha256_update(&st, buf, CPOL_HDR_SHA256);
	crypto_hash_sha256_update(&st, zero, sizeof(zero));
	crypto_hash_sha256_update(&st, buf + CPOL_HEADER_SIZE, sig_off - CPOL_HEADER_SIZE);
	crypto_hash_sha256_final(&st, out);
}

uint64_t blob_sig_offset(const uint8_t *buf)
{
	/* SIGNATURE is the last entry of either table. */
	uint32_t nsec = (uint32_t)buf[CPOL_HDR_SECTION_COUNT] | (uint32_t)buf[CPOL_HDR_SECTION_COUNT + 1] << 8 |
			(uint32_t)buf[CPOL_HDR_SECTION_COUNT + 2] << 16 |
			(uint32_t)buf[CPOL_HDR_SECTION_COUNT + 3] << 24;
	size_t last = nsec == CPOL_SEC_COUNT_PROV ? CPOL_SEC_COUNT_PROV - 1 : CPOL_SEC_COUNT - 1;
	const uint8_t *e = buf + CPOL_HEADER_SIZE + last * CPOL_SEC_ENT_BYTES + CPOL_SEC_ENT_OFFSET;
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v |= (uint64_t)e[i] << (8 * i);
	return v;
}

/* ---- files ------------------------------------------------------------- */

__attribute__((format(printf, 2, 3))) static int blob_fail_file(struct blob_error *err,
								 const char *fmt, ...)
{
	va_list ap;

	snprintf(err->field, sizeof(err->field), "file");
	err->offset = 0;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

/*
 * The file is read into private anonymous memory, not mapped: a mapping of
 * the file itself would change under us if someone rewrote the file (even
 * MAP_PRIVATE shows later writes to pages we never wrote), so the bytes we
 * hash and check could differ from the bytes we then decode, and a file
 * truncated meanwhile would turn reads into SIGBUS.  The result is still a
 * read-only mapping, released with blob_unmap().
 */
int blob_map_file(const char *path, struct blob_map *m, struct blob_error *err)
{
	struct stat st;
	uint8_t *data = MAP_FAILED;
	size_t size = 0, got = 0;
	int fd = -1, rc = -1;

	memset(err, 0, sizeof(*err));
	m->data = NULL;
	m->len = 0;
	/* O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then
	 * refuses it.  Reads of a regular file ignore the flag. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		blob_fail_file(err, "Cannot open %s: %s.", path, strerror(errno));
		goto out;
	}
	if (fstat(fd, &st) < 0) {
		blob_fail_file(err, "Cannot stat %s: %s.", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		blob_fail_file(err, "%s is not a regular file.", path);
		goto out;
	}
	if (st.st_size <= 0 || (uint64_t)st.st_size > CPOL_MAX_BLOB_SIZE) {
		blob_fail_file(err, "%s is %lld bytes; a policy blob is 1 to %u bytes.", path,
			       (long long)st.st_size, CPOL_MAX_BLOB_SIZE);
		goto out;
	}
	size = (size_t)st.st_size;
	data = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (data == MAP_FAILED) {
		blob_fail_file(err, "Cannot map %zu bytes for %s: %s.", size, path, strerror(errno));
		goto out;
	}
	while (got < size) {
		ssize_t n = read(fd, data + got, size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			blob_fail_file(err, "Cannot read %s: %s.", path, strerror(errno));
			goto out;
		}
		if (n == 0) {
			blob_fail_file(err, "%s shrank while it was being read.", path);
			goto out;
		}
		got += (size_t)n;
	}
	if (mprotect(data, size, PROT_READ) < 0) {
		blob_fail_file(err, "Cannot protect the copy of %s: %s.", path, strerror(errno));
		goto out;
	}
	m->data = data;
	m->len = size;
	data = MAP_FAILED;
	rc = 0;
out:
	if (data != MAP_FAILED)
		munmap(data, size);
	if (fd >= 0)
		close(fd);
	return rc;
}

void blob_unmap(struct blob_map *m)
{
	if (m->data != NULL)
		munmap(m->data, m->len);
	m->data = NULL;
	m->len = 0;
}
