/* connect.c - trace mode's connect(2), every one (the trace filter watches them all): the
 * recorder carries it out on the caller's own socket (pidfd_getfd) with the address read once,
 * so the kernel never reads the address or looks the descriptor up again. A unix socket by
 * path is let through only when the person named it or it lies in the sandbox's own scratch
 * tmpfs (a learning sandbox's /dev/shm; docs/files.md "Unix sockets in a trace"), and only for a
 * caller whose ids are the recorder's own (the server reads them, SO_PEERCRED): never as anyone
 * else. */
#include "recorder/internal.h"
#include "trace/file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

/* How long the recorder waits for a blocking connect that did not complete at once (a TCP
 * handshake; through the gateway it completes at once). Every other watched call of the
 * program waits behind it; past it the caller gets ETIMEDOUT. */
#define CONNECT_WAIT_MS 10000
#define CONNECT_RETRY_MS 10

/*
 * connect(2) of @sfd (the caller's socket, taken with pidfd_getfd: the same open file) to
 * @addr, here, as the caller would have it: without waiting longer than CONNECT_WAIT_MS when
 * the caller's socket blocks (the recorder never hangs the sandbox behind one connect).
 * Return: 0, or the negative errno for the caller.
 */
static long connect_here(int sfd, const void *addr, socklen_t len)
{
	struct pollfd pfd = {.fd = sfd, .events = POLLOUT};
	int fl = fcntl(sfd, F_GETFL), err = 0, waited = 0;
	socklen_t el = sizeof(err);
	long r;

	if (fl < 0)
		return -EBADF;
	if (fl & O_NONBLOCK)
		return connect(sfd, addr, len) ? -errno : 0;
	if (fcntl(sfd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	for (;;) {
		r = connect(sfd, addr, len) ? -errno : 0;
		/* a unix socket whose listener's backlog is full: the caller would wait */
		if (r != -EAGAIN || waited >= CONNECT_WAIT_MS)
			break;
		poll(NULL, 0, CONNECT_RETRY_MS);
		waited += CONNECT_RETRY_MS;
	}
	(void)fcntl(sfd, F_SETFL, fl);
	if (r == -EAGAIN)
		return -ETIMEDOUT;
	if (r != -EINPROGRESS)
		return r;
	/* a handshake under way: the caller would wait for it */
	r = poll(&pfd, 1, CONNECT_WAIT_MS);
	if (r <= 0)
		return -ETIMEDOUT;
	if (getsockopt(sfd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
		return -errno;
	return err ? -err : 0;
}

/*
 * connect_here() for the caller @pid, whose ids the server reads (SO_PEERCRED) and the kernel
 * checks the socket file's permission with: the recorder's own ids, which are the program's
 * user's (process.c). It never connects as anyone else: a caller whose effective uid or gid
 * is not the recorder's (or whose ids cannot be read) is refused, -EACCES. The recorder holds
 * no capability, so there is nothing to switch with either.
 */
static long connect_as_caller(pid_t pid, int sfd, const void *addr, socklen_t len)
{
	unsigned long uid[4], gid[4];

	if (wd_proc_status_ids(pid, "Uid", uid) || wd_proc_status_ids(pid, "Gid", gid) ||
	    uid[1] != (unsigned long)geteuid() || gid[1] != (unsigned long)getegid())
		return -EACCES;
	return connect_here(sfd, addr, len);
}

/*
 * Whether the learning sandbox lets a program reach the socket file @fd (O_PATH, opened in
 * the caller's view): one the person named (the same file as a named path reaches now in
 * the caller's view, with no symbolic link on the way: a link the program made in its
 * writable folder does not turn a named path into another socket), or one in the sandbox's
 * own scratch, /tmp or /dev/shm (a tmpfs of its own that no host service can have a socket
 * in; never the host's folder of that name, on another device).
 */
static bool socket_allowed(const struct recorder_emul_ctx *c, int fd)
{
	static const char *const scratch[] = {"/tmp", "/dev/shm"};
	struct stat st, nst, host;
	bool ok = false;
	int nfd;

	if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode))
		return false;
	for (size_t i = 0; !ok && i < c->nsockets; i++) {
		nfd = recorder_openat2(c->root, c->sockets[i], O_PATH, 0,
				       RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS);
		if (nfd < 0)
			continue;
		ok = !fstat(nfd, &nst) && nst.st_dev == st.st_dev && nst.st_ino == st.st_ino;
		close(nfd);
	}
	if (ok)
		return true;
	/* the sandbox's own scratch (a learning sandbox's is /dev/shm, its /tmp the host's read
	 * only; a run's /tmp is its own): a tmpfs of its own, on another device than the host's
	 * folder of that name, which holds other programs' sockets (an X server's) */
	for (size_t i = 0; !ok && i < WD_ARRAY_SIZE(scratch); i++) {
		nfd = recorder_openat2(c->root, scratch[i], O_PATH | O_DIRECTORY, 0,
				       RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS);
		if (nfd < 0)
			continue;
		ok = !fstat(nfd, &nst) && nst.st_dev == st.st_dev && !stat(scratch[i], &host) &&
		     host.st_dev != nst.st_dev;
		close(nfd);
	}
	return ok;
}

/* A unix socket by path: refused (and recorded so) unless socket_allowed(), else connected
 * here to the file opened in the caller's view. 1 (handled) always. */
static int connect_path(const struct recorder_emul_ctx *c, int sfd, const struct sockaddr_un *sun,
			size_t len, struct recorder_emul_out *out)
{
	struct sockaddr_un to = {.sun_family = AF_UNIX};
	size_t plen = len - offsetof(struct sockaddr_un, sun_path);
	struct recorder_epath ep;
	struct statfs sf;
	struct stat st;
	bool exact = true;
	int fd = -1, r;

	memcpy(ep.raw, sun->sun_path, plen);
	ep.raw[plen] = '\0';
	r = recorder_prep_str(c, AT_FDCWD, &ep, out->path);
	if (r == -ENOENT)
		return emul_answer(out, r, -1);
	if (r == RECORDER_SKIP && out->path[0] == '/' && recorder_sandbox_own(out->path)) {
		/* in the sandbox's own /dev (a learning sandbox's scratch is /dev/shm): never
		 * recorded; reached with no link on the way, and judged as any other below */
		exact = false;
		fd = recorder_openat2(c->root, out->path, O_PATH, 0,
				      RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS);
		if (fd < 0)
			return emul_answer(
			    out, errno == ENOENT || errno == ENOTDIR ? -errno : -EACCES, -1);
		goto have_fd;
	}
	if (r || !ep.name || ep.must_dir)
		goto refuse; /* a path the recorder cannot follow exactly */
	r = recorder_open_path(c, &ep, false, &fd);
	if (r == RECORDER_SKIP) {
		/* links on the way the fold may not follow (/var/run/nscd/socket): what they
		 * reach is judged all the same, but recorded as nothing when it is let through
		 * (its name is not sure); a miss is answered as the kernel would */
		exact = false;
		fd = recorder_openat2(c->root, ep.abs, O_PATH, 0, RESOLVE_IN_ROOT);
		if (fd < 0)
			return emul_answer(
			    out, errno == ENOENT || errno == ENOTDIR ? -errno : -EACCES, -1);
		if (fstatfs(fd, &sf) < 0 || sf.f_type == PROC_SUPER_MAGIC) {
			close(fd);
			goto refuse;
		}
		r = 0;
	}
	if (r)
		return emul_answer(out, r, -1); /* ENOENT, EACCES, ...: the caller's own error */
have_fd:
	if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		close(fd);
		return emul_answer(out, -ECONNREFUSED, -1); /* the kernel's answer for a file */
	}
	if (!socket_allowed(c, fd)) {
		close(fd);
		goto refuse;
	}
	snprintf(to.sun_path, sizeof(to.sun_path), "/proc/self/fd/%d", fd);
	r = (int)connect_as_caller(c->pid, sfd, &to, sizeof(to));
	close(fd);
	return emul_answer(out, r, exact ? TRACE_CONNECT : -1);
refuse:
	out->ret = -EACCES;
	out->op = out->path[0] == '/' ? TRACE_CONNECT : -1;
	out->refused = true;
	return 1;
}

/*
 * connect(2), every one (the trace filter watches them all): the recorder carries it out on
 * the caller's own socket (pidfd_getfd) with the address read once, so the kernel never reads
 * the address or looks the descriptor up again (CONTINUE would: a second thread could swap
 * either in between). A unix socket by path goes through connect_path(); everything else (an
 * inet socket, an abstract or unnamed unix address, which name only the sandbox's own
 * network namespace) is connected as given.
 */
int recorder_emul_connect(const struct recorder_emul_ctx *c, const uint64_t args[6],
			  struct recorder_emul_out *out)
{
	int sockfd = (int)args[0], pidfd = -1, sfd = -1, domain = 0, ret;
	long len = (long)(int)args[2];
	struct sockaddr_storage ss;
	socklen_t dl = sizeof(domain);

	/* move_addr_to_kernel()'s checks, then the bytes, once */
	if (len < 0 || len > (long)sizeof(ss))
		return emul_answer(out, -EINVAL, -1);
	if (len) {
		/* NOLINTNEXTLINE(performance-no-int-to-ptr): an address in the caller's memory */
		struct iovec l = {&ss, (size_t)len}, rr = {(void *)(uintptr_t)args[1], (size_t)len};

		if (process_vm_readv(c->pid, &l, 1, &rr, 1, 0) != (ssize_t)len)
			return emul_answer(out, -EFAULT, -1);
	}
	/* the caller's pidfd (its thread's), opened before its call was checked to be still
	 * waiting (trace.c, recorder_call_open()): a pid reused since cannot hand over another
	 * process's socket; the context owns it */
	pidfd = c->pidfd;
	if (pidfd < 0) {
		ret = emul_answer(out, -EACCES, -1);
		goto out;
	}
	sfd = (int)syscall(SYS_pidfd_getfd, pidfd, sockfd, 0);
	if (sfd < 0) {
		ret = emul_answer(out, errno == EBADF ? -EBADF : -EACCES, -1);
		goto out;
	}
	if (getsockopt(sfd, SOL_SOCKET, SO_DOMAIN, &domain, &dl) < 0) {
		ret = emul_answer(out, errno == ENOTSOCK ? -ENOTSOCK : -EACCES, -1);
		goto out;
	}
	if (domain == AF_UNIX && len > (long)offsetof(struct sockaddr_un, sun_path) &&
	    len <= (long)sizeof(struct sockaddr_un) && ss.ss_family == AF_UNIX &&
	    ((struct sockaddr_un *)&ss)->sun_path[0])
		ret = connect_path(c, sfd, (struct sockaddr_un *)&ss, (size_t)len, out);
	else
		ret = emul_answer(out, connect_as_caller(c->pid, sfd, &ss, (socklen_t)len), -1);
out:
	if (sfd >= 0)
		close(sfd);
	return ret;
}
