// hub.js - the page's Hugging Face Hub client.  kvplan's C code runs to
// completion without waiting, so in a page it cannot fetch: before a command
// that names a Hub model runs, kvplanHub.prepare(spec) fetches what the
// library will read, by the same URLs and rules as the CLI, and lays it
// where the library looks (see web/net_web.c):
//
//   ORG/NAME          the model info, then config.json into the Hugging Face
//                     cache (/hf); a repo without one falls to its default GGUF
//   ORG/NAME:QUANT    the model info (kept for net_fetch), the library's own
//   ORG/NAME:         choice of GGUF in it (web/hub_web.c: llama.cpp's -hf
//   ORG/NAME/F.gguf   rules), and each shard's header by HTTP range requests,
//                     into kvplan's header cache (/cache/kvplan)
//
// so `kvplan mem ORG/NAME:QUANT` then answers as the CLI does from its caches.
// A token, when given, goes to the Hub's origin only (the browser drops it on
// the redirect to the CDN) and is never stored or put in a link.
(function () {
  'use strict';
  var lib = null;
  var prepared = {};   // hub + spec -> Promise
  var cached = {};     // sha256 -> true: a header already in the cache

  // ORG/NAME[:QUANT | /PATH.gguf] as kvplan reads a MODEL; null otherwise
  function parse(spec) {
    var m = /^([\w.-]+\/[\w.-]+)(?::([\w.+-]*)|\/(\S+\.gguf))?$/i.exec(spec || '');
    if (!m || /\.\./.test(m[1])) return null;
    return { repo: m[1], tag: m[2], path: m[3] };
  }

  function enc(path) { return path.split('/').map(encodeURIComponent).join('/'); }
  function infoUrl(hub, repo) { return hub + '/api/models/' + repo + '/revision/main?blobs=true'; }
  function resolveUrl(hub, repo, rev, path) { return hub + '/' + repo + '/resolve/' + rev + '/' + enc(path); }

  function get(url, opt, extra) {
    var h = Object.assign({}, extra || {});
    if (opt.token) h.Authorization = 'Bearer ' + opt.token;
    return fetch(url, { headers: h, cache: 'no-store', credentials: 'omit' }).catch(function (e) {
      throw new Error('cannot reach ' + opt.hub + ' (' + (e.message || e) + '); catalog models ' +
                      'still work offline');
    });
  }

  function bytesOf(r) { return r.arrayBuffer().then(function (b) { return new Uint8Array(b); }); }

  // the model info, handed to net_fetch whatever its status (the library's
  // error lines read the status and X-Error-Code); when the Hub cannot be
  // reached nothing is laid down, and the library answers as the CLI does
  // offline (a catalog model, or its one-line error)
  function fetchInfo(s, opt) {
    var url = infoUrl(opt.hub, s.repo);
    return get(url, opt, { Accept: 'application/json' }).then(function (r) {
      return bytesOf(r).then(function (b) {
        lib.netPut(url, r.status, r.headers.get('X-Error-Code'), r.headers.get('X-Repo-Commit'), b);
        return { ok: r.ok, status: r.status, code: r.headers.get('X-Error-Code'), bytes: b,
                 text: new TextDecoder().decode(b) };
      });
    }, function () { return null; });
  }

  function writeFile(path, bytes) { window.kvplan.writeFile(path, bytes); }

  // ORG/NAME: config.json into the Hugging Face cache as huggingface_hub lays
  // it out, or the Hub's refusal where the library will ask for it
  function configOrDefault(s, info, opt) {
    var headUrl = resolveUrl(opt.hub, s.repo, 'main', 'config.json');
    if (!info.ok) {
      lib.netPut(headUrl, info.status, info.code, '', info.bytes);
      return Promise.resolve();
    }
    var j;
    try { j = JSON.parse(info.text); } catch (e) { j = {}; }
    var sha = /^[0-9a-f]{40}$/.test(j.sha || '') ? j.sha : null;
    var has = (j.siblings || []).some(function (f) { return f && f.rfilename === 'config.json'; });
    if (!has || !sha) {
      lib.netPut(headUrl, 404, 'EntryNotFound', sha || '', new Uint8Array(0));
      return has ? Promise.resolve() : ggufHeaders(s, info, opt);
    }
    return get(resolveUrl(opt.hub, s.repo, sha, 'config.json'), opt).then(function (r) {
      return bytesOf(r).then(function (b) {
        if (!r.ok) { lib.netPut(headUrl, r.status, r.headers.get('X-Error-Code'), sha, b); return; }
        var dir = '/hf/models--' + s.repo.replace('/', '--');
        writeFile(dir + '/snapshots/' + sha + '/config.json', b);
        writeFile(dir + '/refs/main', sha);
      });
    });
  }

  // bytes [from, to) of url by a Range request; a server that ignores Range
  // is read from its start only as far as `to`, then left
  function rangeBytes(url, label, from, to, opt) {
    return get(url, opt, { Range: 'bytes=' + from + '-' + (to - 1) }).then(function (r) {
      if (!r.ok) {
        if (r.body) r.body.cancel();
        throw new Error(label + ': the Hub answered HTTP ' + r.status +
                        (r.status === 401 || r.status === 403 ? ' (a gated or private model: give a token ' +
                         'of an account that has accepted its terms)' : ''));
      }
      var start = r.status === 206 ? from : 0, cr = r.headers.get('Content-Range');
      if (r.status === 206 && cr && cr.indexOf('bytes ' + from + '-') !== 0) {
        r.body.cancel();
        throw new Error(label + ': the server answered another range than asked (' + cr + ')');
      }
      var out = new Uint8Array(to - start), at = 0, reader = r.body.getReader();
      function pump() {
        return reader.read().then(function (c) {
          if (!c.done) {
            var take = Math.min(c.value.length, out.length - at);
            out.set(c.value.subarray(0, take), at);
            at += take;
          }
          if (c.done || at === out.length) {
            if (!c.done) reader.cancel();
            return out.subarray(Math.min(at, from - start), at);
          }
          return pump();
        });
      }
      return pump();
    });
  }

  // A GGUF's header from url: its first 256 KiB, then as much more as
  // kvp_gguf_header_need says it lacks (at least doubling what is here), each
  // a bounded range appended to the last, until the header is whole.
  var HEADER_MAX = 64 * 1048576; // KVP_GGUF_HEADER_MAX
  function headerBytes(url, label, size, opt) {
    var buf = new Uint8Array(0), want = Math.min(size, 262144);
    function step() {
      return rangeBytes(url, label, buf.length, want, opt).then(function (b) {
        var more = new Uint8Array(buf.length + b.length);
        more.set(buf);
        more.set(b, buf.length);
        buf = more;
        var h = lib.headerNeed(buf, label);
        if (h.rc === 1) return buf.slice(0, h.need);
        if (h.rc < 0 || buf.length > HEADER_MAX) return buf; // the library says why
        if (buf.length < want || buf.length >= size)
          throw new Error(label + ': the file ended after ' + buf.length + ' bytes, inside its header');
        want = Math.min(size, Math.max(h.need, buf.length * 2));
        return step();
      });
    }
    return step();
  }

  // every shard of the library's choice, its header into the header cache
  function ggufHeaders(s, info, opt) {
    if (!info.ok) return Promise.resolve();
    var pick = lib.hubPick(info.text, s.repo, s.tag, s.path);
    if (!pick.ok) return Promise.resolve(); // the library says why when it runs
    return pick.shards.reduce(function (p, f) {
      return p.then(function () {
        var label = s.repo + '/' + f.path;
        if (cached[f.sha256]) return null;
        if (!f.sha256 || f.size < 0)
          throw new Error(label + ': the Hub lists no sha256 or size for it, which the page ' +
                          'needs to read its header; the kvplan command line reads it');
        var url = resolveUrl(opt.hub, s.repo, pick.commit, f.path);
        return headerBytes(url, label, f.size, opt).then(function (bytes) {
          lib.headerPut(f.sha256, bytes, f.size);
          cached[f.sha256] = true;
        });
      });
    }, Promise.resolve());
  }

  // Makes `kvplan ... spec` answer: fetches once per hub and spec (again
  // after a failure).  gguf: the spec is llama.cpp's -hf (ORG/NAME means its
  // default GGUF, not its config.json).  Resolves to whether spec is a Hub name.
  function prepare(spec, opt) {
    var s = parse(spec);
    if (!s) return Promise.resolve(false);
    lib = window.kvplan.lib;
    window.kvplan.setenv('HF_ENDPOINT', opt.hub);
    var key = opt.hub + ' ' + spec + (opt.gguf ? ' gguf' : '') + (opt.token ? ' token' : '');
    if (!prepared[key]) {
      prepared[key] = fetchInfo(s, opt).then(function (info) {
        if (!info) return null;
        var gguf = opt.gguf || s.tag !== undefined || s.path !== undefined;
        return gguf ? ggufHeaders(s, info, opt) : configOrDefault(s, info, opt);
      }).then(function () { return true; });
      prepared[key].catch(function () { delete prepared[key]; });
    }
    return prepared[key];
  }

  window.kvplanHub = { parse: parse, prepare: prepare };
})();
