#!/usr/bin/env python3
"""socks_probe.py - a raw SOCKS5 client for the gateway tests (tests/integration/gateway_socks.sh):
sends a greeting and a request written byte for byte (so a test can ask what a library would
not: BIND, UDP ASSOCIATE, an unknown address type, a broken greeting) and prints what the proxy
answered.

  socks_probe.py PROXY-ADDR PROXY-PORT STEP...

Steps, in order:
  greet:HEX         send the greeting bytes HEX, print "method=XX" (the 2-byte answer's method)
  connect:NAME:PORT a CONNECT request with ATYP domain name NAME
  ipv4:ADDR:PORT    a CONNECT request with ATYP IPv4
  cmd:N:NAME:PORT   a request with command N (2 BIND, 3 UDP ASSOCIATE) and a domain name
  raw:HEX           send HEX as it is
  reply             after a greeting and a request sent together with raw: read the method
                    answer ("method=XX") and the reply
  say:TEXT          send TEXT and a newline, print the first line that comes back
A request prints "rep=XX" (the reply code). Whenever the proxy closes instead, "closed" (or
"reset") is printed and the probe stops. Output: the words on one line. Exit 0 unless the probe
itself could not run (no connection to the proxy: 2).
"""
import socket
import sys


def recv_exact(s, n):
    """@n bytes from @s, or None when it closed first."""
    buf = b""
    while len(buf) < n:
        b = s.recv(n - len(buf))
        if not b:
            return None
        buf += b
    return buf


def request(cmd, atyp, addr, port):
    """A SOCKS5 request's bytes."""
    if atyp == 3:
        a = bytes([len(addr)]) + addr.encode()
    else:
        a = socket.inet_aton(addr)
    return bytes([5, cmd, 0, atyp]) + a + int(port).to_bytes(2, "big")


def main():
    proxy, pport, steps = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    try:
        s = socket.create_connection((proxy, pport), timeout=5)
    except OSError as e:
        print("probe: cannot connect to the proxy:", e, file=sys.stderr)
        return 2
    out = []
    try:
        for step in steps:
            kind, _, arg = step.partition(":")
            if kind == "greet":
                s.sendall(bytes.fromhex(arg))
                r = recv_exact(s, 2)
                if r is None:
                    out.append("closed")
                    break
                out.append("method=%02x" % r[1])
                continue
            if kind == "raw":
                s.sendall(bytes.fromhex(arg))
                continue
            if kind == "say":
                s.sendall(arg.encode() + b"\n")
                line = s.makefile("rb").readline()
                out.append(line.decode(errors="replace").strip() if line else "closed")
                continue
            if kind == "connect":
                name, port = arg.rsplit(":", 1)
                s.sendall(request(1, 3, name, port))
            elif kind == "ipv4":
                addr, port = arg.rsplit(":", 1)
                s.sendall(request(1, 1, addr, port))
            elif kind == "reply":
                r = recv_exact(s, 2)
                if r is None:
                    out.append("closed")
                    break
                out.append("method=%02x" % r[1])
            elif kind == "cmd":
                n, name, port = arg.split(":")
                s.sendall(request(int(n), 3, name, port))
            else:
                print("probe: unknown step", step, file=sys.stderr)
                return 2
            r = recv_exact(s, 10)
            if r is None:
                out.append("closed")
                break
            out.append("rep=%02x" % r[1])
            if r[1] != 0:
                # a refusal is the last word: the proxy closes after it
                out.append("closed" if recv_exact(s, 1) is None else "open")
                break
    except ConnectionResetError:
        out.append("reset")
    except socket.timeout:
        out.append("timeout")
    print(" ".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
