#!/usr/bin/env bash
# gateway_proxy_only.sh - gateway/main_proxy.c, the warden-gateway of macOS (proxy mode only, one
# process as the invoking user, no privileged parent), run on Linux in the lab as
# warden-gateway-proxy: the same file and the same start.c path a Mac runs. What it refuses (no
# --config, a transparent-mode configuration, the Linux gateway's options); then, started as an
# unprivileged user with its two loopback listeners handed in (--listen-fds 2, made in a client
# namespace that has nothing but loopback, as gateway_proxy_mode.sh does): one process, that
# user's; a run registered by its own ctl client; curl through HTTPS_PROXY, http_proxy and
# socks5h reaches allowed.test and is refused other.test, the 403's denial id is the audit's;
# SIGTERM stops it and its control socket is gone. Then `--run FILE` (how warden.exe registers
# its run on Windows, where there is no control channel): a file that is not a register request
# and a run with an invalid policy start nothing; a gateway started with a good one serves that
# run with no ctl call (allowed and refused side by side, run.gateway-register audited).
# docs/platforms.md.
set -u
. "$(dirname "$0")/gateway/fixture.sh"
lab_require_root
GWP=${WARDEN_BUILD_DIR:-$SRC/build}/gateway/warden-gateway-proxy
for tool in jq setpriv pgrep; do
	command -v "$tool" >/dev/null || { echo "SKIP: missing $tool"; exit 77; }
done
[[ -x $GWP ]] || { echo "SKIP: $GWP not built"; exit 77; }
PY=/usr/bin/python3
lab_user || { echo "FAIL - no unprivileged test user"; exit 1; }
lab_up

T=$LAB_DIR/po
install -d -m 0755 -o "$LAB_USER_UID" -g "$LAB_USER_GID" "$T"
CLI=wdpo-cli$$
GWSOCK=$T/gw.sock
AUDIT=$T/audit.jsonl
CONF=$T/gateway.yaml
RUNID=po-run$$
ip netns add "$CLI" || { echo "FAIL - netns $CLI"; exit 1; }
lab_on_exit ip netns delete "$CLI"
ip -n "$CLI" link set lo up
in_cli() { ip netns exec "$CLI" "$@"; }
# as the test user, in lab-host
as_gw_user() { in_host setpriv --reuid="$LAB_USER_UID" --regid="$LAB_USER_GID" --clear-groups "$@"; }

cat >"$T/policy.yaml" <<EOF
version: 1
network:
  allow:
    - { host: allowed.test, ports: [80, 443] }
