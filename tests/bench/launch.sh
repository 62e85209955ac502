#!/usr/bin/env bash
# tests/bench/launch.sh - the launch time of `warden run -q -p minimal.yaml -- /bin/true`, root
# mode and rootless (as the lab user), in a lab: the median wall time of N launches each, and
# the medians of the WARDEN_TIMING stages that the durable run.start spans (`audit`, where it is
# written, and `durable`, where the launcher waits for its fdatasync before exec). For
# docs/benchmarks.md ("Launch: the durable run.start"), then every stage's median; the full
# harness is tests/bench/run.
#
# Usage (as root): tests/bench/launch.sh [N]      (N launches per mode, default 30)
#   WARDEN_BIN / WARDEN_BUILD_DIR choose the binaries (another build, an older commit's).
# The audit logs are on the disk the users' homes are on (/var/tmp), as a real user's
# ~/.local/state/warden/audit.jsonl is: a log on tmpfs would make every fdatasync free.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

N=${1:-30}
lab_require_root
lab_need_run_tools
lab_user || { echo "FAIL: no unprivileged test user"; exit 1; }
lab_up

T=$(mktemp -d /var/tmp/wd-bench-launch-XXXXXX)
lab_on_exit rm -rf "$T"
chown "$LAB_USER_UID:$LAB_USER_GID" "$T"
chmod 0755 "$T"
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0
P=$SRC/deploy/examples/minimal.yaml

# launches MODE: N timed launches (wall ms, one a line), then N with WARDEN_TIMING=1 to stderr
launches()
{
	local pre=(in_host env) log=$T/root.jsonl
	if [[ $1 == rootless ]]; then
		pre=(in_host_user env)
		log=$T/user/audit.jsonl
	fi
	"${pre[@]}" WARDEN_AUDIT_LOG="$log" python3 - "$N" "$W" "$P" <<'EOF'
import os, re, statistics, subprocess, sys, time
n, w, p = int(sys.argv[1]), sys.argv[2], sys.argv[3]
cmd = [w, 'run', '-q', '-p', p, '--', '/bin/true']
for _ in range(3):  # warm-up
    subprocess.run(cmd, check=True)
wall = []
for _ in range(n):
    t = time.perf_counter()
    subprocess.run(cmd, check=True)
    wall.append((time.perf_counter() - t) * 1000)
env = dict(os.environ, WARDEN_TIMING='1')
st = {}
for _ in range(n):
    r = subprocess.run(cmd, check=True, env=env, stderr=subprocess.PIPE, text=True)
    for line in r.stderr.splitlines():
        m = re.match(r'warden run: timing: (\S+)\s+([0-9.]+) ms', line)
        if m:
            st.setdefault(m.group(1), []).append(float(m.group(2)))
med = lambda v: statistics.median(v) if v else float('nan')
print(f"wall median {med(wall):.1f} ms (min {min(wall):.1f}, max {max(wall):.1f}, n={n});"
      f" stages: audit {med(st.get('audit', [])):.2f} ms,"
      f" durable {med(st.get('durable', [])):.2f} ms,"
      f" network {med(st.get('network', [])):.2f} ms")
print("  every stage (median ms): " + ", ".join(f"{k} {med(v):.2f}" for k, v in st.items()))
EOF
}

install -d -m 0700 -o "$LAB_USER_UID" -g "$LAB_USER_GID" "$T/user"
for mode in root rootless; do
	out=$(launches "$mode") || { echo "FAIL: $mode launches did not run"; exit 1; }
	echo "$mode: $out"
done
LAB_FINISHED=1
