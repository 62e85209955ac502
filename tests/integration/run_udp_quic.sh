#!/usr/bin/env bash
# run_udp_quic.sh - QUIC through the UDP relay (issue 32 item 2) in root mode: ngtcp2's
# gtlsclient in the sandbox completes its handshake with gtlsserver in lab-wan at allowed.test's
# addresses when the policy allows allowed.test with proto: udp on 443 (the relay reads the
# Initial's ClientHello and its server name equals the name bound to the synthetic address);
# beside it, with the same client: a ClientHello whose server name differs from the bound name
# is refused (domain fronting: gtlsclient dialling allowed.test's synthetic address as a literal
# names "localhost"; and RFC 9001's sample Initial, naming example.com, sent there), and a name
# allowed for TCP only is refused; gtlsclient from lab-host itself reaches other.test's server
# (a positive control for that address). A flow that began as plain UDP and then carries a QUIC
# Initial drops it (its server name was never read), beside lab-host's control that the server
# answers that Initial.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
for tool in gtlsclient gtlsserver jq; do
	command -v "$tool" >/dev/null || { echo "FAIL: $tool is missing (deploy/debian-packages)"; exit 1; }
done
lab_up

T=$(lab_tmpdir wd-run-quic)
chmod 0755 "$T"
lab_on_exit rm -rf "$T"
A=$T/audit.jsonl
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0
PKI=$LAB_DIR/pki

# the servers: bound to each address (their answers leave from the address they were sent to)
for spec in "allowed4 $LAB_ALLOWED_V4 allowed" "allowed6 $LAB_ALLOWED_V6 allowed" \
	"other4 $LAB_OTHER_V4 other"; do
	set -- $spec
	lab_spawn wan "quic-$1" gtlsserver -q "$2" 443 "$PKI/$3.key" "$PKI/$3.crt"
	lab_on_exit lab_stop wan "quic-$1"
done

cat >"$T/quic.yaml" <<EOF
version: 1
network:
  allow:
    - { host: allowed.test, proto: udp, ports: [443] }
    - other.test
EOF

cat >"$T/quic-file.yaml" <<EOF
version: 1
filesystem:
  read: ["$T"]
network:
  allow:
    - { host: allowed.test, proto: udp, ports: [443] }
EOF

