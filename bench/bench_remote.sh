#!/bin/bash
# bench/bench_remote.sh - what reading a remote GGUF's header costs: kvplan's
# requests, connections and bytes for a 152K-vocabulary GGUF (bench_gguf's
# Qwen2.5-7B-like file) served on loopback by tests/remote/fake_remote.py,
# against the header's own size and against gguf-parser-go's plan for the
# same file, computed from its code (reference/remote-models.md 3.2: a HEAD,
# then 4 MiB ranged GETs, each re-resolved through the Hub's redirect, with
# keep-alive disabled).  Counts, not timings: loopback latency says nothing
# about a real link, while round trips and bytes carry over.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
KVPLAN=${KVPLAN:?set KVPLAN to the kvplan binary}
BENCH_GGUF=${BENCH_GGUF:?set BENCH_GGUF to the bench_gguf binary}
tmp=$(mktemp -d)
pid=
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
repo=$tmp/fx/hf/bench/Qwen2.5-7B-152K-GGUF
mkdir -p "$repo" "$tmp/fx/ollama"
"$BENCH_GGUF" "$tmp" --write-only
mv "$tmp/bench-twin.gguf" "$repo/Qwen2.5-7B-Q4_K_M.gguf"
python3 "$here/../tests/remote/fake_remote.py" --fixtures "$tmp/fx" --ports-file "$tmp/ports" \
    --log "$tmp/log" >"$tmp/server.out" 2>&1 &
pid=$!
for _ in $(seq 300); do [ -s "$tmp/ports" ] && break; sleep 0.1; done
read -r hub _ <"$tmp/ports"
fetch=$(env -u http_proxy -u https_proxy -u all_proxy HOME="$tmp/home" HF_HOME= HF_HUB_CACHE= \
    XDG_CACHE_HOME= KVPLAN_CACHE= HF_TOKEN= HF_ENDPOINT="http://127.0.0.1:$hub" \
    "$KVPLAN" mem bench/Qwen2.5-7B-152K-GGUF:Q4_K_M --runtime llama.cpp --json | jq -c .model.fetch)
size=$(stat -c %s "$repo/Qwen2.5-7B-Q4_K_M.gguf")
python3 - "$fetch" "$size" <<'PY'
import json, sys
f, size = json.loads(sys.argv[1]), int(sys.argv[2])
h, chunk = f["gguf_header_bytes"], 4 << 20
gets = -(-h // chunk)                    # 4 MiB reads until the header is parsed
go_bytes = min(gets * chunk, size)
go_req = 2 + 2 * gets                    # HEAD and each GET: the Hub's 302, then the CDN
print("Remote GGUF header, 152K-vocabulary Qwen2.5-7B-like file (%.2f GiB, header %.2f MiB):"
      % (size / 2**30, h / 2**20))
print("  %-34s %9s %12s %14s %10s" % ("", "exchanges", "connections", "bytes", "x header"))
print("  %-34s %9d %12d %14s %10.3f" % ("kvplan (measured)", f["requests"], f["connections"],
      format(f["bytes"], ","), f["bytes"] / h))
print("  %-34s %9d %12d %14s %10.3f" % ("gguf-parser-go v0.25.0 (computed)", go_req, go_req,
      format(go_bytes, ","), go_bytes / h))
print("  kvplan's exchanges: the file list, a HEAD on /resolve/ (its 302 read, not followed),")
print("  one streamed range GET on the CDN; its bytes include the file list's JSON.")
print("  bytes ratio gguf-parser-go / kvplan: %.2fx; exchanges %.2fx" % (go_bytes / f["bytes"],
      go_req / f["requests"]))
PY
