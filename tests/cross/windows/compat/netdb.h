/* compat/netdb.h - for the Windows build only (tests/cross/windows): Winsock declares what the
 * portable core includes <netdb.h> for; common/win.h brings it in, in the right order. */
#ifndef WARDEN_COMPAT_NETDB_H
#define WARDEN_COMPAT_NETDB_H
#include "common/win.h"
#endif
