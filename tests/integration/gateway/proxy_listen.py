#!/usr/bin/env python3
"""proxy_listen.py NETNS PORT PROGRAM ARGS... - a proxy-mode gateway's listeners made in another
network namespace (gateway_proxy_mode.sh): enters NETNS (a /run/netns path), binds
127.0.0.1:PORT and [::1]:PORT (IPV6_V6ONLY) there, returns to its own namespace and execs
PROGRAM with the two listening sockets at descriptors 3 and 4 (warden-gateway --listen-fds 2),
the way a launcher hands an embedded gateway the sockets of a run's own namespace. Clients in
NETNS reach the gateway on their loopback; its upstream side stays where it was started."""
import ctypes
import os
import socket
import sys

CLONE_NEWNET = 0x40000000


def setns(fd):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: proxy_listen.py NETNS PORT PROGRAM [ARGS...]")
    port = int(sys.argv[2])
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    there = os.open(sys.argv[1], os.O_RDONLY)
    setns(there)
    s4 = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s4.bind(("127.0.0.1", port))
    s4.listen(128)
    s6 = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    s6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    s6.bind(("::1", port))
    s6.listen(128)
    setns(home)
    # out of the way of 3 and 4 first, then into place
    a, b = 100, 101
    os.dup2(s4.fileno(), a)
    os.dup2(s6.fileno(), b)
    for fd in (s4.detach(), s6.detach(), home, there):
        os.close(fd)
    os.dup2(a, 3, inheritable=True)
    os.dup2(b, 4, inheritable=True)
    os.close(a)
    os.close(b)
    os.execv(sys.argv[3], sys.argv[3:])


if __name__ == "__main__":
    main()
