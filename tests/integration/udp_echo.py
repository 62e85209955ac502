#!/usr/bin/env python3
# udp_echo.py - the UDP echo peer of the relay's lab tests (run_udp.sh, run_udp_daemon.sh,
# run_docker.sh): bound to each ADDRESS given, on ports 3478 and 3479 (so its answers leave from
# the address the datagram went to, as a connected upstream socket wants), it sends every
# datagram back with "echo:" before it. Usage: udp_echo.py ADDRESS...
import select
import socket
import sys

socks = []
for addr in sys.argv[1:]:
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    for port in (3478, 3479):
        s = socket.socket(fam, socket.SOCK_DGRAM)
        s.bind((addr, port))
        socks.append(s)
while True:
    for s in select.select(socks, [], [])[0]:
        data, peer = s.recvfrom(2048)
        s.sendto(b"echo:" + data, peer)
