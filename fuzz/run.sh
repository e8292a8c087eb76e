#!/bin/bash
# fuzz/run.sh - builds the libFuzzer targets with ASan and UBSan (clang) and
# runs each for $FUZZ_SECONDS (default 60), seeded with the catalog configs
# and the test inputs.  Any crash, leak, hang or sanitizer report fails.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${FUZZ_SECONDS:-60}
out=build-fuzz
mkdir -p "$out"
CFLAGS="-g -O1 -std=c11 -D_DEFAULT_SOURCE -Iinclude -Ilib $(pkg-config --cflags jansson libcurl)"
SAN="-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all"
make -s B="$out/obj" "$out/obj/lib/catalog_data.c" >/dev/null
# every library file, as the Makefile's LIB_SRC (lib/ and its module folders),
# compiled once into an archive the targets link against
SANLIB="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all"
objs=()
# an object is stale when its source or any header is newer (struct layouts)
newest_h=$(ls -t lib/*.h lib/*/*.h include/kvplan.h | head -1)
for src in lib/*.c lib/*/*.c "$out/obj/lib/catalog_data.c"; do
    obj="$out/lib/${src//\//_}.o"
    mkdir -p "$out/lib"
    # shellcheck disable=SC2086
    [ "$obj" -nt "$src" ] && [ "$obj" -nt "$newest_h" ] || clang $CFLAGS $SANLIB -c "$src" -o "$obj" &
    objs+=("$obj")
    while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n; done
done
wait
rm -f "$out/libkvplan-fuzz.a"
ar rcs "$out/libkvplan-fuzz.a" "${objs[@]}"
# each target builds, then fuzzes beside the others, one per core
fuzz_one() { # name
    local name=$1 corpus="$out/corpus-$1"
    if ! "$out/$name" -artifact_prefix="$out/" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -max_len=65536 "$corpus" >"$out/$name.log" 2>&1; then
        echo "fuzz: $name FAILED"
        tail -30 "$out/$name.log"
        return 1
    fi
    echo "fuzz: $name for ${secs}s: $(grep -E "^(#[0-9]+|Done)" "$out/$name.log" | tail -1)"
}
status=0
pids=()
for t in fuzz/fuzz_*.c; do
    name=$(basename "$t" .c)
    # shellcheck disable=SC2086
    clang $CFLAGS $SAN "$t" "$out/libkvplan-fuzz.a" -o "$out/$name" $(pkg-config --libs jansson) -lcurl -lm
    corpus="$out/corpus-$name"
    mkdir -p "$corpus"
    case "$name" in
    fuzz_config) cp -n data/models/*.json tests/data/*.json tests/data/configs/*/*.json "$corpus"/ 2>/dev/null || true ;;
    fuzz_gguf) cp -n tests/data/twin/*.gguf "$corpus"/ 2>/dev/null || true ;;
    fuzz_gguf_prefix) cp -n tests/data/twin/*.gguf "$corpus"/ 2>/dev/null || true ;;
    fuzz_log) cp -n tests/data/logs/*.log "$corpus"/ 2>/dev/null || true ;;
    fuzz_trace) cp -n tests/data/sim/*.jsonl "$corpus"/ 2>/dev/null || true ;;
    fuzz_trace_conv) # kv-cache-tester files as they are, RAGPulse folders as their files
        # joined by 0xff, and a sample cut to 3 requests (under -max_len)
        for f in tests/data/traces/kvt-*/*.json tests/data/traces/bad/kvt-*.json; do
            g=${f#tests/data/traces/} && cp "$f" "$corpus/${g//\//-}"; done
        for d in tests/data/traces/rp-small tests/data/traces/bad/rp-*; do
            for f in 0_trace 1_sys_prompt 2_passages 3_history 4_user_input 5_web_search; do
                cat "$d/$f.jsonl" 2>/dev/null || true; printf '\377'; done >"$corpus/${d##*/}"; done
        jq -c '.requests |= .[:3]' tests/data/traces/kv-cache-tester/trace_0008.json \
            >"$corpus/trace_0008-3.json" 2>/dev/null || true ;;
    esac
    # seeds of the parsers of remote answers (manifests, Hub JSON) live beside them
    [ ! -d "fuzz/seeds/$name" ] || cp -n "fuzz/seeds/$name"/* "$corpus"/ 2>/dev/null || true
    while [ "${#pids[@]}" -ge "$(nproc)" ]; do
        wait "${pids[0]}" || status=1
        pids=("${pids[@]:1}")
    done
    fuzz_one "$name" &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || status=1; done
exit $status
