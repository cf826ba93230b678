/* SPDX-License-Identifier: Apache-2.0 */
/*
 * caps.c - empty all five capability sets and prove they are empty.
 *
 * The child entered its user namespace holding every capability there and
 * changed uid from an unmapped one, which the kernel does not treat as
 * leaving root, so nothing was cleared for us: it is done here, explicitly,
 * and checked afterwards rather than trusted.
 *
 * This runs in the executor between a raw clone and execve, and the
 * process it was cloned from may be a multi-threaded server: a lock that
 * another thread held at the clone stays held forever in the child.  So
 * the raw capget/capset/prctl system calls only, no libcap (cap_init() and
 * cap_get_proc() allocate), no stdio, no strerror() (it may format an
 * unknown number into an allocated buffer); messages are built by hand on
 * the caller's buffer.
 */
#include <errno.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/launch/launch.h"

/* What a version 3 capget/capset shows: two 32-bit words per set. */
#define CAPS_WORDS _LINUX_CAPABILITY_U32S_3
#define CAPS_BITS (32 * CAPS_WORDS)

/* msg = what [+ " " + cap] [+ ": " + the errno's description], cut short
 * to fit n; no formatting call that might allocate. */
static void caps_msg(char *msg, size_t n, const char *what, int cap, int err)
{
	char num[12];
	const char *desc = err != 0 ? strerrordesc_np(err) : NULL;
	size_t used = 0;
	int i = (int)sizeof(num);

	if (n == 0)
		return;
	msg[0] = '\0';
	for (const char *s = what; *s != '\0' && used + 1 < n; s++)
		msg[used++] = *s;
	if (cap >= 0) {
		unsigned v = (unsigned)cap;

		num[--i] = '\0';
		do
			num[--i] = (char)('0' + v % 10);
		while ((v /= 10) != 0 && i > 0);
		if (used + 1 < n)
			msg[used++] = ' ';
		for (const char *s = num + i; *s != '\0' && used + 1 < n; s++)
			msg[used++] = *s;
	}
	if (err != 0) {
		for (const char *s = ": "; *s != '\0' && used + 1 < n; s++)
			msg[used++] = *s;
		for (const char *s = desc != NULL ? desc : "unknown error"; *s != '\0' && used + 1 < n; s++)
			msg[used++] = *s;
	}
	msg[used] = '\0';
}

/*
 * The highest capability this kernel knows: PR_CAPBSET_READ answers EINVAL
 * past it.  Probed rather than read from /proc/sys/kernel/cap_last_cap
 * (proc may not be mounted where the child stands) or taken from
 * CAP_LAST_CAP (the headers we were built with may be older or newer than
 * the kernel).  A kernel with more capabilities than capget can show is
 * refused: what cannot be checked is not called dropped.
 */
static int caps_last(int *last, char *msg, size_t n)
{
	for (int c = 0; c <= CAPS_BITS; c++) {
		if (prctl(PR_CAPBSET_READ, c, 0, 0, 0) >= 0)
			continue;
		if (errno != EINVAL || c == 0) {
			caps_msg(msg, n, "read bounding capability", c, errno);
			return -1;
		}
		*last = c - 1;
		return 0;
	}
	caps_msg(msg, n, "this kernel has more capabilities than capget shows, at least", CAPS_BITS + 1, 0);
	return -1;
}

int caps_drop_all(char *msg, size_t n)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[CAPS_WORDS];
	int last = -1;

	if (caps_last(&last, msg, n) != 0)
		return -1;
	/* Bounding set before the rest: dropping it needs CAP_SETPCAP. */
	for (int c = 0; c <= last; c++) {
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) != 0) {
			caps_msg(msg, n, "drop bounding capability", c, errno);
			return -1;
		}
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) {
		caps_msg(msg, n, "clear ambient capabilities", -1, errno);
		return -1;
	}
	/* Effective, permitted and inheritable in one call; pid 0 is this
	 * task alone, which is all a raw-cloned child is. */
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capset, &hdr, data) != 0) {
		caps_msg(msg, n, "clear capabilities", -1, errno);
		return -1;
	}

	/* Then read back every set: the kernel's word, not ours. */
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	hdr.pid = 0;
	memset(data, 0xff, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) != 0) {
		caps_msg(msg, n, "read capabilities", -1, errno);
		return -1;
	}
	for (int w = 0; w < CAPS_WORDS; w++) {
		if (data[w].effective != 0 || data[w].permitted != 0 || data[w].inheritable != 0) {
			caps_msg(msg, n, "capabilities still held after the drop, in word", w, 0);
			return -1;
		}
	}
	/* != 0, not > 0: an error here is no proof of absence. */
	for (int c = 0; c <= last; c++) {
		if (prctl(PR_CAPBSET_READ, c, 0, 0, 0) != 0 ||
		    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, c, 0, 0) != 0) {
			caps_msg(msg, n, "capability still held after the drop:", c, 0);
			return -1;
		}
	}
	return 0;
}
