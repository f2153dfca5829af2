// The layering of docs/architecture.md ("Folders", "Rules"), held by the linter: each folder of
// src/ lists the folders it may not import. A violation fails `npm run lint` and the architecture test.
import tseslint from 'typescript-eslint';

/** Folders of src/ and those each one must not import. */
const FORBIDDEN = {
  query: ['server', 'worker', 'auth', 'search', 'indexer', 'git', 'cli', 'obs', 'connections', 'index'],
  index: ['server', 'worker', 'auth', 'search', 'indexer', 'git', 'cli', 'query', 'obs', 'config', 'api', 'connections'],
  config: ['server', 'worker', 'auth', 'search', 'indexer', 'git', 'cli', 'query', 'obs', 'api', 'connections'],
  api: ['server', 'worker', 'search', 'indexer', 'git', 'cli', 'query', 'obs', 'connections'],
  obs: ['server', 'worker', 'auth', 'search', 'indexer', 'git', 'cli', 'query', 'index', 'api', 'connections'],
  git: ['server', 'worker', 'auth', 'search', 'indexer', 'cli', 'query', 'connections'],
  indexer: ['server', 'auth', 'search', 'cli', 'query', 'connections'],
  auth: ['server', 'worker', 'search', 'indexer', 'git', 'cli', 'query', 'connections', 'api'],
  search: ['server', 'auth', 'indexer', 'git', 'cli', 'connections'],
  worker: ['server', 'auth', 'git', 'cli', 'connections'],
  connections: ['server', 'worker', 'auth', 'search', 'indexer', 'cli', 'query', 'api'],
  // The language table is data: it imports nothing of trawl's, and every layer may import it.
  language: ['server', 'worker', 'auth', 'search', 'indexer', 'git', 'cli', 'query', 'obs', 'config', 'api', 'connections', 'index'],
  cluster: ['server', 'worker', 'auth', 'indexer', 'git', 'cli', 'connections'],
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
            message: `src/${folder}/ must not import that layer (docs/architecture.md; eslint.config.js lists what each folder may not import)`,
          },
          // search/ and indexer/ start their threads through worker/thread-url.ts and speak to them through their protocols only:
          // the thread entries import search/ and indexer/, never the reverse.
          ...(folder === 'search'
            ? [
                {
                  regex: '^(\\.\\./)+worker/(?!search-protocol\\.js$|thread-url\\.js$)',
                  message: 'src/search/ reaches its workers through worker/search-protocol.ts and thread-url.ts only',
                },
              ]
            : []),
          ...(folder === 'indexer'
            ? [
                {
                  regex: '^(\\.\\./)+worker/(?!index-protocol\\.js$|symbol-protocol\\.js$|thread-url\\.js$)',
                  message: 'src/indexer/ reaches its threads through their protocols and worker/thread-url.ts only',
                },
              ]
            : []),
          // The request schemas state the auth layer's bounds: the one thing api/ takes from auth/ (constants, no state).
          ...(folder === 'api' ? [{ regex: '^\\.\\./auth/(?!limits\\.js$)', message: 'src/api/ takes only the limits from src/auth/' }] : []),
          // The front end never touches shard bytes: the pool and the workers do.
          ...(folder === 'server'
            ? [
                {
                  regex: '^\\.\\./\\.\\./index/(shard-reader|shard-writer)\\.js$|^\\.\\./index/(shard-reader|shard-writer)\\.js$',
                  message: 'src/server/ never touches shard bytes',
                },
              ]
            : []),
        ],
      },
    ],
  },
});

export default [
  { ignores: ['dist/**', 'node_modules/**', 'native/build/**'] },
  // typescript-eslint's recommended rules over every TypeScript file (src, test, bench, native).
  ...tseslint.configs.recommended.map((config) => ({ ...config, files: ['**/*.ts'] })),
  {
    files: ['**/*.ts'],
    languageOptions: { parser: tseslint.parser },
    rules: {
      // `_name` marks what a destructuring leaves out on purpose; a closure may read a `let` assigned once later.
      '@typescript-eslint/no-unused-vars': ['error', { varsIgnorePattern: '^_', argsIgnorePattern: '^_', ignoreRestSiblings: true }],
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  ...Object.entries(FORBIDDEN).map(([folder, forbidden]) => layer(folder, forbidden)),
  {
    // Code that runs per match or per file writes an object's members out: a spread plus members costs a hidden
    // class and a copy each time (docs/design.md, "The hot path's memory").
    files: [
      'src/search/shard/**/*.ts',
      'src/search/response/build.ts',
      'src/search/response/cut.ts',
      'src/search/response/json-writer.ts',
      'src/search/response/rendered-files.ts',
      'src/search/merger.ts',
      'src/search/shard-cache.ts',
      'src/search/packed-matches.ts',
    ],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ObjectExpression:has(> SpreadElement):has(> Property)',
          message: 'a spread plus members on the per-match path: write the members out (docs/design.md, "The hot path\'s memory")',
        },
      ],
    },
  },
  {
    // A protocol owns every type that crosses its threads: it imports the layers below, never the code that runs on either side.
    files: ['src/worker/*-protocol.ts', 'src/worker/thread-url.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../search/*', '../indexer/*', '../server/*', '../auth/*', '../git/*', '../cli/*'],
              message: 'a thread protocol imports only the layers below search/ and indexer/',
            },
          ],
        },
      ],
    },
  },
  {
    // The browser app talks to the daemon over HTTP only; it shares the API's types, the ranked merge and the link builder at build time.
    files: ['src/web/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^\\.\\./(?!api/types\\.js$|api/ranked-files\\.js$|search/links\\.js$)', message: 'src/web/ uses the daemon through its HTTP API only' },
          ],
        },
      ],
    },
  },
];
