#!/usr/bin/env bash
# escape_verbs.sh - text a run controls never drives the terminal of the person who reads it
# (issue 25, item 5; warden(1) "Text from runs"). User A (unprivileged, rootless) starts a run
# whose command words, policy file name and a file it opens hold ESC ] 0 ; ... BEL (retitles
# the terminal), ESC [ 2 J ESC [ H (clears it), a C1 CSI (as UTF-8, U+009B; as one raw byte
# 0x9b where the text need not be UTF-8: an argument, a path) and U+202E (turns the line
# around). Root then runs every verb that shows that text: `warden
# status` (root sees every user's runs) and its --json, `allowlist`, `logs`, `kill` (a hostile
# argument, then the run), `doctor` (a hostile audit log path), `run`'s refusals quoting a path
# and argv[0], `trace` and `init --from` over a file with such a name. Each output (stdout and
# stderr) must hold no raw ESC, C0 control but newline, DEL, C1 (raw or UTF-8), bidi control or
# invalid UTF-8, and, the positive control, the text itself in its escaped form (\x1b]0;...):
# the data is shown, not dropped.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

if [[ ${LAB_AS_USER:-} == 1 ]]; then
	echo "SKIP: escape_verbs.sh runs its user itself"
	exit 77
fi
lab_require_root
lab_need_run_tools
command -v python3 >/dev/null && command -v jq >/dev/null ||
	{ echo "FAIL: python3 or jq is missing"; exit 1; }
lab_user || { echo "FAIL: no unprivileged test user (useradd failed)"; exit 1; }
lab_up

# not in /tmp: a run's sandbox has a /tmp of its own
T=$(mktemp -d /var/tmp/wd-escape-XXXXXX) || exit 1
[[ -n ${KEEP_T:-} ]] || lab_on_exit rm -rf "$T"
chmod 0755 "$T"
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0

OSC=$'\e]0;owned\a'     # sets the window title
CLR=$'\e[2J\e[H'        # clears the screen, cursor home
C1U=$'\xc2\x9b'         # U+009B (CSI) written as UTF-8
C1B=$'\x9b'             # the same C1 control as one raw byte (not UTF-8)
RLO=$'\xe2\x80\xae'     # U+202E RIGHT-TO-LEFT OVERRIDE
EVIL="w${OSC}${CLR}x${C1U}2Jy${RLO}txt.exe"
# what the escaper shows of it (the positive control looks for this)
EVIL_SHOWN='w\x1b]0;owned\x07\x1b[2J\x1b[Hx\u{009b}2Jy\u{202e}txt.exe'
# the same with the raw C1 byte, where the text is not JSON (JSON holds UTF-8 only: a command
# word or a policy name that is not UTF-8 is "?" in a run's record, U+FFFD in its audit log)
EVILB="${EVIL}z${C1B}"
EVILB_SHOWN="${EVIL_SHOWN}"'z\x9b'
# in a file name
EVILF="f${OSC}${C1U}${RLO}.txt"
EVILF_SHOWN='f\x1b]0;owned\x07\u{009b}\u{202e}.txt'

