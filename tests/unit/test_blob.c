/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_blob.c - compiler/emit.c and runtime/blob_load.c against each other.
 *
 * A rich policy is built by hand, emitted, loaded back and compared field
 * by field.  Then the loader is attacked: every byte of the blob is set to
 * every other value (with the hash recomputed, so the checks behind the
 * hash are reached), every truncation is tried, and targeted corruptions
 * must be refused naming the field at fault.  A mutated blob the loader
 * accepts must still satisfy an invariant checker written here, apart from
 * the loader, so the two do not share a blind spot.
 *
 * Environment:
 *   CORDON_WRITE_SEEDS=dir   also write the fuzz seed blobs into dir
 *                            (tests/fuzz/corpus/blob holds the committed ones)
 *   CORDON_MUTATION_STRIDE=n try every n-th byte value per offset (default 1,
 *                            every value); a speed knob for slow sanitizers,
 *                            not needed by `make check SAN=1` today
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "cordon/blob.h"

/* ---- building policies ------------------------------------------------- */

static struct cpol_strs mk_strs(struct cpol_policy *p, uint32_t n, ...)
{
	struct cpol_strs s = { NULL, n };
	va_list ap;

	if (n == 0)
		return s;
	s.v = arena_calloc(&p->arena, n, sizeof(*s.v));
	assert_non_null(s.v);
	va_start(ap, n);
	for (uint32_t i = 0; i < n; i++)
		s.v[i] = va_arg(ap, const char *);
	va_end(ap);
	return s;
}

static uint32_t *mk_idx(struct cpol_policy *p, uint32_t n, ...)
{
	uint32_t *v;
	va_list ap;

	if (n == 0)
		return NULL;
	v = arena_calloc(&p->arena, n, sizeof(*v));
	assert_non_null(v);
	va_start(ap, n);
	for (uint32_t i = 0; i < n; i++)
		v[i] = va_arg(ap, uint32_t);
	va_end(ap);
	return v;
}

static struct cpol_param *mk_param(struct cpol_policy *p, uint32_t i, const char *name,
				   uint32_t type, uint32_t flags)
{
	struct cpol_param *m = &p->params[i];

	m->name = name;
	m->type = type;
	m->flags = flags;
	m->items = CPOL_NONE;
	return m;
}

/* Indices of interesting params in the rich policy, for targeted tests. */
enum {
	P_BODY = 0,
	P_SUBJECT = 1,
	P_TO = 2,
	P_TO_ITEMS = 3,
	P_FILTER = 4,
	P_LIMIT = 5,
	P_MAX_PRICE = 6,
	P_TAGS = 7,
	P_TAGS_ITEMS = 8,
	P_FORMAT = 9,
	P_ROWS = 10,
	P_VERBOSE = 11,
	P_COUNT = 12,
};

/*
 * A policy that touches every section and most fields.  Tables are sorted
 * by strcmp; params form a forest with forward references only:
 *
 *   mail.send    -> [0 body, 1 subject, 2 to -> items 3]
 *   menu.lookup  -> [4 filter -> props [6 max_price, 7 tags -> items 8], 5 limit]
 *   report.write -> [9 format, 10 rows, 11 verbose]
 */
static void build_rich(struct cpol_policy *p)
{
	struct cpol_param *m;

	policy_init(p);
	p->arch = CPOL_ARCH_X86_64;
	p->meta = (struct cpol_meta){ "cafe-report", 3, 7 };
	p->limits = (struct cpol_limits){
		.timeout_ms = 30000,
		.max_file_bytes = 1u << 20,
		.ws_delta_bytes = 8u << 20,
		.ws_max_bytes = 64u << 20,
		.monitor_ms = 250,
		.max_output_bytes = 1u << 16,
		.max_result_bytes = 1u << 16,
		.max_code_bytes = 1u << 18,
		.memory_bytes = 256u << 20,
		.max_tool_request_bytes = 1u << 16,
		.pids = 64,
		.open_files = 256,
		.mode = CPOL_MODE_ISOLATED,
		.ws_entries = CPOL_MAX_WS_ENTRIES, /* the largest allowed */
		.cpu_milli = 1500, /* format 3.3: the longer LIMITS record */
	};
	p->exec = (struct cpol_executor){
		.interpreter = "/usr/bin/python3",
		.uid = 1001,
		.gid = 1001,
		.network = CPOL_NET_LOOPBACK,
		.flags = CPOL_EXE_F_LANDLOCK,
		.require = CPOL_LAYER_LANDLOCK | CPOL_LAYER_CGROUP,
		.seccomp_profile = "python-compute",
		.seccomp_extra = "",
	};
	p->exec.preload = mk_strs(p, 2, "numpy", "xml.etree.ElementTree").v;
	p->exec.npreload = 2;

	p->nenv = 4;
	p->env = arena_calloc(&p->arena, p->nenv, sizeof(*p->env));
	assert_non_null(p->env);
	p->env[0] = (struct cpol_env){ "HOME", "/workspace" };
	p->env[1] = (struct cpol_env){ "LANG", "C.UTF-8" };
	p->env[2] = (struct cpol_env){ "PATH", "/usr/bin:/bin" };
	p->env[3] = (struct cpol_env){ "PYTHONDONTWRITEBYTECODE", "1" };

	p->nmounts = 4;
	p->mounts = arena_calloc(&p->arena, p->nmounts, sizeof(*p->mounts));
	assert_non_null(p->mounts);
	p->mounts[0] = (struct cpol_mount){ CPOL_MOUNT_TMPFS, CPOL_MNT_F_RW, "", "/tmp", 64u << 20 };
	p->mounts[1] = (struct cpol_mount){ CPOL_MOUNT_BIND, 0, "/usr", "/usr", 0 };
	p->mounts[2] = (struct cpol_mount){ CPOL_MOUNT_BIND, 0, "/srv/cafe/in", "/workspace/in", 0 };
	p->mounts[3] = (struct cpol_mount){ CPOL_MOUNT_BIND, CPOL_MNT_F_RW, "/var/lib/cordon/out",
					    "/workspace/out", 0 };

	p->nseccomp = 5;
	p->seccomp = arena_calloc(&p->arena, p->nseccomp, sizeof(*p->seccomp));
	assert_non_null(p->seccomp);
	p->seccomp[0] = (struct cpol_bpf){ 0x20, 0, 0, 4 };          /* ld arch */
	p->seccomp[1] = (struct cpol_bpf){ 0x15, 1, 0, 0xC000003E }; /* jeq x86_64 */
	p->seccomp[2] = (struct cpol_bpf){ 0x06, 0, 0, 0x80000000 }; /* kill process */
	p->seccomp[3] = (struct cpol_bpf){ 0x20, 0, 0, 0 };          /* ld nr */
	p->seccomp[4] = (struct cpol_bpf){ 0x06, 0, 0, 0x7FFF0000 }; /* allow */

	p->ntools = 3;
	p->tools = arena_calloc(&p->arena, p->ntools, sizeof(*p->tools));
	assert_non_null(p->tools);
	p->tools[0] = (struct cpol_tool){
		.id = "mail.send",
		.description = "Send one mail to the café's suppliers.",
		.flags = CPOL_TOOL_F_SIDE_EFFECT | CPOL_TOOL_F_REPLAY,
		.max_calls = 3,
		.max_calls_per_day = 50,
		.run_as = CPOL_RUN_AS_IDS,
		.run_uid = 2001,
		.run_gid = 2002,
		.memory_bytes = 64u << 20,
		.pids = 8,
		.timeout_ms = 5000,
		.exec = mk_strs(p, 2, "/opt/cordon/tools/mail", "--send"),
		.env_from = mk_strs(p, 2, "SMTP_HOST", "SMTP_PASSWORD"),
		.roles = mk_strs(p, 1, "mailer"),
		.params = { P_BODY, 3 },
	};
	p->tools[1] = (struct cpol_tool){
		.id = "menu.lookup",
		.description = "Look up menu items.",
		.run_as = CPOL_RUN_AS_USER,
		.run_user = "cafe-tools",
		.memory_bytes = 256u << 20,
		.pids = CPOL_TOOL_MAX_PIDS, /* the largest allowed */
		.timeout_ms = 2000,
		.exec = mk_strs(p, 1, "/opt/cordon/tools/menu"),
		.params = { P_FILTER, 2 },
	};
	p->tools[2] = (struct cpol_tool){
		.id = "report.write",
		.description = "",
		.flags = CPOL_TOOL_F_SIDE_EFFECT,
		.max_calls_per_day = CPOL_TOOL_MAX_PER_DAY, /* the largest allowed */
		.run_as = CPOL_RUN_AS_SUPERVISOR,
		.memory_bytes = 1, /* the smallest the format allows */
		.pids = 1,
		.timeout_ms = 10000,
		.exec = mk_strs(p, 3, "/usr/bin/python3", "-m", "report"),
		.roles = mk_strs(p, 2, "analyst", "mailer"),
		.params = { P_FORMAT, 3 },
	};

	p->nparams = P_COUNT;
	p->params = arena_calloc(&p->arena, p->nparams, sizeof(*p->params));
	assert_non_null(p->params);
	m = mk_param(p, P_BODY, "body", CPOL_T_STRING,
		     CPOL_PRM_F_REQUIRED | CPOL_PRM_F_MIN_LENGTH | CPOL_PRM_F_MAX_LENGTH);
	m->min_length = 1;
	m->max_length = 10000;
	m = mk_param(p, P_SUBJECT, "subject", CPOL_T_STRING, CPOL_PRM_F_MAX_LENGTH);
	m->max_length = 200;
	m = mk_param(p, P_TO, "to", CPOL_T_ARRAY, CPOL_PRM_F_REQUIRED | CPOL_PRM_F_MAX_ITEMS);
	m->max_items = 10;
	m->items = P_TO_ITEMS;
	m = mk_param(p, P_TO_ITEMS, "", CPOL_T_STRING, CPOL_PRM_F_MIN_LENGTH);
	m->min_length = 3;
	m = mk_param(p, P_FILTER, "filter", CPOL_T_OBJECT, 0);
	m->props = (struct cpol_range){ P_MAX_PRICE, 2 };
	m = mk_param(p, P_LIMIT, "limit", CPOL_T_INTEGER,
		     CPOL_PRM_F_REQUIRED | CPOL_PRM_F_MIN | CPOL_PRM_F_MAX);
	m->imin = 1;
	m->imax = 50;
	m = mk_param(p, P_MAX_PRICE, "max_price", CPOL_T_NUMBER, CPOL_PRM_F_MIN | CPOL_PRM_F_MAX);
	m->fmin = 0.0;
	m->fmax = 99.5;
	m = mk_param(p, P_TAGS, "tags", CPOL_T_ARRAY, CPOL_PRM_F_MAX_ITEMS);
	m->max_items = 5;
	m->items = P_TAGS_ITEMS;
	m = mk_param(p, P_TAGS_ITEMS, "", CPOL_T_STRING, 0);
	m->enums = mk_strs(p, 3, "gluten-free", "vegan", "vegetarian");
	m = mk_param(p, P_FORMAT, "format", CPOL_T_STRING, CPOL_PRM_F_REQUIRED);
	m->enums = mk_strs(p, 2, "csv", "md");
	m = mk_param(p, P_ROWS, "rows", CPOL_T_INTEGER, CPOL_PRM_F_MIN);
	m->imin = -5;
	mk_param(p, P_VERBOSE, "verbose", CPOL_T_BOOLEAN, 0);

	p->nagents = 3;
	p->agents = arena_calloc(&p->arena, p->nagents, sizeof(*p->agents));
	assert_non_null(p->agents);
	p->agents[0] = (struct cpol_agent){ "analyst", mk_idx(p, 2, 1u, 2u), 2, { 0 } };
	p->agents[1] = (struct cpol_agent){ "assistant", mk_idx(p, 3, 0u, 1u, 2u), 3, { 0 } };
	p->agents[2] = (struct cpol_agent){ "viewer", NULL, 0, { 0 } };

	p->noutputs = 2;
	p->outputs = arena_calloc(&p->arena, p->noutputs, sizeof(*p->outputs));
	assert_non_null(p->outputs);
	p->outputs[0] = (struct cpol_output){ "report.csv", 1u << 20, CPOL_OUT_F_REQUIRED };
	p->outputs[1] = (struct cpol_output){ "summary/*.md", 1u << 16, 0 };
}

/* The least a loadable policy needs: one record each for meta, limits,
 * executor and signature, and nothing in the tables. */
static void build_minimal(struct cpol_policy *p)
{
	policy_init(p);
	p->arch = CPOL_ARCH_X86_64;
	p->limits = (struct cpol_limits){ 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, CPOL_MODE_LOCAL, 1, 0 };
	/* META / EXECUTOR strings left NULL: emit writes them as "". */
}

/* ---- comparing --------------------------------------------------------- */

static void assert_strs_equal(const struct cpol_strs *a, const struct cpol_strs *b)
{
	assert_int_equal(a->n, b->n);
	for (uint32_t i = 0; i < a->n; i++)
		assert_string_equal(a->v[i], b->v[i]);
}

/* An empty range has no meaningful first. */
static void assert_range_equal(struct cpol_range a, struct cpol_range b)
{
	assert_int_equal(a.count, b.count);
	if (a.count)
		assert_int_equal(a.first, b.first);
}

static const char *nz(const char *s)
{
	return s ? s : "";
}

