#!/usr/bin/env bash
# run_dns_budget.sh - the DNS exfiltration budget (issue 32 item 3) under `warden run` in the
# lab: a program allowed `*.wild.test` with limits.dns_label_kib_per_min: 1 asks dig for 40
# distinct 60-byte labels below wild.test, as an exfiltration loop would. The first 16 are
# answered (5 + 16 * 60 bytes fit in 1 KiB), the rest are REFUSED with an Extended DNS Error
# naming the budget and a denial id, and audited as limit.dns_exfil: once in full, the rest
# counted into a summary. Controls with the same probe (dig, in the same run, after the budget
# is spent): a name asked before the budget ran out still resolves to the same address, an
# exact rule's name under the same parent and another exact name keep working, and another
# wildcard parent has its own budget. A shadow run of the same program is answered throughout,
# the budget's refusals audited as would-denies.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
command -v dig >/dev/null || { echo "ERROR - dig is not installed (bind9-dnsutils)"; exit 1; }
lab_up

T=$(lab_tmpdir wd-run-dns-budget)
lab_on_exit rm -rf "$T"
chmod 0755 "$T"
A=$T/audit.jsonl
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0
cat >"$T/p.yaml" <<EOF
version: 1
network:
  allow:
    - {host: "*.wild.test", ports: [443]}
    - {host: fixed.wild.test, ports: [443]}
    - {host: "*.second.test", ports: [443]}
    - {host: allowed.test, ports: [443]}
limits:
  dns_label_kib_per_min: 1
EOF
# the program: each line "NAME STATUS ANSWER"; dig's own failure (no answer at all) is "none"
cat >"$T/prog.sh" <<'EOF'
ask() {
	out=$(dig +tries=1 +time=5 "$1" A 2>&1)
	st=$(printf '%s\n' "$out" | sed -n 's/.*status: \([A-Z]*\),.*/\1/p')
	ans=$(printf '%s\n' "$out" | awk '$4 == "A" { print $5; exit }')
	printf '%s %s %s\n' "$1" "${st:-none}" "${ans:--}"
}
ask early.wild.test
i=1
while [ $i -le 40 ]; do
	ask "$(printf '%060d' $i).wild.test"
	i=$((i + 1))
done
ask early.wild.test
ask fixed.wild.test
ask allowed.test
ask fresh.second.test
dig +tries=1 +time=5 "$(printf '%060d' 99).wild.test" A 2>&1 | sed 's/^/# /'
EOF
chmod 0644 "$T/prog.sh"
cat >>"$T/p.yaml" <<EOF
filesystem:
  read: ["$T/prog.sh"]
EOF

in_host "$W" run -q --audit-log "$A" -p "$T/p.yaml" -- sh "$T/prog.sh" >"$T/all" 2>"$T/err"
rc=$?
grep -v '^# ' "$T/all" >"$T/out"
grep '^# ' "$T/all" >"$T/ede.txt"
sed 's/^/    | /' "$T/err" | head -n 20
check "control: the run itself succeeded (exit 0)" test "$rc" -eq 0
check "the program asked every name (45 lines)" test "$(wc -l <"$T/out")" -eq 45
status_of() { awk -v n="$1" '$1 == n { print $2 }' "$T/out" | sed -n "${2:-1}p"; }
addr_of() { awk -v n="$1" '$1 == n { print $3 }' "$T/out" | sed -n "${2:-1}p"; }
label() { printf '%060d.wild.test' "$1"; }

echo "# the burst: distinct names under one wildcard parent"
check_eq "control: the first name is answered" NOERROR status_of early.wild.test
check_eq "the first 16 distinct 60-byte names are answered (they fit in 1 KiB)" 16 \
	bash -c 'head -n 17 "$0" | tail -n 16 | grep -c " NOERROR 100\.[0-9.]*$"' "$T/out"
check_eq "the 17th is REFUSED" REFUSED status_of "$(label 17)"
check_eq "... and so is every later new name (24 of them)" 24 \
	bash -c 'sed -n "18,41p" "$0" | grep -c " REFUSED -$"' "$T/out"

