/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_cell.c - the supervisor's side of a code-interpreter cell
 * (runtime/supervise/cell.h) against a fake session loop: a forked child
 * that speaks the protocol (or breaks it) on a socketpair, with pipes for
 * its stdout and stderr and a pidfd, as the executor has.
 *
 * Each case names the end cell_run() must report: the status bytes, the
 * whole cell received and the output drained after the byte, output told
 * to the callback, and every way the loop can fail the supervisor (a
 * forged byte, a status before the cell was all sent, EOF, a closed
 * channel with the process alive, a timeout, a cancel, a CPU bound).
 */
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "runtime/supervise/cell.h"

/* What the fake loop does with the one cell it gets. */
enum loop_act {
	ACT_ECHO_DONE,     /* the cell's source to stdout, then '0' */
	ACT_RAISE,         /* "Traceback" to stderr, then '1' */
	ACT_FORGE,         /* 'x' */
	ACT_EARLY,         /* '0' before reading anything */
	ACT_EXIT,          /* exit without a byte */
	ACT_CLOSE_LIVE,    /* close the channel, live on */
	ACT_HANG,          /* read the cell, then sleep */
	ACT_FLOOD_DONE,    /* 300 KiB to stdout, then '0' at once */
};

struct fake {
	pid_t pid;
	int pidfd, chan, out_fd, err_fd;
};

static int read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, (char *)buf + got, n - got);

		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

static void write_full(int fd, const void *buf, size_t n)
{
	size_t put = 0;

	while (put < n) {
		ssize_t w = write(fd, (const char *)buf + put, n - put);

		if (w <= 0)
			_exit(99);
		put += (size_t)w;
	}
}

static __attribute__((noreturn)) void loop_child(int chan, int out, int err, enum loop_act act)
{
	unsigned char hdr[4];
	static char src[8 << 20];
	static char flood[300 << 10];
	size_t len = 0;

	if (act == ACT_EARLY) {
		write_full(chan, "0", 1);
		sleep(30);
		_exit(0);
	}
	if (act == ACT_CLOSE_LIVE) {
		close(chan);
		sleep(30);
		_exit(0);
	}
	if (read_full(chan, hdr, 4) != 0)
		_exit(98);
	len = (size_t)hdr[0] << 24 | (size_t)hdr[1] << 16 | (size_t)hdr[2] << 8 | hdr[3];
	if (len > sizeof(src) || read_full(chan, src, len) != 0)
		_exit(97);
	switch (act) {
	case ACT_ECHO_DONE:
		write_full(out, src, len);
		write_full(chan, "0", 1);
		break;
	case ACT_RAISE:
		write_full(err, "Traceback\n", 10);
		write_full(chan, "1", 1);
		break;
	case ACT_FORGE:
		write_full(chan, "x", 1);
		break;
	case ACT_EXIT:
		_exit(3);
	case ACT_HANG:
		sleep(30);
		break;
	case ACT_FLOOD_DONE:
		memset(flood, 'f', sizeof(flood));
		write_full(out, flood, sizeof(flood));
		write_full(chan, "0", 1);
		break;
	default:
		break;
	}
	sleep(30); /* an interpreter waits for the next cell */
	_exit(0);
}

