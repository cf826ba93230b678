/*
 * run.c - one execution, in the order of DESIGN.md §4: load and verify the
 * blob, make the run directory, decode the plan, set up cgroups, clone the
 * executor, supervise it, reduce, and print the result.
 *
 * Three lanes stay apart in the result: a harness failure is status
 * "error" with error.details.where = exec.harness.<stage>; a program that
 * fails is "failed" with its exit code; a broken output contract is
 * "failed" with error.code "output_contract".
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include "common/utf8.h"
#include "cordon/blob.h"
#include "cordon/keys.h"
#include "runtime/client/stubs.h"
#include "runtime/context.h"
#include "runtime/launch/cgroup.h"
#include "runtime/launch/launch.h"
#include "runtime/hostid.h"
#include "runtime/ledger/ledger.h"
#include "runtime/rmtree.h"
#include "runtime/run.h"
#include "runtime/stale.h"
#include "runtime/supervise/bridge.h"
#include "runtime/supervise/outputs.h"
#include "runtime/supervise/secrets.h"
#include "runtime/supervise/supervise.h"

/* The stable loader the interpreter starts: it runs the verbatim program as
 * __main__ from the workspace, so tracebacks name user_code.py. */
static const char MAIN_PY[] =
	"# cordon executor loader: runs user_code.py as __main__, in this\n"
	"# module, so tracebacks, pickling and multiprocessing see it as the\n"
	"# script itself.  No imports: runpy would cost ~13 ms of start-up.\n"
	"import sys\n"
	"sys.argv[:] = ['user_code.py']\n"
	"sys.path.insert(0, '/workspace/work')\n"
	"sys.path.insert(1, '/cordon')\n"
	"__file__ = '/workspace/work/user_code.py'\n"
	"with open(__file__, 'rb') as _f:\n"
	"    _code = compile(_f.read(), __file__, 'exec')\n"
	"del _f\n"
	"exec(_code)\n";

struct run_ctx {
	const struct run_opts *o;
	struct cpol_policy pol;
	struct blob_map map;
	char id[33];
	char dir[PATH_MAX];
	int temp_dir;
	int dir_fd;             /* the run directory: 0700, the supervisor's alone */
	char token[65];
	/* What goes into the workspace once the executor has made it: read
	 * before the clone, so its size is known when the tmpfs is sized. */
	char *code;
	size_t code_len;
	struct run_input { const char *name; char *data; size_t len; } inputs[RUN_MAX_INPUTS];
	char *stubs;
	size_t stubs_len;
	uint64_t ws_bytes_max, ws_inodes_max; /* the breach bounds (supervise.h) */
	struct ws ws;
	/* As root: [0] the executor's host ids, [1] its tools' (run_as default). */
	struct hostid_lease leases[2];
	char kept_note[600];    /* what a kept run directory could not keep */
	char sweep_note[256];   /* what the stale sweep could not remove */
	struct cg_host cgh;
	struct cg_run cg;
	int cg_made;
	int rootless;
	uid_t host_uid;
	gid_t host_gid;
	struct launch_plan lp;
	char envbuf[LAUNCH_MAX_ENV][512];
	cJSON *context;
	struct secrets *secrets;
	char state_dir[PATH_MAX];
	int listen_fd;          /* the tool socket until the bridge takes it */
	int audit_fd;           /* logs/tool-calls.jsonl */
	struct bridge *bridge;
	/* the harness lane */
	const char *stage;
	char stagebuf[32];
	char msg[1024];
};

#define HARNESS(c, st, ...) do { (c)->stage = (st); snprintf((c)->msg, sizeof((c)->msg), __VA_ARGS__); } while (0)

/* Reads a whole regular file of at most max bytes; *len set. */
static char *read_small(const char *path, size_t max, size_t *len, int *too_big)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *buf = NULL;

	*too_big = 0;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		goto out;
	if ((uint64_t)st.st_size > max) {
		*too_big = 1;
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (buf == NULL)
		goto out;
	*len = 0;
	while (*len < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + *len, (size_t)st.st_size - *len);

		if (r <= 0)
			break;
		*len += (size_t)r;
	}
	buf[*len] = '\0';
out:
	close(fd);
	return buf;
}

/* --- 1. policy ------------------------------------------------------- */

static int stage_policy(struct run_ctx *c)
{
	struct blob_error be;
	struct pubkey key;
	char err[512];

	if (blob_map_file(c->o->policy, &c->map, &be) != 0) {
		HARNESS(c, "policy", "%s: %s", c->o->policy, be.msg);
		return -1;
	}
	if (blob_load(c->map.data, c->map.len, CPOL_ARCH_X86_64, &c->pol, &be) != 0) {
		HARNESS(c, "policy", "%s: invalid policy blob: %s [field %s, byte %llu]", c->o->policy, be.msg,
			be.field, (unsigned long long)be.offset);
		return -1;
	}
	if (c->o->trusted_key != NULL) {
		if (key_read_public(c->o->trusted_key, &key, err, sizeof(err)) != 0 ||
		    sig_verify_policy(&c->pol, &key, err, sizeof(err)) != 0) {
			HARNESS(c, "signature", "%s", err);
			return -1;
		}
	}
	if (c->pol.limits.mode != CPOL_MODE_ISOLATED) {
		HARNESS(c, "policy", "mode '%s' is not supported by cordon run (only isolated)",
			policy_mode_name(c->pol.limits.mode));
		return -1;
	}
	if (c->o->agent != NULL) {
		uint32_t i;

		for (i = 0; i < c->pol.nagents && strcmp(c->pol.agents[i].name, c->o->agent) != 0; i++)
			;
		if (i == c->pol.nagents) {
			HARNESS(c, "context", "agent '%s' is not declared by the policy", c->o->agent);
			return -1;
		}
	}
	return 0;
}

/* --- 1b. host identity ------------------------------------------------ */

/* As root the executor's inside ids map to host ids leased for this run
 * alone (hostid.h): never an account's, never another run's, so no local
 * user can signal the sandbox, reach its socket or read its files, and no
 * run can reach another's.  Rootless the caller is the only id the kernel
 * lets us map. */
