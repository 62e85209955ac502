#!/usr/bin/env python3
"""syslog_listener.py - a strict RFC 5424 receiver for the audit shipping test.

Usage: syslog_listener.py udp|tcp|unix ADDRESS OUT
  udp/tcp: ADDRESS is HOST:PORT (loopback or a lab address); unix: a datagram socket path.

Each message becomes one JSON line in OUT: the parsed header (pri, version, timestamp,
hostname, app, procid, msgid, sd) and the message (msg, with the BOM RFC 5424 puts before
UTF-8 removed, and whether it was there), or {"invalid": why, "raw": ...} when the framing or
the header is not RFC 5424 (for TCP: RFC 6587 octet counting; a connection that ends inside
a frame is one {"invalid": "torn frame"}). Writes {"listening": true} first; runs until
killed.
"""
import json
import os
import re
import socket
import sys

HEADER = re.compile(
    rb"^<(\d{1,3})>(\d{1,2}) (\S+) (\S{1,255}) (\S{1,48}) (\S{1,128}) (\S{1,32}) (-|\[.*?\])( |$)"
)
TS = re.compile(rb"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?(Z|[+-]\d\d:\d\d)$")
BOM = b"\xef\xbb\xbf"


def parse(raw):
    m = HEADER.match(raw)
    if not m:
        return {"invalid": "header", "raw": raw.decode("utf-8", "replace")}
    pri, ver, ts, host, app, procid, msgid, sd, _ = m.groups()
    rec = {
        "pri": int(pri),
        "version": int(ver),
        "timestamp": ts.decode(),
        "hostname": host.decode(),
        "app": app.decode(),
        "procid": procid.decode(),
        "msgid": msgid.decode(),
        "sd": sd.decode(),
    }
    if rec["pri"] > 191 or rec["version"] != 1 or not TS.match(ts):
        return {"invalid": "pri, version or timestamp", "raw": raw.decode("utf-8", "replace")}
    body = raw[m.end():]
    rec["bom"] = body.startswith(BOM)
    if rec["bom"]:
        body = body[3:]
    try:
        rec["msg"] = body.decode("utf-8")
    except UnicodeDecodeError:
        return {"invalid": "MSG is not UTF-8", "raw": raw.decode("utf-8", "replace")}
    return rec


def tcp_frames(conn, emit):
    buf = b""
    while True:
        data = conn.recv(65536)
        if not data:
            break
        buf += data
        while True:
            sp = buf.find(b" ")
            if sp < 0:
                break
            if not buf[:sp].isdigit() or sp > 10:
                emit({"invalid": "not octet-counted", "raw": buf[:80].decode("utf-8", "replace")})
                return
            n = int(buf[:sp])
            if len(buf) < sp + 1 + n:
                break
            emit(parse(buf[sp + 1:sp + 1 + n]))
            buf = buf[sp + 1 + n:]
    if buf:
        emit({"invalid": "torn frame", "raw": buf[:80].decode("utf-8", "replace")})


def main():
    mode, addr, out = sys.argv[1], sys.argv[2], sys.argv[3]
    f = open(out, "a", buffering=1)

    def emit(rec):
        f.write(json.dumps(rec) + "\n")

    if mode == "unix":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.bind(addr)
        os.chmod(addr, 0o666)
    else:
        host, port = addr.rsplit(":", 1)
        fam = socket.AF_INET6 if ":" in host else socket.AF_INET
        kind = socket.SOCK_DGRAM if mode == "udp" else socket.SOCK_STREAM
        s = socket.socket(fam, kind)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host.strip("[]"), int(port)))
        if mode == "tcp":
            s.listen(8)
    emit({"listening": True})
    while True:
        if mode == "tcp":
            conn, _ = s.accept()
            emit({"connection": True})
            tcp_frames(conn, emit)
            conn.close()
        else:
            emit(parse(s.recv(262144)))


if __name__ == "__main__":
    main()
