/*
 * mounts.c - the executor's root: a tmpfs with the blob's read-only binds,
 * the workspace, a minimal /dev and its own /proc, then pivot_root.
 *
 * Runs in the child, in its new user and mount namespaces, holding every
 * capability of that user namespace and nothing on the host.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/launch/launch.h"

#define FAIL(...) do { snprintf(msg, n, __VA_ARGS__); return -1; } while (0)

/* mkdir -p of path (absolute, inside the new root being built). */
static int mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);

	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(buf, mode) != 0 && errno != EEXIST)
		return -1;
	return 0;
}

static int touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0444);

	if (fd < 0)
		return errno == EEXIST ? 0 : -1;
	close(fd);
	return 0;
}

/* Flags a remount must keep: in a user namespace the kernel refuses to
 * clear nosuid/nodev/noexec/atime flags that the host mount had (they are
 * locked), so a read-only remount has to carry them over. */
static unsigned long locked_flags(const char *path)
{
	struct statvfs sv;
	unsigned long f = 0;

	if (statvfs(path, &sv) != 0)
		return 0;
	if (sv.f_flag & ST_NOSUID)
		f |= MS_NOSUID;
	if (sv.f_flag & ST_NODEV)
		f |= MS_NODEV;
	if (sv.f_flag & ST_NOEXEC)
		f |= MS_NOEXEC;
	if (sv.f_flag & ST_NOATIME)
		f |= MS_NOATIME;
	if (sv.f_flag & ST_NODIRATIME)
		f |= MS_NODIRATIME;
	if (sv.f_flag & ST_RELATIME)
		f |= MS_RELATIME;
	return f;
}

static int mount_one(const char *root, const struct launch_mount *m, char *msg, size_t n)
{
	char dst[PATH_MAX];
	struct stat st;
	unsigned long extra;

	if (snprintf(dst, sizeof(dst), "%s%s", root, m->dst) >= (int)sizeof(dst))
		FAIL("mount target %s: path too long", m->dst);
	if (m->kind == LM_TMPFS) {
		char opts[64];

		if (mkdir_p(dst, 0755) != 0)
			FAIL("mkdir %s: %s", m->dst, strerror(errno));
		snprintf(opts, sizeof(opts), "mode=1777,size=%llu", (unsigned long long)m->size);
		if (mount("tmpfs", dst, "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0)
			FAIL("tmpfs on %s: %s", m->dst, strerror(errno));
		return 0;
	}
	if (stat(m->src, &st) != 0)
		FAIL("mount source %s: %s", m->src, strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		if (mkdir_p(dst, 0755) != 0)
			FAIL("mkdir %s: %s", m->dst, strerror(errno));
	} else {
		char parent[PATH_MAX];
		char *slash;

		memcpy(parent, dst, sizeof(parent));
		slash = strrchr(parent, '/');
		if (slash != NULL && slash != parent)
			*slash = '\0';
		if (mkdir_p(parent, 0755) != 0 || touch(dst) != 0)
			FAIL("create %s: %s", m->dst, strerror(errno));
	}
	if (mount(m->src, dst, NULL, MS_BIND | MS_REC, NULL) != 0)
		FAIL("bind %s on %s: %s", m->src, m->dst, strerror(errno));
	extra = locked_flags(dst) | MS_NOSUID;
	if (m->kind != LM_DEVFILE)
		extra |= MS_NODEV;
	if (m->kind != LM_BIND_RW)
		extra |= MS_RDONLY;
	if (mount(NULL, dst, NULL, MS_BIND | MS_REMOUNT | extra, NULL) != 0)
		FAIL("remount %s (%s): %s", m->dst, m->kind == LM_BIND_RW ? "rw" : "ro", strerror(errno));
	return 0;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0444);
	size_t len = strlen(text);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, text, len) == (ssize_t)len;
	close(fd);
	return ok ? 0 : -1;
}

/* /etc/passwd and /etc/group naming the executor's ids, so `id` and
 * getpwuid() answer instead of failing; only when /etc is not a mount. */
