/**
 * trawl's web app: routes between the search page, the file views, signing
 * in and the Settings area; keeps the query in the URL, asks for a sign-in
 * (or an API key) when the daemon needs one, and is driven from the keyboard
 * (`/` focuses the search, arrows and Enter move through results).
 */
import { ApiFailure, apiKey, getJson, postJson, setApiKey, setCsrfToken, type SessionState } from './api.js';
import { clear, h } from './dom.js';
import { showLines } from './code-view.js';
import { openFileFinder } from './file-finder.js';
import { renderBlob, renderTree } from './file-page.js';
import { renderCommit, renderHistory } from './history-page.js';
import { placeOf, searchUrl } from './links.js';
import { attachQueryBox, rememberQuery } from './query-box.js';
import { FIRST_PAGE, moveSelection, renderSearch } from './search-page.js';
import { renderConsent } from './consent-page.js';
import { renderRepositories } from './repos-page.js';
import { renderSettings } from './settings-page.js';
import { setUpTheme } from './theme.js';

const main = document.getElementById('main')!;
const form = document.getElementById('search-form') as HTMLFormElement;
const queryInput = document.getElementById('query') as HTMLInputElement;
const setQuery = attachQueryBox(queryInput);
const regexInput = document.getElementById('regex') as HTMLInputElement;
const caseInput = document.getElementById('case') as HTMLInputElement;
const auth = document.getElementById('auth')!;
const account = document.getElementById('account')!;
setUpTheme(document.getElementById('theme') as HTMLSelectElement);

/** The signed-in session, when this browser has one (and uses no API key). */
let session: SessionState | null = null;

interface Providers {
  password: boolean;
  oidc: { name: string; start: string } | null;
}

/** The ways to sign in, asked once a page. */
let providers: Providers | null = null;

async function loadSession(): Promise<void> {
  providers ??= await getJson<Providers>('/api/auth/providers');
  session = null;
  if (!apiKey()) {
    try {
      session = await getJson<SessionState>('/api/auth/session');
    } catch (error) {
      if (!(error instanceof ApiFailure)) throw error;
    }
  }
  setCsrfToken(session?.csrfToken ?? null);
  showAccount();
}

function showAccount(): void {
  clear(account);
  if (!session) {
    // No member has a password and there is no single sign-on (the zero-config default): there is no one to sign in as.
    if (providers?.password || providers?.oidc)
      account.append(h('a', { href: `/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`, id: 'sign-in-link' }, 'Sign in'));
    return;
  }
  const signOut = h('button', { type: 'button', id: 'sign-out' }, 'Sign out');
  signOut.addEventListener('click', () => {
    postJson('/api/auth/sign_out', {})
      .then(loadSession)
      .then(() => navigate('/sign-in'))
      .catch(showError);
  });
  account.append(h('span', { id: 'signed-in-as' }, session.user.email), h('a', { href: '/settings', id: 'settings-link' }, 'Settings'), signOut);
}

/** A local path to go to after signing in (never another site's). */
function nextPath(): string {
  const next = new URLSearchParams(location.search).get('next') ?? '/';
  return next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : '/';
}

/** What the sign-in page says for each reason a single sign-on came back refused (never the provider's own text). */
const SINGLE_SIGN_ON_FAILURES: Record<string, string> = {
  provider: 'The identity provider cannot be reached. Try again later, or ask an owner.',
  flow: 'That sign-in did not complete (it expired, was used already, or was not started here). Try again.',
  unverified_email: 'The identity provider did not confirm an email address for you.',
  domain: 'Your email domain may not sign in here.',
  not_member: 'You are not a member yet: ask an owner to add you.',
  no_seat: 'Every seat is taken: ask an owner.',
  identity: 'This member signs in with another account of the identity provider.',
};

async function renderSignIn(): Promise<void> {
  document.title = 'Sign in — trawl';
  const reason = new URLSearchParams(location.search).get('error');
  const problem = h(
    'p',
    { class: 'error', role: 'alert', id: 'sign-in-error', hidden: reason === null },
    reason === null ? '' : (SINGLE_SIGN_ON_FAILURES[reason] ?? 'The sign-in failed.'),
  );
  const signInForm = h(
    'form',
    { id: 'sign-in', class: 'settings-form sign-in' },
    h('h2', {}, 'Sign in'),
    h('label', {}, 'Email', h('input', { name: 'email', type: 'email', autocomplete: 'username', required: true })),
    h('label', {}, 'Password', h('input', { name: 'password', type: 'password', autocomplete: 'current-password', required: true })),
    h('button', { type: 'submit' }, 'Sign in'),
    problem,
  );
  signInForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const values = new FormData(signInForm);
    postJson<SessionState>('/api/auth/sign_in', { email: String(values.get('email')), password: String(values.get('password')) })
      .then(async () => {
        await loadSession();
        navigate(nextPath());
      })
      .catch((error: unknown) => {
        problem.textContent = error instanceof ApiFailure ? error.message : String(error);
        problem.hidden = false;
      });
  });
  main.append(signInForm);
  // Focused as soon as the form is there, not after the providers answer: typing may start at once.
  (signInForm.querySelector('input') as HTMLInputElement).focus();
  providers = await getJson<Providers>('/api/auth/providers');
  if (providers.oidc) {
    const start = `${providers.oidc.start}?${new URLSearchParams({ next: nextPath() })}`;
    signInForm.insertBefore(
      h('p', {}, h('a', { href: start, id: 'single-sign-on', class: 'button', 'data-external': true }, `Sign in with ${providers.oidc.name}`)),
      signInForm.children[1]!,
    );
    signInForm.insertBefore(h('p', { class: 'summary' }, 'or with your email and password:'), signInForm.children[2]!);
  }
}

