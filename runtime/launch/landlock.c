/* SPDX-License-Identifier: Apache-2.0 */
/*
 * landlock.c - the filesystem (and, where the ABI has it, TCP and scope)
 * rules of the executor, with the highest ABI the kernel offers.
 *
 * Landlock is the second wall behind the mount tree: read and execute
 * everywhere, writes only in the workspace and the policy's writable
 * mounts, devices only /dev/null, zero, random and urandom.  From ABI 4 all
 * TCP bind and connect are refused unless the policy asks for loopback (there
 * is no network namespace route out
 * anyway; this is defence in depth); from ABI 6 abstract Unix sockets and
 * signals are scoped to the sandbox.
 *
 * Debian 12's kernel headers stop at ABI 3, so the later ABI's values (part
 * of the kernel's stable ABI) are spelled out here.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/launch/launch.h"

#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_ABI1 ((1ULL << 13) - 1) /* EXECUTE .. MAKE_SYM */
#define LL_FS_REFER (1ULL << 13)      /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14)   /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15)  /* ABI 5 */
#define LL_NET_BIND_TCP (1ULL << 0)   /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct ll_path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

int landlock_abi(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);

	return abi < 0 ? 0 : (int)abi;
}

static int add_rule(int ruleset, const char *path, uint64_t access, char *msg, size_t n)
{
	struct ll_path_beneath pb;
	int fd = open(path, O_PATH | O_CLOEXEC);
	int rc;

	if (fd < 0) {
		snprintf(msg, n, "landlock rule for %s: %s", path, launch_strerror(errno));
		return -1;
	}
	pb.allowed_access = access;
	pb.parent_fd = fd;
	rc = (int)syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &pb, 0);
	if (rc != 0)
		snprintf(msg, n, "landlock rule for %s: %s", path, launch_strerror(errno));
	close(fd);
	return rc == 0 ? 0 : -1;
}

int landlock_apply(const struct launch_plan *lp, int *abi_out, char *msg, size_t n)
{
	struct ll_ruleset_attr attr = { 0 };
	size_t attr_size = sizeof(uint64_t);
	uint64_t fs, ro, dev;
	int abi = landlock_abi(), ruleset = -1, rc = -1;

	*abi_out = abi;
	if (abi < 1) {
		snprintf(msg, n, "landlock is not available on this kernel");
		return -1;
	}
	fs = LL_FS_ABI1;
	if (abi >= 2)
		fs |= LL_FS_REFER;
	if (abi >= 3)
		fs |= LL_FS_TRUNCATE;
	if (abi >= 5)
		fs |= LL_FS_IOCTL_DEV;
	attr.handled_access_fs = fs;
	/* network: loopback means the program may use TCP on its own lo. */
	if (abi >= 4) {
		attr.handled_access_net = lp->loopback ? 0 : LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
		attr_size = 2 * sizeof(uint64_t);
	}
	if (abi >= 6) {
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
		attr_size = sizeof(attr);
	}
	ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0);
	if (ruleset < 0) {
		snprintf(msg, n, "landlock_create_ruleset (ABI %d): %s", abi, launch_strerror(errno));
		return -1;
	}
	ro = LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR;
	dev = LL_FS_READ_FILE | LL_FS_WRITE_FILE | (fs & (LL_FS_TRUNCATE | LL_FS_IOCTL_DEV));
	if (add_rule(ruleset, "/", ro, msg, n) != 0)
		goto out;
	for (unsigned i = 0; i < lp->nmounts; i++) {
		const struct launch_mount *m = &lp->mounts[i];

		if (m->landlock_rw && add_rule(ruleset, m->dst, fs, msg, n) != 0)
			goto out;
		if (m->kind == LM_DEVFILE && add_rule(ruleset, m->dst, dev, msg, n) != 0)
			goto out;
	}
	for (unsigned i = 0; i < lp->nlandlock_rw; i++)
		if (add_rule(ruleset, lp->landlock_rw[i], fs, msg, n) != 0)
			goto out;
	if (syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) {
		snprintf(msg, n, "landlock_restrict_self: %s", launch_strerror(errno));
		goto out;
	}
	rc = 0;
out:
	close(ruleset);
	return rc;
}
