#!/usr/bin/env python3
"""http_probe.py - a raw HTTP/1.1 client for the gateway tests: sends requests
written byte for byte (so a test can send what a library would not: a second
Host on a kept-alive connection, a leading CRLF, pipelined heads, odd framing)
and prints the status of every response, in order.

  http_probe.py [--connect NAME:PORT] [--pipeline] ADDR PORT REQUEST...

Each REQUEST is a Python string literal body ('GET / HTTP/1.1\\r\\nHost: a\\r\\n\\r\\n');
escapes are decoded. By default one request is sent, its response read, then
the next (keep-alive); --pipeline sends them all at once first. --connect asks
ADDR:PORT (an HTTP proxy) for a CONNECT tunnel first and sends the requests
through it. Output: one word per response ("200", "403", ...), then "closed"
when the server closed the connection before every request was answered, on
one line. Exit 0 unless the probe itself could not run (no connection: 2).
"""
import codecs
import socket
import sys


def read_response(s, buf):
    """One response from @s (bytes already read in @buf). Return (status, rest)
    or (None, rest) when the connection closed first."""
    while b"\r\n\r\n" not in buf:
        b = s.recv(65536)
        if not b:
            return None, buf
        buf += b
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = lines[0].split(b" ")[1].decode()
    length = 0
    chunked = False
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
        if name.strip().lower() == b"transfer-encoding" and b"chunked" in value.lower():
            chunked = True
    if status == "101":
        return status, rest
    if chunked:
        while not rest.endswith(b"0\r\n\r\n"):
            b = s.recv(65536)
            if not b:
                break
            rest += b
        return status, b""
    while len(rest) < length:
        b = s.recv(65536)
        if not b:
            break
        rest += b
    return status, rest[length:]


def main(argv):
    connect = None
    pipeline = False
    while argv and argv[0].startswith("--"):
        opt = argv.pop(0)
        if opt == "--connect":
            connect = argv.pop(0)
        elif opt == "--pipeline":
            pipeline = True
        else:
            print("unknown option " + opt, file=sys.stderr)
            return 2
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    addr, port = argv[0], int(argv[1])
    reqs = [codecs.escape_decode(r.encode())[0] for r in argv[2:]]
    try:
        s = socket.create_connection((addr, port), timeout=8)
    except OSError as e:
        print("connect: %s" % e, file=sys.stderr)
        return 2
    out = []
    buf = b""
    try:
        if connect:
            s.sendall(b"CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (connect.encode(), connect.encode()))
            status, buf = read_response(s, buf)
            out.append("connect-" + str(status))
            if status != "200":
                print(" ".join(out))
                return 0
        if pipeline:
            s.sendall(b"".join(reqs))
        for r in reqs:
            if not pipeline:
                s.sendall(r)
            status, buf = read_response(s, buf)
            if status is None:
                out.append("closed")
                break
            out.append(status)
    except (socket.timeout, ConnectionError) as e:
        out.append("error:" + type(e).__name__)
    print(" ".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