function showError(error: unknown): void {
  if (error instanceof ApiFailure && error.status === 401) {
    document.getElementById('auth-message')!.textContent = `${error.message}.`;
    (document.getElementById('auth-sign-in') as HTMLAnchorElement).href = `/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`;
    auth.hidden = false;
    (document.getElementById('api-key') as HTMLInputElement).focus();
    return;
  }
  const message = error instanceof ApiFailure ? `${error.errorCode}: ${error.message}` : `Something went wrong: ${(error as Error).message}`;
  main.prepend(h('p', { class: 'error', id: 'error', role: 'alert' }, message));
}

async function route(): Promise<void> {
  const place = placeOf(location.pathname);
  clear(main);
  auth.hidden = true;
  try {
    if (location.pathname === '/sign-in') {
      await renderSignIn();
    } else if (location.pathname === '/settings' || location.pathname.startsWith('/settings/') || location.pathname === '/oauth/authorize') {
      if (!session) {
        navigate(`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`);
        return;
      }
      if (location.pathname === '/oauth/authorize') await renderConsent(main, session);
      else await renderSettings(main, location.pathname.slice('/settings/'.length), session);
    } else if (place.kind === 'search') {
      const params = new URLSearchParams(location.search);
      setQuery(params.get('q') ?? '');
      regexInput.checked = params.get('regex') === '1';
      caseInput.checked = params.get('case') === '1';
      document.title = queryInput.value ? `${queryInput.value} — trawl` : 'trawl';
      if (queryInput.value)
        await renderSearch(main, { query: queryInput.value, regex: regexInput.checked, caseSensitive: caseInput.checked, matches: FIRST_PAGE }, showError);
      else await renderRepositories(main, session);
    } else if (place.kind === 'unknown') {
      document.title = 'Page not found — trawl';
      main.append(
        h(
          'section',
          { class: 'not-found', id: 'not-found' },
          h('h2', {}, 'Page not found'),
          h('p', {}, `trawl has no page at ${location.pathname}. Search above, or go to `, h('a', { href: '/' }, 'the repositories'), '.'),
        ),
      );
    } else if (place.kind === 'blob') {
      document.title = `${place.path} — trawl`;
      await renderBlob(main, place.repo, place.branch, place.path);
      finderOfUrl(place.repo, place.branch);
    } else if (place.kind === 'commits') {
      document.title = `History of ${place.path || place.repo} — trawl`;
      await renderHistory(main, place.repo, place.branch, place.path);
    } else if (place.kind === 'commit') {
      document.title = `${place.branch.slice(0, 8)} — ${place.repo} — trawl`;
      await renderCommit(main, place.repo, place.branch);
    } else {
      const path = place.kind === 'tree' ? place.path : '';
      const branch = place.kind === 'tree' ? place.branch : 'HEAD';
      document.title = `${place.repo} — trawl`;
      await renderTree(main, place.repo, branch, path);
      finderOfUrl(place.repo, branch);
    }
  } catch (error) {
    showError(error);
  }
}

/** A repository's view whose URL has `find=` (the file finder was open on it) opens the finder again. */
function finderOfUrl(repo: string, branch: string): void {
  const typed = new URLSearchParams(location.search).get('find');
  if (typed !== null) openFileFinder(repo, branch, typed);
}

function navigate(url: string): void {
  history.pushState(null, '', url);
  void loadSession().then(route, showError);
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  if (queryInput.value.trim() !== '') rememberQuery(queryInput.value);
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
  void loadSession().then(route);
});

// Links inside the app navigate without reloading the page; #L anchors only move the selection.
document.addEventListener('click', (event) => {
  const link = (event.target as Element).closest('a');
  if (!link || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
  const url = new URL(link.href, location.href);
  // Links to the daemon's own endpoints (single sign-on) leave the app.
  if (url.origin !== location.origin || link.hasAttribute('data-external')) return;
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
  } else if (event.key === '?' && !typing) {
    document.getElementById('help-button')!.click();
  } else if (event.key === 't' && !typing && !event.ctrlKey && !event.metaKey && !event.altKey) {
    const place = placeOf(location.pathname);
    if (place.kind === 'repository' || place.kind === 'blob' || place.kind === 'tree') {
      event.preventDefault();
      openFileFinder(place.repo, place.kind === 'repository' ? 'HEAD' : place.branch);
    }
  } else if ((event.key === 'ArrowDown' || event.key === 'ArrowUp') && (!typing || event.target === queryInput) && document.getElementById('results')) {
    event.preventDefault();
    moveSelection(event.key === 'ArrowDown' ? 1 : -1);
  }
});

void loadSession().then(route, showError);
