/* SPDX-License-Identifier: Apache-2.0 */
/*
 * diff.c - policy_diff(): two decoded policies compared field by field.
 *
 * Tables are matched by their keys (mount target, env name, tool id, agent
 * name, output path, parameter name), never by position, so a reordering
 * is no change.  The seccomp filters are compared by running both in the
 * BPF interpreter: every syscall number with argument vectors built from
 * the constants either program tests that syscall's arguments against
 * (each, one above and one below, in the low and the high half), in
 * combination across arguments, so an argument condition that was
 * loosened, also in a second argument, shows as "allowed for some
 * arguments".
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <seccomp.h>

#include "compiler/bpf_sim.h"
#include "lint/diff.h"

#define SYSCALL_MAX_NR 512 /* x86_64 numbers; x32 ones are refused by every prelude */

const char *lint_fmt_size(uint64_t v, char *buf, size_t cap)
{
	static const char units[] = "kmgt";
	int u = -1;

	while (u < 3 && v != 0 && v % 1024 == 0) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, cap, "%llu", (unsigned long long)v);
	else
		snprintf(buf, cap, "%llu%c", (unsigned long long)v, units[u]);
	return buf;
}

const char *lint_fmt_ms(uint64_t ms, char *buf, size_t cap)
{
	if (ms != 0 && ms % 3600000 == 0)
		snprintf(buf, cap, "%lluh", (unsigned long long)(ms / 3600000));
	else if (ms != 0 && ms % 60000 == 0)
		snprintf(buf, cap, "%llum", (unsigned long long)(ms / 60000));
	else if (ms % 1000 == 0)
		snprintf(buf, cap, "%llus", (unsigned long long)(ms / 1000));
	else
		snprintf(buf, cap, "%llums", (unsigned long long)ms);
	return buf;
}

const char *diff_kind_name(enum diff_kind k)
{
	return k == DIFF_WIDEN ? "widen" : k == DIFF_NARROW ? "narrow" : "change";
}

static void add(struct diff_result *r, enum diff_kind kind, const char *oldv, const char *newv, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void add(struct diff_result *r, enum diff_kind kind, const char *oldv, const char *newv, const char *fmt, ...)
{
	struct diff_change *c;
	va_list ap;

	if (r->n == r->cap) {
		size_t ncap = r->cap ? r->cap * 2 : 16;
		struct diff_change *nv = realloc(r->v, ncap * sizeof(*nv));

		if (nv == NULL) {
			r->oom = 1;
			return;
		}
		r->v = nv;
		r->cap = ncap;
	}
	c = &r->v[r->n];
	va_start(ap, fmt);
	if (vasprintf(&c->path, fmt, ap) < 0)
		c->path = NULL;
	va_end(ap);
	c->kind = kind;
	c->old = strdup(oldv);
	c->new = strdup(newv);
	if (c->path == NULL || c->old == NULL || c->new == NULL) {
		free(c->path);
		free(c->old);
		free(c->new);
		r->oom = 1;
		return;
	}
	r->count[kind]++;
	r->n++;
}

void diff_free(struct diff_result *r)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		free(r->v[i].path);
		free(r->v[i].old);
		free(r->v[i].new);
	}
	free(r->v);
	memset(r, 0, sizeof(*r));
}

/* --- scalars -------------------------------------------------------------- */

enum unit { U_PLAIN, U_SIZE, U_MS, U_CPU };

static const char *fmt_u(uint64_t v, enum unit u, char *buf, size_t cap)
{
	if (u == U_SIZE)
		return lint_fmt_size(v, buf, cap);
	if (u == U_MS)
		return lint_fmt_ms(v, buf, cap);
	/* Thousandths of a CPU, written as the descriptor writes them. */
	if (u == U_CPU) {
		int n = snprintf(buf, cap, "%llu.%03llu", (unsigned long long)(v / 1000), (unsigned long long)(v % 1000));

		while (n > 0 && (size_t)n < cap && buf[n - 1] == '0')
			buf[--n] = '\0';
		if (n > 0 && (size_t)n < cap && buf[n - 1] == '.')
			buf[--n] = '\0';
		return buf;
	}
	snprintf(buf, cap, "%llu", (unsigned long long)v);
	return buf;
}

/* A limit where more is more authority.  unlimited_zero: 0 means "no
 * limit" (max_calls, the workspace cap). */
static void cmp_more(struct diff_result *r, const char *path, uint64_t a, uint64_t b, enum unit u, int unlimited_zero)
{
	char x[32], y[32];
	uint64_t ea = (unlimited_zero && a == 0) ? UINT64_MAX : a, eb = (unlimited_zero && b == 0) ? UINT64_MAX : b;

	if (a == b)
		return;
	add(r, eb > ea ? DIFF_WIDEN : DIFF_NARROW, unlimited_zero && a == 0 ? "unlimited" : fmt_u(a, u, x, sizeof(x)),
	    unlimited_zero && b == 0 ? "unlimited" : fmt_u(b, u, y, sizeof(y)), "%s", path);
}

static void cmp_str(struct diff_result *r, enum diff_kind kind, const char *path, const char *a, const char *b)
{
	if (strcmp(a ? a : "", b ? b : "") != 0)
		add(r, kind, a ? a : "", b ? b : "", "%s", path);
}

static void cmp_flag(struct diff_result *r, const char *path, int a, int b, int on_widens)
{
	if (!a == !b)
		return;
	add(r, (!!b == !!on_widens) ? DIFF_WIDEN : DIFF_NARROW, a ? "true" : "false", b ? "true" : "false", "%s", path);
}

static int strs_has(const struct cpol_strs *s, const char *x)
{
	uint32_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->v[i], x) == 0)
			return 1;
	return 0;
}

/* Set change of a string list: an added member is `added`, a removed one
 * the opposite. */
static void cmp_set(struct diff_result *r, const char *path, const struct cpol_strs *a, const struct cpol_strs *b,
		    enum diff_kind added)
{
	enum diff_kind removed = added == DIFF_WIDEN ? DIFF_NARROW : added == DIFF_NARROW ? DIFF_WIDEN : DIFF_CHANGE;
	uint32_t i;

	for (i = 0; i < b->n; i++)
		if (!strs_has(a, b->v[i]))
			add(r, added, "", b->v[i], "%s", path);
	for (i = 0; i < a->n; i++)
		if (!strs_has(b, a->v[i]))
			add(r, removed, a->v[i], "", "%s", path);
}

