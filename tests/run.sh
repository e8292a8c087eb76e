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
#   not-stderr: REGEX                      no line of stderr matches
#   no-stdout:                             stdout must be empty
#   env: NAME=VALUE                        set for the run (paths relative to tests/)
#
# ONLY=GLOB runs just the cases whose names match (no unit tests); JOBS=N
# runs the local cases N at a time (default: the number of cores).
#
# Cases in tests/remote/cases/ run against tests/remote/fake_remote.py (a
# fake Hugging Face Hub, CDN and Ollama registry on 127.0.0.1 / 127.0.0.2,
# started once with fixtures from tests/remote/mkfixtures.sh), each in a
# fresh HOME (so a fresh Hugging Face cache and kvplan cache), with
# HF_ENDPOINT and KVPLAN_OLLAMA_REGISTRY pointing at it.  In cmd:, env: and
# setup: lines @HUB@ is the hub's URL, @CDN@ the cdn's, @FX@ the fixtures
# directory.  They also take:
#   setup: ARGS        a kvplan run before cmd (several allowed; must exit 0;
#                      env: lines are for cmd alone)
#   file: PATH         PATH (relative to the case's HOME; a glob) exists
#   no-file: PATH      nothing matches PATH
#   symlink: PATH      PATH is a symbolic link
#   log: REGEX         a server log line of this case matches (grep -E)
#   no-log: REGEX      no server log line of this case matches
# NO_NETWORK=1 skips them (a kvplan built without a network).
# Every other case gets HF_ENDPOINT and KVPLAN_OLLAMA_REGISTRY at a closed
# loopback port, so no case ever reaches beyond this machine.
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

# Everything that mostly waits (the unit tests, most of them on their
# servers; the fake server's self-test; the remote cases, one at a time
# against one server) runs in the background beside the local cases, which
# keep the cores busy; the reports are printed afterwards in the same order
# as ever: unit tests, local cases, self-test, remote cases.

# unit tests print "ok NAME" or "FAIL NAME: why" per check
units=
if [ -n "$UNIT_DIR" ] && [ -z "${ONLY:-}" ]; then
    units=1
    # four at a time, then read in order (below)
    (
        for t in "$UNIT_DIR"/test_*; do
            [ -x "$t" ] || continue
            while [ "$(jobs -rp | wc -l)" -ge 4 ]; do wait -n; done
            ("$t" >"$tmp/$(basename "$t").out" 2>&1; echo $? >"$tmp/$(basename "$t").rc") &
        done
        wait
    ) &
    units_pid=$!
fi
report_units() {
    for t in "$UNIT_DIR"/test_*; do
        [ -x "$t" ] || continue
        out=$(cat "$tmp/$(basename "$t").out")
        rc=$(cat "$tmp/$(basename "$t").rc")
        while IFS= read -r line; do
            case "$line" in
            "ok "*) report ok "$(basename "$t"): ${line#ok }" ;;
            "FAIL "*) report fail "$(basename "$t"): ${line#FAIL }" "" ;;
            esac
        done <<<"$out"
        [ $rc -eq 0 ] || echo "$out" | grep -q '^FAIL ' || report fail "$(basename "$t")" "exit $rc"
    done
}

closed=http://127.0.0.1:9  # the discard port, closed: refused at once
hub=$closed cdn=$closed fx=

subst() { # text: the remote placeholders filled in, into $sv (no subshell:
    # this runs for every line of every case)
    sv=${1//@HUB@/$hub}
    sv=${sv//@CDN@/$cdn}
    sv=${sv//@FX@/$fx}
}

# jq_all FILE EXPR...: 0 when every `jq -e EXPR FILE` would succeed, judged
# by one jq run (jq starts slowly; a case has up to a dozen json: lines).
# Each EXPR passes as jq -e judges it: its last output over all inputs is
# neither false nor null.  Anything else (a false, an error, input that is
# not JSON) returns 1, and the caller runs the expressions one by one for
# the message.
jq_all() {
    local f=$1 prog='[inputs] as $in__ | true' e
    shift
    for e in "$@"; do
        prog+=" and ([\$in__[] | (${e}
)] | length > 0 and (last | . != false and . != null))"
    done
    jq -e -n "$prog" "$f" >/dev/null 2>&1
}

