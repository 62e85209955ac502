#!/usr/bin/env bash
# run_daemon_users.sh - two unprivileged users through one gateway daemon under the operator's
# ceiling (issue 14): user A's daemon-mode run gets its policy intersected with the ceiling (a
# name A allows and the ceiling does not is refused, citing the ceiling's file:line; one both
# allow is served), the cgroup the daemon makes holds the ceiling's memory limit, not the
# higher one A's policy asks for; user B's flood of 5,000 connections is held to B's
# per-user cap (the rest refused and audited with that reason) while A's transfer and A's
# connections go on. A's throughput alone and during the flood is printed, not asserted.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

if [[ ${LAB_AS_USER:-} == 1 ]]; then
	echo "SKIP: run_daemon_users.sh runs its users itself"
	exit 77
fi
lab_require_root
. "$SRC/tests/integration/daemon/fixture.sh"

cat >"$T/gateway.yaml" <<EOF
version: 1
resolvers: ["$LAB_DNS_V4"]
control: {path: "$SOCK"}
audit: {path: "$CENTRAL"}
limits: {connections: 400, connections_per_run: 400}
ceiling:
  allow:
    - {host: allowed.test, ports: [443, 7]}
    - {host: other.test, ports: [443]}
    - {host: "*.wild.test", ports: [443]}
  limits: {memory_mb: 128, connections: 300}
  users:
    $B_NAME:
      limits: {connections: 50, dns_queries_per_s: 20}
EOF
CEIL_AT="$T/gateway.yaml:$(grep -n '^  allow:$' "$T/gateway.yaml" | cut -d: -f1)"
B_CAP_AT="$T/gateway.yaml:$(grep -n 'connections: 50' "$T/gateway.yaml" | cut -d: -f1)"
B_DNS_AT=$B_CAP_AT
cat >"$T/a.yaml" <<EOF
version: 1
filesystem:
  read: ["$LAB_CA", "$T/flood.py", "$T/dnsflood.py"]
network:
  allow:
    - {host: allowed.test, ports: [443, 7]}
    - {host: other.test, ports: [443]}
    - {host: multi.test, ports: [443]}
    - {host: "*.wild.test", ports: [443]}
limits: {memory_mb: 512}
EOF
cat >"$T/b.yaml" <<EOF
version: 1
filesystem:
  read: ["$T/flood.py", "$T/dnsflood.py"]
network:
  allow:
    - {host: allowed.test, ports: [7]}
    - {host: "*.wild.test", ports: [443]}
# B's DNS flood of fresh names measures the uid's DNS cap: the run's own DNS exfiltration
# budget (run_dns_budget.sh) would refuse most of them first
limits: {dns_label_kib_per_min: 0}
EOF
# flood.py N HOST PORT: opens N connections at once, asks each for an echo (a line: one
# byte alone could still begin an HTTP request, which the gateway waits to see whole), prints how many
# were served, then holds them all until its stdin ends (at most 120 s)
cat >"$T/flood.py" <<'EOF'
import resource, select, socket, sys, time
n, host, port = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 64), hard))
addr = socket.getaddrinfo(host, port, socket.AF_INET, socket.SOCK_STREAM)[0][4]
socks = []
for _ in range(n):
    s = socket.socket()
    s.setblocking(False)
    try:
        s.connect(addr)
    except BlockingIOError:
        pass
    except OSError:
        s.close()
        continue
    socks.append(s)
time.sleep(3)
p = select.poll()
by_fd = {}
for s in socks:
    try:
        s.send(b"ping\n")
    except OSError:
        continue
    by_fd[s.fileno()] = s
    p.register(s, select.POLLIN)
served, end = 0, time.time() + 8
while by_fd and time.time() < end:
    for fd, ev in p.poll(200):
        s = by_fd.pop(fd, None)
        p.unregister(fd)
        try:
            if s and s.recv(5) == b"ping\n":
                served += 1
        except OSError:
            pass
print("served %d of %d" % (served, n), flush=True)
select.select([sys.stdin], [], [], 120)
EOF
cp "$SRC/tests/integration/dnsflood.py" "$T/dnsflood.py"
chmod 0644 "$T/gateway.yaml" "$T/a.yaml" "$T/b.yaml" "$T/flood.py" "$T/dnsflood.py"

check "the host's nft table is installed" in_host "$W" nft install
daemon_start
check "the daemon starts with the ceiling" daemon_ready

curl_a() { ra -p "$T/a.yaml" -- curl -sS --fail --max-time 20 --cacert "$LAB_CA" "$@"; }
echo "# A's policy under the ceiling (daemon mode)"
check_eq "control: other.test, which both allow, is served" "hello from other.test" \
	curl_a --noproxy '*' https://other.test/
check_fails "multi.test, which A allows and the ceiling does not, is refused" \
	curl_a --noproxy '*' https://multi.test/
