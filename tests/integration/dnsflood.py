#!/usr/bin/env python3
# dnsflood.py - DNS queries over UDP as fast as answers come, for the integration tests.
#
#   dnsflood.py SERVER COUNT QTYPE PATTERN [SECONDS]
#
# SERVER: an address, or "resolv" (the first nameserver of /etc/resolv.conf: inside a run, its
# gateway). Sends COUNT queries one after another (each waits at most 0.5 s for its answer),
# for PATTERN with "{i}" replaced by the query's number (A, AAAA, TXT, MX as QTYPE); with
# SECONDS, stops early once that long has passed. Prints one line:
#   sent N answered M noerror A nxdomain B refused C other D timeouts E seconds S
# and exits 0 (the queries were sent; the caller judges the counts), 2 on a bad argument.
import random
import socket
import struct
import sys
import time

TYPES = {"A": 1, "AAAA": 28, "TXT": 16, "MX": 15}


def server_of(arg):
    if arg != "resolv":
        return arg
    with open("/etc/resolv.conf") as f:
        for line in f:
            w = line.split()
            if len(w) >= 2 and w[0] == "nameserver":
                return w[1]
    raise SystemExit("dnsflood: no nameserver in /etc/resolv.conf")


def query(qid, name, qtype):
    q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for label in name.rstrip(".").split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\0" + struct.pack(">HH", qtype, 1)


def main():
    if len(sys.argv) < 5 or sys.argv[3] not in TYPES:
        print(__doc__ or "usage: dnsflood.py SERVER COUNT QTYPE PATTERN [SECONDS]")
        return 2
    server, count, qtype = server_of(sys.argv[1]), int(sys.argv[2]), TYPES[sys.argv[3]]
    pattern, limit = sys.argv[4], float(sys.argv[5]) if len(sys.argv) > 5 else 0
    fam = socket.AF_INET6 if ":" in server else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.settimeout(0.5)
    counts = {"noerror": 0, "nxdomain": 0, "refused": 0, "other": 0, "timeouts": 0}
    sent = answered = 0
    t0 = time.monotonic()
    for i in range(count):
        if limit and time.monotonic() - t0 >= limit:
            break
        qid = random.randrange(65536)
        s.sendto(query(qid, pattern.replace("{i}", str(i)), qtype), (server, 53))
        sent += 1
        while True:
            try:
                ans = s.recv(4096)
            except socket.timeout:
                counts["timeouts"] += 1
                break
            except OSError:  # an ICMP error for an earlier datagram: no answer to this one
                counts["other"] += 1
                break
            if len(ans) < 12 or struct.unpack(">H", ans[:2])[0] != qid:
                continue  # a late answer to an earlier query
            answered += 1
            rcode = ans[3] & 0xF
            key = {0: "noerror", 3: "nxdomain", 5: "refused"}.get(rcode, "other")
            counts[key] += 1
            break
    print("sent %d answered %d %s seconds %.2f" % (
        sent, answered, " ".join("%s %d" % kv for kv in counts.items()),
        time.monotonic() - t0), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
