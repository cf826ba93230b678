/* SPDX-License-Identifier: Apache-2.0 */
/*
 * descriptor.c - the app descriptor (app.yaml) into a policy.
 *
 * docs/descriptor.md is the user's view of the same keys, defaults and
 * bounds; a change to one is a change to the other.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cordon/paths.h"
#include "compiler/compile.h"
#include "compiler/units.h"

#define KiB 1024ull
#define MiB (1024ull * KiB)
#define GiB (1024ull * MiB)
#define TiB (1024ull * GiB)

/* A key path for messages: "execution.executor.mounts[2].target".  Long
 * paths are cut short: they only ever name a place for a person. */
#define PATH(buf, ...) schema_path((buf), sizeof(buf), __VA_ARGS__)

static const char *const top_keys[] = { "version", "app", "execution", "agents", NULL };
static const char *const execution_keys[] = { "runtime", "executor", "outputs", NULL };
static const char *const runtime_keys[] = { "mode",
					    "timeout",
					    "max_file_bytes",
					    "max_exec_workspace_delta_bytes",
					    "max_exec_workspace_bytes",
					    "max_exec_workspace_entries",
					    "workspace_monitor_interval_s",
					    "max_output_bytes",
					    "max_result_bytes",
					    "max_code_bytes",
					    "max_tool_request_bytes",
					    "memory",
					    "pids",
					    "open_files",
					    "cpu",
					    NULL };
static const char *const executor_keys[] = { "interpreter", "uid",      "gid",     "network", "env",    "mounts",
					     "seccomp",     "landlock", "require", "preload", "packages", NULL };
static const char *const mount_keys[] = { "source", "target", "type", "rw", "size", NULL };
static const char *const seccomp_keys[] = { "profile", "extra", NULL };
static const char *const output_keys[] = { "path", "max_bytes", "required", NULL };
static const char *const agent_keys[] = { "tools", "session", NULL };
static const char *const session_keys[] = { "idle_timeout", "lifetime", "max_cells", "cpu", "workspace_bytes", NULL };

static const char *const mode_names[] = { "isolated", "local", NULL };
static const char *const network_names[] = { "none", "loopback", NULL };
static const char *const mount_type_names[] = { "bind", "tmpfs", NULL };
static const char *const layer_names[] = { "landlock", "cgroup", NULL };

/* Defaults: docs/descriptor.md. */
static void limits_defaults(struct cpol_limits *l)
{
	l->mode = CPOL_MODE_ISOLATED;
	l->timeout_ms = 30000;
	l->max_file_bytes = 100 * MiB;
	l->ws_delta_bytes = 250 * MiB;
	l->ws_max_bytes = 0;
	l->ws_entries = 20000;
	l->monitor_ms = 500;
	l->max_output_bytes = 64 * KiB;
	l->max_result_bytes = 64 * KiB;
	l->max_code_bytes = 64 * KiB;
	l->max_tool_request_bytes = 1 * MiB;
	l->memory_bytes = 1 * GiB;
	l->pids = 64;
	l->open_files = 256;
}

/* The default root: what Debian's python3 and numpy need, read-only, plus a
 * small private /tmp.  Listing mounts in the descriptor replaces this list;
 * the entry `defaults` in that list brings it back, so one more mount (an
 * /etc/matplotlibrc) does not mean restating five. */
static const struct cpol_mount default_mounts[] = {
	{ CPOL_MOUNT_BIND, 0, "/etc/alternatives", "/etc/alternatives", 0 },
	{ CPOL_MOUNT_BIND, 0, "/lib", "/lib", 0 },
	{ CPOL_MOUNT_BIND, 0, "/lib64", "/lib64", 0 },
	{ CPOL_MOUNT_TMPFS, 0, "", "/tmp", 64 * MiB },
	{ CPOL_MOUNT_BIND, 0, "/usr", "/usr", 0 },
};
#define NDEFAULT_MOUNTS (sizeof(default_mounts) / sizeof(default_mounts[0]))