static int strs_equal(const struct cpol_strs *a, const struct cpol_strs *b)
{
	uint32_t i;

	if (a->n != b->n)
		return 0;
	for (i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]) != 0)
			return 0;
	return 1;
}

static char *strs_join(const struct cpol_strs *s)
{
	size_t len = 1, i;
	char *out;

	for (i = 0; i < s->n; i++)
		len += strlen(s->v[i]) + 1;
	out = malloc(len);
	if (out == NULL)
		return NULL;
	out[0] = '\0';
	for (i = 0; i < s->n; i++) {
		if (i)
			strcat(out, " ");
		strcat(out, s->v[i]);
	}
	return out;
}

/* --- sections ------------------------------------------------------------- */

static void diff_limits(struct diff_result *r, const struct cpol_limits *a, const struct cpol_limits *b)
{
	if (a->mode != b->mode)
		add(r, b->mode == CPOL_MODE_LOCAL ? DIFF_WIDEN : DIFF_NARROW, policy_mode_name(a->mode),
		    policy_mode_name(b->mode), "limits.mode");
	cmp_more(r, "limits.timeout", a->timeout_ms, b->timeout_ms, U_MS, 0);
	cmp_more(r, "limits.max_file_bytes", a->max_file_bytes, b->max_file_bytes, U_SIZE, 0);
	cmp_more(r, "limits.max_exec_workspace_delta_bytes", a->ws_delta_bytes, b->ws_delta_bytes, U_SIZE, 0);
	cmp_more(r, "limits.max_exec_workspace_bytes", a->ws_max_bytes, b->ws_max_bytes, U_SIZE, 1);
	cmp_more(r, "limits.max_exec_workspace_entries", a->ws_entries, b->ws_entries, U_PLAIN, 0);
	/* Measured less often: a burst can grow further between two looks. */
	cmp_more(r, "limits.workspace_monitor_interval", a->monitor_ms, b->monitor_ms, U_MS, 0);
	cmp_more(r, "limits.max_output_bytes", a->max_output_bytes, b->max_output_bytes, U_SIZE, 0);
	cmp_more(r, "limits.max_result_bytes", a->max_result_bytes, b->max_result_bytes, U_SIZE, 0);
	cmp_more(r, "limits.max_code_bytes", a->max_code_bytes, b->max_code_bytes, U_SIZE, 0);
	cmp_more(r, "limits.max_tool_request_bytes", a->max_tool_request_bytes, b->max_tool_request_bytes, U_SIZE, 0);
	cmp_more(r, "limits.memory", a->memory_bytes, b->memory_bytes, U_SIZE, 0);
	cmp_more(r, "limits.pids", a->pids, b->pids, U_PLAIN, 0);
	cmp_more(r, "limits.open_files", a->open_files, b->open_files, U_PLAIN, 0);
	/* No quota is the most CPU: a removed quota widens like a raised one. */
	cmp_more(r, "limits.cpu", a->cpu_milli, b->cpu_milli, U_CPU, 1);
}

/* A tool's identity, ranked by what it may reach: a dedicated uid of the
 * run, then a named account or fixed ids (which hold whatever that account
 * holds on the host), then the supervisor's own (root when it is root).
 * Up the ranks widens, down narrows, sideways (another account) changes. */
static int run_as_rank(uint32_t k)
{
	return k == CPOL_RUN_AS_DEDICATED ? 0 : k == CPOL_RUN_AS_SUPERVISOR ? 2 : 1;
}

static void run_as_text(const struct cpol_tool *t, char *buf, size_t n)
{
	if (t->run_as == CPOL_RUN_AS_USER)
		snprintf(buf, n, "user %s", t->run_user);
	else if (t->run_as == CPOL_RUN_AS_IDS)
		snprintf(buf, n, "uid %u gid %u", t->run_uid, t->run_gid);
	else
		snprintf(buf, n, "%s", policy_run_as_name(t->run_as));
}

static void cmp_run_as(struct diff_result *r, const char *path, const struct cpol_tool *a, const struct cpol_tool *b)
{
	char x[64], y[64];
	int ra = run_as_rank(a->run_as), rb = run_as_rank(b->run_as);

	run_as_text(a, x, sizeof(x));
	run_as_text(b, y, sizeof(y));
	if (strcmp(x, y) == 0)
		return;
	add(r, rb > ra ? DIFF_WIDEN : rb < ra ? DIFF_NARROW : DIFF_CHANGE, x, y, "%s", path);
}

static void cmp_id(struct diff_result *r, const char *path, uint32_t a, uint32_t b)
{
	char x[16], y[16];

	if (a == b)
		return;
	snprintf(x, sizeof(x), "%u", (unsigned)a);
	snprintf(y, sizeof(y), "%u", (unsigned)b);
	add(r, b == 0 ? DIFF_WIDEN : a == 0 ? DIFF_NARROW : DIFF_CHANGE, x, y, "%s", path);
}

/* Preloading changes what a warm sandbox holds in memory and how fast a
 * program starts, not what it may reach: the same filter, mounts and
 * landlock rules apply whatever was imported, so any change is neutral.
 * Order counts too (one import can depend on another having run).  The
 * package list is the same kind of change (imported before the program
 * too, and told to the model). */
static void diff_modules(struct diff_result *r, const char *field, const char **a, uint32_t na, const char **b,
			 uint32_t nb)
{
	struct cpol_strs x = { a, na }, y = { b, nb };
	char *xs, *ys;

	if (strs_equal(&x, &y))
		return;
	xs = strs_join(&x);
	ys = strs_join(&y);
	if (xs == NULL || ys == NULL)
		r->oom = 1;
	else
		add(r, DIFF_CHANGE, xs[0] ? xs : "(none)", ys[0] ? ys : "(none)", "%s", field);
	free(xs);
	free(ys);
}