last_run() { jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$A"; }
events() { jq -s --arg r "$1" "[.[] | select(.run == \$r and ($2))] | length" "$A"; }
# client WHAT ARGS...: gtlsclient in a run; its output in $T/client.out, its run in $r
client() {
	in_host "$W" run -q --audit-log "$A" -p "$T/quic.yaml" -- timeout 10 gtlsclient \
		--timeout=3s --exit-on-all-streams-close "${@:2}" >"$T/client.out" 2>&1
	r=$(last_run)
	echo "# $1: $(grep -c 'QUIC handshake has completed' "$T/client.out") handshake(s)"
}
completed() { grep -q 'QUIC handshake has completed' "$T/client.out"; }

client "allowed name" allowed.test 443 https://allowed.test/
check "QUIC to the allowed name completes its handshake through the relay" completed
check "... a net.udp allow event for allowed.test:443" \
	test "$(events "$r" '.action == "net.udp" and .allowed == true and .resource == "allowed.test" and .port == 443 and .rule == "allowed.test:443/udp"')" -ge 1

# the synthetic address of allowed.test, dialled as a literal: gtlsclient then names "localhost"
in_host "$W" run -q --audit-log "$A" -p "$T/quic.yaml" -- sh -c \
	'exec timeout 10 gtlsclient --timeout=3s --exit-on-all-streams-close \
	"$(getent ahostsv4 allowed.test | head -n 1 | cut -d " " -f 1)" 443 https://allowed.test/' \
	>"$T/client.out" 2>&1
r=$(last_run)
check_fails "a ClientHello naming another host than the bound name is refused" completed
check "... a net.udp deny event: the Initial names localhost, the flow is bound to allowed.test" \
	test "$(events "$r" '.action == "net.udp" and .allowed == false and (.reason | test("QUIC Initial names localhost but the flow is bound to allowed.test")) and (.denial_id | length > 0)')" -ge 1
cp "$SRC/tests/unit/data/quic_rfc9001_a2.bin" "$T/rfc9001.bin"
chmod 0644 "$T/rfc9001.bin"
in_host "$W" run -q --audit-log "$A" -p "$T/quic-file.yaml" -- /usr/bin/python3 -c '
import socket, sys, time
a = socket.getaddrinfo("allowed.test", 443, socket.AF_INET, socket.SOCK_DGRAM)[0][4]
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(open(sys.argv[1], "rb").read(), a)
time.sleep(1)' "$T/rfc9001.bin"
r=$(last_run)
check "RFC 9001's sample Initial (example.com) to allowed.test is refused as fronting" \
	test "$(events "$r" '.action == "net.udp" and .allowed == false and (.reason | test("QUIC Initial names example.com but the flow is bound to allowed.test"))')" -ge 1

# a flow that begins as plain UDP (allowed: no QUIC Initial in its first datagram) and then
# carries a QUIC Initial: nobody read that Initial's server name, so it must not go up
cat >"$T/initial.py" <<'EOF2'
import socket, sys
# initial.py HOST FILE [hello]: sends the Initial in FILE to HOST:443 (after a plain datagram
# when "hello" is given, from the same socket) and prints how many datagrams came back in 3 s
fam, _, _, _, addr = socket.getaddrinfo(sys.argv[1], 443, socket.AF_INET, socket.SOCK_DGRAM)[0]
s = socket.socket(fam, socket.SOCK_DGRAM)
s.settimeout(3)
if len(sys.argv) > 3:
    s.sendto(b"hello, plain udp", addr)
    try:
        s.recvfrom(65536)
    except socket.timeout:
        pass
s.sendto(open(sys.argv[2], "rb").read(), addr)
n = 0
try:
    while True:
        s.recvfrom(65536)
        n += 1
except socket.timeout:
    pass
print(n)
EOF2
chmod 0644 "$T/initial.py"
n=$(in_host timeout 20 python3 "$T/initial.py" "$LAB_ALLOWED_V4" "$T/rfc9001.bin")
echo "# RFC 9001's Initial sent from lab-host to allowed.test's server: $n datagram(s) back"
check "control: allowed.test's QUIC server answers RFC 9001's sample Initial (from lab-host)" \
	test "${n:-0}" -ge 1
n=$(in_host "$W" run -q --audit-log "$A" -p "$T/quic-file.yaml" -- timeout 20 \
	/usr/bin/python3 "$T/initial.py" allowed.test "$T/rfc9001.bin" hello)
r=$(last_run)
echo "# the same Initial after a plain datagram, in a run: $n datagram(s) back"
check "... the same Initial sent in a run after a plain datagram on that flow gets no answer" \
	test "$n" = 0
check "... the flow was allowed as plain UDP" \
	test "$(events "$r" '.action == "net.udp" and .allowed == true and .resource == "allowed.test" and .port == 443 and .bytes_up == null')" -ge 1
check "... and its Initial audited as dropped: a connection whose server name was not read" \
	test "$(events "$r" '.action == "net.udp" and .allowed == false and (.reason | test("QUIC Initial of another connection.*began as plain UDP")) and (.denial_id | length > 0)')" -ge 1

in_host timeout 10 gtlsclient --timeout=3s --exit-on-all-streams-close "$LAB_OTHER_V4" 443 \
	https://other.test/ >"$T/client.out" 2>&1
check "control: other.test's QUIC server answers lab-host itself" completed
client "a name allowed for TCP only" other.test 443 https://other.test/
check_fails "QUIC to a name no udp rule allows is refused" completed
check "... a net.udp deny event for other.test" \
	test "$(events "$r" '.action == "net.udp" and .allowed == false and .resource == "other.test"')" -ge 1
lab_finish
