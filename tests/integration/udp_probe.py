#!/usr/bin/env python3
# udp_probe.py - one UDP exchange for tests/integration/run_udp.sh: sends a datagram to NAME
# (resolved by the system's resolver: in a run, the gateway's DNS front) or ADDRESS at PORT and
# waits for the echo. Prints "echo DATA" and exits 0, "timeout" and exits 1, "error WHAT" and
# exits 2 (a probe that could not run). Usage: udp_probe.py HOST PORT [FAMILY 4|6 [SIZE]]: SIZE
# pads the datagram to that many bytes
import socket
import sys

host, port = sys.argv[1], int(sys.argv[2])
fam = {"4": socket.AF_INET, "6": socket.AF_INET6}.get(sys.argv[3] if len(sys.argv) > 3 else "4")
try:
    addr = socket.getaddrinfo(host, port, fam, socket.SOCK_DGRAM)[0][4]
except OSError as e:
    print("error resolve %s: %s" % (host, e))
    sys.exit(2)
s = socket.socket(fam, socket.SOCK_DGRAM)
s.settimeout(3)
msg = b"ping-%d" % port
if len(sys.argv) > 4:
    msg = msg.ljust(int(sys.argv[4]), b".")
try:
    s.sendto(msg, addr)
    data, _ = s.recvfrom(2048)
except socket.timeout:
    print("timeout")
    sys.exit(1)
except OSError as e:
    print("timeout (%s)" % e)
    sys.exit(1)
print("echo " + data.decode(errors="replace"))
sys.exit(0 if data == b"echo:" + msg else 1)
