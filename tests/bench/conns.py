#!/usr/bin/env python3
"""conns.py - a fixed-count (or paced, for a time) connection client for the instruction counts
and the soak (tests/bench/run, workloads instr and soak): every connection is completed and
counted, so a relay's instructions over the run divide by a known number.

Usage: conns.py MODE HOST PORT [--count N] [--duration S --rate R] [--parallel P]
MODE: http     a new connection per request (GET /, Connection: close, read to EOF)
      http-ka  one connection, requests one after another on it (keep-alive; reconnects when
               the server closes it)
      https    a new TLS connection per request (SNI HOST, certificate not checked: the lab's)
      tcp      a new connection per exchange: 64 bytes sent, the same 64 read back (an echo)
      deny     a connection that must fail (refused, reset, closed without an answer, or
               answered with an HTTP 4xx/5xx status)
Prints one JSON line: {"mode", "ok", "errors", "first_error", "seconds"}; exit 0 when every
attempt went as the mode expects (for deny: every attempt failed), 1 otherwise.
"""
import argparse
import json
import socket
import ssl
import threading
import time

REQ = 'GET / HTTP/1.1\r\nHost: {h}\r\nConnection: {c}\r\nUser-Agent: warden-bench\r\n\r\n'


def read_response(s, state=None):
    """Reads one HTTP/1.1 response with a Content-Length; returns True when it was a 2xx (and,
    with STATE, sets state['closing'] when the server said it closes the connection)."""
    buf = b''
    while b'\r\n\r\n' not in buf:
        d = s.recv(65536)
        if not d:
            return False
        buf += d
    head, body = buf.split(b'\r\n\r\n', 1)
    lines = head.split(b'\r\n')
    ok = lines[0].split(b' ')[1].startswith(b'2')
    n = 0
    for ln in lines[1:]:
        k, _, v = ln.partition(b':')
        if k.strip().lower() == b'content-length':
            n = int(v.strip())
        if state is not None and k.strip().lower() == b'connection' and \
                v.strip().lower() == b'close':
            state['closing'] = True
    while len(body) < n:
        d = s.recv(65536)
        if not d:
            return False
        body += d
    return ok


def one(mode, host, port, tls_ctx, state):
    """One attempt of MODE; True when it went as the mode expects."""
    if mode == 'http-ka':
        s = state.get('s')
        try:
            if s is None:
                s = socket.create_connection((host, port), timeout=10)
                state['s'] = s
            s.sendall(REQ.format(h=host, c='keep-alive').encode())
            state['closing'] = False
            if read_response(s, state):
                if state['closing']:
                    # the server's last request on this connection (nginx: keepalive_requests)
                    s.close()
                    state['s'] = None
                return True
            raise OSError('bad response')
        except OSError:
            if s is not None:
                s.close()
            state['s'] = None
            raise
    try:
        s = socket.create_connection((host, port), timeout=10)
    except OSError:
        if mode == 'deny':
            return True
        raise
    with s:
        if mode == 'deny':
            # denied: reset, closed without an answer, or refused with an HTTP error status
            try:
                s.sendall(REQ.format(h=host, c='close').encode())
                head = s.recv(4096)
            except OSError:
                return True
            return not head or (head.startswith(b'HTTP/') and head[9:10] in (b'4', b'5'))
        if mode == 'https':
            with tls_ctx.wrap_socket(s, server_hostname=host) as t:
                t.sendall(REQ.format(h=host, c='close').encode())
                return read_response(t)
        if mode == 'tcp':
            msg = bytes(range(64))
            s.sendall(msg)
            got = b''
            while len(got) < len(msg):
                d = s.recv(64 - len(got))
                if not d:
                    break
                got += d
            return got == msg
        s.sendall(REQ.format(h=host, c='close').encode())
        return read_response(s)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('mode', choices=['http', 'http-ka', 'https', 'tcp', 'deny'])
    ap.add_argument('host')
    ap.add_argument('port', type=int)
    ap.add_argument('--count', type=int, default=0)
    ap.add_argument('--duration', type=float, default=0)
    ap.add_argument('--rate', type=float, default=0)
    ap.add_argument('--parallel', type=int, default=1)
    a = ap.parse_args()
    if (a.count > 0) == (a.duration > 0):
        ap.error('exactly one of --count and --duration')
    tls_ctx = ssl.create_default_context()
    tls_ctx.check_hostname = False
    tls_ctx.verify_mode = ssl.CERT_NONE
    lock = threading.Lock()
    tot = {'ok': 0, 'errors': 0, 'first_error': '', 'started': 0}
    t0 = time.monotonic()
    end = t0 + a.duration

    def worker(idx):
        state = {}
        k = 0
        while True:
            with lock:
                if a.count and tot['started'] >= a.count:
                    break
                tot['started'] += 1
            if a.duration:
                now = time.monotonic()
                if now >= end:
                    break
                if a.rate:
                    # paced: this worker's k-th attempt no earlier than k / (rate / P) seconds in
                    due = t0 + k * a.parallel / a.rate
                    if due > now:
                        time.sleep(min(due - now, end - now))
                        if time.monotonic() >= end:
                            break
            k += 1
            try:
                good = one(a.mode, a.host, a.port, tls_ctx, state)
                why = '' if good else 'unexpected answer'
            except (OSError, ValueError, IndexError) as e:
                good, why = False, f'{type(e).__name__}: {e}'
            with lock:
                if good:
                    tot['ok'] += 1
                else:
                    tot['errors'] += 1
                    tot['first_error'] = tot['first_error'] or why
        if state.get('s') is not None:
            state['s'].close()

    th = [threading.Thread(target=worker, args=(i,)) for i in range(a.parallel)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    print(json.dumps({'mode': a.mode, 'ok': tot['ok'], 'errors': tot['errors'],
                      'first_error': tot['first_error'],
                      'seconds': round(time.monotonic() - t0, 3)}), flush=True)
    return 0 if tot['errors'] == 0 else 1


if __name__ == '__main__':
    raise SystemExit(main())
