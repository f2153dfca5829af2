/**
 * A request's query, planned once by the caller and passed down: parsed,
 * simplified, its `context:` names checked against the configuration. The
 * daemon has a worker compile the regexes (`planTerms`, then the pool's
 * check); the CLI and the benchmarks compile them here (`plan`).
 */
import type { SearchRequest } from '../api/types.js';
import type { SearchContextConfig } from '../config/config.js';
import type { QueryNode } from './ast.js';
import { parseQuery, parseQueryTerms } from './parser.js';
import type { RegexTerm } from './regex-checks.js';

/** A `context:` name the configuration does not define. */
export class UnknownSearchContextError extends Error {
  /** `empty`: the context exists, but no configured repository is in it. */
  constructor(
    readonly contextName: string,
    empty?: SearchContextConfig,
  ) {
    super(
      empty
        ? `search context ${JSON.stringify(contextName)} holds no repository: no configured repository matches its include globs ${JSON.stringify(empty.include)}${empty.exclude.length > 0 ? ` less its exclude globs ${JSON.stringify(empty.exclude)}` : ''}`
        : `search context ${JSON.stringify(contextName)} does not exist`,
    );
    this.name = 'UnknownSearchContextError';
  }
}

/** The query of a request. Throws QueryParseError for a query that does not parse and UnknownSearchContextError for an unknown `context:`. */
export function plan(request: SearchRequest, contexts: Record<string, SearchContextConfig>): QueryNode {
  const query = parseQuery(request.query, parseOptions(request));
  checkContexts(query, contexts);
  return query;
}

/** `plan` but for the regexes, which it leaves for the caller to have compiled (parser.ts, firstInvalidRegex). */
export function planTerms(request: SearchRequest, contexts: Record<string, SearchContextConfig>): { node: QueryNode; regexTerms: RegexTerm[] } {
  const parsed = parseQueryTerms(request.query, parseOptions(request));
  checkContexts(parsed.node, contexts);
  return parsed;
}

const parseOptions = (request: SearchRequest) => ({ regex: request.isRegexEnabled ?? false, caseSensitive: request.isCaseSensitivityEnabled ?? false });

/** Throws UnknownSearchContextError for the first `context:` the configuration lacks, or that holds no repository. */
export function checkContexts(node: QueryNode, contexts: Record<string, SearchContextConfig>): void {
  if (node.type === 'context' && !Object.hasOwn(contexts, node.name)) throw new UnknownSearchContextError(node.name);
  if (node.type === 'context' && contexts[node.name]!.empty) throw new UnknownSearchContextError(node.name, contexts[node.name]!);
  if (node.type === 'and' || node.type === 'or') for (const operand of node.operands) checkContexts(operand, contexts);
  if (node.type === 'not') checkContexts(node.operand, contexts);
}

/** What `matches` counts for the query: files (type:file), repositories (type:repo), or match ranges (undefined). */
export function resultTypeOf(query: QueryNode): 'file' | 'repo' | undefined {
  if (query.type === 'resultType') return query.value;
  if (query.type !== 'and' && query.type !== 'or') return undefined;
  for (const operand of query.operands) {
    const found = resultTypeOf(operand);
    if (found) return found;
  }
  return undefined;
}