# tty_clean FILE: no byte in FILE a terminal would act on (else the offending ones, exit 1)
tty_clean() {
	python3 - "$1" <<'EOF'
import sys
data = open(sys.argv[1], "rb").read()
bad = []
try:
    text = data.decode("utf-8")
except UnicodeDecodeError as e:
    print(f"invalid UTF-8 at byte {e.start}: {data[e.start:e.start + 4]!r}")
    sys.exit(1)
for i, ch in enumerate(text):
    cp = ord(ch)
    if (cp < 0x20 and ch != "\n") or 0x7f <= cp < 0xa0 or cp in (0x61c, 0x200e, 0x200f) \
            or 0x2028 <= cp <= 0x202e or 0x2066 <= cp <= 0x2069:
        bad.append(f"U+{cp:04X} at {i}")
if bad:
    print("raw controls: " + ", ".join(bad[:8]))
    sys.exit(1)
EOF
}
# shows FILE TEXT: FILE holds TEXT as it is (fixed string)
shows() { grep -qF -- "$2" "$1"; }
# both FILE CMD...: CMD's stdout and stderr into FILE, whatever its status
both() {
	local f=$1
	shift
	"$@" >"$f" 2>&1
	return 0
}
# json_has JQ: root's `warden status --json` has run ID and JQ holds of it ($w: EVIL)
json_has() {
	in_host "$W" status --json |
		jq -e --arg id "$ID" --arg w "$EVIL" "any(.runs[]; .id == \$id and ($1))"
}
# verb_checks NAME FILE SHOWN: FILE (NAME's output) is clean and shows SHOWN
verb_checks() {
	check "$1: no raw ESC, C0, DEL, C1, bidi control or invalid UTF-8 reaches the terminal" \
		tty_clean "$2"
	check "$1: control: the text is shown, escaped" shows "$2" "$3"
}

# A's files: the policy; a file with a hostile name the program opens (denied)
AD=$T/a
install -d -m 0755 -o "$LAB_USER_UID" -g "$LAB_USER_GID" "$AD" "$AD/s"
POL=$AD/pol.yaml
cat >"$POL" <<EOF
version: 1
filesystem:
  read: ["$AD/ok"]
network:
  allow:
    - {host: allowed.test, ports: [80]}
audit:
  files: denied
EOF
mkdir -p "$AD/ok"
echo secret >"$AD/s/$EVILF"
chown -R "$LAB_USER_UID:$LAB_USER_GID" "$AD"
AA=$AD/audit.jsonl

# --- one live run of A's, its command line hostile
in_host_user "$W" run -q --mode rootless --audit-log "$AA" -p "$POL" -- \
	/bin/sh -c 'cat "$1" 2>/dev/null; exec sleep 300' "$EVIL" "$AD/s/$EVILF" \
	>"$T/run.out" 2>"$T/run.err" &
RUNPID=$!
lab_on_exit bash -c 'kill "$0" 2>/dev/null; true' "$RUNPID"
last_run() { jq -r -s '[.[] | select(.action == "run.start")] | last | .run // empty' "$AA"; }
listed() { in_host "$W" status --json | jq -e --arg id "$1" 'any(.runs[]; .id == $id)'; }
# the run is up once root's status lists it
up() {
	local id
	id=$(last_run 2>/dev/null)
	[[ -n $id ]] && listed "$id" >/dev/null
}
if ! check "A's run is up and root's status lists it" lab_wait 60 up; then
	sed 's/^/    | /' "$T/run.err" | tail -n 20
	lab_finish
fi
ID=$(last_run)
both "$T/status.plain" in_host "$W" status
verb_checks "status (root, A's run)" "$T/status.plain" "$EVIL_SHOWN"

# A policy file name with a control in it is refused at registration (the gateway takes
# printable ASCII names only), but a rootless run's record is its user's own file: A writes
# the policy's name and path that root's verbs then show.
forge() {
	as_user python3 - "/tmp/warden-$LAB_USER_UID/runs/$ID/state" "$1" <<'PY'
import os, sys
path, evil = sys.argv[1], os.fsencode(sys.argv[2])
lines = open(path, "rb").read().split(b"\n")
out = [b"policy_name=pol" + evil + b".yaml" if l.startswith(b"policy_name=") else
       b"policy=/var/tmp/" + evil + b"/pol.yaml" if l.startswith(b"policy=") else l
       for l in lines]
open(path + ".tmp", "wb").write(b"\n".join(out))
os.rename(path + ".tmp", path)
PY
}
check "A rewrites its run's record: a hostile policy name and path" forge "$EVILB"

