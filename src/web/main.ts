/**
 * trawl's web app: routes between the search page and the file views,
 * keeps the query in the URL, asks for an API key when the daemon needs one,
 * and is driven from the keyboard (`/` focuses the search, arrows and Enter
 * move through results).
 */
import { ApiFailure, getJson, setApiKey, type Repository } from './api.js';
import { clear, h } from './dom.js';
import { renderBlob, renderTree, showLines } from './file-page.js';
import { placeOf, searchUrl, treeUrl } from './links.js';
import { FIRST_PAGE, moveSelection, renderSearch } from './search-page.js';

const main = document.getElementById('main')!;
const form = document.getElementById('search-form') as HTMLFormElement;
const queryInput = document.getElementById('query') as HTMLInputElement;
const regexInput = document.getElementById('regex') as HTMLInputElement;
const caseInput = document.getElementById('case') as HTMLInputElement;
const auth = document.getElementById('auth')!;

function showError(error: unknown): void {
  if (error instanceof ApiFailure && error.status === 401) {
    document.getElementById('auth-message')!.textContent = error.message;
    auth.hidden = false;
    (document.getElementById('api-key') as HTMLInputElement).focus();
    return;
  }
  const message = error instanceof ApiFailure ? `${error.errorCode}: ${error.message}` : `Something went wrong: ${(error as Error).message}`;
  main.prepend(h('p', { class: 'error', id: 'error', role: 'alert' }, message));
}

async function homePage(): Promise<void> {
  const repos = await getJson<Repository[]>('/api/repos', { perPage: '100' });
  main.append(
    h(
      'section',
      { class: 'repos', id: 'repos' },
      h('h2', {}, 'Repositories'),
      h('ul', {}, ...repos.map((repo) => h('li', {}, h('a', { href: treeUrl(repo.repoName, 'HEAD', '') }, repo.repoDisplayName ?? repo.repoName), h('span', { class: `state ${repo.indexState}` }, repo.indexState)))),
    ),
  );
}

async function route(): Promise<void> {
  const place = placeOf(location.pathname);
  clear(main);
  try {
    if (place.kind === 'search') {
      const params = new URLSearchParams(location.search);
      queryInput.value = params.get('q') ?? '';
      regexInput.checked = params.get('regex') === '1';
      caseInput.checked = params.get('case') === '1';
      document.title = queryInput.value ? `${queryInput.value} — trawl` : 'trawl';
      if (queryInput.value) await renderSearch(main, { query: queryInput.value, regex: regexInput.checked, caseSensitive: caseInput.checked, matches: FIRST_PAGE }, showError);
      else await homePage();
    } else if (place.kind === 'blob') {
      document.title = `${place.path} — trawl`;
      await renderBlob(main, place.repo, place.branch, place.path);
    } else {
      const path = place.kind === 'tree' ? place.path : '';
      const branch = place.kind === 'tree' ? place.branch : 'HEAD';
      document.title = `${place.repo} — trawl`;
      await renderTree(main, place.repo, branch, path);
    }
  } catch (error) {
    showError(error);
  }
}

function navigate(url: string): void {
  history.pushState(null, '', url);
  void route();
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  navigate(searchUrl(queryInput.value, regexInput.checked, caseInput.checked));
});
for (const toggle of [regexInput, caseInput]) toggle.addEventListener('change', () => queryInput.value && form.requestSubmit());

document.getElementById('help-button')!.addEventListener('click', (event) => {
  const help = document.getElementById('help')!;
  help.hidden = !help.hidden;
  (event.currentTarget as HTMLElement).setAttribute('aria-expanded', String(!help.hidden));
});

document.getElementById('auth-form')!.addEventListener('submit', (event) => {
  event.preventDefault();
  setApiKey((document.getElementById('api-key') as HTMLInputElement).value.trim());
  auth.hidden = true;
  void route();
});

// Links inside the app navigate without reloading the page; #L anchors only move the selection.
document.addEventListener('click', (event) => {
  const link = (event.target as Element).closest('a');
  if (!link || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
  const url = new URL(link.href, location.href);
  if (url.origin !== location.origin) return;
  event.preventDefault();
  if (url.pathname === location.pathname && url.search === location.search) {
    history.pushState(null, '', url.hash || url.pathname);
    showLines();
  } else {
    navigate(url.pathname + url.search + url.hash);
  }
});
window.addEventListener('popstate', () => void route());
window.addEventListener('hashchange', showLines);

document.addEventListener('keydown', (event) => {
  const typing = event.target instanceof HTMLInputElement || event.target instanceof HTMLTextAreaElement;
  if (event.key === '/' && !typing) {
    event.preventDefault();
    queryInput.focus();
    queryInput.select();
  } else if ((event.key === 'ArrowDown' || event.key === 'ArrowUp') && (!typing || event.target === queryInput) && document.getElementById('results')) {
    event.preventDefault();
    moveSelection(event.key === 'ArrowDown' ? 1 : -1);
  }
});

void route();
