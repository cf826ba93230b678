/* SPDX-License-Identifier: Apache-2.0 */
/*
 * shim.c - an LD_PRELOAD fault injector for the bridge suite's record
 * checks (README.md, "Records"): cordon's supervisor with this library
 * preloaded sees writes fail as on a full or broken disk, or threads that
 * cannot be started, at a point the check chooses.  Test code only:
 * run.py builds it with cc into its work directory; nothing shipped links
 * it.  The executor and the tools get environments built from scratch, so
 * only the supervisor is affected.
 *
 *   SHIM_PATH=TEXT     writes (write, writev, pwrite, pwrite64) and syncs
 *                      (fsync, fdatasync) to an fd whose path holds TEXT
 *                      fail with SHIM_ERRNO (default ENOSPC) once armed:
 *   SHIM_AFTER=N       armed after N such writes have passed (default 0)
 *   SHIM_ARM=FILE      and only while FILE exists (a tool creates it)
 *   SHIM_THREADS_AFTER=N   pthread_create fails with EAGAIN after N calls
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static unsigned long passed, threads;

static long env_num(const char *name, long dflt)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0' ? strtol(v, NULL, 0) : dflt;
}

/* 1 when a write (is_write) or sync to fd is to fail now. */
static int shim_hit(int fd, int is_write)
{
	const char *want = getenv("SHIM_PATH"), *arm = getenv("SHIM_ARM");
	char link[64], path[4096];
	ssize_t n;

	if (want == NULL || *want == '\0')
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return 0;
	path[n] = '\0';
	if (strstr(path, want) == NULL)
		return 0;
	if (arm != NULL && *arm != '\0' && access(arm, F_OK) != 0)
		return 0;
	if (is_write && __atomic_fetch_add(&passed, 1, __ATOMIC_SEQ_CST) < (unsigned long)env_num("SHIM_AFTER", 0))
		return 0;
	if (!is_write && __atomic_load_n(&passed, __ATOMIC_SEQ_CST) <= (unsigned long)env_num("SHIM_AFTER", 0))
		return 0;
	errno = (int)env_num("SHIM_ERRNO", ENOSPC);
	return 1;
}

#define NEXT(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

ssize_t write(int fd, const void *buf, size_t n)
{
	return shim_hit(fd, 1) ? -1 : NEXT(write)(fd, buf, n);
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	return shim_hit(fd, 1) ? -1 : NEXT(writev)(fd, iov, cnt);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	return shim_hit(fd, 1) ? -1 : NEXT(pwrite)(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
	return shim_hit(fd, 1) ? -1 : NEXT(pwrite64)(fd, buf, n, off);
}

int fsync(int fd)
{
	return shim_hit(fd, 0) ? -1 : NEXT(fsync)(fd);
}

int fdatasync(int fd)
{
	return shim_hit(fd, 0) ? -1 : NEXT(fdatasync)(fd);
}

int pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
	long after = env_num("SHIM_THREADS_AFTER", -1);

	if (after >= 0 && __atomic_fetch_add(&threads, 1, __ATOMIC_SEQ_CST) >= (unsigned long)after)
		return EAGAIN;
	return NEXT(pthread_create)(t, a, fn, arg);
}
