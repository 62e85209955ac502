/* sock.h - the gateway's socket calls (internal header): gw_sock_recv(), gw_sock_send(),
 * gw_sock_setopt(), gw_sock_getopt(), gw_sock_close(), gw_sock_connect(), gw_sock_bind(),
 * gw_sock_listen(), gw_sock_shutdown(), gw_sock_name().
 *
 * On Linux and macOS each is the POSIX call itself, inline: the code the compiler makes is the
 * same as when the callers named recv(2) and the others, and errno is as they set it.
 * On Windows (x86_64-w64-mingw32, tests/cross/windows) each is Winsock's call: a socket is an
 * int here as everywhere in the gateway (gateway/poll_wsapoll.c), the buffers are Winsock's
 * char *, closesocket() closes it, and a failure's WSAGetLastError() is put into errno as the
 * POSIX value the callers test (gw_sock_errno()), so that their errno checks (EAGAIN, EINTR,
 * ECONNRESET ...) read the same on both; a non-blocking connect()'s WSAEWOULDBLOCK is
 * EINPROGRESS. Run under wine (tests/cross/run-windows), never on Windows itself
 * (docs/platforms.md). */
#ifndef WARDEN_GATEWAY_SOCK_H
#define WARDEN_GATEWAY_SOCK_H

#include <errno.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

#ifndef _WIN32
#include <unistd.h>

/* recv(2) */
static inline ssize_t gw_sock_recv(int fd, void *buf, size_t n, int flags)
{
	return recv(fd, buf, n, flags);
}

/* send(2) */
static inline ssize_t gw_sock_send(int fd, const void *buf, size_t n, int flags)
{
	return send(fd, buf, n, flags);
}

/* setsockopt(2) */
static inline int gw_sock_setopt(int fd, int level, int name, const void *val, socklen_t len)
{
	return setsockopt(fd, level, name, val, len);
}

/* getsockopt(2) */
static inline int gw_sock_getopt(int fd, int level, int name, void *val, socklen_t *len)
{
	return getsockopt(fd, level, name, val, len);
}

/* close(2) of a socket */
static inline int gw_sock_close(int fd)
{
	return close(fd);
}

/* connect(2): a non-blocking one's start is -1 with errno EINPROGRESS */
static inline int gw_sock_connect(int fd, const struct sockaddr *sa, socklen_t len)
{
	return connect(fd, sa, len);
}

/* SO_ERROR's pending error, as an errno value (0: none; the getsockopt's own errno when it
 * failed) */
static inline int gw_sock_so_error(int fd)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		return errno;
	return err;
}

/* bind(2) */
static inline int gw_sock_bind(int fd, const struct sockaddr *sa, socklen_t len)
{
	return bind(fd, sa, len);
}

/* listen(2) */
static inline int gw_sock_listen(int fd, int backlog)
{
	return listen(fd, backlog);
}

/* shutdown(2) */
static inline int gw_sock_shutdown(int fd, int how)
{
	return shutdown(fd, how);
}

/* getsockname(2) */
static inline int gw_sock_name(int fd, struct sockaddr *sa, socklen_t *len)
{
	return getsockname(fd, sa, len);
}

#else /* _WIN32 */
#include <limits.h>

/* the POSIX errno for Winsock's error @e (common/win.c); EIO for one the gateway does not tell
 * apart */
static inline int gw_sock_errno(int e)
{
	return wd_win_wsa_errno(e);
}

/* recv(2) by Winsock's recv(); -1 with errno */
static inline ssize_t gw_sock_recv(int fd, void *buf, size_t n, int flags)
{
	int r = recv((SOCKET)fd, (char *)buf, n > INT_MAX ? INT_MAX : (int)n, flags);

	if (r == SOCKET_ERROR)
		errno = gw_sock_errno(WSAGetLastError());
	return r;
}

/* send(2) by Winsock's send(); -1 with errno */
static inline ssize_t gw_sock_send(int fd, const void *buf, size_t n, int flags)
{
	int r = send((SOCKET)fd, (const char *)buf, n > INT_MAX ? INT_MAX : (int)n, flags);

	if (r == SOCKET_ERROR)
		errno = gw_sock_errno(WSAGetLastError());
	return r;
}

/* setsockopt(2) by Winsock's; -1 with errno */
static inline int gw_sock_setopt(int fd, int level, int name, const void *val, socklen_t len)
{
	if (setsockopt((SOCKET)fd, level, name, (const char *)val, len) == SOCKET_ERROR) {
		errno = gw_sock_errno(WSAGetLastError());
		return -1;
	}
	return 0;
}

/* getsockopt(2) by Winsock's; -1 with errno */
static inline int gw_sock_getopt(int fd, int level, int name, void *val, socklen_t *len)
{
	if (getsockopt((SOCKET)fd, level, name, (char *)val, len) == SOCKET_ERROR) {
		errno = gw_sock_errno(WSAGetLastError());
		return -1;
	}
	return 0;
}

/* close(2) of a socket: closesocket(); -1 with errno */
static inline int gw_sock_close(int fd)
{
	if (closesocket((SOCKET)fd) == SOCKET_ERROR) {
		errno = gw_sock_errno(WSAGetLastError());
		return -1;
	}
	return 0;
}

/* -1 with errno the POSIX value of the last Winsock failure, when @r is SOCKET_ERROR; else 0 */
static inline int gw_sock_ret(int r)
{
	if (r == SOCKET_ERROR) {
		errno = gw_sock_errno(WSAGetLastError());
		return -1;
	}
	return 0;
}

/* connect(2) by Winsock's: a non-blocking one's start (WSAEWOULDBLOCK) is EINPROGRESS, as
 * POSIX says it */
static inline int gw_sock_connect(int fd, const struct sockaddr *sa, socklen_t len)
{
	if (connect((SOCKET)fd, sa, len) == SOCKET_ERROR) {
		int e = WSAGetLastError();

		errno = e == WSAEWOULDBLOCK ? EINPROGRESS : gw_sock_errno(e);
		return -1;
	}
	return 0;
}

/* SO_ERROR's pending error, as an errno value: Winsock's is a WSAE* code, mapped (0: none) */
static inline int gw_sock_so_error(int fd)
{
	int err = 0, len = sizeof(err);

	if (getsockopt((SOCKET)fd, SOL_SOCKET, SO_ERROR, (char *)&err, &len) == SOCKET_ERROR)
		return gw_sock_errno(WSAGetLastError());
	return err ? gw_sock_errno(err) : 0;
}

/* bind(2) by Winsock's; -1 with errno */
static inline int gw_sock_bind(int fd, const struct sockaddr *sa, socklen_t len)
{
	return gw_sock_ret(bind((SOCKET)fd, sa, len));
}

/* listen(2) by Winsock's; -1 with errno */
static inline int gw_sock_listen(int fd, int backlog)
{
	return gw_sock_ret(listen((SOCKET)fd, backlog));
}

/* shutdown(2) by Winsock's (SHUT_WR is SD_SEND); -1 with errno */
static inline int gw_sock_shutdown(int fd, int how)
{
	return gw_sock_ret(shutdown((SOCKET)fd, how));
}

/* getsockname(2) by Winsock's; -1 with errno */
static inline int gw_sock_name(int fd, struct sockaddr *sa, socklen_t *len)
{
	return gw_sock_ret(getsockname((SOCKET)fd, sa, len));
}
#endif /* _WIN32 */

#endif
