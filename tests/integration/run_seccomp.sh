#!/usr/bin/env bash
# run_seccomp.sh - the seccomp filter of `warden run` (issue 10, items 1, 4 and 7), proved from
# inside real runs in the lab: the TIOCSTI attack on the caller's shell through a real pty, every
# refused system call next to an allowed one made the same way (tests/integration/seccomp_probe.c
# makes raw calls and prints `ok` or the errno's name), the foreign ABIs, bwrap's second layer,
# the `sandbox.allow: [userns]` loosening, `warden run --print-seccomp`, the audit record, and
# ordinary programs (curl, git, python3, node, an interactive bash) still working.
#
# On the code before the filter the refusals below print `ok`, EFAULT, EINVAL, EBADF, ENOENT or
# ENOSYS instead (the call reached the kernel), and the attack's file appears.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
PROBE_BIN=${WD_SECCOMP_PROBE:-${WARDEN_BUILD_DIR:-$SRC/build}/tests/integration/seccomp_probe}
# a helper that is missing is a test error, never a skip or a pass
for need in "$PROBE_BIN" /usr/bin/python3 /usr/bin/script /usr/bin/git /usr/bin/bash; do
	[[ -x $need ]] || { echo "FAIL - $need is missing"; echo "0 passed, 1 failed"; exit 1; }
done
lab_up

# the program may run as an unprivileged uid: what it reads is 0755, what it writes 0777
T=$(lab_tmpdir wd-run-seccomp)
lab_on_exit rm -rf "$T"
chmod 0755 "$T"
mkdir -p "$T/bin" "$T/rw"
chmod 0755 "$T/bin"
chmod 0777 "$T/rw"
install -m 0755 "$PROBE_BIN" "$T/bin/seccomp_probe"
A=$T/audit.jsonl
export WARDEN_GATEWAY_BIN=$GW

cat >"$T/p.yaml" <<EOF
version: 1
filesystem:
  read: ["$T/bin", "$LAB_CA"]
  write: ["$T/rw"]
network:
  allow: [allowed.test]
EOF
cat >"$T/userns.yaml" <<EOF
version: 1
filesystem:
  read: ["$T/bin"]
sandbox:
  allow: [userns]
EOF

teardowns_quiet() { lab_teardowns_quiet "$A"; }
settle() { lab_wait 20 teardowns_quiet && in_host "$W" gc -q --pool; }
wr() { in_host "$W" run -q --audit-log "$A" "$@"; }
# p ARGS...: the probe inside a run of the default policy; pu: of the userns policy
p() { wr -p "$T/p.yaml" -- "$T/bin/seccomp_probe" "$@"; }
pu() { wr -p "$T/userns.yaml" -- "$T/bin/seccomp_probe" "$@"; }

# refused DESC WANT PROBE ARGS...: check_eq DESC WANT p PROBE ARGS..., beside the kernel's own
# answer to the same probe made outside any sandbox as nobody (the program's standing there):
# where the kernel alone answers WANT too (a call that needs a capability, a feature compiled
# out or turned off by a sysctl), the output says the refusal is also the kernel's. The
# filter's own answer for every row is proved on any kernel by unit.test_sandbox's BPF runs.
refused() {
	local desc=$1 want=$2 host
	shift 2
	host=$(setpriv --reuid=65534 --regid=65534 --clear-groups -- "$T/bin/seccomp_probe" "$@" 2>&1)
	if [[ $host == "$want" ]]; then
		echo "# ($desc: the kernel answers $want outside a sandbox too, as nobody)"
	fi
	check_eq "$desc" "$want" p "$@"
}

# status_has REGEX: a line of the probe's /proc/self/status inside a run matches
status_has() { p status | grep -Eq "$1"; }

echo "# the filter is installed in the program"
check "/proc/self/status says Seccomp: 2 (filter mode)" status_has "^Seccomp:[[:space:]]+2$"
check "... one filter" status_has "^Seccomp_filters:[[:space:]]+1$"
check "... with no_new_privs set" status_has "^NoNewPrivs:[[:space:]]+1$"
check_eq "control: a raw getpid through the same probe" ok p sys 39

