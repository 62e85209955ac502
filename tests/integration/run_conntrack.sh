#!/usr/bin/env bash
# run_conntrack.sh - one run cannot fill the host's conntrack table (issue 11, item 3). A run
# that opens thousands of flows from as many source ports (DNS queries and TCP connections,
# each from a new socket) holds at most its limit of open flows in lab-host
# (nft.conntrack_per_run); one that opens and closes TCP connections as fast as it can leaves
# at most the burst plus ten seconds of its rate of new flows (nft.conntrack_new_per_s:
# closed flows leave conntrack after 10 s and the kernel's count skips them). Counted, never
# timed. What is refused is audited ("limit.connections", with summaries that count it, and
# in run.exit's denials), and another run still works meanwhile. Positive controls: the
# floods were real (the run got up to its limit, the burst got through).
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
PY=/usr/bin/python3
[[ -x $PY ]] || { echo "SKIP: python3 missing"; exit 77; }
[[ -r /proc/net/nf_conntrack ]] || { echo "SKIP: no /proc/net/nf_conntrack"; exit 77; }
lab_up

T=$(lab_tmpdir wd-run-conntrack)
chmod 0755 "$T"
lab_on_exit rm -rf "$T"
A=$T/audit.jsonl
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0
N=1000
mkdir -m 0777 "$T/go"
cat >"$T/net.yaml" <<EOF
version: 1
filesystem:
  read: ["$LAB_CA", "$T/flood.py"]
  write: ["$T/go"]
network:
  allow:
    - {host: allowed.test, ports: [443]}
EOF
# two gateway configs: A bounds open flows (N) with no practical rate limit, B bounds the
# rate of new flows (R a second, burst 10 R) that closed TCP flows would otherwise escape
for c in A:$N:100000 B:$N:50; do
	IFS=: read -r name n r <<<"$c"
	cat >"$T/gw$name.yaml" <<EOF
version: 1
nft: {conntrack_per_run: $n, conntrack_new_per_s: $r}
EOF
done
# flood.py UDP TCP HOLD: TCP connects to allowed.test:443 (kept open with HOLD=1, else closed
# at once), then UDP DNS queries for that allowed name (no denial of their own), each from a
# new socket (a new source port); prints "connected C sent U", then waits for EOF on stdin
cat >"$T/flood.py" <<'EOF'
import select, socket, struct, sys
nudp, ntcp, hold = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
ns = [l.split()[1] for l in open("/etc/resolv.conf") if l.startswith("nameserver") and "." in l][0]
q = struct.pack(">HHHHHH", 1, 0x0100, 1, 0, 0, 0) + b"\x07allowed\x04test\x00\x00\x01\x00\x01"
# resolved first: once the run is at its limit, its own lookups are refused too
addr = socket.getaddrinfo("allowed.test", 443, socket.AF_INET, socket.SOCK_STREAM)[0][4]
connected, kept = 0, []
for i in range(0, ntcp, 100):
    socks = []
    for j in range(min(100, ntcp - i)):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.connect_ex(addr)
        socks.append(s)
    left = list(socks)
    while left:
        _, w, _ = select.select([], left, [], 1)
        if not w:
            break
        for s in w:
            left.remove(s)
            if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                connected += 1
    for s in socks:
        if hold:
            kept.append(s)
        else:
            s.close()
sent = 0
for i in range(nudp):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.sendto(q, (ns, 53))
        sent += 1
    except OSError:
        pass
    s.close()
print("connected", connected, "sent", sent, flush=True)
sys.stdin.read()  # until the test is done counting (EOF)
EOF
chmod 0644 "$T/flood.py"