static int limits_load(struct schema_ctx *c, const struct ynode *rt, struct cpol_limits *l)
{
	const struct ynode *v;
	uint64_t u;
	int rc = 0;

	if (schema_map(c, rt, "execution.runtime", runtime_keys) != 0)
		rc = -1;
	if (rt->kind != YN_MAP)
		return -1;
	if ((v = ymap_get(rt, "mode")) != NULL && schema_enum(c, v, "execution.runtime.mode", mode_names, &l->mode))
		rc = -1;
	if ((v = ymap_get(rt, "timeout")) != NULL &&
	    schema_duration(c, v, "execution.runtime.timeout", 100, 24 * 3600 * 1000ull, &l->timeout_ms))
		rc = -1;
	if ((v = ymap_get(rt, "max_file_bytes")) != NULL &&
	    schema_size(c, v, "execution.runtime.max_file_bytes", 1, TiB, &l->max_file_bytes))
		rc = -1;
	if ((v = ymap_get(rt, "max_exec_workspace_delta_bytes")) != NULL &&
	    schema_size(c, v, "execution.runtime.max_exec_workspace_delta_bytes", 1, TiB, &l->ws_delta_bytes))
		rc = -1;
	if ((v = ymap_get(rt, "max_exec_workspace_bytes")) != NULL &&
	    schema_size(c, v, "execution.runtime.max_exec_workspace_bytes", 1, TiB, &l->ws_max_bytes))
		rc = -1;
	/* Files and directories together: it becomes the workspace's inode
	 * count, so the kernel bounds it at any depth. */
	if ((v = ymap_get(rt, "max_exec_workspace_entries")) != NULL) {
		if (schema_uint(c, v, "execution.runtime.max_exec_workspace_entries", 1, CPOL_MAX_WS_ENTRIES, &u) != 0)
			rc = -1;
		else
			l->ws_entries = (uint32_t)u;
	}
	if ((v = ymap_get(rt, "workspace_monitor_interval_s")) != NULL &&
	    schema_seconds(c, v, "execution.runtime.workspace_monitor_interval_s", 10, 60000, &l->monitor_ms))
		rc = -1;
	if ((v = ymap_get(rt, "max_output_bytes")) != NULL &&
	    schema_size(c, v, "execution.runtime.max_output_bytes", 1, 64 * MiB, &l->max_output_bytes))
		rc = -1;
	if ((v = ymap_get(rt, "max_result_bytes")) != NULL &&
	    schema_size(c, v, "execution.runtime.max_result_bytes", 1, 64 * MiB, &l->max_result_bytes))
		rc = -1;
	if ((v = ymap_get(rt, "max_code_bytes")) != NULL &&
	    schema_size(c, v, "execution.runtime.max_code_bytes", 1, 16 * MiB, &l->max_code_bytes))
		rc = -1;
	if ((v = ymap_get(rt, "max_tool_request_bytes")) != NULL &&
	    schema_size(c, v, "execution.runtime.max_tool_request_bytes", 1 * KiB, 16 * MiB,
			&l->max_tool_request_bytes))
		rc = -1;
	if ((v = ymap_get(rt, "memory")) != NULL &&
	    schema_size(c, v, "execution.runtime.memory", 16 * MiB, TiB, &l->memory_bytes))
		rc = -1;
	if ((v = ymap_get(rt, "pids")) != NULL) {
		if (schema_uint(c, v, "execution.runtime.pids", 1, 65536, &u) != 0)
			rc = -1;
		else
			l->pids = (uint32_t)u;
	}
	if ((v = ymap_get(rt, "open_files")) != NULL) {
		if (schema_uint(c, v, "execution.runtime.open_files", 16, 1048576, &u) != 0)
			rc = -1;
		else
			l->open_files = (uint32_t)u;
	}
	/* CPUs the whole tree may use, as a cgroup quota; no default: without
	 * the key there is no quota (docs/cgroups.md, "CPU quota"). */
	if ((v = ymap_get(rt, "cpu")) != NULL) {
		if (schema_cpus(c, v, "execution.runtime.cpu", CPOL_CPU_MILLI_MIN, CPOL_CPU_MILLI_MAX, &u) != 0)
			rc = -1;
		else
			l->cpu_milli = (uint32_t)u;
	}
	if (rc == 0 && l->ws_max_bytes != 0 && l->ws_max_bytes < l->ws_delta_bytes) {
		v = ymap_get(rt, "max_exec_workspace_bytes");
		schema_error(c, v, "execution.runtime.max_exec_workspace_bytes: smaller than "
				   "max_exec_workspace_delta_bytes, so the delta limit could never apply");
		rc = -1;
	}
	return rc;
}

static int cmp_env(const void *a, const void *b)
{
	return strcmp(((const struct cpol_env *)a)->key, ((const struct cpol_env *)b)->key);
}

static int env_load(struct schema_ctx *c, const struct ynode *n, struct cpol_policy *p)
{
	char path[SCHEMA_PATH_MAX];
	size_t i;
	int rc = 0;

	if (n->kind != YN_MAP) {
		schema_error(c, n, "execution.executor.env: expected a mapping of NAME: value");
		return -1;
	}
	if (n->n > COMPILE_MAX_LIST) {
		schema_error(c, n, "execution.executor.env: too many variables (%zu; the limit is %d)", n->n,
			     COMPILE_MAX_LIST);
		return -1;
	}
	p->env = arena_calloc(&p->arena, n->n ? n->n : 1, sizeof(*p->env));
	if (p->env == NULL)
		return -1;
	for (i = 0; i < n->n; i++) {
		const struct ynode *k = n->keys[i];
		struct cpol_env *e = &p->env[p->nenv];

		PATH(path, "execution.executor.env.%s", k->str);
		if (!schema_name_ok(k->str, k->len, "A-Za-z_", "A-Za-z0-9_", 128)) {
			schema_error(c, k, "execution.executor.env: '%s' is not a variable name "
					   "(letters, digits and '_', not starting with a digit)", k->str);
			rc = -1;
			continue;
		}
		/* The runtime owns CORDON_*: the socket path and the token are
		 * its to set, and a descriptor must not be able to shadow them. */
		if (strncmp(k->str, "CORDON_", 7) == 0) {
			schema_error(c, k, "%s: the CORDON_ prefix is reserved for the runtime", path);
			rc = -1;
			continue;
		}
		if (schema_string(c, n->vals[i], path, 0, 4096, &e->value) != 0) {
			rc = -1;
			continue;
		}
		e->key = arena_strndup(&p->arena, k->str, k->len);
		if (e->key == NULL)
			return -1;
		p->nenv++;
	}
	qsort(p->env, p->nenv, sizeof(*p->env), cmp_env);
	return rc;
}

