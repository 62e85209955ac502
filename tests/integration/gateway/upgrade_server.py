#!/usr/bin/env python3
"""upgrade_server.py - a small HTTP/1.1 server for the gateway tests (runs in
lab-wan): a request with an Upgrade header gets "101 Switching Protocols" and
the connection then echoes raw bytes (as a WebSocket server would carry
frames); any other request gets "200" with the path in the body, keep-alive.

  upgrade_server.py ADDR PORT
"""
import socket
import sys
import threading


def serve(c):
    buf = b""
    try:
        while True:
            while b"\r\n\r\n" not in buf:
                b = c.recv(65536)
                if not b:
                    return
                buf += b
            head, _, buf = buf.partition(b"\r\n\r\n")
            lines = head.split(b"\r\n")
            path = lines[0].split(b" ")[1]
            names = [ln.partition(b":")[0].strip().lower() for ln in lines[1:]]
            if b"upgrade" in names:
                c.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: lab\r\n"
                          b"Connection: Upgrade\r\n\r\n")
                if buf:
                    c.sendall(buf)
                while True:
                    b = c.recv(65536)
                    if not b:
                        return
                    c.sendall(b)
            body = b"no upgrade " + path + b"\n"
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    except OSError:
        pass
    finally:
        c.close()


def main():
    addr, port = sys.argv[1], int(sys.argv[2])
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(64)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()


if __name__ == "__main__":
    main()
