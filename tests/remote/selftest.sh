#!/usr/bin/env bash
# selftest.sh: checks tests/remote/fake_remote.py, the offline Hub/CDN/Ollama
# imitation that kvplan's remote tests run against.
#
# Builds fresh fixtures (mkfixtures.sh) in a mktemp -d directory, starts the
# server, and checks every documented behaviour with the curl tool: status
# codes, headers, range answers, the redirects, and the JSON-lines log
# (notably that Authorization never reaches the cdn listener after a
# cross-host redirect).  JSON bodies and the log are checked by one Python
# run at the end.  Loopback only (127.0.0.1, 127.0.0.2).
#
# usage: bash tests/remote/selftest.sh [KVPLAN]     (VERBOSE=1 lists passes)
# Ends with "N passed, N failed"; exit status 1 if anything failed.
set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
kvplan=${1:-$root/build/kvplan}
if [ -z "${PYTHON:-}" ]; then
    if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=python3; fi
fi
export PYTHON
if ! command -v curl >/dev/null; then
    echo "selftest.sh: the curl tool is required (apt-get install curl)" >&2
    exit 2
fi

# Test traffic must never go to a proxy.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy
export NO_PROXY=127.0.0.1,127.0.0.2,localhost no_proxy=127.0.0.1,127.0.0.2,localhost

