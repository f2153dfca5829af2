/**
 * The file and directory views: a file (code-view.ts), the tree of the repository on the side, a selector of
 * the repository's indexed branches, and definitions / references of a clicked identifier.
 */
import { getJson, postJson, type RepositoryListing, type Source, type TreeNode } from './api.js';
import { clear, copyButton, h } from './dom.js';
import { attachCodeView, CodeView } from './code-view.js';
import { openFileFinder } from './file-finder.js';
import { blameCells, latestCommit } from './history-page.js';
import { blobUrl, openInApp, treeUrl } from './links.js';
import { attachSymbols } from './symbol-panel.js';

export async function renderBlob(main: HTMLElement, repo: string, branch: string, path: string): Promise<void> {
  const [source, tree] = await Promise.all([
    getJson<Source>('/api/source', { repo, path, ref: branch }),
    postJson<{ tree: TreeNode }>('/api/tree', { repoName: repo, revisionName: branch, paths: ancestors(path) }),
  ]);
  clear(main);
  const view = source.encoding === 'utf-8' ? new CodeView(source.source, source.language, new URLSearchParams(location.search).get('hl')) : undefined;
  const code = view?.element ?? h('p', { class: 'binary' }, 'Binary file — not shown.');
  const note = view?.plain ? h('p', { class: 'note' }, 'A long file: shown without syntax highlighting.') : null;
  const symbols = h('aside', { class: 'symbols', id: 'symbols', hidden: true });
  const blamed = new URLSearchParams(location.search).has('blame');
  const blameToggle = view
    ? h(
        'a',
        { class: 'button', id: 'blame-toggle', href: blamed ? blobUrl(repo, branch, path) : `${blobUrl(repo, branch, path)}?blame=1` },
        blamed ? 'Hide blame' : 'Blame',
      )
    : null;
  main.append(
    h(
      'div',
      { class: 'browse' },
      treeView(tree.tree, repo, branch, path),
      h('section', { class: 'file-view' }, breadcrumbs(repo, branch, path, 'blob'), latestCommit(repo, branch, path), blameToggle, note, code),
      symbols,
    ),
  );
  if (view) {
    attachCodeView(view);
    attachSymbols(code, symbols, repo, branch);
    if (blamed) view.setGutter(await blameCells(repo, branch, path));
  }
}

export async function renderTree(main: HTMLElement, repo: string, branch: string, path: string): Promise<void> {
  const { tree } = await postJson<{ tree: TreeNode }>('/api/tree', { repoName: repo, revisionName: branch, paths: path ? [...ancestors(path), path] : [] });
  clear(main);
  const here = path ? findNode(tree, path) : tree;
  const listing = h(
    'ul',
    { class: 'listing', id: 'listing' },
    ...(here?.children ?? []).map((child) => h('li', { class: `node-${child.type}` }, nodeLink(child, repo, branch))),
  );
  main.append(
    h(
      'div',
      { class: 'browse' },
      treeView(tree, repo, branch, path),
      h('section', { class: 'file-view' }, breadcrumbs(repo, branch, path, 'tree'), latestCommit(repo, branch, path), listing),
    ),
  );
}

/** Every directory on the way to `path` (its own directory included). */
function ancestors(path: string): string[] {
  const segments = path.split('/').slice(0, -1);
  return segments.map((_, i) => segments.slice(0, i + 1).join('/'));
}

function findNode(node: TreeNode, path: string): TreeNode | undefined {
  if (node.path === path) return node;
  for (const child of node.children) {
    if (path === child.path || path.startsWith(`${child.path}/`)) return findNode(child, path);
  }
  return undefined;
}

function nodeLink(node: TreeNode, repo: string, branch: string): HTMLElement {
  if (node.type === 'commit') return h('span', { class: 'submodule' }, `${node.name} (submodule)`);
  return h(
    'a',
    { href: node.type === 'tree' ? treeUrl(repo, branch, node.path) : blobUrl(repo, branch, node.path) },
    node.type === 'tree' ? `${node.name}/` : node.name,
  );
}

