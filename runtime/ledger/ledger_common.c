/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ledger_common.c - the parts of the ledger every back end shares
 * (ledger_common.h): process identity on this host, the wait for another
 * owner, argument checks.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "runtime/ledger/ledger_common.h"
#include "runtime/ledger/ledger_id.h"

uint64_t ledger_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Sleeps *step ms, cut to what is left before deadline (CLOCK_MONOTONIC
 * ms), and doubles *step up to LEDGER_POLL_MAX_MS.  Returns 0, without
 * sleeping, once the deadline has passed; -1 as soon as cancel_fd (when
 * >= 0) is readable, so a run that ends never waits here; 1 otherwise. */
int ledger_nap(uint64_t deadline, uint64_t *step, int cancel_fd)
{
	uint64_t now = ledger_now_ms(), len = *step;
	struct pollfd pfd = { .fd = cancel_fd, .events = POLLIN };

	if (now >= deadline)
		return 0;
	if (len > deadline - now)
		len = deadline - now;
	if (poll(&pfd, cancel_fd >= 0 ? 1 : 0, (int)len) > 0 && (pfd.revents & (POLLIN | POLLHUP | POLLERR)))
		return -1;
	*step = *step * 2 > LEDGER_POLL_MAX_MS ? LEDGER_POLL_MAX_MS : *step * 2;
	return 1;
}

/* ---- process identity ------------------------------------------------- */

/* Reads the state letter and start time of pid (0: this process, through
 * /proc/self, whatever pid namespace /proc was mounted for).  Returns 0, or
 * -1 with errno (ENOENT: no such process). */
static int proc_stat_read(int64_t pid, char *state, int64_t *start)
{
	char path[64], buf[1024], *p, *end;
	ssize_t got;
	size_t len = 0;
	unsigned long long v;
	int fd, i;

	if (pid == 0)
		snprintf(path, sizeof(path), "/proc/self/stat");
	else
		snprintf(path, sizeof(path), "/proc/%" PRId64 "/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	while (len < sizeof(buf) - 1) {
		got = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		len += (size_t)got;
	}
	close(fd);
	buf[len] = '\0';
	/* comm (field 2) may hold spaces and ')': the last ')' ends it. */
	p = strrchr(buf, ')');
	if (p == NULL || p[1] != ' ' || p[2] == '\0')
		goto bad;
	p += 2;
	*state = *p;
	/* p is at field 3; field 22 is 19 fields on. */
	for (i = 3; i < 22; i++) {
		p = strchr(p, ' ');
		if (p == NULL)
			goto bad;
		p++;
	}
	errno = 0;
	v = strtoull(p, &end, 10);
	if (end == p || (*end != ' ' && *end != '\n' && *end != '\0') || errno != 0 || v > INT64_MAX)
		goto bad;
	*start = (int64_t)v;
	return 0;
bad:
	errno = EPROTO;
	return -1;
}

int ledger_owner_self(struct ledger_owner *o, char *err, size_t n)
{
	struct stat st;
	ssize_t got;
	char state;
	int fd;

	memset(o, 0, sizeof(*o));
	o->pid = getpid();
	fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		got = read(fd, o->boot, sizeof(o->boot) - 1);
		o->boot[got > 0 ? got : 0] = '\0';
		o->boot[strcspn(o->boot, "\n")] = '\0';
		close(fd);
	}
	if (stat("/proc/self/ns/pid", &st) == 0)
		o->pidns = (int64_t)st.st_ino;
	if (proc_stat_read(0, &state, &o->start) != 0) {
		ledger_errf(err, n, "ledger: cannot read this process's start time from /proc/self/stat: %s",
			    strerror(errno));
		return -1;
	}
	return 0;
}


/* Is the owner of a pending record still running?  Only a definite "gone"
 * lets the caller answer IN_DOUBT at once; an owner that cannot be checked
 * from here is waited for like a live one. */
enum owner_liveness ledger_owner_check(const struct ledger_owner *self, const struct ledger_owner *o)
{
	int64_t start;
	char state;

	if (o->boot[0] != '\0' && self->boot[0] != '\0' && strcmp(o->boot, self->boot) != 0)
		return OWNER_GONE; /* written before a reboot: every process of then is gone */
	if (o->pidns != 0 && self->pidns != 0 && o->pidns != self->pidns)
		return OWNER_UNKNOWN; /* its pid means nothing in our namespace */
	if (o->pid == self->pid && o->start == self->start)
		return OWNER_ALIVE; /* another thread of ours, or the same id twice */
	if (o->pid <= 0 || o->pid > INT32_MAX)
		return OWNER_GONE;
	if (proc_stat_read(o->pid, &state, &start) != 0)
		return errno == ENOENT || errno == ESRCH ? OWNER_GONE : OWNER_UNKNOWN;
	/* A zombie has finished all it will ever do. */
	if (start != o->start || state == 'Z' || state == 'X' || state == 'x')
		return OWNER_GONE;
	return OWNER_ALIVE;
}

