/**
 * The Settings area (/settings/<section>): a person's API keys, scoped
 * access tokens, sessions and password; for owners also the members, the
 * license, anonymous access and the audit log. Every section reads and
 * writes through the same HTTP API scripts use; every control is a native
 * form element (keyboard first), tables scroll on narrow screens.
 */
import { ApiFailure, deleteAt, getJson, postJson } from './api.js';
import type { ApiKeyInfo, AuditRecord, CreatedApiKey, InstanceSettings, LicenseInfo, Member, ScopedTokenInfo, SessionInfo, SessionState } from './api.js';
import { clear, copyButton, h } from './dom.js';

interface Section {
  title: string;
  ownersOnly?: boolean;
  /** `refresh` renders the section again, with `notice` above it. */
  render(body: HTMLElement, session: SessionState, refresh: (notice?: Node) => void): Promise<void>;
}

/** A form of labelled inputs; `submit` gets their values by name, and its failure is shown in the form. */
function form(
  id: string,
  fields: { name: string; label: string; type?: string; options?: string[]; required?: boolean }[],
  action: string,
  submit: (values: Record<string, string>) => Promise<void>,
): HTMLFormElement {
  const problem = h('p', { class: 'error', role: 'alert', hidden: true });
  const element = h(
    'form',
    { id, class: 'settings-form' },
    ...fields.map((field) =>
      h(
        'label',
        {},
        field.label,
        field.options
          ? h('select', { name: field.name }, ...field.options.map((option) => h('option', { value: option }, option)))
          : h('input', {
              name: field.name,
              type: field.type ?? 'text',
              required: field.required ?? true,
              autocomplete: field.type === 'password' ? 'new-password' : 'off',
            }),
      ),
    ),
    h('button', { type: 'submit' }, action),
    problem,
  );
  element.addEventListener('submit', (event) => {
    event.preventDefault();
    const values = Object.fromEntries([...new FormData(element).entries()].map(([name, value]) => [name, String(value)]));
    problem.hidden = true;
    submit(values).catch((error: unknown) => {
      problem.textContent = error instanceof ApiFailure ? error.message : String(error);
      problem.hidden = false;
    });
  });
  return element;
}

function table(id: string, headings: string[], rows: (Node | string)[][]): HTMLElement {
  if (rows.length === 0) return h('p', { id, class: 'summary' }, 'None yet.');
  return h(
    'div',
    { class: 'table-scroll' },
    h(
      'table',
      { id, class: 'settings-table' },
      h('thead', {}, h('tr', {}, ...headings.map((heading) => h('th', { scope: 'col' }, heading)))),
      h('tbody', {}, ...rows.map((row) => h('tr', {}, ...row.map((cell) => h('td', {}, cell))))),
    ),
  );
}

/** A button running `onClick`; with `confirmation`, only once the person confirms (destructive actions). */
function button(label: string, onClick: () => Promise<void>, confirmation?: string): HTMLButtonElement {
  const element = h('button', { type: 'button' }, label);
  element.addEventListener('click', () => {
    if (confirmation && !confirm(confirmation)) return;
    element.disabled = true;
    onClick().catch((error: unknown) => {
      element.disabled = false;
      element.after(h('span', { class: 'error', role: 'alert' }, error instanceof ApiFailure ? ` ${error.message}` : ` ${String(error)}`));
    });
  });
  return element;
}

const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');