static void assert_policy_equal(const struct cpol_policy *a, const struct cpol_policy *b)
{
	assert_string_equal(nz(a->meta.app), nz(b->meta.app));
	assert_int_equal(a->meta.descriptor_version, b->meta.descriptor_version);
	assert_int_equal(a->meta.inventory_version, b->meta.inventory_version);

	assert_memory_equal(&a->limits, &b->limits, sizeof(a->limits)); /* no padding */

	assert_string_equal(nz(a->exec.interpreter), nz(b->exec.interpreter));
	assert_int_equal(a->exec.uid, b->exec.uid);
	assert_int_equal(a->exec.gid, b->exec.gid);
	assert_int_equal(a->exec.network, b->exec.network);
	assert_int_equal(a->exec.flags, b->exec.flags);
	assert_int_equal(a->exec.require, b->exec.require);
	assert_string_equal(nz(a->exec.seccomp_profile), nz(b->exec.seccomp_profile));
	assert_string_equal(nz(a->exec.seccomp_extra), nz(b->exec.seccomp_extra));
	assert_int_equal(a->exec.npreload, b->exec.npreload);
	for (uint32_t i = 0; i < a->exec.npreload; i++)
		assert_string_equal(a->exec.preload[i], b->exec.preload[i]);
	assert_int_equal(a->exec.npackages, b->exec.npackages);
	for (uint32_t i = 0; i < a->exec.npackages; i++)
		assert_string_equal(a->exec.packages[i], b->exec.packages[i]);

	assert_int_equal(a->nenv, b->nenv);
	for (uint32_t i = 0; i < a->nenv; i++) {
		assert_string_equal(a->env[i].key, b->env[i].key);
		assert_string_equal(a->env[i].value, b->env[i].value);
	}

	assert_int_equal(a->nmounts, b->nmounts);
	for (uint32_t i = 0; i < a->nmounts; i++) {
		assert_int_equal(a->mounts[i].type, b->mounts[i].type);
		assert_int_equal(a->mounts[i].flags, b->mounts[i].flags);
		assert_string_equal(a->mounts[i].source, b->mounts[i].source);
		assert_string_equal(a->mounts[i].target, b->mounts[i].target);
		assert_int_equal(a->mounts[i].size, b->mounts[i].size);
	}

	assert_int_equal(a->nseccomp, b->nseccomp);
	for (uint32_t i = 0; i < a->nseccomp; i++) {
		assert_int_equal(a->seccomp[i].code, b->seccomp[i].code);
		assert_int_equal(a->seccomp[i].jt, b->seccomp[i].jt);
		assert_int_equal(a->seccomp[i].jf, b->seccomp[i].jf);
		assert_int_equal(a->seccomp[i].k, b->seccomp[i].k);
	}

	assert_int_equal(a->ntools, b->ntools);
	for (uint32_t i = 0; i < a->ntools; i++) {
		const struct cpol_tool *x = &a->tools[i], *y = &b->tools[i];

		assert_string_equal(x->id, y->id);
		assert_string_equal(nz(x->description), nz(y->description));
		assert_int_equal(x->flags, y->flags);
		assert_int_equal(x->max_calls, y->max_calls);
		assert_int_equal(x->max_calls_per_day, y->max_calls_per_day);
		assert_int_equal(x->run_as, y->run_as);
		assert_int_equal(x->run_uid, y->run_uid);
		assert_int_equal(x->run_gid, y->run_gid);
		assert_string_equal(nz(x->run_user), nz(y->run_user));
		assert_int_equal(x->memory_bytes, y->memory_bytes);
		assert_int_equal(x->pids, y->pids);
		assert_int_equal(x->returns, y->returns);
		assert_int_equal(x->timeout_ms, y->timeout_ms);
		assert_strs_equal(&x->exec, &y->exec);
		assert_strs_equal(&x->env_from, &y->env_from);
		assert_strs_equal(&x->roles, &y->roles);
		assert_range_equal(x->params, y->params);
		assert_range_equal(x->constraints, y->constraints);
	}

	assert_int_equal(a->nparams, b->nparams);
	for (uint32_t i = 0; i < a->nparams; i++) {
		const struct cpol_param *x = &a->params[i], *y = &b->params[i];

		assert_string_equal(x->name, y->name);
		assert_int_equal(x->type, y->type);
		assert_int_equal(x->flags, y->flags);
		if (x->type == CPOL_T_INTEGER) {
			assert_int_equal(x->flags & CPOL_PRM_F_MIN ? x->imin : 0, y->imin);
			assert_int_equal(x->flags & CPOL_PRM_F_MAX ? x->imax : 0, y->imax);
		}
		if (x->type == CPOL_T_NUMBER) {
			/* Bit-exact: the blob carries IEEE-754 bits. */
			double xmin = x->flags & CPOL_PRM_F_MIN ? x->fmin : 0;
			double xmax = x->flags & CPOL_PRM_F_MAX ? x->fmax : 0;

			assert_memory_equal(&xmin, &y->fmin, sizeof(double));
			assert_memory_equal(&xmax, &y->fmax, sizeof(double));
		}
		assert_int_equal(x->min_length, y->min_length);
		assert_int_equal(x->max_length, y->max_length);
		assert_int_equal(x->max_items, y->max_items);
		assert_strs_equal(&x->enums, &y->enums);
		assert_int_equal(x->items, y->items);
		assert_range_equal(x->props, y->props);
	}

	assert_int_equal(a->nagents, b->nagents);
	for (uint32_t i = 0; i < a->nagents; i++) {
		assert_string_equal(a->agents[i].name, b->agents[i].name);
		assert_int_equal(a->agents[i].ntools, b->agents[i].ntools);
		for (uint32_t k = 0; k < a->agents[i].ntools; k++)
			assert_int_equal(a->agents[i].tools[k], b->agents[i].tools[k]);
	}

	assert_int_equal(a->noutputs, b->noutputs);
	for (uint32_t i = 0; i < a->noutputs; i++) {
		assert_string_equal(a->outputs[i].path, b->outputs[i].path);
		assert_int_equal(a->outputs[i].max_bytes, b->outputs[i].max_bytes);
		assert_int_equal(a->outputs[i].flags, b->outputs[i].flags);
	}

	assert_int_equal(a->nconstraints, b->nconstraints);
	assert_int_equal(a->signature.algo, b->signature.algo);
	assert_memory_equal(a->signature.keyid, b->signature.keyid, sizeof(a->signature.keyid));
	assert_memory_equal(a->signature.sig, b->signature.sig, sizeof(a->signature.sig));
}

/* ---- an independent invariant checker ---------------------------------- */

/* Written from cpol.h and policy.h, not from blob_load.c: what any code
 * using a loaded policy may rely on.  Returns NULL or what is broken. */

static int str_ok(const char *s)
{
	/* Strings live in the policy's arena; a missing terminator would run
	 * off the arena chunk, which ASan reports. */
	return s != NULL && strlen(s) < CPOL_MAX_BLOB_SIZE;
}

static int strs_ok(const struct cpol_strs *l)
{
	if (l->n == 0)
		return 1;
	if (l->v == NULL)
		return 0;
	for (uint32_t i = 0; i < l->n; i++)
		if (!str_ok(l->v[i]))
			return 0;
	return 1;
}

static const char *check_params(const struct cpol_policy *p)
{
	uint32_t n = p->nparams;
	uint32_t *refs = calloc(n ? n : 1, sizeof(*refs));
	const char *why = NULL;

#define BAD(msg)                                                                                   \
	do {                                                                                       \
		why = msg;                                                                         \
		goto out;                                                                          \
	} while (0)
	if (refs == NULL)
		BAD("out of memory");
	for (uint32_t t = 0; t < p->ntools; t++) {
		struct cpol_range r = p->tools[t].params;

		if (r.count > n || r.first > n - r.count)
			BAD("tool params out of range");
		for (uint32_t k = r.first; k < r.first + r.count; k++) {
			refs[k]++;
			if (p->params[k].name[0] == '\0')
				BAD("tool param without a name");
			if (k > r.first && strcmp(p->params[k - 1].name, p->params[k].name) >= 0)
				BAD("tool params not sorted");
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct cpol_param *m = &p->params[i];

		if (!str_ok(m->name) || !strs_ok(&m->enums))
			BAD("param string");
		if (m->type < CPOL_T_STRING || m->type > CPOL_T_OBJECT)
			BAD("param type");
		if (m->flags & ~CPOL_PRM_F_ALL)
			BAD("param flags");
		if (m->enums.n && m->type != CPOL_T_STRING)
			BAD("enum on a non-string");
		if (m->type == CPOL_T_ARRAY) {
			if (m->items == CPOL_NONE || m->items >= n || m->items <= i)
				BAD("array items index");
			refs[m->items]++;
			if (p->params[m->items].name[0] != '\0')
				BAD("named items spec");
		} else if (m->items != CPOL_NONE) {
			BAD("items on a non-array");
		}
		if (m->props.count) {
			if (m->type != CPOL_T_OBJECT)
				BAD("props on a non-object");
			if (m->props.count > n || m->props.first > n - m->props.count ||
			    m->props.first <= i)
				BAD("props range");
			for (uint32_t k = m->props.first; k < m->props.first + m->props.count; k++) {
				refs[k]++;
				if (p->params[k].name[0] == '\0')
					BAD("property without a name");
				if (k > m->props.first &&
				    strcmp(p->params[k - 1].name, p->params[k].name) >= 0)
					BAD("props not sorted");
			}
		}
		if (m->type == CPOL_T_NUMBER &&
		    (!isfinite(m->fmin) || !isfinite(m->fmax) ||
		     ((m->flags & CPOL_PRM_F_MIN) && (m->flags & CPOL_PRM_F_MAX) && m->fmin > m->fmax)))
			BAD("number bounds");
		if (m->type == CPOL_T_INTEGER && (m->flags & CPOL_PRM_F_MIN) &&
		    (m->flags & CPOL_PRM_F_MAX) && m->imin > m->imax)
			BAD("integer bounds");
		if ((m->flags & CPOL_PRM_F_MIN_LENGTH) && (m->flags & CPOL_PRM_F_MAX_LENGTH) &&
		    m->min_length > m->max_length)
			BAD("length bounds");
	}
	for (uint32_t i = 0; i < n; i++)
		if (refs[i] != 1)
			BAD("param not owned exactly once");
out:
#undef BAD
	free(refs);
	return why;
}

/* A preload name, checked here by a regular expression's hand, apart from
 * policy_module_name_ok(): letters, digits, '_' and '.', no digit or '.'
 * after a '.' or at the start, no '.' at the end. */
static int preload_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > CPOL_PRELOAD_NAME_MAX || s[n - 1] == '.')
		return 0;
	for (size_t i = 0; i < n; i++) {
		int first = i == 0 || s[i - 1] == '.';
		char c = s[i];

		if (c == '.' ? first : !(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
					(!first && c >= '0' && c <= '9')))
			return 0;
	}
	return 1;
}

static const char *check_preload(const struct cpol_policy *p)
{
	const struct cpol_executor *e = &p->exec;

	if (e->npreload > CPOL_MAX_PRELOAD || (e->npreload && (e->preload == NULL || p->minor < 1)))
		return "preload count";
	if (e->npackages > CPOL_MAX_PACKAGES ||
	    (e->npackages && (e->packages == NULL || p->minor < CPOL_MINOR_PACKAGES)))
		return "package count";
	for (uint32_t i = 0; i < e->npreload; i++) {
		if (!str_ok(e->preload[i]) || !preload_name_ok(e->preload[i]))
			return "preload name";
		for (uint32_t j = 0; j < i; j++)
			if (strcmp(e->preload[i], e->preload[j]) == 0)
				return "preload duplicate";
	}
	/* One name once in both lists. */
	for (uint32_t i = 0; i < e->npackages; i++) {
		if (!str_ok(e->packages[i]) || !preload_name_ok(e->packages[i]))
			return "package name";
		for (uint32_t j = 0; j < i; j++)
			if (strcmp(e->packages[i], e->packages[j]) == 0)
				return "package duplicate";
		for (uint32_t j = 0; j < e->npreload; j++)
			if (strcmp(e->packages[i], e->preload[j]) == 0)
				return "package also preloaded";
	}
	return NULL;
}

static const char *check_invariants(const struct cpol_policy *p)
{
	const struct cpol_limits *l = &p->limits;

	if (p->major != CPOL_VERSION_MAJOR || p->minor > CPOL_VERSION_MINOR ||
	    p->arch != CPOL_ARCH_X86_64)
		return "version or arch";
	if (!str_ok(p->meta.app) || !str_ok(p->exec.interpreter) ||
	    !str_ok(p->exec.seccomp_profile) || !str_ok(p->exec.seccomp_extra))
		return "meta/executor string";
	if (!l->timeout_ms || !l->monitor_ms || !l->pids || !l->open_files || !l->max_file_bytes ||
	    !l->ws_delta_bytes || !l->max_output_bytes || !l->max_result_bytes ||
	    !l->max_code_bytes || !l->memory_bytes || !l->max_tool_request_bytes || !l->ws_entries)
		return "zero limit";
	if (l->ws_entries > CPOL_MAX_WS_ENTRIES)
		return "workspace entries";
	if (l->cpu_milli != 0 &&
	    (p->minor < CPOL_MINOR_CPU || l->cpu_milli < CPOL_CPU_MILLI_MIN || l->cpu_milli > CPOL_CPU_MILLI_MAX))
		return "cpu quota";
	if (check_preload(p) != NULL)
		return check_preload(p);
	for (uint32_t i = 0; i < p->nagents; i++) {
		const struct cpol_session *ss = &p->agents[i].session;

		if (!(ss->flags & CPOL_AGT_F_SESSION) ?
			    (ss->flags || ss->max_cells || ss->idle_ms || ss->life_ms || ss->cpu_ms || ss->ws_bytes) :
			    (p->minor < CPOL_MINOR_SESSION || (ss->flags & ~CPOL_AGT_F_ALL) || !ss->max_cells ||
			     ss->max_cells > CPOL_SESSION_MAX_CELLS || ss->life_ms < CPOL_SESSION_MIN_MS ||
			     ss->life_ms > CPOL_SESSION_MAX_LIFE_MS || ss->idle_ms < CPOL_SESSION_MIN_MS ||
			     ss->idle_ms > ss->life_ms || !ss->cpu_ms || !ss->ws_bytes ||
			     ss->ws_bytes > CPOL_SESSION_MAX_WS_BYTES))
			return "agent session";
	}
	if (l->mode > CPOL_MODE_LOCAL || p->exec.network > CPOL_NET_LOOPBACK ||
	    (p->exec.flags & ~CPOL_EXE_F_ALL) || (p->exec.require & ~CPOL_LAYER_ALL))
		return "executor enum or flags";
	for (uint32_t i = 0; i < p->nenv; i++) {
		if (!str_ok(p->env[i].key) || !str_ok(p->env[i].value) || !p->env[i].key[0] ||
		    strchr(p->env[i].key, '='))
			return "env entry";
		if (i && strcmp(p->env[i - 1].key, p->env[i].key) >= 0)
			return "env order";
	}
	for (uint32_t i = 0; i < p->nmounts; i++) {
		const struct cpol_mount *m = &p->mounts[i];

		if (!str_ok(m->source) || !str_ok(m->target) || m->target[0] != '/' ||
		    (m->flags & ~CPOL_MNT_F_ALL))
			return "mount entry";
		if (m->type == CPOL_MOUNT_TMPFS ? (m->source[0] || !m->size)
						: (m->type != CPOL_MOUNT_BIND || m->source[0] != '/' ||
						   m->size))
			return "mount kind";
		if (i && strcmp(p->mounts[i - 1].target, m->target) >= 0)
			return "mount order";
	}
	if (p->nseccomp > CPOL_MAX_SECCOMP_INSNS || (p->nseccomp && !p->seccomp))
		return "seccomp size";
	for (uint32_t i = 0; i < p->ntools; i++) {
		const struct cpol_tool *t = &p->tools[i];

		if (!str_ok(t->id) || !t->id[0] || !str_ok(t->description) || !strs_ok(&t->exec) ||
		    !strs_ok(&t->env_from) || !strs_ok(&t->roles))
			return "tool strings";
		if (t->exec.n < 1 || t->exec.v[0][0] != '/' || t->timeout_ms == 0)
			return "tool exec or timeout";
		if ((t->flags & ~CPOL_TOOL_F_ALL) ||
		    ((t->flags & CPOL_TOOL_F_REPLAY) && !(t->flags & CPOL_TOOL_F_SIDE_EFFECT)))
			return "tool flags";
		if (t->max_calls_per_day > CPOL_TOOL_MAX_PER_DAY)
			return "tool daily budget";
		if (!t->memory_bytes || !t->pids || t->pids > CPOL_TOOL_MAX_PIDS)
			return "tool cgroup limits";
		if (!str_ok(t->run_user) || t->run_as > CPOL_RUN_AS_LAST)
			return "tool identity kind";
		/* Never root, in any spelling, and no field the kind does not use. */
		if (t->run_as == CPOL_RUN_AS_IDS ? (t->run_uid == 0 || t->run_gid == 0 || t->run_uid == UINT32_MAX ||
						    t->run_gid == UINT32_MAX || t->run_user[0])
						 : (t->run_uid || t->run_gid))
			return "tool identity ids";
		if (t->run_as == CPOL_RUN_AS_USER ? (!t->run_user[0] || strcmp(t->run_user, "root") == 0)
						  : t->run_user[0] != '\0')
			return "tool identity user";
		if (t->constraints.count != 0)
			return "tool constraints";
		if (i && strcmp(p->tools[i - 1].id, t->id) >= 0)
			return "tool order";
	}
	for (uint32_t i = 0; i < p->nagents; i++) {
		const struct cpol_agent *a = &p->agents[i];

		if (!str_ok(a->name) || !a->name[0] || (a->ntools && !a->tools))
			return "agent entry";
		for (uint32_t k = 0; k < a->ntools; k++)
			if (a->tools[k] >= p->ntools || (k && a->tools[k - 1] >= a->tools[k]))
				return "agent tools";
		if (i && strcmp(p->agents[i - 1].name, a->name) >= 0)
			return "agent order";
	}
	for (uint32_t i = 0; i < p->noutputs; i++) {
		if (!str_ok(p->outputs[i].path) || !p->outputs[i].path[0] ||
		    (p->outputs[i].flags & ~CPOL_OUT_F_ALL))
			return "output entry";
		if (i && strcmp(p->outputs[i - 1].path, p->outputs[i].path) >= 0)
			return "output order";
	}
	if (p->nconstraints != 0)
		return "constraints";
	if (p->signature.algo > CPOL_SIG_ED25519)
		return "signature algo";
	return check_params(p);
}