static int stage_hostid(struct run_ctx *c)
{
	struct hostid_range r = { HOSTID_RANGE_DEFAULT_FIRST, HOSTID_RANGE_DEFAULT_COUNT };
	char err[512];

	if (c->rootless) {
		c->host_uid = getuid();
		c->host_gid = getgid();
		return 0;
	}
	if (c->o->host_ids != NULL && hostid_range_parse(c->o->host_ids, &r, err, sizeof(err)) != 0) {
		HARNESS(c, "identity", "%.900s", err);
		return -1;
	}
	if (mkdir("/run/cordon", 0755) != 0 && errno != EEXIST) {
		HARNESS(c, "identity", "host ids: mkdir /run/cordon: %s", strerror(errno));
		return -1;
	}
	/* Two: the executor's, and its tools' (a tool shares nothing with the
	 * sandbox it serves, not even a uid that could signal it). */
	if (hostid_acquire_many(&r, NULL, HOSTID_LOCK_DIR_DEFAULT, c->leases, 2, err, sizeof(err)) != 0) {
		HARNESS(c, "identity", "host ids: %.900s", err);
		return -1;
	}
	c->host_uid = c->leases[0].uid;
	c->host_gid = c->leases[0].gid;
	return 0;
}

/* --- 2. request context ---------------------------------------------- */

static int stage_context(struct run_ctx *c)
{
	size_t len;
	int big;
	char *text, err[256];

	if (c->o->context == NULL)
		return 0;
	text = read_small(c->o->context, CONTEXT_MAX_BYTES, &len, &big);
	if (text == NULL) {
		HARNESS(c, "context", "%s: %s", c->o->context, big ? "over 1 MiB" : strerror(errno ? errno : EINVAL));
		return -1;
	}
	c->context = context_parse(text, len, err, sizeof(err));
	free(text);
	if (c->context == NULL) {
		HARNESS(c, "context", "%.512s: %s", c->o->context, err);
		return -1;
	}
	return 0;
}

/* --- 2b. what the tools need: secrets and the ledger's place ---------- */

static int stage_secrets(struct run_ctx *c)
{
	char err[512];

	if (secrets_load(c->o->secrets, &c->secrets, err, sizeof(err)) != 0) {
		HARNESS(c, "secrets", "%.900s", err);
		return -1;
	}
	if (ledger_state_dir(c->o->state_dir, c->rootless, c->state_dir, sizeof(c->state_dir), err, sizeof(err)) != 0) {
		HARNESS(c, "ledger", "%s", err);
		return -1;
	}
	return 0;
}

/* --- 3. run directory ------------------------------------------------ */

/* The run directory holds only what the supervisor writes (the executed
 * program's copy, logs, the audit, the result and, when kept, the copied
 * outputs): the sandbox's files live in its own tmpfs (workspace.h).  It is
 * 0700 and every file 0600, so no other local user reads a run. */
static int rundir_write(struct run_ctx *c, const char *rel, const void *data, size_t len)
{
	int fd = openat(c->dir_fd, rel, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, data, len) == (ssize_t)len;
	if (close(fd) != 0)
		ok = 0;
	return ok ? 0 : -1;
}

