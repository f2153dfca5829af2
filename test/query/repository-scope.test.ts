import t from 'tap';
import { parseQuery } from '../../src/query/parser.js';
import { mayMatchRepository } from '../../src/query/repository-scope.js';

const repositories = [
  { name: 'github.com/acme/widgets', public: true, archived: false, fork: false },
  { name: 'github.com/acme/gadgets', public: false, archived: true, fork: false },
  { name: 'gitlab.com/other/Widgets-fork', public: true, archived: false, fork: true },
];
const contexts = { acme: { include: ['github.com/acme/*'], exclude: [] } };

/** The repositories `query` may match, by name. */
function scope(query: string): string[] {
  const node = parseQuery(query, { regex: false, caseSensitive: false });
  return repositories.filter((repository) => mayMatchRepository(node, repository, contexts)).map((repository) => repository.name.split('/').pop()!);
}

t.test('repository conditions rule repositories out; file conditions never do', async (t) => {
  t.same(scope('parse'), ['widgets', 'gadgets', 'Widgets-fork'], 'no repository condition: every repository');
  t.same(scope('repo:^github\\.com/acme/widgets$ parse'), ['widgets'], 'an anchored literal');
  t.same(scope('repo:acme parse'), ['widgets', 'gadgets'], 'a substring');
  t.same(scope('repo:widgets'), ['widgets', 'Widgets-fork'], 'case-insensitive as the query is');
  t.same(scope('case:yes repo:widgets'), ['widgets'], 'case-sensitive with case:yes');
  t.same(scope('-repo:acme parse'), ['Widgets-fork'], 'negated');
  t.same(scope('repo:gadgets or repo:fork'), ['gadgets', 'Widgets-fork'], 'or');
  t.same(scope('(repo:gadgets or parse) file:x'), ['widgets', 'gadgets', 'Widgets-fork'], 'or with a file condition: it may match anywhere');
  t.same(scope('context:acme parse'), ['widgets', 'gadgets']);
  t.same(scope('archived:no fork:no parse'), ['widgets']);
  t.same(scope('visibility:private'), ['gadgets']);
  t.same(scope('repo:wid.ets'), ['widgets', 'gadgets', 'Widgets-fork'], 'a regex with a metacharacter is not judged here');
  t.same(scope('repo:\\w+'), ['widgets', 'gadgets', 'Widgets-fork'], 'nor a class escape');
  t.same(scope('repo:nowhere'), [], 'a literal in no name rules every repository out');
});
