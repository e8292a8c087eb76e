#!/bin/bash
# tests/vllm-logs/run.sh - kvplan's vLLM memory estimate against public
# startup logs: every record of records.jsonl that cases.list replays, the
# predicted "Available KV cache memory" beside the printed one, and the
# weights beside "Model loading took" where the record has it.
#
#   bash tests/vllm-logs/run.sh      (KVPLAN: default build/kvplan)
#
# Fails when a replayed record is off by more than 1 GiB, or fewer than
# half of them are within 0.5 GiB (the issue's bar).  The last line is
# "N passed, N failed".
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
KVPLAN=${KVPLAN:-$root/build/kvplan}
cd "$root" || exit 2

pass=0 fail=0 n=0 near=0
errs=() terms=()
printf '%-4s %-46s %-8s %9s %9s %7s %s\n' rec model release printed kvplan error weights
while read -r num want rest; do
    case $num in ''|\#*) continue ;; esac
    [ "$want" = skip ] && continue
    args=${rest%%#*}
    rec=$(sed -n "${num}p" "$here/records.jsonl")
    printed=$want
    [ "$want" = rec ] && printed=$(jq -r '.available_kv_gib' <<<"$rec")
    wlog=$(jq -r '.weights_gib // empty' <<<"$rec")
    # shellcheck disable=SC2086
    out=$("$KVPLAN" mem $args --runtime vllm --json 2>"$here/.err")
    pk="" gk=""
    if [ -n "$out" ]; then
        got=$(jq -r '.estimate.available_bytes / 1073741824' <<<"$out")
        wk=$(jq -r '.estimate.weights_bytes / 1073741824' <<<"$out")
        pk=$(jq -r '.estimate.activation_bytes / 1073741824' <<<"$out")
        gk=$(jq -r 'if .estimate.cudagraph_subtracted then .estimate.cudagraph_bytes / 1073741824 else empty end' <<<"$out")
    else
        got=$(grep -o 'Available KV cache memory: -\?[0-9.]* GiB\|available KV cache memory (-\?[0-9.]* GiB' "$here/.err" |
              grep -o -- '-\?[0-9.]*' | head -1)
        wk=$(grep -o 'weights [0-9.]* GiB' "$here/.err" | grep -o '[0-9.]*' | head -1)
    fi
    model=$(awk '{print $1}' <<<"$args")
    release=$(grep -o -- '--vllm-version [^ ]*' <<<"$args" | cut -d' ' -f2)
    if [ -z "$got" ]; then
        echo "FAIL vllm-logs: record $num: kvplan gave no figure: $(head -1 "$here/.err")"
        fail=$((fail + 1))
        continue
    fi
    e=$(awk -v a="$got" -v b="$printed" 'BEGIN { d = a - b; printf "%+.2f", d }')
    wcol=""
    [ -n "$wlog" ] && wcol=$(awk -v a="$wk" -v b="$wlog" 'BEGIN { printf "%.2f (logged %.2f)", a, b }')
    # the terms a record prints, for the per-term bands
    plog=$(jq -r '.activation_peak_gib // empty' <<<"$rec")
    glog=$(jq -r '.cudagraph_gib // empty' <<<"$rec")
    [ -n "$wlog" ] && [ -n "$wk" ] && terms+=("weights $(awk -v a="$wk" -v b="$wlog" 'BEGIN { d = a - b; print d < 0 ? -d : d }') $num")
    [ -n "$plog" ] && [ -n "$pk" ] && terms+=("peak $(awk -v a="$pk" -v b="$plog" 'BEGIN { d = a - b; print d < 0 ? -d : d }') $num")
    [ -n "$glog" ] && [ -n "$gk" ] && terms+=("graphs $(awk -v a="$gk" -v b="$glog" 'BEGIN { d = a - b; print d < 0 ? -d : d }') $num")
    printf '%-4s %-46s %-8s %9.2f %9.2f %7s %s\n' "$num" "${model##*/}" "$release" "$printed" "$got" "$e" "$wcol"
    n=$((n + 1))
    errs+=("${e#[+-]} $release")
    if awk -v e="$e" 'BEGIN { exit !(e <= 1 && e >= -1) }'; then pass=$((pass + 1)); else
        echo "FAIL vllm-logs: record $num is off by $e GiB (more than 1)"; fail=$((fail + 1)); fi
    awk -v e="$e" 'BEGIN { exit !(e <= 0.5 && e >= -0.5) }' && near=$((near + 1))
done <"$here/cases.list"
rm -f "$here/.err"
[ "$n" -gt 0 ] || { echo "vllm-logs: no record replayed" >&2; exit 2; }
printf '%s\n' "${errs[@]}" | sort -n | awk -v near="$near" '
    { e[NR] = $1; v[$2] = (v[$2] ? v[$2] ", " : "") $1 }
    END { m = (NR % 2) ? e[(NR + 1) / 2] : (e[NR / 2] + e[NR / 2 + 1]) / 2
          printf "\navailable KV memory on %d records: median |error| %.2f GiB, worst %.2f GiB; %d within 0.5 GiB, all within %.2f\n", NR, m, e[NR], near, e[NR]
          for (k in v) printf "  vLLM %s: |error| %s GiB\n", k, v[k] }'
# the bands kvplan prints beside each term must hold what this run measures
bands=$("$KVPLAN" mem qwen3-8b --runtime vllm --json | jq -r '.estimate.error_band_gib |
        "weights \(.weights)\npeak \(.profiling_peak)\ngraphs \(.cuda_graphs)\navailable \(.available)"')
worst=$(printf '%s\n' "${errs[@]}" | sort -n | tail -1 | cut -d' ' -f1)
[ ${#terms[@]} -gt 0 ] && printf '%s\n' "${terms[@]}" | awk '
    { if ($2 >= w[$1]) { w[$1] = $2; r[$1] = $3 } c[$1]++ }
    END { for (t in w) printf "  %s: worst |error| %.2f GiB (record %s) over %d records that print it\n", t, w[t], r[t], c[t] }'
while read -r term b; do
    if [ "$term" = available ]; then m=$worst; else
        m=$(printf '%s\n' "${terms[@]}" | awk -v t="$term" '$1 == t && $2 > w { w = $2 } END { print w + 0 }'); fi
    if awk -v m="$m" -v b="$b" 'BEGIN { exit !(m <= b) }'; then pass=$((pass + 1)); else
        echo "FAIL vllm-logs: $term is off by up to $m GiB, outside the band kvplan prints ($b GiB)"
        fail=$((fail + 1)); fi
done <<<"$bands"
if [ $((near * 2)) -lt "$n" ]; then
    echo "FAIL vllm-logs: only $near of $n records within 0.5 GiB"; fail=$((fail + 1))
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
