/* compat/sys/socket.h - for the Windows build only (tests/cross/windows): Winsock declares what
 * the portable core includes <sys/socket.h> for (sockets, struct sockaddr, socklen_t);
 * common/win.h brings it in, in the right order, with the ids (uid_t, gid_t) Windows lacks.
 *
 * For the gateway, what POSIX's <sys/socket.h> has and Winsock names otherwise or lacks:
 * - shutdown(2)'s directions (Winsock's SD_*);
 * - MSG_NOSIGNAL is 0: Windows has no SIGPIPE, a send on a broken connection fails with
 *   WSAECONNRESET and signals nothing; MSG_DONTWAIT is 0: Winsock has no per-call flag, and
 *   the gateway's sockets are non-blocking from birth (wd_socket_nb(), wd_accept_nb()), so a
 *   call that would block fails with WSAEWOULDBLOCK as it would with the flag;
 * - struct iovec, struct msghdr, struct cmsghdr and the CMSG_* macros as types only, so that
 *   the gateway's headers (gateway/dns.h's batch of datagrams) are the same everywhere.
 *   sendmsg(2) and recvmsg(2) are refused (-1, ENOSYS): what they carry in the gateway
 *   (SCM_RIGHTS, IP_PKTINFO) is the Linux-only DNS front's and the control socket's, and
 *   neither is served on Windows (docs/platforms.md).
 * These are not imitations of the calls: nothing here moves a byte. */
#ifndef WARDEN_COMPAT_SYS_SOCKET_H
#define WARDEN_COMPAT_SYS_SOCKET_H
#include "common/win.h"

#include <errno.h>
#include <stddef.h>

#define SHUT_RD SD_RECEIVE
#define SHUT_WR SD_SEND
#define SHUT_RDWR SD_BOTH
#define MSG_NOSIGNAL 0
#define MSG_DONTWAIT 0
#define MSG_CMSG_CLOEXEC 0
#define SCM_RIGHTS 1
#ifndef MSG_CTRUNC
#define MSG_CTRUNC 0x0200
#endif

struct iovec {
	void *iov_base;
	size_t iov_len;
};

struct msghdr {
	void *msg_name;
	socklen_t msg_namelen;
	struct iovec *msg_iov;
	size_t msg_iovlen;
	void *msg_control;
	size_t msg_controllen;
	int msg_flags;
};

struct cmsghdr {
	size_t cmsg_len;
	int cmsg_level;
	int cmsg_type;
};

#define CMSG_ALIGN(n) (((n) + sizeof(size_t) - 1) & ~(sizeof(size_t) - 1))
#define CMSG_SPACE(n) (CMSG_ALIGN(sizeof(struct cmsghdr)) + CMSG_ALIGN(n))
#define CMSG_LEN(n) (CMSG_ALIGN(sizeof(struct cmsghdr)) + (n))
#define CMSG_DATA(c) ((unsigned char *)(c) + CMSG_ALIGN(sizeof(struct cmsghdr)))
#define CMSG_FIRSTHDR(m)                                                                           \
	((m)->msg_controllen >= sizeof(struct cmsghdr) ? (struct cmsghdr *)(m)->msg_control : NULL)
#define CMSG_NXTHDR(m, c) ((struct cmsghdr *)NULL)

/* sendmsg(2), refused: see above */
static inline ssize_t wd_compat_sendmsg(int fd, const struct msghdr *m, int flags)
{
	(void)fd, (void)m, (void)flags;
	errno = ENOSYS;
	return -1;
}

/* recvmsg(2), refused: see above */
static inline ssize_t wd_compat_recvmsg(int fd, struct msghdr *m, int flags)
{
	(void)fd, (void)m, (void)flags;
	errno = ENOSYS;
	return -1;
}
#define sendmsg wd_compat_sendmsg
#define recvmsg wd_compat_recvmsg
#endif
