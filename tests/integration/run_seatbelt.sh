#!/usr/bin/env bash
# run_seatbelt.sh - `warden run` of macOS (run/mode_seatbelt.c over run/proxyrun.c), run on Linux
# in the lab as the test-only warden-seatbelt (the launcher built with WARDEN_PROXY_RUN, as on a
# Mac): the policy, run.start, the proxy-mode gateway (gateway/main_proxy.c, warden-gateway-proxy)
# started by warden with its listener handed in, the Seatbelt profile checked and handed to
# sandbox-exec, the proxy variables, the watchdog, run.exit, everything undone.
#
# What this CANNOT show: Seatbelt itself. Linux has no sandbox-exec; the stand-in here checks
# that it got `-f PROFILE -- COMMAND...`, that the profile starts `(version 1)` `(deny default)`
# and allows the network only to the run's proxy port, records what it was given and then runs
# the command UNCONFINED. The loopback-only network namespace warden runs in stands in for the
# profile's `(deny network*)`: the program reaches nothing but the proxy on 127.0.0.1 there. The
# gateway runs in lab-host (through a wrapper that enters it), so it reaches the lab's DNS and
# servers, with its listener made by warden in the loopback-only namespace. docs/platforms.md.
set -u
. "$(dirname "$0")/gateway/fixture.sh"
lab_require_root
B=${WARDEN_BUILD_DIR:-$SRC/build}
WS=$B/launcher/warden-seatbelt
GWP=$B/gateway/warden-gateway-proxy
for tool in jq nsenter pgrep curl; do
	command -v "$tool" >/dev/null || { echo "SKIP: missing $tool"; exit 77; }
done
[[ -x $WS ]] || { echo "SKIP: $WS not built"; exit 77; }
[[ -x $GWP ]] || { echo "SKIP: $GWP not built"; exit 77; }
lab_up

T=$LAB_DIR/sb
mkdir -p "$T/tmp"
CLI=wdsb$$
AUDIT=$T/audit.jsonl
ip netns add "$CLI" || { echo "FAIL - netns $CLI"; exit 1; }
lab_on_exit ip netns delete "$CLI"
ip -n "$CLI" link set lo up

# the gateway: warden's child, moved into lab-host by nsenter (exec: the same pid), descriptor 3
# (the listener warden made in $CLI) kept
cat >"$T/gateway" <<EOF
#!/bin/bash
exec nsenter --net=/run/netns/$LAB_HOST_NS "$GWP" "\$@"
EOF
# the sandbox-exec stand-in (it sandboxes nothing: see above)
cat >"$T/sandbox-exec" <<EOF
#!/bin/bash
bad() { echo "sandbox-exec stand-in: \$*" >&2; exit 71; }
[[ \${1:-} == -f && -f \${2:-} && \${3:-} == -- && -n \${4:-} ]] ||
	bad "wanted -f PROFILE -- COMMAND..., got: \$*"
