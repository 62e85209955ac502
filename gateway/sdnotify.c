/* sdnotify.c - the readiness datagram for a service manager (sd_notify(3)'s protocol, which
 * needs no libsystemd: an AF_UNIX datagram of KEY=VALUE lines to $NOTIFY_SOCKET). */
#include "gateway/sdnotify.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* fill @sa from @sock ("/path" or "@abstract"); Return: the address length, or -errno */
static int notify_addr(const char *sock, struct sockaddr_un *sa)
{
	size_t n = strlen(sock);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (n < 2 || (sock[0] != '/' && sock[0] != '@'))
		return -EAFNOSUPPORT;
	if (n > sizeof(sa->sun_path) - (sock[0] == '/'))
		return -ENAMETOOLONG;
	memcpy(sa->sun_path, sock, n);
	if (sock[0] == '@') {
		sa->sun_path[0] = '\0'; /* abstract: no terminator, the length says where it ends */
		return (int)(offsetof(struct sockaddr_un, sun_path) + n);
	}
	return (int)(offsetof(struct sockaddr_un, sun_path) + n + 1);
}

int gw_notify_take(char *out, size_t size)
{
	const char *v = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa;
	int ret = 0;

	out[0] = '\0';
	if (v) {
		ret = notify_addr(v, &sa);
		if (ret >= 0 && strlen(v) >= size)
			ret = -ENAMETOOLONG;
		if (ret >= 0) {
			snprintf(out, size, "%s", v);
			ret = 1;
		}
	}
	unsetenv("NOTIFY_SOCKET");
	return ret;
}

int gw_notify_send(const char *sock, const char *state)
{
	struct sockaddr_un sa;
	size_t n = strlen(state);
	ssize_t w;
	int fd, len, ret = 0;

	if (!sock[0])
		return 0;
	len = notify_addr(sock, &sa);
	if (len < 0)
		return len;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	do
		w = sendto(fd, state, n, MSG_NOSIGNAL, (const struct sockaddr *)&sa,
			   (socklen_t)len);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		ret = -errno;
	else if ((size_t)w != n)
		ret = -EMSGSIZE;
	close(fd);
	return ret;
}
