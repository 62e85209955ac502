#!/usr/bin/env bash
# run_chromium.sh - a real headless Chromium (Debian's) under `warden run` in the lab. Chromium
# sends a GREASE Encrypted Client Hello extension in every ClientHello; the gateway decides on
# the outer SNI: an allowed name loads (transparently and through the proxy port's CONNECT),
# with "ech": true in its audit events; a denied name does not; an outer SNI that disagrees
# with the name bound to the address is fronting; a hello with ECH and no outer SNI is denied.
# The lab CA is trusted through the NSS database in $HOME/.pki/nssdb (certutil), HOME being a
# folder the policy grants for writing.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
for tool in chromium certutil /usr/bin/python3; do
	command -v "$tool" >/dev/null || { echo "SKIP: missing $tool"; exit 77; }
done
lab_up

T=$(lab_tmpdir wd-run-chromium)
lab_on_exit rm -rf "$T"
[[ -n ${KEEP:-} ]] && lab_on_exit cp -r "$T" /tmp/chr-keep
chmod 0755 "$T"
A=$T/audit.jsonl
export WARDEN_GATEWAY_BIN=$GW
# the program may run as another user than root: its home is writable by anyone
H=$T/home
mkdir -p "$H/.pki/nssdb"
certutil -d "sql:$H/.pki/nssdb" -N --empty-password &&
	certutil -d "sql:$H/.pki/nssdb" -A -t "C,," -n warden-lab-ca -i "$LAB_CA" ||
	{ echo "FAIL - cannot make the NSS database"; exit 1; }
for i in $(seq 8); do mkdir -p "$H/u$i" && cp -r "$H/.pki" "$H/u$i/"; done
chmod -R a+rwX "$H"
cat >"$T/p.yaml" <<EOF
version: 1
filesystem:
  read: ["/etc/chromium.d", "/etc/chromium", "/etc/fonts"]
  write: ["$H"]
network:
  allow:
    - {host: allowed.test, ports: [443]}
EOF

# chrome URL [FLAGS...]: the DOM Chromium loaded for URL, run under warden run; a FLAG
# "--proxy-server=RUN" names the run's own proxy port (its HTTPS_PROXY)
n=0
chrome()
{
	local url=$1
	shift
	n=$((n + 1))
	ip netns exec "$LAB_HOST_NS" "$W" run -q --audit-log "$A" -p "$T/p.yaml" -- \
		sh -c 'url=$1; shift; for a; do shift; [ "$a" = --proxy-server=RUN ] &&
			a=--proxy-server=$HTTPS_PROXY; set -- "$@" "$a"; done
		exec env HOME="$0" chromium --headless=new --no-sandbox --disable-gpu \
		--no-first-run --disable-background-networking --disable-component-update \
		--disable-sync --user-data-dir="$0/ud" "$@" --dump-dom "$url"' \
		"$H/u$n" "$url" "$@" 2>"$T/chrome$n.err"
}
has() { jq -e -s "[.[] | select($1)] | length > 0" "$A" >/dev/null; }

