/**
 * /oauth/authorize: an MCP client asks to act as the signed-in person
 * (OAuth 2.1, docs/oauth.md). The page shows who asks and where the answer
 * goes, and sends the browser back to the client with the person's answer.
 */
import { ApiFailure, getJson, postJson, type SessionState } from './api.js';
import { h } from './dom.js';

interface AuthorizationRequest {
  clientName: string;
  redirectUri: string;
  registeredAt: string;
}

export async function renderConsent(main: HTMLElement, session: SessionState): Promise<void> {
  document.title = 'Authorize an application — trawl';
  const params = Object.fromEntries(new URLSearchParams(location.search));
  const request = await getJson<AuthorizationRequest>('/api/oauth/authorization', params);
  const problem = h('p', { class: 'error', role: 'alert', hidden: true });
  const answer = (approve: boolean) => () => {
    postJson<{ redirect: string }>('/api/oauth/authorization', { params, approve })
      .then(({ redirect }) => location.assign(redirect))
      .catch((error: unknown) => {
        problem.textContent = error instanceof ApiFailure ? error.message : String(error);
        problem.hidden = false;
      });
  };
  const allow = h('button', { type: 'button', id: 'allow' }, 'Allow');
  const deny = h('button', { type: 'button', id: 'deny' }, 'Deny');
  allow.addEventListener('click', answer(true));
  deny.addEventListener('click', answer(false));
  main.append(
    h(
      'section',
      { class: 'consent', id: 'consent', 'aria-labelledby': 'consent-title' },
      h('h2', { id: 'consent-title' }, `An application asks to use trawl as ${session.user.email}`),
      h(
        'dl',
        { class: 'summary' },
        h('dt', {}, 'Your answer goes to'),
        h('dd', { id: 'consent-origin' }, new URL(request.redirectUri).origin),
        h('dt', {}, 'It calls itself'),
        h('dd', {}, h('bdi', { id: 'consent-client-name' }, request.clientName), ' — the name it gave itself when it registered; trawl has not checked it'),
        h('dt', {}, 'Registered'),
        h('dd', {}, new Date(request.registeredAt).toLocaleString()),
      ),
      h(
        'p',
        {},
        'Allow only if you started this from an application you trust. It will search code and read the files and history you can see, through trawl’s MCP server and API, until you sign it out or it stays unused for 30 days. It cannot change anything or create keys.',
      ),
      h('p', { class: 'actions' }, allow, deny),
      problem,
    ),
  );
  allow.focus();
}