static int stage_rundir(struct run_ctx *c)
{
	char p[PATH_MAX];
	int big, e;

	if (c->o->run_dir != NULL) {
		if (mkdir(c->o->run_dir, 0700) != 0) {
			HARNESS(c, "rundir", "%s: %s (the run directory must not exist yet)", c->o->run_dir,
				strerror(errno));
			return -1;
		}
		if (realpath(c->o->run_dir, c->dir) == NULL) {
			HARNESS(c, "rundir", "%s: %s", c->o->run_dir, strerror(errno));
			return -1;
		}
	} else {
		const char *tmp = getenv("TMPDIR");

		tmp = tmp && *tmp == '/' ? tmp : "/tmp";
		/* What a SIGKILLed supervisor left; a failure to remove it
		 * does not stop this run (the next sweep tries again). */
		stale_sweep_rundirs(tmp, c->sweep_note, sizeof(c->sweep_note));
		snprintf(c->dir, sizeof(c->dir), "%.3900s/cordon-run.%d.XXXXXX", tmp, (int)getpid());
		if (mkdtemp(c->dir) == NULL) {
			HARNESS(c, "rundir", "mkdtemp %.900s: %s", c->dir, strerror(errno));
			return -1;
		}
		c->temp_dir = 1;
	}
	c->dir_fd = open(c->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c->dir_fd < 0 || fchmod(c->dir_fd, 0700) != 0) {
		HARNESS(c, "rundir", "%.900s: %s", c->dir, strerror(errno));
		return -1;
	}
	snprintf(p, sizeof(p), "executed_programs/%s", c->id);
	for (const char *d = "logs\0executed_programs\0"; *d; d += strlen(d) + 1)
		if (mkdirat(c->dir_fd, d, 0700) != 0) {
			HARNESS(c, "rundir", "mkdir %.900s/%s: %s", c->dir, d, strerror(errno));
			return -1;
		}
	if (mkdirat(c->dir_fd, p, 0700) != 0) {
		HARNESS(c, "rundir", "mkdir %.900s/%.100s: %s", c->dir, p, strerror(errno));
		return -1;
	}
	errno = 0;
	c->code = read_small(c->o->code, c->pol.limits.max_code_bytes, &c->code_len, &big);
	if (c->code == NULL) {
		e = errno;
		if (big)
			HARNESS(c, "code", "%s is over max_code_bytes (%llu)", c->o->code,
				(unsigned long long)c->pol.limits.max_code_bytes);
		else
			HARNESS(c, "code", "%s: %s", c->o->code, e ? strerror(e) : "not a regular file");
		return -1;
	}
	snprintf(p, sizeof(p), "executed_programs/%s/user_code.py", c->id);
	if (rundir_write(c, p, c->code, c->code_len) != 0) {
		HARNESS(c, "rundir", "write %.900s/%.100s: %s", c->dir, p, strerror(errno));
		return -1;
	}
	c->audit_fd = openat(c->dir_fd, "logs/tool-calls.jsonl",
			     O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (c->audit_fd < 0) {
		HARNESS(c, "rundir", "create %.900s/logs/tool-calls.jsonl: %s", c->dir, strerror(errno));
		return -1;
	}
	for (unsigned i = 0; i < c->o->ninputs; i++) {
		const char *base = strrchr(c->o->inputs[i], '/');
		struct run_input *in = &c->inputs[i];

		base = base ? base + 1 : c->o->inputs[i];
		if (*base == '\0' || strcmp(base, "main.py") == 0 || strcmp(base, "user_code.py") == 0 ||
		    strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
			HARNESS(c, "inputs", "%s: input name is empty or reserved", c->o->inputs[i]);
			return -1;
		}
		for (unsigned j = 0; j < i; j++)
			if (strcmp(c->inputs[j].name, base) == 0) {
				HARNESS(c, "inputs", "%s: given twice", c->o->inputs[i]);
				return -1;
			}
		in->name = base;
		errno = 0;
		in->data = read_small(c->o->inputs[i], c->pol.limits.max_file_bytes, &in->len, &big);
		if (in->data == NULL) {
			e = errno;
			HARNESS(c, "inputs", "%s: %s", c->o->inputs[i],
				big ? "over max_file_bytes" : e ? strerror(e) : "not a regular file");
			return -1;
		}
	}
	return 0;
}

/* The workspace's tmpfs bounds.  What the supervisor puts in counts as the
 * baseline, page by page as tmpfs allocates it; the program may add
 * max_exec_workspace_delta_bytes, never past max_exec_workspace_bytes.
 * The tmpfs itself is a page and an inode larger than the bounds, so the
 * kernel stops the program there and the monitor can tell a full workspace
 * from one filled exactly to its limit. */
#define WS_PAGE 4096ull
#define WS_ROUND(x) (((uint64_t)(x) + WS_PAGE - 1) / WS_PAGE * WS_PAGE)
/* root, work, out, logs, logs/executor, main.py, user_code.py */
#define WS_FIXED_INODES 7u

static void ws_bounds(struct run_ctx *c, uint64_t *size, uint64_t *inodes)
{
	const struct cpol_limits *l = &c->pol.limits;
	uint64_t base = WS_ROUND(c->code_len) + WS_ROUND(sizeof(MAIN_PY));
	uint64_t entries = l->ws_entries;

	for (unsigned i = 0; i < c->o->ninputs; i++)
		base += WS_ROUND(c->inputs[i].len);
	c->ws_bytes_max = 0;
	if (l->ws_delta_bytes != 0)
		c->ws_bytes_max = base + WS_ROUND(l->ws_delta_bytes);
	if (l->ws_max_bytes != 0 && (c->ws_bytes_max == 0 || WS_ROUND(l->ws_max_bytes) < c->ws_bytes_max))
		c->ws_bytes_max = WS_ROUND(l->ws_max_bytes);
	c->ws_inodes_max = WS_FIXED_INODES + c->o->ninputs + entries;
	*size = c->ws_bytes_max ? c->ws_bytes_max + WS_PAGE : 0;
	*inodes = c->ws_inodes_max + 1;
}

/* --- 4. plan --------------------------------------------------------- */

static struct launch_mount *plan_mount(struct launch_plan *lp, enum launch_mount_kind k, const char *src,
				       const char *dst)
{
	struct launch_mount *m;

	if (lp->nmounts == LAUNCH_MAX_MOUNTS)
		return NULL;
	m = &lp->mounts[lp->nmounts++];
	memset(m, 0, sizeof(*m));
	m->kind = k;
	snprintf(m->src, sizeof(m->src), "%s", src);
	snprintf(m->dst, sizeof(m->dst), "%s", dst);
	return m;
}

static int plan_env(struct run_ctx *c, const char *key, const char *val)
{
	struct launch_plan *lp = &c->lp;
	size_t klen = strlen(key);

	/* The runtime's own variables win over the policy's: they are how the
	 * sandbox is wired (paths, socket, token), not preferences. */
	for (unsigned i = 0; i < lp->nenv; i++)
		if (strncmp(lp->envp[i], key, klen) == 0 && lp->envp[i][klen] == '=') {
			snprintf(c->envbuf[i], sizeof(c->envbuf[i]), "%s=%s", key, val);
			return 0;
		}
	if (lp->nenv == LAUNCH_MAX_ENV ||
	    snprintf(c->envbuf[lp->nenv], sizeof(c->envbuf[0]), "%s=%s", key, val) >= (int)sizeof(c->envbuf[0]))
		return -1;
	lp->envp[lp->nenv] = c->envbuf[lp->nenv];
	lp->nenv++;
	lp->envp[lp->nenv] = NULL;
	return 0;
}

static int stage_plan(struct run_ctx *c)
{
	struct launch_plan *lp = &c->lp;
	const struct cpol_policy *p = &c->pol;
	int has_tmp = 0, has_etc = 0;
	static const char *const devs[] = { "/dev/null", "/dev/zero", "/dev/random", "/dev/urandom" };

	lp->uid = p->exec.uid;
	lp->gid = p->exec.gid;
	lp->rootless = c->rootless;
	lp->interpreter = p->exec.interpreter;
	lp->fsize = p->limits.max_file_bytes;
	lp->nofile = p->limits.open_files;
	lp->loopback = p->exec.network == CPOL_NET_LOOPBACK;
	lp->landlock = (p->exec.flags & CPOL_EXE_F_LANDLOCK) != 0;
	lp->filter = p->nseccomp ? p->seccomp : NULL;
	lp->nfilter = p->nseccomp;
	for (uint32_t i = 0; i < p->nmounts; i++) {
		const struct cpol_mount *pm = &p->mounts[i];
		struct launch_mount *m;

		if (pm->type == CPOL_MOUNT_TMPFS) {
			m = plan_mount(lp, LM_TMPFS, "", pm->target);
			if (m != NULL) {
				m->size = pm->size;
				m->landlock_rw = 1;
			}
		} else {
			m = plan_mount(lp, (pm->flags & CPOL_MNT_F_RW) ? LM_BIND_RW : LM_BIND_RO, pm->source,
				       pm->target);
			if (m != NULL)
				m->landlock_rw = (pm->flags & CPOL_MNT_F_RW) != 0;
		}
		if (m == NULL)
			goto too_many;
		has_tmp |= strcmp(pm->target, "/tmp") == 0;
		has_etc |= strcmp(pm->target, "/etc") == 0;
	}
	for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]); i++)
		if (plan_mount(lp, LM_DEVFILE, devs[i], devs[i]) == NULL)
			goto too_many;
	/* POSIX shared memory (multiprocessing's locks) lives in /dev/shm. */
	{
		struct launch_mount *m = plan_mount(lp, LM_TMPFS, "", "/dev/shm");

		if (m == NULL)
			goto too_many;
		m->size = 64ull << 20;
		m->landlock_rw = 1;
	}
	/* The private filesystems, in enum ws_part's order (the executor
	 * hands them over in plan order): the workspace bounded by the kernel,
	 * then the client modules and the socket, read-only once filled. */
	{
		uint64_t size, inodes;
		struct launch_mount *w = plan_mount(lp, LM_PRIVATE, "", "/workspace");
		struct launch_mount *l = plan_mount(lp, LM_PRIVATE, "", "/cordon");
		struct launch_mount *k = plan_mount(lp, LM_PRIVATE, "", "/supervisor-socket");

		if (w == NULL || l == NULL || k == NULL)
			goto too_many;
		ws_bounds(c, &size, &inodes);
		w->size = size;
		w->inodes = inodes;
		w->rw_sub[0] = "work";
		w->rw_sub[1] = "out";
		w->rw_sub[2] = "logs/executor";
		w->nrw_sub = 3;
		l->size = WS_ROUND(c->stubs_len) + WS_ROUND(stubs_client_py_len) + WS_PAGE;
		l->inodes = 4;
		k->size = WS_PAGE;
		k->inodes = 3;
		lp->landlock_rw[0] = "/workspace/work";
		lp->landlock_rw[1] = "/workspace/out";
		lp->landlock_rw[2] = "/workspace/logs/executor";
		lp->nlandlock_rw = 3;
	}
	lp->write_etc = !has_etc;
	for (uint32_t i = 0; i < p->nenv; i++)
		if (plan_env(c, p->env[i].key, p->env[i].value) != 0)
			goto env;
	if (plan_env(c, "PATH", "/usr/local/bin:/usr/bin:/bin") || plan_env(c, "HOME", "/workspace/work") ||
	    plan_env(c, "TMPDIR", has_tmp ? "/tmp" : "/workspace/work") ||
	    plan_env(c, "CORDON_SOCKET", "/supervisor-socket/tools.sock") || plan_env(c, "CORDON_TOKEN", c->token) ||
	    plan_env(c, "CORDON_EXECUTION_ID", c->id))
		goto env;
	{
		int has_lang = 0;

		for (unsigned i = 0; i < lp->nenv; i++)
			has_lang |= strncmp(lp->envp[i], "LANG=", 5) == 0;
		if (!has_lang && plan_env(c, "LANG", "C.UTF-8"))
			goto env;
	}
	return 0;
