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

  // Places only a GGUF's header in the file system, under the file's true
  // size: the library asks, by kvp_gguf_header_need, how many bytes the header
  // needs, and the page slices that much of the File and asks again.  A file
  // of any size (a split shard too) costs its header's bytes.
  function headerNeed(bytes, name) {
    var n = bytes.length;
    var buf = mod._malloc(n || 1);
    var needp = mod._malloc(8);
    var errp = mod._malloc(1024);
    var namep = mod._malloc(name.length * 4 + 1);
    mod.HEAPU8.set(bytes, buf);
    var enc = new TextEncoder().encode(name + '\0');
    mod.HEAPU8.set(enc, namep);
    var rc = mod._kvp_gguf_header_need(buf, n, namep, needp, errp);
    var lo = mod.HEAPU32[needp >> 2], hi = mod.HEAPU32[(needp >> 2) + 1];
    [buf, needp, errp, namep].forEach(function (p) { mod._free(p); });
    return { rc: rc, need: hi * 4294967296 + lo };
  }

  function addGguf(file, path) {
    need();
    path = path || '/in/' + file.name;
    var have = Math.min(file.size, 1 << 20);
    function step() {
      return file.slice(0, have).arrayBuffer().then(function (ab) {
        var bytes = new Uint8Array(ab);
        var r = headerNeed(bytes, file.name);
        if (r.rc === 0 && r.need > have && have < file.size) {
          have = Math.min(file.size, Math.max(r.need, have * 2));
          return step();
        }
        place(path, bytes, file.size);
        return path;
      });
    }
    return step();
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

  window.kvplan = { ready: ready, run: run, writeFile: writeFile, readFile: readFile,
                    addGguf: addGguf };
})();
