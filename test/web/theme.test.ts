import t from 'tap';
import { launchBrowser } from '../helpers/browser.js';
import { startDaemon } from '../helpers/daemon.js';
import { fixtureRepository } from '../server/fixture.js';

const DARK = 'rgb(13, 17, 23)';
const LIGHT = 'rgb(255, 255, 255)';

t.test('light, dark and the system theme: followed, chosen, kept across reloads', async (t) => {
  const repo = fixtureRepository(t);
  const daemon = await startDaemon(t, { repos: [repo.config], auth: { anonymousAccess: true } });
  const browser = await launchBrowser(t);
  const background = () => page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
  const page = await browser.newPage({ colorScheme: 'dark' });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));

  await page.goto(`${daemon.url}/search?q=parse_expression`);
  await page.waitForSelector('#results mark');
  t.equal(await background(), DARK, 'a dark system gets the dark theme');
  t.equal(await page.inputValue('#theme'), 'system');
  const [text, behind] = await page.$eval('#results mark', (mark) => [getComputedStyle(mark).color, getComputedStyle(mark).backgroundColor]);
  t.ok(contrast(text!, behind!) >= 4.5, `marked matches stay legible on dark (contrast ${contrast(text!, behind!).toFixed(1)}, WCAG AA asks 4.5)`);

  await page.selectOption('#theme', 'light');
  t.equal(await background(), LIGHT, 'choosing light overrides the system');
  await page.reload();
  await page.waitForSelector('#results mark');
  t.equal(await background(), LIGHT, 'the choice is kept across a reload');
  t.equal(await page.inputValue('#theme'), 'light');

  await page.selectOption('#theme', 'system');
  t.equal(await background(), DARK, 'back to the system');
  await page.emulateMedia({ colorScheme: 'light' });
  t.equal(await background(), LIGHT, 'which it follows as it changes');
  await page.selectOption('#theme', 'dark');
  t.equal(await background(), DARK, 'dark chosen on a light system');
  t.same(errors, [], 'no script error');
});

/** The WCAG contrast ratio of two `rgb(r, g, b)` colours. */
function contrast(one: string, two: string): number {
  const luminance = (colour: string) => {
    const [r, g, b] = colour
      .match(/\d+(\.\d+)?/g)!
      .slice(0, 3)
      .map((part) => {
        const value = Number(part) / 255;
        return value <= 0.03928 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
      });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
  };
  const [light, dark] = [luminance(one), luminance(two)].sort((a, b) => b - a);
  return (light! + 0.05) / (dark! + 0.05);
}