echo "# item 4: the keyring calls"
refused "keyctl(KEYCTL_GET_KEYRING_ID, @s) is refused" EPERM sys 250 0 -3 0
refused "add_key is refused" EPERM sys 248 0 0 0 0 0
refused "request_key is refused" EPERM sys 249 0 0 0 0

echo "# item 7: calls that reached the kernel"
refused "bpf is refused" EPERM sys 321 9999 0 0
refused "userfaultfd(UFFD_USER_MODE_ONLY) is refused" EPERM sys 323 0x80001
refused "io_uring_setup is refused" EPERM sys 425 1 0
refused "io_uring_enter is refused" EPERM sys 426 -1 0 0 0 0 0
refused "io_uring_register is refused" EPERM sys 427 -1 0 0 0
refused "perf_event_open is refused" EPERM sys 298 0 0 -1 -1 0
refused "open_by_handle_at is refused" EPERM sys 304 -1 0 0
refused "name_to_handle_at is refused" EPERM sys 303 -100 0 0 0 0
refused "fanotify_init(FAN_REPORT_FID) is refused" EPERM sys 300 0x200 0
refused "setns is refused" EPERM sys 308 -1 0
refused "kexec_load is refused" EPERM sys 246 0 0 0 0
refused "kexec_file_load is refused" EPERM sys 320 -1 -1 0 0 0
refused "init_module is refused" EPERM sys 175 0 0 0
refused "finit_module is refused" EPERM sys 313 -1 0 0
refused "delete_module is refused" EPERM sys 176 0 0
refused "mount is refused" EPERM sys 165 str:none str:/nonexistent str:tmpfs 0 0
refused "umount2 is refused" EPERM sys 166 str:/nonexistent 0
refused "pivot_root is refused" EPERM sys 155 str:/ str:/
refused "open_tree is refused" EPERM sys 428 -100 str:/ 0
refused "fsopen is refused" EPERM sys 430 str:tmpfs 0
refused "fsconfig is refused" EPERM sys 431 -1 0 0 0 0
refused "fsmount is refused" EPERM sys 432 -1 0 0
refused "fspick is refused" EPERM sys 433 -100 str:/ 0
refused "move_mount is refused" EPERM sys 429 -1 0 -1 0 0
refused "mount_setattr is refused" EPERM sys 442 -100 str:/ 0 0 0
refused "open_tree_attr (467, by number) is refused" EPERM sys 467 -100 str:/ 0 0 0
check_eq "control: a raw getppid works" ok p sys 110
check_eq "control: a raw openat(AT_FDCWD, \"/\", O_PATH) works" ok p sys 257 -100 str:/ 0x200000

echo "# namespaces"
refused "unshare(CLONE_NEWUSER) is refused" EPERM unshare 0x10000000
refused "unshare(CLONE_NEWNET) is refused" EPERM unshare 0x40000000
refused "unshare(CLONE_NEWNS) is refused" EPERM unshare 0x20000
refused "unshare(CLONE_NEWTIME) is refused" EPERM unshare 0x80
check_eq "control: unshare(CLONE_FILES) works" ok p unshare 0x400
refused "clone(CLONE_NEWUSER) is refused" EPERM clone 0x10000000
refused "clone(CLONE_NEWPID) is refused" EPERM clone 0x20000000
check_eq "control: a plain clone() works" ok p clone 0
refused "clone3 answers ENOSYS (glibc falls back to clone)" ENOSYS sys 435 0 0
check_eq "control: fork, pipes, threads and subprocesses through glibc work" "T S" \
	wr -p "$T/p.yaml" -- /usr/bin/python3 -c 'import threading, subprocess
t = threading.Thread(target=print, args=("T",), kwargs={"end": " "}); t.start(); t.join()
print(subprocess.run(["sh", "-c", "echo S | cat"], capture_output=True, text=True).stdout.strip())'
check_fails "unshare -U (util-linux) fails inside a run" wr -p "$T/p.yaml" -- unshare -U true
check "control: the same unshare with sandbox.allow: [userns] works" \
	wr -p "$T/userns.yaml" -- unshare -U true

