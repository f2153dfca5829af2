/**
 * The home page: the repositories the caller can see, filtered by name or by connection and sorted by name or
 * by their last push, each with its code host, index state and, for a connection's, its last fetch; and the
 * connections with their sync state, which an owner can sync now (GET /api/repos, GET /api/connections,
 * POST /api/connections/{id}/sync).
 */
import { ApiFailure, getJson, postJson, type ConnectionListing, type RepositoryListing, type SessionState } from './api.js';
import { clear, h } from './dom.js';
import { treeUrl } from './links.js';

const PER_PAGE = 100;
/** How long typing in the filter waits before it asks again. */
const FILTER_DELAY_MS = 200;

/** `iso` as "5 min ago" or "in 5 min", with the date itself as its title. */
function relative(iso: string | undefined): HTMLElement | string {
  if (iso === undefined) return '—';
  const seconds = Math.round((Date.parse(iso) - Date.now()) / 1000);
  const size = Math.abs(seconds);
  const [amount, unit] = size < 60 ? [size, 's'] : size < 3600 ? [size / 60, 'min'] : size < 86_400 ? [size / 3600, 'h'] : [size / 86_400, 'd'];
  const text = `${Math.floor(amount)} ${unit}`;
  return h('time', { datetime: iso, title: iso }, seconds < 0 ? `${text} ago` : `in ${text}`);
}

function syncCell(repo: RepositoryListing): HTMLElement | string {
  const sync = repo.syncState;
  if (!sync) return '—';
  if (sync.error !== undefined) return h('span', { class: 'error', title: sync.error }, `fetch failed: ${sync.error}`);
  if (sync.goneSince !== undefined) return h('span', {}, 'gone from its host since ', relative(sync.goneSince));
  return h('span', {}, 'fetched ', relative(sync.fetchedAt));
}

function repositoryRow(repo: RepositoryListing): HTMLTableRowElement {
  return h(
    'tr',
    {},
    h('td', {}, h('a', { href: treeUrl(repo.repoName, 'HEAD', '') }, repo.repoDisplayName ?? repo.repoName)),
    h('td', {}, repo.codeHostType),
    h('td', {}, repo.defaultBranch),
    h('td', {}, h('span', { class: `state ${repo.indexState}` }, repo.indexState), ' ', relative(repo.indexedAt)),
    h('td', { class: 'sync' }, syncCell(repo)),
  );
}

/** Renders the page into `main`; `session` decides whether the connections can be synced from here. */
export async function renderRepositories(main: HTMLElement, session: SessionState | null): Promise<void> {
  const filter = h('input', { type: 'search', id: 'repo-filter', placeholder: 'Filter repositories by name', 'aria-label': 'Filter repositories by name' });
  const sort = h(
    'select',
    { id: 'repo-sort', 'aria-label': 'Sort repositories' },
    h('option', { value: 'name asc' }, 'Name'),
    h('option', { value: 'pushed desc' }, 'Recently pushed'),
  );
  const scope = h('p', { class: 'summary', id: 'repo-scope' });
  const body = h('tbody');
  const more = h('button', { type: 'button', id: 'more-repos', hidden: true }, 'Show more');
  const table = h(
    'table',
    { class: 'settings-table', id: 'repos-table' },
    h('thead', {}, h('tr', {}, ...['Repository', 'Code host', 'Branch', 'Index', 'Sync'].map((title) => h('th', {}, title)))),
    body,
  );
  const connectionsSection = h('section', { class: 'connections', id: 'connections', hidden: true });
  main.append(
    h(
      'section',
      { class: 'repos', id: 'repos' },
      h('h2', {}, 'Repositories'),
      h('div', { class: 'actions' }, filter, sort),
      scope,
      h('div', { class: 'table-scroll' }, table),
      more,
    ),
    connectionsSection,
  );

  let connectionId: number | undefined;
  let connections: ConnectionListing[] = [];
  let page = 1;
  /** Each listing asked for; an answer to an older one is dropped. */
  let asked = 0;
  const list = async (fromPage: number) => {
    const ask = ++asked;
    const [by, direction] = sort.value.split(' ') as [string, string];
    const params: Record<string, string> = { perPage: String(PER_PAGE), page: String(fromPage), sort: by, direction };
    if (filter.value.trim() !== '') params.query = filter.value.trim();
    if (connectionId !== undefined) params.connectionId = String(connectionId);
    const repos = await getJson<RepositoryListing[]>('/api/repos', params);
    if (ask !== asked) return;
    page = fromPage;
    if (fromPage === 1) clear(body);
    body.append(...repos.map(repositoryRow));
    more.hidden = repos.length < PER_PAGE;
    const connection = connections.find((candidate) => candidate.id === connectionId);
    clear(scope);
    if (body.children.length === 0) scope.append('No repository matches.');
    if (connection) {
      const all = h('button', { type: 'button', class: 'link', id: 'all-connections' }, 'show every connection');
      all.addEventListener('click', () => {
        connectionId = undefined;
        void list(1);
      });
      scope.append(` Connection ${connection.name} only: `, all);
    }
  };
  let typing: ReturnType<typeof setTimeout> | undefined;
  filter.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(() => void list(1), FILTER_DELAY_MS);
  });
  sort.addEventListener('change', () => void list(1));
  more.addEventListener('click', () => void list(page + 1));

  const showConnections = async () => {
    connections = (await getJson<ConnectionListing[]>('/api/connections')).filter((connection) => connection.syncState !== undefined);
    clear(connectionsSection);
    connectionsSection.hidden = connections.length === 0;
    if (connections.length === 0) return;
    const canSync = session?.user.role === 'owner';
    const rows = connections.map((connection) => {
      const state = connection.syncState!;
      const repos = h('button', { type: 'button', class: 'link', 'data-connection': String(connection.id) }, String(state.repoCount));
      repos.addEventListener('click', () => {
        connectionId = connection.id;
        void list(1);
      });
      const problem = state.error ?? (state.warnings.length > 0 ? `${state.warnings.length} left out: ${state.warnings[0]}` : '');
      const actions = h('td');
      if (canSync) {
        const sync = h('button', { type: 'button', class: 'sync-now' }, 'Sync now');
        sync.addEventListener('click', () => {
          sync.disabled = true;
          postJson(`/api/connections/${connection.id}/sync`, {})
            .then(() => (sync.textContent = 'Queued'))
            .catch((error: unknown) => {
              sync.textContent = error instanceof ApiFailure ? error.message : 'Failed';
            });
        });
        actions.append(sync);
      }
      return h(
        'tr',
        { 'data-name': connection.name },
        h('td', {}, connection.name),
        h('td', {}, connection.connectionType),
        h('td', {}, h('span', { class: `state ${state.status}` }, state.status)),
        h('td', {}, relative(state.lastSyncedAt)),
        h('td', {}, relative(state.nextSyncAt)),
        h('td', {}, repos, state.failedRepoCount > 0 ? h('span', { class: 'error' }, ` (${state.failedRepoCount} failed)`) : null),
        h('td', { class: state.error ? 'error' : '' }, problem),
        actions,
      );
    });
    const titles = ['Connection', 'Type', 'Status', 'Last sync', 'Next sync', 'Repositories', 'Problem', ''];
    connectionsSection.append(
      h('h2', {}, 'Connections'),
      h(
        'div',
        { class: 'table-scroll' },
        h(
          'table',
          { class: 'settings-table', id: 'connections-table' },
          h('thead', {}, h('tr', {}, ...titles.map((title) => h('th', {}, title)))),
          h('tbody', {}, ...rows),
        ),
      ),
    );
  };
  await Promise.all([list(1), showConnections()]);
}
