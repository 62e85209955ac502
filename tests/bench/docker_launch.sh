#!/usr/bin/env bash
# tests/bench/docker_launch.sh - the launch time of `warden run --backend docker`
# (run/sandbox_docker.c) beside the bubblewrap backend and the engine's own container per
# command, in a lab with a Docker engine of its own (tests/lab/docker.sh); for
# docs/benchmarks.md ("The Docker backend's launch"). Never a timing assertion.
#
# Usage (as root): tests/bench/docker_launch.sh [--runs N] [--warmup N] [--out FILE | --no-out]
#   --runs N     timed launches per case (default $DBENCH_RUNS, else 15)
#   --warmup N   untimed rounds first (default 2: the image's first start, the page cache)
#   --out FILE   the JSON result (default tests/bench/results/docker-launch-<date>.json)
#   WARDEN_BIN / WARDEN_BUILD_DIR choose the binaries (default build/dev), as for the lab tests.
# The cases, one after the other in every round (a b c d e a b c d e ...: a load drift hits all
# alike), each `-p deploy/examples/minimal.yaml` where it is a warden run, as root in lab-host:
#   linux          warden run -q --backend linux -- true    (root mode: bwrap, veth, nft)
#   docker         warden run -q --backend docker -- true   (the container mode)
#   docker-run     docker run --rm --network none IMAGE true (a container per command, bare)
#   docker-parts   docker create --network none IMAGE true; docker start -a ID;
#                  docker rm -f -v ID (the three CLI calls the backend makes at least)
#   docker-version docker version --format '{{.Server.Version}}' (the backend's probe, made
#                  once per run)
# All with WARDEN_TIMING=1 (a warden run prints its stage stamps on stderr: microseconds) and
# WARDEN_POOL=0 (no ready-made network: the bwrap case builds its own, as the container does,
# and no pool refill runs in the background of the next case). The audit log is on /var/tmp
# (a disk, as a user's is). Before the timing, three checks that each case runs what it says
# (the image's /bin/sh is busybox, the machine's is not) and the docker CLI calls of one run
# (a wrapper logs their verbs: printed, not judged); after it, that no container is left.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
export WARDEN_BUILD_DIR=${WARDEN_BUILD_DIR:-$SRC/build/dev}
export WARDEN_BIN=${WARDEN_BIN:-$WARDEN_BUILD_DIR/launcher/warden}
RUNS=${DBENCH_RUNS:-15} WARMUP=2 OUT=default
ARGS=("$@")
while (($#)); do
	case $1 in
	--runs) RUNS=${2:-}; shift ;;
	--warmup) WARMUP=${2:-}; shift ;;
	--out) OUT=${2:-}; shift ;;
	--no-out) OUT=- ;;
	*) sed -n '7,11p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
	esac
	shift
done
[[ $RUNS =~ ^[1-9][0-9]*$ && $WARMUP =~ ^[0-9]+$ && -n $OUT ]] ||
	{ echo "docker_launch.sh: --runs N (N > 0), --warmup N, --out FILE" >&2; exit 2; }
set -- "${ARGS[@]}"
. "$SRC/tests/lab/lib.sh"
. "$SRC/tests/lab/docker.sh"

lab_require_root
lab_need_run_tools
lab_docker_require
lab_up
lab_docker_up || { echo "FAIL - the engine did not start"; echo "0 passed, 1 failed"; exit 1; }
IMG=wdlab/bench:lab
lab_docker_image "$IMG" || { echo "FAIL - the image"; echo "0 passed, 1 failed"; exit 1; }

DATE=$(date -u +%Y-%m-%dT%H%M%SZ)
[[ $OUT != default ]] || OUT=$SRC/tests/bench/results/docker-launch-$DATE.json
T=$(mktemp -d /var/tmp/wd-bench-docker-XXXXXX) || exit 1
lab_on_exit rm -rf "$T"
chmod 0755 "$T"
P=$SRC/deploy/examples/minimal.yaml
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0 WARDEN_TIMING=1 WARDEN_AUDIT_LOG=$T/audit.jsonl
export WARDEN_DOCKER=$LAB_DOCKER WARDEN_DOCKER_IMAGE=$IMG
export WARDEN_DOCKER_INIT=$WARDEN_BUILD_DIR/run/warden-docker-init

