#!/usr/bin/env bash
# quic_clients.sh - the gateway's QUIC Initial reader (gateway/quicsniff.c, gateway/proto/quic.c) on
# what real clients send (issue 32 item 2): in a namespace of the test's own with nothing but
# loopback, tests/integration/quic_sni.c binds a UDP port, reads the first peer's datagrams with
# the gateway's code and prints the ClientHello's server name. Clients: ngtcp2's (Debian's
# gtlsclient: one Initial), Chromium forced to QUIC (its ClientHello with a post-quantum key
# share and GREASE ECH spans two Initials in two datagrams, CRYPTO frames split: reassembly).
# Beside them the same probe on RFC 9001's client Initial sent as it is (the name example.com)
# and with one byte of its ciphertext changed (refused: it does not open). The listener answers
# nothing, so the clients fail after their timeout: that is expected, the name is what counts.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"
lab_require_root
SNI=${WD_QUIC_SNI:-${WARDEN_BUILD_DIR:-$SRC/build}/tests/integration/quic_sni}
[[ -x $SNI ]] || { echo "FAIL: $SNI is not built"; exit 1; }
for tool in gtlsclient chromium jq python3 unshare; do
	command -v "$tool" >/dev/null || { echo "FAIL: $tool is missing (deploy/debian-packages)"; exit 1; }
done
lab_up

T=$LAB_DIR/quic
mkdir -p "$T"
NS=wdquic$$
ip netns add "$NS" || { echo "FAIL - netns $NS"; exit 1; }
lab_on_exit ip netns delete "$NS"
ip -n "$NS" link set lo up
echo "127.0.0.1 quic.example.test" >"$T/hosts"

# listen PORT SECONDS: quic_sni in the namespace, in the background; waits until it is bound
listen() {
	rm -f "$T/sni.out"
	ip netns exec "$NS" "$SNI" 127.0.0.1 "$1" "$2" >"$T/sni.out" 2>&1 &
	LPID=$!
	lab_wait 5 grep -q '^listening$' "$T/sni.out"
}
# heard: $out, quic_sni's verdict (its last line), once it ended. Not run in $(...): a subshell's
# `wait` cannot wait for the shell's child, returns at once, and the verdict was read before it
# was written under load (seen in CI: "listening" read as the verdict)
heard() {
	wait "$LPID" 2>/dev/null
	out=$(tail -n 1 "$T/sni.out")
}
# send FILE [FLIP]: one UDP datagram of FILE's bytes (byte FLIP changed) to the listener
send() {
	ip netns exec "$NS" python3 -c 'import socket, sys
d = bytearray(open(sys.argv[1], "rb").read())
if len(sys.argv) > 2: d[int(sys.argv[2])] ^= 1
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(d, ("127.0.0.1", 4433))' "$@"
}

echo "# the probe itself: RFC 9001 Appendix A.2's client Initial, intact and altered"
listen 4433 10
send "$SRC/tests/unit/data/quic_rfc9001_a2.bin"
heard
echo "# $out"
check "RFC 9001's client Initial names example.com" jq -e \
	'.result == "ok" and .sni == "example.com" and .version == "0x00000001"' <<<"$out"
listen 4433 10
send "$SRC/tests/unit/data/quic_rfc9001_a2.bin" 600
heard
echo "# $out"
check "... one byte of its ciphertext changed: refused, it does not open" jq -e \
	'.result == "malformed" and (.why | test("does not open"))' <<<"$out"

echo "# ngtcp2's client (gtlsclient)"
listen 4433 10
ip netns exec "$NS" unshare -m sh -c 'mount --bind "$0" /etc/hosts &&
	exec timeout 8 gtlsclient -q --timeout=3s quic.example.test 4433' "$T/hosts" \
	>"$T/ngtcp2.out" 2>&1
heard
echo "# $out"
check "ngtcp2's Initial names quic.example.test (TLS 1.3)" jq -e \
	'.result == "ok" and .sni == "quic.example.test" and .max_version == "0x0304"' <<<"$out"

echo "# Chromium forced to QUIC"
listen 443 25
mkdir -p "$T/chrome"
ip netns exec "$NS" timeout 25 env HOME="$T/chrome" chromium --headless=new --no-sandbox \
	--disable-gpu --no-first-run --disable-background-networking --disable-component-update \
	--disable-sync --user-data-dir="$T/chrome/ud" --enable-quic \
	--origin-to-force-quic-on=quic.example.test:443 \
	--host-resolver-rules="MAP quic.example.test 127.0.0.1" \
	--dump-dom https://quic.example.test/ >"$T/chrome.out" 2>&1
heard
echo "# $out"
check "Chromium's Initials name quic.example.test" jq -e \
	'.result == "ok" and .sni == "quic.example.test"' <<<"$out"
echo "# Chromium's ClientHello took $(jq -r .packets <<<"$out") Initial packets in $(jq -r \
	.datagrams <<<"$out") datagrams (ECH extension: $(jq -r .ech <<<"$out"))"

lab_finish
