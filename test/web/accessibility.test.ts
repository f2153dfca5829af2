import t from 'tap';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import type { Page } from 'playwright-core';
import { launchBrowser } from '../helpers/browser.js';
import { startDaemon } from '../helpers/daemon.js';
import { git, writeFiles } from '../helpers/git.js';
import { fixtureRepository } from '../server/fixture.js';

const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** axe-core's WCAG 2 A and AA violations on the page as it is, the serious and critical ones. */
async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated through the debugging protocol: the page's CSP rightly refuses an inline script.
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: Violation[] }> } }).axe;
    return (await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })).violations;
  });
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id} (${violation.help}): ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
}

t.test('the main views have no serious accessibility violations, light and dark', async (t) => {
  const repo = fixtureRepository(t);
  // A commit far newer than the fixture's: blame then shows both ends of its age colours.
  writeFiles(repo.root, { 'docs/guide.md': '# Guide\n\nCall parse_expression to parse. Then next_token.\nA later line.\n' });
  git(repo.root, 'add', '-A');
  git(repo.root, 'commit', '-q', '--date=2030-01-01T00:00:00Z', '-m', 'A later line');
  const daemon = await startDaemon(t, { repos: [repo.config], auth: { anonymousAccess: true }, index: { ctagsCommand: '' } });
  const browser = await launchBrowser(t);
  const base = `${daemon.url}/browse/example.com/acme/widgets@HEAD/-`;
  const views: [string, string, string][] = [
    ['the repositories', daemon.url, '#repos-table tr'],
    ['search results and filters', `${daemon.url}/search?q=parse_expression`, '#facets .facet-value'],
    ['a file', `${base}/blob/src/parser.c?hl=30-46#L3`, '#latest-commit .commit-subject'],
    ['a blame', `${base}/blob/docs/guide.md?blame=1`, '#L4 .blame.heat-4 a'],
    ['a directory', `${base}/tree/src`, '#listing li'],
    ['the history', `${base}/commits/`, '#commits li'],
    ['a commit', `${daemon.url}/browse/example.com/acme/widgets@${repo.second}/-/commit`, '#diff'],
  ];
  for (const scheme of ['light', 'dark'] as const) {
    const page = await browser.newPage({ colorScheme: scheme });
    for (const [what, url, ready] of views) {
      await page.goto(url);
      await page.waitForSelector(ready);
      t.same(await seriousViolations(page), [], `${what}, ${scheme}`);
    }
    await page.close();
  }
});