static void diff_exec(struct diff_result *r, const struct cpol_executor *a, const struct cpol_executor *b)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} layers[] = { { CPOL_LAYER_LANDLOCK, "landlock" }, { CPOL_LAYER_CGROUP, "cgroup" } };
	size_t i;

	cmp_str(r, DIFF_CHANGE, "executor.interpreter", a->interpreter, b->interpreter);
	cmp_id(r, "executor.uid", a->uid, b->uid);
	cmp_id(r, "executor.gid", a->gid, b->gid);
	if (a->network != b->network)
		add(r, b->network > a->network ? DIFF_WIDEN : DIFF_NARROW, policy_network_name(a->network),
		    policy_network_name(b->network), "executor.network");
	cmp_flag(r, "executor.landlock", a->flags & CPOL_EXE_F_LANDLOCK, b->flags & CPOL_EXE_F_LANDLOCK, 0);
	for (i = 0; i < sizeof(layers) / sizeof(layers[0]); i++)
		if ((a->require ^ b->require) & layers[i].bit)
			add(r, (b->require & layers[i].bit) ? DIFF_NARROW : DIFF_WIDEN,
			    (a->require & layers[i].bit) ? layers[i].name : "", (b->require & layers[i].bit) ? layers[i].name : "",
			    "executor.require");
	cmp_str(r, DIFF_CHANGE, "executor.seccomp.profile", a->seccomp_profile, b->seccomp_profile);
	cmp_str(r, DIFF_CHANGE, "executor.seccomp.extra", a->seccomp_extra, b->seccomp_extra);
	diff_modules(r, "executor.preload", a->preload, a->npreload, b->preload, b->npreload);
	diff_modules(r, "executor.packages", a->packages, a->npackages, b->packages, b->npackages);
}

static void diff_env(struct diff_result *r, const struct cpol_policy *a, const struct cpol_policy *b)
{
	uint32_t i, j;

	for (i = 0; i < b->nenv; i++) {
		for (j = 0; j < a->nenv && strcmp(a->env[j].key, b->env[i].key) != 0; j++)
			;
		if (j == a->nenv)
			add(r, DIFF_CHANGE, "", b->env[i].value, "env[%s]", b->env[i].key);
		else if (strcmp(a->env[j].value, b->env[i].value) != 0)
			add(r, DIFF_CHANGE, a->env[j].value, b->env[i].value, "env[%s]", b->env[i].key);
	}
	for (j = 0; j < a->nenv; j++) {
		for (i = 0; i < b->nenv && strcmp(a->env[j].key, b->env[i].key) != 0; i++)
			;
		if (i == b->nenv)
			add(r, DIFF_CHANGE, a->env[j].value, "", "env[%s]", a->env[j].key);
	}
}

static void mount_words(const struct cpol_mount *m, char *buf, size_t cap)
{
	char sz[32];

	if (m->type == CPOL_MOUNT_TMPFS)
		snprintf(buf, cap, "tmpfs %s", lint_fmt_size(m->size, sz, sizeof(sz)));
	else
		snprintf(buf, cap, "bind %s%s", m->source, (m->flags & CPOL_MNT_F_RW) ? " rw" : " ro");
}

static const struct cpol_mount *mount_find(const struct cpol_policy *p, const char *target)
{
	uint32_t i;

	for (i = 0; i < p->nmounts; i++)
		if (strcmp(p->mounts[i].target, target) == 0)
			return &p->mounts[i];
	return NULL;
}

static void diff_mounts(struct diff_result *r, const struct cpol_policy *a, const struct cpol_policy *b)
{
	char x[4200], y[4200];
	uint32_t i;

	for (i = 0; i < b->nmounts; i++) {
		const struct cpol_mount *n = &b->mounts[i], *o = mount_find(a, n->target);

		mount_words(n, y, sizeof(y));
		if (o == NULL) {
			add(r, DIFF_WIDEN, "", y, "mounts[%s]", n->target);
			continue;
		}
		mount_words(o, x, sizeof(x));
		if (o->type != n->type) /* a tmpfs that becomes a host path widens */
			add(r, n->type == CPOL_MOUNT_BIND ? DIFF_WIDEN : DIFF_NARROW, x, y, "mounts[%s]", n->target);
		else if (n->type == CPOL_MOUNT_BIND && strcmp(o->source, n->source) != 0)
			add(r, DIFF_WIDEN, o->source, n->source, "mounts[%s].source", n->target);
		snprintf(x, sizeof(x), "mounts[%s].rw", n->target);
		if (o->type == n->type && n->type == CPOL_MOUNT_BIND)
			cmp_flag(r, x, o->flags & CPOL_MNT_F_RW, n->flags & CPOL_MNT_F_RW, 1);
		snprintf(x, sizeof(x), "mounts[%s].size", n->target);
		if (o->type == n->type && n->type == CPOL_MOUNT_TMPFS)
			cmp_more(r, x, o->size, n->size, U_SIZE, 0);
	}
	for (i = 0; i < a->nmounts; i++)
		if (mount_find(b, a->mounts[i].target) == NULL) {
			mount_words(&a->mounts[i], x, sizeof(x));
			add(r, DIFF_NARROW, x, "", "mounts[%s]", a->mounts[i].target);
		}
}

/* --- seccomp -------------------------------------------------------------- */

/*
 * Which argument values to try for one syscall.  A condition can join
 * several arguments (`domain == AF_INET && type == SOCK_STREAM`), so trying
 * one argument at a time with the others at 0 misses a loosened second
 * argument.  Instead each program is walked from the top with nr and arch
 * known and the argument words unknown, following both branches of every
 * test on an argument word: the constants met on the way are what that
 * syscall's decision depends on, per word.  Every combination of those
 * values (each constant, one above and one below, and 0) over the arguments
 * involved is then run through both filters.
 */
#define SC_WORDS 12         /* args[0..5], low and high halves */
#define SC_WORD_VALS 160    /* candidates kept per word */
#define SC_ARG_VALS 1024    /* lo x hi combinations kept per argument */
#define SC_WALK_STATES 8192 /* distinct (pc, A, X) states walked per syscall */
#define SC_FULL_COMBOS 200000

enum sc_kind { SC_CONST, SC_WORD, SC_UNKNOWN };

struct sc_reg {
	uint8_t kind;
	uint32_t v; /* SC_CONST: the value; SC_WORD: the word index */
};

struct sc_words {
	uint32_t v[SC_WORDS][SC_WORD_VALS];
	size_t n[SC_WORDS];
	int incomplete; /* the walk gave up: every constant goes to every word */
};

static void word_add(struct sc_words *w, unsigned word, uint32_t k)
{
	const uint32_t c[3] = { k, k + 1, k - 1 };
	size_t i, j;

	for (j = 0; j < 3; j++) {
		for (i = 0; i < w->n[word] && w->v[word][i] != c[j]; i++)
			;
		if (i == w->n[word] && w->n[word] < SC_WORD_VALS)
			w->v[word][w->n[word]++] = c[j];
	}
}

