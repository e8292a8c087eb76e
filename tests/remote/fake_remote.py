#!/usr/bin/env python3
"""fake_remote.py: an offline stand-in for the Hugging Face Hub, its CDN and the
Ollama registry, for kvplan's remote-model tests.

CI has no internet, so kvplan's remote intake (config.json from the Hub, GGUF
headers over HTTP range requests, Ollama manifests) is tested against this
server.  It reproduces the protocol facts of docs in
/work/shared/reference/remote-models.md (sections 1-4, design in section 6):

  hub listener, 127.0.0.1:A   /{org}/{name}/resolve/..., /api/resolve-cache/...,
                              /api/models/..., /v2/... (Ollama and HF registries)
  cdn listener, 127.0.0.2:B   signed blob URLs the hub redirects to
                              (/xet-bridge-us/..., /ollama-r2/...)

Every behaviour a test may want (rate limits, gated repos, a CDN that ignores
Range, truncates, stalls, redirects to file://, ...) is switched on by a repo
name (test/<switch>), a key in a fixture's .meta.json, or a `mode=` query
parameter on a CDN URL; tests/remote/README.md lists them all.  Each request
is logged as one JSON line so that tests can assert on what the client sent.

Python 3 standard library only.  Binds nothing but 127.0.0.1 and 127.0.0.2.
Large (sparse) files are hashed and served in chunks with os.pread; request
paths are looked up in an index built at start-up and never joined onto the
file system.
"""

import argparse
import concurrent.futures
import errno
import gzip
import hashlib
import hmac
import http.server
import itertools
import json
import os
import re
import select
import signal
import socket
import struct
import sys
import threading
import time
import urllib.parse

HUB_HOST = "127.0.0.1"
CDN_HOST = "127.0.0.2"

CHUNK = 1 << 20                 # bytes per pread when hashing or sending
LFS_MIN_SIZE = 10 * 1024 * 1024  # regular files at least this big are LFS
LFS_EXTENSIONS = (".gguf", ".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".onnx",
                  ".h5", ".msgpack", ".model", ".npy", ".npz", ".pkl", ".tflite",
                  ".ot", ".zip", ".tar", ".gz", ".zst", ".parquet", ".arrow")
GZIP_EXTENSIONS = (".json", ".md", ".txt", ".jinja", ".py", ".gitattributes")
EPOCH = "2025-01-01T00:00:00.000Z"  # fixed timestamps keep answers reproducible

DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
DOCKER_CONFIG = "application/vnd.docker.container.image.v1+json"
OLLAMA_MEDIA = {
    "model": "application/vnd.ollama.image.model",
    "projector": "application/vnd.ollama.image.projector",
    "adapter": "application/vnd.ollama.image.adapter",
    "template": "application/vnd.ollama.image.template",
    "system": "application/vnd.ollama.image.system",
    "license": "application/vnd.ollama.image.license",
    "params": "application/vnd.ollama.image.params",
    "messages": "application/vnd.ollama.image.messages",
}

# llama_ftype numbers (general.file_type) and their names.
FTYPE_NAMES = {0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0",
               9: "Q5_1", 10: "Q2_K", 11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L",
               14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K",
               32: "BF16"}

# ---- behaviour switches ------------------------------------------------------

# CDN modes: the hub puts `mode=<name>` into the signed URL of a repo whose
# switches say so; a test may also append `&mode=<name>` to a CDN URL itself.
CDN_MODES = (
    "normal",            # Range honoured: 206 + Content-Range, clamping, 416
    "ignore-range",      # 200 with the whole body whatever the Range
    "truncate",          # announces Content-Length, sends truncate_at bytes, closes
    "slow",              # `chunk` bytes every `delay` seconds
    "stall",             # headers and `chunk` bytes, then silence (stall_max s)
    "no-content-range",  # 206 without a Content-Range header
    "wrong-total",       # Content-Range total = real size + 1
    "wrong-start",       # answers the range one byte later than asked
    "html",              # 200 text/html: a captive portal
    "expired",           # 403 XML: signature expired (the hub also dates it past)
    "missing",           # 404 XML: NoSuchKey
    "redirect-file",     # 302 to file:///etc/passwd
    "redirect-ftp",      # 302 to ftp://127.0.0.2:1/...
    "redirect-loop",     # 302 to the very same URL, forever
    "redirect-hop",      # 302 once more to the same blob in normal mode
)

# Keys allowed in DIR/hf/<org>/<name>/.meta.json, with their defaults.
HF_META_DEFAULTS = {
    "gated": False,            # False | "auto" | "manual"
    "gated_pending": False,    # valid but unapproved token: "awaiting a review"
    "private": False,          # 401 RepoNotFound unless a valid token
    "disabled": False,         # 403 "Access to this resource is disabled."
    "renamed_from": [],        # old ids answered by 307 to this repo
    "commit": None,            # commit of main (default: derived from the id)
    "revisions": {},           # name -> {"commit", "type": branch|tag|pr, "files"}
    "lfs": [],                 # paths served as LFS whatever their size/extension
    "cdn_mode": "normal",      # mode put into this repo's CDN URLs
    "cdn_params": {},          # extra CDN query parameters (truncate_at, chunk...)
    "fail_first": 0,           # the repo's first N hub requests fail (-1: all)
    "fail_status": 429,        # ...with this status (429 adds the rate-limit headers)
    "tree_page_size": 1000,    # entries per page of the tree API
    "tree_next_origin": "hub",  # "cdn": rel="next" links point at the cdn listener
    "strip_headers": [],       # header names removed from every hub answer
    "strip_headers_on_head": [],  # ...from HEAD answers only (edge proxies)
    "weak_etag": False,        # ETag: W/"..." as the Hub once sent
    "hub_delay": 0.0,          # seconds before the hub answers
    "last_modified": EPOCH,
}

# Repo names that switch a behaviour on by themselves (defaults under .meta.json).
SPECIAL_REPOS = {f"test/{m}": {"cdn_mode": m} for m in CDN_MODES if m != "normal"}
SPECIAL_REPOS.update({
    "test/rate-limited": {"fail_first": 1, "fail_status": 429},
    "test/always-429": {"fail_first": -1, "fail_status": 429},
    "test/server-error-once": {"fail_first": 1, "fail_status": 503},
    "test/paginated": {"tree_page_size": 2},
    "test/cross-origin-next": {"tree_page_size": 2, "tree_next_origin": "cdn"},
    "test/no-commit-header": {"strip_headers": ["X-Repo-Commit"]},
    "test/head-no-size": {"strip_headers_on_head": ["Content-Length", "X-Linked-Size"]},
    "test/weak-etag": {"weak_etag": True},
    "test/slow-hub": {"hub_delay": 2.0},
    "test/disabled": {"disabled": True},
    "test/gated": {"gated": "manual"},
    "test/gated-pending": {"gated": "manual", "gated_pending": True},
    "test/private": {"private": True},
})

# Keys allowed in DIR/ollama/<ns>/<model>/<tag>/.meta.json.
OLLAMA_META_DEFAULTS = {
    "require_user_agent": None,  # e.g. "ollama/": other user agents get 412
    "model_type": None,          # config blob "model_type" (default: from params)
    "file_type": None,           # config blob "file_type" (default: general.file_type)
    "config": {},                # extra config blob fields
    "cdn_mode": "normal",
    "cdn_params": {},
}


class FixtureError(Exception):
    pass


# ---- GGUF header reader --------------------------------------------------------

class GGUFError(Exception):
    pass


_SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
           10: "<Q", 11: "<q", 12: "<d"}
GGUF_STRING, GGUF_ARRAY = 8, 9


class _WindowReader:
    """Sequential reads through a 1 MiB pread window; never past `cap`."""

    def __init__(self, fd, size, cap):
        self.fd, self.size, self.cap = fd, size, min(size, cap)
        self.pos, self.win, self.win_off = 0, b"", 0

    def read(self, n):
        end = self.pos + n
        if end > self.cap:
            raise GGUFError("header runs past %d bytes" % self.cap)
        if not (self.win_off <= self.pos and end <= self.win_off + len(self.win)):
            self.win = os.pread(self.fd, max(n, CHUNK), self.pos)
            self.win_off = self.pos
            if len(self.win) < n:
                raise GGUFError("truncated")
        s = self.pos - self.win_off
        self.pos = end
        return self.win[s:s + n]

    def skip(self, n):
        if self.pos + n > self.cap:
            raise GGUFError("header runs past %d bytes" % self.cap)
        self.pos += n

    def unpack(self, fmt):
        return struct.unpack(fmt, self.read(struct.calcsize(fmt)))[0]

    def string(self):
        n = self.unpack("<Q")
        return self.read(n).decode("utf-8", "replace")


