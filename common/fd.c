/* fd.c - file and descriptor helpers: whole-file reads, full writes, mkdir -p, closing what a
 * child must not inherit, opening without following links, a bound socket. */
#include "common/common.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#ifdef __linux__
#include <linux/openat2.h>
#endif
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#ifdef __APPLE__
#include <sys/un.h> /* LOCAL_PEERPID */
#endif
#ifdef __linux__
#include <sys/syscall.h>
#define FD_DIR "/proc/self/fd"
#elif !defined(_WIN32)
#define FD_DIR "/dev/fd" /* macOS and the BSDs */
#endif
#include <unistd.h>

int wd_read_file(const char *path, size_t max, char **ret_data, size_t *ret_len)
{
	struct wd_buf b = WD_BUF_INIT;
	int fd, ret = 0;
	struct stat st;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		ret = -EISDIR;
		goto out;
	}
	for (;;) {
		ssize_t n;

		ret = wd_buf_reserve(&b, 4096);
		if (ret < 0)
			goto out;
		n = read(fd, b.data + b.len, b.cap - b.len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			goto out;
		}
		if (n == 0)
			break;
		b.len += (size_t)n;
		if (b.len > max) {
			ret = -EFBIG;
			goto out;
		}
	}
	ret = wd_buf_reserve(&b, 0);
	if (ret < 0)
		goto out;
	b.data[b.len] = '\0';
	*ret_data = b.data;
	*ret_len = b.len;
	b.data = NULL;
out:
	wd_buf_free(&b);
	close(fd);
	return ret;
}

int wd_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int wd_write_at(const char *dir, const char *name, const char *val)
{
	char p[PATH_MAX];
	size_t n = strlen(val);
	ssize_t w;
	int fd, r;

	if (snprintf(p, sizeof(p), "%s/%s", dir, name) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* one write: a kernel interface file takes the value whole or not at all */
	w = write(fd, val, n);
	r = w < 0 ? -errno : (size_t)w == n ? 0 : -EIO;
	close(fd);
	return r;
}

#ifndef _WIN32 /* Windows: refused in common/win.c */
ssize_t wd_send_fds(int sock, const void *buf, size_t len, const int *fds, size_t nfds, int flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * WD_SEND_FDS_MAX)];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cbuf.buf,
			    .msg_controllen = CMSG_SPACE(sizeof(int) * nfds)};
	struct cmsghdr *cm;
	ssize_t n;

	if (nfds == 0 || nfds > WD_SEND_FDS_MAX)
		return -EINVAL;
	memset(&cbuf, 0, sizeof(cbuf));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
	memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	n = sendmsg(sock, &mh, flags | MSG_NOSIGNAL);
	return n < 0 ? -errno : n;
}

#endif

void wd_closep(int *fd)
{
	if (*fd >= 0) {
#ifdef _WIN32
		wd_win_close_any(*fd); /* a socket or a file: common/win.c */
#else
		close(*fd);
#endif
		*fd = -1;
	}
}

int wd_mkdir_p(const char *path, mode_t mode)
{
	char tmp[PATH_MAX];
	struct stat st;
	size_t len = strlen(path);

	if (len == 0 || len >= sizeof(tmp))
		return -ENAMETOOLONG;
	memcpy(tmp, path, len + 1);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, mode) < 0) {
		if (errno != EEXIST)
			return -errno;
		if (stat(tmp, &st) < 0)
			return -errno;
		if (!S_ISDIR(st.st_mode))
			return -ENOTDIR;
	}
	return 0;
}

#ifndef _WIN32 /* Windows: refused in common/win.c */
static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* the slow way: every open descriptor above 2 not in @keep (sorted) */
static int close_listed(const int *keep, size_t n)
{
	DIR *d = opendir(FD_DIR);
	struct dirent *de;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		unsigned long long v;
		int fd;

		if (wd_parse_uint(de->d_name, INT_MAX, &v)) /* ".", ".." */
			continue;
		fd = (int)v;
		if (fd <= 2 || fd == dirfd(d) || bsearch(&fd, keep, n, sizeof(*keep), int_cmp))
			continue;
		close(fd);
	}
	closedir(d);
	return 0;
}

