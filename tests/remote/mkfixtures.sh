#!/usr/bin/env bash
# mkfixtures.sh: builds the fixture tree that tests/remote/fake_remote.py serves.
#
# Everything comes from this repository: configs from data/models/ (the
# catalog), GGUFs from kvplan's own `kvplan twin --kv-only` (sparse files: a
# few KB on disk whatever their apparent size), re-labelled as real quant
# files (general.file_type) and split into shards with the split.* keys that
# gguf-split writes.  Nothing is downloaded.
#
# usage: bash tests/remote/mkfixtures.sh OUTDIR [KVPLAN]
#   OUTDIR  must not exist or be empty
#   KVPLAN  the kvplan binary (default: build/kvplan; run `make` first)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: bash tests/remote/mkfixtures.sh OUTDIR [KVPLAN]" >&2
    exit 2
fi
out=$1
kvplan=${2:-$root/build/kvplan}
if [ ! -x "$kvplan" ]; then
    echo "mkfixtures.sh: $kvplan is not an executable; run make first" >&2
    exit 2
fi
if [ -e "$out" ] && [ -n "$(ls -A "$out")" ]; then
    echo "mkfixtures.sh: $out exists and is not empty" >&2
    exit 2
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
models=$root/data/models
# Debian's python3 unless PYTHON says otherwise (a pyenv shim costs a second a call).
if [ -z "${PYTHON:-}" ]; then
    if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=python3; fi
fi
work=$out/.work
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

# ---- small helpers -------------------------------------------------------------

readme() {  # readme DIR TITLE
    printf -- '---\nlicense: apache-2.0\n---\n\n# %s\n\nA kvplan test fixture (tests/remote/mkfixtures.sh).\n' \
        "$2" >"$1/README.md"
}

gitattributes() {  # the lines every new Hub repo starts with (abridged)
    cat >"$1/.gitattributes" <<'EOF'
*.bin filter=lfs diff=lfs merge=lfs -text
*.gguf filter=lfs diff=lfs merge=lfs -text
*.model filter=lfs diff=lfs merge=lfs -text
*.safetensors filter=lfs diff=lfs merge=lfs -text
EOF
}

config_repo() {  # config_repo ORG/NAME CATALOG_FILE: a transformers-style repo
    local d=$out/hf/$1
    mkdir -p "$d"
    cp "$models/$2" "$d/config.json"
    readme "$d" "$1"
    gitattributes "$d"
}

link() {  # link SRC DST: hard link (hashed once by the server), else a sparse copy
    mkdir -p "$(dirname "$2")"
    ln "$1" "$2" 2>/dev/null || cp --sparse=always "$1" "$2"
}

# ---- transformers-style repos from the catalog --------------------------------

config_repo Qwen/Qwen3-8B Qwen__Qwen3-8B.json
cat >"$out/hf/Qwen/Qwen3-8B/generation_config.json" <<'EOF'
{
  "bos_token_id": 151643,
  "do_sample": true,
  "eos_token_id": [151645, 151643],
  "pad_token_id": 151643,
  "temperature": 0.6,
  "top_k": 20,
  "top_p": 0.95,
  "transformers_version": "4.51.0"
}
EOF
# Revisions: a tag whose commit lacks README.md and generation_config.json,
# and an (unlisted) pull-request ref.
cat >"$out/hf/Qwen/Qwen3-8B/.meta.json" <<'EOF'
{
  "revisions": {
    "v1.0": {"type": "tag", "commit": "1111111111111111111111111111111111111111",
             "files": [".gitattributes", "config.json"]},
    "refs/pr/1": {"commit": "2222222222222222222222222222222222222222"}
  }
}
EOF

config_repo openai/gpt-oss-20b openai__gpt-oss-20b.json

# Gated (manual approval), as on the real Hub.
config_repo meta-llama/Llama-3.2-1B-Instruct meta-llama__Llama-3.2-1B-Instruct.json
echo '{"gated": "manual"}' >"$out/hf/meta-llama/Llama-3.2-1B-Instruct/.meta.json"
# Gated with the access request still pending for the --token user.
config_repo google/gemma-3-4b-it google__gemma-3-4b-it.json
echo '{"gated": "manual", "gated_pending": true}' >"$out/hf/google/gemma-3-4b-it/.meta.json"

# Private: 401 RepoNotFound without a valid token.
config_repo kvtest/private-model Qwen__Qwen3-8B.json
echo '{"private": true}' >"$out/hf/kvtest/private-model/.meta.json"

# Renamed: kvtest/Qwen3-8B-old-name answers 307 to kvtest/Qwen3-8B-new-name.
config_repo kvtest/Qwen3-8B-new-name Qwen__Qwen3-8B.json
echo '{"renamed_from": ["kvtest/Qwen3-8B-old-name"]}' >"$out/hf/kvtest/Qwen3-8B-new-name/.meta.json"

