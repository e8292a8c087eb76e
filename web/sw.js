// sw.js - keeps kvplan's page working offline once it has loaded: the page's
// few files are cached at install and served cache-first (a new build is
// picked up on the next load after it is fetched).  Only the page's own
// files: a request to the Hub always goes to the Hub.
var CACHE = 'kvplan-v2';
var FILES = ['./', 'index.html', 'style.css', 'kvplan.js', 'kvplan.wasm', 'kvplan_api.js', 'hub.js',
             'app.js'];
self.addEventListener('install', function (e) {
  e.waitUntil(caches.open(CACHE).then(function (c) { return c.addAll(FILES); }));
});
self.addEventListener('activate', function (e) {
  e.waitUntil(caches.keys().then(function (keys) {
    return Promise.all(keys.filter(function (k) { return k !== CACHE; })
      .map(function (k) { return caches.delete(k); }));
  }));
});
self.addEventListener('fetch', function (e) {
  if (e.request.method !== 'GET' || new URL(e.request.url).origin !== self.location.origin) return;
  e.respondWith(caches.match(e.request).then(function (hit) {
    var net = fetch(e.request).then(function (r) {
      if (r.status === 200) caches.open(CACHE).then(function (c) { c.put(e.request, r.clone()); });
      return r;
    });
    if (hit) net.catch(function () { /* offline: the cached copy answers */ });
    return hit || net;
  }));
});
