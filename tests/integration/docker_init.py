#!/usr/bin/env python3
"""docker_init.py - the launcher's and the program's side of warden-docker-init (run/docker_init.c,
a prototype), for docker_init.sh. No Docker: the init runs in a network namespace of the test's.

  docker_init.py launcher MODE SOCKET UID GID -- INIT-COMMAND...
      binds SOCKET, starts INIT-COMMAND (which connects to it), sends the plan (MODE badplan: a
      malformed one), takes the 8 listening sockets, sends go (MODE nogo: closes instead), then
      plays the gateway on the transparent IPv4 listener: accepts one connection, prints
      "gateway: original dst A:P", answers "via-gateway". Exits with the init's status.
  docker_init.py program [exit7|sigfwd]
      exit7: exits 7; sigfwd: sends SIGTERM to its parent (the init), which must forward it
      back (else it exits 0 after 30 s). Otherwise, what the init execs: prints its uid, capability sets and no_new_privs, then connects to
      192.0.2.80:443 (an address nothing in the namespace has: only the init's DNAT can
      answer) and prints what came back.
"""
import array
import os
import socket
import struct
import subprocess
import signal
import sys
import time

MAGIC = 0x57444931
NFDS = 8


def launcher(mode, path, uid, gid, cmd):
    lst = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    lst.bind(path)
    lst.listen(1)
    lst.settimeout(20)
    init = subprocess.Popen(cmd)
    conn, _ = lst.accept()
    lst.close()  # nothing else may connect once the init has
    conn.settimeout(20)
    a4 = lambda s: socket.inet_pton(socket.AF_INET, s)
    a6 = lambda s: socket.inet_pton(socket.AF_INET6, s)
    plan = struct.pack("=III4s4sI16s16sI", MAGIC, uid, gid, a4("10.255.0.1"),
                       a4("10.255.0.2"), 30, a6("fd77::1"), a6("fd77::2"), 126)
    conn.send(plan[:-1] if mode == "badplan" else plan)
    fds = array.array("i")
    msg, anc, _, _ = conn.recvmsg(264, socket.CMSG_SPACE(NFDS * fds.itemsize))
    for lvl, typ, data in anc:
        if lvl == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
            fds.frombytes(data[:len(data) - len(data) % fds.itemsize])
    if len(msg) < 8:
        print("launcher: the init said nothing")
        conn.close()
        return init.wait(20)
    err, nfds = struct.unpack("=ii", msg[:8])
    print("launcher: init answered err=%d nfds=%d fds=%d %s" %
          (err, nfds, len(fds), msg[8:].split(b"\0")[0].decode(errors="replace")))
    if err or nfds != NFDS or len(fds) != NFDS or mode == "nogo":
        conn.close()
        for fd in fds:
            os.close(fd)
        return init.wait(20)
    gw = socket.socket(fileno=fds[0])
    for fd in fds[1:]:
        os.close(fd)
    gw.settimeout(20)
    print("launcher: gateway listener %s:%d, launcher's netns %s" %
          (*gw.getsockname(), os.readlink("/proc/self/ns/net")))
    conn.send(b"G")
    conn.close()
    if mode == "go-noconn":
        return init.wait(60)
    c, _ = gw.accept()
    od = c.getsockopt(socket.SOL_IP, 80, 16)  # SO_ORIGINAL_DST
    print("gateway: original dst %s:%d" % (socket.inet_ntoa(od[4:8]),
                                           struct.unpack("!H", od[2:4])[0]))
    c.recv(100)
    c.sendall(b"via-gateway")
    c.close()
    return init.wait(20)


def program(what):
    if what == "exit7":
        return 7
    if what == "sigfwd":
        # the init's forwarding is what ends it: SIGTERM to the init comes back to the program
        os.kill(os.getppid(), signal.SIGTERM)
        time.sleep(30)
        return 0
    st = {}
    with open("/proc/self/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            st[k] = v.strip()
    print("program: uid=%d CapPrm=%s CapEff=%s CapBnd=%s CapAmb=%s NoNewPrivs=%s" %
          (os.getuid(), st["CapPrm"], st["CapEff"], st["CapBnd"], st["CapAmb"],
           st["NoNewPrivs"]), flush=True)
    s = socket.create_connection(("192.0.2.80", 443), timeout=10)
    s.sendall(b"hello")
    print("program: answer %s" % s.recv(100).decode(), flush=True)
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["program"]:
        sys.exit(program(sys.argv[2] if len(sys.argv) > 2 else "net"))
    if len(sys.argv) < 8 or sys.argv[1] != "launcher" or sys.argv[6] != "--":
        sys.exit("usage: docker_init.py launcher MODE SOCKET UID GID -- CMD... | program")
    sys.exit(launcher(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]),
                      sys.argv[7:]))