echo "# the controls after the budget is spent (the same probe: dig in the same run)"
check_eq "a name asked before still resolves" NOERROR status_of early.wild.test 2
check "... to the same synthetic address" test "$(addr_of early.wild.test 1)" = "$(addr_of early.wild.test 2)"
check_eq "an exact rule's name under the spent parent is not budgeted" NOERROR \
	status_of fixed.wild.test
check_eq "another exact name keeps working" NOERROR status_of allowed.test
check_eq "another wildcard parent has its own budget" NOERROR status_of fresh.second.test
check "the refusal carries an Extended DNS Error naming the budget and a denial id" \
	grep -qE "EDE: 0 \(Other\): \(DNS exfiltration budget spent: at most 1 KiB of new names a minute below wild\.test .*\(id dn-[0-9a-f]{12}\)\)" \
	"$T/ede.txt"

echo "# the audit log"
R=$(jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$A")
check "the run's teardown is done (its summaries are written)" lab_wait 30 lab_teardowns_quiet "$A"
check_eq "one limit.dns_exfil event in full (the window's first refusal)" 1 jq -s --arg r "$R" \
	'[.[] | select(.run == $r and .action == "limit.dns_exfil" and (has("count") | not))] | length' "$A"
check "... with the rule, the name, a denial id and the reason" jq -e -s --arg r "$R" --arg n "$(label 17)" \
	'[.[] | select(.run == $r and .action == "limit.dns_exfil" and (has("count") | not))][0] |
	 .type == "limit" and .allowed == false and .resource == $n and .qtype == "A" and
	 (.denial_id | length > 0) and (.rule | test("wild.test")) and
	 (.reason | startswith("DNS exfiltration budget spent: at most 1 KiB of new names a minute below wild.test"))' "$A"
check_eq "the rest are counted, not written one by one: the events stand for all 25 refusals" 25 \
	jq -s --arg r "$R" '[.[] | select(.run == $r and .action == "limit.dns_exfil") | (.count // 1)] | add // 0' "$A"
check_eq "control: the answered names are dns.query events, allowed (18 wild.test ones)" 18 \
	jq -s --arg r "$R" '[.[] | select(.run == $r and .action == "dns.query" and .allowed and (.resource | endswith(".wild.test")) and .resource != "fixed.wild.test")] | length' "$A"
check "run.exit counts the refusals among its denials" jq -e -s --arg r "$R" \
	'.[] | select(.run == $r and .action == "run.exit") | .denials >= 25' "$A"

echo "# a shadow run (warden run --shadow): the budget's refusals are let through, as would-denies"
in_host "$W" run -q --shadow --audit-log "$A" -p "$T/p.yaml" -- sh "$T/prog.sh" >"$T/all" 2>"$T/err"
rc=$?
grep -v '^# ' "$T/all" >"$T/out"
R=$(jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$A")
check "control: the shadow run succeeded (exit 0)" test "$rc" -eq 0
check_eq "control: the first name is answered" NOERROR status_of early.wild.test
check_eq "every new name is answered (41 below wild.test)" 41 \
	bash -c 'sed -n "1,41p" "$0" | grep -c " NOERROR 100\.[0-9.]*$"' "$T/out"
check "the teardown is done" lab_wait 30 lab_teardowns_quiet "$A"
check_eq "no limit.dns_exfil refusal" 0 jq -s --arg r "$R" \
	'[.[] | select(.run == $r and .action == "limit.dns_exfil")] | length' "$A"
check "the 17th name is a would-deny naming the budget, with a denial id" jq -e -s --arg r "$R" --arg n "$(label 17)" \
	'[.[] | select(.run == $r and .action == "dns.query" and .resource == $n)][0] |
	 .allowed and .decision == "would_deny" and (.denial_id | length > 0) and
	 (.reason | startswith("DNS exfiltration budget spent"))' "$A"

lab_finish
