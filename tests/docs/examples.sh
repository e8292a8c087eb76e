#!/bin/bash
# tests/docs/examples.sh - run every example in the documentation and check
# its output.
#
#   KVPLAN=build/kvplan bash tests/docs/examples.sh [FILE.md...]
#   bash tests/docs/examples.sh --self-test
#
# Without FILEs it reads README.md and every docs/**/*.md.  An example is a
# fenced block opened with ```console whose first line is `$ kvplan ARGS...`
# (a line ending in a backslash continues on the next); the lines after it,
# up to the closing fence, are the exact stdout.  A line that is only `...`
# stands for any number of lines (none included).  ARGS are shell words
# (quotes, backslashes, a trailing `# comment`), split by the shell's
# `eval set --`: write plain words, no pipes, redirections or substitutions.
#
# Each file's examples run in order, in a scratch directory of their own
# that holds a symbolic link to every top-level entry of the repository (so
# tests/data/... and data/... resolve, and a file an example writes, such as
# a twin, stays in the scratch directory for the examples after it), offline:
# HOME a scratch directory (so empty Hugging Face and kvplan caches),
# HF_HUB_OFFLINE=1, and the Hub and the Ollama registry at a closed loopback
# port.  stderr and the exit status are not compared.  Files run side by
# side, JOBS at a time (default: the number of cores).
#
# A mismatch prints `FAIL docs: FILE:LINE: kvplan ARGS: WHAT`, where LINE is
# the line of the first expected line that differs (or the `$ kvplan` line
# when the output has lines the example lacks, or the example is nothing but
# `...`, which would pass on any output); the run ends with
# "N passed, N failed" and exits 1 on any failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
KVPLAN=${KVPLAN:-$root/build/kvplan}
case $KVPLAN in /*) ;; *) KVPLAN=$PWD/$KVPLAN ;; esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --self-test: the runner on examples whose outcome is known, one of them
# deliberately wrong; it must fail that one, with the message above.
if [ "${1:-}" = --self-test ]; then
    cat >"$tmp/t.md" <<'EOF'
Right, with a gap:

```console
$ kvplan mem qwen3-8b -c 32k
qwen3-8b · runtime theory · 32,768 tokens · 1 sequence · K f16, V f16
...
total: 4608.00 MiB (4,831,838,208 bytes; MiB = 2^20 bytes)
```

Right, quoted arguments and a continued line:

```console
$ kvplan archs "mamba" \
    # a comment
...
2 of 132 rule sets; kvplan archs --llama lists the GGUF architectures
```

Wrong: the total is not 4096 MiB.

```console
$ kvplan mem qwen3-8b -c 32k
...
total: 4096.00 MiB (4,294,967,296 bytes; MiB = 2^20 bytes)
```

Wrong: a line the output lacks.

```console
$ kvplan archs mamba
family             model_type                                   llama.cpp
no such line
...
```

Wrong: an example that checks nothing.

```console
$ kvplan archs mamba
...
```

Wrong: the output goes on past the example.

```console
$ kvplan archs mamba
family             model_type                                   llama.cpp
```
EOF
    out=$(KVPLAN=$KVPLAN bash "$0" "$tmp/t.md" 2>&1)
    rc=$?
    ok=1
    want=(
        "FAIL docs: $tmp/t.md:24: kvplan mem qwen3-8b -c 32k: expected 'total: 4096.00 MiB (4,294,967,296 bytes; MiB = 2^20 bytes)', not found"
        "FAIL docs: $tmp/t.md:32: kvplan archs mamba: expected 'no such line', got 'mamba2             mamba2                                       mamba2'"
        "FAIL docs: $tmp/t.md:46: kvplan archs mamba: output goes on: 'mamba2             mamba2                                       mamba2'"
        "FAIL docs: $tmp/t.md:39: kvplan archs mamba: the example checks nothing: it has no line but ..."
        "2 passed, 4 failed"
    )
    for w in "${want[@]}"; do
        grep -qxF -- "$w" <<<"$out" || { echo "self-test: missing line: $w"; ok=0; }
    done
    [ $rc = 1 ] || { echo "self-test: exit status $rc, not 1"; ok=0; }
    if [ $ok = 1 ]; then
        echo "PASS docs self-test (a wrong example fails, with its line)"
        exit 0
    fi
    echo "FAIL docs self-test; the runner printed:"
    printf '%s\n' "$out"
    exit 1
fi

if [ $# -eq 0 ]; then
    cd "$root" || exit 1
    set -- README.md
    while IFS= read -r f; do set -- "$@" "$f"; done < <(find docs -name '*.md' 2>/dev/null | sort)
fi

pass=0
fail=0
run_env=(env -u XDG_CACHE_HOME -u HF_HOME -u HF_HUB_CACHE -u HUGGINGFACE_HUB_CACHE
         -u KVPLAN_CACHE -u HF_TOKEN -u HUGGING_FACE_HUB_TOKEN -u HF_TOKEN_PATH
         -u OLLAMA_HOST -u OLLAMA_CONTEXT_LENGTH -u OLLAMA_NUM_PARALLEL
         -u OLLAMA_KV_CACHE_TYPE -u OLLAMA_FLASH_ATTENTION -u VLLM_ALLOW_LONG_MAX_MODEL_LEN
         HF_HUB_OFFLINE=1
         HF_ENDPOINT=http://127.0.0.1:9 KVPLAN_OLLAMA_REGISTRY=http://127.0.0.1:9)

# compare EXPECTED ACTUAL: prints "LINE_INDEX<TAB>WHAT" for the first
# difference (LINE_INDEX: the expected line's, 0-based; -1 for extra output)
# and nothing when they match.  `...` lines split the expected lines into
# segments; the first is anchored at the start, the last at the end, and
# each one between is found at its leftmost place after the one before,
# which is enough for wildcards that match any run of lines.
compare() {
    awk -v EXP="$1" '
    BEGIN { n = 0; while ((getline l < EXP) > 0) e[n++] = l }
    { a[m++] = $0 }
    END {
        i = 0; j = 0; gap = 0
        while (i < n) {
            if (e[i] == "...") { gap = 1; i++; continue }
            s = i; while (i < n && e[i] != "...") i++      # segment e[s..i-1]
            len = i - s
            if (!gap) {
                for (k = 0; k < len; k++) {
                    if (j + k >= m) { printf "%d\texpected %c%s%c, output ended\n", s + k, 39, e[s + k], 39; exit }
                    if (a[j + k] != e[s + k]) { printf "%d\texpected %c%s%c, got %c%s%c\n", s + k, 39, e[s + k], 39, 39, a[j + k], 39; exit }
                }
                j += len
            } else if (i == n) {                           # the last segment: anchored at the end
                p = m - len
                if (p < j) p = -1
                for (k = 0; p >= 0 && k < len; k++) if (a[p + k] != e[s + k]) p = -1
                if (p < 0) { printf "%d\texpected %c%s%c, not found\n", s, 39, e[s], 39; exit }
                j = m
            } else {
                found = -1
                for (p = j; p + len <= m && found < 0; p++) {
                    for (k = 0; k < len && a[p + k] == e[s + k]; k++) ;
                    if (k == len) found = p
                }
                if (found < 0) { printf "%d\texpected %c%s%c, not found\n", s, 39, e[s], 39; exit }
                j = found + len
            }
            gap = 0
        }
        if (!gap && j < m) printf "-1\toutput goes on: %c%s%c\n", 39, a[j], 39
    }' "$2"
}

# run_file FILE DIR: FILE's examples, in order, in DIR; a PASS or FAIL line each
run_file() {
    local f=$1 dir=$2 path work n cmdline expline args exp act diff idx what line
    case $f in /*) path=$f ;; *) path=$PWD/$f ;; esac
    work=$dir/work
    mkdir -p "$work" "$dir/home"
    for e in "$root"/*; do ln -s "$e" "$work/"; done
    # one record per example: the $ line's number, the expected lines'
    # first line number, the arguments
    n=0
    while IFS=$'\t' read -r cmdline expline args; do
        n=$((n + 1))
        exp="$dir/exp.$n"
        act="$dir/act.$n"
        # the expected lines run to the closing fence (none: no stdout)
        sed -n "${expline},\$p" "$path" | awk '/^```/ { exit } { print }' >"$exp"
        if ! (cd "$work" && eval "set -- $args" &&
              "${run_env[@]}" HOME="$dir/home" OLLAMA_MODELS="$dir/home/ollama" \
              "$KVPLAN" "$@" >"$act" 2>/dev/null </dev/null); then :; fi
        diff=$(compare "$exp" "$act")
        # an example of nothing but `...` would pass on any output, a crash's too
        if [ -s "$exp" ] && ! grep -qvx -- '\.\.\.' "$exp"; then
            diff=$'-1\tthe example checks nothing: it has no line but ...'
        fi
        if [ -z "$diff" ]; then
            echo "PASS docs: $f:$cmdline: kvplan $args"
        else
            idx=${diff%%$'\t'*}
            what=${diff#*$'\t'}
            line=$cmdline
            [ "$idx" -ge 0 ] && line=$((expline + idx))
            echo "FAIL docs: $f:$line: kvplan $args: $what"
        fi
    done < <(awk '
        /^```console[ \t]*$/ { want = 1; next }
        want && /^\$ kvplan([ \t]|$)/ {
            start = NR; cmd = substr($0, 10)
            while (cmd ~ /\\$/ && (getline nxt) > 0) { sub(/\\$/, "", cmd); cmd = cmd " " nxt }
            gsub(/\t/, " ", cmd)
            printf "%d\t%d\t%s\n", start, NR + 1, cmd
            want = 0; next
        }
        { want = 0 }' "$path")
}

# the files side by side (JOBS at a time, default the number of cores),
# their reports printed in the order given
jobs=${JOBS:-$(nproc 2>/dev/null || echo 1)}
i=0
for f in "$@"; do
    i=$((i + 1))
    if [ ! -f "$f" ]; then
        echo "FAIL docs: $f: no such file" >"$tmp/out.$i"
        continue
    fi
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    run_file "$f" "$tmp/f.$i" >"$tmp/out.$i" &
done
wait
for ((k = 1; k <= i; k++)); do
    cat "$tmp/out.$k"
    pass=$((pass + $(grep -c '^PASS ' "$tmp/out.$k")))
    fail=$((fail + $(grep -c '^FAIL ' "$tmp/out.$k")))
done

echo
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
