import t from 'tap';
import { browseRepositoryUrl, browseUrl, externalUrl } from '../../src/search/links.js';

const reference = (value: string) => value.split('/').map(encodeURIComponent).join('/');

t.test('links encode each path segment as encodeURIComponent does, and leave plain paths as they are', async (t) => {
  const paths = ['src/main.c', 'docs/a b.md', 'ü/ñ.txt', "odd/it's (1)!*~.c", 'q?x#y%41&z=1', 'a+b/c;d', '', 'trailing/'];
  for (const path of paths) {
    t.equal(
      browseUrl('http://h', 'github.com/acme/x y', 'release/1.0', path),
      `http://h/browse/${reference('github.com/acme/x y')}@${encodeURIComponent('release/1.0')}/-/blob/${reference(path)}`,
      JSON.stringify(path),
    );
    t.equal(externalUrl({ webUrl: 'https://github.com/acme/x', codeHostType: 'github' }, 'abc', path), `https://github.com/acme/x/blob/abc/${reference(path)}`);
  }
  t.equal(browseUrl('http://h', 'r', 'main', 'src', 'tree'), 'http://h/browse/r@main/-/tree/src');
  t.equal(browseRepositoryUrl('http://h', 'github.com/acme/api'), 'http://h/browse/github.com/acme/api');
});
