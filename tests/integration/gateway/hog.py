#!/usr/bin/env python3
"""hog.py - a client that writes without reading (the gateway tests' socket memory
check): N connections to ADDR:PORT each write up to BYTES without ever reading; once
every connection is stalled (not writable for 2 s) or done, print how many MiB each
wrote and "held", then keep them open until stdin closes.

  hog.py ADDR PORT N BYTES
"""
import os, select, socket, sys, time
addr, port, n, total = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
chunk = os.urandom(65536)
socks = []
for i in range(n):
    s = socket.create_connection((addr, port), timeout=5)
    s.setblocking(False)
    socks.append([s, 0])
stalled_since = {}
deadline = time.time() + 60
while time.time() < deadline:
    w = [s for s, sent in socks if sent < total and s not in stalled_since]
    if not w and len(stalled_since) + sum(1 for s, t in socks if t >= total) >= n:
        break
    _, wr, _ = select.select([], [s for s, sent in socks if sent < total], [], 0.5)
    now = time.time()
    for e in socks:
        s, sent = e
        if sent >= total:
            continue
        if s in wr:
            try:
                k = s.send(chunk[: min(65536, total - sent)])
                e[1] += k
                stalled_since.pop(s, None)
            except BlockingIOError:
                pass
        else:
            stalled_since.setdefault(s, now)
    # stalled: not writable for 2 s
    if all(t >= total or (s in stalled_since and now - stalled_since[s] > 2) for s, t in socks):
        break
print("written MiB:", " ".join("%d" % (t >> 20) for s, t in socks), flush=True)
print("held", flush=True)
sys.stdin.read()
