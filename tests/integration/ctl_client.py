#!/usr/bin/env python3
"""ctl_client.py - a small control-socket client for run_daemon.sh: crafted `register`
requests a real launcher never sends, and the other operations, as a chosen uid.

    ctl_client.py SOCKET UID GID WHAT [ARG]

Started as root: it opens what it sends (a namespace of another user's process, a file)
first, then drops to UID:GID before it connects, so that SO_PEERCRED names UID. It prints the
daemon's answer line (or "no answer") and exits 0 when it got one.

WHAT: netns-of PID (the network namespace of process PID), userns-of PID (its user
namespace: not a network namespace), fd PATH (any file), nofd (no descriptor attached),
twofds PID, truncated (half a request, then the connection closes), oversize (a policy over
1 MiB), list, unregister ID, replace ID, inject (an event-shaped line: a launcher cannot write
events into the daemon's log), stream-hold PID DIR (register the namespace of PID with
"stream": "events", write the answer to DIR/answer, then read nothing until DIR/go exists: a
stuck launcher; then unregister on the same connection and write every event line that came
before the answer to DIR/events.jsonl, the unregister's answer to DIR/unregistered).
Also: join NSPID PID (register with the network namespace of
NSPID, then on the same connection cgroup_join PID: both answers, one a line), join-only PID
(cgroup_join with no run registered on the connection). With CTL_HOLD=N in its environment it
keeps the connection (and so the run) N seconds after the answer.
"""
import json
import os
import pwd
import socket
import sys
import time

GOOD_POLICY = "version: 1\nnetwork:\n  allow:\n    - {host: allowed.test, ports: [443]}\n"


def register(rid, policy=GOOD_POLICY, stream=False):
    req = {"op": "register", "id": rid, "netns": "fd", "policy": policy}
    if stream:
        req["stream"] = "events"
    return (json.dumps(req) + "\n").encode()


def read_line(s, buf):
    """the next line of s (without its newline) and what is left after it; None at the end"""
    while b"\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            return None, buf
        buf += chunk
    line, _, rest = buf.partition(b"\n")
    return line, rest


def stream_hold(s, rid, fd, out_dir):
    """register with the stream, answer to out_dir/answer, stall until out_dir/go, drain"""
    socket.send_fds(s, [register(rid, stream=True)], [fd])
    line, buf = read_line(s, b"")
    if line is None:
        print("no answer")
        return 1
    with open(os.path.join(out_dir, "answer"), "wb") as f:
        f.write(line + b"\n")
    if not json.loads(line).get("ok"):
        print(line.decode(errors="replace"))
        return 1
    s.settimeout(None)
    while not os.path.exists(os.path.join(out_dir, "go")):
        time.sleep(0.05)
    s.settimeout(30)
    s.sendall((json.dumps({"op": "unregister", "id": rid}) + "\n").encode())
    with open(os.path.join(out_dir, "events.jsonl"), "wb") as ev:
        while True:
            line, buf = read_line(s, buf)
            if line is None:
                print("the connection ended before the unregister's answer")
                return 1
            if line.startswith(b'{"event":') and line.endswith(b"}"):
                ev.write(line[len(b'{"event":'):-1] + b"\n")
                continue
            with open(os.path.join(out_dir, "unregistered"), "wb") as f:
                f.write(line + b"\n")
            print(line.decode(errors="replace"))
            return 0


def answer_line(s):
    """the next line of s as text, or the words no answer"""
    buf = b""
    while b"\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    return buf.decode(errors="replace").strip() or "no answer"


def main():
    sock_path, uid, gid, what = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    arg = sys.argv[5] if len(sys.argv) > 5 else None
    fds = []
    if what == "join":
        fds = [os.open(f"/proc/{arg}/ns/net", os.O_RDONLY)]
    if what in ("netns-of", "twofds", "stream-hold"):
        fds = [os.open(f"/proc/{arg}/ns/net", os.O_RDONLY)]
        if what == "twofds":
            fds.append(os.open("/dev/null", os.O_RDONLY))
    elif what == "userns-of":
        fds = [os.open(f"/proc/{arg}/ns/user", os.O_RDONLY)]
    elif what == "fd":
        fds = [os.open(arg, os.O_RDONLY)]
    os.initgroups(pwd.getpwuid(uid).pw_name, gid)
    os.setgid(gid)
    os.setuid(uid)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(15)
    s.connect(sock_path)
    rid = f"crafted{os.getpid()}"
    if what == "stream-hold":
        return stream_hold(s, rid, fds[0], sys.argv[6])
    if what in ("netns-of", "userns-of", "fd", "twofds"):
        socket.send_fds(s, [register(rid)], fds)
    elif what == "join":
        socket.send_fds(s, [register(rid)], fds)
        print(answer_line(s), flush=True)
        s.sendall((json.dumps({"op": "cgroup_join", "id": rid, "pid": sys.argv[6]}) +
                   "\n").encode())
    elif what == "join-only":
        s.sendall((json.dumps({"op": "cgroup_join", "id": rid, "pid": arg}) + "\n").encode())
    elif what == "nofd":
        s.sendall(register(rid))
    elif what == "truncated":
        s.sendall(register(rid)[:40])
        s.close()
        print("sent half a request")
        return 0
    elif what == "oversize":
        s.sendall(register(rid, "#" * (1024 * 1024 + 100) + "\n" + GOOD_POLICY))
    elif what == "list":
        s.sendall(b'{"op":"list"}\n')
    elif what == "inject":
        fake = {"ts": "2026-01-01T00:00:00.000000Z", "run": "injected", "type": "net",
                "action": "net.connect", "allowed": True, "resource": "injected.test",
                "reason": "a launcher's line"}
        s.sendall((json.dumps({"event": fake}) + "\n").encode())
    elif what == "unregister":
        s.sendall((json.dumps({"op": "unregister", "id": arg}) + "\n").encode())
    elif what == "replace":
        s.sendall((json.dumps({"op": "replace", "id": arg, "policy": GOOD_POLICY}) +
                   "\n").encode())
    else:
        print(f"unknown WHAT {what}", file=sys.stderr)
        return 2
    buf = b""
    try:
        while b"\n" not in buf:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    except OSError as e:
        print(f"no answer ({e})")
        return 1
    if not buf:
        print("no answer")
        return 1
    print(buf.decode(errors="replace").strip(), flush=True)
    time.sleep(float(os.environ.get("CTL_HOLD", "0")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
