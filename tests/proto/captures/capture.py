#!/usr/bin/env python3
"""capture.py - record the first bytes a real client sends to a loopback
listener (TCP or UDP), to make the parser test captures in this folder.

usage: capture.py tcp|udp PORT OUTFILE [IDLE_SECONDS]
Listens on 127.0.0.1:PORT only, takes one connection (or one datagram),
writes what arrived until the peer stops sending for IDLE_SECONDS, then exits.
Prints "ready" on stdout once listening."""
import socket
import sys


def main():
    kind, port, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    idle = float(sys.argv[4]) if len(sys.argv) > 4 else 1.0
    st = socket.SOCK_STREAM if kind == "tcp" else socket.SOCK_DGRAM
    s = socket.socket(socket.AF_INET, st)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.settimeout(30)
    data = b""
    if kind == "tcp":
        s.listen(1)
        print("ready", flush=True)
        c, _ = s.accept()
        c.settimeout(idle)
        try:
            while True:
                chunk = c.recv(65536)
                if not chunk:
                    break
                data += chunk
        except socket.timeout:
            pass
        c.close()
    else:
        print("ready", flush=True)
        data, _ = s.recvfrom(65536)
    s.close()
    with open(path, "wb") as f:
        f.write(data)


main()
