/** Bounds of what the auth layer accepts; the request schemas (api/auth-schemas.ts) take them from here. */
export const AUTH_LIMITS = { reposPerToken: 100, passwordMinCharacters: 10, passwordMaxBytes: 1024 } as const;
