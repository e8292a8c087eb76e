#!/bin/bash
# tests/oracle/run.sh - the llama.cpp oracle: kvplan's llama.cpp runtime
# against the real llama.cpp (release v0.5.0, the prebuilt CPU libraries of
# node-llama-cpp 3.22.1), byte for byte.  See tests/oracle/README.md.
#
#   bash tests/oracle/run.sh [options]
#
# For every model in archs.list and every setting in settings.list it runs
#   probe TWIN.gguf <the settings, as llama-server would pass them>
#   kvplan mem TWIN.gguf --runtime llama.cpp --llama-version v0.5.0 <settings> --json
# and compares llama.cpp's "llama_kv_cache: size = ..." and
# "llama_memory_recurrent: size = ..." lines with kvplan's "log" array, in
# order, as exact strings (plus n_ctx, n_ctx_seq and kv_unified).  When
# llama.cpp refuses a setting, kvplan must refuse it too.  The last line is
# "N passed, N failed"; the exit status is 1 if anything failed, 2 if the
# oracle could not be set up.
#
# Options:
#   --source twin|catalog|both  what kvplan reads: the twin GGUF (default), the
#                               catalog config.json, or each in turn
#   --twins DIR                 take DIR/NAME.gguf when it exists instead of
#                               running `kvplan twin` (e.g. real GGUFs)
#   --only REGEX                only the models whose name matches
#   --archs FILE, --settings FILE   other lists (default: archs.list and
#                               every archs.d/*.list)
#   --mode noalloc|mmap         how the probe loads: noalloc (default) allocates
#                               no weights and no KV cache, but llama.cpp still
#                               allocates a recurrent state; mmap allocates the
#                               KV cache too.  A case that would allocate more
#                               than $ORACLE_MAX_ALLOC bytes (default 1.25 GiB) is
#                               skipped and counted apart.
#   --no-selftest               skip the probe's check against published numbers
#   -j N                        models checked in parallel (default: nproc)
#   -v                          also print the lines of the cases that match
#
# Environment: KVPLAN (default build/kvplan), ORACLE_WORK (default
# tests/oracle/.work: probe, headers, twins), ORACLE_MAX_ALLOC.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
KVPLAN=${KVPLAN:-$root/build/kvplan}
WORK=${ORACLE_WORK:-$here/.work}
MAX_ALLOC=${ORACLE_MAX_ALLOC:-1342177280}   # 1.25 GiB
NLC_VERSION=3.22.1          # node-llama-cpp, which ships...
LLAMA_TAG=v0.5.0            # ...this llama.cpp release
RULES=v0.5.0                # kvplan's rule set for it (--llama-version)
BINS=$here/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64
NLC=$here/node_modules/node-llama-cpp
BUNDLE=$NLC/llama/gitRelease.bundle

source_mode=twin twins="" only="" mode=noalloc selftest=1 verbose=0
jobs=$(nproc 2>/dev/null || echo 2)
archs_file=$here/archs.list settings_file=$here/settings.list

usage() { sed -n '2,/^set -uo/p' "$0" | sed -e '/^set -uo/d' -e 's/^# \{0,1\}//' >&2; exit 2; }
die() { echo "oracle: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
    case $1 in
    --source) source_mode=${2:?}; shift ;;
    --twins) twins=${2:?}; shift ;;
    --only) only=${2:?}; shift ;;
    --archs) archs_file=${2:?}; shift ;;
    --settings) settings_file=${2:?}; shift ;;
    --mode) mode=${2:?}; shift ;;
    --no-selftest) selftest=0 ;;
    -v) verbose=1 ;;
    -j) jobs=${2:?}; shift ;;
    -h|--help) usage ;;
    *) echo "oracle: unknown option: $1" >&2; usage ;;
    esac
    shift
done
case $source_mode in twin|catalog|both) ;; *) die "--source: twin, catalog or both" ;; esac
case $mode in noalloc|mmap) ;; *) die "--mode: noalloc or mmap" ;; esac
[ -f "$archs_file" ] || die "$archs_file: no such file"
[ -f "$settings_file" ] || die "$settings_file: no such file"
[ -x "$KVPLAN" ] || die "$KVPLAN: not built (make, or set KVPLAN)"
mkdir -p "$WORK" || die "cannot create $WORK"
tmp=$(mktemp -d) || die "mktemp failed"
trap 'rm -rf "$tmp"' EXIT

# ---- setup: tools, node-llama-cpp, headers, probe --------------------------