tmp=$(mktemp -d)
pid=
cleanup() {
    if [ -n "$pid" ]; then kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

pass=0
fail=0
ok() { pass=$((pass + 1)); [ -z "${VERBOSE:-}" ] || echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1${2:+: $2}"; }
check() {  # check NAME ACTUAL EXPECTED
    if [ "$2" = "$3" ]; then ok "$1"; else bad "$1" "got '$2', want '$3'"; fi
}
check_re() {  # check_re NAME ACTUAL EXTENDED-REGEX
    if [[ $2 =~ $3 ]]; then ok "$1"; else bad "$1" "'$2' does not match /$3/"; fi
}

# Requests.  Starting curl is what costs time, so independent requests are
# batched into one curl run (--next; connections are reused):
#   batch LABEL CURL-ARGS... [-- LABEL CURL-ARGS...]...
# then `use LABEL` selects that answer: CODE = its status, hdr/body read it.
# `req CURL-ARGS...` is a batch of one (label "req"), already selected; RC is
# curl's exit status of the last transfer.
batch() {
    local args=() label=$1 a
    shift
    args=(-sS)
    for a in "$@"; do
        if [ "$a" = -- ]; then
            args+=(-o "$tmp/b.$label" -D "$tmp/h.$label" -w "$label %{http_code}\n" --next -sS)
            label=
        elif [ -z "$label" ]; then
            label=$a
        else
            args+=("$a")
        fi
    done
    args+=(-o "$tmp/b.$label" -D "$tmp/h.$label" -w "$label %{http_code}\n")
    local out l c
    out=$(curl "${args[@]}" 2>"$tmp/err")
    RC=$?
    while read -r l c; do CODES[$l]=$c; done <<<"$out"
}
declare -A CODES
use() { CODE=${CODES[$1]:-none}; HF=$tmp/h.$1; BF=$tmp/b.$1; }
req() { batch req "$@"; use req; }
body() { cat "$BF"; }
# hdr NAME: the header's value in the last response of the selected answer.
hdr() {
    local want=${1,,} line name val=""
    while IFS= read -r line || [ -n "$line" ]; do
        line=${line%$'\r'}
        case $line in
        HTTP/*) val= ;;
        *:*) name=${line%%:*}
             if [ "${name,,}" = "$want" ]; then
                 val=${line#*:}
                 val=${val# }
             fi ;;
        esac
    done <"$HF"
    printf '%s' "$val"
}
has_hdr() { grep -qi "^$1:" "$HF"; }
save() { cp "$BF" "$tmp/j/$1.json"; }  # for the JSON checks at the end
git_sha1() { { printf 'blob %d\0' "$(stat -c %s "$1")"; cat "$1"; } | sha1sum | cut -d' ' -f1; }

# ---- fixtures and server ------------------------------------------------------------

fx=$tmp/fx
mkdir -p "$tmp/j"
if ! bash "$here/mkfixtures.sh" "$fx" "$kvplan" >/dev/null; then
    echo "selftest.sh: mkfixtures.sh failed" >&2
    exit 1
fi
TOK=hf_selftestUserToken0000000000000000000
APPROVED=hf_selftestApprovedToken000000000000000
"$PYTHON" -B "$here/fake_remote.py" --fixtures "$fx" --ports-file "$tmp/ports" \
    --log "$tmp/log.jsonl" --token "$TOK" --gated-approved-token "$APPROVED" 2>"$tmp/server.err" &
pid=$!

# Expected hashes, computed independently of the server while it starts.
Q=$fx/hf/Qwen/Qwen3-8B
G=$fx/hf/kvtest/Qwen3-8B-GGUF
q4=$G/Qwen3-8B-Q4_K_M.gguf
om=$fx/ollama/library/qwen3/8b
read -r q4_sha om_sha params_sha < <("$PYTHON" -B - "$q4" "$om/model.gguf" "$om/params" <<'PY'
import hashlib, os, sys
def sha256(path):  # the GGUFs are sparse: hash holes from a zero buffer
    h, zeros = hashlib.sha256(), bytes(1 << 22)
    fd = os.open(path, os.O_RDONLY)
    size, off = os.fstat(fd).st_size, 0
    while off < size:
        try:
            data = os.lseek(fd, off, os.SEEK_DATA)
        except OSError:
            data = size
        while off < data:
            n = min(len(zeros), data - off)
            h.update(zeros[:n])
            off += n
        end = os.lseek(fd, off, os.SEEK_HOLE) if off < size else size
        while off < end:
            b = os.pread(fd, min(1 << 22, end - off), off)
            h.update(b)
            off += len(b)
    os.close(fd)
    return h.hexdigest()
print(*map(sha256, sys.argv[1:]))
PY
)
q4_size=$(stat -c %s "$q4")
cfg_size=$(stat -c %s "$Q/config.json")
cfg_sha1=$(git_sha1 "$Q/config.json")
hex40='[0-9a-f]{40}'

for _ in $(seq 300); do
    [ -s "$tmp/ports" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
done
if [ ! -s "$tmp/ports" ]; then
    echo "selftest.sh: the server did not start" >&2
    cat "$tmp/server.err" >&2
    exit 1
fi
read -r A B <"$tmp/ports"
H=http://127.0.0.1:$A
C=http://127.0.0.2:$B

# ---- listeners ------------------------------------------------------------------------

curl -s -o /dev/null --max-time 2 "http://127.0.0.2:$A/"
check "hub listens on 127.0.0.1 only" $? 7
curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$B/"
check "cdn listens on 127.0.0.2 only" $? 7

# ---- a regular file: 307 to the resolve-cache, then 200 -------------------------------

cf=$H/Qwen/Qwen3-8B/resolve/main/config.json
batch head -I "$cf" -- headL -I -L "$cf" -- get -L "$cf" -- range -L -r 0-9 "$cf" \
    -- past -L -r "$cfg_size-" "$cf" -- gzip -L --compressed "$cf"
use head
check "config HEAD: 307" "$CODE" 307
check_re "config HEAD: relative resolve-cache Location with the git sha1" "$(hdr Location)" \
    "^/api/resolve-cache/models/Qwen/Qwen3-8B/$hex40/config\.json\?.*&etag=%22$cfg_sha1%22$"
check_re "config HEAD: Content-Length on the 307" "$(hdr Content-Length)" '^[0-9]+$'
check_re "RateLimit header on hub answers" "$(hdr RateLimit)" '^"resolvers";r=[0-9]+;t=[0-9]+$'
check "RateLimit-Policy header" "$(hdr RateLimit-Policy)" '"fixed window";"resolvers";q=3000;w=300'
use headL
check "config HEAD -L: 200" "$CODE" 200
check "config HEAD -L: ETag is the git blob sha1" "$(hdr ETag)" "\"$cfg_sha1\""
commit=$(hdr X-Repo-Commit)
check_re "config HEAD -L: X-Repo-Commit" "$commit" "^$hex40$"
check "config HEAD -L: Content-Length is the size" "$(hdr Content-Length)" "$cfg_size"
check "config HEAD -L: Accept-Ranges" "$(hdr Accept-Ranges)" bytes
use get
check "config GET -L: 200" "$CODE" 200
cmp -s "$BF" "$Q/config.json"
check "config GET -L: the file's bytes" $? 0
use range
check "config range: 206" "$CODE" 206
check "config range: Content-Range" "$(hdr Content-Range)" "bytes 0-9/$cfg_size"
check "config range: 10 bytes" "$(stat -c %s "$BF")" 10
use past
check "config range past the end: 416" "$CODE" 416
check "config range past the end: Content-Range" "$(hdr Content-Range)" "bytes */$cfg_size"
use gzip
check "config gzip: Content-Encoding" "$(hdr Content-Encoding)" gzip
cmp -s "$BF" "$Q/config.json"
check "config gzip: decodes to the file" $? 0
req -I -L "$H/Qwen/Qwen3-8B/resolve/$commit/config.json"
check "config pinned to the commit: 200, same commit" "$CODE $(hdr X-Repo-Commit)" "200 $commit"

# ---- an LFS file: 302 to the cdn with the metadata headers ----------------------------

gg=$H/kvtest/Qwen3-8B-GGUF/resolve/main
batch head -I "$gg/Qwen3-8B-Q4_K_M.gguf" -- get "$gg/Qwen3-8B-Q4_K_M.gguf" \
    -- shard -I "$gg/BF16/Qwen3-8B-BF16-00002-of-00002.gguf"
use head
check "gguf HEAD: 302" "$CODE" 302
cdn=$(hdr Location)
check_re "gguf HEAD: absolute cdn Location" "$cdn" \
    "^http://127\.0\.0\.2:$B/xet-bridge-us/$q4_sha\?.*Expires=[0-9]+&Signature="
check "gguf HEAD: X-Linked-Etag is the sha256" "$(hdr X-Linked-Etag)" "\"$q4_sha\""
check "gguf HEAD: X-Linked-Size" "$(hdr X-Linked-Size)" "$q4_size"
check_re "gguf HEAD: X-Repo-Commit" "$(hdr X-Repo-Commit)" "^$hex40$"
main_commit=$(hdr X-Repo-Commit)
head_len=$(hdr Content-Length)
use get
check "gguf GET: the 302's Content-Length is its own body's" "$(stat -c %s "$BF")" "$head_len"
use shard
check "split shard in a sub-folder: 302 + X-Linked-Size" "$CODE $(hdr X-Linked-Size)" \
    "302 $(stat -c %s "$G/BF16/Qwen3-8B-BF16-00002-of-00002.gguf")"

batch range -r 0-3 "$cdn" -- clamp -r "$((q4_size - 2))-$((q4_size + 100))" "$cdn" \
    -- open -r "$((q4_size - 5))-" "$cdn" -- suffix -r -4 "$cdn" -- past -r "$q4_size-" "$cdn" \
    -- head -I "$cdn" -- badsig -r 0-3 "${cdn/Signature=/Signature=0}" \
    -- bogus -r 0-3 "$cdn&mode=bogus"
use range
check "cdn range: 206" "$CODE" 206
check "cdn range: the GGUF magic" "$(body)" GGUF
check "cdn range: Content-Range" "$(hdr Content-Range)" "bytes 0-3/$q4_size"
has_hdr X-Repo-Commit || has_hdr X-Linked-Etag || has_hdr X-Linked-Size
check "cdn answers carry no Hub metadata headers" $? 1
use clamp
check "cdn range clamped: 206" "$CODE" 206
check "cdn range clamped: Content-Range" "$(hdr Content-Range)" "bytes $((q4_size - 2))-$((q4_size - 1))/$q4_size"
check "cdn range clamped: 2 bytes" "$(stat -c %s "$BF")" 2
use open
check "cdn open-ended range: Content-Range" "$(hdr Content-Range)" "bytes $((q4_size - 5))-$((q4_size - 1))/$q4_size"
check "cdn open-ended range: 5 bytes" "$(stat -c %s "$BF")" 5
use suffix
check "cdn suffix range: Content-Range" "$(hdr Content-Range)" "bytes $((q4_size - 4))-$((q4_size - 1))/$q4_size"
use past
check "cdn range past the end: 416" "$CODE" 416
check "cdn range past the end: Content-Range" "$(hdr Content-Range)" "bytes */$q4_size"
use head
check "cdn HEAD: 200 + Content-Length" "$CODE $(hdr Content-Length)" "200 $q4_size"
use badsig
check "cdn bad signature: 403 SignatureDoesNotMatch" "$CODE $(grep -o SignatureDoesNotMatch "$BF")" \
    "403 SignatureDoesNotMatch"
use bogus
check "cdn unknown mode: 400" "$CODE" 400

# ---- authorization: never to the cdn -------------------------------------------------------

batch redirect -L -r 0-3 -A selftest-auth-redirect -H "Authorization: Bearer $TOK" "$gg/Qwen3-8B-Q4_K_M.gguf" \
    -- direct -r 0-3 -A selftest-auth-direct -H "Authorization: Bearer $TOK" "$cdn"
use redirect
check "token + cross-host redirect: 206 from the cdn" "$CODE" 206
use direct
check "Authorization sent straight to the cdn: 400 (as S3)" "$CODE" 400

# ---- errors ------------------------------------------------------------------------------------

lr=$H/meta-llama/Llama-3.2-1B-Instruct/resolve/main/config.json
batch missing -I "$H/Qwen/Qwen3-8B/resolve/main/no-such-file.json" \
    -- badrev -I "$H/Qwen/Qwen3-8B/resolve/no-such-branch/config.json" \
    -- norepo -I "$H/nobody/nothing/resolve/main/config.json" \
    -- private -I "$H/kvtest/private-model/resolve/main/config.json" \
    -- private_tok -I -H "Authorization: Bearer $TOK" "$H/kvtest/private-model/resolve/main/config.json" \
    -- badtok -I -H "Authorization: Bearer hf_notAValidToken" "$cf" \
    -- gated -I "$lr" \
    -- gated_tok -I -H "Authorization: Bearer $TOK" "$lr" \
    -- pending -I -H "Authorization: Bearer $TOK" "$H/google/gemma-3-4b-it/resolve/main/config.json" \
    -- approved -I -L -H "Authorization: Bearer $APPROVED" "$lr" \
    -- disabled -I "$H/test/disabled/resolve/main/config.json" \
    -- gated_info "$H/api/models/meta-llama/Llama-3.2-1B-Instruct"
use missing
check "missing file: 404 EntryNotFound" "$CODE $(hdr X-Error-Code)" "404 EntryNotFound"
check_re "missing file: X-Repo-Commit" "$(hdr X-Repo-Commit)" "^$hex40$"
check_re "missing file: X-Error-Message" "$(hdr X-Error-Message)" '.'
use badrev
check "unknown revision: 404 RevisionNotFound" "$CODE $(hdr X-Error-Code)" "404 RevisionNotFound"
use norepo
check "unknown repo: 401 RepoNotFound" "$CODE $(hdr X-Error-Code)" "401 RepoNotFound"
use private
check "private repo, no token: 401 RepoNotFound" "$CODE $(hdr X-Error-Code)" "401 RepoNotFound"
use private_tok
check "private repo, valid token: 307" "$CODE" 307
use badtok
check "invalid token: 401 + message, no X-Error-Code" "$CODE $(hdr X-Error-Message)/$(hdr X-Error-Code)" \
    "401 Invalid credentials in Authorization header/"
use gated
check "gated, no token: 401 GatedRepo" "$CODE $(hdr X-Error-Code)" "401 GatedRepo"
check_re "gated, no token: Please log in" "$(hdr X-Error-Message)" 'Please log in\.$'
use gated_tok
check "gated, token not approved: 403 GatedRepo" "$CODE $(hdr X-Error-Code)" "403 GatedRepo"
check_re "gated, token not approved: not in the authorized list" "$(hdr X-Error-Message)" 'not in the authorized list'
use pending
check_re "gated, request pending: awaiting a review" "$CODE $(hdr X-Error-Message)" '^403 .*awaiting a review'
use approved
check "gated, approved token: 200 after the same-host 307" "$CODE" 200
use disabled
check "disabled repo: 403 + message" "$CODE $(hdr X-Error-Message)" "403 Access to this resource is disabled."
use gated_info
check "gated repo: model info without a token: 200" "$CODE" 200
save gated-info

# ---- renamed repo, revisions --------------------------------------------------------------------

old=$H/kvtest/Qwen3-8B-old-name
batch renamed -I "$old/resolve/main/config.json" -- renamedL -I -L "$old/resolve/main/config.json" \
    -- renamed_api "$H/api/models/kvtest/Qwen3-8B-old-name?blobs=true" \
    -- tag -I -L "$H/Qwen/Qwen3-8B/resolve/v1.0/config.json" \
    -- tag_missing -I "$H/Qwen/Qwen3-8B/resolve/v1.0/README.md" \
    -- pr -I -L "$H/Qwen/Qwen3-8B/resolve/refs%2Fpr%2F1/config.json" \
    -- by_commit -I -L "$H/Qwen/Qwen3-8B/resolve/1111111111111111111111111111111111111111/config.json" \
    -- gguf_v1 -I "$H/kvtest/Qwen3-8B-GGUF/resolve/v1/Qwen3-8B-Q4_K_M.gguf"
use renamed
check "renamed repo: 307, relative Location to the new name" "$CODE $(hdr Location)" \
    "307 /kvtest/Qwen3-8B-new-name/resolve/main/config.json"
use renamedL
check "renamed repo: 200 at the end" "$CODE" 200
use renamed_api
check "renamed repo, API: 307 keeps the query" "$CODE $(hdr Location)" \
    "307 /api/models/kvtest/Qwen3-8B-new-name?blobs=true"
use tag
check "tag v1.0: its commit" "$CODE $(hdr X-Repo-Commit)" "200 1111111111111111111111111111111111111111"
use tag_missing
check "file absent at v1.0: EntryNotFound with that commit" "$CODE $(hdr X-Error-Code) $(hdr X-Repo-Commit)" \
    "404 EntryNotFound 1111111111111111111111111111111111111111"
use pr
check "encoded refs%2Fpr%2F1" "$CODE $(hdr X-Repo-Commit)" "200 2222222222222222222222222222222222222222"
use by_commit
check "a commit as the revision" "$CODE $(hdr X-Repo-Commit)" "200 1111111111111111111111111111111111111111"
use gguf_v1
check "GGUF at tag v1: same sha256" "$(hdr X-Linked-Etag)" "\"$q4_sha\""
[ "$(hdr X-Repo-Commit)" != "$main_commit" ]
check "GGUF at tag v1: another commit" $? 0

# ---- rate limits and injected failures (in order, on one connection) ----------------------

rl=$H/test/rate-limited/resolve/main/config.json
batch rl1 -I "$rl" -- rl2 -I "$rl" -- reset -X POST "$H/_fake/reset" -- rl3 -I "$rl" \
    -- a1 -I "$H/test/always-429/resolve/main/config.json" -- a2 -I "$H/test/always-429/resolve/main/config.json" \
    -- s1 -I "$H/test/server-error-once/resolve/main/config.json" \
    -- s2 -I "$H/test/server-error-once/resolve/main/config.json"
use rl1
check "rate-limited: 429" "$CODE" 429
check "rate-limited: Retry-After" "$(hdr Retry-After)" 1
check "rate-limited: RateLimit r=0" "$(hdr RateLimit)" '"resolvers";r=0;t=1'
check "rate-limited: RateLimit-Policy" "$(hdr RateLimit-Policy)" '"fixed window";"resolvers";q=3000;w=300'
use rl2
check "rate-limited: the retry succeeds" "$CODE" 307
use rl3
check "after /_fake/reset: 429 again" "$CODE" 429
check "always-429: twice" "${CODES[a1]} ${CODES[a2]}" "429 429"
check "server-error-once: 503 then 307" "${CODES[s1]} ${CODES[s2]}" "503 307"

# ---- other hub switches ---------------------------------------------------------------------

batch nocommit -I -L "$H/test/no-commit-header/resolve/main/config.json" \
    -- nosize_head -I "$H/test/head-no-size/resolve/main/Qwen3-8B-Q4_K_M.gguf" \
    -- nosize_get "$H/test/head-no-size/resolve/main/Qwen3-8B-Q4_K_M.gguf" \
    -- weak -I -L "$H/test/weak-etag/resolve/main/config.json"
use nocommit
check "no-commit-header: 200 without X-Repo-Commit" "$CODE $(hdr X-Repo-Commit)" "200 "
use nosize_head
check "head-no-size: HEAD 302 without Content-Length/X-Linked-Size" \
    "$CODE $(hdr Content-Length)/$(hdr X-Linked-Size)" "302 /"
use nosize_get
check "head-no-size: GET keeps X-Linked-Size" "$(hdr X-Linked-Size)" "$q4_size"
use weak
check "weak-etag: W/ prefix" "$(hdr ETag)" "W/\"$cfg_sha1\""
curl -s -o /dev/null --max-time 0.5 "$H/test/slow-hub/resolve/main/config.json"
check "slow-hub: a 0.5 s client timeout fires (28)" $? 28

# ---- model info, refs, tree, paths-info ---------------------------------------------------

api=$H/api/models
batch info "$api/Qwen/Qwen3-8B" -- info_gguf "$api/kvtest/Qwen3-8B-GGUF/revision/main?blobs=true" \
    -- info_v1 "$api/Qwen/Qwen3-8B/revision/v1.0" -- info_badrev "$api/Qwen/Qwen3-8B/revision/nope" \
    -- info_norepo "$api/nobody/nothing" -- info_private "$api/kvtest/private-model" \
    -- refs "$api/Qwen/Qwen3-8B/refs?include_prs=1" \
    -- tree_rec "$api/kvtest/Qwen3-8B-GGUF/tree/main?recursive=true" \
    -- tree_top "$api/kvtest/Qwen3-8B-GGUF/tree/main" \
    -- tree_bf16 "$api/kvtest/Qwen3-8B-GGUF/tree/main/BF16" \
    -- tree_nope "$api/kvtest/Qwen3-8B-GGUF/tree/main/nope" \
    -- cross "$api/test/cross-origin-next/tree/main?recursive=true" \
    -- paths_info -H 'Content-Type: application/json' \
       --data '{"paths": ["config.json", "Qwen3-8B-Q4_K_M.gguf", "nope"]}' \
       "$api/test/paginated/paths-info/main"
for l in info info_gguf info_v1 refs tree_rec tree_top tree_bf16 paths_info; do
    use $l
    check "$l: 200" "$CODE" 200
    save "$l"
done
use info_badrev
check "model info, unknown revision: 404 RevisionNotFound" "$CODE $(hdr X-Error-Code)" "404 RevisionNotFound"
use info_norepo
check "model info, unknown repo: 401 RepoNotFound" "$CODE $(hdr X-Error-Code)" "401 RepoNotFound"
use info_private
check "model info, private repo without token: 401" "$CODE" 401
use tree_rec
check "tree recursive: one page" "$(hdr Link)" ""
use tree_nope
check "tree of a missing folder: 404" "$CODE" 404
use cross
check_re "cross-origin-next: next link on the cdn origin" "$(hdr Link)" "^<$C/api/models/test/cross-origin-next/tree/main\?"
next=$(hdr Link | sed -n 's/^<\([^>]*\)>.*/\1/p')
req -A selftest-naive-next -H "Authorization: Bearer $TOK" "$next"
check "cross-origin-next: the cdn serves the page to a naive client" "$CODE" 200
# Pagination: follow rel="next" until there is none.
url="$api/test/paginated/tree/main?recursive=true"
pages=0
while [ -n "$url" ] && [ $pages -lt 20 ]; do
    req "$url"
    pages=$((pages + 1))
    save "page-$pages"
    link=$(hdr Link)
    url=$(printf '%s' "$link" | sed -n 's/^<\([^>]*\)>; rel="next"$/\1/p')
    if [ -n "$link" ] && [ -z "$url" ]; then bad "pagination: Link header" "$link"; break; fi
    case $url in "" | "$H"/*) ;; *) bad "pagination: next link on the hub" "$url"; url= ;; esac
done
check "pagination: 6 entries in pages of 2" "$pages" 3
echo "$pages" >"$tmp/j/pages.count"

# ---- Ollama registry --------------------------------------------------------------------------

acc='Accept: application/vnd.docker.distribution.manifest.v2+json'
v2=$H/v2/library/qwen3
batch man -H "$acc" "$v2/manifests/8b" -- latest -H "$acc" "$v2/manifests/latest" \
    -- notag -H "$acc" "$v2/manifests/70b" -- nomodel -H "$acc" "$H/v2/library/nomodel/manifests/latest" \
    -- blob "$v2/blobs/sha256:$om_sha" \
    -- blob_auth -L -r 0-3 -A selftest-auth-ollama -H "Authorization: Bearer $TOK" "$v2/blobs/sha256:$om_sha" \
    -- params -L "$v2/blobs/sha256:$params_sha" \
    -- baddigest "$v2/blobs/sha256:nothex" \
    -- noblob "$v2/blobs/sha256:$(printf '0%.0s' $(seq 64))" \
    -- ua_curl -H "$acc" "$H/v2/test/ollama-ua/manifests/latest" \
    -- ua_ollama -H "$acc" -A "ollama/0.33.0 (amd64 linux) Go/go1.24.0" "$H/v2/test/ollama-ua/manifests/latest" \
    -- hf_q8 -A llama-cpp "$H/v2/kvtest/Qwen3-8B-GGUF/manifests/Q8_0" \
    -- hf_latest "$H/v2/kvtest/Qwen3-8B-GGUF/manifests/latest" \
    -- hf_badtag "$H/v2/kvtest/Qwen3-8B-GGUF/manifests/IQ9_Z" \
    -- hf_blob "$H/v2/kvtest/Qwen3-8B-GGUF/blobs/sha256:$q4_sha"
use man
check "ollama manifest: 200" "$CODE" 200
check "ollama manifest: Content-Type" "$(hdr Content-Type)" application/vnd.docker.distribution.manifest.v2+json
check "ollama manifest: Docker-Content-Digest" "$(hdr Docker-Content-Digest)" \
    "sha256:$(sha256sum "$BF" | cut -d' ' -f1)"
save ollama-manifest
use latest
cmp -s "$BF" "$tmp/j/ollama-manifest.json"
check "ollama latest: the same manifest (a symlinked tag)" $? 0
use notag
check "ollama unknown tag: 404" "$CODE" 404
save ollama-404-tag
use nomodel
check "ollama unknown model: 404" "$CODE" 404
save ollama-404-model
use blob
check "ollama blob: 307" "$CODE" 307
check_re "ollama blob: to the cdn" "$(hdr Location)" \
    "^http://127\.0\.0\.2:$B/ollama-r2/docker/registry/v2/blobs/sha256/${om_sha:0:2}/$om_sha/data\?"
use blob_auth
check "ollama blob range through the redirect: 206 GGUF" "$CODE $(body)" "206 GGUF"
use params
cmp -s "$BF" "$om/params"
check "ollama params blob: the params file" $? 0
use baddigest
check "ollama bad digest: 400" "$CODE" 400
use noblob
check "ollama unknown blob: 404" "$CODE" 404
use ua_curl
check "ollama UA required: curl gets 412" "$CODE" 412
use ua_ollama
check "ollama UA required: ollama/ gets 200" "$CODE" 200
use hf_q8
check "HF registry manifest: 200" "$CODE" 200
save hf-reg-q8
use hf_latest
save hf-reg-latest
use hf_badtag
check "HF registry, no such quant: 400" "$CODE" 400
use hf_blob
check_re "HF registry blob: 302 to the cdn" "$CODE $(hdr Location)" "^302 http://127\.0\.0\.2:$B/xet-bridge-us/$q4_sha\?"

# ---- cdn modes, each through its test/<mode> repo ------------------------------------

modes="ignore-range truncate slow stall no-content-range wrong-total wrong-start html expired
       missing redirect-file redirect-ftp redirect-loop redirect-hop"
declare -A M  # mode -> the cdn URL the hub gives for test/<mode>'s GGUF
args=()
for m in $modes; do
    args+=(-o /dev/null -w "$m %{redirect_url}\n" "$H/test/$m/resolve/main/Qwen3-8B-Q4_K_M.gguf" --next -s)
done
while read -r m u; do M[$m]=$u; done < <(curl -s "${args[@]}" -o /dev/null "$H/")
for m in $modes; do
    check_re "test/$m: mode=$m in the cdn URL" "${M[$m]}" "&mode=$m(&|$)"
done
out=$(curl -s -o /dev/null -r 0-3 -w '%{http_code} %{size_download}' "${M[ignore-range]}")
check "ignore-range: 200 with the whole file" "$out" "200 $q4_size"
curl -s -o /dev/null -r 0-65535 "${M[truncate]}"
check "truncate: curl reports a partial file (18)" $? 18
out=$(curl -s -o /dev/null -r 0-99 -w '%{size_download}' "$cdn&mode=truncate&truncate_at=10")
check "truncate with truncate_at=10: 10 bytes" "$out" 10
out=$(curl -s -o /dev/null -r 0-299 -w '%{http_code} %{size_download}' "${M[slow]}")
check "slow: a small range completes" "$out" "206 300"
curl -s -o /dev/null -r 0-65535 --speed-limit 2000 --speed-time 1 "${M[slow]}"
check "slow: the speed limit fires (28)" $? 28
curl -s -o /dev/null -r 0-65535 --max-time 0.5 -A selftest-stall "${M[stall]}"
check "stall: the timeout fires (28)" $? 28
curl -s -o /dev/null -L -r 0-3 "${M[redirect-file]}"
check "redirect-file: curl refuses (1)" $? 1
curl -s -o /dev/null -L --proto-redir =http,https -r 0-3 "${M[redirect-ftp]}"
check "redirect-ftp: refused by --proto-redir (1)" $? 1
curl -s -o /dev/null -L --max-redirs 5 -r 0-3 "${M[redirect-loop]}"
check "redirect-loop: too many redirects (47)" $? 47

exp=$(printf '%s' "${M[expired]}" | sed -n 's/.*[?&]Expires=\([0-9]*\).*/\1/p')
[ "$exp" -lt "$(date +%s)" ]
check "expired: the hub signs a URL already expired" $? 0
batch ncr -r 0-3 "${M[no-content-range]}" -- ncr_param -r 0-3 "$cdn&mode=no-content-range" \
    -- total -r 0-3 "${M[wrong-total]}" -- start -r 0-3 "${M[wrong-start]}" -- html -r 0-3 "${M[html]}" \
    -- expired -r 0-3 "${M[expired]}" -- missing -r 0-3 "${M[missing]}" \
    -- rfile -r 0-3 "${M[redirect-file]}" -- rftp -r 0-3 "${M[redirect-ftp]}" \
    -- hop -L -r 0-3 "${M[redirect-hop]}"
use ncr
check "no-content-range: 206 without Content-Range" "$CODE $(hdr Content-Range)" "206 "
use ncr_param
check "mode= appended by a test works too" "$CODE $(hdr Content-Range)" "206 "
use total
check "wrong-total: total = size + 1" "$(hdr Content-Range)" "bytes 0-3/$((q4_size + 1))"
use start
check "wrong-start: starts one byte late" "$(hdr Content-Range)" "bytes 1-3/$q4_size"
use html
check_re "html: 200 text/html" "$CODE $(hdr Content-Type)" '^200 text/html'
check "html: an HTML page" "$(head -c 15 "$BF")" "<!DOCTYPE html>"
use expired
check "expired: 403, XML says so" "$CODE $(grep -o 'Request has expired' "$BF")" "403 Request has expired"
use missing
check "missing: 404 NoSuchKey" "$CODE $(grep -o NoSuchKey "$BF")" "404 NoSuchKey"
use rfile
check "redirect-file: 302 to file://" "$CODE $(hdr Location)" "302 file:///etc/passwd"
use rftp
check_re "redirect-ftp: 302 to ftp://" "$CODE $(hdr Location)" '^302 ftp://'
use hop
check "redirect-hop: 206 GGUF after one more redirect" "$CODE $(body)" "206 GGUF"

# ---- connection reuse -------------------------------------------------------------------------

curl -s -o /dev/null -o /dev/null -A selftest-keepalive \
    "$H/api/models/Qwen/Qwen3-8B" "$H/api/models/Qwen/Qwen3-8B/refs"
check "keep-alive: two requests in one curl run" $? 0

# ---- the split set is a valid GGUF for kvplan itself --------------------------------

if [ -x "$kvplan" ]; then
    "$kvplan" show "$G/BF16/Qwen3-8B-BF16-00001-of-00002.gguf" >/dev/null 2>&1
    check "kvplan reads the split fixture (both shards)" $? 0
fi

# ---- JSON bodies and the log, checked in one Python run --------------------------------

sleep 0.2  # the server writes a log line once an answer is finished
pyout=$("$PYTHON" -B - "$tmp" "$A" "$B" "$q4_sha" "$q4_size" "$om_sha" "$params_sha" "$commit" 2>&1 <<'PY'
import json, os, sys
tmp, A, B, q4_sha, q4_size, om_sha, params_sha, commit = sys.argv[1:]
q4_size = int(q4_size)
J = lambda n: json.load(open(os.path.join(tmp, "j", n + ".json")))

def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else ": " + str(detail)))

i = J("info")
check("info: id and sha", (i["id"], i["sha"]) == ("Qwen/Qwen3-8B", commit), (i["id"], i["sha"]))
check("info: siblings without blobs=true are names only",
      all(set(s) == {"rfilename"} for s in i["siblings"]), i["siblings"])
check("info: config digest", i.get("config", {}).get("model_type") == "qwen3", i.get("config"))
check("info at v1.0: its sha and files", J("info_v1")["sha"] == "1" * 40
      and sorted(s["rfilename"] for s in J("info_v1")["siblings"]) == [".gitattributes", "config.json"],
      J("info_v1"))
g = J("info_gguf")
sib = {s["rfilename"]: s for s in g["siblings"]}
q4 = sib.get("Qwen3-8B-Q4_K_M.gguf", {})
check("info blobs=true: lfs sha256/size", q4.get("lfs", {}).get("sha256") == q4_sha
      and q4.get("size") == q4_size and q4["lfs"]["size"] == q4_size, q4)
check("info blobs=true: blobId and pointerSize",
      len(q4.get("blobId", "")) == 40 and q4["lfs"]["pointerSize"] > 100, q4)
check("info blobs=true: regular files have no lfs",
      "lfs" not in sib.get(".gitattributes", {"lfs": 1}) and "blobId" in sib[".gitattributes"], sib)
check("info: split shards in the sub-folder are listed",
      {"BF16/Qwen3-8B-BF16-00001-of-00002.gguf", "BF16/Qwen3-8B-BF16-00002-of-00002.gguf"} <= set(sib))
check("info: gguf field", g.get("gguf", {}).get("architecture") == "qwen3"
      and g["gguf"].get("context_length") == 40960 and g["gguf"].get("total", 0) > 0, g.get("gguf"))
check("info: gated field of a gated repo", J("gated-info").get("gated") == "manual")
r = J("refs")
check("refs: main branch", any(b["name"] == "main" and b["ref"] == "refs/heads/main"
                               and b["targetCommit"] == commit for b in r["branches"]), r)
check("refs: tag v1.0", any(t["name"] == "v1.0" and t["targetCommit"] == "1" * 40 for t in r["tags"]), r)
check("refs: converts, pullRequests", r.get("converts") == []
      and [p["name"] for p in r.get("pullRequests", [])] == ["refs/pr/1"], r)
t = J("tree_rec")
paths = {e["path"]: e for e in t}
check("tree recursive: files and the folder", {"BF16", "BF16/Qwen3-8B-BF16-00001-of-00002.gguf",
      "Qwen3-8B-Q4_K_M.gguf", "README.md"} <= set(paths), sorted(paths))
e = paths.get("Qwen3-8B-Q4_K_M.gguf", {})
check("tree: lfs.oid is the sha256", e.get("lfs", {}).get("oid") == q4_sha and e.get("size") == q4_size, e)
check("tree: a directory entry", paths.get("BF16", {}).get("type") == "directory")
check("tree non-recursive: top level only", all("/" not in x["path"] for x in J("tree_top"))
      and any(x["path"] == "BF16" for x in J("tree_top")))
check("tree of a folder", sorted(x["path"] for x in J("tree_bf16")) ==
      ["BF16/Qwen3-8B-BF16-00001-of-00002.gguf", "BF16/Qwen3-8B-BF16-00002-of-00002.gguf"])
n = int(open(os.path.join(tmp, "j", "pages.count")).read())
allp = [x["path"] for k in range(1, n + 1) for x in J("page-%d" % k)]
check("pagination: every entry once", sorted(allp) == sorted(set(allp)) and len(allp) == 6
      and "extra/notes.md" in allp, allp)
pi = J("paths_info")
check("paths-info: the existing paths", sorted(x["path"] for x in pi) ==
      ["Qwen3-8B-Q4_K_M.gguf", "config.json"], pi)
m = J("ollama-manifest")
layers = {l["mediaType"]: l for l in m["layers"]}
check("ollama manifest: schema and config", m["schemaVersion"] == 2
      and m["mediaType"] == "application/vnd.docker.distribution.manifest.v2+json"
      and m["config"]["mediaType"] == "application/vnd.docker.container.image.v1+json", m)
check("ollama manifest: model layer digest", layers.get("application/vnd.ollama.image.model", {})
      .get("digest") == "sha256:" + om_sha, layers)
check("ollama manifest: params, template, license layers",
      layers.get("application/vnd.ollama.image.params", {}).get("digest") == "sha256:" + params_sha
      and "application/vnd.ollama.image.template" in layers
      and "application/vnd.ollama.image.license" in layers, layers)
check("ollama 404s: registry error codes",
      J("ollama-404-tag")["errors"][0]["code"] == "MANIFEST_UNKNOWN"
      and J("ollama-404-model")["errors"][0]["code"] == "NAME_UNKNOWN")
h = J("hf-reg-q8")
check("HF registry: ggufFile for llama-cpp", h.get("ggufFile", {}).get("rfilename") == "Qwen3-8B-Q8_0.gguf", h)
h = J("hf-reg-latest")
check("HF registry: latest is Q4_K_M, no ggufFile for other agents",
      h["layers"][0]["digest"] == "sha256:" + q4_sha and "ggufFile" not in h, h)

# The log.
lines = [json.loads(l) for l in open(os.path.join(tmp, "log.jsonl"))]
keys = {"t", "listener", "conn", "method", "path", "query", "range", "auth", "user_agent",
        "status", "bytes", "complete"}
check("log: every line has the documented keys", all(keys <= set(l) for l in lines))
check("log: both listeners", {l["listener"] for l in lines} == {"hub", "cdn"})
by = lambda ua: [l for l in lines if l["user_agent"] == ua]
a = by("selftest-auth-redirect")
check("log: token sent to the hub", [(l["listener"], l["auth"]) for l in a][:1] == [("hub", True)], a)
check("log: no token on the cdn after the redirect",
      [(l["listener"], l["auth"], l["status"], l["bytes"]) for l in a][1:] == [("cdn", False, 206, 4)], a)
a = by("selftest-auth-ollama")
check("log: ollama blob redirect drops the token too",
      [(l["listener"], l["auth"]) for l in a] == [("hub", True), ("cdn", False)], a)
sent = ("selftest-auth-direct", "selftest-naive-next")  # sent to the cdn on purpose
leaks = [l for l in lines if l["listener"] == "cdn" and l["auth"] and l["user_agent"] not in sent]
check("log: Authorization reached the cdn only when sent there directly", not leaks
      and [(l["listener"], l["auth"]) for ua in sent for l in by(ua)] == [("cdn", True)] * 2, leaks)
a = by("selftest-keepalive")
check("log: keep-alive reuses the connection", len(a) == 2 and a[0]["conn"] == a[1]["conn"], a)
a = by("selftest-stall")
check("log: a stalled answer is marked incomplete", [l["complete"] for l in a] == [False], a)
r = [l for l in lines if l["listener"] == "cdn" and l["range"] == "bytes=0-3" and l["status"] == 206]
check("log: range header and bytes sent", r and all(l["bytes"] == 4 for l in r if "mode=" not in l["query"]), r)
t = [l for l in lines if "truncate_at=10" in l["query"]]
check("log: truncated answer: 10 bytes, incomplete", [(l["bytes"], l["complete"]) for l in t] == [(10, False)], t)
PY
)
while IFS= read -r line; do
    case $line in
    "ok   "*) ok "${line#ok   }" ;;
    "FAIL "*) fail=$((fail + 1)); echo "$line" ;;
    *) [ -z "$line" ] || { fail=$((fail + 1)); echo "FAIL python: $line"; } ;;
    esac
done <<<"$pyout"
[ -n "$pyout" ] || bad "python checks" "no output"

# ---- clean shutdown on SIGTERM ---------------------------------------------------------

kill -TERM "$pid"
for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
if kill -0 "$pid" 2>/dev/null; then
    bad "SIGTERM: the server exits within 3 s"
else
    wait "$pid"
    check "SIGTERM: exit status 0" $? 0
    pid=
fi
curl -s -o /dev/null --max-time 2 "$H/"
check "SIGTERM: the hub port is closed" $? 7
if [ -s "$tmp/server.err" ]; then
    bad "server stderr is empty" "$(head -c 2000 "$tmp/server.err")"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
