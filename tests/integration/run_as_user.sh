#!/usr/bin/env bash
# run_as_user.sh - the run_* and trace_* integration tests a second time, with `warden` run by an
# unprivileged user (rootless mode, issue 13): every script runs unchanged with WARDEN_BIN
# pointing at a wrapper that starts the real warden as LAB_USER (setpriv, HOME the user's), its
# folder of files owned by that user (lab_tmpdir) and LAB_RUNS_DIR the user's run state.
#
# Every check that passes as root must pass as the user, except the differences listed in
# KNOWN below. Each row names the exact check that fails as the user, how (FAIL, or ERROR: a
# probe that could not run), and what must hold instead, seen in the script's output; the row
# passes only when that is seen. A row whose check passes after all, or fails otherwise, is a
# failure (the list must stay true). Any other FAIL or ERROR line is a failure; so is a script
# that dies before its closing line, or that skips itself (exit 77). Scripts that are not run as a
# user at all are in NOT_RUN, each with its reason, and are reported as "skip", never as a pass.
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

# KNOWN: "script|FAIL or ERROR|the check's description|what holds instead|why", one a line.
# What holds instead is one of:
#   out:ERE     the check's own output (what was printed since the previous result line, its
#               result line and the detail lines under it), its lines joined by spaces, matches
#               the extended regex ERE (no "|" in it: it ends the field); @UID@ stands for
#               the user's uid
#   ok:DESC     the script's check DESC passed: a check the script makes for the user
#               (LAB_AS_USER=1) that shows what a rootless run does instead
#   after:DESC  the check follows from the known difference DESC of the same script (itself
#               a row here, seen as its row says): what it needs is not there as the user
KNOWN=$(
	cat <<'EOF'
run_basic|FAIL|a run's embedded gateway: the worker maps no libnftnl/libmnl/libnl, the parent does|out:no embedded gateway \(launcher [0-9]+, gateway '', worker ''\)|a rootless run's embedded gateway is one process (the worker image replaces warden-gateway): no privileged parent whose maps show libnftnl
run_basic|FAIL|root mode without root (no CAP_NET_ADMIN): 125|out:wanted '125', got '127'|the check makes itself uid 65534 before calling warden; the user's wrapper cannot change uid again (127): a check of root mode's refusal
run_basic|FAIL|... naming the step and a fix|after:root mode without root (no CAP_NET_ADMIN): 125|the same check, its message
run_basic|FAIL|--mode daemon with no daemon answering: 125|out:wanted '125', got '127'|the same: the check is uid 65534 already, the wrapper cannot switch (127)
run_basic|FAIL|--mode rootless as root: 125|out:wanted '125', got '0'|as the user, --mode rootless is the user's own mode: it runs (0)
run_basic|FAIL|refused runs that started are audited with exit 125|out:audit.jsonl +. false$|no run.exit with exit 125 (jq says false): a user's refusals come before run.start, so no refused run wrote one
run_basic|FAIL|setup: the gateway daemon answers on its control socket|out:audit log [^ ]*/audit.jsonl belongs to uid @UID@, not to you \(uid 0\) or root; refusing|the daemon (root) shares the test's audit log, which is the user's file as the user: it refuses to write it and does not start
run_basic|ERROR|HTTPS to an allowed name through the daemon|out:exit 125;.*no gateway answers on [^ ]*/gw.sock|no daemon (above): the user's daemon-mode run is refused at its prerequisites (125)
run_basic|ERROR|a denied name through the daemon|out:exit 125;.*no gateway answers on [^ ]*/gw.sock|the same
run_basic|FAIL|the daemon holds no run once the teardowns are done|after:setup: the gateway daemon answers on its control socket|no daemon to ask
run_escape|FAIL|started by root, the program is the sandbox user (uid 65534), never kuid 0|out:wanted '65534', got '@UID@'|a user's program runs as that user (the launcher's caller), never as nobody
run_escape|FAIL|started under sudo, the program is the invoking user|out:wanted '4321', got '@UID@'|the same: SUDO_UID is not read as a user, the program is the caller
run_escape|FAIL|a SUDO_UID past 2^32 stops the run (no wrap to another user)|out:the run started as uid @UID@|SUDO_UID is read only when root starts warden: as the user it is ignored and the run starts as the user
run_escape|FAIL|WARDEN_SANDBOX_USER picks another one|out:wanted '4322', got '@UID@'|the same: a user cannot run the program as someone else
run_escape|FAIL|a file the program leaves in a grant is not root's|out:wanted '65534', got '@UID@'|it is the user's (the check wants nobody's)
run_escape|ERROR|a root-owned link in a root-owned folder is followed|out:exit 125;.*passes through the symbolic link [^ ]*/rootlink .*in a folder others than root can change|the test's folder is the user's as the user (lab_tmpdir), so the link is in a folder the user can change: refused (125)
run_escape|ERROR|a read grant holding the audit log's folder sees it empty|out:exit 125;.*cannot open audit log [^ ]*/ro/log/audit.jsonl: Permission denied|the test makes the log's folder as root, where the user cannot write the log: the run is refused (125)
run_escape|FAIL|... while the log there has lines|after:a read grant holding the audit log's folder sees it empty|no run wrote the log
run_limits|FAIL|... the audit says so|out:wanted '1', got '2'|every rootless run samples memory: two run.start events say pss-sampling where the check counts one
run_limits|FAIL|... with a limit.memory event|out:wanted '1', got '2'|the same: two limit.memory events name pss-sampling where the check counts one
run_limits|FAIL|... with a limit.pids event|out:wanted '1', got '0'|RLIMIT_NPROC refuses forks without a count the launcher could read: no limit.pids event (the fork bomb still ends)
run_limits|FAIL|no nft set element is left|out:Error: No such file or directory|it lists the host's table in lab-host, which a rootless run never touches: there is none
run_audit|FAIL|control: the plain UDP datagram of the same run is audited|out:PermissionError: \[Errno 1\] Operation not permitted|a datagram the run's table drops fails the program's send (EPERM: the drop is in the program's own namespace), so the check's `probe && probe && socat` chain stops before this datagram
run_audit|FAIL|the UDP-lite datagram (v6) is audited, proto udplite|after:control: the plain UDP datagram of the same run is audited|the same chain: the v4 probe's failed send stops it
run_audit|FAIL|setup: the gateway daemon answers on its control socket|out:audit log [^ ]*/audit.jsonl belongs to uid @UID@, not to you \(uid 0\) or root; refusing|the daemon (root) shares the test's audit log, the user's file as the user: it refuses it and does not start
run_audit|FAIL|with a daemon too: the last datagram has a net.udp event|out:no gateway answers on [^ ]*/gw.sock|no daemon: the user's daemon-mode run is refused at its prerequisites
run_audit|FAIL|the daemon relays the download|after:setup: the gateway daemon answers on its control socket|no daemon
run_hostaddr|FAIL|TCP to 203.0.113.1:15080: a net.host event of that run|ok:as the user: TCP to 203.0.113.1:15080 is refused as a literal address (net.connect)|a rootless run's namespace holds no host address: a connection to one is DNATed to the gateway like any other and refused as a literal address (net.connect), not dropped by a host table (net.host)
run_hostaddr|FAIL|TCP to [2001:db8:0:1::1]:15080: a net.host event of that run|ok:as the user: TCP to [2001:db8:0:1::1]:15080 is refused as a literal address (net.connect)|the same
run_hostaddr|FAIL|UDP to 203.0.113.1:15053: a net.host event of that run|ok:as the user: UDP to 203.0.113.1:15053 is dropped by the run's table (net.udp)|the same for UDP: dropped by the run's own table as any datagram (net.udp)
run_hostaddr|FAIL|UDP to [2001:db8:0:1::1]:15053: a net.host event of that run|ok:as the user: UDP to [2001:db8:0:1::1]:15053 is dropped by the run's table (net.udp)|the same
run_hostaddr|ERROR|... its reason names the run's own gateway address|after:TCP to 203.0.113.1:15080: a net.host event of that run|no net.host event to read a reason of (jq: null cannot be matched)
run_hostaddr|FAIL|setup: the gateway daemon answers on its control socket|out:audit log [^ ]*/audit.jsonl belongs to uid @UID@, not to you \(uid 0\) or root; refusing|runs A and B share a daemon (--gateway) with the test's audit log, the user's file as the user: it refuses it and does not start (each rootless run has its own gateway in its own namespace, so A cannot see B's at all: run_rootless.sh)
run_hostaddr|FAIL|run B is up|after:setup: the gateway daemon answers on its control socket|no daemon to list run B
run_hostaddr|FAIL|control: run A's own v4 proxy address relays (daemon)|out:no gateway answers on [^ ]*/gw.sock|no daemon: run A is refused at its prerequisites
run_hostaddr|FAIL|run A cannot connect to run B's gateway address :15080|out:no gateway answers on [^ ]*/gw.sock.*exit 125|the same (125, not the probe's 2)
run_hostaddr|FAIL|run A cannot connect to run B's gateway address []:15080|out:no gateway answers on [^ ]*/gw.sock.*exit 125|the same
run_hostaddr|ERROR|control: the DNS port at run A's own address answers (daemon)|out:exit 125;.*no gateway answers on [^ ]*/gw.sock|the same
run_hostaddr|FAIL|run A gets no answer from run B's DNS port :15053|out:no gateway answers on [^ ]*/gw.sock.*exit 125|the same
run_hostaddr|FAIL|the daemon audits the v4 attempt as run A's|after:setup: the gateway daemon answers on its control socket|no daemon, no attempt
run_hostaddr|FAIL|... the v6 one|after:setup: the gateway daemon answers on its control socket|the same
run_hostaddr|FAIL|... the UDP one|after:setup: the gateway daemon answers on its control socket|the same
run_seccomp|ERROR|warden run --print-seccomp as nobody exits 0|out:exit 127;.*setpriv: setresuid failed: Operation not permitted|the check makes itself nobody before calling warden; the wrapper cannot switch to the user from there (127)
run_seccomp|FAIL|... and lists keyctl, TIOCSTI, clone3, the foreign ABIs, the program's size|out:setpriv: setresuid failed: Operation not permitted|the same
run_seccomp|FAIL|--print-seccomp -p userns.yaml says the namespace rules are loosened|out:setpriv: setresuid failed: Operation not permitted|the same: the check is nobody already
EOF
)

# NOT_RUN: "script|why it is not run as a user", one a line: what it tests is root mode's alone,
# or it runs its users itself. They are reported as skips, never counted as passes.
NOT_RUN=$(
	cat <<'EOF'
run_as_user|this script
run_rootless|it is rootless mode's own test: it runs its user itself
run_daemon|it runs its users itself (daemon mode as LAB_USER against a root daemon)
run_docker|it runs its users itself (as root, and as LAB_USER in the engine's socket group)
run_daemon_users|it runs its users itself (several users against one daemon)
run_files_daemon|it runs its users itself (a user's run through a root daemon)
run_mcp_daemon|it runs its users itself (a user's MCP run through a root daemon)
run_shadow_daemon|it runs its users itself (a user's shadow run through a root daemon)
run_pool|the pool of ready-made networks is root mode's (a rootless run makes its own namespace, docs/run.md)
run_flood|it drives a warden-gateway daemon (--gateway) without --manage-nft, which a user's daemon-mode run needs
run_live|it runs its users itself: root mode as root, rootless and daemon mode as LAB_USER, another user against them
trace_sandbox|it runs its users itself: root mode under sudo for LAB_USER, rootless mode as LAB_USER
trace_sockets|it runs its users itself: root mode under sudo for LAB_USER, rootless mode as LAB_USER
run_udp_daemon|it runs its users itself (a user's run through a root daemon)
run_gw_ready|stand-in gateways for the launcher's readiness wait, which is one code path in every mode (run_rootless.sh waits for the real gateway as the user)
EOF
)
# the lists name scripts that exist (they must stay true)
while IFS='|' read -r s _; do
	[[ -z $s || -e $SRC/tests/integration/$s.sh ]] && continue
	LAB_FAILED=$((LAB_FAILED + 1))
	echo "FAIL - run_as_user.sh's lists name $s, which is not a script"
done < <(printf '%s\n%s\n' "$KNOWN" "$NOT_RUN")

D=$(mktemp -d /tmp/wd-run-as-user-XXXXXX)
trap 'rm -rf "$D"' EXIT
chmod 0755 "$D"
REAL=$(readlink -f "$W")
# the caller's PATH without the folders the user cannot search (root's own tools)
UPATH=$(setpriv --reuid="$LAB_USER_UID" --regid="$LAB_USER_GID" --init-groups sh -c \
	'IFS=:; p=; for d in $0; do [ -x "$d" ] && p=${p:+$p:}$d; done; echo "$p"' "$PATH")
# the user's audit signing key (run.exit's signature): a check's HOME is often a folder of the
# test's that the user cannot write, and a run that cannot make its key does not start; a
# script that names WARDEN_AUDIT_KEY keeps its own
install -d -m 0700 -o "$LAB_USER_UID" -g "$LAB_USER_GID" "$D/key"
# HOME stays when a check set it (a test's home), else the user's
cat >"$D/warden" <<EOF
#!/bin/sh
case \${HOME:-/root} in /root) HOME=$LAB_USER_HOME ;; esac
exec setpriv --reuid=$LAB_USER_UID --regid=$LAB_USER_GID --init-groups \\
	env -u XDG_RUNTIME_DIR -u SUDO_UID -u SUDO_GID -u SUDO_USER HOME="\$HOME" \\
	WARDEN_AUDIT_KEY="\${WARDEN_AUDIT_KEY:-$D/key/audit-key.pem}" \\
	PATH="$UPATH" USER=$LAB_USER LOGNAME=$LAB_USER $REAL "\$@"
EOF
chmod 0755 "$D/warden"

scripts=${RUN_AS_USER_ONLY:-$(cd "$SRC/tests/integration" && ls run_*.sh trace_*.sh | sed 's/\.sh$//')}

# _block LOG N: the output of the check whose result line is line N of LOG: the lines since the
# previous result line, the result line, and the detail lines under it (indented)
_block() {
	awk -v n="$2" '
		NR < n && /^(ok|FAIL|ERROR) - / { buf = ""; next }
		NR < n { buf = buf $0 "\n"; next }
		NR == n { printf "%s%s\n", buf, $0; next }
		/^([ \t]|$)/ { print; next }
		{ exit }' "$1"
}

# _result_lines LOG KIND DESC: the line numbers of LOG's result lines "KIND - DESC", DESC exactly
# (then nothing, " (" or ": ")
_result_lines() {
	local n line pre="$2 - $3"
	while IFS= read -r n; do
		line=$(sed -n "${n}p" "$1")
		line=${line#"$pre"}
		[[ -z $line || $line == " ("* || $line == ": "* ]] && echo "$n"
	done < <(grep -nF -- "$pre" "$1" | cut -d: -f1)
}

skipped=0
for s in $scripts; do
	why=$(grep "^$s|" <<<"$NOT_RUN" | cut -d'|' -f2-)
	if [[ -n $why ]]; then
		echo "skip - $s: not run as a user: $why"
		skipped=$((skipped + 1))
		continue
	fi
	if [[ ! -e $SRC/tests/integration/$s.sh ]]; then
		LAB_FAILED=$((LAB_FAILED + 1))
		echo "FAIL - $s: no such script"
		continue
	fi
	log=$D/$s.log
	LAB_AS_USER=1 LAB_RUNS_DIR=/tmp/warden-$LAB_USER_UID/runs WARDEN_BIN=$D/warden \
		bash "$SRC/tests/integration/$s.sh" >"$log" 2>&1
	rc=$?
	closing=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
	if ((rc == 77)); then
		# a skip is no pass: a script that cannot run as a user belongs in NOT_RUN
		LAB_FAILED=$((LAB_FAILED + 1))
		echo "FAIL - $s as the user: it skipped itself (exit 77: $(grep -m1 SKIP "$log")), and it is not in NOT_RUN"
		continue
	fi
	if [[ -z $closing ]]; then
		LAB_FAILED=$((LAB_FAILED + 1))
		echo "FAIL - $s as the user: no closing line (exit $rc)"
		tail -n 15 "$log" | sed 's/^/    | /'
		continue
	fi
	unexpected=0 known=0
	declare -A claimed=() seen=()
	# first the rows of `out:` and `ok:`, then those `after:` another row (seen[] holds those seen)
	for pass in 1 2; do
		while IFS='|' read -r ks kkind kdesc kwant why; do
			[[ $ks == "$s" ]] || continue
			[[ $kwant == after:* ]] && ((pass == 1)) && continue
			[[ $kwant != after:* ]] && ((pass == 2)) && continue
			lines=$(_result_lines "$log" "$kkind" "$kdesc")
			if [[ -z $lines ]]; then
				unexpected=$((unexpected + 1))
				if [[ -n $(_result_lines "$log" ok "$kdesc") ]]; then
					echo "    | $s: a known difference passes now, drop it from KNOWN: $kdesc"
				else
					echo "    | $s: no $kkind line for the known difference: $kdesc"
				fi
				continue
			fi
			good=1
			for n in $lines; do
				claimed[$n]=1
				case $kwant in
				out:*)
					ere=${kwant#out:}
					ere=${ere//@UID@/$LAB_USER_UID}
					_block "$log" "$n" | paste -sd ' ' | grep -Eq -- "$ere" || good=0
					;;
				ok:*)
					[[ -n $(_result_lines "$log" ok "${kwant#ok:}") ]] || good=0
					;;
				after:*)
					[[ -n ${seen[${kwant#after:}]:-} ]] || good=0
					;;
				*)
					good=0
					;;
				esac
			done
			if ((good)); then
				known=$((known + 1))
				seen[$kdesc]=1
			else
				unexpected=$((unexpected + 1))
				echo "    | $s: $kkind as known, but what must hold instead was not seen ($kwant): $kdesc"
			fi
		done <<<"$KNOWN"
	done
	# every other FAIL or ERROR line is unexpected (an ERROR is a probe that could not run)
	nfail=0
	while IFS=: read -r n line; do
		nfail=$((nfail + 1))
		[[ -n ${claimed[$n]:-} ]] && continue
		unexpected=$((unexpected + 1))
		echo "    | $s: $line"
	done < <(grep -nE '^(FAIL|ERROR) - ' "$log")
	unset claimed seen
	# the closing line counts every failure: each must be a FAIL or ERROR line seen above
	if [[ $closing =~ ([0-9]+)\ failed$ ]] && ((BASH_REMATCH[1] != nfail)); then
		unexpected=$((unexpected + 1))
		echo "    | $s: its closing line counts ${BASH_REMATCH[1]} failures, its output shows $nfail"
	fi
	if ((unexpected)); then
		LAB_FAILED=$((LAB_FAILED + 1))
		echo "FAIL - $s as the user: $closing, $unexpected unexpected"
	else
		LAB_PASSED=$((LAB_PASSED + 1))
		echo "ok - $s as the user: $closing ($known known differences, each as its row says)"
	fi
done
((skipped == 0)) || echo "# $skipped scripts not run as a user (NOT_RUN, each with its reason above)"
lab_finish