need=""
command -v cc >/dev/null || need="$need gcc libc6-dev"
command -v npm >/dev/null || need="$need nodejs npm"
command -v git >/dev/null || need="$need git"
command -v python3 >/dev/null || need="$need python3"
command -v jq >/dev/null || need="$need jq"
if [ -n "$need" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "oracle: installing$need" >&2
        export DEBIAN_FRONTEND=noninteractive
        { apt-get update -qq && apt-get install -y -qq --no-install-recommends $need; } >"$WORK/apt.log" 2>&1 ||
            { tail -5 "$WORK/apt.log" >&2; die "apt-get install$need failed"; }
    else
        die "missing tools:$need"
    fi
fi

installed_version() { jq -r .version "$1/package.json" 2>/dev/null; }
if [ "$(installed_version "$NLC")" != $NLC_VERSION ] ||
   [ "$(installed_version "$here/node_modules/@node-llama-cpp/linux-x64")" != $NLC_VERSION ] ||
   [ ! -f "$BINS/libllama.$LLAMA_TAG.so" ] || [ ! -f "$BUNDLE" ]; then
    echo "oracle: npm install node-llama-cpp@$NLC_VERSION @node-llama-cpp/linux-x64@$NLC_VERSION (tests/oracle/node_modules)" >&2
    (cd "$here" && npm install --prefix "$here" --ignore-scripts --omit=optional \
        --no-save --no-package-lock --no-audit --no-fund --engine-strict=false \
        node-llama-cpp@$NLC_VERSION @node-llama-cpp/linux-x64@$NLC_VERSION) >"$WORK/npm.log" 2>&1 ||
        { tail -5 "$WORK/npm.log" >&2; die "npm install failed (log: $WORK/npm.log)"; }
    [ -f "$BINS/libllama.$LLAMA_TAG.so" ] || die "$BINS/libllama.$LLAMA_TAG.so missing after npm install"
fi
tag=$(jq -r .tag "$NLC/llama/llama.cpp.info.json" 2>/dev/null)
built=$(jq -r .buildOptions.llamaCpp.release "$BINS/_nlcBuildMetadata.json" 2>/dev/null)
[ "$tag" = $LLAMA_TAG ] && [ "$built" = $LLAMA_TAG ] ||
    die "expected llama.cpp $LLAMA_TAG, found source $tag and binaries $built"

src=$WORK/llama-src
if [ "$(cat "$src.stamp" 2>/dev/null)" != "$NLC_VERSION" ] || [ ! -f "$src/include/llama.h" ]; then
    rm -rf "$src" "$src.stamp"
    git -c advice.detachedHead=false clone -q "$BUNDLE" "$src" 2>"$WORK/git.log" ||
        { cat "$WORK/git.log" >&2; die "git clone of $BUNDLE failed"; }
    echo $NLC_VERSION >"$src.stamp"
fi

probe=$WORK/probe
if [ ! -x "$probe" ] || [ "$here/probe.c" -nt "$probe" ] || [ "$here/probe_breakdown.cpp" -nt "$probe" ] ||
   [ "$src.stamp" -nt "$probe" ]; then
    cc -std=c11 -O1 -Wall -Wextra -I"$src/include" -I"$src/ggml/include" \
        -DPROBE_BINS_DIR="\"$BINS\"" -c "$here/probe.c" -o "$WORK/probe.o" &&
    c++ -std=c++17 -O1 -Wall -Wextra -I"$src/include" -I"$src/ggml/include" -I"$src/src" \
        -c "$here/probe_breakdown.cpp" -o "$WORK/probe_breakdown.o" &&
    c++ "$WORK/probe.o" "$WORK/probe_breakdown.o" -o "$probe" \
        -L"$BINS" -l:libllama.$LLAMA_TAG.so -l:libggml.$LLAMA_TAG.so -l:libggml-base.so \
        -Wl,-rpath,"$BINS" || die "cannot build the probe"
fi

# ---- reporting --------------------------------------------------------------

pass=0 fail=0 skip=0
row() { printf '%-31s %-10s %-46s %s\n' "$1" "$2" "$3" "$4"; }
detail() { printf '    %s\n' "$@"; }
size_lines() { grep -E '^llama_(kv_cache|memory_recurrent): size = ' || true; }
# and the buffers beside the cache a GGUF (the twin) lets kvplan size: the
# output buffer line and the host model bytes of the metadata-only pass
buffer_lines() {
    grep -E '^(llama_(kv_cache|memory_recurrent): size = |llama_context: +CPU  output buffer size = |memory_breakdown: host (model|compute) = )' || true
}

# ---- settings -> probe arguments (llama-server's mapping) -------------------

count() { # "32k" -> 32768
    case $1 in
    *[kK]) echo $(( ${1%[kK]} * 1024 )) ;;
    *) echo "$1" ;;
    esac
}