/* Targets the runtime builds itself (cordon/paths.h); a descriptor mount
 * over or under them would hide the workspace, the client modules, the
 * socket, /proc or /dev from the executor's setup. */
static const char *const reserved_targets[] = { SANDBOX_WORKSPACE, SANDBOX_SOCKET_DIR, SANDBOX_CLIENT, "/proc", "/dev", NULL };

static int target_is_reserved(const char *t, const char **which)
{
	size_t i;

	for (i = 0; reserved_targets[i] != NULL; i++) {
		size_t len = strlen(reserved_targets[i]);

		if (strncmp(t, reserved_targets[i], len) == 0 && (t[len] == '\0' || t[len] == '/')) {
			*which = reserved_targets[i];
			return 1;
		}
	}
	return 0;
}

static int mount_load(struct schema_ctx *c, const struct ynode *n, size_t idx, struct cpol_mount *m)
{
	char path[SCHEMA_PATH_MAX], sub[SCHEMA_PATH_MAX];
	const struct ynode *v, *src, *tgt, *size;
	const char *which = NULL;
	bool rw = false;
	int rc = 0;

	PATH(path, "execution.executor.mounts[%zu]", idx);
	if (schema_map(c, n, path, mount_keys) != 0)
		rc = -1;
	if (n->kind != YN_MAP)
		return -1;
	m->type = CPOL_MOUNT_BIND;
	if ((v = ymap_get(n, "type")) != NULL) {
		PATH(sub, "%s.type", path);
		if (schema_enum(c, v, sub, mount_type_names, &m->type) != 0)
			return -1;
	}
	src = ymap_get(n, "source");
	tgt = ymap_get(n, "target");
	size = ymap_get(n, "size");
	if (tgt == NULL) {
		schema_error(c, n, "%s: missing required key 'target'", path);
		rc = -1;
	} else {
		PATH(sub, "%s.target", path);
		if (schema_abs_path(c, tgt, sub, &m->target) != 0) {
			rc = -1;
		} else if (strcmp(m->target, "/") == 0) {
			schema_error(c, tgt, "%s: cannot mount over '/': the runtime builds the root", sub);
			rc = -1;
		} else if (target_is_reserved(m->target, &which)) {
			schema_error(c, tgt, "%s: '%s' is inside '%s', which the runtime sets up itself", sub,
				     m->target, which);
			rc = -1;
		}
	}
	if ((v = ymap_get(n, "rw")) != NULL) {
		PATH(sub, "%s.rw", path);
		if (schema_bool(c, v, sub, &rw) != 0)
			rc = -1;
	}
	m->flags = rw ? CPOL_MNT_F_RW : 0;
	if (m->type == CPOL_MOUNT_BIND) {
		m->size = 0;
		if (size != NULL) {
			schema_error(c, size, "%s.size: only a tmpfs mount has a size", path);
			rc = -1;
		}
		if (src == NULL) {
			schema_error(c, n, "%s: a bind mount needs 'source'", path);
			rc = -1;
		} else {
			PATH(sub, "%s.source", path);
			if (schema_abs_path(c, src, sub, &m->source) != 0)
				rc = -1;
		}
	} else {
		m->source = "";
		/* A tmpfs is memory: writable by nature, and rw: false on it
		 * would be a promise the kernel is not asked to keep. */
		m->flags = CPOL_MNT_F_RW;
		if (src != NULL) {
			schema_error(c, src, "%s.source: a tmpfs mount has no source", path);
			rc = -1;
		}
		if (v != NULL && !rw) {
			schema_error(c, v, "%s.rw: a tmpfs mount is always writable; remove rw", path);
			rc = -1;
		}
		m->size = 64 * MiB;
		if (size != NULL) {
			PATH(sub, "%s.size", path);
			if (schema_size(c, size, sub, 4 * KiB, 64 * GiB, &m->size) != 0)
				rc = -1;
		}
	}
	return rc;
}

struct mount_pos {
	struct cpol_mount m;
	const struct ynode *node;
	int from_defaults; /* brought in by the `defaults` entry */
};

static int cmp_mount_pos(const void *a, const void *b)
{
	const struct mount_pos *x = a, *y = b;
	int c = strcmp(x->m.target, y->m.target);

	if (c != 0)
		return c;
	/* Equal targets: file order, so the later one is reported. */
	return x->node->line != y->node->line ? (x->node->line < y->node->line ? -1 : 1)
					      : (x->node->col < y->node->col ? -1 : 1);
}

