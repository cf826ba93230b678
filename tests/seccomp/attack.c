/* SPDX-License-Identifier: Apache-2.0 */
/*
 * attack.c - try the calls a cordon profile must refuse, one child each.
 *
 *   attack all | --list | PROBE...
 *
 * For each probe a child is forked and makes one call; the parent prints
 *
 *   probe NAME: errno=EPERM      the call failed with that errno
 *   probe NAME: signal=SIGSYS    the child died of that signal
 *   probe NAME: ok               the call succeeded
 *
 * in the order asked.  A kill ends only the probe's child, so one run
 * shows every probe.  The program judges nothing: tests/seccomp/README.md
 * says how the lines are checked.
 *
 * Every probe is harmless when it is NOT filtered, because the harness is
 * also run without a filter (as root) to prove the probes reach the
 * kernel: paths that do not exist, invalid flags or magic numbers, NULL
 * pointers, a /dev/null descriptor instead of a terminal.  The call still
 * enters the kernel with the syscall number and the arguments a filter
 * looks at, so an unfiltered run shows ENOENT, EINVAL, EFAULT, ENOTTY and
 * the like, never a changed machine.  Probes that create something (a
 * socket, a user namespace, a child) do it in the probe's own child.
 *
 * Probes the filter lets through but the kernel refuses for lack of
 * privilege also print errno=EPERM: compare with an unfiltered run.
 */
/* Built like the rest of the tree, with -D_GNU_SOURCE (sigabbrev_np,
 * strerrorname_np, the raw syscall numbers). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/swap.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#define NOWHERE "/nonexistent-cordon-probe"
#define X32_SYSCALL_BIT 0x40000000L

/* struct clone_args, version 0 (64 bytes), spelled out so the probe does
 * not depend on the installed kernel headers. */
struct probe_clone_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

/* Each probe returns the raw result: >= 0 success, -1 with errno set. */
struct probe {
	const char *name;
	long (*run)(void);
};

static int probe_null_fd(void)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	return fd < 0 ? 0 : fd; /* fall back to stdin: still not a tty we own */
}

/* A fork-like raw clone or clone3: the new child ends at once. */
static long probe_after_clone(long r)
{
	if (r == 0)
		syscall(SYS_exit, 0);
	if (r > 0)
		waitpid((pid_t)r, NULL, __WALL);
	return r < 0 ? -1 : 0;
}

static long p_ptrace(void) { return syscall(SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, 0, 0); }
static long p_mount(void) { return mount("none", NOWHERE, "tmpfs", 0, NULL); }
static long p_umount2(void) { return umount2(NOWHERE, 0); }
static long p_pivot_root(void) { return syscall(SYS_pivot_root, NOWHERE "/a", NOWHERE "/b"); }
static long p_chroot(void) { return chroot(NOWHERE); }
static long p_unshare(void) { return unshare(CLONE_NEWUSER); }
static long p_setns(void) { return setns(-1, 0); }
static long p_clone_newuser(void)
{
	return probe_after_clone(syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0));
}
static long p_clone_newns(void)
{
	return probe_after_clone(syscall(SYS_clone, CLONE_NEWNS | SIGCHLD, 0, 0, 0, 0));
}
static long p_clone3(void)
{
	struct probe_clone_args a = { .flags = CLONE_NEWUSER, .exit_signal = SIGCHLD };

	return probe_after_clone(syscall(SYS_clone3, &a, sizeof(a)));
}
static long p_bpf(void) { return syscall(SYS_bpf, 0 /* BPF_MAP_CREATE */, NULL, 0); }
static long p_perf_event_open(void) { return syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0); }
static long p_keyctl(void) { return syscall(SYS_keyctl, -1L, 0, 0, 0, 0); }
static long p_add_key(void) { return syscall(SYS_add_key, NULL, NULL, NULL, 0, 0); }
static long p_request_key(void) { return syscall(SYS_request_key, NULL, NULL, NULL, 0); }
/* Unknown flag bits (and a foreign arch field): refused after the
 * capability check, before any image is loaded or unloaded. */
