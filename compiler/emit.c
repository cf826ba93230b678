/* SPDX-License-Identifier: Apache-2.0 */
/*
 * emit.c - write a struct cpol_policy as a .cpol blob (format: cpol.h).
 *
 * The mirror of runtime/blob_load.c: the same sections, the same fields, in
 * the same order.  One walk over the policy, in section-id order, fills one
 * growable buffer per section; strings are interned into the string table
 * the first time the walk meets them, so the table's order is a function of
 * the policy alone and the same policy always gives the same bytes.  The
 * buffers are then laid out behind the header and section table, each at
 * the next 8-aligned offset, and the hash is taken last.
 *
 * emit trusts the policy's shape (sorted tables, valid indices): the loader
 * is the judge.  What emit does enforce is the encoding's own canon, so that
 * a blob has exactly one byte layout: fields a flag does not enable are
 * zero, an empty list is (0, 0), and the empty string is (0, 0).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cordon/blob.h"

/* One section under construction.  Record sections are sized exactly before
 * the walk; only STRTAB, STRLIST and IDXLIST grow. */
struct emit_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
};

/* Open-addressing set of interned strings: slot -> strtab offset + 1 (0 is
 * an empty slot), so lookups compare against the bytes already written. */
struct emit_intern {
	uint32_t *slots;
	size_t nslots; /* power of two */
	size_t used;
};

struct emit_ctx {
	struct emit_buf sec[CPOL_SEC_MAX_ID + 1]; /* indexed by section id */
	uint32_t count[CPOL_SEC_MAX_ID + 1];
	struct emit_intern intern;
	struct blob_error *err;
};

/* Little-endian stores: the format's byte order, whatever the host's. */
static void emit_put_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void emit_put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void emit_put_u64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