int wd_close_all_except(const int *keep, size_t n)
{
	int *k = calloc(n + 1, sizeof(*k)), ret = 0;
	size_t m = 0;
	unsigned lo = 3;

	if (!k)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (keep[i] > 2)
			k[m++] = keep[i];
	qsort(k, m, sizeof(k[0]), int_cmp);
#ifdef __linux__
	for (size_t i = 0; i <= m; i++) {
		unsigned hi = i < m ? (unsigned)k[i] : ~0U;

		if (hi > lo && syscall(SYS_close_range, lo, hi - 1, 0) < 0) {
			ret = errno == ENOSYS || errno == EINVAL ? close_listed(k, m) : -errno;
			break;
		}
		if (i < m)
			lo = (unsigned)k[i] + 1;
	}
#else
	/* no close_range(2) to count on: the listing */
	(void)lo;
	ret = close_listed(k, m);
#endif
	free(k);
	return ret;
}

#endif

#ifdef __linux__
int wd_open_nofollow(const char *path, int flags)
{
	struct open_how how = {0};
	long fd;

	how.flags = (unsigned long long)(flags | O_CLOEXEC);
	how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	return fd < 0 ? -errno : (int)fd;
}
#elif defined(O_NOFOLLOW_ANY)
/* macOS 11 and later: O_NOFOLLOW_ANY refuses a link in any component, as openat2 does */
int wd_open_nofollow(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC | O_NOFOLLOW_ANY);

	return fd < 0 ? -errno : fd;
}
#else
/* no way to refuse a link in every component: refuse to open (fail closed) */
int wd_open_nofollow(const char *path, int flags)
{
	(void)path;
	(void)flags;
	return -ENOSYS;
}
#endif

#ifndef _WIN32 /* Windows: sockets in common/win.c */
#ifndef __linux__
/* O_NONBLOCK and FD_CLOEXEC on @fd; on failure @fd is closed. Return: @fd or -errno. */
static int nb_cloexec(int fd)
{
	int fl, ret;

	if (fd < 0)
		return -errno;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
	    fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}
#endif

int wd_peer_cred(int fd, uid_t *uid, gid_t *gid, pid_t *pid)
{
#ifdef SO_PEERCRED
	struct ucred cred;
	socklen_t cl = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0)
		return -errno;
	*uid = cred.uid;
	*gid = cred.gid;
	*pid = cred.pid;
#else
	if (getpeereid(fd, uid, gid) < 0)
		return -errno;
	*pid = -1;
#ifdef LOCAL_PEERPID
	{
		socklen_t pl = sizeof(*pid);

		if (getsockopt(fd, SOL_LOCAL, LOCAL_PEERPID, pid, &pl) < 0)
			*pid = -1;
	}
#endif
#endif
	return 0;
}

int wd_socket_nb(int family, int type)
{
#ifdef __linux__
	int fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	return fd < 0 ? -errno : fd;
#else
	return nb_cloexec(socket(family, type, 0));
#endif
}

int wd_accept_nb(int lfd, struct sockaddr *sa, socklen_t *len)
{
#ifdef __linux__
	int fd = accept4(lfd, sa, len, SOCK_NONBLOCK | SOCK_CLOEXEC);

	return fd < 0 ? -errno : fd;
#else
	return nb_cloexec(accept(lfd, sa, len));
#endif
}

int wd_socket_adopt(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		return -errno;
	return 0;
}

int wd_socket_bound(int family, const void *addr, uint16_t port, int type)
{
	struct sockaddr_storage ss = {0};
	socklen_t sl;
#ifdef SOCK_CLOEXEC
	int fd = socket(family, type | SOCK_CLOEXEC, 0), one = 1, ret;

	if (fd < 0)
		return -errno;
#else
	/* macOS has no SOCK_CLOEXEC: set it at once (a fork between the two calls could leak it) */
	int fd = socket(family, type, 0), one = 1, ret;

	if (fd < 0)
		return -errno;
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
#endif
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		memcpy(&s4->sin_addr, addr, 4);
		sl = sizeof(*s4);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
#ifdef IPV6_FREEBIND
		setsockopt(fd, IPPROTO_IPV6, IPV6_FREEBIND, &one, sizeof(one));
#endif
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		memcpy(&s6->sin6_addr, addr, 16);
		sl = sizeof(*s6);
	}
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 4096) < 0)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}
#endif