EOF
cat >"$CONF" <<EOF
version: 1
mode: proxy
resolvers: ["$LAB_DNS_V4"]
control: {path: "$GWSOCK"}
audit: {path: "$AUDIT"}
limits: {peek_timeout_ms: 1500, connect_timeout_ms: 2000}
EOF
printf 'version: 1\ncontrol: {path: "%s/t.sock"}\n' "$T" >"$T/transparent.yaml"
chown "$LAB_USER_UID:$LAB_USER_GID" "$T"/*.yaml

# --- what it refuses -----------------------------------------------------------------------
OUT=$("$GWP" 2>&1)
RC=$?
check "without --config it refuses to start (exit 2)" \
	bash -c '[[ $0 == 2 && $1 == *"--config FILE is needed"* ]]' "$RC" "$OUT"
OUT=$("$GWP" --config "$T/transparent.yaml" 2>&1)
RC=$?
check "a transparent-mode configuration is refused (exit 2, proxy mode only)" \
	bash -c '[[ $0 == 2 && $1 == *"serves proxy mode only (set \`mode: proxy\`"* ]]' "$RC" "$OUT"
check "... and made no control socket" test ! -e "$T/t.sock"
for opt in --manage-nft --no-privsep "--user nobody" "--worker /bin/true" --no-nflog; do
	# shellcheck disable=SC2086 # the option and its value
	OUT=$("$GWP" --config "$CONF" $opt 2>&1)
	RC=$?
	check "$opt is refused by name (exit 2)" \
		bash -c '[[ $0 == 2 && $1 == *"--${2%% *}: this warden-gateway serves proxy mode only"* ]]' \
		"$RC" "$OUT" "${opt#--}"
done

# --- the client namespace has no network of its own ------------------------------------------
check_fails --denied 7 "without the proxy, curl in the client namespace reaches nothing" \
	in_cli curl -sS --max-time 5 --noproxy '*' http://203.0.113.10/

# --- started as the test user, listeners handed in -------------------------------------------
lab_spawn host gw "$PY" "$SRC/tests/integration/gateway/proxy_listen.py" "/run/netns/$CLI" 15080 \
	"$(command -v setpriv)" --reuid="$LAB_USER_UID" --regid="$LAB_USER_GID" --clear-groups \
	"$GWP" --config "$CONF" --listen-fds 2
GW_PID=$LAB_SPAWNED_PID
if ! lab_wait 10 test -S "$GWSOCK"; then
	echo "FAIL - the proxy-only gateway did not start"
	cat "$LAB_DIR/log/host-gw.log"
	exit 1
fi
check "it says it serves in proxy mode" lab_match "serving: proxy mode" cat "$LAB_DIR/log/host-gw.log"
check_eq "it runs as the test user (uid $LAB_USER_UID)" "$LAB_USER_UID" \
	bash -c 'ps -o uid= -p "$0" | tr -d " "' "$GW_PID"
check_eq "one process: no privileged parent, no worker child" "" pgrep -P "$GW_PID"
check_eq "its audit log is the test user's" "$LAB_USER_UID" stat -c %u "$AUDIT"

gw_ctl() { as_gw_user "$GWP" ctl --socket "$GWSOCK" "$@"; }
check "its ctl client registers one run with loopback addresses" \
	gw_ctl register --id "$RUNID" --if lo --host-v4 127.0.0.1 --sandbox-v4 127.0.0.1 \
	--host-v6 ::1 --sandbox-v6 ::1 --policy "$T/policy.yaml"
check "ctl list shows it" lab_match "\"$RUNID\"" gw_ctl list

P4=http://127.0.0.1:15080
pcurl()
{
	local v=$1
	shift
	in_cli env -u http_proxy -u https_proxy -u HTTP_PROXY -u HTTPS_PROXY -u ALL_PROXY \
		-u all_proxy -u NO_PROXY -u no_proxy "$v" curl -sS --max-time 10 --cacert "$LAB_CA" "$@"
}
check_eq "HTTPS_PROXY: https://allowed.test/" "hello from allowed.test" \
	pcurl HTTPS_PROXY=$P4 https://allowed.test/
check_fails --denied 56 "HTTPS_PROXY: https://other.test/ is refused (CONNECT 403)" \
	pcurl HTTPS_PROXY=$P4 https://other.test/
check_eq "http_proxy (absolute form): http://allowed.test/" "hello from allowed.test" \
	pcurl http_proxy=$P4 http://allowed.test/
OUT=$(pcurl http_proxy=$P4 -i http://other.test/ 2>&1)
check "http_proxy: http://other.test/ gets a 403 with a denial id" \
	bash -c '[[ $0 == "HTTP/1.1 403"* && $0 =~ dn-[0-9a-f]{12} ]]' "$OUT"
DN=$(grep -oE 'dn-[0-9a-f]{12}' <<<"$OUT" | head -n 1)
check "that denial id is the audit's, for other.test" \
	audit_has ".action == \"net.connect\" and .allowed == false and .denial_id == \"$DN\" and .resource == \"other.test\""
check_eq "ALL_PROXY=socks5h: https://allowed.test/" "hello from allowed.test" \
	pcurl ALL_PROXY=socks5h://127.0.0.1:15080 https://allowed.test/
check_fails --denied 97 "ALL_PROXY=socks5h: https://other.test/ is refused" \
	pcurl ALL_PROXY=socks5h://127.0.0.1:15080 https://other.test/
check "every allowed connection is the run's" \
	jq -e -s --arg r "$RUNID" '[.[] | select(.action == "net.connect" and .allowed)] |
		length > 0 and all(.run == $r)' "$AUDIT"

check "SIGTERM stops it" gw_stop
check "its control socket is gone" test ! -e "$GWSOCK"

# --- --run FILE: the run registered at start --------------------------------------------------
RUNID2=po-boot$$
regfile() { # ID POLICY-FILE: the register request warden would send, as one JSON object
	jq -cn --arg id "$1" --rawfile p "$2" '{op: "register", id: $id, if: "lo",
		host_v4: "127.0.0.1", sandbox_v4: "127.0.0.1", host_v6: "::1", sandbox_v6: "::1",
		policy_name: "policy.yaml", policy: $p}'
}
regfile "$RUNID2" "$T/policy.yaml" >"$T/run.json"
printf 'version: 1\nnetwork:\n  allow:\n    - { host: allowed.test, ports: [http] }\n' >"$T/bad.yaml"
regfile "$RUNID2" "$T/bad.yaml" >"$T/run-bad.json"
echo '{"op": "list"}' >"$T/run-list.json"
sed 's/^mode: proxy$/mode: proxy\nports: {proxy: 15081}/' "$CONF" >"$T/gateway2.yaml"
echo 'register allowed.test' >"$T/run-text.json"
chown "$LAB_USER_UID:$LAB_USER_GID" "$T"/*.json "$T"/*.yaml
OUT=$(as_gw_user "$GWP" --config "$CONF" --run "$T/run-text.json" 2>&1)
RC=$?
check "--run with a file that is not JSON starts nothing (exit 2)" \
	bash -c '[[ $0 == 2 && $1 == *"not a register request"* ]]' "$RC" "$OUT"
OUT=$(as_gw_user "$GWP" --config "$CONF" --run "$T/run-list.json" 2>&1)
RC=$?
check "--run with a request that is not a register starts nothing (exit 2)" \
	bash -c '[[ $0 == 2 && $1 == *"the request is not a register"* ]]' "$RC" "$OUT"
OUT=$(as_gw_user "$GWP" --config "$CONF" --run "$T/run-bad.json" 2>&1)
RC=$?
check "--run with an invalid policy starts nothing (exit 1, the policy's line:col)" \
	bash -c '[[ $0 == 1 && $1 == *"invalid policy: policy.yaml:4:"* ]]' "$RC" "$OUT"
OUT=$(as_gw_user "$GWP" --config "$CONF" --counts "$T/c.json" 2>&1)
RC=$?
check "--counts without --run starts nothing (exit 2)" \
	bash -c '[[ $0 == 2 && $1 == *"--counts: the counts are the --run run'"'"'s"* ]]' "$RC" "$OUT"
OUT=$(as_gw_user "$GWP" --config "$CONF" --listen-info "$T/x.bin" 2>&1)
RC=$?
check "--listen-info (a Windows socket's protocol information) is refused here (exit 2)" \
	bash -c '[[ $0 == 2 && $1 == *"--listen-info: Windows only"* ]]' "$RC" "$OUT"
OUT=$(as_gw_user "$GWP" --config "$CONF" --ready-event 12 2>&1)
RC=$?
check "--ready-event (an inherited Windows event) is refused here (exit 2)" \
	bash -c '[[ $0 == 2 && $1 == *"--ready-event: Windows only"* ]]' "$RC" "$OUT"
OUT=$(as_gw_user "$GWP" --config "$CONF" --run "$T/missing.json" 2>&1)
RC=$?
check "--run with a missing file starts nothing (exit 2)" \
	bash -c '[[ $0 == 2 && $1 == *"missing.json: No such file"* ]]' "$RC" "$OUT"
check "... and none of them left a control socket" test ! -e "$GWSOCK"
lab_spawn host gw2 "$PY" "$SRC/tests/integration/gateway/proxy_listen.py" "/run/netns/$CLI" 15081 \
	"$(command -v setpriv)" --reuid="$LAB_USER_UID" --regid="$LAB_USER_GID" --clear-groups \
	"$GWP" --config "$T/gateway2.yaml" --listen-fds 2 --run "$T/run.json" --counts "$T/counts.json"
GW_PID=$LAB_SPAWNED_PID
P5=http://127.0.0.1:15081 # a port of its own: the first listeners' connections are in TIME_WAIT
if ! lab_wait 10 test -S "$GWSOCK"; then
	echo "FAIL - the proxy-only gateway with --run did not start"
	cat "$LAB_DIR/log/host-gw2.log"
	exit 1
fi
check "with --run it lists the run with no ctl register" lab_match "\"$RUNID2\"" gw_ctl list
check "run.gateway-register is audited as registered at start" \
	audit_has ".action == \"run.gateway-register\" and .run == \"$RUNID2\" and (.reason | startswith(\"registered at the gateway's start (--run)\"))"
check_eq "--run: HTTPS_PROXY: https://allowed.test/" "hello from allowed.test" \
	pcurl HTTPS_PROXY=$P5 https://allowed.test/
check_fails --denied 56 "--run: HTTPS_PROXY: https://other.test/ is refused (CONNECT 403)" \
	pcurl HTTPS_PROXY=$P5 https://other.test/
check_eq "--run: ALL_PROXY=socks5h: http://allowed.test/" "hello from allowed.test" \
	pcurl ALL_PROXY=socks5h://127.0.0.1:15081 http://allowed.test/
check "--run: those connections are the run's" \
	jq -e -s --arg r "$RUNID2" '[.[] | select(.action == "net.connect" and .allowed and .run == $r)] |
		length == 2' "$AUDIT"
check "SIGTERM stops the gateway of --run" gw_stop
check "... and it wrote the run's counts (--counts): 1 denial, bytes both ways" \
	jq -e --arg r "$RUNID2" '.id == $r and .denied == 1 and .bytes_up > 0 and .bytes_down > 0' \
	"$T/counts.json"
check "no sanitizer report in its log" \
	lab_no_match "Sanitizer|runtime error:" cat "$LAB_DIR/log/host-gw.log"
lab_finish
