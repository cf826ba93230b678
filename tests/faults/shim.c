/* SPDX-License-Identifier: Apache-2.0 */
/*
 * shim.c - the fault suite's LD_PRELOAD fault injector (README.md):
 * preloaded into `cordon run` or `cordon serve`, it makes the Nth call of
 * one write-side operation fail as a full, broken or read-only disk would,
 * or SIGKILLs the process at that call, so that every place the
 * supervisor and the ledger write can be made to fail in turn.  Test code
 * only: the Makefile builds it into build/tests/faults/; nothing shipped
 * links it.
 *
 *   CORDON_FAULT=SPEC[,SPEC...]
 *     SPEC = ACTION:OP:N[:PATH]
 *     ACTION  an errno (ENOSPC, EIO, EROFS, or a number): the call fails
 *             with it; kill: SIGKILL to the process at that call;
 *             count: never fails, only counts
 *     OP      write pwrite writev fsync fdatasync ftruncate fallocate
 *             open (open/openat with O_CREAT) rename link mkdir, or
 *             sqlite's own write paths through the VFS wrapper below:
 *             vfs_write vfs_sync vfs_truncate; any: every libc op above
 *     N       the Nth matching call (1-based) acts; N+ : that one and
 *             every later one (a disk that stays full); 0: none
 *     PATH    only calls on a file whose path holds PATH (the fd's
 *             /proc/self/fd link, the path argument, or sqlite's file
 *             name); @N: only fd N (stdout is @1)
 *   CORDON_FAULT_ARM=FILE    calls are counted (and fail) only while FILE
 *             exists: a long-lived server is armed for one execution
 *   CORDON_FAULT_COUNT=FILE  one little-endian uint64 per SPEC, the calls
 *             that matched it so far, kept in FILE through a shared
 *             mapping (so a process that is SIGKILLed or ends by _exit
 *             has still counted)
 *
 * Only the process that loaded the shim acts: its clone children (the
 * sandbox's setup, a tool's child between clone and exec) run the same
 * code in a copy or in shared memory, and a fault there would be a fault
 * of the test, not of the supervisor.  Calls are counted across threads
 * with atomics; the wrappers allocate nothing and print nothing.
 *
 * The SQLite VFS wrapper is registered as the default VFS at the first
 * sqlite3_open_v2 (interposed here), not from the constructor: calling
 * into SQLite from a constructor would initialise it before the program
 * could configure it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

enum op {
	OP_WRITE, OP_PWRITE, OP_WRITEV, OP_FSYNC, OP_FDATASYNC, OP_FTRUNCATE, OP_FALLOCATE,
	OP_OPEN, OP_RENAME, OP_LINK, OP_MKDIR, OP_VFS_WRITE, OP_VFS_SYNC, OP_VFS_TRUNCATE,
	OP_ANY, OP_COUNT
};

static const char *const op_names[OP_COUNT] = {
	"write", "pwrite", "writev", "fsync", "fdatasync", "ftruncate", "fallocate",
	"open", "rename", "link", "mkdir", "vfs_write", "vfs_sync", "vfs_truncate", "any",
};

#define MAX_SPECS 32
#define ACT_COUNT 0
#define ACT_KILL -1

struct spec {
	int op;
	int action;         /* an errno, ACT_KILL or ACT_COUNT */
	uint64_t n;         /* 0: never */
	int sticky;         /* N+ */
	int fd;             /* @N, else -1 */
	char path[256];     /* "" : any path */
	uint64_t local;     /* the counter when there is no count file */
	uint64_t *count;    /* &local, or a slot of the shared mapping */
};

static struct spec specs[MAX_SPECS];
static int nspecs;
static pid_t owner;
static char arm[1024];