def _gguf_value(r, typ, depth=0):
    if typ in _SCALAR:
        return r.unpack(_SCALAR[typ])
    if typ == GGUF_STRING:
        return r.string()
    if typ == GGUF_ARRAY and depth == 0:
        et, count = r.unpack("<I"), r.unpack("<Q")
        if et in _SCALAR and count > 64:  # skip big numeric arrays unread
            r.skip(count * struct.calcsize(_SCALAR[et]))
            return None
        items = [_gguf_value(r, et, 1) for _ in range(count)]
        return items if count <= 64 else None
    raise GGUFError("bad value type %d" % typ)


def read_gguf_header(path, cap=64 << 20):
    """Parse a GGUF header (v2/v3) without reading tensor data.

    Returns {"version", "kv": [{"key", "type", "value", "span"}], "tensors":
    [{"name", "dims", "type", "offset", "span"}], "alignment", "header_end",
    "data_start", "size"}; spans are (start, end) byte offsets of each record,
    so a caller can copy records verbatim.  Long arrays have value None."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        r = _WindowReader(fd, size, cap)
        if r.read(4) != b"GGUF":
            raise GGUFError("%s: not a GGUF file" % path)
        version = r.unpack("<I")
        if version not in (2, 3):
            raise GGUFError("%s: GGUF version %d not supported" % (path, version))
        n_tensors, n_kv = r.unpack("<Q"), r.unpack("<Q")
        kvs, tensors = [], []
        for _ in range(n_kv):
            start = r.pos
            key = r.string()
            typ = r.unpack("<I")
            value = _gguf_value(r, typ)
            kvs.append({"key": key, "type": typ, "value": value, "span": (start, r.pos)})
        for _ in range(n_tensors):
            start = r.pos
            name = r.string()
            nd = r.unpack("<I")
            dims = [r.unpack("<Q") for _ in range(nd)]
            ttype, off = r.unpack("<I"), r.unpack("<Q")
            tensors.append({"name": name, "dims": dims, "type": ttype, "offset": off,
                            "span": (start, r.pos)})
        align = 32
        for kv in kvs:
            if kv["key"] == "general.alignment" and isinstance(kv["value"], int) and kv["value"] > 0:
                align = kv["value"]
        end = r.pos
        data_start = end + (align - end % align) % align if n_tensors else end
        return {"version": version, "kv": kvs, "tensors": tensors, "alignment": align,
                "header_end": end, "data_start": data_start, "size": size}
    finally:
        os.close(fd)


def gguf_summary(path):
    """What the Hub's model info calls `gguf`, plus file_type; {} if unreadable."""
    try:
        h = read_gguf_header(path)
    except (GGUFError, OSError, struct.error):
        return {}
    kv = {k["key"]: k["value"] for k in h["kv"]}
    arch = kv.get("general.architecture")
    total = 0
    for t in h["tensors"]:
        n = 1
        for d in t["dims"]:
            n *= d
        total += n
    out = {"total": total}
    if isinstance(arch, str):
        out["architecture"] = arch
        if isinstance(kv.get(arch + ".context_length"), int):
            out["context_length"] = kv[arch + ".context_length"]
    if isinstance(kv.get("tokenizer.chat_template"), str):
        out["chat_template"] = kv["tokenizer.chat_template"]
    if isinstance(kv.get("general.file_type"), int):
        out["file_type"] = kv["general.file_type"]
    return out


# ---- hashing -------------------------------------------------------------------

