/**
 * The code hosts a repository can live on (spec: Repository info `codeHostType`), in a fixed order: a
 * connection's id is its type's place here. Kept free of Node types: the web app imports it too.
 */
export const CODE_HOST_TYPES = ['github', 'gitlab', 'gitea', 'gerrit', 'bitbucketServer', 'bitbucketCloud', 'genericGitHost', 'azuredevops'] as const;

export type CodeHostType = (typeof CODE_HOST_TYPES)[number];

/** The connection types of the configuration and of `GET /api/connections` (Sourcebot's names). */
export const CONNECTION_TYPES = ['github', 'gitlab', 'gitea', 'gerrit', 'bitbucket', 'azuredevops', 'git'] as const;

export type ConnectionType = (typeof CONNECTION_TYPES)[number];