prof=\$2
shift 3
port=\${HTTP_PROXY##*:}
[[ \$(grep -v '^;' "\$prof" | grep -v '^\$' | head -n 2 | tr '\n' ' ') == "(version 1) (deny default) " ]] ||
	bad "the profile does not start (version 1) (deny default)"
[[ \$(grep -c '(allow network' "\$prof") == 1 ]] &&
	grep -qxF "(allow network-outbound (remote ip \"localhost:\$port\"))" "\$prof" ||
	bad "the profile's network is not only localhost:\$port"
grep -qF "\$TMPDIR" "\$prof" || bad "the profile does not grant TMPDIR \$TMPDIR"
cp "\$prof" "$T/last-profile.sb"
printf '%s\n' "\$*" >"$T/last-argv"
exec "\$@"
EOF
chmod 0755 "$T/gateway" "$T/sandbox-exec"

cat >"$T/policy.yaml" <<EOF
version: 1
network:
  allow:
    - { host: allowed.test, ports: [80, 443] }
env:
  allow: [KEEP]
  set: { SETBY: policy }
EOF
cat >"$T/gateway.yaml" <<EOF
version: 1
resolvers: ["$LAB_DNS_V4"]
limits: {peek_timeout_ms: 1500, connect_timeout_ms: 2000}
EOF
# a line:col error: `allw` is not a key of network
printf 'version: 1\nnetwork:\n  allw: [allowed.test]\n' >"$T/bad.yaml"

# ws ARGS...: warden-seatbelt run in the loopback-only namespace
WSRUN=(ip netns exec "$CLI" env TMPDIR="$T/tmp" WARDEN_GATEWAY_BIN="$T/gateway" WARDEN_AUDIT_KEY="$T/audit-key.pem"
	WARDEN_SANDBOX_EXEC="$T/sandbox-exec" KEEP=kept DROP=dropped
	"$WS" run -q --config "$T/gateway.yaml" --audit-log "$AUDIT")
ws() { "${WSRUN[@]}" "$@"; }
wsp() { ws -p "$T/policy.yaml" "$@"; }
# nothing of a run left: its folder, its gateway
nothing_left()
{
	[[ -z $(ls -A "$T/tmp") ]] || { echo "left in $T/tmp: $(ls -A "$T/tmp")"; return 1; }
	! pgrep -f "$T/tmp/" >/dev/null || { echo "left running: $(pgrep -af "$T/tmp/")"; return 1; }
}
C=(curl -sS --max-time 10 --cacert "$LAB_CA")

# --- the network: only the proxy, allowed and denied beside each other ----------------------
check_eq "HTTPS_PROXY: https://allowed.test/ is served" "hello from allowed.test" \
	wsp -- "${C[@]}" https://allowed.test/
check_fails --denied 56 "HTTPS_PROXY: https://other.test/ is refused (CONNECT 403)" \
	wsp -- "${C[@]}" https://other.test/
check_eq "http_proxy (absolute form): http://allowed.test/ is served" "hello from allowed.test" \
	wsp -- "${C[@]}" http://allowed.test/
OUT=$(wsp -- "${C[@]}" -i http://other.test/ 2>&1)
check "http_proxy: http://other.test/ gets a 403 with a denial id" \
	bash -c '[[ $0 == "HTTP/1.1 403"* && $0 =~ dn-[0-9a-f]{12} ]]' "$OUT"
DN=$(grep -oE 'dn-[0-9a-f]{12}' <<<"$OUT" | head -n 1)
check "that denial id is in the audit log, for other.test" \
	audit_has ".action == \"net.connect\" and .allowed == false and .denial_id == \"$DN\" and .resource == \"other.test\""
NOHTTP=(env -u HTTPS_PROXY -u https_proxy -u HTTP_PROXY -u http_proxy)
check_eq "ALL_PROXY=socks5h alone: https://allowed.test/ is served" "hello from allowed.test" \
	wsp -- "${NOHTTP[@]}" "${C[@]}" https://allowed.test/
check_fails --denied 97 "ALL_PROXY=socks5h alone: https://other.test/ is refused" \
	wsp -- "${NOHTTP[@]}" "${C[@]}" https://other.test/
check_eq "positive control: lab-host reaches http://allowed.test/ without a proxy" \
	"hello from allowed.test" in_host "${C[@]}" --noproxy '*' http://allowed.test/
check_fails --denied 6,7 "the program without the proxy reaches nothing (loopback-only namespace)" \
	wsp -- "${C[@]}" --noproxy '*' http://allowed.test/
check "every allowed connection of these runs is attributed to a run" \
	jq -e -s '[.[] | select(.action == "net.connect" and .allowed)] | length > 0 and
		all(.run | test("^[0-9a-f]{12}$"))' "$AUDIT"
check "nothing is left after those runs" nothing_left

# --- the environment and the profile -------------------------------------------------------
ENVOUT=$(wsp -- env 2>&1)
for want in "HTTP_PROXY=http://127.0.0.1:" "HTTPS_PROXY=http://127.0.0.1:" "http_proxy=http://127.0.0.1:" \
	"https_proxy=http://127.0.0.1:" "ALL_PROXY=socks5h://127.0.0.1:" "all_proxy=socks5h://127.0.0.1:" \
	"NO_PROXY=" "no_proxy=" "NODE_USE_ENV_PROXY=1" "KEEP=kept" "SETBY=policy"; do
	check "the program's environment has $want" bash -c 'grep -q "^$1" <<<"$0"' "$ENVOUT" "$want"
done
check "... and HOME, TMPDIR the run's tmp folder" bash -c 'grep -q "^TMPDIR=$1/warden-run-.*/tmp$" <<<"$0" &&
	grep -q "^HOME=$1/warden-run-.*/tmp$" <<<"$0"' "$ENVOUT" "$T/tmp"
check_fails --denied 1 "... and not DROP (not in env.allow)" bash -c 'grep -q "^DROP=" <<<"$0"' "$ENVOUT"
check "NO_PROXY is empty" bash -c 'grep -qx "NO_PROXY=" <<<"$0"' "$ENVOUT"
check_eq "sandbox-exec got -f PROFILE -- and the command's full path" "$(command -v env)" \
	bash -c 'cut -d" " -f1 "$0"' "$T/last-argv"
check "the profile allows the run's tmp folder, written" \
	bash -c 'grep "file-write" "$0" | grep -qF "(subpath \"$1/warden-run-"' "$T/last-profile.sb" "$T/tmp"

# a descriptor warden was given (9) does not reach the program; its stdio does (the control)
lsfd() { ws -- sh -c 'ls /proc/$$/fd' 9>"$T/leak"; }
check "the program has warden's stdio (fd 2)" lab_match '^2$' lsfd
check "... and not the descriptor 9 warden had" lab_no_match '^9$' lsfd

# --- exit statuses and run.start / run.exit --------------------------------------------------
ID1=aaaa00000001
ws --run-id "$ID1" -- sh -c 'exit 7'
check_eq "the program's exit status is warden's (7)" 7 echo $?
check "run.start is in the audit log with the command" \
	audit_has ".run == \"$ID1\" and .action == \"run.start\" and .command[1:] == [\"-c\",\"exit 7\"]"
check "run.exit is in the audit log with exit 7" \
	audit_has ".run == \"$ID1\" and .action == \"run.exit\" and .exit == 7"
check "run.start says seatbelt and proxy mode" \
	audit_has ".run == \"$ID1\" and .action == \"run.start\" and (.isolation | test(\"seatbelt\")) and (.isolation | test(\"proxy mode\"))"
# the audit as Linux writes it (run/proxyaudit.c): the policy's hash, the chain, run.exit signed
wsp --run-id aaaa00000011 -- true
PH="sha256:$(sha256sum <"$T/policy.yaml" | cut -d' ' -f1)"
check "run.start carries the policy file's SHA-256 (sha256sum's)" \
	audit_has ".run == \"aaaa00000011\" and .action == \"run.start\" and .policy_hash == \"$PH\""
check "run.exit too, signed with the key made 0600 (its root, events, key id, sig)" \
	audit_has ".run == \"aaaa00000011\" and .action == \"run.exit\" and .policy_hash == \"$PH\" and (.root | startswith(\"sha256:\")) and .events >= 2 and (.key | startswith(\"ed25519:\")) and (.sig | length) > 80"
check_eq "the signing key is 0600" 600 stat -c %a "$T/audit-key.pem"
check "every line is chained (prev), the gateway's and warden's alike" \
	jq -e -s 'length > 4 and all(.[]; (.prev | type) == "string")' "$AUDIT"
# a verifier needs only the public half (Linux's warden may be another user's: run_as_user.sh)
check "its public half exported (openssl pkey -pubout), readable by anyone" \
	bash -c 'openssl pkey -in "$0/audit-key.pem" -pubout -out "$0/audit-pub.pem" && chmod 0644 "$0/audit-pub.pem"' "$T"
# (a copy: the log is 0600, its writer's, and Linux's warden may be another user: run_as_user.sh)
cp "$AUDIT" "$T/copy.jsonl" && chmod 0644 "$T/copy.jsonl"
check "Linux's warden logs --verify passes (a copy of) the log warden-seatbelt and its gateway wrote" \
	lab_match "OK: .* signed run records verified" "$W" logs --verify --key "$T/audit-pub.pem" "$T/copy.jsonl"
L=$(grep -n '"run":"aaaa00000011","type":"run","action":"run.start"' "$AUDIT" | cut -d: -f1)
sed "${L}s/embedded, proxy mode/embedded, proxy modf/" "$AUDIT" >"$T/edited.jsonl"
check "an edited run.start: the copy differs" bash -c '! cmp -s "$0" "$1"' "$AUDIT" "$T/edited.jsonl"
check "... and warden logs --verify refuses it, at the line after it (exit 1)" \
	bash -c 'out=$("$0" logs --verify --key "$3" "$1" 2>&1); rc=$?; [[ $rc == 1 ]] && grep -qF "edited.jsonl:$(($2 + 1))" <<<"$out" || { echo "exit $rc: $out"; false; }' \
	"$W" "$T/edited.jsonl" "$L" "$T/audit-pub.pem"
# `warden logs` of the macOS path itself (launcher/cmd_logs.c, audit/reader.c, audit/verify.c)
check "warden logs --verify of the macOS path passes the same log" \
	lab_match "OK: .* signed run records verified" "$WS" logs --verify --key "$T/audit-key.pem" "$AUDIT"
check "... and refuses the edited copy (exit 1) at the line after the edit" \
	bash -c 'out=$("$0" logs --verify --key "$3" "$1" 2>&1); rc=$?; [[ $rc == 1 ]] && grep -qF "edited.jsonl:$(($2 + 1))" <<<"$out" || { echo "exit $rc: $out"; false; }' \
	"$WS" "$T/edited.jsonl" "$L" "$T/audit-key.pem"
check "warden logs --run shows the run's run.start and its run.exit (exit 0)" \
	bash -c 'out=$("$0" logs --audit-log "$1" --run aaaa00000011 2>&1) && grep -q "run\.start" <<<"$out" && grep -q "run\.exit .*exit 0" <<<"$out" || { echo "$out"; false; }' \
	"$WS" "$AUDIT"
check "warden logs --denied --json lists other.test's denial with its id" \
	bash -c '"$0" logs --audit-log "$1" --denied --json | jq -e -s "any(.[]; .resource == \"other.test\" and .denial_id == \"$2\")" >/dev/null' \
	"$WS" "$AUDIT" "$DN"
ID2=aaaa00000002
ws --run-id "$ID2" -- sh -c 'kill -TERM $$'
check_eq "a program killed by SIGTERM: 128+15" 143 echo $?
check "run.exit says signal 15" audit_has ".run == \"$ID2\" and .action == \"run.exit\" and .exit == 143 and .signal == 15"
ws -- /nonexistent/program 2>"$T/err"
check_eq "a command that is not there: 127" 127 echo $?
check "nothing is left" nothing_left

# the run's folder goes with what the program left in it, and only that: a tree of folders and
# a link to a folder outside it (its file must stay: the link itself is what goes)
mkdir -p "$T/outside" && echo keep >"$T/outside/canary"
ws -- sh -c 'cd "$TMPDIR" && mkdir -p a/b/c/d && echo x >a/b/c/d/f && echo y >a/g &&
	ln -s "$0" a/b/out && ln -s "$0/canary" a/link' "$T/outside"
check_eq "a program that leaves a tree and links in its tmp folder exits 0" 0 echo $?
check "... the run's folder is gone with all of it" nothing_left
check "... and the folder the links pointed at keeps its file (the control: it was there)" \
	grep -qx keep "$T/outside/canary"

# --- the wall-time watchdog ------------------------------------------------------------------
ID3=aaaa00000003
ws --run-id "$ID3" --timeout 1 -- sh -c "echo \$\$ >$T/sleep.pid; exec sleep 60"
check_eq "the watchdog ends the run: 124" 124 echo $?
SLEEP=$(cat "$T/sleep.pid" 2>/dev/null)
check "the sleep had started (pid $SLEEP)" test -n "$SLEEP"
check "... and is gone" bash -c '! kill -0 "$0" 2>/dev/null' "${SLEEP:-0}"
check "limit.time and run.exit 124 in the audit log" \
	audit_has ".run == \"$ID3\" and .action == \"limit.time\""
check "run.exit 124" audit_has ".run == \"$ID3\" and .action == \"run.exit\" and .exit == 124"

# --- limits: what maps to an rlimit is set, what cannot hold is refused -------------------------
printf 'version: 1\nlimits: {disk_mb: 1}\n' >"$T/disk.yaml"
printf 'version: 1\nlimits: {memory_mb: 512}\n' >"$T/mem.yaml"
check "limits.disk_mb 1: a 512 KiB file is written" \
	ws -p "$T/disk.yaml" -- sh -c 'head -c 524288 /dev/zero >"$TMPDIR/a"'
check_fails "... a 2 MiB file is not (RLIMIT_FSIZE)" \
	ws -p "$T/disk.yaml" -- sh -c 'head -c 2097152 /dev/zero >"$TMPDIR/b"'
# limits.memory_mb: the process group's memory sampled (no cgroups on macOS); the same program
# under a limit it fits in is the control
printf 'version: 1\nlimits: {memory_mb: 64}\n' >"$T/mem64.yaml"
MEMPROG='import time; b = b"x" * (int(__import__("sys").argv[1]) << 20); time.sleep(3); print("held")'
OUT=$(ws -p "$T/mem.yaml" -- python3 -c "$MEMPROG" 100 2>"$T/err")
check_eq "limits.memory_mb 512: a program that holds 100 MiB runs to its end (exit 0)" "0 held" \
	echo "$? $OUT"
ID4=aaaa00000004
OUT=$(ws -p "$T/mem64.yaml" --run-id "$ID4" -- sh -c "echo \$\$ >$T/mem.pid; exec python3 -c '$MEMPROG' 200" 2>"$T/err")
check_eq "limits.memory_mb 64: the same program holding 200 MiB is killed (137)" 137 echo $?
check "... it never got to its end" test -z "$OUT"
check "... warden says the memory limit was reached" grep -q "memory limit of 64 MiB reached" "$T/err"
MEMPID=$(cat "$T/mem.pid" 2>/dev/null)
check "... its process is gone" bash -c '[[ -n $0 ]] && ! kill -0 "$0" 2>/dev/null' "$MEMPID"
check "limit.memory in the audit log: limit 64 MiB, usage above it" \
	audit_has ".run == \"$ID4\" and .action == \"limit.memory\" and .limit == 67108864 and .usage > 67108864"
check "run.exit 137" audit_has ".run == \"$ID4\" and .action == \"run.exit\" and .exit == 137"
check "run.start says how memory is held" \
	audit_has ".run == \"$ID4\" and .action == \"run.start\" and (.isolation | tostring | test(\"memory 64 MiB .the process group.s, sampled\"))"

# --- a bad policy starts nothing ---------------------------------------------------------------
BEFORE=$(wc -l <"$AUDIT")
ws -p "$T/bad.yaml" -- true 2>"$T/err"
check_eq "a bad policy fails the run: 125" 125 echo $?
check "its error names file:line:col" grep -q "bad.yaml:3:3" "$T/err"
check_eq "no audit line was written" "$BEFORE" bash -c 'wc -l <"$0"' "$AUDIT"
check "no gateway, no folder, no profile left" nothing_left

# --- a profile that cannot be made starts nothing (a grant with a control byte) -----------------
mkdir -p "$T/ctl"$'\x01'"dir"
printf 'version: 1\nfilesystem:\n  read: ["%s/ctl\\x01dir"]\n' "$T" >"$T/ctl.yaml"
BEFORE=$(wc -l <"$AUDIT")
ws -p "$T/ctl.yaml" -- true 2>"$T/err"
check_eq "a profile the renderer refuses fails the run: 125" 125 echo $?
check "... saying why (a control character)" grep -q "profile.*control character" "$T/err"
check_eq "... before run.start" "$BEFORE" bash -c 'wc -l <"$0"' "$AUDIT"
check "... no gateway, no folder, no profile left" nothing_left

# --- what cannot run here is refused -------------------------------------------------------------
ws --backend linux -- true 2>"$T/err"
check_eq "--backend linux on the macOS path: 125" 125 echo $?
check "... saying why" grep -q "cannot run on macOS" "$T/err"
"$WS" nft render >/dev/null 2>"$T/err"
check_eq "a Linux-only verb refuses: 2" 2 echo $?
check "... not available on macOS" grep -q "not available on macOS" "$T/err"
in_host "$W" run --backend seatbelt -- /bin/true 2>"$T/err"
check_eq "Linux's warden run --backend seatbelt fails closed: 125" 125 echo $?
check "... macOS only" grep -qi "macos" "$T/err"

# --- SIGTERM to warden leaves nothing behind ---------------------------------------------------
ID4=aaaa00000004
rm -f "$T/sleep.pid"
# not through ws(): $! must be warden's own pid (ip netns exec and env exec it)
"${WSRUN[@]}" --run-id "$ID4" -- sh -c "echo \$\$ >$T/sleep.pid; exec sleep 60" &
WPID=$!
lab_wait 10 test -s "$T/sleep.pid"
SLEEP=$(cat "$T/sleep.pid" 2>/dev/null)
GWPID=$(pgrep -f "$T/tmp/.*/gateway.yaml" | head -n 1)
check_eq "warden is the backgrounded process" warden-seatbelt cat "/proc/$WPID/comm"
check "its gateway runs (pid $GWPID)" test -n "$GWPID"
kill -TERM "$WPID"
wait "$WPID"
check_eq "SIGTERM to warden: the program got it (128+15)" 143 echo $?
check "the program is gone" bash -c '! kill -0 "$0" 2>/dev/null' "${SLEEP:-0}"
check "the gateway is gone" bash -c '! kill -0 "$0" 2>/dev/null' "${GWPID:-0}"
check "warden is gone" bash -c '! kill -0 "$0" 2>/dev/null' "$WPID"
check "run.exit 143 was written" audit_has ".run == \"$ID4\" and .action == \"run.exit\" and .exit == 143"
check "nothing is left" nothing_left
lab_finish
