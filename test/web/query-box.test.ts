import t from 'tap';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { launchBrowser, watchedPage } from '../helpers/browser.js';
import { startDaemon } from '../helpers/daemon.js';
import { makeRepository } from '../helpers/git.js';
import { tempDir } from '../helpers/tmp.js';
import { fixtureRepository } from '../server/fixture.js';
import { queryParts } from '../../src/web/query-box.js';
import { queryValue } from '../../src/web/query-text.js';

const labels = (page: Page) => page.$$eval('#suggestions li .suggestion-label', (items) => items.map((item) => item.textContent));

t.test("the query's parts to colour", async (t) => {
  t.same(queryParts('repo:^a$ (foo or -file:test) "x y" case:yes'), [
    { text: 'repo:', kind: 'filter' },
    { text: '^a$ ' },
    { text: '(', kind: 'operator' },
    { text: 'foo ' },
    { text: 'or', kind: 'operator' },
    { text: ' ' },
    { text: '-', kind: 'negation' },
    { text: 'file:', kind: 'filter' },
    { text: 'test' },
    { text: ')', kind: 'operator' },
    { text: ' ' },
    { text: '"x y"', kind: 'phrase' },
    { text: ' ' },
    { text: 'case:', kind: 'filter' },
    { text: 'yes' },
  ]);
  t.same(
    queryParts('a-b http://x.org/c or'),
    [{ text: 'a-b ' }, { text: 'http:', kind: 'filter' }, { text: '//x.org/c ' }, { text: 'or', kind: 'operator' }],
    'a hyphen inside a word is no negation',
  );
  t.same(queryParts('').length, 0);
});

t.test('a suggested value is quoted when the query language would split it', async (t) => {
  t.equal(queryValue('^example\\.com/a$'), '^example\\.com/a$', 'as it is');
  t.equal(queryValue('docs/my notes\\.md'), '"docs/my notes\\\\.md"', 'a space: quoted, its backslashes escaped');
  t.equal(queryValue('say"hi'), '"say\\"hi"', 'a quote: quoted and escaped');
  t.same(
    queryParts(`file:${queryValue('a b')}`),
    [
      { text: 'file:', kind: 'filter' },
      { text: '"a b"', kind: 'phrase' },
    ],
    'one value to the query box too',
  );
});

t.test('the query box suggests filters, their values from the index, and recent queries', async (t) => {
  const repo = fixtureRepository(t);
  const other = path.join(tempDir(t, 'trawl-other-'), 'other');
  makeRepository(other, { 'main.c': 'int parse_expression(void) { return 1; }\n' });
  const daemon = await startDaemon(t, { repos: [repo.config, { name: 'example.com/other', path: other, public: true }], auth: { anonymousAccess: true } });
  const browser = await launchBrowser(t);
  const { page, errors } = await watchedPage(browser);
  await page.goto(daemon.url);
  await page.waitForSelector('#query');

  await page.click('#query');
  await page.keyboard.type('re');
  await page.waitForSelector('#suggestions li');
  t.same(await labels(page), ['repo:', 'rev:'], 'the filters that start so');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  t.equal(await page.inputValue('#query'), 'repo:', 'taken');
  await page.waitForSelector('#suggestions li:has-text("example.com/other")');
  await page.keyboard.type('wid');
  await page.waitForFunction(() => document.querySelectorAll('#suggestions li').length === 1);
  t.same(await labels(page), ['example.com/acme/widgets'], 'repositories from the index, as typed');
  await page.keyboard.press('Tab');
  t.equal(await page.inputValue('#query'), 'repo:^example\\.com/acme/widgets$ ', 'its name as an exact pattern');
  t.same(await page.$$eval('.query-colours .q-filter', (parts) => parts.map((part) => part.textContent)), ['repo:'], 'the filter is coloured');
  t.equal(await page.textContent('.query-colours'), await page.inputValue('#query'), 'under the same text');
  await page.keyboard.type('parse_expression');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#results .file');
  t.same(
    new Set(await page.$$eval('#results .repo', (items) => items.map((item) => item.textContent))),
    new Set(['example.com/acme/widgets']),
    'the filter chosen applies',
  );

  await page.fill('#query', '');
  await page.keyboard.type('lang:Ty');
  await page.waitForSelector('#suggestions li:has-text("TypeScript")');
  t.same(await labels(page), ['TypeScript'], 'languages');
  await page.fill('#query', '');
  await page.keyboard.type('file:lexer');
  await page.waitForSelector('#suggestions li:has-text("src/lexer.c")');
  t.same(await labels(page), ['src/lexer.c'], 'paths from the index');
  await page.fill('#query', '');
  await page.keyboard.type('sym:parse_ex');
  await page.waitForSelector('#suggestions li:has-text("parse_expression")');
  t.same(await labels(page), ['parse_expression'], 'symbols from the index, once');
  await page.keyboard.press('Escape');
  t.ok(await page.isHidden('#suggestions'), 'Escape closes them');

  await page.goto(daemon.url);
  await page.click('#query');
  await page.waitForSelector('#suggestions li');
  t.same(await labels(page), ['repo:^example\\.com/acme/widgets$ parse_expression'], 'an empty box offers the last queries searched');
  t.same(errors, [], 'no script error');
});
