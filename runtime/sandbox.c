/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sandbox.c - the sandbox lifecycle (sandbox.h): prepare, start, wait,
 * reduce, destroy.  `cordon run` walks it once; `cordon serve` prepares
 * ahead and starts on a request.
 *
 * Three lanes stay apart in the result: a harness failure is status
 * "error" with error.details.where = exec.harness.<stage>; a program that
 * fails is "failed" with its exit code; a broken output contract is
 * "failed" with error.code "output_contract".
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "cordon/paths.h"
#include "common/utf8.h"
#include "runtime/client/stubs.h"
#include "runtime/hostid.h"
#include "runtime/launch/launch.h"
#include "runtime/ledger/ledger.h"
#include "runtime/outcome.h"
#include "runtime/rmtree.h"
#include "runtime/sandbox.h"
#include "runtime/supervise/bridge.h"
#include "runtime/supervise/cell.h"
#include "runtime/supervise/displays.h"
#include "runtime/supervise/export.h"
#include "runtime/supervise/outputs.h"
#include "runtime/supervise/secrets.h"
#include "runtime/supervise/supervise.h"
#include "runtime/workspace.h"

/* The loader the interpreter starts (/workspace/work/main.py), in three
 * parts around the generated preload lines.  It imports what the policy
 * preloads without binding a name in __main__ (the program's namespace is
 * its own), says 'r' on the start socket (fd 3), waits for 'g', and runs
 * the verbatim program as __main__, so tracebacks, pickling and
 * multiprocessing see it as the script itself, then ends it through
 * cordon_exit (below).  On 's' instead it runs a code-interpreter
 * session's cells (cordon_session, runtime/supervise/cell.h) until the
 * channel closes.  No other imports: runpy would cost ~13 ms of start-up,
 * and cordon_session (~0.3 ms to compile: /cordon is read-only, so no
 * .pyc) is imported only once a session starts.  The workspace goes on
 * sys.path after the client modules are imported, so that no input file
 * can stand in for one of them. */
static const char LOADER_HEAD[] =
	"# cordon executor loader: imports the policy's preloads, waits for\n"
	"# the program on fd 3, then runs user_code.py as __main__.\n"
	"import posix as _cordon_posix\n";
static const char LOADER_TAIL[] =
	"import sys\n"
	"sys.path.insert(0, '" SANDBOX_CLIENT "')\n"
	"import cordon_exit as _cordon_exit\n"
	"sys.argv[:] = ['user_code.py']\n"
	"_cordon_posix.write(3, b'r')\n"
	"_cordon_go = _cordon_posix.read(3, 1)\n"
	"if _cordon_go == b's':\n"
	"    import cordon_session as _cordon_session\n"
	"    sys.path.insert(0, '" SANDBOX_WORK "')\n"
	"    _cordon_exit.watch(sys)\n"
	"    _cordon_session.loop(globals(), _cordon_posix, _cordon_exit)\n"
	"if _cordon_go != b'g':\n"
	"    _cordon_posix._exit(125)\n"
	"del _cordon_go\n"
	"sys.path.insert(0, '" SANDBOX_WORK "')\n"
	"_cordon_posix.close(3)\n"
	"__file__ = '" SANDBOX_PROGRAM "'\n"
	"with open(__file__, 'rb') as _f:\n"
	"    _code = compile(_f.read(), __file__, 'exec')\n"
	"del _f\n"
	"_cordon_exit.watch(sys)\n"
	"try:\n"
	"    exec(_code)\n"
	"except SystemExit as _e:\n"
	"    _cordon_rc = _e.code\n"
	"except KeyboardInterrupt:\n"
	"    raise\n"
	"except BaseException:\n"
	"    sys.excepthook(*sys.exc_info())\n"
	"    _cordon_rc = 1\n"
	"else:\n"
	"    _cordon_rc = None\n"
	"if 'matplotlib.pyplot' in sys.modules:\n"
	"    try:\n"
	"        import cordon_display\n"
	"        cordon_display._at_end()\n"
	"    except Exception:\n"
	"        sys.excepthook(*sys.exc_info())\n"
	"_cordon_exit.end(_cordon_rc, _cordon_posix)\n";

/* The end of the program without the interpreter's finalization (module
 * teardown is most of a short program's exit: ~2 ms bare, ~13 ms with
 * numpy), keeping what a program can rely on at exit: non-daemon threads
 * joined, atexit handlers run, every open file's buffer written, the std
 * streams flushed, then the exit status Python would give.  Open files are
 * found by a scan of the collector's objects (~2 ms with numpy loaded),
 * made only when the program opened a file for anything but reading (an
 * audit hook sees every open, os.fdopen's included).  What is not kept:
 * __del__ of objects still alive at exit, which CPython does not
 * promise either.  /cordon/cordon_exit.py. */
static const char EXIT_PY[] =
	"import atexit, gc, io, sys\n"
	"_opened = []\n"
	"def _hook(ev, args):\n"
	"    if ev == 'open' and not _opened:\n"
	"        m = args[1]\n"
	"        if not isinstance(m, str) or m.strip('rbt'):\n"
	"            _opened.append(1)\n"
	"def watch(s):\n"
	"    s.addaudithook(_hook)\n"
	"def _code(c):\n"
	"    if c is None:\n"
	"        return 0\n"
	"    if isinstance(c, int):\n"
	"        return c & 0xff\n"
	"    try:\n"
	"        print(c, file=sys.stderr)\n"
	"    except Exception:\n"
	"        pass\n"
	"    return 1\n"
	"def end(c, posix):\n"
	"    rc = _code(c)\n"
	"    t = sys.modules.get('threading')\n"
	"    if t is not None:\n"
	"        try:\n"
	"            t._shutdown()\n"
	"        except BaseException:\n"
	"            pass\n"
	"    try:\n"
	"        atexit._run_exitfuncs()\n"
	"    except SystemExit as e:\n"
	"        rc = _code(e.code)\n"
	"    kinds = (io.TextIOWrapper, io.BufferedWriter, io.BufferedRandom)\n"
	"    for f in gc.get_objects() if _opened else ():\n"
	"        if type(f) in kinds and f not in (sys.stdout, sys.stderr):\n"
	"            try:\n"
	"                f.flush()\n"
	"            except Exception:\n"
	"                pass\n"
	"    for f in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):\n"
	"        try:\n"
	"            f.flush()\n"
	"        except Exception:\n"
	"            rc = rc or 120\n"
	"    posix._exit(rc)\n";

/* The workspace's tmpfs, before the request: wide (a tmpfs without a size
 * cannot be given one later), narrowed by sandbox_start(). */
#define WS_PAGE 4096ull
#define WS_ROUND(x) (((uint64_t)(x) + WS_PAGE - 1) / WS_PAGE * WS_PAGE)
#define WS_PREP_BYTES (1ull << 40)
#define WS_PREP_INODES (1ull << 20)

enum sb_state { SB_NEW, SB_PREPARED, SB_STARTED, SB_WAITED };

/* A session's last cell (sandbox_cell()). */
struct sandbox_cell_state {
	unsigned index;
	enum cell_end end;
	unsigned calls_from;     /* toolCalls entries listed before the cell */
	uint64_t cpu_base_ms;    /* at the session's start: the interpreter's start and preloads are not its */
	uint64_t cpu_ms, cpu_total_ms;
	int cpu_cgroup;          /* the CPU is the cgroup's, else /proc's */
};

struct sandbox {
	const struct sandbox_host *h;
	const struct cpol_policy *pol;
	char *agent;
	char *run_dir_arg;
	enum sb_state state;
	char id[33];
	char token[65];
	/* The kept run directory: 0700, the supervisor's alone; -1 none. */
	char dir[PATH_MAX];
	int dir_fd;
	int audit_fd;            /* the audit: the kept logs/tool-calls.jsonl, else a memfd */
	int log_fd;              /* the kept logs/supervisor.log, made at prepare; -1 none */
	int result_fd;           /* the kept result.json.tmp, renamed result.json at reduce; -1 none */
	struct hostid_lease leases[2]; /* as root: the executor's, its tools' */
	uid_t host_uid;
	gid_t host_gid;
	struct ws ws;
	struct cg_run cg;
	int cg_made;
	struct launch_plan lp;
	char envbuf[LAUNCH_MAX_ENV][512];
	char *loader;
	size_t loader_len;
	size_t stubs_max;        /* the agent's whole client module: /cordon's size */
	int listen_fd;
	struct bridge *bridge;
	cJSON *context;
	pid_t pid;
	int pidfd;
	int fd_errpipe;          /* the child's setup report; EOF at exec */
	int fd_sync;             /* the child's sync pipe, held until reaped */
	int fd_start;            /* the loader's start socket */
	int fd_init;             /* the init channel (launch.h): deadline out, the program's end in */
	int init_fired;          /* init's deadline ended the run, not the supervisor */
	struct capture out, err;
	struct sandbox_events ev;  /* all NULL: not followed */
	pthread_mutex_t cap_lock;  /* out and err, once ev is set */
	int cap_lock_ok;
	uint64_t ws_bytes_max, ws_inodes_max;
	struct supervise_out so;
	int exec_ok;             /* the loader answered: setup and exec succeeded */
	int session;             /* started as a session: cells, not one program */
	struct sandbox_cell_state cell; /* the session's last cell */
	struct cg_usage usage;
	int have_usage;
	char cancel_why[128];
	uint64_t t0, t_prepared, t_started, t_waited;
	/* the harness lane */
	int failed;
	char stage[32];
	char msg[1024];
	char kept_note[600];
	/* A record that could not be written after the program ran (the
	 * audit, the ledger, the run directory's files): the result keeps its
	 * evidence and says status error (outcome.c).  The first is reported. */
	int faulted;
	char fault_stage[32];
	char fault_msg[1024];
};

