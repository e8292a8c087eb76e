#!/bin/bash
# tests/docs/examples.sh - run every example in the documentation and check
# its output.
#
#   KVPLAN=build/kvplan bash tests/docs/examples.sh [FILE.md...]
#   bash tests/docs/examples.sh --self-test
#
# Without FILEs it reads README.md and every docs/**/*.md.  An example is a
# fenced block opened with ```console whose first line is `$ kvplan ARGS...`
# or `$ NAME=VALUE... kvplan ARGS...` (variables set for that run alone; a
# line ending in a backslash continues on the next); the lines after it, up
# to the closing fence, are the exact stdout (none: stdout must be empty).  A
# line that is only `...` stands for any number of lines (none included).
# ARGS are shell words (quotes, backslashes, a trailing `# comment`), split
# by the shell's `eval set --`: write plain words, no pipes, redirections or
# substitutions.
#
# Each file's examples run in order, in a scratch directory of their own
# that holds a symbolic link to every top-level entry of the repository (so
# tests/data/... and data/... resolve, and a file an example writes, such as
# a twin, stays in the scratch directory for the examples after it), offline:
# HOME a scratch directory (so empty Hugging Face and kvplan caches),
# HF_HUB_OFFLINE=1, and the Hub and the Ollama registry at a closed loopback
# port.  stderr is not compared, nor the exit status, except that an example
# with no stdout must exit 0 and none may die of a signal.  Files run side by
# side, JOBS at a time (default: the number of cores).
#
# A file with the line `<!-- examples: fake-remote -->` runs against
# tests/remote/fake_remote.py instead (the test suite's stand-in Hugging Face
# Hub, CDN and Ollama registry on loopback, fixtures from
# tests/remote/mkfixtures.sh): HF_ENDPOINT and KVPLAN_OLLAMA_REGISTRY at its
# hub, HF_HUB_OFFLINE unset.  The server is started once per run, only when
# some file has the line, and stopped at exit.  With NO_NETWORK set (a kvplan
# without a network) such a file's examples are reported SKIP; a server that
# does not start fails them.
#
# No command may hide from the runner: a kvplan command line (`kvplan ...`,
# `$ kvplan ...`, `NAME=VALUE kvplan ...`) in any other fenced block (```sh,
# ```text, a bare ```) fails, unless the block is a Usage synopsis (the first
# block after a `## Usage` heading, which tests/docs/help-sync.sh checks) or
# the last line before its fence that is not blank is
# `<!-- examples: not run: REASON -->`.
#
# A mismatch prints `FAIL docs: FILE:LINE: kvplan ARGS: WHAT`, where LINE is
# the line of the first expected line that differs (or the `$ kvplan` line
# when the output has lines the example lacks, or the example is nothing but
# `...`, which would pass on any output); a skipped example prints
# `SKIP docs: FILE:LINE: kvplan ARGS: WHY`.  The run ends with "N skipped"
# (when some were) and "N passed, N failed", and exits 1 on any failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
KVPLAN=${KVPLAN:-$root/build/kvplan}
case $KVPLAN in /*) ;; *) KVPLAN=$PWD/$KVPLAN ;; esac

tmp=$(mktemp -d)
remote_pid=
trap '[ -z "$remote_pid" ] || kill "$remote_pid" 2>/dev/null; rm -rf "$tmp"' EXIT

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

Right, a variable for this run alone (without it vLLM refuses the length):

```console
$ VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 kvplan mem qwen3-8b --runtime vllm --max-model-len 65536
qwen3-8b · vLLM 0.29.1 rules · A100-80GB x1 · max_model_len 65,536 · block 16 · max_num_batched_tokens 8,192 · prefix caching on
...
```

Wrong: no stdout, but only because it failed.

```console
$ kvplan mem qwen3-8b --runtime vllm --max-model-len 65536
```

## Usage

```text
kvplan archs [WORD] (a synopsis: not an example)
```

<!-- examples: not run: the self-test's own reason -->

```sh
kvplan archs mamba
```

Wrong: a command no test runs.

```sh
$ kvplan archs mamba
```
EOF
    cat >"$tmp/r.md" <<'EOF'
<!-- examples: fake-remote -->

```console
$ kvplan mem ollama:qwen3:8b
...
total: 2304.00 MiB (2,415,919,104 bytes; MiB = 2^20 bytes)
...
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
        "FAIL docs: $tmp/t.md:61: kvplan mem qwen3-8b --runtime vllm --max-model-len 65536: no stdout expected, and it exited with status 1"
        "FAIL docs: $tmp/t.md:79: a kvplan command in \`\`\`sh block, which no test runs: make it a \`\`\`console example, or put <!-- examples: not run: WHY --> before the block"
        "3 passed, 6 failed"
    )
    for w in "${want[@]}"; do
        grep -qxF -- "$w" <<<"$out" || { echo "self-test: missing line: $w"; ok=0; }
    done
    [ $rc = 1 ] || { echo "self-test: exit status $rc, not 1"; ok=0; }
    # a fake-remote file without a network: skipped, neither passed nor failed
    out2=$(NO_NETWORK=1 KVPLAN=$KVPLAN bash "$0" "$tmp/r.md" 2>&1)
    rc=$?
    out=$out$'\n'$out2
    for w in "SKIP docs: $tmp/r.md:4: kvplan mem ollama:qwen3:8b: this kvplan has no network (NO_NETWORK): the fake Hub cannot be asked" \
             "1 skipped" "0 passed, 0 failed"; do
        grep -qxF -- "$w" <<<"$out2" || { echo "self-test: missing line: $w"; ok=0; }
    done
    [ $rc = 0 ] || { echo "self-test: NO_NETWORK: exit status $rc, not 0"; ok=0; }
    if [ $ok = 1 ]; then
        echo "PASS docs self-test (a wrong example fails, with its line; a command outside the runner fails; a fake-remote file without a network is skipped)"
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
skip=0
run_env=(env -u XDG_CACHE_HOME -u HF_HOME -u HF_HUB_CACHE -u HUGGINGFACE_HUB_CACHE
         -u KVPLAN_CACHE -u HF_TOKEN -u HUGGING_FACE_HUB_TOKEN -u HF_TOKEN_PATH
         -u OLLAMA_HOST -u OLLAMA_CONTEXT_LENGTH -u OLLAMA_NUM_PARALLEL
         -u OLLAMA_KV_CACHE_TYPE -u OLLAMA_FLASH_ATTENTION -u VLLM_ALLOW_LONG_MAX_MODEL_LEN
         -u http_proxy -u https_proxy -u HTTP_PROXY -u HTTPS_PROXY -u ALL_PROXY -u all_proxy
         NO_PROXY=127.0.0.1,127.0.0.2,localhost no_proxy=127.0.0.1,127.0.0.2,localhost
         HF_HUB_OFFLINE=1
         HF_ENDPOINT=http://127.0.0.1:9 KVPLAN_OLLAMA_REGISTRY=http://127.0.0.1:9)
remote_marker='<!-- examples: fake-remote -->'
remote_state=     # up, skip or down once a file has the marker
hub=
remote_why=

# start_remote: the fake Hub, CDN and Ollama registry of tests/remote, on
# fresh fixtures; sets hub, or says why not in remote_why
start_remote() {
    local r=$tmp/remote
    mkdir -p "$r"
    bash "$root/tests/remote/mkfixtures.sh" "$r/fx" "$KVPLAN" >"$r/mkfixtures.out" 2>&1 ||
        { remote_why="mkfixtures.sh failed: $(tail -1 "$r/mkfixtures.out")"; return 1; }
    # started from a subshell, so that it is not one of this shell's jobs
    # (the files' jobs are counted and waited for below)
    local py=${PYTHON:-python3}
    [ -n "${PYTHON:-}" ] || [ ! -x /usr/bin/python3 ] || py=/usr/bin/python3
    ("$py" "$root/tests/remote/fake_remote.py" --fixtures "$r/fx" --ports-file "$r/ports" \
        --log "$r/log" >"$r/server.out" 2>&1 </dev/null & echo $! >"$r/pid")
    remote_pid=$(cat "$r/pid")
    for _ in $(seq 200); do [ -s "$r/ports" ] && break; sleep 0.1; done
    [ -s "$r/ports" ] || { remote_why="fake_remote.py did not start: $(tail -1 "$r/server.out")"; return 1; }
    local hp cp
    read -r hp cp <"$r/ports"
    hub=http://127.0.0.1:$hp
}

# strays FILE: a "LINE<TAB>LANG" line for each kvplan command line in a
# fenced block that is not a console block, a Usage synopsis or a block
# marked not run
strays() {
    awk '
    /^```/ {
        if (inb) { inb = 0; prev = "```"; next }
        inb = 1; lang = substr($0, 4); sub(/[ \t]+$/, "", lang)
        exempt = (lang == "console") || (usage && !used) || (prev ~ /^<!-- examples: not run: .+-->$/)
        if (usage) used = 1
        next
    }
    inb && !exempt && /^(\$ )?([A-Za-z_][A-Za-z0-9_]*=[^ ]* +)*kvplan( |$)/ {
        printf "%d\t%s\n", NR, (lang == "" ? "a bare ```" : "```" lang)
    }
    !inb && /^#/ { usage = ($0 ~ /^##+ Usage[ \t]*$/); used = 0 }
    !inb && NF { prev = $0 }' "$1"
}

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
    local remote= vars sline slang rc
    case $f in /*) path=$f ;; *) path=$PWD/$f ;; esac
    work=$dir/work
    mkdir -p "$work" "$dir/home"
    for e in "$root"/*; do ln -s "$e" "$work/"; done
    grep -qxF -- "$remote_marker" "$path" && remote=$remote_state
    while IFS=$'\t' read -r sline slang; do
        echo "FAIL docs: $f:$sline: a kvplan command in $slang block, which no test runs: make it a \`\`\`console example, or put <!-- examples: not run: WHY --> before the block"
    done < <(strays "$path")
    # one record per example: the $ line's number, the expected lines'
    # first line number, the arguments
    n=0
    while IFS=$'\t' read -r cmdline expline args; do
        n=$((n + 1))
        exp="$dir/exp.$n"
        act="$dir/act.$n"
        # the expected lines run to the closing fence (none: no stdout)
        sed -n "${expline},\$p" "$path" | awk '/^```/ { exit } { print }' >"$exp"
        case $remote in
        skip) echo "SKIP docs: $f:$cmdline: $args: $remote_why"; continue ;;
        down) echo "FAIL docs: $f:$cmdline: $args: the fake Hub did not start: $remote_why"; continue ;;
        up) vars=(HF_HUB_OFFLINE= HF_ENDPOINT="$hub" KVPLAN_OLLAMA_REGISTRY="$hub") ;;
        *) vars=() ;;
        esac
        # NAME=VALUE words before kvplan set variables for this run
        (cd "$work" && eval "set -- $args" &&
         while [[ ${1:-} =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; do vars+=("$1"); shift; done &&
         shift &&
         "${run_env[@]}" HOME="$dir/home" OLLAMA_MODELS="$dir/home/ollama" "${vars[@]}" \
         "$KVPLAN" "$@" >"$act" 2>/dev/null </dev/null)
        rc=$?
        diff=$(compare "$exp" "$act")
        # an example of nothing but `...` would pass on any output, a crash's too
        if [ -s "$exp" ] && ! grep -qvx -- '\.\.\.' "$exp"; then
            diff=$'-1\tthe example checks nothing: it has no line but ...'
        # one of no lines passes on no output: it must succeed too; and a
        # crash (killed by a signal) fails any example
        elif [ ! -s "$exp" ] && [ "$rc" -ne 0 ]; then
            diff=$'-1\tno stdout expected, and it exited with status '"$rc"
        elif [ "$rc" -ge 128 ]; then
            diff=$'-1\tkilled by signal '"$((rc - 128))"
        fi
        if [ -z "$diff" ]; then
            echo "PASS docs: $f:$cmdline: $args"
        else
            idx=${diff%%$'\t'*}
            what=${diff#*$'\t'}
            line=$cmdline
            [ "$idx" -ge 0 ] && line=$((expline + idx))
            echo "FAIL docs: $f:$line: $args: $what"
        fi
    done < <(awk '
        /^```console[ \t]*$/ { want = 1; next }
        want && /^\$ ([A-Za-z_][A-Za-z0-9_]*=[^ \t]*[ \t]+)*kvplan([ \t]|$)/ {
            start = NR; cmd = substr($0, 3)
            while (cmd ~ /\\$/ && (getline nxt) > 0) { sub(/\\$/, "", cmd); cmd = cmd " " nxt }
            gsub(/\t/, " ", cmd)
            printf "%d\t%d\t%s\n", start, NR + 1, cmd
            want = 0; next
        }
        { want = 0 }' "$path")
}

# the fake remote, once, if some file asks for it
for f in "$@"; do
    [ -f "$f" ] && grep -qxF -- "$remote_marker" "$f" || continue
    if [ -n "${NO_NETWORK:-}" ]; then
        remote_state=skip remote_why="this kvplan has no network (NO_NETWORK): the fake Hub cannot be asked"
    elif start_remote; then
        remote_state=up
    else
        remote_state=down
    fi
    break
done

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
    skip=$((skip + $(grep -c '^SKIP ' "$tmp/out.$k")))
done

echo
[ "$skip" -eq 0 ] || echo "$skip skipped"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
