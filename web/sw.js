// sw.js - keeps kvplan's page working offline once it has loaded: the page's
// few files are cached at install and served cache-first (a new build is
// picked up on the next load after it is fetched).
var CACHE = 'kvplan-v1';
var FILES = ['./', 'index.html', 'style.css', 'kvplan.js', 'kvplan.wasm', 'kvplan_api.js', 'app.js'];
self.addEventListener('install', function (e) {
  e.waitUntil(caches.open(CACHE).then(function (c) { return c.addAll(FILES); }));
});
self.addEventListener('fetch', function (e) {
  e.respondWith(caches.match(e.request).then(function (hit) {
    var net = fetch(e.request).then(function (r) {
      if (r.ok) caches.open(CACHE).then(function (c) { c.put(e.request, r.clone()); });
      return r;
    });
    return hit || net;
  }));
});
