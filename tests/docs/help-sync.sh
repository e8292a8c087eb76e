#!/bin/bash
# tests/docs/help-sync.sh - the docs agree with the binary:
#   - each docs/commands/<page>.md holds, in the ```text block under its
#     "## Usage" heading, exactly what `kvplan ... --help` prints (the pages
#     and their arguments: tools/docs-commands.list);
#   - docs/kvplan.1 is what tools/docs-man.py makes from the pages today;
#   - docs/index.md links every page under docs/.
# A difference is one line naming the page and how to regenerate it.
# Ends with "N passed, N failed".  KVPLAN=path (default build/kvplan).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
kvplan=${KVPLAN:-$root/build/kvplan}
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

while read -r page args; do
    case $page in ''|'#'*) continue ;; esac
    f=docs/commands/$page.md
    if [ ! -f "$root/$f" ]; then bad "$f: missing (tools/docs-commands.list names it)"; continue; fi
    # shellcheck disable=SC2086
    "$kvplan" $args --help >"$tmp/help" 2>&1 || { bad "$f: \`kvplan $args --help\` failed"; continue; }
    awk 'state == 0 && $0 == "## Usage" { state = 1; next }
         state == 1 && $0 == "```text" { state = 2; next }
         state == 1 && /^#/ { exit }
         state == 2 && $0 == "```" { found = 1; exit }
         state == 2 { print }
         END { exit found ? 0 : 1 }' "$root/$f" >"$tmp/page" ||
        { bad "$f: no \`\`\`text block under \"## Usage\""; continue; }
    if cmp -s "$tmp/help" "$tmp/page"; then ok
    else bad "$f: its Usage block differs from \`kvplan $args --help\` (run tools/docs-help.sh)"; fi
done <"$root/tools/docs-commands.list"

if python3 "$root/tools/docs-man.py" >"$tmp/kvplan.1" 2>"$tmp/err"; then
    if cmp -s "$tmp/kvplan.1" "$root/docs/kvplan.1"; then ok
    else bad "docs/kvplan.1: not what tools/docs-man.py makes from docs/ (run python3 tools/docs-man.py > docs/kvplan.1)"; fi
else bad "docs/kvplan.1: tools/docs-man.py failed: $(head -1 "$tmp/err")"; fi

for f in $(cd "$root/docs" && find . -name '*.md' ! -name index.md | sed 's|^\./||' | sort); do
    if grep -qF "]($f)" "$root/docs/index.md"; then ok; else bad "docs/$f: not linked from docs/index.md"; fi
done

echo "help-sync: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
