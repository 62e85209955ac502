/* compat/netinet/tcp.h - for the Windows build only (tests/cross/windows): Winsock declares
 * TCP_NODELAY, the one TCP option the gateway sets (gateway/fds.c); common/win.h brings it in. */
#ifndef WARDEN_COMPAT_NETINET_TCP_H
#define WARDEN_COMPAT_NETINET_TCP_H
#include "common/win.h"
#endif
