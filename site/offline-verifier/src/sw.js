// Service worker of the Timeseal offline verifier: keeps the verifier page (and its manifest) so the installed
// app opens with no connection. Registered only when the page is served over HTTP(S), with the scope
// "offline-verifier", so it never touches the rest of the site. The cache name carries the page's SHA-256: a
// new release is a new worker, which replaces the cache and the old worker.
const CACHE = 'timeseal-offline-verifier-__PAGE_SHA256__';
const FILES = ['offline-verifier.html', 'offline-verifier.webmanifest'];
const URLS = FILES.map((f) => new URL(f, self.location).href);

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(URLS.map((url) => new Request(url, { cache: 'reload' }))))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) => Promise.all(names.filter((n) => n.startsWith('timeseal-offline-verifier-') && n !== CACHE).map((n) => caches.delete(n))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  url.search = '';
  url.hash = '';
  if (!URLS.includes(url.href)) return;
  event.respondWith(caches.match(url.href, { cacheName: CACHE }).then((hit) => hit || fetch(request)));
});