static void word_note(struct sc_words *w, const struct sc_reg *r, uint32_t k)
{
	if (r->kind == SC_WORD)
		word_add(w, r->v, k);
}

/* A mask (and, jset): each of its bits alone too, so a flag dropped from
 * a forbidden set (`!(flags & (CLONE_NEWNET | ...))`) is tried by itself. */
static void word_note_bits(struct sc_words *w, const struct sc_reg *r, uint32_t k)
{
	unsigned bit;

	word_note(w, r, k);
	for (bit = 0; bit < 32; bit++)
		if (k & (1u << bit))
			word_note(w, r, 1u << bit);
}

struct sc_state {
	uint32_t pc;
	struct sc_reg a, x;
};

struct sc_walk {
	const struct cpol_bpf *prog;
	uint32_t n;
	struct sc_state *stack, *seen;
	size_t nstack, nseen;
};

/* 1 when s is new (and now recorded), 0 when walked before, -1 when the
 * budget is spent. */
static int walk_mark(struct sc_walk *w, const struct sc_state *s)
{
	size_t i;

	for (i = 0; i < w->nseen; i++)
		if (w->seen[i].pc == s->pc && w->seen[i].a.kind == s->a.kind && w->seen[i].a.v == s->a.v &&
		    w->seen[i].x.kind == s->x.kind && w->seen[i].x.v == s->x.v)
			return 0;
	if (w->nseen == SC_WALK_STATES)
		return -1;
	w->seen[w->nseen++] = *s;
	return 1;
}

static int walk_push(struct sc_walk *w, uint32_t pc, const struct sc_reg *a, const struct sc_reg *x)
{
	struct sc_state s;
	int m;

	memset(&s, 0, sizeof(s));
	s.pc = pc;
	s.a = *a;
	s.x = *x;
	if (pc >= w->n)
		return 0; /* an invalid jump: the simulator refuses the run */
	if ((m = walk_mark(w, &s)) <= 0)
		return m;
	w->stack[w->nstack++] = s;
	return 0;
}

static uint32_t alu_k(uint16_t op, uint32_t a, uint32_t k, int *ok)
{
	*ok = 1;
	switch (op) {
	case 0x00: return a + k;                  /* BPF_ADD */
	case 0x10: return a - k;                  /* BPF_SUB */
	case 0x20: return a * k;                  /* BPF_MUL */
	case 0x50: return a & k;                  /* BPF_AND */
	case 0x40: return a | k;                  /* BPF_OR */
	case 0xa0: return a ^ k;                  /* BPF_XOR */
	case 0x60: return k < 32 ? a << k : 0;    /* BPF_LSH */
	case 0x70: return k < 32 ? a >> k : 0;    /* BPF_RSH */
	case 0x80: return (uint32_t)-a;           /* BPF_NEG */
	}
	*ok = 0;
	return 0;
}

/* Walk p for syscall nr and add the constants its argument tests use to
 * *w.  An instruction the walk does not model sends it the safe way: both
 * branches, or, past the budget, every constant to every word. */
static void sc_walk_syscall(const struct cpol_policy *p, int nr, struct sc_words *w, struct sc_state *stack,
			    struct sc_state *seen)
{
	struct sc_walk wk = { p->seccomp, p->nseccomp, stack, seen, 0, 0 };
	struct sc_reg a = { SC_UNKNOWN, 0 }, x = { SC_UNKNOWN, 0 };

	if (p->nseccomp == 0 || walk_push(&wk, 0, &a, &x) < 0)
		return;
	while (wk.nstack > 0 && !w->incomplete) {
		struct sc_state s = wk.stack[--wk.nstack];
		int rc = 0;

		for (;;) {
			const struct cpol_bpf *in = &wk.prog[s.pc];
			uint16_t cls = in->code & 0x07, op = in->code & 0xf0;
			uint32_t k = in->k;

			if (cls == 0x06) /* BPF_RET */
				break;
			if (cls == 0x00 || cls == 0x01) { /* BPF_LD, BPF_LDX */
				struct sc_reg *r = cls == 0x00 ? &s.a : &s.x;
				uint16_t mode = in->code & 0xe0;

				if (mode == 0x20 && k == BPF_SIM_OFF_NR) /* BPF_ABS */
					*r = (struct sc_reg){ SC_CONST, (uint32_t)nr };
				else if (mode == 0x20 && k == BPF_SIM_OFF_ARCH)
					*r = (struct sc_reg){ SC_CONST, CPOL_ARCH_X86_64 };
				else if (mode == 0x20 && k >= BPF_SIM_OFF_ARG_LO(0) && k < BPF_SIM_OFF_ARG_LO(6) && k % 4 == 0)
					*r = (struct sc_reg){ SC_WORD, (k - BPF_SIM_OFF_ARG_LO(0)) / 4 };
				else if (mode == 0x00) /* BPF_IMM */
					*r = (struct sc_reg){ SC_CONST, k };
				else if (mode == 0x80) /* BPF_LEN */
					*r = (struct sc_reg){ SC_CONST, 64 };
				else
					*r = (struct sc_reg){ SC_UNKNOWN, 0 };
				s.pc++;
			} else if (cls == 0x02 || cls == 0x03) { /* BPF_ST, BPF_STX: memory is not modelled */
				s.pc++;
			} else if (cls == 0x04) { /* BPF_ALU */
				int ok = 0;

				if (in->code & 0x08) { /* BPF_X */
					if (s.a.kind == SC_CONST && s.x.kind == SC_CONST && op != 0x30 && op != 0x90)
						s.a.v = alu_k(op, s.a.v, s.x.v, &ok);
					else if (s.a.kind == SC_WORD && s.x.kind == SC_CONST)
						word_note(w, &s.a, s.x.v), ok = 1;
					else
						ok = s.a.kind == SC_WORD;
				} else if (s.a.kind == SC_CONST) {
					s.a.v = alu_k(op, s.a.v, k, &ok);
				} else if (s.a.kind == SC_WORD) {
					/* a mask or offset: the value itself is worth a try */
					if (op == 0x50)
						word_note_bits(w, &s.a, k);
					else
						word_note(w, &s.a, k);
					ok = 1;
				}
				if (!ok)
					s.a = (struct sc_reg){ SC_UNKNOWN, 0 };
				s.pc++;
			} else if (cls == 0x07) { /* BPF_MISC: TAX, TXA */
				if (in->code & 0x80)
					s.a = s.x;
				else
					s.x = s.a;
				s.pc++;
			} else { /* BPF_JMP */
				const struct sc_reg *rhs = (in->code & 0x08) ? &s.x : NULL;
				uint32_t jt = s.pc + 1 + in->jt, jf = s.pc + 1 + in->jf, b;
				int taken;

				if (op == 0x00) { /* BPF_JA */
					s.pc += 1 + k;
					if (s.pc >= wk.n)
						break;
					continue;
				}
				b = rhs ? rhs->v : k;
				if (s.a.kind == SC_CONST && (rhs == NULL || rhs->kind == SC_CONST)) {
					taken = op == 0x10 ? s.a.v == b : op == 0x20 ? s.a.v > b : op == 0x30 ? s.a.v >= b
						: op == 0x40 ? (s.a.v & b) != 0 : 0;
					s.pc = taken ? jt : jf;
					if (s.pc >= wk.n)
						break;
					continue;
				}
				if ((rhs == NULL || rhs->kind == SC_CONST) && op == 0x40)
					word_note_bits(w, &s.a, b);
				else if (rhs == NULL || rhs->kind == SC_CONST)
					word_note(w, &s.a, b);
				if (rhs != NULL && rhs->kind == SC_WORD && s.a.kind == SC_CONST)
					word_note(w, rhs, s.a.v);
				if ((rc = walk_push(&wk, jt, &s.a, &s.x)) < 0 || (rc = walk_push(&wk, jf, &s.a, &s.x)) < 0)
					break;
				break;
			}
			if (s.pc >= wk.n)
				break;
		}
		if (rc < 0)
			w->incomplete = 1;
	}
}

