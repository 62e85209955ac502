#!/usr/bin/env python3
"""docker_init.py - the launcher's and the program's side of warden-docker-init (run/docker_init.c,
the Docker backend's first process; run/docker_proto.h is the protocol), for docker_init.sh.
No Docker: the init runs in a network namespace of the test's.

  docker_init.py launcher MODE SOCKET UID GID GRANT CLOSE -- INIT-COMMAND...
      binds SOCKET, starts INIT-COMMAND (which connects to it) and sends the plan (the values
      of a rootless run; MODE badplan: one byte short, root: uid 0). It takes the reply's 10
      descriptors and prints what each is, then sends one grant, the file GRANT as stat()
      sees it (badgrant: its inode plus one), and prints the init's answer. Then it says go
      (nogo: closes instead) and keeps the connection open until the init exits, as the
      launcher does for the whole run (its end ends the program):
        go    plays the gateway on the transparent IPv4 listener: accepts one connection,
              prints "gateway: original dst A:P", answers "via-gateway"
        run   only waits for the init
        die   waits until the file CLOSE exists, then closes the connection (the launcher's
              death, as the init sees it) and waits for the init
      Exits with the init's status.
  docker_init.py program WHAT MARKS NAME
      what the init execs, WHAT one of
        net     prints its uid, capability sets and no_new_privs, then connects to
                192.0.2.80:443 (an address nothing in the namespace has: only the init's
                DNAT can answer) and prints what came back
        exit7   exits 7
        sigfwd  sends SIGTERM to its parent (the init), which must forward it back (else it
                exits 0 after 30 s)
        sleep   waits (up to 60 s) until the file MARKS/close.NAME exists, sleeps 3 s more,
                then writes the file MARKS/after.NAME and exits 0
"""
import array
import os
import socket
import struct
import subprocess
import signal
import sys
import time

MAGIC = 0x57444933  # "WDI3"
GRANTS_MAGIC = 0x57444747  # "WDGG"
NLISTEN = 8  # FW_RUN_NLISTEN
NFDS = NLISTEN + 2  # the listeners, the NFLOG socket, the liveness probe's
REPLY = struct.Struct("=ii256s")  # struct docker_init_reply
FW_MODE_RUN = 1
NETLINK_NETFILTER = 12

# the test's addresses (host4 is the gateway's, sbx4 the program's) and a rootless run's
# table (fw_config_defaults(): nft/model.c, conf/gwconf.c)
HOST4, SBX4, HOST6, SBX6 = "10.255.0.1", "10.255.0.2", "fd77::1", "fd77::2"
PORT_TRANSPARENT, PORT_DNS, PORT_PROXY, NFLOG_GROUP = 15001, 15053, 15080, 7000
# no UDP relay (fw_config.port_udp 0): the init then sends DOCKER_INIT_NBASE descriptors; the
# synthetic pools are fw_config_defaults()'s
PORT_UDP = 0
SYNTH4, SYNTH4_PREFIX, SYNTH6, SYNTH6_PREFIX = "100.96.0.0", 12, "fd77:7764:5300::", 48


def plan(uid, gid):
    """struct docker_init_plan: magic, uid, gid, struct netns_addrs, struct fw_config."""
    a4 = lambda s: socket.inet_pton(socket.AF_INET, s)
    a6 = lambda s: socket.inet_pton(socket.AF_INET6, s)
    addr = struct.pack("=4s4sI16s16sI", a4(HOST4), a4(SBX4), 30, a6(HOST6), a6(SBX6), 126)
    # struct fw_config with the C compiler's padding written out (x): 108 bytes
    fc = struct.pack("=32s8sHHHH4sB3x16sBxHIIi4s16s", b"warden", b"wd-", PORT_TRANSPARENT,
                     PORT_DNS, PORT_PROXY, PORT_UDP, a4(SYNTH4), SYNTH4_PREFIX, a6(SYNTH6),
                     SYNTH6_PREFIX, NFLOG_GROUP, 4096, 200, FW_MODE_RUN, a4(HOST4), a6(HOST6))
    assert len(fc) == 108
    return struct.pack("=III", MAGIC, uid, gid) + addr + fc


def reply(conn, what):
    """Reads one struct docker_init_reply (and its descriptors); prints it. Returns (err, fds)."""
    fds = array.array("i")
    # room for more than NFDS: a reply with too many shows as such, not as a truncation
    msg, anc, flags, _ = conn.recvmsg(REPLY.size + 8, socket.CMSG_SPACE(4 * NFDS * fds.itemsize))
    for lvl, typ, data in anc:
        if lvl == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
            fds.frombytes(data[:len(data) - len(data) % fds.itemsize])
    if len(msg) != REPLY.size:
        print("launcher: the init said nothing (%d bytes) to the %s" % (len(msg), what))
        return -1, list(fds)
    err, nfds, text = REPLY.unpack(msg)
    print("launcher: init answered the %s err=%d nfds=%d fds=%d%s %s" %
          (what, err, nfds, len(fds), " CTRUNC" if flags & socket.MSG_CTRUNC else "",
           text.split(b"\0")[0].decode(errors="replace")))
    return err, list(fds)