echo "# personality"
refused "personality(READ_IMPLIES_EXEC) is refused" EPERM personality 0x0400000
refused "personality(ADDR_NO_RANDOMIZE) is refused" EPERM personality 0x0040000
refused "personality(MMAP_PAGE_ZERO) is refused" EPERM personality 0x0100000
refused "personality with bits above 32 is refused" EPERM personality 0x100000000
check_eq "control: personality(0xffffffff) (query) works" ok p personality 0xffffffff
check_eq "control: personality(PER_LINUX) works" ok p personality 0
check_eq "control: personality(PER_LINUX32) works" ok p personality 0x8
check_eq "control: personality(UNAME26) works" ok p personality 0x20000

echo "# terminal ioctls (on the probe's own controlling pty)"
refused "TIOCSTI is refused" EPERM pty-ioctl 0x5412
refused "TIOCSTI with bits above 32 in the request is refused" EPERM pty-ioctl 0x100005412
refused "TIOCLINUX is refused" EPERM pty-ioctl 0x541C
refused "TIOCLINUX with bits above 32 is refused" EPERM pty-ioctl 0xffffffff0000541C
check_eq "control: TCGETS on the same pty works" ok p pty-ioctl 0x5401
check_eq "control: TCGETS with bits above 32 works (the kernel reads 32)" ok \
	p pty-ioctl 0x100005401

echo "# item 1: keystrokes pushed into the caller's shell"
cat >"$T/bin/push.py" <<'EOF'
# push.py TEXT: push TEXT and a newline into the terminal on stdin with TIOCSTI
import fcntl, sys, termios
for c in sys.argv[1].encode() + b"\n":
    fcntl.ioctl(0, termios.TIOCSTI, bytes([c]))
EOF
chmod 0644 "$T/bin/push.py"
# in_pty LOG LINE...: an interactive bash in a real pty (script) is typed LINE... one after
# the other, each once the previous one has finished (it touches a step file), then `exit`
in_pty() {
	local log=$1 i=0 line
	shift
	rm -f "$T"/step.*
	{
		for line in "$@"; do
			i=$((i + 1))
			printf '%s; touch %s\n' "$line" "$T/step.$i"
			lab_wait 60 test -e "$T/step.$i" || break
			sleep 0.2
		done
		echo exit
	} | script -qc 'bash --norc -i' /dev/null >"$log" 2>&1
}
W_CMD="ip netns exec $LAB_HOST_NS $W run -q --audit-log $A -p $T/p.yaml --"
if [[ $(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null || echo 1) == 1 ]]; then
	in_pty "$T/ctl.log" "/usr/bin/python3 $T/bin/push.py 'touch $T/control-pwned'"
	check "control: the pusher outside warden injects a command (the harness sees it)" \
		test -e "$T/control-pwned"
	in_pty "$T/attack.log" "$W_CMD /usr/bin/python3 $T/bin/push.py 'touch $T/pwned'"
	check "the attack's warden run ran to its end" test -e "$T/step.1"
	check_fails "a TIOCSTI pusher under warden run injects nothing (no $T/pwned)" \
		test -e "$T/pwned"
	check "... its TIOCSTI failed with EPERM" grep -q "PermissionError" "$T/attack.log"
else
	echo "# (dev.tty.legacy_tiocsti = 0: the kernel refuses TIOCSTI itself; attack not replayed)"
fi
in_pty "$T/tty.log" "$W_CMD sh -c 'test -t 0 && test -t 1 && echo TTY-\$((6*7))'"
check "an interactive program under warden run sees a terminal (test -t 0)" \
	grep -aq "TTY-42" "$T/tty.log"
# bash -i under warden: a typed command runs, job control (fg) and line editing (DEL) work
{
	printf '%s /bin/bash --norc -i\n' "$W_CMD"
	sleep 1
	printf 'sleep 0.2 & fg %%1 && echo FG-DONE\n'
	printf 'echo EDIT-ABX\x7fC\n'
	printf 'echo INNER-$((6*7))\n'
	printf 'exit\n'
	sleep 1
	printf 'exit\n'
} | script -qc 'bash --norc -i' /dev/null >"$T/bash.log" 2>&1
check "bash -i under warden run runs a command typed into it" grep -aq "INNER-42" "$T/bash.log"
check "... with job control (fg %1)" grep -aq "^FG-DONE" "$T/bash.log"
check_fails "... and no 'no job control' complaint" grep -aq "no job control" "$T/bash.log"
check "... and line editing (DEL erases the X)" grep -aq "^EDIT-ABC" "$T/bash.log"