int ledger_arg_id(const char *s, int may_be_empty)
{
	return s != NULL && (may_be_empty || s[0] != '\0') && strnlen(s, LEDGER_MAX_ID + 1) <= LEDGER_MAX_ID;
}

/* "YYYY-MM-DD", a real date: it keys the day counter and the prune. */
int ledger_arg_day(const char *d)
{
	static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int i, y, m, dd;

	if (d == NULL || strnlen(d, 11) != 10)
		return 0;
	for (i = 0; i < 10; i++)
		if (i == 4 || i == 7 ? d[i] != '-' : (d[i] < '0' || d[i] > '9'))
			return 0;
	y = atoi(d);
	m = atoi(d + 5);
	dd = atoi(d + 8);
	if (m < 1 || m > 12 || dd < 1 || dd > mdays[m - 1])
		return 0;
	return !(m == 2 && dd == 29 && !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)));
}

int ledger_arg_digest(const char *h)
{
	int i;

	if (h == NULL)
		return 0;
	for (i = 0; i < 64; i++)
		if (!((h[i] >= '0' && h[i] <= '9') || (h[i] >= 'a' && h[i] <= 'f')))
			return 0;
	return h[64] == '\0';
}

/* The fields every call names; what each is, in the error. */
int ledger_arg_call(const void *l, const struct ledger_call *c, char *err, size_t n)
{
	if (l == NULL || c == NULL) {
		ledger_errf(err, n, "ledger: no ledger or no call");
		return 0;
	}
	if (!ledger_arg_id(c->app, 0) || !ledger_arg_id(c->tool, 0) || !ledger_arg_id(c->exec_id, 0)) {
		ledger_errf(err, n, "ledger: app, tool and exec_id must be non-empty and at most %d bytes",
			    LEDGER_MAX_ID);
		return 0;
	}
	/* NULL is a caller that forgot the tenant, not one that has none: read
	 * as "", it would share every tenant-less record and counter. */
	if (!ledger_arg_id(c->tenant, 1)) {
		ledger_errf(err, n, "ledger: the call needs a tenant (\"\" for none) of at most %d bytes",
			    LEDGER_MAX_ID);
		return 0;
	}
	return 1;
}
int ledger_arg_filter(const struct ledger_filter *f, char *err, size_t n)
{
	const char *v[] = { f->app, f->tenant, f->user, f->tool, f->message_id };

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (v[i] != NULL && !ledger_arg_id(v[i], 1)) {
			ledger_errf(err, n, "ledger: a key field over %d bytes", LEDGER_MAX_ID);
			return 0;
		}
	if (f->state != NULL && strcmp(f->state, "pending") != 0 && strcmp(f->state, "done") != 0 &&
	    strcmp(f->state, "in_doubt") != 0) {
		ledger_errf(err, n, "ledger: state must be pending, done or in_doubt");
		return 0;
	}
	return 1;
}

enum ledger_replay ledger_replay_loop(void *l, ledger_replay_try_fn try_fn, const struct ledger_call *c,
				      const char *message_id, const char *params_sha256, uint64_t wait_ms,
				      int cancel_fd, char **response, char *err, size_t n)
{
	uint64_t deadline, step = 1;
	enum ledger_replay res;
	int wait;

	if (response == NULL) {
		ledger_errf(err, n, "ledger: no place for the response");
		return LEDGER_REPLAY_ERROR;
	}
	*response = NULL;
	if (!ledger_arg_call(l, c, err, n))
		return LEDGER_REPLAY_ERROR;
	if (!ledger_arg_id(c->user, 1)) {
		ledger_errf(err, n, "ledger: the call needs a user (\"\" for none) of at most %d bytes", LEDGER_MAX_ID);
		return LEDGER_REPLAY_ERROR;
	}
	if (!ledger_arg_id(message_id, 0) || !ledger_arg_digest(params_sha256)) {
		ledger_errf(err, n,
			    "ledger: replay needs a message id (1 to %d bytes) and the params digest as 64 "
			    "lower-case hex digits",
			    LEDGER_MAX_ID);
		return LEDGER_REPLAY_ERROR;
	}
	deadline = ledger_now_ms();
	deadline = wait_ms > UINT64_MAX - deadline ? UINT64_MAX : deadline + wait_ms;
	for (;;) {
		res = try_fn(l, c, message_id, params_sha256, response, &wait, err, n);
		if (!wait)
			return res;
		/* Pending under a live owner: look again later, holding neither
		 * the mutex nor a transaction, so the owner (maybe another
		 * thread of ours) can finish. */
		switch (ledger_nap(deadline, &step, cancel_fd)) {
		case 0:
			return LEDGER_REPLAY_IN_DOUBT;
		case -1:
			return LEDGER_REPLAY_CANCELLED;
		}
	}
}
