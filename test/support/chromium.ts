// Debian's Chromium for the browser tests, as its old headless shell (package chromium-headless-shell): the same
// Blink and V8 as /usr/bin/chromium, without the browser's windowing layers. A browser test file costs about
// 40 % less CPU with it (test/site/first-user.browser.test.ts alone: 69 → 41 s of CPU), and the whole suite is
// bound by the two cores' CPU.
//
// One difference matters to the site: the shell sometimes never has an idle period for a page, so an island
// hydrated `client:idle` (Astro calls requestIdleCallback without a timeout) can wait forever — seen when pages
// are opened one after the other in fresh contexts. Every context therefore gets requestIdleCallback with a
// 500 ms timeout, as a browser that is busy but not stuck would give.
import { chromium, type Browser, type BrowserContext } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium-headless-shell';

/** Gives requestIdleCallback a timeout of at most 500 ms (runs in the page, before its scripts). */
function idleWithTimeout(): void {
  const original = window.requestIdleCallback.bind(window);
  window.requestIdleCallback = (callback, options) =>
    original(callback, { ...options, timeout: Math.min(options?.timeout ?? 500, 500) });
}

export async function launchChromium(): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost',
    ],
  });
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (...args: Parameters<Browser['newContext']>): Promise<BrowserContext> => {
    const context = await newContext(...args);
    await context.addInitScript(idleWithTimeout);
    return context;
  };
  // browser.newPage() makes its own context through the same method; it is covered too.
  return browser;
}