static int mounts_load(struct schema_ctx *c, const struct ynode *n, struct cpol_policy *p)
{
	struct mount_pos *tmp = NULL;
	size_t i, ntmp = 0, ndefaults = 0;
	int rc = 0;

	if (schema_seq(c, n, "execution.executor.mounts") != 0)
		return -1;
	if (n->n > COMPILE_MAX_LIST) {
		schema_error(c, n, "execution.executor.mounts: too many mounts (%zu; the limit is %d)", n->n,
			     COMPILE_MAX_LIST);
		return -1;
	}
	tmp = calloc(n->n + NDEFAULT_MOUNTS, sizeof(*tmp));
	if (tmp == NULL)
		return -1;
	for (i = 0; i < n->n; i++) {
		const struct ynode *v = n->vals[i];

		if (v->kind == YN_SCALAR && strcmp(v->str, "defaults") == 0) {
			if (ndefaults++ > 0) {
				schema_error(c, v, "execution.executor.mounts[%zu]: 'defaults' is listed twice", i);
				rc = -1;
				continue;
			}
			for (size_t k = 0; k < NDEFAULT_MOUNTS; k++) {
				tmp[ntmp].m = default_mounts[k];
				if (tmp[ntmp].m.type == CPOL_MOUNT_TMPFS)
					tmp[ntmp].m.flags = CPOL_MNT_F_RW;
				tmp[ntmp].from_defaults = 1;
				tmp[ntmp++].node = v;
			}
			continue;
		}
		if (mount_load(c, n->vals[i], i, &tmp[ntmp].m) != 0) {
			rc = -1;
			continue;
		}
		tmp[ntmp++].node = n->vals[i];
	}
	/* Sorted by target, a parent directory comes before what is mounted
	 * inside it, which is the order the runtime must mount them in. */
	qsort(tmp, ntmp, sizeof(*tmp), cmp_mount_pos);
	p->mounts = arena_calloc(&p->arena, ntmp ? ntmp : 1, sizeof(*p->mounts));
	if (p->mounts == NULL) {
		rc = -1;
		goto out;
	}
	/* A listed mount replaces the default one of its target (a bigger
	 * /tmp beside `defaults`); two listed ones stay an error below. */
	for (i = 0; i < ntmp;) {
		size_t k;

		for (k = 0; tmp[i].from_defaults && k < ntmp; k++)
			if (!tmp[k].from_defaults && strcmp(tmp[k].m.target, tmp[i].m.target) == 0)
				break;
		if (tmp[i].from_defaults && k < ntmp)
			memmove(&tmp[i], &tmp[i + 1], (--ntmp - i) * sizeof(*tmp));
		else
			i++;
	}
	for (i = 0; i < ntmp; i++) {
		if (i > 0 && strcmp(tmp[i].m.target, tmp[i - 1].m.target) == 0) {
			schema_error(c, ymap_get(tmp[i].node, "target"),
				     "execution.executor.mounts: duplicate target '%s'", tmp[i].m.target);
			schema_note(c, c->f, ymap_get(tmp[i - 1].node, "target"), "previous mount of '%s' is here",
				    tmp[i].m.target);
			rc = -1;
			continue;
		}
		p->mounts[p->nmounts++] = tmp[i].m;
	}
out:
	free(tmp);
	return rc;
}

static int default_mounts_set(struct cpol_policy *p)
{
	size_t i, n = sizeof(default_mounts) / sizeof(default_mounts[0]);

	p->mounts = arena_calloc(&p->arena, n, sizeof(*p->mounts));
	if (p->mounts == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		p->mounts[i] = default_mounts[i];
		if (p->mounts[i].type == CPOL_MOUNT_TMPFS)
			p->mounts[i].flags = CPOL_MNT_F_RW;
	}
	p->nmounts = (uint32_t)n;
	return 0;
}

static int seccomp_load(struct schema_ctx *c, const struct ynode *n, struct cpol_executor *e)
{
	const struct ynode *v;
	int rc = 0;

	if (schema_map(c, n, "execution.executor.seccomp", seccomp_keys) != 0)
		rc = -1;
	if (n->kind != YN_MAP)
		return -1;
	if ((v = ymap_get(n, "profile")) != NULL &&
	    schema_name(c, v, "execution.executor.seccomp.profile", "a-z", "a-z0-9-", 64,
			"a profile name (lowercase letters, digits and '-')", &e->seccomp_profile))
		rc = -1;
	if ((v = ymap_get(n, "extra")) != NULL &&
	    schema_string(c, v, "execution.executor.seccomp.extra", 1, 4095, &e->seccomp_extra))
		rc = -1;
	return rc;
}

static int require_load(struct schema_ctx *c, const struct ynode *n, struct cpol_executor *e,
			const struct ynode **landlock_req)
{
	char path[SCHEMA_PATH_MAX];
	size_t i;
	int rc = 0;

	if (schema_seq(c, n, "execution.executor.require") != 0)
		return -1;
	for (i = 0; i < n->n; i++) {
		uint32_t idx, bit;

		PATH(path, "execution.executor.require[%zu]", i);
		if (schema_enum(c, n->vals[i], path, layer_names, &idx) != 0) {
			rc = -1;
			continue;
		}
		bit = 1u << idx;
		if (e->require & bit) {
			schema_error(c, n->vals[i], "%s: '%s' is listed twice", path, layer_names[idx]);
			rc = -1;
		}
		if (bit == CPOL_LAYER_LANDLOCK)
			*landlock_req = n->vals[i];
		e->require |= bit;
	}
	return rc;
}

/* The node of earlier list `seq` that spells name, for a "first listed
 * here" note; NULL when there is none. */
static const struct ynode *modules_find(const struct ynode *seq, const char *name)
{
	for (size_t i = 0; seq != NULL && seq->kind == YN_SEQ && i < seq->n; i++)
		if (seq->vals[i]->kind == YN_SCALAR && strcmp(seq->vals[i]->str, name) == 0)
			return seq->vals[i];
	return NULL;
}

/*
 * A module list of the executor (`key`: preload or packages): kept in the
 * descriptor's order (imports can depend on order); each name is held to
 * the loader's rule (policy_module_name_ok), so nothing the compiler writes
 * is refused at run time.  A name may appear once in all the executor's
 * lists: `before` is the list loaded ahead of this one (its names in
 * before_names), and the loader refuses a repeat across both runs.
 */
