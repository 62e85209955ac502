# The Docker engine of one lab test: a dockerd (and its containerd) of the test's own, and
# images made from busybox-static; source it after tests/lab/lib.sh.
# shellcheck shell=bash
#
#   . "$(dirname "$0")/../lab/lib.sh"
#   . "$(dirname "$0")/../lab/docker.sh"
#   lab_require_root
#   lab_docker_require          # a test error unless the docker.io package and busybox are here
#   lab_docker_up               # the engine; exports DOCKER_HOST; stopped at exit (lab_on_exit);
#                               # call it as is, not inside check (a subshell: its variables
#                               # would be lost)
#   lab_docker_image wdlab/busybox
#   lab_docker_image wdlab/curl /usr/bin/curl   # busybox plus host binaries and their libraries
#   lab_docker_restart          # dockerd stopped and started again (the containers stay, stopped)
#   check "a container runs" "$LAB_DOCKER" run --rm --network none wdlab/busybox true
#
# The engine is the Debian docker.io package's (/usr/sbin/dockerd, /usr/bin/docker: never the
# CLI of another install found first on PATH, e.g. /usr/local/bin/docker) with its containerd
# (/usr/bin/containerd), both started by this file, never an engine the test did not start:
#
# - it runs in the namespaces of the test script: the machine's network namespace (never under
#   `ip netns exec`, whose fresh /sys hides the cgroup mounts), the script's private mount and pid
#   namespaces (_lab_private_run in lib.sh; lab_docker_up refuses to run outside them), so
#   every mount the engine makes is the script's alone and every process it starts ends with
#   the script at the latest;
# - nothing of the machine's network: --bridge=none (no docker0), --iptables=false and
#   --ip6tables=false (no rules), --ip-forward=false (dockerd writes
#   net.ipv4.ip_forward=1 otherwise, even with the other three), --ip-masq=false;
# - all its files in one mktemp folder, LAB_DOCKER_DIR=/tmp/wdlab-docker-XXXXXX: --data-root,
#   --exec-root, --pidfile, the API socket (-H unix://...), daemon.json (--config-file: the
#   machine's /etc/docker/daemon.json is not read) naming the key file that dockerd 20.10 would
#   write to /etc/docker/key.json, the CLI's configuration (DOCKER_CONFIG), and containerd's
#   root, state, socket and "opt" folder;
# - its own containerd, started here with a configuration of ours: left alone, dockerd adopts
#   the containerd at /run/containerd/containerd.sock when one runs there (the machine's or
#   another test's), and the one it starts itself makes /opt/containerd on the machine;
# - the two folders that dockerd and containerd use whatever they are told are empty tmpfs in
#   the script's mount namespace: /run/containerd (containerd 1.6 puts its shims' sockets in
#   /run/containerd/s) and /run/docker (dockerd makes /run/docker/plugins); on the machine they
#   are only (empty) mount points, made when missing, like lib.sh's /run/warden;
# - its containers' cgroups below a parent of the test's own, --cgroup-parent wdlab-docker-XXXXXX
#   (relative: below the script's cgroup in each hierarchy, so the memory the containers use is
#   counted where the script's is), removed when the engine stops.
#
# So two tests running at once (ctest -j) share nothing: each its own engine, containerd,
# sockets, folders, mounts and cgroups; no RESOURCE_LOCK is needed.
#
# lab_docker_down (run at exit by lab_on_exit, or called by the test) removes every container,
# stops dockerd and containerd by their pids (TERM, then KILL after 20 s), ends any process
# still naming the engine's folder (a shim) or in its cgroups (a container), unmounts what the
# engine mounted, removes the cgroups and the folder. lab_docker_leftovers then prints what is
# left (nothing, once down).

LAB_DOCKER=/usr/bin/docker
LAB_DOCKERD=/usr/sbin/dockerd
LAB_CONTAINERD=/usr/bin/containerd
LAB_BUSYBOX=/bin/busybox
LAB_DOCKER_DIR=
LAB_DOCKER_PID=
LAB_CONTAINERD_PID=
LAB_DOCKER_CGROUP=
# the docker CLI's own statuses when it could not run the container at all (the daemon's error,
# a command that cannot be invoked, or is not found): a probe error, never a denial
lab_probe_errors docker 125 126 127
lab_probe_errors lab_docker_leftovers 2

# lab_docker_require: ends the script with a test error (exit 1, never a skip: a missing install
# step must not pass) when the docker.io package (dockerd, its docker CLI, containerd, runc) or
# busybox-static is not installed; deploy/debian-packages lists both.
lab_docker_require()
{
	local f
	for f in "$LAB_DOCKERD" "$LAB_DOCKER" "$LAB_CONTAINERD" /usr/sbin/runc "$LAB_BUSYBOX"; do
		if [[ ! -x $f ]]; then
			echo "FAIL - missing $f (deploy/debian-packages: docker.io, busybox-static; test error)"
			echo "0 passed, 1 failed"
			exit 1
		fi
	done
}

