/* compat/netinet/in.h - for the Windows build only (tests/cross/windows): Winsock declares what the
 * portable core includes <netinet/in.h> for; common/win.h brings it in, in the right order.
 * IPV6_RECVPKTINFO is Winsock's IPV6_PKTINFO, which asks for the same ancillary data (the DNS
 * front's listener, which is not served on Windows). */
#ifndef WARDEN_COMPAT_NETINET_IN_H
#define WARDEN_COMPAT_NETINET_IN_H
#include "common/win.h"

#ifndef IPV6_RECVPKTINFO
#define IPV6_RECVPKTINFO IPV6_PKTINFO
#endif
#endif
