#!/bin/bash
# The lab's Docker engine (tests/lab/docker.sh) itself: it answers, runs busybox containers with no network, a uid, read-only and read-write binds, and leaves nothing behind, on the machine's network least of all.
set -u
. "$(dirname "$0")/../lab/lib.sh"
. "$(dirname "$0")/../lab/docker.sh"
lab_require_root
lab_docker_require
IMG=wdlab/busybox:lab

# _machine_net: what of the machine's own network namespace (the engine's) an engine could change:
# its nft ruleset, iptables and ip6tables rules (no counters), links, forwarding and bridge
# netfilter sysctls
_machine_net()
{
	local k
	nft list ruleset || return 1
	echo "-- iptables"
	iptables-save | grep -v '^#' | sed 's/\[[0-9]*:[0-9]*\]//' || return 1
	echo "-- ip6tables"
	ip6tables-save | grep -v '^#' | sed 's/\[[0-9]*:[0-9]*\]//' || return 1
	echo "-- links"
	link_names | sort || return 1
	for k in net/ipv4/ip_forward net/ipv6/conf/all/forwarding net/ipv4/ping_group_range \
		net/ipv4/ip_unprivileged_port_start net/ipv6/conf/all/disable_ipv6; do
		echo "$k $(cat "/proc/sys/$k")" || return 1
	done
	# (br_netfilter's, when the module is loaded: a bridge would load it)
	for k in net/bridge/bridge-nf-call-iptables net/bridge/bridge-nf-call-ip6tables; do
		if [[ -e /proc/sys/$k ]]; then
			echo "$k $(cat "/proc/sys/$k")" || return 1
		else
			echo "$k absent"
		fi
	done
}

# link_names: the links of the script's network namespace (the machine's), one a line
link_names()
{
	ip -o link show | awk -F': ' '{sub(/@.*/, "", $2); print $2}'
}

# same_net FILE: the machine's network now is what FILE recorded (the difference on stderr)
same_net()
{
	local now
	now=$(_machine_net) || { lab_probe_error "cannot list the machine's network"; return 2; }
	diff "$1" - <<<"$now" >&2
}

# leftover_kinds DIR CGROUP: the kinds of what lab_docker_leftovers finds, sorted, on one line
leftover_kinds()
{
	local out
	out=$(lab_docker_leftovers "$@") || return 2
	awk '{print $1}' <<<"$out" | sort -u | xargs
}

# run_status CMD...: prints CMD's exit status (for check_eq)
run_status()
{
	local rc=0
	"$@" >/dev/null 2>&1 || rc=$?
	echo "$rc"
}

work=$(mktemp -d /tmp/docker_lab-XXXXXX) || exit 1
lab_on_exit rm -rf "$work"
_machine_net >"$work/net.before" || { echo "FAIL - cannot list the machine's network"; exit 1; }

# --- the engine ---------------------------------------------------------------------------
if ! lab_docker_up; then
	echo "FAIL - lab_docker_up: the engine did not start"
	lab_finish
fi
engine_dir=$LAB_DOCKER_DIR engine_cg=$LAB_DOCKER_CGROUP
echo "# engine $engine_dir: dockerd $LAB_DOCKER_PID, containerd $LAB_CONTAINERD_PID"
check "the engine answers on the test's own socket" \
	lab_match "^unix://$engine_dir/docker.sock\$" printenv DOCKER_HOST
check_eq "... and is the docker.io package's dockerd 20.10" "20.10" \
	bash -c '"$0" version --format "{{.Server.Version}}" | cut -d. -f1,2' "$LAB_DOCKER"
check_eq "dockerd runs /usr/sbin/dockerd" /usr/sbin/dockerd readlink "/proc/$LAB_DOCKER_PID/exe"
check_eq "its containerd is the test's own /usr/bin/containerd" /usr/bin/containerd \
	readlink "/proc/$LAB_CONTAINERD_PID/exe"
check "... listening in the test's folder" test -S "$engine_dir/ctd/containerd.sock"
check "... which dockerd was told to use" \
	lab_match "--containerd $engine_dir/ctd/containerd.sock" \
	bash -c 'tr "\0" " " </proc/$0/cmdline; echo' "$LAB_DOCKER_PID"
check_fails "no containerd socket at the machine's /run/containerd (a private tmpfs)" \
	test -e /run/containerd/containerd.sock
check "no docker0 bridge" lab_no_match '^docker0$' link_names
check "control: the same listing shows lo" lab_match '^lo$' link_names
check "cgroupfs driver, cgroup v1" lab_match '^cgroupfs 1$' \
	"$LAB_DOCKER" info --format '{{.CgroupDriver}} {{.CgroupVersion}}'

# --- an image of busybox-static, imported -------------------------------------------------
check "lab_docker_image makes $IMG" lab_docker_image "$IMG"
check_eq "... an image the engine knows" "$IMG" \
	"$LAB_DOCKER" image inspect --format '{{index .RepoTags 0}}' "$IMG"
check_fails "lab_docker_image refuses a bad name" lab_docker_image 'Bad Name'

# --- containers ------------------------------------------------------------------------
run=("$LAB_DOCKER" run --rm --network none)
check "docker run --network none IMAGE /bin/busybox true exits 0" "${run[@]}" "$IMG" /bin/busybox true
check_eq "... sh -c 'exit 7' gives 7" 7 run_status "${run[@]}" "$IMG" sh -c 'exit 7'
check_eq "inside --network none only lo exists (/sys/class/net)" lo "${run[@]}" "$IMG" ls /sys/class/net
check_eq "... (ip link)" lo "${run[@]}" "$IMG" sh -c "ip -o link | cut -d: -f2 | tr -d ' '"
check "control: with the engine's network (--network host) the same listing shows more than lo" \
	bash -c '[ "$("$@" ls /sys/class/net | wc -l)" -gt 1 ]' probe "$LAB_DOCKER" run --rm --network host "$IMG"