# _lab_docker_log WHAT: the end of the engine's log WHAT (dockerd, containerd) on stderr
_lab_docker_log()
{
	[[ -r $LAB_DOCKER_DIR/$1.log ]] || return 0
	tail -n 15 "$LAB_DOCKER_DIR/$1.log" | sed "s/^/    | $1: /" >&2
}

# _lab_docker_alive PID: PID is a process that has not ended (a zombie has)
_lab_docker_alive()
{
	local st
	st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
	[[ -n $st && $st != Z ]]
}

# _lab_docker_private_run DIR: an empty tmpfs on DIR in the script's mount namespace (over
# whatever is there), listed in LAB_DOCKER_RUN_MOUNTS for lab_docker_down
LAB_DOCKER_RUN_MOUNTS=()
_lab_docker_private_run()
{
	mkdir -p "$1" && mount -t tmpfs -o mode=0711 wdlab-docker "$1" || return 1
	LAB_DOCKER_RUN_MOUNTS+=("$1")
}

# lab_docker_up: starts the test's engine (see the head of this file), waits (up to 60 s) until
# `docker version` answers on its socket, and exports DOCKER_HOST and DOCKER_CONFIG. Sets
# LAB_DOCKER_DIR, LAB_DOCKER_PID, LAB_CONTAINERD_PID, LAB_DOCKER_CGROUP. Returns 1, with the
# reason and the logs on stderr, when the engine cannot start (what it started is stopped at
# exit, or by lab_docker_down).
lab_docker_up()
{
	local d
	# the EXIT trap that runs lab_on_exit's commands (lab_up sets the same): a failure
	# below that ends the script still gets its FAIL and closing lines
	if [[ -z $(trap -p EXIT) ]]; then
		trap _lab_exit EXIT
		trap 'exit 130' INT
		trap 'exit 143' TERM
	fi
	if [[ -z ${LAB_PRIVATE_RUN:-} || -n ${LAB_SHARED_RUN:-} ]]; then
		echo "lab_docker_up: needs the script's private mount and pid namespaces (call lab_require_root first; not with LAB_SHARED_RUN)" >&2
		return 1
	fi
	if [[ -n $LAB_DOCKER_DIR ]]; then
		echo "lab_docker_up: this script's engine is up already ($LAB_DOCKER_DIR)" >&2
		return 1
	fi
	d=$(mktemp -d /tmp/wdlab-docker-XXXXXX) || return 1
	LAB_DOCKER_DIR=$d
	LAB_DOCKER_CGROUP=${d##*/}
	lab_on_exit lab_docker_down
	mkdir -p "$d/ctd" "$d/cli" || return 1
	if ! _lab_docker_private_run /run/containerd || ! _lab_docker_private_run /run/docker; then
		echo "lab_docker_up: cannot mount a private /run/containerd and /run/docker" >&2
		return 1
	fi
	cat >"$d/containerd.toml" <<EOF || return 1
version = 2
root = "$d/ctd/root"
state = "$d/ctd/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$d/ctd/containerd.sock"
[plugins."io.containerd.internal.v1.opt"]
  path = "$d/ctd/opt"
EOF
	printf '{"deprecated-key-path": "%s/key.json"}\n' "$d" >"$d/daemon.json" || return 1
	"$LAB_CONTAINERD" --config "$d/containerd.toml" </dev/null >"$d/containerd.log" 2>&1 &
	LAB_CONTAINERD_PID=$!
	lab_wait 30 _lab_containerd_ready
	if [[ ! -S $d/ctd/containerd.sock ]] || ! _lab_docker_alive "$LAB_CONTAINERD_PID"; then
		echo "lab_docker_up: containerd did not start" >&2
		_lab_docker_log containerd
		return 1
	fi
	_lab_dockerd_start
}

# _lab_dockerd_start: dockerd of LAB_DOCKER_DIR started (its containerd runs), DOCKER_HOST and
# DOCKER_CONFIG exported, until `docker version` answers (up to 60 s). Returns 1 when it does not.
_lab_dockerd_start()
{
	local d=$LAB_DOCKER_DIR sock=$LAB_DOCKER_DIR/docker.sock
	"$LAB_DOCKERD" --config-file "$d/daemon.json" --containerd "$d/ctd/containerd.sock" \
		--data-root "$d/data" --exec-root "$d/exec" --pidfile "$d/dockerd.pid" \
		-H "unix://$sock" --bridge=none --iptables=false --ip6tables=false \
		--ip-forward=false --ip-masq=false --cgroup-parent "$LAB_DOCKER_CGROUP" \
		</dev/null >>"$d/dockerd.log" 2>&1 &
	LAB_DOCKER_PID=$!
	export DOCKER_HOST=unix://$sock DOCKER_CONFIG=$d/cli
	# ready when the API answers (or give up as soon as dockerd is gone)
	lab_wait 60 _lab_docker_ready
	if ! "$LAB_DOCKER" version >/dev/null 2>&1; then
		echo "lab_docker_up: dockerd did not answer on $sock" >&2
		_lab_docker_log dockerd
		return 1
	fi
	return 0
}

# lab_docker_restart: the engine restarted as an operator would (dockerd stopped with SIGTERM,
# which stops its containers, then started again on the same folders; containerd stays). Its
# containers are still there, stopped. Returns 1 when it does not come back.
lab_docker_restart()
{
	[[ -n $LAB_DOCKER_DIR ]] || { echo "lab_docker_restart: no engine (lab_docker_up)" >&2; return 1; }
	_lab_docker_stop "$LAB_DOCKER_PID" "$LAB_DOCKERD"
	_lab_dockerd_start
}

# _lab_containerd_ready: containerd's socket is there, or containerd has ended
_lab_containerd_ready()
{
	[[ -S $LAB_DOCKER_DIR/ctd/containerd.sock ]] || ! _lab_docker_alive "$LAB_CONTAINERD_PID"
}

# _lab_docker_ready: the engine answers, or dockerd has ended (lab_wait then stops waiting)
_lab_docker_ready()
{
	"$LAB_DOCKER" version >/dev/null 2>&1 || ! _lab_docker_alive "$LAB_DOCKER_PID"
}

# lab_docker_image NAME: makes image NAME (docker import) from a root file system built here
# from busybox-static: /bin/busybox and a link per applet, /etc/passwd and /etc/group with root
# and `user` (uid and gid 1000), /tmp (1777), mount points /proc /sys /dev. Nothing is pulled:
# there is no registry. Returns 1 (the reason on stderr) when it cannot.
lab_docker_image()
{
	local name=${1:-} r a
	if [[ ! $name =~ ^[a-z0-9][a-z0-9._/-]*(:[A-Za-z0-9_.-]+)?$ ]]; then
		echo "lab_docker_image: '$name' is not an image name" >&2
		return 1
	fi
	[[ -n $LAB_DOCKER_DIR ]] || { echo "lab_docker_image: no engine (lab_docker_up)" >&2; return 1; }
	r=$(mktemp -d "$LAB_DOCKER_DIR/rootfs-XXXXXX") || return 1
	mkdir -p "$r/bin" "$r/etc" "$r/tmp" "$r/proc" "$r/sys" "$r/dev" "$r/root" || return 1
	chmod 1777 "$r/tmp" && chmod 0700 "$r/root" || return 1
	cp "$LAB_BUSYBOX" "$r/bin/busybox" || return 1
	for a in $("$LAB_BUSYBOX" --list); do
		[[ -e $r/bin/$a ]] || ln -s busybox "$r/bin/$a" || return 1
	done
	# the host's binaries named after the image, at their own paths, with their libraries
	for a in "${@:2}"; do
		_lab_docker_copy_elf "$r" "$a" || { rm -rf "$r"; return 1; }
	done
	printf 'root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000:user:/tmp:/bin/sh\n' >"$r/etc/passwd"
	printf 'root:x:0:\nuser:x:1000:\n' >"$r/etc/group"
	if ! tar -C "$r" -c . | "$LAB_DOCKER" import - "$name" >/dev/null; then
		echo "lab_docker_image: docker import of $name failed" >&2
		rm -rf "$r"
		return 1
	fi
	rm -rf "$r"
}

# _lab_docker_copy_elf ROOT PATH: the host's executable PATH into ROOT at the same path, with
# every library the loader lists for it (and the loader), at their own paths.
_lab_docker_copy_elf()
{
	local root=$1 bin=$2 f
	[[ -x $bin ]] || { echo "lab_docker_image: no executable $bin" >&2; return 1; }
	for f in "$bin" $(ldd "$bin" 2>/dev/null | awk '/=> \// { print $3 } /^\t\// { print $1 }'); do
		mkdir -p "$root$(dirname "$f")" && cp -L "$f" "$root$f" || return 1
	done
}

# _lab_docker_stop PID EXE: TERM, up to 20 s for it to end, then KILL; reaps it (our child).
# Only while PID still runs EXE: a pid that ended and was reused is left alone.
_lab_docker_stop()
{
	local pid=$1 i
	[[ -n $pid && $(readlink "/proc/$pid/exe" 2>/dev/null) == "$2" ]] || return 0
	kill -TERM "$pid" 2>/dev/null
	for ((i = 0; i < 400; i++)); do
		_lab_docker_alive "$pid" || break
		sleep 0.05
	done
	_lab_docker_alive "$pid" && kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 0
}

# _lab_docker_pids: the processes whose command line names the engine's folder (containerd,
# dockerd, shims), one pid a line
_lab_docker_pids()
{
	local f pid
	[[ -n $LAB_DOCKER_DIR ]] || return 0
	for f in /proc/[0-9]*/cmdline; do
		pid=${f#/proc/}
		pid=${pid%/cmdline}
		[[ $pid != "$BASHPID" ]] || continue
		tr '\0' ' ' <"$f" 2>/dev/null | grep -qF -- "$LAB_DOCKER_DIR/" && echo "$pid"
	done
	return 0
}

# _lab_docker_mounts: the mount points in the engine's folder, in mount order
_lab_docker_mounts()
{
	[[ -n $LAB_DOCKER_DIR ]] || return 0
	awk -v d="$LAB_DOCKER_DIR/" 'index($5, d) == 1 {print $5}' /proc/self/mountinfo
}

# _lab_docker_cgroups: the engine's cgroup folders (the parent in each hierarchy and what is below)
_lab_docker_cgroups()
{
	[[ -n $LAB_DOCKER_CGROUP ]] || return 0
	find /sys/fs/cgroup -mindepth 2 -type d -name "$LAB_DOCKER_CGROUP" -prune -print 2>/dev/null
}

# _lab_docker_cgroup_pids: the processes in the engine's cgroups (its containers'), one a line
_lab_docker_cgroup_pids()
{
	local cg
	for cg in $(_lab_docker_cgroups); do
		find "$cg" -name cgroup.procs -exec cat {} + 2>/dev/null
	done | sort -u
}

# _lab_docker_cgroups_empty: no process is left in the engine's cgroups
_lab_docker_cgroups_empty()
{
	[[ -z $(_lab_docker_cgroup_pids) ]]
}

# lab_docker_down: removes every container of the engine, stops it and its containerd (by their
# pids), ends what is left of it, unmounts its mounts, removes its cgroups and folder. Harmless
# when run twice.
lab_docker_down()
{
	local ids pid m cg
	[[ -n $LAB_DOCKER_DIR ]] || return 0
	if [[ -n $LAB_DOCKER_PID ]] && _lab_docker_alive "$LAB_DOCKER_PID"; then
		ids=$("$LAB_DOCKER" ps -aq 2>/dev/null)
		# shellcheck disable=SC2086
		[[ -z $ids ]] || "$LAB_DOCKER" rm -f -v $ids >/dev/null 2>&1
	fi
	_lab_docker_stop "$LAB_DOCKER_PID" "$LAB_DOCKERD"
	_lab_docker_stop "$LAB_CONTAINERD_PID" "$LAB_CONTAINERD"
	LAB_DOCKER_PID='' LAB_CONTAINERD_PID=''
	for pid in $(_lab_docker_pids); do
		kill -KILL "$pid" 2>/dev/null
	done
	# a container whose shim is gone (dockerd killed before its containers): by its cgroup
	for pid in $(_lab_docker_cgroup_pids); do
		kill -KILL "$pid" 2>/dev/null
	done
	lab_wait 10 _lab_docker_cgroups_empty
	for m in $(_lab_docker_mounts | sort -r); do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
	for cg in $(_lab_docker_cgroups); do
		find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	if [[ -z $(_lab_docker_mounts) ]]; then
		rm -rf --one-file-system "$LAB_DOCKER_DIR"
	else
		echo "lab_docker_down: $LAB_DOCKER_DIR keeps mounts: not removed" >&2
	fi
	for m in "${LAB_DOCKER_RUN_MOUNTS[@]}"; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
	LAB_DOCKER_RUN_MOUNTS=()
	unset DOCKER_HOST DOCKER_CONFIG
	LAB_DOCKER_DIR='' LAB_DOCKER_CGROUP=''
	return 0
}

# lab_docker_leftovers DIR CGROUP: prints what is left of the engine that had folder DIR and
# cgroup parent CGROUP (LAB_DOCKER_DIR and LAB_DOCKER_CGROUP before lab_docker_down): a process
# naming DIR, a mount in DIR, the folder, a cgroup. Nothing once the engine is down.
lab_docker_leftovers()
{
	local dir=${1:-} cg=${2:-}
	[[ -n $dir && -n $cg ]] || { lab_probe_error "lab_docker_leftovers: DIR CGROUP"; return 2; }
	(LAB_DOCKER_DIR=$dir LAB_DOCKER_CGROUP=$cg
		_lab_docker_pids | sed 's/^/process /'
		_lab_docker_mounts | sed 's/^/mount /'
		[[ ! -e $dir ]] || echo "folder $dir"
		_lab_docker_cgroups | sed 's/^/cgroup /'
		_lab_docker_cgroup_pids | sed 's/^/process in a cgroup /')
}