const SECTIONS: Record<string, Section> = {
  'api-keys': {
    title: 'API keys',
    async render(body, session, refresh) {
      const keys = await getJson<ApiKeyInfo[]>('/api/admin/api_keys');
      body.append(
        form('create-key', [{ name: 'name', label: 'Name' }], 'Create API key', async ({ name }) => {
          const key = await postJson<CreatedApiKey>('/api/admin/api_keys', { name });
          // Shown once: the daemon keeps only its digest.
          refresh(
            h(
              'div',
              { id: 'created-key', role: 'status' },
              h('p', {}, `Your new key “${key.name}”: copy it now, it is not shown again.`),
              h('code', { id: 'new-key', class: 'secret', tabindex: '0' }, key.key),
              copyButton('Copy key', () => key.key, 'copy-key'),
            ),
          );
        }),
        table(
          'api-keys',
          ['Name', 'Created', 'Last used', ''],
          keys
            .filter((key) => key.userId === session.user.id)
            .map((key) => [
              key.name,
              when(key.createdAt),
              when(key.lastUsedAt),
              button(
                `Delete ${key.name}`,
                async () => (await deleteAt(`/api/admin/api_keys/${encodeURIComponent(key.id)}`), refresh()),
                `Delete the API key “${key.name}”? Whatever uses it stops working.`,
              ),
            ]),
        ),
      );
    },
  },
  tokens: {
    title: 'Access tokens',
    async render(body, _session, refresh) {
      const tokens = await getJson<ScopedTokenInfo[]>('/api/ee/scoped_access_tokens');
      const live = (token: ScopedTokenInfo) => !token.revokedAt && Date.parse(token.expiresAt) > Date.now();
      body.append(
        h('p', { class: 'summary' }, 'Scoped access tokens are created with an API key (POST /api/ee/scoped_access_token) and last one hour.'),
        table(
          'tokens',
          ['Repositories', 'Created', 'Expires', ''],
          tokens.map((token) => [
            token.repos.map((repo) => repo.name).join(', '),
            when(token.createdAt),
            token.revokedAt ? `revoked ${when(token.revokedAt)}` : when(token.expiresAt),
            live(token) ? button('Revoke', async () => (await deleteAt(`/api/ee/scoped_access_token/${encodeURIComponent(token.id)}`), refresh())) : '',
          ]),
        ),
      );
    },
  },
  sessions: {
    title: 'Sessions',
    async render(body, _session, refresh) {
      const sessions = await getJson<SessionInfo[]>('/api/auth/sessions');
      body.append(
        table(
          'sessions',
          ['Browser', 'Address', 'Signed in', 'Last seen', ''],
          sessions.map((session) => [
            session.userAgent || 'unknown',
            session.address,
            when(session.createdAt),
            when(session.lastSeenAt),
            session.current
              ? 'this browser'
              : button('Sign out', async () => (await deleteAt(`/api/auth/sessions/${encodeURIComponent(session.id)}`), refresh())),
          ]),
        ),
        sessions.length > 1 ? button('Sign out all other sessions', async () => (await deleteAt('/api/auth/sessions'), refresh())) : '',
      );
    },
  },
  password: {
    title: 'Password',
    async render(body) {
      const done = h('p', { id: 'password-changed', role: 'status' });
      body.append(
        form(
          'change-password',
          [
            { name: 'currentPassword', label: 'Current password', type: 'password', required: false },
            { name: 'password', label: 'New password (10 characters or more)', type: 'password' },
          ],
          'Change password',
          async ({ currentPassword, password }) => {
            done.textContent = (
              await postJson<{ message: string }>('/api/auth/password', { password, ...(currentPassword ? { currentPassword } : {}) })
            ).message;
          },
        ),
        done,
      );
    },
  },
  members: {
    title: 'Members',
    ownersOnly: true,
    async render(body, session, refresh) {
      const members = await getJson<Member[]>('/api/ee/users');
      body.append(
        table(
          'members',
          ['Email', 'Name', 'Role', 'Last active', ''],
          members.map((member) => {
            const other = member.role === 'OWNER' ? 'member' : 'owner';
            const actions = h(
              'span',
              { class: 'actions' },
              button(
                `Make ${member.email} ${other === 'owner' ? 'an owner' : 'a member'}`,
                async () => (await postJson('/api/ee/user/role', { userId: member.id, role: other }), refresh()),
              ),
              member.id === session.user.id
                ? ''
                : button(
                    `Remove ${member.email}`,
                    async () => (await deleteAt(`/api/ee/user?userId=${encodeURIComponent(member.id)}`), refresh()),
                    `Remove ${member.email}? Their keys, tokens and sessions end at once.`,
                  ),
            );
            return [
              member.email,
              member.name ?? '',
              member.id === session.user.id ? `${member.role.toLowerCase()} (you)` : member.role.toLowerCase(),
              when(member.lastActivityAt),
              actions,
            ];
          }),
        ),
        h('h3', {}, 'Add a member'),
        form(
          'add-member',
          [
            { name: 'email', label: 'Email', type: 'email' },
            { name: 'name', label: 'Name' },
            { name: 'role', label: 'Role', options: ['member', 'owner'] },
            { name: 'password', label: 'Password (10 characters or more)', type: 'password' },
          ],
          'Add member',
          async (values) => {
            await postJson('/api/ee/users', values);
            refresh();
          },
        ),
      );
    },
  },
  license: {
    title: 'License',
    ownersOnly: true,
    async render(body, _session, refresh) {
      const license = await getJson<LicenseInfo>('/api/admin/license');
      const state = license.installed
        ? `${license.active ? 'Active' : 'Not active'}: ${license.licensee ?? ''}, ${license.seatsUsed} of ${license.seats ?? '?'} seats, until ${when(license.expiresAt)}`
        : `No license installed (${license.seatsUsed} seat in use).`;
      body.append(
        h('p', { id: 'license-state' }, state),
        form(
          'install-license',
          [{ name: 'key', label: 'License key' }],
          'Install license',
          async ({ key }) => (await postJson('/api/admin/license', { key }), refresh()),
        ),
      );
    },
  },
  access: {
    title: 'Anonymous access',
    ownersOnly: true,
    async render(body, _session, refresh) {
      const settings = await getJson<InstanceSettings>('/api/admin/settings');
      body.append(
        h(
          'p',
          { id: 'anonymous-state' },
          settings.anonymousAccess ? 'Anyone may read public repositories without signing in.' : 'Reading needs a sign-in or a key.',
        ),
        button(
          settings.anonymousAccess ? 'Turn anonymous access off' : 'Turn anonymous access on',
          async () => (await postJson('/api/admin/settings', { anonymousAccess: !settings.anonymousAccess }), refresh()),
        ),
      );
    },
  },
  audit: {
    title: 'Audit log',
    ownersOnly: true,
    async render(body) {
      const params = new URLSearchParams(location.search);
      const page = Math.max(1, Number(params.get('page') ?? '1') || 1);
      const query: Record<string, string> = { page: String(page), perPage: '50' };
      for (const name of ['since', 'until']) if (params.get(name)) query[name] = params.get(name)!;
      const records = await getJson<AuditRecord[]>('/api/ee/audit', query);
      const filters = h(
        'form',
        { id: 'audit-filters', class: 'settings-form', method: 'get', action: '/settings/audit' },
        h('label', {}, 'Since', h('input', { name: 'since', type: 'date', value: params.get('since') ?? undefined })),
        h('label', {}, 'Until', h('input', { name: 'until', type: 'date', value: params.get('until') ?? undefined })),
        h('button', { type: 'submit' }, 'Filter'),
      );
      const link = (to: number, label: string) =>
        h('a', { href: `/settings/audit?${new URLSearchParams({ ...Object.fromEntries(params), page: String(to) })}` }, label);
      body.append(
        filters,
        table(
          'audit',
          ['When', 'Action', 'Actor', 'Target', 'Details'],
          records.map((record) => [
            when(record.timestamp),
            record.action,
            record.actorId || record.actorType,
            record.targetId ? `${record.targetType} ${record.targetId}` : '',
            JSON.stringify(record.metadata ?? {}),
          ]),
        ),
        h('nav', { class: 'pager' }, page > 1 ? link(page - 1, '← Newer') : '', records.length === 50 ? link(page + 1, 'Older →') : ''),
      );
    },
  },
};