def git_blob_sha1(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


_ZEROS = bytes(CHUNK * 4)


def _data_extents(fd, size):
    """(offset, length, is_data) runs covering the file; holes of a sparse
    file are reported so that they are hashed from a zero buffer, not read."""
    off = 0
    while off < size:
        try:
            data = os.lseek(fd, off, os.SEEK_DATA)
        except OSError as e:
            # ENXIO: only a hole is left; anything else: no SEEK_DATA support
            yield off, size - off, e.errno != errno.ENXIO
            return
        if data > off:
            yield off, data - off, False
        hole = min(os.lseek(fd, data, os.SEEK_HOLE), size)
        yield data, hole - data, True
        off = hole


def _hash_file(path, want_git):
    """(sha256, git-sha1 or None) of a file, read in chunks with os.pread."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        s256 = hashlib.sha256()
        s1 = hashlib.sha1(b"blob %d\0" % size) if want_git else None
        done = 0
        for off, length, is_data in _data_extents(fd, size):
            end = off + length
            while off < end:
                n = min(len(_ZEROS), end - off)
                b = os.pread(fd, n, off) if is_data else memoryview(_ZEROS)[:n]
                if not b:
                    raise FixtureError("%s: shrank while hashing" % path)
                s256.update(b)
                if s1:
                    s1.update(b)
                off += len(b)
                done += len(b)
        if done != size:
            raise FixtureError("%s: changed while hashing" % path)
        return s256.hexdigest(), s1.hexdigest() if s1 else None
    finally:
        os.close(fd)


def hash_files(paths, git_paths, workers):
    """{path: (sha256, git-sha1 or None)}; the git blob sha1 only for
    git_paths.  Each distinct inode is hashed once (fixtures hard-link GGUFs)."""
    def key(p):
        st = os.stat(p)
        return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    jobs = {}
    for p in paths:
        k = key(p)
        path, git = jobs.get(k, (p, False))
        jobs[k] = (path, git or p in git_paths)
    keys = list(jobs)
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as ex:
        results = dict(zip(keys, ex.map(lambda k: _hash_file(*jobs[k]), keys)))
    return {p: results[key(p)] for p in paths}


# ---- fixtures ------------------------------------------------------------------

class Blob:
    """Content addressed by sha256: a file (read with pread) or bytes."""

    def __init__(self, sha256, size, path=None, data=None):
        self.sha256, self.size, self.path, self.data = sha256, size, path, data

    def chunks(self, start, length):
        if self.data is not None:
            yield self.data[start:start + length]
            return
        fd = os.open(self.path, os.O_RDONLY)
        try:
            end = start + length
            while start < end:
                b = os.pread(fd, min(CHUNK, end - start), start)
                if not b:
                    raise OSError("%s: short read" % self.path)
                yield b
                start += len(b)
        finally:
            os.close(fd)

    def read_all(self):
        return b"".join(self.chunks(0, self.size))


class RepoFile:
    def __init__(self, path, blob, git_sha1, lfs):
        self.path, self.blob, self.lfs = path, blob, lfs
        self.size = blob.size
        if lfs:  # the git blob of an LFS file is its pointer
            self.pointer = ("version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n"
                            % (blob.sha256, blob.size)).encode()
            self.blob_id = git_blob_sha1(self.pointer)
        else:
            self.pointer = None
            self.blob_id = git_sha1


def derived_commit(repo_id, rev):
    return hashlib.sha1(("fake_remote commit %s %s" % (repo_id, rev)).encode()).hexdigest()


class Revision:
    def __init__(self, name, kind, commit, files):
        self.name, self.kind, self.commit, self.files = name, kind, commit, files


class Repo:
    def __init__(self, repo_id, root, meta):
        self.id, self.root, self.meta = repo_id, root, meta
        self.files = {}      # path -> RepoFile
        self.revisions = {}  # name -> Revision
        self.by_commit = {}  # commit -> Revision

    def setup_revisions(self):
        m = self.meta
        revs = dict(m["revisions"])
        main = dict(revs.get("main", {}))
        if m["commit"]:
            main.setdefault("commit", m["commit"])
        revs["main"] = main
        for name, spec in revs.items():
            if not isinstance(spec, dict):
                raise FixtureError("%s: revision %s: expected an object" % (self.id, name))
            commit = spec.get("commit") or derived_commit(self.id, name)
            if not re.fullmatch(r"[0-9a-f]{40}", commit):
                raise FixtureError("%s: revision %s: commit must be 40 hex" % (self.id, name))
            kind = spec.get("type", "pr" if name.startswith("refs/pr/") else "branch")
            files = spec.get("files")
            if files is not None:
                missing = [f for f in files if f not in self.files]
                if missing:
                    raise FixtureError("%s: revision %s lists missing files %s" % (self.id, name, missing))
                files = frozenset(files)
            rv = Revision(name, kind, commit, files)
            self.revisions[name] = rv
            self.by_commit.setdefault(commit, rv)

    def revision(self, rev):
        return self.revisions.get(rev) or self.by_commit.get(rev)

    def files_at(self, rv):
        return [f for p, f in sorted(self.files.items()) if rv.files is None or p in rv.files]

    def file_at(self, rv, path):
        f = self.files.get(path)
        return f if f and (rv.files is None or path in rv.files) else None


class OllamaModel:
    def __init__(self, ns, model, tag, meta):
        self.ns, self.model, self.tag, self.meta = ns, model, tag, meta
        self.manifest = b""
        self.digests = set()  # sha256 hex of the config and every layer


def _load_meta(path, allowed, what):
    """The keys a .meta.json sets (unknown keys are an error: no silent typos)."""
    given = {}
    if os.path.isfile(path):
        try:
            with open(path, encoding="utf-8") as fh:
                given = json.load(fh)
        except (OSError, ValueError) as e:
            raise FixtureError("%s: %s" % (path, e))
        if not isinstance(given, dict):
            raise FixtureError("%s: expected a JSON object" % path)
        unknown = sorted(set(given) - set(allowed))
        if unknown:
            raise FixtureError("%s: unknown key(s) %s for %s" % (path, ", ".join(unknown), what))
    return given


def _subdirs(d):
    try:
        return sorted(n for n in os.listdir(d) if os.path.isdir(os.path.join(d, n)))
    except FileNotFoundError:
        return []


def _is_lfs(path, size, forced):
    return path in forced or size >= LFS_MIN_SIZE or path.lower().endswith(LFS_EXTENSIONS)


class Fixtures:
    """Everything served, indexed at start-up: HF repos, aliases, Ollama models,
    and every blob the CDN may serve by sha256."""

    def __init__(self, root, workers=2):
        self.root = root
        self.repos, self.aliases, self.ollama, self.blobs = {}, {}, {}, {}
        self.gguf_info = {}  # sha256 -> gguf_summary
        to_hash, git_paths = [], set()
        hf = os.path.join(root, "hf")
        pending = []
        for org in _subdirs(hf):
            for name in _subdirs(os.path.join(hf, org)):
                rid = "%s/%s" % (org, name)
                rdir = os.path.join(hf, org, name)
                meta = dict(HF_META_DEFAULTS)
                meta.update(SPECIAL_REPOS.get(rid, {}))
                meta.update(_load_meta(os.path.join(rdir, ".meta.json"), HF_META_DEFAULTS,
                                       "an HF repo"))
                self._check_hf_meta(rid, meta)
                paths = []
                for dp, dns, fns in os.walk(rdir):
                    dns[:] = sorted(d for d in dns if d != ".git")
                    for fn in sorted(fns):
                        full = os.path.join(dp, fn)
                        rel = os.path.relpath(full, rdir).replace(os.sep, "/")
                        if rel == ".meta.json" or not os.path.isfile(full):
                            continue
                        lfs = _is_lfs(rel, os.stat(full).st_size, set(meta["lfs"]))
                        paths.append((rel, full, lfs))
                        to_hash.append(full)
                        if not lfs:
                            git_paths.add(full)
                pending.append((rid, rdir, meta, paths))
        od = os.path.join(root, "ollama")
        opending = []
        for ns in _subdirs(od):
            for model in _subdirs(os.path.join(od, ns)):
                for tag in _subdirs(os.path.join(od, ns, model)):
                    tdir = os.path.join(od, ns, model, tag)
                    meta = dict(OLLAMA_META_DEFAULTS)
                    meta.update(_load_meta(os.path.join(tdir, ".meta.json"),
                                           OLLAMA_META_DEFAULTS, "an Ollama tag"))
                    if meta["cdn_mode"] not in CDN_MODES:
                        raise FixtureError("%s: unknown cdn_mode %r" % (tdir, meta["cdn_mode"]))
                    files = sorted(f for f in os.listdir(tdir)
                                   if f != ".meta.json" and os.path.isfile(os.path.join(tdir, f)))
                    to_hash += [os.path.join(tdir, f) for f in files]
                    opending.append((ns, model, tag, tdir, meta, files))
        hashes = hash_files(to_hash, git_paths, workers)

        for rid, rdir, meta, paths in pending:
            repo = Repo(rid, rdir, meta)
            for rel, full, lfs in paths:
                sha256, gsha1 = hashes[full]
                blob = Blob(sha256, os.stat(full).st_size, path=full)
                repo.files[rel] = RepoFile(rel, blob, gsha1, lfs)
                if lfs:
                    self.blobs.setdefault(sha256, blob)
                if rel.lower().endswith(".gguf") and sha256 not in self.gguf_info:
                    self.gguf_info[sha256] = gguf_summary(full)
            repo.setup_revisions()
            self.repos[rid] = repo
        for rid, repo in self.repos.items():
            for old in repo.meta["renamed_from"]:
                if old in self.repos or old in self.aliases:
                    raise FixtureError("%s: renamed_from %s names an existing repo" % (rid, old))
                self.aliases[old] = rid

        for ns, model, tag, tdir, meta, files in opending:
            self._load_ollama(ns, model, tag, tdir, meta, files, hashes)

    @staticmethod
    def _check_hf_meta(rid, m):
        if m["gated"] not in (False, True, "auto", "manual"):
            raise FixtureError("%s: gated must be false, \"auto\" or \"manual\"" % rid)
        if m["gated"] is True:
            m["gated"] = "manual"
        if m["cdn_mode"] not in CDN_MODES:
            raise FixtureError("%s: unknown cdn_mode %r" % (rid, m["cdn_mode"]))
        if m["tree_next_origin"] not in ("hub", "cdn"):
            raise FixtureError("%s: tree_next_origin must be \"hub\" or \"cdn\"" % rid)
        if not isinstance(m["tree_page_size"], int) or m["tree_page_size"] < 1:
            raise FixtureError("%s: tree_page_size must be a positive integer" % rid)

    def _load_ollama(self, ns, model, tag, tdir, meta, files, hashes):
        om = OllamaModel(ns, model, tag, meta)
        layers, model_info = [], {}
        ggufs = [f for f in files if f.lower().endswith(".gguf")]
        models = [f for f in ggufs if not f.lower().startswith("mmproj")]
        if len(models) != 1:
            raise FixtureError("%s: expected exactly one model .gguf, found %d" % (tdir, len(models)))

        def add(kind, fname):
            full = os.path.join(tdir, fname)
            sha256, _ = hashes[full]
            blob = Blob(sha256, os.stat(full).st_size, path=full)
            self.blobs.setdefault(sha256, blob)
            om.digests.add(sha256)
            layers.append({"mediaType": OLLAMA_MEDIA[kind], "digest": "sha256:" + sha256,
                           "size": blob.size})
            return full

        model_info = gguf_summary(add("model", models[0]))
        for f in ggufs:
            if f not in models:
                add("projector", f)
        for kind in ("adapter", "template", "system", "license", "params", "messages"):
            for f in files:
                if f in (kind, kind + ".json", kind + ".txt"):
                    add(kind, f)
        arch = model_info.get("architecture", "unknown")
        ftype = meta["file_type"] or FTYPE_NAMES.get(model_info.get("file_type"), "unknown")
        mtype = meta["model_type"] or _param_label(model_info.get("total", 0))
        config = {"model_format": "gguf", "model_family": arch, "model_families": [arch],
                  "model_type": mtype, "file_type": ftype, "architecture": "amd64",
                  "os": "linux",
                  "rootfs": {"type": "layers", "diff_ids": [l["digest"] for l in layers]}}
        config.update(meta["config"])
        cbytes = json.dumps(config, separators=(",", ":")).encode()
        csha = hashlib.sha256(cbytes).hexdigest()
        self.blobs.setdefault(csha, Blob(csha, len(cbytes), data=cbytes))
        om.digests.add(csha)
        manifest = {"schemaVersion": 2, "mediaType": DOCKER_MANIFEST,
                    "config": {"mediaType": DOCKER_CONFIG, "digest": "sha256:" + csha,
                               "size": len(cbytes)},
                    "layers": layers}
        om.manifest = json.dumps(manifest, separators=(",", ":")).encode()
        self.ollama[(ns, model, tag)] = om


def _param_label(n):
    return "%.1fB" % (n / 1e9) if n >= 1e9 else "%.0fM" % (n / 1e6)


# ---- shared server state -----------------------------------------------------

class World:
    def __init__(self, fixtures, log_path, token, approved_token):
        self.fx = fixtures
        self.valid_tokens = {t for t in (token, approved_token) if t}
        self.approved_token = approved_token
        self.secret = os.urandom(32)
        self.hub_origin = self.cdn_origin = ""
        self.cors = False  # --cors
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.fail_counts = {}
        self.bucket_counts = {}
        self.conn_ids = itertools.count(1)
        self.log = open(log_path, "a", encoding="utf-8", buffering=1)

    def next_conn(self):
        with self.lock:
            return next(self.conn_ids)

    def write_log(self, entry):
        line = json.dumps(entry, separators=(",", ":")) + "\n"
        with self.lock:
            if not self.log.closed:  # a stalled answer may end after shutdown
                self.log.write(line)
                self.log.flush()

    def close_log(self):
        with self.lock:
            self.log.close()

    def count_failure(self, key):
        with self.lock:
            n = self.fail_counts.get(key, 0) + 1
            self.fail_counts[key] = n
            return n

    def count_bucket(self, bucket):
        with self.lock:
            n = self.bucket_counts.get(bucket, 0) + 1
            self.bucket_counts[bucket] = n
            return n

    def reset(self):
        with self.lock:
            self.fail_counts.clear()
            self.bucket_counts.clear()

    def sign(self, path, expires):
        msg = ("%s\n%d" % (path, expires)).encode()
        return hmac.new(self.secret, msg, hashlib.sha256).hexdigest()[:40]


def parse_range(value, size):
    """A single `bytes=` range: None (absent or ignorable, answer 200),
    "unsatisfiable" (answer 416) or (start, end) inclusive, clamped."""
    if value is None:
        return None
    m = re.fullmatch(r"\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*", value)
    if not m or (m.group(1) == "" and m.group(2) == ""):
        return None  # syntax we do not serve (multiple ranges...): whole body
    a, b = m.groups()
    if a == "":  # suffix range: the last b bytes
        n = int(b)
        if n == 0 or size == 0:
            return "unsatisfiable"
        return (max(0, size - n), size - 1)
    start = int(a)
    if b and int(b) < start:
        return None  # invalid: ignored, as RFC 9110 says
    if start >= size:
        return "unsatisfiable"
    return (start, min(int(b), size - 1) if b else size - 1)


def _wants_gzip(accept_encoding):
    for tok in (accept_encoding or "").split(","):
        parts = [p.strip() for p in tok.split(";")]
        if parts[0].lower() in ("gzip", "x-gzip", "*"):
            return not any(p.replace(" ", "") in ("q=0", "q=0.0", "q=0.00", "q=0.000")
                           for p in parts[1:])
    return False


def _truthy(v):
    return str(v).lower() in ("1", "true", "yes", "on")


def _xml_error(code, message):
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>%s</Code><Message>%s</Message>'
            '<RequestId>FAKE0000</RequestId></Error>\n' % (code, message)).encode()


# ---- HTTP handling: common part -------------------------------------------------

# --cors: what huggingface.co and its CDN answer a page's fetch (huggingface.js
# reads these headers from a browser), so the browser test meets the same rules
CORS_HEADERS = [
    ("Access-Control-Allow-Origin", "*"),
    ("Access-Control-Expose-Headers", "Content-Range, Content-Length, ETag, X-Repo-Commit, "
     "X-Linked-Size, X-Linked-Etag, X-Error-Code, X-Error-Message, Link")]
CORS_PREFLIGHT = [
    ("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS"),
    ("Access-Control-Allow-Headers", "Authorization, Range, Accept, Content-Type"),
    ("Access-Control-Max-Age", "86400")]

class BaseHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake_remote/1.0"
    sys_version = ""
    timeout = 30  # idle keep-alive connections are closed after this
    listener = "?"

    def setup(self):
        super().setup()
        self.world = self.server.world
        self.conn_id = self.world.next_conn()

    def log_message(self, fmt, *args):  # the JSON log replaces the default one
        pass

    def version_string(self):
        return self.server_version

    def do_GET(self):
        self._handle()

    do_HEAD = do_POST = do_PUT = do_DELETE = do_OPTIONS = do_GET

    def _handle(self):
        self.sent, self.status, self.complete = 0, None, True
        self.strip, self.extra_headers = set(), []
        url = urllib.parse.urlsplit(self.path)
        self.rpath, self.rquery = url.path, url.query
        self.q = dict(urllib.parse.parse_qsl(url.query, keep_blank_values=True))
        self.body = self._read_body()
        try:
            if self.body is None:
                self.respond(413, b"request body too large\n", close=True)
            elif self.command == "OPTIONS" and self.world.cors:
                self.respond(204, b"", None, CORS_PREFLIGHT)
            elif self.command not in ("GET", "HEAD", "POST"):
                self.respond(405, b"method not allowed\n")
            else:
                self.route()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, socket.timeout):
            self.complete = False
            self.close_connection = True
        finally:
            self._log()

    def _read_body(self):
        n = self.headers.get("Content-Length")
        if not n:
            return b""
        try:
            n = int(n)
        except ValueError:
            return None
        if n < 0 or n > (1 << 20):
            return None
        return self.rfile.read(n)

    def _log(self):
        h = self.headers
        self.world.write_log({
            "t": round(time.time(), 6), "listener": self.listener, "conn": self.conn_id,
            "method": self.command, "path": self.rpath, "query": self.rquery,
            "range": h.get("Range"), "auth": h.get("Authorization") is not None,
            "user_agent": h.get("User-Agent"), "accept": h.get("Accept"),
            "accept_encoding": h.get("Accept-Encoding"),
            "status": self.status, "bytes": self.sent, "complete": self.complete})

    # -- sending

    def start(self, status, headers, close=False):
        """Status line and headers; `headers` is a list of (name, value)."""
        self.status = status
        self.send_response(status)
        names = set()
        cors = CORS_HEADERS if self.world.cors else []
        for k, v in headers + self.extra_headers + cors:
            if k.lower() in self.strip:
                continue
            names.add(k.lower())
            # values may echo parts of the request: no CR/LF injection, latin-1 only
            v = re.sub(r"[\x00-\x1f\x7f]", "?", str(v))
            self.send_header(k, v.encode("latin-1", "replace").decode("latin-1"))
        if close or ("content-length" not in names and self.command != "HEAD"):
            self.send_header("Connection", "close")  # no length: the end is the close
            self.close_connection = True
        self.end_headers()

    def write(self, data):
        if self.command == "HEAD" or not data:
            return
        self.wfile.write(data)
        self.sent += len(data)

    def respond(self, status, body=b"", ctype="text/plain; charset=utf-8", headers=(), close=False):
        hs = list(headers)
        if ctype:
            hs.append(("Content-Type", ctype))
        hs.append(("Content-Length", len(body)))
        self.start(status, hs, close=close)
        self.write(body)

    def respond_json(self, status, obj, headers=()):
        self.respond(status, json.dumps(obj, indent=None).encode(), "application/json; charset=utf-8",
                     headers)

    def send_blob(self, blob, start, length, status, headers, limit=None, slow=None):
        """Headers announcing `length` bytes, then the bytes from `start`.
        limit: send only that many, then close (truncation).
        slow: (chunk, delay) pacing."""
        self.start(status, list(headers) + [("Content-Length", length)],
                   close=limit is not None)
        if self.command == "HEAD":
            return
        todo = length if limit is None else min(limit, length)
        for b in blob.chunks(start, todo):
            if slow:
                chunk, delay = slow
                for i in range(0, len(b), chunk):
                    if self.world.stopping.is_set():
                        raise ConnectionAbortedError
                    self.write(b[i:i + chunk])
                    if self.sent < todo:
                        time.sleep(delay)
            else:
                self.write(b)
        if self.sent < length:
            self.complete = False
            self.close_connection = True

    # -- shared request helpers

    def bearer(self):
        """None without an Authorization header, else the token ("" if not Bearer)."""
        v = self.headers.get("Authorization")
        if v is None:
            return None
        parts = v.strip().split(None, 1)
        return parts[1].strip() if len(parts) == 2 and parts[0].lower() == "bearer" else ""


# ---- the hub listener --------------------------------------------------------------

class HubHandler(BaseHandler):
    listener = "hub"

    def route(self):
        raw = self.rpath.split("/")[1:]
        segs = [urllib.parse.unquote(s) for s in raw]
        bucket = "pages"
        if self.rpath.startswith("/api/resolve-cache/") or (len(segs) >= 3 and segs[2] == "resolve"):
            bucket = "resolvers"
        elif self.rpath.startswith("/api/"):
            bucket = "api"
        self.bucket = bucket
        n = self.world.count_bucket(bucket)
        quota = {"resolvers": 3000, "api": 500, "pages": 100}[bucket]
        self.extra_headers = [
            ("X-Request-Id", "Root=1-%08x-%016x" % (int(time.time()), self.conn_id * 1000003 + n)),
            ("RateLimit", '"%s";r=%d;t=%d' % (bucket, quota - 1 - (n - 1) % quota,
                                               300 - int(time.time()) % 300)),
            ("RateLimit-Policy", '"fixed window";"%s";q=%d;w=300' % (bucket, quota))]

        if self.rpath == "/_fake/reset":
            self.world.reset()
            return self.respond_json(200, {"reset": True})
        if segs[:2] == ["api", "resolve-cache"]:
            return self.resolve_cache(segs[2:])
        if segs[:2] == ["api", "models"] and len(segs) >= 4:
            return self.api_models(segs[2:])
        if segs[:1] == ["v2"] and len(segs) >= 5:
            return self.registry(segs[1:])
        if len(segs) >= 5 and segs[2] == "resolve":
            return self.resolve(segs)
        return self.respond(404, b"Not Found\n")

    # -- errors as the Hub sends them: headers (HEAD has no body) and JSON

    def hf_error(self, status, code, message, headers=()):
        hs = list(headers) + [("X-Error-Message", message)]
        if code:
            hs.append(("X-Error-Code", code))
        self.respond_json(status, {"error": message}, hs)

    def repo_not_found(self):
        self.hf_error(401, "RepoNotFound", "Repository not found")

    # -- the checks every HF route makes, in the Hub's order

    def hf_repo(self, org, name, download):
        """The Repo, or None after answering (redirect, error, injected failure)."""
        rid = "%s/%s" % (org, name)
        if rid in self.world.fx.aliases:  # renamed: same path under the new id
            new = self.world.fx.aliases[rid]
            loc = self._renamed_location(rid, new)
            body = ("Temporary Redirect. Redirecting to %s" % loc).encode()
            return self.respond(307, body, headers=[("Location", loc)])
        repo = self.world.fx.repos.get(rid)
        if repo is not None and not self.apply_switches(repo):
            return None
        tok = self.bearer()
        if tok is not None and tok not in self.world.valid_tokens:
            return self.hf_error(401, None, "Invalid credentials in Authorization header")
        if repo is None or (repo.meta["private"] and tok is None):
            return self.repo_not_found()
        if repo.meta["disabled"]:
            return self.hf_error(403, None, "Access to this resource is disabled.")
        if download and repo.meta["gated"]:
            if tok is None:
                return self.hf_error(401, "GatedRepo",
                                     "Access to model %s is restricted. You must have access to it "
                                     "and be authenticated to access it. Please log in." % rid)
            if tok != self.world.approved_token:
                if repo.meta["gated_pending"]:
                    msg = ("Your request to access model %s is awaiting a review from the "
                           "repo authors." % rid)
                else:
                    msg = ("Access to model %s is restricted and you are not in the authorized "
                           "list. Visit %s/%s to ask for access." % (rid, self.world.hub_origin, rid))
                return self.hf_error(403, "GatedRepo", msg)
        return repo

    def _renamed_location(self, old, new):
        old_raw = "/".join(urllib.parse.quote(p) for p in old.split("/"))
        new_raw = "/".join(urllib.parse.quote(p) for p in new.split("/"))
        path = self.rpath
        i = path.find("/" + old_raw + "/")
        if i < 0:
            i = path.find("/" + old_raw)
        loc = path[:i] + "/" + new_raw + path[i + 1 + len(old_raw):]
        return loc + ("?" + self.rquery if self.rquery else "")

    def apply_switches(self, repo):
        """hub_delay, header stripping and injected failures; False if answered."""
        m = repo.meta
        if m["hub_delay"]:
            self.world.stopping.wait(float(m["hub_delay"]))
        self.strip = {h.lower() for h in m["strip_headers"]}
        if self.command == "HEAD":
            self.strip |= {h.lower() for h in m["strip_headers_on_head"]}
        n = m["fail_first"]
        if n and (n < 0 or self.world.count_failure(repo.id) <= n):
            st = m["fail_status"]
            if st == 429:
                self.extra_headers = [h for h in self.extra_headers if h[0] != "RateLimit"]
                self.extra_headers.append(("RateLimit", '"%s";r=0;t=1' % self.bucket))
                self.hf_error(429, None, "You have exceeded our hourly quotas for action: "
                              "resolve. We invite you to retry later.", [("Retry-After", "1")])
            else:
                self.hf_error(st, None, "Injected failure (fail_first)")
            return False
        return True

    def etag(self, repo, value):
        return ('W/"%s"' if repo.meta["weak_etag"] else '"%s"') % value

    @staticmethod
    def split_rev(rest):
        """(revision, file path) from the segments after resolve/; accepts an
        unencoded refs/pr/N as well as the encoded form."""
        if len(rest) >= 3 and rest[0] == "refs" and rest[1] in ("pr", "convert"):
            return "/".join(rest[:3]), "/".join(rest[3:])
        return rest[0], "/".join(rest[1:])

    # -- /{org}/{name}/resolve/{rev}/{path}

    def resolve(self, segs):
        org, name = segs[0], segs[1]
        rev, fpath = self.split_rev(segs[3:])
        repo = self.hf_repo(org, name, download=True)
        if repo is None:
            return
        rv = repo.revision(rev)
        if rv is None:
            return self.hf_error(404, "RevisionNotFound", "Invalid rev id: %s" % rev)
        f = repo.file_at(rv, fpath)
        if f is None:
            return self.hf_error(404, "EntryNotFound", "Entry not found",
                                 [("X-Repo-Commit", rv.commit)])
        if f.lfs:
            return self.lfs_redirect(repo, rv, f)
        qpath = urllib.parse.quote(f.path, safe="/")
        key = urllib.parse.quote("/%s/resolve/%s/%s" % (repo.id, rev, f.path), safe="")
        loc = "/api/resolve-cache/models/%s/%s/%s?%s=&etag=%s" % (
            repo.id, rv.commit, qpath, key, urllib.parse.quote('"%s"' % f.blob_id, safe=""))
        body = ("Temporary Redirect. Redirecting to %s" % loc).encode()
        self.respond(307, body, headers=[("Location", loc)])

    def lfs_redirect(self, repo, rv, f):
        loc = self.cdn_url("/xet-bridge-us/%s" % f.blob.sha256, repo.meta)
        body = ("Found. Redirecting to %s" % loc).encode()
        self.respond(302, body, headers=[
            ("Location", loc), ("X-Repo-Commit", rv.commit),
            ("X-Linked-Etag", '"%s"' % f.blob.sha256), ("X-Linked-Size", f.size),
            ("ETag", self.etag(repo, f.blob_id)), ("Accept-Ranges", "bytes")])

    def cdn_url(self, path, meta):
        mode = meta["cdn_mode"]
        expires = int(time.time()) + (3600 if mode != "expired" else -60)
        q = [("X-Amz-Expires", "3600"), ("Expires", str(expires)),
             ("Signature", self.world.sign(path, expires)), ("Key-Pair-Id", "KFAKEREMOTE")]
        if mode != "normal":
            q.append(("mode", mode))
        q += [(k, str(v)) for k, v in sorted(meta["cdn_params"].items())]
        return "%s%s?%s" % (self.world.cdn_origin, path, urllib.parse.urlencode(q))

    # -- /api/resolve-cache/models/{org}/{name}/{commit}/{path}

    def resolve_cache(self, segs):
        if len(segs) < 5 or segs[0] != "models":
            return self.respond(404, b"Not Found\n")
        org, name, commit, fpath = segs[1], segs[2], segs[3], "/".join(segs[4:])
        repo = self.hf_repo(org, name, download=True)
        if repo is None:
            return
        rv = repo.by_commit.get(commit)
        if rv is None:
            return self.hf_error(404, "RevisionNotFound", "Invalid rev id: %s" % commit)
        f = repo.file_at(rv, fpath)
        if f is None:
            return self.hf_error(404, "EntryNotFound", "Entry not found",
                                 [("X-Repo-Commit", rv.commit)])
        if f.lfs:
            return self.lfs_redirect(repo, rv, f)
        hs = [("ETag", self.etag(repo, f.blob_id)), ("X-Repo-Commit", rv.commit),
              ("Accept-Ranges", "bytes"), ("Content-Type", _content_type(f.path)),
              ("Content-Disposition", 'inline; filename="%s"' % os.path.basename(f.path))]
        rng = parse_range(self.headers.get("Range"), f.size)
        if rng == "unsatisfiable":
            return self.respond(416, b"", None, hs + [("Content-Range", "bytes */%d" % f.size)])
        if rng is None and _wants_gzip(self.headers.get("Accept-Encoding")) \
                and f.path.lower().endswith(GZIP_EXTENSIONS):
            data = gzip.compress(f.blob.read_all(), mtime=0)
            return self.respond(200, data, None, hs + [("Content-Encoding", "gzip"),
                                                       ("Vary", "Accept-Encoding")])
        if rng is None:
            return self.send_blob(f.blob, 0, f.size, 200, hs)
        s, e = rng
        self.send_blob(f.blob, s, e - s + 1, 206,
                       hs + [("Content-Range", "bytes %d-%d/%d" % (s, e, f.size))])

    # -- /api/models/{org}/{name}[/revision/{rev} | /refs | /tree/{rev}[/path] | /paths-info/{rev}]

    def api_models(self, segs):
        org, name, rest = segs[0], segs[1], segs[2:]
        repo = self.hf_repo(org, name, download=False)
        if repo is None:
            return
        post = self.command == "POST"
        if not rest and not post:
            return self.model_info(repo, "main")
        if rest and rest[0] == "revision" and len(rest) >= 2 and not post:
            rev, extra = self.split_rev(rest[1:])
            return self.model_info(repo, rev) if not extra else self.respond(404, b"Not Found\n")
        if rest == ["refs"] and not post:
            return self.refs(repo)
        if rest and rest[0] == "tree" and len(rest) >= 2 and not post:
            rev, path = self.split_rev(rest[1:])
            return tree_page(self, repo, rev, path.strip("/"))
        if rest and rest[0] == "paths-info" and len(rest) >= 2 and post:
            rev, _ = self.split_rev(rest[1:])
            return self.paths_info(repo, rev)
        return self.respond(404, b"Not Found\n")

    def model_info(self, repo, rev):
        rv = repo.revision(rev)
        if rv is None:
            return self.hf_error(404, "RevisionNotFound", "Invalid rev id: %s" % rev)
        blobs = _truthy(self.q.get("blobs", ""))
        files = repo.files_at(rv)
        siblings = []
        for f in files:
            s = {"rfilename": f.path}
            if blobs:
                s["size"] = f.size
                s["blobId"] = f.blob_id
                if f.lfs:
                    s["lfs"] = {"sha256": f.blob.sha256, "size": f.size,
                                "pointerSize": len(f.pointer)}
            siblings.append(s)
        org = repo.id.split("/")[0]
        ggufs = model_ggufs(files)
        info = {"_id": hashlib.sha1(repo.id.encode()).hexdigest()[:24], "id": repo.id,
                "modelId": repo.id, "author": org, "sha": rv.commit,
                "lastModified": repo.meta["last_modified"], "createdAt": EPOCH,
                "private": bool(repo.meta["private"]), "gated": repo.meta["gated"],
                "disabled": bool(repo.meta["disabled"]), "downloads": 0, "likes": 0,
                "library_name": "gguf" if ggufs else "transformers",
                "tags": (["gguf"] if ggufs else ["transformers", "safetensors"]) + ["text-generation"],
                "pipeline_tag": "text-generation", "siblings": siblings, "spaces": []}
        if blobs:
            info["usedStorage"] = sum(f.size for f in files)
        cfg = repo.file_at(rv, "config.json")
        if cfg is not None and not cfg.lfs:
            try:
                c = json.loads(cfg.blob.read_all())
                info["config"] = {k: c[k] for k in ("architectures", "model_type") if k in c}
            except ValueError:
                pass
        if ggufs:  # the Hub describes one GGUF of the repo; take the default quant's
            g = dict(self.world.fx.gguf_info.get(pick_gguf(ggufs, "latest").blob.sha256, {}))
            g.pop("file_type", None)
            info["gguf"] = g
        self.respond_json(200, info)

    def refs(self, repo):
        out = {"branches": [], "tags": [], "converts": []}
        prs = []
        for name, rv in sorted(repo.revisions.items()):
            if rv.kind == "tag":
                out["tags"].append({"name": name, "ref": "refs/tags/" + name, "targetCommit": rv.commit})
            elif rv.kind == "pr":
                prs.append({"name": name, "ref": name, "targetCommit": rv.commit})
            else:
                out["branches"].append({"name": name, "ref": "refs/heads/" + name,
                                        "targetCommit": rv.commit})
        if _truthy(self.q.get("include_prs", "")):
            out["pullRequests"] = prs
        self.respond_json(200, out)

    def paths_info(self, repo, rev):
        rv = repo.revision(rev)
        if rv is None:
            return self.hf_error(404, "RevisionNotFound", "Invalid rev id: %s" % rev)
        ctype = (self.headers.get("Content-Type") or "").lower()
        try:
            if "json" in ctype:
                req = json.loads(self.body or b"{}")
                paths, expand = req.get("paths", []), bool(req.get("expand"))
            else:
                form = urllib.parse.parse_qs(self.body.decode(), keep_blank_values=True)
                paths, expand = form.get("paths", []), _truthy(form.get("expand", [""])[0])
        except (ValueError, UnicodeDecodeError, AttributeError):
            return self.hf_error(400, None, "Bad request body")
        entries = all_entries(repo, rv)
        by_path = {e["path"]: e for e in entries}
        out = [tree_entry(by_path[p], rv, expand) for p in paths if p in by_path]
        self.respond_json(200, out)

    # -- /v2/...: the Ollama registry, and the Hub's own registry for GGUF repos

    def registry(self, segs):
        # segs: ns, model, "manifests"|"blobs", ref
        if len(segs) != 4 or segs[2] not in ("manifests", "blobs"):
            return self.registry_error(404, "NAME_UNKNOWN", "repository name not known to registry")
        ns, model, what, ref = segs
        om = self.world.fx.ollama.get((ns, model, ref)) if what == "manifests" else None
        known_model = any(k[0] == ns and k[1] == model for k in self.world.fx.ollama)
        if known_model:
            anyom = om or next(v for k, v in self.world.fx.ollama.items()
                               if k[0] == ns and k[1] == model)
            need = anyom.meta["require_user_agent"]
            if need and not (self.headers.get("User-Agent") or "").startswith(need):
                return self.respond(412, b"The model you are attempting to pull requires a newer "
                                         b"version of Ollama.\n")
            if what == "manifests":
                if om is None:
                    return self.registry_error(404, "MANIFEST_UNKNOWN", "manifest unknown")
                return self.respond(200, om.manifest, DOCKER_MANIFEST, [
                    ("Docker-Content-Digest", "sha256:" + hashlib.sha256(om.manifest).hexdigest()),
                    ("Docker-Distribution-Api-Version", "registry/2.0")])
            return self.registry_blob(ref, {d for k, v in self.world.fx.ollama.items()
                                            if k[0] == ns and k[1] == model for d in v.digests},
                                      anyom.meta, 307, ollama=True)
        if "%s/%s" % (ns, model) in self.world.fx.repos:
            return self.hf_registry(ns, model, what, ref)
        return self.registry_error(404, "NAME_UNKNOWN", "repository name not known to registry")

    def registry_error(self, status, code, message):
        self.respond_json(status, {"errors": [{"code": code, "message": message, "detail": None}]})

    def registry_blob(self, ref, allowed, meta, status, ollama):
        m = re.fullmatch(r"sha256:([0-9a-f]{64})", ref)
        if not m:
            return self.registry_error(400, "DIGEST_INVALID", "provided digest did not match uploaded content")
        sha = m.group(1)
        if sha not in allowed or sha not in self.world.fx.blobs:
            return self.registry_error(404, "BLOB_UNKNOWN", "blob unknown to registry")
        path = ("/ollama-r2/docker/registry/v2/blobs/sha256/%s/%s/data" % (sha[:2], sha)
                if ollama else "/xet-bridge-us/%s" % sha)
        loc = self.cdn_url(path, meta)
        word = "Temporary Redirect" if status == 307 else "Found"
        self.respond(status, ("%s. Redirecting to %s" % (word, loc)).encode(),
                     headers=[("Location", loc), ("Docker-Distribution-Api-Version", "registry/2.0")])

    def hf_registry(self, org, name, what, ref):
        repo = self.hf_repo(org, name, download=True)
        if repo is None:
            return
        rv = repo.revisions["main"]
        ggufs = model_ggufs(repo.files_at(rv))
        if what == "blobs":
            allowed = {f.blob.sha256 for f in ggufs}
            for f in ggufs:
                cbytes, csha = self.hf_config(f)
                allowed.add(csha)
                self.world.fx.blobs.setdefault(csha, Blob(csha, len(cbytes), data=cbytes))
            return self.registry_blob(ref, allowed, repo.meta, 302, ollama=False)
        pick = pick_gguf(ggufs, ref)
        if pick is None:
            return self.respond_json(400, {"error": "The specified tag is not a valid quantization "
                                                    "scheme. Please use another tag or \"latest\""})
        cbytes, csha = self.hf_config(pick)
        self.world.fx.blobs.setdefault(csha, Blob(csha, len(cbytes), data=cbytes))
        man = {"schemaVersion": 2, "mediaType": DOCKER_MANIFEST,
               "config": {"mediaType": DOCKER_CONFIG, "digest": "sha256:" + csha, "size": len(cbytes)},
               "layers": [{"mediaType": OLLAMA_MEDIA["model"], "digest": "sha256:" + pick.blob.sha256,
                           "size": pick.size}]}
        if (self.headers.get("User-Agent") or "").startswith("llama-cpp"):
            man["ggufFile"] = {"rfilename": pick.path, "size": pick.size}
        self.respond_json(200, man)


    def hf_config(self, f):
        """The registry config blob of a GGUF: (bytes, sha256)."""
        g = self.world.fx.gguf_info.get(f.blob.sha256, {})
        arch = g.get("architecture", "unknown")
        cfg = {"model_format": "gguf", "model_family": arch, "model_families": [arch],
               "model_type": _param_label(g.get("total", 0)),
               "file_type": FTYPE_NAMES.get(g.get("file_type"), "unknown")}
        b = json.dumps(cfg, separators=(",", ":")).encode()
        return b, hashlib.sha256(b).hexdigest()


def model_ggufs(files):
    """Model GGUFs a quant tag can name: no mmproj, and of a split set only
    shard 1 (as llama.cpp's -hf picks)."""
    out = []
    for f in files:
        p = f.path.lower()
        if not p.endswith(".gguf") or "mmproj" in os.path.basename(p):
            continue
        m = re.search(r"-(\d{5})-of-(\d{5})\.gguf$", p)
        if m and int(m.group(1)) != 1:
            continue
        out.append(f)
    return out


def pick_gguf(ggufs, tag):
    """The Hub registry's choice: latest -> Q4_K_M, else a Q4*, else the first;
    a tag matches a file name part case-insensitively."""
    if not ggufs:
        return None
    if tag.lower() == "latest":
        for pat in (r"[-._]q4_k_m[-.]", r"[-._]q4"):
            for f in ggufs:
                if re.search(pat, os.path.basename(f.path).lower()):
                    return f
        return ggufs[0]
    pat = r"[-._]" + re.escape(tag.lower()) + r"[-.]"
    for f in ggufs:
        if re.search(pat, os.path.basename(f.path).lower()):
            return f
    return None


def _content_type(path):
    p = path.lower()
    if p.endswith(".json"):
        return "application/json"
    if p.endswith((".md", ".txt", ".jinja", ".py", ".gitattributes")):
        return "text/plain; charset=utf-8"
    return "application/octet-stream"


# ---- the tree API (both listeners: a cross-origin `next` link lands on the cdn) ----

def all_entries(repo, rv):
    files = repo.files_at(rv)
    entries, dirs = [], set()
    for f in files:
        parts = f.path.split("/")
        for i in range(1, len(parts)):
            dirs.add("/".join(parts[:i]))
        entries.append({"type": "file", "path": f.path, "file": f})
    for d in dirs:
        entries.append({"type": "directory", "path": d})
    entries.sort(key=lambda e: e["path"])
    return entries


def tree_entry(e, rv, expand):
    if e["type"] == "directory":
        out = {"type": "directory",
               "oid": hashlib.sha1(("tree %s %s" % (rv.commit, e["path"])).encode()).hexdigest(),
               "size": 0, "path": e["path"]}
    else:
        f = e["file"]
        out = {"type": "file", "oid": f.blob_id, "size": f.size, "path": f.path}
        if f.lfs:
            out["lfs"] = {"oid": f.blob.sha256, "size": f.size, "pointerSize": len(f.pointer)}
            out["xetHash"] = hashlib.sha256(b"xet " + f.blob.sha256.encode()).hexdigest()
    if expand:
        out["lastCommit"] = {"id": rv.commit, "title": "fixture", "date": EPOCH}
    return out


def tree_page(h, repo, rev, path):
    rv = repo.revision(rev)
    if rv is None:
        return h.hf_error(404, "RevisionNotFound", "Invalid rev id: %s" % rev)
    entries = all_entries(repo, rv)
    if path:
        if not any(e["type"] == "directory" and e["path"] == path for e in entries):
            return h.hf_error(404, "EntryNotFound", "Entry not found", [("X-Repo-Commit", rv.commit)])
        entries = [e for e in entries if e["path"].startswith(path + "/")]
    if not _truthy(h.q.get("recursive", "")):
        depth = path.count("/") + 1 if path else 0
        entries = [e for e in entries if e["path"].count("/") == depth]
    try:
        size = int(h.q.get("limit") or repo.meta["tree_page_size"])
        start = int(h.q.get("cursor") or "0", 16)
    except ValueError:
        return h.hf_error(400, None, "Invalid cursor or limit")
    size = max(1, size)
    page = entries[start:start + size]
    expand = _truthy(h.q.get("expand", ""))
    headers = []
    if start + size < len(entries):
        origin = h.world.cdn_origin if repo.meta["tree_next_origin"] == "cdn" else h.world.hub_origin
        q = [(k, v) for k, v in urllib.parse.parse_qsl(h.rquery, keep_blank_values=True)
             if k != "cursor"] + [("cursor", "%x" % (start + size))]
        headers.append(("Link", '<%s%s?%s>; rel="next"' % (origin, h.rpath, urllib.parse.urlencode(q))))
    h.respond_json(200, [tree_entry(e, rv, expand) for e in page], headers)


# ---- the cdn listener ----------------------------------------------------------------

class CdnHandler(BaseHandler):
    listener = "cdn"

    def xml(self, status, code, message):
        self.respond(status, _xml_error(code, message), "application/xml")

    def route(self):
        p = self.rpath
        m = (re.fullmatch(r"/xet-bridge-us/([0-9a-f]{64})", p)
             or re.fullmatch(r"/ollama-r2/docker/registry/v2/blobs/sha256/[0-9a-f]{2}/([0-9a-f]{64})/data", p))
        if m is None:
            segs = [urllib.parse.unquote(s) for s in p.split("/")[1:]]
            if segs[:2] == ["api", "models"] and len(segs) >= 5 and segs[4] == "tree":
                return self.tree(segs[2:])  # where a cross-origin next link points
            return self.xml(404, "NoSuchKey", "The specified key does not exist.")
        blob = self.world.fx.blobs.get(m.group(1))
        mode = self.q.get("mode", "normal")
        if blob is None or mode == "missing":
            return self.xml(404, "NoSuchKey", "The specified key does not exist.")
        if mode not in CDN_MODES:
            return self.respond(400, ("unknown mode %r; known: %s\n" % (mode, ", ".join(CDN_MODES))).encode())
        if self.headers.get("Authorization") is not None:  # as S3 does with a signed URL
            return self.xml(400, "InvalidArgument", "Only one auth mechanism allowed; only the "
                            "Signature query string parameter or the Authorization header should "
                            "be specified")
        try:
            expires = int(self.q.get("Expires", ""))
        except ValueError:
            expires = None
        sig = self.q.get("Signature", "")
        if expires is None or not hmac.compare_digest(sig, self.world.sign(p, expires)):
            return self.xml(403, "SignatureDoesNotMatch", "The request signature we calculated does "
                            "not match the signature you provided.")
        if mode == "expired" or expires < time.time():
            return self.xml(403, "AccessDenied", "Request has expired")
        self.serve(blob, mode)

    def tree(self, segs):
        repo = self.world.fx.repos.get("%s/%s" % (segs[0], segs[1]))
        if repo is None:
            return self.respond_json(404, {"error": "Repository not found"})
        rev, path = HubHandler.split_rev(segs[3:])
        tree_page(self, repo, rev, path.strip("/"))

    def hf_error(self, status, code, message, headers=()):  # used by tree_page
        self.respond_json(status, {"error": message}, headers)

    def qnum(self, name, default, kind=int):
        """A numeric CDN query parameter; ValueError is answered with 400."""
        v = self.q.get(name)
        return default if v is None else kind(v)

    def serve(self, blob, mode):
        try:
            truncate_at = self.qnum("truncate_at", None)
            chunk = max(1, self.qnum("chunk", 256))
            delay = self.qnum("delay", 0.5, float)
            stall_max = self.qnum("stall_max", 30.0, float)
        except ValueError:
            return self.respond(400, b"bad numeric query parameter\n")
        size = blob.size
        base = [("Content-Type", "application/octet-stream"), ("Accept-Ranges", "bytes"),
                ("ETag", '"%s"' % blob.sha256[:32]), ("Cache-Control", "public, max-age=604800")]
        if mode.startswith("redirect-"):
            here = self.rpath + ("?" + self.rquery if self.rquery else "")
            loc = {"redirect-file": "file:///etc/passwd",
                   "redirect-ftp": "ftp://%s:1/%s" % (CDN_HOST, blob.sha256),
                   "redirect-loop": self.world.cdn_origin + here,
                   "redirect-hop": self.world.cdn_origin + self.rpath + "?" + urllib.parse.urlencode(
                       [(k, v) for k, v in self.q.items() if k != "mode"])}[mode]
            return self.respond(302, b"", None, [("Location", loc)])
        if mode == "html":
            page = (b"<!DOCTYPE html>\n<html><head><title>Sign in to the network</title></head>"
                    b"<body><p>Please accept the terms of use to continue.</p></body></html>\n")
            return self.respond(200, page, "text/html; charset=utf-8")
        rng = parse_range(self.headers.get("Range"), size)
        if mode == "ignore-range" or rng is None:
            rng = None
        if rng == "unsatisfiable":
            return self.respond(416, b"", None, base + [("Content-Range", "bytes */%d" % size)])
        start, length, status = 0, size, 200
        hs = list(base)
        if rng is not None:
            s, e = rng
            if mode == "wrong-start" and s + 1 <= e:
                s += 1
            start, length, status = s, e - s + 1, 206
            total = size + 1 if mode == "wrong-total" else size
            if mode != "no-content-range":
                hs.append(("Content-Range", "bytes %d-%d/%d" % (s, e, total)))
        limit = slow = None
        if mode == "truncate":
            limit = max(0, min(length // 2 if truncate_at is None else truncate_at, length - 1))
        elif mode == "slow":
            slow = (chunk, delay)
        elif mode == "stall":
            limit = max(0, min(chunk, length - 1))
        self.send_blob(blob, start, length, status, hs, limit=limit, slow=slow)
        if mode == "stall" and self.command != "HEAD":
            self.wait_for_close(stall_max)

    def wait_for_close(self, seconds):
        """Keep a stalled answer open until the client gives up, `seconds`
        pass, or the server stops; the log line is written then."""
        end = time.time() + seconds
        while not self.world.stopping.is_set() and time.time() < end:
            r, _, _ = select.select([self.connection], [], [], 0.1)
            if r:
                try:
                    if not self.connection.recv(1, socket.MSG_PEEK):
                        return  # the client closed
                except OSError:
                    return
                time.sleep(0.1)  # it sent more: ignore it, keep stalling


# ---- main -----------------------------------------------------------------------------

class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, host, handler, world):
        if host not in (HUB_HOST, CDN_HOST):
            raise ValueError("refusing to bind %s" % host)
        self.world = world
        super().__init__((host, 0), handler)

    def handle_error(self, request, client_address):
        # a client that drops an idle keep-alive connection (a browser
        # closing) is not an error; anything else is still reported
        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            super().handle_error(request, client_address)


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Offline imitation of the Hugging Face Hub (127.0.0.1), its CDN "
                    "(127.0.0.2) and the Ollama registry, for kvplan's tests.")
    ap.add_argument("--fixtures", help="fixture directory (hf/<org>/<name>/..., ollama/<ns>/<model>/<tag>/...)")
    ap.add_argument("--ports-file", help='written as "<hub port> <cdn port>\\n" once both listen')
    ap.add_argument("--log", help="JSON-lines request log (appended)")
    ap.add_argument("--token", help="a valid token (private repos; not approved for gated ones)")
    ap.add_argument("--gated-approved-token", help="a valid token approved for gated repos")
    ap.add_argument("--cors", action="store_true",
                    help="answer as the Hub and its CDN do to a web page: CORS headers on "
                         "every answer, and OPTIONS preflights")
    ap.add_argument("--list-special-repos", action="store_true",
                    help="print the repo names that switch a behaviour on, and exit")
    args = ap.parse_args(argv)
    if args.list_special_repos:
        for name in sorted(SPECIAL_REPOS):
            print(name)
        return 0
    if not (args.fixtures and args.ports_file and args.log):
        ap.error("--fixtures, --ports-file and --log are required")
    if not os.path.isdir(args.fixtures):
        ap.error("%s: not a directory" % args.fixtures)
    for t in (args.token, args.gated_approved_token):
        if t is not None and (not t or re.search(r"[\x00-\x20\x7f]", t)):
            ap.error("tokens must be non-empty without spaces or control characters")

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        fx = Fixtures(args.fixtures, workers=max(1, min(4, os.cpu_count() or 1)))
        world = World(fx, args.log, args.token, args.gated_approved_token)
        world.cors = args.cors
        hub = Server(HUB_HOST, HubHandler, world)
        cdn = Server(CDN_HOST, CdnHandler, world)
    except (FixtureError, OSError) as e:
        print("fake_remote: %s" % e, file=sys.stderr)
        return 2
    if stop.is_set():  # SIGTERM while loading
        return 0
    world.hub_origin = "http://%s:%d" % (HUB_HOST, hub.server_address[1])
    world.cdn_origin = "http://%s:%d" % (CDN_HOST, cdn.server_address[1])

    threads = [threading.Thread(target=s.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
               for s in (hub, cdn)]
    for t in threads:
        t.start()
    tmp = args.ports_file + ".tmp.%d" % os.getpid()
    with open(tmp, "w") as fh:  # atomic: a poller never sees half a line
        fh.write("%d %d\n" % (hub.server_address[1], cdn.server_address[1]))
    os.replace(tmp, args.ports_file)

    while not stop.wait(0.2):
        pass
    world.stopping.set()  # wakes slow/stalled/delayed answers
    for s in (hub, cdn):
        s.shutdown()
        s.server_close()
    world.close_log()
    return 0


if __name__ == "__main__":
    sys.exit(main())