check_eq "--user 1000 runs as uid 1000" "1000 1000" "${run[@]}" --user 1000 "$IMG" sh -c 'echo $(id -u) $(id -g)'
check_eq "control: without --user, uid 0 (the image's default)" 0 "${run[@]}" "$IMG" id -u
mkdir -p "$work/ro" "$work/rw" && chmod 0777 "$work/ro" "$work/rw"
check_fails --denied 1 "a read-only bind mount refuses a write" \
	"${run[@]}" -v "$work/ro:/data:ro" "$IMG" touch /data/made
check_fails "... nothing was written there" test -e "$work/ro/made"
check "a read-write one accepts it" "${run[@]}" -v "$work/rw:/data" "$IMG" sh -c 'echo written >/data/made'
check_eq "... the file is there, outside" written cat "$work/rw/made"
check_eq "--rm left no container" "" "$LAB_DOCKER" ps -aq

# --- measure: the engine's bare launch ----------------------------------------------------
for i in 1 2 3 4 5 6 7 8 9 10; do
	t0=$(date +%s%N)
	"${run[@]}" "$IMG" true || break
	echo $((($(date +%s%N) - t0) / 1000000))
done >"$work/times"
echo "# docker run --rm --network none $IMG true: median $(sort -n "$work/times" | sed -n 5,6p |
	awk '{s += $1} END {if (NR == 2) print s / 2; else print "?"}') ms of $(wc -l <"$work/times") (ms: $(xargs <"$work/times"))"

# --- teardown, seen from outside -------------------------------------------------------
# a container left running, as a test that fails halfway would leave it
check "a container left running" "$LAB_DOCKER" run -d --name left --network none "$IMG" sleep 600
left=$("$LAB_DOCKER" inspect --format '{{.State.Pid}}' left 2>/dev/null)
check "... its process is there" test -d "/proc/${left:-none}"
check_eq "control: while it runs, the engine's leftovers are seen (each kind)" \
	"cgroup folder mount process" leftover_kinds "$engine_dir" "$engine_cg"
dockerd_pid=$LAB_DOCKER_PID containerd_pid=$LAB_CONTAINERD_PID
lab_docker_down
check_fails "dockerd ($dockerd_pid) has ended" test -d "/proc/$dockerd_pid"
check_fails "containerd ($containerd_pid) has ended" test -d "/proc/$containerd_pid"
check_fails "the container's process has ended" test -d "/proc/${left:-none}"
check_eq "no process, mount, folder or cgroup of the engine is left" "" \
	lab_docker_leftovers "$engine_dir" "$engine_cg"
check_fails --denied 32 "no private /run/containerd is mounted any more" mountpoint -q /run/containerd

# --- an engine killed with a container running (a test that crashed) ---------------------
if lab_docker_up; then
	engine_dir=$LAB_DOCKER_DIR engine_cg=$LAB_DOCKER_CGROUP
	check "a second engine in the same script, after the first is down" "$LAB_DOCKER" version
	check "... a container left running in it" lab_docker_image "$IMG"
	"$LAB_DOCKER" run -d --name left --network none "$IMG" sleep 600 >/dev/null 2>&1
	left=$("$LAB_DOCKER" inspect --format '{{.State.Pid}}' left 2>/dev/null)
	check "... its process is there" test -d "/proc/${left:-none}"
	kill -KILL "$LAB_DOCKER_PID" "$LAB_CONTAINERD_PID"
	wait "$LAB_DOCKER_PID" "$LAB_CONTAINERD_PID" 2>/dev/null
	check_fails "dockerd and containerd killed: the API does not answer" "$LAB_DOCKER" version
	check_eq "control: their shim and the container outlive them" "process" \
		bash -c "ps -o args= -p ${left:-0} >/dev/null && pgrep -f 'containerd-shim.*$engine_dir/' >/dev/null && echo process"
	lab_docker_down
	check_fails "the container's process has ended" test -d "/proc/${left:-none}"
	check_eq "no process, mount, folder or cgroup of the killed engine is left" "" \
		lab_docker_leftovers "$engine_dir" "$engine_cg"
else
	echo "FAIL - lab_docker_up: a second engine did not start"
	LAB_FAILED=$((LAB_FAILED + 1))
fi

# --- an engine that cannot start ---------------------------------------------------------
# bad_up: lab_docker_up with a dockerd that exits at once, then lab_docker_down (in a subshell);
# the engine's folder and cgroup name go to $work/bad.engine, its message to $work/bad.err
bad_up()
{
	(
		LAB_DOCKERD=/bin/false
		rc=0
		lab_docker_up 2>"$work/bad.err" || rc=$?
		echo "$LAB_DOCKER_DIR $LAB_DOCKER_CGROUP" >"$work/bad.engine"
		lab_docker_down
		exit "$rc"
	)
}
check_fails --denied 1 "lab_docker_up fails (1) when dockerd cannot start" bad_up
check "... saying so" grep -q "lab_docker_up: dockerd did not answer" "$work/bad.err"
read -r bad_dir bad_cg <"$work/bad.engine"
check_eq "... and leaves nothing once down" "" lab_docker_leftovers "${bad_dir:-}" "${bad_cg:-}"
check "the machine's network is as before (nft, iptables, links, forwarding)" same_net "$work/net.before"
{ sed 1d "$work/net.before"; echo changed; } >"$work/net.changed"
check "control: a changed record is seen as a change" lab_negate same_net "$work/net.changed"
check_eq "DOCKER_HOST is unset" "" printenv DOCKER_HOST
lab_finish
