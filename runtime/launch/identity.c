/* SPDX-License-Identifier: Apache-2.0 */
/*
 * identity.c - who the executor is: its user namespace maps (written by the
 * supervisor) and the drop to uid/gid with no supplementary groups (done by
 * the child).
 *
 * Mapping (docs/runtime.md, "Host identity"): as root, the inside uid/gid map to the
 * same numbers on the host, an unprivileged identity; rootless, they map to
 * the caller, the only identity an ordinary user may map.  Only that one id
 * is mapped, so no process inside can become anyone else, and no uid 0
 * exists inside to gain capabilities through execve.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/launch/launch.h"

static int write_proc(pid_t pid, const char *file, const char *text, char *msg, size_t n)
{
	char path[64];
	int fd;
	ssize_t len = (ssize_t)strlen(text);

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(msg, n, "open %s: %s", path, launch_strerror(errno));
		return -1;
	}
	if (write(fd, text, (size_t)len) != len) {
		snprintf(msg, n, "write %s (%s): %s", path, text, launch_strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int identity_write_maps(pid_t child, const struct launch_plan *lp, uid_t host_uid, gid_t host_gid,
			char *msg, size_t n)
{
	char line[64];

	/* An unprivileged writer must deny setgroups before it may write a
	 * gid_map; root keeps setgroups so the child can clear its groups. */
	if (lp->rootless && write_proc(child, "setgroups", "deny", msg, n) != 0)
		return -1;
	snprintf(line, sizeof(line), "%u %u 1\n", (unsigned)lp->uid, (unsigned)host_uid);
	if (write_proc(child, "uid_map", line, msg, n) != 0)
		return -1;
	snprintf(line, sizeof(line), "%u %u 1\n", (unsigned)lp->gid, (unsigned)host_gid);
	return write_proc(child, "gid_map", line, msg, n);
}

/*
 * Raw system calls, not glibc's setgroups/setresgid/setresuid: glibc
 * applies those to every thread of the process it believes it is
 * (nptl's setxid broadcast), and the child of a raw clone from a
 * multi-threaded supervisor (cordon serve) inherits that belief without
 * the threads.  It then signals threads that do not exist, or waits
 * forever on one that was being created at the moment of the clone (seen
 * as a pool sandbox that never became ready, stuck in setxid_mark_thread).
 * The kernel calls change this one thread, which is the whole child.
 */
int identity_drop(const struct launch_plan *lp, char *msg, size_t n)
{
	/* Groups first: once the uid changes, CAP_SETGID may be gone. */
	if (!lp->rootless && syscall(SYS_setgroups, 0, NULL) != 0) {
		snprintf(msg, n, "setgroups: %s", launch_strerror(errno));
		return -1;
	}
	if (syscall(SYS_setresgid, lp->gid, lp->gid, lp->gid) != 0) {
		snprintf(msg, n, "setresgid %u: %s", (unsigned)lp->gid, launch_strerror(errno));
		return -1;
	}
	if (syscall(SYS_setresuid, lp->uid, lp->uid, lp->uid) != 0) {
		snprintf(msg, n, "setresuid %u: %s", (unsigned)lp->uid, launch_strerror(errno));
		return -1;
	}
	if (getuid() != lp->uid || geteuid() != lp->uid || getgid() != lp->gid || getegid() != lp->gid) {
		snprintf(msg, n, "ids did not change as asked");
		return -1;
	}
	return 0;
}
