#!/usr/bin/env bash
# docs/house.md names every source file of the product once, and names no file that is gone:
# the house map stays true as files come and go. Exit 1 with the differences; 2 when the
# map itself is missing (a test error).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
map=$src/docs/house.md
[[ -r $map ]] || { echo "FAIL - $map is missing"; echo "0 passed, 1 failed (test error)"; exit 2; }
dirs=(common policy conf audit nft netns sandbox gateway launcher)
have=$(cd "$src" && find "${dirs[@]}" -type f \( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort)
named=$(grep -oE '^\| `[a-z]+(/[A-Za-z0-9_.-]+)+\.[ch]`' "$map" | sed -E 's/^\| `//; s/`$//' |
	LC_ALL=C sort)
[[ -n $named ]] || { echo "FAIL - no file rows in $map"; echo "0 passed, 1 failed (test error)"; exit 2; }
failed=0
missing=$(LC_ALL=C comm -23 <(echo "$have") <(echo "$named" | LC_ALL=C sort -u))
gone=$(LC_ALL=C comm -13 <(echo "$have") <(echo "$named" | LC_ALL=C sort -u))
twice=$(echo "$named" | uniq -d)
for f in $missing; do echo "FAIL - $f is not in docs/house.md"; failed=$((failed + 1)); done
for f in $gone; do echo "FAIL - docs/house.md names $f, which is not in the tree"; failed=$((failed + 1)); done
for f in $twice; do echo "FAIL - docs/house.md names $f twice"; failed=$((failed + 1)); done
n=$(echo "$have" | wc -l)
echo "$((n - $(echo "$missing" | grep -c . || true))) passed, $failed failed"
((failed == 0))
