/**
 * What `trawl admin` does, two ways: against a running daemon over HTTP with
 * an owner's API key, or offline on the data directory (holding the state
 * log's lock, which a running daemon has: then it says so).
 */
import type { AuditAction } from '../auth/audit-actions.js';
import { readManifest } from '../index/manifest.js';
import type { Config } from '../config/config.js';
import type { Logger } from '../obs/logger.js';
import { apiKeyView, userView } from '../auth/views.js';
import { AuthError } from '../auth/errors.js';
import { LicenseError } from '../auth/license.js';
import { openAuth } from '../auth/open.js';

/** A user and a key as both backends answer them: the API's views (the online backend reads them over HTTP). */
export type UserView = ReturnType<typeof userView>;
export type KeyView = ReturnType<typeof apiKeyView>;

export interface LicenseView {
  installed: boolean;
  active: boolean;
  licensee?: string;
  seats?: number;
  seatsUsed: number;
  expiresAt?: string;
}

export interface AdminBackend {
  listUsers(): Promise<UserView[]>;
  /** With a password, the member can sign in to the web app. */
  addUser(fields: { name: string; email: string; role: 'owner' | 'member'; password?: string }): Promise<UserView>;
  removeUser(userId: string): Promise<string>;
  listKeys(userId: string | undefined): Promise<KeyView[]>;
  createKey(name: string, userId: string | undefined): Promise<KeyView & { key: string }>;
  deleteKey(keyId: string): Promise<void>;
  setGrant(userId: string, repo: string, granted: boolean): Promise<void>;
  setAnonymousAccess(enabled: boolean): Promise<void>;
  installLicense(key: string): Promise<LicenseView>;
  showLicense(): Promise<LicenseView>;
  close(): Promise<void>;
}

/** A failure to show the administrator (exit status 1). */
export class AdminError extends Error {}

/** Calls the daemon at `url` with `apiKey`; its error objects become AdminErrors carrying their message. */
export function onlineAdmin(url: string, apiKey: string): AdminBackend {
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    let response: Response;
    try {
      response = await fetch(url.replace(/\/+$/, '') + path, {
        method,
        headers: { Authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      throw new AdminError(`cannot reach ${url}: ${(error as Error).cause ?? (error as Error).message}`);
    }
    const text = await response.text();
    const parsed = text === '' ? undefined : (JSON.parse(text) as unknown);
    if (!response.ok)
      throw new AdminError(`${response.status} ${(parsed as { errorCode?: string })?.errorCode ?? ''}: ${(parsed as { message?: string })?.message ?? text}`);
    return parsed as T;
  };
  const query = (params: Record<string, string | undefined>) => {
    const defined = Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined);
    return defined.length === 0 ? '' : `?${new URLSearchParams(defined).toString()}`;
  };
  return {
    listUsers: () => call('GET', '/api/ee/users'),
    addUser: (fields) => call('POST', '/api/ee/users', fields),
    removeUser: async (userId) => (await call<{ message: string }>('DELETE', `/api/ee/user${query({ userId })}`)).message,
    listKeys: (userId) => call('GET', `/api/admin/api_keys${query({ userId })}`),
    createKey: (name, userId) => call('POST', '/api/admin/api_keys', { name, ...(userId === undefined ? {} : { userId }) }),
    deleteKey: (keyId) => call('DELETE', `/api/admin/api_keys/${encodeURIComponent(keyId)}`),
    setGrant: (userId, repo, granted) =>
      granted ? call('POST', '/api/admin/grants', { userId, repo }) : call('DELETE', `/api/admin/grants${query({ userId, repo })}`),
    setAnonymousAccess: (anonymousAccess) => call('POST', '/api/admin/settings', { anonymousAccess }),
    installLicense: (key) => call('POST', '/api/admin/license', { key }),
    showLicense: () => call('GET', '/api/admin/license'),
    close: async () => undefined,
  };
}

/** Works on `dataDir` directly; audit records name the actor `system`. */
export async function offlineAdmin(config: Pick<Config, 'dataDir' | 'auth' | 'cluster'>, logger: Logger): Promise<AdminBackend> {
  const { store, audit, close } = await openAuth(config, logger);
  const record = (action: AuditAction, targetId: string | null, targetType: string | null, metadata: Record<string, unknown> = {}) =>
    audit.record({ action, actorId: null, actorType: 'system', targetId, targetType, metadata });
  const failing = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      if (error instanceof AuthError || error instanceof LicenseError) throw new AdminError(error.message);
      throw error;
    }
  };
  return {
    listUsers: async () => [...store.state.users.values()].map((user) => userView(user)),
    addUser: ({ password, ...fields }) =>
      failing(async () => {
        const user = await store.addUser(fields);
        if (password !== undefined) await store.setPassword(user.id, password);
        record('user.added', user.id, 'user', { email: user.email, role: user.role, password: password !== undefined });
        return userView(user);
      }),
    removeUser: (userId) =>
      failing(async () => {
        const { email } = store.member(userId);
        await store.removeUser(userId);
        record('user.removed', userId, 'user', { email });
        return `${email} was removed; their keys and tokens are revoked`;
      }),
    listKeys: async (userId) =>
      [...store.state.apiKeys.values()].filter((key) => userId === undefined || userId === '*' || key.userId === userId).map(apiKeyView),
    createKey: (name, userId) =>
      failing(async () => {
        if (userId === undefined) throw new AdminError('offline, say whose key it is: --user USER_ID');
        const { key, secret } = await store.createApiKey(userId, name);
        record('apikey.created', key.id, 'apiKey', { userId, name });
        return { ...apiKeyView(key), key: secret };
      }),
    deleteKey: (keyId) =>
      failing(async () => {
        if (!(await store.deleteApiKey(keyId))) throw new AdminError(`no API key ${JSON.stringify(keyId)}`);
        record('apikey.deleted', keyId, 'apiKey');
      }),
    setGrant: (userId, repo, granted) =>
      failing(async () => {
        const entry = readManifest(config.dataDir).repositories[repo];
        if (!entry) throw new AdminError(`repository ${JSON.stringify(repo)} is not indexed yet (run trawl index, or the daemon, first)`);
        await store.setGrant(userId, entry.id, granted);
        record(granted ? 'grant.added' : 'grant.removed', userId, 'user', { repo });
      }),
    setAnonymousAccess: (enabled) =>
      failing(async () => {
        await store.setAnonymousAccess(enabled);
        record('settings.changed', null, null, { anonymousAccess: enabled });
      }),
    installLicense: (key) =>
      failing(async () => {
        const installed = await store.installLicense(key);
        record('license.installed', null, null, { licensee: installed.licensee, seats: installed.seats, expiresAt: installed.expiresAt });
        return store.licenseStatus();
      }),
    showLicense: async () => store.licenseStatus(),
    close,
  };
}
