/* compat/netinet/in.h - for the Windows build only (tests/cross/windows): Winsock declares what the
 * portable core includes <netinet/in.h> for; common/win.h brings it in, in the right order. */
#ifndef WARDEN_COMPAT_NETINET_IN_H
#define WARDEN_COMPAT_NETINET_IN_H
#include "common/win.h"
#endif