# ---- GGUFs: kvplan twins, relabelled and split -------------------------------

"$kvplan" twin qwen3-8b -o "$work/qwen3-8b.gguf" --kv-only --force >/dev/null
"$kvplan" twin llama-3.2-1b-instruct -o "$work/llama-3.2-1b.gguf" --kv-only --force >/dev/null

g=$out/hf/kvtest/Qwen3-8B-GGUF
l=$out/hf/kvtest/Llama-3.2-1B-Instruct-GGUF
o=$out/ollama/library/qwen3/8b
mkdir -p "$g/BF16" "$l/Q4_K_M" "$o"
readme "$g" kvtest/Qwen3-8B-GGUF
gitattributes "$g"
# A tag at another commit with the same files: same sha256s, other commit.
echo '{"revisions": {"v1": {"type": "tag"}}}' >"$g/.meta.json"
readme "$l" kvtest/Llama-3.2-1B-Instruct-GGUF
gitattributes "$l"

# One Python run does the GGUF work and the test/<switch> repos (process
# start-up is what costs time here).
PYTHONDONTWRITEBYTECODE=1 "$PYTHON" - "$here" "$work" "$out" "$g" "$l" "$o" <<'PY'
import os, shutil, struct, subprocess, sys
here, work, out, g, l, o = sys.argv[1:]
sys.path.insert(0, here)
from fake_remote import SPECIAL_REPOS, read_gguf_header

# ---- GGUF rewriting: replaces or appends metadata, keeps the other records
# byte for byte, and writes shards the way gguf-split does: every KV pair in
# shard 1, split.no/split.count/split.tensors.count in all of them.

U16, U32, I32, STR = 2, 4, 5, 8

def s(b):
    b = b.encode()
    return struct.pack("<Q", len(b)) + b

def kv(key, typ, value):
    fmt = {U16: "<H", U32: "<I", I32: "<i"}
    body = s(value) if typ == STR else struct.pack(fmt[typ], value)
    return s(key) + struct.pack("<I", typ) + body