static int modules_load(struct schema_ctx *c, const struct ynode *n, const char *key, uint32_t max,
			struct cpol_policy *p, const char ***out, uint32_t *nout, const struct ynode *before,
			const char *const *before_names, uint32_t nbefore)
{
	const struct ynode **where = NULL;
	const char **names;
	char path[SCHEMA_PATH_MAX];
	size_t i;
	int rc = 0;

	PATH(path, "execution.executor.%s", key);
	if (schema_seq(c, n, path) != 0)
		return -1;
	if (n->n > max) {
		schema_error(c, n, "%s: too many modules (%zu; the limit is %u)", path, n->n, max);
		return -1;
	}
	if (n->n == 0)
		return 0;
	names = arena_calloc(&p->arena, n->n, sizeof(*names));
	where = calloc(n->n, sizeof(*where));
	if (names == NULL || where == NULL) {
		rc = -1;
		goto out;
	}
	*out = names;
	for (i = 0; i < n->n; i++) {
		const struct ynode *v = n->vals[i];
		const char *name = NULL;
		uint32_t j;

		PATH(path, "execution.executor.%s[%zu]", key, i);
		if (schema_string(c, v, path, 1, CPOL_PRELOAD_NAME_MAX, &name) != 0) {
			rc = -1;
			continue;
		}
		if (!policy_module_name_ok(name)) {
			schema_error(c, v,
				     "%s: '%s' is not a module name (identifiers of letters, digits and '_', "
				     "not starting with a digit, joined by '.', as in numpy or xml.etree)",
				     path, name);
			rc = -1;
			continue;
		}
		for (j = 0; j < nbefore && strcmp(before_names[j], name) != 0; j++)
			;
		if (j < nbefore) {
			schema_error(c, v, "%s: '%s' is also preloaded; list a module in preload or packages, not both",
				     path, name);
			if (modules_find(before, name) != NULL)
				schema_note(c, c->f, modules_find(before, name), "preloaded here");
			rc = -1;
			continue;
		}
		for (j = 0; j < *nout && strcmp(names[j], name) != 0; j++)
			;
		if (j < *nout) {
			schema_error(c, v, "%s: '%s' is listed twice", path, name);
			schema_note(c, c->f, where[j], "first listed here");
			rc = -1;
			continue;
		}
		where[*nout] = v;
		names[(*nout)++] = name;
	}
out:
	free(where);
	return rc;
}

static int executor_load(struct schema_ctx *c, const struct ynode *ex, struct cpol_policy *p)
{
	struct cpol_executor *e = &p->exec;
	const struct ynode *v, *landlock_req = NULL, *landlock_node = NULL;
	uint64_t u;
	bool landlock = true;
	int rc = 0;

	if (schema_map(c, ex, "execution.executor", executor_keys) != 0)
		rc = -1;
	if (ex->kind != YN_MAP)
		return -1;
	if ((v = ymap_get(ex, "interpreter")) != NULL &&
	    schema_abs_path(c, v, "execution.executor.interpreter", &e->interpreter))
		rc = -1;
	/* 0 is read and then refused, rather than kept out by the range, so the
	 * message says why: root inside owns root's files in every bind mount
	 * and gains the most from any kernel bug, and nothing a generated
	 * program does needs it. */
	if ((v = ymap_get(ex, "uid")) != NULL) {
		if (schema_uint(c, v, "execution.executor.uid", 0, 65534, &u) != 0) {
			rc = -1;
		} else if (u == 0) {
			schema_error(c, v, "execution.executor.uid: 0 is root; the executor never runs as root "
					   "(use an unprivileged id such as 1001)");
			rc = -1;
		} else {
			e->uid = (uint32_t)u;
		}
	}
	if ((v = ymap_get(ex, "gid")) != NULL) {
		if (schema_uint(c, v, "execution.executor.gid", 0, 65534, &u) != 0) {
			rc = -1;
		} else if (u == 0) {
			schema_error(c, v, "execution.executor.gid: 0 is root's group; the executor never runs with "
					   "it (use an unprivileged group such as 1000)");
			rc = -1;
		} else {
			e->gid = (uint32_t)u;
		}
	}
	if ((v = ymap_get(ex, "network")) != NULL &&
	    schema_enum(c, v, "execution.executor.network", network_names, &e->network))
		rc = -1;
	if ((v = ymap_get(ex, "env")) != NULL && env_load(c, v, p) != 0)
		rc = -1;
	if ((v = ymap_get(ex, "mounts")) != NULL) {
		if (mounts_load(c, v, p) != 0)
			rc = -1;
	} else if (default_mounts_set(p) != 0) {
		rc = -1;
	}
	if ((v = ymap_get(ex, "seccomp")) != NULL && seccomp_load(c, v, e) != 0)
		rc = -1;
	if ((landlock_node = ymap_get(ex, "landlock")) != NULL &&
	    schema_bool(c, landlock_node, "execution.executor.landlock", &landlock))
		rc = -1;
	e->flags = landlock ? CPOL_EXE_F_LANDLOCK : 0;
	if ((v = ymap_get(ex, "require")) != NULL && require_load(c, v, e, &landlock_req) != 0)
		rc = -1;
	/* executor.preload: modules the waiting interpreter imports before the
	 * program arrives.  executor.packages: the same, after them, and told
	 * to the model as what it may import; a package that does not import
	 * ends the start, naming it. */
	if ((v = ymap_get(ex, "preload")) != NULL &&
	    modules_load(c, v, "preload", CPOL_MAX_PRELOAD, p, &e->preload, &e->npreload, NULL, NULL, 0) != 0)
		rc = -1;
	if ((v = ymap_get(ex, "packages")) != NULL &&
	    modules_load(c, v, "packages", CPOL_MAX_PACKAGES, p, &e->packages, &e->npackages,
			 ymap_get(ex, "preload"), e->preload, e->npreload) != 0)
		rc = -1;
	if (landlock_req != NULL && !landlock) {
		schema_error(c, landlock_req, "execution.executor.require: landlock is required but "
					      "execution.executor.landlock is false");
		schema_note(c, c->f, landlock_node, "landlock is turned off here");
		rc = -1;
	}
	return rc;
}

