#!/usr/bin/env python3
"""idle.py - opens N TCP connections, gets one echo back on each (so a relay has connected
upstream and is relaying), prints "READY <n>", then holds them idle for HOLD seconds.
A connection without its echo is told apart by what happened to it (timeout: nothing within
10 s; reset; eof: closed by the relay; short: part of the echo), one "MISS" line each on
standard error with its index and client port, and a "MISSED" line that counts them by kind."""
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
    t0 = time.monotonic()
    for i in range(n):
        s = socket.create_connection((addr, port), timeout=10)
        s.sendall(b'idle %d\n' % i)
        socks.append(s)
    t_conn = time.monotonic() - t0
    ok = 0
    kinds = {}
    for i, s in enumerate(socks):
        want = len(b'idle %d\n' % i)
        got = b''
        kind = None
        try:
            while len(got) < want:
                b = s.recv(64)
                if not b:
                    kind = 'eof' if not got else 'short'
                    break
                got += b
        except socket.timeout:
            kind = 'timeout'
        except ConnectionResetError:
            kind = 'reset'
        except OSError as e:
            kind = f'error {e.errno}'
        if kind is None:
            ok += 1
            continue
        kinds[kind] = kinds.get(kind, 0) + 1
        print(f'MISS {i} port {s.getsockname()[1]} {kind} after {len(got)} bytes',
              file=sys.stderr, flush=True)
    print(f'READY {ok}', flush=True)
    print(f'MISSED {n - ok} {kinds}; connecting took {t_conn:.1f} s', file=sys.stderr,
          flush=True)
    time.sleep(hold)
    return 0 if ok == n else 1


if __name__ == '__main__':
    sys.exit(main())
