#!/usr/bin/env bash
# run_upload_budget.sh - upload budgets under `warden run` in the lab (issue 32 item 4): with
# limits.upload_kib a run's uploads to one name stop at the budget -- an upload under it passes
# (the control), one over it is cut (curl fails) with one limit.upload event whose bytes are at
# least the budget and at most one read more, and a later connection to that name is refused;
# a download far larger than the budget passes (download is not limited); another name has a
# budget of its own (over HTTPS and over plain HTTP, under a wildcard). With
# limits.upload_total_kib the run's total binds across names. Real curl against the lab's nginx;
# each negative check sits beside a positive one with the same probe. No timing is asserted.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
lab_up

T=$(lab_tmpdir wd-run-upload)
chmod 0755 "$T"
lab_on_exit rm -rf "$T"
A=$T/audit.jsonl
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0
BUDGET=65536 # limits.upload_kib: 64
head -c 16384 /dev/urandom >"$T/small"
head -c 524288 /dev/urandom >"$T/big"
chmod 0644 "$T/small" "$T/big"

# the steps run in one sandbox (budgets are per run): each prints "NAME rc=N"
cat >"$T/steps.sh" <<EOF
step() { n=\$1; shift; curl --http1.1 -sS -o /dev/null --max-time 20 --cacert "$LAB_CA" "\$@"; echo "\$n rc=\$?"; }
step small_up -f -T "$T/small" https://allowed.test/up
step download -f https://allowed.test$LAB_BIGFILE_PATH
step big_up -f -T "$T/big" https://allowed.test/up
step again -f https://allowed.test/
step other_up -f -T "$T/small" https://other.test/up
step http_big_up -f -T "$T/big" http://a.wild.test/up
step http_again -f http://a.wild.test/
step http_other -f -T "$T/small" http://b.wild.test/up
EOF
cat >"$T/total.sh" <<EOF
step() { n=\$1; shift; curl --http1.1 -sS -o /dev/null --max-time 20 --cacert "$LAB_CA" "\$@"; echo "\$n rc=\$?"; }
step first -f -T "$T/small" https://allowed.test/up
step second -f -T "$T/big" https://other.test/up
step third -f https://multi.test/
EOF
chmod 0644 "$T/steps.sh" "$T/total.sh"
policy() { # policy FILE LIMITS-LINE
	cat >"$1" <<EOF
version: 1
filesystem:
  read: ["$LAB_CA", "$T/small", "$T/big", "$T/steps.sh", "$T/total.sh"]
network:
  allow:
    - {host: allowed.test, ports: [443]}
    - {host: other.test, ports: [443]}
    - {host: multi.test, ports: [443]}
    - {host: "*.wild.test", ports: [80]}
limits:
  $2
EOF
}
policy "$T/p.yaml" "upload_kib: 64"
policy "$T/total.yaml" "upload_total_kib: 64"
policy "$T/none.yaml" "pids: 256"

wr() { in_host "$W" run -q --audit-log "$A" "$@"; }
last_run() { jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$A"; }
rc_of() { sed -n "s/^$1 rc=//p" "$T/out"; }
ok() { [[ $(rc_of "$1") == 0 ]]; }
failed() { local r; r=$(rc_of "$1"); [[ -n $r && $r != 0 ]]; }
# events R ACTION RESOURCE: the run's events of that action and resource
events() { jq -c -s --arg r "$1" --arg a "$2" --arg n "$3" \
	'.[] | select(.run == $r and .action == $a and .resource == $n)' "$A"; }
count() { events "$@" | wc -l; }

echo "# the control: the same steps under a policy without an upload budget all pass"
wr -p "$T/none.yaml" -- sh "$T/steps.sh" >"$T/out" 2>"$T/err"
cat "$T/out"
for s in small_up download big_up again other_up http_big_up http_again http_other; do
	check "no budget: $s passes" ok "$s"
done

echo "# limits.upload_kib: 64"
wr -p "$T/p.yaml" -- sh "$T/steps.sh" >"$T/out" 2>"$T/err"
cat "$T/out"
R=$(last_run)
check "an upload under the budget passes (16 KiB)" ok small_up
check "a download of $(($(stat -c %s "$LAB_BIGFILE") >> 20)) MiB from the same name passes (download is not limited)" ok download
check "an upload over the budget (512 KiB) is cut: curl fails" failed big_up
check_eq "one limit.upload event for allowed.test" 1 count "$R" limit.upload allowed.test
EV=$(events "$R" limit.upload allowed.test)
echo "# $EV"
check "it names the name, port, budget (limits.upload_kib) and a denial id" jq -e \
	--argjson b "$BUDGET" '.allowed == false and .type == "limit" and .port == 443 and
		.limit == $b and .rule == "limits.upload_kib" and (.denial_id | startswith("dn-")) and
		(.reason | startswith("upload budget spent: allowed.test was sent"))' <<<"$EV"
check "the bytes sent to the name are at least the budget and at most one read (64 KiB) more" \
	jq -e --argjson b "$BUDGET" '.usage >= $b and .usage <= $b + 65536 and .bytes_up <= .usage' <<<"$EV"
check "a later connection to the spent name is refused" failed again
check "... and audited with the same reason" jq -e -s --arg r "$R" '
	[.[] | select(.run == $r and .action == "net.connect" and .allowed == false and
		.resource == "allowed.test" and (.reason | startswith("upload budget spent: allowed.test")))]
	| length >= 1' "$A"
check "another name has its own budget: an upload to other.test passes" ok other_up
check "over plain HTTP (a framed request stream) the upload is cut too" failed http_big_up
check "... with its limit.upload event" jq -e -s --arg r "$R" --argjson b "$BUDGET" '
	[.[] | select(.run == $r and .action == "limit.upload" and .resource == "a.wild.test" and
		.port == 80 and .usage >= $b and .usage <= $b + 65536)] | length == 1' "$A"
check "a later request to a.wild.test is refused" failed http_again
check "another name under the same wildcard passes" ok http_other

echo "# limits.upload_total_kib: 64 (the run's total, every name together)"
wr -p "$T/total.yaml" -- sh "$T/total.sh" >"$T/out" 2>"$T/err"
cat "$T/out"
R=$(last_run)
check "the first upload (16 KiB) passes" ok first
check "an upload to another name that passes the run's total is cut" failed second
check "its event says the run's budget" jq -e -s --arg r "$R" --argjson b "$BUDGET" '
	[.[] | select(.run == $r and .action == "limit.upload" and .resource == "other.test" and
		.rule == "limits.upload_total_kib" and .limit == $b and .usage >= $b and
		.usage <= $b + 65536 and (.reason | startswith("upload budget spent: the run sent")))]
	| length == 1' "$A"
check "a third name is refused too: the run's total is spent" failed third
lab_finish
