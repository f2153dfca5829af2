/** The schemas of the history endpoints (spec/api.md §4): commits, their authors, branches, blame, diff. */
import { Type } from './typebox.js';
import { isoDate, longPerPage, name, nullable, page } from './schemas.js';

const gitRef = (description: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 1024, default: 'HEAD', description }));
const repoPath = (description: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description }));
const gitDate = (description: string) => isoDate(`${description}: ISO 8601, or relative as git takes it (\`30 days ago\`, \`last week\`, \`yesterday\`)`);
export const CommitsQuery = Type.Object({
  repo: name('Repository name'),
  ref: gitRef('Branch, tag or commit to list from'),
  path: repoPath('Only commits that change this file or directory'),
  query: Type.Optional(Type.String({ maxLength: 1024, description: 'RE2 regular expression over the whole message, case-insensitive' })),
  author: Type.Optional(Type.String({ maxLength: 1024, description: 'RE2 regular expression over `Name <email>` of the author, case-insensitive' })),
  since: gitDate('Commits at or after'),
  until: gitDate('Commits at or before'),
  page,
  perPage: longPerPage,
});
export const Commit = Type.Object(
  {
    hash: Type.String(),
    date: Type.String(),
    message: Type.String(),
    body: Type.String(),
    authorName: Type.String(),
    authorEmail: Type.String(),
    author_name: Type.String({ description: 'authorName again, for Sourcebot clients before 4.16.5' }),
    author_email: Type.String({ description: 'authorEmail again, for Sourcebot clients before 4.16.5' }),
    refs: Type.String({ description: "The names pointing at the commit as git's %D writes them (`HEAD -> main, tag: v1`); '' for none" }),
  },
  { $id: 'Commit' },
);
export const CommitList = Type.Array(Type.Ref('Commit'));
export const CommitQuery = Type.Object({ repo: name('Repository name'), ref: Type.String({ minLength: 1, maxLength: 1024 }) });
export const CommitDetail = Type.Intersect([Type.Ref('Commit'), Type.Object({ parents: Type.Array(Type.String()) })], { $id: 'CommitDetail' });

export const AuthorsQuery = Type.Object({
  repo: name('Repository name'),
  ref: gitRef('Branch, tag or commit to count from'),
  path: repoPath('Only authors of commits that change this file or directory'),
  page,
  perPage: longPerPage,
});
export const AuthorList = Type.Array(Type.Object({ name: Type.String(), email: Type.String(), commitCount: Type.Integer({ minimum: 1 }) }));

export const BranchesQuery = Type.Object({
  repo: name('Repository name'),
  query: Type.Optional(Type.String({ maxLength: 1024, description: 'Substring of the branch name, case-insensitive' })),
  page,
  perPage: longPerPage,
});
export const BranchList = Type.Array(
  Type.Object({
    name: Type.String(),
    committedAt: Type.String({ description: "The branch's last commit's committer date (ISO 8601)" }),
    isDefault: Type.Boolean({ description: 'HEAD names it' }),
    isIndexed: Type.Boolean({ description: 'It is searchable' }),
  }),
);

export const BlameQuery = Type.Object({
  repo: name('Repository name'),
  path: Type.String({ minLength: 1, maxLength: 4096, description: 'The file to blame' }),
  ref: gitRef('Branch, tag or commit to blame at'),
});
const gitPointer = Type.Object({ hash: Type.String(), path: Type.String() });
export const BlameResponse = Type.Object(
  {
    ranges: Type.Array(
      Type.Object({
        hash: Type.String(),
        path: Type.String({ description: 'The path at that commit' }),
        startLine: Type.Integer({ minimum: 1 }),
        lineCount: Type.Integer({ minimum: 1 }),
      }),
      {
        description: 'Contiguous, non-overlapping line ranges by startLine, each from one commit',
      },
    ),
    commits: Type.Record(
      Type.String(),
      Type.Object({
        hash: Type.String(),
        date: Type.String({ description: 'Author time, ISO 8601' }),
        message: Type.String({ description: 'The subject line' }),
        authorName: Type.String(),
        authorEmail: Type.String(),
        previous: Type.Optional(gitPointer),
      }),
    ),
  },
  { $id: 'BlameResponse' },
);

export const DiffQuery = Type.Object({
  repo: name('Repository name'),
  base: Type.String({ minLength: 1, maxLength: 1024 }),
  head: Type.String({ minLength: 1, maxLength: 1024 }),
  path: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
});
const LineRange = Type.Object({ start: Type.Integer({ minimum: 0 }), lines: Type.Integer({ minimum: 0 }) });
export const DiffResponse = Type.Object(
  {
    files: Type.Array(
      Type.Object({
        oldPath: nullable(Type.String()),
        newPath: nullable(Type.String()),
        hunks: Type.Array(Type.Object({ oldRange: LineRange, newRange: LineRange, heading: Type.Optional(Type.String()), body: Type.String() })),
      }),
    ),
  },
  { $id: 'DiffResponse' },
);
