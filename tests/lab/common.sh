# Shared constants and helpers for tests/lab/up, down and exec (sourced, not run).
# shellcheck shell=bash disable=SC2034  # constants are used by the scripts that source this

# Every lab lives under this root; one folder per lab, named like the lab.
LAB_ROOT=${WARDEN_LAB_ROOT:-/run/warden-lab}
LAB_PREFIX=wdlab-
LAB_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# Addresses: documentation ranges only (TEST-NET-3, 2001:db8::/32).
LAB_HOST_V4=203.0.113.1
LAB_HOST_V6=2001:db8:0:1::1
LAB_WAN_V4=203.0.113.2
LAB_WAN_V6=2001:db8:0:1::2
# Extra lab-wan addresses; the name of each says what the zone maps to it.
LAB_ALLOWED_V4=203.0.113.10
LAB_ALLOWED_V6=2001:db8:0:1::10
LAB_OTHER_V4=203.0.113.11
LAB_OTHER_V6=2001:db8:0:1::11
LAB_WILD_V4=203.0.113.12
LAB_WILD_V6=2001:db8:0:1::12
LAB_MULTI_V4="203.0.113.13 203.0.113.14"
LAB_MULTI_V6="2001:db8:0:1::13 2001:db8:0:1::14"
# Assigned nowhere: a connection to it gets no answer at all (times out).
LAB_UNUSED_V4=203.0.113.99
LAB_UNUSED_V6=2001:db8:0:1::99
# Interface names (the same in every lab; each lives in its own namespace).
LAB_IF_HOST=veth-wan	# in lab-host, leads to lab-wan
LAB_IF_WAN=veth-host	# in lab-wan, leads to lab-host

lab_die()
{
	echo "lab: $*" >&2
	exit 1
}

# lab_valid_name NAME: true when NAME looks like a lab name (no path tricks).
lab_valid_name()
{
	[[ $1 =~ ^${LAB_PREFIX}[a-z0-9]{1,16}$ ]]
}

# lab_proc_start PID: prints the start time of PID (field 22 of stat), or fails.
lab_proc_start()
{
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	set -- $stat
	echo "${20}"
}

# lab_pid_alive PID: true while PID exists and is not a zombie.
lab_pid_alive()
{
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	[[ ${stat:0:1} != Z ]]
}

# lab_owner_alive DIR: true while the process that owns the lab in DIR runs.
lab_owner_alive()
{
	local pid start now
	read -r pid start <"$1/owner" 2>/dev/null || return 1
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	now=$(lab_proc_start "$pid") || return 1
	[[ $now == "$start" ]]
}

# lab_kill_pidfile FILE NSINODE: kills the pid in FILE if that process still
# lives in the network namespace with inode NSINODE (guards against pid reuse).
# When the process leads its own process group (lab_spawn), the whole group
# goes: that catches children it moved to other namespaces (sandboxes).
lab_kill_pidfile()
{
	local pid ns i stat target
	read -r pid <"$1" 2>/dev/null || return 0
	[[ $pid =~ ^[0-9]+$ ]] || return 0
	ns=$(readlink "/proc/$pid/ns/net" 2>/dev/null) || return 0
	[[ $ns == "net:[$2]" ]] || return 0
	stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 0
	stat=${stat##*) }
	set -- $stat
	target=$pid
	[[ $3 == "$pid" ]] && target=-$pid
	kill -TERM -- "$target" 2>/dev/null || return 0
	for ((i = 0; i < 50; i++)); do
		lab_pid_alive "$pid" || break
		sleep 0.02
	done
	kill -KILL -- "$target" 2>/dev/null
	return 0
}

# lab_kill_ns NS: kills every process still inside namespace NS.
lab_kill_ns()
{
	local pids p i
	[[ -e /run/netns/$1 ]] || return 0
	for ((i = 0; i < 50; i++)); do
		pids=
		for p in $(ip netns pids "$1" 2>/dev/null); do
			lab_pid_alive "$p" && pids+=" $p"
		done
		[[ -n $pids ]] || return 0
		if ((i < 25)); then
			kill -TERM $pids 2>/dev/null
		else
			kill -KILL $pids 2>/dev/null
		fi
		sleep 0.02
	done
	return 0
}

# lab_teardown NAME: removes lab NAME (processes, namespaces, state); harmless
# when parts or all of it are already gone.
lab_teardown()
{
	local name=$1 dir=$LAB_ROOT/$1 f role inode
	for role in wan host; do
		inode=$(cat "$dir/ns-$role.inode" 2>/dev/null)
		if [[ -n $inode ]]; then
			for f in "$dir"/run/*.pid; do
				[[ -e $f ]] || continue
				case $f in
				*/"$role"-*.pid) lab_kill_pidfile "$f" "$inode" ;;
				esac
			done
		fi
		lab_kill_ns "$name-$role"
	done
	for role in host wan; do
		if [[ -e /run/netns/$name-$role ]]; then
			ip netns delete "$name-$role" 2>/dev/null
		fi
		rm -rf "/etc/netns/$name-$role"
	done
	rm -rf "$dir"
	return 0
}

# lab_reap: removes labs whose owner process is gone, and lab namespaces whose
# state folder is gone (a crash half-way through down).
lab_reap()
{
	local d name ns
	for d in "$LAB_ROOT"/"$LAB_PREFIX"*; do
		[[ -d $d ]] || continue
		name=${d##*/}
		lab_valid_name "$name" || continue
		# A lab being created has no owner file yet for a few ms; skip it
		# unless the folder is older than a minute.
		if [[ ! -e $d/owner ]]; then
			[[ -n $(find "$d" -maxdepth 0 -mmin +1 2>/dev/null) ]] || continue
		elif lab_owner_alive "$d"; then
			continue
		fi
		lab_teardown "$name"
	done
	for ns in $(ip netns list 2>/dev/null | awk '{print $1}'); do
		case $ns in
		"$LAB_PREFIX"*-host | "$LAB_PREFIX"*-wan) ;;
		*) continue ;;
		esac
		name=${ns%-*}
		lab_valid_name "$name" || continue
		[[ -d $LAB_ROOT/$name ]] && continue
		lab_kill_ns "$ns"
		ip netns delete "$ns" 2>/dev/null
	done
	return 0
}
