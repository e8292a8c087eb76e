#!/bin/bash
# tools/docs-help.sh - rewrite the ```text block under "## Usage" in each
# docs/commands/<page>.md with what `kvplan ... --help` prints, so a change to
# a command's help reaches its page (and, through tools/docs-man.py, the man
# page) by running this.  tests/docs/help-sync.sh checks they agree.
#
#   tools/docs-help.sh [KVPLAN]        KVPLAN defaults to build/kvplan
#
# The pages and the arguments that print their help are listed once, in
# tools/docs-commands.list (page, then the arguments before --help).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
kvplan=${1:-$root/build/kvplan}
[ -x "$kvplan" ] || { echo "docs-help: $kvplan: not built (make first)" >&2; exit 1; }
status=0
while read -r page args; do
    case $page in ''|'#'*) continue ;; esac
    f=$root/docs/commands/$page.md
    [ -f "$f" ] || { echo "docs-help: $f: no such page" >&2; status=1; continue; }
    help=$(mktemp)
    # shellcheck disable=SC2086
    "$kvplan" $args --help >"$help"
    out=$(mktemp)
    if ! awk -v helpfile="$help" '
        state == 0 && $0 == "## Usage" { state = 1; print; next }
        state == 1 && $0 == "```text" {
            print
            while ((getline line < helpfile) > 0) print line
            state = 2; next
        }
        state == 2 { if ($0 == "```") { print; state = 3 } ; next }
        { print }
        END { exit state == 3 ? 0 : 1 }' "$f" >"$out"; then
        echo "docs-help: $f: no \`\`\`text block under \"## Usage\"" >&2
        rm -f "$out" "$help"; status=1; continue
    fi
    if cmp -s "$out" "$f"; then rm -f "$out"; else mv "$out" "$f"; echo "docs-help: updated $f"; fi
    rm -f "$help"
done <"$root/tools/docs-commands.list"
exit $status