static int errno_of(const char *s)
{
	if (strcmp(s, "ENOSPC") == 0)
		return ENOSPC;
	if (strcmp(s, "EIO") == 0)
		return EIO;
	if (strcmp(s, "EROFS") == 0)
		return EROFS;
	if (strcmp(s, "EDQUOT") == 0)
		return EDQUOT;
	if (strcmp(s, "kill") == 0)
		return ACT_KILL;
	if (strcmp(s, "count") == 0)
		return ACT_COUNT;
	return atoi(s) > 0 ? atoi(s) : -2;
}

/* One SPEC (a writable copy); 0 or -1 when it does not parse (ignored:
 * a typo must show as a run that did not fail, which the driver checks). */
static int spec_parse(char *text, struct spec *s)
{
	char *f[4] = { NULL, NULL, NULL, NULL }, *save = NULL, *end = NULL;
	int i, k = 0;

	for (char *t = strtok_r(text, ":", &save); t != NULL && k < 4; t = strtok_r(NULL, k == 3 ? "" : ":", &save))
		f[k++] = t;
	if (k < 3)
		return -1;
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->action = errno_of(f[0]);
	if (s->action == -2)
		return -1;
	s->op = -1;
	for (i = 0; i < OP_COUNT; i++)
		if (strcmp(f[1], op_names[i]) == 0)
			s->op = i;
	if (s->op < 0)
		return -1;
	s->n = strtoull(f[2], &end, 10);
	s->sticky = end != NULL && *end == '+';
	if (f[3] != NULL && f[3][0] == '@')
		s->fd = atoi(f[3] + 1);
	else if (f[3] != NULL)
		snprintf(s->path, sizeof(s->path), "%s", f[3]);
	s->count = &s->local;
	return 0;
}

/* The shared counters: FILE sized to one slot per spec and mapped, so the
 * driver reads what was counted even of a process that died by SIGKILL. */
static void counters_map(const char *file)
{
	uint64_t *slots;
	int fd = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0)
		return;
	if (ftruncate(fd, (off_t)(MAX_SPECS * sizeof(uint64_t))) == 0) {
		slots = mmap(NULL, MAX_SPECS * sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (slots != MAP_FAILED)
			for (int i = 0; i < nspecs; i++)
				specs[i].count = &slots[i];
	}
	close(fd);
}

__attribute__((constructor)) static void shim_init(void)
{
	const char *env = getenv("CORDON_FAULT"), *cf = getenv("CORDON_FAULT_COUNT"), *a = getenv("CORDON_FAULT_ARM");
	char buf[2048], *save = NULL;

	owner = (pid_t)syscall(SYS_getpid);
	if (env == NULL)
		return;
	if (a != NULL)
		snprintf(arm, sizeof(arm), "%s", a);
	snprintf(buf, sizeof(buf), "%s", env);
	for (char *t = strtok_r(buf, ",", &save); t != NULL && nspecs < MAX_SPECS; t = strtok_r(NULL, ",", &save))
		if (spec_parse(t, &specs[nspecs]) == 0)
			nspecs++;
	if (cf != NULL && *cf != '\0')
		counters_map(cf);
}

/* Whether path (or fd's path when path is NULL) is the one s names. */
static int spec_path_matches(const struct spec *s, int fd, const char *path)
{
	char link[64], target[4096];
	ssize_t n;

	if (s->fd >= 0)
		return fd == s->fd;
	if (s->path[0] == '\0')
		return 1;
	if (path == NULL) {
		if (fd < 0)
			return 0;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			return 0;
		target[n] = '\0';
		path = target;
	}
	return strstr(path, s->path) != NULL;
}

static int op_is_libc(int op)
{
	return op < OP_VFS_WRITE;
}

/* 0 to go on; else the errno the call fails with (after a kill action
 * the process is gone).  path2: a second path (rename's new name). */