echo "# setuid and setgid bits"
check "the program creates a file in its write grant" wr -p "$T/p.yaml" -- \
	sh -c "cp /usr/bin/id '$T/rw/s' && chmod 0755 '$T/rw/s'"
for how in chmod fchmod fchmodat fchmodat2; do
	check_eq "$how 4755 is refused" EPERM p "$how" 4755 "$T/rw/s"
	check_eq "$how 2755 is refused" EPERM p "$how" 2755 "$T/rw/s"
	check_eq "control: $how 0750 works" ok p "$how" 0750 "$T/rw/s"
done
check_fails "chmod u+s (coreutils) fails" wr -p "$T/p.yaml" -- chmod u+s "$T/rw/s"
check "control: the same chmod u+x works" wr -p "$T/p.yaml" -- chmod u+x "$T/rw/s"
check_eq "no setuid or setgid bit reached the host file" 750 stat -c %a "$T/rw/s"

echo "# socket families"
refused "AF_VSOCK is refused with EAFNOSUPPORT" EAFNOSUPPORT socket 40 1
refused "AF_PACKET is refused with EAFNOSUPPORT" EAFNOSUPPORT socket 17 3
refused "AF_KEY is refused with EAFNOSUPPORT" EAFNOSUPPORT socket 15 3
refused "AF_ALG is refused with EAFNOSUPPORT" EAFNOSUPPORT socket 38 5
refused "AF_UNSPEC is refused with EAFNOSUPPORT" EAFNOSUPPORT socket 0 1
refused "family 2 with bits above 32 is refused" EAFNOSUPPORT sys 41 0x100000002 1 0
check_eq "control: AF_UNIX works" ok p socket 1 1
check_eq "control: AF_INET works" ok p socket 2 1
check_eq "control: AF_INET6 works" ok p socket 10 1
check_eq "control: AF_NETLINK works" ok p socket 16 3

echo "# foreign ABIs"
# The i386 entry (int $0x80) is the kernel's to have: some kernels have none (ia32_emulation=0,
# some FRED machines), and there the instruction dies of SIGSEGV with no filter at all. The
# kernel is asked first, outside any sandbox; the filter's own refusal of i386 is proved on
# every kernel by unit.test_sandbox (test_program_abis runs the BPF on an i386 seccomp_data).
I386_HOST=$("$PROBE_BIN" i386 20 2>&1) || I386_HOST="the probe failed: $I386_HOST"
# i386_refused CMD...: the i386 probe under warden cannot succeed: EPERM from the filter or, on
# a kernel without the entry, SIGSEGV; a kernel with the entry must give EPERM
i386_refused() {
	local got
	got=$("$@") || return 1
	case $I386_HOST/$got in
	ok/EPERM | SIGSEGV/EPERM | SIGSEGV/SIGSEGV) return 0 ;;
	esac
	echo "got '$got' (outside a sandbox: '$I386_HOST')"
	return 1
}
case $I386_HOST in
ok) echo "# this kernel has the i386 entry (int \$0x80 works outside a sandbox): the filter's EPERM is checked" ;;
SIGSEGV) echo "# this kernel has no i386 entry (int \$0x80 dies of SIGSEGV outside any sandbox): the refusal is the kernel's; under warden it must not succeed either" ;;
*) check "control: the i386 probe runs outside a sandbox ($I386_HOST)" false ;;
esac
check "i386 getpid through int 0x80 is refused" i386_refused p i386 20
refused "x32 getpid (39 | __X32_SYSCALL_BIT) is refused" EPERM x32 39
check_eq "control: x86_64 getpid through syscall works" ok p sys 39

echo "# sandbox.allow: [userns] loosens it on purpose"
check_eq "with the loosening, unshare(CLONE_NEWUSER) works" ok pu unshare 0x10000000
check_eq "... clone(CLONE_NEWUSER) works" ok pu clone 0x10000000
check_eq "... unshare -U (util-linux) runs a program in a nested user namespace" 65534 \
	wr -p "$T/userns.yaml" -- unshare -U id -u
# the program is not root on the host, so it may map its own uid in a namespace of its own
# (what Chromium's sandbox does); as kuid 0 without CAP_SETFCAP it could not
check_eq "... unshare -r maps the program's own uid to root of a nested namespace" 0 \
	wr -p "$T/userns.yaml" -- unshare -r id -u