run_case() { # file [home]
    local f=$1 name want_exit="" rc why="" home=${2:-$tmp/home} line
    local args=() cmd="" have_cmd="" have_exit="" envs=() setups=() checks=() jsons=() sv
    name=${f##*/}
    name=${name%.case}
    # the case file read once: the first cmd: and exit:, every env: and
    # setup:, and the lines to check
    while IFS= read -r line || [ -n "$line" ]; do
        case $line in
        "cmd: "*) [ -n "$have_cmd" ] || { cmd=${line#cmd: }; have_cmd=1; } ;;
        "exit: "*) [ -n "$have_exit" ] || { want_exit=${line#exit: }; have_exit=1; } ;;
        "env: "*) subst "${line#env: }"; envs+=("$sv") ;;
        "setup: "*) setups+=("${line#setup: }") ;;
        "json: "*) subst "${line#json: }"; jsons+=("$sv") ;;
        esac
        checks+=("$line")
    done <"$f"
    subst "$cmd"
    cmd=$sv
    [ -n "$cmd" ] || { report fail "$name" "no cmd: line"; return; }
    eval "args=($cmd)"
    local base=(HF_ENDPOINT="$hub" KVPLAN_OLLAMA_REGISTRY="$hub")
    local setup
    for setup in "${setups[@]}"; do
        local sargs=()
        subst "$setup"
        eval "sargs=($sv)"
        env -C "$here" HOME="$home" HF_HOME= HF_HUB_CACHE= XDG_CACHE_HOME= KVPLAN_CACHE= \
            HF_HUB_OFFLINE= HF_TOKEN= "${base[@]}" timeout 20 "$KVPLAN" "${sargs[@]}" \
            >"$tmp/out" 2>"$tmp/err" ||
            why="setup failed: ${sargs[*]}: $(head -c 300 "$tmp/err")"
    done
    local log0=0 # the log lines of cmd alone
    [ -z "${log:-}" ] || { sleep 0.2; log0=$(wc -l <"$log"); }
    env -C "$here" HOME="$home" HF_HOME= HF_HUB_CACHE= XDG_CACHE_HOME= KVPLAN_CACHE= \
        HF_HUB_OFFLINE= HF_TOKEN= "${base[@]}" "${envs[@]}" timeout 20 "$KVPLAN" "${args[@]}" \
        >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ -z "${log:-}" ] || { sleep 0.2; tail -n +"$((log0 + 1))" "$log" >"$tmp/log"; }
    if [ "$rc" != "${want_exit:-0}" ]; then
        why="exit $rc, expected ${want_exit:-0}; stderr: $(head -c 300 "$tmp/err")"
    fi
    # all the json: lines in one jq run first; when one fails, each is run
    # alone below for its message
    local jq_ok=""
    [ -n "$why" ] || [ ${#jsons[@]} = 0 ] || ! jq_all "$tmp/out" "${jsons[@]}" || jq_ok=1
    for line in "${checks[@]}"; do
        [ -z "$why" ] || break
        subst "$line"
        line=$sv
        case "$line" in
        "json: "*)
            [ -n "$jq_ok" ] || jq -e "${line#json: }" "$tmp/out" >/dev/null 2>&1 ||
                why="json check failed: ${line#json: } (got $(jq -c "${line#json: }" "$tmp/out" 2>&1 | head -c 200))" ;;
        "stdout: "*)
            grep -qE -- "${line#stdout: }" "$tmp/out" || why="stdout lacks /${line#stdout: }/" ;;
        "stderr: "*)
            grep -qE -- "${line#stderr: }" "$tmp/err" || why="stderr lacks /${line#stderr: }/: $(head -c 300 "$tmp/err")" ;;
        "not-stderr: "*)
            ! grep -qE -- "${line#not-stderr: }" "$tmp/err" || why="stderr has /${line#not-stderr: }/" ;;
        "stderr-lines: "*)
            [ "$(wc -l <"$tmp/err")" = "${line#stderr-lines: }" ] ||
                why="stderr has $(wc -l <"$tmp/err") lines, expected ${line#stderr-lines: }" ;;
        "no-stdout:"*)
            [ ! -s "$tmp/out" ] || why="stdout not empty" ;;
        "file: "*) # a glob
            compgen -G "$home/${line#file: }" >/dev/null || why="no file ${line#file: }" ;;
        "no-file: "*)
            ! compgen -G "$home/${line#no-file: }" >/dev/null || why="${line#no-file: } exists" ;;
        "symlink: "*)
            local l
            l=$(compgen -G "$home/${line#symlink: }" | head -1)
            [ -n "$l" ] && [ -L "$l" ] || why="not a symlink: ${line#symlink: }" ;;
        "log: "*)
            grep -qE -- "${line#log: }" "$tmp/log" || why="server log lacks /${line#log: }/" ;;
        "no-log: "*)
            ! grep -qE -- "${line#no-log: }" "$tmp/log" ||
                why="server log has /${line#no-log: }/: $(grep -E -- "${line#no-log: }" "$tmp/log" | head -1 | head -c 300)" ;;
        esac
    done
    if [ -z "$why" ]; then report ok "$name"; else report fail "$name" "$why"; fi
}

ONLY=${ONLY:-} # a glob of case names to run (unit tests are skipped then)
want() { [ -z "$ONLY" ] || [[ $(basename "$1" .case) == $ONLY ]]; }