__attribute__((format(printf, 3, 4))) static int emit_fail(struct emit_ctx *c, const char *field,
							     const char *fmt, ...)
{
	va_list ap;

	snprintf(c->err->field, sizeof(c->err->field), "%s", field);
	c->err->offset = 0;
	va_start(ap, fmt);
	vsnprintf(c->err->msg, sizeof(c->err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

/* Append n zero bytes to a section; returns their start or NULL. */
static uint8_t *emit_grow(struct emit_ctx *c, int id, size_t n)
{
	struct emit_buf *b = &c->sec[id];
	uint8_t *p;

	/* Nothing may exceed the blob limit, so refusing early keeps every
	 * size below in comfortable range of size_t and u32 arithmetic. */
	if (n > CPOL_MAX_BLOB_SIZE || b->len > CPOL_MAX_BLOB_SIZE - n) {
		emit_fail(c, "policy", "The policy does not fit in a blob of at most %u bytes.",
			  CPOL_MAX_BLOB_SIZE);
		return NULL;
	}
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		uint8_t *d;

		while (cap < b->len + n)
			cap *= 2;
		d = realloc(b->data, cap);
		if (d == NULL) {
			emit_fail(c, "policy", "Out of memory while writing the blob.");
			return NULL;
		}
		b->data = d;
		b->cap = cap;
	}
	p = b->data + b->len;
	memset(p, 0, n);
	b->len += n;
	return p;
}

static uint32_t emit_hash_bytes(const char *s, size_t len)
{
	uint32_t h = 2166136261u; /* FNV-1a: only needs to spread, not resist */

	for (size_t i = 0; i < len; i++) {
		h ^= (uint8_t)s[i];
		h *= 16777619u;
	}
	return h;
}

static int emit_intern_grow(struct emit_ctx *c)
{
	struct emit_intern *in = &c->intern;
	const struct emit_buf *st = &c->sec[CPOL_SEC_STRTAB];
	size_t n = in->nslots ? in->nslots * 2 : 64;
	uint32_t *slots = calloc(n, sizeof(*slots));

	if (slots == NULL)
		return emit_fail(c, "strtab", "Out of memory while writing the blob.");
	for (size_t i = 0; i < in->nslots; i++) {
		uint32_t off;
		size_t j;

		if (in->slots[i] == 0)
			continue;
		off = in->slots[i] - 1;
		j = emit_hash_bytes((const char *)st->data + off,
				    strlen((const char *)st->data + off)) & (n - 1);
		while (slots[j] != 0)
			j = (j + 1) & (n - 1);
		slots[j] = in->slots[i];
	}
	free(in->slots);
	in->slots = slots;
	in->nslots = n;
	return 0;
}

/*
 * Offset of s in the string table, adding it on first sight.  A NULL string
 * is the empty string; the empty string is always offset 0, the NUL the
 * table starts with.
 */
static int emit_intern(struct emit_ctx *c, const char *s, uint32_t *off, uint32_t *len)
{
	struct emit_intern *in = &c->intern;
	size_t n, j;
	uint8_t *d;

	if (s == NULL || s[0] == '\0') {
		*off = 0;
		*len = 0;
		return 0;
	}
	n = strlen(s);
	if (n >= CPOL_MAX_BLOB_SIZE)
		return emit_fail(c, "strtab", "A string of %zu bytes does not fit in a blob.", n);
	/* Keep the load factor at or below one half. */
	if ((in->used + 1) * 2 > in->nslots && emit_intern_grow(c) < 0)
		return -1;
	j = emit_hash_bytes(s, n) & (in->nslots - 1);
	while (in->slots[j] != 0) {
		const char *t = (const char *)c->sec[CPOL_SEC_STRTAB].data + (in->slots[j] - 1);

		if (strcmp(t, s) == 0) {
			*off = in->slots[j] - 1;
			*len = (uint32_t)n;
			return 0;
		}
		j = (j + 1) & (in->nslots - 1);
	}
	*off = (uint32_t)c->sec[CPOL_SEC_STRTAB].len;
	d = emit_grow(c, CPOL_SEC_STRTAB, n + 1);
	if (d == NULL)
		return -1;
	memcpy(d, s, n);
	in->slots[j] = *off + 1;
	in->used++;
	*len = (uint32_t)n;
	return 0;
}

static int emit_str(struct emit_ctx *c, uint8_t *rec, size_t at, const char *s)
{
	uint32_t off = 0, len = 0;

	if (emit_intern(c, s, &off, &len) < 0)
		return -1;
	emit_put_u32(rec + at + CPOL_STR_OFF, off);
	emit_put_u32(rec + at + CPOL_STR_LEN, len);
	return 0;
}

/* An empty list is (0, 0) whatever first the policy holds: one layout. */
static void emit_range(uint8_t *rec, size_t at, struct cpol_range r)
{
	emit_put_u32(rec + at, r.count ? r.first : 0);
	emit_put_u32(rec + at + 4, r.count);
}

/* A string list becomes a fresh run at the end of STRLIST. */
static int emit_strs(struct emit_ctx *c, uint8_t *rec, size_t at, const struct cpol_strs *l)
{
	uint32_t first = c->count[CPOL_SEC_STRLIST];
	uint8_t *d;

	if (l->n == 0) {
		emit_range(rec, at, (struct cpol_range){ 0, 0 });
		return 0;
	}
	if (l->n > CPOL_MAX_BLOB_SIZE / CPOL_STR_BYTES)
		return emit_fail(c, "strlist", "A string list of %u entries does not fit in a blob.", l->n);
	d = emit_grow(c, CPOL_SEC_STRLIST, (size_t)l->n * CPOL_STR_BYTES);
	if (d == NULL)
		return -1;
	/* d stays valid: interning writes to STRTAB, never to STRLIST. */
	for (uint32_t i = 0; i < l->n; i++)
		if (emit_str(c, d + (size_t)i * CPOL_STR_BYTES, 0, l->v[i]) < 0)
			return -1;
	c->count[CPOL_SEC_STRLIST] += l->n;
	emit_range(rec, at, (struct cpol_range){ first, l->n });
	return 0;
}

static int emit_idxs(struct emit_ctx *c, uint8_t *rec, size_t at, const uint32_t *v, uint32_t n)
{
	uint32_t first = c->count[CPOL_SEC_IDXLIST];
	uint8_t *d;

	if (n == 0) {
		emit_range(rec, at, (struct cpol_range){ 0, 0 });
		return 0;
	}
	if (n > CPOL_MAX_BLOB_SIZE / CPOL_IDX_BYTES)
		return emit_fail(c, "idxlist", "An index list of %u entries does not fit in a blob.", n);
	d = emit_grow(c, CPOL_SEC_IDXLIST, (size_t)n * CPOL_IDX_BYTES);
	if (d == NULL)
		return -1;
	for (uint32_t i = 0; i < n; i++)
		emit_put_u32(d + (size_t)i * CPOL_IDX_BYTES, v[i]);
	c->count[CPOL_SEC_IDXLIST] += n;
	emit_range(rec, at, (struct cpol_range){ first, n });
	return 0;
}

/* Reserve a record section of n records up front, so record pointers never
 * move while their strings and lists are being written elsewhere.  *base is
 * NULL for an empty section; callers loop over no records then. */
static int emit_records(struct emit_ctx *c, int id, uint32_t n, size_t recsize, uint8_t **base)
{
	*base = NULL;
	if ((uint64_t)n * recsize > CPOL_MAX_BLOB_SIZE)
		return emit_fail(c, "policy", "The policy does not fit in a blob of at most %u bytes.",
				 CPOL_MAX_BLOB_SIZE);
	c->count[id] = n;
	if (n == 0)
		return 0;
	*base = emit_grow(c, id, (size_t)n * recsize);
	return *base ? 0 : -1;
}

static int emit_meta(struct emit_ctx *c, const struct cpol_meta *m)
{
	uint8_t *r;

	if (emit_records(c, CPOL_SEC_META, 1, CPOL_META_BYTES, &r) < 0 ||
	    emit_str(c, r, CPOL_META_APP, m->app) < 0)
		return -1;
	emit_put_u32(r + CPOL_META_DESCRIPTOR_VERSION, m->descriptor_version);
	emit_put_u32(r + CPOL_META_INVENTORY_VERSION, m->inventory_version);
	return 0;
}

static int emit_limits(struct emit_ctx *c, const struct cpol_limits *l)
{
	uint8_t *r;

	/* The CPU quota's 8 bytes exist only in a blob that sets one
	 * (CPOL_MINOR_CPU), so a policy without it keeps its 3.0 bytes. */
	if (emit_records(c, CPOL_SEC_LIMITS, 1, l->cpu_milli ? CPOL_LIMITS_CPU_BYTES : CPOL_LIMITS_BYTES, &r) < 0)
		return -1;
	emit_put_u64(r + CPOL_LIM_TIMEOUT_MS, l->timeout_ms);
	emit_put_u64(r + CPOL_LIM_MAX_FILE_BYTES, l->max_file_bytes);
	emit_put_u64(r + CPOL_LIM_WS_DELTA_BYTES, l->ws_delta_bytes);
	emit_put_u64(r + CPOL_LIM_WS_MAX_BYTES, l->ws_max_bytes);
	emit_put_u64(r + CPOL_LIM_MONITOR_MS, l->monitor_ms);
	emit_put_u64(r + CPOL_LIM_MAX_OUTPUT_BYTES, l->max_output_bytes);
	emit_put_u64(r + CPOL_LIM_MAX_RESULT_BYTES, l->max_result_bytes);
	emit_put_u64(r + CPOL_LIM_MAX_CODE_BYTES, l->max_code_bytes);
	emit_put_u64(r + CPOL_LIM_MEMORY_BYTES, l->memory_bytes);
	emit_put_u64(r + CPOL_LIM_MAX_TOOL_REQ_BYTES, l->max_tool_request_bytes);
	emit_put_u32(r + CPOL_LIM_PIDS, l->pids);
	emit_put_u32(r + CPOL_LIM_OPEN_FILES, l->open_files);
	emit_put_u32(r + CPOL_LIM_MODE, l->mode);
	emit_put_u32(r + CPOL_LIM_WS_ENTRIES, l->ws_entries);
	if (l->cpu_milli)
		emit_put_u32(r + CPOL_LIM_CPU_MILLI, l->cpu_milli);
	return 0;
}

/* The preload list is an ordinary string run whose place is implied: the
 * executor is the first record of the walk to write a string list, so its
 * run starts STRLIST, and the record keeps only the count (in the word
 * that was reserved in 3.0).  The package list (3.4) is the run right
 * after it, so its count alone places it too. */
static int emit_modules(struct emit_ctx *c, uint8_t *rec, size_t at, const char *field, uint32_t first,
			const char **names, uint32_t n)
{
	struct cpol_strs l = { names, n };
	uint8_t ref[8] = { 0 };

	if (n == 0)
		return 0;
	if (c->count[CPOL_SEC_STRLIST] != first)
		return emit_fail(c, field, "The list must start at strlist entry %u.", first);
	if (emit_strs(c, ref, 0, &l) < 0)
		return -1;
	emit_put_u32(rec + at, n);
	return 0;
}

static int emit_executor(struct emit_ctx *c, const struct cpol_executor *e)
{
	uint8_t *r;

	/* The package count's 8 bytes exist only in a blob that declares
	 * packages (CPOL_MINOR_PACKAGES), so every other blob keeps its bytes. */
	if (emit_records(c, CPOL_SEC_EXECUTOR, 1, e->npackages ? CPOL_EXECUTOR_PKG_BYTES : CPOL_EXECUTOR_BYTES,
			 &r) < 0 ||
	    emit_str(c, r, CPOL_EXE_INTERPRETER, e->interpreter) < 0)
		return -1;
	emit_put_u32(r + CPOL_EXE_UID, e->uid);
	emit_put_u32(r + CPOL_EXE_GID, e->gid);
	emit_put_u32(r + CPOL_EXE_NETWORK, e->network);
	emit_put_u32(r + CPOL_EXE_FLAGS, e->flags);
	emit_put_u32(r + CPOL_EXE_REQUIRE, e->require);
	if (emit_modules(c, r, CPOL_EXE_PRELOAD, "executor.preload", 0, e->preload, e->npreload) < 0 ||
	    emit_modules(c, r, CPOL_EXE_PACKAGES, "executor.packages", e->npreload, e->packages, e->npackages) < 0 ||
	    emit_str(c, r, CPOL_EXE_SECCOMP_PROFILE, e->seccomp_profile) < 0 ||
	    emit_str(c, r, CPOL_EXE_SECCOMP_EXTRA, e->seccomp_extra) < 0)
		return -1;
	return 0;
}

static int emit_env(struct emit_ctx *c, const struct cpol_policy *p)
{
	uint8_t *base;

	if (emit_records(c, CPOL_SEC_ENV, p->nenv, CPOL_ENV_BYTES, &base) < 0)
		return -1;
	for (uint32_t i = 0; i < p->nenv; i++) {
		uint8_t *r = base + (size_t)i * CPOL_ENV_BYTES;

		if (emit_str(c, r, CPOL_ENV_KEY, p->env[i].key) < 0 ||
		    emit_str(c, r, CPOL_ENV_VALUE, p->env[i].value) < 0)
			return -1;
	}
	return 0;
}

static int emit_mounts(struct emit_ctx *c, const struct cpol_policy *p)
{
	uint8_t *base;

	if (emit_records(c, CPOL_SEC_MOUNTS, p->nmounts, CPOL_MOUNT_BYTES, &base) < 0)
		return -1;
	for (uint32_t i = 0; i < p->nmounts; i++) {
		const struct cpol_mount *m = &p->mounts[i];
		uint8_t *r = base + (size_t)i * CPOL_MOUNT_BYTES;

		emit_put_u32(r + CPOL_MNT_TYPE, m->type);
		emit_put_u32(r + CPOL_MNT_FLAGS, m->flags);
		if (emit_str(c, r, CPOL_MNT_SOURCE, m->source) < 0 ||
		    emit_str(c, r, CPOL_MNT_TARGET, m->target) < 0)
			return -1;
		emit_put_u64(r + CPOL_MNT_SIZE, m->size);
	}
	return 0;
}

static int emit_seccomp(struct emit_ctx *c, const struct cpol_policy *p)
{
	uint8_t *base;

	if (emit_records(c, CPOL_SEC_SECCOMP, p->nseccomp, CPOL_BPF_BYTES, &base) < 0)
		return -1;
	for (uint32_t i = 0; i < p->nseccomp; i++) {
		const struct cpol_bpf *f = &p->seccomp[i];
		uint8_t *r = base + (size_t)i * CPOL_BPF_BYTES;

		emit_put_u16(r + CPOL_BPF_CODE, f->code);
		r[CPOL_BPF_JT] = f->jt;
		r[CPOL_BPF_JF] = f->jf;
		emit_put_u32(r + CPOL_BPF_K, f->k);
	}
	return 0;
}

static int emit_tools(struct emit_ctx *c, const struct cpol_policy *p)
{
	uint8_t *base;

	if (emit_records(c, CPOL_SEC_TOOLS, p->ntools, CPOL_TOOL_BYTES, &base) < 0)
		return -1;
	for (uint32_t i = 0; i < p->ntools; i++) {
		const struct cpol_tool *t = &p->tools[i];
		uint8_t *r = base + (size_t)i * CPOL_TOOL_BYTES;

		if (emit_str(c, r, CPOL_TOOL_ID, t->id) < 0 ||
		    emit_str(c, r, CPOL_TOOL_DESCRIPTION, t->description) < 0)
			return -1;
		emit_put_u32(r + CPOL_TOOL_FLAGS, t->flags);
		emit_put_u32(r + CPOL_TOOL_MAX_CALLS, t->max_calls);
		emit_put_u64(r + CPOL_TOOL_TIMEOUT_MS, t->timeout_ms);
		if (emit_strs(c, r, CPOL_TOOL_EXEC, &t->exec) < 0 ||
		    emit_strs(c, r, CPOL_TOOL_ENV_FROM, &t->env_from) < 0 ||
		    emit_strs(c, r, CPOL_TOOL_ROLES, &t->roles) < 0)
			return -1;
		emit_range(r, CPOL_TOOL_PARAMS, t->params);
		emit_range(r, CPOL_TOOL_CONSTRAINTS, t->constraints);
		emit_put_u32(r + CPOL_TOOL_MAX_CALLS_PER_DAY, t->max_calls_per_day);
		emit_put_u32(r + CPOL_TOOL_RUN_AS, t->run_as);
		emit_put_u32(r + CPOL_TOOL_RUN_UID, t->run_uid);
		emit_put_u32(r + CPOL_TOOL_RUN_GID, t->run_gid);
		if (emit_str(c, r, CPOL_TOOL_RUN_USER, t->run_user) < 0)
			return -1;
		emit_put_u64(r + CPOL_TOOL_MEMORY_BYTES, t->memory_bytes);
		emit_put_u32(r + CPOL_TOOL_PIDS, t->pids);
		emit_put_u32(r + CPOL_TOOL_RETURNS, t->returns); /* biased: 0 is none */
	}
	return 0;
}

/* Whether some agent declares sessions: then every agent record is the
 * 3.6 one (CPOL_MINOR_SESSION), else every blob keeps its older bytes. */
static int emit_has_sessions(const struct cpol_policy *p)
{
	for (uint32_t i = 0; i < p->nagents; i++)
		if (p->agents[i].session.flags & CPOL_AGT_F_SESSION)
			return 1;
	return 0;
}

/* The oldest minor that holds this policy (cpol.h): a feature's minor only
 * when the policy uses it, so a policy without preloads, result schemas,
 * a CPU quota or packages is exactly what a 3.0 writer made. */
static uint16_t emit_minor(const struct cpol_policy *p)
{
	uint16_t minor = p->exec.npreload > 0 ? CPOL_MINOR_PRELOAD : 0;

	for (uint32_t i = 0; i < p->ntools; i++)
		if (p->tools[i].returns != 0 && minor < CPOL_MINOR_RETURNS)
			minor = CPOL_MINOR_RETURNS;
	if (p->limits.cpu_milli > 0)
		minor = CPOL_MINOR_CPU;
	if (p->exec.npackages > 0)
		minor = CPOL_MINOR_PACKAGES;
	if (p->prov.has)
		minor = CPOL_MINOR_PROVENANCE;
	if (emit_has_sessions(p))
		minor = CPOL_MINOR_SESSION;
	return minor;
}

/* MIN / MAX hold an i64 for integers and IEEE-754 bits for numbers; any
 * other type, or an unset flag, leaves the field zero. */
static uint64_t emit_bound(const struct cpol_param *m, uint32_t flag, int64_t i, double f)
{
	uint64_t bits = 0;

	if (!(m->flags & flag))
		return 0;
	if (m->type == CPOL_T_INTEGER)
		return (uint64_t)i;
	if (m->type == CPOL_T_NUMBER)
		memcpy(&bits, &f, sizeof(bits));
	return bits;
}

static int emit_params(struct emit_ctx *c, const struct cpol_policy *p)
{
	uint8_t *base;

	if (emit_records(c, CPOL_SEC_PARAMS, p->nparams, CPOL_PARAM_BYTES, &base) < 0)
		return -1;
	for (uint32_t i = 0; i < p->nparams; i++) {
		const struct cpol_param *m = &p->params[i];
		uint8_t *r = base + (size_t)i * CPOL_PARAM_BYTES;

		if (emit_str(c, r, CPOL_PRM_NAME, m->name) < 0)
			return -1;
		emit_put_u32(r + CPOL_PRM_TYPE, m->type);
		emit_put_u32(r + CPOL_PRM_FLAGS, m->flags);
		emit_put_u64(r + CPOL_PRM_MIN, emit_bound(m, CPOL_PRM_F_MIN, m->imin, m->fmin));
		emit_put_u64(r + CPOL_PRM_MAX, emit_bound(m, CPOL_PRM_F_MAX, m->imax, m->fmax));
		emit_put_u64(r + CPOL_PRM_MIN_LENGTH,
			     (m->flags & CPOL_PRM_F_MIN_LENGTH) ? m->min_length : 0);
		emit_put_u64(r + CPOL_PRM_MAX_LENGTH,
			     (m->flags & CPOL_PRM_F_MAX_LENGTH) ? m->max_length : 0);
		emit_put_u64(r + CPOL_PRM_MAX_ITEMS,
			     (m->flags & CPOL_PRM_F_MAX_ITEMS) ? m->max_items : 0);
		if (emit_strs(c, r, CPOL_PRM_ENUM, &m->enums) < 0)
			return -1;
		emit_put_u32(r + CPOL_PRM_ITEMS, m->items);
		emit_range(r, CPOL_PRM_PROPS, m->props);
	}
	return 0;
}

static int emit_agents(struct emit_ctx *c, const struct cpol_policy *p)
{
	size_t rec = emit_has_sessions(p) ? CPOL_AGENT_SESSION_BYTES : CPOL_AGENT_BYTES;
	uint8_t *base;

	if (emit_records(c, CPOL_SEC_AGENTS, p->nagents, rec, &base) < 0)
		return -1;
	for (uint32_t i = 0; i < p->nagents; i++) {
		const struct cpol_agent *a = &p->agents[i];
		const struct cpol_session *s = &a->session;
		uint8_t *r = base + i * rec;

		if (emit_str(c, r, CPOL_AGT_NAME, a->name) < 0 ||
		    emit_idxs(c, r, CPOL_AGT_TOOLS, a->tools, a->ntools) < 0)
			return -1;
		if (rec == CPOL_AGENT_BYTES || !(s->flags & CPOL_AGT_F_SESSION))
			continue; /* no sessions: the tail stays 0 */
		emit_put_u32(r + CPOL_AGT_SESSION_FLAGS, s->flags);
		emit_put_u32(r + CPOL_AGT_SESSION_MAX_CELLS, s->max_cells);
		emit_put_u64(r + CPOL_AGT_SESSION_IDLE_MS, s->idle_ms);
		emit_put_u64(r + CPOL_AGT_SESSION_LIFE_MS, s->life_ms);
		emit_put_u64(r + CPOL_AGT_SESSION_CPU_MS, s->cpu_ms);
		emit_put_u64(r + CPOL_AGT_SESSION_WS_BYTES, s->ws_bytes);
	}
	return 0;
}

static int emit_outputs(struct emit_ctx *c, const struct cpol_policy *p)
{
	uint8_t *base;

	if (emit_records(c, CPOL_SEC_OUTPUTS, p->noutputs, CPOL_OUTPUT_BYTES, &base) < 0)
		return -1;
	for (uint32_t i = 0; i < p->noutputs; i++) {
		const struct cpol_output *o = &p->outputs[i];
		uint8_t *r = base + (size_t)i * CPOL_OUTPUT_BYTES;

		if (emit_str(c, r, CPOL_OUT_PATH, o->path) < 0)
			return -1;
		emit_put_u64(r + CPOL_OUT_MAX_BYTES, o->max_bytes);
		emit_put_u32(r + CPOL_OUT_FLAGS, o->flags);
	}
	return 0;
}

static int emit_signature(struct emit_ctx *c, const struct cpol_signature *s)
{
	uint8_t *r;

	if (emit_records(c, CPOL_SEC_SIGNATURE, 1, CPOL_SIGNATURE_BYTES, &r) < 0)
		return -1;
	emit_put_u32(r + CPOL_SIG_ALGO, s->algo);
	memcpy(r + CPOL_SIG_KEYID, s->keyid, sizeof(s->keyid));
	memcpy(r + CPOL_SIG_BYTES_OFF, s->sig, sizeof(s->sig));
	return 0;
}

/* One instruction per record; the operand field b holds what the op needs
 * (cpol.h, enum cpol_op) and stays zero otherwise, so each program has one
 * byte layout. */
static int emit_constraints(struct emit_ctx *c, const struct cpol_policy *p)
{
	uint8_t *base;

	if (emit_records(c, CPOL_SEC_CONSTRAINTS, p->nconstraints, CPOL_INSN_BYTES, &base) < 0)
		return -1;
	for (uint32_t i = 0; i < p->nconstraints; i++) {
		const struct cpol_insn *in = &p->constraints[i];
		uint8_t *r = base + (size_t)i * CPOL_INSN_BYTES;
		uint64_t bits = 0;

		r[CPOL_INSN_OP] = in->op;
		r[CPOL_INSN_TYPE] = in->type;
		emit_put_u32(r + CPOL_INSN_A, in->a);
		switch (in->op) {
		case CPOL_OP_INT:
			emit_put_u64(r + CPOL_INSN_B, (uint64_t)in->ival);
			break;
		case CPOL_OP_NUM:
			memcpy(&bits, &in->fval, sizeof(bits));
			emit_put_u64(r + CPOL_INSN_B, bits);
			break;
		case CPOL_OP_STR:
		case CPOL_OP_STARTS_WITH:
		case CPOL_OP_ENDS_WITH:
			if (emit_str(c, r, CPOL_INSN_B, in->str) < 0)
				return -1;
			break;
		case CPOL_OP_IN:
			if (emit_strs(c, r, CPOL_INSN_B, &in->list) < 0)
				return -1;
			break;
		default:
			break;
		}
	}
	return 0;
}

/* 3.5's provenance, only in a policy that has it: without, the blob is
 * byte for byte what a 3.4 writer made. */
static int emit_sources(struct emit_ctx *c, const struct cpol_provenance *v)
{
	uint8_t *base;

	if (!v->has)
		return 0;
	if (emit_records(c, CPOL_SEC_SOURCES, v->nsources, CPOL_SOURCE_BYTES, &base) < 0)
		return -1;
	for (uint32_t i = 0; i < v->nsources; i++) {
		uint8_t *r = base + (size_t)i * CPOL_SOURCE_BYTES;

		emit_put_u32(r + CPOL_SRC_ROLE, v->sources[i].role);
		if (emit_str(c, r, CPOL_SRC_NAME, v->sources[i].name) < 0)
			return -1;
		memcpy(r + CPOL_SRC_SHA256, v->sources[i].sha256, 32);
	}
	return 0;
}

static int emit_lint(struct emit_ctx *c, const struct cpol_provenance *v)
{
	uint8_t *r;

	if (!v->has)
		return 0;
	if (emit_records(c, CPOL_SEC_LINT, 1, CPOL_LINT_BYTES, &r) < 0 ||
	    emit_str(c, r, CPOL_LINT_CATALOGUE, v->catalogue) < 0)
		return -1;
	emit_put_u32(r + CPOL_LINT_ERRORS, v->errors);
	emit_put_u32(r + CPOL_LINT_WARNINGS, v->warnings);
	emit_put_u32(r + CPOL_LINT_NOTES, v->notes);
	emit_put_u32(r + CPOL_LINT_SUPPRESSED, v->suppressed);
	return emit_strs(c, r, CPOL_LINT_RULES, &v->rules);
}

/* The walk: every section in table order, so strings are interned in one fixed
 * order (STRTAB, STRLIST and IDXLIST fill up as a side effect). */
static int emit_walk(struct emit_ctx *c, const struct cpol_policy *p)
{
	/* Byte 0 of the string table is the NUL every empty string names. */
	if (emit_grow(c, CPOL_SEC_STRTAB, 1) == NULL)
		return -1;
	if (emit_meta(c, &p->meta) < 0 || emit_limits(c, &p->limits) < 0 ||
	    emit_executor(c, &p->exec) < 0 || emit_env(c, p) < 0 || emit_mounts(c, p) < 0 ||
	    emit_seccomp(c, p) < 0 || emit_tools(c, p) < 0 || emit_params(c, p) < 0 ||
	    emit_constraints(c, p) < 0 || emit_agents(c, p) < 0 || emit_outputs(c, p) < 0 ||
	    emit_sources(c, &p->prov) < 0 || emit_lint(c, &p->prov) < 0 ||
	    emit_signature(c, &p->signature) < 0)
		return -1;
	c->count[CPOL_SEC_STRTAB] = (uint32_t)c->sec[CPOL_SEC_STRTAB].len;
	return 0;
}

static size_t emit_align(size_t n)
{
	return (n + CPOL_ALIGN - 1) & ~(size_t)(CPOL_ALIGN - 1);
}

int blob_emit(struct cpol_policy *p, uint8_t **out, size_t *outlen, struct blob_error *err)
{
	struct emit_ctx c;
	uint64_t offs[CPOL_SEC_MAX_ID + 1];
	uint8_t *blob = NULL;
	uint32_t nsec = p->prov.has ? CPOL_SEC_COUNT_PROV : CPOL_SEC_COUNT;
	size_t total = CPOL_HEADER_SIZE + (size_t)nsec * CPOL_SEC_ENT_BYTES;
	uint16_t minor;
	int rc = -1;

	memset(&c, 0, sizeof(c));
	memset(err, 0, sizeof(*err));
	c.err = err;
	*out = NULL;
	*outlen = 0;

	if (emit_walk(&c, p) < 0)
		goto out;

	/* Every section was capped at the blob limit, so this sum of
	 * seventeen of them cannot overflow; the total is checked against the
	 * limit. */
	for (uint32_t i = 0; i < nsec; i++) {
		uint32_t id = policy_section_at(nsec, i);

		offs[id] = emit_align(total);
		total = offs[id] + c.sec[id].len;
	}
	if (total > CPOL_MAX_BLOB_SIZE) {
		emit_fail(&c, "header.total_size",
			  "The policy needs a blob of %zu bytes; the format allows at most %u.", total,
			  CPOL_MAX_BLOB_SIZE);
		goto out;
	}
	blob = calloc(1, total); /* zero: the padding between sections */
	if (blob == NULL) {
		emit_fail(&c, "policy", "Out of memory while writing the blob.");
		goto out;
	}

	memcpy(blob + CPOL_HDR_MAGIC, CPOL_MAGIC, CPOL_MAGIC_LEN);
	emit_put_u16(blob + CPOL_HDR_MAJOR, CPOL_VERSION_MAJOR);
	/* The oldest minor that holds this policy (cpol.h): without preloads,
	 * result schemas or a CPU quota the blob is exactly what a 3.0 writer
	 * made. */
	minor = emit_minor(p);
	emit_put_u16(blob + CPOL_HDR_MINOR, minor);
	/* A policy that names no arch targets the only one the format has. */
	if (p->arch == 0)
		p->arch = CPOL_ARCH_X86_64;
	emit_put_u32(blob + CPOL_HDR_ARCH, p->arch);
	emit_put_u64(blob + CPOL_HDR_TOTAL_SIZE, total);
	emit_put_u32(blob + CPOL_HDR_SECTION_COUNT, nsec);
	emit_put_u32(blob + CPOL_HDR_TABLE_END, CPOL_HEADER_SIZE + nsec * CPOL_SEC_ENT_BYTES);
	for (uint32_t i = 0; i < nsec; i++) {
		uint32_t id = policy_section_at(nsec, i);
		uint8_t *e = blob + CPOL_HEADER_SIZE + (size_t)i * CPOL_SEC_ENT_BYTES;

		emit_put_u32(e + CPOL_SEC_ENT_ID, id);
		emit_put_u32(e + CPOL_SEC_ENT_COUNT, c.count[id]);
		emit_put_u64(e + CPOL_SEC_ENT_OFFSET, offs[id]);
		emit_put_u64(e + CPOL_SEC_ENT_SIZE, c.sec[id].len);
		if (c.sec[id].len)
			memcpy(blob + offs[id], c.sec[id].data, c.sec[id].len);
	}

	/* Hash last: it covers everything above except the signature. */
	blob_hash(blob, offs[CPOL_SEC_SIGNATURE], p->sha256);
	memcpy(blob + CPOL_HDR_SHA256, p->sha256, sizeof(p->sha256));
	p->major = CPOL_VERSION_MAJOR;
	p->minor = minor;

	*out = blob;
	*outlen = total;
	blob = NULL;
	rc = 0;
out:
	free(blob);
	for (int id = 0; id <= CPOL_SEC_MAX_ID; id++)
		free(c.sec[id].data);
	free(c.intern.slots);
	return rc;
}