/* ---- helpers on raw blobs ---------------------------------------------- */

static uint64_t get_le(const uint8_t *b, size_t w)
{
	uint64_t v = 0;

	for (size_t i = 0; i < w; i++)
		v |= (uint64_t)b[i] << (8 * i);
	return v;
}

static void put_le(uint8_t *b, size_t w, uint64_t v)
{
	for (size_t i = 0; i < w; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static size_t sec_off(const uint8_t *blob, int id)
{
	return (size_t)get_le(blob + CPOL_HEADER_SIZE + (size_t)(id - 1) * CPOL_SEC_ENT_BYTES +
				      CPOL_SEC_ENT_OFFSET,
			      8);
}

static uint8_t *rec(uint8_t *blob, int id, uint32_t i, size_t recsize)
{
	return blob + sec_off(blob, id) + (size_t)i * recsize;
}

static void rehash(uint8_t *blob)
{
	blob_hash(blob, (size_t)blob_sig_offset(blob), blob + CPOL_HDR_SHA256);
}

static void emit_rich(uint8_t **blob, size_t *len)
{
	struct cpol_policy p;
	struct blob_error err;

	build_rich(&p);
	assert_int_equal(blob_emit(&p, blob, len, &err), 0);
	policy_free(&p);
}

/* The rich policy without its CPU quota: a 3.1 blob (its preloads). */
static void emit_rich_3_1(uint8_t **blob, size_t *len)
{
	struct cpol_policy p;
	struct blob_error err;

	build_rich(&p);
	p.limits.cpu_milli = 0;
	assert_int_equal(blob_emit(&p, blob, len, &err), 0);
	assert_int_equal(get_le(*blob + CPOL_HDR_MINOR, 2), CPOL_MINOR_PRELOAD);
	policy_free(&p);
}

/* Load a corrupted blob and insist on the field named and on two pieces
 * of the message ("" for any). */
static void expect_field_msg(const uint8_t *blob, size_t len, const char *field, const char *want1,
			     const char *want2)
{
	struct cpol_policy p;
	struct blob_error err;
	int rc = blob_load(blob, len, BLOB_ANY_ARCH, &p, &err);

	policy_free(&p);
	if (rc == 0)
		fail_msg("blob loaded; expected an error at %s", field);
	if (strcmp(err.field, field) != 0 || strstr(err.msg, want1) == NULL || strstr(err.msg, want2) == NULL)
		fail_msg("error at %s (%s); expected %s saying \"%s\" and \"%s\"", err.field, err.msg, field,
			 want1, want2);
	assert_true(err.msg[0] != '\0');
}

static void expect_field(const uint8_t *blob, size_t len, const char *field)
{
	expect_field_msg(blob, len, field, "", "");
}

/* ---- round trip -------------------------------------------------------- */

static void test_roundtrip(void **state)
{
	struct cpol_policy p, q;
	struct blob_error err;
	uint8_t *blob = NULL;
	size_t len = 0;

	(void)state;
	build_rich(&p);
	assert_int_equal(blob_emit(&p, &blob, &len, &err), 0);
	assert_int_equal(len % CPOL_ALIGN, 0);
	assert_int_equal(get_le(blob + CPOL_HDR_TOTAL_SIZE, 8), len);
	if (blob_load(blob, len, CPOL_ARCH_X86_64, &q, &err) != 0)
		fail_msg("load: %s: %s", err.field, err.msg);
	assert_policy_equal(&p, &q);
	assert_memory_equal(p.sha256, q.sha256, 32);
	assert_memory_equal(blob + CPOL_HDR_SHA256, q.sha256, 32);
	assert_int_equal(q.major, CPOL_VERSION_MAJOR);
	/* The oldest minor that holds it: preloads and a CPU quota, no result
	 * schema. */
	assert_int_equal(q.minor, CPOL_MINOR_CPU);
	assert_int_equal(q.arch, CPOL_ARCH_X86_64);
	assert_null(check_invariants(&q));
	assert_int_equal(policy_find_tool(&q, "menu.lookup"), 1);
	/* The policy does not depend on the buffer it came from. */
	memset(blob, 0xA5, len);
	assert_string_equal(q.tools[2].exec.v[2], "report");
	assert_string_equal(q.params[P_TAGS_ITEMS].enums.v[1], "vegan");
	policy_free(&q);
	policy_free(&p);
	free(blob);
}

static void test_minimal_and_null_strings(void **state)
{
	struct cpol_policy p, q;
	struct blob_error err;
	uint8_t *blob = NULL;
	size_t len = 0;

	(void)state;
	build_minimal(&p);
	assert_int_equal(blob_emit(&p, &blob, &len, &err), 0);
	/* Header, table, a one-byte string table and the four one-record
	 * sections, each padded to 8. */
	assert_int_equal(len, CPOL_TABLE_END + 8 + CPOL_META_BYTES + CPOL_LIMITS_BYTES +
				      CPOL_EXECUTOR_BYTES + CPOL_SIGNATURE_BYTES);
	if (blob_load(blob, len, BLOB_ANY_ARCH, &q, &err) != 0)
		fail_msg("load: %s: %s", err.field, err.msg);
	assert_string_equal(q.meta.app, "");
	assert_string_equal(q.exec.interpreter, "");
	assert_string_equal(q.exec.seccomp_profile, "");
	assert_int_equal(q.ntools + q.nparams + q.nenv + q.nagents, 0);
	assert_policy_equal(&p, &q);
	policy_free(&q);
	policy_free(&p);
	free(blob);
}

/* Same policy, same bytes: twice from the builder, and again from the
 * loaded copy (whose strings live somewhere else entirely). */
static void test_deterministic(void **state)
{
	struct cpol_policy p, q;
	struct blob_error err;
	uint8_t *a = NULL, *b = NULL, *c = NULL;
	size_t alen, blen, clen;

	(void)state;
	build_rich(&p);
	assert_int_equal(blob_emit(&p, &a, &alen, &err), 0);
	assert_int_equal(blob_emit(&p, &b, &blen, &err), 0);
	assert_int_equal(alen, blen);
	assert_memory_equal(a, b, alen);
	assert_int_equal(blob_load(a, alen, BLOB_ANY_ARCH, &q, &err), 0);
	assert_int_equal(blob_emit(&q, &c, &clen, &err), 0);
	assert_int_equal(alen, clen);
	assert_memory_equal(a, c, alen);
	policy_free(&q);
	policy_free(&p);
	free(a);
	free(b);
	free(c);
}

/* Fields a flag does not enable are written as zero, whatever the struct
 * holds, and an empty range as (0, 0). */
static void test_canonical_zero_fields(void **state)
{
	struct cpol_policy p, q;
	struct blob_error err;
	uint8_t *a = NULL, *b = NULL;
	size_t alen, blen;

	(void)state;
	build_rich(&p);
	assert_int_equal(blob_emit(&p, &a, &alen, &err), 0);
	p.params[P_VERBOSE].imin = 42;  /* boolean: bounds mean nothing */
	p.params[P_VERBOSE].fmax = 1.5;
	p.params[P_ROWS].imax = 7;      /* MAX flag not set */
	p.params[P_SUBJECT].min_length = 9; /* MIN_LENGTH flag not set */
	p.params[P_FORMAT].max_items = 3;
	p.params[P_VERBOSE].props.first = 5; /* empty range */
	p.tools[1].constraints.first = 2;
	assert_int_equal(blob_emit(&p, &b, &blen, &err), 0);
	assert_int_equal(alen, blen);
	assert_memory_equal(a, b, alen);
	assert_int_equal(blob_load(b, blen, BLOB_ANY_ARCH, &q, &err), 0);
	policy_free(&q);
	policy_free(&p);
	free(a);
	free(b);
}

static void test_arch(void **state)
{
	struct cpol_policy q;
	struct blob_error err;
	uint8_t *blob;
	size_t len;

	(void)state;
	emit_rich(&blob, &len);
	assert_int_equal(blob_load(blob, len, 0xC00000B7u, &q, &err), -1); /* aarch64 */
	assert_string_equal(err.field, "header.arch");
	policy_free(&q);
	put_le(blob + CPOL_HDR_ARCH, 4, 0x40000003u); /* i386: not in the format */
	rehash(blob);
	expect_field(blob, len, "header.arch");
	free(blob);
}

/* ---- targeted corruptions ---------------------------------------------- */

static void test_bad_magic(void **state)
{
	uint8_t *blob;
	size_t len;

	(void)state;
	emit_rich(&blob, &len);
	blob[4] = '\n'; /* what a CRLF -> LF conversion does to the trap */
	expect_field(blob, len, "header.magic");
	free(blob);
}

static void test_bad_total_size(void **state)
{
	uint8_t *blob;
	size_t len;

	(void)state;
	emit_rich(&blob, &len);
	put_le(blob + CPOL_HDR_TOTAL_SIZE, 8, len + 8);
	expect_field(blob, len, "header.total_size");
	put_le(blob + CPOL_HDR_TOTAL_SIZE, 8, len);
	expect_field(blob, len - 8, "header.total_size"); /* truncated by a section */
	expect_field(blob, CPOL_TABLE_END - 1, "header");
	free(blob);
}

static void test_bad_version_and_counts(void **state)
{
	uint8_t *blob;
	size_t len;

	(void)state;
	emit_rich(&blob, &len);
	put_le(blob + CPOL_HDR_MAJOR, 2, CPOL_VERSION_MAJOR + 1);
	expect_field(blob, len, "header.major");
	put_le(blob + CPOL_HDR_MAJOR, 2, CPOL_VERSION_MAJOR);
	put_le(blob + CPOL_HDR_MINOR, 2, CPOL_VERSION_MINOR + 1);
	expect_field(blob, len, "header.minor");
	put_le(blob + CPOL_HDR_MINOR, 2, CPOL_VERSION_MINOR);
	put_le(blob + CPOL_HDR_SECTION_COUNT, 4, 14);
	expect_field(blob, len, "header.section_count");
	put_le(blob + CPOL_HDR_SECTION_COUNT, 4, CPOL_SEC_COUNT);
	put_le(blob + CPOL_HEADER_SIZE + 2 * CPOL_SEC_ENT_BYTES + CPOL_SEC_ENT_ID, 4, 4);
	expect_field(blob, len, "section[2].id");
	free(blob);
}

static void test_unaligned_section(void **state)
{
	uint8_t *blob;
	size_t len;
	uint8_t *ent;

	(void)state;
	emit_rich(&blob, &len);
	ent = blob + CPOL_HEADER_SIZE + (CPOL_SEC_META - 1) * CPOL_SEC_ENT_BYTES;
	put_le(ent + CPOL_SEC_ENT_OFFSET, 8, get_le(ent + CPOL_SEC_ENT_OFFSET, 8) + 4);
	expect_field(blob, len, "section[3].offset");
	free(blob);
}

static void test_nonzero_padding(void **state)
{
	uint8_t *blob;
	size_t len, end = CPOL_TABLE_END;
	int id;

	(void)state;
	emit_rich(&blob, &len);
	/* The first section whose predecessor ends off the 8-byte grid. */
	for (id = 1; id <= CPOL_SEC_COUNT; id++) {
		const uint8_t *e = blob + CPOL_HEADER_SIZE + (size_t)(id - 1) * CPOL_SEC_ENT_BYTES;

		if (end % CPOL_ALIGN != 0)
			break;
		end = (size_t)(get_le(e + CPOL_SEC_ENT_OFFSET, 8) + get_le(e + CPOL_SEC_ENT_SIZE, 8));
	}
	assert_true(id <= CPOL_SEC_COUNT); /* the rich policy has one */
	blob[end] = 1;
	rehash(blob);
	{
		char field[32];

		snprintf(field, sizeof(field), "section[%d].padding", id - 1);
		expect_field(blob, len, field);
	}
	free(blob);
}

static void test_bad_hash(void **state)
{
	uint8_t *blob;
	size_t len;

	(void)state;
	emit_rich(&blob, &len);
	rec(blob, CPOL_SEC_LIMITS, 0, CPOL_LIMITS_BYTES)[CPOL_LIM_PIDS] ^= 1;
	expect_field(blob, len, "header.sha256");
	free(blob);
}

static void test_string_ref_out_of_range(void **state)
{
	uint8_t *blob, *r;
	size_t len;

	(void)state;
	emit_rich(&blob, &len);
	r = rec(blob, CPOL_SEC_ENV, 0, CPOL_ENV_BYTES);
	put_le(r + CPOL_ENV_KEY + CPOL_STR_OFF, 4, 0xFFFFFFF0u);
	rehash(blob);
	expect_field(blob, len, "env[0].key");
	/* A length that reaches past the table with a valid offset. */
	put_le(r + CPOL_ENV_KEY + CPOL_STR_OFF, 4, 1);
	put_le(r + CPOL_ENV_KEY + CPOL_STR_LEN, 4, 0xFFFFFFFFu);
	rehash(blob);
	expect_field(blob, len, "env[0].key");
	free(blob);
}

/* Offsets into the middle of a string, lengths that stop short of the NUL,
 * and lengths that swallow it are all refused. */
static void test_string_ref_shape(void **state)
{
	uint8_t *blob, *r;
	size_t len;
	uint32_t off, slen;

	(void)state;
	emit_rich(&blob, &len);
	r = rec(blob, CPOL_SEC_TOOLS, 0, CPOL_TOOL_BYTES) + CPOL_TOOL_ID;
	off = (uint32_t)get_le(r + CPOL_STR_OFF, 4);
	slen = (uint32_t)get_le(r + CPOL_STR_LEN, 4);
	put_le(r + CPOL_STR_OFF, 4, off + 1);
	put_le(r + CPOL_STR_LEN, 4, slen - 1);
	rehash(blob);
	expect_field(blob, len, "tools[0].id"); /* a suffix: not at an entry start */
	put_le(r + CPOL_STR_OFF, 4, off);
	rehash(blob);
	expect_field(blob, len, "tools[0].id"); /* short: no NUL at the end */
	/* The description is interned right after the id: cover both. */
	put_le(r + CPOL_STR_LEN, 4,
	       slen + 1 + (uint32_t)strlen("Send one mail to the café's suppliers."));
	rehash(blob);
	expect_field(blob, len, "tools[0].id"); /* swallows a NUL */
	put_le(r + CPOL_STR_LEN, 4, 0);
	rehash(blob);
	expect_field(blob, len, "tools[0].id"); /* empty, but not at offset 0 */
	free(blob);
}

static void test_unsorted_tools(void **state)
{
	uint8_t *blob, *t0, tmp[CPOL_TOOL_BYTES];
	size_t len;

	(void)state;
	emit_rich(&blob, &len);
	t0 = rec(blob, CPOL_SEC_TOOLS, 0, CPOL_TOOL_BYTES);
	memcpy(tmp, t0, CPOL_TOOL_BYTES);
	memcpy(t0, t0 + CPOL_TOOL_BYTES, CPOL_TOOL_BYTES);
	memcpy(t0 + CPOL_TOOL_BYTES, tmp, CPOL_TOOL_BYTES);
	rehash(blob);
	expect_field(blob, len, "tools[1].id");
	free(blob);
}

/* Format 1.x had 72-byte tool records: a 1.x blob is refused by its
 * version, with both versions named, before any record is read with the
 * wrong offsets. */
static void test_older_major_refused(void **state)
{
	char have[16], want[16];
	uint8_t *blob;
	size_t len;

	(void)state;
	emit_rich(&blob, &len);
	put_le(blob + CPOL_HDR_MAJOR, 2, CPOL_VERSION_MAJOR - 1);
	put_le(blob + CPOL_HDR_MINOR, 2, 0);
	rehash(blob);
	snprintf(have, sizeof(have), "format %d.0", CPOL_VERSION_MAJOR - 1);
	snprintf(want, sizeof(want), "%d.%d", CPOL_VERSION_MAJOR, CPOL_VERSION_MINOR);
	expect_field_msg(blob, len, "header.major", have, want);
	free(blob);
}

/* The daily budget and the reserved word after it: each a field of its
 * own in the error, the bound inclusive. */
static void test_tool_daily_budget(void **state)
{
	struct cpol_policy q;
	struct blob_error err;
	uint8_t *blob, *r;
	size_t len;

	(void)state;
	emit_rich_3_1(&blob, &len);
	r = rec(blob, CPOL_SEC_TOOLS, 0, CPOL_TOOL_BYTES);
	assert_int_equal(get_le(r + CPOL_TOOL_MAX_CALLS_PER_DAY, 4), 50);
	/* The word after the budget is 3.2's result schema: reserved in this
	 * 3.1 blob. */
	assert_int_equal(get_le(r + CPOL_TOOL_RETURNS, 4), 0);
	put_le(r + CPOL_TOOL_RETURNS, 4, 1);
	rehash(blob);
	expect_field_msg(blob, len, "tools[0].returns", "format 3.1", "reserved");
	put_le(r + CPOL_TOOL_RETURNS, 4, 0);
	put_le(r + CPOL_TOOL_MAX_CALLS_PER_DAY, 4, CPOL_TOOL_MAX_PER_DAY + 1);
	rehash(blob);
	expect_field_msg(blob, len, "tools[0].max_calls_per_day", "100000001", "at most 100000000");
	put_le(r + CPOL_TOOL_MAX_CALLS_PER_DAY, 4, 0xFFFFFFFFu);
	rehash(blob);
	expect_field(blob, len, "tools[0].max_calls_per_day");
	/* 0 is "no daily budget", and the bound itself is allowed. */
	put_le(r + CPOL_TOOL_MAX_CALLS_PER_DAY, 4, 0);
	rehash(blob);
	if (blob_load(blob, len, BLOB_ANY_ARCH, &q, &err) != 0)
		fail_msg("load: %s: %s", err.field, err.msg);
	assert_int_equal(q.tools[0].max_calls_per_day, 0);
	assert_int_equal(q.tools[2].max_calls_per_day, CPOL_TOOL_MAX_PER_DAY);
	policy_free(&q);
	free(blob);
}

/* The tool's identity: each kind with only its own fields, root refused
 * in each spelling, each fault named by its field. */
static void test_tool_identity(void **state)
{
	struct cpol_policy q;
	struct blob_error err;
	uint8_t *blob, *t0, *t1, *t2;
	size_t len;

	(void)state;
	emit_rich(&blob, &len);
	t0 = rec(blob, CPOL_SEC_TOOLS, 0, CPOL_TOOL_BYTES); /* ids 2001/2002 */
	t1 = rec(blob, CPOL_SEC_TOOLS, 1, CPOL_TOOL_BYTES); /* user cafe-tools */
	t2 = rec(blob, CPOL_SEC_TOOLS, 2, CPOL_TOOL_BYTES); /* supervisor */
	assert_int_equal(get_le(t0 + CPOL_TOOL_RUN_AS, 4), CPOL_RUN_AS_IDS);
	assert_int_equal(get_le(t0 + CPOL_TOOL_RUN_UID, 4), 2001);
	assert_int_equal(get_le(t0 + CPOL_TOOL_RUN_GID, 4), 2002);
	assert_int_equal(get_le(t1 + CPOL_TOOL_RUN_AS, 4), CPOL_RUN_AS_USER);
	assert_int_equal(get_le(t2 + CPOL_TOOL_RUN_AS, 4), CPOL_RUN_AS_SUPERVISOR);

	put_le(t0 + CPOL_TOOL_RUN_AS, 4, CPOL_RUN_AS_LAST + 1);
	rehash(blob);
	expect_field_msg(blob, len, "tools[0].run_as", "4", "not a known kind");
	put_le(t0 + CPOL_TOOL_RUN_AS, 4, CPOL_RUN_AS_IDS);
	put_le(t0 + CPOL_TOOL_RUN_UID, 4, 0);
	rehash(blob);
	expect_field_msg(blob, len, "tools[0].run_uid", "uid is 0", "root");
	put_le(t0 + CPOL_TOOL_RUN_UID, 4, 0xFFFFFFFFu);
	rehash(blob);
	expect_field(blob, len, "tools[0].run_uid");
	put_le(t0 + CPOL_TOOL_RUN_UID, 4, 2001);
	put_le(t0 + CPOL_TOOL_RUN_GID, 4, 0);
	rehash(blob);
	expect_field_msg(blob, len, "tools[0].run_gid", "gid is 0", "");
	put_le(t0 + CPOL_TOOL_RUN_GID, 4, 2002);
	/* ids left behind by another kind */
	put_le(t0 + CPOL_TOOL_RUN_AS, 4, CPOL_RUN_AS_DEDICATED);
	rehash(blob);
	expect_field_msg(blob, len, "tools[0].run_uid", "dedicated takes none", "");
	put_le(t0 + CPOL_TOOL_RUN_AS, 4, CPOL_RUN_AS_IDS);
	/* a name left behind by another kind; no name for the user kind */
	put_le(t1 + CPOL_TOOL_RUN_AS, 4, CPOL_RUN_AS_DEDICATED);
	rehash(blob);
	expect_field_msg(blob, len, "tools[1].run_user", "takes none", "");
	put_le(t1 + CPOL_TOOL_RUN_AS, 4, CPOL_RUN_AS_USER);
	put_le(t2 + CPOL_TOOL_RUN_AS, 4, CPOL_RUN_AS_USER);
	rehash(blob);
	expect_field_msg(blob, len, "tools[2].run_user", "not a user name", "not root");
	/* the supervisor's kind back to the default: it loads */
	put_le(t2 + CPOL_TOOL_RUN_AS, 4, CPOL_RUN_AS_DEDICATED);
	rehash(blob);
	if (blob_load(blob, len, BLOB_ANY_ARCH, &q, &err) != 0)
		fail_msg("load: %s: %s", err.field, err.msg);
	assert_int_equal(q.tools[2].run_as, CPOL_RUN_AS_DEDICATED);
	assert_string_equal(q.tools[1].run_user, "cafe-tools");
	policy_free(&q);
	free(blob);
}

/* A user name the loader refuses although its string is sound: "root",
 * and bytes outside the name pattern. */
static void test_tool_user_name(void **state)
{
	static const char *const bad[] = { "root", "Cafe", "-x", "a b", "x:y", "123456789012345678901234567890123" };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cpol_policy p;
		struct blob_error err;
		uint8_t *blob = NULL;
		size_t len = 0;

		build_rich(&p);
		p.tools[1].run_user = bad[i];
		assert_int_equal(blob_emit(&p, &blob, &len, &err), 0);
		policy_free(&p);
		expect_field_msg(blob, len, "tools[1].run_user", "not a user name", "");
		free(blob);
	}
}

/* The tool's cgroup limits and the reserved word after them. */
static void test_tool_cgroup_limits(void **state)
{
	uint8_t *blob, *r;
	size_t len;

	(void)state;
	emit_rich_3_1(&blob, &len); /* word 108 is reserved below 3.2 */
	r = rec(blob, CPOL_SEC_TOOLS, 0, CPOL_TOOL_BYTES);
	assert_int_equal(get_le(r + CPOL_TOOL_MEMORY_BYTES, 8), 64u << 20);
	assert_int_equal(get_le(r + CPOL_TOOL_PIDS, 4), 8);
	put_le(r + CPOL_TOOL_MEMORY_BYTES, 8, 0);
	rehash(blob);
	expect_field_msg(blob, len, "tools[0].memory_bytes", "is 0", "positive");
	put_le(r + CPOL_TOOL_MEMORY_BYTES, 8, 64u << 20);
	put_le(r + CPOL_TOOL_PIDS, 4, 0);
	rehash(blob);
	expect_field_msg(blob, len, "tools[0].pids", "is 0", "positive");
	put_le(r + CPOL_TOOL_PIDS, 4, CPOL_TOOL_MAX_PIDS + 1);
	rehash(blob);
	expect_field_msg(blob, len, "tools[0].pids", "65537", "at most 65536");
	put_le(r + CPOL_TOOL_PIDS, 4, 8);
	put_le(r + CPOL_TOOL_RETURNS, 4, 1);
	rehash(blob);
	expect_field_msg(blob, len, "tools[0].returns", "reserved", "must be 0");
	free(blob);
}

/* The rich policy with a result schema on menu.lookup: an object (param
 * P_COUNT, unnamed) with one required string property (P_COUNT + 1). */
static void build_returns(struct cpol_policy *p)
{
	struct cpol_param *m, *v;

	build_rich(p);
	v = arena_calloc(&p->arena, P_COUNT + 2, sizeof(*v));
	assert_non_null(v);
	memcpy(v, p->params, P_COUNT * sizeof(*v));
	p->params = v;
	p->nparams = P_COUNT + 2;
	m = mk_param(p, P_COUNT, "", CPOL_T_OBJECT, 0);
	m->props = (struct cpol_range){ P_COUNT + 1, 1 };
	mk_param(p, P_COUNT + 1, "id", CPOL_T_STRING, CPOL_PRM_F_REQUIRED);
	p->tools[1].returns = P_COUNT + 1; /* biased: 1 + the index */
	p->limits.cpu_milli = 0;           /* 3.2 alone, not 3.3 */
}

static void test_tool_returns(void **state)
{
	struct cpol_policy p, q;
	struct blob_error err;
	uint8_t *blob, *r0, *r1, *r2, *pr;
	size_t len;

	(void)state;
	build_returns(&p);
	assert_int_equal(blob_emit(&p, &blob, &len, &err), 0);
	assert_int_equal(p.minor, CPOL_MINOR_RETURNS);
	assert_int_equal(get_le(blob + CPOL_HDR_MINOR, 2), CPOL_MINOR_RETURNS);
	r0 = rec(blob, CPOL_SEC_TOOLS, 0, CPOL_TOOL_BYTES);
	r1 = rec(blob, CPOL_SEC_TOOLS, 1, CPOL_TOOL_BYTES);
	r2 = rec(blob, CPOL_SEC_TOOLS, 2, CPOL_TOOL_BYTES);
	pr = rec(blob, CPOL_SEC_PARAMS, P_COUNT, CPOL_PARAM_BYTES);
	assert_int_equal(get_le(r0 + CPOL_TOOL_RETURNS, 4), 0);
	assert_int_equal(get_le(r1 + CPOL_TOOL_RETURNS, 4), P_COUNT + 1);
	if (blob_load(blob, len, BLOB_ANY_ARCH, &q, &err) != 0)
		fail_msg("load: %s: %s", err.field, err.msg);
	assert_int_equal(q.tools[0].returns, 0);
	assert_null(policy_tool_returns(&q, 0));
	assert_int_equal(q.tools[1].returns, P_COUNT + 1);
	assert_non_null(policy_tool_returns(&q, 1));
	assert_int_equal(policy_tool_returns(&q, 1)->type, CPOL_T_OBJECT);
	assert_string_equal(q.params[policy_tool_returns(&q, 1)->props.first].name, "id");
	assert_policy_equal(&p, &q);
	policy_free(&q);
	policy_free(&p);

	/* Past the params table. */
	put_le(r1 + CPOL_TOOL_RETURNS, 4, P_COUNT + 3);
	rehash(blob);
	expect_field_msg(blob, len, "tools[1].returns", "past", "params");
	/* A param another tool's run owns (mail.send's body). */
	put_le(r1 + CPOL_TOOL_RETURNS, 4, P_BODY + 1);
	rehash(blob);
	expect_field_msg(blob, len, "tools[1].returns", "already belongs", "");
	/* Two tools sharing one result spec. */
	put_le(r1 + CPOL_TOOL_RETURNS, 4, P_COUNT + 1);
	put_le(r2 + CPOL_TOOL_RETURNS, 4, P_COUNT + 1);
	rehash(blob);
	expect_field_msg(blob, len, "tools[2].returns", "already belongs", "");
	put_le(r2 + CPOL_TOOL_RETURNS, 4, 0);
	/* The spec a named param (an object's property): refused for its
	 * name before the object claims it too. */
	put_le(r1 + CPOL_TOOL_RETURNS, 4, P_COUNT + 2);
	rehash(blob);
	expect_field_msg(blob, len, "params[13].name", "result spec has no name", "\"id\"");
	/* Nobody's: the spec is left unowned. */
	put_le(r1 + CPOL_TOOL_RETURNS, 4, 0);
	rehash(blob);
	expect_field_msg(blob, len, "params[12]", "No tool", "");
	put_le(r1 + CPOL_TOOL_RETURNS, 4, P_COUNT + 1);
	/* Unnamed and not required. */
	put_le(pr + CPOL_PRM_FLAGS, 4, CPOL_PRM_F_REQUIRED);
	rehash(blob);
	expect_field_msg(blob, len, "params[12].flags", "result spec", "required");
	put_le(pr + CPOL_PRM_FLAGS, 4, 0);
	/* In a 3.1 blob the word is reserved. */
	put_le(blob + CPOL_HDR_MINOR, 2, 1);
	rehash(blob);
	expect_field_msg(blob, len, "tools[1].returns", "format 3.1", "a result schema needs format 3.2");
	put_le(blob + CPOL_HDR_MINOR, 2, CPOL_MINOR_RETURNS);
	rehash(blob);
	if (blob_load(blob, len, BLOB_ANY_ARCH, &q, &err) != 0)
		fail_msg("restored blob does not load: %s: %s", err.field, err.msg);
	policy_free(&q);
	free(blob);
}

/* max_exec_workspace_entries: 1..10000000, in the word that was LIMITS'
 * reserved one in 2.0. */
static void test_ws_entries(void **state)
{
	struct cpol_policy q;
	struct blob_error err;
	uint8_t *blob, *r;
	size_t len;

	(void)state;
	emit_rich(&blob, &len);
	r = rec(blob, CPOL_SEC_LIMITS, 0, CPOL_LIMITS_BYTES);
	assert_int_equal(get_le(r + CPOL_LIM_WS_ENTRIES, 4), CPOL_MAX_WS_ENTRIES);
	put_le(r + CPOL_LIM_WS_ENTRIES, 4, 0);
	rehash(blob);
	expect_field_msg(blob, len, "limits.ws_entries", "is 0", "positive");
	put_le(r + CPOL_LIM_WS_ENTRIES, 4, CPOL_MAX_WS_ENTRIES + 1);
	rehash(blob);
	expect_field_msg(blob, len, "limits.ws_entries", "10000001", "at most 10000000");
	put_le(r + CPOL_LIM_WS_ENTRIES, 4, 1);
	rehash(blob);
	if (blob_load(blob, len, BLOB_ANY_ARCH, &q, &err) != 0)
		fail_msg("load: %s: %s", err.field, err.msg);
	assert_int_equal(q.limits.ws_entries, 1);
	policy_free(&q);
	free(blob);
}

/* The LIMITS section's size in the table: 96, or 104 with a CPU quota. */
static uint64_t limits_size(const uint8_t *blob)
{
	return get_le(blob + CPOL_HEADER_SIZE + (size_t)(CPOL_SEC_LIMITS - 1) * CPOL_SEC_ENT_BYTES + CPOL_SEC_ENT_SIZE,
		      8);
}

/* limits.cpu_milli (format 3.3): 8 more LIMITS bytes only in a blob that
 * sets a quota; the section's size says which, the minor must allow it. */
static void test_cpu_quota(void **state)
{
	struct cpol_policy p, q;
	struct blob_error err;
	uint8_t *blob, *r;
	size_t len;

	(void)state;
	emit_rich(&blob, &len);
	assert_int_equal(get_le(blob + CPOL_HDR_MINOR, 2), CPOL_MINOR_CPU);
	assert_int_equal(limits_size(blob), CPOL_LIMITS_CPU_BYTES);
	r = rec(blob, CPOL_SEC_LIMITS, 0, CPOL_LIMITS_CPU_BYTES);
	assert_int_equal(get_le(r + CPOL_LIM_CPU_MILLI, 4), 1500);
	assert_int_equal(get_le(r + CPOL_LIM_CPU_RESERVED, 4), 0);
	if (blob_load(blob, len, BLOB_ANY_ARCH, &q, &err) != 0)
		fail_msg("load: %s: %s", err.field, err.msg);
	assert_int_equal(q.limits.cpu_milli, 1500);
	policy_free(&q);
	/* A long record says "quota": 0 there would be a second spelling of
	 * "none", and the bounds are the descriptor's. */
	put_le(r + CPOL_LIM_CPU_MILLI, 4, 0);
	rehash(blob);
	expect_field_msg(blob, len, "limits.cpu_milli", "is 0 thousandths", "96-byte record");
	put_le(r + CPOL_LIM_CPU_MILLI, 4, CPOL_CPU_MILLI_MIN - 1);
	rehash(blob);
	expect_field_msg(blob, len, "limits.cpu_milli", "allows 10 to 1024000", "");
	put_le(r + CPOL_LIM_CPU_MILLI, 4, CPOL_CPU_MILLI_MAX + 1);
	rehash(blob);
	expect_field(blob, len, "limits.cpu_milli");
	put_le(r + CPOL_LIM_CPU_MILLI, 4, CPOL_CPU_MILLI_MIN);
	put_le(r + CPOL_LIM_CPU_RESERVED, 4, 1);
	rehash(blob);
	expect_field_msg(blob, len, "limits.reserved", "holds 1", "must be 0");
	put_le(r + CPOL_LIM_CPU_RESERVED, 4, 0);
	rehash(blob);
	if (blob_load(blob, len, BLOB_ANY_ARCH, &q, &err) != 0)
		fail_msg("load: %s: %s", err.field, err.msg);
	assert_int_equal(q.limits.cpu_milli, CPOL_CPU_MILLI_MIN);
	policy_free(&q);
	/* A blob that claims an older minor has only the 96-byte layout. */
	put_le(blob + CPOL_HDR_MINOR, 2, CPOL_MINOR_CPU - 1);
	rehash(blob);
	expect_field_msg(blob, len, "section[4].size", "104 bytes", "records of 96 bytes");
	free(blob);

	/* Without a quota the record is the old one and the minor what the
	 * rest needs (preloads: 1); with neither, a 3.0 blob. */
	build_rich(&p);
	p.limits.cpu_milli = 0;
	assert_int_equal(blob_emit(&p, &blob, &len, &err), 0);
	assert_int_equal(get_le(blob + CPOL_HDR_MINOR, 2), CPOL_MINOR_PRELOAD);
	assert_int_equal(limits_size(blob), CPOL_LIMITS_BYTES);
	if (blob_load(blob, len, BLOB_ANY_ARCH, &q, &err) != 0)
		fail_msg("load: %s: %s", err.field, err.msg);
	assert_int_equal(q.limits.cpu_milli, 0);
	policy_free(&q);
	policy_free(&p);
	free(blob);
	build_rich(&p);
	p.exec.npreload = 0;
	assert_int_equal(blob_emit(&p, &blob, &len, &err), 0);
	assert_int_equal(get_le(blob + CPOL_HDR_MINOR, 2), CPOL_MINOR_CPU);
	policy_free(&p);
	free(blob);
}

/* The checks on an executor module list's count (`word`, a list of two
 * whose run starts at STRLIST entry `first`, followed by the first tool's
 * exec path): the bound of 32, a run past STRLIST's end, and a third entry
 * that is no module name.  Leaves the count 2 and the blob rehashed. */
static void expect_count_checks(uint8_t *blob, size_t len, uint8_t *word, const char *field, uint32_t first)
{
	uint32_t nstrlist = (uint32_t)get_le(blob + CPOL_HEADER_SIZE + CPOL_SEC_ENT_COUNT +
						     (CPOL_SEC_STRLIST - 1) * CPOL_SEC_ENT_BYTES,
					     4);
	char third[64];

	_Static_assert(CPOL_MAX_PRELOAD == 32 && CPOL_MAX_PACKAGES == 32, "the messages below say 32");
	put_le(word, 4, 33);
	rehash(blob);
	expect_field_msg(blob, len, field, "33 modules", "at most 32");
	if (nstrlist - first + 1 <= 32) {
		put_le(word, 4, nstrlist - first + 1);
		rehash(blob);
		expect_field_msg(blob, len, field, "runs past", "strlist");
	}
	put_le(word, 4, 3);
	rehash(blob);
	snprintf(third, sizeof(third), "%s[2]", field);
	expect_field_msg(blob, len, third, "not a module name", "");
	put_le(word, 4, 2);
	rehash(blob);
}

/* executor.preload (format 3.1): the count in the executor's word at 28,
 * the names in STRLIST[0, count); a policy without one is a 3.0 blob. */
static void test_preload(void **state)
{
	struct cpol_policy p, q;
	struct blob_error err;
	uint8_t *blob, *r, *sl, *st;
	size_t len, at;

	(void)state;
	/* Preloads alone: minor 1 (the rich policy's CPU quota is 3.3). */
	build_rich(&p);
	p.limits.cpu_milli = 0;
	assert_int_equal(blob_emit(&p, &blob, &len, &err), 0);
	policy_free(&p);
	assert_int_equal(get_le(blob + CPOL_HDR_MINOR, 2), CPOL_MINOR_PRELOAD);
	r = rec(blob, CPOL_SEC_EXECUTOR, 0, CPOL_EXECUTOR_BYTES);
	sl = rec(blob, CPOL_SEC_STRLIST, 0, CPOL_STR_BYTES);
	st = blob + sec_off(blob, CPOL_SEC_STRTAB);
	assert_int_equal(get_le(r + CPOL_EXE_PRELOAD, 4), 2);
	assert_string_equal((const char *)st + get_le(sl + CPOL_STR_OFF, 4), "numpy");

	/* Without preloads: format 3.0, the word zero, nothing in STRLIST
	 * before the tools' lists. */
	build_rich(&p);
	p.exec.npreload = 0;
	p.limits.cpu_milli = 0;
	free(blob);
	assert_int_equal(blob_emit(&p, &blob, &len, &err), 0);
	assert_int_equal(p.minor, 0);
	assert_int_equal(get_le(blob + CPOL_HDR_MINOR, 2), 0);
	r = rec(blob, CPOL_SEC_EXECUTOR, 0, CPOL_EXECUTOR_BYTES);
	assert_int_equal(get_le(r + CPOL_EXE_PRELOAD, 4), 0);
	if (blob_load(blob, len, BLOB_ANY_ARCH, &q, &err) != 0)
		fail_msg("load: %s: %s", err.field, err.msg);
	assert_int_equal(q.exec.npreload, 0);
	assert_null(q.exec.preload);
	policy_free(&q);
	/* In a 3.0 blob the word is reserved: a count there is refused. */
	put_le(r + CPOL_EXE_PRELOAD, 4, 1);
	rehash(blob);
	expect_field_msg(blob, len, "executor.preload", "format 3.0", "reserved");
	policy_free(&p);
	free(blob);

	emit_rich(&blob, &len);
	r = rec(blob, CPOL_SEC_EXECUTOR, 0, CPOL_EXECUTOR_BYTES);
	sl = rec(blob, CPOL_SEC_STRLIST, 0, CPOL_STR_BYTES);
	st = blob + sec_off(blob, CPOL_SEC_STRTAB);
	expect_count_checks(blob, len, r + CPOL_EXE_PRELOAD, "executor.preload", 0);

	/* A bad byte in a name, reported with the offset of its reference. */
	at = get_le(sl + CPOL_STR_OFF, 4);
	st[at + 2] = '-';
	rehash(blob);
	expect_field_msg(blob, len, "executor.preload[0]", "\"nu-py\"", "not a module name");
	assert_int_equal(blob_load(blob, len, BLOB_ANY_ARCH, &q, &err), -1);
	assert_int_equal(err.offset, sec_off(blob, CPOL_SEC_STRLIST));
	policy_free(&q);
	st[at + 2] = '9'; /* "nu9py": a digit inside a component is fine */
	rehash(blob);
	if (blob_load(blob, len, BLOB_ANY_ARCH, &q, &err) != 0)
		fail_msg("load: %s: %s", err.field, err.msg);
	assert_string_equal(q.exec.preload[0], "nu9py");
	policy_free(&q);

	/* The same name twice: the second reference copies the first. */
	memcpy(sl + CPOL_STR_BYTES, sl, CPOL_STR_BYTES);
	rehash(blob);
	expect_field_msg(blob, len, "executor.preload[1]", "listed twice", "entry 0");
	free(blob);
}

static uint64_t executor_size(const uint8_t *blob)
{
	return get_le(blob + CPOL_HEADER_SIZE + (size_t)(CPOL_SEC_EXECUTOR - 1) * CPOL_SEC_ENT_BYTES +
			      CPOL_SEC_ENT_SIZE,
		      8);
}

/* The rich policy with two packages: a 3.4 blob. */
/* Every value of every byte of each spot: the blob is refused with a field
 * and a message, or it loads and keeps the decoded policy's invariants. */
static void mutate_every_byte(uint8_t *blob, size_t len, uint8_t *const *spots, const size_t *widths, size_t n)
{
	struct cpol_policy q;
	struct blob_error err;

	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < widths[k]; i++) {
			uint8_t was = spots[k][i];

			for (unsigned v = 0; v < 256; v++) {
				spots[k][i] = (uint8_t)v;
				rehash(blob);
				if (blob_load(blob, len, BLOB_ANY_ARCH, &q, &err) == 0) {
					const char *why = check_invariants(&q);

					if (why != NULL)
						fail_msg("byte %zu = 0x%02x loaded but breaks: %s", i, v, why);
				} else if (err.field[0] == '\0' || err.msg[0] == '\0') {
					fail_msg("byte %zu = 0x%02x: error without field or message", i, v);
				}
				policy_free(&q);
			}
			spots[k][i] = was;
		}
	rehash(blob);
}

