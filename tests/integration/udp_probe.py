#!/usr/bin/env python3
# udp_probe.py - one UDP exchange for tests/integration/run_udp.sh: sends a datagram to NAME
# (resolved by the system's resolver: in a run, the gateway's DNS front) or ADDRESS at PORT and
# waits for the echo (sending again each second for 8 s, unless SIZE is given). Prints "echo
# DATA" and exits 0, "timeout" and exits 1, "error WHAT" and exits 2 (a probe that could not run). Usage: udp_probe.py HOST PORT [FAMILY 4|6 [SIZE]]: SIZE
# pads the datagram to that many bytes
import socket
import sys
import time

host, port = sys.argv[1], int(sys.argv[2])
fam = {"4": socket.AF_INET, "6": socket.AF_INET6}.get(sys.argv[3] if len(sys.argv) > 3 else "4")
try:
    addr = socket.getaddrinfo(host, port, fam, socket.SOCK_DGRAM)[0][4]
except OSError as e:
    print("error resolve %s: %s" % (host, e))
    sys.exit(2)
s = socket.socket(fam, socket.SOCK_DGRAM)
msg = b"ping-%d" % port
sized = len(sys.argv) > 4
if sized:
    msg = msg.ljust(int(sys.argv[4]), b".")
# A UDP client sends again when no answer comes; so does this one, once a second for 8 s (the
# first datagram of a flow waits for the relay's lookup, resolution and upstream socket, which a
# loaded machine may stretch past a fixed wait). A sized datagram (an upload budget's probe) is
# sent once, for a resend would charge the budget again: it waits the 8 s for its answer.
deadline = time.monotonic() + 8
data = None
while data is None and time.monotonic() < deadline:
    try:
        s.sendto(msg, addr)
    except OSError as e:
        print("timeout (%s)" % e)
        sys.exit(1)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        s.settimeout(left if sized else min(1.0, left))
        try:
            data, _ = s.recvfrom(2048)
            break
        except socket.timeout:
            if not sized:
                break
        except OSError:
            # an ICMP error reported on the socket: the answer may still come
            continue
if data is None:
    print("timeout")
    sys.exit(1)
print("echo " + data.decode(errors="replace"))
sys.exit(0 if data == b"echo:" + msg else 1)