static int executor_defaults(struct cpol_policy *p)
{
	p->exec.interpreter = "/usr/bin/python3";
	p->exec.uid = 1001;
	p->exec.gid = 1000;
	p->exec.network = CPOL_NET_NONE;
	p->exec.flags = CPOL_EXE_F_LANDLOCK;
	p->exec.require = 0;
	p->exec.seccomp_profile = "python-compute";
	p->exec.seccomp_extra = "";
	return 0;
}

/* Output paths are globs relative to /workspace/out: no absolute path, no
 * '..', no empty component, so no declared output can name a file outside
 * the run's out/ directory. */
static int output_path_ok(struct schema_ctx *c, const struct ynode *n, const char *path, const char *s)
{
	const char *comp = s;

	if (s[0] == '/') {
		schema_error(c, n, "%s: '%s' must be relative to the output directory", path, s);
		return -1;
	}
	if (strchr(s, '\\') != NULL) {
		schema_error(c, n, "%s: '%s' must not contain '\\'", path, s);
		return -1;
	}
	for (;;) {
		const char *end = strchr(comp, '/');
		size_t len = end ? (size_t)(end - comp) : strlen(comp);

		if (len == 0) {
			schema_error(c, n, "%s: '%s' has an empty component", path, s);
			return -1;
		}
		if ((len == 2 && comp[0] == '.' && comp[1] == '.') || (len == 1 && comp[0] == '.')) {
			schema_error(c, n, "%s: '%s' must not contain '.' or '..' components", path, s);
			return -1;
		}
		if (end == NULL)
			return 0;
		comp = end + 1;
	}
}

struct output_pos {
	struct cpol_output o;
	const struct ynode *node;
};

static int cmp_output_pos(const void *a, const void *b)
{
	const struct output_pos *x = a, *y = b;
	int c = strcmp(x->o.path, y->o.path);

	if (c != 0)
		return c;
	return x->node->line != y->node->line ? (x->node->line < y->node->line ? -1 : 1)
					      : (x->node->col < y->node->col ? -1 : 1);
}

static int outputs_load(struct schema_ctx *c, const struct ynode *n, struct cpol_policy *p)
{
	char path[SCHEMA_PATH_MAX], sub[SCHEMA_PATH_MAX];
	struct output_pos *tmp = NULL;
	size_t i, ntmp = 0;
	int rc = 0;

	if (schema_seq(c, n, "execution.outputs") != 0)
		return -1;
	if (n->n > COMPILE_MAX_LIST) {
		schema_error(c, n, "execution.outputs: too many outputs (%zu; the limit is %d)", n->n,
			     COMPILE_MAX_LIST);
		return -1;
	}
	tmp = calloc(n->n ? n->n : 1, sizeof(*tmp));
	if (tmp == NULL)
		return -1;
	for (i = 0; i < n->n; i++) {
		const struct ynode *o = n->vals[i], *v;
		struct cpol_output *out = &tmp[ntmp].o;
		bool required = false;
		int bad = 0;

		PATH(path, "execution.outputs[%zu]", i);
		if (schema_map(c, o, path, output_keys) != 0)
			bad = 1;
		if (o->kind != YN_MAP) {
			rc = -1;
			continue;
		}
		if ((v = ymap_get(o, "path")) == NULL) {
			schema_error(c, o, "%s: missing required key 'path'", path);
			bad = 1;
		} else {
			PATH(sub, "%s.path", path);
			if (schema_string(c, v, sub, 1, 1024, &out->path) != 0 ||
			    output_path_ok(c, v, sub, out->path) != 0)
				bad = 1;
		}
		out->max_bytes = 10 * MiB;
		if ((v = ymap_get(o, "max_bytes")) != NULL) {
			PATH(sub, "%s.max_bytes", path);
			if (schema_size(c, v, sub, 1, TiB, &out->max_bytes) != 0)
				bad = 1;
		}
		if ((v = ymap_get(o, "required")) != NULL) {
			PATH(sub, "%s.required", path);
			if (schema_bool(c, v, sub, &required) != 0)
				bad = 1;
		}
		out->flags = required ? CPOL_OUT_F_REQUIRED : 0;
		if (bad) {
			rc = -1;
			continue;
		}
		tmp[ntmp++].node = ymap_get(o, "path");
	}
	qsort(tmp, ntmp, sizeof(*tmp), cmp_output_pos);
	p->outputs = arena_calloc(&p->arena, ntmp ? ntmp : 1, sizeof(*p->outputs));
	if (p->outputs == NULL) {
		rc = -1;
		goto out;
	}
	for (i = 0; i < ntmp; i++) {
		if (i > 0 && strcmp(tmp[i].o.path, tmp[i - 1].o.path) == 0) {
			schema_error(c, tmp[i].node, "execution.outputs: duplicate path '%s'", tmp[i].o.path);
			schema_note(c, c->f, tmp[i - 1].node, "previous declaration of '%s' is here",
				    tmp[i].o.path);
			rc = -1;
			continue;
		}
		p->outputs[p->noutputs++] = tmp[i].o;
	}
out:
	free(tmp);
	return rc;
}

