/* compat/sys/socket.h - for the Windows build only (tests/cross/windows): Winsock declares what
 * the portable core includes <sys/socket.h> for (sockets, struct sockaddr, socklen_t);
 * common/win.h brings it in, in the right order, with the ids (uid_t, gid_t) Windows lacks. */
#ifndef WARDEN_COMPAT_SYS_SOCKET_H
#define WARDEN_COMPAT_SYS_SOCKET_H
#include "common/win.h"
#endif
