/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hostid.h - a host uid/gid per run that no account and no other sandbox has
 * (docs/runtime.md "Host identity").
 *
 * As root, the executor's inside uid/gid (the policy's, 1001/1000 by
 * default) must not map to the same numbers on the host: those are often a
 * real login account, which could then signal the sandbox, plant files in
 * its output directory and connect to its tool socket.  Instead each run
 * leases one number X from a configured range and maps its inside uid to
 * host uid X and its inside gid to host gid X.
 *
 * X is free when
 *   - no account has uid X or primary gid X, and no group has gid X (the
 *     passwd and group files; for the real database also getpwuid_r and
 *     getgrgid_r, so accounts from NSS sources such as LDAP or sssd count);
 *   - X lies in no user's subordinate range (/etc/subuid, /etc/subgid): those
 *     belong to the users' own containers;
 *   - X is not 0, 65534 (nobody, the kernel's overflow id) or 65535 (16-bit
 *     -1), whatever the files say;
 *   - no other run holds it: a run holds X by an flock on LOCK_DIR/X, kept for
 *     the lease's lifetime.  The kernel drops an flock when its last fd
 *     closes, so a supervisor killed by SIGKILL frees its id with no sweep.
 *
 * Sequence: hostid_range_parse() (or HOSTID_RANGE_DEFAULT), then
 * hostid_acquire() before the executor's user namespace maps are written,
 * hostid_release() after the last process running as X is gone and the run
 * directory is removed (the id may then go to another run at once).
 */
#ifndef CORDON_HOSTID_H
#define CORDON_HOSTID_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* [first, first + count); count >= 1, first >= 1, first + count - 1 <
 * 0xFFFFFFFF ((uid_t)-1 is "no change" to setresuid and chown). */
struct hostid_range {
	uint32_t first, count;
};

/*
 * The default range, 0x70000000:0x01000000 (1879048192 to 1895825407, 16M
 * ids).  Why there:
 *   - above every account (Debian's useradd gives 1000-59999 and system ids
 *     below 1000; systemd-homed 60001-60513, dynamic users 61184-65519,
 *     nobody 65534);
 *   - above the subordinate ranges Debian's useradd hands out
 *     (login.defs SUB_UID_MIN 100000 .. SUB_UID_MAX 600100000);
 *   - above systemd-nspawn's container ranges (524288-1879048191,
 *     0x00080000-0x6FFFFFFF) and below its "foreign" range (0x7FFE0000);
 *   - below 2^31, since some tools still read a uid as a signed int.
 * The account and subordinate checks still run on it: the range is where
 * to look, not a promise that a host keeps out of it.
 */
#define HOSTID_RANGE_DEFAULT_TEXT "0x70000000:0x01000000"
#define HOSTID_RANGE_DEFAULT_FIRST 0x70000000u
#define HOSTID_RANGE_DEFAULT_COUNT 0x01000000u

/* The default lock directory, for a supervisor running as root.  /run is a
 * tmpfs: a reboot forgets every lease along with every process that held
 * one.  hostid_acquire() creates the last component only; the caller
 * creates /run/cordon (root, 0755 or tighter). */
#define HOSTID_LOCK_DIR_DEFAULT "/run/cordon/hostids"

/* Where the account databases are read from.  A NULL member (or a NULL
 * struct) is the real file, and for passwd and group also the NSS lookup
 * getpwuid_r / getgrgid_r; a path given is read alone, with no NSS, so tests
 * decide exactly which ids are taken.  A file that does not exist holds no
 * ids; one that exists and cannot be read is an error. */
struct hostid_files {
	const char *passwd;  /* name:pw:uid:gid:... ; NULL: /etc/passwd + getpwuid_r */
	const char *group;   /* name:pw:gid:...     ; NULL: /etc/group + getgrgid_r */
	const char *subuid;  /* owner:first:count   ; NULL: /etc/subuid */
	const char *subgid;  /* owner:first:count   ; NULL: /etc/subgid */
};

/* One leased id.  uid == gid == X.  lock_fd holds the flock and dir_fd
 * the lock directory (so release can remove the lock file by name without
 * resolving a path again); both -1 when the lease is empty.  The lease owns
 * both fds. */
struct hostid_lease {
	uid_t uid;
	gid_t gid;
	int lock_fd;
	int dir_fd;
};

/* Empty lease: release of it does nothing. */
#define HOSTID_LEASE_NONE { (uid_t)-1, (gid_t)-1, -1, -1 }

/*
 * "FIRST:COUNT" or "FIRST-LAST" (LAST included), each number decimal or
 * 0x-hex; no sign, no spaces, no leading zero in decimal (010 is not 8 or
 * 10: refused).  Refuses a range holding 0 or reaching 4294967295.
 * Returns 0, or -1 with err ("--host-ids: ...").
 */
int hostid_range_parse(const char *text, struct hostid_range *r, char *err, size_t n);

/*
 * 1 when id is taken by the host: an account's uid or primary gid, a
 * group's gid, inside a subordinate uid or gid range, or one of 0, 65534,
 * 65535.  0 when free (as far as the databases go; leases are not looked
 * at).  -1 with err when a file exists and cannot be read.
 */
int hostid_is_taken(const struct hostid_files *files, uint32_t id, char *err, size_t n);

/*
 * Lease an id from r: starting at a random offset and wrapping once round
 * the range, the first id that hostid_is_taken() calls free and whose lock
 * file this call can flock.
 *
 * lock_dir must be a directory owned by this process's euid with no group
 * or other permission bits (0700), reached without a symlink in its last
 * component; when it is missing it is created 0700 (its parent must
 * exist).  A lock file is LOCK_DIR/<decimal id>, opened
 * O_CREAT|O_NOFOLLOW|O_CLOEXEC mode 0600.
 *
 * Returns 0 with *out filled and out->lock_fd owned by the lease; -1 with
 * err and *out empty (HOSTID_LEASE_NONE) when the lock directory is
 * refused, a database cannot be read, or every id of r is taken or leased.
 * Two acquirers, in one process or many, never hold the same id at once.
 */
int hostid_acquire(const struct hostid_range *r, const struct hostid_files *files, const char *lock_dir,
		   struct hostid_lease *out, char *err, size_t n);

/*
 * Give the id back: unlink its lock file while still holding the lock, then
 * close.  Safe on an empty lease and safe twice; leaves *l empty.  Call it
 * only when nothing running as the id is left, since the next run may take
 * it at once.
 */
void hostid_release(struct hostid_lease *l);

/* count leases of distinct ids at once (a run's executor and its tools),
 * reading the databases once.  All or none: on -1 every out[k] is empty. */
int hostid_acquire_many(const struct hostid_range *r, const struct hostid_files *files, const char *lock_dir,
			struct hostid_lease *out, unsigned count, char *err, size_t n);

#endif
