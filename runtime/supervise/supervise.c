/* SPDX-License-Identifier: Apache-2.0 */
/*
 * supervise.c - the supervisor's loop while the executor runs.
 *
 * One poll() over the executor's pidfd, the two output pipes and the
 * caller's cancel fd; the timeout and the workspace monitor are deadlines
 * on the same clock.  No process signal is used: a server drives many of
 * these loops at once from its threads.  The executor's init is pid 1 of
 * its pid namespace, so its end ends every process inside: a breach never
 * has to chase forks.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtime/launch/launch.h"
#include "runtime/supervise/supervise.h"

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Keeps what fits of tmp[0..r) and tells the tap; c->lock held. */
static void capture_keep(struct capture *c, const char *tmp, size_t r)
{
	size_t keep = r;

	if (c->len + keep > c->max) {
		keep = c->max - c->len;
		c->truncated = 1;
	}
	memcpy(c->buf + c->len, tmp, keep);
	if (c->tap != NULL && keep > 0)
		c->tap(c->tap_arg, c->buf + c->len, keep);
	c->len += keep;
}

/* Under c->lock, the close too: capture_drain() reads the fd from a
 * bridge thread. */
int capture_read(struct capture *c)
{
	char tmp[16384];
	ssize_t r;
	int e, open_ = 1;

	if (c->lock != NULL)
		pthread_mutex_lock(c->lock);
	r = read(c->fd, tmp, sizeof(tmp));
	e = errno;
	if (r > 0) {
		capture_keep(c, tmp, (size_t)r);
	} else if (r == 0 || (e != EAGAIN && e != EINTR)) {
		close(c->fd);
		c->fd = -1;
		open_ = 0;
	}
	if (c->lock != NULL)
		pthread_mutex_unlock(c->lock);
	return open_;
}

void capture_drain(struct capture *c)
{
	char tmp[16384];
	int avail = 0;

	while (c->fd >= 0 && ioctl(c->fd, FIONREAD, &avail) == 0 && avail > 0) {
		ssize_t r = read(c->fd, tmp, sizeof(tmp));

		if (r <= 0)
			break; /* EOF is the loop's to see and close */
		capture_keep(c, tmp, (size_t)r);
	}
}

static int ws_breached(const struct supervise_cfg *cfg, struct supervise_out *res)
{
	struct ws_usage u;

	/* One statfs, whatever the sandbox made: no walk to outrun or hide
	 * from (depth, unlinked open files and unreadable directories all
	 * count in the tmpfs's own totals). */
	if (cfg->ws == NULL || ws_usage(cfg->ws, &u) != 0)
		return 0;
	if (u.bytes > res->ws_peak)
		res->ws_peak = u.bytes;
	if (u.inodes > res->ws_inodes_peak)
		res->ws_inodes_peak = u.inodes;
	return (cfg->ws_bytes_max != 0 && u.bytes > cfg->ws_bytes_max) ||
	       (cfg->ws_inodes_max != 0 && u.inodes > cfg->ws_inodes_max);
}

/* Ends the run: init is asked to kill and reap (launch.h), so the CPU of
 * what it kills is counted; when there is no init channel, or it cannot
 * take the message, SIGKILL at once.  Returns when SIGKILL is due (now,
 * or after SUPERVISE_KILL_WAIT_MS). */
static uint64_t supervise_kill(const struct supervise_cfg *cfg, uint64_t now)
{
	if (cfg->init_fd >= 0 && launch_init_send(cfg->init_fd, LAUNCH_INIT_KILL, 0, 0, 0) == 0)
		return now + SUPERVISE_KILL_WAIT_MS;
	kill(cfg->child, SIGKILL);
	return 0;
}

int supervise_run(const struct supervise_cfg *cfg, struct capture *out, struct capture *err,
		  struct supervise_out *res, char *msg, size_t n)
{
	uint64_t start = now_ms(), deadline, next_check;
	struct ws_usage u0 = { 0, 0 };
	int reaped = 0, killed = 0;
	uint64_t drain_until = 0, hard_kill = 0;

	memset(res, 0, sizeof(*res));
	res->end = SUP_EXITED;
	if (cfg->ws != NULL)
		ws_usage(cfg->ws, &u0);
	res->ws_baseline = res->ws_peak = u0.bytes;
	res->ws_inodes_baseline = res->ws_inodes_peak = u0.inodes;
	deadline = start + cfg->timeout_ms;
	next_check = start + (cfg->monitor_ms ? cfg->monitor_ms : 500);
	for (;;) {
		struct pollfd pfd[4];
		nfds_t np = 0;
		uint64_t t = now_ms(), wake;
		int timeout;

		if (reaped && ((out->fd < 0 && err->fd < 0) || t >= drain_until))
			break;
		if (!reaped && !killed && t >= deadline) {
			res->end = SUP_TIMED_OUT;
			hard_kill = supervise_kill(cfg, t);
			killed = 1;
		}
		if (!reaped && !killed && t >= next_check) {
			if (ws_breached(cfg, res)) {
				res->end = SUP_WS_BREACH;
				hard_kill = supervise_kill(cfg, t);
				killed = 1;
			}
			next_check = t + (cfg->monitor_ms ? cfg->monitor_ms : 500);
		}
		if (!reaped && hard_kill != 0 && t >= hard_kill) {
			kill(cfg->child, SIGKILL);
			hard_kill = 0;
		}
		wake = reaped ? drain_until : (killed ? t + 100 : (deadline < next_check ? deadline : next_check));
		timeout = wake > t ? (int)(wake - t) : 0;
		/* Slots 0 and 1 always exist (-1 is skipped by poll). */
		pfd[np++] = (struct pollfd){ .fd = reaped ? -1 : cfg->pidfd, .events = POLLIN };
		pfd[np++] = (struct pollfd){ .fd = killed || reaped ? -1 : cfg->cancel_fd, .events = POLLIN };
		if (out->fd >= 0)
			pfd[np++] = (struct pollfd){ .fd = out->fd, .events = POLLIN };
		if (err->fd >= 0)
			pfd[np++] = (struct pollfd){ .fd = err->fd, .events = POLLIN };
		if (poll(pfd, np, timeout) < 0 && errno != EINTR) {
			snprintf(msg, n, "poll: %s", strerror(errno));
			kill(cfg->child, SIGKILL);
			waitpid(cfg->child, NULL, 0);
			return -1;
		}
		for (nfds_t i = 2; i < np; i++)
			if (pfd[i].revents)
				capture_read(pfd[i].fd == out->fd ? out : err);
		/* The cancel fd is the caller's to read: it only has to be
		 * readable here, and stays so, which is why it leaves the poll
		 * once acted on. */
		if ((pfd[1].revents & (POLLIN | POLLHUP | POLLERR)) && !reaped && !killed) {
			res->end = SUP_CANCELLED;
			hard_kill = supervise_kill(cfg, t);
			killed = 1;
		}
		if (!reaped) {
			pid_t r = wait4(cfg->child, &res->wstatus, WNOHANG, &res->ru);

			if (r == cfg->child) {
				reaped = 1;
				res->duration_ms = now_ms() - start;
				/* Every process of the namespace is dead now; the
				 * pipes close as the kernel reaps them. */
				drain_until = now_ms() + 1000;
			}
		}
	}
	/* The final count catches a fill faster than one interval. */
	if (res->end == SUP_EXITED && ws_breached(cfg, res))
		res->end = SUP_WS_BREACH;
	return 0;
}