echo "# Chromium, transparent (no proxy)"
out=$(chrome https://allowed.test/ --no-proxy-server)
check "an allowed name loads its page" grep -q "hello from allowed.test" <<<"$out"
check "... decided on the outer SNI, audited with \"ech\": true" has \
	'.action == "net.connect" and .allowed and .sni == "allowed.test" and .proto == "tls" and .ech == true'
check "... and its close too" has '.action == "net.close" and .sni == "allowed.test" and .ech == true'
out=$(chrome https://other.test/ --no-proxy-server)
check_fails "a denied name does not load" grep -q "hello from" <<<"$out"
check "... denied in the audit log" has '.allowed == false and .resource == "other.test"'
out=$(chrome https://other.test/ --no-proxy-server --host-resolver-rules="MAP other.test allowed.test")
check_fails "outer SNI other.test on allowed.test's address does not load" grep -q "hello from" <<<"$out"
check "... denied as fronting, with \"ech\": true" has \
	'.action == "net.connect" and .allowed == false and .sni == "other.test" and .ech == true and (.reason | test("domain fronting"))'

echo "# Chromium through the proxy port (CONNECT)"
out=$(chrome https://allowed.test/ --proxy-server=RUN)
check "an allowed name loads its page through CONNECT" grep -q "hello from allowed.test" <<<"$out"
last_run() { jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$A"; }
# the tunnel's event names what its first bytes were (tls), like a transparent connection's
check "... the tunnel's ClientHello audited with \"ech\": true" has \
	".run == \"$(last_run)\" and .action == \"net.connect\" and .allowed and .sni == \"allowed.test\" and .ech == true"
check "... and Chromium did use the proxy port in that run" has \
	".run == \"$(last_run)\" and (.proto == \"connect\" or .proto == \"proxy-http\")"
out=$(chrome https://other.test/ --proxy-server=RUN)
check_fails "a denied name does not load through CONNECT" grep -q "hello from" <<<"$out"
check "... the CONNECT was denied" has \
	'.action == "net.connect" and .allowed == false and .proto == "connect" and .host == "other.test"'

echo "# a ClientHello with ECH and no outer server name"
HELLO=$SRC/tests/proto/captures/tls13-chromium-ech.bin
cat >"$T/hello.py" <<'EOF'
import socket, sys
data = open(sys.argv[1], "rb").read()
if sys.argv[3] == "nosni":
    # drop the server_name extension from the record, fixing the lengths
    body = bytearray(data[5:])
    i = 4 + 2 + 32
    i += 1 + body[i]
    i += 2 + int.from_bytes(body[i:i + 2], "big")
    i += 1 + body[i]
    ext_at = i
    end = i + 2 + int.from_bytes(body[i:i + 2], "big")
    i += 2
    exts = b""
    while i < end:
        t = int.from_bytes(body[i:i + 2], "big")
        l = int.from_bytes(body[i + 2:i + 4], "big")
        if t != 0:
            exts += body[i:i + 4 + l]
        i += 4 + l
    body = body[:ext_at] + len(exts).to_bytes(2, "big") + exts
    body[1:4] = (len(body) - 4).to_bytes(3, "big")
    data = data[:3] + len(body).to_bytes(2, "big") + bytes(body)
s = socket.create_connection((sys.argv[2], 443), timeout=5)
s.sendall(data)
try:
    b = s.recv(5)
except OSError:
    b = b""
print({0x16: "handshake", 0x15: "alert"}.get(b[0] if b else -1, "nothing"))
EOF
hello() {
	ip netns exec "$LAB_HOST_NS" "$W" run -q --audit-log "$A" -p "$T/p.yaml" -- \
		/usr/bin/python3 -c 'import socket,subprocess,sys
a = socket.getaddrinfo("allowed.test", 443, socket.AF_INET)[0][4][0]
sys.exit(subprocess.call(["/usr/bin/python3", sys.argv[1], sys.argv[2], a, sys.argv[3]]))' \
		"$T/hello.py" "$HELLO" "$1"
}
chmod a+r "$T/hello.py"
cp "$HELLO" "$T/hello.bin" && chmod a+r "$T/hello.bin" && HELLO=$T/hello.bin
sed -i "s|read: \[|read: [\"$T/hello.py\", \"$T/hello.bin\", |" "$T/p.yaml"
check_eq "the captured Chromium hello (ECH, outer SNI allowed.test) gets the server's answer" \
	handshake hello sni
check_eq "the same hello without its server_name gets an alert" alert hello nosni
check "... audited as ECH without an outer name" has \
	'.action == "net.connect" and .allowed == false and .ech == true and (.reason | test("Encrypted Client Hello without an outer server name"))'

check "the background teardowns finish" lab_wait 20 lab_teardowns_quiet "$A"
lab_finish
