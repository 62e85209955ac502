#!/usr/bin/env python3
"""notify_listener.py - plays the service manager's end of sd_notify(3) for a test.

Usage: notify_listener.py SOCKET OUT CTL_SOCKET TCP_PORT

Binds an AF_UNIX datagram socket at SOCKET ("/path" or "@abstract") with SO_PASSCRED and
writes one JSON line per datagram to OUT: the sender's pid and uid (from the kernel, as
systemd reads them), the text, and, for a READY=1, whether the control socket CTL_SOCKET
and 127.0.0.1:TCP_PORT accepted a connection at that moment (what "ready" promises; a
reset by the gateway counts: it answered, and a port nothing listens on refuses).
Runs until killed.
"""
import json
import os
import socket
import struct
import sys


def answers_unix(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    try:
        s.connect(path)
        return True
    except OSError as e:
        return str(e)
    finally:
        s.close()


def answers_tcp(port):
    """True when something listens on the port: the handshake completes, or the gateway
    resets the connection at once (127.0.0.1 is no run's address, and on loopback its reset
    can beat connect()'s return); a refusal or a timeout is the error's text."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        return True
    except ConnectionResetError:
        return True
    except OSError as e:
        return str(e)


def main():
    sock, out, ctl, port = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    s.bind("\0" + sock[1:] if sock.startswith("@") else sock)
    with open(out, "a", buffering=1) as f:
        f.write(json.dumps({"listening": True}) + "\n")
        while True:
            data, anc, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(12))
            pid = uid = None
            for level, kind, raw in anc:
                if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                    pid, uid, _ = struct.unpack("iII", raw[:12])
            text = data.decode("utf-8", "replace")
            rec = {"pid": pid, "uid": uid, "text": text}
            if "READY=1" in text.split("\n"):
                rec["ctl_answers"] = answers_unix(ctl)
                rec["tcp_answers"] = answers_tcp(port)
            f.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
