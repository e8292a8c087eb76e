#!/bin/bash
# bench/run.sh - kvplan's benchmarks, each printing its ratio against a
# reference measured in the same run.  `make bench` builds them and runs this.
#
# The GGUF bench compares kvplan's reader with llama.cpp's (libggml-base.so
# from node-llama-cpp's prebuilt CPU package) and node-llama-cpp's
# readGgufFileInfo.  Both come from npm, installed once into bench/node_modules
# (gitignored); set KVPLAN_NODE_MODULES to use an existing install instead,
# and KVPLAN_GGML_LIB to use another libggml-base.so.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
BENCH_GGUF=${BENCH_GGUF:?set BENCH_GGUF to the bench_gguf binary}
NLC_VERSION=3.22.1
nm=${KVPLAN_NODE_MODULES:-$here/node_modules}

if [ -z "${KVPLAN_NODE_MODULES:-}" ] &&
    { [ ! -f "$nm/node-llama-cpp/package.json" ] || [ ! -d "$nm/@node-llama-cpp/linux-x64" ]; }; then
    echo "installing node-llama-cpp@$NLC_VERSION into bench/node_modules ..." >&2
    npm install --prefix "$here" --no-save --no-package-lock --no-audit --no-fund \
        --ignore-scripts --omit=optional \
        "node-llama-cpp@$NLC_VERSION" "@node-llama-cpp/linux-x64@$NLC_VERSION" >&2
fi

ggml=${KVPLAN_GGML_LIB:-$nm/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-base.so}
args=()
[ -f "$ggml" ] && args+=(--ggml "$ggml") || echo "no $ggml: llama.cpp's reader skipped" >&2
if command -v node >/dev/null && [ -f "$nm/node-llama-cpp/package.json" ]; then
    args+=(--node "node '$here/bench_gguf.mjs' '$nm'")
else
    echo "no node or node-llama-cpp: readGgufFileInfo skipped" >&2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$BENCH_GGUF" "$tmp" "${args[@]}"
