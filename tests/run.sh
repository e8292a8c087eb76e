#!/bin/bash
# tests/run.sh - kvplan's test runner.
#
# Runs every unit-test binary in $UNIT_DIR, then every data-driven case in
# tests/cases/ (one file per case, curl-style).  A case file holds:
#
#   # free text saying what the case checks (first line is its title)
#   cmd: mem qwen3-8b -c 32768 --json      arguments to kvplan (shell words)
#   exit: 0                                expected exit status
#   json: .total_bytes == 4831838208       a jq expression that must be true
#   stdout: REGEX                          a line of stdout must match (grep -E)
#   stderr: REGEX                          a line of stderr must match (grep -E)
#   stderr-lines: 1                        stderr has exactly this many lines
#   no-stdout:                             stdout must be empty
#   env: NAME=VALUE                        set for the run (paths relative to tests/)
#
# Cases run from tests/ so data files are named data/...  The run ends with
# the summary line "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
KVPLAN=${KVPLAN:?set KVPLAN to the kvplan binary}
UNIT_DIR=${UNIT_DIR:-}
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

report() { # status name detail
    if [ "$1" = ok ]; then
        pass=$((pass + 1))
        echo "PASS $2"
    else
        fail=$((fail + 1))
        echo "FAIL $2: $3"
    fi
}

# unit tests print "ok NAME" or "FAIL NAME: why" per check
if [ -n "$UNIT_DIR" ]; then
    for t in "$UNIT_DIR"/test_*; do
        [ -x "$t" ] || continue
        out=$("$t" 2>&1)
        rc=$?
        while IFS= read -r line; do
            case "$line" in
            "ok "*) report ok "$(basename "$t"): ${line#ok }" ;;
            "FAIL "*) report fail "$(basename "$t"): ${line#FAIL }" "" ;;
            esac
        done <<<"$out"
        [ $rc -eq 0 ] || echo "$out" | grep -q '^FAIL ' || report fail "$(basename "$t")" "exit $rc"
    done
fi

run_case() { # file
    local f=$1 name args=() want_exit=0 rc why=""
    name=$(basename "$f" .case)
    local cmd
    cmd=$(sed -n 's/^cmd: //p' "$f" | head -1)
    [ -n "$cmd" ] || { report fail "$name" "no cmd: line"; return; }
    want_exit=$(sed -n 's/^exit: //p' "$f" | head -1)
    eval "args=($cmd)"
    local envs=()
    while IFS= read -r e; do envs+=("$e"); done < <(sed -n 's/^env: //p' "$f")
    (cd "$here" && env HOME="$tmp/home" HF_HOME= HF_HUB_CACHE= XDG_CACHE_HOME= "${envs[@]}" \
        timeout 20 "$KVPLAN" "${args[@]}" >"$tmp/out" 2>"$tmp/err")
    rc=$?
    if [ "$rc" != "${want_exit:-0}" ]; then
        why="exit $rc, expected ${want_exit:-0}; stderr: $(head -c 300 "$tmp/err")"
    fi
    while IFS= read -r line; do
        [ -z "$why" ] || break
        case "$line" in
        "json: "*)
            jq -e "${line#json: }" "$tmp/out" >/dev/null 2>&1 ||
                why="json check failed: ${line#json: } (got $(jq -c "${line#json: }" "$tmp/out" 2>&1 | head -c 200))" ;;
        "stdout: "*)
            grep -qE -- "${line#stdout: }" "$tmp/out" || why="stdout lacks /${line#stdout: }/" ;;
        "stderr: "*)
            grep -qE -- "${line#stderr: }" "$tmp/err" || why="stderr lacks /${line#stderr: }/: $(head -c 300 "$tmp/err")" ;;
        "stderr-lines: "*)
            [ "$(wc -l <"$tmp/err")" = "${line#stderr-lines: }" ] ||
                why="stderr has $(wc -l <"$tmp/err") lines, expected ${line#stderr-lines: }" ;;
        "no-stdout:"*)
            [ ! -s "$tmp/out" ] || why="stdout not empty" ;;
        esac
    done <"$f"
    if [ -z "$why" ]; then report ok "$name"; else report fail "$name" "$why"; fi
}

for f in "$here"/cases/*.case; do
    run_case "$f"
done

echo
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