too_many:
	HARNESS(c, "plan", "more than %d mounts", LAUNCH_MAX_MOUNTS);
	return -1;
env:
	HARNESS(c, "plan", "environment too large");
	return -1;
}

/* --- 4b. the tool path: client modules and the socket ---------------- */

/* The tools this run's program is told about: the agent's, narrowed by
 * the context's selection.  The bridge decides again on every call, so
 * this list is a convenience for the program, not the check. */
static uint32_t tools_selected(struct run_ctx *c, uint32_t *sel)
{
	const struct cpol_policy *p = &c->pol;
	const cJSON *want = c->context ? cJSON_GetObjectItemCaseSensitive(c->context, "tools") : NULL;
	uint32_t n = 0;

	for (uint32_t a = 0; c->o->agent != NULL && a < p->nagents; a++) {
		if (strcmp(p->agents[a].name, c->o->agent) != 0)
			continue;
		for (uint32_t i = 0; i < p->agents[a].ntools; i++) {
			const char *id = p->tools[p->agents[a].tools[i]].id;
			int ok = want == NULL;

			for (const cJSON *w = want ? want->child : NULL; w != NULL && !ok; w = w->next)
				ok = cJSON_IsString(w) && strcmp(w->valuestring, id) == 0;
			if (ok)
				sel[n++] = p->agents[a].tools[i];
		}
	}
	return n;
}

static int stage_tools(struct run_ctx *c)
{
	uint32_t *sel = calloc(c->pol.ntools + 1, sizeof(*sel)), n;

	if (sel == NULL) {
		HARNESS(c, "tools", "out of memory");
		return -1;
	}
	n = tools_selected(c, sel);
	c->stubs = stubs_python(&c->pol, sel, n, &c->stubs_len);
	free(sel);
	if (c->stubs == NULL) {
		HARNESS(c, "tools", "client modules: out of memory");
		return -1;
	}
	return 0;
}

/* --- 5. limits ------------------------------------------------------- */

static int stage_cgroup(struct run_ctx *c)
{
	struct cg_limits lim = { c->pol.limits.memory_bytes, c->pol.limits.pids };
	char name[64], err[512];

	if (cgroup_detect(&c->cgh, NULL, NULL, err, sizeof(err)) != 0)
		memset(&c->cgh, 0, sizeof(c->cgh)); /* nothing usable: rlimits below */
	/* The supervisor's pid in the name lets a later run sweep what a
	 * killed supervisor left (cgroup_sweep_stale). */
	snprintf(name, sizeof(name), "cordon-%d-%s", (int)getpid(), c->id);
	if (cgroup_create(&c->cg, &c->cgh, name, &lim, err, sizeof(err)) != 0) {
		HARNESS(c, "cgroup", "%s", err);
		return -1;
	}
	c->cg_made = 1;
	cgroup_sweep_stale(&c->cg);
	if ((c->pol.exec.require & CPOL_LAYER_CGROUP) &&
	    (c->cg.mem_kind == CG_NONE || c->cg.pids_kind == CG_NONE)) {
		HARNESS(c, "cgroup", "the policy requires cgroup limits and this host gives none to this caller (%.800s)",
			c->cg.note[0] ? c->cg.note : "no usable hierarchy");
		return -1;
	}
	if ((c->pol.exec.require & CPOL_LAYER_LANDLOCK) && landlock_abi() < 1) {
		HARNESS(c, "landlock", "the policy requires landlock and this kernel has none");
		return -1;
	}
	/* Fallbacks, named in the result: address space for memory, and the
	 * per-user process count for pids. */
	if (c->cg.mem_kind == CG_NONE)
		c->lp.as = c->pol.limits.memory_bytes;
	if (c->cg.pids_kind == CG_NONE)
		c->lp.nproc = c->pol.limits.pids;
	return 0;
}

/* --- 6. launch and supervise ----------------------------------------- */

struct run_outcome {
	int started;            /* exec succeeded */
	struct supervise_out so;
	struct capture out, err;
	struct cg_usage usage;
	int have_usage;
};

static uint64_t monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The error pipe closed at exec (CLOEXEC) unless setup failed first: then
 * it holds "stage\tmessage".  Returns 1 when the child reported one. */
static int child_report(struct run_ctx *c, int fd)
{
	char buf[1024], *tab;
	ssize_t got = read(fd, buf, sizeof(buf) - 1);

	if (got <= 0)
		return 0;
	buf[got] = '\0';
	tab = strchr(buf, '\t');
	if (tab != NULL)
		*tab++ = '\0';
	/* stage names are a fixed set in sequence.c; keep a copy */
	snprintf(c->stagebuf, sizeof(c->stagebuf), "%.31s", buf);
	HARNESS(c, c->stagebuf, "%.900s", tab ? tab : "setup failed");
	return 1;
}

struct fill_listen {
	struct run_ctx *c;
	char path[64];
	char err[512];
};

static int fill_listen_fn(void *arg)
{
	struct fill_listen *fl = arg;
	struct run_ctx *c = fl->c;

	return bridge_listen(fl->path, !c->rootless, c->host_uid, c->host_gid, &c->listen_fd, fl->err,
			     sizeof(fl->err));
}

