/* compat/sys/un.h - for the Windows build only (tests/cross/windows): AF_UNIX stream sockets
 * exist on Windows 10 1803 and later, struct sockaddr_un in <afunix.h>. Whether the gateway's
 * control channel can use them (no SCM_RIGHTS, no peer credentials: common/win.c refuses
 * wd_peer_cred()) is not decided (docs/platforms.md). */
#ifndef WARDEN_COMPAT_SYS_UN_H
#define WARDEN_COMPAT_SYS_UN_H
#include "common/win.h"

#include <afunix.h>
#endif
