/**
 * POST /api/find_references and /api/find_definitions: whole-word,
 * case-sensitive occurrences of a symbol name (taken literally), optionally in
 * one language family, repository and revision; definitions are those ctags
 * reports as symbol definitions.
 */
import { ApiError } from '../../api/errors.js';
import { FindSymbolRequest, FindSymbolResponse, type FindSymbolRequestBody } from '../../api/schemas.js';
import type { FileResult, SearchResponse } from '../../api/types.js';
import { parseBody, validator } from '../../api/validate.js';
import { resolveLanguage } from '../../language/languages.js';
import type { QueryNode } from '../../query/ast.js';
import { browseRepositoryUrl } from '../../search/links.js';
import { escapeRegExp } from '../../query/escape.js';
import type { Caller } from '../access.js';
import type { Request } from '../http.js';
import { callerKey } from '../rate-limit.js';
import { visibleRepository } from '../repositories.js';
import type { Route, ServerContext } from '../route.js';
import { signalFor } from '../request-signal.js';
import { searchObjects } from './search.js';

const body = validator(FindSymbolRequest);
const MAX_MATCHES = 1000;
const LANGUAGE_FAMILIES = [
  ['C', 'C++'],
  ['JavaScript', 'TypeScript', 'JSX', 'TSX'],
];

const exact = (text: string) => `^${escapeRegExp(text)}$`;

function symbolQuery(request: FindSymbolRequestBody, definitions: boolean): QueryNode {
  const name = escapeRegExp(request.symbolName);
  const operands: QueryNode[] = [
    definitions
      ? { type: 'pattern', target: 'symbol', value: `^${name}$`, regex: true, caseSensitive: true }
      : { type: 'pattern', target: 'content', value: `\\b${name}\\b`, regex: true, caseSensitive: true },
    { type: 'pattern', target: 'branch', value: exact(request.revisionName ?? 'HEAD'), regex: true, caseSensitive: true },
  ];
  if (request.repoName !== undefined) operands.push({ type: 'repoSet', names: [request.repoName] });
  if (request.language !== undefined) {
    const language = resolveLanguage(request.language);
    if (!language) throw new ApiError('INVALID_REQUEST_BODY', `request body field \`language\`: unknown language ${JSON.stringify(request.language)}`);
    const family = LANGUAGE_FAMILIES.find((members) => members.includes(language)) ?? [language];
    operands.push({ type: 'or', operands: family.map((member) => ({ type: 'language', language: member })) });
  }
  return { type: 'and', operands };
}

/** The line of a match, without its line break, from the chunk that holds it. */
function matchesOf(file: FileResult) {
  return file.chunks.flatMap((chunk) => {
    const lines = chunk.content.split('\n');
    return chunk.matchRanges.map((range) => ({
      lineContent: (lines[range.start.lineNumber - chunk.contentStart.lineNumber] ?? '').replace(/\r$/, ''),
      range,
    }));
  });
}

function toSymbolResponse(response: SearchResponse, publicUrl: string) {
  const files = response.files.map((file) => ({
    fileName: file.fileName.text,
    repository: file.repository,
    repositoryId: file.repositoryId,
    webUrl: file.webUrl,
    language: file.language,
    matches: matchesOf(file),
  }));
  const repositoryInfo = response.repositoryInfo.map((info) => ({
    id: info.id,
    codeHostType: info.codeHostType,
    name: info.name,
    displayName: info.displayName ?? info.name,
    webUrl: info.webUrl ?? browseRepositoryUrl(publicUrl, info.name),
  }));
  return { stats: { matchCount: files.reduce((sum, file) => sum + file.matches.length, 0) }, files, repositoryInfo };
}

function symbolRoute(path: string, operationId: string, definitions: boolean, summary: string): Route {
  return {
    method: 'post',
    path,
    operationId,
    tag: 'Search & Navigation',
    summary,
    access: 'read',
    body: FindSymbolRequest,
    response: { status: 200, schema: FindSymbolResponse, description: 'Matches grouped by file (at most 1000)' },
    errors: ['INVALID_REQUEST_BODY', 'NOT_FOUND', 'NOT_AUTHENTICATED', 'SERVICE_UNAVAILABLE'],
    async handle(request: Request, caller: Caller, context: ServerContext) {
      const find = parseBody(body, request.body);
      if (find.repoName !== undefined) visibleRepository(context, caller, find.repoName);
      const response = await searchObjects(
        context,
        symbolQuery(find, definitions),
        { query: find.symbolName, matches: MAX_MATCHES, contextLines: 0 },
        { visible: caller.canSee, signal: signalFor(request), caller: callerKey(caller, request) },
      );
      return { status: 200, body: toSymbolResponse(response, context.config.publicUrl) };
    },
  };
}

export const findReferencesRoute = symbolRoute(
  '/api/find_references',
  'findReferences',
  false,
  'Every whole-word, case-sensitive occurrence of a symbol name (taken literally)',
);
export const findDefinitionsRoute = symbolRoute('/api/find_definitions', 'findDefinitions', true, 'The ctags definitions of a symbol name');