def write(src, dst, set_kv, part=(0, 1), split=False):
    """Shard part=(k, n) of src into dst; set_kv: [(key, type, value)]."""
    h = read_gguf_header(src)
    k, n = part
    tensors = h["tensors"]
    per = -(-len(tensors) // n)
    mine = tensors[k * per:(k + 1) * per]
    data_size = h["size"] - h["data_start"]
    offs = [t["offset"] for t in tensors] + [data_size]
    slot = {t["name"]: offs[i + 1] - offs[i] for i, t in enumerate(tensors)}
    if split:
        set_kv = (set_kv if k == 0 else []) + [
            ("split.no", U16, k), ("split.count", U16, n), ("split.tensors.count", I32, len(tensors))]
    fd = os.open(src, os.O_RDONLY)
    raw = lambda span: os.pread(fd, span[1] - span[0], span[0])
    kvs, done = [], set()
    for rec in h["kv"]:
        key = rec["key"]
        if k > 0 and key != "general.alignment":
            continue  # later shards keep only the split keys (and the alignment)
        new = [x for x in set_kv if x[0] == key]
        kvs.append(kv(*new[0]) if new else raw(rec["span"]))
        done.add(key)
    kvs += [kv(*x) for x in set_kv if x[0] not in done]
    infos, off = [], 0
    for t in mine:
        infos.append(raw(t["span"])[:-8] + struct.pack("<Q", off))
        off += slot[t["name"]]
    os.close(fd)
    head = (b"GGUF" + struct.pack("<IQQ", h["version"], len(mine), len(kvs))
            + b"".join(kvs) + b"".join(infos))
    a = h["alignment"]
    head += b"\0" * ((a - len(head) % a) % a if mine else 0)
    with open(dst, "wb") as fh:
        fh.write(head)
        fh.truncate(len(head) + off)  # tensor data: a sparse hole

q = os.path.join(work, "qwen3-8b.gguf")
name = ("general.name", STR, "Qwen3 8B")
write(q, g + "/Qwen3-8B-Q4_K_M.gguf", [name, ("general.file_type", U32, 15)])
write(q, g + "/Qwen3-8B-Q8_0.gguf", [name, ("general.file_type", U32, 7)])
for k in range(2):
    write(q, g + "/BF16/Qwen3-8B-BF16-%05d-of-00002.gguf" % (k + 1),
          [name, ("general.file_type", U32, 32)], (k, 2), split=True)
ll = os.path.join(work, "llama-3.2-1b.gguf")
for k in range(2):
    write(ll, l + "/Q4_K_M/Llama-3.2-1B-Instruct-Q4_K_M-%05d-of-00002.gguf" % (k + 1),
          [("general.name", STR, "Llama 3.2 1B Instruct"), ("general.file_type", U32, 15)],
          (k, 2), split=True)
# Ollama's qwen3:8b blob: another Q4_K_M build, so another digest.
write(q, o + "/model.gguf", [("general.name", STR, "Qwen3 8B (Ollama)"),
                             ("general.file_type", U32, 15)])

# ---- repos whose name switches a server behaviour on (test/<switch>); the
# list comes from the server itself, so the two cannot drift apart.  Each has
# the Qwen3-8B config, a Q4_K_M GGUF (hard link) and a sub-folder.
config = os.path.join(here, "..", "..", "data", "models", "Qwen__Qwen3-8B.json")
for rid in sorted(SPECIAL_REPOS):
    d = os.path.join(out, "hf", rid)
    os.makedirs(os.path.join(d, "extra"))
    shutil.copyfile(config, os.path.join(d, "config.json"))
    shutil.copyfile(os.path.join(g, ".gitattributes"), os.path.join(d, ".gitattributes"))
    with open(os.path.join(d, "README.md"), "w") as fh:
        fh.write("---\nlicense: apache-2.0\n---\n\n# %s\n\nA kvplan test fixture whose name "
                 "switches a fake_remote.py behaviour on: %s.\n" % (rid, SPECIAL_REPOS[rid]))
    with open(os.path.join(d, "extra", "notes.md"), "w") as fh:
        fh.write("Notes: a sub-folder, so that tree listings have a directory.\n")
    src, dst = os.path.join(g, "Qwen3-8B-Q4_K_M.gguf"), os.path.join(d, "Qwen3-8B-Q4_K_M.gguf")
    try:
        os.link(src, dst)
    except OSError:
        subprocess.run(["cp", "--sparse=always", src, dst], check=True)
PY

# The name docs/runtimes/ollama.md uses (hf.co/unsloth/Qwen3-8B-GGUF:Q4_K_M, run
# by tests/docs/examples.sh): kvtest/Qwen3-8B-GGUF's two single-file quants.
u=$out/hf/unsloth/Qwen3-8B-GGUF
mkdir -p "$u"
readme "$u" unsloth/Qwen3-8B-GGUF
gitattributes "$u"
link "$g/Qwen3-8B-Q4_K_M.gguf" "$u/Qwen3-8B-Q4_K_M.gguf"
link "$g/Qwen3-8B-Q8_0.gguf" "$u/Qwen3-8B-Q8_0.gguf"

# A CDN that cuts the transfer inside the GGUF header (test/truncate cuts at
# half the file, long after the header).
t=$out/hf/kvtest/Qwen3-8B-GGUF-truncated
mkdir -p "$t"
link "$g/Qwen3-8B-Q4_K_M.gguf" "$t/Qwen3-8B-Q4_K_M.gguf"
echo '{"cdn_mode": "truncate", "cdn_params": {"truncate_at": 5000}}' >"$t/.meta.json"

# A GGUF whose header would pass kvplan's 64 MiB cap (a string of 80 MiB):
# refused from the first bytes, nothing more read.
mkdir -p "$out/hf/kvtest/huge-header-GGUF"
"$PYTHON" - "$out/hf/kvtest/huge-header-GGUF/Huge-Q4_K_M.gguf" <<'PY'
import struct, sys
b = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 12) + b"general.name"
b += struct.pack("<IQ", 8, 80 << 20) + b"x" * 100
open(sys.argv[1], "wb").write(b.ljust(4096, b"\0"))
PY

# ---- Ollama registry -------------------------------------------------------------

cat >"$o/params" <<'EOF'
{"num_ctx":16384,"repeat_penalty":1,"stop":["<|im_start|>","<|im_end|>"],"temperature":0.6,"top_k":20,"top_p":0.95}
EOF
cat >"$o/template" <<'EOF'
{{- range .Messages }}<|im_start|>{{ .Role }}
{{ .Content }}<|im_end|>
{{ end }}<|im_start|>assistant
EOF
printf 'Apache License 2.0 (fixture text)\n' >"$o/license"
echo '{"model_type": "8.2B"}' >"$o/.meta.json"
ln -s 8b "$out/ollama/library/qwen3/latest"

# A model that answers 412 unless the User-Agent starts with "ollama/".
u=$out/ollama/test/ollama-ua/latest
mkdir -p "$u"
link "$o/model.gguf" "$u/model.gguf"
cp "$o/params" "$u/params"
echo '{"require_user_agent": "ollama/", "model_type": "8.2B"}' >"$u/.meta.json"

echo "fixtures in $out"