/** The repository's tree: the directories on the way to `current` open, every directory opened and closed by its toggle (its entries fetched on first opening). */
function treeView(root: TreeNode, repo: string, branch: string, current: string): HTMLElement {
  const list = (node: TreeNode): HTMLElement => h('ul', {}, ...node.children.map((child) => entry(child)));
  const entry = (node: TreeNode): HTMLElement => {
    const item = h('li', { class: node.path === current ? `node-${node.type} current` : `node-${node.type}` });
    if (node.type !== 'tree') {
      item.append(nodeLink(node, repo, branch));
      return item;
    }
    let children = node.children.length > 0 ? list(node) : undefined;
    const toggle = h('button', { type: 'button', class: 'toggle', 'aria-expanded': String(children !== undefined), 'aria-label': `Open ${node.name}` });
    toggle.addEventListener('click', async () => {
      const opening = toggle.getAttribute('aria-expanded') !== 'true';
      if (opening && children === undefined) {
        const { tree } = await postJson<{ tree: TreeNode }>('/api/tree', { repoName: repo, revisionName: branch, paths: [node.path] });
        children = list(findNode(tree, node.path) ?? node);
        item.append(children);
      }
      children!.hidden = !opening;
      toggle.setAttribute('aria-expanded', String(opening));
      toggle.setAttribute('aria-label', `${opening ? 'Close' : 'Open'} ${node.name}`);
    });
    item.append(toggle, nodeLink(node, repo, branch));
    if (children) item.append(children);
    return item;
  };
  return h('nav', { class: 'tree', id: 'tree', 'aria-label': 'Files' }, h('a', { class: 'tree-root', href: treeUrl(repo, branch, '') }, repo), list(root));
}

/**
 * A select of the repository's indexed branches that opens `path` on the one chosen (`kind` a file or a directory);
 * filled once GET /api/repos answers.
 */
function branchSelector(repo: string, branch: string, path: string, kind: 'blob' | 'tree'): HTMLSelectElement {
  const select = h('select', { id: 'branch', 'aria-label': 'Branch' }, h('option', { value: branch }, branch === 'HEAD' ? 'default branch' : branch));
  void getJson<RepositoryListing[]>('/api/repos', { query: repo, perPage: '100' }).then((listed) => {
    const found = listed.find((candidate) => candidate.repoName === repo);
    if (!found) return;
    // The index names the default branch HEAD: it is shown, and opened, by its name.
    const names = [...new Set(found.branches.map((name) => (name === 'HEAD' ? found.defaultBranch : name)))];
    const current = branch === 'HEAD' ? found.defaultBranch : branch;
    if (!names.includes(current)) names.unshift(current);
    select.replaceChildren(...names.map((name) => h('option', { value: name, selected: name === current }, name)));
  });
  select.addEventListener('change', () => {
    const chosen = select.value;
    openInApp(kind === 'blob' ? blobUrl(repo, chosen, path) : treeUrl(repo, chosen, path));
  });
  return select;
}

function breadcrumbs(repo: string, branch: string, path: string, kind: 'blob' | 'tree'): HTMLElement {
  const parts: (string | HTMLElement)[] = [h('a', { href: treeUrl(repo, branch, '') }, repo), ' @ ', branchSelector(repo, branch, path, kind)];
  const segments = path ? path.split('/') : [];
  segments.forEach((segment, i) => {
    const prefix = segments.slice(0, i + 1).join('/');
    parts.push(' / ', i === segments.length - 1 ? h('strong', {}, segment) : h('a', { href: treeUrl(repo, branch, prefix) }, segment));
  });
  const goToFile = h('button', { type: 'button', class: 'copy', id: 'go-to-file', title: 'Go to file (t)' }, 'Go to file');
  goToFile.addEventListener('click', () => openFileFinder(repo, branch));
  parts.push(
    ' ',
    goToFile,
    ' ',
    copyButton('Copy path', () => path || repo, 'copy-path'),
    ' ',
    copyButton('Copy link', () => location.href, 'copy-link'),
  );
  return h('p', { class: 'crumbs', id: 'crumbs' }, ...parts);
}
