/**
 * Which repositories a query can match, judged by its repository-level conditions alone (`repo:`, `context:`,
 * `archived:`, `fork:`, `visibility:`, repository sets), so that a search across a cluster asks only the
 * partitions that hold one. Conservative: a repository is ruled out only when it cannot match; a `repo:` regex
 * counts only when it is a plain literal (anchors and escaped punctuation allowed), without running a regex here.
 */
import type { SearchContextConfig } from '../config/config.js';
import { inContext } from '../config/config.js';
import type { PatternNode, QueryNode, RepoSetNode, RepositoryFlagNode, VisibilityNode } from './ast.js';

export interface RepositoryFacts {
  name: string;
  public: boolean;
  archived: boolean;
  fork: boolean;
}

/** false when no file of `repository` can match `query`; true when it may. */
export function mayMatchRepository(query: QueryNode, repository: RepositoryFacts, contexts: Record<string, SearchContextConfig>): boolean {
  return holds(query, repository, contexts) !== false;
}

/** Whether the repository-level part of `node` holds: true, false, or undefined when it depends on more than the repository. */
function holds(node: QueryNode, repository: RepositoryFacts, contexts: Record<string, SearchContextConfig>): boolean | undefined {
  switch (node.type) {
    case 'and':
    case 'or': {
      // One operand decides an `and` when false, an `or` when true; an undecided one leaves the rest undecided.
      const decisive = node.type === 'or';
      let result: boolean | undefined = !decisive;
      for (const operand of node.operands) {
        const value = holds(operand, repository, contexts);
        if (value === decisive) return decisive;
        if (value === undefined) result = undefined;
      }
      return result;
    }
    case 'not': {
      const value = holds(node.operand, repository, contexts);
      return value === undefined ? undefined : !value;
    }
    case 'context': {
      const context = contexts[node.name];
      return context === undefined ? undefined : inContext(context, repository.name);
    }
    case 'repoSet':
    case 'archived':
    case 'fork':
    case 'visibility':
      return attributeHolds(node, repository);
    case 'pattern':
      return node.target === 'repository' ? literalHolds(node, repository.name) : undefined;
    default:
      return undefined;
  }
}

/** A condition on what the repository is (a repository set, `archived:`, `fork:`, `visibility:`): judged alike wherever a query is evaluated. */
export function attributeHolds(node: RepoSetNode | RepositoryFlagNode | VisibilityNode, repository: RepositoryFacts): boolean {
  switch (node.type) {
    case 'repoSet':
      return node.names.includes(repository.name);
    case 'visibility':
      return node.value === 'any' || (node.value === 'public') === repository.public;
    default: {
      const flag = node.type === 'archived' ? repository.archived : repository.fork;
      return node.value === 'yes' || (node.value === 'only') === flag;
    }
  }
}

/** A `repo:` pattern that is a literal, maybe anchored, tested on `name`; undefined for any other regex. */
function literalHolds(node: PatternNode, name: string): boolean | undefined {
  let pattern = node.value;
  const start = node.regex && pattern.startsWith('^');
  const end = node.regex && pattern.endsWith('$') && !pattern.endsWith('\\$');
  if (start) pattern = pattern.slice(1);
  if (end) pattern = pattern.slice(0, -1);
  let literal = pattern;
  if (node.regex) {
    if (/(^|[^\\])(\\\\)*[.*+?()[\]{}|^$]/.test(pattern) || /\\[A-Za-z0-9]/.test(pattern)) return undefined;
    literal = pattern.replace(/\\(.)/g, '$1');
  }
  // Case folding beyond ASCII is RE2's to decide.
  if (!node.caseSensitive && /[^\x00-\x7f]/.test(name + literal)) return undefined;
  const [text, value] = node.caseSensitive ? [name, literal] : [name.toLowerCase(), literal.toLowerCase()];
  if (start && end) return text === value;
  if (start) return text.startsWith(value);
  if (end) return text.endsWith(value);
  return text.includes(value);
}