/* Fill the executor's private filesystems through their fds: the
 * workspace's directories, the loader, the program and its inputs, the
 * client modules, and the tool socket.  All of it is the executor's (its
 * host ids), 0600 / 0700: it reads them as their owner, nobody else can. */
static int stage_fill(struct run_ctx *c, char *err, size_t n)
{
	struct fill_listen fl = { .c = c };
	char rel[PATH_MAX];

	/* work/, out/, logs/executor/ exist: the executor made them, as the
	 * writable binds of its otherwise read-only /workspace. */
	if (ws_write(&c->ws, WS_WORKSPACE, "work/main.py", MAIN_PY, sizeof(MAIN_PY) - 1, 0600, err, n) != 0 ||
	    ws_write(&c->ws, WS_WORKSPACE, "work/user_code.py", c->code, c->code_len, 0600, err, n) != 0)
		return -1;
	for (unsigned i = 0; i < c->o->ninputs; i++) {
		if (snprintf(rel, sizeof(rel), "work/%s", c->inputs[i].name) >= (int)sizeof(rel)) {
			snprintf(err, n, "input name too long");
			return -1;
		}
		if (ws_write(&c->ws, WS_WORKSPACE, rel, c->inputs[i].data, c->inputs[i].len, 0600, err, n) != 0)
			return -1;
	}
	if (ws_write(&c->ws, WS_CLIENT, "cordon_tools.py", stubs_client_py, stubs_client_py_len, 0444, err, n) != 0 ||
	    ws_write(&c->ws, WS_CLIENT, "tools.py", c->stubs, c->stubs_len, 0444, err, n) != 0)
		return -1;
	/* bind() takes a path: the socket directory's fd as /proc names it,
	 * which no other process can shape. */
	snprintf(fl.path, sizeof(fl.path), "/proc/self/fd/%d/tools.sock", c->ws.fd[WS_SOCKET]);
	if (ws_as_executor(&c->ws, fill_listen_fn, &fl) != 0) {
		snprintf(err, n, "%s", fl.err[0] ? fl.err : strerror(errno));
		return -1;
	}
	return 0;
}

/* The one way a launched executor that will not be supervised ends: killed
 * (with its whole pid namespace) and reaped. */
static void child_kill(pid_t *pid)
{
	if (*pid > 0) {
		kill(*pid, SIGKILL);
		waitpid(*pid, NULL, 0);
	}
	*pid = -1;
}

