#!/bin/sh
# capture.sh - regenerate the captured client messages in this folder with real
# clients (curl, openssl s_client, dig) talking to a loopback listener only.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
port=${PORT:-47311}

# cap NAME tcp|udp -- CLIENT ARGS...: run the listener, then the client
cap() {
	name=$1 kind=$2
	shift 3
	fifo=$(mktemp -u)
	mkfifo "$fifo"
	python3 "$here/capture.py" "$kind" "$port" "$here/$name" 1.0 >"$fifo" &
	lpid=$!
	read -r _ <"$fifo"
	rm -f "$fifo"
	"$@" >/dev/null 2>&1 </dev/null || true
	wait "$lpid"
	echo "$name: $(wc -c <"$here/$name") bytes"
}

r="--resolve allowed.test:$port:127.0.0.1"
cap tls12-curl.bin tcp -- curl -sk --max-time 3 --tlsv1.2 --tls-max 1.2 $r https://allowed.test:$port/
cap tls13-curl.bin tcp -- curl -sk --max-time 3 --tlsv1.3 $r https://allowed.test:$port/
cap tls12-openssl.bin tcp -- timeout 3 openssl s_client -tls1_2 -connect 127.0.0.1:$port -servername allowed.test
cap tls13-openssl.bin tcp -- timeout 3 openssl s_client -tls1_3 -connect 127.0.0.1:$port -servername Allowed.Test
cap tls13-openssl-nosni.bin tcp -- timeout 3 openssl s_client -tls1_3 -connect 127.0.0.1:$port -noservername
alpn=$(python3 -c "print(','.join('proto-number-%02d-xxxxxxxxxxxxxxxx' % i for i in range(24)))")
# a ClientHello over 1 KiB sent in 512-byte records: the multi-record case
cap tls13-openssl-frag.bin tcp -- timeout 3 openssl s_client -tls1_3 -max_send_frag 512 -alpn "$alpn" -connect 127.0.0.1:$port -servername allowed.test
# Chromium (Debian's): GREASE Encrypted Client Hello (0xfe0d) with the real name as outer SNI
ud=$(mktemp -d)
cap tls13-chromium-ech.bin tcp -- timeout 20 chromium --headless=new --no-sandbox --disable-gpu \
	--no-first-run --disable-background-networking --disable-component-update --disable-sync \
	--user-data-dir="$ud" --host-resolver-rules="MAP allowed.test 127.0.0.1" \
	--dump-dom "https://allowed.test:$port/"
rm -rf "$ud"
cap http11-curl.bin tcp -- curl -s --max-time 3 $r http://allowed.test:$port/path?q=1
cap http10-curl.bin tcp -- curl -s --max-time 3 -0 -H Host: http://127.0.0.1:$port/
cap http-proxy-abs.bin tcp -- curl -s --max-time 3 -x http://127.0.0.1:$port http://allowed.test/x
cap http-connect.bin tcp -- curl -s --max-time 3 -p -x http://127.0.0.1:$port https://allowed.test/
cap dns-query-edns.bin udp -- dig +tries=1 +time=1 @127.0.0.1 -p $port allowed.test A
cap dns-query-noedns.bin udp -- dig +tries=1 +time=1 +noedns @127.0.0.1 -p $port allowed.test AAAA
cap dns-query-https.bin udp -- dig +tries=1 +time=1 +nocookie @127.0.0.1 -p $port allowed.test HTTPS

# a real response: dnsmasq answering from its own config only, on loopback
dport=$((port + 1))
pidf=$(mktemp)
dnsmasq --keep-in-foreground --no-resolv --no-hosts --no-daemon --port="$dport" \
	--listen-address=127.0.0.1 --bind-interfaces --pid-file="$pidf" \
	--host-record=allowed.test,203.0.113.10,2001:db8::10 --address=/invalid/ \
	--cname=www.allowed.test,allowed.test --user="$(id -un)" >/dev/null 2>&1 &
dpid=$!
sleep 0.5
dig +tries=1 +time=1 @127.0.0.1 -p "$dport" allowed.test A >/dev/null 2>&1 || true
python3 - "$dport" "$here" <<'PY'
import socket, sys
port, here = int(sys.argv[1]), sys.argv[2]
def ask(name, qtype, edns, out):
    q = bytearray(b"\x4a\x21\x01\x00\x00\x01\x00\x00\x00\x00" + (b"\x00\x01" if edns else b"\x00\x00"))
    for l in name.split("."):
        q += bytes([len(l)]) + l.encode()
    q += b"\x00" + qtype.to_bytes(2, "big") + b"\x00\x01"
    if edns:
        q += b"\x00\x00\x29\x04\xd0\x00\x00\x00\x00\x00\x00"
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2)
    s.sendto(bytes(q), ("127.0.0.1", port))
    data, _ = s.recvfrom(65536)
    open(f"{here}/{out}", "wb").write(data)
    print(f"{out}: {len(data)} bytes")
ask("allowed.test", 1, True, "dns-resp-a.bin")
ask("allowed.test", 28, False, "dns-resp-aaaa.bin")
ask("www.allowed.test", 1, True, "dns-resp-cname.bin")
ask("nothere.invalid", 1, True, "dns-resp-nx.bin")
PY
kill "$dpid" 2>/dev/null || true
wait "$dpid" 2>/dev/null || true
rm -f "$pidf"
