// The layering of ../shared/ARCHITECTURE.md ("Source layout", "Rules"), held by the linter: each folder of
// src/ lists the folders it may not import. A violation fails `npm run lint` and the architecture test.
import tseslint from 'typescript-eslint';

/** Folders of src/ and those each one must not import. */
const FORBIDDEN = {
  query: ['server', 'worker', 'auth', 'search', 'indexer', 'git', 'cli', 'obs'],
  index: ['server', 'worker', 'auth', 'search', 'indexer', 'git', 'cli', 'query', 'obs', 'config', 'api'],
  config: ['server', 'worker', 'auth', 'search', 'indexer', 'git', 'cli', 'query', 'obs', 'api'],
  api: ['server', 'worker', 'auth', 'search', 'indexer', 'git', 'cli', 'query', 'obs'],
  obs: ['server', 'worker', 'auth', 'search', 'indexer', 'git', 'cli', 'query', 'index', 'api'],
  git: ['server', 'worker', 'auth', 'search', 'indexer', 'cli', 'query'],
  indexer: ['server', 'worker', 'auth', 'search', 'cli', 'query'],
  auth: ['server', 'worker', 'search', 'indexer', 'git', 'cli', 'query'],
  search: ['server', 'auth', 'indexer', 'git', 'cli'],
  worker: ['server', 'auth', 'indexer', 'git', 'cli'],
  server: ['cli', 'worker'],
};

const layer = (folder, forbidden) => ({
  files: [`src/${folder}/**/*.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            group: forbidden.flatMap((name) => [`../${name}/*`, `../../${name}/*`]),
            message: `src/${folder}/ must not import that layer (../shared/ARCHITECTURE.md; eslint.config.js lists what each folder may not import)`,
          },
          // The search pool sends tasks to workers through the thread protocol only; the worker entries import search/, not the reverse.
          ...(folder === 'search' ? [{ regex: '^\\.\\./worker/(?!protocol\\.js$)', message: 'src/search/ reaches workers through worker/protocol.ts only' }] : []),
          // The front end never touches shard bytes: the pool and the workers do.
          ...(folder === 'server' ? [{ regex: '^\\.\\./\\.\\./index/(shard-reader|shard-writer)\\.js$|^\\.\\./index/(shard-reader|shard-writer)\\.js$', message: 'src/server/ never touches shard bytes' }] : []),
        ],
      },
    ],
  },
});

export default [
  { ignores: ['dist/**', 'node_modules/**', 'native/build/**'] },
  { files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } },
  ...Object.entries(FORBIDDEN).map(([folder, forbidden]) => layer(folder, forbidden)),
  {
    // The browser app talks to the daemon over HTTP only; it shares the API's types and the link builder at build time.
    files: ['src/web/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ regex: '^\\.\\./(?!api/types\\.js$|search/links\\.js$)', message: 'src/web/ uses the daemon through its HTTP API only' }] }] },
  },
];
