/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workspace.h - the sandbox's private filesystems, seen from the supervisor.
 *
 * The workspace (/workspace), the client modules (/cordon) and the tool
 * socket's directory (/supervisor-socket) are tmpfs mounts the executor
 * makes in its own namespaces and hands over as directory fds (mounts.c).
 * The supervisor fills them through those fds before the program starts,
 * and reads the outputs through them after it ends.  So:
 *
 * - the kernel counts the workspace: tmpfs size and nr_inodes bound bytes
 *   and entries at any depth, unlinked open files included, and statfs()
 *   reads the use in one call instead of a walk;
 * - nothing the sandbox can write is on a host path: no walk as root over
 *   it, nothing left behind (the tmpfs goes with the last fd), no host path
 *   in the sandbox's mountinfo, and a 0700 run directory is no obstacle.
 *
 * Sequence: ws_receive() (the fds, checked to be tmpfs directories) ->
 * ws_write() (as the executor's host ids, so the program owns its files) ->
 * ws_usage() while it runs -> ws_copy_tree() of what a kept run directory
 * keeps -> ws_close().  ws_close() is safe twice and on a zeroed struct
 * after ws_init().
 */
#ifndef CORDON_WORKSPACE_H
#define CORDON_WORKSPACE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum ws_part { WS_WORKSPACE, WS_CLIENT, WS_SOCKET, WS_NPARTS };

struct ws {
	int fd[WS_NPARTS];
	uid_t uid;   /* the executor's host ids: owner of what is filled in */
	gid_t gid;
	int switch_ids; /* as root: fill with setfsuid/setfsgid to uid/gid */
};

struct ws_usage {
	uint64_t bytes;   /* allocated data, page granular */
	uint64_t inodes;  /* files, directories, links, everything */
};

void ws_init(struct ws *w, uid_t uid, gid_t gid, int switch_ids);

/* Receive WS_NPARTS fds from the executor over sock, waiting at most
 * timeout_ms.  Fails when the executor closed its end (it died in setup:
 * its own report says why) or sent anything but tmpfs directories. */
int ws_receive(struct ws *w, int sock, int timeout_ms, char *err, size_t n);

/* Write a whole new file (O_EXCL, never through a link) at rel inside
 * part, owned by the executor's ids. */
int ws_write(const struct ws *w, enum ws_part part, const char *rel, const void *data, size_t len, mode_t mode,
	     char *err, size_t n);

/* Runs fn(arg) with the filesystem ids switched to the executor's (when
 * switch_ids), so what fn creates in a private filesystem is the
 * executor's: e.g. binding the tool socket.  fn's return value is
 * returned. */
int ws_as_executor(const struct ws *w, int (*fn)(void *), void *arg);

/* Bound the workspace's tmpfs to bytes and inodes (a tmpfs reconfigure of
 * the executor's superblock, through its fd): a sandbox is prepared before
 * its program and inputs are known, so it starts with a wide bound and is
 * narrowed once they are in, before the program runs.  The kernel refuses
 * a bound below what is in use.  pidfd is the executor's: rootless, the
 * supervisor holds no CAP_SYS_ADMIN where the mount API asks for it (its
 * own mount namespace), so a short-lived child joins the executor's user
 * and mount namespaces to do it. */
int ws_limit(const struct ws *w, uint64_t bytes, uint64_t inodes, int pidfd, char *err, size_t n);

/* The workspace's use now. */
int ws_usage(const struct ws *w, struct ws_usage *u);

/* Copy the tree at rel in the workspace into dst_dir (an fd) as plain
 * files and directories owned by the caller, mode 0600/0700: links and
 * special files are skipped (counted in *skipped), as is anything deeper
 * than depth_max.  Never follows a link on either side. */
int ws_copy_tree(const struct ws *w, const char *rel, int dst_dir, unsigned depth_max, unsigned *skipped,
		 char *err, size_t n);

void ws_close(struct ws *w);

#endif