static int write_etc(const char *root, const struct launch_plan *lp, char *msg, size_t n)
{
	char path[PATH_MAX], text[256];

	if (snprintf(path, sizeof(path), "%s/etc", root) >= (int)sizeof(path) || mkdir_p(path, 0755) != 0)
		FAIL("mkdir /etc: %s", strerror(errno));
	if (snprintf(path, sizeof(path), "%s/etc/passwd", root) >= (int)sizeof(path))
		FAIL("root path too long");
	snprintf(text, sizeof(text), "sandbox:x:%u:%u:cordon executor:/workspace/work:/usr/sbin/nologin\n",
		 (unsigned)lp->uid, (unsigned)lp->gid);
	if (write_file(path, text) != 0)
		FAIL("write /etc/passwd: %s", strerror(errno));
	if (snprintf(path, sizeof(path), "%s/etc/group", root) >= (int)sizeof(path))
		FAIL("root path too long");
	snprintf(text, sizeof(text), "sandbox:x:%u:\n", (unsigned)lp->gid);
	if (write_file(path, text) != 0)
		FAIL("write /etc/group: %s", strerror(errno));
	return 0;
}

int mounts_build(const struct launch_plan *lp, char *msg, size_t n)
{
	const char *root = lp->newroot;
	char path[PATH_MAX];

	/* Files made in a user namespace must belong to a mapped id (else
	 * EOVERFLOW); our ids are still the unmapped creator's, so the
	 * filesystem ids move to the executor's now, the rest later. */
	setfsuid(lp->uid);
	setfsgid(lp->gid);
	if ((uid_t)setfsuid((uid_t)-1) != lp->uid || (gid_t)setfsgid((gid_t)-1) != lp->gid)
		FAIL("setfsuid/setfsgid %u/%u did not take", (unsigned)lp->uid, (unsigned)lp->gid);
	/* Nothing done below may propagate back to the host's mount tree. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		FAIL("make / private: %s", strerror(errno));
	if (mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m") != 0)
		FAIL("tmpfs root on %s: %s", root, strerror(errno));
	for (unsigned i = 0; i < lp->nmounts; i++)
		if (mount_one(root, &lp->mounts[i], msg, n) != 0)
			return -1;
	if (lp->write_etc && write_etc(root, lp, msg, n) != 0)
		return -1;
	/* /dev links the standard streams the way programs expect them. */
	static const char *const links[][2] = { { "/proc/self/fd", "/dev/fd" },
						{ "/proc/self/fd/0", "/dev/stdin" },
						{ "/proc/self/fd/1", "/dev/stdout" },
						{ "/proc/self/fd/2", "/dev/stderr" } };
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		if (snprintf(path, sizeof(path), "%s%s", root, links[i][1]) >= (int)sizeof(path) ||
		    (symlink(links[i][0], path) != 0 && errno != EEXIST))
			FAIL("symlink %s: %s", links[i][1], strerror(errno));
	}
	/* Our own /proc: the pid namespace's processes only.  /proc/sys is
	 * bound read-only over itself as well (the executor's uid could not
	 * write it anyway; this keeps it so if a mapping ever changes). */
	if (snprintf(path, sizeof(path), "%s/proc", root) >= (int)sizeof(path) || mkdir_p(path, 0555) != 0)
		FAIL("mkdir /proc: %s", strerror(errno));
	if (mount("proc", path, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
		FAIL("mount proc: %s", strerror(errno));
	if (snprintf(path, sizeof(path), "%s/proc/sys", root) >= (int)sizeof(path) || mount(path, path, NULL, MS_BIND | MS_REC, NULL) != 0 ||
	    mount(NULL, path, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
		FAIL("read-only /proc/sys: %s", strerror(errno));
	/* The root itself becomes read-only once everything is in place. */
	if (mount(NULL, root, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) != 0)
		FAIL("read-only root: %s", strerror(errno));
	/* pivot_root(".", ".") stacks the old root under the new one; the
	 * detach then removes every host path from this namespace. */
	if (chdir(root) != 0)
		FAIL("chdir new root: %s", strerror(errno));
	if (syscall(SYS_pivot_root, ".", ".") != 0)
		FAIL("pivot_root: %s", strerror(errno));
	if (umount2(".", MNT_DETACH) != 0)
		FAIL("detach old root: %s", strerror(errno));
	if (chdir("/workspace/work") != 0)
		FAIL("chdir /workspace/work: %s", strerror(errno));
	if (sethostname("cordon", 6) != 0)
		FAIL("sethostname: %s", strerror(errno));
	return 0;
}