/* The fallback when a walk gave up: every immediate of the program, for
 * every word. */
static void sc_all_constants(const struct cpol_policy *p, struct sc_words *w)
{
	uint32_t i;
	unsigned word;

	for (i = 0; i < p->nseccomp; i++)
		if ((p->seccomp[i].code & 0x07) == 0x05 && (p->seccomp[i].code & 0x08) == 0)
			for (word = 0; word < SC_WORDS; word++)
				word_add(w, word, p->seccomp[i].k);
}

static int allows(const struct cpol_policy *p, const struct bpf_sim_data *d)
{
	uint32_t ret;

	if (p->nseccomp == 0)
		return 1; /* no filter: everything passes */
	if (bpf_sim_exec(p->seccomp, p->nseccomp, d, &ret, NULL) != 0)
		return 0;
	ret &= BPF_SIM_RET_ACTION;
	return ret == BPF_SIM_RET_ALLOW || ret == BPF_SIM_RET_LOG || ret == BPF_SIM_RET_TRACE ||
	       ret == BPF_SIM_RET_USER_NOTIF;
}

struct sc_verdict {
	int a_only, b_only, a_any, b_any, a_all, b_all;
};

static void sc_try(const struct cpol_policy *a, const struct cpol_policy *b, const struct bpf_sim_data *d,
		   struct sc_verdict *v)
{
	int x = allows(a, d), y = allows(b, d);

	v->a_any |= x;
	v->b_any |= y;
	v->a_all &= x;
	v->b_all &= y;
	v->a_only |= x && !y;
	v->b_only |= y && !x;
}

/* Values of one argument: every low-word candidate with every high-word
 * one (0 always among both). */
static size_t sc_arg_values(const struct sc_words *w, int arg, uint64_t *out)
{
	uint32_t lo[SC_WORD_VALS + 1], hi[SC_WORD_VALS + 1];
	size_t nlo = 1, nhi = 1, i, j, n = 0;

	lo[0] = hi[0] = 0;
	for (i = 0; i < w->n[2 * arg]; i++)
		if (w->v[2 * arg][i] != 0)
			lo[nlo++] = w->v[2 * arg][i];
	for (i = 0; i < w->n[2 * arg + 1]; i++)
		if (w->v[2 * arg + 1][i] != 0)
			hi[nhi++] = w->v[2 * arg + 1][i];
	for (i = 0; i < nhi; i++)
		for (j = 0; j < nlo && n < SC_ARG_VALS; j++)
			out[n++] = ((uint64_t)hi[i] << 32) | lo[j];
	return n;
}

/* Run both filters over the combinations of the arguments' values: all of
 * them when there are few enough, else every pair of arguments (conditions
 * in practice join two or three arguments; the rest stay 0). */
static void sc_sweep(const struct cpol_policy *a, const struct cpol_policy *b, int nr, uint64_t (*vals)[SC_ARG_VALS],
		     const size_t *nv, struct sc_verdict *v)
{
	struct bpf_sim_data d;
	int args[6], nargs = 0, i, j;
	size_t idx[6] = { 0 }, total = 1, p, q;

	memset(&d, 0, sizeof(d));
	d.nr = nr;
	d.arch = CPOL_ARCH_X86_64;
	for (i = 0; i < 6; i++)
		if (nv[i] > 1) {
			args[nargs++] = i;
			total = total > SC_FULL_COMBOS ? total : total * nv[i];
		}
	if (total <= SC_FULL_COMBOS) {
		for (;;) {
			for (i = 0; i < nargs; i++)
				d.args[args[i]] = vals[args[i]][idx[i]];
			sc_try(a, b, &d, v);
			for (i = 0; i < nargs && ++idx[i] == nv[args[i]]; i++)
				idx[i] = 0;
			if (i == nargs)
				return;
		}
	}
	sc_try(a, b, &d, v);
	for (i = 0; i < nargs; i++)
		for (j = i; j < nargs; j++)
			for (p = 0; p < nv[args[i]]; p++)
				for (q = 0; q < (i == j ? 1 : nv[args[j]]); q++) {
					memset(d.args, 0, sizeof(d.args));
					d.args[args[i]] = vals[args[i]][p];
					if (i != j)
						d.args[args[j]] = vals[args[j]][q];
					sc_try(a, b, &d, v);
				}
}

