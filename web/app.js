// app.js - kvplan's page: a form over window.kvplan (kvplan_api.js).  Every
// answer is the CLI's own output for the command line shown above it, so a
// result can be reproduced, or scripted, with the native kvplan.
(function () {
  'use strict';
  var $ = function (id) { return document.getElementById(id); };
  var CACHE_TYPES = ['f16', 'bf16', 'f32', 'q8_0', 'q4_0', 'q4_1', 'q5_0', 'q5_1', 'iq4_nl', 'fp8'];
  var FIELDS = ['model', 'repo', 'runtime', 'ctx', 'np', 'ctk', 'ctv', 'fa', 'gpu', 'gmu', 'memory'];
  // source: the tab whose model was chosen last (what a pasted log is checked against)
  var state = { tab: 'catalog', source: 'catalog', gguf: null, cmd: 'mem' };
  // the Hub, or another endpoint given as #hub=URL (a mirror, or a test's server)
  var hub = (new URLSearchParams(location.hash.slice(1)).get('hub') || 'https://huggingface.co')
    .replace(/\/+$/, '');

  // the Hub's answers for a name, fetched before kvplan runs (web/hub.js)
  function prepare(spec, gguf) {
    return kvplanHub.prepare(spec, { hub: hub, token: $('token').value.trim(), gguf: gguf });
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
    $('version').textContent = kvplan.run(['--version']).stdout.split('\n')[0].replace(/^kvplan /, '');
  }

  function selectTab(tab) {
    state.tab = tab;
    if (tab !== 'paste') state.source = tab;
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

  // the model the Catalog tab names: a Hub name typed in, else the list's
  function catalogModel() {
    return $('repo').value.trim() || $('model').value;
  }

  function modelArg() {
    return modelOf(state.tab);
  }

  function modelOf(tab) {
    if (tab === 'config') {
      kvplan.writeFile('/in/config.json', $('config').value);
      return '/in/config.json';
    }
    if (tab === 'gguf') return state.gguf;
    return catalogModel();
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

  // What was pasted: a startup log when it has a line llama.cpp or vLLM
  // prints while starting, else a command line.
  var LOG_LINE = /^(llama_[a-z_]+:|print_info:|load_tensors:|llama_model_loader:|main:|srv +\w|common_init|system_info:|(\(\w+ pid=\d+\) )?(INFO|WARNING|DEBUG) \d\d-\d\d )/m;

  function isLog(text) {
    return LOG_LINE.test(text) || /Available KV cache memory|GPU KV cache size/.test(text);
  }

  // the model a log is checked against: the one vLLM names in it, else the
  // one chosen last (in the Catalog, config.json or GGUF tab)
  function logModel(text) {
    var m = /\bmodel='([^']+)'/.exec(text);
    if (m && kvplanHub.parse(m[1])) return m[1];
    return modelOf(state.source) || catalogModel();
  }

  // -hf REPO[:QUANT] with -hff FILE as `kvplan --` reads it (src/cmd_paste.c)
  function hfSpec(words) {
    var repo = null, file = null;
    for (var i = 0; i + 1 < words.length; i++) {
      if (/^(-hf|-hfr|--hf-repo)$/.test(words[i])) repo = words[i + 1];
      if (/^(-hff|--hf-file)$/.test(words[i])) file = words[i + 1];
    }
    if (!repo) return null;
    if (file) return repo.replace(/:.*$/, '') + '/' + file;
    return repo.indexOf(':') >= 0 ? repo : repo + ':';
  }

  // A pasted command: leading NAME=VALUE words become the environment (as a
  // shell passes them: OLLAMA_NUM_PARALLEL=2 ollama run ...), a -m naming a
  // dropped GGUF by its file name reads that file, and the Hub names it
  // holds are fetched first.
  function pasteJob(text) {
    if (isLog(text)) {
      kvplan.writeFile('/in/startup.log', text.replace(/\n?$/, '\n'));
      var model = logModel(text);
      return { args: ['check', '/in/startup.log', model], env: {}, specs: [{ spec: model }] };
    }
    var words = shellWords(text), env = {}, specs = [];
    while (words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0])) {
      var eq = words[0].indexOf('=');
      env[words[0].slice(0, eq)] = words.shift().slice(eq + 1);
    }
    var dropped = state.gguf ? state.gguf.replace(/^.*\//, '') : null;
    for (var i = 0; i + 1 < words.length; i++) {
      if (/^(-m|--model)$/.test(words[i]) && dropped && words[i + 1].replace(/^.*\//, '') === dropped)
        words[i + 1] = state.gguf;
    }
    var hf = hfSpec(words);
    if (hf) specs.push({ spec: hf, gguf: true });
    var serve = words.indexOf('serve');
    if (/vllm$/.test(words[0] || '') && serve >= 0 && words[serve + 1]) specs.push({ spec: words[serve + 1] });
    var gpu = /vllm$/.test(words[0] || '') ? ['--gpu', $('gpu').value] : [];
    return { args: gpu.concat(['--'], words), env: env, specs: specs };
  }

  function job(cmd) {
    if (state.tab === 'paste') return pasteJob($('paste').value.trim());
    var m = modelArg();
    if (!m) return null;
    var r = $('runtime').value, c = $('ctx').value.trim(), args;
    switch (cmd) {
    case 'show': args = ['show', m]; break;
    case 'compare': args = ['compare', m, '-c', '4k,32k,128k'].concat(runtimeFlags(cmd)); break;
    case 'fit': args = ['fit', m, '--memory', $('memory').value, '--runtime', r]
      .concat(r === 'llama.cpp' ? ['-np', $('np').value] : []); break;
    case 'techniques': args = ['techniques', m, '--runtime', r, '-c', c].concat(runtimeFlags(cmd)); break;
    case 'plot': args = ['plot', m, '-o', '/out/plot.svg', '--force',
      '--runtime', r === 'vllm' ? 'theory' : r, '-c', c]; break;
    default: args = ['mem', m, '--runtime', r, '-c', c].concat(runtimeFlags(cmd));
    }
    return { args: args, env: {}, specs: state.tab === 'catalog' ? [{ spec: m }] : [] };
  }

  function quote(a) { return /^[\w.,:\/=+@-]+$/.test(a) ? a : "'" + a.replace(/'/g, "'\\''") + "'"; }

  function shown(j) {
    return Object.keys(j.env).map(function (k) { return k + '=' + quote(j.env[k]) + ' '; }).join('') +
      'kvplan ' + j.args.map(quote).join(' ');
  }

  // the command, with its environment for this run only
  function runJob(j) {
    Object.keys(j.env).forEach(function (k) { kvplan.setenv(k, j.env[k]); });
    try { return kvplan.run(j.args); } finally {
      Object.keys(j.env).forEach(function (k) { kvplan.setenv(k, null); });
    }
  }

  function show(r, cmd) {
    $('stdout').textContent = r.stdout;
    $('stderr').textContent = r.stderr;
    $('plot').innerHTML = '';
    if (cmd === 'plot' && r.code === 0)
      $('plot').innerHTML = new TextDecoder().decode(kvplan.readFile('/out/plot.svg'));
  }

  function go(cmd) {
    state.cmd = cmd;
    var j = job(cmd);
    if (!j) { show({ stdout: '', stderr: 'Drop a GGUF file first.' }, cmd); return Promise.resolve(); }
    var hubNames = j.specs.filter(function (s) { return kvplanHub.parse(s.spec); });
    $('cmd').textContent = (hubNames.length ? 'fetching from the Hub: ' : '') + shown(j);
    var t0 = performance.now();
    return Promise.all(hubNames.map(function (s) { return prepare(s.spec, s.gguf); })).then(function () {
      $('cmd').textContent = shown(j);
      show(runJob(j), cmd);
    }, function (e) {
      $('cmd').textContent = shown(j);
      show({ stdout: '', stderr: 'kvplan: ' + (e.message || e) + '\n' }, cmd);
    }).then(function () {
      document.body.dataset.lastMs = String(Math.round(performance.now() - t0));
      saveToUrl();
    });
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
    $('model').addEventListener('change', function () { $('repo').value = ''; state.source = 'catalog'; });
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