static void build_packages(struct cpol_policy *p)
{
	build_rich(p);
	p->exec.packages = mk_strs(p, 2, "json", "email.mime").v;
	p->exec.npackages = 2;
}

/* executor.packages (format 3.4): 8 more EXECUTOR bytes only in a blob
 * that declares packages, the count at 48, the names in STRLIST right after
 * the preloads; every loader check, each shown to fire. */
static void test_packages(void **state)
{
	struct cpol_policy p, q;
	struct blob_error err;
	uint8_t *blob, *plain, *r, *sl, *st;
	size_t len, plain_len;

	(void)state;
	build_packages(&p);
	assert_int_equal(blob_emit(&p, &blob, &len, &err), 0);
	assert_int_equal(get_le(blob + CPOL_HDR_MINOR, 2), CPOL_MINOR_PACKAGES);
	assert_int_equal(executor_size(blob), CPOL_EXECUTOR_PKG_BYTES);
	r = rec(blob, CPOL_SEC_EXECUTOR, 0, CPOL_EXECUTOR_PKG_BYTES);
	sl = rec(blob, CPOL_SEC_STRLIST, 0, CPOL_STR_BYTES);
	st = blob + sec_off(blob, CPOL_SEC_STRTAB);
	assert_int_equal(get_le(r + CPOL_EXE_PRELOAD, 4), 2);
	assert_int_equal(get_le(r + CPOL_EXE_PACKAGES, 4), 2);
	assert_int_equal(get_le(r + CPOL_EXE_PKG_RESERVED, 4), 0);
	assert_string_equal((const char *)st + get_le(sl + 2 * CPOL_STR_BYTES + CPOL_STR_OFF, 4), "json");
	assert_string_equal((const char *)st + get_le(sl + 3 * CPOL_STR_BYTES + CPOL_STR_OFF, 4), "email.mime");
	if (blob_load(blob, len, BLOB_ANY_ARCH, &q, &err) != 0)
		fail_msg("load: %s: %s", err.field, err.msg);
	assert_int_equal(q.minor, CPOL_MINOR_PACKAGES);
	assert_policy_equal(&p, &q);
	assert_null(check_invariants(&q));
	policy_free(&q);

	/* Without packages the blob is byte for byte the rich one (3.3). */
	p.exec.npackages = 0;
	assert_int_equal(blob_emit(&p, &plain, &plain_len, &err), 0);
	policy_free(&p);
	{
		uint8_t *rich;
		size_t rich_len;

		emit_rich(&rich, &rich_len);
		assert_int_equal(plain_len, rich_len);
		assert_memory_equal(plain, rich, rich_len);
		free(rich);
	}
	assert_int_equal(get_le(plain + CPOL_HDR_MINOR, 2), CPOL_MINOR_CPU);
	assert_int_equal(executor_size(plain), CPOL_EXECUTOR_BYTES);
	free(plain);

	/* The long record says "packages": a count of 0 is refused. */
	put_le(r + CPOL_EXE_PACKAGES, 4, 0);
	rehash(blob);
	expect_field_msg(blob, len, "executor.packages", "empty", "48-byte record");
	expect_count_checks(blob, len, r + CPOL_EXE_PACKAGES, "executor.packages", 2);
	put_le(r + CPOL_EXE_PKG_RESERVED, 4, 7);
	rehash(blob);
	expect_field_msg(blob, len, "executor.reserved", "holds 7", "must be 0");
	put_le(r + CPOL_EXE_PKG_RESERVED, 4, 0);

	/* A package that repeats a preload, or another package. */
	{
		uint8_t saved[CPOL_STR_BYTES];

		memcpy(saved, sl + 2 * CPOL_STR_BYTES, CPOL_STR_BYTES);
		memcpy(sl + 2 * CPOL_STR_BYTES, sl, CPOL_STR_BYTES);
		rehash(blob);
		expect_field_msg(blob, len, "executor.packages[0]", "listed twice", "preload entry 0");
		memcpy(sl + 2 * CPOL_STR_BYTES, saved, CPOL_STR_BYTES);
		memcpy(saved, sl + 3 * CPOL_STR_BYTES, CPOL_STR_BYTES);
		memcpy(sl + 3 * CPOL_STR_BYTES, sl + 2 * CPOL_STR_BYTES, CPOL_STR_BYTES);
		rehash(blob);
		expect_field_msg(blob, len, "executor.packages[1]", "listed twice", "package entry 0");
		memcpy(sl + 3 * CPOL_STR_BYTES, saved, CPOL_STR_BYTES);
	}
	/* A bad byte in a name: "js-n". */
	st[get_le(sl + 2 * CPOL_STR_BYTES + CPOL_STR_OFF, 4) + 2] = '-';
	rehash(blob);
	expect_field_msg(blob, len, "executor.packages[0]", "\"js-n\"", "not a module name");
	assert_int_equal(blob_load(blob, len, BLOB_ANY_ARCH, &q, &err), -1);
	assert_int_equal(err.offset, sec_off(blob, CPOL_SEC_STRLIST) + 2 * CPOL_STR_BYTES);
	policy_free(&q);
	st[get_le(sl + 2 * CPOL_STR_BYTES + CPOL_STR_OFF, 4) + 2] = 's';

	/* A blob that claims an older minor has only the 48-byte layout. */
	put_le(blob + CPOL_HDR_MINOR, 2, CPOL_MINOR_PACKAGES - 1);
	rehash(blob);
	expect_field_msg(blob, len, "section[5].size", "56 bytes", "records of 48 bytes");
	put_le(blob + CPOL_HDR_MINOR, 2, CPOL_MINOR_PACKAGES);
	rehash(blob);
	if (blob_load(blob, len, BLOB_ANY_ARCH, &q, &err) != 0)
		fail_msg("load after the repairs: %s: %s", err.field, err.msg);
	policy_free(&q);

	/* Every value of every byte of the executor record and of the two
	 * package references: refused with a field, or loaded and sound. */
	{
		uint8_t *spots[] = { r, sl + 2 * CPOL_STR_BYTES };
		size_t widths[] = { CPOL_EXECUTOR_PKG_BYTES, 2 * CPOL_STR_BYTES };

		mutate_every_byte(blob, len, spots, widths, 2);
	}
	free(blob);

	/* Without preloads the packages start STRLIST. */
	build_packages(&p);
	p.exec.npreload = 0;
	assert_int_equal(blob_emit(&p, &blob, &len, &err), 0);
	sl = rec(blob, CPOL_SEC_STRLIST, 0, CPOL_STR_BYTES);
	st = blob + sec_off(blob, CPOL_SEC_STRTAB);
	assert_string_equal((const char *)st + get_le(sl + CPOL_STR_OFF, 4), "json");
	if (blob_load(blob, len, BLOB_ANY_ARCH, &q, &err) != 0)
		fail_msg("load: %s: %s", err.field, err.msg);
	assert_policy_equal(&p, &q);
	policy_free(&q);
	r = rec(blob, CPOL_SEC_EXECUTOR, 0, CPOL_EXECUTOR_PKG_BYTES);
	put_le(r + CPOL_EXE_PACKAGES, 4, 3);
	rehash(blob);
	expect_field_msg(blob, len, "executor.packages[2]", "not a module name", "");
	policy_free(&p);
	free(blob);
}

