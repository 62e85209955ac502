#!/usr/bin/env bash
# tests/bench/soak.sh - the soak: mixed traffic through one gateway in the lab for S seconds
# (DNS, HTTP keep-alive, new HTTP and TLS connections, raw TCP by name, denials asked for), the
# gateway worker's descriptors, RSS and the audit log's size sampled, then the most concurrent
# relayed connections the descriptor limit allows, active and idle; checks that every
# connection's net.close is in the audit log and that no denial but the asked-for ones is.
# Not in CI. The workload is tests/bench/soak.inc.sh, run by the harness (tests/bench/run), whose
# other options pass through (e.g. --no-install, --idle N).
#
# Usage (as root): tests/bench/soak.sh [--duration S] [tests/bench/run options]
#   S: seconds of mixed traffic, default 600. The results: tests/bench/results/DATE.json (the
#   soak's figures and any problem) and results/soak-DATE.tsv (the samples); exit 1 on a problem.
set -u
S=600
ARGS=()
while (($#)); do
	case $1 in
	--duration) S=${2:?}; shift ;;
	*) ARGS+=("$1") ;;
	esac
	shift
done
[[ $S =~ ^[1-9][0-9]*$ ]] || { echo "soak: --duration must be a positive number of seconds" >&2; exit 2; }
OUT=$(cd "$(dirname "$0")" && pwd)/results/soak-$(date -u +%Y-%m-%dT%H%M%SZ).json
"$(dirname "$0")/run" --workloads soak --rounds 1 --soak "$S" --no-doc --out "$OUT" "${ARGS[@]}" ||
	exit 1
jq -e '.errors | map(select(.workload == "soak")) | length == 0' "$OUT" >/dev/null ||
	{ echo "soak: problems, see $OUT" >&2; exit 1; }
echo "soak: no problem; figures in $OUT"