static void diff_seccomp(struct diff_result *r, const struct cpol_policy *a, const struct cpol_policy *b)
{
	struct sc_words *w = malloc(sizeof(*w));
	uint64_t(*vals)[SC_ARG_VALS] = malloc(6 * sizeof(*vals));
	struct sc_state *stack = malloc(2 * SC_WALK_STATES * sizeof(*stack)), *seen = stack + SC_WALK_STATES;
	size_t nv[6];
	int nr, arg;

	if (w == NULL || vals == NULL || stack == NULL) {
		r->oom = 1;
		goto out;
	}
	if (a->nseccomp == b->nseccomp && (a->nseccomp == 0 || memcmp(a->seccomp, b->seccomp,
								       a->nseccomp * sizeof(*a->seccomp)) == 0))
		goto out; /* the same program */
	for (nr = 0; nr < SYSCALL_MAX_NR; nr++) {
		struct sc_verdict v = { 0, 0, 0, 0, 1, 1 };
		char *name;

		memset(w, 0, sizeof(*w));
		sc_walk_syscall(a, nr, w, stack, seen);
		sc_walk_syscall(b, nr, w, stack, seen);
		if (w->incomplete) {
			sc_all_constants(a, w);
			sc_all_constants(b, w);
		}
		for (arg = 0; arg < 6; arg++)
			nv[arg] = sc_arg_values(w, arg, vals[arg]);
		sc_sweep(a, b, nr, vals, nv, &v);
		if (!v.a_only && !v.b_only)
			continue;
		name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);
		if (name == NULL) {
			if (asprintf(&name, "syscall %d", nr) < 0) {
				r->oom = 1;
				break;
			}
		}
		add(r, v.b_only ? DIFF_WIDEN : DIFF_NARROW,
		    !v.a_any ? "refused" : v.a_all ? "allowed" : "allowed for some arguments",
		    !v.b_any ? "refused" : v.b_all ? "allowed" : "allowed for some arguments", "seccomp[%s]", name);
		/* Both ways at once (a condition rewritten): one line for each. */
		if (v.a_only && v.b_only)
			add(r, DIFF_NARROW, "some arguments allowed", "now refused", "seccomp[%s]", name);
		free(name);
	}
out:
	free(w);
	free(vals);
	free(stack);
}

/* --- tools ---------------------------------------------------------------- */

static const struct cpol_param *param_find(const struct cpol_policy *p, struct cpol_range run, const char *name)
{
	uint32_t i;

	for (i = run.first; i < run.first + run.count && i < p->nparams; i++)
		if (strcmp(p->params[i].name, name) == 0)
			return &p->params[i];
	return NULL;
}

static void diff_param(struct diff_result *r, const struct cpol_policy *pa, const struct cpol_param *a,
		       const struct cpol_policy *pb, const struct cpol_param *b, const char *path, int depth);

static void diff_props(struct diff_result *r, const struct cpol_policy *pa, struct cpol_range ra,
		       const struct cpol_policy *pb, struct cpol_range rb, const char *prefix, int depth)
{
	char path[512];
	uint32_t i;

	if (depth > 16)
		return;
	for (i = rb.first; i < rb.first + rb.count && i < pb->nparams; i++) {
		const struct cpol_param *n = &pb->params[i], *o = param_find(pa, ra, n->name);

		snprintf(path, sizeof(path), "%s.%s", prefix, n->name);
		if (o == NULL)
			add(r, DIFF_WIDEN, "", policy_type_name(n->type), "%s", path);
		else
			diff_param(r, pa, o, pb, n, path, depth + 1);
	}
	for (i = ra.first; i < ra.first + ra.count && i < pa->nparams; i++)
		if (param_find(pb, rb, pa->params[i].name) == NULL) {
			snprintf(path, sizeof(path), "%s.%s", prefix, pa->params[i].name);
			add(r, DIFF_NARROW, policy_type_name(pa->params[i].type), "", "%s", path);
		}
}

/* A parameter bound: upper (max, max_length, max_items) when upper is 1,
 * where unset or higher accepts more; lower (min, min_length) otherwise,
 * where unset or lower accepts more. */
static void cmp_bound(struct diff_result *r, const char *path, const char *what, int upper, int a_set, int64_t a,
		      int b_set, int64_t b)
{
	char x[32] = "none", y[32] = "none";

	if (a_set == b_set && (!a_set || a == b))
		return;
	if (a_set)
		snprintf(x, sizeof(x), "%lld", (long long)a);
	if (b_set)
		snprintf(y, sizeof(y), "%lld", (long long)b);
	add(r, (!b_set || (a_set && (upper ? b > a : b < a))) ? DIFF_WIDEN : DIFF_NARROW, x, y, "%s.%s", path, what);
}

static void diff_param(struct diff_result *r, const struct cpol_policy *pa, const struct cpol_param *a,
		       const struct cpol_policy *pb, const struct cpol_param *b, const char *path, int depth)
{
	char sub[512];

	if (a->type != b->type) {
		add(r, DIFF_CHANGE, policy_type_name(a->type), policy_type_name(b->type), "%s.type", path);
		return;
	}
	if ((a->flags ^ b->flags) & CPOL_PRM_F_REQUIRED)
		add(r, (b->flags & CPOL_PRM_F_REQUIRED) ? DIFF_NARROW : DIFF_WIDEN,
		    (a->flags & CPOL_PRM_F_REQUIRED) ? "true" : "false", (b->flags & CPOL_PRM_F_REQUIRED) ? "true" : "false",
		    "%s.required", path);
	switch (b->type) {
	case CPOL_T_STRING:
		cmp_bound(r, path, "max_length", 1, !!(a->flags & CPOL_PRM_F_MAX_LENGTH), (int64_t)a->max_length,
			  !!(b->flags & CPOL_PRM_F_MAX_LENGTH), (int64_t)b->max_length);
		cmp_bound(r, path, "min_length", 0, !!(a->flags & CPOL_PRM_F_MIN_LENGTH), (int64_t)a->min_length,
			  !!(b->flags & CPOL_PRM_F_MIN_LENGTH), (int64_t)b->min_length);
		if (a->enums.n > 0 || b->enums.n > 0) {
			snprintf(sub, sizeof(sub), "%s.enum", path);
			if (b->enums.n == 0)
				add(r, DIFF_WIDEN, "(a list)", "any string", "%s", sub);
			else if (a->enums.n == 0)
				add(r, DIFF_NARROW, "any string", "(a list)", "%s", sub);
			else
				cmp_set(r, sub, &a->enums, &b->enums, DIFF_WIDEN);
		}
		break;
	case CPOL_T_INTEGER:
		cmp_bound(r, path, "max", 1, !!(a->flags & CPOL_PRM_F_MAX), a->imax, !!(b->flags & CPOL_PRM_F_MAX), b->imax);
		cmp_bound(r, path, "min", 0, !!(a->flags & CPOL_PRM_F_MIN), a->imin, !!(b->flags & CPOL_PRM_F_MIN), b->imin);
		break;
	case CPOL_T_NUMBER:
		if ((a->flags ^ b->flags) & (CPOL_PRM_F_MIN | CPOL_PRM_F_MAX) || a->fmin != b->fmin || a->fmax != b->fmax) {
			char x[64], y[64];

			snprintf(x, sizeof(x), "[%g, %g]", (a->flags & CPOL_PRM_F_MIN) ? a->fmin : -1.0 / 0.0,
				 (a->flags & CPOL_PRM_F_MAX) ? a->fmax : 1.0 / 0.0);
			snprintf(y, sizeof(y), "[%g, %g]", (b->flags & CPOL_PRM_F_MIN) ? b->fmin : -1.0 / 0.0,
				 (b->flags & CPOL_PRM_F_MAX) ? b->fmax : 1.0 / 0.0);
			if (strcmp(x, y) != 0) {
				double alo = (a->flags & CPOL_PRM_F_MIN) ? a->fmin : -1.0 / 0.0;
				double ahi = (a->flags & CPOL_PRM_F_MAX) ? a->fmax : 1.0 / 0.0;
				double blo = (b->flags & CPOL_PRM_F_MIN) ? b->fmin : -1.0 / 0.0;
				double bhi = (b->flags & CPOL_PRM_F_MAX) ? b->fmax : 1.0 / 0.0;

				add(r, (blo < alo || bhi > ahi) ? DIFF_WIDEN : DIFF_NARROW, x, y, "%s.range", path);
			}
		}
		break;
	case CPOL_T_ARRAY:
		cmp_bound(r, path, "max_items", 1, !!(a->flags & CPOL_PRM_F_MAX_ITEMS), (int64_t)a->max_items,
			  !!(b->flags & CPOL_PRM_F_MAX_ITEMS), (int64_t)b->max_items);
		if (a->items < pa->nparams && b->items < pb->nparams && depth < 16) {
			snprintf(sub, sizeof(sub), "%s[]", path);
			diff_param(r, pa, &pa->params[a->items], pb, &pb->params[b->items], sub, depth + 1);
		}
		break;
	case CPOL_T_OBJECT:
		diff_props(r, pa, a->props, pb, b->props, path, depth + 1);
		break;
	default:
		break;
	}
}