static void test_module_name_rule(void **state)
{
	static const char *const good[] = { "numpy", "_x", "xml.etree.ElementTree", "a1.b_2", "A", NULL };
	static const char *const bad[] = { "", ".", "a.", ".a", "a..b", "1a", "a.1b", "a-b", "a b", "é", "a/b", NULL };
	char longname[CPOL_PRELOAD_NAME_MAX + 2];

	(void)state;
	for (int i = 0; good[i]; i++)
		if (!policy_module_name_ok(good[i]) || !preload_name_ok(good[i]))
			fail_msg("'%s' refused", good[i]);
	for (int i = 0; bad[i]; i++)
		if (policy_module_name_ok(bad[i]) || preload_name_ok(bad[i]))
			fail_msg("'%s' taken", bad[i]);
	memset(longname, 'a', sizeof(longname));
	longname[CPOL_PRELOAD_NAME_MAX] = '\0';
	assert_true(policy_module_name_ok(longname));
	longname[CPOL_PRELOAD_NAME_MAX] = 'a';
	longname[CPOL_PRELOAD_NAME_MAX + 1] = '\0';
	assert_false(policy_module_name_ok(longname));
}

static void test_duplicate_env(void **state)
{
	uint8_t *blob, *e;
	size_t len;

	(void)state;
	emit_rich(&blob, &len);
	e = rec(blob, CPOL_SEC_ENV, 0, CPOL_ENV_BYTES);
	memcpy(e + CPOL_ENV_BYTES + CPOL_ENV_KEY, e + CPOL_ENV_KEY, CPOL_STR_BYTES);
	rehash(blob);
	expect_field(blob, len, "env[1].key");
	free(blob);
}