static int shim_act(int op, int fd, const char *path, const char *path2)
{
	if (nspecs == 0 || (pid_t)syscall(SYS_getpid) != owner)
		return 0;
	if (arm[0] != '\0' && syscall(SYS_faccessat, AT_FDCWD, arm, F_OK, 0) != 0)
		return 0;
	for (int i = 0; i < nspecs; i++) {
		struct spec *s = &specs[i];
		uint64_t k;

		if (s->op != op && !(s->op == OP_ANY && op_is_libc(op)))
			continue;
		if (!spec_path_matches(s, fd, path) && (path2 == NULL || !spec_path_matches(s, -1, path2)))
			continue;
		k = __atomic_add_fetch(s->count, 1, __ATOMIC_SEQ_CST);
		if (s->action == ACT_COUNT || s->n == 0 || k < s->n || (k > s->n && !s->sticky))
			continue;
		if (s->action == ACT_KILL)
			syscall(SYS_kill, owner, SIGKILL);
		return s->action;
	}
	return 0;
}

/* The next definition of a libc function, looked up once. */
#define NEXT(name)                                                                   \
	static __typeof__(&name) next_##name;                                        \
	if (next_##name == NULL)                                                     \
		next_##name = (__typeof__(&name))dlsym(RTLD_NEXT, #name)

#define FAIL_IF(op, fd, path, path2)                                                 \
	do {                                                                         \
		int e_ = shim_act(op, fd, path, path2);                              \
		if (e_ != 0) {                                                       \
			errno = e_;                                                  \
			return -1;                                                   \
		}                                                                    \
	} while (0)

ssize_t write(int fd, const void *buf, size_t n)
{
	NEXT(write);
	FAIL_IF(OP_WRITE, fd, NULL, NULL);
	return next_write(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	NEXT(pwrite);
	FAIL_IF(OP_PWRITE, fd, NULL, NULL);
	return next_pwrite(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
	NEXT(pwrite64);
	FAIL_IF(OP_PWRITE, fd, NULL, NULL);
	return next_pwrite64(fd, buf, n, off);
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	NEXT(writev);
	FAIL_IF(OP_WRITEV, fd, NULL, NULL);
	return next_writev(fd, iov, cnt);
}

int fsync(int fd)
{
	NEXT(fsync);
	FAIL_IF(OP_FSYNC, fd, NULL, NULL);
	return next_fsync(fd);
}

int fdatasync(int fd)
{
	NEXT(fdatasync);
	FAIL_IF(OP_FDATASYNC, fd, NULL, NULL);
	return next_fdatasync(fd);
}

int ftruncate(int fd, off_t len)
{
	NEXT(ftruncate);
	FAIL_IF(OP_FTRUNCATE, fd, NULL, NULL);
	return next_ftruncate(fd, len);
}

int ftruncate64(int fd, off64_t len)
{
	NEXT(ftruncate64);
	FAIL_IF(OP_FTRUNCATE, fd, NULL, NULL);
	return next_ftruncate64(fd, len);
}

int fallocate(int fd, int mode, off_t off, off_t len)
{
	NEXT(fallocate);
	FAIL_IF(OP_FALLOCATE, fd, NULL, NULL);
	return next_fallocate(fd, mode, off, len);
}

int fallocate64(int fd, int mode, off64_t off, off64_t len)
{
	NEXT(fallocate64);
	FAIL_IF(OP_FALLOCATE, fd, NULL, NULL);
	return next_fallocate64(fd, mode, off, len);
}

int posix_fallocate(int fd, off_t off, off_t len)
{
	int e;

	NEXT(posix_fallocate);
	e = shim_act(OP_FALLOCATE, fd, NULL, NULL);
	return e != 0 ? e : next_posix_fallocate(fd, off, len);
}

/* A call on a path relative to dirfd: the fd's path is matched for a
 * relative name (the directory it is made in), the name itself too. */
static int at_act(int op, int dirfd, const char *path, const char *path2)
{
	return path[0] == '/' || dirfd == AT_FDCWD ? shim_act(op, -1, path, path2) : shim_act(op, dirfd, NULL, path);
}

/* open and openat: only with O_CREAT (a create is a write to the
 * directory; a plain open is not a write site).  The mode is read only
 * when the flags say there is one, as libc does. */
#define OPEN_LIKE(name, dirfd_decl, dirfd, ...)                                      \
	int name(dirfd_decl const char *path, int flags, ...)                        \
	{                                                                            \
		va_list ap;                                                          \
		mode_t mode = 0;                                                     \
		int e = 0;                                                           \
                                                                                     \
		NEXT(name);                                                          \
		va_start(ap, flags);                                                 \
		if (flags & (O_CREAT | __O_TMPFILE))                                 \
			mode = (mode_t)va_arg(ap, int);                              \
		va_end(ap);                                                          \
		if ((flags & O_CREAT) && (e = at_act(OP_OPEN, dirfd, path, NULL)) != 0) { \
			errno = e;                                                   \
			return -1;                                                   \
		}                                                                    \
		return next_##name(__VA_ARGS__);                                     \
	}

#define NO_DIRFD
#define WITH_DIRFD int dirfd,
OPEN_LIKE(open, NO_DIRFD, AT_FDCWD, path, flags, mode)
OPEN_LIKE(open64, NO_DIRFD, AT_FDCWD, path, flags, mode)
OPEN_LIKE(openat, WITH_DIRFD, dirfd, dirfd, path, flags, mode)
OPEN_LIKE(openat64, WITH_DIRFD, dirfd, dirfd, path, flags, mode)

int rename(const char *from, const char *to)
{
	NEXT(rename);
	FAIL_IF(OP_RENAME, -1, from, to);
	return next_rename(from, to);
}

int renameat(int fd1, const char *from, int fd2, const char *to)
{
	int e;

	NEXT(renameat);
	if ((e = at_act(OP_RENAME, fd1, from, to)) != 0)
		return errno = e, -1;
	return next_renameat(fd1, from, fd2, to);
}

int renameat2(int fd1, const char *from, int fd2, const char *to, unsigned int flags)
{
	int e;

	NEXT(renameat2);
	if ((e = at_act(OP_RENAME, fd1, from, to)) != 0)
		return errno = e, -1;
	return next_renameat2(fd1, from, fd2, to, flags);
}

int link(const char *from, const char *to)
{
	NEXT(link);
	FAIL_IF(OP_LINK, -1, to, from);
	return next_link(from, to);
}

int linkat(int fd1, const char *from, int fd2, const char *to, int flags)
{
	int e;

	NEXT(linkat);
	if ((e = at_act(OP_LINK, fd2, to, from)) != 0)
		return errno = e, -1;
	return next_linkat(fd1, from, fd2, to, flags);
}

int mkdir(const char *path, mode_t mode)
{
	NEXT(mkdir);
	FAIL_IF(OP_MKDIR, -1, path, NULL);
	return next_mkdir(path, mode);
}

int mkdirat(int dirfd, const char *path, mode_t mode)
{
	int e;

	NEXT(mkdirat);
	if ((e = at_act(OP_MKDIR, dirfd, path, NULL)) != 0)
		return errno = e, -1;
	return next_mkdirat(dirfd, path, mode);
}

/* ---- the SQLite VFS wrapper ---------------------------------------------- */

/* A file of the wrapper: our methods, then the real VFS's file, whose
 * size the real VFS gives (szOsFile).  name: sqlite keeps the name it
 * passed to xOpen alive until xClose. */
struct vfs_file {
	sqlite3_file base;
	const char *name;
	sqlite3_file *real;
};

static sqlite3_vfs shim_vfs;
static sqlite3_vfs *real_vfs;
static sqlite3_io_methods shim_io;

#define REAL(f) (((struct vfs_file *)(f))->real)

/* An errno as the result the unix VFS gives for it at that operation. */
static int vfs_code(int e, int ioerr)
{
	return e == ENOSPC || e == EDQUOT ? SQLITE_FULL : ioerr;
}

static int vfs_act(sqlite3_file *f, int op)
{
	return shim_act(op, -1, ((struct vfs_file *)f)->name ? ((struct vfs_file *)f)->name : "", NULL);
}

static int vx_close(sqlite3_file *f)
{
	int rc = REAL(f)->pMethods ? REAL(f)->pMethods->xClose(REAL(f)) : SQLITE_OK;

	f->pMethods = NULL;
	return rc;
}

static int vx_read(sqlite3_file *f, void *b, int n, sqlite3_int64 o)
{
	return REAL(f)->pMethods->xRead(REAL(f), b, n, o);
}

static int vx_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 o)
{
	int e = vfs_act(f, OP_VFS_WRITE);

	return e ? vfs_code(e, SQLITE_IOERR_WRITE) : REAL(f)->pMethods->xWrite(REAL(f), b, n, o);
}

static int vx_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	int e = vfs_act(f, OP_VFS_TRUNCATE);

	return e ? vfs_code(e, SQLITE_IOERR_TRUNCATE) : REAL(f)->pMethods->xTruncate(REAL(f), size);
}

static int vx_sync(sqlite3_file *f, int flags)
{
	int e = vfs_act(f, OP_VFS_SYNC);

	return e ? vfs_code(e, SQLITE_IOERR_FSYNC) : REAL(f)->pMethods->xSync(REAL(f), flags);
}

static int vx_size(sqlite3_file *f, sqlite3_int64 *s)
{
	return REAL(f)->pMethods->xFileSize(REAL(f), s);
}

static int vx_lock(sqlite3_file *f, int l)
{
	return REAL(f)->pMethods->xLock(REAL(f), l);
}

static int vx_unlock(sqlite3_file *f, int l)
{
	return REAL(f)->pMethods->xUnlock(REAL(f), l);
}

static int vx_reserved(sqlite3_file *f, int *r)
{
	return REAL(f)->pMethods->xCheckReservedLock(REAL(f), r);
}

static int vx_fcntl(sqlite3_file *f, int op, void *arg)
{
	return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}

static int vx_sector(sqlite3_file *f)
{
	return REAL(f)->pMethods->xSectorSize(REAL(f));
}

static int vx_devchar(sqlite3_file *f)
{
	return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}

static int vx_shm_map(sqlite3_file *f, int pg, int sz, int ext, void volatile **p)
{
	return REAL(f)->pMethods->xShmMap(REAL(f), pg, sz, ext, p);
}

static int vx_shm_lock(sqlite3_file *f, int off, int n, int flags)
{
	return REAL(f)->pMethods->xShmLock(REAL(f), off, n, flags);
}

static void vx_shm_barrier(sqlite3_file *f)
{
	REAL(f)->pMethods->xShmBarrier(REAL(f));
}

static int vx_shm_unmap(sqlite3_file *f, int del)
{
	return REAL(f)->pMethods->xShmUnmap(REAL(f), del);
}

static int vx_fetch(sqlite3_file *f, sqlite3_int64 o, int n, void **p)
{
	return REAL(f)->pMethods->xFetch(REAL(f), o, n, p);
}

static int vx_unfetch(sqlite3_file *f, sqlite3_int64 o, void *p)
{
	return REAL(f)->pMethods->xUnfetch(REAL(f), o, p);
}

static int vx_open(sqlite3_vfs *v, const char *name, sqlite3_file *f, int flags, int *out)
{
	struct vfs_file *w = (struct vfs_file *)f;
	int rc;

	(void)v;
	w->name = name;
	w->real = (sqlite3_file *)(w + 1);
	rc = real_vfs->xOpen(real_vfs, name, w->real, flags, out);
	/* The real file's methods decide which of ours exist: a version 1
	 * file has no shared memory and sqlite must see that. */
	f->pMethods = w->real->pMethods != NULL ? &shim_io : NULL;
	if (w->real->pMethods != NULL && w->real->pMethods->iVersion < 3)
		shim_io.iVersion = w->real->pMethods->iVersion;
	return rc;
}

static int vx_delete(sqlite3_vfs *v, const char *name, int sync)
{
	(void)v;
	return real_vfs->xDelete(real_vfs, name, sync);
}

static int vx_access(sqlite3_vfs *v, const char *name, int flags, int *out)
{
	(void)v;
	return real_vfs->xAccess(real_vfs, name, flags, out);
}

static int vx_fullpath(sqlite3_vfs *v, const char *name, int n, char *out)
{
	(void)v;
	return real_vfs->xFullPathname(real_vfs, name, n, out);
}

static int vx_random(sqlite3_vfs *v, int n, char *out)
{
	(void)v;
	return real_vfs->xRandomness(real_vfs, n, out);
}

static int vx_sleep(sqlite3_vfs *v, int us)
{
	(void)v;
	return real_vfs->xSleep(real_vfs, us);
}

static int vx_time(sqlite3_vfs *v, double *t)
{
	(void)v;
	return real_vfs->xCurrentTime(real_vfs, t);
}

static int vx_lasterr(sqlite3_vfs *v, int n, char *buf)
{
	(void)v;
	return real_vfs->xGetLastError ? real_vfs->xGetLastError(real_vfs, n, buf) : 0;
}

static int vx_time64(sqlite3_vfs *v, sqlite3_int64 *t)
{
	(void)v;
	return real_vfs->xCurrentTimeInt64(real_vfs, t);
}

static int vx_set_syscall(sqlite3_vfs *v, const char *name, sqlite3_syscall_ptr p)
{
	(void)v;
	return real_vfs->xSetSystemCall(real_vfs, name, p);
}

static sqlite3_syscall_ptr vx_get_syscall(sqlite3_vfs *v, const char *name)
{
	(void)v;
	return real_vfs->xGetSystemCall(real_vfs, name);
}

static const char *vx_next_syscall(sqlite3_vfs *v, const char *name)
{
	(void)v;
	return real_vfs->xNextSystemCall(real_vfs, name);
}

static void vfs_register(void)
{
	__typeof__(&sqlite3_vfs_find) find = (__typeof__(&sqlite3_vfs_find))dlsym(RTLD_DEFAULT, "sqlite3_vfs_find");
	__typeof__(&sqlite3_vfs_register) reg =
		(__typeof__(&sqlite3_vfs_register))dlsym(RTLD_DEFAULT, "sqlite3_vfs_register");

	if (find == NULL || reg == NULL || (real_vfs = find(NULL)) == NULL || real_vfs->iVersion < 3)
		return;
	shim_io = (sqlite3_io_methods){
		3, vx_close, vx_read, vx_write, vx_truncate, vx_sync, vx_size, vx_lock, vx_unlock, vx_reserved,
		vx_fcntl, vx_sector, vx_devchar, vx_shm_map, vx_shm_lock, vx_shm_barrier, vx_shm_unmap, vx_fetch,
		vx_unfetch,
	};
	shim_vfs = (sqlite3_vfs){
		3, (int)sizeof(struct vfs_file) + real_vfs->szOsFile, real_vfs->mxPathname, NULL, "cordon-fault",
		NULL, vx_open, vx_delete, vx_access, vx_fullpath, NULL, NULL, NULL, NULL, vx_random, vx_sleep,
		vx_time, vx_lasterr, vx_time64, vx_set_syscall, vx_get_syscall, vx_next_syscall,
	};
	reg(&shim_vfs, 1);
}

int sqlite3_open_v2(const char *file, sqlite3 **db, int flags, const char *vfs)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	NEXT(sqlite3_open_v2);
	pthread_once(&once, vfs_register);
	return next_sqlite3_open_v2(file, db, flags, vfs);
}
