// Debian's Chromium for the browser tests, as its old headless shell (package chromium-headless-shell): the same
// Blink and V8 as /usr/bin/chromium, without the browser's windowing layers. A browser test file costs about
// 40 % less CPU with it (test/site/first-user.browser.test.ts alone: 69 → 41 s of CPU), and the whole suite is
// bound by the two cores' CPU.
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium-headless-shell';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
    ],
  });
}
