#!/usr/bin/env python3
# live_conns.py - long-lived TCP echo connections from inside a `warden run`, for run_live.sh.
#
#   live_conns.py NAME:PORT...
#
# Keeps one connection to each target's echo service open and sends it a line every 0.2 s; the
# echo must come back within 2 s. Prints (flushed, one event a line):
#   open NAME ADDR            connected by name, and the first echo came back
#   echo NAME N               every 5th echo on that connection
#   closed NAME: WHY          the connection ended (reset, EOF, no echo)
#   refused-dns NAME: WHY     a new connection by name failed (its DNS answer, or the gateway)
#   refused-addr NAME: WHY    ... to the address the name had before failed too
#   reopened-addr NAME        ... to that address worked (a synthetic address still allowed)
# A target that is down is tried again every 0.5 s; a refusal is printed once per kind and
# streak. Runs until killed; SIGTERM prints "term" and exits 0 (the run must still say killed).
import select
import signal
import socket
import sys
import time


def out(*words):
    print(*words, flush=True)


def on_term(signum, frame):
    out("term")
    sys.exit(0)


def echo_once(s, n):
    s.sendall(b"x%d\n" % n)
    got = b""
    deadline = time.monotonic() + 2
    while not got.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([s], [], [], left)[0]:
            raise OSError("no echo within 2 s")
        b = s.recv(64)
        if not b:
            raise OSError("end of stream")
        got += b
    return got


class Target:
    def __init__(self, spec):
        self.name, port = spec.rsplit(":", 1)
        self.port = int(port)
        self.sock = None
        self.addr = None
        self.n = 0
        self.said = set()
        self.next_try = 0.0

    def connect(self, where, kind):
        s = socket.create_connection((where, self.port), timeout=2)
        try:
            echo_once(s, 0)
        except OSError:
            s.close()
            raise
        return s

    def tick(self, now):
        if self.sock:
            try:
                echo_once(self.sock, self.n)
                self.n += 1
                if self.n % 5 == 0:
                    out("echo", self.name, self.n)
            except OSError as e:
                out("closed %s: %s" % (self.name, e))
                self.sock.close()
                self.sock = None
                self.said = set()
            return
        if now < self.next_try:
            return
        self.next_try = now + 0.5
        try:
            self.sock = self.connect(self.name, "dns")
            self.addr = self.sock.getpeername()[0]
            self.n = 0
            self.said = set()
            out("open", self.name, self.addr)
            return
        except OSError as e:
            if "dns" not in self.said:
                out("refused-dns %s: %s" % (self.name, e))
                self.said.add("dns")
        if self.addr:
            try:
                s = self.connect(self.addr, "addr")
                s.close()
                if "addr-ok" not in self.said:
                    out("reopened-addr", self.name)
                    self.said.add("addr-ok")
            except OSError as e:
                if "addr" not in self.said:
                    out("refused-addr %s: %s" % (self.name, e))
                    self.said.add("addr")


def main():
    signal.signal(signal.SIGTERM, on_term)
    targets = [Target(a) for a in sys.argv[1:]]
    if not targets:
        print("usage: live_conns.py NAME:PORT...", file=sys.stderr)
        return 2
    while True:
        now = time.monotonic()
        for t in targets:
            t.tick(now)
        time.sleep(0.2)


if __name__ == "__main__":
    sys.exit(main())
