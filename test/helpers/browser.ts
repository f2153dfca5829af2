/** Debian's Chromium through Playwright, for the web app's tests (TRAWL_CHROMIUM names another binary). */
import type { Test } from 'tap';
import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core';

const CHROMIUM = process.env.TRAWL_CHROMIUM ?? '/usr/bin/chromium';

/** A browser closed when `t` ends. */
export async function launchBrowser(t: Test): Promise<Browser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  t.teardown(() => browser.close());
  return browser;
}

/** A new page of `browser`, the script errors it throws collected in `errors` (a web test ends asserting there were none). */
export async function watchedPage(browser: Browser, options: BrowserContextOptions = {}): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage(options);
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  return { page, errors };
}

/** The middle of the first `word` on line `line` of the file view (its third character), in page coordinates; null when it is not there. */
export function wordPoint(page: Page, line: number, word: string): Promise<{ x: number; y: number } | null> {
  return page.evaluate(
    ({ line, word }) => {
      const code = document.querySelector(`#L${line} .code`);
      if (!code) return null;
      const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const at = node.textContent!.indexOf(word);
        if (at === -1) continue;
        const range = document.createRange();
        range.setStart(node, at + 2);
        range.setEnd(node, at + 3);
        const box = range.getBoundingClientRect();
        return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
      }
      return null;
    },
    { line, word },
  );
}