static long p_kexec_load(void) { return syscall(SYS_kexec_load, 0, 0, NULL, 0x00ff8000UL); }
static long p_init_module(void) { return syscall(SYS_init_module, NULL, 0, ""); }
static long p_finit_module(void) { return syscall(SYS_finit_module, -1, "", 0); }
static long p_delete_module(void)
{
	return syscall(SYS_delete_module, "cordon_probe_no_such_module", O_NONBLOCK);
}
static long p_open_by_handle_at(void) { return syscall(SYS_open_by_handle_at, -1, NULL, 0); }
static long p_name_to_handle_at(void)
{
	return syscall(SYS_name_to_handle_at, AT_FDCWD, NOWHERE, NULL, NULL, 0);
}
static long p_userfaultfd(void) { return syscall(SYS_userfaultfd, O_CLOEXEC); }
static long p_io_uring_setup(void) { return syscall(SYS_io_uring_setup, 1, NULL); }
static long p_socket_alg(void) { return socket(AF_ALG, SOCK_SEQPACKET, 0); }
static long p_socket_netlink(void) { return socket(AF_NETLINK, SOCK_RAW, 0); }
static long p_socket_packet(void) { return socket(AF_PACKET, SOCK_RAW, 0); }
/* The high 32 bits set: the kernel reads domain as an int and ignores
 * them; a filter comparing 64-bit values does not. */
static long p_socket_netlink_hi(void)
{
	return syscall(SYS_socket, (long)AF_NETLINK | (1L << 32), SOCK_RAW, 0);
}
static long p_ioctl_tiocsti(void)
{
	char c = 'x';

	return ioctl(probe_null_fd(), TIOCSTI, &c);
}
static long p_ioctl_tiocsti_hi(void)
{
	char c = 'x';

	return syscall(SYS_ioctl, probe_null_fd(), (long)TIOCSTI | (1L << 32), &c);
}
static long p_ioctl_tioclinux(void)
{
	char sub = 2; /* TIOCL_SETSEL; /dev/null is no console anyway */

	return ioctl(probe_null_fd(), TIOCLINUX, &sub);
}
static long p_personality_linux32(void) { return personality(PER_LINUX32); }
static long p_personality_rie(void) { return personality(PER_LINUX | READ_IMPLIES_EXEC); }
static long p_acct(void) { return acct(NOWHERE "/acct"); }
static long p_swapon(void) { return swapon(NOWHERE, 0); }
static long p_swapoff(void) { return swapoff(NOWHERE); }
/* Wrong magic numbers: refused before anything happens. */
static long p_reboot(void) { return syscall(SYS_reboot, 0L, 0L, 0L, NULL); }
/* Out-of-range fields: refused before the clock is touched.  Raw calls:
 * glibc's wrappers check the fields themselves and never enter the
 * kernel, which would make the probe prove nothing. */
static long p_settimeofday(void)
{
	struct timeval tv = { 0, 2000000 };

	return syscall(SYS_settimeofday, &tv, NULL);
}
static long p_clock_settime(void)
{
	struct timespec ts = { 0, 2000000000L };

	return syscall(SYS_clock_settime, CLOCK_REALTIME, &ts);
}
static long p_syslog(void) { return klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0); }
/* x32 ABI: arch is still AUDIT_ARCH_X86_64, the number has bit 30. */
static long p_x32_getpid(void) { return syscall(X32_SYSCALL_BIT | SYS_getpid); }
/* i386 ABI through int $0x80 (arch AUDIT_ARCH_I386): getpid is 20. */
static long p_i386_getpid(void)
{
	long r = 20;

	__asm__ volatile("int $0x80" : "+a"(r) : : "r8", "r9", "r10", "r11", "memory", "cc");
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return -1;
	}
	return r;
}
static long p_getpid(void) { return getpid(); }