# Sets the array P from kvplan/llama-server flags; returns 1 on a bad line.
probe_args() {
    local c="" np="" b=2048 ub=512 fa=auto tk=f16 tv=f16 swa=0 uni=""
    while [ $# -gt 0 ]; do
        case $1 in
        -c|--ctx-size) c=$(count "$2"); shift ;;
        -np|--parallel) np=$2; shift ;;
        -b|--batch-size) b=$2; shift ;;
        -ub|--ubatch-size) ub=$2; shift ;;
        -ctk|--cache-type-k) tk=$2; shift ;;
        -ctv|--cache-type-v) tv=$2; shift ;;
        -fa|--flash-attn) fa=$2; shift ;;
        --swa-full) swa=1 ;;
        --kv-unified) uni=1 ;;
        --no-kv-unified) uni=0 ;;
        *) return 1 ;;
        esac
        shift
    done
    [ -n "$c" ] || return 1
    if [ -z "$np" ]; then np=4; uni=${uni:-1}; else uni=${uni:-0}; fi
    P=(--n-ctx "$c" --n-seq "$np" --n-batch "$b" --n-ubatch "$ub" --fa "$fa"
       --type-k "$tk" --type-v "$tv" --swa-full "$swa" --kv-unified "$uni")
}

# "n_ctx n_ctx_seq kv_unified" from the probe's llama_context lines
ctx_facts() {
    local line n_ctx="" n_ctx_seq="" kv_unified=""
    while IFS= read -r line; do
        [[ $line =~ ^llama_context:\ (n_ctx|n_ctx_seq|kv_unified)\ +=\ (.*)$ ]] || continue
        printf -v "${BASH_REMATCH[1]}" '%s' "${BASH_REMATCH[2]}"
    done <"$1"
    echo "$n_ctx $n_ctx_seq $kv_unified"
}

# ctx_facts_v TEXT: the same, into $pfacts, from the probe's output text
ctx_facts_v() {
    local line n_ctx="" n_ctx_seq="" kv_unified=""
    while IFS= read -r line; do
        [[ $line =~ ^llama_context:\ (n_ctx|n_ctx_seq|kv_unified)\ +=\ (.*)$ ]] || continue
        printf -v "${BASH_REMATCH[1]}" '%s' "${BASH_REMATCH[2]}"
    done <<<"$1"
    pfacts="$n_ctx $n_ctx_seq $kv_unified"
}

# ---- self-check: the probe against published llama.cpp numbers --------------

# sum of the "size =" MiB of a probe output, rounded as published
mib_total() { size_lines <"$1" | sed -E 's/^[^=]*= *([0-9.]+) MiB.*/\1/' | awk '{s += $1} END {printf "%.0f", s}'; }

selfcheck() { # name gguf expected(total MiB | =exact line) probe-args...
    local name=$1 gguf=$2 want=$3 got
    shift 3
    if ! "$probe" "$gguf" "$@" >"$tmp/st.out" 2>"$tmp/st.err"; then
        fail=$((fail + 1)); row selftest - "$name" FAIL; detail "$(tail -3 "$tmp/st.err")"; return
    fi
    case $want in
    =*) got=$(size_lines <"$tmp/st.out"); want=${want#=} ;;
    *) got=$(mib_total "$tmp/st.out") ;;
    esac
    if [ "$got" = "$want" ]; then
        pass=$((pass + 1)); row selftest - "$name" match
        [ $verbose = 0 ] || size_lines <"$tmp/st.out" | sed 's/^/    /'
    else
        fail=$((fail + 1)); row selftest - "$name" DIFF
        detail "published: $want" "llama.cpp: $got"
    fi
}