static void test_param_backward_ref(void **state)
{
	uint8_t *blob, *r;
	size_t len;

	(void)state;
	emit_rich(&blob, &len);
	/* tags.items pointing back at its owner object: a cycle. */
	r = rec(blob, CPOL_SEC_PARAMS, P_TAGS, CPOL_PARAM_BYTES);
	put_le(r + CPOL_PRM_ITEMS, 4, P_FILTER);
	rehash(blob);
	expect_field(blob, len, "params[7].items");
	put_le(r + CPOL_PRM_ITEMS, 4, P_TAGS); /* itself */
	rehash(blob);
	expect_field(blob, len, "params[7].items");
	put_le(r + CPOL_PRM_ITEMS, 4, P_TAGS_ITEMS);
	r = rec(blob, CPOL_SEC_PARAMS, P_FILTER, CPOL_PARAM_BYTES);
	put_le(r + CPOL_PRM_PROPS, 4, P_FILTER); /* props starting at itself */
	rehash(blob);
	expect_field(blob, len, "params[4].props.first");
	free(blob);
}

static void test_param_ownership(void **state)
{
	uint8_t *blob, *r;
	size_t len;

	(void)state;
	emit_rich(&blob, &len);
	/* report.write claims one more param: the next one doesn't exist... */
	r = rec(blob, CPOL_SEC_TOOLS, 2, CPOL_TOOL_BYTES);
	put_le(r + CPOL_TOOL_PARAMS + 4, 4, 4);
	rehash(blob);
	expect_field(blob, len, "tools[2].params.count");
	/* ...and menu.lookup's run growing over filter's properties makes
	 * max_price owned twice. */
	put_le(r + CPOL_TOOL_PARAMS + 4, 4, 3);
	r = rec(blob, CPOL_SEC_TOOLS, 1, CPOL_TOOL_BYTES);
	put_le(r + CPOL_TOOL_PARAMS + 4, 4, 3);
	rehash(blob);
	expect_field(blob, len, "params[4].props");
	/* verbose owned by nobody. */
	put_le(r + CPOL_TOOL_PARAMS + 4, 4, 2);
	r = rec(blob, CPOL_SEC_TOOLS, 2, CPOL_TOOL_BYTES);
	put_le(r + CPOL_TOOL_PARAMS + 4, 4, 2);
	rehash(blob);
	expect_field(blob, len, "params[11]");
	free(blob);
}

static void test_nan_bound(void **state)
{
	uint8_t *blob, *r;
	size_t len;

	(void)state;
	emit_rich(&blob, &len);
	r = rec(blob, CPOL_SEC_PARAMS, P_MAX_PRICE, CPOL_PARAM_BYTES);
	put_le(r + CPOL_PRM_MIN, 8, 0x7FF8000000000000ull); /* quiet NaN */
	rehash(blob);
	expect_field(blob, len, "params[6].min");
	put_le(r + CPOL_PRM_MIN, 8, 0);
	put_le(r + CPOL_PRM_MAX, 8, 0x7FF0000000000000ull); /* +inf */
	rehash(blob);
	expect_field(blob, len, "params[6].max");
	free(blob);
}

static void test_min_above_max(void **state)
{
	uint8_t *blob, *r;
	size_t len;
	double big = 100.0;
	uint64_t bits;

	(void)state;
	emit_rich(&blob, &len);
	r = rec(blob, CPOL_SEC_PARAMS, P_LIMIT, CPOL_PARAM_BYTES);
	put_le(r + CPOL_PRM_MIN, 8, 51);
	rehash(blob);
	expect_field(blob, len, "params[5].min");
	put_le(r + CPOL_PRM_MIN, 8, 1);
	r = rec(blob, CPOL_SEC_PARAMS, P_MAX_PRICE, CPOL_PARAM_BYTES);
	memcpy(&bits, &big, sizeof(bits));
	put_le(r + CPOL_PRM_MIN, 8, bits);
	rehash(blob);
	expect_field(blob, len, "params[6].min");
	put_le(r + CPOL_PRM_MIN, 8, 0);
	r = rec(blob, CPOL_SEC_PARAMS, P_BODY, CPOL_PARAM_BYTES);
	put_le(r + CPOL_PRM_MIN_LENGTH, 8, 10001);
	rehash(blob);
	expect_field(blob, len, "params[0].min_length");
	free(blob);
}

static void test_flag_type_mismatch(void **state)
{
	uint8_t *blob, *r;
	size_t len;

	(void)state;
	emit_rich(&blob, &len);
	r = rec(blob, CPOL_SEC_PARAMS, P_VERBOSE, CPOL_PARAM_BYTES);
	put_le(r + CPOL_PRM_FLAGS, 4, CPOL_PRM_F_MAX_ITEMS);
	rehash(blob);
	expect_field(blob, len, "params[11].flags");
	put_le(r + CPOL_PRM_FLAGS, 4, 0);
	put_le(r + CPOL_PRM_MAX_ITEMS, 8, 3); /* value without its flag */
	rehash(blob);
	expect_field(blob, len, "params[11].max_items");
	free(blob);
}

static void test_agent_tools_order(void **state)
{
	uint8_t *blob, *r;
	size_t len;

	(void)state;
	emit_rich(&blob, &len);
	/* assistant's run is idxlist[2..5) = {0, 1, 2}; make it {0, 2, 2}. */
	r = rec(blob, CPOL_SEC_IDXLIST, 3, CPOL_IDX_BYTES);
	put_le(r, 4, 2);
	rehash(blob);
	expect_field(blob, len, "agents[1].tools");
	put_le(r, 4, 3); /* no tool 3 */
	rehash(blob);
	expect_field(blob, len, "idxlist[3]");
	free(blob);
}

static void test_signature_record(void **state)
{
	struct cpol_policy p, q;
	struct blob_error err;
	uint8_t *blob, *s;
	size_t len;

	(void)state;
	build_rich(&p);
	p.signature.algo = CPOL_SIG_ED25519;
	memset(p.signature.keyid, 0x11, sizeof(p.signature.keyid));
	memset(p.signature.sig, 0x22, sizeof(p.signature.sig));
	assert_int_equal(blob_emit(&p, &blob, &len, &err), 0);
	assert_int_equal(blob_load(blob, len, BLOB_ANY_ARCH, &q, &err), 0);
	assert_policy_equal(&p, &q);
	policy_free(&q);
	/* The signature is outside the hash: changing it keeps the hash. */
	s = blob + blob_sig_offset(blob);
	s[CPOL_SIG_BYTES_OFF] ^= 0xFF;
	assert_int_equal(blob_load(blob, len, BLOB_ANY_ARCH, &q, &err), 0);
	assert_memory_equal(q.sha256, p.sha256, 32);
	policy_free(&q);
	put_le(s + CPOL_SIG_ALGO, 4, CPOL_SIG_NONE);
	expect_field(blob, len, "signature.keyid");
	put_le(s + CPOL_SIG_ALGO, 4, 7);
	expect_field(blob, len, "signature.algo");
	policy_free(&p);
	free(blob);
}