check_fails "... and without the loosening it cannot" \
	wr -p "$T/p.yaml" -- unshare -r id -u
check_eq "... and the keyring is still refused" EPERM pu sys 250 0 -3 0
check_eq "... and TIOCSTI is still refused" EPERM pu pty-ioctl 0x5412
check "... and i386 is still refused" i386_refused pu i386 20

echo "# what the filter is, shown without root"
seccomp_text() { setpriv --reuid=65534 --regid=65534 --clear-groups "$W" run --print-seccomp "$@"; }
seccomp_lists() {
	local out w
	out=$(seccomp_text) || return 1
	for w in keyctl TIOCSTI clone3 ENOSYS EAFNOSUPPORT i386 x32 "BPF: [0-9]+ instructions"; do
		grep -Eq "$w" <<<"$out" || { echo "missing: $w"; return 1; }
	done
}
check "warden run --print-seccomp as nobody exits 0" seccomp_text
check "... and lists keyctl, TIOCSTI, clone3, the foreign ABIs, the program's size" seccomp_lists
check "--print-seccomp -p userns.yaml says the namespace rules are loosened" bash -c \
	'setpriv --reuid=65534 --regid=65534 --clear-groups "$0" run --print-seccomp -p "$1" |
	grep -q "loosened by sandbox.allow: userns"' "$W" "$T/userns.yaml"
printf 'version: 1\nsandbox:\n  allow: [usrns]\n' >"$T/typo.yaml"
check_eq "an unknown sandbox.allow value: warden policy check exits 2" 2 bash -c \
	'"$0" policy check "$1" >/dev/null 2>&1; echo $?' "$W" "$T/typo.yaml"
check "... naming file:line:col and the values it takes" bash -c \
	'"$0" policy check "$1" 2>&1 | grep -q "typo.yaml:3:11: error: .*usrns.*userns"' \
	"$W" "$T/typo.yaml"
check "warden doctor checks that the filter builds and loads" bash -c \
	'ip netns exec "$0" "$1" doctor | grep -Eq "^ok +seccomp"' "$LAB_HOST_NS" "$W"

echo "# ordinary programs keep working under the filter"
check_eq "curl HTTPS to an allowed name" "hello from allowed.test" \
	wr -p "$T/p.yaml" -- curl -fsS --max-time 8 --cacert "$LAB_CA" https://allowed.test/
check_eq "git init, commit, status in the write grant" "1 clean" wr -p "$T/p.yaml" -- sh -c \
	"cd '$T/rw' && git init -q g && cd g && git -c user.email=a@b -c user.name=n commit -q \
	--allow-empty -m x && printf '%s ' \$(git rev-list --count HEAD) && \
	git status --porcelain | wc -l | sed 's/^0\$/clean/'"
check_eq "node: fs (sync and promises) and child_process" "y z" wr -p "$T/p.yaml" -- node -e '
	const fs = require("fs"), cp = require("child_process");
	fs.writeFileSync("/tmp/x", "y");
	fs.promises.readFile("/tmp/x", "utf8").then(v =>
		console.log(v + " " + cp.execFileSync("echo", ["z"]).toString().trim()));'

echo "# the audit record"
check "run.start records that the filter is on" jq -e -s \
	'[.[] | select(.action == "run.start")] | length > 0 and
	 all(.isolation | test("seccomp=on"))' "$A"
check "run.start records what was loosened and that bwrap allowed nested namespaces" jq -e -s \
	'[.[] | select(.action == "run.start" and (.isolation | test("allow=userns")))] |
	 length > 0 and all(.isolation | test("userns=allowed"))' "$A"
check "the other runs record userns=refused" jq -e -s \
	'[.[] | select(.action == "run.start" and (.isolation | test("allow=") | not))] |
	 length > 0 and all(.isolation | test("userns=refused"))' "$A"

check "the background teardowns finish; warden gc --pool drains the pool" settle
check "no sandbox interface is left in lab-host" lab_wait 5 lab_no_match '^wd-' in_host ip -br link
check "control: the same listing shows lab-host's veth-wan" lab_match '^veth-wan' in_host ip -br link
lab_finish