if [ $selftest = 1 ]; then
    st=$WORK/selftest
    mkdir -p "$st"
    # Qwen3-8B's KV shape (36 x 8 x 128) under the llama architecture, full
    # size (15 GiB, a sparse hole); Gemma-3-4B (34 layers, 5 full, window 1024).
    python3 "$here/mkgguf.py" "$st/qwen3-8b.gguf" &&
    python3 "$here/mkgguf.py" "$st/gemma-3-4b.gguf" --arch gemma3 --layers 34 --embd 2560 \
        --ff 10240 --heads 8 --kv-heads 4 --head-dim 256 --vocab 262208 --ctx-train 131072 \
        --window 1024 &&
    python3 "$here/mkgguf.py" "$st/gemma-3-tiny.gguf" --arch gemma3 --layers 34 --embd 64 \
        --ff 64 --heads 8 --kv-heads 4 --head-dim 256 --vocab 256 --ctx-train 131072 \
        --window 1024 || die "mkgguf.py failed"
    q=$st/qwen3-8b.gguf g=$st/gemma-3-4b.gguf
    one="--n-ctx 32768 --n-seq 1 --fa on --swa-full 0 --kv-unified 0"
    echo "# the probe against llama.cpp numbers published for build 4da6337 (-fa on --parallel 1)"
    row model arch setting result
    selfcheck "Qwen3-8B -c 32k" "$q" "=llama_kv_cache: size = 4608.00 MiB ( 32768 cells,  36 layers,  1/1 seqs), K (f16): 2304.00 MiB, V (f16): 2304.00 MiB" $one
    selfcheck "Qwen3-8B -c 32k q8_0: 2448 MiB" "$q" 2448 $one --type-k q8_0 --type-v q8_0
    selfcheck "Gemma-3-4B -c 32k: 814 MiB" "$g" 814 $one
    selfcheck "Gemma-3-4B -c 32k -ub 256: 785 MiB" "$g" 785 $one --n-ubatch 256
    selfcheck "Gemma-3-4B -c 32k -ub 1024: 872 MiB" "$g" 872 $one --n-ubatch 1024
    selfcheck "Gemma-3-4B -c 32k --swa-full: 4352 MiB" "$g" 4352 $one --swa-full 1
    selfcheck "Gemma-3-4B -c 32k q8_0: 432 MiB" "$g" 432 $one --type-k q8_0 --type-v q8_0
    # no_alloc prints what a real allocation prints (a tiny twin, so mmap is cheap)
    for s in "--n-ctx 4096 --n-seq 1" "--n-ctx 5000 --n-seq 4 --n-ubatch 256" \
             "--n-ctx 4096 --n-seq 4 --kv-unified 1 --fa off" "--n-ctx 4096 --swa-full 1 --type-k q4_0 --type-v q4_0 --fa on"; do
        name="no_alloc = mmap: ${s//--/}"
        if "$probe" "$st/gemma-3-tiny.gguf" $s --mode noalloc >"$tmp/a" 2>"$tmp/a.err" &&
           "$probe" "$st/gemma-3-tiny.gguf" $s --mode mmap 2>"$tmp/b.err" | grep -vE '^llama_(kv_cache|memory_[a-z]+)[^ ]*: .* buffer size = ' >"$tmp/b" &&
           [ -s "$tmp/a" ] && cmp -s "$tmp/a" "$tmp/b"; then
            pass=$((pass + 1)); row selftest - "$name" match
        else
            fail=$((fail + 1)); row selftest - "$name" DIFF
            diff "$tmp/a" "$tmp/b" | sed 's/^/    /'; cat "$tmp/a.err" "$tmp/b.err" | tail -3 | sed 's/^/    /'
        fi
    done
    if [ $fail -gt 0 ]; then
        echo "oracle: the probe does not reproduce llama.cpp's published numbers; not judging kvplan" >&2
        echo "$pass passed, $fail failed"
        exit 1
    fi
    echo
fi

# ---- the matrix ---------------------------------------------------------------

# archs.list, then the group lists of archs.d/ (one file per family of
# architectures), unless --archs names one file
archs_files=("$archs_file")
if [ "$archs_file" = "$here/archs.list" ]; then
    for f in "$here"/archs.d/*.list; do [ -f "$f" ] && archs_files+=("$f"); done
fi
mapfile -t models < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e 's/^[[:space:]]*//' "${archs_files[@]}" | grep -v '^$')
mapfile -t settings < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e 's/^[[:space:]]*//' "$settings_file" | grep -v '^$')
for s in "${settings[@]}"; do
    # shellcheck disable=SC2086
    probe_args $s || die "$settings_file: cannot translate for the probe: $s"
done

mkdir -p "$WORK/twins"
echo "# $("$KVPLAN" --version 2>/dev/null | head -1) --runtime llama.cpp --llama-version $RULES vs llama.cpp $LLAMA_TAG (node-llama-cpp $NLC_VERSION, $mode)"
row model arch setting result

# Each model runs in its own directory $t (models run in parallel, -j).

