/**
 * The web app in Debian's Chromium (issue 56): the bundle's size; how long after its source arrives a file view
 * shows the line its anchor names (a 100,000-line text file at #L99000, and a C file of Linux at its last lines,
 * highlighted); how long after a search's stream begins its first result is on screen. Medians of RUNS page loads each. Prints a table; the decision lines of docs/benchmarks.md quote it.
 * Then takes the screenshots of docs/web.md, into docs/web/.
 *
 *   npm run bench:web
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { commitAll, makeRepository, writeFiles } from '../test/helpers/git.js';
import { ensureLinuxCorpus } from './corpus.js';
import { removeScratch, startDaemon } from './http-harness.js';
import { percentile } from './stats.js';

const RUNS = Number(process.env.TRAWL_BENCH_RUNS ?? 7);
const BUNDLE = fileURLToPath(new URL('../web/app.js', import.meta.url));
const SCREENSHOTS = fileURLToPath(new URL('../../docs/web/', import.meta.url));
const LINUX_C_FILE = 'kernel/sched/core.c';
/** The user timing mark the search page sets when its stream's first part has arrived, parsed (web/search-page.ts). */
const FIRST_PART_MARK = 'trawl:first-part';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'trawl-bench-web-'));
const long = Array.from({ length: 100_000 }, (_, i) => `line ${i + 1} of the long file\n`).join('');
const c = fs.readFileSync(path.join(ensureLinuxCorpus(), LINUX_C_FILE), 'utf8');
const cLines = c.split('\n').length - 1;
const repoDir = path.join(root, 'web');
makeRepository(repoDir, { 'long.txt': long, 'kernel/sched/core.c': c, 'README.md': '# Scheduler notes\n\nSee kernel/sched/core.c for schedule().\n' });
writeFiles(repoDir, { 'kernel/sched/core.c': c.replace('schedule(void)', 'schedule(void) /* the entry point */') });
commitAll(repoDir, 'sched: name the entry point\n\nA comment where readers look for it.');
const daemon = await startDaemon({
  dataDir: path.join(root, 'data'),
  repos: [{ name: 'example.com/web', path: path.join(root, 'web'), public: true }],
  index: { ctagsCommand: '' },
});
const browser = await chromium.launch({ executablePath: process.env.TRAWL_CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox'] });

/**
 * Milliseconds from `since` (the end of the response of the resource it names, or the user timing mark it names) to
 * the element `id` (else the first `selector`) wholly on screen, in the page's own clock.
 */
async function onScreenOnce(url: string, target: { id?: string; selector?: string }, since: { resource: string } | { mark: string }): Promise<number> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(url);
  const shownAt = await page.waitForFunction(
    ({ id, selector }) => {
      const element = id ? document.getElementById(id) : document.querySelector(selector!);
      const box = element?.getBoundingClientRect();
      return box && box.top >= 0 && box.bottom <= innerHeight ? performance.now() : false;
    },
    target,
    { polling: 'raf', timeout: 60_000 },
  );
  const shown = (await shownAt.jsonValue()) as number;
  // A resource's timing is recorded once its response has ended.
  const timing = await page.waitForFunction(
    (since) =>
      'mark' in since
        ? performance.getEntriesByName(since.mark)[0]?.startTime
        : (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).find((entry) => entry.name.includes(since.resource))?.responseEnd,
    since,
    { timeout: 60_000 },
  );
  const arrived = (await timing.jsonValue()) as number;
  await page.close();
  return shown - arrived;
}

/** docs/web.md's pictures: each view as a person sees it, at 1280 px unless named otherwise. */
async function screenshots(): Promise<void> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const base = `${daemon.url}/browse/example.com/web@HEAD/-`;
  const hash = (await (await fetch(`${daemon.url}/api/commits?repo=example.com/web&perPage=1`)).json())[0].hash as string;
  const shots: { name: string; url: string; ready: string; scheme?: 'dark'; width?: number; act?: (page: import('playwright-core').Page) => Promise<void> }[] =
    [
      { name: 'repositories', url: daemon.url, ready: '#repos-table tr' },
      { name: 'search', url: `${daemon.url}/search?q=schedule`, ready: '#facets .facet-value' },
      { name: 'search-dark', url: `${daemon.url}/search?q=schedule&lang=C`, ready: '#facets .facet-value', scheme: 'dark' },
      { name: 'search-375', url: `${daemon.url}/search?q=schedule`, ready: '#results .file', width: 375 },
      {
        name: 'suggestions',
        url: daemon.url,
        ready: '#query',
        act: async (page) => {
          await page.click('#query');
          await page.keyboard.type('lang:');
          await page.waitForSelector('#suggestions li');
        },
      },
      { name: 'file', url: `${base}/blob/${LINUX_C_FILE}#L6800`, ready: '#L6800.selected' },
      { name: 'blame', url: `${base}/blob/${LINUX_C_FILE}?blame=1#L6800`, ready: '#L6800 .blame' },
      {
        name: 'go-to-file',
        url: `${base}/tree/kernel`,
        ready: '#listing li',
        act: async (page) => {
          await page.keyboard.press('t');
          await page.keyboard.type('cor');
          await page.waitForSelector('#file-finder-results li');
        },
      },
      { name: 'history', url: `${base}/commits/`, ready: '#commits li' },
      { name: 'commit', url: `${daemon.url}/browse/example.com/web@${hash}/-/commit`, ready: '#diff' },
    ];
  for (const shot of shots) {
    const page = await browser.newPage({ viewport: { width: shot.width ?? 1280, height: 800 }, colorScheme: shot.scheme ?? 'light' });
    await page.goto(shot.url);
    await page.waitForSelector(shot.ready);
    await shot.act?.(page);
    await page.screenshot({ path: path.join(SCREENSHOTS, `${shot.name}.jpg`), type: 'jpeg', quality: 80 });
    await page.close();
  }
  console.log(`screenshots in ${SCREENSHOTS}`);
}

const rows: string[] = [];
try {
  const file = (name: string, line: number) => () =>
    onScreenOnce(`${daemon.url}/browse/example.com/web@HEAD/-/blob/${name}#L${line}`, { id: `L${line}` }, { resource: '/api/source' });
  for (const [what, measure] of [
    ["100,000 lines of text at #L99000, from the source's arrival", file('long.txt', 99_000)],
    [`Linux's ${LINUX_C_FILE}, ${cLines.toLocaleString('en')} lines of C, highlighted, its last line`, file(LINUX_C_FILE, cLines)],
    [
      "a search's first result (`schedule`), from its stream's first part",
      () => onScreenOnce(`${daemon.url}/search?q=schedule`, { selector: '#results .file' }, { mark: FIRST_PART_MARK }),
    ],
  ] as const) {
    await measure(); // warm-up
    const times = [];
    for (let run = 0; run < RUNS; run++) times.push(await measure());
    rows.push(`| ${what} | ${percentile(times, 50).toFixed(0)} | ${Math.max(...times).toFixed(0)} |`);
  }
  await screenshots();
} finally {
  await browser.close();
  await daemon.stop();
  removeScratch();
  fs.rmSync(root, { recursive: true, force: true });
}
const bundle = fs.readFileSync(BUNDLE);
console.log(`bundle: ${(bundle.length / 1024).toFixed(0)} KiB, ${(gzipSync(bundle).length / 1024).toFixed(0)} KiB gzipped`);
console.log(`| view (${RUNS} loads) | ms to on screen, median | max |\n|---|---|---|\n${rows.join('\n')}`);