/** Renders /settings/<section> for the signed-in `session`. */
export async function renderSettings(main: HTMLElement, section: string, session: SessionState): Promise<void> {
  const owner = session.user.role === 'owner';
  const visible = Object.entries(SECTIONS).filter(([, candidate]) => owner || !candidate.ownersOnly);
  const [name, current] = visible.find(([key]) => key === section) ?? visible[0]!;
  const body = h('section', { class: 'settings-body', id: `settings-${name}`, 'aria-labelledby': 'settings-title' });
  const refresh = (notice?: Node) => {
    clear(body);
    if (notice) body.append(notice);
    current
      .render(body, session, refresh)
      .catch((error: unknown) =>
        body.append(h('p', { class: 'error', role: 'alert' }, error instanceof ApiFailure ? `${error.errorCode}: ${error.message}` : String(error))),
      );
  };
  main.append(
    h(
      'div',
      { class: 'settings' },
      h(
        'nav',
        { class: 'settings-nav', 'aria-label': 'Settings' },
        h(
          'ul',
          {},
          ...visible.map(([key, candidate]) =>
            h('li', {}, h('a', { href: `/settings/${key}`, 'aria-current': key === name ? 'page' : undefined }, candidate.title)),
          ),
        ),
      ),
      h('div', {}, h('h2', { id: 'settings-title' }, current.title), body),
    ),
  );
  document.title = `${current.title} — Settings — trawl`;
  refresh();
}