# judge I: 0 if kvplan's run I agrees with llama.cpp's ($prc, $t/p.*).
# Agreement: both refuse, or the same size lines in the same order and the
# same n_ctx, n_ctx_seq and kv_unified.
judge() {
    local i=$1 krc kv want
    krc=${krcs[i]}
    [ "$prc" != 0 ] && [ "$krc" != 0 ] && return 0
    [ "$prc" != 0 ] || [ "$krc" != 0 ] && return 1
    read -r -a kv <<<"${kfacts[i]}"
    probe_lines "$i"
    [ "$want" = "${klines[i]}" ] && [ "$pfacts" = "${kv[0]:-} ${kv[1]:-} ${kv[2]:-}" ]
}

# The text of the probe's lines ($t/l, $t/l.full, $t/l.nocompute, into $pl,
# $plfull, $plnocomp) and of kvplan's ($t/kI.lines, into klines[I]) are
# kept in memory as well as in the files (explain reads those): this runs
# some 2,600 times, and a process costs more than the rest of a setting.

# probe_lines I: into $want, the probe's lines to hold kvplan's run I
# against: with the buffers for a GGUF source, the cache's size lines alone
# for a config (the compute buffer only where kvplan rebuilds the
# architecture's graph; compute_stats counts the others)
probe_lines() {
    if [ "${srcs[$1]}" != "$gguf" ]; then want=$pl
    elif [[ $'\n'${klines[$1]} == *$'\n''memory_breakdown: host compute'* ]]; then want=$plfull
    else want=$plnocomp; fi
}

# probe_file I: the file of those lines (for explain)
probe_file() {
    if [ "${srcs[$1]}" != "$gguf" ]; then echo "$t/l"
    elif grep -q '^memory_breakdown: host compute' "$t/k$1.lines"; then echo "$t/l.full"
    else echo "$t/l.nocompute"; fi
}

# filter_lines TEXT: $sl the size lines of TEXT, $bl its buffer lines (as
# size_lines and buffer_lines select them), $bl_nc those but the host
# compute line; each line ending in a newline
re_size='^llama_(kv_cache|memory_recurrent): size = '
re_buf='^(llama_(kv_cache|memory_recurrent): size = |llama_context: +CPU  output buffer size = |memory_breakdown: host (model|compute) = )'
filter_lines() {
    local line
    sl="" bl="" bl_nc=""
    while IFS= read -r line || [ -n "$line" ]; do
        [[ $line =~ $re_size ]] && sl+=$line$'\n'
        if [[ $line =~ $re_buf ]]; then
            bl+=$line$'\n'
            [[ $line == 'memory_breakdown: host compute'* ]] || bl_nc+=$line$'\n'
        fi
    done <<<"$1"
}

# host_compute TEXT: into $hc, the N of its "memory_breakdown: host compute
# = N bytes" lines (one a line)
host_compute() {
    local line re='^memory_breakdown: host compute = ([0-9]*) bytes$'
    hc=""
    while IFS= read -r line; do
        [[ $line =~ $re ]] && hc+=${hc:+$'\n'}${BASH_REMATCH[1]}
    done <<<"$1"
}

# compute_stats I: one line for the summary, "arch probe_bytes kvplan_bytes
# exact|estimate" (kvplan "-" where it has no figure at all)
compute_stats() {
    local p k how=exact hc
    [ "${srcs[$1]}" = "$gguf" ] && [ "$prc" = 0 ] || return 0
    host_compute "$plfull"
    p=$hc
    [ -n "$p" ] || return 0
    host_compute "${klines[$1]}"
    k=$hc
    [ -n "$k" ] || { k=${kest[$1]}; how=estimate; }
    echo "$arch $p ${k:--} $how" >>"$t/cstats"
}