both "$T/status" in_host "$W" status
verb_checks "status (root, A's run, its record forged)" "$T/status" "$EVIL_SHOWN"
check "status: the policy's name is shown escaped" shows "$T/status" "pol$EVILB_SHOWN"
# JSON: ESC as \u001b, the rest \u-escaped too (ASCII), so a terminal gets no control either;
# the policy name that is not UTF-8 is mended, the run is listed still
both "$T/status.json" in_host "$W" status --json
verb_checks "status --json" "$T/status.json" '\u001B]0;owned\u0007'
check "status --json: the forged policy name is there, mended" \
	json_has '.policy_name | endswith("z\ufffd.yaml")'
check "status --json: the command reads back exactly" json_has '.command | index($w)'

both "$T/allowlist" in_host "$W" allowlist
verb_checks "allowlist (root, every run)" "$T/allowlist" "pol$EVILB_SHOWN"
check "allowlist: the run's rules are listed" shows "$T/allowlist" "allowed.test"

both "$T/kill.bad" in_host "$W" kill "$EVILB"
verb_checks "kill with a hostile argument (the error quotes it)" "$T/kill.bad" "$EVILB_SHOWN"
both "$T/kill" in_host "$W" kill "$ID"
check "kill: the run ended" shows "$T/kill" "run $ID ended"
check "kill: no raw control" tty_clean "$T/kill"
wait "$RUNPID"

# the run's file events are written when it ends
both "$T/logs" in_host "$W" logs --audit-log "$AA"
# the table cuts a path's start and its escaped form's end to the column: the file's name
verb_checks "logs (the denied file's path)" "$T/logs" 'f\x1b]0;owned\x07'

# --- doctor: the audit log's path is shown (WARDEN_AUDIT_LOG is anyone's to set)
mkdir -p "$T/$EVIL" "$T/$EVILB"
both "$T/doctor" in_host env WARDEN_AUDIT_LOG="$T/$EVILB/audit.jsonl" "$W" doctor
verb_checks "doctor (audit log path)" "$T/doctor" "$EVILB_SHOWN"

# --- run's refusals quote the policy path and argv[0]
both "$T/run.nopol" in_host "$W" run -q --audit-log "$T/r.jsonl" -p "$T/$EVILB.yaml" -- /bin/true
verb_checks "run: a policy that cannot be read" "$T/run.nopol" "$EVILB_SHOWN"
echo "not a program" >"$T/$EVILB/prog"
both "$T/run.noexec" in_host "$W" run -q --audit-log "$T/r.jsonl" -- "$T/$EVILB/prog"
verb_checks "run: argv[0] not an executable file" "$T/run.noexec" "$EVILB_SHOWN"

# --- trace and init: their summaries name the program (argv[0]), the trace and the policy
# written, and init's warning the file the program read
install -d -m 0755 "$T/tr" "$T/tr/d" "$T/tr/bin"
echo data >"$T/tr/d/$EVILF"
cp /bin/cat "$T/tr/bin/$EVIL"
# traces TRACE...: `warden trace -o TRACE` of cat over the file, in $T/tr, once a TRACE
traces() {
	local t
	for t in "$@"; do
		(cd "$T/tr" && in_host "$W" trace -o "$t" --audit-log "$T/tr/audit.jsonl" -- \
			"$T/tr/bin/$EVIL" "$T/tr/d/$EVILF")
	done
}
both "$T/trace" traces "$T/tr/$EVIL.jsonl"
check "trace: the trace was written" test -s "$T/tr/$EVIL.jsonl"
verb_checks "trace (the program, the trace's path)" "$T/trace" "$EVIL_SHOWN"
both "$T/init" in_host "$W" init --from "$T/tr/$EVIL.jsonl" -o "$T/tr/$EVIL.yaml"
check "init: the policy was written" test -s "$T/tr/$EVIL.yaml"
verb_checks "init --from (its summary: the policy's path)" "$T/init" "$EVIL_SHOWN"
check "init: its warning names the file it did not grant, escaped" shows "$T/init" "$EVILF_SHOWN"

lab_finish
