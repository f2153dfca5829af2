/**
 * The class of a query, for latency metrics: what kind of matching it needs
 * most. `symbol` when it searches definitions, `regex` when a content pattern
 * is a regex, `path` when it matches file names only, `literal` otherwise.
 */
import type { QueryNode } from './ast.js';

export type QueryClass = 'literal' | 'regex' | 'symbol' | 'path';

export function queryClass(query: QueryNode): QueryClass {
  const patterns: { target: string; regex: boolean }[] = [];
  const collect = (node: QueryNode): void => {
    if (node.type === 'pattern') patterns.push(node);
    else if (node.type === 'and' || node.type === 'or') node.operands.forEach(collect);
    else if (node.type === 'not') collect(node.operand);
  };
  collect(query);
  const content = patterns.filter((pattern) => pattern.target === 'content' || pattern.target === 'contentOrPath');
  if (patterns.some((pattern) => pattern.target === 'symbol')) return 'symbol';
  if (content.some((pattern) => pattern.regex)) return 'regex';
  if (content.length === 0 && patterns.some((pattern) => pattern.target === 'path')) return 'path';
  return 'literal';
}
