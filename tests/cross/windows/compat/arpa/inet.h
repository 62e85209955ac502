/* compat/arpa/inet.h - for the Windows build only (tests/cross/windows): Winsock declares what the
 * portable core includes <arpa/inet.h> for; common/win.h brings it in, in the right order. */
#ifndef WARDEN_COMPAT_ARPA_INET_H
#define WARDEN_COMPAT_ARPA_INET_H
#include "common/win.h"
#endif
