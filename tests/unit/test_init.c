/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_init.c - the executor's init (runtime/launch/init.c): its seccomp
 * filter (the kernel's rules, each call of its loop allowed, everything
 * else and every other ABI killed), the init channel's two messages, the
 * command line it blanks, and the init itself at pid 1 of a fresh pid
 * namespace: the program's end relayed, the deadline that fires without
 * the supervisor, orphans reaped, and a supervisor gone.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/seccomp.h>

#include <cmocka.h>

#include "common/bpf_check.h"
#include "compiler/bpf_sim.h"
#include "runtime/launch/launch.h"

static uint32_t filter_says(int nr, uint32_t arch)
{
	unsigned short n;
	const struct sock_filter *f = launch_init_filter(&n);
	struct bpf_sim_data d = { .nr = nr, .arch = arch };

	return bpf_sim_run((const struct cpol_bpf *)f, n, &d);
}

static void test_filter_is_valid(void **state)
{
	unsigned short n;
	const struct sock_filter *f = launch_init_filter(&n);
	uint32_t bad = 0;
	const char *why = NULL;

	(void)state;
	_Static_assert(sizeof(struct sock_filter) == sizeof(struct cpol_bpf), "layouts differ");
	assert_int_equal(bpf_check((const struct cpol_bpf *)f, n, &bad, &why), BPF_CHECK_OK);
}

static void test_filter_allows_the_loop_only(void **state)
{
	const int allowed[] = { SYS_read,  SYS_recvfrom,     SYS_sendto,	   SYS_close,
				SYS_wait4, SYS_kill,	     SYS_clock_gettime,	   SYS_restart_syscall,
				SYS_ppoll, SYS_exit_group, SYS_exit,
#ifdef SYS_poll
				SYS_poll,
#endif
	};
	const int refused[] = { SYS_openat, SYS_execve, SYS_ptrace, SYS_clone, SYS_socket, SYS_mmap,
				SYS_getpid, SYS_write, SYS_prctl, SYS_process_vm_readv, SYS_setns };

	(void)state;
	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		assert_int_equal(filter_says(allowed[i], AUDIT_ARCH_X86_64), BPF_SIM_RET_ALLOW);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		assert_int_equal(filter_says(refused[i], AUDIT_ARCH_X86_64), BPF_SIM_RET_KILL_PROCESS);
	/* the i386 entry and x32 numbers reach none of the allowed calls */
	assert_int_equal(filter_says(3, AUDIT_ARCH_I386), BPF_SIM_RET_KILL_PROCESS);
	assert_int_equal(filter_says(0x40000000 | SYS_read, AUDIT_ARCH_X86_64), BPF_SIM_RET_KILL_PROCESS);
}

static void test_channel(void **state)
{
	struct launch_init_msg m;
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	/* nothing queued */
	assert_int_equal(launch_init_recv(sv[1], LAUNCH_INIT_ARM, &m), 0);
	assert_int_equal(launch_init_send(sv[0], LAUNCH_INIT_ARM, 0, 0, 123456789), 0);
	assert_int_equal(launch_init_recv(sv[1], LAUNCH_INIT_ARM, &m), 1);
	assert_int_equal(m.deadline_ns, 123456789);
	assert_int_equal(launch_init_send(sv[1], LAUNCH_INIT_END, LAUNCH_INIT_F_DEADLINE, 9, 0), 0);
	assert_int_equal(launch_init_recv(sv[0], LAUNCH_INIT_END, &m), 1);
	assert_int_equal(m.wstatus, 9);
	assert_int_equal(m.flags, LAUNCH_INIT_F_DEADLINE);
	/* the other message where one was wanted */
	assert_int_equal(launch_init_send(sv[0], LAUNCH_INIT_ARM, 0, 0, 1), 0);
	assert_int_equal(launch_init_recv(sv[1], LAUNCH_INIT_END, &m), -1);
	assert_int_equal(errno, EPROTO);
	/* short, long, unknown flags */
	assert_int_equal(send(sv[0], "abc", 3, 0), 3);
	assert_int_equal(launch_init_recv(sv[1], LAUNCH_INIT_ARM, &m), -1);
	assert_int_equal(errno, EPROTO);
	{
		char big[sizeof(m) + 8] = { 0 };
		uint32_t magic = LAUNCH_INIT_ARM;

		memcpy(big, &magic, sizeof(magic));
		assert_int_equal(send(sv[0], big, sizeof(big), 0), (ssize_t)sizeof(big));
		assert_int_equal(launch_init_recv(sv[1], LAUNCH_INIT_ARM, &m), -1);
		assert_int_equal(errno, EPROTO);
	}
	assert_int_equal(launch_init_send(sv[0], LAUNCH_INIT_ARM, 4, 0, 1), 0);
	assert_int_equal(launch_init_recv(sv[1], LAUNCH_INIT_ARM, &m), -1);
	assert_int_equal(errno, EPROTO);
	/* the peer gone */
	close(sv[0]);
	assert_int_equal(launch_init_recv(sv[1], LAUNCH_INIT_ARM, &m), -1);
	assert_int_equal(errno, ECONNRESET);
	assert_int_equal(launch_init_send(sv[1], LAUNCH_INIT_END, 0, 0, 0), -1);
	close(sv[1]);
}

