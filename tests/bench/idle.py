#!/usr/bin/env python3
"""idle.py - opens N TCP connections, gets one echo back on each (so a relay has connected
upstream and is relaying), prints "READY <n>", then holds them idle for HOLD seconds."""
import resource
import socket
import sys
import time


def main():
    if len(sys.argv) != 5:
        print('usage: idle.py ADDR PORT N HOLD_SECONDS', file=sys.stderr)
        return 2
    addr, port, n, hold = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    socks = []
    for i in range(n):
        s = socket.create_connection((addr, port), timeout=10)
        s.sendall(b'idle %d\n' % i)
        socks.append(s)
    ok = 0
    for s in socks:
        try:
            if s.recv(64):
                ok += 1
        except OSError:
            pass
    print(f'READY {ok}', flush=True)
    time.sleep(hold)
    return 0 if ok == n else 1


if __name__ == '__main__':
    sys.exit(main())