static int version_load(struct schema_ctx *c, const struct ynode *root, const char *what, uint32_t *out)
{
	const struct ynode *v = ymap_get(root, "version");
	uint64_t u;

	if (v == NULL) {
		schema_error(c, root, "missing required key 'version' (write version: 1)");
		return -1;
	}
	if (schema_uint(c, v, "version", 0, UINT32_MAX, &u) != 0)
		return -1;
	if (u != 1) {
		schema_error(c, v, "version: unsupported %s version %llu (this cordonc reads version 1)", what,
			     (unsigned long long)u);
		return -1;
	}
	*out = (uint32_t)u;
	return 0;
}

int descriptor_load(struct schema_ctx *c, const struct ynode *root, struct cpol_policy *p,
		    const struct ynode **agents)
{
	const struct ynode *v, *ex;
	int rc = 0;

	*agents = NULL;
	limits_defaults(&p->limits);
	executor_defaults(p);
	if (root->kind != YN_MAP) {
		schema_error(c, root, "expected the app descriptor to be a mapping, got %s", schema_got(root));
		return -1;
	}
	if (schema_map(c, root, "app descriptor", top_keys) != 0)
		rc = -1;
	if (version_load(c, root, "descriptor", &p->meta.descriptor_version) != 0)
		rc = -1;
	if ((v = ymap_get(root, "app")) == NULL) {
		schema_error(c, root, "missing required key 'app' (the application's name)");
		rc = -1;
	} else if (schema_name(c, v, "app", "a-z0-9", "a-z0-9-", 63,
			       "an app name (lowercase letters, digits and '-', at most 63)", &p->meta.app) != 0) {
		rc = -1;
	}
	ex = ymap_get(root, "execution");
	if (ex != NULL) {
		if (schema_map(c, ex, "execution", execution_keys) != 0)
			rc = -1;
	}
	if (ex != NULL && ex->kind == YN_MAP) {
		if ((v = ymap_get(ex, "runtime")) != NULL && limits_load(c, v, &p->limits) != 0)
			rc = -1;
		if ((v = ymap_get(ex, "executor")) != NULL) {
			if (executor_load(c, v, p) != 0)
				rc = -1;
		} else if (default_mounts_set(p) != 0) {
			rc = -1;
		}
		if ((v = ymap_get(ex, "outputs")) != NULL && outputs_load(c, v, p) != 0)
			rc = -1;
	} else if (default_mounts_set(p) != 0) {
		rc = -1;
	}
	v = ymap_get(root, "agents");
	if (v != NULL) {
		if (v->kind != YN_MAP) {
			schema_error(c, v, "agents: expected a mapping of agent name to {tools: [...]}");
			rc = -1;
		} else {
			*agents = v;
		}
	}
	return rc;
}

struct agent_pos {
	struct cpol_agent a;
	const struct ynode *node;
};

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* An agent's `session:` (docs/descriptor.md): what the YAML leaves out
 * gets its default here, so the blob states every limit.  The workspace's
 * default is the execution's own bound: a session may hold what one run
 * may write. */
static int session_load(struct schema_ctx *c, const struct ynode *v, const char *agent_path,
			const struct cpol_limits *l, struct cpol_session *s)
{
	char path[SCHEMA_PATH_MAX], sub[SCHEMA_PATH_MAX];
	const struct ynode *n, *idle = NULL;
	uint64_t u;
	int rc = 0;

	PATH(path, "%s.session", agent_path);
	if (schema_map(c, v, path, session_keys) != 0 || v->kind != YN_MAP)
		return -1;
	s->flags = CPOL_AGT_F_SESSION;
	s->idle_ms = 10 * 60 * 1000ull;
	s->life_ms = 60 * 60 * 1000ull;
	s->max_cells = 1000;
	s->cpu_ms = 10 * 60 * 1000ull;
	s->ws_bytes = l->ws_max_bytes != 0 ? l->ws_max_bytes : l->ws_delta_bytes;
	PATH(sub, "%s.idle_timeout", path);
	if ((idle = ymap_get(v, "idle_timeout")) != NULL &&
	    schema_duration(c, idle, sub, CPOL_SESSION_MIN_MS, CPOL_SESSION_MAX_LIFE_MS, &s->idle_ms) != 0)
		rc = -1;
	PATH(sub, "%s.lifetime", path);
	if ((n = ymap_get(v, "lifetime")) != NULL &&
	    schema_duration(c, n, sub, CPOL_SESSION_MIN_MS, CPOL_SESSION_MAX_LIFE_MS, &s->life_ms) != 0)
		rc = -1;
	PATH(sub, "%s.max_cells", path);
	if ((n = ymap_get(v, "max_cells")) != NULL) {
		if (schema_uint(c, n, sub, 1, CPOL_SESSION_MAX_CELLS, &u) != 0)
			rc = -1;
		else
			s->max_cells = (uint32_t)u;
	}
	PATH(sub, "%s.cpu", path);
	if ((n = ymap_get(v, "cpu")) != NULL &&
	    schema_duration(c, n, sub, 100, CPOL_SESSION_MAX_LIFE_MS, &s->cpu_ms) != 0)
		rc = -1;
	PATH(sub, "%s.workspace_bytes", path);
	if ((n = ymap_get(v, "workspace_bytes")) != NULL &&
	    schema_size(c, n, sub, 4 * KiB, CPOL_SESSION_MAX_WS_BYTES, &s->ws_bytes) != 0)
		rc = -1;
	if (rc == 0 && s->idle_ms > s->life_ms) {
		char life[32];

		units_format_duration(s->life_ms, life, sizeof(life));
		schema_error(c, idle != NULL ? idle : v,
			     "%s.idle_timeout: longer than the session's lifetime (%s), so it could never expire", path,
			     life);
		rc = -1;
	}
	return rc;
}