static void test_args_area(void **state)
{
	uintptr_t a, b;

	(void)state;
	assert_int_equal(launch_init_args(&a, &b), 0);
	assert_true(b > a);
	/* argv[0] opens the area */
	assert_memory_equal((const char *)a, program_invocation_name, strlen(program_invocation_name));
}

/* ---- the init at pid 1 --------------------------------------------------- */

enum scenario { EXITS_7, SLEEPS, ORPHAN, EXITS_LEAVING_ONE };

/* The program (pid 2) of each scenario.  Its exit code is what the test
 * reads in the init's report. */
static __attribute__((noreturn)) void program(enum scenario sc)
{
	int p[2];
	pid_t g = 0;

	switch (sc) {
	case EXITS_7:
		_exit(7);
	case SLEEPS:
		for (;;)
			pause();
	case EXITS_LEAVING_ONE:
		if (fork() == 0)
			for (;;)
				pause();
		_exit(7);
	case ORPHAN:
		/* a grandchild that outlives its parent and exits: re-parented
		 * to init, which must reap it (a zombie answers kill(0)) */
		if (pipe(p) != 0)
			_exit(90);
		if (fork() == 0) {
			pid_t gc = fork();

			if (gc == 0) {
				usleep(100000);
				_exit(0);
			}
			if (write(p[1], &gc, sizeof(gc)) != sizeof(gc))
				_exit(91);
			_exit(0);
		}
		if (read(p[0], &g, sizeof(g)) != sizeof(g))
			_exit(92);
		for (int i = 0; i < 100; i++) {
			usleep(20000);
			if (kill(g, 0) != 0 && errno == ESRCH)
				_exit(0);
		}
		_exit(1);
	}
	_exit(93);
}

struct init_run {
	int armed;              /* init answered the deadline */
	int have;               /* init reported */
	struct launch_init_msg m;
	int init_status;        /* init's own wait status, as its parent saw it */
	double secs;            /* from the arm to init's end */
};

/* fork; the child unshares a user and a pid namespace and forks pid 1,
 * which forks the program and becomes the init; the test is the
 * supervisor: it arms the deadline (deadline_ms from now; -1: closes the
 * channel instead) and reads the report.  0, or -1 when this host gives
 * no user namespace. */
