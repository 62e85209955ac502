#!/usr/bin/env bash
# run_as_user.sh - the run_* and trace_* integration tests a second time, with `warden` run by an
# unprivileged user (rootless mode, issue 13): every script runs unchanged with WARDEN_BIN
# pointing at a wrapper that starts the real warden as LAB_USER (setpriv, HOME the user's), its
# folder of files owned by that user (lab_tmpdir) and LAB_RUNS_DIR the user's run state.
#
# Every check that passes as root must pass as the user, except the differences listed in
# KNOWN below, each with its reason; one of those that passes after all is a failure too (the
# list must stay true). A script that dies before its closing line is a failure.
#
#   RUN_AS_USER_ONLY="run_basic run_escape" limits the scripts (default: all run_*.sh and
#   trace_*.sh).
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
command -v setpriv >/dev/null || { echo "FAIL: setpriv is missing"; exit 1; }
lab_user || { echo "FAIL: no unprivileged test user (useradd failed)"; exit 1; }

# KNOWN: "script|the check's description|why it differs as a user", one a line.
KNOWN=$(
	cat <<'EOF'
run_basic|a run's embedded gateway: the worker maps no libnftnl/libmnl/libnl, the parent does|a rootless run's embedded gateway is one process (the worker image replaces warden-gateway): no privileged parent whose maps show libnftnl
run_escape|a SUDO_UID past 2^32 stops the run (no wrap to another user)|SUDO_UID is read only when root starts warden: as the user it is ignored and the run starts as the user
run_basic|root mode without root (no CAP_NET_ADMIN): 125|the check makes itself uid 65534 before calling warden; the user's wrapper cannot change uid again (127): a check of root mode's refusal
run_basic|... naming the step and a fix|the same check, its message
run_basic|--mode daemon with no daemon answering: 125|the same: the check is uid 65534 already, the wrapper cannot switch
run_basic|--mode rootless as root: 125|as the user, --mode rootless is the user's own mode: it runs (0)
run_basic|refused runs that started are audited with exit 125|a user's refusals come before run.start: a user's --gateway is daemon mode, and a daemon that does not answer (or does not plumb runs) fails it at the prerequisites, so no refused run wrote run.start
run_basic|the daemon holds no run once the teardowns are done|no run registered with the daemon: the test's daemon runs without --manage-nft, so a user's daemon-mode run is refused (run_daemon.sh tests daemon mode with one that plumbs)
run_escape|started by root, the program is the sandbox user (uid 65534), never kuid 0|a user's program runs as that user (the launcher's caller), never as nobody
run_escape|started under sudo, the program is the invoking user|the same: no sudo, the program is the caller
run_escape|WARDEN_SANDBOX_USER picks another one|the same: a user cannot run the program as someone else
run_escape|a file the program leaves in a grant is not root's|it is the user's (the check wants nobody's)
run_escape|... while the log there has lines|the test makes the log's folder as root, where the user cannot write the log: the run is refused (125)
run_limits|... the audit says so|every rootless run samples RSS: two run.start events say rss-sampling where the check counts one
run_limits|... with a limit.memory event|the same: two limit.memory events name rss-sampling where the check counts one
run_limits|... with a limit.pids event|RLIMIT_NPROC refuses forks without a count the launcher could read: no limit.pids event (the fork bomb still ends)
run_limits|no nft set element is left|it asks `warden nft audit` of the host's table, which needs root
run_audit|control: the plain UDP datagram of the same run is audited|a datagram the run's table drops fails the program's send (EPERM: the drop is in the program's own namespace), so the check's `probe && probe && socat` chain stops before this datagram
run_audit|the UDP-lite datagram (v6) is audited, proto udplite|the same chain: the v4 probe's failed send stops it
run_audit|with a daemon too: the last datagram has a net.udp event|the test's daemon runs without --manage-nft: a user's --gateway (daemon mode) is refused by it
run_audit|the daemon relays the download|the same
run_hostaddr|TCP to 203.0.113.1:15080: a net.host event of that run|a rootless run's namespace holds no host address: a connection to one is DNATed to the gateway like any other and refused as a literal address (net.connect), not dropped by a host table (net.host)
run_hostaddr|TCP to [2001:db8:0:1::1]:15080: a net.host event of that run|the same
run_hostaddr|UDP to 203.0.113.1:15053: a net.host event of that run|the same for UDP: dropped by the run's own table as any datagram (net.udp)
run_hostaddr|UDP to [2001:db8:0:1::1]:15053: a net.host event of that run|the same
run_hostaddr|run B is up|runs A and B share a daemon (--gateway) that runs without --manage-nft, which refuses a user's daemon-mode runs; each rootless run has its own gateway in its own namespace, so A cannot see B's at all
run_hostaddr|control: run A's own v4 proxy address relays (daemon)|the same
run_hostaddr|run A cannot connect to run B's gateway address :15080|the same: no run B (it passes in run_rootless.sh's terms: another run's gateway is in another namespace)
run_hostaddr|run A cannot connect to run B's gateway address []:15080|the same
run_hostaddr|run A gets no answer from run B's DNS port :15053|the same
run_hostaddr|the daemon audits the v4 attempt as run A's|the same (daemon)
run_hostaddr|... the v6 one|the same
run_hostaddr|... the UDP one|the same
run_seccomp|... and lists keyctl, TIOCSTI, clone3, the foreign ABIs, the program's size|the check makes itself nobody before calling warden; the wrapper cannot switch to the user from there
run_seccomp|--print-seccomp -p userns.yaml says the namespace rules are loosened|the same: the check is nobody already
EOF
)

# SKIP: "script|why it is not run as a user": what it tests is root mode's alone.
SKIP=$(
	cat <<'EOF'
run_pool|the pool of ready-made networks is root mode's (a rootless run makes its own namespace, docs/run.md)
run_flood|it drives a warden-gateway daemon (--gateway) without --manage-nft, which a user's daemon-mode run needs
run_live|it runs its users itself: root mode as root, rootless and daemon mode as LAB_USER, another user against them
trace_sandbox|it runs its users itself: root mode under sudo for LAB_USER, rootless mode as LAB_USER
trace_sockets|it runs its users itself: root mode under sudo for LAB_USER, rootless mode as LAB_USER
EOF
)

D=$(mktemp -d /tmp/wd-run-as-user-XXXXXX)
trap 'rm -rf "$D"' EXIT
chmod 0755 "$D"
REAL=$(readlink -f "$W")
# the caller's PATH without the folders the user cannot search (root's own tools)
UPATH=$(setpriv --reuid="$LAB_USER_UID" --regid="$LAB_USER_GID" --init-groups sh -c \
	'IFS=:; p=; for d in $0; do [ -x "$d" ] && p=${p:+$p:}$d; done; echo "$p"' "$PATH")
# HOME stays when a check set it (a test's home), else the user's
cat >"$D/warden" <<EOF
#!/bin/sh
case \${HOME:-/root} in /root) HOME=$LAB_USER_HOME ;; esac
exec setpriv --reuid=$LAB_USER_UID --regid=$LAB_USER_GID --init-groups \\
	env -u XDG_RUNTIME_DIR -u SUDO_UID -u SUDO_GID -u SUDO_USER HOME="\$HOME" \\
	PATH="$UPATH" USER=$LAB_USER LOGNAME=$LAB_USER $REAL "\$@"
