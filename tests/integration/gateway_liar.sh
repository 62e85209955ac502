#!/usr/bin/env bash
# gateway_liar.sh - the daemon's privileged parent trusts no uid a worker names (issue 14): a
# compromised worker (tests/integration/liar_worker.c, exec'd by warden-gateway --worker in
# place of warden-gateway-worker; it plays the worker after a takeover, so it is root here,
# which the parent cannot tell) asks the parent to plumb user A's network namespace. The parent
# plumbs it only for a connection A itself made to the control socket: SO_PEERCRED read by the
# parent on the client's socket (the worker hands it over with the namespace), never a uid
# written in the request. Refused: the uid claimed alone, a socketpair the worker made, a
# socket the worker connected itself, A's connection with B's namespace (B's uid claimed, or
# A's), a run id that is a path (it names the run's cgroup folder). Control: A's own
# connection with A's namespace is plumbed (a veth in lab-host), and undone when the worker
# goes.
set -u
. "$(dirname "$0")/daemon/prelude.sh"
LIAR=${WD_LIAR_WORKER:-${WARDEN_BUILD_DIR:-$SRC/build}/tests/integration/liar_worker}
[[ -x $LIAR ]] || { echo "FAIL: $LIAR is not built"; exit 1; }
check "the host's nft table is installed" in_host "$W" nft install

# a user and network namespace each of A and B, held by a process of theirs
as_a unshare -Urn sleep 120 &
ANS_HOLDER=$!
as_b unshare -Urn sleep 120 &
BNS_HOLDER=$!
lab_on_exit bash -c 'kill "$0" "$1" 2>/dev/null; true' "$ANS_HOLDER" "$BNS_HOLDER"
ANS=$(ns_of "$ANS_HOLDER") BNS=$(ns_of "$BNS_HOLDER")
check "A holds a network namespace of A's own" test -n "$ANS"
check "B holds one of B's own" test -n "$BNS"

# liar MODE NETNS-PID UID: the gateway with the lying worker in MODE, until the parent answered
# or ended the worker (a malformed request is fatal to the channel); sets ANSWER (the answer,
# "killed", or "" when neither came) and leaves the gateway running (liar_end)
liar() {
	rm -f "$T/liar.out" "$T/liar.stop"
	ANSWER=
	setsid nsenter --net="/run/netns/$LAB_HOST_NS" env ${LIAR_ID:+LIAR_ID="$LIAR_ID"} LIAR_MODE="$1" \
		LIAR_NETNS="/proc/$2/ns/net" LIAR_UID="$3" LIAR_SOCK="$SOCK" LIAR_OUT="$T/liar.out" \
		LIAR_STOP="$T/liar.stop" "$GW" --config "$T/gateway.yaml" --manage-nft \
		--control-group warden --worker "$LIAR" </dev/null >>"$T/daemon.log" 2>&1 &
	GWPID=$!
	if [[ $1 == accepted ]]; then
		# A connects to the daemon's socket (as any client of A's does): the worker gets it
		lab_wait 10 test -S "$SOCK"
		as_a python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); time.sleep(20)' "$SOCK" &
		CLIENT_PID=$!
	fi
	lab_wait 25 bash -c 'test -s "$0" || ! kill -0 "$1" 2>/dev/null' "$T/liar.out" "$GWPID"
	if [[ -s $T/liar.out ]]; then
		ANSWER=$(<"$T/liar.out")
	elif ! kill -0 "$GWPID" 2>/dev/null; then
		ANSWER=killed
	fi
	echo "# the parent's answer: ${ANSWER:-none}"
}
answered() { [[ -n $ANSWER ]]; }
liar_end() {
	touch "$T/liar.stop"
	[[ -n ${CLIENT_PID:-} ]] && kill "$CLIENT_PID" 2>/dev/null
	CLIENT_PID=
	lab_wait 15 bash -c '! kill -0 "$0" 2>/dev/null' "$GWPID" || daemon_stop
	wait "$GWPID" 2>/dev/null
	GWPID=
}
plumbed() { [[ $ANSWER == "status 0 "* ]]; }
refused() { [[ -n $ANSWER ]] && ! plumbed; }

echo "# control: a worker that hands over A's own connection with A's namespace"
liar accepted "$ANS" "$A_UID"
check "the lying worker is started by the gateway and gets an answer (accepted)" answered
check "the parent plumbs it (A asked: A's connection, A's namespace)" plumbed
check "... its veth is in lab-host" have_wd_links
liar_end
check "... and undone when the worker is gone" lab_wait 10 no_wd_links

echo "# a worker that names A's uid: the parent takes nobody's word for it"
liar claim "$ANS" "$A_UID"
check "the lying worker gets an answer (claim)" answered
check "A's namespace with uid $A_UID only claimed: refused" refused
check "... nothing plumbed" no_wd_links
liar_end
liar selfpair "$ANS" "$A_UID"
check "the lying worker gets an answer (selfpair)" answered
check "A's namespace with a socketpair of the worker's own: refused" refused
check "... nothing plumbed" no_wd_links
liar_end
liar selfconnect "$ANS" "$A_UID"
check "the lying worker gets an answer (selfconnect)" answered
check "A's namespace with a socket the worker connected itself: refused" refused
check "... nothing plumbed" no_wd_links
liar_end
liar accepted "$BNS" "$B_UID"
check "the lying worker gets an answer (accepted)" answered
check "B's namespace with A's connection (B's uid claimed): refused" refused
check "... nothing plumbed" no_wd_links
liar_end
liar accepted "$BNS" "$A_UID"
check "the lying worker gets an answer (accepted)" answered
check "B's namespace with A's connection (A's uid claimed): refused as not A's" \
	grep -qF "not owned by uid $A_UID" "$T/liar.out"
check "... nothing plumbed" no_wd_links
liar_end
LIAR_ID=x/../../escape liar accepted "$ANS" "$A_UID"
check "the lying worker gets an answer (a run id with '/')" answered
check "A's namespace and connection, run id x/../../escape (a cgroup path): refused" refused
check "... nothing plumbed" no_wd_links
liar_end
check "the daemon's log has no sanitizer report" bash -c \
	'! grep -E "ERROR: (Address|Leak)Sanitizer|runtime error:" "$0"' "$T/daemon.log"
lab_finish