static const struct probe probes[] = {
	{ "ptrace", p_ptrace },
	{ "mount", p_mount },
	{ "umount2", p_umount2 },
	{ "pivot_root", p_pivot_root },
	{ "chroot", p_chroot },
	{ "unshare_newuser", p_unshare },
	{ "setns", p_setns },
	{ "clone_newuser", p_clone_newuser },
	{ "clone_newns", p_clone_newns },
	{ "clone3_newuser", p_clone3 },
	{ "bpf", p_bpf },
	{ "perf_event_open", p_perf_event_open },
	{ "keyctl", p_keyctl },
	{ "add_key", p_add_key },
	{ "request_key", p_request_key },
	{ "kexec_load", p_kexec_load },
	{ "init_module", p_init_module },
	{ "finit_module", p_finit_module },
	{ "delete_module", p_delete_module },
	{ "open_by_handle_at", p_open_by_handle_at },
	{ "name_to_handle_at", p_name_to_handle_at },
	{ "userfaultfd", p_userfaultfd },
	{ "io_uring_setup", p_io_uring_setup },
	{ "socket_alg", p_socket_alg },
	{ "socket_netlink", p_socket_netlink },
	{ "socket_packet", p_socket_packet },
	{ "socket_netlink_hi", p_socket_netlink_hi },
	{ "ioctl_tiocsti", p_ioctl_tiocsti },
	{ "ioctl_tiocsti_hi", p_ioctl_tiocsti_hi },
	{ "ioctl_tioclinux", p_ioctl_tioclinux },
	{ "personality_linux32", p_personality_linux32 },
	{ "personality_rie", p_personality_rie },
	{ "acct", p_acct },
	{ "swapon", p_swapon },
	{ "swapoff", p_swapoff },
	{ "reboot", p_reboot },
	{ "settimeofday", p_settimeofday },
	{ "clock_settime", p_clock_settime },
	{ "syslog", p_syslog },
	{ "x32_getpid", p_x32_getpid },
	{ "i386_getpid", p_i386_getpid },
	{ "getpid", p_getpid },
};
#define NPROBES (sizeof(probes) / sizeof(probes[0]))

/* Exit codes of a probe child: 0 success, 1..254 the errno, 255 an errno
 * too large to pass (none is, on Linux). */
static void probe_child(const struct probe *p)
{
	long r;

	errno = 0;
	r = p->run();
	if (r >= 0)
		_exit(0);
	_exit(errno > 0 && errno < 255 ? errno : 255);
}

/* Run one probe and print its line.  Returns 0, or -1 if fork failed. */
static int probe_run(const struct probe *p)
{
	char sig[32];
	const char *e;
	pid_t pid;
	int st = 0;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		probe_child(p);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFSIGNALED(st)) {
		e = sigabbrev_np(WTERMSIG(st));
		if (e)
			snprintf(sig, sizeof(sig), "SIG%s", e);
		else
			snprintf(sig, sizeof(sig), "%d", WTERMSIG(st));
		printf("probe %s: signal=%s\n", p->name, sig);
	} else if (WEXITSTATUS(st) == 0) {
		printf("probe %s: ok\n", p->name);
	} else {
		e = strerrorname_np(WEXITSTATUS(st));
		if (e && WEXITSTATUS(st) != 255)
			printf("probe %s: errno=%s\n", p->name, e);
		else
			printf("probe %s: errno=%d\n", p->name, WEXITSTATUS(st));
	}
	return 0;
}

static const struct probe *probe_find(const char *name)
{
	for (size_t i = 0; i < NPROBES; i++)
		if (strcmp(probes[i].name, name) == 0)
			return &probes[i];
	return NULL;
}

int main(int argc, char **argv)
{
	struct rlimit nocore = { 0, 0 };

	if (argc < 2) {
		fprintf(stderr, "usage: attack all | --list | PROBE...\n");
		return 2;
	}
	if (strcmp(argv[1], "--list") == 0) {
		for (size_t i = 0; i < NPROBES; i++)
			printf("%s\n", probes[i].name);
		return 0;
	}
	/* The SIGSYS deaths to come must not leave core files behind.  Either
	 * call may itself be refused by the filter under test: no matter. */
	setrlimit(RLIMIT_CORE, &nocore);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	/* Check every name before running anything. */
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "all") != 0 && probe_find(argv[i]) == NULL) {
			fprintf(stderr, "attack: no probe named '%s' (see --list)\n", argv[i]);
			return 2;
		}
	for (int i = 1; i < argc; i++) {
		int all = strcmp(argv[i], "all") == 0;

		for (size_t j = 0; j < NPROBES; j++) {
			if (!all && strcmp(probes[j].name, argv[i]) != 0)
				continue;
			if (probe_run(&probes[j]) < 0) {
				fprintf(stderr, "attack: cannot run probe %s: %s\n", probes[j].name,
					strerror(errno));
				return 1;
			}
		}
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
