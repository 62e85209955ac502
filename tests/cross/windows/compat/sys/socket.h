/* compat/sys/socket.h - for the Windows build only (tests/cross/windows): common/common.h
 * includes <sys/socket.h>, which Windows lacks, for the prototypes of its socket and process
 * helpers. The Windows parts use none of those helpers (only buffers and errors); this gives
 * the prototypes the types they name and nothing else, so common.h is unchanged. socklen_t is
 * int as in ws2tcpip.h (an identical typedef if both are seen); uid_t and gid_t as in Cygwin.
 */
#ifndef WARDEN_COMPAT_SYS_SOCKET_H
#define WARDEN_COMPAT_SYS_SOCKET_H

struct sockaddr;
typedef int socklen_t;
typedef unsigned int uid_t;
typedef unsigned int gid_t;

#endif