check "... and the central log says the host's ceiling refused it, with its file:line" \
	jq -e -s --arg at "$CEIL_AT" --argjson u "$A_UID" 'any(.[]; .uid == $u and
	 .allowed == false and .resource == "multi.test" and
	 ((.reason // "") | contains("not allowed by the host'"'"'s ceiling " + $at)))' "$CENTRAL"
check "the denied name was never asked upstream" lab_dns_never_asked multi.test
check "control: the allowed one was" lab_dns_asked other.test

echo "# the ceiling's memory limit holds the cgroup the daemon makes"
starts() { jq -s '[.[] | select(.action == "run.start")] | length' "$AA"; }
cat_daemon_cg() { # the memory limit of the daemon's cgroup of the sleeper's run, by its id:
	# /sys/fs/cgroup is every lab's, and other tests' runs of the same user have cgroups too
	local rid d
	rid=$(jq -r -s --argjson n "$N0" '[.[] | select(.action == "run.start")][$n].run // empty' "$AA")
	[[ -n $rid ]] || return 1
	d=$(find /sys/fs/cgroup/memory -maxdepth 4 -type d -name "warden-$rid" | head -1)
	[[ -n $d ]] && cat "$d/memory.limit_in_bytes"
}
N0=$(starts)
ra -p "$T/a.yaml" -- sleep 8 &
SLEEPER=$!
lab_wait 10 cat_daemon_cg >/dev/null
check_eq "A's run's memory cgroup holds 128 MiB (the ceiling), not A's 512" 134217728 \
	cat_daemon_cg
wait "$SLEEPER"

echo "# B floods, A goes on"
big_a() { # A downloads the 64 MiB file; prints its sha256 and the milliseconds it took
	local t0 h
	t0=$(date +%s%N)
	h=$(ra -p "$T/a.yaml" -- sh -c 'curl -sS --fail --max-time 60 --noproxy "*" --cacert "$0" \
		https://allowed.test/big.bin | sha256sum' "$LAB_CA" | cut -d' ' -f1)
	echo "$h $((($(date +%s%N) - t0) / 1000000))"
}
ALONE=$(big_a)
check_eq "control: A's download alone is whole" "$LAB_BIGFILE_SHA256" cut -d' ' -f1 <<<"$ALONE"
mkfifo "$T/flood.in"
(rb -p "$T/b.yaml" -- python3 "$T/flood.py" 5000 allowed.test 7 <"$T/flood.in" \
	>"$T/flood.out" 2>&1) &
FLOOD=$!
exec 7>"$T/flood.in"
check "B's flood reports what was served" lab_wait 60 grep -q '^served' "$T/flood.out"
SERVED=$(sed -n 's/^served \([0-9]*\) of.*/\1/p' "$T/flood.out")
check "B got some connections served (control: the flood reached the gateway)" \
	test "${SERVED:-0}" -ge 1
check "... and at most B's cap of 50" test "${SERVED:-999}" -le 50
DURING=$(big_a)
check_eq "A's download during B's flood is whole" "$LAB_BIGFILE_SHA256" cut -d' ' -f1 <<<"$DURING"
check_eq "A's connections are served while B holds its cap" "ok ok ok" bash -c \
	'for i in 1 2 3; do echo -n "$(echo ok | ra -p "$0" -- socat -T5 - TCP:allowed.test:7) "; done | sed "s/ $//"' \
	"$T/a.yaml"
exec 7>&-
wait "$FLOOD"
check "B's refusals are audited with B's per-user cap, citing the ceiling" \
	jq -e -s --arg at "$B_CAP_AT" --argjson u "$B_UID" 'any(.[]; .uid == $u and
	 .allowed == false and ((.reason // "") | test("user connection limit reached: uid [0-9]+ has")) and
	 ((.reason // "") | contains($at)))' "$CENTRAL"
check "B's gateway events carry B's uid, name and mode daemon (a shared log holds many users')" \
	jq -e -s --argjson u "$B_UID" --arg n "$B_NAME" '[.[] | select(.action == "net.connect" and
	 ((.reason // "") | test("user connection limit")))] | length > 0 and
	 all(.uid == $u and .user == $n and .mode == "daemon")' "$CENTRAL"
check "A's own log's run events name A" jq -e -s --arg n "$A_NAME" \
	'[.[] | select(.action == "run.start")] | length > 0 and all(.user == $n)' "$AA"
check "none of A's connections was refused for a user cap" jq -e -s --argjson u "$A_UID" \
	'all(.[]; .uid != $u or ((.reason // "") | test("user connection limit") | not))' "$CENTRAL"
echo "# B floods the shared resolver with UDP DNS queries; A's are answered meanwhile"
check "warden policy check --ceiling shows B's DNS query cap, with its place" lab_match \
	"^#   dns_queries_per_s: 20  \\($B_DNS_AT\\)" "$W" policy check --ceiling "$T/gateway.yaml" \
	--user "$B_UID" "$T/b.yaml"
# TXT queries of names nobody asked before: each one the gateway lets through goes upstream
(rb -p "$T/b.yaml" -- python3 "$T/dnsflood.py" resolv 1000000 TXT 'bflood-{i}.wild.test' 5 \
	>"$T/bdns.out" 2>&1) &
BDNS=$!
check "B's flood is under way (its first queries reached the resolver)" lab_wait 20 \
	lab_dns_asked bflood-0.wild.test TXT
a_dns() { # 20 TXT queries of A's during B's flood: all answered, none refused (the lab
	# resolver has no TXT records there: its answer is NXDOMAIN, relayed)
	local out
	out=$(ra -p "$T/a.yaml" -- python3 "$T/dnsflood.py" resolv 20 TXT 'aq-{i}.wild.test') ||
		return 2
	echo "$out"
	[[ $out == "sent 20 answered 20 "* && $out == *" refused 0 "* ]]
}
check "A's queries during B's flood are answered (the positive control)" a_dns
check "... by the lab resolver: A's were asked upstream" lab_dns_asked aq-19.wild.test TXT
wait "$BDNS"
cat "$T/bdns.out"
B_SECS=$(awk '{print $NF}' "$T/bdns.out")
B_SENT=$(awk '{print $2}' "$T/bdns.out")
B_REFUSED=$(awk '{print $10}' "$T/bdns.out")
B_UP=$(grep -c 'query\[TXT\] bflood-' "$LAB_DNS_LOG" || true)
echo "# info: B sent ${B_SENT:-?} TXT queries in ${B_SECS:-?} s; the lab resolver saw ${B_UP:-?} of them; ${B_REFUSED:-?} were refused"
check "B sent far more queries than B's cap lets through (control: a flood)" \
	test "${B_SENT:-0}" -ge 500
check "the resolver saw B's queries (control: some went upstream)" test "${B_UP:-0}" -ge 20
check "... but no more than B's cap of 20 a second allows (20 x (seconds + 3))" bash -c \
	'(( $0 <= 20 * (${1%.*} + 3) ))' "${B_UP:-999999}" "${B_SECS:-0}"
check "B got REFUSED for the rest" test "${B_REFUSED:-0}" -ge 1
limit_dns_summaries() { # every limit.dns event is a summary of B's, citing the cap
	jq -c 'select(.action == "limit.dns")' "$CENTRAL" | head -3
	jq -e -s --argjson u "$B_UID" --arg at "$B_DNS_AT" '[.[] | select(.action == "limit.dns")] |
	 length > 0 and all(.uid == $u and (.count // 0) > 0 and .resource == "" and
	 ((.reason // "") | contains($at)))' "$CENTRAL"
}
check "the refusals are audited in summaries with B's uid and the cap's place, never one by one" \
	limit_dns_summaries
check "... and they count every refused query (at least those B saw answered)" jq -e -s \
	--argjson n "${B_REFUSED:-0}" '[.[] | select(.action == "limit.dns") | .count] | add >= $n' \
	"$CENTRAL"

echo "# each user's own log has their runs' gateway events, and never another user's"
rb -p "$T/b.yaml" -- getent hosts b-secret.test >/dev/null 2>&1
check "control: B's log has B's denied name" jq -e -s 'any(.[]; .action == "dns.query" and
	 .allowed == false and .resource == "b-secret.test")' "$BA"
check "control: B's log has B's flood's names" jq -e -s 'any(.[]; .action == "dns.query" and
	 ((.resource // "") | startswith("bflood-")))' "$BA"
check "control: A's log has A's allowed name (other.test, connected)" jq -e -s 'any(.[];
	 .action == "net.connect" and .allowed == true and .resource == "other.test")' "$AA"
check "control: ... and A's name the ceiling denied (multi.test), with the ceiling's reason" \
	jq -e -s 'any(.[]; .allowed == false and .resource == "multi.test" and
	 ((.reason // "") | contains("ceiling")))' "$AA"
check "A's log has none of B's names" jq -e -s 'all(.[]; (.resource // "") as $r |
	 ($r | startswith("bflood-") or . == "b-secret.test") | not)' "$AA"
check "... and no event of B's uid, nor of B's runs" jq -e -s --argjson u "$B_UID" \
	--slurpfile b "$BA" '([$b[] | .run] | unique) as $bruns |
	 all(.[]; .uid != $u and (.run as $r | $bruns | index($r) | not))' "$AA"
check "B's log has none of A's names" jq -e -s 'all(.[]; (.resource // "") as $r |
	 ($r | startswith("aq-") or . == "multi.test" or . == "other.test") | not)' "$BA"

echo "# info: A's 64 MiB download: $(cut -d' ' -f2 <<<"$ALONE") ms alone, $(cut -d' ' -f2 <<<"$DURING") ms during B's flood of 5,000 connections (B served: ${SERVED:-?})"
lab_finish