/* Constraint programs of a tool as comparable values. */
static int constraints_equal(const struct cpol_policy *pa, const struct cpol_tool *a, const struct cpol_policy *pb,
			     const struct cpol_tool *b)
{
	uint32_t i, j;

	if (a->constraints.count != b->constraints.count)
		return 0;
	for (i = 0; i < a->constraints.count; i++) {
		const struct cpol_insn *x = &pa->constraints[a->constraints.first + i];
		const struct cpol_insn *y = &pb->constraints[b->constraints.first + i];

		if (x->op != y->op || x->type != y->type || x->a != y->a || x->ival != y->ival || x->fval != y->fval ||
		    x->len != y->len || (x->len && memcmp(x->str, y->str, x->len) != 0) || x->list.n != y->list.n)
			return 0;
		for (j = 0; j < x->list.n; j++)
			if (strcmp(x->list.v[j], y->list.v[j]) != 0)
				return 0;
	}
	return 1;
}

static void diff_tool(struct diff_result *r, const struct cpol_policy *pa, const struct cpol_tool *a,
		      const struct cpol_policy *pb, const struct cpol_tool *b)
{
	char path[128], *x, *y;

	snprintf(path, sizeof(path), "tools[%s]", b->id);
	if (strcmp(a->description, b->description) != 0)
		add(r, DIFF_CHANGE, a->description, b->description, "%s.description", path);
	if (!strs_equal(&a->exec, &b->exec)) {
		x = strs_join(&a->exec);
		y = strs_join(&b->exec);
		if (x == NULL || y == NULL)
			r->oom = 1;
		else
			add(r, DIFF_WIDEN, x, y, "%s.exec", path);
		free(x);
		free(y);
	}
	if (a->roles.n > 0 && b->roles.n == 0)
		add(r, DIFF_WIDEN, "(a list)", "any role", "%s.roles", path);
	else if (a->roles.n == 0 && b->roles.n > 0)
		add(r, DIFF_NARROW, "any role", "(a list)", "%s.roles", path);
	else {
		char sub[160];

		snprintf(sub, sizeof(sub), "%s.roles", path);
		cmp_set(r, sub, &a->roles, &b->roles, DIFF_WIDEN);
	}
	{
		char sub[160];

		snprintf(sub, sizeof(sub), "%s.env_from", path);
		cmp_set(r, sub, &a->env_from, &b->env_from, DIFF_WIDEN);
		snprintf(sub, sizeof(sub), "%s.max_calls", path);
		cmp_more(r, sub, a->max_calls, b->max_calls, U_PLAIN, 1);
		snprintf(sub, sizeof(sub), "%s.max_calls_per_day", path);
		cmp_more(r, sub, a->max_calls_per_day, b->max_calls_per_day, U_PLAIN, 1);
		snprintf(sub, sizeof(sub), "%s.timeout", path);
		cmp_more(r, sub, a->timeout_ms, b->timeout_ms, U_MS, 0);
		snprintf(sub, sizeof(sub), "%s.memory", path);
		cmp_more(r, sub, a->memory_bytes, b->memory_bytes, U_SIZE, 0);
		snprintf(sub, sizeof(sub), "%s.pids", path);
		cmp_more(r, sub, a->pids, b->pids, U_PLAIN, 0);
		snprintf(sub, sizeof(sub), "%s.run_as", path);
		cmp_run_as(r, sub, a, b);
		snprintf(sub, sizeof(sub), "%s.side_effect", path);
		cmp_flag(r, sub, a->flags & CPOL_TOOL_F_SIDE_EFFECT, b->flags & CPOL_TOOL_F_SIDE_EFFECT, 0);
		snprintf(sub, sizeof(sub), "%s.replay", path);
		cmp_flag(r, sub, a->flags & CPOL_TOOL_F_REPLAY, b->flags & CPOL_TOOL_F_REPLAY, 0);
	}
	if (!constraints_equal(pa, a, pb, b)) {
		if (b->constraints.count == 0)
			add(r, DIFF_WIDEN, "(constraints)", "none", "%s.constraints", path);
		else if (a->constraints.count == 0)
			add(r, DIFF_NARROW, "none", "(constraints)", "%s.constraints", path);
		else
			add(r, DIFF_WIDEN, "(old programs)", "(new programs)", "%s.constraints", path);
	}
	snprintf(path, sizeof(path), "tools[%s].params", b->id);
	diff_props(r, pa, a->params, pb, b->params, path, 0);
}