JOBS=${JOBS:-$(nproc 2>/dev/null || echo 1)}
run_shard() { # k: every JOBS-th wanted case from the k-th
    local i=0
    tmp=$tmp/shard$1
    mkdir -p "$tmp"
    for f in "$here"/cases/*.case; do
        want "$f" || continue
        [ $((i++ % JOBS)) -ne "$1" ] || run_case "$f"
    done
}
# the remote cases, against the fake Hub / CDN / registry
start_remote() {
    fx=$tmp/fixtures log=$tmp/remote.log
    local ports=$tmp/remote.ports
    mkdir -p "$tmp/hf-home-with-token" # a token file where huggingface_hub keeps it
    printf 'hf_user_token\n' >"$tmp/hf-home-with-token/token"
    bash "$here/remote/mkfixtures.sh" "$fx" "$KVPLAN" >"$tmp/mkfixtures.out" 2>&1 ||
        { cat "$tmp/mkfixtures.out"; return 1; }
    python3 "$here/remote/fake_remote.py" --fixtures "$fx" --ports-file "$ports" --log "$log" \
        --token hf_user_token --gated-approved-token hf_approved_token \
        >"$tmp/remote.out" 2>&1 &
    remote_pid=$!
    for _ in $(seq 100); do [ -s "$ports" ] && break; sleep 0.1; done
    [ -s "$ports" ] || { cat "$tmp/remote.out"; return 1; }
    read -r hp cp <"$ports"
    hub=http://127.0.0.1:$hp cdn=http://127.0.0.2:$cp
}
# the fake server itself first: if it does not behave as the Hub, CDN and
# registry do, the remote cases prove nothing (none run with NO_NETWORK)
selftest=
if [ -z "$ONLY" ] && [ -z "${NO_NETWORK:-}" ]; then
    selftest=1
    (bash "$here/remote/selftest.sh" "$KVPLAN" >"$tmp/selftest.out" 2>&1; echo $? >"$tmp/selftest.rc") &
fi

remote_wanted=
for f in "$here"/remote/cases/*.case; do want "$f" && remote_wanted=1; done
# NO_NETWORK=1: a kvplan built without a network (the WebAssembly build)
# cannot be asked what a server answers; its refusal is tested locally
if [ -n "$remote_wanted" ] && [ -n "${NO_NETWORK:-}" ]; then
    echo "SKIP the $(ls "$here"/remote/cases/*.case | wc -l) remote cases: this kvplan has no network" >"$tmp/remote-skip.log"
    remote_wanted=
fi
run_remote() { # the remote cases, one after the other
    tmp=$tmp/remote
    mkdir -p "$tmp"
    if start_remote; then
        trap 'kill "$remote_pid" 2>/dev/null; wait "$remote_pid" 2>/dev/null' EXIT
        for f in "$here"/remote/cases/*.case; do
            want "$f" || continue
            h=$tmp/rhome-$(basename "$f" .case)
            mkdir -p "$h"
            run_case "$f" "$h"
        done
    else
        report fail "remote cases" "the fake Hub did not start"
    fi
}
[ -z "$remote_wanted" ] || (run_remote >"$tmp/remote-cases.log" 2>&1) &

# the local cases in $JOBS shards at once (default: one per core), each with
# its own scratch directory; their lines are merged in case order
shard_pids=()
for ((k = 0; k < JOBS; k++)); do
    run_shard "$k" >"$tmp/shard$k.log" 2>&1 &
    shard_pids+=($!)
done
wait "${shard_pids[@]}"
sort -s -t' ' -k2,2 "$tmp"/shard*.log >"$tmp/shards.log"

[ -z "$units" ] || { wait "$units_pid"; report_units; }
cat "$tmp/shards.log"
pass=$((pass + $(grep -c '^PASS ' "$tmp/shards.log")))
fail=$((fail + $(grep -c '^FAIL ' "$tmp/shards.log")))
wait
if [ -n "$selftest" ]; then
    if [ "$(cat "$tmp/selftest.rc")" = 0 ]; then
        report ok "remote/selftest.sh: $(tail -1 "$tmp/selftest.out")"
    else
        report fail "remote/selftest.sh" "$(grep -m5 FAIL "$tmp/selftest.out" | tr '\n' ' ')"
    fi
fi
[ ! -f "$tmp/remote-skip.log" ] || cat "$tmp/remote-skip.log"
if [ -f "$tmp/remote-cases.log" ]; then
    cat "$tmp/remote-cases.log"
    pass=$((pass + $(grep -c '^PASS ' "$tmp/remote-cases.log")))
    fail=$((fail + $(grep -c '^FAIL ' "$tmp/remote-cases.log")))
fi

echo
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
