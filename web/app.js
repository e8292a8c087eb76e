// app.js - kvplan's page: a form over window.kvplan (kvplan_api.js).  Every
// answer is the CLI's own output for the command line shown above it, so a
// result can be reproduced, or scripted, with the native kvplan.
(function () {
  'use strict';
  var $ = function (id) { return document.getElementById(id); };
  var CACHE_TYPES = ['f16', 'bf16', 'f32', 'q8_0', 'q4_0', 'q4_1', 'q5_0', 'q5_1', 'iq4_nl', 'fp8'];
  var FIELDS = ['model', 'repo', 'runtime', 'ctx', 'np', 'ctk', 'ctv', 'fa', 'gpu', 'gmu', 'memory'];
  var state = { tab: 'catalog', gguf: null, cmd: 'mem', fetched: {} };
  // the Hub, or another endpoint given as #hub=URL (a mirror, or a test's server)
  var hub = new URLSearchParams(location.hash.slice(1)).get('hub') || 'https://huggingface.co';
  var REPO = /^[\w.-]+\/[\w.-]+$/;

  // ORG/NAME's config.json, fetched once, kept in the page's file system
  function fetchRepo(id) {
    if (state.fetched[id]) return Promise.resolve(state.fetched[id]);
    var dir = '/in/hub/' + id;
    return fetch(hub + '/' + id + '/resolve/main/config.json').then(function (r) {
      if (!r.ok) throw new Error(id + ': the Hub answered HTTP ' + r.status + ' for config.json' +
                                 (r.status === 401 || r.status === 403 ? ' (a gated or private model)' : ''));
      return r.arrayBuffer();
    }).then(function (b) {
      kvplan.writeFile(dir + '/config.json', new Uint8Array(b));
      state.fetched[id] = dir;
      return dir;
    });
  }

  function options(sel, values, chosen) {
    sel.innerHTML = '';
    values.forEach(function (v) {
      var o = document.createElement('option');
      o.value = o.textContent = v;
      if (v === chosen) o.selected = true;
      sel.appendChild(o);
    });
  }

  // the catalog and the GPU table, as the library lists them
  function fillLists() {
    var r = kvplan.run(['models', '--json']);
    var names = r.code === 0 ? JSON.parse(r.stdout).models.map(function (m) { return m.name; }) : [];
    options($('model'), names.sort(), 'qwen3-8b');
    var g = kvplan.run(['mem', 'qwen3-8b', '--runtime', 'vllm', '--gpu', '?']).stderr;
    var gpus = (g.match(/knows (.*) \(or give/) || ['', ''])[1].split(', ')
      .map(function (s) { return s.replace(/ \(.*$/, ''); }).filter(Boolean);
    options($('gpu'), gpus, 'A100-80GB');
    options($('ctk'), CACHE_TYPES, 'f16');
    options($('ctv'), CACHE_TYPES, 'f16');
    $('version').textContent = kvplan.run(['--version']).stdout.replace(/^kvplan /, '').trim();
  }

  function selectTab(tab) {
    state.tab = tab;
    document.querySelectorAll('.tabs button').forEach(function (b) {
      b.setAttribute('aria-selected', String(b.dataset.tab === tab));
    });
    document.querySelectorAll('.panel').forEach(function (p) { p.hidden = p.dataset.panel !== tab; });
  }

  function showRuntime() {
    var r = $('runtime').value;
    document.querySelectorAll('.llama').forEach(function (e) { e.hidden = r !== 'llama.cpp'; });
    document.querySelectorAll('.vllm').forEach(function (e) { e.hidden = r !== 'vllm'; });
  }

  // words of a pasted command line, as a POSIX shell splits them (quotes,
  // backslashes, line continuations)
  function shellWords(s) {
    var out = [], cur = '', inWord = false, q = null;
    for (var i = 0; i < s.length; i++) {
      var c = s[i];
      if (q) {
        if (c === q) q = null;
        else if (c === '\\' && q === '"' && i + 1 < s.length) cur += s[++i];
        else cur += c;
      } else if (c === '\\' && s[i + 1] === '\n') {
        i++;
      } else if (c === '\\' && i + 1 < s.length) {
        cur += s[++i]; inWord = true;
      } else if (c === '"' || c === "'") {
        q = c; inWord = true;
      } else if (/\s/.test(c)) {
        if (inWord) { out.push(cur); cur = ''; inWord = false; }
      } else {
        cur += c; inWord = true;
      }
    }
    if (inWord) out.push(cur);
    return out;
  }

  function modelArg() {
    if (state.tab === 'config') {
      kvplan.writeFile('/in/config.json', $('config').value);
      return '/in/config.json';
    }
    if (state.tab === 'gguf') return state.gguf;
    var repo = $('repo').value.trim();
    if (repo && REPO.test(repo)) return state.fetched[repo] || null;
    return $('model').value;
  }

  // the runtime's flags of `kvplan mem`, as the form sets them
  function runtimeFlags(cmd) {
    var r = $('runtime').value, a = [];
    if (r === 'llama.cpp') {
      if (cmd !== 'compare') a.push('-np', $('np').value);
      a.push('-ctk', $('ctk').value, '-ctv', $('ctv').value);
      if ($('fa').value) a.push('-fa', $('fa').value);
    } else if (r === 'vllm') {
      a.push('--gpu', $('gpu').value, '--gpu-memory-utilization', $('gmu').value);
      if ($('ctk').value === 'fp8') a.push('--kv-cache-dtype', 'fp8');
    } else {
      a.push('-ctk', $('ctk').value, '-ctv', $('ctv').value);
    }
    return a;
  }

  function argsFor(cmd) {
    if (state.tab === 'paste') {
      var text = $('paste').value.trim();
      if (/^\s*(llama-server|llama-cli|vllm|ollama|python|\.\/|\/)/.test(text) && text.split('\n').length < 8)
        return ['--'].concat(shellWords(text));
      kvplan.writeFile('/in/startup.log', text + '\n');
      return ['check', '/in/startup.log', $('model').value];
    }
    var m = modelArg();
    if (!m) return null;
    var r = $('runtime').value, c = $('ctx').value.trim();
    switch (cmd) {
    case 'show': return ['show', m];
    case 'compare': return ['compare', m, '-c', '4k,32k,128k'].concat(runtimeFlags(cmd));
    case 'fit': return ['fit', m, '--memory', $('memory').value, '--runtime', r]
      .concat(r === 'llama.cpp' ? ['-np', $('np').value] : []);
    case 'techniques': return ['techniques', m, '--runtime', r, '-c', c].concat(runtimeFlags(cmd));
    case 'plot': return ['plot', m, '-o', '/out/plot.svg', '--force',
      '--runtime', r === 'vllm' ? 'theory' : r, '-c', c];
    default: return ['mem', m, '--runtime', r, '-c', c].concat(runtimeFlags(cmd));
    }
  }

  function quote(a) { return /^[\w.,:\/=+-]+$/.test(a) ? a : "'" + a.replace(/'/g, "'\\''") + "'"; }

  function go(cmd) {
    var repo = $('repo').value.trim();
    if (state.tab === 'catalog' && repo && !REPO.test(repo)) {
      $('stderr').textContent = repo + ': a Hugging Face repo is ORG/NAME';
      return Promise.resolve();
    }
    if (state.tab === 'catalog' && repo && !state.fetched[repo]) {
      $('cmd').textContent = 'fetching ' + repo + '/config.json…';
      return fetchRepo(repo).then(function () { return go(cmd); }, function (e) {
        $('stdout').textContent = '';
        $('stderr').textContent = String(e.message || e);
      });
    }
    state.cmd = cmd;
    var args = argsFor(cmd);
    if (!args) { $('stderr').textContent = 'Drop a GGUF file first.'; return Promise.resolve(); }
    $('cmd').textContent = 'kvplan ' + args.map(quote).join(' ');
    var t0 = performance.now();
    var r = kvplan.run(args);
    $('stdout').textContent = r.stdout;
    $('stderr').textContent = r.stderr;
    $('plot').innerHTML = '';
    if (cmd === 'plot' && r.code === 0) {
      $('plot').innerHTML = new TextDecoder().decode(kvplan.readFile('/out/plot.svg'));
    }
    document.body.dataset.lastMs = String(Math.round(performance.now() - t0));
    saveToUrl();
    return Promise.resolve();
  }

  function saveToUrl() {
    var p = new URLSearchParams();
    p.set('tab', state.tab);
    p.set('cmd', state.cmd);
    if (hub !== 'https://huggingface.co') p.set('hub', hub);
    FIELDS.forEach(function (f) { p.set(f, $(f).value); });
    if (state.tab === 'config' && $('config').value.length < 6000) p.set('config', $('config').value);
    if (state.tab === 'paste' && $('paste').value.length < 6000) p.set('paste', $('paste').value);
    history.replaceState(null, '', '#' + p.toString());
  }

  function restoreFromUrl() {
    var p = new URLSearchParams(location.hash.slice(1));
    FIELDS.forEach(function (f) { if (p.has(f)) $(f).value = p.get(f); });
    if (p.has('config')) $('config').value = p.get('config');
    if (p.has('paste')) $('paste').value = p.get('paste');
    selectTab(p.get('tab') === 'gguf' ? 'catalog' : p.get('tab') || 'catalog');
    return p.get('cmd');
  }

  function takeGgufs(files) {
    files = Array.prototype.slice.call(files).filter(function (f) { return /\.gguf$/i.test(f.name); });
    if (!files.length) return;
    files.sort(function (a, b) { return a.name < b.name ? -1 : 1; });
    $('gguf-name').textContent = 'reading the header of ' + files.map(function (f) { return f.name; }).join(', ') + '…';
    Promise.all(files.map(function (f) { return kvplan.addGguf(f, '/in/' + f.name); })).then(function (paths) {
      state.gguf = paths[0];
      $('gguf-name').textContent = files.map(function (f) {
        return f.name + ' (' + (f.size / 1073741824).toFixed(2) + ' GiB; header only read)';
      }).join(', ');
      selectTab('gguf');
      go(state.cmd);
    });
  }

  function wire() {
    document.querySelectorAll('.tabs button').forEach(function (b) {
      b.addEventListener('click', function () { selectTab(b.dataset.tab); });
    });
    document.querySelectorAll('.actions button').forEach(function (b) {
      b.addEventListener('click', function () { go(b.dataset.cmd); });
    });
    $('runtime').addEventListener('change', function () { showRuntime(); go(state.cmd); });
    $('model').addEventListener('change', function () { $('repo').value = ''; });
    ['model', 'ctk', 'ctv', 'fa', 'gpu'].forEach(function (id) {
      $(id).addEventListener('change', function () { go(state.cmd); });
    });
    ['ctx', 'np', 'gmu', 'memory', 'repo'].forEach(function (id) {
      $(id).addEventListener('keydown', function (e) { if (e.key === 'Enter') go(state.cmd); });
    });
    $('ggufs').addEventListener('change', function (e) { takeGgufs(e.target.files); });
    var drop = $('drop');
    drop.addEventListener('dragover', function (e) { e.preventDefault(); drop.classList.add('over'); });
    drop.addEventListener('dragleave', function () { drop.classList.remove('over'); });
    drop.addEventListener('drop', function (e) {
      e.preventDefault();
      drop.classList.remove('over');
      takeGgufs(e.dataTransfer.files);
    });
    $('share').addEventListener('click', function () {
      saveToUrl();
      if (navigator.clipboard) navigator.clipboard.writeText(location.href);
    });
  }

  kvplan.ready.then(function () {
    fillLists();
    wire();
    var cmd = restoreFromUrl();
    showRuntime();
    go(cmd || 'mem').then(function () { document.body.dataset.ready = '1'; });
    if ('serviceWorker' in navigator && location.protocol !== 'file:')
      navigator.serviceWorker.register('sw.js').catch(function () { /* offline cache is optional */ });
  });
})();
