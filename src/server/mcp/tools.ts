/**
 * The MCP tools (spec/api.md §8): trawl's own and those of Sourcebot's MCP
 * server (`grep`, `glob`, `list_branches`, with its argument names on the
 * tools both have). Each calls the HTTP route it maps to, in process, with
 * the caller of the current request — so validation, visibility and errors
 * are exactly the API's — and renders the result as text sized for a
 * language model, saying when and how it was truncated. An argument a tool
 * does not know is an error result naming it, never ignored. The tools that
 * search are search-tools.ts; those that browse repositories are here.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { LIMITS } from '../../api/schemas.js';
import type { TreeNode } from '../../api/types.js';
import type { Blame } from '../../git/blame.js';
import type { ServerContext } from '../route.js';
import { authorsRoute, blameRoute, branchesRoute, commitsRoute, diffRoute, sourceRoute, treeRoute } from '../routes/git.js';
import { connectionsRoute, reposRoute } from '../routes/repos.js';
import { registerSearchTools } from './search-tools.js';
import { bounded, page, perPage, toolKit, type ToolCaller } from './tool-kit.js';

const MAX_TREE_DEPTH = 10;
const MAX_TREE_ENTRIES = 10_000;

/** Registers every tool on `server`, acting as the session's caller of the request being answered. */
export function registerTools(server: McpServer, session: ToolCaller, context: ServerContext): void {
  const kit = toolKit(server, session, context);
  registerSearchTools(kit);
  const { listing, route, tool } = kit;

  tool(
    'list_repos',
    'The repositories you can search, with their index state and default branch.',
    {
      query: z.string().optional().describe('Substring of the name (case-insensitive)'),
      page,
      perPage: perPage(30),
      sort: z.enum(['name', 'pushed']).optional().describe("By name, or by the default branch's last commit (default name)"),
      direction: z.enum(['asc', 'desc']).optional().describe('Default asc'),
    },
    async ({ query, page: number, perPage: size, sort, direction }) => {
      const params = { query, page: number?.toString(), perPage: (size ?? 30).toString(), sort, direction };
      const repos = (await route(reposRoute, { query: params })) as {
        repoName: string;
        indexState: string;
        defaultBranch: string;
        branches: string[];
        pushedAt?: string;
      }[];
      if (repos.length === 0) return 'No repositories.';
      const line = (repo: (typeof repos)[number]) =>
        `${repo.repoName} (${repo.indexState}; default branch ${repo.defaultBranch}${repo.pushedAt ? `, last commit ${repo.pushedAt}` : ''}; indexed: ${repo.branches.join(', ') || 'nothing yet'})\n`;
      return bounded(repos.map(line), () => 'Pass query to filter, or page through.');
    },
  );

  tool(
    'list_branches',
    'The branches of a repository (all of them, indexed or not), newest commit first, each with its last commit date and whether it is the default branch and whether it is indexed (searchable).',
    { repo: z.string(), query: z.string().optional().describe('Substring of the branch name (case-insensitive)'), page, perPage: perPage(50) },
    async ({ repo, query, page: number, perPage: size }) => {
      const params = { repo, query, page: (number ?? 1).toString(), perPage: (size ?? 50).toString() };
      const { items, total } = await listing(branchesRoute, { query: params });
      const shown = items as { name: string; committedAt: string; isDefault: boolean; isIndexed: boolean }[];
      if (shown.length === 0) return total === 0 ? 'No branches.' : `No branches on this page (${total} in all).`;
      const left = total - ((number ?? 1) - 1) * (size ?? 50) - shown.length;
      const more = left > 0 ? `\n[${left} more: ask for page ${(number ?? 1) + 1}.]` : '';
      const line = ({ name, committedAt, isDefault, isIndexed }: (typeof shown)[number]) => {
        const marks = [isDefault ? 'isDefault' : '', isIndexed ? 'isIndexed' : ''].filter(Boolean);
        return `${name}  ${committedAt}${marks.length > 0 ? `  [${marks.join(', ')}]` : ''}\n`;
      };
      return `${total} branches, newest first\n${shown.map(line).join('')}${more}`;
    },
  );

  tool(
    'read_file',
    'Read a file of a repository, with line numbers.',
    {
      repo: z.string(),
      path: z.string(),
      ref: z.string().optional().describe('Branch, tag or commit (default HEAD)'),
      offset: z.number().int().min(1).optional().describe('First line (default 1)'),
      limit: z.number().int().min(1).max(5000).optional().describe('Lines (default 400)'),
    },
    async ({ repo, path, ref, offset, limit }) => {
      const source = (await route(sourceRoute, { query: { repo, path, ref } })) as { source: string; encoding: string; language: string };
      if (source.encoding === 'base64') return `${path} is a binary file (${Buffer.from(source.source, 'base64').length} bytes).`;
      const lines = source.source.replace(/\n$/, '').split('\n');
      const first = offset ?? 1;
      const count = limit ?? 400;
      const shown = lines.slice(first - 1, first - 1 + count).map((line, i) => `${first + i}: ${line}\n`);
      const text = bounded(shown, (n) => `Call again with offset ${first + n}.`);
      const rest =
        first - 1 + count < lines.length && !text.includes('[truncated')
          ? `\n[${lines.length - (first - 1 + count)} more lines: call again with offset ${first + count}.]`
          : '';
      return `${path} (${source.language || 'text'}, ${lines.length} lines)\n${text}${rest}`;
    },
  );

  tool(
    'list_tree',
    'List a directory of a repository, to a depth: one entry a line, directories ending in "/", paths relative to the directory.',
    {
      repo: z.string(),
      path: z.string().optional().describe('Directory (default the root)'),
      ref: z.string().optional().describe('Branch, tag or commit (default HEAD)'),
      depth: z.number().int().min(1).max(MAX_TREE_DEPTH).optional().describe(`Levels below path, 1 to ${MAX_TREE_DEPTH} (default 1)`),
      includeFiles: z.boolean().optional().describe('List files (default true)'),
      includeDirectories: z.boolean().optional().describe('List directories (default true)'),
      maxEntries: z.number().int().min(1).max(MAX_TREE_ENTRIES).optional().describe(`Entries at most, up to ${MAX_TREE_ENTRIES} (default 1000)`),
    },
    async ({ repo, path, ref, depth, includeFiles, includeDirectories, maxEntries }) => {
      const root = (path ?? '').replace(/^\/+|\/+$/g, '');
      const limit = maxEntries ?? 1000;
      const entries: string[] = [];
      // One tree request per level, expanding every directory of the level before.
      let level = [root];
      let cutLevel = false;
      for (let d = 1; d <= (depth ?? 1) && level.length > 0 && entries.length <= limit; d++) {
        const { tree } = (await route(treeRoute, { body: { repoName: repo, revisionName: ref ?? 'HEAD', paths: level.filter(Boolean) } })) as {
          tree: TreeNode;
        };
        const next: string[] = [];
        for (const directory of level) {
          for (const child of nodeAt(tree, directory)?.children ?? []) {
            const childPath = directory ? `${directory}/${child.name}` : child.name;
            const shown = root ? childPath.slice(root.length + 1) : childPath;
            if (child.type === 'tree') next.push(childPath);
            if (child.type === 'tree' ? includeDirectories !== false : includeFiles !== false) entries.push(child.type === 'tree' ? `${shown}/` : shown);
          }
        }
        // A tree request expands at most LIMITS.treePaths directories.
        cutLevel ||= next.length > LIMITS.treePaths;
        level = next.slice(0, LIMITS.treePaths);
      }
      if (entries.length === 0) return 'No entries.';
      const more =
        entries.length > limit || cutLevel ? `\n[cut at ${Math.min(limit, entries.length)} entries: raise maxEntries, lower depth or list a subdirectory]` : '';
      return (
        bounded(
          entries.slice(0, limit).map((entry) => `${entry}\n`),
          () => 'List a subdirectory, or lower depth.',
        ) + more
      );
    },
  );

  tool(
    'list_commits',
    'Commits of a repository, newest first, optionally touching a path and filtered by message, author and date.',
    {
      repo: z.string(),
      ref: z.string().optional().describe('Branch, tag or commit to list from (default HEAD)'),
      path: z.string().optional().describe('Only commits changing this file or directory'),
      query: z.string().optional().describe('RE2 regular expression over the message (case-insensitive)'),
      author: z.string().optional().describe("RE2 regular expression over the author's name and email (case-insensitive)"),
      since: z.string().optional().describe("ISO 8601 or relative: '30 days ago', 'last week'"),
      until: z.string().optional().describe("ISO 8601 or relative: 'yesterday'"),
      page,
      perPage: perPage(50),
      limit: z.number().int().min(1).max(100).optional().describe('The same as perPage'),
    },
    async ({ repo, ref, path, query, author, since, until, page: number, perPage: size, limit }) => {
      const params = { repo, ref, path, query, author, since, until, page: number?.toString(), perPage: String(size ?? limit ?? 20) };
      const commits = (await route(commitsRoute, { query: params })) as { hash: string; date: string; authorName: string; message: string }[];
      return commits.length === 0
        ? 'No commits.'
        : commits.map((commit) => `${commit.hash.slice(0, 12)} ${commit.date.slice(0, 10)} ${commit.authorName}: ${commit.message}\n`).join('');
    },
  );

  tool(
    'blame_file',
    'Who last changed each line of a file: line ranges with their commit (hash, author, date, subject).',
    { repo: z.string(), path: z.string(), ref: z.string().optional().describe('Branch, tag or commit (default HEAD)') },
    async ({ repo, path, ref }) => {
      const { ranges, commits } = (await route(blameRoute, { query: { repo, path, ref } })) as Blame;
      if (ranges.length === 0) return `${path} is empty.`;
      const lines = ranges.map((range) => {
        const commit = commits[range.hash]!;
        const last = range.startLine + range.lineCount - 1;
        return `${range.startLine === last ? range.startLine : `${range.startLine}-${last}`}: ${range.hash.slice(0, 12)} ${commit.date.slice(0, 10)} ${commit.authorName}: ${commit.message}\n`;
      });
      return bounded(lines, () => 'Read the file with read_file for the lines themselves.');
    },
  );

  tool(
    'list_commit_authors',
    'The authors of a repository (or of one path in it), most commits first.',
    {
      repo: z.string(),
      ref: z.string().optional().describe('Branch, tag or commit (default HEAD)'),
      path: z.string().optional().describe('Only authors of commits changing this file or directory'),
      page,
      perPage: perPage(50),
    },
    async ({ repo, ref, path, page: number, perPage: size }) => {
      const authors = (await route(authorsRoute, { query: { repo, ref, path, page: number?.toString(), perPage: size?.toString() } })) as {
        name: string;
        email: string;
        commitCount: number;
      }[];
      return authors.length === 0 ? 'No authors.' : authors.map((author) => `${author.commitCount} ${author.name} <${author.email}>\n`).join('');
    },
  );

  tool('list_connections', 'The code hosts of the repositories you can see (one connection per code host type).', {}, async () => {
    const connections = (await route(connectionsRoute, {})) as { id: number; name: string; connectionType: string }[];
    return connections.length === 0
      ? 'No connections.'
      : connections.map((connection) => `${connection.id} ${connection.name} (${connection.connectionType})\n`).join('');
  });

  tool(
    'get_diff',
    'The diff between two revisions of a repository.',
    { repo: z.string(), base: z.string(), head: z.string(), path: z.string().optional() },
    async ({ repo, base, head, path }) => {
      const { files } = (await route(diffRoute, { query: { repo, base, head, path } })) as {
        files: {
          oldPath: string | null;
          newPath: string | null;
          hunks: { oldRange: { start: number; lines: number }; newRange: { start: number; lines: number }; body: string }[];
        }[];
      };
      if (files.length === 0) return 'No differences.';
      const parts = files.map(
        (file) =>
          `--- ${file.oldPath ?? '/dev/null'}\n+++ ${file.newPath ?? '/dev/null'}\n${file.hunks.map((hunk) => `@@ -${hunk.oldRange.start},${hunk.oldRange.lines} +${hunk.newRange.start},${hunk.newRange.lines} @@\n${hunk.body}`).join('')}\n`,
      );
      return bounded(parts, () => 'Pass path to see one file.');
    },
  );
}

/** The node at `directory` ('' the root) of a tree response, if it was expanded. */
function nodeAt(tree: TreeNode, directory: string): TreeNode | undefined {
  let node: TreeNode | undefined = tree;
  for (const segment of directory ? directory.split('/') : []) node = node?.children.find((child) => child.name === segment);
  return node;
}