static void sb_fail(struct sandbox *sb, const char *stage, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void sb_fail(struct sandbox *sb, const char *stage, const char *fmt, ...)
{
	va_list ap;

	if (sb->failed)
		return; /* the first cause is the one to report */
	sb->failed = 1;
	snprintf(sb->stage, sizeof(sb->stage), "%s", stage);
	va_start(ap, fmt);
	vsnprintf(sb->msg, sizeof(sb->msg), fmt, ap);
	va_end(ap);
}

static void sb_fault(struct sandbox *sb, const char *stage, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void sb_fault(struct sandbox *sb, const char *stage, const char *fmt, ...)
{
	va_list ap;

	if (sb->faulted)
		return;
	sb->faulted = 1;
	snprintf(sb->fault_stage, sizeof(sb->fault_stage), "%s", stage);
	va_start(ap, fmt);
	vsnprintf(sb->fault_msg, sizeof(sb->fault_msg), fmt, ap);
	va_end(ap);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- host ---------------------------------------------------------------- */

/* h->state_dir <- where the ledger is: --ledger's URL as given (no
 * directory is derived from it, and a URL is never a path), else the state
 * directory. */
static int sandbox_ledger_place(const struct sandbox_host_opts *o, struct sandbox_host *h, char *err, size_t n)
{
	if (o->ledger == NULL)
		return ledger_state_dir(o->state_dir, h->rootless, h->state_dir, sizeof(h->state_dir), err, n);
	if (!ledger_is_url(o->ledger) || strlen(o->ledger) >= sizeof(h->state_dir)) {
		snprintf(err, n, "ledger: --ledger takes a postgresql:// or postgres:// URL of at most %zu bytes",
			 sizeof(h->state_dir) - 1);
		return -1;
	}
	memcpy(h->state_dir, o->ledger, strlen(o->ledger) + 1);
	return 0;
}

int sandbox_host_probe(struct sandbox_host *h, const struct sandbox_host_opts *o, struct sandbox_err *e)
{
	char err[512];

	memset(h, 0, sizeof(*h));
	memset(e, 0, sizeof(*e));
	h->rootless = geteuid() != 0;
	h->ids = (struct hostid_range){ HOSTID_RANGE_DEFAULT_FIRST, HOSTID_RANGE_DEFAULT_COUNT };
	if (cgroup_detect(&h->cgh, NULL, NULL, err, sizeof(err)) != 0)
		memset(&h->cgh, 0, sizeof(h->cgh)); /* nothing usable: rlimits instead */
	h->landlock_abi = landlock_abi();
	if (o->host_ids != NULL && hostid_range_parse(o->host_ids, &h->ids, err, sizeof(err)) != 0) {
		snprintf(e->stage, sizeof(e->stage), "identity");
		snprintf(e->msg, sizeof(e->msg), "%.900s", err);
		return -1;
	}
	if (secrets_load(o->secrets, &h->secrets, err, sizeof(err)) != 0) {
		snprintf(e->stage, sizeof(e->stage), "secrets");
		snprintf(e->msg, sizeof(e->msg), "%.900s", err);
		return -1;
	}
	if (sandbox_ledger_place(o, h, err, sizeof(err)) != 0 ||
	    ((o->share_ledger || o->ledger != NULL) && h->state_dir[0] != '\0' &&
	     (ledger_default_parents(h->state_dir, h->rootless, err, sizeof(err)) != 0 ||
	      ledger_open(h->state_dir, &h->ledger, err, sizeof(err)) != 0))) {
		h->ledger = NULL;
		sandbox_host_free(h);
		snprintf(e->stage, sizeof(e->stage), "ledger");
		snprintf(e->msg, sizeof(e->msg), "%.900s", err);
		return -1;
	}
	return 0;
}

void sandbox_host_free(struct sandbox_host *h)
{
	secrets_free(h->secrets);
	h->secrets = NULL;
	ledger_close(h->ledger);
	h->ledger = NULL;
}

/* ---- new ----------------------------------------------------------------- */

struct sandbox *sandbox_new(const struct sandbox_host *h, const struct sandbox_spec *s)
{
	struct sandbox *sb = calloc(1, sizeof(*sb));
	unsigned char rnd[32];

	if (sb == NULL)
		return NULL;
	sb->h = h;
	sb->pol = s->pol;
	sb->dir_fd = sb->audit_fd = sb->listen_fd = sb->log_fd = sb->result_fd = -1;
	sb->pidfd = sb->fd_errpipe = sb->fd_sync = sb->fd_start = sb->fd_init = -1;
	sb->out.fd = sb->err.fd = -1;
	sb->lp.cg_tasks[0] = sb->lp.cg_tasks[1] = sb->lp.cg_tasks[2] = -1;
	sb->pid = -1;
	sb->leases[0] = sb->leases[1] = (struct hostid_lease)HOSTID_LEASE_NONE;
	ws_init(&sb->ws, 0, 0, 0);
	sb->t0 = now_ms();
	randombytes_buf(rnd, 16);
	sodium_bin2hex(sb->id, sizeof(sb->id), rnd, 16);
	randombytes_buf(rnd, 32);
	sodium_bin2hex(sb->token, sizeof(sb->token), rnd, 32);
	sodium_memzero(rnd, sizeof(rnd));
	if ((s->agent != NULL && (sb->agent = strdup(s->agent)) == NULL) ||
	    (s->run_dir != NULL && (sb->run_dir_arg = strdup(s->run_dir)) == NULL)) {
		free(sb->agent);
		free(sb);
		return NULL;
	}
	if (sb->pol == NULL)
		sb_fail(sb, "policy", "no policy");
	return sb;
}

void sandbox_fail(struct sandbox *sb, const struct sandbox_err *e)
{
	sb_fail(sb, e->stage[0] ? e->stage : "internal", "%s", e->msg);
}

const char *sandbox_id(const struct sandbox *sb)
{
	return sb->id;
}

int sandbox_pidfd(const struct sandbox *sb)
{
	return sb->pidfd;
}

int sandbox_failed(const struct sandbox *sb, struct sandbox_err *e)
{
	if (sb->failed && e != NULL) {
		snprintf(e->stage, sizeof(e->stage), "%s", sb->stage);
		snprintf(e->msg, sizeof(e->msg), "%s", sb->msg);
	}
	return sb->failed;
}

void sandbox_times(const struct sandbox *sb, struct sandbox_times *t)
{
	t->prepare_ms = sb->t_prepared ? sb->t_prepared - sb->t0 : 0;
	t->start_ms = sb->t_started && sb->t_prepared ? sb->t_started - sb->t_prepared : 0;
	t->run_ms = sb->t_waited && sb->t_started ? sb->t_waited - sb->t_started : 0;
}

void sandbox_cancel_reason(struct sandbox *sb, const char *why)
{
	snprintf(sb->cancel_why, sizeof(sb->cancel_why), "%s", why);
}

/* ---- prepare: 1. policy checks and host identity ------------------------- */

static int prep_policy(struct sandbox *sb)
{
	const struct cpol_policy *p = sb->pol;

	if (p->limits.mode != CPOL_MODE_ISOLATED) {
		sb_fail(sb, "policy", "mode '%s' is not supported by cordon run (only isolated)",
			policy_mode_name(p->limits.mode));
		return -1;
	}
	if (sb->agent != NULL && policy_find_agent(p, sb->agent) == NULL) {
		sb_fail(sb, "context", "agent '%s' is not declared by the policy", sb->agent);
		return -1;
	}
	return 0;
}

/* As root the executor's inside ids map to host ids leased for this
 * sandbox alone (hostid.h): never an account's, never another sandbox's,
 * so no local user can signal it, reach its socket or read its files, and
 * no sandbox can reach another's.  Rootless the caller is the only id the
 * kernel lets us map. */
static int prep_hostid(struct sandbox *sb)
{
	char err[512];

	if (sb->h->rootless) {
		sb->host_uid = getuid();
		sb->host_gid = getgid();
	} else {
		if (mkdir("/run/cordon", 0755) != 0 && errno != EEXIST) {
			sb_fail(sb, "identity", "host ids: mkdir /run/cordon: %s", strerror(errno));
			return -1;
		}
		/* Two: the executor's, and its tools' (a tool shares nothing
		 * with the sandbox it serves, not even a uid that could signal
		 * it). */
		if (hostid_acquire_many(&sb->h->ids, NULL, HOSTID_LOCK_DIR_DEFAULT, sb->leases, 2, err, sizeof(err)) !=
		    0) {
			sb_fail(sb, "identity", "host ids: %.900s", err);
			return -1;
		}
		sb->host_uid = sb->leases[0].uid;
		sb->host_gid = sb->leases[0].gid;
	}
	ws_init(&sb->ws, sb->host_uid, sb->host_gid, !sb->h->rootless);
	return 0;
}

/* ---- prepare: 2. the kept run directory and the audit --------------------- */

/* Room taken at prepare for the records written later (FALLOC_FL_KEEP_SIZE:
 * the files stay empty, rundir_trim() gives back what was not used).  A
 * disk already full then fails the run before its program runs, instead
 * of losing the audit silently; the result and the log of an ordinary run
 * fit what was taken, so their final writes do not depend on the disk
 * having room at the end.  Beyond it every write is still checked. */
#define RUNDIR_RESERVE_AUDIT (64 << 10)
#define RUNDIR_RESERVE_LOG (4 << 10)
#define RUNDIR_RESERVE_RESULT (64 << 10)

/* 0, or -1 with errno: a file system that cannot reserve is not an error. */
static int rundir_reserve(int fd, off_t bytes)
{
	if (fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, bytes) == 0 || errno == EOPNOTSUPP || errno == ENOSYS)
		return 0;
	return -1;
}

/* Gives back the room rundir_reserve() took and was not used. */
static void rundir_trim(int fd)
{
	struct stat st;

	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ftruncate(fd, st.st_size) != 0) {
		/* the reserved blocks stay with the file: space, not a record, is lost */
	}
}

/* data as the whole content of fd (emptied first when it held something):
 * 0, or an errno.  A write cut short is a failure: the rest does not fit. */
static int rundir_put(int fd, const char *data, size_t len)
{
	struct stat st;
	size_t put = 0;

	if (fstat(fd, &st) != 0)
		return errno;
	/* Only a file that holds something is emptied: truncating an empty
	 * one would give back its reservation before the write. */
	if (st.st_size > 0 && ftruncate(fd, 0) != 0)
		return errno;
	while (put < len) {
		ssize_t w = pwrite(fd, data + put, len - put, (off_t)put);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? errno : ENOSPC;
		put += (size_t)w;
	}
	return 0;
}

/* A kept run directory holds only what the supervisor writes (the executed
 * program's copy, logs, the audit, the result, copies of the outputs): the
 * sandbox's files live in its own tmpfs (workspace.h).  It is 0700 and
 * every file 0600, so no other local user reads a run.  Without one
 * nothing touches a disk: the audit goes to a memfd, whose lines the
 * result carries anyway (toolCalls). */
static int prep_rundir(struct sandbox *sb)
{
	const char *step = "mkdir";

	if (sb->run_dir_arg == NULL) {
		sb->audit_fd = memfd_create("cordon-audit", MFD_CLOEXEC);
		if (sb->audit_fd < 0) {
			sb_fail(sb, "rundir", "memfd for the audit: %s", strerror(errno));
			return -1;
		}
		return 0;
	}
	if (mkdir(sb->run_dir_arg, 0700) != 0) {
		sb_fail(sb, "rundir", "%s: %s (the run directory must not exist yet)", sb->run_dir_arg,
			strerror(errno));
		return -1;
	}
	step = "open";
	if (realpath(sb->run_dir_arg, sb->dir) == NULL ||
	    (sb->dir_fd = open(sb->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		goto fail;
	step = "chmod";
	if (fchmod(sb->dir_fd, 0700) != 0)
		goto fail;
	step = "mkdir logs";
	if (mkdirat(sb->dir_fd, "logs", 0700) != 0)
		goto fail;
	step = "mkdir executed_programs";
	if (mkdirat(sb->dir_fd, "executed_programs", 0700) != 0)
		goto fail;
	step = "create logs/tool-calls.jsonl";
	sb->audit_fd = openat(sb->dir_fd, "logs/tool-calls.jsonl",
			      O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (sb->audit_fd < 0 || rundir_reserve(sb->audit_fd, RUNDIR_RESERVE_AUDIT) != 0)
		goto fail;
	step = "create logs/supervisor.log";
	sb->log_fd = openat(sb->dir_fd, "logs/supervisor.log", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
			    0600);
	if (sb->log_fd < 0 || rundir_reserve(sb->log_fd, RUNDIR_RESERVE_LOG) != 0)
		goto fail;
	/* Renamed result.json once whole: a reader never sees half a result. */
	step = "create result.json.tmp";
	sb->result_fd = openat(sb->dir_fd, "result.json.tmp", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
			       0600);
	if (sb->result_fd < 0 || rundir_reserve(sb->result_fd, RUNDIR_RESERVE_RESULT) != 0)
		goto fail;
	return 0;
fail:
	sb_fail(sb, "rundir", "%s: %s: %s", sb->run_dir_arg, step, strerror(errno));
	return -1;
}

/* A new file rel of the run directory holding data: 0, or an errno. */
static int rundir_write(struct sandbox *sb, const char *rel, const void *data, size_t len)
{
	int fd = openat(sb->dir_fd, rel, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600), e;

	if (fd < 0)
		return errno;
	e = rundir_put(fd, data, len);
	if (close(fd) != 0 && e == 0)
		e = errno;
	return e;
}

/* ---- prepare: 3. the plan ------------------------------------------------- */

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

static int plan_env(struct sandbox *sb, const char *key, const char *val)
{
	struct launch_plan *lp = &sb->lp;
	size_t klen = strlen(key);

	/* The runtime's own variables win over the policy's: they are how the
	 * sandbox is wired (paths, socket, token), not preferences. */
	for (unsigned i = 0; i < lp->nenv; i++)
		if (strncmp(lp->envp[i], key, klen) == 0 && lp->envp[i][klen] == '=') {
			snprintf(sb->envbuf[i], sizeof(sb->envbuf[i]), "%s=%s", key, val);
			return 0;
		}
	if (lp->nenv == LAUNCH_MAX_ENV ||
	    snprintf(sb->envbuf[lp->nenv], sizeof(sb->envbuf[0]), "%s=%s", key, val) >= (int)sizeof(sb->envbuf[0]))
		return -1;
	lp->envp[lp->nenv] = sb->envbuf[lp->nenv];
	lp->nenv++;
	lp->envp[lp->nenv] = NULL;
	return 0;
}

/* Debian's copy of matplotlib's configuration (docs/descriptor.md). */
#define PLAN_MATPLOTLIBRC "/usr/share/matplotlib/mpl-data/matplotlibrc"

/* key=val unless the environment (the policy's, so far) already sets key. */
static int plan_env_default(struct sandbox *sb, const char *key, const char *val)
{
	const struct launch_plan *lp = &sb->lp;
	size_t len = strlen(key);

	for (unsigned i = 0; i < lp->nenv; i++)
		if (strncmp(lp->envp[i], key, len) == 0 && lp->envp[i][len] == '=')
			return 0;
	return plan_env(sb, key, val);
}

/* Imports one of the policy's packages, or ends the interpreter before
 * it is ready with one line on stderr that names the package and the
 * error, which start_ready() passes on (the exception's text on one line,
 * so the line stays whole inside the report's bound). */
static const char LOADER_PKG[] =
	"def _cordon_pkg(n):\n"
	"    try:\n"
	"        __import__(n)\n"
	"    except BaseException as e:\n"
	"        m = 'package %s does not import: %s: %s\\n' % (n, type(e).__name__, ' '.join(str(e).split()))\n"
	"        _cordon_posix.write(2, m.encode('utf-8', 'replace'))\n"
	"        _cordon_posix._exit(1)\n";

/* The loader with the policy's preloads and packages.  Their names were
 * checked by the compiler and again by the loader of the blob (dotted
 * identifiers), so they can be quoted as they are. */
static int plan_loader(struct sandbox *sb)
{
	const struct cpol_executor *x = &sb->pol->exec;
	size_t cap = sizeof(LOADER_HEAD) + sizeof(LOADER_PKG) + sizeof(LOADER_TAIL) + 32;
	char *p;

	for (uint32_t i = 0; i < x->npreload; i++)
		cap += strlen(x->preload[i]) + 32;
	for (uint32_t i = 0; i < x->npackages; i++)
		cap += strlen(x->packages[i]) + 32;
	if ((sb->loader = malloc(cap)) == NULL)
		return -1;
	p = sb->loader;
	p += sprintf(p, "%s", LOADER_HEAD);
	for (uint32_t i = 0; i < x->npreload; i++)
		p += sprintf(p, "__import__('%s')\n", x->preload[i]);
	if (x->npackages > 0) {
		p += sprintf(p, "%s", LOADER_PKG);
		for (uint32_t i = 0; i < x->npackages; i++)
			p += sprintf(p, "_cordon_pkg('%s')\n", x->packages[i]);
		p += sprintf(p, "del _cordon_pkg\n");
	}
	p += sprintf(p, "%s", LOADER_TAIL);
	sb->loader_len = (size_t)(p - sb->loader);
	return 0;
}

/* The agent's tools, all of them, or those the context selects.  The
 * bridge decides again on every call: this list is a convenience for the
 * program, not the check. */
static uint32_t tools_selected(const struct cpol_policy *p, const char *agent, const cJSON *context, uint32_t *sel)
{
	const struct cpol_agent *a = agent ? policy_find_agent(p, agent) : NULL;
	const cJSON *want = context ? cJSON_GetObjectItemCaseSensitive(context, "tools") : NULL;
	uint32_t n = 0;

	for (uint32_t i = 0; a != NULL && i < a->ntools; i++) {
		const char *id = p->tools[a->tools[i]].id;
		int ok = want == NULL;

		for (const cJSON *w = want ? want->child : NULL; w != NULL && !ok; w = w->next)
			ok = cJSON_IsString(w) && strcmp(w->valuestring, id) == 0;
		if (ok)
			sel[n++] = a->tools[i];
	}
	return n;
}

static char *tools_stubs(const struct sandbox *sb, const cJSON *context, size_t *len)
{
	uint32_t *sel = calloc(sb->pol->ntools + 1, sizeof(*sel));
	char *s;

	if (sel == NULL)
		return NULL;
	s = stubs_python(sb->pol, sb->agent, sel, tools_selected(sb->pol, sb->agent, context, sel), len);
	free(sel);
	return s;
}

int sandbox_check_secrets(const struct sandbox_host *h, const struct cpol_policy *p, const char *agent,
			  const cJSON *context, struct sandbox_err *e)
{
	uint32_t *sel = calloc(p->ntools + 1, sizeof(*sel));
	int rc = -1;

	memset(e, 0, sizeof(*e));
	snprintf(e->stage, sizeof(e->stage), "secrets");
	if (sel == NULL)
		snprintf(e->msg, sizeof(e->msg), "out of memory checking the tools' secrets");
	else
		rc = secrets_check_tools(p, sel, tools_selected(p, agent, context, sel), h->secrets, e->msg,
					 sizeof(e->msg));
	free(sel);
	return rc;
}

static int prep_plan(struct sandbox *sb)
{
	struct launch_plan *lp = &sb->lp;
	const struct cpol_policy *p = sb->pol;
	int has_tmp = 0, has_etc = 0, has_usr = 0, has_bin = 0;
	static const char *const devs[] = { "/dev/null", "/dev/zero", "/dev/random", "/dev/urandom" };
	char *stubs;

	lp->uid = p->exec.uid;
	lp->gid = p->exec.gid;
	lp->rootless = sb->h->rootless;
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
		has_usr |= strcmp(pm->target, "/usr") == 0;
		has_bin |= strcmp(pm->target, "/bin") == 0 || strcmp(pm->target, "/sbin") == 0;
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
	/* The client module for every tool of the agent bounds what the
	 * context's narrower selection writes at start. */
	stubs = tools_stubs(sb, NULL, &sb->stubs_max);
	free(stubs);
	if (stubs == NULL || plan_loader(sb) != 0) {
		sb_fail(sb, "tools", "client modules: out of memory");
		return -1;
	}
	/* The private filesystems, in enum ws_part's order (the executor
	 * hands them over in plan order): the workspace, bounded by the
	 * kernel once the request is in (sandbox_start), then the client
	 * modules and the socket, read-only to the sandbox. */
	{
		struct launch_mount *w = plan_mount(lp, LM_PRIVATE, "", SANDBOX_WORKSPACE);
		struct launch_mount *l = plan_mount(lp, LM_PRIVATE, "", SANDBOX_CLIENT);
		struct launch_mount *k = plan_mount(lp, LM_PRIVATE, "", SANDBOX_SOCKET_DIR);

		if (w == NULL || l == NULL || k == NULL)
			goto too_many;
		w->size = WS_PREP_BYTES;
		w->inodes = WS_PREP_INODES;
		w->rw_sub[0] = "work";
		w->rw_sub[1] = "out";
		w->rw_sub[2] = "logs/executor";
		w->nrw_sub = 3;
		l->size = WS_ROUND(sb->stubs_max) + WS_ROUND(stubs_client_py_len) + WS_ROUND(sizeof(EXIT_PY)) +
			  WS_ROUND(cell_loop_py_len) + WS_ROUND(display_client_py_len) + WS_PAGE;
		l->inodes = 7;
		k->size = WS_PAGE;
		k->inodes = 3;
		lp->landlock_rw[0] = SANDBOX_WORK;
		lp->landlock_rw[1] = SANDBOX_OUT;
		lp->landlock_rw[2] = SANDBOX_LOGS;
		lp->nlandlock_rw = 3;
	}
	lp->write_etc = !has_etc;
	lp->usr_links = has_usr && !has_bin;
	for (uint32_t i = 0; i < p->nenv; i++)
		if (plan_env(sb, p->env[i].key, p->env[i].value) != 0)
			goto env;
	if (plan_env(sb, "PATH", "/usr/local/bin:/usr/bin:/bin") || plan_env(sb, "HOME", SANDBOX_WORK) ||
	    plan_env(sb, "TMPDIR", has_tmp ? "/tmp" : SANDBOX_WORK) ||
	    plan_env(sb, "CORDON_SOCKET", SANDBOX_SOCKET) ||
	    plan_env(sb, "CORDON_TOKEN", sb->token) || plan_env(sb, "CORDON_EXECUTION_ID", sb->id))
		goto env;
	/* Defaults the policy's env may override: a locale, and one thread
	 * per numeric library.  OpenBLAS, MKL, OpenMP and numexpr start a
	 * thread per host CPU, which the pids limit and the sandbox's CPU
	 * share cannot use (a 64-CPU host, a pids limit of 64: numpy's first
	 * product fails to start its pool). */
	{
		static const char *const dflt[][2] = { { "LANG", "C.UTF-8" },	     { "OMP_NUM_THREADS", "1" },
							{ "OPENBLAS_NUM_THREADS", "1" }, { "MKL_NUM_THREADS", "1" },
							{ "NUMEXPR_NUM_THREADS", "1" },
							/* no display: figures are rendered to PNG
							 * (cordon_display.py) */
							{ "MPLBACKEND", "Agg" } };

		for (size_t k = 0; k < sizeof(dflt) / sizeof(dflt[0]); k++)
			if (plan_env_default(sb, dflt[k][0], dflt[k][1]) != 0)
				goto env;
	}
	/* Debian's matplotlib reads /etc/matplotlibrc, which the sandbox's
	 * own /etc lacks, and refuses to import without it; the identical
	 * copy under /usr is in the root when /usr is mounted.  Only where
	 * that file exists: any other matplotlib finds its own. */
	if (has_usr && access(PLAN_MATPLOTLIBRC, R_OK) == 0 &&
	    plan_env_default(sb, "MATPLOTLIBRC", PLAN_MATPLOTLIBRC) != 0)
		goto env;
	return 0;
too_many:
	sb_fail(sb, "plan", "more than %d mounts", LAUNCH_MAX_MOUNTS);
	return -1;
env:
	sb_fail(sb, "plan", "environment too large");
	return -1;
}

/* ---- prepare: 4. limits --------------------------------------------------- */

static int prep_cgroup(struct sandbox *sb)
{
	const struct cpol_policy *p = sb->pol;
	/* pids: one more than the policy's for the sandbox's init (launch.h),
	 * which is the runtime's process, not the program's. */
	struct cg_limits lim = { p->limits.memory_bytes, p->limits.pids ? p->limits.pids + 1 : 0,
				 (uint64_t)p->limits.cpu_milli * CPOL_CPU_PERIOD_US / 1000, CPOL_CPU_PERIOD_US };
	char name[64], err[512];

	/* The supervisor's pid in the name lets a later run sweep what a
	 * killed supervisor left (cgroup_sweep_stale). */
	snprintf(name, sizeof(name), "cordon-%d-%s", (int)getpid(), sb->id);
	if (cgroup_create(&sb->cg, &sb->h->cgh, name, &lim, err, sizeof(err)) != 0) {
		sb_fail(sb, "cgroup", "%s", err);
		return -1;
	}
	sb->cg_made = 1;
	/* usage.cpuMs counts every process of the execution, not only what
	 * the executor reaped; best effort, the result names the source. */
	cgroup_cpu_account(&sb->cg, &sb->h->cgh, name);
	cgroup_sweep_stale(&sb->cg);
	if ((p->exec.require & CPOL_LAYER_CGROUP) && (sb->cg.mem_kind == CG_NONE || sb->cg.pids_kind == CG_NONE)) {
		sb_fail(sb, "cgroup", "the policy requires cgroup limits and this host gives none to this caller (%.800s)",
			sb->cg.note[0] ? sb->cg.note : "no usable hierarchy");
		return -1;
	}
	/* A CPU quota has no rlimit to fall back on (RLIMIT_CPU bounds the
	 * total, not the rate): a policy that sets one runs under it or not
	 * at all, whatever its require list says. */
	if (lim.cpu_quota_us != 0 && sb->cg.quota_kind == CG_NONE) {
		sb_fail(sb, "cgroup", "the policy sets a CPU quota and this host gives no cpu cgroup to this caller (%.800s)",
			sb->cg.note[0] ? sb->cg.note : "no usable hierarchy");
		return -1;
	}
	if ((p->exec.require & CPOL_LAYER_LANDLOCK) && sb->h->landlock_abi < 1) {
		sb_fail(sb, "landlock", "the policy requires landlock and this kernel has none");
		return -1;
	}
	/* Fallbacks, named in the result: address space for memory, and the
	 * per-user process count for pids. */
	if (sb->cg.mem_kind == CG_NONE)
		sb->lp.as = p->limits.memory_bytes;
	if (sb->cg.pids_kind == CG_NONE)
		sb->lp.nproc = p->limits.pids ? (uint64_t)p->limits.pids + 1 : 0;
	return 0;
}

/* ---- prepare: 5. clone and setup ------------------------------------------ */

/* The error pipe closed at exec (CLOEXEC) unless setup failed first: then
 * it holds "stage\tmessage".  Returns 1 when the child reported one. */
static int child_report(struct sandbox *sb)
{
	char buf[1024], *tab;
	ssize_t got;

	if (sb->fd_errpipe < 0)
		return 0;
	got = read(sb->fd_errpipe, buf, sizeof(buf) - 1);
	if (got <= 0)
		return 0;
	buf[got] = '\0';
	tab = strchr(buf, '\t');
	if (tab != NULL)
		*tab++ = '\0';
	/* A child's report is a better message than the supervisor's side
	 * of the same failure: it replaces it. */
	sb->failed = 0;
	sb_fail(sb, buf, "%.900s", tab ? tab : "setup failed");
	return 1;
}

/* The one way an executor that will not be supervised ends: killed (with
 * its whole pid namespace) and reaped.  A child that died in setup said
 * where: its report then names the stage. */
static void child_kill(struct sandbox *sb)
{
	if (sb->pid > 0) {
		kill(sb->pid, SIGKILL);
		while (waitpid(sb->pid, NULL, 0) < 0 && errno == EINTR)
			;
		sb->pid = -1;
		if (sb->failed)
			child_report(sb);
	}
}

struct fill_listen {
	struct sandbox *sb;
	char path[64];
	char err[512];
};

static int fill_listen_fn(void *arg)
{
	struct fill_listen *fl = arg;
	struct sandbox *sb = fl->sb;

	return bridge_listen(fl->path, !sb->h->rootless, sb->host_uid, sb->host_gid, &sb->listen_fd, fl->err,
			     sizeof(fl->err));
}

/* What prepare puts in the private filesystems: the loader, the executor
 * side of the client, and the tool socket.  All of it the executor's (its
 * host ids), 0600 / 0444: it reads them as their owner, nobody else can. */
static int prep_fill(struct sandbox *sb, char *err, size_t n)
{
	struct fill_listen fl = { .sb = sb };

	/* work/, out/, logs/executor/ exist: the executor made them, as the
	 * writable binds of its otherwise read-only /workspace. */
	if (ws_write(&sb->ws, WS_WORKSPACE, "work/main.py", sb->loader, sb->loader_len, 0600, err, n) != 0 ||
	    ws_write(&sb->ws, WS_CLIENT, "cordon_tools.py", stubs_client_py, stubs_client_py_len, 0444, err, n) != 0 ||
	    ws_write(&sb->ws, WS_CLIENT, "cordon_exit.py", EXIT_PY, sizeof(EXIT_PY) - 1, 0444, err, n) != 0 ||
	    ws_write(&sb->ws, WS_CLIENT, "cordon_session.py", cell_loop_py, cell_loop_py_len, 0444, err, n) != 0 ||
	    ws_write(&sb->ws, WS_CLIENT, "cordon_display.py", display_client_py, display_client_py_len, 0444, err, n) !=
		    0)
		return -1;
	/* bind() takes a path: the socket directory's fd as /proc names it,
	 * which no other process can shape. */
	snprintf(fl.path, sizeof(fl.path), "/proc/self/fd/%d/tools.sock", sb->ws.fd[WS_SOCKET]);
	if (ws_as_executor(&sb->ws, fill_listen_fn, &fl) != 0) {
		snprintf(err, n, "%s", fl.err[0] ? fl.err : strerror(errno));
		return -1;
	}
	return 0;
}

/* An fd the child keeps above fd 3 (launch.h): fds 0-3 are its stdio
 * and start socket once it runs. */
static int fd_high(int fd)
{
	int hi;

	if (fd < 0 || fd > LAUNCH_START_FD)
		return fd;
	hi = fcntl(fd, F_DUPFD_CLOEXEC, LAUNCH_START_FD + 1);
	close(fd);
	return hi;
}

#define CLONE_NS_ALL (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)

static int prep_launch(struct sandbox *sb)
{
	int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, perr[2] = { -1, -1 }, psync[2] = { -1, -1 };
	int pfd[2] = { -1, -1 }, pst[2] = { -1, -1 }, pin[2] = { -1, -1 }, devnull = -1, rc = -1, v2fd = -1, cg_fast;
	size_t maxout = (size_t)sb->pol->limits.max_output_bytes;
	char buf[1024];
	pid_t pid;

	sb->out.max = sb->err.max = maxout;
	sb->out.buf = malloc(maxout + 1);
	sb->err.buf = malloc(maxout + 1);
	if (sb->out.buf == NULL || sb->err.buf == NULL) {
		sb_fail(sb, "launch", "out of memory");
		return -1;
	}
	if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC) || pipe2(perr, O_CLOEXEC) || pipe2(psync, O_CLOEXEC) ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pfd) ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pst) ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pin) ||
	    (devnull = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0 || (perr[1] = fd_high(perr[1])) < 0 ||
	    (pin[1] = fd_high(pin[1])) < 0) {
		sb_fail(sb, "launch", "pipes: %s", strerror(errno));
		goto out;
	}
	sb->lp.err_fd = perr[1];
	sb->lp.sync_fd = psync[0];
	sb->lp.fd_sock = pfd[1];
	sb->lp.start_fd = pst[1];
	sb->lp.init_fd = pin[1];
	sb->lp.stdin_fd = devnull;
	sb->lp.stdout_fd = po[1];
	sb->lp.stderr_fd = pe[1];
	sb->lp.parent_fds[0] = po[0];
	sb->lp.parent_fds[1] = pe[0];
	sb->lp.parent_fds[2] = perr[0];
	sb->lp.parent_fds[3] = psync[1];
	sb->lp.parent_fds[4] = pfd[0];
	sb->lp.parent_fds[5] = pst[0];
	sb->lp.parent_fds[6] = pin[0];
	sb->lp.cg_tasks[0] = sb->lp.cg_tasks[1] = sb->lp.cg_tasks[2] = -1;
	launch_init_args(&sb->lp.args_start, &sb->lp.args_end); /* unknown: not blanked, nothing worse */
	/* A raw clone: fork semantics, with every namespace fresh at once but
	 * the cgroup one, which the child makes once it is in its cgroups
	 * (sequence.c step 3b).  The child calls nothing that allocates or
	 * locks: other threads of a server may hold those locks.  On cgroup
	 * v2 the child is born in its cgroup (clone3 CLONE_INTO_CGROUP); on
	 * v1 it moves itself through the tasks fds (step 0a); a move from
	 * outside (cgroup_attach) is the fallback. */
	if (cgroup_tasks_open(&sb->cg, sb->lp.cg_tasks, buf, sizeof(buf)) != 0 ||
	    ((v2fd = cgroup_v2_dirfd(&sb->cg, buf, sizeof(buf))) < 0 && buf[0] != '\0')) {
		sb_fail(sb, "cgroup", "%s", buf);
		goto out;
	}
	if (v2fd >= 0) {
		struct clone_args ca = { .flags = CLONE_NS_ALL | CLONE_INTO_CGROUP,
					 .exit_signal = SIGCHLD,
					 .cgroup = (uint64_t)v2fd };

		pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
	} else {
		pid = (pid_t)syscall(SYS_clone, CLONE_NS_ALL | SIGCHLD, NULL, NULL, NULL, NULL);
	}
	if (pid < 0) {
		sb_fail(sb, "namespaces", "clone: %s", strerror(errno));
		goto out;
	}
	if (pid == 0)
		launch_child(&sb->lp);
	sb->pid = pid;
	cg_fast = cgroup_fast_complete(&sb->cg, sb->lp.cg_tasks, v2fd);
	sb->fd_errpipe = perr[0];
	sb->fd_sync = psync[1];
	sb->fd_start = pst[0];
	sb->fd_init = pin[0];
	sb->out.fd = po[0];
	sb->err.fd = pe[0];
	perr[0] = psync[1] = pst[0] = pin[0] = po[0] = pe[0] = -1;
	sb->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (sb->pidfd < 0) {
		sb_fail(sb, "launch", "pidfd_open: %s", strerror(errno));
		goto out;
	}
	if (identity_write_maps(pid, &sb->lp, sb->host_uid, sb->host_gid, buf, sizeof(buf)) != 0) {
		sb_fail(sb, "identity", "%s", buf);
		goto out;
	}
	if (write(sb->fd_sync, "m", 1) != 1) {
		sb_fail(sb, "sync", "the executor ended before setup: %s", strerror(errno));
		goto out;
	}
	/* Every kind in place already, by the two fast paths; else the
	 * whole attach from outside (a kind the fast paths could not open). */
	if (!cg_fast && cgroup_attach(&sb->cg, pid, buf, sizeof(buf)) != 0) {
		sb_fail(sb, "cgroup", "%s", buf);
		goto out;
	}
	if (ws_receive(&sb->ws, pfd[0], 30000, buf, sizeof(buf)) != 0) {
		sb_fail(sb, "mounts", "%s", buf);
		goto out;
	}
	if (prep_fill(sb, buf, sizeof(buf)) != 0) {
		sb_fail(sb, "workspace", "%s", buf);
		goto out;
	}
	if (write(sb->fd_sync, "c", 1) != 1) {
		sb_fail(sb, "sync", "the executor ended during setup: %s", strerror(errno));
		goto out;
	}
	fcntl(sb->out.fd, F_SETFL, O_NONBLOCK);
	fcntl(sb->err.fd, F_SETFL, O_NONBLOCK);
	rc = 0;
out:
	for (int *fd = (int[]){ po[0], po[1], pe[0], pe[1], perr[0], perr[1], psync[0], psync[1], pfd[0], pfd[1],
				 pst[0], pst[1], pin[0], pin[1], devnull, v2fd, sb->lp.cg_tasks[0], sb->lp.cg_tasks[1],
				 sb->lp.cg_tasks[2], -2 };
	     *fd != -2; fd++)
		if (*fd >= 0)
			close(*fd);
	if (rc != 0)
		child_kill(sb);
	return rc;
}

/* The loader's 'r': the interpreter is up and its preloads imported.  EOF
 * means it died first: its setup report, or its stderr, says why. */
static int start_ready(struct sandbox *sb, int timeout_ms)
{
	struct pollfd p = { .fd = sb->fd_start, .events = POLLIN };
	char c = 0;
	int r;

	do
		r = poll(&p, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r == 0) {
		sb_fail(sb, "preload", "the interpreter was not ready within %d ms", timeout_ms);
		return -1;
	}
	if (r < 0 || read(sb->fd_start, &c, 1) != 1 || c != 'r') {
		char tail[400] = "";
		ssize_t got = read(sb->err.fd, tail, sizeof(tail) - 1);

		/* A package's failure is one line (LOADER_PKG): its newline is
		 * not part of the message. */
		while (got > 0 && tail[got - 1] == '\n')
			got--;
		tail[got > 0 ? got : 0] = '\0';
		sb_fail(sb, "preload", "the interpreter ended before it was ready%s%.390s", tail[0] ? ": " : "", tail);
		if (child_report(sb) == 0 && sb->pid > 0) {
			/* keep the preload message */
		}
		return -1;
	}
	return 0;
}

int sandbox_prepare(struct sandbox *sb, int wait_ready)
{
	if (sb->failed || sb->state != SB_NEW)
		return -1;
	if (prep_policy(sb) != 0 || prep_hostid(sb) != 0 || prep_rundir(sb) != 0 || prep_plan(sb) != 0 ||
	    prep_cgroup(sb) != 0 || prep_launch(sb) != 0)
		return -1;
	if (wait_ready && start_ready(sb, (int)(sb->pol->limits.timeout_ms + 10000)) != 0) {
		child_kill(sb);
		return -1;
	}
	sb->exec_ok = wait_ready;
	sb->state = SB_PREPARED;
	sb->t_prepared = now_ms();
	return 0;
}

/* ---- start ---------------------------------------------------------------- */

static int start_check(struct sandbox *sb, const struct sandbox_request *rq)
{
	const struct cpol_limits *l = &sb->pol->limits;
	struct sandbox_err e;

	if (rq->code_len > l->max_code_bytes) {
		sb_fail(sb, "code", "%s is over max_code_bytes (%llu)", rq->code_name ? rq->code_name : "the program",
			(unsigned long long)l->max_code_bytes);
		return -1;
	}
	if (rq->ninputs > SANDBOX_MAX_INPUTS) {
		sb_fail(sb, "inputs", "more than %d inputs", SANDBOX_MAX_INPUTS);
		return -1;
	}
	for (unsigned i = 0; i < rq->ninputs; i++) {
		const char *b = rq->inputs[i].name;

		if (b == NULL || !policy_input_name_ok(b)) {
			sb_fail(sb, "inputs", "%s: input name is empty or reserved", b ? b : "");
			return -1;
		}
		for (unsigned j = 0; j < i; j++)
			if (strcmp(rq->inputs[j].name, b) == 0) {
				sb_fail(sb, "inputs", "%s: given twice", b);
				return -1;
			}
		if (l->max_file_bytes != 0 && rq->inputs[i].len > l->max_file_bytes) {
			sb_fail(sb, "inputs", "%s: over max_file_bytes", b);
			return -1;
		}
	}
	/* Before anything of the request is written: a tool whose secret is
	 * missing would otherwise fail only at its first call, mid-run, after
	 * the program may have acted on other tools. */
	if (sandbox_check_secrets(sb->h, sb->pol, sb->agent, sb->context, &e) != 0) {
		sandbox_fail(sb, &e);
		return -1;
	}
	return 0;
}

/* The workspace's bounds, now that the request is in: what is there counts
 * as the baseline; the program may add max_exec_workspace_delta_bytes,
 * never past max_exec_workspace_bytes.  The tmpfs itself is a page and an
 * inode larger than the bounds, so the kernel stops the program there and
 * the monitor can tell a full workspace from one filled exactly to its
 * limit. */
static int start_bound(struct sandbox *sb, char *err, size_t n)
{
	const struct cpol_limits *l = &sb->pol->limits;
	struct ws_usage u;

	if (ws_usage(&sb->ws, &u) != 0) {
		snprintf(err, n, "statfs of the workspace: %s", strerror(errno));
		return -1;
	}
	sb->ws_bytes_max = 0;
	if (l->ws_delta_bytes != 0)
		sb->ws_bytes_max = u.bytes + WS_ROUND(l->ws_delta_bytes);
	if (l->ws_max_bytes != 0 && (sb->ws_bytes_max == 0 || WS_ROUND(l->ws_max_bytes) < sb->ws_bytes_max))
		sb->ws_bytes_max = WS_ROUND(l->ws_max_bytes) > u.bytes ? WS_ROUND(l->ws_max_bytes) : u.bytes;
	sb->ws_inodes_max = u.inodes + l->ws_entries;
	return ws_limit(&sb->ws, sb->ws_bytes_max ? sb->ws_bytes_max + WS_PAGE : WS_PREP_BYTES, sb->ws_inodes_max + 1,
			sb->pidfd, err, n);
}

static int start_fill(struct sandbox *sb, const struct sandbox_request *rq, char *err, size_t n)
{
	char rel[PATH_MAX];
	char *stubs;
	size_t stubs_len;
	int rc;

	if (ws_write(&sb->ws, WS_WORKSPACE, "work/user_code.py", rq->code, rq->code_len, 0600, err, n) != 0)
		return -1;
	for (unsigned i = 0; i < rq->ninputs; i++) {
		snprintf(rel, sizeof(rel), "work/%s", rq->inputs[i].name);
		if (ws_write(&sb->ws, WS_WORKSPACE, rel, rq->inputs[i].data, rq->inputs[i].len, 0600, err, n) != 0)
			return -1;
	}
	stubs = tools_stubs(sb, sb->context, &stubs_len);
	if (stubs == NULL) {
		snprintf(err, n, "client modules: out of memory");
		return -1;
	}
	rc = ws_write(&sb->ws, WS_CLIENT, "tools.py", stubs, stubs_len, 0444, err, n);
	free(stubs);
	return rc;
}

/* The init's deadline, and its answer that it holds it and is locked
 * down (launch.h), before the go byte: from the go on the program runs
 * under both the supervisor's timeout and init's (timeout +
 * LAUNCH_INIT_GRACE_MS), which no stop of the supervisor holds back. */
static int start_arm(struct sandbox *sb, uint64_t span_ms)
{
	struct pollfd p = { .fd = sb->fd_init, .events = POLLIN };
	struct launch_init_msg m;
	struct timespec ts;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (launch_init_send(sb->fd_init, LAUNCH_INIT_ARM, 0, 0,
			     (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec +
				     span_ms * 1000000u) != 0)
		goto fail;
	do
		r = poll(&p, 1, 10000);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		errno = ETIMEDOUT;
	if (r > 0 && launch_init_recv(sb->fd_init, LAUNCH_INIT_ARMED, &m) == 1)
		return 0;
fail:
	sb_fail(sb, "init", "the executor's init did not take the deadline: %s", strerror(errno));
	return -1;
}

/* The taps run under cap_lock (supervise.h), which guards sb->ev: a
 * session's followers change cell by cell. */
static void sb_tap_out(void *arg, const char *data, size_t len)
{
	struct sandbox *sb = arg;

	if (sb->ev.output != NULL)
		sb->ev.output(sb->ev.arg, 1, data, len);
}

static void sb_tap_err(void *arg, const char *data, size_t len)
{
	struct sandbox *sb = arg;

	if (sb->ev.output != NULL)
		sb->ev.output(sb->ev.arg, 2, data, len);
}

/* The output written before the call is in the pipes when the call
 * arrives: drained first, it is told first.  One step under the lock, so
 * that a cell's end cannot clear the followers between the two. */
static void sb_on_call(void *arg, const cJSON *entry)
{
	struct sandbox *sb = arg;

	pthread_mutex_lock(&sb->cap_lock);
	if (sb->ev.call != NULL) {
		capture_drain(&sb->out);
		capture_drain(&sb->err);
		sb->ev.call(sb->ev.arg, entry);
	}
	pthread_mutex_unlock(&sb->cap_lock);
}

/* Sets the followers of rq->events on the captures, or for a session the
 * lock and taps its cells' followers need (sandbox_cell()); 0, or -1 (no
 * lock). */
static int start_events(struct sandbox *sb, const struct sandbox_request *rq)
{
	int whole = rq->events != NULL && rq->events->output != NULL && rq->events->call != NULL;

	if (!whole && rq->session_ms == 0)
		return 0;
	if (!sb->cap_lock_ok && pthread_mutex_init(&sb->cap_lock, NULL) != 0)
		return -1;
	sb->cap_lock_ok = 1;
	if (whole && rq->session_ms == 0)
		sb->ev = *rq->events;
	sb->out.lock = sb->err.lock = &sb->cap_lock;
	sb->out.tap = sb_tap_out;
	sb->err.tap = sb_tap_err;
	sb->out.tap_arg = sb->err.tap_arg = sb;
	return 0;
}

static int sb_cpu_ms(void *arg, uint64_t *ms);

int sandbox_start(struct sandbox *sb, const struct sandbox_request *rq)
{
	/* How long the program may run: the policy's timeout, or a session's
	 * whole lifetime (its cells are timed one by one, sandbox_cell()). */
	uint64_t span = rq->session_ms != 0 ? rq->session_ms : sb->pol->limits.timeout_ms;
	char buf[1024], rel[128];

	if (rq->context != NULL) {
		sb->context = *rq->context;
		*rq->context = NULL;
	}
	if (sb->failed || sb->state != SB_PREPARED)
		goto fail;
	if (start_check(sb, rq) != 0)
		goto fail;
	if (start_events(sb, rq) != 0) {
		sb_fail(sb, "bridge", "pthread: cannot create the stream's lock");
		goto fail;
	}
	if (sb->dir_fd >= 0) {
		int e = 0;

		snprintf(rel, sizeof(rel), "executed_programs/%s", sb->id);
		if (mkdirat(sb->dir_fd, rel, 0700) != 0)
			e = errno;
		else {
			snprintf(rel, sizeof(rel), "executed_programs/%s/user_code.py", sb->id);
			e = rundir_write(sb, rel, rq->code, rq->code_len);
		}
		if (e != 0) {
			sb_fail(sb, "rundir", "write %.900s/%s: %s", sb->dir, rel, strerror(e));
			goto fail;
		}
	}
	if (start_fill(sb, rq, buf, sizeof(buf)) != 0 || start_bound(sb, buf, sizeof(buf)) != 0) {
		sb_fail(sb, "workspace", "%s", buf);
		goto fail;
	}
	{
		struct bridge_cfg bc = { .pol = sb->pol,
					 .exec_id = sb->id,
					 .token = sb->token,
					 .context = sb->context,
					 .agent = sb->agent,
					 .state_dir = sb->h->state_dir,
					 .ledger = sb->h->ledger,
					 .secrets = sb->h->secrets,
					 .audit_fd = sb->audit_fd,
					 .peer_uid = sb->host_uid,
					 .child = sb->pid,
					 .deadline_ms = now_ms() + span + 1000,
					 .tool_uid = sb->leases[1].uid,
					 .tool_gid = sb->leases[1].gid,
					 .tool_ids = !sb->h->rootless,
					 .cg_host = &sb->h->cgh,
					 .on_call = sb->cap_lock_ok ? sb_on_call : NULL,
					 .on_call_arg = sb };

		/* Before the program may run: its first call must find the
		 * bridge serving. */
		if (bridge_start(&bc, &sb->listen_fd, &sb->bridge, buf, sizeof(buf)) != 0) {
			sb_fail(sb, "bridge", "%s", buf);
			goto fail;
		}
	}
	/* A one-shot run did not wait for the loader in prepare: its start
	 * overlapped the writes above, and it is awaited here. */
	if (!sb->exec_ok && start_ready(sb, (int)(sb->pol->limits.timeout_ms + 10000)) != 0)
		goto fail;
	sb->exec_ok = 1;
	/* The init's deadline before the go byte: from the go on, the
	 * program runs under both the supervisor's timeout and init's
	 * (timeout + LAUNCH_INIT_GRACE_MS), which no stop of the supervisor
	 * holds back. */
	if (start_arm(sb, span) != 0)
		goto fail;
	sb->session = rq->session_ms != 0;
	if (sb->session)
		sb_cpu_ms(sb, &sb->cell.cpu_base_ms);
	if (send(sb->fd_start, sb->session ? "s" : "g", 1, MSG_NOSIGNAL) != 1) {
		sb_fail(sb, "sync", "the interpreter ended before its program: %s", strerror(errno));
		goto fail;
	}
	sb->state = SB_STARTED;
	sb->t_started = now_ms();
	if (sb->ev.started != NULL)
		sb->ev.started(sb->ev.arg, sb->id);
	return 0;
fail:
	if (!sb->failed)
		sb_fail(sb, "start", "the sandbox was not prepared");
	child_kill(sb);
	bridge_stop(sb->bridge);
	return -1;
}

/* ---- wait ----------------------------------------------------------------- */

/* The supervisor reaped init; how the program ended is in init's report.
 * None when init was killed first (the supervisor's timeout, a breach, a
 * cancel: its wait status then says it all, as it did when the program was
 * pid 1).  Init's deadline ending the run is a timeout the supervisor did
 * not see: it was stopped, or too slow by more than the grace. */
static void wait_init_end(struct sandbox *sb)
{
	struct launch_init_msg m;

	if (launch_init_recv(sb->fd_init, LAUNCH_INIT_END, &m) != 1)
		return;
	sb->so.wstatus = m.wstatus;
	if (m.flags & LAUNCH_INIT_F_DEADLINE) {
		sb->init_fired = 1;
		if (sb->so.end == SUP_EXITED)
			sb->so.end = SUP_TIMED_OUT;
	}
}

int sandbox_wait(struct sandbox *sb, int cancel_fd)
{
	struct supervise_cfg cfg;
	char buf[1024];
	int rc = 0;

	if (sb->failed || sb->state != SB_STARTED)
		return -1;
	cfg = (struct supervise_cfg){ .child = sb->pid,
				      .timeout_ms = sb->pol->limits.timeout_ms,
				      .monitor_ms = sb->pol->limits.monitor_ms,
				      .ws = &sb->ws,
				      .ws_bytes_max = sb->ws_bytes_max,
				      .ws_inodes_max = sb->ws_inodes_max,
				      .pidfd = sb->pidfd,
				      .cancel_fd = cancel_fd,
				      .init_fd = sb->fd_init };
	/* supervise_run reaps the executor whatever happens. */
	if (supervise_run(&cfg, &sb->out, &sb->err, &sb->so, buf, sizeof(buf)) != 0) {
		sb_fail(sb, "supervise", "%s", buf);
		rc = -1;
	}
	sb->pid = -1;
	if (rc == 0)
		wait_init_end(sb);
	/* The executor is gone; a tool still running is killed now, and no
	 * call may still be served (or append to toolCalls) once the result
	 * is built. */
	bridge_stop(sb->bridge);
	if (rc == 0 && sb->cg_made && cgroup_usage(&sb->cg, &sb->usage, buf, sizeof(buf)) == 0)
		sb->have_usage = 1;
	sb->state = SB_WAITED;
	sb->t_waited = now_ms();
	return rc;
}

/* ---- reduce --------------------------------------------------------------- */

static cJSON *enforcement_json(const struct sandbox *sb)
{
	const struct cpol_policy *p = sb->pol;
	cJSON *e = cJSON_CreateObject();
	char buf[160];

	cJSON_AddStringToObject(e, "namespaces", "user,mount,pid,net,ipc,uts,cgroup");
	snprintf(buf, sizeof(buf), "tmpfs root, %u read-only binds, workspace rw, pivot_root", p->nmounts);
	cJSON_AddStringToObject(e, "filesystem", buf);
	cJSON_AddStringToObject(e, "network", p->exec.network == CPOL_NET_LOOPBACK ? "loopback only" : "none");
	snprintf(buf, sizeof(buf), "uid %u gid %u as host %u/%u, %s%s", p->exec.uid, p->exec.gid,
		 (unsigned)sb->host_uid, (unsigned)sb->host_gid,
		 sb->h->rootless ? "supplementary groups of the caller unmapped" : "no supplementary groups",
		 sb->h->rootless ? " (rootless: the caller)" : "");
	cJSON_AddStringToObject(e, "identity", buf);
	cJSON_AddStringToObject(e, "memory",
				sb->cg.mem_kind != CG_NONE ? cgroup_kind_name(sb->cg.mem_kind) : "rlimit-as-per-process");
	cJSON_AddStringToObject(e, "pids", sb->cg.pids_kind != CG_NONE ? cgroup_kind_name(sb->cg.pids_kind) : "rlimit-nproc");
	/* "none" only for a policy without a quota: one with a quota and no
	 * cpu cgroup does not run (prep_cgroup). */
	cJSON_AddStringToObject(e, "cpu", cgroup_kind_name(sb->cg.quota_kind));
	if (!(p->exec.flags & CPOL_EXE_F_LANDLOCK))
		snprintf(buf, sizeof(buf), "off (policy)");
	else
		snprintf(buf, sizeof(buf), "abi-%d", sb->h->landlock_abi);
	cJSON_AddStringToObject(e, "landlock", buf);
	if (p->nseccomp)
		snprintf(buf, sizeof(buf), "filter(%u insns)", p->nseccomp);
	else
		snprintf(buf, sizeof(buf), "none (the policy has no filter)");
	cJSON_AddStringToObject(e, "seccomp", buf);
	cJSON_AddStringToObject(e, "capabilities", "none");
	cJSON_AddBoolToObject(e, "noNewPrivs", 1);
	snprintf(buf, sizeof(buf), "fsize,nofile,core%s%s", sb->lp.nproc ? ",nproc" : "", sb->lp.as ? ",as" : "");
	cJSON_AddStringToObject(e, "rlimits", buf);
	/* Who holds the timeout: both, or, when the supervisor did not act
	 * by the grace, the init that did. */
	cJSON_AddStringToObject(e, "timeout", sb->init_fired ? "pid-ns-init" : "supervisor+pid-ns-init");
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

/* Artifacts up to inline_max bytes carry their bytes, base64: a server's
 * caller gets them in the one answer.  Opened beneath out/ without
 * following any link: the program wrote that tree. */
static void artifacts_inline(cJSON *arts, int out_dir, size_t inline_max)
{
	cJSON *a;

	cJSON_ArrayForEach(a, arts) {
		const cJSON *path = cJSON_GetObjectItemCaseSensitive(a, "path");
		struct open_how how = { .flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW,
					.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
		struct stat st;
		char *data = NULL, *b64 = NULL;
		size_t got = 0, b64len;
		int fd;

		if (!cJSON_IsString(path))
			continue;
		fd = (int)syscall(SYS_openat2, out_dir, path->valuestring, &how, sizeof(how));
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size <= inline_max &&
		    (data = malloc((size_t)st.st_size + 1)) != NULL) {
			while (got < (size_t)st.st_size) {
				ssize_t r = read(fd, data + got, (size_t)st.st_size - got);

				if (r <= 0)
					break;
				got += (size_t)r;
			}
			b64len = sodium_base64_encoded_len(got, sodium_base64_VARIANT_ORIGINAL);
			if (got == (size_t)st.st_size && (b64 = malloc(b64len)) != NULL) {
				sodium_bin2base64(b64, b64len, (const unsigned char *)data, got,
						  sodium_base64_VARIANT_ORIGINAL);
				cJSON_AddStringToObject(a, "contentBase64", b64);
			}
		}
		free(b64);
		free(data);
		close(fd);
	}
}

static void result_head(const struct sandbox *sb, cJSON *res)
{
	char hex[65];
	cJSON *pol = cJSON_AddObjectToObject(res, "policy");
	const char *app = sb->pol && sb->pol->meta.app ? sb->pol->meta.app : NULL;

	cJSON_AddStringToObject(res, "executionId", sb->id);
	/* Which agent's tools the program had; null says none was selected,
	 * which is why a program that reached for a tool found none. */
	if (sb->agent != NULL)
		cJSON_AddStringToObject(res, "agent", sb->agent);
	else
		cJSON_AddNullToObject(res, "agent");
	cJSON_AddStringToObject(pol, "app", app ? app : "");
	if (app)
		sodium_bin2hex(hex, sizeof(hex), sb->pol->sha256, 32);
	cJSON_AddStringToObject(pol, "sha256", app ? hex : "");
	cJSON_AddStringToObject(res, "runDir", sb->dir_fd >= 0 ? sb->dir : "");
}

/* A cell's out/ is a step, not a finished program's: a required output
 * not written yet is no violation of it. */
static void outputs_drop_missing(struct outputs_report *rep)
{
	size_t k = 0;

	for (size_t i = 0; i < rep->nviolations; i++) {
		if (rep->violations[i].code == OUTPUTS_MISSING_REQUIRED) {
			free(rep->violations[i].path);
			free(rep->violations[i].message);
			continue;
		}
		rep->violations[k++] = rep->violations[i];
	}
	rep->nviolations = k;
}

static int result_build(struct sandbox *sb, cJSON *res, const struct sandbox_reduce_opts *o, int cell)
{
	const struct cpol_policy *p = sb->pol;
	char where[64], rerr[512] = "", oerr[512], cerr[900];
	cJSON *result = NULL, *arts = NULL;
	struct outputs_report rep = { 0 };
	struct outputs_limits ol = { 0 };
	struct outcome_in oi;
	struct outcome oc;
	int out_dir, rr = -1;

	result_head(sb, res);
	if (sb->failed) {
		snprintf(where, sizeof(where), "exec.harness.%s", sb->stage);
		cJSON_AddStringToObject(res, "status", "error");
		cJSON_AddNullToObject(res, "exitCode");
		cJSON_AddNullToObject(res, "signal");
		/* No enforcement object: the program never ran under one. */
		cJSON_AddItemToObject(res, "error", error_json("sandbox_execution_failed", sb->msg, where));
		return OUTCOME_EXIT_HARNESS;
	}
	/* collect */
	out_dir = openat(sb->ws.fd[WS_WORKSPACE], "out", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (out_dir >= 0)
		rr = result_read(out_dir, p->limits.max_result_bytes, &result, rerr, sizeof(rerr));
	if (out_dir < 0 || outputs_collect(out_dir, p->outputs, p->noutputs, &ol, &rep, oerr, sizeof(oerr)) != 0)
		snprintf(rerr, sizeof(rerr), "outputs could not be read");
	if (cell)
		outputs_drop_missing(&rep);
	arts = outputs_artifacts_json(&rep);
	/* Before the classification: an artifact not copied is the run's
	 * error, the result otherwise kept, as a lost record is. */
	if (arts != NULL && out_dir >= 0 && o != NULL && o->copy != NULL &&
	    export_copy(out_dir, arts, o->copy, cerr, sizeof(cerr)) != 0)
		sb_fault(sb, "out", "%s", cerr);
	/* classify (outcome.c, pure) */
	oi = (struct outcome_in){ .end = sb->so.end,
				  .wstatus = sb->so.wstatus,
				  .oom_killed = sb->have_usage && sb->usage.oom_killed,
				  .nviolations = rep.nviolations,
				  .cancel_why = sb->cancel_why[0] ? sb->cancel_why : "cancelled",
				  .fault_stage = sb->faulted ? sb->fault_stage : NULL,
				  .fault_msg = sb->fault_msg,
				  .pids_limit_hits = sb->have_usage ? sb->usage.pids_max_events : 0 };
	outcome_classify(&oi, &oc);
	/* write */
	cJSON_AddStringToObject(res, "status", oc.status);
	if (oc.has_exit_code)
		cJSON_AddNumberToObject(res, "exitCode", oc.exit_code);
	else
		cJSON_AddNullToObject(res, "exitCode");
	if (oc.signal != NULL)
		cJSON_AddStringToObject(res, "signal", oc.signal);
	else
		cJSON_AddNullToObject(res, "signal");
	sb->out.buf[sb->out.len] = '\0';
	sb->err.buf[sb->err.len] = '\0';
	/* Output is bytes; JSON wants text: NULs and invalid UTF-8 become
	 * U+FFFD, counted in "replaced" (docs/runtime.md). */
	size_t rep_out = 0, rep_err = 0;
	char *t_out = utf8_sanitize(sb->out.buf, sb->out.len, &rep_out);
	char *t_err = utf8_sanitize(sb->err.buf, sb->err.len, &rep_err);
	cJSON_AddStringToObject(res, "stdout", t_out ? t_out : "");
	cJSON_AddStringToObject(res, "stderr", t_err ? t_err : "");
	free(t_out);
	free(t_err);
	cJSON *tr = cJSON_AddObjectToObject(res, "truncated");
	cJSON_AddBoolToObject(tr, "stdout", sb->out.truncated);
	cJSON_AddBoolToObject(tr, "stderr", sb->err.truncated);
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
	cJSON_AddNumberToObject(res, "durationMs", (double)sb->so.duration_ms);
	if (arts != NULL && out_dir >= 0 && o != NULL && o->inline_max > 0)
		artifacts_inline(arts, out_dir, o->inline_max);
	cJSON_AddItemToObject(res, "artifacts", arts);
	cJSON_AddItemToObject(res, "violations", outputs_violations_json(&rep));
	/* Files in out/ that no declared output matches: not an error, but
	 * a program that wrote its chart under another name learns why it is
	 * not among the artifacts. */
	cJSON_AddItemToObject(res, "undeclared", outputs_undeclared_json(&rep));
	/* The program's MIME bundles, each judged (displays.h). */
	cJSON_AddItemToObject(res, "displays", displays_collect(sb->ws.fd[WS_WORKSPACE]));
	cJSON_AddItemToObject(res, "toolCalls", bridge_calls_json(sb->bridge));
	cJSON_AddNumberToObject(res, "peerRefusals", (double)bridge_peer_refusals(sb->bridge));
	cJSON *u = cJSON_AddObjectToObject(res, "usage");
	const struct rusage *ru = &sb->so.ru;
	/* The cgroup counts every process that ran in it, those killed at
	 * the timeout or a cancel included; rusage only the executor and
	 * what it reaped, so it says which (docs/runtime.md, "The result"). */
	if (sb->have_usage && sb->usage.have_cpu) {
		cJSON_AddNumberToObject(u, "cpuMs", (double)(sb->usage.cpu_usec / 1000));
		cJSON_AddStringToObject(u, "cpuSource", "cgroup-v2");
	} else {
		cJSON_AddNumberToObject(u, "cpuMs", (double)(ru->ru_utime.tv_sec * 1000 + ru->ru_utime.tv_usec / 1000 +
							     ru->ru_stime.tv_sec * 1000 + ru->ru_stime.tv_usec / 1000));
		cJSON_AddStringToObject(u, "cpuSource", "rusage");
	}
	cJSON_AddNumberToObject(u, "maxRssKiB", (double)ru->ru_maxrss);
	/* Only a pids cgroup counts refusals; RLIMIT_NPROC keeps no count. */
	if (sb->have_usage && sb->cg.pids_kind != CG_NONE)
		cJSON_AddNumberToObject(u, "pidsLimitHits", (double)sb->usage.pids_max_events);
	if (sb->have_usage && sb->usage.mem_peak)
		cJSON_AddNumberToObject(u, "memoryPeakBytes", (double)sb->usage.mem_peak);
	/* How the CPU quota held, from its cgroup's cpu.stat: enforcement
	 * periods the tree ran in, those it ran out of quota, the wait. */
	if (sb->have_usage && sb->usage.have_throttle) {
		cJSON_AddNumberToObject(u, "cpuPeriods", (double)sb->usage.cpu_periods);
		cJSON_AddNumberToObject(u, "cpuThrottledPeriods", (double)sb->usage.cpu_throttled);
		cJSON_AddNumberToObject(u, "cpuThrottledMs", (double)(sb->usage.cpu_throttled_usec / 1000));
	}
	cJSON_AddNumberToObject(u, "workspaceDeltaBytes",
				(double)(sb->so.ws_peak > sb->so.ws_baseline ? sb->so.ws_peak - sb->so.ws_baseline : 0));
	cJSON_AddNumberToObject(u, "workspaceEntries",
				(double)(sb->so.ws_inodes_peak > sb->so.ws_inodes_baseline
						 ? sb->so.ws_inodes_peak - sb->so.ws_inodes_baseline
						 : 0));
	cJSON_AddItemToObject(res, "enforcement", enforcement_json(sb));
	if (oc.error_code != NULL)
		cJSON_AddItemToObject(res, "error", error_json(oc.error_code, oc.error_message,
							       oc.error_where[0] ? oc.error_where : NULL));
	else
		cJSON_AddNullToObject(res, "error");
	if (out_dir >= 0)
		close(out_dir);
	outputs_report_free(&rep);
	return oc.exit_code_run;
}

/* A kept run directory gets copies of out/ and logs/executor/ (the
 * workspace itself goes with the sandbox): plain files and directories
 * only, owned by the supervisor; work/ is the program's scratch and is not
 * kept.  What was skipped is noted in supervisor.log. */
static void rundir_keep(struct sandbox *sb)
{
	static const char *const parts[] = { "out", "logs/executor" };
	char err[512];
	size_t used = 0;

	if (sb->ws.fd[WS_WORKSPACE] < 0)
		return;
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		unsigned skipped = 0;
		int dst = -1, rc = -1;

		if (mkdirat(sb->dir_fd, parts[i], 0700) == 0 &&
		    (dst = openat(sb->dir_fd, parts[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0)
			rc = ws_copy_tree(&sb->ws, parts[i], dst, 32, &skipped, err, sizeof(err));
		else
			snprintf(err, sizeof(err), "%s", strerror(errno));
		if (dst >= 0)
			close(dst);
		if ((rc != 0 || skipped) && used < sizeof(sb->kept_note))
			used += (size_t)snprintf(sb->kept_note + used, sizeof(sb->kept_note) - used,
						 "%skept %s/: %s, %u links, special files or deep entries skipped",
						 used ? "; " : "", parts[i], rc == 0 ? "copied" : err, skipped);
	}
}

/* logs/supervisor.log: what the supervisor decided and why, for an
 * operator reading a kept run directory (the result has the evidence).
 * Into the file made at prepare: 0, or an errno. */
static int rundir_log(struct sandbox *sb, int rc)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int e;

	if (f == NULL)
		return ENOMEM;
	fprintf(f, "execution %s app %s\n", sb->id, sb->pol && sb->pol->meta.app ? sb->pol->meta.app : "?");
	fprintf(f, "caller %s, executor uid %u gid %u -> host %u/%u\n", sb->h->rootless ? "rootless" : "root",
		sb->pol ? sb->pol->exec.uid : 0, sb->pol ? sb->pol->exec.gid : 0, (unsigned)sb->host_uid,
		(unsigned)sb->host_gid);
	if (sb->cg_made)
		fprintf(f, "cgroups: memory %s, pids %s, cpu quota %s%s%s\n", cgroup_kind_name(sb->cg.mem_kind),
			cgroup_kind_name(sb->cg.pids_kind), cgroup_kind_name(sb->cg.quota_kind), sb->cg.note[0] ? "; " : "",
			sb->cg.note);
	if (sb->failed)
		fprintf(f, "harness error at %s: %s\n", sb->stage, sb->msg);
	if (sb->faulted)
		fprintf(f, "record lost at %s: %s\n", sb->fault_stage, sb->fault_msg);
	if (sb->kept_note[0])
		fprintf(f, "%s\n", sb->kept_note);
	fprintf(f, "exit %d\n", rc);
	e = fclose(f) != 0 || text == NULL ? ENOMEM : rundir_put(sb->log_fd, text, len);
	free(text);
	return e;
}

/* result.json: written whole into the file made at prepare, then renamed
 * into place (rename: a reader sees no result or all of it).  0, or an
 * errno. */
static int rundir_result(struct sandbox *sb, const cJSON *res, int renamed)
{
	char *text = cJSON_PrintUnformatted(res);
	int e = text == NULL ? ENOMEM : rundir_put(sb->result_fd, text, strlen(text));

	free(text);
	if (e == 0 && !renamed && renameat(sb->dir_fd, "result.json.tmp", sb->dir_fd, "result.json") != 0)
		e = errno;
	return e;
}

/* A record lost after the result was built: the result becomes the error
 * (outcome.c decides), with its evidence kept.  A harness error recorded
 * before the program ran stays the one reported. */
static void result_refault(struct sandbox *sb, cJSON *res, int *exit_code)
{
	struct outcome_in oi = { .end = sb->so.end,
				 .wstatus = sb->so.wstatus,
				 .fault_stage = sb->fault_stage,
				 .fault_msg = sb->fault_msg };
	struct outcome oc;

	if (sb->failed)
		return;
	outcome_classify(&oi, &oc);
	cJSON_ReplaceItemInObjectCaseSensitive(res, "status", cJSON_CreateString(oc.status));
	cJSON_ReplaceItemInObjectCaseSensitive(res, "error", error_json(oc.error_code, oc.error_message, oc.error_where));
	*exit_code = oc.exit_code_run;
}

/*
 * The kept run directory's last records.  Every write is checked: one that
 * fails makes the run an error (stage rundir), which the result printed
 * by the caller says even when result.json itself is what failed; a
 * result.json that would claim otherwise is removed.
 */
static void rundir_finish(struct sandbox *sb, cJSON *res, int *exit_code)
{
	int e, result_ok;

	e = rundir_result(sb, res, 0);
	result_ok = e == 0;
	if (e != 0) {
		sb_fault(sb, "rundir", "%.900s/result.json could not be written: %s", sb->dir, strerror(e));
		result_refault(sb, res, exit_code);
		unlinkat(sb->dir_fd, "result.json.tmp", 0);
	}
	e = rundir_log(sb, *exit_code);
	if (e != 0) {
		int first = !sb->faulted;

		sb_fault(sb, "rundir", "%.900s/logs/supervisor.log could not be written: %s", sb->dir, strerror(e));
		if (first) {
			result_refault(sb, res, exit_code);
			if (result_ok && rundir_result(sb, res, 1) != 0)
				unlinkat(sb->dir_fd, "result.json", 0);
		}
	}
}

cJSON *sandbox_reduce(struct sandbox *sb, const struct sandbox_reduce_opts *o, int *exit_code)
{
	cJSON *res = cJSON_CreateObject();
	char stage[16], msg[600];

	if (res == NULL)
		return NULL;
	/* A sandbox reduced before it ran to its end (a caller gave up)
	 * never reports a half-run as a result. */
	if (!sb->failed && sb->state != SB_WAITED)
		sb_fail(sb, "start", "the sandbox was not run");
	/* The bridge is stopped (wait, or a failed start): its records are
	 * final, and one it could not write is the run's error. */
	if (bridge_failed(sb->bridge, stage, sizeof(stage), msg, sizeof(msg)))
		sb_fault(sb, stage, "%s", msg);
	*exit_code = result_build(sb, res, o, 0);
	if (sb->dir_fd >= 0) {
		rundir_keep(sb);
		rundir_finish(sb, res, exit_code);
		rundir_trim(sb->audit_fd);
		rundir_trim(sb->log_fd);
		rundir_trim(sb->result_fd);
	}
	return res;
}

/* ---- sessions: cells -------------------------------------------------------- */

/* CPU time (ms) of the executor's processes from /proc, where no cgroup
 * counts it (rootless without a delegated tree): init's and its
 * children's own and reaped time, so a process still running below the
 * program counts once it is reaped. */
static int proc_cpu_ms(pid_t pid, uint64_t *ms)
{
	char path[96], buf[4096], *p;
	unsigned long long ticks = 0;
	long hz = sysconf(_SC_CLK_TCK);
	pid_t pids[64];
	unsigned np = 0;
	FILE *f;

	pids[np++] = pid;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	if ((f = fopen(path, "re")) != NULL) {
		int c;

		while (np < 64 && fscanf(f, "%d", &c) == 1)
			pids[np++] = (pid_t)c;
		fclose(f);
	}
	for (unsigned i = 0; i < np; i++) {
		unsigned long long v[4];
		size_t got;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pids[i]);
		if ((f = fopen(path, "re")) == NULL)
			continue;
		got = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[got] = '\0';
		/* Fields 14 to 17 (utime, stime, cutime, cstime), counted
		 * after the command name, which ends at the last ')'. */
		if ((p = strrchr(buf, ')')) == NULL ||
		    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu", &v[0], &v[1], &v[2],
			   &v[3]) != 4)
			continue;
		ticks += v[0] + v[1] + v[2] + v[3];
	}
	if (hz <= 0 || np == 0)
		return -1;
	*ms = ticks * 1000u / (unsigned long long)hz;
	return 0;
}

/* The session's CPU so far: the cgroup's when it counts it, which holds
 * every process the session ever ran. */
static int sb_cpu_ms(void *arg, uint64_t *ms)
{
	struct sandbox *sb = arg;
	struct cg_usage u;
	char err[256];

	if (sb->cg_made && cgroup_usage(&sb->cg, &u, err, sizeof(err)) == 0 && u.have_cpu) {
		sb->cell.cpu_cgroup = 1;
		*ms = u.cpu_usec / 1000;
		return 0;
	}
	sb->cell.cpu_cgroup = 0;
	return sb->pid > 0 ? proc_cpu_ms(sb->pid, ms) : -1;
}

/* The session's CPU since its start (cell.h's cpu_now). */
static int sb_session_cpu_ms(void *arg, uint64_t *ms)
{
	struct sandbox *sb = arg;
	uint64_t raw = 0;

	if (sb_cpu_ms(sb, &raw) != 0)
		return -1;
	*ms = raw > sb->cell.cpu_base_ms ? raw - sb->cell.cpu_base_ms : 0;
	return 0;
}

static const char *cell_end_name(enum cell_end e)
{
	static const char *const names[] = { "done",	      "raised",		   "exited",
					     "timed_out",     "cancelled",	   "workspace_limit",
					     "session_workspace", "session_cpu",	   "broken" };

	return (unsigned)e < sizeof(names) / sizeof(names[0]) ? names[e] : "broken";
}

/* A cell that did not complete ends the executor: killed through init
 * (supervise.h) and reaped, its last output read, the bridge stopped.
 * One whose interpreter ended by itself is only reaped. */
static void cell_end_executor(struct sandbox *sb, const struct cell_out *co)
{
	static const char *const why[] = {
		[CELL_SESSION_WS] = "the session's workspace passed its bound",
		[CELL_SESSION_CPU] = "the session's CPU passed its bound",
		[CELL_BROKEN] = "the session's cell channel was broken (the program wrote to or closed fd 3)",
	};
	uint64_t one = 1;
	int efd = -1;

	if (co->end != CELL_EXITED && (efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) >= 0 &&
	    write(efd, &one, sizeof(one)) != sizeof(one)) {
		close(efd);
		efd = -1;
	}
	if (co->end < sizeof(why) / sizeof(why[0]) && why[co->end] != NULL && !sb->cancel_why[0])
		sandbox_cancel_reason(sb, why[co->end]);
	sandbox_wait(sb, efd);
	if (efd >= 0)
		close(efd);
	if (co->end == CELL_TIMED_OUT)
		sb->so.end = SUP_TIMED_OUT;
	else if (co->end == CELL_WS_BREACH)
		sb->so.end = SUP_WS_BREACH;
}

/* A cell's start (its captures emptied, its followers ev set; NULL: none)
 * or end (start 0: none), under the lock the bridge's threads take to tell
 * a call (sb_on_call()).  Past the end, what a thread the cell left
 * writes or calls waits, untold, for the next cell. */
static void cell_follow(struct sandbox *sb, int start, const struct sandbox_events *ev)
{
	pthread_mutex_lock(&sb->cap_lock);
	if (start) {
		sb->out.len = sb->err.len = 0;
		sb->out.truncated = sb->err.truncated = 0;
	}
	if (start && ev != NULL)
		sb->ev = *ev;
	else
		memset(&sb->ev, 0, sizeof(sb->ev));
	pthread_mutex_unlock(&sb->cap_lock);
}

int sandbox_cell(struct sandbox *sb, const char *code, size_t len, const struct sandbox_cell_opts *o,
		 struct sandbox_cell_info *info)
{
	struct cell_cfg cfg;
	struct cell_out co;
	struct ws_usage u = { 0, 0 };
	uint64_t cpu0 = 0, cpu1 = 0;
	char buf[512];

	memset(info, 0, sizeof(*info));
	info->end = "error";
	if (sb->failed || sb->state != SB_STARTED || !sb->session) {
		info->over = 1;
		return -1;
	}
	if (len > sb->pol->limits.max_code_bytes)
		return -1;
	cell_follow(sb, 1, o->events);
	sb->cancel_why[0] = '\0';
	sb->cell.index++;
	sb->cell.calls_from = bridge_calls_listed(sb->bridge);
	sb_session_cpu_ms(sb, &cpu0);
	cfg = (struct cell_cfg){ .chan_fd = sb->fd_start,
				 .pidfd = sb->pidfd,
				 .cancel_fd = o->cancel_fd,
				 .timeout_ms = o->timeout_ms != 0 && o->timeout_ms < sb->pol->limits.timeout_ms
						       ? o->timeout_ms
						       : sb->pol->limits.timeout_ms,
				 .monitor_ms = sb->pol->limits.monitor_ms,
				 .ws = &sb->ws,
				 .ws_bytes_max = sb->ws_bytes_max,
				 .ws_inodes_max = sb->ws_inodes_max,
				 .session_ws_max = o->ws_max_bytes,
				 .cpu_now = o->cpu_max_ms ? sb_session_cpu_ms : NULL,
				 .cpu_arg = sb,
				 .cpu_max_ms = o->cpu_max_ms };
	if (sb->ev.started != NULL)
		sb->ev.started(sb->ev.arg, sb->id);
	if (cell_run(&cfg, code, len, &sb->out, &sb->err, &co, buf, sizeof(buf)) != 0) {
		sb_fail(sb, "supervise", "%s", buf);
		child_kill(sb);
		cell_follow(sb, 0, NULL);
		info->over = 1;
		return -1;
	}
	sb->cell.end = co.end;
	sb_session_cpu_ms(sb, &cpu1);
	if (!cell_end_continues(co.end)) {
		cell_end_executor(sb, &co);
		/* the cgroup's last count, the kill's included */
		if (sb->have_usage && sb->usage.have_cpu && sb->usage.cpu_usec / 1000 > sb->cell.cpu_base_ms)
			cpu1 = sb->usage.cpu_usec / 1000 - sb->cell.cpu_base_ms;
	} else {
		memset(&sb->so, 0, sizeof(sb->so));
		sb->so.end = SUP_EXITED;
		/* What the loader gives a program that ends so. */
		sb->so.wstatus = (co.end == CELL_RAISED ? 1 : 0) << 8;
		sb->have_usage = sb->cg_made && cgroup_usage(&sb->cg, &sb->usage, buf, sizeof(buf)) == 0;
	}
	sb->so.duration_ms = co.duration_ms;
	sb->so.ws_baseline = co.ws_baseline;
	sb->so.ws_peak = co.ws_peak;
	sb->so.ws_inodes_baseline = co.ws_inodes_baseline;
	sb->so.ws_inodes_peak = co.ws_inodes_peak;
	sb->cell.cpu_ms = cpu1 > cpu0 ? cpu1 - cpu0 : 0;
	sb->cell.cpu_total_ms = cpu1;
	ws_usage(&sb->ws, &u);
	info->index = sb->cell.index;
	info->over = !cell_end_continues(co.end);
	info->end = cell_end_name(co.end);
	info->cpu_ms = sb->cell.cpu_ms;
	info->cpu_total_ms = sb->cell.cpu_total_ms;
	info->cpu_source = sb->cell.cpu_cgroup ? "cgroup-v2" : "proc";
	info->ws_bytes = u.bytes;
	cell_follow(sb, 0, NULL);
	return 0;
}

cJSON *sandbox_cell_result(struct sandbox *sb, const struct sandbox_reduce_opts *o)
{
	cJSON *res = cJSON_CreateObject(), *u, *err = NULL;
	const char *msg = NULL;

	if (res == NULL)
		return NULL;
	if (!sb->failed && (!sb->session || sb->cell.index == 0))
		sb_fail(sb, "start", "no cell was run");
	result_build(sb, res, o, 1);
	if (sb->failed)
		return res;
	cJSON_ReplaceItemInObjectCaseSensitive(res, "toolCalls", bridge_calls_from(sb->bridge, sb->cell.calls_from));
	u = cJSON_GetObjectItemCaseSensitive(res, "usage");
	cJSON_ReplaceItemInObjectCaseSensitive(u, "cpuMs", cJSON_CreateNumber((double)sb->cell.cpu_ms));
	cJSON_ReplaceItemInObjectCaseSensitive(u, "cpuSource",
					       cJSON_CreateString(sb->cell.cpu_cgroup ? "cgroup-v2" : "proc"));
	/* What outcome.c cannot know: the session's own bounds, a broken
	 * channel, a cell that raised (not an exit). */
	switch (sb->cell.end) {
	case CELL_SESSION_WS:
	case CELL_SESSION_CPU:
		cJSON_ReplaceItemInObjectCaseSensitive(res, "status", cJSON_CreateString("limit_exceeded"));
		err = error_json("session_limit", sb->cancel_why, NULL);
		break;
	case CELL_BROKEN:
		cJSON_ReplaceItemInObjectCaseSensitive(res, "status", cJSON_CreateString("failed"));
		err = error_json("program_failed", sb->cancel_why, NULL);
		break;
	case CELL_RAISED:
		msg = "the cell raised an exception (its traceback is on stderr); the session goes on";
		break;
	default:
		break;
	}
	if (msg != NULL && cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(res, "error")))
		err = error_json(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(res, "error"),
								  "code")->valuestring,
				 msg, NULL);
	if (err != NULL)
		cJSON_ReplaceItemInObjectCaseSensitive(res, "error", err);
	return res;
}

/* ---- destroy -------------------------------------------------------------- */

void sandbox_destroy(struct sandbox *sb)
{
	char err[512];

	if (sb == NULL)
		return;
	/* Reverse order of prepare.  Nothing survives a sandbox: processes
	 * (the pid namespace dies with its pid 1; the cgroup is emptied
	 * again to be sure), tools, cgroups, the private filesystems. */
	child_kill(sb);
	bridge_stop(sb->bridge);
	if (sb->cg_made)
		cgroup_destroy(&sb->cg, err, sizeof(err));
	ws_close(&sb->ws);
	/* Last: every process and file of the executor's ids is gone now. */
	hostid_release(&sb->leases[1]);
	hostid_release(&sb->leases[0]);
	bridge_free(sb->bridge);
	for (int *fd = (int[]){ sb->listen_fd, sb->audit_fd, sb->log_fd, sb->result_fd, sb->dir_fd, sb->pidfd,
				 sb->fd_errpipe, sb->fd_sync, sb->fd_start, sb->fd_init, sb->out.fd, sb->err.fd, -2 };
	     *fd != -2; fd++)
		if (*fd >= 0)
			close(*fd);
	if (sb->cap_lock_ok)
		pthread_mutex_destroy(&sb->cap_lock);
	free(sb->out.buf);
	free(sb->err.buf);
	free(sb->loader);
	cJSON_Delete(sb->context);
	free(sb->agent);
	free(sb->run_dir_arg);
	free(sb);
}