static int stage_launch(struct run_ctx *c, struct run_outcome *r)
{
	int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, perr[2] = { -1, -1 }, psync[2] = { -1, -1 }, pfd[2] = { -1, -1 };
	int devnull = -1, sigfd = -1, rc = -1, masked = 0;
	sigset_t mask, old;
	pid_t pid = -1;
	char buf[1024];
	struct supervise_cfg cfg;

	r->out.max = r->err.max = (size_t)c->pol.limits.max_output_bytes;
	r->out.buf = malloc(r->out.max + 1);
	r->err.buf = malloc(r->err.max + 1);
	r->out.fd = r->err.fd = -1;
	if (r->out.buf == NULL || r->err.buf == NULL) {
		HARNESS(c, "launch", "out of memory");
		return -1;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	/* Signals become events of the loop; the child unblocks them before
	 * exec (sequence.c step 10). */
	if (sigprocmask(SIG_BLOCK, &mask, &old) != 0) {
		HARNESS(c, "launch", "sigprocmask: %s", strerror(errno));
		goto out;
	}
	masked = 1;
	if ((sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0 || pipe2(po, O_CLOEXEC) ||
	    pipe2(pe, O_CLOEXEC) || pipe2(perr, O_CLOEXEC) || pipe2(psync, O_CLOEXEC) ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pfd) ||
	    (devnull = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
		HARNESS(c, "launch", "pipes: %s", strerror(errno));
		goto out;
	}
	c->lp.err_fd = perr[1];
	c->lp.sync_fd = psync[0];
	c->lp.fd_sock = pfd[1];
	c->lp.stdin_fd = devnull;
	c->lp.stdout_fd = po[1];
	c->lp.stderr_fd = pe[1];
	c->lp.parent_fds[0] = po[0];
	c->lp.parent_fds[1] = pe[0];
	c->lp.parent_fds[2] = perr[0];
	c->lp.parent_fds[3] = psync[1];
	c->lp.parent_fds[4] = pfd[0];
	/* A raw clone: fork semantics, with every namespace fresh at once but
	 * the cgroup one, which the child makes once it is in its cgroups
	 * (sequence.c step 3b). */
	pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
					   CLONE_NEWUTS | SIGCHLD,
			     NULL, NULL, NULL, NULL);
	if (pid < 0) {
		HARNESS(c, "namespaces", "clone: %s", strerror(errno));
		goto out;
	}
	if (pid == 0)
		launch_child(&c->lp);
	for (int *fd = (int[]){ po[1], pe[1], perr[1], psync[0], pfd[1], -2 }; *fd != -2; fd++)
		close(*fd);
	po[1] = pe[1] = perr[1] = psync[0] = pfd[1] = -1;
	if (identity_write_maps(pid, &c->lp, c->host_uid, c->host_gid, buf, sizeof(buf)) != 0) {
		HARNESS(c, "identity", "%s", buf);
		goto out;
	}
	if (write(psync[1], "m", 1) != 1) {
		HARNESS(c, "sync", "the executor ended before setup: %s", strerror(errno));
		goto out;
	}
	if (cgroup_attach(&c->cg, pid, buf, sizeof(buf)) != 0) {
		HARNESS(c, "cgroup", "%s", buf);
		goto out;
	}
	if (ws_receive(&c->ws, pfd[0], 30000, buf, sizeof(buf)) != 0) {
		HARNESS(c, "mounts", "%s", buf);
		goto out;
	}
	if (stage_fill(c, buf, sizeof(buf)) != 0) {
		HARNESS(c, "workspace", "%s", buf);
		goto out;
	}
	{
		struct bridge_cfg bc = { .pol = &c->pol,
					 .exec_id = c->id,
					 .token = c->token,
					 .context = c->context,
					 .agent = c->o->agent,
					 .state_dir = c->state_dir,
					 .secrets = c->secrets,
					 .audit_fd = c->audit_fd,
					 .peer_uid = c->host_uid,
					 .child = pid,
					 .deadline_ms = monotonic_ms() + c->pol.limits.timeout_ms + 1000,
					 .tool_uid = c->leases[1].uid,
					 .tool_gid = c->leases[1].gid,
					 .tool_ids = !c->rootless,
					 .cg_host = &c->cgh };

		/* Before the program may run: its first call must find the
		 * bridge serving.  The threads start after the clone, so the
		 * child never inherits a lock held by one of them. */
		if (bridge_start(&bc, &c->listen_fd, &c->bridge, buf, sizeof(buf)) != 0) {
			HARNESS(c, "bridge", "%s", buf);
			goto out;
		}
	}
	if (write(psync[1], "c", 1) != 1) {
		HARNESS(c, "sync", "the executor ended during setup: %s", strerror(errno));
		goto out;
	}
	r->out.fd = po[0];
	r->err.fd = pe[0];
	po[0] = pe[0] = -1;
	fcntl(r->out.fd, F_SETFL, O_NONBLOCK);
	fcntl(r->err.fd, F_SETFL, O_NONBLOCK);
	cfg = (struct supervise_cfg){ .child = pid,
				      .timeout_ms = c->pol.limits.timeout_ms,
				      .monitor_ms = c->pol.limits.monitor_ms,
				      .ws = &c->ws,
				      .ws_bytes_max = c->ws_bytes_max,
				      .ws_inodes_max = c->ws_inodes_max,
				      .sigfd = sigfd };
	/* supervise_run reaps the executor whatever happens. */
	if (supervise_run(&cfg, &r->out, &r->err, &r->so, buf, sizeof(buf)) != 0) {
		pid = -1;
		HARNESS(c, "supervise", "%s", buf);
		goto out;
	}
	pid = -1;
	/* The executor is gone; a tool still running is killed now. */
	bridge_stop(c->bridge);
	if (child_report(c, perr[0]))
		goto out;
	r->started = 1;
	if (c->cg_made && cgroup_usage(&c->cg, &r->usage, buf, sizeof(buf)) == 0)
		r->have_usage = 1;
	rc = 0;
out:
	if (pid > 0) {
		child_kill(&pid);
		/* A child that died in setup said where: its report is the
		 * better message than the supervisor's side of it. */
		if (perr[0] >= 0)
			child_report(c, perr[0]);
	}
	/* Whatever ended the launch, no call may still be served (or append
	 * to the result's list) once the result is built. */
	bridge_stop(c->bridge);
	for (int *fd = (int[]){ po[0], po[1], pe[0], pe[1], perr[0], perr[1], psync[0], psync[1], pfd[0], pfd[1],
				 devnull, sigfd, -2 };
	     *fd != -2; fd++)
		if (*fd >= 0)
			close(*fd);
	if (r->out.fd >= 0)
		close(r->out.fd);
	if (r->err.fd >= 0)
		close(r->err.fd);
	r->out.fd = r->err.fd = -1;
	if (masked)
		sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/* --- 7. reduce and result -------------------------------------------- */

static cJSON *enforcement_json(struct run_ctx *c)
{
	cJSON *e = cJSON_CreateObject();
	char buf[128];
	int abi = landlock_abi();

	cJSON_AddStringToObject(e, "namespaces", "user,mount,pid,net,ipc,uts,cgroup");
	snprintf(buf, sizeof(buf), "tmpfs root, %u read-only binds, workspace rw, pivot_root", c->pol.nmounts);
	cJSON_AddStringToObject(e, "filesystem", buf);
	cJSON_AddStringToObject(e, "network", c->pol.exec.network == CPOL_NET_LOOPBACK ? "loopback only" : "none");
	snprintf(buf, sizeof(buf), "uid %u gid %u as host %u/%u, %s%s", c->pol.exec.uid, c->pol.exec.gid,
		 (unsigned)c->host_uid, (unsigned)c->host_gid,
		 c->rootless ? "supplementary groups of the caller unmapped" : "no supplementary groups",
		 c->rootless ? " (rootless: the caller)" : "");
	cJSON_AddStringToObject(e, "identity", buf);
	cJSON_AddStringToObject(e, "memory", c->cg.mem_kind != CG_NONE ? cgroup_kind_name(c->cg.mem_kind) : "rlimit-as-per-process");
	cJSON_AddStringToObject(e, "pids", c->cg.pids_kind != CG_NONE ? cgroup_kind_name(c->cg.pids_kind) : "rlimit-nproc");
	if (!(c->pol.exec.flags & CPOL_EXE_F_LANDLOCK))
		snprintf(buf, sizeof(buf), "off (policy)");
	else
		snprintf(buf, sizeof(buf), "abi-%d", abi);
	cJSON_AddStringToObject(e, "landlock", buf);
	if (c->pol.nseccomp)
		snprintf(buf, sizeof(buf), "filter(%u insns)", c->pol.nseccomp);
	else
		snprintf(buf, sizeof(buf), "none (the policy has no filter)");
	cJSON_AddStringToObject(e, "seccomp", buf);
	cJSON_AddStringToObject(e, "capabilities", "none");
	cJSON_AddBoolToObject(e, "noNewPrivs", 1);
	snprintf(buf, sizeof(buf), "fsize,nofile,core%s%s", c->lp.nproc ? ",nproc" : "", c->lp.as ? ",as" : "");
	cJSON_AddStringToObject(e, "rlimits", buf);
	return e;
}

static cJSON *error_json(const char *code, const char *message, const char *where)
{
	cJSON *e = cJSON_CreateObject(), *d;

	cJSON_AddStringToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", message);
	if (where != NULL) {
		d = cJSON_AddObjectToObject(e, "details");
		cJSON_AddStringToObject(d, "where", where);
	}
	return e;
}

static int build_result(struct run_ctx *c, struct run_outcome *r, cJSON *res)
{
	char hex[65], where[64];
	const char *status = "error";
	int exit_code = RUN_EXIT_HARNESS;
	cJSON *pol = cJSON_AddObjectToObject(res, "policy");

	cJSON_AddStringToObject(res, "executionId", c->id);
	cJSON_AddStringToObject(pol, "app", c->pol.meta.app ? c->pol.meta.app : "");
	sodium_bin2hex(hex, sizeof(hex), c->pol.sha256, 32);
	cJSON_AddStringToObject(pol, "sha256", c->pol.meta.app ? hex : "");
	cJSON_AddStringToObject(res, "runDir", c->temp_dir ? "" : c->dir);
	if (c->stage != NULL) {
		snprintf(where, sizeof(where), "exec.harness.%s", c->stage);
		cJSON_AddStringToObject(res, "status", "error");
		cJSON_AddNullToObject(res, "exitCode");
		cJSON_AddNullToObject(res, "signal");
		/* No enforcement object: the program never ran under one. */
		cJSON_AddItemToObject(res, "error", error_json("sandbox_execution_failed", c->msg, where));
		return RUN_EXIT_HARNESS;
	}
	int ws = WIFEXITED(r->so.wstatus), sig = WIFSIGNALED(r->so.wstatus) ? WTERMSIG(r->so.wstatus) : 0;
	cJSON *err = NULL, *result = NULL;
	char rerr[512] = "";
	int out_dir = openat(c->ws.fd[WS_WORKSPACE], "out", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct outputs_report rep = { 0 };
	struct outputs_limits ol = { 0 };
	char oerr[512];
	int rr = out_dir < 0 ? -1 : result_read(out_dir, c->pol.limits.max_result_bytes, &result, rerr, sizeof(rerr));

	if (out_dir < 0 || outputs_collect(out_dir, c->pol.outputs, c->pol.noutputs, &ol, &rep, oerr, sizeof(oerr)) != 0)
		snprintf(rerr, sizeof(rerr), "outputs could not be read");
	if (out_dir >= 0)
		close(out_dir);
	switch (r->so.end) {
	case SUP_TIMED_OUT:
		status = "timed_out";
		exit_code = RUN_EXIT_TIMEOUT;
		err = error_json("timeout", "the program ran past the policy's timeout", NULL);
		break;
	case SUP_CANCELLED:
		status = "cancelled";
		exit_code = RUN_EXIT_CANCELLED;
		err = error_json("cancelled", strsignal(r->so.cancel_signal), NULL);
		break;
	case SUP_WS_BREACH:
		status = "limit_exceeded";
		exit_code = RUN_EXIT_FAILED;
		err = error_json("workspace_limit", "the workspace grew past max_exec_workspace_delta_bytes, "
						    "max_exec_workspace_bytes or its entry bound", NULL);
		break;
	case SUP_EXITED:
		if (r->have_usage && r->usage.oom_killed) {
			status = "limit_exceeded";
			exit_code = RUN_EXIT_FAILED;
			err = error_json("memory_limit", "the memory limit was reached and the kernel killed the program",
					 NULL);
		} else if (ws && WEXITSTATUS(r->so.wstatus) == 0 && rep.nviolations == 0) {
			status = "succeeded";
			exit_code = RUN_EXIT_OK;
		} else if (ws && WEXITSTATUS(r->so.wstatus) == 0) {
			status = "failed";
			exit_code = RUN_EXIT_FAILED;
			err = error_json("output_contract", "the declared outputs were not met", NULL);
		} else {
			status = "failed";
			exit_code = RUN_EXIT_FAILED;
			err = error_json("program_failed", sig ? "the program was killed by a signal"
							       : "the program exited with a non-zero status",
					 NULL);
		}
		break;
	}
	cJSON_AddStringToObject(res, "status", status);
	if (ws)
		cJSON_AddNumberToObject(res, "exitCode", WEXITSTATUS(r->so.wstatus));
	else
		cJSON_AddNullToObject(res, "exitCode");
	if (sig)
		cJSON_AddStringToObject(res, "signal", sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
	else
		cJSON_AddNullToObject(res, "signal");
	r->out.buf[r->out.len] = '\0';
	r->err.buf[r->err.len] = '\0';
	/* Output is bytes; JSON wants text: NULs and invalid UTF-8 become
	 * U+FFFD, counted in "replaced" (docs/runtime.md). */
	size_t rep_out = 0, rep_err = 0;
	char *t_out = utf8_sanitize(r->out.buf, r->out.len, &rep_out), *t_err = utf8_sanitize(r->err.buf, r->err.len, &rep_err);
	cJSON_AddStringToObject(res, "stdout", t_out ? t_out : "");
	cJSON_AddStringToObject(res, "stderr", t_err ? t_err : "");
	free(t_out);
	free(t_err);
	cJSON *tr = cJSON_AddObjectToObject(res, "truncated");
	cJSON_AddBoolToObject(tr, "stdout", r->out.truncated);
	cJSON_AddBoolToObject(tr, "stderr", r->err.truncated);
	cJSON *rp = cJSON_AddObjectToObject(res, "replaced");
	cJSON_AddNumberToObject(rp, "stdout", (double)rep_out);
	cJSON_AddNumberToObject(rp, "stderr", (double)rep_err);
	if (result != NULL)
		cJSON_AddItemToObject(res, "result", result);
	else
		cJSON_AddNullToObject(res, "result");
	if (rr < 0 || rerr[0])
		cJSON_AddStringToObject(res, "resultError", rerr);
	else
		cJSON_AddNullToObject(res, "resultError");
	cJSON_AddNumberToObject(res, "durationMs", (double)r->so.duration_ms);
	cJSON_AddItemToObject(res, "artifacts", outputs_artifacts_json(&rep));
	cJSON_AddItemToObject(res, "violations", outputs_violations_json(&rep));
	cJSON_AddItemToObject(res, "toolCalls", bridge_calls_json(c->bridge));
	cJSON_AddNumberToObject(res, "peerRefusals", (double)bridge_peer_refusals(c->bridge));
	cJSON *u = cJSON_AddObjectToObject(res, "usage");
	cJSON_AddNumberToObject(u, "cpuMs", (double)(r->so.ru.ru_utime.tv_sec * 1000 + r->so.ru.ru_utime.tv_usec / 1000 +
						     r->so.ru.ru_stime.tv_sec * 1000 + r->so.ru.ru_stime.tv_usec / 1000));
	cJSON_AddNumberToObject(u, "maxRssKiB", (double)r->so.ru.ru_maxrss);
	if (r->have_usage && r->usage.mem_peak)
		cJSON_AddNumberToObject(u, "memoryPeakBytes", (double)r->usage.mem_peak);
	cJSON_AddNumberToObject(u, "workspaceDeltaBytes",
				(double)(r->so.ws_peak > r->so.ws_baseline ? r->so.ws_peak - r->so.ws_baseline : 0));
	cJSON_AddNumberToObject(u, "workspaceEntries",
				(double)(r->so.ws_inodes_peak > r->so.ws_inodes_baseline
						 ? r->so.ws_inodes_peak - r->so.ws_inodes_baseline
						 : 0));
	cJSON_AddItemToObject(res, "enforcement", enforcement_json(c));
	if (err != NULL)
		cJSON_AddItemToObject(res, "error", err);
	else
		cJSON_AddNullToObject(res, "error");
	outputs_report_free(&rep);
	return exit_code;
}

/* A kept run directory gets copies of out/ and logs/executor/ (the
 * workspace itself is gone with the run): plain files and directories
 * only, owned by the supervisor; work/ is the program's scratch and is not
 * kept.  What was skipped is noted in supervisor.log. */
static void rundir_keep(struct run_ctx *c)
{
	static const char *const parts[] = { "out", "logs/executor" };
	char err[512];
	size_t used = 0;

	if (c->ws.fd[WS_WORKSPACE] < 0)
		return;
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		unsigned skipped = 0;
		int dst = -1, rc = -1;

		if (mkdirat(c->dir_fd, parts[i], 0700) == 0 &&
		    (dst = openat(c->dir_fd, parts[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0)
			rc = ws_copy_tree(&c->ws, parts[i], dst, 32, &skipped, err, sizeof(err));
		else
			snprintf(err, sizeof(err), "%s", strerror(errno));
		if (dst >= 0)
			close(dst);
		if ((rc != 0 || skipped) && used < sizeof(c->kept_note))
			used += (size_t)snprintf(c->kept_note + used, sizeof(c->kept_note) - used,
						 "%skept %s/: %s, %u links, special files or deep entries skipped",
						 used ? "; " : "", parts[i], rc == 0 ? "copied" : err, skipped);
	}
}

/* The temporary run directory goes by fds (rmtree.h): only the supervisor
 * wrote it, and even so nothing in it is trusted to stay what it was. */
static void rundir_remove(struct run_ctx *c)
{
	char parent[PATH_MAX], err[512];
	char *slash;
	int pfd;

	snprintf(parent, sizeof(parent), "%s", c->dir);
	slash = strrchr(parent, '/');
	if (slash == NULL)
		return;
	*slash = '\0';
	pfd = open(parent[0] ? parent : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0 || rmtree_at(pfd, slash + 1, err, sizeof(err)) != 0)
		fprintf(stderr, "cordon run: cleanup of %s: %s\n", c->dir, pfd < 0 ? strerror(errno) : err);
	if (pfd >= 0)
		close(pfd);
}

/* logs/supervisor.log: what the supervisor decided and why, for an
 * operator reading a kept run directory (the result has the evidence). */
static void log_supervisor(struct run_ctx *c, int rc)
{
	int fd = openat(c->dir_fd, "logs/supervisor.log", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (f == NULL) {
		if (fd >= 0)
			close(fd);
		return;
	}
	fprintf(f, "execution %s app %s\n", c->id, c->pol.meta.app ? c->pol.meta.app : "?");
	fprintf(f, "caller %s, executor uid %u gid %u -> host %u/%u\n", c->rootless ? "rootless" : "root",
		c->pol.exec.uid, c->pol.exec.gid, (unsigned)c->host_uid, (unsigned)c->host_gid);
	if (c->cg_made)
		fprintf(f, "cgroups: memory %s, pids %s%s%s\n", cgroup_kind_name(c->cg.mem_kind),
			cgroup_kind_name(c->cg.pids_kind), c->cg.note[0] ? "; " : "", c->cg.note);
	if (c->stage != NULL)
		fprintf(f, "harness error at %s: %s\n", c->stage, c->msg);
	if (c->sweep_note[0])
		fprintf(f, "stale sweep: %s\n", c->sweep_note);
	if (c->kept_note[0])
		fprintf(f, "%s\n", c->kept_note);
	fprintf(f, "exit %d\n", rc);
	fclose(f);
}

int run_execute(const struct run_opts *o)
{
	struct run_ctx *c = calloc(1, sizeof(*c));
	struct run_outcome r;
	cJSON *res = cJSON_CreateObject();
	unsigned char rnd[32];
	char *text = NULL, err[512];
	int rc;

	memset(&r, 0, sizeof(r));
	if (c == NULL || res == NULL) {
		fprintf(stderr, "cordon run: out of memory\n");
		free(c);
		cJSON_Delete(res);
		return RUN_EXIT_HARNESS;
	}
	c->o = o;
	c->listen_fd = c->audit_fd = c->dir_fd = -1;
	c->leases[0] = c->leases[1] = (struct hostid_lease)HOSTID_LEASE_NONE;
	ws_init(&c->ws, 0, 0, 0);
	/* A child that died during setup closes the sync pipe under the
	 * supervisor's write; that is a harness error to report, not a
	 * reason for the supervisor to die silently.  The child restores the
	 * default before exec (sequence.c). */
	signal(SIGPIPE, SIG_IGN);
	policy_init(&c->pol);
	randombytes_buf(rnd, 16);
	sodium_bin2hex(c->id, sizeof(c->id), rnd, 16);
	randombytes_buf(rnd, 32);
	sodium_bin2hex(c->token, sizeof(c->token), rnd, 32);
	sodium_memzero(rnd, sizeof(rnd));
	c->rootless = geteuid() != 0;
	if (stage_policy(c) == 0 && stage_hostid(c) == 0) {
		ws_init(&c->ws, c->host_uid, c->host_gid, !c->rootless);
		if (stage_context(c) == 0 && stage_secrets(c) == 0 && stage_rundir(c) == 0 && stage_tools(c) == 0 &&
		    stage_plan(c) == 0 && stage_cgroup(c) == 0)
			stage_launch(c, &r);
	}
	rc = build_result(c, &r, res);
	text = cJSON_PrintUnformatted(res);
	if (c->dir_fd >= 0 && !c->temp_dir)
		rundir_keep(c);
	if (text != NULL) {
		printf("%s\n", text);
		fflush(stdout);
		if (c->dir_fd >= 0 && !c->temp_dir)
			rundir_write(c, "result.json", text, strlen(text));
	}
	if (c->dir_fd >= 0 && !c->temp_dir)
		log_supervisor(c, rc);
	/* Nothing survives a run: processes (the pid namespace died with its
	 * pid 1; the cgroup is emptied again to be sure), cgroups, the empty
	 * root mount point, and a temporary run directory. */
	if (c->cg_made && cgroup_destroy(&c->cg, err, sizeof(err)) != 0)
		fprintf(stderr, "cordon run: cleanup: %s\n", err);
	ws_close(&c->ws);
	if (c->temp_dir)
		rundir_remove(c);
	/* Last: every process and file of the executor's ids is gone now. */
	hostid_release(&c->leases[1]);
	hostid_release(&c->leases[0]);
	free(text);
	free(r.out.buf);
	free(r.err.buf);
	cJSON_Delete(res);
	bridge_free(c->bridge);
	if (c->listen_fd >= 0)
		close(c->listen_fd);
	if (c->audit_fd >= 0)
		close(c->audit_fd);
	secrets_free(c->secrets);
	free(c->code);
	free(c->stubs);
	for (unsigned i = 0; i < RUN_MAX_INPUTS; i++)
		free(c->inputs[i].data);
	if (c->dir_fd >= 0)
		close(c->dir_fd);
	cJSON_Delete(c->context);
	policy_free(&c->pol);
	blob_unmap(&c->map);
	free(c);
	return rc;
}
