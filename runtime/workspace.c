/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workspace.c - the sandbox's private filesystems, seen from the supervisor
 * (workspace.h says why they are tmpfs mounts reached through fds).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <linux/mount.h>
#include <sched.h>
#include <unistd.h>

#include "runtime/workspace.h"

void ws_init(struct ws *w, uid_t uid, gid_t gid, int switch_ids)
{
	for (int i = 0; i < WS_NPARTS; i++)
		w->fd[i] = -1;
	w->uid = uid;
	w->gid = gid;
	w->switch_ids = switch_ids;
}

void ws_close(struct ws *w)
{
	for (int i = 0; i < WS_NPARTS; i++) {
		if (w->fd[i] >= 0)
			close(w->fd[i]);
		w->fd[i] = -1;
	}
}

int ws_receive(struct ws *w, int sock, int timeout_ms, char *err, size_t n)
{
	/* cmsghdr alignment for the control buffer (cmsg(3)). */
	union {
		char buf[CMSG_SPACE(sizeof(int) * WS_NPARTS * 2)];
		struct cmsghdr align;
	} ctl;
	char byte;
	struct iovec iov = { &byte, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			   .msg_controllen = sizeof(ctl.buf) };
	struct pollfd pfd = { .fd = sock, .events = POLLIN };
	struct cmsghdr *cm;
	int got[WS_NPARTS * 2], ngot = 0, rc = -1, pr;
	ssize_t r;

	do
		pr = poll(&pfd, 1, timeout_ms);
	while (pr < 0 && errno == EINTR);
	if (pr <= 0) {
		snprintf(err, n, "the executor did not hand over its filesystems: %s", pr == 0 ? "timed out" : strerror(errno));
		return -1;
	}
	do
		r = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (r < 0 && errno == EINTR);
	if (r != 1) {
		snprintf(err, n, "the executor did not hand over its filesystems: %s",
			 r == 0 ? "it ended during setup" : strerror(errno));
		return -1;
	}
	for (cm = CMSG_FIRSTHDR(&mh); cm != NULL; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int) && ngot < WS_NPARTS * 2; i++)
			memcpy(&got[ngot++], CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
	}
	if ((mh.msg_flags & MSG_CTRUNC) || ngot != WS_NPARTS) {
		snprintf(err, n, "the executor handed over %d filesystems, not %d", ngot, WS_NPARTS);
		goto out;
	}
	/* What we are about to write into as root must be what we asked
	 * for: a tmpfs directory, not some other fd the child could have
	 * sent. */
	for (int i = 0; i < ngot; i++) {
		struct statfs sf;
		struct stat st;

		if (fstatfs(got[i], &sf) != 0 || sf.f_type != TMPFS_MAGIC || fstat(got[i], &st) != 0 ||
		    !S_ISDIR(st.st_mode)) {
			snprintf(err, n, "the executor's filesystem %d is not a tmpfs directory", i);
			goto out;
		}
	}
	for (int i = 0; i < WS_NPARTS; i++)
		w->fd[i] = got[i];
	ngot = 0;
	rc = 0;
out:
	for (int i = 0; i < ngot; i++)
		close(got[i]);
	return rc;
}

int ws_as_executor(const struct ws *w, int (*fn)(void *), void *arg)
{
	uid_t ou = 0;
	gid_t og = 0;
	int rc, e;

	/* Per thread on Linux: only this thread writes as the executor, and
	 * only until the call returns.  A tmpfs the executor's user namespace
	 * owns refuses files of an unmapped owner (EOVERFLOW), and root is not
	 * mapped there. */
	if (w->switch_ids) {
		og = (gid_t)setfsgid(w->gid);
		ou = (uid_t)setfsuid(w->uid);
		if ((uid_t)setfsuid((uid_t)-1) != w->uid || (gid_t)setfsgid((gid_t)-1) != w->gid) {
			setfsuid(ou);
			setfsgid(og);
			errno = EPERM;
			return -1;
		}
	}
	rc = fn(arg);
	e = errno;
	if (w->switch_ids) {
		setfsuid(ou);
		setfsgid(og);
	}
	errno = e;
	return rc;
}

struct ws_op {
	int dir;
	const char *rel;
	const void *data;
	size_t len;
	mode_t mode;
};

static int ws_op_run(void *arg)
{
	const struct ws_op *op = arg;
	const char *p = op->data;
	size_t left = op->len;
	int fd, ok = 1;

	fd = openat(op->dir, op->rel, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, op->mode);
	if (fd < 0)
		return -1;
	while (left > 0 && ok) {
		ssize_t r = write(fd, p, left);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0)
				errno = ENOSPC;
			ok = 0;
			break;
		}
		p += r;
		left -= (size_t)r;
	}
	if (close(fd) != 0 && ok)
		ok = 0;
	return ok ? 0 : -1;
}

int ws_write(const struct ws *w, enum ws_part part, const char *rel, const void *data, size_t len, mode_t mode,
	     char *err, size_t n)
{
	struct ws_op op = { .dir = w->fd[part], .rel = rel, .data = data, .len = len, .mode = mode };

	if (ws_as_executor(w, ws_op_run, &op) != 0) {
		snprintf(err, n, "write %s: %s", rel, strerror(errno));
		return -1;
	}
	return 0;
}

