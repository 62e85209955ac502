#!/usr/bin/env python3
"""dns_stub.py ADDR PORT NAME=IPV4... - a DNS server on UDP ADDR:PORT for tests/macos/seatbelt.sh:
each NAME gets an A record of its IPV4 (TTL 5), AAAA and other types of a known name an empty
answer, any other name NXDOMAIN. The proxy-mode gateway's resolver (c-ares, DNS only, no hosts
file) is pointed at it, so that names of the test reach the Mac's own loopback. Runs until killed;
prints "ready" once bound."""
import socket
import struct
import sys


def question(msg):
    """The first question's name (lower case), type, and the offset after it; or None."""
    if len(msg) < 12 or struct.unpack("!H", msg[4:6])[0] != 1:
        return None
    labels, i = [], 12
    while i < len(msg):
        n = msg[i]
        i += 1
        if n == 0:
            break
        if n > 63 or i + n > len(msg):
            return None
        labels.append(msg[i:i + n].decode("ascii", "replace").lower())
        i += n
    if i + 4 > len(msg):
        return None
    qtype = struct.unpack("!H", msg[i:i + 2])[0]
    return ".".join(labels), qtype, i + 4


def answer(msg, names):
    q = question(msg)
    if q is None:
        return None
    name, qtype, end = q
    flags = 0x8180  # response, recursion desired and available
    body = b""
    count = 0
    if name not in names:
        flags |= 3  # NXDOMAIN
    elif qtype == 1:
        body = b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 5, 4) + socket.inet_aton(names[name])
        count = 1
    head = msg[0:2] + struct.pack("!HHHHH", flags, 1, count, 0, 0)
    return head + msg[12:end] + body


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: dns_stub.py ADDR PORT NAME=IPV4...")
    names = dict(a.lower().split("=", 1) for a in sys.argv[3:])
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((sys.argv[1], int(sys.argv[2])))
    print("ready", flush=True)
    while True:
        msg, peer = s.recvfrom(4096)
        out = answer(msg, names)
        if out:
            s.sendto(out, peer)


if __name__ == "__main__":
    main()