last_run() { jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$A"; }
# in_flows CMD...: CMD where the run's flows are: lab-host for a root-mode run; a rootless
# run's own network namespace (its program's, the flood's: LAB_AS_USER=1, run_as_user.sh)
in_flows()
{
	local pid
	if [[ ${LAB_AS_USER:-} == 1 ]]; then
		pid=$(pgrep -f -n "^$PY $T/flood.py") || { echo "no flood process" >&2; return 1; }
		nsenter -t "$pid" -n "$@"
	else
		in_host "$@"
	fi
}
# entries SRC: conntrack entries where the run's flows are whose original source is SRC
entries() { in_flows grep -c " src=$1 " /proc/net/nf_conntrack; }
# install_table CONFIG: root mode's runs take their limits from the host's table, installed
# with CONFIG; a rootless run's own table takes them from the run's --config
install_table()
{
	[[ ${LAB_AS_USER:-} == 1 ]] && return 0
	check "the table is installed with limit $1" in_host "$W" nft install --config "$T/gw$1.yaml"
}
# flood CONFIG UDP TCP HOLD: runs the flood in a run with gateway config CONFIG, leaves the
# run's conntrack entries in $n once it is done (the run waits until then), its id in $R
flood() {
	rm -f "$T/go/"*
	mkfifo -m 0666 "$T/go/hold"
	in_host "$W" run -q --audit-log "$A" --config "$1" -p "$T/net.yaml" -- sh -c \
		"$PY '$T/flood.py' $2 $3 $4 <'$T/go/hold' >'$T/go/out' 2>&1" &
	fpid=$!
	exec 7<>"$T/go/hold" # read-write: never blocks, and its close is the reader's EOF
	lab_wait 120 grep -q "sent" "$T/go/out"
	R=$(last_run)
	S4=$(sed -n 's/^sbx4=//p' "$LAB_RUNS_DIR/$R/state")
	n=$(entries "$S4")
	echo "    run $R ($S4) holds $n conntrack entries; the flood: $(cat "$T/go/out")"
}
flood_done() {
	exec 7>&-
	wait "$fpid"
}
refused() { # events and summaries of limit.connections for $R: how many flows they count
	jq -s --arg r "$R" '[.[] | select(.run == $r and .action == "limit.connections") |
		(.denials // 1)] | add // 0' "$A"
}

echo "# open flows: at most $N per run (nft.conntrack_per_run)"
install_table A
flood "$T/gwA.yaml" 3000 600 1
check "the flood was real: the run reached its limit ($n >= $((N * 9 / 10)))" \
	test "$n" -ge $((N * 9 / 10))
check "... and holds no more than its limit ($n <= $N + 16)" test "$n" -le $((N + 16))
check "the conntrack table the run's flows are in holds far fewer than the run opened" \
	test "$(in_flows cat /proc/sys/net/netfilter/nf_conntrack_count)" -lt 3000
check_eq "control: another run still reaches allowed.test meanwhile" "hello from allowed.test" \
	in_host "$W" run -q --audit-log "$A" --config "$T/gwA.yaml" -p "$T/net.yaml" -- \
	curl -fsS --max-time 8 --cacert "$LAB_CA" https://allowed.test/
flood_done
check "the refused flows are audited for the flooding run (limit.connections)" jq -e -s --arg r "$R" \
	'[.[] | select(.run == $r and .action == "limit.connections" and .allowed == false)] | length > 0' "$A"
check "... with the limit in the event" jq -e -s --arg r "$R" --argjson l "$N" \
	'[.[] | select(.run == $r and .action == "limit.connections")][0].limit == $l' "$A"
check "... and a summary that counts what was not audited one by one" jq -e -s --arg r "$R" \
	'[.[] | select(.run == $r and .action == "limit.connections" and (.denials // 0) > 0)] | length > 0' "$A"
# a new socket may get the port of a closed one (the same flow): 90% of what was sent
want=$(((3600 - n) * 9 / 10))
got=$(refused)
check "events and summaries count the flows beyond the limit ($got >= $want)" test "$got" -ge "$want"
check "the flood wrote a bounded number of events (< 100)" jq -e -s --arg r "$R" \
	'[.[] | select(.run == $r and .action == "limit.connections")] | length < 100' "$A"
check "run.exit counts every refused flow as a denial (>= $got)" jq -e -s --arg r "$R" \
	--argjson want "$got" \
	'[.[] | select(.run == $r and .action == "run.exit")][0].denials >= $want' "$A"

echo "# closed TCP flows: bounded by the rate of new ones (50 a second, burst 500)"
# closed flows leave conntrack after 10 s (not 120) and are not counted as open: what one run
# can leave behind is the burst plus 10 s of the rate, 500 + 500, whatever the time taken
install_table B
flood "$T/gwB.yaml" 0 3000 0
check "the flood was real: the burst got through ($n >= 450)" test "$n" -ge 450
check "... and the run holds no more than burst + 10 s of its rate ($n <= 1000 + 16)" \
	test "$n" -le 1016
flood_done
c=$(sed -n 's/^connected \([0-9]*\) .*/\1/p' "$T/go/out")
check "the refused connections are audited, counted ($(refused) >= 3000 - $c connected)" \
	test "$(refused)" -ge $((3000 - c))

lab_finish
