#!/usr/bin/env python3
# probe.py - one TCP or UDP probe from inside a `warden run`, for the integration tests.
#
#   probe.py tcp ADDR PORT [http|none]   connect (3 s), send an absolute-form GET for
#                                        http://allowed.test/ (http) or nothing, print what
#                                        comes back until EOF (3 s); exit 0 connected, 2 not
#   probe.py udp ADDR PORT [dns|text]    send a DNS query for allowed.test A (dns) or a line
#                                        of text, print the reply (a DNS answer as
#                                        "dns rcode=N answers=N"); exit 0 a reply, 2 none
#   probe.py udplite ADDR PORT           send one UDP-lite datagram; exit 0 sent
import socket
import struct
import sys


def family(addr):
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def tcp(addr, port, what):
    try:
        s = socket.create_connection((addr, port), timeout=3)
    except OSError as e:
        print("no connection:", e)
        return 2
    if what == "http":
        s.sendall(b"GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n"
                  b"Connection: close\r\n\r\n")
    else:
        s.shutdown(socket.SHUT_WR)
    out = b""
    try:
        while True:
            b = s.recv(4096)
            if not b:
                break
            out += b
    except OSError:
        pass
    sys.stdout.write(out.decode("latin-1"))
    print()
    return 0


def dns_query():
    q = struct.pack(">HHHHHH", 0x5744, 0x0100, 1, 0, 0, 0)
    for label in (b"allowed", b"test"):
        q += bytes([len(label)]) + label
    return q + b"\x00" + struct.pack(">HH", 1, 1)


def udp(addr, port, what, proto=0):
    s = socket.socket(family(addr), socket.SOCK_DGRAM, proto)
    s.settimeout(3)
    s.sendto(dns_query() if what == "dns" else b"hello\n", (addr, port))
    if proto:
        return 0
    try:
        b, _ = s.recvfrom(4096)
    except OSError as e:
        print("no reply:", e)
        return 2
    if what == "dns" and len(b) >= 12 and b[0:2] == b"\x57\x44":
        print("dns rcode=%d answers=%d" % (b[3] & 15, struct.unpack(">H", b[6:8])[0]))
    else:
        sys.stdout.write(b.decode("latin-1"))
        print()
    return 0


def main():
    kind, addr, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    what = sys.argv[4] if len(sys.argv) > 4 else "none"
    if kind == "tcp":
        return tcp(addr, port, what)
    if kind == "udp":
        return udp(addr, port, what)
    if kind == "udplite":
        return udp(addr, port, what, socket.IPPROTO_UDPLITE)
    return 64


sys.exit(main())
