/* seccomp_probe.c - makes one raw system call from inside a `warden run` and prints what came
 * back, for tests/integration/run_seccomp.sh (the filter's refusals and their controls).
 *
 * Usage: seccomp_probe PROBE ARGS...
 *   sys NR [ARG...]          syscall(NR, ARG...) on the native ABI (x86_64); an ARG
 *                            `str:TEXT` passes a pointer to TEXT
 *   i386 NR [ARG...]         the same through `int $0x80` (the i386 ABI; x86_64 only), made
 *                            in a child: prints SIGSEGV when the instruction faulted (a
 *                            kernel without the i386 entry: ia32_emulation=0, some FRED
 *                            machines)
 *   x32 NR [ARG...]          NR | __X32_SYSCALL_BIT through `syscall` (the x32 ABI)
 *   clone FLAGS              raw clone(FLAGS | SIGCHLD): the child exits 0 at once
 *   unshare FLAGS            unshare(FLAGS) in a forked child (the probe itself stays put)
 *   chmod|fchmod|fchmodat|fchmodat2 MODE FILE
 *                            the call on FILE (MODE in octal)
 *   socket FAMILY [TYPE]     socket(FAMILY, TYPE (default SOCK_STREAM), 0)
 *   ioctl FD REQUEST         ioctl(FD, REQUEST, buffer) with the full 64-bit REQUEST
 *   pty-ioctl REQUEST        in a child that calls setsid(): a fresh pty (from /dev/ptmx)
 *                            becomes its controlling terminal, then ioctl(slave, REQUEST,
 *                            "x") - TIOCSTI there is allowed by the kernel (own terminal)
 *   tiocsti FD TEXT          pushes TEXT into the terminal FD with TIOCSTI, byte by byte
 *   personality PERSONA      personality(PERSONA), then back to what it was
 *   status                   the Seccomp, Seccomp_filters and NoNewPrivs lines of
 *                            /proc/self/status
 * Numbers are decimal, 0x hex or 0 octal, and may be negative. Prints `ok` when the call
 * returned >= 0, else the errno's name (`EPERM`, `ENOSYS`, ...). Exit 0 when the call was
 * made (whatever it returned), 2 when it could not be (usage, setup).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452 /* NOLINT(bugprone-reserved-identifier,cert-dcl37-c) */
#endif
#define X32_BIT 0x40000000L

static long num(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = (long)strtoull(s, &end, 0);
	if (*s == '-')
		v = strtol(s, &end, 0);
	if (errno || end == s || *end) {
		fprintf(stderr, "seccomp_probe: `%s` is not a number\n", s);
		exit(2);
	}
	return v;
}

/* "ok", or the errno's name. */
static int report(long ret, int err)
{
	const char *name;

	if (ret >= 0) {
		puts("ok");
		return 0;
	}
	name = strerrorname_np(err);
	if (name)
		puts(name);
	else
		printf("errno%d\n", err);
	return 0;
}

#if defined(__x86_64__)
static long raw6(long nr, const long *a)
{
	register long r10 __asm__("r10") = a[3];
	register long r8 __asm__("r8") = a[4];
	register long r9 __asm__("r9") = a[5];
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a[0]), "S"(a[1]), "d"(a[2]), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

static long raw_i386(long nr, const long *a)
{
	long ret;

	/* i386 passes ebx, ecx, edx, esi, edi, ebp; five arguments are enough here */
	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(nr), "b"(a[0]), "c"(a[1]), "d"(a[2]), "S"(a[3]), "D"(a[4])
			 : "memory");
	return ret;
}

/* The i386 call in a child of its own: a kernel without the entry kills it with SIGSEGV. */
static int probe_i386(long nr, const long *a)
{
	int fds[2], st;
	long ret = 0;
	pid_t pid;

	if (pipe(fds))
		return 2;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		/* the kernel's SIGSEGV must end this child: a sanitizer build's own handler would
		 * catch it, print a report and exit instead (seen on a kernel without the entry) */
		signal(SIGSEGV, SIG_DFL);
		close(fds[0]);
		ret = raw_i386(nr, a);
		_exit(write(fds[1], &ret, sizeof(ret)) == (ssize_t)sizeof(ret) ? 0 : 2);
	}
	close(fds[1]);
	if (read(fds[0], &ret, sizeof(ret)) != (ssize_t)sizeof(ret))
		ret = 0;
	close(fds[0]);
	if (waitpid(pid, &st, 0) != pid)
		return 2;
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV) {
		puts("SIGSEGV");
		return 0;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		return 2;
	/* the raw instruction returns -errno itself */
	return report(ret < 0 && ret > -4096 ? -1 : ret, (int)-ret);
}
#endif

/* NR and up to six arguments from argv; the ABI picks the instruction. */
static int probe_raw(const char *abi, int argc, char **argv)
{
	long a[6] = {0}, nr, ret;
#if !defined(__x86_64__)
	int e;
#endif

	if (argc < 1 || argc > 7)
		return 2;
	nr = num(argv[0]);
	for (int i = 1; i < argc; i++)
		a[i - 1] = strncmp(argv[i], "str:", 4) ? num(argv[i]) : (long)(argv[i] + 4);
#if defined(__x86_64__)
	if (!strcmp(abi, "i386"))
		return probe_i386(nr, a);
	ret = raw6(!strcmp(abi, "x32") ? nr | X32_BIT : nr, a);
	/* the raw instruction returns -errno itself */
	return report(ret < 0 && ret > -4096 ? -1 : ret, (int)-ret);
#else
	if (strcmp(abi, "sys")) {
		fprintf(stderr, "seccomp_probe: %s: x86_64 only\n", abi);
		return 2;
	}
	ret = syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	e = errno;
	return report(ret, e);
#endif
}