def describe(s):
    """What a descriptor of the reply is: "tcp A:P", "udp A:P" or "netlink PROTO"."""
    if s.family == socket.AF_NETLINK:
        proto = s.getsockopt(socket.SOL_SOCKET, socket.SO_PROTOCOL)
        return "netlink " + ("NETLINK_NETFILTER" if proto == NETLINK_NETFILTER else str(proto))
    kind = {socket.SOCK_STREAM: "tcp", socket.SOCK_DGRAM: "udp"}.get(s.type, str(s.type))
    if s.family in (socket.AF_INET, socket.AF_INET6):
        a = s.getsockname()
        return "%s %s:%d" % (kind, a[0], a[1])
    return "family %d %s" % (s.family, kind)


def grants(mode, path):
    """The grants message: one grant, the file at @path (badgrant: the wrong inode)."""
    st = os.stat(path, follow_symlinks=False)
    ino = st.st_ino + 1 if mode == "badgrant" else st.st_ino
    p = path.encode()
    return struct.pack("=II", GRANTS_MAGIC, 1) + struct.pack("=QQII", st.st_dev, ino, len(p),
                                                             0) + p


def launcher(mode, path, uid, gid, grant, close, cmd):
    lst = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    lst.bind(path)
    lst.listen(1)
    lst.settimeout(20)
    init = subprocess.Popen(cmd)
    conn, _ = lst.accept()
    lst.close()  # nothing else may connect once the init has
    conn.settimeout(20)
    p = plan(0 if mode == "root" else uid, gid)
    conn.send(p[:-1] if mode == "badplan" else p)
    err, fds = reply(conn, "plan")
    socks = [socket.socket(fileno=fd) for fd in fds]
    if err or len(socks) != NFDS:
        conn.close()
        for s in socks:
            s.close()
        return init.wait(20)
    print("launcher: listeners %s" % ", ".join(describe(s) for s in socks[:NLISTEN]))
    print("launcher: fd %d %s" % (NLISTEN, describe(socks[NLISTEN])))
    print("launcher: fd %d %s" % (NLISTEN + 1, describe(socks[NLISTEN + 1])))
    gw = socks[0]
    for s in socks[1:]:
        s.close()
    gw.settimeout(20)
    print("launcher: gateway listener %s:%d, launcher's netns %s" %
          (*gw.getsockname(), os.readlink("/proc/self/ns/net")))
    conn.send(grants(mode, grant))
    err, fds = reply(conn, "grants")
    for fd in fds:
        os.close(fd)
    if err or mode == "nogo":
        conn.close()
        return init.wait(20)
    conn.send(b"G")
    # from here on the connection is the launcher's life, as the init sees it
    if mode == "run":
        return init.wait(60)
    if mode == "die":
        for _ in range(1200):
            if os.path.exists(close):
                break
            time.sleep(0.05)
        print("launcher: %s, closing the connection" %
              ("told to" if os.path.exists(close) else "not told to in 60 s"), flush=True)
        conn.close()
        return init.wait(20)
    c, _ = gw.accept()
    od = c.getsockopt(socket.SOL_IP, 80, 16)  # SO_ORIGINAL_DST
    print("gateway: original dst %s:%d" % (socket.inet_ntoa(od[4:8]),
                                           struct.unpack("!H", od[2:4])[0]))
    c.recv(100)
    c.sendall(b"via-gateway")
    c.close()
    return init.wait(20)


def program(what, marks, name):
    if what == "exit7":
        return 7
    if what == "sigfwd":
        # the init's forwarding is what ends it: SIGTERM to the init comes back to the program
        os.kill(os.getppid(), signal.SIGTERM)
        time.sleep(30)
        return 0
    if what == "sleep":
        for _ in range(1200):
            if os.path.exists(os.path.join(marks, "close." + name)):
                break
            time.sleep(0.05)
        time.sleep(3)
        with open(os.path.join(marks, "after." + name), "w") as f:
            f.write("the program outlived its sleep\n")
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
    if sys.argv[1:2] == ["program"] and len(sys.argv) == 5:
        sys.exit(program(sys.argv[2], sys.argv[3], sys.argv[4]))
    if len(sys.argv) < 10 or sys.argv[1] != "launcher" or sys.argv[8] != "--":
        sys.exit("usage: docker_init.py launcher MODE SOCKET UID GID GRANT CLOSE -- CMD... | "
                 "program WHAT MARKS NAME")
    sys.exit(launcher(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]),
                      sys.argv[6], sys.argv[7], sys.argv[9:]))
