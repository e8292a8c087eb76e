// kvplan_api.js - window.kvplan: the same C library and command line as the
// native kvplan, compiled to WebAssembly (build/web/kvplan.js), run in the
// page.  Nothing leaves the page: files are read from what the user gives it
// (a GGUF only as far as its header), and the build has no network.
//
//   await kvplan.ready
//   kvplan.run(['mem', 'qwen3-8b', '-c', '32k'])   -> {code, stdout, stderr}
//   kvplan.writeFile('/in/config.json', bytes)        (a Uint8Array or a string)
//   await kvplan.addGguf(file, '/in/model.gguf')      (a File: its header only)
//   kvplan.readFile('/out/plot.svg')                  -> Uint8Array
//   kvplan.setenv('OLLAMA_NUM_PARALLEL', '2')          (null unsets)
//   kvplan.lib: what web/hub.js builds on (the GGUF header loop, the Hub
//   answers net_fetch gives, the Hub's GGUF choice, the header cache)
(function () {
  'use strict';
  var mod = null;
  var out = [];
  var err = [];

  function decode(bytes) {
    return new TextDecoder('utf-8').decode(new Uint8Array(bytes));
  }

  var ready = createKvplan({
    noInitialRun: true,
    thisProgram: 'kvplan',
    stdin: function () { return null; },
    stdout: function (c) { if (c !== null) out.push(c & 255); },
    stderr: function (c) { if (c !== null) err.push(c & 255); }
  }).then(function (m) {
    mod = m;
    mod.FS.mkdir('/in');
    mod.FS.mkdir('/out');
    // the page's caches: what web/hub.js fetches (the Hugging Face cache's
    // layout, kvplan's header cache), short paths for the source lines
    setenv('HF_HUB_CACHE', '/hf');
    setenv('KVPLAN_CACHE', '/cache/kvplan');
    return true;
  });

  function need() {
    if (!mod) throw new Error('kvplan: not ready yet (await kvplan.ready)');
  }

  // argv as the shell would pass it; stdout and stderr byte for byte
  function run(args) {
    need();
    out = [];
    err = [];
    var code;
    try {
      code = mod.callMain(args.map(String));
    } catch (e) {
      code = 134;
      err = err.concat(Array.from(new TextEncoder().encode('kvplan: ' + e + '\n')));
    }
    mod._fflush(0);
    return { code: code, stdout: decode(out), stderr: decode(err) };
  }

  function mkdirs(path) {
    var parts = path.split('/').slice(1, -1);
    var at = '';
    parts.forEach(function (p) {
      at += '/' + p;
      try { mod.FS.mkdir(at); } catch (e) { /* exists */ }
    });
  }

  function writeFile(path, bytes) {
    need();
    mkdirs(path);
    mod.FS.writeFile(path, typeof bytes === 'string' ? bytes : new Uint8Array(bytes));
  }

  // C strings in the module's memory, freed after fn
  function withStrings(strs, fn) {
    var ptrs = strs.map(function (x) {
      if (x === null || x === undefined) return 0;
      var n = mod.lengthBytesUTF8(x) + 1, p = mod._malloc(n);
      mod.stringToUTF8(x, p, n);
      return p;
    });
    try { return fn.apply(null, ptrs); } finally { ptrs.forEach(function (p) { if (p) mod._free(p); }); }
  }

  function withBytes(bytes, fn) {
    var p = mod._malloc(bytes.length || 1);
    mod.HEAPU8.set(bytes, p);
    try { return fn(p, bytes.length); } finally { mod._free(p); }
  }

  function setenv(name, value) {
    need();
    withStrings([name, value], function (n, v) {
      if (v) mod._setenv(n, v, 1); else mod._unsetenv(n);
    });
  }

  // kvp_gguf_header_need: {rc: 1 whole (need: its length), 0 need more (at
  // least need bytes in all), -1 never a GGUF kvplan reads; need}
  function headerNeed(bytes, name) {
    var needp = mod._malloc(8), errp = mod._malloc(1024);
    try {
      var rc = withBytes(bytes, function (buf, n) {
        return withStrings([name], function (namep) {
          return mod._kvp_gguf_header_need(buf, n, namep, needp, errp);
        });
      });
      var lo = mod.HEAPU32[needp >> 2], hi = mod.HEAPU32[(needp >> 2) + 1];
      return { rc: rc, need: hi * 4294967296 + lo };
    } finally { mod._free(needp); mod._free(errp); }
  }

  // A GGUF's header, whatever the file's size: the library says, by
  // kvp_gguf_header_need, how many bytes the header needs; slice(n) gives the
  // file's first n bytes (a Promise of a Uint8Array: a File's slice, an HTTP
  // range), and is asked again until the header is whole.  A file of any
  // size (a split shard too) costs its header's bytes.
  function readHeader(name, size, slice) {
    var have = Math.min(size, 1 << 20);
    function step() {
      return slice(have).then(function (bytes) {
        var r = headerNeed(bytes, name);
        if (r.rc === 0 && r.need > have && have < size) {
          have = Math.min(size, Math.max(r.need, have * 2));
          return step();
        }
        return r.rc === 1 ? bytes.subarray(0, r.need) : bytes;
      });
    }
    return step();
  }

  function addGguf(file, path) {
    need();
    path = path || '/in/' + file.name;
    return readHeader(file.name, file.size, function (n) {
      return file.slice(0, n).arrayBuffer().then(function (ab) { return new Uint8Array(ab); });
    }).then(function (bytes) {
      place(path, bytes, file.size);
      return path;
    });
  }

  // the answer net_fetch gives for url (web/net_web.c)
  function netPut(url, status, errorCode, repoCommit, body) {
    need();
    var rc = withBytes(body || new Uint8Array(0), function (p, n) {
      return withStrings([url, errorCode || '', repoCommit || ''], function (u, e, c) {
        return mod._kvp_web_net_put(u, status, e, c, p, n);
      });
    });
    if (rc) throw new Error('kvplan: too many fetched answers');
  }

  // the library's choice of GGUF in a model info (web/hub_web.c):
  // {ok, commit, shards: [{sha256, size, path}], error}
  function hubPick(info, repo, tag, path) {
    need();
    var n = 65536, out = mod._malloc(n);
    try {
      var rc = withBytes(new TextEncoder().encode(info), function (p, len) {
        return withStrings([repo, tag || '', path || ''], function (r, t, f) {
          return mod._kvp_web_hub_pick(p, len, r, t, f, out, n);
        });
      });
      var text = mod.UTF8ToString(out);
      if (rc) return { ok: false, error: text };
      var lines = text.trim().split('\n');
      return {
        ok: true,
        commit: lines[0].replace(/^commit /, ''),
        shards: lines.slice(1).map(function (l) {
          var m = l.match(/^(\S+) (-?\d+) (.*)$/);
          return { sha256: m[1] === '-' ? '' : m[1], size: Number(m[2]), path: m[3] };
        })
      };
    } finally { mod._free(out); }
  }

  // a remote file's header into kvplan's header cache, under its sha256
  // (the 64-bit size passes as two 32-bit halves: the module has no BigInt)
  function headerPut(sha256, bytes, fileSize) {
    need();
    withBytes(bytes, function (p, n) {
      withStrings([sha256], function (s) {
        mod._hdrcache_put(s, p, n, fileSize % 4294967296, Math.floor(fileSize / 4294967296));
      });
    });
  }

  // a MEMFS file holding the first bytes and reporting the true size; reads
  // past what it holds find its end, which the reader never reaches once the
  // header is whole
  function place(path, bytes, size) {
    writeFile(path, bytes);
    var node = mod.FS.lookupPath(path).node;
    var ops = Object.assign({}, node.node_ops);
    var getattr = ops.getattr;
    ops.getattr = function (n) {
      var a = getattr(n);
      a.size = size;
      return a;
    };
    node.node_ops = ops;
  }

  function readFile(path) {
    need();
    return mod.FS.readFile(path);
  }

  window.kvplan = {
    ready: ready, run: run, writeFile: writeFile, readFile: readFile, addGguf: addGguf,
    setenv: setenv,
    lib: { headerNeed: headerNeed, readHeader: readHeader, netPut: netPut, hubPick: hubPick, headerPut: headerPut }
  };
})();
