/* caller.c - what the recorder reads of (and writes into) a calling process: a string in its
 * memory, its name, whether it is the program at all (not bubblewrap, not the sandbox's pid
 * 1), a pidfd of it, and the context of one call (its root, current folder and umask), opened
 * before the call is checked to be still waiting. /proc/PID/status through common/proc.c. */
#include "recorder/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* pidfd_open()'s flag for a thread's own pidfd (Linux 6.9; O_EXCL) */
#define RECORDER_PIDFD_THREAD O_EXCL

int recorder_read_string(pid_t pid, uint64_t addr, char *buf, size_t size)
{
	const uint64_t page = 4096;
	size_t got = 0;

	if (!addr)
		return -EFAULT;
	/* page by page: a string that ends just before an unmapped page is still read whole,
	 * and nothing past its NUL is asked for beyond the page it ends in */
	while (got < size) {
		uint64_t at = addr + got;
		size_t n = (size_t)(page - at % page);
		struct iovec l, r;
		ssize_t k;
		char *nul;

		if (at < addr)
			return -EFAULT; /* wrapped around */
		if (n > size - got)
			n = size - got;
		l.iov_base = buf + got;
		l.iov_len = n;
		/* NOLINTNEXTLINE(performance-no-int-to-ptr): an address in the caller's memory */
		r.iov_base = (void *)(uintptr_t)at;
		r.iov_len = n;
		k = process_vm_readv(pid, &l, 1, &r, 1, 0);
		if (k < 0)
			return -errno;
		if (k == 0)
			return -EFAULT;
		nul = memchr(buf + got, '\0', (size_t)k);
		if (nul)
			return (int)(nul - buf);
		got += (size_t)k;
	}
	return -ENAMETOOLONG;
}

int recorder_write_caller(pid_t pid, uint64_t addr, const void *p, size_t n)
{
	/* NOLINTNEXTLINE(performance-no-int-to-ptr): an address in the caller's memory */
	struct iovec l = {(void *)p, n}, r = {(void *)(uintptr_t)addr, n};

	if (!n)
		return 0;
	return process_vm_writev(pid, &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

void recorder_caller_comm(pid_t pid, char *out, size_t size)
{
	char p[48];
	ssize_t n;
	int fd;

	out[0] = '\0';
	snprintf(p, sizeof(p), "/proc/%d/comm", pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, out, size - 1);
	close(fd);
	if (n <= 0)
		n = 0;
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
}

/* The innermost pid of @pid is 1: the sandbox's pid 1 (bubblewrap's setup, then its reaper). */
static bool is_ns_init(pid_t pid)
{
	char v[256];
	const char *last;

	if (wd_proc_status_field(pid, "NSpid", v, sizeof(v)))
		return false;
	last = strrchr(v, '\t');
	/* only an inner namespace's 1: the outer one (one field) is the host's init */
	return last && !strcmp(last + 1, "1");
}

bool recorder_is_program(struct recorder *rf, pid_t pid)
{
	if (pid == rf->outer || pid == rf->reaper)
		return false;
	if (!rf->reaper && is_ns_init(pid)) {
		rf->reaper = pid;
		return false;
	}
	return true;
}

int recorder_caller_pidfd(pid_t tid)
{
	unsigned long tgid;
	int fd;

	fd = (int)syscall(SYS_pidfd_open, tid, RECORDER_PIDFD_THREAD);
	if (fd >= 0 || errno != EINVAL)
		return fd;
	fd = (int)syscall(SYS_pidfd_open, tid, 0);
	if (fd >= 0 || errno != EINVAL)
		return fd;
	/* not a leader, on a kernel without PIDFD_THREAD: its thread group's */
	if (wd_proc_status_num(tid, "Tgid", 10, &tgid) || !tgid || tgid > INT_MAX) {
		errno = ESRCH;
		return -1;
	}
	return (int)syscall(SYS_pidfd_open, (pid_t)tgid, 0);
}

int recorder_call_open(pid_t pid, bool umask_needed, bool pidfd, struct recorder_call *x)
{
	char p[48];
	ssize_t n;

	memset(&x->c, 0, sizeof(x->c));
	x->c.pid = pid;
	x->c.pidfd = -1;
	x->c.umask = 022;
	if (pidfd) {
		x->c.pidfd = recorder_caller_pidfd(pid);
		if (x->c.pidfd < 0)
			return -errno;
	}
	snprintf(p, sizeof(p), "/proc/%d/root", pid);
	x->c.root = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (x->c.root < 0) {
		int e = -errno;

		wd_closep(&x->c.pidfd);
		return e;
	}
	snprintf(p, sizeof(p), "/proc/%d/cwd", pid);
	n = readlink(p, x->cwd, sizeof(x->cwd) - 1);
	if (n > 0 && n < (ssize_t)sizeof(x->cwd) - 1 && x->cwd[0] == '/') {
		x->cwd[n] = '\0';
		x->c.cwd = x->cwd;
	}
	if (umask_needed) {
		unsigned long m = 0;

		if (wd_proc_status_num(pid, "Umask", 8, &m) || m > 0777) {
			wd_closep(&x->c.root);
			wd_closep(&x->c.pidfd);
			return -EIO;
		}
		x->c.umask = (mode_t)m;
	}
	return 0;
}

void recorder_call_close(struct recorder_call *x)
{
	wd_closep(&x->c.root);
	wd_closep(&x->c.pidfd);
}
