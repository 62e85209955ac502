#!/usr/bin/env bash
# run_escape.sh - the ways out of a `warden run` sandbox that issue 10 closed, each tried as an
# attacker would from inside a real run in the lab, each next to a positive control that
# proves the probe itself works: the program's uid (kuid 0, /proc/sys, a planted setuid
# file), inherited descriptors, bwrap's own environment and command line, the session
# keyring, a symlink planted by one run that becomes the next run's grant, the audit log
# inside a grant, the host information in /proc, and the disk bound.
#
# Probes print what they found (a word per fact) and are compared with check_eq, so a probe
# that cannot run (exit 127, a missing file) prints nothing and fails the check.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
# probes that cannot run are errors, not skips
[[ -x /usr/bin/python3 ]] || { echo "FAIL: /usr/bin/python3 is missing (deploy/debian-packages)"; exit 1; }
command -v setpriv >/dev/null || { echo "FAIL: setpriv is missing"; exit 1; }
lab_up

T=$(lab_tmpdir wd-run-escape)
lab_on_exit rm -rf "$T"
# the sandbox user reaches the test's folders the way any other user would
chmod 0755 "$T"
A=$T/audit.jsonl
export WARDEN_GATEWAY_BIN=$GW
NOBODY=65534

settle() { lab_wait 20 lab_teardowns_quiet "$A" && in_host "$W" gc -q --pool; }
# wr ARGS...: warden run inside lab-host with the test's audit log
wr() { in_host "$W" run -q --audit-log "$A" "$@"; }

mkdir -p "$T/ro" "$T/rw" "$T/secret" "$T/proj" "$T/victim" "$T/real"
echo "readable" >"$T/ro/file"
echo "top secret" >"$T/secret/file"
chmod 0700 "$T/secret"
chmod 0600 "$T/secret/file"
# the write grants: the sandbox user's (and open to anyone, so that the same checks also
# run, and fail, where the program is root without capabilities)
chown "$NOBODY:$NOBODY" "$T/rw" "$T/proj"
chmod 0777 "$T/rw" "$T/proj" "$T/victim"

cat >"$T/files.yaml" <<EOF
version: 1
filesystem:
  read: ["$T/ro"]
  write: ["$T/rw"]
EOF

echo "# the program's uid"
# the uid the host's checks see is the owner of a file the program makes (inside, bwrap's
# nested user namespaces map the program's uid to 0 of the first one, whatever it is)
kuid() {
	rm -f "$T/rw/kuid"
	env "$@" ip netns exec "$LAB_HOST_NS" "$W" run -q --audit-log "$A" -p "$T/files.yaml" -- \
		sh -c ': >"$0/rw/kuid"' "$T" && stat -c %u "$T/rw/kuid"
}
check_eq "started by root, the program is the sandbox user (uid $NOBODY), never kuid 0" \
	"$NOBODY" kuid
check_eq "started under sudo, the program is the invoking user" "4321" \
	kuid SUDO_UID=4321 SUDO_GID=4321
# the same, with 2^32 added: atoi() wrapped it to uid 4321; it must stop the run instead
# (the check above is its control: the same run with the plain id succeeds)
sudo_wrapped() {
	rm -f "$T/rw/kuid"
	if env SUDO_UID=4294971617 SUDO_GID=4321 ip netns exec "$LAB_HOST_NS" "$W" run -q \
		--audit-log "$A" -p "$T/files.yaml" -- sh -c ': >"$0/rw/kuid"' "$T" 2>"$T/sudo.err"; then
		echo "the run started as uid $(stat -c %u "$T/rw/kuid" 2>&1)"
		return 1
	fi
	cat "$T/sudo.err"
	grep -q 'SUDO_UID `4294971617`' "$T/sudo.err" && test ! -e "$T/rw/kuid"
}
check "a SUDO_UID past 2^32 stops the run (no wrap to another user)" sudo_wrapped
check_eq "WARDEN_SANDBOX_USER picks another one" "4322" kuid WARDEN_SANDBOX_USER=4322
# opening for writing without writing anything: a writable knob opens, a read-only one not
knobs() {
	wr -p "$T/files.yaml" -- sh -c '
	for k in /proc/sys/kernel/core_pattern /proc/sysrq-trigger "$0/rw/probe"; do
		if (: >>"$k") 2>/dev/null; then echo "writable $k"; else echo "closed $k"; fi
	done
	test -r /proc/sys/kernel/ostype && echo "readable ostype"' "$T"
}
check_eq "/proc/sys and /proc/sysrq-trigger are closed; the write grant is writable" \
	"closed /proc/sys/kernel/core_pattern
closed /proc/sysrq-trigger
writable $T/rw/probe
readable ostype" knobs
rm -f "$T/rw/s"
wr -p "$T/files.yaml" -- sh -c 'cp /usr/bin/id "$0/rw/s"; chmod 4755 "$0/rw/s"' "$T" >/dev/null 2>&1
check "the planted file exists (the probe ran)" test -x "$T/rw/s"
check_eq "a file the program leaves in a grant is not root's" "$NOBODY" stat -c %u "$T/rw/s"
check_eq "a setuid file planted by a run does not run as root" "$NOBODY" \
	setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups "$T/rw/s" -u