/* ---- every truncation, every byte -------------------------------------- */

static void test_truncations(void **state)
{
	uint8_t *blob;
	size_t len;

	(void)state;
	emit_rich(&blob, &len);
	for (size_t n = 0; n < len; n++) {
		/* An exact-size copy, so ASan sees any read past the end. */
		uint8_t *cut = malloc(n ? n : 1);
		struct cpol_policy q;
		struct blob_error err;

		assert_non_null(cut);
		memcpy(cut, blob, n);
		if (blob_load(cut, n, BLOB_ANY_ARCH, &q, &err) == 0)
			fail_msg("a blob cut to %zu of %zu bytes loaded", n, len);
		assert_true(err.field[0] != '\0' && err.msg[0] != '\0');
		policy_free(&q);
		free(cut);
	}
	free(blob);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Every offset, every other byte value: the loader must refuse with a named
 * field or produce a policy the independent checker accepts.  The hash is
 * recomputed (with the original signature offset) so the checks behind it
 * are reached, except for a byte of the hash field itself, which must then
 * be caught as a hash mismatch.
 *
 * Hashing dominates the run time (the loader hashes every candidate too),
 * so the test hashes incrementally: the SHA-256 state of the unchanged
 * prefix is carried along and only the mutated byte and the suffix are
 * hashed per candidate.  Measured on a 2-core box (2880-byte blob, 734400
 * loads): 12 - 15 s plain, 21 s with `make check SAN=1` (ASan+UBSan).
 * CORDON_MUTATION_STRIDE=n tries every n-th value only, for slower
 * machines; `make check SAN=1` does not need it.
 */
static void test_mutations(void **state)
{
	uint8_t *orig, *blob, *zeroed;
	size_t len, sig_off;
	unsigned stride = 1, accepted = 0, loads = 0;
	const char *env = getenv("CORDON_MUTATION_STRIDE");
	crypto_hash_sha256_state prefix, st;
	uint8_t check[32];
	double t0 = now_s();

	(void)state;
	if (env != NULL && atoi(env) > 0)
		stride = (unsigned)atoi(env);
	emit_rich(&orig, &len);
	sig_off = (size_t)blob_sig_offset(orig);
	blob = malloc(len); /* exact size: ASan sees any read past the end */
	zeroed = malloc(len);
	assert_non_null(blob);
	assert_non_null(zeroed);
	memcpy(blob, orig, len);
	memcpy(zeroed, orig, len);
	memset(zeroed + CPOL_HDR_SHA256, 0, 32);

	/* The format's hash, restated here: the test must agree with it. */
	assert_true(sodium_init() >= 0);
	crypto_hash_sha256(check, zeroed, sig_off);
	assert_memory_equal(check, orig + CPOL_HDR_SHA256, 32);

	crypto_hash_sha256_init(&prefix);
	for (size_t off = 0; off < len; off++) {
		int in_hash = off >= CPOL_HDR_SHA256 && off < CPOL_HEADER_SIZE;

		for (unsigned v = 0; v < 256; v += stride) {
			struct cpol_policy q;
			struct blob_error err;
			int rc;

			if (v == orig[off])
				continue;
			blob[off] = (uint8_t)v;
			if (off < sig_off && !in_hash) {
				st = prefix;
				crypto_hash_sha256_update(&st, blob + off, 1);
				crypto_hash_sha256_update(&st, zeroed + off + 1, sig_off - off - 1);
				crypto_hash_sha256_final(&st, blob + CPOL_HDR_SHA256);
			}
			loads++;
			rc = blob_load(blob, len, BLOB_ANY_ARCH, &q, &err);
			if (rc == 0) {
				const char *why = check_invariants(&q);

				accepted++;
				if (why != NULL)
					fail_msg("byte %zu = 0x%02x loaded but breaks: %s", off, v, why);
			} else if (err.field[0] == '\0' || err.msg[0] == '\0') {
				fail_msg("byte %zu = 0x%02x: error without field or message", off, v);
			}
			if (in_hash && (rc == 0 || strcmp(err.field, "header.sha256") != 0))
				fail_msg("hash byte %zu = 0x%02x: not caught as a hash mismatch", off, v);
			policy_free(&q);
			blob[off] = orig[off];
			memcpy(blob + CPOL_HDR_SHA256, orig + CPOL_HDR_SHA256, 32);
		}
		if (off < sig_off)
			crypto_hash_sha256_update(&prefix, zeroed + off, 1);
	}
	fprintf(stderr, "mutations: %zu bytes, %u loads, %u accepted, %.2f s\n", len, loads,
		accepted, now_s() - t0);
	free(zeroed);
	free(blob);
	free(orig);
}

/* ---- sessions (3.6) ----------------------------------------------------- */

/* The rich policy with sessions for its first agent ("analyst"). */
static void emit_sessions(uint8_t **blob, size_t *len)
{
	struct cpol_policy p;
	struct blob_error err;

	build_rich(&p);
	p.agents[0].session = (struct cpol_session){ CPOL_AGT_F_SESSION, 7, 30000, 120000, 5000, 1u << 20 };
	assert_int_equal(blob_emit(&p, blob, len, &err), 0);
	policy_free(&p);
}

/* Agents' session limits: the 56-byte records and minor 6 only when some
 * agent declares them, every field bounded, a record without the flag all
 * zero, and every byte of the tails mutated (rehashed): refused, or loaded
 * with the invariants holding. */
static void test_sessions(void **state)
{
	struct cpol_policy q;
	struct blob_error err;
	uint8_t *blob, *r0, *r1;
	size_t len;

	(void)state;
	emit_sessions(&blob, &len);
	assert_int_equal(get_le(blob + CPOL_HDR_MINOR, 2), CPOL_MINOR_SESSION);
	assert_int_equal(get_le(blob + CPOL_HEADER_SIZE + (CPOL_SEC_AGENTS - 1) * CPOL_SEC_ENT_BYTES +
					CPOL_SEC_ENT_SIZE,
				8),
			 3 * CPOL_AGENT_SESSION_BYTES);
	if (blob_load(blob, len, BLOB_ANY_ARCH, &q, &err) != 0)
		fail_msg("load: %s: %s", err.field, err.msg);
	assert_string_equal(q.agents[0].name, "analyst");
	assert_int_equal(q.agents[0].session.flags, CPOL_AGT_F_SESSION);
	assert_int_equal(q.agents[0].session.max_cells, 7);
	assert_int_equal(q.agents[0].session.idle_ms, 30000);
	assert_int_equal(q.agents[0].session.life_ms, 120000);
	assert_int_equal(q.agents[0].session.cpu_ms, 5000);
	assert_int_equal(q.agents[0].session.ws_bytes, 1u << 20);
	assert_int_equal(q.agents[1].session.flags, 0);
	assert_null(check_invariants(&q));
	policy_free(&q);

	r0 = rec(blob, CPOL_SEC_AGENTS, 0, CPOL_AGENT_SESSION_BYTES);
	r1 = rec(blob, CPOL_SEC_AGENTS, 1, CPOL_AGENT_SESSION_BYTES);
	put_le(r0 + CPOL_AGT_SESSION_IDLE_MS, 8, 120001);
	rehash(blob);
	expect_field_msg(blob, len, "agents[0].session_idle_ms", "idle expiry is 120001 ms", "to the lifetime");
	put_le(r0 + CPOL_AGT_SESSION_IDLE_MS, 8, 999);
	rehash(blob);
	expect_field(blob, len, "agents[0].session_idle_ms");
	put_le(r0 + CPOL_AGT_SESSION_IDLE_MS, 8, 30000);
	put_le(r0 + CPOL_AGT_SESSION_MAX_CELLS, 4, 0);
	rehash(blob);
	expect_field_msg(blob, len, "agents[0].session_max_cells", "run 0 cells", "");
	put_le(r0 + CPOL_AGT_SESSION_MAX_CELLS, 4, 7);
	put_le(r0 + CPOL_AGT_SESSION_LIFE_MS, 8, CPOL_SESSION_MAX_LIFE_MS + 1);
	rehash(blob);
	expect_field(blob, len, "agents[0].session_lifetime_ms");
	put_le(r0 + CPOL_AGT_SESSION_LIFE_MS, 8, 120000);
	put_le(r0 + CPOL_AGT_SESSION_CPU_MS, 8, 0);
	rehash(blob);
	expect_field(blob, len, "agents[0].session_cpu_ms");
	put_le(r0 + CPOL_AGT_SESSION_CPU_MS, 8, 5000);
	put_le(r0 + CPOL_AGT_SESSION_WS_BYTES, 8, 0);
	rehash(blob);
	expect_field(blob, len, "agents[0].session_workspace_bytes");
	put_le(r0 + CPOL_AGT_SESSION_WS_BYTES, 8, 1u << 20);
	put_le(r0 + CPOL_AGT_SESSION_FLAGS, 4, 3);
	rehash(blob);
	expect_field_msg(blob, len, "agents[0].session_flags", "Unknown session flag bits 0x2", "");
	/* An agent without the flag holds no limit: one layout per meaning. */
	put_le(r0 + CPOL_AGT_SESSION_FLAGS, 4, 1);
	put_le(r1 + CPOL_AGT_SESSION_MAX_CELLS, 4, 1);
	rehash(blob);
	expect_field_msg(blob, len, "agents[1].session", "holds no sessions", "");
	put_le(r1 + CPOL_AGT_SESSION_MAX_CELLS, 4, 0);
	/* Long records where no agent holds sessions are refused. */
	put_le(r0 + CPOL_AGT_SESSION_FLAGS, 4, 0);
	memset(r0 + CPOL_AGT_SESSION_MAX_CELLS, 0, CPOL_AGENT_SESSION_BYTES - CPOL_AGT_SESSION_MAX_CELLS);
	rehash(blob);
	expect_field_msg(blob, len, "agents[2].session_flags", "none holds sessions", "16-byte records");
	free(blob);

	/* A blob claiming 3.5 has only the 16-byte records. */
	emit_sessions(&blob, &len);
	put_le(blob + CPOL_HDR_MINOR, 2, CPOL_MINOR_SESSION - 1);
	rehash(blob);
	expect_field_msg(blob, len, "section[12].size", "168 bytes", "records of 16 bytes");
	free(blob);

	/* Every byte of every agent record, a few values each. */
	emit_sessions(&blob, &len);
	for (size_t off = sec_off(blob, CPOL_SEC_AGENTS); off < sec_off(blob, CPOL_SEC_AGENTS) + 3 * CPOL_AGENT_SESSION_BYTES;
	     off++) {
		static const uint8_t vals[] = { 0x00, 0x01, 0x02, 0x7f, 0x80, 0xff };
		uint8_t was = blob[off];

		for (size_t k = 0; k < sizeof(vals); k++) {
			if (vals[k] == was)
				continue;
			blob[off] = vals[k];
			rehash(blob);
			if (blob_load(blob, len, BLOB_ANY_ARCH, &q, &err) == 0) {
				const char *why = check_invariants(&q);

				if (why != NULL)
					fail_msg("agents byte %zu = 0x%02x loaded but breaks: %s", off, vals[k], why);
			} else if (err.field[0] == '\0' || err.msg[0] == '\0') {
				fail_msg("agents byte %zu = 0x%02x: error without field or message", off, vals[k]);
			}
			policy_free(&q);
		}
		blob[off] = was;
	}
	free(blob);
}

/* ---- files ------------------------------------------------------------- */

static void test_map_file(void **state)
{
	char path[] = "/tmp/cordon-test-blob-XXXXXX";
	struct blob_map m = { NULL, 0 };
	struct blob_error err;
	struct cpol_policy q;
	uint8_t *blob;
	size_t len;
	int fd;

	(void)state;
	emit_rich(&blob, &len);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, blob, len), (ssize_t)len);
	assert_int_equal(blob_map_file(path, &m, &err), 0);
	assert_int_equal(m.len, len);
	assert_memory_equal(m.data, blob, len);
	assert_int_equal(blob_load(m.data, m.len, BLOB_ANY_ARCH, &q, &err), 0);
	blob_unmap(&m);
	assert_null(m.data);
	assert_string_equal(q.tools[0].id, "mail.send"); /* outlives the mapping */
	policy_free(&q);

	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(blob_map_file(path, &m, &err), -1);
	assert_string_equal(err.field, "file");
	assert_null(m.data);
	assert_int_equal(blob_map_file("/tmp", &m, &err), -1); /* not a regular file */
	assert_true(err.msg[0] != '\0');
	assert_int_equal(blob_map_file("/nonexistent/cordon.cpol", &m, &err), -1);
	assert_true(err.msg[0] != '\0');
	blob_unmap(&m); /* harmless on an empty map */
	close(fd);
	unlink(path);
	free(blob);
}

/* ---- fuzz seeds -------------------------------------------------------- */

