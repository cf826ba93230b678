/* SPDX-License-Identifier: Apache-2.0 */
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
#include <linux/mount.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cordon/paths.h"
#include "runtime/launch/launch.h"

/* After the first pivot_root (mounts_build): the root being built. */
#define NEWROOT "/newroot"

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

/*
 * A private filesystem: a tmpfs of its own, of which the supervisor gets a
 * second, detached mount (open_tree's clone) that stays writable whatever
 * the sandbox's mount of it becomes.  The sandbox's mount is read-only at
 * its top: only the rw_sub directories are writable, each a bind of itself,
 * so the program cannot add names beside them (EROFS, as on the root).
 */
static int mount_private(const struct launch_mount *m, const char *dst, int *fd_out, char *msg, size_t n)
{
	char opts[128], sub[PATH_MAX];

	if (mkdir_p(dst, 0755) != 0)
		FAIL("mkdir %s: %s", m->dst, launch_strerror(errno));
	if (m->size != 0)
		snprintf(opts, sizeof(opts), "mode=0755,size=%llu,nr_inodes=%llu", (unsigned long long)m->size,
			 (unsigned long long)m->inodes);
	else
		snprintf(opts, sizeof(opts), "mode=0755,nr_inodes=%llu", (unsigned long long)m->inodes);
	if (mount("tmpfs", dst, "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0)
		FAIL("tmpfs on %s: %s", m->dst, launch_strerror(errno));
	for (unsigned i = 0; i < m->nrw_sub; i++) {
		if (snprintf(sub, sizeof(sub), "%s/%s", dst, m->rw_sub[i]) >= (int)sizeof(sub) || mkdir_p(sub, 0700) != 0)
			FAIL("mkdir %s/%s: %s", m->dst, m->rw_sub[i], launch_strerror(errno));
	}
	*fd_out = (int)syscall(SYS_open_tree, AT_FDCWD, dst, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (*fd_out < 0)
		FAIL("open_tree %s: %s", m->dst, launch_strerror(errno));
	for (unsigned i = 0; i < m->nrw_sub; i++) {
		if (snprintf(sub, sizeof(sub), "%s/%s", dst, m->rw_sub[i]) >= (int)sizeof(sub) ||
		    mount(sub, sub, NULL, MS_BIND, NULL) != 0 ||
		    mount(NULL, sub, NULL, MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV, NULL) != 0)
			FAIL("bind %s/%s: %s", m->dst, m->rw_sub[i], launch_strerror(errno));
	}
	if (mount(NULL, dst, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | (m->nrw_sub ? 0 : MS_NOEXEC),
		  NULL) != 0)
		FAIL("read-only %s: %s", m->dst, launch_strerror(errno));
	return 0;
}

static int mount_one(const struct launch_mount *m, int *fd_out, char *msg, size_t n)
{
	char dst[PATH_MAX], src[PATH_MAX];
	struct stat st;
	unsigned long extra;

	if (snprintf(dst, sizeof(dst), NEWROOT "%s", m->dst) >= (int)sizeof(dst))
		FAIL("mount target %s: path too long", m->dst);
	if (m->kind == LM_TMPFS) {
		char opts[64];

		if (mkdir_p(dst, 0755) != 0)
			FAIL("mkdir %s: %s", m->dst, launch_strerror(errno));
		snprintf(opts, sizeof(opts), "mode=1777,size=%llu", (unsigned long long)m->size);
		if (mount("tmpfs", dst, "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0)
			FAIL("tmpfs on %s: %s", m->dst, launch_strerror(errno));
		return 0;
	}
	if (m->kind == LM_PRIVATE)
		return mount_private(m, dst, fd_out, msg, n);
	/* The host's tree is under /oldroot now (mounts_build). */
	if (snprintf(src, sizeof(src), "/oldroot%s", m->src) >= (int)sizeof(src))
		FAIL("mount source %s: path too long", m->src);
	if (stat(src, &st) != 0)
		FAIL("mount source %s: %s", m->src, launch_strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		if (mkdir_p(dst, 0755) != 0)
			FAIL("mkdir %s: %s", m->dst, launch_strerror(errno));
	} else {
		char parent[PATH_MAX];
		char *slash;

		memcpy(parent, dst, sizeof(parent));
		slash = strrchr(parent, '/');
		if (slash != NULL && slash != parent)
			*slash = '\0';
		if (mkdir_p(parent, 0755) != 0 || touch(dst) != 0)
			FAIL("create %s: %s", m->dst, launch_strerror(errno));
	}
	if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) != 0)
		FAIL("bind %s on %s: %s", m->src, m->dst, launch_strerror(errno));
	extra = locked_flags(dst) | MS_NOSUID;
	if (m->kind != LM_DEVFILE)
		extra |= MS_NODEV;
	if (m->kind != LM_BIND_RW)
		extra |= MS_RDONLY;
	if (mount(NULL, dst, NULL, MS_BIND | MS_REMOUNT | extra, NULL) != 0)
		FAIL("remount %s (%s): %s", m->dst, m->kind == LM_BIND_RW ? "rw" : "ro", launch_strerror(errno));
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
 * getpwuid() answer instead of failing; only when /etc is not a mount.
 * root and nobody as well, as on every Linux system: tarfile, shutil.chown,
 * pwd.getpwnam("root") and the files of unmapped owners (which the user
 * namespace shows as 65534) name them, and a program that finds neither
 * fails where it would work on any host.  Neither is an identity the
 * program can take: it has no capabilities and no setuid binary. */
static int write_etc(const struct launch_plan *lp, char *msg, size_t n)
{
	char text[512];
	int len;

	if (mkdir_p(NEWROOT "/etc", 0755) != 0)
		FAIL("mkdir /etc: %s", launch_strerror(errno));
	len = snprintf(text, sizeof(text), "root:x:0:0:root:/root:/usr/sbin/nologin\n"
		       "sandbox:x:%u:%u:cordon executor:/workspace/work:/usr/sbin/nologin\n",
		       (unsigned)lp->uid, (unsigned)lp->gid);
	if (lp->uid != 65534)
		snprintf(text + len, sizeof(text) - (size_t)len,
			 "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
	if (write_file(NEWROOT "/etc/passwd", text) != 0)
		FAIL("write /etc/passwd: %s", launch_strerror(errno));
	len = snprintf(text, sizeof(text), "root:x:0:\nsandbox:x:%u:\n", (unsigned)lp->gid);
	if (lp->gid != 65534)
		snprintf(text + len, sizeof(text) - (size_t)len, "nogroup:x:65534:\n");
	if (write_file(NEWROOT "/etc/group", text) != 0)
		FAIL("write /etc/group: %s", launch_strerror(errno));
	/* "localhost" names the sandbox's own lo, as on every host: with
	 * network: loopback a server on "localhost" is the only one there is,
	 * and without a hosts file the name went to DNS and failed (asyncio,
	 * logging and http.server tests).  Files only: no resolver is
	 * reachable from the sandbox's network namespace anyway. */
	if (write_file(NEWROOT "/etc/hosts", "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n") != 0)
		FAIL("write /etc/hosts: %s", launch_strerror(errno));
	if (write_file(NEWROOT "/etc/nsswitch.conf", "passwd: files\ngroup: files\nhosts: files\n") != 0)
		FAIL("write /etc/nsswitch.conf: %s", launch_strerror(errno));
	return 0;
}

/* Hands the supervisor one descriptor per private filesystem (LM_PRIVATE,
 * in plan order) over the fd socket: it fills them while we go on, and
 * reads the outputs through them after we are gone, without ever naming a
 * host path the sandbox could have shaped. */
static int private_send(const struct launch_plan *lp, const int *fds, unsigned nfds, char *msg, size_t n)
{
	/* cmsghdr alignment for the control buffer (cmsg(3)). */
	union {
		char buf[CMSG_SPACE(sizeof(int) * LAUNCH_MAX_PRIVATE)];
		struct cmsghdr align;
	} ctl;
	char byte = 'f';
	struct iovec iov = { &byte, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;

	memset(&ctl, 0, sizeof(ctl));
	if (nfds > 0) {
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	if (sendmsg(lp->fd_sock, &mh, MSG_NOSIGNAL) != 1)
		FAIL("send the private filesystems: %s", launch_strerror(errno));
	return 0;
}

int mounts_build(const struct launch_plan *lp, char *msg, size_t n)
{
	char path[PATH_MAX];
	int fds[LAUNCH_MAX_PRIVATE];
	unsigned nfds = 0;
	int rc = -1;

	/* Files made in a user namespace must belong to a mapped id (else
	 * EOVERFLOW); our ids are still the unmapped creator's, so the
	 * filesystem ids move to the executor's now, the rest later. */
	setfsuid(lp->uid);
	setfsgid(lp->gid);
	if ((uid_t)setfsuid((uid_t)-1) != lp->uid || (gid_t)setfsgid((gid_t)-1) != lp->gid)
		FAIL("setfsuid/setfsgid %u/%u did not take", (unsigned)lp->uid, (unsigned)lp->gid);
	/* Nothing done below may propagate back to the host's mount tree. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		FAIL("make / private: %s", launch_strerror(errno));
	/* The root is built on a base of our own, as bubblewrap does: a tmpfs
	 * over /tmp becomes our root with the host's under /oldroot.  No host
	 * directory of the supervisor's is needed to build on, so a 0700 run
	 * directory or TMPDIR is no obstacle and no host path of a run shows
	 * in the sandbox's mountinfo. */
	if (mount("tmpfs", LAUNCH_BASE, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64k,nr_inodes=16") != 0)
		FAIL("tmpfs base on %s: %s", LAUNCH_BASE, launch_strerror(errno));
	if (chdir(LAUNCH_BASE) != 0 || mkdir("newroot", 0755) != 0 || mkdir("oldroot", 0755) != 0)
		FAIL("base directories: %s", launch_strerror(errno));
	if (syscall(SYS_pivot_root, ".", "oldroot") != 0)
		FAIL("pivot_root to the base: %s", launch_strerror(errno));
	if (chdir("/") != 0)
		FAIL("chdir /: %s", launch_strerror(errno));
	if (mount("tmpfs", NEWROOT, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m") != 0)
		FAIL("tmpfs root: %s", launch_strerror(errno));
	for (unsigned i = 0; i < lp->nmounts; i++) {
		int fd = -1;

		if (mount_one(&lp->mounts[i], &fd, msg, n) != 0)
			goto out;
		if (fd >= 0)
			fds[nfds++] = fd;
	}
	if (lp->write_etc && write_etc(lp, msg, n) != 0)
		goto out;
	/* /bin and /sbin into /usr, as on a merged-/usr system (Debian 12):
	 * "#!/bin/sh" scripts, subprocess(shell=True) and os.system name
	 * /bin/sh, and a policy that mounts /usr should not have to know. */
	if (lp->usr_links && ((symlink("usr/bin", NEWROOT "/bin") != 0 && errno != EEXIST) ||
			      (symlink("usr/sbin", NEWROOT "/sbin") != 0 && errno != EEXIST)))
		FAIL("link /bin and /sbin to /usr: %s", launch_strerror(errno));
	/* /dev links the standard streams the way programs expect them. */
	static const char *const links[][2] = { { "/proc/self/fd", "/dev/fd" },
						{ "/proc/self/fd/0", "/dev/stdin" },
						{ "/proc/self/fd/1", "/dev/stdout" },
						{ "/proc/self/fd/2", "/dev/stderr" } };
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		if (snprintf(path, sizeof(path), NEWROOT "%s", links[i][1]) >= (int)sizeof(path) ||
		    (symlink(links[i][0], path) != 0 && errno != EEXIST)) {
			snprintf(msg, n, "symlink %s: %s", links[i][1], launch_strerror(errno));
			goto out;
		}
	}
	/* Our own /proc: the pid namespace's processes only.  /proc/sys is
	 * bound read-only over itself as well (the executor's uid could not
	 * write it anyway; this keeps it so if a mapping ever changes). */
	if (mkdir_p(NEWROOT "/proc", 0555) != 0 ||
	    mount("proc", NEWROOT "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) {
		snprintf(msg, n, "mount proc: %s", launch_strerror(errno));
		goto out;
	}
	if (mount(NEWROOT "/proc/sys", NEWROOT "/proc/sys", NULL, MS_BIND | MS_REC, NULL) != 0 ||
	    mount(NULL, NEWROOT "/proc/sys", NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  NULL) != 0) {
		snprintf(msg, n, "read-only /proc/sys: %s", launch_strerror(errno));
		goto out;
	}
	/* The root itself becomes read-only once everything is in place. */
	if (mount(NULL, NEWROOT, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) != 0) {
		snprintf(msg, n, "read-only root: %s", launch_strerror(errno));
		goto out;
	}
	if (private_send(lp, fds, nfds, msg, n) != 0)
		goto out;
	/* The host's tree goes first, then the base: pivot_root(".", ".")
	 * stacks the base under the new root and the detach removes it. */
	if (umount2("/oldroot", MNT_DETACH) != 0) {
		snprintf(msg, n, "detach the host root: %s", launch_strerror(errno));
		goto out;
	}
	if (chdir(NEWROOT) != 0 || syscall(SYS_pivot_root, ".", ".") != 0 || umount2(".", MNT_DETACH) != 0 ||
	    chdir("/") != 0) {
		snprintf(msg, n, "pivot_root to the new root: %s", launch_strerror(errno));
		goto out;
	}
	if (chdir(SANDBOX_WORK) != 0) {
		snprintf(msg, n, "chdir /workspace/work: %s", launch_strerror(errno));
		goto out;
	}
	if (sethostname("cordon", 6) != 0) {
		snprintf(msg, n, "sethostname: %s", launch_strerror(errno));
		goto out;
	}
	rc = 0;
out:
	for (unsigned i = 0; i < nfds; i++)
		close(fds[i]);
	return rc;
}