echo "# inherited descriptors"
# the caller holds a directory fd (the host's /), a pipe and a socket, none CLOEXEC
inherit() {
	python3 - "$LAB_HOST_NS" "$W" "$A" "$T" <<'PY'
import os, socket, subprocess, sys
ns, w, a, t = sys.argv[1:5]
d = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
r, wp = os.pipe()
s1, s2 = socket.socketpair()
for i, fd in enumerate([d, r, s1.fileno()]):    # at 20, 21, 22, inheritable
    os.dup2(fd, 20 + i)
# every fd the shell has but stdio (the glob's own directory fd is closed by then)
probe = ('for f in /proc/self/fd/*; do n=${f##*/}; [ "$n" -gt 2 ] && [ -e "$f" ] && echo "open $n"; done; '
         'cat /proc/self/fd/20/' + t.lstrip('/') + '/secret/file 2>/dev/null; echo done')
p = subprocess.run(["ip", "netns", "exec", ns, w, "run", "-q", "--audit-log", a, "--",
                    "sh", "-c", probe], pass_fds=(20, 21, 22),
                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
sys.stdout.write(p.stdout)
PY
}
check_eq "no descriptor of the caller reaches the program (dir, pipe, socket)" "done" inherit
check_eq "stdio does reach it" "through" bash -c \
	'echo through | ip netns exec "$0" "$1" run -q --audit-log "$2" -- cat' \
	"$LAB_HOST_NS" "$W" "$A"

echo "# bwrap's own environment and command line"
cat >"$T/env.yaml" <<EOF
version: 1
env:
  allow: [WD_TOKEN]
EOF
pid1() {
	AWS_SECRET_ACCESS_KEY=hunter2-aws WD_TOKEN=tok-allowed wr -p "$T/env.yaml" -- sh -c '
	tr "\0" "\n" </proc/1/environ | grep -c "$(printf "%s-%s" hunter2 aws)"
	tr "\0" "\n" </proc/1/cmdline | grep -c "$(printf "%s-%s" tok allowed)"
	printenv WD_TOKEN'
}
check_eq "pid 1 (bwrap) holds neither the caller's environment nor env values in argv" \
	"0
0
tok-allowed" pid1
# the host's process list: another user on the host reads every process's argv
WD_TOKEN=tok-hidden wr -p "$T/env.yaml" -- sleep 3 &
bgrun=$!
check "the run started (its sleep is in the process list)" lab_wait 10 bash -c \
	'pgrep -f "sleep 3$" >/dev/null'
check_eq "the host's process list does not show env values" "0" bash -c \
	'ps -eo args | grep -v grep | grep -c tok-hidden'
wait "$bgrun"

echo "# the session keyring"
keyring() {
	python3 - "$LAB_HOST_NS" "$W" "$A" <<'PY'
import ctypes, os, subprocess, sys
ns, w, a = sys.argv[1:4]
libc = ctypes.CDLL(None, use_errno=True)
SYS_add_key, SYS_keyctl = 248, 250
KEYCTL_JOIN_SESSION_KEYRING, KEYCTL_SEARCH, SESSION = 1, 10, -3
libc.syscall.restype = ctypes.c_long
if libc.syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, None) < 0:
    sys.exit("cannot join a session keyring")
if libc.syscall(SYS_add_key, b"user", b"wd-escape-test", b"KEYSECRET", 9, SESSION) < 0:
    sys.exit("cannot add a key")
found = libc.syscall(SYS_keyctl, KEYCTL_SEARCH, SESSION, b"user", b"wd-escape-test", 0)
print("host found" if found > 0 else "host missing")
probe = r'''
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
k = libc.syscall(250, 10, -3, b"user", b"wd-escape-test", 0)
print("inside found" if k > 0 else "inside missing")
'''
p = subprocess.run(["ip", "netns", "exec", ns, w, "run", "-q", "--audit-log", a, "--",
                    "/usr/bin/python3", "-c", probe], stdout=subprocess.PIPE, text=True)
sys.stdout.write(p.stdout)
PY
}
check_eq "the caller's session keyring is not the program's" "host found
inside missing" keyring

echo "# a symlink planted by one run"
cat >"$T/a.yaml" <<EOF
version: 1
filesystem:
  write: ["$T/proj"]
EOF
cat >"$T/b.yaml" <<EOF
version: 1
filesystem:
  write: ["$T/proj/out"]
EOF
cat >"$T/c.yaml" <<EOF
version: 1
filesystem:
  write: ["$T/proj/real"]
EOF
wr -p "$T/a.yaml" -- sh -c 'ln -s "$0/victim" "$0/proj/out"; mkdir "$0/proj/real"' "$T"
check "run A planted the link (the probe ran)" test -L "$T/proj/out"
status_of() { "$@" >/dev/null 2>&1; echo $?; }
check_eq "run B, granted the planted link, is refused before it starts (exit 125)" "125" \
	status_of wr -p "$T/b.yaml" -- sh -c 'echo pwned >"$0/victim/x"' "$T"
