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
#include <ftw.h>
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

#include "cordon/blob.h"
#include "cordon/keys.h"
#include "runtime/client/stubs.h"
#include "runtime/context.h"
#include "runtime/launch/cgroup.h"
#include "runtime/launch/launch.h"
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
	char work[PATH_MAX], out[PATH_MAX], logs[PATH_MAX], sock[PATH_MAX], root[PATH_MAX], lib[PATH_MAX];
	char token[65];
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

static int path_join(char *dst, const char *a, const char *b)
{
	return snprintf(dst, PATH_MAX, "%s/%s", a, b) < PATH_MAX ? 0 : -1;
}

static int write_whole(const char *path, const void *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, data, len) == (ssize_t)len;
	if (close(fd) != 0)
		ok = 0;
	return ok ? 0 : -1;
}

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

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/*
 * A supervisor killed with SIGKILL leaves its temporary run directory.
 * Their names carry the supervisor's pid (cordon-run.<pid>.XXXXXX), so each
 * run removes those of ours whose supervisor no longer exists.  Only
 * directories this user owns are touched, and nftw(FTW_PHYS) never follows
 * a link the sandbox may have planted.
 */
static void rundir_sweep_stale(const char *tmp)
{
	DIR *d = opendir(tmp);
	struct dirent *e;
	char p[PATH_MAX];

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		struct stat st;

		if (!stale_pid_name(e->d_name, "cordon-run.", '.') ||
		    snprintf(p, sizeof(p), "%s/%s", tmp, e->d_name) >= (int)sizeof(p) || lstat(p, &st) != 0 ||
		    !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
			continue;
		nftw(p, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	}
	closedir(d);
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
	const char *home = getenv("HOME"), *xdg = getenv("XDG_STATE_HOME");
	int w;

	if (secrets_load(c->o->secrets, &c->secrets, err, sizeof(err)) != 0) {
		HARNESS(c, "secrets", "%.900s", err);
		return -1;
	}
	/* The ledger must be the same for every run of a host (replay and
	 * daily budgets span runs), so the default is a fixed place. */
	if (c->o->state_dir != NULL)
		w = snprintf(c->state_dir, sizeof(c->state_dir), "%s", c->o->state_dir);
	else if (!c->rootless)
		w = snprintf(c->state_dir, sizeof(c->state_dir), "/var/lib/cordon");
	else if (xdg != NULL && xdg[0] == '/')
		w = snprintf(c->state_dir, sizeof(c->state_dir), "%s/cordon", xdg);
	else if (home != NULL && home[0] == '/')
		w = snprintf(c->state_dir, sizeof(c->state_dir), "%s/.local/state/cordon", home);
	else
		/* No place for it: a run that makes no budgeted or side-effect
		 * call does not need one, and such a call is refused then
		 * (bridge.c), so nothing runs without its ledger. */
		w = snprintf(c->state_dir, sizeof(c->state_dir), "%s", "");
	if (w >= (int)sizeof(c->state_dir)) {
		HARNESS(c, "ledger", "state directory path too long");
		return -1;
	}
	return 0;
}

/* --- 3. run directory ------------------------------------------------ */

static int mkdir_owned(struct run_ctx *c, const char *path, int executor)
{
	if (mkdir(path, 0755) != 0)
		return -1;
	/* As root the executor's host identity is uid/gid themselves; it
	 * must own what it may write.  Rootless it is the caller already. */
	if (executor && !c->rootless && chown(path, c->host_uid, c->host_gid) != 0)
		return -1;
	return 0;
}

static int stage_rundir(struct run_ctx *c)
{
	char p[PATH_MAX], q[PATH_MAX];
	size_t len;
	int big;
	char *code;

	if (c->o->run_dir != NULL) {
		if (mkdir(c->o->run_dir, 0755) != 0) {
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
		rundir_sweep_stale(tmp);
		snprintf(c->dir, sizeof(c->dir), "%.3900s/cordon-run.%d.XXXXXX", tmp, (int)getpid());
		if (mkdtemp(c->dir) == NULL) {
			HARNESS(c, "rundir", "mkdtemp: %s", strerror(errno));
			return -1;
		}
		c->temp_dir = 1;
	}
	chmod(c->dir, 0755);
	if (path_join(c->work, c->dir, "work") || path_join(c->out, c->dir, "out") ||
	    path_join(c->logs, c->dir, "logs/executor") || path_join(c->sock, c->dir, "sock") ||
	    path_join(c->root, c->dir, ".root") || path_join(p, c->dir, "logs") ||
	    mkdir_owned(c, c->work, 1) || mkdir_owned(c, c->out, 1) || mkdir_owned(c, p, 0) ||
	    mkdir_owned(c, c->logs, 1) || mkdir_owned(c, c->sock, 0) || mkdir(c->root, 0700) != 0 ||
	    path_join(c->lib, c->dir, "lib") || mkdir_owned(c, c->lib, 0)) {
		HARNESS(c, "rundir", "%.900s: %s", c->dir, strerror(errno));
		return -1;
	}
	code = read_small(c->o->code, c->pol.limits.max_code_bytes, &len, &big);
	if (code == NULL) {
		if (big)
			HARNESS(c, "code", "%s is over max_code_bytes (%llu)", c->o->code,
				(unsigned long long)c->pol.limits.max_code_bytes);
		else
			HARNESS(c, "code", "%s: %s", c->o->code, strerror(errno ? errno : EINVAL));
		return -1;
	}
	if (path_join(p, c->dir, "executed_programs") || path_join(q, p, c->id) || mkdir(p, 0755) != 0 ||
	    mkdir(q, 0755) != 0 ||
	    path_join(p, q, "user_code.py") || write_whole(p, code, len, 0644) != 0 ||
	    path_join(p, c->work, "user_code.py") || write_whole(p, code, len, 0644) != 0 ||
	    path_join(p, c->work, "main.py") || write_whole(p, MAIN_PY, sizeof(MAIN_PY) - 1, 0644) != 0 ||
	    path_join(p, c->dir, "logs/tool-calls.jsonl") ||
	    (c->audit_fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644)) < 0) {
		free(code);
		HARNESS(c, "rundir", "write %.900s: %s", p, strerror(errno));
		return -1;
	}
	free(code);
	for (unsigned i = 0; i < c->o->ninputs; i++) {
		const char *base = strrchr(c->o->inputs[i], '/');
		char *data;

		base = base ? base + 1 : c->o->inputs[i];
		if (*base == '\0' || strcmp(base, "main.py") == 0 || strcmp(base, "user_code.py") == 0) {
			HARNESS(c, "inputs", "%s: input name is empty or reserved", c->o->inputs[i]);
			return -1;
		}
		data = read_small(c->o->inputs[i], c->pol.limits.max_file_bytes, &len, &big);
		if (data == NULL || path_join(p, c->work, base) || write_whole(p, data, len, 0644) != 0) {
			free(data);
			HARNESS(c, "inputs", "%s: %s", c->o->inputs[i],
				big ? "over max_file_bytes" : errno == EEXIST ? "given twice" : strerror(errno));
			return -1;
		}
		free(data);
		if (!c->rootless && chown(p, c->host_uid, c->host_gid) != 0) {
			HARNESS(c, "inputs", "chown %.900s: %s", p, strerror(errno));
			return -1;
		}
	}
	return 0;
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

	snprintf(lp->newroot, sizeof(lp->newroot), "%s", c->root);
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
	{
		struct launch_mount *w = plan_mount(lp, LM_BIND_RW, c->work, "/workspace/work");
		struct launch_mount *o = plan_mount(lp, LM_BIND_RW, c->out, "/workspace/out");
		struct launch_mount *l = plan_mount(lp, LM_BIND_RW, c->logs, "/workspace/logs/executor");

		if (w == NULL || o == NULL || l == NULL || plan_mount(lp, LM_BIND_RO, c->sock, "/supervisor-socket") == NULL ||
		    plan_mount(lp, LM_BIND_RO, c->lib, "/cordon") == NULL)
			goto too_many;
		w->landlock_rw = o->landlock_rw = l->landlock_rw = 1;
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
	char p[PATH_MAX], err[512], *stubs = NULL;
	size_t len = 0;
	int rc = -1;

	if (sel == NULL) {
		HARNESS(c, "tools", "out of memory");
		return -1;
	}
	n = tools_selected(c, sel);
	stubs = stubs_python(&c->pol, sel, n, &len);
	if (stubs == NULL || path_join(p, c->lib, "cordon_tools.py") ||
	    write_whole(p, stubs_client_py, stubs_client_py_len, 0444) != 0 || path_join(p, c->lib, "tools.py") ||
	    write_whole(p, stubs, len, 0444) != 0) {
		HARNESS(c, "tools", "client modules: %s", stubs ? strerror(errno) : "out of memory");
		goto out;
	}
	if (path_join(p, c->sock, "tools.sock") != 0 ||
	    bridge_listen(p, !c->rootless, c->host_uid, c->host_gid, &c->listen_fd, err, sizeof(err)) != 0) {
		HARNESS(c, "bridge", "%.900s", err);
		goto out;
	}
	rc = 0;
out:
	free(stubs);
	free(sel);
	return rc;
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

static int stage_launch(struct run_ctx *c, struct run_outcome *r)
{
	int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, perr[2] = { -1, -1 }, psync[2] = { -1, -1 };
	int devnull = -1, sigfd = -1, rc = -1;
	sigset_t mask, old;
	pid_t pid;
	char buf[1024];
	const char *roots[3] = { c->work, c->out, c->logs };
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
	 * exec (sequence.c step 8). */
	if (sigprocmask(SIG_BLOCK, &mask, &old) != 0 ||
	    (sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0 ||
	    pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC) || pipe2(perr, O_CLOEXEC) || pipe2(psync, O_CLOEXEC) ||
	    (devnull = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
		HARNESS(c, "launch", "pipes: %s", strerror(errno));
		goto out;
	}
	c->lp.err_fd = perr[1];
	c->lp.sync_fd = psync[0];
	c->lp.stdin_fd = devnull;
	c->lp.stdout_fd = po[1];
	c->lp.stderr_fd = pe[1];
	c->lp.parent_fds[0] = po[0];
	c->lp.parent_fds[1] = pe[0];
	c->lp.parent_fds[2] = perr[0];
	c->lp.parent_fds[3] = psync[1];
	/* A raw clone: fork semantics, with every namespace fresh at once. */
	pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
					   CLONE_NEWUTS | CLONE_NEWCGROUP | SIGCHLD,
			     NULL, NULL, NULL, NULL);
	if (pid < 0) {
		HARNESS(c, "namespaces", "clone: %s", strerror(errno));
		goto out;
	}
	if (pid == 0)
		launch_child(&c->lp);
	close(po[1]);
	close(pe[1]);
	close(perr[1]);
	close(psync[0]);
	po[1] = pe[1] = perr[1] = psync[0] = -1;
	if (identity_write_maps(pid, &c->lp, c->host_uid, c->host_gid, buf, sizeof(buf)) != 0) {
		HARNESS(c, "identity", "%s", buf);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		goto out;
	}
	if (write(psync[1], "m", 1) != 1 || cgroup_attach(&c->cg, pid, buf, sizeof(buf)) != 0) {
		HARNESS(c, "cgroup", "%s", buf);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
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
					 .deadline_ms = monotonic_ms() + c->pol.limits.timeout_ms + 1000 };

		/* Before the program may run: its first call must find the
		 * bridge serving.  The threads start after the clone, so the
		 * child never inherits a lock held by one of them. */
		if (bridge_start(&bc, &c->listen_fd, &c->bridge, buf, sizeof(buf)) != 0) {
			HARNESS(c, "bridge", "%s", buf);
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			goto out;
		}
	}
	if (write(psync[1], "c", 1) != 1) {
		/* The child died in setup; its own report says where. */
		HARNESS(c, "sync", "%s", strerror(errno));
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		child_report(c, perr[0]);
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
				      .ws_delta_max = c->pol.limits.ws_delta_bytes,
				      .ws_total_max = c->pol.limits.ws_max_bytes,
				      .roots = roots,
				      .nroots = 3,
				      .sigfd = sigfd };
	if (supervise_run(&cfg, &r->out, &r->err, &r->so, buf, sizeof(buf)) != 0) {
		HARNESS(c, "supervise", "%s", buf);
		goto out;
	}
	/* The executor is gone; a tool still running is killed now. */
	bridge_stop(c->bridge);
	if (child_report(c, perr[0]))
		goto out;
	r->started = 1;
	if (c->cg_made && cgroup_usage(&c->cg, &r->usage, buf, sizeof(buf)) == 0)
		r->have_usage = 1;
	rc = 0;
out:
	/* Whatever ended the launch, no call may still be served (or append
	 * to the result's list) once the result is built. */
	bridge_stop(c->bridge);
	for (int *fd = (int[]){ po[0], po[1], pe[0], pe[1], perr[0], perr[1], psync[0], psync[1], devnull, sigfd, -2 };
	     *fd != -2; fd++)
		if (*fd >= 0)
			close(*fd);
	if (r->out.fd >= 0)
		close(r->out.fd);
	if (r->err.fd >= 0)
		close(r->err.fd);
	r->out.fd = r->err.fd = -1;
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
	snprintf(buf, sizeof(buf), "uid %u gid %u, %s%s", c->pol.exec.uid, c->pol.exec.gid,
		 c->rootless ? "supplementary groups of the caller unmapped" : "no supplementary groups",
		 c->rootless ? " (rootless)" : "");
	cJSON_AddStringToObject(e, "identity", buf);
	cJSON_AddStringToObject(e, "memory", c->cg.mem_kind != CG_NONE ? cgroup_kind_name(c->cg.mem_kind) : "rlimit-as");
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
	int out_dir = open(c->out, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
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
		err = error_json("workspace_limit", "the workspace grew past max_exec_workspace_delta_bytes or "
						    "max_exec_workspace_bytes", NULL);
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
	/* Output is bytes; JSON wants text: invalid UTF-8 is kept as cJSON
	 * writes it, and readers must expect replacement. */
	cJSON_AddStringToObject(res, "stdout", r->out.buf);
	cJSON_AddStringToObject(res, "stderr", r->err.buf);
	cJSON *tr = cJSON_AddObjectToObject(res, "truncated");
	cJSON_AddBoolToObject(tr, "stdout", r->out.truncated);
	cJSON_AddBoolToObject(tr, "stderr", r->err.truncated);
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
	cJSON *u = cJSON_AddObjectToObject(res, "usage");
	cJSON_AddNumberToObject(u, "cpuMs", (double)(r->so.ru.ru_utime.tv_sec * 1000 + r->so.ru.ru_utime.tv_usec / 1000 +
						     r->so.ru.ru_stime.tv_sec * 1000 + r->so.ru.ru_stime.tv_usec / 1000));
	cJSON_AddNumberToObject(u, "maxRssKiB", (double)r->so.ru.ru_maxrss);
	if (r->have_usage && r->usage.mem_peak)
		cJSON_AddNumberToObject(u, "memoryPeakBytes", (double)r->usage.mem_peak);
	cJSON_AddNumberToObject(u, "workspaceDeltaBytes",
				(double)(r->so.ws_peak > r->so.ws_baseline ? r->so.ws_peak - r->so.ws_baseline : 0));
	cJSON_AddItemToObject(res, "enforcement", enforcement_json(c));
	if (err != NULL)
		cJSON_AddItemToObject(res, "error", err);
	else
		cJSON_AddNullToObject(res, "error");
	outputs_report_free(&rep);
	return exit_code;
}

/* logs/supervisor.log: what the supervisor decided and why, for an
 * operator reading a kept run directory (the result has the evidence). */
static void log_supervisor(struct run_ctx *c, int rc)
{
	char p[PATH_MAX];
	FILE *f;

	if (path_join(p, c->dir, "logs/supervisor.log") != 0)
		return;
	f = fopen(p, "wxe");
	if (f == NULL)
		return;
	fprintf(f, "execution %s app %s\n", c->id, c->pol.meta.app ? c->pol.meta.app : "?");
	fprintf(f, "caller %s, executor uid %u gid %u -> host %u/%u\n", c->rootless ? "rootless" : "root",
		c->pol.exec.uid, c->pol.exec.gid, (unsigned)c->host_uid, (unsigned)c->host_gid);
	if (c->cg_made)
		fprintf(f, "cgroups: memory %s, pids %s%s%s\n", cgroup_kind_name(c->cg.mem_kind),
			cgroup_kind_name(c->cg.pids_kind), c->cg.note[0] ? "; " : "", c->cg.note);
	if (c->stage != NULL)
		fprintf(f, "harness error at %s: %s\n", c->stage, c->msg);
	fprintf(f, "exit %d\n", rc);
	fclose(f);
}

int run_execute(const struct run_opts *o)
{
	struct run_ctx *c = calloc(1, sizeof(*c));
	struct run_outcome r;
	cJSON *res = cJSON_CreateObject();
	unsigned char rnd[32];
	char *text = NULL, p[PATH_MAX], err[512];
	int rc;

	memset(&r, 0, sizeof(r));
	if (c == NULL || res == NULL) {
		fprintf(stderr, "cordon run: out of memory\n");
		free(c);
		cJSON_Delete(res);
		return RUN_EXIT_HARNESS;
	}
	c->o = o;
	c->listen_fd = c->audit_fd = -1;
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
	if (stage_policy(c) == 0) {
		c->host_uid = c->rootless ? getuid() : c->pol.exec.uid;
		c->host_gid = c->rootless ? getgid() : c->pol.exec.gid;
		if (stage_context(c) == 0 && stage_secrets(c) == 0 && stage_rundir(c) == 0 && stage_plan(c) == 0 &&
		    stage_tools(c) == 0 && stage_cgroup(c) == 0)
			stage_launch(c, &r);
	}
	rc = build_result(c, &r, res);
	text = cJSON_PrintUnformatted(res);
	if (text != NULL) {
		printf("%s\n", text);
		fflush(stdout);
		if (c->dir[0] && !c->temp_dir && path_join(p, c->dir, "result.json") == 0)
			write_whole(p, text, strlen(text), 0644);
	}
	if (c->dir[0] && !c->temp_dir)
		log_supervisor(c, rc);
	/* Nothing survives a run: processes (the pid namespace died with its
	 * pid 1; the cgroup is emptied again to be sure), cgroups, the empty
	 * root mount point, and a temporary run directory. */
	if (c->cg_made && cgroup_destroy(&c->cg, err, sizeof(err)) != 0)
		fprintf(stderr, "cordon run: cleanup: %s\n", err);
	if (c->root[0])
		rmdir(c->root);
	if (c->temp_dir)
		nftw(c->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
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
	cJSON_Delete(c->context);
	policy_free(&c->pol);
	blob_unmap(&c->map);
	free(c);
	return rc;
}
