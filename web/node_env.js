// node_env.js - pre-js of the node build of kvplan (build/web/kvplan-node.js,
// which `make web-check` runs every case against).  Node 20 has a fetch that
// emscripten 3.1.6 would use for a file path, so the .wasm is read here; and
// the process's environment becomes the program's, as for the native CLI
// (HF_HOME, KVPLAN_CACHE ...).
Module['wasmBinary'] = require('fs').readFileSync(require('path').join(__dirname, 'kvplan-node.wasm'));
Module['preRun'] = (Module['preRun'] || []).concat([function () {
  for (var k in process.env) ENV[k] = process.env[k];
}]);
