/** Debian's Chromium through Playwright, for the web app's tests (TRAWL_CHROMIUM names another binary). */
import type { Test } from 'tap';
import { chromium, type Browser } from 'playwright-core';

const CHROMIUM = process.env.TRAWL_CHROMIUM ?? '/usr/bin/chromium';

/** A browser closed when `t` ends. */
export async function launchBrowser(t: Test): Promise<Browser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  t.teardown(() => browser.close());
  return browser;
}