static int probe_clone(long flags)
{
	long ret = syscall(SYS_clone, flags | SIGCHLD, 0L, 0L, 0L, 0L);
	int e = errno, st;

	if (ret == 0)
		_exit(0);
	if (ret > 0)
		waitpid((pid_t)ret, &st, 0);
	return report(ret, e);
}

static int probe_unshare(long flags)
{
	int fds[2], e = 0, st;
	pid_t pid;

	if (pipe(fds) < 0)
		return 2;
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		e = unshare((int)flags) < 0 ? errno : 0;
		if (write(fds[1], &e, sizeof(e)) != sizeof(e))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], &e, sizeof(e)) != sizeof(e))
		return 2;
	waitpid(pid, &st, 0);
	return report(e ? -1 : 0, e);
}

static int probe_chmod(const char *how, const char *mode_s, const char *file)
{
	mode_t mode = (mode_t)strtoul(mode_s, NULL, 8);
	long ret;
	int fd, e;

	if (!strcmp(how, "chmod"))
		ret = syscall(SYS_chmod, file, mode);
	else if (!strcmp(how, "fchmodat"))
		ret = syscall(SYS_fchmodat, AT_FDCWD, file, mode);
	else if (!strcmp(how, "fchmodat2"))
		ret = syscall(__NR_fchmodat2, AT_FDCWD, file, mode, 0);
	else if (!strcmp(how, "fchmod")) {
		fd = open(file, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			perror(file);
			return 2;
		}
		ret = syscall(SYS_fchmod, fd, mode);
		e = errno;
		close(fd);
		return report(ret, e);
	} else {
		return 2;
	}
	e = errno;
	return report(ret, e);
}

/* A child in its own session whose controlling terminal is a new pty: ioctl(REQUEST) there. */
static int probe_pty_ioctl(long req)
{
	int fds[2], e = 0, st;
	pid_t pid;

	if (pipe(fds) < 0)
		return 2;
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		int m = -1, s = -1;
		/* TIOCSTI reads one byte; TCGETS and friends write a struct */
		char buf[512] = "x";

		if (setsid() < 0 || (m = posix_openpt(O_RDWR)) < 0 || grantpt(m) || unlockpt(m) ||
		    (s = open(ptsname(m), O_RDWR)) < 0 || ioctl(s, TIOCSCTTY, 0) < 0)
			e = -1;
		else if (syscall(SYS_ioctl, s, req, buf) < 0)
			e = errno;
		if (write(fds[1], &e, sizeof(e)) != sizeof(e))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], &e, sizeof(e)) != sizeof(e) || e < 0) {
		fprintf(stderr, "seccomp_probe: pty-ioctl: no pty as controlling terminal\n");
		return 2;
	}
	waitpid(pid, &st, 0);
	return report(e ? -1 : 0, e);
}

static int probe_tiocsti(int fd, const char *text)
{
	for (const char *c = text; *c; c++)
		if (ioctl(fd, TIOCSTI, c) < 0)
			return report(-1, errno);
	return report(0, 0);
}

static int probe_personality(long persona)
{
	long old = syscall(SYS_personality, 0xffffffffL), ret;
	int e;

	ret = syscall(SYS_personality, persona);
	e = errno;
	if (ret >= 0 && old >= 0 && persona != 0xffffffffL)
		syscall(SYS_personality, old);
	return report(ret, e);
}

static int probe_status(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return 2;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Seccomp", 7) || !strncmp(line, "NoNewPrivs", 10))
			fputs(line, stdout);
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	const char *p = argc > 1 ? argv[1] : "";
	char ioctl_buf[512] = "x";
	int e;
	long ret;

	if (!strcmp(p, "sys") || !strcmp(p, "i386") || !strcmp(p, "x32"))
		return probe_raw(p, argc - 2, argv + 2);
	if (!strcmp(p, "clone") && argc == 3)
		return probe_clone(num(argv[2]));
	if (!strcmp(p, "unshare") && argc == 3)
		return probe_unshare(num(argv[2]));
	if ((!strcmp(p, "chmod") || !strcmp(p, "fchmod") || !strcmp(p, "fchmodat") ||
	     !strcmp(p, "fchmodat2")) &&
	    argc == 4)
		return probe_chmod(p, argv[2], argv[3]);
	if (!strcmp(p, "socket") && (argc == 3 || argc == 4)) {
		ret = socket((int)num(argv[2]), argc == 4 ? (int)num(argv[3]) : SOCK_STREAM, 0);
		e = errno;
		return report(ret, e);
	}
	if (!strcmp(p, "ioctl") && argc == 4) {
		ret = syscall(SYS_ioctl, num(argv[2]), num(argv[3]), ioctl_buf);
		e = errno;
		return report(ret, e);
	}
	if (!strcmp(p, "pty-ioctl") && argc == 3)
		return probe_pty_ioctl(num(argv[2]));
	if (!strcmp(p, "tiocsti") && argc == 4)
		return probe_tiocsti((int)num(argv[2]), argv[3]);
	if (!strcmp(p, "personality") && argc == 3)
		return probe_personality(num(argv[2]));
	if (!strcmp(p, "status") && argc == 2)
		return probe_status();
	fprintf(stderr, "usage: seccomp_probe sys|i386|x32|clone|unshare|chmod|fchmod|fchmodat|"
			"fchmodat2|socket|ioctl|pty-ioctl|tiocsti|personality|status ARGS...\n");
	return 2;
}