/* fspick + fsconfig: the new mount API's remount, by fd.  0 or an errno. */
static int ws_reconfigure(int mnt_fd, uint64_t bytes, uint64_t inodes)
{
	char v[32];
	int fs = (int)syscall(SYS_fspick, mnt_fd, "", FSPICK_EMPTY_PATH | FSPICK_CLOEXEC | FSPICK_NO_AUTOMOUNT);
	int e = 0;

	if (fs < 0)
		return errno;
	snprintf(v, sizeof(v), "%llu", (unsigned long long)bytes);
	if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", v, 0) != 0)
		e = errno;
	snprintf(v, sizeof(v), "%llu", (unsigned long long)inodes);
	if (e == 0 && syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "nr_inodes", v, 0) != 0)
		e = errno;
	if (e == 0 && syscall(SYS_fsconfig, fs, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0) != 0)
		e = errno;
	close(fs);
	return e;
}

/* TSan's fork() starts its background thread again in the child, and
 * setns(CLONE_NEWUSER) refuses a process with threads (EINVAL): every
 * rootless run of the TSan build failed here.  That build forks with a raw
 * clone, which TSan does not see; the child's steps are the same. */
#if defined(__SANITIZE_THREAD__)
#define WS_FORK() ((pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, NULL))
#else
#define WS_FORK() fork()
#endif

int ws_limit(const struct ws *w, uint64_t bytes, uint64_t inodes, int pidfd, char *err, size_t n)
{
	int e = ws_reconfigure(w->fd[WS_WORKSPACE], bytes, inodes), st;
	pid_t pid;

	if (e == EPERM && pidfd >= 0) {
		/* A forked child is single-threaded, as setns(CLONE_NEWUSER)
		 * requires; it uses syscalls only (the parent may be a server
		 * with threads holding locks). */
		pid = WS_FORK();
		if (pid < 0) {
			e = errno;
		} else if (pid == 0) {
			if (setns(pidfd, CLONE_NEWUSER | CLONE_NEWNS) != 0)
				_exit(errno & 0x7f);
			_exit(ws_reconfigure(w->fd[WS_WORKSPACE], bytes, inodes) & 0x7f);
		} else {
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
			e = WIFEXITED(st) ? WEXITSTATUS(st) : EIO;
		}
	}
	if (e != 0) {
		snprintf(err, n, "bound the workspace to %llu bytes, %llu inodes: %s", (unsigned long long)bytes,
			 (unsigned long long)inodes, strerror(e));
		return -1;
	}
	return 0;
}

int ws_usage(const struct ws *w, struct ws_usage *u)
{
	struct statfs sf;

	if (w->fd[WS_WORKSPACE] < 0 || fstatfs(w->fd[WS_WORKSPACE], &sf) != 0)
		return -1;
	u->bytes = (uint64_t)(sf.f_blocks - sf.f_bfree) * (uint64_t)sf.f_bsize;
	u->inodes = (uint64_t)(sf.f_files - sf.f_ffree);
	return 0;
}

static int copy_file(int src_dir, const char *name, int dst_dir, char *err, size_t n)
{
	char buf[65536];
	int in = openat(src_dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK), out = -1, rc = -1;
	struct stat st;

	if (in < 0 || fstat(in, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, n, "open %s: %s", name, in < 0 ? strerror(errno) : "not a regular file");
		goto out;
	}
	out = openat(dst_dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0) {
		snprintf(err, n, "create %s: %s", name, strerror(errno));
		goto out;
	}
	for (;;) {
		ssize_t r = read(in, buf, sizeof(buf)), off = 0;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, n, "read %s: %s", name, strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		while (off < r) {
			ssize_t wr = write(out, buf + off, (size_t)(r - off));

			if (wr < 0 && errno == EINTR)
				continue;
			if (wr <= 0) {
				snprintf(err, n, "write %s: %s", name, wr < 0 ? strerror(errno) : "short write");
				goto out;
			}
			off += wr;
		}
	}
	if (close(out) != 0) {
		out = -1;
		snprintf(err, n, "write %s: %s", name, strerror(errno));
		goto out;
	}
	out = -1;
	rc = 0;
out:
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return rc;
}

/* Takes ownership of src (a directory fd). */
static int copy_dir(int src, int dst, unsigned depth, unsigned depth_max, unsigned *skipped, char *err, size_t n)
{
	DIR *d = fdopendir(src);
	struct dirent *e;
	int rc = 0;

	if (d == NULL) {
		close(src);
		snprintf(err, n, "read a directory: %s", strerror(errno));
		return -1;
	}
	while (rc == 0 && (errno = 0, e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (e->d_type == DT_REG) {
			rc = copy_file(dirfd(d), e->d_name, dst, err, n);
		} else if (e->d_type == DT_DIR && depth < depth_max) {
			int s = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), t = -1;

			/* Rootless, a directory the program made 0300 is ours
			 * to open again: the run is over, its modes no longer
			 * matter.  (Root reads it anyway.) */
			if (s < 0 && errno == EACCES && fchmodat(dirfd(d), e->d_name, 0700, 0) == 0)
				s = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (s < 0 || mkdirat(dst, e->d_name, 0700) != 0 ||
			    (t = openat(dst, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
				snprintf(err, n, "directory %s: %s", e->d_name, strerror(errno));
				if (s >= 0)
					close(s);
				rc = -1;
				break;
			}
			rc = copy_dir(s, t, depth + 1, depth_max, skipped, err, n);
			close(t);
		} else {
			(*skipped)++;
		}
	}
	if (rc == 0 && errno != 0) {
		snprintf(err, n, "read a directory: %s", strerror(errno));
		rc = -1;
	}
	closedir(d);
	return rc;
}

int ws_copy_tree(const struct ws *w, const char *rel, int dst_dir, unsigned depth_max, unsigned *skipped,
		 char *err, size_t n)
{
	int src = openat(w->fd[WS_WORKSPACE], rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	*skipped = 0;
	if (src < 0) {
		snprintf(err, n, "open %s: %s", rel, strerror(errno));
		return -1;
	}
	return copy_dir(src, dst_dir, 0, depth_max, skipped, err, n);
}