EOF
chmod 0755 "$D/warden"

scripts=${RUN_AS_USER_ONLY:-$(cd "$SRC/tests/integration" && ls run_*.sh trace_*.sh | sed 's/\.sh$//' |
	grep -vx -e run_rootless -e run_as_user -e run_daemon)}
for s in $scripts; do
	why=$(grep "^$s|" <<<"$SKIP" | cut -d'|' -f2-)
	if [[ -n $why ]]; then
		echo "ok - $s: not run as a user: $why"
		LAB_PASSED=$((LAB_PASSED + 1))
		continue
	fi
	log=$D/$s.log
	LAB_AS_USER=1 LAB_RUNS_DIR=/tmp/warden-$LAB_USER_UID/runs WARDEN_BIN=$D/warden \
		bash "$SRC/tests/integration/$s.sh" >"$log" 2>&1
	rc=$?
	closing=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
	if ((rc == 77)); then
		echo "ok - $s: skipped here ($(grep -m1 SKIP "$log"))"
		LAB_PASSED=$((LAB_PASSED + 1))
		continue
	fi
	if [[ -z $closing ]]; then
		LAB_FAILED=$((LAB_FAILED + 1))
		echo "FAIL - $s as the user: no closing line (exit $rc)"
		tail -n 15 "$log" | sed 's/^/    | /'
		continue
	fi
	unexpected=0 known=0
	while IFS= read -r line; do
		desc=${line#FAIL - }
		desc=${desc%% (exit *}
		desc=${desc%%: wanted *}
		if grep -qF "$s|$desc|" <<<"$KNOWN"; then
			known=$((known + 1))
		else
			unexpected=$((unexpected + 1))
			echo "    | $s: $line"
		fi
	done < <(grep '^FAIL - ' "$log")
	while IFS='|' read -r ks kdesc why; do
		[[ $ks == "$s" ]] || continue
		if ! grep -qF "FAIL - $kdesc" "$log"; then
			unexpected=$((unexpected + 1))
			echo "    | $s: a known difference passes now, drop it from KNOWN: $kdesc"
		fi
	done <<<"$KNOWN"
	if ((unexpected)); then
		LAB_FAILED=$((LAB_FAILED + 1))
		echo "FAIL - $s as the user: $closing, $unexpected unexpected"
	else
		LAB_PASSED=$((LAB_PASSED + 1))
		echo "ok - $s as the user: $closing ($known known differences)"
	fi
done
lab_finish
