// The page's first script: the verifier's script is kept in the page deflated (zlib, RFC 1950) and base64-encoded, in a
// data block the browser does not run (<script type="application/octet-stream" id="verifier-code">); this
// inflates it with the browser's DecompressionStream and runs it as an inline script. The Content-Security-Policy
// allows exactly two scripts by their SHA-256: this one and the inflated verifier (build.ts writes both hashes),
// so nothing else can run, here or later. A browser without DecompressionStream is told so.
(async () => {
  const say = (text) => {
    const summary = document.getElementById('summary');
    if (summary) summary.textContent = text;
  };
  if (typeof DecompressionStream !== 'function') {
    say(
      'This browser cannot run this page: it lacks DecompressionStream (Chrome 80, Firefox 113, Safari 16.4 or later have it).',
    );
    return;
  }
  const data = document.getElementById('verifier-code').textContent.trim();
  const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate'));
  const script = document.createElement('script');
  script.textContent = await new Response(stream).text();
  document.body.append(script);
})().catch((err) => {
  const summary = document.getElementById('summary');
  if (summary) summary.textContent = `This page could not start: ${err && err.message}`;
});