static void fake_start(struct fake *f, enum loop_act act)
{
	int sv[2], po[2], pe[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(pipe2(po, O_CLOEXEC), 0);
	assert_int_equal(pipe2(pe, O_CLOEXEC), 0);
	f->pid = fork();
	assert_true(f->pid >= 0);
	if (f->pid == 0) {
		close(sv[0]);
		close(po[0]);
		close(pe[0]);
		loop_child(sv[1], po[1], pe[1], act);
	}
	close(sv[1]);
	close(po[1]);
	close(pe[1]);
	f->chan = sv[0];
	f->out_fd = po[0];
	f->err_fd = pe[0];
	fcntl(f->out_fd, F_SETFL, O_NONBLOCK);
	fcntl(f->err_fd, F_SETFL, O_NONBLOCK);
	f->pidfd = (int)syscall(SYS_pidfd_open, f->pid, 0);
	assert_true(f->pidfd >= 0);
}

static void fake_end(struct fake *f, struct capture *out, struct capture *err)
{
	kill(f->pid, SIGKILL);
	waitpid(f->pid, NULL, 0);
	for (int *fd = (int[]){ f->pidfd, f->chan, out->fd, err->fd, -2 }; *fd != -2; fd++)
		if (*fd >= 0)
			close(*fd);
	free(out->buf);
	free(err->buf);
}

static void captures(struct fake *f, struct capture *out, struct capture *err, size_t max)
{
	*out = (struct capture){ .fd = f->out_fd, .buf = malloc(max + 1), .max = max };
	*err = (struct capture){ .fd = f->err_fd, .buf = malloc(max + 1), .max = max };
	assert_non_null(out->buf);
	assert_non_null(err->buf);
}

/* Output told to the captures' taps, gathered. */
struct told {
	char buf[1 << 20];
	size_t len;
	int fds;
};

static void on_output(void *arg, int fd, const char *data, size_t len)
{
	struct told *t = arg;

	if (t->len + len <= sizeof(t->buf)) {
		memcpy(t->buf + t->len, data, len);
		t->len += len;
	}
	t->fds |= 1 << fd;
}

static void tap_out(void *arg, const char *data, size_t len)
{
	on_output(arg, 1, data, len);
}

static void tap_err(void *arg, const char *data, size_t len)
{
	on_output(arg, 2, data, len);
}

/* One cell through the fake loop doing act; its end. */
static enum cell_end run_cell(enum loop_act act, const char *code, size_t len, uint64_t timeout_ms,
			      struct cell_cfg *over, struct capture *out_copy, struct told *told)
{
	struct fake f;
	struct capture out, err;
	struct cell_out co;
	struct cell_cfg cfg;
	char msg[256];
	static struct told scratch;

	fake_start(&f, act);
	captures(&f, &out, &err, 1 << 20);
	cfg = over ? *over : (struct cell_cfg){ .cancel_fd = -1 };
	cfg.chan_fd = f.chan;
	cfg.pidfd = f.pidfd;
	cfg.timeout_ms = timeout_ms;
	cfg.monitor_ms = 50;
	out.tap = tap_out;
	err.tap = tap_err;
	out.tap_arg = err.tap_arg = told ? told : &scratch;
	assert_int_equal(cell_run(&cfg, code, len, &out, &err, &co, msg, sizeof(msg)), 0);
	if (out_copy != NULL) {
		out_copy->len = out.len;
		out_copy->buf = malloc(out.len + err.len + 2);
		memcpy(out_copy->buf, out.buf, out.len);
		out_copy->buf[out.len] = '|';
		memcpy(out_copy->buf + out.len + 1, err.buf, err.len);
		out_copy->buf[out.len + 1 + err.len] = '\0';
	}
	fake_end(&f, &out, &err);
	return co.end;
}

static void test_done_and_raised(void **state)
{
	struct capture got = { 0 };
	static struct told told;

	(void)state;
	memset(&told, 0, sizeof(told));
	assert_int_equal(run_cell(ACT_ECHO_DONE, "x = 1\nprint(x)\n", 15, 10000, NULL, &got, &told), CELL_DONE);
	/* the whole cell reached the loop, and its output was read to the end */
	assert_string_equal(got.buf, "x = 1\nprint(x)\n|");
	assert_int_equal(told.len, 15);
	assert_memory_equal(told.buf, "x = 1\nprint(x)\n", 15);
	assert_int_equal(told.fds, 1 << 1);
	free(got.buf);
	assert_int_equal(run_cell(ACT_RAISE, "1/0", 3, 10000, NULL, &got, NULL), CELL_RAISED);
	assert_string_equal(got.buf, "|Traceback\n");
	free(got.buf);
	assert_true(cell_end_continues(CELL_DONE) && cell_end_continues(CELL_RAISED));
	assert_false(cell_end_continues(CELL_EXITED) || cell_end_continues(CELL_BROKEN) ||
		     cell_end_continues(CELL_TIMED_OUT));
}

/* A cell larger than the socket's buffer is sent as the loop reads it;
 * the output written before the status byte is all kept though the byte
 * comes at once after it. */
static void test_large_cell_and_flood(void **state)
{
	size_t n = 4 << 20;
	char *code = malloc(n);
	struct capture got = { 0 };

	(void)state;
	memset(code, '#', n);
	assert_int_equal(run_cell(ACT_ECHO_DONE, code, n, 30000, NULL, &got, NULL), CELL_DONE);
	assert_int_equal(got.len, 1 << 20); /* the capture's bound: the rest read and dropped */
	free(got.buf);
	assert_int_equal(run_cell(ACT_FLOOD_DONE, "x", 1, 30000, NULL, &got, NULL), CELL_DONE);
	assert_int_equal(got.len, 300 << 10);
	free(got.buf);
	free(code);
}

static void test_protocol_broken(void **state)
{
	size_t n = 4 << 20;
	char *code = malloc(n);

	(void)state;
	memset(code, '#', n);
	assert_int_equal(run_cell(ACT_FORGE, "x", 1, 10000, NULL, NULL, NULL), CELL_BROKEN);
	/* a status for a cell it never read */
	assert_int_equal(run_cell(ACT_EARLY, code, n, 10000, NULL, NULL, NULL), CELL_BROKEN);
	/* fd 3 closed, the interpreter alive */
	assert_int_equal(run_cell(ACT_CLOSE_LIVE, "x", 1, 30000, NULL, NULL, NULL), CELL_BROKEN);
	free(code);
}

static void test_exit_timeout_cancel_cpu(void **state)
{
	struct cell_cfg cfg = { .cancel_fd = -1 };
	uint64_t one = 1;
	int efd;

	(void)state;
	assert_int_equal(run_cell(ACT_EXIT, "x", 1, 10000, NULL, NULL, NULL), CELL_EXITED);
	assert_int_equal(run_cell(ACT_HANG, "x", 1, 200, NULL, NULL, NULL), CELL_TIMED_OUT);
	efd = eventfd(0, EFD_CLOEXEC);
	assert_true(efd >= 0);
	assert_int_equal(write(efd, &one, sizeof(one)), (ssize_t)sizeof(one));
	cfg.cancel_fd = efd;
	assert_int_equal(run_cell(ACT_HANG, "x", 1, 30000, &cfg, NULL, NULL), CELL_CANCELLED);
	close(efd);
}

static uint64_t cpu_value;

static int fake_cpu(void *arg, uint64_t *ms)
{
	(void)arg;
	*ms = cpu_value;
	return 0;
}

static void test_session_cpu(void **state)
{
	struct cell_cfg cfg = { .cancel_fd = -1, .cpu_now = fake_cpu, .cpu_max_ms = 1000 };

	(void)state;
	/* over its bound while the cell runs */
	cpu_value = 1001;
	assert_int_equal(run_cell(ACT_HANG, "x", 1, 30000, &cfg, NULL, NULL), CELL_SESSION_CPU);
	/* a cell that completes within the bound */
	cpu_value = 1000;
	assert_int_equal(run_cell(ACT_ECHO_DONE, "x", 1, 30000, &cfg, NULL, NULL), CELL_DONE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_done_and_raised),
		cmocka_unit_test(test_large_cell_and_flood),
		cmocka_unit_test(test_protocol_broken),
		cmocka_unit_test(test_exit_timeout_cancel_cpu),
		cmocka_unit_test(test_session_cpu),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