static int agent_load(struct schema_ctx *c, const struct ynode *key, const struct ynode *val,
		      struct cpol_policy *p, struct cpol_agent *a)
{
	char path[SCHEMA_PATH_MAX], sub[SCHEMA_PATH_MAX];
	const struct ynode *tools;
	const char **ids = NULL;
	size_t i, j;
	int rc = 0;

	PATH(path, "agents.%s", key->str);
	if (!schema_name_ok(key->str, key->len, "a-z", "a-z0-9_-", 64)) {
		schema_error(c, key, "agents: '%s' is not an agent name (lowercase letters, digits, '_' and '-')",
			     key->str);
		rc = -1;
	}
	a->name = arena_strndup(&p->arena, key->str, key->len);
	if (a->name == NULL)
		return -1;
	if (schema_map(c, val, path, agent_keys) != 0)
		return -1;
	tools = ymap_get(val, "tools");
	if (tools == NULL) {
		schema_error(c, val, "%s: missing required key 'tools'", path);
		return -1;
	}
	if (ymap_get(val, "session") != NULL && session_load(c, ymap_get(val, "session"), path, &p->limits, &a->session) != 0)
		rc = -1;
	PATH(sub, "%s.tools", path);
	if (schema_seq(c, tools, sub) != 0)
		return -1;
	if (tools->n > COMPILE_MAX_TOOLS) {
		schema_error(c, tools, "%s: too many tools", sub);
		return -1;
	}
	a->tools = arena_calloc(&p->arena, tools->n ? tools->n : 1, sizeof(*a->tools));
	ids = calloc(p->ntools ? p->ntools : 1, sizeof(*ids));
	if (a->tools == NULL || ids == NULL) {
		rc = -1;
		goto out;
	}
	for (i = 0; i < p->ntools; i++)
		ids[i] = p->tools[i].id;
	for (i = 0; i < tools->n; i++) {
		const struct ynode *t = tools->vals[i];
		const char *id, *hint;
		uint32_t idx;

		PATH(sub, "%s.tools[%zu]", path, i);
		if (schema_string(c, t, sub, 1, 256, &id) != 0) {
			rc = -1;
			continue;
		}
		idx = policy_find_tool(p, id);
		if (idx == CPOL_NONE) {
			hint = suggest_nearest(id, ids, p->ntools);
			if (hint != NULL)
				schema_error(c, t, "%s: unknown tool '%s'; did you mean '%s'?", sub, id, hint);
			else
				schema_error(c, t, "%s: unknown tool '%s' (no tool inventory defines it)", sub, id);
			rc = -1;
			continue;
		}
		for (j = 0; j < a->ntools; j++) {
			if (a->tools[j] == idx) {
				schema_error(c, t, "%s: tool '%s' is listed twice", sub, id);
				rc = -1;
				break;
			}
		}
		if (j == a->ntools)
			a->tools[a->ntools++] = idx;
	}
	qsort(a->tools, a->ntools, sizeof(*a->tools), cmp_u32);
out:
	free(ids);
	return rc;
}

static int cmp_agent(const void *a, const void *b)
{
	return strcmp(((const struct cpol_agent *)a)->name, ((const struct cpol_agent *)b)->name);
}

int agents_resolve(struct schema_ctx *c, const struct ynode *agents, struct cpol_policy *p)
{
	size_t i;
	int rc = 0;

	if (agents == NULL)
		return 0;
	if (agents->n > COMPILE_MAX_LIST) {
		schema_error(c, agents, "agents: too many agents (%zu; the limit is %d)", agents->n,
			     COMPILE_MAX_LIST);
		return -1;
	}
	p->agents = arena_calloc(&p->arena, agents->n ? agents->n : 1, sizeof(*p->agents));
	if (p->agents == NULL)
		return -1;
	/* Agent names are mapping keys, so the YAML layer has already refused
	 * duplicates; sorting only fixes the order. */
	for (i = 0; i < agents->n; i++) {
		/* A failed agent leaves its slot half filled; the next one
		 * reuses it and must start from nothing. */
		memset(&p->agents[p->nagents], 0, sizeof(p->agents[p->nagents]));
		if (agent_load(c, agents->keys[i], agents->vals[i], p, &p->agents[p->nagents]) != 0)
			rc = -1;
		else
			p->nagents++;
	}
	qsort(p->agents, p->nagents, sizeof(*p->agents), cmp_agent);
	return rc;
}