# each case runs what it says: the image's /bin/sh is busybox's, the machine's is not
host_sh=$(readlink /bin/sh)
[[ -n $host_sh && ${host_sh##*/} != busybox ]] ||
	{ echo "FAIL - this machine's /bin/sh ('$host_sh') cannot tell the image from it"; exit 1; }
check_eq "the docker backend runs the program in the image (its /bin/sh is busybox)" busybox \
	in_host "$W" run -q --backend docker -p "$P" -- readlink /bin/sh
check_eq "control: the linux backend runs it on the machine's files (/bin/sh is $host_sh)" \
	"$host_sh" in_host "$W" run -q --backend linux -p "$P" -- readlink /bin/sh
check_eq "docker run runs it in the image" busybox \
	in_host "$LAB_DOCKER" run --rm --network none "$IMG" readlink /bin/sh
# what one run asks of the docker CLI, in order (printed for the breakdown, not judged): the
# same CLI behind a wrapper that logs each call's verb
# shellcheck disable=SC2016  # $1 and $@ are the wrapper's
printf '#!/bin/sh\necho "$1" >>%q\nexec %q "$@"\n' "$T/calls.log" "$LAB_DOCKER" >"$T/docker-calls"
chmod 0755 "$T/docker-calls"
check "a docker-backend run through a CLI wrapper that logs its calls" \
	in_host env WARDEN_DOCKER="$T/docker-calls" "$W" run -q --backend docker -p "$P" -- true
CALLS=$(paste -sd' ' "$T/calls.log" 2>/dev/null)
echo "# the docker CLI calls of one warden run --backend docker: ${CALLS:-none}"
((LAB_FAILED == 0)) || lab_finish

D=$LAB_DOCKER
BUILD_TYPE=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$WARDEN_BUILD_DIR/CMakeCache.txt" 2>/dev/null)
jq -n --argjson runs "$RUNS" --argjson warmup "$WARMUP" --arg w "$W" --arg p "$P" \
	--arg d "$D" --arg img "$IMG" --arg date "$DATE" \
	--arg commit "$(git -C "$SRC" describe --always --dirty 2>/dev/null)" \
	--arg build "$BUILD_TYPE" \
	--arg nproc "$(nproc)" --arg kernel "$(uname -r)" \
	--arg cpu "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)" \
	--arg engine "$("$D" version --format '{{.Server.Version}}' 2>/dev/null)" \
	--arg bwrap "$(bwrap --version 2>/dev/null)" --arg argv "${ARGS[*]}" --arg calls "$CALLS" \
	'def w($backend): [$w, "run", "-q", "--backend", $backend, "-p", $p, "--", "true"];
	{runs: $runs, warmup: $warmup,
	 meta: {date: $date, commit: $commit, build_type: $build, argv: $argv,
		machine: {nproc: $nproc, cpu: $cpu, kernel: $kernel},
		versions: {docker_engine: $engine, bwrap: $bwrap},
		docker_cli_calls_per_run: $calls,
		env: "WARDEN_TIMING=1 WARDEN_POOL=0, as root in lab-host, audit log on /var/tmp",
		policy: "deploy/examples/minimal.yaml", image: "busybox-static only (lab_docker_image)"},
	 cases: [
	  {key: "linux", label: "warden run --backend linux (bwrap, root mode)",
	   cmd: "warden run -q --backend linux -p minimal.yaml -- true", steps: [w("linux")]},
	  {key: "docker", label: "warden run --backend docker",
	   cmd: "warden run -q --backend docker -p minimal.yaml -- true", steps: [w("docker")]},
	  {key: "docker-run", label: "docker run --rm (a container per command)",
	   cmd: "docker run --rm --network none IMAGE true",
	   steps: [[$d, "run", "--rm", "--network", "none", $img, "true"]]},
	  {key: "docker-parts", label: "docker create + start -a + rm",
	   cmd: "docker create --network none IMAGE true; docker start -a ID; docker rm -f -v ID",
	   steps: [[$d, "create", "--network", "none", $img, "true"], [$d, "start", "-a", "{id}"],
		   [$d, "rm", "-f", "-v", "{id}"]], parts: ["create", "start", "rm"]},
	  {key: "docker-version", label: "docker version (the backend probe)",
	   cmd: "docker version --format {{.Server.Version}}",
	   steps: [[$d, "version", "--format", "{{.Server.Version}}"]]}],
	 ratios: [["docker", "docker-run"], ["docker", "docker-parts"], ["docker-parts", "docker-run"],
		  ["docker", "linux"]]}' >"$T/plan.json" ||
	{ echo "FAIL - the plan"; exit 1; }

[[ $OUT == - ]] || mkdir -p "$(dirname "$OUT")" || exit 1
# the timing: a launch that fails ends it (exit 1) with the command and its error
if in_host python3 "$SRC/tests/bench/docker_launch.py" "$T/plan.json" "$OUT"; then
	[[ $OUT == - ]] || echo "results: ${OUT#"$SRC"/}"
else
	echo "FAIL - the timed launches did not all run (above)"
	LAB_FAILED=$((LAB_FAILED + 1))
fi
check_eq "no container is left" "" in_host "$D" ps -aq
lab_finish