# explain I...: what differs, llama.cpp's line above kvplan's
explain() {
    local i krc n j a b pv kv shown lc any=0 names=(n_ctx n_ctx_seq kv_unified)
    lc=$(printf '%-*s' ${#label[0]} "llama.cpp:")
    if [ "$prc" != 0 ]; then
        detail "llama.cpp refuses: $(grep -v '^probe:' "$pe" | tail -1)"
        for i in "$@"; do
            sed "s/^/    ${label[i]}/" "$t/k$i.lines"
        done
        return
    fi
    n=$(wc -l <"$t/l.full")
    for i in "$@"; do
        krc=${krcs[i]}
        [ "$krc" != 0 ] || { j=$(wc -l <"$t/k$i.lines"); [ "$j" -le "$n" ] || n=$j; }
    done
    for ((j = 1; j <= n; j++)); do
        shown=0
        for i in "$@"; do
            krc=${krcs[i]}
            [ "$krc" = 0 ] || continue
            a=$(sed -n "${j}p" "$(probe_file "$i")")
            b=$(sed -n "${j}p" "$t/k$i.lines")
            [ "$a" != "$b" ] || continue
            [ $shown = 1 ] || detail "$lc${a:-(no line)}"
            shown=1 any=1
            detail "${label[i]}${b:-(no line)}"
        done
    done
    read -r -a pv <<<"$pfacts"
    for i in "$@"; do
        krc=${krcs[i]}
        if [ "$krc" != 0 ]; then
            [ $any = 1 ] || sed "s/^/    $lc/" "$t/l"
            any=1
            detail "${label[i]}$(head -1 "$t/k$si.$i.err")"
            continue
        fi
        read -r -a kv <"$t/k$i.facts"
        for j in 0 1 2; do
            [ "${pv[j]:-}" = "${kv[j]:-}" ] ||
                detail "${names[j]}: llama.cpp ${pv[j]:-?}, ${label[i]%%:*} ${kv[j]:-?}"
        done
    done
}

# run_model DIR MODEL: every setting for one model; the table rows go to
# DIR/out, "pass fail skip" to DIR/count.
run_model() {
    t=$1
    local m=$2 gguf="" arch s i pass=0 fail=0 skip=0 kf bad srcs aborted alloc name
    krcs=()
    exec >"$t/out"
    # a config path (relative to the repository) is named by its file
    name=${m##*/}
    name=${name%.json}
    name=${name%.gguf}
    case $m in */*) [ "${m#/}" != "$m" ] || m=$root/$m ;; esac
    # the twin
    if [ -n "$twins" ] && [ -f "$twins/$name.gguf" ]; then
        gguf=$twins/$name.gguf
    elif "$KVPLAN" twin "$m" -o "$WORK/twins/$name.gguf" --kv-only --force >/dev/null 2>"$t/twin.err"; then
        gguf=$WORK/twins/$name.gguf
    fi
    if [ -z "$gguf" ]; then
        row "$name" - "(all ${#settings[@]} settings)" "FAIL: no twin"
        detail "kvplan twin $m -o $WORK/twins/$name.gguf --kv-only --force: $(head -1 "$t/twin.err")"
        echo "0 ${#settings[@]} 0" >"$t/count"
        return
    fi
    case $source_mode in
    twin) srcs=("$gguf"); label=("kvplan:    ") ;;
    catalog) srcs=("$m"); label=("kvplan:    ") ;;
    both) srcs=("$gguf" "$m"); label=("kvplan (twin):    " "kvplan (catalog): ") ;;
    esac
    # kvplan first, every setting from every source, then one jq over all
    # their JSON (jq starts slowly, and this runs some 5,000 times); the
    # probe then runs every setting in one --batch (it loads its backends
    # once), and the settings are judged in order below
    local si files=() kr=() po pe cur="" jline line ptext pl plfull plnocomp pfacts sl bl bl_nc kfacts=() kest=() klines=()
    for si in "${!settings[@]}"; do
        s=${settings[si]}
        for i in "${!srcs[@]}"; do
            # shellcheck disable=SC2086
            "$KVPLAN" mem "${srcs[i]}" --runtime llama.cpp --llama-version $RULES $s --json \
                >"$t/k$si.$i.json" 2>"$t/k$si.$i.err"
            kr[si * 2 + i]=$?
            files+=("$t/k$si.$i.json")
        done
    done
    # line 1: n_ctx n_ctx_seq kv_unified total_bytes recurrent_bytes; then the log
    # (a GGUF source also: the output buffer line first, the model bytes last, in
    # llama.cpp's order)
    # (line 2: the compute estimate, or "-")
    local jq_prog='"\(.n_ctx) \(.n_ctx_seq) \(.kv_unified) \(.total_bytes) \(.recurrent.bytes // 0)",
                   (if .compute.exact == false then .compute.host_bytes // "-" else "-" end),
                   (.output_log // empty), .log[],
                   (if .weights_bytes then "memory_breakdown: host model = \(.weights_bytes) bytes" else empty end),
                   (if .weights_bytes and .compute.exact then "memory_breakdown: host compute = \(.compute.host_bytes) bytes" else empty end)'
    declare -A jqout=()
    # one run, each file's lines after a marker line; if anything is amiss
    # (a file that is not JSON, an error), each file alone as before
    if jq -r "\"=@@file@@= \\(input_filename)\", ($jq_prog)" "${files[@]}" >"$t/k.jq" 2>/dev/null; then
        while IFS= read -r jline; do
            if [ "${jline#=@@file@@= }" != "$jline" ]; then cur=${jline#=@@file@@= }; continue; fi
            jqout[$cur]+=$jline$'\n'
        done <"$t/k.jq"
    else
        for cur in "${files[@]}"; do
            jqout[$cur]=$(jq -r "$jq_prog" "$cur" 2>/dev/null; printf x)
            jqout[$cur]=${jqout[$cur]%x}
        done
    fi
    # the GGUF must load before any setting can be judged (the first line of
    # the batch), then the settings whose run is not skipped: what the probe
    # would really allocate: the recurrent state (llama.cpp allocates it even
    # with no_alloc), or everything with --mode mmap
    local skipped=() batch="$t/p0 --n-ctx 256"$'\n'
    for si in "${!settings[@]}"; do
        s=${settings[si]}
        jline=${jqout[$t/k$si.0.json]:-}
        read -r -a kf <<<"${jline%%$'\n'*}"
        if [ "${kr[si * 2]}" = 0 ]; then
            alloc=${kf[4]:-0}
            [ "$mode" = noalloc ] || alloc=${kf[3]:-0}
            if [ "$alloc" -gt "$MAX_ALLOC" ]; then
                skipped[si]=$alloc
                continue
            fi
        fi
        # shellcheck disable=SC2086
        probe_args $s
        batch+="$t/p$((si + 1)) ${P[*]}"$'\n'
    done
    "$probe" --batch "$gguf" --mode "$mode" <<<"$batch" >"$t/batch.out" 2>&1 || {
        row "$name" - "(all ${#settings[@]} settings)" "FAIL: probe --batch failed"
        sed 's/^/    /' "$t/batch.out"
        echo "0 ${#settings[@]} 0" >"$t/count"
        return
    }
    po=$t/p0.out pe=$t/p0.err
    read -r prc <"$t/p0.rc"
    if [ "$prc" != 0 ] && grep -q 'could not load the model' "$pe"; then
        row "$name" - "(all ${#settings[@]} settings)" "FAIL: llama.cpp cannot load the twin $gguf"
        grep -v '^probe:' "$pe" | tail -3 | sed 's/^/    /'
        echo "0 ${#settings[@]} 0" >"$t/count"
        return
    fi
    arch=$(sed -n 's/^print_info: arch *= //p' "$po" | head -1)
    for si in "${!settings[@]}"; do
        s=${settings[si]}
        for i in "${!srcs[@]}"; do
            krcs[i]=${kr[si * 2 + i]}
            # line 1 the facts, line 2 the compute estimate, then the log
            jline=${jqout[$t/k$si.$i.json]:-}
            kfacts[i]="" kest[i]="" klines[i]=""
            if [ -n "$jline" ]; then
                kfacts[i]=${jline%%$'\n'*}
                jline=${jline#*$'\n'}
                if [ -n "$jline" ]; then
                    kest[i]=${jline%%$'\n'*}
                    [ "${kest[i]}" != - ] || kest[i]=""
                    jline=${jline#*$'\n'}
                    filter_lines "$jline"
                    klines[i]=$bl
                fi
            fi
            printf '%s\n' "${kfacts[i]}" >"$t/k$i.facts"
            printf '%s' "${klines[i]}" >"$t/k$i.lines"
        done
        if [ -n "${skipped[si]:-}" ]; then
            skip=$((skip + 1))
            row "$name" "$arch" "$s" "skip: allocates $((skipped[si] >> 20)) MiB"
            continue
        fi
        po=$t/p$((si + 1)).out pe=$t/p$((si + 1)).err
        read -r prc <"$t/p$((si + 1)).rc"
        ptext=$(<"$po")
        filter_lines "$ptext"
        pl=$sl plfull=$bl plnocomp=$bl_nc
        printf '%s' "$pl" >"$t/l"
        printf '%s' "$plfull" >"$t/l.full"
        printf '%s' "$plnocomp" >"$t/l.nocompute"
        ctx_facts_v "$ptext"
        aborted=""
        case $prc in
        0|1) ;;
        3)  # GGML_ABORT after the memory was created (e.g. in graph
            # reservation): the size lines are there, judge them
            aborted=$(sed -n 's/^llama.cpp aborted: //p' "$pe" | head -1)
            aborted=${aborted##*/llama.cpp/}
            if [ -n "$pl" ]; then
                prc=0
                # it never reached the breakdown: hold kvplan to what was printed
                for i in "${!srcs[@]}"; do
                    jline=${klines[i]} klines[i]=""
                    while IFS= read -r line; do
                        [[ $line == 'memory_breakdown: '* ]] || klines[i]+=$line$'\n'
                    done <<<"${jline%$'\n'}"
                    [ -n "$jline" ] || klines[i]=""
                    printf '%s' "${klines[i]}" >"$t/k$i.lines"
                done
            else
                fail=$((fail + 1))
                row "$name" "$arch" "$s" "FAIL: llama.cpp aborts before sizing its memory"
                detail "$aborted"
                continue
            fi ;;
        *)  fail=$((fail + 1))
            row "$name" "$arch" "$s" "FAIL: probe exit $prc"
            tail -3 "$pe" | sed 's/^/    /'
            continue ;;
        esac
        bad=()
        for i in "${!srcs[@]}"; do
            judge "$i" || bad+=("$i")
            compute_stats "$i"
        done
        if [ ${#bad[@]} = 0 ]; then
            pass=$((pass + 1))
            if [ "$prc" != 0 ]; then
                row "$name" "$arch" "$s" "match (both refuse)"
                [ $verbose = 0 ] ||
                    detail "llama.cpp: $(grep -v '^probe:' "$pe" | tail -1)" "kvplan:    $(head -1 "$t/k$si.0.err")"
            elif [ -n "$aborted" ]; then
                row "$name" "$arch" "$s" "match (then llama.cpp aborts)"
                detail "llama.cpp aborted after sizing its memory: $aborted"
                [ $verbose = 0 ] || sed 's/^/    /' "$t/l"
            else
                row "$name" "$arch" "$s" match
                [ $verbose = 0 ] || sed 's/^/    /' "$t/l"
            fi
        else
            fail=$((fail + 1))
            row "$name" "$arch" "$s" DIFF
            [ -z "$aborted" ] || detail "llama.cpp aborted after sizing its memory: $aborted"
            explain "${bad[@]}"
        fi
    done
    echo "$pass $fail $skip" >"$t/count"
}

n=0
for m in "${models[@]}"; do
    [ -z "$only" ] || [[ $m =~ $only ]] || continue
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    mkdir -p "$tmp/m$n"
    run_model "$tmp/m$n" "$m" &
    n=$((n + 1))
done
wait
for ((i = 0; i < n; i++)); do
    cat "$tmp/m$i/out"
    read -r a b c <"$tmp/m$i/count" || { a=0 b=1 c=0; echo "oracle: model $i did not finish" >&2; }
    pass=$((pass + a)) fail=$((fail + b)) skip=$((skip + c))
done

# the CPU compute buffer, per architecture: exact where kvplan rebuilds the
# graph (a miss is a failure above), not modelled elsewhere
# (ORACLE_COMPUTE_TABLE=FILE also writes the per-architecture table there,
# the README's source)
cat "$tmp"/m*/cstats 2>/dev/null | awk '
    { n[$1]++
      if ($3 == "-") un[$1]++
      else if ($4 == "estimate") { es[$1]++; d = ($3 - $2) / $2; if (d < 0) d = -d; if (d > worst[$1]) worst[$1] = d; if (d > worst_all) worst_all = d }
      else if ($2 == $3) ex[$1]++ }
    END {
        for (a in n) {
            kind[a] = (a in es) ? "estimate" : (a in un) ? "none" : "exact"
            tot += n[a]; et += ex[a]; st += es[a]; ut += un[a]
            if (kind[a] == "estimate") ea++; else if (kind[a] == "exact") ma++
        }
        if (!tot) exit
        printf "compute buffers: %d of %d settings exact (%d architectures rebuilt); %d settings on %d architectures estimated, worst error %.1f%%\n", et, tot, ma, st, ea, 100 * worst_all
        for (a in n) {
            line = sprintf("%-20s %5d %5d %s", a, n[a], ex[a] + 0, kind[a] == "estimate" ? sprintf("estimate, worst %.1f%%", 100 * worst[a]) : kind[a] == "none" ? "not modelled" : "exact")
            if (verbose) print "    " line
            if (table != "") print line >table
        }
    }' verbose="$verbose" table="${ORACLE_COMPUTE_TABLE:-}"
[ $skip = 0 ] || echo "($skip cases skipped: they would allocate more than ORACLE_MAX_ALLOC = $MAX_ALLOC bytes)"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