static void diff_tools(struct diff_result *r, const struct cpol_policy *a, const struct cpol_policy *b)
{
	uint32_t i, j;

	for (i = 0; i < b->ntools; i++) {
		j = policy_find_tool(a, b->tools[i].id);
		if (j == CPOL_NONE)
			add(r, DIFF_WIDEN, "", b->tools[i].description, "tools[%s]", b->tools[i].id);
		else
			diff_tool(r, a, &a->tools[j], b, &b->tools[i]);
	}
	for (i = 0; i < a->ntools; i++)
		if (policy_find_tool(b, a->tools[i].id) == CPOL_NONE)
			add(r, DIFF_NARROW, a->tools[i].description, "", "tools[%s]", a->tools[i].id);
}

static int agent_has(const struct cpol_policy *p, const struct cpol_agent *ag, const char *tool)
{
	uint32_t k;

	for (k = 0; k < ag->ntools; k++)
		if (ag->tools[k] < p->ntools && strcmp(p->tools[ag->tools[k]].id, tool) == 0)
			return 1;
	return 0;
}

/* An agent's sessions (3.6): allowing them widens, and each limit is a
 * limit where more is more authority.  A new agent's are compared with
 * none. */
static void diff_session(struct diff_result *r, const char *agent, const struct cpol_session *a,
			 const struct cpol_session *b)
{
	const struct {
		const char *key;
		uint64_t a, b;
		enum unit u;
	} f[] = { { "idle_timeout", a->idle_ms, b->idle_ms, U_MS },
		  { "lifetime", a->life_ms, b->life_ms, U_MS },
		  { "max_cells", a->max_cells, b->max_cells, U_PLAIN },
		  { "cpu", a->cpu_ms, b->cpu_ms, U_MS },
		  { "workspace_bytes", a->ws_bytes, b->ws_bytes, U_SIZE } };
	int on_a = (a->flags & CPOL_AGT_F_SESSION) != 0, on_b = (b->flags & CPOL_AGT_F_SESSION) != 0;
	char path[160];

	snprintf(path, sizeof(path), "agents[%s].session", agent);
	cmp_flag(r, path, on_a, on_b, 1);
	if (!on_a || !on_b)
		return;
	for (size_t k = 0; k < sizeof(f) / sizeof(f[0]); k++) {
		snprintf(path, sizeof(path), "agents[%s].session.%s", agent, f[k].key);
		cmp_more(r, path, f[k].a, f[k].b, f[k].u, 0);
	}
}

static void diff_agents(struct diff_result *r, const struct cpol_policy *a, const struct cpol_policy *b)
{
	static const struct cpol_session no_session;

	uint32_t i, k;

	for (i = 0; i < b->nagents; i++) {
		const struct cpol_agent *n = &b->agents[i], *o = policy_find_agent(a, n->name);

		for (k = 0; k < n->ntools; k++) {
			const char *t = n->tools[k] < b->ntools ? b->tools[n->tools[k]].id : "?";

			if (o == NULL || !agent_has(a, o, t))
				add(r, DIFF_WIDEN, "", t, "agents[%s].tools", n->name);
		}
		for (k = 0; o != NULL && k < o->ntools; k++) {
			const char *t = o->tools[k] < a->ntools ? a->tools[o->tools[k]].id : "?";

			if (!agent_has(b, n, t))
				add(r, DIFF_NARROW, t, "", "agents[%s].tools", n->name);
		}
		diff_session(r, n->name, o != NULL ? &o->session : &no_session, &n->session);
	}
	for (i = 0; i < a->nagents; i++)
		if (policy_find_agent(b, a->agents[i].name) == NULL)
			add(r, DIFF_NARROW, a->agents[i].name, "", "agents[%s]", a->agents[i].name);
}

static void diff_outputs(struct diff_result *r, const struct cpol_policy *a, const struct cpol_policy *b)
{
	char x[32], path[1100];
	uint32_t i, j;

	for (i = 0; i < b->noutputs; i++) {
		for (j = 0; j < a->noutputs && strcmp(a->outputs[j].path, b->outputs[i].path) != 0; j++)
			;
		snprintf(path, sizeof(path), "outputs[%s]", b->outputs[i].path);
		if (j == a->noutputs) {
			add(r, DIFF_WIDEN, "", lint_fmt_size(b->outputs[i].max_bytes, x, sizeof(x)), "%s", path);
			continue;
		}
		strcat(path, ".max_bytes");
		cmp_more(r, path, a->outputs[j].max_bytes, b->outputs[i].max_bytes, U_SIZE, 0);
		if ((a->outputs[j].flags ^ b->outputs[i].flags) & CPOL_OUT_F_REQUIRED)
			add(r, DIFF_CHANGE, (a->outputs[j].flags & CPOL_OUT_F_REQUIRED) ? "true" : "false",
			    (b->outputs[i].flags & CPOL_OUT_F_REQUIRED) ? "true" : "false", "outputs[%s].required",
			    b->outputs[i].path);
	}
	for (j = 0; j < a->noutputs; j++) {
		for (i = 0; i < b->noutputs && strcmp(a->outputs[j].path, b->outputs[i].path) != 0; i++)
			;
		if (i == b->noutputs)
			add(r, DIFF_NARROW, lint_fmt_size(a->outputs[j].max_bytes, x, sizeof(x)), "", "outputs[%s]",
			    a->outputs[j].path);
	}
}

int policy_diff(const struct cpol_policy *a, const struct cpol_policy *b, struct diff_result *out)
{
	memset(out, 0, sizeof(*out));
	cmp_str(out, DIFF_CHANGE, "app", a->meta.app, b->meta.app);
	diff_limits(out, &a->limits, &b->limits);
	diff_exec(out, &a->exec, &b->exec);
	diff_env(out, a, b);
	diff_mounts(out, a, b);
	diff_seccomp(out, a, b);
	diff_tools(out, a, b);
	diff_agents(out, a, b);
	diff_outputs(out, a, b);
	if (!!a->signature.algo != !!b->signature.algo)
		add(out, DIFF_CHANGE, a->signature.algo ? "signed" : "unsigned", b->signature.algo ? "signed" : "unsigned",
		    "signature");
	return out->oom ? -1 : 0;
}