static void write_seed(const char *dir, const char *name, struct cpol_policy *p)
{
	char path[512];
	struct blob_error err;
	uint8_t *blob;
	size_t len;
	FILE *f;

	assert_int_equal(blob_emit(p, &blob, &len, &err), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f == NULL)
		fail_msg("%s: %s", path, strerror(errno));
	assert_int_equal(fwrite(blob, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	free(blob);
}

/* With CORDON_WRITE_SEEDS=dir, write the seed corpus of fuzz_blob. */
/* ---- provenance (3.5) ---------------------------------------------------- */

static void build_provenance(struct cpol_policy *p)
{
	struct cpol_source *v;

	build_rich(p);
	v = arena_calloc(&p->arena, 4, sizeof(*v));
	assert_non_null(v);
	v[0] = (struct cpol_source){ CPOL_SRC_DESCRIPTOR, "app.yaml", { 1 } };
	v[1] = (struct cpol_source){ CPOL_SRC_INVENTORY, "tools/a.yaml", { 2 } };
	v[2] = (struct cpol_source){ CPOL_SRC_INVENTORY, "../b.yaml", { 3 } };
	v[3] = (struct cpol_source){ CPOL_SRC_POLICY, "base.policy", { 4 } };
	p->prov.has = 1;
	p->prov.sources = v;
	p->prov.nsources = 4;
	p->prov.catalogue = "1";
	p->prov.errors = 1;
	p->prov.warnings = 2;
	p->prov.notes = 3;
	p->prov.suppressed = 3;
	p->prov.rules = mk_strs(p, 2, "CDN301", "CDN407");
}

/* A section's offset found through the table, whatever its order. */
static size_t prov_sec_off(const uint8_t *blob, uint32_t id)
{
	uint32_t n = (uint32_t)get_le(blob + CPOL_HDR_SECTION_COUNT, 4);

	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *e = blob + CPOL_HEADER_SIZE + (size_t)i * CPOL_SEC_ENT_BYTES;

		if (get_le(e + CPOL_SEC_ENT_ID, 4) == id)
			return (size_t)get_le(e + CPOL_SEC_ENT_OFFSET, 8);
	}
	fail_msg("no section %u", id);
	return 0;
}

/* SOURCES and LINT (format 3.5): 17 table entries with SIGNATURE last, the
 * hash covering them, the records round-tripping; a policy without them
 * keeps its 15-section bytes; every loader check shown to fire. */
static void test_provenance(void **state)
{
	struct cpol_policy p, q;
	struct blob_error err;
	uint8_t *blob, *src, *lint, *rich;
	size_t len, rich_len;

	(void)state;
	build_provenance(&p);
	assert_int_equal(blob_emit(&p, &blob, &len, &err), 0);
	assert_int_equal(get_le(blob + CPOL_HDR_MINOR, 2), CPOL_MINOR_PROVENANCE);
	assert_int_equal(get_le(blob + CPOL_HDR_SECTION_COUNT, 4), CPOL_SEC_COUNT_PROV);
	assert_int_equal(get_le(blob + CPOL_HDR_TABLE_END, 4), CPOL_TABLE_END_PROV);
	/* SIGNATURE is the last entry and ends the blob. */
	assert_int_equal(get_le(blob + CPOL_HEADER_SIZE + 16 * CPOL_SEC_ENT_BYTES + CPOL_SEC_ENT_ID, 4),
			 CPOL_SEC_SIGNATURE);
	assert_int_equal(blob_sig_offset(blob) + CPOL_SIGNATURE_BYTES, len);
	assert_true(prov_sec_off(blob, CPOL_SEC_LINT) < blob_sig_offset(blob));
	if (blob_load(blob, len, BLOB_ANY_ARCH, &q, &err) != 0)
		fail_msg("load: %s: %s", err.field, err.msg);
	assert_policy_equal(&p, &q);
	assert_true(q.prov.has);
	assert_int_equal(q.prov.nsources, 4);
	for (uint32_t i = 0; i < 4; i++) {
		assert_int_equal(q.prov.sources[i].role, p.prov.sources[i].role);
		assert_string_equal(q.prov.sources[i].name, p.prov.sources[i].name);
		assert_memory_equal(q.prov.sources[i].sha256, p.prov.sources[i].sha256, 32);
	}
	assert_string_equal(q.prov.catalogue, "1");
	assert_int_equal(q.prov.errors, 1);
	assert_int_equal(q.prov.warnings, 2);
	assert_int_equal(q.prov.notes, 3);
	assert_int_equal(q.prov.suppressed, 3);
	assert_strs_equal(&q.prov.rules, &p.prov.rules);
	policy_free(&q);

	/* Without provenance: byte for byte the rich blob, 15 sections. */
	p.prov.has = 0;
	assert_int_equal(blob_emit(&p, &rich, &rich_len, &err), 0);
	policy_free(&p);
	{
		uint8_t *want;
		size_t want_len;

		emit_rich(&want, &want_len);
		assert_int_equal(rich_len, want_len);
		assert_memory_equal(rich, want, want_len);
		free(want);
	}
	assert_int_equal(get_le(rich + CPOL_HDR_SECTION_COUNT, 4), CPOL_SEC_COUNT);
	if (blob_load(rich, rich_len, BLOB_ANY_ARCH, &q, &err) != 0)
		fail_msg("load rich: %s", err.msg);
	assert_false(q.prov.has);
	policy_free(&q);
	free(rich);

	/* The hash covers the new sections: a changed digest is caught. */
	src = blob + prov_sec_off(blob, CPOL_SEC_SOURCES);
	lint = blob + prov_sec_off(blob, CPOL_SEC_LINT);
	src[CPOL_SOURCE_BYTES + CPOL_SRC_SHA256] ^= 1;
	expect_field_msg(blob, len, "header.sha256", "SHA-256", "modified");
	src[CPOL_SOURCE_BYTES + CPOL_SRC_SHA256] ^= 1;

	/* 17 sections only from 3.5. */
	put_le(blob + CPOL_HDR_MINOR, 2, CPOL_MINOR_PACKAGES);
	rehash(blob);
	expect_field_msg(blob, len, "header.section_count", "17", "has 15");
	put_le(blob + CPOL_HDR_MINOR, 2, CPOL_MINOR_PROVENANCE);

	/* Roles: the descriptor first, then an inventory, never back. */
	put_le(src + CPOL_SRC_ROLE, 4, CPOL_SRC_INVENTORY);
	rehash(blob);
	expect_field_msg(blob, len, "sources[0].role", "inventory", "one descriptor");
	put_le(src + CPOL_SRC_ROLE, 4, CPOL_SRC_DESCRIPTOR);
	put_le(src + 2 * CPOL_SOURCE_BYTES + CPOL_SRC_ROLE, 4, CPOL_SRC_DESCRIPTOR);
	rehash(blob);
	expect_field_msg(blob, len, "sources[2].role", "descriptor after", "policy files");
	put_le(src + 2 * CPOL_SOURCE_BYTES + CPOL_SRC_ROLE, 4, 9);
	rehash(blob);
	expect_field_msg(blob, len, "sources[2].role", "role 9", "not known");
	put_le(src + 2 * CPOL_SOURCE_BYTES + CPOL_SRC_ROLE, 4, CPOL_SRC_INVENTORY);
	put_le(src + 3 * CPOL_SOURCE_BYTES + CPOL_SRC_RESERVED, 4, 5);
	rehash(blob);
	expect_field_msg(blob, len, "sources[3].reserved", "holds 5", "must be 0");
	put_le(src + 3 * CPOL_SOURCE_BYTES + CPOL_SRC_RESERVED, 4, 0);
	put_le(src + CPOL_SRC_NAME + CPOL_STR_OFF, 4, 0);
	put_le(src + CPOL_SRC_NAME + CPOL_STR_LEN, 4, 0);
	rehash(blob);
	expect_field_msg(blob, len, "sources[0].name", "name", "empty");

	/* The lint record. */
	assert_int_equal(blob_emit((build_provenance(&p), &p), &rich, &rich_len, &err), 0);
	policy_free(&p);
	memcpy(blob, rich, len);
	free(rich);
	put_le(lint + CPOL_LINT_SUPPRESSED, 4, 1);
	rehash(blob);
	expect_field_msg(blob, len, "lint.rules", "2 rules", "only 1");
	put_le(lint + CPOL_LINT_SUPPRESSED, 4, 3);
	{
		uint8_t *sl = blob + sec_off(blob, CPOL_SEC_STRLIST);
		uint32_t first = (uint32_t)get_le(lint + CPOL_LINT_RULES, 4);
		uint8_t a[CPOL_STR_BYTES];

		memcpy(a, sl + (size_t)first * CPOL_STR_BYTES, CPOL_STR_BYTES);
		memcpy(sl + (size_t)first * CPOL_STR_BYTES, sl + (size_t)(first + 1) * CPOL_STR_BYTES, CPOL_STR_BYTES);
		memcpy(sl + (size_t)(first + 1) * CPOL_STR_BYTES, a, CPOL_STR_BYTES);
		rehash(blob);
		expect_field_msg(blob, len, "lint.rules", "\"CDN301\" comes after \"CDN407\"", "sorted");
		memcpy(sl + (size_t)(first + 1) * CPOL_STR_BYTES, sl + (size_t)first * CPOL_STR_BYTES, CPOL_STR_BYTES);
		rehash(blob);
		expect_field_msg(blob, len, "lint.rules", "appears twice", "unique");
	}
	free(blob);

	/* Every value of every byte of the first source and the lint record:
	 * refused with a field, or loaded and sound. */
	build_provenance(&p);
	assert_int_equal(blob_emit(&p, &blob, &len, &err), 0);
	policy_free(&p);
	{
		uint8_t *spots[] = { blob + prov_sec_off(blob, CPOL_SEC_SOURCES), blob + prov_sec_off(blob, CPOL_SEC_LINT) };
		size_t widths[] = { CPOL_SOURCE_BYTES, CPOL_LINT_BYTES };

		mutate_every_byte(blob, len, spots, widths, 2);
	}
	free(blob);
}

static void test_write_seeds(void **state)
{
	const char *dir = getenv("CORDON_WRITE_SEEDS");
	struct cpol_policy p;

	(void)state;
	if (dir == NULL || dir[0] == '\0')
		skip();
	build_rich(&p);
	write_seed(dir, "rich.cpol", &p);
	p.signature.algo = CPOL_SIG_ED25519;
	memset(p.signature.keyid, 0x5A, sizeof(p.signature.keyid));
	for (size_t i = 0; i < sizeof(p.signature.sig); i++)
		p.signature.sig[i] = (uint8_t)(i * 7);
	write_seed(dir, "rich-signed.cpol", &p);
	policy_free(&p);
	build_minimal(&p);
	write_seed(dir, "minimal.cpol", &p);
	policy_free(&p);
	build_packages(&p); /* 3.4: the 56-byte executor record */
	write_seed(dir, "rich-packages.cpol", &p);
	policy_free(&p);
	build_provenance(&p); /* 3.5: SOURCES and LINT */
	write_seed(dir, "rich-provenance.cpol", &p);
	policy_free(&p);
}

/* Load a policy built in memory and insist the loader refuses it with a
 * message containing want.  For rules the writer does not enforce. */
static void expect_policy_refused(struct cpol_policy *p, const char *want)
{
	struct cpol_policy q;
	struct blob_error err;
	uint8_t *blob = NULL;
	size_t len = 0;
	int rc;

	assert_int_equal(blob_emit(p, &blob, &len, &err), 0);
	rc = blob_load(blob, len, BLOB_ANY_ARCH, &q, &err);
	policy_free(&q);
	free(blob);
	if (rc == 0)
		fail_msg("blob loaded; expected an error mentioning \"%s\"", want);
	if (strstr(err.msg, want) == NULL)
		fail_msg("error %s: %s; expected one mentioning \"%s\"", err.field, err.msg, want);
}

/* Regression: an unbounded chain of arrays let a blob nest parameters as
 * deep as its size allowed, a stack hazard for any recursive walker. */
static void test_param_depth_bound(void **state)
{
	struct cpol_policy p;
	uint32_t i, n;

	(void)state;
	for (n = CPOL_MAX_PARAM_DEPTH; n <= CPOL_MAX_PARAM_DEPTH + 1; n++) {
		build_rich(&p);
		/* Replace tool 0's params with one chain: n-1 arrays, then a string. */
		p.params = arena_calloc(&p.arena, n, sizeof(*p.params));
		assert_non_null(p.params);
		for (i = 0; i < n; i++) {
			p.params[i].name = i == 0 ? "chain" : "";
			p.params[i].type = i + 1 < n ? CPOL_T_ARRAY : CPOL_T_STRING;
			p.params[i].items = i + 1 < n ? i + 1 : CPOL_NONE;
		}
		p.nparams = n;
		for (i = 0; i < p.ntools; i++)
			p.tools[i].params = (struct cpol_range){ 0, 0 };
		p.tools[0].params = (struct cpol_range){ 0, 1 };
		if (n == CPOL_MAX_PARAM_DEPTH) {
			struct cpol_policy q;
			struct blob_error err;
			uint8_t *blob = NULL;
			size_t len = 0;

			assert_int_equal(blob_emit(&p, &blob, &len, &err), 0);
			if (blob_load(blob, len, BLOB_ANY_ARCH, &q, &err) != 0)
				fail_msg("depth %u refused: %s: %s", n, err.field, err.msg);
			policy_free(&q);
			free(blob);
		} else {
			expect_policy_refused(&p, "deeper than");
		}
		policy_free(&p);
	}
}

static void test_items_not_required(void **state)
{
	struct cpol_policy p;

	(void)state;
	build_rich(&p);
	p.params[P_TAGS_ITEMS].flags |= CPOL_PRM_F_REQUIRED;
	expect_policy_refused(&p, "cannot be 'required'");
	policy_free(&p);
}

/* The runtime joins output paths onto out/; a blob must not be able to
 * name a file outside it, whoever wrote the blob. */
static void test_output_path_escape(void **state)
{
	static const char *const bad[] = { "/etc/passwd", "../x", "a/../../x", "a//b", "./a", "a/", "a\\b" };
	struct cpol_policy p;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		build_rich(&p);
		p.outputs[0].path = bad[i];
		p.noutputs = 1;
		expect_policy_refused(&p, "leaves the output directory");
		policy_free(&p);
	}
}

/* A program the kernel would refuse is refused by the loader, by
 * instruction, before any sandbox setup could start. */
static void test_bad_bpf_program(void **state)
{
	struct cpol_policy p;

	(void)state;
	build_rich(&p);
	p.seccomp[1].jt = 9; /* jeq jumps past the end */
	expect_policy_refused(&p, "The seccomp program is invalid");
	policy_free(&p);
	build_rich(&p);
	p.seccomp[4].code = 0x07; /* tax as the last instruction: no ret */
	expect_policy_refused(&p, "The seccomp program is invalid");
	policy_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_cpu_quota),
		cmocka_unit_test(test_param_depth_bound),
		cmocka_unit_test(test_items_not_required),
		cmocka_unit_test(test_output_path_escape),
		cmocka_unit_test(test_bad_bpf_program),
		cmocka_unit_test(test_minimal_and_null_strings),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_canonical_zero_fields),
		cmocka_unit_test(test_arch),
		cmocka_unit_test(test_bad_magic),
		cmocka_unit_test(test_bad_total_size),
		cmocka_unit_test(test_bad_version_and_counts),
		cmocka_unit_test(test_unaligned_section),
		cmocka_unit_test(test_nonzero_padding),
		cmocka_unit_test(test_bad_hash),
		cmocka_unit_test(test_string_ref_out_of_range),
		cmocka_unit_test(test_string_ref_shape),
		cmocka_unit_test(test_unsorted_tools),
		cmocka_unit_test(test_older_major_refused),
		cmocka_unit_test(test_tool_daily_budget),
		cmocka_unit_test(test_tool_returns),
		cmocka_unit_test(test_tool_identity),
		cmocka_unit_test(test_tool_user_name),
		cmocka_unit_test(test_tool_cgroup_limits),
		cmocka_unit_test(test_ws_entries),
		cmocka_unit_test(test_preload),
		cmocka_unit_test(test_packages),
		cmocka_unit_test(test_module_name_rule),
		cmocka_unit_test(test_duplicate_env),
		cmocka_unit_test(test_param_backward_ref),
		cmocka_unit_test(test_param_ownership),
		cmocka_unit_test(test_nan_bound),
		cmocka_unit_test(test_min_above_max),
		cmocka_unit_test(test_flag_type_mismatch),
		cmocka_unit_test(test_agent_tools_order),
		cmocka_unit_test(test_signature_record),
		cmocka_unit_test(test_truncations),
		cmocka_unit_test(test_mutations),
		cmocka_unit_test(test_sessions),
		cmocka_unit_test(test_map_file),
		cmocka_unit_test(test_provenance),
		cmocka_unit_test(test_write_seeds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