static int init_run(enum scenario sc, int deadline_ms, struct init_run *out)
{
	struct launch_plan lp;
	struct timespec t0, t1;
	int ch[2], perr[2], st = 0;
	pid_t c;

	memset(out, 0, sizeof(*out));
	out->armed = -1;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ch), 0);
	assert_int_equal(pipe2(perr, O_CLOEXEC), 0);
	c = fork();
	assert_true(c >= 0);
	if (c == 0) {
		pid_t one, prog;

		close(ch[0]);
		close(perr[0]);
		if (unshare(CLONE_NEWUSER | CLONE_NEWPID) != 0)
			_exit(99);
		one = fork();
		if (one == 0) {
			memset(&lp, 0, sizeof(lp));
			lp.init_fd = ch[1];
			lp.err_fd = perr[1];
			if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
				_exit(98);
			prog = fork();
			if (prog == 0)
				program(sc);
			launch_init(&lp, prog);
		}
		/* the init's end, passed on as ours */
		while (waitpid(one, &st, 0) < 0 && errno == EINTR)
			;
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 200 + WTERMSIG(st));
	}
	close(ch[1]);
	close(perr[1]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (deadline_ms >= 0) {
		struct pollfd p = { .fd = ch[0], .events = POLLIN };

		assert_int_equal(launch_init_send(ch[0], LAUNCH_INIT_ARM, 0, 0,
						  (uint64_t)t0.tv_sec * 1000000000u + (uint64_t)t0.tv_nsec +
							  (uint64_t)deadline_ms * 1000000u),
				 0);
		/* the answer comes (unless the program ended first) */
		if (poll(&p, 1, 5000) == 1) {
			out->armed = launch_init_recv(ch[0], LAUNCH_INIT_ARMED, &out->m) == 1;
			/* A program that does not wait for a go (these do not)
			 * can end before init reads ARM: init then answers END
			 * alone, and that message is the one just read. */
			if (!out->armed && out->m.magic == LAUNCH_INIT_END)
				out->have = 1;
		}
	} else {
		close(ch[0]);
	}
	assert_int_equal(waitpid(c, &st, 0), c);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	close(perr[0]);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 99) {
		if (deadline_ms >= 0)
			close(ch[0]);
		return -1;
	}
	out->init_status = st;
	out->secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (deadline_ms >= 0) {
		if (!out->have)
			out->have = launch_init_recv(ch[0], LAUNCH_INIT_END, &out->m) == 1;
		close(ch[0]);
	}
	return 0;
}

static void test_init_relays_the_exit(void **state)
{
	struct init_run r;

	(void)state;
	if (init_run(EXITS_7, 60000, &r) != 0)
		skip();
	assert_true(r.have);
	assert_true(WIFEXITED(r.m.wstatus));
	assert_int_equal(WEXITSTATUS(r.m.wstatus), 7);
	assert_int_equal(r.m.flags, 0);
	/* init's own end mirrors it */
	assert_true(WIFEXITED(r.init_status));
	assert_int_equal(WEXITSTATUS(r.init_status), 7);
}

static void test_init_ends_the_rest_with_the_program(void **state)
{
	struct init_run r;

	(void)state;
	if (init_run(EXITS_LEAVING_ONE, 60000, &r) != 0)
		skip();
	assert_true(r.have);
	assert_int_equal(WEXITSTATUS(r.m.wstatus), 7);
	assert_true(r.secs < LAUNCH_INIT_LINGER_MS / 1000.0);
}

/* The regression of issue 15: the supervisor's timeout alone let a program
 * run on while the supervisor was stopped.  Here nobody but init acts. */
static void test_init_deadline_fires_alone(void **state)
{
	struct init_run r;

	(void)state;
	if (init_run(SLEEPS, 200, &r) != 0)
		skip();
	assert_int_equal(r.armed, 1);
	assert_true(r.have);
	assert_true(WIFSIGNALED(r.m.wstatus));
	assert_int_equal(WTERMSIG(r.m.wstatus), SIGKILL);
	assert_int_equal(r.m.flags, LAUNCH_INIT_F_DEADLINE);
	assert_true(r.secs >= 0.2 + LAUNCH_INIT_GRACE_MS / 1000.0 - 0.01);
	assert_true(r.secs < 0.2 + LAUNCH_INIT_GRACE_MS / 1000.0 + 2.0);
}

static void test_init_reaps_orphans(void **state)
{
	struct init_run r;

	(void)state;
	if (init_run(ORPHAN, 60000, &r) != 0)
		skip();
	assert_true(r.have);
	assert_true(WIFEXITED(r.m.wstatus));
	assert_int_equal(WEXITSTATUS(r.m.wstatus), 0);
}

static void test_init_without_supervisor(void **state)
{
	struct init_run r;

	(void)state;
	if (init_run(SLEEPS, -1, &r) != 0)
		skip();
	/* the program was killed and init ended with it, no deadline needed */
	assert_true(WIFEXITED(r.init_status));
	assert_int_equal(WEXITSTATUS(r.init_status), 128 + SIGKILL);
	assert_true(r.secs < 2.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filter_is_valid),
		cmocka_unit_test(test_filter_allows_the_loop_only),
		cmocka_unit_test(test_channel),
		cmocka_unit_test(test_args_area),
		cmocka_unit_test(test_init_relays_the_exit),
		cmocka_unit_test(test_init_ends_the_rest_with_the_program),
		cmocka_unit_test(test_init_deadline_fires_alone),
		cmocka_unit_test(test_init_reaps_orphans),
		cmocka_unit_test(test_init_without_supervisor),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