check "... and nothing reached the link's target" test ! -e "$T/victim/x"
check "warden policy check names the link" bash -c \
	'"$0" policy check "$1" 2>&1 | grep -q "symbolic link"' "$W" "$T/b.yaml"
check_eq "a real folder the first run made is granted (control)" "written" bash -c \
	'ip netns exec "$0" "$1" run -q --audit-log "$2" -p "$3" -- sh -c \
	"echo written >\"\$0/proj/real/f\" && cat \"\$0/proj/real/f\"" "$4"' \
	"$LAB_HOST_NS" "$W" "$A" "$T/c.yaml" "$T"
check "control: the test -e above sees the file that run wrote" test -e "$T/proj/real/f"
# a link only root can replace (root's, in root's folder) is followed, with a warning
ln -s "$T/ro" "$T/rootlink"
cat >"$T/d.yaml" <<EOF
version: 1
filesystem:
  read: ["$T/rootlink"]
EOF
check_eq "a root-owned link in a root-owned folder is followed" "readable" \
	wr -p "$T/d.yaml" -- cat "$T/ro/file"
# a missing write grant under a planted dangling link is refused too
wr -p "$T/a.yaml" -- sh -c 'ln -s "$0/victim/made" "$0/proj/dangling"' "$T"
cat >"$T/e.yaml" <<EOF
version: 1
filesystem:
  write: ["$T/proj/dangling"]
EOF
check "run A planted a dangling link (the probe ran)" test -L "$T/proj/dangling"
check_eq "a missing write grant behind a planted dangling link is refused" "125" \
	status_of wr -p "$T/e.yaml" -- true
check "... and nothing was created at its target" test ! -e "$T/victim/made"

echo "# the audit log inside a grant"
mkdir -p "$T/rw/log"
chown "$NOBODY:$NOBODY" "$T/rw/log"
echo '{}' >"$T/rw/log/x"
check_eq "an audit log inside a write grant is refused (exit 125)" "125" status_of \
	in_host "$W" run -q --audit-log "$T/rw/log/audit.jsonl" -p "$T/files.yaml" -- \
	sh -c 'echo forged >>"$0/rw/log/audit.jsonl"' "$T"
check "... and the program did not run" test ! -e "$T/rw/log/audit.jsonl"
check "warden policy check refuses it too" bash -c \
	'! WARDEN_AUDIT_LOG="$0/rw/log/audit.jsonl" "$1" policy check "$2" >/dev/null 2>&1 &&
	WARDEN_AUDIT_LOG="$0/rw/log/audit.jsonl" "$1" policy check "$2" 2>&1 | grep -q "audit log"' \
	"$T" "$W" "$T/files.yaml"
check "the same policy with the audit log elsewhere runs (control)" \
	wr -p "$T/files.yaml" -- true
mkdir -p "$T/ro/log"
cat >"$T/rolog.yaml" <<EOF
version: 1
filesystem:
  read: ["$T/ro"]
EOF
rolog() {
	in_host "$W" run -q --audit-log "$T/ro/log/audit.jsonl" -p "$T/rolog.yaml" -- sh -c '
	cat "$0/ro/file"; ls "$0/ro/log" | wc -l' "$T"
}
check_eq "a read grant holding the audit log's folder sees it empty" "readable
0" rolog
check "... while the log there has lines" test -s "$T/ro/log/audit.jsonl"

echo "# /proc"
procinfo() {
	wr -- sh -c 'wc -c </proc/cmdline; cat /proc/sys/kernel/random/boot_id; test -r /proc/self/status && echo status'
}
out=$(procinfo 2>/dev/null)
check_eq "/proc/cmdline is empty inside; /proc/self/status is readable (control)" "0
status" bash -c 'printf "%s\n" "$0" | sed -n "1p;3p"' "$out"
check_eq "the boot id inside is not the host's" "differs" bash -c \
	'inner=$(printf "%s\n" "$0" | sed -n 2p); [[ -n $inner && $inner != $(cat /proc/sys/kernel/random/boot_id) ]] && echo differs' "$out"

echo "# disk"
cat >"$T/disk.yaml" <<EOF
version: 1
filesystem:
  write: ["$T/rw"]
limits: {disk_mb: 8}
EOF
disk() {
	wr -p "$T/disk.yaml" -- sh -c '
	for d in /tmp "$0/rw"; do
		dd if=/dev/zero of="$d/small" bs=1M count=4 2>/dev/null && echo "small ok"
		dd if=/dev/zero of="$d/big" bs=1M count=16 2>/dev/null || echo "big refused"
		rm -f "$d/small" "$d/big"
	done' "$T"
}
check_eq "limits.disk_mb bounds /tmp and a file in a write grant" "small ok
big refused
small ok
big refused" disk

settle
check "no run state is left" bash -c \
	'for id in $(jq -r -s ".[] | select(.action == \"run.start\") | .run" "$0"); do
		[[ ! -e $LAB_RUNS_DIR/$id ]] || exit 1; done' "$A"
lab_finish
